//! What a shell session ran, written as an isolationtester spec: the setup
//! (the lab schema, `\setup` lines, a loaded spec's), one session per
//! session used, one step per statement, and one permutation in the order
//! they ran, with a blocker marker where the server confirmed a wait and
//! another step's completion let it go.
use std::fmt::Write;

use super::msg;
use crate::i18n::Text;
use crate::specfile::name as quoted;

/// One statement as it ran.
#[derive(Debug, Clone, PartialEq)]
pub struct Ran {
    pub session: String,
    pub step: String,
    pub sql: String,
    /// The step after which it completed, when the server confirmed it
    /// waited and it succeeded (an error ends a step by itself).
    pub released_by: Option<String>,
    /// lab cancelled it (Ctrl-C) and the server said 57014: a spec has no
    /// step that cancels another, so no spec replays it.
    pub cancelled: bool,
}

/// Everything `\save` writes.
#[derive(Debug, Default)]
pub struct Recording {
    /// Sessions in the shell's order.
    pub sessions: Vec<String>,
    /// The lab schema is the setup (`# uses: bookstore`).
    pub bookstore: bool,
    /// The setup blocks: a loaded spec's, then `\setup` lines.
    pub setup: Vec<String>,
    pub teardown: Option<String>,
    /// A loaded spec's per-session setup and teardown blocks, by session.
    pub session_blocks: Vec<(String, Option<String>, Option<String>)>,
    pub ran: Vec<Ran>,
    /// Sessions that outlived a deadlock the server broke by failing
    /// another: their deadlock_timeout is made long in the saved spec, so
    /// on replay the deadlock detector runs in the same victim first (it
    /// fails the backend whose timer finds the cycle).
    pub survivors: Vec<String>,
    /// A step sent while another session's was still running, waiting for
    /// no lock: (that one, this one), as places in `ran`. A spec cannot say
    /// so: isolationtester runs a step that waits for no lock to its end
    /// before the next.
    pub overlaps: Vec<(usize, usize)>,
    /// Settings the shell's sessions ran with (lab's neutral ones) that a
    /// new connection to this database would not get (its role's or the
    /// database's defaults differ): each saved session sets them first.
    pub settings: Vec<(String, String)>,
}

impl Ran {
    /// The statement as a message names it: shortened, with its step
    /// (`UPDATE stock_items SET quantity_on_hand = … (b18)`).
    pub fn shown(&self) -> String {
        statement(&self.sql, &self.step)
    }
}

/// How many characters of a statement a message quotes, about.
const SHOWN: usize = 50;

/// A statement as a message names it: on one line, at most about 50
/// characters (cut after a word, with `…`), then its step name, which a
/// saved spec uses.
pub fn statement(sql: &str, step: &str) -> String {
    format!("{} ({step})", short(sql))
}

/// `sql` on one line (its leading comments left out), cut after a word
/// with ` …` when it is longer than about [`SHOWN`] characters.
pub fn short(sql: &str) -> String {
    let line = crate::sql_lexer::one_line(crate::sql_lexer::strip_comments(sql));
    let line = line.trim_end_matches(';').trim_end();
    if line.chars().count() <= SHOWN {
        return line.to_string();
    }
    let mut out = String::new();
    for word in line.split(' ') {
        if out.chars().count() + 1 + word.chars().count() > SHOWN - 2 {
            break;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    if out.is_empty() {
        // One long word: cut inside it.
        let cut: String = line.chars().take(SHOWN - 1).collect();
        return format!("{cut}…");
    }
    format!("{out} …")
}

/// `path` as a POSIX shell reads it back: as it is when it holds only
/// characters no shell gives a meaning to, else in single quotes (a `'`
/// inside written as `'\''`).
pub fn shell_quoted(path: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_./+-:@%,=".contains(c);
    if !path.is_empty() && path.chars().all(plain) {
        path.to_string()
    } else {
        format!("'{}'", path.replace('\'', "'\\''"))
    }
}

impl Recording {
    /// Why what ran cannot be written as a spec that replays it, if it cannot.
    pub fn unsaveable(&self) -> Option<Text> {
        if let Some(r) = self.ran.iter().find(|r| r.cancelled) {
            return Some(msg::save_cancelled(&r.session, r.shown()));
        }
        // A spec's SQL block ends at its first `}`, in isolationtester's
        // scanner and in lab's: there is no way to write one inside it.
        if let Some(r) = self.ran.iter().find(|r| r.sql.contains('}')) {
            return Some(msg::save_brace(&r.session, r.shown()));
        }
        if let Some(s) = self.setup.iter().find(|s| s.contains('}')) {
            return Some(msg::save_brace_setup(short(s)));
        }
        // A spec's session has at least one step (isolationtester's grammar):
        // one left out takes its setup block, which ran here, with it.
        if let Some((s, _, _)) = self.session_blocks.iter().find(|(s, setup, _)| {
            setup
                .as_deref()
                .is_some_and(|sql| !crate::sql_lexer::strip_comments(sql).trim().is_empty())
                && !self.ran.iter().any(|r| &r.session == s)
        }) {
            return Some(msg::save_idle_setup(s));
        }
        None
    }

    /// A fresh name for `session`'s next typed statement (`a1`, `a2` ...),
    /// one no step has yet.
    pub fn step_name(&self, session: &str, taken: &[String]) -> String {
        let base = session.to_lowercase();
        (1..)
            .map(|n| format!("{base}{n}"))
            .find(|n| !self.ran.iter().any(|r| &r.step == n) && !taken.contains(n))
            .expect("a free name")
    }

    /// The spec: `about` goes first, as its header comment.
    pub fn spec(&self, about: &[String]) -> String {
        let mut t = String::new();
        for line in about {
            let _ = writeln!(t, "# {line}");
        }
        if self.bookstore {
            t.push_str("#\n# uses: bookstore\n");
        }
        for s in &self.setup {
            let _ = write!(t, "\nsetup\n{{\n  {};\n}}\n", s.trim().trim_end_matches(';'));
        }
        if let Some(td) = &self.teardown {
            let _ = write!(t, "\nteardown\n{{\n  {}\n}}\n", td.trim());
        }
        for name in &self.sessions {
            let mut seen: Vec<&str> = Vec::new();
            let steps: Vec<&Ran> = self
                .ran
                .iter()
                .filter(|r| &r.session == name)
                .filter(|r| {
                    let first = !seen.contains(&r.step.as_str());
                    seen.push(&r.step);
                    first
                })
                .collect();
            if steps.is_empty() {
                continue;
            }
            let _ = write!(t, "\nsession {}\n", quoted(name));
            let blocks = self.session_blocks.iter().find(|(s, _, _)| s == name);
            let mut setup: Vec<String> = self
                .settings
                .iter()
                .map(|(k, v)| format!("SET {k} = {};", crate::sql_lexer::literal(v)))
                .collect();
            setup.extend(blocks.and_then(|(_, s, _)| s.as_ref()).map(|s| s.trim().to_string()));
            if self.survivors.contains(name) {
                // On a line of its own, after a `;` of its own: the loaded
                // spec's block may end in a `--` comment or without a `;`.
                if setup.last().is_some_and(|s| !s.ends_with(';')) {
                    setup.push(";".into());
                }
                setup.push("SET deadlock_timeout = '10s';".into());
            }
            if !setup.is_empty() {
                let _ = writeln!(t, "setup {{ {} }}", setup.join("\n  "));
            }
            for r in steps {
                let _ = writeln!(
                    t,
                    "step {} {{ {}; }}",
                    quoted(&r.step),
                    r.sql.trim().trim_end_matches(';')
                );
            }
            if let Some((_, _, Some(td))) = blocks {
                let _ = writeln!(t, "teardown {{ {} }}", td.trim());
            }
        }
        let order: Vec<String> = self
            .ran
            .iter()
            .map(|r| match &r.released_by {
                Some(b) => format!("{}({})", quoted(&r.step), quoted(b)),
                None => quoted(&r.step),
            })
            .collect();
        let _ = writeln!(t, "\npermutation {}", order.join(" "));
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ran(session: &str, step: &str, sql: &str, released_by: Option<&str>) -> Ran {
        Ran {
            session: session.into(),
            step: step.into(),
            sql: sql.into(),
            released_by: released_by.map(str::to_string),
            cancelled: false,
        }
    }

    #[test]
    fn a_recording_becomes_a_spec_that_parses_with_its_order_and_markers() {
        let rec = Recording {
            sessions: vec!["A".into(), "B".into(), "C".into()],
            bookstore: true,
            setup: vec!["UPDATE stock_items SET qty = 5 WHERE sku = 'BK-1';".into()],
            ran: vec![
                ran("A", "a1", "BEGIN", None),
                ran(
                    "A",
                    "a2",
                    "UPDATE stock_items SET qty = qty - 1 WHERE sku = 'BK-1'",
                    None,
                ),
                ran(
                    "B",
                    "b1",
                    "UPDATE stock_items\n SET qty = qty - 1 WHERE sku = 'BK-1'",
                    Some("a3"),
                ),
                ran("A", "a3", "COMMIT", None),
            ],
            ..Recording::default()
        };
        let text = rec.spec(&["Recorded by lab shell.".into()]);
        assert!(
            text.starts_with("# Recorded by lab shell.\n#\n# uses: bookstore\n"),
            "{text}"
        );
        let spec = crate::specfile::parse(&text).expect("the saved spec parses");
        let setup: Vec<&str> = spec.setup.iter().map(|s| s.trim()).collect();
        assert_eq!(setup, ["UPDATE stock_items SET qty = 5 WHERE sku = 'BK-1';"]);
        // C ran nothing: no session of its own (isolationtester refuses a session without steps).
        let names: Vec<&str> = spec.sessions.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["A", "B"]);
        assert_eq!(
            spec.sessions[1].steps[0].sql,
            "UPDATE stock_items\n SET qty = qty - 1 WHERE sku = 'BK-1';"
        );
        let p = &spec.permutations[0];
        let order: Vec<&str> = p.steps.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(order, ["a1", "a2", "b1", "a3"]);
        assert_eq!(p.steps[2].blockers, vec![crate::specfile::Blocker::Step("a3".into())]);
        assert!(spec.check().unwrap().is_empty(), "every step is used");
    }

    #[test]
    fn a_step_run_twice_is_written_once_and_named_steps_are_not_reused() {
        let rec = Recording {
            sessions: vec!["A".into()],
            ran: vec![ran("A", "a1", "SELECT 1", None), ran("A", "a1", "SELECT 1", None)],
            survivors: vec!["A".into()],
            ..Recording::default()
        };
        let spec = crate::specfile::parse(&rec.spec(&[])).unwrap();
        assert_eq!(
            spec.sessions[0].setup.as_deref().map(str::trim),
            Some("SET deadlock_timeout = '10s';")
        );
        assert_eq!(spec.sessions[0].steps.len(), 1);
        assert_eq!(spec.permutations[0].steps.len(), 2);
        assert_eq!(rec.step_name("A", &["a2".into()]), "a3");
    }

    #[test]
    fn names_the_grammar_cannot_read_are_quoted_and_a_survivors_set_survives_a_comment() {
        let rec = Recording {
            sessions: vec!["1".into(), "step".into()],
            session_blocks: vec![("1".into(), Some("SET x = 1 -- the loaded spec's".into()), None)],
            ran: vec![
                ran("1", "11", "SELECT 1", None),
                ran("step", "step1", "SELECT 2", Some("11")),
            ],
            survivors: vec!["1".into()],
            ..Recording::default()
        };
        let text = rec.spec(&[]);
        let spec = crate::specfile::parse(&text).unwrap_or_else(|e| panic!("{text}\n{e}"));
        let names: Vec<&str> = spec.sessions.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["1", "step"], "{text}");
        let order: Vec<&str> = spec.permutations[0].steps.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(order, ["11", "step1"]);
        // The SET is a statement of its own, not part of the comment.
        let setup = spec.sessions[0].setup.as_deref().unwrap();
        let set_line = setup.lines().find(|l| l.contains("deadlock_timeout")).unwrap();
        assert!(!set_line.contains("--"), "{setup}");
        assert!(setup.contains("-- the loaded spec's\n  ;\n"), "{setup}");
    }

    #[test]
    fn what_no_spec_can_replay_is_not_saved() {
        let mut rec = Recording {
            sessions: vec!["A".into()],
            ran: vec![ran("A", "a1", "SELECT '{1,2}'::int[]", None)],
            ..Recording::default()
        };
        let why = rec.unsaveable().expect("a '}' in a step").en();
        assert!(why.contains("A's SELECT '{1,2}'::int[] (a1) has a '}'"), "{why}");
        assert!(
            why.contains("this shell's statements can no longer be saved as a spec")
                && why.contains("start a new `lab shell`"),
            "{why}"
        );
        rec.ran[0].sql = "SELECT 1".into();
        assert!(rec.unsaveable().is_none());
        rec.setup.push("INSERT INTO t VALUES ('}')".into());
        let why = rec.unsaveable().expect("a '}' in a setup statement").en();
        assert!(why.contains("INSERT INTO t VALUES ('}') has a '}'"), "{why}");
        rec.setup.clear();
        rec.session_blocks = vec![
            ("A".into(), Some("SET x = 1".into()), None),
            ("B".into(), Some("-- nothing".into()), None),
            ("C".into(), Some("BEGIN; LOCK t;".into()), None),
        ];
        let why = rec.unsaveable().expect("C's setup ran, C ran nothing").en();
        assert!(why.contains("C's setup block ran"), "{why}");
        rec.session_blocks.pop();
        assert!(rec.unsaveable().is_none(), "B's block is a comment alone");
        rec.ran[0].cancelled = true;
        let why = rec.unsaveable().expect("a cancelled step").en();
        assert!(why.contains("A's SELECT 1 (a1) was cancelled"), "{why}");
        assert!(why.contains("can no longer be saved as a spec"), "{why}");
    }

    #[test]
    fn a_statement_is_named_on_one_short_line_with_its_step() {
        let update = "UPDATE stock_items\n   SET quantity_on_hand = quantity_on_hand - 1 WHERE book_id = 1;";
        assert_eq!(
            statement(update, "b18"),
            "UPDATE stock_items SET quantity_on_hand = … (b18)"
        );
        assert_eq!(statement("-- why\nSELECT 1;", "a1"), "SELECT 1 (a1)");
        let fifty = "SELECT 'abcdefghijklmnopqrstuvwxyzabcdefghijklmno'";
        assert_eq!(fifty.chars().count(), 50);
        assert_eq!(short(fifty), fifty);
        let word = format!("SELECT{}", "x".repeat(60));
        let cut = short(&word);
        assert!(cut.ends_with('…') && cut.chars().count() == SHOWN, "{cut}");
        // Wide characters count once each.
        let turkish = format!("SELECT '{}'", "ç".repeat(40));
        assert_eq!(short(&turkish), turkish);
    }

    #[test]
    fn paths_are_quoted_for_a_posix_shell_only_where_needed() {
        assert_eq!(shell_quoted("/tmp/lost-update_rr.spec"), "/tmp/lost-update_rr.spec");
        assert_eq!(shell_quoted("a+b:c@d%e,f=g"), "a+b:c@d%e,f=g");
        assert_eq!(shell_quoted("/tmp/my demo.spec"), "'/tmp/my demo.spec'");
        assert_eq!(shell_quoted("/tmp/it's.spec"), "'/tmp/it'\\''s.spec'");
        assert_eq!(shell_quoted("/tmp/$HOME.spec"), "'/tmp/$HOME.spec'");
        assert_eq!(shell_quoted("/tmp/ç.spec"), "'/tmp/ç.spec'");
        assert_eq!(shell_quoted(""), "''");
    }
}
