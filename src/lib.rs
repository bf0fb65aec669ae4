//! lab: PostgreSQL concurrency anomalies on demand. `main` parses the command
//! line and calls [`run`], which hands each command to its module under
//! [`commands`]; a command that talks to a server runs inside the
//! [`harness`].
//!
//! Dependencies point one way (tests/lab/layers.rs checks it; see
//! docs/ARCHITECTURE.md): `cli -> commands -> options -> harness ->
//! {baseline, retry, named_sql} -> render -> engine -> report`, with
//! `postgres`, `specfile`, `sql_lexer`, `i18n`, `files`, `progress` and
//! `output` as leaves.
pub mod baseline;
pub mod cli;
pub mod commands;
pub mod engine;
pub mod files;
pub mod harness;
pub mod i18n;
pub mod named_sql;
pub mod options;
pub mod output;
pub mod postgres;
pub mod progress;
pub mod render;
pub mod report;
pub mod retry;
pub mod specfile;
pub mod sql_lexer;

use anyhow::Result;

use cli::{Command, Parsed};
use commands::scenarios::config::RunConfig;
use commands::{compare, completions, explore, hunt, locks, phenomena, scenarios, server, shell, spec};
use harness::block_on;
use i18n::Lang;

pub use output::{Exit, is_closed_pipe, print_error};

/// Every message lab declares: each `messages!` block registers itself
/// (the completeness tests read them all).
pub fn messages() -> Vec<&'static [i18n::Def]> {
    i18n::all_messages()
}

/// Every scenario as `lab list` and the README's table show it.
pub fn listed() -> Vec<render::Listed> {
    scenarios::list::listed()
}

/// Runs a parsed command line: each command's configuration checked, its
/// run started and run; the exit code.
pub fn run(parsed: Parsed, lang: Lang) -> Result<Exit> {
    let env = &postgres::conninfo::process_env;
    match parsed {
        Parsed::Scenario {
            scenario, run, params, ..
        } => {
            let cfg = RunConfig::for_scenario(scenario, &run, params?, lang)?;
            if scenarios::failover::watch::asked(&cfg) {
                return block_on(harness::run(&scenarios::failover::watch::Watch::start(cfg, env)?));
            }
            block_on(harness::run(&scenarios::job::Scenarios::start(cfg, false, env)?))
        }
        Parsed::Fixed(cli) => match cli.command {
            Command::List(args) => scenarios::list::run(&args, lang),
            Command::All(args) => {
                let cfg = RunConfig::for_all(&args, lang)?;
                block_on(harness::run(&scenarios::job::Scenarios::start(cfg, true, env)?))
            }
            Command::Server(args) => server::run(&args, lang),
            Command::Locks(args) => locks::run(&args, env, lang),
            Command::Spec(args) => {
                let cfg = spec::config::SpecRun::new(&args, env, lang)?;
                block_on(harness::run(&spec::job::Specs::start(cfg, env)?))
            }
            Command::Phenomena(args) => {
                let cfg = phenomena::config::PhenomenaRun::new(&args, lang)?;
                block_on(harness::run(&phenomena::job::Matrix::start(cfg, env)?))
            }
            Command::Explore(args) => {
                let cfg = explore::config::ExploreRun::new(&args, env, lang)?;
                block_on(harness::run(&explore::job::Explore::start(cfg, env)?))
            }
            Command::Hunt(args) => match hunt::config::Hunt::new(&args, lang)? {
                hunt::config::Hunt::Check(cfg) => hunt::job::check_file(&cfg),
                hunt::config::Hunt::Run(cfg) => block_on(harness::run(&hunt::job::Hunt::start(*cfg, env)?)),
            },
            Command::Compare(args) => compare::run(&args, lang),
            Command::Shell(args) => {
                let cfg = shell::config::ShellRun::new(&args, lang)?;
                block_on(harness::run(&shell::job::Shell::start(cfg, env)?))
            }
            // The descriptions shells show next to commands and options speak the run's language.
            Command::Completions(args) => completions::run(&args, &mut cli::command(lang)),
        },
    }
}
