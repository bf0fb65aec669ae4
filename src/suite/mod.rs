//! `lab spec`: runs isolationtester spec files, each in a fresh database
//! of its own, several at once, on lab's engine (the same scheduler as the
//! scenarios). Output: lab's timeline per permutation, JSON, JUnit, or
//! isolationtester's own transcript (`--format isolation`), which can be
//! compared with expected files as pg_regress does.
pub mod files;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use tokio::sync::Semaphore;
use tokio_postgres::Config;

use crate::cli::{SpecArgs, SpecFormat};
use crate::engine::schedule::{self, Run};
use crate::engine::transcript::{Stream, Transcript};
use crate::engine::{Env, Opener, Recorder, Stepper};
use crate::i18n::{Context, Lang, Text};
use crate::render::{self, Style};
use crate::report::{AllReport, Check, ScenarioReport, StepResult, VariantReport, round_ms};
use crate::target::connect;
use crate::{Exit, config};
use files::SpecFile;

/// A checked `lab spec` command line.
pub struct SpecConfig {
    pub lang: Lang,
    pub specs: Vec<SpecFile>,
    pub format: SpecFormat,
    pub jobs: usize,
    pub junit: Option<PathBuf>,
    pub html: Option<PathBuf>,
    pub wait_timeout: Duration,
    pub explain: bool,
    pub step: bool,
    pub target: config::Target,
    /// Compared with expected files: sessions get pg_regress's settings.
    pub regress: bool,
    /// `PGAPPNAME`, `PGOPTIONS`, `PGDATESTYLE`, `PGTZ` as the environment has them.
    pub appname: Option<String>,
    pub options: Option<String>,
    pub datestyle: Option<String>,
    pub tz: Option<String>,
}

impl SpecConfig {
    pub fn new(args: &SpecArgs, env: config::EnvLookup<'_>, lang: Lang) -> Result<SpecConfig> {
        if !(args.wait_timeout.is_finite() && (0.1..=3600.0).contains(&args.wait_timeout)) {
            bail!(crate::catalogue::cx::msg::between("--wait-timeout", 0.1, 3600));
        }
        if args.jobs == Some(0) {
            bail!(msg::jobs());
        }
        let paths = files::collect(&args.paths, &args.schedule)?;
        if args.expected.is_some() && paths.len() != 1 {
            bail!(msg::expected_one());
        }
        if let Some(dir) = &args.expected_dir
            && !dir.is_dir()
        {
            bail!(msg::no_such_dir(dir.display().to_string()));
        }
        if let Some(f) = &args.expected
            && !f.is_file()
        {
            bail!(msg::no_such_file(f.display().to_string()));
        }
        let junit = config::junit_path(&args.junit)?;
        let html = config::html_path(&args.html)?;
        let mut specs = Vec::new();
        for p in &paths {
            let mut f = files::load(p)?;
            if let Some(e) = &args.expected {
                f.expected = vec![e.clone()];
            } else if let Some(dir) = &args.expected_dir {
                f.expected = files::expected_in(dir, &f.name);
            }
            specs.push(f);
        }
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        let regress = args.expected.is_some() || args.expected_dir.is_some();
        if args.step && !std::io::IsTerminal::is_terminal(&std::io::stdin()) {
            bail!(crate::config::msg::step_needs_terminal());
        }
        Ok(SpecConfig {
            lang,
            specs,
            format: args.format,
            // A person steps through one spec at a time.
            jobs: if args.step { 1 } else { args.jobs.unwrap_or(cores) },
            junit,
            html,
            wait_timeout: Duration::from_secs_f64(args.wait_timeout),
            explain: args.explain,
            step: args.step,
            target: config::target_of(&args.target, env)?,
            regress,
            appname: env("PGAPPNAME"),
            options: env("PGOPTIONS"),
            datestyle: env("PGDATESTYLE").or_else(|| regress.then(|| "Postgres, MDY".into())),
            tz: env("PGTZ").or_else(|| regress.then(|| "America/Los_Angeles".into())),
        })
    }

    /// The `options` startup parameter every session gets, as libpq builds
    /// it from PGDATESTYLE, PGTZ and PGOPTIONS (pg_regress adds intervalstyle).
    fn startup_options(&self) -> Option<String> {
        let escape = |v: &str| v.replace('\\', "\\\\").replace(' ', "\\ ");
        let mut parts = Vec::new();
        if let Some(d) = &self.datestyle {
            parts.push(format!("-c datestyle={}", escape(d)));
        }
        if let Some(tz) = &self.tz {
            parts.push(format!("-c timezone={}", escape(tz)));
        }
        if let Some(o) = self.options.as_deref().filter(|o| !o.trim().is_empty()) {
            parts.push(o.trim().to_string());
        }
        if self.regress {
            parts.push("-c intervalstyle=postgres_verbose".into());
        }
        (!parts.is_empty()).then(|| parts.join(" "))
    }
}

/// What one spec produced.
struct Outcome {
    report: ScenarioReport,
    transcript: Arc<Transcript>,
    /// The unified diff against the closest expected file, when none matched.
    diff: Option<String>,
}

pub async fn run(cfg: SpecConfig) -> Result<Exit> {
    let began = Instant::now();
    let style = Style::for_stdout(cfg.lang, cfg.explain);
    let mut signals = crate::Signals::new()?;
    let (cluster, pg) = crate::start_target(&cfg.target).await?;
    // (Each spec runs in a database of its own, which a standby cannot create.)
    let (control, server) = tokio::select! {
        r = connect::control(&cfg.target, &pg, "lab:spec:control") => r?,
        _ = signals.recv() => return Ok(crate::interrupted(cluster, cfg.lang)),
    };
    let cfg = Arc::new(cfg);
    let ctx = Arc::new(Shared {
        pg,
        control,
        server,
        created: std::sync::Mutex::default(),
        pool: std::sync::Mutex::default(),
        made: Default::default(),
        stepper: cfg.step.then(|| Arc::new(Stepper::new(cfg.lang))),
    });
    // Each spec's outcome as it finishes: a run stopped part-way keeps them.
    let progress = Arc::new(std::sync::Mutex::new(
        cfg.specs.iter().map(|_| Progress::Waiting).collect::<Vec<_>>(),
    ));
    let outcome = tokio::select! {
        r = run_all(&cfg, &ctx, &style, &progress) => Some(r),
        _ = signals.recv() => None,
    };
    // Where each spec was when the run ended (specs cut short may still
    // finish in the background: they are not reported as finished).
    let progress = std::mem::take(&mut *progress.lock().unwrap());
    // Whatever happened, the databases lab made go.
    let created: Vec<String> = ctx.created.lock().unwrap().drain(..).collect();
    for db in created {
        let _ = tokio::time::timeout(cfg.wait_timeout, drop_database(&ctx.control, &db)).await;
    }
    // Where it stopped and why: an error entry on the spec that failed (or,
    // interrupted, on the first that was running).
    let (stop, error) = match outcome {
        Some(Ok(())) => (None, None),
        Some(Err((i, e))) => (
            Some((i, crate::i18n::error_line(&e, cfg.lang), Exit::CouldNotRun)),
            Some(e),
        ),
        None => {
            let running = progress
                .iter()
                .position(|p| !matches!(p, Progress::Done(_)))
                .unwrap_or(0);
            let message = crate::i18n::ui::interrupted().render(cfg.lang);
            (Some((running, message, Exit::Interrupted)), None)
        }
    };
    let mut outcomes = Vec::new();
    let mut reports: Vec<ScenarioReport> = Vec::new();
    for (i, p) in progress.into_iter().enumerate() {
        match p {
            Progress::Done(o) => {
                reports.push(o.report.clone());
                outcomes.push(*o);
            }
            _ if stop.as_ref().is_some_and(|(at, _, _)| *at == i) => {
                let (_, message, exit) = stop.as_ref().expect("stopped");
                let name = cfg.specs[i].name.clone();
                reports.push(ScenarioReport {
                    scenario: name.clone(),
                    server_version: ctx.server.version.clone(),
                    as_expected: false,
                    elapsed_ms: 0.0,
                    variants: Vec::new(),
                    error: Some(crate::report::RunError {
                        variant: name,
                        message: message.clone(),
                        exit_code: *exit as u8,
                    }),
                });
            }
            // Never started, or cut short next to the one that stopped the run.
            _ => {}
        }
    }
    let stop = stop.map(|(_, message, exit)| (message, exit));
    drop(cluster);
    if let Some(path) = &cfg.junit {
        std::fs::write(path, render::junit(&reports)).ctx(|| crate::msg::junit(path.display().to_string()))?;
    }
    if let Some(path) = &cfg.html {
        let page = render::html::page(&reports, render::html::Kind::Runs, &style);
        std::fs::write(path, page).ctx(|| render::html::msg::could_not_write(path.display().to_string()))?;
    }
    let as_expected = reports.iter().all(|r| r.as_expected);
    let all = AllReport {
        server_version: ctx.server.version.clone(),
        as_expected,
        elapsed_ms: round_ms(began.elapsed().as_secs_f64() * 1000.0),
        scenarios: reports,
    };
    match cfg.format {
        SpecFormat::Json => crate::out(&render::json(&all)?)?,
        SpecFormat::Table if outcomes.len() > 1 => crate::out(&render::all_summary(&all, &style))?,
        _ => {}
    }
    if cfg.regress && cfg.format != SpecFormat::Json {
        let matched = outcomes.iter().filter(|o| o.diff.is_none()).count();
        eprintln!(
            "{}",
            msg::matched(matched, outcomes.len(), format!("{:.1}", began.elapsed().as_secs_f64())).render(cfg.lang)
        );
    }
    if let Some((message, exit)) = stop {
        // The same line on stderr as the report's error entry.
        match &error {
            Some(e) => crate::print_error(e, cfg.lang),
            None => eprintln!("{message}"),
        }
        return Ok(exit);
    }
    Ok(if as_expected { Exit::Ok } else { Exit::Mismatch })
}

/// What the specs of a run share.
struct Shared {
    pg: Config,
    control: tokio_postgres::Client,
    server: connect::ServerInfo,
    /// Databases made and not yet dropped.
    created: std::sync::Mutex<Vec<String>>,
    /// Databases as fresh as when they were made, for the next spec.
    pool: std::sync::Mutex<Vec<Db>>,
    made: std::sync::atomic::AtomicUsize,
    stepper: Option<Arc<Stepper>>,
}

/// Runs the specs, `jobs` at a time; each is printed as soon as it and every
/// spec before it are done, so the output keeps the specs' order.
/// Where each spec is: not started, running, or done with its outcome.
enum Progress {
    Waiting,
    Running,
    Done(Box<Outcome>),
}

/// Runs the specs, `jobs` at once, started in their order; each one's
/// outcome is kept as it finishes and shown in order. On an error, the spec
/// that failed is returned with it.
async fn run_all(
    cfg: &Arc<SpecConfig>,
    ctx: &Arc<Shared>,
    style: &Style,
    progress: &Arc<std::sync::Mutex<Vec<Progress>>>,
) -> std::result::Result<(), (usize, anyhow::Error)> {
    let permits = Arc::new(Semaphore::new(cfg.jobs));
    // Specs start in order (--jobs 1 runs them one by one, as listed).
    let (turn, _) = tokio::sync::watch::channel(0usize);
    let turn = Arc::new(turn);
    let mut tasks = Vec::new();
    for i in 0..cfg.specs.len() {
        let (cfg, ctx, permits, turn, progress) = (
            cfg.clone(),
            ctx.clone(),
            permits.clone(),
            turn.clone(),
            progress.clone(),
        );
        tasks.push(tokio::spawn(async move {
            let _ = turn.subscribe().wait_for(|n| *n == i).await;
            let _permit = permits.acquire_owned().await.expect("never closed");
            // (After a stop the run has taken the list: a spec still going is not recorded.)
            if let Some(p) = progress.lock().unwrap().get_mut(i) {
                *p = Progress::Running;
            }
            turn.send_modify(|n| *n += 1);
            let o = run_spec(&cfg, &ctx, i).await?;
            if let Some(p) = progress.lock().unwrap().get_mut(i) {
                *p = Progress::Done(Box::new(o));
            }
            Ok::<_, anyhow::Error>(())
        }));
    }
    for (i, t) in tasks.into_iter().enumerate() {
        t.await
            .map_err(|e| anyhow::anyhow!("{e}"))
            .and_then(|r| r)
            .map_err(|e| (i, e))?;
        if let Some(Progress::Done(o)) = progress.lock().unwrap().get(i) {
            show(cfg, o, style).map_err(|e| (i, e))?;
        }
    }
    Ok(())
}

fn show(cfg: &SpecConfig, o: &Outcome, style: &Style) -> Result<()> {
    match cfg.format {
        SpecFormat::Isolation => {
            // stdout and stderr as isolationtester writes them.
            for (stream, text) in o.transcript.pieces() {
                match stream {
                    Stream::Out => crate::out(&text)?,
                    Stream::Err => eprint!("{text}"),
                }
            }
            if let Some(d) = &o.diff {
                eprint!("{d}");
            }
        }
        SpecFormat::Table => {
            crate::out(&render::scenario(&o.report, style))?;
            if let Some(d) = &o.diff {
                crate::out(d)?;
            }
            crate::out("\n")?;
        }
        SpecFormat::Json => {}
    }
    Ok(())
}

/// Drops a database lab made. Plainly first: the server then stops its
/// autovacuum workers there itself, which FORCE, for a role that is not a
/// superuser, may not; FORCE when sessions are still connected (a run cut short).
async fn drop_database(control: &tokio_postgres::Client, db: &str) -> Result<()> {
    let q = quote_ident(db);
    match control.batch_execute(&format!("DROP DATABASE IF EXISTS {q}")).await {
        Ok(()) => Ok(()),
        Err(e) if e.code() == Some(&tokio_postgres::error::SqlState::OBJECT_IN_USE) => control
            .batch_execute(&format!("DROP DATABASE IF EXISTS {q} WITH (FORCE)"))
            .await
            .map_err(|e| connect::sql_error(e, msg::drop_db(db))),
        Err(e) => Err(connect::sql_error(e, msg::drop_db(db))),
    }
}

fn quote_ident(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\"\""))
}

/// The schema lab's own specs run against (`# uses: bookstore`).
const BOOKSTORE: &str = "lab";

/// A database lab made for specs, and what it held when it was made.
struct Db {
    name: String,
    /// [`FRESH`] read right after it was created.
    baseline: Option<String>,
}

/// What a database holds beyond what template0 gave it: any object with an
/// OID of its own (at or above FirstNormalObjectId; the temporary schemas
/// sessions leave aside), the public schema's owner and rights, the
/// database's own settings and rights, prepared transactions. A spec that
/// cleaned up after itself leaves the same answer.
const FRESH: &str = "SELECT concat_ws(' ', \
       (SELECT count(*) FROM pg_class WHERE oid >= 16384), \
       (SELECT count(*) FROM pg_type WHERE oid >= 16384), \
       (SELECT count(*) FROM pg_proc WHERE oid >= 16384), \
       (SELECT count(*) FROM pg_namespace WHERE oid >= 16384 \
           AND nspname NOT LIKE 'pg\\_temp\\_%' AND nspname NOT LIKE 'pg\\_toast\\_temp\\_%'), \
       (SELECT count(*) FROM pg_operator WHERE oid >= 16384), \
       (SELECT count(*) FROM pg_extension), \
       (SELECT count(*) FROM pg_default_acl), \
       (SELECT count(*) FROM pg_event_trigger), \
       (SELECT count(*) FROM pg_publication), \
       (SELECT count(*) FROM pg_largeobject_metadata), \
       (SELECT count(*) FROM pg_collation WHERE oid >= 16384), \
       (SELECT count(*) FROM pg_ts_config WHERE oid >= 16384), \
       (SELECT nspowner::text || coalesce(nspacl::text, '') FROM pg_namespace WHERE nspname = 'public'), \
       (SELECT datdba::text || datconnlimit || datallowconn || coalesce(datacl::text, '') \
          FROM pg_database WHERE datname = current_database()), \
       (SELECT string_agg(s.setrole::text || array_to_string(s.setconfig, ','), ';' ORDER BY s.setrole) \
          FROM pg_db_role_setting s JOIN pg_database d ON d.oid = s.setdatabase \
         WHERE d.datname = current_database()), \
       (SELECT count(*) FROM pg_prepared_xacts WHERE database = current_database()))";

async fn fingerprint(client: &tokio_postgres::Client) -> Option<String> {
    client.query_one(FRESH, &[]).await.ok().map(|r| r.get(0))
}

impl Shared {
    /// A fresh database for a spec: one a finished spec left as it was
    /// made, else a new one.
    async fn database(&self, cfg: &SpecConfig) -> Result<Db> {
        if let Some(db) = self.pool.lock().unwrap().pop() {
            return Ok(db);
        }
        let n = self.made.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let name = format!("lab_spec_{}_{n}", std::process::id());
        self.created.lock().unwrap().push(name.clone());
        let q = quote_ident(&name);
        // As pg_regress makes its database (the settings any role may set).
        let sql = [
            format!("CREATE DATABASE {q} TEMPLATE template0"),
            format!(
                "ALTER DATABASE {q} SET lc_monetary TO 'C'; ALTER DATABASE {q} SET lc_numeric TO 'C'; \
                 ALTER DATABASE {q} SET lc_time TO 'C'; ALTER DATABASE {q} SET bytea_output TO 'hex'; \
                 ALTER DATABASE {q} SET timezone_abbreviations TO 'Default'"
            ),
        ];
        for sql in sql {
            tokio::time::timeout(cfg.wait_timeout, self.control.batch_execute(&sql))
                .await
                .map_err(|_| msg::create_db(&name))?
                .map_err(|e| connect::sql_error(e, msg::create_db(&name)))?;
        }
        Ok(Db { name, baseline: None })
    }

    /// A spec is done with its database: kept for the next spec if it is as
    /// it was made, dropped if not.
    async fn give_back(&self, db: Db, now: Option<String>) -> Result<()> {
        if now.is_some() && now == db.baseline {
            self.pool.lock().unwrap().push(db);
            return Ok(());
        }
        let dropped = drop_database(&self.control, &db.name).await;
        self.created.lock().unwrap().retain(|d| d != &db.name);
        dropped
    }
}

/// One spec, start to end, in a fresh database.
async fn run_spec(cfg: &SpecConfig, ctx: &Shared, i: usize) -> Result<Outcome> {
    let file = &cfg.specs[i];
    let began = Instant::now();
    let mut db = ctx.database(cfg).await?;
    let mut pg = ctx.pg.clone();
    pg.dbname(&db.name);
    let options = [
        cfg.startup_options(),
        file.bookstore.then(|| format!("-c search_path={BOOKSTORE}")),
    ];
    let options: Vec<String> = options.into_iter().flatten().collect();
    if !options.is_empty() {
        pg.options(options.join(" "));
    }
    let result = run_in(cfg, ctx, file, pg, &mut db).await;
    let now = match &result {
        Ok((_, _, now)) => now.clone(),
        Err(_) => None,
    };
    let given = ctx.give_back(db, now).await;
    let (variants, transcript, _) = result?;
    given?;
    let diff = compare(file, &transcript.combined());
    let mut variants = variants;
    if !file.expected.is_empty() {
        let shown = file.expected[0].display().to_string();
        let ok = diff.is_none();
        variants.push(VariantReport {
            name: msg::expected_variant().render(Lang::En),
            as_expected: ok,
            anomaly: false,
            expected: msg::same_output(shown.clone()),
            explain: msg::same_output(shown.clone()),
            observed: vec![if ok { msg::same() } else { msg::differs() }],
            checks: vec![check(ok, msg::same_output(shown))],
            elapsed_ms: 0.0,
            sqlstates: Vec::new(),
            metrics: Default::default(),
            timeline: Vec::new(),
            skipped: None,
            pooler_differs: None,
            notes: Vec::new(),
            evidence: Vec::new(),
            spans: Default::default(),
        });
    }
    Ok(Outcome {
        report: ScenarioReport {
            scenario: file.name.clone(),
            server_version: ctx.server.version.clone(),
            as_expected: variants.iter().all(|v| v.as_expected),
            elapsed_ms: round_ms(began.elapsed().as_secs_f64() * 1000.0),
            variants,
            error: None,
        },
        transcript,
        diff,
    })
}

fn check(ok: bool, text: Text) -> Check {
    Check {
        id: text.key().to_string(),
        ok,
        text,
    }
}

/// The spec's sessions stay connected for all its permutations, as
/// isolationtester keeps them.
async fn run_in(
    cfg: &SpecConfig,
    ctx: &Shared,
    file: &SpecFile,
    pg: Config,
    db: &mut Db,
) -> Result<(Vec<VariantReport>, Arc<Transcript>, Option<String>)> {
    let spec = &file.spec;
    let transcript = Arc::new(Transcript::default());
    for name in &file.unused {
        transcript.err(format!("unused step name: {name}\n"));
    }
    transcript.out(format!("Parsed test spec with {} sessions\n", spec.sessions.len()));
    let recorder = Recorder::default();
    // isolationtester appends /<session> to the application_name;
    // pg_isolation_regress sets it to isolation/<test> for each test.
    let app = match (&cfg.appname, cfg.regress) {
        (Some(a), _) => format!("{a}/"),
        (None, true) => format!("isolation/{}/", file.name),
        (None, false) => format!("lab:spec:{}/", file.name),
    };
    let opener = Opener {
        pg: pg.clone(),
        schema: None,
        settings: String::new(),
        app: app.clone(),
        label: file.name.clone(),
        recorder: recorder.clone(),
        deadline: cfg.wait_timeout,
        stepper: ctx.stepper.clone(),
        opened: Arc::default(),
        transcript: Some(transcript.clone()),
        max_sessions: None,
        pooled: false,
    };
    if let Some(st) = &ctx.stepper {
        st.reset(whys(file, cfg.lang));
        recorder.set_live(st.live());
    }
    let control = connect::connect(&pg, &format!("{app}control connection"), None, None)
        .await?
        .client;
    if db.baseline.is_none() {
        db.baseline = fingerprint(&control).await;
    }
    if file.bookstore {
        let files = crate::files::LabFiles::embedded();
        connect::rebuild_schema(
            &control,
            BOOKSTORE,
            &files.read("schema.sql")?,
            &files.read("seed.sql")?,
        )
        .await?;
    }
    let env = Env {
        pg,
        schema: String::new(),
        run: String::new(),
        control,
        server: ctx.server.clone(),
        wait_timeout: cfg.wait_timeout,
        max_connections: None,
        settings: String::new(),
        deadlock_timeout: Duration::from_secs(1),
        throwaway: None,
        pooler: None,
        stepper: ctx.stepper.clone(),
    };
    let names: Vec<&str> = spec.sessions.iter().map(|s| s.name.as_str()).collect();
    let sessions = opener.open_all(&names).await?;
    let setup = opener.open_quiet("control connection").await?;
    let plans = if spec.permutations.is_empty() {
        spec.all_permutations()
    } else {
        spec.permutations
            .iter()
            .map(|p| spec.plan(p))
            .collect::<Result<_, _>>()
            .map_err(|e| msg::invalid(file.path.display().to_string(), e.to_string()))?
    };
    let mut variants = Vec::new();
    for (k, plan) in plans.iter().enumerate() {
        let names: Vec<&str> = plan.iter().map(|p| spec.step(p.id).name.as_str()).collect();
        transcript.out(format!("\nstarting permutation: {}\n", names.join(" ")));
        recorder.restart();
        let began = Instant::now();
        let outcome = schedule::run(Run {
            env: &env,
            spec,
            plan,
            sessions: &sessions,
            setup: &setup,
            params: &[],
            expect: &[],
            probes: &[],
            recorder: &recorder,
            transcript: Some(&transcript),
            patient: true,
        })
        .await;
        let timeline = recorder.take();
        let notes = spec.permutations.get(k).map(|p| p.notes.clone()).unwrap_or_default();
        let (checks, observed, stop) = match &outcome {
            Ok(o) => {
                let cancelled: Vec<&str> = o
                    .steps
                    .iter()
                    .filter(|s| s.cancelled_by_lab)
                    .map(|s| s.name.as_str())
                    .collect();
                let waited = o.steps.iter().filter(|s| s.waited()).count();
                let errors: Vec<&str> = o.sqlstates();
                let mut observed = vec![msg::ran(o.steps.len(), waited)];
                if !errors.is_empty() {
                    observed.push(msg::errors(errors.join(", ")));
                }
                if !cancelled.is_empty() {
                    observed.push(msg::cancelled(cancelled.join(", ")));
                }
                (vec![check(cancelled.is_empty(), msg::runs_to_end())], observed, false)
            }
            Err(e) => {
                if !transcript.ended() {
                    // Where isolationtester would go on waiting, or exit without a word.
                    transcript.fatal(format!("{}\n", crate::i18n::error_line(e, Lang::En)));
                }
                (
                    vec![check(false, msg::runs_to_end())],
                    vec![msg::stopped(crate::i18n::error_line(e, cfg.lang))],
                    true,
                )
            }
        };
        let sqlstates = timeline
            .iter()
            .filter(|e| e.result == StepResult::Error)
            .filter_map(|e| e.sqlstate.clone())
            .collect();
        // Compared with an expected file, the file decides (it may show a
        // cancelled step, as PostgreSQL's own do); the observation stays.
        let (checks, expected) = if file.expected.is_empty() {
            (checks, msg::runs_to_end())
        } else {
            (Vec::new(), msg::compared())
        };
        variants.push(VariantReport {
            name: names.join(" "),
            as_expected: checks.iter().all(|c| c.ok),
            anomaly: false,
            expected,
            explain: msg::comments(comments(&file.spec.header, &notes)),
            observed,
            checks,
            elapsed_ms: round_ms(began.elapsed().as_secs_f64() * 1000.0),
            sqlstates,
            metrics: Default::default(),
            timeline,
            skipped: None,
            pooler_differs: None,
            notes: Vec::new(),
            evidence: Vec::new(),
            spans: Default::default(),
        });
        if stop {
            // isolationtester stops there too; so does this spec.
            break;
        }
    }
    drop(sessions);
    drop(setup);
    // The sessions' backends must be gone before the database is looked at
    // (their temporary objects go with them).
    let mut gone = true;
    for (_, pid) in opener.pids() {
        gone &= env.await_gone(pid).await.unwrap_or(false);
    }
    let now = if gone { fingerprint(&env.control).await } else { None };
    Ok((variants, transcript, now))
}

/// Why each step runs, for `--step` prompts: its `# why:` (`# why-tr:`)
/// annotation in the run's language, else the English one, else the plain
/// comments above it.
fn whys(file: &SpecFile, lang: Lang) -> HashMap<String, String> {
    file.spec
        .steps()
        .filter_map(|(id, s)| {
            let why = file
                .spec
                .why(id, lang)
                .or_else(|| file.spec.why(id, Lang::En))
                .or_else(|| {
                    let plain: Vec<&str> = s
                        .notes
                        .iter()
                        .map(|n| n.trim())
                        .filter(|n| !n.is_empty() && !n.starts_with("why"))
                        .collect();
                    (!plain.is_empty()).then(|| plain.join(" "))
                })?;
            Some((s.name.clone(), why))
        })
        .collect()
}

fn comments(header: &[String], notes: &[String]) -> String {
    let lines: Vec<&str> = header
        .iter()
        .chain(notes)
        .map(|l| l.trim())
        .filter(|l| !l.is_empty())
        .collect();
    if lines.is_empty() {
        "(no comments in the spec)".into()
    } else {
        lines.join(" ")
    }
}

/// None when the output equals one of the expected files; else the
/// unified diff against the closest one (the fewest changed lines, as pg_regress picks).
fn compare(file: &SpecFile, got: &str) -> Option<String> {
    if file.expected.is_empty() {
        return None;
    }
    let mut best: Option<(usize, String)> = None;
    for path in &file.expected {
        let want = match std::fs::read_to_string(path) {
            Ok(w) => w,
            Err(e) => return Some(format!("{}: {e}\n", path.display())),
        };
        if want == got {
            return None;
        }
        let diff = similar::TextDiff::from_lines(want.as_str(), got);
        let changed = diff
            .iter_all_changes()
            .filter(|c| c.tag() != similar::ChangeTag::Equal)
            .count();
        if best.as_ref().is_none_or(|(n, _)| changed < *n) {
            let text = diff
                .unified_diff()
                .context_radius(3)
                .header(&path.display().to_string(), &format!("{} (lab)", file.name))
                .to_string();
            best = Some((changed, text));
        }
    }
    best.map(|(_, d)| d)
}

pub(crate) mod msg {
    crate::messages! {
        prefix "sp";
        unreadable(path, error) {
            en: "{path}: cannot read it: {error}",
            tr: "{path}: okunamıyor: {error}",
        }
        no_such_file(path) {
            en: "{path}: no such file",
            tr: "{path}: böyle bir dosya yok",
        }
        no_such_dir(path) {
            en: "{path}: no such directory",
            tr: "{path}: böyle bir dizin yok",
        }
        no_specs_in(path) {
            en: "{path}: no .spec file in this directory",
            tr: "{path}: bu dizinde .spec dosyası yok",
        }
        nothing_to_run() {
            en: "no spec to run: name spec files, directories or --schedule",
            tr: "çalıştırılacak spec yok: spec dosyaları, dizinler ya da --schedule verin",
        }
        bad_schedule_line(path, line, text) {
            en: "{path}:{line}: not a schedule line (expected `test: NAME ...`): {text}",
            tr: "{path}:{line}: bir schedule satırı değil (`test: AD ...` bekleniyordu): {text}",
        }
        schedule_missing(path, line, name) {
            en: "{path}:{line}: no spec for test {name} (looked for specs/{name}.spec and {name}.spec)",
            tr: "{path}:{line}: {name} testi için spec yok (specs/{name}.spec ve {name}.spec arandı)",
        }
        parse_error(path, line, message) {
            en: "{path}:{line}: {message}",
            tr: "{path}:{line}: {message}",
        }
        invalid(path, message) {
            en: "{path}: {message}",
            tr: "{path}: {message}",
        }
        expected_one() {
            en: "--expected compares one spec: give exactly one spec file (or use --expected-dir)",
            tr: "--expected tek bir spec'i karşılaştırır: tam olarak bir spec dosyası verin (ya da --expected-dir kullanın)",
        }
        jobs() {
            en: "--jobs must be at least 1",
            tr: "--jobs en az 1 olmalı",
        }
        create_db(db) {
            en: "could not create the database {db} for the spec (the role needs CREATEDB)",
            tr: "spec için {db} veritabanı oluşturulamadı (rolün CREATEDB yetkisi olmalı)",
        }
        drop_db(db) {
            en: "could not drop the spec's database {db}",
            tr: "spec'in {db} veritabanı silinemedi",
        }
        runs_to_end() {
            en: "every step runs to its end within the deadline",
            tr: "her adım son süre içinde sonuna kadar çalışır",
        }
        compared() {
            en: "as the expected output says",
            tr: "beklenen çıktının dediği gibi",
        }
        ran(steps, waited) {
            en: "{steps} steps, {waited} waited",
            tr: "{steps} adım, {waited} tanesi bekledi",
        }
        errors(codes) {
            en: "errors {codes}",
            tr: "hatalar {codes}",
        }
        cancelled(steps) {
            en: "lab cancelled {steps} at the deadline",
            tr: "lab {steps} adımını son sürede iptal etti",
        }
        stopped(error) {
            en: "stopped: {error}",
            tr: "durdu: {error}",
        }
        comments(text) {
            en: "{text}",
            tr: "{text}",
        }
        expected_variant() {
            en: "expected output",
            tr: "beklenen çıktı",
        }
        same_output(path) {
            en: "the output is byte for byte {path}",
            tr: "çıktı bayt bayt {path} ile aynı",
        }
        same() {
            en: "same",
            tr: "aynı",
        }
        differs() {
            en: "differs (diff below)",
            tr: "farklı (fark aşağıda)",
        }
        matched(matched, total, secs) {
            en: "{matched} of {total} specs match their expected output ({secs} s)",
            tr: "{total} spec'ten {matched} tanesi beklenen çıktısıyla aynı ({secs} sn)",
        }
    }
}
