//! `lab spec`: the command line (and the environment) checked into a run's
//! configuration, pg_isolation_regress's options taken as it takes them.
//! Pure: the specs, the schedules and the expected files are found and read
//! where the run starts (the job).
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Result, bail};

use super::args::SpecArgs;
use super::msg as smsg;
use super::{NewDatabase, Place, SpecConfig};
use crate::i18n::Lang;
use crate::options::{self, ServerWanted, Shared, SpecFormat};
use crate::postgres::conninfo::EnvLookup;

/// A checked `lab spec` command line.
pub struct SpecRun {
    pub shared: Shared,
    pub format: SpecFormat,
    /// After each permutation, the comments the spec has before its steps.
    pub explain: bool,
    /// `--verbose`: lab's own lines beside isolationtester's output.
    pub verbose: bool,
    /// The spec files and directories named, and the schedules.
    pub paths: Vec<PathBuf>,
    pub schedules: Vec<PathBuf>,
    /// pg_regress's --inputdir (the current directory as its drop-in).
    pub inputdir: Option<PathBuf>,
    /// A schedule group larger than this is refused (--max-concurrent-tests).
    pub max_group: Option<usize>,
    /// `--expected FILE` (one spec only).
    pub expected: Option<PathBuf>,
    /// Where each spec's expected files are (NAME.out, NAME_0.out ...).
    pub expected_dir: Option<PathBuf>,
    /// The directories named, each to be one.
    pub dirs: Vec<PathBuf>,
    /// pg_regress's layout: results/, regression.diffs and regression.out in this directory.
    pub outputdir: Option<PathBuf>,
    /// `--load`: every core kept busy while the specs run.
    pub load: bool,
    /// `--pooler`: sessions through lab's PgBouncer.
    pub pooler: bool,
    /// What the suite runs with, but the specs (read at the start).
    pub suite: SpecConfig,
}

/// What pg_regress 15 adds to its temporary instance's configuration (lab's
/// log_line_prefix stays: lab reads its server's log by it).
const REGRESS_TEMP_SETTINGS: &str = "log_autovacuum_min_duration = 0\nmax_prepared_transactions = 2\n";

/// isolationtester's deadline for a step, in seconds, when
/// PGISOLATIONTIMEOUT does not say.
const ISOLATIONTESTER_DEADLINE: f64 = 300.0;

impl SpecRun {
    pub fn new(args: &SpecArgs, env: EnvLookup<'_>, lang: Lang) -> Result<SpecRun> {
        for (flag, n) in [("--jobs", args.jobs.jobs), ("--repeat", args.repeat)] {
            if n == Some(0) {
                bail!(crate::commands::hunt::msg::at_least_one(flag));
            }
        }
        // pg_regress's options: lab is pg_isolation_regress's drop-in, and
        // its --inputdir is the current directory unless given (tests are
        // ./specs/NAME.spec, expected files ./expected/NAME.out).
        let r = &args.regress;
        if r.launcher.is_some() {
            bail!(smsg::no_launcher());
        }
        let drop_in = args.inputdir.is_some() || args.outputdir.is_some() || args.expecteddir.is_some() || r.any();
        let inputdir = args.inputdir.clone().or_else(|| drop_in.then(|| PathBuf::from(".")));
        // isolationtester's PGISOLATIONTIMEOUT, where --wait-timeout is not
        // given; else lab's 10 s, or as pg_isolation_regress's drop-in,
        // isolationtester's own 300 s (a slow step it lets finish must not
        // fail here).
        let wait_timeout = match (args.common.wait.wait_timeout, env("PGISOLATIONTIMEOUT")) {
            (Some(s), _) => options::deadline(s)?,
            (None, Some(v)) => options::deadline(
                v.trim()
                    .parse::<f64>()
                    .map_err(|_| smsg::bad_isolation_timeout(v.clone()))?,
            )?,
            (None, None) => options::deadline(if drop_in { ISOLATIONTESTER_DEADLINE } else { 10.0 })?,
        };
        // lab's own waits (a database made or dropped, the clean-up) need
        // not wait as long as isolationtester lets a step run.
        let own_waits = wait_timeout.min(Duration::from_secs(10)).max(
            args.common
                .wait
                .wait_timeout
                .map_or(Duration::ZERO, Duration::from_secs_f64),
        );
        let expected_dir = match (&args.expected_dir, &args.expecteddir, &inputdir) {
            (Some(d), _, _) => Some(d.clone()),
            (None, Some(d), _) | (None, None, Some(d)) => Some(d.join("expected")),
            _ => None,
        };
        let regress = args.expected.is_some() || expected_dir.is_some() || drop_in;
        let place = match (&args.dbname, args.in_database || args.use_existing) {
            (name, true) => Place::Given(name.clone()),
            (Some(name), false) => Place::Named(name.clone()),
            (None, false) => Place::Fresh,
        };
        Ok(SpecRun {
            shared: Shared {
                step: args.step,
                baseline: args
                    .baseline
                    .baseline
                    .clone()
                    .map(|p| (p, Vec::new(), crate::baseline::Kind::Runs)),
                ..Shared::new(lang, server(args, env)?, own_waits).reports(&args.common.reports)
            },
            format: args.format,
            explain: args.explain,
            verbose: args.verbose,
            paths: args.paths.clone(),
            schedules: args.schedule.clone(),
            inputdir,
            max_group: r.max_concurrent_tests.filter(|n| *n > 0),
            expected: args.expected.clone(),
            expected_dir,
            dirs: [&args.expected_dir, &args.inputdir, &args.expecteddir]
                .into_iter()
                .flatten()
                .cloned()
                .collect(),
            outputdir: drop_in.then(|| args.outputdir.clone().unwrap_or_else(|| PathBuf::from("."))),
            load: args.load,
            pooler: args.pooler,
            suite: SpecConfig {
                lang,
                specs: Vec::new(),
                groups: Vec::new(),
                place,
                clean: args.clean,
                repeat: args.repeat.unwrap_or(1),
                // A person steps through one spec at a time; --repeat runs
                // specs one after another, as PostgreSQL's schedule does
                // (specs side by side share the server: its statistics,
                // its CPU), unless --jobs says otherwise.
                jobs: match (args.step, args.repeat.is_some_and(|n| n > 1), args.jobs.jobs) {
                    (true, _, _) => 1,
                    (false, _, Some(j)) => j,
                    (false, true, None) => 1,
                    (false, false, None) => options::cores(),
                }
                // pg_regress's --max-connections: at most N tests at once.
                .min(r.max_connections.filter(|n| *n > 0).unwrap_or(usize::MAX)),
                groups_of: r.max_connections.filter(|n| *n > 0),
                database: NewDatabase {
                    encoding: r.encoding.clone(),
                    no_locale: r.no_locale,
                    extensions: r.load_extension.clone(),
                    roles: r.create_role.iter().filter(|r| !r.is_empty()).cloned().collect(),
                },
                wait_timeout,
                own_waits,
                regress,
                // pg_regress's options (a drop-in for pg_isolation_regress)
                // set these whatever the environment says, as pg_regress
                // does (setenv(..., 1)): a CI runner's PGTZ=UTC must not
                // change a timestamptz that expected files hold. Compared
                // through lab's own --expected-dir, the environment wins.
                appname: env("PGAPPNAME").filter(|_| !drop_in),
                options: env("PGOPTIONS"),
                datestyle: env("PGDATESTYLE")
                    .filter(|_| !drop_in)
                    .or_else(|| regress.then(|| "Postgres, MDY".into())),
                tz: env("PGTZ")
                    .filter(|_| !drop_in)
                    .or_else(|| regress.then(|| "America/Los_Angeles".into())),
            },
        })
    }
}

/// The server of a `lab spec` run, pg_regress's options taken as it takes
/// them: --temp-instance starts lab's throwaway cluster whatever the
/// environment says (pg_regress unsets PGHOST and the rest), with the
/// --temp-config files appended to its configuration; --host, --port and
/// --user are PGHOST, PGPORT and PGUSER (pg_regress sets them); --bindir is
/// where the throwaway cluster's programs are.
fn server(args: &SpecArgs, env: EnvLookup<'_>) -> Result<ServerWanted> {
    let r = &args.regress;
    // An empty --bindir is pg_regress's "the PATH's": lab's search.
    let pg_bin = args
        .common
        .server
        .local
        .pg_bin
        .clone()
        .or_else(|| (r.bindir.as_deref()).filter(|d| !d.is_empty()).map(PathBuf::from));
    let libpq = [
        ("--host", "PGHOST", r.host.clone()),
        ("--port", "PGPORT", r.port.map(|p| p.to_string())),
        ("--user", "PGUSER", r.user.clone()),
    ];
    let given: Vec<&str> = libpq
        .iter()
        .filter(|(_, _, v)| v.is_some())
        .map(|(o, _, _)| *o)
        .collect();
    // A URL from DATABASE_URL (clap reads it into the option) yields to
    // pg_regress's options, as the rest of the environment does.
    let database_url = &args.common.server.url.database_url;
    let url = database_url.clone().filter(|u| env("DATABASE_URL").as_ref() != Some(u));
    if let Some(url_option) = url.is_some().then_some("--database-url") {
        if r.temp_instance.is_some() {
            bail!(smsg::server_twice(url_option, "--temp-instance"));
        }
        if let Some(o) = given.first() {
            bail!(smsg::server_twice(url_option, *o));
        }
    }
    // pg_regress's temporary instance: its own settings, then the user's
    // (a later line wins). Read only for a cluster lab starts, as
    // pg_regress reads them only for its temporary instance.
    let mut wanted = ServerWanted {
        url: database_url.clone(),
        pg_bin,
        tls: args.common.server.local.tls,
        throwaway: r.temp_instance.is_some(),
        conf: if r.temp_instance.is_some() {
            REGRESS_TEMP_SETTINGS.to_string()
        } else {
            String::new()
        },
        conf_files: r.temp_config.clone(),
        overlay: Vec::new(),
    };
    if r.temp_instance.is_some() {
        if let Some(o) = given.iter().find(|o| **o != "--port") {
            bail!(smsg::server_twice("--temp-instance", *o));
        }
    } else if !given.is_empty() {
        // pg_regress's options win over the environment, DATABASE_URL too.
        wanted.url = None;
        wanted.overlay.push(("DATABASE_URL", None));
        for (_, var, value) in libpq {
            if value.is_some() {
                wanted.overlay.push((var, value));
            }
        }
    }
    Ok(wanted)
}
