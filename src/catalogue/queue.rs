//! A job queue in the database: workers dequeue batches with FOR UPDATE or
//! FOR UPDATE SKIP LOCKED (lab/queue.sql). The hot loop uses prepared
//! statements (unnamed ones behind a transaction pooler) on each worker's raw client and is summarised per worker
//! instead of being recorded statement by statement.
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use indicatif::ProgressBar;
use tokio::sync::oneshot;
use tokio_postgres::types::Type;
use tokio_postgres::{Client, Row};

use super::cx::msg as cxmsg;
use super::{Cx, Options, Scenario, ScenarioOptions};
use crate::engine::{Barrier, Session, raw_error};
use crate::i18n::{Context, ui};
use crate::report::{Phrase, millis};
use crate::sql::SqlFile;
use crate::sqltext::{literal, one_line};

pub static SCENARIO: Scenario = Scenario {
    name: "queue",
    about: msg::about,
    summary: msg::summary,
    readme: "The outbox relay: `--messages` (1000), `--workers` (4), `--batch` (10), `--work-ms` (20). Each worker \
             loops BEGIN, dequeue a batch, \"send\" it, mark it processed, COMMIT, and stops at the first empty \
             batch. A per-worker table, duplicates (counted from which worker processed each message), lost \
             messages, elapsed against the ideal `ceil(messages/batch) × work / workers`, efficiency, \
             messages/s, and how many batches ran in parallel. With `FOR UPDATE` batches run one at a time; \
             with `SKIP LOCKED` in parallel (checked when `--work-ms` is at least 10, long enough against a busy \
             machine's scheduling noise). `--kill-worker-after N` terminates a worker's backend in the middle \
             of a batch; its messages go back to the queue and the others finish them. Live progress on stderr \
             when it is a terminal.",
    spec: None,
    variants: VARIANTS,
    options: Some(Options::of::<QueueOpts>(&[
        ("messages", "İşlenecek outbox mesajları"),
        ("workers", "Eşzamanlı paket alan worker oturumları"),
        ("batch", "Bir worker'ın paket başına aldığı mesaj (dequeue'nun LIMIT'i)"),
        ("work_ms", "Paket başına benzetilen iş (\"gönderme\"), ms"),
        (
            "kill_worker_after",
            "N paketten sonra 1. worker'ın backend'ini paketinin ortasında sonlandır",
        ),
    ])),
};

crate::variants! {
    prefix "qu";
    for_update "for-update" {
        expected => {
            en: "no duplicates, nothing lost, but workers queue on the same rows: batches run one at a time (elapsed near ceil(messages/batch) x work)",
            tr: "tekrar yok, kayıp yok, ama worker'lar aynı satırlar için sıraya girer: paketler birer birer işlenir (süre ceil(mesaj/paket) x iş civarında)",
        },
        explain => {
            en: "Every worker asks for the same first rows and all but one wait on row locks. When the holder commits, the waiters re-check the rows (EvalPlanQual), skip the processed ones and lock the next: the work runs one batch at a time.",
            tr: "Her worker aynı ilk satırları ister, biri hariç hepsi satır kilitlerinde bekler. Tutan commit edince bekleyenler satırları yeniden kontrol eder (EvalPlanQual), işlenmişleri atlar ve sonrakileri kilitler: iş birer paket ilerler.",
        },
    }
    skip_locked "skip-locked" {
        expected => {
            en: "no duplicates, nothing lost, work spread over all workers, batches in parallel (efficiency near 1)",
            tr: "tekrar yok, kayıp yok, iş bütün worker'lara dağılır, paketler paralel işlenir (verim 1'e yakın)",
        },
        explain => {
            en: "SKIP LOCKED makes each worker pass over rows another worker holds and take the next free batch: no waiting, no duplicates, the work spread over all workers.",
            tr: "SKIP LOCKED her worker'ın başka worker'ın tuttuğu satırları atlayıp sıradaki boş paketi almasını sağlar: bekleme yok, tekrar yok, iş bütün worker'lara dağılır.",
        },
    }
}

/// `lab queue`'s own options.
#[derive(Debug, Clone, clap::Args)]
pub struct QueueOpts {
    /// Outbox messages to process.
    #[arg(long, default_value_t = 1000, value_name = "N")]
    pub messages: u32,

    /// Worker sessions taking batches concurrently.
    #[arg(long, default_value_t = 4, value_name = "N")]
    pub workers: u32,

    /// Messages a worker takes per batch (the dequeue's LIMIT).
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub batch: u32,

    /// Simulated work per batch ("sending" it), in ms.
    #[arg(long, default_value_t = 20, value_name = "MS")]
    pub work_ms: u64,

    /// Terminate worker 1's backend in the middle of its batch after N batches.
    #[arg(long, value_name = "N")]
    pub kill_worker_after: Option<u32>,
}

impl ScenarioOptions for QueueOpts {
    fn check(&self) -> Result<()> {
        if !(1..=10_000_000).contains(&self.messages) {
            bail!(cxmsg::between("--messages", 1, 10_000_000));
        }
        if !(1..=200).contains(&self.workers) {
            bail!(cxmsg::between("--workers", 1, 200));
        }
        if !(1..=10_000).contains(&self.batch) {
            bail!(cxmsg::between("--batch", 1, 10_000));
        }
        if self.work_ms > 60_000 {
            bail!(cxmsg::at_most("--work-ms", 60_000));
        }
        if self.kill_worker_after.is_some() && self.workers < 2 {
            bail!(msg::kill_needs_two());
        }
        Ok(())
    }
}

impl QueueOpts {
    fn work(&self) -> Duration {
        Duration::from_millis(self.work_ms)
    }

    /// ceil(messages / batch) x work / workers: the time the work alone needs.
    pub fn ideal(&self) -> Duration {
        let batches = self.messages.div_ceil(self.batch);
        self.work() * batches / self.workers
    }
}

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
    why: Option<crate::i18n::Text>,
    /// The isolation level its transactions ran under, read back.
    isolation: String,
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

async fn for_update(cx: &mut Cx<'_>) -> Result<()> {
    run(cx, false).await
}

async fn skip_locked(cx: &mut Cx<'_>) -> Result<()> {
    run(cx, true).await
}

async fn run(cx: &mut Cx<'_>, skip_locked: bool) -> Result<()> {
    let p = cx.options::<QueueOpts>().clone();
    let sql = cx.sql("queue.sql")?;
    cx.env.rows(&sql.bind("fill", &[("messages", &p.messages)])?).await?;
    cx.env.rows(sql.get("analyze")?).await?;
    let names: Vec<String> = (1..=p.workers).map(|i| format!("W{i}")).collect();
    cx.ensure_room(names.len())?;
    let opener = cx.opener();
    let dequeue_name = if skip_locked {
        "dequeue_skip_locked"
    } else {
        "dequeue_for_update"
    };
    // The batch size is written into the statement, as in the seed (LIMIT 10):
    // with no parameter, the server plans it once and reuses that plan from the
    // first batch on, where a `LIMIT $1` would be planned afresh for the first
    // five batches of every worker.
    let dequeue = sql.bind(dequeue_name, &[("batch", &p.batch)])?;
    let mark = sql.bind("mark_processed", &[("ids", &"$1"), ("worker", &"$2")])?;
    cx.note(msg::loop_note(one_line(&dequeue), p.work_ms, one_line(&mark)));

    let progress = cx.opts.progress;
    let multi = progress.multi();
    let total = progress.bar(Some(&multi), p.messages as u64, "total");
    let go = cx.barrier("workers_ready", names.len() + 1);
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
    let file = Arc::new(sql);
    for name in &names {
        let kill = kill.clone();
        let statements = Statements {
            dequeue_name,
            dequeue: dequeue.clone(),
            mark: mark.clone(),
            file: file.clone(),
        };
        let (name, opener, go, bar, total, p) = (
            name.clone(),
            opener.clone(),
            go.clone(),
            progress.counter(&multi, name),
            total.clone(),
            p.clone(),
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
                    worker(w, &p, &statements, &go, kill, bar, total).await
                }),
                Err(e) => Err(e).ctx(msg::no_runtime),
            };
            let _ = tx.send(r);
        });
        thread.ctx(msg::no_thread)?;
        handles.push(rx);
    }
    go.wait("lab").await?;
    if let Some((holding, terminated)) = kill_ctl {
        // Wait for a worker to hold the batch to be killed in, terminate its
        // backend, make sure it is gone. The workers keep the only sender: if
        // the queue runs dry first, it is dropped and nobody is killed.
        drop(kill);
        let held = tokio::time::timeout(cx.env.wait_timeout * 10, holding)
            .await
            .map_err(|_| msg::no_victim())?;
        if let Ok((victim, n)) = held {
            let pid = cx.backend_of(&victim).await?.ctx(|| msg::no_backend(&victim))?;
            cx.env
                .control
                .execute("SELECT pg_terminate_backend($1)", &[&pid])
                .await
                .ctx(|| msg::no_terminate(&victim))?;
            let gone = cx.await_gone(pid).await?;
            cx.narrate(msg::terminated(&victim, n, if gone { ui::yes() } else { ui::no() }));
            let _ = terminated.send(());
        }
    }
    let mut stats = Vec::new();
    for (h, name) in handles.into_iter().zip(&names) {
        // Generous: a worker's whole share of the queue can take long with big settings.
        let s = tokio::time::timeout(cx.env.wait_timeout * 60, h)
            .await
            .map_err(|_| msg::not_finished(name))?
            .map_err(|_| msg::no_result(name))??;
        stats.push(s);
    }
    total.finish_and_clear();
    let _ = multi.clear();
    report(cx, &p, &file, skip_locked, &names, stats).await
}

/// Every worker transaction says its level: the dequeue's behaviour (waiting
/// FOR UPDATE, re-checking after the wait) is READ COMMITTED's.
const BEGIN: &str = "BEGIN ISOLATION LEVEL READ COMMITTED";

/// A worker's statements: prepared once on a connection of its own; behind
/// a transaction pooler (where a prepared statement stays on the server
/// connection that prepared it, which the next transaction may not get)
/// sent whole each time, as unnamed statements.
enum Prepared {
    Once {
        dequeue: tokio_postgres::Statement,
        mark: tokio_postgres::Statement,
    },
    EachTime,
}

impl Prepared {
    async fn new(s: &Session, sql: &Statements) -> Result<Prepared, tokio_postgres::Error> {
        if s.pooled() {
            return Ok(Prepared::EachTime);
        }
        let c = s.client();
        Ok(Prepared::Once {
            dequeue: c.prepare(&sql.dequeue).await?,
            mark: c.prepare(&sql.mark).await?,
        })
    }

    async fn dequeue(&self, c: &Client, sql: &Statements) -> Result<Vec<Row>, tokio_postgres::Error> {
        match self {
            Prepared::Once { dequeue, .. } => c.query(dequeue, &[]).await,
            Prepared::EachTime => c.query_typed(&sql.dequeue, &[]).await,
        }
    }

    async fn mark(
        &self,
        c: &Client,
        sql: &Statements,
        ids: &Vec<i64>,
        worker: &String,
    ) -> Result<(), tokio_postgres::Error> {
        match self {
            Prepared::Once { mark, .. } => c.execute(mark, &[ids, worker]).await.map(drop),
            Prepared::EachTime => c
                .query_typed(&sql.mark, &[(ids, Type::INT8_ARRAY), (worker, Type::TEXT)])
                .await
                .map(drop),
        }
    }
}

/// A worker's statements, prepared before the workers start.
struct Statements {
    dequeue_name: &'static str,
    dequeue: String,
    mark: String,
    file: Arc<SqlFile>,
}

async fn worker(
    s: Session,
    p: &QueueOpts,
    sql: &Statements,
    go: &Barrier,
    kill: Option<Arc<Kill>>,
    bar: ProgressBar,
    total: ProgressBar,
) -> Result<Stats> {
    let c = s.client();
    let what = |step: &str| msg::worker_step(s.name(), step);
    let prepared = Prepared::new(&s, sql)
        .await
        .map_err(|e| raw_error(e, what("PREPARE")))?;
    // Behind a transaction pooler each transaction may land on another
    // server connection: BEGIN carries the session's settings.
    let begin = s.wrapped(BEGIN).0;
    let begin = begin.as_str();
    let mut st = Stats::default();
    go.wait(s.name()).await?;
    let t0 = Instant::now();
    st.started = Some(t0);
    s.note(msg::started());
    let batch = p.batch as i64;
    let name = s.name().to_string();
    // BEGIN and the first dequeue go out together (one round trip), unless a
    // person is stepping through them.
    let t = Instant::now();
    let mut rows = if s.stepping() {
        s.prompt(None, BEGIN, None).await;
        c.batch_execute(begin).await.map_err(|e| raw_error(e, what("BEGIN")))?;
        s.prompt(Some(sql.dequeue_name), &sql.dequeue, None).await;
        prepared
            .dequeue(c, sql)
            .await
            .map_err(|e| raw_error(e, what("dequeue")))?
    } else {
        let (begin, first) = tokio::join!(c.batch_execute(begin), prepared.dequeue(c, sql));
        begin.map_err(|e| raw_error(e, what("BEGIN")))?;
        first.map_err(|e| raw_error(e, what("dequeue")))?
    };
    st.dequeue += t.elapsed();
    // The level the loop's transactions run under, read back once from the first.
    st.isolation = c
        .query_one("SHOW transaction_isolation", &[])
        .await
        .map_err(|e| raw_error(e, what("SHOW transaction_isolation")))?
        .get(0);
    loop {
        if rows.is_empty() {
            s.prompt(None, "COMMIT", None).await;
            c.batch_execute("COMMIT")
                .await
                .map_err(|e| raw_error(e, what("COMMIT")))?;
            st.why = Some(msg::why_empty());
            break;
        }
        let ids: Vec<i64> = rows.iter().map(|r| r.get(0)).collect();
        let victim = kill.as_ref().filter(|k| st.batches == k.after).and_then(|k| {
            let tx = k.holding.lock().unwrap().take()?;
            Some((tx, k.terminated.lock().unwrap().take()?))
        });
        if let Some((holding, terminated)) = victim {
            let _ = holding.send((name.clone(), ids.len()));
            let _ = tokio::time::timeout(s.deadline(), terminated).await;
            let r = prepared.mark(c, sql, &ids, &name).await;
            st.killed = true;
            let next = match r {
                Ok(_) => msg::update_succeeded(),
                Err(e) => msg::next_statement(e.to_string().lines().next().unwrap_or("").to_string()),
            };
            st.why = Some(msg::why_killed(st.batches, next, ids.len()));
            break;
        }
        let w0 = Instant::now();
        if p.work_ms > 0 {
            // The "send". This thread serves only this worker (see run()).
            work(w0, p.work());
        }
        st.work.push((w0, Instant::now()));
        let t = Instant::now();
        rows = if s.stepping() {
            // A person is watching: each statement runs when they press Enter.
            let ids_shown = format!(
                "ARRAY[{}]",
                ids.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")
            );
            let mark_shown = sql
                .file
                .bind("mark_processed", &[("ids", &ids_shown), ("worker", &literal(&name))])?;
            s.prompt(Some("mark_processed"), &mark_shown, None).await;
            prepared
                .mark(c, sql, &ids, &name)
                .await
                .map_err(|e| raw_error(e, what("mark_processed")))?;
            for (shown, sent) in [("COMMIT", "COMMIT"), (BEGIN, begin)] {
                s.prompt(None, shown, None).await;
                c.batch_execute(sent).await.map_err(|e| raw_error(e, what(shown)))?;
            }
            s.prompt(Some(sql.dequeue_name), &sql.dequeue, None).await;
            prepared
                .dequeue(c, sql)
                .await
                .map_err(|e| raw_error(e, what("dequeue")))?
        } else {
            // Mark, commit, and start the next transaction with its dequeue:
            // four statements, the same transaction boundaries, one round trip.
            let (marked, commit, begin, next) = tokio::join!(
                prepared.mark(c, sql, &ids, &name),
                c.batch_execute("COMMIT"),
                c.batch_execute(begin),
                prepared.dequeue(c, sql)
            );
            marked.map_err(|e| raw_error(e, what("mark_processed")))?;
            commit.map_err(|e| raw_error(e, what("COMMIT")))?;
            begin.map_err(|e| raw_error(e, what("BEGIN")))?;
            next.map_err(|e| raw_error(e, what("dequeue")))?
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
    s.note(msg::stopped(
        format!("{:.0}", millis(stopped - t0)),
        st.batches,
        st.why.clone().map_or_else(|| "-".into(), crate::i18n::Arg::from),
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
    cx: &mut Cx<'_>,
    p: &QueueOpts,
    sql: &SqlFile,
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
    let left_in_db = cx.env.int(sql.get("left_over")?).await?;
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

    cx.evidence(
        msg::ev_per_worker(),
        vec![
            msg::col_worker().into(),
            msg::col_messages().into(),
            msg::col_batches().into(),
            msg::col_short().into(),
            msg::col_in_db().into(),
            msg::col_stopped_at().into(),
            msg::col_why().into(),
        ],
        stats
            .iter()
            .zip(names)
            .map(|(s, n)| {
                vec![
                    Phrase::Plain(n.clone()),
                    Phrase::Plain(s.messages.to_string()),
                    Phrase::Plain(s.batches.to_string()),
                    Phrase::Plain(s.short.to_string()),
                    Phrase::Plain(format!("{:.0}", millis(s.dequeue))),
                    Phrase::Plain(format!("{:.0}", millis(stopped_at(s)))),
                    s.why.clone().map_or_else(|| Phrase::Plain("-".into()), Phrase::Text),
                ]
            })
            .collect(),
    );
    // Three places: two would print 0.946 as 0.95, and a pipeline comparing
    // the figure with 0.95 would pass a run that fell short.
    let round3 = |x: f64| (x * 1000.0).round() / 1000.0;
    cx.metric("per_worker", stats.iter().map(|s| s.messages).collect::<Vec<_>>());
    cx.metric("total", total);
    cx.metric("duplicates", duplicates);
    cx.metric("lost", lost);
    cx.metric("elapsed_ms", millis(elapsed));
    cx.metric("ideal_ms", millis(ideal));
    cx.metric("efficiency", round3(efficiency));
    cx.metric("msgs_per_s", msgs_per_s.round());
    cx.metric("max_parallel_batches", parallel);
    let t0 = cx.recorder().started();
    for (name, s) in names.iter().zip(&stats) {
        let ms = |t: &Instant| crate::report::millis(t.saturating_duration_since(t0));
        cx.spans(name, s.work.iter().map(|(a, b)| [ms(a), ms(b)]).collect());
    }
    cx.metric("short_batches", short);
    let busy = stats.iter().filter(|s| s.batches > 0).count();
    cx.observe(msg::result(
        total,
        busy,
        duplicates,
        lost,
        format!("{:.0}", millis(elapsed)),
        format!("{:.0}", millis(ideal)),
        format!("{efficiency:.3}"),
        parallel,
    ));

    let levels: Vec<(String, String)> = names
        .iter()
        .cloned()
        .zip(stats.iter().map(|s| s.isolation.clone()))
        .collect();
    cx.ran_under_levels(&levels, "read committed");
    cx.check(duplicates == 0, msg::no_dups());
    cx.check(lost == 0 && left_in_db == 0, msg::none_lost());
    cx.check(left_in_db as usize == lost, msg::db_agrees());
    if let Some(killed) = stats.iter().position(|s| s.killed).map(|i| names[i].clone()) {
        cx.metric("killed_worker", killed);
    } else if p.kill_worker_after.is_some() {
        cx.check(false, msg::w1_terminated());
    }
    // Whether batches overlap is a matter of timing: it says something about
    // the locks only when each batch's work is long against the scheduling
    // noise of a busy machine, and there are batches enough for every worker.
    let measurable = p.work_ms >= 10 && p.workers > 1 && p.messages.div_ceil(p.batch) >= p.workers;
    if skip_locked {
        if measurable {
            let idle = stats.iter().filter(|s| s.batches == 0 && !s.killed).count();
            cx.check(idle == 0, msg::every_worker());
            cx.check(parallel > 1, msg::parallel());
        }
        cx.anomaly(duplicates > 0 || lost > 0);
    } else {
        if measurable {
            cx.check(parallel == 1, msg::one_at_a_time());
        }
        if parallel == 1 {
            cx.note(msg::for_update_note(short, p.batch));
        }
        cx.anomaly(duplicates > 0 || lost > 0 || (measurable && parallel == 1));
    }
    Ok(())
}

mod msg {
    crate::messages! {
        prefix "qu";
        about() {
            en: "A SKIP LOCKED job queue against FOR UPDATE: throughput, duplicates, lost messages",
            tr: "FOR UPDATE'e karşı SKIP LOCKED iş kuyruğu: verim, tekrarlar, kayıp mesajlar",
        }
        summary() {
            en: "outbox relay: workers take batches of messages with FOR UPDATE or FOR UPDATE SKIP LOCKED",
            tr: "outbox relay: worker'lar mesaj paketlerini FOR UPDATE ya da FOR UPDATE SKIP LOCKED ile alır",
        }
        loop_note(dequeue, ms, mark) {
            en: "each worker loops: BEGIN; {dequeue}; \"send\" ({ms} ms); {mark}; COMMIT",
            tr: "her worker döngüde: BEGIN; {dequeue}; \"gönder\" ({ms} ms); {mark}; COMMIT",
        }
        no_runtime() {
            en: "queue: could not start a worker runtime",
            tr: "queue: bir worker runtime'ı başlatılamadı",
        }
        no_thread() {
            en: "queue: could not start a worker thread",
            tr: "queue: bir worker thread'i başlatılamadı",
        }
        no_victim() {
            en: "queue: no worker reached the batch to be killed in",
            tr: "queue: hiçbir worker öldürüleceği pakete ulaşmadı",
        }
        no_backend(worker) {
            en: "queue: worker {worker} has no backend",
            tr: "queue: {worker} worker'ının backend'i yok",
        }
        no_terminate(worker) {
            en: "queue: could not terminate worker {worker}",
            tr: "queue: {worker} worker'ı sonlandırılamadı",
        }
        terminated(worker, n, gone) {
            en: "pg_terminate_backend({worker}) while it held {n} messages; backend gone: {gone}",
            tr: "{n} mesajı tutarken pg_terminate_backend({worker}); backend gitti mi: {gone}",
        }
        not_finished(worker) {
            en: "queue: worker {worker} did not finish",
            tr: "queue: {worker} worker'ı bitmedi",
        }
        no_result(worker) {
            en: "queue: worker {worker} stopped without a result",
            tr: "queue: {worker} worker'ı sonuç vermeden durdu",
        }
        worker_step(worker, step) {
            en: "queue: worker {worker}: {step}",
            tr: "queue: {worker} worker'ı: {step}",
        }
        started() {
            en: "started",
            tr: "başladı",
        }
        why_empty() {
            en: "got no rows: concluded the queue was empty",
            tr: "hiç satır gelmedi: kuyruğun boş olduğuna karar verdi",
        }
        update_succeeded() {
            en: "yet its UPDATE succeeded",
            tr: "yine de UPDATE'i başarılı oldu",
        }
        next_statement(error) {
            en: "next statement: {error}",
            tr: "sonraki komut: {error}",
        }
        why_killed(batches, next, n) {
            en: "terminated mid-batch after {batches} batches ({next}); its {n} locked messages went back to the queue",
            tr: "{batches} paketten sonra paketin ortasında sonlandırıldı ({next}); kilitlediği {n} mesaj kuyruğa geri döndü",
        }
        stopped(ms, batches, why) {
            en: "stopped at {ms} ms after {batches} batches: {why}",
            tr: "{batches} paketten sonra {ms} ms'de durdu: {why}",
        }
        ev_per_worker() {
            en: "per worker",
            tr: "worker başına",
        }
        col_worker() {
            en: "worker",
            tr: "worker",
        }
        col_messages() {
            en: "messages",
            tr: "mesaj",
        }
        col_batches() {
            en: "batches",
            tr: "paket",
        }
        col_short() {
            en: "short batches",
            tr: "eksik paket",
        }
        col_in_db() {
            en: "in database ms",
            tr: "veritabanında ms",
        }
        col_stopped_at() {
            en: "stopped at ms",
            tr: "durduğu ms",
        }
        col_why() {
            en: "why it stopped",
            tr: "neden durdu",
        }
        result(total, workers, dups, lost, elapsed, ideal, eff, par) {
            en: "{total} processed by {workers} worker(s), {dups} duplicates, {lost} lost; {elapsed} ms against an ideal {ideal} ms (efficiency {eff}); at most {par} batch(es) in parallel",
            tr: "{workers} worker {total} mesaj işledi, {dups} tekrar, {lost} kayıp; ideal {ideal} ms'ye karşı {elapsed} ms (verim {eff}); aynı anda en fazla {par} paket",
        }
        no_dups() {
            en: "no message is processed twice",
            tr: "hiçbir mesaj iki kez işlenmez",
        }
        none_lost() {
            en: "no message is lost",
            tr: "hiçbir mesaj kaybolmaz",
        }
        db_agrees() {
            en: "the database agrees with the workers' records",
            tr: "veritabanı worker'ların kayıtlarıyla uyuşuyor",
        }
        w1_terminated() {
            en: "worker W1 is terminated mid-batch",
            tr: "W1 worker'ı paketin ortasında sonlandırılır",
        }
        every_worker() {
            en: "every worker gets work",
            tr: "her worker iş alır",
        }
        parallel() {
            en: "batches are worked on in parallel",
            tr: "paketler paralel işlenir",
        }
        one_at_a_time() {
            en: "batches run one at a time (workers queue on the same rows)",
            tr: "paketler birer birer işlenir (worker'lar aynı satırlar için sıraya girer)",
        }
        for_update_note(short, batch) {
            en: "FOR UPDATE: every worker asks for the same first rows, so all but one wait on the holder's row locks. When it commits, READ COMMITTED re-checks each locked row (EvalPlanQual), finds processed_at no longer NULL, skips it and locks the next unprocessed rows, which the next waiter then waits for: the work runs one batch at a time. Here {short} batch(es) came back short of {batch} rows. (The seed's printout had a worker come back empty and stop early; this server's waiters went on to the next rows instead.)",
            tr: "FOR UPDATE: her worker aynı ilk satırları ister, bu yüzden biri dışında hepsi tutanın satır kilitlerini bekler. O commit edince READ COMMITTED kilitli her satırı yeniden kontrol eder (EvalPlanQual), processed_at'in artık NULL olmadığını görür, satırı atlar ve işlenmemiş sonraki satırları kilitler; sonraki bekleyen de onları bekler: iş birer paket işlenir. Burada {short} paket {batch} satırdan eksik geldi. (Kaynak makalenin çıktısında bir worker boş dönüp erken duruyordu; bu sunucuda bekleyenler bunun yerine sonraki satırlara geçti.)",
        }
        kill_needs_two() {
            en: "--kill-worker-after needs at least 2 workers, so another one can finish the batch",
            tr: "--kill-worker-after en az 2 worker ister, paketi bir başkası bitirebilsin diye",
        }
    }
}
