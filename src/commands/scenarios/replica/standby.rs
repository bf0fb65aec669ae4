//! The standby a replica variant reads from: lab's own (made with
//! pg_basebackup for the variant) or the user's (--standby-url), checked to
//! stream from the run's server; replay paused and resumed from lab's own
//! session there, every wait confirmed from the servers.
use std::time::{Duration, Instant};

use anyhow::Result;

use super::msg;
use super::opts::ReplicaOpts;
use crate::commands::scenarios::Cx;
use crate::engine::answer::Res;
use crate::engine::{Deviation, Opener, Recorder, Session, secs};
use crate::i18n::Text;
use crate::named_sql::SqlFile;
use crate::postgres::cluster::Cluster;
use crate::postgres::connect;
use crate::postgres::conninfo;
use crate::report::ResultSet;

/// The standby a variant reads from, and how to open sessions on it.
pub(super) struct Standby {
    /// lab's own standby, removed when dropped; none for the user's.
    pub(super) own: Option<Cluster>,
    /// Where its sessions connect (in the variant's database).
    pub(super) cfg: crate::postgres::ConnInfo,
    pub(super) opener: Opener,
    pub(super) sql: SqlFile,
    /// lab's session on the standby (pause, resume, what it has replayed).
    pub(super) admin: Admin,
    pub(super) version_num: i32,
    /// How long lab waits for the standby (the run's --wait-timeout).
    pub(super) deadline: Duration,
}

impl Standby {
    /// The standby for this variant, with `settings` if lab makes it; none
    /// (and the variant skipped, with why) where it cannot run.
    pub(super) async fn start(cx: &mut Cx<'_>, settings: &str) -> Result<Option<Standby>> {
        let sql = cx.sql("replica.sql")?;
        let url = cx.options::<ReplicaOpts>().standby_url.clone();
        let (own, cfg) = match (url, cx.env.throwaway.clone()) {
            (Some(url), _) => {
                if !settings.is_empty() {
                    cx.skip(msg::needs_own_standby(settings));
                    return Ok(None);
                }
                (None, conninfo::parse_url(&url, &conninfo::process_env, cx.opts.lang)?)
            }
            (None, Some((bin, _))) if crate::postgres::cluster::basebackup_for(&bin).is_none() => {
                cx.skip(msg::no_basebackup(bin.display().to_string()));
                return Ok(None);
            }
            (None, Some((bin, port))) => {
                let settings = settings.to_string();
                // On this thread, as the throwaway cluster: the standby's
                // parent-death signal is tied to the thread that starts it.
                let standby = tokio::task::block_in_place(|| Cluster::standby_of(&bin, port, &settings))?;
                // The primary's settings at the standby's port: the database
                // the variant runs in (its own, beside other scenarios) and
                // TLS (a copy of a TLS-only primary is TLS-only, with its certificate).
                let cfg = cx.env.pg.through(std::net::Ipv4Addr::LOCALHOST.into(), standby.port);
                (Some(standby), cfg)
            }
            (None, None) => {
                cx.skip(msg::needs_standby_url());
                return Ok(None);
            }
        };
        // Its sessions are the standby's: the variant's close looks for its
        // own on the primary; lab's pooler (--pooler) is in front of the primary only.
        let opener = cx.opener().elsewhere(cfg.clone());
        let admin = Admin::open(opener.clone(), cx.env.wait_timeout).await?;
        let is_standby = admin.value("SELECT pg_is_in_recovery()::text").await?;
        if is_standby.as_deref() != Some("true") {
            anyhow::bail!(msg::not_a_standby(connect::where_of(&cfg)));
        }
        let ident = "SELECT system_identifier::text FROM pg_control_system()";
        let theirs = admin.value(ident).await?;
        let ours = cx.env.value(ident, msg::standby_check).await?;
        // Copies of one cluster share a system identifier (lab's throwaway
        // servers all come from one template): the port it streams from tells too.
        let sender = admin
            .value("SELECT sender_port::text FROM pg_stat_wal_receiver")
            .await?;
        let port = cx
            .env
            .value("SELECT current_setting('port')", msg::standby_check)
            .await?;
        if theirs != ours || sender.is_some_and(|s| Some(s) != port) {
            anyhow::bail!(msg::not_our_standby(connect::where_of(&cfg)));
        }
        if let Some(s) = &own {
            cx.narrate(msg::made(s.port, s.startup.as_millis() as u64));
        }
        // Where the variant runs, as the standby says (beside other
        // scenarios, lab's throwaway server gives replica a database of its own).
        let database = admin.value("SELECT current_database()").await?;
        cx.metric("database", database);
        let st = Standby {
            own,
            cfg,
            opener,
            sql,
            admin,
            version_num: cx.env.server.version_num,
            deadline: cx.env.wait_timeout,
        };
        // The schema the variant just built must be on the standby first.
        let lsn = cx
            .env
            .value("SELECT pg_current_wal_lsn()::text", msg::standby_check)
            .await?
            .unwrap_or_default();
        if !st.until("replayed", &lsn, cx.env.wait_timeout).await? {
            return Err(Deviation(msg::never_caught_up(&lsn, secs(cx.env.wait_timeout))).into());
        }
        Ok(Some(st))
    }

    pub(super) async fn open(&self, name: &str) -> Result<Session> {
        self.opener.open(name).await
    }

    /// Polls a boolean statement of lab/replica.sql on the standby (quietly)
    /// until it is true or `within` has passed.
    pub(super) async fn until(&self, step: &str, lsn: &str, within: Duration) -> Result<bool> {
        let sql = self.sql.bind(step, &[("lsn", &lsn)])?;
        self.admin.until(&sql, within).await
    }

    /// Pauses replay and waits until the standby says it is paused.
    pub(super) async fn pause(&self, cx: &Cx<'_>) -> Result<()> {
        self.admin.exec("pause", self.sql.get("pause")?).await?;
        self.paused(cx).await?;
        self.admin.note(msg::paused());
        Ok(())
    }

    /// Waits until the standby says replay is paused.
    pub(super) async fn paused(&self, cx: &Cx<'_>) -> Result<()> {
        let check = if self.version_num >= 140000 {
            "SELECT pg_get_wal_replay_pause_state() = 'paused'"
        } else {
            "SELECT pg_is_wal_replay_paused()"
        };
        if !self.admin.until(check, cx.env.wait_timeout).await? {
            return Err(Deviation(msg::never_paused(secs(cx.env.wait_timeout))).into());
        }
        Ok(())
    }

    /// Whether commits wait for the standby yet: lab's own probe, not in the
    /// timeline. pg_stat_replication says sync once the walsender has read
    /// the new synchronous_standby_names, but a commit waits only once the
    /// checkpointer has too (it sets the flag commits look at). With replay
    /// paused, the probe's commit (`sync_probe`, remote_apply) must be seen
    /// waiting in SyncRep; resuming replay lets it go. Asked again until it
    /// waits, within the deadline.
    pub(super) async fn commits_wait(&self, cx: &Cx<'_>) -> Result<bool> {
        let probe = cx.opener().open_quiet("probe").await?;
        let deadline = Instant::now() + cx.env.wait_timeout;
        loop {
            self.admin.value(self.sql.get("pause")?).await?;
            self.paused(cx).await?;
            let mut sent = probe.send(self.sql.get("sync_probe")?);
            let waited = waits_for_standby(cx, &probe, &mut sent, deadline).await?;
            self.admin.value(self.sql.get("resume")?).await?;
            if !sent.ready_within(cx.env.wait_timeout).await {
                return Ok(false);
            }
            if waited || Instant::now() > deadline {
                return Ok(waited);
            }
        }
    }

    pub(super) async fn resume(&self) -> Result<()> {
        self.admin.exec("resume", self.sql.get("resume")?).await?;
        Ok(())
    }

    /// Resumes replay (if paused) and stops lab's standby, once the
    /// variant's sessions (dropped before) have left it, as the standby
    /// says: one still there would hear the shutdown, sometimes in time to
    /// put it in the timeline.
    pub(super) async fn stop(self) -> Result<()> {
        let _ = self.admin.value("SELECT pg_wal_replay_resume()::text").await;
        if self.own.is_some() {
            let alone = "SELECT count(*) = 0 FROM pg_stat_activity \
                         WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()";
            let _ = self.admin.until(alone, self.deadline).await;
        }
        drop(self.admin);
        if let Some(s) = self.own {
            tokio::task::spawn_blocking(move || drop(s)).await?;
        }
        Ok(())
    }
}

/// lab's own session on the standby. A recovery conflict can end it: on
/// PostgreSQL 12 to 16 a conflict signalled while one of its reads runs, but
/// handled only once the read has answered, ends the session with FATAL
/// 40001 ("terminating connection due to conflict with recovery"), as it
/// ends a session idle in a transaction (soak: 1 run in 15, a read of the
/// snapshot-conflict variant's own conflict; on a loaded machine the read
/// outlived max_standby_streaming_delay). Its statements change nothing
/// twice (reads, pause, resume): it is opened again, the statement asked
/// again, and the timeline says so. Any other end stands.
pub(super) struct Admin {
    opener: Opener,
    session: std::sync::Mutex<Session>,
    /// How long it is opened again for (the run's --wait-timeout).
    deadline: Duration,
}

impl Admin {
    async fn open(opener: Opener, deadline: Duration) -> Result<Admin> {
        let session = opener.open_quiet(ADMIN).await?;
        Ok(Admin {
            opener,
            session: std::sync::Mutex::new(session),
            deadline,
        })
    }

    fn session(&self) -> Session {
        self.session.lock().unwrap().clone()
    }

    /// `ask` on the session; asked again on a new one while a recovery
    /// conflict is what ended it, within the deadline.
    async fn again<T, F, Fut>(&self, ask: F) -> Result<T>
    where
        F: Fn(Session) -> Fut,
        Fut: std::future::Future<Output = Result<T>>,
    {
        let deadline = Instant::now() + self.deadline;
        loop {
            let s = self.session();
            let answer = ask(s.clone()).await;
            if answer.is_ok() || Instant::now() > deadline {
                return answer;
            }
            match s.ended().await {
                Some(end) if end.recovery_conflict() => {
                    let fresh = self.opener.open_quiet(ADMIN).await?;
                    fresh.note(msg::admin_reopened(end.severity, end.code, end.message));
                    *self.session.lock().unwrap() = fresh;
                }
                _ => return answer,
            }
        }
    }

    /// One value `sql` reads (not recorded).
    pub(super) async fn value(&self, sql: &str) -> Result<Option<String>> {
        self.again(|s| async move { s.value(sql, msg::standby_check).await })
            .await
    }

    /// Asks a yes-or-no question until the standby says yes or `within` has passed.
    pub(super) async fn until(&self, sql: &str, within: Duration) -> Result<bool> {
        crate::engine::until_yes(within, || self.value(sql)).await
    }

    pub(super) async fn exec(&self, step: &str, sql: &str) -> Result<Vec<Res>> {
        self.again(|s| async move { s.exec(step, sql).await }).await
    }

    pub(super) async fn rows(&self, step: &str, sql: &str) -> Result<ResultSet> {
        self.again(|s| async move { s.rows(step, sql).await }).await
    }

    pub(super) fn note(&self, text: Text) {
        self.session().note(text);
    }

    pub(super) fn recorder(&self) -> &Recorder {
        self.opener.recorder()
    }
}

/// The admin session's name.
const ADMIN: &str = "standby";

/// Whether the primary shows `s`'s commit (`sent`) waiting for the standby
/// (wait_event SyncRep, which pg_blocking_pids does not show) before it
/// answers or `deadline` passes.
pub(super) async fn waits_for_standby(
    cx: &Cx<'_>,
    s: &Session,
    sent: &mut crate::engine::session::Sent,
    deadline: Instant,
) -> Result<bool> {
    loop {
        // Behind lab's pooler (--pooler): the backend the commit runs on.
        crate::engine::session::refresh_pids(&cx.env.control, std::slice::from_ref(s))
            .await
            .map_err(anyhow::Error::from)?;
        let sql = format!("SELECT wait_event FROM pg_stat_activity WHERE pid = {}", s.pid());
        let ev = cx.env.value(&sql, msg::standby_check).await?;
        if ev.as_deref() == Some("SyncRep") {
            return Ok(true);
        }
        if sent.ready() || Instant::now() > deadline {
            return Ok(false);
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

/// The primary's WAL position now (written, maybe not yet flushed: a
/// VACUUM commits without flushing, and the standby is sent WAL once the
/// WAL writer has flushed it).
pub(super) async fn primary_lsn(cx: &Cx<'_>) -> Result<String> {
    Ok(cx
        .env
        .value("SELECT pg_current_wal_lsn()::text", msg::standby_check)
        .await?
        .unwrap_or_default())
}
