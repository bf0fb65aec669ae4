//! A cycle the checker found, as an isolationtester spec that replays it:
//! the keys set up as the cycle's first reads saw them, one session per
//! transaction of the cycle, a step per operation (shrunk to those the
//! cycle's edges rest on, and each transaction's first, which takes its
//! snapshot), and one permutation in the order the server answered them.
//! A replay's steps are read back as a history of their own and checked
//! again: "reproduced" means the checker finds the same anomaly in what
//! the replay did, not that the steps ran.
use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::check::{Anomaly, Level, Name, Options, check};
use super::history::{Elem, History, Key, Op, Status, Txn};
use super::workload::{CREATE, append_sql, read_sql};
use crate::engine::Observation;
use crate::engine::answer::last_set;

/// The step that reads every key after the cycle's transactions ended.
const FINAL: &str = "final_read";

/// One reproducer: the spec's text and how its steps map to the history.
#[derive(Debug, Clone)]
pub struct Reproducer {
    pub name: Name,
    pub level: Level,
    pub text: String,
    /// Steps in the permutation, and in the cycle's transactions before shrinking.
    pub steps: usize,
    pub unshrunk: usize,
    /// Step name -> (position of its transaction in `txns`, its op; None: the COMMIT).
    steps_of: Vec<(String, usize, Option<usize>)>,
    /// The transactions (history indexes), in the cycle's order.
    pub txns: Vec<usize>,
    /// Their sessions' names in the spec.
    pub sessions: Vec<String>,
    /// The operations kept, per transaction.
    ops: Vec<Vec<(usize, Op)>>,
    initial: Vec<(Key, Vec<Elem>)>,
}

/// Each key's version order: its longest committed read.
fn order_of(h: &History, key: Key) -> Vec<Elem> {
    let mut best: &[Elem] = &[];
    for t in h.txns.iter().filter(|t| t.status == Status::Ok) {
        for op in &t.ops {
            if let Op::Read(k, Some(l)) = op
                && *k == key
                && l.len() > best.len()
            {
                best = l;
            }
        }
    }
    best.to_vec()
}

/// When the server answered op `i` of `t` (evenly between its start and end where the history does not say).
fn answered(t: &Txn, i: usize) -> u64 {
    if let Some(at) = t.at.get(i) {
        return *at;
    }
    let end = t.end.unwrap_or(t.start + 1);
    t.start + (end - t.start) * (i as u64 + 1) / (t.ops.len() as u64 + 1)
}

/// The reproducer of `a` (a cycle) found in `h` at `level`; `shrink` keeps
/// only the operations the cycle's edges rest on.
pub fn build(h: &History, a: &Anomaly, level: Level, shrink: bool, about: &str) -> Reproducer {
    let mut txns: Vec<usize> = Vec::new();
    for t in &a.txns {
        if !txns.contains(t) {
            txns.push(*t);
        }
    }
    // Each transaction's operations and its COMMIT, and the final read.
    let unshrunk: usize = txns.iter().map(|t| h.txns[*t].ops.len() + 1).sum::<usize>() + 1;
    // The operations kept, per transaction.
    let mut keep: Vec<Vec<usize>> = txns.iter().map(|_| vec![0]).collect();
    for link in &a.cycle {
        if let Some((from_op, to_op)) = link.why.ops() {
            for (t, op) in [(link.from, from_op), (link.to, to_op)] {
                let p = txns
                    .iter()
                    .position(|x| *x == t)
                    .expect("a cycle's edges join its transactions");
                keep[p].push(op);
            }
        }
    }
    let ops: Vec<Vec<(usize, Op)>> = txns
        .iter()
        .zip(&keep)
        .map(|(&t, k)| {
            let all = &h.txns[t].ops;
            (0..all.len())
                .filter(|i| !shrink || k.contains(i))
                .map(|i| (i, all[i].clone()))
                .collect()
        })
        .collect();
    // Each key as the cycle's reads first saw it: its order up to the first
    // element a cycle transaction appended, and no longer than any of their reads.
    let mut keys: BTreeMap<Key, usize> = BTreeMap::new();
    for (p, t) in txns.iter().enumerate() {
        for (_, op) in &ops[p] {
            keys.entry(op.key()).or_insert(usize::MAX);
        }
        for op in &h.txns[*t].ops {
            if let Op::Read(k, Some(l)) = op
                && let Some(cut) = keys.get_mut(k)
            {
                *cut = (*cut).min(l.len());
            }
        }
    }
    let initial: Vec<(Key, Vec<Elem>)> = keys
        .iter()
        .map(|(&k, &cut)| {
            let order = order_of(h, k);
            let written = order
                .iter()
                .position(|e| txns.iter().any(|t| h.txns[*t].ops.contains(&Op::Append(k, *e))))
                .unwrap_or(order.len());
            let n = written.min(cut).min(order.len());
            (k, order[..n].to_vec())
        })
        .collect();
    // The steps, named after the history's transaction numbers.
    let session = |p: usize| format!("t{}", h.txns[txns[p]].index);
    let mut steps_of = Vec::new();
    let mut events: Vec<(u64, usize, String)> = Vec::new();
    for (p, t) in txns.iter().enumerate() {
        let txn = &h.txns[*t];
        for (i, op) in &ops[p] {
            let name = format!(
                "{}_{}{}",
                session(p),
                if matches!(op, Op::Read(..)) { "r" } else { "a" },
                i + 1
            );
            events.push((answered(txn, *i), p, name.clone()));
            steps_of.push((name, p, Some(*i)));
        }
        let commit = format!("{}_c", session(p));
        events.push((txn.end.unwrap_or(u64::MAX), p, commit.clone()));
        steps_of.push((commit, p, None));
    }
    events.sort_by_key(|(at, p, _)| (*at, *p));
    let mut text = String::new();
    let _ = writeln!(text, "# {about}");
    let _ = writeln!(
        text,
        "# Replay: lab spec FILE, or isolationtester. Each session is one transaction of the cycle; the steps are its operations, in the order the server answered them."
    );
    text.push_str("\nsetup\n{\n  ");
    text.push_str(CREATE);
    text.push_str(";\n");
    let rows: Vec<String> = initial
        .iter()
        .filter(|(_, l)| !l.is_empty())
        .map(|(k, l)| {
            format!(
                "({k}, ARRAY[{}]::bigint[])",
                l.iter().map(|e| e.to_string()).collect::<Vec<_>>().join(",")
            )
        })
        .collect();
    if !rows.is_empty() {
        let _ = writeln!(text, "  INSERT INTO append (k, v) VALUES {};", rows.join(", "));
    }
    text.push_str("}\n\nteardown\n{\n  DROP TABLE append;\n}\n");
    for (p, t) in txns.iter().enumerate() {
        let _ = write!(
            text,
            "\nsession {}\nsetup {{ BEGIN ISOLATION LEVEL {}; }}\n",
            session(p),
            level.sql().to_uppercase()
        );
        for (i, op) in &ops[p] {
            let (name, sql) = match op {
                Op::Read(k, _) => (format!("{}_r{}", session(p), i + 1), read_sql(*k)),
                Op::Append(k, e) => (format!("{}_a{}", session(p), i + 1), append_sql(*k, *e)),
            };
            let _ = writeln!(text, "step {name} {{ {sql} }}");
        }
        let _ = writeln!(text, "step {}_c {{ COMMIT; }}", session(p));
        let _ = t;
    }
    // The keys read once more at the end: the replay's history needs each key's final order.
    text.push_str("\nsession final\nstep final_read { SELECT k, v FROM append ORDER BY k; }\n");
    let mut line: Vec<&str> = events.iter().map(|(_, _, n)| n.as_str()).collect();
    line.push(FINAL);
    let _ = writeln!(text, "\npermutation {}", line.join(" "));
    Reproducer {
        name: a.name,
        level,
        text,
        steps: events.len() + 1,
        unshrunk,
        steps_of,
        sessions: (0..txns.len()).map(session).collect(),
        txns,
        ops,
        initial,
    }
}

/// What a replay did, as a history: a first transaction that appended the
/// setup's elements, then one per session, its reads as the server answered.
pub fn replayed(r: &Reproducer, obs: &Observation) -> History {
    let mut txns = vec![Txn {
        index: 0,
        session: 0,
        status: Status::Ok,
        sqlstate: None,
        start: 0,
        end: Some(0),
        ops: r
            .initial
            .iter()
            .flat_map(|(k, l)| l.iter().map(move |e| Op::Append(*k, *e)))
            .collect(),
        at: Vec::new(),
        line: 0,
    }];
    for (p, ops) in r.ops.iter().enumerate() {
        let mut txn = Txn {
            index: (p + 1) as u64,
            session: (p + 1) as u64,
            status: Status::Fail,
            sqlstate: None,
            start: u64::MAX,
            end: None,
            ops: Vec::new(),
            at: Vec::new(),
            line: 0,
        };
        let mut failed = false;
        for (name, q, op) in &r.steps_of {
            if *q != p {
                continue;
            }
            let Some(run) = obs.steps.iter().find(|s| &s.name == name) else {
                failed = true;
                continue;
            };
            txn.start = txn.start.min(run.sent.as_nanos() as u64);
            match (op, &run.answer) {
                (_, Err(e)) => {
                    failed = true;
                    if txn.sqlstate.is_none() {
                        txn.sqlstate = e.code.clone();
                    }
                }
                (None, Ok(res)) => {
                    txn.end = Some(run.done.as_nanos() as u64);
                    let committed = res.last().is_some_and(|x| x.tag == "COMMIT");
                    if committed && !failed {
                        txn.status = Status::Ok;
                    }
                }
                (Some(i), Ok(res)) => {
                    let original = ops.iter().find(|(j, _)| j == i).map(|(_, o)| o.clone());
                    match original {
                        Some(Op::Read(k, _)) => {
                            let list = last_set(res).map(|set| {
                                set.rows
                                    .first()
                                    .and_then(|row| row.first().cloned().flatten())
                                    .map(|v| parse_array(&v))
                                    .unwrap_or_default()
                            });
                            txn.ops.push(Op::Read(k, list));
                        }
                        Some(a @ Op::Append(..)) => txn.ops.push(a),
                        None => {}
                    }
                }
            }
        }
        if txn.end.is_none() && txn.status == Status::Fail {
            txn.end = Some(txn.start);
        }
        txns.push(txn);
    }
    // The final read: every key's order as the replay left it.
    if let Some(run) = obs.steps.iter().find(|s| s.name == FINAL)
        && let Ok(res) = &run.answer
        && let Some(set) = last_set(res)
    {
        let at = run.done.as_nanos() as u64;
        let mut ops: Vec<Op> = r.initial.iter().map(|(k, _)| Op::Read(*k, Some(Vec::new()))).collect();
        for row in &set.rows {
            let k: Option<Key> = row.first().cloned().flatten().and_then(|k| k.parse().ok());
            let v = row
                .get(1)
                .cloned()
                .flatten()
                .map(|v| parse_array(&v))
                .unwrap_or_default();
            match (k, ops.iter_mut().find(|o| Some(o.key()) == k)) {
                (_, Some(Op::Read(_, l))) => *l = Some(v),
                (Some(k), _) => ops.push(Op::Read(k, Some(v))),
                _ => {}
            }
        }
        txns.push(Txn {
            index: txns.len() as u64,
            session: txns.len() as u64,
            status: Status::Ok,
            sqlstate: None,
            start: run.sent.as_nanos() as u64,
            end: Some(at),
            ops,
            at: Vec::new(),
            line: 0,
        });
    }
    History { header: None, txns }
}

/// `{1,2,3}` as elements.
fn parse_array(text: &str) -> Vec<Elem> {
    text.trim_matches(|c| c == '{' || c == '}')
        .split(',')
        .filter_map(|x| x.trim().parse().ok())
        .collect()
}

/// Did the replay show the anomaly? None if it did, else what it showed instead.
pub fn shows(r: &Reproducer, obs: &Observation, opts: Options) -> Result<(), String> {
    let h = replayed(r, obs);
    let aborted: Vec<String> = h
        .txns
        .iter()
        .filter(|t| t.status != Status::Ok)
        .map(|t| {
            let name = r.sessions.get(t.index as usize - 1).map_or("?", String::as_str);
            format!("{name} {}", t.sqlstate.as_deref().unwrap_or("rolled back"))
        })
        .collect();
    match check(&h, opts) {
        Ok(c) if c.names().contains(&r.name) => Ok(()),
        Ok(c) => {
            let found: Vec<String> = c.names().iter().map(Name::text).collect();
            Err(match (found.is_empty(), aborted.is_empty()) {
                (true, true) => "no anomaly".to_string(),
                (true, false) => format!("aborted: {}", aborted.join(", ")),
                (false, _) => found.join(", "),
            })
        }
        Err(d) => Err(d.what),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hunt::check::Options;

    fn txn(index: u64, session: u64, start: u64, ops: Vec<Op>) -> Txn {
        let at = (0..ops.len() as u64).map(|i| start + 1 + i).collect();
        Txn {
            index,
            session,
            status: Status::Ok,
            sqlstate: None,
            start,
            end: Some(start + 10),
            ops,
            at,
            line: 0,
        }
    }

    #[test]
    fn a_write_skew_becomes_a_spec_with_its_state_and_order() {
        // 1 and 2 each read what the other appends, interleaved; 3 reads after.
        let h = History {
            header: None,
            txns: vec![
                txn(10, 1, 0, vec![Op::Append(1, 1), Op::Append(2, 2)]),
                txn(
                    11,
                    1,
                    20,
                    vec![Op::Read(1, Some(vec![1])), Op::Read(5, Some(vec![])), Op::Append(2, 3)],
                ),
                txn(12, 2, 21, vec![Op::Read(2, Some(vec![2])), Op::Append(1, 4)]),
                txn(
                    13,
                    1,
                    40,
                    vec![Op::Read(1, Some(vec![1, 4])), Op::Read(2, Some(vec![2, 3]))],
                ),
            ],
        };
        let c = check(&h, Options::default()).unwrap();
        let a = c.anomalies.iter().find(|a| a.name.text() == "G2-item").unwrap();
        let r = build(&h, a, Level::RepeatableRead, true, "G2-item");
        // (No braces in SQL: isolationtester ends a block at the first '}'.)
        assert!(
            r.text
                .contains("INSERT INTO append (k, v) VALUES (1, ARRAY[1]::bigint[]), (2, ARRAY[2]::bigint[]);"),
            "{}",
            r.text
        );
        assert!(
            r.text
                .contains("session t11\nsetup { BEGIN ISOLATION LEVEL REPEATABLE READ; }"),
            "{}",
            r.text
        );
        // The read of key 5 is not what the cycle rests on: shrunk away.
        assert!(!r.text.contains("k = 5"), "{}", r.text);
        assert!(r.steps < r.unshrunk);
        let spec = crate::spec::parse(&r.text).unwrap_or_else(|e| panic!("{e:?}\n{}", r.text));
        assert_eq!(spec.sessions.len(), 3, "two transactions and the final read");
        let perm: Vec<&str> = spec.permutations[0].steps.iter().map(|s| s.name.as_str()).collect();
        let pos = |n: &str| perm.iter().position(|x| *x == n).unwrap();
        assert!(pos("t11_r1") < pos("t12_r1"));
        assert!(pos("t12_r1") < pos("t11_a3"));
        assert!(pos("t11_c") < pos("t12_c"));
        let full = build(&h, a, Level::RepeatableRead, false, "G2-item");
        assert!(full.text.contains("k = 5"));
    }

    #[test]
    fn arrays_read_back() {
        assert_eq!(parse_array("{1,22,3}"), vec![1, 22, 3]);
        assert_eq!(parse_array("{}"), Vec::<Elem>::new());
    }
}
