//! The whole command line, in one place. Clap types stop here: `config` turns
//! them into a checked run configuration that scenario code sees instead.
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Debug, Parser)]
#[command(
    name = "lab",
    version,
    about = "Makes PostgreSQL concurrency anomalies happen on demand, next to their fixes, \
             and says whether the server behaved as documented.",
    after_help = "With no database given, lab starts a throwaway PostgreSQL from the binaries \
                  it finds on this machine and removes it afterwards.\n\
                  Exit codes: 0 every variant showed its documented outcome, 1 at least one did \
                  not, 2 could not run, 130 interrupted."
)]
pub struct Cli {
    /// Language of everything lab says (default: from LC_ALL/LC_MESSAGES/LANG, else English).
    #[arg(long, global = true, value_enum)]
    pub lang: Option<crate::i18n::Lang>,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List every scenario with a one-line summary and its variants.
    List(ListArgs),
    /// Run every scenario in order, then print one summary table.
    All(RunArgs),
    /// Start the throwaway PostgreSQL with the lab schema and keep it until Ctrl-C.
    Server(ServerArgs),
    /// Live lock view: lab's sessions on a server, who waits for whom, refreshed.
    Locks(LocksArgs),
    /// Print shell completions.
    Completions {
        /// The shell to write completions for.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Lost update: two clerks decrement the same stock row (READ COMMITTED, REPEATABLE READ, and the fixes).
    LostUpdate(RunArgs),
    /// Write skew: "at most one pending order per customer" under each isolation level, with retry.
    WriteSkew(RunArgs),
    /// FOR UPDATE vs FOR NO KEY UPDATE against a foreign key check.
    FkBlocking(RunArgs),
    /// Deadlock: two sessions update two rows in opposite orders, and the fix.
    Deadlock(RunArgs),
    /// NOWAIT and SKIP LOCKED against a row someone is editing.
    Nowait(RunArgs),
    /// Advisory locks: one instance of the nightly job, and the pooled-connection pitfall.
    AdvisoryLock(RunArgs),
    /// The DDL lock queue: ALTER TABLE behind a report blocks every reader behind it.
    DdlLockQueue(RunArgs),
    /// The READ COMMITTED re-check: hits = hits + 1 against DELETE ... WHERE hits = 10.
    RcRecheck(RunArgs),
    /// lock_timeout, statement_timeout, idle_in_transaction_session_timeout, transaction_timeout.
    Timeouts(RunArgs),
    /// A SKIP LOCKED job queue against FOR UPDATE: throughput, duplicates, lost messages.
    Queue(QueueArgs),
    /// R concurrent "buy one" requests against stock S: exactly R must be removed.
    StockRace(StockRaceArgs),
    /// Out-of-order events: a stale price change overwrites a newer one unless versions travel with it.
    StaleEvent(RunArgs),
    /// Gapless invoice numbers with parallel workers and a slow, failing integrator.
    InvoiceNumbering(InvoiceArgs),
}

impl Command {
    /// The scenario a scenario subcommand names, with its options.
    pub fn scenario(&self) -> Option<(&'static str, &RunArgs)> {
        match self {
            Command::LostUpdate(args) => Some(("lost-update", args)),
            Command::WriteSkew(args) => Some(("write-skew", args)),
            Command::FkBlocking(args) => Some(("fk-blocking", args)),
            Command::Deadlock(args) => Some(("deadlock", args)),
            Command::Nowait(args) => Some(("nowait", args)),
            Command::AdvisoryLock(args) => Some(("advisory-lock", args)),
            Command::DdlLockQueue(args) => Some(("ddl-lock-queue", args)),
            Command::RcRecheck(args) => Some(("rc-recheck", args)),
            Command::Timeouts(args) => Some(("timeouts", args)),
            Command::Queue(args) => Some(("queue", &args.run)),
            Command::StockRace(args) => Some(("stock-race", &args.run)),
            Command::StaleEvent(args) => Some(("stale-event", args)),
            Command::InvoiceNumbering(args) => Some(("invoice-numbering", &args.run)),
            Command::List(_)
            | Command::All(_)
            | Command::Server(_)
            | Command::Locks(_)
            | Command::Completions { .. } => None,
        }
    }
}

/// Where the lab runs: an existing server, or the throwaway cluster.
#[derive(Debug, Clone, Args)]
pub struct ConnArgs {
    /// PostgreSQL URL or key=value connection string. Without it (and without
    /// PGHOST/PGPORT/PGUSER/PGDATABASE) a throwaway cluster is started.
    #[arg(long, env = "DATABASE_URL", hide_env_values = true, value_name = "URL")]
    pub database_url: Option<String>,

    #[command(flatten)]
    pub local: LocalArgs,

    /// Keep the lab schema after the run (it is dropped by default).
    #[arg(long)]
    pub keep_schema: bool,
}

/// Options of the throwaway cluster and the lab schema, shared with `lab server`.
#[derive(Debug, Clone, Args)]
pub struct LocalArgs {
    /// Directory holding initdb and postgres for the throwaway cluster.
    #[arg(long, env = "LAB_PG_BIN", value_name = "DIR")]
    pub pg_bin: Option<PathBuf>,

    /// Schema the lab creates, uses and drops. A second run against the same
    /// server and schema is refused while the first is running.
    #[arg(long, env = "LAB_SCHEMA", default_value = "lab", value_name = "NAME")]
    pub schema: String,
}

#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// Run only this variant (repeatable).
    #[arg(long = "variant", value_name = "NAME")]
    pub variants: Vec<String>,

    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,

    /// After each variant, explain what happened and why, and the fix.
    #[arg(long)]
    pub explain: bool,

    /// Workshop mode: before each step, show which session runs which statement
    /// and why, and wait for Enter (needs a terminal).
    #[arg(long)]
    pub step: bool,

    /// Also write a JUnit XML report (one test case per variant) to FILE.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,

    /// Deadline, in seconds, for every wait (a lock wait, a barrier, a statement).
    #[arg(long, default_value_t = 10.0, value_name = "SECONDS")]
    pub wait_timeout: f64,

    /// The timeout, in ms, that scenarios showing a timeout set (lock_timeout in
    /// fk-blocking and ddl-lock-queue, each of the four in timeouts).
    #[arg(long, default_value_t = 1000, value_name = "MS")]
    pub timeout_ms: u64,

    /// Attempts in all for a transaction retried on 40001/40P01 (1 = no retry).
    #[arg(long, default_value_t = 5, value_name = "N")]
    pub retry_attempts: u32,

    /// Back-off before the first retry, in ms; it doubles each attempt, with jitter.
    #[arg(long, default_value_t = 10, value_name = "MS")]
    pub retry_base_ms: u64,

    /// Longest back-off, in ms.
    #[arg(long, default_value_t = 200, value_name = "MS")]
    pub retry_cap_ms: u64,

    #[command(flatten)]
    pub conn: ConnArgs,
}

#[derive(Debug, Clone, Args)]
pub struct ListArgs {
    /// With each variant's explanation.
    #[arg(long)]
    pub explain: bool,
}

#[derive(Debug, Clone, Args)]
pub struct LocksArgs {
    /// The server to watch (the URL `lab server` prints).
    #[arg(long, env = "DATABASE_URL", hide_env_values = true, value_name = "URL")]
    pub database_url: Option<String>,

    /// Seconds between refreshes.
    #[arg(long, default_value_t = 1.0, value_name = "SECONDS")]
    pub every: f64,

    /// Print the view once and exit.
    #[arg(long)]
    pub once: bool,
}

/// `lab queue`: the run options plus the queue's own.
#[derive(Debug, Clone, Args)]
pub struct QueueArgs {
    #[command(flatten)]
    pub run: RunArgs,

    /// Outbox messages to process.
    #[arg(long, default_value_t = 1000, value_name = "N")]
    pub messages: u32,

    /// Worker sessions taking batches concurrently.
    #[arg(long, default_value_t = 4, value_name = "N")]
    pub workers: u32,

    /// Messages a worker takes per batch (the dequeue's LIMIT).
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub batch: u32,

    /// Simulated work per batch ("sending" it), in ms.
    #[arg(long, default_value_t = 20, value_name = "MS")]
    pub work_ms: u64,

    /// Terminate worker 1's backend in the middle of its batch after N batches.
    #[arg(long, value_name = "N")]
    pub kill_worker_after: Option<u32>,
}

/// `lab stock-race`: the run options plus stock and requests.
#[derive(Debug, Clone, Args)]
pub struct StockRaceArgs {
    #[command(flatten)]
    pub run: RunArgs,

    /// Copies of book 1 in stock (S).
    #[arg(long, default_value_t = 100, value_name = "S")]
    pub stock: u32,

    /// Concurrent "buy one" requests, each on its own connection (R).
    #[arg(long, default_value_t = 100, value_name = "R")]
    pub requests: u32,
}

/// `lab invoice-numbering`: the run options plus the integrator's and workers'.
#[derive(Debug, Clone, Args)]
pub struct InvoiceArgs {
    #[command(flatten)]
    pub run: RunArgs,

    /// Invoices to number and send.
    #[arg(long, default_value_t = 20, value_name = "N")]
    pub invoices: u32,

    /// Workers sending invoices concurrently.
    #[arg(long, default_value_t = 4, value_name = "N")]
    pub workers: u32,

    /// The integrator's mean latency in ms (the seed's 200 ms-2 s, scaled down); each call takes 0.5-1.5 times it.
    #[arg(long, default_value_t = 50, value_name = "MS")]
    pub latency_ms: u64,

    /// Share of calls that fail transiently (the same calls on every run).
    #[arg(long, default_value_t = 0.15, value_name = "RATE")]
    pub transient_rate: f64,
}

#[derive(Debug, Clone, Args)]
pub struct ServerArgs {
    #[command(flatten)]
    pub local: LocalArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Table,
    Json,
}

/// The command line as clap sees it, in `lang`: abouts and option help from the
/// language's table where it has them (English is written on the types above),
/// and clap's own words (headings, the help and version flags) from its `Ui`.
pub fn command(lang: crate::i18n::Lang) -> clap::Command {
    use clap::CommandFactory;
    let texts = lang.texts();
    let mut cmd = localize(Cli::command(), texts.help, &texts.ui, true);
    // `help` is clap's own subcommand, made when the command is built.
    cmd.build();
    cmd.mut_subcommand("help", |h| h.about(texts.ui.help_subcommand))
}

/// An option's help with its default, its possible values and its
/// environment variable written out in `ui`'s words (clap's are English).
fn annotate(a: clap::Arg, ui: &'static crate::i18n::Ui) -> clap::Arg {
    let mut notes = Vec::new();
    if let Some(env) = a.get_env() {
        notes.push(format!("[{}: {}]", ui.help_env, env.to_string_lossy()));
    }
    if a.get_action().takes_values() && !a.get_default_values().is_empty() {
        let d: Vec<String> = a
            .get_default_values()
            .iter()
            .map(|v| v.to_string_lossy().into_owned())
            .collect();
        notes.push(format!("[{}: {}]", ui.help_default, d.join(", ")));
    }
    let values: Vec<String> = a
        .get_possible_values()
        .iter()
        .filter(|v| !v.is_hide_set())
        .map(|v| v.get_name().to_string())
        .collect();
    if !values.is_empty() && a.get_action().takes_values() {
        notes.push(format!("[{}: {}]", ui.help_possible, values.join(", ")));
    }
    if notes.is_empty() {
        return a;
    }
    let help = a.get_help().map(|h| h.to_string()).unwrap_or_default();
    a.help(format!("{help} {}", notes.join(" ")).trim().to_string())
        .hide_default_value(true)
        .hide_possible_values(true)
        .hide_env(true)
}

fn localize(
    mut cmd: clap::Command,
    help: &'static [(&'static str, &'static str)],
    ui: &'static crate::i18n::Ui,
    root: bool,
) -> clap::Command {
    use clap::{Arg, ArgAction};
    let find = |key: &str| help.iter().find(|(k, _)| *k == key).map(|(_, t)| *t);
    let name = cmd.get_name().to_string();
    if let Some(t) = find(&format!("cmd.{name}")) {
        cmd = cmd.about(t);
    }
    if let Some(t) = find(&format!("after.{name}")) {
        cmd = cmd.after_help(t);
    }
    let ids: Vec<String> = cmd.get_arguments().map(|a| a.get_id().to_string()).collect();
    for id in ids {
        if let Some(t) = find(&format!("arg.{name}.{id}")).or_else(|| find(&format!("arg.{id}"))) {
            cmd = cmd.mut_arg(&id, |a| a.help(t));
        }
    }
    cmd = cmd
        .disable_help_flag(true)
        .arg(
            Arg::new("help")
                .short('h')
                .long("help")
                .action(ArgAction::Help)
                .help(ui.help_flag),
        )
        .subcommand_help_heading(ui.help_commands)
        .subcommand_value_name(ui.help_command_value)
        .help_template(format!(
            "{{before-help}}{{about-with-newline}}\n{} {{usage}}\n\n{{all-args}}{{after-help}}",
            ui.help_usage
        ));
    if root {
        cmd = cmd.disable_version_flag(true).arg(
            Arg::new("version")
                .short('V')
                .long("version")
                .action(ArgAction::Version)
                .help(ui.version_flag),
        );
    }
    cmd.mut_args(|a| {
        let a = annotate(a, ui);
        if a.get_help_heading().is_none() {
            a.help_heading(ui.help_options)
        } else {
            a
        }
    })
    .mut_subcommands(|s| localize(s, help, ui, false))
}

/// A usage error on one line, in the process's language: the common kinds in
/// our own words (from the error's context), any other in clap's.
pub fn usage_error(e: &clap::Error) -> String {
    use clap::error::{ContextKind, ErrorKind};
    let get = |k: ContextKind| e.get(k).map(|v| v.to_string());
    let arg = get(ContextKind::InvalidArg).unwrap_or_default();
    let text = match e.kind() {
        ErrorKind::UnknownArgument => crate::tr!("us.unknown_arg", arg = arg),
        ErrorKind::InvalidSubcommand => match get(ContextKind::InvalidSubcommand) {
            Some(command) => crate::tr!("us.unknown_command", command = command),
            None => return one_line_usage_error(e),
        },
        ErrorKind::InvalidValue | ErrorKind::ValueValidation => {
            let value = get(ContextKind::InvalidValue).unwrap_or_default();
            match get(ContextKind::ValidValue) {
                Some(valid) => crate::tr!("us.invalid_value_of", value = value, arg = arg, valid = valid),
                None => crate::tr!("us.invalid_value", value = value, arg = arg),
            }
        }
        ErrorKind::MissingRequiredArgument => crate::tr!("us.missing", arg = arg),
        ErrorKind::MissingSubcommand => crate::tr!("us.missing_command"),
        ErrorKind::ArgumentConflict => crate::tr!(
            "us.conflict",
            arg = arg,
            other = get(ContextKind::PriorArg).unwrap_or_default()
        ),
        ErrorKind::NoEquals | ErrorKind::TooManyValues | ErrorKind::TooFewValues | ErrorKind::WrongNumberOfValues => {
            crate::tr!("us.values", arg = arg)
        }
        _ => return one_line_usage_error(e),
    };
    let tip = get(ContextKind::SuggestedArg)
        .or_else(|| get(ContextKind::SuggestedSubcommand))
        .or_else(|| get(ContextKind::SuggestedValue));
    match tip {
        Some(t) => format!("{text}; {}", crate::tr!("us.tip", suggestion = t)),
        None => text,
    }
}

/// Clap's message without its usage block, on one line.
pub fn one_line_usage_error(e: &clap::Error) -> String {
    let text = e.render().to_string();
    text.lines()
        .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more information"))
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
        .trim_start_matches("error: ")
        .to_string()
}
