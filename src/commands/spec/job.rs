//! `lab spec` in the harness: each spec in a fresh database of its own (or
//! one at a time in the database given), shown as it finishes (lab's
//! timeline, isolationtester's transcript, or pg_regress's lines and files).
use std::sync::{Arc, Mutex};
use std::time::Instant;

use anyhow::{Result, bail};

use super::config::SpecRun;
use super::files;
use super::regress::{self, Layout, TestLine};
use super::{Outcome, Place, Suite, repeat};
use crate::engine::Env;
use crate::engine::transcript::Stream;
use crate::harness::{Common, Finished, Job, Setup, Stop};
use crate::i18n::Lang;
use crate::options::SpecFormat;
use crate::output::out;
use crate::postgres::conninfo::EnvLookup;
use crate::postgres::{connect, pgbouncer};
use crate::render::{self, Style, html};
use crate::report::{AllReport, round_ms};

/// The specs of one run.
pub struct Specs {
    common: Common,
    format: SpecFormat,
    style: Style,
    suite: Arc<Suite>,
    /// pg_regress's layout, and the lines of the schedule group being run.
    layout: Option<Layout>,
    lines: Mutex<Lines>,
    load: bool,
    pooler: bool,
    /// `--verbose`: lab's own lines on stderr beside isolationtester's output.
    verbose: bool,
}

/// pg_regress's test lines: every one so far, and where the current group starts.
#[derive(Default)]
struct Lines {
    all: Vec<TestLine>,
    group: usize,
    group_start: usize,
}

impl Specs {
    /// Where the run starts: the directories checked, the specs and
    /// schedules read, each spec's expected files found, then what every
    /// run reads (the report files, the baseline, the server).
    pub fn start(mut cfg: SpecRun, env: EnvLookup<'_>) -> Result<Specs> {
        for dir in &cfg.dirs {
            if !dir.is_dir() {
                bail!(super::msg::no_such_dir(dir.display().to_string()));
            }
        }
        let groups = files::collect(&cfg.paths, &cfg.schedules, cfg.inputdir.as_deref(), cfg.max_group)?;
        let tests: Vec<&files::Test> = groups.iter().flatten().collect();
        if cfg.expected.is_some() && tests.len() != 1 {
            bail!(super::msg::expected_one());
        }
        if let Some(f) = &cfg.expected
            && !f.is_file()
        {
            bail!(super::msg::no_such_file(f.display().to_string()));
        }
        let layout = cfg.outputdir.as_deref().map(Layout::new);
        for t in &tests {
            // pg_regress fails a test whose spec isolationtester cannot
            // read, and goes on with the rest.
            let mut f = match files::load(&t.path) {
                // (In English, as isolationtester's output is.)
                Err(e) if layout.is_some() => files::SpecFile::broken(&t.path, crate::i18n::error_line(&e, Lang::En)),
                loaded => loaded?,
            };
            f.ignored = t.ignored;
            if let Some(e) = &cfg.expected {
                f.expected = vec![e.clone()];
            } else if let Some(dir) = &cfg.expected_dir {
                f.expected = files::expected_in(dir, &f.name);
                // Nothing to compare with is not a pass (pg_regress stops there too).
                if f.expected.is_empty() {
                    let path = dir.join(format!("{}.out", f.name));
                    bail!(super::msg::no_expected(path.display().to_string(), f.name.clone()));
                }
            }
            cfg.suite.specs.push(f);
        }
        cfg.suite.groups = groups.iter().map(|g| g.len()).collect();
        if let Some((_, names, _)) = &mut cfg.shared.baseline {
            *names = cfg.suite.specs.iter().map(|f| f.name.clone()).collect();
        }
        let common = cfg.shared.start(env)?;
        Ok(Specs {
            style: Style {
                verbose: cfg.verbose,
                ..Style::for_stdout(common.lang, cfg.explain)
            },
            common,
            format: cfg.format,
            suite: Arc::new(Suite::new(cfg.suite)),
            layout,
            lines: Mutex::default(),
            load: cfg.load,
            pooler: cfg.pooler,
            verbose: cfg.verbose,
        })
    }

    /// pg_regress's lines go to stdout (unless it is JSON's).
    fn prints_regress(&self) -> bool {
        self.layout.is_some() && !matches!(self.format, SpecFormat::Json | SpecFormat::Markdown)
    }

    /// Whether lab's own lines (where the specs run, what a spec left, how
    /// many matched) go to stderr. Not beside isolationtester's output
    /// (`--format isolation`), where stdout and stderr are isolationtester's
    /// byte for byte, as pg_regress merges them into a results file: there
    /// the exit code, the JSON and JUnit say it, and `--verbose` prints it.
    fn says_own_lines(&self) -> bool {
        self.verbose || self.format != SpecFormat::Isolation || self.layout.is_some()
    }

    /// A spec's outcome as it finishes, in the run's format; in pg_regress's
    /// layout, its result file, its diff, and its group's lines once the
    /// group is done. Repeated runs are shown at the end, compared.
    fn show(&self, o: &Outcome) -> Result<()> {
        if o.round > 0 {
            return Ok(());
        }
        if let Some(layout) = &self.layout {
            return self.show_regress(layout, o);
        }
        if self.suite.cfg.repeat > 1 {
            return Ok(());
        }
        match self.format {
            SpecFormat::Isolation => {
                // stdout and stderr as isolationtester writes them.
                for (stream, text) in o.transcript.pieces() {
                    match stream {
                        Stream::Out => out(&text)?,
                        Stream::Err => crate::output::etext!("{text}"),
                    }
                }
                if let Some(d) = &o.diff
                    && self.verbose
                {
                    crate::output::etext!("{d}");
                }
                if self.verbose {
                    for line in self.what_else_failed(o) {
                        crate::output::eline!("{line}");
                    }
                }
            }
            SpecFormat::Table => {
                out(&render::scenario(&o.report, &self.style))?;
                if let Some(d) = &o.diff {
                    out(d)?;
                }
                out("\n")?;
            }
            SpecFormat::Json | SpecFormat::Markdown => {}
        }
        Ok(())
    }

    /// Where the output is isolationtester's or pg_regress's: what failed
    /// that the output does not show (a spec that left objects behind in
    /// the database given), one line each.
    fn what_else_failed(&self, o: &Outcome) -> Vec<String> {
        let database = super::msg::database_variant().render(crate::i18n::Lang::En);
        o.report
            .variants
            .iter()
            .filter(|v| !v.as_expected && v.name == database)
            .flat_map(|v| &v.observed)
            .map(|line| format!("{}: {}", o.report.scenario, line.render(self.common.lang)))
            .collect()
    }

    fn show_regress(&self, layout: &Layout, o: &Outcome) -> Result<()> {
        layout.record(&o.report.scenario, &o.transcript.combined(), o.best.as_deref())?;
        let ok = o.report.as_expected;
        // On stderr, and in regression.out (which pg_regress keeps when a
        // test failed): why a test whose output matched failed.
        for line in self.what_else_failed(o) {
            if self.format != SpecFormat::Json {
                crate::output::eline!("{line}");
            }
            layout.log_lines(&format!("{line}\n"))?;
        }
        let mut lines = self.lines.lock().unwrap();
        lines.all.push(TestLine {
            name: o.report.scenario.clone(),
            ok,
            ms: o.report.elapsed_ms.round() as u64,
            exited: o.transcript.ended(),
            ignored: self.suite.cfg.specs[o.spec].ignored,
            finished: o.finished,
        });
        let size = self.suite.cfg.groups.get(lines.group).copied().unwrap_or(1);
        if lines.all.len() - lines.group_start == size {
            let text = regress::group_lines(&lines.all[lines.group_start..], self.suite.cfg.groups_of);
            layout.log_lines(&text)?;
            if self.prints_regress() {
                out(&text)?;
            }
            lines.group += 1;
            lines.group_start = lines.all.len();
        }
        Ok(())
    }
}

/// `--repeat`: one report per spec (its first run's), with a part saying
/// whether every run printed the same, and the flaky permutations' diffs.
fn repeated(
    suite: &Suite,
    outcomes: &[Outcome],
    lang: crate::i18n::Lang,
) -> (Vec<crate::report::ScenarioReport>, String) {
    let n = suite.cfg.repeat;
    let mut reports = Vec::new();
    let mut text = String::new();
    for (i, file) in suite.cfg.specs.iter().enumerate() {
        let runs: Vec<&Outcome> = outcomes.iter().filter(|o| o.spec == i).collect();
        let Some(first) = runs.first() else { continue };
        let transcripts: Vec<String> = runs.iter().map(|o| o.transcript.combined()).collect();
        let refs: Vec<&str> = transcripts.iter().map(String::as_str).collect();
        let flaky = repeat::flaky(&refs);
        let mut report = first.report.clone();
        let v = super::repeat_report(runs.len(), n, &flaky);
        report.as_expected = runs.iter().all(|o| o.report.as_expected) && v.as_expected;
        report.variants.push(v);
        reports.push(report);
        if flaky.is_empty() {
            text.push_str(&super::msg::steady(&file.name, runs.len()).render(lang));
            text.push('\n');
        }
        for f in &flaky {
            text.push_str(
                &super::msg::flaky(&file.name, &f.permutation, f.outputs.len(), runs.len(), f.counts()).render(lang),
            );
            text.push('\n');
            text.push_str(&f.diffs());
        }
    }
    (reports, text)
}

impl Job for Specs {
    fn common(&self) -> &Common {
        &self.common
    }

    fn setup(&self) -> Setup {
        // Each spec runs in a database of its own (which a standby cannot
        // create), its sessions with the server's own settings.
        Setup {
            control_app: "lab:spec:control".into(),
            run: "spec".into(),
            schema: String::new(),
            neutral: false,
            max_connections: None,
            // A transaction pooler of the user's is accepted: specs then run in
            // the database given (see prepare).
            through_pooler: true,
        }
    }

    /// Where the specs run, once the role is known: a role that cannot
    /// create databases runs them in the database given; a database lab is
    /// to make must not exist yet.
    async fn prepare(&self, env: Env) -> Result<Env> {
        // Simple queries and unnamed statements: the control connection
        // may be a transaction pooler's client.
        let can_create = connect::simple_value(
            &env.control,
            "SELECT rolsuper OR rolcreatedb FROM pg_roles WHERE rolname = current_user",
        )
        .await?
            == Some("t".into());
        let place = self.suite.place();
        match (&place, can_create) {
            (Place::Fresh | Place::Named(_), false) => {
                let name = match place {
                    Place::Named(n) => Some(n),
                    _ => None,
                };
                let shown = match &name {
                    Some(n) => n.clone(),
                    None => connect::simple_value(&env.control, "SELECT current_database()")
                        .await?
                        .unwrap_or_default(),
                };
                if self.says_own_lines() {
                    crate::output::eline!("{}", super::msg::in_database(shown).render(self.common.lang));
                }
                self.suite.set_place(Place::Given(name));
            }
            (Place::Named(n), true)
                if super::named(&env.control, "SELECT 1 FROM pg_database WHERE datname = $1", n).await? =>
            {
                bail!(super::msg::db_exists(n));
            }
            _ => {}
        }
        if env.server.behind_pooler {
            // The user's transaction pooler: specs run in the database
            // given (a database lab made would need the pooler to know it,
            // and a pooler keeps server connections open in it, so it could
            // not be dropped), and lab's own pooler is not put in front of it.
            let place = connect::where_of(&env.pg);
            if self.pooler {
                bail!(super::msg::pooler_twice(place));
            }
            if !matches!(self.suite.place(), Place::Given(_)) {
                bail!(super::msg::pooler_in_database(place));
            }
        }
        if !self.pooler {
            return Ok(env);
        }
        // lab's PgBouncer, a pool for each database the specs run in, as
        // large as the connections the server has free (lab's own sessions
        // never queue).
        let size = connect::free_connections(&env.control).await?.clamp(1, 150) as u32;
        let front =
            pgbouncer::Front::start(&env.pg, vec![pgbouncer::Front::pool(pgbouncer::ANY_DATABASE, size)]).await?;
        Ok(env.with_pooler(front))
    }

    async fn work(&self, env: &Arc<Env>) -> Result<()> {
        // (Here, not in prepare: the clean-up that drops them follows the work.)
        self.suite.create_roles(&env.control).await?;
        if let Some(layout) = &self.layout {
            layout.prepare()?;
            if self.prints_regress() {
                out(regress::RUNNING)?;
            }
        }
        let _load = self.load.then(|| repeat::Load::start(crate::options::cores()));
        self.suite.run_all(env, |o| self.show(o)).await
    }

    async fn clean_up(&self, env: &Env, _failed: bool) -> Result<()> {
        for line in self.suite.end_in_flight(env).await {
            crate::output::eline!("{}", crate::harness::msg::warning(line).render(self.common.lang));
        }
        self.suite.clean_up(&env.control).await
    }

    fn summary_title(&self) -> Option<String> {
        Some("lab spec".to_string())
    }

    fn finish(&self, stop: &Stop, version: &str, began: Instant) -> Result<Finished> {
        let (mut reports, outcomes) = self.suite.results(stop.error(self.common.lang), version);
        let mut flaky_text = String::new();
        if self.suite.cfg.repeat > 1 {
            let errors: Vec<_> = reports.iter().filter(|r| r.error.is_some()).cloned().collect();
            let (merged, text) = repeated(&self.suite, &outcomes, self.common.lang);
            reports = merged;
            reports.extend(errors);
            flaky_text = text;
        }
        // A schedule's `ignore:` test may fail (its report still says so):
        // decided per run of a spec, as its line says.
        let only_ignored_failed = self.suite.cfg.repeat <= 1
            && reports.iter().all(|r| r.error.is_none())
            && outcomes
                .iter()
                .all(|o| o.report.as_expected || self.suite.cfg.specs[o.spec].ignored);
        let as_expected = reports.iter().all(|r| r.as_expected) || only_ignored_failed;
        let all = AllReport {
            server_version: version.to_string(),
            as_expected,
            elapsed_ms: round_ms(began.elapsed().as_secs_f64() * 1000.0),
            scenarios: reports.clone(),
        };
        let mut stdout = match self.format {
            SpecFormat::Json => render::document("spec", &all)?,
            SpecFormat::Markdown => render::markdown::summary("lab spec", &all, &Style::plain(self.common.lang)),
            _ if self.layout.is_some() => String::new(),
            SpecFormat::Table if reports.len() > 1 => render::all_summary(&all, &self.style),
            _ => String::new(),
        };
        if !matches!(self.format, SpecFormat::Json | SpecFormat::Markdown) {
            stdout.push_str(&flaky_text);
        }
        if let Some(layout) = &self.layout {
            let lines = std::mem::take(&mut self.lines.lock().unwrap().all);
            let summary = layout.close(&lines);
            // A run lab stopped (a refusal, an error, Ctrl-C) did not pass:
            // no "All N tests passed." ahead of its error line.
            if self.prints_regress() && stop.error(self.common.lang).is_none() {
                stdout.push_str(&summary);
            }
        }
        let mut stderr = Vec::new();
        if self.suite.cfg.regress && self.layout.is_none() && self.format != SpecFormat::Json && self.says_own_lines() {
            let matched = outcomes.iter().filter(|o| o.diff.is_none()).count();
            let secs = format!("{:.1}", began.elapsed().as_secs_f64());
            stderr.push(super::msg::matched(matched, outcomes.len(), secs).render(self.common.lang));
        }
        Ok(Finished {
            reports,
            html_reports: None,
            html: html::Kind::Runs,
            style: self.style,
            stdout,
            stderr,
            as_expected,
        })
    }
}

impl crate::options::Run for super::args::SpecArgs {
    fn run(self, cx: &crate::options::Invocation<'_>) -> Result<crate::output::Exit> {
        let cfg = super::config::SpecRun::new(&self, cx.env, cx.lang)?;
        crate::harness::block_on(crate::harness::run(&Specs::start(cfg, cx.env)?))
    }
}
