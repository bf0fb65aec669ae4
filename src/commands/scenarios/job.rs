//! `lab <scenario>` and `lab all` in the harness: the run's schema claimed,
//! lab's PgBouncer in front where asked, the planned scenarios run (side by
//! side, each in a schema of its own, where `--jobs` allows), each shown as
//! soon as it and every one before it are done.
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use anyhow::{Result, bail};

use super::config::{self, Planned, RunConfig};
use super::{RunOpts, Scenario};
use crate::engine::{self, Env};
use crate::harness::{Common, Finished, Job, Setup, Stop, mark_stopped, msg};
use crate::options::Format;
use crate::output::{Exit, out};
use crate::postgres::conninfo::EnvLookup;
use crate::postgres::{connect, pgbouncer};
use crate::progress::Progress;
use crate::render::{self, Style, html};
use crate::report::{AllReport, ScenarioReport, round_ms};

/// The scenarios of one run.
pub struct Scenarios {
    cfg: RunConfig,
    common: Common,
    opts: RunOpts,
    /// `lab all` (its JSON is the whole run's; `lab <scenario>`'s is the scenario's).
    all: bool,
    style: Style,
    /// The run's reports, in the plan's order, filled as variants finish.
    reports: Mutex<Vec<ScenarioReport>>,
    /// The run's schema was there before it (`lab server`'s, which a room's
    /// psql windows use): rebuilt for each variant, kept afterwards.
    existed: AtomicBool,
}

impl Scenarios {
    /// Where the run starts: what the configuration names is found and
    /// read (pgbouncer, lab's files, the report files, the server).
    pub fn start(cfg: RunConfig, all: bool, env: EnvLookup<'_>) -> Result<Scenarios> {
        // Missing pgbouncer is found before any server starts.
        if cfg.pooler {
            pgbouncer::find_bin()?;
        }
        let lang = cfg.shared.lang;
        let opts = RunOpts {
            timeout: cfg.timeout,
            retry: cfg.retry,
            files: crate::options::lab_files(&cfg.lab_dir)?,
            progress: Progress::for_stderr(lang, cfg.shared.step),
            lang,
        };
        let common = cfg.shared.start(env)?;
        let style = Style {
            verbose: cfg.verbose,
            ..Style::for_stdout(lang, cfg.explain)
        };
        Ok(Scenarios {
            cfg,
            common,
            opts,
            all,
            style,
            reports: Mutex::default(),
            existed: AtomicBool::new(false),
        })
    }

    fn control_app(&self) -> String {
        format!("lab:{}:control", self.cfg.schema)
    }
}

impl Job for Scenarios {
    fn common(&self) -> &Common {
        &self.common
    }

    fn setup(&self) -> Setup {
        Setup {
            control_app: self.control_app(),
            run: self.cfg.schema.clone(),
            schema: self.cfg.schema.clone(),
            neutral: true,
            max_connections: self.cfg.max_connections,
            through_pooler: false,
        }
    }

    async fn prepare(&self, env: Env) -> Result<Env> {
        // Checked up front: a server already full fails here, with its
        // numbers, not in the middle of a scenario.
        let free = connect::free_connections(&env.control).await?;
        if free < config::MIN_CONNECTIONS as i64 - 1 {
            bail!(msg::server_full(free, config::MIN_CONNECTIONS - 1));
        }
        connect::claim_schema(&env.control, &self.cfg.schema).await?;
        let existed = connect::lab_schema_exists(&env.control, &self.cfg.schema).await?;
        self.existed.store(existed, Ordering::SeqCst);
        if !self.cfg.pooler {
            return Ok(env);
        }
        // lab's PgBouncer, with a pool as large as the connections the run
        // may use (so lab's own sessions never queue); a pool per schema the
        // run may use: the run's own, and one per scenario run side by side,
        // in the run's database or, for one run in a database of its own
        // (see own_database), in that one.
        let size = match self.cfg.max_connections {
            Some(n) => n as i64 - 1,
            None => free,
        }
        .clamp(1, 150) as u32;
        let mut pools = vec![pgbouncer::Front::pool(&self.cfg.schema, size)];
        pools.extend(self.cfg.plan.iter().map(|p| {
            let pool = pgbouncer::Front::pool(&scenario_schema(&self.cfg.schema, p.scenario.name), size);
            match own_database(&env, p) {
                Some(db) => pool.in_database(&db),
                None => pool,
            }
        }));
        let front = pgbouncer::Front::start(&env.pg, pools).await?;
        Ok(env.with_pooler(front))
    }

    async fn work(&self, env: &std::sync::Arc<Env>) -> Result<()> {
        run_scenarios(env, self).await
    }

    /// End the sessions (after a failure), drop the schema unless it is
    /// kept, give the schema back. When the control connection was lost (the
    /// server restarted, its backend was terminated, the network stopped
    /// answering it), the harness gives a new one, which claims the schema
    /// again first (see [`crate::harness::reclaim`]).
    async fn clean_up(&self, env: &Env, failed: bool) -> Result<()> {
        let cfg = &self.cfg;
        // What a scenario kept across its variants (lab's HA cluster), also
        // when the run stopped part-way (Ctrl-C, an error).
        super::release_kept(None).await;
        if env.throwaway.is_some() {
            // lab's own server: everything on it goes with it, at once.
            return Ok(());
        }
        if !crate::harness::reclaim(env, &cfg.schema).await {
            return Ok(());
        }
        let control = &*env.control;
        if failed {
            crate::harness::end_sessions(env, control, cfg.shared.wait_timeout / 2).await?;
        }
        crate::harness::schema_after(
            control,
            &cfg.schema,
            cfg.keep_schema,
            self.existed.load(Ordering::SeqCst),
        )
        .await?;
        // The schemas of scenarios run side by side, where a failure left them.
        if !cfg.keep_schema && cfg.jobs > 1 && cfg.plan.len() > 1 {
            for p in &cfg.plan {
                connect::drop_schema(control, &scenario_schema(&cfg.schema, p.scenario.name)).await?;
            }
        }
        connect::release_schema(control, &cfg.schema).await
    }

    fn summary_title(&self) -> Option<String> {
        Some(match (self.all, self.cfg.plan.first()) {
            (false, Some(p)) => format!("lab {}", p.scenario.name),
            _ => "lab all".to_string(),
        })
    }

    fn finish(&self, stop: &Stop, _version: &str, began: Instant) -> Result<Finished> {
        let cfg = &self.cfg;
        let mut reports = std::mem::take(&mut *self.reports.lock().unwrap());
        if let Some((exit, message)) = stop.error(cfg.shared.lang) {
            record_stop(cfg, &mut reports, message, exit);
        }
        // Scenarios that never started have nothing to report.
        reports.retain(|r| !r.variants.is_empty() || r.error.is_some());
        // A skip `--require` names fails the run, and says which and why.
        let required = config::required_skipped(&cfg.require, &mut reports);
        let as_expected = reports.iter().all(|r| r.as_expected);
        let style = &self.style;
        let all_report = |reports: &[ScenarioReport]| AllReport {
            server_version: reports
                .iter()
                .map(|r| r.server_version.clone())
                .find(|v| !v.is_empty())
                .unwrap_or_default(),
            as_expected,
            elapsed_ms: round_ms(began.elapsed().as_secs_f64() * 1000.0),
            scenarios: reports.to_vec(),
        };
        // A run stopped before any variant ran (the server refused lab, say)
        // has no table to show: the error line says it all.
        let ran = reports.iter().any(|r| !r.variants.is_empty());
        let stdout = match (cfg.format, self.all) {
            (Format::Json, false) => render::document(&reports[0].scenario, &reports[0])?,
            (Format::Json, true) => render::document("all", &all_report(&reports))?,
            (Format::Table, _) if !ran => String::new(),
            (Format::Table, _) if cfg.summary => render::brief_summary(&all_report(&reports), style),
            (Format::Table, true) => render::all_summary(&all_report(&reports), style),
            (Format::Table, false) => String::new(),
            (Format::Mermaid, _) => render::mermaid::report(&reports, style),
            (Format::Markdown, _) => render::markdown::summary(
                &self.summary_title().unwrap_or_default(),
                &all_report(&reports),
                &Style::plain(style.lang),
            ),
        };
        Ok(Finished {
            reports,
            html_reports: None,
            html: html::Kind::Runs,
            style: *style,
            stdout,
            stderr: required.iter().map(|t| t.render(cfg.shared.lang)).collect(),
            as_expected,
        })
    }
}

/// Marks where a run stopped: the scenario whose variant failed (it said
/// so itself), else the first planned variant that has no report.
fn record_stop(cfg: &RunConfig, reports: &mut Vec<ScenarioReport>, message: String, exit: Exit) {
    if let Some(r) = reports.iter_mut().find(|r| r.error.is_some()) {
        r.as_expected = false;
        if let Some(e) = r.error.as_mut() {
            e.message = message;
            e.exit_code = exit as u8;
        }
        return;
    }
    let planned = cfg.plan.iter().find(|p| {
        reports
            .iter()
            .find(|r| r.scenario == p.scenario.name)
            .is_none_or(|r| r.variants.len() < p.variants.len())
    });
    let (scenario, variant) = match planned {
        Some(p) => {
            let done = reports
                .iter()
                .find(|r| r.scenario == p.scenario.name)
                .map_or(0, |r| r.variants.len());
            (p.scenario.name, p.variants[done].name)
        }
        // Every variant finished; it stopped after them.
        None => match cfg.plan.last() {
            Some(p) => (p.scenario.name, "-"),
            None => return,
        },
    };
    mark_stopped(reports, scenario, variant, message, exit);
}

async fn run_scenarios(env: &Env, job: &Scenarios) -> Result<()> {
    let (cfg, style, reports) = (&job.cfg, &job.style, &job.reports);
    reports.lock().unwrap().extend(
        cfg.plan
            .iter()
            .map(|p| ScenarioReport::on(p.scenario.name, &env.server)),
    );
    // Each scenario is shown as soon as it and every one before it are done.
    let done = Mutex::new((0usize, vec![false; cfg.plan.len()]));
    let finished = |i: usize| -> Result<()> {
        let mut d = done.lock().unwrap();
        d.1[i] = true;
        while d.0 < d.1.len() && d.1[d.0] {
            if cfg.format == Format::Table && !cfg.summary {
                let report = &reports.lock().unwrap()[d.0];
                // Stepping, each variant was shown as it ended: the outcomes remain.
                if cfg.shared.step {
                    out(&render::scenario_outcomes(report, style))?;
                } else {
                    out(&render::scenario(report, style))?;
                }
                out("\n")?;
            }
            d.0 += 1;
        }
        Ok(())
    };
    // A scenario that needs the whole server and cannot have a database of its own.
    let whole_server = |p: &Planned| super::OWN_DATABASE.contains(&p.scenario.name) && own_database(env, p).is_none();
    // Side by side only when at least two can be: a lone scenario keeps the run's schema.
    let together = cfg.jobs > 1 && cfg.plan.iter().filter(|p| !whole_server(p)).count() > 1;
    let alone = |p: &Planned| !together || whole_server(p);
    // Side by side first, each in a schema of its own; then, one by one, the
    // scenarios that must run alone, in the run's own schema.
    let permits = tokio::sync::Semaphore::new(cfg.jobs);
    // Later scenarios take longer (invoice-numbering, timeouts): they start first.
    let side_by_side = cfg
        .plan
        .iter()
        .enumerate()
        .rev()
        .filter(|(_, p)| !alone(p))
        .map(|(i, p)| {
            let (permits, finished) = (&permits, &finished);
            async move {
                let _permit = permits.acquire().await.expect("never closed");
                beside(env, job, p, i).await?;
                finished(i)
            }
        });
    for r in engine::join_all_ordered(side_by_side).await {
        r?;
    }
    for (i, p) in cfg.plan.iter().enumerate().filter(|(_, p)| alone(p)) {
        run_scenario(env, job, p, i).await?;
        finished(i)?;
    }
    Ok(())
}

/// One scenario beside others: in a schema of its own (and a database of
/// its own, for [`super::OWN_DATABASE`] on lab's server), dropped after it.
async fn beside(env: &Env, job: &Scenarios, p: &Planned, i: usize) -> Result<()> {
    let cfg = &job.cfg;
    let database = own_database(env, p);
    if let Some(db) = &database {
        connect::create_database(&env.control, db).await?;
    }
    let mut pg = env.pg.clone();
    if let Some(db) = &database {
        pg.dbname(db);
    }
    let control = connect::connect_control(
        &pg,
        &format!("lab:{}:control", cfg.schema),
        Some(&env.settings),
        env.control_silence(),
    )
    .await?
    .client;
    let own = env.elsewhere(pg, control, &scenario_schema(&cfg.schema, p.scenario.name));
    let r = run_scenario(&own, job, p, i).await;
    if r.is_ok() && !cfg.keep_schema {
        connect::drop_schema(&own.control, &own.schema).await?;
    }
    drop(own);
    if let Some(db) = &database {
        connect::drop_database(&env.control, db).await?;
    }
    r
}

/// The schema a scenario run side by side with others uses: the run's name
/// and the scenario's.
fn scenario_schema(run: &str, scenario: &str) -> String {
    format!("{run}_{}", scenario.replace('-', "_"))
}

/// The database a scenario of [`super::OWN_DATABASE`] runs in beside
/// others: only on lab's throwaway server (everything on it is lab's).
/// Behind lab's pooler too, its pool connecting to that database.
fn own_database(env: &Env, p: &Planned) -> Option<String> {
    (super::OWN_DATABASE.contains(&p.scenario.name) && env.throwaway.is_some())
        .then(|| scenario_schema(&env.run, p.scenario.name))
}

/// Runs the planned variants of one scenario, each on a freshly built
/// schema, into `report` as each finishes (a run stopped part-way keeps them).
async fn run_scenario(env: &Env, job: &Scenarios, planned: &Planned, index: usize) -> Result<()> {
    let began = Instant::now();
    let scenario: &'static Scenario = planned.scenario;
    let r = run_variants(env, job, planned, index, began).await;
    super::release_kept(Some(scenario.name)).await;
    r
}

/// The planned variants of one scenario, in order (see [`run_scenario`]).
async fn run_variants(env: &Env, job: &Scenarios, planned: &Planned, index: usize, began: Instant) -> Result<()> {
    let (cfg, style, reports) = (&job.cfg, &job.style, &job.reports);
    let scenario: &'static Scenario = planned.scenario;
    for variant in &planned.variants {
        let spinner = job
            .opts
            .progress
            .spinner(format!("{} / {}", scenario.name, variant.name));
        let r = super::run_variant(env, &job.opts, scenario, variant, planned.params.clone()).await;
        spinner.finish_and_clear();
        let v = match r {
            Ok(v) => v,
            Err(e) => {
                // Where it failed, for the report (scenarios run side by side
                // go on to their end; this one stopped here).
                reports.lock().unwrap()[index].error = Some(crate::report::RunError {
                    variant: variant.name.to_string(),
                    message: String::new(),
                    exit_code: Exit::CouldNotRun as u8,
                });
                return Err(e);
            }
        };
        // Stepping: the room sees what the variant showed, and its verdict,
        // before the next variant's first prompt.
        if env.stepper.is_some() && cfg.format == Format::Table && !cfg.summary {
            out(&render::variant_with_verdict(scenario.name, &v, style))?;
            out("\n")?;
        }
        let report = &mut reports.lock().unwrap()[index];
        report.as_expected &= v.as_expected;
        report.variants.push(v);
        report.elapsed_ms = round_ms(began.elapsed().as_secs_f64() * 1000.0);
    }
    Ok(())
}

impl crate::options::Run for super::args::AllArgs {
    fn run(self, cx: &crate::options::Invocation<'_>) -> Result<Exit> {
        let cfg = RunConfig::for_all(&self.run, cx.lang)?;
        crate::harness::block_on(crate::harness::run(&Scenarios::start(cfg, true, cx.env)?))
    }
}
