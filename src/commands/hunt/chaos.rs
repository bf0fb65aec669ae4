//! The nemesis at work: the faults [`super::nemesis`] planned, done to
//! lab's own server and its sessions while the workload runs, each undone
//! before the next and recorded in the history. What the sessions need to
//! live through them is here too: which backend each one has, when a
//! partition cuts one off and heals, reconnecting while the server
//! restarts, ending a backend a partition left behind.
//!
//! - pause: SIGSTOP of a session's backend, at once or just after it sends
//!   COMMIT, SIGCONT after a short span (always: see [`Stopper`]);
//! - kill: SIGKILL of a session's backend; the postmaster ends every
//!   backend and recovers; done once the server accepts connections again;
//! - restart: lab's server shut down at once (SIGQUIT) and started again;
//! - partition: sessions' connections black-holed or reset by lab's fault
//!   proxy; a cut-off session reconnects once the partition heals, after
//!   lab has ended the backend the server kept for it (confirmed gone);
//! - failover: on lab's HA cluster, once it is settled (every node
//!   streaming, the synchronous standby named where synchronous mode is
//!   on), the primary's PostgreSQL killed, or the primary cut off from
//!   etcd and the other nodes (the sessions still reach it), until
//!   Patroni has promoted another node (its PostgreSQL out of recovery);
//!   the old one then rejoins (pg_rewind) before the next. The sessions
//!   reconnect through the cluster's one connection string.
//!
//! Nothing here decides a verdict: the history says what was acknowledged
//! and what was read, and the checker judges it.
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Result;
use tokio::sync::watch;
use tokio_postgres::Client;

use super::history::NemesisEvent;
use super::msg;
use super::nemesis::{Act, Cut, Fault, Schedule};
use crate::postgres::ConnInfo;
use crate::postgres::cluster::ServerCtl;
use crate::postgres::connect::{self, Conn};
use crate::postgres::faults::{self, Proxy};
use crate::postgres::patroni::HaCluster;
use crate::postgres::stopped::Stopper;

/// What the nemesis knows of one session.
struct Slot {
    /// Its backend now (0: none yet).
    pid: AtomicI32,
    /// Counts the black holes put on its connection: a change means the
    /// connection it has is gone.
    cut: watch::Sender<u64>,
    /// It is cut off now: no new connection until the partition heals.
    partitioned: watch::Sender<bool>,
    /// A pause waits for its next COMMIT: the backend is sent here.
    armed: Mutex<Option<std::sync::mpsc::Sender<i32>>>,
}

/// The nemesis of one level's run.
pub struct Chaos {
    pub faults: Vec<Fault>,
    /// The workload's clock: events are on the transactions' time line.
    began: Instant,
    slots: Vec<Slot>,
    /// Each session's application_name (how the proxy knows its connection).
    apps: Vec<String>,
    events: Mutex<Vec<NemesisEvent>>,
    stopper: Option<Arc<Stopper>>,
    own: Option<ServerCtl>,
    pub proxy: Option<Proxy>,
    /// lab's own connection for ending backends and asking the server
    /// whether it is up; opened again after a kill or a restart.
    control: tokio::sync::Mutex<Option<Arc<Client>>>,
    pg: ConnInfo,
    settings: String,
    /// How long the server may take to come back, a backend to go.
    deadline: Duration,
    /// `--nemesis failover`: lab's HA cluster, and whether Patroni's
    /// synchronous mode is on there.
    ha: Option<(Arc<HaCluster>, bool)>,
}

/// How long a pause waits for its session's COMMIT before it is dropped.
const ARMED_FOR: Duration = Duration::from_millis(300);

impl Chaos {
    /// The nemesis for `apps.len()` sessions on the server at `pg` (lab's
    /// own where `own`), its clock started at `began`. A partition needs
    /// lab's fault proxy in front of the server: started here.
    pub async fn new(
        faults: Vec<Fault>,
        began: Instant,
        apps: Vec<String>,
        own: Option<ServerCtl>,
        pg: ConnInfo,
        settings: String,
        deadline: Duration,
    ) -> Result<Chaos> {
        let stopper = if faults.contains(&Fault::Pause) {
            Some(Arc::new(Stopper::start()?))
        } else {
            None
        };
        let proxy = if faults.contains(&Fault::Partition) {
            Some(Proxy::start(&pg).await?)
        } else {
            None
        };
        let slots = apps
            .iter()
            .map(|_| Slot {
                pid: AtomicI32::new(0),
                cut: watch::channel(0).0,
                partitioned: watch::channel(false).0,
                armed: Mutex::default(),
            })
            .collect();
        Ok(Chaos {
            faults,
            began,
            slots,
            apps,
            events: Mutex::default(),
            stopper,
            own,
            proxy,
            control: tokio::sync::Mutex::default(),
            pg,
            settings,
            deadline,
            ha: None,
        })
    }

    /// The nemesis of a run on lab's HA cluster (`sync`: Patroni's synchronous mode on).
    pub fn on_cluster(self, ha: Arc<HaCluster>, sync: bool) -> Chaos {
        Chaos {
            ha: Some((ha, sync)),
            ..self
        }
    }

    fn now(&self) -> u64 {
        self.began.elapsed().as_nanos() as u64
    }

    /// Some fault ends connections: the sessions reconnect and go on.
    pub fn ends_connections(&self) -> bool {
        self.faults.iter().any(Fault::ends_connections)
    }

    /// Where session `i` connects: through the fault proxy under a partition nemesis.
    pub fn session_pg(&self, base: &ConnInfo) -> ConnInfo {
        match &self.proxy {
            Some(p) => p.config(base),
            None => base.clone(),
        }
    }

    /// Session `i`'s cut-offs from now on.
    pub fn cuts(&self, i: usize) -> watch::Receiver<u64> {
        self.slots[i].cut.subscribe()
    }

    /// Session `i` is cut off now.
    pub fn partitioned(&self, i: usize) -> bool {
        *self.slots[i].partitioned.borrow()
    }

    /// Session `i` has a new backend.
    pub fn backend(&self, i: usize, pid: i32) {
        self.slots[i].pid.store(pid, Ordering::SeqCst);
    }

    /// Session `i` has just sent its COMMIT: a pause waiting for it goes now.
    pub fn committing(&self, i: usize, pid: i32) {
        if let Some(tx) = self.slots[i].armed.lock().unwrap().take() {
            let _ = tx.send(pid);
        }
    }

    /// Until session `i`'s partition (if any) heals.
    pub async fn healed(&self, i: usize) {
        let mut rx = self.slots[i].partitioned.subscribe();
        let _ = rx.wait_for(|p| !*p).await;
    }

    /// A connection for a session (or lab itself), tried again while the
    /// server says it is starting, shutting down or recovering, or refuses
    /// (a restart's gap), until the deadline.
    pub async fn connect(&self, pg: &ConnInfo, app: &str, setup: Option<&str>) -> Result<Conn> {
        let deadline = Instant::now() + self.deadline;
        loop {
            match connect::connect(pg, app, setup, None).await {
                Ok(c) => return Ok(c),
                Err(e) if comes_back(&e) && Instant::now() < deadline => {
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// lab's own connection, opened again if the last one went.
    async fn control(&self) -> Result<Arc<Client>> {
        let mut c = self.control.lock().await;
        if let Some(client) = c.as_ref().filter(|c| !c.is_closed()) {
            return Ok(client.clone());
        }
        let conn = self.connect(&self.pg, "lab:hunt:nemesis", Some(&self.settings)).await?;
        // The connection's task keeps it open while the client lives.
        let client = Arc::new(conn.client);
        *c = Some(client.clone());
        Ok(client)
    }

    /// Ends backend `pid` (a connection a partition cut off, which the
    /// server keeps, maybe in a transaction with its locks) and waits until
    /// the server no longer lists it.
    pub async fn bury(&self, pid: i32) -> Result<()> {
        if pid == 0 {
            return Ok(());
        }
        let deadline = Instant::now() + self.deadline;
        loop {
            let control = self.control().await?;
            let left = control
                .query_one(
                    "SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid = $1) t",
                    &[&pid],
                )
                .await
                .map_err(|e| connect::sql_error(e, msg::statement()))?
                .get::<_, i64>(0);
            if left == 0 {
                return Ok(());
            }
            if Instant::now() > deadline {
                anyhow::bail!(msg::backend_stays(pid, self.deadline.as_secs_f64()));
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    }

    /// Until the server has ended `control` (after a kill, the postmaster
    /// ends every backend before it recovers): true. False when backend
    /// `pid` went without a crash: it was ending on its own as the signal
    /// came (its session done), the postmaster reaped it, which is when it
    /// ends the others after a crash, and `control` still answered ten
    /// times after that. Within the deadline.
    async fn ended(&self, control: &Client, pid: i32) -> Result<bool> {
        let deadline = Instant::now() + self.deadline;
        let mut answered_after = 0;
        while !control.is_closed() {
            if control.simple_query("").await.is_err() {
                return Ok(true);
            }
            if !std::path::Path::new(&format!("/proc/{pid}")).exists() {
                answered_after += 1;
                if answered_after > 10 {
                    return Ok(false);
                }
            }
            if Instant::now() > deadline {
                anyhow::bail!(msg::no_answer(self.deadline.as_secs_f64()));
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        Ok(true)
    }

    /// Until the server accepts a connection again (after a kill: crash recovery).
    async fn up(&self) -> Result<()> {
        let conn = self.connect(&self.pg, "lab:hunt:nemesis", None).await?;
        drop(conn);
        Ok(())
    }

    fn record(&self, fault: Fault, target: String, start: u64, how: Option<String>) {
        self.events.lock().unwrap().push(NemesisEvent {
            nemesis: fault.name().into(),
            target,
            start,
            end: Some(self.now()),
            how,
        });
    }

    /// The faults injected, in order.
    pub fn events(&self) -> Vec<NemesisEvent> {
        self.events.lock().unwrap().clone()
    }

    /// Everything undone: every stopped backend continued, every partition healed.
    pub fn heal_all(&self) {
        if let Some(s) = &self.stopper {
            s.cont_all();
        }
        for s in &self.slots {
            s.armed.lock().unwrap().take();
            s.partitioned.send_replace(false);
        }
    }

    /// The nemesis: a fault every interval, each undone before the next,
    /// until `stop` says the workload is done; then everything healed.
    pub async fn run(self: Arc<Self>, mut schedule: Schedule, mut stop: watch::Receiver<bool>) -> Result<()> {
        let interval = schedule.interval;
        let result = async {
            loop {
                tokio::select! {
                    _ = tokio::time::sleep(interval) => {}
                    _ = stop.wait_for(|s| *s) => return Ok(()),
                }
                let Some(act) = schedule.next() else { return Ok(()) };
                self.inject(act).await?;
            }
        }
        .await;
        self.heal_all();
        result
    }

    fn target(&self, i: usize, pid: i32) -> String {
        format!("session {} (backend {pid})", i + 1)
    }

    async fn inject(self: &Arc<Self>, act: Act) -> Result<()> {
        match act {
            Act::Pause {
                session,
                span,
                at_commit,
                offset,
            } => self.pause(session, span, at_commit, offset).await,
            Act::Kill { session } => {
                let pid = self.slots[session].pid.load(Ordering::SeqCst);
                let Some(own) = &self.own else { return Ok(()) };
                if pid == 0 || !own.is_backend(pid) {
                    return Ok(());
                }
                // Open before the kill: its end is the server's word that it reacted.
                let control = self.control().await?;
                let start = self.now();
                // SAFETY: a signal to a backend of lab's own server, checked just above.
                unsafe { libc::kill(pid, libc::SIGKILL) };
                if self.ended(&control, pid).await? {
                    self.up().await?;
                    self.record(Fault::Kill, self.target(session, pid), start, None);
                }
                Ok(())
            }
            Act::Restart => {
                let Some(own) = self.own.clone() else { return Ok(()) };
                let pm = own.postmaster().unwrap_or(0);
                let start = self.now();
                tokio::task::spawn_blocking(move || own.restart()).await??;
                self.record(
                    Fault::Restart,
                    msg::the_server(pm).render(crate::i18n::Lang::En),
                    start,
                    Some("immediate shutdown, then start".into()),
                );
                Ok(())
            }
            Act::Partition { sessions, cut, span } => {
                let Some(proxy) = &self.proxy else { return Ok(()) };
                let start = self.now();
                for &s in &sessions {
                    self.slots[s].partitioned.send_replace(true);
                    let fault = match cut {
                        Cut::BlackHole => faults::Fault::BlackHole,
                        Cut::Reset => faults::Fault::Reset,
                    };
                    proxy.set(&self.apps[s], fault);
                    if cut == Cut::BlackHole {
                        // The kernel would say nothing for minutes: the session hears it from lab.
                        self.slots[s].cut.send_modify(|n| *n += 1);
                    }
                }
                tokio::time::sleep(span).await;
                for &s in &sessions {
                    self.slots[s].partitioned.send_replace(false);
                }
                let names: Vec<String> = sessions.iter().map(|s| (s + 1).to_string()).collect();
                let target = match names.len() {
                    1 => format!("session {}", names[0]),
                    _ => format!("sessions {}", names.join(", ")),
                };
                self.record(Fault::Partition, target, start, Some(cut.name().into()));
                Ok(())
            }
            Act::Failover { partition } => self.failover(partition).await,
        }
    }

    /// Until the synchronous standby has flushed the primary's WAL as it
    /// was when the standby became synchronous: commits acknowledged before
    /// then (while the last failover's old primary rejoined, with no
    /// synchronous standby) are on it too, and only what is in flight now
    /// may go with the primary.
    async fn sync_caught_up(&self, ha: &HaCluster, leader: usize, until: Instant) -> Result<()> {
        let c = ha.connect(leader, "postgres").await?;
        let lsn: String = c.query_one("SELECT pg_current_wal_lsn()::text", &[]).await?.get(0);
        let ask = format!(
            "SELECT count(*) = 1 FROM pg_stat_replication WHERE sync_state = 'sync' AND flush_lsn >= '{lsn}'::pg_lsn"
        );
        let within = until.saturating_duration_since(Instant::now());
        if !crate::engine::until_yes(within, || async { Ok(connect::simple_value(&c, &ask).await?) }).await? {
            anyhow::bail!(msg::not_settled(self.deadline.as_secs_f64(), ha.log_tail()));
        }
        Ok(())
    }

    /// The HA cluster's primary killed or (`partition`, where nftables is
    /// there) cut off, once the cluster is settled; done when Patroni has
    /// promoted another node, the partition healed then.
    async fn failover(&self, partition: bool) -> Result<()> {
        let Some((ha, sync)) = self.ha.clone() else {
            return Ok(());
        };
        let until = Instant::now() + self.deadline;
        let Some(old) = ha.until_settled(sync, until).await? else {
            anyhow::bail!(msg::not_settled(self.deadline.as_secs_f64(), ha.log_tail()));
        };
        if sync {
            self.sync_caught_up(&ha, old, until).await?;
        }
        let partition = partition && ha.partitionable;
        let start = self.now();
        if partition {
            ha.partition(old)?;
        } else {
            let h = ha.clone();
            if !tokio::task::spawn_blocking(move || h.crash_postgres(old)).await? {
                anyhow::bail!(msg::no_postmaster(ha.nodes[old].name.clone()));
            }
        }
        // Its own deadline, from the failure on.
        let until = Instant::now() + self.deadline;
        let new = loop {
            if let Some(new) = ha.promoted_instead_of(old).await {
                break new;
            }
            if Instant::now() > until {
                let _ = ha.heal();
                anyhow::bail!(msg::no_promotion(self.deadline.as_secs_f64(), ha.log_tail()));
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        if partition {
            ha.heal()?;
        }
        let how = match partition {
            true => msg::failover_partition(ha.nodes[new].name.clone()),
            false => msg::failover_kill(ha.nodes[new].name.clone()),
        };
        self.record(
            Fault::Failover,
            msg::the_primary(ha.nodes[old].name.clone()).render(crate::i18n::Lang::En),
            start,
            Some(how.render(crate::i18n::Lang::En)),
        );
        Ok(())
    }

    /// A session's backend stopped for `span`: at once, or `offset` after
    /// the session sends its next COMMIT (none within [`ARMED_FOR`]: no pause).
    async fn pause(self: &Arc<Self>, session: usize, span: Duration, at_commit: bool, offset: Duration) -> Result<()> {
        let (Some(stopper), Some(own)) = (self.stopper.clone(), self.own.clone()) else {
            return Ok(());
        };
        let slot = &self.slots[session];
        let stopped = if at_commit {
            let (tx, rx) = std::sync::mpsc::channel::<i32>();
            *slot.armed.lock().unwrap() = Some(tx);
            // On a thread of its own: the stop follows the COMMIT by microseconds, not a timer's tick.
            let s = stopper.clone();
            let stopped = tokio::task::spawn_blocking(move || -> Result<Option<(i32, Instant)>> {
                let Ok(pid) = rx.recv_timeout(ARMED_FOR) else {
                    return Ok(None);
                };
                let at = Instant::now() + offset;
                while Instant::now() < at {
                    std::hint::spin_loop();
                }
                if !own.is_backend(pid) {
                    return Ok(None);
                }
                s.stop(pid)?;
                Ok(Some((pid, Instant::now())))
            })
            .await??;
            slot.armed.lock().unwrap().take();
            stopped.map(|(pid, _)| (pid, format!("{} µs after it sent COMMIT", offset.as_micros())))
        } else {
            let pid = slot.pid.load(Ordering::SeqCst);
            if pid == 0 || !own.is_backend(pid) {
                None
            } else {
                stopper.stop(pid)?;
                Some((pid, "at once".to_string()))
            }
        };
        let Some((pid, how)) = stopped else { return Ok(()) };
        let start = self.now();
        tokio::time::sleep(span).await;
        stopper.cont(pid);
        self.record(
            Fault::Pause,
            self.target(session, pid),
            start,
            Some(format!("{how}, for {} ms", span.as_millis())),
        );
        Ok(())
    }
}

/// An error the server gives while it goes away and comes back: it is
/// starting, shutting down or recovering (57P03), it ended the connection
/// (57P01, 57P02), or nothing listens or answers yet.
pub fn comes_back(e: &anyhow::Error) -> bool {
    let text = format!("{e:#}");
    [
        "57P01",
        "57P02",
        "57P03",
        "Connection refused",
        "connection refused",
        "Connection reset",
        "connection closed",
        "unexpected EOF",
        "early eof",
        // A multi-host connection while no node is the primary (a failover's gap).
        "does not match target_session_attrs",
    ]
    .iter()
    .any(|m| text.contains(m))
}

/// A statement's error that says the connection is gone (the server ended
/// it, or crashed, or the network dropped it), not that the statement failed.
pub fn connection_gone(e: &tokio_postgres::Error) -> bool {
    if e.is_closed() {
        return true;
    }
    match e.code() {
        Some(c) => {
            let c = c.code();
            c.starts_with("57P") || c.starts_with("08")
        }
        // No SQLSTATE: the socket failed (reset, end of file).
        None => e.as_db_error().is_none(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_server_coming_back_says() {
        for m in [
            "could not connect: the server at 127.0.0.1:5432 refused the connection: the database system is starting up (SQLSTATE 57P03)",
            "error connecting to server: Connection refused (os error 111)",
        ] {
            assert!(comes_back(&anyhow::anyhow!(m.to_string())), "{m}");
        }
        assert!(!comes_back(&anyhow::anyhow!(
            "password authentication failed for user \"x\" (SQLSTATE 28P01)"
        )));
    }
}
