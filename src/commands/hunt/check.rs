//! The checker: a list-append history in, its anomalies out. Pure; no
//! server, no engine. Its phases, as Elle names them, each in a file of its
//! own and testable alone:
//! 1. version orders ([`versions`]): who appended what, which transactions
//!    committed, each key's order from its longest read, and what the reads
//!    alone show (G1a, G1b, garbage, duplicates, incompatible orders, internal);
//! 2. edges by kind ([`edges`]): ww, wr, rw, and real-time or session order
//!    when asked;
//! 3. cycles ([`cycles`]): strongly connected components, then a search per
//!    class in each;
//! 4. classification ([`cycles::classify`]): G0, G1c, G-single, G2-item and
//!    their -process / -realtime variants;
//! 5. explanation ([`explain`]): the operations each edge of a cycle rests on.
//!
//! Which of them a PostgreSQL level forbids is [`forbidden`]'s business.
use std::collections::BTreeMap;

pub use super::anomaly::*;
use super::graph::Graph;
use super::history::{Damage, History, Status};
pub use super::models::forbidden;
use super::{cycles, durability, edges, explain, register, versions};

/// What the checker found so far, by name: every one counted, examples kept.
struct Found {
    by_name: BTreeMap<Name, Vec<Anomaly>>,
    counts: BTreeMap<String, usize>,
    /// Every cycle of every component, not one per class.
    all: bool,
}

impl Found {
    fn note(&mut self, a: Anomaly) {
        *self.counts.entry(a.name.text()).or_default() += 1;
        let v = self.by_name.entry(a.name).or_default();
        if v.is_empty() || self.all {
            v.push(a);
        }
    }
}

/// Checks `h`, phase by phase. A history the checker cannot read as
/// list-append (an element appended twice to one key) is damage.
pub fn check(h: &History, opts: Options) -> Result<Checked, Damage> {
    // An rw-register history is checked as the list-append history its
    // version orders make of it (the operations keep their places).
    let mut lifted = if h.register() {
        Some(register::lift(h, &opts)?)
    } else {
        None
    };
    let given = (lifted.as_mut()).map(|l| (std::mem::take(&mut l.orders), l.sources, std::mem::take(&mut l.found)));
    let mut register_edges = lifted
        .as_mut()
        .map(|l| std::mem::take(&mut l.edges))
        .unwrap_or_default();
    let register_committed = lifted.as_mut().map(|l| std::mem::take(&mut l.committed));
    let txns = lifted.as_ref().map_or(&h.txns, |l| &l.txns);
    let n = txns.len();
    // Two cores' worth: the phases that do not need each other's results
    // run side by side (each is a pass over the whole history).
    let (writers, mut orders) = std::thread::scope(|s| {
        let orders = s.spawn(|| versions::VersionOrders::from_longest_reads(txns));
        let writers = versions::writers(txns);
        (writers, orders.join().expect("the version-order thread"))
    });
    let writers = writers?;
    let (registers, lifted_found) = match given {
        Some((given, sources, found)) => {
            orders.given = given;
            (Some(sources), found)
        }
        None => (None, Vec::new()),
    };
    let committed = match register_committed {
        Some(c) => c,
        None => versions::committed(txns, &writers),
    };
    let (seen, mut edges) = std::thread::scope(|s| {
        // The edges the data shows on one core...
        let data = s.spawn(|| {
            let mut edges = Vec::with_capacity(n * 3);
            edges::read_edges(txns, &writers, &orders, &committed, &mut edges);
            edges::write_edges(txns, &writers, &orders, &committed, &mut edges);
            edges::unobserved_edges(txns, &writers, &orders, &committed, &mut edges);
            edges
        });
        // ...and on the other what the reads alone show (in the order a
        // single pass gave it), then the orders beyond data.
        let mut seen: Vec<Anomaly> = Vec::new();
        versions::read_anomalies(txns, &writers, &orders, &mut |a| seen.push(a));
        versions::lost_updates(txns, &mut |a| seen.push(a));
        versions::dirty_updates(txns, &writers, &orders, &mut |a| seen.push(a));
        if opts.lost || h.under_nemesis() {
            durability::lost_writes(txns, &writers, &committed, &mut |a| seen.push(a));
        }
        let mut edges = Vec::new();
        if opts.sessions {
            edges::session_edges(txns, &committed, &mut edges);
        }
        if opts.realtime {
            edges::realtime_edges(txns, &committed, &mut edges);
        }
        let mut all = data.join().expect("the edge thread");
        all.append(&mut edges);
        all.append(&mut register_edges);
        (seen, all)
    });
    let mut found = Found {
        by_name: BTreeMap::new(),
        counts: BTreeMap::new(),
        all: opts.all_cycles,
    };
    for a in lifted_found.into_iter().chain(seen) {
        found.note(a);
    }
    edges.shrink_to_fit();
    let graph = Graph::new(n, edges);
    // An rw-register key with no one order: its edges' evidence is in the
    // history's own operations.
    let elsewhere = |edge: (usize, usize, u8)| {
        let l = lifted.as_ref()?;
        let at = |k, v| {
            let w = writers.get(&(k, v)).filter(|w| committed[w.txn as usize])?;
            Some((w.txn as usize, w.op as usize))
        };
        register::why_partial(&h.txns, &at, &l.partial, edge)
    };
    let cut_short = cycles::cycles(&graph, opts, &mut |name, path| {
        let a = explain::explain(txns, &writers, &orders, &elsewhere, name, path);
        let name = a.name;
        found.note(a);
        name
    });
    let committed_n = committed.iter().filter(|c| **c).count();
    let aborted = txns.iter().filter(|t| t.status == Status::Fail).count();
    Ok(Checked {
        txns: n,
        committed: committed_n,
        aborted,
        unknown: n - committed_n - aborted,
        anomalies: found.by_name.into_values().flatten().collect(),
        counts: found.counts,
        cut_short,
        registers,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::hunt::history::{Elem, Key};
    use crate::commands::hunt::history::{Op, Txn};
    use crate::commands::hunt::models;

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
        History {
            header: None,
            txns,
            ..History::default()
        }
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
            lost: true,
            ..Options::default()
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

    /// A predicate read of keys `lo..=hi` at op `op` of `t`, from what it returned.
    fn scanned(mut t: Txn, lo: Key, op: u32, lists: &[&[Elem]]) -> Txn {
        let reads = (lo..).zip(lists).map(|(k, l)| r(k, l));
        t.ops.splice(op as usize..op as usize, reads);
        t.scans = vec![crate::commands::hunt::history::Scan {
            lo,
            hi: lo + lists.len() as Key - 1,
            op,
        }]
        .into();
        t
    }

    #[test]
    fn predicate_write_skew_is_g2() {
        // Each read the range 1..2 with no row in it, then made a row there:
        // the other's row is a phantom to it.
        let h = vec![
            scanned(ok(1, 0, vec![a(1, 1)]), 1, 0, &[&[], &[]]),
            scanned(ok(2, 0, vec![a(2, 2)]), 1, 0, &[&[], &[]]),
            ok(3, 10, vec![r(1, &[1]), r(2, &[2])]),
        ];
        let c = check(&history(h.clone()), Options::default()).unwrap();
        assert_eq!(c.names(), vec![Name::of(Class::G2)]);
        let cyc = &c.anomalies[0].cycle;
        assert!(
            cyc.iter().all(|l| matches!(
                l.why,
                Why::Rw {
                    predicate: Some((1, 2)),
                    ..
                }
            )),
            "{cyc:?}"
        );
        assert!(!forbidden(c.anomalies[0].name, Level::RepeatableRead));
        assert!(forbidden(c.anomalies[0].name, Level::Serializable));
        assert_eq!(models::elle_name(c.anomalies[0].name), "G2");
        // The same reads as reads of single keys: an item anti-dependency.
        let items: Vec<Txn> = h
            .into_iter()
            .map(|t| Txn {
                scans: Box::default(),
                ..t
            })
            .collect();
        assert_eq!(names(items, Options::default()), vec!["G2-item"]);
    }

    #[test]
    fn a_phantom_is_named_beside_an_item_write_skew_in_its_component() {
        // T0 and T1: predicate write skew over 1..2. T1 and T2: write skew
        // on rows 3 and 4, read as items. One component, both named.
        let h = vec![
            scanned(ok(1, 0, vec![a(1, 1)]), 1, 0, &[&[], &[]]),
            scanned(ok(2, 0, vec![a(2, 2), r(3, &[]), a(4, 4)]), 1, 0, &[&[], &[]]),
            ok(3, 0, vec![r(4, &[]), a(3, 3)]),
            ok(1, 10, vec![r(1, &[1]), r(2, &[2]), r(3, &[3]), r(4, &[4])]),
        ];
        assert_eq!(names(h, Options::default()), vec!["G2-item", "G2"]);
    }

    #[test]
    fn a_g_single_through_a_phantom_is_elle_s_plain_g_single() {
        // T0's range read missed row 1, which T1 made; T0 read T1's append
        // to key 3: one rw edge, through the predicate.
        let h = vec![
            scanned(ok(1, 0, vec![r(3, &[3])]), 1, 0, &[&[], &[]]),
            ok(2, 0, vec![a(1, 1), a(3, 3)]),
        ];
        let c = check(&history(h), Options::default()).unwrap();
        assert_eq!(c.names().iter().map(Name::text).collect::<Vec<_>>(), ["G-single"]);
        assert!(c.anomalies[0].name.phantom);
        assert_eq!(models::elle_name(c.anomalies[0].name), "G-single");
        assert!(forbidden(c.anomalies[0].name, Level::RepeatableRead));
        assert!(!forbidden(c.anomalies[0].name, Level::ReadCommitted));
    }

    #[test]
    fn a_row_a_predicate_read_returned_is_read_as_an_item() {
        // T0 made rows 1 and 2; T1 and T2 read both through the range,
        // then T1 appended to row 1 and T2 to row 2, each unseen by the
        // other. Both rw edges rest on rows the reads returned: a
        // G2-item, not a G2.
        let h = vec![
            ok(1, 0, vec![a(1, 1), a(2, 2)]),
            scanned(ok(2, 10, vec![a(1, 3)]), 1, 0, &[&[1], &[2]]),
            scanned(ok(3, 10, vec![a(2, 4)]), 1, 0, &[&[1], &[2]]),
            ok(1, 30, vec![r(1, &[1, 3]), r(2, &[2, 4])]),
        ];
        assert_eq!(names(h, Options::default()), vec!["G2-item"]);
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

    /// A history recorded under a nemesis: T2's acknowledged append is
    /// missing from the last read, which began after it (lost, forbidden
    /// at every level); the unknown outcomes are not failures: T3's, never
    /// read, may not have committed; T4's, read, did (no aborted read).
    #[test]
    fn under_a_nemesis_an_acknowledged_append_the_last_read_lacks_is_lost() {
        let info = |s, start, ops| Txn {
            status: Status::Info,
            end: None,
            ..ok(s, start, ops)
        };
        let h = vec![
            ok(1, 0, vec![a(1, 1)]),
            ok(2, 10, vec![a(1, 2)]),
            info(3, 20, vec![a(1, 3)]),
            info(4, 30, vec![a(2, 7)]),
            ok(1, 50, vec![r(1, &[1]), r(2, &[7])]),
        ];
        // Without a nemesis, durability is not judged.
        assert!(names(h.clone(), Options::default()).is_empty());
        let mut under = history(h);
        under.header = Some(crate::commands::hunt::history::Header {
            nemesis: vec!["kill".into()],
            ..Default::default()
        });
        let c = check(&under, Options::default()).unwrap();
        let found: Vec<String> = c.names().iter().map(Name::text).collect();
        assert_eq!(found, vec!["lost"]);
        assert_eq!(c.committed, 4, "T4 committed: it was read");
        let lost = &c.anomalies[0];
        let at = lost.read.as_ref().unwrap();
        assert_eq!((lost.txns.clone(), at.key, at.elem), (vec![1, 4], 1, Some(2)));
        for level in [Level::ReadUncommitted, Level::ReadCommitted, Level::Serializable] {
            assert!(forbidden(lost.name, level));
        }
        // The append read back: nothing lost.
        under.txns[4].ops[0] = r(1, &[1, 2]);
        assert!(check(&under, Options::default()).unwrap().anomalies.is_empty());
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

    /// Whether each level (read committed, repeatable read, serializable)
    /// forbids something in `h`: the exit code `lab hunt --check --level` gives.
    fn verdicts(h: Vec<Txn>, opts: Options) -> (Vec<String>, [bool; 3]) {
        let c = check(&history(h), opts).unwrap();
        let at = |l: Level| c.names().iter().any(|n| forbidden(*n, l));
        let names = c.names().iter().map(Name::text).collect();
        (
            names,
            [
                at(Level::ReadCommitted),
                at(Level::RepeatableRead),
                at(Level::Serializable),
            ],
        )
    }

    #[test]
    fn long_fork_is_g_nonadjacent_forbidden_by_snapshot_isolation() {
        // T0 appends x, T1 appends y, T2 reads x=[1] y=[], T3 reads x=[] y=[2].
        let h = vec![
            ok(1, 0, vec![a(1, 1)]),
            ok(2, 0, vec![a(2, 2)]),
            ok(3, 0, vec![r(1, &[1]), r(2, &[])]),
            ok(4, 0, vec![r(1, &[]), r(2, &[2])]),
        ];
        let c = check(&history(h.clone()), Options::default()).unwrap();
        assert_eq!(c.names(), vec![Name::of(Class::GNonadjacent)]);
        let cyc = &c.anomalies[0].cycle;
        assert_eq!(cyc.len(), 4);
        assert_eq!(cyc.iter().filter(|l| matches!(l.why, Why::Rw { .. })).count(), 2);
        assert_eq!(verdicts(h, Options::default()).1, [false, true, true]);
        assert_eq!(
            models::boundary(["G-nonadjacent-item"]).not,
            vec!["repeatable-read", "snapshot-isolation"]
        );
    }

    /// (what, history, options, the classes found, whether read committed,
    /// repeatable read and serializable forbid something in it).
    type Case = (&'static str, Vec<Txn>, Options, &'static [&'static str], [bool; 3]);

    fn class_cases() -> Vec<Case> {
        let none = Options::default();
        let mut aborted = ok(1, 0, vec![a(1, 1)]);
        aborted.status = Status::Fail;
        vec![
            (
                "serial",
                vec![ok(1, 0, vec![a(1, 1)]), ok(2, 10, vec![r(1, &[1])])],
                none,
                &[],
                [false; 3],
            ),
            (
                "G0",
                vec![
                    ok(1, 0, vec![a(1, 1), a(2, 4)]),
                    ok(2, 0, vec![a(1, 2), a(2, 3)]),
                    ok(3, 10, vec![r(1, &[1, 2]), r(2, &[3, 4])]),
                ],
                none,
                &["G0"],
                [true; 3],
            ),
            (
                "G1c",
                vec![ok(1, 0, vec![a(1, 1), r(2, &[2])]), ok(2, 0, vec![a(2, 2), r(1, &[1])])],
                none,
                &["G1c"],
                [true; 3],
            ),
            (
                "read skew",
                vec![
                    ok(1, 0, vec![a(1, 1), a(2, 2)]),
                    ok(2, 10, vec![r(1, &[1]), r(2, &[2, 4])]),
                    ok(3, 10, vec![a(1, 3), a(2, 4)]),
                    ok(1, 30, vec![r(1, &[1, 3])]),
                ],
                none,
                &["G-single"],
                [false, true, true],
            ),
            (
                "write skew",
                vec![
                    ok(1, 0, vec![r(1, &[]), a(2, 2)]),
                    ok(2, 0, vec![r(2, &[]), a(1, 1)]),
                    ok(3, 10, vec![r(1, &[1]), r(2, &[2])]),
                ],
                none,
                &["G2-item"],
                [false, false, true],
            ),
            (
                // Both read [1] and appended; nobody read after. Neither saw the
                // other's append, which came after [1]: rw both ways, a G2-item.
                "lost update, unread",
                vec![
                    ok(1, 0, vec![a(1, 1)]),
                    ok(2, 10, vec![r(1, &[1]), a(1, 2)]),
                    ok(3, 10, vec![r(1, &[1]), a(1, 3)]),
                ],
                none,
                &["G2-item", "lost-update"],
                [false, true, true],
            ),
            (
                // With the order read back, the lost update closes a G-single too.
                "lost update seen",
                vec![
                    ok(1, 0, vec![a(1, 1)]),
                    ok(2, 10, vec![r(1, &[1]), a(1, 2)]),
                    ok(3, 10, vec![r(1, &[1]), a(1, 3)]),
                    ok(4, 30, vec![r(1, &[1, 2, 3])]),
                ],
                none,
                &["G-single", "lost-update"],
                [false, true, true],
            ),
            (
                "dirty update",
                vec![
                    aborted.clone(),
                    ok(2, 10, vec![a(1, 2)]),
                    ok(3, 30, vec![r(1, &[1, 2])]),
                ],
                none,
                &["G1a", "dirty-update"],
                [true; 3],
            ),
            (
                "future read",
                vec![ok(1, 0, vec![r(1, &[1]), a(1, 1)])],
                none,
                &["future-read"],
                [true; 3],
            ),
            (
                "stale read",
                vec![
                    ok(1, 0, vec![a(1, 1)]),
                    ok(1, 10, vec![r(1, &[])]),
                    ok(2, 20, vec![r(1, &[1])]),
                ],
                Options { realtime: true, ..none },
                &["G-single-realtime"],
                [false, true, true],
            ),
            (
                // Each reader missed the other session's append, after its own
                // session's: rw edges apart, joined by session order.
                "G-nonadjacent-process",
                vec![
                    ok(1, 0, vec![a(1, 1)]),
                    ok(2, 0, vec![a(2, 2)]),
                    ok(1, 10, vec![r(2, &[])]),
                    ok(2, 10, vec![r(1, &[])]),
                    ok(3, 30, vec![r(1, &[1]), r(2, &[2])]),
                ],
                Options { sessions: true, ..none },
                &["G-nonadjacent-process"],
                [false, true, true],
            ),
        ]
    }

    #[test]
    fn every_class_at_every_level() {
        let cases = class_cases();
        for (what, h, opts, names, levels) in cases {
            let (got, at) = verdicts(h, opts);
            assert_eq!(got, names.to_vec(), "{what}");
            assert_eq!(at, levels, "{what}: {got:?}");
        }
    }

    /// An edge Elle's inference draws to an append no read showed is
    /// explained by that append and the read of the whole order, not
    /// passed off as real time.
    #[test]
    fn edges_to_unread_appends_say_where_their_order_comes_from() {
        let h = vec![
            ok(1, 0, vec![a(1, 1)]),
            ok(2, 10, vec![r(1, &[1]), a(1, 2)]),
            ok(3, 10, vec![r(1, &[1]), a(1, 3)]),
        ];
        let c = check(&history(h), Options::default()).unwrap();
        let g2 = c.anomalies.iter().find(|x| x.name == Name::of(Class::G2Item)).unwrap();
        for l in &g2.cycle {
            let Why::Rw {
                key: 1, elem, order, ..
            } = l.why
            else {
                panic!("{:?}", l.why)
            };
            assert_eq!(order, OrderFrom::Unread);
            assert_eq!(elem, [2, 3][l.to - 1]);
        }
        // A read order: the read it comes from.
        let h = vec![
            ok(1, 0, vec![r(1, &[]), a(2, 2)]),
            ok(2, 0, vec![r(2, &[]), a(1, 1)]),
            ok(3, 10, vec![r(1, &[1]), r(2, &[2, 5])]),
            ok(4, 20, vec![a(2, 5)]),
        ];
        let c = check(&history(h), Options::default()).unwrap();
        let froms: Vec<OrderFrom> = (c.anomalies[0].cycle.iter())
            .filter_map(|l| match l.why {
                Why::Rw { order, .. } => Some(order),
                _ => None,
            })
            .collect();
        assert!(froms.contains(&OrderFrom::LongestRead { txn: 2, op: 1 }), "{froms:?}");
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
            "G2",
            "G2-process",
            "G-single-realtime",
            "G0-process",
            "G-nonadjacent",
            "G-nonadjacent-realtime",
            "lost-update",
            "dirty-update",
            "future-read",
            "cyclic-versions",
            "internal",
        ] {
            assert_eq!(Name::parse(s).map(|n| n.text()).as_deref(), Some(s));
        }
        assert_eq!(Name::parse("G3"), None);
    }
}
