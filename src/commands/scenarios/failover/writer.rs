//! The writer (session W): the application whose writes a failover may
//! lose. Each write has an id of its own; the writer keeps what its COMMIT
//! answered (acknowledged, failed, or unknown: the connection went first),
//! which node answered and the WAL position after the commit. It finds the
//! primary as a client with a multi-host URL and
//! `target_session_attrs=primary` does ([`first_primary`]).
use std::time::{Duration, Instant};

use anyhow::Result;

use super::fx::Fx;
use super::msg;
use super::verdict::{Outcome, Write, lsn};
use crate::commands::scenarios::Cx;
use crate::engine::answer::last_set;
use crate::engine::observe::Waited;
use crate::engine::{Answer, Opener, Sent, Session};
use crate::report::{StepResult, WaitKind};

/// The writer's session name in the timeline.
pub(super) const W: &str = "W";

/// A write sent, its answer not yet read.
pub(super) struct Pending {
    sent: Sent,
    sql: String,
    step: &'static str,
    pub id: i64,
    waited: Option<Waited>,
    notices: usize,
}

/// What a write's answer said.
pub(super) struct Answered {
    pub outcome: Outcome,
    /// The server sent a WARNING with it (a synchronous wait cancelled).
    pub warning: Option<String>,
    /// The statement's command tags (`INSERT 0 0`: nothing inserted).
    pub tags: Vec<String>,
}

/// The writer and every write it made.
pub(super) struct Writer {
    session: Option<Session>,
    node: Option<usize>,
    pub writes: Vec<Write>,
    next: i64,
    /// Writes are counted but not put in the timeline one by one (a loop
    /// of hundreds), when set.
    quiet: bool,
}

impl Writer {
    pub fn new() -> Writer {
        Writer {
            session: None,
            node: None,
            writes: Vec::new(),
            next: 0,
            quiet: false,
        }
    }

    pub fn session(&self) -> Option<&Session> {
        self.session.as_ref()
    }

    /// Connects to the first node that takes writes, in node order, trying
    /// again until one does or `within` passes; whether it found one.
    pub async fn connect(&mut self, cx: &Cx<'_>, fx: &Fx, within: Duration) -> Result<bool> {
        self.session = None;
        let began = Instant::now();
        match first_primary(&fx.openers(), W, within).await? {
            Some(found) => {
                found.session.note(msg::connected(
                    fx.name(found.index),
                    found.tries,
                    began.elapsed().as_millis() as u64,
                ));
                self.node = Some(found.index);
                self.session = Some(found.session);
                Ok(true)
            }
            None => {
                cx.recorder().note(W, msg::no_primary(within.as_secs()));
                self.node = None;
                Ok(false)
            }
        }
    }

    /// Connects to node `i` as it is (a client that knows only that node).
    pub async fn connect_to(&mut self, fx: &Fx, i: usize) -> Result<()> {
        self.session = None;
        let s = fx.open(i, W).await?;
        s.note(msg::connected(fx.name(i), 1, 0));
        self.session = Some(s);
        self.node = Some(i);
        Ok(())
    }

    /// Drops the writer's connection.
    pub fn disconnect(&mut self) {
        self.session = None;
        self.node = None;
    }

    pub fn next_id(&mut self) -> i64 {
        self.next += 1;
        self.next
    }

    /// Writes `n` new rows one after the other; their outcomes.
    pub async fn write_n(&mut self, cx: &Cx<'_>, fx: &Fx, n: usize) -> Result<Vec<Outcome>> {
        let mut out = Vec::new();
        for _ in 0..n {
            let id = self.next_id();
            let p = self.begin(fx, "write", id).await?;
            out.push(self.finish(cx, fx, p, fx.deadline).await?.outcome);
        }
        Ok(out)
    }

    /// Sends the write of `id` with lab/failover.sql's `statement`.
    pub async fn begin(&mut self, fx: &Fx, statement: &'static str, id: i64) -> Result<Pending> {
        let request = format!("r{id}");
        let sql = fx.sql.bind(statement, &[("id", &id), ("request", &request)])?;
        let s = self
            .session
            .as_ref()
            .ok_or_else(|| anyhow::Error::new(msg::not_connected()))?;
        // Under --step: the statement (and why) first.
        s.prompt(Some(statement), &sql, None).await;
        let notices = s.notices();
        let sent = s.send(&sql);
        Ok(Pending {
            sent,
            sql,
            step: statement,
            id,
            waited: None,
            notices,
        })
    }

    /// Whether the write waits for a synchronous standby (SyncRep), as node
    /// `i` shows it in pg_stat_activity, before it answers or `within`
    /// passes; the wait goes in the timeline.
    pub async fn waits_for_standby(
        &self,
        cx: &Cx<'_>,
        fx: &Fx,
        p: &mut Pending,
        standby: &str,
        within: Duration,
    ) -> Result<bool> {
        let (Some(s), Some(i)) = (&self.session, self.node) else {
            return Ok(false);
        };
        let admin = fx.admin(i).await?;
        let sql = format!("SELECT wait_event FROM pg_stat_activity WHERE pid = {}", s.pid());
        let until = Instant::now() + within;
        loop {
            let ev = crate::postgres::connect::simple_value(&admin, &sql).await?;
            if ev.as_deref() == Some("SyncRep") {
                let w = Waited {
                    by: vec![standby.to_string()],
                    kind: WaitKind::SyncRep,
                    lock: None,
                };
                cx.recorder().waiting(p.sent.at, W, Some(p.step), &p.sql, &w);
                p.waited = Some(w);
                return Ok(true);
            }
            if p.sent.ready() || Instant::now() > until {
                return Ok(false);
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    }

    /// Whether the write's answer has come.
    pub fn answered(p: &mut Pending) -> bool {
        p.sent.ready()
    }

    /// Reads the write's answer (within `within`; none by then is an
    /// unknown outcome, the statement cancelled), records it and what it
    /// means for the client.
    pub async fn finish(&mut self, cx: &Cx<'_>, fx: &Fx, mut p: Pending, within: Duration) -> Result<Answered> {
        let s = self
            .session
            .clone()
            .ok_or_else(|| anyhow::Error::new(msg::not_connected()))?;
        let came = p.sent.ready_within(within).await;
        let (mut answer, at): (Answer, Instant) = match p.sent.take() {
            Some(a) => a,
            None => {
                if !came {
                    s.cancel().await;
                }
                cx.recorder().note(W, msg::no_answer(p.id, within.as_secs()));
                let w = Write {
                    id: p.id,
                    outcome: Outcome::Unknown,
                    node: self.node.map(|i| fx.name(i).to_string()),
                    lsn: None,
                    t_ms: cx.recorder().now_ms(),
                };
                self.writes.push(w);
                return Ok(Answered {
                    outcome: Outcome::Unknown,
                    warning: None,
                    tags: Vec::new(),
                });
            }
        };
        s.track(&p.sql, &mut answer);
        let took = at.saturating_duration_since(p.sent.at);
        if !self.quiet || answer.is_err() {
            cx.recorder().answer(
                at,
                W,
                Some(p.step),
                &p.sql,
                &answer,
                p.waited.as_ref().map(|w| (w, took)),
                None,
            );
        }
        // Its NOTICEs and WARNINGs are in the timeline already (the session's sink).
        s.drain();
        let warning = (s.notices() > p.notices)
            .then(|| {
                cx.recorder()
                    .details(W, StepResult::Notice)
                    .into_iter()
                    .rev()
                    .find(|d| d.starts_with("WARNING"))
            })
            .flatten();
        let (results, lost) = match &answer {
            Ok(r) => (r.clone(), false),
            Err(e) => (e.before.clone(), e.connection_lost),
        };
        let committed = results.iter().any(|r| r.tag == "COMMIT");
        let outcome = match (&answer, committed, lost) {
            (_, true, _) => Outcome::Acked,
            (Err(_), false, true) => Outcome::Unknown,
            _ => Outcome::Failed,
        };
        let set = last_set(&results).cloned();
        let node = set
            .as_ref()
            .and_then(|s| s.get(0, "port"))
            .and_then(|p| fx.node_of_port(p))
            .or(self.node);
        if lost {
            self.session = None;
        } else if outcome == Outcome::Failed && s.tx() != crate::engine::session::Tx::Idle {
            // As an application does after an error: the transaction is over.
            let _ = s.simple("ROLLBACK").await;
            s.track("ROLLBACK", &mut Ok(Vec::new()));
        }
        self.writes.push(Write {
            id: p.id,
            outcome,
            node: node.map(|i| fx.name(i).to_string()),
            lsn: set.as_ref().and_then(|s| s.get(0, "lsn")).and_then(lsn),
            t_ms: cx.recorder().t_ms(at),
        });
        Ok(Answered {
            outcome,
            warning,
            tags: results.iter().map(|r| r.tag.clone()).collect(),
        })
    }

    /// Counts write `id`'s last outcome as `outcome` (a client that does
    /// not trust a success that came with a WARNING).
    pub fn reclassify(&mut self, id: i64, outcome: Outcome) {
        if let Some(w) = self.writes.iter_mut().rev().find(|w| w.id == id) {
            w.outcome = outcome;
        }
    }

    /// Writes until one is acknowledged, connecting again (to whichever
    /// node takes writes) after each that is not, within `within`: what an
    /// application's retry loop does through a failover. The acknowledged
    /// write's id, if any.
    pub async fn write_through(&mut self, cx: &Cx<'_>, fx: &Fx, within: Duration) -> Result<Option<i64>> {
        let id = self.next_id();
        Ok(self.retry(cx, fx, "write", id, within).await?.map(|_| id))
    }

    /// Sends `statement` for `id` until it is acknowledged, connecting
    /// again after each attempt that is not, within `within`; the answer
    /// that was acknowledged.
    pub async fn retry(
        &mut self,
        cx: &Cx<'_>,
        fx: &Fx,
        statement: &'static str,
        id: i64,
        within: Duration,
    ) -> Result<Option<Answered>> {
        let until = Instant::now() + within;
        while Instant::now() < until {
            // A connection already closed sends nothing: a new one first.
            if self.session.as_ref().is_some_and(|s| s.client().is_closed()) {
                self.disconnect();
            }
            if self.session.is_none()
                && !self
                    .connect(cx, fx, until.saturating_duration_since(Instant::now()))
                    .await?
            {
                return Ok(None);
            }
            let p = self.begin(fx, statement, id).await?;
            let a = self.finish(cx, fx, p, fx.deadline).await?;
            if a.outcome == Outcome::Acked {
                return Ok(Some(a));
            }
            // Failed or unknown: the same request again, on a connection that takes writes.
            self.disconnect();
        }
        Ok(None)
    }

    /// Writes new rows on the writer's connection as long as each is
    /// acknowledged (within `within`): the first `shown` in the timeline,
    /// the others counted (a note says how many). How many were acknowledged.
    pub async fn write_until_refused(&mut self, cx: &Cx<'_>, fx: &Fx, shown: usize, within: Duration) -> Result<usize> {
        let until = Instant::now() + within;
        let mut acked = Vec::new();
        while Instant::now() < until && self.session.as_ref().is_some_and(|s| !s.client().is_closed()) {
            self.quiet = acked.len() >= shown;
            let id = self.next_id();
            let p = self.begin(fx, "write", id).await?;
            if self.finish(cx, fx, p, fx.deadline).await?.outcome != Outcome::Acked {
                break;
            }
            acked.push(id);
        }
        self.quiet = false;
        if acked.len() > shown {
            let quiet = &acked[shown..];
            cx.recorder()
                .note(W, msg::more_acked(quiet.len(), super::verdict::ranges(quiet)));
        }
        Ok(acked.len())
    }

    /// Writes until one is acknowledged on the node Patroni's REST API
    /// says is the primary (`GET /primary` answers 200 there only), asked
    /// before each write, as HAProxy's health check does: a connection to
    /// any other node is dropped (`on-marked-down shutdown-sessions`).
    /// The acknowledged write's id, if any, within `within`.
    pub async fn write_routed(&mut self, cx: &Cx<'_>, fx: &Fx, within: Duration) -> Result<Option<i64>> {
        let until = Instant::now() + within;
        let id = self.next_id();
        let mut said: Option<Option<usize>> = None;
        while Instant::now() < until {
            let route = fx.patroni_primary().await;
            if said != Some(route) {
                cx.recorder().note(
                    W,
                    match route {
                        Some(i) => msg::routed_to(fx.name(i)),
                        None => msg::routed_nowhere(),
                    },
                );
                said = Some(route);
            }
            let Some(target) = route else {
                self.disconnect();
                tokio::time::sleep(Duration::from_millis(20)).await;
                continue;
            };
            let elsewhere = self.node != Some(target) || self.session.as_ref().is_none_or(|s| s.client().is_closed());
            if elsewhere && self.connect_to(fx, target).await.is_err() {
                self.disconnect();
                continue;
            }
            let p = self.begin(fx, "write", id).await?;
            if self.finish(cx, fx, p, fx.deadline).await?.outcome == Outcome::Acked {
                return Ok(Some(id));
            }
            self.disconnect();
        }
        Ok(None)
    }
}

/// A node that takes writes, found.
pub(super) struct Found {
    pub index: usize,
    pub session: Session,
    /// Connections tried, this one included.
    pub tries: usize,
}

/// The first node, in the order given, that accepts a connection and is
/// not in recovery, asked round after round until one is or `within`
/// passes: what libpq does with a multi-host URL and
/// `target_session_attrs=primary` (or `read-write`), and what a client
/// does when it retries that connection. (lab's connection layer opens one
/// host; when it takes such URLs itself, this is where it goes.)
pub(super) async fn first_primary(nodes: &[(usize, Opener)], name: &str, within: Duration) -> Result<Option<Found>> {
    let until = Instant::now() + within;
    let mut tries = 0;
    loop {
        for (i, opener) in nodes {
            tries += 1;
            let left = until
                .saturating_duration_since(Instant::now())
                .max(Duration::from_millis(100));
            let r = tokio::time::timeout(left.min(Duration::from_secs(3)), opener.open(name)).await;
            let Ok(Ok(s)) = r else {
                continue;
            };
            let primary = tokio::time::timeout(
                Duration::from_secs(3),
                s.value("SELECT NOT pg_is_in_recovery()", msg::is_primary),
            )
            .await;
            if matches!(primary, Ok(Ok(Some(ref v))) if v == "t") {
                return Ok(Some(Found {
                    index: *i,
                    session: s,
                    tries,
                }));
            }
        }
        if Instant::now() > until {
            return Ok(None);
        }
        // Round after round, as a client's connection retry does.
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
