//! One session: a connection of its own, the statements it sends, what the
//! server answered, and the transaction it is in.
use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use tokio::sync::oneshot;
use tokio_postgres::{Client, SimpleQueryMessage};

use crate::postgres::ConnInfo as Config;

use super::answer::{Answer, PgError, Res, after_prelude, int_of, last_set, results_of};
use super::env::Env;
use super::observe::{Deviation, Recorder};
use super::step::Stepper;
use super::transcript::Transcript;
use super::{msg, secs};
use crate::i18n::{Context, Text};
use crate::postgres::connect::{self, EndWatch};
use crate::report::{Entry, Phrase, ResultSet, StepResult};
use crate::sql_lexer::{self, SettingEffect, TxEffect, one_line};

/// A statement the server confirmed waits for other sessions, not yet answered.
pub struct Waiting {
    session: Session,
    step: String,
    sql: String,
    sent: Sent,
    waited: super::observe::Waited,
    /// When its answer came (read off the connection, not when lab got to it).
    answered: Option<Instant>,
}

impl Waiting {
    /// When its answer came, once [`Waiting::answer_within`] has had it.
    pub fn answered_at(&self) -> Option<Instant> {
        self.answered
    }

    /// Its answer, if it comes within `within` (recorded as completed after
    /// its wait); none while it still waits.
    pub async fn answer_within(&mut self, within: Duration) -> Option<Answer> {
        if !self.sent.ready_within(within).await {
            return None;
        }
        let (mut answer, at) = self.sent.take()?;
        self.answered = Some(at);
        self.session.track(&self.sql, &mut answer);
        let took = at.saturating_duration_since(self.sent.at);
        self.session.inner.recorder.answer(
            at,
            self.session.name(),
            Some(&self.step),
            &self.sql,
            &answer,
            Some((&self.waited, took)),
            None,
        );
        Some(answer)
    }
}

/// A NOTIFY a session heard.
#[derive(Debug, Clone, PartialEq)]
pub struct Notification {
    pub channel: String,
    pub payload: String,
    /// The notifying backend's pid.
    pub from: i32,
}

/// The transaction a session is in, as tracked from the statements it ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tx {
    Idle,
    Open,
    Failed,
}

/// One named session on its own connection.
#[derive(Clone)]
pub struct Session {
    inner: Arc<Inner>,
}

struct Inner {
    name: String,
    /// Scenario and variant, for error messages.
    label: String,
    /// The backend serving the session: read once when it opened; behind a
    /// transaction pooler, looked up per transaction ([`refresh_pids`]), 0 while none serves it.
    pid: AtomicI32,
    /// The server's clock (epoch seconds) when that pid was read, from
    /// its backend: the backend started no later. A backend that started
    /// later holds the pid only because ours ended and the number came
    /// round again. None for a pid looked up later (pooled sessions).
    since: Option<String>,
    /// Its application_name, as the server stores it.
    app: String,
    /// Behind a transaction pooler: the settings the session opened with,
    /// and the session-level SETs it ran since, sent again ahead of every
    /// statement that starts a transaction (the pooler may hand it to any
    /// server connection, carrying any other client's settings).
    pooled: Option<Pooled>,
    client: Client,
    end: EndWatch,
    /// A FATAL the server answered a statement with (the connection ends
    /// then, and its task has nothing more to say).
    fatal: Mutex<Option<connect::Ended>>,
    driver: connect::Drain,
    /// Cancels the running statement the way the connection went (TLS or not).
    canceller: connect::Canceller,
    recorder: Recorder,
    tx: Mutex<Tx>,
    notices: Arc<AtomicUsize>,
    /// The NOTIFYs the session has heard.
    notifies: Arc<Mutex<Vec<Notification>>>,
    deadline: Duration,
    stepper: Option<Arc<Stepper>>,
}

struct Pooled {
    setup: String,
    settings: Mutex<Settings>,
}

/// The session-level SETs a session ran, as a transaction pooler loses them:
/// those in force (sent again with every transaction), and those run in the
/// open transaction, in force only once it commits.
#[derive(Debug, Default)]
struct Settings {
    kept: Vec<String>,
    pending: Vec<String>,
}

impl Settings {
    /// Follows a message's statements: the session was in `tx` when it was
    /// sent, its first `ran` statements succeeded, and one after them
    /// failed if `failed`. SETs outside a transaction block commit with the
    /// message (an implicit transaction) unless it fails; statements before
    /// a BEGIN in the same message join its transaction.
    fn follow(&mut self, sql: &str, tx: Tx, ran: usize, failed: bool) {
        let mut open = tx != Tx::Idle;
        let mut aborted = tx == Tx::Failed;
        let mut implicit = Vec::new();
        for stmt in sql_lexer::statements(sql).into_iter().take(ran) {
            match sql_lexer::tx_effect(stmt) {
                TxEffect::Begin => {
                    self.pending.append(&mut implicit);
                    open = true;
                }
                effect @ (TxEffect::End | TxEffect::Chain) => {
                    let rollback = matches!(
                        sql_lexer::words(stmt, 1).first().map(String::as_str),
                        Some("ROLLBACK" | "ABORT")
                    );
                    let pending = std::mem::take(&mut self.pending);
                    if !rollback && !aborted {
                        self.apply(pending);
                    }
                    // AND CHAIN: the next transaction is open at once.
                    (open, aborted) = (effect == TxEffect::Chain, false);
                }
                TxEffect::None => {}
            }
            if sql_lexer::setting_effect(stmt) != SettingEffect::None {
                let list = if open { &mut self.pending } else { &mut implicit };
                list.push(stmt.trim().to_string());
            }
        }
        if !failed {
            self.apply(implicit);
        }
    }

    fn apply(&mut self, sets: Vec<String>) {
        for s in sets {
            match sql_lexer::setting_effect(&s) {
                SettingEffect::ResetAll => self.kept.clear(),
                _ => self.kept.push(s),
            }
        }
    }
}

/// A statement sent and not yet answered.
pub struct Sent {
    pub at: Instant,
    rx: Option<oneshot::Receiver<(Answer, Instant)>>,
    answer: Option<(Answer, Instant)>,
}

impl Sent {
    /// A statement whose answer will come through the sender (a scripted
    /// server's, in the scheduler's unit tests).
    pub fn channel() -> (Sent, oneshot::Sender<(Answer, Instant)>) {
        let (tx, rx) = oneshot::channel();
        let sent = Sent {
            at: Instant::now(),
            rx: Some(rx),
            answer: None,
        };
        (sent, tx)
    }

    /// The answer and when it came, if it is here (without waiting or taking it).
    pub fn peek(&mut self) -> Option<(&Answer, Instant)> {
        if self.ready() {
            self.answer.as_ref().map(|(a, at)| (a, *at))
        } else {
            None
        }
    }

    /// Whether the answer is here (without waiting).
    pub fn ready(&mut self) -> bool {
        if self.answer.is_none()
            && let Some(rx) = &mut self.rx
        {
            match rx.try_recv() {
                Ok(a) => {
                    self.answer = Some(a);
                    self.rx = None;
                }
                Err(oneshot::error::TryRecvError::Closed) => self.rx = None,
                Err(oneshot::error::TryRecvError::Empty) => {}
            }
        }
        self.answer.is_some()
    }

    /// Waits at most `d` for the answer; says whether it is here. An answer
    /// that can no longer come (the task sending it is gone, as when a run
    /// is interrupted) is waited for as one not come yet, `d` in full (a
    /// caller asking in a loop does not spin); its receiver, completed, is
    /// not polled again (tokio panics then).
    pub async fn ready_within(&mut self, d: Duration) -> bool {
        if self.ready() {
            return true;
        }
        let until = tokio::time::Instant::now() + d;
        if let Some(rx) = &mut self.rx {
            match tokio::time::timeout_at(until, rx).await {
                Ok(Ok(a)) => {
                    self.answer = Some(a);
                    self.rx = None;
                    return true;
                }
                Ok(Err(_)) => self.rx = None,
                Err(_) => return false,
            }
        }
        tokio::time::sleep_until(until).await;
        false
    }

    /// The answer and when it came (call once [`Sent::ready`] says so).
    pub fn take(&mut self) -> Option<(Answer, Instant)> {
        self.answer.take()
    }
}

/// How a session reaches its server, which decides how its settings travel
/// and how its backend is found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Route {
    /// Straight to the server: the run's settings (search_path, neutral
    /// SETs) are set when it opens, and it asks its backend's pid.
    Direct,
    /// Through a transaction pooler: nothing set would stay, so the session
    /// sends its state with every transaction, and its backends are looked
    /// up by application_name.
    Pooled,
    /// As a plain client of a pooler would open: no search_path, no SETs.
    Raw,
    /// Through a load balancer (pgpool-II), which sends a query of several
    /// statements to the primary only and may take any statement it does
    /// not balance (a SET, pg_backend_pid()) for a write: the settings go in
    /// the startup packet, and the session does not ask its pid (the
    /// variant's close finds its backends by application_name).
    Balanced,
}

/// Opens a variant's sessions on their own connections and keeps the list of
/// their backends, so it can name them and make sure they are gone at the end.
#[derive(Clone)]
pub struct Opener {
    pg: Config,
    /// The schema put first on every session's search_path.
    schema: Option<String>,
    /// SET statements every session runs when it opens (the neutral settings).
    settings: String,
    /// application_name prefix, the session's name follows it:
    /// `lab:<schema>:<scenario>/<variant>:`, or `<PGAPPNAME>/` for a spec file.
    app: String,
    label: String,
    recorder: Recorder,
    deadline: Duration,
    stepper: Option<Arc<Stepper>>,
    opened: Arc<Mutex<Vec<(String, i32)>>>,
    /// isolationtester's transcript, for `lab spec --format isolation`.
    transcript: Option<Arc<Transcript>>,
    /// The most sessions a variant may open (`--max-connections` less the control connection).
    max_sessions: Option<usize>,
    /// How the sessions reach their server.
    route: Route,
    /// The run's control connection, on the server the sessions reach
    /// (none for sessions elsewhere): it ends the backend of a session that
    /// failed after its handshake.
    control: Option<Arc<tokio_postgres::Client>>,
}

/// A session's connection, its backend's pid and when it started (0 and
/// none where the route does not keep the session's own backend).
type Connected = (connect::Conn, i32, Option<String>);

impl Opener {
    /// The one constructor: sessions of `env`'s run (through lab's pooler
    /// where it has one), named `<app><session>`, recorded by `recorder`.
    pub fn new(env: &Env, app: String, label: String, recorder: Recorder) -> Opener {
        Opener {
            pg: env.session_pg(),
            schema: (!env.schema.is_empty()).then(|| env.schema.clone()),
            settings: env.settings.clone(),
            app,
            label,
            recorder,
            deadline: env.step_deadline,
            stepper: env.stepper.clone(),
            opened: Arc::default(),
            transcript: None,
            max_sessions: env.max_connections.map(|n| n.saturating_sub(1)),
            route: if env.pooled_sessions() {
                Route::Pooled
            } else {
                Route::Direct
            },
            control: Some(env.control.clone()),
        }
    }

    /// Ends the backend a session that failed after its handshake left on
    /// the server (its setup or first question went unanswered: the server
    /// would keep it, idle, for as long as TCP keepalive takes). Only that
    /// backend: its pid from the handshake, its application_name checked.
    async fn end_stray(&self, e: &anyhow::Error, app: &str) {
        let (Some(control), Some(pid)) = (&self.control, connect::stray_backend(e)) else {
            return;
        };
        if self.route != Route::Direct {
            // The handshake's pid is the pooler's, not a backend's.
            return;
        }
        let _ = tokio::time::timeout(self.deadline, super::env::terminate_via(control, &[pid], app)).await;
    }

    /// isolationtester's transcript gets what the sessions receive.
    pub fn with_transcript(mut self, t: Arc<Transcript>) -> Opener {
        self.transcript = Some(t);
        self
    }

    /// Sessions of the same variant on another server (a standby, a pooler
    /// of the variant's own): not through lab's pooler, not counted against
    /// `--max-connections`, their backends listed apart.
    pub fn elsewhere(&self, pg: Config) -> Opener {
        Opener {
            pg,
            opened: Arc::default(),
            max_sessions: None,
            route: self.unpooled(),
            control: None,
            ..self.clone()
        }
    }

    /// This opener's route, not through lab's pooler.
    fn unpooled(&self) -> Route {
        match self.route {
            Route::Pooled => Route::Direct,
            other => other,
        }
    }

    /// The same variant's sessions reaching the server another way (a fault
    /// proxy): not through lab's pooler, listed with the others (the
    /// variant's end makes sure they are gone too).
    pub fn via(&self, pg: Config) -> Opener {
        Opener {
            pg,
            route: self.unpooled(),
            ..self.clone()
        }
    }

    /// Sessions through a load balancer (see `balanced`): reached another
    /// way, as [`Opener::via`].
    pub fn balanced(&self, pg: Config) -> Opener {
        Opener {
            route: Route::Balanced,
            ..self.via(pg)
        }
    }

    /// Sessions that open as a plain client would: no search_path, no SETs
    /// (a client of a transaction pooler, whose SETs would not stay).
    pub fn raw(mut self) -> Opener {
        self.route = Route::Raw;
        self
    }

    /// The application_name prefix of this opener's sessions.
    pub fn app(&self) -> &str {
        &self.app
    }

    /// Whether sessions go through a transaction pooler.
    pub fn pooled(&self) -> bool {
        self.route == Route::Pooled
    }

    /// The most sessions a variant may open, if capped.
    pub fn max_sessions(&self) -> Option<usize> {
        self.max_sessions
    }

    pub fn recorder(&self) -> &Recorder {
        &self.recorder
    }

    /// Opens session `name`, tagged `<app><name>`; its NOTICEs go to the timeline.
    pub async fn open(&self, name: &str) -> Result<Session> {
        self.open_with(name, true).await
    }

    /// Opens lab's own connection for a variant (a spec's setup and
    /// teardown): what the server tells it is not part of the story.
    pub async fn open_quiet(&self, name: &str) -> Result<Session> {
        self.open_with(name, false).await
    }

    async fn open_with(&self, name: &str, record_notices: bool) -> Result<Session> {
        let notices = Arc::new(AtomicUsize::new(0));
        let notifies: Arc<Mutex<Vec<Notification>>> = Arc::default();
        let sink = self.sink(name, record_notices, notices.clone(), notifies.clone());
        self.take_slot(name)?;
        let setup = connect::session_setup(self.schema.as_deref(), &self.settings);
        let app = connect::app_name(&format!("{}{name}", self.app));
        let connected = self.connect(name, sink, &setup, &app).await;
        if let Err(e) = &connected {
            self.end_stray(e, &app).await;
        }
        let (conn, pid, since) = self.fill_slot(name, connected)?;
        self.recorder
            .connected(name, crate::report::Connection::of(conn.tls.clone()));
        let end = conn.end_watch();
        Ok(Session {
            inner: Arc::new(Inner {
                name: name.to_string(),
                label: self.label.clone(),
                pid: AtomicI32::new(pid),
                since,
                app,
                pooled: (self.route == Route::Pooled).then(|| Pooled {
                    setup,
                    settings: Mutex::default(),
                }),
                client: conn.client,
                canceller: conn.cancel,
                end,
                fatal: Mutex::default(),
                driver: conn.driver,
                recorder: self.recorder.clone(),
                tx: Mutex::new(Tx::Idle),
                notices,
                notifies,
                deadline: self.deadline,
                stepper: self.stepper.clone(),
            }),
        })
    }

    /// Where session `name`'s asynchronous messages go: NOTIFYs to its
    /// list, NOTICEs to the timeline (counted) when `record_notices`, and
    /// both to isolationtester's transcript when there is one.
    fn sink(
        &self,
        name: &str,
        record_notices: bool,
        count: Arc<AtomicUsize>,
        heard: Arc<Mutex<Vec<Notification>>>,
    ) -> connect::NoticeSink {
        let (recorder, name) = (self.recorder.clone(), name.to_string());
        let transcript = self.transcript.clone();
        Box::new(move |m: connect::Async<'_>| {
            // lab's own connections (a spec's setup) are not isolationtester's sessions.
            if let Some(t) = transcript.as_ref().filter(|_| record_notices) {
                t.arrived(&name, &m);
            }
            let n = match m {
                connect::Async::Notify(n) => {
                    heard.lock().unwrap().push(Notification {
                        channel: n.channel().to_string(),
                        payload: n.payload().to_string(),
                        from: n.process_id(),
                    });
                    return;
                }
                connect::Async::Notice(n) => n,
            };
            if !record_notices {
                return;
            }
            count.fetch_add(1, Ordering::SeqCst);
            let mut e = Entry::new(
                recorder.now_ms(),
                &name,
                StepResult::Notice,
                // Its DETAIL too: VACUUM VERBOSE before 14 says there how many dead rows it kept.
                Phrase::Plain(match n.detail() {
                    Some(d) => format!("{}: {} (DETAIL: {d})", n.severity(), n.message()),
                    None => format!("{}: {}", n.severity(), n.message()),
                }),
            );
            e.sqlstate = Some(n.code().code().to_string());
            recorder.push(e);
        })
    }

    /// Takes session `name`'s slot before connecting (pid 0 until known),
    /// so sessions opened at once cannot all pass the cap.
    fn take_slot(&self, name: &str) -> Result<()> {
        let mut opened = self.opened.lock().unwrap();
        if let Some(max) = self.max_sessions
            && opened.len() >= max
        {
            bail!(msg::over_cap(&self.label, name, max + 1));
        }
        opened.push((name.to_string(), 0));
        Ok(())
    }

    /// Session `name`'s slot gets its backend's pid, or goes if it did not connect.
    fn fill_slot(&self, name: &str, connected: Result<Connected>) -> Result<Connected> {
        let mut opened = self.opened.lock().unwrap();
        let slot = opened.iter().position(|(n, p)| n == name && *p == 0);
        match connected {
            Ok((conn, pid, since)) => {
                if let Some(i) = slot {
                    opened[i].1 = pid;
                }
                Ok((conn, pid, since))
            }
            Err(e) => {
                if let Some(i) = slot {
                    opened.remove(i);
                }
                Err(e)
            }
        }
    }

    /// Connects session `name` by this opener's route: its backend's pid
    /// and start (read back where the route keeps the session's own
    /// backend; 0 and none through a pooler or a balancer).
    async fn connect(&self, name: &str, sink: connect::NoticeSink, setup: &str, app: &str) -> Result<Connected> {
        let what = || msg::open(&self.label, name);
        if matches!(self.route, Route::Pooled | Route::Raw) {
            // Nothing set now would stay: the setup goes with each transaction.
            let conn = connect::connect(&self.pg, app, None, Some(sink)).await.ctx(what)?;
            return Ok((conn, 0, None));
        }
        if self.route == Route::Balanced {
            // The settings travel in the startup packet, which pgpool-II
            // hands to both servers: no statement it would take for a write.
            let mut pg = self.pg.clone();
            let ours = connect::startup_options(self.schema.as_deref(), &self.settings);
            pg.options(&match self.pg.get_options() {
                Some(given) => format!("{given} {ours}"),
                None => ours,
            });
            let conn = connect::connect(&pg, app, None, Some(sink)).await.ctx(what)?;
            return Ok((conn, 0, None));
        }
        let conn = connect::connect(&self.pg, app, Some(setup), Some(sink))
            .await
            .ctx(what)?;
        // Within the deadline, as every statement: a connection that
        // went silent after its handshake must not hold the run.
        const WHO: &str = "/* lab */ SELECT pg_backend_pid(), extract(epoch FROM now())::text";
        let silent = || anyhow::anyhow!(msg::no_answer(msg::quoted(WHO), secs(self.deadline)));
        let row = match tokio::time::timeout(self.deadline, conn.client.query_one(WHO, &[])).await {
            Ok(r) => r.ctx(what)?,
            Err(_) => {
                let pid = connect::handshake_pid(&conn.client).await;
                return Err(connect::Stray::wrap(pid, Err::<(), _>(silent()).ctx(what).unwrap_err()));
            }
        };
        Ok((conn, row.get(0), Some(row.get(1))))
    }

    /// Opens several sessions at once (connections are made concurrently).
    pub async fn open_all(&self, names: &[&str]) -> Result<Vec<Session>> {
        super::join_all_ordered(names.iter().map(|n| self.open(n)))
            .await
            .into_iter()
            .collect()
    }

    pub fn pids(&self) -> Vec<(String, i32)> {
        self.opened.lock().unwrap().clone()
    }
}

impl Session {
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    pub fn pid(&self) -> i32 {
        self.inner.pid.load(Ordering::SeqCst)
    }

    /// The session's backend as a signal may name it: its pid and, read
    /// with the pid, the server's clock then (see [`Inner::since`]).
    pub fn backend(&self) -> (i32, Option<&str>) {
        (self.pid(), self.inner.since.as_deref())
    }

    /// Whether the session reaches the server through a transaction pooler.
    pub fn pooled(&self) -> bool {
        self.inner.pooled.is_some()
    }

    /// Behind a transaction pooler, outside a transaction: what puts the
    /// session's state back on whichever server connection runs the next
    /// statement, in the same message (the pooler keeps one server
    /// connection for a message). `RESET ALL` first (another client's SETs
    /// may be there; role and database defaults come back with it, the
    /// setup overrides them), and the role and session authorization,
    /// which `RESET ALL` leaves (another session's `SET ROLE` would
    /// otherwise run this one's statements), then the application_name that wait detection
    /// looks for. It ends with `COMMIT`: several statements in one message
    /// share an implicit transaction, whose isolation level and read-only
    /// state were fixed when it began, before the SETs; the session's
    /// statements then begin a transaction of their own, under the
    /// settings. (That COMMIT would warn "there is no transaction in
    /// progress": SET LOCAL silences it for the prelude's transaction only.)
    fn prelude(&self, sql: &str) -> Option<String> {
        let pooled = self.inner.pooled.as_ref()?;
        if self.tx() != Tx::Idle {
            // In a transaction the pooler keeps the server connection.
            return None;
        }
        let statements = sql_lexer::statements(sql);
        if statements.iter().any(|s| sql_lexer::outside_transaction(s))
            || matches!(statements.as_slice(), [one] if sql_lexer::block_sensitive(one))
        {
            // It cannot run in the transaction block the SETs would open,
            // or would do something else there (lab's files name the
            // schema for such statements; the pooler gives the server
            // connection the session's application_name).
            return None;
        }
        let kept: String = pooled
            .settings
            .lock()
            .unwrap()
            .kept
            .iter()
            .map(|s| format!("{s};"))
            .collect();
        Some(format!(
            "RESET ALL;RESET SESSION AUTHORIZATION;RESET ROLE;SET application_name = {};{}{kept}\
             SET LOCAL client_min_messages = error;COMMIT;",
            sql_lexer::literal(&self.inner.app),
            pooled.setup
        ))
    }

    /// `sql` as sent: with the prelude ahead of it where one is needed,
    /// and how many statements of the prelude to leave out of the answer.
    pub fn wrapped(&self, sql: &str) -> (String, usize) {
        match self.prelude(sql) {
            Some(p) => (format!("{p}{sql}"), sql_lexer::statements(&p).len()),
            None => (sql.to_string(), 0),
        }
    }

    /// Follows the session-level SETs among the first `ran` statements of
    /// `sql` (sent in transaction state `tx`; a later one failed if `failed`).
    fn keep_settings(&self, sql: &str, tx: Tx, ran: usize, failed: bool) {
        if let Some(pooled) = &self.inner.pooled {
            pooled.settings.lock().unwrap().follow(sql, tx, ran, failed);
        }
    }

    /// A simple query on the session's connection, not recorded (probes,
    /// an API's statements that it files itself), with the prelude where needed.
    pub async fn simple(&self, sql: &str) -> Result<Vec<Res>, tokio_postgres::Error> {
        let (text, skip) = self.wrapped(sql);
        let msgs = self.inner.client.simple_query(&text).await?;
        Ok(after_prelude(results_of(&text, &msgs), skip))
    }

    pub fn app(&self) -> &str {
        &self.inner.app
    }

    /// The raw client, for loops that use prepared statements and are
    /// summarised instead of recorded statement by statement.
    pub fn client(&self) -> &Client {
        &self.inner.client
    }

    pub fn recorder(&self) -> &Recorder {
        &self.inner.recorder
    }

    pub fn tx(&self) -> Tx {
        *self.inner.tx.lock().unwrap()
    }

    /// The run's deadline for any one wait.
    pub fn deadline(&self) -> Duration {
        self.inner.deadline
    }

    /// Reads whatever the server has already sent the session (its NOTICEs
    /// reach the timeline and the transcript now).
    pub fn drain(&self) {
        self.inner.driver.now();
    }

    /// NOTICEs received so far.
    pub fn notices(&self) -> usize {
        self.inner.notices.load(Ordering::SeqCst)
    }

    /// Where a statement ran, for messages: scenario/variant, session, SQL.
    pub fn at(&self, sql: &str) -> Text {
        msg::at(&self.inner.label, &self.inner.name, one_line(sql))
    }

    /// Under `--step`, shows the statement (and why) and waits for the person.
    pub async fn prompt(&self, step: Option<&str>, sql: &str, why: Option<String>) {
        if let Some(st) = &self.inner.stepper {
            st.before(&self.inner.name, step, sql, why, self.tx() == Tx::Failed)
                .await;
        }
    }

    /// Whether a person is stepping through statements right now.
    pub fn stepping(&self) -> bool {
        self.inner.stepper.as_ref().is_some_and(|s| s.active())
    }

    /// Sends `sql` without waiting for its answer.
    pub fn send(&self, sql: &str) -> Sent {
        let (tx, rx) = oneshot::channel();
        let (session, text) = (self.clone(), sql.to_string());
        let at = Instant::now();
        tokio::spawn(async move {
            let answer = session.query(&text).await;
            let _ = tx.send((answer, Instant::now()));
        });
        Sent {
            at,
            rx: Some(rx),
            answer: None,
        }
    }

    async fn query(&self, sql: &str) -> Answer {
        let (text, skip) = self.wrapped(sql);
        let tx = self.tx();
        let ours = |msgs: &[SimpleQueryMessage]| after_prelude(results_of(&text, msgs), skip);
        let mut msgs = Vec::new();
        // Message by message: the results before a failing statement are kept.
        let outcome = match self.inner.client.simple_query_raw(&text).await {
            Ok(stream) => {
                let mut stream = std::pin::pin!(stream);
                loop {
                    match futures_util::StreamExt::next(&mut stream).await {
                        Some(Ok(m)) => msgs.push(m),
                        Some(Err(e)) => break Err(e),
                        None => break Ok(()),
                    }
                }
            }
            Err(e) => Err(e),
        };
        match outcome {
            Ok(()) => {
                let results = ours(&msgs);
                self.keep_settings(sql, tx, results.len(), false);
                Ok(results)
            }
            Err(e) => {
                let mut e = self.failure(e).await;
                e.before = ours(&msgs);
                self.keep_settings(sql, tx, e.before.len(), true);
                if !e.connection_lost {
                    // The server sends an ERROR before it aborts the
                    // transaction: its locks are released only after. An
                    // empty query is answered after that abort (after the
                    // failed statement's ReadyForQuery), as libpq's
                    // PQgetResult would wait for it: a step is complete when
                    // the server is ready for the next one.
                    let _ = self.inner.client.simple_query("").await;
                }
                Err(e)
            }
        }
    }

    /// What went wrong, in the server's words where it gave any.
    async fn failure(&self, e: tokio_postgres::Error) -> PgError {
        self.keep_fatal(&e);
        if let Some(db) = e.as_db_error() {
            let fatal = matches!(db.severity(), "FATAL" | "PANIC");
            return PgError {
                code: Some(db.code().code().to_string()),
                severity: db.severity().to_string(),
                message: db.message().to_string(),
                detail: db.detail().map(str::to_string),
                hint: db.hint().map(str::to_string),
                context: db.where_().map(str::to_string),
                position: db.position().map(|p| match p {
                    tokio_postgres::error::ErrorPosition::Original(n) => super::answer::ErrorPos::Statement(*n),
                    tokio_postgres::error::ErrorPosition::Internal { position, query } => {
                        super::answer::ErrorPos::Internal(*position, query.clone())
                    }
                }),
                connection_lost: fatal || e.is_closed(),
                before: Vec::new(),
            };
        }
        // The connection is gone: the FATAL the server sent before closing it
        // (a timeout, a terminated backend) arrived while the session was idle.
        match self.inner.end.ended(Duration::from_secs(1)).await {
            Some(end) => PgError {
                code: Some(end.code),
                severity: end.severity,
                message: end.message,
                connection_lost: true,
                ..PgError::default()
            },
            None => PgError {
                code: None,
                severity: String::new(),
                message: format!("{e:#}"),
                connection_lost: true,
                ..PgError::default()
            },
        }
    }

    /// Tracks the transaction through an answered step's statements; says
    /// whether the step left a transaction it began open (to read its level back).
    pub fn track(&self, sql: &str, answer: &mut Answer) -> bool {
        let mut tx = self.inner.tx.lock().unwrap();
        let before = *tx;
        let mut began = false;
        for stmt in sql_lexer::statements(sql) {
            match sql_lexer::tx_effect(stmt) {
                TxEffect::Begin | TxEffect::Chain => {
                    *tx = Tx::Open;
                    began = true;
                }
                TxEffect::End => {
                    *tx = Tx::Idle;
                    began = false;
                }
                TxEffect::None => {}
            }
        }
        match answer {
            Ok(results) => {
                // COMMIT of a failed transaction: the server rolls it back (tag ROLLBACK).
                if before == Tx::Failed
                    && let Some(last) = results.last_mut()
                    && last.tag == "COMMIT"
                {
                    last.tag = "ROLLBACK".into();
                }
            }
            Err(e) if e.connection_lost => *tx = Tx::Idle,
            Err(_) => {
                if before != Tx::Idle || began {
                    *tx = Tx::Failed;
                }
                began = false;
            }
        }
        began && *tx == Tx::Open
    }

    /// The isolation level of the transaction the session is in, read back from
    /// the server (SHOW takes no snapshot, so it changes nothing). Marked as
    /// lab's own (the lock view does not show it as the session's statement)
    /// where the session reaches the server itself, its pid read at its
    /// handshake: pgpool-II routes a statement opening with a comment elsewhere.
    pub async fn isolation(&self) -> Option<String> {
        let sql = if self.inner.since.is_some() {
            "/* lab */ SHOW transaction_isolation"
        } else {
            "SHOW transaction_isolation"
        };
        connect::simple_value(&self.inner.client, sql).await.ok().flatten()
    }

    /// Runs `sql` to its answer within `deadline`, without recording it:
    /// the answer and when it came. Past the deadline the statement is
    /// cancelled and there is none.
    pub async fn answer_within(&self, sql: &str, deadline: Duration) -> Option<(Answer, Instant)> {
        let mut sent = self.send(sql);
        if !sent.ready_within(deadline).await {
            self.cancel().await;
            return None;
        }
        sent.take()
    }

    /// Asks the server to cancel the session's running statement (best effort).
    pub async fn cancel(&self) {
        self.inner.canceller.cancel().await;
    }

    /// Runs a statement to its answer (within the deadline) and records it:
    /// whatever the server answered, errors too, comes back. A statement
    /// that does not answer, or a connection lost to the outside world,
    /// ends the variant.
    pub async fn run(&self, step: &str, sql: &str) -> Result<Answer> {
        self.prompt(Some(step), sql, None).await;
        let Some((mut answer, done)) = self.answer_within(sql, self.inner.deadline).await else {
            return Err(Deviation(msg::no_answer(self.at(sql), secs(self.inner.deadline))).into());
        };
        let began = self.track(sql, &mut answer);
        let isolation = if began { self.isolation().await } else { None };
        self.inner
            .recorder
            .answer(done, self.name(), Some(step), sql, &answer, None, isolation);
        match answer {
            Err(e) if e.lost_to_outside() => Err(msg::connection_lost(self.at(sql), e.line()).into()),
            answer => Ok(answer),
        }
    }

    /// Runs a statement to its answer (within the deadline) and records it.
    /// Listed SQLSTATEs are answers; any other error ends the variant as a
    /// deviation from the documented behaviour.
    pub async fn exec_allow(&self, step: &str, sql: &str, allowed: &[&str]) -> Result<Answer> {
        match self.run(step, sql).await? {
            Ok(r) => Ok(Ok(r)),
            Err(e) if e.code.as_deref().is_some_and(|c| allowed.contains(&c)) => Ok(Err(e)),
            Err(e) => Err(Deviation(msg::unexpected(self.at(sql), e.line())).into()),
        }
    }

    /// Runs one statement with typed parameters in the extended protocol
    /// (Parse, Bind, Execute of the unnamed statement in one round trip),
    /// within the deadline, and records it; `shown` is how the timeline
    /// writes it. Errors the server answered come back.
    pub async fn typed(
        &self,
        step: &str,
        sql: &str,
        params: &[(&(dyn tokio_postgres::types::ToSql + Sync), tokio_postgres::types::Type)],
        shown: &str,
    ) -> Result<Answer> {
        self.prompt(Some(step), shown, None).await;
        let query = self.inner.client.query_typed(sql, params);
        let Ok(rows) = tokio::time::timeout(self.inner.deadline, query).await else {
            self.cancel().await;
            return Err(Deviation(msg::no_answer(self.at(shown), secs(self.inner.deadline))).into());
        };
        let answer = match rows {
            Ok(rows) => Ok(vec![super::answer::rows_of(&rows)]),
            Err(e) => Err(self.failure(e).await),
        };
        self.inner
            .recorder
            .answer(Instant::now(), self.name(), Some(step), shown, &answer, None, None);
        match answer {
            Err(e) if e.lost_to_outside() => Err(msg::connection_lost(self.at(shown), e.line()).into()),
            answer => Ok(answer),
        }
    }

    /// One value (the first column of the first row) that `sql` reads, not
    /// recorded (lab's own look at the server through this session), within
    /// the deadline; what went wrong is framed with `what`.
    /// On a standby such a read can be cancelled by a conflict with
    /// recovery; it changes nothing, so it is asked again (the timeline
    /// says so), after a ROLLBACK if it was in a transaction the
    /// cancellation left aborted.
    pub async fn value(&self, sql: &str, what: impl Fn() -> Text) -> Result<Option<String>> {
        let deadline = Instant::now() + self.inner.deadline;
        let mut cancelled = false;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match tokio::time::timeout(left, connect::simple_value(&self.inner.client, sql)).await {
                Ok(Err(e)) if recovery_conflict(&e) && !self.keep_fatal(&e) && Instant::now() < deadline => {
                    cancelled = true;
                    if let Some(db) = e.as_db_error() {
                        self.note(msg::read_again(db.severity(), db.code().code(), db.message()));
                    }
                    continue;
                }
                Ok(Err(e))
                    if cancelled
                        && e.code() == Some(&tokio_postgres::error::SqlState::IN_FAILED_SQL_TRANSACTION)
                        && Instant::now() < deadline =>
                {
                    cancelled = false;
                    let _ = self.inner.client.batch_execute("ROLLBACK").await;
                    continue;
                }
                Ok(r) => {
                    return r.map_err(|e| {
                        self.keep_fatal(&e);
                        connect::sql_error(e, what())
                    });
                }
                Err(_) => {
                    self.cancel().await;
                    return Err(Deviation(msg::no_answer(self.at(sql), secs(self.inner.deadline))).into());
                }
            }
        }
    }

    /// Asks a yes-or-no question (one value, not recorded) until the server
    /// says yes or `within` has passed; whether it said yes.
    pub async fn until(&self, sql: &str, within: Duration, what: impl Fn() -> Text) -> Result<bool> {
        super::until_yes(within, || self.value(sql, &what)).await
    }

    /// Sends `sql` and waits (within the deadline) until the server says,
    /// through `watcher` (a connection to the same server), that it waits
    /// for a lock one of `on` holds; records the wait. A statement that
    /// answers without waiting, or never waits, is a deviation.
    pub async fn send_until_waiting(
        &self,
        watcher: &Client,
        step: &str,
        sql: &str,
        on: &[&Session],
    ) -> Result<Waiting> {
        self.prompt(Some(step), sql, None).await;
        let mut sent = self.send(sql);
        let deadline = Instant::now() + self.inner.deadline;
        loop {
            if let Some((mut answer, at)) = sent.ready().then(|| sent.take()).flatten() {
                self.track(sql, &mut answer);
                self.inner
                    .recorder
                    .answer(at, self.name(), Some(step), sql, &answer, None, None);
                return Err(Deviation(msg::did_not_wait(self.at(sql))).into());
            }
            // Behind a transaction pooler, the backends serving them now.
            let mut all = vec![self.clone()];
            all.extend(on.iter().map(|s| (*s).clone()));
            refresh_pids(watcher, &all).await.ctx(msg::read_blocking)?;
            let blockers: Vec<i32> = watcher
                .query_one("SELECT pg_blocking_pids($1)", &[&self.pid()])
                .await
                .ctx(msg::read_blocking)?
                .get(0);
            let by: Vec<String> = on
                .iter()
                .filter(|s| blockers.contains(&s.pid()))
                .map(|s| s.name().to_string())
                .collect();
            if !by.is_empty() {
                let waited = super::observe::Waited {
                    by,
                    kind: crate::report::WaitKind::Lock,
                    lock: None,
                };
                self.inner
                    .recorder
                    .waiting(sent.at, self.name(), Some(step), sql, &waited);
                return Ok(Waiting {
                    session: self.clone(),
                    step: step.to_string(),
                    sql: sql.to_string(),
                    sent,
                    waited,
                    answered: None,
                });
            }
            if Instant::now() > deadline {
                self.cancel().await;
                return Err(Deviation(msg::no_answer(self.at(sql), secs(self.inner.deadline))).into());
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }

    /// The NOTIFYs the session has heard so far.
    pub fn notifications(&self) -> Vec<Notification> {
        self.drain();
        self.inner.notifies.lock().unwrap().clone()
    }

    /// Runs a statement that must succeed.
    pub async fn exec(&self, step: &str, sql: &str) -> Result<Vec<Res>> {
        Ok(self.exec_allow(step, sql, &[]).await?.expect("no error is allowed"))
    }

    /// Runs a statement and returns its last result set.
    pub async fn rows(&self, step: &str, sql: &str) -> Result<ResultSet> {
        let r = self.exec(step, sql).await?;
        last_set(&r)
            .cloned()
            .ok_or_else(|| Deviation(msg::no_rows(self.at(sql))).into())
    }

    /// The integer in column `col` of the statement's first row.
    pub async fn int(&self, step: &str, sql: &str, col: &str) -> Result<i64> {
        let set = self.rows(step, sql).await?;
        int_of(&set, col).ok_or_else(|| Deviation(msg::no_int(self.at(sql), col)).into())
    }

    /// A line of narrative in the session's column (a decision, a back-off).
    pub fn note(&self, text: Text) {
        self.inner.recorder.note(self.name(), text);
    }

    /// What ended the session's connection, as the server said it (the
    /// FATAL it sent before closing), once the connection is closed. A
    /// FATAL that answered a statement has ended it already: the server
    /// closes the connection after one, and the client may not have read
    /// that far yet (on a loaded machine the read of the counters on a
    /// standby met such a FATAL with the connection still open: exit 2).
    pub async fn ended(&self) -> Option<connect::Ended> {
        let kept = self.inner.fatal.lock().unwrap().clone();
        if kept.is_some() {
            return kept;
        }
        if !self.inner.client.is_closed() {
            return None;
        }
        self.inner.end.ended(Duration::from_secs(1)).await
    }

    /// Keeps a FATAL the server answered with; whether `e` is one.
    fn keep_fatal(&self, e: &tokio_postgres::Error) -> bool {
        let Some(db) = e.as_db_error().filter(|db| matches!(db.severity(), "FATAL" | "PANIC")) else {
            return false;
        };
        *self.inner.fatal.lock().unwrap() = Some(db.into());
        true
    }
}

/// A statement cancelled on a standby because WAL replay needed what it held
/// (40001, "canceling statement due to conflict with recovery").
fn recovery_conflict(e: &tokio_postgres::Error) -> bool {
    e.as_db_error()
        .is_some_and(|db| connect::Ended::from(db).recovery_conflict())
}

/// Behind a transaction pooler, the backend each session's transaction runs
/// on, looked up through `control` by the session's application_name (the
/// pooler sets it on the server connection it hands out; the prelude sets
/// it again). A session no backend serves right now gets 0.
pub async fn refresh_pids(control: &Client, sessions: &[Session]) -> Result<(), tokio_postgres::Error> {
    let pooled: Vec<&Session> = sessions.iter().filter(|s| s.pooled()).collect();
    if pooled.is_empty() {
        return Ok(());
    }
    let names: Vec<&str> = pooled.iter().map(|s| s.app()).collect();
    let serving = backends_by_app(control, &names).await?;
    assign_pids(sessions, &serving);
    Ok(())
}

/// Behind a transaction pooler, which backend serves each of `env`'s
/// sessions' transaction now ([`refresh_pids`] on a control connection
/// that reaches the server itself, simple queries through the user's pooler).
pub async fn refresh_pids_of(env: &Env, sessions: &[Session]) -> Result<()> {
    if !env.server.behind_pooler {
        return refresh_pids(&env.control, sessions).await.ctx(msg::read_blocking);
    }
    let names: Vec<String> = sessions
        .iter()
        .filter(|s| s.pooled())
        .map(|s| crate::sql_lexer::literal(s.app()))
        .collect();
    if names.is_empty() {
        return Ok(());
    }
    let sql = format!(
        "SELECT application_name, pid FROM pg_stat_activity \
          WHERE application_name IN ({}) AND state <> 'idle'",
        names.join(",")
    );
    let serving: Vec<(String, i32)> = env
        .pooled_rows(&sql)
        .await?
        .into_iter()
        .filter_map(|r| Some((r.first().cloned()??, r.get(1).cloned()??.parse().ok()?)))
        .collect();
    assign_pids(sessions, &serving);
    Ok(())
}

/// Gives each pooled session the backend serving it in `serving`
/// (application_name, pid), or 0.
fn assign_pids(sessions: &[Session], serving: &[(String, i32)]) {
    for s in sessions.iter().filter(|s| s.pooled()) {
        let pid = serving
            .iter()
            .find(|(app, _)| app == s.app())
            .map_or(0, |(_, pid)| *pid);
        s.inner.pid.store(pid, Ordering::SeqCst);
    }
}

/// The backends running a statement or a transaction for these
/// application_names (as the server stores them), as (name, pid). Behind a
/// transaction pooler an idle server connection may still carry the name
/// of its last client: it serves nobody, and is left out.
pub async fn backends_by_app(control: &Client, apps: &[&str]) -> Result<Vec<(String, i32)>, tokio_postgres::Error> {
    // An unnamed statement: the control connection may be a transaction pooler's client.
    let rows = control
        .query_typed(
            "SELECT application_name, pid FROM pg_stat_activity \
              WHERE application_name = ANY($1) AND state <> 'idle'",
            &[(&apps, tokio_postgres::types::Type::TEXT_ARRAY)],
        )
        .await?;
    Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn followed(steps: &[(&str, Tx, usize, bool)]) -> Vec<String> {
        let mut s = Settings::default();
        for (sql, tx, ran, failed) in steps {
            s.follow(sql, *tx, *ran, *failed);
        }
        s.kept
    }

    /// The sender gone (the task answering was dropped, as on Ctrl-C):
    /// asked again and again, the statement is just not answered. (A
    /// completed receiver polled again panics: phenomena's Ctrl-C test met it.)
    #[tokio::test]
    async fn an_answer_that_cannot_come_is_not_awaited_twice() {
        let (mut sent, tx) = Sent::channel();
        drop(tx);
        for _ in 0..3 {
            assert!(!sent.ready_within(Duration::from_millis(1)).await);
            assert!(!sent.ready());
        }
        assert!(sent.take().is_none());
        let (mut sent, tx) = Sent::channel();
        drop(tx);
        assert!(!sent.ready());
        // Waited for as an answer not come yet: a caller's loop does not spin.
        let from = Instant::now();
        assert!(!sent.ready_within(Duration::from_millis(20)).await);
        assert!(from.elapsed() >= Duration::from_millis(20));
    }

    #[test]
    fn a_pooled_session_keeps_the_sets_that_took_effect() {
        // Outside a transaction: in force at once.
        assert_eq!(
            followed(&[("SET lock_timeout = '1s'", Tx::Idle, 1, false)]),
            ["SET lock_timeout = '1s'"]
        );
        // In a transaction: once it commits, not if it rolls back.
        let committed = [
            ("BEGIN", Tx::Idle, 1, false),
            ("SET deadlock_timeout = '2s'", Tx::Open, 1, false),
            ("COMMIT", Tx::Open, 1, false),
        ];
        assert_eq!(followed(&committed), ["SET deadlock_timeout = '2s'"]);
        let rolled_back = [
            ("BEGIN; SET deadlock_timeout = '2s'", Tx::Idle, 2, false),
            ("ROLLBACK", Tx::Open, 1, false),
        ];
        assert!(followed(&rolled_back).is_empty());
        // A failed transaction's COMMIT rolls it back.
        let failed = [
            ("BEGIN; SET deadlock_timeout = '2s'", Tx::Idle, 2, false),
            ("SELECT 1/0", Tx::Open, 0, true),
            ("COMMIT", Tx::Failed, 1, false),
        ];
        assert!(followed(&failed).is_empty());
        // COMMIT AND CHAIN keeps what the first transaction set; a SET in the
        // chained one goes with its ROLLBACK.
        let chained = [
            (
                "BEGIN; SET deadlock_timeout = '2s'; COMMIT AND CHAIN; SET lock_timeout = '1s'",
                Tx::Idle,
                4,
                false,
            ),
            ("ROLLBACK", Tx::Open, 1, false),
        ];
        assert_eq!(followed(&chained), ["SET deadlock_timeout = '2s'"]);
        // A message that fails outside a transaction block takes its SETs with it.
        assert!(followed(&[("SET lock_timeout = '1s'; SELECT 1/0", Tx::Idle, 1, true)]).is_empty());
        // SET LOCAL ends with its transaction; RESET ALL forgets what was kept.
        let reset = [
            ("SET lock_timeout = '1s'", Tx::Idle, 1, false),
            ("BEGIN; SET LOCAL statement_timeout = '1s'; COMMIT", Tx::Idle, 3, false),
            ("RESET ALL; SET deadlock_timeout = '2s'", Tx::Idle, 2, false),
        ];
        assert_eq!(followed(&reset), ["SET deadlock_timeout = '2s'"]);
    }
}
