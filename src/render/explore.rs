//! `lab explore`'s report put into words: the levels' table and each
//! level's classes, JSON, and test suites (JUnit: a case per level; HTML: a
//! page per level, a diagram per class).
use anyhow::Result;

use super::Style;
use crate::i18n::{Lang, Text, ui};
use crate::report::explore::{ExploreReport, LevelReport};
use crate::report::{Check, RunError, ScenarioReport, VariantReport};

/// The JSON document (what made it first: [`super::document`]), then every object's keys in order, as explore's JSON has always had them.
pub fn json(r: &ExploreReport) -> Result<String> {
    super::document("explore", &serde_json::to_value(r)?)
}

/// The levels' table, each level's summary, then each level's classes.
pub fn text(r: &ExploreReport, style: &Style) -> String {
    let lang = style.lang;
    let h = &r.heading;
    let mut text = style.say(&msg::heading(
        &r.spec,
        // The server, and how the sessions reached it where that is TLS.
        super::text::server_words(&r.server_version, r.sessions.values().next()),
        h.permutations,
        h.levels,
        h.runs,
        format!("{:.1}", r.elapsed_ms / 1000.0),
    ));
    text.push('\n');
    if let Some((n, total, seed)) = &h.sampled {
        text.push_str(&format!("{}\n", msg::sampled(*n, total.clone(), *seed).render(lang)));
    }
    if let Some(own) = &r.own_level {
        text.push_str(&format!("{}\n", msg::every_level(own).render(lang)));
    }
    if let Some(why) = &h.alone {
        text.push_str(&format!("{}\n", msg::alone(why.clone()).render(lang)));
    }
    if r.schemas_remade > 0 {
        text.push_str(&format!("{}\n", msg::remade(r.schemas_remade).render(lang)));
    }
    let mut header = vec![style.say(&msg::col_level()), style.say(&msg::col_runs())];
    if h.judged {
        header.push(style.say(&msg::col_anomaly()));
    }
    for c in [
        msg::col_blocked(),
        msg::col_aborted(),
        msg::col_dead_ends(),
        msg::col_stuck(),
        msg::col_classes(),
    ] {
        header.push(style.say(&c));
    }
    let mut t = super::table(header, style);
    for o in &r.levels {
        let x = &o.tally;
        let mut row = vec![style.say(&o.name), x.runs.to_string()];
        if let Some(k) = x.anomaly {
            row.push(format!("{k}/{}", x.runs));
        }
        row.extend([x.blocked, x.aborted, x.dead_ends, x.stuck, x.classes].map(|n| n.to_string()));
        t.add_row(row);
    }
    text.push_str(&format!("{t}\n"));
    for o in &r.levels {
        text.push_str(&format!("{}\n", o.summary.render(lang)));
    }
    for o in &r.levels {
        text.push_str(&classes(o, style, h.judged));
    }
    text
}

/// A level's classes: a row each, its mark (`*` the spec's own permutation,
/// `†` a dead end), its runs, what happened, its representative.
fn classes(o: &LevelReport, style: &Style, judged: bool) -> String {
    let lang = style.lang;
    let mut text = format!(
        "\n── {} ──\n",
        msg::classes_of(style.say(&o.name), o.classes.len()).render(lang)
    );
    let mut header = vec!["#".to_string(), style.say(&msg::col_runs())];
    if judged {
        header.push(style.say(&msg::col_anomaly()));
    }
    header.push(style.say(&msg::col_what()));
    header.push(style.say(&msg::col_permutation()));
    let mut t = super::table(header, style);
    for c in &o.classes {
        let mark = if c.marked { "*" } else { "" };
        let cut = if c.signature.dead_end() { "†" } else { "" };
        let mut row = vec![format!("{}{mark}{cut}", c.class), c.runs.to_string()];
        if let Some(a) = c.signature.anomaly {
            row.push(style.say(&if a { ui::yes() } else { ui::no() }));
        }
        row.push(c.what.render(lang));
        row.push(c.representative.clone());
        t.add_row(row);
    }
    text.push_str(&format!("{t}\n"));
    if o.marked {
        text.push_str(&format!("{}\n", style.say(&msg::marked_note())));
    }
    if o.classes.iter().any(|c| c.signature.dead_end()) {
        text.push_str(&format!("{}\n", style.say(&msg::dead_end_note())));
    }
    text
}

/// `--step`: the class a person walks through, before the walk.
pub fn stepping(class: usize, permutation: String) -> Text {
    msg::stepped(class, permutation)
}

/// `--step`: the class walked through, after the walk, with its timeline.
pub fn stepped(class: usize, permutation: String, timeline: &[crate::report::Entry], style: &Style) -> String {
    let mut text = format!("\n── {} ──\n", style.say(&msg::stepped_done(class, permutation)));
    text.push_str(&super::timeline(timeline, style));
    text
}

/// JUnit: one suite, a case per level. HTML: a page per level, a diagram
/// per class (its representative). The levels' names and lines are in the
/// run's language, as the text's.
pub fn suites(r: &ExploreReport, lang: Lang) -> (Vec<ScenarioReport>, Vec<ScenarioReport>) {
    let name = format!("explore.{}", r.spec);
    let mut junit = ScenarioReport::new(&name, &r.server_version);
    junit.elapsed_ms = r.elapsed_ms;
    let mut pages = Vec::new();
    for o in &r.levels {
        let level = o.name.render(lang);
        let ok = o.as_expected.unwrap_or(true);
        let line = ui::verbatim(o.summary.render(lang));
        let expected = o.expected.clone().unwrap_or_else(msg::runs_to_end);
        junit.variants.push(VariantReport {
            as_expected: ok,
            elapsed_ms: o.elapsed_ms,
            anomaly: o.tally.anomaly.map(|k| k > 0),
            observed: vec![line.clone()],
            checks: vec![Check {
                id: "ex.level".into(),
                ok,
                text: line.clone(),
            }],
            ..VariantReport::new(&level, expected, msg::level_case(&level))
        });
        let mut page = ScenarioReport::new(&format!("{name} {level}"), &r.server_version);
        for c in &o.classes {
            page.variants.push(VariantReport {
                anomaly: c.signature.anomaly,
                observed: vec![ui::verbatim(c.what.render(lang))],
                timeline: c.timeline.clone(),
                elapsed_ms: c.elapsed_ms,
                ..VariantReport::named(
                    msg::class_name(c.class, c.runs),
                    ui::verbatim(c.representative.clone()),
                    line.clone(),
                )
            });
        }
        page.as_expected = ok;
        pages.push(page);
    }
    junit.as_expected = junit.variants.iter().all(|v| v.as_expected);
    if let Some(e) = &r.error {
        // A run cut short: the runs that finished are reported, and why it stopped.
        junit.as_expected = false;
        junit.error = Some(RunError {
            variant: "-".into(),
            message: e.message.clone(),
            exit_code: e.exit_code,
        });
    }
    (vec![junit], pages)
}

pub(crate) mod msg {
    crate::messages! {
        prefix "rex";
        stepped(class, permutation) {
            en: "class {class}, step by step: {permutation}",
            tr: "sınıf {class}, adım adım: {permutation}",
        }
        stepped_done(class, permutation) {
            en: "class {class}, as it went: {permutation}",
            tr: "sınıf {class}, olduğu gibi: {permutation}",
        }
        col_level() {
            en: "level",
            tr: "seviye",
        }
        col_runs() {
            en: "runs",
            tr: "koşu",
        }
        col_anomaly() {
            en: "anomaly",
            tr: "anomali",
        }
        col_blocked() {
            en: "blocked",
            tr: "bekledi",
        }
        col_aborted() {
            en: "aborted",
            tr: "düştü",
        }
        col_dead_ends() {
            en: "dead ends",
            tr: "çıkmaz",
        }
        col_stuck() {
            en: "stuck",
            tr: "takıldı",
        }
        col_classes() {
            en: "classes",
            tr: "sınıf",
        }
        col_what() {
            en: "what happened",
            tr: "ne oldu",
        }
        col_permutation() {
            en: "representative permutation",
            tr: "temsilci permütasyon",
        }
        every_level(level) {
            en: "every statement of the spec runs at a level it names ({level}): at any level asked the runs are the same, so they run once",
            tr: "spec'in her komutu kendi belirttiği seviyede çalışıyor ({level}): hangi seviye istenirse istensin koşular aynı, bu yüzden bir kez çalışıyorlar",
        }
        heading(name, version, permutations, levels, runs, secs) {
            en: "lab explore {name} on PostgreSQL {version}: {permutations} permutations at {levels} level(s), {runs} runs in {secs} s",
            tr: "lab explore {name}, PostgreSQL {version}: {levels} seviyede {permutations} permütasyon, {secs} sn'de {runs} koşu",
        }
        sampled(runs, total, seed) {
            en: "a sample of {runs} of {total} interleavings (seed {seed})",
            tr: "{total} iç içe geçişten {runs} tanesinin örneği (tohum {seed})",
        }
        classes_of(level, n) {
            en: "{level}: {n} class(es)",
            tr: "{level}: {n} sınıf",
        }
        marked_note() {
            en: "* the spec's own permutation",
            tr: "* spec'in kendi permütasyonu",
        }
        dead_end_note() {
            en: "† at a dead end: a spec that lists it waits at the cut step until its deadline (lab spec cancels it, isolationtester gives up), as no other step can run first",
            tr: "† çıkmazda: onu listeleyen bir spec, kesilen adımda süre sınırına kadar bekler (lab spec iptal eder, isolationtester vazgeçer), çünkü önce başka hiçbir adım çalışamaz",
        }
        alone(why) {
            en: "runs one at a time: the spec uses {why}, which other schemas' runs would share",
            tr: "koşular tek tek: spec {why} kullanıyor, diğer şemalardaki koşular da bunu paylaşırdı",
        }
        remade(n) {
            en: "{n} run(s) found in their schema what an earlier run's teardown left (the spec's setup failed there): the schema was made afresh and they ran again",
            tr: "{n} koşu şemasında önceki bir koşunun teardown'ının bıraktığını buldu (spec'in setup'ı orada başarısız oldu): şema yeniden yapıldı ve yeniden koştular",
        }
        class_name(n, runs) {
            en: "class {n} ({runs} runs)",
            tr: "sınıf {n} ({runs} koşu)",
        }
        level_case(level) {
            en: "at {level}",
            tr: "{level} seviyesinde",
        }
        runs_to_end() {
            en: "every interleaving ran",
            tr: "her iç içe geçiş çalıştı",
        }
    }
}
