//! The throwaway PostgreSQL: found on the machine, initdb'd once into a cached
//! template, copied into a temp dir per run, started on a free loopback port
//! and removed afterwards. If `lab` is killed, the server gets SIGQUIT from the
//! kernel (PR_SET_PDEATHSIG) and the next start removes the leftover directory.
use std::ffi::CString;
use std::fs;
use std::io::Read;
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use anyhow::{Result, bail};

use crate::i18n::{Context, Lang};

/// Bump when the template's settings change, so old caches are not reused.
const TEMPLATE_FORMAT: &str = "t4";
/// The file that marks a template as finished.
const TEMPLATE_DONE: &str = "lab-template-done";
const DIR_PREFIX: &str = "lab-pg-";

/// Settings the scenarios rely on, written into the template's postgresql.conf.
const SETTINGS: &str = "
# written by lab for its throwaway cluster
listen_addresses = '127.0.0.1'
max_connections = 300
shared_buffers = 64MB
fsync = off
synchronous_commit = off
full_page_writes = off
lc_messages = 'C'
log_min_messages = warning
# whose connection a FATAL line ended (a timeout, pg_terminate_backend)
log_line_prefix = '%m [%p] %a '
log_checkpoints = off
max_locks_per_transaction = 128
# lab hunt asks when an anomaly's transactions committed
track_commit_timestamp = on
";

/// A running throwaway cluster. Dropping it stops the server and removes its directory.
pub struct Cluster {
    dir: PathBuf,
    /// The postmaster, shared with the [`ServerCtl`] handles that restart it.
    proc: Arc<Proc>,
    pub port: u16,
    pub bin: PathBuf,
    /// How long start() took, for the "ready" budget.
    pub startup: Duration,
    /// Started with `--tls`: the CA lab made for the run (in the run's
    /// directory, removed with it), which clients verify the server with.
    pub root_cert: Option<PathBuf>,
}

impl Cluster {
    pub fn url(&self) -> String {
        match &self.root_cert {
            None => format!("postgres://postgres@127.0.0.1:{}/postgres", self.port),
            Some(root) => format!(
                "postgres://postgres@localhost:{}/postgres?sslmode=verify-full&sslrootcert={}",
                self.port,
                root.display()
            ),
        }
    }

    pub fn config(&self) -> crate::postgres::ConnInfo {
        let mut c = match &self.root_cert {
            None => crate::postgres::ConnInfo::plain(),
            // verify-full: the certificate names localhost and 127.0.0.1.
            Some(root) => crate::postgres::ConnInfo::with_tls(
                crate::postgres::tls::Settings::verify_full(root).expect("lab's own CA reads back"),
            ),
        };
        c.host("127.0.0.1")
            .port(self.port)
            .user("postgres")
            .dbname("postgres")
            .connect_timeout(Duration::from_secs(5));
        c
    }

    pub fn socket_dir(&self) -> &Path {
        &self.dir
    }

    /// Finds binaries, starts a server and waits until it accepts connections.
    /// `lang` is the language of the one note it may print (a damaged template made again).
    pub fn start(pg_bin: Option<&Path>, lang: Lang) -> Result<Cluster> {
        Cluster::start_with(pg_bin, "", lang)
    }

    /// The same, with `conf` appended to the server's postgresql.conf
    /// (pg_regress's --temp-config).
    pub fn start_with(pg_bin: Option<&Path>, conf: &str, lang: Lang) -> Result<Cluster> {
        Cluster::start_opts(pg_bin, conf, false, lang)
    }

    /// The same; with `tls`, the server speaks TLS only (`ssl = on`,
    /// `hostnossl ... reject`) with a CA and certificate lab makes for the run.
    pub fn start_opts(pg_bin: Option<&Path>, conf: &str, tls: bool, lang: Lang) -> Result<Cluster> {
        let began = Instant::now();
        let bin = find_bin_dir(pg_bin)?;
        let owner = Owner::for_server()?;
        remove_stale_dirs();
        let template = ensure_template(&bin, &owner, lang)?;

        let dir = make_run_dir()?;
        let mut cluster = Cluster {
            dir,
            proc: Arc::default(),
            port: 0,
            bin: bin.clone(),
            startup: Duration::ZERO,
            root_cert: None,
        };
        let data = cluster.dir.join("data");
        owner.chown(&cluster.dir)?;
        copy_dir(&template, &data, Some(&owner)).ctx(msg::copy_template)?;
        if tls {
            cluster.root_cert = Some(tls_only(&cluster.dir, &data, &owner)?);
        }
        if !conf.is_empty() {
            let file = data.join("postgresql.conf");
            let mut text = fs::read_to_string(&file)?;
            text.push_str("\n# appended by lab (--temp-config)\n");
            text.push_str(conf);
            text.push('\n');
            fs::write(&file, text)?;
        }

        cluster.listen(&owner, began)?;
        Ok(cluster)
    }

    /// A streaming standby of this cluster (`pg_basebackup -R`), started on a
    /// free port and removed like the primary. It is ready once it accepts
    /// read-only connections.
    pub fn standby(&self) -> Result<Cluster> {
        let mut standby = Cluster::standby_of(&self.bin, self.port, "")?;
        // A copy of a TLS-only primary is TLS-only, with the same certificate.
        standby.root_cert = self.root_cert.clone();
        Ok(standby)
    }

    /// A streaming standby of lab's throwaway server on `port` (binaries in
    /// `bin`), with `settings` added to its configuration before it starts.
    pub fn standby_of(bin: &Path, port: u16, settings: &str) -> Result<Cluster> {
        let began = Instant::now();
        let owner = Owner::for_server()?;
        let dir = make_run_dir()?;
        let mut standby = Cluster {
            dir,
            proc: Arc::default(),
            port: 0,
            bin: bin.to_path_buf(),
            startup: Duration::ZERO,
            root_cert: None,
        };
        owner.chown(&standby.dir)?;
        let data = standby.dir.join("data");
        let basebackup = basebackup_for(bin).unwrap_or_else(|| bin.join("pg_basebackup"));
        // Over TCP, as a standby connects; then, if that fails, through the
        // primary's Unix socket where it is lab's (no TLS to negotiate: a
        // pg_basebackup of another build may have none, and a --tls primary
        // refuses plaintext over TCP).
        let hosts: Vec<PathBuf> = std::iter::once(PathBuf::from("127.0.0.1"))
            .chain(own_socket_dir(port))
            .collect();
        let mut failed = None;
        for host in &hosts {
            let mut cmd = Command::new(&basebackup);
            cmd.arg("-D")
                .arg(&data)
                .arg("-h")
                .arg(host)
                .args(["-p", &port.to_string(), "-U", "postgres"])
                .args(["-R", "-X", "stream", "--no-sync", "-c", "fast"])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped());
            owner.apply(&mut cmd);
            let out = cmd
                .output()
                .ctx(|| msg::could_not_run(basebackup.display().to_string()))?;
            if out.status.success() {
                failed = None;
                break;
            }
            // pg_basebackup removes what it made of the directory on failure.
            let _ = fs::remove_dir_all(&data);
            let err = String::from_utf8_lossy(&out.stderr);
            failed = Some(err.trim().lines().last().unwrap_or("-").to_string());
        }
        if let Some(err) = failed {
            bail!(msg::basebackup_failed(err));
        }
        // What -R wrote names every option its own libpq knows; an older
        // server's walreceiver refuses those it does not (channel_binding
        // before 13, sslsni before 14): the options that matter, again, last.
        let auto = data.join("postgresql.auto.conf");
        let mut text = fs::read_to_string(&auto).ctx(|| msg::create(auto.display().to_string()))?;
        text.push_str(&format!(
            "primary_conninfo = 'host=127.0.0.1 port={port} user=postgres'\n"
        ));
        fs::write(&auto, text).ctx(|| msg::create(auto.display().to_string()))?;
        if !settings.is_empty() {
            let conf = data.join("postgresql.conf");
            let mut text = fs::read_to_string(&conf).ctx(|| msg::create(conf.display().to_string()))?;
            text.push_str(&format!("\n# written by lab for this standby\n{settings}\n"));
            fs::write(&conf, text).ctx(|| msg::create(conf.display().to_string()))?;
        }
        standby.listen(&owner, began)?;
        Ok(standby)
    }

    /// Starts the server on a free port. A free port can be taken by someone
    /// else between our probe and the server's bind: try a few.
    fn listen(&mut self, owner: &Owner, began: Instant) -> Result<()> {
        let mut last_err = None;
        for _ in 0..5 {
            self.port = free_port()?;
            match self.spawn_and_wait(owner) {
                Ok(()) => {
                    self.startup = began.elapsed();
                    return Ok(());
                }
                Err(e) => {
                    let retry = port_taken(&format!("{e:#}"));
                    last_err = Some(e);
                    if !retry {
                        break;
                    }
                }
            }
        }
        Err(last_err.unwrap())
    }

    fn spawn_and_wait(&mut self, owner: &Owner) -> Result<()> {
        let child = start_postgres(&self.bin, &self.dir, self.port, owner)?;
        *self.proc.child.lock().unwrap() = Some(child);
        Ok(())
    }

    fn stop(&mut self) {
        let child = self.proc.child.lock().unwrap().take();
        if let Some(child) = child {
            // Immediate shutdown: the data is thrown away anyway.
            stop_child(child, libc::SIGQUIT);
        }
        // The thread that started a restarted server goes after it.
        let keeper = self.proc.keeper.lock().unwrap().take();
        if let Some((tx, thread)) = keeper {
            drop(tx);
            let _ = thread.join();
        }
    }

    /// A handle that can find, signal and restart this server's postmaster
    /// while the cluster runs (lab hunt's nemesis).
    pub fn ctl(&self) -> ServerCtl {
        ServerCtl {
            proc: self.proc.clone(),
            dir: self.dir.clone(),
            bin: self.bin.clone(),
            port: self.port,
        }
    }
}

/// Work for the thread that starts a restarted postmaster.
type KeeperJob = Box<dyn FnOnce() + Send>;

/// A throwaway server's postmaster, and the thread that started it again
/// after a restart (its parent-death signal is tied to that thread, which
/// lives until the server is stopped).
#[derive(Default)]
struct Proc {
    child: Mutex<Option<Child>>,
    keeper: Mutex<Option<(mpsc::Sender<KeeperJob>, std::thread::JoinHandle<()>)>>,
}

/// The postmaster of lab's own throwaway server, for lab hunt's nemesis:
/// its pid, whether a pid is one of its backends, an immediate restart.
#[derive(Clone)]
pub struct ServerCtl {
    proc: Arc<Proc>,
    dir: PathBuf,
    bin: PathBuf,
    pub port: u16,
}

impl ServerCtl {
    /// The postmaster's pid (none while it is being restarted or once stopped).
    pub fn postmaster(&self) -> Option<i32> {
        self.proc.child.lock().unwrap().as_ref().map(|c| c.id() as i32)
    }

    /// Whether `pid` is a live process the postmaster started (a backend,
    /// not one that has exited and waits to be reaped), as /proc says now:
    /// lab signals no process that is not.
    pub fn is_backend(&self, pid: i32) -> bool {
        let Some(pm) = self.postmaster() else { return false };
        let parent = |stat: String| {
            let mut rest = stat.rsplit(')').next()?.split_whitespace();
            let state = rest.next()?;
            let ppid = rest.next()?.parse::<i32>().ok()?;
            (!matches!(state, "Z" | "X")).then_some(ppid)
        };
        fs::read_to_string(format!("/proc/{pid}/stat")).ok().and_then(parent) == Some(pm)
    }

    /// An immediate shutdown (SIGQUIT: no checkpoint, as a crash), then a
    /// start on the same port and data, ready once postmaster.pid says so
    /// (after crash recovery). Blocking. The new postmaster is started by
    /// a thread that lives as long as the cluster, so that its parent-death
    /// signal stays armed.
    pub fn restart(&self) -> Result<()> {
        let mut slot = self.proc.child.lock().unwrap();
        if let Some(child) = slot.take() {
            stop_child(child, libc::SIGQUIT);
        }
        let (bin, dir, port) = (self.bin.clone(), self.dir.clone(), self.port);
        let (done_tx, done_rx) = mpsc::channel();
        let job: KeeperJob = Box::new(move || {
            let started = Owner::for_server().and_then(|owner| start_postgres(&bin, &dir, port, &owner));
            let _ = done_tx.send(started);
        });
        {
            let mut keeper = self.proc.keeper.lock().unwrap();
            if keeper.is_none() {
                let (tx, rx) = mpsc::channel::<KeeperJob>();
                let thread = std::thread::spawn(move || {
                    for job in rx {
                        job();
                    }
                });
                *keeper = Some((tx, thread));
            }
            let (tx, _) = keeper.as_ref().expect("just made");
            tx.send(job)
                .map_err(|_| anyhow::anyhow!(msg::could_not_start("postgres")))?;
        }
        let child = done_rx
            .recv()
            .map_err(|_| anyhow::anyhow!(msg::could_not_start("postgres")))??;
        *slot = Some(child);
        Ok(())
    }
}

/// Starts `postgres` on `dir`'s data directory and port and waits until it
/// accepts connections (postmaster.pid says "ready", or "standby" for a
/// hot standby); stopped again if it does not within 30 s.
fn start_postgres(bin: &Path, dir: &Path, port: u16, owner: &Owner) -> Result<Child> {
    let data = dir.join("data");
    let log_path = dir.join("server.log");
    // Appended to: a restarted server's log follows the first one's.
    let log = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log_path)
        .ctx(msg::create_log)?;
    owner.chown(&log_path)?;
    let mut cmd = Command::new(bin.join("postgres"));
    cmd.arg("-D")
        .arg(&data)
        .arg("-p")
        .arg(port.to_string())
        .arg("-k")
        .arg(dir)
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log)
        // Its own process group: a Ctrl-C in the terminal reaches lab, which
        // then stops the server in order, not the server directly.
        .process_group(0);
    owner.apply(&mut cmd);
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            // Runs after the uid change (which would clear it): if lab dies,
            // even by SIGKILL, the kernel sends the postmaster SIGQUIT.
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGQUIT);
            if libc::getppid() != parent {
                libc::_exit(1);
            }
            Ok(())
        });
    }
    let mut child = cmd
        .spawn()
        .ctx(|| msg::could_not_start(bin.join("postgres").display().to_string()))?;

    // Ready when postmaster.pid says so (PostgreSQL writes "ready" on its
    // status line once it accepts connections, "standby" once a hot
    // standby accepts read-only ones).
    let deadline = Instant::now() + Duration::from_secs(30);
    let pidfile = data.join("postmaster.pid");
    let mut pause = Duration::from_millis(1);
    loop {
        if let Some(status) = child.try_wait()? {
            bail!(msg::exited(status.to_string(), log_tail(&log_path)));
        }
        if let Ok(text) = fs::read_to_string(&pidfile)
            && text
                .lines()
                .nth(7)
                .is_some_and(|l| matches!(l.trim(), "ready" | "standby"))
            && text.lines().next().and_then(|l| l.trim().parse::<u32>().ok()) == Some(child.id())
        {
            return Ok(child);
        }
        if Instant::now() > deadline {
            stop_child(child, libc::SIGQUIT);
            bail!(msg::not_ready(log_tail(&log_path)));
        }
        // A start takes tens of milliseconds: look often, so as not to
        // overshoot it by a long pause.
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(2));
    }
}

/// Sends `signal` to a server lab started and waits (10 s at most) for it to
/// exit; after that its whole process group is killed.
pub(crate) fn stop_child(mut child: Child, signal: libc::c_int) {
    let pid = child.id() as libc::pid_t;
    unsafe { libc::kill(pid, signal) };
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match child.try_wait() {
            Ok(Some(_)) | Err(_) => break,
            Ok(None) if Instant::now() > deadline => {
                unsafe { libc::kill(-pid, libc::SIGKILL) };
                let _ = child.wait();
                break;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(2)),
        }
    }
}

/// Makes a cluster TLS-only: a CA and a server certificate for the run
/// (the CA's certificate in the run's directory for clients, the server's
/// certificate and key in its data directory), `ssl = on`, and a pg_hba.conf
/// that takes TCP connections over TLS only (the Unix socket stays).
/// Returns the CA's file.
fn tls_only(dir: &Path, data: &Path, owner: &Owner) -> Result<PathBuf> {
    let certs = crate::postgres::tls::RunCerts::make()?;
    certs.write(data).ctx(|| msg::create(data.display().to_string()))?;
    for f in ["root.crt", "server.crt", "server.key"] {
        owner.chown(&data.join(f))?;
    }
    let root = dir.join("root.crt");
    fs::write(&root, &certs.ca_pem).ctx(|| msg::create(root.display().to_string()))?;
    let conf = data.join("postgresql.conf");
    let mut text = fs::read_to_string(&conf).ctx(|| msg::create(conf.display().to_string()))?;
    text.push_str(
        "\n# written by lab for --tls\nssl = on\nssl_cert_file = 'server.crt'\nssl_key_file = 'server.key'\n",
    );
    fs::write(&conf, text).ctx(|| msg::create(conf.display().to_string()))?;
    let hba = data.join("pg_hba.conf");
    fs::write(
        &hba,
        "# written by lab for --tls: TCP over TLS only\n\
         local all all trust\n\
         local replication all trust\n\
         hostssl all all 127.0.0.1/32 trust\n\
         hostssl replication all 127.0.0.1/32 trust\n\
         hostnossl all all 0.0.0.0/0 reject\n\
         hostnossl replication all 0.0.0.0/0 reject\n",
    )
    .ctx(|| msg::create(hba.display().to_string()))?;
    Ok(root)
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.stop();
        let _ = fs::remove_dir_all(&self.dir);
    }
}

pub(crate) fn log_tail(path: &Path) -> crate::i18n::Arg {
    let text = fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let tail = lines[lines.len().saturating_sub(3)..].join(" | ");
    if tail.is_empty() {
        msg::no_output().into()
    } else {
        tail.into()
    }
}

/// Whether the server's start failed because its port was taken (between
/// lab's probe and the server's bind, by another process starting beside
/// it). The error carries the log's last lines: the bind error itself may
/// be above them, the listen sockets' failure below.
fn port_taken(error: &str) -> bool {
    [
        "could not bind",
        "could not create listen socket",
        "could not create any TCP/IP sockets",
        "Address already in use",
    ]
    .iter()
    .any(|m| error.contains(m))
}

pub(crate) fn free_port() -> Result<u16> {
    let l = TcpListener::bind("127.0.0.1:0").ctx(msg::no_port)?;
    Ok(l.local_addr()?.port())
}

fn is_server_dir(dir: &Path) -> bool {
    let exe =
        |name: &str| fs::metadata(dir.join(name)).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0);
    exe("initdb") && exe("postgres")
}

/// The binaries, in the documented order: --pg-bin / LAB_PG_BIN, `pg_config
/// --bindir`, initdb on PATH, the highest /usr/lib/postgresql/*/bin, then the
/// usual Homebrew and /usr/local/pgsql places.
pub fn find_bin_dir(explicit: Option<&Path>) -> Result<PathBuf> {
    // The CLI passes LAB_PG_BIN in through --pg-bin; library users (the tests) get it here.
    let from_env = std::env::var_os("LAB_PG_BIN")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from);
    if let Some(dir) = explicit.or(from_env.as_deref()) {
        if is_server_dir(dir) {
            return Ok(dir.to_path_buf());
        }
        bail!(msg::not_a_bin_dir(dir.display().to_string(), msg::install_help()));
    }
    candidates()
        .into_iter()
        .find(|d| is_server_dir(d))
        .ctx(|| msg::no_binaries(msg::install_help()))
}

/// The pg_basebackup that can copy a server of `bin`'s version: its own,
/// else one of the same or a later major (pg_basebackup copies older
/// servers) where lab looks for server programs; some builds (npm's
/// embedded-postgres) ship only initdb, pg_ctl and postgres.
pub fn basebackup_for(bin: &Path) -> Option<PathBuf> {
    let own = bin.join("pg_basebackup");
    if own.is_file() {
        return Some(own);
    }
    let major = |program: &Path| -> Option<u32> {
        let out = Command::new(program)
            .arg("--version")
            .stderr(Stdio::null())
            .output()
            .ok()?;
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let mut words = text.split_whitespace().skip_while(|w| *w != "(PostgreSQL)");
        words.nth(1)?.split(['.', 'b', 'r']).next()?.parse().ok()
    };
    let server = major(&bin.join("postgres"))?;
    candidates()
        .into_iter()
        .chain(fetched())
        .map(|d| d.join("pg_basebackup"))
        .filter(|p| p.is_file())
        .find(|p| major(p).is_some_and(|m| m >= server))
}

/// The bin directories of the versions scripts/fetch-pg.sh fetched, newest
/// first, in its caches (`LAB_PG_CACHE`, /var/cache/lab/pg, ~/.cache/lab/pg).
fn fetched() -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = std::env::var_os("LAB_PG_CACHE")
        .map(PathBuf::from)
        .into_iter()
        .collect();
    roots.push(PathBuf::from("/var/cache/lab/pg"));
    roots.extend(std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/lab/pg")));
    let mut out: Vec<(Vec<u32>, PathBuf)> = Vec::new();
    for root in roots {
        for e in fs::read_dir(&root).into_iter().flatten().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Ok(version) = name.split('.').map(str::parse).collect::<Result<Vec<u32>, _>>() else {
                continue;
            };
            for sub in ["package/native/bin", "embedded_postgres/pginstall/bin"] {
                out.push((version.clone(), e.path().join(sub)));
            }
        }
    }
    out.sort_by(|a, b| b.0.cmp(&a.0));
    out.into_iter().map(|(_, p)| p).collect()
}

fn candidates() -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(o) = Command::new("pg_config").arg("--bindir").stderr(Stdio::null()).output()
        && o.status.success()
    {
        out.push(PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()));
    }
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            let initdb = dir.join("initdb");
            if initdb.is_file() {
                // /usr/local/bin/initdb may be a symlink: the server programs sit next to its target.
                let real = fs::canonicalize(&initdb).unwrap_or(initdb);
                out.push(real.parent().map(Path::to_path_buf).unwrap_or(dir));
            }
        }
    }
    let mut versions: Vec<(u32, PathBuf)> = fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let v = e.file_name().to_str()?.parse::<u32>().ok()?;
            Some((v, e.path().join("bin")))
        })
        .collect();
    versions.sort_by_key(|v| std::cmp::Reverse(v.0));
    out.extend(versions.into_iter().map(|(_, p)| p));
    for base in ["/opt/homebrew/opt", "/usr/local/opt"] {
        let mut brew: Vec<PathBuf> = fs::read_dir(base)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("postgresql"))
            .map(|e| e.path().join("bin"))
            .collect();
        brew.sort();
        brew.reverse();
        out.extend(brew);
    }
    out.extend(["/opt/homebrew/bin", "/usr/local/bin", "/usr/local/pgsql/bin"].map(PathBuf::from));
    out
}

/// initdb and postgres refuse to run as root: when lab is root they run as the
/// `postgres` system user (or `nobody`), which is handed the data directory.
pub(crate) struct Owner {
    ids: Option<(u32, u32)>,
}

impl Owner {
    pub(crate) fn for_server() -> Result<Owner> {
        if unsafe { libc::geteuid() } != 0 {
            return Ok(Owner { ids: None });
        }
        for name in ["postgres", "nobody"] {
            let cname = CString::new(name).unwrap();
            // SAFETY: getpwnam returns a pointer into static storage, read at once.
            let pw = unsafe { libc::getpwnam(cname.as_ptr()) };
            if !pw.is_null() {
                let (uid, gid) = unsafe { ((*pw).pw_uid, (*pw).pw_gid) };
                return Ok(Owner { ids: Some((uid, gid)) });
            }
        }
        bail!(msg::root())
    }

    /// The uid and gid servers run as, when lab runs as root.
    pub(crate) fn ids(&self) -> Option<(u32, u32)> {
        self.ids
    }

    pub(crate) fn apply(&self, cmd: &mut Command) {
        if let Some((uid, gid)) = self.ids {
            cmd.uid(uid).gid(gid);
            // HOME may be root's, unreadable to the server's user.
            cmd.env("HOME", "/");
        }
    }

    pub(crate) fn chown(&self, path: &Path) -> Result<()> {
        if let Some((uid, gid)) = self.ids {
            std::os::unix::fs::lchown(path, Some(uid), Some(gid)).ctx(|| msg::chown(path.display().to_string()))?;
        }
        Ok(())
    }
}

/// Where lab makes its servers' directories: `LAB_RUN_DIR` if set, else
/// /dev/shm when it is a tmpfs with room (a cluster's files are copied and
/// thrown away: in memory that takes a tenth of the time it takes on disk),
/// else the temp dir.
pub fn run_root() -> PathBuf {
    if let Some(dir) = std::env::var_os("LAB_RUN_DIR").filter(|v| !v.is_empty()) {
        return PathBuf::from(dir);
    }
    let shm = Path::new("/dev/shm");
    if in_memory_with_room(shm) {
        return shm.to_path_buf();
    }
    std::env::temp_dir()
}

/// Whether `dir` is a writable tmpfs with at least 1 GiB free.
fn in_memory_with_room(dir: &Path) -> bool {
    const TMPFS_MAGIC: i64 = 0x0102_1994;
    let Ok(c) = CString::new(dir.as_os_str().as_encoded_bytes()) else {
        return false;
    };
    // SAFETY: statfs fills the struct it is given; the path is a valid C string.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statfs(c.as_ptr(), &mut st) } != 0 {
        return false;
    }
    let free = st.f_bavail as u64 * st.f_bsize as u64;
    let writable = unsafe { libc::access(c.as_ptr(), libc::W_OK | libc::X_OK) } == 0;
    st.f_type as i64 == TMPFS_MAGIC && free >= 1 << 30 && writable
}

/// The socket directory of a server this process started on `port` (its
/// run directory, which holds `.s.PGSQL.<port>`), if there is one.
fn own_socket_dir(port: u16) -> Option<PathBuf> {
    let ours = format!("{DIR_PREFIX}{}-", std::process::id());
    fs::read_dir(run_root())
        .ok()?
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&ours))
        .map(|e| e.path())
        .find(|d| d.join(format!(".s.PGSQL.{port}")).exists())
}

pub(crate) fn make_run_dir() -> Result<PathBuf> {
    // Unique within the process too: the tests start clusters from many threads.
    static STARTED: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = STARTED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)?
        .subsec_nanos();
    let dir = run_root().join(format!("{DIR_PREFIX}{}-{nanos:x}{n:x}", std::process::id()));
    fs::create_dir(&dir).ctx(|| msg::create(dir.display().to_string()))?;
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o700))?;
    Ok(dir)
}

/// Directories of lab processes that no longer exist (a SIGKILLed run): make
/// sure their server is gone, then remove them (where lab makes them now,
/// and in the temp dir, where it made them before).
fn remove_stale_dirs() {
    let mut roots = vec![run_root()];
    if roots[0] != std::env::temp_dir() {
        roots.push(std::env::temp_dir());
    }
    for root in roots {
        remove_stale_dirs_in(&root);
    }
}

fn remove_stale_dirs_in(root: &Path) {
    let Ok(entries) = fs::read_dir(root) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix(DIR_PREFIX) else {
            continue;
        };
        let Some(owner) = rest.split('-').next().and_then(|p| p.parse::<i32>().ok()) else {
            continue;
        };
        if process_alive(owner) {
            continue;
        }
        let pidfile = e.path().join("data").join("postmaster.pid");
        if let Some(pm) = fs::read_to_string(pidfile)
            .ok()
            .and_then(|t| t.lines().next()?.trim().parse::<i32>().ok())
        {
            let cmdline = fs::read(format!("/proc/{pm}/cmdline")).unwrap_or_default();
            if String::from_utf8_lossy(&cmdline).contains("postgres") {
                unsafe { libc::kill(pm, libc::SIGQUIT) };
                let deadline = Instant::now() + Duration::from_secs(5);
                while process_alive(pm) && Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(5));
                }
            }
        }
        let _ = fs::remove_dir_all(e.path());
    }
}

fn process_alive(pid: i32) -> bool {
    // A zombie (killed, not yet reaped) counts as gone.
    if let Ok(stat) = fs::read_to_string(format!("/proc/{pid}/stat"))
        && stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z'))
    {
        return false;
    }
    // kill(pid, 0): 0 = exists; EPERM = exists but not ours.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

fn cache_root() -> PathBuf {
    if let Some(x) = std::env::var_os("XDG_CACHE_HOME").filter(|v| !v.is_empty()) {
        return PathBuf::from(x).join("lab");
    }
    if let Some(h) = std::env::var_os("HOME").filter(|v| !v.is_empty()) {
        return PathBuf::from(h).join(".cache").join("lab");
    }
    std::env::temp_dir().join("lab-cache")
}

/// What tells one set of server binaries from another without running
/// them (running `postgres --version` costs a start-up's worth of time):
/// the postgres program's size, change time and inode.
fn binary_identity(bin: &Path) -> Result<String> {
    use std::os::unix::fs::MetadataExt;
    let program = bin.join("postgres");
    let m = fs::metadata(&program).ctx(|| msg::could_not_run(program.display().to_string()))?;
    Ok(format!("{}:{}.{}:{}", m.len(), m.mtime(), m.mtime_nsec(), m.ino()))
}

/// The initdb'd template for these binaries, made once and cached: initdb
/// alone takes most of a second, a copy takes a few tens of milliseconds.
fn ensure_template(bin: &Path, owner: &Owner, lang: Lang) -> Result<PathBuf> {
    let key = format!("{TEMPLATE_FORMAT}:{}:{}", bin.display(), binary_identity(bin)?);
    let hash = key
        .bytes()
        .fold(0xcbf29ce484222325u64, |h, b| (h ^ b as u64).wrapping_mul(0x100000001b3));
    let root = cache_root();
    let template = root.join(format!("template-{hash:016x}"));
    if template_complete(&template) {
        return Ok(template);
    }
    if template.exists() {
        // Damaged (a file deleted, a copy cut short): made again, with a note.
        let _ = fs::remove_dir_all(&template);
        crate::output::eline!("{}", msg::template_rebuilt(template.display().to_string()).render(lang));
    }
    fs::create_dir_all(&root).ctx(|| msg::create_cache(root.display().to_string()))?;

    // initdb runs as the server's user, which may not reach our cache (root's
    // home is 0700): build in a temp dir, then copy into the cache.
    let build = make_run_dir()?;
    let result = (|| -> Result<()> {
        owner.chown(&build)?;
        let data = build.join("data");
        let mut cmd = Command::new(bin.join("initdb"));
        cmd.arg("-D")
            .arg(&data)
            .args(["-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        owner.apply(&mut cmd);
        let mut child = cmd
            .spawn()
            .ctx(|| msg::could_not_run(bin.join("initdb").display().to_string()))?;
        let mut err = String::new();
        if let Some(mut e) = child.stderr.take() {
            let _ = e.read_to_string(&mut err);
        }
        let status = child.wait()?;
        if !status.success() {
            bail!(msg::initdb_failed(err.trim().lines().last().unwrap_or("-")));
        }
        let conf = data.join("postgresql.conf");
        let mut text = fs::read_to_string(&conf)?;
        text.push_str(SETTINGS);
        fs::write(&conf, text)?;
        // Unique per process and per start: tests start clusters from many threads at once.
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)?
            .as_nanos();
        let staging = root.join(format!(".staging-{}-{nanos:x}", std::process::id()));
        let _ = fs::remove_dir_all(&staging);
        copy_dir(&data, &staging, None)?;
        // Written last: a template without it was not finished.
        fs::write(staging.join(TEMPLATE_DONE), TEMPLATE_FORMAT)?;
        // Another lab may have finished first; either copy is as good.
        if fs::rename(&staging, &template).is_err() {
            let _ = fs::remove_dir_all(&staging);
        }
        Ok(())
    })();
    let _ = fs::remove_dir_all(&build);
    result.ctx(msg::template)?;
    Ok(template)
}

/// A template lab finished making and whose files the server cannot start without are there.
fn template_complete(template: &Path) -> bool {
    template.join(TEMPLATE_DONE).is_file()
        && ["PG_VERSION", "postgresql.conf", "pg_hba.conf", "global/pg_control"]
            .iter()
            .all(|f| template.join(f).is_file())
        && ["base", "global", "pg_wal"].iter().all(|d| template.join(d).is_dir())
}

/// Copies a directory tree (a cluster's data directory: about a thousand
/// small files), handing each copy to `owner` as it is made; the files are
/// copied by a few threads at once, which halves the time on two cores.
fn copy_dir(from: &Path, to: &Path, owner: Option<&Owner>) -> Result<()> {
    let mut files = Vec::new();
    make_dirs(from, to, owner, &mut files)?;
    let next = std::sync::atomic::AtomicUsize::new(0);
    let copy_one = |(src, dest): &(PathBuf, PathBuf)| -> Result<()> {
        fs::copy(src, dest).ctx(|| msg::create(dest.display().to_string()))?;
        if let Some(o) = owner {
            o.chown(dest)?;
        }
        Ok(())
    };
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..4)
            .map(|_| {
                scope.spawn(|| -> Result<()> {
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        match files.get(i) {
                            Some(f) => copy_one(f)?,
                            None => return Ok(()),
                        }
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .try_for_each(|w| w.join().unwrap_or_else(|_| Err(msg::copy_template().into())))
    })
}

/// Makes `to`'s directories (and symlinks) as `from` has them, and lists
/// the files to copy.
fn make_dirs(from: &Path, to: &Path, owner: Option<&Owner>, files: &mut Vec<(PathBuf, PathBuf)>) -> Result<()> {
    fs::create_dir(to).ctx(|| msg::create(to.display().to_string()))?;
    fs::set_permissions(to, fs::Permissions::from_mode(0o700))?;
    if let Some(o) = owner {
        o.chown(to)?;
    }
    for e in fs::read_dir(from)? {
        let e = e?;
        let ty = e.file_type()?;
        let dest = to.join(e.file_name());
        if ty.is_dir() {
            make_dirs(&e.path(), &dest, owner, files)?;
        } else if ty.is_symlink() {
            std::os::unix::fs::symlink(fs::read_link(e.path())?, &dest)?;
            if let Some(o) = owner {
                o.chown(&dest)?;
            }
        } else {
            files.push((e.path(), dest));
        }
    }
    Ok(())
}

pub(crate) mod msg {
    crate::messages! {
        prefix "cl";
        chown(path) {
            en: "could not hand {path} to the server's user",
            tr: "{path} sunucunun kullanıcısına verilemedi",
        }
        copy_template() {
            en: "could not copy the cluster template",
            tr: "cluster şablonu kopyalanamadı",
        }
        could_not_run(program) {
            en: "could not run {program}",
            tr: "{program} çalıştırılamadı",
        }
        could_not_start(program) {
            en: "could not start {program}",
            tr: "{program} başlatılamadı",
        }
        create(path) {
            en: "could not create {path}",
            tr: "{path} oluşturulamadı",
        }
        create_cache(path) {
            en: "could not create the cache {path}",
            tr: "önbellek {path} oluşturulamadı",
        }
        create_log() {
            en: "could not create the server log",
            tr: "sunucu günlüğü oluşturulamadı",
        }
        exited(status, log) {
            en: "the throwaway PostgreSQL exited during start ({status}): {log}",
            tr: "geçici PostgreSQL başlarken çıktı ({status}): {log}",
        }
        initdb_failed(error) {
            en: "initdb failed: {error}",
            tr: "initdb başarısız: {error}",
        }
        no_binaries(help) {
            en: "no PostgreSQL server programs found on this machine: {help}",
            tr: "bu makinede PostgreSQL sunucu programları bulunamadı: {help}",
        }
        no_output() {
            en: "no server output",
            tr: "sunucu çıktısı yok",
        }
        no_port() {
            en: "could not find a free loopback port",
            tr: "boş bir loopback portu bulunamadı",
        }
        not_a_bin_dir(dir, help) {
            en: "{dir} holds no initdb and postgres programs: {help}",
            tr: "{dir} içinde initdb ve postgres programları yok: {help}",
        }
        template_rebuilt(path) {
            en: "note: the cached PostgreSQL template {path} was damaged; lab made it again",
            tr: "not: önbellekteki PostgreSQL şablonu {path} bozuktu; lab onu yeniden oluşturdu",
        }
        basebackup_failed(last) {
            en: "pg_basebackup could not copy the primary for a standby: {last}",
            tr: "pg_basebackup standby için primary'yi kopyalayamadı: {last}",
        }
        not_ready(log) {
            en: "the throwaway PostgreSQL was not ready within 30 s: {log}",
            tr: "geçici PostgreSQL 30 sn içinde hazır olmadı: {log}",
        }
        install_help() {
        en: "install the postgresql package (e.g. apt-get install postgresql), or run `docker compose up -d` and set DATABASE_URL=postgres://lab:lab@127.0.0.1:5432/lab, or pass --pg-bin DIR (or LAB_PG_BIN) naming the directory that holds initdb and postgres",
        tr: "postgresql paketini kurun (ör. apt-get install postgresql), ya da `docker compose up -d` çalıştırıp DATABASE_URL=postgres://lab:lab@127.0.0.1:5432/lab ayarlayın, ya da initdb ve postgres'in bulunduğu dizini --pg-bin DIR (veya LAB_PG_BIN) ile verin",
    }
    root() {
            en: "lab runs as root, and initdb/postgres refuse root, but there is no 'postgres' user to run them as: create one, run lab as a normal user, or set DATABASE_URL",
            tr: "lab root olarak çalışıyor ve initdb/postgres root'u reddediyor, ama onları çalıştıracak bir 'postgres' kullanıcısı yok: bir tane oluşturun, lab'ı normal bir kullanıcıyla çalıştırın ya da DATABASE_URL ayarlayın",
        }
        template() {
            en: "could not prepare the throwaway cluster template",
            tr: "geçici cluster şablonu hazırlanamadı",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::port_taken;

    #[test]
    fn a_port_taken_between_probe_and_bind_is_tried_again() {
        // .ci/run's full suite, many servers starting at once: the log's last three lines.
        let ci = "the throwaway PostgreSQL exited during start (exit status: 1): 2026-12-02 02:23:42.192 UTC \
                  [1288] WARNING:  could not create listen socket for \"127.0.0.1\" | 2026-12-02 02:23:42.192 UTC \
                  [1288] FATAL:  could not create any TCP/IP sockets | 2026-12-02 02:23:42.255 UTC [1288] LOG:  \
                  database system is shut down";
        assert!(port_taken(ci));
        assert!(port_taken(
            "LOG:  could not bind IPv4 address \"127.0.0.1\": Address already in use"
        ));
    }

    #[test]
    fn other_start_failures_are_not_tried_again() {
        assert!(!port_taken(
            "the throwaway PostgreSQL exited during start (exit status: 1): FATAL:  data directory \
             \"/dev/shm/lab-pg-1/data\" has invalid permissions"
        ));
        assert!(!port_taken(
            "FATAL:  could not map anonymous shared memory: Cannot allocate memory"
        ));
    }
}
