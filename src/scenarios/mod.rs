//! The scenario catalogue: one module per scenario, registered once here.
//! `lab list`, `lab all` and the command line read this list.
use anyhow::{Result, bail};

use crate::engine::VariantCtx;

mod advisory_lock;
mod ddl_lock_queue;
mod deadlock;
mod fk_blocking;
mod invoice;
mod lost_update;
mod nowait;
mod queue;
mod rc_recheck;
mod stale_event;
mod stock_race;
mod timeouts;
mod write_skew;

/// A scenario's variant. Its documented outcome and explanation are texts,
/// kept with every other text in `i18n`.
#[derive(Debug)]
pub struct VariantInfo {
    pub name: &'static str,
}

#[derive(Debug)]
pub struct ScenarioInfo {
    pub name: &'static str,
    pub variants: &'static [VariantInfo],
}

impl ScenarioInfo {
    pub fn variant_names(&self) -> Vec<&'static str> {
        self.variants.iter().map(|v| v.name).collect()
    }
}

/// Every scenario, in the order `lab all` runs them.
pub static ALL: &[ScenarioInfo] = &[
    lost_update::INFO,
    write_skew::INFO,
    fk_blocking::INFO,
    deadlock::INFO,
    nowait::INFO,
    advisory_lock::INFO,
    ddl_lock_queue::INFO,
    rc_recheck::INFO,
    timeouts::INFO,
    queue::INFO,
    stock_race::INFO,
    stale_event::INFO,
    invoice::INFO,
];

pub fn find(name: &str) -> Option<&'static ScenarioInfo> {
    ALL.iter().find(|s| s.name == name)
}

/// Runs one variant; the scenario records into `ctx` and returns nothing else.
pub async fn run_variant(ctx: &mut VariantCtx<'_>) -> Result<()> {
    match ctx.scenario {
        "lost-update" => lost_update::run(ctx).await,
        "write-skew" => write_skew::run(ctx).await,
        "fk-blocking" => fk_blocking::run(ctx).await,
        "deadlock" => deadlock::run(ctx).await,
        "nowait" => nowait::run(ctx).await,
        "advisory-lock" => advisory_lock::run(ctx).await,
        "ddl-lock-queue" => ddl_lock_queue::run(ctx).await,
        "rc-recheck" => rc_recheck::run(ctx).await,
        "timeouts" => timeouts::run(ctx).await,
        "queue" => queue::run(ctx).await,
        "stock-race" => stock_race::run(ctx).await,
        "stale-event" => stale_event::run(ctx).await,
        "invoice-numbering" => invoice::run(ctx).await,
        other => bail!(crate::tr!("ru.no_runner", scenario = other)),
    }
}
