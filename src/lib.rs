//! lab: PostgreSQL concurrency anomalies on demand. `main` parses the command
//! line and calls [`run`], which hands each command to the [`harness`].
//!
//! Dependencies point one way (tests/lab/layers.rs checks it): `harness ->
//! config -> cli -> {catalogue, suite, explore, hunt, shell, phenomena, locks, baseline} -> {http, retry,
//! sql} -> render -> engine -> report`, with `target`, `spec`, `sql_lexer`,
//! `i18n`, `files`, `progress` and `output` as leaves.
pub mod baseline;
pub mod catalogue;
pub mod cli;
pub mod config;
pub mod engine;
pub mod explore;
pub mod files;
pub mod harness;
pub mod hunt;
pub mod i18n;
pub mod locks;
pub mod named_sql;
pub mod output;
pub mod phenomena;
pub mod postgres;
pub mod progress;
pub mod render;
pub mod report;
pub mod retry;
pub mod shell;
pub mod specfile;
pub mod sql_lexer;
pub mod suite;

use std::time::Duration;

use anyhow::{Result, bail};

use cli::{Command, ListFormat, Parsed};
use config::RunConfig;
use i18n::{Lang, ui};
use render::{Listed, Style};

pub use output::{Exit, is_closed_pipe, print_error};

/// Every message lab declares: each `messages!` block registers itself
/// (the completeness tests read them all).
pub fn messages() -> Vec<&'static [i18n::Def]> {
    i18n::all_messages()
}

/// Every scenario as `lab list` and the README's table show it.
pub fn listed() -> Vec<Listed> {
    catalogue::ALL
        .iter()
        .map(|s| Listed {
            name: s.name,
            summary: (s.summary)(),
            variants: s.variants.iter().map(|v| (v.name, (v.explain)())).collect(),
            readme: s.readme,
        })
        .collect()
}

pub fn run(parsed: Parsed, lang: Lang) -> Result<Exit> {
    let env = &config::process_env;
    match parsed {
        Parsed::Scenario {
            scenario, run, params, ..
        } => {
            let cfg = RunConfig::for_scenario(scenario, &run, params?, env, lang)?;
            harness::block_on(harness::run(&harness::Scenarios::new(cfg, false)))
        }
        Parsed::Fixed(cli) => match cli.command {
            Command::List(args) => {
                match args.format {
                    ListFormat::Table => {
                        let style = Style {
                            explain: args.explain,
                            ..Style::for_stdout(lang, false)
                        };
                        output::out(&render::list(&listed(), &style))?;
                    }
                    ListFormat::Markdown => output::out(&render::list_markdown(&listed()))?,
                }
                Ok(Exit::Ok)
            }
            Command::Completions { shell } => {
                // The descriptions shells show next to commands and options speak the run's language.
                let mut cmd = cli::command(lang);
                let mut buf = Vec::new();
                clap_complete::generate(shell, &mut cmd, "lab", &mut buf);
                output::out(&String::from_utf8_lossy(&buf))?;
                Ok(Exit::Ok)
            }
            Command::Server(args) => {
                let (pg_bin, schema) = config::local(&args.local)?;
                harness::block_on(harness::serve(pg_bin, schema, args.local.tls, lang))
            }
            Command::Locks(args) => {
                // The server as libpq finds it: the URL, else a service and the PG* variables.
                let given = args.database_url.as_deref().filter(|u| !u.trim().is_empty());
                let config = match postgres::conninfo::resolve(given, None, env, lang)? {
                    postgres::RunOn::Server(c, _) => *c,
                    postgres::RunOn::Throwaway { .. } => bail!(ui::locks_needs_server()),
                };
                if !(args.every.is_finite() && (0.1..=3600.0).contains(&args.every)) {
                    bail!(catalogue::context::msg::between("--every", 0.1, 3600));
                }
                let view = locks::View {
                    all: args.all,
                    once: args.once,
                    every: Duration::from_secs_f64(args.every),
                };
                harness::block_on(locks::watch(config, view, lang))
            }
            Command::Phenomena(args) => {
                let cfg = config::PhenomenaRun::new(&args, env, lang)?;
                harness::block_on(harness::run(&harness::Matrix::new(cfg)))
            }
            Command::Explore(args) => {
                let cfg = config::ExploreRun::new(&args, env, lang)?;
                harness::block_on(harness::run(&harness::Explore::new(cfg)))
            }
            Command::Hunt(args) => match config::Hunt::new(&args, env, lang)? {
                config::Hunt::Check(cfg) => harness::hunt_check(&cfg),
                config::Hunt::Run(cfg) => harness::block_on(harness::run(&harness::Hunt::new(*cfg))),
            },
            Command::Compare(args) => {
                let runs = args
                    .files
                    .iter()
                    .map(|f| baseline::Baseline::load_for("lab compare", f))
                    .collect::<Result<Vec<_>>>()?;
                if let Some(other) = runs.iter().find(|r| r.kind != runs[0].kind) {
                    bail!(baseline::msg::mixed(&runs[0].path, &other.path));
                }
                let sbs = baseline::side_by_side(&runs, args.differences);
                // --differences with none: no empty table, the count says it.
                if !sbs.rows.is_empty() {
                    let text = match args.format {
                        cli::CompareFormat::Table => sbs.table(&Style::for_stdout(lang, false)),
                        cli::CompareFormat::Markdown => sbs.markdown(),
                    };
                    output::out(&format!("{}\n", text.trim_end()))?;
                }
                let compared = match runs[0].kind {
                    baseline::Kind::Runs => baseline::msg::compared(runs.len(), sbs.differing),
                    baseline::Kind::Phenomena => baseline::msg::compared_cells(runs.len(), sbs.differing),
                };
                crate::output::eline!("{}", compared.render(lang));
                Ok(output::Exit::Ok)
            }
            Command::Shell(args) => {
                let cfg = config::shell(&args, env, lang)?;
                harness::block_on(harness::run(&harness::Shell::new(cfg)))
            }
            Command::Spec(args) => {
                let cfg = config::SpecRun::new(&args, env, lang)?;
                harness::block_on(harness::run(&harness::Specs::new(cfg)))
            }
            Command::All(args) => {
                let cfg = RunConfig::for_all(&args, env, lang)?;
                harness::block_on(harness::run(&harness::Scenarios::new(cfg, true)))
            }
        },
    }
}
