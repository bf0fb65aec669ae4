//! The checker: a list-append history in, its anomalies out. Pure; no
//! server, no engine.
//!
//! List-append is traceable: every appended element is unique, so a read's
//! list says who wrote each element and in which order the key's versions
//! came. The longest committed read of a key is its version order. From it:
//! - ww: T1 appended the element right before T2's in the key's order;
//! - wr: T2 read a list whose last element T1 appended;
//! - rw: T1 read a list that stops right before T2's element;
//! - optionally T1 -> T2 when T1 ended before T2 began (real time), or came
//!   before it on the same session.
//!
//! Cycles among committed transactions are classified by their edges (G0:
//! ww only; G1c: ww and wr; G-single: exactly one rw; G2-item: two or more);
//! reads alone show G1a (an aborted transaction's element), G1b (an
//! element its writer appended over again), garbage (an element nobody
//! appended), duplicate elements, orders two reads disagree on, and a
//! transaction not seeing its own appends (internal). Which of them a
//! PostgreSQL level forbids is [`forbidden`]'s business.
use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};

use serde::Serialize;

use super::graph::{Graph, PROCESS, REALTIME, RW, Rules, Searcher, WR, WW};
use super::history::{Damage, Elem, History, Key, Op, Status, Txn};

/// What the checker may add to the data edges.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// T1 -> T2 when T1 ended before T2 began.
    pub realtime: bool,
    /// T1 -> T2 when T1 came before T2 on the same session.
    pub sessions: bool,
    /// Every cycle class of every strongly connected component, not one per class.
    pub all_cycles: bool,
}

/// An anomaly's class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Class {
    G0,
    G1a,
    G1b,
    G1c,
    GSingle,
    G2Item,
    /// A read lists the same element twice.
    DuplicateElements,
    /// A read lists an element nobody appended.
    Garbage,
    /// Two reads of a key disagree on its order (neither is a prefix of the other).
    IncompatibleOrder,
    /// A transaction's read does not show its own earlier reads and appends.
    Internal,
}

impl Class {
    /// Every class, in the order reports list them.
    pub const ALL: [Class; 10] = [
        Class::G0,
        Class::G1a,
        Class::G1b,
        Class::G1c,
        Class::GSingle,
        Class::G2Item,
        Class::DuplicateElements,
        Class::Garbage,
        Class::IncompatibleOrder,
        Class::Internal,
    ];
}

/// The edges beyond data a cycle needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Via {
    Data,
    Session,
    Realtime,
}

/// An anomaly's name: its class, and for a cycle what else it needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Name {
    pub class: Class,
    pub via: Via,
}

impl Name {
    pub fn of(class: Class) -> Name {
        Name { class, via: Via::Data }
    }

    /// Elle's names: G0, G1c, G-single, G2-item, G1a, G1b... with
    /// -process / -realtime where a cycle needs those edges.
    pub fn text(&self) -> String {
        let base = match self.class {
            Class::G0 => "G0",
            Class::G1a => "G1a",
            Class::G1b => "G1b",
            Class::G1c => "G1c",
            Class::GSingle => "G-single",
            Class::G2Item => "G2-item",
            Class::DuplicateElements => "duplicate-elements",
            Class::Garbage => "garbage-read",
            Class::IncompatibleOrder => "incompatible-order",
            Class::Internal => "internal",
        };
        match self.via {
            Via::Data => base.to_string(),
            Via::Session => format!("{base}-process"),
            Via::Realtime => format!("{base}-realtime"),
        }
    }

    pub fn parse(s: &str) -> Option<Name> {
        let (base, via) = if let Some(b) = s.strip_suffix("-realtime") {
            (b, Via::Realtime)
        } else if let Some(b) = s.strip_suffix("-process") {
            (b, Via::Session)
        } else {
            (s, Via::Data)
        };
        let class = Class::ALL.into_iter().find(|c| Name::of(*c).text() == base)?;
        Some(Name { class, via })
    }

    pub fn is_cycle(&self) -> bool {
        matches!(self.class, Class::G0 | Class::G1c | Class::GSingle | Class::G2Item)
    }
}

impl Serialize for Name {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text())
    }
}

/// PostgreSQL's levels as the checker knows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// Asked for, and read back, as itself; PostgreSQL runs it as read committed.
    ReadUncommitted,
    ReadCommitted,
    RepeatableRead,
    Serializable,
}

impl Level {
    /// A level as lab's options or the server spell it.
    pub fn parse(s: &str) -> Option<Level> {
        match s.trim().to_ascii_lowercase().replace(['-', '_'], " ").as_str() {
            "read uncommitted" => Some(Level::ReadUncommitted),
            "read committed" => Some(Level::ReadCommitted),
            "repeatable read" => Some(Level::RepeatableRead),
            "serializable" => Some(Level::Serializable),
            _ => None,
        }
    }

    pub fn sql(&self) -> &'static str {
        match self {
            Level::ReadUncommitted => "read uncommitted",
            Level::ReadCommitted => "read committed",
            Level::RepeatableRead => "repeatable read",
            Level::Serializable => "serializable",
        }
    }

    pub fn flag(&self) -> &'static str {
        match self {
            Level::ReadUncommitted => "read-uncommitted",
            Level::ReadCommitted => "read-committed",
            Level::RepeatableRead => "repeatable-read",
            Level::Serializable => "serializable",
        }
    }
}

/// Does PostgreSQL forbid `name` at `level`? READ UNCOMMITTED (which
/// PostgreSQL documents as behaving as READ COMMITTED) and READ COMMITTED forbid G0,
/// G1a, G1b and G1c; REPEATABLE READ (snapshot isolation) also G-single;
/// SERIALIZABLE every cycle. What no level allows (garbage, duplicates,
/// incompatible orders, internal) is always forbidden. A cycle that needs
/// real-time or session edges is judged as its class: the user asked for them.
pub fn forbidden(name: Name, level: Level) -> bool {
    match name.class {
        Class::GSingle => level >= Level::RepeatableRead,
        Class::G2Item => level >= Level::Serializable,
        _ => true,
    }
}

/// Why one edge of a cycle holds, from the operations it rests on.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Why {
    /// `to` appended `then` right after `from`'s `first` on `key`.
    Ww {
        key: Key,
        first: Elem,
        then: Elem,
        from_op: usize,
        to_op: usize,
    },
    /// `to` read `key` and saw `from`'s `elem` last.
    Wr {
        key: Key,
        elem: Elem,
        from_op: usize,
        to_op: usize,
    },
    /// `from` read `key` without `elem`, which `to` appended next.
    Rw {
        key: Key,
        elem: Elem,
        from_op: usize,
        to_op: usize,
    },
    /// `from` ended before `to` began.
    Realtime,
    /// `from` came before `to` on one session.
    Session,
}

impl Why {
    /// The operations (transaction position in the cycle aside) the edge rests on: (from's op, to's op).
    pub fn ops(&self) -> Option<(usize, usize)> {
        match self {
            Why::Ww { from_op, to_op, .. } | Why::Wr { from_op, to_op, .. } | Why::Rw { from_op, to_op, .. } => {
                Some((*from_op, *to_op))
            }
            _ => None,
        }
    }
}

/// One edge of a cycle: transaction indexes into the history's `txns`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Link {
    pub from: usize,
    pub to: usize,
    pub why: Why,
}

/// One anomaly, with what shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Anomaly {
    pub name: Name,
    /// The transactions involved (a cycle's in its order).
    pub txns: Vec<usize>,
    /// A cycle's edges, the last back to the first transaction.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cycle: Vec<Link>,
    /// A read's anomaly: the reading transaction's op, the key, the element in question.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read: Option<ReadAt>,
}

impl Anomaly {
    /// Its transactions, each once, in the order they first appear.
    pub fn distinct_txns(&self) -> Vec<usize> {
        let mut out: Vec<usize> = Vec::new();
        for t in &self.txns {
            if !out.contains(t) {
                out.push(*t);
            }
        }
        out
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReadAt {
    pub txn: usize,
    pub op: usize,
    pub key: Key,
    /// The element the anomaly is about (the aborted, intermediate, unknown or duplicated one).
    pub elem: Option<Elem>,
    /// Who appended it, where known.
    pub writer: Option<usize>,
    /// For incompatible orders: the other read (transaction, op).
    pub other: Option<(usize, usize)>,
}

/// What the checker found.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Checked {
    pub txns: usize,
    pub committed: usize,
    pub aborted: usize,
    pub unknown: usize,
    /// Examples, at most one per class unless every cycle was asked for.
    pub anomalies: Vec<Anomaly>,
    /// How many of each class were seen (cycles: strongly connected components showing one).
    pub counts: BTreeMap<String, usize>,
    /// Some search ran out of budget: a cycle class may be missing.
    pub cut_short: bool,
}

impl Checked {
    pub fn names(&self) -> Vec<Name> {
        let mut v: Vec<Name> = self.anomalies.iter().map(|a| a.name).collect();
        v.sort();
        v.dedup();
        v
    }
}

/// A hasher for integer keys: one multiply (the default SipHash is a
/// quarter of the checker's time on a million transactions).
#[derive(Default, Clone, Copy)]
pub struct IntHasher(u64);

impl Hasher for IntHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0.rotate_left(5) ^ *b as u64).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }
    fn write_i64(&mut self, i: i64) {
        self.0 = (self.0.rotate_left(5) ^ i as u64).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_u64(&mut self, i: u64) {
        self.write_i64(i as i64)
    }
}

pub type IntMap<K, V> = HashMap<K, V, BuildHasherDefault<IntHasher>>;

/// Who appended an element to a key.
#[derive(Clone, Copy)]
struct Writer {
    txn: u32,
    op: u32,
    /// The writer's last append to that key.
    last: bool,
}

/// Up to this many operations, a transaction is searched rather than indexed.
const SHORT: usize = 16;

/// Who appended each (key, element).
type Writers = IntMap<(Key, Elem), Writer>;

/// How far one search may go (edges looked at) per class and component.
const BUDGET: u64 = 2_000_000;

/// Checks `h`. A history the checker cannot read as list-append (an
/// element appended twice to one key) is damage. Elements need be unique
/// per key only, as Elle asks: Jepsen's generator numbers each key's
/// appends 1, 2, 3 ...
pub fn check(h: &History, opts: Options) -> Result<Checked, Damage> {
    let txns = &h.txns;
    let n = txns.len();
    let mut out = Checked {
        txns: n,
        ..Checked::default()
    };
    // Who wrote what, by key and element.
    let mut writers: Writers = IntMap::default();
    writers.reserve(n * 2);
    for (t, txn) in txns.iter().enumerate() {
        // A long transaction (a --check file's) has each key's last append
        // looked up, not searched for after every append.
        let last_of: Option<IntMap<Key, usize>> = (txn.ops.len() > SHORT).then(|| {
            (txn.ops.iter().enumerate())
                .filter_map(|(i, o)| match o {
                    Op::Append(k, _) => Some((*k, i)),
                    Op::Read(..) => None,
                })
                .collect()
        });
        for (i, op) in txn.ops.iter().enumerate() {
            if let Op::Append(k, v) = op {
                let last = match &last_of {
                    Some(m) => m[k] == i,
                    None => !(txn.ops[i + 1..].iter()).any(|o| matches!(o, Op::Append(k2, _) if k2 == k)),
                };
                let w = Writer {
                    txn: t as u32,
                    op: i as u32,
                    last,
                };
                if let Some(before) = writers.insert((*k, *v), w) {
                    return Err(Damage {
                        line: txn.line,
                        what: format!(
                            "the element {v} is appended to key {k} twice (also by the transaction on line {}): list-append needs each key's appended elements unique",
                            txns[before.txn as usize].line
                        ),
                    });
                }
            }
        }
    }
    // Committed: ok, and an unknown outcome whose element a committed read saw.
    let mut committed: Vec<bool> = txns.iter().map(|t| t.status == Status::Ok).collect();
    let unknown = txns.iter().any(|t| t.status == Status::Info);
    for txn in txns.iter().filter(|t| unknown && t.status == Status::Ok) {
        for op in &txn.ops {
            if let Op::Read(k, Some(list)) = op {
                for e in list {
                    if let Some(w) = writers.get(&(*k, *e))
                        && txns[w.txn as usize].status == Status::Info
                    {
                        committed[w.txn as usize] = true;
                    }
                }
            }
        }
    }
    out.committed = committed.iter().filter(|c| **c).count();
    out.aborted = txns.iter().filter(|t| t.status == Status::Fail).count();
    out.unknown = n - out.committed - out.aborted;

    // Each key's version order: its longest committed read.
    let mut longest: IntMap<Key, (u32, u32)> = IntMap::default();
    let list_at = |(t, i): (u32, u32)| -> &[Elem] {
        match &txns[t as usize].ops[i as usize] {
            Op::Read(_, Some(l)) => l,
            _ => &[],
        }
    };
    for (t, txn) in txns.iter().enumerate().filter(|(t, _)| txns[*t].status == Status::Ok) {
        for (i, op) in txn.ops.iter().enumerate() {
            if let Op::Read(k, Some(l)) = op {
                let e = longest.entry(*k).or_insert((t as u32, i as u32));
                if l.len() > list_at(*e).len() {
                    *e = (t as u32, i as u32);
                }
            }
        }
    }
    let mut found: BTreeMap<Name, Vec<Anomaly>> = BTreeMap::new();
    let mut note = |out: &mut Checked, a: Anomaly| {
        *out.counts.entry(a.name.text()).or_default() += 1;
        let v = found.entry(a.name).or_default();
        if v.is_empty() || opts.all_cycles {
            v.push(a);
        }
    };
    let mut edges: Vec<(u32, u32, u8)> = Vec::with_capacity(n * 4);
    // Per key: where its order first repeats an element, and first holds one
    // nobody appended or an aborted transaction did.
    let mut flaws_of: IntMap<Key, (Option<usize>, Option<usize>)> = IntMap::default();
    for (t, txn) in txns.iter().enumerate() {
        if txn.status != Status::Ok {
            continue;
        }
        internal(t, txn, &mut |a| note(&mut out, a));
        for (i, op) in txn.ops.iter().enumerate() {
            let Op::Read(k, Some(l)) = op else { continue };
            let read =
                |class: Class, elem: Option<Elem>, writer: Option<usize>, other: Option<(usize, usize)>| Anomaly {
                    name: Name::of(class),
                    txns: writer.into_iter().chain([t]).collect(),
                    cycle: Vec::new(),
                    read: Some(ReadAt {
                        txn: t,
                        op: i,
                        key: *k,
                        elem,
                        writer,
                        other,
                    }),
                };
            let at = longest[k];
            let order = list_at(at);
            let prefix = order.starts_with(l);
            // A read that is a prefix of the key's order holds what the
            // order's first elements hold (each looked at once per key);
            // another is looked at element by element.
            let flaws = if prefix {
                let f = flaws_of.entry(*k).or_insert_with(|| flaws(*k, order, &writers, txns));
                (f.0.filter(|p| *p < l.len()), f.1.filter(|p| *p < l.len()))
            } else {
                flaws(*k, l, &writers, txns)
            };
            if let Some(p) = flaws.0 {
                note(&mut out, read(Class::DuplicateElements, Some(l[p]), None, None));
            }
            if let Some(p) = flaws.1 {
                let e = l[p];
                match writers.get(&(*k, e)) {
                    None => note(&mut out, read(Class::Garbage, Some(e), None, None)),
                    Some(w) => note(&mut out, read(Class::G1a, Some(e), Some(w.txn as usize), None)),
                }
            }
            let last = l.last().and_then(|e| writers.get(&(*k, *e)));
            if let (Some(e), Some(w)) = (l.last(), last)
                && w.txn as usize != t
                && !w.last
                && txns[w.txn as usize].status != Status::Fail
            {
                note(&mut out, read(Class::G1b, Some(*e), Some(w.txn as usize), None));
            }
            if !prefix {
                let other = Some((at.0 as usize, at.1 as usize));
                note(&mut out, read(Class::IncompatibleOrder, None, None, other));
                continue;
            }
            // wr: the last element's writer -> this reader.
            if let Some(w) = last
                && w.txn as usize != t
                && committed[w.txn as usize]
            {
                edges.push((w.txn, t as u32, WR));
            }
            // rw: this reader -> the writer of the element it did not see
            // (not when that writer's earlier element ends the read: a G1b, said once).
            if let Some(e) = order.get(l.len())
                && let Some(w) = writers.get(&(*k, *e))
                && w.txn as usize != t
                && last.is_none_or(|x| x.txn != w.txn)
                && committed[w.txn as usize]
            {
                edges.push((t as u32, w.txn, RW));
            }
        }
    }
    // ww: consecutive elements of each key's order, by different writers.
    for (&k, &at) in &longest {
        let order = list_at(at);
        for pair in order.windows(2) {
            if let (Some(a), Some(b)) = (writers.get(&(k, pair[0])), writers.get(&(k, pair[1])))
                && a.txn != b.txn
                && committed[a.txn as usize]
                && committed[b.txn as usize]
            {
                edges.push((a.txn, b.txn, WW));
            }
        }
    }
    if opts.sessions {
        session_edges(txns, &committed, &mut edges);
    }
    if opts.realtime {
        realtime_edges(txns, &committed, &mut edges);
    }
    let graph = Graph::new(n, edges);
    let cut = cycles(&graph, opts, &mut |name, path| {
        let a = explain(txns, &writers, &longest, name, path);
        note(&mut out, a);
    });
    out.cut_short = cut;
    out.anomalies = found.into_values().flatten().collect();
    Ok(out)
}

/// Where key `k`'s list first holds an element a second time, and first
/// holds one nobody appended to it or an aborted transaction appended.
fn flaws(k: Key, l: &[Elem], writers: &Writers, txns: &[Txn]) -> (Option<usize>, Option<usize>) {
    let dup = if l.len() <= SHORT {
        (0..l.len()).find(|i| l[..*i].contains(&l[*i]))
    } else {
        let mut seen: IntMap<Elem, ()> = IntMap::default();
        (0..l.len()).find(|i| seen.insert(l[*i], ()).is_some())
    };
    let bad = l.iter().position(|e| {
        writers
            .get(&(k, *e))
            .is_none_or(|w| txns[w.txn as usize].status == Status::Fail)
    });
    (dup, bad)
}

/// A transaction's reads against what it read and appended before: a
/// later read of a key starts with the earlier one (lists only grow) and
/// ends with the appends made since.
fn internal(t: usize, txn: &Txn, note: &mut dyn FnMut(Anomaly)) {
    // Only a key the transaction touches twice can show it.
    let ops = &txn.ops;
    let repeats = if ops.len() <= SHORT {
        (ops.iter().enumerate()).any(|(i, o)| ops[..i].iter().any(|p| p.key() == o.key()))
    } else {
        let mut keys: IntMap<Key, ()> = IntMap::default();
        ops.iter().any(|o| keys.insert(o.key(), ()).is_some())
    };
    if !repeats {
        return;
    }
    // Per key: the last read (op index), the appends since.
    let mut seen: IntMap<Key, (Option<usize>, Vec<Elem>)> = IntMap::default();
    for (i, op) in txn.ops.iter().enumerate() {
        let k = op.key();
        let entry = seen.entry(k).or_default();
        match op {
            Op::Append(_, v) => entry.1.push(*v),
            Op::Read(_, None) => {}
            Op::Read(_, Some(l)) => {
                let (before, since) = &*entry;
                let prefix_ok = before.is_none_or(|b| match &txn.ops[b] {
                    Op::Read(_, Some(p)) => l.starts_with(p),
                    _ => true,
                });
                if !prefix_ok || !l.ends_with(since) {
                    note(Anomaly {
                        name: Name::of(Class::Internal),
                        txns: vec![t],
                        cycle: Vec::new(),
                        read: Some(ReadAt {
                            txn: t,
                            op: i,
                            key: k,
                            elem: None,
                            writer: None,
                            other: before.map(|b| (t, b)),
                        }),
                    });
                }
                *entry = (Some(i), Vec::new());
            }
        }
    }
}

/// Each session's committed transactions in the order it ran them.
fn session_edges(txns: &[Txn], committed: &[bool], edges: &mut Vec<(u32, u32, u8)>) {
    let mut last: IntMap<u64, (u64, u32)> = IntMap::default();
    let mut order: Vec<usize> = (0..txns.len()).filter(|t| committed[*t]).collect();
    order.sort_by_key(|t| (txns[*t].start, *t));
    for t in order {
        if let Some((_, prev)) = last.insert(txns[t].session, (txns[t].start, t as u32)) {
            edges.push((prev, t as u32, PROCESS));
        }
    }
}

/// T1 -> T2 when T1 ended before T2 began, reduced as Elle does: each
/// transaction gets edges from the ended transactions no later-ended one
/// already follows (at most about one per session).
fn realtime_edges(txns: &[Txn], committed: &[bool], edges: &mut Vec<(u32, u32, u8)>) {
    // (time, is a start, txn): at one instant starts come first (an end at the same time is not before).
    let mut events: Vec<(u64, bool, u32)> = Vec::new();
    for (t, txn) in txns.iter().enumerate().filter(|(t, _)| committed[*t]) {
        events.push((txn.start, true, t as u32));
        if let Some(end) = txn.end {
            events.push((end, false, t as u32));
        }
    }
    events.sort_unstable_by_key(|&(time, start, t)| (time, !start, t));
    let mut frontier: Vec<u32> = Vec::new();
    let mut preds: IntMap<u32, Vec<u32>> = IntMap::default();
    let mut covered = vec![false; txns.len()];
    for (_, start, t) in events {
        if start {
            if !frontier.is_empty() {
                preds.insert(t, frontier.clone());
            }
            continue;
        }
        if let Some(ps) = preds.remove(&t) {
            for p in ps {
                edges.push((p, t, REALTIME));
                covered[p as usize] = true;
            }
            frontier.retain(|p| !covered[*p as usize]);
        }
        frontier.push(t);
    }
}

/// The searches, in order of severity: a class and how it starts (the kind
/// of its first edge), what its path back may walk.
const SEARCHES: [(Class, u8, Rules); 4] = [
    (
        Class::G0,
        WW,
        Rules {
            allowed: WW,
            need_rw: false,
        },
    ),
    (
        Class::G1c,
        WR,
        Rules {
            allowed: WW | WR,
            need_rw: false,
        },
    ),
    (
        Class::GSingle,
        RW,
        Rules {
            allowed: WW | WR,
            need_rw: false,
        },
    ),
    (
        Class::G2Item,
        RW,
        Rules {
            allowed: WW | WR | RW,
            need_rw: true,
        },
    ),
];

/// Finds cycles in every strongly connected component: for each class,
/// the first edge of that kind from which a path back exists by the
/// class's rules gives the shortest such cycle through that edge. Reports
/// each cycle found (as (from, to, kind) edges); true if a search ran out of budget.
fn cycles(g: &Graph, opts: Options, found: &mut dyn FnMut(Name, Vec<(u32, u32, u8)>)) -> bool {
    let extra = (if opts.sessions { PROCESS } else { 0 }) | (if opts.realtime { REALTIME } else { 0 });
    let (comp, big) = g.components(WW | WR | RW | extra, |_| true);
    if big.is_empty() {
        return false;
    }
    let mut searcher = Searcher::new(g.len());
    let mut seen: Vec<Name> = Vec::new();
    let mut cut = false;
    let vias: Vec<u8> = if extra == 0 { vec![0] } else { vec![0, extra] };
    // G0 and G1c: only an edge inside a component of their own kinds can close
    // such a cycle (computed once for the whole graph: a cycle of those kinds
    // lies in one of them).
    let narrow: Vec<Option<Vec<u32>>> = vias
        .iter()
        .flat_map(|&with| {
            SEARCHES
                .iter()
                .map(move |(class, _, rules)| (*class, rules.allowed | with))
        })
        .map(|(class, allowed)| matches!(class, Class::G0 | Class::G1c).then(|| g.components(allowed, |_| true).0))
        .collect();
    for members in &big {
        let c = comp[members[0] as usize];
        let within = |v: u32| comp[v as usize] == c;
        for (vi, &with) in vias.iter().enumerate() {
            for (si, (class, first, rules)) in SEARCHES.into_iter().enumerate() {
                let rules = Rules {
                    allowed: rules.allowed | with,
                    ..rules
                };
                let wanted = |name: &Name| name.class == class && (with == 0) == (name.via == Via::Data);
                if !opts.all_cycles && seen.iter().any(wanted) {
                    continue;
                }
                let narrow = &narrow[vi * SEARCHES.len() + si];
                let mut budget = BUDGET;
                'edges: for &u in members {
                    for &(v, kinds) in g.out(u) {
                        if kinds & first == 0 || !within(v) {
                            continue;
                        }
                        if let Some(nc) = narrow
                            && (nc[u as usize] != nc[v as usize] || nc[u as usize] == u32::MAX)
                        {
                            continue;
                        }
                        let Some(mut path) = searcher.path(g, (v, u), rules, &within, &mut budget) else {
                            if budget == 0 {
                                cut = true;
                                break 'edges;
                            }
                            continue;
                        };
                        path.insert(0, (u, v, first));
                        if !simple(&path) {
                            continue;
                        }
                        let path = plainest(g, path);
                        let name = classify(&path);
                        if name.class == class && (with == 0) == (name.via == Via::Data) {
                            seen.push(name);
                            found(name, path);
                            break 'edges;
                        }
                    }
                }
            }
        }
    }
    cut
}

/// A cycle that passes no transaction twice (a breadth-first walk over
/// (node, walked an RW edge) states may join two cycles at a node).
fn simple(path: &[(u32, u32, u8)]) -> bool {
    let mut nodes: Vec<u32> = path.iter().map(|e| e.0).collect();
    nodes.sort_unstable();
    nodes.windows(2).all(|w| w[0] != w[1])
}

/// The cycle with each edge walked as RW that is a WW or WR edge too
/// walked as that: an anti-dependency that a write or read dependency
/// explains does not make the cycle a G-single or G2-item (u -rw-> v
/// -ww,rw-> u is a G-single, not a G2-item as well).
fn plainest(g: &Graph, path: Vec<(u32, u32, u8)>) -> Vec<(u32, u32, u8)> {
    (path.into_iter())
        .map(|(a, b, kind)| {
            let kinds = g.kinds(a, b);
            match kind {
                RW if kinds & WW != 0 => (a, b, WW),
                RW if kinds & WR != 0 => (a, b, WR),
                _ => (a, b, kind),
            }
        })
        .collect()
}

/// A cycle's class from the kinds it walks.
pub fn classify(path: &[(u32, u32, u8)]) -> Name {
    let rw = path.iter().filter(|e| e.2 == RW).count();
    let class = match rw {
        0 if path.iter().any(|e| e.2 == WR) => Class::G1c,
        0 => Class::G0,
        1 => Class::GSingle,
        _ => Class::G2Item,
    };
    let via = if path.iter().any(|e| e.2 == REALTIME) {
        Via::Realtime
    } else if path.iter().any(|e| e.2 == PROCESS) {
        Via::Session
    } else {
        Via::Data
    };
    Name { class, via }
}

/// A cycle with the operations each edge rests on.
fn explain(
    txns: &[Txn],
    writers: &Writers,
    longest: &IntMap<Key, (u32, u32)>,
    name: Name,
    path: Vec<(u32, u32, u8)>,
) -> Anomaly {
    let cycle: Vec<Link> = path
        .iter()
        .map(|&(a, b, kind)| Link {
            from: a as usize,
            to: b as usize,
            why: why(txns, writers, longest, a as usize, b as usize, kind),
        })
        .collect();
    Anomaly {
        name,
        txns: cycle.iter().map(|l| l.from).collect(),
        cycle,
        read: None,
    }
}

/// The evidence for edge `a -> b` of `kind`: the first key that shows it.
fn why(txns: &[Txn], writers: &Writers, longest: &IntMap<Key, (u32, u32)>, a: usize, b: usize, kind: u8) -> Why {
    let order_of = |k: &Key| -> &[Elem] {
        match longest.get(k).map(|&(t, i)| &txns[t as usize].ops[i as usize]) {
            Some(Op::Read(_, Some(l))) => l,
            _ => &[],
        }
    };
    let by = |k: Key, e: Elem, t: usize| writers.get(&(k, e)).is_some_and(|w| w.txn as usize == t);
    let op_of = |k: Key, e: Elem| writers.get(&(k, e)).map_or(0, |w| w.op as usize);
    match kind {
        WW => {
            for (j, op) in txns[b].ops.iter().enumerate() {
                if let Op::Append(k, then) = op {
                    let order = order_of(k);
                    if let Some(p) = order.iter().position(|e| e == then)
                        && p > 0
                        && by(*k, order[p - 1], a)
                    {
                        return Why::Ww {
                            key: *k,
                            first: order[p - 1],
                            then: *then,
                            from_op: op_of(*k, order[p - 1]),
                            to_op: j,
                        };
                    }
                }
            }
        }
        WR => {
            for (j, op) in txns[b].ops.iter().enumerate() {
                if let Op::Read(k, Some(l)) = op
                    && let Some(e) = l.last()
                    && by(*k, *e, a)
                {
                    return Why::Wr {
                        key: *k,
                        elem: *e,
                        from_op: op_of(*k, *e),
                        to_op: j,
                    };
                }
            }
        }
        RW => {
            for (j, op) in txns[a].ops.iter().enumerate() {
                if let Op::Read(k, Some(l)) = op
                    && let Some(e) = order_of(k).get(l.len())
                    && by(*k, *e, b)
                {
                    return Why::Rw {
                        key: *k,
                        elem: *e,
                        from_op: j,
                        to_op: op_of(*k, *e),
                    };
                }
            }
        }
        PROCESS => return Why::Session,
        _ => {}
    }
    Why::Realtime
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::hunt::history::Txn;

    /// A committed transaction on session `s`, from `start` to `start + 1`.
    fn ok(s: u64, start: u64, ops: Vec<Op>) -> Txn {
        Txn {
            end: Some(start + 1),
            ..Txn::new(0, s, Status::Ok, start, ops)
        }
    }

    fn a(k: Key, v: Elem) -> Op {
        Op::Append(k, v)
    }

    fn r(k: Key, l: &[Elem]) -> Op {
        Op::Read(k, Some(l.to_vec()))
    }

    fn history(mut txns: Vec<Txn>) -> History {
        for (i, t) in txns.iter_mut().enumerate() {
            t.index = i as u64;
            t.line = i + 1;
        }
        History { header: None, txns }
    }

    fn names(txns: Vec<Txn>, opts: Options) -> Vec<String> {
        let c = check(&history(txns), opts).unwrap();
        c.names().iter().map(Name::text).collect()
    }

    #[test]
    fn a_serial_history_is_clean() {
        let h = vec![
            ok(1, 0, vec![a(1, 1), a(2, 2)]),
            ok(2, 10, vec![r(1, &[1]), a(1, 3)]),
            ok(1, 20, vec![r(1, &[1, 3]), r(2, &[2]), a(2, 4)]),
            ok(2, 30, vec![r(2, &[2, 4]), r(3, &[])]),
        ];
        assert!(names(h.clone(), Options::default()).is_empty());
        let all = Options {
            realtime: true,
            sessions: true,
            all_cycles: true,
        };
        assert!(names(h, all).is_empty());
    }

    #[test]
    fn g0_write_cycle() {
        // T0 appended before T1 on key 1, after T1 on key 2.
        let h = vec![
            ok(1, 0, vec![a(1, 1), a(2, 4)]),
            ok(2, 0, vec![a(1, 2), a(2, 3)]),
            ok(3, 10, vec![r(1, &[1, 2]), r(2, &[3, 4])]),
        ];
        let c = check(&history(h), Options::default()).unwrap();
        assert_eq!(c.names(), vec![Name::of(Class::G0)]);
        let g0 = &c.anomalies[0];
        assert_eq!(g0.cycle.len(), 2);
        assert!(g0.cycle.iter().all(|l| matches!(l.why, Why::Ww { .. })));
    }

    #[test]
    fn g1c_circular_information_flow() {
        // T0 read T1's append, T1 read T0's.
        let h = vec![ok(1, 0, vec![a(1, 1), r(2, &[2])]), ok(2, 0, vec![a(2, 2), r(1, &[1])])];
        assert_eq!(names(h, Options::default()), vec!["G1c"]);
    }

    #[test]
    fn g_single_read_skew() {
        // T0 read key 1 before T1's append, and key 2 after it.
        let h = vec![
            ok(1, 0, vec![a(1, 1), a(2, 2)]),
            ok(2, 10, vec![r(1, &[1]), r(2, &[2, 4])]),
            ok(3, 10, vec![a(1, 3), a(2, 4)]),
            ok(1, 30, vec![r(1, &[1, 3])]),
        ];
        let c = check(&history(h), Options::default()).unwrap();
        assert_eq!(c.names(), vec![Name::of(Class::GSingle)]);
        let cyc = &c.anomalies[0].cycle;
        assert_eq!(cyc.iter().filter(|l| matches!(l.why, Why::Rw { .. })).count(), 1);
        assert!(!forbidden(Name::of(Class::GSingle), Level::ReadUncommitted));
        assert!(forbidden(Name::of(Class::G1c), Level::ReadUncommitted));
        assert_eq!(Level::parse("READ-UNCOMMITTED"), Some(Level::ReadUncommitted));
        assert_eq!(
            Level::parse("read uncommitted").map(|l| l.flag()),
            Some("read-uncommitted")
        );
        assert!(!forbidden(Name::of(Class::GSingle), Level::ReadCommitted));
        assert!(forbidden(Name::of(Class::GSingle), Level::RepeatableRead));
    }

    #[test]
    fn g2_item_write_skew() {
        // Each read the key the other appended to, before it did.
        let h = vec![
            ok(1, 0, vec![r(1, &[]), a(2, 2)]),
            ok(2, 0, vec![r(2, &[]), a(1, 1)]),
            ok(3, 10, vec![r(1, &[1]), r(2, &[2])]),
        ];
        let c = check(&history(h), Options::default()).unwrap();
        assert_eq!(c.names(), vec![Name::of(Class::G2Item)]);
        let cyc = &c.anomalies[0].cycle;
        assert_eq!(cyc.len(), 2);
        assert!(cyc.iter().all(|l| matches!(l.why, Why::Rw { .. })));
        assert!(!forbidden(c.anomalies[0].name, Level::RepeatableRead));
        assert!(forbidden(c.anomalies[0].name, Level::Serializable));
    }

    #[test]
    fn g1a_aborted_read() {
        let mut failed = ok(1, 0, vec![a(1, 1)]);
        failed.status = Status::Fail;
        let h = vec![failed, ok(2, 10, vec![r(1, &[1])])];
        assert_eq!(names(h, Options::default()), vec!["G1a"]);
    }

    #[test]
    fn g1b_intermediate_read() {
        let h = vec![
            ok(1, 0, vec![a(1, 1), a(1, 2)]),
            ok(2, 0, vec![r(1, &[1])]),
            ok(3, 10, vec![r(1, &[1, 2])]),
        ];
        assert_eq!(names(h, Options::default()), vec!["G1b"]);
        // Its own intermediate state is no anomaly.
        let h = vec![ok(1, 0, vec![a(1, 1), r(1, &[1]), a(1, 2)])];
        assert!(names(h, Options::default()).is_empty());
    }

    #[test]
    fn garbage_duplicates_incompatible_orders_and_internal() {
        let h = vec![ok(1, 0, vec![a(1, 1)]), ok(2, 10, vec![r(1, &[1, 9])])];
        assert_eq!(names(h, Options::default()), vec!["garbage-read"]);
        let h = vec![ok(1, 0, vec![a(1, 1)]), ok(2, 10, vec![r(1, &[1, 1])])];
        assert!(names(h, Options::default()).contains(&"duplicate-elements".to_string()));
        let h = vec![
            ok(1, 0, vec![a(1, 1)]),
            ok(2, 0, vec![a(1, 2)]),
            ok(3, 10, vec![r(1, &[1, 2])]),
            ok(4, 10, vec![r(1, &[2, 1])]),
        ];
        assert_eq!(names(h, Options::default()), vec!["incompatible-order"]);
        // It appended 2 and does not see it; then a read that lost what it read before.
        let h = vec![
            ok(1, 0, vec![a(1, 1)]),
            ok(2, 10, vec![r(1, &[1]), a(1, 2), r(1, &[1])]),
        ];
        assert_eq!(names(h, Options::default()), vec!["internal"]);
        // (Reading less than before also closes a cycle with the writer: both are said.)
        let h = vec![ok(1, 0, vec![a(1, 1)]), ok(2, 10, vec![r(1, &[1]), r(1, &[])])];
        assert!(names(h, Options::default()).contains(&"internal".to_string()));
    }

    #[test]
    fn an_element_appended_twice_to_a_key_is_damage() {
        let e = check(
            &history(vec![ok(1, 0, vec![a(1, 1)]), ok(2, 0, vec![a(1, 1)])]),
            Options::default(),
        )
        .unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.what.contains("line 1"), "{}", e.what);
    }

    #[test]
    fn realtime_and_session_edges_find_stale_reads() {
        // T1 ended before T2 began, yet T2 did not see T1's append: a stale
        // read, a cycle only with real-time (or session) order.
        let h = vec![
            ok(1, 0, vec![a(1, 1)]),
            ok(1, 10, vec![r(1, &[])]),
            ok(2, 20, vec![r(1, &[1])]),
        ];
        assert!(names(h.clone(), Options::default()).is_empty());
        let rt = Options {
            realtime: true,
            ..Options::default()
        };
        assert_eq!(names(h.clone(), rt), vec!["G-single-realtime"]);
        let s = Options {
            sessions: true,
            ..Options::default()
        };
        assert_eq!(names(h, s), vec!["G-single-process"]);
    }

    #[test]
    fn unknown_outcomes_count_when_seen() {
        let mut info = ok(1, 0, vec![a(1, 1), r(2, &[])]);
        info.status = Status::Info;
        info.end = None;
        // The info transaction's append was read, so it committed, and its
        // read of key 2 is unknown (Jepsen's :info carries no reads).
        info.ops[1] = Op::Read(2, None);
        let h = vec![info, ok(2, 10, vec![r(1, &[1]), a(2, 2)])];
        let c = check(&history(h), Options::default()).unwrap();
        assert_eq!(c.committed, 2);
        assert!(c.anomalies.is_empty());
    }

    /// U -rw-> V on key 1; V -> U both ww (key 2) and rw (key 3): a
    /// G-single (the ww explains V -> U), not a G2-item too.
    #[test]
    fn an_edge_a_write_explains_is_not_walked_as_an_anti_dependency() {
        let h = vec![
            ok(1, 0, vec![r(1, &[]), a(2, 20), a(3, 30)]),
            ok(2, 0, vec![r(3, &[]), a(1, 10), a(2, 21)]),
            ok(3, 10, vec![r(1, &[10]), r(2, &[21, 20]), r(3, &[30])]),
        ];
        assert_eq!(names(h.clone(), Options::default()), vec!["G-single"]);
        let all = Options {
            all_cycles: true,
            ..Options::default()
        };
        let c = check(&history(h), all).unwrap();
        assert_eq!(c.counts.keys().collect::<Vec<_>>(), ["G-single"], "{:?}", c.counts);
        let why = &c.anomalies[0].cycle;
        assert!(why.iter().any(|l| matches!(l.why, Why::Ww { key: 2, .. })), "{why:?}");
        assert!(why.iter().any(|l| matches!(l.why, Why::Rw { key: 1, .. })), "{why:?}");
    }

    #[test]
    fn elements_need_be_unique_per_key_only() {
        // Jepsen's numbering: key 1's first append is 1, and so is key 2's.
        let h = vec![
            ok(1, 0, vec![r(1, &[]), a(2, 1)]),
            ok(2, 0, vec![r(2, &[]), a(1, 1)]),
            ok(3, 10, vec![r(1, &[1]), r(2, &[1])]),
        ];
        assert_eq!(names(h.clone(), Options::default()), vec!["G2-item"]);
        // An element read on a key it was not appended to: nobody wrote it there.
        let mut garbage = h.clone();
        garbage[2].ops[1] = r(2, &[1, 7]);
        garbage.push(ok(4, 20, vec![a(1, 7)]));
        assert!(names(garbage, Options::default()).contains(&"garbage-read".to_string()));
        // The same element appended to one key twice cannot be read as list-append.
        let mut twice = h;
        twice.push(ok(4, 20, vec![a(2, 1)]));
        let Err(e) = check(&history(twice), Options::default()) else {
            panic!("damage")
        };
        assert!(e.what.contains("appended to key 2 twice"), "{}", e.what);
    }

    /// Jepsen's :info is an outcome nobody knows, at a time that ends
    /// nothing: no realtime edge leaves it, or a read before it took
    /// effect would make a cycle that did not happen.
    #[test]
    fn an_info_completion_is_no_realtime_source() {
        let text = "\
{:type :invoke, :f :txn, :value [[:append 1 1]], :process 0, :time 0}
{:type :info, :f :txn, :value [[:append 1 1]], :process 0, :time 10}
{:type :invoke, :f :txn, :value [[:r 1 nil]], :process 1, :time 20}
{:type :ok, :f :txn, :value [[:r 1 nil]], :process 1, :time 30}
{:type :invoke, :f :txn, :value [[:r 1 nil]], :process 2, :time 40}
{:type :ok, :f :txn, :value [[:r 1 [1]]], :process 2, :time 50}
";
        let h = History::parse(text).unwrap();
        let rt = Options {
            realtime: true,
            ..Options::default()
        };
        let c = check(&h, rt).unwrap();
        assert_eq!(c.committed, 3, "the :info append was read, so it committed");
        assert!(c.anomalies.is_empty(), "{:?}", c.names());
        // Had it ended at its :info time, process 1's read of nil (the
        // empty list) would sit after it in real time: G-single-realtime.
        let mut ended = h;
        ended.txns[0].end = Some(10);
        assert_eq!(
            check(&ended, rt)
                .unwrap()
                .names()
                .iter()
                .map(|n| n.text())
                .collect::<Vec<_>>(),
            vec!["G-single-realtime"]
        );
    }

    #[test]
    fn all_cycles_reports_one_per_component() {
        let skew = |k1, k2, s| {
            vec![
                ok(s, 0, vec![r(k1, &[]), a(k2, k2)]),
                ok(s + 1, 0, vec![r(k2, &[]), a(k1, k1)]),
                ok(s + 2, 10, vec![r(k1, &[k1]), r(k2, &[k2])]),
            ]
        };
        let mut h = skew(1, 2, 1);
        h.extend(skew(3, 4, 4));
        let c = check(&history(h.clone()), Options::default()).unwrap();
        assert_eq!(c.anomalies.len(), 1);
        let all = Options {
            all_cycles: true,
            ..Options::default()
        };
        let c = check(&history(h), all).unwrap();
        assert_eq!(c.anomalies.len(), 2);
        assert_eq!(c.counts["G2-item"], 2);
    }

    #[test]
    fn names_round_trip() {
        for s in [
            "G0",
            "G1a",
            "G1b",
            "G1c",
            "G-single",
            "G2-item",
            "G-single-realtime",
            "G0-process",
            "internal",
        ] {
            assert_eq!(Name::parse(s).map(|n| n.text()).as_deref(), Some(s));
        }
        assert_eq!(Name::parse("G3"), None);
    }
}
