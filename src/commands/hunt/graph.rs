//! The dependency graph of a history and the two searches the checker
//! needs: strongly connected components (Tarjan's, iterative: a million
//! transactions must not overflow the stack) and a shortest path under
//! edge-kind rules (breadth-first, with visited marks stamped per search so
//! that one allocation serves them all). Pure; unit-tested on hand-made graphs.
//! Our own rather than petgraph's: both searches walk edges filtered by a
//! kind mask over a compressed adjacency, which petgraph's graph types
//! would hold as separate edges of a larger, slower structure.

pub const WW: u8 = 1;
pub const WR: u8 = 2;
pub const RW: u8 = 4;
pub const PROCESS: u8 = 8;
pub const REALTIME: u8 = 16;
/// With RW: what shows the anti-dependency. A predicate read's range
/// without the key (a phantom: Adya's predicate anti-dependency), or a
/// read of the item; a pair with PRW and no IRW is a phantom's alone.
pub const PRW: u8 = 32;
pub const IRW: u8 = 64;

/// Edges in compressed rows: node u's are `adj[offs[u]..offs[u+1]]`, each
/// (target, the kinds that hold between them), one entry per target.
pub struct Graph {
    offs: Vec<u32>,
    adj: Vec<(u32, u8)>,
}

impl Graph {
    /// From (from, to, kind) triples, in any order, duplicates merged.
    pub fn new(n: usize, edges: Vec<(u32, u32, u8)>) -> Graph {
        // Counting sort by source (linear), then each node's few targets sorted and merged.
        let mut offs = vec![0u32; n + 1];
        for &(a, _, _) in &edges {
            offs[a as usize + 1] += 1;
        }
        for i in 0..n {
            offs[i + 1] += offs[i];
        }
        let mut fill = offs.clone();
        let mut adj: Vec<(u32, u8)> = vec![(0, 0); edges.len()];
        for (a, b, k) in edges {
            adj[fill[a as usize] as usize] = (b, k);
            fill[a as usize] += 1;
        }
        let mut merged: Vec<(u32, u8)> = Vec::with_capacity(adj.len());
        let mut out_offs = vec![0u32; n + 1];
        for u in 0..n {
            let row = &mut adj[offs[u] as usize..offs[u + 1] as usize];
            row.sort_unstable_by_key(|e| e.0);
            let start = merged.len();
            for &(b, k) in row.iter() {
                let len = merged.len();
                if len > start && merged[len - 1].0 == b {
                    merged[len - 1].1 |= k;
                } else {
                    merged.push((b, k));
                }
            }
            out_offs[u + 1] = merged.len() as u32;
        }
        Graph {
            offs: out_offs,
            adj: merged,
        }
    }

    pub fn len(&self) -> usize {
        self.offs.len() - 1
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn out(&self, u: u32) -> &[(u32, u8)] {
        &self.adj[self.offs[u as usize] as usize..self.offs[u as usize + 1] as usize]
    }

    /// The kinds of the edge u -> v (0: none).
    pub fn kinds(&self, u: u32, v: u32) -> u8 {
        self.out(u).iter().find(|(t, _)| *t == v).map_or(0, |(_, k)| *k)
    }

    /// Strongly connected components over edges having a kind in `mask`,
    /// among nodes `within` says yes to: each node's component (u32::MAX
    /// for nodes left out) and the components with more than one node.
    pub fn components(&self, mask: u8, within: impl Fn(u32) -> bool) -> (Vec<u32>, Vec<Vec<u32>>) {
        const NONE: u32 = u32::MAX;
        let n = self.len();
        let mut index = vec![NONE; n];
        let mut low = vec![0u32; n];
        let mut on_stack = vec![false; n];
        let mut comp = vec![NONE; n];
        let mut stack: Vec<u32> = Vec::new();
        let mut big: Vec<Vec<u32>> = Vec::new();
        let mut next_index = 0u32;
        let mut next_comp = 0u32;
        // (node, position in its edge list)
        let mut call: Vec<(u32, u32)> = Vec::new();
        for root in 0..n as u32 {
            if index[root as usize] != NONE || !within(root) {
                continue;
            }
            call.push((root, 0));
            index[root as usize] = next_index;
            low[root as usize] = next_index;
            next_index += 1;
            stack.push(root);
            on_stack[root as usize] = true;
            while let Some(&(u, at)) = call.last() {
                let edges = self.out(u);
                let mut pos = at as usize;
                let mut child = None;
                while pos < edges.len() {
                    let (v, k) = edges[pos];
                    pos += 1;
                    if k & mask == 0 || !within(v) {
                        continue;
                    }
                    if index[v as usize] == NONE {
                        child = Some(v);
                        break;
                    } else if on_stack[v as usize] {
                        low[u as usize] = low[u as usize].min(index[v as usize]);
                    }
                }
                call.last_mut().expect("u is on the call stack").1 = pos as u32;
                if let Some(v) = child {
                    index[v as usize] = next_index;
                    low[v as usize] = next_index;
                    next_index += 1;
                    stack.push(v);
                    on_stack[v as usize] = true;
                    call.push((v, 0));
                    continue;
                }
                call.pop();
                if let Some(&(parent, _)) = call.last() {
                    low[parent as usize] = low[parent as usize].min(low[u as usize]);
                }
                if low[u as usize] == index[u as usize] {
                    let mut members = Vec::new();
                    loop {
                        let w = stack.pop().expect("u is on the stack");
                        on_stack[w as usize] = false;
                        comp[w as usize] = next_comp;
                        members.push(w);
                        if w == u {
                            break;
                        }
                    }
                    if members.len() > 1 {
                        members.sort_unstable();
                        big.push(members);
                    }
                    next_comp += 1;
                }
            }
        }
        big.sort_unstable();
        (comp, big)
    }
}

/// Rules for one path search.
#[derive(Clone, Copy)]
pub struct Rules {
    /// Kinds an edge may be walked as; with IRW, an RW edge only where an
    /// item read shows it.
    pub allowed: u8,
    /// The path must walk at least one RW edge (a second anti-dependency).
    pub need_rw: bool,
    /// No two RW edges in a row, and none first or last (the cycle's own
    /// first edge, before and after the path, is an RW edge): G-nonadjacent.
    pub nonadjacent: bool,
}

/// Breadth-first searches over one graph, sharing their marks.
pub struct Searcher {
    /// Per (node, walked an RW edge yet, the last edge walked was RW): the
    /// search that reached it, and from where.
    stamp: Vec<u32>,
    parent: Vec<(u32, u8)>,
    now: u32,
    queue: std::collections::VecDeque<u32>,
}

impl Searcher {
    pub fn new(n: usize) -> Searcher {
        Searcher {
            stamp: vec![0; 4 * n],
            parent: vec![(0, 0); 4 * n],
            now: 0,
            queue: Default::default(),
        }
    }

    /// A shortest path from `from` to `to` by `rules`, staying among nodes
    /// `within` accepts: the edges walked, each (from, to, the kind it was
    /// walked as). `budget` is spent one per edge looked at; none left, no path.
    pub fn path(
        &mut self,
        g: &Graph,
        (from, to): (u32, u32),
        rules: Rules,
        within: &dyn Fn(u32) -> bool,
        budget: &mut u64,
    ) -> Option<Vec<(u32, u32, u8)>> {
        self.now += 1;
        let now = self.now;
        let state = |node: u32, flag: bool, last_rw: bool| 4 * node as usize + flag as usize + 2 * last_rw as usize;
        // A nonadjacent path starts right after the cycle's first (RW) edge.
        let start = state(from, false, rules.nonadjacent);
        self.stamp[start] = now;
        self.queue.clear();
        self.queue.push_back(start as u32);
        let goal = state(to, rules.need_rw, false);
        while let Some(s) = self.queue.pop_front() {
            if s as usize == goal {
                return Some(self.walk_back(start, goal));
            }
            let (u, flag, last_rw) = (s / 4, s % 2 == 1, (s / 2) % 2 == 1);
            if u == to {
                continue; // reached without the RW edge it needs: going on would pass it twice
            }
            for &(v, kinds) in g.out(u) {
                if *budget == 0 {
                    return None;
                }
                *budget -= 1;
                if !within(v) {
                    continue;
                }
                for kind in [WW, WR, PROCESS, REALTIME, RW] {
                    if kinds & kind & rules.allowed == 0
                        || (rules.nonadjacent && kind == RW && last_rw)
                        || (kind == RW && rules.allowed & IRW != 0 && kinds & IRW == 0)
                    {
                        continue;
                    }
                    let next = state(
                        v,
                        flag || (kind == RW && rules.need_rw),
                        rules.nonadjacent && kind == RW,
                    );
                    if self.stamp[next] != now {
                        self.stamp[next] = now;
                        self.parent[next] = (s, kind);
                        self.queue.push_back(next as u32);
                    }
                }
            }
        }
        None
    }

    fn walk_back(&self, start: usize, goal: usize) -> Vec<(u32, u32, u8)> {
        let mut path = Vec::new();
        let mut s = goal;
        while s != start {
            let (p, kind) = self.parent[s];
            path.push((p / 4, (s / 4) as u32, kind));
            s = p as usize;
        }
        path.reverse();
        path
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn components_find_cycles_and_leave_chains() {
        // 0 -> 1 -> 2 -> 0 is a cycle; 2 -> 3 -> 4 a chain; 4 <-> 5 by RW only.
        let g = Graph::new(
            6,
            vec![
                (0, 1, WW),
                (1, 2, WR),
                (2, 0, RW),
                (2, 3, WW),
                (3, 4, WW),
                (4, 5, RW),
                (5, 4, RW),
                (0, 1, RW),
            ],
        );
        assert_eq!(g.kinds(0, 1), WW | RW);
        let (comp, big) = g.components(WW | WR | RW, |_| true);
        assert_eq!(big, vec![vec![0, 1, 2], vec![4, 5]]);
        assert_eq!(comp[0], comp[2]);
        assert_ne!(comp[2], comp[3]);
        let (_, big) = g.components(WW | WR, |_| true);
        assert!(big.is_empty());
        let (_, big) = g.components(WW | WR | RW, |n| n != 1);
        assert_eq!(big, vec![vec![4, 5]]);
    }

    #[test]
    fn a_long_chain_does_not_overflow_the_stack() {
        let n = 300_000u32;
        let mut edges: Vec<_> = (0..n - 1).map(|i| (i, i + 1, WW)).collect();
        edges.push((n - 1, 0, RW));
        let g = Graph::new(n as usize, edges);
        let (_, big) = g.components(WW | RW, |_| true);
        assert_eq!(big.len(), 1);
        assert_eq!(big[0].len(), n as usize);
    }

    #[test]
    fn paths_keep_to_the_rules() {
        // 1 -> 0 directly by RW, or 1 -> 2 -> 0 by WW then WR.
        let g = Graph::new(3, vec![(1, 0, RW), (1, 2, WW), (2, 0, WR)]);
        let mut s = Searcher::new(3);
        let all = |_: u32| true;
        let mut path = |allowed: u8, need_rw: bool, within: &dyn Fn(u32) -> bool, budget: u64| {
            let mut budget = budget;
            let rules = Rules {
                allowed,
                need_rw,
                nonadjacent: false,
            };
            s.path(&g, (1, 0), rules, within, &mut budget)
        };
        assert_eq!(path(WW | WR | RW, false, &all, 100), Some(vec![(1, 0, RW)]));
        assert_eq!(path(WW | WR, false, &all, 100), Some(vec![(1, 2, WW), (2, 0, WR)]));
        assert_eq!(path(WW | WR | RW, true, &all, 100), Some(vec![(1, 0, RW)]));
        assert_eq!(path(WW, false, &all, 100), None);
        assert_eq!(path(WW | WR, false, &|n| n != 2, 100), None);
        assert_eq!(path(RW, false, &all, 0), None, "no budget, no path");
    }

    #[test]
    fn a_nonadjacent_path_never_walks_two_rw_edges_in_a_row() {
        // Back from 1 to 0: 1 -rw-> 2 -rw-> 0 walks two in a row; 1 -wr-> 3
        // -rw-> 4 -wr-> 0 alternates.
        let g = Graph::new(5, vec![(1, 2, RW), (2, 0, RW), (1, 3, WR), (3, 4, RW), (4, 0, WR)]);
        let mut s = Searcher::new(5);
        let rules = Rules {
            allowed: WW | WR | RW,
            need_rw: true,
            nonadjacent: true,
        };
        let p = s.path(&g, (1, 0), rules, &|_| true, &mut 100).unwrap();
        assert_eq!(p, vec![(1, 3, WR), (3, 4, RW), (4, 0, WR)]);
        // Ending in an rw edge sits next to the cycle's first: refused.
        let g = Graph::new(3, vec![(1, 2, WR), (2, 0, RW)]);
        assert_eq!(s.path(&g, (1, 0), rules, &|_| true, &mut 100), None);
    }
}
