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
        let hosts = Self::hosts(&env.pg);
        let recorder = Recorder::default();
        let base = Opener::new(
            env,
            "lab:failover:watch:".into(),
            "failover/watch".into(),
            recorder.clone(),
        )
        .raw();
        let nodes = Nodes {
            openers: (hosts.iter().enumerate())
                .map(|(i, (_, c))| (i, base.elsewhere(c.clone())))
                .collect(),
            hosts,
            sql: SqlFile::load(&self.files, "failover.sql")?,
            recorder,
            wait: self.common.wait_timeout,
        };
        let Some(found) = first_primary(&nodes.openers, W, nodes.wait).await? else {
            bail!(nodes.no_primary());
        };
        let create = nodes.sql.bind("watch_create", &[("table", &self.table)])?;
        found.session.exec("watch_create", &create).await?;
        found
            .session
            .note(msg::connected(&nodes.hosts[found.index].0, found.tries, 0));
        let (writes, breaks) = self.write_until_stopped(&nodes, (found.index, found.session)).await?;
        nodes.recorder.note(W, msg::watch_stopped(writes.len()));
        let lists = self.read_back(&nodes).await?;
        let mut r = report(&writes, &breaks, &lists);
        r.timeline = nodes.recorder.take();
        r.sessions = nodes.recorder.take_connections();
        r.sqlstates = crate::report::sqlstates_of(&r.timeline);
        r.elapsed_ms = round_ms(began.elapsed().as_secs_f64() * 1000.0);
        Ok(r)
    }

    /// Writes, one transaction at a time, reconnecting to whichever node
    /// takes writes, until Ctrl-C or `--seconds`: each write and how it
    /// ended, and when the writer found its connection gone between two.
    async fn write_until_stopped(&self, nodes: &Nodes, first: (usize, Session)) -> Result<(Vec<Write>, Vec<f64>)> {
        let mut session = Some(first);
        // Ctrl-C ends the writing; lab then reads back.
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let ctrl_c = tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                flag.store(true, Ordering::SeqCst);
            }
        });
        let wait = nodes.wait;
        let until = self.opts.seconds.map(|s| Instant::now() + Duration::from_secs(s));
        let mut writes: Vec<Write> = Vec::new();
        let mut breaks: Vec<f64> = Vec::new();
        let mut shown = 0;
        while !stop.load(Ordering::SeqCst) && until.is_none_or(|u| Instant::now() < u) {
            let Some((node, s)) = session.clone().filter(|(_, s)| !s.client().is_closed()) else {
                if session.take().is_some() {
                    breaks.push(nodes.recorder.now_ms());
                }
                let began = Instant::now();
                // Until one takes writes, Ctrl-C or the end.
                let left = until.map_or(wait, |u| {
                    u.saturating_duration_since(Instant::now())
                        .max(Duration::from_millis(100))
                });
                if let Some(f) = first_primary(&nodes.openers, W, left.min(wait)).await? {
                    f.session.note(msg::connected(
                        &nodes.hosts[f.index].0,
                        f.tries,
                        began.elapsed().as_millis() as u64,
                    ));
                    session = Some((f.index, f.session));
                }
                continue;
            };
            let w = self
                .write(nodes, (node, &s), writes.len() as i64 + 1, &mut shown)
                .await?;
            let acked = w.outcome == Outcome::Acked;
            writes.push(w);
            if !acked {
                if s.tx() != crate::engine::session::Tx::Idle && !s.client().is_closed() {
                    let _ = s.simple("ROLLBACK").await;
                }
                session = None;
            }
        }
        ctrl_c.abort();
        Ok((writes, breaks))
    }

    /// Write `id` on `node`: acknowledged (its COMMIT answered), failed, or
    /// unknown (no answer, or the connection lost before COMMIT's). The
    /// first writes and every one that did not get through go in the timeline.
    async fn write(&self, nodes: &Nodes, (node, s): (usize, &Session), id: i64, shown: &mut usize) -> Result<Write> {
        let (k1, k2) = verdict::keys(id);
        let text = nodes.sql.bind(
            "watch_write",
            &[("table", &self.table), ("id", &id), ("k1", &k1), ("k2", &k2)],
        )?;
        let (outcome, lsn, at) = match s.answer_within(&text, nodes.wait).await {
            None => {
                nodes.recorder.note(W, msg::no_answer(id, nodes.wait.as_secs()));
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
                if *shown < 3 || outcome != Outcome::Acked {
                    (nodes.recorder).answer(at, W, Some("watch_write"), &text, &a, None, None);
                    *shown += 1;
                }
                let lsn = crate::engine::answer::last_set(&results)
                    .and_then(|set| set.get(0, "lsn"))
                    .and_then(verdict::lsn);
                (outcome, lsn, at)
            }
        };
        Ok(Write {
            id,
            outcome,
            node: Some(nodes.hosts[node].0.clone()),
            lsn,
            t_ms: nodes.recorder.t_ms(at),
        })
    }

    /// Everything, read back from the primary (each key's list of ids);
    /// lab's table dropped.
    async fn read_back(&self, nodes: &Nodes) -> Result<Vec<(String, Vec<i64>)>> {
        let Some(f) = first_primary(&nodes.openers, "check", nodes.wait).await? else {
            bail!(nodes.no_primary());
        };
        let on = || msg::reading_on(&nodes.hosts[f.index].0);
        let table = [("table", &self.table as &(dyn std::fmt::Display + Sync))];
        f.session.note(on());
        f.session
            .rows("watch_count", &nodes.sql.bind("watch_count", &table)?)
            .await?;
        let read = (f.session.client())
            .simple_query(&nodes.sql.bind("watch_read", &table)?)
            .await
            .map_err(|e| crate::postgres::connect::sql_error(e, on()))?;
        f.session
            .exec("watch_drop", &nodes.sql.bind("watch_drop", &table)?)
            .await?;
        Ok(crate::postgres::connect::text_rows(&read)
            .into_iter()
            .map(|r| {
                let k = r.first().cloned().flatten().unwrap_or_default();
                let v = r.get(1).cloned().flatten().unwrap_or_default();
                (k, v.split(',').filter_map(|x| x.trim().parse().ok()).collect())
            })
            .collect())
    }
}

/// The cluster's nodes as the watch reaches them.
struct Nodes {
    /// Each host's name and settings, in the URL's order.
    hosts: Vec<(String, ConnInfo)>,
    openers: Vec<(usize, Opener)>,
    sql: SqlFile,
    recorder: Recorder,
    wait: Duration,
}

impl Nodes {
    fn no_primary(&self) -> crate::i18n::Text {
        msg::watch_no_primary(
            self.hosts.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>().join(", "),
            self.wait.as_secs(),
        )
    }
}

/// The verdict on `writes` from what was read back (`lists`): checks,
/// what was observed, metrics and the windows no write got through.
fn report(writes: &[Write], breaks: &[f64], lists: &[(String, Vec<i64>)]) -> VariantReport {
    let checked = verdict::lists(writes, lists);
    let t = &checked.tally;
    let windows = verdict::windows_across(writes, breaks);
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
    let mut hosts_used: Vec<String> = writes.iter().filter_map(|w| w.node.clone()).collect();
    hosts_used.dedup();
    // The node that took the last write before a window, or the first after it.
    let node_at = |ms: f64, before: bool| {
        let acked = |w: &&Write| w.outcome == Outcome::Acked;
        let w = if before {
            writes.iter().rev().filter(acked).find(|w| w.t_ms <= ms)
        } else {
            writes.iter().filter(acked).find(|w| w.t_ms >= ms)
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
    let m = &mut r.metrics;
    m.insert("writes".into(), writes.len().into());
    m.insert("acked".into(), t.acked.into());
    m.insert("lost".into(), t.lost.len().into());
    m.insert("lost_ids".into(), ranges(&t.lost).into());
    m.insert("unknown_present".into(), t.unknown_present.len().into());
    m.insert("unknown_absent".into(), t.unknown_absent.len().into());
    m.insert("duplicates".into(), t.duplicates.len().into());
    m.insert("torn".into(), checked.torn.len().into());
    m.insert("unavailable".into(), serde_json::Value::Array(win));
    m.insert(
        "unavailable_ms".into(),
        windows.iter().map(|w| w.ms()).fold(0.0, f64::max).round().into(),
    );
    m.insert("nodes".into(), hosts_used.into());
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
    r
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
