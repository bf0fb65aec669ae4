//! Consistency models and what each forbids, as Elle relates them: which
//! anomaly implies which (a G-single is a G-nonadjacent is a G2...), which
//! model implies which (serializable is repeatable read and snapshot
//! isolation...), and which anomalies each model forbids directly. From a
//! set of anomalies found: the weakest models the history violates (`not`)
//! and the stronger ones it therefore violates too (`also_not`).
//!
//! The relations are the literature's (Adya; Adya, Liskov, O'Neil; Bailis
//! et al.; Cerone, Bernardi, Gotsman; Daudjee, Salem; Fekete et al.), as
//! Elle's `elle.consistency-model` gathers them; written here as tables of
//! names. Models go by their friendly names (read-committed for Adya's
//! PL-2, snapshot-isolation for PL-SI, serializable for PL-3 and
//! conflict-serializable, strict-serializable for PL-SS). Lab's item
//! cycles are Elle's `-item` anomalies: lab's G-single is Elle's
//! G-single-item, lab's G-nonadjacent is G-nonadjacent-item.
use std::collections::BTreeSet;

use super::anomaly::{Class, Level, Name, Via};

/// (anomaly, the anomalies it implies).
const IMPLIES: &[(&str, &[&str])] = &[
    ("G0", &["G1c", "G0-process"]),
    ("G0-process", &["G1c-process", "G0-realtime"]),
    ("G0-realtime", &["G1c-realtime"]),
    ("G1a", &["G1"]),
    ("G1b", &["G1"]),
    ("G1c", &["G1", "G1c-process"]),
    ("G1c-process", &["G1c-realtime", "G1-process"]),
    ("G1c-realtime", &["G1-realtime"]),
    ("G1", &["G1-process"]),
    ("G1-process", &["G1-realtime"]),
    (
        "G-single-item",
        &["G-single", "G-single-item-process", "G-nonadjacent-item"],
    ),
    (
        "G-single-item-process",
        &[
            "G-single-process",
            "G-single-item-realtime",
            "G-nonadjacent-item-process",
        ],
    ),
    (
        "G-single-item-realtime",
        &["G-single-realtime", "G-nonadjacent-item-realtime"],
    ),
    ("G-single", &["G-nonadjacent", "GSIb", "G-single-process"]),
    ("G-single-process", &["G-nonadjacent-process", "G-single-realtime"]),
    ("G-single-realtime", &["G-nonadjacent-realtime"]),
    (
        "G-nonadjacent-item",
        &["G-nonadjacent", "G2-item", "G-nonadjacent-item-process"],
    ),
    (
        "G-nonadjacent-item-process",
        &[
            "G-nonadjacent-process",
            "G2-item-process",
            "G-nonadjacent-item-realtime",
        ],
    ),
    (
        "G-nonadjacent-item-realtime",
        &["G2-item-realtime", "G-nonadjacent-realtime"],
    ),
    ("G-nonadjacent", &["G2", "G-nonadjacent-process"]),
    ("G-nonadjacent-process", &["G2-process", "G-nonadjacent-realtime"]),
    ("G-nonadjacent-realtime", &["G2-realtime"]),
    ("G2", &["G2-process"]),
    ("G2-item", &["G2", "G2-item-process"]),
    ("G2-item-process", &["G2-process", "G2-item-realtime"]),
    ("G2-item-realtime", &["G2-realtime"]),
    ("G2-process", &["G2-realtime"]),
    ("GSIa", &["GSI"]),
    ("GSIb", &["GSI"]),
    // Two reads no single order explains: a dirty read somewhere.
    ("incompatible-order", &["G1a"]),
    // A read of the transaction's own later append: a one-transaction G1c.
    ("future-read", &["G1c"]),
    // A committed append on top of an aborted one.
    ("dirty-update", &["G1a"]),
    ("lost-update", &["write-skew", "G2-item"]),
    ("write-skew", &["G2"]),
];

/// (model, the weaker models it implies).
const MODELS: &[(&str, &[&str])] = &[
    ("causal-cerone", &["read-atomic"]),
    ("consistent-view", &["cursor-stability", "monotonic-view"]),
    ("cursor-stability", &["read-committed"]),
    ("forward-consistent-view", &["consistent-view"]),
    ("read-committed", &["read-uncommitted"]),
    (
        "serializable",
        &[
            "repeatable-read",
            "update-serializable",
            "snapshot-isolation",
            "view-serializable",
        ],
    ),
    ("update-serializable", &["forward-consistent-view"]),
    ("monotonic-atomic-view", &["read-committed"]),
    ("monotonic-view", &["read-committed"]),
    ("monotonic-snapshot-read", &["read-committed"]),
    ("parallel-snapshot-isolation", &["causal-cerone", "update-atomic"]),
    ("prefix", &["causal-cerone"]),
    ("read-atomic", &["monotonic-atomic-view"]),
    ("repeatable-read", &["cursor-stability", "monotonic-atomic-view"]),
    ("update-atomic", &["read-atomic"]),
    ("session-serializable", &["1SR"]),
    (
        "snapshot-isolation",
        &[
            "forward-consistent-view",
            "monotonic-atomic-view",
            "monotonic-snapshot-read",
            "parallel-snapshot-isolation",
            "prefix",
        ],
    ),
    (
        "strict-serializable",
        &[
            "serializable",
            "linearizable",
            "snapshot-isolation",
            "strong-snapshot-isolation",
            "strong-session-serializable",
            "session-serializable",
        ],
    ),
    ("strong-session-read-uncommitted", &["read-uncommitted"]),
    (
        "strong-session-read-committed",
        &["read-committed", "strong-session-read-uncommitted"],
    ),
    ("strong-read-uncommitted", &["strong-session-read-uncommitted"]),
    (
        "strong-read-committed",
        &["strong-session-read-committed", "strong-read-uncommitted"],
    ),
    (
        "strong-session-serializable",
        &["serializable", "strong-session-snapshot-isolation"],
    ),
    (
        "strong-session-snapshot-isolation",
        &["snapshot-isolation", "strong-session-read-committed"],
    ),
    (
        "strong-snapshot-isolation",
        &["strong-session-snapshot-isolation", "strong-read-committed"],
    ),
    ("linearizable", &["sequential"]),
    ("sequential", &["causal"]),
    ("causal", &["writes-follow-reads", "PRAM"]),
    ("PRAM", &["monotonic-reads", "monotonic-writes", "read-your-writes"]),
];

/// (model, the anomalies it forbids directly; weaker models' and the
/// anomalies implying these are forbidden too).
const FORBIDS: &[(&str, &[&str])] = &[
    ("causal-cerone", &["internal", "G1a"]),
    ("cursor-stability", &["G1", "G-cursor", "lost-update"]),
    ("monotonic-view", &["G1", "G-monotonic"]),
    ("monotonic-snapshot-read", &["G1", "G-MSR"]),
    ("consistent-view", &["G1", "G-single"]),
    ("forward-consistent-view", &["G1", "G-SIb"]),
    ("parallel-snapshot-isolation", &["internal", "G1a"]),
    ("serializable", &["G1", "G2", "predicate-read-miss", "internal"]),
    ("read-committed", &["G1"]),
    ("read-uncommitted", &["G0", "duplicate-elements", "cyclic-versions"]),
    ("prefix", &["internal", "G1a"]),
    ("snapshot-isolation", &["internal", "G1", "G-SI", "G-nonadjacent"]),
    ("read-atomic", &["internal", "G1a", "future-read"]),
    ("repeatable-read", &["G1", "G2-item", "lost-update"]),
    ("update-atomic", &["lost-update"]),
    ("strict-serializable", &["G1", "G1c-realtime", "G2-realtime"]),
    ("strong-session-read-uncommitted", &["G0-process"]),
    ("strong-session-read-committed", &["G1c-process"]),
    ("strong-read-uncommitted", &["G0-realtime"]),
    ("strong-read-committed", &["G1c-realtime"]),
    (
        "strong-session-snapshot-isolation",
        &["internal", "G1-process", "G-nonadjacent-process"],
    ),
    (
        "strong-snapshot-isolation",
        &["internal", "G1-realtime", "G-nonadjacent-realtime"],
    ),
    ("strong-session-serializable", &["G1-process", "G2-process"]),
    ("update-serializable", &["G1", "G-update"]),
];

fn out<'a>(table: &'a [(&'a str, &'a [&'a str])], x: &str) -> &'a [&'a str] {
    table.iter().find(|(k, _)| *k == x).map_or(&[], |(_, v)| v)
}

/// Everything reachable from `start` by `next` (start included).
fn reach<'a>(start: impl IntoIterator<Item = &'a str>, next: impl Fn(&str) -> Vec<&'a str>) -> BTreeSet<&'a str> {
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    let mut todo: Vec<&str> = start.into_iter().collect();
    while let Some(x) = todo.pop() {
        if seen.insert(x) {
            todo.extend(next(x));
        }
    }
    seen
}

/// The anomalies `found` implies, themselves included.
pub fn implied<'a>(found: impl IntoIterator<Item = &'a str>) -> BTreeSet<&'a str> {
    reach(found, |a| out(IMPLIES, a).to_vec())
}

/// Models `m` implies (itself included): the weaker ones.
fn weaker(m: &str) -> BTreeSet<&str> {
    let start: &str = MODELS
        .iter()
        .flat_map(|(k, v)| std::iter::once(*k).chain(v.iter().copied()))
        .find(|x| *x == m)
        .unwrap_or("");
    reach([start].into_iter().filter(|s| !s.is_empty()), |x| {
        out(MODELS, x).to_vec()
    })
}

/// Models implying `m` (itself included): the stronger ones.
fn stronger(m: &'static str) -> BTreeSet<&'static str> {
    reach([m], |x| {
        MODELS.iter().filter(|(_, v)| v.contains(&x)).map(|(k, _)| *k).collect()
    })
}

/// Every anomaly model `m` forbids: what it and the models it implies
/// forbid directly, and every anomaly that implies one of those.
pub fn forbidden_by(m: &str) -> BTreeSet<&'static str> {
    let direct: BTreeSet<&'static str> = weaker(m)
        .into_iter()
        .flat_map(|w| out(FORBIDS, w).iter().copied())
        .collect();
    let all: Vec<&'static str> = IMPLIES
        .iter()
        .flat_map(|(k, v)| std::iter::once(*k).chain(v.iter().copied()))
        .chain(FORBIDS.iter().flat_map(|(_, v)| v.iter().copied()))
        .collect();
    all.into_iter()
        .filter(|a| implied([*a]).iter().any(|i| direct.contains(i)))
        .collect()
}

/// Models a history showing `found` cannot satisfy: `not`, the weakest of
/// them, and `also_not`, the rest.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Boundary {
    pub not: Vec<&'static str>,
    pub also_not: Vec<&'static str>,
}

pub fn boundary<'a>(found: impl IntoIterator<Item = &'a str>) -> Boundary {
    let impossible: BTreeSet<&'static str> = implied(found)
        .into_iter()
        .flat_map(|a| FORBIDS.iter().filter(move |(_, v)| v.contains(&a)).map(|(m, _)| *m))
        .flat_map(stronger)
        .collect();
    let (not, also_not): (Vec<&str>, Vec<&str>) = impossible
        .iter()
        .partition(|m| !impossible.iter().any(|o| o != *m && weaker(m).contains(o)));
    Boundary { not, also_not }
}

/// Elle's name for one of lab's anomalies (lab's item cycles are Elle's
/// `-item` ones; one through a phantom is not).
pub fn elle_name(n: Name) -> String {
    match n.class {
        Class::GSingle | Class::GNonadjacent if !n.phantom => {
            let t = n.text();
            let base = Name::of(n.class).text();
            format!("{base}-item{}", &t[base.len()..])
        }
        _ => n.text(),
    }
}

/// The model PostgreSQL documents for `level`, strengthened by the order
/// the cycle needs: with session order the strong-session model, with
/// real time the strong (strict) one.
pub fn model(level: Level, via: Via) -> &'static str {
    match (level, via) {
        (Level::ReadUncommitted | Level::ReadCommitted, Via::Data) => "read-committed",
        (Level::ReadUncommitted | Level::ReadCommitted, Via::Session) => "strong-session-read-committed",
        (Level::ReadUncommitted | Level::ReadCommitted, Via::Realtime) => "strong-read-committed",
        (Level::RepeatableRead, Via::Data) => "snapshot-isolation",
        (Level::RepeatableRead, Via::Session) => "strong-session-snapshot-isolation",
        (Level::RepeatableRead, Via::Realtime) => "strong-snapshot-isolation",
        (Level::Serializable, Via::Data) => "serializable",
        (Level::Serializable, Via::Session) => "strong-session-serializable",
        (Level::Serializable, Via::Realtime) => "strict-serializable",
    }
}

/// Does PostgreSQL forbid `name` at `level`? Each level is held to the
/// model PostgreSQL documents for it ([`models::model`]): READ UNCOMMITTED
/// (which PostgreSQL runs as READ COMMITTED) and READ COMMITTED to read
/// committed, which forbids G0, G1a, G1b, G1c and what implies them;
/// REPEATABLE READ to snapshot isolation, which also forbids G-single,
/// G-nonadjacent (Long Fork) and lost updates; SERIALIZABLE to
/// serializability, every cycle. A cycle that needs real-time or session
/// edges is judged by the strong (or strong-session) form of the model:
/// the user asked for those orders. Garbage and internal reads no
/// PostgreSQL level allows, whatever the model says; nor does any lose an
/// acknowledged write (durability, not isolation: no model of Elle's
/// names it).
pub fn forbidden(name: Name, level: Level) -> bool {
    matches!(
        name.class,
        Class::Garbage | Class::Internal | Class::Lost | Class::UnknownContradicted
    ) || forbidden_by(model(level, name.via)).contains(elle_name(name).as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_the_models_forbid() {
        let si = forbidden_by("snapshot-isolation");
        for a in [
            "G0",
            "G1a",
            "G1b",
            "G1c",
            "G-single-item",
            "G-nonadjacent-item",
            "lost-update",
            "internal",
        ] {
            assert!(si.contains(a), "{a}");
        }
        assert!(!si.contains("G2-item"));
        let rc = forbidden_by("read-committed");
        for a in [
            "G0",
            "G1a",
            "G1b",
            "G1c",
            "incompatible-order",
            "dirty-update",
            "future-read",
        ] {
            assert!(rc.contains(a), "{a}");
        }
        for a in ["G-single-item", "G2-item", "lost-update", "internal"] {
            assert!(!rc.contains(a), "{a}");
        }
        assert!(forbidden_by("serializable").contains("G2-item"));
        assert!(!forbidden_by("serializable").contains("G-single-item-realtime"));
        assert!(forbidden_by("strict-serializable").contains("G-single-item-realtime"));
        assert!(forbidden_by("strong-snapshot-isolation").contains("G-single-item-realtime"));
        assert!(!forbidden_by("strong-snapshot-isolation").contains("G2-item-realtime"));
    }

    #[test]
    fn boundaries_as_elle_draws_them() {
        let b = boundary(["G2-item"]);
        assert_eq!(b.not, vec!["repeatable-read"]);
        assert!(b.also_not.contains(&"serializable") && b.also_not.contains(&"strict-serializable"));
        assert!(!b.also_not.contains(&"snapshot-isolation"));
        let b = boundary(["G-nonadjacent-item"]);
        assert_eq!(b.not, vec!["repeatable-read", "snapshot-isolation"]);
        assert_eq!(
            boundary(["G-single-item"]).not,
            vec!["consistent-view", "repeatable-read"]
        );
        assert_eq!(boundary(["G1c"]).not, vec!["read-committed"]);
        assert_eq!(boundary(["G0"]).not, vec!["read-uncommitted"]);
        assert_eq!(
            boundary(["G-single-item-process"]).not,
            vec!["strong-session-snapshot-isolation"]
        );
        assert_eq!(boundary(["lost-update"]).not, vec!["cursor-stability", "update-atomic"]);
        assert_eq!(boundary(["internal"]).not, vec!["read-atomic"]);
        assert_eq!(boundary(Vec::<&str>::new()), Boundary::default());
    }
}
