//! The checker's last phase: each cycle with the operations its edges
//! rest on (which read, which append, which version order).
use super::anomaly::{Anomaly, Link, Name, OrderFrom, Why};
use super::graph::{PROCESS, PRW, RW, WR, WW};
use super::history::{Elem, Key, Op, Txn};
use super::versions::{VersionOrders, Writers};

/// A cycle with the operations each edge rests on.
/// `elsewhere`: the evidence for an edge the data of `txns` does not show
/// (an rw-register's key with no one order: [`super::register::why_partial`]).
pub fn explain(
    txns: &[Txn],
    writers: &Writers,
    orders: &VersionOrders,
    elsewhere: &dyn Fn((usize, usize, u8)) -> Option<Why>,
    name: Name,
    path: Vec<(u32, u32, u8)>,
) -> Anomaly {
    let cycle: Vec<Link> = path
        .iter()
        .map(|&(a, b, kind)| {
            let (a, b) = (a as usize, b as usize);
            let plain = if kind & (RW | PRW) != 0 { RW } else { kind };
            let why = match why(txns, writers, orders, a, b, kind) {
                Why::Realtime if kind & (WW | WR | RW | PRW) != 0 => elsewhere((a, b, plain)).unwrap_or(Why::Realtime),
                w => w,
            };
            Link { from: a, to: b, why }
        })
        .collect();
    // An rw edge of the cycle only a predicate read shows.
    let phantom = cycle
        .iter()
        .any(|l| matches!(l.why, Why::Rw { predicate: Some(_), .. }));
    Anomaly {
        name: Name { phantom, ..name },
        txns: cycle.iter().map(|l| l.from).collect(),
        cycle,
        read: None,
    }
}

/// The evidence for edge `a -> b` of `kind`: the first key that shows it.
fn why(txns: &[Txn], writers: &Writers, orders: &VersionOrders, a: usize, b: usize, kind: u8) -> Why {
    let order_of = |k: &Key| -> &[Elem] { orders.of(txns, *k) };
    let by = |k: Key, e: Elem, t: usize| writers.get(&(k, e)).is_some_and(|w| w.txn as usize == t);
    let op_of = |k: Key, e: Elem| writers.get(&(k, e)).map_or(0, |w| w.op as usize);
    let from = |k: &Key, e: Elem| {
        if let Some(g) = orders.given.get(k) {
            g.from
        } else if !order_of(k).contains(&e) {
            OrderFrom::Unread
        } else if orders.single.contains_key(k) {
            OrderFrom::SingleAppend
        } else {
            let (txn, op) = orders.longest[k];
            OrderFrom::LongestRead {
                txn: txn as usize,
                op: op as usize,
            }
        }
    };
    match kind {
        WW => {
            for (j, op) in txns[b].ops.iter().enumerate() {
                let Op::Append(k, then) = op else { continue };
                let order = order_of(k);
                // Right after its predecessor, or (read by nobody) after the last element known.
                let first = match order.iter().position(|e| e == then) {
                    Some(p) if p > 0 => Some(order[p - 1]),
                    Some(_) => None,
                    None => order.last().copied(),
                };
                if let Some(first) = first
                    && by(*k, first, a)
                {
                    return Why::Ww {
                        key: *k,
                        first,
                        then: *then,
                        from_op: op_of(*k, first),
                        to_op: j,
                        order: from(k, *then),
                    };
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
        RW | PRW => {
            // A read of a row is better evidence than a predicate read's
            // absence of one: only where none shows the edge is it a phantom's.
            let absent = |j: usize, l: &[Elem]| l.is_empty() && txns[a].scan_of(j).is_some();
            for phantoms in [false, true] {
                for (j, op) in txns[a].ops.iter().enumerate() {
                    let Op::Read(k, Some(l)) = op else { continue };
                    if absent(j, l) != phantoms {
                        continue;
                    }
                    let order = order_of(k);
                    // The element right after the read, or one of `b`'s no read showed.
                    let missed = order.get(l.len()).copied().filter(|e| by(*k, *e, b)).or_else(|| {
                        (order == l.as_slice())
                            .then(|| {
                                txns[b].ops.iter().find_map(|o| match o {
                                    Op::Append(k2, e) if k2 == k && !order.contains(e) => Some(*e),
                                    _ => None,
                                })
                            })
                            .flatten()
                    });
                    if let Some(e) = missed {
                        return Why::Rw {
                            key: *k,
                            elem: e,
                            from_op: j,
                            to_op: op_of(*k, e),
                            order: from(k, e),
                            predicate: txns[a].scan_of(j).filter(|_| phantoms).map(|s| (s.lo, s.hi)),
                        };
                    }
                }
            }
        }
        PROCESS => return Why::Session,
        _ => {}
    }
    Why::Realtime
}
