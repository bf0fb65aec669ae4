//! `lab hunt`'s report put into words: the levels' table with what each
//! found and why (and what its reproducer's replays showed), JSON, and test
//! suites (JUnit: a suite per level, a case per anomaly class; HTML: a page
//! per level, each anomaly's cycle beside its transactions' swimlanes).
use anyhow::Result;

use super::Style;
use crate::i18n::{Lang, ui};
use crate::report::hunt::HuntReport;
use crate::report::{Check, ScenarioReport, VariantReport, round_ms};

/// The JSON document (what made it first: [`super::document`]), then every object's keys in order, as hunt's JSON has always had them.
pub fn json(r: &HuntReport) -> Result<String> {
    super::document("hunt", &serde_json::to_value(r)?)
}

/// The table, then each level's notes and anomalies; nothing where nothing
/// ran (the error line says why).
pub fn text(r: &HuntReport, lang: Lang) -> String {
    if r.levels.is_empty() {
        return String::new();
    }
    let style = Style::for_stdout(lang, false);
    // A history checked from a file names its server only if it recorded one.
    let heading = if r.server_version.is_empty() {
        msg::heading_no_server(&r.about)
    } else {
        // The server, and how the sessions reached it where that is TLS.
        msg::heading(
            super::text::server_words(&r.server_version, r.sessions.values().next()),
            &r.about,
        )
    };
    let mut text = format!("{}\n", heading.render(lang));
    let header = [
        msg::col_level(),
        msg::col_txns(),
        msg::col_committed(),
        msg::col_aborted(),
        msg::col_rate(),
        msg::col_found(),
        ui::col_verdict(),
    ]
    .iter()
    .map(|t| style.say(t))
    .collect();
    let mut t = super::table(header, &style);
    for f in &r.levels {
        let names: Vec<String> = f
            .found
            .iter()
            .map(|(n, forbidden)| {
                let how = if *forbidden { msg::forbidden() } else { msg::allowed() };
                format!("{n} ({})", how.render(lang))
            })
            .collect();
        let verdict = if f.as_expected {
            ui::verdict_ok()
        } else {
            ui::verdict_not()
        };
        let rate = if f.secs > 0.0 {
            format!("{:.0}", f.transactions as f64 / f.secs)
        } else {
            "-".into()
        };
        t.add_row(vec![
            f.name.clone(),
            f.transactions.to_string(),
            f.committed.to_string(),
            f.aborted.to_string(),
            rate,
            if names.is_empty() {
                msg::none().render(lang)
            } else {
                names.join(", ")
            },
            style.say(&verdict),
        ]);
    }
    text.push_str(&format!("{t}\n"));
    for f in &r.levels {
        if f.level.is_none() {
            text.push_str(&format!("{}\n", msg::judged_serializable().render(lang)));
        }
        if let Some(d) = &f.level_read_back_differs {
            text.push_str(&format!("{d}\n"));
        }
        if f.partial {
            text.push_str(&format!("{}\n", msg::partial(&f.name, f.transactions).render(lang)));
        }
        if f.search_cut_short {
            text.push_str(&format!("{}\n", msg::cut_short().render(lang)));
        }
        if let Some(file) = &f.history {
            text.push_str(&format!("{}\n", msg::history_at(file).render(lang)));
        }
        if let Some(n) = &f.nemesis {
            text.push_str(&format!("{}\n", n.line.render(lang)));
        }
        for line in [&f.standby_line, &f.sync_line, &f.versions_line].into_iter().flatten() {
            text.push_str(&format!("{}\n", line.render(lang)));
        }
        if let Some(line) = &f.models_line {
            text.push_str(&format!("{}\n", line.render(lang)));
        }
        for a in &f.anomalies {
            text.push_str(&format!(
                "\n{} — {} ({}): {}\n",
                a.name,
                f.name,
                a.judged.render(lang),
                a.txns
            ));
            for line in &a.explanation {
                text.push_str(&format!("  {}\n", line.render(lang)));
            }
            if let Some(line) = &a.replay_line {
                text.push_str(&format!("  {}\n", line.render(lang)));
            }
        }
    }
    let blind_spot = match r.not_visible {
        crate::report::hunt::NOT_VISIBLE => msg::blind_spot(),
        crate::report::hunt::NOT_VISIBLE_REGISTER => msg::blind_spot_register(),
        _ => msg::blind_spot_predicate(),
    };
    text.push_str(&format!("\n{}\n", blind_spot.render(lang)));
    text
}

/// A test suite per level, a case per anomaly class; and the HTML pages.
pub fn suites(r: &HuntReport) -> (Vec<ScenarioReport>, Vec<ScenarioReport>) {
    let mut junit = Vec::new();
    let mut pages = Vec::new();
    for f in &r.levels {
        let name = format!("hunt.{}", f.judged_at.replace(' ', "-"));
        let mut suite = ScenarioReport::new(&name, &r.server_version);
        let mut page = ScenarioReport::new(&format!("hunt {}", f.name), &r.server_version);
        suite.elapsed_ms = round_ms(f.secs * 1000.0);
        for c in &f.classes {
            let mut v = VariantReport::new(&c.name, c.expected.clone(), ui::verbatim(String::new()));
            v.as_expected = !c.bad;
            v.anomaly = Some(c.found);
            v.observed = c.observed.clone();
            v.checks.push(Check {
                id: format!("{}-not-forbidden", c.name),
                ok: !c.bad,
                text: c.check.clone(),
            });
            suite.variants.push(v);
        }
        suite.as_expected = f.as_expected;
        for a in &f.anomalies {
            let mut v = VariantReport::new(&a.name, a.judged.clone(), ui::verbatim(a.txns.clone()));
            v.as_expected = !a.forbidden;
            v.anomaly = Some(true);
            v.observed = a.explanation.clone();
            v.observed.extend(a.replay_line.clone());
            v.timeline = a.timeline.clone();
            v.cycle = a.cycle.clone();
            page.variants.push(v);
        }
        page.as_expected = f.as_expected;
        junit.push(suite);
        pages.push(page);
    }
    (junit, pages)
}

pub(crate) mod msg {
    crate::messages! {
        prefix "rhu";
        heading(version, about) {
            en: "lab hunt on PostgreSQL {version}: {about}",
            tr: "PostgreSQL {version} üzerinde lab hunt: {about}",
        }
        heading_no_server(about) {
            en: "lab hunt: {about}",
            tr: "lab hunt: {about}",
        }
        col_level() {
            en: "level",
            tr: "düzey",
        }
        col_txns() {
            en: "transactions",
            tr: "işlem",
        }
        col_committed() {
            en: "committed",
            tr: "commit edilen",
        }
        col_aborted() {
            en: "aborted",
            tr: "iptal edilen",
        }
        col_rate() {
            en: "txns/s",
            tr: "işlem/sn",
        }
        col_found() {
            en: "anomalies found",
            tr: "bulunan anomaliler",
        }
        forbidden() {
            en: "forbidden",
            tr: "yasak",
        }
        allowed() {
            en: "allowed",
            tr: "izinli",
        }
        none() {
            en: "none",
            tr: "yok",
        }
        judged_serializable() {
            en: "The history names no level and none was given (--level): judged as serializable.",
            tr: "Geçmiş bir düzey belirtmiyor ve --level verilmedi: serializable olarak değerlendirildi.",
        }
        partial(level, n) {
            en: "{level}: stopped part-way; the {n} transactions recorded so far are checked.",
            tr: "{level}: yarıda durdu; o ana kadar kaydedilen {n} işlem denetlendi.",
        }
        cut_short() {
            en: "A cycle search ran out of its budget: a class may be missing (the history is very entangled).",
            tr: "Bir döngü araması bütçesini aştı: bir sınıf eksik kalmış olabilir (geçmiş çok iç içe).",
        }
        history_at(path) {
            en: "History: {path}",
            tr: "Geçmiş: {path}",
        }
        blind_spot_predicate() {
            en: "Predicate reads here are ranges of keys over a closed set: the rows a range did not return are checked (phantoms, G2); predicates over values are not.",
            tr: "Buradaki koşullu okumalar kapalı bir anahtar kümesi üzerinde anahtar aralıklarıdır: bir aralığın döndürmediği satırlar denetlenir (hayalet satırlar, G2); değerler üzerindeki koşullar denetlenmez.",
        }
        blind_spot_register() {
            en: "rw-register sees dependencies on items only (ww and rw only between versions known to come one before the other): predicate anti-dependencies (G2 proper, phantoms) are not checked.",
            tr: "rw-register yalnızca öğeler üzerindeki bağımlılıkları görür (ww ve rw yalnızca biri ötekinden önce geldiği bilinen sürümler arasında): yüklem anti-bağımlılıkları (asıl G2, hayaletler) denetlenmez.",
        }
        blind_spot() {
            en: "List-append sees dependencies on items only: predicate anti-dependencies (G2 proper, phantoms) are not checked.",
            tr: "List-append yalnızca öğeler üzerindeki bağımlılıkları görür: yüklem anti-bağımlılıkları (asıl G2, hayaletler) denetlenmez.",
        }
    }
}
