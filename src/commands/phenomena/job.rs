//! `lab phenomena` in the harness: the matrix measured cell by cell, then
//! printed (the matrix, JSON, or a diagram per cell).
use std::sync::Arc;
use std::time::Instant;

use anyhow::Result;

use super::MatrixConfig;
use super::config::PhenomenaRun;
use super::{self as phenomena, Cell, Interleavings, LEVELS, Matrix as Cells};
use crate::commands::explore::{Choice, ExploreConfig, Explorer, Source};
use crate::engine::Env;
use crate::harness::{Common, Finished, Job, Setup, Stop};
use crate::options::Format;
use crate::postgres::conninfo::EnvLookup;
use crate::render::{self, Style, html};
use crate::report::phenomena::{MatrixError, MatrixReport, Row};
use crate::report::round_ms;

/// What a JUnit case for a phenomenon's interleavings, cut short, is named.
const ALL_INTERLEAVINGS: &str = "all-interleavings";

/// The anomaly matrix of one run.
pub struct Matrix {
    common: Common,
    format: Format,
    show: bool,
    explain: bool,
    cells: Cells,
    /// `--all-interleavings`: each phenomenon's interleavings, by level, as measured.
    counts: std::sync::Mutex<Vec<Option<Vec<Interleavings>>>>,
    /// The exploration running now (its schemas go if the run is cut short).
    exploring: std::sync::Mutex<Option<Arc<Explorer>>>,
}

impl Matrix {
    /// Where the run starts: the phenomena's specs read, then what every
    /// run reads (the report files, the baseline, the server).
    pub fn start(cfg: PhenomenaRun, env: EnvLookup<'_>) -> Result<Matrix> {
        let files = crate::options::lab_files(&cfg.lab_dir)?;
        let matrix = MatrixConfig {
            lang: cfg.shared.lang,
            phenomena: phenomena::chosen(&files, cfg.show.as_deref())?,
            levels: cfg.levels,
            jobs: cfg.jobs,
            wait_timeout: cfg.shared.wait_timeout,
            all_interleavings: cfg.all_interleavings,
        };
        Ok(Matrix {
            common: cfg.shared.start(env)?,
            format: cfg.format,
            show: cfg.show.is_some(),
            explain: cfg.explain,
            counts: std::sync::Mutex::new(vec![None; matrix.phenomena.len()]),
            exploring: std::sync::Mutex::default(),
            cells: Cells::new(matrix),
        })
    }

    /// Every interleaving of each phenomenon's steps, at the matrix's levels, counted per cell.
    async fn interleavings(&self, env: &Arc<Env>) -> Result<()> {
        let cfg = &self.cells.cfg;
        for (i, p) in cfg.phenomena.iter().enumerate() {
            let explore = ExploreConfig::new(
                Source {
                    name: p.id.clone(),
                    spec: p.spec.clone(),
                    bookstore: false,
                    lab: true,
                    phenomenon: true,
                },
                Choice {
                    levels: cfg.levels.iter().map(|&l| Some(l)).collect(),
                    all: true,
                    sample: None,
                    isolation: false,
                    options: None,
                },
                cfg.jobs,
                cfg.wait_timeout,
                cfg.lang,
            )?;
            let explorer = Arc::new(Explorer::new(explore));
            *self.exploring.lock().unwrap() = Some(explorer.clone());
            explorer.run_all(env).await?;
            let results = explorer.take();
            let counts = explorer
                .outcomes(&results)
                .iter()
                .map(|o| Interleavings {
                    runs: o.tally.runs,
                    occur: o.tally.anomaly.unwrap_or(0),
                    blocked: o.tally.blocked,
                    aborted: o.tally.aborted,
                    dead_ends: o.tally.dead_ends,
                    stuck: o.tally.stuck,
                    as_expected: o.as_expected.unwrap_or(true),
                })
                .collect();
            self.counts.lock().unwrap()[i] = Some(counts);
            *self.exploring.lock().unwrap() = None;
        }
        Ok(())
    }

    /// The measured cells, with their interleavings where counted.
    fn grid(&self) -> Vec<Vec<Option<Cell>>> {
        let mut grid = self.cells.grid();
        let counts = self.counts.lock().unwrap();
        for (row, counts) in grid.iter_mut().zip(counts.iter()) {
            let Some(counts) = counts else { continue };
            for (cell, i) in row.iter_mut().zip(counts) {
                if let Some(c) = cell {
                    c.as_expected &= i.as_expected;
                    c.interleavings = Some(i.clone());
                }
            }
        }
        grid
    }

    /// The matrix as measured: every cell so far; where a run stopped part-way,
    /// the first cell with no result or, once every cell has one, the first
    /// phenomenon whose interleavings were not all counted (`--all-interleavings`).
    fn report(&self, stop: &Stop, version: &str, began: Instant) -> MatrixReport {
        let cfg = &self.cells.cfg;
        let grid = self.grid();
        let error = stop.error(self.common.lang).map(|(exit, message)| {
            let missing = grid
                .iter()
                .enumerate()
                .find_map(|(i, row)| Some((i, row.iter().position(Option::is_none)?)));
            let at: Option<(usize, Option<&str>)> = match missing {
                Some((i, j)) => Some((i, Some(LEVELS[cfg.levels[j]].0))),
                None if cfg.all_interleavings => {
                    let counts = self.counts.lock().unwrap();
                    counts.iter().position(Option::is_none).map(|i| (i, None))
                }
                None => None,
            };
            MatrixError {
                phenomenon: at.map(|(i, _)| cfg.phenomena[i].id.clone()),
                level: at.and_then(|(_, level)| level.map(str::to_string)),
                message,
                exit_code: exit as u8,
            }
        });
        let phenomena: Vec<Row> = cfg
            .phenomena
            .iter()
            .zip(grid)
            .map(|(p, cs)| Row {
                id: p.id.clone(),
                name: p.name.clone(),
                title: p.name(),
                what: p.what(),
                cells: cfg.levels.iter().copied().zip(cs).collect(),
            })
            .collect();
        let measured_all = phenomena.iter().all(|p| p.cells.iter().all(|(_, c)| c.is_some()));
        let as_expected =
            error.is_none() && measured_all && phenomena.iter().flat_map(|p| p.measured()).all(|(_, c)| c.as_expected);
        MatrixReport {
            server_version: version.to_string(),
            as_expected,
            elapsed_ms: error
                .is_none()
                .then(|| round_ms(began.elapsed().as_secs_f64() * 1000.0)),
            levels: cfg.levels.iter().map(|&l| LEVELS[l].0.to_string()).collect(),
            phenomena,
            error,
        }
    }
}

impl Job for Matrix {
    fn common(&self) -> &Common {
        &self.common
    }

    fn setup(&self) -> Setup {
        Setup {
            control_app: "lab:phenomena:control".into(),
            run: "phenomena".into(),
            schema: String::new(),
            neutral: true,
            max_connections: None,
            through_pooler: false,
        }
    }

    async fn work(&self, env: &Arc<Env>) -> Result<()> {
        self.cells.measure(env).await?;
        if self.cells.cfg.all_interleavings {
            self.interleavings(env).await?;
        }
        Ok(())
    }

    async fn clean_up(&self, env: &Env, _failed: bool) -> Result<()> {
        let cells = self.cells.clean_up(&env.control).await;
        // Kept (not taken): a clean-up tried again on a new control connection needs it too.
        let exploring = self.exploring.lock().unwrap().clone();
        match exploring {
            Some(e) => cells.and(e.clean_up(&env.control).await),
            None => cells,
        }
    }

    fn summary_title(&self) -> Option<String> {
        Some("lab phenomena".to_string())
    }

    fn finish(&self, stop: &Stop, version: &str, began: Instant) -> Result<Finished> {
        let report = self.report(stop, version, began);
        let mut suites = render::phenomena::suites(&report);
        let style = Style::for_stdout(self.common.lang, self.explain);
        let html_style = Style::plain(self.common.lang);
        if let Some(e) = &report.error {
            // A matrix stopped part-way: JSON, JUnit and HTML still hold every
            // cell measured, and the error goes where the report says it stopped.
            if let Some(i) = report
                .phenomena
                .iter()
                .position(|p| Some(&p.id) == e.phenomenon.as_ref())
            {
                suites[i].as_expected = false;
                suites[i].error = Some(crate::report::RunError {
                    variant: e.level.clone().unwrap_or_else(|| ALL_INTERLEAVINGS.to_string()),
                    message: e.message.clone(),
                    exit_code: e.exit_code,
                });
            }
            suites.retain(|r| !r.variants.is_empty() || r.error.is_some());
            let stdout = match self.format {
                Format::Json => render::phenomena::json(&report)?,
                _ => String::new(),
            };
            return Ok(finished(suites, html_style, stdout, false));
        }
        let stdout = match self.format {
            Format::Json => render::phenomena::json(&report)?,
            Format::Table => render::phenomena::text(&report, &style, self.show, self.explain),
            Format::Mermaid => render::phenomena::mermaid(&report, &style),
            Format::Markdown => render::markdown::summary(
                "lab phenomena",
                &crate::report::AllReport {
                    server_version: version.to_string(),
                    as_expected: report.as_expected,
                    elapsed_ms: crate::report::millis(began.elapsed()),
                    scenarios: suites.clone(),
                },
                &Style::plain(style.lang),
            ),
        };
        Ok(finished(suites, html_style, stdout, report.as_expected))
    }
}

fn finished(reports: Vec<crate::report::ScenarioReport>, style: Style, stdout: String, as_expected: bool) -> Finished {
    Finished {
        reports,
        html_reports: None,
        html: html::Kind::Matrix,
        style,
        stdout,
        stderr: Vec::new(),
        as_expected,
    }
}

impl crate::options::Run for super::args::PhenomenaArgs {
    fn run(self, cx: &crate::options::Invocation<'_>) -> Result<crate::output::Exit> {
        let cfg = PhenomenaRun::new(&self, cx.lang)?;
        crate::harness::block_on(crate::harness::run(&Matrix::start(cfg, cx.env)?))
    }
}
