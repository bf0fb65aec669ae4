//! The checker against Elle itself: the list-append and rw-register
//! histories of Elle's own tests (jepsen-io/elle,
//! `test/elle/list_append_test.clj` and `test/elle/rw_register_test.clj`,
//! Eclipse Public License 1.0), transcribed case by case in Elle's little
//! languages (`ax1ry12`: append 1 to x, read y = [1 2]; `wx1ry_`: write 1
//! to x, read y = nil), each with the anomaly types Elle's test expects.
//! Lab must name the same (in Elle's names), or the difference is one
//! docs/HUNT.md's table explains.
#![cfg(test)]

use super::check::{Options, check};
use super::history::History;
use super::models::elle_name;

/// A transaction: its process, how it ended (ok, fail, info), and its
/// operations in Elle's language.
type T = (i64, &'static str, &'static str);

/// `ax1ry12` as EDN micro-operations; `done`: with what the reads returned
/// (an invocation's reads are nil).
fn mops(s: &str, done: bool) -> String {
    let mut out: Vec<(char, char, Vec<char>)> = Vec::new();
    for c in s.chars() {
        match c {
            'a' | 'r' => out.push((c, ' ', Vec::new())),
            'x' | 'y' | 'z' | 't' | 'u' => out.last_mut().expect("an operation first").1 = c,
            d => out.last_mut().expect("an operation first").2.push(d),
        }
    }
    let ops: Vec<String> = out
        .iter()
        .map(|(f, k, v)| match f {
            'a' => format!("[:append :{k} {}]", v.iter().collect::<String>()),
            _ if !done || v.is_empty() => format!("[:r :{k} nil]"),
            _ => format!(
                "[:r :{k} [{}]]",
                v.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(" ")
            ),
        })
        .collect();
    format!("[{}]", ops.join(" "))
}

/// rw-register's `wx1ry_` as EDN micro-operations (`_`: nil); `done` as above.
fn register_mops(s: &str, done: bool) -> String {
    let mut ops: Vec<String> = Vec::new();
    let mut chars = s.chars();
    while let (Some(f), Some(k), Some(v)) = (chars.next(), chars.next(), chars.next()) {
        let v = if v == '_' || (f == 'r' && !done) {
            "nil".to_string()
        } else {
            v.to_string()
        };
        ops.push(format!("[:{f} :{k} {v}]"));
    }
    format!("[{}]", ops.join(" "))
}

/// A history of `txns`, each invoked and completed in turn (time 0, 1, 2...).
fn edn(txns: &[T]) -> String {
    edn_of(txns, mops)
}

fn edn_of(txns: &[T], mops: fn(&str, bool) -> String) -> String {
    let mut text = String::new();
    for (i, (p, kind, ops)) in txns.iter().enumerate() {
        text.push_str(&format!(
            "{{:type :invoke, :f :txn, :value {}, :process {p}, :time {}}}\n",
            mops(ops, false),
            2 * i
        ));
        text.push_str(&format!(
            "{{:type :{kind}, :f :txn, :value {}, :process {p}, :time {}}}\n",
            mops(ops, *kind == "ok"),
            2 * i + 1
        ));
    }
    text
}

struct Case {
    name: &'static str,
    txns: &'static [T],
    opts: Options,
    /// The anomaly types Elle's test expects.
    elle: &'static [&'static str],
    /// What lab names instead, where it differs (docs/HUNT.md's table says why).
    lab: Option<&'static [&'static str]>,
}

const NONE: Options = Options {
    realtime: false,
    sessions: false,
    all_cycles: false,
    lost: false,
    sequential_keys: false,
    linearizable_keys: false,
};
const REALTIME: Options = Options { realtime: true, ..NONE };
const SESSIONS: Options = Options { sessions: true, ..NONE };
const SEQUENTIAL_KEYS: Options = Options {
    sequential_keys: true,
    ..NONE
};

const CASES: &[Case] = &[
    Case {
        name: "G0",
        txns: &[(0, "ok", "ax1ay1"), (1, "ok", "ax2ay2"), (2, "ok", "rx12ry21")],
        opts: NONE,
        elle: &["G0"],
        lab: None,
    },
    Case {
        name: "G1a",
        txns: &[(0, "fail", "ax1"), (1, "ok", "rx1")],
        opts: NONE,
        // Elle also says its transaction graph is empty: no anomaly, a note.
        elle: &["G1a", "empty-transaction-graph"],
        lab: Some(&["G1a"]),
    },
    Case {
        name: "G1b",
        txns: &[(0, "ok", "ax1ax2"), (1, "ok", "rx1")],
        opts: NONE,
        // The read of the intermediate [1] misses T0's later append: rw, a G-single too.
        elle: &["G-single-item", "G1b"],
        lab: None,
    },
    Case {
        name: "G1c",
        txns: &[(0, "ok", "ax1ry1"), (1, "ok", "ax2ay1"), (2, "ok", "rx12ry1")],
        opts: NONE,
        elle: &["G1c"],
        lab: None,
    },
    Case {
        name: "G-single",
        txns: &[(0, "ok", "ax1ay1"), (1, "ok", "ax2ry"), (2, "ok", "rx12")],
        opts: NONE,
        elle: &["G-single-item"],
        lab: None,
    },
    Case {
        name: "G2",
        txns: &[(0, "ok", "ax1ry"), (1, "ok", "ay1rx")],
        opts: NONE,
        elle: &["G2-item"],
        lab: None,
    },
    Case {
        name: "Strong SI violation",
        txns: &[(0, "ok", "ax1"), (1, "ok", "ax2"), (2, "ok", "rx1"), (3, "ok", "rx12")],
        opts: REALTIME,
        elle: &["G-single-item-realtime"],
        lab: None,
    },
    Case {
        name: "Strong Session SI violation",
        txns: &[(0, "ok", "ax1"), (1, "ok", "ax2"), (1, "ok", "rx1"), (2, "ok", "rx12")],
        opts: SESSIONS,
        elle: &["G-single-item-process"],
        lab: None,
    },
    Case {
        name: "G-nonadjacent-process",
        txns: &[(0, "ok", "rxrz1"), (1, "ok", "ax1"), (1, "ok", "rz"), (2, "ok", "az1")],
        opts: SESSIONS,
        elle: &["G-nonadjacent-item-process"],
        lab: None,
    },
    Case {
        name: "contradictory read orders",
        txns: &[
            (0, "ok", "ax1ry1"),
            (1, "ok", "ax2"),
            (2, "ok", "ax3ay1"),
            (3, "ok", "rx13"),
            (4, "ok", "rx123"),
        ],
        opts: NONE,
        elle: &["G1c", "incompatible-order"],
        lab: None,
    },
    Case {
        name: "dirty update, direct",
        txns: &[(0, "fail", "ax1"), (1, "ok", "ax2"), (2, "ok", "rx12")],
        opts: NONE,
        // Elle's test asks for dirty updates alone; the read of the aborted 1 is a G1a too.
        elle: &["dirty-update"],
        lab: Some(&["G1a", "dirty-update"]),
    },
    Case {
        name: "dirty update, indirect",
        txns: &[
            (0, "fail", "ax1"),
            (1, "info", "ax2"),
            (2, "ok", "ax3"),
            (3, "ok", "rx123"),
        ],
        opts: NONE,
        elle: &["dirty-update"],
        lab: Some(&["G1a", "dirty-update"]),
    },
    Case {
        name: "duplicated elements",
        txns: &[(0, "ok", "ax1ry1"), (1, "ok", "ax2ay1"), (2, "ok", "rx121")],
        opts: NONE,
        elle: &["G1c", "duplicate-elements"],
        // Lab takes the order as read, [1 2 1]: 2 then 1 again is a ww edge
        // back, and the cycle is a G0 (which implies the G1c); Elle keeps
        // each element's first place, [1 2].
        lab: Some(&["G0", "duplicate-elements"]),
    },
    Case {
        name: "internal consistency violation",
        txns: &[(0, "ok", "ax1ax2ax4"), (1, "ok", "ax3rx1234")],
        opts: NONE,
        // Elle's test asks for internal alone ("there's a G0 here too, but we don't care").
        elle: &["internal"],
        lab: Some(&["G0", "internal"]),
    },
    Case {
        name: "unobserved write",
        txns: &[
            (0, "ok", "ax1ay1"),
            (1, "ok", "ax2ay2"),
            (2, "ok", "ax3ay3"),
            (3, "ok", "rx12"),
            (4, "ok", "ry2"),
        ],
        opts: NONE,
        elle: &["G-single-item", "G0"],
        lab: None,
    },
    Case {
        name: "repeatable read",
        txns: &[(0, "ok", "rxay1"), (1, "ok", "ryax1")],
        opts: NONE,
        elle: &["G2-item"],
        lab: None,
    },
    Case {
        name: "G-nonadjacent",
        txns: &[
            (0, "ok", "ax1"),
            (1, "ok", "rx1ry"),
            (2, "ok", "ay1"),
            (3, "ok", "ry1rx"),
        ],
        opts: NONE,
        elle: &["G-nonadjacent-item"],
        lab: None,
    },
    Case {
        name: "lost update",
        txns: &[(0, "ok", "ax0"), (1, "ok", "rx0ax1"), (2, "ok", "rx0ax2")],
        opts: NONE,
        elle: &["G2-item", "lost-update"],
        lab: None,
    },
    Case {
        name: "lost update: one transaction, two writes",
        txns: &[(0, "ok", "rxax1ax2"), (1, "ok", "rx12")],
        opts: NONE,
        elle: &[],
        lab: None,
    },
    Case {
        name: "wr-process (Elle issue 21)",
        txns: &[(1, "ok", "rx1ay1"), (2, "ok", "ry1"), (2, "ok", "ax1")],
        opts: SESSIONS,
        elle: &["G1c-process"],
        lab: None,
    },
    Case {
        name: "rr G-single-item",
        txns: &[(0, "ok", "ax1ay1"), (1, "ok", "rx1ry")],
        opts: NONE,
        elle: &["G-single-item"],
        lab: None,
    },
];

/// Elle's rw-register checker tests with its default options (no
/// sequential, linearizable or write-follows-read keys: those order
/// versions by process or real time, which lab does not yet), each
/// transaction on a process of its own.
const REGISTER_CASES: &[Case] = &[
    Case {
        name: "rw-register G1a",
        txns: &[(0, "fail", "wx1"), (1, "ok", "rx1")],
        opts: NONE,
        elle: &["G1a", "empty-transaction-graph"],
        lab: Some(&["G1a"]),
    },
    Case {
        name: "rw-register G1b",
        txns: &[(0, "ok", "wx1wx2"), (1, "ok", "rx1")],
        opts: NONE,
        elle: &["G1b", "empty-transaction-graph"],
        lab: Some(&["G1b"]),
    },
    Case {
        name: "rw-register G1c",
        txns: &[(0, "ok", "wx1ry1"), (1, "ok", "wy1rx1")],
        opts: NONE,
        elle: &["G1c"],
        lab: None,
    },
    Case {
        name: "rw-register initial state (nil before every value)",
        txns: &[(0, "ok", "rx_ry1"), (1, "ok", "wy1wx2")],
        opts: NONE,
        elle: &["G-single"],
        lab: Some(&["G-single-item"]),
    },
    Case {
        name: "rw-register G0 without an order of the writes",
        txns: &[(0, "ok", "wx1wy2"), (1, "ok", "wx2wy1")],
        opts: NONE,
        elle: &["empty-transaction-graph"],
        lab: Some(&[]),
    },
    Case {
        name: "rw-register G0 ordered by sequential keys (each process's later read)",
        txns: &[
            (0, "ok", "wx1wy2"),
            (1, "ok", "wx2wy1"),
            (0, "ok", "rx2"),
            (1, "ok", "ry2"),
        ],
        opts: SEQUENTIAL_KEYS,
        elle: &["G0"],
        lab: None,
    },
    Case {
        name: "rw-register cyclic version order (sequential keys)",
        txns: &[(0, "ok", "wx1"), (0, "ok", "wx2"), (0, "ok", "rx1")],
        opts: SEQUENTIAL_KEYS,
        elle: &["cyclic-versions"],
        lab: None,
    },
];

/// Elle's `cyclic-versions-bug-test`: a read of nil concurrent with the
/// write of 4, then a read of 4, with linearizable keys: no contradiction,
/// valid (Elle once found a cycle here).
#[test]
fn linearizable_keys_see_no_cycle_in_elle_s_cyclic_versions_bug_history() {
    let ops: &[(u64, &str, u64, &str)] = &[
        (1, "invoke", 0, "[]"),
        (2, "ok", 0, "[]"),
        (3, "invoke", 0, "[[:r 1 nil]]"),
        (4, "invoke", 1, "[[:w 1 4]]"),
        (5, "invoke", 2, "[]"),
        (320, "ok", 0, "[[:r 1 nil]]"),
        (322, "ok", 1, "[[:w 1 4]]"),
        (323, "ok", 2, "[]"),
        (324, "invoke", 0, "[]"),
        (325, "ok", 0, "[]"),
        (326, "invoke", 0, "[[:r 1 nil]]"),
        (327, "ok", 0, "[[:r 1 4]]"),
    ];
    let text: String = (ops.iter())
        .map(|(i, kind, p, v)| format!("{{:index {i}, :time {i}, :type :{kind}, :process {p}, :f :txn, :value {v}}}\n"))
        .collect();
    let h = History::parse(&text).unwrap();
    let opts = Options {
        linearizable_keys: true,
        realtime: true,
        sessions: true,
        ..NONE
    };
    let c = check(&h, opts).unwrap();
    assert!(c.anomalies.is_empty(), "{:?}", c.names());
    assert_eq!(c.registers.map(|s| (s.linearizable, s.cyclic)), Some((0, 0)));
}

#[test]
fn lab_names_what_elle_names() {
    let cases = CASES.iter().map(|c| (c, edn(c.txns)));
    let registers = REGISTER_CASES.iter().map(|c| (c, edn_of(c.txns, register_mops)));
    for (case, text) in cases.chain(registers) {
        let h = History::parse(&text).unwrap_or_else(|e| panic!("{}: {e:?}\n{text}", case.name));
        let c = check(&h, case.opts).unwrap();
        let mut got: Vec<String> = c.names().into_iter().map(elle_name).collect();
        got.sort();
        let mut want: Vec<&str> = case.lab.unwrap_or(case.elle).to_vec();
        want.sort();
        assert_eq!(got, want, "{}\n{text}", case.name);
    }
}

/// Elle's test that rw edges in a row make no G-nonadjacent (its comment
/// reads the edges as rw rw wr rw wr): snapshot isolation holds. Read
/// as the edges run (a reader to the writer it missed), they make no
/// cycle at all: lab finds nothing, at REPEATABLE READ or anywhere.
#[test]
fn adjacent_rw_edges_are_no_g_nonadjacent() {
    let txns: &[T] = &[
        (0, "ok", "rx5ay1"),
        (1, "ok", "ryaz2"),
        (2, "ok", "rzat3"),
        (3, "ok", "rt3au4"),
        (4, "ok", "ruax5"),
    ];
    let c = check(&History::parse(&edn(txns)).unwrap(), NONE).unwrap();
    assert!(c.anomalies.is_empty(), "{:?}", c.names());
    assert_eq!(c.committed, 5);
}

/// Elle's rw-register tests that read values no transaction wrote (an
/// initial state other than nil: lost-update's `rx0wx1`, internal's
/// `rx1rx2`, wfr's `ry1...`): Elle takes them as given, lab refuses the
/// history (exit 2), since lab's and Jepsen's rw-register workloads start
/// every key at nil and such a read is a value from nowhere.
#[test]
fn a_read_of_a_value_nobody_wrote_is_refused_where_elle_takes_it_as_given() {
    for txns in [
        &[(0, "ok", "rx0wx1"), (1, "ok", "rx0wx2")][..],
        &[(0, "ok", "rx1rx2")],
        &[(0, "ok", "ry1wx1wy2"), (1, "ok", "rx1ry1")],
        // Under :linearizable-keys? in Elle's tests: a read of what was
        // just written, G2-item, the scc-sort bug.
        &[(0, "ok", "wx1"), (0, "ok", "rx2"), (0, "ok", "rx1")],
        &[(0, "ok", "rx1ry1"), (1, "ok", "rx1wy2"), (2, "ok", "ry1wx2")],
        &[
            (0, "ok", "rx1"),
            (0, "ok", "rx_"),
            (0, "ok", "rx4wx3"),
            (0, "ok", "wx4"),
        ],
    ] {
        let h = History::parse(&edn_of(txns, register_mops)).unwrap();
        let e = check(&h, NONE).map(|_| ()).unwrap_err();
        assert!(e.what.contains("no transaction of the history wrote"), "{}", e.what);
    }
}

#[test]
fn the_little_language_reads_as_elle_writes_it() {
    assert_eq!(register_mops("wx1ry_", true), "[[:w :x 1] [:r :y nil]]");
    assert_eq!(register_mops("ry1", false), "[[:r :y nil]]");
    assert_eq!(mops("ax1ry12", true), "[[:append :x 1] [:r :y [1 2]]]");
    assert_eq!(mops("ax1ry12", false), "[[:append :x 1] [:r :y nil]]");
    assert_eq!(mops("rz", true), "[[:r :z nil]]");
}
