//! `lab spec`: runs isolationtester spec files, each in a fresh database
//! of its own, several at once (or one at a time in the database given),
//! on lab's engine (the same scheduler as the scenarios). Each spec's
//! outcome is lab's timeline per permutation and isolationtester's own
//! transcript, which can be compared with expected files as pg_regress
//! does. The harness prints and writes them.
pub mod args;
pub mod config;
pub mod files;
pub mod job;
pub mod leftovers;
pub mod msg;
pub mod regress;
pub mod repeat;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::postgres::ConnInfo as Config;
use anyhow::{Result, bail};

use crate::engine::schedule;
use crate::engine::transcript::Transcript;
use crate::engine::{self, Env, Opener, Recorder};
use crate::i18n::{Lang, Text};
use crate::output::Exit;
use crate::postgres::connect;
use crate::report::{Check, ScenarioReport, VariantReport, round_ms};
use files::SpecFile;

/// Where specs run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// Each in a fresh database of its own, several at once (`lab_spec_<pid>_<n>`).
    Fresh,
    /// One at a time in a database of this name, made by lab as pg_regress
    /// makes it (made again after a spec that changed it), dropped at the end.
    Named(String),
    /// One at a time in the database given (this one, or the URL's), as
    /// isolationtester runs: what a spec leaves behind is found by name.
    Given(Option<String>),
}

/// A checked `lab spec` run: the specs and how their sessions connect.
pub struct SpecConfig {
    pub lang: Lang,
    pub specs: Vec<SpecFile>,
    /// The schedule's groups, as sizes (specs in order): pg_regress's lines.
    pub groups: Vec<usize>,
    pub place: Place,
    /// In the database given, drop what a spec left behind and go on.
    pub clean: bool,
    /// Each spec runs this many times (`--repeat`); more than once, the
    /// permutations whose output differed are reported.
    pub repeat: usize,
    pub jobs: usize,
    /// pg_regress's --max-connections, printed on a larger group's line.
    pub groups_of: Option<usize>,
    /// How lab makes a spec's database (pg_regress's options).
    pub database: NewDatabase,
    /// A step's deadline (isolationtester's PGISOLATIONTIMEOUT).
    pub wait_timeout: std::time::Duration,
    /// lab's own waits' (making and dropping databases, clean-up): 10 s
    /// where the step deadline is isolationtester's default 300 s.
    pub own_waits: std::time::Duration,
    /// Compared with expected files: sessions get pg_regress's settings.
    pub regress: bool,
    /// `PGAPPNAME`, `PGOPTIONS`, `PGDATESTYLE`, `PGTZ` as the environment has them.
    pub appname: Option<String>,
    pub options: Option<String>,
    pub datestyle: Option<String>,
    pub tz: Option<String>,
}

/// pg_regress's options for the databases it makes: --encoding,
/// --no-locale, --load-extension.
#[derive(Debug, Clone, Default)]
pub struct NewDatabase {
    pub encoding: Option<String>,
    pub no_locale: bool,
    pub extensions: Vec<String>,
    /// --create-role: granted every privilege on each database made.
    pub roles: Vec<String>,
}

impl NewDatabase {
    /// `CREATE DATABASE` for `name`, as pg_regress writes it.
    fn create(&self, name: &str) -> String {
        let mut sql = format!("CREATE DATABASE {} TEMPLATE template0", quote_ident(name));
        if let Some(e) = &self.encoding {
            sql.push_str(&format!(" ENCODING {}", crate::sql_lexer::literal(e)));
        }
        if self.no_locale {
            sql.push_str(" LC_COLLATE 'C' LC_CTYPE 'C'");
        }
        sql
    }
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
    /// Which spec (an index into the config's specs) and which of its `--repeat` rounds.
    pub spec: usize,
    pub round: usize,
    pub report: ScenarioReport,
    pub transcript: Arc<Transcript>,
    /// The unified diff against the closest expected file, when none matched.
    pub diff: Option<String>,
    /// That closest expected file.
    pub best: Option<std::path::PathBuf>,
    /// How many runs had finished before this one (pg_regress names a
    /// group's tests in the order they finish).
    pub finished: usize,
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
    /// Where the specs run (the harness may move them into the database
    /// given, when the role cannot create databases).
    place: Mutex<Place>,
    /// In the database given: the spec whose leftovers keep the rest from
    /// running on top of them, and what it left.
    blocked: Mutex<Option<(String, Vec<String>)>>,
    /// Databases made and not yet dropped.
    created: Mutex<Created>,
    /// Roles made for --create-role, dropped after the databases.
    roles: Mutex<Vec<String>>,
    /// Held while a database is made (see [`Suite::clean_up`]).
    creating: tokio::sync::Mutex<()>,
    /// Databases as fresh as when they were made, for the next spec.
    pool: Mutex<Vec<Db>>,
    made: std::sync::atomic::AtomicUsize,
    /// Runs finished so far.
    finished: std::sync::atomic::AtomicUsize,
    progress: Mutex<Vec<Progress>>,
    /// The spec whose failure stopped the run.
    failed: Mutex<Option<usize>>,
    /// The runs' tasks, stopped at clean-up (a run cut short must not go
    /// on making databases in the background).
    tasks: Mutex<Vec<tokio::task::AbortHandle>>,
    /// How many runs are under way (a run aborted mid-way counts down as it is dropped).
    live: tokio::sync::watch::Sender<usize>,
    /// Per spec: held while one of its rounds runs.
    one_at_a_time: Vec<tokio::sync::Mutex<()>>,
    /// The spec under way in the database given (one at a time there).
    in_flight: InFlightSlot,
}

/// The spec under way in the database given, and who looks at what it
/// did: its own run at its end or the clean-up that cut it short, one
/// after the other (held through the look, which drops what `--clean`
/// drops: the clean-up waits for a look under way rather than aborting it
/// half done).
#[derive(Default)]
struct InFlightSlot {
    record: Mutex<Option<InFlight>>,
    looking: tokio::sync::Mutex<()>,
}

/// A spec under way in the database given, for a clean-up that comes
/// before it ends (Ctrl-C, a signal, a failure): its backends are ended
/// (a statement the server is running outlives a closed connection), its
/// teardown runs, and what it made is named, or dropped with `--clean`.
struct InFlight {
    spec: usize,
    /// Where it runs (the database, the startup options).
    pg: Config,
    before: leftovers::Snapshot,
    /// Its sessions' and setup connection's backends, named `app...`.
    opener: Opener,
    app: String,
    reset: String,
}

impl Suite {
    pub fn new(cfg: SpecConfig) -> Suite {
        let progress = (0..cfg.specs.len() * cfg.repeat.max(1))
            .map(|_| Progress::Waiting)
            .collect();
        let one_at_a_time = cfg.specs.iter().map(|_| tokio::sync::Mutex::new(())).collect();
        Suite {
            place: Mutex::new(cfg.place.clone()),
            blocked: Mutex::default(),
            cfg,
            created: Mutex::default(),
            roles: Mutex::default(),
            creating: tokio::sync::Mutex::default(),
            pool: Mutex::default(),
            made: Default::default(),
            finished: Default::default(),
            progress: Mutex::new(progress),
            failed: Mutex::default(),
            tasks: Mutex::default(),
            live: tokio::sync::watch::Sender::new(0),
            one_at_a_time,
            in_flight: InFlightSlot::default(),
        }
    }

    pub fn place(&self) -> Place {
        self.place.lock().unwrap().clone()
    }

    pub fn set_place(&self, place: Place) {
        *self.place.lock().unwrap() = place;
    }

    fn rounds(&self) -> usize {
        self.cfg.repeat.max(1)
    }

    /// Run `r`'s spec and round: every spec's first round, then every
    /// spec's second, ... (runs side by side are of different specs, as
    /// without --repeat).
    fn run_of(&self, r: usize) -> (usize, usize) {
        let n = self.cfg.specs.len().max(1);
        (r % n, r / n)
    }

    /// Runs the specs (each `repeat` times), `jobs` at once where each has a
    /// database of its own, else one by one, started in their order; each
    /// outcome is kept as it finishes and `show`n in order. On an error,
    /// the run that failed is remembered.
    pub async fn run_all(self: &Arc<Self>, env: &Arc<Env>, show: impl Fn(&Outcome) -> Result<()>) -> Result<()> {
        let jobs = match self.place() {
            Place::Fresh => self.cfg.jobs,
            _ => 1,
        };
        let runs = self.cfg.specs.len() * self.rounds();
        let tasks: Vec<engine::Task<()>> = (0..runs)
            .map(|i| {
                let (suite, env) = (self.clone(), env.clone());
                Box::pin(async move {
                    // Two rounds of one spec never run at once: a spec may
                    // make what the whole server shares (a role).
                    let _alone = suite.one_at_a_time[suite.run_of(i).0].lock().await;
                    let _live = Live::new(&suite.live);
                    // (After a stop the run has taken the list: a spec still going is not recorded.)
                    suite.set(i, Progress::Running);
                    let mut o = run_spec(&suite, &env, i).await?;
                    o.finished = suite.finished.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    suite.set(i, Progress::Done(Box::new(o)));
                    Ok(())
                }) as engine::Task<()>
            })
            .collect();
        let handles = engine::spawn_in_order(jobs, tasks);
        self.tasks
            .lock()
            .unwrap()
            .extend(handles.iter().map(|h| h.abort_handle()));
        for (i, h) in handles.into_iter().enumerate() {
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

    /// A spec cut short in the database given: its backends ended, its
    /// teardown run, what it made dropped with `--clean`; what it left
    /// there, named (empty: nothing). Best effort: this is a clean-up.
    pub async fn end_in_flight(&self, env: &Env) -> Vec<String> {
        // A look under way (the spec's own, at its end) goes to its end
        // first: the record is then gone, and the run's report says it.
        let _looking = tokio::time::timeout(self.cfg.own_waits, self.in_flight.looking.lock()).await;
        let Some(f) = self.in_flight.record.lock().unwrap().take() else {
            return Vec::new();
        };
        if env.server.behind_pooler {
            let _ = connect::within(self.cfg.own_waits, env.end_pooled_leftovers(&f.app)).await;
        } else {
            let pids: Vec<i32> = f.opener.pids().into_iter().map(|(_, pid)| pid).collect();
            env.terminate(&pids, &f.app).await;
            let _ = connect::within(self.cfg.own_waits, env.await_gone(&pids)).await;
        }
        let file = &self.cfg.specs[f.spec];
        let app = format!("{}control connection", f.app);
        let Ok(Ok(conn)) = tokio::time::timeout(
            self.cfg.own_waits,
            connect::connect_control(&f.pg, &app, None, env.control_silence()),
        )
        .await
        else {
            return vec![msg::in_flight_unknown(&file.name).render(self.cfg.lang)];
        };
        let control = conn.client;
        // As after a permutation: the spec's own teardown first.
        if let Some(sql) = &file.spec.teardown {
            let teardown = format!("{}{sql}", f.reset);
            let _ = tokio::time::timeout(self.cfg.own_waits, control.batch_execute(&teardown)).await;
        }
        let looked = tokio::time::timeout(
            self.cfg.own_waits,
            what_it_did(&self.cfg, &control, file, &f.before, &f.reset),
        )
        .await;
        let Ok(Ok((changes, failed))) = looked else {
            return vec![msg::in_flight_unknown(&file.name).render(self.cfg.lang)];
        };
        if changes.made.is_empty() || (self.cfg.clean && failed.is_empty()) {
            return Vec::new();
        }
        let said = if self.cfg.clean {
            msg::in_flight_not_dropped(&file.name, not_dropped(&failed).join(", "))
        } else {
            let left: Vec<String> = changes.made.iter().map(|o| o.to_string()).collect();
            msg::in_flight_left(&file.name, left.join(", "))
        };
        vec![said.render(self.cfg.lang)]
    }

    /// Whatever happened, the runs still going stop and the databases lab made go.
    pub async fn clean_up(&self, control: &tokio_postgres::Client) -> Result<()> {
        for t in self.tasks.lock().unwrap().drain(..) {
            t.abort();
        }
        // A task stops at its next await: until then it may still send a
        // CREATE DATABASE, which must come before the DROPs below.
        let mut live = self.live.subscribe();
        let _ = tokio::time::timeout(self.cfg.own_waits, live.wait_for(|n| *n == 0)).await;
        // A run being polled as it was aborted may still have got as far as
        // making a database (CI saw one left): once the list is closed none
        // is made, and one being made is listed already; waiting for it to
        // be sent puts its CREATE ahead of the DROPs on the one control
        // connection (answered, or queued as its run ended).
        let names = {
            let mut created = self.created.lock().unwrap();
            created.closed = true;
            created.names.clone()
        };
        let _ = tokio::time::timeout(self.cfg.own_waits, self.creating.lock()).await;
        // Listed until dropped: a clean-up tried again (on a new control
        // connection) drops what this one could not.
        let mut first = Ok(());
        for db in names {
            let r = connect::within(self.cfg.own_waits, drop_database(control, &db)).await;
            if r.is_ok() {
                self.created.lock().unwrap().names.retain(|d| d != &db);
            } else if first.is_ok() {
                first = r;
            }
        }
        // The roles lab made, once nothing of theirs is left (their rights
        // were on the databases dropped above).
        if first.is_ok() {
            let roles = std::mem::take(&mut *self.roles.lock().unwrap());
            for (i, role) in roles.iter().enumerate() {
                let sql = format!("DROP ROLE IF EXISTS {}", quote_ident(role));
                let r = connect::within(self.cfg.own_waits, async {
                    control
                        .batch_execute(&sql)
                        .await
                        .map_err(|e| connect::sql_error(e, msg::drop_role(role)))
                })
                .await;
                if r.is_err() {
                    // Tried again by a clean-up on a new control connection.
                    self.roles.lock().unwrap().extend(roles[i..].iter().cloned());
                    return r;
                }
            }
        }
        first
    }

    /// pg_regress's --create-role, where lab makes the databases: each role
    /// that does not exist is made (and dropped at the end); one that
    /// exists is used as it is (lab drops only what it made).
    pub async fn create_roles(&self, control: &tokio_postgres::Client) -> Result<()> {
        if matches!(self.place(), Place::Given(_)) {
            return Ok(());
        }
        for role in &self.cfg.database.roles {
            if named(control, "SELECT 1 FROM pg_roles WHERE rolname = $1", role).await? {
                continue;
            }
            // Listed before it is made: a run stopped while the CREATE is
            // out still drops it (IF EXISTS).
            self.roles.lock().unwrap().push(role.clone());
            let sql = format!("CREATE ROLE {} WITH LOGIN", quote_ident(role));
            if let Err(e) = control.batch_execute(&sql).await {
                self.roles.lock().unwrap().retain(|r| r != role);
                return Err(connect::sql_error(e, msg::create_role(role)));
            }
        }
        Ok(())
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
                    let name = self.cfg.specs[self.run_of(i).0].name.clone();
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

async fn drop_database(control: &tokio_postgres::Client, db: &str) -> Result<()> {
    connect::drop_database(control, db).await
}

/// Whether `sql` (a catalogue lookup by `$1`) finds `name`.
pub async fn named(control: &tokio_postgres::Client, sql: &str, name: &str) -> Result<bool> {
    let rows = control
        .query_typed(sql, &[(&name, tokio_postgres::types::Type::TEXT)])
        .await?;
    Ok(!rows.is_empty())
}

fn quote_ident(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\"\""))
}

/// The schema lab's own specs run against (`# uses: bookstore`).
const BOOKSTORE: &str = "lab";

/// The databases lab made for specs and has not dropped; closed once the
/// clean-up has taken them.
#[derive(Default)]
struct Created {
    names: Vec<String>,
    closed: bool,
}

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
    connect::simple_value(client, FRESH).await.ok().flatten()
}

impl Suite {
    /// A fresh database for a spec: one a finished spec left as it was
    /// made, else a new one.
    async fn database(&self, control: &tokio_postgres::Client) -> Result<Db> {
        if let Some(db) = self.pool.lock().unwrap().pop() {
            return Ok(db);
        }
        let n = self.made.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let name = match self.place() {
            Place::Named(name) => name,
            _ => format!("lab_spec_{}_{n}", std::process::id()),
        };
        // Held until the database is made (see clean-up).
        let _creating = self.creating.lock().await;
        {
            let mut created = self.created.lock().unwrap();
            if created.closed {
                bail!(msg::create_db(&name));
            }
            created.names.push(name.clone());
        }
        let q = quote_ident(&name);
        // As pg_regress makes its database. lc_messages (English messages:
        // a cluster made in another locale would say FEHLER where expected
        // files say ERROR) only where the role may: it is a superuser's.
        let sql = [
            (self.cfg.database.create(&name), false),
            (
                format!(
                    "ALTER DATABASE {q} SET lc_monetary TO 'C'; ALTER DATABASE {q} SET lc_numeric TO 'C'; \
                     ALTER DATABASE {q} SET lc_time TO 'C'; ALTER DATABASE {q} SET bytea_output TO 'hex'; \
                     ALTER DATABASE {q} SET timezone_abbreviations TO 'Default'"
                ),
                false,
            ),
            (format!("ALTER DATABASE {q} SET lc_messages TO 'C'"), true),
        ];
        let grants = self
            .cfg
            .database
            .roles
            .iter()
            .map(|r| (format!("GRANT ALL ON DATABASE {q} TO {}", quote_ident(r)), false));
        let sql: Vec<(String, bool)> = sql.into_iter().chain(grants).collect();
        for (sql, superuser_only) in sql {
            let done = tokio::time::timeout(self.cfg.own_waits, control.batch_execute(&sql))
                .await
                .map_err(|_| msg::create_db(&name))?;
            match done {
                Err(e)
                    if superuser_only && e.code() == Some(&tokio_postgres::error::SqlState::INSUFFICIENT_PRIVILEGE) => {
                }
                Err(e) if e.code() == Some(&tokio_postgres::error::SqlState::INSUFFICIENT_PRIVILEGE) => {
                    return Err(connect::sql_error(e, msg::create_db_denied(&name)));
                }
                done => done.map_err(|e| connect::sql_error(e, msg::create_db(&name)))?,
            }
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
        if dropped.is_ok() {
            // (One not dropped is tried again at clean-up.)
            self.created.lock().unwrap().names.retain(|d| d != &db.name);
        }
        dropped
    }
}

/// One run under way, counted in [`Suite::live`] until it ends or is dropped.
struct Live<'a>(&'a tokio::sync::watch::Sender<usize>);

impl<'a> Live<'a> {
    fn new(live: &'a tokio::sync::watch::Sender<usize>) -> Live<'a> {
        live.send_modify(|n| *n += 1);
        Live(live)
    }
}

impl Drop for Live<'_> {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n -= 1);
    }
}

/// `--repeat`: how long each round gives a step to answer before first
/// asking whether it waits: lab's own 2 ms, isolationtester's 10 ms, and
/// moments around them. A spec whose output does not depend on timing
/// prints the same at every one; one that does shows it in fewer rounds.
const FIRST_LOOKS: [std::time::Duration; 7] = [
    std::time::Duration::from_millis(2),
    std::time::Duration::from_millis(10),
    std::time::Duration::from_micros(200),
    std::time::Duration::from_millis(5),
    std::time::Duration::from_millis(20),
    std::time::Duration::from_millis(1),
    std::time::Duration::from_millis(50),
];

/// How a spec's database is watched for what the spec changed.
enum Watch<'a> {
    /// A database lab made: its fingerprint, to keep it for the next spec.
    Made(&'a mut Db),
    /// The database given: what the spec created (dropped with `--clean`);
    /// the spec is told while under way (for a clean-up that comes first).
    Given(&'a InFlightSlot, usize),
}

/// What the watch saw after the spec.
enum Seen {
    Fingerprint(Option<String>),
    /// What the spec did to the database given, and of what it made what
    /// could not be dropped (with why).
    Left(leftovers::Changes, Vec<(leftovers::Object, String)>),
}

/// One run of a spec, start to end: in a fresh database, or in the one given.
async fn run_spec(suite: &Suite, env: &Env, run: usize) -> Result<Outcome> {
    let cfg = &suite.cfg;
    let (i, round) = suite.run_of(run);
    let file = &cfg.specs[i];
    let began = Instant::now();
    if let Some(why) = &file.broken {
        return Ok(unparsed(file, env, i, round, why));
    }
    if let Some((by, left)) = suite.blocked.lock().unwrap().clone() {
        return Ok(not_run(file, env, i, round, by, left));
    }
    let mut pg = env.pg.clone();
    let options = [
        cfg.startup_options(),
        file.bookstore.then(|| format!("-c search_path={BOOKSTORE}")),
    ];
    let options: Vec<String> = options.into_iter().flatten().collect();
    // Through a transaction pooler the `options` startup parameter does
    // not get through (PgBouncer refuses it, or ignores it where told to):
    // the sessions set the same with each transaction (see run_in).
    if !options.is_empty() && !env.pooled_sessions() {
        pg.options(options.join(" "));
    }
    let (result, given) = match suite.place() {
        Place::Given(name) => {
            if let Some(n) = name {
                pg.dbname(&n);
            }
            let result = run_in(cfg, env, file, pg, Watch::Given(&suite.in_flight, i), round).await;
            (result, Ok(()))
        }
        _ => {
            let mut db = suite.database(&env.control).await?;
            pg.dbname(&db.name);
            let result = run_in(cfg, env, file, pg, Watch::Made(&mut db), round).await;
            let now = match &result {
                Ok((_, _, Seen::Fingerprint(now))) => now.clone(),
                _ => None,
            };
            // Behind lab's pooler (where the database is never kept: see
            // run_in), its server connections to it go first (the server would
            // wait 5 s for them before refusing the DROP).
            let pooler = env.pooler.as_ref();
            if let Some(p) = pooler {
                let _ = p.admin.simple_query(&format!("KILL {}", db.name)).await;
            }
            let name = db.name.clone();
            let given = suite.give_back(&env.control, db, now).await;
            if let Some(p) = pooler {
                let _ = p.admin.simple_query(&format!("RESUME {name}")).await;
            }
            (result, given)
        }
    };
    let (mut variants, transcript, seen) = result?;
    given?;
    if let Seen::Left(changes, failed) = seen
        && !changes.is_empty()
    {
        // What it made and left stops the specs after it (they would run
        // on top of it); what it renamed or dropped of what was there
        // before is told, and left as it is.
        if !changes.made.is_empty() && (!cfg.clean || !failed.is_empty()) {
            let names = if cfg.clean {
                not_dropped(&failed)
            } else {
                changes.made.iter().map(|o| o.to_string()).collect()
            };
            *suite.blocked.lock().unwrap() = Some((file.name.clone(), names));
        }
        variants.push(left_behind(cfg.clean, &changes, &failed));
    }
    let compared = compare(file, &transcript.combined());
    let (diff, best) = match &compared {
        Some(Err((d, closest))) => (Some(d.clone()), Some(closest.clone())),
        _ => (None, None),
    };
    if let Some(c) = &compared {
        // The file it matched, or the closest one it was held to.
        let shown = match c {
            Ok(matched) | Err((_, matched)) => matched.display().to_string(),
        };
        let ok = diff.is_none();
        variants.push(VariantReport {
            as_expected: ok,
            observed: vec![if ok { msg::same() } else { msg::differs() }],
            diff: diff.clone(),
            checks: vec![check(ok, msg::same_output(shown.clone()))],
            anomaly: None,
            ..VariantReport::named(
                msg::expected_variant(),
                msg::same_output(shown.clone()),
                msg::same_output(shown),
            )
        });
    }
    let mut report = ScenarioReport::on(&file.name, &env.server);
    report.as_expected = variants.iter().all(|v| v.as_expected);
    report.elapsed_ms = round_ms(began.elapsed().as_secs_f64() * 1000.0);
    report.variants = variants;
    Ok(Outcome {
        spec: i,
        round,
        report,
        transcript,
        diff,
        best,
        finished: 0,
    })
}

/// The report of what a spec did to the database given: passed when it
/// left nothing (or `--clean` dropped all it made) and renamed or dropped
/// nothing that was there before (lab never puts that back).
fn left_behind(clean: bool, changes: &leftovers::Changes, failed: &[(leftovers::Object, String)]) -> VariantReport {
    let listed = |objects: &[leftovers::Object]| objects.iter().map(|o| o.to_string()).collect::<Vec<_>>().join(", ");
    let mut observed = Vec::new();
    if !changes.made.is_empty() {
        observed.push(msg::left(listed(&changes.made)));
        if clean {
            observed.push(if failed.is_empty() {
                msg::cleaned()
            } else {
                msg::not_cleaned(not_dropped(failed).join(", "))
            });
        }
    }
    if !changes.renamed.is_empty() {
        let pairs: Vec<String> = changes
            .renamed
            .iter()
            .map(|(was, now)| format!("{was} → {}", now.identity))
            .collect();
        observed.push(msg::renamed(pairs.join(", ")));
    }
    if !changes.gone.is_empty() {
        observed.push(msg::gone(listed(&changes.gone)));
    }
    let ok = (changes.made.is_empty() || (clean && failed.is_empty()))
        && changes.renamed.is_empty()
        && changes.gone.is_empty();
    VariantReport {
        as_expected: ok,
        observed,
        checks: vec![check(ok, msg::leaves_nothing())],
        anomaly: None,
        ..VariantReport::named(
            msg::database_variant(),
            msg::leaves_nothing(),
            msg::leaves_nothing_why(),
        )
    }
}

/// What --clean could not drop, each with the server's reason.
fn not_dropped(failed: &[(leftovers::Object, String)]) -> Vec<String> {
    failed.iter().map(|(o, why)| format!("{o} ({why})")).collect()
}

/// What the database given holds (an error says what lab was reading).
async fn snapshot(client: &tokio_postgres::Client, reset: &str) -> Result<leftovers::Snapshot> {
    leftovers::snapshot(client, reset)
        .await
        .map_err(|e| connect::sql_error(e, msg::snapshot()))
}

/// A spec not run because an earlier one left objects in the database given.
fn not_run(file: &SpecFile, env: &Env, spec: usize, round: usize, by: String, left: Vec<String>) -> Outcome {
    let text = msg::not_run(by, left.join(", "));
    let variant = VariantReport {
        as_expected: false,
        observed: vec![text.clone()],
        // What it waits for: not something it did (it never ran).
        checks: vec![check(false, msg::runs_in_clean_database())],
        anomaly: None,
        ..VariantReport::named(
            msg::not_run_variant(),
            msg::runs_in_clean_database(),
            msg::leaves_nothing_why(),
        )
    };
    unrun(file, env, (spec, round), variant, &text.render(Lang::En), false)
}

/// A test whose spec could not be read or parsed (pg_regress's layout): it
/// failed, with isolationtester's exit, and its output, the one line that
/// says why, is compared as any other.
fn unparsed(file: &SpecFile, env: &Env, spec: usize, round: usize, why: &str) -> Outcome {
    let variant = VariantReport {
        as_expected: false,
        observed: vec![msg::does_not_parse(why)],
        checks: vec![check(false, msg::parses())],
        anomaly: None,
        ..VariantReport::named(msg::spec_variant(), msg::parses(), msg::parses_why())
    };
    unrun(file, env, (spec, round), variant, why, true)
}

/// The outcome of a spec that did not run: its one failed `variant`, and a
/// transcript that ends with `why` (isolationtester's exit), compared with
/// the expected files where `compared`.
fn unrun(
    file: &SpecFile,
    env: &Env,
    (spec, round): (usize, usize),
    variant: VariantReport,
    why: &str,
    compared: bool,
) -> Outcome {
    let transcript = Arc::new(Transcript::default());
    transcript.fatal(format!("{why}\n"));
    let (diff, best) = match compared.then(|| compare(file, &transcript.combined())).flatten() {
        Some(Err((d, closest))) => (Some(d), Some(closest)),
        _ => (None, None),
    };
    let mut report = ScenarioReport::on(&file.name, &env.server);
    report.as_expected = false;
    report.variants = vec![variant];
    Outcome {
        spec,
        round,
        report,
        transcript,
        diff,
        best,
        finished: 0,
    }
}

/// `--repeat`'s part of a spec's report: the runs made of the `asked`, and
/// the permutations whose output was not the same in all of them.
pub fn repeat_report(runs: usize, asked: usize, flaky: &[repeat::Flaky]) -> VariantReport {
    let ok = flaky.is_empty() && runs == asked;
    let observed = if flaky.is_empty() {
        vec![msg::same_in(runs)]
    } else {
        flaky
            .iter()
            .map(|f| msg::outputs_of(f.permutation.clone(), f.outputs.len(), f.counts()))
            .collect()
    };
    VariantReport {
        as_expected: ok,
        observed,
        checks: vec![check(ok, msg::same_in(asked))],
        anomaly: None,
        ..VariantReport::named(msg::repeat_variant(asked), msg::same_in(asked), msg::same_in_why())
    }
}

fn check(ok: bool, text: Text) -> Check {
    Check {
        id: text.key().to_string(),
        ok,
        text,
    }
}

/// What a spec's database holds before it runs: in the database given, a
/// snapshot of it (what the spec leaves is what differs after); in one lab
/// made, nothing, but its fingerprint as made is taken once (with
/// pg_regress's --load-extension ones).
async fn look_before(
    cfg: &SpecConfig,
    control: &tokio_postgres::Client,
    watch: &mut Watch<'_>,
    reset: &str,
) -> Result<Option<leftovers::Snapshot>> {
    Ok(match watch {
        Watch::Made(db) => {
            if db.baseline.is_none() {
                for ext in &cfg.database.extensions {
                    let sql = format!("CREATE EXTENSION IF NOT EXISTS {}", quote_ident(ext));
                    control
                        .batch_execute(&sql)
                        .await
                        .map_err(|e| connect::sql_error(e, msg::load_extension(ext, &db.name)))?;
                }
                db.baseline = fingerprint(control).await;
            }
            None
        }
        Watch::Given(..) => Some(snapshot(control, reset).await?),
    })
}

/// The spec's permutations (those it lists, else every one), each run on
/// the sessions and reported as it ends; the first that fails ends the
/// spec, as isolationtester's does.
async fn permutations(
    cfg: &SpecConfig,
    file: &SpecFile,
    env: &Env,
    (sessions, setup): (&[engine::Session], &engine::Session),
    (recorder, transcript): (&Recorder, &Arc<Transcript>),
    round: usize,
) -> Result<Vec<VariantReport>> {
    let spec = &file.spec;
    let plans = if spec.permutations.is_empty() {
        spec.all_permutations()
    } else {
        spec.permutations
            .iter()
            .map(|p| spec.plan(p))
            .collect::<Result<_, _>>()
            .map_err(|e| msg::invalid(file.path.display().to_string(), e.to_string()))?
    };
    let suite_first_look = (cfg.repeat > 1).then(|| FIRST_LOOKS[round % FIRST_LOOKS.len()]);
    let mut variants = Vec::new();
    for (k, plan) in plans.iter().enumerate() {
        let names: Vec<&str> = plan.iter().map(|p| spec.step(p.id).name.as_str()).collect();
        transcript.out(format!("\nstarting permutation: {}\n", names.join(" ")));
        recorder.restart();
        let began = Instant::now();
        let outcome = schedule::run(
            env,
            sessions,
            setup,
            schedule::Plan {
                spec,
                plan,
                params: &[],
                expect: &[],
                probes: &[],
                recorder,
                transcript: Some(transcript),
                patient: true,
                dead_ends: false,
                first_look: suite_first_look,
            },
        )
        .await;
        let notes = spec.permutations.get(k).map(|p| p.notes.clone()).unwrap_or_default();
        let mut v = permutation_report(cfg, file, &outcome, transcript, names.join(" "), &notes);
        v.timeline = recorder.take();
        v.sessions = recorder.take_connections();
        v.sqlstates = crate::report::sqlstates_of(&v.timeline);
        v.elapsed_ms = round_ms(began.elapsed().as_secs_f64() * 1000.0);
        variants.push(v);
        if outcome.is_err() {
            // isolationtester stops there too; so does this spec.
            break;
        }
    }
    Ok(variants)
}

/// The spec's sessions stay connected for all its permutations, as
/// isolationtester keeps them.
async fn run_in(
    cfg: &SpecConfig,
    env: &Env,
    file: &SpecFile,
    pg: Config,
    mut watch: Watch<'_>,
    round: usize,
) -> Result<(Vec<VariantReport>, Arc<Transcript>, Seen)> {
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
    let control_app = format!("{app}control connection");
    let control = connect::connect_control(&pg, &control_app, None, env.control_silence())
        .await?
        .client;
    let reset = if env.server.behind_pooler {
        crate::engine::env::pooled_reset(&control_app)
    } else {
        String::new()
    };
    let before = look_before(cfg, &control, &mut watch, &reset).await?;
    if file.bookstore {
        crate::files::LabFiles::embedded()
            .build_schema(&control, BOOKSTORE)
            .await?;
    }
    // Behind a transaction pooler the `options` startup parameter does not
    // get through: lab's specs get their search_path as the scenarios do,
    // and PGDATESTYLE, PGTZ, PGOPTIONS (and pg_regress's intervalstyle)
    // become SETs the sessions send with each transaction.
    let pooled = env.pooled_sessions();
    let schema = if file.bookstore && pooled { BOOKSTORE } else { "" };
    let mut env = env.elsewhere(pg, control, schema);
    env.control_app = control_app;
    env.step_deadline = cfg.wait_timeout;
    if pooled && let Some(options) = cfg.startup_options() {
        env.settings = connect::options_as_sets(&options)?;
    }
    let recorder = Recorder::default();
    let app_prefix = app.clone();
    let opener = Opener::new(&env, app, file.name.clone(), recorder.clone()).with_transcript(transcript.clone());
    if let Some(st) = &env.stepper {
        st.reset(whys(file, cfg.lang));
        recorder.set_live(st.live());
    }
    if let (Watch::Given(in_flight, i), Some(before)) = (&watch, &before) {
        *in_flight.record.lock().unwrap() = Some(InFlight {
            spec: *i,
            pg: env.pg.clone(),
            before: before.clone(),
            opener: opener.clone(),
            app: app_prefix.clone(),
            reset: reset.clone(),
        });
    }
    let names: Vec<&str> = spec.sessions.iter().map(|s| s.name.as_str()).collect();
    let sessions = opener.open_all(&names).await?;
    let setup = opener.open_quiet("control connection").await?;
    let variants = permutations(cfg, file, &env, (&sessions, &setup), (&recorder, &transcript), round).await?;
    drop(sessions);
    drop(setup);
    // Through the user's pooler, the server connections the sessions used
    // go with what they left on them (temporary tables among it, which
    // the spec's own tables may not be dropped without).
    env.end_pooled_leftovers(&app_prefix).await?;
    // The sessions' backends must be gone before the database is looked at
    // (their temporary objects go with them).
    // (Behind lab's pooler the server connections stay in its pool: the
    // database, not as fresh as made, is dropped.)
    let pids: Vec<i32> = opener.pids().into_iter().map(|(_, pid)| pid).collect();
    let gone = env.pooler.is_none() && env.await_gone(&pids).await.unwrap_or(false);
    let seen = match (watch, before) {
        (Watch::Given(in_flight, _), Some(before)) => {
            // Taken already: a clean-up (Ctrl-C, a signal) ended this spec
            // and looks at the database itself; two looks at once would
            // each drop what the other is dropping (CI saw --clean report
            // a table "does not exist" that the other look had dropped).
            let _looking = in_flight.looking.lock().await;
            if in_flight.record.lock().unwrap().take().is_none() {
                bail!(msg::cut_short(&file.name));
            }
            let (changes, failed) = what_it_did(cfg, &env.control, file, &before, &reset).await?;
            Seen::Left(changes, failed)
        }
        _ => Seen::Fingerprint(if gone { fingerprint(&env.control).await } else { None }),
    };
    Ok((variants, transcript, seen))
}

/// What a spec did to the database given, looked at once it is over (at
/// its end, or in a clean-up that came first): lab's own schema, built for
/// a lab spec, goes first; with `--clean`, what the spec made is dropped
/// (what could not be, with why).
async fn what_it_did(
    cfg: &SpecConfig,
    control: &tokio_postgres::Client,
    file: &SpecFile,
    before: &leftovers::Snapshot,
    reset: &str,
) -> Result<(leftovers::Changes, Vec<(leftovers::Object, String)>)> {
    if file.bookstore {
        connect::drop_schema(control, BOOKSTORE).await?;
    }
    let after = snapshot(control, reset).await?;
    let changes = leftovers::changes(before, &after);
    let failed = if cfg.clean && !changes.made.is_empty() {
        leftovers::clean(control, &changes.made, reset).await
    } else {
        Vec::new()
    };
    Ok((changes, failed))
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
    // The spec's `# occurs-if:`, where it has one, on what the steps returned.
    let anomaly = match outcome {
        Ok(o) => crate::commands::phenomena::occurs(&file.occurs_if, o),
        Err(_) => None,
    };
    VariantReport {
        as_expected: checks.iter().all(|c| c.ok),
        anomaly,
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

/// How the output compares with the spec's expected files (none: it has
/// none): the one it equals, or the unified diff against the closest one
/// (the fewest changed lines, as pg_regress picks) and that file.
type Compared = Result<std::path::PathBuf, (String, std::path::PathBuf)>;

fn compare(file: &SpecFile, got: &str) -> Option<Compared> {
    if file.expected.is_empty() {
        return None;
    }
    let mut best: Option<(usize, String, &std::path::Path)> = None;
    for path in &file.expected {
        let want = match std::fs::read_to_string(path) {
            Ok(w) => w,
            Err(e) => return Some(Err((format!("{}: {e}\n", path.display()), path.clone()))),
        };
        if want == got {
            return Some(Ok(path.clone()));
        }
        let diff = similar::TextDiff::from_lines(want.as_str(), got);
        let changed = diff
            .iter_all_changes()
            .filter(|c| c.tag() != similar::ChangeTag::Equal)
            .count();
        if best.as_ref().is_none_or(|(n, _, _)| changed < *n) {
            let text = diff
                .unified_diff()
                .context_radius(3)
                .header(&path.display().to_string(), &format!("{} (lab)", file.name))
                .to_string();
            best = Some((changed, text, path));
        }
    }
    best.map(|(_, d, p)| Err((d, p.to_path_buf())))
}
