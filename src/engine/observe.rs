//! The recorder (a variant's timeline, shared by its sessions) and what a
//! permutation run observed, by step name: the facts verdicts are made of.
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::answer::{Answer, PgError, Res, describe, int_of, last_set};
use super::msg;
use crate::i18n::{Context, Text};
use crate::report::{Connection, Entry, Phrase, ResultSet, StepResult, WaitKind, round_ms};

/// The server behaved differently from what the variant documents, in a way
/// that stops the variant (an error nobody allowed, a value that is not
/// there). The variant's verdict is then "not as documented", with this as
/// its failed check; lab goes on with the next variant.
#[derive(Debug, Clone)]
pub struct Deviation(pub Text);

impl std::fmt::Display for Deviation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for Deviation {}

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

/// A variant's timeline, shared by its sessions.
#[derive(Clone)]
pub struct Recorder {
    /// When the timeline starts (shared by the clones, so a restart counts for all).
    t0: Arc<Mutex<Instant>>,
    entries: Arc<Mutex<Vec<Entry>>>,
    /// How each session connected, by name (the last connection of a name).
    connections: Arc<Mutex<BTreeMap<String, Connection>>>,
    /// Told of each entry as it is recorded (`--step` shows it at once).
    live: Arc<Mutex<Option<LiveSink>>>,
}

/// What is told of each timeline entry as it is recorded.
pub type LiveSink = Box<dyn Fn(&Entry) + Send + Sync>;

impl Default for Recorder {
    fn default() -> Self {
        Recorder {
            t0: Arc::new(Mutex::new(Instant::now())),
            entries: Arc::default(),
            connections: Arc::default(),
            live: Arc::default(),
        }
    }
}

impl Recorder {
    pub fn started(&self) -> Instant {
        *self.t0.lock().unwrap()
    }

    /// Starts the timeline again from now (a spec's next permutation, on the
    /// same sessions).
    pub fn restart(&self) {
        *self.t0.lock().unwrap() = Instant::now();
    }

    pub fn t_ms(&self, at: Instant) -> f64 {
        round_ms(at.saturating_duration_since(self.started()).as_secs_f64() * 1000.0)
    }

    pub fn now_ms(&self) -> f64 {
        self.t_ms(Instant::now())
    }

    pub fn push(&self, e: Entry) {
        if let Some(live) = &*self.live.lock().unwrap() {
            live(&e);
        }
        self.entries.lock().unwrap().push(e);
    }

    /// Tells `sink` of every entry from now on, as it is recorded.
    pub fn set_live(&self, sink: LiveSink) {
        *self.live.lock().unwrap() = Some(sink);
    }

    /// A line of narrative in a session's column ("lab" for the driver's own).
    pub fn note(&self, session: &str, text: Text) {
        self.push(Entry::new(self.now_ms(), session, StepResult::Note, Phrase::Text(text)));
    }

    /// The server confirmed that a step waits.
    pub fn waiting(&self, at: Instant, session: &str, step: Option<&str>, sql: &str, w: &Waited) {
        let mut e = Entry::new(
            self.t_ms(at),
            session,
            StepResult::Waiting,
            Phrase::Text(crate::i18n::ui::waiting(w.by.clone())),
        );
        e.step = step.map(str::to_string);
        e.sql = sql.to_string();
        e.blocked_by = Some(w.by.clone());
        e.wait = Some(w.kind);
        e.lock = w.lock.clone();
        self.push(e);
    }

    /// A step's answer. `waited` is the wait and how long the step took, when
    /// it waited; a wait the server reported only in its error is shown here.
    #[allow(clippy::too_many_arguments)]
    pub fn answer(
        &self,
        at: Instant,
        session: &str,
        step: Option<&str>,
        sql: &str,
        answer: &Answer,
        waited: Option<(&Waited, Duration)>,
        isolation: Option<String>,
    ) {
        self.push(self.entry(at, session, step, sql, answer, waited, isolation));
    }

    /// The timeline entry for a step's answer, not yet recorded (a server
    /// files its statements under the request they served).
    #[allow(clippy::too_many_arguments)]
    pub fn entry(
        &self,
        at: Instant,
        session: &str,
        step: Option<&str>,
        sql: &str,
        answer: &Answer,
        waited: Option<(&Waited, Duration)>,
        isolation: Option<String>,
    ) -> Entry {
        // A result with no rows is said in the run's language (psql's "(0 rows)").
        let said = |r: &[Res]| match r.last().and_then(|l| l.set.as_ref()) {
            Some(set) if set.rows.is_empty() => Phrase::Text(msg::zero_rows()),
            _ => Phrase::Plain(describe(r)),
        };
        let (result, detail, sqlstate) = match answer {
            Ok(r) if waited.is_some() => (StepResult::Completed, said(r), None),
            Ok(r) => (StepResult::Ok, said(r), None),
            Err(e) => (StepResult::Error, Phrase::Plain(e.line()), e.code.clone()),
        };
        let mut e = Entry::new(self.t_ms(at), session, result, detail);
        e.step = step.map(str::to_string);
        e.sql = sql.to_string();
        e.sqlstate = sqlstate;
        e.isolation = isolation;
        if let Ok(r) = answer {
            e.results = r.iter().filter_map(|x| x.set.clone()).collect();
        }
        if let Some((w, took)) = waited {
            e.waited_ms = Some(round_ms(took.as_secs_f64() * 1000.0));
            if w.kind == WaitKind::ServerError {
                e.blocked_by = Some(w.by.clone());
                e.wait = Some(w.kind);
            }
        }
        e
    }

    /// A step recorded as answered at once waited after all, as the server
    /// said later (a deadlock's DETAIL): its entry says so.
    pub fn amend_wait(&self, session: &str, step: &str, w: &Waited, took: Duration) {
        let mut entries = self.entries.lock().unwrap();
        if let Some(e) = entries
            .iter_mut()
            .rev()
            .find(|e| e.session == session && e.step.as_deref() == Some(step))
        {
            if e.result == StepResult::Ok {
                e.result = StepResult::Completed;
            }
            e.blocked_by = Some(w.by.clone());
            e.wait = Some(w.kind);
            e.waited_ms = Some(round_ms(took.as_secs_f64() * 1000.0));
        }
    }

    /// Marks the last entry of `session` as cancelled by lab.
    pub fn mark_cancelled(&self, session: &str) {
        if let Some(e) = self
            .entries
            .lock()
            .unwrap()
            .iter_mut()
            .rev()
            .find(|e| e.session == session)
        {
            e.cancelled_by_lab = true;
        }
    }

    /// The isolation levels read back so far, by session.
    pub fn isolations(&self) -> Vec<(String, String)> {
        self.entries
            .lock()
            .unwrap()
            .iter()
            .filter_map(|e| Some((e.session.clone(), e.isolation.clone()?)))
            .collect()
    }

    /// The details of a session's entries of one kind so far (its NOTICEs...), rendered in English.
    pub fn details(&self, session: &str, result: StepResult) -> Vec<String> {
        self.entries
            .lock()
            .unwrap()
            .iter()
            .filter(|e| e.session == session && e.result == result)
            .map(|e| e.detail.render(crate::i18n::Lang::En))
            .collect()
    }

    /// The entries so far, left in place.
    pub fn entries(&self) -> Vec<Entry> {
        self.entries.lock().unwrap().clone()
    }

    /// A session connected: how (from its handshake).
    pub fn connected(&self, session: &str, how: Connection) {
        self.connections.lock().unwrap().insert(session.to_string(), how);
    }

    /// How the sessions recorded so far connected, and forgets it (with [`Recorder::take`]).
    pub fn take_connections(&self) -> BTreeMap<String, Connection> {
        std::mem::take(&mut *self.connections.lock().unwrap())
    }

    pub fn take(&self) -> Vec<Entry> {
        std::mem::take(&mut *self.entries.lock().unwrap())
    }

    pub fn len(&self) -> usize {
        self.entries.lock().unwrap().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A wait the server confirmed (or reported).
#[derive(Debug, Clone, PartialEq)]
pub struct Waited {
    /// The sessions waited for (none when the server did not say).
    pub by: Vec<String>,
    pub kind: WaitKind,
    /// The lock, as pg_locks names it ("ShareLock on transaction").
    pub lock: Option<String>,
}

/// One step of a permutation as it ran.
#[derive(Debug, Clone)]
pub struct StepRun {
    pub name: String,
    pub session: String,
    /// As sent (two-way parameters bound).
    pub sql: String,
    /// From the start of the variant.
    pub sent: Duration,
    pub done: Duration,
    pub waited: Option<Waited>,
    pub answer: Answer,
    /// lab cancelled it (every session was waiting, it was at a dead end
    /// (`dead_end`), or its deadline passed).
    pub cancelled_by_lab: bool,
    /// lab cancelled it at once: it waited only for sessions whose next
    /// step comes after its own, so nothing could end the wait (`lab explore`).
    pub dead_end: bool,
    /// The isolation level of the transaction this step began, read back.
    pub isolation: Option<String>,
    /// When the server first answered whether it waited (from the start of
    /// the variant); none if it answered before lab asked.
    pub looked: Option<Duration>,
    /// Backends not the spec's (autovacuum) seen holding a lock it waited
    /// for, as pg_stat_activity named them: such a wait is not the spec's.
    pub outsiders: Vec<String>,
}

impl StepRun {
    pub fn took(&self) -> Duration {
        self.done.saturating_sub(self.sent)
    }

    pub fn ok(&self) -> bool {
        self.answer.is_ok()
    }

    pub fn error(&self) -> Option<&PgError> {
        self.answer.as_ref().err()
    }

    /// The SQLSTATE the step failed with.
    pub fn code(&self) -> Option<&str> {
        self.error().and_then(|e| e.code.as_deref())
    }

    pub fn failed_with(&self, code: &str) -> bool {
        self.code() == Some(code)
    }

    pub fn waited(&self) -> bool {
        self.waited.is_some()
    }

    /// Whom it waited for, if it waited.
    pub fn waited_for(&self) -> Option<&[String]> {
        self.waited.as_ref().map(|w| w.by.as_slice())
    }

    pub fn results(&self) -> Result<&[Res], Deviation> {
        match &self.answer {
            Ok(r) => Ok(r),
            Err(e) => Err(Deviation(msg::step_failed(&self.name, e.line()))),
        }
    }

    /// Rows affected (or returned) by the step's last statement.
    pub fn count(&self) -> Result<u64, Deviation> {
        Ok(self.results()?.last().map_or(0, |r| r.count))
    }

    /// The step's last result set.
    pub fn rows(&self) -> Result<&ResultSet, Deviation> {
        last_set(self.results()?).ok_or_else(|| Deviation(msg::step_no_rows(&self.name)))
    }

    /// The value in column `col` of the first row.
    pub fn value(&self, col: &str) -> Result<Option<&str>, Deviation> {
        let rows = self.rows()?;
        if !rows.columns.iter().any(|c| c == col) || rows.rows.is_empty() {
            return Err(Deviation(msg::step_no_value(&self.name, col)));
        }
        Ok(rows.get(0, col))
    }

    /// The integer in column `col` of the first row.
    pub fn int(&self, col: &str) -> Result<i64, Deviation> {
        int_of(self.rows()?, col).ok_or_else(|| Deviation(msg::step_no_value(&self.name, col)))
    }

    /// The text in column `col` of the first row (NULL as "NULL").
    pub fn text(&self, col: &str) -> Result<String, Deviation> {
        Ok(self.value(col)?.unwrap_or("NULL").to_string())
    }
}

/// What a permutation run observed.
#[derive(Debug, Clone, Default)]
pub struct Observation {
    /// The sessions and their backend pids.
    pub sessions: Vec<(String, i32)>,
    /// The steps, in the order the permutation lists them.
    pub steps: Vec<StepRun>,
    /// Snapshots taken during the run (see `schedule::Probe`), by name.
    pub probes: Vec<(String, ResultSet)>,
}

impl Observation {
    /// The step's run (its first, if the permutation runs it more than once).
    pub fn step(&self, name: &str) -> Result<&StepRun, Deviation> {
        self.steps
            .iter()
            .find(|s| s.name == name)
            .ok_or_else(|| Deviation(msg::step_not_run(name)))
    }

    /// The isolation levels the session's transactions ran under, as read
    /// back: after the step that began each, or after a later step of it
    /// that set its level (`SET TRANSACTION ...`), which replaces the first.
    pub fn isolation_of(&self, session: &str) -> Vec<&str> {
        let mut levels = Vec::new();
        for s in self.steps.iter().filter(|s| s.session == session) {
            let Some(level) = s.isolation.as_deref() else { continue };
            let began = crate::sql_lexer::statements(&s.sql)
                .iter()
                .any(|st| crate::sql_lexer::tx_effect(st) != crate::sql_lexer::TxEffect::None);
            match levels.last_mut() {
                Some(last) if !began && crate::sql_lexer::sets_tx_level(&s.sql) => *last = level,
                _ => levels.push(level),
            }
        }
        levels
    }

    /// Every level the sessions' transactions ran under ([`Observation::isolation_of`]).
    pub fn levels_ran_at(&self) -> std::collections::BTreeSet<&str> {
        let mut sessions: Vec<&str> = self.steps.iter().map(|s| s.session.as_str()).collect();
        sessions.sort_unstable();
        sessions.dedup();
        sessions.iter().flat_map(|s| self.isolation_of(s)).collect()
    }

    pub fn pid_of(&self, session: &str) -> Option<i32> {
        self.sessions.iter().find(|(n, _)| n == session).map(|(_, p)| *p)
    }

    pub fn session_of(&self, pid: i32) -> Option<&str> {
        self.sessions.iter().find(|(_, p)| *p == pid).map(|(n, _)| n.as_str())
    }

    pub fn probe(&self, name: &str) -> Option<&ResultSet> {
        self.probes.iter().find(|(n, _)| n == name).map(|(_, r)| r)
    }

    /// The steps that waited, with whom they waited for.
    pub fn waits(&self) -> impl Iterator<Item = (&StepRun, &Waited)> {
        self.steps.iter().filter_map(|s| s.waited.as_ref().map(|w| (s, w)))
    }

    /// Every SQLSTATE raised, in order.
    pub fn sqlstates(&self) -> Vec<&str> {
        self.steps.iter().filter_map(StepRun::code).collect()
    }

    /// `text` with "process 1234" (as the server's messages name backends)
    /// followed by the session's name.
    pub fn name_processes(&self, text: &str) -> String {
        name_processes(text, &self.sessions)
    }
}

/// `text` with "process 1234" / "Process 1234" followed by the session's name.
pub fn name_processes(text: &str, sessions: &[(String, i32)]) -> String {
    let mut out = text.replace('\n', " ");
    for (name, pid) in sessions {
        for word in ["process", "Process"] {
            out = out.replace(&format!("{word} {pid}"), &format!("{word} {pid} ({name})"));
        }
    }
    out
}

/// The pairs (waiting pid, blocking pid) a 40P01's DETAIL names:
/// "Process 909 waits for ShareLock on transaction 1404; blocked by process 917."
pub fn deadlock_pairs(detail: &str) -> Vec<(i32, i32)> {
    let mut out = Vec::new();
    for sentence in detail.split(['\n', '.']) {
        let words: Vec<&str> = sentence.split_whitespace().collect();
        let num = |i: usize| {
            words
                .get(i)
                .and_then(|w| w.trim_end_matches([';', ',']).parse::<i32>().ok())
        };
        if words.first() == Some(&"Process")
            && let Some(waiter) = num(1)
            && let Some(by) = words.iter().position(|w| *w == "process").and_then(|i| num(i + 1))
        {
            out.push((waiter, by));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_deadlock_detail_says_who_waited_for_whom() {
        let detail = "Process 909 waits for ShareLock on transaction 1404; blocked by process 917.\n\
                      Process 917 waits for ShareLock on transaction 1403; blocked by process 909.";
        assert_eq!(deadlock_pairs(detail), [(909, 917), (917, 909)]);
        let named = name_processes(detail, &[("A".into(), 909), ("B".into(), 917)]);
        assert!(named.starts_with("Process 909 (A) waits"), "{named}");
        assert!(named.contains("blocked by process 917 (B)."), "{named}");
    }
}
