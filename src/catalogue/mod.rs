//! The scenario catalogue: each scenario declared once, in its own module
//! (name, variants with their run functions, options with their defaults,
//! texts), and registered once in [`ALL`]. The command line, `lab list`,
//! `lab all`, completions and the README's scenario table read this list.
use std::any::Any;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use anyhow::Result;
use clap::{ArgMatches, Args, FromArgMatches};

use crate::i18n::{Def, Text};

pub mod cx;
pub use cx::{Cx, Perm, RunOpts};

/// A scenario's own options (its subcommand's flags beyond the common ones),
/// parsed by clap and checked once.
pub type Params = Arc<dyn Any + Send + Sync>;

/// A variant's run: records into `cx` what the server did and what that means.
pub type RunFn = for<'a, 'b> fn(&'a mut Cx<'b>) -> Pin<Box<dyn Future<Output = Result<()>> + 'a>>;

/// Wraps `async fn f(cx: &mut Cx<'_>) -> Result<()>` as a [`RunFn`].
#[macro_export]
macro_rules! run_fn {
    ($f:path) => {{
        fn run<'a, 'b>(
            cx: &'a mut $crate::catalogue::Cx<'b>,
        ) -> ::std::pin::Pin<Box<dyn ::std::future::Future<Output = ::anyhow::Result<()>> + 'a>> {
            Box::pin($f(cx))
        }
        run
    }};
}

pub struct Variant {
    pub name: &'static str,
    /// The documented outcome, with the run's parameters.
    pub expected: fn(&Params) -> Text,
    /// What happens and why (the mechanism), and the fix.
    pub explain: fn() -> Text,
    pub run: RunFn,
}

/// Options some scenarios take (clap `Args`), with a check of their values.
pub trait ScenarioOptions: Args + FromArgMatches + Clone + Send + Sync + 'static {
    /// Refuses values the scenario cannot run with (a usage error, exit 2).
    fn check(&self) -> Result<()>;
}

/// A scenario's options as the catalogue holds them.
pub struct Options {
    pub augment: fn(clap::Command) -> clap::Command,
    pub parse: fn(&ArgMatches) -> Result<Params>,
    /// Turkish help for each option, by its id (English is on the type's doc comments).
    pub help_tr: &'static [(&'static str, &'static str)],
}

impl Options {
    pub const fn of<T: ScenarioOptions>(help_tr: &'static [(&'static str, &'static str)]) -> Options {
        Options {
            augment: <T as Args>::augment_args,
            parse: parse::<T>,
            help_tr,
        }
    }
}

fn parse<T: ScenarioOptions>(m: &ArgMatches) -> Result<Params> {
    let o = T::from_arg_matches(m)?;
    o.check()?;
    Ok(Arc::new(o))
}

impl std::fmt::Debug for Variant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Variant({})", self.name)
    }
}

pub struct Scenario {
    pub name: &'static str,
    /// One line: the subcommand's help.
    pub about: fn() -> Text,
    /// One line: what `lab list` says of it.
    pub summary: fn() -> Text,
    /// What it shows, for the README's table (English, Markdown).
    pub readme: &'static str,
    /// The spec file (under lab/) holding its straight-line variants.
    pub spec: Option<&'static str>,
    pub variants: &'static [Variant],
    pub options: Option<Options>,
    /// Every message the scenario declares (the completeness tests read them).
    pub texts: &'static [Def],
}

impl Scenario {
    pub fn variant(&'static self, name: &str) -> Option<&'static Variant> {
        self.variants.iter().find(|v| v.name == name)
    }

    pub fn variant_names(&self) -> Vec<&'static str> {
        self.variants.iter().map(|v| v.name).collect()
    }

    /// The scenario's options at their defaults (what `lab all` runs with).
    pub fn default_params(&self) -> Result<Params> {
        match &self.options {
            None => Ok(Arc::new(())),
            Some(o) => {
                let cmd = (o.augment)(clap::Command::new(self.name));
                let m = cmd.try_get_matches_from([self.name])?;
                (o.parse)(&m)
            }
        }
    }
}

mod advisory_lock;
mod ddl_lock_queue;
mod deadlock;
mod fk_blocking;
mod http_etag;
mod invoice;
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
    &queue::SCENARIO,
    &stock_race::SCENARIO,
    &stale_event::SCENARIO,
    &http_etag::SCENARIO,
    &pooler::SCENARIO,
    &replica::SCENARIO,
    &invoice::SCENARIO,
];

/// Scenarios whose verdicts rest on the whole server: replica's VACUUM
/// must remove rows, which any other scenario's open transaction in the same
/// database would keep. `lab all` runs them beside others in a database of
/// their own on lab's throwaway server (VACUUM's horizon for a table counts
/// only its database's transactions), and alone elsewhere. (queue's and
/// stock-race's checks rest on locks, barriers and counts: they run beside
/// the others.)
pub const OWN_DATABASE: &[&str] = &["replica"];

pub fn find(name: &str) -> Option<&'static Scenario> {
    ALL.iter().copied().find(|s| s.name == name)
}
