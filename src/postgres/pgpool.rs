//! lab's own pgpool-II in front of a primary and its streaming standby:
//! found on the machine (`LAB_PGPOOL_BIN`, PATH, or where the Debian package
//! puts it), configured in a 0700 temp dir of its own from lab/pgpool.conf
//! (load balancing) and the lines lab adds (where it listens, its two
//! backends, the settings a variant asks for), started on a free loopback
//! port, and stopped with lab (SIGKILL included: PR_SET_PDEATHSIG).
use std::fs;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use anyhow::{Result, bail};
use tokio_postgres::config::Host;

use super::cluster::{Owner, free_port, log_tail, make_run_dir};
use super::sidecar::{self, Found, NotReady, Sidecar};

pub struct Pgpool {
    dir: PathBuf,
    child: Option<Sidecar>,
    pub port: u16,
    pub version: String,
    user: String,
    password: Option<Vec<u8>>,
    /// The CA of pgpool-II's own certificate, where it speaks TLS (in front
    /// of servers that do): clients check it with verify-full.
    client_ca: Option<PathBuf>,
}

/// The pgpool program: `LAB_PGPOOL_BIN`, then PATH, then where the Debian
/// package installs it.
pub fn find_bin() -> Result<PathBuf> {
    match sidecar::find("LAB_PGPOOL_BIN", "pgpool", &["/usr/sbin/pgpool", "/usr/bin/pgpool"]) {
        Found::At(p) => Ok(p),
        Found::NotAProgram(p) => bail!(msg::not_a_program(p.display().to_string(), msg::install())),
        Found::Missing => bail!(msg::not_found(msg::install())),
    }
}

/// Whether `LAB_PGPOOL_BIN` is set: then a missing program is a setup error, not a skip.
pub fn asked_for() -> bool {
    std::env::var_os("LAB_PGPOOL_BIN").is_some_and(|v| !v.is_empty())
}

/// A value in pgpool.conf: single-quoted, a quote doubled.
fn quoted(v: &str) -> String {
    format!("'{}'", v.replace('\'', "''"))
}

/// `host` and `port` of a server's connection settings, as pgpool's
/// backend lines want them (a socket directory is a host starting with /).
fn backend(c: &crate::postgres::ConnInfo) -> (String, u16) {
    let host = match c.get_hosts().first() {
        Some(Host::Tcp(h)) => h.clone(),
        Some(Host::Unix(p)) => p.display().to_string(),
        None => "127.0.0.1".to_string(),
    };
    (host, c.get_ports().first().copied().unwrap_or(5432))
}

impl Pgpool {
    /// Starts pgpool-II with `primary` as backend 0 and `standby` as
    /// backend 1, `settings` (lab/pgpool.conf's text) and then `extra`
    /// lines, and waits until it accepts connections. Clients log in as the
    /// primary's user; where the servers want a password, pgpool-II finds it
    /// in its own pool_passwd, written only into its 0700 directory.
    pub fn start(
        primary: &crate::postgres::ConnInfo,
        standby: &crate::postgres::ConnInfo,
        settings: &str,
        extra: &str,
    ) -> Result<Pgpool> {
        if let Some(why) = unheld(primary) {
            bail!(why);
        }
        let bin = find_bin()?;
        let version = sidecar::version(&bin, "pgpool-II")?;
        let owner = Owner::for_server()?;
        let dir = make_run_dir()?;
        let user = primary.get_user().unwrap_or("postgres").to_string();
        let mut pool = Pgpool {
            dir,
            child: None,
            port: 0,
            version,
            user: user.clone(),
            password: primary.get_password().map(<[u8]>::to_vec),
            client_ca: None,
        };
        let tls_lines = pool.tls(primary, &owner)?;
        let (h0, p0) = backend(primary);
        let (h1, p1) = backend(standby);
        let d = pool.dir.display().to_string();
        let passwd = pool.dir.join("pool_passwd");
        let passwd_line = match &pool.password {
            Some(pw) => {
                fs::write(&passwd, format!("{user}:TEXT{}\n", String::from_utf8_lossy(pw)))?;
                owner.chown(&passwd)?;
                format!("pool_passwd = {}\n", quoted(&passwd.display().to_string()))
            }
            None => "pool_passwd = ''\n".to_string(),
        };
        let (conf, pcp, hba, log) = (
            pool.dir.join("pgpool.conf"),
            pool.dir.join("pcp.conf"),
            pool.dir.join("pool_hba.conf"),
            pool.dir.join("pgpool.log"),
        );
        for f in [&pcp, &hba] {
            fs::write(f, "")?;
            owner.chown(f)?;
        }
        let mut last_err = None;
        for _ in 0..5 {
            pool.port = free_port()?;
            let pcp_port = free_port()?;
            fs::write(
                &conf,
                format!(
                    "# written by lab for its own pgpool-II\n\
                     {settings}\n\
                     # where lab's pgpool-II listens, and its two backends\n\
                     listen_addresses = '127.0.0.1'\n\
                     port = {}\n\
                     socket_dir = {}\n\
                     pcp_listen_addresses = ''\n\
                     pcp_port = {pcp_port}\n\
                     pcp_socket_dir = {}\n\
                     pid_file_name = {}\n\
                     logdir = {}\n\
                     log_destination = 'stderr'\n\
                     enable_pool_hba = off\n\
                     {passwd_line}\
                     {tls_lines}\
                     backend_hostname0 = {}\n\
                     backend_port0 = {p0}\n\
                     backend_flag0 = 'ALWAYS_PRIMARY|DISALLOW_TO_FAILOVER'\n\
                     backend_hostname1 = {}\n\
                     backend_port1 = {p1}\n\
                     backend_flag1 = 'DISALLOW_TO_FAILOVER'\n\
                     # no checks, no failover: lab pauses the standby's replay on purpose\n\
                     sr_check_period = 0\n\
                     health_check_period = 0\n\
                     failover_on_backend_error = off\n\
                     {extra}\n",
                    pool.port,
                    quoted(&d),
                    quoted(&d),
                    quoted(&pool.dir.join("pgpool.pid").display().to_string()),
                    quoted(&d),
                    quoted(&h0),
                    quoted(&h1),
                ),
            )?;
            for f in [&pool.dir, &conf] {
                owner.chown(f)?;
            }
            let mut cmd = Command::new(&bin);
            cmd.arg("-n")
                .arg("-f")
                .arg(&conf)
                .arg("-F")
                .arg(&pcp)
                .arg("-a")
                .arg(&hba);
            // SIGINT: pgpool-II's fast shutdown (its children and their server connections end).
            match Sidecar::start(cmd, &owner, Some(&log), pool.port, libc::SIGINT)? {
                Ok(s) => {
                    pool.child = Some(s);
                    return Ok(pool);
                }
                Err(NotReady::Exited(status)) => last_err = Some(msg::exited(status, log_tail(&log))),
                Err(NotReady::Late) => last_err = Some(msg::not_ready(log_tail(&log))),
            }
        }
        bail!(last_err.expect("tried"))
    }

    /// pgpool.conf's TLS lines, as the servers are reached. pgpool-II has
    /// one switch, `ssl`, for both sides: with it on, it asks the servers
    /// for TLS (checking their chain against `ssl_ca_cert` where the
    /// settings give a root file; a host name it never checks, so
    /// verify-full is the caller's to refuse where the servers are not
    /// lab's own) and offers TLS to clients, with a certificate and CA lab
    /// makes for it here; lab's clients then check it with verify-full.
    fn tls(&mut self, primary: &crate::postgres::ConnInfo, owner: &Owner) -> Result<String> {
        if primary.tls.mode == crate::postgres::tls::SslMode::Disable {
            return Ok("ssl = off\n".into());
        }
        self.client_ca = Some(sidecar::own_certs(&self.dir, owner)?);
        let path = |f: &str| quoted(&self.dir.join(f).display().to_string());
        let mut lines = format!(
            "ssl = on\nssl_cert = {}\nssl_key = {}\n",
            path("server.crt"),
            path("server.key")
        );
        if let Some(root) = &primary.tls.root_file {
            lines += &format!("ssl_ca_cert = {}\n", quoted(&root.display().to_string()));
        }
        Ok(lines)
    }

    /// Where a client connects, for `dbname`: the primary's user, and its
    /// password where it has one (pgpool-II then authenticates the client
    /// from its pool_passwd, as it does the servers); over TLS checked with
    /// verify-full where pgpool-II speaks it.
    pub fn config(&self, dbname: &str) -> crate::postgres::ConnInfo {
        let mut c = sidecar::client_config(self.client_ca.as_deref());
        c.host("127.0.0.1")
            .port(self.port)
            .user(&self.user)
            .dbname(dbname)
            .connect_timeout(Duration::from_secs(5));
        if let Some(pw) = &self.password {
            c.password(pw.clone());
        }
        c
    }
}

impl Drop for Pgpool {
    fn drop(&mut self) {
        // Stopped before its directory goes.
        drop(self.child.take());
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// Why lab's pgpool-II cannot stand in front of `server` as the user asked:
/// it logs in to the servers itself and cannot be held to require_auth;
/// none where nothing stands in the way.
pub fn unheld(server: &crate::postgres::ConnInfo) -> Option<crate::i18n::Text> {
    let r = server.require_auth.as_ref()?;
    Some(msg::require_auth(r.value.clone(), r.origin.clone()))
}

pub mod msg {
    crate::messages! {
        prefix "pp";
        require_auth(value, origin) {
            en: "require_auth={value} ({origin}): lab's pgpool-II logs in to the servers itself and cannot be held to it",
            tr: "require_auth={value} ({origin}): lab'ın pgpool-II'si sunuculara kendisi bağlanır ve buna tabi tutulamaz",
        }
        install() {
            en: "install it (Debian/Ubuntu: apt-get install pgpool2; macOS: brew install pgpool-ii) or set LAB_PGPOOL_BIN to the program",
            tr: "kurun (Debian/Ubuntu: apt-get install pgpool2; macOS: brew install pgpool-ii) ya da LAB_PGPOOL_BIN'i programa ayarlayın",
        }
        not_found(install) {
            en: "pgpool-II was not found on this machine: {install}",
            tr: "bu makinede pgpool-II bulunamadı: {install}",
        }
        not_a_program(path, install) {
            en: "LAB_PGPOOL_BIN={path} is not a program: {install}",
            tr: "LAB_PGPOOL_BIN={path} bir program değil: {install}",
        }
        exited(status, log) {
            en: "lab's pgpool-II exited during start ({status}): {log}",
            tr: "lab'ın pgpool-II'si başlarken çıktı ({status}): {log}",
        }
        not_ready(log) {
            en: "lab's pgpool-II did not accept connections within 10 s: {log}",
            tr: "lab'ın pgpool-II'si 10 sn içinde bağlantı kabul etmedi: {log}",
        }
    }
}
