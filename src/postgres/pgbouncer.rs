//! lab's own PgBouncer: found on the machine (`LAB_PGBOUNCER_BIN`, PATH, or
//! where the Debian package puts it), configured in a temp dir of its own,
//! started on a free loopback port in front of a server, and stopped like
//! the throwaway cluster (also when lab is killed: PR_SET_PDEATHSIG).
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{Result, bail};
use tokio_postgres::config::Host;

use super::cluster::{Owner, free_port, log_tail, make_run_dir};
use super::sidecar::{self, Found, NotReady, Sidecar};

/// One pool: its name (the database clients ask for), mode and size.
#[derive(Debug, Clone)]
pub struct Pool {
    pub name: String,
    pub mode: &'static str,
    pub size: u32,
    /// The server's database it connects to, when not the server config's.
    pub dbname: Option<String>,
}

impl Pool {
    pub fn new(name: &str, mode: &'static str, size: u32) -> Pool {
        Pool {
            name: name.to_string(),
            mode,
            size,
            dbname: None,
        }
    }

    /// The same pool, connecting to the database `dbname`.
    pub fn in_database(self, dbname: &str) -> Pool {
        Pool {
            dbname: Some(dbname.to_string()),
            ..self
        }
    }
}

/// The pool name that stands for every database a client asks for.
pub const ANY_DATABASE: &str = "*";

pub struct PgBouncer {
    dir: PathBuf,
    child: Option<Sidecar>,
    pub port: u16,
    pub version: String,
    user: String,
    /// The CA of PgBouncer's own certificate, where it speaks TLS (in front
    /// of a server that does): clients check it with verify-full.
    client_ca: Option<PathBuf>,
}

/// The pgbouncer program: `LAB_PGBOUNCER_BIN`, then PATH, then where the
/// Debian package installs it.
pub fn find_bin() -> Result<PathBuf> {
    match sidecar::find(
        "LAB_PGBOUNCER_BIN",
        "pgbouncer",
        &["/usr/sbin/pgbouncer", "/usr/bin/pgbouncer"],
    ) {
        Found::At(p) => Ok(p),
        Found::NotAProgram(p) => bail!(msg::not_a_program(p.display().to_string(), msg::install())),
        Found::Missing => bail!(msg::not_found(msg::install())),
    }
}

/// A value in pgbouncer.ini's connection strings (single-quoted when needed).
fn quoted(v: &str) -> String {
    if !v.is_empty() && v.chars().all(|c| c.is_ascii_alphanumeric() || "._-/".contains(c)) {
        v.to_string()
    } else {
        format!("'{}'", v.replace('\\', "\\\\").replace('\'', "\\'"))
    }
}

impl PgBouncer {
    /// Starts PgBouncer in front of `server` with these pools, and waits
    /// until it accepts connections. Clients log in as the server's user
    /// without a password (trust, on loopback); PgBouncer uses the server's
    /// password, which is written only into its own 0700 directory.
    pub fn start(server: &crate::postgres::ConnInfo, pools: &[Pool]) -> Result<PgBouncer> {
        PgBouncer::start_with(server, pools, "")
    }

    /// ... with `extra` lines in its [pgbouncer] section (tests: server_round_robin...).
    pub fn start_with(server: &crate::postgres::ConnInfo, pools: &[Pool], extra: &str) -> Result<PgBouncer> {
        if let Some(why) = unheld(server) {
            bail!(why);
        }
        let bin = find_bin()?;
        let version = sidecar::version(&bin, "pgbouncer")?;
        let owner = Owner::for_server()?;
        let dir = make_run_dir()?;
        let user = server.get_user().unwrap_or("postgres").to_string();
        let mut pgb = PgBouncer {
            dir,
            child: None,
            port: 0,
            version,
            user: user.clone(),
            client_ca: None,
        };
        let host = match server.get_hosts().first() {
            Some(Host::Tcp(h)) => h.clone(),
            Some(Host::Unix(p)) => p.display().to_string(),
            None => "127.0.0.1".to_string(),
        };
        let port = server.get_ports().first().copied().unwrap_or(5432);
        let dbname = server.get_dbname().unwrap_or(&user).to_string();
        let password = server
            .get_password()
            .map(|p| format!(" password={}", quoted(&String::from_utf8_lossy(p))))
            .unwrap_or_default();
        let mut databases = String::new();
        for p in pools {
            // `*`: a pool for whichever database a client names (PgBouncer's
            // fallback), so no dbname of its own.
            let db = if p.name == ANY_DATABASE {
                String::new()
            } else {
                format!(" dbname={}", quoted(p.dbname.as_ref().unwrap_or(&dbname)))
            };
            databases.push_str(&format!(
                "{} = host={} port={port}{db} user={}{password} pool_mode={} pool_size={}\n",
                p.name,
                quoted(&host),
                quoted(&user),
                p.mode,
                p.size
            ));
        }
        // The server's TLS as the user asked for it: PgBouncer's server side
        // speaks it with the same mode and root file (copied where PgBouncer,
        // running as the server's owner, can read it).
        let mut server_tls = format!("server_tls_sslmode = {}\n", server.tls.mode.name());
        if let Some(root) = &server.tls.root_file {
            let copy = pgb.dir.join("server-root.crt");
            fs::copy(root, &copy)?;
            owner.chown(&copy)?;
            server_tls.push_str(&format!("server_tls_ca_file = {}\n", copy.display()));
        }
        // And where the server speaks TLS, so does PgBouncer to lab's
        // clients, with a certificate of its own: nothing lab sends to that
        // server crosses a socket in the clear.
        if server.tls.mode != crate::postgres::tls::SslMode::Disable {
            let ca = sidecar::own_certs(&pgb.dir, &owner)?;
            server_tls.push_str(&format!(
                "client_tls_sslmode = require\nclient_tls_cert_file = {}\nclient_tls_key_file = {}\n",
                pgb.dir.join("server.crt").display(),
                pgb.dir.join("server.key").display()
            ));
            pgb.client_ca = Some(ca);
        }
        let users = pgb.dir.join("users.txt");
        fs::write(&users, format!("\"{}\" \"\"\n", user.replace('"', "\"\"")))?;
        let log = pgb.dir.join("pgbouncer.log");
        let ini = pgb.dir.join("pgbouncer.ini");
        let mut last_err = None;
        for _ in 0..5 {
            pgb.port = free_port()?;
            fs::write(
                &ini,
                format!(
                    "; written by lab for its own PgBouncer\n\
                     [databases]\n{databases}\
                     [pgbouncer]\n\
                     listen_addr = 127.0.0.1\n\
                     listen_port = {}\n\
                     unix_socket_dir =\n\
                     auth_type = trust\n\
                     auth_file = {}\n\
                     admin_users = {}\n\
                     ignore_startup_parameters = extra_float_digits,options\n\
                     max_client_conn = 200\n\
                     logfile = {}\n\
                     {server_tls}\
                     {extra}\n",
                    pgb.port,
                    users.display(),
                    quoted(&user),
                    log.display()
                ),
            )?;
            for f in [&pgb.dir, &users, &ini] {
                owner.chown(f)?;
            }
            match pgb.spawn_and_wait(&bin, &owner, &ini, &log) {
                Ok(()) => return Ok(pgb),
                Err(e) => last_err = Some(e),
            }
        }
        Err(last_err.expect("tried"))
    }

    fn spawn_and_wait(&mut self, bin: &Path, owner: &Owner, ini: &Path, log: &Path) -> Result<()> {
        let mut cmd = Command::new(bin);
        cmd.arg(ini);
        // SIGTERM: PgBouncer's immediate shutdown.
        match Sidecar::start(cmd, owner, None, self.port, libc::SIGTERM)? {
            Ok(s) => {
                self.child = Some(s);
                Ok(())
            }
            Err(NotReady::Exited(status)) => bail!(msg::exited(status, log_tail(log))),
            Err(NotReady::Late) => bail!(msg::not_ready(log_tail(log))),
        }
    }

    /// Where a client connects for `pool` (the server's user, no password;
    /// over TLS checked with verify-full where PgBouncer speaks it).
    pub fn config(&self, pool: &str) -> crate::postgres::ConnInfo {
        let mut c = sidecar::client_config(self.client_ca.as_deref());
        c.host("127.0.0.1")
            .port(self.port)
            .user(&self.user)
            .dbname(pool)
            .connect_timeout(Duration::from_secs(5));
        c
    }

    /// The admin console (`SHOW POOLS`...).
    pub fn admin(&self) -> crate::postgres::ConnInfo {
        self.config("pgbouncer")
    }

    /// What PgBouncer has logged so far.
    pub fn log(&self) -> String {
        fs::read_to_string(self.dir.join("pgbouncer.log")).unwrap_or_default()
    }
}

impl Drop for PgBouncer {
    fn drop(&mut self) {
        // Stopped before its directory goes: its server connections close with it.
        drop(self.child.take());
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// lab's PgBouncer in front of a run's server (`--pooler`), with a
/// connection to its admin console. Its pools are in transaction mode, one
/// per schema the run uses (scenarios side by side each get theirs, so a
/// scenario's server connections only ever serve that scenario's sessions).
pub struct Front {
    pub bouncer: PgBouncer,
    pub admin: tokio_postgres::Client,
    pub size: u32,
    /// Its one pool is [`ANY_DATABASE`]: a pool per database clients name.
    pub any_database: bool,
}

impl Front {
    /// One of its pools: transaction mode, `size` server connections.
    pub fn pool(name: &str, size: u32) -> Pool {
        Pool::new(name, "transaction", size)
    }

    /// Starts it with these pools, made by [`Front::pool`] (on this thread:
    /// see [`PgBouncer`]'s parent-death signal).
    pub async fn start(server: &crate::postgres::ConnInfo, pools: Vec<Pool>) -> Result<Front> {
        let size = pools.iter().map(|p| p.size).max().unwrap_or(1);
        let bouncer = tokio::task::block_in_place(|| PgBouncer::start(server, &pools))?;
        let silence = super::watchdog::control_silence(std::time::Duration::ZERO);
        let admin = super::connect::connect_control(&bouncer.admin(), "lab-admin", None, silence)
            .await?
            .client;
        let any_database = pools.iter().any(|p| p.name == ANY_DATABASE);
        Ok(Front {
            bouncer,
            admin,
            size,
            any_database,
        })
    }

    /// Transactions PgBouncer has pooled in `pool` so far (SHOW STATS' total_xact_count).
    pub async fn transactions(&self, pool: &str) -> Result<i64> {
        let rows = show(&self.admin, "SHOW STATS", pool).await?;
        Ok(rows.first().map_or(0, |r| value(r, "total_xact_count")))
    }

    /// Whether `pool` is full: a client queued for a server connection
    /// (SHOW POOLS' cl_waiting) while every server connection the pool may
    /// have serves a client (sv_active). A client also waits a moment while
    /// the pool opens a new server connection: that is not a full pool.
    pub async fn full(&self, pool: &str) -> Result<bool> {
        let rows = show(&self.admin, "SHOW POOLS", pool).await?;
        Ok(rows
            .first()
            .is_some_and(|r| value(r, "cl_waiting") > 0 && value(r, "sv_active") >= i64::from(self.size)))
    }

    /// `PgBouncer 1.18.0, transaction mode, pool of 97`, for reports.
    pub fn describe(&self) -> String {
        format!("{}, transaction mode, pool of {}", self.bouncer.version, self.size)
    }
}

/// An admin console command (`SHOW POOLS`, `SHOW SERVERS`...): the rows of
/// `pool`, as (column, value) pairs.
pub async fn show(admin: &tokio_postgres::Client, command: &str, pool: &str) -> Result<Vec<Vec<(String, String)>>> {
    let messages = admin
        .simple_query(command)
        .await
        .map_err(|e| super::connect::sql_error(e, msg::admin(command)))?;
    let mut rows = Vec::new();
    for m in messages {
        if let tokio_postgres::SimpleQueryMessage::Row(r) = m {
            let row: Vec<(String, String)> = r
                .columns()
                .iter()
                .enumerate()
                .map(|(i, c)| (c.name().to_string(), r.get(i).unwrap_or("").to_string()))
                .collect();
            if row.iter().any(|(c, v)| c == "database" && v == pool) {
                rows.push(row);
            }
        }
    }
    Ok(rows)
}

/// The server backends PgBouncer holds for `pool` (SHOW SERVERS' remote_pid).
pub async fn server_pids(admin: &tokio_postgres::Client, pool: &str) -> Result<Vec<i32>> {
    Ok(show(admin, "SHOW SERVERS", pool)
        .await?
        .iter()
        .map(|r| value(r, "remote_pid") as i32)
        .filter(|pid| *pid != 0)
        .collect())
}

/// A number in an admin console row (0 when the column is missing or not a number).
pub fn value(row: &[(String, String)], col: &str) -> i64 {
    row.iter()
        .find(|(c, _)| c == col)
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0)
}

/// Why lab's PgBouncer cannot stand in front of `server` as the user asked:
/// it logs in to the server itself and cannot be held to require_auth
/// (PgBouncer has no such setting); none where nothing stands in the way.
pub fn unheld(server: &crate::postgres::ConnInfo) -> Option<crate::i18n::Text> {
    let r = server.require_auth.as_ref()?;
    Some(msg::require_auth(r.value.clone(), r.origin.clone()))
}

pub mod msg {
    crate::messages! {
        prefix "pb";
        require_auth(value, origin) {
            en: "require_auth={value} ({origin}): lab's PgBouncer logs in to the server itself and cannot be held to it; drop --pooler or require_auth",
            tr: "require_auth={value} ({origin}): lab'ın PgBouncer'ı sunucuya kendisi bağlanır ve buna tabi tutulamaz; --pooler'ı ya da require_auth'u bırakın",
        }
        install() {
            en: "install it (Debian/Ubuntu: apt-get install pgbouncer; macOS: brew install pgbouncer) or set LAB_PGBOUNCER_BIN to the program",
            tr: "kurun (Debian/Ubuntu: apt-get install pgbouncer; macOS: brew install pgbouncer) ya da LAB_PGBOUNCER_BIN'i programa ayarlayın",
        }
        not_found(install) {
            en: "pgbouncer was not found on this machine: {install}",
            tr: "bu makinede pgbouncer bulunamadı: {install}",
        }
        not_a_program(path, install) {
            en: "LAB_PGBOUNCER_BIN={path} is not a program: {install}",
            tr: "LAB_PGBOUNCER_BIN={path} bir program değil: {install}",
        }
        exited(status, log) {
            en: "lab's PgBouncer exited during start ({status}): {log}",
            tr: "lab'ın PgBouncer'ı başlarken çıktı ({status}): {log}",
        }
        admin(command) {
            en: "PgBouncer's admin console: {command}",
            tr: "PgBouncer yönetim konsolu: {command}",
        }
        not_ready(log) {
            en: "lab's PgBouncer did not accept connections within 10 s: {log}",
            tr: "lab'ın PgBouncer'ı 10 sn içinde bağlantı kabul etmedi: {log}",
        }
    }
}
