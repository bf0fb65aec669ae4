//! One run, the same for every command that talks to a server: signals
//! watched before anything starts, the target started (the throwaway
//! cluster or the user's server), the control connection and the run's
//! [`Env`], the command's work raced against Ctrl-C, clean-up whatever
//! happened, then the outputs (stdout, JUnit, HTML; partial ones when the
//! run stopped part-way) and the exit code. What runs inside is a [`Job`]:
//! the scenarios, `lab spec`, `lab phenomena`.

use std::sync::Arc;
use std::time::Instant;

use anyhow::{Result, bail};
use tokio::signal::unix::{Signal, SignalKind, signal};

use crate::engine::env::EnvSpec;
use crate::engine::{Env, Stepper};
use crate::i18n::{Context, Lang, ui};
use crate::output::{self, Exit, is_closed_pipe, print_error};
use crate::postgres::RunOn;
use crate::postgres::cluster::Cluster;
use crate::postgres::connect;
use crate::render::{self, Style, html};
use crate::report::ScenarioReport;

/// What every run that talks to a server has, read and checked where the
/// run starts ([`crate::options::Shared::start`]).
pub struct Common {
    pub lang: Lang,
    /// The server: the one named, or the throwaway cluster.
    pub run_on: RunOn,
    /// Every wait's deadline.
    pub wait_timeout: std::time::Duration,
    /// A person presses Enter before each statement.
    pub step: bool,
    /// With `step`: the person guesses what each statement will do first.
    pub predict: bool,
    pub junit: Option<std::path::PathBuf>,
    pub html: Option<std::path::PathBuf>,
    /// `--baseline FILE`: the run is compared with that earlier run.
    pub baseline: Option<Arc<crate::baseline::Baseline>>,
    /// `$GITHUB_STEP_SUMMARY`: the file a GitHub Actions step's Markdown
    /// summary is appended to (the job's page shows it).
    pub step_summary: Option<std::path::PathBuf>,
}

/// How a run's environment is made on its control connection.
pub struct Setup {
    /// The control connection's application_name.
    pub control_app: String,
    /// The run's name (`lab:<run>:` prefixes its sessions' application_names).
    pub run: String,
    /// Where its objects live ("": the sessions keep the server's search_path).
    pub schema: String,
    /// lab's neutral settings on every connection (the spec runner keeps the server's, as isolationtester does).
    pub neutral: bool,
    pub max_connections: Option<usize>,
    /// The job can run through a transaction pooler of the user's (its
    /// sessions then carry their state with every transaction); any other
    /// refuses one before it starts.
    pub through_pooler: bool,
}

/// How a run ended, before its outputs are written.
pub enum Stop {
    Done,
    /// Ctrl-C or a signal; false when lab's clean-up got no answer from the
    /// server (what lab made there may still be there).
    Interrupted(bool),
    Failed(anyhow::Error),
}

impl Stop {
    /// The exit code of a run that stopped part-way, and the one line that says why.
    pub fn error(&self, lang: Lang) -> Option<(Exit, String)> {
        match self {
            Stop::Done => None,
            Stop::Interrupted(clean) => Some((Exit::Interrupted, interrupted(*clean).render(lang))),
            Stop::Failed(e) => Some((Exit::CouldNotRun, crate::i18n::error_line(e, lang))),
        }
    }
}

/// The line an interrupted run ends with.
fn interrupted(clean: bool) -> crate::i18n::Text {
    if clean {
        ui::interrupted()
    } else {
        ui::interrupted_unclean()
    }
}

/// What a job's run produced, for the harness to deliver.
pub struct Finished {
    /// One test suite each in JUnit, and what the HTML report shows.
    pub reports: Vec<ScenarioReport>,
    /// What the HTML report shows, when not `reports`.
    pub html_reports: Option<Vec<ScenarioReport>>,
    pub html: html::Kind,
    pub style: Style,
    /// Printed on stdout at the end (JSON, the summary table).
    pub stdout: String,
    /// Lines for stderr before the error line (pg_regress's summary).
    pub stderr: Vec<String>,
    pub as_expected: bool,
}

/// A command that runs inside the harness.
#[allow(async_fn_in_trait)]
pub trait Job {
    fn common(&self) -> &Common;
    fn setup(&self) -> Setup;
    /// On the control connection, before the work: claims, capacity, lab's pooler.
    async fn prepare(&self, env: Env) -> Result<Env> {
        Ok(env)
    }
    /// Whether Ctrl-C (SIGINT) stops the work; a command that reads its own
    /// Ctrl-C (the shell) says no, and SIGTERM and SIGHUP still stop it.
    fn interrupts(&self) -> bool {
        true
    }
    /// The work; what it finds is kept as it comes, so a run stopped part-way still reports it.
    async fn work(&self, env: &Arc<Env>) -> Result<()>;
    /// After the work, whatever happened (`failed`: it did not finish): what only this command made.
    async fn clean_up(&self, env: &Env, failed: bool) -> Result<()>;
    /// The outputs, given how the run ended and the server's version ("" if it was never reached).
    fn finish(&self, stop: &Stop, version: &str, began: Instant) -> Result<Finished>;
    /// The heading of the run's Markdown summary (`lab all`), appended to
    /// `$GITHUB_STEP_SUMMARY` where it is set; none: the command writes none.
    fn summary_title(&self) -> Option<String> {
        None
    }
}

/// Runs `job` start to end; the exit code, the error line printed.
pub async fn run<J: Job>(job: &J) -> Result<Exit> {
    let began = Instant::now();
    let mut signals = Signals::new()?;
    let (stop, version) = execute(job, &mut signals).await;
    let mut finished = job.finish(&stop, &version, began)?;
    if let (Some(base), Stop::Done) = (&job.common().baseline, &stop) {
        // Compared with the earlier run, not with the documentation.
        let now: Vec<serde_json::Value> = finished
            .reports
            .iter()
            .map(|r| serde_json::to_value(r).expect("a report serializes"))
            .collect();
        let (diffs, skipped) = crate::baseline::compare(base, &now);
        finished.stderr.push(crate::baseline::render(
            base,
            &version,
            &diffs,
            &skipped,
            &finished.style,
        ));
        finished.as_expected = diffs.is_empty();
    }
    let wall = began.elapsed();
    // GitHub Actions' step summary: the run as a Markdown table.
    let summary = job.summary_title().map(|title| {
        let run = crate::report::AllReport {
            server_version: version.clone(),
            as_expected: finished.as_expected && matches!(stop, Stop::Done),
            elapsed_ms: crate::report::millis(wall),
            scenarios: finished.reports.clone(),
        };
        render::markdown::summary(&title, &run, &Style::plain(finished.style.lang))
    });
    deliver(job.common(), finished, stop, wall, summary)
}

/// Starts the target, makes the environment, runs the work, cleans up and
/// stops the throwaway cluster; how it ended, and the server's version.
async fn execute<J: Job>(job: &J, signals: &mut Signals) -> (Stop, String) {
    let common = job.common();
    let (cluster, pg) = match start_target(&common.run_on, common.lang).await {
        Ok(t) => t,
        Err(e) => return (Stop::Failed(e), String::new()),
    };
    let env = tokio::select! {
        r = environment(job, pg, cluster.as_ref()) => r,
        _ = signals.recv() => return (Stop::Interrupted(true), String::new()),
    };
    let env = match env {
        Ok(env) => Arc::new(env),
        Err(e) => return (Stop::Failed(e), String::new()),
    };
    let version = env.server.version.clone();
    let result = tokio::select! {
        r = job.work(&env) => Some(r),
        _ = signals.recv_stop(job.interrupts()) => None,
    };
    let failed = !matches!(result, Some(Ok(_)));
    let mut env = env;
    let mut cleaned = tokio::time::timeout(common.wait_timeout, job.clean_up(&env, failed)).await;
    // The control connection lost (during the run or the clean-up): once
    // more, on a new one.
    if !matches!(cleaned, Ok(Ok(())))
        && let Some(fresh) = replace_lost_control(&env, &job.setup().control_app).await
    {
        env = Arc::new(fresh);
        cleaned = tokio::time::timeout(common.wait_timeout, job.clean_up(&env, failed)).await;
    }
    // The server (or the network to it) did not answer lab's clean-up, or
    // refused it: what lab made there may still be there, and lab says so
    // (in the error line of a run that failed, so that it stays one line).
    let unclean = match &cleaned {
        Ok(Ok(())) => None,
        _ if env.throwaway.is_some() => None,
        Ok(Err(e)) => Some(msg::clean_up_failed(crate::i18n::error_line(e, common.lang))),
        Err(_) => Some(msg::clean_up_unanswered(common.wait_timeout.as_secs_f64())),
    };
    match (&result, cleaned, &unclean) {
        (Some(Ok(_)), Ok(Err(e)), _) => print_error(&Err::<(), _>(e).ctx(msg::after_run).unwrap_err(), common.lang),
        (Some(Ok(_)), _, Some(why)) => crate::output::eline!("{}", msg::warning(why.clone()).render(common.lang)),
        _ => {}
    }
    drop(env);
    drop(cluster);
    let stop = match (result, unclean) {
        (None, unclean) => Stop::Interrupted(unclean.is_none()),
        (Some(Err(e)), Some(why)) => Stop::Failed(crate::i18n::Appended::to(e, why)),
        (Some(Err(e)), None) => Stop::Failed(e),
        (Some(Ok(())), _) => Stop::Done,
    };
    (stop, version)
}

/// The run's environment with a new control connection, when its own was
/// lost (the network to the server stopped answering it, or its backend
/// was ended), so that the clean-up can still drop what the run made; none
/// when the control connection answers, when lab's own server goes with
/// the run anyway, or when no new connection can be had.
async fn replace_lost_control(env: &Env, app: &str) -> Option<Env> {
    if env.throwaway.is_some() || !env.control_lost().await {
        return None;
    }
    let fresh = connect::connect_control(&env.pg, app, Some(&env.settings), env.control_silence())
        .await
        .ok()?;
    Some(env.with_new_control(fresh.client, app).await)
}

/// Whether the run still holds its schema's claim (see
/// [`connect::claim_schema`]) on its control connection: a replaced one
/// claims it again; when another run has claimed it meanwhile, that run's
/// schema is left alone.
pub async fn reclaim(env: &Env, schema: &str) -> bool {
    !env.control_replaced || connect::claim_schema(&env.control, schema).await.is_ok()
}

/// Whether the server has room for a run's connections besides its control
/// connection: at least `least` (else it is full: "wait, or free some"),
/// and `want` (else `fewer`, given how many there are, says what to ask for).
pub async fn check_room(
    env: &Env,
    least: usize,
    want: usize,
    fewer: impl FnOnce(i64) -> crate::i18n::Text,
) -> Result<()> {
    let free = connect::free_connections(&env.control).await?;
    if free < least as i64 {
        bail!(msg::server_full(free.max(0), least));
    }
    if free < want as i64 {
        bail!(fewer(free));
    }
    Ok(())
}

/// The control connection and the run's environment, prepared by the job.
async fn environment<J: Job>(job: &J, pg: crate::postgres::ConnInfo, cluster: Option<&Cluster>) -> Result<Env> {
    let common = job.common();
    let setup = job.setup();
    let silence = crate::postgres::watchdog::control_silence(common.wait_timeout);
    let (control, server) =
        connect::control(&common.run_on, &pg, &setup.control_app, setup.through_pooler, silence).await?;
    let env = Env::new(
        control,
        server,
        EnvSpec {
            pg,
            run: setup.run,
            schema: setup.schema,
            wait_timeout: common.wait_timeout,
            neutral: setup.neutral,
            stepper: common
                .step
                .then(|| Arc::new(Stepper::new(common.lang, render::outcome_in).predicting(common.predict))),
            max_connections: setup.max_connections,
            throwaway: cluster.map(|c| (c.bin.clone(), c.port)),
            own: cluster.map(Cluster::ctl),
        },
    )
    .await?;
    job.prepare(env).await
}

/// Writes the report files and stdout, says why the run stopped; the exit code.
fn deliver(
    common: &Common,
    f: Finished,
    stop: Stop,
    wall: std::time::Duration,
    summary: Option<String>,
) -> Result<Exit> {
    if let Some(path) = &common.junit {
        output::write_file(path, &render::junit(&f.reports, wall), output::msg::junit)?;
    }
    if let (Some(path), Some(text)) = (&common.step_summary, summary) {
        output::append_file(path, &format!("{text}\n"), msg::step_summary)?;
    }
    if let Some(path) = &common.html {
        let page = html::page(f.html_reports.as_ref().unwrap_or(&f.reports), f.html, &f.style);
        output::write_file(path, &page, html::msg::could_not_write)?;
    }
    let closed = matches!(&stop, Stop::Failed(e) if is_closed_pipe(e));
    if !closed && let Err(e) = output::out(&f.stdout) {
        if is_closed_pipe(&e) {
            return Ok(Exit::ClosedPipe);
        }
        if matches!(stop, Stop::Done) {
            return Err(e);
        }
    }
    for line in &f.stderr {
        crate::output::eline!("{line}");
    }
    Ok(match stop {
        Stop::Done => Exit::verdict(f.as_expected),
        Stop::Interrupted(clean) => {
            crate::output::eline!("{}", interrupted(clean).render(common.lang));
            Exit::Interrupted
        }
        Stop::Failed(e) if is_closed_pipe(&e) => Exit::ClosedPipe,
        Stop::Failed(e) => {
            print_error(&e, common.lang);
            Exit::CouldNotRun
        }
    })
}

/// SIGINT, SIGTERM and SIGHUP (the terminal closed), registered before
/// anything is started so that none can kill lab between starting a server
/// and being ready to stop it.
pub struct Signals {
    int: Signal,
    term: Signal,
    hup: Signal,
}

impl Signals {
    pub fn new() -> Result<Signals> {
        Ok(Signals {
            int: signal(SignalKind::interrupt()).ctx(|| msg::signal("SIGINT"))?,
            term: signal(SignalKind::terminate()).ctx(|| msg::signal("SIGTERM"))?,
            hup: signal(SignalKind::hangup()).ctx(|| msg::signal("SIGHUP"))?,
        })
    }

    pub async fn recv(&mut self) {
        self.recv_stop(true).await
    }

    /// SIGTERM or SIGHUP, and SIGINT where `int`.
    pub async fn recv_stop(&mut self, int: bool) {
        tokio::select! {
            _ = self.int.recv(), if int => {}
            _ = self.term.recv() => {}
            _ = self.hup.recv() => {}
        }
    }
}

/// Starts the throwaway cluster when the target asks for one.
pub async fn start_target(target: &RunOn, lang: Lang) -> Result<(Option<Cluster>, crate::postgres::ConnInfo)> {
    match target {
        RunOn::Server(config, _) => Ok((None, (**config).clone())),
        RunOn::Throwaway { pg_bin, conf, tls } => {
            // Blocking work, but on this thread: the server's parent-death
            // signal is tied to the thread that starts it, which must outlive it.
            let cluster = tokio::task::block_in_place(|| Cluster::start_opts(pg_bin.as_deref(), conf, *tls, lang))?;
            let config = cluster.config();
            Ok((Some(cluster), config))
        }
    }
}

/// The async runtime every run uses.
pub fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .ctx(msg::runtime)
}

/// Runs `run` to its end on a runtime of its own. What a run must finish
/// (sessions closed, objects dropped, servers stopped) it awaits itself; what
/// may still be going once it returns is a thread blocked reading the
/// terminal (a step prompt Ctrl-C ended), which must not keep lab from
/// exiting until the person presses Enter once more.
pub fn block_on<T>(run: impl std::future::Future<Output = Result<T>>) -> Result<T> {
    let rt = runtime()?;
    let out = rt.block_on(run);
    rt.shutdown_background();
    out
}

/// The run's lab schema at its end: kept (`--keep-schema`, as the run left
/// it); made again as `lab server` makes it when it was there before the run
/// (`lab server`'s, which the room's psql windows use); else dropped.
pub async fn schema_after(control: &tokio_postgres::Client, schema: &str, keep: bool, existed: bool) -> Result<()> {
    if keep {
        return Ok(());
    }
    if !existed {
        return connect::drop_schema(control, schema).await;
    }
    crate::files::LabFiles::embedded().build_schema(control, schema).await
}

/// The report a run stopped part-way attaches its error to: the named
/// scenario's, added (with no variants) if it has none yet.
pub fn mark_stopped(reports: &mut Vec<ScenarioReport>, scenario: &str, variant: &str, message: String, exit: Exit) {
    if !reports.iter().any(|r| r.scenario == scenario) {
        reports.push(ScenarioReport::new(scenario, ""));
    }
    let r = reports.iter_mut().find(|r| r.scenario == scenario).expect("just added");
    r.as_expected = false;
    r.error = Some(crate::report::RunError {
        variant: variant.to_string(),
        message,
        exit_code: exit as u8,
    });
}

/// Terminates the run's sessions (the control connection aside) and waits,
/// within `within`, until they are gone: a statement a dropped session had
/// already sent (a scenario's schema being built) ends with its backend,
/// before what it made is dropped.
pub async fn end_sessions(env: &Env, control: &tokio_postgres::Client, within: std::time::Duration) -> Result<()> {
    env.terminate_sessions_via(control).await?;
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        let left: i64 = control
            .query_one(
                "SELECT count(*) FROM pg_stat_activity \
                 WHERE starts_with(application_name, $1) AND pid <> pg_backend_pid()",
                &[&env.app_prefix()],
            )
            .await
            .ctx(crate::engine::msg::read_activity)?
            .get(0);
        if left == 0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(2)).await;
    }
    Ok(())
}

pub(crate) mod msg {
    crate::messages! {
        prefix "ha";
        runtime() {
            en: "could not start the async runtime",
            tr: "async runtime başlatılamadı",
        }
        signal(signal) {
            en: "could not watch for {signal}",
            tr: "{signal} izlenemedi",
        }
        clean_up_unanswered(s) {
            en: "the server did not answer lab's clean-up within {s} s: what lab made there (its schema lab_..., its sessions) may still be there",
            tr: "sunucu lab'ın temizliğine {s} sn içinde cevap vermedi: lab'ın orada oluşturduğu (lab_... şeması, oturumları) hâlâ orada olabilir",
        }
        clean_up_failed(why) {
            en: "lab's clean-up failed too ({why}): what lab made there (its schema lab_..., its sessions) may still be there",
            tr: "lab'ın temizliği de başarısız oldu ({why}): lab'ın orada oluşturduğu (lab_... şeması, oturumları) hâlâ orada olabilir",
        }
        warning(text) {
            en: "warning: {text}",
            tr: "uyarı: {text}",
        }
        after_run() {
            en: "after the run",
            tr: "çalıştırmadan sonra",
        }
        server_full(free, need) {
            en: "the server has room for {free} more connection(s); a run needs at least {need} besides its control connection (max_connections is reached: wait, or free some)",
            tr: "sunucuda {free} bağlantılık yer var; bir çalıştırma kontrol bağlantısı dışında en az {need} bağlantı ister (max_connections doldu: bekleyin ya da yer açın)",
        }
        step_summary(path) {
            en: "could not write the step summary to {path} (GITHUB_STEP_SUMMARY)",
            tr: "adım özeti {path} dosyasına yazılamadı (GITHUB_STEP_SUMMARY)",
        }
        no_cluster() {
            en: "the throwaway cluster did not start",
            tr: "geçici cluster başlamadı",
        }
    }
}
