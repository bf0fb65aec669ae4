//! The scenario catalogue: each scenario declared once, in its own module
//! (name, variants with their run functions, options with their defaults,
//! texts), and registered once in [`ALL`]. The command line, `lab list`,
//! `lab all`, completions and docs/GUIDE.md's scenario table read this list.
pub mod args;
pub mod config;
pub mod context;
pub mod job;
pub mod list;
#[macro_use]
mod declare;
pub use context::{Cx, Params, Perm, RunOpts};
pub use declare::{Options, RunFn, Scenario, ScenarioOptions, Variant, run_variant};

mod advisory_lock;
mod ddl_lock_queue;
mod deadlock;
pub mod failover;
mod fk_blocking;
pub mod http_etag;
mod invoice;
mod lost_client;
mod lost_update;
mod nowait;
mod pooler;
mod queue;
mod rc_recheck;
mod replica;
mod stale_event;
mod stock_race;
mod timeouts;
mod write_skew;

/// Every scenario, in the order `lab all` runs them.
pub static ALL: &[&Scenario] = &[
    &lost_update::SCENARIO,
    &write_skew::SCENARIO,
    &fk_blocking::SCENARIO,
    &deadlock::SCENARIO,
    &nowait::SCENARIO,
    &advisory_lock::SCENARIO,
    &ddl_lock_queue::SCENARIO,
    &rc_recheck::SCENARIO,
    &timeouts::SCENARIO,
    &lost_client::SCENARIO,
    &queue::SCENARIO,
    &stock_race::SCENARIO,
    &stale_event::SCENARIO,
    &http_etag::SCENARIO,
    &pooler::SCENARIO,
    &replica::SCENARIO,
    &invoice::SCENARIO,
    &failover::SCENARIO,
];

/// Scenarios whose verdicts rest on the whole server: replica's VACUUM
/// must remove rows, which any other scenario's open transaction in the same
/// database would keep. `lab all` runs them beside others in a database of
/// their own on lab's throwaway server (VACUUM's horizon for a table counts
/// only its database's transactions), and alone elsewhere. (A snapshot in
/// its own database, autovacuum's ANALYZE of the freshly loaded tables, it
/// waits out: see `vacuum_away` in replica.) (queue's and
/// stock-race's checks rest on locks, barriers and counts: they run beside
/// the others.)
pub const OWN_DATABASE: &[&str] = &["replica"];

/// Scenarios `lab all` runs only when named (`--variant failover`): their
/// run takes minutes (failovers wait for Patroni's timeouts) and needs what
/// a CI machine may not have (root, Patroni, etcd).
pub const ON_REQUEST: &[&str] = &["failover"];

/// Lets go of what a scenario keeps across its variants (lab's HA
/// cluster): after its last variant, and at the end of any run.
pub async fn release_kept(scenario: Option<&str>) {
    if scenario.is_none_or(|s| s == failover::SCENARIO.name) {
        failover::release().await;
    }
}

pub fn find(name: &str) -> Option<&'static Scenario> {
    ALL.iter().copied().find(|s| s.name == name)
}
