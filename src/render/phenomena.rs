//! `lab phenomena`'s report put into words: the matrix (with `--show`'s
//! timelines before it and `--explain`'s paragraphs after it), JSON,
//! Mermaid, and a test suite per phenomenon (a case per cell) for JUnit and
//! the HTML report.
use anyhow::Result;

use super::Style;
use crate::i18n::{Text, ui};
use crate::report::phenomena::{Cell, How, Interleavings, LEVELS, MatrixReport, Verdict};
use crate::report::{Check, ScenarioReport, VariantReport, round_ms};

/// The JSON document (what made it first: [`super::document`]), then every object's keys in order, as the matrix's JSON has always
/// had them (it is compared by `lab compare` and CI files alike).
pub fn json(r: &MatrixReport) -> Result<String> {
    super::document("phenomena", &serde_json::to_value(r)?)
}

/// The table, with `--show`'s timelines first and `--explain`'s lines after.
pub fn text(r: &MatrixReport, style: &Style, show: bool, explain: bool) -> String {
    let mut text = String::new();
    if show {
        for p in &r.phenomena {
            for (l, c) in p.measured() {
                text.push_str(&format!("── {} / {} ──\n", p.id, LEVELS[l].0));
                text.push_str(&super::timeline(&c.timeline, style));
                text.push_str(&format!("\n{}\n\n", style.say(&describe(c))));
            }
        }
    }
    text.push_str(&matrix(r, style));
    if explain {
        for p in &r.phenomena {
            let lang = style.lang;
            let lead = format!("{} ({}): ", p.title.render(lang), p.id);
            text.push_str(&crate::output::paragraph(&lead, &p.what.render(lang)));
            text.push('\n');
        }
    }
    text
}

/// Every cell's timeline as a diagram, under its verdict.
pub fn mermaid(r: &MatrixReport, style: &Style) -> String {
    let mut text = String::new();
    for p in &r.phenomena {
        for (l, c) in p.measured() {
            text.push_str(&format!(
                "#### {} / {}: {}\n\n```mermaid\n{}```\n\n",
                p.id,
                LEVELS[l].0,
                style.say(&describe(c)),
                super::mermaid::diagram(&c.timeline, style)
            ));
        }
    }
    text
}

/// A test suite per phenomenon, a test case per measured cell.
pub fn suites(r: &MatrixReport) -> Vec<ScenarioReport> {
    r.phenomena
        .iter()
        .map(|p| {
            let variants: Vec<VariantReport> = p
                .measured()
                .map(|(l, c)| {
                    let expected = mark(c.expected.verdict, c.expected.how, None);
                    VariantReport {
                        as_expected: c.as_expected,
                        anomaly: Some(c.verdict == Verdict::Occurs),
                        observed: vec![describe(c)],
                        checks: cell_checks(c, LEVELS[l].1, &expected),
                        sqlstates: c.sqlstate.iter().cloned().collect(),
                        timeline: c.timeline.clone(),
                        elapsed_ms: c.elapsed_ms,
                        cell: cell_lines(c),
                        ..VariantReport::new(LEVELS[l].0, expected, msg::what(p.title.clone(), p.what.clone()))
                    }
                })
                .collect();
            let mut s = ScenarioReport::new(&format!("phenomena.{}", p.id), &r.server_version);
            s.as_expected = variants.iter().all(|v| v.as_expected);
            s.elapsed_ms = round_ms(variants.iter().map(|v| v.elapsed_ms).sum());
            s.variants = variants;
            s.title = Some(p.title.clone());
            s
        })
        .collect()
}

/// A cell's checks: it was measured at its level (read back), and came out as documented.
fn cell_checks(c: &Cell, level: &str, expected: &Text) -> Vec<Check> {
    let mut checks = Vec::new();
    if let Some(read) = &c.wrong_level {
        checks.push(Check {
            id: "ph.level".into(),
            ok: false,
            text: msg::level_not_set(level, read),
        });
    }
    checks.push(Check {
        id: "ph.cell".into(),
        ok: documented(c),
        text: msg::differs(expected.clone()),
    });
    if let Some(i) = &c.interleavings {
        checks.push(Check {
            id: "ph.interleavings".into(),
            ok: i.as_expected,
            text: counts(i),
        });
    }
    checks
}

fn mark(verdict: Verdict, how: Option<How>, sqlstate: Option<&str>) -> Text {
    match (verdict, how) {
        (Verdict::Occurs, _) => msg::occurs(),
        (Verdict::Prevented, Some(How::Blocked)) => msg::blocked(),
        (Verdict::Prevented, Some(How::Aborted)) => sqlstate.map_or_else(msg::aborted_any, msg::aborted),
        (Verdict::Prevented, Some(How::Snapshot)) => msg::snapshot(),
        (Verdict::Prevented, _) => msg::prevented(),
    }
}

/// "k of n interleavings occur, m blocked, j aborted".
pub fn counts(i: &Interleavings) -> Text {
    match i.dead_ends {
        0 => msg::counts(i.occur, i.runs, i.blocked, i.aborted),
        d => msg::counts_dead_ends(i.occur, i.runs, i.blocked, i.aborted, d),
    }
}

/// Whether the cell came out as documented: prevented or not, and how where that is documented.
fn documented(c: &Cell) -> bool {
    c.verdict == c.expected.verdict && c.expected.how.is_none_or(|h| h == c.how)
}

/// What a matrix cell says, a line each: how the cell came out; what was
/// documented, where it differs; the level read back, where it was not
/// the one set; with `--all-interleavings`, the counts.
pub fn cell_lines(c: &Cell) -> Vec<Text> {
    let mut lines = vec![cell_mark(c)];
    if !documented(c) {
        lines.push(msg::differs(mark(c.expected.verdict, c.expected.how, None)));
    }
    if let Some(read) = &c.wrong_level {
        lines.push(msg::read_back(read));
    }
    if let Some(i) = &c.interleavings {
        lines.push(if i.as_expected {
            counts(i)
        } else {
            msg::counts_differ(counts(i))
        });
    }
    lines
}

fn cell_mark(c: &Cell) -> Text {
    mark(c.verdict, Some(c.how), c.sqlstate.as_deref())
}

pub fn describe(c: &Cell) -> Text {
    let verdict = if c.as_expected {
        ui::verdict_ok()
    } else {
        ui::verdict_not()
    };
    match (&c.at_step, &c.waited_for) {
        (Some(s), Some(by)) => msg::cell(cell_mark(c), msg::waited(s, by.join(", ")), verdict),
        (Some(s), None) => msg::cell(cell_mark(c), msg::at_step(s), verdict),
        _ => msg::cell_plain(cell_mark(c), verdict),
    }
}

/// The matrix: a row per phenomenon, a cell per level, coloured by how it came out.
pub fn matrix(r: &MatrixReport, style: &Style) -> String {
    let mut header = vec![style.say(&msg::col_phenomenon())];
    if let Some(p) = r.phenomena.first() {
        header.extend(p.cells.iter().map(|(l, _)| LEVELS[*l].0.to_string()));
    }
    let mut t = super::table(header, style);
    for p in &r.phenomena {
        let name = p.title.render(style.lang);
        let mut row = vec![comfy_table::Cell::new(format!("{name} ({})", p.id))];
        for (_, c) in p.measured() {
            let text: Vec<String> = cell_lines(c).iter().map(|l| style.say(l)).collect();
            let text = text.join("\n");
            let color = match (c.as_expected, c.verdict) {
                (false, _) => comfy_table::Color::Red,
                (true, Verdict::Occurs) => comfy_table::Color::Yellow,
                (true, Verdict::Prevented) => comfy_table::Color::Green,
            };
            row.push(style.cell(text, color));
        }
        t.add_row(row);
    }
    let total = r.cells().count();
    let ok = r.cells().filter(|c| c.as_expected).count();
    format!("{t}\n{}\n", style.say(&msg::summary(&r.server_version, total, ok)))
}

pub(crate) mod msg {
    crate::messages! {
        prefix "rph";
        occurs() {
            en: "✗ occurs",
            tr: "✗ oluşuyor",
        }
        prevented() {
            en: "✓ prevented",
            tr: "✓ önleniyor",
        }
        blocked() {
            en: "✓ blocked",
            tr: "✓ bekletiliyor",
        }
        aborted(sqlstate) {
            en: "✓ aborted {sqlstate}",
            tr: "✓ iptal {sqlstate}",
        }
        aborted_any() {
            en: "✓ aborted",
            tr: "✓ iptal",
        }
        snapshot() {
            en: "✓ snapshot",
            tr: "✓ snapshot",
        }
        differs(expected) {
            en: "≠ expected {expected}",
            tr: "≠ beklenen {expected}",
        }
        waited(step, by) {
            en: "{step} waited for {by}",
            tr: "{step}, {by} oturumunu bekledi",
        }
        at_step(step) {
            en: "at {step}",
            tr: "{step} adımında",
        }
        what(name, text) {
            en: "{name}: {text}",
            tr: "{name}: {text}",
        }
        cell_plain(mark, verdict) {
            en: "{mark} ({verdict})",
            tr: "{mark} ({verdict})",
        }
        level_not_set(level, read) {
            en: "every transaction runs at {level} (read back: {read})",
            tr: "her transaction {level} seviyesinde çalışır (geri okunan: {read})",
        }
        counts(occur, runs, blocked, aborted) {
            en: "{occur} of {runs} interleavings occur, {blocked} blocked, {aborted} aborted",
            tr: "{runs} iç içe geçişin {occur} tanesinde oluşuyor, {blocked} bekledi, {aborted} iptal",
        }
        counts_dead_ends(occur, runs, blocked, aborted, dead_ends) {
            en: "{occur} of {runs} interleavings occur, {blocked} blocked, {aborted} aborted, {dead_ends} at a dead end",
            tr: "{runs} iç içe geçişin {occur} tanesinde oluşuyor, {blocked} bekledi, {aborted} iptal, {dead_ends} çıkmazda",
        }
        counts_differ(counts) {
            en: "{counts} (≠ documented)",
            tr: "{counts} (≠ belgelenen)",
        }
        read_back(levels) {
            en: "level read back: {levels}",
            tr: "geri okunan seviye: {levels}",
        }
        col_phenomenon() {
            en: "phenomenon",
            tr: "fenomen",
        }
        cell(mark, detail, verdict) {
            en: "{mark} {detail} ({verdict})",
            tr: "{mark} {detail} ({verdict})",
        }
        summary(version, total, ok) {
            en: "PostgreSQL {version}: {ok} of {total} cells as documented",
            tr: "PostgreSQL {version}: {total} hücreden {ok} tanesi belgelendiği gibi",
        }
    }
}
