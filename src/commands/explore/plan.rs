//! Which permutations `lab explore` runs (pure: unit-tested on hand-made
//! specs). A spec that lists no permutation gets every interleaving of its
//! sessions' steps, in isolationtester's order (its recursion over the
//! sessions: the lexicographic order of the sequence of session numbers).
//! A spec that lists some runs them as listed, or, asked for every
//! interleaving, every interleaving of each listed permutation's steps,
//! with the final reads kept last (see [`Interleave::of`]).
use crate::specfile::{Permutation, Planned, Spec, StepId};
use crate::sql_lexer::{TxEffect, statements, tx_effect, words};

/// The steps to interleave: each session's in its order, in groups that
/// stay together, then the steps that stay at the end in the order given.
#[derive(Debug, Clone, PartialEq)]
pub struct Interleave {
    pub piles: Vec<Vec<Vec<StepId>>>,
    pub tail: Vec<StepId>,
}

impl Interleave {
    /// Every step of every session (what isolationtester generates).
    pub fn whole(spec: &Spec) -> Interleave {
        Interleave {
            piles: spec
                .sessions
                .iter()
                .enumerate()
                .map(|(si, s)| {
                    (0..s.steps.len())
                        .map(|i| vec![StepId { session: si, step: i }])
                        .collect()
                })
                .collect(),
            tail: Vec::new(),
        }
    }

    /// The steps of a listed permutation. Its final read stays last: when
    /// the permutation ends with steps of a session that does nothing before
    /// them (a `check` session reading the outcome) and at least two other
    /// sessions come first, those steps end every interleaving. A step that
    /// only begins a transaction block (`BEGIN`, `START TRANSACTION`) takes
    /// no snapshot and no lock: it stays right before its session's next
    /// step, since where else it goes changes nothing. A step the
    /// permutation repeats counts once per mention.
    pub fn of(spec: &Spec, p: &Permutation) -> Option<Interleave> {
        let ids: Vec<StepId> = p.steps.iter().map(|s| spec.find(&s.name)).collect::<Option<_>>()?;
        let mut cut = ids.len();
        if let Some(last) = ids.last().map(|id| id.session) {
            while cut > 0 && ids[cut - 1].session == last {
                cut -= 1;
            }
            let mut before: Vec<usize> = ids[..cut].iter().map(|id| id.session).collect();
            before.sort_unstable();
            before.dedup();
            if before.contains(&last) || before.len() < 2 {
                cut = ids.len();
            }
        }
        let (head, tail) = ids.split_at(cut);
        let piles = (0..spec.sessions.len())
            .map(|si| {
                let mut groups: Vec<Vec<StepId>> = Vec::new();
                let mut open = false;
                for &id in head.iter().filter(|id| id.session == si) {
                    match groups.last_mut() {
                        Some(g) if open => g.push(id),
                        _ => groups.push(vec![id]),
                    }
                    open = only_begins(&spec.step(id).sql);
                }
                groups
            })
            .collect();
        Some(Interleave {
            piles,
            tail: tail.to_vec(),
        })
    }

    /// How many interleavings there are: the multinomial coefficient,
    /// saturating (a number too large to run is too large either way).
    pub fn count(&self) -> u128 {
        let mut total: u128 = 1;
        let mut placed: u128 = 0;
        for pile in &self.piles {
            for k in 1..=pile.len() as u128 {
                placed += 1;
                // total * placed / k stays an integer at every step.
                total = match total.checked_mul(placed) {
                    Some(t) => t / k,
                    None => return u128::MAX,
                };
            }
        }
        total
    }

    /// Every interleaving, in isolationtester's order.
    pub fn all(&self) -> Vec<Vec<Planned>> {
        let mut out = Vec::new();
        let mut next = vec![0; self.piles.len()];
        let mut cur = Vec::new();
        self.recurse(&mut next, &mut cur, &mut out);
        out
    }

    fn recurse(&self, next: &mut Vec<usize>, cur: &mut Vec<StepId>, out: &mut Vec<Vec<Planned>>) {
        let mut found = false;
        for i in 0..self.piles.len() {
            if next[i] < self.piles[i].len() {
                let group = &self.piles[i][next[i]];
                cur.extend(group);
                next[i] += 1;
                self.recurse(next, cur, out);
                next[i] -= 1;
                cur.truncate(cur.len() - group.len());
                found = true;
            }
        }
        if !found {
            out.push(self.finish(cur));
        }
    }

    fn finish(&self, order: &[StepId]) -> Vec<Planned> {
        order
            .iter()
            .chain(&self.tail)
            .map(|&id| Planned {
                id,
                blockers: Vec::new(),
            })
            .collect()
    }

    /// `n` distinct interleavings drawn at random from `seed` (all of them
    /// when there are no more than `n`), in isolationtester's order.
    pub fn sample(&self, n: usize, seed: u64) -> Vec<Vec<Planned>> {
        if self.count() <= n as u128 {
            return self.all();
        }
        let mut rng = SplitMix(seed);
        let mut seen = std::collections::BTreeSet::new();
        let total: usize = self.piles.iter().map(Vec::len).sum();
        while seen.len() < n {
            // A uniform interleaving: each position takes a session with
            // probability proportional to the steps it has left.
            let mut left: Vec<usize> = self.piles.iter().map(Vec::len).collect();
            let mut order = Vec::with_capacity(total);
            for remaining in (1..=total).rev() {
                let mut r = (rng.next() % remaining as u64) as usize;
                let s = left
                    .iter()
                    .position(|&l| {
                        if r < l {
                            true
                        } else {
                            r -= l;
                            false
                        }
                    })
                    .expect("a session with steps left");
                left[s] -= 1;
                order.push(s);
            }
            seen.insert(order);
        }
        seen.into_iter()
            .map(|sessions| {
                let mut next = vec![0; self.piles.len()];
                let order: Vec<StepId> = sessions
                    .into_iter()
                    .flat_map(|s| {
                        next[s] += 1;
                        self.piles[s][next[s] - 1].clone()
                    })
                    .collect();
                self.finish(&order)
            })
            .collect()
    }
}

/// `plan` with each step that only begins a transaction moved right before
/// its session's next step, as [`Interleave::of`] keeps them (the same run:
/// a BEGIN takes no snapshot).
pub fn glued(spec: &Spec, plan: &[Planned]) -> Vec<Planned> {
    let mut out = Vec::new();
    let mut pending: Vec<Planned> = Vec::new();
    for p in plan {
        if only_begins(&spec.step(p.id).sql) {
            pending.push(p.clone());
            continue;
        }
        let (mine, rest): (Vec<Planned>, Vec<Planned>) =
            pending.into_iter().partition(|b| b.id.session == p.id.session);
        pending = rest;
        out.extend(mine);
        out.push(p.clone());
    }
    out.extend(pending);
    out
}

/// Whether a step's SQL only begins a transaction block: BEGIN or START
/// TRANSACTION, with or without its modes, and nothing after it.
fn only_begins(sql: &str) -> bool {
    let statements: Vec<&str> = sql.split(';').map(str::trim).filter(|s| !s.is_empty()).collect();
    let [one] = statements[..] else { return false };
    let words: Vec<String> = one.split_whitespace().map(str::to_lowercase).collect();
    match words.first().map(String::as_str) {
        Some("begin") => true,
        Some("start") => words.get(1).is_some_and(|w| w == "transaction"),
        _ => false,
    }
}

/// The isolation level(s) every statement of the spec runs at, when the
/// spec names them itself: each session's statements (its setup, then its
/// steps, in the one order any interleaving keeps) run in transactions begun
/// with an explicit level (`BEGIN ISOLATION LEVEL ...`, `SET TRANSACTION`)
/// or under a level the session set (`SET default_transaction_isolation`,
/// `SET SESSION CHARACTERISTICS`). Then the level asked changes nothing,
/// and the levels are one set of runs. `None` when any statement would take
/// the default, or follows a `/*:level*/` parameter.
pub fn own_level(spec: &Spec) -> Option<String> {
    let mut levels = std::collections::BTreeSet::new();
    for session in spec.sessions.iter().filter(|s| !s.steps.is_empty()) {
        let mut sql: Vec<&str> = session.setup.as_deref().map(statements).unwrap_or_default();
        for step in &session.steps {
            sql.extend(statements(&step.sql));
        }
        let mut default: Option<String> = None;
        // Some(level): in a transaction at that level (None: its default).
        let mut open: Option<Option<String>> = None;
        for stmt in sql {
            if stmt.contains("/*:level*/") {
                return None;
            }
            let w = words(stmt, 12);
            let named = level_in(&w);
            match tx_effect(stmt) {
                TxEffect::Begin => open = Some(named),
                TxEffect::End => open = None,
                // The next transaction keeps the level of the one chained from.
                TxEffect::Chain => {}
                TxEffect::None => {
                    let is = |a: &[&str]| w.len() >= a.len() && w.iter().zip(a).all(|(x, y)| x == y);
                    if is(&["SET", "TRANSACTION"]) && open.is_some() {
                        open = Some(named);
                    } else if is(&["SET", "SESSION", "CHARACTERISTICS"])
                        || is(&["SET", "DEFAULT_TRANSACTION_ISOLATION"])
                    {
                        default = named.or_else(|| setting_level(stmt));
                    } else {
                        let at = match &open {
                            Some(Some(l)) => Some(l.clone()),
                            _ => default.clone(),
                        };
                        levels.insert(at?);
                    }
                }
            }
        }
    }
    (!levels.is_empty()).then(|| levels.into_iter().collect::<Vec<_>>().join(", "))
}

/// The level an `ISOLATION LEVEL x [y]` clause names, lower-cased.
fn level_in(words: &[String]) -> Option<String> {
    let at = words.windows(2).position(|w| w[0] == "ISOLATION" && w[1] == "LEVEL")?;
    let rest: Vec<&str> = words[at + 2..].iter().map(|w| w.trim_end_matches(',')).collect();
    let level = match rest.as_slice() {
        ["READ", "UNCOMMITTED", ..] => "read uncommitted",
        ["READ", "COMMITTED", ..] => "read committed",
        ["REPEATABLE", "READ", ..] => "repeatable read",
        ["SERIALIZABLE", ..] => "serializable",
        _ => return None,
    };
    Some(level.to_string())
}

/// The level `SET default_transaction_isolation = 'x'` (or `TO x`) sets.
fn setting_level(stmt: &str) -> Option<String> {
    let v = stmt.to_lowercase();
    ["read uncommitted", "read committed", "repeatable read", "serializable"]
        .into_iter()
        .find(|l| v.contains(l))
        .map(str::to_string)
}

/// A small, well-known generator (splitmix64): the same seed, the same sample.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// A permutation as a spec's `permutation` line takes it (names quoted
/// where the spec's grammar needs it, so the line can be pasted back).
pub fn line(spec: &Spec, plan: &[Planned]) -> String {
    let name = |id| crate::specfile::name(&spec.step(id).name);
    plan.iter()
        .map(|p| {
            let step = name(p.id);
            let marks: Vec<String> = p
                .blockers
                .iter()
                .map(|b| match b {
                    crate::specfile::Resolved::Once => "*".to_string(),
                    crate::specfile::Resolved::Step(id) => name(*id),
                    crate::specfile::Resolved::Notices(id, n) => format!("{} notices {n}", name(*id)),
                })
                .collect();
            if marks.is_empty() {
                step
            } else {
                format!("{step}({})", marks.join(", "))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether each session's steps run together, one session after another.
pub fn serial(plan: &[Planned]) -> bool {
    let mut done = std::collections::HashSet::new();
    let mut last = None;
    for p in plan {
        if last != Some(p.id.session) {
            if !done.insert(p.id.session) {
                return false;
            }
            last = Some(p.id.session);
        }
    }
    true
}

/// Whether a permutation may hand the next run on the same connections a
/// session with state of its own: a transaction still open at its end (the
/// session's setup, its steps in the permutation and its teardown begin one
/// and do not end it), or session state one of its steps or its teardown
/// sets: a session-level SET or RESET, `set_config`, PREPARE, LISTEN,
/// DISCARD, a temporary table, a session-level advisory lock. (A SET in the
/// session's setup is made again at the start of every run.) isolationtester
/// carries such state into its next permutation; lab's runs are spread over
/// workers in no fixed order, so the run after one of these gets fresh
/// connections, as the first run has.
pub fn leaves_state(spec: &Spec, plan: &[Planned]) -> bool {
    spec.sessions.iter().enumerate().any(|(si, s)| {
        // What runs after the session's setup: its steps here, its teardown.
        let after_setup: Vec<&str> = plan
            .iter()
            .filter(|p| p.id.session == si)
            .map(|p| spec.step(p.id).sql.as_str())
            .chain(s.teardown.as_deref())
            .collect();
        if after_setup.iter().flat_map(|sql| statements(sql)).any(session_state) {
            return true;
        }
        let mut open = false;
        for stmt in s.setup.as_deref().into_iter().chain(after_setup).flat_map(statements) {
            match tx_effect(stmt) {
                TxEffect::Begin | TxEffect::Chain => open = true,
                TxEffect::End => open = false,
                TxEffect::None => {}
            }
        }
        open
    })
}

/// Whether a statement leaves state on its session past its transaction.
fn session_state(stmt: &str) -> bool {
    if crate::sql_lexer::setting_effect(stmt) != crate::sql_lexer::SettingEffect::None {
        return true;
    }
    let w = words(stmt, 2);
    let w: Vec<&str> = w.iter().map(String::as_str).collect();
    if matches!(
        w.as_slice(),
        ["LISTEN" | "DISCARD", ..] | ["CREATE", "TEMP" | "TEMPORARY"]
    ) || (w.first() == Some(&"PREPARE") && w.get(1) != Some(&"TRANSACTION"))
    {
        return true;
    }
    let sql = stmt.to_ascii_lowercase();
    ["set_config", "pg_advisory_lock", "pg_try_advisory_lock"]
        .iter()
        .any(|f| sql.contains(f))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::specfile::parse;

    #[test]
    fn a_run_leaves_state_when_a_transaction_stays_open_or_a_session_setting_changes() {
        let leaves = |text: &str| {
            let s = spec(text);
            let plan = s.plan(&s.permutations[0]).unwrap();
            leaves_state(&s, &plan)
        };
        let two = |a: &str, b: &str, perm: &str| {
            format!("session a\n{a}\nsession b\nstep b1 {{ SELECT 1; }}\n{b}\npermutation {perm}\n")
        };
        // Begun and ended: clean; begun and left open: not.
        assert!(!leaves(&two("step a1 { BEGIN; }\nstep a2 { COMMIT; }", "", "a1 b1 a2")));
        assert!(leaves(&two("step a1 { BEGIN; }\nstep a2 { COMMIT; }", "", "a1 b1")));
        assert!(!leaves(&two("step a1 { BEGIN; SELECT 1; ROLLBACK; }", "", "a1 b1")));
        assert!(leaves(&two(
            "step a1 { BEGIN; }\nstep a2 { COMMIT AND CHAIN; }",
            "",
            "a1 a2 b1"
        )));
        assert!(!leaves(&two(
            "step a1 { BEGIN; }\nstep a2 { ROLLBACK TO s; }\nstep a3 { END; }",
            "",
            "a1 a2 a3 b1"
        )));
        // Ended by the session's teardown; begun by its setup.
        assert!(!leaves(&two("step a1 { BEGIN; }\nteardown { ROLLBACK; }", "", "a1 b1")));
        assert!(leaves(
            "session a\nsetup { BEGIN; }\nstep a1 { SELECT 1; }\npermutation a1\n"
        ));
        // Session settings: a step's SET stays; SET LOCAL and the setup's SET do not.
        assert!(leaves(&two("step a1 { SET lock_timeout = '1s'; }", "", "a1 b1")));
        assert!(!leaves(&two(
            "step a1 { BEGIN; SET LOCAL lock_timeout = '1s'; COMMIT; }",
            "",
            "a1 b1"
        )));
        assert!(!leaves(
            "session a\nsetup { SET deadlock_timeout = '2s'; }\nstep a1 { SELECT 1; }\npermutation a1\n"
        ));
        assert!(leaves(&two("step a1 { SELECT pg_advisory_lock(1); }", "", "a1 b1")));
        assert!(!leaves(&two(
            "step a1 { BEGIN; SELECT pg_advisory_xact_lock(1); COMMIT; }",
            "",
            "a1 b1"
        )));
        assert!(leaves(&two("step a1 { PREPARE q AS SELECT 1; }", "", "a1 b1")));
        assert!(leaves(&two(
            "step a1 { SELECT 1; }",
            "step b2 { SELECT set_config('x.y', '1', false); }",
            "a1 b1 b2"
        )));
        // A step not in the permutation leaves nothing.
        assert!(!leaves(&two(
            "step a1 { SELECT 1; }\nstep a2 { SET x.y = 1; }",
            "",
            "a1 b1"
        )));
    }

    fn spec(text: &str) -> Spec {
        parse(text).unwrap()
    }

    const THREE: &str = "session a\nstep a1 {SELECT 1;}\nstep a2 {SELECT 2;}\n\
                         session b\nstep b1 {SELECT 3;}\nstep b2 {SELECT 4;}\n\
                         session c\nstep c1 {SELECT 5;}\n";

    fn names(s: &Spec, plans: &[Vec<Planned>]) -> Vec<String> {
        plans.iter().map(|p| line(s, p)).collect()
    }

    #[test]
    fn the_whole_spec_is_what_isolationtester_generates_in_its_order() {
        let s = spec(THREE);
        let i = Interleave::whole(&s);
        assert_eq!(i.count(), 30);
        assert_eq!(names(&s, &i.all()), names(&s, &s.all_permutations()));
        assert_eq!(
            names(&s, &i.all()[..3]),
            ["a1 a2 b1 b2 c1", "a1 a2 b1 c1 b2", "a1 a2 c1 b1 b2"]
        );
    }

    #[test]
    fn counts_are_multinomial_and_saturate() {
        let i = |sizes: &[usize]| Interleave {
            piles: sizes
                .iter()
                .enumerate()
                .map(|(s, &n)| (0..n).map(|k| vec![StepId { session: s, step: k }]).collect())
                .collect(),
            tail: Vec::new(),
        };
        assert_eq!(i(&[3, 3]).count(), 20);
        // receipt-report: 4, 3 and 3 steps.
        assert_eq!(i(&[4, 3, 3]).count(), 4200);
        assert_eq!(i(&[3, 3, 4]).count(), 4200);
        assert_eq!(i(&[2, 2, 2, 2]).count(), 2520);
        assert_eq!(i(&[]).count(), 1);
        assert_eq!(i(&[60, 60, 60]).count(), u128::MAX);
    }

    #[test]
    fn a_listed_permutation_keeps_its_final_reads_last() {
        let s = spec(&format!("{THREE}permutation a1 b1 a2 b2 c1\n"));
        let i = Interleave::of(&s, &s.permutations[0]).unwrap();
        assert_eq!(i.count(), 6);
        assert_eq!(i.tail, vec![StepId { session: 2, step: 0 }]);
        let all = names(&s, &i.all());
        assert!(all.iter().all(|p| p.ends_with(" c1")), "{all:?}");
        assert!(all.contains(&"a1 a2 b1 b2 c1".to_string()));
        assert!(all.contains(&"a1 b1 a2 b2 c1".to_string()));
    }

    #[test]
    fn a_session_that_ran_earlier_is_no_final_read() {
        let s = spec(&format!("{THREE}permutation c1 a1 b1 a2 b2\n"));
        let i = Interleave::of(&s, &s.permutations[0]).unwrap();
        assert!(i.tail.is_empty());
        assert_eq!(i.count(), 30);
        // Two sessions only at the end: nothing left to interleave before them.
        let s = spec(&format!("{THREE}permutation a1 a2 b1 b2\n"));
        let i = Interleave::of(&s, &s.permutations[0]).unwrap();
        assert!(i.tail.is_empty(), "{i:?}");
        assert_eq!(i.count(), 6);
    }

    #[test]
    fn a_begin_stays_right_before_its_sessions_next_step() {
        let s = spec(
            "session a\nstep ab {BEGIN;}\nstep a1 {SELECT 1;}\nstep ac {COMMIT;}\n\
                      session b\nstep bb { begin isolation level serializable; }\nstep b1 {SELECT 2;}\n\
                      permutation ab bb a1 b1 ac\n",
        );
        let i = Interleave::of(&s, &s.permutations[0]).unwrap();
        assert_eq!(i.count(), 3);
        assert_eq!(
            names(&s, &i.all()),
            ["ab a1 ac bb b1", "ab a1 bb b1 ac", "bb b1 ab a1 ac"]
        );
        assert!(only_begins("START TRANSACTION READ ONLY;"));
        assert!(!only_begins("BEGIN; SELECT 1;"));
        assert!(!only_begins("SELECT 1"));
        let listed = s.plan(&s.permutations[0]).unwrap();
        assert_eq!(line(&s, &glued(&s, &listed)), "ab a1 bb b1 ac");
        // The whole spec (isolationtester's set) is not reduced.
        assert_eq!(Interleave::whole(&s).count(), 10);
    }

    #[test]
    fn a_spec_that_names_its_level_everywhere_has_its_own() {
        // PostgreSQL's SSI specs: each session begins SERIALIZABLE in its setup.
        let own = spec(
            "session s1\nsetup { BEGIN ISOLATION LEVEL SERIALIZABLE; }\nstep r1 {SELECT 1;}\nstep c1 {COMMIT;}\n\
                        session s2\nsetup { BEGIN ISOLATION LEVEL SERIALIZABLE, READ ONLY; }\nstep r2 {SELECT 2;}\nstep c2 {COMMIT;}\n",
        );
        assert_eq!(own_level(&own).as_deref(), Some("serializable"));
        let set = spec(
            "session s1\nsetup { SET default_transaction_isolation = 'repeatable read'; }\nstep r1 {SELECT 1;}\n\
                        session s2\nstep b2 {BEGIN; SET TRANSACTION ISOLATION LEVEL READ COMMITTED;}\nstep r2 {SELECT 2;}\nstep c2 {COMMIT;}\n",
        );
        assert_eq!(own_level(&set).as_deref(), Some("read committed, repeatable read"));
        // A statement after the COMMIT runs at the default: the level asked counts.
        let after =
            spec("session s1\nsetup { BEGIN ISOLATION LEVEL SERIALIZABLE; }\nstep c1 {COMMIT;}\nstep r1 {SELECT 1;}\n");
        assert_eq!(own_level(&after), None);
        // ...but after COMMIT AND CHAIN the next transaction keeps the level.
        let chained = spec(
            "session s1\nsetup { BEGIN ISOLATION LEVEL SERIALIZABLE; }\nstep c1 {COMMIT AND CHAIN;}\nstep r1 {SELECT 1;}\n",
        );
        assert_eq!(own_level(&chained).as_deref(), Some("serializable"));
        let plain = spec("session s1\nstep b1 {BEGIN;}\nstep r1 {SELECT 1;}\n");
        assert_eq!(own_level(&plain), None);
        let param = spec(
            "session s1\nsetup { SET default_transaction_isolation = /*:level*/'read committed'; }\nstep r1 {SELECT 1;}\n",
        );
        assert_eq!(own_level(&param), None);
    }

    #[test]
    fn only_the_listed_steps_are_interleaved() {
        let s = spec(&format!("{THREE}permutation a2 b1 c1\n"));
        let i = Interleave::of(&s, &s.permutations[0]).unwrap();
        assert_eq!(i.count(), 2);
        assert_eq!(names(&s, &i.all()), ["a2 b1 c1", "b1 a2 c1"]);
    }

    #[test]
    fn a_sample_is_distinct_ordered_and_the_same_for_a_seed() {
        let s = spec(THREE);
        let i = Interleave::whole(&s);
        let a = names(&s, &i.sample(10, 7));
        assert_eq!(a.len(), 10);
        let mut sorted = a.clone();
        sorted.dedup();
        assert_eq!(sorted.len(), 10);
        assert_eq!(a, names(&s, &i.sample(10, 7)));
        assert_ne!(a, names(&s, &i.sample(10, 8)));
        // In isolationtester's order: a subsequence of the full list.
        let all = names(&s, &i.all());
        let mut at = 0;
        for p in &a {
            at += all[at..].iter().position(|x| x == p).expect("in order");
        }
        assert_eq!(names(&s, &i.sample(100, 1)), all);
    }

    #[test]
    fn serial_permutations_run_one_session_after_another() {
        let s = spec(THREE);
        let all = s.all_permutations();
        let serial_ones: Vec<String> = all.iter().filter(|p| serial(p)).map(|p| line(&s, p)).collect();
        assert_eq!(serial_ones.len(), 6);
        assert!(serial_ones.contains(&"b1 b2 c1 a1 a2".to_string()));
    }

    #[test]
    fn a_permutation_line_keeps_its_blocker_marks() {
        let s = spec(&format!("{THREE}permutation a1 b1(a1) a2(*) b2 c1\n"));
        let plan = s.plan(&s.permutations[0]).unwrap();
        assert_eq!(line(&s, &plan), "a1 b1(a1) a2(*) b2 c1");
    }
}
