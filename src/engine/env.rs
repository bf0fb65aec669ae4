//! What the sessions of a run share: where to connect, the schema, the
//! deadlines, and the control connection that watches them.
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Result;
use tokio_postgres::Client;
use tokio_postgres::types::Type;

use crate::postgres::ConnInfo as Config;

use super::answer::{last_set, results_of};
use super::msg;
use super::step::Stepper;
use crate::i18n::Context;
use crate::postgres::connect::{self, ServerInfo};
use crate::postgres::pgbouncer::Front;
use crate::report::ResultSet;

/// What a run's environment is made of, besides its control connection.
pub struct EnvSpec {
    pub pg: Config,
    /// The run's name (application_name prefix `lab:<run>:`).
    pub run: String,
    /// Where the objects live ("" where the sessions keep the server's search_path).
    pub schema: String,
    pub wait_timeout: Duration,
    /// Sessions and the control connection get lab's neutral settings
    /// (timeouts off, a known deadlock_timeout...); a spec file's keep the server's.
    pub neutral: bool,
    pub stepper: Option<Arc<Stepper>>,
    pub max_connections: Option<usize>,
    pub throwaway: Option<(std::path::PathBuf, u16)>,
    /// lab's throwaway server's postmaster, which lab hunt's nemesis signals and restarts.
    pub own: Option<crate::postgres::cluster::ServerCtl>,
}

/// What every variant of a run shares: where to connect, the schema, the
/// deadline, and the control connection that watches the sessions.
pub struct Env {
    pub pg: Config,
    /// Where the variant's objects live.
    pub schema: String,
    /// The run's name (its `--schema`), in every connection's application_name:
    /// scenarios run side by side each have a schema of their own, one run name.
    pub run: String,
    /// Shared by the environments derived from this one (a cell, a spec).
    pub control: Arc<Client>,
    pub server: ServerInfo,
    /// Every wait has this deadline.
    pub wait_timeout: Duration,
    /// A step's and its sessions' statements' deadline: `wait_timeout`,
    /// or a spec's longer one (isolationtester's 300 s) while lab's own
    /// waits keep theirs.
    pub step_deadline: Duration,
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
    /// lab's throwaway server's postmaster (see [`EnvSpec::own`]).
    pub own: Option<crate::postgres::cluster::ServerCtl>,
    /// lab's PgBouncer in front of the server (`--pooler`): sessions connect
    /// through it; the control connection does not.
    pub pooler: Option<Arc<Front>>,
    /// The questions the scheduler asks the control connection about a
    /// session that has not answered, prepared once per connection.
    watch: Arc<tokio::sync::OnceCell<WatchQueries>>,
    /// The control connection's application_name (behind a transaction
    /// pooler of the user's, set again with every question).
    pub control_app: String,
    /// The control connection's backend, where known (not behind a pooler).
    control_pid: Option<i32>,
    /// The control connection is a new one, opened for the clean-up after
    /// the run's own was lost: it holds none of the run's advisory locks.
    pub control_replaced: bool,
}

/// What puts a server connection of the user's transaction pooler back to
/// the role's own state before lab's control connection asks anything
/// there: a session's SETs stay on the server connection it used (a `SET
/// ROLE` to a role its spec then drops breaks every later query there),
/// and `RESET ALL` leaves the role and the session authorization.
const POOLED_RESET: &str = "RESET ALL;RESET SESSION AUTHORIZATION;RESET ROLE;";

/// [`POOLED_RESET`], then the control client's `application_name` again:
/// `RESET ALL` would take it off the server connection too, and the
/// pooler, which set it when it handed the connection over, does not know;
/// a connection left nameless could not be told apart at the spec's end
/// (see [`Env::end_pooled_leftovers`]).
pub fn pooled_reset(control_app: &str) -> String {
    if control_app.is_empty() {
        return POOLED_RESET.to_string();
    }
    format!(
        "{POOLED_RESET}SET application_name = {};",
        crate::sql_lexer::literal(&connect::app_name(control_app))
    )
}

/// `{1,2}`, as the server writes an int array in text.
fn parse_int_array(text: Option<&str>) -> Vec<i32> {
    text.unwrap_or("{}")
        .trim_matches(|c| c == '{' || c == '}')
        .split(',')
        .filter_map(|p| p.trim().parse().ok())
        .collect()
}

/// `ARRAY[1,2]::int[]`, for a simple query.
fn int_array(pids: &[i32]) -> String {
    let items: Vec<String> = pids.iter().map(i32::to_string).collect();
    format!("ARRAY[{}]::int[]", items.join(","))
}

fn first_int(rows: &[Vec<Option<String>>]) -> Option<i64> {
    rows.first()?.first().cloned().flatten()?.parse().ok()
}

/// See [`Env::watch_queries`].
pub struct WatchQueries {
    /// Who blocks a backend, and the safe-snapshot wait (a spec's steps).
    pub blocked: Watched,
    /// The same and its wait_event (scenarios: synchronous standbys too).
    pub blocked_or_event: Watched,
    /// The lock a backend waits for.
    pub lock: Watched,
    /// Who a backend is that is not one of the run's.
    pub holder: Watched,
}

/// One of the scheduler's questions about a backend (`$1`, its pid):
/// prepared once on a control connection that reaches the server itself;
/// sent whole as the protocol's unnamed statement each time through a
/// transaction pooler (which would lose a prepared one between transactions).
#[derive(Clone)]
pub enum Watched {
    Prepared(tokio_postgres::Statement),
    Unnamed(&'static str),
}

const BLOCKED: &str = "SELECT pg_blocking_pids($1::int), pg_safe_snapshot_blocking_pids($1::int), NULL::text";
const BLOCKED_OR_EVENT: &str = "SELECT pg_blocking_pids($1::int), pg_safe_snapshot_blocking_pids($1::int), \
                                (SELECT wait_event FROM pg_stat_activity WHERE pid = $1::int)";
const LOCK: &str = "SELECT l.mode || ' on ' || l.locktype || coalesce(' ' || c.relname, '') \
                      FROM pg_locks l LEFT JOIN pg_class c ON c.oid = l.relation \
                     WHERE l.pid = $1::int AND NOT l.granted LIMIT 1";

/// A backend by its kind and pid; autovacuum's by what it does (its
/// `query`), a client's by its application_name, never its statement.
const HOLDER: &str = "SELECT CASE WHEN backend_type = 'client backend' \
                        THEN 'client backend ' || pid || coalesce(' (' || nullif(application_name, '') || ')', '') \
                        ELSE coalesce(nullif(query, ''), backend_type) || ' (pid ' || pid || ')' END \
                        FROM pg_stat_activity WHERE pid = $1::int";

impl Env {
    /// The one constructor: the run's environment on its control
    /// connection, with the server's deadlock_timeout read back (and lab's
    /// neutral settings applied first, where asked).
    pub async fn new(control: Client, server: ServerInfo, spec: EnvSpec) -> Result<Env> {
        let settings = if spec.neutral {
            connect::neutralize(&control, server.version_num).await?;
            connect::neutral_sql(server.version_num)
        } else {
            String::new()
        };
        let deadlock_ms: i64 = connect::simple_value(
            &control,
            "SELECT setting FROM pg_settings WHERE name = 'deadlock_timeout'",
        )
        .await
        .ctx(connect::msg::version)?
        .and_then(|v| v.parse().ok())
        .ctx(connect::msg::version)?;
        // Through a pooler the handshake's pid is the pooler's own.
        let control_pid = if server.behind_pooler {
            None
        } else {
            connect::handshake_pid(&control).await
        };
        Ok(Env {
            pg: spec.pg,
            schema: spec.schema,
            run: spec.run,
            control: Arc::new(control),
            server,
            wait_timeout: spec.wait_timeout,
            step_deadline: spec.wait_timeout,
            deadlock_timeout: Duration::from_millis(deadlock_ms.max(0) as u64),
            stepper: spec.stepper,
            max_connections: spec.max_connections,
            settings,
            throwaway: spec.throwaway,
            own: spec.own,
            pooler: None,
            watch: Arc::default(),
            control_app: String::new(),
            control_pid,
            control_replaced: false,
        })
    }

    /// How long a connection of lab's own may leave a request unanswered
    /// (see [`crate::postgres::watchdog`]).
    pub fn control_silence(&self) -> Duration {
        crate::postgres::watchdog::control_silence(self.wait_timeout)
    }

    /// The same environment with lab's PgBouncer in front of the server.
    pub fn with_pooler(self, front: Front) -> Env {
        Env {
            pooler: Some(Arc::new(front)),
            ..self
        }
    }

    /// The same run, its objects in `schema`, watched by the same control connection.
    pub fn in_schema(&self, schema: &str) -> Env {
        Env {
            schema: schema.to_string(),
            ..self.derived()
        }
    }

    /// The same run on `pg` (another database, other startup options),
    /// watched from `control` (a connection there).
    pub fn elsewhere(&self, pg: Config, control: Client, schema: &str) -> Env {
        Env {
            pg,
            control: Arc::new(control),
            schema: schema.to_string(),
            watch: Arc::default(),
            control_app: String::new(),
            control_pid: None,
            control_replaced: false,
            ..self.derived()
        }
    }

    /// The same run on a server that is not lab's throwaway one (lab's HA
    /// cluster), watched from `control` (named `app`) there.
    pub fn on_other_server(&self, pg: Config, control: Client, schema: &str, app: &str) -> Env {
        Env {
            own: None,
            throwaway: None,
            control_app: app.to_string(),
            ..self.elsewhere(pg, control, schema)
        }
    }

    /// Whether the control connection is gone: closed, or (a backend just
    /// terminated may not know it yet) no answer to an empty query within
    /// half the wait deadline.
    pub async fn control_lost(&self) -> bool {
        if self.control.is_closed() {
            return true;
        }
        let ask = tokio::time::timeout(self.wait_timeout / 2, self.control.simple_query(""));
        !matches!(ask.await, Ok(Ok(_)))
    }

    /// The same run with `control` (named `app`) in place of a control
    /// connection that was lost; the lost one's backend, if the server still
    /// has it (a network that stopped answering leaves it there, idle, with
    /// the run's advisory locks), is ended first.
    pub async fn with_new_control(&self, control: Client, app: &str) -> Env {
        let env = Env {
            control: Arc::new(control),
            watch: Arc::default(),
            control_pid: None,
            control_replaced: true,
            ..self.derived()
        };
        if let Some(pid) = self.control_pid {
            env.terminate(&[pid], app).await;
            // A terminated backend ends on its own time, and holds the run's
            // schema claim until it has: the new connection claims it after.
            let _ = env.await_gone(&[pid]).await;
        }
        env
    }

    /// The same run on `pg` in `schema`, watched by the same control connection.
    pub fn elsewhere_watched(&self, pg: Config, schema: &str) -> Env {
        Env {
            pg,
            schema: schema.to_string(),
            ..self.derived()
        }
    }

    fn derived(&self) -> Env {
        Env {
            pg: self.pg.clone(),
            schema: self.schema.clone(),
            run: self.run.clone(),
            control: self.control.clone(),
            server: self.server.clone(),
            wait_timeout: self.wait_timeout,
            step_deadline: self.step_deadline,
            deadlock_timeout: self.deadlock_timeout,
            stepper: self.stepper.clone(),
            max_connections: self.max_connections,
            settings: self.settings.clone(),
            throwaway: self.throwaway.clone(),
            own: self.own.clone(),
            pooler: self.pooler.clone(),
            watch: self.watch.clone(),
            control_app: self.control_app.clone(),
            control_pid: self.control_pid,
            control_replaced: self.control_replaced,
        }
    }

    /// The scheduler's questions about a waiting session, prepared on the
    /// control connection the first time they are needed and kept: a
    /// permutation's run asks them without preparing them again. Through a
    /// transaction pooler they are not prepared (see [`Watched`]).
    pub async fn watch_queries(&self) -> Result<&WatchQueries> {
        self.watch
            .get_or_try_init(|| async {
                let prepare = |sql: &'static str| async move {
                    if self.server.behind_pooler {
                        return Ok(Watched::Unnamed(sql));
                    }
                    self.control.prepare(sql).await.map(Watched::Prepared)
                };
                Ok::<_, tokio_postgres::Error>(WatchQueries {
                    blocked: prepare(BLOCKED).await?,
                    blocked_or_event: prepare(BLOCKED_OR_EVENT).await?,
                    lock: prepare(LOCK).await?,
                    holder: prepare(HOLDER).await?,
                })
            })
            .await
            .ctx(msg::read_blocking)
    }

    /// Who blocks backend `pid` (its locks, a safe snapshot) and what it
    /// waits for: one of the scheduler's questions (`blocked` or
    /// `blocked_or_event`).
    pub async fn blocked(&self, q: &Watched, pid: i32) -> Result<(Vec<i32>, Vec<i32>, Option<String>)> {
        match q {
            Watched::Prepared(st) => {
                let row = self.control.query_one(st, &[&pid]).await.ctx(msg::read_blocking)?;
                Ok((row.get(0), row.get(1), row.get(2)))
            }
            Watched::Unnamed(sql) => {
                let rows = self.pooled_rows(&sql.replace("$1", &pid.to_string())).await?;
                let row = rows.first().ctx(msg::read_blocking)?;
                let col = |i: usize| row.get(i).cloned().flatten();
                Ok((
                    parse_int_array(col(0).as_deref()),
                    parse_int_array(col(1).as_deref()),
                    col(2),
                ))
            }
        }
    }

    /// A one-text answer about backend `pid`: the lock it waits for (the
    /// `lock` question), who it is (`holder`); none if no row.
    pub async fn text_about(&self, q: &Watched, pid: i32) -> Result<Option<String>> {
        match q {
            Watched::Prepared(st) => {
                let rows = self.control.query(st, &[&pid]).await.ctx(msg::read_blocking)?;
                Ok(rows.first().and_then(|r| r.get::<_, Option<String>>(0)))
            }
            Watched::Unnamed(sql) => {
                let rows = self.pooled_rows(&sql.replace("$1", &pid.to_string())).await?;
                Ok(rows.first().and_then(|r| r.first().cloned().flatten()))
            }
        }
    }

    /// A question on the control connection through a transaction pooler
    /// of the user's, as a simple query after [`POOLED_RESET`] in the same
    /// message (the pooler runs a message on one server connection): its
    /// rows as text. It waits for a free server connection like any
    /// client's: within the deadline, or the run stops saying the pool is
    /// too small.
    pub async fn pooled_rows(&self, sql: &str) -> Result<Vec<Vec<Option<String>>>> {
        let full = format!("{}{sql}", pooled_reset(&self.control_app));
        let msgs = match tokio::time::timeout(self.wait_timeout, self.control.simple_query(&full)).await {
            Ok(r) => r.ctx(msg::read_blocking)?,
            Err(_) => anyhow::bail!(msg::pool_full(self.wait_timeout.as_secs())),
        };
        Ok(connect::text_rows(&msgs))
    }

    /// Cancels (or terminates) backend `pid` from the control connection;
    /// with `since` (see [`signal_sql`]), only while the backend holding
    /// the pid is the one it was read from.
    pub async fn signal_backend(&self, pid: i32, since: Option<&str>, terminate: bool) -> Result<()> {
        let sql = signal_sql(terminate, pid, since);
        if self.server.behind_pooler {
            self.pooled_rows(&sql).await?;
        } else {
            self.control.simple_query(&sql).await.ctx(msg::read_blocking)?;
        }
        Ok(())
    }

    /// Whether sessions reach the server through a transaction pooler
    /// (lab's own, or the user's): they then carry their state with every
    /// transaction, and their backends are found by application_name.
    pub fn pooled_sessions(&self) -> bool {
        self.pooler.is_some() || self.server.behind_pooler
    }

    /// Where sessions connect: lab's PgBouncer under `--pooler`, else the server.
    pub fn session_pg(&self) -> Config {
        match &self.pooler {
            // A pool per schema: see Front.
            Some(p) => p.bouncer.config(&self.pool()),
            None => self.pg.clone(),
        }
    }

    /// The pool of lab's pooler this run's sessions use: the schema's, or
    /// where the pooler has a pool per database (`lab spec`), the
    /// database's (PgBouncer makes it on first use).
    fn pool(&self) -> String {
        if self.pooler.as_ref().is_some_and(|p| p.any_database) {
            self.pg.get_dbname().unwrap_or("postgres").to_string()
        } else {
            self.schema.clone()
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
            .query_typed(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
                 WHERE application_name LIKE $1 || '%' AND pid <> pg_backend_pid() AND usename = current_user",
                &[(&self.app_prefix(), Type::TEXT)],
            )
            .await
            .ctx(msg::terminate)?;
        Ok(())
    }

    /// Rows from the control connection (for checks after a variant: these
    /// reads are not part of the interleaving, so not recorded).
    pub async fn rows(&self, sql: &str) -> Result<ResultSet> {
        let full = format!("SET search_path TO \"{}\"; {sql}", self.schema);
        let msgs =
            self.control.simple_query(&full).await.map_err(|e| {
                crate::postgres::connect::sql_error(e, msg::check_failed(crate::sql_lexer::one_line(sql)))
            })?;
        Ok(last_set(&results_of(&full, &msgs)).cloned().unwrap_or_default())
    }

    /// One value (first column, first row) from the control connection,
    /// not recorded; what went wrong is framed with `what`.
    pub async fn value(&self, sql: &str, what: impl Fn() -> crate::i18n::Text) -> Result<Option<String>> {
        connect::simple_value(&self.control, sql)
            .await
            .map_err(|e| connect::sql_error(e, what()))
    }

    /// Asks the control connection a yes-or-no question until the server
    /// says yes or `within` has passed; whether it said yes.
    pub async fn until(&self, sql: &str, within: Duration, what: impl Fn() -> crate::i18n::Text) -> Result<bool> {
        super::until_yes(within, || self.value(sql, &what)).await
    }

    /// A single integer from the control connection.
    pub async fn int(&self, sql: &str) -> Result<i64> {
        let rows = self.rows(sql).await?;
        rows.rows
            .first()
            .and_then(|r| r.first())
            .and_then(|v| v.as_deref())
            .and_then(|v| v.parse().ok())
            .ctx(|| msg::check_no_integer(crate::sql_lexer::one_line(sql)))
    }

    /// How many of these backends the server still lists.
    pub async fn backends_left(&self, pids: &[i32]) -> Result<i64> {
        if self.server.behind_pooler {
            let sql = format!(
                "SELECT count(*) FROM pg_stat_activity WHERE pid = ANY({})",
                int_array(pids)
            );
            let rows = self.pooled_rows(&sql).await?;
            return Ok(first_int(&rows).unwrap_or(0));
        }
        let rows = self
            .control
            .query_typed(
                "SELECT count(*) FROM pg_stat_activity WHERE pid = ANY($1)",
                &[(&pids, Type::INT4_ARRAY)],
            )
            .await
            .ctx(msg::read_activity)?;
        Ok(rows.first().map_or(0, |r| r.get(0)))
    }

    /// How many of these backends still serve this variant: listed by the
    /// server and still named with `app` (a session pooler keeps the backend
    /// of a closed client and resets its application_name; it is no longer ours).
    pub async fn backends_serving(&self, pids: &[i32], app: &str) -> Result<i64> {
        // Names are cut at 63 bytes (see connect()); the prefix is compared as stored.
        let app = crate::postgres::connect::app_name(app);
        let rows = self
            .control
            .query_typed(
                "SELECT count(*) FROM pg_stat_activity WHERE pid = ANY($1) AND starts_with(application_name, $2)",
                &[(&pids, Type::INT4_ARRAY), (&app, Type::TEXT)],
            )
            .await
            .ctx(msg::read_activity)?;
        Ok(rows.first().map_or(0, |r| r.get(0)))
    }

    /// Waits (with the deadline) until the server lists none of the
    /// backends (one question per look, however many): a terminated backend
    /// releases its locks a moment before its activity entry goes. Says
    /// whether they went.
    pub async fn await_gone(&self, pids: &[i32]) -> Result<bool> {
        let deadline = Instant::now() + self.wait_timeout;
        loop {
            if self.backends_left(pids).await? == 0 {
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
                &[&crate::postgres::connect::app_name(app)],
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
            let held = crate::postgres::pgbouncer::server_pids(&pooler.admin, &self.pool()).await?;
            if !held.iter().any(|p| pids.contains(p)) {
                return Ok(true);
            }
            if Instant::now() > deadline {
                return Ok(false);
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }

    /// Through a transaction pooler of the user's, once a run's sessions
    /// have closed: ends the server connections whose last client was one
    /// of them (named `app...`, as the sessions set it) and that no client
    /// uses now, and waits until they are gone. What a session left on
    /// them (temporary tables, SETs, session advisory locks) would
    /// otherwise stay in the pool for the next client; the pooler opens new
    /// ones as it needs them. How many there were.
    pub async fn end_pooled_leftovers(&self, app: &str) -> Result<usize> {
        if !self.server.behind_pooler {
            return Ok(0);
        }
        let app = crate::postgres::connect::app_name(app);
        // The idle ones are ended (in the target list: evaluated only for
        // the rows kept); a busy one (the pooler handing it to a client)
        // answers NULL and gets a second look, within the deadline. The
        // server connection the question itself runs on may be one of them
        // (the pooler names it after whichever client it serves): it cannot
        // end itself and answer, so it is cleaned in place, as DISCARD ALL
        // would (which cannot run in the message's transaction block; RESET
        // ALL and the role are in the prelude).
        let sql = format!(
            "SELECT pid, CASE WHEN state = 'idle' THEN pg_terminate_backend(pid) END \
               FROM pg_stat_activity WHERE starts_with(application_name, {}) \
                AND usename = current_user AND pid <> pg_backend_pid();\
             DISCARD TEMP;DISCARD PLANS;DISCARD SEQUENCES;DEALLOCATE ALL;UNLISTEN *;\
             SELECT pg_advisory_unlock_all();",
            crate::sql_lexer::literal(&app)
        );
        let mut ended = 0;
        let deadline = Instant::now() + self.wait_timeout.min(Duration::from_secs(5));
        loop {
            let rows = self.pooled_rows(&sql).await?;
            // The pg_stat_activity rows: two columns (the last row is the unlock's).
            let backends: Vec<(i32, Option<String>)> = rows
                .iter()
                .filter(|r| r.len() == 2)
                .filter_map(|r| Some((r[0].as_deref()?.parse().ok()?, r[1].clone())))
                .collect();
            let terminated: Vec<i32> = backends
                .iter()
                .filter(|(_, t)| t.as_deref() == Some("t"))
                .map(|(pid, _)| *pid)
                .collect();
            self.await_gone(&terminated).await?;
            ended += terminated.len();
            let busy = backends.iter().any(|(_, t)| t.is_none());
            if !busy || Instant::now() > deadline {
                return Ok(ended);
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// Ends these backends while they are still named with `app` (best
    /// effort: some may be gone already). A pid kept after its backend
    /// ended may name another backend by now (process ids wrap around, at
    /// 32768 on many machines): that one, not lab's, is left alone.
    pub async fn terminate(&self, pids: &[i32], app: &str) {
        terminate_via(&self.control, pids, app).await
    }
}

/// [`Env::terminate`] through `control`.
pub async fn terminate_via(control: &Client, pids: &[i32], app: &str) {
    let _ = control
        .query_typed(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
              WHERE pid = ANY($1) AND starts_with(application_name, $2)",
            &[
                (&pids, Type::INT4_ARRAY),
                (&crate::postgres::connect::app_name(app), Type::TEXT),
            ],
        )
        .await;
}

/// The statement that cancels (`terminate`: terminates) backend `pid`. With
/// `since`, the server's clock in epoch seconds when the pid was read from
/// its backend, only a backend that had started by then: pids are reused
/// (kernel.pid_max wraps), and a backend that started later holds the pid
/// only because the one lab meant ended, perhaps another user's. (Not by
/// application_name: a spec may SET its own.) A backend another role owns
/// shows no backend_start, and is not signalled either.
pub fn signal_sql(terminate: bool, pid: i32, since: Option<&str>) -> String {
    let f = if terminate {
        "pg_terminate_backend"
    } else {
        "pg_cancel_backend"
    };
    // The server's own number, read back as text: put in the statement as it is.
    let number = |t: &&str| !t.is_empty() && t.chars().all(|c| c.is_ascii_digit() || c == '.');
    match since.filter(number) {
        Some(t) => format!(
            "SELECT {f}(pid) FROM pg_stat_activity WHERE pid = {pid} AND extract(epoch FROM backend_start)::numeric <= {t}"
        ),
        None => format!("SELECT {f}({pid})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int_arrays_go_both_ways_as_text() {
        assert_eq!(parse_int_array(Some("{12,345}")), vec![12, 345]);
        assert_eq!(parse_int_array(Some("{}")), Vec::<i32>::new());
        assert_eq!(parse_int_array(None), Vec::<i32>::new());
        assert_eq!(int_array(&[7, 8]), "ARRAY[7,8]::int[]");
        assert_eq!(int_array(&[]), "ARRAY[]::int[]");
        assert_eq!(first_int(&[vec![Some("3".into())]]), Some(3));
        assert_eq!(first_int(&[]), None);
    }
}
