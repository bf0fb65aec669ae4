//! Which server lab runs against, described once: a URL or key=value string,
//! the libpq service it names (or `PGSERVICE`), then the libpq variables, in
//! libpq's precedence, read into a [`ConnInfo`] of lab's own (every host with
//! its address and port, every TLS setting, target_session_attrs, ...);
//! else the throwaway cluster. Every key libpq documents is either honoured
//! or refused by name with where it came from: none is ignored, so lab never
//! connects less safely than the user asked. Knows nothing of the command
//! line: the caller passes what it was given.
use std::collections::BTreeMap;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Result, bail};

use super::{auth, libpq, tls};
use crate::i18n::Lang;

/// Where the lab runs.
#[derive(Clone)]
pub enum RunOn {
    /// A server the user named (URL, key=value string, service or libpq
    /// variables), and where lab found it (for messages).
    Server(Box<ConnInfo>, String),
    /// The throwaway cluster, from these binaries or the ones found on the
    /// machine, with `conf` appended to its postgresql.conf (pg_regress's
    /// --temp-config).
    /// With `tls`, it speaks TLS only, with a CA lab makes for the run (`--tls`).
    Throwaway {
        pg_bin: Option<PathBuf>,
        conf: String,
        tls: bool,
    },
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

/// libpq's target_session_attrs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TargetAttrs {
    Any,
    ReadWrite,
    ReadOnly,
    Primary,
    Standby,
    PreferStandby,
}

/// One connection as lab makes it: what tokio-postgres is told (hosts,
/// ports, user, database, password, options, timeouts, channel binding)
/// and what lab does itself (TLS as libpq's sslmode says, each host's
/// address, target_session_attrs, load balancing). Dereferences to the
/// tokio-postgres configuration for what that one holds.
#[derive(Clone)]
pub struct ConnInfo {
    pg: tokio_postgres::Config,
    /// `hostaddr`, one per host (None: resolve the host's name).
    pub hostaddrs: Vec<Option<IpAddr>>,
    pub tls: Arc<tls::Settings>,
    pub target: TargetAttrs,
    /// load_balance_hosts=random: hosts (and their addresses) in a random order.
    pub load_balance: bool,
    /// require_auth: the authentication requests the server may make (None: any).
    pub require_auth: Option<Arc<auth::RequireAuth>>,
}

impl std::ops::Deref for ConnInfo {
    type Target = tokio_postgres::Config;
    fn deref(&self) -> &tokio_postgres::Config {
        &self.pg
    }
}

impl std::ops::DerefMut for ConnInfo {
    fn deref_mut(&mut self) -> &mut tokio_postgres::Config {
        &mut self.pg
    }
}

impl ConnInfo {
    /// A connection lab makes to a server of its own (its throwaway cluster,
    /// a sidecar) without TLS: the hosts, user and database are set by the caller.
    pub fn plain() -> ConnInfo {
        ConnInfo::with_tls(tls::Settings::disabled())
    }

    /// The same, with these TLS settings (lab's servers with `--tls`).
    pub fn with_tls(tls: Arc<tls::Settings>) -> ConnInfo {
        let mut pg = tokio_postgres::Config::new();
        pg.ssl_mode(tokio_postgres::config::SslMode::Disable);
        ConnInfo {
            pg,
            hostaddrs: Vec::new(),
            tls,
            target: TargetAttrs::Any,
            load_balance: false,
            require_auth: None,
        }
    }

    /// Another place to reach the same server (a proxy of lab's in front of
    /// it): the same user, database, password and TLS, at `addr:port`; the
    /// certificate is still checked against the server's host name, as
    /// libpq does with host and hostaddr.
    pub fn through(&self, addr: IpAddr, port: u16) -> ConnInfo {
        let mut c = self.clone();
        let name = match self.pg.get_hosts().first() {
            Some(tokio_postgres::config::Host::Tcp(h)) => h.clone(),
            _ => addr.to_string(),
        };
        let mut pg = tokio_postgres::Config::new();
        pg.host(&name).port(port);
        copy_identity(&self.pg, &mut pg);
        c.pg = pg;
        c.hostaddrs = vec![Some(addr)];
        c.target = TargetAttrs::Any;
        c.load_balance = false;
        c
    }

    /// Points at other hosts (no address given): the rest stays.
    pub fn set_hosts(&mut self, hosts: &[&str], port: u16) {
        let mut pg = tokio_postgres::Config::new();
        for h in hosts {
            pg.host(*h);
        }
        pg.port(port);
        copy_identity(&self.pg, &mut pg);
        self.pg = pg;
        self.hostaddrs = vec![None; hosts.len()];
    }

    /// Each host as a server of its own, in the given order, named
    /// `host:port`: its port and address, the same user, database,
    /// password, options and TLS; any node (no target_session_attrs), no
    /// load balancing.
    pub fn one_per_host(&self) -> Vec<(String, ConnInfo)> {
        use tokio_postgres::config::Host;
        let ports = self.pg.get_ports();
        self.pg
            .get_hosts()
            .iter()
            .enumerate()
            .map(|(i, h)| {
                let port = ports.get(i).or(ports.first()).copied().unwrap_or(5432);
                let host = match h {
                    Host::Tcp(name) => name.clone(),
                    Host::Unix(dir) => dir.display().to_string(),
                };
                let mut one = self.clone();
                one.set_hosts(&[&host], port);
                one.hostaddrs = vec![self.hostaddrs.get(i).copied().flatten()];
                one.target = TargetAttrs::Any;
                one.load_balance = false;
                (format!("{host}:{port}"), one)
            })
            .collect()
    }

    /// The tokio-postgres configuration (for what only it holds).
    pub fn pg(&self) -> &tokio_postgres::Config {
        &self.pg
    }
}

/// User, database, password, options and timeouts from one configuration into another.
fn copy_identity(from: &tokio_postgres::Config, to: &mut tokio_postgres::Config) {
    if let Some(u) = from.get_user() {
        to.user(u);
    }
    if let Some(d) = from.get_dbname() {
        to.dbname(d);
    }
    if let Some(p) = from.get_password() {
        to.password(p);
    }
    if let Some(o) = from.get_options() {
        to.options(o);
    }
    if let Some(t) = from.get_connect_timeout() {
        to.connect_timeout(*t);
    }
    to.ssl_mode(from.get_ssl_mode());
    to.ssl_negotiation(from.get_ssl_negotiation());
    to.channel_binding(from.get_channel_binding());
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

/// Every connection key libpq documents (PostgreSQL 18), with its
/// environment variable. Each is honoured or refused in [`refusal`].
pub const KEYS: &[(&str, Option<&str>)] = &[
    ("host", Some("PGHOST")),
    ("hostaddr", Some("PGHOSTADDR")),
    ("port", Some("PGPORT")),
    ("dbname", Some("PGDATABASE")),
    ("user", Some("PGUSER")),
    ("password", Some("PGPASSWORD")),
    ("passfile", Some("PGPASSFILE")),
    ("require_auth", Some("PGREQUIREAUTH")),
    ("channel_binding", Some("PGCHANNELBINDING")),
    ("connect_timeout", Some("PGCONNECT_TIMEOUT")),
    ("client_encoding", Some("PGCLIENTENCODING")),
    ("options", Some("PGOPTIONS")),
    ("application_name", Some("PGAPPNAME")),
    ("fallback_application_name", None),
    ("keepalives", None),
    ("keepalives_idle", None),
    ("keepalives_interval", None),
    ("keepalives_count", None),
    ("tcp_user_timeout", None),
    ("replication", None),
    ("gssencmode", Some("PGGSSENCMODE")),
    ("sslmode", Some("PGSSLMODE")),
    ("requiressl", Some("PGREQUIRESSL")),
    ("sslnegotiation", Some("PGSSLNEGOTIATION")),
    ("sslcompression", Some("PGSSLCOMPRESSION")),
    ("sslcert", Some("PGSSLCERT")),
    ("sslkey", Some("PGSSLKEY")),
    ("sslkeylogfile", None),
    ("sslpassword", None),
    ("sslcertmode", Some("PGSSLCERTMODE")),
    ("sslrootcert", Some("PGSSLROOTCERT")),
    ("sslcrl", Some("PGSSLCRL")),
    ("sslcrldir", Some("PGSSLCRLDIR")),
    ("sslsni", Some("PGSSLSNI")),
    ("requirepeer", Some("PGREQUIREPEER")),
    ("ssl_min_protocol_version", Some("PGSSLMINPROTOCOLVERSION")),
    ("ssl_max_protocol_version", Some("PGSSLMAXPROTOCOLVERSION")),
    ("min_protocol_version", Some("PGMINPROTOCOLVERSION")),
    ("max_protocol_version", Some("PGMAXPROTOCOLVERSION")),
    ("krbsrvname", Some("PGKRBSRVNAME")),
    ("gsslib", Some("PGGSSLIB")),
    ("gssdelegation", Some("PGGSSDELEGATION")),
    ("service", Some("PGSERVICE")),
    ("target_session_attrs", Some("PGTARGETSESSIONATTRS")),
    ("load_balance_hosts", Some("PGLOADBALANCEHOSTS")),
    ("scram_client_key", None),
    ("scram_server_key", None),
    ("oauth_issuer", None),
    ("oauth_client_id", None),
    ("oauth_client_secret", None),
    ("oauth_scope", None),
];

/// Session defaults libpq sends from the environment (`PGDATESTYLE`...):
/// lab sends them as settings in the startup options.
const SESSION_ENV: &[(&str, &str)] = &[("PGDATESTYLE", "datestyle"), ("PGTZ", "timezone"), ("PGGEQO", "geqo")];

/// Where a setting came from, named in the line that refuses it.
#[derive(Clone, Debug, PartialEq)]
pub enum Source {
    /// The URL or key=value string (`--database-url`, `DATABASE_URL`).
    Given(String),
    /// A service file's section.
    Service { service: String, file: String },
    /// A libpq environment variable.
    Env(&'static str),
}

impl Source {
    fn describe(&self, key: &str) -> String {
        match self {
            Source::Given(origin) => format!("{key} in {origin}"),
            Source::Service { service, file } => format!("{key} in service \"{service}\" ({file})"),
            Source::Env(var) => var.to_string(),
        }
    }
}

/// The settings of one connection, each with where it came from.
#[derive(Clone, Debug, Default)]
pub struct Params(BTreeMap<&'static str, (String, Source)>);

impl Params {
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(|(v, _)| v.as_str())
    }

    /// The setting, where libpq would use it: set and not empty.
    fn value(&self, key: &str) -> Option<&str> {
        self.get(key).filter(|v| !v.is_empty())
    }

    /// Where `key` came from, as a message names it (`sslmode in
    /// --database-url`, `PGSSLMODE`); the key alone when it was not set.
    pub fn origin(&self, key: &str) -> String {
        match self.0.get(key) {
            Some((_, s)) => s.describe(key),
            None => key.to_string(),
        }
    }

    /// Sets `key` unless it is set already (libpq's order: the string, then the service, then the environment).
    fn fill(&mut self, key: &str, value: String, from: Source) -> Result<()> {
        let Some(&(known, _)) = KEYS.iter().find(|(k, _)| *k == key) else {
            bail!(msg::unknown_key(from.describe(key)));
        };
        self.0.entry(known).or_insert((value, from));
        Ok(())
    }
}

impl tls::Keys for Params {
    fn get(&self, key: &str) -> Option<&str> {
        Params::get(self, key)
    }

    fn origin(&self, key: &str) -> String {
        Params::origin(self, key)
    }
}

/// Server selection: --database-url (`given`) / DATABASE_URL, else a PGSERVICE
/// service and the libpq variables as psql reads them, else the throwaway
/// cluster. A URL that is set but empty (an unset CI secret) is an error, not
/// a quiet run on the throwaway cluster.
pub fn resolve(given: Option<&str>, pg_bin: Option<&Path>, env: EnvLookup<'_>, lang: Lang) -> Result<RunOn> {
    let from_env = env("DATABASE_URL");
    let mut params = Params::default();
    let mut origin = Vec::new();
    if let Some(url) = given.or(from_env.as_deref()) {
        let name = if given.is_some() && given != from_env.as_deref() {
            "--database-url"
        } else {
            "DATABASE_URL"
        };
        if url.trim().is_empty() {
            bail!(msg::empty_url(name));
        }
        for (k, v) in parse_string(url.trim())? {
            if params.get(&k).is_some() && !k.is_empty() {
                // libpq: the last one wins.
                params.0.remove(k.as_str());
            }
            params.fill(&k, v, Source::Given(name.to_string()))?;
        }
        origin.push(name.to_string());
    }
    let service = params.value("service").map(str::to_string).or_else(|| env("PGSERVICE"));
    if let Some(service) = &service {
        apply_service(&mut params, service, env)?;
        if origin.is_empty() {
            origin.push(format!("PGSERVICE={service}"));
        }
    }
    let named = ["PGHOST", "PGHOSTADDR", "PGPORT", "PGUSER", "PGDATABASE"];
    let set: Vec<&str> = named.into_iter().filter(|v| env(v).is_some()).collect();
    if origin.is_empty() && set.is_empty() {
        return Ok(RunOn::Throwaway {
            pg_bin: pg_bin.map(Path::to_path_buf),
            conf: String::new(),
            tls: false,
        });
    }
    if origin.iter().all(|o| !o.contains("URL") && !o.starts_with("--")) {
        origin.extend(set.iter().map(|s| s.to_string()));
    }
    // What the string and the service did not say comes from the variables, as in libpq.
    for (key, var) in KEYS {
        if let Some(var) = var
            && *key != "service"
            && let Some(v) = env(var)
        {
            params.fill(key, v, Source::Env(var))?;
        }
    }
    let mut info = build(&params, env, lang)?;
    let session: Vec<String> = SESSION_ENV
        .iter()
        .filter_map(|(var, setting)| env(var).map(|v| format!("-c {setting}={}", v.replace(' ', "\\ "))))
        .collect();
    if !session.is_empty() {
        let mut options = info
            .pg
            .get_options()
            .map(str::to_string)
            .into_iter()
            .collect::<Vec<_>>();
        options.extend(session);
        info.pg.options(options.join(" "));
    }
    Ok(RunOn::Server(Box::new(info), origin.join(", ")))
}

/// `--tls`: lab's own server speaks TLS only. A server the user named says
/// in its settings how to reach it (sslmode...): --tls with one is refused.
pub fn own_tls(target: RunOn, tls: bool) -> Result<RunOn> {
    match target {
        RunOn::Throwaway { pg_bin, conf, .. } => Ok(RunOn::Throwaway { pg_bin, conf, tls }),
        RunOn::Server(..) if tls => bail!(msg::tls_own_only()),
        server => Ok(server),
    }
}

/// A database URL (or key=value string) as lab reads it everywhere.
pub fn parse_url(url: &str, env: EnvLookup<'_>, lang: Lang) -> Result<ConnInfo> {
    match resolve(Some(url), None, env, lang)? {
        RunOn::Server(c, _) => Ok(*c),
        RunOn::Throwaway { .. } => bail!(msg::no_url()),
    }
}

/// The settings of a connection service, from the first service file that
/// defines it, where neither the string nor an earlier source set them.
fn apply_service(params: &mut Params, service: &str, env: EnvLookup<'_>) -> Result<()> {
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
    let from = Source::Service {
        service: service.to_string(),
        file: file.display().to_string(),
    };
    // Within one section the last line wins; what the string set stays.
    let mut section: BTreeMap<String, String> = BTreeMap::new();
    for (key, value) in settings {
        if key == "service" {
            bail!(msg::nested_service(from.describe("service")));
        }
        section.insert(key, value);
    }
    for (key, value) in section {
        params.fill(&key, value, from.clone())?;
    }
    Ok(())
}

/// A URL (`postgres://...`) or key=value string as libpq reads it: the
/// pairs it sets, in order.
pub fn parse_string(s: &str) -> Result<Vec<(String, String)>> {
    if let Some(rest) = s
        .strip_prefix("postgresql://")
        .or_else(|| s.strip_prefix("postgres://"))
    {
        return parse_uri(rest);
    }
    // A URL with another scheme would be read as key=value pairs.
    if let Some((scheme, _)) = s.split_once("://")
        && !scheme.contains([' ', '='])
    {
        bail!(msg::bad_scheme(scheme));
    }
    parse_pairs(s)
}

/// libpq's URI: `[user[:password]@][host[:port]][,...][/dbname][?key=value&...]`.
fn parse_uri(rest: &str) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    let (main, query) = match rest.split_once('?') {
        Some((m, q)) => (m, Some(q)),
        None => (rest, None),
    };
    let (authority, path) = match main.find('/') {
        Some(i) => (&main[..i], Some(&main[i + 1..])),
        None => (main, None),
    };
    let hosts_part = match authority.rfind('@') {
        Some(i) => {
            let userinfo = &authority[..i];
            let (user, password) = match userinfo.split_once(':') {
                Some((u, p)) => (u, Some(p)),
                None => (userinfo, None),
            };
            if !user.is_empty() {
                out.push(("user".to_string(), decode(user)?));
            }
            if let Some(p) = password {
                out.push(("password".to_string(), decode(p)?));
            }
            &authority[i + 1..]
        }
        None => authority,
    };
    if !hosts_part.is_empty() {
        let mut hosts = Vec::new();
        let mut ports = Vec::new();
        for spec in hosts_part.split(',') {
            let (host, port) = if let Some(inner) = spec.strip_prefix('[') {
                let Some((h, after)) = inner.split_once(']') else {
                    bail!(msg::bad_url(msg::bracket_unclosed()));
                };
                let port = match after.strip_prefix(':') {
                    Some(p) => Some(p),
                    None if after.is_empty() => None,
                    None => bail!(msg::bad_url(msg::after_bracket())),
                };
                (h.to_string(), port)
            } else {
                match spec.split_once(':') {
                    Some((h, p)) => (decode(h)?, Some(p)),
                    None => (decode(spec)?, None),
                }
            };
            hosts.push(host);
            ports.push(port.map(decode).transpose()?.unwrap_or_default());
        }
        out.push(("host".to_string(), hosts.join(",")));
        if ports.iter().any(|p| !p.is_empty()) {
            out.push(("port".to_string(), ports.join(",")));
        }
    }
    if let Some(db) = path.filter(|p| !p.is_empty()) {
        out.push(("dbname".to_string(), decode(db)?));
    }
    for pair in query.into_iter().flat_map(|q| q.split('&')).filter(|p| !p.is_empty()) {
        let Some((k, v)) = pair.split_once('=') else {
            bail!(msg::bad_url(msg::no_value(decode(pair)?)));
        };
        let (k, v) = (decode(k)?, decode(v)?);
        // libpq's one alias: ssl=true is sslmode=require.
        if k == "ssl" && v == "true" {
            out.push(("sslmode".to_string(), "require".to_string()));
        } else {
            out.push((k, v));
        }
    }
    Ok(out)
}

/// Percent-decoding, as libpq decodes each part of a URI.
fn decode(s: &str) -> Result<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3).and_then(|h| u8::from_str_radix(h, 16).ok());
            match hex {
                Some(b) if b != 0 => out.push(b),
                _ => bail!(msg::bad_url(msg::bad_percent())),
            }
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| msg::bad_url(msg::bad_percent()).into())
}

/// libpq's key=value string: `key = value` separated by spaces; a value in
/// single quotes may hold spaces; a backslash escapes the next character.
fn parse_pairs(s: &str) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    let mut chars = s.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        if chars.peek().is_none() {
            return Ok(out);
        }
        let mut key = String::new();
        while let Some(&c) = chars.peek() {
            if c == '=' || c.is_whitespace() {
                break;
            }
            key.push(c);
            chars.next();
        }
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        if chars.next() != Some('=') {
            bail!(msg::bad_url(msg::missing_equals(key)));
        }
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        let mut value = String::new();
        if chars.peek() == Some(&'\'') {
            chars.next();
            loop {
                match chars.next() {
                    Some('\\') => value.extend(chars.next()),
                    Some('\'') => break,
                    Some(c) => value.push(c),
                    None => bail!(msg::bad_url(msg::unterminated())),
                }
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c.is_whitespace() {
                    break;
                }
                chars.next();
                if c == '\\' {
                    value.extend(chars.next());
                } else {
                    value.push(c);
                }
            }
        }
        out.push((key, value));
    }
}

/// Why lab cannot honour `key=value`, if it cannot: the values lab does
/// what libpq would do with, and the rest refused by name.
pub fn refusal(key: &str, value: &str) -> Option<&'static str> {
    let v = value.trim();
    let off = matches!(v, "" | "0" | "off" | "false" | "no");
    match key {
        "client_encoding" if !matches!(v.to_ascii_uppercase().as_str(), "" | "UTF8" | "UTF-8" | "AUTO") => {
            Some("lab's sessions always use UTF8")
        }
        "replication" if !off => Some("lab opens no replication connections"),
        "gssencmode" if !matches!(v, "" | "disable" | "prefer") => {
            Some("lab has no GSSAPI: it connects as gssencmode=disable")
        }
        "sslcompression" if !off => Some("TLS compression is not available (rustls has none)"),
        "sslkeylogfile" if !v.is_empty() => Some("lab does not write TLS key logs"),
        "sslpassword" if !v.is_empty() => Some("lab reads only unencrypted client keys"),
        "sslcertmode" if !matches!(v, "" | "allow" | "disable") => {
            Some("lab sends a client certificate when it has one, as sslcertmode=allow")
        }
        "sslcrldir" if !v.is_empty() => Some("give the revocation list as a file with sslcrl"),
        "requirepeer" if !v.is_empty() => Some("lab does not check a Unix socket's peer"),
        "ssl_max_protocol_version" if !matches!(v, "" | "TLSv1.2" | "TLSv1.3") => {
            Some("lab speaks TLS 1.2 and 1.3 only")
        }
        "min_protocol_version" | "max_protocol_version" if !matches!(v, "" | "3.0") => {
            Some("lab speaks protocol 3.0 only")
        }
        "krbsrvname" if !matches!(v, "" | "postgres") => Some("lab has no Kerberos"),
        "gsslib" if !v.is_empty() => Some("lab has no GSSAPI"),
        "gssdelegation" if !off => Some("lab has no GSSAPI"),
        "scram_client_key" | "scram_server_key" if !v.is_empty() => Some("lab authenticates with a password only"),
        "oauth_issuer" | "oauth_client_id" | "oauth_client_secret" | "oauth_scope" if !v.is_empty() => {
            Some("lab has no OAuth")
        }
        _ => None,
    }
}

/// The settings as one connection: every key checked, what libpq would
/// fill in filled in (the socket or localhost, the user, the password
/// file, ~/.postgresql's files), TLS read and ready.
pub fn build(params: &Params, env: EnvLookup<'_>, lang: Lang) -> Result<ConnInfo> {
    refuse_unsupported(params)?;
    let mut pg = tokio_postgres::Config::new();
    let hostaddrs = hosts_and_ports(params, &mut pg)?;
    let user = params
        .value("user")
        .map(str::to_string)
        .or_else(|| env("USER"))
        .unwrap_or_else(|| "postgres".to_string());
    pg.user(&user);
    if let Some(db) = params.value("dbname") {
        pg.dbname(db);
    }
    if let Some(pw) = params.get("password") {
        pg.password(pw);
    }
    if let Some(o) = params.value("options") {
        pg.options(o);
    }
    if let Some(a) = params
        .value("application_name")
        .or(params.value("fallback_application_name"))
    {
        pg.application_name(a);
    }
    timeouts(params, &mut pg)?;
    use tokio_postgres::config::ChannelBinding;
    pg.channel_binding(match params.value("channel_binding") {
        None | Some("prefer") => ChannelBinding::Prefer,
        Some("disable") => ChannelBinding::Disable,
        Some("require") => ChannelBinding::Require,
        Some(_) => return Err(bad(params, "channel_binding")),
    });
    let target = match params.value("target_session_attrs") {
        None | Some("any") => TargetAttrs::Any,
        Some("read-write") => TargetAttrs::ReadWrite,
        Some("read-only") => TargetAttrs::ReadOnly,
        Some("primary") => TargetAttrs::Primary,
        Some("standby") => TargetAttrs::Standby,
        Some("prefer-standby") => TargetAttrs::PreferStandby,
        Some(_) => return Err(bad(params, "target_session_attrs")),
    };
    let load_balance = match params.value("load_balance_hosts") {
        None | Some("disable") => false,
        Some("random") => true,
        Some(_) => return Err(bad(params, "load_balance_hosts")),
    };
    let require_auth = auth::RequireAuth::parse(
        params.value("require_auth").unwrap_or(""),
        &params.origin("require_auth"),
    )?
    .map(Arc::new);
    let tls = tls::Settings::from_params(params, env)?;
    pg.ssl_mode(tokio_postgres::config::SslMode::Disable);
    if tls.direct {
        pg.ssl_negotiation(tokio_postgres::config::SslNegotiation::Direct);
    }
    if pg.get_password().is_none() {
        fill_password_from_file(&mut pg, params.value("passfile"), env, lang);
    }
    Ok(ConnInfo {
        pg,
        hostaddrs,
        tls,
        target,
        load_balance,
        require_auth,
    })
}

/// A value of `key` libpq would not take: says where it came from, never the value.
fn bad(params: &Params, key: &str) -> anyhow::Error {
    anyhow::Error::from(msg::bad_value(params.origin(key)))
}

/// Settings lab refuses (see [`refusal`]), named with where they came from
/// (a secret never repeated).
fn refuse_unsupported(params: &Params) -> Result<()> {
    for (key, (value, from)) in &params.0 {
        if let Some(why) = refusal(key, value) {
            let shown = if key.contains("secret") || key.contains("password") || key.starts_with("scram") {
                "…"
            } else {
                value.as_str()
            };
            bail!(msg::refused(from.describe(key), shown, why));
        }
    }
    Ok(())
}

/// The hosts (names, socket directories or only addresses) and their ports
/// into `pg`, as libpq pairs them: host, hostaddr and port are lists of one
/// length (one port serves every host). Each host's address, where given.
fn hosts_and_ports(params: &Params, pg: &mut tokio_postgres::Config) -> Result<Vec<Option<IpAddr>>> {
    let split = |key: &str| -> Vec<String> {
        params
            .get(key)
            .map(|v| v.split(',').map(|s| s.trim().to_string()).collect())
            .unwrap_or_default()
    };
    let hosts = split("host");
    let addrs = split("hostaddr");
    let count = hosts.len().max(addrs.len()).max(1);
    if !hosts.is_empty() && !addrs.is_empty() && hosts.len() != addrs.len() {
        bail!(msg::count_mismatch(params.origin("hostaddr"), addrs.len(), hosts.len()));
    }
    let mut hostaddrs = Vec::new();
    for a in addrs
        .iter()
        .map(String::as_str)
        .chain(std::iter::repeat(""))
        .take(count)
    {
        hostaddrs.push(if a.is_empty() {
            None
        } else {
            Some(a.parse::<IpAddr>().map_err(|_| bad(params, "hostaddr"))?)
        });
    }
    let ports = split("port");
    if ports.len() > 1 && ports.len() != count {
        bail!(msg::count_mismatch(params.origin("port"), ports.len(), count));
    }
    let mut port_numbers = Vec::new();
    for p in &ports {
        port_numbers.push(if p.is_empty() {
            5432
        } else {
            p.parse::<u16>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| bad(params, "port"))?
        });
    }
    let default_port = port_numbers.first().copied().unwrap_or(5432);
    for (i, addr) in hostaddrs.iter().enumerate() {
        let host = hosts.get(i).map(String::as_str).unwrap_or("");
        let port = port_numbers.get(i).copied().unwrap_or(default_port);
        if host.starts_with('/') || host.starts_with('@') {
            pg.host_path(host);
        } else if !host.is_empty() {
            pg.host(host);
        } else if let Some(addr) = addr {
            // Only an address: the name it is checked against is the address.
            pg.host(addr.to_string());
        } else {
            // The socket of the port asked for, as libpq looks for it.
            match ["/var/run/postgresql", "/tmp"]
                .into_iter()
                .find(|d| Path::new(d).join(format!(".s.PGSQL.{port}")).exists())
            {
                Some(dir) => pg.host_path(dir),
                None => pg.host("localhost"),
            };
        }
        pg.port(port);
    }
    Ok(hostaddrs)
}

/// connect_timeout, the keepalives and tcp_user_timeout into `pg`, as libpq reads them.
fn timeouts(params: &Params, pg: &mut tokio_postgres::Config) -> Result<()> {
    let seconds = |key: &str| -> Result<Option<u64>> {
        params
            .value(key)
            .map(|v| v.trim().parse::<i64>().map_err(|_| bad(params, key)))
            .transpose()
            .map(|n| n.map(|n| n.max(0) as u64))
    };
    // libpq: 0 waits for ever, and less than 2 s is 2 s; lab waits 5 s when nothing is said.
    match seconds("connect_timeout")? {
        Some(0) => {}
        Some(n) => {
            pg.connect_timeout(Duration::from_secs(n.max(2)));
        }
        None => {
            pg.connect_timeout(Duration::from_secs(5));
        }
    }
    if let Some(k) = params.value("keepalives") {
        pg.keepalives(k.trim() != "0");
    }
    if let Some(n) = seconds("keepalives_idle")? {
        pg.keepalives_idle(Duration::from_secs(n));
    }
    if let Some(n) = seconds("keepalives_interval")? {
        pg.keepalives_interval(Duration::from_secs(n));
    }
    if let Some(n) = seconds("keepalives_count")? {
        pg.keepalives_retries(n as u32);
    }
    if let Some(ms) = seconds("tcp_user_timeout")? {
        pg.tcp_user_timeout(Duration::from_millis(ms));
    }
    Ok(())
}

/// The password from `~/.pgpass` (or passfile, PGPASSFILE), matched as libpq
/// matches it: on the first host, the port, the database and the user.
fn fill_password_from_file(
    config: &mut tokio_postgres::Config,
    passfile: Option<&str>,
    env: EnvLookup<'_>,
    lang: Lang,
) {
    let with_file = |name: &str| match (name, passfile) {
        ("PGPASSFILE", Some(f)) => Some(f.to_string()),
        _ => env(name),
    };
    let path = match libpq::pgpass_file(&with_file) {
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
        bracket_unclosed() {
            en: "a [ in the host has no matching ]",
            tr: "host içindeki [ karakterinin eşi olan ] yok",
        }
        after_bracket() {
            en: "unexpected characters after a bracketed host",
            tr: "köşeli parantezli host'tan sonra beklenmeyen karakterler",
        }
        no_value(param) {
            en: "parameter \"{param}\" has no value",
            tr: "\"{param}\" parametresinin değeri yok",
        }
        bad_percent() {
            en: "invalid percent-encoded token",
            tr: "geçersiz yüzde kodlamalı (percent-encoded) öğe",
        }
        missing_equals(key) {
            en: "missing \"=\" after \"{key}\" in connection info string",
            tr: "bağlantı bilgisi dizgesinde \"{key}\" sonrasında \"=\" eksik",
        }
        unterminated() {
            en: "unterminated quoted string in connection info string",
            tr: "bağlantı bilgisi dizgesinde kapatılmamış tırnaklı dizge",
        }
        bad_scheme(scheme) {
            en: "malformed database URL: its scheme is '{scheme}', not postgres:// or postgresql://",
            tr: "hatalı veritabanı URL'si: şeması '{scheme}', postgres:// ya da postgresql:// değil",
        }
        unknown_key(key) {
            en: "malformed database URL: {key} is not a libpq connection option",
            tr: "hatalı veritabanı URL'si: {key} bir libpq bağlantı seçeneği değil",
        }
        refused(key, value, why) {
            en: "{key}={value}: lab cannot honour it ({why}), and will not connect as if it were not set",
            tr: "{key}={value}: lab bunu yerine getiremez ({why}) ve verilmemiş gibi bağlanmaz",
        }
        bad_value(key) {
            en: "{key}: invalid value (not repeated here: it may be a secret in the wrong place)",
            tr: "{key}: geçersiz değer (burada tekrarlanmıyor: yanlış yere yazılmış bir sır olabilir)",
        }
        count_mismatch(key, given, hosts) {
            en: "{key}: {given} values for {hosts} hosts",
            tr: "{key}: {hosts} sunucu için {given} değer",
        }
        nested_service(key) {
            en: "{key}: a service file may not name another service",
            tr: "{key}: bir servis dosyası başka bir servisi anamaz",
        }
        tls_own_only() {
            en: "--tls makes lab's own throwaway server speak TLS only; a server given by URL, service or PG* variables says how to reach it (sslmode=verify-full, sslrootcert=...)",
            tr: "--tls lab'ın kendi geçici sunucusunu yalnızca TLS konuşur yapar; URL, servis ya da PG* değişkenleriyle verilen bir sunucuya nasıl ulaşılacağı kendi ayarlarındadır (sslmode=verify-full, sslrootcert=...)",
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
        pgpass_open(path) {
            en: "warning: password file \"{path}\" has group or world access and is ignored, as libpq does; permissions should be u=rw (0600) or less",
            tr: "uyarı: \"{path}\" parola dosyasına grup ya da herkes erişebiliyor; libpq gibi yok sayıldı; izinler u=rw (0600) ya da daha az olmalı",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(s: &str) -> Vec<(String, String)> {
        parse_string(s).unwrap()
    }

    fn kv(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn uris_are_read_as_libpq_reads_them() {
        assert_eq!(
            pairs(
                "postgres://u%40x:p%3Aw@h1:5433,[::1]:6000,h3/db%20x?sslmode=verify-full&target_session_attrs=primary"
            ),
            kv(&[
                ("user", "u@x"),
                ("password", "p:w"),
                ("host", "h1,::1,h3"),
                ("port", "5433,6000,"),
                ("dbname", "db x"),
                ("sslmode", "verify-full"),
                ("target_session_attrs", "primary"),
            ])
        );
        assert_eq!(
            pairs("postgresql:///shop?host=%2Fvar%2Frun%2Fpostgresql&ssl=true"),
            kv(&[
                ("dbname", "shop"),
                ("host", "/var/run/postgresql"),
                ("sslmode", "require")
            ])
        );
        assert_eq!(pairs("postgres://"), kv(&[]));
        assert!(parse_string("postgres://h/d?sslmode").is_err());
        assert!(parse_string("postgres://h/d?x=%zz").is_err());
        assert!(parse_string("mysql://h/d").is_err());
    }

    #[test]
    fn key_value_strings_are_read_as_libpq_reads_them() {
        assert_eq!(
            pairs("host=db port = 5433 password='it\\'s' application_name='a b' options=-c\\ x=1"),
            kv(&[
                ("host", "db"),
                ("port", "5433"),
                ("password", "it's"),
                ("application_name", "a b"),
                ("options", "-c x=1"),
            ])
        );
        assert_eq!(
            pairs("host=db  sslmode = 'verify-full' sslrootcert=/r.crt"),
            kv(&[("host", "db"), ("sslmode", "verify-full"), ("sslrootcert", "/r.crt")])
        );
        assert!(parse_string("host").is_err());
        assert!(parse_string("host='db").is_err());
    }

    fn env_of(vars: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| vars.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string())
    }

    fn error(given: Option<&str>, vars: &'static [(&'static str, &'static str)]) -> String {
        let env = env_of(vars);
        let e = resolve(given, None, &env, Lang::En).expect_err("an error");
        crate::i18n::error_line(&e, Lang::En)
    }

    fn server(given: Option<&str>, vars: &'static [(&'static str, &'static str)]) -> ConnInfo {
        let env = env_of(vars);
        match resolve(given, None, &env, Lang::En).unwrap() {
            RunOn::Server(c, _) => *c,
            RunOn::Throwaway { .. } => panic!("expected a server"),
        }
    }

    #[test]
    fn every_key_is_known_and_the_ones_lab_cannot_honour_are_refused_by_name() {
        let e = error(Some("postgres://h/d?gssencmode=require"), &[]);
        assert!(
            e.starts_with("gssencmode in --database-url=require: lab cannot honour it"),
            "{e}"
        );
        let e = error(Some("host=h krbsrvname=kerb"), &[]);
        assert!(e.starts_with("krbsrvname in --database-url=kerb"), "{e}");
        let e = error(Some("postgres://h/d"), &[("PGGSSENCMODE", "require")]);
        assert!(e.starts_with("PGGSSENCMODE=require: lab cannot honour it"), "{e}");
        let e = error(Some("postgres://h/d?nosuchkey=1"), &[]);
        assert_eq!(
            e,
            "malformed database URL: nosuchkey in --database-url is not a libpq connection option"
        );
        let e = error(Some("postgres://h/d?oauth_client_secret=s3cret"), &[]);
        assert!(!e.contains("s3cret"), "{e}");
        // The defaults and the values lab does what libpq does with pass.
        for ok in [
            "gssencmode=prefer",
            "gssencmode=disable",
            "client_encoding=UTF8",
            "sslcompression=0",
            "sslcertmode=allow",
            "krbsrvname=postgres",
            "replication=false",
            "min_protocol_version=3.0",
            "keepalives=1",
            "keepalives_idle=30",
            "tcp_user_timeout=1000",
        ] {
            assert!(
                refusal(ok.split('=').next().unwrap(), ok.split('=').nth(1).unwrap()).is_none(),
                "{ok}"
            );
        }
    }

    #[test]
    fn precedence_is_libpqs_string_then_service_then_environment() {
        let dir = std::env::temp_dir().join(format!("lab-conninfo-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("pg_service.conf");
        std::fs::write(
            &file,
            "[shop]\nhost=svc.example\nport=6000\nsslmode=disable\ntarget_session_attrs=primary\n[bad]\nkrbsrvname=x\n",
        )
        .unwrap();
        let path: &'static str = Box::leak(file.display().to_string().into_boxed_str());
        let vars: &'static [(&'static str, &'static str)] = Box::leak(Box::new([
            ("PGSERVICEFILE", path),
            ("PGSERVICE", "shop"),
            ("PGPORT", "7000"),
            ("PGUSER", "envuser"),
            ("PGTARGETSESSIONATTRS", "standby"),
            ("PGSYSCONFDIR", "/nonexistent"),
        ]));
        let c = server(Some("postgres://given.example/db"), vars);
        assert_eq!(
            c.get_hosts(),
            &[tokio_postgres::config::Host::Tcp("given.example".into())]
        );
        // The service outranks the environment; the environment fills the rest.
        assert_eq!(c.get_ports(), &[6000]);
        assert_eq!(c.target, TargetAttrs::Primary);
        assert_eq!(c.get_user(), Some("envuser"));
        assert_eq!(c.tls.mode, tls::SslMode::Disable);
        let bad: &'static [(&'static str, &'static str)] =
            Box::leak(Box::new([("PGSERVICEFILE", path), ("PGSYSCONFDIR", "/nonexistent")]));
        let e = error(Some("postgres://h/d?service=bad"), bad);
        assert!(
            e.starts_with(&format!("krbsrvname in service \"bad\" ({path})=x")),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn hosts_addresses_and_ports_pair_up() {
        let c = server(Some("host=a,b hostaddr=127.0.0.1,127.0.0.2 port=1,2"), &[]);
        assert_eq!(c.get_ports(), &[1, 2]);
        assert_eq!(
            c.hostaddrs,
            vec![Some("127.0.0.1".parse().unwrap()), Some("127.0.0.2".parse().unwrap())]
        );
        let c = server(Some("postgres://a,b:7/d"), &[]);
        assert_eq!(c.get_ports(), &[5432, 7]);
        assert_eq!(
            error(Some("host=a,b port=1,2,3"), &[]),
            "port in --database-url: 3 values for 2 hosts"
        );
        assert_eq!(
            error(Some("host=a hostaddr=x"), &[]),
            "hostaddr in --database-url: invalid value (not repeated here: it may be a secret in the wrong place)"
        );
        let c = server(None, &[("PGHOSTADDR", "127.0.0.1")]);
        assert_eq!(c.get_hosts(), &[tokio_postgres::config::Host::Tcp("127.0.0.1".into())]);
        let c = server(
            Some("postgres://h/d?target_session_attrs=prefer-standby&load_balance_hosts=random"),
            &[],
        );
        assert_eq!(c.target, TargetAttrs::PreferStandby);
        assert!(c.load_balance);
    }

    #[test]
    fn the_throwaway_cluster_when_nothing_names_a_server() {
        let env = env_of(&[("PGSSLMODE", "verify-full")]);
        assert!(matches!(
            resolve(None, None, &env, Lang::En).unwrap(),
            RunOn::Throwaway { .. }
        ));
    }
}
