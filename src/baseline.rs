//! `--baseline FILE`: a run compared with an earlier run's JSON (the
//! version in production, the provider used today) instead of with the
//! documentation. What is compared, per variant, is what an application
//! relies on and what does not depend on timing: the verdict, whether the
//! anomaly showed, who waited for whom, which SQLSTATEs were raised, and the
//! metrics that count outcomes (not the ones that measure time, sizes or
//! backends), as none, some or below zero: how many duplicates eight
//! workers make depends on the machine, whether they make any does not.
//! A variant one side lacks or skipped is listed, not failed.
use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Result, bail};
use serde_json::Value;

use crate::render::Style;

/// Which command's JSON a baseline is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Scenarios or specs: `lab all`, `lab <scenario>`, `lab spec`.
    Runs,
    /// `lab phenomena`'s matrix, read as a scenario per phenomenon
    /// (`phenomena.<id>`) with a variant per level, as its JUnit has it.
    Phenomena,
}

/// An earlier run's JSON, checked: its server and its scenarios.
#[derive(Debug, Clone)]
pub struct Baseline {
    pub path: String,
    /// How errors name it: `--baseline FILE`, `lab compare FILE`.
    label: String,
    pub server_version: String,
    pub kind: Kind,
    scenarios: Vec<Value>,
}

impl Baseline {
    /// Reads FILE: `lab all --format json` (or `lab spec`'s), or one
    /// scenario's `--format json`. Anything else is refused in one line.
    pub fn load(path: &Path) -> Result<Baseline> {
        Baseline::load_for("--baseline", path)
    }

    /// Reads FILE for `what` (an option, or `lab compare`), which errors name.
    pub fn load_for(what: &str, path: &Path) -> Result<Baseline> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| msg::unreadable(what, shown.clone(), e.to_string()))?;
        let value: Value =
            serde_json::from_str(&text).map_err(|e| msg::not_json(what, shown.clone(), e.to_string()))?;
        let label = format!("{what} {shown}");
        let mut b = Baseline::from_value(&label, value)?;
        (b.path, b.label) = (shown, label);
        Ok(b)
    }

    /// `shown` names it in errors.
    pub fn from_value(shown: &str, value: Value) -> Result<Baseline> {
        if value.get("anomalies").is_some() || value.get("classes").is_some() {
            bail!(msg::other_command(shown));
        }
        let (kind, scenarios) = match (value.get("phenomena"), value.get("scenarios"), value.get("variants")) {
            (Some(Value::Array(rows)), _, _) => (
                Kind::Phenomena,
                phenomena_as_scenarios(rows).ok_or_else(|| msg::not_lab(shown))?,
            ),
            (None, Some(Value::Array(s)), _) => (Kind::Runs, s.clone()),
            (None, None, Some(Value::Array(_))) => (Kind::Runs, vec![value.clone()]),
            _ => bail!(msg::not_lab(shown)),
        };
        let well_formed = |s: &Value| {
            s.get("scenario").is_some_and(Value::is_string)
                && s.get("variants").and_then(Value::as_array).is_some_and(|vs| {
                    vs.iter()
                        .all(|v| v.get("name").is_some_and(Value::is_string) && v.get("as_expected").is_some())
                })
        };
        if !scenarios.iter().all(well_formed) {
            bail!(msg::not_lab(shown));
        }
        Ok(Baseline {
            path: shown.to_string(),
            label: shown.to_string(),
            server_version: value
                .get("server_version")
                .and_then(Value::as_str)
                .unwrap_or("?")
                .to_string(),
            kind,
            scenarios,
        })
    }

    /// Refuses another command's JSON.
    pub fn check_kind(&self, kind: Kind) -> Result<()> {
        if self.kind != kind {
            bail!(msg::other_command(self.label.clone()));
        }
        Ok(())
    }

    /// Refuses a baseline of other scenarios (or specs) than the run's:
    /// another command's JSON, most likely.
    pub fn check_names(&self, names: &[String]) -> Result<()> {
        let theirs: Vec<&str> = self.scenarios.iter().filter_map(|s| s["scenario"].as_str()).collect();
        if !theirs.is_empty() && !theirs.iter().any(|t| names.iter().any(|n| n == t)) {
            bail!(msg::no_common(self.label.clone(), theirs.join(", ")));
        }
        Ok(())
    }
}

/// `lab phenomena`'s rows (`{id, cells: {level: cell}}`) as scenarios of
/// variants, the shape its reports have: what a cell's verdict, SQLSTATE
/// and timeline say, under its level's name.
fn phenomena_as_scenarios(rows: &[Value]) -> Option<Vec<Value>> {
    rows.iter()
        .map(|row| {
            let id = row.get("id")?.as_str()?;
            let variants: Vec<Value> = row
                .get("cells")?
                .as_object()?
                .iter()
                .map(|(level, cell)| {
                    serde_json::json!({
                        "name": level,
                        "as_expected": cell["as_expected"],
                        "anomaly": cell["verdict"] == "occurs",
                        "sqlstates": cell["sqlstate"].as_str().into_iter().collect::<Vec<_>>(),
                        "timeline": cell["timeline"],
                    })
                })
                .collect();
            Some(serde_json::json!({"scenario": format!("phenomena.{id}"), "variants": variants}))
        })
        .collect()
}

/// What is compared of one variant.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Facts {
    pub skipped: Option<String>,
    pub verdict: bool,
    pub anomaly: bool,
    /// `session waited for A, B` per waiting step, in timeline order.
    pub waits: Vec<String>,
    /// The distinct SQLSTATEs raised, sorted (how many times depends on
    /// retries and workers: not compared).
    pub sqlstates: Vec<String>,
    /// Counted outcomes, by name: (as shown, as compared).
    pub metrics: BTreeMap<String, (String, String)>,
}

/// A metric that measures rather than counts: times, sizes, backends,
/// tokens, attempts and retries (which a loaded machine changes), and what
/// finished before what by lab's clock (`sent_before_*`: which of two
/// workers' calls returned first, where the server ordered neither).
fn measures(name: &str) -> bool {
    const PARTS: &[&str] = &[
        "_ms",
        "ms_",
        "_bytes",
        "bytes",
        "backend",
        "pid",
        "token",
        "lag",
        "attempt",
        "retr",
        "elapsed",
        "per_s",
        "rate",
        "latency",
        "lsn",
        "xid",
        "_at",
        "sent_before",
    ];
    PARTS.iter().any(|p| name.contains(p))
}

pub fn facts(variant: &Value) -> Facts {
    let skipped = variant["skipped"]
        .as_bool()
        .unwrap_or(false)
        .then(|| variant["skip_reason"].as_str().unwrap_or("").to_string());
    let waits = variant["timeline"]
        .as_array()
        .map(|t| {
            t.iter()
                .filter_map(|e| {
                    let by: Vec<&str> = e["blocked_by"].as_array()?.iter().filter_map(Value::as_str).collect();
                    (!by.is_empty()).then(|| {
                        let step = e["step"].as_str().map(|s| format!(" ({s})")).unwrap_or_default();
                        format!(
                            "{}{step} waited for {}",
                            e["session"].as_str().unwrap_or("?"),
                            by.join(", ")
                        )
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    let mut sqlstates: Vec<String> = variant["sqlstates"]
        .as_array()
        .map(|s| s.iter().filter_map(|c| c.as_str().map(str::to_string)).collect())
        .unwrap_or_default();
    sqlstates.sort();
    sqlstates.dedup();
    let metrics = variant["metrics"]
        .as_object()
        .map(|m| {
            m.iter()
                .filter(|(k, v)| !measures(k) && (v.is_boolean() || v.is_i64() || v.is_u64() || v.is_string()))
                .map(|(k, v)| {
                    let class = match v.as_i64() {
                        Some(0) => "0".to_string(),
                        Some(n) if n < 0 => "< 0".to_string(),
                        Some(_) => "> 0".to_string(),
                        None if v.is_u64() => "> 0".to_string(),
                        None => v.to_string(),
                    };
                    (k.clone(), (v.to_string(), class))
                })
                .collect()
        })
        .unwrap_or_default();
    Facts {
        skipped,
        verdict: variant["as_expected"].as_bool().unwrap_or(false),
        anomaly: variant["anomaly"].as_bool().unwrap_or(false),
        waits,
        sqlstates,
        metrics,
    }
}

/// One difference: where, what, the baseline's value and the run's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    pub scenario: String,
    pub variant: String,
    pub what: String,
    pub was: String,
    pub now: String,
}

/// A variant not compared, and why (listed, never failed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotCompared {
    pub scenario: String,
    pub variant: String,
    pub why: String,
}

/// The run's scenarios (as JSON) against the baseline's.
pub fn compare(base: &Baseline, now: &[Value]) -> (Vec<Difference>, Vec<NotCompared>) {
    let mut diffs = Vec::new();
    let mut skipped = Vec::new();
    let index = |scenarios: &[Value]| -> BTreeMap<(String, String), Value> {
        scenarios
            .iter()
            .flat_map(|s| {
                let name = s["scenario"].as_str().unwrap_or("").to_string();
                s["variants"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
                    .into_iter()
                    .map(move |v| ((name.clone(), v["name"].as_str().unwrap_or("").to_string()), v))
            })
            .collect()
    };
    let theirs = index(&base.scenarios);
    let ours = index(now);
    let not = |(s, v): &(String, String), why: String| NotCompared {
        scenario: s.clone(),
        variant: v.clone(),
        why,
    };
    for (key, v) in &ours {
        let Some(b) = theirs.get(key) else {
            skipped.push(not(key, "not in the baseline".into()));
            continue;
        };
        let (was, is) = (facts(b), facts(v));
        match (&was.skipped, &is.skipped) {
            (Some(r), _) => {
                skipped.push(not(key, format!("skipped in the baseline: {r}")));
                continue;
            }
            (_, Some(r)) => {
                skipped.push(not(key, format!("skipped now: {r}")));
                continue;
            }
            _ => {}
        }
        // Each fact as (shown, compared): a count is shown as it was and
        // compared as none, some or below zero.
        let mut differ = |what: String, (was, was_key): (String, String), (now, now_key): (String, String)| {
            if was_key != now_key {
                diffs.push(Difference {
                    scenario: key.0.clone(),
                    variant: key.1.clone(),
                    what,
                    was,
                    now,
                });
            }
        };
        let plain = |s: String| (s.clone(), s);
        let verdict = |ok: bool| plain(if ok { "as documented" } else { "NOT as documented" }.to_string());
        let listed = |l: &[String]| plain(if l.is_empty() { "none".to_string() } else { l.join("; ") });
        differ("verdict".into(), verdict(was.verdict), verdict(is.verdict));
        differ(
            "anomaly".into(),
            plain(was.anomaly.to_string()),
            plain(is.anomaly.to_string()),
        );
        differ("waits".into(), listed(&was.waits), listed(&is.waits));
        differ("SQLSTATEs".into(), listed(&was.sqlstates), listed(&is.sqlstates));
        let names: std::collections::BTreeSet<&String> = was.metrics.keys().chain(is.metrics.keys()).collect();
        for name in names {
            let get =
                |m: &BTreeMap<String, (String, String)>| m.get(name).cloned().unwrap_or_else(|| plain("-".into()));
            differ(format!("metric {name}"), get(&was.metrics), get(&is.metrics));
        }
    }
    for key in theirs.keys().filter(|k| !ours.contains_key(*k)) {
        skipped.push(not(key, "in the baseline, not run now".into()));
    }
    (diffs, skipped)
}

/// The comparison as a person reads it: each difference side by side,
/// then what was not compared.
pub fn render(
    base: &Baseline,
    now_version: &str,
    diffs: &[Difference],
    skipped: &[NotCompared],
    style: &Style,
) -> String {
    let lang = style.lang;
    let mut out = String::new();
    if diffs.is_empty() {
        out.push_str(&msg::same(base.path.clone(), base.server_version.clone(), now_version).render(lang));
        out.push('\n');
    } else {
        out.push_str(
            &msg::differs(diffs.len(), base.path.clone(), base.server_version.clone(), now_version).render(lang),
        );
        out.push('\n');
        let mut t = crate::render::table(
            vec![
                "scenario / variant".to_string(),
                "what".to_string(),
                format!("baseline ({})", base.server_version),
                format!("now ({now_version})"),
            ],
            style,
        );
        for d in diffs {
            t.add_row(vec![
                format!("{} / {}", d.scenario, d.variant),
                d.what.clone(),
                d.was.clone(),
                d.now.clone(),
            ]);
        }
        out.push_str(&t.to_string());
        out.push('\n');
    }
    for s in skipped {
        out.push_str(&msg::not_compared(format!("{} / {}", s.scenario, s.variant), s.why.clone()).render(lang));
        out.push('\n');
    }
    out
}

/// Several runs side by side (one per server version, or per provider):
/// a row per variant, a column per run with its verdict, anomaly and
/// SQLSTATEs, and the rows where the runs differ marked with what differs
/// and on which servers. `only_differences` leaves out the rows that agree.
pub struct SideBySide {
    pub header: Vec<String>,
    /// Scenario / variant, a cell per run, and what differs ("" if nothing).
    pub rows: Vec<Vec<String>>,
    /// Rows whose runs differ (skips included).
    pub differing: usize,
}

pub fn side_by_side(runs: &[Baseline], only_differences: bool) -> SideBySide {
    let mut keys: Vec<(String, String)> = Vec::new();
    let mut cells: BTreeMap<(String, String), Vec<Option<Facts>>> = BTreeMap::new();
    for (i, run) in runs.iter().enumerate() {
        for sc in &run.scenarios {
            let name = sc["scenario"].as_str().unwrap_or("").to_string();
            for v in sc["variants"].as_array().into_iter().flatten() {
                let key = (name.clone(), v["name"].as_str().unwrap_or("").to_string());
                if !cells.contains_key(&key) {
                    keys.push(key.clone());
                }
                cells.entry(key).or_insert_with(|| vec![None; runs.len()])[i] = Some(facts(v));
            }
        }
    }
    let versions: Vec<String> = runs.iter().map(|r| r.server_version.clone()).collect();
    let mut header = vec!["scenario / variant".to_string()];
    header.extend(versions.iter().cloned());
    header.push("differs".to_string());
    let mut rows = Vec::new();
    let mut differing = 0;
    for key in keys {
        let facts = &cells[&key];
        let why = differences(facts, &versions);
        if !why.is_empty() {
            differing += 1;
        } else if only_differences {
            continue;
        }
        let mut row = vec![format!("{} / {}", key.0, key.1)];
        row.extend(facts.iter().map(|f| match f {
            None => "-".to_string(),
            Some(f) if f.skipped.is_some() => "skipped".to_string(),
            Some(f) => {
                let mut c = String::from(if f.verdict { "✔" } else { "✖" });
                if f.anomaly {
                    c.push_str(" anomaly");
                }
                if !f.sqlstates.is_empty() {
                    c.push(' ');
                    c.push_str(&f.sqlstates.join(","));
                }
                c
            }
        }));
        row.push(why);
        rows.push(row);
    }
    SideBySide {
        header,
        rows,
        differing,
    }
}

/// What differs between the runs of one variant, each aspect with its
/// values and the servers that gave each: `SQLSTATEs: none (12.22) | 40001 (13.23, 14.23)`.
fn differences(facts: &[Option<Facts>], versions: &[String]) -> String {
    // Each aspect of a run that ran (a skipped run has only the first).
    type Aspect = fn(&Facts) -> String;
    let aspects: [(&str, Aspect); 6] = [
        ("runs", |f| {
            if f.skipped.is_some() { "skipped" } else { "runs" }.to_string()
        }),
        ("verdict", |f| {
            if f.verdict {
                "as documented"
            } else {
                "NOT as documented"
            }
            .to_string()
        }),
        ("anomaly", |f| f.anomaly.to_string()),
        ("waits", |f| {
            if f.waits.is_empty() {
                "none".into()
            } else {
                f.waits.join("; ")
            }
        }),
        ("SQLSTATEs", |f| {
            if f.sqlstates.is_empty() {
                "none".into()
            } else {
                f.sqlstates.join(", ")
            }
        }),
        ("metrics", |f| {
            f.metrics
                .iter()
                .map(|(k, (_, class))| format!("{k} {class}"))
                .collect::<Vec<_>>()
                .join(", ")
        }),
    ];
    let mut out = Vec::new();
    for (i, (name, aspect)) in aspects.iter().enumerate() {
        // Values in the order first seen, each with the servers that gave it.
        let mut seen: Vec<(String, Vec<&str>)> = Vec::new();
        for (f, v) in facts.iter().zip(versions) {
            let Some(f) = f.as_ref().filter(|f| i == 0 || f.skipped.is_none()) else {
                continue;
            };
            let value = aspect(f);
            match seen.iter_mut().find(|(x, _)| *x == value) {
                Some((_, vs)) => vs.push(v),
                None => seen.push((value, vec![v])),
            }
        }
        if seen.len() > 1 {
            let parts: Vec<String> = seen
                .iter()
                .map(|(value, vs)| format!("{value} ({})", vs.join(", ")))
                .collect();
            let mut line = format!("{name}: {}", parts.join(" | "));
            // Why, in the words of the first run that skipped it.
            if let Some(why) = (i == 0)
                .then(|| facts.iter().flatten().find_map(|f| f.skipped.clone()))
                .flatten()
                .filter(|w| !w.is_empty())
            {
                line.push_str(&format!(": {why}"));
            }
            out.push(line);
        }
    }
    out.join("; ")
}

impl SideBySide {
    /// As a table for a terminal.
    pub fn table(&self, style: &Style) -> String {
        let mut t = crate::render::table(self.header.clone(), style);
        for r in &self.rows {
            t.add_row(r.clone());
        }
        t.to_string()
    }

    /// As a Markdown table (docs/CI.md's version table).
    pub fn markdown(&self) -> String {
        let line = |cells: &[String]| {
            format!(
                "| {} |\n",
                cells
                    .iter()
                    .map(|c| c.replace('|', "\\|"))
                    .collect::<Vec<_>>()
                    .join(" | ")
            )
        };
        let mut out = line(&self.header);
        out.push_str(&line(
            &self.header.iter().map(|_| "---".to_string()).collect::<Vec<_>>(),
        ));
        for r in &self.rows {
            out.push_str(&line(r));
        }
        out
    }
}

pub mod msg {
    crate::messages! {
        prefix "bl";
        unreadable(what, path, error) {
            en: "{what} {path}: cannot read it: {error}",
            tr: "{what} {path}: okunamıyor: {error}",
        }
        not_json(what, path, error) {
            en: "{what} {path}: not JSON: {error}",
            tr: "{what} {path}: JSON değil: {error}",
        }
        not_lab(path) {
            en: "{path}: not the JSON of a lab run (`lab all --format json`, a scenario's or `lab spec`'s)",
            tr: "{path}: bir lab çalıştırmasının JSON'u değil (`lab all --format json`, bir senaryonun ya da `lab spec`'inki)",
        }
        other_command(path) {
            en: "{path}: the JSON of another command: compare a run with one of its own kind (lab all, a scenario or lab spec; lab phenomena)",
            tr: "{path}: başka bir komutun JSON'u: bir çalıştırmayı kendi türünden biriyle karşılaştırın (lab all, bir senaryo ya da lab spec; lab phenomena)",
        }
        no_common(path, names) {
            en: "{path}: none of its scenarios ({names}) is in this run: the JSON of another command?",
            tr: "{path}: senaryolarının hiçbiri ({names}) bu çalıştırmada yok: başka bir komutun JSON'u mu?",
        }
        same(path, was, now) {
            en: "the same as the baseline {path} (PostgreSQL {was}; now {now}): verdicts, waits, SQLSTATEs and counted metrics",
            tr: "{path} taban çizgisiyle aynı (PostgreSQL {was}; şimdi {now}): hükümler, beklemeler, SQLSTATE'ler ve sayılan metrikler",
        }
        differs(n, path, was, now) {
            en: "{n} differences from the baseline {path} (PostgreSQL {was}; now {now}):",
            tr: "{path} taban çizgisinden {n} fark (PostgreSQL {was}; şimdi {now}):",
        }
        mixed(a, b) {
            en: "lab compare: {a} and {b} are runs of different commands (lab all, a scenario or lab spec; lab phenomena): compare runs of one kind",
            tr: "lab compare: {a} ve {b} farklı komutların çalıştırmaları (lab all, bir senaryo ya da lab spec; lab phenomena): tek türden çalıştırmaları karşılaştırın",
        }
        compared(runs, differing) {
            en: "{runs} runs compared: {differing} variant(s) differ",
            tr: "{runs} çalıştırma karşılaştırıldı: {differing} varyant farklı",
        }
        compared_cells(runs, differing) {
            en: "{runs} runs compared: {differing} cell(s) of the matrix differ",
            tr: "{runs} çalıştırma karşılaştırıldı: matrisin {differing} hücresi farklı",
        }
        not_compared(variant, why) {
            en: "not compared: {variant}: {why}",
            tr: "karşılaştırılmadı: {variant}: {why}",
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_matrix_cell_is_a_variant_of_its_phenomenon() {
        let m = json!({"server_version": "15.18", "levels": ["read-committed"], "phenomena": [
            {"id": "g0", "name": "Dirty write", "cells": {"read-committed": {
                "verdict": "prevented", "how": "blocked", "sqlstate": null, "as_expected": true,
                "timeline": [{"session": "T2", "step": "t2_w", "blocked_by": ["T1"]}]}}}]});
        let base = Baseline::from_value("m.json", m).unwrap();
        let now = vec![
            json!({"scenario": "phenomena.g0", "variants": [{"name": "read-committed",
            "as_expected": true, "anomaly": true, "sqlstates": [], "timeline": []}]}),
        ];
        let (d, _) = compare(&base, &now);
        let what: Vec<&str> = d.iter().map(|d| d.what.as_str()).collect();
        assert_eq!(what, vec!["anomaly", "waits"]);
        assert_eq!(d[1].was, "T2 (t2_w) waited for T1");
    }

    use super::*;
    use serde_json::json;

    fn run(variants: Value) -> Value {
        json!({"server_version": "15.18", "as_expected": true, "elapsed_ms": 1.0,
               "scenarios": [{"scenario": "lost-update", "server_version": "15.18", "as_expected": true,
                              "elapsed_ms": 1.0, "variants": variants}]})
    }

    fn variant(name: &str, ok: bool, blocked: Option<&str>, codes: &[&str], metrics: Value) -> Value {
        let mut timeline = vec![json!({"t_ms": 1.0, "session": "A", "step": "a1", "sql": "UPDATE", "result": "ok"})];
        if let Some(by) = blocked {
            timeline.push(
                json!({"t_ms": 2.0, "session": "B", "step": "b1", "sql": "UPDATE", "result": "ok", "blocked_by": [by]}),
            );
        }
        json!({"name": name, "as_expected": ok, "anomaly": !ok, "sqlstates": codes, "metrics": metrics,
               "timeline": timeline, "skipped": false})
    }

    fn scenarios(v: &Value) -> Vec<Value> {
        v["scenarios"].as_array().unwrap().clone()
    }

    #[test]
    fn the_same_run_differs_in_nothing_timing_aside() {
        let a = run(json!([variant(
            "anomaly",
            true,
            Some("A"),
            &["40001", "40001"],
            json!({"lost": 1, "duplicates": 32, "b_wait_ms": 12.5, "a_backend": 123})
        )]));
        let b = run(json!([variant(
            "anomaly",
            true,
            Some("A"),
            &["40001"],
            json!({"lost": 1, "duplicates": 30, "b_wait_ms": 99.0, "a_backend": 456})
        )]));
        let base = Baseline::from_value("a.json", a).unwrap();
        let (d, s) = compare(&base, &scenarios(&b));
        assert!(d.is_empty(), "{d:?}");
        assert!(s.is_empty(), "{s:?}");
    }

    #[test]
    fn a_verdict_a_wait_a_sqlstate_and_a_count_that_changed_are_each_listed() {
        let a = run(json!([variant("fix", true, Some("A"), &["40001"], json!({"lost": 0}))]));
        let b = run(json!([variant("fix", false, None, &[], json!({"lost": 1}))]));
        let base = Baseline::from_value("a.json", a).unwrap();
        let (d, _) = compare(&base, &scenarios(&b));
        let what: Vec<&str> = d.iter().map(|d| d.what.as_str()).collect();
        assert_eq!(what, vec!["verdict", "anomaly", "waits", "SQLSTATEs", "metric lost"]);
        assert_eq!(d[2].was, "B (b1) waited for A");
        assert_eq!(d[2].now, "none");
    }

    #[test]
    fn runs_side_by_side_mark_what_differs_and_where() {
        let at = |version: &str, v: Value| {
            let mut r = run(json!([v, variant("same", true, None, &[], json!({}))]));
            r["server_version"] = json!(version);
            Baseline::from_value("x.json", r).unwrap()
        };
        let mut skipped = variant("fix", true, None, &[], json!({}));
        skipped["skipped"] = json!(true);
        skipped["skip_reason"] = json!("needs PostgreSQL 17");
        let runs = [
            at("12.22", skipped),
            at("13.23", variant("fix", true, Some("A"), &["40001"], json!({}))),
            at("14.23", variant("fix", true, Some("A"), &["40P01"], json!({}))),
        ];
        let all = side_by_side(&runs, false);
        assert_eq!(all.header, ["scenario / variant", "12.22", "13.23", "14.23", "differs"]);
        assert_eq!(all.differing, 1);
        assert_eq!(all.rows.len(), 2);
        let fix = &all.rows[0];
        assert_eq!(fix[..4], ["lost-update / fix", "skipped", "✔ 40001", "✔ 40P01"]);
        assert_eq!(
            fix[4],
            "runs: skipped (12.22) | runs (13.23, 14.23): needs PostgreSQL 17; SQLSTATEs: 40001 (13.23) | 40P01 (14.23)"
        );
        assert_eq!(all.rows[1][4], "", "the variant that agrees");
        let only = side_by_side(&runs, true);
        assert_eq!(only.rows.len(), 1);
        let md = only.markdown();
        assert!(
            md.starts_with("| scenario / variant | 12.22 | 13.23 | 14.23 | differs |\n| --- |"),
            "{md}"
        );
    }

    #[test]
    fn a_variant_one_side_lacks_or_skipped_is_listed_not_failed() {
        let mut skipped = variant("timeout", true, None, &[], json!({}));
        skipped["skipped"] = json!(true);
        skipped["skip_reason"] = json!("PostgreSQL 17 and later");
        let a = run(json!([skipped, variant("old", true, None, &[], json!({}))]));
        let b = run(json!([
            variant("timeout", false, None, &[], json!({})),
            variant("new", true, None, &[], json!({}))
        ]));
        let base = Baseline::from_value("a.json", a).unwrap();
        let (d, s) = compare(&base, &scenarios(&b));
        assert!(d.is_empty(), "{d:?}");
        let why: Vec<String> = s.iter().map(|n| format!("{}: {}", n.variant, n.why)).collect();
        assert_eq!(
            why,
            vec![
                "new: not in the baseline",
                "timeout: skipped in the baseline: PostgreSQL 17 and later",
                "old: in the baseline, not run now"
            ]
        );
    }

    #[test]
    fn other_json_is_refused() {
        let matrix = Baseline::from_value("x", json!({"phenomena": []})).unwrap();
        assert!(matrix.check_kind(Kind::Runs).is_err());
        assert!(matrix.check_kind(Kind::Phenomena).is_ok());
        assert!(Baseline::from_value("x", json!({"classes": []})).is_err());
        assert!(Baseline::from_value("x", json!([1, 2])).is_err());
        assert!(Baseline::from_value("x", json!({"scenarios": [{"scenario": 1}]})).is_err());
        let one = json!({"scenario": "lost-update", "server_version": "15", "variants": [{"name": "a", "as_expected": true}]});
        let b = Baseline::from_value("x", one).unwrap();
        assert!(b.check_names(&["lost-update".into()]).is_ok());
        assert!(b.check_names(&["g0".into()]).is_err());
    }
}
