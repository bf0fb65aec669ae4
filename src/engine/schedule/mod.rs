//! Runs one permutation of a spec the way PostgreSQL's isolationtester does
//! (src/test/isolation/isolationtester.c, run_permutation and
//! try_complete_step): each step is sent on its session's connection; a step
//! the server says is waiting (on one of the spec's own sessions' locks, a
//! safe snapshot, or a synchronous standby) is put aside and the next step
//! goes on; waiting steps are looked at again after every step, in the order
//! they began waiting. So lab observes in the same order isolationtester
//! prints, and a test holds the two side by side.
//!
//! Where isolationtester waits up to five minutes, lab keeps a deadline:
//! when every running step is waiting (only the server can end that: a
//! timeout, the deadlock detector), lab gives the server the time the
//! documented behaviour needs, then cancels the waiting statements, records
//! that, and goes on, so a server that behaves differently gets a verdict
//! with its timeline instead of a hang.
mod live;
#[cfg(test)]
mod tests;

use std::time::Duration;

use anyhow::{Result, bail};
use tokio::time::Instant;

use super::answer::Answer;
use super::msg;
use super::observe::{Deviation, Observation, Recorder, StepRun, Waited, deadlock_pairs};
use super::session::{Sent, Session};
use super::transcript::{Transcript, error_message};
use super::{Env, secs};
use crate::i18n::Text;
use crate::report::{ResultSet, WaitKind, millis};
use crate::specfile::{Param, Planned, Resolved, Spec, bind};

pub use live::Live;

/// What the scheduler asks of the sessions and of the server: the live one
/// ([`Live`]) talks to PostgreSQL; the unit tests script the answers.
/// Sessions are numbered in the spec's order; `None` is the setup
/// connection (setup and teardown blocks, probes).
#[allow(async_fn_in_trait)]
pub trait Server {
    /// The sessions' names.
    fn names(&self) -> Vec<String>;
    /// The backends serving them, as last looked up (0: none right now).
    fn pids(&self) -> Vec<i32>;
    /// Behind a transaction pooler, looks the backends up again.
    async fn refresh(&mut self) -> Result<()>;
    /// Sends `sql` without waiting for its answer.
    fn send(&self, s: Option<usize>, sql: &str) -> Sent;
    /// Follows the transaction through an answered statement; whether it
    /// left a transaction it began open (to read its level back).
    fn track(&self, s: Option<usize>, sql: &str, answer: &mut Answer) -> bool;
    /// The isolation level of session `s`'s transaction, read back.
    async fn isolation(&self, s: usize) -> Option<String>;
    /// Under `--step`, shows the statement and waits for the person.
    async fn prompt(&self, s: usize, step: &str, sql: &str);
    /// NOTICEs session `s` has received so far.
    fn notices(&self, s: usize) -> usize;
    /// Reads whatever the server has already sent session `s`.
    fn drain(&self, s: usize);
    /// What the server says backend `pid` waits for.
    async fn blocking(&self, pid: i32) -> Result<Blocking>;
    /// The lock backend `pid` asks for, as pg_locks names it.
    async fn lock(&self, pid: i32) -> Result<Option<String>>;
    /// Who backend `pid` is (not one of the spec's), as pg_stat_activity
    /// says; none once it has gone.
    async fn holder(&self, pid: i32) -> Result<Option<String>>;
    async fn cancel(&self, pid: i32) -> Result<()>;
    async fn terminate(&self, pid: i32) -> Result<()>;
    /// A snapshot's rows, read on the setup connection.
    async fn read(&self, sql: &str) -> Result<ResultSet, tokio_postgres::Error>;
    /// Where a statement ran, for messages.
    fn at(&self, s: Option<usize>, sql: &str) -> Text;
}

/// What the server says of one backend's wait.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Blocking {
    /// Backends holding or awaiting a lock it waits for (`pg_blocking_pids`).
    pub locks: Vec<i32>,
    /// Backends whose transactions its safe snapshot waits on.
    pub snapshot: Vec<i32>,
    /// Its `pg_stat_activity.wait_event` (SyncRep: a synchronous standby).
    pub event: Option<String>,
    /// No backend serves it and lab's pooler has a client waiting for a server connection.
    pub pooler_queued: bool,
}

/// A step the documentation says waits: for which sessions, and for how
/// long at most (by default, the run's deadline).
#[derive(Debug, Clone)]
pub struct ExpectedWait {
    pub step: String,
    pub by: Vec<String>,
    pub within: Option<Duration>,
    /// The wait may end before lab can look (another session's timeout ends
    /// it): it is not required, only that it is for `by` if it is seen.
    pub optional: bool,
}

/// What a probe reads.
#[derive(Debug, Clone)]
pub enum ProbeQuery {
    /// SQL in which `:pids` stands for the sessions' backend pids (an int[]).
    Sql(String),
    /// How many locks a session's backend holds (its own virtual xid aside).
    LocksHeld(String),
    /// A session's backend as pg_stat_activity shows it: `state`, and
    /// `query_start` and `state_change` in seconds since the epoch (the
    /// server's clock, which a loaded client does not slow down).
    Activity(String),
}

/// A snapshot taken right after a step was handled (answered, or seen waiting).
#[derive(Debug, Clone)]
pub struct Probe {
    pub name: String,
    pub after: String,
    pub query: ProbeQuery,
}

/// The permutation and what to observe of it, whatever the server.
pub struct Plan<'a> {
    pub spec: &'a Spec,
    pub plan: &'a [Planned],
    pub params: &'a [(&'a str, Param)],
    pub expect: &'a [ExpectedWait],
    pub probes: &'a [Probe],
    pub recorder: &'a Recorder,
    /// isolationtester's transcript, written as the steps go (`lab spec`).
    pub transcript: Option<&'a Transcript>,
    /// Waits are the spec's business (`lab spec`): lab cancels a waiting
    /// step only at its deadline, as isolationtester does, not as soon as
    /// every session waits.
    pub patient: bool,
    /// A wait nothing can end (every running step waits for sessions with
    /// no step running: no deadlock can form, and the spec sets no timeout)
    /// is cancelled at once rather than at the deadline (`lab explore`,
    /// where such permutations are a class of their own).
    pub dead_ends: bool,
    /// How long a step sent is given to answer before lab first asks the
    /// server whether it waits (default: 2 ms for a spec, 1 ms otherwise).
    /// `lab spec --repeat` varies it from run to run, so that a step whose
    /// being seen waiting depends on that moment shows it.
    pub first_look: Option<Duration>,
}

/// The deadlines a run keeps.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    /// Every wait's deadline.
    pub deadline: Duration,
    /// The server's deadlock_timeout: a deadlock among the sessions is the server's to break within about that long.
    pub deadlock_timeout: Duration,
}

/// A step sent and not yet handled.
struct Active {
    pos: usize,
    sql: String,
    sent: Sent,
    /// When it was sent, on the scheduler's clock.
    began: Instant,
    waited: Option<Waited>,
    /// Whether the server said it waits, the last time it was asked.
    blocked: bool,
    cancelled: Option<Instant>,
    /// Cancelled as a dead end ([`Cancel::DeadEnd`]).
    dead_end: bool,
    terminated: Option<Instant>,
    /// When the server first answered whether it waits.
    looked: Option<std::time::Instant>,
    /// For `(step notices N)` blockers: (session, notices to reach).
    notice_targets: Vec<(usize, usize)>,
    /// Backends not the spec's seen holding a lock it waited for: (pid, who).
    outsiders: Vec<(i32, String)>,
}

#[derive(Debug, PartialEq)]
enum Status {
    Running,
    Blocked(Waited),
}

/// A running step the server says waits, as lab decides what to cancel.
#[derive(Debug, Clone)]
struct Stuck {
    session: String,
    /// The sessions it waits for (none when the server did not say).
    by: Vec<String>,
    /// Lab has cancelled it and it has not answered yet.
    cancelled: bool,
}

/// Which of the stuck steps (every running step waiting, past the time the
/// documentation allows) lab cancels now: one link of the chain at a time,
/// from where it begins. A step waiting for another stuck step may go on
/// once that one answers (its own lock_timeout, late on a starved machine:
/// ddl-lock-queue's C behind B), so only the steps waiting for no stuck
/// session are cancelled, and none while a step lab cancelled has not
/// answered yet. Where every step waits for another stuck one (a cycle the
/// server has not broken), all are.
fn stuck_to_cancel(stuck: &[Stuck]) -> Vec<usize> {
    if stuck.iter().any(|s| s.cancelled) {
        return Vec::new();
    }
    let stuck_session = |name: &String| stuck.iter().any(|s| &s.session == name);
    let roots: Vec<usize> = (0..stuck.len())
        .filter(|&i| !stuck[i].by.iter().any(|b| *b != stuck[i].session && stuck_session(b)))
        .collect();
    if roots.is_empty() {
        (0..stuck.len()).collect()
    } else {
        roots
    }
}

/// Why lab cancelled a statement.
enum Cancel {
    Stuck(Duration),
    Deadline,
    /// It waited for these sessions, none of which had a step running.
    DeadEnd(String),
}

struct Runner<'a, S: Server> {
    run: Plan<'a>,
    /// Every wait's deadline.
    deadline: Duration,
    server: &'a mut S,
    names: Vec<String>,
    active: Vec<Option<Active>>,
    /// Sessions whose step is waiting, in the order they began to.
    waiting: Vec<usize>,
    runs: Vec<Option<StepRun>>,
    stuck_since: Option<Instant>,
    pids: Vec<i32>,
    /// Every session but the target waiting: how long the server gets when
    /// some waiting step was not documented to wait.
    grace: Duration,
    /// The probes' snapshots, by name.
    taken: Vec<(String, ResultSet)>,
    /// Sessions whose connection a step's answer said was lost (a spec may
    /// end its own): no step can be sent on them.
    lost: Vec<bool>,
}

/// Runs the permutation on `sessions` (one per spec session, in the spec's
/// order; `setup`, a connection of its own for the setup and teardown
/// blocks and the probes), watched from `env`'s control connection.
pub async fn run(env: &Env, sessions: &[Session], setup: &Session, plan: Plan<'_>) -> Result<Observation> {
    let mut live = Live::new(env, sessions, setup, plan.patient).await?;
    let timing = Timing {
        deadline: env.step_deadline,
        deadlock_timeout: env.deadlock_timeout,
    };
    run_on(&mut live, plan, timing).await
}

/// Runs the permutation on `server`: isolationtester's rules, lab's deadlines.
pub async fn run_on<S: Server>(server: &mut S, run: Plan<'_>, timing: Timing) -> Result<Observation> {
    let n = server.names().len();
    let grace = (timing.deadlock_timeout * 2 + Duration::from_millis(200)).min(timing.deadline);
    let mut r = Runner {
        pids: server.pids(),
        names: server.names(),
        active: (0..n).map(|_| None).collect(),
        waiting: Vec::new(),
        runs: vec![None; run.plan.len()],
        stuck_since: None,
        grace,
        taken: Vec::new(),
        lost: vec![false; n],
        deadline: timing.deadline,
        run,
        server,
    };
    r.setup().await?;
    let outcome = r.steps().await;
    r.teardown().await;
    outcome?;
    let sessions = r.names.iter().cloned().zip(r.server.pids()).collect();
    let Runner { runs, taken, .. } = r;
    Ok(Observation {
        sessions,
        steps: runs.into_iter().flatten().collect(),
        probes: taken,
    })
}

/// Whether an error is the spec's setup block failing (its own SQL, as the
/// server answered it).
pub fn is_setup_failure(e: &anyhow::Error) -> bool {
    let key = msg::setup_failed("").key();
    e.chain()
        .any(|c| c.downcast_ref::<crate::i18n::Text>().is_some_and(|t| t.key() == key))
}

impl<S: Server> Runner<'_, S> {
    fn step_name(&self, pos: usize) -> &str {
        &self.run.spec.step(self.run.plan[pos].id).name
    }

    fn name(&self, s: usize) -> &str {
        &self.names[s]
    }

    async fn setup(&mut self) -> Result<()> {
        for sql in &self.run.spec.setup {
            let answer = self.block(None, sql).await?;
            if let Err(e) = answer {
                if let Some(t) = self.run.transcript {
                    t.fatal(format!("setup failed: {}", self.block_error(&e, sql)));
                }
                bail!(msg::setup_failed(e.line()));
            }
        }
        for (i, spec_session) in self.run.spec.sessions.iter().enumerate() {
            if let Some(sql) = &spec_session.setup {
                let answer = self.block(Some(i), sql).await?;
                let name = self.name(i);
                let now = std::time::Instant::now();
                // As sent: its two-way parameters bound (a phenomenon's level).
                let sent = bind(sql.trim(), self.run.params);
                self.run.recorder.answer(now, name, None, &sent, &answer, None, None);
                if let Err(e) = answer {
                    if let Some(t) = self.run.transcript {
                        t.fatal(format!("setup of session {name} failed: {}", self.block_error(&e, sql)));
                    }
                    return Err(Deviation(msg::session_setup_failed(name, e.line())).into());
                }
            }
        }
        Ok(())
    }

    /// Runs a setup or teardown block to its answer (within the deadline);
    /// isolationtester prints the last statement's rows, as PQexec returns them.
    async fn block(&self, s: Option<usize>, sql: &str) -> Result<Answer> {
        // Two-way parameters count in setup and teardown blocks too.
        let bound = bind(sql, self.run.params);
        let sql = bound.as_str();
        let mut sent = self.server.send(s, sql);
        if !sent.ready_within(self.deadline).await {
            return Err(Deviation(msg::no_answer(self.server.at(s, sql), secs(self.deadline))).into());
        }
        let (mut answer, _) = sent.take().expect("ready");
        self.server.track(s, sql, &mut answer);
        // PQexec reads the whole answer: the session's NOTICEs are printed first.
        if let Some(i) = s {
            self.read_notices(i);
        }
        if let (Some(t), Ok(results)) = (self.run.transcript, &answer)
            && let Some(set) = results.last().and_then(|r| r.set.as_ref())
        {
            t.out(super::transcript::pq_print(set));
        }
        Ok(answer)
    }

    /// A setup or teardown block's error as isolationtester prints it
    /// (PQerrorMessage, with the position in the block as sent).
    fn block_error(&self, e: &super::answer::PgError, sql: &str) -> String {
        error_message(e, Some(&bind(sql, self.run.params)))
    }

    /// isolationtester reports teardown failures and goes on; so does lab.
    /// Where isolationtester would have exited already (the transcript has
    /// ended), the teardown still runs, unreported.
    async fn teardown(&mut self) {
        let transcript = self.run.transcript.filter(|t| !t.ended());
        for (i, spec_session) in self.run.spec.sessions.iter().enumerate() {
            if let Some(sql) = &spec_session.teardown
                && let (Ok(Err(e)), Some(t)) = (self.block(Some(i), sql).await, transcript)
            {
                t.err(format!(
                    "teardown of session {} failed: {}",
                    self.name(i),
                    self.block_error(&e, sql)
                ));
            }
        }
        if let Some(sql) = &self.run.spec.teardown
            && let (Ok(Err(e)), Some(t)) = (self.block(None, sql).await, transcript)
        {
            t.err(format!("teardown failed: {}", self.block_error(&e, sql)));
        }
    }

    async fn steps(&mut self) -> Result<()> {
        for pos in 0..self.run.plan.len() {
            let s = self.run.plan[pos].id.session;
            // The session is still busy with an earlier step: wait for it.
            let began = Instant::now();
            while self.active[s].is_some() {
                if !self.try_complete(s, false, true).await? {
                    self.waiting.retain(|&w| w != s);
                }
                self.try_complete_steps(true, true).await?;
                if self.active[s].is_some() {
                    self.annotations_overdue(s, began)?;
                }
            }
            self.send(pos).await?;
            let mustwait = self.try_complete(s, true, false).await?;
            // isolationtester looks at a step it just saw waiting only after
            // sending the next one. lab's own scenarios look once more first:
            // a wait that ended while lab asked about it (a lock_timeout
            // firing just then, on a loaded machine) is taken in before the
            // next step goes, as it is when lab asks a moment later.
            let settle_first = !self.run.patient;
            if mustwait && settle_first {
                self.waiting.push(s);
            }
            self.try_complete_steps(true, true).await?;
            if mustwait && !settle_first {
                self.waiting.push(s);
            }
            self.probes_after(pos).await?;
        }
        // Wait for whatever is still running, each step to its answer (or
        // its deadline). A step still held back then waits only on blocker
        // annotations that nothing left can meet: isolationtester gives up
        // at once, and says so.
        if !self.waiting.is_empty() {
            self.try_complete_steps(false, true).await?;
        }
        if let Some(&s) = self.waiting.first() {
            if let Some(tr) = self.run.transcript {
                tr.fatal("failed to complete permutation due to mutually-blocking steps\n");
            }
            let pos = self.active[s].as_ref().map_or(0, |a| a.pos);
            bail!(msg::never_completed(self.step_name(pos)));
        }
        Ok(())
    }

    /// A step held back only by its blocker annotations for longer than
    /// twice the deadline while its session's next step waits to be sent:
    /// the annotations can never be satisfied (isolationtester gives up
    /// there too, listing the steps still running).
    fn annotations_overdue(&self, s: usize, began: Instant) -> Result<()> {
        if began.elapsed() > self.deadline * 2 {
            let pos = self.active[s].as_ref().map_or(0, |a| a.pos);
            if let Some(tr) = self.run.transcript {
                // As isolationtester says it, with the steps still running.
                let mut text = format!(
                    "step {} timed out after {} seconds\nactive steps are:",
                    self.step_name(pos),
                    began.elapsed().as_secs()
                );
                for a in self.active.iter().flatten() {
                    text.push(' ');
                    text.push_str(self.step_name(a.pos));
                }
                text.push('\n');
                tr.fatal(text);
            }
            bail!(msg::never_completed(self.step_name(pos)));
        }
        Ok(())
    }

    async fn send(&mut self, pos: usize) -> Result<()> {
        let planned = &self.run.plan[pos];
        let s = planned.id.session;
        let step = self.run.spec.step(planned.id);
        if self.lost[s] {
            // isolationtester's PQsendQuery fails there, and it exits 1.
            if let Some(t) = self.run.transcript {
                t.fatal_out(format!(
                    "failed to send query for step {}: no connection to the server\n\n",
                    step.name
                ));
            }
            return Err(Deviation(msg::no_connection(&step.name, self.name(s))).into());
        }
        let sql = bind(step.sql.trim(), self.run.params);
        self.server.prompt(s, &step.name, &sql).await;
        let notice_targets = planned
            .blockers
            .iter()
            .filter_map(|b| match b {
                Resolved::Notices(id, n) => Some((id.session, *n as usize + self.notices_seen(id.session))),
                _ => None,
            })
            .collect();
        let sent = self.server.send(Some(s), &sql);
        self.active[s] = Some(Active {
            pos,
            sql,
            sent,
            began: Instant::now(),
            waited: None,
            blocked: false,
            cancelled: None,
            dead_end: false,
            terminated: None,
            looked: None,
            notice_targets,
            outsiders: Vec::new(),
        });
        Ok(())
    }

    /// isolationtester's try_complete_steps: looks at each waiting step in
    /// turn; while a step held back by an annotation remains, goes round again
    /// as long as something completed or a notice came.
    async fn try_complete_steps(&mut self, nonblock: bool, retry: bool) -> Result<()> {
        loop {
            let before = self.waiting.len();
            let notices: usize = (0..self.names.len()).map(|s| self.notices_seen(s)).sum();
            let mut have_blocker = false;
            let mut w = 0;
            while w < self.waiting.len() {
                let s = self.waiting[w];
                if self.try_complete(s, nonblock, retry).await? {
                    let pos = self.active[s].as_ref().map_or(0, |a| a.pos);
                    have_blocker |= !self.run.plan[pos].blockers.is_empty();
                    w += 1;
                } else {
                    self.waiting.remove(w);
                }
            }
            let new_notice = (0..self.names.len()).map(|s| self.notices_seen(s)).sum::<usize>() != notices;
            if !(have_blocker && (self.waiting.len() < before || new_notice)) {
                return Ok(());
            }
        }
    }

    /// isolationtester's try_complete_step: waits for session `s`'s step to
    /// answer or (with `nonblock`) to be seen waiting. Returns true while the
    /// step is not complete.
    async fn try_complete(&mut self, s: usize, nonblock: bool, retry: bool) -> Result<bool> {
        let pos = self.active[s].as_ref().expect("an active step").pos;
        if !retry && self.run.plan[pos].blockers.contains(&Resolved::Once) {
            // isolationtester does not read the connection here.
            self.report_waiting(
                s,
                Waited {
                    by: Vec::new(),
                    kind: WaitKind::Annotation,
                    lock: None,
                },
            );
            return Ok(true);
        }
        // A spec's steps are looked at as isolationtester looks, if sooner:
        // each look costs the server a lock-table scan, which a busy server
        // (several specs or permutations at once) pays for in every step.
        let (first, mut pause) = if self.run.patient {
            (Duration::from_millis(2), Duration::from_millis(1))
        } else {
            (Duration::from_millis(1), Duration::from_micros(100))
        };
        if !retry {
            // Most steps answer within a millisecond: asking the server
            // whether they wait would only slow them down.
            let first = self.run.first_look.unwrap_or(first);
            self.active_mut(s).sent.ready_within(first).await;
        }
        loop {
            if self.active_mut(s).sent.ready() {
                break;
            }
            if nonblock {
                if let Status::Blocked(w) = self.status(s).await? {
                    // The server said it waits: it did, even if its answer
                    // came while lab asked. isolationtester looks at the
                    // connection once more there (PQconsumeInput, PQisBusy)
                    // and takes an answer that came as no wait; lab does not:
                    // a loaded machine makes that moment long, and would make
                    // a wait the server confirmed come and go from one run
                    // to the next.
                    self.active_mut(s).blocked = true;
                    self.consume(s);
                    if !retry {
                        let w = self.with_lock(s, w).await?;
                        self.report_waiting(s, w);
                    }
                    return Ok(true);
                }
                self.active_mut(s).blocked = false;
                self.overdue(s).await?;
            } else {
                self.watch(s).await?;
            }
            if !self.active_mut(s).sent.ready_within(pause).await {
                pause = (pause * 2).min(self.longest_pause());
            }
        }
        self.consume(s);
        if self.has_blocker(s) {
            if !retry {
                self.report_waiting(
                    s,
                    Waited {
                        by: Vec::new(),
                        kind: WaitKind::Annotation,
                        lock: None,
                    },
                );
            }
            // Nothing to poll: the step waits for another to finish.
            tokio::time::sleep(Duration::from_micros(200)).await;
            return Ok(true);
        }
        self.complete(s, retry).await?;
        Ok(false)
    }

    /// The NOTICEs session `s` has had, as isolationtester counts them: when
    /// it reads them (printing them), not when they arrive.
    fn notices_seen(&self, s: usize) -> usize {
        match self.run.transcript {
            Some(t) => t.consumed(self.name(s)),
            None => self.server.notices(s),
        }
    }

    /// isolationtester reads the session's connection: the NOTICEs it has received are printed.
    fn consume(&self, s: usize) {
        self.read_notices(s);
    }

    fn read_notices(&self, s: usize) {
        if let Some(t) = self.run.transcript {
            self.server.drain(s);
            t.consume(self.name(s));
        }
    }

    fn active_mut(&mut self, s: usize) -> &mut Active {
        self.active[s].as_mut().expect("an active step")
    }

    fn report_waiting(&mut self, s: usize, w: Waited) {
        let a = self.active[s].as_ref().expect("an active step");
        let step = self.step_name(a.pos).to_string();
        if let Some(t) = self.run.transcript {
            t.step(
                &step,
                &self.run.spec.step(self.run.plan[a.pos].id).sql,
                " <waiting ...>",
            );
        }
        self.run
            .recorder
            .waiting(std::time::Instant::now(), self.name(s), Some(&step), &a.sql, &w);
        self.active_mut(s).waited = Some(w);
    }

    /// isolationtester's step_has_blocker: an annotation not yet satisfied.
    fn has_blocker(&self, s: usize) -> bool {
        let a = self.active[s].as_ref().expect("an active step");
        self.run.plan[a.pos].blockers.iter().any(|b| match b {
            Resolved::Once => false,
            Resolved::Step(id) => self.active[id.session]
                .as_ref()
                .is_some_and(|other| self.run.plan[other.pos].id == *id),
            Resolved::Notices(id, _) => a
                .notice_targets
                .iter()
                .any(|(sess, target)| *sess == id.session && self.notices_seen(*sess) < *target),
        })
    }

    /// Behind a transaction pooler, the backends serving the sessions now.
    async fn refresh_pids(&mut self) -> Result<()> {
        self.server.refresh().await?;
        self.pids = self.server.pids();
        Ok(())
    }

    /// Asks the server whether session `s` waits, and on whom.
    async fn status(&mut self, s: usize) -> Result<Status> {
        self.refresh_pids().await?;
        let status = self.status_now(s).await?;
        self.looked(s);
        Ok(status)
    }

    /// Notes the backends that are not the spec's holding a lock the step
    /// of session `s` waits for (autovacuum truncating a catalogue it reads):
    /// they do not make it a wait of the spec's, but a timeout that fires
    /// behind one is theirs, and the timeline says who they were.
    async fn note_outsiders(&mut self, s: usize, locks: &[i32]) -> Result<()> {
        for &p in locks {
            let a = self.active[s].as_ref().expect("an active step");
            if self.pids.contains(&p) || a.outsiders.iter().any(|(q, _)| *q == p) {
                continue;
            }
            // pg_blocking_pids names a prepared transaction 0.
            let who = match p {
                0 => "a prepared transaction (pid 0)".to_string(),
                _ => self.server.holder(p).await?.unwrap_or_else(|| format!("pid {p}")),
            };
            let step = self.step_name(a.pos).to_string();
            self.run.recorder.note(self.name(s), msg::held_by_outsider(&step, &who));
            self.active_mut(s).outsiders.push((p, who));
        }
        Ok(())
    }

    /// The server has just answered whether `s` waits: the first such answer is kept.
    fn looked(&mut self, s: usize) {
        self.active_mut(s).looked.get_or_insert_with(std::time::Instant::now);
    }

    /// [`Runner::status`] with the backends as last looked up. Like
    /// pg_isolation_test_session_is_blocked: a lock held or awaited by one
    /// of the spec's sessions counts (autovacuum's do not), any safe-snapshot
    /// wait does; lab's scenarios also wait for synchronous standbys and, behind
    /// lab's pooler, for a server connection.
    async fn status_now(&mut self, s: usize) -> Result<Status> {
        let b = self.server.blocking(self.pids[s]).await?;
        let status = judge_wait(&b, &self.pids, &self.names);
        if status == Status::Running {
            self.note_outsiders(s, &b.locks).await?;
        }
        Ok(status)
    }

    /// The lock a waiting backend asks for, as pg_locks names it.
    async fn with_lock(&self, s: usize, mut w: Waited) -> Result<Waited> {
        if w.kind == WaitKind::Lock {
            w.lock = self.server.lock(self.pids[s]).await?;
        }
        Ok(w)
    }

    /// While lab waits for a step to answer: if every running step is
    /// waiting, give the server the time the documentation allows, then
    /// cancel them; and keep the step's own deadline.
    async fn watch(&mut self, target: usize) -> Result<()> {
        if self.run.patient {
            if self.run.dead_ends {
                self.cut_dead_end().await?;
            }
            // Only the deadline ends a spec's waits.
            return self.overdue(target).await;
        }
        let mut any = false;
        let mut all_blocked = true;
        // Behind a transaction pooler, one look-up of the backends for every session.
        self.refresh_pids().await?;
        // How long the steps have waited is measured between what the server
        // said, not to whenever lab gets to act on it: from the first answer
        // that had them all waiting to this round's question. A starved lab
        // reading a stale "waiting" late (the server may have ended the wait
        // itself meanwhile, a lock_timeout firing) must not make it longer.
        let asked = Instant::now();
        let mut stuck_steps = Vec::new();
        for s in 0..self.active.len() {
            if self.active[s].is_none() || self.active_mut(s).sent.ready() {
                continue;
            }
            any = true;
            let status = self.status_now(s).await?;
            self.looked(s);
            let blocked = matches!(status, Status::Blocked(_));
            self.active_mut(s).blocked = blocked;
            all_blocked &= blocked;
            if let Status::Blocked(w) = status {
                let cancelled = self.active_mut(s).cancelled.is_some();
                stuck_steps.push(Stuck {
                    session: self.name(s).to_string(),
                    by: w.by,
                    cancelled,
                });
            }
        }
        if any && all_blocked {
            let since = *self.stuck_since.get_or_insert_with(Instant::now);
            let stuck = asked.saturating_duration_since(since);
            if stuck >= self.stuck_bound() {
                for i in stuck_to_cancel(&stuck_steps) {
                    let s = self.names.iter().position(|n| *n == stuck_steps[i].session);
                    if let Some(s) = s {
                        self.cancel(s, Cancel::Stuck(stuck)).await?;
                    }
                }
            }
        } else {
            self.stuck_since = None;
        }
        self.overdue(target).await
    }

    /// Every running step waits, each only for sessions with no step
    /// running: only a step lab will not send before these answer could end
    /// the waits (the deadlock detector needs a waiting blocker), so they
    /// are cancelled now.
    async fn cut_dead_end(&mut self) -> Result<()> {
        self.refresh_pids().await?;
        let mut waits = Vec::new();
        for s in 0..self.active.len() {
            if self.active[s].is_none() || self.active_mut(s).sent.ready() {
                continue;
            }
            match self.status_now(s).await? {
                Status::Blocked(w) if !w.by.is_empty() => waits.push((s, w.by)),
                _ => return Ok(()),
            }
        }
        let running: Vec<&str> = waits.iter().map(|(s, _)| self.name(*s)).collect();
        if waits.is_empty()
            || waits
                .iter()
                .any(|(_, by)| by.iter().any(|b| running.contains(&b.as_str())))
        {
            return Ok(());
        }
        for (s, by) in waits {
            if self.active[s].as_ref().is_some_and(|a| a.cancelled.is_none()) {
                self.cancel(s, Cancel::DeadEnd(by.join(", "))).await?;
            }
        }
        Ok(())
    }

    /// Between looks at a running step: a spec's steps are looked at as
    /// often as isolationtester looks (every 10 ms); a scenario's more often.
    fn longest_pause(&self) -> Duration {
        Duration::from_millis(if self.run.patient { 10 } else { 5 })
    }

    /// How long every session may wait before lab steps in: as long as the
    /// waiting steps are documented to wait (their bound, else the deadline);
    /// if one is not, long enough for the deadlock detector.
    fn stuck_bound(&self) -> Duration {
        let deadline = self.deadline;
        if self.run.patient {
            return deadline;
        }
        let mut bound = Duration::ZERO;
        for a in self.active.iter().flatten().filter(|a| a.blocked) {
            let name = self.step_name(a.pos);
            match self.run.expect.iter().find(|e| e.step == name) {
                Some(e) => bound = bound.max(e.within.unwrap_or(deadline)),
                None => return self.grace,
            }
        }
        bound.min(deadline)
    }

    /// A step past its deadline is cancelled; one that still does not answer
    /// has its backend terminated; after that lab gives up.
    async fn overdue(&mut self, s: usize) -> Result<()> {
        // An answer that came while lab was not looking ended the step
        // itself: nothing to cancel or terminate.
        if self.active_mut(s).sent.ready() {
            return Ok(());
        }
        let deadline = self.deadline;
        let a = self.active[s].as_ref().expect("an active step");
        match (a.cancelled, a.terminated) {
            (None, _) if a.began.elapsed() > deadline => self.cancel(s, Cancel::Deadline).await,
            (Some(c), None) if c.elapsed() > deadline / 2 => {
                self.refresh_pids().await?;
                self.server.terminate(self.pids[s]).await?;
                self.run.recorder.note("lab", msg::terminated(self.name(s)));
                self.active_mut(s).terminated = Some(Instant::now());
                Ok(())
            }
            (Some(_), Some(t)) if t.elapsed() > deadline / 2 => {
                if let Some(tr) = self.run.transcript {
                    // isolationtester's last words at twice its PGISOLATIONTIMEOUT.
                    tr.fatal(format!(
                        "step {} timed out after {} seconds\n",
                        self.step_name(a.pos),
                        a.began.elapsed().as_secs()
                    ));
                }
                let at = self.server.at(Some(s), &a.sql);
                bail!(msg::step_lost(self.step_name(a.pos), at, secs(deadline * 2)))
            }
            _ => Ok(()),
        }
    }

    /// Cancels step `s`, unless its answer has come meanwhile (while lab
    /// asked about the others, or ran late): what answered, ended by itself.
    async fn cancel(&mut self, s: usize, why: Cancel) -> Result<()> {
        self.refresh_pids().await?;
        if self.active_mut(s).sent.ready() {
            return Ok(());
        }
        self.server.cancel(self.pids[s]).await?;
        let name = self.name(s).to_string();
        if let Some(t) = self.run.transcript {
            let a = self.active[s].as_ref().expect("an active step");
            t.out(format!(
                "isolationtester: canceling step {} after {} seconds\n",
                self.step_name(a.pos),
                a.began.elapsed().as_secs()
            ));
        }
        let dead_end = matches!(why, Cancel::DeadEnd(_));
        let text = match why {
            Cancel::Stuck(d) => msg::cancelled_stuck(&name, format!("{:.0}", millis(d))),
            Cancel::Deadline => msg::cancelled_deadline(&name, secs(self.deadline)),
            Cancel::DeadEnd(by) => msg::cancelled_dead_end(&name, by),
        };
        self.run.recorder.note("lab", text);
        let a = self.active_mut(s);
        a.cancelled = Some(Instant::now());
        a.dead_end = dead_end;
        Ok(())
    }

    /// The step answered: record it, follow its transaction, read back the
    /// isolation level of a transaction it began. A connection lost to the
    /// outside world ends the run (lab cannot vouch for anything after it).
    async fn complete(&mut self, s: usize, retry: bool) -> Result<()> {
        let mut a = self.active[s].take().expect("an active step");
        let (mut answer, done) = a.sent.take().expect("answered");
        let name = self.name(s).to_string();
        if let Some(t) = self.run.transcript {
            let step = self.run.spec.step(self.run.plan[a.pos].id);
            if retry {
                t.completed(&step.name);
            } else {
                t.step(&step.name, &step.sql, "");
            }
            t.answer(&answer);
            let named: Vec<(String, i32)> = self.names.iter().cloned().zip(self.server.pids()).collect();
            t.notifies(&name, &named);
        }
        let began = self.server.track(Some(s), &a.sql, &mut answer);
        // Read back where a transaction began, and where a step set the
        // level of the one it is in (`BEGIN;` then `SET TRANSACTION ...`).
        let sets = answer.is_ok() && !began && crate::sql_lexer::sets_tx_level(&a.sql);
        let isolation = if began || sets {
            self.server.isolation(s).await
        } else {
            None
        };
        let waited = a.waited.take().or_else(|| self.wait_in_error(s, &answer));
        self.waits_named_in_deadlock(s, &answer, (a.sent.at, done));
        let took = done.saturating_duration_since(a.sent.at);
        let step = self.step_name(a.pos).to_string();
        self.run.recorder.answer(
            std::time::Instant::now(),
            &name,
            Some(&step),
            &a.sql,
            &answer,
            waited.as_ref().map(|w| (w, took)),
            isolation.clone(),
        );
        if a.cancelled.is_some() {
            self.run.recorder.mark_cancelled(&name);
        }
        // A spec may end its own sessions (isolationtester prints it and goes on).
        if let Err(e) = &answer
            && e.lost_to_outside()
            && a.terminated.is_none()
            && !self.run.patient
        {
            let at = self.server.at(Some(s), &a.sql);
            bail!(msg::step_connection_lost(self.step_name(a.pos), at, e.line()));
        }
        if let Err(e) = &answer
            && e.connection_lost
        {
            self.lost[s] = true;
        }
        let t0 = self.run.recorder.started();
        self.runs[a.pos] = Some(StepRun {
            name: step,
            session: name,
            sql: a.sql,
            sent: a.sent.at.saturating_duration_since(t0),
            done: done.saturating_duration_since(t0),
            waited,
            answer,
            cancelled_by_lab: a.cancelled.is_some(),
            dead_end: a.dead_end,
            isolation,
            looked: a.looked.map(|l| l.saturating_duration_since(t0)),
            outsiders: a.outsiders.into_iter().map(|(_, who)| who).collect(),
        });
        Ok(())
    }

    /// A wait too short to be seen, that the server's error reports: a
    /// deadlock's DETAIL says who waited for whom; a lock timeout fires only
    /// while waiting for a lock.
    fn wait_in_error(&self, s: usize, answer: &Answer) -> Option<Waited> {
        let e = answer.as_ref().err()?;
        let pid = self.pids[s];
        let by: Vec<String> = if e.is("40P01") {
            deadlock_pairs(e.detail.as_deref().unwrap_or(""))
                .into_iter()
                .filter(|(waiter, _)| *waiter == pid)
                .filter_map(|(_, by)| self.pids.iter().position(|p| *p == by))
                .map(|i| self.name(i).to_string())
                .collect()
        } else if e.is("55P03") && e.message.contains("lock timeout") {
            Vec::new()
        } else {
            return None;
        };
        Some(Waited {
            by,
            kind: WaitKind::ServerError,
            lock: None,
        })
    }

    /// A deadlock's DETAIL names every wait of the cycle: the other sessions'
    /// waits are evidence too, however short (with deadlock_timeout = 1ms the
    /// survivor may wait less than one look at the server takes).
    fn waits_named_in_deadlock(
        &mut self,
        victim: usize,
        answer: &Answer,
        (sent, done): (std::time::Instant, std::time::Instant),
    ) {
        let Some(e) = answer.as_ref().err().filter(|e| e.is("40P01")) else {
            return;
        };
        for (waiter, blocker) in deadlock_pairs(e.detail.as_deref().unwrap_or("")) {
            let (Some(w), Some(b)) = (
                self.pids.iter().position(|p| *p == waiter),
                self.pids.iter().position(|p| *p == blocker),
            ) else {
                continue;
            };
            if w == victim {
                continue;
            }
            let waited = Waited {
                by: vec![self.name(b).to_string()],
                kind: WaitKind::ServerError,
                lock: None,
            };
            if let Some(a) = self.active[w].as_mut() {
                a.waited.get_or_insert(waited);
                continue;
            }
            // Its step has answered already (the victim's abort let it go on
            // before lab looked): the waiting step is its first one that was
            // running while the victim's was (later ones began after the
            // abort released it). Amend it unless its wait was seen.
            let name = self.name(w).to_string();
            let t0 = self.run.recorder.started();
            let (sent, done) = (sent.saturating_duration_since(t0), done.saturating_duration_since(t0));
            if let Some(run) = self
                .runs
                .iter_mut()
                .flatten()
                .find(|r| r.session == name && r.sent < done && r.done > sent)
                .filter(|r| r.waited.is_none())
            {
                self.run.recorder.amend_wait(&name, &run.name, &waited, run.took());
                run.waited = Some(waited);
            }
        }
    }

    /// The backend serving the session named `session` (0: none).
    fn pid_named(&self, session: &str) -> i32 {
        self.names.iter().position(|n| n == session).map_or(0, |i| self.pids[i])
    }

    async fn probes_after(&mut self, pos: usize) -> Result<()> {
        let name = self.step_name(pos).to_string();
        if self.run.probes.iter().any(|p| p.after == name) {
            self.refresh_pids().await?;
        }
        for probe in self.run.probes.iter().filter(|p| p.after == name) {
            let sql = match &probe.query {
                ProbeQuery::Sql(sql) => {
                    let pids = self.pids.iter().map(i32::to_string).collect::<Vec<_>>().join(",");
                    sql.replace(":pids", &format!("ARRAY[{pids}]::int[]"))
                }
                ProbeQuery::LocksHeld(session) => format!(
                    "SELECT count(*) AS locks FROM pg_locks \
                      WHERE pid = {} AND granted AND locktype <> 'virtualxid'",
                    self.pid_named(session)
                ),
                ProbeQuery::Activity(session) => format!(
                    "SELECT state, extract(epoch FROM query_start) AS query_start, \
                            extract(epoch FROM state_change) AS state_change \
                       FROM pg_stat_activity WHERE pid = {}",
                    self.pid_named(session)
                ),
            };
            let set = self
                .server
                .read(&sql)
                .await
                .map_err(|e| crate::postgres::connect::sql_error(e, msg::probe_failed(&probe.name)))?;
            self.taken.push((probe.name.clone(), set));
        }
        Ok(())
    }
}

/// Whether a backend waits, from what the server says of it: on a lock
/// that one of the spec's sessions (`pids`, named `names`) holds or awaits,
/// on a safe snapshot, on a synchronous standby, or for a pooler's server
/// connection; a lock wait on a backend that is not the spec's (autovacuum)
/// does not count, as isolationtester does not count it.
fn judge_wait(b: &Blocking, pids: &[i32], names: &[String]) -> Status {
    let name = |p: i32| pids.iter().position(|q| *q == p).map(|i| names[i].clone());
    match waited_of(b, name) {
        Some(w) => Status::Blocked(w),
        None => Status::Running,
    }
}

/// What a backend waits for, from what the server says of it, the backends
/// named by `name`: a lock one of the named holds or awaits, a safe
/// snapshot, a synchronous standby, a pooler's server connection; none if
/// it does not wait. A lock held by a backend `name` leaves out does not count.
pub fn waited_of(b: &Blocking, name: impl Fn(i32) -> Option<String>) -> Option<Waited> {
    let named = |of: &[i32]| -> Vec<String> { of.iter().filter_map(|p| name(*p)).collect() };
    let by = named(&b.locks);
    let waited = |by: Vec<String>, kind: WaitKind| Some(Waited { by, kind, lock: None });
    if !by.is_empty() {
        waited(by, WaitKind::Lock)
    } else if !b.snapshot.is_empty() {
        waited(named(&b.snapshot), WaitKind::SafeSnapshot)
    } else if b.event.as_deref() == Some("SyncRep") {
        waited(Vec::new(), WaitKind::SyncRep)
    } else if b.pooler_queued {
        waited(Vec::new(), WaitKind::Pooler)
    } else {
        None
    }
}
