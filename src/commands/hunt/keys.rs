//! What an rw-register history's version orders may also take from the
//! order its operations ran in, where the user vouches for each key
//! (Elle's `:sequential-keys?` and `:linearizable-keys?`):
//! - sequentially consistent (`--sequential-keys`): each session sees a
//!   key's versions in order, so the last version one of its transactions
//!   saw or wrote comes no later than the first its next transaction on
//!   that key sees or writes;
//! - linearizable (`--linearizable-keys`): the same for any two
//!   transactions of which one ended before the other began.
//!
//! Each transaction shows a key to those after it by its last write, else
//! its first read (nil: the key had no version), and takes it up at its
//! first read, else its first write. A version that must come before nil
//! contradicts nil's coming first.
use super::anomaly::IntMap;
use super::history::{Elem, Key, Status, Txn};

/// What the order of operations says of one key's versions.
#[derive(Debug, Default, PartialEq)]
pub struct Assumed {
    /// (a, b): version a came before version b.
    pub before: Vec<(Elem, Elem)>,
    /// Versions that came before nil, which comes first.
    pub nil_after: Vec<Elem>,
}

/// Per key, (the first version the transaction saw or wrote, the last it
/// showed); `None`: nil. A transaction whose outcome is unknown shows only
/// its writes (what it read is not known).
type Ends = Vec<(Key, Option<Elem>, Option<Elem>)>;

fn ends(txn: &Txn) -> Ends {
    let reads = txn.status == Status::Ok;
    let mut out: Ends = Vec::new();
    for op in &txn.ops {
        use super::history::Op;
        match *op {
            Op::Get(k, v) if reads && !out.iter().any(|e| e.0 == k) => out.push((k, v, v)),
            // A register's nil read as a history file holds it (JSON
            // lines' null, EDN's nil read as an empty list).
            Op::Read(k, _) if reads && !out.iter().any(|e| e.0 == k) => out.push((k, None, None)),
            Op::Write(k, v) => match out.iter_mut().find(|e| e.0 == k) {
                Some(e) => e.2 = Some(v),
                None => out.push((k, Some(v), Some(v))),
            },
            _ => {}
        }
    }
    out
}

fn link(out: &mut IntMap<Key, Assumed>, k: Key, shown: Option<Elem>, seen: Option<Elem>) {
    match (shown, seen) {
        (Some(a), Some(b)) if a != b => out.entry(k).or_default().before.push((a, b)),
        (Some(a), None) => out.entry(k).or_default().nil_after.push(a),
        _ => {}
    }
}

/// Each session's committed transactions in the order it ran them, key by
/// key (a transaction that left a key alone is no link in its chain).
pub fn by_sessions(txns: &[Txn]) -> IntMap<Key, Assumed> {
    let mut out = IntMap::default();
    let mut order: Vec<usize> = (0..txns.len()).filter(|t| txns[*t].status == Status::Ok).collect();
    order.sort_by_key(|t| (txns[*t].session, txns[*t].start, *t));
    let mut shown: IntMap<Key, Option<Elem>> = IntMap::default();
    for session in order.chunk_by(|a, b| txns[*a].session == txns[*b].session) {
        shown.clear();
        for &t in session {
            for (k, first, last) in ends(&txns[t]) {
                if let Some(before) = shown.insert(k, last) {
                    link(&mut out, k, before, first);
                }
            }
        }
    }
    out
}

/// A committed transaction's versions before those of every transaction
/// that began after it ended (an unknown outcome's writes included), key
/// by key, reduced as the checker's real-time edges are: each transaction
/// is linked from the ended ones no later-ended one on the key already
/// follows.
pub fn by_realtime(txns: &[Txn]) -> IntMap<Key, Assumed> {
    let mut out = IntMap::default();
    let shows: Vec<Ends> = (txns.iter())
        .map(|t| match t.status {
            Status::Ok | Status::Info => ends(t),
            Status::Fail => Vec::new(),
        })
        .collect();
    // (time, is a start, txn): at one instant starts come first (an end at the same time is not before).
    let mut events: Vec<(u64, bool, u32)> = Vec::new();
    for (t, txn) in txns.iter().enumerate().filter(|(t, _)| !shows[*t].is_empty()) {
        events.push((txn.start, true, t as u32));
        if let (Status::Ok, Some(end)) = (txn.status, txn.end) {
            events.push((end, false, t as u32));
        }
    }
    events.sort_unstable_by_key(|&(time, start, t)| (time, !start, t));
    let last_of = |p: u32, k: Key| shows[p as usize].iter().find(|e| e.0 == k).and_then(|e| e.2);
    let mut frontier: IntMap<Key, Vec<u32>> = IntMap::default();
    let mut linked: IntMap<(u32, Key), Vec<u32>> = IntMap::default();
    for (_, start, t) in events {
        for &(k, first, _) in &shows[t as usize] {
            if start {
                let Some(before) = frontier.get(&k).filter(|f| !f.is_empty()) else {
                    continue;
                };
                for &p in before {
                    link(&mut out, k, last_of(p, k), first);
                }
                linked.insert((t, k), before.clone());
            } else {
                let f = frontier.entry(k).or_default();
                if let Some(covered) = linked.remove(&(t, k)) {
                    f.retain(|p| !covered.contains(p));
                }
                f.push(t);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::hunt::history::Op;

    fn txn(i: u64, session: u64, status: Status, (start, end): (u64, u64), ops: Vec<Op>) -> Txn {
        let mut t = Txn::new(i, session, status, start, ops);
        t.end = Some(end);
        t
    }

    #[test]
    fn a_session_s_transactions_see_a_key_s_versions_in_order() {
        let txns = vec![
            // Session 1: writes 1, reads 2 then writes 3, reads nil.
            txn(0, 1, Status::Ok, (0, 1), vec![Op::Write(1, 1)]),
            txn(
                1,
                1,
                Status::Ok,
                (2, 3),
                vec![Op::Get(1, Some(2)), Op::Write(1, 3), Op::Write(1, 4)],
            ),
            // Leaves key 1 alone: no link in its chain.
            txn(2, 1, Status::Ok, (4, 5), vec![Op::Get(2, None)]),
            txn(3, 1, Status::Ok, (6, 7), vec![Op::Get(1, None)]),
            // Another session's order is its own; a failed one is no one's.
            txn(4, 2, Status::Ok, (0, 9), vec![Op::Get(1, Some(4)), Op::Get(2, Some(5))]),
            txn(5, 2, Status::Fail, (10, 11), vec![Op::Write(1, 6)]),
            txn(6, 2, Status::Ok, (12, 13), vec![Op::Get(1, Some(3))]),
        ];
        let got = by_sessions(&txns);
        assert_eq!(got[&1].before, vec![(1, 2), (4, 3)]);
        assert_eq!(got[&1].nil_after, vec![4]);
        assert!(!got.contains_key(&2), "each session read key 2 once");
    }

    #[test]
    fn real_time_links_each_transaction_to_those_that_began_after_it_ended() {
        //   T0 ==w1==        T2 ==r1==
        //          T1 ==w2======== (ends after T2 began)
        //                              T3 ==r2==   T4 (info) ==w3==
        let txns = vec![
            txn(0, 1, Status::Ok, (0, 10), vec![Op::Write(1, 1)]),
            txn(1, 2, Status::Ok, (11, 30), vec![Op::Write(1, 2)]),
            txn(2, 1, Status::Ok, (20, 25), vec![Op::Get(1, Some(1))]),
            txn(3, 1, Status::Ok, (40, 45), vec![Op::Get(1, Some(2))]),
            txn(4, 3, Status::Info, (50, 60), vec![Op::Get(1, None), Op::Write(1, 3)]),
        ];
        let got = by_realtime(&txns);
        // T0 before T1 and T2 (1 before 2; T2's read of 1 is T0's write);
        // T2 and T1 before T3 (T0 is covered by them: 1 before 2, 2 is 2);
        // T3 before T4's write (its read unknown), T1 and T2 covered by T3.
        assert_eq!(got[&1].before, vec![(1, 2), (1, 2), (2, 3)]);
        assert!(got[&1].nil_after.is_empty());
        // A read of nil after a write ended: nil after it.
        let stale = vec![
            txn(0, 1, Status::Ok, (0, 10), vec![Op::Write(7, 1)]),
            txn(1, 2, Status::Ok, (10, 12), vec![Op::Get(7, None)]),
            txn(2, 3, Status::Ok, (11, 13), vec![Op::Get(7, None)]),
        ];
        // T1 began when T0 ended (not after): only T2 is after it.
        assert_eq!(by_realtime(&stale)[&7].nil_after, vec![1]);
    }
}
