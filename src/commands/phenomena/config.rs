//! `lab phenomena`: the command line checked into a run's configuration.
//! Pure: the phenomena's specs are read where the run starts (the job).
use anyhow::{Result, bail};

use super::args::PhenomenaArgs;
use super::{LEVELS, ORDER, msg};
use crate::engine::Jobs;
use crate::i18n::Lang;
use crate::options::{self, Format, LabDirArgs, ServerWanted, Shared};

/// A checked `lab phenomena` command line.
pub struct PhenomenaRun {
    pub shared: Shared,
    pub format: Format,
    /// `--show ID`: that phenomenon's timelines at every level, too.
    pub show: Option<String>,
    /// After the matrix, what each phenomenon is.
    pub explain: bool,
    pub lab_dir: LabDirArgs,
    pub levels: Vec<usize>,
    pub jobs: Jobs,
    /// Every interleaving of each cell's steps too (`--all-interleavings`).
    pub all_interleavings: bool,
}

impl PhenomenaRun {
    pub fn new(args: &PhenomenaArgs, lang: Lang) -> Result<PhenomenaRun> {
        let wait_timeout = options::deadline(args.common.wait.wait_timeout.unwrap_or(10.0))?;
        let show = args.show.as_deref().map(|s| s.trim().to_ascii_lowercase());
        if let Some(id) = &show
            && !ORDER.contains(&id.as_str())
        {
            bail!(msg::no_phenomenon(id, ORDER.join(", ")));
        }
        let mut levels = args.level.iter().map(|l| super::level(l)).collect::<Result<Vec<_>>>()?;
        if levels.is_empty() {
            levels = (0..LEVELS.len()).collect();
        }
        let names = ORDER
            .iter()
            .filter(|id| show.as_deref().is_none_or(|s| s == **id))
            .map(|id| format!("phenomena.{id}"))
            .collect();
        Ok(PhenomenaRun {
            shared: Shared {
                baseline: args
                    .baseline
                    .baseline
                    .clone()
                    .map(|p| (p, names, crate::baseline::Kind::Phenomena)),
                ..Shared::new(lang, ServerWanted::of(&args.common.server), wait_timeout).reports(&args.common.reports)
            },
            format: args.format,
            show,
            explain: args.explain,
            lab_dir: args.lab_dir.clone(),
            levels,
            jobs: Jobs::of(args.jobs.jobs, options::cores() * 4, options::cores()),
            all_interleavings: args.all_interleavings,
        })
    }
}
