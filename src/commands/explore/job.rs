//! `lab explore` in the harness: the runs spread over workers, then the
//! classes per level (a table, JSON, or isolationtester's transcript of
//! every run), JUnit with a case per level, HTML with a class per diagram.
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Result, bail};

use super::classes::{Class, Phrase, Tally};
use super::config::ExploreRun;
use super::{ExploreConfig, Source};
use super::{Explorer, LevelOutcome, RunResult, msg, plan};
use crate::commands::phenomena::{LEVELS, Verdict};
use crate::engine::Env;
use crate::engine::transcript::Stream;
use crate::files::LabFiles;
use crate::harness::{Common, Finished, Job, Setup, Stop};
use crate::i18n::{Arg, Text, ui};
use crate::options::SpecFormat;
use crate::postgres::conninfo::EnvLookup;
use crate::render::{self, Style, html};
use crate::report::explore::{ClassReport, ExploreReport, Heading, LevelReport, RunLine, Stopped, Summary, What};
use crate::report::round_ms;

/// One `lab explore` run.
pub struct Explore {
    common: Common,
    format: SpecFormat,
    /// `--sample N --seed S`, as asked.
    sample: Option<(usize, u64)>,
    explorer: Arc<Explorer>,
    /// `--step --class N`, and that class's representative as stepped through.
    step_class: Option<usize>,
    stepped: std::sync::Mutex<Option<(usize, usize, RunResult)>>,
}

impl Explore {
    /// Where the run starts: the spec found and read, its permutations
    /// planned, then what every run reads (the report files, the server).
    pub fn start(cfg: ExploreRun, env: EnvLookup<'_>) -> Result<Explore> {
        let files = crate::options::lab_files(&cfg.lab_dir)?;
        let src = source(&cfg.spec, &files)?;
        let lang = cfg.shared.lang;
        let explore = ExploreConfig::new(src, cfg.choice, cfg.jobs, cfg.shared.wait_timeout, lang)?;
        if cfg.step_class.is_some() && explore.levels.len() != 1 {
            bail!(msg::step_one());
        }
        Ok(Explore {
            common: cfg.shared.start(env)?,
            format: cfg.format,
            sample: cfg.sample,
            explorer: Arc::new(Explorer::new(explore)),
            step_class: cfg.step_class,
            stepped: std::sync::Mutex::default(),
        })
    }

    /// A level as the text names it.
    fn level_name(&self, level: Option<usize>) -> Text {
        match (level, &self.explorer.cfg.own) {
            (Some(l), _) => ui::verbatim(LEVELS[l].0.to_string()),
            (None, Some(own)) => msg::own_named(own),
            (None, None) => msg::own(),
        }
    }

    /// A class's line: what happened, a phrase each.
    fn what(&self, c: &Class) -> What {
        let mut parts: Vec<Text> = Vec::new();
        if c.signature.anomaly == Some(true) {
            parts.push(msg::anomaly());
        }
        let phrases = c.signature.phrases();
        if phrases.is_empty() {
            parts.push(msg::plain());
        }
        parts.extend(phrases.iter().map(phrase));
        What(parts)
    }

    /// A level's one-line summary.
    fn summary(&self, o: &LevelOutcome) -> Summary {
        let t = &o.tally;
        let name = self.level_name(o.level);
        let mut parts = vec![match t.anomaly {
            Some(k) => msg::occur(name, k, t.runs),
            None => msg::ran(name, t.runs),
        }];
        for (n, text) in [
            (t.blocked, msg::blocked_n(t.blocked)),
            (t.aborted, aborted(t)),
            (t.failed, msg::failed_n(t.failed)),
            (t.dead_ends, msg::dead_ends_n(t.dead_ends)),
            (t.stuck, msg::stuck_n(t.stuck)),
            (t.serial, msg::serial_n(t.serial)),
        ] {
            if n > 0 {
                parts.push(text);
            }
        }
        Summary {
            parts,
            own: o.own_level.as_ref().map(msg::own_level),
            verdict: match (o.as_expected, self.expected(o)) {
                (Some(true), Some(e)) => Some(msg::documented(e)),
                (Some(false), Some(e)) => Some(msg::not_documented(e)),
                _ => None,
            },
        }
    }

    /// What `# expect:` documents for a level's runs, when it does.
    fn expected(&self, o: &LevelOutcome) -> Option<Text> {
        let (Some(_), Some(l), Some(e)) = (o.as_expected, o.level, &self.explorer.cfg.expect) else {
            return None;
        };
        let of = |l: usize| match e[l].verdict {
            Verdict::Occurs => msg::occurs_some(),
            Verdict::Prevented => msg::occurs_none(),
        };
        // Runs held to another level's expectation (the level they read back) say so.
        if o.judged_at == [l] {
            return Some(of(l));
        }
        let each: Vec<Arg> = [Verdict::Occurs, Verdict::Prevented]
            .into_iter()
            .filter_map(|v| {
                let at: Vec<usize> = o.judged_at.iter().copied().filter(|&at| e[at].verdict == v).collect();
                let names: Vec<&str> = at.iter().map(|&at| LEVELS[at].0).collect();
                Some(msg::at_level(names.join(", "), of(*at.first()?)).into())
            })
            .collect();
        Some(msg::each_at_its_level(Arg::Joined(each, "; ")))
    }

    fn representative(&self, o: &LevelOutcome, c: &Class) -> String {
        let li = self.explorer.cfg.levels.iter().position(|l| *l == o.level).unwrap_or(0);
        let (_, pi) = self.explorer.runs[c.representative()];
        plan::line(&self.explorer.cfg.spec, &self.explorer.cfg.plans[li][pi])
    }

    /// The run as its report holds it: every level's classes and tally,
    /// every run, and how the run ended.
    fn report(
        &self,
        outcomes: &[LevelOutcome],
        results: &[Option<RunResult>],
        version: &str,
        ms: f64,
        error: Option<Stopped>,
    ) -> ExploreReport {
        let cfg = &self.explorer.cfg;
        let levels: Vec<LevelReport> = outcomes
            .iter()
            .enumerate()
            .map(|(li, o)| {
                // A level's time: its runs' own, added up (they ran side by
                // side with each other and with other levels' runs).
                let level_ms: f64 = (self.explorer.runs.iter().zip(results))
                    .filter(|((l, _), _)| cfg.levels[*l] == o.level)
                    .filter_map(|(_, r)| r.as_ref().map(|r| r.elapsed_ms))
                    .sum();
                LevelReport {
                    level: o.level.map(|l| LEVELS[l].0.to_string()),
                    name: self.level_name(o.level),
                    permutations: cfg.total[li],
                    tally: o.tally.clone(),
                    own_level: o.own_level.clone(),
                    as_expected: o.as_expected,
                    judged_at: o.judged_at.iter().map(|&l| LEVELS[l].0.to_string()).collect(),
                    summary: self.summary(o),
                    classes: o
                        .classes
                        .iter()
                        .enumerate()
                        .map(|(i, c)| {
                            let rep = results.get(c.representative()).and_then(Option::as_ref);
                            ClassReport {
                                class: i + 1,
                                runs: c.runs.len(),
                                serial: c.serial,
                                what: self.what(c),
                                representative: self.representative(o, c),
                                marked: o.marked.is_some_and(|(m, _)| m == i),
                                signature: c.signature.clone(),
                                timeline: rep.map(|r| r.timeline.clone()).unwrap_or_default(),
                                elapsed_ms: rep.map_or(0.0, |r| r.elapsed_ms),
                            }
                        })
                        .collect(),
                    expected: self.expected(o),
                    elapsed_ms: round_ms(level_ms),
                    marked: o.marked.is_some(),
                }
            })
            .collect();
        let class_of = |k: usize, li: usize| {
            outcomes[li]
                .classes
                .iter()
                .position(|c| c.runs.contains(&k))
                .map(|i| i + 1)
        };
        let runs: Vec<RunLine> = self
            .explorer
            .runs
            .iter()
            .enumerate()
            .filter_map(|(k, &(li, pi))| {
                let r = results.get(k)?.as_ref()?;
                let class = class_of(k, li);
                Some(RunLine {
                    level: cfg.levels[li].map(|l| LEVELS[l].0.to_string()),
                    ran_at: r.observation.levels_ran_at().into_iter().map(str::to_string).collect(),
                    permutation: plan::line(&cfg.spec, &cfg.plans[li][pi]),
                    class,
                    signature: class.map(|c| outcomes[li].classes[c - 1].signature.clone()),
                    elapsed_ms: r.elapsed_ms,
                })
            })
            .collect();
        let as_expected = outcomes.iter().all(|o| o.as_expected.unwrap_or(true)) && error.is_none();
        let remade = self.explorer.remade.load(std::sync::atomic::Ordering::SeqCst);
        ExploreReport {
            spec: cfg.name.clone(),
            own_level: cfg.own.clone(),
            schemas_remade: remade,
            server_version: version.to_string(),
            as_expected,
            elapsed_ms: ms,
            levels,
            runs,
            sessions: self.explorer.connections(),
            error,
            heading: Heading {
                permutations: cfg.plans.iter().map(Vec::len).max().unwrap_or(0),
                levels: cfg.levels.len(),
                runs: self.explorer.runs.len(),
                sampled: self.sample.and_then(|(n, seed)| {
                    let total = cfg.total.iter().max()?;
                    (*total > n as u128).then(|| (n, total.to_string(), seed))
                }),
                alone: cfg.alone.map(|why| why.text()),
                judged: !cfg.occurs_if.is_empty(),
            },
        }
    }
}

/// A spec file, else a lab scenario's spec (lab/NAME.spec), else a
/// phenomenon (lab/phenomena/NAME.spec).
fn source(name: &str, files: &LabFiles) -> Result<Source> {
    let path = std::path::Path::new(name);
    if path.is_file() || name.ends_with(".spec") {
        let f = crate::commands::spec::files::load(path)?;
        return Ok(Source {
            name: f.name,
            spec: f.spec,
            bookstore: f.bookstore,
            lab: false,
            phenomenon: false,
        });
    }
    let scenarios: Vec<&str> = LabFiles::names()
        .filter_map(|n| n.strip_suffix(".spec"))
        .filter(|n| !n.contains('/'))
        .collect();
    let (file, phenomenon) = if scenarios.contains(&name) {
        (format!("{name}.spec"), false)
    } else if crate::commands::phenomena::ORDER.contains(&name) {
        (format!("phenomena/{name}.spec"), true)
    } else {
        bail!(msg::no_target(
            name,
            scenarios.join(", "),
            crate::commands::phenomena::ORDER.join(", ")
        ));
    };
    let f = crate::commands::spec::files::parsed(std::path::Path::new(&file), &files.read(&file)?)?;
    Ok(Source {
        name: name.to_string(),
        bookstore: f.bookstore,
        spec: f.spec,
        lab: true,
        phenomenon,
    })
}

/// A level's aborted runs, by SQLSTATE and where the abort came ("18
/// aborted 40001 (12 at commit)").
fn aborted(t: &Tally) -> Text {
    let n = t.aborted;
    let codes: std::collections::BTreeSet<&str> = t.aborts.iter().map(|a| a.sqlstate.as_str()).collect();
    if let [code] = codes.into_iter().collect::<Vec<_>>()[..] {
        let at_commit: usize = t.aborts.iter().filter(|a| a.at_commit).map(|a| a.runs).sum();
        return match at_commit {
            0 => msg::aborted_n(n, code),
            k if k == n => msg::aborted_at_commit_n(n, code),
            k => msg::aborted_some_at_commit_n(n, code, k),
        };
    }
    let kinds: Vec<Text> = t
        .aborts
        .iter()
        .map(|a| match a.at_commit {
            true => msg::abort_kind_at_commit(a.runs, &a.sqlstate),
            false => msg::abort_kind(a.runs, &a.sqlstate),
        })
        .collect();
    msg::aborted_kinds_n(n, kinds)
}

fn phrase(p: &Phrase) -> Text {
    match p {
        Phrase::Waited(s, by) => msg::waited(s, by),
        Phrase::RolledBack(s) => msg::rolled_back(s),
        Phrase::Aborted(s, c) => msg::aborted(s, c),
        Phrase::Failed(s, c) => msg::failed(s, c),
        Phrase::DeadEnd(s) => msg::dead_end(s),
        Phrase::Stuck(s) => msg::stuck(s),
        Phrase::Read(s, rows) => msg::read(s, rows),
    }
}

impl Job for Explore {
    fn common(&self) -> &Common {
        &self.common
    }

    fn setup(&self) -> Setup {
        Setup {
            control_app: "lab:explore:control".into(),
            run: "explore".into(),
            schema: String::new(),
            neutral: self.explorer.cfg.neutral,
            max_connections: None,
            through_pooler: false,
        }
    }

    async fn prepare(&self, env: Env) -> Result<Env> {
        // Checked up front: the workers that start at once each need the
        // spec's sessions and a setup connection. Without room for them the
        // run would fail part-way, on a worker's "too many clients".
        let cfg = &self.explorer.cfg;
        let per = cfg.spec.sessions.len() + 1;
        let first = if cfg.alone.is_some() { 1 } else { cfg.jobs.first };
        let first = first.clamp(1, self.explorer.runs.len().max(1));
        crate::harness::check_room(&env, per, per * first, |free| {
            msg::no_room(free, first, per * first, per)
        })
        .await?;
        Ok(env)
    }

    async fn work(&self, env: &Arc<Env>) -> Result<()> {
        let began = Instant::now();
        self.explorer.run_all(env).await?;
        if let Some(class) = self.step_class {
            // The classes first, so the room sees which one is walked
            // through (and how long exploring took, not the walk).
            let outcomes = self.explorer.outcomes_so_far();
            let style = Style::for_stdout(self.common.lang, false);
            let ms = round_ms(began.elapsed().as_secs_f64() * 1000.0);
            let report = self.report(&outcomes, &[], &env.server.version, ms, None);
            let mut text = render::explore::text(&report, &style);
            let classes = outcomes.first().map_or(0, |o| o.classes.len());
            let k = (class.checked_sub(1))
                .and_then(|i| outcomes.first()?.classes.get(i))
                .map(Class::representative);
            if let Some(k) = k {
                let (li, pi) = self.explorer.runs[k];
                let line = plan::line(&self.explorer.cfg.spec, &self.explorer.cfg.plans[li][pi]);
                text.push_str(&format!(
                    "\n── {} ──\n",
                    style.say(&render::explore::stepping(class, line))
                ));
            }
            crate::output::out(&text)?;
            let Some(k) = k else {
                bail!(msg::no_class(class, classes));
            };
            let r = self.explorer.replay(env, k).await?;
            *self.stepped.lock().unwrap() = Some((class, k, r));
        }
        Ok(())
    }

    async fn clean_up(&self, env: &Env, _failed: bool) -> Result<()> {
        self.explorer.clean_up(&env.control).await
    }

    fn summary_title(&self) -> Option<String> {
        Some("lab explore".to_string())
    }

    fn finish(&self, stop: &Stop, version: &str, began: Instant) -> Result<Finished> {
        let results = self.explorer.take();
        let cfg = &self.explorer.cfg;
        if let Some((step, column, columns)) = results
            .iter()
            .flatten()
            .find_map(|r| crate::commands::phenomena::missing_column(&cfg.occurs_if, &r.observation))
        {
            bail!(crate::commands::phenomena::msg::no_column(
                &cfg.name,
                step,
                column,
                columns.join(", ")
            ));
        }
        let outcomes = self.explorer.outcomes(&results);
        let as_expected = outcomes.iter().all(|o| o.as_expected.unwrap_or(true));
        let ms = round_ms(began.elapsed().as_secs_f64() * 1000.0);
        let style = Style::for_stdout(self.common.lang, false);
        let stopped = stop.error(self.common.lang).map(|(exit, message)| Stopped {
            message,
            exit_code: exit as u8,
        });
        let done = stopped.is_none();
        let report = self.report(&outcomes, &results, version, ms, stopped);
        let (reports, pages) = render::explore::suites(&report, self.common.lang);
        let stdout = match self.format {
            SpecFormat::Json => render::explore::json(&report)?,
            SpecFormat::Markdown => render::markdown::summary(
                "lab explore",
                &crate::report::AllReport {
                    server_version: version.to_string(),
                    as_expected,
                    elapsed_ms: ms,
                    scenarios: reports.clone(),
                },
                &Style::plain(self.common.lang),
            ),
            SpecFormat::Table if done => match &*self.stepped.lock().unwrap() {
                // The classes were shown before the walk; after it, what it did.
                Some((class, k, r)) => {
                    let (li, pi) = self.explorer.runs[*k];
                    let line = plan::line(&self.explorer.cfg.spec, &self.explorer.cfg.plans[li][pi]);
                    render::explore::stepped(*class, line, &r.timeline, &style)
                }
                None => render::explore::text(&report, &style),
            },
            SpecFormat::Isolation => {
                // As isolationtester prints: the runs that finished, in order, up to the first that did not.
                let cfg = &self.explorer.cfg;
                // isolationtester names, on stderr, the steps its listed permutations leave out.
                if cfg.listed {
                    for name in cfg.spec.check().unwrap_or_default() {
                        crate::output::etext!("unused step name: {name}\n");
                    }
                }
                let mut text = format!("Parsed test spec with {} sessions\n", cfg.spec.sessions.len());
                for r in results.iter().map_while(Option::as_ref) {
                    for (stream, piece) in &r.pieces {
                        match stream {
                            Stream::Out => text.push_str(piece),
                            Stream::Err => crate::output::etext!("{piece}"),
                        }
                    }
                }
                text
            }
            _ => String::new(),
        };
        Ok(Finished {
            reports,
            html_reports: Some(pages),
            html: html::Kind::Classes,
            style: Style::plain(self.common.lang),
            stdout,
            stderr: Vec::new(),
            as_expected,
        })
    }
}

impl crate::options::Run for super::args::ExploreArgs {
    fn run(self, cx: &crate::options::Invocation<'_>) -> Result<crate::output::Exit> {
        let cfg = ExploreRun::new(&self, cx.env, cx.lang)?;
        crate::harness::block_on(crate::harness::run(&Explore::start(cfg, cx.env)?))
    }
}
