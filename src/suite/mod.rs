//! `lab spec`: runs isolationtester spec files, each in a fresh database
//! of its own, several at once, on lab's engine (the same scheduler as the
//! scenarios). Each spec's outcome is lab's timeline per permutation and
//! isolationtester's own transcript, which can be compared with expected
//! files as pg_regress does. The harness prints and writes them.
pub mod files;
pub mod msg;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use anyhow::Result;
use tokio_postgres::Config;

use crate::engine::schedule;
use crate::engine::transcript::Transcript;
use crate::engine::{self, Env, Opener, Recorder};
use crate::i18n::{Lang, Text};
use crate::output::Exit;
use crate::report::{Check, ScenarioReport, VariantReport, round_ms};
use crate::target::connect;
use files::SpecFile;

/// A checked `lab spec` run: the specs and how their sessions connect.
pub struct SpecConfig {
    pub lang: Lang,
    pub specs: Vec<SpecFile>,
    pub jobs: usize,
    pub wait_timeout: std::time::Duration,
    /// Compared with expected files: sessions get pg_regress's settings.
    pub regress: bool,
    /// `PGAPPNAME`, `PGOPTIONS`, `PGDATESTYLE`, `PGTZ` as the environment has them.
    pub appname: Option<String>,
    pub options: Option<String>,
    pub datestyle: Option<String>,
    pub tz: Option<String>,
}

impl SpecConfig {
    /// The `options` startup parameter every session gets.
    fn startup_options(&self) -> Option<String> {
        startup_options(
            self.datestyle.as_deref(),
            self.tz.as_deref(),
            self.options.as_deref(),
            self.regress,
        )
    }
}

/// The `options` startup parameter, as libpq builds it from PGDATESTYLE,
/// PGTZ and PGOPTIONS (pg_regress adds intervalstyle: `regress`).
pub fn startup_options(
    datestyle: Option<&str>,
    tz: Option<&str>,
    options: Option<&str>,
    regress: bool,
) -> Option<String> {
    let escape = |v: &str| v.replace('\\', "\\\\").replace(' ', "\\ ");
    let mut parts = Vec::new();
    if let Some(d) = datestyle {
        parts.push(format!("-c datestyle={}", escape(d)));
    }
    if let Some(tz) = tz {
        parts.push(format!("-c timezone={}", escape(tz)));
    }
    if let Some(o) = options.filter(|o| !o.trim().is_empty()) {
        parts.push(o.trim().to_string());
    }
    if regress {
        parts.push("-c intervalstyle=postgres_verbose".into());
    }
    (!parts.is_empty()).then(|| parts.join(" "))
}

/// What one spec produced.
pub struct Outcome {
    pub report: ScenarioReport,
    pub transcript: Arc<Transcript>,
    /// The unified diff against the closest expected file, when none matched.
    pub diff: Option<String>,
}

/// Where each spec is: not started, running, or done with its outcome.
enum Progress {
    Waiting,
    Running,
    Done(Box<Outcome>),
}

/// A `lab spec` run: the specs' outcomes as they finish, the databases made for them.
pub struct Suite {
    pub cfg: SpecConfig,
    /// Databases made and not yet dropped.
    created: Mutex<Vec<String>>,
    /// Databases as fresh as when they were made, for the next spec.
    pool: Mutex<Vec<Db>>,
    made: std::sync::atomic::AtomicUsize,
    progress: Mutex<Vec<Progress>>,
    /// The spec whose failure stopped the run.
    failed: Mutex<Option<usize>>,
}

impl Suite {
    pub fn new(cfg: SpecConfig) -> Suite {
        let progress = cfg.specs.iter().map(|_| Progress::Waiting).collect();
        Suite {
            cfg,
            created: Mutex::default(),
            pool: Mutex::default(),
            made: Default::default(),
            progress: Mutex::new(progress),
            failed: Mutex::default(),
        }
    }

    /// Runs the specs, `jobs` at once, started in their order; each one's
    /// outcome is kept as it finishes and `show`n in order. On an error, the
    /// spec that failed is remembered.
    pub async fn run_all(self: &Arc<Self>, env: &Arc<Env>, show: impl Fn(&Outcome) -> Result<()>) -> Result<()> {
        let tasks: Vec<engine::Task<()>> = (0..self.cfg.specs.len())
            .map(|i| {
                let (suite, env) = (self.clone(), env.clone());
                Box::pin(async move {
                    // (After a stop the run has taken the list: a spec still going is not recorded.)
                    suite.set(i, Progress::Running);
                    let o = run_spec(&suite, &env, i).await?;
                    suite.set(i, Progress::Done(Box::new(o)));
                    Ok(())
                }) as engine::Task<()>
            })
            .collect();
        for (i, h) in engine::spawn_in_order(self.cfg.jobs, tasks).into_iter().enumerate() {
            let shown = match engine::joined(h).await {
                Ok(()) => match self.progress.lock().unwrap().get(i) {
                    Some(Progress::Done(o)) => show(o),
                    _ => Ok(()),
                },
                Err(e) => Err(e),
            };
            if let Err(e) = shown {
                *self.failed.lock().unwrap() = Some(i);
                return Err(e);
            }
        }
        Ok(())
    }

    fn set(&self, i: usize, p: Progress) {
        if let Some(slot) = self.progress.lock().unwrap().get_mut(i) {
            *slot = p;
        }
    }

    /// Whatever happened, the databases lab made go.
    pub async fn clean_up(&self, control: &tokio_postgres::Client) {
        let created: Vec<String> = self.created.lock().unwrap().drain(..).collect();
        for db in created {
            let _ = tokio::time::timeout(self.cfg.wait_timeout, drop_database(control, &db)).await;
        }
    }

    /// Every finished spec's report and outcome, in order; a run that
    /// stopped (`stop`: the error line and exit code) gets an error entry on
    /// the spec that failed (or, interrupted, on the first that was running).
    pub fn results(&self, stop: Option<(Exit, String)>, version: &str) -> (Vec<ScenarioReport>, Vec<Outcome>) {
        // Where each spec was when the run ended (specs cut short may still
        // finish in the background: they are not reported as finished).
        let progress = std::mem::take(&mut *self.progress.lock().unwrap());
        let at = stop
            .as_ref()
            .map(|(exit, _)| match (*exit, *self.failed.lock().unwrap()) {
                (Exit::CouldNotRun, Some(i)) => i,
                _ => progress
                    .iter()
                    .position(|p| !matches!(p, Progress::Done(_)))
                    .unwrap_or(0),
            });
        let mut outcomes = Vec::new();
        let mut reports: Vec<ScenarioReport> = Vec::new();
        for (i, p) in progress.into_iter().enumerate() {
            match p {
                Progress::Done(o) => {
                    reports.push(o.report.clone());
                    outcomes.push(*o);
                }
                _ if at == Some(i) => {
                    let (exit, message) = stop.clone().expect("stopped");
                    let name = self.cfg.specs[i].name.clone();
                    let mut r = ScenarioReport::new(&name, version);
                    r.as_expected = false;
                    r.error = Some(crate::report::RunError {
                        variant: name,
                        message,
                        exit_code: exit as u8,
                    });
                    reports.push(r);
                }
                // Never started, or cut short next to the one that stopped the run.
                _ => {}
            }
        }
        // Every spec had finished when the run was stopped: it stopped after the last.
        if let Some((exit, message)) = stop
            && !reports.iter().any(|r| r.error.is_some())
            && let Some(last) = reports.last_mut()
        {
            last.as_expected = false;
            last.error = Some(crate::report::RunError {
                variant: "-".into(),
                message,
                exit_code: exit as u8,
            });
        }
        (reports, outcomes)
    }
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

impl Suite {
    /// A fresh database for a spec: one a finished spec left as it was
    /// made, else a new one.
    async fn database(&self, control: &tokio_postgres::Client) -> Result<Db> {
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
            tokio::time::timeout(self.cfg.wait_timeout, control.batch_execute(&sql))
                .await
                .map_err(|_| msg::create_db(&name))?
                .map_err(|e| connect::sql_error(e, msg::create_db(&name)))?;
        }
        Ok(Db { name, baseline: None })
    }

    /// A spec is done with its database: kept for the next spec if it is as
    /// it was made, dropped if not.
    async fn give_back(&self, control: &tokio_postgres::Client, db: Db, now: Option<String>) -> Result<()> {
        if now.is_some() && now == db.baseline {
            self.pool.lock().unwrap().push(db);
            return Ok(());
        }
        let dropped = drop_database(control, &db.name).await;
        self.created.lock().unwrap().retain(|d| d != &db.name);
        dropped
    }
}

/// One spec, start to end, in a fresh database.
async fn run_spec(suite: &Suite, env: &Env, i: usize) -> Result<Outcome> {
    let cfg = &suite.cfg;
    let file = &cfg.specs[i];
    let began = Instant::now();
    let mut db = suite.database(&env.control).await?;
    let mut pg = env.pg.clone();
    pg.dbname(&db.name);
    let options = [
        cfg.startup_options(),
        file.bookstore.then(|| format!("-c search_path={BOOKSTORE}")),
    ];
    let options: Vec<String> = options.into_iter().flatten().collect();
    if !options.is_empty() {
        pg.options(options.join(" "));
    }
    let result = run_in(cfg, env, file, pg, &mut db).await;
    let now = match &result {
        Ok((_, _, now)) => now.clone(),
        Err(_) => None,
    };
    let given = suite.give_back(&env.control, db, now).await;
    let (mut variants, transcript, _) = result?;
    given?;
    let diff = compare(file, &transcript.combined());
    if !file.expected.is_empty() {
        let shown = file.expected[0].display().to_string();
        let ok = diff.is_none();
        variants.push(VariantReport {
            as_expected: ok,
            observed: vec![if ok { msg::same() } else { msg::differs() }],
            checks: vec![check(ok, msg::same_output(shown.clone()))],
            ..VariantReport::new(
                msg::expected_variant().render(Lang::En),
                msg::same_output(shown.clone()),
                msg::same_output(shown),
            )
        });
    }
    let mut report = ScenarioReport::new(&file.name, &env.server.version);
    report.as_expected = variants.iter().all(|v| v.as_expected);
    report.elapsed_ms = round_ms(began.elapsed().as_secs_f64() * 1000.0);
    report.variants = variants;
    Ok(Outcome {
        report,
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
    env: &Env,
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
    // isolationtester appends /<session> to the application_name;
    // pg_isolation_regress sets it to isolation/<test> for each test.
    let app = match (&cfg.appname, cfg.regress) {
        (Some(a), _) => format!("{a}/"),
        (None, true) => format!("isolation/{}/", file.name),
        (None, false) => format!("lab:spec:{}/", file.name),
    };
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
    let env = env.elsewhere(pg, control, "");
    let recorder = Recorder::default();
    let opener = Opener::new(&env, app, file.name.clone(), recorder.clone()).with_transcript(transcript.clone());
    if let Some(st) = &env.stepper {
        st.reset(whys(file, cfg.lang));
        recorder.set_live(st.live());
    }
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
        let outcome = schedule::run(
            &env,
            &sessions,
            &setup,
            schedule::Plan {
                spec,
                plan,
                params: &[],
                expect: &[],
                probes: &[],
                recorder: &recorder,
                transcript: Some(&transcript),
                patient: true,
                dead_ends: false,
            },
        )
        .await;
        let notes = spec.permutations.get(k).map(|p| p.notes.clone()).unwrap_or_default();
        let mut v = permutation_report(cfg, file, &outcome, &transcript, names.join(" "), &notes);
        v.timeline = recorder.take();
        v.sqlstates = crate::report::sqlstates_of(&v.timeline);
        v.elapsed_ms = round_ms(began.elapsed().as_secs_f64() * 1000.0);
        variants.push(v);
        if outcome.is_err() {
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

/// A permutation's report from what the scheduler observed (its timeline
/// is added by the caller).
fn permutation_report(
    cfg: &SpecConfig,
    file: &SpecFile,
    outcome: &Result<crate::engine::Observation>,
    transcript: &Transcript,
    name: String,
    notes: &[String],
) -> VariantReport {
    let (checks, observed) = match outcome {
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
            (vec![check(cancelled.is_empty(), msg::runs_to_end())], observed)
        }
        Err(e) => {
            if !transcript.ended() {
                // Where isolationtester would go on waiting, or exit without a word.
                transcript.fatal(format!("{}\n", crate::i18n::error_line(e, Lang::En)));
            }
            (
                vec![check(false, msg::runs_to_end())],
                vec![msg::stopped(crate::i18n::error_line(e, cfg.lang))],
            )
        }
    };
    // Compared with an expected file, the file decides (it may show a
    // cancelled step, as PostgreSQL's own do); the observation stays.
    let (checks, expected) = if file.expected.is_empty() {
        (checks, msg::runs_to_end())
    } else {
        (Vec::new(), msg::compared())
    };
    VariantReport {
        as_expected: checks.iter().all(|c| c.ok),
        observed,
        checks,
        ..VariantReport::new(name, expected, msg::comments(comments(&file.spec.header, notes)))
    }
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
