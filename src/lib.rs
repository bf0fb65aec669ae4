//! lab: PostgreSQL concurrency anomalies on demand. `main` parses the command
//! line and calls [`run`]; everything else lives here.
pub mod cli;
pub mod cluster;
pub mod config;
pub mod db;
pub mod engine;
pub mod i18n;
pub mod locks;
pub mod progress;
pub mod render;
pub mod report;
pub mod retry;
pub mod scenarios;
pub mod spec;
pub mod sql;

use std::io::Write;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use tokio::signal::unix::{Signal, SignalKind, signal};

use cli::{Cli, Command, Format};
use cluster::Cluster;
use config::{RunConfig, Target};
use engine::{Env, VariantCtx};
use i18n::{Lang, fill};
use render::Style;
use report::{AllReport, ScenarioReport, round_ms};

/// The documented exit codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Every variant showed its documented outcome.
    Ok = 0,
    /// At least one variant did not.
    Mismatch = 1,
    /// Could not run: usage, connection, an unexpected error.
    CouldNotRun = 2,
    /// Stopped by Ctrl-C or SIGTERM.
    Interrupted = 130,
}

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> ExitCode {
        ExitCode::from(e as u8)
    }
}

/// The language of a command line clap could not parse: its `--lang`, if it
/// has a readable one, else the environment's.
pub fn language_of_args(args: &[String]) -> Lang {
    use clap::ValueEnum;
    let given = args
        .iter()
        .enumerate()
        .find_map(|(i, a)| match a.strip_prefix("--lang") {
            Some("") => args.get(i + 1).cloned(),
            Some(v) => v.strip_prefix('=').map(str::to_string),
            None => None,
        });
    language(given.and_then(|v| Lang::from_str(&v, true).ok()))
}

/// The language to speak: --lang, else the environment's.
pub fn language(cli_lang: Option<Lang>) -> Lang {
    cli_lang.unwrap_or_else(|| Lang::from_env(&config::process_env))
}

/// `error: ...` with the cause chain, on one line.
pub fn print_error(err: &anyhow::Error, lang: Lang) {
    let text = format!("{err:#}").replace('\n', " ");
    eprintln!("{}: {text}", lang.texts().ui.error);
}

pub fn run(cli: Cli) -> Result<Exit> {
    let lang = language(cli.lang);
    i18n::set_current(lang);
    match &cli.command {
        Command::List(args) => {
            let style = Style {
                explain: args.explain,
                ..Style::for_stdout(lang, false)
            };
            out(&render::list(scenarios::ALL, &style));
            Ok(Exit::Ok)
        }
        Command::Completions { shell } => {
            // The descriptions shells show next to commands and options speak the run's language.
            let mut cmd = cli::command(lang);
            clap_complete::generate(*shell, &mut cmd, "lab", &mut std::io::stdout());
            Ok(Exit::Ok)
        }
        Command::Server(args) => {
            let (pg_bin, schema) = config::local(&args.local)?;
            runtime()?.block_on(serve(pg_bin, schema, lang))
        }
        Command::Locks(args) => {
            let target = args
                .database_url
                .as_deref()
                .filter(|u| !u.trim().is_empty())
                .context(lang.texts().ui.locks_needs_server)?;
            let config = config::parse_url(target, &config::process_env)?;
            if !(args.every.is_finite() && (0.1..=3600.0).contains(&args.every)) {
                bail!(crate::tr!("cf.between", flag = "--every", min = 0.1, max = 3600));
            }
            runtime()?.block_on(locks::watch(
                config,
                Duration::from_secs_f64(args.every),
                args.once,
                lang,
            ))
        }
        Command::All(args) => {
            let cfg = RunConfig::new(None, args, &config::process_env, lang)?;
            runtime()?.block_on(run_plan(cfg, true))
        }
        cmd => {
            let (name, args) = cmd.scenario().context(crate::tr!("ru.no_scenario"))?;
            let mut cfg = RunConfig::new(Some(name), args, &config::process_env, lang)?;
            match cmd {
                Command::Queue(q) => cfg.params.queue = config::QueueParams::from_args(q)?,
                Command::StockRace(s) => cfg.params.stock = config::StockParams::from_args(s)?,
                Command::InvoiceNumbering(i) => cfg.params.invoice = config::InvoiceParams::from_args(i)?,
                _ => {}
            }
            runtime()?.block_on(run_plan(cfg, false))
        }
    }
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context(crate::tr!("ru.runtime"))
}

/// Writes to stdout; a closed pipe (`lab all | head`) is not an error.
fn out(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(text.as_bytes()).and_then(|_| stdout.flush());
}

/// SIGINT and SIGTERM, registered before anything is started so that neither
/// can kill lab between starting a server and being ready to stop it.
struct Signals {
    int: Signal,
    term: Signal,
}

impl Signals {
    fn new() -> Result<Signals> {
        Ok(Signals {
            int: signal(SignalKind::interrupt()).context(crate::tr!("ru.signal", signal = "SIGINT"))?,
            term: signal(SignalKind::terminate()).context(crate::tr!("ru.signal", signal = "SIGTERM"))?,
        })
    }

    async fn recv(&mut self) {
        tokio::select! {
            _ = self.int.recv() => {}
            _ = self.term.recv() => {}
        }
    }
}

/// Starts the throwaway cluster when the target asks for one.
async fn start_target(target: &Target) -> Result<(Option<Cluster>, tokio_postgres::Config)> {
    match target {
        Target::Server(config) => Ok((None, (**config).clone())),
        Target::Throwaway { pg_bin } => {
            let pg_bin = pg_bin.clone();
            // Blocking work, but on this thread: the server's parent-death
            // signal is tied to the thread that starts it, which must outlive it.
            let cluster = tokio::task::block_in_place(|| Cluster::start(pg_bin.as_deref()))?;
            let config = cluster.config();
            Ok((Some(cluster), config))
        }
    }
}

async fn setup(cfg: &RunConfig, pg: tokio_postgres::Config) -> Result<Env> {
    let control = db::connect(&pg, &format!("lab:{}:control", cfg.schema), None).await?;
    let server = db::server_info(&control).await?;
    db::claim_schema(&control, &cfg.schema).await?;
    if cfg.step {
        // A person steps through the statements on this terminal: no bars over
        // the prompts, and statements keep where they come from (for their why).
        progress::turn_off();
        sql::track_origins();
    }
    Ok(Env {
        pg,
        schema: cfg.schema.clone(),
        wait_timeout: cfg.wait_timeout,
        control,
        server,
        retry: cfg.retry,
        timeout: cfg.timeout,
        params: cfg.params,
        stepper: cfg.step.then(Default::default),
    })
}

async fn run_plan(cfg: RunConfig, all: bool) -> Result<Exit> {
    let began = Instant::now();
    let style = Style::for_stdout(cfg.lang, cfg.explain);
    let mut signals = Signals::new()?;
    let (cluster, pg) = start_target(&cfg.target).await?;
    let env = tokio::select! {
        r = setup(&cfg, pg) => r?,
        _ = signals.recv() => return Ok(interrupted(cluster, cfg.lang)),
    };
    let result = tokio::select! {
        r = run_scenarios(&env, &cfg, &style) => Some(r),
        _ = signals.recv() => None,
    };
    let cleaned = tokio::time::timeout(cfg.wait_timeout, clean_up(&env, &cfg, !matches!(result, Some(Ok(_))))).await;
    if let (Some(Ok(_)), Ok(Err(e))) = (&result, cleaned) {
        print_error(&e.context(crate::tr!("ru.after_run")), cfg.lang);
    }
    drop(env);
    let reports = match result {
        None => return Ok(interrupted(cluster, cfg.lang)),
        Some(r) => r?,
    };
    drop(cluster);

    if let Some(path) = &cfg.junit {
        std::fs::write(path, render::junit(&reports)).with_context(|| crate::tr!("ru.junit", path = path.display()))?;
    }
    let as_expected = reports.iter().all(|r| r.as_expected);
    match (cfg.format, all) {
        (Format::Json, false) => out(&render::json(&reports[0])?),
        (Format::Json, true) => out(&render::json(&AllReport {
            server_version: reports.first().map(|r| r.server_version.clone()).unwrap_or_default(),
            as_expected,
            elapsed_ms: round_ms(began.elapsed().as_secs_f64() * 1000.0),
            scenarios: reports,
        })?),
        (Format::Table, true) => out(&render::all_summary(
            &AllReport {
                server_version: reports.first().map(|r| r.server_version.clone()).unwrap_or_default(),
                as_expected,
                elapsed_ms: round_ms(began.elapsed().as_secs_f64() * 1000.0),
                scenarios: reports,
            },
            &style,
        )),
        (Format::Table, false) => {}
    }
    Ok(if as_expected { Exit::Ok } else { Exit::Mismatch })
}

/// After a run: end the sessions (after a failure), drop the schema unless it
/// is kept, give the schema back. When the control connection is gone (the
/// server restarted, or its backend was terminated), a new one does it, once
/// it has claimed the schema again: if another run claimed it meanwhile, that
/// run's schema is left alone.
async fn clean_up(env: &Env, cfg: &RunConfig, failed: bool) -> Result<()> {
    let fresh;
    let control = if env.control.is_closed() {
        fresh = db::connect(&env.pg, &format!("lab:{}:control", cfg.schema), None).await?;
        if db::claim_schema(&fresh, &cfg.schema).await.is_err() {
            return Ok(());
        }
        &fresh
    } else {
        &env.control
    };
    if failed {
        env.terminate_sessions_via(control).await?;
    }
    if !cfg.keep_schema {
        db::drop_schema(control, &cfg.schema).await?;
    }
    db::release_schema(control, &cfg.schema).await
}

fn interrupted(cluster: Option<Cluster>, lang: Lang) -> Exit {
    drop(cluster);
    eprintln!("{}", lang.texts().ui.interrupted);
    Exit::Interrupted
}

async fn run_scenarios(env: &Env, cfg: &RunConfig, style: &Style) -> Result<Vec<ScenarioReport>> {
    let mut reports = Vec::new();
    for (info, variants) in &cfg.plan {
        let r = run_scenario(env, info, variants, cfg.lang).await?;
        if cfg.format == Format::Table {
            // Each scenario is shown as soon as it is done.
            out(&render::scenario(&r, style));
            out("\n");
        }
        reports.push(r);
    }
    Ok(reports)
}

/// Runs the given variants of one scenario, each on a freshly built schema.
pub async fn run_scenario(
    env: &Env,
    info: &'static scenarios::ScenarioInfo,
    variants: &[&'static str],
    lang: Lang,
) -> Result<ScenarioReport> {
    let began = Instant::now();
    let mut out = Vec::new();
    for variant in variants {
        // No spinner under --step: it would draw over the prompts.
        let spinner = if env.stepper.is_some() {
            indicatif::ProgressBar::hidden()
        } else {
            progress::spinner(format!("{} / {variant}", info.name))
        };
        db::rebuild_schema(&env.control, &env.schema).await?;
        let mut ctx = VariantCtx::new(env, info.name, variant);
        let r = scenarios::run_variant(&mut ctx).await;
        let report = ctx.close(r.is_err(), lang.texts().expected(info.name, variant)).await;
        spinner.finish_and_clear();
        r?;
        out.push(report?);
    }
    Ok(ScenarioReport {
        scenario: info.name.to_string(),
        server_version: env.server.version.clone(),
        as_expected: out.iter().all(|v| v.as_expected),
        elapsed_ms: round_ms(began.elapsed().as_secs_f64() * 1000.0),
        variants: out,
    })
}

/// `lab server`: the throwaway cluster with the lab schema, until Ctrl-C.
async fn serve(pg_bin: Option<std::path::PathBuf>, schema: String, lang: Lang) -> Result<Exit> {
    let ui = &lang.texts().ui;
    let mut signals = Signals::new()?;
    let (cluster, pg) = start_target(&Target::Throwaway { pg_bin }).await?;
    let cluster = cluster.context(crate::tr!("ru.no_cluster"))?;
    let control = db::connect(&pg, "lab:server", None).await?;
    let server = db::server_info(&control).await?;
    db::rebuild_schema(&control, &schema).await?;
    let url = cluster.url();
    let running = fill(
        ui.server_running,
        &[
            ("version", &server.version),
            ("ms", &cluster.startup.as_millis()),
            ("schema", &schema),
        ],
    );
    // The DATABASE_URL= and binaries: lines are read by scripts: they stay as they are.
    out(&format!(
        "{running}\n\
         binaries: {}\n\
         DATABASE_URL={url}\n\
         psql \"{url}?options=-csearch_path%3D{schema}\"\n\
         {}: lab <scenario> --database-url {url} --keep-schema\n\
         lab locks --database-url {url}\n\
         {}\n",
        cluster.bin.display(),
        ui.server_run_against,
        ui.server_stop,
    ));
    signals.recv().await;
    drop(control);
    drop(cluster);
    eprintln!("{}", ui.server_stopped);
    Ok(Exit::Ok)
}
