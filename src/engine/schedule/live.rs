//! The scheduler's [`Server`] on real sessions: statements go to their
//! connections, waits are read from the server through the control
//! connection (`pg_blocking_pids`, `pg_safe_snapshot_blocking_pids`,
//! `pg_stat_activity.wait_event`, `pg_locks`), cancels and terminations
//! are sent from it.
use anyhow::Result;
use tokio_postgres::Statement;

use super::{Blocking, Server};
use crate::engine::answer::{Answer, last_set};
use crate::engine::session::{Sent, Session, refresh_pids};
use crate::engine::{Env, msg};
use crate::i18n::{Context, Text};
use crate::report::ResultSet;

/// A permutation's sessions and the control connection that watches them.
pub struct Live<'a> {
    env: &'a Env,
    sessions: &'a [Session],
    setup: &'a Session,
    blocked_q: Statement,
    lock_q: Statement,
}

impl<'a> Live<'a> {
    /// `patient`: a spec's steps wait as isolationtester sees it (locks,
    /// safe snapshots); lab's scenarios also wait for synchronous standbys.
    pub async fn new(env: &'a Env, sessions: &'a [Session], setup: &'a Session, patient: bool) -> Result<Live<'a>> {
        let q = env.watch_queries().await?;
        let (blocked_q, lock_q) = (
            if patient {
                q.blocked.clone()
            } else {
                q.blocked_or_event.clone()
            },
            q.lock.clone(),
        );
        Ok(Live {
            env,
            sessions,
            setup,
            blocked_q,
            lock_q,
        })
    }

    fn session(&self, s: Option<usize>) -> &Session {
        s.map_or(self.setup, |i| &self.sessions[i])
    }

    async fn control(&self, sql: &str, pid: i32) -> Result<()> {
        self.env.control.execute(sql, &[&pid]).await.ctx(msg::read_blocking)?;
        Ok(())
    }
}

impl Server for Live<'_> {
    fn names(&self) -> Vec<String> {
        self.sessions.iter().map(|s| s.name().to_string()).collect()
    }

    fn pids(&self) -> Vec<i32> {
        self.sessions.iter().map(Session::pid).collect()
    }

    async fn refresh(&mut self) -> Result<()> {
        if self.sessions.iter().any(Session::pooled) {
            refresh_pids(&self.env.control, self.sessions).await?;
        }
        Ok(())
    }

    fn send(&self, s: Option<usize>, sql: &str) -> Sent {
        self.session(s).send(sql)
    }

    fn track(&self, s: Option<usize>, sql: &str, answer: &mut Answer) -> bool {
        self.session(s).track(sql, answer)
    }

    async fn isolation(&self, s: usize) -> Option<String> {
        self.sessions[s].isolation().await
    }

    async fn prompt(&self, s: usize, step: &str, sql: &str) {
        self.sessions[s].prompt(Some(step), sql, None).await;
    }

    fn notices(&self, s: usize) -> usize {
        self.sessions[s].notices()
    }

    fn drain(&self, s: usize) {
        self.sessions[s].drain();
    }

    async fn blocking(&self, pid: i32) -> Result<Blocking> {
        let row = self
            .env
            .control
            .query_one(&self.blocked_q, &[&pid])
            .await
            .ctx(msg::read_blocking)?;
        // Behind lab's pooler, a statement with no backend yet while the
        // pool is full and a client waits for a server connection.
        let pooler_queued = match &self.env.pooler {
            Some(p) if pid == 0 => p.full(&self.env.schema).await?,
            _ => false,
        };
        Ok(Blocking {
            locks: row.get(0),
            snapshot: row.get(1),
            event: row.get(2),
            pooler_queued,
        })
    }

    async fn lock(&self, pid: i32) -> Result<Option<String>> {
        let rows = self
            .env
            .control
            .query(&self.lock_q, &[&pid])
            .await
            .ctx(msg::read_blocking)?;
        Ok(rows.first().and_then(|r| r.get::<_, Option<String>>(0)))
    }

    async fn cancel(&self, pid: i32) -> Result<()> {
        self.control("SELECT pg_cancel_backend($1)", pid).await
    }

    async fn terminate(&self, pid: i32) -> Result<()> {
        self.control("SELECT pg_terminate_backend($1)", pid).await
    }

    async fn read(&self, sql: &str) -> Result<ResultSet, tokio_postgres::Error> {
        let results = self.setup.simple(sql).await?;
        Ok(last_set(&results).cloned().unwrap_or_default())
    }

    fn at(&self, s: Option<usize>, sql: &str) -> Text {
        self.session(s).at(sql)
    }
}
