//! A variant's view of lab's own HA cluster: the cluster kept across the
//! variants of one run (started by the first, removed after the last, on
//! Ctrl-C and with lab), the variant's Patroni settings from
//! lab/failover.conf, and the cluster's events in the timeline (lab's
//! actions in the `lab` lane, what Patroni and the servers did in the
//! `patroni` lane), every wait confirmed from the servers, with a deadline.
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Result;

use super::msg;
use crate::commands::scenarios::Cx;
use crate::engine::{Deviation, Opener, Session, secs};
use crate::named_sql::SqlFile;
use crate::postgres::patroni::{self, Availability, HaCluster};

/// The cluster the run's variants share.
static KEPT: Mutex<Option<Arc<HaCluster>>> = Mutex::new(None);
/// One start at a time (side by side, only one scenario uses it anyway).
static STARTING: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Removes the kept cluster, if any (after the scenario's last variant, at
/// the end of a run, on Ctrl-C): every process of it ends, its directory goes.
pub async fn release() {
    let kept = KEPT.lock().unwrap().take();
    if let Some(ha) = kept {
        let _ = tokio::task::spawn_blocking(move || drop(ha)).await;
    }
}

/// The run's cluster: the kept one, or a new one; none (the variant
/// skipped, with why) where Patroni, etcd or root is missing.
async fn cluster(cx: &mut Cx<'_>) -> Result<Option<Arc<HaCluster>>> {
    let _one = STARTING.lock().await;
    if let Some(ha) = KEPT.lock().unwrap().clone() {
        return Ok(Some(ha));
    }
    let programs = match patroni::programs()? {
        Availability::Ready(p) => p,
        Availability::Missing(why) => {
            cx.skip(msg::needs_patroni(why));
            return Ok(None);
        }
    };
    if unsafe { libc::geteuid() } != 0 {
        cx.skip(msg::needs_root());
        return Ok(None);
    }
    // The run's server programs where they have all Patroni runs, else the machine's.
    let run_bin = cx.env.throwaway.as_ref().map(|(b, _)| b.clone());
    let bin = match run_bin.filter(|b| patroni::lacks(b).is_none()) {
        Some(b) => b,
        None => match crate::postgres::cluster::find_bin_dir(None) {
            Ok(b) if patroni::lacks(&b).is_none() => b,
            Ok(b) => {
                let lacks = patroni::lacks(&b).unwrap_or("-");
                cx.skip(msg::lacks_program(lacks, b.display().to_string()));
                return Ok(None);
            }
            Err(e) => return Err(e),
        },
    };
    let deadline = Duration::from_secs(super::opts::opts(&cx.params).ha_timeout);
    let ha = Arc::new(HaCluster::start(&bin, programs, deadline).await?);
    cx.narrate(msg::cluster_started(
        secs(ha.startup),
        ha.versions.clone(),
        bin.display().to_string(),
    ));
    cx.metric("cluster_start_ms", (ha.startup.as_secs_f64() * 1000.0).round());
    *KEPT.lock().unwrap() = Some(ha.clone());
    Ok(Some(ha))
}

/// Patroni's settings for `variant` in lab/failover.conf's text, as the
/// JSON `PATCH /config` takes; none when it has no section.
pub use crate::postgres::patroni::dynamic_settings as settings;

/// The roles at the start of a variant.
#[derive(Debug, Clone, Copy)]
pub(super) struct Roles {
    pub primary: usize,
    /// The other node that may lead (the synchronous standby in sync mode).
    pub candidate: usize,
    /// The asynchronous replica that never leads.
    pub replica: usize,
}

/// The variant's cluster, its settings applied and healthy.
pub(super) struct Fx {
    pub ha: Arc<HaCluster>,
    pub sql: SqlFile,
    openers: Vec<Opener>,
    pub roles: Roles,
    /// Patroni's synchronous_mode for this variant.
    pub sync: bool,
    /// How long a failover, a rejoin, a settings change or one write may
    /// take (`--ha-timeout`).
    pub deadline: Duration,
}

impl Fx {
    /// The cluster, as the variant needs it: kept or started; anything an
    /// earlier variant left (a process stopped, a partition, a manager
    /// killed, replay paused) undone; the variant's settings from
    /// lab/failover.conf applied and seen on the primary; all three nodes
    /// streaming; the writer's table made. None: the variant is skipped.
    pub async fn begin(cx: &mut Cx<'_>) -> Result<Option<Fx>> {
        let Some(ha) = cluster(cx).await? else {
            return Ok(None);
        };
        let sql = cx.sql("failover.sql")?;
        let conf = cx.opts.files.read("failover.conf")?;
        let json = settings(&conf, cx.variant).unwrap_or_else(|| "{}".into());
        let sync = json.contains("\"synchronous_mode\": true");
        let deadline = Duration::from_secs(super::opts::opts(&cx.params).ha_timeout);
        repair(&ha).await?;
        ha.patch_config(&json).await?;
        cx.narrate(msg::settings(json.clone()));
        // Applied once the primary says so: a synchronous standby, or none.
        let Some(leader) = ha.until_settled(sync, Instant::now() + deadline).await? else {
            return Err(Deviation(msg::settings_not_applied(json, secs(deadline))).into());
        };
        let candidate = (0..ha.nodes.len())
            .find(|&i| i != leader && ha.nodes[i].can_lead)
            .expect("two nodes may lead");
        let replica = (0..ha.nodes.len())
            .find(|&i| !ha.nodes[i].can_lead)
            .expect("one node never leads");
        let openers = (0..ha.nodes.len())
            .map(|i| cx.opener().elsewhere(ha.config(i, patroni::DATABASE)))
            .collect();
        let fx = Fx {
            ha,
            sql,
            openers,
            roles: Roles {
                primary: leader,
                candidate,
                replica,
            },
            sync,
            deadline,
        };
        cx.recorder().note(
            "patroni",
            msg::roles(
                fx.name(leader),
                fx.name(candidate),
                fx.name(replica),
                if sync { msg::sync_mode() } else { msg::async_mode() },
            ),
        );
        // The sessions' search_path is the run's schema: the table goes there.
        let admin = fx.admin(leader).await?;
        let schema = cx.env.schema.replace('"', "");
        admin
            .batch_execute(&format!(
                "CREATE SCHEMA IF NOT EXISTS \"{schema}\"; SET search_path TO \"{schema}\"; {}",
                fx.sql.get("create")?
            ))
            .await
            .map_err(|e| crate::postgres::connect::sql_error(e, msg::setup()))?;
        Ok(Some(fx))
    }

    pub fn name(&self, i: usize) -> &str {
        &self.ha.nodes[i].name
    }

    /// The node whose PostgreSQL listens on `port` (in the namespace).
    pub fn node_of_port(&self, port: &str) -> Option<usize> {
        let port: u16 = port.parse().ok()?;
        self.ha.nodes.iter().position(|n| n.pg_port == port)
    }

    pub fn opener(&self, i: usize) -> &Opener {
        &self.openers[i]
    }

    /// The nodes in the order a multi-host URL lists them.
    pub fn openers(&self) -> Vec<(usize, Opener)> {
        self.openers.iter().cloned().enumerate().collect()
    }

    /// A connection of lab's own to node `i` (not in the timeline).
    pub async fn admin(&self, i: usize) -> Result<tokio_postgres::Client> {
        self.ha.connect(i, patroni::DATABASE).await
    }

    /// One value lab reads on node `i` (not in the timeline).
    pub async fn value(&self, i: usize, sql: &str) -> Result<Option<String>> {
        let c = self.admin(i).await?;
        Ok(crate::postgres::connect::simple_value(&c, sql).await?)
    }

    /// The writer's ids node `i` holds (read back in the timeline), one per row.
    pub async fn ids_on(&self, i: usize) -> Result<Vec<i64>> {
        let s = self.opener(i).open("check").await?;
        s.note(msg::reading_on(self.name(i)));
        let set = s.rows("read", self.sql.get("read")?).await?;
        drop(s);
        Ok(set
            .get(0, "ids")
            .unwrap_or("")
            .split(',')
            .filter_map(|v| v.trim().parse().ok())
            .collect())
    }

    /// Crashes node `i`'s PostgreSQL (every process of it SIGKILLed at
    /// once); when it happened, on the variant's clock.
    pub fn crash(&self, cx: &Cx<'_>, i: usize) -> f64 {
        let at = Instant::now();
        let crashed = self.ha.crash_postgres(i);
        cx.narrate(if crashed {
            msg::crashed(self.name(i))
        } else {
            msg::nothing_to_crash(self.name(i))
        });
        cx.recorder().t_ms(at)
    }

    /// Waits until Patroni has promoted a node other than `old`, running;
    /// the new leader and when lab saw it (the `patroni` lane says so).
    pub async fn promoted(&self, cx: &Cx<'_>, old: usize) -> Result<Option<(usize, f64)>> {
        let until = Instant::now() + self.deadline;
        loop {
            if let Some(i) = self.ha.promoted_instead_of(old).await {
                let at = Instant::now();
                let members = self.ha.members().await.unwrap_or_default();
                let timeline = (members.iter())
                    .find(|m| m.name == self.name(i))
                    .and_then(|m| m.timeline)
                    .unwrap_or(0);
                cx.recorder()
                    .note("patroni", msg::promoted(self.name(i), timeline, self.name(old)));
                return Ok(Some((i, cx.recorder().t_ms(at))));
            }
            if Instant::now() > until {
                cx.recorder().note("patroni", msg::no_promotion(secs(self.deadline)));
                return Ok(None);
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Waits until the cluster is healthy again (the old primary back as a
    /// replica, rewound, on the new timeline, streaming); whether it is.
    pub async fn rejoined(&self, cx: &Cx<'_>, old: usize) -> Result<bool> {
        let ok = self.ha.until_healthy(Instant::now() + self.deadline).await.is_ok();
        if !ok {
            self.not_kept(cx);
        }
        let members = self.ha.members().await.unwrap_or_default();
        let tl = members.iter().find(|m| m.leads()).and_then(|m| m.timeline).unwrap_or(0);
        cx.recorder().note(
            "patroni",
            if ok {
                msg::rejoined(self.name(old), tl)
            } else {
                msg::not_rejoined(self.name(old), secs(self.deadline))
            },
        );
        Ok(ok)
    }

    /// Waits until every node streams again (standbys lab stopped are back).
    pub async fn back(&self, cx: &Cx<'_>) -> Result<bool> {
        let ok = self.ha.until_healthy(Instant::now() + self.deadline).await.is_ok();
        if ok {
            cx.recorder().note("patroni", msg::all_streaming());
        } else {
            self.not_kept(cx);
        }
        Ok(ok)
    }

    /// The cluster, not healthy again at a variant's end, is not kept for
    /// the next: that one starts a new cluster (this one goes with the
    /// variant's last hold of it), instead of failing to repair a node
    /// that cannot follow the leader any more.
    fn not_kept(&self, cx: &Cx<'_>) {
        let mut kept = KEPT.lock().unwrap();
        if kept.as_ref().is_some_and(|k| Arc::ptr_eq(k, &self.ha)) {
            *kept = None;
            cx.recorder().note("lab", msg::cluster_not_kept());
        }
    }

    /// Stops (SIGSTOP) node `i`'s walsenders, all or the one streaming to
    /// `to` (lab's narration says which).
    pub async fn stop_walsenders(&self, cx: &Cx<'_>, i: usize, to: Option<usize>) -> Result<()> {
        let names = self.ha.stop_walsenders(i, to.map(|t| self.name(t))).await?;
        cx.narrate(msg::walsenders_stopped(self.name(i), names.join(", ")));
        Ok(())
    }

    /// WAL position `sql` reads on node `i`, as a number.
    pub async fn lsn_on(&self, i: usize, sql: &str) -> Result<Option<u64>> {
        Ok(self.value(i, sql).await?.as_deref().and_then(super::verdict::lsn))
    }

    /// Waits until `standby` has received WAL up to `lsn` (or `within` passes).
    pub async fn received(&self, standby: usize, lsn: u64, within: Duration) -> Result<bool> {
        let until = Instant::now() + within;
        loop {
            let got = self
                .lsn_on(standby, "SELECT pg_last_wal_receive_lsn()::text")
                .await
                .ok()
                .flatten();
            if got.is_some_and(|g| g >= lsn) {
                return Ok(true);
            }
            if Instant::now() > until {
                return Ok(false);
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// The node whose Patroni answers `GET /primary` with 200, as a load
    /// balancer's health check asks each node (a Patroni that is dead or
    /// stopped answers nothing).
    pub async fn patroni_primary(&self) -> Option<usize> {
        for i in 0..self.ha.nodes.len() {
            if let Ok((200, _)) = self.ha.rest(i, "GET", "/primary", None).await {
                return Some(i);
            }
        }
        None
    }

    /// Waits until node `i` no longer takes writes (its Patroni demoted
    /// it: in recovery, or down); whether it happened (the `patroni` lane says so).
    pub async fn demoted(&self, cx: &Cx<'_>, i: usize) -> Result<bool> {
        let until = Instant::now() + self.deadline;
        while self.takes_writes(i).await {
            if Instant::now() > until {
                return Ok(false);
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        cx.recorder().note("patroni", msg::demoted(self.name(i)));
        Ok(true)
    }

    /// Whether node `i`'s PostgreSQL says it takes writes (not in recovery).
    pub async fn takes_writes(&self, i: usize) -> bool {
        self.value(i, "SELECT NOT pg_is_in_recovery()")
            .await
            .ok()
            .flatten()
            .as_deref()
            == Some("t")
    }

    /// Waits until `sql` reads `want` on node `i` (or `within` passes); what it read last.
    pub async fn until_reads(
        &self,
        i: usize,
        sql: &str,
        want: impl Fn(&str) -> bool,
        within: Duration,
    ) -> Result<Option<String>> {
        let until = Instant::now() + within;
        loop {
            let v = self.value(i, sql).await.ok().flatten();
            if v.as_deref().is_some_and(&want) || Instant::now() > until {
                return Ok(v);
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// A session of the variant on node `i`.
    pub async fn open(&self, i: usize, name: &str) -> Result<Session> {
        self.opener(i).open(name).await
    }
}

/// Puts the cluster back as variants expect it: every process running
/// (an earlier variant may have stopped one), no partition, every
/// Patroni running, replay going on every standby.
async fn repair(ha: &HaCluster) -> Result<()> {
    ha.heal()?;
    ha.thaw_all();
    for i in 0..ha.nodes.len() {
        if !ha.patroni_alive(i) {
            ha.start_patroni(i)?;
        }
    }
    for i in 0..ha.nodes.len() {
        if let Ok(c) = ha.connect(i, patroni::DATABASE).await {
            let _ = c
                .batch_execute("DO $$ BEGIN IF pg_is_in_recovery() THEN PERFORM pg_wal_replay_resume(); END IF; END $$")
                .await;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::settings;

    #[test]
    fn a_variants_settings_are_its_section() {
        let conf =
            "# comment\n[a]\nsynchronous_mode = true\nloop_wait = 1\n\n[b]\nsynchronous_mode = false\nname = x y\n";
        assert_eq!(
            settings(conf, "a").as_deref(),
            Some("{\"synchronous_mode\": true, \"loop_wait\": 1}")
        );
        assert_eq!(
            settings(conf, "b").as_deref(),
            Some("{\"synchronous_mode\": false, \"name\": \"x y\"}")
        );
        assert_eq!(settings(conf, "c"), None);
        // The file lab ships has a section for every variant.
        let shipped = include_str!("../../../../lab/failover.conf");
        for v in super::super::VARIANTS {
            if v.name != "watch" {
                assert!(
                    settings(shipped, v.name).is_some(),
                    "lab/failover.conf has no [{}]",
                    v.name
                );
            }
        }
    }
}
