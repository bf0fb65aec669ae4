//! `lab list`: every scenario with its summary and variants.
use anyhow::Result;

use super::args::{ListArgs, ListFormat};
use crate::i18n::Lang;
use crate::output::{self, Exit};
use crate::render::{self, Listed, Style};

/// Every scenario as `lab list` and docs/GUIDE.md's table show it.
pub fn listed() -> Vec<Listed> {
    super::ALL
        .iter()
        .map(|s| Listed {
            name: s.name,
            summary: (s.summary)(),
            variants: s.variants.iter().map(|v| (v.name, (v.explain)())).collect(),
            readme: s.readme,
        })
        .collect()
}

pub fn run(args: &ListArgs, lang: Lang) -> Result<Exit> {
    match args.format {
        ListFormat::Table => {
            let style = Style {
                explain: args.explain,
                ..Style::for_stdout(lang, false)
            };
            output::out(&render::list(&listed(), &style))?;
        }
        ListFormat::Markdown => output::out(&render::list_markdown(&listed()))?,
        ListFormat::Json => output::out(&render::list_json(&listed())?)?,
    }
    Ok(Exit::Ok)
}

impl crate::options::Run for ListArgs {
    fn run(self, cx: &crate::options::Invocation<'_>) -> Result<Exit> {
        run(&self, cx.lang)
    }
}
