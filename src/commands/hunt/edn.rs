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
    Keyword(String),
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
                .find(|(k, _)| matches!(k, Value::Keyword(name) if name == key))
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

/// Reads top-level forms one by one.
pub struct Reader<'a> {
    src: &'a [u8],
    pos: usize,
    line: usize,
    /// Forms being read around the current one.
    depth: usize,
}

/// How deep forms may nest (a history's go five deep, a tag counted): deeper
/// is refused, not read into a stack overflow.
const DEEPEST: usize = 128;

impl<'a> Reader<'a> {
    pub fn new(text: &'a str) -> Reader<'a> {
        Reader {
            src: text.as_bytes(),
            pos: 0,
            line: 1,
            depth: 0,
        }
    }

    /// The next top-level form and the line it starts on; none at the end.
    pub fn next_form(&mut self) -> Result<Option<(usize, Value)>, EdnError> {
        self.skip()?;
        if self.pos >= self.src.len() {
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

    fn peek(&self) -> Option<u8> {
        self.src.get(self.pos).copied()
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
            if self.src[self.pos..].starts_with(b"#_") {
                self.pos += 2;
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

    /// The bytes up to the next delimiter.
    fn token(&mut self) -> String {
        let start = self.pos;
        while let Some(c) = self.peek() {
            if matches!(
                c,
                b' ' | b'\t' | b'\r' | b'\n' | b',' | b'{' | b'}' | b'[' | b']' | b'(' | b')' | b'"' | b';'
            ) {
                break;
            }
            self.bump();
        }
        String::from_utf8_lossy(&self.src[start..self.pos]).into_owned()
    }

    fn atom(&mut self) -> Result<Value, EdnError> {
        let t = self.token();
        if t.is_empty() {
            return self.err("an unexpected character");
        }
        Ok(match t.as_str() {
            "nil" => Value::Nil,
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            _ if t.starts_with(':') => Value::Keyword(t[1..].to_string()),
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
}
