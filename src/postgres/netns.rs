//! Namespaces of lab's own for a group of processes (its HA cluster:
//! etcd, Patroni, PostgreSQL), made with util-linux's `unshare` and entered
//! with `nsenter`:
//!
//! - a PID namespace: when its first process dies, the kernel kills every
//!   process in it. That process dies with `unshare` (`--kill-child`),
//!   which dies with lab (PR_SET_PDEATHSIG), so a SIGKILL of lab leaves
//!   nothing running, not even a postmaster Patroni left to `init` (it
//!   starts PostgreSQL through a process that exits: in the namespace its
//!   orphans go to the namespace's first process, which reaps them);
//! - a network namespace: a loopback of its own, so the cluster's ports are
//!   fixed and never taken, and nftables rules there (a partition) act on
//!   the cluster only and vanish with it;
//! - a mount namespace with its own /proc, so that Patroni's view of
//!   process ids matches the pids PostgreSQL writes.
//!
//! lab itself stays outside: it reaches the namespace's loopback through
//! sockets made there by a thread of its own ([`Namespace::dial`]).
use std::ffi::OsStr;
use std::fs;
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, mpsc};
use std::time::{Duration, Instant};

use anyhow::{Result, bail};

use crate::i18n::Context;

/// The namespace's first process: reaps every orphan the namespace gets
/// (a postmaster whose starter exited) and otherwise waits.
const INIT: &str = r"import os, time
while True:
    try:
        os.waitpid(-1, 0)
    except ChildProcessError:
        time.sleep(0.02)
    except InterruptedError:
        pass
";

type SocketReply = tokio::sync::oneshot::Sender<std::io::Result<OwnedFd>>;

/// The running namespaces. Dropping them kills every process in them.
pub struct Namespace {
    /// Host pid of the namespace's first process.
    init: i32,
    /// What `/proc/<pid>/ns/pid` reads for a process of the namespace.
    pid_ns: String,
    /// Asks the thread that lives in the network namespace for a socket.
    sockets: Mutex<Option<Dialer>>,
    /// Stops the thread that started `unshare` (its parent-death signal
    /// is tied to that thread): it then kills `unshare`.
    keeper: Option<(mpsc::Sender<()>, std::thread::JoinHandle<()>)>,
    /// The `nsenter` processes lab started (each the parent of one process in the namespace).
    entered: Mutex<Vec<Child>>,
    nsenter: PathBuf,
}

/// A process lab started in the namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NsProcess {
    /// Its pid as lab (outside) sees it.
    pub pid: i32,
}

impl NsProcess {
    pub fn signal(&self, sig: libc::c_int) {
        unsafe { libc::kill(self.pid, sig) };
    }

    pub fn alive(&self) -> bool {
        alive(self.pid)
    }
}

/// The programs the namespaces need, or what is missing.
pub struct Programs {
    pub unshare: PathBuf,
    pub nsenter: PathBuf,
    pub python: PathBuf,
}

impl Programs {
    /// The programs on PATH (and where util-linux installs them); the first
    /// missing one's name.
    pub fn find() -> std::result::Result<Programs, &'static str> {
        let find = |name: &'static str| on_path(name).ok_or(name);
        Ok(Programs {
            unshare: find("unshare")?,
            nsenter: find("nsenter")?,
            python: find("python3")?,
        })
    }
}

impl Namespace {
    /// Makes the namespaces (lab must be root) and brings their loopback up.
    pub fn start(programs: &Programs) -> Result<Namespace> {
        if unsafe { libc::geteuid() } != 0 {
            bail!(msg::needs_root());
        }
        let (stop, stopped) = mpsc::channel::<()>();
        let (ready, started) = mpsc::channel::<Result<i32>>();
        let unshare = programs.unshare.clone();
        let python = programs.python.clone();
        // The thread that starts `unshare` lives as long as the namespace:
        // the kernel sends the parent-death signal when that thread ends.
        let keeper = std::thread::spawn(move || {
            let mut cmd = Command::new(&unshare);
            cmd.args(["--pid", "--fork", "--kill-child", "--mount-proc", "--net"])
                .arg("--")
                .arg(&python)
                .args(["-c", INIT])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .process_group(0);
            let parent = std::process::id() as libc::pid_t;
            // SAFETY: only async-signal-safe calls between fork and exec.
            unsafe {
                cmd.pre_exec(move || {
                    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                    if libc::getppid() != parent {
                        libc::_exit(1);
                    }
                    Ok(())
                });
            }
            let mut child = match cmd.spawn() {
                Ok(c) => c,
                Err(e) => {
                    let _ = ready.send(
                        Err::<(), _>(e)
                            .ctx(|| super::cluster::msg::could_not_start(unshare.display().to_string()))
                            .map(|_| 0),
                    );
                    return;
                }
            };
            let pid = child.id() as i32;
            let _ = ready.send(Ok(pid));
            // Until the namespace is dropped (or lab ends).
            let _ = stopped.recv();
            unsafe { libc::kill(pid, libc::SIGKILL) };
            let _ = child.wait();
        });
        let holder = started.recv().map_err(|_| msg::not_made(""))??;
        let mut ns = Namespace {
            init: 0,
            pid_ns: String::new(),
            sockets: Mutex::new(None),
            keeper: Some((stop, keeper)),
            entered: Mutex::default(),
            nsenter: programs.nsenter.clone(),
        };
        // The namespace's first process: unshare's child, once it runs the reaper.
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(init) = children_of(holder).first().copied() {
                let cmdline = fs::read(format!("/proc/{init}/cmdline")).unwrap_or_default();
                let ours = fs::read_link("/proc/self/ns/pid").ok();
                let theirs = fs::read_link(format!("/proc/{init}/ns/pid")).ok();
                if let Some(theirs) = theirs.filter(|t| Some(t) != ours.as_ref())
                    && String::from_utf8_lossy(&cmdline).contains("waitpid")
                {
                    ns.init = init;
                    ns.pid_ns = theirs.to_string_lossy().into_owned();
                    break;
                }
            }
            if !alive(holder) || Instant::now() > deadline {
                bail!(msg::not_made(programs.unshare.display().to_string()));
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        let net = fs::File::open(format!("/proc/{}/ns/net", ns.init))
            .ctx(|| msg::not_made(programs.unshare.display().to_string()))?;
        *ns.sockets.lock().unwrap() = Some(Dialer(socket_maker(net)?));
        Ok(ns)
    }

    /// Host pid of the namespace's first process (`nsenter -t`).
    pub fn init_pid(&self) -> i32 {
        self.init
    }

    /// Starts `program` in the namespaces as `uid`:`gid` (no supplementary
    /// groups), in `dir`, its output appended to `log`, with `env` only
    /// (and PATH). Ready at once: the caller waits for what it serves.
    pub fn spawn(
        &self,
        program: &Path,
        args: &[&OsStr],
        ids: (u32, u32),
        dir: &Path,
        log: &Path,
        env: &[(&str, &str)],
    ) -> Result<NsProcess> {
        let out = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .ctx(|| super::cluster::msg::create(log.display().to_string()))?;
        let mut cmd = Command::new(&self.nsenter);
        cmd.arg("-t")
            .arg(self.init.to_string())
            .args(["-p", "-n", "-m"])
            .arg("-S")
            .arg(ids.0.to_string())
            .arg("-G")
            .arg(ids.1.to_string())
            .arg(format!("--wd={}", dir.display()))
            .arg("--")
            .arg(program)
            .args(args)
            .env_clear()
            .env(
                "PATH",
                std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into()),
            )
            .env("LC_ALL", "C.UTF-8")
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(out.try_clone()?)
            .stderr(out)
            .process_group(0);
        let child = cmd
            .spawn()
            .ctx(|| super::cluster::msg::could_not_start(program.display().to_string()))?;
        let parent = child.id() as i32;
        self.entered.lock().unwrap().push(child);
        // The process itself: nsenter's child, in the namespace.
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(pid) = children_of(parent).first().copied() {
                return Ok(NsProcess { pid });
            }
            if !alive(parent) || Instant::now() > deadline {
                bail!(super::cluster::msg::could_not_start(program.display().to_string()));
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Runs `program` in the network namespace only, as root, `input` on
    /// its stdin, to its end (`nft`); its stderr's last line on failure.
    pub fn run_net(&self, program: &Path, args: &[&str], input: &str) -> Result<()> {
        let mut child = Command::new(&self.nsenter)
            .arg("-t")
            .arg(self.init.to_string())
            .args(["-n", "--"])
            .arg(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .ctx(|| super::cluster::msg::could_not_run(program.display().to_string()))?;
        if let Some(mut i) = child.stdin.take() {
            let _ = i.write_all(input.as_bytes());
        }
        let out = child.wait_with_output()?;
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            bail!(msg::failed(
                program.display().to_string(),
                err.trim().lines().last().unwrap_or("-").to_string()
            ));
        }
        Ok(())
    }

    /// The host pid of the namespace's process `ns_pid` (as PostgreSQL
    /// writes it in postmaster.pid and shows it in pg_stat_activity).
    pub fn host_pid(&self, ns_pid: i32) -> Option<i32> {
        for e in fs::read_dir("/proc").ok()?.flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
                continue;
            };
            let Ok(status) = fs::read_to_string(format!("/proc/{pid}/status")) else {
                continue;
            };
            if inner_pid(&status) == Some(ns_pid) && self.holds(pid) {
                return Some(pid);
            }
        }
        None
    }

    /// Whether host pid `pid` is a process of the namespace.
    pub fn holds(&self, pid: i32) -> bool {
        fs::read_link(format!("/proc/{pid}/ns/pid")).is_ok_and(|l| l.to_string_lossy() == self.pid_ns)
    }

    /// The processes running in the namespace besides its first (host pids).
    pub fn pids(&self) -> Vec<i32> {
        fs::read_dir("/proc")
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
            .filter(|&p| p != self.init && self.holds(p) && alive(p))
            .collect()
    }

    /// How many processes run in the namespace besides its first.
    pub fn processes(&self) -> usize {
        self.pids().len()
    }

    /// What makes lab's connections into the namespace (a forward keeps one).
    pub fn dialer(&self) -> Dialer {
        self.sockets
            .lock()
            .unwrap()
            .clone()
            .unwrap_or_else(|| Dialer(mpsc::channel().0))
    }

    /// A TCP connection to `port` on the namespace's loopback, from lab.
    pub async fn dial(&self, port: u16, within: Duration) -> std::io::Result<tokio::net::TcpStream> {
        self.dialer().dial(port, within).await
    }
}

/// Makes lab's TCP connections to the namespace's loopback.
#[derive(Clone)]
pub struct Dialer(mpsc::Sender<SocketReply>);

impl Dialer {
    /// A TCP connection to `port` on the namespace's loopback, within `within`.
    pub async fn dial(&self, port: u16, within: Duration) -> std::io::Result<tokio::net::TcpStream> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let gone = || std::io::Error::other(msg::gone().to_string());
        self.0.send(tx).map_err(|_| gone())?;
        let fd = rx.await.map_err(|_| gone())??;
        // SAFETY: a fresh non-blocking TCP socket this process owns.
        let socket = unsafe { tokio::net::TcpSocket::from_raw_fd(std::os::fd::IntoRawFd::into_raw_fd(fd)) };
        let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
        let stream = tokio::time::timeout(within, socket.connect(addr))
            .await
            .map_err(|_| std::io::Error::new(std::io::ErrorKind::TimedOut, msg::dial_late(port).to_string()))??;
        stream.set_nodelay(true)?;
        Ok(stream)
    }
}

impl Drop for Namespace {
    fn drop(&mut self) {
        self.sockets.lock().unwrap().take();
        if let Some((stop, keeper)) = self.keeper.take() {
            let _ = stop.send(());
            let _ = keeper.join();
        }
        // The kernel kills the namespace's processes once its first one
        // is gone; each nsenter ends with its child.
        let deadline = Instant::now() + Duration::from_secs(10);
        for mut c in self.entered.lock().unwrap().drain(..) {
            loop {
                match c.try_wait() {
                    Ok(Some(_)) | Err(_) => break,
                    Ok(None) if Instant::now() > deadline => {
                        let _ = c.kill();
                        let _ = c.wait();
                        break;
                    }
                    Ok(None) => std::thread::sleep(Duration::from_millis(2)),
                }
            }
        }
        while self.init != 0 && self.processes() > 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(2));
        }
    }
}

/// The thread that makes sockets in the network namespace `net` (a socket
/// belongs to the namespace it was made in, whichever thread uses it), and
/// brings its loopback up first.
fn socket_maker(net: fs::File) -> Result<mpsc::Sender<SocketReply>> {
    let (tx, rx) = mpsc::channel::<SocketReply>();
    let (ready, up) = mpsc::channel::<std::io::Result<()>>();
    std::thread::spawn(move || {
        // SAFETY: setns on this thread only, with a namespace file lab opened.
        if unsafe { libc::setns(net.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
            let _ = ready.send(Err(std::io::Error::last_os_error()));
            return;
        }
        let _ = ready.send(loopback_up());
        while let Ok(reply) = rx.recv() {
            // SAFETY: socket(2) with constant arguments; the fd is owned at once.
            let fd = unsafe {
                libc::socket(
                    libc::AF_INET,
                    libc::SOCK_STREAM | libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK,
                    0,
                )
            };
            let made = if fd < 0 {
                Err(std::io::Error::last_os_error())
            } else {
                Ok(unsafe { OwnedFd::from_raw_fd(fd) })
            };
            let _ = reply.send(made);
        }
    });
    up.recv()
        .map_err(|_| msg::not_made(""))?
        .ctx(|| msg::not_made("setns"))?;
    Ok(tx)
}

/// `ip link set lo up`, on the calling thread's network namespace.
fn loopback_up() -> std::io::Result<()> {
    // SAFETY: ioctl on a datagram socket with a zeroed ifreq naming "lo".
    unsafe {
        let s = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
        if s < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let s = OwnedFd::from_raw_fd(s);
        let mut req: libc::ifreq = std::mem::zeroed();
        for (i, b) in b"lo".iter().enumerate() {
            req.ifr_name[i] = *b as libc::c_char;
        }
        if libc::ioctl(s.as_raw_fd(), libc::SIOCGIFFLAGS, &mut req) < 0 {
            return Err(std::io::Error::last_os_error());
        }
        req.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short;
        if libc::ioctl(s.as_raw_fd(), libc::SIOCSIFFLAGS, &req) < 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// `name` on PATH, else in /usr/sbin, /usr/bin, /sbin or /bin.
pub fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/usr/bin", "/sbin", "/bin"].map(PathBuf::from))
        .map(|d| d.join(name))
        .find(|p| {
            fs::metadata(p)
                .is_ok_and(|m| m.is_file() && std::os::unix::fs::PermissionsExt::mode(&m.permissions()) & 0o111 != 0)
        })
}

/// The children of process `pid` (each of its threads' children).
pub fn children_of(pid: i32) -> Vec<i32> {
    let mut out = Vec::new();
    for t in fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten()
        .flatten()
    {
        let text = fs::read_to_string(t.path().join("children")).unwrap_or_default();
        out.extend(text.split_whitespace().filter_map(|p| p.parse::<i32>().ok()));
    }
    out
}

/// Whether `pid` runs (a zombie counts as gone).
pub fn alive(pid: i32) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

/// The pid in the innermost PID namespace, from /proc/PID/status's `NSpid:` line.
fn inner_pid(status: &str) -> Option<i32> {
    let line = status.lines().find(|l| l.starts_with("NSpid:"))?;
    let fields: Vec<&str> = line.split_whitespace().skip(1).collect();
    if fields.len() < 2 {
        // Not in a namespace below lab's.
        return None;
    }
    fields.last()?.parse().ok()
}

pub mod msg {
    crate::messages! {
        prefix "ns";
        needs_root() {
            en: "lab's HA cluster runs in namespaces of its own (PID, network), which only root can make: run lab as root",
            tr: "lab'ın HA cluster'ı kendi ad alanlarında (PID, ağ) çalışır ve bunları yalnızca root oluşturabilir: lab'ı root olarak çalıştırın",
        }
        not_made(program) {
            en: "could not make the namespaces for lab's HA cluster ({program})",
            tr: "lab'ın HA cluster'ı için ad alanları oluşturulamadı ({program})",
        }
        failed(program, error) {
            en: "{program} failed in lab's HA cluster's namespace: {error}",
            tr: "{program}, lab'ın HA cluster'ının ad alanında başarısız oldu: {error}",
        }
        gone() {
            en: "lab's HA cluster's namespace is gone",
            tr: "lab'ın HA cluster'ının ad alanı artık yok",
        }
        dial_late(port) {
            en: "no connection to port {port} in lab's HA cluster's namespace within the deadline",
            tr: "süre içinde lab'ın HA cluster'ının ad alanındaki {port} portuna bağlanılamadı",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::inner_pid;

    #[test]
    fn the_innermost_pid_is_read_from_nspid() {
        let status = "Name:\tpostgres\nPid:\t12345\nNSpid:\t12345\t57\nNStgid:\t12345\t57\n";
        assert_eq!(inner_pid(status), Some(57));
        // A process of lab's own namespace (one level) is none of the cluster's.
        assert_eq!(inner_pid("NSpid:\t4242\n"), None);
        // lab itself in a container: three levels, the last is the innermost.
        assert_eq!(inner_pid("NSpid:\t900\t12\t3\n"), Some(3));
        assert_eq!(inner_pid("Name:\tx\n"), None);
    }
}
