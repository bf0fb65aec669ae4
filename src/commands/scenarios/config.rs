//! `lab <scenario>` and `lab all`: the command line (and the environment)
//! checked into a run's configuration. Pure: it reads no file and no
//! terminal (the job does, where the run starts), so it is unit-tested
//! without I/O.
use std::time::Duration;

use anyhow::{Result, bail};

use super::args::RunArgs;
use super::{Params, Scenario, Variant};
use crate::i18n::{Context, Lang};
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
}
