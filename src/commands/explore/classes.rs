//! What happened in one run, as a signature; runs with the same signature
//! form a class (pure: unit-tested on hand-made observations).
//!
//! A signature is independent of the order the steps ran in: for each step,
//! whether the server made it wait and for whom, and how it ended (answered,
//! a COMMIT that rolled back, an error with its SQLSTATE, cancelled by lab
//! at a dead end or at its deadline); then, when the spec says what an anomaly is
//! (`# occurs-if:`), whether it occurred, else what its final reads returned.
use std::collections::BTreeMap;

use crate::engine::{Observation, StepRun};
use crate::report::WaitKind;
pub use crate::report::explore::{Aborts, Ended, Signature, StepOutcome, Tally};

impl Signature {
    /// `order`: each step's name in declaration order; `reads`: the final
    /// reads, whose rows count; `anomaly`: the spec's condition, if it has one.
    pub fn of(o: &Observation, order: &[String], reads: &[String], anomaly: Option<bool>) -> Signature {
        let mut steps: Vec<StepOutcome> = o
            .steps
            .iter()
            .map(|s| StepOutcome {
                step: s.name.clone(),
                waited_for: server_wait(s),
                ended: ended(s),
                rows: (anomaly.is_none() && reads.contains(&s.name))
                    .then(|| s.rows().ok().map(rows_text))
                    .flatten(),
                commit: is_commit(&s.sql),
            })
            .collect();
        let rank = |name: &str| order.iter().position(|n| n == name).unwrap_or(usize::MAX);
        // Stable: a step run twice keeps its two outcomes in the order they ran.
        steps.sort_by_key(|s| rank(&s.step));
        Signature { anomaly, steps }
    }

    pub fn waited(&self) -> bool {
        self.steps.iter().any(|s| s.waited_for.is_some())
    }

    /// A serialization failure or a deadlock.
    pub fn aborted(&self) -> bool {
        self.abort().is_some()
    }

    /// The first abort (in the spec's step order): its SQLSTATE, and
    /// whether it came at COMMIT.
    pub fn abort(&self) -> Option<(&str, bool)> {
        self.steps.iter().find_map(|s| match &s.ended {
            Ended::Error(c) if c == "40001" || c == "40P01" => Some((c.as_str(), s.commit)),
            _ => None,
        })
    }

    /// A step lab cut at a dead end: the permutation cannot run as written.
    pub fn dead_end(&self) -> bool {
        self.steps.iter().any(|s| s.ended == Ended::DeadEnd)
    }

    /// A step lab cancelled at its deadline.
    pub fn stuck(&self) -> bool {
        self.steps.iter().any(|s| s.ended == Ended::Stuck)
    }

    /// Another error than an abort.
    pub fn failed(&self) -> bool {
        self.steps
            .iter()
            .any(|s| matches!(&s.ended, Ended::Error(c) if c != "40001" && c != "40P01"))
    }

    /// What happened, one phrase per thing that is not a plain answer.
    pub fn phrases(&self) -> Vec<Phrase> {
        let mut out = Vec::new();
        for s in &self.steps {
            if let Some(by) = &s.waited_for {
                out.push(Phrase::Waited(s.step.clone(), by.join(", ")));
            }
            match &s.ended {
                Ended::Ok => {}
                Ended::RolledBack => out.push(Phrase::RolledBack(s.step.clone())),
                Ended::Error(c) if c == "40001" || c == "40P01" => out.push(Phrase::Aborted(s.step.clone(), c.clone())),
                Ended::Error(c) => out.push(Phrase::Failed(s.step.clone(), c.clone())),
                Ended::DeadEnd => out.push(Phrase::DeadEnd(s.step.clone())),
                Ended::Stuck => out.push(Phrase::Stuck(s.step.clone())),
            }
            if let Some(rows) = &s.rows {
                out.push(Phrase::Read(s.step.clone(), rows.clone()));
            }
        }
        out
    }
}

/// One thing a class's line says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Phrase {
    Waited(String, String),
    RolledBack(String),
    Aborted(String, String),
    Failed(String, String),
    DeadEnd(String),
    Stuck(String),
    Read(String, String),
}

/// The sessions a step waited for, when the server said it waited (a
/// blocker annotation alone is the spec's doing, not a wait).
fn server_wait(s: &StepRun) -> Option<Vec<String>> {
    let w = s.waited.as_ref()?;
    (w.kind != WaitKind::Annotation).then(|| {
        let mut by = w.by.clone();
        by.sort();
        by
    })
}

/// Every row a read returned, `col=value, ...; ...` (`(0 rows)` for none).
fn rows_text(set: &crate::report::ResultSet) -> String {
    if set.rows.is_empty() {
        return "(0 rows)".into();
    }
    set.rows
        .iter()
        .map(|row| {
            set.columns
                .iter()
                .zip(row)
                .map(|(c, v)| format!("{c}={}", v.as_deref().unwrap_or("null")))
                .collect::<Vec<_>>()
                .join(", ")
        })
        .collect::<Vec<_>>()
        .join("; ")
}

fn ended(s: &StepRun) -> Ended {
    // lab's cancel counts only where it ended the step (57014): one that
    // crossed the step's own end (a deadlock's victim whose 40P01 was on
    // its way while lab judged the wait a dead end, a lock_timeout firing)
    // changed nothing, and the server's answer is the outcome.
    let by_lab = s.cancelled_by_lab && matches!(&s.answer, Err(e) if e.is("57014"));
    if by_lab && s.dead_end {
        return Ended::DeadEnd;
    }
    if by_lab {
        return Ended::Stuck;
    }
    match &s.answer {
        Ok(results) if results.last().is_some_and(|r| r.tag == "ROLLBACK") && is_commit(&s.sql) => Ended::RolledBack,
        Ok(_) => Ended::Ok,
        Err(e) => Ended::Error(e.code.clone().unwrap_or_default()),
    }
}

fn is_commit(sql: &str) -> bool {
    let first = sql
        .trim_start()
        .split(|c: char| !c.is_ascii_alphabetic())
        .next()
        .unwrap_or("");
    first.eq_ignore_ascii_case("commit") || first.eq_ignore_ascii_case("end")
}

/// Runs with the same signature: how many, and the first of them (in the
/// order the permutations were generated), which represents the class.
#[derive(Debug, Clone)]
pub struct Class {
    pub signature: Signature,
    /// Indices of its runs, in order.
    pub runs: Vec<usize>,
    /// How many of its permutations run one session after another.
    pub serial: usize,
}

impl Class {
    pub fn representative(&self) -> usize {
        self.runs[0]
    }
}

/// Groups runs by signature: the largest class first (ties: the one whose
/// first run came first).
pub fn group(signatures: &[(usize, Signature, bool)]) -> Vec<Class> {
    let mut by: BTreeMap<&Signature, Class> = BTreeMap::new();
    for (run, sig, serial) in signatures {
        let c = by.entry(sig).or_insert_with(|| Class {
            signature: sig.clone(),
            runs: Vec::new(),
            serial: 0,
        });
        c.runs.push(*run);
        c.serial += usize::from(*serial);
    }
    let mut classes: Vec<Class> = by.into_values().collect();
    classes.sort_by_key(|c| (std::cmp::Reverse(c.runs.len()), c.representative()));
    classes
}

pub fn tally(classes: &[Class]) -> Tally {
    let mut t = Tally {
        classes: classes.len(),
        ..Tally::default()
    };
    for c in classes {
        let n = c.runs.len();
        let s = &c.signature;
        t.runs += n;
        if let Some(a) = s.anomaly {
            *t.anomaly.get_or_insert(0) += if a { n } else { 0 };
        }
        t.blocked += if s.waited() { n } else { 0 };
        t.aborted += if s.aborted() { n } else { 0 };
        t.failed += if s.failed() { n } else { 0 };
        t.dead_ends += if s.dead_end() { n } else { 0 };
        t.stuck += if s.stuck() { n } else { 0 };
        t.serial += c.serial;
        if let Some((code, at_commit)) = s.abort() {
            match t
                .aborts
                .iter_mut()
                .find(|a| a.sqlstate == code && a.at_commit == at_commit)
            {
                Some(a) => a.runs += n,
                None => t.aborts.push(Aborts {
                    sqlstate: code.to_string(),
                    at_commit,
                    runs: n,
                }),
            }
        }
    }
    t.aborts.sort();
    t
}

#[cfg(test)]
// Hand-made answers are PostgreSQL's error type, as the engine's are.
#[allow(clippy::result_large_err)]
mod tests {
    use super::*;
    use crate::engine::Waited;
    use crate::engine::answer::{PgError, Res};
    use std::time::Duration;

    fn step(name: &str, sql: &str, answer: crate::engine::Answer) -> StepRun {
        StepRun {
            name: name.into(),
            session: name[..1].into(),
            sql: sql.into(),
            sent: Duration::ZERO,
            done: Duration::ZERO,
            waited: None,
            answer,
            cancelled_by_lab: false,
            dead_end: false,
            isolation: None,
            looked: None,
            outsiders: Vec::new(),
        }
    }

    fn tag(t: &str) -> crate::engine::Answer {
        Ok(vec![Res {
            tag: t.into(),
            count: 0,
            set: None,
        }])
    }

    fn error(code: &str) -> crate::engine::Answer {
        Err(PgError {
            code: Some(code.into()),
            severity: "ERROR".into(),
            message: "could not serialize access".into(),
            detail: None,
            hint: None,
            context: None,
            position: None,
            connection_lost: false,
            before: Vec::new(),
        })
    }

    fn obs(steps: Vec<StepRun>) -> Observation {
        Observation {
            sessions: Vec::new(),
            steps,
            probes: Vec::new(),
        }
    }

    fn order() -> Vec<String> {
        ["a1", "ac", "b1", "bc"].map(String::from).to_vec()
    }

    #[test]
    fn the_order_steps_ran_in_is_not_part_of_the_signature() {
        let one = obs(vec![
            step("a1", "UPDATE t", tag("UPDATE 1")),
            step("b1", "UPDATE t", tag("UPDATE 1")),
            step("ac", "COMMIT", tag("COMMIT")),
            step("bc", "COMMIT", tag("COMMIT")),
        ]);
        let two = obs(vec![
            step("b1", "UPDATE t", tag("UPDATE 1")),
            step("bc", "COMMIT", tag("COMMIT")),
            step("a1", "UPDATE t", tag("UPDATE 1")),
            step("ac", "COMMIT", tag("COMMIT")),
        ]);
        let (s1, s2) = (
            Signature::of(&one, &order(), &[], None),
            Signature::of(&two, &order(), &[], None),
        );
        assert_eq!(s1, s2);
        assert!(s1.phrases().is_empty());
        assert_eq!(s1.steps[1].step, "ac");
    }

    #[test]
    fn waits_errors_rollbacks_dead_ends_and_stuck_steps_each_make_a_difference() {
        let base = || {
            vec![
                step("a1", "UPDATE t", tag("UPDATE 1")),
                step("b1", "UPDATE t", tag("UPDATE 1")),
                step("ac", "COMMIT", tag("COMMIT")),
                step("bc", "COMMIT", tag("COMMIT")),
            ]
        };
        let plain = Signature::of(&obs(base()), &order(), &[], None);
        let mut waited = base();
        waited[1].waited = Some(Waited {
            by: vec!["a".into()],
            kind: WaitKind::Lock,
            lock: None,
        });
        let waited = Signature::of(&obs(waited), &order(), &[], None);
        assert!(waited.waited() && !plain.waited());
        assert_eq!(waited.phrases(), [Phrase::Waited("b1".into(), "a".into())]);
        // A wait only a blocker annotation made is not the server's.
        let mut marked = base();
        marked[1].waited = Some(Waited {
            by: Vec::new(),
            kind: WaitKind::Annotation,
            lock: None,
        });
        assert_eq!(Signature::of(&obs(marked), &order(), &[], None), plain);
        let mut aborted = base();
        aborted[3] = step("bc", "COMMIT", error("40001"));
        let aborted = Signature::of(&obs(aborted), &order(), &[], None);
        assert!(aborted.aborted() && !aborted.failed());
        assert_eq!(aborted.phrases(), [Phrase::Aborted("bc".into(), "40001".into())]);
        let mut rolled = base();
        rolled[3] = step("bc", " commit;", tag("ROLLBACK"));
        let rolled = Signature::of(&obs(rolled), &order(), &[], None);
        assert_eq!(rolled.phrases(), [Phrase::RolledBack("bc".into())]);
        let mut other = base();
        other[1] = step("b1", "UPDATE t", error("23505"));
        let other = Signature::of(&obs(other), &order(), &[], None);
        assert!(other.failed() && !other.aborted());
        let mut stuck = base();
        stuck[1].cancelled_by_lab = true;
        stuck[1].answer = error("57014");
        let stuck = Signature::of(&obs(stuck), &order(), &[], None);
        assert!(stuck.stuck() && !stuck.dead_end() && !stuck.failed());
        assert_eq!(stuck.phrases(), [Phrase::Stuck("b1".into())]);
        // Cut at once, waiting for a session whose next step comes later: not stuck at the deadline.
        let mut cut = base();
        cut[1].cancelled_by_lab = true;
        cut[1].dead_end = true;
        cut[1].answer = error("57014");
        let cut = Signature::of(&obs(cut), &order(), &[], None);
        assert!(cut.dead_end() && !cut.stuck() && !cut.failed());
        assert_eq!(cut.phrases(), [Phrase::DeadEnd("b1".into())]);
        // A cut that crossed the step's own end (its 40P01 on its way): the
        // server's answer, not a dead end.
        let mut crossed = base();
        crossed[1].cancelled_by_lab = true;
        crossed[1].dead_end = true;
        crossed[1].answer = error("40P01");
        let crossed = Signature::of(&obs(crossed), &order(), &[], None);
        assert!(!crossed.dead_end() && !crossed.stuck());
        assert_eq!(crossed.abort(), Some(("40P01", false)));
        let all = [&plain, &waited, &aborted, &rolled, &other, &stuck, &cut];
        for (i, a) in all.iter().enumerate() {
            for b in &all[i + 1..] {
                assert_ne!(a, b);
            }
        }
    }

    #[test]
    fn final_reads_count_only_without_an_anomaly_condition() {
        let read = || {
            let mut s = step("a1", "SELECT", tag("SELECT 1"));
            s.answer = Ok(vec![Res {
                tag: "SELECT 1".into(),
                count: 1,
                set: Some(crate::report::ResultSet {
                    columns: vec!["n".into()],
                    rows: vec![vec![Some("2".into())]],
                }),
            }]);
            s
        };
        let sig = Signature::of(&obs(vec![read()]), &order(), &["a1".into()], None);
        assert_eq!(sig.steps[0].rows.as_deref(), Some("n=2"));
        let not_final = Signature::of(&obs(vec![read()]), &order(), &[], None);
        assert_eq!(not_final.steps[0].rows, None);
        let judged = Signature::of(&obs(vec![read()]), &order(), &["a1".into()], Some(true));
        assert_eq!(judged.steps[0].rows, None);
        assert_eq!(judged.anomaly, Some(true));
    }

    #[test]
    fn classes_come_largest_first_and_are_tallied() {
        let ok = Signature::of(
            &obs(vec![step("a1", "UPDATE t", tag("UPDATE 1"))]),
            &order(),
            &[],
            Some(true),
        );
        let abort = Signature::of(
            &obs(vec![step("a1", "UPDATE t", error("40001"))]),
            &order(),
            &[],
            Some(false),
        );
        let mut cut = step("a1", "UPDATE t", error("57014"));
        (cut.cancelled_by_lab, cut.dead_end) = (true, true);
        let cut = Signature::of(&obs(vec![cut]), &order(), &[], Some(false));
        let runs = vec![
            (0, abort.clone(), true),
            (1, ok.clone(), false),
            (2, ok.clone(), false),
            (3, abort.clone(), false),
            (4, ok.clone(), true),
            (5, cut, false),
        ];
        let classes = group(&runs);
        assert_eq!(classes.len(), 3);
        assert_eq!(classes[0].runs, [1, 2, 4]);
        assert_eq!(classes[0].serial, 1);
        assert_eq!(classes[1].representative(), 0);
        let t = tally(&classes);
        assert_eq!(
            t,
            Tally {
                runs: 6,
                anomaly: Some(3),
                blocked: 0,
                aborted: 2,
                failed: 0,
                dead_ends: 1,
                stuck: 0,
                serial: 2,
                classes: 3,
                aborts: vec![Aborts {
                    sqlstate: "40001".into(),
                    at_commit: false,
                    runs: 2,
                }],
            }
        );
        // Where each run's abort came, by SQLSTATE.
        let at_commit = |code: &str| {
            Signature::of(
                &obs(vec![
                    step("a1", "UPDATE t", tag("UPDATE 1")),
                    step("a2", "COMMIT", error(code)),
                ]),
                &order(),
                &[],
                None,
            )
        };
        assert_eq!(at_commit("40001").abort(), Some(("40001", true)));
        assert_eq!(abort.abort(), Some(("40001", false)));
        let t = tally(&group(&[
            (0, at_commit("40001"), false),
            (1, at_commit("40001"), false),
            (2, at_commit("40P01"), false),
            (3, abort.clone(), false),
        ]));
        let kinds: Vec<(&str, bool, usize)> = t
            .aborts
            .iter()
            .map(|a| (a.sqlstate.as_str(), a.at_commit, a.runs))
            .collect();
        assert_eq!(kinds, [("40001", false, 1), ("40001", true, 2), ("40P01", true, 1)]);
        assert_eq!(t.aborted, 4);
        // A tie goes to the class seen first.
        let tie = group(&[(0, abort.clone(), false), (1, ok.clone(), false)]);
        assert_eq!(tie[0].signature, abort);
    }
}
