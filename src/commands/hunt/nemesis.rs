//! The nemesis's plan, as Jepsen's nemeses are planned: which faults a run
//! may inject (`--nemesis pause,kill,restart,partition`), and from the
//! seed, one after the other every `--nemesis-interval`, which fault, on
//! which session, for how long. Pure: what the plan says is done (and
//! always undone) by [`super::chaos`]; the same seed gives the same plan.
use std::time::Duration;

/// A fault lab can inject.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Fault {
    /// SIGSTOP of a session's backend, SIGCONT after a short span.
    Pause,
    /// SIGKILL of a session's backend: the postmaster ends every backend
    /// and recovers from the WAL (crash recovery).
    Kill,
    /// Immediate shutdown of lab's server, then a start (crash recovery).
    Restart,
    /// Sessions cut off from the server by lab's fault proxy.
    Partition,
    /// The primary of lab's HA cluster (Patroni, three nodes) killed or
    /// cut off from the others; Patroni promotes a standby and the old
    /// primary rejoins (pg_rewind) before the next.
    Failover,
}

impl Fault {
    pub const ALL: [Fault; 5] = [
        Fault::Pause,
        Fault::Kill,
        Fault::Restart,
        Fault::Partition,
        Fault::Failover,
    ];

    pub fn name(&self) -> &'static str {
        match self {
            Fault::Pause => "pause",
            Fault::Kill => "kill",
            Fault::Restart => "restart",
            Fault::Partition => "partition",
            Fault::Failover => "failover",
        }
    }

    pub fn parse(s: &str) -> Option<Fault> {
        Fault::ALL
            .into_iter()
            .find(|f| f.name() == s.trim().to_ascii_lowercase())
    }

    /// Needs the server's processes on this machine, lab's own (for a
    /// failover, lab's own HA cluster).
    pub fn needs_own_server(&self) -> bool {
        matches!(self, Fault::Pause | Fault::Kill | Fault::Restart | Fault::Failover)
    }

    /// Ends connections: what was in flight has an unknown outcome.
    pub fn ends_connections(&self) -> bool {
        matches!(self, Fault::Kill | Fault::Restart | Fault::Partition | Fault::Failover)
    }
}

/// `--nemesis a,b --nemesis c`: the faults, each once, in their order; or
/// the name that is not one.
pub fn parse_list(given: &[String]) -> Result<Vec<Fault>, String> {
    let mut out = Vec::new();
    for word in given.iter().flat_map(|g| g.split(',')).filter(|w| !w.trim().is_empty()) {
        let f = Fault::parse(word).ok_or_else(|| word.trim().to_string())?;
        if !out.contains(&f) {
            out.push(f);
        }
    }
    out.sort();
    Ok(out)
}

/// How a partition cuts a session off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cut {
    /// Nothing passes either way and nothing is acknowledged: the session
    /// hears nothing, the server keeps the backend.
    BlackHole,
    /// Both sides closed with RST at once.
    Reset,
}

impl Cut {
    pub fn name(&self) -> &'static str {
        match self {
            Cut::BlackHole => "black hole",
            Cut::Reset => "reset",
        }
    }
}

/// One fault, as planned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Act {
    /// Stop session `session`'s backend for `span`: at once, or (`at_commit`)
    /// `offset` after its next COMMIT is sent, where the server makes a
    /// transaction visible and then, a little later, committed for SSI.
    Pause {
        session: usize,
        span: Duration,
        at_commit: bool,
        offset: Duration,
    },
    Kill {
        session: usize,
    },
    Restart,
    /// Cut `sessions` off for `span`.
    Partition {
        sessions: Vec<usize>,
        cut: Cut,
        span: Duration,
    },
    /// The HA cluster's primary killed (its PostgreSQL, every process at
    /// once), or (`partition`) cut off from etcd and the other nodes while
    /// the sessions still reach it; until another node is promoted.
    Failover {
        partition: bool,
    },
}

impl Act {
    pub fn fault(&self) -> Fault {
        match self {
            Act::Pause { .. } => Fault::Pause,
            Act::Kill { .. } => Fault::Kill,
            Act::Restart => Fault::Restart,
            Act::Partition { .. } => Fault::Partition,
            Act::Failover { .. } => Fault::Failover,
        }
    }
}

/// The faults of one run, one every `interval`, drawn from the seed.
pub struct Schedule {
    state: u64,
    faults: Vec<Fault>,
    clients: usize,
    pub interval: Duration,
}

/// The longest pause: well within any statement's deadline.
pub const MAX_PAUSE: Duration = Duration::from_millis(200);
/// The longest partition.
pub const MAX_PARTITION: Duration = Duration::from_millis(1000);

impl Schedule {
    pub fn new(seed: u64, faults: &[Fault], clients: usize, interval: Duration) -> Schedule {
        Schedule {
            // Its own stream: the workload's transactions do not change with the nemesis.
            state: seed ^ 0x6e65_6d65_7369_7321,
            faults: faults.to_vec(),
            clients: clients.max(1),
            interval,
        }
    }

    /// splitmix64, as the workload's generator.
    fn random(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.random() % n.max(1)
    }

    fn millis(&mut self, from: u64, to: u64) -> Duration {
        Duration::from_millis(from + self.below(to - from + 1))
    }
}

impl Iterator for Schedule {
    type Item = Act;

    fn next(&mut self) -> Option<Act> {
        if self.faults.is_empty() {
            return None;
        }
        let pick = self.below(self.faults.len() as u64) as usize;
        let fault = self.faults[pick];
        let session = self.below(self.clients as u64) as usize;
        Some(match fault {
            Fault::Pause => Act::Pause {
                session,
                span: self.millis(5, MAX_PAUSE.as_millis() as u64),
                at_commit: !self.random().is_multiple_of(4),
                offset: Duration::from_micros(self.below(400)),
            },
            Fault::Kill => Act::Kill { session },
            Fault::Restart => Act::Restart,
            Fault::Partition => {
                // One session, or a random part of them (never none).
                let mut sessions: Vec<usize> = (0..self.clients).filter(|_| self.random().is_multiple_of(2)).collect();
                if sessions.is_empty() {
                    sessions.push(session);
                }
                Act::Partition {
                    sessions,
                    cut: if self.random().is_multiple_of(3) {
                        Cut::Reset
                    } else {
                        Cut::BlackHole
                    },
                    span: self.millis(50, MAX_PARTITION.as_millis() as u64),
                }
            }
            // One in three a partition (the slow kind: Patroni's ttl).
            Fault::Failover => Act::Failover {
                partition: self.random().is_multiple_of(3),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_is_parsed_once_each_in_order() {
        let l = parse_list(&["restart,pause".into(), "kill, pause".into()]).unwrap();
        assert_eq!(l, vec![Fault::Pause, Fault::Kill, Fault::Restart]);
        assert_eq!(parse_list(&["pause,crash".into()]).unwrap_err(), "crash");
        assert!(parse_list(&[]).unwrap().is_empty());
        assert!(Fault::Pause.needs_own_server() && !Fault::Partition.needs_own_server());
    }

    #[test]
    fn the_same_seed_plans_the_same_faults() {
        let all = [Fault::Pause, Fault::Kill, Fault::Restart, Fault::Partition];
        let a: Vec<Act> = Schedule::new(7, &all, 4, Duration::from_millis(100)).take(50).collect();
        let b: Vec<Act> = Schedule::new(7, &all, 4, Duration::from_millis(100)).take(50).collect();
        assert_eq!(a, b);
        let c: Vec<Act> = Schedule::new(8, &all, 4, Duration::from_millis(100)).take(50).collect();
        assert_ne!(a, c);
        // Every kind comes up, each within its bounds.
        for f in all {
            assert!(a.iter().any(|x| x.fault() == f), "{f:?}");
        }
        for x in &a {
            match x {
                Act::Pause {
                    session, span, offset, ..
                } => {
                    assert!(*session < 4 && *span <= MAX_PAUSE && *span >= Duration::from_millis(5));
                    assert!(*offset < Duration::from_micros(400));
                }
                Act::Kill { session } => assert!(*session < 4),
                Act::Partition { sessions, span, .. } => {
                    assert!(!sessions.is_empty() && sessions.iter().all(|s| *s < 4));
                    assert!(*span <= MAX_PARTITION);
                }
                Act::Restart | Act::Failover { .. } => {}
            }
        }
    }

    #[test]
    fn only_the_faults_asked_for() {
        let s = Schedule::new(1, &[Fault::Pause], 2, Duration::from_millis(10));
        assert!(s.take(30).all(|a| a.fault() == Fault::Pause));
        assert_eq!(Schedule::new(1, &[], 2, Duration::ZERO).next(), None);
        // Failovers: kills, and partitions now and then.
        let f: Vec<Act> = Schedule::new(1, &[Fault::Failover], 2, Duration::ZERO)
            .take(30)
            .collect();
        assert!(f.contains(&Act::Failover { partition: true }));
        assert!(f.contains(&Act::Failover { partition: false }));
        assert!(Fault::Failover.needs_own_server() && Fault::Failover.ends_connections());
    }
}
