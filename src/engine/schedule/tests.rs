//! The scheduler's decisions, from scripted server answers on tokio's paused
//! clock (a deadline passes at once, in order): which step is sent next,
//! what counts as waiting, in which order waiting steps complete, when lab
//! steps in. Each case is what PostgreSQL's isolationtester does
//! (isolationtester.c: run_permutation, try_complete_step) with the
//! transcript it would print.
// Answers are built as the engine holds them (a PgError by value).
#![allow(clippy::result_large_err)]
use std::cell::RefCell;
use std::collections::HashMap;
use std::time::Duration;

use tokio::sync::oneshot;

use super::*;
use crate::engine::answer::{PgError, Res};

/// What the scripted server does with a statement.
#[derive(Clone)]
enum Act {
    /// Answers at once.
    Ok,
    /// Fails at once with this SQLSTATE (and DETAIL).
    Fails(&'static str, &'static str),
    /// Waits on a lock session `by` holds until `until` is sent, then answers.
    Waits { by: usize, until: &'static str },
    /// Waits on a lock session `by` holds until lab cancels it (57014).
    Stuck { by: usize },
    /// Like `Stuck`, but a cancel does nothing: only a termination ends it.
    Deaf { by: usize },
    /// Like `Stuck`, but its own end crosses lab's cancel: the deadlock
    /// detector chose it (40P01) while lab judged its wait, so the cancel
    /// finds it already ended.
    Crosses { by: usize },
    /// Waits on a lock of a backend that is not the spec's, answering after this long.
    Outsider(Duration),
    /// Waits on a lock of a backend that is not the spec's, and gives up
    /// (55P03, its lock_timeout) after this long.
    OutsiderTimeout(Duration),
    /// An `OutsiderTimeout` sent: gives up once lab asks after this moment.
    OutsiderUntil(tokio::time::Instant),
    /// Waits on a lock session `by` holds, and gives up (55P03, its
    /// lock_timeout) while lab asks whether another session waits: that
    /// session is still seen waiting for it, and is let go at once.
    GivesWay { by: usize },
}

struct Pending {
    session: usize,
    act: Act,
    tx: oneshot::Sender<(Answer, std::time::Instant)>,
}

/// A server that answers from a script: statements by their SQL.
struct Script {
    names: Vec<String>,
    acts: HashMap<String, Act>,
    sent: RefCell<Vec<String>>,
    pending: RefCell<Vec<Pending>>,
    cancels: RefCell<Vec<i32>>,
    terminations: RefCell<Vec<i32>>,
}

const OUTSIDER: i32 = 9999;

fn pid(s: usize) -> i32 {
    100 + s as i32
}

fn ok() -> Answer {
    Ok(vec![Res {
        tag: "OK".into(),
        count: 0,
        set: None,
    }])
}

fn error(code: &str, message: &str, detail: &str, lost: bool) -> Answer {
    Err(PgError {
        code: Some(code.into()),
        severity: if lost { "FATAL" } else { "ERROR" }.into(),
        message: message.into(),
        detail: (!detail.is_empty()).then(|| detail.into()),
        connection_lost: lost,
        ..PgError::default()
    })
}

impl Script {
    fn new(names: &[&str], acts: &[(&str, Act)]) -> Script {
        Script {
            names: names.iter().map(|n| n.to_string()).collect(),
            acts: acts.iter().map(|(sql, a)| (sql.to_string(), a.clone())).collect(),
            sent: RefCell::default(),
            pending: RefCell::default(),
            cancels: RefCell::default(),
            terminations: RefCell::default(),
        }
    }

    fn sent(&self) -> Vec<String> {
        self.sent.borrow().clone()
    }

    /// Ends the pending statements `end` picks, with `answer`.
    fn end(&self, end: impl Fn(&Pending) -> bool, answer: impl Fn() -> Answer) {
        let mut pending = self.pending.borrow_mut();
        let (done, left): (Vec<Pending>, Vec<Pending>) = pending.drain(..).partition(|p| end(p));
        *pending = left;
        for p in done {
            let _ = p.tx.send((answer(), std::time::Instant::now()));
        }
    }
}

impl Server for Script {
    fn names(&self) -> Vec<String> {
        self.names.clone()
    }

    fn pids(&self) -> Vec<i32> {
        (0..self.names.len()).map(pid).collect()
    }

    async fn refresh(&mut self) -> Result<()> {
        Ok(())
    }

    fn send(&self, s: Option<usize>, sql: &str) -> Sent {
        self.sent.borrow_mut().push(sql.to_string());
        let (sent, tx) = Sent::channel();
        let act = self.acts.get(sql).cloned().unwrap_or(Act::Ok);
        // What this statement releases (a COMMIT) is released first.
        self.end(|p| matches!(p.act, Act::Waits { until, .. } if until == sql), ok);
        match act {
            Act::Ok => drop(tx.send((ok(), std::time::Instant::now()))),
            Act::Fails(code, detail) => {
                drop(tx.send((error(code, "failed", detail, false), std::time::Instant::now())))
            }
            Act::Outsider(after) => {
                tokio::spawn(async move {
                    tokio::time::sleep(after).await;
                    let _ = tx.send((ok(), std::time::Instant::now()));
                });
            }
            Act::OutsiderTimeout(after) => self.pending.borrow_mut().push(Pending {
                session: s.expect("a session's step"),
                act: Act::OutsiderUntil(tokio::time::Instant::now() + after),
                tx,
            }),
            act => self.pending.borrow_mut().push(Pending {
                session: s.expect("a session's step"),
                act,
                tx,
            }),
        }
        sent
    }

    fn track(&self, _: Option<usize>, _: &str, _: &mut Answer) -> bool {
        false
    }

    async fn isolation(&self, _: usize) -> Option<String> {
        None
    }

    async fn prompt(&self, _: usize, _: &str, _: &str) {}

    fn notices(&self, _: usize) -> usize {
        0
    }

    fn drain(&self, _: usize) {}

    async fn blocking(&self, of: i32) -> Result<Blocking> {
        let now = tokio::time::Instant::now();
        self.end(
            |p| matches!(p.act, Act::OutsiderUntil(until) if until <= now),
            || error("55P03", "canceling statement due to lock timeout", "", false),
        );
        let locks = self
            .pending
            .borrow()
            .iter()
            .filter(|p| pid(p.session) == of)
            .map(|p| match p.act {
                Act::Waits { by, .. }
                | Act::Stuck { by }
                | Act::Deaf { by }
                | Act::Crosses { by }
                | Act::GivesWay { by } => pid(by),
                _ => OUTSIDER,
            })
            .collect();
        let giving_way: Vec<usize> = self
            .pending
            .borrow()
            .iter()
            .filter(|p| matches!(p.act, Act::GivesWay { .. }) && pid(p.session) != of)
            .map(|p| p.session)
            .collect();
        for g in giving_way {
            self.end(
                |p| p.session == g,
                || error("55P03", "canceling statement due to lock timeout", "", false),
            );
            self.end(|p| matches!(p.act, Act::Waits { by, .. } if by == g), ok);
        }
        Ok(Blocking {
            locks,
            ..Blocking::default()
        })
    }

    async fn lock(&self, _: i32) -> Result<Option<String>> {
        Ok(Some("ShareLock on transactionid".into()))
    }

    async fn holder(&self, of: i32) -> Result<Option<String>> {
        Ok(Some(format!("autovacuum: VACUUM pg_catalog.pg_attribute (pid {of})")))
    }

    async fn cancel(&self, of: i32) -> Result<()> {
        self.cancels.borrow_mut().push(of);
        self.end(
            |p| pid(p.session) == of && matches!(p.act, Act::Crosses { .. }),
            || error("40P01", "deadlock detected", "", false),
        );
        self.end(
            |p| pid(p.session) == of && !matches!(p.act, Act::Deaf { .. }),
            || error("57014", "canceling statement due to user request", "", false),
        );
        Ok(())
    }

    async fn terminate(&self, of: i32) -> Result<()> {
        self.terminations.borrow_mut().push(of);
        self.end(
            |p| pid(p.session) == of,
            || error("57P01", "terminating connection due to administrator command", "", true),
        );
        Ok(())
    }

    async fn read(&self, _: &str) -> Result<ResultSet, tokio_postgres::Error> {
        Ok(ResultSet::default())
    }

    fn at(&self, s: Option<usize>, sql: &str) -> Text {
        let name = s.map_or("setup".to_string(), |i| self.names[i].clone());
        msg::at("test", name, sql)
    }
}

/// Runs permutation `perm` of `spec` on `script`: what was observed, and
/// isolationtester's transcript.
async fn run_script(script: &mut Script, spec: &str, perm: usize, patient: bool) -> (Result<Observation>, String) {
    run_script_with(script, spec, perm, patient, false).await
}

/// [`run_script`], with lab explore's cut of dead ends (`dead_ends`).
async fn run_script_with(
    script: &mut Script,
    spec: &str,
    perm: usize,
    patient: bool,
    dead_ends: bool,
) -> (Result<Observation>, String) {
    run_recorded(script, spec, perm, (patient, dead_ends), &Recorder::default()).await
}

/// [`run_script_with`] (`patient`, `dead_ends`), recording the timeline on `recorder`.
async fn run_recorded(
    script: &mut Script,
    spec: &str,
    perm: usize,
    (patient, dead_ends): (bool, bool),
    recorder: &Recorder,
) -> (Result<Observation>, String) {
    let spec = crate::specfile::parse(spec).expect("the spec parses");
    let plan = spec.plan(&spec.permutations[perm]).expect("the permutation is valid");
    let transcript = Transcript::default();
    let o = run_on(
        script,
        Plan {
            spec: &spec,
            plan: &plan,
            params: &[],
            expect: &[],
            probes: &[],
            recorder,
            transcript: Some(&transcript),
            patient,
            dead_ends,
            first_look: None,
        },
        Timing {
            deadline: Duration::from_secs(10),
            deadlock_timeout: Duration::from_secs(1),
        },
    )
    .await;
    (o, transcript.combined())
}

const TWO: &str = "
session A
step a1 { UPDATE a; }
step a2 { UPDATE b; }
step ac { COMMIT; }
session B
step b1 { UPDATE b2; }
step b2 { UPDATE a2; }
step bc { COMMIT; }
session C
step c1 { UPDATE c; }
";

fn spec_with(perms: &[&str]) -> String {
    let mut s = TWO.to_string();
    for p in perms {
        s.push_str(&format!("permutation {p}\n"));
    }
    s
}

#[tokio::test(start_paused = true)]
async fn a_waiting_step_lets_the_next_one_go_and_completes_after_its_blocker() {
    let mut script = Script::new(
        &["A", "B", "C"],
        &[(
            "UPDATE b2;",
            Act::Waits {
                by: 0,
                until: "COMMIT;",
            },
        )],
    );
    let (o, t) = run_script(&mut script, &spec_with(&["a1 b1 ac"]), 0, true).await;
    let o = o.unwrap();
    assert_eq!(script.sent(), ["UPDATE a;", "UPDATE b2;", "COMMIT;"]);
    assert_eq!(
        t,
        "step a1: UPDATE a;\nstep b1: UPDATE b2; <waiting ...>\nstep ac: COMMIT;\nstep b1: <... completed>\n"
    );
    let b1 = o.step("b1").unwrap();
    assert_eq!(b1.waited_for(), Some(&["A".to_string()][..]));
    assert!(!o.step("a1").unwrap().waited() && !o.step("ac").unwrap().waited());
    assert!(!b1.cancelled_by_lab);
    // lab asked the server about b1 only: a1 and ac answered before it would.
    assert!(b1.looked.is_some_and(|l| l >= b1.sent));
    assert!(o.step("a1").unwrap().looked.is_none() && o.step("ac").unwrap().looked.is_none());
}

#[tokio::test(start_paused = true)]
async fn waiting_steps_complete_in_the_order_they_began_to_wait() {
    for (perm, first, second) in [("a1 b1 c1 ac", "b1", "c1"), ("a1 c1 b1 ac", "c1", "b1")] {
        let mut script = Script::new(
            &["A", "B", "C"],
            &[
                (
                    "UPDATE b2;",
                    Act::Waits {
                        by: 0,
                        until: "COMMIT;",
                    },
                ),
                (
                    "UPDATE c;",
                    Act::Waits {
                        by: 0,
                        until: "COMMIT;",
                    },
                ),
            ],
        );
        let (o, t) = run_script(&mut script, &spec_with(&[perm]), 0, true).await;
        o.unwrap();
        let tail = format!("step ac: COMMIT;\nstep {first}: <... completed>\nstep {second}: <... completed>\n");
        assert!(t.ends_with(&tail), "{perm}: {t}");
    }
}

#[tokio::test(start_paused = true)]
async fn a_step_that_answers_as_lab_looks_past_its_deadline_is_not_cancelled() {
    // b1 gives up on its own (55P03) the moment lab asks after its
    // deadline: its answer is there when lab weighs the deadline, so lab
    // does not cancel it (a starved lab looks late; what answered, answered).
    for patient in [true, false] {
        let mut script = Script::new(
            &["A", "B", "C"],
            &[(
                "UPDATE b2;",
                Act::OutsiderTimeout(Duration::from_secs(10) + Duration::from_nanos(1)),
            )],
        );
        let (o, _) = run_script(&mut script, &spec_with(&["a1 b1 ac"]), 0, patient).await;
        let b1 = o.unwrap().step("b1").unwrap().clone();
        assert!(b1.failed_with("55P03"), "patient {patient}: {b1:?}");
        assert!(!b1.cancelled_by_lab, "patient {patient}");
        assert!(script.cancels.borrow().is_empty(), "patient {patient}");
    }
}

#[tokio::test(start_paused = true)]
async fn a_timeout_behind_a_backend_that_is_not_the_specs_names_that_backend() {
    for patient in [true, false] {
        let mut script = Script::new(
            &["A", "B", "C"],
            &[("UPDATE b2;", Act::OutsiderTimeout(Duration::from_millis(300)))],
        );
        let recorder = Recorder::default();
        let (o, _) = run_recorded(&mut script, &spec_with(&["a1 b1 ac"]), 0, (patient, false), &recorder).await;
        let o = o.unwrap();
        let b1 = o.step("b1").unwrap();
        assert!(b1.failed_with("55P03"), "patient {patient}");
        // The lock timeout says it waited, for no session of the spec's ...
        assert_eq!(b1.waited_for(), Some(&[][..]), "patient {patient}");
        // ... but for the backend lab saw holding the lock, named once.
        assert_eq!(
            b1.outsiders,
            ["autovacuum: VACUUM pg_catalog.pg_attribute (pid 9999)"],
            "patient {patient}"
        );
        let notes: Vec<String> = recorder
            .entries()
            .iter()
            .filter(|e| e.result == crate::report::StepResult::Note)
            .map(|e| e.detail.render(crate::i18n::Lang::En))
            .collect();
        assert_eq!(notes.len(), 1, "patient {patient}: {notes:?}");
        assert!(notes[0].contains("pid 9999"), "{notes:?}");
        // Steps that never waited name nobody.
        assert!(o.step("a1").unwrap().outsiders.is_empty());
    }
}

#[tokio::test(start_paused = true)]
async fn a_lock_held_by_a_backend_that_is_not_the_specs_is_not_a_wait() {
    let mut script = Script::new(
        &["A", "B", "C"],
        &[("UPDATE b2;", Act::Outsider(Duration::from_millis(50)))],
    );
    let (o, t) = run_script(&mut script, &spec_with(&["a1 b1 ac"]), 0, true).await;
    let o = o.unwrap();
    // isolationtester waits for the step to finish: no `<waiting ...>`, b1 before ac.
    assert_eq!(t, "step a1: UPDATE a;\nstep b1: UPDATE b2;\nstep ac: COMMIT;\n");
    assert!(!o.step("b1").unwrap().waited());
}

#[test]
fn what_counts_as_waiting() {
    let pids = [101, 102];
    let names = ["A".to_string(), "B".to_string()];
    let judged = |b: Blocking| judge_wait(&b, &pids, &names);
    let blocked = |by: &[&str], kind| {
        Status::Blocked(Waited {
            by: by.iter().map(|s| s.to_string()).collect(),
            kind,
            lock: None,
        })
    };
    // A lock one of the spec's sessions holds; only the spec's are named.
    let lock = Blocking {
        locks: vec![OUTSIDER, 102],
        ..Blocking::default()
    };
    assert_eq!(judged(lock), blocked(&["B"], WaitKind::Lock));
    // A lock only autovacuum (or anyone else) holds is not a wait of the spec's.
    let outsider = Blocking {
        locks: vec![OUTSIDER],
        ..Blocking::default()
    };
    assert_eq!(judged(outsider), Status::Running);
    // A safe snapshot's wait always counts, whoever it waits for.
    let snapshot = Blocking {
        snapshot: vec![OUTSIDER],
        ..Blocking::default()
    };
    assert_eq!(judged(snapshot), blocked(&[], WaitKind::SafeSnapshot));
    let sync = Blocking {
        event: Some("SyncRep".into()),
        ..Blocking::default()
    };
    assert_eq!(judged(sync), blocked(&[], WaitKind::SyncRep));
    let other_event = Blocking {
        event: Some("ClientRead".into()),
        ..Blocking::default()
    };
    assert_eq!(judged(other_event), Status::Running);
    let pooler = Blocking {
        pooler_queued: true,
        ..Blocking::default()
    };
    assert_eq!(judged(pooler), blocked(&[], WaitKind::Pooler));
    // A lock wait is named first.
    let both = Blocking {
        locks: vec![101],
        snapshot: vec![102],
        ..Blocking::default()
    };
    assert_eq!(judged(both), blocked(&["A"], WaitKind::Lock));
}

#[tokio::test(start_paused = true)]
async fn a_blocker_annotation_holds_a_step_that_answered_while_the_other_is_running() {
    // b1(a2): b1 answers at once, but a2 is still waiting (on C), so b1 is
    // shown waiting and completes only after a2 does (isolationtester's
    // step_has_blocker: the referenced step is active).
    let mut script = Script::new(
        &["A", "B", "C"],
        &[(
            "UPDATE b;",
            Act::Waits {
                by: 2,
                until: "UPDATE c;",
            },
        )],
    );
    let (o, t) = run_script(&mut script, &spec_with(&["a1 a2 b1(a2) c1 ac"]), 0, true).await;
    let o = o.unwrap();
    assert_eq!(
        t,
        "step a1: UPDATE a;\nstep a2: UPDATE b; <waiting ...>\nstep b1: UPDATE b2; <waiting ...>\n\
         step c1: UPDATE c;\nstep a2: <... completed>\nstep b1: <... completed>\nstep ac: COMMIT;\n"
    );
    assert_eq!(
        o.step("b1").unwrap().waited.as_ref().unwrap().kind,
        WaitKind::Annotation
    );
    // Once the step it names is not running, an annotation holds nothing back.
    let mut script = Script::new(&["A", "B", "C"], &[]);
    let (_, t) = run_script(&mut script, &spec_with(&["a1 b1(a2) a2 ac"]), 0, true).await;
    assert_eq!(
        t,
        "step a1: UPDATE a;\nstep b1: UPDATE b2;\nstep a2: UPDATE b;\nstep ac: COMMIT;\n"
    );
}

#[tokio::test(start_paused = true)]
async fn a_star_marks_a_step_waiting_without_asking_the_server() {
    let mut script = Script::new(&["A", "B", "C"], &[]);
    let (_, t) = run_script(&mut script, &spec_with(&["a1 b1(*) ac"]), 0, true).await;
    assert_eq!(
        t,
        "step a1: UPDATE a;\nstep b1: UPDATE b2; <waiting ...>\nstep ac: COMMIT;\nstep b1: <... completed>\n"
    );
}

#[tokio::test(start_paused = true)]
async fn the_next_step_of_a_busy_session_waits_until_lab_cancels_the_earlier_one_at_the_deadline() {
    // b2 cannot be sent while b1 waits; ac, which would release b1, comes
    // after b2: isolationtester waits for the step timeout; so does lab.
    let mut script = Script::new(
        &["A", "B", "C"],
        &[(
            "UPDATE b2;",
            Act::Waits {
                by: 0,
                until: "COMMIT;",
            },
        )],
    );
    let began = Instant::now();
    let (o, t) = run_script(&mut script, &spec_with(&["a1 b1 b2 ac"]), 0, true).await;
    let o = o.unwrap();
    assert_eq!(script.sent(), ["UPDATE a;", "UPDATE b2;", "UPDATE a2;", "COMMIT;"]);
    assert!(
        t.contains("isolationtester: canceling step b1 after 10 seconds\n"),
        "{t}"
    );
    let b1 = o.step("b1").unwrap();
    assert!(b1.cancelled_by_lab && !b1.dead_end && b1.failed_with("57014"));
    assert_eq!(*script.cancels.borrow(), [101]);
    let waited = began.elapsed();
    assert!(
        waited >= Duration::from_secs(10) && waited < Duration::from_secs(11),
        "{waited:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn when_every_session_waits_a_scenario_gets_twice_deadlock_timeout_then_lab_cancels() {
    // A waits for B and B for A, and no error ends it: only the server could
    // (its deadlock detector runs after deadlock_timeout, 1 s here).
    let mut script = Script::new(
        &["A", "B", "C"],
        &[
            ("UPDATE b;", Act::Stuck { by: 1 }),
            ("UPDATE a2;", Act::Stuck { by: 0 }),
        ],
    );
    let began = Instant::now();
    let (o, _) = run_script(&mut script, &spec_with(&["a1 b1 a2 b2 ac bc"]), 0, false).await;
    let o = o.unwrap();
    let waited = began.elapsed();
    // 2 × deadlock_timeout + 200 ms, not the 10 s deadline.
    assert!(
        waited >= Duration::from_millis(2200) && waited < Duration::from_secs(3),
        "{waited:?}"
    );
    assert!(o.step("a2").unwrap().cancelled_by_lab);
    assert!(o.step("b2").unwrap().cancelled_by_lab);
}

#[tokio::test(start_paused = true)]
async fn a_spec_is_patient_every_wait_lasts_until_its_deadline() {
    let mut script = Script::new(
        &["A", "B", "C"],
        &[
            ("UPDATE b;", Act::Stuck { by: 1 }),
            ("UPDATE a2;", Act::Stuck { by: 0 }),
        ],
    );
    let began = Instant::now();
    let (o, _) = run_script(&mut script, &spec_with(&["a1 b1 a2 b2 ac bc"]), 0, true).await;
    o.unwrap();
    assert!(began.elapsed() >= Duration::from_secs(10), "{:?}", began.elapsed());
}

#[tokio::test(start_paused = true)]
async fn a_wait_only_a_later_step_could_end_is_cut_at_once_when_dead_ends_are() {
    // B's b1 waits for A, whose next step comes after B's b2: nothing the
    // server does can end it (A has no step running), so lab explore cuts
    // it at once; lab spec waits out the deadline as isolationtester does.
    let mut script = Script::new(&["A", "B", "C"], &[("UPDATE b2;", Act::Stuck { by: 0 })]);
    let began = Instant::now();
    let (o, _) = run_script_with(&mut script, &spec_with(&["a1 b1 b2 ac bc"]), 0, true, true).await;
    let o = o.unwrap();
    assert!(began.elapsed() < Duration::from_secs(1), "{:?}", began.elapsed());
    let b1 = o.step("b1").unwrap();
    assert!(b1.cancelled_by_lab && b1.dead_end);
    assert_eq!(*script.cancels.borrow(), [101]);
    let mut script = Script::new(&["A", "B", "C"], &[("UPDATE b2;", Act::Stuck { by: 0 })]);
    let began = Instant::now();
    let (o, _) = run_script_with(&mut script, &spec_with(&["a1 b1 b2 ac bc"]), 0, true, false).await;
    // Without the cut the same wait is cancelled at the deadline: not a dead end.
    let b1 = o.unwrap().step("b1").unwrap().clone();
    assert!(b1.cancelled_by_lab && !b1.dead_end);
    assert!(began.elapsed() >= Duration::from_secs(10), "{:?}", began.elapsed());
}

#[tokio::test(start_paused = true)]
async fn a_cut_that_crosses_the_steps_own_end_keeps_the_servers_answer() {
    // lab judges B's b1 a dead end and cancels it, but the server had
    // already ended it (a deadlock's victim, its 40P01 on its way): the
    // step keeps the server's 40P01, with lab's cancel on record (lab
    // explore classes it by the answer: see classes.rs).
    let mut script = Script::new(&["A", "B", "C"], &[("UPDATE b2;", Act::Crosses { by: 0 })]);
    let (o, _) = run_script_with(&mut script, &spec_with(&["a1 b1 b2 ac bc"]), 0, true, true).await;
    let o = o.unwrap();
    assert_eq!(*script.cancels.borrow(), [101]);
    let b1 = o.step("b1").unwrap();
    assert!(b1.failed_with("40P01"), "{:?}", b1.answer);
    assert!(b1.cancelled_by_lab && b1.dead_end);
}

#[tokio::test(start_paused = true)]
async fn waits_in_a_cycle_are_left_to_the_deadlock_detector_even_when_dead_ends_are_cut() {
    // A waits for B and B for A: the server's deadlock detector can end
    // that, so it is no dead end; only the deadline does.
    let mut script = Script::new(
        &["A", "B", "C"],
        &[
            ("UPDATE b;", Act::Stuck { by: 1 }),
            ("UPDATE a2;", Act::Stuck { by: 0 }),
        ],
    );
    let began = Instant::now();
    let (o, _) = run_script_with(&mut script, &spec_with(&["a1 b1 a2 b2 ac bc"]), 0, true, true).await;
    o.unwrap();
    assert!(began.elapsed() >= Duration::from_secs(10), "{:?}", began.elapsed());
}

#[tokio::test(start_paused = true)]
async fn a_statement_deaf_to_its_cancel_is_terminated_then_the_run_gives_up() {
    let mut script = Script::new(&["A", "B", "C"], &[("UPDATE b2;", Act::Deaf { by: 0 })]);
    let (o, _) = run_script(&mut script, &spec_with(&["a1 b1 ac"]), 0, true).await;
    // Cancelled at the deadline, terminated half a deadline later; its
    // answer (the connection's end) is recorded, and the run goes on.
    let o = o.unwrap();
    assert_eq!(*script.cancels.borrow(), [101]);
    assert_eq!(*script.terminations.borrow(), [101]);
    assert!(o.step("b1").unwrap().failed_with("57P01"));
}

#[tokio::test(start_paused = true)]
async fn a_deadlock_names_who_waited_for_whom_even_a_wait_too_short_to_see() {
    // A's a2 answers at once (it was let go when B's b2 was chosen as the
    // victim): only the DETAIL says A had waited for B.
    let detail = "Process 100 waits for ShareLock on transaction 1; blocked by process 101.\n\
                  Process 101 waits for ShareLock on transaction 2; blocked by process 100.";
    let mut script = Script::new(&["A", "B", "C"], &[("UPDATE a2;", Act::Fails("40P01", detail))]);
    let (o, _) = run_script(&mut script, &spec_with(&["a1 b1 a2 b2 ac bc"]), 0, false).await;
    let o = o.unwrap();
    let b2 = o.step("b2").unwrap();
    assert_eq!(b2.waited_for(), Some(&["A".to_string()][..]));
    assert_eq!(b2.waited.as_ref().unwrap().kind, WaitKind::ServerError);
}

/// ddl-lock-queue's lock-timeout-retry on a loaded machine: lab sees C wait
/// for B just as B's lock_timeout fires (which lets C go). isolationtester
/// (and `lab spec`) sends B's next step before looking at C again; lab's own
/// scenarios take in C's answer first, as they do when B gives way later.
#[tokio::test(start_paused = true)]
async fn a_wait_that_ends_while_lab_asks_is_taken_in_before_the_next_step_in_scenarios() {
    let spec = "
session A
step a1 { LOCK t; }
step ac { COMMIT; }
session B
step b1 { ALTER t; }
step b2 { SELECT pause; }
session C
step c1 { SELECT t; }
permutation a1 b1 c1 b2 ac
";
    let acts = [
        ("ALTER t;", Act::GivesWay { by: 0 }),
        ("SELECT t;", Act::Waits { by: 1, until: "" }),
    ];
    let scenario = "step a1: LOCK t;\nstep b1: ALTER t; <waiting ...>\nstep c1: SELECT t; <waiting ...>\n\
                    step b1: <... completed>\nERROR:  canceling statement due to lock timeout\n\
                    step c1: <... completed>\nstep b2: SELECT pause;\nstep ac: COMMIT;\n";
    let isolationtester = "step a1: LOCK t;\nstep b1: ALTER t; <waiting ...>\nstep c1: SELECT t; <waiting ...>\n\
                           step b1: <... completed>\nERROR:  canceling statement due to lock timeout\n\
                           step b2: SELECT pause;\nstep c1: <... completed>\nstep ac: COMMIT;\n";
    for (patient, want) in [(false, scenario), (true, isolationtester)] {
        let mut script = Script::new(&["A", "B", "C"], &acts);
        let (o, t) = run_script(&mut script, spec, 0, patient).await;
        let o = o.unwrap();
        assert_eq!(t, want, "patient: {patient}");
        assert!(o.step("b1").unwrap().failed_with("55P03"));
        assert_eq!(o.step("c1").unwrap().waited_for(), Some(&["B".to_string()][..]));
    }
}

#[test]
fn stuck_steps_are_cancelled_one_link_of_the_chain_at_a_time() {
    let stuck = |session: &str, by: &[&str], cancelled: bool| Stuck {
        session: session.into(),
        by: by.iter().map(|b| b.to_string()).collect(),
        cancelled,
    };
    // ddl-lock-queue: B waits for A (idle in its transaction), C for B.
    // Only B first: C may go on once B answers.
    assert_eq!(
        stuck_to_cancel(&[stuck("B", &["A"], false), stuck("C", &["B"], false)]),
        [0]
    );
    assert_eq!(
        stuck_to_cancel(&[stuck("C", &["B"], false), stuck("B", &["A"], false)]),
        [1]
    );
    // Nothing more while B's cancel has not been answered.
    assert!(stuck_to_cancel(&[stuck("B", &["A"], true), stuck("C", &["B"], false)]).is_empty());
    // B answered and C still waits (for A now): C's turn.
    assert_eq!(stuck_to_cancel(&[stuck("C", &["A"], false)]), [0]);
    // Two chains' roots at once; a wait the server named no one for is a root.
    assert_eq!(
        stuck_to_cancel(&[
            stuck("B", &["A"], false),
            stuck("C", &[], false),
            stuck("D", &["C"], false)
        ]),
        [0, 1]
    );
    // Waiting on each other (a cycle the server has not broken): all of them.
    assert_eq!(
        stuck_to_cancel(&[stuck("A", &["B"], false), stuck("B", &["A"], false)]),
        [0, 1]
    );
}
