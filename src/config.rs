//! Turns the command line (and the environment) into a checked run
//! configuration. Everything here is pure, so it is unit-tested without I/O.
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Result, bail};

use crate::catalogue::{self, Params, RunOpts, Scenario, Variant};
use crate::cli::{
    ConnArgs, ExploreArgs, Format, HuntArgs, HuntFormat, LocalArgs, PhenomenaArgs, RunArgs, SpecArgs, SpecFormat,
};
use crate::files::LabFiles;
use crate::i18n::{Context, Lang};
use crate::phenomena::{self, MatrixConfig};
pub use crate::postgres::RunOn;
pub use crate::postgres::conninfo::{EnvLookup, process_env};
use crate::progress::Progress;
use crate::retry::RetryPolicy;
use crate::suite::SpecConfig;
use std::io::IsTerminal;

/// One scenario of a run: the variants to run, with its options.
pub struct Planned {
    pub scenario: &'static Scenario,
    pub variants: Vec<&'static Variant>,
    pub params: Params,
}

/// What every run that talks to a server has, checked.
pub struct Common {
    pub lang: Lang,
    pub target: RunOn,
    /// Every wait's deadline.
    pub wait_timeout: Duration,
    /// A person presses Enter before each statement.
    pub step: bool,
    /// With `step`: the person guesses what each statement will do first.
    pub predict: bool,
    pub junit: Option<PathBuf>,
    pub html: Option<PathBuf>,
    /// `--baseline FILE`: the run is compared with that earlier run.
    pub baseline: Option<std::sync::Arc<crate::baseline::Baseline>>,
}

/// `--baseline FILE`, read and checked against the names the run will report.
fn baseline_of(
    path: &Option<PathBuf>,
    names: &[String],
    kind: crate::baseline::Kind,
) -> Result<Option<std::sync::Arc<crate::baseline::Baseline>>> {
    let Some(p) = path else { return Ok(None) };
    let b = crate::baseline::Baseline::load(p)?;
    b.check_kind(kind)?;
    b.check_names(names)?;
    Ok(Some(std::sync::Arc::new(b)))
}

/// A checked configuration for one `lab <scenario>` or `lab all` run.
pub struct RunConfig {
    pub common: Common,
    pub explain: bool,
    pub schema: String,
    pub keep_schema: bool,
    pub format: Format,
    /// Only the verdict table.
    pub summary: bool,
    /// Every step of long timelines.
    pub verbose: bool,
    /// The most connections the run may use, the control connection included.
    pub max_connections: Option<usize>,
    /// Scenarios run at once (`lab all`).
    pub jobs: usize,
    /// Sessions go through lab's own PgBouncer (transaction mode).
    pub pooler: bool,
    pub opts: RunOpts,
    /// The scenarios to run, in order.
    pub plan: Vec<Planned>,
}

impl RunConfig {
    /// `lab <scenario>`: its variants (all unless --variant), its options.
    pub fn for_scenario(
        scenario: &'static Scenario,
        args: &RunArgs,
        params: Params,
        env: EnvLookup<'_>,
        lang: Lang,
    ) -> Result<RunConfig> {
        let mut variants = select_variants(scenario, &args.variants)?;
        if let Some(o) = &scenario.options {
            let runs = |v: &&Variant| (o.selects)(&params, v.name);
            // A variant named with --variant that the options leave out is a contradiction.
            if let Some(v) = variants.iter().find(|v| !runs(v))
                && !args.variants.is_empty()
            {
                let kept: Vec<&str> = scenario.variants.iter().filter(runs).map(|v| v.name).collect();
                bail!(msg::not_selected(v.name, scenario.name, kept.join(", ")));
            }
            variants.retain(runs);
        }
        RunConfig::new(
            args,
            vec![Planned {
                scenario,
                variants,
                params,
            }],
            env,
            lang,
        )
    }

    /// `lab all`: every scenario (or those `--variant SCENARIO[/VARIANT]`
    /// names), every variant unless named, default options.
    pub fn for_all(args: &RunArgs, env: EnvLookup<'_>, lang: Lang) -> Result<RunConfig> {
        let mut wanted: Vec<(&'static Scenario, Option<String>)> = Vec::new();
        for w in &args.variants {
            let (name, variant) = match w.split_once('/') {
                Some((s, v)) => (s, Some(v.to_string())),
                None => (w.as_str(), None),
            };
            let scenario = catalogue::find(name).ctx(|| msg::variant_with_all(w))?;
            wanted.push((scenario, variant));
        }
        let plan = catalogue::ALL
            .iter()
            .copied()
            .filter(|s| wanted.is_empty() || wanted.iter().any(|(w, _)| std::ptr::eq(*w, *s)))
            .map(|s| {
                let mine: Vec<&Option<String>> = wanted
                    .iter()
                    .filter(|(w, _)| std::ptr::eq(*w, s))
                    .map(|(_, v)| v)
                    .collect();
                // A bare scenario name selects all of its variants.
                let names: Vec<String> = if mine.iter().any(|v| v.is_none()) {
                    Vec::new()
                } else {
                    mine.into_iter().flatten().cloned().collect()
                };
                Ok(Planned {
                    scenario: s,
                    variants: select_variants(s, &names)?,
                    params: s.default_params()?,
                })
            })
            .collect::<Result<_>>()?;
        RunConfig::new(args, plan, env, lang)
    }

    fn new(args: &RunArgs, plan: Vec<Planned>, env: EnvLookup<'_>, lang: Lang) -> Result<RunConfig> {
        if !(args.wait_timeout.is_finite() && args.wait_timeout > 0.0 && args.wait_timeout <= 3600.0) {
            bail!(msg::wait_timeout());
        }
        if args.retry_attempts == 0 || args.retry_attempts > 100 {
            bail!(crate::catalogue::context::msg::between("--retry-attempts", 1, 100));
        }
        if args.retry_base_ms > args.retry_cap_ms || args.retry_cap_ms > 60_000 {
            bail!(msg::retry_base());
        }
        if args.timeout_ms < 10 || args.timeout_ms > 60_000 {
            bail!(crate::catalogue::context::msg::between("--timeout-ms", 10, 60_000));
        }
        if Duration::from_millis(args.timeout_ms) * 3 > Duration::from_secs_f64(args.wait_timeout) {
            bail!(msg::wait_vs_timeout());
        }
        if args.step && !std::io::stdin().is_terminal() {
            bail!(msg::step_needs_terminal());
        }
        // A person is in the loop: the deadlines wait for them too.
        let wait_timeout = if args.step {
            Duration::from_secs_f64(args.wait_timeout).max(Duration::from_secs(3600))
        } else {
            Duration::from_secs_f64(args.wait_timeout)
        };
        let files = lab_files(&args.lab_dir)?;
        Ok(RunConfig {
            common: Common {
                lang,
                target: target(&args.conn, env, lang)?,
                wait_timeout,
                step: args.step,
                predict: args.predict,
                // An unwritable path is refused now, not found after the whole run.
                junit: junit_path(&args.junit)?,
                html: html_path(&args.html)?,
                baseline: baseline_of(
                    &args.baseline,
                    &plan.iter().map(|p| p.scenario.name.to_string()).collect::<Vec<_>>(),
                    crate::baseline::Kind::Runs,
                )?,
            },
            explain: args.explain,
            schema: check_schema(&args.conn.local.schema)?,
            keep_schema: args.conn.keep_schema,
            format: args.format,
            summary: args.summary,
            verbose: args.verbose,
            jobs: match args.jobs {
                Some(0) => bail!(crate::catalogue::context::msg::between("--jobs", 1, 64)),
                // A person steps through one scenario at a time.
                Some(_) if args.step => 1,
                Some(n) => n.min(64),
                None if args.step || args.max_connections.is_some() => 1,
                None => DEFAULT_JOBS,
            },
            // Missing pgbouncer is found before any server starts.
            pooler: match args.pooler {
                true => crate::postgres::pgbouncer::find_bin().map(|_| true)?,
                false => false,
            },
            max_connections: match args.max_connections {
                Some(n) if n < MIN_CONNECTIONS => bail!(msg::too_few_connections(n, MIN_CONNECTIONS)),
                n => n,
            },
            opts: RunOpts {
                timeout: Duration::from_millis(args.timeout_ms),
                retry: RetryPolicy {
                    max_attempts: args.retry_attempts,
                    base: Duration::from_millis(args.retry_base_ms),
                    cap: Duration::from_millis(args.retry_cap_ms),
                },
                files,
                progress: Progress::for_stderr(lang, args.step),
                lang,
            },
            plan,
        })
    }
}

/// A checked `lab spec` command line.
pub struct SpecRun {
    pub common: Common,
    pub format: SpecFormat,
    /// After each permutation, the comments the spec has before its steps.
    pub explain: bool,
    pub suite: SpecConfig,
    /// pg_regress's layout (`--inputdir`, `--outputdir`, `--expecteddir`).
    pub layout: Option<crate::suite::regress::Layout>,
    /// `--load`: every core kept busy while the specs run.
    pub load: bool,
    /// `--pooler`: sessions through lab's PgBouncer.
    pub pooler: bool,
}

impl SpecRun {
    pub fn new(args: &SpecArgs, env: EnvLookup<'_>, lang: Lang) -> Result<SpecRun> {
        use crate::suite::{Place, files, msg as smsg, regress};
        for (flag, n) in [("--jobs", args.jobs), ("--repeat", args.repeat)] {
            if n == Some(0) {
                bail!(crate::hunt::msg::at_least_one(flag));
            }
        }
        for dir in [&args.expected_dir, &args.inputdir, &args.expecteddir]
            .into_iter()
            .flatten()
        {
            if !dir.is_dir() {
                bail!(smsg::no_such_dir(dir.display().to_string()));
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
        let wait_timeout = match (args.wait_timeout, env("PGISOLATIONTIMEOUT")) {
            (Some(s), _) => deadline(s)?,
            (None, Some(v)) => deadline(
                v.trim()
                    .parse::<f64>()
                    .map_err(|_| smsg::bad_isolation_timeout(v.clone()))?,
            )?,
            (None, None) => deadline(if drop_in { ISOLATIONTESTER_DEADLINE } else { 10.0 })?,
        };
        // lab's own waits (a database made or dropped, the clean-up) need
        // not wait as long as isolationtester lets a step run.
        let own_waits = wait_timeout
            .min(Duration::from_secs(10))
            .max(args.wait_timeout.map_or(Duration::ZERO, Duration::from_secs_f64));
        let max_group = r.max_concurrent_tests.filter(|n| *n > 0);
        let groups = files::collect(&args.paths, &args.schedule, inputdir.as_deref(), max_group)?;
        let tests: Vec<&files::Test> = groups.iter().flatten().collect();
        if args.expected.is_some() && tests.len() != 1 {
            bail!(smsg::expected_one());
        }
        // pg_regress's layout: expected files in EXPECTEDDIR/expected.
        let layout = drop_in.then(|| regress::Layout::new(args.outputdir.as_deref().unwrap_or(Path::new("."))));
        let expected_dir = match (&args.expected_dir, &args.expecteddir, &inputdir) {
            (Some(d), _, _) => Some(d.clone()),
            (None, Some(d), _) | (None, None, Some(d)) => Some(d.join("expected")),
            _ => None,
        };
        if let Some(f) = &args.expected
            && !f.is_file()
        {
            bail!(smsg::no_such_file(f.display().to_string()));
        }
        let junit = junit_path(&args.junit)?;
        let html = html_path(&args.html)?;
        let mut specs = Vec::new();
        for t in &tests {
            // pg_regress fails a test whose spec isolationtester cannot
            // read, and goes on with the rest.
            let mut f = match files::load(&t.path) {
                // (In English, as isolationtester's output is.)
                Err(e) if layout.is_some() => files::SpecFile::broken(&t.path, crate::i18n::error_line(&e, Lang::En)),
                loaded => loaded?,
            };
            f.ignored = t.ignored;
            if let Some(e) = &args.expected {
                f.expected = vec![e.clone()];
            } else if let Some(dir) = &expected_dir {
                f.expected = files::expected_in(dir, &f.name);
                // Nothing to compare with is not a pass (pg_regress stops there too).
                if f.expected.is_empty() {
                    let path = dir.join(format!("{}.out", f.name));
                    bail!(smsg::no_expected(path.display().to_string(), f.name.clone()));
                }
            }
            specs.push(f);
        }
        let regress = args.expected.is_some() || expected_dir.is_some() || layout.is_some();
        let place = match (&args.dbname, args.in_database || args.use_existing) {
            (name, true) => Place::Given(name.clone()),
            (Some(name), false) => Place::Named(name.clone()),
            (None, false) => Place::Fresh,
        };
        if args.step && !std::io::stdin().is_terminal() {
            bail!(msg::step_needs_terminal());
        }
        Ok(SpecRun {
            common: Common {
                lang,
                target: regress_target(args, env, lang)?,
                wait_timeout: own_waits,
                step: args.step,
                predict: false,
                junit,
                html,
                baseline: baseline_of(
                    &args.baseline,
                    &specs.iter().map(|f| f.name.clone()).collect::<Vec<_>>(),
                    crate::baseline::Kind::Runs,
                )?,
            },
            format: args.format,
            explain: args.explain,
            layout,
            load: args.load,
            pooler: args.pooler,
            suite: SpecConfig {
                lang,
                specs,
                groups: groups.iter().map(|g| g.len()).collect(),
                place,
                clean: args.clean,
                repeat: args.repeat.unwrap_or(1),
                // A person steps through one spec at a time; --repeat runs
                // specs one after another, as PostgreSQL's schedule does
                // (specs side by side share the server: its statistics,
                // its CPU), unless --jobs says otherwise.
                jobs: match (args.step, args.repeat.is_some_and(|n| n > 1), args.jobs) {
                    (true, _, _) => 1,
                    (false, _, Some(j)) => j,
                    (false, true, None) => 1,
                    (false, false, None) => cores(),
                }
                // pg_regress's --max-connections: at most N tests at once.
                .min(r.max_connections.filter(|n| *n > 0).unwrap_or(usize::MAX)),
                groups_of: r.max_connections.filter(|n| *n > 0),
                database: crate::suite::NewDatabase {
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

/// What pg_regress 15 adds to its temporary instance's configuration (lab's
/// log_line_prefix stays: lab reads its server's log by it).
const REGRESS_TEMP_SETTINGS: &str = "log_autovacuum_min_duration = 0\nmax_prepared_transactions = 2\n";

/// isolationtester's deadline for a step, in seconds, when
/// PGISOLATIONTIMEOUT does not say.
const ISOLATIONTESTER_DEADLINE: f64 = 300.0;

/// The server of a `lab spec` run, pg_regress's options taken as it takes
/// them: --temp-instance starts lab's throwaway cluster whatever the
/// environment says (pg_regress unsets PGHOST and the rest), with the
/// --temp-config files appended to its configuration; --host, --port and
/// --user are PGHOST, PGPORT and PGUSER (pg_regress sets them); --bindir is
/// where the throwaway cluster's programs are.
fn regress_target(args: &SpecArgs, env: EnvLookup<'_>, lang: Lang) -> Result<crate::postgres::RunOn> {
    use crate::postgres::RunOn;
    use crate::suite::msg as smsg;
    let r = &args.regress;
    // pg_regress's temporary instance: its own settings, then the user's
    // (a later line wins). Read only for a cluster lab starts, as
    // pg_regress reads them only for its temporary instance.
    let conf = || -> Result<String> {
        let mut conf = String::new();
        if r.temp_instance.is_some() {
            conf.push_str(REGRESS_TEMP_SETTINGS);
        }
        for f in &r.temp_config {
            let text =
                std::fs::read_to_string(f).map_err(|e| smsg::unreadable(f.display().to_string(), e.to_string()))?;
            conf.push_str(&text);
            conf.push('\n');
        }
        Ok(conf)
    };
    // An empty --bindir is pg_regress's "the PATH's": lab's search.
    let pg_bin = args
        .target
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
    let url = args
        .target
        .database_url
        .clone()
        .filter(|u| env("DATABASE_URL").as_ref() != Some(u));
    if let Some(url_option) = url.is_some().then_some("--database-url") {
        if r.temp_instance.is_some() {
            bail!(smsg::server_twice(url_option, "--temp-instance"));
        }
        if let Some(o) = given.first() {
            bail!(smsg::server_twice(url_option, *o));
        }
    }
    if r.temp_instance.is_some() {
        if let Some(o) = given.iter().find(|o| **o != "--port") {
            bail!(smsg::server_twice("--temp-instance", *o));
        }
        return Ok(RunOn::Throwaway {
            pg_bin,
            conf: conf()?,
            tls: args.target.tls,
        });
    }
    let target = if given.is_empty() {
        crate::postgres::conninfo::resolve(args.target.database_url.as_deref(), pg_bin.as_deref(), env, lang)?
    } else {
        // pg_regress's options win over the environment, DATABASE_URL too.
        let set = |name: &str| {
            libpq
                .iter()
                .find(|(_, v, _)| *v == name)
                .and_then(|(_, _, v)| v.clone())
        };
        let overlay = |name: &str| match name {
            "DATABASE_URL" => None,
            "PGHOST" | "PGPORT" | "PGUSER" => set(name).or_else(|| env(name)),
            _ => env(name),
        };
        crate::postgres::conninfo::resolve(None, pg_bin.as_deref(), &overlay, lang)?
    };
    Ok(match target {
        RunOn::Throwaway { pg_bin, .. } => RunOn::Throwaway {
            pg_bin,
            conf: conf()?,
            tls: args.target.tls,
        },
        server => crate::postgres::conninfo::own_tls(server, args.target.tls)?,
    })
}

/// A checked `lab phenomena` command line.
pub struct PhenomenaRun {
    pub common: Common,
    pub format: Format,
    /// `--show ID`: that phenomenon's timelines at every level, too.
    pub show: bool,
    /// After the matrix, what each phenomenon is.
    pub explain: bool,
    pub matrix: MatrixConfig,
}

impl PhenomenaRun {
    pub fn new(args: &PhenomenaArgs, env: EnvLookup<'_>, lang: Lang) -> Result<PhenomenaRun> {
        let wait_timeout = deadline(args.wait_timeout)?;
        let files = lab_files(&args.lab_dir)?;
        let chosen = phenomena::chosen(&files, args.show.as_deref())?;
        let mut levels = args
            .level
            .iter()
            .map(|l| phenomena::level(l))
            .collect::<Result<Vec<_>>>()?;
        if levels.is_empty() {
            levels = (0..phenomena::LEVELS.len()).collect();
        }
        let junit = junit_path(&args.junit)?;
        let html = html_path(&args.html)?;
        Ok(PhenomenaRun {
            common: Common {
                lang,
                target: target_of(&args.target, env, lang)?,
                wait_timeout,
                step: false,
                predict: false,
                junit,
                html,
                baseline: baseline_of(
                    &args.baseline,
                    &chosen.iter().map(|p| format!("phenomena.{}", p.id)).collect::<Vec<_>>(),
                    crate::baseline::Kind::Phenomena,
                )?,
            },
            format: args.format,
            show: args.show.is_some(),
            explain: args.explain,
            matrix: MatrixConfig {
                lang,
                phenomena: chosen,
                levels,
                jobs: crate::engine::Jobs::of(args.jobs, cores() * 4, cores()),
                wait_timeout,
                all_interleavings: args.all_interleavings,
            },
        })
    }
}

/// A checked `lab explore` command line.
pub struct ExploreRun {
    pub common: Common,
    /// `--step --class N`: the class whose representative a person steps through.
    pub step_class: Option<usize>,
    pub format: SpecFormat,
    pub sample: Option<(usize, u64)>,
    pub explore: crate::explore::ExploreConfig,
}

impl ExploreRun {
    pub fn new(args: &ExploreArgs, env: EnvLookup<'_>, lang: Lang) -> Result<ExploreRun> {
        use crate::explore::{self, msg as emsg};
        let wait_timeout = deadline(args.wait_timeout)?;
        if args.jobs == Some(0) {
            bail!(emsg::jobs());
        }
        if args.sample == Some(0) {
            bail!(emsg::sample_zero());
        }
        let isolation = args.format == SpecFormat::Isolation;
        if isolation && !args.level.is_empty() {
            bail!(emsg::isolation_level());
        }
        let files = lab_files(&args.lab_dir)?;
        let found = explore_target(&args.target, &files)?;
        let mut levels: Vec<Option<usize>> = Vec::new();
        for l in &args.level {
            if l == "all" {
                levels.extend((0..phenomena::LEVELS.len()).map(Some));
            } else {
                levels.push(Some(phenomena::level(l)?));
            }
        }
        levels.dedup();
        if isolation {
            levels = vec![None];
        } else if levels.is_empty() {
            levels = (0..phenomena::LEVELS.len()).map(Some).collect();
        }
        let sample = args.sample.map(|n| (n, args.seed));
        let explore = explore::ExploreConfig::new(
            explore::Source {
                name: found.name,
                spec: found.spec,
                bookstore: found.bookstore,
                lab: found.lab,
                phenomenon: found.phenomenon,
            },
            explore::Choice {
                levels,
                all: args.all_permutations,
                sample,
                isolation,
                options: crate::suite::startup_options(
                    env("PGDATESTYLE").as_deref(),
                    env("PGTZ").as_deref(),
                    env("PGOPTIONS").as_deref(),
                    false,
                ),
            },
            crate::engine::Jobs::of(args.jobs, cores() * 2, cores()),
            wait_timeout,
            lang,
        )?;
        if args.step {
            if !std::io::stdin().is_terminal() {
                bail!(msg::step_needs_terminal());
            }
            if explore.levels.len() != 1 || args.class == 0 {
                bail!(emsg::step_one());
            }
        }
        Ok(ExploreRun {
            step_class: args.step.then_some(args.class),
            common: Common {
                lang,
                target: target_of(&args.target_args, env, lang)?,
                wait_timeout,
                step: args.step,
                predict: false,
                junit: junit_path(&args.junit)?,
                html: html_path(&args.html)?,
                baseline: None,
            },
            format: args.format,
            sample,
            explore,
        })
    }
}

/// A checked `lab hunt` command line: a run against a server, or a history checked alone.
pub enum Hunt {
    Run(Box<HuntRun>),
    Check(HuntCheck),
}

/// `lab hunt` against a server.
pub struct HuntRun {
    pub common: Common,
    pub levels: Vec<crate::hunt::check::Level>,
    pub shape: crate::hunt::workload::Shape,
    pub clients: usize,
    pub budget: crate::hunt::workload::Budget,
    pub seed: u64,
    pub max_connections: Option<usize>,
    pub history: Option<PathBuf>,
    pub options: crate::hunt::check::Options,
    /// Where reproducers go (none: `--no-specs`).
    pub specs: Option<PathBuf>,
    pub replays: usize,
    pub shrink: bool,
    pub format: HuntFormat,
}

/// `lab hunt --check FILE`.
pub struct HuntCheck {
    pub lang: Lang,
    pub file: PathBuf,
    pub level: Option<crate::hunt::check::Level>,
    pub options: crate::hunt::check::Options,
    pub format: HuntFormat,
    pub junit: Option<PathBuf>,
    pub html: Option<PathBuf>,
}

/// The throwaway cluster's max_connections less its reserved ones (cluster.rs sets 300).
const THROWAWAY_ROOM: usize = 296;

impl Hunt {
    pub fn new(args: &HuntArgs, env: EnvLookup<'_>, lang: Lang) -> Result<Hunt> {
        use crate::hunt::check::{Level, Options};
        use crate::hunt::msg as hmsg;
        use crate::hunt::workload::{Budget, Shape};
        let mut levels: Vec<Level> = Vec::new();
        for l in &args.level {
            if l == "all" {
                levels.extend([Level::ReadCommitted, Level::RepeatableRead, Level::Serializable]);
            } else {
                levels.push(Level::parse(l).ok_or_else(|| anyhow::anyhow!(hmsg::bad_level(l)))?);
            }
        }
        levels.sort();
        levels.dedup();
        let options = Options {
            realtime: args.realtime,
            sessions: args.session_order,
            all_cycles: args.all_cycles,
        };
        if let Some(file) = &args.check {
            if levels.len() > 1 {
                bail!(hmsg::check_one_level());
            }
            return Ok(Hunt::Check(HuntCheck {
                lang,
                file: file.clone(),
                level: levels.first().copied(),
                options,
                format: args.format,
                junit: junit_path(&args.junit)?,
                html: html_path(&args.html)?,
            }));
        }
        if levels.is_empty() {
            levels = vec![Level::ReadCommitted, Level::RepeatableRead, Level::Serializable];
        }
        for (n, flag) in [
            (args.keys, "--keys"),
            (args.clients, "--clients"),
            (args.ops, "--ops"),
            (args.replays, "--replays"),
        ] {
            if n == 0 {
                bail!(hmsg::at_least_one(flag));
            }
        }
        if args.keys > 1_000_000 || args.ops > 1000 || args.replays > 1000 {
            bail!(hmsg::too_large());
        }
        let budget = match (args.txns, args.seconds) {
            (Some(0), _) => bail!(hmsg::at_least_one("--txns")),
            (Some(n), _) => Budget::Txns(n),
            (None, Some(s)) if !(s.is_finite() && s > 0.0 && s <= 86_400.0) => bail!(hmsg::seconds()),
            (None, Some(s)) => Budget::Seconds(s),
            (None, None) => Budget::Txns(2000),
        };
        // The sessions, the control connection, and a replay's (a worker's control, a setup one and one per transaction of a cycle).
        let need = args.clients + 1;
        if let Some(max) = args.max_connections
            && need > max
        {
            bail!(hmsg::too_many_clients(args.clients, max));
        }
        let target = target_of(&args.target_args, env, lang)?;
        if matches!(target, crate::postgres::RunOn::Throwaway { .. }) && need > THROWAWAY_ROOM {
            bail!(hmsg::too_many_clients(args.clients, THROWAWAY_ROOM));
        }
        let wait_timeout = deadline(args.wait_timeout)?;
        Ok(Hunt::Run(Box::new(HuntRun {
            common: Common {
                lang,
                target,
                wait_timeout,
                step: false,
                predict: false,
                junit: junit_path(&args.junit)?,
                html: html_path(&args.html)?,
                baseline: None,
            },
            levels,
            shape: Shape {
                keys: args.keys,
                max_ops: args.ops,
                ..Shape::default()
            },
            clients: args.clients,
            budget,
            seed: args.seed,
            max_connections: args.max_connections,
            // Refused before anything runs, as --junit is (a missing directory, say).
            history: report_path(&args.history, crate::hunt::msg::could_not_write)?,
            options,
            specs: if args.no_specs {
                None
            } else {
                Some(specs_dir(&args.specs)?)
            },
            replays: args.replays,
            shrink: !args.no_shrink,
            format: args.format,
        })))
    }
}

/// What `lab explore` was pointed at, read and checked.
struct ExploreTarget {
    name: String,
    spec: crate::specfile::Spec,
    bookstore: bool,
    /// One of lab's own specs (a scenario's or a phenomenon's).
    lab: bool,
    phenomenon: bool,
}

/// A spec file, else a lab scenario's spec (lab/NAME.spec), else a
/// phenomenon (lab/phenomena/NAME.spec).
fn explore_target(name: &str, files: &LabFiles) -> Result<ExploreTarget> {
    let path = std::path::Path::new(name);
    if path.is_file() || name.ends_with(".spec") {
        let f = crate::suite::files::load(path)?;
        return Ok(ExploreTarget {
            name: f.name,
            spec: f.spec,
            bookstore: f.bookstore,
            lab: false,
            phenomenon: false,
        });
    }
    let scenarios: Vec<&str> = LabFiles::names()
        .filter_map(|n| n.strip_suffix(".spec"))
        .filter(|n| !n.contains('/'))
        .collect();
    let (file, phenomenon) = if scenarios.contains(&name) {
        (format!("{name}.spec"), false)
    } else if phenomena::ORDER.contains(&name) {
        (format!("phenomena/{name}.spec"), true)
    } else {
        bail!(crate::explore::msg::no_target(
            name,
            scenarios.join(", "),
            phenomena::ORDER.join(", ")
        ));
    };
    let f = crate::suite::files::parsed(std::path::Path::new(&file), &files.read(&file)?)?;
    Ok(ExploreTarget {
        name: name.to_string(),
        bookstore: f.bookstore,
        spec: f.spec,
        lab: true,
        phenomenon,
    })
}

/// `--wait-timeout` of `lab spec` and `lab phenomena`: 0.1 to 3600 seconds.
fn deadline(secs: f64) -> Result<Duration> {
    if !(secs.is_finite() && (0.1..=3600.0).contains(&secs)) {
        bail!(crate::catalogue::context::msg::between("--wait-timeout", 0.1, 3600));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// lab's files: edited copies from `--lab-dir` where given, else its own.
fn lab_files(dir: &Option<PathBuf>) -> Result<LabFiles> {
    match dir {
        Some(dir) => LabFiles::with_dir(dir),
        None => Ok(LabFiles::embedded()),
    }
}

/// The machine's cores (2 when it cannot tell).
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
}

fn select_variants(s: &'static Scenario, wanted: &[String]) -> Result<Vec<&'static Variant>> {
    if wanted.is_empty() {
        return Ok(s.variants.iter().collect());
    }
    let mut out: Vec<&'static Variant> = Vec::new();
    for w in wanted {
        let v = s
            .variant(w)
            .ctx(|| msg::unknown_variant(w, s.name, s.variant_names().join(", ")))?;
        if !out.iter().any(|x| std::ptr::eq(*x, v)) {
            out.push(v);
        }
    }
    // Variants run in their documented order whatever order they were named in.
    out.sort_by_key(|v| s.variants.iter().position(|x| std::ptr::eq(x, *v)));
    Ok(out)
}

/// Scenarios `lab all` runs at once by default: they mostly wait on the server.
pub const DEFAULT_JOBS: usize = 4;

/// The fewest connections a run can work with: the control connection and two sessions.
pub const MIN_CONNECTIONS: usize = 3;

/// The schema name goes into SQL and into connection options unquoted, so it
/// is held to plain lower-case identifiers.
pub fn check_schema(name: &str) -> Result<String> {
    let ok = !name.is_empty()
        && name.len() <= 40
        && name.starts_with(|c: char| c.is_ascii_lowercase() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !name.starts_with("pg_")
        && !matches!(name, "public" | "information_schema");
    if !ok {
        bail!(msg::schema(name));
    }
    Ok(name.to_string())
}

/// A `--junit` path, checked before the run (not found unwritable after it);
/// a file that was not there is not left behind.
pub fn junit_path(path: &Option<PathBuf>) -> Result<Option<PathBuf>> {
    report_path(path, crate::output::msg::junit)
}

/// A `--html` path, checked the same way.
pub fn html_path(path: &Option<PathBuf>) -> Result<Option<PathBuf>> {
    report_path(path, crate::render::html::msg::could_not_write)
}

/// `lab hunt --specs DIR`, checked before the run: a directory lab can
/// write in (made, then taken away again, where it was not there: it is
/// made for good only when a reproducer is written).
fn specs_dir(dir: &std::path::Path) -> Result<PathBuf> {
    let refused = |why: String| crate::hunt::msg::could_not_write(format!("{}: {why}", dir.display()));
    if dir.exists() && !dir.is_dir() {
        bail!(crate::hunt::msg::not_a_directory(dir.display().to_string()));
    }
    // The first of its directories that is not there yet: all that is made here.
    let first_missing = dir
        .ancestors()
        .take_while(|a| !a.as_os_str().is_empty() && !a.exists())
        .last();
    std::fs::create_dir_all(dir).map_err(|e| anyhow::anyhow!(refused(e.to_string())))?;
    let probe = dir.join(format!(".lab-write-check-{}", std::process::id()));
    let writable = std::fs::write(&probe, b"").and_then(|()| std::fs::remove_file(&probe));
    if let Some(made) = first_missing {
        let _ = std::fs::remove_dir_all(made);
    }
    writable.map_err(|e| anyhow::anyhow!(refused(e.to_string())))?;
    Ok(dir.to_path_buf())
}

fn report_path(path: &Option<PathBuf>, what: fn(String) -> crate::i18n::Text) -> Result<Option<PathBuf>> {
    if let Some(p) = path {
        let existed = p.exists();
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(p)
            .ctx(|| what(p.display().to_string()))?;
        if !existed {
            let _ = std::fs::remove_file(p);
        }
    }
    Ok(path.clone())
}

/// Where a scenario run goes: --database-url / DATABASE_URL, else a libpq
/// service and variables, else the throwaway cluster (`--pg-bin`).
pub fn target(args: &ConnArgs, env: EnvLookup<'_>, lang: Lang) -> Result<RunOn> {
    let t = crate::postgres::conninfo::resolve(args.database_url.as_deref(), args.local.pg_bin.as_deref(), env, lang)?;
    crate::postgres::conninfo::own_tls(t, args.local.tls)
}

/// The target of `lab spec` and `lab phenomena` (no lab schema of their own).
pub fn target_of(args: &crate::cli::TargetArgs, env: EnvLookup<'_>, lang: Lang) -> Result<RunOn> {
    let t = crate::postgres::conninfo::resolve(args.database_url.as_deref(), args.pg_bin.as_deref(), env, lang)?;
    crate::postgres::conninfo::own_tls(t, args.tls)
}

/// A checked `lab shell` run.
pub struct ShellRun {
    pub common: Common,
    pub schema: String,
    pub keep_schema: bool,
    pub shell: crate::shell::Config,
}

/// A checked `lab shell` command line.
pub fn shell(args: &crate::cli::ShellArgs, env: EnvLookup<'_>, lang: Lang) -> Result<ShellRun> {
    use crate::shell::msg as smsg;
    if args.spec.is_some() && args.sessions.is_some() {
        bail!(smsg::spec_sessions());
    }
    let spec = match &args.spec {
        Some(path) => {
            let f = crate::suite::files::load(path)?;
            Some(crate::shell::Loaded {
                spec: f.spec,
                bookstore: f.bookstore,
            })
        }
        None => None,
    };
    let sessions: Vec<String> = match &spec {
        Some(l) => l.spec.sessions.iter().map(|s| s.name.clone()).collect(),
        None => crate::shell::session_names(args.sessions.as_deref())?,
    };
    // The shell finds a session by its name in any case (`b: ...`, `\s b`),
    // and calls its own connection "setup".
    for (i, name) in sessions.iter().enumerate() {
        if let Some(other) = sessions[..i]
            .iter()
            .map(String::as_str)
            .chain(["setup"])
            .find(|o| o.eq_ignore_ascii_case(name))
        {
            bail!(smsg::spec_sessions_alike(other, name));
        }
    }
    Ok(ShellRun {
        common: Common {
            lang,
            target: target(&args.conn, env, lang)?,
            wait_timeout: std::time::Duration::from_secs(10),
            step: false,
            predict: false,
            junit: None,
            html: None,
            baseline: None,
        },
        schema: check_schema(&args.conn.local.schema)?,
        keep_schema: args.conn.keep_schema,
        shell: crate::shell::Config {
            sessions,
            spec,
            predict: args.predict,
            lang,
        },
    })
}

/// The throwaway cluster's options, for `lab server`.
pub fn local(args: &LocalArgs) -> Result<(Option<PathBuf>, String)> {
    Ok((args.pg_bin.clone(), check_schema(&args.schema)?))
}

pub(crate) mod msg {
    crate::messages! {
        prefix "cf";
        variant_with_all(given) {
            en: "unknown scenario in --variant '{given}': with `lab all` it is SCENARIO or SCENARIO/VARIANT (see lab list)",
            tr: "--variant '{given}' içinde bilinmeyen senaryo: `lab all` ile SENARYO ya da SENARYO/VARYANT olur (bkz. lab list)",
        }
        wait_timeout() {
            en: "--wait-timeout must be a number of seconds, more than 0 and at most 3600",
            tr: "--wait-timeout 0'dan büyük, en çok 3600 olan bir saniye değeri olmalı",
        }
        retry_base() {
            en: "--retry-base-ms must not exceed --retry-cap-ms, which must be at most 60000",
            tr: "--retry-base-ms, --retry-cap-ms'i aşmamalı; o da en fazla 60000 olabilir",
        }
        wait_vs_timeout() {
            en: "--wait-timeout must be at least three times --timeout-ms, so a timeout is seen before the deadline",
            tr: "--wait-timeout en az --timeout-ms'in üç katı olmalı, zaman aşımı son tarihten önce görülsün diye",
        }
        step_needs_terminal() {
            en: "--step waits for Enter before each step, so it needs a terminal on stdin; run it without --step or from a terminal",
            tr: "--step her adımdan önce Enter bekler, bu yüzden stdin'de bir terminal ister; --step olmadan ya da bir terminalden çalıştırın",
        }
        not_selected(variant, scenario, variants) {
            en: "variant '{variant}' of {scenario} is not one its options run (they run: {variants})",
            tr: "{scenario} senaryosunun '{variant}' varyantı seçeneklerinin çalıştırdıklarından değil (çalıştırdıkları: {variants})",
        }
        unknown_variant(variant, scenario, variants) {
            en: "unknown variant '{variant}' of {scenario} (its variants: {variants})",
            tr: "{scenario} senaryosunun bilinmeyen varyantı '{variant}' (varyantları: {variants})",
        }
        schema(name) {
            en: "--schema '{name}' is not usable: use a new lower-case name of letters, digits and _ (not public, information_schema or pg_*)",
            tr: "--schema '{name}' kullanılamaz: harf, rakam ve _ içeren yeni, küçük harfli bir ad kullanın (public, information_schema ya da pg_* değil)",
        }
        too_few_connections(n, min) {
            en: "--max-connections {n} is too few: a run needs at least {min} (the control connection and two sessions)",
            tr: "--max-connections {n} çok az: bir çalıştırma en az {min} bağlantı ister (kontrol bağlantısı ve iki oturum)",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn conn(url: Option<&str>) -> ConnArgs {
        ConnArgs {
            database_url: url.map(str::to_string),
            local: LocalArgs {
                pg_bin: None,
                schema: "lab".into(),
                tls: false,
            },
            keep_schema: false,
        }
    }

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        move |k| map.get(k).cloned()
    }

    fn server(t: RunOn) -> crate::postgres::ConnInfo {
        match t {
            RunOn::Server(c, _) => *c,
            RunOn::Throwaway { .. } => panic!("expected a server target"),
        }
    }

    #[test]
    fn url_wins_and_is_parsed() {
        let env = env_of(&[("PGHOST", "elsewhere")]);
        let c = server(target(&conn(Some("postgres://u:secret@db.example:6543/shop")), &env, Lang::En).unwrap());
        assert_eq!(c.get_user(), Some("u"));
        assert_eq!(c.get_password(), Some(&b"secret"[..]));
        assert_eq!(c.get_dbname(), Some("shop"));
        assert_eq!(c.get_ports(), &[6543]);
        assert_eq!(c.get_connect_timeout(), Some(&Duration::from_secs(5)));
    }

    #[test]
    fn key_value_strings_work_and_pgpassword_fills_in() {
        let env = env_of(&[("PGPASSWORD", "pw")]);
        let c = server(
            target(
                &conn(Some("host=127.0.0.1 port=5433 user=bob dbname=x")),
                &env,
                Lang::En,
            )
            .unwrap(),
        );
        assert_eq!(c.get_user(), Some("bob"));
        assert_eq!(c.get_password(), Some(&b"pw"[..]));
    }

    #[test]
    fn tls_that_cannot_be_verified_is_refused_by_name_without_the_secret() {
        for (url, env, says) in [
            (
                "postgres://u:hunter2@h/db?sslmode=verify-full",
                vec![],
                "sslmode in --database-url=verify-full: root certificate file",
            ),
            (
                "host=h password=hunter2 sslmode=verify-ca",
                vec![],
                "sslmode in --database-url=verify-ca: root certificate file",
            ),
            (
                "postgres://u:hunter2@h/db",
                vec![("PGSSLMODE", "verify-full")],
                "PGSSLMODE=verify-full: root certificate file",
            ),
        ] {
            let err = target(&conn(Some(url)), &env_of(&env), Lang::En).unwrap_err();
            let err = crate::i18n::error_line(&err, Lang::En);
            assert!(err.starts_with(says), "{url}: {err}");
            assert!(!err.contains("hunter2"), "{err}");
        }
        for url in [
            "postgres://h/db?sslmode=disable",
            "postgres://h/db?sslmode=prefer",
            "postgres://h/db?sslmode=require",
        ] {
            assert!(target(&conn(Some(url)), &env_of(&[]), Lang::En).is_ok(), "{url}");
        }
    }

    #[test]
    fn malformed_url_is_an_error_without_the_secret() {
        let err = target(
            &conn(Some("postgres://u:hunter2@host:notaport/db")),
            &env_of(&[]),
            Lang::En,
        )
        .unwrap_err();
        let err = crate::i18n::error_line(&err, Lang::En);
        // What is at fault is named (the part, never its value).
        assert!(err.starts_with("port in --database-url: invalid value"), "{err}");
        assert!(!err.contains("hunter2"), "{err}");
        for (url, says) in [
            ("postgrs://u:hunter2@h/db", "its scheme is 'postgrs'"),
            (
                "postgres://u:hunter2@h/db?sslmode=hunter2",
                "sslmode in --database-url: invalid value",
            ),
            (
                "host=h password=hunter2 bogus=1",
                "bogus in --database-url is not a libpq connection option",
            ),
        ] {
            let err = target(&conn(Some(url)), &env_of(&[]), Lang::En).unwrap_err();
            let err = crate::i18n::error_line(&err, Lang::En);
            assert!(err.contains(says), "{url}: {err}");
            assert!(!err.contains("hunter2"), "{err}");
        }
    }

    #[test]
    fn libpq_variables_select_a_server() {
        let env = env_of(&[
            ("PGHOST", "10.1.2.3"),
            ("PGPORT", "5544"),
            ("PGUSER", "app"),
            ("PGDATABASE", "shop"),
        ]);
        let c = server(target(&conn(None), &env, Lang::En).unwrap());
        assert_eq!(c.get_ports(), &[5544]);
        assert_eq!(c.get_user(), Some("app"));
        assert_eq!(c.get_dbname(), Some("shop"));
        let bad = target(&conn(None), &env_of(&[("PGPORT", "x")]), Lang::En).unwrap_err();
        assert!(crate::i18n::error_line(&bad, Lang::En).contains("PGPORT"));
    }

    #[test]
    fn nothing_set_means_the_throwaway_cluster() {
        // PGPASSWORD alone names no server.
        let t = target(&conn(None), &env_of(&[("PGPASSWORD", "pw")]), Lang::En).unwrap();
        assert!(matches!(t, RunOn::Throwaway { pg_bin: None, .. }));
        // Set but empty is an error: an unset CI secret must not pass against the wrong server.
        let blank = target(&conn(Some("  ")), &env_of(&[]), Lang::En).unwrap_err();
        assert!(crate::i18n::error_line(&blank, Lang::En).starts_with("--database-url is set but empty"));
        let unset_secret = target(&conn(None), &env_of(&[("DATABASE_URL", "")]), Lang::En).unwrap_err();
        assert!(crate::i18n::error_line(&unset_secret, Lang::En).starts_with("DATABASE_URL is set but empty"));
    }

    #[test]
    fn schema_names_are_checked() {
        assert!(check_schema("lab").is_ok());
        assert!(check_schema("lab_room_2").is_ok());
        for bad in [
            "",
            "Lab",
            "public",
            "pg_lab",
            "lab-1",
            "1lab",
            "a;drop",
            &"x".repeat(41),
        ] {
            assert!(check_schema(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn variants_are_checked_and_kept_in_documented_order() {
        let info = catalogue::find("lost-update").unwrap();
        let v = select_variants(info, &["atomic-update".into(), "read-committed".into()]).unwrap();
        let names: Vec<&str> = v.iter().map(|v| v.name).collect();
        assert_eq!(names, vec!["read-committed", "atomic-update"]);
        let err = crate::i18n::error_line(&select_variants(info, &["nope".into()]).unwrap_err(), Lang::En);
        assert!(
            err.contains("unknown variant 'nope'") && err.contains("read-committed"),
            "{err}"
        );
        assert_eq!(select_variants(info, &[]).unwrap().len(), info.variants.len());
    }
}
