//! A run as GitHub-flavoured Markdown (`--format markdown`, and the summary
//! lab appends to `$GITHUB_STEP_SUMMARY`): a heading naming the command,
//! the summary line, then one table row per variant (per spec permutation,
//! per matrix cell) with its verdict, and what was observed where the
//! verdict is not "as documented". In the run's language, as the table is.
use super::Style;
use super::text::{observed, summary_line, summary_rows};
use crate::i18n::ui;
use crate::report::{AllReport, VariantReport};

/// `r` under a heading `title` (`lab all`, `lab spec`, ...).
pub fn summary(title: &str, r: &AllReport, style: &Style) -> String {
    let rows = summary_rows(r);
    let odd = |v: &VariantReport| !v.as_expected || v.skipped.is_some() || v.pooler_differs.is_some();
    let any_odd = rows.iter().any(|(_, v)| odd(v));
    let mut out = format!("### {}\n\n{}\n\n", cell(title), style.say(&summary_line(r, &rows)));
    let mut header = vec![
        ui::col_scenario(),
        ui::col_variant(),
        ui::col_anomaly(),
        ui::col_verdict(),
    ];
    if any_odd {
        header.push(ui::col_observed());
    }
    let header: Vec<String> = header.iter().map(|h| cell(&style.say(h))).collect();
    out.push_str(&format!("| {} |\n", header.join(" | ")));
    out.push_str(&format!("|{}\n", " --- |".repeat(header.len())));
    for (scenario, v) in &rows {
        let mut row = vec![
            cell(scenario),
            cell(&v.shown_name(style.lang)),
            anomaly(v, style),
            verdict(v, style),
        ];
        if any_odd {
            row.push(if odd(v) {
                cell(&observed(v, style))
            } else {
                String::new()
            });
        }
        out.push_str(&format!("| {} |\n", row.join(" | ")));
    }
    // Where a run stopped part-way, and why.
    for s in r.scenarios.iter() {
        if let Some(e) = &s.error {
            out.push_str(&format!(
                "\n**{} / {}**: {}\n",
                cell(&s.scenario),
                cell(&e.variant),
                cell(&e.message)
            ));
        }
    }
    out
}

/// The verdict, with a mark GitHub shows in colour.
fn verdict(v: &VariantReport, style: &Style) -> String {
    let (mark, word) = if v.skipped.is_some() && !v.as_expected {
        ("❌", ui::verdict_skipped())
    } else if v.skipped.is_some() {
        ("⏭️", ui::verdict_skipped())
    } else if v.pooler_differs.is_some() {
        ("🟡", ui::verdict_pooler())
    } else if v.as_expected {
        ("✅", ui::verdict_ok())
    } else {
        ("❌", ui::verdict_not())
    };
    format!("{mark} {}", cell(&style.say(&word)))
}

fn anomaly(v: &VariantReport, style: &Style) -> String {
    match v.anomaly {
        _ if v.skipped.is_some() => "-".into(),
        None => "-".into(),
        Some(true) => style.say(&ui::yes()),
        Some(false) => style.say(&ui::no()),
    }
}

/// Text as one table cell: a `|` escaped, lines joined with `<br>`, HTML's
/// `<`, `>` and `&` as entities (GitHub would read them as markup).
fn cell(text: &str) -> String {
    text.trim_end()
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('|', "\\|")
        .replace('\n', "<br>")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::i18n::Lang;
    use crate::report::ScenarioReport;

    fn variant(name: &str) -> VariantReport {
        VariantReport::new(name, ui::yes(), ui::no())
    }

    #[test]
    fn a_row_per_variant_with_what_was_observed_where_it_is_not_as_documented() {
        let mut failed = variant("b");
        failed.as_expected = false;
        failed.observed = vec![ui::verbatim("read 34 | then\n<35>")];
        let mut skipped = variant("c");
        skipped.skipped = Some(ui::verbatim("no pgbouncer"));
        let mut s = ScenarioReport::new("demo", "15.18");
        s.variants = vec![variant("a"), failed, skipped];
        let r = AllReport {
            server_version: "15.18".into(),
            as_expected: false,
            elapsed_ms: 1200.0,
            scenarios: vec![s],
        };
        let md = summary("lab all", &r, &Style::plain(Lang::En));
        assert_eq!(
            md,
            "### lab all\n\n\
             Summary: PostgreSQL 15.18, 3 variants, 1 as documented, 1 skipped (1200 ms)\n\n\
             | scenario | variant | anomaly | verdict | observed |\n\
             | --- | --- | --- | --- | --- |\n\
             | demo | a | no | ✅ as documented |  |\n\
             | demo | b | no | ❌ NOT as documented | read 34 \\| then<br>&lt;35&gt; |\n\
             | demo | c | - | ⏭️ skipped | no pgbouncer |\n"
        );
        let tr = summary("lab all", &r, &Style::plain(Lang::Tr));
        assert!(tr.contains("| senaryo | varyant |"), "{tr}");
        // Every row as documented: no column of blanks.
        let mut s = ScenarioReport::new("demo", "15.18");
        s.variants = vec![variant("a")];
        let md = summary(
            "lab demo",
            &AllReport {
                scenarios: vec![s],
                ..r
            },
            &Style::plain(Lang::En),
        );
        assert!(
            md.contains("| scenario | variant | anomaly | verdict |\n| --- | --- | --- | --- |\n"),
            "{md}"
        );
    }
}
