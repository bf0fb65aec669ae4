//! `lab spec` in the harness: each spec in a fresh database of its own,
//! shown as it finishes (lab's timeline, or isolationtester's transcript).
use std::sync::Arc;
use std::time::Instant;

use anyhow::Result;

use super::{Finished, Job, Setup, Stop};
use crate::cli::SpecFormat;
use crate::config::{Common, SpecRun};
use crate::engine::Env;
use crate::engine::transcript::Stream;
use crate::output::out;
use crate::render::{self, Style, html};
use crate::report::{AllReport, round_ms};
use crate::suite::{self, Outcome, Suite};

/// The specs of one run.
pub struct Specs {
    common: Common,
    format: SpecFormat,
    style: Style,
    suite: Arc<Suite>,
}

impl Specs {
    pub fn new(cfg: SpecRun) -> Specs {
        Specs {
            style: Style::for_stdout(cfg.common.lang, cfg.explain),
            common: cfg.common,
            format: cfg.format,
            suite: Arc::new(Suite::new(cfg.suite)),
        }
    }

    /// A spec's outcome as it finishes, in the run's format.
    fn show(&self, o: &Outcome) -> Result<()> {
        match self.format {
            SpecFormat::Isolation => {
                // stdout and stderr as isolationtester writes them.
                for (stream, text) in o.transcript.pieces() {
                    match stream {
                        Stream::Out => out(&text)?,
                        Stream::Err => eprint!("{text}"),
                    }
                }
                if let Some(d) = &o.diff {
                    eprint!("{d}");
                }
            }
            SpecFormat::Table => {
                out(&render::scenario(&o.report, &self.style))?;
                if let Some(d) = &o.diff {
                    out(d)?;
                }
                out("\n")?;
            }
            SpecFormat::Json => {}
        }
        Ok(())
    }
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
        }
    }

    async fn work(&self, env: &Arc<Env>) -> Result<()> {
        self.suite.run_all(env, |o| self.show(o)).await
    }

    async fn clean_up(&self, env: &Env, _failed: bool) -> Result<()> {
        self.suite.clean_up(&env.control).await;
        Ok(())
    }

    fn finish(&self, stop: &Stop, version: &str, began: Instant) -> Result<Finished> {
        let (reports, outcomes) = self.suite.results(stop.error(self.common.lang), version);
        let as_expected = reports.iter().all(|r| r.as_expected);
        let all = AllReport {
            server_version: version.to_string(),
            as_expected,
            elapsed_ms: round_ms(began.elapsed().as_secs_f64() * 1000.0),
            scenarios: reports.clone(),
        };
        let stdout = match self.format {
            SpecFormat::Json => render::json(&all)?,
            SpecFormat::Table if outcomes.len() > 1 => render::all_summary(&all, &self.style),
            _ => String::new(),
        };
        let mut stderr = Vec::new();
        if self.suite.cfg.regress && self.format != SpecFormat::Json {
            let matched = outcomes.iter().filter(|o| o.diff.is_none()).count();
            let secs = format!("{:.1}", began.elapsed().as_secs_f64());
            stderr.push(suite::msg::matched(matched, outcomes.len(), secs).render(self.common.lang));
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
