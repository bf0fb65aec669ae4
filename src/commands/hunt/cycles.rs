//! The checker's third and fourth phases: cycles among committed
//! transactions (strongly connected components, then a search per class
//! in each), and each cycle's class from the kinds of edges it walks
//! (G0: ww only; G1c: ww and wr; G-single: exactly one rw; G2-item: two or
//! more; G2 when one of those only a predicate read shows; -process /
//! -realtime when it needs those edges).
use super::anomaly::{Class, Name, Options, Via};
use super::graph::{Graph, IRW, PROCESS, PRW, REALTIME, RW, Rules, Searcher, WR, WW};
use super::models;

/// How far one search may go (edges looked at) per class and component.
const BUDGET: u64 = 2_000_000;

/// The searches, in order of severity: a class and how it starts (the kind
/// of its first edge), what its path back may walk.
const SEARCHES: [(Class, u8, Rules); 6] = [
    (
        Class::G0,
        WW,
        Rules {
            allowed: WW,
            need_rw: false,
            nonadjacent: false,
        },
    ),
    (
        Class::G1c,
        WR,
        Rules {
            allowed: WW | WR,
            need_rw: false,
            nonadjacent: false,
        },
    ),
    (
        Class::GSingle,
        RW,
        Rules {
            allowed: WW | WR,
            need_rw: false,
            nonadjacent: false,
        },
    ),
    (
        Class::GNonadjacent,
        RW,
        Rules {
            allowed: WW | WR | RW,
            need_rw: true,
            nonadjacent: true,
        },
    ),
    // A cycle through an rw edge only a predicate read shows; the G2-item's
    // rw edges are those item reads show.
    (
        Class::G2,
        PRW,
        Rules {
            allowed: WW | WR | RW,
            need_rw: true,
            nonadjacent: false,
        },
    ),
    (
        Class::G2Item,
        RW,
        Rules {
            allowed: WW | WR | RW | IRW,
            need_rw: true,
            nonadjacent: false,
        },
    ),
];

/// Finds cycles in every strongly connected component: for each class,
/// the first edge of that kind from which a path back exists by the
/// class's rules gives the shortest such cycle through that edge. As Elle
/// does, a class that one found in the same component implies is not
/// searched for there (a G-single is a G-nonadjacent and a G2-item). Reports
/// each cycle found (as (from, to, kind) edges), and goes on with the name
/// `found` gives it (its evidence may show a phantom); true if a search ran
/// out of budget.
pub fn cycles(g: &Graph, opts: Options, found: &mut dyn FnMut(Name, Vec<(u32, u32, u8)>) -> Name) -> bool {
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
    // The orders a cycle beyond data may need.
    let beyond: Vec<Via> = [(opts.sessions, Via::Session), (opts.realtime, Via::Realtime)]
        .into_iter()
        .filter_map(|(on, via)| on.then_some(via))
        .collect();
    for members in &big {
        let mut here: Vec<Name> = Vec::new();
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
                let targets: &[Via] = if with == 0 { &[Via::Data] } else { &beyond };
                if targets
                    .iter()
                    .all(|&via| implied_by(&here, Name { via, ..Name::of(class) }))
                {
                    continue;
                }
                let narrow = &narrow[vi * SEARCHES.len() + si];
                let mut budget = BUDGET;
                'edges: for &u in members {
                    for &(v, kinds) in g.out(u) {
                        let item_only = rules.allowed & IRW != 0;
                        if kinds & first == 0
                            || !within(v)
                            || (first == PRW && kinds & IRW != 0)
                            || (first == RW && item_only && kinds & IRW == 0)
                        {
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
                            let name = found(name, path);
                            seen.push(name);
                            here.push(name);
                            break 'edges;
                        }
                    }
                }
            }
        }
    }
    cut
}

/// Does an anomaly in `found` imply `target` (Elle's implications)?
fn implied_by(found: &[Name], target: Name) -> bool {
    let target = models::elle_name(target);
    found
        .iter()
        .any(|f| models::implied([models::elle_name(*f).as_str()]).contains(target.as_str()))
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
                RW | PRW if kinds & WW != 0 => (a, b, WW),
                RW | PRW if kinds & WR != 0 => (a, b, WR),
                _ => (a, b, kind),
            }
        })
        .collect()
}

/// A cycle's class from the kinds it walks.
pub fn classify(path: &[(u32, u32, u8)]) -> Name {
    let is_rw = |i: usize| matches!(path[i % path.len()].2, RW | PRW);
    let rw = (0..path.len()).filter(|i| is_rw(*i)).count();
    // Two rw edges in a row, the last and the first counted as a row too.
    let adjacent = (0..path.len()).any(|i| is_rw(i) && is_rw(i + 1));
    let class = match rw {
        0 if path.iter().any(|e| e.2 == WR) => Class::G1c,
        0 => Class::G0,
        1 => Class::GSingle,
        _ if adjacent && path.iter().any(|e| e.2 == PRW) => Class::G2,
        _ if adjacent => Class::G2Item,
        _ => Class::GNonadjacent,
    };
    let via = if path.iter().any(|e| e.2 == REALTIME) {
        Via::Realtime
    } else if path.iter().any(|e| e.2 == PROCESS) {
        Via::Session
    } else {
        Via::Data
    };
    Name {
        class,
        via,
        phantom: class == Class::G2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cycle_is_classified_by_the_kinds_it_walks() {
        let name = |p: &[(u32, u32, u8)]| classify(p).text();
        assert_eq!(name(&[(0, 1, WW), (1, 0, WW)]), "G0");
        assert_eq!(name(&[(0, 1, WW), (1, 0, WR)]), "G1c");
        assert_eq!(name(&[(0, 1, RW), (1, 0, WR)]), "G-single");
        assert_eq!(name(&[(0, 1, RW), (1, 0, RW)]), "G2-item");
        assert_eq!(name(&[(0, 1, WR), (1, 2, RW), (2, 3, WR), (3, 0, RW)]), "G-nonadjacent");
        assert_eq!(name(&[(0, 1, RW), (1, 2, WR), (2, 3, WR), (3, 0, RW)]), "G2-item");
        assert_eq!(name(&[(0, 1, PRW), (1, 0, RW)]), "G2");
        assert_eq!(name(&[(0, 1, PRW), (1, 0, WR)]), "G-single");
        assert_eq!(
            name(&[(0, 1, PRW), (1, 2, WR), (2, 3, RW), (3, 0, WR)]),
            "G-nonadjacent"
        );
        assert_eq!(name(&[(0, 1, RW), (1, 0, REALTIME)]), "G-single-realtime");
        assert_eq!(name(&[(0, 1, WW), (1, 0, PROCESS)]), "G0-process");
    }

    #[test]
    fn one_cycle_per_class_found_in_a_component() {
        // 0 -ww-> 1 -ww-> 0 and 1 -rw-> 2 -wr-> 1.
        let g = Graph::new(3, vec![(0, 1, WW), (1, 0, WW), (1, 2, RW), (2, 1, WR)]);
        let mut names = Vec::new();
        let cut = cycles(&g, Options::default(), &mut |n, p| {
            names.push((n.text(), p.len()));
            n
        });
        assert!(!cut);
        assert_eq!(names, vec![("G0".to_string(), 2), ("G-single".to_string(), 2)]);
    }
}
