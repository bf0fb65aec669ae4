//! The session engine: drives named sessions, each on its own connection,
//! records every statement and outcome with a timestamp, confirms waits from
//! the server (never by sleeping), keeps a deadline on every wait, and knows
//! no scenario by name.
//!
//! - [`session`]: one connection, the statements it sends, its transaction;
//! - [`schedule`]: a spec permutation run as isolationtester runs it;
//! - [`observe`]: the timeline recorder and the observations verdicts read;
//! - [`step`]: workshop stepping.
pub mod observe;
pub mod schedule;
pub mod session;
pub mod step;
pub mod transcript;

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Result;
use tokio::task::JoinHandle;
use tokio_postgres::{Client, Config};

pub use observe::{Deviation, Observation, Recorder, StepRun, Waited};
pub use schedule::{ExpectedWait, Probe, ProbeQuery};
pub use session::{Answer, Opener, PgError, Res, Sent, Session};
pub use step::Stepper;

use crate::i18n::{Context, Text};
use crate::report::ResultSet;
use crate::target::connect::ServerInfo;

/// What every variant of a run shares: where to connect, the schema, the
/// deadline, and the control connection that watches the sessions.
pub struct Env {
    pub pg: Config,
    /// Where the variant's objects live.
    pub schema: String,
    /// The run's name (its `--schema`), in every connection's application_name:
    /// scenarios run side by side each have a schema of their own, one run name.
    pub run: String,
    pub control: Client,
    pub server: ServerInfo,
    /// Every wait has this deadline.
    pub wait_timeout: Duration,
    /// The server's deadlock_timeout: a deadlock among lab's sessions is the
    /// server's to break within about that long.
    pub deadlock_timeout: Duration,
    /// Workshop mode: a person presses Enter before each statement.
    pub stepper: Option<Arc<Stepper>>,
    /// The most connections the run may use (`--max-connections`), the control one included.
    pub max_connections: Option<usize>,
    /// SET statements every lab connection runs when it opens (the neutral settings).
    pub settings: String,
    /// lab's throwaway server (its binaries and port), from which a variant
    /// may make a standby; none when lab runs against the user's server.
    pub throwaway: Option<(std::path::PathBuf, u16)>,
    /// lab's PgBouncer in front of the server (`--pooler`): sessions connect
    /// through it; the control connection does not.
    pub pooler: Option<Arc<crate::target::pgbouncer::Front>>,
}

impl Env {
    /// Where sessions connect: lab's PgBouncer under `--pooler`, else the server.
    pub fn session_pg(&self) -> Config {
        match &self.pooler {
            // A pool per schema: see Front.
            Some(p) => p.bouncer.config(&self.schema),
            None => self.pg.clone(),
        }
    }

    /// `lab:<run>:` — every connection of this run is named so.
    pub fn app_prefix(&self) -> String {
        format!("lab:{}:", self.run)
    }

    /// Terminates every backend of this run's sessions (the control
    /// connection aside), through `client`.
    pub async fn terminate_sessions_via(&self, client: &Client) -> Result<()> {
        client
            .execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
                 WHERE application_name LIKE $1 || '%' AND pid <> pg_backend_pid() AND usename = current_user",
                &[&self.app_prefix()],
            )
            .await
            .ctx(msg::terminate)?;
        Ok(())
    }

    /// Rows from the control connection (for checks after a variant: these
    /// reads are not part of the interleaving, so not recorded).
    pub async fn rows(&self, sql: &str) -> Result<ResultSet> {
        let full = format!("SET search_path TO \"{}\"; {sql}", self.schema);
        let msgs = self
            .control
            .simple_query(&full)
            .await
            .map_err(|e| crate::target::connect::sql_error(e, msg::check_failed(crate::sqltext::one_line(sql))))?;
        Ok(session::last_set(&session::results_of(&full, &msgs))
            .cloned()
            .unwrap_or_default())
    }

    /// A single integer from the control connection.
    pub async fn int(&self, sql: &str) -> Result<i64> {
        let rows = self.rows(sql).await?;
        rows.rows
            .first()
            .and_then(|r| r.first())
            .and_then(|v| v.as_deref())
            .and_then(|v| v.parse().ok())
            .ctx(|| msg::check_no_integer(crate::sqltext::one_line(sql)))
    }

    /// How many of these backends the server still lists.
    pub async fn backends_left(&self, pids: &[i32]) -> Result<i64> {
        let row = self
            .control
            .query_one("SELECT count(*) FROM pg_stat_activity WHERE pid = ANY($1)", &[&pids])
            .await
            .ctx(msg::read_activity)?;
        Ok(row.get(0))
    }

    /// How many of these backends still serve this variant: listed by the
    /// server and still named with `app` (a session pooler keeps the backend
    /// of a closed client and resets its application_name; it is no longer ours).
    pub async fn backends_serving(&self, pids: &[i32], app: &str) -> Result<i64> {
        // Names are cut at 63 bytes (see connect()); the prefix is compared as stored.
        let app = crate::target::connect::app_name(app);
        let row = self
            .control
            .query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE pid = ANY($1) AND starts_with(application_name, $2)",
                &[&pids, &app],
            )
            .await
            .ctx(msg::read_activity)?;
        Ok(row.get(0))
    }

    /// Waits (with the deadline) until the server no longer lists the
    /// backend: a terminated backend releases its locks a moment before its
    /// activity entry goes. Says whether it went.
    pub async fn await_gone(&self, pid: i32) -> Result<bool> {
        let deadline = Instant::now() + self.wait_timeout;
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

    /// Behind lab's pooler: the server connections whose last client was
    /// one of `app`'s sessions (PgBouncer names them after it). They stay
    /// open in the pool with whatever the variant left on them.
    pub async fn pooled_backends(&self, app: &str) -> Result<Vec<i32>> {
        let rows = self
            .control
            .query(
                "SELECT pid FROM pg_stat_activity WHERE starts_with(application_name, $1)",
                &[&crate::target::connect::app_name(app)],
            )
            .await
            .ctx(msg::read_activity)?;
        Ok(rows.iter().map(|r| r.get(0)).collect())
    }

    /// Waits (with the deadline) until lab's PgBouncer no longer holds these
    /// server connections, so that it hands none of them out once they are gone.
    pub async fn await_pooler_forgets(&self, pids: &[i32]) -> Result<bool> {
        let Some(pooler) = &self.pooler else {
            return Ok(true);
        };
        let deadline = Instant::now() + self.wait_timeout;
        loop {
            let held = crate::target::pgbouncer::server_pids(&pooler.admin, &self.schema).await?;
            if !held.iter().any(|p| pids.contains(p)) {
                return Ok(true);
            }
            if Instant::now() > deadline {
                return Ok(false);
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }

    /// Ends backends (best effort: some may be gone already).
    pub async fn terminate(&self, pids: &[i32]) {
        let _ = self
            .control
            .execute("SELECT pg_terminate_backend(p) FROM unnest($1::int[]) p", &[&pids])
            .await;
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
    pub fn new(name: &str, label: &str, parties: usize, deadline: Duration) -> Arc<Barrier> {
        Arc::new(Barrier {
            inner: tokio::sync::Barrier::new(parties),
            name: name.to_string(),
            label: label.to_string(),
            deadline,
        })
    }

    /// `who` names the waiting party in the error if the deadline passes.
    pub async fn wait(&self, who: &str) -> Result<()> {
        tokio::time::timeout(self.deadline, self.inner.wait())
            .await
            .map_err(|_| msg::barrier(&self.label, who, &self.name, secs(self.deadline)))?;
        Ok(())
    }
}

/// Awaits futures concurrently, keeping their order (a small join_all).
pub async fn join_all_ordered<F, T>(futs: impl IntoIterator<Item = F>) -> Vec<T>
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
    out.into_iter().map(|v| v.expect("every future finished")).collect()
}

/// Waits for a spawned task with a deadline; `what` names it in the error.
pub async fn join_within<T>(deadline: Duration, what: Text, h: JoinHandle<Result<T>>) -> Result<T> {
    match tokio::time::timeout(deadline, h).await {
        Err(_) => Err(msg::not_finished(what, secs(deadline)).into()),
        Ok(Err(e)) => Err(anyhow::Error::new(e)).ctx(|| what),
        Ok(Ok(r)) => r,
    }
}

/// Waits for spawned tasks, all at once, each within `deadline`; their
/// results in order, or the first error.
pub async fn join_all<T>(deadline: Duration, what: Text, handles: Vec<JoinHandle<Result<T>>>) -> Result<Vec<T>> {
    join_all_ordered(handles.into_iter().map(|h| join_within(deadline, what.clone(), h)))
        .await
        .into_iter()
        .collect()
}

/// A statement a session ran on its raw client failed: an error the server
/// answered is a deviation from the documented behaviour (the variant's
/// verdict); a lost connection is lab's own failure.
pub fn raw_error(e: tokio_postgres::Error, at: Text) -> anyhow::Error {
    match e.as_db_error() {
        Some(db) => Deviation(msg::unexpected(
            at,
            format!("{} {}: {}", db.severity(), db.code().code(), db.message()),
        ))
        .into(),
        None => Err::<(), _>(e).ctx(|| at).unwrap_err(),
    }
}

/// Seconds, as a person reads them in a message ("2.5", "30").
pub fn secs(d: Duration) -> f64 {
    (d.as_secs_f64() * 1000.0).round() / 1000.0
}

pub mod msg {
    crate::messages! {
        prefix "en";
        at(label, session, sql) {
            en: "{label}: session {session}: `{sql}`",
            tr: "{label}: {session} oturumu: `{sql}`",
        }
        too_many_sessions(label, sessions, max) {
            en: "{label} needs {sessions} sessions and a control connection, more than --max-connections {max}: give the run more, or fewer workers",
            tr: "{label} {sessions} oturum ve bir kontrol bağlantısı ister, --max-connections {max} değerinden fazla: çalıştırmaya daha fazla bağlantı ya da daha az worker verin",
        }
        over_cap(label, session, max) {
            en: "{label}: session {session} would be one connection more than --max-connections {max} allows: give the run more",
            tr: "{label}: {session} oturumu --max-connections {max} sınırını aşacaktı: çalıştırmaya daha fazla bağlantı verin",
        }
        open(label, session) {
            en: "{label}: could not open session {session}",
            tr: "{label}: {session} oturumu açılamadı",
        }
        unexpected(at, error) {
            en: "{at}: unexpected {error}",
            tr: "{at}: beklenmeyen {error}",
        }
        connection_lost(at, error) {
            en: "{at}: the session's connection was lost ({error})",
            tr: "{at}: oturumun bağlantısı koptu ({error})",
        }
        no_answer(at, deadline) {
            en: "{at}: no answer within {deadline} s",
            tr: "{at}: {deadline} sn içinde cevap gelmedi",
        }
        no_rows(at) {
            en: "{at}: returned no rows",
            tr: "{at}: satır döndürmedi",
        }
        no_int(at, col) {
            en: "{at}: no integer in column {col}",
            tr: "{at}: {col} sütununda tamsayı yok",
        }
        step_failed(step, error) {
            en: "step {step} failed: {error}",
            tr: "{step} adımı başarısız: {error}",
        }
        step_no_rows(step) {
            en: "step {step} returned no rows",
            tr: "{step} adımı satır döndürmedi",
        }
        step_no_value(step, col) {
            en: "step {step} returned no value in column {col}",
            tr: "{step} adımı {col} sütununda değer döndürmedi",
        }
        step_not_run(step) {
            en: "step {step} did not run (the spec's permutation has no such step)",
            tr: "{step} adımı çalışmadı (spec'in permütasyonunda böyle bir adım yok)",
        }
        read_blocking() {
            en: "could not ask the server who waits for whom",
            tr: "sunucuya kimin kimi beklediği sorulamadı",
        }
        read_activity() {
            en: "could not read pg_stat_activity",
            tr: "pg_stat_activity okunamadı",
        }
        terminate() {
            en: "could not end the run's sessions",
            tr: "çalıştırmanın oturumları sonlandırılamadı",
        }
        check_failed(sql) {
            en: "check failed: {sql}",
            tr: "kontrol başarısız: {sql}",
        }
        check_no_integer(sql) {
            en: "check returned no integer: {sql}",
            tr: "kontrol tamsayı döndürmedi: {sql}",
        }
        barrier(label, who, barrier, deadline) {
            en: "{label}: {who}: barrier '{barrier}' was not reached by every party within {deadline} s",
            tr: "{label}: {who}: '{barrier}' bariyerine {deadline} sn içinde herkes ulaşmadı",
        }
        not_finished(what, deadline) {
            en: "{what}: did not finish within {deadline} s",
            tr: "{what}: {deadline} sn içinde bitmedi",
        }
        setup_failed(error) {
            en: "the spec's setup failed: {error}",
            tr: "spec'in setup'ı başarısız oldu: {error}",
        }
        session_setup_failed(session, error) {
            en: "the setup of session {session} failed: {error}",
            tr: "{session} oturumunun setup'ı başarısız oldu: {error}",
        }
        probe_failed(name) {
            en: "could not take the snapshot {name}",
            tr: "{name} anlık görüntüsü alınamadı",
        }
        never_completed(step) {
            en: "step {step} never completed: its blocker annotations cannot be met",
            tr: "{step} adımı hiç tamamlanmadı: engelleyici işaretleri karşılanamıyor",
        }
        cancelled_stuck(session, ms) {
            en: "every running step had waited {ms} ms and only the server could end that: lab cancelled {session}'s statement",
            tr: "çalışan her adım {ms} ms beklemişti ve bunu ancak sunucu bitirebilirdi: lab, {session} oturumunun komutunu iptal etti",
        }
        cancelled_deadline(session, deadline) {
            en: "{session}'s statement did not answer within {deadline} s: lab cancelled it",
            tr: "{session} oturumunun komutu {deadline} sn içinde cevap vermedi: lab onu iptal etti",
        }
        terminated(session) {
            en: "the cancelled statement did not end: lab terminated {session}'s backend",
            tr: "iptal edilen komut bitmedi: lab {session} oturumunun backend'ini sonlandırdı",
        }
        step_next(session) {
            en: "next: session {session} runs",
            tr: "sıradaki: {session} oturumu çalıştırıyor",
        }
        step_prompt() {
            en: "[Enter] run it   [s Enter] run the rest of this variant without stopping",
            tr: "[Enter] çalıştır   [s Enter] bu varyantın kalanını durmadan çalıştır",
        }
        step_unattended(setting, value) {
            en: "{setting} = {value} now counts while the room reads: the rest of this variant runs on its own (each statement is shown)",
            tr: "{setting} = {value} artık salon okurken de sayıyor: bu varyantın kalanı kendi kendine çalışır (her komut gösterilir)",
        }
        step_skipping() {
            en: "running the rest of this variant without stopping",
            tr: "bu varyantın kalanı durmadan çalışıyor",
        }
        why_begin() {
            en: "start a transaction",
            tr: "bir transaction başlat",
        }
        why_commit() {
            en: "make the transaction's changes visible and release its locks",
            tr: "transaction'ın değişikliklerini görünür kıl ve kilitlerini bırak",
        }
        why_rollback() {
            en: "undo the transaction and release its locks",
            tr: "transaction'ı geri al ve kilitlerini bırak",
        }
        why_savepoint() {
            en: "mark a point to roll back to, keeping the rest of the transaction",
            tr: "geri dönülecek bir nokta işaretle, transaction'ın geri kalanını koruyarak",
        }
        why_rollback_to() {
            en: "undo back to the savepoint; the transaction goes on",
            tr: "savepoint'e kadar geri al; transaction devam eder",
        }
        why_other() {
            en: "the scenario's next step",
            tr: "senaryonun sıradaki adımı",
        }
    }
}
