//! `lab <scenario>` and `lab all`: the command line (and the environment)
//! checked into a run's configuration. Pure: it reads no file and no
//! terminal (the job does, where the run starts), so it is unit-tested
//! without I/O.
use std::time::Duration;

use anyhow::{Result, bail};

use super::args::RunArgs;
use super::{Params, Scenario, Variant};
use crate::i18n::{Context, Lang, Text};
use crate::options::{self, Format, LabDirArgs, ServerWanted, Shared, msg as omsg};
use crate::retry::RetryPolicy;

/// One scenario of a run: the variants to run, with its options.
pub struct Planned {
    pub scenario: &'static Scenario,
    pub variants: Vec<&'static Variant>,
    pub params: Params,
}

/// A checked configuration for one `lab <scenario>` or `lab all` run.
pub struct RunConfig {
    pub shared: Shared,
    pub explain: bool,
    pub schema: String,
    pub keep_schema: bool,
    pub format: Format,
    /// Only the verdict table.
    pub summary: bool,
    /// Every step of long timelines.
    pub verbose: bool,
    /// The most connections the run may use, the control connection included.
    pub max_connections: Option<usize>,
    /// Scenarios run at once (`lab all`).
    pub jobs: usize,
    /// Sessions go through lab's own PgBouncer (transaction mode).
    pub pooler: bool,
    /// The timeout the timeout-demonstrating steps set (`--timeout-ms`).
    pub timeout: Duration,
    pub retry: RetryPolicy,
    /// Edited copies of lab's files.
    pub lab_dir: LabDirArgs,
    /// The scenarios to run, in order.
    pub plan: Vec<Planned>,
    /// `--require`: variants whose skip fails the run.
    pub require: Vec<Required>,
}

/// What `--require` names: a skip of it is a failure (exit 1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Required {
    /// Every variant the run runs.
    All,
    Scenario(&'static str),
    Variant(&'static str, &'static str),
}

impl Required {
    pub fn covers(&self, scenario: &str, variant: &str) -> bool {
        match self {
            Required::All => true,
            Required::Scenario(s) => *s == scenario,
            Required::Variant(s, v) => *s == scenario && *v == variant,
        }
    }
}

/// `--require`'s values, each checked against what the run plans: `all`,
/// SCENARIO, SCENARIO/VARIANT, or (one scenario planned) VARIANT. Naming
/// something the run does not run is bad input: the CI would pass without it.
fn required(given: &[String], plan: &[Planned]) -> Result<Vec<Required>> {
    let planned = |s: &str| plan.iter().find(|p| p.scenario.name == s);
    let variant_of = |p: &Planned, v: &str| p.variants.iter().find(|x| x.name == v).map(|x| x.name);
    let runs = || {
        plan.iter()
            .flat_map(|p| {
                p.variants
                    .iter()
                    .map(move |v| format!("{}/{}", p.scenario.name, v.name))
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    given
        .iter()
        .map(|w| {
            let w = w.trim();
            let found = match w.split_once('/') {
                _ if w == "all" => Some(Required::All),
                Some((s, v)) => planned(s).and_then(|p| Some(Required::Variant(p.scenario.name, variant_of(p, v)?))),
                None => match (planned(w), plan) {
                    (Some(p), _) => Some(Required::Scenario(p.scenario.name)),
                    (None, [only]) => variant_of(only, w).map(|v| Required::Variant(only.scenario.name, v)),
                    (None, _) => None,
                },
            };
            found.ctx(|| msg::require_not_run(w, runs()))
        })
        .collect()
}

/// The required variants the run skipped, one line per scenario and
/// reason (`scenario: a, b: why`), each marked not as expected (with its
/// scenario): the run then exits 1. None when nothing required was skipped.
pub fn required_skipped(require: &[Required], reports: &mut [crate::report::ScenarioReport]) -> Vec<Text> {
    let mut lines: Vec<(String, Text, Vec<String>)> = Vec::new();
    for r in reports.iter_mut() {
        for v in r.variants.iter_mut() {
            let Some(why) = &v.skipped else { continue };
            if !require.iter().any(|q| q.covers(&r.scenario, &v.name)) {
                continue;
            }
            v.as_expected = false;
            r.as_expected = false;
            match lines.iter_mut().find(|(s, w, _)| *s == r.scenario && w == why) {
                Some((_, _, names)) => names.push(v.name.clone()),
                None => lines.push((r.scenario.clone(), why.clone(), vec![v.name.clone()])),
            }
        }
    }
    lines
        .into_iter()
        .map(|(scenario, why, names)| msg::required_skipped(scenario, names.join(", "), why))
        .collect()
}

/// Scenarios `lab all` runs at once by default: they mostly wait on the server.
pub const DEFAULT_JOBS: usize = 4;

/// The fewest connections a run can work with: the control connection and two sessions.
pub const MIN_CONNECTIONS: usize = 3;

impl RunConfig {
    /// `lab <scenario>`: its variants (all unless --variant), its options.
    pub fn for_scenario(scenario: &'static Scenario, args: &RunArgs, params: Params, lang: Lang) -> Result<RunConfig> {
        let mut variants = select_variants(scenario, &args.variants)?;
        if let Some(o) = &scenario.options {
            let runs = |v: &&Variant| (o.selects)(&params, v.name);
            // A variant named with --variant that the options leave out is a contradiction.
            if let Some(v) = variants.iter().find(|v| !runs(v))
                && !args.variants.is_empty()
            {
                let kept: Vec<&str> = scenario.variants.iter().filter(runs).map(|v| v.name).collect();
                bail!(msg::not_selected(v.name, scenario.name, kept.join(", ")));
            }
            variants.retain(runs);
        }
        RunConfig::new(
            args,
            vec![Planned {
                scenario,
                variants,
                params,
            }],
            lang,
        )
    }

    /// `lab all`: every scenario (or those `--variant SCENARIO[/VARIANT]`
    /// names), every variant unless named, default options.
    pub fn for_all(args: &RunArgs, lang: Lang) -> Result<RunConfig> {
        let mut wanted: Vec<(&'static Scenario, Option<String>)> = Vec::new();
        for w in &args.variants {
            let (name, variant) = match w.split_once('/') {
                Some((s, v)) => (s, Some(v.to_string())),
                None => (w.as_str(), None),
            };
            let scenario = super::find(name).ctx(|| msg::variant_with_all(w))?;
            wanted.push((scenario, variant));
        }
        let plan = super::ALL
            .iter()
            .copied()
            .filter(|s| match wanted.is_empty() {
                // Only when named: see ON_REQUEST.
                true => !super::ON_REQUEST.contains(&s.name),
                false => wanted.iter().any(|(w, _)| std::ptr::eq(*w, *s)),
            })
            .map(|s| {
                let mine: Vec<&Option<String>> = wanted
                    .iter()
                    .filter(|(w, _)| std::ptr::eq(*w, s))
                    .map(|(_, v)| v)
                    .collect();
                // A bare scenario name selects all of its variants.
                let names: Vec<String> = if mine.iter().any(|v| v.is_none()) {
                    Vec::new()
                } else {
                    mine.into_iter().flatten().cloned().collect()
                };
                Ok(Planned {
                    scenario: s,
                    variants: select_variants(s, &names)?,
                    params: s.default_params()?,
                })
            })
            .collect::<Result<_>>()?;
        RunConfig::new(args, plan, lang)
    }

    fn new(args: &RunArgs, plan: Vec<Planned>, lang: Lang) -> Result<RunConfig> {
        let wait = args.common.wait.wait_timeout.unwrap_or(10.0);
        if !(wait.is_finite() && wait > 0.0 && wait <= 3600.0) {
            bail!(msg::wait_timeout());
        }
        if args.retry_attempts == 0 || args.retry_attempts > 100 {
            bail!(omsg::between("--retry-attempts", 1, 100));
        }
        if args.retry_base_ms > args.retry_cap_ms || args.retry_cap_ms > 60_000 {
            bail!(msg::retry_base());
        }
        if args.timeout_ms < 10 || args.timeout_ms > 60_000 {
            bail!(omsg::between("--timeout-ms", 10, 60_000));
        }
        if Duration::from_millis(args.timeout_ms) * 3 > Duration::from_secs_f64(wait) {
            bail!(msg::wait_vs_timeout());
        }
        // A person is in the loop: the deadlines wait for them too.
        let wait_timeout = if args.step {
            Duration::from_secs_f64(wait).max(Duration::from_secs(3600))
        } else {
            Duration::from_secs_f64(wait)
        };
        let names = plan.iter().map(|p| p.scenario.name.to_string()).collect();
        Ok(RunConfig {
            shared: Shared {
                step: args.step,
                predict: args.predict,
                baseline: args
                    .baseline
                    .baseline
                    .clone()
                    .map(|p| (p, names, crate::baseline::Kind::Runs)),
                ..Shared::new(lang, ServerWanted::of(&args.common.server), wait_timeout).reports(&args.common.reports)
            },
            explain: args.explain,
            schema: options::check_schema(&args.schema.name.schema)?,
            keep_schema: args.schema.keep_schema,
            format: args.format,
            summary: args.summary,
            verbose: args.verbose,
            jobs: match args.jobs.jobs {
                Some(0) => bail!(omsg::between("--jobs", 1, 64)),
                // A person steps through one scenario at a time.
                Some(_) if args.step => 1,
                Some(n) => n.min(64),
                None if args.step || args.max_connections.is_some() => 1,
                None => DEFAULT_JOBS,
            },
            pooler: args.pooler,
            max_connections: match args.max_connections {
                Some(n) if n < MIN_CONNECTIONS => bail!(msg::too_few_connections(n, MIN_CONNECTIONS)),
                n => n,
            },
            timeout: Duration::from_millis(args.timeout_ms),
            retry: RetryPolicy {
                max_attempts: args.retry_attempts,
                base: Duration::from_millis(args.retry_base_ms),
                cap: Duration::from_millis(args.retry_cap_ms),
            },
            lab_dir: args.lab_dir.clone(),
            require: required(&args.require, &plan)?,
            plan,
        })
    }
}

fn select_variants(s: &'static Scenario, wanted: &[String]) -> Result<Vec<&'static Variant>> {
    if wanted.is_empty() {
        return Ok(s.variants.iter().collect());
    }
    let mut out: Vec<&'static Variant> = Vec::new();
    for w in wanted {
        let v = s
            .variant(w)
            .ctx(|| msg::unknown_variant(w, s.name, s.variant_names().join(", ")))?;
        if !out.iter().any(|x| std::ptr::eq(*x, v)) {
            out.push(v);
        }
    }
    // Variants run in their documented order whatever order they were named in.
    out.sort_by_key(|v| s.variants.iter().position(|x| std::ptr::eq(x, *v)));
    Ok(out)
}

pub(crate) mod msg {
    crate::messages! {
        prefix "sc";
        variant_with_all(given) {
            en: "unknown scenario in --variant '{given}': with `lab all` it is SCENARIO or SCENARIO/VARIANT (see lab list)",
            tr: "--variant '{given}' içinde bilinmeyen senaryo: `lab all` ile SENARYO ya da SENARYO/VARYANT olur (bkz. lab list)",
        }
        wait_timeout() {
            en: "--wait-timeout must be a number of seconds, more than 0 and at most 3600",
            tr: "--wait-timeout 0'dan büyük, en çok 3600 olan bir saniye değeri olmalı",
        }
        retry_base() {
            en: "--retry-base-ms must not exceed --retry-cap-ms, which must be at most 60000",
            tr: "--retry-base-ms, --retry-cap-ms'i aşmamalı; o da en fazla 60000 olabilir",
        }
        wait_vs_timeout() {
            en: "--wait-timeout must be at least three times --timeout-ms, so a timeout is seen before the deadline",
            tr: "--wait-timeout en az --timeout-ms'in üç katı olmalı, zaman aşımı son tarihten önce görülsün diye",
        }
        not_selected(variant, scenario, variants) {
            en: "variant '{variant}' of {scenario} is not one its options run (they run: {variants})",
            tr: "{scenario} senaryosunun '{variant}' varyantı seçeneklerinin çalıştırdıklarından değil (çalıştırdıkları: {variants})",
        }
        unknown_variant(variant, scenario, variants) {
            en: "unknown variant '{variant}' of {scenario} (its variants: {variants})",
            tr: "{scenario} senaryosunun bilinmeyen varyantı '{variant}' (varyantları: {variants})",
        }
        require_not_run(given, runs) {
            en: "--require '{given}' names nothing this run runs: use all, SCENARIO, SCENARIO/VARIANT or, for one scenario, VARIANT (it runs: {runs})",
            tr: "--require '{given}' bu çalıştırmanın çalıştırdığı hiçbir şeyi adlandırmıyor: all, SENARYO, SENARYO/VARYANT ya da tek senaryo için VARYANT kullanın (çalıştırdıkları: {runs})",
        }
        required_skipped(scenario, variants, why) {
            en: "required but skipped (--require): {scenario}: {variants}: {why}",
            tr: "gerekli ama atlandı (--require): {scenario}: {variants}: {why}",
        }
        too_few_connections(n, min) {
            en: "--max-connections {n} is too few: a run needs at least {min} (the control connection and two sessions)",
            tr: "--max-connections {n} çok az: bir çalıştırma en az {min} bağlantı ister (kontrol bağlantısı ve iki oturum)",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variants_are_checked_and_kept_in_documented_order() {
        let info = super::super::find("lost-update").unwrap();
        let v = select_variants(info, &["atomic-update".into(), "read-committed".into()]).unwrap();
        let names: Vec<&str> = v.iter().map(|v| v.name).collect();
        assert_eq!(names, vec!["read-committed", "atomic-update"]);
        let err = crate::i18n::error_line(&select_variants(info, &["nope".into()]).unwrap_err(), Lang::En);
        assert!(
            err.contains("unknown variant 'nope'") && err.contains("read-committed"),
            "{err}"
        );
        assert_eq!(select_variants(info, &[]).unwrap().len(), info.variants.len());
    }

    fn planned(name: &str, variants: &[&str]) -> Planned {
        let s = super::super::find(name).unwrap();
        let names: Vec<String> = variants.iter().map(|v| v.to_string()).collect();
        Planned {
            scenario: s,
            variants: select_variants(s, &names).unwrap(),
            params: s.default_params().unwrap(),
        }
    }

    fn given(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn require_names_what_the_run_runs() {
        let two = [planned("pooler", &[]), planned("lost-update", &["read-committed"])];
        assert_eq!(
            required(&given(&["all", "pooler", "lost-update/read-committed"]), &two).unwrap(),
            vec![
                Required::All,
                Required::Scenario("pooler"),
                Required::Variant("lost-update", "read-committed")
            ]
        );
        // Not in the run: a scenario left out, a variant not planned, a
        // bare variant name with two scenarios, a typo.
        for bad in [
            "replica",
            "lost-update/atomic-update",
            "set-leak",
            "pooler/nope",
            "alll",
        ] {
            let err = crate::i18n::error_line(&required(&given(&[bad]), &two).unwrap_err(), Lang::En);
            assert!(
                err.starts_with(&format!("--require '{bad}' names nothing this run runs")),
                "{err}"
            );
            assert!(err.contains("pooler/set-leak, "), "{err}");
        }
        // One scenario: its variants by their own names.
        let one = [planned("pooler", &[])];
        assert_eq!(
            required(&given(&["set-leak"]), &one).unwrap(),
            vec![Required::Variant("pooler", "set-leak")]
        );
        assert!(Required::Scenario("pooler").covers("pooler", "set-leak"));
        assert!(!Required::Variant("pooler", "set-local").covers("pooler", "set-leak"));
        assert!(Required::All.covers("replica", "stale-read"));
    }

    #[test]
    fn a_required_skip_fails_and_is_named_with_why() {
        use crate::report::{ScenarioReport, VariantReport};
        mod t {
            crate::messages! {
                prefix "zr";
                none() { en: "-", tr: "-" }
                no_pgbouncer() { en: "no pgbouncer", tr: "pgbouncer yok" }
                no_pgpool() { en: "no pgpool", tr: "pgpool yok" }
            }
        }
        let variant = |name: &str, skipped: Option<fn() -> Text>| {
            let mut v = VariantReport::new(name, t::none(), t::none());
            v.skipped = skipped.map(|f| f());
            v
        };
        let mut reports = vec![
            ScenarioReport::new("pooler", "15"),
            ScenarioReport::new("replica", "15"),
        ];
        reports[0].variants = vec![
            variant("set-leak", Some(t::no_pgbouncer)),
            variant("set-local", Some(t::no_pgbouncer)),
            variant("listen-direct", None),
        ];
        reports[1].variants = vec![variant("pgpool-stale-read", Some(t::no_pgpool))];
        // Not required: the skips pass.
        let mut kept = reports.clone();
        assert!(required_skipped(&[Required::Scenario("lost-update")], &mut kept).is_empty());
        assert!(kept.iter().all(|r| r.as_expected));
        let lines = required_skipped(&[Required::Scenario("pooler")], &mut reports);
        let lines: Vec<String> = lines.iter().map(|t| t.render(Lang::En)).collect();
        assert_eq!(
            lines,
            ["required but skipped (--require): pooler: set-leak, set-local: no pgbouncer"]
        );
        assert!(!reports[0].as_expected && !reports[0].variants[0].as_expected);
        assert!(reports[0].variants[2].as_expected && reports[1].as_expected);
        let lines = required_skipped(&[Required::All], &mut reports);
        assert_eq!(lines.len(), 2);
        assert!(
            lines[1]
                .render(Lang::Tr)
                .starts_with("gerekli ama atlandı (--require): replica: pgpool-stale-read")
        );
    }
}
