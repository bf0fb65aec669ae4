//! `lab explore`: the command line (and the environment) checked into a
//! run's configuration. Pure: the spec is found and read, and its
//! permutations planned, where the run starts (the job).
use anyhow::{Result, bail};

use super::Choice;
use super::args::ExploreArgs;
use super::msg as emsg;
use crate::commands::phenomena;
use crate::engine::Jobs;
use crate::i18n::Lang;
use crate::options::{self, LabDirArgs, ServerWanted, Shared, SpecFormat};
use crate::postgres::conninfo::EnvLookup;

/// A checked `lab explore` command line.
pub struct ExploreRun {
    pub shared: Shared,
    /// A spec file, or a lab scenario or phenomenon.
    pub spec: String,
    pub lab_dir: LabDirArgs,
    /// `--step --class N`: the class whose representative a person steps through.
    pub step_class: Option<usize>,
    pub format: SpecFormat,
    pub sample: Option<(usize, u64)>,
    pub choice: Choice,
    pub jobs: Jobs,
}

impl ExploreRun {
    pub fn new(args: &ExploreArgs, env: EnvLookup<'_>, lang: Lang) -> Result<ExploreRun> {
        let wait_timeout = options::deadline(args.common.wait.wait_timeout.unwrap_or(10.0))?;
        if args.jobs.jobs == Some(0) {
            bail!(emsg::jobs());
        }
        if args.sample == Some(0) {
            bail!(emsg::sample_zero());
        }
        let isolation = args.format == SpecFormat::Isolation;
        if isolation && !args.level.is_empty() {
            bail!(emsg::isolation_level());
        }
        let mut levels: Vec<Option<usize>> = Vec::new();
        for l in &args.level {
            if l == "all" {
                levels.extend((0..phenomena::LEVELS.len()).map(Some));
            } else {
                levels.push(Some(phenomena::level(l)?));
            }
        }
        levels.dedup();
        if isolation {
            levels = vec![None];
        } else if levels.is_empty() {
            levels = (0..phenomena::LEVELS.len()).map(Some).collect();
        }
        if args.step && args.class == 0 {
            bail!(emsg::step_one());
        }
        let sample = args.sample.map(|n| (n, args.seed));
        Ok(ExploreRun {
            shared: Shared {
                step: args.step,
                ..Shared::new(lang, ServerWanted::of(&args.common.server), wait_timeout).reports(&args.common.reports)
            },
            spec: args.spec.clone(),
            lab_dir: args.lab_dir.clone(),
            step_class: args.step.then_some(args.class),
            format: args.format,
            sample,
            choice: Choice {
                levels,
                all: args.all_permutations,
                sample,
                isolation,
                options: crate::commands::spec::startup_options(
                    env("PGDATESTYLE").as_deref(),
                    env("PGTZ").as_deref(),
                    env("PGOPTIONS").as_deref(),
                    false,
                ),
            },
            jobs: Jobs::of(args.jobs.jobs, options::cores() * 2, options::cores()),
        })
    }
}
