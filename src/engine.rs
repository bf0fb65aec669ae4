//! The session engine. Scenario code drives named sessions, each on its own
//! connection; the engine records every statement and outcome with a
//! timestamp, confirms lock waits from the server (never by sleeping), keeps a
//! deadline on every wait, and closes every session when a variant ends so no
//! lock survives it.
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use serde::Serialize;
use serde_json::{Map, Value};
use tokio::task::JoinHandle;
use tokio_postgres::{Client, Config, SimpleQueryMessage};

use crate::db::{self, ServerInfo};
use crate::report::{Entry, Evidence, StepResult, VariantReport, round_ms};
use crate::retry::RetryPolicy;

/// What every variant of a run shares: where to connect, the schema, the
/// deadline, and the control connection that watches the sessions.
pub struct Env {
    pub pg: Config,
    pub schema: String,
    pub wait_timeout: Duration,
    pub control: Client,
    pub server: ServerInfo,
    pub retry: RetryPolicy,
    /// The timeout the timeout-demonstrating steps set (lock_timeout, statement_timeout, ...).
    pub timeout: Duration,
    pub params: crate::config::Params,
    /// Workshop mode (`--step`): pause before each statement.
    pub stepper: Option<Arc<Stepper>>,
}

/// Workshop mode: before each statement a session runs, say which session
/// runs what and why, and wait for Enter ("s" and Enter runs the rest of the
/// variant without stopping). Prompts go to stderr; tables stay on stdout.
#[derive(Default)]
pub struct Stepper {
    skipping: std::sync::atomic::AtomicBool,
    input: tokio::sync::Mutex<()>,
}

impl Stepper {
    /// A new variant: stop before each step again.
    pub fn reset(&self) {
        self.skipping.store(false, Ordering::SeqCst);
    }

    /// Why a session runs `sql`: its statement's text in the language files,
    /// else what its kind of statement does, else a generic line.
    fn why(&self, sql: &str) -> String {
        let texts = crate::i18n::current().texts();
        let ui = &texts.ui;
        let own = crate::sql::origin_of(sql).and_then(|o| texts.say_opt(&format!("why.{o}")));
        if let Some(why) = own {
            return why.to_string();
        }
        let words: Vec<String> = sql.split_whitespace().take(2).map(str::to_ascii_uppercase).collect();
        match words.iter().map(String::as_str).collect::<Vec<_>>()[..] {
            ["ROLLBACK", "TO", ..] => texts.say("why.verb.rollback_to"),
            ["SAVEPOINT", ..] => texts.say("why.verb.savepoint"),
            ["BEGIN" | "START", ..] => ui.step_begin,
            ["COMMIT" | "END", ..] => ui.step_commit,
            ["ROLLBACK" | "ABORT", ..] => ui.step_rollback,
            _ => ui.step_other,
        }
        .to_string()
    }

    pub async fn before(&self, session: &str, sql: &str) {
        if self.skipping.load(Ordering::SeqCst) {
            return;
        }
        // Sessions running concurrently ask one at a time.
        let _turn = self.input.lock().await;
        if self.skipping.load(Ordering::SeqCst) {
            return;
        }
        let ui = &crate::i18n::current().texts().ui;
        let statement = sql.lines().map(str::trim).collect::<Vec<_>>().join(" ");
        eprintln!(
            "\n{}\n    {statement}\n    {}: {}\n{}",
            crate::i18n::fill(ui.step_next, &[("session", &session)]),
            ui.why,
            self.why(sql),
            ui.step_prompt
        );
        let line = tokio::task::spawn_blocking(|| {
            let mut line = String::new();
            std::io::stdin()
                .read_line(&mut line)
                .map(|n| if n == 0 { None } else { Some(line) })
        })
        .await;
        let skip = match line {
            Ok(Ok(Some(l))) => l.trim().eq_ignore_ascii_case("s"),
            // End of input: nobody is there to press Enter any more.
            _ => true,
        };
        if skip {
            self.skipping.store(true, Ordering::SeqCst);
            eprintln!("{}", ui.step_skipping);
        }
    }
}

impl Env {
    pub fn app_prefix(&self) -> String {
        format!("lab:{}:", self.schema)
    }

    /// Terminates every backend of this run's sessions (not the control
    /// connection). Used when a run is interrupted or a variant fails.
    pub async fn terminate_sessions(&self) -> Result<()> {
        self.terminate_sessions_via(&self.control).await
    }

    /// The same through another connection (when the control connection is gone).
    pub async fn terminate_sessions_via(&self, client: &Client) -> Result<()> {
        client
            .execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
                 WHERE application_name LIKE $1 || '%' AND pid <> pg_backend_pid() AND usename = current_user",
                &[&self.app_prefix()],
            )
            .await
            .context(crate::tr!("en.terminate"))?;
        Ok(())
    }

    /// A single integer from the control connection, for the checks after a
    /// variant (these reads are not part of the interleaving, so not recorded).
    pub async fn int(&self, sql: &str) -> Result<i64> {
        let rows = self
            .control
            .simple_query(&format!("SET search_path TO {}; {sql}", self.schema))
            .await;
        let rows = rows.map_err(|e| db::sql_error(e, &crate::tr!("en.check_failed", sql = sql)))?;
        rows.iter()
            .find_map(|m| match m {
                SimpleQueryMessage::Row(r) => r.get(0).map(str::to_string),
                _ => None,
            })
            .with_context(|| crate::tr!("en.check_no_value", sql = sql))?
            .parse()
            .with_context(|| crate::tr!("en.check_no_integer", sql = sql))
    }

    /// Rows from the control connection, as text.
    pub async fn rows(&self, sql: &str) -> Result<Rows> {
        let msgs = self
            .control
            .simple_query(&format!("SET search_path TO {}; {sql}", self.schema))
            .await
            .map_err(|e| db::sql_error(e, &crate::tr!("en.check_failed", sql = sql)))?;
        Ok(Rows::from_messages(&msgs))
    }
}

/// Listed among a step's allowed codes, a connection the server closed (no
/// SQLSTATE reached the client) becomes an observation with this code.
pub const CONNECTION_LOST: &str = "connection-lost";

/// A server error observed by a session.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PgError {
    pub code: String,
    pub message: String,
    pub detail: Option<String>,
    pub context: Option<String>,
}

impl PgError {
    fn line(&self) -> String {
        let mut s = format!("ERROR {}: {}", self.code, self.message);
        if let Some(d) = &self.detail {
            s.push_str(&format!(" | DETAIL: {}", d.replace('\n', " ")));
        }
        if let Some(c) = &self.context {
            s.push_str(&format!(" | CONTEXT: {}", c.replace('\n', " ")));
        }
        s
    }
}

/// What a statement returned, as text (the simple query protocol).
#[derive(Debug, Clone, Default)]
pub struct Rows {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Option<String>>>,
    /// Rows affected (DML) or returned (SELECT), as the server counted them.
    pub count: u64,
}

impl Rows {
    fn from_messages(msgs: &[SimpleQueryMessage]) -> Rows {
        let mut out = Rows::default();
        for m in msgs {
            match m {
                SimpleQueryMessage::Row(r) => {
                    if out.columns.is_empty() {
                        out.columns = r.columns().iter().map(|c| c.name().to_string()).collect();
                    }
                    out.rows
                        .push((0..r.len()).map(|i| r.get(i).map(str::to_string)).collect());
                }
                SimpleQueryMessage::CommandComplete(n) => out.count = *n,
                _ => {}
            }
        }
        out
    }

    pub fn get(&self, row: usize, col: &str) -> Option<&str> {
        let i = self.columns.iter().position(|c| c == col)?;
        self.rows.get(row)?.get(i)?.as_deref()
    }

    /// The integer in column `col` of the first row.
    pub fn int(&self, col: &str) -> Result<i64> {
        let v = self.get(0, col).with_context(|| crate::tr!("en.no_value", col = col))?;
        v.parse()
            .with_context(|| crate::tr!("en.not_integer", col = col, value = v))
    }

    /// psql's command tag for DML and utility statements, the values for a SELECT.
    fn describe(&self, sql: &str, aborted_commit: Option<&str>) -> String {
        let verb = sql.split_whitespace().next().unwrap_or("").to_ascii_uppercase();
        if let Some(rolled_back) = aborted_commit {
            return rolled_back.into();
        }
        match verb.as_str() {
            "UPDATE" | "DELETE" | "MERGE" if self.columns.is_empty() => {
                format!("{verb} {}", self.count)
            }
            "INSERT" if self.columns.is_empty() => format!("INSERT 0 {}", self.count),
            _ if self.columns.is_empty() => verb,
            _ if self.rows.is_empty() => "0 rows".into(),
            // One column over several rows (EXPLAIN): its lines, as psql shows them.
            _ if self.columns.len() == 1 && self.rows.len() > 1 => self
                .rows
                .iter()
                .map(|r| r[0].as_deref().unwrap_or("NULL"))
                .collect::<Vec<_>>()
                .join("\n"),
            _ => {
                let shown: Vec<String> = self
                    .rows
                    .iter()
                    .take(4)
                    .map(|r| {
                        self.columns
                            .iter()
                            .zip(r)
                            .map(|(c, v)| format!("{c}={}", v.as_deref().unwrap_or("NULL")))
                            .collect::<Vec<_>>()
                            .join(", ")
                    })
                    .collect();
                let more = if self.rows.len() > 4 {
                    format!(" (+{} more)", self.rows.len() - 4)
                } else {
                    String::new()
                };
                if self.rows.len() == 1 {
                    shown[0].clone()
                } else {
                    format!("{}{more}", shown.join("; "))
                }
            }
        }
    }
}

/// The variant's timeline, shared by its sessions.
#[derive(Clone)]
struct Log {
    t0: Instant,
    entries: Arc<Mutex<Vec<Entry>>>,
}

impl Log {
    fn push(
        &self,
        at: Instant,
        session: &str,
        sql: &str,
        result: StepResult,
        sqlstate: Option<String>,
        detail: String,
    ) {
        let t_ms = round_ms(at.saturating_duration_since(self.t0).as_secs_f64() * 1000.0);
        let entry = Entry {
            t_ms,
            session: session.to_string(),
            sql: sql.to_string(),
            result,
            sqlstate,
            detail,
        };
        self.entries.lock().unwrap().push(entry);
    }
}

const TX_IDLE: u8 = 0;
const TX_OPEN: u8 = 1;
const TX_FAILED: u8 = 2;

/// One named session on its own connection.
#[derive(Clone)]
pub struct Session {
    inner: Arc<SessionInner>,
}

struct SessionInner {
    name: String,
    label: String,
    client: Client,
    pid: i32,
    log: Log,
    deadline: Duration,
    /// Transaction state, tracked from the statements sent, so a COMMIT of a
    /// failed transaction is shown as the ROLLBACK the server performs.
    tx: AtomicU8,
    stepper: Option<Arc<Stepper>>,
}

type Raw = std::result::Result<Rows, StepFailure>;

enum StepFailure {
    Db(PgError),
    Client(tokio_postgres::Error),
}

impl Session {
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    pub fn pid(&self) -> i32 {
        self.inner.pid
    }

    /// The raw client, for scenarios that need prepared statements in a hot
    /// loop (their steps are then summarised by the scenario, not recorded one by one).
    pub fn client(&self) -> &Client {
        &self.inner.client
    }

    fn where_(&self, sql: &str) -> String {
        crate::tr!(
            "en.where",
            label = self.inner.label,
            session = self.inner.name,
            sql = sql
        )
    }

    async fn raw(&self, sql: &str) -> Raw {
        let r = self.inner.client.simple_query(sql).await;
        match r {
            Ok(msgs) => Ok(Rows::from_messages(&msgs)),
            Err(e) => match e.as_db_error() {
                Some(db) => Err(StepFailure::Db(PgError {
                    code: db.code().code().to_string(),
                    message: db.message().to_string(),
                    detail: db.detail().map(str::to_string),
                    context: db.where_().map(str::to_string),
                })),
                None => Err(StepFailure::Client(e)),
            },
        }
    }

    /// Updates the tracked transaction state and says whether this statement
    /// was a COMMIT of a failed transaction.
    fn track(&self, sql: &str, failed: bool) -> bool {
        let verb = sql.split_whitespace().next().unwrap_or("").to_ascii_uppercase();
        let state = self.inner.tx.load(Ordering::SeqCst);
        let was_failed_commit = matches!(verb.as_str(), "COMMIT" | "END") && state == TX_FAILED;
        let next = match verb.as_str() {
            "BEGIN" | "START" if !failed => TX_OPEN,
            "COMMIT" | "END" | "ROLLBACK" | "ABORT" => TX_IDLE,
            _ if failed && state == TX_OPEN => TX_FAILED,
            _ => state,
        };
        self.inner.tx.store(next, Ordering::SeqCst);
        was_failed_commit
    }

    fn record(&self, sql: &str, r: &Raw, waited: Option<Duration>, at: Instant) {
        let failed = r.is_err();
        let aborted_commit = self.track(sql, failed);
        let ui = &crate::i18n::current().texts().ui;
        let prefix = waited
            .map(|w| {
                crate::i18n::fill(
                    ui.step_after_waiting,
                    &[("ms", &format!("{:.1}", w.as_secs_f64() * 1000.0))],
                )
            })
            .unwrap_or_default();
        let aborted_commit = aborted_commit.then_some(ui.step_commit_rolled_back);
        let (result, sqlstate, detail) = match r {
            Ok(rows) => {
                let res = if waited.is_some() {
                    StepResult::Completed
                } else {
                    StepResult::Ok
                };
                (res, None, format!("{prefix}{}", rows.describe(sql, aborted_commit)))
            }
            Err(StepFailure::Db(e)) => (StepResult::Error, Some(e.code.clone()), format!("{prefix}{}", e.line())),
            Err(StepFailure::Client(e)) => (StepResult::Error, None, format!("{prefix}{e:#}")),
        };
        self.inner.log.push(at, &self.inner.name, sql, result, sqlstate, detail);
    }

    /// An error the step did not allow, with where it happened.
    fn unexpected(&self, sql: &str, e: &PgError) -> anyhow::Error {
        anyhow!(crate::tr!("en.unexpected", at = self.where_(sql), error = e.line()))
    }

    fn judge(&self, sql: &str, r: Raw, allowed: &[&str]) -> Result<std::result::Result<Rows, PgError>> {
        match r {
            Ok(rows) => Ok(Ok(rows)),
            Err(StepFailure::Db(e)) if allowed.contains(&e.code.as_str()) => Ok(Err(e)),
            Err(StepFailure::Db(e)) => Err(self.unexpected(sql, &e)),
            Err(StepFailure::Client(e)) if allowed.contains(&CONNECTION_LOST) => Ok(Err(PgError {
                code: CONNECTION_LOST.to_string(),
                message: format!("{e:#}"),
                detail: None,
                context: None,
            })),
            Err(StepFailure::Client(e)) => Err(anyhow::Error::new(e).context(self.where_(sql))),
        }
    }

    /// Under `--step`, shows `sql` (with why) and waits for the person; else
    /// nothing. The engine's own runs call it; scenarios that drive the raw
    /// client call it before each statement they send.
    pub async fn step(&self, sql: &str) {
        if let Some(st) = &self.inner.stepper {
            st.before(&self.inner.name, sql).await;
        }
    }

    /// Whether a person is stepping through statements right now (so that
    /// showing a statement is worth building its text).
    pub fn stepping(&self) -> bool {
        self.inner
            .stepper
            .as_ref()
            .is_some_and(|st| !st.skipping.load(Ordering::SeqCst))
    }

    /// Runs a statement that must succeed; any error is unexpected.
    pub async fn run(&self, sql: &str) -> Result<Rows> {
        self.run_allow(sql, &[]).await?.map_err(|e| self.unexpected(sql, &e))
    }

    /// Runs a statement whose listed SQLSTATEs are observations, not errors.
    pub async fn run_allow(&self, sql: &str, allowed: &[&str]) -> Result<std::result::Result<Rows, PgError>> {
        self.step(sql).await;
        let r = tokio::time::timeout(self.inner.deadline, self.raw(sql))
            .await
            .map_err(|_| {
                anyhow!(crate::tr!(
                    "en.no_answer",
                    at = self.where_(sql),
                    deadline = secs(self.inner.deadline)
                ))
            })?;
        self.record(sql, &r, None, Instant::now());
        self.judge(sql, r, allowed)
    }

    /// Runs a statement and returns the integer in its first row's column `col`.
    pub async fn int(&self, sql: &str, col: &str) -> Result<i64> {
        self.run(sql).await?.int(col).with_context(|| self.where_(sql))
    }

    /// Sends a statement that may block, without waiting for its answer.
    pub async fn send(&self, sql: &str) -> Pending {
        self.step(sql).await;
        let session = self.clone();
        let text = sql.to_string();
        let sent = Instant::now();
        let handle = tokio::spawn(async move {
            let r = session.raw(&text).await;
            (r, Instant::now())
        });
        Pending {
            session: self.clone(),
            sql: sql.to_string(),
            sent,
            handle,
            seen_waiting: false,
        }
    }

    /// A line of narrative in the session's column (a decision, a back-off).
    pub fn note(&self, text: impl Into<String>) {
        self.inner.log.push(
            Instant::now(),
            &self.inner.name,
            "",
            StepResult::Note,
            None,
            text.into(),
        );
    }
}

/// A statement sent with [`Session::send`].
pub struct Pending {
    session: Session,
    sql: String,
    sent: Instant,
    handle: JoinHandle<(Raw, Instant)>,
    seen_waiting: bool,
}

/// What the server said about a sent statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Wait {
    /// The session's backend waits on a lock held or queued by these sessions.
    Blocked(Vec<String>),
    /// The statement finished without being seen waiting.
    DidNotWait,
}

impl Wait {
    pub fn blocked(&self) -> bool {
        matches!(self, Wait::Blocked(_))
    }
}

impl Pending {
    /// Waits (with the deadline) for the statement's answer; errors are unexpected.
    pub async fn finish(self) -> Result<Rows> {
        let sql = self.sql.clone();
        let session = self.session.clone();
        self.finish_allow(&[]).await?.map_err(|e| session.unexpected(&sql, &e))
    }

    pub async fn finish_allow(self, allowed: &[&str]) -> Result<std::result::Result<Rows, PgError>> {
        Ok(self.finish_timed(allowed).await?.0)
    }

    /// Like [`Pending::finish_allow`], also giving how long the statement took
    /// from being sent to its answer (its wait, when it waited).
    pub async fn finish_timed(self, allowed: &[&str]) -> Result<(std::result::Result<Rows, PgError>, Duration)> {
        let s = &self.session;
        let (r, done) = tokio::time::timeout(s.inner.deadline, self.handle)
            .await
            .map_err(|_| {
                anyhow!(crate::tr!(
                    "en.still_waiting",
                    at = s.where_(&self.sql),
                    deadline = secs(s.inner.deadline)
                ))
            })?
            .map_err(|e| anyhow!("{}: {e}", s.where_(&self.sql)))?;
        let took = done.saturating_duration_since(self.sent);
        let waited = self.seen_waiting.then_some(took);
        // Stamped when the driver takes the answer, so the timeline keeps the
        // order the scenario observed (a COMMIT's reply can arrive after the
        // waiter it released has already finished); the wait itself is exact.
        s.record(&self.sql, &r, waited, Instant::now().max(done));
        Ok((s.judge(&self.sql, r, allowed)?, took))
    }
}

/// A barrier for sessions running their own logic concurrently, with a deadline.
pub struct Barrier {
    inner: tokio::sync::Barrier,
    name: String,
    label: String,
    deadline: Duration,
}

impl Barrier {
    /// `who` names the waiting party in the error if the deadline passes.
    pub async fn wait(&self, who: &str) -> Result<()> {
        tokio::time::timeout(self.deadline, self.inner.wait())
            .await
            .map_err(|_| {
                anyhow!(crate::tr!(
                    "en.barrier",
                    label = self.label,
                    who = who,
                    barrier = self.name,
                    deadline = secs(self.deadline)
                ))
            })?;
        Ok(())
    }
}

/// Opens a variant's sessions and keeps the list of their backends, so the
/// variant can name them and make sure they are gone when it ends.
#[derive(Clone)]
pub struct Opener {
    pg: Config,
    schema: String,
    app: String,
    label: String,
    log: Log,
    deadline: Duration,
    opened: Arc<Mutex<Vec<(String, i32)>>>,
    stepper: Option<Arc<Stepper>>,
}

impl Opener {
    /// Opens session `name` on its own connection, tagged with
    /// `application_name` lab:<schema>:<scenario>/<variant>:<name>.
    pub async fn open(&self, name: &str) -> Result<Session> {
        let client = db::connect(&self.pg, &format!("{}:{name}", self.app), Some(&self.schema))
            .await
            .with_context(|| crate::tr!("en.open", label = self.label, session = name))?;
        let pid: i32 = client
            .query_one("SELECT pg_backend_pid()", &[])
            .await
            .map_err(|e| db::sql_error(e, &crate::tr!("en.open", label = self.label, session = name)))?
            .get(0);
        self.opened.lock().unwrap().push((name.to_string(), pid));
        Ok(Session {
            inner: Arc::new(SessionInner {
                name: name.to_string(),
                label: self.label.clone(),
                client,
                pid,
                log: self.log.clone(),
                deadline: self.deadline,
                tx: AtomicU8::new(TX_IDLE),
                stepper: self.stepper.clone(),
            }),
        })
    }
}

/// One variant's run: its sessions, timeline, findings and evidence.
pub struct VariantCtx<'e> {
    pub env: &'e Env,
    pub scenario: &'static str,
    pub variant: &'static str,
    log: Log,
    opener: Opener,
    metrics: Map<String, Value>,
    observed: Vec<String>,
    failures: Vec<String>,
    anomaly: bool,
    skipped: Option<String>,
    notes: Vec<String>,
    evidence: Vec<Evidence>,
}

impl<'e> VariantCtx<'e> {
    pub fn new(env: &'e Env, scenario: &'static str, variant: &'static str) -> Self {
        let log = Log {
            t0: Instant::now(),
            entries: Arc::default(),
        };
        let opener = Opener {
            pg: env.pg.clone(),
            schema: env.schema.clone(),
            app: format!("{}{scenario}/{variant}", env.app_prefix()),
            label: format!("{scenario}/{variant}"),
            log: log.clone(),
            deadline: env.wait_timeout,
            opened: Arc::default(),
            stepper: env.stepper.clone(),
        };
        if let Some(st) = &env.stepper {
            st.reset();
        }
        VariantCtx {
            env,
            scenario,
            variant,
            log,
            opener,
            metrics: Map::new(),
            observed: Vec::new(),
            failures: Vec::new(),
            anomaly: false,
            skipped: None,
            notes: Vec::new(),
            evidence: Vec::new(),
        }
    }

    fn label(&self) -> String {
        format!("{}/{}", self.scenario, self.variant)
    }

    /// Opens session `name` on its own connection.
    pub async fn session(&mut self, name: &str) -> Result<Session> {
        self.opener.open(name).await
    }

    /// Opens sessions from other threads or runtimes (the connection task runs
    /// where `open` is awaited); they belong to this variant all the same.
    pub fn opener(&self) -> Opener {
        self.opener.clone()
    }

    /// The backend pid of an opened session.
    pub fn pid_of(&self, name: &str) -> Option<i32> {
        self.opener
            .opened
            .lock()
            .unwrap()
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, p)| *p)
    }

    /// Opens N named sessions at once: `let [a, b] = ctx.open(["A", "B"]).await?;`
    pub async fn open<const N: usize>(&mut self, names: [&str; N]) -> Result<[Session; N]> {
        let v = self.sessions(&names).await?;
        Ok(v.try_into().unwrap_or_else(|_| unreachable!("one session per name")))
    }

    /// Locks a session's backend holds (its own virtual xid aside), as the server lists them.
    pub async fn locks_held(&self, s: &Session) -> Result<i64> {
        let row = self
            .env
            .control
            .query_one(
                "SELECT count(*) FROM pg_locks WHERE pid = $1 AND granted AND locktype <> 'virtualxid'",
                &[&s.pid()],
            )
            .await
            .map_err(|e| db::sql_error(e, &crate::tr!("en.read_locks")))?;
        Ok(row.get(0))
    }

    /// How many of these backends the server still lists.
    async fn backends_left(&self, pids: &[i32]) -> Result<i64> {
        let row = self
            .env
            .control
            .query_one("SELECT count(*) FROM pg_stat_activity WHERE pid = ANY($1)", &[&pids])
            .await
            .map_err(|e| db::sql_error(e, &crate::tr!("en.read_activity")))?;
        Ok(row.get(0))
    }

    /// Waits (with the deadline) until the server no longer lists the session's
    /// backend: a terminated backend releases its locks a moment before its
    /// activity entry goes. Says whether it went.
    pub async fn await_gone(&self, s: &Session) -> Result<bool> {
        self.await_gone_pid(s.pid()).await
    }

    pub async fn await_gone_pid(&self, pid: i32) -> Result<bool> {
        let deadline = Instant::now() + self.env.wait_timeout;
        loop {
            if self.backends_left(&[pid]).await? == 0 {
                return Ok(true);
            }
            if Instant::now() > deadline {
                return Ok(false);
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }

    /// The session name of a backend pid, for server messages that name processes.
    pub fn session_of(&self, pid: i32) -> Option<String> {
        self.opener
            .opened
            .lock()
            .unwrap()
            .iter()
            .find(|(_, p)| *p == pid)
            .map(|(n, _)| n.clone())
    }

    /// Opens several sessions at once (connections are made concurrently).
    pub async fn sessions(&mut self, names: &[&str]) -> Result<Vec<Session>> {
        let opened = futures_join_all(names.iter().map(|n| self.opener.open(n))).await;
        opened.into_iter().collect()
    }

    pub fn barrier(&self, name: &str, parties: usize) -> Arc<Barrier> {
        Arc::new(Barrier {
            inner: tokio::sync::Barrier::new(parties),
            name: name.to_string(),
            label: self.label(),
            deadline: self.env.wait_timeout,
        })
    }

    /// Confirms from the server that a sent statement waits on a lock, and
    /// names who it waits for. Polls `pg_blocking_pids` for that session's
    /// backend (as PostgreSQL's isolationtester does); never sleeps in place
    /// of asking. Fails at the deadline.
    pub async fn await_wait(&self, p: &mut Pending) -> Result<Wait> {
        let deadline = Instant::now() + self.env.wait_timeout;
        let mut pause = Duration::from_micros(200);
        loop {
            if p.handle.is_finished() {
                return Ok(Wait::DidNotWait);
            }
            let blockers: Vec<i32> = self
                .env
                .control
                .query_one("SELECT pg_blocking_pids($1)", &[&p.session.pid()])
                .await
                .map_err(|e| db::sql_error(e, &crate::tr!("en.read_blocking")))?
                .get(0);
            if !blockers.is_empty() {
                let names: Vec<String> = blockers.iter().map(|b| self.name_of(*b)).collect();
                p.seen_waiting = true;
                let s = &p.session;
                s.inner.log.push(
                    Instant::now(),
                    s.name(),
                    &p.sql,
                    StepResult::Waiting,
                    None,
                    crate::i18n::fill(
                        crate::i18n::current().texts().ui.step_waiting,
                        &[("who", &names.join(", "))],
                    ),
                );
                return Ok(Wait::Blocked(names));
            }
            if Instant::now() > deadline {
                bail!(crate::tr!(
                    "en.neither",
                    at = p.session.where_(&p.sql),
                    deadline = secs(self.env.wait_timeout)
                ));
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(Duration::from_millis(5));
        }
    }

    /// Sends a statement and confirms it waits; it is an error if it does not.
    pub async fn send_blocked(&self, s: &Session, sql: &str) -> Result<(Pending, Vec<String>)> {
        let mut p = s.send(sql).await;
        match self.await_wait(&mut p).await? {
            Wait::Blocked(by) => Ok((p, by)),
            Wait::DidNotWait => {
                let r = p.finish_allow(&["*"]).await;
                let what = match r {
                    Ok(Ok(_)) => crate::tr!("en.it_completed"),
                    Ok(Err(e)) => e.line(),
                    Err(e) => format!("{e:#}"),
                };
                bail!(crate::tr!("en.did_not_wait", at = s.where_(sql), what = what))
            }
        }
    }

    fn name_of(&self, pid: i32) -> String {
        self.session_of(pid)
            .unwrap_or_else(|| crate::tr!("en.foreign_pid", pid = pid))
    }

    pub fn metric(&mut self, key: &str, value: impl Serialize) {
        self.metrics
            .insert(key.to_string(), serde_json::to_value(value).unwrap_or(Value::Null));
    }

    /// A documented expectation: when `holds` is false the verdict is "not as documented".
    pub fn expect(&mut self, holds: bool, what: impl Into<String>) {
        if !holds {
            self.failures.push(what.into());
        }
    }

    /// Part of the one-line observed outcome.
    pub fn observe(&mut self, text: impl Into<String>) {
        self.observed.push(text.into());
    }

    pub fn anomaly(&mut self, happened: bool) {
        self.anomaly = happened;
    }

    pub fn skip(&mut self, reason: impl Into<String>) {
        self.skipped = Some(reason.into());
    }

    /// A line of the driver's own narrative in the timeline (column "lab"),
    /// e.g. where one part of a variant ends and the next begins.
    pub fn narrate(&self, text: impl Into<String>) {
        self.log
            .push(Instant::now(), "lab", "", StepResult::Note, None, text.into());
    }

    pub fn note(&mut self, text: impl Into<String>) {
        self.notes.push(text.into());
    }

    pub fn evidence(&mut self, title: &str, rows: &Rows) {
        self.evidence.push(Evidence {
            title: title.to_string(),
            columns: rows.columns.clone(),
            rows: rows
                .rows
                .iter()
                .map(|r| r.iter().map(|v| v.clone().unwrap_or_else(|| "NULL".into())).collect())
                .collect(),
        });
    }

    pub fn evidence_table(&mut self, ev: Evidence) {
        self.evidence.push(ev);
    }

    async fn terminate(&self, pids: &[i32]) {
        // Best effort: a backend may be gone already.
        let _ = self
            .env
            .control
            .execute("SELECT pg_terminate_backend(p) FROM unnest($1::int[]) p", &[&pids])
            .await;
    }

    /// Closes every session and waits until the server has no backend of this
    /// variant left, so nothing of it survives into the next one. After a
    /// failure the backends are terminated first.
    pub async fn close(self, failed: bool, expected: &str) -> Result<VariantReport> {
        let pids: Vec<i32> = self.opener.opened.lock().unwrap().iter().map(|(_, p)| *p).collect();
        if failed {
            self.terminate(&pids).await;
        }
        let deadline = Instant::now() + self.env.wait_timeout;
        let mut terminated = failed;
        loop {
            if self.backends_left(&pids).await? == 0 {
                break;
            }
            if !terminated && Instant::now() + self.env.wait_timeout / 2 > deadline {
                // A session still busy (a task that kept its connection): end it.
                self.terminate(&pids).await;
                terminated = true;
            }
            if Instant::now() > deadline {
                bail!(crate::tr!(
                    "en.still_connected",
                    label = self.label(),
                    deadline = secs(self.env.wait_timeout)
                ));
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        let timeline = std::mem::take(&mut *self.log.entries.lock().unwrap());
        let sqlstates = timeline.iter().filter_map(|e| e.sqlstate.clone()).collect();
        let mut observed = self.observed.join("; ");
        if let Some(reason) = &self.skipped {
            observed = crate::i18n::t("en.skipped", &[("reason", reason)]);
        } else if !self.failures.is_empty() {
            observed = crate::i18n::t(
                "en.differs",
                &[("observed", &observed), ("failures", &self.failures.join("; "))],
            );
        }
        Ok(VariantReport {
            name: self.variant.to_string(),
            as_expected: self.failures.is_empty(),
            anomaly: self.anomaly,
            expected: expected.to_string(),
            observed,
            elapsed_ms: round_ms(self.log.t0.elapsed().as_secs_f64() * 1000.0),
            sqlstates,
            metrics: self.metrics,
            timeline,
            skipped: self.skipped,
            notes: self.notes,
            evidence: self.evidence,
        })
    }
}

/// Awaits futures concurrently, keeping their order (a small join_all).
pub async fn futures_join_all<F, T>(futs: impl IntoIterator<Item = F>) -> Vec<T>
where
    F: std::future::Future<Output = T>,
{
    let mut futs: Vec<_> = futs.into_iter().map(Box::pin).collect();
    let mut out: Vec<Option<T>> = futs.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (i, f) in futs.iter_mut().enumerate() {
            if out[i].is_none() {
                match f.as_mut().poll(cx) {
                    std::task::Poll::Ready(v) => out[i] = Some(v),
                    std::task::Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            std::task::Poll::Pending
        } else {
            std::task::Poll::Ready(())
        }
    })
    .await;
    out.into_iter().map(|v| v.unwrap()).collect()
}

/// Waits for a spawned session task with the run's deadline.
pub async fn join<T>(env: &Env, what: &str, h: JoinHandle<Result<T>>) -> Result<T> {
    join_within(env.wait_timeout, what, h).await
}

async fn join_within<T>(deadline: Duration, what: &str, h: JoinHandle<Result<T>>) -> Result<T> {
    tokio::time::timeout(deadline, h)
        .await
        .map_err(|_| anyhow!(crate::tr!("en.not_finished", what = what, deadline = secs(deadline))))?
        .map_err(|e| anyhow!("{what}: {e}"))?
}

/// Waits for spawned session tasks, all at once, each within `deadline`;
/// their results in order, or the first error.
pub async fn join_all<T>(deadline: Duration, what: &str, handles: Vec<JoinHandle<Result<T>>>) -> Result<Vec<T>> {
    futures_join_all(handles.into_iter().map(|h| join_within(deadline, what, h)))
        .await
        .into_iter()
        .collect()
}

/// Milliseconds, to 0.1 ms, for metrics.
pub fn millis(d: Duration) -> f64 {
    round_ms(d.as_secs_f64() * 1000.0)
}

/// Seconds, as a person reads them in a message ("2.5", "30").
fn secs(d: Duration) -> f64 {
    (d.as_secs_f64() * 1000.0).round() / 1000.0
}

/// Quotes a string as an SQL literal (standard_conforming_strings is on).
pub fn lit(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}
