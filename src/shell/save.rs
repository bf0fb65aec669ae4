//! What a shell session ran, written as an isolationtester spec: the setup
//! (the lab schema, `\setup` lines, a loaded spec's), one session per
//! session used, one step per statement, and one permutation in the order
//! they ran, with a blocker marker where the server confirmed a wait and
//! another step's completion let it go.
use std::fmt::Write;

/// One statement as it ran.
#[derive(Debug, Clone, PartialEq)]
pub struct Ran {
    pub session: String,
    pub step: String,
    pub sql: String,
    /// The step after which it completed, when the server confirmed it waited.
    pub released_by: Option<String>,
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
}

impl Recording {
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
            let _ = write!(t, "\nsession {name}\n");
            let blocks = self.session_blocks.iter().find(|(s, _, _)| s == name);
            let mut setup: Vec<String> = blocks
                .and_then(|(_, s, _)| s.as_ref())
                .map(|s| s.trim().to_string())
                .into_iter()
                .collect();
            if self.survivors.contains(name) {
                setup.push("SET deadlock_timeout = '10s';".into());
            }
            if !setup.is_empty() {
                let _ = writeln!(t, "setup {{ {} }}", setup.join(" "));
            }
            for r in steps {
                let _ = writeln!(t, "step {} {{ {}; }}", r.step, r.sql.trim().trim_end_matches(';'));
            }
            if let Some((_, _, Some(td))) = blocks {
                let _ = writeln!(t, "teardown {{ {} }}", td.trim());
            }
        }
        let order: Vec<String> = self
            .ran
            .iter()
            .map(|r| match &r.released_by {
                Some(b) => format!("{}({b})", r.step),
                None => r.step.clone(),
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
        let spec = crate::spec::parse(&text).expect("the saved spec parses");
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
        assert_eq!(p.steps[2].blockers, vec![crate::spec::Blocker::Step("a3".into())]);
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
        let spec = crate::spec::parse(&rec.spec(&[])).unwrap();
        assert_eq!(
            spec.sessions[0].setup.as_deref().map(str::trim),
            Some("SET deadlock_timeout = '10s';")
        );
        assert_eq!(spec.sessions[0].steps.len(), 1);
        assert_eq!(spec.permutations[0].steps.len(), 2);
        assert_eq!(rec.step_name("A", &["a2".into()]), "a3");
    }
}
