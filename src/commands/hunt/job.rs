//! `lab hunt` in the harness: per level, the workload on C sessions, its
//! history checked, a reproducer written and replayed for each cycle found;
//! then a table, JSON, JUnit (a case per anomaly class and level) and HTML
//! (each anomaly's cycle beside its transactions' swimlanes).
//! `lab hunt --check FILE` shares the outputs and needs no server.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use anyhow::{Result, bail};

use super::anomaly::PairFrom;
use super::args::HuntFormat;
use super::chaos::Chaos;
use super::check::{self, Anomaly, Checked, Class, Level, Name, OrderFrom, Why, forbidden};
use super::config::{HuntCheck, HuntRun};
use super::history::{Header, History, Op, PREDICATE, RW_REGISTER, Status, Txn};
use super::nemesis::{Fault, Schedule};
use super::register::Sources as VersionSources;
use super::reproduce::{self, Order, Reproducer};
use super::workload::{Budget, CREATE, Link, Workload};
use super::{history, msg};
use crate::commands::explore::{Choice, ExploreConfig, Explorer, Source};
use crate::engine::Env;
use crate::harness::{Common, Finished, Job, Setup, Stop};
use crate::i18n::{Lang, Text};
use crate::named_sql::SqlFile;
use crate::output::{self, Exit};
use crate::postgres::connect;
use crate::postgres::conninfo::EnvLookup;
use crate::postgres::patroni::{self, HaCluster};
use crate::render::{self, Style, html};
use crate::report::hunt::{
    AnomalyReport, ClassCase, HuntLevel, HuntReport, NOT_VISIBLE, NOT_VISIBLE_PREDICATE, NOT_VISIBLE_REGISTER,
    NemesisReport, ReproducerReport, Stopped,
};
use crate::report::{Connection, CycleFigure, Entry, StepResult, round_ms};

/// A reproducer, written and replayed.
pub struct Replayed {
    pub reproducer: Reproducer,
    pub path: Option<PathBuf>,
    /// Replays that showed the anomaly, of how many.
    pub showed: usize,
    pub of: usize,
    /// What the replays showed instead, when one did not show it.
    pub instead: Option<String>,
    /// Shrunk to the operations the cycle rests on (else every operation of its transactions).
    pub shrunk: bool,
}

/// One level's hunt (or the history `--check` read).
pub struct Found {
    /// None: `--check` of a history that names no level (judged as serializable).
    pub level: Option<Level>,
    pub history: History,
    pub checked: Checked,
    pub replayed: Vec<(usize, Replayed)>,
    /// Where the history was written.
    pub file: Option<PathBuf>,
    /// The level the sessions read back, when it is not the level asked.
    pub read_back_differs: Option<String>,
    pub secs: f64,
    /// The run stopped part-way: the history so far.
    pub partial: bool,
}

impl Found {
    fn judged_at(&self) -> Level {
        self.level.unwrap_or(Level::Serializable)
    }

    fn forbidden(&self) -> Vec<Name> {
        let at = self.judged_at();
        self.checked.names().into_iter().filter(|n| forbidden(*n, at)).collect()
    }

    pub fn as_expected(&self) -> bool {
        self.forbidden().is_empty() && self.read_back_differs.is_none()
    }

    /// The models the anomalies found rule out (Elle's `not` and `also-not`).
    fn ruled_out(&self) -> crate::commands::hunt::models::Boundary {
        let names: Vec<String> = self
            .checked
            .names()
            .into_iter()
            .map(crate::commands::hunt::models::elle_name)
            .collect();
        crate::commands::hunt::models::boundary(names.iter().map(String::as_str))
    }

    fn level_name(&self) -> String {
        self.level.map_or("-", |l| l.sql()).to_string()
    }
}

/// One `lab hunt` run against a server.
pub struct Hunt {
    cfg: HuntRun,
    common: Common,
    schema: String,
    found: Mutex<Vec<Found>>,
    /// The level running now (its history is checked if the run stops part-way).
    current: Mutex<Option<Arc<Workload>>>,
    explorer: Mutex<Option<Arc<Explorer>>>,
    /// The run's environment with a control connection that works: the
    /// harness's, or a new one once a nemesis (kill, restart) ended it.
    env_now: Mutex<Option<Arc<Env>>>,
    /// lab's own streaming standby (`--replica`), and where its sessions connect.
    standby: Mutex<Option<(crate::postgres::cluster::Cluster, crate::postgres::ConnInfo)>>,
    /// How each session of the workload connected, by its name (c1, c2...).
    connections: Mutex<BTreeMap<String, Connection>>,
    /// `--nemesis failover`: the programs lab's HA cluster needs (found
    /// where the run starts), then the cluster and whether Patroni's
    /// synchronous mode is on there.
    ha_programs: Option<patroni::Programs>,
    ha: Mutex<Option<(Arc<HaCluster>, bool)>>,
    /// `--via pgpool`: lab's pgpool-II in front of the primary and the
    /// standby, and where the sessions connect to it.
    pgpool: Mutex<Option<(crate::postgres::pgpool::Pgpool, crate::postgres::ConnInfo)>>,
}

/// How long lab's HA cluster may take to start, settle, fail over, and a
/// statement to answer while it does (Patroni's ttl is 20 s).
const HA_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// The throwaway cluster's max_connections less its reserved ones (cluster.rs sets 300).
const THROWAWAY_ROOM: usize = 296;

/// Settings lab's throwaway server gets under a nemesis that kills or
/// restarts it (a file of lab/, so that a mutation test can edit it).
const NEMESIS_CONF: &str = "hunt-nemesis.conf";

impl Hunt {
    /// Where the run starts: the history file and the reproducers'
    /// directory checked writable (refused before anything runs, as
    /// --junit is), then what every run reads (the report files, the server).
    pub fn start(cfg: HuntRun, env: EnvLookup<'_>) -> Result<Hunt> {
        crate::options::writable(&cfg.history, msg::could_not_write)?;
        if let Some(dir) = &cfg.specs {
            specs_dir(dir)?;
        }
        let mut cfg = cfg;
        // A kill or a restart must lose nothing acknowledged on a healthy
        // server: lab's throwaway one runs durable then (lab/hunt-nemesis.conf).
        if cfg.nemesis.iter().any(|f| matches!(f, Fault::Kill | Fault::Restart)) {
            let files = crate::files::LabFiles::of(cfg.lab_dir.as_deref())?;
            let conf = files.read(NEMESIS_CONF)?;
            cfg.shared.server.conf.push_str(&conf);
            cfg.shared.server.conf.push('\n');
        }
        let common = cfg.shared.start(env)?;
        let own = matches!(common.run_on, crate::postgres::RunOn::Throwaway { .. });
        if own && cfg.clients + 1 > THROWAWAY_ROOM {
            bail!(msg::too_many_clients(cfg.clients, THROWAWAY_ROOM));
        }
        let needs: Vec<&str> = (cfg.nemesis.iter())
            .filter(|f| f.needs_own_server())
            .map(|f| f.name())
            .collect();
        if !own && !needs.is_empty() {
            bail!(msg::nemesis_needs_own(needs.join(",")));
        }
        if !own && cfg.replica {
            bail!(msg::replica_needs_own());
        }
        if cfg.via_pgpool {
            // Found before anything starts (LAB_PGPOOL_BIN, PATH, the Debian package's place).
            crate::postgres::pgpool::find_bin()?;
        }
        // lab's HA cluster can run here, found before anything starts.
        let ha_programs = if cfg.nemesis.contains(&Fault::Failover) {
            if unsafe { libc::geteuid() } != 0 {
                bail!(msg::failover_needs_root());
            }
            match patroni::programs()? {
                patroni::Availability::Ready(p) => Some(p),
                patroni::Availability::Missing(why) => bail!(msg::failover_needs(why)),
            }
        } else {
            None
        };
        Ok(Hunt {
            cfg,
            common,
            schema: format!("lab_hunt_{}", std::process::id()),
            found: Mutex::default(),
            current: Mutex::default(),
            explorer: Mutex::default(),
            env_now: Mutex::default(),
            standby: Mutex::default(),
            connections: Mutex::default(),
            ha_programs,
            ha: Mutex::default(),
            pgpool: Mutex::default(),
        })
    }

    fn header(&self, level: Level, version: &str) -> Header {
        Header {
            lab: "hunt".into(),
            level: Some(level.sql().into()),
            seed: Some(self.cfg.seed),
            keys: Some(self.cfg.shape.keys),
            clients: Some(self.cfg.clients),
            server: Some(version.to_string()),
            nemesis: self.cfg.nemesis.iter().map(|f| f.name().to_string()).collect(),
            workload: (self.cfg.shape.predicate.then_some(PREDICATE))
                .or(self.cfg.shape.register.then_some(RW_REGISTER))
                .map(String::from),
            replica: self.cfg.replica,
            synchronous_commit: self.cfg.sync_replica.map(|m| m.setting().to_string()),
        }
    }

    /// One level: the workload, its history checked, reproducers replayed.
    async fn level(&self, env: &Arc<Env>, level: Level) -> Result<()> {
        let truncate = format!("TRUNCATE {}.append", self.schema);
        self.control(env, &truncate, level).await?;
        // With lab's standby: where the level's WAL starts (its commit
        // records are looked up there for an anomaly with a standby read).
        let wal_from = match self.cfg.replica {
            true => Some(
                connect::simple_value(&env.control, "SELECT pg_current_wal_flush_lsn()")
                    .await
                    .map_err(|e| connect::sql_error(e, msg::statement()))?
                    .unwrap_or_default(),
            ),
            false => None,
        };
        let apps: Vec<String> = (0..self.cfg.clients)
            .map(|i| format!("{}c{}", env.app_prefix(), i + 1))
            .collect();
        let w = self.workload(env, level, &apps).await?;
        *self.current.lock().unwrap() = Some(w.clone());
        let links = self.links(env, &w, &apps, level).await?;
        self.run_sessions(&w, links).await?;
        let mut txns = w.so_far();
        let mut events = Vec::new();
        if let Some(c) = &w.chaos {
            // Every fault undone: the final read says what the server kept.
            c.heal_all();
            txns.push(self.final_read(c, env, &w, &txns).await?);
            events = c.events();
        }
        *self.current.lock().unwrap() = None;
        let read_back = w.read_back.lock().unwrap().clone();
        let differs = crate::commands::hunt::workload::level_read_back(&read_back, level)
            .err()
            .map(|e| e.to_string());
        // The control connection a kill or a restart ended, replaced.
        let env = &self.live(env).await?;
        let mut history = History {
            header: Some(self.header(level, &env.server.version)),
            txns,
            nemesis: events,
            untimed: false,
        };
        // An rw-register's version orders are the server's commit order:
        // every writer's commit timestamp, before the check.
        if history.register() {
            let writers = (history.txns.iter().enumerate())
                .filter(|(_, t)| t.status != Status::Fail)
                .filter_map(|(t, txn)| txn.xid.map(|x| (t, x as i64)))
                .collect();
            commit_times(env, &mut history, writers).await?;
        }
        let checked = check::check(&history, self.cfg.options).map_err(|d| anyhow::anyhow!(d.what))?;
        let wanted = (checked.anomalies.iter())
            .flat_map(|a| a.distinct_txns())
            .filter(|t| history.txns[*t].committed_at.is_none())
            .filter_map(|t| history.txns[t].xid.map(|x| (t, x as i64)))
            .collect();
        commit_times(env, &mut history, wanted).await?;
        if let Some(from) = wal_from {
            commit_lsns(env, &self.schema, &from, &mut history, &checked).await?;
        }
        let file = self.write_history(&history, level)?;
        // The transactions' own time (first start to last end), as --check
        // reads it from the history: the same txns/s either way.
        let secs = recorded_secs(&history);
        // Kept before the replays: a run stopped during them still reports
        // the level, with the reproducers replayed so far.
        let slot = {
            let mut found = self.found.lock().unwrap();
            found.push(Found {
                level: Some(level),
                history: history.clone(),
                checked: checked.clone(),
                replayed: Vec::new(),
                file,
                read_back_differs: differs,
                secs,
                partial: false,
            });
            found.len() - 1
        };
        if let Some(dir) = &self.cfg.specs {
            self.reproduce(env, (&history, &checked), level, dir, slot).await?;
        }
        Ok(())
    }

    /// The level's workload, its progress bar, and its nemesis if asked
    /// for (what the level starts from checkpointed first).
    async fn workload(&self, env: &Arc<Env>, level: Level, apps: &[String]) -> Result<Arc<Workload>> {
        let (len, label) = match self.cfg.budget {
            Budget::Txns(n) => (n, format!("lab hunt {}", level.flag())),
            Budget::Seconds(s) => (s.ceil() as u64, format!("lab hunt {} (s)", level.flag())),
        };
        let bar = crate::progress::Progress::for_stderr(self.common.lang, false).bar(None, len, label);
        let ha = self.ha.lock().unwrap().clone();
        // Through a failover a statement may wait until Patroni demotes the old primary.
        let deadline = match ha {
            Some(_) => self.common.wait_timeout.max(HA_TIMEOUT),
            None => self.common.wait_timeout,
        };
        let mut w = Workload::new(level, self.cfg.budget, self.cfg.seed, self.cfg.shape, deadline, bar);
        w.balanced = self.cfg.via_pgpool;
        if !self.cfg.nemesis.is_empty() {
            let chaos = Chaos::new(
                self.cfg.nemesis.clone(),
                w.began(),
                apps.to_vec(),
                env.own.clone(),
                env.pg.clone(),
                env.settings.clone(),
                deadline,
            )
            .await?;
            w.chaos = Some(Arc::new(match ha {
                Some((ha, sync)) => chaos.on_cluster(ha, sync),
                None => chaos,
            }));
            // What the level starts from is on disk before the first kill:
            // a crash loses nothing but what the run does after it.
            if env.own.is_some() {
                self.control(env, "CHECKPOINT", level).await?;
            }
        }
        Ok(Arc::new(w))
    }

    /// How each session reaches the primary (through the nemesis's proxy
    /// if any) and, with --replica, the standby: each connected once first
    /// (a server that refuses a session is an error at once), and how it
    /// is connected recorded.
    async fn links(
        &self,
        env: &Arc<Env>,
        w: &Workload,
        apps: &[String],
        level: Level,
    ) -> Result<Vec<(Link, Option<Link>)>> {
        let mut setup = connect::session_setup(Some(&self.schema), &env.settings);
        let mut through_pgpool = self.pgpool.lock().unwrap().as_ref().map(|(_, pg)| pg.clone());
        if let Some(pg) = &mut through_pgpool {
            // In the startup packet: pgpool-II sends a statement of several
            // SETs to the primary only.
            let options = connect::startup_options(Some(&self.schema), &env.settings);
            let all = format!("{} {options}", pg.get_options().unwrap_or_default());
            pg.options(all.trim());
            setup.clear();
        }
        let session_pg = match (&w.chaos, through_pgpool.clone()) {
            (_, Some(pg)) => pg,
            (Some(c), None) => c.session_pg(&env.session_pg()),
            (None, None) => env.session_pg(),
        };
        let mut links = Vec::new();
        let mut conns = Vec::new();
        for (i, app) in apps.iter().enumerate() {
            let link = Link {
                pg: session_pg.clone(),
                app: app.clone(),
                setup: setup.clone(),
            };
            let conn = connect::connect(&link.pg, &link.app, Some(&link.setup), None).await?;
            (self.connections.lock().unwrap()).insert(format!("c{}", i + 1), Connection::of(conn.tls.clone()));
            conns.push(conn);
            links.push(link);
        }
        drop(conns);
        // Read-only transactions to the standby too, once it has replayed
        // the level's start (a hot standby refuses SERIALIZABLE: none then).
        let standby_pg = self.standby.lock().unwrap().as_ref().map(|(_, pg)| pg.clone());
        if let Some(pg) = &standby_pg {
            self.caught_up(env, pg).await?;
        }
        // Through pgpool-II it, not lab, sends reads to the standby.
        let standby_pg = standby_pg.filter(|_| level != Level::Serializable && through_pgpool.is_none());
        Ok(links
            .into_iter()
            .map(|l| {
                let standby = standby_pg.as_ref().map(|pg| Link {
                    pg: pg.clone(),
                    app: format!("{}s", l.app),
                    setup: l.setup.clone(),
                });
                (l, standby)
            })
            .collect())
    }

    /// Every session's task and the nemesis's, to their end: the first
    /// error, if any (one session's error stops the others).
    async fn run_sessions(&self, w: &Arc<Workload>, links: Vec<(Link, Option<Link>)>) -> Result<()> {
        let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
        let nemesis = w.chaos.clone().map(|c| {
            let schedule = Schedule::new(
                self.cfg.seed,
                &self.cfg.nemesis,
                self.cfg.clients,
                self.cfg.nemesis_interval,
            );
            tokio::spawn(c.run(schedule, stop_rx))
        });
        let tasks: Vec<_> = (links.into_iter())
            .enumerate()
            .map(|(i, (link, standby))| {
                let w = w.clone();
                tokio::spawn(async move {
                    let r = w.session(&link, standby.as_ref(), i as u64 + 1).await;
                    if r.is_err() {
                        w.stop();
                    }
                    r
                })
            })
            .collect();
        let mut first = Ok(());
        for t in tasks {
            let r = crate::engine::joined(t).await;
            if first.is_ok() {
                first = r;
            }
        }
        let _ = stop_tx.send(true);
        if let Some(n) = nemesis {
            let r = crate::engine::joined(n).await;
            if first.is_ok() {
                first = r;
            }
        }
        w.bar.finish_and_clear();
        first
    }

    /// `sql` on the control connection, within the deadline (a control
    /// connection gone silent must not hold the run).
    async fn control(&self, env: &Env, sql: &str, level: Level) -> Result<()> {
        tokio::time::timeout(self.common.wait_timeout, env.control.batch_execute(sql))
            .await
            .map_err(|_| {
                let s = self.common.wait_timeout.as_secs_f64();
                anyhow::anyhow!(crate::engine::msg::no_answer(
                    crate::engine::msg::at(level.flag(), "control", sql),
                    s
                ))
            })?
            .map_err(|e| connect::sql_error(e, msg::statement()))?;
        Ok(())
    }

    /// lab's standby made synchronous (`--sync-replica`): named in the
    /// primary's synchronous_standby_names, every commit waiting as
    /// synchronous_commit = `mode` says (lab's own server: ALTER SYSTEM, gone
    /// with it), with `lab replica`'s statements (lab/replica.sql).
    /// Confirmed from the server before any transaction: the standby's
    /// sync_state and the setting as a backend reads it back.
    async fn synchronous(&self, env: &Env, mode: super::args::SyncReplica) -> Result<()> {
        let files = crate::files::LabFiles::of(self.cfg.lab_dir.as_deref())?;
        let sql = SqlFile::load(&files, "replica.sql")?;
        let mode_sql = format!("ALTER SYSTEM SET synchronous_commit = '{}'", mode.setting());
        for statement in [sql.get("sync_on")?, &mode_sql, sql.get("reload")?] {
            env.control
                .batch_execute(statement)
                .await
                .map_err(|e| connect::sql_error(e, msg::statement()))?;
        }
        let confirmed = format!(
            "SELECT current_setting('synchronous_commit') = '{}' AND EXISTS (SELECT FROM pg_stat_replication \
             WHERE sync_state = 'sync')",
            mode.setting()
        );
        if !env.until(&confirmed, env.wait_timeout, msg::statement).await? {
            bail!(msg::not_synchronous(mode.setting(), env.wait_timeout.as_secs_f64()));
        }
        if mode == super::args::SyncReplica::RemoteApply {
            self.commits_wait(env, &sql).await?;
        }
        Ok(())
    }

    /// pg_stat_replication says sync once the walsender has read the new
    /// synchronous_standby_names, but a commit waits only once the
    /// checkpointer has too. As `lab replica` asks it: with replay paused
    /// on lab's standby, its probe's commit (`sync_probe`, remote_apply)
    /// must be seen waiting (SyncRep); resuming replay lets it go. Asked
    /// again until it waits, within the deadline.
    async fn commits_wait(&self, env: &Env, sql: &SqlFile) -> Result<()> {
        let failed = |e: tokio_postgres::Error| connect::sql_error(e, msg::statement());
        let wait = env.wait_timeout;
        let standby_pg = (self.standby.lock().unwrap().as_ref()).map(|(_, pg)| pg.clone());
        let Some(standby_pg) = standby_pg else { return Ok(()) };
        let standby = connect::connect(&standby_pg, "lab:hunt:standby", None, None).await?;
        let (pause, resume, probe_sql) = (
            sql.get("pause")?,
            sql.get("resume")?,
            sql.get("sync_probe")?.to_string(),
        );
        let deadline = Instant::now() + wait;
        loop {
            standby.client.batch_execute(pause).await.map_err(failed)?;
            let probe = connect::connect(&env.pg, "lab:hunt:probe", None, None).await?;
            let pid: i32 = (probe.client.query_one("SELECT pg_backend_pid()", &[]).await)
                .map_err(failed)?
                .get(0);
            let (client, text) = (probe.client, probe_sql.clone());
            let commit = tokio::spawn(async move { client.batch_execute(&text).await });
            let waiting =
                format!("SELECT EXISTS (SELECT FROM pg_stat_activity WHERE pid = {pid} AND wait_event = 'SyncRep')");
            let waited = env
                .until(&waiting, std::time::Duration::from_millis(500), msg::statement)
                .await?;
            standby.client.batch_execute(resume).await.map_err(failed)?;
            match tokio::time::timeout(wait, commit).await {
                Ok(Ok(Ok(()))) => {}
                Ok(Ok(Err(e))) => return Err(failed(e)),
                _ => bail!(msg::not_synchronous("remote_apply", wait.as_secs_f64())),
            }
            if waited {
                return Ok(());
            }
            if Instant::now() > deadline {
                bail!(msg::not_synchronous("remote_apply", wait.as_secs_f64()));
            }
        }
    }

    /// Until lab's standby has replayed what the primary has written so far
    /// (the level's TRUNCATE: no element of an earlier level is read there),
    /// within the deadline.
    async fn caught_up(&self, env: &Env, standby: &crate::postgres::ConnInfo) -> Result<()> {
        let wait = self.common.wait_timeout;
        let secs = wait.as_secs_f64();
        let deadline = Instant::now() + wait;
        let lsn: String = tokio::time::timeout(wait, env.control.query_one("SELECT pg_current_wal_lsn()::text", &[]))
            .await
            .map_err(|_| anyhow::anyhow!(msg::no_answer(secs)))?
            .map_err(|e| connect::sql_error(e, msg::statement()))?
            .get(0);
        let conn = connect::connect(standby, "lab:hunt:standby", None, None).await?;
        let ask = "SELECT coalesce(pg_last_wal_replay_lsn() >= $1::text::pg_lsn, false)";
        loop {
            let replayed: bool = tokio::time::timeout(wait, conn.client.query_one(ask, &[&lsn]))
                .await
                .map_err(|_| anyhow::anyhow!(msg::no_answer(secs)))?
                .map_err(|e| connect::sql_error(e, msg::statement()))?
                .get(0);
            if replayed {
                return Ok(());
            }
            if Instant::now() > deadline {
                bail!(msg::standby_behind(lsn, secs));
            }
            tokio::time::sleep(std::time::Duration::from_millis(2)).await;
        }
    }

    /// The run's environment with a control connection that answers: `env`,
    /// or (a kill or a restart ended its control connection) the same with a
    /// new one, kept for the rest of the run and its clean-up.
    async fn live(&self, env: &Arc<Env>) -> Result<Arc<Env>> {
        let now = self.env_now.lock().unwrap().clone().unwrap_or_else(|| env.clone());
        if self
            .cfg
            .nemesis
            .iter()
            .all(|f| !matches!(f, Fault::Kill | Fault::Restart | Fault::Failover))
            || !now.control_lost().await
        {
            return Ok(now);
        }
        let app = self.setup().control_app;
        let deadline = Instant::now() + self.common.wait_timeout;
        let fresh = loop {
            match connect::connect_control(&now.pg, &app, Some(&now.settings), now.control_silence()).await {
                Ok(c) => break c,
                Err(e) if crate::commands::hunt::chaos::comes_back(&e) && Instant::now() < deadline => {
                    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                }
                Err(e) => return Err(e),
            }
        };
        let env = Arc::new(now.with_new_control(fresh.client, &app).await);
        *self.env_now.lock().unwrap() = Some(env.clone());
        Ok(env)
    }

    /// After a nemesis: every key the history names read once more, in one
    /// transaction at the level, once the server takes connections again:
    /// what the server kept. A transaction of its own session (one past
    /// the last), as Jepsen's final reads are.
    async fn final_read(&self, chaos: &Chaos, env: &Env, w: &Workload, txns: &[Txn]) -> Result<Txn> {
        let setup = connect::session_setup(Some(&self.schema), &env.settings);
        let app = format!("{}final", env.app_prefix());
        let conn = chaos.connect(&env.session_pg(), &app, Some(&setup)).await?;
        let begin = format!("BEGIN ISOLATION LEVEL {}", w.level.sql().to_uppercase());
        let start = w.began().elapsed().as_nanos() as u64;
        let rows = tokio::time::timeout(self.common.wait_timeout, async {
            conn.client.batch_execute(&begin).await?;
            let rows = conn.client.query("SELECT k, v FROM append ORDER BY k", &[]).await?;
            conn.client.batch_execute("COMMIT").await?;
            Ok::<_, tokio_postgres::Error>(rows)
        })
        .await
        .map_err(|_| anyhow::anyhow!(msg::no_answer(self.common.wait_timeout.as_secs_f64())))?
        .map_err(|e| connect::sql_error(e, msg::statement()))?;
        let end = w.began().elapsed().as_nanos() as u64;
        let mut kept: std::collections::BTreeMap<i64, Vec<i64>> = rows
            .iter()
            .map(|r| (r.get::<_, i64>(0), r.get::<_, Vec<i64>>(1)))
            .collect();
        for t in txns {
            for op in &t.ops {
                kept.entry(op.key()).or_default();
            }
        }
        let ops: Vec<Op> = (kept.into_iter())
            .map(|(k, v)| match self.cfg.shape.register {
                true => Op::Get(k, v.first().copied()),
                false => Op::Read(k, Some(v)),
            })
            .collect();
        let index = txns.iter().map(|t| t.index + 1).max().unwrap_or(0);
        Ok(Txn {
            end: Some(end),
            at: vec![end; ops.len()],
            ..Txn::new(index, self.cfg.clients as u64 + 1, Status::Ok, start, ops)
        })
    }

    fn write_history(&self, h: &History, level: Level) -> Result<Option<PathBuf>> {
        let Some(path) = &self.cfg.history else { return Ok(None) };
        let path = if self.cfg.levels.len() > 1 {
            let stem = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            path.with_file_name(format!("{stem}.{}.jsonl", level.flag()))
        } else {
            path.clone()
        };
        output::write_file(&path, &h.to_json_lines(), msg::could_not_write)?;
        Ok(Some(path))
    }

    /// A reproducer for each cycle found: written, then replayed (shrunk
    /// first; every operation of the cycle's transactions if the shrunk one
    /// does not show the anomaly each time); each kept in `found[slot]` as
    /// it is done.
    async fn reproduce(
        &self,
        env: &Arc<Env>,
        (history, checked): (&History, &Checked),
        level: Level,
        dir: &Path,
        slot: usize,
    ) -> Result<()> {
        let mut names: Vec<String> = Vec::new();
        // An rw-register's anomaly is replayed as the list-append history its
        // version orders made of it: the same rows locked and written, and
        // the replay's reads show each key's order, which a register's cannot.
        let cycles = checked.anomalies.iter().any(|a| a.name.is_cycle());
        let lifted = (history.register() && cycles)
            .then(|| as_list_append(history, &self.cfg.options))
            .transpose()?;
        let register = lifted.is_some();
        let history = lifted.as_ref().unwrap_or(history);
        for (i, a) in checked.anomalies.iter().enumerate().filter(|(_, a)| a.name.is_cycle()) {
            let mut about =
                msg::spec_about(a.name.text(), level.sql(), self.cfg.seed, txn_list(history, a)).render(Lang::En);
            if register {
                about = format!("{about} {}", msg::register_replay().render(Lang::En));
            }
            let Some(mut best) = self.best_replay(env, history, a, level, &about).await? else {
                continue;
            };
            let mut file = format!("{}-{}", a.name.text().to_ascii_lowercase(), level.flag());
            let n = names.iter().filter(|x| **x == file).count();
            names.push(file.clone());
            if n > 0 {
                file = format!("{file}-{}", n + 1);
            }
            std::fs::create_dir_all(dir)
                .map_err(|e| anyhow::anyhow!(msg::could_not_write(format!("{}: {e}", dir.display()))))?;
            let path = dir.join(format!("{file}.spec"));
            output::write_file(&path, &best.reproducer.text, msg::could_not_write)?;
            best.path = Some(path);
            self.found.lock().unwrap()[slot].replayed.push((i, best));
        }
        Ok(())
    }

    /// The reproducer of `a` that showed it most often: shrunk first, in
    /// each order of its steps, until one shows it every time. One whose
    /// transactions read on lab's standby too is written but not replayed:
    /// a spec's sessions all run on one server, where it cannot show.
    async fn best_replay(
        &self,
        env: &Arc<Env>,
        history: &History,
        a: &Anomaly,
        level: Level,
        about: &str,
    ) -> Result<Option<Replayed>> {
        let on_standby: Vec<String> = (a.distinct_txns().into_iter())
            .filter(|t| history.txns[*t].on_standby())
            .map(|t| tname(history, t))
            .collect();
        if !on_standby.is_empty() {
            let shrink = self.cfg.shrink;
            return Ok(Some(Replayed {
                reproducer: reproduce::build(history, a, level, (shrink, Order::Derived), about),
                path: None,
                showed: 0,
                of: 0,
                instead: Some(msg::replay_one_server(on_standby.join(", ")).render(self.common.lang)),
                shrunk: shrink,
            }));
        }
        let mut best: Option<Replayed> = None;
        let shrinks: &[bool] = if self.cfg.shrink { &[true, false] } else { &[false] };
        for &shrink in shrinks {
            for order in [Order::Derived, Order::Answered, Order::Sent] {
                let r = reproduce::build(history, a, level, (shrink, order), about);
                let replayed = self.replay(env, r, shrink).await?;
                let all = replayed.showed == replayed.of;
                if best.as_ref().is_none_or(|b| replayed.showed > b.showed) {
                    best = Some(replayed);
                }
                if all {
                    return Ok(best);
                }
            }
        }
        Ok(best)
    }

    /// `r`'s permutation run `replays` times on lab's engine, each run's
    /// steps checked again as a history.
    async fn replay(&self, env: &Arc<Env>, r: Reproducer, shrunk: bool) -> Result<Replayed> {
        // A session per transaction and the final read's, a setup connection,
        // the replay's watcher, and the run's control connection.
        let need = r.sessions.len() + 4;
        if let Some(max) = self.cfg.max_connections
            && need > max
        {
            return Ok(Replayed {
                instead: Some(msg::replay_needs(need, max).render(self.common.lang)),
                reproducer: r,
                path: None,
                showed: 0,
                of: 0,
                shrunk,
            });
        }
        let spec = crate::specfile::parse(&r.text).map_err(|e| anyhow::anyhow!("{}: {}", e.line, e.message))?;
        let name = format!("hunt-{}", r.name.text().to_ascii_lowercase());
        let mut cfg = ExploreConfig::new(
            Source {
                name,
                spec,
                bookstore: false,
                lab: false,
                phenomenon: true,
            },
            Choice {
                levels: vec![None],
                all: false,
                sample: None,
                isolation: false,
                options: None,
            },
            crate::engine::Jobs { most: 1, first: 1 },
            self.common.wait_timeout,
            self.common.lang,
        )?;
        let plan = cfg.plans[0][0].clone();
        cfg.plans[0] = vec![plan; self.cfg.replays];
        let explorer = Arc::new(Explorer::new(cfg));
        *self.explorer.lock().unwrap() = Some(explorer.clone());
        explorer.run_all(env).await?;
        *self.explorer.lock().unwrap() = None;
        let results = explorer.take();
        let mut showed = 0;
        let mut instead = None;
        let mut first = None;
        for run in results.iter().flatten() {
            match reproduce::shows(&r, &run.observation, self.cfg.options) {
                Ok(()) => {
                    showed += 1;
                    first = first.or(Some(&run.observation));
                }
                Err(why) => instead = instead.or(Some(why)),
            }
        }
        let mut r = r;
        if let Some(obs) = first {
            reproduce::with_occurs_if(&mut r, obs);
        }
        Ok(Replayed {
            reproducer: r,
            path: None,
            showed,
            of: results.len(),
            instead,
            shrunk,
        })
    }
}

/// An anomaly's JSON with its transactions named by their numbers (T12:
/// 12), as the explanations and the spec name them, instead of the
/// checker's positions in the history: `txns`, a cycle's `from` and `to`,
/// a read's `txn`, `writer` and `other`.
fn numbered(v: &mut serde_json::Value, h: &History) {
    let number = |t: &mut serde_json::Value| {
        if let Some(i) = t.as_u64().and_then(|i| h.txns.get(i as usize)) {
            *t = serde_json::Value::from(i.index);
        }
    };
    if let Some(txns) = v["txns"].as_array_mut() {
        txns.iter_mut().for_each(number);
    }
    if let Some(cycle) = v["cycle"].as_array_mut() {
        for link in cycle {
            number(&mut link["from"]);
            number(&mut link["to"]);
            if let Some(read) = link
                .get_mut("why")
                .and_then(|w| w.get_mut("order"))
                .and_then(|o| o.get_mut("longest_read"))
            {
                number(&mut read["txn"]);
            }
        }
    }
    if let Some(read) = v.get_mut("read").filter(|r| r.is_object()) {
        number(&mut read["txn"]);
        number(&mut read["writer"]);
        if let Some(other) = read["other"].as_array_mut().and_then(|o| o.first_mut()) {
            number(other);
        }
    }
}

/// "T12, T40, T41": the transactions of an anomaly, by their numbers.
fn txn_list(h: &History, a: &Anomaly) -> String {
    a.distinct_txns()
        .iter()
        .map(|t| tname(h, *t))
        .collect::<Vec<_>>()
        .join(", ")
}

fn tname(h: &History, t: usize) -> String {
    format!("T{}", h.txns[t].index)
}

/// A list as the tables show it: `[1 2 5]`, the start elided when long.
fn list(l: &[i64]) -> String {
    let shown: Vec<String> = l.iter().rev().take(6).rev().map(|e| e.to_string()).collect();
    if l.len() > 6 {
        format!("[… {}]", shown.join(" "))
    } else {
        format!("[{}]", shown.join(" "))
    }
}

/// When the server says each transaction of `wanted` (position, its xid)
/// committed (`pg_xact_commit_timestamp`), where it keeps commit timestamps
/// (`track_commit_timestamp`, on in lab's throwaway cluster): the server's
/// own commit order, beside the order its answers reached lab.
async fn commit_times(env: &Env, h: &mut History, wanted: Vec<(usize, i64)>) -> Result<()> {
    if wanted.is_empty() {
        return Ok(());
    }
    let on = connect::simple_value(&env.control, "SHOW track_commit_timestamp")
        .await
        .map_err(|e| connect::sql_error(e, msg::statement()))?;
    if on.as_deref() != Some("on") {
        return Ok(());
    }
    let xids: Vec<i64> = wanted.iter().map(|(_, x)| *x).collect();
    let rows = env
        .control
        .query(
            "SELECT x, to_char(pg_xact_commit_timestamp((x % 4294967296)::text::xid) AT TIME ZONE 'UTC', \
             'YYYY-MM-DD HH24:MI:SS.US') FROM unnest($1::bigint[]) x",
            &[&xids],
        )
        .await
        .map_err(|e| connect::sql_error(e, msg::statement()))?;
    let mut of: BTreeMap<i64, Vec<usize>> = BTreeMap::new();
    for (t, x) in wanted {
        of.entry(x).or_default().push(t);
    }
    for r in rows {
        let (x, at): (i64, Option<String>) = (r.get(0), r.get(1));
        for t in of.get(&x).into_iter().flatten() {
            h.txns[*t].committed_at = at.clone().map(String::into_boxed_str);
        }
    }
    Ok(())
}

/// For the anomalies with a read on lab's standby: where each of their
/// transactions' commit records is in the primary's WAL, from `from` (the
/// level's start), read with pg_walinspect (PostgreSQL 15 and later; made
/// in the run's schema, dropped with it). Nothing where the server has no
/// pg_walinspect or no longer has that WAL.
async fn commit_lsns(env: &Env, schema: &str, from: &str, h: &mut History, checked: &Checked) -> Result<()> {
    let wanted: Vec<(usize, i64)> = (checked.anomalies.iter())
        .filter(|a| a.distinct_txns().into_iter().any(|t| h.txns[t].on_standby()))
        .flat_map(|a| a.distinct_txns())
        .filter_map(|t| h.txns[t].xid.map(|x| (t, (x % (1 << 32)) as i64)))
        .collect();
    if wanted.is_empty() {
        return Ok(());
    }
    let available = "SELECT count(*)::text FROM pg_available_extensions WHERE name = 'pg_walinspect'";
    let has = connect::simple_value(&env.control, available)
        .await
        .map_err(|e| connect::sql_error(e, msg::statement()))?;
    if has.as_deref() != Some("1") {
        return Ok(());
    }
    env.control
        .batch_execute(&format!("CREATE EXTENSION IF NOT EXISTS pg_walinspect SCHEMA {schema}"))
        .await
        .map_err(|e| connect::sql_error(e, msg::statement()))?;
    // pg_walinspect reads only WAL on disk (lab's server acknowledges
    // commits before they are: synchronous_commit off): until the WAL
    // written so far is (the WAL writer's next round), within the deadline.
    let until: String = env
        .control
        .query_one("SELECT pg_current_wal_insert_lsn()::text", &[])
        .await
        .map_err(|e| connect::sql_error(e, msg::statement()))?
        .get(0);
    let flushed = format!("SELECT pg_current_wal_flush_lsn() >= '{until}'::pg_lsn");
    if !env.until(&flushed, env.wait_timeout, msg::statement).await? {
        return Ok(());
    }
    let xids: Vec<i64> = wanted.iter().map(|(_, x)| *x).collect();
    let sql = format!(
        "SELECT xid::text::bigint, start_lsn::text FROM {schema}.pg_get_wal_records_info($1::text::pg_lsn, \
         $2::text::pg_lsn) WHERE resource_manager = 'Transaction' AND record_type LIKE 'COMMIT%' \
         AND xid::text::bigint = ANY($3)"
    );
    let secs = env.wait_timeout.as_secs_f64();
    let rows = match tokio::time::timeout(env.wait_timeout, env.control.query(&sql, &[&from, &until, &xids])).await {
        Err(_) => bail!(msg::no_answer(secs)),
        // The WAL recycled since the level began: nothing to say.
        Ok(Err(e))
            if e.as_db_error()
                .is_some_and(|d| d.message().contains("has already been removed")) =>
        {
            return Ok(());
        }
        Ok(Err(e)) => return Err(connect::sql_error(e, msg::statement())),
        Ok(Ok(rows)) => rows,
    };
    for r in rows {
        let (x, lsn): (i64, String) = (r.get(0), r.get(1));
        for (t, _) in wanted.iter().filter(|(_, w)| *w == x) {
            h.txns[*t].commit_lsn = Some(lsn.clone().into_boxed_str());
        }
    }
    Ok(())
}

/// An anomaly's writers in the order of their commit records in the WAL,
/// the order a standby applies them (where lab read it: [`commit_lsns`]).
fn wal_order(h: &History, a: &Anomaly) -> Option<Text> {
    let mut at: Vec<(u64, String)> = Vec::new();
    for t in a.distinct_txns() {
        if let Some(lsn) = h.txns[t].commit_lsn.as_deref() {
            at.push((lsn_value(lsn)?, format!("{} ({lsn})", tname(h, t))));
        }
    }
    if at.len() < 2 {
        return None;
    }
    at.sort();
    let order: Vec<String> = at.into_iter().map(|(_, s)| s).collect();
    Some(msg::wal_order(order.join(", ")))
}

/// An LSN as PostgreSQL prints it (`16/B374D848`), as a number.
fn lsn_value(lsn: &str) -> Option<u64> {
    let (hi, lo) = lsn.split_once('/')?;
    Some((u64::from_str_radix(hi, 16).ok()? << 32) | u64::from_str_radix(lo, 16).ok()?)
}

/// An rw-register history as list-append: each write an append, each read
/// of a value the key's version order up to it (see [`super::register`]).
fn as_list_append(h: &History, opts: &check::Options) -> Result<History> {
    let lifted = super::register::lift(h, opts).map_err(|d| anyhow::anyhow!(d.what))?;
    let mut header = h.header.clone();
    if let Some(h) = header.as_mut() {
        h.workload = None;
    }
    Ok(History {
        header,
        txns: lifted.txns,
        nemesis: h.nemesis.clone(),
        untimed: h.untimed,
    })
}

/// An rw-register history's cycle, edge by edge: writes and reads of
/// values, each ww and rw edge with where its key's version order came from.
fn register_cycle(h: &History, a: &Anomaly, read_of: &dyn Fn(usize, usize) -> String) -> Vec<Text> {
    // The next version where the key's order is decided; else a later
    // one (nil comes before every value).
    let from = |order: &OrderFrom| match order {
        OrderFrom::CommitOrder => msg::by_commit_order(),
        OrderFrom::Inferred => msg::by_history(),
        OrderFrom::SequentialKeys => msg::by_sequential_keys(),
        OrderFrom::LinearizableKeys => msg::by_linearizable_keys(),
        OrderFrom::Partial { by } => match by {
            PairFrom::History => msg::by_history(),
            PairFrom::SequentialKeys => msg::by_sequential_keys(),
            PairFrom::LinearizableKeys => msg::by_linearizable_keys(),
        },
        _ => msg::nil_first(),
    };
    let decided = |order: &OrderFrom| {
        use OrderFrom::*;
        matches!(order, CommitOrder | Inferred | SequentialKeys | LinearizableKeys)
    };
    (a.cycle.iter())
        .map(|l| {
            let (x, y) = (tname(h, l.from), tname(h, l.to));
            match &l.why {
                Why::Ww {
                    key,
                    first,
                    then,
                    order,
                    ..
                } => match decided(order) {
                    true => msg::why_ww_register(&x, *first, *key, &y, *then, from(order)),
                    false => msg::why_ww_register_later(&x, *first, *key, &y, *then, from(order)),
                },
                Why::Wr { key, elem, .. } => msg::why_wr_register(&y, *key, *elem, &x),
                Why::Rw {
                    key,
                    elem,
                    from_op,
                    order,
                    ..
                } => match decided(order) {
                    true => msg::why_rw_register(&x, *key, read_of(l.from, *from_op), &y, *elem, from(order)),
                    false => msg::why_rw_register_later(&x, *key, read_of(l.from, *from_op), &y, *elem, from(order)),
                },
                Why::Realtime => msg::why_realtime(&x, &y),
                Why::Session => msg::why_session(&x, &y, h.txns[l.from].session),
            }
        })
        .chain(commit_order(h, a))
        .chain(wal_order(h, a))
        .chain(standby_reads(h, a))
        .collect()
}

/// An rw-register's read as the text shows it: its value, nil (the key had
/// none), or ? (a transaction that did not commit: not known).
fn value(v: Option<i64>, status: Status) -> String {
    match (v, status) {
        (Some(v), _) => v.to_string(),
        (None, Status::Ok) => "nil".into(),
        (None, _) => "?".into(),
    }
}

/// What an anomaly is, edge by edge or read by read, in words.
/// `register`: `h` is an rw-register history (the check said so).
pub fn explain(h: &History, a: &Anomaly, registers: Option<VersionSources>) -> Vec<Text> {
    let register = registers.is_some();
    let read_of = |t: usize, op: usize| match &h.txns[t].ops.get(op) {
        // A register's nil as a history file holds it (JSON lines' null, EDN's nil).
        Some(Op::Read(_, l)) if register && l.as_ref().is_none_or(|l| l.is_empty()) => value(None, h.txns[t].status),
        Some(Op::Read(_, Some(l))) => list(l),
        Some(Op::Get(_, v)) => value(*v, h.txns[t].status),
        _ => "[]".into(),
    };
    if register && !a.cycle.is_empty() {
        return register_cycle(h, a, &read_of);
    }
    if !a.cycle.is_empty() {
        return a
            .cycle
            .iter()
            .map(|l| {
                let (x, y) = (tname(h, l.from), tname(h, l.to));
                match &l.why {
                    Why::Ww {
                        key,
                        first,
                        then,
                        order: OrderFrom::Unread,
                        ..
                    } => msg::why_ww_unread(&x, *first, *key, &y, *then),
                    Why::Ww { key, first, then, .. } => msg::why_ww(&x, *first, *key, &y, *then),
                    Why::Wr { key, elem, to_op, .. } => msg::why_wr(&y, *key, read_of(l.to, *to_op), &x, *elem),
                    Why::Rw {
                        key,
                        elem,
                        predicate: Some((lo, hi)),
                        ..
                    } => msg::why_rw_phantom(&x, *lo, *hi, *key, *elem, &y),
                    Why::Rw {
                        key,
                        elem,
                        from_op,
                        order: OrderFrom::Unread,
                        ..
                    } => msg::why_rw_unread(&x, *key, read_of(l.from, *from_op), *elem, &y),
                    Why::Rw { key, elem, from_op, .. } => msg::why_rw(&x, *key, read_of(l.from, *from_op), *elem, &y),
                    Why::Realtime => msg::why_realtime(&x, &y),
                    Why::Session => msg::why_session(&x, &y, h.txns[l.from].session),
                }
            })
            .chain(commit_order(h, a))
            .chain(wal_order(h, a))
            .chain(standby_reads(h, a))
            .collect();
    }
    let Some(r) = &a.read else { return Vec::new() };
    let reader = tname(h, r.txn);
    let seen = read_of(r.txn, r.op);
    let elem = r.elem.unwrap_or_default();
    let writer = r.writer.map(|w| tname(h, w)).unwrap_or_default();
    vec![match a.name.class {
        Class::G1a => msg::why_g1a(&reader, r.key, &seen, elem, &writer),
        Class::G1b => msg::why_g1b(&reader, r.key, &seen, elem, &writer),
        Class::Garbage => msg::why_garbage(&reader, r.key, &seen, elem),
        Class::DuplicateElements => msg::why_duplicate(&reader, r.key, &seen, elem),
        Class::IncompatibleOrder => {
            let (t, op) = r.other.unwrap_or((r.txn, r.op));
            msg::why_order(&reader, r.key, &seen, tname(h, t), read_of(t, op))
        }
        Class::LostUpdate if register => {
            let others: Vec<String> = a.txns[1..].iter().map(|t| tname(h, *t)).collect();
            msg::why_lost_update_register(&reader, r.key, &seen, others.join(", "))
        }
        Class::LostUpdate => {
            let others: Vec<String> = a.txns[1..].iter().map(|t| tname(h, *t)).collect();
            msg::why_lost_update(&reader, r.key, &seen, others.join(", "))
        }
        Class::DirtyUpdate => {
            let (t, op) = r.other.unwrap_or((r.txn, r.op));
            let then = match h.txns[t].ops.get(op) {
                Some(Op::Append(_, e)) => *e,
                _ => 0,
            };
            msg::why_dirty_update(tname(h, t), then, r.key, elem, &writer)
        }
        Class::FutureRead => msg::why_future_read(&reader, r.key, &seen, elem),
        Class::CyclicVersions => {
            let timed = (h.txns.iter())
                .any(|t| t.committed_at.is_some() && t.ops.iter().any(|o| matches!(o, Op::Write(k, _) if *k == r.key)));
            let assumed = match registers.map(|s| s.assumed) {
                Some((true, true)) => Some(msg::assumed_both()),
                Some((true, false)) => Some(msg::assumed_sequential()),
                Some((false, true)) => Some(msg::assumed_linearizable()),
                _ => None,
            };
            match (timed, assumed) {
                (true, Some(a)) => msg::why_cyclic_versions_assumed(r.key, elem, a),
                (true, None) => msg::why_cyclic_versions(r.key, elem),
                (false, Some(a)) => msg::why_cyclic_versions_history_assumed(r.key, elem, a),
                (false, None) => msg::why_cyclic_versions_history(r.key, elem),
            }
        }
        Class::Lost | Class::UnknownContradicted => {
            let w = r.writer.unwrap_or(r.txn);
            match r.other {
                None => msg::why_lost(&writer, elem, r.key, &reader, &seen),
                Some((t, op)) => {
                    // Which of its elements that read showed.
                    let (shown, shown_key) = match &h.txns[t].ops.get(op) {
                        Some(Op::Read(k, Some(l))) => (h.txns[w].ops.iter())
                            .find_map(|o| match o {
                                Op::Append(k2, e) if k2 == k && l.contains(e) => Some((*e, *k)),
                                _ => None,
                            })
                            .unwrap_or((0, *k)),
                        _ => (0, 0),
                    };
                    msg::why_unknown_contradicted(&writer, elem, r.key, &reader, &seen, tname(h, t), shown, shown_key)
                }
            }
        }
        _ => msg::why_internal(&reader, r.key, &seen),
    }]
}

/// An anomaly's transactions that read on lab's standby (`--replica`), and
/// how far it had replayed the primary's WAL then: a standby applies
/// commits in WAL order, the primary makes them visible in the order its
/// backends leave the ProcArray, and the two may differ (Long Fork).
fn standby_reads(h: &History, a: &Anomaly) -> Option<Text> {
    let wrote = |t: usize| h.txns[t].ops.iter().any(|o| matches!(o, Op::Append(..)));
    let named = |t: usize| format!("{} ({})", tname(h, t), h.txns[t].lsn.as_deref().unwrap_or("?"));
    let (split, there): (Vec<usize>, Vec<usize>) = (a.distinct_txns().into_iter())
        .filter(|t| h.txns[*t].on_standby())
        .partition(|t| wrote(*t));
    // Through pgpool-II: a transaction that read on the standby and wrote on the primary.
    if !split.is_empty() {
        let split: Vec<String> = split.into_iter().map(named).collect();
        return Some(msg::split_reads(split.join(", ")));
    }
    let there: Vec<String> = there.into_iter().map(named).collect();
    (!there.is_empty()).then(|| msg::standby_reads(there.join(", ")))
}

/// The order the server committed an anomaly's transactions in, when it
/// said when (every one of them that wrote and committed).
fn commit_order(h: &History, a: &Anomaly) -> Option<Text> {
    let mut at: Vec<(&str, usize)> = Vec::new();
    let mut wrote_nothing = Vec::new();
    for t in a.distinct_txns() {
        let txn = &h.txns[t];
        match (&txn.committed_at, txn.xid) {
            (Some(c), _) => at.push((c, t)),
            (None, Some(_)) => return None,
            (None, None) => wrote_nothing.push(tname(h, t)),
        }
    }
    if at.len() < 2 {
        return None;
    }
    at.sort();
    let order: Vec<String> = at
        .iter()
        .map(|(c, t)| format!("{} ({})", tname(h, *t), c.rsplit(' ').next().unwrap_or(c)))
        .collect();
    Some(if wrote_nothing.is_empty() {
        msg::commit_order(order.join(", "))
    } else {
        // A transaction that wrote nothing has no id, so no commit timestamp.
        msg::commit_order_readers(order.join(", "), wrote_nothing.join(", "))
    })
}

/// The anomaly's transactions as timeline entries (their operations, at
/// the times the server answered them), for the HTML swimlanes.
fn swimlanes(h: &History, a: &Anomaly, register: bool) -> Vec<Entry> {
    let txns = a.distinct_txns();
    let t0 = txns.iter().map(|t| h.txns[*t].start).min().unwrap_or(0);
    let ms = |ns: u64| round_ms(ns.saturating_sub(t0) as f64 / 1e6);
    let mut entries = Vec::new();
    for &t in &txns {
        let txn = &h.txns[t];
        let lane = tname(h, t);
        for (i, op) in txn.ops.iter().enumerate() {
            let at = txn.at.get(i).copied().unwrap_or(txn.start);
            let scan = txn.scan_of(i);
            let (sql, detail) = match op {
                // A predicate read: one statement, what it showed of each key.
                _ if let Some(s) = scan => {
                    if s.op as usize != i {
                        continue;
                    }
                    let seen: Vec<String> = (txn.ops[s.ops()].iter())
                        .filter_map(|o| match o {
                            Op::Read(k, l) => Some(format!("key {k} = {}", l.as_deref().map_or("?".into(), list))),
                            _ => None,
                        })
                        .collect();
                    (crate::commands::hunt::workload::scan_sql(s.lo, s.hi), seen.join(", "))
                }
                Op::Append(k, e) => (
                    crate::commands::hunt::workload::append_sql(*k, *e),
                    format!("append {e} → key {k}"),
                ),
                // A register's nil as lab's JSON lines write it.
                Op::Read(k, None) if register => (
                    crate::commands::hunt::workload::read_sql(*k),
                    format!("key {k} = {}", value(None, txn.status)),
                ),
                Op::Read(k, l) => (
                    crate::commands::hunt::workload::read_sql(*k),
                    format!("key {k} = {}", l.as_deref().map_or("?".into(), list)),
                ),
                Op::Write(k, v) => (
                    crate::commands::hunt::workload::write_sql(*k, *v),
                    format!("write {v} → key {k}"),
                ),
                Op::Get(k, v) => (
                    crate::commands::hunt::workload::read_sql(*k),
                    format!("key {k} = {}", value(*v, txn.status)),
                ),
            };
            let mut e = Entry::new(ms(at), &lane, StepResult::Ok, detail.into());
            e.sql = sql;
            entries.push(e);
        }
        let (result, detail) = match txn.status {
            Status::Ok => (StepResult::Ok, "COMMIT".to_string()),
            Status::Fail => (
                StepResult::Error,
                txn.sqlstate.as_deref().unwrap_or("ROLLBACK").to_string(),
            ),
            Status::Info => (StepResult::Note, "?".into()),
        };
        let mut e = Entry::new(ms(txn.end.unwrap_or(txn.start)), &lane, result, detail.into());
        e.sql = "COMMIT;".into();
        e.sqlstate = txn.sqlstate.as_deref().map(str::to_string);
        entries.push(e);
    }
    entries.sort_by(|a, b| a.t_ms.total_cmp(&b.t_ms));
    entries
}

/// The outputs of a hunt or a check.
pub struct Outputs<'a> {
    pub lang: Lang,
    pub found: &'a [Found],
    pub version: &'a str,
    /// "seed 1, 4 sessions, 4 keys" or the file checked.
    pub about: String,
    pub options: check::Options,
    /// How the workload's sessions connected (none for a history checked).
    pub sessions: BTreeMap<String, Connection>,
}

impl Outputs<'_> {
    /// The order beyond data the checker was asked to use (real time over session order).
    fn via(&self) -> crate::commands::hunt::check::Via {
        use crate::commands::hunt::check::Via;
        match (self.options.realtime, self.options.sessions) {
            (true, _) => Via::Realtime,
            (false, true) => Via::Session,
            _ => Via::Data,
        }
    }

    pub fn as_expected(&self) -> bool {
        self.found.iter().all(Found::as_expected)
    }

    /// The hunt as its report holds it.
    pub fn report(&self, stopped: Option<(Exit, String)>) -> HuntReport {
        HuntReport {
            server_version: self.version.to_string(),
            about: self.about.clone(),
            realtime: self.options.realtime,
            session_order: self.options.sessions,
            levels: self.found.iter().map(|f| self.level(f)).collect(),
            not_visible: if self.found.iter().any(|f| f.history.predicate()) {
                NOT_VISIBLE_PREDICATE
            } else if self.found.iter().any(|f| f.history.register()) {
                NOT_VISIBLE_REGISTER
            } else {
                NOT_VISIBLE
            },
            as_expected: self.as_expected() && stopped.is_none(),
            sessions: self.sessions.clone(),
            error: stopped.map(|(exit, message)| Stopped {
                message,
                exit_code: exit as u8,
            }),
        }
    }

    /// One level's history as the report holds it.
    fn level(&self, f: &Found) -> HuntLevel {
        let at = f.judged_at();
        let ruled_out = f.ruled_out();
        let model = crate::commands::hunt::models::model(at, self.via());
        let models_line = (!ruled_out.not.is_empty()).then(|| {
            if ruled_out.also_not.is_empty() {
                msg::models_ruled_out_alone(at.sql(), model, ruled_out.not.join(", "))
            } else {
                msg::models_ruled_out(at.sql(), model, ruled_out.not.join(", "), ruled_out.also_not.join(", "))
            }
        });
        let sync = (f.history.header.as_ref()).and_then(|h| h.synchronous_commit.clone());
        HuntLevel {
            level: f.level.map(|l| l.sql().to_string()),
            judged_at: at.sql().to_string(),
            model: model.to_string(),
            not: ruled_out.not.iter().map(|s| s.to_string()).collect(),
            also_not: ruled_out.also_not.iter().map(|s| s.to_string()).collect(),
            transactions: f.checked.txns,
            committed: f.checked.committed,
            aborted: f.checked.aborted,
            unknown: f.checked.unknown,
            seconds: (f.secs * 1000.0).round() / 1000.0,
            anomalies: f
                .checked
                .anomalies
                .iter()
                .enumerate()
                .map(|(i, a)| anomaly(f, a, f.replayed.iter().find(|(j, _)| *j == i).map(|(_, r)| r)))
                .collect(),
            counts: f.checked.counts.clone(),
            forbidden_found: f.forbidden().iter().map(Name::text).collect(),
            level_read_back_differs: f.read_back_differs.clone(),
            search_cut_short: f.checked.cut_short,
            partial: f.partial,
            history: f.file.as_ref().map(|p| p.display().to_string()),
            nemesis: nemesis_report(&f.history),
            on_standby: standby_count(&f.history),
            standby_line: standby_count(&f.history).map(|n| {
                let all = f.history.txns.len();
                let failed = (f.history.txns.iter())
                    .filter(|t| t.sqlstate.as_deref() == Some("25P02"))
                    .count();
                match failed {
                    0 => msg::standby_line(n, all),
                    _ => msg::standby_line_25p02(n, all, failed),
                }
            }),
            synchronous_commit: sync.clone(),
            sync_line: sync.map(msg::sync_line),
            version_orders: f.checked.registers.map(|s| {
                BTreeMap::from([
                    ("server", s.server),
                    ("inferred", s.inferred),
                    ("sequential", s.sequential),
                    ("linearizable", s.linearizable),
                    ("undecided", s.undecided),
                    ("cyclic", s.cyclic),
                ])
            }),
            versions_line: f.checked.registers.map(|s| {
                let (server, inferred, undecided) = (s.server, s.inferred, s.undecided);
                match (self.options.sequential_keys, self.options.linearizable_keys) {
                    (true, true) => {
                        msg::versions_line_assumed(server, inferred, s.sequential, s.linearizable, undecided)
                    }
                    (true, false) => {
                        msg::versions_line_one(server, inferred, msg::assuming_sequential(), s.sequential, undecided)
                    }
                    (false, true) => msg::versions_line_one(
                        server,
                        inferred,
                        msg::assuming_linearizable(),
                        s.linearizable,
                        undecided,
                    ),
                    (false, false) => msg::versions_line(server, inferred, undecided),
                }
            }),
            as_expected: f.as_expected(),
            name: f.level_name(),
            secs: f.secs,
            found: f
                .checked
                .names()
                .iter()
                .map(|n| (n.text(), forbidden(*n, at)))
                .collect(),
            models_line,
            // Durability is judged only in a history recorded under a
            // nemesis, phantoms only in one with predicate reads.
            classes: (Class::ALL.into_iter())
                .filter(|c| f.history.under_nemesis() || !matches!(c, Class::Lost | Class::UnknownContradicted))
                .filter(|c| f.history.predicate() || *c != Class::G2)
                .map(|class| {
                    let found: Vec<&Anomaly> = f.checked.anomalies.iter().filter(|a| a.name.class == class).collect();
                    let name = Name::of(class);
                    let mut observed: Vec<Text> = found
                        .iter()
                        .flat_map(|a| explain(&f.history, a, f.checked.registers))
                        .collect();
                    if found.is_empty() {
                        observed.push(msg::not_found());
                    }
                    ClassCase {
                        name: name.text(),
                        expected: if forbidden(name, at) {
                            msg::expected_none(at.sql())
                        } else {
                            msg::expected_allowed(at.sql())
                        },
                        bad: found.iter().any(|a| forbidden(a.name, at)),
                        found: !found.is_empty(),
                        observed,
                        check: msg::check_class(name.text(), at.sql()),
                    }
                })
                .collect(),
        }
    }

    pub fn finished(&self, stopped: Option<(Exit, String)>, format: HuntFormat) -> Result<Finished> {
        let report = self.report(stopped.clone());
        let (mut reports, pages) = render::hunt::suites(&report);
        if let Some((exit, message)) = &stopped {
            // The level that was running, else the run as a whole.
            let at = reports.last().map_or("hunt".to_string(), |r| r.scenario.clone());
            crate::harness::mark_stopped(&mut reports, &at, "-", message.clone(), *exit);
        }
        let stdout = match format {
            HuntFormat::Json => render::hunt::json(&report)?,
            HuntFormat::Table => render::hunt::text(&report, self.lang),
            HuntFormat::Markdown => render::markdown::summary(
                "lab hunt",
                &crate::report::AllReport {
                    server_version: report.server_version.clone(),
                    as_expected: report.as_expected,
                    elapsed_ms: crate::report::round_ms(report.levels.iter().map(|l| l.seconds).sum::<f64>() * 1000.0),
                    scenarios: reports.clone(),
                },
                &Style::plain(self.lang),
            ),
        };
        Ok(Finished {
            reports,
            html_reports: Some(pages),
            html: html::Kind::Runs,
            style: Style::plain(self.lang),
            stdout,
            stderr: Vec::new(),
            as_expected: self.as_expected(),
        })
    }
}

/// How many of a history's transactions ran on lab's standby (none: no `--replica`).
fn standby_count(h: &History) -> Option<usize> {
    h.header.as_ref().filter(|h| h.replica)?;
    Some(h.txns.iter().filter(|t| t.on_standby()).count())
}

/// What a history's nemesis did, counted by kind (none: it had no nemesis).
fn nemesis_report(h: &History) -> Option<NemesisReport> {
    let asked = &h.header.as_ref()?.nemesis;
    if asked.is_empty() {
        return None;
    }
    let mut faults: std::collections::BTreeMap<String, usize> = asked.iter().map(|n| (n.clone(), 0)).collect();
    for e in &h.nemesis {
        *faults.entry(e.nemesis.clone()).or_default() += 1;
    }
    let said: Vec<String> = faults.iter().map(|(k, n)| format!("{n} {k}")).collect();
    Some(NemesisReport {
        line: if h.nemesis.is_empty() {
            msg::nemesis_none(asked.join(", "))
        } else {
            msg::nemesis_line(said.join(", "))
        },
        faults,
    })
}

/// One anomaly as the report holds it: the checker's account of it with
/// its transactions by their numbers, its explanation, its reproducer's replays.
fn anomaly(f: &Found, a: &Anomaly, replayed: Option<&Replayed>) -> AnomalyReport {
    let at = f.judged_at();
    let mut v = serde_json::to_value(a).unwrap_or_default();
    numbered(&mut v, &f.history);
    AnomalyReport {
        found: match v {
            serde_json::Value::Object(m) => m,
            _ => serde_json::Map::new(),
        },
        forbidden: forbidden(a.name, at),
        transactions: a.txns.iter().map(|t| f.history.txns[*t].index).collect(),
        explanation: explain(&f.history, a, f.checked.registers),
        reproducer: replayed.map(|r| ReproducerReport {
            path: r.path.as_ref().map(|p| p.display().to_string()),
            reproduced: r.showed == r.of && r.of > 0,
            showed: r.showed,
            replays: r.of,
            instead: r.instead.clone(),
            steps: r.reproducer.steps,
            unshrunk_steps: r.reproducer.unshrunk,
            shrunk: r.shrunk,
        }),
        name: a.name.text(),
        judged: judged(a.name, at),
        txns: txn_list(&f.history, a),
        replay_line: replayed.map(replay_line),
        timeline: swimlanes(&f.history, a, f.checked.registers.is_some()),
        cycle: (!a.cycle.is_empty()).then(|| CycleFigure {
            nodes: a.cycle.iter().map(|l| tname(&f.history, l.from)).collect(),
            edges: a
                .cycle
                .iter()
                .enumerate()
                .map(|(k, l)| (k, (k + 1) % a.cycle.len(), edge_label(&l.why)))
                .collect(),
        }),
    }
}

/// "forbidden at LEVEL" or "allowed at LEVEL"; read uncommitted says it
/// is held to read committed (as PostgreSQL documents it), where the
/// standard would allow dirty reads.
fn judged(name: Name, at: Level) -> Text {
    let level: crate::i18n::Arg = if at == Level::ReadUncommitted {
        msg::ru_as_rc().into()
    } else {
        at.sql().into()
    };
    if forbidden(name, at) {
        msg::forbidden_at(level)
    } else {
        msg::allowed_at(level)
    }
}

fn edge_label(w: &Why) -> String {
    match w {
        Why::Ww { key, .. } => format!("ww k{key}"),
        Why::Wr { key, .. } => format!("wr k{key}"),
        // A phantom: the key its range (lo..hi) did not return.
        Why::Rw {
            key,
            predicate: Some((lo, hi)),
            ..
        } => format!("rw k{key} (k{lo}..k{hi})"),
        Why::Rw { key, .. } => format!("rw k{key}"),
        Why::Realtime => "rt".into(),
        Why::Session => "session".into(),
    }
}

fn replay_line(r: &Replayed) -> Text {
    let path = r.path.as_ref().map(|p| p.display().to_string()).unwrap_or_default();
    let steps = if r.shrunk && r.reproducer.steps < r.reproducer.unshrunk {
        msg::steps_shrunk(r.reproducer.steps, r.reproducer.unshrunk)
    } else {
        msg::steps(r.reproducer.steps)
    };
    if r.showed == r.of && r.of > 0 {
        msg::reproduced(path, r.showed, r.of, steps)
    } else if r.of == 0 {
        msg::not_replayed(path, r.instead.clone().unwrap_or_default(), steps)
    } else {
        msg::not_reproduced(path, r.showed, r.of, r.instead.clone().unwrap_or_default(), steps)
    }
}

impl Job for Hunt {
    fn common(&self) -> &Common {
        &self.common
    }

    fn setup(&self) -> Setup {
        Setup {
            control_app: "lab:hunt:control".into(),
            run: "hunt".into(),
            schema: self.schema.clone(),
            neutral: true,
            max_connections: self.cfg.max_connections,
            through_pooler: false,
        }
    }

    async fn prepare(&self, env: Env) -> Result<Env> {
        let need = self.cfg.clients;
        crate::harness::check_room(&env, 1, need, |free| msg::no_room(free, need)).await?;
        self.make_schema(&env).await?;
        Ok(env)
    }

    async fn work(&self, env: &Arc<Env>) -> Result<()> {
        *self.env_now.lock().unwrap() = Some(env.clone());
        if self.cfg.replica {
            let Some((bin, port)) = env.throwaway.clone() else {
                bail!(msg::replica_needs_own())
            };
            // On this thread, as the throwaway cluster: the standby's
            // parent-death signal is tied to the thread that starts it.
            let standby =
                tokio::task::block_in_place(|| crate::postgres::cluster::Cluster::standby_of(&bin, port, ""))?;
            // The primary's settings at the standby's port: its database and
            // TLS (a copy of a TLS-only primary is TLS-only, with its certificate).
            let pg = env.pg.through(std::net::Ipv4Addr::LOCALHOST.into(), standby.port);
            if self.cfg.via_pgpool {
                self.start_pgpool(env, &pg)?;
            }
            *self.standby.lock().unwrap() = Some((standby, pg));
            if let Some(mode) = self.cfg.sync_replica {
                self.synchronous(env, mode).await?;
            }
        }
        let on_cluster;
        let env = match &self.ha_programs {
            Some(programs) => {
                on_cluster = self.on_cluster(env, programs.clone()).await?;
                *self.env_now.lock().unwrap() = Some(on_cluster.clone());
                &on_cluster
            }
            None => env,
        };
        for &level in &self.cfg.levels {
            let env = self.live(env).await?;
            self.level(&env, level).await?;
        }
        Ok(())
    }

    async fn clean_up(&self, env: &Env, _failed: bool) -> Result<()> {
        // lab's pgpool-II first (its connections to both servers end with it).
        let pool = self.pgpool.lock().unwrap().take();
        if let Some(p) = pool {
            tokio::task::block_in_place(|| drop(p));
        }
        // lab's HA cluster, if any, first: removed with everything in it
        // (the run's schema there too), no statement sent to a primary a
        // nemesis may have cut off. The schema on the harness's server then.
        let ha = self.ha.lock().unwrap().take();
        if let Some((ha, _)) = ha {
            *self.env_now.lock().unwrap() = None;
            let _ = ha.heal();
            ha.thaw_all();
            tokio::task::block_in_place(|| drop(ha));
        }
        self.clean_up_schema(env).await
    }

    fn summary_title(&self) -> Option<String> {
        Some("lab hunt".to_string())
    }

    fn finish(&self, stop: &Stop, version: &str, _began: Instant) -> Result<Finished> {
        self.finish_run(stop, version)
    }
}

impl Hunt {
    /// `--via pgpool`: lab's pgpool-II in front of the primary and the
    /// standby at `standby` (lab/pgpool.conf: load balancing on, every
    /// load-balanced read to the standby), and where the sessions connect:
    /// through it, with synchronous_commit on in the startup packet (as on
    /// a real server, COMMIT flushes the WAL the standby is sent; pgpool-II
    /// may take a SET for a write).
    fn start_pgpool(&self, env: &Env, standby: &crate::postgres::ConnInfo) -> Result<()> {
        let files = crate::files::LabFiles::of(self.cfg.lab_dir.as_deref())?;
        let settings = files.read("pgpool.conf")?.into_owned();
        // On this thread, as the standby: pgpool-II's parent-death signal
        // is tied to the thread that starts it.
        // A pgpool-II child for every session, lab's own connections besides
        // (lab/pgpool.conf has 8; pgpool-II takes the last of a setting).
        let children = format!("num_init_children = {}", self.cfg.clients + 2);
        let pool = tokio::task::block_in_place(|| {
            crate::postgres::pgpool::Pgpool::start(&env.pg, standby, &settings, &children)
        })?;
        let mut pg = pool.config(env.pg.get_dbname().unwrap_or("postgres"));
        pg.options("-c synchronous_commit=on");
        *self.pgpool.lock().unwrap() = Some((pool, pg));
        Ok(())
    }

    /// `--nemesis failover`: lab's HA cluster started (with the run's
    /// server programs), Patroni's settings for the hunt applied
    /// (lab/failover.conf's `[hunt]`) and settled, the run's schema made on
    /// its primary; the run's environment there, reached through one
    /// connection string for the whole cluster.
    async fn on_cluster(&self, env: &Arc<Env>, programs: patroni::Programs) -> Result<Arc<Env>> {
        let Some((bin, _)) = env.throwaway.clone() else {
            bail!(msg::nemesis_needs_own("failover"))
        };
        if let Some(program) = patroni::lacks(&bin) {
            bail!(msg::failover_lacks(program, bin.display().to_string()));
        }
        let files = crate::files::LabFiles::of(self.cfg.lab_dir.as_deref())?;
        let json = patroni::dynamic_settings(&files.read("failover.conf")?, "hunt").unwrap_or_else(|| "{}".into());
        // Synchronous unless [hunt] says false (Patroni reads on, quorum... as on).
        let sync = match serde_json::from_str::<serde_json::Value>(&json)
            .ok()
            .and_then(|v| v.get("synchronous_mode").cloned())
        {
            Some(serde_json::Value::Bool(b)) => b,
            Some(_) => true,
            None => false,
        };
        let deadline = self.common.wait_timeout.max(HA_TIMEOUT);
        let ha = Arc::new(HaCluster::start(&bin, programs, deadline).await?);
        // Kept at once: the clean-up removes it whatever happens next.
        *self.ha.lock().unwrap() = Some((ha.clone(), sync));
        ha.patch_config(&json).await?;
        if ha.until_settled(sync, Instant::now() + deadline).await?.is_none() {
            bail!(msg::not_settled(deadline.as_secs_f64(), ha.log_tail()));
        }
        let pg = ha.multi_host(patroni::DATABASE);
        let app = self.setup().control_app;
        let control = connect::connect_control(&pg, &app, Some(&env.settings), env.control_silence()).await?;
        let there = env.on_other_server(pg, control.client, &self.schema, &app);
        let need = self.cfg.clients;
        crate::harness::check_room(&there, 1, need, |free| msg::no_room(free, need)).await?;
        self.make_schema(&there).await?;
        crate::output::eline!(
            "{}",
            msg::ha_started(crate::engine::secs(ha.startup), ha.versions.clone(), json).render(self.common.lang)
        );
        Ok(Arc::new(there))
    }

    async fn make_schema(&self, env: &Env) -> Result<()> {
        env.control
            .batch_execute(&format!(
                "CREATE SCHEMA {s}; SET search_path = {s}; {CREATE}; RESET search_path",
                s = self.schema
            ))
            .await
            .map_err(|e| connect::sql_error(e, msg::schema(&self.schema)))
    }

    async fn clean_up_schema(&self, env: &Env) -> Result<()> {
        // lab's standby stopped and removed (its sessions have ended).
        let standby = self.standby.lock().unwrap().take();
        if let Some(s) = standby {
            tokio::task::block_in_place(|| drop(s));
        }
        if let Some(w) = &*self.current.lock().unwrap() {
            w.stop();
            // No backend stays stopped, no session cut off.
            if let Some(c) = &w.chaos {
                c.heal_all();
            }
        }
        // The control connection that still answers (a nemesis may have ended the harness's).
        let now = self.env_now.lock().unwrap().clone();
        let env: &Env = match &now {
            Some(e) if !e.control.is_closed() => e,
            _ => env,
        };
        // A commit of the clean-up's own (the DROPs below) waits for no
        // synchronous standby: lab's is stopped (--sync-replica).
        if self.cfg.sync_replica.is_some() {
            let _ = env.control.batch_execute("SET synchronous_commit = local").await;
        }
        // Kept (not taken): a clean-up tried again on a new control connection needs it too.
        let explorer = self.explorer.lock().unwrap().clone();
        let explored = match explorer {
            Some(e) => e.clean_up(&env.control).await,
            None => Ok(()),
        };
        env.terminate_sessions_via(&env.control).await?;
        env.control
            .batch_execute(&format!("DROP SCHEMA IF EXISTS {} CASCADE", self.schema))
            .await
            .map_err(|e| connect::sql_error(e, msg::schema(&self.schema)))?;
        explored
    }

    fn finish_run(&self, stop: &Stop, version: &str) -> Result<Finished> {
        let mut found = std::mem::take(&mut *self.found.lock().unwrap());
        // A level cut short: the history recorded so far, checked.
        if let Some(w) = self.current.lock().unwrap().take() {
            let txns = w.so_far();
            let history = History {
                header: Some(self.header(w.level, version)),
                txns,
                nemesis: w.chaos.as_ref().map(|c| c.events()).unwrap_or_default(),
                untimed: false,
            };
            if let Ok(checked) = check::check(&history, self.cfg.options) {
                let file = self.write_history(&history, w.level).ok().flatten();
                let secs = recorded_secs(&history);
                found.push(Found {
                    level: Some(w.level),
                    history,
                    checked,
                    replayed: Vec::new(),
                    file,
                    read_back_differs: None,
                    secs,
                    partial: true,
                });
            }
        }
        let outputs = Outputs {
            lang: self.common.lang,
            found: &found,
            version,
            about: msg::about_run(self.cfg.seed, self.cfg.clients, self.cfg.shape.keys).render(self.common.lang),
            options: self.cfg.options,
            sessions: self.connections.lock().unwrap().clone(),
        };
        outputs.finished(stop.error(self.common.lang), self.cfg.format)
    }
}

/// `lab hunt --specs DIR`, checked before the run: a directory lab can
/// write in (made, then taken away again, where it was not there: it is
/// made for good only when a reproducer is written).
fn specs_dir(dir: &Path) -> Result<()> {
    let refused = |why: String| msg::could_not_write(format!("{}: {why}", dir.display()));
    if dir.exists() && !dir.is_dir() {
        bail!(msg::not_a_directory(dir.display().to_string()));
    }
    // The first of its directories that is not there yet: all that is made here.
    let first_missing = dir
        .ancestors()
        .take_while(|a| !a.as_os_str().is_empty() && !a.exists())
        .last();
    std::fs::create_dir_all(dir).map_err(|e| anyhow::anyhow!(refused(e.to_string())))?;
    let probe = dir.join(format!(".lab-write-check-{}", std::process::id()));
    let writable = std::fs::write(&probe, b"").and_then(|()| std::fs::remove_file(&probe));
    if let Some(made) = first_missing {
        let _ = std::fs::remove_dir_all(made);
    }
    writable.map_err(|e| anyhow::anyhow!(refused(e.to_string())))?;
    Ok(())
}

/// How long the recorded run took: from its first transaction's start to its
/// last end, in seconds (0: the history keeps no times).
fn recorded_secs(h: &History) -> f64 {
    if h.untimed {
        return 0.0;
    }
    let first = h.txns.iter().map(|t| t.start).min().unwrap_or(0);
    let last = h.txns.iter().filter_map(|t| t.end).max().unwrap_or(first);
    last.saturating_sub(first) as f64 / 1e9
}

/// `lab hunt --check FILE`: the history read and checked, no server.
pub fn check_file(cfg: &HuntCheck) -> Result<Exit> {
    let began = Instant::now();
    crate::options::writable(&cfg.junit, crate::output::msg::junit)?;
    crate::options::writable(&cfg.html, html::msg::could_not_write)?;
    let unreadable =
        |e: std::io::Error| anyhow::anyhow!(msg::could_not_read(cfg.file.display().to_string(), e.to_string()));
    let damaged = |d: history::Damage| anyhow::anyhow!(msg::damaged(cfg.file.display().to_string(), d.line, d.what));
    // lab's JSON lines are read a block at a time; Jepsen's EDN a form at a time. The
    // file's extension decides, else its first bytes.
    let mut file = std::fs::File::open(&cfg.file).map_err(unreadable)?;
    let mut head = [0u8; 2];
    let n = std::io::Read::read(&mut file, &mut head).map_err(unreadable)?;
    let ext = cfg.file.extension().map(|e| e.to_string_lossy().to_ascii_lowercase());
    let json = match ext.as_deref() {
        Some("jsonl" | "json" | "ndjson") => true,
        Some("edn") => false,
        _ => n == 0 || head[..n].starts_with(b"{\""),
    };
    std::io::Seek::rewind(&mut file).map_err(unreadable)?;
    let history = if json {
        History::read_json_lines(std::io::BufReader::new(file)).map_err(damaged)?
    } else {
        History::read_edn(file).map_err(damaged)?
    };
    if history.txns.is_empty() {
        // Nothing checked is no verdict.
        bail!(msg::empty_history(cfg.file.display().to_string()));
    }
    let keys = super::config::keys_flag(cfg.options.sequential_keys, cfg.options.linearizable_keys);
    if let Some(flag) = keys.filter(|_| !history.register()) {
        let workload = if history.predicate() {
            "predicate"
        } else {
            "list-append"
        };
        bail!(msg::keys_register_only(flag, workload));
    }
    // A Jepsen history says which process ran each operation, one at a
    // time, and when on one clock: its session and real-time orders are
    // checked as Elle checks them, asked for or not.
    let options = if json {
        cfg.options
    } else {
        check::Options {
            realtime: true,
            sessions: true,
            ..cfg.options
        }
    };
    let checked = check::check(&history, options).map_err(damaged)?;
    // The recorded run's own time (txns/s is the workload's, not the checker's).
    let secs = recorded_secs(&history);
    let recorded = history
        .header
        .as_ref()
        .and_then(|h| h.level.as_deref())
        .and_then(Level::parse);
    if let (Some(asked), Some(recorded)) = (cfg.level, recorded)
        && asked != recorded
    {
        let path = cfg.file.display().to_string();
        crate::output::eline!(
            "{}",
            msg::other_level(path, recorded.sql(), asked.sql()).render(cfg.lang)
        );
    }
    let level = cfg.level.or(recorded);
    let version = history
        .header
        .as_ref()
        .and_then(|h| h.server.clone())
        .unwrap_or_default();
    let found = vec![Found {
        level,
        history,
        checked,
        replayed: Vec::new(),
        file: None,
        read_back_differs: None,
        secs,
        partial: false,
    }];
    let outputs = Outputs {
        lang: cfg.lang,
        found: &found,
        version: &version,
        about: cfg.file.display().to_string(),
        options,
        sessions: BTreeMap::new(),
    };
    let f = outputs.finished(None, cfg.format)?;
    if let Some(path) = &cfg.junit {
        output::write_file(path, &render::junit(&f.reports, began.elapsed()), output::msg::junit)?;
    }
    if let Some(path) = &cfg.html {
        let page = html::page(f.html_reports.as_ref().unwrap_or(&f.reports), f.html, &f.style);
        output::write_file(path, &page, html::msg::could_not_write)?;
    }
    output::out(&f.stdout)?;
    // A million transactions take a while to free, and the process ends here.
    std::mem::forget(found);
    Ok(Exit::verdict(f.as_expected))
}

impl crate::options::Run for super::args::HuntArgs {
    fn run(self, cx: &crate::options::Invocation<'_>) -> Result<Exit> {
        match super::config::Hunt::new(&self, cx.lang)? {
            super::config::Hunt::Check(cfg) => check_file(&cfg),
            super::config::Hunt::Run(cfg) => crate::harness::block_on(crate::harness::run(&Hunt::start(*cfg, cx.env)?)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::hunt::history::STANDBY;
    use crate::i18n::Lang;

    /// A Long Fork between a read on the primary and one on the standby:
    /// its explanation names the standby's read and how far it had replayed.
    #[test]
    fn a_long_fork_through_the_standby_says_which_read_was_there() {
        let txn = |i: u64, ops: Vec<Op>| Txn {
            end: Some(i * 10 + 5),
            ..Txn::new(i, i + 1, Status::Ok, i * 10, ops)
        };
        let r = |k, l: &[i64]| Op::Read(k, Some(l.to_vec()));
        let mut there = txn(3, vec![r(1, &[]), r(2, &[2])]);
        there.node = Some(STANDBY.into());
        there.lsn = Some("0/3000148".into());
        // The standby applied T1's commit first (the WAL's order, numbers
        // compared: as text 0/1000000 would come first).
        let (mut t0, mut t1) = (txn(0, vec![Op::Append(1, 1)]), txn(1, vec![Op::Append(2, 2)]));
        t0.commit_lsn = Some("0/1000000".into());
        t1.commit_lsn = Some("0/FF0000".into());
        let h = History {
            header: None,
            txns: vec![t0, t1, txn(2, vec![r(1, &[1]), r(2, &[])]), there],
            ..History::default()
        };
        let c = check::check(&h, Default::default()).unwrap();
        let fork = (c.anomalies.iter())
            .find(|a| a.name.text() == "G-nonadjacent")
            .expect("a Long Fork");
        let said: Vec<String> = explain(&h, fork, None).iter().map(|t| t.render(Lang::En)).collect();
        let last = said.last().unwrap();
        assert!(
            last.starts_with("read on lab's standby") && last.contains("T3 (0/3000148)"),
            "{said:?}"
        );
        let wal = &said[said.len() - 2];
        assert!(
            wal.starts_with("their commit records in the primary's WAL")
                && wal.ends_with("T1 (0/FF0000), T0 (0/1000000)"),
            "{said:?}"
        );
        // Without a standby read, no such line.
        let mut primary = h.clone();
        primary.txns[3].node = None;
        // (lab looks commit records up only for an anomaly with a standby read.)
        primary.txns[0].commit_lsn = None;
        primary.txns[1].commit_lsn = None;
        let c = check::check(&primary, Default::default()).unwrap();
        let said: Vec<String> = explain(&primary, &c.anomalies[0], None)
            .iter()
            .map(|t| t.render(Lang::En))
            .collect();
        assert!(!said.iter().any(|s| s.contains("standby")), "{said:?}");
    }
}
