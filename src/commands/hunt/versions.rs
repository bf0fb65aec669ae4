//! The checker's first phase: who appended what, which transactions
//! committed, each key's version order, and what the reads alone show.
//!
//! List-append is traceable: every appended element is unique per key, so
//! a read's list says who wrote each element and in which order the key's
//! versions came. The longest committed read of a key is its version order;
//! a read that is not a prefix of it is an incompatible order. Reads also
//! show G1a (an aborted transaction's element), G1b (an element its writer
//! appended over again), garbage (an element nobody appended), duplicate
//! elements, and a transaction not seeing its own appends (internal).
use super::anomaly::{Anomaly, Class, IntMap, Name, ReadAt};
use super::history::{Damage, Elem, Key, Op, Status, Txn};
use super::register::Given;

/// Who appended an element to a key.
#[derive(Clone, Copy)]
pub struct Writer {
    pub txn: u32,
    pub op: u32,
    /// The writer's last append to that key.
    pub last: bool,
}

/// Up to this many operations, a transaction is searched rather than indexed.
pub const SHORT: usize = 16;

/// Who appended each (key, element).
pub type Writers = IntMap<(Key, Elem), Writer>;

/// Who wrote what, by key and element. An element appended twice to one
/// key cannot be read as list-append: damage. Elements need be unique per
/// key only, as Elle asks: Jepsen's generator numbers each key's appends
/// 1, 2, 3 ...
pub fn writers(txns: &[Txn]) -> Result<Writers, Damage> {
    let mut writers: Writers = IntMap::default();
    // As many as there are appends, no more (a million transactions' map
    // reserved at twice that would be twice the memory).
    writers.reserve(
        txns.iter()
            .map(|t| t.ops.iter().filter(|o| matches!(o, Op::Append(..))).count())
            .sum(),
    );
    for (t, txn) in txns.iter().enumerate() {
        // A long transaction (a --check file's) has each key's last append
        // looked up, not searched for after every append.
        let last_of: Option<IntMap<Key, usize>> = (txn.ops.len() > SHORT).then(|| {
            (txn.ops.iter().enumerate())
                .filter_map(|(i, o)| match o {
                    Op::Append(k, _) => Some((*k, i)),
                    _ => None,
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
    Ok(writers)
}

/// Which transactions committed: ok, and an unknown outcome whose element
/// a committed read saw.
pub fn committed(txns: &[Txn], writers: &Writers) -> Vec<bool> {
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
    committed
}

/// Each key's version order: its longest committed read, as (transaction,
/// operation); or, as Elle infers it, a key appended to once (by a
/// transaction that did not fail) whose reads never showed it: [], then
/// that element.
pub struct VersionOrders {
    pub longest: IntMap<Key, (u32, u32)>,
    pub single: IntMap<Key, Elem>,
    /// Orders known beside the reads (an rw-register's: [`super::register`]).
    pub given: IntMap<Key, Given>,
}

impl VersionOrders {
    pub fn from_longest_reads(txns: &[Txn]) -> VersionOrders {
        let mut longest: IntMap<Key, (u32, u32)> = IntMap::default();
        for (t, txn) in txns.iter().enumerate().filter(|(t, _)| txns[*t].status == Status::Ok) {
            for (i, op) in txn.ops.iter().enumerate() {
                if let Op::Read(k, Some(l)) = op {
                    let e = longest.entry(*k).or_insert((t as u32, i as u32));
                    if l.len() > list_at(txns, *e).len() {
                        *e = (t as u32, i as u32);
                    }
                }
            }
        }
        // Keys appended to once: Some(element), or None for more than once.
        let mut once: IntMap<Key, Option<Elem>> = IntMap::default();
        for txn in txns.iter().filter(|t| t.status != Status::Fail) {
            for op in &txn.ops {
                if let Op::Append(k, v) = op {
                    once.entry(*k).and_modify(|e| *e = None).or_insert(Some(*v));
                }
            }
        }
        let single = once
            .into_iter()
            .filter_map(|(k, v)| Some((k, v?)))
            .filter(|(k, _)| longest.get(k).is_none_or(|at| list_at(txns, *at).is_empty()))
            .collect();
        VersionOrders {
            longest,
            single,
            given: IntMap::default(),
        }
    }

    /// Key `k`'s order (empty: nothing known of it).
    pub fn of<'a>(&'a self, txns: &'a [Txn], k: Key) -> &'a [Elem] {
        if let Some(g) = self.given.get(&k) {
            return &g.order;
        }
        match self.single.get(&k) {
            Some(e) => std::slice::from_ref(e),
            None => self.longest.get(&k).map_or(&[], |at| list_at(txns, *at)),
        }
    }
}

/// The list the read at (transaction, operation) returned.
pub fn list_at(txns: &[Txn], (t, i): (u32, u32)) -> &[Elem] {
    match &txns[t as usize].ops[i as usize] {
        Op::Read(_, Some(l)) => l,
        _ => &[],
    }
}

/// What the committed reads show against the writers and the version
/// orders: internal, duplicate elements, garbage, G1a, G1b, incompatible
/// orders, each given to `note` in the history's order.
pub fn read_anomalies(txns: &[Txn], writers: &Writers, orders: &VersionOrders, note: &mut dyn FnMut(Anomaly)) {
    // Per key: where its order first repeats an element, and first holds one
    // nobody appended or an aborted transaction did.
    let mut flaws_of: IntMap<Key, (Option<usize>, Option<usize>)> = IntMap::default();
    for (t, txn) in txns.iter().enumerate() {
        if txn.status != Status::Ok {
            continue;
        }
        internal(t, txn, note);
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
            let at = orders.longest[k];
            let order = orders.of(txns, *k);
            let prefix = order.starts_with(l);
            // A read that is a prefix of the key's order holds what the
            // order's first elements hold (each looked at once per key);
            // another is looked at element by element.
            let flaws = if prefix {
                let f = flaws_of.entry(*k).or_insert_with(|| flaws(*k, order, writers, txns));
                (f.0.filter(|p| *p < l.len()), f.1.filter(|p| *p < l.len()))
            } else {
                flaws(*k, l, writers, txns)
            };
            if let Some(p) = flaws.0 {
                note(read(Class::DuplicateElements, Some(l[p]), None, None));
            }
            if let Some(p) = flaws.1 {
                let e = l[p];
                match writers.get(&(*k, e)) {
                    None => note(read(Class::Garbage, Some(e), None, None)),
                    Some(w) => note(read(Class::G1a, Some(e), Some(w.txn as usize), None)),
                }
            }
            let last = l.last().and_then(|e| writers.get(&(*k, *e)));
            if let (Some(e), Some(w)) = (l.last(), last)
                && w.txn as usize != t
                && !w.last
                && txns[w.txn as usize].status != Status::Fail
            {
                note(read(Class::G1b, Some(*e), Some(w.txn as usize), None));
            }
            if !prefix {
                let other = Some((at.0 as usize, at.1 as usize));
                note(read(Class::IncompatibleOrder, None, None, other));
            }
        }
    }
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
            // (An rw-register's operations are lifted before the checker sees them.)
            Op::Read(_, None) | Op::Write(..) | Op::Get(..) => {}
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
                // A future read: an element this transaction appends only later.
                let later = txn.ops[i + 1..].iter().enumerate().find_map(|(j, o)| match o {
                    Op::Append(k2, v) if *k2 == k && l.contains(v) => Some((i + 1 + j, *v)),
                    _ => None,
                });
                if let Some((j, v)) = later {
                    note(Anomaly {
                        name: Name::of(Class::FutureRead),
                        txns: vec![t],
                        cycle: Vec::new(),
                        read: Some(ReadAt {
                            txn: t,
                            op: i,
                            key: k,
                            elem: Some(v),
                            writer: Some(t),
                            other: Some((t, j)),
                        }),
                    });
                }
            }
        }
    }
}

/// Lost updates, as Elle finds them: committed transactions that read a
/// key (before writing it) and then appended to it, two or more of them
/// having read the same version. No version order is needed: both read
/// one state and both wrote over it, so one's update is lost to the other.
pub fn lost_updates(txns: &[Txn], note: &mut dyn FnMut(Anomaly)) {
    // (key, length read, last element read, transaction, read's op)
    let mut cases: Vec<(Key, usize, Option<Elem>, u32, u32)> = Vec::new();
    for (t, txn) in txns.iter().enumerate().filter(|(_, x)| x.status == Status::Ok) {
        // Per key: the first read's op (before any write of it); whether written since.
        let mut first: Vec<(Key, usize, bool)> = Vec::new();
        for (i, op) in txn.ops.iter().enumerate() {
            let k = op.key();
            let at = first.iter().position(|f| f.0 == k);
            match (op, at) {
                (Op::Read(_, Some(_)), None) => first.push((k, i, false)),
                (Op::Append(..), Some(p)) if !first[p].2 => {
                    first[p].2 = true;
                    if let Op::Read(_, Some(l)) = &txn.ops[first[p].1] {
                        cases.push((k, l.len(), l.last().copied(), t as u32, first[p].1 as u32));
                    }
                }
                _ => {}
            }
        }
    }
    cases.sort_unstable();
    let read = |c: &(Key, usize, Option<Elem>, u32, u32)| list_at(txns, (c.3, c.4));
    for group in cases.chunk_by(|a, b| (a.0, a.1, a.2) == (b.0, b.1, b.2)) {
        // The same length and last element: the same list, unless the reads disagree.
        let same: Vec<_> = group.iter().filter(|c| read(c) == read(&group[0])).collect();
        if same.len() < 2 {
            continue;
        }
        let (k, _, _, t, op) = *same[0];
        note(Anomaly {
            name: Name::of(Class::LostUpdate),
            txns: same.iter().map(|c| c.3 as usize).collect(),
            cycle: Vec::new(),
            read: Some(ReadAt {
                txn: t as usize,
                op: op as usize,
                key: k,
                elem: None,
                writer: None,
                other: Some((same[1].3 as usize, same[1].4 as usize)),
            }),
        });
    }
}

/// Dirty updates, as Elle finds them: in a key's version order, a
/// committed transaction's element right after (unknown outcomes aside)
/// an aborted one's: a write that built on a state that never committed.
pub fn dirty_updates(txns: &[Txn], writers: &Writers, orders: &VersionOrders, note: &mut dyn FnMut(Anomaly)) {
    // Only a key an aborted transaction appended to can show one.
    let mut aborted: Vec<Key> = (txns.iter().filter(|t| t.status == Status::Fail))
        .flat_map(|t| t.ops.iter())
        .filter_map(|o| match o {
            Op::Append(k, _) => Some(*k),
            _ => None,
        })
        .collect();
    aborted.sort_unstable();
    aborted.dedup();
    for k in aborted {
        let Some(&at) = orders.longest.get(&k) else { continue };
        let order = list_at(txns, at);
        let mut below: Option<(Elem, Writer)> = None; // the aborted element the state ends with
        for &e in order {
            let Some(w) = writers.get(&(k, e)) else { continue };
            match txns[w.txn as usize].status {
                Status::Fail => {
                    below = below.or(Some((e, *w)));
                }
                Status::Info => {}
                Status::Ok => {
                    if let Some((aborted, by)) = below.take() {
                        note(Anomaly {
                            name: Name::of(Class::DirtyUpdate),
                            txns: vec![by.txn as usize, w.txn as usize],
                            cycle: Vec::new(),
                            read: Some(ReadAt {
                                txn: at.0 as usize,
                                op: at.1 as usize,
                                key: k,
                                elem: Some(aborted),
                                writer: Some(by.txn as usize),
                                other: Some((w.txn as usize, w.op as usize)),
                            }),
                        });
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn txn(status: Status, ops: Vec<Op>) -> Txn {
        Txn::new(0, 1, status, 0, ops)
    }

    #[test]
    fn the_longest_read_is_the_order_and_writers_know_their_last_append() {
        let txns = vec![
            txn(Status::Ok, vec![Op::Append(1, 1), Op::Append(1, 2)]),
            txn(Status::Ok, vec![Op::Read(1, Some(vec![1]))]),
            txn(Status::Ok, vec![Op::Read(1, Some(vec![1, 2]))]),
            // A failed transaction's longer read is no order.
            txn(Status::Fail, vec![Op::Read(1, Some(vec![1, 2, 3]))]),
        ];
        let w = writers(&txns).unwrap();
        assert!(!w[&(1, 1)].last && w[&(1, 2)].last);
        let orders = VersionOrders::from_longest_reads(&txns);
        assert_eq!(orders.of(&txns, 1), &[1, 2]);
        assert_eq!(orders.of(&txns, 9), &[] as &[Elem]);
        assert_eq!(committed(&txns, &w), vec![true, true, true, false]);
        let mut seen = Vec::new();
        read_anomalies(&txns, &w, &orders, &mut |a| seen.push(a.name.text()));
        assert_eq!(seen, vec!["G1b"], "T1 read T0's intermediate 1");
    }

    #[test]
    fn an_unknown_outcome_read_by_a_committed_one_committed() {
        let txns = vec![
            txn(Status::Info, vec![Op::Append(1, 1)]),
            txn(Status::Info, vec![Op::Append(2, 1)]),
            txn(Status::Ok, vec![Op::Read(1, Some(vec![1]))]),
        ];
        let w = writers(&txns).unwrap();
        assert_eq!(committed(&txns, &w), vec![true, false, true]);
    }
}
