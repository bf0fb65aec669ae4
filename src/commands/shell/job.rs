//! `lab shell` in the harness: the run's schema claimed and (unless a
//! loaded spec builds its own) the lab schema built in it; the shell runs
//! until the person leaves; its sessions end and the schema goes, as after
//! every lab command. Ctrl-C belongs to the shell (it cancels a statement):
//! only SIGTERM and SIGHUP stop the run.
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use anyhow::Result;

use super::config::{ShellRun, alike};
use super::{Config, Loaded};
use crate::engine::Env;
use crate::files;
use crate::harness::{Common, Finished, Job, Setup, Stop, msg};
use crate::postgres::connect;
use crate::postgres::conninfo::EnvLookup;
use crate::render::{Style, html};

pub struct Shell {
    cfg: ShellRun,
    common: Common,
    shell: Config,
    /// The schema was there before the shell (`lab server`'s): kept afterwards.
    existed: AtomicBool,
}

impl Shell {
    /// Where the run starts: a spec to load read (its sessions are the
    /// shell's), then what every run reads (the server).
    pub fn start(cfg: ShellRun, env: EnvLookup<'_>) -> Result<Shell> {
        let spec = match &cfg.spec {
            Some(path) => {
                let f = crate::commands::spec::files::load(path)?;
                Some(Loaded {
                    spec: f.spec,
                    bookstore: f.bookstore,
                })
            }
            None => None,
        };
        let sessions = match (&spec, &cfg.sessions) {
            (Some(l), _) => {
                let names: Vec<String> = l.spec.sessions.iter().map(|s| s.name.clone()).collect();
                alike(&names)?;
                names
            }
            (None, names) => names.clone().unwrap_or_default(),
        };
        let shell = Config {
            sessions,
            spec,
            predict: cfg.predict,
            lang: cfg.shared.lang,
        };
        Ok(Shell {
            common: cfg.shared.start(env)?,
            cfg,
            shell,
            existed: AtomicBool::new(false),
        })
    }
}

impl Job for Shell {
    fn common(&self) -> &Common {
        &self.common
    }

    fn setup(&self) -> Setup {
        Setup {
            control_app: format!("lab:{}:control", self.cfg.schema),
            run: self.cfg.schema.clone(),
            schema: self.cfg.schema.clone(),
            neutral: true,
            max_connections: None,
            through_pooler: false,
        }
    }

    fn interrupts(&self) -> bool {
        false
    }

    async fn prepare(&self, env: Env) -> Result<Env> {
        let need = self.shell.sessions.len() + 1;
        crate::harness::check_room(&env, need, need, |free| msg::server_full(free, need)).await?;
        connect::claim_schema(&env.control, &self.cfg.schema).await?;
        let existed = connect::lab_schema_exists(&env.control, &self.cfg.schema).await?;
        self.existed.store(existed, Ordering::SeqCst);
        let files = files::LabFiles::embedded();
        let schema_sql = files.read("schema.sql")?;
        let (schema_sql, seed_sql) = if self.shell.bookstore() {
            (schema_sql.to_string(), files.read("seed.sql")?.to_string())
        } else {
            // A spec's setup makes its own tables: the schema alone, marked as lab's.
            let upto = schema_sql.find("COMMENT ON SCHEMA").unwrap_or(0);
            let end = schema_sql[upto..].find('\n').map_or(schema_sql.len(), |e| upto + e);
            (schema_sql[..end].to_string(), String::new())
        };
        connect::rebuild_schema(&env.control, &self.cfg.schema, &schema_sql, &seed_sql).await?;
        Ok(env)
    }

    async fn work(&self, env: &Arc<Env>) -> Result<()> {
        crate::commands::shell::run(env, &self.shell).await
    }

    async fn clean_up(&self, env: &Env, _failed: bool) -> Result<()> {
        if env.throwaway.is_some() || !crate::harness::reclaim(env, &self.cfg.schema).await {
            return Ok(());
        }
        crate::harness::end_sessions(env, &env.control, self.common.wait_timeout / 2).await?;
        let existed = self.existed.load(Ordering::SeqCst);
        crate::harness::schema_after(&env.control, &self.cfg.schema, self.cfg.keep_schema, existed).await?;
        connect::release_schema(&env.control, &self.cfg.schema).await
    }

    fn finish(&self, _stop: &Stop, _version: &str, _began: Instant) -> Result<Finished> {
        Ok(Finished {
            reports: Vec::new(),
            html_reports: None,
            html: html::Kind::Runs,
            style: Style::for_stdout(self.common.lang, false),
            stdout: String::new(),
            stderr: Vec::new(),
            as_expected: true,
        })
    }
}

impl crate::options::Run for super::args::ShellArgs {
    fn run(self, cx: &crate::options::Invocation<'_>) -> Result<crate::output::Exit> {
        let cfg = ShellRun::new(&self, cx.lang)?;
        crate::harness::block_on(crate::harness::run(&Shell::start(cfg, cx.env)?))
    }
}
