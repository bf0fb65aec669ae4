//! Jepsen's `history.edn` read as a list-append history, at the speed of
//! lab's own JSON lines: never a tree of the whole file, and on every core.
//!
//! Jepsen writes one operation per line. The file is read a block at a
//! time; each block's lines are parsed on every core, by a scanner made
//! for an operation map of integer keys and elements (no EDN value built),
//! and a line it does not know (a tag, a keyword key, a string...) by the
//! EDN reader. Invocations are then paired with their completions in the
//! file's order. A history that is not one operation per line (a form
//! across lines, the whole history in one vector) is read again from the
//! start by the EDN reader alone, a form at a time.
use std::collections::HashMap;
use std::io::{Read, Seek};

use super::edn::{self, Value};
use super::history::{Damage, Elem, History, Key, Op, Status, Txn, cut, unknown_op};

/// What one line said, as the pairing needs it.
enum Event {
    /// Not a client's operation (the nemesis's, say).
    Skip,
    Bad(Damage),
    Op {
        line: usize,
        process: i64,
        /// None: an invocation.
        status: Option<Status>,
        /// None: the operation has no :time.
        time: Option<u64>,
        value: Mops,
    },
}

/// An operation's :value.
enum Mops {
    /// Read by the scanner: integer keys and elements; a read of nil is `Read(k, None)`.
    Raw(Vec<Op>),
    /// Anything else, as EDN.
    Value(Value),
}

/// Reads `input`: a block at a time on every core, or (a history not one
/// operation per line) a form at a time.
pub fn read(mut input: impl Read + Seek + Send) -> Result<History, Damage> {
    let io = |e: std::io::Error| Damage {
        line: 1,
        what: e.to_string(),
    };
    // The whole history in one vector: read by forms.
    let one_vector = first_byte(&mut input).map_err(io)? == Some(b'[');
    input.rewind().map_err(io)?;
    if !one_vector && let Some(h) = by_lines(&mut input)? {
        return Ok(h);
    }
    input.rewind().map_err(io)?;
    by_forms(input)
}

/// The input's first byte that is not white space.
fn first_byte(input: &mut impl Read) -> std::io::Result<Option<u8>> {
    let mut buf = [0u8; 4096];
    loop {
        let n = input.read(&mut buf)?;
        if n == 0 {
            return Ok(None);
        }
        if let Some(b) = buf[..n].iter().find(|b| !b.is_ascii_whitespace()) {
            return Ok(Some(*b));
        }
    }
}

/// The whole input one form at a time (any layout EDN allows).
fn by_forms(input: impl Read) -> Result<History, Damage> {
    let mut reader = edn::Reader::from_read(input);
    let mut pairing = Pairing::default();
    while let Some((line, op)) = reader.next_item().map_err(|e| Damage {
        line: e.line,
        what: e.what,
    })? {
        pairing.add(event(line, op))?;
    }
    pairing.finish()
}

/// The input a block of lines at a time, each line an operation, paired
/// while the next block is parsed; None if a line is not a whole form
/// (then the input is read by forms).
fn by_lines(input: &mut (impl Read + Send)) -> Result<Option<History>, Damage> {
    let mut pairing = Pairing::default();
    let mut whole = true;
    super::blocks::read(
        input,
        false,
        |line, what| Damage { line, what },
        parse_lines,
        |events| {
            let Some(events) = events else {
                whole = false;
                return Ok(false);
            };
            for e in events {
                pairing.add(e)?;
            }
            Ok(true)
        },
    )?;
    if !whole {
        return Ok(None);
    }
    pairing.finish().map(Some)
}

/// Each line's operations (a line may hold none, or more than one form);
/// None if one is not a whole form.
fn parse_lines(lines: &[&[u8]], first: usize) -> Option<Vec<Event>> {
    let mut out = Vec::with_capacity(lines.len());
    for (i, l) in lines.iter().enumerate() {
        let line = first + i;
        if let Some(e) = scan(l, line) {
            out.push(e);
            continue;
        }
        if l.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let mut reader = edn::Reader::from_read(*l);
        loop {
            match reader.next_item() {
                Ok(Some((_, v))) => out.push(event(line, v)),
                Ok(None) => break,
                // A form this line does not close (or a vector it opens): not one per line.
                Err(e) if e.what.contains("never closed") || e.what.contains("ends inside") => return None,
                Err(e) => {
                    out.push(Event::Bad(Damage { line, what: e.what }));
                    break;
                }
            }
        }
    }
    Some(out)
}

/// An operation map as EDN, for the pairing.
fn event(line: usize, op: Value) -> Event {
    if !matches!(op, Value::Map(_)) {
        return Event::Bad(Damage {
            line,
            what: format!("expected an operation map, found {}", cut(&op.show())),
        });
    }
    let bad = |what: String| Event::Bad(Damage { line, what });
    let Some(&Value::Int(process)) = op.get("process") else {
        return Event::Skip; // :nemesis and the like
    };
    let f = op.get("f").and_then(Value::keyword).unwrap_or("");
    if f != "txn" {
        return bad(format!(
            "the operation :f :{f} is not one the checker knows (list-append histories have :f :txn)"
        ));
    }
    let Some(kind) = op.get("type").and_then(Value::keyword) else {
        return bad("an operation without :type".into());
    };
    let time = match op.get("time") {
        Some(&Value::Int(t)) if t >= 0 => Some(t as u64),
        None => None,
        Some(v) => return bad(format!(":time is {}, not a count of nanoseconds", v.show())),
    };
    let status = match kind {
        "invoke" => None,
        "ok" => Some(Status::Ok),
        "fail" => Some(Status::Fail),
        "info" => Some(Status::Info),
        k => return bad(format!(":type :{k} is not invoke, ok, fail or info")),
    };
    let value = op.get("value").cloned().unwrap_or(Value::Nil);
    Event::Op {
        line,
        process,
        status,
        time,
        value: Mops::Value(value),
    }
}

/// Invocations paired with their completions by process, in the file's order.
#[derive(Default)]
struct Pairing {
    pending: HashMap<i64, (usize, u64, Mops)>,
    h: History,
    keys: Keys,
    /// Whether the operations carry :time (the first one says), and how
    /// many there were: without :time, an operation's place in the file is
    /// its time, as the history's order is Elle's real-time order.
    timed: Option<bool>,
    ops: u64,
}

impl Pairing {
    fn add(&mut self, e: Event) -> Result<(), Damage> {
        let (line, process, status, time, value) = match e {
            Event::Skip => return Ok(()),
            Event::Bad(d) => return Err(d),
            Event::Op {
                line,
                process,
                status,
                time,
                value,
            } => (line, process, status, time, value),
        };
        let bad = |what: String| Damage { line, what };
        self.ops += 1;
        if *self.timed.get_or_insert(time.is_some()) != time.is_some() {
            return Err(bad(
                "an operation with :time among operations without (or the other way round): the history's order is not one clock".into(),
            ));
        }
        let time = time.unwrap_or(self.ops);
        let Some(status) = status else {
            if self.pending.insert(process, (line, time, value)).is_some() {
                return Err(bad(format!(
                    "process {process} invokes again before its last invocation completed"
                )));
            }
            return Ok(());
        };
        let Some((_, start, invoked)) = self.pending.remove(&process) else {
            return Err(bad(format!(
                "process {process} completes an operation it never invoked"
            )));
        };
        // A completion carries the reads' values; a failure or an unknown outcome may not.
        let mops = match value {
            Mops::Raw(_) | Mops::Value(Value::Seq(_)) => value,
            _ => invoked,
        };
        let mut ops = micro_ops(mops, status, &mut self.keys).map_err(bad)?;
        ops.shrink_to_fit();
        self.h.txns.push(Txn {
            // An unknown outcome may have taken effect at any time after
            // its invocation: its :info time ends nothing (no realtime
            // edge leaves it).
            end: (status != Status::Info).then_some(time),
            line,
            ..Txn::new(self.h.txns.len() as u64, process as u64, status, start, ops)
        });
        Ok(())
    }

    /// Invocations that never completed: unknown outcomes.
    fn finish(mut self) -> Result<History, Damage> {
        let mut left: Vec<_> = self.pending.into_iter().collect();
        left.sort_by_key(|(_, (line, _, _))| *line);
        for (process, (line, start, invoked)) in left {
            let ops = micro_ops(invoked, Status::Info, &mut self.keys).map_err(|what| Damage { line, what })?;
            let n = self.h.txns.len() as u64;
            self.h.txns.push(Txn {
                line,
                ..Txn::new(n, process as u64, Status::Info, start, ops)
            });
        }
        self.h.untimed = self.timed == Some(false);
        Ok(self.h)
    }
}

/// A history's keys: integers as they are; keywords and strings (Elle's
/// `:x`) numbered 1, 2, 3... in the order they first come. One history
/// uses one kind (Elle asks the same).
#[derive(Default)]
struct Keys {
    named: HashMap<String, Key>,
    /// The kind the first key was: integer or name.
    ints: Option<bool>,
}

impl Keys {
    fn key(&mut self, v: &Value) -> Result<Key, String> {
        let (int, key) = match v {
            Value::Int(i) => (true, *i),
            Value::Keyword(k) => (false, self.number(k)),
            Value::Str(s) => (false, self.number(s)),
            other => {
                return Err(format!(
                    "the key {} is not an integer, keyword or string",
                    cut(&other.show())
                ));
            }
        };
        self.kind(int, v)?;
        Ok(key)
    }

    fn kind(&mut self, int: bool, v: &Value) -> Result<(), String> {
        if *self.ints.get_or_insert(int) != int {
            return Err(format!(
                "the key {} mixes integer keys with named ones in one history",
                cut(&v.show())
            ));
        }
        Ok(())
    }

    fn number(&mut self, name: &str) -> Key {
        let next = self.named.len() as Key + 1;
        *self.named.entry(name.to_string()).or_insert(next)
    }
}

/// `[[:append 1 2] [:r 1 [1 2]]]` as operations (an unknown outcome's reads say nothing).
fn micro_ops(value: Mops, status: Status, keys: &mut Keys) -> Result<Vec<Op>, String> {
    let read = |k: Key, v: Option<Vec<Elem>>| match (v, status) {
        // A committed read of nil is the key's initial state, no row yet
        // (Jepsen's SQL clients say so): Elle reads it as the empty list.
        // A failure's reads say nothing.
        (_, Status::Info) | (None, Status::Fail) => Op::Read(k, None),
        (None, _) => Op::Read(k, Some(Vec::new())),
        (Some(l), _) => Op::Read(k, Some(l)),
    };
    let value = match value {
        Mops::Raw(mut mops) => {
            if let Some(k) = mops.first().map(Op::key) {
                keys.kind(true, &Value::Int(k))?;
            }
            // In place: the scanner's operations are already the history's.
            for m in mops.iter_mut() {
                match m {
                    Op::Read(k, v) => *m = read(*k, v.take()),
                    Op::Get(_, v) if status != Status::Ok => *v = None,
                    _ => {}
                }
            }
            return Ok(mops);
        }
        Mops::Value(v) => v,
    };
    let Value::Seq(mops) = value else {
        return Err(format!(
            "the transaction's :value is {}, not a vector of operations",
            cut(&value.show())
        ));
    };
    let int = |v: &Value, what: &str| match v {
        Value::Int(i) => Ok(*i),
        other => Err(format!("{what} {} is not an integer", cut(&other.show()))),
    };
    mops.iter()
        .map(|m| {
            let Value::Seq(parts) = m else {
                return Err(format!("the operation {} is not a vector", cut(&m.show())));
            };
            let [f, k, v] = parts.as_slice() else {
                return Err(format!("the operation {} does not have three parts", cut(&m.show())));
            };
            let k = keys.key(k)?;
            match f.keyword() {
                Some("append") => Ok(Op::Append(k, int(v, "the appended value")?)),
                // An rw-register's (Jepsen's rw-register workload).
                Some("w") => Ok(Op::Write(k, int(v, "the written value")?)),
                Some("r") => match v {
                    Value::Nil => Ok(read(k, None)),
                    Value::Int(i) if status == Status::Ok => Ok(Op::Get(k, Some(*i))),
                    Value::Int(_) => Ok(Op::Get(k, None)),
                    Value::Seq(items) => Ok(read(
                        k,
                        Some(
                            items
                                .iter()
                                .map(|i| int(i, "the read element"))
                                .collect::<Result<_, _>>()?,
                        ),
                    )),
                    _ if status == Status::Info => Ok(read(k, None)),
                    other => Err(format!(
                        "the read of key {k} returned {}, not a list or an integer",
                        cut(&other.show())
                    )),
                },
                _ => Err(unknown_op(&f.show())),
            }
        })
        .collect()
}

/// The scanner: one line holding one operation map whose :value is a
/// vector of `[:append K V]` and `[:r K nil|[E ...]]` with integers, and
/// whose other entries are atoms or plain vectors; None for anything else
/// (the EDN reader reads that line).
fn scan(line: &[u8], n: usize) -> Option<Event> {
    let mut s = Scan { s: line, i: 0 };
    s.ws();
    // Jepsen's newer histories tag each map: #jepsen.history.Op{...}.
    if s.peek()? == b'#' {
        s.i += 1;
        if s.token().is_empty() {
            return None;
        }
    }
    s.expect(b'{')?;
    let (mut process, mut nemesis, mut status, mut time, mut f_txn, mut value) = (None, false, None, None, None, None);
    loop {
        s.ws();
        if s.peek()? == b'}' {
            s.i += 1;
            break;
        }
        let key = s.keyword()?;
        s.ws();
        match key {
            b"type" if status.is_none() => {
                status = Some(match s.keyword()? {
                    b"invoke" => None,
                    b"ok" => Some(Status::Ok),
                    b"fail" => Some(Status::Fail),
                    b"info" => Some(Status::Info),
                    _ => return None,
                })
            }
            b"f" if f_txn.is_none() => f_txn = Some(s.keyword()? == b"txn"),
            b"process" if process.is_none() && !nemesis => {
                if s.peek()? == b':' {
                    s.keyword()?;
                    nemesis = true;
                } else {
                    process = Some(s.int()?);
                }
            }
            b"time" if time.is_none() => time = Some(u64::try_from(s.int()?).ok()?),
            b"value" if value.is_none() => value = Some(s.mops()?),
            _ => s.skip()?,
        }
    }
    s.ws();
    if s.i < line.len() && line[s.i] != b';' {
        return None;
    }
    if nemesis {
        return Some(Event::Skip);
    }
    // What the EDN reader would say about a process, :f or :type that is not there.
    let (process, true, Some(status)) = (process?, f_txn?, status) else {
        return None;
    };
    Some(Event::Op {
        line: n,
        process,
        status,
        time,
        value: match value? {
            Some(mops) => Mops::Raw(mops),
            None => Mops::Value(Value::Nil),
        },
    })
}

struct Scan<'a> {
    s: &'a [u8],
    i: usize,
}

impl<'a> Scan<'a> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\r' | b',')) {
            self.i += 1;
        }
    }

    fn expect(&mut self, c: u8) -> Option<()> {
        (self.peek()? == c).then(|| self.i += 1)
    }

    fn token(&mut self) -> &'a [u8] {
        let start = self.i;
        while let Some(c) = self.peek() {
            if matches!(
                c,
                b' ' | b'\t' | b'\r' | b'\n' | b',' | b'{' | b'}' | b'[' | b']' | b'(' | b')' | b'"' | b';' | b'#'
            ) {
                break;
            }
            self.i += 1;
        }
        &self.s[start..self.i]
    }

    fn keyword(&mut self) -> Option<&'a [u8]> {
        self.expect(b':')?;
        let t = self.token();
        (!t.is_empty()).then_some(t)
    }

    /// Decimal digits (a minus first, perhaps) that fit an i64, ending at a delimiter.
    fn int(&mut self) -> Option<i64> {
        let neg = self.peek()? == b'-';
        self.i += neg as usize;
        let start = self.i;
        let mut v: i64 = 0;
        while let Some(c @ b'0'..=b'9') = self.peek() {
            v = v * 10 + (c - b'0') as i64;
            self.i += 1;
        }
        let len = self.i - start;
        // Not an integer on its own (1.5, 7N, -x): the EDN reader's to read.
        if len == 0
            || len > 18
            || !matches!(
                self.peek(),
                None | Some(b' ' | b',' | b']' | b'}' | b'\t' | b'\r' | b')')
            )
        {
            return None;
        }
        Some(if neg { -v } else { v })
    }

    /// An atom or a vector of atoms and vectors, skipped (a string, map or tag: None).
    fn skip(&mut self) -> Option<()> {
        if self.peek()? == b'[' {
            self.i += 1;
            loop {
                self.ws();
                if self.peek()? == b']' {
                    self.i += 1;
                    return Some(());
                }
                self.skip()?;
            }
        }
        (!self.token().is_empty()).then_some(())
    }

    /// nil (Some(None)) or a vector of micro-operations.
    fn mops(&mut self) -> Option<Option<Vec<Op>>> {
        if self.peek()? != b'[' {
            return (self.token() == b"nil").then_some(None);
        }
        self.i += 1;
        let mut out = Vec::with_capacity(4);
        loop {
            self.ws();
            if self.peek()? == b']' {
                self.i += 1;
                return Some(Some(out));
            }
            self.expect(b'[')?;
            self.ws();
            let f = self.keyword()?;
            self.ws();
            let k = self.int()?;
            self.ws();
            out.push(match f {
                b"append" => Op::Append(k, self.int()?),
                b"w" => Op::Write(k, self.int()?),
                b"r" if self.peek()?.is_ascii_digit() || self.peek()? == b'-' => Op::Get(k, Some(self.int()?)),
                b"r" if self.peek()? == b'[' => {
                    self.i += 1;
                    let mut l = Vec::with_capacity(32);
                    loop {
                        self.ws();
                        if self.peek()? == b']' {
                            self.i += 1;
                            break;
                        }
                        l.push(self.int()?);
                    }
                    l.shrink_to_fit();
                    Op::Read(k, Some(l))
                }
                b"r" if self.token() == b"nil" => Op::Read(k, None),
                _ => return None,
            });
            self.ws();
            self.expect(b']')?;
        }
    }
}

/// A history from either format: lab's JSON lines, or Jepsen's EDN.
impl History {
    /// Reads lab's JSON lines or Jepsen's EDN, whichever `text` is.
    pub fn parse(text: &str) -> Result<History, Damage> {
        let first = text.trim_start();
        if first.starts_with("{\"") || first.is_empty() {
            Self::from_json_lines(text)
        } else {
            Self::from_edn(text)
        }
    }

    /// Jepsen's list-append history: invocations paired with their
    /// completions by process; nemesis and other non-client ops are skipped.
    pub fn from_edn(text: &str) -> Result<History, Damage> {
        read(std::io::Cursor::new(text.as_bytes()))
    }

    /// Jepsen's history from `input`, streamed.
    pub fn read_edn(input: impl std::io::Read + std::io::Seek + Send) -> Result<History, Damage> {
        read(input)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ops(h: &History) -> Vec<(Status, Vec<Op>)> {
        h.txns.iter().map(|t| (t.status, t.ops.clone())).collect()
    }

    #[test]
    fn the_scanner_and_the_edn_reader_read_alike() {
        let text = "\
{:type :invoke, :f :txn, :value [[:append 1 2] [:r 1 nil]], :process 0, :time 10, :index 0}
{:type :invoke, :f :txn, :value [[:r 1 nil]], :process 1, :time 11, :index 1}
{:type :info, :f :start-partition, :value [:isolated {\"n1\" #{\"n2\"}}], :process :nemesis, :time 12}
#jepsen.history.Op{:type :ok, :f :txn, :value [[:append 1 2] [:r 1 [2]]], :process 0, :time 20, :index 2}
{:type :fail, :f :txn, :value [[:r 1 nil]], :process 1, :time 21, :index 3, :error [:x \"y\"]}
{:type :invoke, :f :txn, :value [[:append 2 5]], :process 0, :time 30, :index 4} ; a comment
";
        let by_line = by_lines(&mut text.as_bytes()).unwrap().expect("one operation per line");
        let by_form = by_forms(text.as_bytes()).unwrap();
        assert_eq!(ops(&by_line), ops(&by_form));
        assert_eq!(by_line.txns.len(), 3);
        assert_eq!(by_line.txns[2].line, 6);
        assert!(scan(b"{:type :ok, :f :txn, :value [[:r 1 [1 2]]], :process 3}", 1).is_some());
        assert!(scan(b"{:type :ok, :f :txn, :value [[:r :x [1 2]]], :process 3}", 1).is_none());
        assert!(scan(b"#jepsen.history.Op{:type :ok, :f :txn, :value [], :process 3}", 1).is_some());
    }

    #[test]
    fn forms_across_lines_and_one_vector_are_read_by_forms() {
        let text = "[{:type :invoke, :f :txn, :value [[:append :x 1]], :process 0}\n\
                    {:type :ok, :f :txn,\n :value [[:append :x 1]], :process 0}\n\
                    {:type :invoke, :f :txn, :value [[:r :x nil]], :process 1}\n\
                    {:type :ok, :f :txn, :value [[:r :x [1]]], :process 1}]\n";
        let h = read(std::io::Cursor::new(text)).unwrap();
        assert_eq!(
            ops(&h),
            vec![
                (Status::Ok, vec![Op::Append(1, 1)]),
                (Status::Ok, vec![Op::Read(1, Some(vec![1]))])
            ]
        );
        let multi = "{:type :invoke, :f :txn, :value [[:append 1 1]],\n :process 0}\n{:type :ok, :f :txn, :value [[:append 1 1]], :process 0}\n";
        assert!(by_lines(&mut multi.as_bytes()).unwrap().is_none());
        assert_eq!(read(std::io::Cursor::new(multi)).unwrap().txns.len(), 1);
    }

    #[test]
    fn bad_input_names_its_line() {
        let e = read(std::io::Cursor::new(
            "{:type :invoke, :f :txn, :value [[:append 1 1]], :process 0}\n{:type :ok, :f :txn, :value [[:append 1 1]], :process 0}\n\
             {:type :invoke, :f :txn, :value [[:append :x 1]], :process 0}\n{:type :ok, :f :txn, :value [[:append :x 1]], :process 0}\n",
        ))
        .unwrap_err();
        assert_eq!(e.line, 4);
        assert!(e.what.contains("mixes integer keys"), "{}", e.what);
        // A truncated map at the end: the line it opens on.
        let e = read(std::io::Cursor::new(
            "{:type :invoke, :f :txn, :value [[:append 1 1]], :process 0}\n{:type :ok, :f :txn, :val",
        ))
        .unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.what.contains("never closed"), "{}", e.what);
    }
}
