//! A list-append history: transactions of appends and reads, each with its
//! session, start and end, and whether it committed. Written and read as
//! lab's JSON lines; Jepsen's `history.edn` is read too.
//!
//! lab's JSON lines: a header, then one transaction per line:
//! ```text
//! {"lab":"hunt","level":"repeatable read","seed":1,"keys":4,"clients":4}
//! {"index":0,"session":1,"type":"ok","start":1200,"end":5300,"ops":[["append",3,7],["r",3,[1,7]]]}
//! {"index":1,"session":2,"type":"fail","sqlstate":"40001","start":1300,"end":6100,"ops":[["r",3,[1]],["append",3,8]]}
//! ```
//! `type` is ok (committed), fail (did not commit: rolled back, aborted) or
//! info (unknown: the connection went during COMMIT); times are nanoseconds
//! on the run's monotonic clock; a read of a missing row is `[]`, an
//! operation that never ran `null`. A run with a nemesis (`--nemesis`)
//! names its faults in the header and records each one it injected as a
//! line of its own, between the transactions, as Jepsen's history does:
//! ```text
//! {"nemesis":"kill","target":"session 2 (backend 4711)","start":9000,"end":41000}
//! ```
//! A transaction that ran on a standby (`--replica`) says so, with the
//! standby's replay position when it read: `"node":"standby","lsn":"0/3000148"`.
//!
//! A predicate read (`--workload predicate`: `SELECT k, v FROM append WHERE
//! k BETWEEN 5 AND 8`) is written as what it showed of each key of its
//! range, one read per key in key order (a key it did not return read as
//! `[]`: the table's keys are a closed set, so absence is seen), and the
//! transaction's `scans` say which reads were one predicate read:
//! `"scans":[{"lo":5,"hi":8,"op":1}]` (ops 1 to 4 are its reads of 5 to 8).
use std::fmt;

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::ser::{SerializeSeq, Serializer};
use serde::{Deserialize, Serialize};

pub type Key = i64;
pub type Elem = i64;

/// One operation of a transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    Append(Key, Elem),
    /// What the read returned (`None`: it never ran, or the history does not say).
    Read(Key, Option<Vec<Elem>>),
    /// An rw-register's write of a value (`--workload rw-register`).
    Write(Key, Elem),
    /// An rw-register's read: the value (`None`: the key had none, or, in a
    /// transaction that did not commit, the history does not say).
    Get(Key, Option<Elem>),
}

impl Op {
    pub fn key(&self) -> Key {
        match self {
            Op::Append(k, _) | Op::Read(k, _) | Op::Write(k, _) | Op::Get(k, _) => *k,
        }
    }

    /// An rw-register's operation.
    pub fn register(&self) -> bool {
        matches!(self, Op::Write(..) | Op::Get(..))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Committed.
    Ok,
    /// Did not commit.
    Fail,
    /// Unknown: it may have committed.
    Info,
}

/// One transaction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Txn {
    pub index: u64,
    pub session: u64,
    #[serde(rename = "type")]
    pub status: Status,
    /// The SQLSTATE it failed with (40001, 40P01: an abort the level allows).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sqlstate: Option<Box<str>>,
    /// Nanoseconds on the run's monotonic clock.
    pub start: u64,
    /// None: it never ended (an info op in Jepsen's history).
    #[serde(default)]
    pub end: Option<u64>,
    pub ops: Vec<Op>,
    /// When the server answered each operation, nanoseconds on the same
    /// clock (lab's own histories; a reproducer orders its steps by them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub at: Vec<u64>,
    /// The server's transaction id (txid_current_if_assigned() read in
    /// the COMMIT's message; lab's histories, transactions that wrote).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub xid: Option<u64>,
    /// The backend that ran it (pg_backend_pid() of its session).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend: Option<i32>,
    /// When the server says it committed (pg_xact_commit_timestamp, where
    /// the server has track_commit_timestamp on), for the transactions of
    /// an anomaly found: the server's commit order, beside the order its
    /// answers came in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub committed_at: Option<Box<str>>,
    /// Where its commit record is in the primary's WAL (pg_walinspect, on
    /// lab's own server with `--replica`), for the transactions of an
    /// anomaly found with a read on the standby: the order a standby
    /// applies them in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit_lsn: Option<Box<str>>,
    /// The server it ran on, when not the primary ("standby").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<Box<str>>,
    /// On a standby: how far it had replayed the primary's WAL when the
    /// transaction took its snapshot (pg_last_wal_replay_lsn()).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lsn: Option<Box<str>>,
    /// The predicate reads among its reads (`--workload predicate`).
    #[serde(default, skip_serializing_if = "<[Scan]>::is_empty")]
    pub scans: Box<[Scan]>,
    /// The line of the file it came from (0: recorded here).
    #[serde(skip)]
    pub line: usize,
}

/// A predicate read over the keys `lo..=hi`: the transaction's ops from
/// `op` on, one read per key of the range in key order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Scan {
    pub lo: Key,
    pub hi: Key,
    pub op: u32,
}

impl Scan {
    /// The predicate read among `scans` that op `i` is part of, if any.
    pub fn at(scans: &[Scan], i: usize) -> Option<&Scan> {
        scans.iter().find(|s| s.ops().contains(&i))
    }

    /// Its reads' positions among the transaction's ops.
    pub fn ops(&self) -> std::ops::Range<usize> {
        self.op as usize..self.op as usize + (self.hi - self.lo + 1) as usize
    }

    /// What is wrong with it as a predicate read of `ops` (none: it is one).
    pub fn damage(&self, ops: &[Op]) -> Option<String> {
        if self.hi.checked_sub(self.lo).is_none_or(|d| !(0..MAX_SCAN).contains(&d)) {
            return Some(format!(
                "a predicate read of keys {} to {}: not a range lab reads",
                self.lo, self.hi
            ));
        }
        let of_each = ops.get(self.ops()).is_some_and(|reads| {
            reads
                .iter()
                .zip(self.lo..)
                .all(|(o, k)| matches!(o, Op::Read(r, _) if *r == k))
        });
        (!of_each).then(|| {
            format!(
                "the predicate read of keys {} to {} (from operation {}) is not a read of each of its keys in order",
                self.lo, self.hi, self.op
            )
        })
    }
}

/// The widest predicate read a history may hold (keys in its range), and
/// so the most `--keys` of the predicate workload.
pub const MAX_SCAN: Key = 1024;

impl Txn {
    /// A transaction and what it did, nothing more known yet: not ended,
    /// no SQLSTATE, times, ids or line.
    pub fn new(index: u64, session: u64, status: Status, start: u64, ops: Vec<Op>) -> Txn {
        Txn {
            index,
            session,
            status,
            sqlstate: None,
            start,
            end: None,
            ops,
            at: Vec::new(),
            xid: None,
            backend: None,
            committed_at: None,
            commit_lsn: None,
            node: None,
            lsn: None,
            scans: Box::default(),
            line: 0,
        }
    }

    /// The same transaction with other operations (its own not copied).
    pub fn with_ops(&self, ops: Vec<Op>) -> Txn {
        Txn {
            index: self.index,
            session: self.session,
            status: self.status,
            sqlstate: self.sqlstate.clone(),
            start: self.start,
            end: self.end,
            ops,
            at: self.at.clone(),
            xid: self.xid,
            backend: self.backend,
            committed_at: self.committed_at.clone(),
            commit_lsn: self.commit_lsn.clone(),
            node: self.node.clone(),
            lsn: self.lsn.clone(),
            scans: self.scans.clone(),
            line: self.line,
        }
    }

    /// The predicate read op `i` is part of, if any.
    pub fn scan_of(&self, i: usize) -> Option<&Scan> {
        Scan::at(&self.scans, i)
    }

    /// It ran on a standby.
    pub fn on_standby(&self) -> bool {
        self.node.as_deref() == Some(STANDBY)
    }
}

/// A transaction's `node` when it ran on the standby.
pub const STANDBY: &str = "standby";

/// The first line of lab's JSON lines.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Header {
    pub lab: String,
    /// The level the sessions read back from the server.
    #[serde(default)]
    pub level: Option<String>,
    #[serde(default)]
    pub seed: Option<u64>,
    #[serde(default)]
    pub keys: Option<usize>,
    #[serde(default)]
    pub clients: Option<usize>,
    #[serde(default)]
    pub server: Option<String>,
    /// The faults the run injected (`--nemesis`): its reads are checked
    /// for lost writes too.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nemesis: Vec<String>,
    /// The workload, when not list-append ("predicate", "rw-register").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload: Option<String>,
    /// Read-only transactions went to a standby too (`--replica`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub replica: bool,
    /// The standby was synchronous and commits waited as this value of
    /// synchronous_commit says (`--sync-replica`), read back from the server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub synchronous_commit: Option<String>,
}

/// One fault a nemesis injected, and when (the transactions' clock): from
/// the moment lab did it to the moment it was undone (the backend
/// continued, the server accepting connections again, the partition healed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NemesisEvent {
    /// pause, kill, restart, partition.
    pub nemesis: String,
    /// What it was done to ("session 2 (backend 4711)", "the server").
    pub target: String,
    pub start: u64,
    #[serde(default)]
    pub end: Option<u64>,
    /// How (a partition's black hole or reset; where a pause met its backend).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub how: Option<String>,
}

/// A whole history.
#[derive(Debug, Clone, Default)]
pub struct History {
    pub header: Option<Header>,
    pub txns: Vec<Txn>,
    /// The faults injected while it was recorded, in order.
    pub nemesis: Vec<NemesisEvent>,
    /// A Jepsen history without :time: its transactions' times are their
    /// places in the file, which order them but measure no time.
    pub untimed: bool,
}

impl History {
    /// A history recorded under faults that end connections or lose
    /// nothing it could read back: its reads are checked for lost writes.
    pub fn under_nemesis(&self) -> bool {
        self.header.as_ref().is_some_and(|h| !h.nemesis.is_empty())
    }

    /// An rw-register history (`--workload rw-register`, Jepsen's
    /// rw-register): said by its header, or by a write or a read of a value.
    pub fn register(&self) -> bool {
        self.header.as_ref().and_then(|h| h.workload.as_deref()) == Some(RW_REGISTER)
            || self.txns.iter().any(|t| t.ops.iter().any(Op::register))
    }

    /// A history with predicate reads (`--workload predicate`): its
    /// phantoms are seen.
    pub fn predicate(&self) -> bool {
        self.header.as_ref().and_then(|h| h.workload.as_deref()) == Some(PREDICATE)
            || self.txns.iter().any(|t| !t.scans.is_empty())
    }
}

/// The header's names of the workloads besides list-append.
pub const PREDICATE: &str = "predicate";
pub const RW_REGISTER: &str = "rw-register";

/// A damaged history: where, and what was wrong.
#[derive(Debug, Clone, PartialEq)]
pub struct Damage {
    pub line: usize,
    pub what: String,
}

impl Serialize for Op {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(3))?;
        match self {
            Op::Append(k, v) => {
                seq.serialize_element("append")?;
                seq.serialize_element(k)?;
                seq.serialize_element(v)?;
            }
            Op::Read(k, v) => {
                seq.serialize_element("r")?;
                seq.serialize_element(k)?;
                seq.serialize_element(v)?;
            }
            Op::Write(k, v) => {
                seq.serialize_element("w")?;
                seq.serialize_element(k)?;
                seq.serialize_element(v)?;
            }
            Op::Get(k, v) => {
                seq.serialize_element("r")?;
                seq.serialize_element(k)?;
                seq.serialize_element(v)?;
            }
        }
        seq.end()
    }
}

impl<'de> Deserialize<'de> for Op {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Op, D::Error> {
        struct OpVisitor;
        impl<'de> Visitor<'de> for OpVisitor {
            type Value = Op;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(
                    r#"an operation ["append", KEY, VALUE], ["w", KEY, VALUE] or ["r", KEY, [VALUES] | VALUE | null]"#,
                )
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Op, A::Error> {
                let f: OpName = seq.next_element()?.ok_or_else(|| de::Error::invalid_length(0, &self))?;
                let k: Key = seq.next_element()?.ok_or_else(|| de::Error::invalid_length(1, &self))?;
                let op = match f {
                    OpName::Append => Op::Append(
                        k,
                        seq.next_element()?.ok_or_else(|| de::Error::invalid_length(2, &self))?,
                    ),
                    OpName::Write => Op::Write(
                        k,
                        seq.next_element()?.ok_or_else(|| de::Error::invalid_length(2, &self))?,
                    ),
                    OpName::Read => match seq
                        .next_element::<Seen>()?
                        .ok_or_else(|| de::Error::invalid_length(2, &self))?
                    {
                        Seen::List(l) => Op::Read(k, Some(l)),
                        // An rw-register's read; null is settled by the history's workload.
                        Seen::Value(v) => Op::Get(k, Some(v)),
                        Seen::Null => Op::Read(k, None),
                    },
                };
                if seq.next_element::<de::IgnoredAny>()?.is_some() {
                    return Err(de::Error::invalid_length(4, &self));
                }
                Ok(op)
            }
        }
        d.deserialize_seq(OpVisitor)
    }
}

/// An operation's name, read without allocating (a million transactions
/// have millions of them).
enum OpName {
    Append,
    Write,
    Read,
}

impl<'de> Deserialize<'de> for OpName {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<OpName, D::Error> {
        struct NameVisitor;
        impl<'de> Visitor<'de> for NameVisitor {
            type Value = OpName;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(r#""append", "w" or "r""#)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<OpName, E> {
                match v {
                    "append" => Ok(OpName::Append),
                    "w" => Ok(OpName::Write),
                    "r" => Ok(OpName::Read),
                    other => Err(E::custom(unknown_op(other))),
                }
            }
        }
        d.deserialize_str(NameVisitor)
    }
}

/// What a read returned: a list (list-append), a value (an rw-register),
/// or null. A list's allocation is the size of the list (serde's own grows
/// by doubling and keeps the slack: a quarter of a history's memory).
enum Seen {
    List(Vec<Elem>),
    Value(Elem),
    Null,
}

impl<'de> Deserialize<'de> for Seen {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Seen, D::Error> {
        struct SeenVisitor;
        impl<'de> Visitor<'de> for SeenVisitor {
            type Value = Seen;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a list of integers, an integer or null")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Seen, A::Error> {
                let mut l = Vec::with_capacity(seq.size_hint().unwrap_or(32).min(4096));
                while let Some(e) = seq.next_element()? {
                    l.push(e);
                }
                l.shrink_to_fit();
                Ok(Seen::List(l))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Seen, E> {
                Ok(Seen::Value(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Seen, E> {
                Elem::try_from(v)
                    .map(Seen::Value)
                    .map_err(|_| E::custom(format!("{v} is out of range for a value")))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Seen, E> {
                Ok(Seen::Null)
            }
            fn visit_none<E: de::Error>(self) -> Result<Seen, E> {
                Ok(Seen::Null)
            }
        }
        d.deserialize_any(SeenVisitor)
    }
}

pub(super) fn unknown_op(f: &str) -> String {
    format!("the operation {f:?} is not one the checker knows (list-append has append and r, rw-register w and r)")
}

impl History {
    /// lab's JSON lines.
    pub fn to_json_lines(&self) -> String {
        let mut out = String::new();
        if let Some(h) = &self.header {
            out.push_str(&serde_json::to_string(h).expect("a header serializes"));
            out.push('\n');
        }
        // Each fault before the first transaction that started after it.
        let mut events = self.nemesis.iter().peekable();
        for t in &self.txns {
            while let Some(e) = events.next_if(|e| e.start <= t.start) {
                out.push_str(&serde_json::to_string(e).expect("an event serializes"));
                out.push('\n');
            }
            out.push_str(&serde_json::to_string(t).expect("a transaction serializes"));
            out.push('\n');
        }
        for e in events {
            out.push_str(&serde_json::to_string(e).expect("an event serializes"));
            out.push('\n');
        }
        out
    }

    pub fn from_json_lines(text: &str) -> Result<History, Damage> {
        Self::read_json_lines(std::io::Cursor::new(text.as_bytes()))
    }

    /// lab's JSON lines from `input`, a block at a time, each block's lines
    /// parsed on every core (a history of a million transactions is
    /// hundreds of megabytes: it is never held whole).
    pub fn read_json_lines(mut input: impl std::io::Read + Send) -> Result<History, Damage> {
        let mut h = History::default();
        super::blocks::read(
            &mut input,
            true,
            |line, what| Damage { line, what },
            parse_json_lines,
            |part| {
                let part = part?;
                if let Some((line, header)) = part.header {
                    if h.header.is_some() || !h.txns.is_empty() {
                        return Err(Damage {
                            line,
                            what: "a header ({\"lab\": ...}) after the first line".into(),
                        });
                    }
                    h.header = Some(header);
                }
                h.txns.extend(part.txns);
                h.nemesis.extend(part.events);
                Ok(true)
            },
        )?;
        Ok(h)
    }
}

/// What a run of lines held.
#[derive(Default)]
struct JsonLines {
    header: Option<(usize, Header)>,
    txns: Vec<Txn>,
    events: Vec<NemesisEvent>,
}

/// Lines of lab's JSON lines, the first numbered `first`: a header, the
/// nemesis's events, transactions.
fn parse_json_lines(lines: &[&[u8]], first: usize) -> Result<JsonLines, Damage> {
    let mut out = JsonLines {
        txns: Vec::with_capacity(lines.len()),
        ..JsonLines::default()
    };
    for (i, line) in lines.iter().enumerate() {
        // The block was checked to be UTF-8 as a whole; so is each line.
        let line = std::str::from_utf8(line).unwrap_or_default().trim();
        if line.is_empty() {
            continue;
        }
        let n = first + i;
        let damage = |e: serde_json::Error| Damage {
            line: n,
            what: json_what(&e),
        };
        if line.starts_with("{\"nemesis\"") {
            out.events.push(serde_json::from_str(line).map_err(damage)?);
        } else if out.header.is_none() && out.txns.is_empty() && line.contains("\"lab\"") && !line.contains("\"ops\"") {
            out.header = Some((n, serde_json::from_str(line).map_err(damage)?));
        } else {
            let mut t: Txn = serde_json::from_str(line).map_err(damage)?;
            t.line = n;
            if let Some(what) = t.scans.iter().find_map(|s| s.damage(&t.ops)) {
                return Err(Damage { line: n, what });
            }
            t.ops.shrink_to_fit();
            out.txns.push(t);
        }
    }
    Ok(out)
}

pub(super) fn cut(s: &str) -> String {
    if s.chars().count() > 60 {
        format!("{}…", s.chars().take(60).collect::<String>())
    } else {
        s.to_string()
    }
}

/// serde_json's error without its " at line 1 column N" (the line is the file's).
fn json_what(e: &serde_json::Error) -> String {
    let s = e.to_string();
    let s = match s.rfind(" at line ") {
        Some(i) => format!("{} (column {})", &s[..i], e.column()),
        None => s,
    };
    // serde's own words; a line that is not JSON on its own (not JSON at
    // all, or a report pretty-printed over many lines) is said to be so first.
    if e.is_syntax() || e.is_eof() {
        format!("not one JSON value per line: {s}")
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_lines_round_trip() {
        let h = History {
            header: Some(Header {
                lab: "hunt".into(),
                level: Some("repeatable read".into()),
                seed: Some(7),
                ..Header::default()
            }),
            txns: vec![Txn {
                index: 0,
                session: 1,
                status: Status::Fail,
                sqlstate: Some("40001".into()),
                start: 10,
                end: Some(20),
                ops: vec![Op::Append(3, 7), Op::Read(3, Some(vec![1, 7])), Op::Read(4, None)],
                at: vec![12, 14],
                xid: None,
                backend: None,
                committed_at: None,
                line: 0,
                ..Txn::new(0, 0, Status::Ok, 0, Vec::new())
            }],
            ..History::default()
        };
        let text = h.to_json_lines();
        assert!(
            text.contains(r#""ops":[["append",3,7],["r",3,[1,7]],["r",4,null]]"#),
            "{text}"
        );
        let back = History::parse(&text).unwrap();
        assert_eq!(back.header, h.header);
        assert_eq!(back.txns[0].ops, h.txns[0].ops);
        assert_eq!(back.txns[0].line, 2);
    }

    #[test]
    fn nemesis_events_go_between_the_transactions_and_come_back() {
        let txn = |i: u64, start| Txn {
            end: Some(start + 5),
            ..Txn::new(i, 1, Status::Ok, start, vec![Op::Append(1, i as i64)])
        };
        let h = History {
            header: Some(Header {
                lab: "hunt".into(),
                nemesis: vec!["kill".into()],
                ..Header::default()
            }),
            txns: vec![txn(0, 10), txn(1, 30)],
            nemesis: vec![NemesisEvent {
                nemesis: "kill".into(),
                target: "session 1 (backend 42)".into(),
                start: 20,
                end: Some(25),
                how: None,
            }],
            untimed: false,
        };
        let text = h.to_json_lines();
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].contains(r#""nemesis":["kill"]"#), "{text}");
        assert!(lines[2].starts_with(r#"{"nemesis":"kill""#), "{text}");
        let back = History::parse(&text).unwrap();
        assert!(back.under_nemesis());
        assert_eq!(back.nemesis, h.nemesis);
        assert_eq!(back.txns.len(), 2);
        assert_eq!(back.txns[1].line, 4);
    }

    #[test]
    fn a_predicate_read_is_a_read_of_each_key_of_a_range_lab_reads() {
        let reads = |lo: Key, n: Key| (lo..lo + n).map(|k| Op::Read(k, Some(vec![]))).collect::<Vec<_>>();
        let scan = |lo, hi| Scan { lo, hi, op: 0 };
        assert_eq!(scan(1, 3).damage(&reads(1, 3)), None);
        assert!(scan(1, 3).damage(&reads(1, 2)).is_some(), "a key short");
        assert!(scan(1, 3).damage(&reads(2, 3)).is_some(), "other keys");
        assert!(scan(3, 1).damage(&[]).is_some());
        assert!(scan(Key::MIN, Key::MAX).damage(&[]).is_some(), "no overflow");
        assert_eq!(scan(1, MAX_SCAN).damage(&reads(1, MAX_SCAN)), None);
        assert!(scan(1, MAX_SCAN + 1).damage(&reads(1, MAX_SCAN + 1)).is_some());
    }

    #[test]
    fn damaged_json_names_the_line_and_the_operation() {
        let e = History::parse("{\"lab\":\"hunt\"}\n{\"index\":0,\"session\":1,\"type\":\"ok\",\"start\":0,\"end\":1,\"ops\":[[\"cas\",1,2]]}\n")
            .unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.what.contains("\"cas\""), "{}", e.what);
        let e = History::parse("{\"index\":0,\"session\":1,\"type\":\"ok\",\"start\":0,\"ops\":[]}\n{\"index\":1,")
            .unwrap_err();
        assert_eq!(e.line, 2);
    }

    #[test]
    fn jepsen_edn_pairs_invocations_with_completions() {
        let text = "\
{:type :invoke, :f :txn, :value [[:append 1 2] [:r 1 nil]], :process 0, :time 10, :index 0}
{:type :invoke, :f :txn, :value [[:r 1 nil]], :process 1, :time 11, :index 1}
{:type :info, :f :start-partition, :value nil, :process :nemesis, :time 12}
{:type :ok, :f :txn, :value [[:append 1 2] [:r 1 [2]]], :process 0, :time 20, :index 2}
{:type :fail, :f :txn, :value [[:r 1 nil]], :process 1, :time 21, :index 3}
{:type :invoke, :f :txn, :value [[:append 2 5]], :process 0, :time 30, :index 4}
";
        let h = History::parse(text).unwrap();
        assert_eq!(h.txns.len(), 3);
        assert_eq!(h.txns[0].status, Status::Ok);
        assert_eq!(h.txns[0].ops, vec![Op::Append(1, 2), Op::Read(1, Some(vec![2]))]);
        assert_eq!((h.txns[0].start, h.txns[0].end), (10, Some(20)));
        assert_eq!(h.txns[1].status, Status::Fail);
        assert_eq!(h.txns[1].ops, vec![Op::Read(1, None)], "a failure's reads say nothing");
        assert_eq!(h.txns[2].status, Status::Info);
        assert_eq!(h.txns[2].end, None);
        assert_eq!(h.txns[2].line, 6);
    }

    #[test]
    fn a_committed_nil_read_is_the_empty_list_and_info_ends_nothing() {
        let text = "\
{:type :invoke, :f :txn, :value [[:r 1 nil]], :process 0, :time 10}
{:type :ok, :f :txn, :value [[:r 1 nil]], :process 0, :time 20}
{:type :invoke, :f :txn, :value [[:append 1 1] [:r 1 nil]], :process 1, :time 30}
{:type :info, :f :txn, :value [[:append 1 1] [:r 1 nil]], :process 1, :time 40}
";
        let h = History::parse(text).unwrap();
        assert_eq!(h.txns[0].ops, vec![Op::Read(1, Some(Vec::new()))]);
        assert_eq!(h.txns[1].ops, vec![Op::Append(1, 1), Op::Read(1, None)]);
        assert_eq!((h.txns[1].start, h.txns[1].end), (30, None));
    }

    #[test]
    fn edn_errors_name_what_the_checker_does_not_know() {
        let e = History::parse("{:type :invoke, :f :read, :value nil, :process 0}\n").unwrap_err();
        assert!(e.what.contains(":read"), "{}", e.what);
        let e = History::parse(
            "{:type :invoke, :f :txn, :value [[:cas 1 2]], :process 0}\n{:type :ok, :f :txn, :value [[:cas 1 2]], :process 0}\n",
        )
        .unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.what.contains(":cas"), "{}", e.what);
        let e = History::parse("{:type :ok, :f :txn, :value [], :process 3}\n").unwrap_err();
        assert!(e.what.contains("never invoked"), "{}", e.what);
    }
}
