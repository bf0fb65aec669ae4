//! The checker's last phase: each cycle with the operations its edges
//! rest on (which read, which append, which version order).
use super::check::{Anomaly, Link, Name, Why};
use super::graph::{PROCESS, RW, WR, WW};
use super::history::{Elem, Key, Op, Txn};
use super::versions::{VersionOrders, Writers};

/// A cycle with the operations each edge rests on.
pub fn explain(
    txns: &[Txn],
    writers: &Writers,
    orders: &VersionOrders,
    name: Name,
    path: Vec<(u32, u32, u8)>,
) -> Anomaly {
    let cycle: Vec<Link> = path
        .iter()
        .map(|&(a, b, kind)| Link {
            from: a as usize,
            to: b as usize,
            why: why(txns, writers, orders, a as usize, b as usize, kind),
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
fn why(txns: &[Txn], writers: &Writers, orders: &VersionOrders, a: usize, b: usize, kind: u8) -> Why {
    let order_of = |k: &Key| -> &[Elem] { orders.of(txns, *k) };
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
