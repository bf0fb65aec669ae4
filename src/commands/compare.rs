//! `lab compare`: runs side by side (versions, providers), each variant's
//! verdict, waits and SQLSTATEs per run, and where they differ.
use std::path::PathBuf;

use anyhow::{Result, bail};
use clap::{Args, ValueEnum};

use crate::baseline::{self, Baseline};
use crate::i18n::Lang;
use crate::output::{self, Exit};
use crate::render::Style;

/// Runs side by side (versions, providers): each variant's verdict, waits and SQLSTATEs per run, and where they differ.
#[derive(Debug, Clone, Args)]
#[command(
    after_help = "Each FILE is the JSON of a run of one kind: `lab all --format json` (or a scenario's, or `lab spec`'s), \
                  or `lab phenomena --format json`. A row per variant (per phenomenon and level), a column per run \
                  headed by its server's version; `differs` says what differs (runs or skipped, verdict, anomaly, \
                  waits, SQLSTATEs, counted metrics) and on which servers.\n\
                  Exit codes: 0 compared, 2 could not read them."
)]
pub struct CompareArgs {
    /// The runs' JSON files, in the order of their columns (two or more).
    #[arg(value_name = "FILE", required = true, num_args = 2..)]
    pub files: Vec<PathBuf>,

    /// Output format (markdown: a table for a README or an issue).
    #[arg(long, value_enum, ignore_case = true, default_value_t = CompareFormat::Table)]
    pub format: CompareFormat,

    /// Only the rows where the runs differ.
    #[arg(long)]
    pub differences: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CompareFormat {
    Table,
    Markdown,
}

/// Reads the runs, prints them side by side and how many differ.
pub fn run(args: &CompareArgs, lang: Lang) -> Result<Exit> {
    let runs = args
        .files
        .iter()
        .map(|f| Baseline::load_for("lab compare", f))
        .collect::<Result<Vec<_>>>()?;
    if let Some(other) = runs.iter().find(|r| r.kind != runs[0].kind) {
        bail!(baseline::msg::mixed(&runs[0].path, &other.path));
    }
    let sbs = baseline::side_by_side(&runs, args.differences);
    // --differences with none: no empty table, the count says it.
    if !sbs.rows.is_empty() {
        let text = match args.format {
            CompareFormat::Table => sbs.table(&Style::for_stdout(lang, false)),
            CompareFormat::Markdown => sbs.markdown(),
        };
        output::out(&format!("{}\n", text.trim_end()))?;
    }
    let compared = match runs[0].kind {
        baseline::Kind::Runs => baseline::msg::compared(runs.len(), sbs.differing),
        baseline::Kind::Phenomena => baseline::msg::compared_cells(runs.len(), sbs.differing),
    };
    crate::output::eline!("{}", compared.render(lang));
    Ok(Exit::Ok)
}

impl crate::options::Run for CompareArgs {
    fn run(self, cx: &crate::options::Invocation<'_>) -> Result<Exit> {
        run(&self, cx.lang)
    }
}

crate::help_tr! {
    ("cmd.compare", "Çalıştırmalar yan yana (sürümler, sağlayıcılar): her varyantın çalıştırma başına hükmü, beklemeleri ve SQLSTATE'leri, ve nerede farklı oldukları"),
    ("after.compare", "Her FILE tek türden bir çalıştırmanın JSON'udur: `lab all --format json` (ya da bir senaryonunki, ya da `lab spec`'inki) veya `lab phenomena --format json`. Her varyant (her fenomen ve seviye) bir satır, her çalıştırma sunucusunun sürümüyle başlıklı bir sütun; `differs` neyin (çalışıp çalışmadığı, hüküm, anomali, beklemeler, SQLSTATE'ler, sayılan metrikler) hangi sunucularda farklı olduğunu söyler.\nÇıkış kodları: 0 karşılaştırıldı, 2 okunamadı."),
    ("arg.compare.files", "Çalıştırmaların JSON dosyaları, sütunlarının sırasıyla (iki ya da daha fazla)"),
    ("arg.compare.format", "Çıktı biçimi (markdown: bir README ya da issue için tablo)"),
    ("arg.compare.differences", "Yalnızca çalıştırmaların farklı olduğu satırlar"),
}
