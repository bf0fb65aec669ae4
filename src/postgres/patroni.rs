//! lab's own HA cluster: etcd and three PostgreSQL nodes managed by
//! Patroni, all on one loopback address inside namespaces of lab's own
//! ([`super::netns`]): every process dies with lab (SIGKILL included), the
//! ports are fixed and never taken, and a partition (nftables) touches the
//! cluster only. node1 and node2 may lead; node3 is an asynchronous
//! replica that is never promoted nor made synchronous (`nofailover`,
//! `nosync`). Timeouts are the smallest Patroni accepts (ttl 20, loop_wait
//! 1, retry_timeout 3), and `primary_start_timeout` 0: a crashed primary is
//! failed over at once instead of restarted. A node that comes back after
//! a failover rejoins with pg_rewind, so the cluster is kept across
//! variants. lab reaches each node's PostgreSQL through a forward on the
//! host's loopback ([`HaCluster::config`]) and Patroni's REST API through
//! sockets made in the namespace.
use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use serde_json::Value;

use super::cluster::{Owner, make_run_dir};
use super::netns::{self, Namespace, NsProcess};
use super::sidecar::{self, Found};
use crate::i18n::{Context, Text};

/// etcd's client and peer ports in the namespace.
const ETCD: (u16, u16) = (2379, 2380);
/// The first node's PostgreSQL and REST ports; node N adds N-1.
const PG_PORT: u16 = 5432;
const REST_PORT: u16 = 8008;
/// The group each node's processes run as (inside the namespace only, so
/// that nftables tells their connections apart: `meta skgid`).
const NODE_GID: u32 = 61_000;
/// The database the variants write in.
pub const DATABASE: &str = "lab";
/// Patroni's scope (the cluster's name in etcd).
const SCOPE: &str = "lab";

/// The programs the cluster needs, found on the machine.
#[derive(Clone)]
pub struct Programs {
    pub patroni: PathBuf,
    pub etcd: PathBuf,
    /// For the partition: without it those variants are skipped.
    pub nft: Option<PathBuf>,
    unshare: PathBuf,
    nsenter: PathBuf,
    python: PathBuf,
}

/// Whether the cluster can run here.
pub enum Availability {
    Ready(Programs),
    /// What is missing, and how to install it.
    Missing(Text),
}

/// Patroni (`LAB_PATRONI_BIN`, else PATH), etcd (`LAB_ETCD_BIN`, else
/// PATH), util-linux's unshare and nsenter, python3; a variable naming no
/// program is a setup error.
pub fn programs() -> Result<Availability> {
    let patroni = match sidecar::find("LAB_PATRONI_BIN", "patroni", &[]) {
        Found::At(p) => p,
        Found::NotAProgram(p) => bail!(msg::not_a_program(
            "LAB_PATRONI_BIN",
            p.display().to_string(),
            msg::install()
        )),
        Found::Missing => return Ok(Availability::Missing(msg::missing("patroni", msg::install()))),
    };
    let etcd = match sidecar::find("LAB_ETCD_BIN", "etcd", &[]) {
        Found::At(p) => p,
        Found::NotAProgram(p) => bail!(msg::not_a_program(
            "LAB_ETCD_BIN",
            p.display().to_string(),
            msg::install()
        )),
        Found::Missing => return Ok(Availability::Missing(msg::missing("etcd", msg::install()))),
    };
    let ns = match netns::Programs::find() {
        Ok(p) => p,
        Err(name) => return Ok(Availability::Missing(msg::missing(name, msg::install()))),
    };
    Ok(Availability::Ready(Programs {
        patroni,
        etcd,
        nft: netns::on_path("nft"),
        unshare: ns.unshare,
        nsenter: ns.nsenter,
        python: ns.python,
    }))
}

/// The PostgreSQL programs Patroni runs, all in one directory.
const PG_PROGRAMS: &[&str] = &[
    "initdb",
    "pg_ctl",
    "postgres",
    "pg_basebackup",
    "pg_rewind",
    "pg_controldata",
];

/// The first program of [`PG_PROGRAMS`] `bin` lacks.
pub fn lacks(bin: &Path) -> Option<&'static str> {
    PG_PROGRAMS.iter().copied().find(|p| !bin.join(p).is_file())
}

/// One node of the cluster.
pub struct Node {
    pub name: String,
    /// Its PostgreSQL's and its REST API's ports in the namespace.
    pub pg_port: u16,
    pub rest_port: u16,
    /// Where lab reaches its PostgreSQL on the host's loopback.
    pub local_port: u16,
    /// Whether Patroni may promote it (node3 may not).
    pub can_lead: bool,
    gid: u32,
    dir: PathBuf,
    yml: PathBuf,
    patroni: Mutex<Option<NsProcess>>,
    /// lab stopped or killed its Patroni: its REST API does not answer.
    silent: std::sync::atomic::AtomicBool,
}

impl Node {
    pub fn data_dir(&self) -> PathBuf {
        self.dir.join("data")
    }
}

/// A member as Patroni's `GET /cluster` lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct Member {
    pub name: String,
    /// leader, replica, sync_standby (3.0 says leader for the primary).
    pub role: String,
    /// running, streaming, stopped, starting, crashed...
    pub state: String,
    pub timeline: Option<i64>,
}

impl Member {
    pub fn leads(&self) -> bool {
        matches!(self.role.as_str(), "leader" | "master" | "primary" | "standby_leader")
    }

    pub fn running(&self) -> bool {
        matches!(self.state.as_str(), "running" | "streaming")
    }
}

/// The members in `GET /cluster`'s answer.
pub fn parse_members(body: &str) -> Option<Vec<Member>> {
    let v: Value = serde_json::from_str(body).ok()?;
    Some(
        v.get("members")?
            .as_array()?
            .iter()
            .map(|m| Member {
                name: m["name"].as_str().unwrap_or("").to_string(),
                role: m["role"].as_str().unwrap_or("").to_string(),
                state: m["state"].as_str().unwrap_or("").to_string(),
                timeline: m["timeline"].as_i64(),
            })
            .collect(),
    )
}

/// Whether the members are a healthy cluster of `n`: one leader, every
/// member running on the leader's timeline.
pub fn healthy(members: &[Member], n: usize) -> bool {
    let leaders: Vec<&Member> = members.iter().filter(|m| m.leads()).collect();
    let [leader] = leaders.as_slice() else {
        return false;
    };
    members.len() == n
        && members.iter().all(|m| m.running())
        && leader.timeline.is_some()
        && members.iter().all(|m| m.timeline == leader.timeline)
}

/// The running cluster. Dropping it kills every process of it and removes its directory.
pub struct HaCluster {
    ns: Option<Namespace>,
    programs: Programs,
    dir: PathBuf,
    pub nodes: Vec<Node>,
    ids: (u32, u32),
    forwards: Vec<tokio::task::AbortHandle>,
    pub bin: PathBuf,
    /// How long the start took (etcd up to three nodes streaming).
    pub startup: Duration,
    /// Patroni's and etcd's versions, as they say.
    pub versions: String,
    /// Whether nftables can partition it.
    pub partitionable: bool,
}

/// One HTTP/1.1 answer: its status and body (a chunked body joined).
pub fn parse_http(raw: &[u8]) -> Option<(u16, String)> {
    let text = String::from_utf8_lossy(raw);
    let (head, body) = text.split_once("\r\n\r\n")?;
    let status: u16 = head.lines().next()?.split_whitespace().nth(1)?.parse().ok()?;
    let chunked = head.lines().any(|l| {
        l.to_ascii_lowercase().starts_with("transfer-encoding:") && l.to_ascii_lowercase().contains("chunked")
    });
    if !chunked {
        return Some((status, body.to_string()));
    }
    let mut out = String::new();
    let mut rest = body;
    loop {
        let (size, after) = rest.split_once("\r\n")?;
        let n = usize::from_str_radix(size.trim(), 16).ok()?;
        if n == 0 {
            return Some((status, out));
        }
        out.push_str(after.get(..n)?);
        rest = after.get(n + 2..)?;
    }
}

/// The YAML of node `i` (0-based) of the cluster in `dir`.
pub fn node_yaml(i: usize, dir: &Path, bin: &Path) -> String {
    let n = i + 1;
    let pg = PG_PORT + i as u16;
    let rest = REST_PORT + i as u16;
    let node_dir = dir.join(format!("node{n}"));
    let last = i == 2;
    format!(
        "# written by lab for its HA cluster
scope: {SCOPE}
name: node{n}
restapi:
  listen: 127.0.0.1:{rest}
  connect_address: 127.0.0.1:{rest}
etcd3:
  hosts: 127.0.0.1:{etcd}
bootstrap:
  dcs:
    ttl: 20
    loop_wait: 1
    retry_timeout: 3
    maximum_lag_on_failover: 1048576
    primary_start_timeout: 0
    synchronous_mode: false
    synchronous_mode_strict: false
    postgresql:
      use_pg_rewind: true
      use_slots: true
      parameters:
        wal_log_hints: 'on'
        max_wal_senders: 10
        max_replication_slots: 10
        wal_keep_size: 128MB
  initdb:
    - encoding: UTF8
    - locale: C
    - auth: trust
  pg_hba:
    - local all all trust
    - host replication all 127.0.0.1/32 trust
    - host all all 127.0.0.1/32 trust
postgresql:
  listen: 127.0.0.1:{pg}
  connect_address: 127.0.0.1:{pg}
  data_dir: {data}
  bin_dir: {bin}
  pgpass: {node}/pgpass
  use_unix_socket: true
  remove_data_directory_on_rewind_failure: true
  remove_data_directory_on_diverged_timelines: true
  authentication:
    replication:
      username: postgres
    superuser:
      username: postgres
    rewind:
      username: postgres
  parameters:
    unix_socket_directories: '{node}'
    lc_messages: C
    log_line_prefix: '%m [%p] node{n} '
    # Dynamic shared memory in files under the data directory, removed
    # with it: a postmaster lab kills leaves no segment in /dev/shm.
    dynamic_shared_memory_type: mmap
  basebackup:
    - checkpoint: fast
watchdog:
  mode: off
tags:
  nofailover: {last}
  nosync: {last}
",
        etcd = ETCD.0,
        data = node_dir.join("data").display(),
        bin = bin.display(),
        node = node_dir.display(),
    )
}

/// nftables' table in the namespace: each new connection marked with the
/// node whose process opened it (1, 2, 3; by its group), and a chain the
/// partition fills.
fn nft_table() -> String {
    let mut marks = String::new();
    for i in 0..3 {
        marks.push_str(&format!(
            "    ct state new meta skgid {} ct mark set {}\n",
            NODE_GID + i + 1,
            i + 1
        ));
    }
    format!(
        "table inet lab {{\n  chain cut {{\n  }}\n  chain out {{\n    type filter hook output priority 0; policy accept;\n{marks}    jump cut\n  }}\n}}\n"
    )
}

/// The rules that cut node `i` (0-based) off from etcd and the other
/// nodes, both ways: lab's own connections (unmarked) still reach it.
pub fn partition_rules(i: usize) -> String {
    let mark = i + 1;
    let others: Vec<usize> = (0..3).filter(|&j| j != i).collect();
    let mut theirs = vec![ETCD.0.to_string()];
    for &j in &others {
        theirs.push((PG_PORT + j as u16).to_string());
        theirs.push((REST_PORT + j as u16).to_string());
    }
    let ours = [(PG_PORT + i as u16).to_string(), (REST_PORT + i as u16).to_string()];
    let their_marks: Vec<String> = others.iter().map(|j| (j + 1).to_string()).collect();
    let (theirs, ours, their_marks) = (theirs.join(", "), ours.join(", "), their_marks.join(", "));
    format!(
        "add rule inet lab cut ct mark {mark} tcp dport {{ {theirs} }} drop\n\
         add rule inet lab cut ct mark {mark} tcp sport {{ {theirs} }} drop\n\
         add rule inet lab cut ct mark {{ {their_marks} }} tcp dport {{ {ours} }} drop\n\
         add rule inet lab cut ct mark {{ {their_marks} }} tcp sport {{ {ours} }} drop\n"
    )
}

/// Patroni's settings in `section` of lab/failover.conf's text (a variant
/// of `lab failover`, or `hunt`), as the JSON `PATCH /config` takes; none
/// when it has no such section.
pub fn dynamic_settings(conf: &str, section: &str) -> Option<String> {
    let mut inside = false;
    let mut found = false;
    let mut pairs = Vec::new();
    for line in conf.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            inside = name.trim() == section;
            found |= inside;
            continue;
        }
        if let (true, Some((k, v))) = (inside, line.split_once('=')) {
            let v = v.trim();
            let value = if v == "true" || v == "false" || v.parse::<f64>().is_ok() {
                v.to_string()
            } else {
                Value::String(v.to_string()).to_string()
            };
            pairs.push(format!("{}: {value}", Value::String(k.trim().to_string())));
        }
    }
    found.then(|| format!("{{{}}}", pairs.join(", ")))
}

impl HaCluster {
    /// Starts etcd, then node1 (which bootstraps the cluster), then node2
    /// and node3 (copies of it), and waits until all three stream, within `deadline`.
    pub async fn start(bin: &Path, programs: Programs, deadline: Duration) -> Result<HaCluster> {
        let began = Instant::now();
        let until = began + deadline;
        let owner = Owner::for_server()?;
        let ids = owner.ids().ctx(netns::msg::needs_root)?;
        let dir = make_run_dir()?;
        owner.chown(&dir)?;
        let mut nodes = Vec::new();
        for i in 0..3usize {
            let node_dir = dir.join(format!("node{}", i + 1));
            fs::create_dir(&node_dir).ctx(|| super::cluster::msg::create(node_dir.display().to_string()))?;
            owner.chown(&node_dir)?;
            let yml = dir.join(format!("node{}.yml", i + 1));
            fs::write(&yml, node_yaml(i, &dir, bin)).ctx(|| super::cluster::msg::create(yml.display().to_string()))?;
            owner.chown(&yml)?;
            nodes.push(Node {
                name: format!("node{}", i + 1),
                pg_port: PG_PORT + i as u16,
                rest_port: REST_PORT + i as u16,
                local_port: 0,
                can_lead: i < 2,
                gid: NODE_GID + i as u32 + 1,
                dir: node_dir,
                yml,
                patroni: Mutex::new(None),
                silent: std::sync::atomic::AtomicBool::new(false),
            });
        }
        let etcd_dir = dir.join("etcd");
        fs::create_dir(&etcd_dir).ctx(|| super::cluster::msg::create(etcd_dir.display().to_string()))?;
        owner.chown(&etcd_dir)?;
        let ns_programs = netns::Programs {
            unshare: programs.unshare.clone(),
            nsenter: programs.nsenter.clone(),
            python: programs.python.clone(),
        };
        let mut versions = sidecar::version(&programs.patroni, "patroni")?;
        versions.push_str(", ");
        versions.push_str(&sidecar::version(&programs.etcd, "etcd")?);
        let ns = Namespace::start(&ns_programs)?;
        let mut ha = HaCluster {
            ns: Some(ns),
            partitionable: programs.nft.is_some(),
            programs,
            dir,
            nodes,
            ids,
            forwards: Vec::new(),
            bin: bin.to_path_buf(),
            startup: Duration::ZERO,
            versions,
        };
        if let Some(nft) = ha.programs.nft.clone() {
            // Marks from the start: a connection is marked when it opens.
            ha.ns().run_net(&nft, &["-f", "-"], &nft_table())?;
        }
        ha.start_etcd()?;
        ha.wait(until, "etcd", |ha| async move {
            let (status, body) = ha.http(ETCD.0, "GET", "/health", None).await?;
            Ok(status == 200 && body.contains("true"))
        })
        .await?;
        ha.start_patroni(0)?;
        ha.wait(until, "node1", |ha| async move {
            let m = ha.members_from(0).await?;
            Ok(m.iter().any(|m| m.name == "node1" && m.leads() && m.running()))
        })
        .await?;
        ha.start_patroni(1)?;
        ha.start_patroni(2)?;
        for i in 0..3 {
            let (port, task) = forward(ha.ns().dialer(), ha.nodes[i].pg_port).await?;
            ha.nodes[i].local_port = port;
            ha.forwards.push(task);
        }
        ha.until_healthy(until).await?;
        let leader = ha
            .leader()
            .await?
            .ctx(|| msg::never_healthy(deadline.as_secs_f64(), ha.log_tail()))?;
        let c = ha.connect(leader, "postgres").await?;
        c.batch_execute(&format!("CREATE DATABASE {DATABASE}"))
            .await
            .map_err(|e| super::connect::sql_error(e, msg::create_database()))?;
        ha.startup = began.elapsed();
        Ok(ha)
    }

    fn ns(&self) -> &Namespace {
        self.ns.as_ref().expect("the namespace lives as long as the cluster")
    }

    fn start_etcd(&self) -> Result<()> {
        let url = |p: u16| format!("http://127.0.0.1:{p}");
        let args: Vec<String> = vec![
            "--name".into(),
            "e1".into(),
            "--data-dir".into(),
            self.dir.join("etcd").display().to_string(),
            "--listen-client-urls".into(),
            url(ETCD.0),
            "--advertise-client-urls".into(),
            url(ETCD.0),
            "--listen-peer-urls".into(),
            url(ETCD.1),
            "--initial-advertise-peer-urls".into(),
            url(ETCD.1),
            "--initial-cluster".into(),
            format!("e1={}", url(ETCD.1)),
            // A heartbeat of 100 ms and an election timeout of 1 s (its
            // defaults) suit one member; what matters is that Patroni's
            // requests answer within its retry_timeout.
            "--heartbeat-interval".into(),
            "100".into(),
            "--election-timeout".into(),
            "1000".into(),
        ];
        let args: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
        self.ns().spawn(
            &self.programs.etcd,
            &args,
            self.ids,
            &self.dir,
            &self.dir.join("etcd.log"),
            &[("HOME", &self.dir.display().to_string())],
        )?;
        Ok(())
    }

    /// Starts node `i`'s Patroni (again, after lab killed it).
    pub fn start_patroni(&self, i: usize) -> Result<()> {
        let node = &self.nodes[i];
        let log = node.dir.join("patroni.log");
        let p = self.ns().spawn(
            &self.programs.patroni,
            &[node.yml.as_os_str()],
            (self.ids.0, node.gid),
            &node.dir,
            &log,
            &[("HOME", &node.dir.display().to_string())],
        )?;
        *node.patroni.lock().unwrap() = Some(p);
        node.silent.store(false, std::sync::atomic::Ordering::SeqCst);
        Ok(())
    }

    /// Sends `sig` to node `i`'s Patroni process (SIGKILL: the manager dies,
    /// its PostgreSQL stays; SIGSTOP/SIGCONT: it is frozen, thawed).
    pub fn signal_patroni(&self, i: usize, sig: libc::c_int) -> bool {
        let node = &self.nodes[i];
        match *node.patroni.lock().unwrap() {
            Some(p) if p.alive() => {
                p.signal(sig);
                node.silent
                    .store(sig != libc::SIGCONT, std::sync::atomic::Ordering::SeqCst);
                if sig == libc::SIGKILL {
                    let until = Instant::now() + Duration::from_secs(10);
                    while p.alive() && Instant::now() < until {
                        std::thread::sleep(Duration::from_millis(2));
                    }
                }
                true
            }
            _ => false,
        }
    }

    /// Whether node `i`'s Patroni process runs.
    pub fn patroni_alive(&self, i: usize) -> bool {
        self.nodes[i].patroni.lock().unwrap().is_some_and(|p| p.alive())
    }

    /// Node `i`'s postmaster as lab sees it (host pid), from postmaster.pid.
    pub fn postmaster(&self, i: usize) -> Option<i32> {
        let text = fs::read_to_string(self.nodes[i].data_dir().join("postmaster.pid")).ok()?;
        let ns_pid: i32 = text.lines().next()?.trim().parse().ok()?;
        let pid = self.ns().host_pid(ns_pid)?;
        let cmdline = fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        String::from_utf8_lossy(&cmdline).contains("postgres").then_some(pid)
    }

    /// The host pid of a backend of the cluster (pg_stat_activity's pid).
    pub fn host_pid(&self, ns_pid: i32) -> Option<i32> {
        self.ns().host_pid(ns_pid)
    }

    /// Stops (`SIGSTOP`) node `i`'s startup process, the one that replays
    /// WAL: the standby still receives and flushes WAL, and applies none.
    /// (Patroni resumes a replay paused with pg_wal_replay_pause() in its
    /// next loop, PostgreSQL 14 and later.) Its pid on the host, for the
    /// SIGCONT; [`HaCluster::thaw_all`] continues it too.
    pub async fn stop_replay(&self, i: usize) -> Result<i32> {
        let c = self.connect(i, "postgres").await?;
        let pid: i32 = c
            .query_one("SELECT pid FROM pg_stat_activity WHERE backend_type = 'startup'", &[])
            .await?
            .get(0);
        let host = self.host_pid(pid).ctx(|| msg::no_startup(self.nodes[i].name.clone()))?;
        unsafe { libc::kill(host, libc::SIGSTOP) };
        Ok(host)
    }

    /// Stops (`SIGSTOP`) or resumes (`SIGCONT`) node `i`'s PostgreSQL,
    /// postmaster first when stopping (then it starts no new process).
    pub fn freeze_postgres(&self, i: usize, sig: libc::c_int) -> bool {
        let Some(pm) = self.postmaster(i) else {
            return false;
        };
        for pid in postgres_tree(pm, sig) {
            unsafe { libc::kill(pid, sig) };
        }
        true
    }

    /// Kills node `i`'s PostgreSQL at once, as a crash would: every
    /// process of it stopped first (postmaster first), then SIGKILLed, so
    /// none answers a client in between. Whether there was one; waits
    /// until it is gone.
    pub fn crash_postgres(&self, i: usize) -> bool {
        let Some(pm) = self.postmaster(i) else {
            return false;
        };
        let all = postgres_tree(pm, libc::SIGSTOP);
        for &pid in &all {
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        while all.iter().any(|&p| netns::alive(p)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(2));
        }
        !all.iter().any(|&p| netns::alive(p))
    }

    /// Resumes (SIGCONT) every process of the cluster a variant may have stopped.
    pub fn thaw_all(&self) {
        for pid in self.ns().pids() {
            unsafe { libc::kill(pid, libc::SIGCONT) };
        }
        for n in &self.nodes {
            n.silent.store(false, std::sync::atomic::Ordering::SeqCst);
        }
    }

    /// Stops (SIGSTOP) node `i`'s walsenders, all or those streaming to
    /// `to` (an application_name); the standbys they served.
    pub async fn stop_walsenders(&self, i: usize, to: Option<&str>) -> Result<Vec<String>> {
        let c = self.connect(i, "postgres").await?;
        let rows = c
            .query("SELECT pid, application_name FROM pg_stat_replication", &[])
            .await?;
        let mut names = Vec::new();
        for r in rows {
            let (pid, app): (i32, String) = (r.get(0), r.get(1));
            if to.is_some_and(|t| app != t) {
                continue;
            }
            if let Some(host) = self.host_pid(pid) {
                unsafe { libc::kill(host, libc::SIGSTOP) };
                names.push(app);
            }
        }
        names.sort();
        Ok(names)
    }

    /// Cuts node `i` off from etcd and the other nodes (both ways).
    pub fn partition(&self, i: usize) -> Result<()> {
        let nft = self.programs.nft.as_ref().ctx(|| msg::missing("nft", msg::install()))?;
        self.ns().run_net(nft, &["-f", "-"], &partition_rules(i))
    }

    /// Removes every partition rule.
    pub fn heal(&self) -> Result<()> {
        let Some(nft) = &self.programs.nft else {
            return Ok(());
        };
        self.ns().run_net(nft, &["-f", "-"], "flush chain inet lab cut\n")
    }

    /// Connection settings for node `i`'s PostgreSQL (through lab's forward), in `database`.
    pub fn config(&self, i: usize, database: &str) -> super::ConnInfo {
        let mut c = super::ConnInfo::plain();
        c.host("127.0.0.1")
            .port(self.nodes[i].local_port)
            .user("postgres")
            .dbname(database)
            .connect_timeout(Duration::from_secs(2));
        c
    }

    /// One connection string for the whole cluster, as an application
    /// reaches it: every node's host and port, `target_session_attrs=read-write`
    /// (whichever node is the primary now, tried in order), in `database`.
    pub fn multi_host(&self, database: &str) -> super::ConnInfo {
        let mut c = super::ConnInfo::plain();
        for n in &self.nodes {
            c.host("127.0.0.1").port(n.local_port);
        }
        c.user("postgres")
            .dbname(database)
            .connect_timeout(Duration::from_secs(2));
        c.target = super::conninfo::TargetAttrs::ReadWrite;
        c
    }

    /// A node other than `old` that Patroni says leads, running, and whose
    /// PostgreSQL says it is out of recovery: promoted. None while there is none.
    pub async fn promoted_instead_of(&self, old: usize) -> Option<usize> {
        let members = self.members().await.ok()?;
        let m = members
            .iter()
            .find(|m| m.leads() && m.running() && m.name != self.nodes[old].name)?;
        let i = self.index(&m.name)?;
        let c = self.connect(i, "postgres").await.ok()?;
        let primary: bool = c.query_one("SELECT NOT pg_is_in_recovery()", &[]).await.ok()?.get(0);
        primary.then_some(i)
    }

    /// The leader, once the cluster is as `sync` says: with synchronous
    /// mode one standby is synchronous (streaming as such on the primary,
    /// and in Patroni's /sync key: only that one may be promoted); without,
    /// none is. None while it is not (yet), or no node leads.
    pub async fn settled(&self, sync: bool) -> Result<Option<usize>> {
        let Some(leader) = self.leader().await? else {
            return Ok(None);
        };
        let c = self.connect(leader, DATABASE).await?;
        let row = c
            .query_one(
                "SELECT current_setting('synchronous_standby_names'), (SELECT count(*) FROM pg_stat_replication \
                 WHERE sync_state = 'sync' AND state = 'streaming')",
                &[],
            )
            .await?;
        let (names, n_sync): (String, i64) = (row.get(0), row.get(1));
        let synced = self
            .members()
            .await?
            .iter()
            .filter(|m| m.role == "sync_standby")
            .count();
        let settled = if sync {
            n_sync == 1 && synced == 1
        } else {
            names.is_empty() && n_sync == 0 && synced == 0
        };
        Ok(settled.then_some(leader))
    }

    /// The leader once the cluster is healthy ([`HaCluster::until_healthy`])
    /// and settled as `sync` says ([`HaCluster::settled`]; an error counts
    /// as not yet: a node may be restarting); None past `until`.
    pub async fn until_settled(&self, sync: bool, until: Instant) -> Result<Option<usize>> {
        self.until_healthy(until).await?;
        loop {
            if let Some(leader) = self.settled(sync).await.ok().flatten() {
                return Ok(Some(leader));
            }
            if Instant::now() > until {
                return Ok(None);
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// A plain connection of lab's own to node `i` (its task spawned).
    pub async fn connect(&self, i: usize, database: &str) -> Result<tokio_postgres::Client> {
        let conn = super::connect::connect(&self.config(i, database), "lab:ha", None, None).await?;
        Ok(conn.client)
    }

    /// One request to a REST API in the namespace: its status and body.
    pub async fn http(&self, port: u16, method: &str, path: &str, body: Option<&str>) -> Result<(u16, String)> {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        // Patroni answers at once: a node that does not within this is stopped.
        let limit = Duration::from_secs(3);
        let place = || msg::rest(format!("127.0.0.1:{port}{path}"));
        let exchange = async {
            let mut s = self.ns().dial(port, limit).await?;
            let body = body.unwrap_or("");
            let req = format!(
                "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\
                 Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            );
            s.write_all(req.as_bytes()).await?;
            let mut raw = Vec::new();
            s.read_to_end(&mut raw).await?;
            Ok::<_, std::io::Error>(raw)
        };
        let raw = tokio::time::timeout(limit, exchange)
            .await
            .map_err(|_| anyhow::Error::new(std::io::Error::from(std::io::ErrorKind::TimedOut)))
            .ctx(place)?
            .ctx(place)?;
        parse_http(&raw).ctx(place)
    }

    /// Patroni's REST API of node `i`.
    pub async fn rest(&self, i: usize, method: &str, path: &str, body: Option<&str>) -> Result<(u16, String)> {
        self.http(self.nodes[i].rest_port, method, path, body).await
    }

    /// The members as node `i`'s Patroni lists them.
    pub async fn members_from(&self, i: usize) -> Result<Vec<Member>> {
        let (_, body) = self.rest(i, "GET", "/cluster", None).await?;
        parse_members(&body).ctx(|| msg::rest(format!("node{}/cluster", i + 1)))
    }

    /// The members, from the first node whose Patroni answers (not one
    /// whose Patroni lab stopped or killed).
    pub async fn members(&self) -> Result<Vec<Member>> {
        let mut last = None;
        let answering =
            (0..self.nodes.len()).filter(|&i| !self.nodes[i].silent.load(std::sync::atomic::Ordering::SeqCst));
        for i in answering {
            match self.members_from(i).await {
                Ok(m) => return Ok(m),
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| msg::rest("/cluster").into()))
    }

    /// The node Patroni says leads, running.
    pub async fn leader(&self) -> Result<Option<usize>> {
        let members = self.members().await?;
        Ok(members
            .iter()
            .find(|m| m.leads() && m.running())
            .and_then(|m| self.index(&m.name)))
    }

    pub fn index(&self, name: &str) -> Option<usize> {
        self.nodes.iter().position(|n| n.name == name)
    }

    /// Sets Patroni's dynamic configuration (`PATCH /config`), as `json`.
    pub async fn patch_config(&self, json: &str) -> Result<()> {
        let mut last = None;
        for i in (0..self.nodes.len()).filter(|&i| !self.nodes[i].silent.load(std::sync::atomic::Ordering::SeqCst)) {
            match self.rest(i, "PATCH", "/config", Some(json)).await {
                Ok((200, _)) => return Ok(()),
                Ok((status, body)) => last = Some(anyhow::Error::new(msg::refused(status, body.trim().to_string()))),
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| msg::rest("/config").into()))
    }

    /// Asks Patroni to fail over to `candidate` (`POST /failover`); its answer.
    pub async fn failover(&self, candidate: usize) -> Result<(u16, String)> {
        let body = format!("{{\"candidate\": \"{}\"}}", self.nodes[candidate].name);
        self.rest(candidate, "POST", "/failover", Some(&body)).await
    }

    /// Waits until Patroni says the cluster is healthy and the leader
    /// streams to both replicas (pg_stat_replication), within `until`.
    pub async fn until_healthy(&self, until: Instant) -> Result<()> {
        self.wait(until, "cluster", |ha| async move {
            let members = ha.members().await?;
            if !healthy(&members, 3) {
                return Ok(false);
            }
            let Some(leader) = members.iter().find(|m| m.leads()).and_then(|m| ha.index(&m.name)) else {
                return Ok(false);
            };
            let c = ha.connect(leader, "postgres").await?;
            let streaming: i64 = c
                .query_one(
                    "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'",
                    &[],
                )
                .await?
                .get(0);
            Ok(streaming == 2)
        })
        .await
    }

    /// Asks `check` until it says yes, within `until` (an error counts as
    /// no: a node may be restarting); past it, the cluster's logs say why.
    async fn wait<'a, F, Fut>(&'a self, until: Instant, what: &str, check: F) -> Result<()>
    where
        F: Fn(&'a HaCluster) -> Fut,
        Fut: std::future::Future<Output = Result<bool>>,
    {
        loop {
            if let Ok(true) = check(self).await {
                return Ok(());
            }
            if Instant::now() > until {
                bail!(msg::not_ready(what.to_string(), self.log_tail()));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// The last lines of the nodes' Patroni logs (why a start failed).
    pub fn log_tail(&self) -> String {
        let mut out = Vec::new();
        for n in &self.nodes {
            let text = fs::read_to_string(n.dir.join("patroni.log")).unwrap_or_default();
            if let Some(l) = text.lines().rev().find(|l| !l.trim().is_empty()) {
                out.push(format!("{}: {}", n.name, l.trim()));
            }
        }
        let etcd = fs::read_to_string(self.dir.join("etcd.log")).unwrap_or_default();
        if out.is_empty()
            && let Some(l) = etcd.lines().rev().find(|l| !l.trim().is_empty())
        {
            out.push(format!("etcd: {}", l.trim()));
        }
        out.join(" | ")
    }

    /// How many processes of the cluster run (lab's leftover check).
    pub fn processes(&self) -> usize {
        self.ns.as_ref().map_or(0, Namespace::processes)
    }
}

/// `pm` and its children, each sent `sig` (SIGSTOP first on the postmaster
/// so that it forks no more); asked again until no new child appears.
fn postgres_tree(pm: i32, sig: libc::c_int) -> Vec<i32> {
    let mut all = vec![pm];
    unsafe { libc::kill(pm, sig) };
    loop {
        let new: Vec<i32> = netns::children_of(pm)
            .into_iter()
            .filter(|p| !all.contains(p))
            .collect();
        if new.is_empty() {
            return all;
        }
        for &p in &new {
            unsafe { libc::kill(p, sig) };
        }
        all.extend(new);
    }
}

impl Drop for HaCluster {
    fn drop(&mut self) {
        for f in self.forwards.drain(..) {
            f.abort();
        }
        // Every process of the cluster dies with the namespace.
        drop(self.ns.take());
        // LAB_HA_LOGS=DIR keeps the cluster's logs there (troubleshooting).
        if let Some(keep) = std::env::var_os("LAB_HA_LOGS").filter(|v| !v.is_empty()) {
            let keep = PathBuf::from(keep);
            let _ = fs::create_dir_all(&keep);
            for n in &self.nodes {
                let _ = fs::copy(n.dir.join("patroni.log"), keep.join(format!("{}.log", n.name)));
            }
            let _ = fs::copy(self.dir.join("etcd.log"), keep.join("etcd.log"));
        }
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// A forward from a free port on the host's loopback to `port` in the
/// namespace: each connection accepted is joined to one made there.
async fn forward(dial: netns::Dialer, port: u16) -> Result<(u16, tokio::task::AbortHandle)> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .ctx(super::cluster::msg::no_port)?;
    let local = listener.local_addr()?.port();
    let task = tokio::spawn(async move {
        let mut conns = tokio::task::JoinSet::new();
        loop {
            let Ok((mut client, _)) = listener.accept().await else {
                continue;
            };
            let _ = client.set_nodelay(true);
            let dial = dial.clone();
            conns.spawn(async move {
                if let Ok(mut server) = dial.dial(port, Duration::from_secs(2)).await {
                    let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                }
            });
            while conns.try_join_next().is_some() {}
        }
    });
    Ok((local, task.abort_handle()))
}

pub mod msg {
    crate::messages! {
        prefix "pa";
        no_startup(node) {
            en: "{node}'s startup process (the one that replays WAL) is not among the namespace's processes",
            tr: "{node} düğümünün startup süreci (WAL'ı uygulayan) ad alanının süreçleri arasında değil",
        }
        install() {
            en: "install them (Debian/Ubuntu: apt-get install patroni etcd-server python3-etcd nftables), or set LAB_PATRONI_BIN and LAB_ETCD_BIN to the programs",
            tr: "kurun (Debian/Ubuntu: apt-get install patroni etcd-server python3-etcd nftables) ya da LAB_PATRONI_BIN ve LAB_ETCD_BIN'i programlara ayarlayın",
        }
        missing(program, install) {
            en: "{program} was not found on this machine: {install}",
            tr: "bu makinede {program} bulunamadı: {install}",
        }
        not_a_program(var, path, install) {
            en: "{var}={path} is not a program: {install}",
            tr: "{var}={path} bir program değil: {install}",
        }
        not_ready(what, log) {
            en: "lab's HA cluster did not become healthy within the deadline (waiting for {what}): {log}",
            tr: "lab'ın HA cluster'ı süre içinde sağlıklı hale gelmedi ({what} bekleniyordu): {log}",
        }
        never_healthy(s, log) {
            en: "lab's HA cluster had no running leader within {s} s: {log}",
            tr: "lab'ın HA cluster'ının {s} sn içinde çalışan bir lideri olmadı: {log}",
        }
        create_database() {
            en: "could not create the HA cluster's database",
            tr: "HA cluster'ının veritabanı oluşturulamadı",
        }
        rest(url) {
            en: "no usable answer from {url}",
            tr: "{url} adresinden kullanılabilir bir cevap gelmedi",
        }
        refused(status, body) {
            en: "Patroni refused the request ({status}): {body}",
            tr: "Patroni isteği reddetti ({status}): {body}",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_answers_plain_and_chunked() {
        let plain = b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n{\"a\": 1}";
        assert_eq!(parse_http(plain), Some((200, "{\"a\": 1}".to_string())));
        let chunked = b"HTTP/1.1 503 Service Unavailable\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n{\"a\"\r\n3\r\n: 1\r\n1\r\n}\r\n0\r\n\r\n";
        assert_eq!(parse_http(chunked), Some((503, "{\"a\": 1}".to_string())));
        assert_eq!(parse_http(b"garbage"), None);
    }

    #[test]
    fn cluster_members_and_health() {
        let body = r#"{"members": [
            {"name": "node1", "role": "leader", "state": "running", "timeline": 2},
            {"name": "node2", "role": "replica", "state": "running", "timeline": 2, "lag": 0},
            {"name": "node3", "role": "replica", "state": "streaming", "timeline": 2, "lag": 0}]}"#;
        let m = parse_members(body).unwrap();
        assert_eq!(m.len(), 3);
        assert!(m[0].leads() && !m[1].leads());
        assert!(healthy(&m, 3));
        // A replica still on the old timeline (not rejoined yet).
        let mut behind = m.clone();
        behind[1].timeline = Some(1);
        assert!(!healthy(&behind, 3));
        // Two leaders, or none.
        let mut two = m.clone();
        two[1].role = "leader".into();
        assert!(!healthy(&two, 3));
        let mut stopped = m.clone();
        stopped[2].state = "stopped".into();
        assert!(!healthy(&stopped, 3));
        assert!(!healthy(&m[..2], 3));
    }

    #[test]
    fn a_partition_cuts_both_ways_and_leaves_lab_alone() {
        let r = partition_rules(0);
        assert!(
            r.contains("ct mark 1 tcp dport { 2379, 5433, 8009, 5434, 8010 } drop"),
            "{r}"
        );
        assert!(
            r.contains("ct mark 1 tcp sport { 2379, 5433, 8009, 5434, 8010 } drop"),
            "{r}"
        );
        assert!(r.contains("ct mark { 2, 3 } tcp dport { 5432, 8008 } drop"), "{r}");
        assert!(r.contains("ct mark { 2, 3 } tcp sport { 5432, 8008 } drop"), "{r}");
        // Marks are given by the group of the process that opened the connection.
        let t = nft_table();
        assert!(
            t.contains("meta skgid 61001 ct mark set 1") && t.contains("jump cut"),
            "{t}"
        );
    }

    #[test]
    fn the_third_node_never_leads() {
        let y = node_yaml(2, Path::new("/x"), Path::new("/bin"));
        assert!(y.contains("nofailover: true") && y.contains("nosync: true"));
        assert!(y.contains("listen: 127.0.0.1:5434") && y.contains("listen: 127.0.0.1:8010"));
        let y = node_yaml(0, Path::new("/x"), Path::new("/bin"));
        assert!(y.contains("nofailover: false") && y.contains("primary_start_timeout: 0"));
    }
}
