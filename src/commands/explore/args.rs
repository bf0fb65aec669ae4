//! `lab explore`: its command line.
use clap::Args;

use crate::options::{CommonArgs, JobsArgs, LabDirArgs, SpecFormat};

/// Every interleaving of a spec at every isolation level, grouped by what happened.
#[derive(Debug, Clone, Args)]
#[command(
    after_help = "A spec that lists no permutation gets every interleaving of its steps, as \
                  isolationtester generates them; one that lists some runs them, or with \
                  --all-permutations every interleaving of each listed one's steps (its final \
                  read, a last session doing nothing before, stays last). A lab scenario or \
                  phenomenon is explored over every interleaving. Each run gets a signature \
                  (who waited for whom, which step failed with which SQLSTATE, what the final \
                  reads returned or whether `# occurs-if:` held); runs with the same signature \
                  form a class.\n\
                  Exit codes: 0 every level ran (and is as the spec's `# expect:` documents), \
                  1 a level is not as documented, 2 could not run.",
    mut_arg("jobs", |a| a.help(
        "Permutations run at once, each worker in a schema of its own (default: one per core to start, up \
         to 2 per core while each one added makes the runs faster)")),
    mut_arg("junit", |a| a.help("Also write a JUnit XML report (one test case per level) to FILE")),
    mut_arg("html", |a| a.help(
        "Also write a self-contained HTML report (each level's classes, each with the swimlanes of its \
         representative) to FILE")),
)]
pub struct ExploreArgs {
    /// A spec file, or a lab scenario with a spec (write-skew) or a phenomenon (g2-item).
    #[arg(value_name = "SPEC|SCENARIO|PHENOMENON")]
    pub spec: String,

    /// Only this level (repeatable): read-uncommitted, read-committed,
    /// repeatable-read, serializable, or all (the default).
    #[arg(long, value_name = "LEVEL")]
    pub level: Vec<String>,

    /// Where the spec lists permutations: every interleaving of their steps instead.
    #[arg(long)]
    pub all_permutations: bool,

    /// Run N interleavings drawn at random (the same N for the same --seed).
    #[arg(long, value_name = "N")]
    pub sample: Option<usize>,

    /// The seed of --sample.
    #[arg(long, default_value_t = 1, value_name = "S")]
    pub seed: u64,

    /// Output format (isolation: what isolationtester prints for the spec, at its own level).
    #[arg(long, value_enum, ignore_case = true, default_value_t = SpecFormat::Table)]
    pub format: SpecFormat,

    /// Workshop mode: after exploring, run one class's representative again,
    /// showing each step and waiting for Enter (needs a terminal and one level).
    #[arg(long)]
    pub step: bool,

    /// The class --step walks through (1: the largest).
    #[arg(long, default_value_t = 1, value_name = "N", requires = "step")]
    pub class: usize,

    #[command(flatten)]
    pub jobs: JobsArgs,

    #[command(flatten)]
    pub lab_dir: LabDirArgs,

    #[command(flatten)]
    pub common: CommonArgs,
}
