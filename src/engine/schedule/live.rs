//! The scheduler's [`Server`] on real sessions: statements go to their
//! connections, waits are read from the server through the control
//! connection (`pg_blocking_pids`, `pg_safe_snapshot_blocking_pids`,
//! `pg_stat_activity.wait_event`, `pg_locks`), cancels and terminations
//! are sent from it.
use anyhow::Result;

use super::{Blocking, Server};
use crate::engine::Env;
use crate::engine::answer::{Answer, last_set};
use crate::engine::env::Watched;
use crate::engine::session::{Sent, Session, refresh_pids_of};
use crate::i18n::Text;
use crate::report::ResultSet;

/// A permutation's sessions and the control connection that watches them.
pub struct Live<'a> {
    env: &'a Env,
    sessions: &'a [Session],
    setup: &'a Session,
    blocked_q: Watched,
    lock_q: Watched,
    holder_q: Watched,
}

impl<'a> Live<'a> {
    /// `patient`: a spec's steps wait as isolationtester sees it (locks,
    /// safe snapshots); lab's scenarios also wait for synchronous standbys.
    pub async fn new(env: &'a Env, sessions: &'a [Session], setup: &'a Session, patient: bool) -> Result<Live<'a>> {
        let q = env.watch_queries().await?;
        let (blocked_q, lock_q, holder_q) = (
            if patient {
                q.blocked.clone()
            } else {
                q.blocked_or_event.clone()
            },
            q.lock.clone(),
            q.holder.clone(),
        );
        Ok(Live {
            env,
            sessions,
            setup,
            blocked_q,
            lock_q,
            holder_q,
        })
    }

    fn session(&self, s: Option<usize>) -> &Session {
        s.map_or(self.setup, |i| &self.sessions[i])
    }

    /// When the backend `pid` names was read from it, for the session it serves.
    fn since(&self, pid: i32) -> Option<&str> {
        self.sessions
            .iter()
            .map(Session::backend)
            .find(|(p, _)| *p == pid)
            .and_then(|(_, since)| since)
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
            refresh_pids_of(self.env, self.sessions).await?;
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
        let (locks, snapshot, event) = self.env.blocked(&self.blocked_q, pid).await?;
        // Behind lab's pooler, a statement with no backend yet while the
        // pool is full and a client waits for a server connection.
        let pooler_queued = match &self.env.pooler {
            Some(p) if pid == 0 => p.full(&self.env.schema).await?,
            _ => false,
        };
        Ok(Blocking {
            locks,
            snapshot,
            event,
            pooler_queued,
        })
    }

    async fn lock(&self, pid: i32) -> Result<Option<String>> {
        self.env.text_about(&self.lock_q, pid).await
    }

    async fn holder(&self, pid: i32) -> Result<Option<String>> {
        self.env.text_about(&self.holder_q, pid).await
    }

    async fn cancel(&self, pid: i32) -> Result<()> {
        self.env.signal_backend(pid, self.since(pid), false).await
    }

    async fn terminate(&self, pid: i32) -> Result<()> {
        self.env.signal_backend(pid, self.since(pid), true).await
    }

    async fn read(&self, sql: &str) -> Result<ResultSet, tokio_postgres::Error> {
        let results = self.setup.simple(sql).await?;
        Ok(last_set(&results).cloned().unwrap_or_default())
    }

    fn at(&self, s: Option<usize>, sql: &str) -> Text {
        self.session(s).at(sql)
    }
}
