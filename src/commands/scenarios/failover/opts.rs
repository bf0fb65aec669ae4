//! `lab failover`'s own options.
use anyhow::Result;

use crate::commands::scenarios::{Params, ScenarioOptions};

/// `lab failover`'s own options.
#[derive(Debug, Clone, clap::Args)]
pub struct FailoverOpts {
    /// How many writes the writer makes before and during a failure.
    #[arg(long, default_value_t = 5, value_name = "N")]
    pub writes: usize,
}

impl ScenarioOptions for FailoverOpts {
    fn check(&self) -> Result<()> {
        if !(1..=1000).contains(&self.writes) {
            anyhow::bail!(crate::options::msg::between("--writes", 1, 1000));
        }
        Ok(())
    }
}

pub(super) fn opts(p: &Params) -> &FailoverOpts {
    p.downcast_ref().expect("failover options")
}
