//! `lab failover --watch --database-url 'postgres://h1,h2,h3/db?target_session_attrs=read-write'`:
//! your own cluster, failed over by your own means. A writer keeps
//! writing through reconnects (each write a transaction that appends its
//! id to two lists, as `lab hunt`'s list-append transactions do) until
//! Ctrl-C or `--seconds`; then lab reads everything back from the primary
//! and reports what was acknowledged but lost, what had an unknown
//! outcome but is there, torn transactions and duplicates, and every
//! window in which no write got through. lab creates one table of its
//! own (dropped at the end) and touches nothing else. Exit 1 when an
//! acknowledged write is missing.
//!
//! The hosts are tried in the URL's order until one is not in recovery
//! ([`super::writer::first_primary`]): lab's connection layer opens one
//! host at a time today; once it takes multi-host URLs with
//! `target_session_attrs=primary` itself, that loop is where it goes.
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Result, bail};

use super::msg;
use super::opts::FailoverOpts;
use super::verdict::{self, Outcome, Write, ranges};
use super::writer::{W, first_primary};
use crate::commands::scenarios::config::RunConfig;
use crate::engine::{Env, Opener, Recorder, Session};
use crate::files::LabFiles;
use crate::harness::{Common, Finished, Job, Setup, Stop};
use crate::named_sql::SqlFile;
use crate::options::Format;
use crate::postgres::conninfo::EnvLookup;
use crate::postgres::{ConnInfo, RunOn};
use crate::render::{self, Style, html};
use crate::report::{Check, Phrase, ScenarioReport, VariantReport, round_ms};

/// Whether the run is `lab failover --watch`.
pub fn asked(cfg: &RunConfig) -> bool {
    cfg.plan.first().is_some_and(|p| {
        p.scenario.name == super::SCENARIO.name && p.params.downcast_ref::<FailoverOpts>().is_some_and(|o| o.watch)
    })
}

/// A `--watch` run.
pub struct Watch {
    cfg: RunConfig,
    common: Common,
    opts: FailoverOpts,
    style: Style,
    files: LabFiles,
    /// lab's table on the cluster.
    table: String,
    report: Mutex<Option<VariantReport>>,
}

impl Watch {
    pub fn start(cfg: RunConfig, env: EnvLookup<'_>) -> Result<Watch> {
        let opts = cfg.plan[0]
            .params
            .downcast_ref::<FailoverOpts>()
            .expect("failover options")
            .clone();
        let common = cfg.shared.start(env)?;
        if !matches!(common.run_on, RunOn::Server(..)) {
            bail!(msg::watch_needs_url());
        }
        let files = crate::options::lab_files(&cfg.lab_dir)?;
        let style = Style {
            verbose: cfg.verbose,
            ..Style::for_stdout(cfg.shared.lang, cfg.explain)
        };
        Ok(Watch {
            table: format!("lab_failover_watch_{}", std::process::id()),
            cfg,
            common,
            opts,
            style,
            files,
            report: Mutex::default(),
        })
    }

    /// Each host of the URL as a server of its own (same user, password,
    /// database, options and TLS), in the URL's order, quick to give up on
    /// a node that is down.
    fn hosts(pg: &ConnInfo) -> Vec<(String, ConnInfo)> {
        let mut hosts = pg.one_per_host();
        for (_, one) in &mut hosts {
            one.connect_timeout(Duration::from_secs(2));
        }
        hosts
    }

    async fn watch(&self, env: &Env) -> Result<VariantReport> {
        let began = Instant::now();
        let sql = SqlFile::load(&self.files, "failover.sql")?;
        let table = &self.table;
        let hosts = Self::hosts(&env.pg);
        let recorder = Recorder::default();
        let base = Opener::new(
            env,
            "lab:failover:watch:".into(),
            "failover/watch".into(),
            recorder.clone(),
        )
        .raw();
        let openers: Vec<(usize, Opener)> = hosts
            .iter()
            .enumerate()
            .map(|(i, (_, c))| (i, base.elsewhere(c.clone())))
            .collect();
        let wait = self.common.wait_timeout;
        let Some(found) = first_primary(&openers, W, wait).await? else {
            bail!(msg::watch_no_primary(
                hosts.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>().join(", "),
                wait.as_secs()
            ));
        };
        found
            .session
            .exec("watch_create", &sql.bind("watch_create", &[("table", table)])?)
            .await?;
        found
            .session
            .note(msg::connected(&hosts[found.index].0, found.tries, 0));
        let mut session: Option<(usize, Session)> = Some((found.index, found.session));
        // Ctrl-C ends the writing; lab then reads back.
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let ctrl_c = tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                flag.store(true, Ordering::SeqCst);
            }
        });
        let until = self.opts.seconds.map(|s| Instant::now() + Duration::from_secs(s));
        let mut writes: Vec<Write> = Vec::new();
        let mut id = 0i64;
        let mut shown = 0;
        while !stop.load(Ordering::SeqCst) && until.is_none_or(|u| Instant::now() < u) {
            if session.as_ref().is_none_or(|(_, s)| s.client().is_closed()) {
                session = None;
                let began = Instant::now();
                // Until one takes writes, Ctrl-C or the end.
                let left = until.map_or(wait, |u| {
                    u.saturating_duration_since(Instant::now())
                        .max(Duration::from_millis(100))
                });
                if let Some(f) = first_primary(&openers, W, left.min(wait)).await? {
                    f.session.note(msg::connected(
                        &hosts[f.index].0,
                        f.tries,
                        began.elapsed().as_millis() as u64,
                    ));
                    session = Some((f.index, f.session));
                }
                continue;
            }
            let (node, s) = session.clone().expect("connected");
            id += 1;
            let (k1, k2) = verdict::keys(id);
            let text = sql.bind(
                "watch_write",
                &[("table", table), ("id", &id), ("k1", &k1), ("k2", &k2)],
            )?;
            let answer = s.answer_within(&text, wait).await;
            let (outcome, lsn, at) = match answer {
                None => {
                    recorder.note(W, msg::no_answer(id, wait.as_secs()));
                    (Outcome::Unknown, None, Instant::now())
                }
                Some((mut a, at)) => {
                    s.track(&text, &mut a);
                    let (results, lost) = match &a {
                        Ok(r) => (r.clone(), false),
                        Err(e) => (e.before.clone(), e.connection_lost),
                    };
                    let committed = results.iter().any(|r| r.tag == "COMMIT");
                    let outcome = match (committed, lost) {
                        (true, _) => Outcome::Acked,
                        (false, true) => Outcome::Unknown,
                        (false, false) => Outcome::Failed,
                    };
                    // The first writes and every one that did not get through, in the timeline.
                    if shown < 3 || outcome != Outcome::Acked {
                        recorder.answer(at, W, Some("watch_write"), &text, &a, None, None);
                        shown += 1;
                    }
                    let lsn = crate::engine::answer::last_set(&results)
                        .and_then(|set| set.get(0, "lsn"))
                        .and_then(verdict::lsn);
                    (outcome, lsn, at)
                }
            };
            writes.push(Write {
                id,
                outcome,
                node: Some(hosts[node].0.clone()),
                lsn,
                t_ms: recorder.t_ms(at),
            });
            if outcome != Outcome::Acked {
                if s.tx() != crate::engine::session::Tx::Idle && !s.client().is_closed() {
                    let _ = s.simple("ROLLBACK").await;
                }
                session = None;
            }
        }
        ctrl_c.abort();
        drop(session);
        recorder.note(W, msg::watch_stopped(writes.len()));
        // Everything, read back from the primary.
        let Some(f) = first_primary(&openers, "check", wait).await? else {
            bail!(msg::watch_no_primary(
                hosts.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>().join(", "),
                wait.as_secs()
            ));
        };
        f.session.note(msg::reading_on(&hosts[f.index].0));
        f.session
            .rows("watch_count", &sql.bind("watch_count", &[("table", table)])?)
            .await?;
        let read = f
            .session
            .client()
            .simple_query(&sql.bind("watch_read", &[("table", table)])?)
            .await
            .map_err(|e| crate::postgres::connect::sql_error(e, msg::reading_on(&hosts[f.index].0)))?;
        f.session
            .exec("watch_drop", &sql.bind("watch_drop", &[("table", table)])?)
            .await?;
        drop(f);
        let lists: Vec<(String, Vec<i64>)> = crate::postgres::connect::text_rows(&read)
            .into_iter()
            .map(|r| {
                let k = r.first().cloned().flatten().unwrap_or_default();
                let v = r.get(1).cloned().flatten().unwrap_or_default();
                (k, v.split(',').filter_map(|x| x.trim().parse().ok()).collect())
            })
            .collect();
        let checked = verdict::lists(&writes, &lists);
        let t = &checked.tally;
        let windows = verdict::windows(&writes);
        let mut r = VariantReport::new("watch", msg::watch_expected(), msg::watch_explain());
        let check = |ok: bool, text: crate::i18n::Text| Check {
            id: text.key().to_string(),
            ok,
            text,
        };
        r.checks = vec![
            check(t.lost.is_empty(), msg::watch_none_lost(t.acked, ranges(&t.lost))),
            check(checked.torn.is_empty(), msg::watch_atomic(ranges(&checked.torn))),
            check(t.duplicates.is_empty(), msg::watch_no_duplicates(ranges(&t.duplicates))),
            check(
                t.failed_present.is_empty(),
                msg::watch_failed_absent(ranges(&t.failed_present)),
            ),
        ];
        r.as_expected = r.checks.iter().all(|c| c.ok);
        r.anomaly = Some(!t.lost.is_empty() || !checked.torn.is_empty() || !t.duplicates.is_empty());
        r.observed = vec![msg::watch_observed(
            writes.len(),
            t.acked,
            t.lost.len(),
            t.unknown_present.len(),
            windows.len(),
        )];
        let hosts_used: Vec<String> = {
            let mut h: Vec<String> = writes.iter().filter_map(|w| w.node.clone()).collect();
            h.dedup();
            h
        };
        let node_at = |ms: f64, before: bool| {
            let w = if before {
                writes
                    .iter()
                    .rev()
                    .find(|w| w.outcome == Outcome::Acked && w.t_ms <= ms)
            } else {
                writes.iter().find(|w| w.outcome == Outcome::Acked && w.t_ms >= ms)
            };
            w.and_then(|w| w.node.clone()).unwrap_or_else(|| "-".into())
        };
        let win: Vec<serde_json::Value> = windows
            .iter()
            .map(|w| {
                serde_json::json!({
                    "from_ms": (w.last_ok_ms * 10.0).round() / 10.0,
                    "to_ms": (w.first_ok_ms * 10.0).round() / 10.0,
                    "ms": w.ms().round(),
                    "attempts": w.attempts,
                    "from_node": node_at(w.last_ok_ms, true),
                    "to_node": node_at(w.first_ok_ms, false),
                })
            })
            .collect();
        r.metrics.insert("writes".into(), writes.len().into());
        r.metrics.insert("acked".into(), t.acked.into());
        r.metrics.insert("lost".into(), t.lost.len().into());
        r.metrics.insert("lost_ids".into(), ranges(&t.lost).into());
        r.metrics
            .insert("unknown_present".into(), t.unknown_present.len().into());
        r.metrics.insert("unknown_absent".into(), t.unknown_absent.len().into());
        r.metrics.insert("duplicates".into(), t.duplicates.len().into());
        r.metrics.insert("torn".into(), checked.torn.len().into());
        r.metrics.insert("unavailable".into(), serde_json::Value::Array(win));
        r.metrics.insert(
            "unavailable_ms".into(),
            windows.iter().map(|w| w.ms()).fold(0.0, f64::max).round().into(),
        );
        r.metrics.insert("nodes".into(), hosts_used.clone().into());
        r.evidence.push(crate::report::Evidence {
            title: Phrase::Text(msg::watch_windows_title()),
            columns: ["from_ms", "to_ms", "ms", "attempts", "from", "to"]
                .iter()
                .map(|c| Phrase::Plain((*c).into()))
                .collect(),
            rows: windows
                .iter()
                .map(|w| {
                    vec![
                        Phrase::Plain(format!("{:.1}", w.last_ok_ms)),
                        Phrase::Plain(format!("{:.1}", w.first_ok_ms)),
                        Phrase::Plain(format!("{:.0}", w.ms())),
                        Phrase::Plain(w.attempts.to_string()),
                        Phrase::Plain(node_at(w.last_ok_ms, true)),
                        Phrase::Plain(node_at(w.first_ok_ms, false)),
                    ]
                })
                .collect(),
        });
        r.timeline = recorder.take();
        r.sessions = recorder.take_connections();
        r.sqlstates = crate::report::sqlstates_of(&r.timeline);
        r.elapsed_ms = round_ms(began.elapsed().as_secs_f64() * 1000.0);
        Ok(r)
    }
}

impl Job for Watch {
    fn common(&self) -> &Common {
        &self.common
    }

    fn setup(&self) -> Setup {
        Setup {
            control_app: "lab:failover:watch:control".into(),
            run: "failover-watch".into(),
            // Sessions keep the server's search_path: lab's table goes where the user's would.
            schema: String::new(),
            neutral: false,
            max_connections: None,
            through_pooler: false,
        }
    }

    /// Ctrl-C ends the writing, not the run: lab reads back and reports.
    fn interrupts(&self) -> bool {
        false
    }

    async fn work(&self, env: &std::sync::Arc<Env>) -> Result<()> {
        let r = self.watch(env).await?;
        *self.report.lock().unwrap() = Some(r);
        Ok(())
    }

    /// Drops lab's table wherever the primary is now, if the run stopped before it did.
    async fn clean_up(&self, env: &Env, failed: bool) -> Result<()> {
        if !failed {
            return Ok(());
        }
        let sql = SqlFile::load(&self.files, "failover.sql")?;
        let drop_sql = sql.bind("watch_drop", &[("table", &self.table)])?;
        for (_, c) in Self::hosts(&env.pg) {
            if let Ok(conn) = crate::postgres::connect::connect(&c, "lab:failover:watch:clean-up", None, None).await
                && crate::postgres::connect::simple_value(&conn.client, "SELECT pg_is_in_recovery()::text")
                    .await
                    .ok()
                    .flatten()
                    .as_deref()
                    == Some("false")
            {
                conn.client
                    .batch_execute(&drop_sql)
                    .await
                    .map_err(|e| crate::postgres::connect::sql_error(e, msg::watch_clean_up()))?;
                return Ok(());
            }
        }
        Ok(())
    }

    fn summary_title(&self) -> Option<String> {
        Some("lab failover --watch".to_string())
    }

    fn finish(&self, stop: &Stop, version: &str, began: Instant) -> Result<Finished> {
        let mut report = ScenarioReport::new(super::SCENARIO.name, version);
        if let Some(v) = self.report.lock().unwrap().take() {
            report.as_expected = v.as_expected;
            report.variants.push(v);
        }
        report.elapsed_ms = round_ms(began.elapsed().as_secs_f64() * 1000.0);
        if let Some((exit, message)) = stop.error(self.cfg.shared.lang) {
            report.as_expected = false;
            report.error = Some(crate::report::RunError {
                variant: "watch".into(),
                message,
                exit_code: exit as u8,
            });
        }
        let ran = !report.variants.is_empty();
        let stdout = match self.cfg.format {
            Format::Json => render::document("failover", &report)?,
            Format::Table if ran && self.cfg.summary => render::brief_summary(
                &crate::report::AllReport {
                    server_version: version.to_string(),
                    as_expected: report.as_expected,
                    elapsed_ms: report.elapsed_ms,
                    scenarios: vec![report.clone()],
                },
                &self.style,
            ),
            Format::Table if ran => render::scenario(&report, &self.style),
            Format::Table => String::new(),
            Format::Mermaid => render::mermaid::report(std::slice::from_ref(&report), &self.style),
            Format::Markdown => render::markdown::summary(
                "lab failover --watch",
                &crate::report::AllReport {
                    server_version: version.to_string(),
                    as_expected: report.as_expected,
                    elapsed_ms: report.elapsed_ms,
                    scenarios: vec![report.clone()],
                },
                &Style::plain(self.style.lang),
            ),
        };
        let as_expected = report.as_expected;
        Ok(Finished {
            reports: vec![report],
            html_reports: None,
            html: html::Kind::Runs,
            style: self.style,
            stdout,
            stderr: Vec::new(),
            as_expected,
        })
    }
}
