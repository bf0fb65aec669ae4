//! Interleavings as data: PostgreSQL's isolationtester spec format.
//!
//! A spec has setup blocks, an optional teardown, sessions with their steps,
//! and permutations (orders of steps, with blocker annotations). lab reads
//! the same files isolationtester runs; what isolationtester treats as
//! comments, lab also reads as annotations:
//!
//! - `# variant: NAME` before a permutation names the scenario variant it is
//!   (`NAME/PART` for one part of a variant made of several);
//! - `# why: ...` and `# why-tr: ...` before a step say, in English and in
//!   Turkish, why the session runs it (shown by `--step`).
//!
//! Step SQL may carry two-way parameters, `/*:name*/literal`: isolationtester
//! runs the literal, lab may bind another value (see [`bind`]).
mod parse;

pub use parse::{ParseError, name, parse};

use crate::i18n::Lang;
use crate::sql_lexer::{literal, skip_block_comment, skip_dollar, skip_line_comment, skip_quoted};

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Spec {
    /// The comments before the first block.
    pub header: Vec<String>,
    pub setup: Vec<String>,
    pub teardown: Option<String>,
    pub sessions: Vec<Session>,
    pub permutations: Vec<Permutation>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Session {
    pub name: String,
    pub setup: Option<String>,
    pub steps: Vec<Step>,
    pub teardown: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub name: String,
    /// As written between the braces (isolationtester sends and prints it so).
    pub sql: String,
    /// The comments before the step.
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Permutation {
    pub steps: Vec<PermutationStep>,
    pub notes: Vec<String>,
    pub line: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PermutationStep {
    pub name: String,
    pub blockers: Vec<Blocker>,
}

/// isolationtester's blocker annotations on a permutation step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Blocker {
    /// `(*)`: report the step as waiting on its first try.
    Once,
    /// `(s1)`: not complete while step `s1` is running.
    Step(String),
    /// `(s1 notices N)`: not complete until s1's session has sent N more notices.
    Notices(String, i64),
}

/// A step by position: session index, step index within the session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StepId {
    pub session: usize,
    pub step: usize,
}

/// A blocker annotation resolved to the step it names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolved {
    Once,
    Step(StepId),
    Notices(StepId, i64),
}

/// One step of a permutation, ready to run.
#[derive(Debug, Clone, PartialEq)]
pub struct Planned {
    pub id: StepId,
    pub blockers: Vec<Resolved>,
}

/// What is wrong with a spec that parses (isolationtester refuses these too).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Invalid {
    DuplicateStep(String),
    UndefinedStep(String),
    UndefinedBlocker { blocker: String, step: String },
    OwnSession(String),
    DuplicateSession(String),
}

impl std::fmt::Display for Invalid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // isolationtester's own words.
        match self {
            Invalid::DuplicateStep(s) => write!(f, "duplicate step name: {s}"),
            Invalid::UndefinedStep(s) => write!(f, "undefined step \"{s}\" specified in permutation"),
            Invalid::UndefinedBlocker { blocker, step } => write!(
                f,
                "undefined blocking step \"{blocker}\" referenced in permutation step \"{step}\""
            ),
            Invalid::OwnSession(s) => write!(f, "permutation step \"{s}\" cannot block on its own session"),
            Invalid::DuplicateSession(s) => write!(f, "duplicate session name: {s}"),
        }
    }
}

impl Spec {
    /// Every step with its id, in the order the sessions declare them.
    pub fn steps(&self) -> impl Iterator<Item = (StepId, &Step)> {
        self.sessions.iter().enumerate().flat_map(|(si, s)| {
            s.steps
                .iter()
                .enumerate()
                .map(move |(i, st)| (StepId { session: si, step: i }, st))
        })
    }

    pub fn find(&self, name: &str) -> Option<StepId> {
        self.steps().find(|(_, s)| s.name == name).map(|(id, _)| id)
    }

    pub fn step(&self, id: StepId) -> &Step {
        &self.sessions[id.session].steps[id.step]
    }

    pub fn session_of(&self, id: StepId) -> &Session {
        &self.sessions[id.session]
    }

    /// Checks what isolationtester checks; the steps no listed permutation uses
    /// (isolationtester warns about them) are returned.
    pub fn check(&self) -> Result<Vec<String>, Invalid> {
        let mut names: Vec<&str> = self.steps().map(|(_, s)| s.name.as_str()).collect();
        names.sort_unstable();
        if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
            return Err(Invalid::DuplicateStep(w[0].to_string()));
        }
        let mut sessions: Vec<&str> = self.sessions.iter().map(|s| s.name.as_str()).collect();
        sessions.sort_unstable();
        if let Some(w) = sessions.windows(2).find(|w| w[0] == w[1]) {
            return Err(Invalid::DuplicateSession(w[0].to_string()));
        }
        let mut used = std::collections::HashSet::new();
        for p in &self.permutations {
            for planned in self.plan(p)? {
                used.insert(planned.id);
            }
        }
        if self.permutations.is_empty() {
            return Ok(Vec::new());
        }
        // In isolationtester's order: by name, byte by byte (strcmp).
        let mut unused: Vec<String> = self
            .steps()
            .filter(|(id, _)| !used.contains(id))
            .map(|(_, s)| s.name.clone())
            .collect();
        unused.sort();
        Ok(unused)
    }

    /// A permutation's steps resolved: its blockers may name any step of the
    /// permutation (a later one too), never one of the same session.
    pub fn plan(&self, p: &Permutation) -> Result<Vec<Planned>, Invalid> {
        let ids: Vec<StepId> = p
            .steps
            .iter()
            .map(|ps| {
                self.find(&ps.name)
                    .ok_or_else(|| Invalid::UndefinedStep(ps.name.clone()))
            })
            .collect::<Result<_, _>>()?;
        let in_perm = |name: &str| -> Option<StepId> {
            p.steps
                .iter()
                .zip(&ids)
                .find(|(ps, _)| ps.name == name)
                .map(|(_, id)| *id)
        };
        let mut out = Vec::new();
        for (ps, id) in p.steps.iter().zip(&ids) {
            let mut blockers = Vec::new();
            for b in &ps.blockers {
                let (name, resolved): (&str, Box<dyn Fn(StepId) -> Resolved>) = match b {
                    Blocker::Once => {
                        blockers.push(Resolved::Once);
                        continue;
                    }
                    Blocker::Step(n) => (n, Box::new(Resolved::Step)),
                    Blocker::Notices(n, count) => {
                        let count = *count;
                        (n, Box::new(move |s| Resolved::Notices(s, count)))
                    }
                };
                let other = in_perm(name).ok_or_else(|| Invalid::UndefinedBlocker {
                    blocker: name.to_string(),
                    step: ps.name.clone(),
                })?;
                if other.session == id.session {
                    return Err(Invalid::OwnSession(ps.name.clone()));
                }
                blockers.push(resolved(other));
            }
            out.push(Planned { id: *id, blockers });
        }
        Ok(out)
    }

    /// Every interleaving of the sessions' steps, in isolationtester's order
    /// (used when the spec lists no permutation).
    pub fn all_permutations(&self) -> Vec<Vec<Planned>> {
        fn recurse(spec: &Spec, piles: &mut Vec<usize>, cur: &mut Vec<Planned>, out: &mut Vec<Vec<Planned>>) {
            let mut found = false;
            for i in 0..spec.sessions.len() {
                if piles[i] < spec.sessions[i].steps.len() {
                    cur.push(Planned {
                        id: StepId {
                            session: i,
                            step: piles[i],
                        },
                        blockers: Vec::new(),
                    });
                    piles[i] += 1;
                    recurse(spec, piles, cur, out);
                    piles[i] -= 1;
                    cur.pop();
                    found = true;
                }
            }
            if !found {
                out.push(cur.clone());
            }
        }
        let mut out = Vec::new();
        recurse(self, &mut vec![0; self.sessions.len()], &mut Vec::new(), &mut out);
        out
    }

    /// Why a step runs, in `lang`: its own `# why` comment, else that of a
    /// step with the same SQL (B's read is A's read).
    pub fn why(&self, id: StepId, lang: Lang) -> Option<String> {
        let step = self.step(id);
        step.why(lang).or_else(|| {
            self.steps()
                .filter(|(_, s)| s.sql.trim() == step.sql.trim())
                .find_map(|(_, s)| s.why(lang))
        })
    }

    /// The spec with only the sessions `p` uses (a permutation that needs
    /// two of five sessions opens two connections).
    pub fn used_by(&self, p: &Permutation) -> Spec {
        let used: Vec<bool> = self
            .sessions
            .iter()
            .map(|s| s.steps.iter().any(|st| p.steps.iter().any(|ps| ps.name == st.name)))
            .collect();
        Spec {
            sessions: self
                .sessions
                .iter()
                .zip(&used)
                .filter(|(_, u)| **u)
                .map(|(s, _)| s.clone())
                .collect(),
            ..self.clone()
        }
    }

    /// The permutation labelled `# variant: label`.
    pub fn labelled(&self, label: &str) -> Option<&Permutation> {
        self.permutations.iter().find(|p| p.label().as_deref() == Some(label))
    }
}

/// The value of the first `key: value` comment among `notes`.
fn annotation(notes: &[String], key: &str) -> Option<String> {
    notes.iter().find_map(|n| {
        let (k, v) = n.trim().split_once(':')?;
        (k.trim() == key).then(|| v.trim().to_string())
    })
}

impl Permutation {
    /// `# variant: NAME` (lab's name for the permutation), if given.
    pub fn label(&self) -> Option<String> {
        annotation(&self.notes, "variant")
    }

    /// The permutation as isolationtester prints it ("a b(*) c").
    pub fn describe(&self) -> String {
        self.steps.iter().map(|s| s.name.as_str()).collect::<Vec<_>>().join(" ")
    }
}

impl Step {
    /// Why a session runs this step, in `lang`: `# why:` (English) or `# why-tr:`.
    pub fn why(&self, lang: Lang) -> Option<String> {
        match lang {
            Lang::En => annotation(&self.notes, "why"),
            Lang::Tr => annotation(&self.notes, "why-tr"),
        }
    }
}

/// A value bound to a two-way parameter.
#[derive(Debug, Clone, PartialEq)]
pub enum Param {
    /// A string, written as an SQL literal ('...').
    Str(String),
    /// A number, written as it is.
    Num(f64),
}

impl Param {
    /// A duration as a setting takes it: '1000ms'.
    pub fn millis(d: std::time::Duration) -> Param {
        Param::Str(format!("{}ms", d.as_millis()))
    }

    fn sql(&self) -> String {
        match self {
            Param::Str(s) => literal(s),
            Param::Num(n) if n.fract() == 0.0 && n.abs() < 1e15 => format!("{}", *n as i64),
            Param::Num(n) => format!("{n}"),
        }
    }
}

/// A two-way parameter found in SQL: where it is, its name and its default literal.
#[derive(Debug, Clone, PartialEq)]
pub struct TwoWay {
    pub name: String,
    pub default: String,
    range: std::ops::Range<usize>,
}

/// The `/*:name*/literal` parameters of `sql`, outside strings and comments.
pub fn two_way(sql: &str) -> Vec<TwoWay> {
    let b = sql.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\'' | b'"' => i = skip_quoted(b, i),
            b'-' if b.get(i + 1) == Some(&b'-') => i = skip_line_comment(b, i),
            b'$' => i = skip_dollar(b, i),
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let end = skip_block_comment(b, i);
                let inner = &sql[i + 2..end.saturating_sub(2).max(i + 2)];
                let name = inner
                    .strip_prefix(':')
                    .filter(|n| !n.is_empty() && n.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_'));
                if let Some(name) = name {
                    let lit_end = literal_end(b, end);
                    if lit_end > end {
                        out.push(TwoWay {
                            name: name.to_string(),
                            default: sql[end..lit_end].to_string(),
                            range: i..lit_end,
                        });
                        i = lit_end;
                        continue;
                    }
                }
                i = end;
            }
            _ => i += 1,
        }
    }
    out
}

/// The end of an SQL literal starting at `i`: a quoted string or a number.
fn literal_end(b: &[u8], i: usize) -> usize {
    match b.get(i) {
        Some(b'\'') => skip_quoted(b, i),
        Some(c) if c.is_ascii_digit() || *c == b'-' || *c == b'.' => {
            let mut e = i + 1;
            while e < b.len() && (b[e].is_ascii_digit() || b[e] == b'.') {
                e += 1;
            }
            if b[i] == b'-' && e == i + 1 { i } else { e }
        }
        _ => i,
    }
}

/// `sql` with each two-way parameter replaced by its bound value, or by its
/// default literal when it has none; the markers go either way.
pub fn bind(sql: &str, params: &[(&str, Param)]) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut at = 0;
    for p in two_way(sql) {
        out.push_str(&sql[at..p.range.start]);
        match params.iter().find(|(n, _)| *n == p.name) {
            Some((_, v)) => out.push_str(&v.sql()),
            None => out.push_str(&p.default),
        }
        at = p.range.end;
    }
    out.push_str(&sql[at..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(text: &str) -> Spec {
        parse(text).unwrap()
    }

    #[test]
    fn permutations_resolve_and_are_checked_like_isolationtester() {
        let s = spec(
            "session a\nstep a1 { SELECT 1; }\nstep a2 { SELECT 2; }\nsession b\nstep b1 { SELECT 3; }\nstep b9 { SELECT 9; }\n\
             permutation a1 b1(a2) a2(*)\n",
        );
        assert_eq!(s.check(), Ok(vec!["b9".to_string()]), "unused steps are reported");
        let plan = s.plan(&s.permutations[0]).unwrap();
        assert_eq!(plan[1].blockers, vec![Resolved::Step(StepId { session: 0, step: 1 })]);
        assert_eq!(plan[2].blockers, vec![Resolved::Once]);

        let own = spec("session a\nstep a1 { }\nstep a2 { }\npermutation a1(a2) a2\n");
        assert_eq!(own.check(), Err(Invalid::OwnSession("a1".into())));
        let undefined = spec("session a\nstep a1 { }\npermutation a1 zz\n");
        assert_eq!(undefined.check(), Err(Invalid::UndefinedStep("zz".into())));
        let blocker = spec("session a\nstep a1 { }\nsession b\nstep b1 { }\npermutation a1(b2) b1\n");
        assert!(matches!(blocker.check(), Err(Invalid::UndefinedBlocker { .. })));
        let dup = spec("session a\nstep x { }\nsession b\nstep x { }\n");
        assert_eq!(dup.check(), Err(Invalid::DuplicateStep("x".into())));
    }

    #[test]
    fn a_permutation_needs_only_the_sessions_it_uses() {
        let s = spec("session a\nstep a1 { }\nsession b\nstep b1 { }\nsession c\nstep c1 { }\npermutation a1 c1\n");
        let used = s.used_by(&s.permutations[0]);
        let names: Vec<&str> = used.sessions.iter().map(|x| x.name.as_str()).collect();
        assert_eq!(names, ["a", "c"]);
        assert_eq!(
            used.plan(&s.permutations[0]).unwrap()[1].id,
            StepId { session: 1, step: 0 }
        );
    }

    #[test]
    fn all_permutations_come_in_isolationtester_order() {
        let s = spec("session a\nstep a1 { }\nstep a2 { }\nsession b\nstep b1 { }\n");
        let names: Vec<String> = s
            .all_permutations()
            .iter()
            .map(|p| {
                p.iter()
                    .map(|st| s.step(st.id).name.clone())
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        assert_eq!(names, ["a1 a2 b1", "a1 b1 a2", "b1 a1 a2"]);
    }

    #[test]
    fn annotations_are_read_from_comments() {
        let s = spec(
            "session a\n# why: to read\n# why-tr: okumak için\nstep a1 { SELECT 1; }\n\
             # variant: read-committed\npermutation a1\n",
        );
        assert_eq!(s.permutations[0].label().as_deref(), Some("read-committed"));
        assert!(s.labelled("read-committed").is_some());
        let step = &s.sessions[0].steps[0];
        assert_eq!(step.why(Lang::En).as_deref(), Some("to read"));
        assert_eq!(step.why(Lang::Tr).as_deref(), Some("okumak için"));
    }

    #[test]
    fn two_way_parameters_bind_or_fall_back_to_their_default() {
        let sql = "SET lock_timeout = /*:timeout*/'1s'; SELECT pg_sleep(/*:sleep*/10), '/*:no*/1', $$ /*:no*/2 $$ -- /*:no*/3";
        let found: Vec<(String, String)> = two_way(sql).into_iter().map(|p| (p.name, p.default)).collect();
        assert_eq!(
            found,
            [("timeout".into(), "'1s'".into()), ("sleep".into(), "10".into())]
        );
        assert_eq!(
            bind(sql, &[]),
            "SET lock_timeout = '1s'; SELECT pg_sleep(10), '/*:no*/1', $$ /*:no*/2 $$ -- /*:no*/3"
        );
        assert_eq!(
            bind(
                sql,
                &[("timeout", Param::Str("200ms".into())), ("sleep", Param::Num(2.5))]
            ),
            "SET lock_timeout = '200ms'; SELECT pg_sleep(2.5), '/*:no*/1', $$ /*:no*/2 $$ -- /*:no*/3"
        );
        assert_eq!(
            bind("SELECT /*:q*/'it''s'", &[("q", Param::Str("a'b".into()))]),
            "SELECT 'a''b'"
        );
        assert_eq!(bind("SELECT /* plain */ 1, /*:x*/-3", &[]), "SELECT /* plain */ 1, -3");
        assert_eq!(bind("SELECT $1, /*:x*/4", &[("x", Param::Num(5.0))]), "SELECT $1, 5");
    }
}
