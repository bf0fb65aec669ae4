//! The isolationtester spec grammar (PostgreSQL's specscanner.l and
//! specparse.y), read the same way: keywords, identifiers (plain or
//! "quoted"), `{ sql }` blocks that end at the first `}`, `#` comments,
//! integers and the punctuation `, ( ) *`.
//!
//! Comments are kept beside the token they precede, so lab can read its
//! annotations (`# variant: NAME`, `# why: ...`) from a file that
//! isolationtester reads as plain comments.
use super::{Blocker, Permutation, PermutationStep, Session, Spec, Step};
use crate::i18n::Text;

/// Where parsing stopped, and why: in English isolationtester's words
/// where it has them.
#[derive(Debug, Clone)]
pub struct ParseError {
    pub line: usize,
    pub message: Text,
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

mod msg {
    crate::messages! {
        prefix "sx";
        unterminated_quoted() {
            en: "unterminated quoted identifier",
            tr: "tırnaklı ad kapanmamış",
        }
        newline_in_quoted() {
            en: "unexpected newline in quoted identifier",
            tr: "tırnaklı adın içinde beklenmeyen satır sonu",
        }
        unterminated_sql() {
            en: "unterminated sql block",
            tr: "sql bloğu kapanmamış",
        }
        number_out_of_range(digits) {
            en: "number out of range: {digits}",
            tr: "sayı sınırların dışında: {digits}",
        }
        unexpected_character(c) {
            en: "syntax error: unexpected character \"{c}\"",
            tr: "söz dizimi hatası: beklenmeyen karakter \"{c}\"",
        }
        expected(what, found) {
            en: "syntax error: expected {what}, found {found}",
            tr: "söz dizimi hatası: {what} bekleniyordu, {found} bulundu",
        }
        end_of_file() {
            en: "end of file",
            tr: "dosyanın sonu",
        }
        sql_block(block) {
            en: "a {block} block",
            tr: "bir {block} bloğu",
        }
        name() {
            en: "a name",
            tr: "bir ad",
        }
        step() {
            en: "a step",
            tr: "bir step",
        }
        session() {
            en: "a session",
            tr: "bir session",
        }
        notices() {
            en: "a number of notices",
            tr: "bir notices sayısı",
        }
        comma_or_paren() {
            en: "\",\" or \")\"",
            tr: "\",\" ya da \")\"",
        }
        step_name() {
            en: "a step name",
            tr: "bir step adı",
        }
        permutation_or_end() {
            en: "\"permutation\" or the end of the file",
            tr: "\"permutation\" ya da dosyanın sonu",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Notices,
    Permutation,
    Session,
    Setup,
    Step,
    Teardown,
    Ident(String),
    Sql(String),
    Int(i64),
    Punct(char),
}

#[derive(Debug, Clone)]
struct Token {
    tok: Tok,
    line: usize,
    /// The `#` comments between the previous token and this one, without their `#`.
    comments: Vec<String>,
}

fn is_ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_' || !c.is_ascii()
}

fn is_ident_cont(c: char) -> bool {
    is_ident_start(c) || c.is_ascii_digit() || c == '$'
}

/// A session's or step's name as a spec writes it: as it is where the
/// scanner reads it back as that name, else in double quotes (`"a b"`,
/// `"1"`, `"step"`), a quote in it doubled.
pub fn name(s: &str) -> String {
    let keyword = matches!(s, "notices" | "permutation" | "session" | "setup" | "step" | "teardown");
    let mut chars = s.chars();
    let plain = chars.next().is_some_and(is_ident_start) && chars.all(is_ident_cont);
    if plain && !keyword {
        s.to_string()
    } else {
        format!("\"{}\"", s.replace('"', "\"\""))
    }
}

/// The scanner's space: newlines are not space (they count lines).
fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\x0c')
}

fn lex(text: &str) -> Result<Vec<Token>, ParseError> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut comments = Vec::new();
    let (mut i, mut line) = (0, 1);
    let err = |line: usize, message: Text| Err(ParseError { line, message });
    while i < chars.len() {
        let c = chars[i];
        let start_line = line;
        let tok = if c == '\n' {
            line += 1;
            i += 1;
            continue;
        } else if is_space(c) {
            i += 1;
            continue;
        } else if c == '#' {
            let end = chars[i..]
                .iter()
                .position(|&c| c == '\n' || c == '\r')
                .map_or(chars.len(), |p| i + p);
            comments.push(chars[i + 1..end].iter().collect::<String>());
            i = end;
            continue;
        } else if is_ident_start(c) {
            let end = chars[i..]
                .iter()
                .position(|&c| !is_ident_cont(c))
                .map_or(chars.len(), |p| i + p);
            let word: String = chars[i..end].iter().collect();
            i = end;
            match word.as_str() {
                "notices" => Tok::Notices,
                "permutation" => Tok::Permutation,
                "session" => Tok::Session,
                "setup" => Tok::Setup,
                "step" => Tok::Step,
                "teardown" => Tok::Teardown,
                _ => Tok::Ident(word),
            }
        } else if c == '"' {
            let mut word = String::new();
            i += 1;
            loop {
                match chars.get(i) {
                    None => return err(line, msg::unterminated_quoted()),
                    Some('\n') => return err(line, msg::newline_in_quoted()),
                    Some('"') if chars.get(i + 1) == Some(&'"') => {
                        word.push('"');
                        i += 2;
                    }
                    Some('"') => {
                        i += 1;
                        break;
                    }
                    Some(&c) => {
                        word.push(c);
                        i += 1;
                    }
                }
            }
            Tok::Ident(word)
        } else if c == '{' {
            i += 1;
            while i < chars.len() && is_space(chars[i]) {
                i += 1;
            }
            let Some(close) = chars[i..].iter().position(|&c| c == '}') else {
                return err(line, msg::unterminated_sql());
            };
            let mut body: String = chars[i..i + close].iter().collect();
            line += body.matches('\n').count();
            // Spaces before the `}` are trimmed, a newline is not (as the scanner does).
            while body.ends_with(is_space) {
                body.pop();
            }
            i += close + 1;
            Tok::Sql(body)
        } else if c.is_ascii_digit() {
            let end = chars[i..]
                .iter()
                .position(|c| !c.is_ascii_digit())
                .map_or(chars.len(), |p| i + p);
            let digits: String = chars[i..end].iter().collect();
            i = end;
            match digits.parse() {
                Ok(n) => Tok::Int(n),
                Err(_) => return err(line, msg::number_out_of_range(digits)),
            }
        } else if matches!(c, ',' | '(' | ')' | '*') {
            i += 1;
            Tok::Punct(c)
        } else {
            return err(line, msg::unexpected_character(c.to_string()));
        };
        out.push(Token {
            tok,
            line: start_line,
            comments: std::mem::take(&mut comments),
        });
    }
    Ok(out)
}

struct Parser {
    toks: Vec<Token>,
    at: usize,
    last_line: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.at).map(|t| &t.tok)
    }

    fn line(&self) -> usize {
        self.toks.get(self.at).map_or(self.last_line, |t| t.line)
    }

    fn next(&mut self) -> Option<Token> {
        let t = self.toks.get(self.at).cloned();
        self.at += 1;
        t
    }

    fn fail<T>(&self, what: Text) -> Result<T, ParseError> {
        let found: crate::i18n::Arg = match self.peek() {
            None => msg::end_of_file().into(),
            Some(Tok::Ident(s)) => format!("\"{s}\"").into(),
            Some(Tok::Sql(_)) => msg::sql_block("{ sql }").into(),
            Some(Tok::Int(n)) => n.to_string().into(),
            Some(Tok::Punct(c)) => format!("\"{c}\"").into(),
            Some(t) => format!("{t:?}").to_lowercase().into(),
        };
        Err(ParseError {
            line: self.line(),
            message: msg::expected(what, found),
        })
    }

    fn sql(&mut self) -> Result<String, ParseError> {
        match self.peek() {
            Some(Tok::Sql(_)) => match self.next().map(|t| t.tok) {
                Some(Tok::Sql(s)) => Ok(s),
                _ => unreachable!("peeked"),
            },
            _ => self.fail(msg::sql_block("{ sql }")),
        }
    }

    fn ident(&mut self) -> Result<String, ParseError> {
        match self.peek() {
            Some(Tok::Ident(_)) => match self.next().map(|t| t.tok) {
                Some(Tok::Ident(s)) => Ok(s),
                _ => unreachable!("peeked"),
            },
            _ => self.fail(msg::name()),
        }
    }

    fn eat(&mut self, tok: &Tok) -> bool {
        if self.peek() == Some(tok) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn comments(&self) -> Vec<String> {
        self.toks.get(self.at).map(|t| t.comments.clone()).unwrap_or_default()
    }
}

/// Parses a spec file's text.
pub fn parse(text: &str) -> Result<Spec, ParseError> {
    let toks = lex(text)?;
    let last_line = text.lines().count().max(1);
    let mut p = Parser { toks, at: 0, last_line };
    let mut spec = Spec {
        header: p.comments(),
        ..Spec::default()
    };
    while p.peek() == Some(&Tok::Setup) {
        p.next();
        spec.setup.push(p.sql()?);
    }
    if p.eat(&Tok::Teardown) {
        spec.teardown = Some(p.sql()?);
    }
    while p.peek() == Some(&Tok::Session) {
        p.next();
        let name = p.ident()?;
        let mut session = Session {
            name,
            ..Session::default()
        };
        if p.eat(&Tok::Setup) {
            session.setup = Some(p.sql()?);
        }
        while p.peek() == Some(&Tok::Step) {
            let notes = p.comments();
            p.next();
            let name = p.ident()?;
            let sql = p.sql()?;
            session.steps.push(Step { name, sql, notes });
        }
        if session.steps.is_empty() {
            return p.fail(msg::step());
        }
        if p.eat(&Tok::Teardown) {
            session.teardown = Some(p.sql()?);
        }
        spec.sessions.push(session);
    }
    if spec.sessions.is_empty() {
        return p.fail(msg::session());
    }
    while p.peek() == Some(&Tok::Permutation) {
        let notes = p.comments();
        let line = p.line();
        p.next();
        let mut steps = Vec::new();
        while let Some(Tok::Ident(_)) = p.peek() {
            let name = p.ident()?;
            let mut blockers = Vec::new();
            if p.eat(&Tok::Punct('(')) {
                loop {
                    if p.eat(&Tok::Punct('*')) {
                        blockers.push(Blocker::Once);
                    } else {
                        let step = p.ident()?;
                        if p.eat(&Tok::Notices) {
                            match p.next().map(|t| t.tok) {
                                Some(Tok::Int(n)) => blockers.push(Blocker::Notices(step, n)),
                                _ => {
                                    p.at -= 1;
                                    return p.fail(msg::notices());
                                }
                            }
                        } else {
                            blockers.push(Blocker::Step(step));
                        }
                    }
                    if p.eat(&Tok::Punct(')')) {
                        break;
                    }
                    if !p.eat(&Tok::Punct(',')) {
                        return p.fail(msg::comma_or_paren());
                    }
                }
            }
            steps.push(PermutationStep { name, blockers });
        }
        if steps.is_empty() {
            return p.fail(msg::step_name());
        }
        spec.permutations.push(Permutation { steps, notes, line });
    }
    if p.peek().is_some() {
        return p.fail(msg::permutation_or_end());
    }
    Ok(spec)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_keep_their_text_as_the_scanner_does() {
        let s = parse("setup\n{\n  CREATE TABLE a ();\n}\nsession s1\nstep s1a\t{  SELECT 1;  }\n").unwrap();
        assert_eq!(s.setup, vec!["\n  CREATE TABLE a ();\n".to_string()]);
        assert_eq!(s.sessions[0].steps[0].sql, "SELECT 1;");
    }

    #[test]
    fn the_full_grammar_parses() {
        let text = r#"
# header comment
setup { CREATE TABLE t (i int); }
setup { INSERT INTO t VALUES (1); }
teardown { DROP TABLE t; }

session "s 1"
setup { BEGIN; }
# why: read it
step r1 { SELECT * FROM t; }
step c1 { COMMIT; }
teardown { RESET ALL; }

session s2
step w2 { UPDATE t SET i = 2; }

# variant: one
permutation r1 w2(*) c1(r1, w2 notices 2)
permutation w2 r1 c1
"#;
        let s = parse(text).unwrap();
        assert_eq!(s.header, vec![" header comment".to_string()]);
        assert_eq!(s.setup.len(), 2);
        assert_eq!(s.teardown.as_deref(), Some("DROP TABLE t;"));
        assert_eq!(s.sessions[0].name, "s 1");
        assert_eq!(s.sessions[0].setup.as_deref(), Some("BEGIN;"));
        assert_eq!(s.sessions[0].teardown.as_deref(), Some("RESET ALL;"));
        assert_eq!(s.sessions[0].steps[0].notes, vec![" why: read it".to_string()]);
        let p = &s.permutations[0];
        assert_eq!(p.notes, vec![" variant: one".to_string()]);
        assert_eq!(p.steps[1].blockers, vec![Blocker::Once]);
        assert_eq!(
            p.steps[2].blockers,
            vec![Blocker::Step("r1".into()), Blocker::Notices("w2".into(), 2)]
        );
        assert!(s.permutations[1].notes.is_empty());
    }

    #[test]
    fn a_name_written_by_name_reads_back_as_itself() {
        for n in ["s1", "a b", "1", "step", "Setup", "x\"y", "_ok$", "çay", "a-b"] {
            let text = format!(
                "session {} step {} {{ SELECT 1; }} permutation {}",
                name(n),
                name(&format!("{n}1")),
                name(&format!("{n}1"))
            );
            let s = parse(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(s.sessions[0].name, n, "{text}");
            assert_eq!(s.sessions[0].steps[0].name, format!("{n}1"), "{text}");
            assert_eq!(s.permutations[0].steps[0].name, format!("{n}1"), "{text}");
        }
        assert_eq!(name("s1"), "s1");
        assert_eq!(name("step"), "\"step\"");
    }

    #[test]
    fn errors_say_where() {
        let e = parse("session s1\nstep a { SELECT 1; }\npermutation a b(\n").unwrap_err();
        assert_eq!(e.line, 3, "{e}");
        let e = parse("session s1\nstep a { SELECT 1;\n").unwrap_err();
        assert!(e.message.to_string().contains("unterminated sql block"), "{e}");
        let e = parse("setup { x }\n").unwrap_err();
        assert!(e.message.to_string().contains("expected a session"), "{e}");
        let e = parse("session s1 step a { } ; ").unwrap_err();
        assert!(e.message.to_string().contains("unexpected character \";\""), "{e}");
        let e = parse("session \"s\n1\" step a {}").unwrap_err();
        assert!(e.message.to_string().contains("newline in quoted identifier"), "{e}");
    }

    #[test]
    fn keywords_are_whole_words() {
        let s = parse("session sessions step steps { SELECT 1; }").unwrap();
        assert_eq!(s.sessions[0].name, "sessions");
        assert_eq!(s.sessions[0].steps[0].name, "steps");
    }
}
