//! `lab failover`'s own options.
use anyhow::Result;

use crate::commands::scenarios::{Params, ScenarioOptions};

/// `lab failover`'s own options.
#[derive(Debug, Clone, clap::Args)]
pub struct FailoverOpts {
    /// How many writes the writer makes before and during a failure.
    #[arg(long, default_value_t = 5, value_name = "N")]
    pub writes: usize,

    /// How long lab waits for its HA cluster: to become healthy, to fail
    /// over, for a node to rejoin (seconds; Patroni's ttl is 20).
    #[arg(long, default_value_t = 60, value_name = "SECONDS")]
    pub ha_timeout: u64,

    /// Your own cluster instead of lab's: with --database-url naming its
    /// hosts (postgres://h1,h2,h3/db?target_session_attrs=read-write), a
    /// writer writes through reconnects while you fail it over by your own
    /// means; on Ctrl-C (or after --seconds) lab reads everything back and
    /// reports what was lost. lab makes one table of its own and drops it.
    #[arg(long)]
    pub watch: bool,

    /// With --watch: stop writing after this many seconds (else at Ctrl-C).
    #[arg(long, value_name = "SECONDS", requires = "watch")]
    pub seconds: Option<u64>,
}

impl ScenarioOptions for FailoverOpts {
    fn check(&self) -> Result<()> {
        if !(1..=1000).contains(&self.writes) {
            anyhow::bail!(crate::options::msg::between("--writes", 1, 1000));
        }
        if self.seconds.is_some_and(|s| !(1..=86_400).contains(&s)) {
            anyhow::bail!(crate::options::msg::between("--seconds", 1, 86_400));
        }
        if !(1..=3600).contains(&self.ha_timeout) {
            anyhow::bail!(crate::options::msg::between("--ha-timeout", 1, 3600));
        }
        Ok(())
    }

    /// `--watch` runs none of the variants: the run is the user's cluster.
    fn selects(&self, _variant: &str) -> bool {
        !self.watch
    }
}

pub(super) fn opts(p: &Params) -> &FailoverOpts {
    p.downcast_ref().expect("failover options")
}
