//! `lab spec`: its command line, with pg_isolation_regress's own options.
use std::path::PathBuf;

use clap::Args;

use crate::options::{BaselineArgs, CommonArgs, JobsArgs, SpecFormat};

/// Run isolationtester spec files (PostgreSQL's isolation test format), in parallel.
#[derive(Debug, Clone, Args)]
#[command(
    after_help = "Each spec runs in a fresh database of its own, created from template0 and \
                  dropped afterwards; a role that cannot create databases (or --in-database) \
                  runs them one at a time in the database given, as isolationtester does.\n\
                  With --inputdir/--outputdir/--expecteddir (or another of pg_isolation_regress's \
                  options), lab writes pg_regress's layout (results/, regression.diffs, regression.out) \
                  and prints its lines: a Makefile's pg_isolation_regress line runs unchanged with lab spec.\n\
                  Exit codes: 0 every permutation ran to its end (and matched its expected file), \
                  1 one did not, 2 could not run (a spec that does not parse, no server).",
    mut_arg("jobs", |a| a.help(
        "Specs run at once, each in its own database (default: the number of cores; 1 with --repeat)")),
    mut_arg("junit", |a| a.help("Also write a JUnit XML report (one test case per spec and permutation) to FILE")),
    mut_arg("html", |a| a.help("Also write a self-contained HTML report (a swimlane diagram per permutation) to FILE")),
    // No default: PGISOLATIONTIMEOUT, or pg_isolation_regress's, sets it.
    mut_arg("wait_timeout", |a| a.default_value(None).help(
        "Deadline, in seconds, for any one step: a step still running then is cancelled, as isolationtester \
         does after PGISOLATIONTIMEOUT (which sets it when this is not given; else 10, or isolationtester's \
         300 with pg_isolation_regress's options)")),
    mut_arg("baseline", |a| a.help(
        "Compare with an earlier run's JSON (`--format json`) instead of with the expected output: exit 1 \
         only where a verdict, a wait, a SQLSTATE or a counted metric differs")),
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
    pub jobs: JobsArgs,

    #[command(flatten)]
    pub baseline: BaselineArgs,

    #[command(flatten)]
    pub common: CommonArgs,

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
