//! The checker's vocabulary: what it may add to the data edges, the
//! anomaly classes and their names, the levels, why an edge holds, and what
//! a check found. Every phase of the checker speaks it; none of them is
//! here (see [`super::check`]).
use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};

use serde::Serialize;

use super::history::{Elem, Key};

/// What the checker may add to the data edges.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// T1 -> T2 when T1 ended before T2 began.
    pub realtime: bool,
    /// T1 -> T2 when T1 came before T2 on the same session.
    pub sessions: bool,
    /// Every cycle class of every strongly connected component, not one per class.
    pub all_cycles: bool,
    /// Writes a committed transaction made that no later read contains
    /// (a history recorded under a nemesis, or with real time asked for).
    pub lost: bool,
    /// rw-register: each key assumed sequentially consistent, so each
    /// session's operations on it see its versions in order (Elle's
    /// `:sequential-keys?`).
    pub sequential_keys: bool,
    /// rw-register: each key assumed linearizable, so an operation sees
    /// every version written before it began (Elle's `:linearizable-keys?`).
    pub linearizable_keys: bool,
}

/// An anomaly's class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Class {
    G0,
    G1a,
    G1b,
    G1c,
    GSingle,
    /// A cycle with two or more rw edges, no two of them adjacent (Long Fork).
    GNonadjacent,
    G2Item,
    /// A G2-item's cycle with an rw edge only a predicate read shows (a
    /// key the read's range did not return, inserted by the next
    /// transaction: a phantom): Adya's G2.
    G2,
    /// Two committed transactions read the same version of a key and both wrote it.
    LostUpdate,
    /// A committed write on top of an aborted one in a key's version order.
    DirtyUpdate,
    /// A transaction read an element it appends only later.
    FutureRead,
    /// The version order of a key has a cycle.
    CyclicVersions,
    /// A read lists the same element twice.
    DuplicateElements,
    /// A read lists an element nobody appended.
    Garbage,
    /// Two reads of a key disagree on its order (neither is a prefix of the other).
    IncompatibleOrder,
    /// A transaction's read does not show its own earlier reads and appends.
    Internal,
    /// An acknowledged append no read that began after the acknowledgement contains.
    Lost,
    /// A transaction whose outcome is unknown, shown committed by a read,
    /// with an append no read that began after that one contains: neither
    /// of its two outcomes explains the reads.
    UnknownContradicted,
}

impl Class {
    /// Every class, in the order reports list them.
    pub const ALL: [Class; 18] = [
        Class::G0,
        Class::G1a,
        Class::G1b,
        Class::G1c,
        Class::GSingle,
        Class::GNonadjacent,
        Class::G2Item,
        Class::G2,
        Class::LostUpdate,
        Class::DirtyUpdate,
        Class::FutureRead,
        Class::CyclicVersions,
        Class::DuplicateElements,
        Class::Garbage,
        Class::IncompatibleOrder,
        Class::Internal,
        Class::Lost,
        Class::UnknownContradicted,
    ];
}

/// The edges beyond data a cycle needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Via {
    Data,
    Session,
    Realtime,
}

/// An anomaly's name: its class, and for a cycle what else it needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Name {
    pub class: Class,
    pub via: Via,
    /// A cycle with an rw edge only a predicate read shows (a G2; a
    /// G-single or G-nonadjacent so is Elle's plain one, not its `-item`).
    pub phantom: bool,
}

impl Name {
    pub fn of(class: Class) -> Name {
        Name {
            class,
            via: Via::Data,
            phantom: class == Class::G2,
        }
    }

    /// Elle's names: G0, G1c, G-single, G2-item, G1a, G1b... with
    /// -process / -realtime where a cycle needs those edges.
    pub fn text(&self) -> String {
        let base = match self.class {
            Class::G0 => "G0",
            Class::G1a => "G1a",
            Class::G1b => "G1b",
            Class::G1c => "G1c",
            Class::GSingle => "G-single",
            Class::GNonadjacent => "G-nonadjacent",
            Class::G2Item => "G2-item",
            Class::G2 => "G2",
            Class::LostUpdate => "lost-update",
            Class::DirtyUpdate => "dirty-update",
            Class::FutureRead => "future-read",
            Class::CyclicVersions => "cyclic-versions",
            Class::DuplicateElements => "duplicate-elements",
            Class::Garbage => "garbage-read",
            Class::IncompatibleOrder => "incompatible-order",
            Class::Internal => "internal",
            Class::Lost => "lost",
            Class::UnknownContradicted => "unknown-contradicted",
        };
        match self.via {
            Via::Data => base.to_string(),
            Via::Session => format!("{base}-process"),
            Via::Realtime => format!("{base}-realtime"),
        }
    }

    pub fn parse(s: &str) -> Option<Name> {
        let (base, via) = if let Some(b) = s.strip_suffix("-realtime") {
            (b, Via::Realtime)
        } else if let Some(b) = s.strip_suffix("-process") {
            (b, Via::Session)
        } else {
            (s, Via::Data)
        };
        let class = Class::ALL.into_iter().find(|c| Name::of(*c).text() == base)?;
        Some(Name { via, ..Name::of(class) })
    }

    pub fn is_cycle(&self) -> bool {
        matches!(
            self.class,
            Class::G0 | Class::G1c | Class::GSingle | Class::GNonadjacent | Class::G2Item | Class::G2
        )
    }
}

impl Serialize for Name {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text())
    }
}

/// PostgreSQL's levels as the checker knows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// Asked for, and read back, as itself; PostgreSQL runs it as read committed.
    ReadUncommitted,
    ReadCommitted,
    RepeatableRead,
    Serializable,
}

impl Level {
    /// A level as lab's options or the server spell it.
    pub fn parse(s: &str) -> Option<Level> {
        match s.trim().to_ascii_lowercase().replace(['-', '_'], " ").as_str() {
            "read uncommitted" => Some(Level::ReadUncommitted),
            "read committed" => Some(Level::ReadCommitted),
            "repeatable read" => Some(Level::RepeatableRead),
            "serializable" => Some(Level::Serializable),
            _ => None,
        }
    }

    pub fn sql(&self) -> &'static str {
        match self {
            Level::ReadUncommitted => "read uncommitted",
            Level::ReadCommitted => "read committed",
            Level::RepeatableRead => "repeatable read",
            Level::Serializable => "serializable",
        }
    }

    pub fn flag(&self) -> &'static str {
        match self {
            Level::ReadUncommitted => "read-uncommitted",
            Level::ReadCommitted => "read-committed",
            Level::RepeatableRead => "repeatable-read",
            Level::Serializable => "serializable",
        }
    }
}

/// Why one edge of a cycle holds, from the operations it rests on.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Why {
    /// `to` appended `then` right after `from`'s `first` on `key` (or, its
    /// `then` read by nobody, after the last element known).
    Ww {
        key: Key,
        first: Elem,
        then: Elem,
        from_op: usize,
        to_op: usize,
        /// Where the key's version order comes from.
        order: OrderFrom,
    },
    /// `to` read `key` and saw `from`'s `elem` last.
    Wr {
        key: Key,
        elem: Elem,
        from_op: usize,
        to_op: usize,
    },
    /// `from` read `key` without `elem`, which `to` appended next (or later,
    /// where no read showed `elem`).
    Rw {
        key: Key,
        elem: Elem,
        from_op: usize,
        to_op: usize,
        /// Where the key's version order comes from.
        order: OrderFrom,
        /// The predicate read (its range) that did not return `key`, its
        /// row not made yet: `elem` was the key's first, a phantom.
        #[serde(skip_serializing_if = "Option::is_none")]
        predicate: Option<(Key, Key)>,
    },
    /// `from` ended before `to` began.
    Realtime,
    /// `from` came before `to` on one session.
    Session,
}

/// The evidence for a key's version order behind a ww or rw edge.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OrderFrom {
    /// The key's longest read: (transaction, operation).
    LongestRead { txn: usize, op: usize },
    /// The key's only append: the order is [], then it.
    SingleAppend,
    /// The element was read by nobody: it came after the order's last element.
    Unread,
    /// An rw-register's: the server's commit order of the key's writers.
    CommitOrder,
    /// An rw-register's: what the history's reads and writes order.
    Inferred,
    /// An rw-register's: the history's order with each session's
    /// operations on the key in order (`--sequential-keys`).
    SequentialKeys,
    /// An rw-register's: the history's order with real time on the key
    /// (`--linearizable-keys`).
    LinearizableKeys,
    /// An rw-register's key with no one order: one version came before
    /// the other as `by` says (not necessarily right before).
    Partial { by: PairFrom },
}

/// What said one version of an rw-register's partly ordered key came
/// before another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PairFrom {
    /// The history's reads and writes.
    History,
    /// Each session's order (`--sequential-keys`).
    SequentialKeys,
    /// Real time (`--linearizable-keys`).
    LinearizableKeys,
}

impl Why {
    /// The operations (transaction position in the cycle aside) the edge rests on: (from's op, to's op).
    pub fn ops(&self) -> Option<(usize, usize)> {
        match self {
            Why::Ww { from_op, to_op, .. } | Why::Wr { from_op, to_op, .. } | Why::Rw { from_op, to_op, .. } => {
                Some((*from_op, *to_op))
            }
            _ => None,
        }
    }
}

/// One edge of a cycle: transaction indexes into the history's `txns`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Link {
    pub from: usize,
    pub to: usize,
    pub why: Why,
}

/// One anomaly, with what shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Anomaly {
    pub name: Name,
    /// The transactions involved (a cycle's in its order).
    pub txns: Vec<usize>,
    /// A cycle's edges, the last back to the first transaction.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cycle: Vec<Link>,
    /// A read's anomaly: the reading transaction's op, the key, the element in question.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read: Option<ReadAt>,
}

impl Anomaly {
    /// Its transactions, each once, in the order they first appear.
    pub fn distinct_txns(&self) -> Vec<usize> {
        let mut out: Vec<usize> = Vec::new();
        for t in &self.txns {
            if !out.contains(t) {
                out.push(*t);
            }
        }
        out
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReadAt {
    pub txn: usize,
    pub op: usize,
    pub key: Key,
    /// The element the anomaly is about (the aborted, intermediate, unknown or duplicated one).
    pub elem: Option<Elem>,
    /// Who appended it, where known.
    pub writer: Option<usize>,
    /// For incompatible orders: the other read (transaction, op).
    pub other: Option<(usize, usize)>,
}

/// What the checker found.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Checked {
    pub txns: usize,
    pub committed: usize,
    pub aborted: usize,
    pub unknown: usize,
    /// Examples, at most one per class unless every cycle was asked for.
    pub anomalies: Vec<Anomaly>,
    /// How many of each class were seen (cycles: strongly connected components showing one).
    pub counts: BTreeMap<String, usize>,
    /// Some search ran out of budget: a cycle class may be missing.
    pub cut_short: bool,
    /// An rw-register history's: where its keys' version orders came from.
    pub registers: Option<VersionSources>,
}

/// Where an rw-register history's version orders came from, key by key.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct VersionSources {
    /// Ordered by the server's commit order (with the history's own order).
    pub server: usize,
    /// Ordered by what the history shows alone.
    pub inferred: usize,
    /// Ordered only with each session's order on the key (`--sequential-keys`).
    pub sequential: usize,
    /// Ordered only with real time on the key (`--linearizable-keys`).
    pub linearizable: usize,
    /// No one order (the key's edges are its partial order's).
    pub undecided: usize,
    /// Keys whose orders contradict each other (cyclic-versions): each
    /// also counted by the order it keeps without the assumptions
    /// (`--sequential-keys`, `--linearizable-keys`), or as undecided.
    pub cyclic: usize,
    /// What was assumed of each key: sequentially consistent, linearizable.
    #[serde(skip)]
    pub assumed: (bool, bool),
}

impl Checked {
    pub fn names(&self) -> Vec<Name> {
        let mut v: Vec<Name> = self.anomalies.iter().map(|a| a.name).collect();
        v.sort();
        v.dedup();
        v
    }
}

/// A hasher for integer keys: one multiply (the default SipHash is a
/// quarter of the checker's time on a million transactions).
#[derive(Default, Clone, Copy)]
pub struct IntHasher(u64);

impl Hasher for IntHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0.rotate_left(5) ^ *b as u64).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }
    fn write_i64(&mut self, i: i64) {
        self.0 = (self.0.rotate_left(5) ^ i as u64).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_u64(&mut self, i: u64) {
        self.write_i64(i as i64)
    }
}

pub type IntMap<K, V> = HashMap<K, V, BuildHasherDefault<IntHasher>>;
