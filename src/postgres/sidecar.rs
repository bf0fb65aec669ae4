//! A program lab runs beside its servers (PgBouncer, pgpool-II): found on the
//! machine, run as the servers' system user from a 0700 directory of its
//! own, on a free loopback port, ready once that port accepts a connection,
//! and ended with lab (PR_SET_PDEATHSIG, so also when lab is SIGKILLed).
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::Result;

use super::cluster::{Owner, stop_child};
use crate::i18n::Context;

/// Where the program is: the path in `env` (which must be a program), else
/// the first of `names` on PATH, else the first of `fallbacks` (where a
/// package installs it).
pub enum Found {
    At(PathBuf),
    /// `env` names something that is not a program.
    NotAProgram(PathBuf),
    Missing,
}

pub fn find(env: &str, name: &str, fallbacks: &[&str]) -> Found {
    if let Some(p) = std::env::var_os(env).filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        return if is_exe(&p) {
            Found::At(p)
        } else {
            Found::NotAProgram(p)
        };
    }
    let on_path = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).map(|d| d.join(name)).collect::<Vec<_>>())
        .unwrap_or_default();
    on_path
        .into_iter()
        .chain(fallbacks.iter().map(PathBuf::from))
        .find(|p| is_exe(p))
        .map_or(Found::Missing, Found::At)
}

fn is_exe(p: &Path) -> bool {
    fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The line of `bin --version` that starts with `prefix` (case aside).
pub fn version(bin: &Path, prefix: &str) -> Result<String> {
    let out = Command::new(bin)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .ctx(|| super::cluster::msg::could_not_run(bin.display().to_string()))?;
    // pgpool-II says it on stderr, PgBouncer on stdout.
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(text
        .lines()
        .find(|l| l.to_ascii_lowercase().starts_with(&prefix.to_ascii_lowercase()))
        .map_or_else(|| format!("{prefix} ?"), |l| l.trim().to_string()))
}

/// Why the program is not serving.
pub enum NotReady {
    /// It exited (its status).
    Exited(String),
    /// Its port did not accept a connection within 10 s.
    Late,
}

/// The running program.
/// A CA and a certificate of a sidecar's own, for the TLS it offers lab's
/// clients, written into its directory (`root.crt`, `server.crt`,
/// `server.key`) and owned by whoever runs it; the CA's path, which lab's
/// clients check it with (see [`client_config`]).
pub(crate) fn own_certs(dir: &Path, owner: &Owner) -> Result<PathBuf> {
    crate::postgres::tls::RunCerts::make()?.write(dir)?;
    for f in ["root.crt", "server.crt", "server.key"] {
        owner.chown(&dir.join(f))?;
    }
    Ok(dir.join("root.crt"))
}

/// How lab's clients reach a sidecar: over TLS checked with verify-full
/// against its own CA where it has one, else in plaintext (on loopback,
/// in front of a server that speaks none).
pub fn client_config(ca: Option<&Path>) -> crate::postgres::ConnInfo {
    match ca {
        Some(ca) => crate::postgres::ConnInfo::with_tls(
            crate::postgres::tls::Settings::verify_full(ca).expect("lab's own CA reads back"),
        ),
        None => crate::postgres::ConnInfo::plain(),
    }
}

pub struct Sidecar {
    child: Option<Child>,
    /// The signal that stops it at once (its server connections close with it).
    stop: libc::c_int,
}

impl Sidecar {
    /// Starts `cmd` as `owner`, its output into `log` (or nowhere), and
    /// waits until `port` accepts a connection. `stop` is sent when lab
    /// ends or dies and when the sidecar is dropped.
    pub(crate) fn start(
        mut cmd: Command,
        owner: &Owner,
        log: Option<&Path>,
        port: u16,
        stop: libc::c_int,
    ) -> Result<std::result::Result<Sidecar, NotReady>> {
        let out = match log {
            Some(l) => {
                let f = fs::File::create(l)?;
                owner.chown(l)?;
                Stdio::from(f)
            }
            None => Stdio::null(),
        };
        cmd.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(out)
            .process_group(0);
        owner.apply(&mut cmd);
        let parent = std::process::id() as libc::pid_t;
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            cmd.pre_exec(move || {
                // If lab dies, even by SIGKILL, the kernel stops the program.
                libc::prctl(libc::PR_SET_PDEATHSIG, stop);
                if libc::getppid() != parent {
                    libc::_exit(1);
                }
                Ok(())
            });
        }
        let program = cmd.get_program().to_string_lossy().into_owned();
        let child = cmd.spawn().ctx(|| super::cluster::msg::could_not_start(program))?;
        let mut s = Sidecar {
            child: Some(child),
            stop,
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut pause = Duration::from_millis(1);
        loop {
            if let Some(status) = s.child.as_mut().expect("spawned").try_wait()? {
                s.child = None;
                return Ok(Err(NotReady::Exited(status.to_string())));
            }
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return Ok(Ok(s));
            }
            if Instant::now() > deadline {
                s.end();
                return Ok(Err(NotReady::Late));
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(10));
        }
    }

    /// Stops it at once and waits for it (SIGKILL to its group after 10 s).
    pub fn end(&mut self) {
        if let Some(child) = self.child.take() {
            stop_child(child, self.stop);
        }
    }
}

impl Drop for Sidecar {
    fn drop(&mut self) {
        self.end();
    }
}
