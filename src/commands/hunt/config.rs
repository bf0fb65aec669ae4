//! `lab hunt`: the command line checked into a run's configuration, or a
//! history to check alone. Pure: the history file, the reproducers'
//! directory and the server are looked at where the run starts (the job).
use std::path::PathBuf;

use anyhow::{Result, bail};

use super::args::{HuntArgs, HuntFormat, HuntWorkload};
use super::check::{Level, Options};
use super::history::MAX_SCAN;
use super::msg as hmsg;
use super::nemesis::{self, Fault};
use super::workload::{Budget, Shape};
use crate::i18n::Lang;
use crate::options::{self, ServerWanted, Shared};
use clap::ValueEnum;

/// A checked `lab hunt` command line: a run against a server, or a history checked alone.
pub enum Hunt {
    Run(Box<HuntRun>),
    Check(HuntCheck),
}

/// `lab hunt` against a server.
pub struct HuntRun {
    pub shared: Shared,
    pub levels: Vec<Level>,
    pub shape: Shape,
    pub clients: usize,
    pub budget: Budget,
    pub seed: u64,
    pub max_connections: Option<usize>,
    pub history: Option<PathBuf>,
    pub options: Options,
    /// Where reproducers go (none: `--no-specs`).
    pub specs: Option<PathBuf>,
    pub replays: usize,
    pub shrink: bool,
    pub format: HuntFormat,
    /// The faults the nemesis injects (none: no nemesis).
    pub nemesis: Vec<Fault>,
    pub nemesis_interval: std::time::Duration,
    /// `--lab-dir`: where lab's files (the nemesis's server settings) may be edited copies.
    pub lab_dir: Option<PathBuf>,
    /// Read-only transactions to lab's own standby too (`--replica`).
    pub replica: bool,
    /// `--via pgpool`: every session through lab's pgpool-II in front of
    /// the primary and the standby.
    pub via_pgpool: bool,
    /// lab's standby synchronous, commits waiting as this says (`--sync-replica`).
    pub sync_replica: Option<super::args::SyncReplica>,
}

/// `lab hunt --check FILE`.
pub struct HuntCheck {
    pub lang: Lang,
    pub file: PathBuf,
    pub level: Option<Level>,
    pub options: Options,
    pub format: HuntFormat,
    pub junit: Option<PathBuf>,
    pub html: Option<PathBuf>,
}

impl Hunt {
    pub fn new(args: &HuntArgs, lang: Lang) -> Result<Hunt> {
        let mut levels: Vec<Level> = Vec::new();
        for l in &args.level {
            if l == "all" {
                levels.extend([Level::ReadCommitted, Level::RepeatableRead, Level::Serializable]);
            } else {
                levels.push(Level::parse(l).ok_or_else(|| anyhow::anyhow!(hmsg::bad_level(l)))?);
            }
        }
        levels.sort();
        levels.dedup();
        let options = Options {
            realtime: args.realtime,
            sessions: args.session_order,
            all_cycles: args.all_cycles,
            lost: false,
            sequential_keys: args.sequential_keys,
            linearizable_keys: args.linearizable_keys,
        };
        if let Some(file) = &args.check {
            if levels.len() > 1 {
                bail!(hmsg::check_one_level());
            }
            return Ok(Hunt::Check(HuntCheck {
                lang,
                file: file.clone(),
                level: levels.first().copied(),
                options,
                format: args.format,
                junit: args.common.reports.junit.clone(),
                html: args.common.reports.html.clone(),
            }));
        }
        if levels.is_empty() {
            levels = vec![Level::ReadCommitted, Level::RepeatableRead, Level::Serializable];
        }
        for (n, flag) in [
            (args.keys, "--keys"),
            (args.clients, "--clients"),
            (args.ops, "--ops"),
            (args.replays, "--replays"),
        ] {
            if n == 0 {
                bail!(hmsg::at_least_one(flag));
            }
        }
        if args.keys > 1_000_000 || args.ops > 1000 || args.replays > 1000 {
            bail!(hmsg::too_large());
        }
        let budget = match (args.txns, args.seconds) {
            (Some(0), _) => bail!(hmsg::at_least_one("--txns")),
            (Some(n), _) => Budget::Txns(n),
            (None, Some(s)) if !(s.is_finite() && s > 0.0 && s <= 86_400.0) => bail!(hmsg::seconds()),
            (None, Some(s)) => Budget::Seconds(s),
            (None, None) => Budget::Txns(2000),
        };
        // The sessions and the control connection.
        let need = args.clients + 1;
        if let Some(max) = args.max_connections
            && need > max
        {
            bail!(hmsg::too_many_clients(args.clients, max));
        }
        let faults = nemesis::parse_list(&args.nemesis).map_err(|w| anyhow::anyhow!(hmsg::bad_nemesis(w)))?;
        refuse_together(args, &faults)?;
        let predicate = args.workload == HuntWorkload::Predicate;
        let register = args.workload == HuntWorkload::RwRegister;
        let wait_timeout = options::deadline(args.common.wait.wait_timeout.unwrap_or(10.0))?;
        Ok(Hunt::Run(Box::new(HuntRun {
            shared: Shared::new(lang, ServerWanted::of(&args.common.server), wait_timeout)
                .reports(&args.common.reports),
            levels,
            shape: Shape {
                keys: args.keys,
                max_ops: args.ops,
                predicate,
                register,
                ..Shape::default()
            },
            clients: args.clients,
            budget,
            seed: args.seed,
            max_connections: args.max_connections,
            history: args.history.clone(),
            options,
            specs: (!args.no_specs).then(|| args.specs.clone()),
            replays: args.replays,
            shrink: !args.no_shrink,
            format: args.format,
            nemesis: faults,
            nemesis_interval: std::time::Duration::from_millis(args.nemesis_interval),
            lab_dir: args.lab_dir.lab_dir.clone(),
            replica: args.replica,
            via_pgpool: args.via.is_some(),
            sync_replica: args.sync_replica,
        })))
    }
}

/// The flag that assumes something of each key's versions, if one was given.
pub fn keys_flag(sequential: bool, linearizable: bool) -> Option<&'static str> {
    (sequential.then_some("--sequential-keys")).or(linearizable.then_some("--linearizable-keys"))
}

/// Options that do not go together, refused by name (exit 2).
fn refuse_together(args: &HuntArgs, faults: &[Fault]) -> Result<()> {
    if let Some(flag) = keys_flag(args.sequential_keys, args.linearizable_keys)
        && args.workload != HuntWorkload::RwRegister
    {
        let name = args.workload.to_possible_value().map(|v| v.get_name().to_string());
        bail!(hmsg::keys_register_only(flag, name.unwrap_or_default()));
    }
    if faults.contains(&Fault::Failover) {
        // The HA cluster is the server: faults of one server, lab's
        // standby and its TLS have no place there.
        let other = (faults.iter().find(|f| **f != Fault::Failover))
            .map(|f| format!("--nemesis {}", f.name()))
            .or(args.replica.then(|| "--replica".to_string()))
            .or(args.common.server.local.tls.then(|| "--tls".to_string()));
        if let Some(other) = other {
            bail!(hmsg::failover_alone(other));
        }
    }
    let predicate = args.workload == HuntWorkload::Predicate;
    if predicate && args.keys > MAX_SCAN as usize {
        bail!(hmsg::predicate_keys(MAX_SCAN));
    }
    // A killed or restarted server's standby reconnects seconds later,
    // and every commit waits for it meanwhile.
    if args.sync_replica.is_some()
        && let Some(f) = faults.iter().find(|f| matches!(f, Fault::Kill | Fault::Restart))
    {
        bail!(hmsg::sync_replica_nemesis(f.name()));
    }
    if args.via.is_some() && !faults.is_empty() {
        bail!(hmsg::pgpool_no_nemesis());
    }
    if !(1..=600_000).contains(&args.nemesis_interval) {
        bail!(hmsg::nemesis_interval());
    }
    Ok(())
}
