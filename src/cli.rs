//! The whole command line, in one place. The fixed commands are clap derive
//! types; each scenario's subcommand is made from its declaration in the
//! catalogue (the common run options plus its own). Clap types stop here:
//! `config` turns them into a checked run configuration.
use std::path::PathBuf;

use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};

use crate::catalogue::{self, Params, Scenario};
use crate::i18n::{HELP_TR, Lang, ui};

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
    #[arg(long, global = true, value_enum, ignore_case = true)]
    pub lang: Option<Lang>,

    #[command(subcommand)]
    pub command: Command,
}

/// The commands that are not scenarios (each scenario has its own, from the catalogue).
#[derive(Debug, Subcommand)]
pub enum Command {
    /// List every scenario with a one-line summary and its variants.
    List(ListArgs),
    /// Run every scenario (4 at a time; reported in catalogue order), then print one summary table.
    All(RunArgs),
    /// Start the throwaway PostgreSQL with the lab schema and keep it until Ctrl-C.
    Server(ServerArgs),
    /// Live lock view: lab's sessions on a server, who waits for whom, refreshed.
    Locks(LocksArgs),
    /// Run isolationtester spec files (PostgreSQL's isolation test format), in parallel.
    Spec(Box<SpecArgs>),
    /// The anomaly matrix (dirty write ... write skew) measured at every isolation level.
    Phenomena(PhenomenaArgs),
    /// Every interleaving of a spec at every isolation level, grouped by what happened.
    Explore(ExploreArgs),
    /// Find anomalies nobody scripted: random list-append transactions, their history checked, a spec replaying each.
    Hunt(HuntArgs),
    /// Runs side by side (versions, providers): each variant's verdict, waits and SQLSTATEs per run, and where they differ.
    Compare(CompareArgs),
    /// Several sessions in one terminal: waits shown live as the server confirms them, what ran saved as a spec.
    Shell(ShellArgs),
    /// Print shell completions.
    Completions {
        /// The shell to write completions for.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

/// A parsed command line.
pub enum Parsed {
    Fixed(Cli),
    Scenario {
        lang: Option<Lang>,
        scenario: &'static Scenario,
        run: RunArgs,
        /// Its own options, checked.
        params: anyhow::Result<Params>,
    },
}

/// Where the lab runs: an existing server, or the throwaway cluster.
#[derive(Debug, Clone, Args)]
pub struct ConnArgs {
    /// PostgreSQL URL or key=value connection string. Without it (and without
    /// PGSERVICE/PGHOST/PGPORT/PGUSER/PGDATABASE) a throwaway cluster is started.
    #[arg(long, env = "DATABASE_URL", hide_env_values = true, value_name = "URL")]
    pub database_url: Option<String>,

    #[command(flatten)]
    pub local: LocalArgs,

    /// Keep the lab schema after the run, as the run left it (by default it is
    /// dropped, or made again with its seed rows if it was there before).
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
    /// Run only this variant (repeatable); with `lab all`, SCENARIO or SCENARIO/VARIANT.
    #[arg(long = "variant", value_name = "NAME")]
    pub variants: Vec<String>,

    /// Output format.
    #[arg(long, value_enum, ignore_case = true, default_value_t = Format::Table)]
    pub format: Format,

    /// After each variant, explain what happened and why, and the fix.
    #[arg(long)]
    pub explain: bool,

    /// Show every step of long timelines (invoice-numbering's run to thousands
    /// of lines); by default they keep the waits, errors and notes, and a
    /// count per session.
    #[arg(long)]
    pub verbose: bool,

    /// Print only the verdict table (no timelines): one screen for `lab all`.
    #[arg(long, conflicts_with_all = ["explain", "step"])]
    pub summary: bool,

    /// Workshop mode: before each step, show which session runs which statement
    /// and why, and wait for Enter (needs a terminal).
    #[arg(long)]
    pub step: bool,

    /// With --step: guess first. Each prompt asks what the statement will do
    /// (runs at once, waits for whom, fails with which error, which value),
    /// then shows the guess beside what the server did, with a tally.
    #[arg(long, requires = "step")]
    pub predict: bool,

    /// Also write a JUnit XML report (one test case per variant) to FILE.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,

    /// Compare with an earlier run's JSON (`--format json`, say on the
    /// version in production) instead of with the documentation: exit 1 only
    /// where a verdict, a wait, a SQLSTATE or a counted metric differs.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,

    /// Also write a self-contained HTML report (swimlanes, Gantt charts) to FILE.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,

    /// Deadline, in seconds, for every wait (a lock wait, a barrier, a statement).
    #[arg(long, default_value_t = 10.0, value_name = "SECONDS")]
    pub wait_timeout: f64,

    /// The timeout, in ms, that scenarios showing a timeout set (lock_timeout in
    /// fk-blocking and ddl-lock-queue, each of the four in timeouts, lost-client's
    /// idle_in_transaction_session_timeout).
    #[arg(long, default_value_t = 1000, value_name = "MS")]
    pub timeout_ms: u64,

    /// `lab all`: scenarios run at once, each in a schema of its own (replica in
    /// a database of its own on the throwaway server, else alone); 1 runs them one by one.
    /// Default 4; 1 with --step or --max-connections.
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,

    /// Use at most N connections to the server in all (the control connection
    /// included), so that several runs can share a server; stock-race runs
    /// fewer requests to fit, and says so.
    #[arg(long, value_name = "N")]
    pub max_connections: Option<usize>,

    /// Run every session through lab's own PgBouncer in transaction mode, in
    /// front of the server (the throwaway one or --database-url), as an
    /// application behind a pooled port does; needs pgbouncer installed.
    #[arg(long)]
    pub pooler: bool,

    /// Attempts in all for a transaction retried on 40001/40P01 (1 = no retry).
    #[arg(long, default_value_t = 5, value_name = "N")]
    pub retry_attempts: u32,

    /// Back-off before the first retry, in ms; it doubles each attempt, with jitter.
    #[arg(long, default_value_t = 10, value_name = "MS")]
    pub retry_base_ms: u64,

    /// Longest back-off, in ms.
    #[arg(long, default_value_t = 200, value_name = "MS")]
    pub retry_cap_ms: u64,

    /// Run the scenarios from edited copies of lab's files (specs and SQL) in
    /// DIR; a file DIR does not have comes from lab's own copies.
    #[arg(long, env = "LAB_DIR", value_name = "DIR")]
    pub lab_dir: Option<PathBuf>,

    #[command(flatten)]
    pub conn: ConnArgs,
}

#[derive(Debug, Clone, Args)]
pub struct ListArgs {
    /// With each variant's explanation.
    #[arg(long)]
    pub explain: bool,

    /// Output format (markdown: the README's table).
    #[arg(long, value_enum, ignore_case = true, default_value_t = ListFormat::Table)]
    pub format: ListFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ListFormat {
    Table,
    Markdown,
}

#[derive(Debug, Clone, Args)]
pub struct LocksArgs {
    /// The server to watch (the URL `lab server` prints).
    #[arg(long, env = "DATABASE_URL", hide_env_values = true, value_name = "URL")]
    pub database_url: Option<String>,

    /// Seconds between refreshes.
    #[arg(long, default_value_t = 1.0, value_name = "SECONDS")]
    pub every: f64,

    /// Print the view once (without the refresh line) and exit.
    #[arg(long)]
    pub once: bool,

    /// Also show sessions that are not lab's (the room's psql windows, a
    /// by-hand exercise).
    #[arg(long)]
    pub all: bool,
}

#[derive(Debug, Clone, Args)]
#[command(
    after_help = "Each spec runs in a fresh database of its own, created from template0 and \
                  dropped afterwards; a role that cannot create databases (or --in-database) \
                  runs them one at a time in the database given, as isolationtester does.\n\
                  With --inputdir/--outputdir/--expecteddir (or another of pg_isolation_regress's \
                  options), lab writes pg_regress's layout (results/, regression.diffs, regression.out) \
                  and prints its lines: a Makefile's pg_isolation_regress line runs unchanged with lab spec.\n\
                  Exit codes: 0 every permutation ran to its end (and matched its expected file), \
                  1 one did not, 2 could not run (a spec that does not parse, no server)."
)]
pub struct SpecArgs {
    /// Spec files, or directories holding them (every *.spec inside).
    #[arg(value_name = "FILE|DIR")]
    pub paths: Vec<PathBuf>,

    /// Also run the tests a pg_regress schedule lists (`test: a b c` lines);
    /// NAME is read from specs/NAME.spec (or NAME.spec) beside the schedule.
    #[arg(long, value_name = "FILE")]
    pub schedule: Vec<PathBuf>,

    /// Output format (isolation: exactly what PostgreSQL's isolationtester prints).
    #[arg(long, value_enum, ignore_case = true, default_value_t = SpecFormat::Table)]
    pub format: SpecFormat,

    /// Compare the output with this expected file (one spec only).
    #[arg(long, value_name = "FILE.out")]
    pub expected: Option<PathBuf>,

    /// Compare each spec's output with DIR/NAME.out (or NAME_0.out ... NAME_9.out,
    /// as pg_regress accepts); a difference is printed as a unified diff and exits 1.
    #[arg(long, value_name = "DIR")]
    pub expected_dir: Option<PathBuf>,

    /// Specs run at once, each in its own database (default: the number of
    /// cores; 1 with --repeat).
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,

    /// Also write a JUnit XML report (one test case per spec and permutation) to FILE.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,

    /// Also write a self-contained HTML report (a swimlane diagram per permutation) to FILE.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,

    /// Deadline, in seconds, for any one step: a step still running then is
    /// cancelled, as isolationtester does after PGISOLATIONTIMEOUT (which
    /// sets it when this is not given; else 10, or isolationtester's 300
    /// with pg_isolation_regress's options).
    #[arg(long, value_name = "SECONDS")]
    pub wait_timeout: Option<f64>,

    /// Run the specs one at a time in the database given (the URL's, or
    /// --dbname), as isolationtester does, instead of a fresh database each;
    /// what a spec leaves behind is reported by name. The default for a role
    /// that cannot create databases.
    #[arg(long)]
    pub in_database: bool,

    /// The database the specs run in, one at a time: made by lab as
    /// pg_regress makes it and dropped afterwards, or with --use-existing
    /// (--in-database) one that exists.
    #[arg(long, value_name = "NAME", help_heading = REGRESS_HEADING)]
    pub dbname: Option<String>,

    /// pg_regress's --use-existing: run in the database given as it is
    /// (the same as --in-database).
    #[arg(long, help_heading = REGRESS_HEADING)]
    pub use_existing: bool,

    /// In the database given, drop what a spec left behind (exactly what it
    /// created, never what was there before) and go on.
    #[arg(long)]
    pub clean: bool,

    /// pg_regress's --inputdir: tests named on the command line or in a
    /// schedule are DIR/specs/NAME.spec.
    #[arg(long, value_name = "DIR", help_heading = REGRESS_HEADING)]
    pub inputdir: Option<PathBuf>,

    /// pg_regress's --expecteddir: expected files are DIR/expected/NAME.out
    /// (default: --inputdir).
    #[arg(long, value_name = "DIR", help_heading = REGRESS_HEADING)]
    pub expecteddir: Option<PathBuf>,

    /// pg_regress's --outputdir: results/NAME.out, regression.diffs and
    /// regression.out are written in DIR (default: .).
    #[arg(long, value_name = "DIR", help_heading = REGRESS_HEADING)]
    pub outputdir: Option<PathBuf>,

    /// Run every spec N times (one spec at a time unless --jobs) and report
    /// the permutations whose output differed between runs, with how often
    /// each output appeared.
    #[arg(long, value_name = "N")]
    pub repeat: Option<usize>,

    /// While the specs run, keep every core busy, as a loaded CI runner would.
    #[arg(long)]
    pub load: bool,

    /// Compare with an earlier run's JSON (`--format json`) instead of with
    /// the expected output: exit 1 only where a verdict, a wait, a SQLSTATE
    /// or a counted metric differs.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,

    /// Run every session through lab's own PgBouncer in transaction mode, in
    /// front of the server (a pool per spec database), as an application
    /// behind a pooled port does; needs pgbouncer installed. (A pooler of
    /// your own: --in-database with its URL.)
    #[arg(long)]
    pub pooler: bool,

    /// After each permutation, the comments the spec has before its steps.
    #[arg(long)]
    pub explain: bool,

    /// Workshop mode: before each step, show its session and SQL and wait for
    /// Enter (needs a terminal; runs one spec at a time).
    #[arg(long)]
    pub step: bool,

    #[command(flatten)]
    pub target: TargetArgs,

    // Last: its heading holds for what follows it.
    #[command(flatten)]
    pub regress: RegressArgs,
}

/// The heading of pg_isolation_regress's own options in `lab spec --help`.
pub const REGRESS_HEADING: &str = "pg_isolation_regress's options";
// (Its Turkish is ui::help_regress_options.)

/// pg_isolation_regress's options that lab takes as it does, so that a
/// Makefile's line can call `lab spec` in its place. Any of them (or
/// --inputdir, --outputdir, --expecteddir) writes pg_regress's layout.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = REGRESS_HEADING)]
pub struct RegressArgs {
    /// Where initdb and postgres are, for the throwaway cluster (pg_regress
    /// runs psql from there; lab needs no psql).
    /// (Empty, as PGXS's `make check` passes it: the PATH's.)
    #[arg(long, value_name = "BINPATH")]
    pub bindir: Option<String>,

    /// Use the server running on HOST (pg_regress's PGHOST).
    #[arg(long, value_name = "HOST")]
    pub host: Option<String>,

    /// Use the server running at PORT (pg_regress's PGPORT); with
    /// --temp-instance lab picks a free port itself.
    #[arg(long, value_name = "PORT")]
    pub port: Option<u16>,

    /// Connect as USER (pg_regress's PGUSER).
    #[arg(long, value_name = "USER")]
    pub user: Option<String>,

    /// Run on a throwaway cluster of lab's own, whatever the environment
    /// says (lab keeps it in a directory of its own, not DIR, and removes
    /// it afterwards).
    #[arg(long, value_name = "DIR")]
    pub temp_instance: Option<PathBuf>,

    /// Append FILE to the throwaway cluster's postgresql.conf (repeatable).
    #[arg(long, value_name = "FILE")]
    pub temp_config: Vec<PathBuf>,

    /// The databases lab makes use the C locale (LC_COLLATE and LC_CTYPE 'C').
    #[arg(long)]
    pub no_locale: bool,

    /// The databases lab makes have this encoding (sessions still talk UTF8).
    #[arg(long, value_name = "ENCODING")]
    pub encoding: Option<String>,

    /// CREATE EXTENSION IF NOT EXISTS this one in each database lab makes (repeatable).
    #[arg(long, value_name = "EXT")]
    pub load_extension: Vec<String>,

    /// At most N tests of a schedule group at once (printed as pg_regress
    /// prints it: "in groups of N").
    #[arg(long, value_name = "N")]
    pub max_connections: Option<usize>,

    /// A schedule group of more than N tests is refused, as pg_regress refuses it.
    #[arg(long, value_name = "N")]
    pub max_concurrent_tests: Option<usize>,

    /// Roles (comma-separated) with LOGIN and every privilege on each
    /// database lab makes; one that does not exist yet is made, and dropped
    /// afterwards (one that exists is used as it is).
    #[arg(long, value_name = "ROLE,...", value_delimiter = ',')]
    pub create_role: Vec<String>,

    /// Accepted; pg_regress passes it to psql's tests only, which lab does not run.
    #[arg(long, value_name = "DIR")]
    pub dlpath: Option<PathBuf>,

    /// Refused: lab runs the specs itself, with nothing to launch.
    #[arg(long, value_name = "CMD", hide = true)]
    pub launcher: Option<String>,
}

impl RegressArgs {
    /// Whether any option of pg_regress's own was given.
    pub fn any(&self) -> bool {
        self.bindir.is_some()
            || self.host.is_some()
            || self.port.is_some()
            || self.user.is_some()
            || self.temp_instance.is_some()
            || !self.temp_config.is_empty()
            || self.no_locale
            || self.encoding.is_some()
            || !self.load_extension.is_empty()
            || !self.create_role.is_empty()
            || self.max_connections.is_some()
            || self.max_concurrent_tests.is_some()
            || self.dlpath.is_some()
            || self.launcher.is_some()
    }
}

#[derive(Debug, Clone, Args)]
pub struct PhenomenaArgs {
    /// Also print this phenomenon's timelines at every level (its id: g0, p4, g2-item, ...).
    #[arg(long, value_name = "ID")]
    pub show: Option<String>,

    /// Only this level (repeatable): read-uncommitted, read-committed, repeatable-read, serializable.
    #[arg(long, value_name = "LEVEL")]
    pub level: Vec<String>,

    /// Output format.
    #[arg(long, value_enum, ignore_case = true, default_value_t = Format::Table)]
    pub format: Format,

    /// After the matrix, what each phenomenon is.
    #[arg(long)]
    pub explain: bool,

    /// Also run every interleaving of each cell's steps (as `lab explore`
    /// does): each cell then says in how many the anomaly occurs, how many
    /// blocked and how many aborted, beside its own interleaving's verdict.
    #[arg(long)]
    pub all_interleavings: bool,

    /// Cells run at once, each in a schema of its own (default: 4 per core;
    /// --all-interleavings: one per core to start, up to 4 per core while it helps).
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,

    /// Also write a JUnit XML report (one test case per cell) to FILE.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,

    /// Compare with an earlier run's JSON (`lab phenomena --format json`)
    /// instead of with the documentation: exit 1 only where a cell's verdict,
    /// wait or SQLSTATE differs.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,

    /// Also write a self-contained HTML report (the matrix as a coloured grid, each cell's swimlanes) to FILE.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,

    /// Deadline, in seconds, for any one step.
    #[arg(long, default_value_t = 10.0, value_name = "SECONDS")]
    pub wait_timeout: f64,

    /// Run the phenomena from edited copies of lab's files in DIR
    /// (DIR/phenomena/<id>.spec); a file DIR does not have comes from lab's own.
    #[arg(long, env = "LAB_DIR", value_name = "DIR")]
    pub lab_dir: Option<PathBuf>,

    #[command(flatten)]
    pub target: TargetArgs,
}

#[derive(Debug, Clone, Args)]
#[command(
    after_help = "A spec that lists no permutation gets every interleaving of its steps, as \
                  isolationtester generates them; one that lists some runs them, or with \
                  --all-permutations every interleaving of each listed one's steps (its final \
                  read, a last session doing nothing before, stays last). A lab scenario or \
                  phenomenon is explored over every interleaving. Each run gets a signature \
                  (who waited for whom, which step failed with which SQLSTATE, what the final \
                  reads returned or whether `# occurs-if:` held); runs with the same signature \
                  form a class.\n\
                  Exit codes: 0 every level ran (and is as the spec's `# expect:` documents), \
                  1 a level is not as documented, 2 could not run."
)]
pub struct ExploreArgs {
    /// A spec file, or a lab scenario with a spec (write-skew) or a phenomenon (g2-item).
    #[arg(value_name = "SPEC|SCENARIO|PHENOMENON")]
    pub target: String,

    /// Only this level (repeatable): read-uncommitted, read-committed,
    /// repeatable-read, serializable, or all (the default).
    #[arg(long, value_name = "LEVEL")]
    pub level: Vec<String>,

    /// Where the spec lists permutations: every interleaving of their steps instead.
    #[arg(long)]
    pub all_permutations: bool,

    /// Run N interleavings drawn at random (the same N for the same --seed).
    #[arg(long, value_name = "N")]
    pub sample: Option<usize>,

    /// The seed of --sample.
    #[arg(long, default_value_t = 1, value_name = "S")]
    pub seed: u64,

    /// Permutations run at once, each worker in a schema of its own (default:
    /// one per core to start, up to 2 per core while each one added makes the runs faster).
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,

    /// Output format (isolation: what isolationtester prints for the spec, at its own level).
    #[arg(long, value_enum, ignore_case = true, default_value_t = SpecFormat::Table)]
    pub format: SpecFormat,

    /// Also write a JUnit XML report (one test case per level) to FILE.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,

    /// Also write a self-contained HTML report (each level's classes, each with the swimlanes of its representative) to FILE.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,

    /// Deadline, in seconds, for any one step.
    #[arg(long, default_value_t = 10.0, value_name = "SECONDS")]
    pub wait_timeout: f64,

    /// Workshop mode: after exploring, run one class's representative again,
    /// showing each step and waiting for Enter (needs a terminal and one level).
    #[arg(long)]
    pub step: bool,

    /// The class --step walks through (1: the largest).
    #[arg(long, default_value_t = 1, value_name = "N", requires = "step")]
    pub class: usize,

    /// Lab's specs from edited copies in DIR (a file DIR does not have comes from lab's own).
    #[arg(long, env = "LAB_DIR", value_name = "DIR")]
    pub lab_dir: Option<PathBuf>,

    #[command(flatten)]
    pub target_args: TargetArgs,
}

#[derive(Debug, Clone, Args)]
#[command(
    after_help = "C sessions run generated transactions over K keys of a list-append table \
                  (a read is SELECT v, an append INSERT ... ON CONFLICT DO UPDATE SET v = v || x; \
                  every appended element is unique); the same seed gives the same transactions. \
                  The history is checked as Elle checks list-append: ww, wr and rw dependencies \
                  inferred from what the reads returned, cycles classified as G0, G1c, G-single, \
                  G-nonadjacent, G2-item, and G1a, G1b, lost and dirty updates, garbage, future \
                  and internal reads. Each level is held to the model PostgreSQL documents: READ \
                  COMMITTED to read committed (forbids G0, G1a, G1b, G1c); REPEATABLE READ to \
                  snapshot isolation (also G-single, G-nonadjacent, lost updates); SERIALIZABLE \
                  to serializability (every cycle). For each cycle found lab writes an isolationtester spec that replays it, \
                  replays it and says whether the checker sees the anomaly again.\n\
                  Exit codes: 0 no anomaly a level forbids, 1 a forbidden anomaly (or a level not \
                  read back as asked), 2 could not run, 130 interrupted (the history so far is checked)."
)]
pub struct HuntArgs {
    /// read-uncommitted, read-committed, repeatable-read, serializable, or all
    /// (the default: the three levels that differ in PostgreSQL; repeatable).
    #[arg(long, value_name = "LEVEL")]
    pub level: Vec<String>,

    /// Keys in play at once (a key takes 32 appends, then a fresh one replaces it).
    #[arg(long, default_value_t = 4, value_name = "K")]
    pub keys: usize,

    /// Sessions running transactions at once.
    #[arg(long, default_value_t = 4, value_name = "C")]
    pub clients: usize,

    /// Transactions per level (default 2000).
    #[arg(long, value_name = "N", conflicts_with = "seconds")]
    pub txns: Option<u64>,

    /// Run each level for S seconds instead of a number of transactions.
    #[arg(long, value_name = "S")]
    pub seconds: Option<f64>,

    /// The seed the transactions come from.
    #[arg(long, default_value_t = 1, value_name = "SEED")]
    pub seed: u64,

    /// Operations per transaction, at most.
    #[arg(long, default_value_t = 4, value_name = "N")]
    pub ops: usize,

    /// The most connections the run may use, its control connection included.
    #[arg(long, value_name = "N")]
    pub max_connections: Option<usize>,

    /// Write the history as JSON lines to FILE (with several levels, FILE.LEVEL.jsonl each).
    #[arg(long, value_name = "FILE")]
    pub history: Option<PathBuf>,

    /// Check a recorded history (lab's JSON lines or Jepsen's history.edn) without a server.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["txns", "seconds", "history"])]
    pub check: Option<PathBuf>,

    /// Also order transactions by real time (one ended before the other began).
    #[arg(long)]
    pub realtime: bool,

    /// Also order each session's transactions as it ran them.
    #[arg(long)]
    pub session_order: bool,

    /// Every cycle class of every strongly connected component, not one per class.
    #[arg(long)]
    pub all_cycles: bool,

    /// Where the reproducers are written.
    #[arg(long, default_value = "lab-hunt", value_name = "DIR")]
    pub specs: PathBuf,

    /// Write no reproducers.
    #[arg(long)]
    pub no_specs: bool,

    /// Times each reproducer is replayed.
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub replays: usize,

    /// Keep every operation of the cycle's transactions in the reproducer.
    #[arg(long)]
    pub no_shrink: bool,

    /// Output format.
    #[arg(long, value_enum, ignore_case = true, default_value_t = HuntFormat::Table)]
    pub format: HuntFormat,

    /// Also write a JUnit XML report (one test case per anomaly class and level) to FILE.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,

    /// Also write a self-contained HTML report (each anomaly's cycle beside its transactions' swimlanes) to FILE.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,

    /// Deadline, in seconds, for any one statement.
    #[arg(long, default_value_t = 10.0, value_name = "SECONDS")]
    pub wait_timeout: f64,

    #[command(flatten)]
    pub target_args: TargetArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum HuntFormat {
    Table,
    Json,
}

/// Where `lab spec` and `lab phenomena` run: a server, or the throwaway cluster.
#[derive(Debug, Clone, Args)]
pub struct TargetArgs {
    /// PostgreSQL URL or key=value connection string. Without it (and without
    /// PGSERVICE/PGHOST/PGPORT/PGUSER/PGDATABASE) a throwaway cluster is started.
    #[arg(long, env = "DATABASE_URL", hide_env_values = true, value_name = "URL")]
    pub database_url: Option<String>,

    /// Directory holding initdb and postgres for the throwaway cluster.
    #[arg(long, env = "LAB_PG_BIN", value_name = "DIR")]
    pub pg_bin: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SpecFormat {
    Table,
    Json,
    Isolation,
}

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

#[derive(Debug, Clone, Args)]
#[command(
    after_help = "Statements end with ';' and go to the current session; `B: <sql>;` sends one to B. \
                  A statement that waits gives the prompt back at once, with whom it waits for; \
                  its answer is printed when it comes. \\? lists the commands (\\s B, \\timeline, \\locks, \\save FILE.spec, \\run STEP, \\predict); \
                  Ctrl-C cancels the current session's statement; \\q or Ctrl-D leaves."
)]
pub struct ShellArgs {
    /// The sessions, each on its own connection (default A,B).
    #[arg(long, value_name = "A,B,...")]
    pub sessions: Option<String>,

    /// Load a spec: its setup runs, its sessions are the shell's, `\run STEP` runs its steps.
    #[arg(long, value_name = "FILE")]
    pub spec: Option<PathBuf>,

    /// Guess first: before each statement, say what it will do; a tally at the end.
    #[arg(long)]
    pub predict: bool,

    #[command(flatten)]
    pub conn: ConnArgs,
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
    /// A Mermaid sequenceDiagram per variant, in Markdown, for GitHub issues and pull requests.
    Mermaid,
}

/// A scenario's subcommand: its about, the common run options, its own.
fn scenario_command(s: &'static Scenario) -> clap::Command {
    let cmd = RunArgs::augment_args(clap::Command::new(s.name));
    let cmd = match &s.options {
        Some(o) => (o.augment)(cmd),
        None => cmd,
    };
    // After the arguments: deriving them sets the about from their type's doc comment.
    cmd.about((s.about)().en())
}

/// The command line as clap sees it, in `lang`: abouts and option help in
/// that language where lab has them (English is written on the types above
/// and in the catalogue), and clap's own words from the interface's.
pub fn command(lang: Lang) -> clap::Command {
    let mut cmd = Cli::command();
    for s in catalogue::ALL {
        cmd = cmd.subcommand(scenario_command(s));
    }
    let mut cmd = localize(cmd, lang, true);
    // `help` is clap's own subcommand, made when the command is built.
    cmd.build();
    let about = ui::help_subcommand().render(lang);
    cmd.mut_subcommand("help", |h| {
        h.about(about.clone())
            .mut_subcommand("help", |hh| hh.about(about.clone()))
    })
}

/// Parses `args` (the program name first).
pub fn parse(args: &[String], lang: Lang) -> Result<Parsed, clap::Error> {
    let m = command(lang).try_get_matches_from(args)?;
    let lang_given = m.get_one::<Lang>("lang").copied();
    if let Some((name, sub)) = m.subcommand()
        && let Some(scenario) = catalogue::find(name)
    {
        let run = RunArgs::from_arg_matches(sub)?;
        let params = match &scenario.options {
            Some(o) => (o.parse)(sub),
            None => scenario.default_params(),
        };
        return Ok(Parsed::Scenario {
            lang: lang_given,
            scenario,
            run,
            params,
        });
    }
    Ok(Parsed::Fixed(Cli::from_arg_matches(&m)?))
}

/// The Turkish text for a help key: the fixed table, then the catalogue.
fn turkish(key: &str) -> Option<String> {
    if let Some((_, t)) = HELP_TR.iter().find(|(k, _)| *k == key) {
        return Some(t.to_string());
    }
    if let Some(name) = key.strip_prefix("cmd.") {
        return catalogue::find(name).map(|s| (s.about)().render(Lang::Tr));
    }
    let rest = key.strip_prefix("arg.")?;
    let (name, id) = rest.split_once('.')?;
    let s = catalogue::find(name)?;
    let o = s.options.as_ref()?;
    o.help_tr.iter().find(|(k, _)| *k == id).map(|(_, t)| t.to_string())
}

/// An option's help with its default, its possible values and its
/// environment variable written out in `lang`'s words (clap's are English).
fn annotate(a: clap::Arg, lang: Lang) -> clap::Arg {
    let mut notes = Vec::new();
    if let Some(env) = a.get_env() {
        notes.push(format!("[{}: {}]", ui::help_env().render(lang), env.to_string_lossy()));
    }
    if a.get_action().takes_values() && !a.get_default_values().is_empty() {
        let d: Vec<String> = a
            .get_default_values()
            .iter()
            .map(|v| v.to_string_lossy().into_owned())
            .collect();
        notes.push(format!("[{}: {}]", ui::help_default().render(lang), d.join(", ")));
    }
    let values: Vec<String> = a
        .get_possible_values()
        .iter()
        .filter(|v| !v.is_hide_set())
        .map(|v| v.get_name().to_string())
        .collect();
    if !values.is_empty() && a.get_action().takes_values() {
        notes.push(format!("[{}: {}]", ui::help_possible().render(lang), values.join(", ")));
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

fn localize(mut cmd: clap::Command, lang: Lang, root: bool) -> clap::Command {
    use clap::{Arg, ArgAction};
    let find = |key: &str| if lang == Lang::Tr { turkish(key) } else { None };
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
    let say = |t: crate::i18n::Text| t.render(lang);
    cmd = cmd
        .disable_help_flag(true)
        .arg(
            Arg::new("help")
                .short('h')
                .long("help")
                .action(ArgAction::Help)
                .help(say(ui::help_flag())),
        )
        .subcommand_help_heading(say(ui::help_commands()))
        .subcommand_value_name(say(ui::help_command_value()))
        .help_template(format!(
            "{{before-help}}{{about-with-newline}}\n{} {{usage}}\n\n{{all-args}}{{after-help}}",
            say(ui::help_usage())
        ));
    if root {
        cmd = cmd.disable_version_flag(true).arg(
            Arg::new("version")
                .short('V')
                .long("version")
                .action(ArgAction::Version)
                .help(say(ui::version_flag())),
        );
    }
    let options = say(ui::help_options());
    cmd.mut_args(|a| {
        // `--timeout-ms -5` is a bad value, not an unknown option '-5'.
        let a = if a.get_action().takes_values() {
            a.allow_negative_numbers(true)
        } else {
            a
        };
        let a = annotate(a, lang);
        match a.get_help_heading() {
            None => a.help_heading(options.clone()),
            Some(REGRESS_HEADING) => a.help_heading(say(ui::help_regress_options())),
            Some(_) => a,
        }
    })
    .mut_subcommands(|s| localize(s, lang, false))
}

/// `--help` or `--version` as clap renders it (coloured for a terminal), with
/// the usage line's `[OPTIONS]`, clap's own word, in `lang`'s.
pub fn help_output(e: &clap::Error, lang: Lang, terminal: bool) -> String {
    let styled = e.render();
    let text = if terminal && std::env::var_os("NO_COLOR").is_none() {
        styled.ansi().to_string()
    } else {
        styled.to_string()
    };
    let options = format!("[{}]", ui::help_options_value().render(lang));
    text.replace("[OPTIONS]", &options)
}

/// A usage error on one line, in `lang`: the common kinds in our own words
/// (from the error's context), any other in clap's.
pub fn usage_error(e: &clap::Error, lang: Lang, args: &[String]) -> String {
    use clap::error::{ContextKind, ErrorKind};
    let get = |k: ContextKind| e.get(k).map(|v| v.to_string());
    let arg = get(ContextKind::InvalidArg).unwrap_or_default();
    let text = match e.kind() {
        // A word where none is taken (an option's words start with '-').
        ErrorKind::UnknownArgument if !arg.starts_with('-') => msg::unexpected_arg(arg),
        ErrorKind::UnknownArgument => match before_its_command(&arg, args, lang) {
            Some(placed) => return placed.render(lang),
            None => msg::unknown_arg(arg),
        },
        ErrorKind::InvalidSubcommand => match get(ContextKind::InvalidSubcommand) {
            Some(command) => msg::unknown_command(command),
            None => return one_line_usage_error(e),
        },
        ErrorKind::InvalidValue | ErrorKind::ValueValidation => {
            let value = get(ContextKind::InvalidValue).unwrap_or_default();
            // Clap lists no possible values as an empty list; no value at
            // all is the option given last, with nothing after it.
            let valid = get(ContextKind::ValidValue).filter(|v| !v.is_empty());
            let none_given = value.is_empty() && e.kind() == ErrorKind::InvalidValue;
            match (none_given, valid) {
                (true, Some(valid)) => msg::needs_value_of(arg, valid),
                (true, None) => msg::needs_value(arg),
                (false, Some(valid)) => msg::invalid_value_of(value, arg, valid),
                (false, None) => msg::invalid_value(value, arg),
            }
        }
        ErrorKind::MissingRequiredArgument => msg::missing(arg),
        ErrorKind::MissingSubcommand => msg::missing_command(),
        ErrorKind::ArgumentConflict => msg::conflict(arg, get(ContextKind::PriorArg).unwrap_or_default()),
        ErrorKind::TooFewValues => match (get(ContextKind::MinValues), get(ContextKind::ActualNumValues)) {
            (Some(min), Some(given)) => msg::too_few(arg, min, given),
            _ => msg::values(arg),
        },
        ErrorKind::NoEquals | ErrorKind::TooManyValues | ErrorKind::WrongNumberOfValues => msg::values(arg),
        _ => return one_line_usage_error(e),
    };
    // Several suggestions read as alternatives: 'list' or 'lost-update'.
    let or = format!("' {} '", msg::or().render(lang));
    let tip = [
        ContextKind::SuggestedArg,
        ContextKind::SuggestedSubcommand,
        ContextKind::SuggestedValue,
    ]
    .into_iter()
    .find_map(|k| e.get(k))
    .map(|v| match v {
        clap::error::ContextValue::Strings(all) => all.join(&or),
        one => one.to_string(),
    });
    match tip {
        Some(t) => format!("{}; {}", text.render(lang), msg::tip(t).render(lang)),
        None => text.render(lang),
    }
}

/// An option of the commands given before any command (`lab --lab-dir D
/// all`): where it belongs, naming the command that follows it when that
/// command takes it. None where the option was not before a command or no
/// command takes it.
fn before_its_command(arg: &str, args: &[String], lang: Lang) -> Option<crate::i18n::Text> {
    let long = arg.strip_prefix("--")?;
    let cmd = command(lang);
    let names: Vec<&str> = cmd.get_subcommands().map(clap::Command::get_name).collect();
    let options: Vec<(&str, &clap::Arg)> = cmd
        .get_subcommands()
        .filter_map(|s| Some((s.get_name(), s.get_arguments().find(|a| a.get_long() == Some(long))?)))
        .collect();
    let taking: Vec<&str> = options.iter().map(|(name, _)| *name).collect();
    // `--lab-dir D` or `--lab-dir=D`.
    let given = |a: &String| a.strip_prefix(arg).is_some_and(|v| v.is_empty() || v.starts_with('='));
    let at = args.iter().skip(1).position(given)? + 1;
    let value_follows = args[at] == arg;
    if taking.is_empty() || args[1..at].iter().any(|a| names.contains(&a.as_str())) {
        return None;
    }
    // `--variant deadlock all`: the word after an option that takes a value is its value.
    let takes_value = options.first().is_some_and(|(_, a)| a.get_action().takes_values());
    let from = (at + 1 + usize::from(value_follows && takes_value)).min(args.len());
    Some(match args[from..].iter().find(|a| names.contains(&a.as_str())) {
        Some(c) if taking.contains(&c.as_str()) => msg::after_the_command(arg, c),
        _ => {
            let mut some: Vec<&str> = taking.iter().copied().take(3).collect();
            if taking.len() > 3 {
                some.push("...");
            }
            msg::after_a_command(arg, some.join(", "))
        }
    })
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

/// The text of a usage error line: `<error> (see lab --help)`.
pub fn usage_line(e: &clap::Error, lang: Lang, args: &[String]) -> String {
    msg::usage(usage_error(e, lang, args)).render(lang)
}

/// The language of a command line clap could not parse: its `--lang`, if it
/// has a readable one, else the environment's.
pub fn language_of_args(args: &[String], env: &dyn Fn(&str) -> Option<String>) -> Lang {
    let given = args
        .iter()
        .enumerate()
        .find_map(|(i, a)| match a.strip_prefix("--lang") {
            Some("") => args.get(i + 1).cloned(),
            Some(v) => v.strip_prefix('=').map(str::to_string),
            None => None,
        });
    given
        .and_then(|v| Lang::from_str(&v, true).ok())
        .unwrap_or_else(|| Lang::from_env(env))
}

pub mod msg {
    crate::messages! {
        prefix "us";
        usage(error) {
            en: "{error} (see lab --help)",
            tr: "{error} (bkz. lab --help)",
        }
        unknown_arg(arg) {
            en: "unknown option '{arg}'",
            tr: "bilinmeyen seçenek '{arg}'",
        }
        after_the_command(arg, command) {
            en: "'{arg}' is an option of the command: put it after it (lab {command} {arg} ...)",
            tr: "'{arg}' komutun bir seçeneği: komuttan sonra yazın (lab {command} {arg} ...)",
        }
        after_a_command(arg, commands) {
            en: "'{arg}' is an option of the commands ({commands}), not of lab: put it after one (lab COMMAND {arg} ...)",
            tr: "'{arg}' lab'ın değil, komutların seçeneği ({commands}): bir komuttan sonra yazın (lab KOMUT {arg} ...)",
        }
        unexpected_arg(arg) {
            en: "unexpected argument '{arg}'",
            tr: "beklenmeyen argüman '{arg}'",
        }
        needs_value(arg) {
            en: "'{arg}' needs a value",
            tr: "'{arg}' bir değer ister",
        }
        needs_value_of(arg, valid) {
            en: "'{arg}' needs a value (possible values: {valid})",
            tr: "'{arg}' bir değer ister (olası değerler: {valid})",
        }
        unknown_command(command) {
            en: "unknown command '{command}'",
            tr: "bilinmeyen komut '{command}'",
        }
        invalid_value(value, arg) {
            en: "invalid value '{value}' for '{arg}'",
            tr: "'{arg}' için geçersiz değer '{value}'",
        }
        invalid_value_of(value, arg, valid) {
            en: "invalid value '{value}' for '{arg}' (possible values: {valid})",
            tr: "'{arg}' için geçersiz değer '{value}' (olası değerler: {valid})",
        }
        missing(arg) {
            en: "'{arg}' is required",
            tr: "'{arg}' gerekli",
        }
        conflict(arg, other) {
            en: "'{arg}' cannot be used with '{other}'",
            tr: "'{arg}', '{other}' ile birlikte kullanılamaz",
        }
        values(arg) {
            en: "wrong number of values for '{arg}'",
            tr: "'{arg}' için yanlış sayıda değer",
        }
        too_few(arg, min, given) {
            en: "'{arg}' takes at least {min} values ({given} given)",
            tr: "'{arg}' en az {min} değer alır ({given} verildi)",
        }
        or() {
            en: "or",
            tr: "ya da",
        }
        tip(suggestion) {
            en: "did you mean '{suggestion}'?",
            tr: "'{suggestion}' mi demek istediniz?",
        }
        missing_command() {
            en: "a command is required",
            tr: "bir komut gerekli",
        }
    }
}
