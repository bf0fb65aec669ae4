//! Pure functions from reports to text: tables (comfy-table), JSON, JUnit.
//! Words come from `i18n`; colour only where it helps (waits, errors,
//! verdicts), and only when asked for.
use comfy_table::presets::{UTF8_FULL, UTF8_FULL_CONDENSED};
use comfy_table::{Cell, CellAlignment, Color, ContentArrangement, Table};

use crate::i18n::{Lang, fill};
use crate::report::{AllReport, Entry, ScenarioReport, StepResult, VariantReport};
use crate::scenarios::ScenarioInfo;

/// Tables fit this many columns when stdout is not a terminal.
const PIPE_WIDTH: u16 = 160;

/// How to render: the language, whether to colour, whether to explain.
#[derive(Debug, Clone, Copy)]
pub struct Style {
    pub lang: Lang,
    pub color: bool,
    pub explain: bool,
}

impl Style {
    pub fn plain(lang: Lang) -> Style {
        Style {
            lang,
            color: false,
            explain: false,
        }
    }

    /// Colour when stdout is a terminal and NO_COLOR is not set.
    pub fn for_stdout(lang: Lang, explain: bool) -> Style {
        use std::io::IsTerminal;
        let color = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
        Style { lang, color, explain }
    }

    fn cell(&self, text: impl Into<String>, color: Color) -> Cell {
        let c = Cell::new(text.into());
        if self.color { c.fg(color) } else { c }
    }
}

pub fn table(header: Vec<&str>, style: &Style) -> Table {
    let mut t = Table::new();
    t.load_style(UTF8_FULL)
        .set_content_arrangement(ContentArrangement::Dynamic);
    // No terminal, or one that reports no size (a bare pty): a fixed width.
    if t.width().is_none_or(|w| w < 40) {
        t.set_width(PIPE_WIDTH);
    }
    if style.color {
        t.enforce_styling();
    } else {
        t.force_no_tty();
    }
    t.set_header(header);
    t
}

pub fn list(scenarios: &[ScenarioInfo], style: &Style) -> String {
    let texts = style.lang.texts();
    let ui = &texts.ui;
    let mut t = table(vec![ui.col_scenario, ui.col_summary, ui.col_variants], style);
    for s in scenarios {
        let variants = if style.explain {
            s.variants
                .iter()
                .map(|v| format!("{}: {}", v.name, texts.explain(s.name, v.name)))
                .collect::<Vec<_>>()
                .join("\n\n")
        } else {
            s.variant_names().join("\n")
        };
        t.add_row(vec![s.name.to_string(), texts.summary(s.name).to_string(), variants]);
    }
    format!("{t}\n")
}

fn verdict(v: &VariantReport, style: &Style) -> Cell {
    let ui = &style.lang.texts().ui;
    if v.skipped.is_some() {
        style.cell(ui.verdict_skipped, Color::DarkGrey)
    } else if v.as_expected {
        style.cell(ui.verdict_ok, Color::Green)
    } else {
        style.cell(ui.verdict_not, Color::Red)
    }
}

fn step_text(e: &Entry) -> String {
    let mark = match e.result {
        StepResult::Ok => "→",
        StepResult::Waiting => "⏳",
        StepResult::Completed => "✔",
        StepResult::Error => "✖",
        StepResult::Note => "•",
    };
    if e.sql.is_empty() {
        format!("{mark} {}", e.detail)
    } else {
        format!("{}\n{mark} {}", e.sql, e.detail)
    }
}

/// One column per session, one row per step, in the order the steps happened.
pub fn timeline(entries: &[Entry], style: &Style) -> String {
    let mut sessions: Vec<&str> = Vec::new();
    for e in entries {
        if !sessions.contains(&e.session.as_str()) {
            sessions.push(&e.session);
        }
    }
    let ui = &style.lang.texts().ui;
    let mut header = vec![ui.col_t_ms];
    header.extend(sessions.iter().copied());
    let mut t = table(header, style);
    // Every row is one session's step, so rules between rows add only height.
    t.load_style(UTF8_FULL_CONDENSED);
    for e in entries {
        let mut row = vec![Cell::new(format!("{:.1}", e.t_ms)).set_alignment(CellAlignment::Right)];
        for s in &sessions {
            if *s != e.session {
                row.push(Cell::new(""));
                continue;
            }
            let color = match e.result {
                StepResult::Waiting => Color::Yellow,
                StepResult::Error => Color::Red,
                StepResult::Completed => Color::Cyan,
                StepResult::Note => Color::DarkGrey,
                StepResult::Ok => Color::Reset,
            };
            row.push(if color == Color::Reset {
                Cell::new(step_text(e))
            } else {
                style.cell(step_text(e), color)
            });
        }
        t.add_row(row);
    }
    t.to_string()
}

pub fn variant(scenario: &str, v: &VariantReport, style: &Style) -> String {
    let texts = style.lang.texts();
    let ui = &texts.ui;
    let mut out = format!("── {scenario} / {} ──\n", v.name);
    if let Some(reason) = &v.skipped {
        out.push_str(&format!("{}: {reason}\n", ui.skipped));
    }
    if !v.timeline.is_empty() {
        out.push_str(&timeline(&v.timeline, style));
        out.push('\n');
    }
    for ev in &v.evidence {
        let mut t = table(ev.columns.iter().map(String::as_str).collect(), style);
        for r in &ev.rows {
            t.add_row(r.clone());
        }
        out.push_str(&format!("{}:\n{t}\n", ev.title));
    }
    for n in &v.notes {
        out.push_str(&format!("{}: {n}\n", ui.note));
    }
    if !v.metrics.is_empty() {
        let m: Vec<String> = v.metrics.iter().map(|(k, val)| format!("{k}={val}")).collect();
        out.push_str(&format!("{}: {}\n", ui.metrics, m.join(", ")));
    }
    if style.explain {
        out.push_str(&format!("{}: {}\n", ui.why, texts.explain(scenario, &v.name)));
    }
    out
}

fn outcome_table(rows: &[(&str, &VariantReport)], with_scenario: bool, style: &Style) -> String {
    let ui = &style.lang.texts().ui;
    let mut header = vec![];
    if with_scenario {
        header.push(ui.col_scenario);
    }
    header.extend([
        ui.col_variant,
        ui.col_expected,
        ui.col_observed,
        ui.col_anomaly,
        ui.col_verdict,
    ]);
    let mut t = table(header, style);
    for (scenario, v) in rows {
        let mut row = vec![];
        if with_scenario {
            row.push(Cell::new(scenario));
        }
        row.extend([
            Cell::new(&v.name),
            Cell::new(&v.expected),
            Cell::new(&v.observed),
            if v.anomaly {
                style.cell(ui.yes, Color::Yellow)
            } else {
                Cell::new(ui.no)
            },
            verdict(v, style),
        ]);
        t.add_row(row);
    }
    format!("{t}\n")
}

pub fn scenario(r: &ScenarioReport, style: &Style) -> String {
    let ui = &style.lang.texts().ui;
    let mut out = String::new();
    for v in &r.variants {
        out.push_str(&variant(&r.scenario, v, style));
        out.push('\n');
    }
    let rows: Vec<_> = r.variants.iter().map(|v| (r.scenario.as_str(), v)).collect();
    let footer = fill(
        ui.scenario_footer,
        &[
            ("scenario", &r.scenario),
            ("version", &r.server_version),
            ("ms", &format!("{:.0}", r.elapsed_ms)),
        ],
    );
    out.push_str(&format!("{footer}\n"));
    out.push_str(&outcome_table(&rows, false, style));
    out
}

pub fn all_summary(r: &AllReport, style: &Style) -> String {
    let ui = &style.lang.texts().ui;
    let rows: Vec<_> = r
        .scenarios
        .iter()
        .flat_map(|s| s.variants.iter().map(move |v| (s.scenario.as_str(), v)))
        .collect();
    let line = fill(
        ui.all_summary,
        &[
            ("version", &r.server_version),
            ("variants", &rows.len()),
            ("ok", &rows.iter().filter(|(_, v)| v.as_expected).count()),
            ("ms", &format!("{:.0}", r.elapsed_ms)),
        ],
    );
    format!("{line}\n{}", outcome_table(&rows, true, style))
}

pub fn json<T: serde::Serialize>(value: &T) -> anyhow::Result<String> {
    let mut s = serde_json::to_string_pretty(value)?;
    s.push('\n');
    Ok(s)
}

fn xml_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // XML 1.0 has no way to carry other control characters.
            c if (c as u32) < 0x20 && !matches!(c, '\n' | '\r' | '\t') => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// JUnit XML: one <testsuite> per scenario, one <testcase> per variant; a
/// variant not as documented is a <failure> carrying expected vs observed, a
/// skipped one is <skipped>.
pub fn junit(scenarios: &[ScenarioReport]) -> String {
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let total: usize = scenarios.iter().map(|s| s.variants.len()).sum();
    let failures: usize = scenarios
        .iter()
        .flat_map(|s| &s.variants)
        .filter(|v| !v.as_expected && v.skipped.is_none())
        .count();
    let skipped: usize = scenarios
        .iter()
        .flat_map(|s| &s.variants)
        .filter(|v| v.skipped.is_some())
        .count();
    let time: f64 = scenarios.iter().map(|s| s.elapsed_ms).sum::<f64>() / 1000.0;
    out.push_str(&format!(
        "<testsuites name=\"lab\" tests=\"{total}\" failures=\"{failures}\" errors=\"0\" skipped=\"{skipped}\" time=\"{time:.3}\">\n"
    ));
    for s in scenarios {
        let f = s
            .variants
            .iter()
            .filter(|v| !v.as_expected && v.skipped.is_none())
            .count();
        let sk = s.variants.iter().filter(|v| v.skipped.is_some()).count();
        out.push_str(&format!(
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{f}\" errors=\"0\" skipped=\"{sk}\" time=\"{:.3}\">\n",
            xml_escape(&s.scenario),
            s.variants.len(),
            s.elapsed_ms / 1000.0
        ));
        out.push_str(&format!(
            "    <properties><property name=\"server_version\" value=\"{}\"/></properties>\n",
            xml_escape(&s.server_version)
        ));
        for v in &s.variants {
            out.push_str(&format!(
                "    <testcase classname=\"lab.{}\" name=\"{}\" time=\"{:.3}\"",
                xml_escape(&s.scenario),
                xml_escape(&v.name),
                v.elapsed_ms / 1000.0
            ));
            if let Some(reason) = &v.skipped {
                out.push_str(&format!(
                    ">\n      <skipped message=\"{}\"/>\n    </testcase>\n",
                    xml_escape(reason)
                ));
            } else if !v.as_expected {
                out.push_str(&format!(
                    ">\n      <failure message=\"not as documented\" type=\"verdict\">expected: {}\nobserved: {}</failure>\n    </testcase>\n",
                    xml_escape(&v.expected),
                    xml_escape(&v.observed)
                ));
            } else {
                out.push_str("/>\n");
            }
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::VariantReport;

    fn variant(name: &str, ok: bool, skipped: Option<&str>) -> VariantReport {
        VariantReport {
            name: name.into(),
            as_expected: ok,
            anomaly: false,
            expected: "final 34 & <nothing> lost".into(),
            observed: "final \"35\"".into(),
            elapsed_ms: 12.5,
            sqlstates: vec![],
            metrics: Default::default(),
            timeline: vec![],
            skipped: skipped.map(str::to_string),
            notes: vec![],
            evidence: vec![],
        }
    }

    #[test]
    fn junit_counts_failures_and_skips_and_escapes() {
        let r = ScenarioReport {
            scenario: "lost-update".into(),
            server_version: "15.18".into(),
            as_expected: false,
            elapsed_ms: 100.0,
            variants: vec![
                variant("a", true, None),
                variant("b", false, None),
                variant("c", true, Some("needs 17")),
            ],
        };
        let xml = junit(&[r]);
        assert!(xml.contains("<testsuites name=\"lab\" tests=\"3\" failures=\"1\" errors=\"0\" skipped=\"1\""));
        assert!(xml.contains("<testcase classname=\"lab.lost-update\" name=\"a\" time=\"0.013\"/>"));
        assert!(
            xml.contains("expected: final 34 &amp; &lt;nothing&gt; lost\nobserved: final &quot;35&quot;</failure>")
        );
        assert!(xml.contains("<skipped message=\"needs 17\"/>"));
        assert_eq!(xml_escape("a\u{1}b"), "a b");
    }
}
