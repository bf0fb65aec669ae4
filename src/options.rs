//! Options several commands take, declared once here and flattened into
//! each command's arguments (sqlx-cli's pattern), with the checks they
//! share. A command says what a shared option means for it with
//! `#[command(mut_arg(..))]` beside its own arguments.
//!
//! The checks here are pure (values in, values or an error out); what needs
//! a file or the terminal ([`Shared::start`]) runs where the run starts.
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Result, bail};
use clap::{Args, ValueEnum};

use crate::baseline::{Baseline, Kind};
use crate::files::LabFiles;
use crate::harness::Common;
use crate::i18n::{Context, Lang};
use crate::postgres::RunOn;
use crate::postgres::conninfo::EnvLookup;

/// A command's arguments, run: checked into its configuration, its run
/// started where it reads files, its exit code. `cli::Command` calls it.
pub trait Run {
    fn run(self, cx: &Invocation<'_>) -> Result<crate::output::Exit>;
}

/// What a command is run with besides its arguments.
pub struct Invocation<'a> {
    pub lang: Lang,
    /// The environment, as libpq and lab read it.
    pub env: EnvLookup<'a>,
    /// The whole command line as clap sees it in `lang` (the completions write it).
    pub command: &'a dyn Fn(Lang) -> clap::Command,
}

impl<T: Run> Run for Box<T> {
    fn run(self, cx: &Invocation<'_>) -> Result<crate::output::Exit> {
        (*self).run(cx)
    }
}

/// What every command that runs against a server takes: where, every
/// wait's deadline, and the report files besides stdout.
#[derive(Debug, Clone, Args)]
pub struct CommonArgs {
    #[command(flatten)]
    pub reports: ReportArgs,

    #[command(flatten)]
    pub wait: WaitArgs,

    #[command(flatten)]
    pub server: ServerArgs,
}

/// Where a run goes: a server, or the throwaway cluster.
#[derive(Debug, Clone, Args)]
pub struct ServerArgs {
    #[command(flatten)]
    pub url: UrlArgs,

    #[command(flatten)]
    pub local: LocalArgs,
}

/// The server named.
#[derive(Debug, Clone, Args)]
pub struct UrlArgs {
    /// PostgreSQL URL or key=value connection string. Without it (and without
    /// PGSERVICE/PGHOST/PGPORT/PGUSER/PGDATABASE) a throwaway cluster is started.
    #[arg(long, env = "DATABASE_URL", hide_env_values = true, value_name = "URL")]
    pub database_url: Option<String>,
}

/// The throwaway cluster's options (shared with `lab server`).
#[derive(Debug, Clone, Args)]
pub struct LocalArgs {
    /// Directory holding initdb and postgres for the throwaway cluster.
    #[arg(long, env = "LAB_PG_BIN", value_name = "DIR")]
    pub pg_bin: Option<PathBuf>,

    /// The throwaway cluster speaks TLS only (ssl=on, plaintext refused), with
    /// a CA and certificate lab makes for the run and removes after it.
    #[arg(long)]
    pub tls: bool,
}

/// The lab schema's name (shared with `lab server`).
#[derive(Debug, Clone, Args)]
pub struct SchemaArgs {
    /// Schema the lab creates, uses and drops. A second run against the same
    /// server and schema is refused while the first is running.
    #[arg(long, env = "LAB_SCHEMA", default_value = "lab", value_name = "NAME")]
    pub schema: String,
}

/// The lab schema of a run that drops it afterwards, or keeps it.
#[derive(Debug, Clone, Args)]
pub struct LabSchemaArgs {
    #[command(flatten)]
    pub name: SchemaArgs,

    /// Keep the lab schema after the run, as the run left it (by default it is
    /// dropped, or made again with its seed rows if it was there before).
    #[arg(long)]
    pub keep_schema: bool,
}

/// The report files a run writes besides stdout.
#[derive(Debug, Clone, Args)]
pub struct ReportArgs {
    /// Also write a JUnit XML report to FILE.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,

    /// Also write a self-contained HTML report to FILE.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

/// Every wait's deadline.
#[derive(Debug, Clone, Args)]
pub struct WaitArgs {
    /// Deadline, in seconds, for any one step.
    #[arg(long, default_value = "10", value_name = "SECONDS")]
    pub wait_timeout: Option<f64>,
}

/// How many units of work run at once.
#[derive(Debug, Clone, Args)]
pub struct JobsArgs {
    /// Units of work run at once.
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
}

/// An earlier run to compare with.
#[derive(Debug, Clone, Args)]
pub struct BaselineArgs {
    /// Compare with an earlier run's JSON instead of with the documentation:
    /// exit 1 only where a verdict, a wait, a SQLSTATE or a counted metric differs.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
}

/// Edited copies of lab's files.
#[derive(Debug, Clone, Args)]
pub struct LabDirArgs {
    /// Lab's files from edited copies in DIR (a file DIR does not have comes from lab's own).
    #[arg(long, env = "LAB_DIR", value_name = "DIR")]
    pub lab_dir: Option<PathBuf>,
}

/// The output format of the scenarios and the phenomena.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Table,
    Json,
    /// A Mermaid sequenceDiagram per variant, in Markdown, for GitHub issues and pull requests.
    Mermaid,
    /// The verdicts as a Markdown table (a GitHub job's step summary).
    Markdown,
}

/// The output format of `lab spec` and `lab explore`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SpecFormat {
    Table,
    Json,
    Isolation,
    /// The verdicts as a Markdown table (a GitHub job's step summary).
    Markdown,
}

/// Which server a run wants, checked, not yet looked up (looking it up reads
/// libpq's files: the password file, the service file).
#[derive(Debug, Clone, Default)]
pub struct ServerWanted {
    pub url: Option<String>,
    pub pg_bin: Option<PathBuf>,
    /// `--tls`: lab's own cluster speaks TLS only (refused with a server named).
    pub tls: bool,
    /// Variables that stand in for the environment's (None: as if unset):
    /// pg_regress's --host, --port and --user.
    pub overlay: Vec<(&'static str, Option<String>)>,
    /// The throwaway cluster whatever the environment says (pg_regress's --temp-instance).
    pub throwaway: bool,
    /// Appended to the throwaway cluster's postgresql.conf: this text, then these files.
    pub conf: String,
    pub conf_files: Vec<PathBuf>,
}

impl ServerWanted {
    pub fn of(args: &ServerArgs) -> ServerWanted {
        ServerWanted {
            url: args.url.database_url.clone(),
            pg_bin: args.local.pg_bin.clone(),
            tls: args.local.tls,
            ..ServerWanted::default()
        }
    }

    /// The server: the URL, else a libpq service and the libpq variables,
    /// else the throwaway cluster.
    pub fn resolve(&self, env: EnvLookup<'_>, lang: Lang) -> Result<RunOn> {
        let conf = || -> Result<String> {
            let mut conf = self.conf.clone();
            for f in &self.conf_files {
                let text =
                    std::fs::read_to_string(f).map_err(|e| msg::unreadable(f.display().to_string(), e.to_string()))?;
                conf.push_str(&text);
                conf.push('\n');
            }
            Ok(conf)
        };
        if self.throwaway {
            return Ok(RunOn::Throwaway {
                pg_bin: self.pg_bin.clone(),
                conf: conf()?,
                tls: self.tls,
            });
        }
        let lookup = |name: &str| match self.overlay.iter().find(|(k, _)| *k == name) {
            Some((_, v)) => v.clone(),
            None => env(name),
        };
        Ok(
            match crate::postgres::conninfo::resolve(self.url.as_deref(), self.pg_bin.as_deref(), &lookup, lang)? {
                RunOn::Throwaway { pg_bin, .. } => RunOn::Throwaway {
                    pg_bin,
                    conf: conf()?,
                    tls: self.tls,
                },
                server => crate::postgres::conninfo::own_tls(server, self.tls)?,
            },
        )
    }
}

/// What every run that talks to a server has, checked but not yet read:
/// [`Shared::start`] reads what it names where the run starts.
pub struct Shared {
    pub lang: Lang,
    pub server: ServerWanted,
    /// Every wait's deadline.
    pub wait_timeout: Duration,
    /// A person presses Enter before each statement.
    pub step: bool,
    /// With `step`: the person guesses what each statement will do first.
    pub predict: bool,
    pub junit: Option<PathBuf>,
    pub html: Option<PathBuf>,
    /// `--baseline FILE`, with the names the run will report and their kind.
    pub baseline: Option<(PathBuf, Vec<String>, Kind)>,
}

impl Shared {
    pub fn new(lang: Lang, server: ServerWanted, wait_timeout: Duration) -> Shared {
        Shared {
            lang,
            server,
            wait_timeout,
            step: false,
            predict: false,
            junit: None,
            html: None,
            baseline: None,
        }
    }

    pub fn reports(self, args: &ReportArgs) -> Shared {
        Shared {
            junit: args.junit.clone(),
            html: args.html.clone(),
            ..self
        }
    }

    /// Where the run starts: --step needs a terminal, the report files must
    /// be writable (refused now, not found after the whole run), the
    /// baseline is read and checked, the server looked up.
    pub fn start(&self, env: EnvLookup<'_>) -> Result<Common> {
        if self.step && !std::io::IsTerminal::is_terminal(&std::io::stdin()) {
            bail!(msg::step_needs_terminal());
        }
        writable(&self.junit, crate::output::msg::junit)?;
        writable(&self.html, crate::render::html::msg::could_not_write)?;
        // GitHub Actions sets it for every step: the run's summary goes there.
        let step_summary = env("GITHUB_STEP_SUMMARY").filter(|p| !p.is_empty()).map(PathBuf::from);
        writable(&step_summary, crate::harness::msg::step_summary)?;
        let baseline = match &self.baseline {
            Some((path, names, kind)) => {
                let b = Baseline::load(path)?;
                b.check_kind(*kind)?;
                b.check_names(names)?;
                Some(Arc::new(b))
            }
            None => None,
        };
        Ok(Common {
            lang: self.lang,
            run_on: self.server.resolve(env, self.lang)?,
            wait_timeout: self.wait_timeout,
            step: self.step,
            predict: self.predict,
            junit: self.junit.clone(),
            html: self.html.clone(),
            baseline,
            step_summary,
        })
    }
}

/// A report file's path, checked before the run (not found unwritable after
/// it); a file that was not there is not left behind.
pub fn writable(path: &Option<PathBuf>, what: fn(String) -> crate::i18n::Text) -> Result<()> {
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
    Ok(())
}

/// A step's deadline, in seconds: 0.1 to 3600.
pub fn deadline(secs: f64) -> Result<Duration> {
    if !(secs.is_finite() && (0.1..=3600.0).contains(&secs)) {
        bail!(msg::between("--wait-timeout", 0.1, 3600));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// lab's files: edited copies from `--lab-dir` where given, else its own.
pub fn lab_files(args: &LabDirArgs) -> Result<LabFiles> {
    LabFiles::of(args.lab_dir.as_deref())
}

/// The machine's cores (2 when it cannot tell).
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
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

/// Whether `dir` is a directory (checked before anything runs).
pub fn is_dir(dir: &Path) -> bool {
    dir.is_dir()
}

pub mod msg {
    crate::messages! {
        prefix "cf";
        step_needs_terminal() {
            en: "--step waits for Enter before each step, so it needs a terminal on stdin; run it without --step or from a terminal",
            tr: "--step her adımdan önce Enter bekler, bu yüzden stdin'de bir terminal ister; --step olmadan ya da bir terminalden çalıştırın",
        }
        schema(name) {
            en: "--schema '{name}' is not usable: use a new lower-case name of letters, digits and _ (not public, information_schema or pg_*)",
            tr: "--schema '{name}' kullanılamaz: harf, rakam ve _ içeren yeni, küçük harfli bir ad kullanın (public, information_schema ya da pg_* değil)",
        }
        unreadable(path, error) {
            en: "{path}: cannot read it: {error}",
            tr: "{path}: okunamıyor: {error}",
        }
        between(flag, min, max) {
            en: "{flag} must be between {min} and {max}",
            tr: "{flag} {min} ile {max} arasında olmalı",
        }
    }
}
#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn conn(url: Option<&str>) -> ServerWanted {
        ServerWanted {
            url: url.map(str::to_string),
            ..ServerWanted::default()
        }
    }

    fn target(wanted: &ServerWanted, env: EnvLookup<'_>, lang: Lang) -> Result<RunOn> {
        wanted.resolve(env, lang)
    }

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        move |k| map.get(k).cloned()
    }

    fn server(t: RunOn) -> crate::postgres::ConnInfo {
        match t {
            RunOn::Server(c, _) => *c,
            RunOn::Throwaway { .. } => panic!("expected a server target"),
        }
    }

    #[test]
    fn url_wins_and_is_parsed() {
        let env = env_of(&[("PGHOST", "elsewhere")]);
        let c = server(target(&conn(Some("postgres://u:secret@db.example:6543/shop")), &env, Lang::En).unwrap());
        assert_eq!(c.get_user(), Some("u"));
        assert_eq!(c.get_password(), Some(&b"secret"[..]));
        assert_eq!(c.get_dbname(), Some("shop"));
        assert_eq!(c.get_ports(), &[6543]);
        assert_eq!(c.get_connect_timeout(), Some(&Duration::from_secs(5)));
    }

    #[test]
    fn key_value_strings_work_and_pgpassword_fills_in() {
        let env = env_of(&[("PGPASSWORD", "pw")]);
        let c = server(
            target(
                &conn(Some("host=127.0.0.1 port=5433 user=bob dbname=x")),
                &env,
                Lang::En,
            )
            .unwrap(),
        );
        assert_eq!(c.get_user(), Some("bob"));
        assert_eq!(c.get_password(), Some(&b"pw"[..]));
    }

    #[test]
    fn tls_that_cannot_be_verified_is_refused_by_name_without_the_secret() {
        for (url, env, says) in [
            (
                "postgres://u:hunter2@h/db?sslmode=verify-full",
                vec![],
                "sslmode in --database-url=verify-full: root certificate file",
            ),
            (
                "host=h password=hunter2 sslmode=verify-ca",
                vec![],
                "sslmode in --database-url=verify-ca: root certificate file",
            ),
            (
                "postgres://u:hunter2@h/db",
                vec![("PGSSLMODE", "verify-full")],
                "PGSSLMODE=verify-full: root certificate file",
            ),
        ] {
            let err = target(&conn(Some(url)), &env_of(&env), Lang::En).unwrap_err();
            let err = crate::i18n::error_line(&err, Lang::En);
            assert!(err.starts_with(says), "{url}: {err}");
            assert!(!err.contains("hunter2"), "{err}");
        }
        for url in [
            "postgres://h/db?sslmode=disable",
            "postgres://h/db?sslmode=prefer",
            "postgres://h/db?sslmode=require",
        ] {
            assert!(target(&conn(Some(url)), &env_of(&[]), Lang::En).is_ok(), "{url}");
        }
    }

    #[test]
    fn malformed_url_is_an_error_without_the_secret() {
        let err = target(
            &conn(Some("postgres://u:hunter2@host:notaport/db")),
            &env_of(&[]),
            Lang::En,
        )
        .unwrap_err();
        let err = crate::i18n::error_line(&err, Lang::En);
        // What is at fault is named (the part, never its value).
        assert!(err.starts_with("port in --database-url: invalid value"), "{err}");
        assert!(!err.contains("hunter2"), "{err}");
        for (url, says) in [
            ("postgrs://u:hunter2@h/db", "its scheme is 'postgrs'"),
            (
                "postgres://u:hunter2@h/db?sslmode=hunter2",
                "sslmode in --database-url: invalid value",
            ),
            (
                "host=h password=hunter2 bogus=1",
                "bogus in --database-url is not a libpq connection option",
            ),
        ] {
            let err = target(&conn(Some(url)), &env_of(&[]), Lang::En).unwrap_err();
            let err = crate::i18n::error_line(&err, Lang::En);
            assert!(err.contains(says), "{url}: {err}");
            assert!(!err.contains("hunter2"), "{err}");
        }
    }

    #[test]
    fn libpq_variables_select_a_server() {
        let env = env_of(&[
            ("PGHOST", "10.1.2.3"),
            ("PGPORT", "5544"),
            ("PGUSER", "app"),
            ("PGDATABASE", "shop"),
        ]);
        let c = server(target(&conn(None), &env, Lang::En).unwrap());
        assert_eq!(c.get_ports(), &[5544]);
        assert_eq!(c.get_user(), Some("app"));
        assert_eq!(c.get_dbname(), Some("shop"));
        let bad = target(&conn(None), &env_of(&[("PGPORT", "x")]), Lang::En).unwrap_err();
        assert!(crate::i18n::error_line(&bad, Lang::En).contains("PGPORT"));
    }

    #[test]
    fn nothing_set_means_the_throwaway_cluster() {
        // PGPASSWORD alone names no server.
        let t = target(&conn(None), &env_of(&[("PGPASSWORD", "pw")]), Lang::En).unwrap();
        assert!(matches!(t, RunOn::Throwaway { pg_bin: None, .. }));
        // Set but empty is an error: an unset CI secret must not pass against the wrong server.
        let blank = target(&conn(Some("  ")), &env_of(&[]), Lang::En).unwrap_err();
        assert!(crate::i18n::error_line(&blank, Lang::En).starts_with("--database-url is set but empty"));
        let unset_secret = target(&conn(None), &env_of(&[("DATABASE_URL", "")]), Lang::En).unwrap_err();
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
}
