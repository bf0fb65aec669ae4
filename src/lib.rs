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

use cli::Parsed;
use commands::scenarios;
use commands::scenarios::config::RunConfig;
use harness::block_on;
use i18n::Lang;

pub use output::{Exit, is_closed_pipe, print_error};

/// Every message lab declares: each `messages!` block registers itself
/// (the completeness tests read them all).
pub fn messages() -> Vec<&'static [i18n::Def]> {
    i18n::all_messages()
}

/// Every scenario as `lab list` and docs/GUIDE.md's table show it.
pub fn listed() -> Vec<render::Listed> {
    scenarios::list::listed()
}

/// Runs a parsed command line: a scenario's, or a command's; the exit code.
pub fn run(parsed: Parsed, lang: Lang) -> Result<Exit> {
    let (quiet, color) = parsed.writing();
    output::configure(quiet, color);
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
        Parsed::Fixed(cli) => cli.command.run(&options::Invocation {
            lang,
            env,
            command: &cli::command,
        }),
    }
}
