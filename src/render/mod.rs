//! Pure functions from reports to text: tables (comfy-table), JSON, JUnit,
//! Markdown, and docs/GUIDE.md's scenario table. Words come from the messages, in the
//! language of the [`Style`]; machine outputs (JSON, JUnit) are English
//! whatever the language. Colour only where it helps (waits, errors,
//! verdicts), and only when asked for.
pub mod explore;
pub mod html;
pub mod hunt;
mod junit;
pub mod markdown;
pub mod mermaid;
pub mod phenomena;
mod text;

pub use junit::junit;
pub use text::{
    all_summary, brief_summary, outcome_in, outcome_line, scenario, scenario_outcomes, timeline, variant,
    variant_with_verdict,
};

use comfy_table::presets::UTF8_FULL;
use comfy_table::{Cell, Color, ContentArrangement, Table};

use crate::i18n::{Lang, Text, ui};

/// How to render: the language, whether to colour, whether to explain.
#[derive(Debug, Clone, Copy)]
pub struct Style {
    pub lang: Lang,
    pub color: bool,
    pub explain: bool,
    /// Every step of a long timeline, not only the ones that waited, failed or narrate.
    pub verbose: bool,
}

impl Style {
    pub fn plain(lang: Lang) -> Style {
        Style {
            lang,
            color: false,
            explain: false,
            verbose: false,
        }
    }

    /// Colour as `--color` says: by default when stdout is a terminal and NO_COLOR is not set.
    pub fn for_stdout(lang: Lang, explain: bool) -> Style {
        use std::io::IsTerminal;
        let color = crate::output::colour(std::io::stdout().is_terminal());
        Style {
            lang,
            color,
            explain,
            verbose: false,
        }
    }

    pub fn say(&self, t: &Text) -> String {
        t.render(self.lang)
    }

    pub fn cell(&self, text: impl Into<String>, color: Color) -> Cell {
        let c = Cell::new(text.into());
        if self.color { c.fg(color) } else { c }
    }
}

pub fn table(header: Vec<String>, style: &Style) -> Table {
    let mut t = Table::new();
    t.load_style(UTF8_FULL)
        .set_content_arrangement(ContentArrangement::Dynamic);
    t.set_width(u16::try_from(crate::output::width()).unwrap_or(u16::MAX));
    if style.color {
        t.enforce_styling();
    } else {
        t.force_no_tty();
    }
    t.set_header(header);
    t
}

/// A scenario as `lab list` shows it.
pub struct Listed {
    pub name: &'static str,
    pub summary: Text,
    pub variants: Vec<(&'static str, Text)>,
    /// The scenario table's "what it shows" (docs/GUIDE.md; English, Markdown).
    pub readme: &'static str,
}

pub fn list(scenarios: &[Listed], style: &Style) -> String {
    let mut t = table(
        vec![
            style.say(&ui::col_scenario()),
            style.say(&ui::col_summary()),
            style.say(&ui::col_variants()),
        ],
        style,
    );
    for s in scenarios {
        let variants = if style.explain {
            s.variants
                .iter()
                .map(|(name, explain)| format!("{name}: {}", style.say(explain)))
                .collect::<Vec<_>>()
                .join("\n\n")
        } else {
            s.variants.iter().map(|(n, _)| *n).collect::<Vec<_>>().join("\n")
        };
        t.add_row(vec![s.name.to_string(), style.say(&s.summary), variants]);
    }
    format!("{t}\n")
}

/// `lab list --format json`: every scenario, its summary and what it
/// shows, its variants with their explanations (English, as every JSON).
pub fn list_json(scenarios: &[Listed]) -> anyhow::Result<String> {
    #[derive(serde::Serialize)]
    struct Catalogue<'a> {
        scenarios: Vec<Scenario<'a>>,
    }
    #[derive(serde::Serialize)]
    struct Scenario<'a> {
        name: &'a str,
        summary: String,
        /// The scenario table's "what it shows" (docs/GUIDE.md; Markdown).
        shows: &'a str,
        variants: Vec<Variant<'a>>,
    }
    #[derive(serde::Serialize)]
    struct Variant<'a> {
        name: &'a str,
        explain: String,
    }
    let catalogue = Catalogue {
        scenarios: scenarios
            .iter()
            .map(|s| Scenario {
                name: s.name,
                summary: s.summary.en(),
                shows: s.readme,
                variants: s
                    .variants
                    .iter()
                    .map(|(name, explain)| Variant {
                        name,
                        explain: explain.en(),
                    })
                    .collect(),
            })
            .collect(),
    };
    document("list", &catalogue)
}

/// docs/GUIDE.md's scenario table (Markdown, English).
pub fn list_markdown(scenarios: &[Listed]) -> String {
    let mut out = String::from("| scenario | variants | what it shows |\n|---|---|---|\n");
    for s in scenarios {
        let variants = s
            .variants
            .iter()
            .map(|(n, _)| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ");
        out.push_str(&format!("| `{}` | {variants} | {} |\n", s.name, s.readme));
    }
    out
}

/// The version of the JSON documents' shape: raised when a field is
/// removed or renamed or its meaning changes (a new field does not raise it).
pub const FORMAT_VERSION: u32 = 1;

/// A JSON document as lab prints it: what made it first, then the report's
/// own fields in their order.
#[derive(serde::Serialize)]
struct Document<'a, T: serde::Serialize> {
    lab_version: &'static str,
    format_version: u32,
    /// The command that printed it: `all`, the scenario's name, `spec`, `phenomena`, ...
    command: &'a str,
    #[serde(flatten)]
    report: &'a T,
}

/// `report` (an object) as the JSON document `lab COMMAND --format json` prints.
pub fn document<T: serde::Serialize>(command: &str, report: &T) -> anyhow::Result<String> {
    json(&Document {
        lab_version: env!("CARGO_PKG_VERSION"),
        format_version: FORMAT_VERSION,
        command,
        report,
    })
}

pub fn json<T: serde::Serialize>(value: &T) -> anyhow::Result<String> {
    let mut s = serde_json::to_string_pretty(value)?;
    s.push('\n');
    Ok(s)
}
