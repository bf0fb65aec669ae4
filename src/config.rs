//! Turns the command line (and the environment) into a checked run
//! configuration. Everything here is pure, so it is unit-tested without I/O.
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use anyhow::{Context, Result, bail};

use crate::cli::{ConnArgs, Format, LocalArgs, RunArgs};
use crate::i18n::Lang;
use crate::retry::RetryPolicy;
use crate::scenarios::{self, ScenarioInfo};
use std::io::IsTerminal;

/// Where the lab runs.
#[derive(Clone)]
pub enum Target {
    /// A server the user named (URL, key=value string or libpq variables).
    Server(Box<tokio_postgres::Config>),
    /// The throwaway cluster, from these binaries or the ones found on the machine.
    Throwaway { pg_bin: Option<PathBuf> },
}

impl std::fmt::Debug for Target {
    // Never print a Config: it holds the password.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Target::Server(_) => f.write_str("Server(..)"),
            Target::Throwaway { pg_bin } => write!(f, "Throwaway {{ pg_bin: {pg_bin:?} }}"),
        }
    }
}

/// A checked configuration for one `lab <scenario>` or `lab all` run.
#[derive(Debug, Clone)]
pub struct RunConfig {
    pub lang: Lang,
    pub explain: bool,
    pub step: bool,
    pub target: Target,
    pub schema: String,
    pub keep_schema: bool,
    pub format: Format,
    pub junit: Option<PathBuf>,
    pub wait_timeout: Duration,
    pub retry: RetryPolicy,
    pub timeout: Duration,
    /// Scenario-specific settings (defaults unless the scenario's subcommand set them).
    pub params: Params,
    /// The scenarios to run, each with the variants to run, in order.
    pub plan: Vec<(&'static ScenarioInfo, Vec<&'static str>)>,
}

/// Settings only some scenarios have.
#[derive(Debug, Clone, Copy, Default)]
pub struct Params {
    pub queue: QueueParams,
    pub stock: StockParams,
    pub invoice: InvoiceParams,
}

#[derive(Debug, Clone, Copy)]
pub struct InvoiceParams {
    pub invoices: u32,
    pub workers: u32,
    pub latency: Duration,
    pub transient_rate: f64,
}

impl Default for InvoiceParams {
    fn default() -> Self {
        InvoiceParams {
            invoices: 20,
            workers: 4,
            latency: Duration::from_millis(50),
            transient_rate: 0.15,
        }
    }
}

impl InvoiceParams {
    pub fn from_args(a: &crate::cli::InvoiceArgs) -> Result<InvoiceParams> {
        if !(1..=50).contains(&a.workers) {
            bail!(crate::tr!("cf.between", flag = "--workers", min = 1, max = 50));
        }
        if a.invoices < a.workers || a.invoices > 10_000 {
            bail!(crate::tr!("cf.invoices"));
        }
        if !(1..=5000).contains(&a.latency_ms) {
            bail!(crate::tr!("cf.between", flag = "--latency-ms", min = 1, max = 5000));
        }
        if !(0.0..=0.5).contains(&a.transient_rate) {
            bail!(crate::tr!("cf.between", flag = "--transient-rate", min = 0, max = 0.5));
        }
        Ok(InvoiceParams {
            invoices: a.invoices,
            workers: a.workers,
            latency: Duration::from_millis(a.latency_ms),
            transient_rate: a.transient_rate,
        })
    }
}

#[derive(Debug, Clone, Copy)]
pub struct StockParams {
    pub stock: u32,
    pub requests: u32,
}

impl Default for StockParams {
    fn default() -> Self {
        StockParams {
            stock: 100,
            requests: 100,
        }
    }
}

impl StockParams {
    pub fn from_args(a: &crate::cli::StockRaceArgs) -> Result<StockParams> {
        if !(2..=1000).contains(&a.requests) {
            bail!(crate::tr!("cf.between", flag = "--requests", min = 2, max = 1000));
        }
        if a.stock > 1_000_000 {
            bail!(crate::tr!("cf.at_most", flag = "--stock", max = 1_000_000));
        }
        Ok(StockParams {
            stock: a.stock,
            requests: a.requests,
        })
    }
}

#[derive(Debug, Clone, Copy)]
pub struct QueueParams {
    pub messages: u32,
    pub workers: u32,
    pub batch: u32,
    pub work: Duration,
    pub kill_worker_after: Option<u32>,
}

impl Default for QueueParams {
    /// The seed's setting: 1000 messages, 4 workers, batches of 10, 20 ms of work.
    fn default() -> Self {
        QueueParams {
            messages: 1000,
            workers: 4,
            batch: 10,
            work: Duration::from_millis(20),
            kill_worker_after: None,
        }
    }
}

impl QueueParams {
    pub fn from_args(a: &crate::cli::QueueArgs) -> Result<QueueParams> {
        if !(1..=10_000_000).contains(&a.messages) {
            bail!(crate::tr!("cf.between", flag = "--messages", min = 1, max = 10_000_000));
        }
        if !(1..=200).contains(&a.workers) {
            bail!(crate::tr!("cf.between", flag = "--workers", min = 1, max = 200));
        }
        if !(1..=10_000).contains(&a.batch) {
            bail!(crate::tr!("cf.between", flag = "--batch", min = 1, max = 10_000));
        }
        if a.work_ms > 60_000 {
            bail!(crate::tr!("cf.at_most", flag = "--work-ms", max = 60_000));
        }
        if a.kill_worker_after.is_some() && a.workers < 2 {
            bail!(crate::tr!("cf.kill_needs_two"));
        }
        Ok(QueueParams {
            messages: a.messages,
            workers: a.workers,
            batch: a.batch,
            work: Duration::from_millis(a.work_ms),
            kill_worker_after: a.kill_worker_after,
        })
    }

    /// ceil(messages / batch) x work / workers: the time the work alone needs.
    pub fn ideal(&self) -> Duration {
        let batches = self.messages.div_ceil(self.batch);
        self.work * batches / self.workers
    }
}

/// Reads an environment variable; tests pass their own.
pub type EnvLookup<'a> = &'a dyn Fn(&str) -> Option<String>;

pub fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

impl RunConfig {
    /// `scenario` is None for `lab all`.
    pub fn new(scenario: Option<&str>, args: &RunArgs, env: EnvLookup<'_>, lang: Lang) -> Result<RunConfig> {
        let plan = match scenario {
            Some(name) => {
                let info = scenarios::find(name).with_context(|| crate::tr!("cf.unknown_scenario", name = name))?;
                vec![(info, select_variants(info, &args.variants)?)]
            }
            None => {
                if !args.variants.is_empty() {
                    bail!(crate::tr!("cf.variant_with_all"));
                }
                scenarios::ALL.iter().map(|s| (s, s.variant_names())).collect()
            }
        };
        if !(args.wait_timeout.is_finite() && args.wait_timeout > 0.0 && args.wait_timeout <= 3600.0) {
            bail!(crate::tr!("cf.wait_timeout"));
        }
        if args.retry_attempts == 0 || args.retry_attempts > 100 {
            bail!(crate::tr!("cf.between", flag = "--retry-attempts", min = 1, max = 100));
        }
        if args.retry_base_ms > args.retry_cap_ms || args.retry_cap_ms > 60_000 {
            bail!(crate::tr!("cf.retry_base"));
        }
        if args.timeout_ms < 10 || args.timeout_ms > 60_000 {
            bail!(crate::tr!("cf.between", flag = "--timeout-ms", min = 10, max = 60_000));
        }
        if Duration::from_millis(args.timeout_ms) * 3 > Duration::from_secs_f64(args.wait_timeout) {
            bail!(crate::tr!("cf.wait_vs_timeout"));
        }
        if args.step && !std::io::stdin().is_terminal() {
            bail!("{}", lang.texts().ui.step_needs_terminal);
        }
        // A person is in the loop: the deadlines wait for them too.
        let wait_timeout = if args.step {
            Duration::from_secs_f64(args.wait_timeout).max(Duration::from_secs(3600))
        } else {
            Duration::from_secs_f64(args.wait_timeout)
        };
        Ok(RunConfig {
            lang,
            explain: args.explain,
            step: args.step,
            target: target(&args.conn, env)?,
            timeout: Duration::from_millis(args.timeout_ms),
            params: Params::default(),
            retry: RetryPolicy {
                max_attempts: args.retry_attempts,
                base: Duration::from_millis(args.retry_base_ms),
                cap: Duration::from_millis(args.retry_cap_ms),
            },
            schema: check_schema(&args.conn.local.schema)?,
            keep_schema: args.conn.keep_schema,
            format: args.format,
            junit: args.junit.clone(),
            wait_timeout,
            plan,
        })
    }
}

fn select_variants(info: &ScenarioInfo, wanted: &[String]) -> Result<Vec<&'static str>> {
    if wanted.is_empty() {
        return Ok(info.variant_names());
    }
    let mut out = Vec::new();
    for w in wanted {
        let Some(v) = info.variants.iter().find(|v| v.name == w) else {
            bail!(crate::tr!(
                "cf.unknown_variant",
                variant = w,
                scenario = info.name,
                variants = info.variant_names().join(", ")
            ));
        };
        if !out.contains(&v.name) {
            out.push(v.name);
        }
    }
    // Variants run in their documented order whatever order they were named in.
    out.sort_by_key(|n| info.variants.iter().position(|v| v.name == *n));
    Ok(out)
}

/// The schema name goes into SQL and into connection options unquoted, so it
/// is held to plain lower-case identifiers.
pub fn check_schema(name: &str) -> Result<String> {
    let ok = !name.is_empty()
        && name.len() <= 40
        && name.starts_with(|c: char| c.is_ascii_lowercase() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !name.starts_with("pg_")
        && !matches!(name, "public" | "information_schema");
    if !ok {
        bail!(crate::tr!("cf.schema", name = name));
    }
    Ok(name.to_string())
}

/// Server selection: --database-url / DATABASE_URL, else the libpq variables
/// as psql reads them, else the throwaway cluster.
pub fn target(args: &ConnArgs, env: EnvLookup<'_>) -> Result<Target> {
    if let Some(url) = args.database_url.as_deref().filter(|u| !u.trim().is_empty()) {
        let mut config = tokio_postgres::Config::from_str(url.trim())
            // The parser's message never repeats the string; we do not either.
            .map_err(|e| anyhow::anyhow!(crate::tr!("cf.bad_url", error = e)))?;
        if config.get_password().is_none()
            && let Some(pw) = env("PGPASSWORD")
        {
            config.password(pw);
        }
        return Ok(Target::Server(Box::new(finish_config(config, env))));
    }
    let libpq = ["PGHOST", "PGPORT", "PGUSER", "PGDATABASE"];
    if libpq.iter().any(|v| env(v).is_some()) {
        let mut config = tokio_postgres::Config::new();
        if let Some(host) = env("PGHOST") {
            for h in host.split(',') {
                config.host(h.trim());
            }
        }
        if let Some(port) = env("PGPORT") {
            let port: u16 = port
                .trim()
                .parse()
                .map_err(|_| anyhow::anyhow!(crate::tr!("cf.bad_pgport", port = port)))?;
            config.port(port);
        }
        if let Some(user) = env("PGUSER") {
            config.user(&user);
        }
        if let Some(db) = env("PGDATABASE") {
            config.dbname(&db);
        }
        if let Some(pw) = env("PGPASSWORD") {
            config.password(pw);
        }
        return Ok(Target::Server(Box::new(finish_config(config, env))));
    }
    Ok(Target::Throwaway {
        pg_bin: args.local.pg_bin.clone(),
    })
}

/// A database URL (or key=value string) as lab reads it everywhere.
pub fn parse_url(url: &str, env: EnvLookup<'_>) -> Result<tokio_postgres::Config> {
    let conn = ConnArgs {
        database_url: Some(url.to_string()),
        local: LocalArgs {
            pg_bin: None,
            schema: "lab".into(),
        },
        keep_schema: false,
    };
    match target(&conn, env)? {
        Target::Server(c) => Ok(*c),
        Target::Throwaway { .. } => bail!(crate::tr!("cf.no_url")),
    }
}

/// Fills in what libpq would: host, user, and a connect timeout so an
/// unreachable server fails in seconds rather than minutes.
fn finish_config(mut config: tokio_postgres::Config, env: EnvLookup<'_>) -> tokio_postgres::Config {
    if config.get_hosts().is_empty() {
        let socket_dir = ["/var/run/postgresql", "/tmp"]
            .into_iter()
            .find(|d| std::path::Path::new(d).is_dir());
        match socket_dir {
            Some(dir) if std::path::Path::new(dir).join(".s.PGSQL.5432").exists() => {
                config.host_path(dir);
            }
            _ => {
                config.host("localhost");
            }
        }
    }
    if config.get_user().is_none() {
        let user = env("USER").unwrap_or_else(|| "postgres".to_string());
        config.user(&user);
    }
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(Duration::from_secs(5));
    }
    config
}

/// The throwaway cluster's options, for `lab server`.
pub fn local(args: &LocalArgs) -> Result<(Option<PathBuf>, String)> {
    Ok((args.pg_bin.clone(), check_schema(&args.schema)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn conn(url: Option<&str>) -> ConnArgs {
        ConnArgs {
            database_url: url.map(str::to_string),
            local: LocalArgs {
                pg_bin: None,
                schema: "lab".into(),
            },
            keep_schema: false,
        }
    }

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        move |k| map.get(k).cloned()
    }

    fn server(t: Target) -> tokio_postgres::Config {
        match t {
            Target::Server(c) => *c,
            Target::Throwaway { .. } => panic!("expected a server target"),
        }
    }

    #[test]
    fn url_wins_and_is_parsed() {
        let env = env_of(&[("PGHOST", "elsewhere")]);
        let c = server(target(&conn(Some("postgres://u:secret@db.example:6543/shop")), &env).unwrap());
        assert_eq!(c.get_user(), Some("u"));
        assert_eq!(c.get_password(), Some(&b"secret"[..]));
        assert_eq!(c.get_dbname(), Some("shop"));
        assert_eq!(c.get_ports(), &[6543]);
        assert_eq!(c.get_connect_timeout(), Some(&Duration::from_secs(5)));
    }

    #[test]
    fn key_value_strings_work_and_pgpassword_fills_in() {
        let env = env_of(&[("PGPASSWORD", "pw")]);
        let c = server(target(&conn(Some("host=127.0.0.1 port=5433 user=bob dbname=x")), &env).unwrap());
        assert_eq!(c.get_user(), Some("bob"));
        assert_eq!(c.get_password(), Some(&b"pw"[..]));
    }

    #[test]
    fn malformed_url_is_an_error_without_the_secret() {
        let err = target(&conn(Some("postgres://u:hunter2@host:notaport/db")), &env_of(&[]))
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("malformed database URL"), "{err}");
        assert!(!err.contains("hunter2"), "{err}");
    }

    #[test]
    fn libpq_variables_select_a_server() {
        let env = env_of(&[
            ("PGHOST", "10.1.2.3"),
            ("PGPORT", "5544"),
            ("PGUSER", "app"),
            ("PGDATABASE", "shop"),
        ]);
        let c = server(target(&conn(None), &env).unwrap());
        assert_eq!(c.get_ports(), &[5544]);
        assert_eq!(c.get_user(), Some("app"));
        assert_eq!(c.get_dbname(), Some("shop"));
        let bad = target(&conn(None), &env_of(&[("PGPORT", "x")])).unwrap_err();
        assert!(bad.to_string().contains("PGPORT"));
    }

    #[test]
    fn nothing_set_means_the_throwaway_cluster() {
        // PGPASSWORD alone names no server.
        let t = target(&conn(None), &env_of(&[("PGPASSWORD", "pw")])).unwrap();
        assert!(matches!(t, Target::Throwaway { pg_bin: None }));
        let blank = target(&conn(Some("  ")), &env_of(&[])).unwrap();
        assert!(matches!(blank, Target::Throwaway { .. }));
    }

    #[test]
    fn queue_ideal_time_is_the_work_spread_over_workers() {
        let p = QueueParams::default();
        assert_eq!(p.ideal(), Duration::from_millis(500));
        let odd = QueueParams { messages: 1001, ..p };
        assert_eq!(
            odd.ideal(),
            Duration::from_millis(505),
            "a partial batch still costs a whole one"
        );
    }

    #[test]
    fn schema_names_are_checked() {
        assert!(check_schema("lab").is_ok());
        assert!(check_schema("lab_room_2").is_ok());
        for bad in [
            "",
            "Lab",
            "public",
            "pg_lab",
            "lab-1",
            "1lab",
            "a;drop",
            &"x".repeat(41),
        ] {
            assert!(check_schema(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn variants_are_checked_and_kept_in_documented_order() {
        let info = scenarios::find("lost-update").unwrap();
        let v = select_variants(info, &["atomic-update".into(), "read-committed".into()]).unwrap();
        assert_eq!(v, vec!["read-committed", "atomic-update"]);
        let err = select_variants(info, &["nope".into()]).unwrap_err().to_string();
        assert!(
            err.contains("unknown variant 'nope'") && err.contains("read-committed"),
            "{err}"
        );
        assert_eq!(select_variants(info, &[]).unwrap().len(), info.variants.len());
    }
}
