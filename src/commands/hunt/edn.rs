//! Just enough EDN to read a Jepsen history: maps, vectors, lists, sets,
//! keywords, integers, strings, nil and booleans; tagged elements
//! (`#jepsen.history.Op{…}`) read as their value, `#_` discards the next
//! form, commas are whitespace, `;` starts a comment. Each top-level form
//! comes with the line it starts on, for errors that name file:line.
//!
//! Our own, not a crate: `edn-rs` is deprecated, and `edn-format` pulls in
//! bigdecimal, chrono, uuid and four more for values a history never holds;
//! a checker reading a million lines wants the subset, fast.

#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Nil,
    Bool(bool),
    Int(i64),
    /// Floats, characters, big numbers: kept as their text (a history's ops never hold them).
    Other(String),
    Str(String),
    Keyword(std::sync::Arc<str>),
    Symbol(String),
    /// A vector, a list or a set.
    Seq(Vec<Value>),
    Map(Vec<(Value, Value)>),
}

impl Value {
    /// The value under keyword `key` (without its colon) of a map.
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Map(entries) => entries
                .iter()
                .find(|(k, _)| matches!(k, Value::Keyword(name) if &**name == key))
                .map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn keyword(&self) -> Option<&str> {
        match self {
            Value::Keyword(k) => Some(k),
            _ => None,
        }
    }

    /// As EDN, for error lines.
    pub fn show(&self) -> String {
        match self {
            Value::Nil => "nil".into(),
            Value::Bool(b) => b.to_string(),
            Value::Int(i) => i.to_string(),
            Value::Other(s) | Value::Symbol(s) => s.clone(),
            Value::Str(s) => format!("{s:?}"),
            Value::Keyword(k) => format!(":{k}"),
            Value::Seq(items) => format!("[{}]", items.iter().map(Value::show).collect::<Vec<_>>().join(" ")),
            Value::Map(entries) => format!(
                "{{{}}}",
                entries
                    .iter()
                    .map(|(k, v)| format!("{} {}", k.show(), v.show()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }
}

/// What was wrong, and on which line.
#[derive(Debug, Clone, PartialEq)]
pub struct EdnError {
    pub line: usize,
    pub what: String,
}

/// Reads top-level forms one by one, from text or a stream (a history of
/// a million operations is hundreds of megabytes: it is never held whole,
/// only the form being read).
pub struct Reader<R> {
    input: R,
    buf: Box<[u8]>,
    pos: usize,
    end: usize,
    /// The input has no more bytes.
    done: bool,
    line: usize,
    /// Forms being read around the current one.
    depth: usize,
    /// Inside a top-level vector whose items [`Reader::next_item`] hands out one by one.
    in_vector: bool,
    /// Keywords seen, each kept once.
    keywords: std::collections::HashMap<Box<[u8]>, std::sync::Arc<str>>,
}

/// How deep forms may nest (a history's go five deep, a tag counted): deeper
/// is refused, not read into a stack overflow.
const DEEPEST: usize = 128;

impl<'a> Reader<&'a [u8]> {
    pub fn new(text: &'a str) -> Reader<&'a [u8]> {
        Reader::from_read(text.as_bytes())
    }
}

impl<R: std::io::Read> Reader<R> {
    pub fn from_read(input: R) -> Reader<R> {
        Reader {
            input,
            buf: vec![0u8; 1 << 16].into_boxed_slice(),
            pos: 0,
            end: 0,
            done: false,
            line: 1,
            depth: 0,
            in_vector: false,
            keywords: Default::default(),
        }
    }

    /// The line being read.
    pub fn line(&self) -> usize {
        self.line
    }

    /// The next operation of a history written one form after another, or
    /// as one vector of forms (its items handed out one by one, never the
    /// whole vector at once), and the line it starts on; none at the end.
    pub fn next_item(&mut self) -> Result<Option<(usize, Value)>, EdnError> {
        self.skip()?;
        if !self.in_vector && self.depth == 0 && self.peek() == Some(b'[') {
            self.bump();
            self.in_vector = true;
            self.skip()?;
        }
        if self.in_vector {
            match self.peek() {
                Some(b']') => {
                    self.bump();
                    self.in_vector = false;
                    return self.next_item();
                }
                None => {
                    return self.err("the vector of operations is never closed (a ']' is missing)");
                }
                _ => {}
            }
        }
        self.next_form()
    }

    /// The next top-level form and the line it starts on; none at the end.
    pub fn next_form(&mut self) -> Result<Option<(usize, Value)>, EdnError> {
        self.skip()?;
        if self.peek().is_none() {
            return Ok(None);
        }
        let line = self.line;
        let v = self.value()?;
        Ok(Some((line, v)))
    }

    fn err<T>(&self, what: impl Into<String>) -> Result<T, EdnError> {
        Err(EdnError {
            line: self.line,
            what: what.into(),
        })
    }

    fn peek(&mut self) -> Option<u8> {
        if self.pos == self.end && !self.refill() {
            return None;
        }
        Some(self.buf[self.pos])
    }

    /// The next bytes of the input, after the ones read (false: none left).
    fn refill(&mut self) -> bool {
        if self.done {
            return false;
        }
        match read_some(&mut self.input, &mut self.buf) {
            0 => {
                self.done = true;
                false
            }
            n => {
                self.pos = 0;
                self.end = n;
                true
            }
        }
    }

    /// The byte after the next one, if any (`#_` is two bytes).
    fn peek2(&mut self) -> Option<u8> {
        let c = self.peek()?;
        if self.pos + 1 < self.end {
            return Some(self.buf[self.pos + 1]);
        }
        // The next byte is the buffer's last: keep it first, and read on after it.
        self.buf[0] = c;
        let n = if self.done {
            0
        } else {
            read_some(&mut self.input, &mut self.buf[1..])
        };
        self.done |= n == 0;
        self.pos = 0;
        self.end = 1 + n;
        (n > 0).then(|| self.buf[1])
    }

    fn bump(&mut self) -> Option<u8> {
        let c = self.peek()?;
        self.pos += 1;
        if c == b'\n' {
            self.line += 1;
        }
        Some(c)
    }

    fn skip_space(&mut self) {
        while let Some(c) = self.peek() {
            match c {
                b' ' | b'\t' | b'\r' | b'\n' | b',' => {
                    self.bump();
                }
                b';' => {
                    while let Some(c) = self.bump() {
                        if c == b'\n' {
                            break;
                        }
                    }
                }
                _ => break,
            }
        }
    }

    /// Whitespace, comments and `#_` discarded forms.
    fn skip(&mut self) -> Result<(), EdnError> {
        loop {
            self.skip_space();
            if self.peek() == Some(b'#') && self.peek2() == Some(b'_') {
                self.bump();
                self.bump();
                self.value()?;
            } else {
                return Ok(());
            }
        }
    }

    /// A form; one inside too many others (or after too many tags or
    /// discards) is refused.
    fn value(&mut self) -> Result<Value, EdnError> {
        if self.depth == DEEPEST {
            return self.err(format!("forms nested more than {DEEPEST} deep"));
        }
        self.depth += 1;
        let v = self.form();
        self.depth -= 1;
        v
    }

    fn form(&mut self) -> Result<Value, EdnError> {
        self.skip()?;
        let Some(c) = self.peek() else {
            return self.err("the text ends inside a form");
        };
        match c {
            b'{' => {
                self.bump();
                let items = self.items(b'}')?;
                if items.len() % 2 == 1 {
                    return self.err("a map with an odd number of forms");
                }
                let mut entries = Vec::with_capacity(items.len() / 2);
                let mut it = items.into_iter();
                while let (Some(k), Some(v)) = (it.next(), it.next()) {
                    entries.push((k, v));
                }
                Ok(Value::Map(entries))
            }
            b'[' => {
                self.bump();
                Ok(Value::Seq(self.items(b']')?))
            }
            b'(' => {
                self.bump();
                Ok(Value::Seq(self.items(b')')?))
            }
            b'}' | b']' | b')' => self.err(format!("an unmatched '{}'", c as char)),
            b'"' => self.string(),
            b'#' => {
                self.bump();
                match self.peek() {
                    Some(b'{') => {
                        self.bump();
                        Ok(Value::Seq(self.items(b'}')?))
                    }
                    // A tagged element: the tag says what the value means; the value is what a history needs.
                    Some(c) if c.is_ascii_alphabetic() => {
                        self.token();
                        self.value()
                    }
                    _ => self.err("a '#' that starts no set, tag or discard"),
                }
            }
            b'\\' => {
                self.bump();
                Ok(Value::Other(format!("\\{}", self.token())))
            }
            _ => self.atom(),
        }
    }

    /// Forms up to the closing byte (its opening was on the current line).
    fn items(&mut self, close: u8) -> Result<Vec<Value>, EdnError> {
        let opened = self.line;
        let mut items = Vec::new();
        loop {
            self.skip()?;
            match self.peek() {
                None => {
                    return Err(EdnError {
                        line: opened,
                        what: format!(
                            "the form opened here is never closed (a '{}' is missing)",
                            close as char
                        ),
                    });
                }
                Some(c) if c == close => {
                    self.bump();
                    return Ok(items);
                }
                Some(_) => items.push(self.value()?),
            }
        }
    }

    fn string(&mut self) -> Result<Value, EdnError> {
        self.bump();
        let mut s = Vec::new();
        loop {
            match self.bump() {
                None => return self.err("a string that is never closed"),
                Some(b'"') => break,
                Some(b'\\') => match self.bump() {
                    Some(b'n') => s.push(b'\n'),
                    Some(b't') => s.push(b'\t'),
                    Some(b'r') => s.push(b'\r'),
                    Some(c) => s.push(c),
                    None => return self.err("a string that is never closed"),
                },
                Some(c) => s.push(c),
            }
        }
        Ok(Value::Str(String::from_utf8_lossy(&s).into_owned()))
    }

    /// The bytes up to the next delimiter, into `out` (emptied first).
    fn token_bytes(&mut self, out: &mut Vec<u8>) {
        out.clear();
        while let Some(c) = self.peek() {
            if matches!(
                c,
                b' ' | b'\t' | b'\r' | b'\n' | b',' | b'{' | b'}' | b'[' | b']' | b'(' | b')' | b'"' | b';'
            ) {
                break;
            }
            // A token never holds a newline: no line to count.
            self.pos += 1;
            out.push(c);
        }
    }

    fn token(&mut self) -> String {
        let mut t = Vec::new();
        self.token_bytes(&mut t);
        String::from_utf8_lossy(&t).into_owned()
    }

    fn atom(&mut self) -> Result<Value, EdnError> {
        let mut t = Vec::with_capacity(16);
        self.token_bytes(&mut t);
        if t.is_empty() {
            return self.err("an unexpected character");
        }
        // The common cases first: a plain integer, a keyword.
        if let Some(i) = plain_int(&t) {
            return Ok(Value::Int(i));
        }
        if t[0] == b':' {
            let name = match self.keywords.get(&t[1..]) {
                Some(k) => k.clone(),
                None => {
                    let k: std::sync::Arc<str> = String::from_utf8_lossy(&t[1..]).into();
                    self.keywords.insert(t[1..].into(), k.clone());
                    k
                }
            };
            return Ok(Value::Keyword(name));
        }
        let t = String::from_utf8_lossy(&t).into_owned();
        Ok(match t.as_str() {
            "nil" => Value::Nil,
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            _ => {
                let first = t.as_bytes()[0];
                let numeric = first.is_ascii_digit()
                    || ((first == b'-' || first == b'+') && t.len() > 1 && t.as_bytes()[1].is_ascii_digit());
                if !numeric {
                    Value::Symbol(t)
                } else {
                    match t.parse::<i64>() {
                        Ok(i) => Value::Int(i),
                        Err(_) => match t.strip_suffix('N').and_then(|d| d.parse::<i64>().ok()) {
                            Some(i) => Value::Int(i),
                            None => Value::Other(t),
                        },
                    }
                }
            }
        })
    }
}

/// Some bytes of `input` (0: none left; a failing input ends there, and
/// the form it cuts reads as unclosed).
fn read_some(input: &mut impl std::io::Read, buf: &mut [u8]) -> usize {
    loop {
        match input.read(buf) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Ok(n) => return n,
            Err(_) => return 0,
        }
    }
}

/// A token of decimal digits (a minus first, perhaps) that fits an i64.
fn plain_int(t: &[u8]) -> Option<i64> {
    let (neg, digits) = match t.first()? {
        b'-' => (true, &t[1..]),
        _ => (false, t),
    };
    if digits.is_empty() || digits.len() > 18 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let v = digits.iter().fold(0i64, |a, d| a * 10 + (d - b'0') as i64);
    Some(if neg { -v } else { v })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(text: &str) -> Vec<(usize, Value)> {
        let mut r = Reader::new(text);
        let mut out = Vec::new();
        while let Some(f) = r.next_form().unwrap() {
            out.push(f);
        }
        out
    }

    #[test]
    fn reads_a_jepsen_op_line_by_line() {
        let forms = all(
            "{:type :invoke, :f :txn, :value [[:append 1 2] [:r 1 nil]], :process 0, :time 12, :index 0}\n\
             ; a comment\n\
             #jepsen.history.Op{:type :ok, :f :txn, :value [[:append 1 2] [:r 1 [1 2]]], :process 0, :time 40}\n",
        );
        assert_eq!(forms.len(), 2);
        assert_eq!(forms[0].0, 1);
        assert_eq!(forms[1].0, 3);
        let op = &forms[1].1;
        assert_eq!(op.get("type").and_then(Value::keyword), Some("ok"));
        assert_eq!(op.get("time"), Some(&Value::Int(40)));
        let Some(Value::Seq(mops)) = op.get("value") else {
            panic!("no value")
        };
        assert_eq!(
            mops[1],
            Value::Seq(vec![
                Value::Keyword("r".into()),
                Value::Int(1),
                Value::Seq(vec![Value::Int(1), Value::Int(2)])
            ])
        );
    }

    #[test]
    fn strings_sets_discards_and_big_ints() {
        let forms = all(r#"#_ {:gone 0} [#{1 2} "a \"q\"" #_ :gone 7N -3 1.5 \c sym #_ #_ 8 9] #_ 10"#);
        assert_eq!(forms.len(), 1, "{forms:?}");
        let Value::Seq(items) = &forms[0].1 else { panic!() };
        assert_eq!(
            items,
            &vec![
                Value::Seq(vec![Value::Int(1), Value::Int(2)]),
                Value::Str("a \"q\"".into()),
                Value::Int(7),
                Value::Int(-3),
                Value::Other("1.5".into()),
                Value::Other("\\c".into()),
                Value::Symbol("sym".into()),
            ]
        );
    }

    #[test]
    fn damage_names_the_line() {
        let mut r = Reader::new("{:a 1}\n{:b [1 2}\n");
        assert!(r.next_form().unwrap().is_some());
        let e = r.next_form().unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.what.contains("unmatched"), "{}", e.what);
        let e = Reader::new("\n\n{:a 1\n:b 2").next_form().unwrap_err();
        assert_eq!(e.line, 3, "the line the unclosed form opens on");
        assert!(e.what.contains("missing"), "{}", e.what);
        let e = Reader::new("{:a}").next_form().unwrap_err();
        assert!(e.what.contains("odd"), "{}", e.what);
        // Deep nesting, chained tags or discards: refused, not a stack overflow.
        for deep in ["[".repeat(200_000), "#_".repeat(200_000), "#t ".repeat(200_000)] {
            let e = Reader::new(&deep).next_form().unwrap_err();
            assert!(e.what.contains("nested more than 128 deep"), "{}", e.what);
        }
        let mut ok = "[".repeat(100);
        ok.push_str(&"]".repeat(100));
        assert!(Reader::new(&ok).next_form().is_ok());
    }

    /// A stream handing out one byte per read: every refill, `#_` and
    /// token cut at a buffer's end.
    struct Trickle<'a>(&'a [u8]);

    impl std::io::Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            match self.0.split_first() {
                Some((b, rest)) if !buf.is_empty() => {
                    buf[0] = *b;
                    self.0 = rest;
                    Ok(1)
                }
                _ => Ok(0),
            }
        }
    }

    #[test]
    fn a_stream_read_a_byte_at_a_time_reads_as_the_text_does() {
        let text = "#_ {:gone 0}\n[{:a -12, :b #_ 3 [:r 1 nil]}\n {:c \"x\"}]\n{:d 7N}";
        let mut whole = Reader::new(text);
        let mut trickle = Reader::from_read(Trickle(text.as_bytes()));
        let mut n = 0;
        loop {
            let (a, b) = (whole.next_item().unwrap(), trickle.next_item().unwrap());
            assert_eq!(a, b);
            let Some((line, _)) = a else { break };
            n += 1;
            assert_eq!(line, [2, 3, 4][n - 1]);
        }
        assert_eq!(n, 3, "the vector's two maps one by one, then the last");
        let mut r = Reader::from_read(Trickle(b"[{:a 1}\n{:b 2"));
        assert!(r.next_item().unwrap().is_some());
        let e = r.next_item().unwrap_err();
        assert_eq!(e.line, 2, "the map opened on line 2 is cut off");
    }
}
