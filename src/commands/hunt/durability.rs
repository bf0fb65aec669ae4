//! Lost writes: what a history recorded under a nemesis (a backend killed,
//! the server restarted, sessions cut off) shows that cycles do not. A
//! committed transaction's append must be in every read of its key that
//! began after the transaction was known to be committed: after its
//! COMMIT was acknowledged, or, for an unknown outcome (its COMMIT's
//! answer never came), after a read returned one of its elements (then it
//! committed, all of it). An append no such read contains, where at least
//! one such read exists, is:
//! - lost: the COMMIT was acknowledged, and the write is gone;
//! - unknown-contradicted: the outcome was unknown, a read showed it
//!   committed, and a later read shows it did not (or only in part):
//!   neither of its two possible outcomes explains the reads.
//!
//! Only reads on the primary are evidence (a standby may be behind), and
//! only those of transactions that committed. A read that began after the
//! write and misses it while a later one has it is a stale read, a cycle
//! with real-time edges (`--realtime`), not a loss. Pure, linear in the
//! history (each read's list is walked once).
use super::anomaly::{Anomaly, Class, IntMap, Name, ReadAt};
use super::history::{Elem, Key, Op, Status, Txn};
use super::versions::Writers;

/// When the server answered operation `op` of `t` (its end, else its start,
/// where the history keeps no per-operation times).
pub fn answered(t: &Txn, op: usize) -> u64 {
    t.at.get(op).copied().or(t.end).unwrap_or(t.start)
}

/// Since when a committed transaction is known to be committed, and for an
/// unknown outcome the read (transaction, operation) that showed it.
pub type Known = Option<(u64, Option<(usize, usize)>)>;

/// [`Known`] for each transaction.
pub fn known_committed(txns: &[Txn], writers: &Writers, committed: &[bool]) -> Vec<Known> {
    let mut known: Vec<Known> = txns
        .iter()
        .map(|t| match (t.status, t.end) {
            (Status::Ok, Some(end)) => Some((end, None)),
            _ => None,
        })
        .collect();
    for (t, txn) in txns.iter().enumerate().filter(|(_, t)| t.status == Status::Ok) {
        for (i, op) in txn.ops.iter().enumerate() {
            let Op::Read(k, Some(list)) = op else { continue };
            for e in list {
                let Some(w) = writers.get(&(*k, *e)) else { continue };
                let w = w.txn as usize;
                if txns[w].status != Status::Info || !committed[w] {
                    continue;
                }
                let at = answered(txn, i);
                if known[w].is_none_or(|(k, _)| at < k) {
                    known[w] = Some((at, Some((t, i))));
                }
            }
        }
    }
    known
}

/// The reads that are evidence: of transactions that committed, on the primary.
struct Reads {
    /// Per key, the read that began last: (start, transaction, operation).
    last: IntMap<Key, (u64, usize, usize)>,
    /// Per (key, element), when the last read containing it was answered.
    latest_with: IntMap<(Key, Elem), u64>,
}

fn reads(txns: &[Txn]) -> Reads {
    let mut r = Reads {
        last: IntMap::default(),
        latest_with: IntMap::default(),
    };
    for (t, txn) in txns.iter().enumerate() {
        if txn.status != Status::Ok || txn.on_standby() {
            continue;
        }
        for (i, op) in txn.ops.iter().enumerate() {
            let Op::Read(k, Some(list)) = op else { continue };
            let last = r.last.entry(*k).or_insert((txn.start, t, i));
            if txn.start > last.0 {
                *last = (txn.start, t, i);
            }
            let at = answered(txn, i);
            for e in list {
                let m = r.latest_with.entry((*k, *e)).or_insert(at);
                *m = (*m).max(at);
            }
        }
    }
    r
}

/// Every committed append that the last read of its key lacks, where that
/// read began after the append was known committed and after every read
/// that showed it was answered (so it must have it), given to `note` in
/// the history's order. A read that lacks it while a later one has it is
/// stale, not a loss: only the last read of each key is the server's word.
pub fn lost_writes(txns: &[Txn], writers: &Writers, committed: &[bool], note: &mut dyn FnMut(Anomaly)) {
    let known = known_committed(txns, writers, committed);
    let r = reads(txns);
    for (t, txn) in txns.iter().enumerate() {
        let Some((since, revealed)) = known[t] else { continue };
        for op in &txn.ops {
            let Op::Append(k, x) = op else { continue };
            let Some(&(last, reader, read_op)) = r.last.get(k) else {
                continue;
            };
            let seen = r.latest_with.get(&(*k, *x)).copied().unwrap_or(0);
            if last <= since.max(seen) {
                continue;
            }
            let class = if revealed.is_some() {
                Class::UnknownContradicted
            } else {
                Class::Lost
            };
            note(Anomaly {
                name: Name::of(class),
                txns: vec![t, reader],
                cycle: Vec::new(),
                read: Some(ReadAt {
                    txn: reader,
                    op: read_op,
                    key: *k,
                    elem: Some(*x),
                    writer: Some(t),
                    other: revealed,
                }),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::hunt::versions::{committed, writers};

    fn txn(s: u64, status: Status, start: u64, end: Option<u64>, ops: Vec<Op>) -> Txn {
        Txn {
            end,
            ..Txn::new(0, s, status, start, ops)
        }
    }

    fn found(txns: &[Txn]) -> Vec<(Class, Key, Elem)> {
        let w = writers(txns).unwrap();
        let c = committed(txns, &w);
        let mut out = Vec::new();
        lost_writes(txns, &w, &c, &mut |a| {
            let r = a.read.unwrap();
            out.push((a.name.class, r.key, r.elem.unwrap()));
        });
        out
    }

    fn r(k: Key, l: &[Elem]) -> Op {
        Op::Read(k, Some(l.to_vec()))
    }

    #[test]
    fn an_acknowledged_append_no_later_read_has_is_lost() {
        // T0 appends 1 and 2 to key 1, acknowledged at 10; the final read at 50 has [1].
        let h = vec![
            txn(1, Status::Ok, 0, Some(10), vec![Op::Append(1, 1), Op::Append(1, 2)]),
            txn(2, Status::Ok, 50, Some(60), vec![r(1, &[1])]),
        ];
        assert_eq!(found(&h), vec![(Class::Lost, 1, 2)]);
        // The same read, begun before the acknowledgement: no evidence.
        let mut early = h.clone();
        early[1].start = 5;
        assert!(found(&early).is_empty());
        // A stale read, then one that has it: not lost.
        let mut stale = h.clone();
        stale.push(txn(3, Status::Ok, 70, Some(80), vec![r(1, &[1, 2])]));
        assert!(found(&stale).is_empty());
        // Read, then gone from a read that began after that one's answer: lost.
        let mut gone = stale.clone();
        gone.push(txn(4, Status::Ok, 90, Some(95), vec![r(1, &[1])]));
        assert_eq!(found(&gone), vec![(Class::Lost, 1, 2)]);
        // Begun before that answer came: the two reads may be in either order.
        gone[3].start = 75;
        assert!(found(&gone).is_empty());
        // A read on the standby is no evidence, nor a read that did not commit.
        let mut standby = h.clone();
        standby[1].node = Some(crate::commands::hunt::history::STANDBY.into());
        assert!(found(&standby).is_empty());
        let mut failed = h;
        failed[1].status = Status::Fail;
        assert!(found(&failed).is_empty());
    }

    #[test]
    fn an_unknown_outcome_seen_committed_must_be_seen_whole() {
        // T0's COMMIT got no answer; T1 reads its 1 in key 1 (answered at 30):
        // it committed. A read of key 2 begun at 40 lacks its 2.
        let mut t1 = txn(2, Status::Ok, 20, Some(35), vec![r(1, &[1])]);
        t1.at = vec![30];
        let h = vec![
            txn(1, Status::Info, 0, None, vec![Op::Append(1, 1), Op::Append(2, 2)]),
            t1,
            txn(3, Status::Ok, 40, Some(50), vec![r(2, &[])]),
        ];
        assert_eq!(found(&h), vec![(Class::UnknownContradicted, 2, 2)]);
        // Begun before T1's read answered: it may have come first.
        let mut early = h.clone();
        early[2].start = 25;
        assert!(found(&early).is_empty());
        // Nobody read its elements: it may not have committed, nothing is lost.
        let mut unseen = h;
        unseen[1].ops = vec![r(1, &[])];
        assert!(found(&unseen).is_empty());
    }
}
