//! The checker's second phase: the dependency edges, by kind.
//! - ww: T1 appended the element right before T2's in the key's order;
//! - wr: T2 read a list whose last element T1 appended;
//! - rw: T1 read a list that stops right before T2's element;
//! - optionally T1 -> T2 when T1 ended before T2 began (real time), or came
//!   before it on the same session (process).
//!
//! Edges are (from, to, kind) triples between committed transactions.
use super::anomaly::IntMap;
use super::graph::{IRW, PROCESS, PRW, REALTIME, RW, WR, WW};
use super::history::{Elem, Key, Op, Status, Txn};
use super::versions::{VersionOrders, Writers, list_at};

pub type Edge = (u32, u32, u8);

/// wr and rw edges from each committed read that is a prefix of its key's
/// order (one that is not is an incompatible order, and says nothing).
pub fn read_edges(txns: &[Txn], writers: &Writers, orders: &VersionOrders, committed: &[bool], edges: &mut Vec<Edge>) {
    for (t, txn) in txns.iter().enumerate() {
        if txn.status != super::history::Status::Ok {
            continue;
        }
        for (j, op) in txn.ops.iter().enumerate() {
            let Op::Read(k, Some(l)) = op else { continue };
            let order = orders.of(txns, *k);
            if !order.starts_with(l) {
                continue;
            }
            let last = l.last().and_then(|e| writers.get(&(*k, *e)));
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
                edges.push((t as u32, w.txn, RW | shown_by(txn, j, l)));
            }
        }
    }
}

/// What shows an rw edge from read `j` of `txn` (which returned `l`): the
/// range of a predicate read without the key (PRW), or a read of it (IRW).
fn shown_by(txn: &Txn, j: usize, l: &[Elem]) -> u8 {
    if l.is_empty() && txn.scan_of(j).is_some() {
        PRW
    } else {
        IRW
    }
}

/// ww edges: consecutive elements of each key's order, by different writers.
pub fn write_edges(txns: &[Txn], writers: &Writers, orders: &VersionOrders, committed: &[bool], edges: &mut Vec<Edge>) {
    let read = (orders.longest.iter())
        .filter(|(k, _)| !orders.given.contains_key(k))
        .map(|(k, at)| (*k, list_at(txns, *at)));
    let given = orders.given.iter().map(|(k, g)| (*k, g.order.as_slice()));
    for (k, order) in read.chain(given) {
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
}

/// Edges to appends no read showed, as Elle infers them: an element
/// missing from its key's version order was appended after the order's
/// last element, so its writer follows that element's writer (ww) and
/// every transaction that read the whole order (rw).
pub fn unobserved_edges(
    txns: &[Txn],
    writers: &Writers,
    orders: &VersionOrders,
    committed: &[bool],
    edges: &mut Vec<Edge>,
) {
    // Keys with more committed appends than their order holds.
    let mut appends: IntMap<Key, u32> = IntMap::default();
    for (&(k, _), w) in writers.iter() {
        if committed[w.txn as usize] {
            *appends.entry(k).or_default() += 1;
        }
    }
    let short: IntMap<Key, Vec<Elem>> = appends
        .into_iter()
        .filter(|(k, n)| (*n as usize) > orders.of(txns, *k).len())
        .map(|(k, _)| (k, Vec::new()))
        .collect();
    if short.is_empty() {
        return;
    }
    let mut short = short;
    // Who read the whole order of each such key (and how the read shows it).
    let mut readers: IntMap<Key, Vec<(u32, u8)>> = IntMap::default();
    for (t, txn) in txns.iter().enumerate().filter(|(_, x)| x.status == Status::Ok) {
        for (j, op) in txn.ops.iter().enumerate() {
            if let Op::Read(k, Some(l)) = op
                && short.contains_key(k)
                && orders.of(txns, *k) == l.as_slice()
            {
                readers.entry(*k).or_default().push((t as u32, shown_by(txn, j, l)));
            }
        }
    }
    for (&(k, e), w) in writers.iter() {
        if let Some(v) = short.get_mut(&k)
            && committed[w.txn as usize]
        {
            v.push(e);
        }
    }
    let mut keys: Vec<Key> = short.keys().copied().collect();
    keys.sort_unstable();
    for k in keys {
        let order = orders.of(txns, k);
        let seen: IntMap<Elem, ()> = order.iter().map(|e| (*e, ())).collect();
        let last = order.last().and_then(|e| writers.get(&(k, *e))).map(|w| w.txn);
        let mut unseen: Vec<u32> = (short[&k].iter())
            .filter(|e| !seen.contains_key(e))
            .map(|e| writers[&(k, *e)].txn)
            .collect();
        unseen.sort_unstable();
        unseen.dedup();
        for u in unseen {
            if let Some(l) = last
                && l != u
                && committed[l as usize]
            {
                edges.push((l, u, WW));
            }
            for &(r, by) in readers.get(&k).into_iter().flatten() {
                if r != u {
                    edges.push((r, u, RW | by));
                }
            }
        }
    }
}

/// Each session's committed transactions in the order it ran them.
pub fn session_edges(txns: &[Txn], committed: &[bool], edges: &mut Vec<Edge>) {
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
pub fn realtime_edges(txns: &[Txn], committed: &[bool], edges: &mut Vec<Edge>) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::hunt::history::{Op, Status};
    use crate::commands::hunt::versions::{VersionOrders, committed, writers};

    #[test]
    fn each_kind_from_the_reads_and_the_order() {
        // T0 appends 1, T1 reads [1] and appends 2, T2 reads [] then T3 reads [1 2].
        let mut txns = vec![
            Txn::new(0, 1, Status::Ok, 0, vec![Op::Append(1, 1)]),
            Txn::new(1, 2, Status::Ok, 10, vec![Op::Read(1, Some(vec![1])), Op::Append(1, 2)]),
            Txn::new(2, 1, Status::Ok, 20, vec![Op::Read(1, Some(vec![]))]),
            Txn::new(3, 2, Status::Ok, 30, vec![Op::Read(1, Some(vec![1, 2]))]),
        ];
        for (i, t) in txns.iter_mut().enumerate() {
            t.end = Some(i as u64 * 10 + 5);
        }
        let w = writers(&txns).unwrap();
        let c = committed(&txns, &w);
        let orders = VersionOrders::from_longest_reads(&txns);
        let mut e = Vec::new();
        read_edges(&txns, &w, &orders, &c, &mut e);
        e.sort();
        assert_eq!(e, vec![(0, 1, WR), (1, 3, WR), (2, 0, RW | IRW)]);
        let mut e = Vec::new();
        write_edges(&txns, &w, &orders, &c, &mut e);
        assert_eq!(e, vec![(0, 1, WW)]);
        let mut e = Vec::new();
        session_edges(&txns, &c, &mut e);
        e.sort();
        assert_eq!(e, vec![(0, 2, PROCESS), (1, 3, PROCESS)]);
        let mut e = Vec::new();
        realtime_edges(&txns, &c, &mut e);
        e.sort();
        assert_eq!(e, vec![(0, 1, REALTIME), (1, 2, REALTIME), (2, 3, REALTIME)]);
    }
}
