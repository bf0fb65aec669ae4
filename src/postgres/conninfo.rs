//! Which server lab runs against: a URL or key=value string, else a libpq
//! service and the libpq variables as psql reads them, else the throwaway
//! cluster; with what libpq would fill in (the password file, a connect
//! timeout). Knows nothing of the command line: the caller passes what it was given.
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use anyhow::{Result, bail};

use super::libpq;
use crate::i18n::Lang;

/// Where the lab runs.
#[derive(Clone)]
pub enum RunOn {
    /// A server the user named (URL, key=value string, service or libpq
    /// variables), and where lab found it (for messages).
    Server(Box<tokio_postgres::Config>, String),
    /// The throwaway cluster, from these binaries or the ones found on the
    /// machine, with `conf` appended to its postgresql.conf (pg_regress's
    /// --temp-config).
    Throwaway { pg_bin: Option<PathBuf>, conf: String },
}

impl std::fmt::Debug for RunOn {
    // Never print a Config: it holds the password.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunOn::Server(_, origin) => write!(f, "Server(.., {origin})"),
            RunOn::Throwaway { pg_bin, .. } => write!(f, "Throwaway {{ pg_bin: {pg_bin:?} }}"),
        }
    }
}

/// Reads an environment variable; tests pass their own.
pub type EnvLookup<'a> = &'a dyn Fn(&str) -> Option<String>;

/// An environment variable, None when unset or empty; DATABASE_URL set but
/// empty is kept (Some("")): it is an error, not "no URL".
pub fn process_env(name: &str) -> Option<String> {
    std::env::var(name)
        .ok()
        .filter(|v| !v.is_empty() || name == "DATABASE_URL")
}

/// Server selection: --database-url (`given`) / DATABASE_URL, else a PGSERVICE
/// service and the libpq variables as psql reads them, else the throwaway
/// cluster. A URL that is set but empty (an unset CI secret) is an error, not
/// a quiet run on the throwaway cluster.
pub fn resolve(given: Option<&str>, pg_bin: Option<&Path>, env: EnvLookup<'_>, lang: Lang) -> Result<RunOn> {
    if let Some(mode) = env("PGSSLMODE").filter(|m| needs_tls(m)) {
        bail!(msg::no_tls(mode, "PGSSLMODE"));
    }
    let from_env = env("DATABASE_URL");
    if let Some(url) = given.or(from_env.as_deref()) {
        let origin = if given.is_some() && given != from_env.as_deref() {
            "--database-url"
        } else {
            "DATABASE_URL"
        };
        if url.trim().is_empty() {
            bail!(msg::empty_url(origin));
        }
        // A URL with another scheme would be read as key=value pairs ("unexpected EOF").
        if let Some((scheme, _)) = url.trim().split_once("://")
            && !matches!(scheme, "postgres" | "postgresql")
            && !scheme.contains([' ', '='])
        {
            bail!(msg::bad_scheme(scheme));
        }
        if let Some(mode) = tls_asked(url) {
            bail!(msg::no_tls(mode, "sslmode"));
        }
        let mut config = tokio_postgres::Config::from_str(url.trim())
            // The parser's message never repeats the string; we do not either.
            .map_err(|e| {
                // Its cause names the option or part at fault, never a value.
                let cause = std::error::Error::source(&e)
                    .map(|c| format!(": {c}"))
                    .unwrap_or_default();
                msg::bad_url(format!("{e}{cause}"))
            })?;
        if config.get_password().is_none()
            && let Some(pw) = env("PGPASSWORD")
        {
            config.password(pw);
        }
        return Ok(RunOn::Server(
            Box::new(finish_config(config, env, lang)),
            origin.to_string(),
        ));
    }
    let mut config = tokio_postgres::Config::new();
    let mut origin = Vec::new();
    if let Some(service) = env("PGSERVICE") {
        apply_service(&mut config, &service, env)?;
        origin.push(format!("PGSERVICE={service}"));
    }
    let libpq = ["PGHOST", "PGPORT", "PGUSER", "PGDATABASE"];
    let set: Vec<&str> = libpq.into_iter().filter(|v| env(v).is_some()).collect();
    if origin.is_empty() && set.is_empty() {
        return Ok(RunOn::Throwaway {
            pg_bin: pg_bin.map(Path::to_path_buf),
            conf: String::new(),
        });
    }
    // What the service file did not say comes from the variables, as in libpq.
    if config.get_hosts().is_empty()
        && let Some(host) = env("PGHOST")
    {
        for h in host.split(',') {
            config.host(h.trim());
        }
    }
    if config.get_ports().is_empty()
        && let Some(port) = env("PGPORT")
    {
        let port: u16 = port.trim().parse().map_err(|_| msg::bad_pgport(&port))?;
        config.port(port);
    }
    if config.get_user().is_none()
        && let Some(user) = env("PGUSER")
    {
        config.user(&user);
    }
    if config.get_dbname().is_none()
        && let Some(db) = env("PGDATABASE")
    {
        config.dbname(&db);
    }
    if config.get_password().is_none()
        && let Some(pw) = env("PGPASSWORD")
    {
        config.password(pw);
    }
    origin.extend(set.iter().map(|s| s.to_string()));
    Ok(RunOn::Server(
        Box::new(finish_config(config, env, lang)),
        origin.join(", "),
    ))
}

/// The settings of a connection service, from the first service file that defines it.
fn apply_service(config: &mut tokio_postgres::Config, service: &str, env: EnvLookup<'_>) -> Result<()> {
    let files = libpq::service_files(env);
    let section = files.iter().find_map(|f| {
        let text = std::fs::read_to_string(f).ok()?;
        libpq::service_section(&text, service).map(|s| (f, s))
    });
    let Some((file, settings)) = section else {
        bail!(msg::no_service(
            service,
            files
                .iter()
                .map(|f| f.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    };
    fn parsed<T: FromStr>(file: &std::path::Path, key: &str, value: &str) -> Result<T> {
        value
            .parse()
            .map_err(|_| msg::bad_service_value(file.display().to_string(), key, value).into())
    }
    for (key, value) in settings {
        match key.as_str() {
            "host" | "hostaddr" => {
                for h in value.split(',') {
                    config.host(h.trim());
                }
            }
            "port" => {
                config.port(parsed(file, &key, &value)?);
            }
            "user" => {
                config.user(&value);
            }
            "dbname" => {
                config.dbname(&value);
            }
            "password" => {
                config.password(value);
            }
            "options" => {
                config.options(&value);
            }
            "application_name" => {
                config.application_name(&value);
            }
            "connect_timeout" => {
                config.connect_timeout(Duration::from_secs(parsed::<u64>(file, &key, &value)?.max(2)));
            }
            // sslmode and the rest do not change where lab connects.
            _ => {}
        }
    }
    Ok(())
}

/// A database URL (or key=value string) as lab reads it everywhere.
pub fn parse_url(url: &str, env: EnvLookup<'_>, lang: Lang) -> Result<tokio_postgres::Config> {
    match resolve(Some(url), None, env, lang)? {
        RunOn::Server(c, _) => Ok(*c),
        RunOn::Throwaway { .. } => bail!(msg::no_url()),
    }
}

/// The sslmode a URL (`?sslmode=...`) or key=value string (`sslmode=...`)
/// asks for, where it asks for TLS, which lab does not speak.
fn tls_asked(url: &str) -> Option<String> {
    url.match_indices("sslmode=")
        .filter(|(at, _)| {
            at.checked_sub(1)
                .is_none_or(|b| matches!(url.as_bytes()[b], b'?' | b'&' | b' '))
        })
        .map(|(at, key)| {
            let rest = &url[at + key.len()..];
            rest[..rest.find(['&', ' ']).unwrap_or(rest.len())].to_string()
        })
        .find(|m| needs_tls(m))
}

/// libpq's sslmodes that will not go on without TLS.
fn needs_tls(mode: &str) -> bool {
    matches!(mode.trim(), "require" | "verify-ca" | "verify-full")
}

/// Fills in what libpq would: host, user, the password from the password
/// file, and a connect timeout so an unreachable server fails in seconds
/// rather than minutes.
fn finish_config(mut config: tokio_postgres::Config, env: EnvLookup<'_>, lang: Lang) -> tokio_postgres::Config {
    if config.get_hosts().is_empty() {
        // The socket of the port asked for (PGPORT, --port), as libpq looks for it.
        let port = config.get_ports().first().copied().unwrap_or(5432);
        let socket_dir = ["/var/run/postgresql", "/tmp"]
            .into_iter()
            .find(|d| std::path::Path::new(d).join(format!(".s.PGSQL.{port}")).exists());
        match socket_dir {
            Some(dir) => {
                config.host_path(dir);
            }
            None => {
                config.host("localhost");
            }
        }
    }
    if config.get_user().is_none() {
        let user = env("USER").unwrap_or_else(|| "postgres".to_string());
        config.user(&user);
    }
    if config.get_password().is_none() {
        fill_password_from_file(&mut config, env, lang);
    }
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(Duration::from_secs(5));
    }
    config
}

/// The password from `~/.pgpass` (or PGPASSFILE), matched as libpq matches
/// it: on the first host, the port, the database and the user.
fn fill_password_from_file(config: &mut tokio_postgres::Config, env: EnvLookup<'_>, lang: Lang) {
    let path = match libpq::pgpass_file(env) {
        Ok(Some(p)) => p,
        Ok(None) => return,
        Err(path) => {
            crate::output::eline!("{}", msg::pgpass_open(path).render(lang));
            return;
        }
    };
    let Ok(text) = std::fs::read_to_string(&path) else {
        return;
    };
    use tokio_postgres::config::Host;
    // libpq matches a socket directory as "localhost".
    let host = match config.get_hosts().first() {
        Some(Host::Tcp(h)) => h.clone(),
        _ => "localhost".to_string(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let user = config.get_user().unwrap_or_default().to_string();
    let dbname = config.get_dbname().unwrap_or(&user).to_string();
    if let Some(pw) = libpq::pgpass_lookup(&text, &host, port, &dbname, &user) {
        config.password(pw);
    }
}

pub(crate) mod msg {
    crate::messages! {
        prefix "cf";
        bad_url(error) {
            en: "malformed database URL: {error}",
            tr: "hatalı veritabanı URL'si: {error}",
        }
        bad_scheme(scheme) {
            en: "malformed database URL: its scheme is '{scheme}', not postgres:// or postgresql://",
            tr: "hatalı veritabanı URL'si: şeması '{scheme}', postgres:// ya da postgresql:// değil",
        }
        no_tls(mode, by) {
            en: "{by}={mode} asks for TLS, and lab connects without it (as sslmode=disable): reach the server where it accepts connections without TLS (a local port, an SSH tunnel), or leave sslmode out",
            tr: "{by}={mode} TLS istiyor; lab TLS'siz bağlanır (sslmode=disable gibi): sunucuya TLS'siz bağlantı kabul ettiği yerden ulaşın (yerel bir port, bir SSH tüneli) ya da sslmode'u vermeyin",
        }
        bad_pgport(port) {
            en: "PGPORT '{port}' is not a port number",
            tr: "PGPORT '{port}' bir port numarası değil",
        }
        no_url() {
            en: "no database URL given",
            tr: "veritabanı URL'si verilmedi",
        }
        empty_url(origin) {
            en: "{origin} is set but empty (an unset CI secret?): give the server's URL, or unset it to run on a throwaway server",
            tr: "{origin} tanımlı ama boş (tanımlanmamış bir CI sırrı mı?): sunucunun URL'sini verin ya da throwaway sunucuda çalıştırmak için kaldırın",
        }
        no_service(service, files) {
            en: "PGSERVICE names service \"{service}\", which no service file defines (looked in {files})",
            tr: "PGSERVICE \"{service}\" servisini anıyor, ama hiçbir servis dosyası onu tanımlamıyor (bakılan: {files})",
        }
        bad_service_value(file, key, value) {
            en: "{file}: {key}={value} is not a number",
            tr: "{file}: {key}={value} bir sayı değil",
        }
        pgpass_open(path) {
            en: "warning: password file \"{path}\" has group or world access and is ignored, as libpq does; permissions should be u=rw (0600) or less",
            tr: "uyarı: \"{path}\" parola dosyasına grup ya da herkes erişebiliyor; libpq gibi yok sayıldı; izinler u=rw (0600) ya da daha az olmalı",
        }
    }
}
