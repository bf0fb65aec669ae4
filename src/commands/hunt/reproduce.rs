//! A cycle the checker found, as an isolationtester spec that replays it:
//! the keys set up as the cycle's first reads saw them, one session per
//! transaction of the cycle, a step per operation (shrunk to those the
//! cycle's edges rest on, and each transaction's first, which takes its
//! snapshot), and one permutation: the order the server answered them, or
//! the order they were sent (a snapshot is taken when its first statement
//! starts; a write waits between the two), whichever replays the anomaly.
//! A predicate read is one step (`SELECT k, v FROM append WHERE k BETWEEN
//! ...`), kept whole when any of its keys is.
//! A replay's steps are read back as a history of their own and checked
//! again: "reproduced" means the checker finds the same anomaly in what
//! the replay did, not that the steps ran.
use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::check::{Anomaly, Class, Level, Name, Options, check};
use super::history::{Elem, History, Key, Op, Scan, Status, Txn};
use super::workload::{CREATE, append_sql, read_sql, scan_sql, scanned, write_sql};
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
    /// Their predicate reads, per transaction.
    scans: Vec<Box<[Scan]>>,
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

/// Which of an operation's times orders the permutation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// When the server answered it.
    Answered,
    /// When it was sent (its session's previous answer).
    Sent,
    /// The answers' order, moved where the history requires: a transaction
    /// that saw or overwrote another's element after that one's COMMIT; one
    /// that read a key without another's later element before that one's
    /// COMMIT (at READ COMMITTED for the statement itself, above it for the
    /// transaction's first statement, which takes its snapshot).
    Derived,
}

/// When op `i` of `t` was sent (`i` = the number of ops: its COMMIT).
fn sent(t: &Txn, i: usize) -> u64 {
    if i == 0 { t.start } else { answered(t, i - 1) }
}

/// Each cycle transaction's operations kept (with their positions in it):
/// all of them, or with `shrink` only those the cycle's edges rest on.
fn kept_ops(h: &History, a: &Anomaly, txns: &[usize], shrink: bool) -> Vec<Vec<(usize, Op)>> {
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
    txns.iter()
        .zip(&keep)
        .map(|(&t, k)| {
            let txn = &h.txns[t];
            let all = &txn.ops;
            // A predicate read whole, or not at all.
            let kept = |i: usize| k.contains(&i) || txn.scan_of(i).is_some_and(|s| s.ops().any(|j| k.contains(&j)));
            (0..all.len())
                .filter(|i| !shrink || kept(*i))
                .map(|i| (i, all[i].clone()))
                .collect()
        })
        .collect()
}

/// Each key as the cycle's reads first saw it: its order up to the first
/// element a cycle transaction appended, and no longer than any of their reads.
fn initial_lists(h: &History, txns: &[usize], ops: &[Vec<(usize, Op)>]) -> Vec<(Key, Vec<Elem>)> {
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
    keys.iter()
        .map(|(&k, &cut)| {
            let order = order_of(h, k);
            let written = order
                .iter()
                .position(|e| txns.iter().any(|t| h.txns[*t].ops.contains(&Op::Append(k, *e))))
                .unwrap_or(order.len());
            let n = written.min(cut).min(order.len());
            (k, order[..n].to_vec())
        })
        .collect()
}

/// The operations kept and the predicate reads, per transaction.
type Kept<'a> = (&'a [Vec<(usize, Op)>], &'a [Box<[Scan]>]);

/// A step (its name, its transaction's position, its operation; none: the COMMIT).
type StepOf = (String, usize, Option<usize>);

/// The steps, named after the history's transaction numbers (`session`),
/// and when each happened by `order` (time, transaction, step), in time order.
fn timed_steps(
    h: &History,
    txns: &[usize],
    ops: &[Vec<(usize, Op)>],
    order: Order,
    session: &dyn Fn(usize) -> String,
) -> (Vec<(u64, usize, String)>, Vec<StepOf>) {
    let mut steps_of = Vec::new();
    let mut events: Vec<(u64, usize, String)> = Vec::new();
    for (p, t) in txns.iter().enumerate() {
        let txn = &h.txns[*t];
        for (i, op) in &ops[p] {
            let scan = txn.scan_of(*i);
            // A predicate read's keys after its first are read by its step.
            if let Some(s) = scan
                && s.op as usize != *i
            {
                steps_of.push((format!("{}_p{}", session(p), s.op + 1), p, Some(*i)));
                continue;
            }
            let kind = match op {
                _ if scan.is_some() => "p",
                Op::Read(..) | Op::Get(..) => "r",
                Op::Append(..) | Op::Write(..) => "a",
            };
            let name = format!("{}_{kind}{}", session(p), i + 1);
            let at = match order {
                Order::Answered | Order::Derived => answered(txn, *i),
                Order::Sent => sent(txn, *i),
            };
            events.push((at, p, name.clone()));
            steps_of.push((name, p, Some(*i)));
        }
        let commit = format!("{}_c", session(p));
        let at = match order {
            Order::Answered | Order::Derived => txn.end.unwrap_or(u64::MAX),
            Order::Sent => sent(txn, txn.ops.len()),
        };
        events.push((at, p, commit.clone()));
        steps_of.push((commit, p, None));
    }
    events.sort_by_key(|(at, p, _)| (*at, *p));
    (events, steps_of)
}

/// The spec's text up to its permutation: what it replays and how, the
/// table with the keys' initial lists, a session per transaction (its
/// level, BEGIN, its operations, COMMIT) and the final read.
fn spec_text(
    about: &str,
    order: Order,
    level: Level,
    initial: &[(Key, Vec<Elem>)],
    (ops, scans): Kept,
    session: &dyn Fn(usize) -> String,
) -> String {
    let mut text = String::new();
    let _ = writeln!(text, "# {about}");
    let _ = writeln!(
        text,
        "# Replay: lab spec FILE, or isolationtester. Each session is one transaction of the cycle; the steps are its operations, in the order {}.",
        match order {
            Order::Answered => "the server answered them",
            Order::Sent => "they were sent",
            Order::Derived => "the history requires (ties: the order the server answered them)",
        }
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
    for (p, kept) in ops.iter().enumerate() {
        // The level as a two-way parameter: isolationtester runs the
        // literal, `lab explore --level` binds the one it explores. BEGIN is
        // a step of its own: in the setup block it would share one query
        // string with the SET, and a transaction begun there keeps the level
        // it started with (the default before the SET).
        let _ = write!(
            text,
            "\nsession {}\nsetup {{ SET default_transaction_isolation = /*:level*/'{}'; }}\nstep {}_b {{ BEGIN; }}\n",
            session(p),
            level.sql(),
            session(p)
        );
        for (i, op) in kept {
            let scan = Scan::at(&scans[p], *i);
            let (name, sql) = match op {
                _ if let Some(s) = scan => {
                    if s.op as usize != *i {
                        continue;
                    }
                    (format!("{}_p{}", session(p), i + 1), scan_sql(s.lo, s.hi))
                }
                Op::Read(k, _) | Op::Get(k, _) => (format!("{}_r{}", session(p), i + 1), read_sql(*k)),
                Op::Append(k, e) => (format!("{}_a{}", session(p), i + 1), append_sql(*k, *e)),
                Op::Write(k, e) => (format!("{}_a{}", session(p), i + 1), write_sql(*k, *e)),
            };
            let _ = writeln!(text, "step {name} {{ {sql} }}");
        }
        let _ = writeln!(text, "step {}_c {{ COMMIT; }}", session(p));
    }
    // The keys read once more at the end: the replay's history needs each key's final order.
    text.push_str("\nsession final\nstep final_read { SELECT k, v FROM append ORDER BY k; }\n");
    text
}

/// The reproducer of `a` (a cycle) found in `h` at `level`; `shrink` keeps
/// only the operations the cycle's edges rest on, `order` orders its steps.
pub fn build(h: &History, a: &Anomaly, level: Level, (shrink, order): (bool, Order), about: &str) -> Reproducer {
    let txns = a.distinct_txns();
    // Each transaction's BEGIN, operations and COMMIT, and the final read.
    // A predicate read is one step, whatever its keys.
    let steps = |t: &Txn| t.ops.len() - t.scans.iter().map(|s| s.ops().len() - 1).sum::<usize>();
    let unshrunk: usize = txns.iter().map(|t| steps(&h.txns[*t]) + 2).sum::<usize>() + 1;
    let ops = kept_ops(h, a, &txns, shrink);
    let initial = initial_lists(h, &txns, &ops);
    let session = |p: usize| format!("t{}", h.txns[txns[p]].index);
    let (mut events, steps_of) = timed_steps(h, &txns, &ops, order, &session);
    if order == Order::Derived
        && let Some(moved) = derived(h, &ops, &events, &steps_of, level)
    {
        events = moved;
    }
    let scans: Vec<Box<[Scan]>> = txns.iter().map(|t| h.txns[*t].scans.clone()).collect();
    let mut text = spec_text(about, order, level, &initial, (&ops, &scans), &session);
    // Each BEGIN right before its session's first step.
    let begins: Vec<String> = (0..txns.len()).map(|p| format!("{}_b", session(p))).collect();
    let mut line: Vec<&str> = Vec::new();
    let mut begun = vec![false; txns.len()];
    for (_, p, n) in &events {
        if !begun[*p] {
            begun[*p] = true;
            line.push(&begins[*p]);
        }
        line.push(n);
    }
    line.push(FINAL);
    let _ = writeln!(text, "\npermutation {}", line.join(" "));
    Reproducer {
        name: a.name,
        level,
        text,
        steps: line.len(),
        unshrunk,
        steps_of,
        sessions: (0..txns.len()).map(session).collect(),
        txns,
        ops,
        scans,
        initial,
    }
}

/// The events (time, transaction, step) reordered by what the history
/// requires between the cycle's transactions (see [`Order::Derived`]), the
/// answers' order breaking ties; None if the requirements contradict.
fn derived(
    h: &History,
    ops: &[Vec<(usize, Op)>],
    events: &[(u64, usize, String)],
    steps_of: &[(String, usize, Option<usize>)],
    level: Level,
) -> Option<Vec<(u64, usize, String)>> {
    let n = events.len();
    let index = |p: usize, op: Option<usize>| -> Option<usize> {
        let name = &steps_of.iter().find(|(_, q, o)| *q == p && *o == op)?.0;
        events.iter().position(|(_, _, e)| e == name)
    };
    // The statement whose snapshot decides what op `i` of `p` sees.
    let snap = |p: usize, i: usize| {
        let first = ops[p].first().map_or(i, |(j, _)| *j);
        index(p, Some(if level <= Level::ReadCommitted { i } else { first }))
    };
    let mut before: Vec<(usize, usize)> = Vec::new();
    // Each session's steps in order.
    for (p, mine) in ops.iter().enumerate() {
        let mut seq: Vec<usize> = mine.iter().filter_map(|(i, _)| index(p, Some(*i))).collect();
        seq.extend(index(p, None));
        // A predicate read's keys are one step.
        seq.dedup();
        before.extend(seq.windows(2).map(|w| (w[0], w[1])));
    }
    let mut orders: std::collections::HashMap<Key, Vec<Elem>> = Default::default();
    for (pa, a_ops) in ops.iter().enumerate() {
        for (pb, b_ops) in ops.iter().enumerate() {
            if pa == pb {
                continue;
            }
            let a_commit = index(pa, None)?;
            for (_, oa) in a_ops {
                let Op::Append(k, ea) = oa else { continue };
                let order = orders.entry(*k).or_insert_with(|| order_of(h, *k));
                let pos_a = order.iter().position(|e| e == ea);
                for (ib, ob) in b_ops {
                    match ob {
                        Op::Read(kb, Some(l)) if kb == k => {
                            if l.contains(ea) {
                                before.push((a_commit, snap(pb, *ib)?));
                            } else if pos_a.is_some_and(|pa| pa >= l.len()) {
                                before.push((snap(pb, *ib)?, a_commit));
                            }
                        }
                        Op::Append(kb, eb) if kb == k => {
                            let pos_b = order.iter().position(|e| e == eb);
                            if let (Some(x), Some(y)) = (pos_a, pos_b)
                                && x < y
                            {
                                let at = if level <= Level::ReadCommitted {
                                    index(pb, Some(*ib))?
                                } else {
                                    snap(pb, *ib)?
                                };
                                before.push((a_commit, at));
                            }
                        }
                        _ => {}
                    }
                }
            }
        }
    }
    // Kahn's algorithm, the earliest answer first among the steps free to go.
    let mut preds = vec![0usize; n];
    let mut next: Vec<Vec<usize>> = vec![Vec::new(); n];
    for &(a, b) in &before {
        preds[b] += 1;
        next[a].push(b);
    }
    let mut ready: std::collections::BinaryHeap<std::cmp::Reverse<(u64, usize, usize)>> = (0..n)
        .filter(|e| preds[*e] == 0)
        .map(|e| std::cmp::Reverse((events[e].0, events[e].1, e)))
        .collect();
    let mut out = Vec::with_capacity(n);
    while let Some(std::cmp::Reverse((_, _, e))) = ready.pop() {
        out.push(events[e].clone());
        for &m in &next[e] {
            preds[m] -= 1;
            if preds[m] == 0 {
                ready.push(std::cmp::Reverse((events[m].0, events[m].1, m)));
            }
        }
    }
    (out.len() == n).then_some(out)
}

/// What a replay did, as a history: a first transaction that appended the
/// setup's elements, then one per session, its reads as the server answered.
pub fn replayed(r: &Reproducer, obs: &Observation) -> History {
    let setup = (r.initial.iter())
        .flat_map(|(k, l)| l.iter().map(move |e| Op::Append(*k, *e)))
        .collect();
    let mut txns = vec![Txn {
        end: Some(0),
        ..Txn::new(0, 0, Status::Ok, 0, setup)
    }];
    for (p, ops) in r.ops.iter().enumerate() {
        let mut txn = Txn::new((p + 1) as u64, (p + 1) as u64, Status::Fail, u64::MAX, Vec::new());
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
                        txn.sqlstate = e.code.as_deref().map(Into::into);
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
                    match Scan::at(&r.scans[p], *i) {
                        // Its keys after the first: read by the step of the first.
                        Some(s) if s.op as usize != *i => continue,
                        Some(s) => {
                            txn.scans = [
                                txn.scans.as_ref(),
                                &[Scan {
                                    op: txn.ops.len() as u32,
                                    ..*s
                                }],
                            ]
                            .concat()
                            .into();
                            txn.ops.extend(replayed_scan(s, res));
                            continue;
                        }
                        None => {}
                    }
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
                        // A reproducer is built from a list-append history
                        // (an rw-register's lifted first): these are not in it.
                        Some(Op::Write(..) | Op::Get(..)) | None => {}
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
            end: Some(at),
            ..Txn::new(
                txns.len() as u64,
                txns.len() as u64,
                Status::Ok,
                run.sent.as_nanos() as u64,
                ops,
            )
        });
    }
    History {
        header: None,
        txns,
        ..History::default()
    }
}

/// The replay's outcome as a `# occurs-if:` line (what each read
/// returned, each COMMIT committed), put in the spec's header: `lab spec`
/// and `lab explore` then judge the anomaly in any run of it.
pub fn with_occurs_if(r: &mut Reproducer, obs: &Observation) {
    let mut conds: Vec<String> = Vec::new();
    for run in &obs.steps {
        let Ok(res) = &run.answer else { return };
        let is_read = run.name == FINAL
            || r.steps_of.iter().any(|(n, p, op)| {
                n == &run.name
                    && op.is_some_and(|i| matches!(r.ops[*p].iter().find(|(j, _)| *j == i), Some((_, Op::Read(..)))))
            });
        let is_commit = r.steps_of.iter().any(|(n, _, op)| n == &run.name && op.is_none());
        // A predicate read: which rows it returned, and that it returned no more.
        let is_scan = (r.steps_of.iter())
            .any(|(n, p, op)| n == &run.name && op.is_some_and(|i| r.scans[*p].iter().any(|s| s.op as usize == i)));
        if is_commit {
            conds.push(format!("{} ok", run.name));
        } else if is_read && let Some(set) = last_set(res) {
            let values: Vec<&str> = set.rows.iter().filter_map(|row| row.last()?.as_deref()).collect();
            if values.is_empty() || is_scan {
                conds.push(format!("{} rows = {}", run.name, values.len()));
            }
            for v in values {
                conds.push(format!("{} v = {v}", run.name));
            }
        }
    }
    let line = format!("# occurs-if: {}\n", conds.join(" and "));
    let at = r.text.find("\nsetup").map_or(0, |i| i + 1);
    r.text.insert_str(at, &line);
}

/// What a replayed predicate read returned, as its reads of each key.
fn replayed_scan(s: &Scan, res: &[crate::engine::answer::Res]) -> Vec<Op> {
    let Some(set) = last_set(res) else {
        // No rows came back: it says nothing of the keys.
        return (s.lo..=s.hi).map(|k| Op::Read(k, None)).collect();
    };
    let rows: Vec<(Key, Vec<Elem>)> = (set.rows.iter())
        .filter_map(|row| {
            let k = row.first().cloned().flatten()?.parse().ok()?;
            Some((k, parse_array(&row.get(1).cloned().flatten().unwrap_or_default())))
        })
        .collect();
    (s.lo..=s.hi)
        .zip(scanned(s, &rows))
        .map(|(k, l)| Op::Read(k, Some(l)))
        .collect()
}

/// `{1,2,3}` as elements.
fn parse_array(text: &str) -> Vec<Elem> {
    text.trim_matches(|c| c == '{' || c == '}')
        .split(',')
        .filter_map(|x| x.trim().parse().ok())
        .collect()
}

/// Is `found` the anomaly `wanted`, or one that implies it (Elle's implications)?
fn implies(found: Name, wanted: Name) -> bool {
    // A G2-item is a G2, but a replay of a phantom that showed only an
    // item write skew did not show the phantom.
    if wanted.class == Class::G2 && found.class == Class::G2Item {
        return false;
    }
    let wanted = super::models::elle_name(wanted);
    super::models::implied([super::models::elle_name(found).as_str()]).contains(wanted.as_str())
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
        // Shown, or shown as one that implies it (as Elle reads a cycle: a
        // G-single in the replay's component is a G2-item there too, and
        // the checker does not search that component for the G2-item again).
        Ok(c) if c.names().iter().any(|n| implies(*n, r.name)) => Ok(()),
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
    use crate::commands::hunt::check::Options;

    fn txn(index: u64, session: u64, start: u64, ops: Vec<Op>) -> Txn {
        let at = (0..ops.len() as u64).map(|i| start + 1 + i).collect();
        Txn {
            end: Some(start + 10),
            at,
            ..Txn::new(index, session, Status::Ok, start, ops)
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
            ..History::default()
        };
        let c = check(&h, Options::default()).unwrap();
        let a = c.anomalies.iter().find(|a| a.name.text() == "G2-item").unwrap();
        let r = build(&h, a, Level::RepeatableRead, (true, Order::Answered), "G2-item");
        // (No braces in SQL: isolationtester ends a block at the first '}'.)
        assert!(
            r.text
                .contains("INSERT INTO append (k, v) VALUES (1, ARRAY[1]::bigint[]), (2, ARRAY[2]::bigint[]);"),
            "{}",
            r.text
        );
        assert!(
            r.text
                .contains("session t11\nsetup { SET default_transaction_isolation = /*:level*/'repeatable read'; }\nstep t11_b { BEGIN; }"),
            "{}",
            r.text
        );
        // The read of key 5 is not what the cycle rests on: shrunk away.
        assert!(!r.text.contains("k = 5"), "{}", r.text);
        assert!(r.steps < r.unshrunk);
        let spec = crate::specfile::parse(&r.text).unwrap_or_else(|e| panic!("{e:?}\n{}", r.text));
        assert_eq!(spec.sessions.len(), 3, "two transactions and the final read");
        let perm: Vec<&str> = spec.permutations[0].steps.iter().map(|s| s.name.as_str()).collect();
        let pos = |n: &str| perm.iter().position(|x| *x == n).unwrap();
        assert!(pos("t11_r1") < pos("t12_r1"));
        assert!(pos("t12_r1") < pos("t11_a3"));
        assert!(pos("t11_c") < pos("t12_c"));
        let full = build(&h, a, Level::RepeatableRead, (false, Order::Sent), "G2-item");
        assert!(full.text.contains("k = 5"));
    }

    #[test]
    fn arrays_read_back() {
        assert_eq!(parse_array("{1,22,3}"), vec![1, 22, 3]);
        assert_eq!(parse_array("{}"), Vec::<Elem>::new());
    }

    #[test]
    fn a_replay_showing_a_stronger_cycle_shows_the_weaker() {
        use crate::commands::hunt::check::Class;
        let n = Name::of;
        assert!(implies(n(Class::GSingle), n(Class::G2Item)));
        assert!(implies(n(Class::GNonadjacent), n(Class::G2Item)));
        assert!(implies(n(Class::G0), n(Class::G1c)));
        assert!(implies(n(Class::G2Item), n(Class::G2Item)));
        assert!(!implies(n(Class::G2Item), n(Class::GSingle)));
        assert!(!implies(n(Class::G1c), n(Class::G0)));
    }
}
