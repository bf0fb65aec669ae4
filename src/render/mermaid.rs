//! Mermaid: one `sequenceDiagram` per variant, to paste into a GitHub issue
//! or pull request (GitHub renders fenced `mermaid` blocks). The sessions are
//! participants next to PostgreSQL; each statement is a message to it, its
//! answer a message back; waits, narration and verdicts are notes.
use super::Style;
use super::text::{observed, outcome_line};
use crate::i18n::ui;
use crate::report::{Entry, ScenarioReport, StepResult, VariantReport};

/// Mermaid's message text: one line, and none of the characters its parser
/// takes for syntax (`;` ends a statement, `#` starts an entity code).
fn escape(s: &str) -> String {
    let one_line = s.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out = String::with_capacity(one_line.len());
    for c in one_line.chars() {
        match c {
            '#' => out.push_str("#35;"),
            ';' => out.push_str("#59;"),
            '<' => out.push_str("#lt;"),
            '>' => out.push_str("#gt;"),
            c => out.push(c),
        }
    }
    out
}

/// A participant's id: Mermaid ids are words; the session's name is its label.
fn id(session: &str) -> String {
    let word: String = session
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    format!("s_{word}")
}

/// One timeline as a `sequenceDiagram` (without the code fence).
pub fn diagram(entries: &[Entry], style: &Style) -> String {
    let mut out = String::from("sequenceDiagram\n");
    let mut seen: Vec<&str> = Vec::new();
    for e in entries {
        if !seen.contains(&e.session.as_str()) {
            seen.push(&e.session);
        }
    }
    for s in &seen {
        out.push_str(&format!("    participant {} as {}\n", id(s), escape(s)));
    }
    out.push_str("    participant PG as PostgreSQL\n");
    for e in entries {
        let who = id(&e.session);
        let line = escape(&outcome_line(e, style));
        // One statement per message: its closing semicolon says nothing.
        let sql = escape(e.sql.trim_end().trim_end_matches(';'));
        match e.result {
            StepResult::Note => out.push_str(&format!("    Note over {who}: {line}\n")),
            StepResult::Notice => out.push_str(&format!("    PG-->>{who}: {line}\n")),
            StepResult::Waiting => {
                out.push_str(&format!("    {who}->>PG: {sql}\n"));
                out.push_str(&format!("    Note over {who}: {line}\n"));
            }
            // The statement was sent when it began to wait; only the answer is new.
            StepResult::Completed => out.push_str(&format!("    PG-->>{who}: {line}\n")),
            StepResult::Error if e.waited_ms.is_some() => out.push_str(&format!("    PG--x{who}: {line}\n")),
            StepResult::Error => {
                if !sql.is_empty() {
                    out.push_str(&format!("    {who}->>PG: {sql}\n"));
                }
                out.push_str(&format!("    PG--x{who}: {line}\n"));
            }
            StepResult::Ok => {
                if !sql.is_empty() {
                    out.push_str(&format!("    {who}->>PG: {sql}\n"));
                }
                out.push_str(&format!("    PG-->>{who}: {line}\n"));
            }
        }
    }
    out
}

fn verdict_word(v: &VariantReport, style: &Style) -> String {
    if v.skipped.is_some() {
        style.say(&ui::verdict_skipped())
    } else if v.pooler_differs.is_some() {
        style.say(&ui::verdict_pooler())
    } else if v.as_expected {
        style.say(&ui::verdict_ok())
    } else {
        style.say(&ui::verdict_not())
    }
}

/// A variant: a heading, its diagram in a `mermaid` fence, then expected,
/// observed and the verdict.
pub fn variant(scenario: &str, v: &VariantReport, style: &Style) -> String {
    let mut out = format!(
        "#### {scenario} / {}: {}\n\n",
        v.shown_name(style.lang),
        verdict_word(v, style)
    );
    if !v.timeline.is_empty() {
        out.push_str(&format!("```mermaid\n{}```\n\n", diagram(&v.timeline, style)));
    }
    out.push_str(&format!(
        "- {}: {}\n- {}: {}\n\n",
        style.say(&ui::col_expected()),
        style.say(&v.expected),
        style.say(&ui::col_observed()),
        observed(v, style).replace('\n', " ")
    ));
    out
}

/// Every variant of every scenario, in order.
pub fn report(scenarios: &[ScenarioReport], style: &Style) -> String {
    scenarios
        .iter()
        .flat_map(|s| s.variants.iter().map(move |v| variant(&s.scenario, v, style)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::i18n::Lang;
    use crate::report::Phrase;

    fn entry(t_ms: f64, session: &str, sql: &str, result: StepResult, detail: &str) -> Entry {
        let mut e = Entry::new(t_ms, session, result, Phrase::Plain(detail.into()));
        e.sql = sql.into();
        e
    }

    /// A hand-made timeline: B waits for A's row lock, A commits, B goes on.
    fn waits() -> Vec<Entry> {
        let mut wait = entry(
            2.0,
            "B",
            "UPDATE t SET n = n + 1 WHERE id = 1;",
            StepResult::Waiting,
            "",
        );
        wait.blocked_by = Some(vec!["A".into()]);
        wait.lock = Some("ShareLock on transaction".into());
        let mut done = entry(
            3.5,
            "B",
            "UPDATE t SET n = n + 1 WHERE id = 1;",
            StepResult::Completed,
            "UPDATE 1",
        );
        done.waited_ms = Some(1.5);
        vec![
            entry(1.0, "A", "UPDATE t SET n = 1 WHERE id = 1;", StepResult::Ok, "UPDATE 1"),
            wait,
            entry(3.0, "A", "COMMIT;", StepResult::Ok, "COMMIT"),
            done,
            entry(4.0, "lab", "", StepResult::Note, "B # waited; A's commit released it"),
        ]
    }

    #[test]
    fn a_wait_is_a_note_and_its_end_an_answer() {
        let got = diagram(&waits(), &Style::plain(Lang::En));
        assert_eq!(
            got,
            "sequenceDiagram\n\
             \x20   participant s_A as A\n\
             \x20   participant s_B as B\n\
             \x20   participant s_lab as lab\n\
             \x20   participant PG as PostgreSQL\n\
             \x20   s_A->>PG: UPDATE t SET n = 1 WHERE id = 1\n\
             \x20   PG-->>s_A: → UPDATE 1\n\
             \x20   s_B->>PG: UPDATE t SET n = n + 1 WHERE id = 1\n\
             \x20   Note over s_B: ⏳ waiting for A (ShareLock on transaction)\n\
             \x20   s_A->>PG: COMMIT\n\
             \x20   PG-->>s_A: → COMMIT\n\
             \x20   PG-->>s_B: ✔ after waiting 1.5 ms: UPDATE 1\n\
             \x20   Note over s_lab: • B #35; waited#59; A's commit released it\n"
        );
    }

    #[test]
    fn turkish_diagrams_speak_turkish() {
        let got = diagram(&waits(), &Style::plain(Lang::Tr));
        assert!(got.contains("Note over s_B: ⏳ "), "{got}");
        assert_ne!(got, diagram(&waits(), &Style::plain(Lang::En)));
    }
}
