//! JUnit XML: one <testsuite> per scenario, one <testcase> per variant; a
//! variant not as documented is a <failure> carrying expected, observed and
//! the checks that failed; a skipped one is <skipped>. English, always.
use crate::i18n::Lang;
use crate::report::ScenarioReport;

/// Text as XML (and HTML) character data or attribute value.
pub(super) fn xml_escape(s: &str) -> String {
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

/// The suites of a run that took `wall` (the root's `time`: the run's wall
/// time, not the sum of its suites', which overlap when they run side by side).
pub fn junit(scenarios: &[ScenarioReport], wall: std::time::Duration) -> String {
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let all = || scenarios.iter().flat_map(|s| &s.variants);
    let total = all().count();
    // A skip `--require` named is a failure (not as expected), not a skip.
    let failures = all().filter(|v| !v.as_expected).count();
    let skipped = all().filter(|v| v.skipped.is_some() && v.as_expected).count();
    let time = wall.as_secs_f64();
    let errors = scenarios.iter().filter(|s| s.error.is_some()).count();
    out.push_str(&format!(
        "<testsuites name=\"lab\" tests=\"{}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"{skipped}\" time=\"{time:.3}\">\n",
        total + errors
    ));
    for s in scenarios {
        let f = s.variants.iter().filter(|v| !v.as_expected).count();
        let sk = s
            .variants
            .iter()
            .filter(|v| v.skipped.is_some() && v.as_expected)
            .count();
        let e = usize::from(s.error.is_some());
        out.push_str(&format!(
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{f}\" errors=\"{e}\" skipped=\"{sk}\" time=\"{:.3}\">\n",
            xml_escape(&s.scenario),
            s.variants.len() + e,
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
            if let (Some(reason), false) = (&v.skipped, v.as_expected) {
                out.push_str(&format!(
                    ">\n      <failure message=\"{}\" type=\"required\"/>\n    </testcase>\n",
                    xml_escape(&msg::required_skipped(reason.clone()).en())
                ));
            } else if let Some(reason) = &v.skipped {
                out.push_str(&format!(
                    ">\n      <skipped message=\"{}\"/>\n    </testcase>\n",
                    xml_escape(&reason.en())
                ));
            } else if let Some(reason) = &v.pooler_differs {
                // Documented for a transaction pooler: it passes, with why.
                out.push_str(&format!(
                    ">\n      <system-out>{}</system-out>\n    </testcase>\n",
                    xml_escape(&reason.en())
                ));
            } else if !v.as_expected {
                let failed: Vec<String> = v.failed().map(|c| format!("- {}", c.text.en())).collect();
                let diff = v.diff.as_deref().map(|d| format!("\n{d}")).unwrap_or_default();
                out.push_str(&format!(
                    ">\n      <failure message=\"not as documented\" type=\"verdict\">expected: {}\nobserved: {}\nfailed checks:\n{}{}</failure>\n    </testcase>\n",
                    xml_escape(&v.expected.en()),
                    xml_escape(&v.observed_line(Lang::En)),
                    xml_escape(&failed.join("\n")),
                    xml_escape(diff.trim_end())
                ));
            } else {
                out.push_str("/>\n");
            }
        }
        // The variant the run stopped in: an error, not a verdict.
        if let Some(err) = &s.error {
            out.push_str(&format!(
                "    <testcase classname=\"lab.{}\" name=\"{}\" time=\"0.000\">\n      <error message=\"{}\" type=\"exit {}\"/>\n    </testcase>\n",
                xml_escape(&s.scenario),
                xml_escape(&err.variant),
                xml_escape(&err.message),
                err.exit_code
            ));
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}

mod msg {
    crate::messages! {
        prefix "junit";
        required_skipped(why) {
            en: "required (--require) but skipped: {why}",
            tr: "gerekli (--require) ama atlandı: {why}",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{Check, VariantReport};

    mod t {
        crate::messages! {
            prefix "zz";
            expected() { en: "final 34 & <nothing> lost", tr: "sonuç 34 & <hiçbir şey> kaybolmaz" }
            observed() { en: "final \"35\"", tr: "sonuç \"35\"" }
            skipped() { en: "needs 17", tr: "17 gerekir" }
            check() { en: "B's UPDATE waits", tr: "B'nin UPDATE'i bekler" }
        }
    }

    fn variant(name: &str, ok: bool, skipped: bool) -> VariantReport {
        VariantReport {
            sessions: Default::default(),
            name: name.into(),
            as_expected: ok,
            anomaly: Some(false),
            expected: t::expected(),
            explain: t::expected(),
            observed: vec![t::observed()],
            checks: vec![Check {
                id: "zz.check".into(),
                ok,
                text: t::check(),
            }],
            elapsed_ms: 12.5,
            sqlstates: vec![],
            metrics: Default::default(),
            timeline: vec![],
            skipped: skipped.then(t::skipped),
            pooler_differs: None,
            diff: None,
            notes: vec![],
            evidence: vec![],
            spans: Default::default(),
            cycle: None,
            label: None,
            cell: vec![],
        }
    }

    #[test]
    fn junit_counts_failures_and_skips_and_escapes() {
        let r = ScenarioReport {
            scenario: "lost-update".into(),
            server_version: "15.18".into(),
            as_expected: false,
            elapsed_ms: 100.0,
            connection: None,
            variants: vec![
                variant("a", true, false),
                variant("b", false, false),
                variant("c", true, true),
            ],
            error: None,
            title: None,
        };
        let xml = junit(&[r.clone(), r], std::time::Duration::from_millis(150));
        // The wall time, not the sum of the suites' (200 ms).
        assert!(xml.contains(
            "<testsuites name=\"lab\" tests=\"6\" failures=\"2\" errors=\"0\" skipped=\"2\" time=\"0.150\">"
        ));
        assert!(xml.contains("<testcase classname=\"lab.lost-update\" name=\"a\" time=\"0.013\"/>"));
        assert!(xml.contains(
            "expected: final 34 &amp; &lt;nothing&gt; lost\nobserved: final &quot;35&quot;\nfailed checks:\n- B&apos;s UPDATE waits</failure>"
        ));
        assert!(xml.contains("<skipped message=\"needs 17\"/>"));
        // Required (--require) and skipped: a failure, with why.
        let required = variant("d", false, true);
        let r = ScenarioReport {
            scenario: "pooler".into(),
            server_version: "15.18".into(),
            as_expected: false,
            elapsed_ms: 1.0,
            variants: vec![variant("c", true, true), required],
            error: None,
            connection: None,
            title: None,
        };
        let xml = junit(&[r], std::time::Duration::ZERO);
        assert!(
            xml.contains("tests=\"2\" failures=\"1\" errors=\"0\" skipped=\"1\""),
            "{xml}"
        );
        assert!(
            xml.contains("<failure message=\"required (--require) but skipped: needs 17\" type=\"required\"/>"),
            "{xml}"
        );
        assert_eq!(xml_escape("a\u{1}b"), "a b");
    }
}
