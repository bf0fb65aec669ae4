//! Turns the command line (and the environment) into a checked run
//! configuration. Everything here is pure, so it is unit-tested without I/O.
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use anyhow::{Result, bail};

use crate::catalogue::{self, Params, RunOpts, Scenario, Variant};
use crate::cli::{ConnArgs, Format, LocalArgs, RunArgs};
use crate::files::LabFiles;
use crate::i18n::{Context, Lang};
use crate::progress::Progress;
use crate::retry::RetryPolicy;
use std::io::IsTerminal;

/// Where the lab runs.
#[derive(Clone)]
pub enum Target {
    /// A server the user named (URL, key=value string, service or libpq
    /// variables), and where lab found it (for messages).
    Server(Box<tokio_postgres::Config>, String),
    /// The throwaway cluster, from these binaries or the ones found on the machine.
    Throwaway { pg_bin: Option<PathBuf> },
}

impl std::fmt::Debug for Target {
    // Never print a Config: it holds the password.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Target::Server(_, origin) => write!(f, "Server(.., {origin})"),
            Target::Throwaway { pg_bin } => write!(f, "Throwaway {{ pg_bin: {pg_bin:?} }}"),
        }
    }
}

/// One scenario of a run: the variants to run, with its options.
pub struct Planned {
    pub scenario: &'static Scenario,
    pub variants: Vec<&'static Variant>,
    pub params: Params,
}

/// A checked configuration for one `lab <scenario>` or `lab all` run.
pub struct RunConfig {
    pub lang: Lang,
    pub explain: bool,
    pub step: bool,
    pub target: Target,
    pub schema: String,
    pub keep_schema: bool,
    pub format: Format,
    /// Only the verdict table.
    pub summary: bool,
    /// Every step of long timelines.
    pub verbose: bool,
    /// The most connections the run may use, the control connection included.
    pub max_connections: Option<usize>,
    /// Scenarios run at once (`lab all`).
    pub jobs: usize,
    /// Sessions go through lab's own PgBouncer (transaction mode).
    pub pooler: bool,
    pub junit: Option<PathBuf>,
    pub html: Option<PathBuf>,
    pub wait_timeout: Duration,
    pub opts: RunOpts,
    /// The scenarios to run, in order.
    pub plan: Vec<Planned>,
}

impl RunConfig {
    /// `lab <scenario>`: its variants (all unless --variant), its options.
    pub fn for_scenario(
        scenario: &'static Scenario,
        args: &RunArgs,
        params: Params,
        env: EnvLookup<'_>,
        lang: Lang,
    ) -> Result<RunConfig> {
        let variants = select_variants(scenario, &args.variants)?;
        RunConfig::new(
            args,
            vec![Planned {
                scenario,
                variants,
                params,
            }],
            env,
            lang,
        )
    }

    /// `lab all`: every scenario (or those `--variant SCENARIO[/VARIANT]`
    /// names), every variant unless named, default options.
    pub fn for_all(args: &RunArgs, env: EnvLookup<'_>, lang: Lang) -> Result<RunConfig> {
        let mut wanted: Vec<(&'static Scenario, Option<String>)> = Vec::new();
        for w in &args.variants {
            let (name, variant) = match w.split_once('/') {
                Some((s, v)) => (s, Some(v.to_string())),
                None => (w.as_str(), None),
            };
            let scenario = catalogue::find(name).ctx(|| msg::variant_with_all(w))?;
            wanted.push((scenario, variant));
        }
        let plan = catalogue::ALL
            .iter()
            .copied()
            .filter(|s| wanted.is_empty() || wanted.iter().any(|(w, _)| std::ptr::eq(*w, *s)))
            .map(|s| {
                let mine: Vec<&Option<String>> = wanted
                    .iter()
                    .filter(|(w, _)| std::ptr::eq(*w, s))
                    .map(|(_, v)| v)
                    .collect();
                // A bare scenario name selects all of its variants.
                let names: Vec<String> = if mine.iter().any(|v| v.is_none()) {
                    Vec::new()
                } else {
                    mine.into_iter().flatten().cloned().collect()
                };
                Ok(Planned {
                    scenario: s,
                    variants: select_variants(s, &names)?,
                    params: s.default_params()?,
                })
            })
            .collect::<Result<_>>()?;
        RunConfig::new(args, plan, env, lang)
    }

    fn new(args: &RunArgs, plan: Vec<Planned>, env: EnvLookup<'_>, lang: Lang) -> Result<RunConfig> {
        if !(args.wait_timeout.is_finite() && args.wait_timeout > 0.0 && args.wait_timeout <= 3600.0) {
            bail!(msg::wait_timeout());
        }
        if args.retry_attempts == 0 || args.retry_attempts > 100 {
            bail!(crate::catalogue::cx::msg::between("--retry-attempts", 1, 100));
        }
        if args.retry_base_ms > args.retry_cap_ms || args.retry_cap_ms > 60_000 {
            bail!(msg::retry_base());
        }
        if args.timeout_ms < 10 || args.timeout_ms > 60_000 {
            bail!(crate::catalogue::cx::msg::between("--timeout-ms", 10, 60_000));
        }
        if Duration::from_millis(args.timeout_ms) * 3 > Duration::from_secs_f64(args.wait_timeout) {
            bail!(msg::wait_vs_timeout());
        }
        if args.step && !std::io::stdin().is_terminal() {
            bail!(msg::step_needs_terminal());
        }
        // A person is in the loop: the deadlines wait for them too.
        let wait_timeout = if args.step {
            Duration::from_secs_f64(args.wait_timeout).max(Duration::from_secs(3600))
        } else {
            Duration::from_secs_f64(args.wait_timeout)
        };
        let files = match &args.lab_dir {
            Some(dir) => LabFiles::with_dir(dir)?,
            None => LabFiles::embedded(),
        };
        Ok(RunConfig {
            lang,
            explain: args.explain,
            step: args.step,
            target: target(&args.conn, env)?,
            schema: check_schema(&args.conn.local.schema)?,
            keep_schema: args.conn.keep_schema,
            format: args.format,
            summary: args.summary,
            verbose: args.verbose,
            jobs: match args.jobs {
                Some(0) => bail!(crate::catalogue::cx::msg::between("--jobs", 1, 64)),
                // A person steps through one scenario at a time.
                Some(_) if args.step => 1,
                Some(n) => n.min(64),
                None if args.step || args.max_connections.is_some() => 1,
                None => DEFAULT_JOBS,
            },
            // Missing pgbouncer is found before any server starts.
            pooler: match args.pooler {
                true => crate::target::pgbouncer::find_bin().map(|_| true)?,
                false => false,
            },
            max_connections: match args.max_connections {
                Some(n) if n < MIN_CONNECTIONS => bail!(msg::too_few_connections(n, MIN_CONNECTIONS)),
                n => n,
            },
            // An unwritable path is refused now, not found after the whole run.
            junit: junit_path(&args.junit)?,
            html: html_path(&args.html)?,
            wait_timeout,
            opts: RunOpts {
                timeout: Duration::from_millis(args.timeout_ms),
                retry: RetryPolicy {
                    max_attempts: args.retry_attempts,
                    base: Duration::from_millis(args.retry_base_ms),
                    cap: Duration::from_millis(args.retry_cap_ms),
                },
                files,
                progress: Progress::for_stderr(lang, args.step),
            },
            plan,
        })
    }
}

fn select_variants(s: &'static Scenario, wanted: &[String]) -> Result<Vec<&'static Variant>> {
    if wanted.is_empty() {
        return Ok(s.variants.iter().collect());
    }
    let mut out: Vec<&'static Variant> = Vec::new();
    for w in wanted {
        let v = s
            .variant(w)
            .ctx(|| msg::unknown_variant(w, s.name, s.variant_names().join(", ")))?;
        if !out.iter().any(|x| std::ptr::eq(*x, v)) {
            out.push(v);
        }
    }
    // Variants run in their documented order whatever order they were named in.
    out.sort_by_key(|v| s.variants.iter().position(|x| std::ptr::eq(x, *v)));
    Ok(out)
}

/// Scenarios `lab all` runs at once by default: they mostly wait on the server.
pub const DEFAULT_JOBS: usize = 4;

/// The fewest connections a run can work with: the control connection and two sessions.
pub const MIN_CONNECTIONS: usize = 3;

/// Reads an environment variable; tests pass their own.
pub type EnvLookup<'a> = &'a dyn Fn(&str) -> Option<String>;

/// An environment variable, None when unset or empty; DATABASE_URL set but
/// empty is kept (Some("")): it is an error, not "no URL".
pub fn process_env(name: &str) -> Option<String> {
    std::env::var(name)
        .ok()
        .filter(|v| !v.is_empty() || name == "DATABASE_URL")
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
        bail!(msg::schema(name));
    }
    Ok(name.to_string())
}

/// Server selection: --database-url / DATABASE_URL, else a PGSERVICE
/// service and the libpq variables as psql reads them, else the throwaway
/// cluster. A URL that is set but empty (an unset CI secret) is an error, not
/// a quiet run on the throwaway cluster.
pub fn target(args: &ConnArgs, env: EnvLookup<'_>) -> Result<Target> {
    let from_env = env("DATABASE_URL");
    if let Some(url) = args.database_url.as_deref().or(from_env.as_deref()) {
        let origin = if args.database_url.is_some() && args.database_url != from_env {
            "--database-url"
        } else {
            "DATABASE_URL"
        };
        if url.trim().is_empty() {
            bail!(msg::empty_url(origin));
        }
        let mut config = tokio_postgres::Config::from_str(url.trim())
            // The parser's message never repeats the string; we do not either.
            .map_err(|e| msg::bad_url(e.to_string()))?;
        if config.get_password().is_none()
            && let Some(pw) = env("PGPASSWORD")
        {
            config.password(pw);
        }
        return Ok(Target::Server(Box::new(finish_config(config, env)), origin.to_string()));
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
        return Ok(Target::Throwaway {
            pg_bin: args.local.pg_bin.clone(),
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
    Ok(Target::Server(Box::new(finish_config(config, env)), origin.join(", ")))
}

/// The settings of a connection service, from the first service file that defines it.
fn apply_service(config: &mut tokio_postgres::Config, service: &str, env: EnvLookup<'_>) -> Result<()> {
    use crate::target::libpq;
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

/// A `--junit` path, checked before the run (not found unwritable after it);
/// a file that was not there is not left behind.
pub fn junit_path(path: &Option<PathBuf>) -> Result<Option<PathBuf>> {
    report_path(path, crate::msg::junit)
}

/// A `--html` path, checked the same way.
pub fn html_path(path: &Option<PathBuf>) -> Result<Option<PathBuf>> {
    report_path(path, crate::render::html::msg::could_not_write)
}

fn report_path(path: &Option<PathBuf>, what: fn(String) -> crate::i18n::Text) -> Result<Option<PathBuf>> {
    if let Some(p) = path {
        let existed = p.exists();
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(p)
            .ctx(|| what(p.display().to_string()))?;
        if !existed {
            let _ = std::fs::remove_file(p);
        }
    }
    Ok(path.clone())
}

/// The target of `lab spec` and `lab phenomena` (no lab schema of their own).
pub fn target_of(args: &crate::cli::TargetArgs, env: EnvLookup<'_>) -> Result<Target> {
    let conn = ConnArgs {
        database_url: args.database_url.clone(),
        local: LocalArgs {
            pg_bin: args.pg_bin.clone(),
            schema: "lab".into(),
        },
        keep_schema: false,
    };
    target(&conn, env)
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
        Target::Server(c, _) => Ok(*c),
        Target::Throwaway { .. } => bail!(msg::no_url()),
    }
}

/// Fills in what libpq would: host, user, the password from the password
/// file, and a connect timeout so an unreachable server fails in seconds
/// rather than minutes.
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
    if config.get_password().is_none() {
        fill_password_from_file(&mut config, env);
    }
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(Duration::from_secs(5));
    }
    config
}

/// The password from `~/.pgpass` (or PGPASSFILE), matched as libpq matches
/// it: on the first host, the port, the database and the user.
fn fill_password_from_file(config: &mut tokio_postgres::Config, env: EnvLookup<'_>) {
    use crate::target::libpq;
    let path = match libpq::pgpass_file(env) {
        Ok(Some(p)) => p,
        Ok(None) => return,
        Err(path) => {
            let args: Vec<String> = std::env::args().collect();
            eprintln!(
                "{}",
                msg::pgpass_open(path).render(crate::cli::language_of_args(&args, env))
            );
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

/// The throwaway cluster's options, for `lab server`.
pub fn local(args: &LocalArgs) -> Result<(Option<PathBuf>, String)> {
    Ok((args.pg_bin.clone(), check_schema(&args.schema)?))
}

pub(crate) mod msg {
    crate::messages! {
        prefix "cf";
        variant_with_all(given) {
            en: "unknown scenario in --variant '{given}': with `lab all` it is SCENARIO or SCENARIO/VARIANT (see lab list)",
            tr: "--variant '{given}' içinde bilinmeyen senaryo: `lab all` ile SENARYO ya da SENARYO/VARYANT olur (bkz. lab list)",
        }
        wait_timeout() {
            en: "--wait-timeout must be a number of seconds between 0 and 3600",
            tr: "--wait-timeout 0 ile 3600 arasında bir saniye değeri olmalı",
        }
        retry_base() {
            en: "--retry-base-ms must not exceed --retry-cap-ms, which must be at most 60000",
            tr: "--retry-base-ms, --retry-cap-ms'i aşmamalı; o da en fazla 60000 olabilir",
        }
        wait_vs_timeout() {
            en: "--wait-timeout must be at least three times --timeout-ms, so a timeout is seen before the deadline",
            tr: "--wait-timeout en az --timeout-ms'in üç katı olmalı, zaman aşımı son tarihten önce görülsün diye",
        }
        step_needs_terminal() {
            en: "--step waits for Enter before each step, so it needs a terminal on stdin; run it without --step or from a terminal",
            tr: "--step her adımdan önce Enter bekler, bu yüzden stdin'de bir terminal ister; --step olmadan ya da bir terminalden çalıştırın",
        }
        unknown_variant(variant, scenario, variants) {
            en: "unknown variant '{variant}' of {scenario} (its variants: {variants})",
            tr: "{scenario} senaryosunun bilinmeyen varyantı '{variant}' (varyantları: {variants})",
        }
        schema(name) {
            en: "--schema '{name}' is not usable: use a new lower-case name of letters, digits and _ (not public, information_schema or pg_*)",
            tr: "--schema '{name}' kullanılamaz: harf, rakam ve _ içeren yeni, küçük harfli bir ad kullanın (public, information_schema ya da pg_* değil)",
        }
        bad_url(error) {
            en: "malformed database URL: {error}",
            tr: "hatalı veritabanı URL'si: {error}",
        }
        bad_pgport(port) {
            en: "PGPORT '{port}' is not a port number",
            tr: "PGPORT '{port}' bir port numarası değil",
        }
        no_url() {
            en: "no database URL given",
            tr: "veritabanı URL'si verilmedi",
        }
        too_few_connections(n, min) {
            en: "--max-connections {n} is too few: a run needs at least {min} (the control connection and two sessions)",
            tr: "--max-connections {n} çok az: bir çalıştırma en az {min} bağlantı ister (kontrol bağlantısı ve iki oturum)",
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
            Target::Server(c, _) => *c,
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
        let err = target(&conn(Some("postgres://u:hunter2@host:notaport/db")), &env_of(&[])).unwrap_err();
        let err = crate::i18n::error_line(&err, Lang::En);
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
        assert!(crate::i18n::error_line(&bad, Lang::En).contains("PGPORT"));
    }

    #[test]
    fn nothing_set_means_the_throwaway_cluster() {
        // PGPASSWORD alone names no server.
        let t = target(&conn(None), &env_of(&[("PGPASSWORD", "pw")])).unwrap();
        assert!(matches!(t, Target::Throwaway { pg_bin: None }));
        // Set but empty is an error: an unset CI secret must not pass against the wrong server.
        let blank = target(&conn(Some("  ")), &env_of(&[])).unwrap_err();
        assert!(crate::i18n::error_line(&blank, Lang::En).starts_with("--database-url is set but empty"));
        let unset_secret = target(&conn(None), &env_of(&[("DATABASE_URL", "")])).unwrap_err();
        assert!(crate::i18n::error_line(&unset_secret, Lang::En).starts_with("DATABASE_URL is set but empty"));
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
        let info = catalogue::find("lost-update").unwrap();
        let v = select_variants(info, &["atomic-update".into(), "read-committed".into()]).unwrap();
        let names: Vec<&str> = v.iter().map(|v| v.name).collect();
        assert_eq!(names, vec!["read-committed", "atomic-update"]);
        let err = crate::i18n::error_line(&select_variants(info, &["nope".into()]).unwrap_err(), Lang::En);
        assert!(
            err.contains("unknown variant 'nope'") && err.contains("read-committed"),
            "{err}"
        );
        assert_eq!(select_variants(info, &[]).unwrap().len(), info.variants.len());
    }
}
