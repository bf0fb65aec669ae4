//! A job queue in the database: workers dequeue batches with FOR UPDATE or
//! FOR UPDATE SKIP LOCKED. The hot loop uses prepared statements on each
//! worker's raw client and is summarised per worker instead of being
//! recorded statement by statement.
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow};
use indicatif::ProgressBar;
use tokio::sync::oneshot;

use super::{ScenarioInfo, VariantInfo};
use crate::config::QueueParams;
use crate::engine::{Session, VariantCtx, lit, millis};
use crate::progress;
use crate::report::Evidence;
use crate::sql::SqlFile;

static SQL: SqlFile = SqlFile::new("lab/queue.sql", include_str!("../../lab/queue.sql"));

pub const INFO: ScenarioInfo = ScenarioInfo {
    name: "queue",
    variants: &[VariantInfo { name: "for-update" }, VariantInfo { name: "skip-locked" }],
};

#[derive(Debug, Default)]
struct Stats {
    messages: u64,
    batches: u64,
    /// Batches that came back with fewer rows than asked while others remained.
    short: u64,
    /// Time spent in the database between batches (mark, commit, dequeue:
    /// mostly lock waits, with FOR UPDATE).
    dequeue: Duration,
    /// When this worker passed the start barrier and when it stopped.
    started: Option<Instant>,
    stopped: Option<Instant>,
    why: String,
    killed: bool,
    ids: Vec<i64>,
    /// When each batch's work ran (one clock for all workers).
    work: Vec<(Instant, Instant)>,
}

/// The first worker to take a batch after `after` committed ones tells the
/// driver who it is and what it holds, then waits until the driver has
/// terminated its backend.
struct Kill {
    after: u64,
    holding: Mutex<Option<oneshot::Sender<(String, usize)>>>,
    terminated: Mutex<Option<oneshot::Receiver<()>>>,
}

pub async fn run(ctx: &mut VariantCtx<'_>) -> Result<()> {
    let skip_locked = match ctx.variant {
        "for-update" => false,
        "skip-locked" => true,
        other => anyhow::bail!(crate::tr!("run.no_variant", scenario = "queue", variant = other)),
    };
    let p = ctx.env.params.queue;
    ctx.env.rows(&SQL.bind("fill", &[("messages", &p.messages)])?).await?;
    ctx.env.rows(SQL.get("analyze")?).await?;
    let names: Vec<String> = (1..=p.workers).map(|i| format!("W{i}")).collect();
    let opener = ctx.opener();
    let dequeue_name = if skip_locked {
        "dequeue_skip_locked"
    } else {
        "dequeue_for_update"
    };
    // The batch size is written into the statement, as in the seed (LIMIT 10):
    // with no parameter, the server plans it once and reuses that plan from the
    // first batch on, where a `LIMIT $1` would be planned afresh for the first
    // five batches of every worker.
    let dequeue = SQL.bind(dequeue_name, &[("batch", &p.batch)])?;
    let mark = SQL.bind("mark_processed", &[("ids", &"$1"), ("worker", &"$2")])?;
    ctx.note(crate::tr!(
        "qu.loop_note",
        dequeue = one_line(&dequeue),
        ms = p.work.as_millis(),
        mark = one_line(&mark)
    ));

    let multi = progress::multi();
    let total = progress::bar(Some(&multi), p.messages as u64, "total");
    let go = ctx.barrier("workers_ready", names.len() + 1);
    let mut kill_ctl = None;
    let kill = p.kill_worker_after.map(|after| {
        let (holding_tx, holding_rx) = oneshot::channel();
        let (term_tx, term_rx) = oneshot::channel();
        kill_ctl = Some((holding_rx, term_tx));
        Arc::new(Kill {
            after: after as u64,
            holding: Mutex::new(Some(holding_tx)),
            terminated: Mutex::new(Some(term_rx)),
        })
    });
    let mut handles = Vec::new();
    for name in &names {
        let kill = kill.clone();
        let statements = Statements {
            dequeue: dequeue.clone(),
            mark: mark.clone(),
        };
        let (name, opener, go, bar, total) = (
            name.clone(),
            opener.clone(),
            go.clone(),
            progress::counter(&multi, name),
            total.clone(),
        );
        // Each worker runs on a thread of its own, with its connection on the
        // same thread: round trips wake nothing else, and the simulated work
        // can be a plain thread sleep (accurate to tens of microseconds;
        // tokio's timer rounds up to whole milliseconds).
        let (tx, rx) = oneshot::channel();
        let thread = std::thread::Builder::new().name(format!("lab-{name}")).spawn(move || {
            // The kernel may let a sleep overrun by the thread's timer slack
            // (50 µs by default) to batch wake-ups; the simulated work should
            // last what it says.
            // SAFETY: prctl with PR_SET_TIMERSLACK only sets this thread's slack.
            unsafe {
                libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong);
            }
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build();
            let r = match rt {
                Ok(rt) => rt.block_on(async {
                    let w = opener.open(&name).await?;
                    worker(w, p, &statements, &go, kill, bar, total).await
                }),
                Err(e) => Err(anyhow::Error::new(e).context(crate::tr!("qu.no_runtime"))),
            };
            let _ = tx.send(r);
        });
        thread.context(crate::tr!("qu.no_thread"))?;
        handles.push(rx);
    }
    go.wait("lab").await?;
    if let Some((holding, terminated)) = kill_ctl {
        // Wait for a worker to hold the batch to be killed in, terminate its
        // backend, make sure it is gone. The workers keep the only sender: if
        // the queue runs dry first, it is dropped and nobody is killed.
        drop(kill);
        let held = tokio::time::timeout(ctx.env.wait_timeout * 10, holding)
            .await
            .map_err(|_| anyhow!(crate::tr!("qu.no_victim")))?;
        if let Ok((victim, n)) = held {
            let pid = ctx
                .pid_of(&victim)
                .with_context(|| crate::tr!("qu.no_backend", worker = victim))?;
            ctx.env
                .control
                .execute("SELECT pg_terminate_backend($1)", &[&pid])
                .await
                .with_context(|| crate::tr!("qu.no_terminate", worker = victim))?;
            let gone = ctx.await_gone_pid(pid).await?;
            let gone = crate::i18n::t(if gone { "any.yes" } else { "any.no" }, &[]);
            ctx.narrate(crate::tr!("qu.terminated", worker = victim, n = n, gone = gone));
            let _ = terminated.send(());
        }
    }
    let mut stats = Vec::new();
    for (h, name) in handles.into_iter().zip(&names) {
        // Generous: a worker's whole share of the queue can take long with big settings.
        let s = tokio::time::timeout(ctx.env.wait_timeout * 60, h)
            .await
            .map_err(|_| anyhow!(crate::tr!("qu.not_finished", worker = name)))?
            .map_err(|_| anyhow!(crate::tr!("qu.no_result", worker = name)))??;
        stats.push(s);
    }
    total.finish_and_clear();
    let _ = multi.clear();
    report(ctx, &p, skip_locked, &names, stats).await
}

fn one_line(sql: &str) -> String {
    sql.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A worker's statements, prepared before the workers start.
struct Statements {
    dequeue: String,
    mark: String,
}

async fn worker(
    s: Session,
    p: QueueParams,
    sql: &Statements,
    go: &crate::engine::Barrier,
    kill: Option<Arc<Kill>>,
    bar: ProgressBar,
    total: ProgressBar,
) -> Result<Stats> {
    let c = s.client();
    let what = |step: &str| crate::tr!("qu.worker_step", worker = s.name(), step = step);
    let dequeue = c.prepare(&sql.dequeue).await.with_context(|| what("PREPARE dequeue"))?;
    let mark = c
        .prepare(&sql.mark)
        .await
        .with_context(|| what("PREPARE mark_processed"))?;
    let mut st = Stats::default();
    go.wait(s.name()).await?;
    let t0 = Instant::now();
    st.started = Some(t0);
    s.note(crate::tr!("qu.started"));
    let batch = p.batch as i64;
    let name = s.name().to_string();
    // BEGIN and the first dequeue go out together (one round trip), unless a
    // person is stepping through them.
    let t = Instant::now();
    let mut rows = if s.stepping() {
        s.step("BEGIN").await;
        c.batch_execute("BEGIN").await.with_context(|| what("BEGIN"))?;
        s.step(&sql.dequeue).await;
        c.query(&dequeue, &[])
            .await
            .map_err(|e| crate::db::sql_error(e, &what("dequeue")))?
    } else {
        let (begin, first) = tokio::join!(c.batch_execute("BEGIN"), c.query(&dequeue, &[]));
        begin.with_context(|| what("BEGIN"))?;
        first.map_err(|e| crate::db::sql_error(e, &what("dequeue")))?
    };
    st.dequeue += t.elapsed();
    loop {
        if rows.is_empty() {
            s.step("COMMIT").await;
            c.batch_execute("COMMIT").await.with_context(|| what("COMMIT"))?;
            st.why = crate::tr!("qu.why_empty");
            break;
        }
        let ids: Vec<i64> = rows.iter().map(|r| r.get(0)).collect();
        let victim = kill.as_ref().filter(|k| st.batches == k.after).and_then(|k| {
            let tx = k.holding.lock().unwrap().take()?;
            Some((tx, k.terminated.lock().unwrap().take()?))
        });
        if let Some((holding, terminated)) = victim {
            let _ = holding.send((name.clone(), ids.len()));
            let _ = tokio::time::timeout(Duration::from_secs(30), terminated).await;
            let r = c.execute(&mark, &[&ids, &name]).await;
            st.killed = true;
            let next = match r {
                Ok(_) => crate::tr!("qu.update_succeeded"),
                Err(e) => crate::tr!("qu.next_statement", error = e.to_string().lines().next().unwrap_or("")),
            };
            st.why = crate::tr!("qu.why_killed", batches = st.batches, next = next, n = ids.len());
            break;
        }
        let w0 = Instant::now();
        if !p.work.is_zero() {
            // The "send". This thread serves only this worker (see run()).
            work(w0, p.work);
        }
        st.work.push((w0, Instant::now()));
        let t = Instant::now();
        rows = if s.stepping() {
            // A person is watching: each statement runs when they press Enter.
            let ids_shown = format!(
                "ARRAY[{}]",
                ids.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")
            );
            let mark_shown = SQL.bind("mark_processed", &[("ids", &ids_shown), ("worker", &lit(&name))])?;
            s.step(&mark_shown).await;
            c.execute(&mark, &[&ids, &name])
                .await
                .map_err(|e| crate::db::sql_error(e, &what("mark_processed")))?;
            for end_and_begin in ["COMMIT", "BEGIN"] {
                s.step(end_and_begin).await;
                c.batch_execute(end_and_begin)
                    .await
                    .with_context(|| what(end_and_begin))?;
            }
            s.step(&sql.dequeue).await;
            c.query(&dequeue, &[])
                .await
                .map_err(|e| crate::db::sql_error(e, &what("dequeue")))?
        } else {
            // Mark, commit, and start the next transaction with its dequeue:
            // four statements, the same transaction boundaries, one round trip.
            let marking: [&(dyn tokio_postgres::types::ToSql + Sync); 2] = [&ids, &name];
            let (marked, commit, begin, next) = tokio::join!(
                c.execute(&mark, &marking),
                c.batch_execute("COMMIT"),
                c.batch_execute("BEGIN"),
                c.query(&dequeue, &[])
            );
            marked.map_err(|e| crate::db::sql_error(e, &what("mark_processed")))?;
            commit.with_context(|| what("COMMIT"))?;
            begin.with_context(|| what("BEGIN"))?;
            next.map_err(|e| crate::db::sql_error(e, &what("dequeue")))?
        };
        st.dequeue += t.elapsed();
        st.batches += 1;
        st.messages += ids.len() as u64;
        if (ids.len() as i64) < batch {
            st.short += 1;
        }
        bar.inc(ids.len() as u64);
        total.inc(ids.len() as u64);
        st.ids.extend(ids);
    }
    let stopped = Instant::now();
    st.stopped = Some(stopped);
    s.note(crate::tr!(
        "qu.stopped",
        ms = format!("{:.0}", millis(stopped - t0)),
        batches = st.batches,
        why = st.why
    ));
    bar.finish_and_clear();
    Ok(st)
}

/// The simulated work: until `began + work`, to within microseconds. A sleep
/// alone wakes late by the scheduler's latency (~0.1 ms per batch on a busy
/// 2-core VM, with the timer slack already at 1 ns), so it sleeps all but the
/// last 200 us and spins those.
fn work(began: Instant, work: Duration) {
    const SPIN: Duration = Duration::from_micros(200);
    let until = began + work;
    if let Some(sleep) = work.checked_sub(SPIN) {
        std::thread::sleep(sleep);
    }
    while Instant::now() < until {
        std::hint::spin_loop();
    }
}

/// The largest number of batches whose work overlapped in time.
fn max_parallel(stats: &[Stats]) -> usize {
    let mut events: Vec<(Instant, i32)> = stats
        .iter()
        .flat_map(|s| s.work.iter().flat_map(|(a, b)| [(*a, 1), (*b, -1)]))
        .collect();
    // At equal times, an end comes before a start: touching is not overlapping.
    events.sort();
    let (mut now, mut max) = (0i32, 0i32);
    for (_, d) in events {
        now += d;
        max = max.max(now);
    }
    max as usize
}

async fn report(
    ctx: &mut VariantCtx<'_>,
    p: &QueueParams,
    skip_locked: bool,
    names: &[String],
    stats: Vec<Stats>,
) -> Result<()> {
    // The run lasts from the first worker's start to the last one's stop: one
    // clock for all, so a worker that woke late from the barrier cannot
    // shorten it. Each worker's stop is counted on the same clock.
    let start = stats.iter().filter_map(|s| s.started).min();
    let stopped_at = |s: &Stats| s.stopped.zip(start).map(|(e, b)| e - b).unwrap_or_default();
    let elapsed = stats.iter().map(stopped_at).max().unwrap_or_default();
    let mut seen: HashMap<i64, u32> = HashMap::new();
    for s in &stats {
        for id in &s.ids {
            *seen.entry(*id).or_default() += 1;
        }
    }
    let duplicates = seen.values().filter(|&&n| n > 1).count();
    let lost = p.messages as usize - seen.len();
    let left_in_db = ctx.env.int(SQL.get("left_over")?).await?;
    let total: u64 = stats.iter().map(|s| s.messages).sum();
    let ideal = p.ideal();
    let efficiency = if elapsed.is_zero() {
        0.0
    } else {
        ideal.as_secs_f64() / elapsed.as_secs_f64()
    };
    let msgs_per_s = if elapsed.is_zero() {
        0.0
    } else {
        total as f64 / elapsed.as_secs_f64()
    };
    let parallel = max_parallel(&stats);
    let short: u64 = stats.iter().map(|s| s.short).sum();

    ctx.evidence_table(Evidence {
        title: crate::tr!("qu.ev_per_worker"),
        columns: vec![
            crate::tr!("qu.col_worker"),
            crate::tr!("qu.col_messages"),
            crate::tr!("qu.col_batches"),
            crate::tr!("qu.col_short"),
            crate::tr!("qu.col_in_db"),
            crate::tr!("qu.col_stopped_at"),
            crate::tr!("qu.col_why"),
        ],
        rows: stats
            .iter()
            .zip(names)
            .map(|(s, n)| {
                vec![
                    n.clone(),
                    s.messages.to_string(),
                    s.batches.to_string(),
                    s.short.to_string(),
                    format!("{:.0}", millis(s.dequeue)),
                    format!("{:.0}", millis(stopped_at(s))),
                    s.why.clone(),
                ]
            })
            .collect(),
    });
    // Three places: two would print 0.946 as 0.95, and a pipeline comparing
    // the figure with 0.95 would pass a run that fell short.
    let round3 = |x: f64| (x * 1000.0).round() / 1000.0;
    ctx.metric("per_worker", stats.iter().map(|s| s.messages).collect::<Vec<_>>());
    ctx.metric("total", total);
    ctx.metric("duplicates", duplicates);
    ctx.metric("lost", lost);
    ctx.metric("elapsed_ms", millis(elapsed));
    ctx.metric("ideal_ms", millis(ideal));
    ctx.metric("efficiency", round3(efficiency));
    ctx.metric("msgs_per_s", msgs_per_s.round());
    ctx.metric("max_parallel_batches", parallel);
    ctx.metric("short_batches", short);
    let busy = stats.iter().filter(|s| s.batches > 0).count();
    ctx.observe(crate::i18n::t(
        "qu.result",
        &[
            ("total", &total),
            ("workers", &busy),
            ("dups", &duplicates),
            ("lost", &lost),
            ("elapsed", &format!("{:.0}", millis(elapsed))),
            ("ideal", &format!("{:.0}", millis(ideal))),
            ("eff", &format!("{efficiency:.3}")),
            ("par", &parallel),
        ],
    ));

    ctx.expect(duplicates == 0, crate::tr!("qu.no_dups"));
    ctx.expect(lost == 0 && left_in_db == 0, crate::tr!("qu.none_lost"));
    ctx.expect(left_in_db as usize == lost, crate::tr!("qu.db_agrees"));
    if let Some(killed) = stats.iter().position(|s| s.killed).map(|i| names[i].clone()) {
        ctx.metric("killed_worker", killed);
    } else if p.kill_worker_after.is_some() {
        ctx.expect(false, crate::tr!("qu.w1_terminated"));
    }
    let measurable = !p.work.is_zero() && p.workers > 1;
    if skip_locked {
        let idle: Vec<&String> = stats
            .iter()
            .zip(names)
            .filter(|(s, _)| s.batches == 0 && !s.killed)
            .map(|(_, n)| n)
            .collect();
        ctx.expect(
            idle.is_empty() || p.messages.div_ceil(p.batch) < p.workers,
            crate::tr!("qu.every_worker"),
        );
        if measurable {
            ctx.expect(parallel > 1, crate::tr!("qu.parallel"));
        }
        ctx.anomaly(duplicates > 0 || lost > 0);
    } else {
        if measurable {
            ctx.expect(parallel == 1, crate::tr!("qu.one_at_a_time"));
        }
        ctx.note(crate::tr!("qu.for_update_note", short = short, batch = p.batch));
        ctx.anomaly(duplicates > 0 || lost > 0 || (measurable && parallel == 1));
    }
    Ok(())
}
