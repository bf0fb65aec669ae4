//! `lab replica`'s own options.
use anyhow::Result;

use crate::commands::scenarios::{Params, ScenarioOptions};

/// `lab replica`'s own options.
#[derive(Debug, Clone, clap::Args)]
pub struct ReplicaOpts {
    /// A standby of --database-url's server (your own pair); without it lab
    /// makes a standby of its throwaway server.
    #[arg(long, env = "LAB_STANDBY_URL", hide_env_values = true, value_name = "URL")]
    pub standby_url: Option<String>,

    /// lsn-token: how long a read waits for the standby to reach the token
    /// before it goes to the primary (ms).
    #[arg(long, default_value_t = 100, value_name = "MS")]
    pub lsn_wait_ms: u64,

    /// sticky-by-time: for how many ms after a write reads go to the primary.
    #[arg(long, default_value_t = 200, value_name = "MS")]
    pub sticky_ms: u64,

    /// Only the variants that read straight from the standby (`standby`),
    /// or only those through lab's own pgpool-II with load balancing
    /// (`pgpool`, which then must be installed); both by default.
    #[arg(long, value_enum, value_name = "WAY")]
    pub via: Option<Via>,
}

/// How the variants reach the standby.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Via {
    Standby,
    Pgpool,
}

/// Whether a variant goes through pgpool-II.
fn through_pgpool(variant: &str) -> bool {
    variant.starts_with("pgpool-")
}

impl ScenarioOptions for ReplicaOpts {
    fn check(&self) -> Result<()> {
        if !(1..=10_000).contains(&self.lsn_wait_ms) {
            anyhow::bail!(crate::options::msg::between("--lsn-wait-ms", 1, 10_000));
        }
        if !(1..=10_000).contains(&self.sticky_ms) {
            anyhow::bail!(crate::options::msg::between("--sticky-ms", 1, 10_000));
        }
        if self.via == Some(Via::Pgpool) {
            // Asked for: a machine without it is a setup error, not a skip.
            crate::postgres::pgpool::find_bin()?;
        }
        Ok(())
    }

    fn selects(&self, variant: &str) -> bool {
        match self.via {
            None => true,
            Some(Via::Standby) => !through_pgpool(variant),
            Some(Via::Pgpool) => through_pgpool(variant),
        }
    }
}

pub(super) fn opts(p: &Params) -> &ReplicaOpts {
    p.downcast_ref().expect("replica options")
}
