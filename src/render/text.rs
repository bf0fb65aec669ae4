//! Reports as tables for a person: the timeline (one column per session),
//! evidence, notes, metrics, and the outcome table.
use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{Cell, CellAlignment, Color};

use super::{Style, table};
use crate::i18n::ui;
use crate::report::{AllReport, Entry, ScenarioReport, StepResult, VariantReport, WaitKind};

fn verdict(v: &VariantReport, style: &Style) -> Cell {
    if v.skipped.is_some() {
        style.cell(style.say(&ui::verdict_skipped()), Color::DarkGrey)
    } else if v.pooler_differs.is_some() {
        style.cell(style.say(&ui::verdict_pooler()), Color::Yellow)
    } else if v.as_expected {
        style.cell(style.say(&ui::verdict_ok()), Color::Green)
    } else {
        style.cell(style.say(&ui::verdict_not()), Color::Red)
    }
}

/// Who a step waited for, as a phrase.
fn who(e: &Entry, style: &Style) -> String {
    match e.blocked_by.as_deref() {
        Some(b) if !b.is_empty() => b.join(", "),
        _ => style.say(&ui::somebody()),
    }
}

/// One timeline cell: the statement, then what came of it.
fn step_text(e: &Entry, style: &Style) -> String {
    let line = outcome_line(e, style);
    if e.sql.is_empty() {
        line
    } else {
        format!("{}\n{line}", e.sql)
    }
}

/// [`outcome_line`] in plain words in `lang`: what `--step` prints under a prompt.
pub fn outcome_in(e: &Entry, lang: crate::i18n::Lang) -> String {
    outcome_line(e, &Style::plain(lang))
}

/// What came of a step, on one line: `→ UPDATE 1`, `⏳ waiting for A ...`, `✖ ERROR ...`.
pub fn outcome_line(e: &Entry, style: &Style) -> String {
    let lang = style.lang;
    let waited = |text: String| match e.waited_ms {
        Some(ms) => format!("{}{text}", style.say(&ui::after_waiting(format!("{ms:.1}")))),
        None => text,
    };
    // A wait too short to be seen, that the server's error reported.
    let unseen = if e.wait == Some(WaitKind::ServerError) {
        format!("{}; ", style.say(&ui::waiting_unseen(who(e, style))))
    } else {
        String::new()
    };
    match e.result {
        StepResult::Ok => {
            let iso = e.isolation.as_ref().map(|l| format!(" ({l})")).unwrap_or_default();
            format!("→ {}{iso}", e.detail.render(lang))
        }
        StepResult::Waiting => {
            let text = match &e.lock {
                Some(lock) => ui::waiting_lock(who(e, style), lock),
                None => ui::waiting(who(e, style)),
            };
            format!("⏳ {}", style.say(&text))
        }
        StepResult::Completed => {
            let iso = e.isolation.as_ref().map(|l| format!(" ({l})")).unwrap_or_default();
            format!("✔ {unseen}{}{iso}", waited(e.detail.render(lang)))
        }
        StepResult::Error => {
            let cancelled = if e.cancelled_by_lab {
                style.say(&ui::cancelled_by_lab())
            } else {
                String::new()
            };
            format!("✖ {unseen}{}{cancelled}", waited(e.detail.render(lang)))
        }
        StepResult::Note => format!("• {}", e.detail.render(lang)),
        StepResult::Notice => format!("! {}", e.detail.render(lang)),
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
    let mut header = vec![style.say(&ui::col_t_ms())];
    header.extend(sessions.iter().map(|s| s.to_string()));
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
                StepResult::Note | StepResult::Notice => Color::DarkGrey,
                StepResult::Ok => Color::Reset,
            };
            row.push(if color == Color::Reset {
                Cell::new(step_text(e, style))
            } else {
                style.cell(step_text(e, style), color)
            });
        }
        t.add_row(row);
    }
    t.to_string()
}

/// A table of one line per row (no rule between rows), for long lists.
fn condensed(header: &[crate::i18n::Text], style: &Style) -> comfy_table::Table {
    let mut t = table(header.iter().map(|h| style.say(h)).collect(), style);
    t.load_style(comfy_table::presets::UTF8_FULL_CONDENSED);
    t
}

/// A timeline longer than this is summarised unless `--verbose`.
const LONG_TIMELINE: usize = 120;

/// A long timeline as a person can read it: the steps that waited, failed,
/// narrate or got a NOTICE, in time order, then each session's counts.
fn timeline_summary(entries: &[Entry], style: &Style) -> String {
    let kept: Vec<Entry> = entries
        .iter()
        .filter(|e| e.result != StepResult::Ok || e.cancelled_by_lab)
        .cloned()
        .collect();
    let mut out = String::new();
    if !kept.is_empty() {
        out.push_str(&timeline(&kept, style));
        out.push('\n');
    }
    // Per session, by name: statements, waits, errors.
    let mut sessions: std::collections::BTreeMap<&str, [usize; 3]> = Default::default();
    for e in entries {
        let c = sessions.entry(&e.session).or_default();
        match e.result {
            StepResult::Note | StepResult::Notice => {}
            StepResult::Waiting => c[1] += 1,
            StepResult::Error => {
                c[0] += 1;
                c[2] += 1;
            }
            _ => c[0] += 1,
        }
    }
    let mut t = condensed(
        &[
            ui::col_session(),
            ui::col_statements(),
            ui::col_waits(),
            ui::col_errors(),
        ],
        style,
    );
    for (s, [n, w, e]) in &sessions {
        t.add_row(vec![s.to_string(), n.to_string(), w.to_string(), e.to_string()]);
    }
    out.push_str(&format!(
        "{}\n{t}\n",
        style.say(&ui::steps_hidden(entries.len() - kept.len(), entries.len()))
    ));
    out
}

pub fn variant(scenario: &str, v: &VariantReport, style: &Style) -> String {
    // `label: text`, wrapped under the text.
    let labelled = |label: &crate::i18n::Text, text: &str| {
        format!(
            "{}\n",
            crate::output::paragraph(&format!("{}: ", style.say(label)), text)
        )
    };
    let mut out = format!("── {scenario} / {} ──\n", v.shown_name(style.lang));
    if let Some(reason) = &v.skipped {
        out.push_str(&labelled(&ui::skipped(), &style.say(reason)));
    }
    if v.timeline.len() > LONG_TIMELINE && !style.verbose {
        out.push_str(&timeline_summary(&v.timeline, style));
    } else if !v.timeline.is_empty() {
        out.push_str(&timeline(&v.timeline, style));
        out.push('\n');
    }
    for ev in &v.evidence {
        let mut t = table(ev.columns.iter().map(|c| c.render(style.lang)).collect(), style);
        for r in &ev.rows {
            t.add_row(r.iter().map(|c| c.render(style.lang)).collect::<Vec<_>>());
        }
        out.push_str(&format!("{}:\n{t}\n", ev.title.render(style.lang)));
    }
    for n in &v.notes {
        out.push_str(&labelled(&ui::note(), &style.say(n)));
    }
    if !v.metrics.is_empty() {
        let m: Vec<String> = v.metrics.iter().map(|(k, val)| format!("{k}={val}")).collect();
        out.push_str(&labelled(&ui::metrics(), &m.join(", ")));
    }
    if style.explain {
        out.push_str(&labelled(&ui::why(), &style.say(&v.explain)));
    }
    out
}

/// The observed outcome, and the checks that failed, in one cell.
pub(super) fn observed(v: &VariantReport, style: &Style) -> String {
    let mut text = v.observed_line(style.lang);
    if let (Some(reason), true) = (&v.skipped, text.is_empty()) {
        text = style.say(reason);
    }
    let failed = v.failed_beside_expected(style.lang);
    if !failed.is_empty() {
        text = format!("{text}\n{}: {}", style.say(&ui::failed_checks()), failed.join("; "));
    }
    if let Some(reason) = &v.pooler_differs {
        text = format!("{text}\n{}", style.say(reason));
    }
    text
}

fn outcome_table(rows: &[(&str, &VariantReport)], with_scenario: bool, style: &Style) -> String {
    let mut header = vec![];
    if with_scenario {
        header.push(style.say(&ui::col_scenario()));
    }
    header.extend([
        style.say(&ui::col_variant()),
        style.say(&ui::col_expected()),
        style.say(&ui::col_observed()),
        style.say(&ui::col_anomaly()),
        style.say(&ui::col_verdict()),
    ]);
    let mut t = table(header, style);
    for (scenario, v) in rows {
        let mut row = vec![];
        if with_scenario {
            row.push(Cell::new(scenario));
        }
        row.extend([
            Cell::new(v.shown_name(style.lang)),
            Cell::new(style.say(&v.expected)),
            Cell::new(observed(v, style)),
            anomaly_cell(v, style),
            verdict(v, style),
        ]);
        t.add_row(row);
    }
    format!("{t}\n")
}

/// Whether the variant showed its anomaly; `-` for one that did not run,
/// or for which nothing says what its anomaly is.
fn anomaly_cell(v: &VariantReport, style: &Style) -> Cell {
    match v.anomaly {
        _ if v.skipped.is_some() => Cell::new("-"),
        None => Cell::new("-"),
        Some(true) => style.cell(style.say(&ui::yes()), Color::Yellow),
        Some(false) => Cell::new(style.say(&ui::no())),
    }
}

pub fn scenario(r: &ScenarioReport, style: &Style) -> String {
    let mut out = String::new();
    for v in &r.variants {
        out.push_str(&variant(&r.scenario, v, style));
        out.push('\n');
    }
    out.push_str(&scenario_outcomes(r, style));
    out
}

/// One variant with its verdict right under it (`--step`: before the next variant begins).
pub fn variant_with_verdict(scenario: &str, v: &VariantReport, style: &Style) -> String {
    format!(
        "{}{}",
        variant(scenario, v, style),
        outcome_table(&[(scenario, v)], false, style)
    )
}

/// The scenario's footer and outcome table (its variants shown already).
pub fn scenario_outcomes(r: &ScenarioReport, style: &Style) -> String {
    let mut out = String::new();
    let rows: Vec<_> = r.variants.iter().map(|v| (r.scenario.as_str(), v)).collect();
    let footer = ui::scenario_footer(
        &r.scenario,
        server_words(&r.server_version, r.connection.as_ref()),
        format!("{:.0}", r.elapsed_ms),
    );
    out.push_str(&format!("{}\n", style.say(&footer)));
    out.push_str(&outcome_table(&rows, false, style));
    out
}

pub fn all_summary(r: &AllReport, style: &Style) -> String {
    let rows = summary_rows(r);
    format!(
        "{}\n{}",
        style.say(&summary_line(r, &rows)),
        outcome_table(&rows, true, style)
    )
}

/// `--summary`: one line per variant (scenario, variant, anomaly, verdict);
/// what was observed only where the verdict is not "as documented" (the
/// column only when there is such a row).
pub fn brief_summary(r: &AllReport, style: &Style) -> String {
    let rows = summary_rows(r);
    let odd = |v: &VariantReport| !v.as_expected || v.skipped.is_some() || v.pooler_differs.is_some();
    let any_odd = rows.iter().any(|(_, v)| odd(v));
    let mut header = vec![
        ui::col_scenario(),
        ui::col_variant(),
        ui::col_anomaly(),
        ui::col_verdict(),
    ];
    if any_odd {
        header.push(ui::col_observed());
    }
    let mut t = condensed(&header, style);
    for (scenario, v) in &rows {
        let mut row = vec![
            Cell::new(scenario),
            Cell::new(v.shown_name(style.lang)),
            anomaly_cell(v, style),
            verdict(v, style),
        ];
        if any_odd {
            row.push(Cell::new(if odd(v) { observed(v, style) } else { String::new() }));
        }
        t.add_row(row);
    }
    format!("{}\n{t}\n", style.say(&summary_line(r, &rows)))
}

pub(super) fn summary_rows(r: &AllReport) -> Vec<(&str, &VariantReport)> {
    r.scenarios
        .iter()
        .flat_map(|s| s.variants.iter().map(move |v| (s.scenario.as_str(), v)))
        .collect()
}

pub(super) fn summary_line(r: &AllReport, rows: &[(&str, &VariantReport)]) -> crate::i18n::Text {
    let count = |f: &dyn Fn(&VariantReport) -> bool| rows.iter().filter(|(_, v)| f(v)).count();
    // Counted as their verdict cells read: "differs behind the pooler" apart.
    let ok = count(&|v| v.as_expected && v.skipped.is_none() && v.pooler_differs.is_none());
    let differs = count(&|v| v.skipped.is_none() && v.pooler_differs.is_some());
    let skipped = count(&|v| v.skipped.is_some());
    let ms = format!("{:.0}", r.elapsed_ms);
    let server = server_words(
        &r.server_version,
        r.scenarios.iter().find_map(|s| s.connection.as_ref()),
    );
    if differs == 0 {
        ui::all_summary(server, rows.len(), ok, skipped, ms)
    } else {
        ui::all_summary_pooler(server, rows.len(), ok, differs, skipped, ms)
    }
}

/// The server's version, and how lab reached it where that is TLS
/// ("15.18 over TLSv1.3, certificate verified for db.example.com").
pub fn server_words(version: &str, connection: Option<&crate::report::Connection>) -> crate::i18n::Arg {
    match connection.and_then(|c| c.facts.as_ref()) {
        None => version.into(),
        Some(f) => ui::version_over_tls(version, tls_words(f)).into(),
    }
}

/// What a TLS handshake gave, in words.
pub fn tls_words(f: &crate::postgres::tls::Facts) -> crate::i18n::Text {
    match f.verified {
        "chain and host name" => ui::tls_verified(&f.version, &f.host),
        "chain" => ui::tls_chain_only(&f.version),
        _ => ui::tls_unverified(&f.version),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{AllReport, ScenarioReport, VariantReport};

    #[test]
    fn a_variant_named_by_a_text_is_shown_in_the_run_language_and_keeps_its_english_name() {
        let v = VariantReport::named(ui::col_expected(), ui::col_expected(), ui::col_expected());
        assert_eq!(v.name, "expected");
        let tr = Style::plain(crate::i18n::Lang::Tr);
        assert!(super::variant("spec", &v, &tr).starts_with("── spec / beklenen ──"));
        let json = serde_json::to_value(&v).unwrap();
        assert_eq!(json["name"], "expected", "JSON keeps the English name");
    }

    fn variant(name: &str) -> VariantReport {
        VariantReport::new(name, ui::yes(), ui::no())
    }

    fn run(variants: Vec<VariantReport>) -> AllReport {
        let mut s = ScenarioReport::new("demo", "15.18");
        s.variants = variants;
        AllReport {
            server_version: "15.18".into(),
            as_expected: true,
            elapsed_ms: 1.0,
            scenarios: vec![s],
        }
    }

    #[test]
    fn the_summary_counts_rows_as_their_verdicts_read() {
        let style = Style::plain(crate::i18n::Lang::En);
        let mut skipped = variant("skipped");
        skipped.skipped = Some(ui::no());
        skipped.anomaly = Some(true);
        let mut pooled = variant("pooled");
        pooled.pooler_differs = Some(ui::no());
        let all = run(vec![variant("plain"), skipped, pooled]);
        let brief = brief_summary(&all, &style);
        assert!(
            brief.starts_with(
                "Summary: PostgreSQL 15.18, 3 variants, 1 as documented, \
                 1 differing behind the pooler (as documented there), 1 skipped"
            ),
            "{brief}"
        );
        // A variant that did not run showed no anomaly, nor its absence.
        let skipped_row = brief.lines().find(|l| l.contains("┆ skipped ")).unwrap();
        assert!(skipped_row.contains("┆ - "), "{skipped_row}");
        // Every row as documented: no "observed" column of blanks.
        let plain = brief_summary(&run(vec![variant("a"), variant("b")]), &style);
        assert!(plain.starts_with("Summary: PostgreSQL 15.18, 2 variants, 2 as documented, 0 skipped"));
        assert!(!plain.contains("observed"), "{plain}");
        assert!(brief.contains("observed"), "{brief}");
    }

    #[test]
    fn a_failed_check_that_only_repeats_the_expectation_is_not_shown_again() {
        let style = Style::plain(crate::i18n::Lang::En);
        let mut v = VariantReport::new("expected output", ui::verbatim("byte for byte f.out"), ui::no());
        v.as_expected = false;
        v.observed = vec![ui::verbatim("differs")];
        let check = |text: &str| crate::report::Check {
            id: "t.check".into(),
            ok: false,
            text: ui::verbatim(text),
        };
        v.checks = vec![check("byte for byte f.out")];
        assert_eq!(observed(&v, &style), "differs");
        v.checks.push(check("B waited"));
        assert_eq!(observed(&v, &style), "differs\nNOT as documented: B waited");
    }
}
