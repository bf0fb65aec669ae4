//! rw-registers (`--workload rw-register`, and Jepsen's rw-register
//! histories): each key holds one value, written whole, each value written
//! to a key once. A read says which write it saw, but not which versions
//! came before it: the version order has to come from elsewhere. lab takes
//! it key by key from
//! 1. the server, where the history has it: the order PostgreSQL committed
//!    the key's writers in (`pg_xact_commit_timestamp`, a history's
//!    `committed_at`), as Emme takes version orders from the database. A
//!    write of a row waits for the row's previous writer to end, so on one
//!    PostgreSQL primary a row's versions come in its writers' commit order;
//! 2. the history itself, as Elle infers it: nil comes first, a transaction
//!    that read a value and then wrote the key wrote after it, and one
//!    transaction's writes of a key come in the order it made them.
//! 3. where the user vouches for each key (`--sequential-keys`,
//!    `--linearizable-keys`, as Elle's options of those names): the order
//!    each session, or real time, saw the key's versions in (see
//!    [`super::keys`]).
//!
//! Where these give a key one total order, its reads are lifted to
//! list-append reads of that order's prefix (a read of v is a read of every
//! version up to v) and the list-append checker does the rest. A key they
//! leave undecided is counted and named as such: its writes still follow
//! nil, its reads of a value give no edge. Orders that contradict each
//! other (a cycle) are Elle's cyclic-versions.
pub use super::anomaly::VersionSources as Sources;
use super::anomaly::{Anomaly, Class, IntMap, Name, Options, OrderFrom, PairFrom, ReadAt, Why};
use super::graph::{IRW, RW, WR, WW};
use super::history::{Damage, Elem, History, Key, Op, Status, Txn};
use super::keys::{self, Assumed};

/// A key's version order, and what gave it: the server's commit order,
/// the history alone, or the history with what `--sequential-keys` or
/// `--linearizable-keys` assume of each key.
#[derive(Debug, Clone, PartialEq)]
pub struct Given {
    pub order: Vec<Elem>,
    pub from: OrderFrom,
}

/// An rw-register history lifted to list-append.
pub struct Lifted {
    pub txns: Vec<Txn>,
    pub orders: IntMap<Key, Given>,
    pub sources: Sources,
    /// What the lift itself saw: reads of aborted writes (G1a), cyclic versions.
    pub found: Vec<Anomaly>,
    /// The edges of keys with no one order: wr from the reads of a value,
    /// and ww and rw from what orders some of the key's versions.
    pub edges: Vec<Edge>,
    /// What orders some versions of each key with no one order.
    pub partial: IntMap<Key, Vec<Pair>>,
    /// Which transactions committed: ok, and an unknown outcome a
    /// committed read saw or whose commit the server recorded (which
    /// stays an unknown outcome: it was never acknowledged).
    pub committed: Vec<bool>,
}

/// Where a value was written: (transaction, operation).
type Writers = IntMap<(Key, Elem), (u32, u32)>;

/// A dependency edge: (from, to, kind).
type Edge = (u32, u32, u8);

/// The history's rw-register operations as list-append's, checked first:
/// no list-append operation or predicate read among them, each value
/// written to a key once, every committed read of a value nobody wrote.
/// `opts`: what may be assumed of each key.
pub fn lift(h: &History, opts: &Options) -> Result<Lifted, Damage> {
    let txns = &h.txns;
    let writers = writers(txns)?;
    let committed = committed(txns, &writers);
    let mut found = Vec::new();
    let assumed = [
        opts.sequential_keys
            .then(|| (keys::by_sessions(txns), OrderFrom::SequentialKeys)),
        opts.linearizable_keys
            .then(|| (keys::by_realtime(txns), OrderFrom::LinearizableKeys)),
    ];
    let assumed: Vec<_> = assumed.into_iter().flatten().collect();
    let (orders, mut sources, partial) = orders(txns, &writers, &committed, &assumed, &mut found);
    sources.assumed = (opts.sequential_keys, opts.linearizable_keys);
    let edges = partial_edges(txns, &writers, &committed, &partial);
    undecided_lost_updates(txns, &orders, &mut found);
    let known = Known {
        txns,
        writers: &writers,
        committed: &committed,
        orders: &orders,
    };
    let lifted = txns
        .iter()
        .enumerate()
        .map(|(t, txn)| {
            let ops = (txn.ops.iter().enumerate())
                .map(|(i, op)| known.lift((t, i), txn, op, &mut found))
                .collect();
            // Its lifted operations; everything else as it was (where it
            // ran, when each operation was answered, how it ended: the
            // checker and the reproducers read them).
            txn.with_ops(ops)
        })
        .collect();
    Ok(Lifted {
        txns: lifted,
        orders,
        sources,
        found,
        edges,
        partial,
        committed,
    })
}

/// What the lift goes by: who wrote what, who committed, the orders decided.
struct Known<'a> {
    txns: &'a [Txn],
    writers: &'a Writers,
    committed: &'a [bool],
    orders: &'a IntMap<Key, Given>,
}

impl Known<'_> {
    /// Operation `i` of transaction `t` as list-append's (a read of a write
    /// that did not commit noted in `found`, as G1a).
    fn lift(&self, (t, i): (usize, usize), txn: &Txn, op: &Op, found: &mut Vec<Anomaly>) -> Op {
        match *op {
            Op::Write(k, v) | Op::Append(k, v) => Op::Append(k, v),
            // What a transaction that did not commit read says nothing.
            Op::Get(k, _) | Op::Read(k, _) if txn.status != Status::Ok => Op::Read(k, None),
            // nil: the key's first version, before any write.
            Op::Get(k, None) | Op::Read(k, _) => Op::Read(k, Some(Vec::new())),
            Op::Get(k, Some(v)) => {
                let (w, op) = self.writers[&(k, v)];
                let seen = |class| Anomaly {
                    name: Name::of(class),
                    txns: vec![w as usize, t],
                    cycle: Vec::new(),
                    read: Some(ReadAt {
                        txn: t,
                        op: i,
                        key: k,
                        elem: Some(v),
                        writer: Some(w as usize),
                        other: None,
                    }),
                };
                if !self.committed[w as usize] {
                    found.push(seen(Class::G1a));
                    return Op::Read(k, None);
                }
                let Some(g) = self.orders.get(&k) else {
                    // No one order to lift the read to: an intermediate
                    // version read (G1b) is seen here, not by the checker.
                    let later = &self.txns[w as usize].ops[op as usize + 1..];
                    if w as usize != t && later.iter().any(|o| matches!(*o, Op::Write(k2, _) if k2 == k)) {
                        found.push(seen(Class::G1b));
                    }
                    return Op::Read(k, None);
                };
                let prefix = g.order.iter().position(|e| *e == v).map(|p| g.order[..=p].to_vec());
                Op::Read(k, prefix)
            }
        }
    }
}

/// Lost updates on keys whose version order is not decided (on the
/// others the checker finds them in the lifted reads, which say the same):
/// committed transactions that read one value of a key, before writing
/// it, and then wrote it. No order is needed: both wrote over one version.
fn undecided_lost_updates(txns: &[Txn], orders: &IntMap<Key, Given>, found: &mut Vec<Anomaly>) {
    // (key, value read, transaction, the read's op)
    let mut cases: Vec<(Key, Elem, u32, u32)> = Vec::new();
    for (t, txn) in txns.iter().enumerate().filter(|(_, x)| x.status == Status::Ok) {
        // Per key: its first operation, if a read of a value (op, value), and whether written since.
        type First = (Key, Option<(usize, Elem)>, bool);
        let mut first: Vec<First> = Vec::new();
        for (i, op) in txn.ops.iter().enumerate() {
            let k = op.key();
            match (op, first.iter().position(|f| f.0 == k)) {
                (Op::Get(_, Some(v)), None) if !orders.contains_key(&k) => first.push((k, Some((i, *v)), false)),
                (_, None) => first.push((k, None, false)),
                (Op::Write(..), Some(p)) if !first[p].2 => {
                    first[p].2 = true;
                    if let Some((r, v)) = first[p].1 {
                        cases.push((k, v, t as u32, r as u32));
                    }
                }
                _ => {}
            }
        }
    }
    cases.sort_unstable();
    for same in cases.chunk_by(|a, b| (a.0, a.1) == (b.0, b.1)).filter(|g| g.len() > 1) {
        let (k, v, t, op) = same[0];
        found.push(Anomaly {
            name: Name::of(Class::LostUpdate),
            txns: same.iter().map(|c| c.2 as usize).collect(),
            cycle: Vec::new(),
            read: Some(ReadAt {
                txn: t as usize,
                op: op as usize,
                key: k,
                elem: Some(v),
                writer: None,
                other: Some((same[1].2 as usize, same[1].3 as usize)),
            }),
        });
    }
}

/// Who wrote each (key, value). Damage: a list-append operation or a
/// predicate read among them, a value written to a key twice, a committed
/// read of a value nobody wrote to that key.
fn writers(txns: &[Txn]) -> Result<Writers, Damage> {
    let mut writers = Writers::default();
    let damage = |txn: &Txn, what: String| Damage { line: txn.line, what };
    for (t, txn) in txns.iter().enumerate() {
        if !txn.scans.is_empty() {
            return Err(damage(txn, mixed("a predicate read")));
        }
        if let Some(at) = txn.committed_at.as_deref().filter(|at| !utc_micros(at)) {
            return Err(damage(
                txn,
                format!(
                    "committed_at {at:?} is not a UTC time as lab writes it (YYYY-MM-DD HH:MM:SS.ffffff): an rw-register history's version orders compare them"
                ),
            ));
        }
        for (i, op) in txn.ops.iter().enumerate() {
            match op {
                Op::Append(..) => return Err(damage(txn, mixed("an append"))),
                Op::Read(_, Some(l)) if !l.is_empty() => return Err(damage(txn, mixed("a read of a list"))),
                Op::Write(k, v) => {
                    if let Some((before, _)) = writers.insert((*k, *v), (t as u32, i as u32)) {
                        return Err(damage(
                            txn,
                            format!(
                                "the value {v} is written to key {k} twice (also by the transaction on line {}): an rw-register history needs each key's written values unique",
                                txns[before as usize].line
                            ),
                        ));
                    }
                }
                _ => {}
            }
        }
    }
    for txn in txns.iter().filter(|t| t.status == Status::Ok) {
        for op in &txn.ops {
            if let Op::Get(k, Some(v)) = op
                && !writers.contains_key(&(*k, *v))
            {
                return Err(damage(
                    txn,
                    format!(
                        "a committed read of key {k} returned {v}, a value no transaction of the history wrote to it"
                    ),
                ));
            }
        }
    }
    Ok(writers)
}

/// `2026-12-07 20:22:34.431471`: the form lab reads commit timestamps in
/// (UTC, microseconds), whose text order is their time order.
fn utc_micros(at: &str) -> bool {
    let b = at.as_bytes();
    b.len() == 26
        && b.iter().enumerate().all(|(i, c)| match i {
            4 | 7 => *c == b'-',
            10 => *c == b' ',
            13 | 16 => *c == b':',
            19 => *c == b'.',
            _ => c.is_ascii_digit(),
        })
}

fn mixed(what: &str) -> String {
    format!(
        "{what} in an rw-register history: a history holds one workload (list-append's append and list reads, or rw-register's w and r of values)"
    )
}

/// Which transactions committed: ok, and an unknown outcome whose value a
/// committed read saw or whose commit the server recorded (a commit
/// timestamp: lab read it after the run).
fn committed(txns: &[Txn], writers: &Writers) -> Vec<bool> {
    let mut committed: Vec<bool> = (txns.iter())
        .map(|t| t.status == Status::Ok || (t.status == Status::Info && t.committed_at.is_some()))
        .collect();
    for txn in txns.iter().filter(|t| t.status == Status::Ok) {
        for op in &txn.ops {
            if let Op::Get(k, Some(v)) = op {
                let (w, _) = writers[&(*k, *v)];
                if txns[w as usize].status == Status::Info {
                    committed[w as usize] = true;
                }
            }
        }
    }
    committed
}

/// One key's versions: the committed values written to it, what orders
/// them, and whether the server's commit order was had for every writer.
#[derive(Default)]
struct KeyVersions<'a> {
    values: Vec<Elem>,
    before: Vec<(Elem, Elem)>,
    /// (committed_at, the writer's first value, its last value) per writer.
    commits: Vec<(&'a str, Elem, Elem)>,
    unknown_commit: bool,
}

/// Each key's version order where one is decided, and where each came
/// from; `assumed`: what the order operations ran in says of each key,
/// where the user vouches for it.
fn orders(
    txns: &[Txn],
    writers: &Writers,
    committed: &[bool],
    assumed: &[(IntMap<Key, Assumed>, OrderFrom)],
    found: &mut Vec<Anomaly>,
) -> (IntMap<Key, Given>, Sources, IntMap<Key, Vec<Pair>>) {
    let mut keys: IntMap<Key, KeyVersions> = IntMap::default();
    for (t, txn) in txns.iter().enumerate().filter(|(t, _)| committed[*t]) {
        // Per key this transaction wrote: (its last read before writing, its first and last write).
        let mut mine: Vec<(Key, Option<Elem>, Elem, Elem)> = Vec::new();
        let mut read: IntMap<Key, Elem> = IntMap::default();
        for op in &txn.ops {
            match *op {
                Op::Get(k, Some(v)) if !mine.iter().any(|m| m.0 == k) => {
                    read.insert(k, v);
                }
                Op::Write(k, v) => match mine.iter_mut().find(|m| m.0 == k) {
                    Some(m) => {
                        keys.entry(k).or_default().before.push((m.3, v));
                        m.3 = v;
                    }
                    None => mine.push((k, read.get(&k).copied(), v, v)),
                },
                _ => {}
            }
        }
        for op in &txn.ops {
            if let Op::Write(k, v) = op {
                keys.entry(*k).or_default().values.push(*v);
            }
        }
        for (k, seen, first, last) in mine {
            let kv = keys.entry(k).or_default();
            // A read of its own earlier value aside, what it read came before what it wrote.
            if let Some(s) = seen
                && writers
                    .get(&(k, s))
                    .is_some_and(|w| w.0 as usize != t && committed[w.0 as usize])
            {
                kv.before.push((s, first));
            }
            match &txn.committed_at {
                Some(at) => kv.commits.push((at, first, last)),
                None => kv.unknown_commit = true,
            }
        }
    }
    let mut orders = IntMap::default();
    let mut sources = Sources::default();
    let mut partial = IntMap::default();
    let mut sorted: Vec<Key> = keys.keys().copied().collect();
    sorted.sort_unstable();
    for k in sorted {
        let mut kv = keys.remove(&k).expect("a key listed");
        // The writers in groups of one commit timestamp, in commit order
        // (equal timestamps order nothing): each group's writers after
        // every writer of the group before. Only where every writer has one.
        let mut groups: Vec<Vec<(Elem, Elem)>> = Vec::new();
        if !kv.unknown_commit {
            kv.commits.sort();
            groups = (kv.commits.chunk_by(|a, b| a.0 == b.0))
                .map(|g| g.iter().map(|c| (c.1, c.2)).collect())
                .collect();
        }
        let groups = if groups.len() > 1 { groups } else { Vec::new() };
        let assumed: Vec<(&Assumed, OrderFrom)> = (assumed.iter())
            .filter_map(|(by, from)| by.get(&k).map(|a| (a, *from)))
            .collect();
        let (mut order, mut from) = decide(&kv.values, &kv.before, &groups, &assumed);
        let mut used: &[(&Assumed, OrderFrom)] = &assumed;
        if let Order::Cycle(v) = order {
            sources.cyclic += 1;
            found.push(cyclic_versions(writers, k, v));
            // As Elle drops a source that makes a cycle: the key keeps what
            // the server and the history give it.
            if !assumed.is_empty() {
                (order, from) = decide(&kv.values, &kv.before, &groups, &[]);
                used = &[];
            }
        }
        match order {
            Order::Total(order) => {
                match from {
                    OrderFrom::CommitOrder => sources.server += 1,
                    OrderFrom::SequentialKeys => sources.sequential += 1,
                    OrderFrom::LinearizableKeys => sources.linearizable += 1,
                    _ => sources.inferred += 1,
                }
                orders.insert(k, Given { order, from });
            }
            Order::Partial => {
                sources.undecided += 1;
                partial.insert(k, pairs(&kv.before, used));
            }
            Order::Cycle(_) => {
                sources.undecided += 1;
                partial.insert(k, Vec::new());
            }
        }
    }
    (orders, sources, partial)
}

/// Elle's cyclic-versions: key `k`'s orders put `v` before and after another version.
fn cyclic_versions(writers: &Writers, k: Key, v: Elem) -> Anomaly {
    let (w, op) = writers[&(k, v)];
    Anomaly {
        name: Name::of(Class::CyclicVersions),
        txns: vec![w as usize],
        cycle: Vec::new(),
        read: Some(ReadAt {
            txn: w as usize,
            op: op as usize,
            key: k,
            elem: Some(v),
            writer: Some(w as usize),
            other: None,
        }),
    }
}

/// One version of a key before another, and what says so.
pub type Pair = (Elem, Elem, PairFrom);

/// What orders some versions of a key that has no one order: the
/// history's own pairs, and each assumption's.
fn pairs(before: &[(Elem, Elem)], assumed: &[(&Assumed, OrderFrom)]) -> Vec<Pair> {
    let mut out: Vec<Pair> = before.iter().map(|&(a, b)| (a, b, PairFrom::History)).collect();
    for (a, from) in assumed {
        let by = match from {
            OrderFrom::SequentialKeys => PairFrom::SequentialKeys,
            _ => PairFrom::LinearizableKeys,
        };
        out.extend(a.before.iter().map(|&(x, y)| (x, y, by)));
    }
    out.sort_unstable();
    out.dedup_by_key(|p| (p.0, p.1));
    out
}

/// The edges of the keys with no one order (`partial`: what orders some
/// of their versions, sorted; none for a key whose orders contradict): wr
/// from each committed read of another transaction's value, which needs
/// no order; ww from the writer of each pair's first version to the
/// second's; rw from each reader of the first to the second's writer (a
/// later version, as Elle's rw-register takes them from a partial version
/// graph: not necessarily the next, which only weakens the cycle's class:
/// the path it stands for is rw then ww), but not from a reader that wrote
/// the key too (its own write may be the next version, and the path then
/// ww alone). [`why_partial`] finds each one's evidence again.
fn partial_edges(txns: &[Txn], writers: &Writers, committed: &[bool], partial: &IntMap<Key, Vec<Pair>>) -> Vec<Edge> {
    let mut out = Vec::new();
    if partial.is_empty() {
        return out;
    }
    let writer = |k: Key, v: Elem| writers.get(&(k, v)).map(|w| w.0).filter(|w| committed[*w as usize]);
    for (t, txn) in txns.iter().enumerate().filter(|(_, x)| x.status == Status::Ok) {
        let mut written: Option<Vec<Key>> = None;
        for op in &txn.ops {
            let Op::Get(k, Some(v)) = *op else { continue };
            let (Some(pairs), Some(w)) = (partial.get(&k), writer(k, v)) else {
                continue;
            };
            if w as usize == t {
                continue;
            }
            out.push((w, t as u32, WR));
            if !written.get_or_insert_with(|| written_keys(txn)).contains(&k) {
                let after = &pairs[pairs.partition_point(|p| p.0 < v)..];
                for &(_, then, _) in after.iter().take_while(|p| p.0 == v) {
                    // Not to the writer of what was read (an intermediate
                    // version read: a G1b, said once, as list-append's is).
                    if let Some(b) = writer(k, then).filter(|b| *b as usize != t && *b != w) {
                        out.push((t as u32, b, RW | IRW));
                    }
                }
            }
        }
    }
    for (k, pairs) in partial {
        for &(first, then, _) in pairs {
            if let (Some(a), Some(b)) = (writer(*k, first), writer(*k, then))
                && a != b
            {
                out.push((a, b, WW));
            }
        }
    }
    out
}

fn writes(txn: &Txn, k: Key) -> bool {
    txn.ops.iter().any(|o| matches!(*o, Op::Write(k2, _) if k2 == k))
}

fn written_keys(txn: &Txn) -> Vec<Key> {
    (txn.ops.iter())
        .filter_map(|o| match *o {
            Op::Write(k, _) => Some(k),
            _ => None,
        })
        .collect()
}

/// Why edge `a -> b` of `kind` (WW, WR or RW) that [`partial_edges`] made
/// holds: the operations it rests on, found again in the history `txns`
/// (rw-register's own operations, not the lifted ones).
/// `at`: who wrote a value (transaction, operation), if it committed.
pub fn why_partial(
    txns: &[Txn],
    at: &dyn Fn(Key, Elem) -> Option<(usize, usize)>,
    partial: &IntMap<Key, Vec<Pair>>,
    (a, b, kind): (usize, usize, u8),
) -> Option<Why> {
    let pairs_of = |k: Key| partial.get(&k).map(Vec::as_slice).unwrap_or_default();
    // The reader of a wr or rw edge; the later writer of a ww edge.
    let scan = if kind == RW { a } else { b };
    for (j, op) in txns[scan].ops.iter().enumerate() {
        match (kind, op) {
            (WR, &Op::Get(k, Some(v))) if partial.contains_key(&k) && at(k, v).is_some_and(|w| w.0 == a) => {
                let from_op = at(k, v).map_or(0, |w| w.1);
                return Some(Why::Wr {
                    key: k,
                    elem: v,
                    from_op,
                    to_op: j,
                });
            }
            (WW, &Op::Write(k, then)) => {
                let p = pairs_of(k)
                    .iter()
                    .find(|p| p.1 == then && at(k, p.0).is_some_and(|w| w.0 == a));
                if let Some(&(first, _, by)) = p {
                    let from_op = at(k, first).map_or(0, |w| w.1);
                    let order = OrderFrom::Partial { by };
                    return Some(Why::Ww {
                        key: k,
                        first,
                        then,
                        from_op,
                        to_op: j,
                        order,
                    });
                }
            }
            // As partial_edges makes them: not from a reader of its own
            // value or one that wrote the key, not to the read's writer.
            (RW, &Op::Get(k, Some(v))) if !writes(&txns[a], k) && at(k, v).is_some_and(|w| w.0 != a && w.0 != b) => {
                let p = pairs_of(k)
                    .iter()
                    .find(|p| p.0 == v && at(k, p.1).is_some_and(|w| w.0 == b));
                if let Some(&(_, then, by)) = p {
                    let to_op = at(k, then).map_or(0, |w| w.1);
                    let order = OrderFrom::Partial { by };
                    return Some(Why::Rw {
                        key: k,
                        elem: then,
                        from_op: j,
                        to_op,
                        order,
                        predicate: None,
                    });
                }
            }
            _ => {}
        }
    }
    None
}

/// A key's order under every constraint there is (any contradiction a
/// cycle: the key gets no order), and the first source it is decided by:
/// the server's commit order (`groups`), or the history alone, then each
/// assumption in turn.
fn decide(
    values: &[Elem],
    before: &[(Elem, Elem)],
    groups: &[Vec<(Elem, Elem)>],
    assumed: &[(&Assumed, OrderFrom)],
) -> (Order, OrderFrom) {
    let base = if groups.is_empty() {
        OrderFrom::Inferred
    } else {
        OrderFrom::CommitOrder
    };
    if assumed.iter().any(|(a, _)| !a.nil_after.is_empty()) {
        let written: IntMap<Elem, ()> = values.iter().map(|v| (*v, ())).collect();
        let before_nil = assumed.iter().flat_map(|(a, _)| &a.nil_after);
        if let Some(v) = before_nil.copied().find(|v| written.contains_key(v)) {
            return (Order::Cycle(v), base);
        }
    }
    let mut all = before.to_vec();
    all.extend(assumed.iter().flat_map(|(a, _)| a.before.iter().copied()));
    let order = total_order(values, &all, groups);
    if !matches!(order, Order::Total(_)) || assumed.is_empty() {
        return (order, base);
    }
    let mut some = before.to_vec();
    let mut from = base;
    for (a, by) in assumed {
        if matches!(total_order(values, &some, groups), Order::Total(_)) {
            break;
        }
        some.extend(a.before.iter().copied());
        from = *by;
    }
    (order, from)
}

/// What the constraints say of a key's values.
#[derive(Debug, PartialEq)]
enum Order {
    Total(Vec<Elem>),
    /// More than one order fits.
    Partial,
    /// No order fits: a value on a cycle.
    Cycle(Elem),
}

/// The one order of `values` in which every `(a, b)` of `before` has `a`
/// first, and every group's writers (first value, last value) come after
/// every writer of the group before, if there is exactly one (Kahn's, with
/// one candidate at each step). Between two groups stands a node of its
/// own, so that groups of many writers cost their sizes, not their product.
fn total_order(values: &[Elem], before: &[(Elem, Elem)], groups: &[Vec<(Elem, Elem)>]) -> Order {
    let at: IntMap<Elem, usize> = values.iter().enumerate().map(|(i, v)| (*v, i)).collect();
    let barrier = |g: usize| values.len() + g;
    let n = values.len() + groups.len().saturating_sub(1);
    let mut edges: Vec<(usize, usize)> = (before.iter())
        .filter_map(|(a, b)| Some((*at.get(a)?, *at.get(b)?)))
        .collect();
    for (g, writers) in groups.iter().enumerate() {
        for (first, last) in writers {
            let (Some(&first), Some(&last)) = (at.get(first), at.get(last)) else {
                continue;
            };
            if g > 0 {
                edges.push((barrier(g - 1), first));
            }
            if g + 1 < groups.len() {
                edges.push((last, barrier(g)));
            }
        }
    }
    edges.sort_unstable();
    edges.dedup();
    let mut after: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut left = vec![0usize; n];
    for (a, b) in edges {
        after[a].push(b);
        left[b] += 1;
    }
    let mut ready: Vec<usize> = (0..n).filter(|i| left[*i] == 0).collect();
    let mut order = Vec::with_capacity(values.len());
    let (mut one, mut done) = (true, 0);
    while let Some(i) = ready.pop() {
        one &= ready.is_empty();
        done += 1;
        if i < values.len() {
            order.push(values[i]);
        }
        for &j in &after[i] {
            left[j] -= 1;
            if left[j] == 0 {
                ready.push(j);
            }
        }
    }
    if done < n {
        return Order::Cycle(values[on_a_cycle(&after, &left, values.len())]);
    }
    if one { Order::Total(order) } else { Order::Partial }
}

/// A value on a cycle among the nodes Kahn's could not order (`left` > 0):
/// walking back from one of them through such predecessors must come
/// round, and the cycle it comes round on holds a value (barriers alone
/// make none: each points only forward).
fn on_a_cycle(after: &[Vec<usize>], left: &[usize], values: usize) -> usize {
    let mut before: Vec<Option<usize>> = vec![None; after.len()];
    for (a, next) in after.iter().enumerate().filter(|(a, _)| left[*a] > 0) {
        for &b in next {
            before[b] = Some(a);
        }
    }
    let mut seen = vec![false; after.len()];
    let mut i = (0..after.len()).find(|i| left[*i] > 0).expect("a node left");
    while !seen[i] {
        seen[i] = true;
        i = before[i].expect("a node left has a predecessor left");
    }
    while i >= values {
        i = before[i].expect("a node on the cycle has a predecessor on it");
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::hunt::check::{Level, Options, check, forbidden};

    /// A committed transaction, the server's commit timestamp `at` (in
    /// microseconds past a second; none: the history does not say).
    fn ok(ops: Vec<Op>, at: Option<u32>) -> Txn {
        Txn {
            end: Some(1),
            committed_at: at.map(|us| format!("2026-12-07 10:00:00.{us:06}").into()),
            ..Txn::new(0, 0, Status::Ok, 0, ops)
        }
    }

    fn w(k: Key, v: Elem) -> Op {
        Op::Write(k, v)
    }

    fn r(k: Key, v: Option<Elem>) -> Op {
        Op::Get(k, v)
    }

    fn history(mut txns: Vec<Txn>) -> History {
        for (i, t) in txns.iter_mut().enumerate() {
            (t.index, t.session, t.line) = (i as u64, i as u64 + 1, i + 1);
        }
        History {
            txns,
            ..History::default()
        }
    }

    /// The classes found, whether read committed, repeatable read and
    /// serializable forbid any, and where the orders came from.
    fn verdict(txns: Vec<Txn>) -> (Vec<String>, [bool; 3], Sources) {
        let c = check(&history(txns), Options::default()).unwrap();
        let names = c.names();
        let at = |l: Level| names.iter().any(|n| forbidden(*n, l));
        (
            names.iter().map(|n| n.text()).collect(),
            [
                at(Level::ReadCommitted),
                at(Level::RepeatableRead),
                at(Level::Serializable),
            ],
            c.registers.expect("an rw-register history"),
        )
    }

    /// T2 and T3 both read key 1 = 1 and wrote it; the server committed
    /// T1, T2, T3 in that order: T3 read 1, whose next version is T2's (rw),
    /// and wrote over T2's (ww): a lost update, G-single. Allowed at read
    /// committed, forbidden by snapshot isolation.
    fn lost_update(at: [Option<u32>; 3]) -> Vec<Txn> {
        vec![
            ok(vec![w(1, 1)], at[0]),
            ok(vec![r(1, Some(1)), w(1, 2)], at[1]),
            ok(vec![r(1, Some(1)), w(1, 3)], at[2]),
        ]
    }

    #[test]
    fn the_server_s_commit_order_decides_what_the_reads_cannot() {
        let (names, forbids, from) = verdict(lost_update([Some(1), Some(2), Some(3)]));
        assert_eq!(names, ["G-single", "lost-update"]);
        assert_eq!(forbids, [false, true, true]);
        assert_eq!((from.server, from.inferred, from.undecided), (1, 0, 0));
        // Without commit timestamps, 2 and 3 both follow 1 and nothing
        // orders them: undecided, no cycle; the lost update needs no order.
        let (names, forbids, from) = verdict(lost_update([None; 3]));
        assert_eq!(names, ["lost-update"]);
        assert_eq!(forbids, [false, true, true]);
        assert_eq!((from.server, from.inferred, from.undecided), (0, 0, 1));
    }

    #[test]
    fn the_history_alone_orders_a_chain_of_reads_and_writes() {
        // Each write read the one before it: 1 < 2 < 3, no timestamps needed.
        let h = vec![
            ok(vec![w(1, 1)], None),
            ok(vec![r(1, Some(1)), w(1, 2)], None),
            ok(vec![r(1, Some(2)), w(1, 3), w(1, 4)], None),
            ok(vec![r(1, Some(4))], None),
        ];
        let (names, _, from) = verdict(h.clone());
        assert!(names.is_empty(), "{names:?}");
        assert_eq!((from.server, from.inferred, from.undecided), (0, 1, 0));
        let lifted = lift(&history(h), &Options::default()).unwrap();
        assert_eq!(lifted.orders[&1].order, [1, 2, 3, 4]);
        assert_eq!(lifted.txns[3].ops, [Op::Read(1, Some(vec![1, 2, 3, 4]))]);
        assert_eq!(lifted.txns[2].ops[1], Op::Append(1, 3));
    }

    #[test]
    fn write_skew_long_fork_and_aborted_reads() {
        // Each read the other's key as nil and wrote its own: G2-item.
        let skew = vec![
            ok(vec![r(1, None), r(2, None), w(1, 1)], Some(1)),
            ok(vec![r(1, None), r(2, None), w(2, 2)], Some(2)),
        ];
        let (names, forbids, _) = verdict(skew);
        assert_eq!(names, ["G2-item"]);
        assert_eq!(forbids, [false, false, true]);
        // Long Fork: readers see the two writes in different orders.
        let fork = vec![
            ok(vec![w(1, 1)], Some(1)),
            ok(vec![w(2, 2)], Some(2)),
            ok(vec![r(1, Some(1)), r(2, None)], None),
            ok(vec![r(1, None), r(2, Some(2))], None),
        ];
        let (names, forbids, _) = verdict(fork);
        assert_eq!(names, ["G-nonadjacent"]);
        assert_eq!(forbids, [false, true, true]);
        // A read of a write that did not commit.
        let mut aborted = ok(vec![w(1, 5)], None);
        aborted.status = Status::Fail;
        let (names, forbids, _) = verdict(vec![aborted, ok(vec![r(1, Some(5))], None)]);
        assert_eq!(names, ["G1a"]);
        assert_eq!(forbids, [true; 3]);
    }

    #[test]
    fn an_unknown_outcome_the_server_recorded_a_commit_for_committed() {
        // T2's COMMIT went unanswered, but the server has its commit
        // timestamp: its write is the version between T1's and T3's, so T4's
        // read of T1's value misses T2's write, not T3's.
        let mut unknown = ok(vec![w(1, 2)], Some(2));
        (unknown.status, unknown.end) = (Status::Info, None);
        let h = history(vec![
            ok(vec![w(1, 1)], Some(1)),
            unknown,
            ok(vec![w(1, 3)], Some(3)),
            ok(vec![r(1, Some(1))], None),
        ]);
        let lifted = lift(&h, &Options::default()).unwrap();
        assert_eq!(lifted.orders[&1].order, [1, 2, 3]);
        assert_eq!(lifted.txns[1].status, Status::Info);
        assert!(lifted.committed[1]);
        let c = check(&h, Options::default()).unwrap();
        assert_eq!((c.committed, c.unknown), (4, 0));
    }

    /// The evidence found for an edge is the edge's own: T1 read key 1 =
    /// 1 but wrote key 1 itself (no rw edge from that read), so its rw
    /// edge to T2 rests on key 2 (T1 read 1, T2 read 1 and then wrote 7).
    #[test]
    fn a_partial_order_s_evidence_is_the_edge_s_own() {
        let h = history(vec![
            ok(vec![w(1, 1), w(2, 1)], None),
            ok(vec![r(1, Some(1)), w(1, 5), r(2, Some(1)), r(3, Some(1))], None),
            ok(vec![r(1, Some(1)), w(1, 6), r(2, Some(1)), w(2, 7), w(3, 1)], None),
            ok(vec![w(2, 8)], None),
        ]);
        let c = check(&h, Options::default()).unwrap();
        let single = c
            .anomalies
            .iter()
            .find(|a| a.name.text() == "G-single")
            .expect("a G-single");
        let rw: Vec<&Why> = (single.cycle.iter().map(|l| &l.why))
            .filter(|w| matches!(w, Why::Rw { .. }))
            .collect();
        assert!(matches!(rw[..], [Why::Rw { key: 2, elem: 7, .. }]), "{rw:?}");
    }

    #[test]
    fn a_recorded_commit_of_an_unknown_outcome_seen_then_gone_is_unknown_contradicted() {
        // T1's COMMIT went unanswered; the server recorded it, T2 read its
        // value, and T3, which began after T2 ended, no longer sees it.
        let at = |start: u64, ops, ts| Txn {
            start,
            end: Some(start + 1),
            ..ok(ops, ts)
        };
        let mut unknown = at(2, vec![w(1, 2)], Some(2));
        (unknown.status, unknown.end) = (Status::Info, None);
        let h = history(vec![
            at(0, vec![w(1, 1)], Some(1)),
            unknown,
            at(4, vec![r(1, Some(2))], None),
            at(10, vec![r(1, Some(1))], None),
        ]);
        let lost = Options {
            lost: true,
            ..Options::default()
        };
        let names: Vec<String> = check(&h, lost).unwrap().names().iter().map(|n| n.text()).collect();
        assert_eq!(names, ["unknown-contradicted"]);
    }

    /// Two keys, each with versions 1 < 3 (3's writer read 1 first) and a
    /// blind write of 2 nothing orders: no one order. T4 reads key 1 = 1
    /// and key 2 = 3, T5 key 2 = 1 and key 1 = 3: each missed a version
    /// the other saw (rw to a later version, wr back): Long Fork.
    fn forked(t5_writes: bool) -> Vec<Txn> {
        let mut t5 = vec![r(2, Some(1)), r(1, Some(3))];
        if t5_writes {
            t5.push(w(2, 9));
        }
        vec![
            ok(vec![w(1, 1), w(2, 1)], None),
            ok(vec![r(1, Some(1)), w(1, 3)], None),
            ok(vec![w(1, 2), w(2, 2)], None),
            ok(vec![r(2, Some(1)), w(2, 3)], None),
            ok(vec![r(1, Some(1)), r(2, Some(3))], None),
            ok(t5, None),
        ]
    }

    #[test]
    fn keys_with_no_one_order_give_the_edges_their_partial_order_shows() {
        let (names, forbids, from) = verdict(forked(false));
        assert_eq!(names, ["G-nonadjacent"]);
        assert_eq!(forbids, [false, true, true]);
        assert_eq!((from.inferred, from.undecided), (0, 2));
        let c = check(&history(forked(false)), Options::default()).unwrap();
        let whys: Vec<&Why> = c.anomalies[0].cycle.iter().map(|l| &l.why).collect();
        let partial = OrderFrom::Partial { by: PairFrom::History };
        assert!(
            whys.iter()
                .any(|w| matches!(w, Why::Rw { elem: 3, order, .. } if *order == partial)),
            "{whys:?}"
        );
        assert!(whys.iter().any(|w| matches!(w, Why::Wr { elem: 3, .. })), "{whys:?}");
        // T5 read 3 of key 1, and T1 wrote 3 then 4 in one transaction: on
        // a key with no one order, a read of an intermediate version (G1b)
        // is seen all the same.
        let mut h = forked(false);
        h[1].ops.push(w(1, 4));
        let (names, _, _) = verdict(h);
        assert_eq!(names, ["G1b", "G-nonadjacent"]);
        // A reader that wrote the key itself gives no rw edge to a later
        // version (its own write may be the next one): no cycle, but the
        // two who read key 2 = 1 and wrote it lost one's update.
        let (names, _, _) = verdict(forked(true));
        assert_eq!(names, ["lost-update"]);
    }

    #[test]
    fn what_each_key_is_assumed_to_be_orders_what_the_history_cannot() {
        let at = |session: u64, start: u64, ops: Vec<Op>| Txn {
            end: Some(start + 1),
            ..Txn::new(0, session, Status::Ok, start, ops)
        };
        let mut txns = vec![
            // Key 1: 1 < 2 (read, then written); 3 after 2 only by session
            // 2's order, or by real time.
            at(1, 0, vec![w(1, 1)]),
            at(2, 2, vec![r(1, Some(1)), w(1, 2)]),
            at(2, 4, vec![w(1, 3)]),
            at(3, 6, vec![r(1, Some(3))]),
            // Key 2: nil read after the write of 1 ended.
            at(4, 10, vec![w(2, 1)]),
            at(5, 12, vec![r(2, None)]),
        ];
        for (i, t) in txns.iter_mut().enumerate() {
            (t.index, t.line) = (i as u64, i + 1);
        }
        let h = History {
            txns,
            ..History::default()
        };
        let run = |sequential_keys, linearizable_keys| {
            let opts = Options {
                sequential_keys,
                linearizable_keys,
                ..Options::default()
            };
            let c = check(&h, opts).unwrap();
            let s = c.registers.unwrap();
            let names: Vec<String> = c.names().iter().map(|n| n.text()).collect();
            let order = lift(&h, &opts)
                .unwrap()
                .orders
                .get(&1)
                .map(|g| (g.order.clone(), g.from));
            (
                (s.inferred, s.sequential, s.linearizable, s.undecided, s.cyclic),
                names,
                order,
            )
        };
        // Alone: key 1 undecided; key 2 has one value.
        let none: Vec<String> = Vec::new();
        assert_eq!(run(false, false), ((1, 0, 0, 1, 0), none.clone(), None));
        let sequential = Some((vec![1, 2, 3], OrderFrom::SequentialKeys));
        assert_eq!(run(true, false), ((1, 1, 0, 0, 0), none, sequential.clone()));
        // Real time orders key 1 too, and says key 2's nil came after 1:
        // that contradicts nil's coming first (key 2 keeps the order the
        // history alone gives it, as Elle drops the source that made the cycle).
        let linearizable = Some((vec![1, 2, 3], OrderFrom::LinearizableKeys));
        assert_eq!(
            run(false, true),
            ((1, 0, 1, 0, 1), vec!["cyclic-versions".to_string()], linearizable)
        );
        // Both: the first that decides it is named.
        assert_eq!(
            run(true, true),
            ((1, 1, 0, 0, 1), vec!["cyclic-versions".to_string()], sequential)
        );
    }

    #[test]
    fn orders_that_contradict_each_other_are_cyclic_versions() {
        // The server committed the write of 2 first, yet its writer read 1 before writing 2.
        let h = vec![ok(vec![w(1, 1)], Some(5)), ok(vec![r(1, Some(1)), w(1, 2)], Some(4))];
        let (names, forbids, from) = verdict(h);
        assert_eq!(names, ["cyclic-versions"]);
        assert_eq!(forbids, [true; 3]);
        assert_eq!(from.cyclic, 1);
    }

    #[test]
    fn what_an_rw_register_history_cannot_hold_is_damage() {
        let damage = |txns: Vec<Txn>| check(&history(txns), Options::default()).map(|_| ()).unwrap_err();
        let d = damage(vec![ok(vec![w(1, 1)], None), ok(vec![r(1, Some(9))], None)]);
        assert_eq!(d.line, 2);
        assert!(
            d.what.contains("nobody") || d.what.contains("no transaction"),
            "{}",
            d.what
        );
        let d = damage(vec![ok(vec![w(1, 1)], None), ok(vec![Op::Append(1, 2)], None)]);
        assert!(d.what.contains("one workload"), "{}", d.what);
        let d = damage(vec![ok(vec![w(1, 1)], None), ok(vec![w(1, 1)], None)]);
        assert!(d.what.contains("twice"), "{}", d.what);
        let mut local = ok(vec![w(1, 1)], None);
        local.committed_at = Some("2026-12-07T21:00:00+01:00".into());
        let d = damage(vec![local]);
        assert!(d.what.contains("not a UTC time"), "{}", d.what);
        assert!(utc_micros("2026-12-07 20:22:34.431471"));
    }

    #[test]
    fn json_lines_and_jepsen_s_edn_read_registers() {
        let text = "{\"lab\":\"hunt\",\"workload\":\"rw-register\"}\n\
                    {\"index\":0,\"session\":1,\"type\":\"ok\",\"start\":0,\"end\":1,\"ops\":[[\"r\",1,null],[\"w\",1,2]]}\n\
                    {\"index\":1,\"session\":2,\"type\":\"ok\",\"start\":2,\"end\":3,\"ops\":[[\"r\",1,2]]}\n";
        let h = History::parse(text).unwrap();
        assert!(h.register());
        assert_eq!(h.txns[0].ops, [Op::Read(1, None), w(1, 2)]);
        assert_eq!(h.txns[1].ops, [r(1, Some(2))]);
        // Written back as it was read.
        assert!(h.to_json_lines().contains(r#""ops":[["r",1,2]]"#));
        let c = check(&h, Options::default()).unwrap();
        assert!(c.anomalies.is_empty());
        assert_eq!(c.registers.map(|s| s.inferred), Some(1));
        let edn = "{:type :invoke, :f :txn, :value [[:r :x nil] [:w :x 1]], :process 0, :time 1}\n\
                   {:type :ok, :f :txn, :value [[:r :x nil] [:w :x 1]], :process 0, :time 2}\n\
                   {:type :invoke, :f :txn, :value [[:r :x nil]], :process 1, :time 3}\n\
                   {:type :ok, :f :txn, :value [[:r :x 1]], :process 1, :time 4}\n";
        let h = History::parse(edn).unwrap();
        assert!(h.register());
        assert_eq!(h.txns[0].ops, [Op::Read(1, Some(Vec::new())), w(1, 1)]);
        assert_eq!(h.txns[1].ops, [r(1, Some(1))]);
        assert!(check(&h, Options::default()).unwrap().anomalies.is_empty());
    }

    #[test]
    fn one_order_many_or_none() {
        assert_eq!(
            total_order(&[1, 2, 3], &[(2, 3), (1, 2)], &[]),
            Order::Total(vec![1, 2, 3])
        );
        assert_eq!(total_order(&[7], &[], &[]), Order::Total(vec![7]));
        assert_eq!(total_order(&[1, 2, 3], &[(1, 2), (1, 3)], &[]), Order::Partial);
        assert_eq!(total_order(&[1, 2], &[], &[]), Order::Partial);
        // 4 comes after the cycle and is not on it.
        let cycle = total_order(&[4, 1, 2, 3], &[(1, 2), (2, 3), (3, 2), (3, 4)], &[]);
        assert!(cycle == Order::Cycle(2) || cycle == Order::Cycle(3), "{cycle:?}");
        // A constraint given twice counts once.
        assert_eq!(total_order(&[1, 2], &[(1, 2), (1, 2)], &[]), Order::Total(vec![1, 2]));
        // Commit groups: 1, then 2 and 3 at one timestamp (a writer of 2 then 3), then 4.
        let groups = vec![vec![(1, 1)], vec![(2, 3)], vec![(4, 4)]];
        assert_eq!(
            total_order(&[4, 3, 2, 1], &[(2, 3)], &groups),
            Order::Total(vec![1, 2, 3, 4])
        );
        // Two writers of one timestamp: not ordered, unless the history orders them.
        let tied = vec![vec![(1, 1)], vec![(2, 2), (3, 3)]];
        assert_eq!(total_order(&[1, 2, 3], &[], &tied), Order::Partial);
        assert_eq!(total_order(&[1, 2, 3], &[(3, 2)], &tied), Order::Total(vec![1, 3, 2]));
        // The server against the history.
        let against = total_order(&[1, 2], &[(2, 1)], &[vec![(1, 1)], vec![(2, 2)]]);
        assert!(matches!(against, Order::Cycle(_)), "{against:?}");
    }
}
