//! lab: PostgreSQL concurrency anomalies on demand. `main` parses the command
//! line and calls [`run`]; everything else lives here.
pub mod cli;
pub mod cluster;
pub mod config;
pub mod db;
pub mod engine;
pub mod progress;
pub mod render;
pub mod report;
pub mod retry;
pub mod scenarios;
pub mod sql;

use std::io::Write;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use tokio::signal::unix::{Signal, SignalKind, signal};

use cli::{Cli, Command, Format};
use cluster::Cluster;
use config::{RunConfig, Target};
use engine::{Env, VariantCtx};
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

/// `error: ...` with the cause chain, on one line.
pub fn print_error(err: &anyhow::Error) {
    let text = format!("{err:#}").replace('\n', " ");
    eprintln!("error: {text}");
}

pub fn run(cli: Cli) -> Result<Exit> {
    match &cli.command {
        Command::List => {
            out(&render::list(scenarios::ALL));
            Ok(Exit::Ok)
        }
        Command::Server(args) => {
            let (pg_bin, schema) = config::local(&args.local)?;
            runtime()?.block_on(serve(pg_bin, schema))
        }
        Command::All(args) => {
            let cfg = RunConfig::new(None, args, &config::process_env)?;
            runtime()?.block_on(run_plan(cfg, true))
        }
        cmd => {
            let (name, args) = cmd.scenario().context("no scenario given")?;
            let mut cfg = RunConfig::new(Some(name), args, &config::process_env)?;
            match cmd {
                Command::Queue(q) => cfg.params.queue = config::QueueParams::from_args(q)?,
                Command::StockRace(s) => cfg.params.stock = config::StockParams::from_args(s)?,
                Command::InvoiceNumbering(i) => {
                    cfg.params.invoice = config::InvoiceParams::from_args(i)?
                }
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
        .context("could not start the async runtime")
}

/// Writes to stdout; a closed pipe (`lab all | head`) is not an error.
fn out(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = stdout
        .write_all(text.as_bytes())
        .and_then(|_| stdout.flush());
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
            int: signal(SignalKind::interrupt()).context("could not watch for Ctrl-C")?,
            term: signal(SignalKind::terminate()).context("could not watch for SIGTERM")?,
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
    Ok(Env {
        pg,
        schema: cfg.schema.clone(),
        wait_timeout: cfg.wait_timeout,
        control,
        server,
        retry: cfg.retry,
        timeout: cfg.timeout,
        params: cfg.params,
    })
}

async fn run_plan(cfg: RunConfig, all: bool) -> Result<Exit> {
    let began = Instant::now();
    let mut signals = Signals::new()?;
    let (cluster, pg) = start_target(&cfg.target).await?;
    let env = tokio::select! {
        r = setup(&cfg, pg) => r?,
        _ = signals.recv() => return Ok(interrupted(cluster)),
    };
    let result = tokio::select! {
        r = run_scenarios(&env, &cfg) => Some(r),
        _ = signals.recv() => None,
    };
    if !matches!(result, Some(Ok(_))) {
        let _ = env.terminate_sessions().await;
    }
    if !cfg.keep_schema {
        let dropped =
            tokio::time::timeout(cfg.wait_timeout, db::drop_schema(&env.control, &cfg.schema))
                .await;
        if let (Some(Ok(_)), Ok(Err(e))) = (&result, dropped) {
            print_error(&e.context("after the run"));
        }
    }
    let _ = db::release_schema(&env.control, &cfg.schema).await;
    drop(env);
    let reports = match result {
        None => return Ok(interrupted(cluster)),
        Some(r) => r?,
    };
    drop(cluster);

    if let Some(path) = &cfg.junit {
        std::fs::write(path, render::junit(&reports))
            .with_context(|| format!("could not write the JUnit report to {}", path.display()))?;
    }
    let as_expected = reports.iter().all(|r| r.as_expected);
    match (cfg.format, all) {
        (Format::Json, false) => out(&render::json(&reports[0])),
        (Format::Json, true) => out(&render::json(&AllReport {
            server_version: reports
                .first()
                .map(|r| r.server_version.clone())
                .unwrap_or_default(),
            as_expected,
            elapsed_ms: round_ms(began.elapsed().as_secs_f64() * 1000.0),
            scenarios: reports,
        })),
        (Format::Table, true) => out(&render::all_summary(&AllReport {
            server_version: reports
                .first()
                .map(|r| r.server_version.clone())
                .unwrap_or_default(),
            as_expected,
            elapsed_ms: round_ms(began.elapsed().as_secs_f64() * 1000.0),
            scenarios: reports,
        })),
        (Format::Table, false) => {}
    }
    Ok(if as_expected {
        Exit::Ok
    } else {
        Exit::Mismatch
    })
}

fn interrupted(cluster: Option<Cluster>) -> Exit {
    drop(cluster);
    eprintln!("interrupted: sessions closed");
    Exit::Interrupted
}

async fn run_scenarios(env: &Env, cfg: &RunConfig) -> Result<Vec<ScenarioReport>> {
    let mut reports = Vec::new();
    for (info, variants) in &cfg.plan {
        let r = run_scenario(env, info, variants).await?;
        if cfg.format == Format::Table {
            // Each scenario is shown as soon as it is done.
            out(&render::scenario(&r));
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
) -> Result<ScenarioReport> {
    let began = Instant::now();
    let mut out = Vec::new();
    for variant in variants {
        let spinner = progress::spinner(format!("{} / {variant}", info.name));
        db::rebuild_schema(&env.control, &env.schema).await?;
        let mut ctx = VariantCtx::new(env, info.name, variant);
        let r = scenarios::run_variant(&mut ctx).await;
        let report = ctx.close(r.is_err(), info.expected(variant)).await;
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
async fn serve(pg_bin: Option<std::path::PathBuf>, schema: String) -> Result<Exit> {
    let mut signals = Signals::new()?;
    let (cluster, pg) = start_target(&Target::Throwaway { pg_bin }).await?;
    let cluster = cluster.expect("a throwaway target starts a cluster");
    let control = db::connect(&pg, "lab:server", None).await?;
    let server = db::server_info(&control).await?;
    db::rebuild_schema(&control, &schema).await?;
    let url = cluster.url();
    out(&format!(
        "PostgreSQL {} is running (ready in {} ms), with the lab schema \"{schema}\".\n\
         binaries: {}\n\
         DATABASE_URL={url}\n\
         psql \"{url}?options=-csearch_path%3D{schema}\"\n\
         Run scenarios against it with: lab <scenario> --database-url {url} --keep-schema\n\
         Stop with Ctrl-C.\n",
        server.version,
        cluster.startup.as_millis(),
        cluster.bin.display(),
    ));
    signals.recv().await;
    drop(control);
    drop(cluster);
    eprintln!("server stopped and removed");
    let _ = Duration::ZERO;
    Ok(Exit::Ok)
}
