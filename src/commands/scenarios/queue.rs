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

use super::context::msg as cxmsg;
use super::{Cx, Options, Scenario, ScenarioOptions};
use crate::engine::{Barrier, Session, raw_error};
use crate::i18n::{Context, ui};
use crate::named_sql::SqlFile;
use crate::report::{Phrase, millis};
use crate::sql_lexer::{literal, one_line};

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
            bail!(crate::options::msg::between("--messages", 1, 10_000_000));
        }
        if !(1..=200).contains(&self.workers) {
            bail!(crate::options::msg::between("--workers", 1, 200));
        }
        if !(1..=10_000).contains(&self.batch) {
            bail!(crate::options::msg::between("--batch", 1, 10_000));
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

/// Which worker committed each message, shared by the workers: a message
/// dequeued again after its batch committed is a deviation the moment it is
/// seen (and every worker stops), not a queue that never empties.
#[derive(Default)]
struct Taken {
    by: Mutex<HashMap<i64, String>>,
    stop: std::sync::atomic::AtomicBool,
}

impl Taken {
    /// A batch just dequeued: any message in it another batch already committed?
    fn check(&self, ids: &[i64], worker: &str) -> Result<()> {
        let by = self.by.lock().unwrap();
        if let Some((id, first)) = ids.iter().find_map(|id| Some((id, by.get(id)?))) {
            self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
            return Err(crate::engine::Deviation(msg::taken_again(*id, first.clone(), worker)).into());
        }
        Ok(())
    }

    fn committed(&self, ids: &[i64], worker: &str) {
        let mut by = self.by.lock().unwrap();
        for id in ids {
            by.insert(*id, worker.to_string());
        }
    }

    fn stopped(&self) -> bool {
        self.stop.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// The first worker to take a batch after `after` committed ones tells the
/// driver who it is and what it holds, then waits until the driver has
/// terminated its backend.
struct Kill {
    after: u64,
    holding: Mutex<Option<oneshot::Sender<(String, usize)>>>,
    terminated: Mutex<Option<oneshot::Receiver<()>>>,
}

/// The driver's ends of a [`Kill`]: who holds the batch, and word that its
/// backend is gone.
struct KillCtl {
    holding: oneshot::Receiver<(String, usize)>,
    terminated: oneshot::Sender<()>,
}

/// The victim's ends of a [`Kill`].
type Victim = (oneshot::Sender<(String, usize)>, oneshot::Receiver<()>);

impl Kill {
    /// A kill after `after` batches, shared by the workers, and the driver's ends of it.
    fn armed(after: u32) -> (Arc<Kill>, KillCtl) {
        let (holding_tx, holding_rx) = oneshot::channel();
        let (term_tx, term_rx) = oneshot::channel();
        let kill = Arc::new(Kill {
            after: after as u64,
            holding: Mutex::new(Some(holding_tx)),
            terminated: Mutex::new(Some(term_rx)),
        });
        let ctl = KillCtl {
            holding: holding_rx,
            terminated: term_tx,
        };
        (kill, ctl)
    }

    /// The victim's ends, for the first worker to take a batch after `after`
    /// committed ones and for no one else.
    fn victim(&self, batches: u64) -> Option<Victim> {
        if batches != self.after {
            return None;
        }
        let tx = self.holding.lock().unwrap().take()?;
        Some((tx, self.terminated.lock().unwrap().take()?))
    }
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
    let statements = Statements::new(sql, &p, skip_locked)?;
    cx.note(msg::loop_note(
        one_line(&statements.dequeue),
        p.work_ms,
        one_line(&statements.mark),
    ));

    let progress = cx.opts.progress;
    let multi = progress.multi();
    let total = progress.bar(Some(&multi), p.messages as u64, "total");
    let go = cx.barrier("workers_ready", names.len() + 1);
    let (kill, kill_ctl) = p.kill_worker_after.map(Kill::armed).unzip();
    let taken = Arc::new(Taken::default());
    let mut handles = Vec::new();
    for name in &names {
        let taken = taken.clone();
        let (name, opener, go, bar, total, p, statements, kill) = (
            name.clone(),
            opener.clone(),
            go.clone(),
            progress.counter(&multi, name),
            total.clone(),
            p.clone(),
            statements.clone(),
            kill.clone(),
        );
        handles.push(on_own_thread(format!("lab-{name}"), move || async move {
            let w = opener.open(&name).await?;
            worker(w, &p, &statements, &go, kill, &taken, (bar, total)).await
        })?);
    }
    go.wait("lab").await?;
    if let Some(ctl) = kill_ctl {
        // The workers keep the only sender: if the queue runs dry first, it
        // is dropped and nobody is killed.
        drop(kill);
        terminate_victim(cx, ctl).await?;
    }
    let stats = results(cx, handles, &names).await?;
    total.finish_and_clear();
    let _ = multi.clear();
    report(cx, &p, &statements.file, skip_locked, &names, stats).await
}

/// A worker's stats, once its thread is done.
type Outcome = oneshot::Receiver<Result<Stats>>;

/// Runs a worker on a thread of its own, with its connection on the same
/// thread: round trips wake nothing else, and the simulated work can be a
/// plain thread sleep (accurate to tens of microseconds; tokio's timer
/// rounds up to whole milliseconds).
fn on_own_thread<F, Fut>(name: String, job: F) -> Result<Outcome>
where
    F: FnOnce() -> Fut + Send + 'static,
    Fut: Future<Output = Result<Stats>>,
{
    let (tx, rx) = oneshot::channel();
    let thread = std::thread::Builder::new().name(name).spawn(move || {
        // The kernel may let a sleep overrun by the thread's timer slack
        // (50 µs by default) to batch wake-ups; the simulated work should
        // last what it says.
        // SAFETY: prctl with PR_SET_TIMERSLACK only sets this thread's slack.
        unsafe {
            libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong);
        }
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build();
        let r = match rt {
            Ok(rt) => rt.block_on(job()),
            Err(e) => Err(e).ctx(msg::no_runtime),
        };
        let _ = tx.send(r);
    });
    thread.ctx(msg::no_thread)?;
    Ok(rx)
}

/// Waits for a worker to hold the batch to be killed in, terminates its
/// backend, makes sure it is gone.
async fn terminate_victim(cx: &mut Cx<'_>, ctl: KillCtl) -> Result<()> {
    let held = tokio::time::timeout(cx.env.wait_timeout * 10, ctl.holding)
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
        let _ = ctl.terminated.send(());
    }
    Ok(())
}

/// The workers' stats, in the order of `names`.
async fn results(cx: &Cx<'_>, handles: Vec<Outcome>, names: &[String]) -> Result<Vec<Stats>> {
    let mut stats = Vec::new();
    for (h, name) in handles.into_iter().zip(names) {
        // Generous: a worker's whole share of the queue can take long with big settings.
        let s = tokio::time::timeout(cx.env.wait_timeout * 60, h)
            .await
            .map_err(|_| msg::not_finished(name))?
            .map_err(|_| msg::no_result(name))??;
        stats.push(s);
    }
    Ok(stats)
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
#[derive(Clone)]
struct Statements {
    dequeue_name: &'static str,
    dequeue: String,
    mark: String,
    file: Arc<SqlFile>,
}

impl Statements {
    /// The variant's dequeue and the mark, bound once for every worker.
    fn new(file: SqlFile, p: &QueueOpts, skip_locked: bool) -> Result<Statements> {
        let dequeue_name = if skip_locked {
            "dequeue_skip_locked"
        } else {
            "dequeue_for_update"
        };
        // The batch size is written into the statement, as in the seed (LIMIT 10):
        // with no parameter, the server plans it once and reuses that plan from the
        // first batch on, where a `LIMIT $1` would be planned afresh for the first
        // five batches of every worker.
        let dequeue = file.bind(dequeue_name, &[("batch", &p.batch)])?;
        let mark = file.bind("mark_processed", &[("ids", &"$1"), ("worker", &"$2")])?;
        Ok(Statements {
            dequeue_name,
            dequeue,
            mark,
            file: Arc::new(file),
        })
    }
}

/// A worker's connection: its session, its statements and how they go out.
struct Link<'a> {
    s: &'a Session,
    c: &'a Client,
    prepared: Prepared,
    sql: &'a Statements,
    /// BEGIN as sent: behind a transaction pooler each transaction may land
    /// on another server connection, so BEGIN carries the session's settings.
    begin: String,
}

impl<'a> Link<'a> {
    async fn new(s: &'a Session, sql: &'a Statements) -> Result<Link<'a>> {
        let prepared = Prepared::new(s, sql)
            .await
            .map_err(|e| raw_error(e, msg::worker_step(s.name(), "PREPARE")))?;
        Ok(Link {
            s,
            c: s.client(),
            prepared,
            sql,
            begin: s.wrapped(BEGIN).0,
        })
    }

    /// Where a failed statement was, for its error.
    fn what(&self, step: &str) -> crate::i18n::Text {
        msg::worker_step(self.s.name(), step)
    }

    /// BEGIN and the first dequeue go out together (one round trip), unless a
    /// person is stepping through them.
    async fn begin_and_dequeue(&self) -> Result<Vec<Row>> {
        if self.s.stepping() {
            self.s.prompt(None, BEGIN, None).await;
            self.c
                .batch_execute(&self.begin)
                .await
                .map_err(|e| raw_error(e, self.what("BEGIN")))?;
            return self.prompted_dequeue().await;
        }
        let (begin, first) = tokio::join!(
            self.c.batch_execute(&self.begin),
            self.prepared.dequeue(self.c, self.sql)
        );
        begin.map_err(|e| raw_error(e, self.what("BEGIN")))?;
        first.map_err(|e| raw_error(e, self.what("dequeue")))
    }

    /// The dequeue, once the person stepping through has pressed Enter.
    async fn prompted_dequeue(&self) -> Result<Vec<Row>> {
        self.s
            .prompt(Some(self.sql.dequeue_name), &self.sql.dequeue, None)
            .await;
        self.prepared
            .dequeue(self.c, self.sql)
            .await
            .map_err(|e| raw_error(e, self.what("dequeue")))
    }

    /// The isolation level of the open transaction.
    async fn isolation(&self) -> Result<String> {
        Ok(self
            .c
            .query_one("SHOW transaction_isolation", &[])
            .await
            .map_err(|e| raw_error(e, self.what("SHOW transaction_isolation")))?
            .get(0))
    }

    async fn commit(&self) -> Result<()> {
        self.s.prompt(None, "COMMIT", None).await;
        self.c
            .batch_execute("COMMIT")
            .await
            .map_err(|e| raw_error(e, self.what("COMMIT")))?;
        Ok(())
    }

    /// Mark the batch processed, commit, and start the next transaction with
    /// its dequeue: four statements, the same transaction boundaries, one
    /// round trip. The next batch's rows.
    async fn mark_and_dequeue(&self, ids: &Vec<i64>, name: &String) -> Result<Vec<Row>> {
        if self.s.stepping() {
            return self.mark_and_dequeue_stepping(ids, name).await;
        }
        let (marked, commit, begin, next) = tokio::join!(
            self.prepared.mark(self.c, self.sql, ids, name),
            self.c.batch_execute("COMMIT"),
            self.c.batch_execute(&self.begin),
            self.prepared.dequeue(self.c, self.sql)
        );
        marked.map_err(|e| raw_error(e, self.what("mark_processed")))?;
        commit.map_err(|e| raw_error(e, self.what("COMMIT")))?;
        begin.map_err(|e| raw_error(e, self.what("BEGIN")))?;
        next.map_err(|e| raw_error(e, self.what("dequeue")))
    }

    /// The same four statements when a person is watching: each runs when
    /// they press Enter.
    async fn mark_and_dequeue_stepping(&self, ids: &Vec<i64>, name: &String) -> Result<Vec<Row>> {
        let ids_shown = format!(
            "ARRAY[{}]",
            ids.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")
        );
        let mark_shown = self
            .sql
            .file
            .bind("mark_processed", &[("ids", &ids_shown), ("worker", &literal(name))])?;
        self.s.prompt(Some("mark_processed"), &mark_shown, None).await;
        self.prepared
            .mark(self.c, self.sql, ids, name)
            .await
            .map_err(|e| raw_error(e, self.what("mark_processed")))?;
        for (shown, sent) in [("COMMIT", "COMMIT"), (BEGIN, self.begin.as_str())] {
            self.s.prompt(None, shown, None).await;
            self.c
                .batch_execute(sent)
                .await
                .map_err(|e| raw_error(e, self.what(shown)))?;
        }
        self.prompted_dequeue().await
    }

    /// The victim's end: tells the driver what it holds, waits for its
    /// backend to be terminated, tries to mark the batch anyway. Why it stopped.
    async fn die_holding(
        &self,
        (holding, terminated): Victim,
        ids: &Vec<i64>,
        name: &String,
        batches: u64,
    ) -> crate::i18n::Text {
        let _ = holding.send((name.clone(), ids.len()));
        let _ = tokio::time::timeout(self.s.deadline(), terminated).await;
        let next = match self.prepared.mark(self.c, self.sql, ids, name).await {
            Ok(_) => msg::update_succeeded(),
            Err(e) => msg::next_statement(e.to_string().lines().next().unwrap_or("").to_string()),
        };
        msg::why_killed(batches, next, ids.len())
    }
}

impl Stats {
    /// A batch done: its messages counted, a short one noted.
    fn count(&mut self, ids: Vec<i64>, batch: u32) {
        self.batches += 1;
        self.messages += ids.len() as u64;
        if (ids.len() as i64) < batch as i64 {
            self.short += 1;
        }
        self.ids.extend(ids);
    }
}

async fn worker(
    s: Session,
    p: &QueueOpts,
    sql: &Statements,
    go: &Barrier,
    kill: Option<Arc<Kill>>,
    taken: &Taken,
    (bar, total): (ProgressBar, ProgressBar),
) -> Result<Stats> {
    let link = Link::new(&s, sql).await?;
    let mut st = Stats::default();
    go.wait(s.name()).await?;
    let t0 = Instant::now();
    st.started = Some(t0);
    s.note(msg::started());
    let name = s.name().to_string();
    let t = Instant::now();
    let mut rows = link.begin_and_dequeue().await?;
    st.dequeue += t.elapsed();
    // The level the loop's transactions run under, read back once from the first.
    st.isolation = link.isolation().await?;
    loop {
        if rows.is_empty() || taken.stopped() {
            link.commit().await?;
            st.why = Some(if rows.is_empty() {
                msg::why_empty()
            } else {
                msg::why_stopped()
            });
            break;
        }
        let ids: Vec<i64> = rows.iter().map(|r| r.get(0)).collect();
        taken.check(&ids, &name)?;
        if let Some(victim) = kill.as_ref().and_then(|k| k.victim(st.batches)) {
            st.why = Some(link.die_holding(victim, &ids, &name, st.batches).await);
            st.killed = true;
            break;
        }
        let w0 = Instant::now();
        if p.work_ms > 0 {
            // The "send". This thread serves only this worker (see on_own_thread()).
            work(w0, p.work());
        }
        st.work.push((w0, Instant::now()));
        let t = Instant::now();
        rows = link.mark_and_dequeue(&ids, &name).await?;
        taken.committed(&ids, &name);
        st.dequeue += t.elapsed();
        bar.inc(ids.len() as u64);
        total.inc(ids.len() as u64);
        st.count(ids, p.batch);
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

/// What the workers did, taken together.
struct Totals {
    /// The first worker's start: one clock for all, so a worker that woke
    /// late from the barrier cannot shorten the run.
    start: Option<Instant>,
    /// From the first worker's start to the last one's stop.
    elapsed: Duration,
    total: u64,
    duplicates: usize,
    lost: usize,
    left_in_db: i64,
    ideal: Duration,
    efficiency: f64,
    msgs_per_s: f64,
    parallel: usize,
    short: u64,
}

impl Totals {
    fn of(p: &QueueOpts, stats: &[Stats], left_in_db: i64) -> Totals {
        let start = stats.iter().filter_map(|s| s.started).min();
        let stopped_at = |s: &Stats| s.stopped.zip(start).map(|(e, b)| e - b).unwrap_or_default();
        let elapsed = stats.iter().map(stopped_at).max().unwrap_or_default();
        let mut seen: HashMap<i64, u32> = HashMap::new();
        for s in stats {
            for id in &s.ids {
                *seen.entry(*id).or_default() += 1;
            }
        }
        let total: u64 = stats.iter().map(|s| s.messages).sum();
        let ideal = p.ideal();
        let over_elapsed = |x: f64| {
            if elapsed.is_zero() {
                0.0
            } else {
                x / elapsed.as_secs_f64()
            }
        };
        Totals {
            start,
            elapsed,
            total,
            duplicates: seen.values().filter(|&&n| n > 1).count(),
            lost: p.messages as usize - seen.len(),
            left_in_db,
            ideal,
            efficiency: over_elapsed(ideal.as_secs_f64()),
            msgs_per_s: over_elapsed(total as f64),
            parallel: max_parallel(stats),
            short: stats.iter().map(|s| s.short).sum(),
        }
    }

    /// When a worker stopped, on the run's clock.
    fn stopped_at(&self, s: &Stats) -> Duration {
        s.stopped.zip(self.start).map(|(e, b)| e - b).unwrap_or_default()
    }
}

async fn report(
    cx: &mut Cx<'_>,
    p: &QueueOpts,
    sql: &SqlFile,
    skip_locked: bool,
    names: &[String],
    stats: Vec<Stats>,
) -> Result<()> {
    let left_in_db = cx.env.int(sql.get("left_over")?).await?;
    let t = Totals::of(p, &stats, left_in_db);
    per_worker(cx, &t, names, &stats);
    metrics(cx, &t, names, &stats);
    let busy = stats.iter().filter(|s| s.batches > 0).count();
    cx.observe(msg::result(
        t.total,
        busy,
        t.duplicates,
        t.lost,
        format!("{:.0}", millis(t.elapsed)),
        format!("{:.0}", millis(t.ideal)),
        format!("{:.3}", t.efficiency),
        t.parallel,
    ));
    checks(cx, p, skip_locked, &t, names, &stats);
    Ok(())
}

/// The per-worker table.
fn per_worker(cx: &mut Cx<'_>, t: &Totals, names: &[String], stats: &[Stats]) {
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
                    Phrase::Plain(format!("{:.0}", millis(t.stopped_at(s)))),
                    s.why.clone().map_or_else(|| Phrase::Plain("-".into()), Phrase::Text),
                ]
            })
            .collect(),
    );
}

/// The figures, and each worker's batches as spans for the Gantt chart.
fn metrics(cx: &mut Cx<'_>, t: &Totals, names: &[String], stats: &[Stats]) {
    // Three places: two would print 0.946 as 0.95, and a pipeline comparing
    // the figure with 0.95 would pass a run that fell short.
    let round3 = |x: f64| (x * 1000.0).round() / 1000.0;
    cx.metric("per_worker", stats.iter().map(|s| s.messages).collect::<Vec<_>>());
    cx.metric("total", t.total);
    cx.metric("duplicates", t.duplicates);
    cx.metric("lost", t.lost);
    cx.metric("elapsed_ms", millis(t.elapsed));
    cx.metric("ideal_ms", millis(t.ideal));
    cx.metric("efficiency", round3(t.efficiency));
    cx.metric("msgs_per_s", t.msgs_per_s.round());
    cx.metric("max_parallel_batches", t.parallel);
    let t0 = cx.recorder().started();
    for (name, s) in names.iter().zip(stats) {
        let ms = |t: &Instant| crate::report::millis(t.saturating_duration_since(t0));
        cx.spans(name, s.work.iter().map(|(a, b)| [ms(a), ms(b)]).collect());
    }
    cx.metric("short_batches", t.short);
}

/// The checks and the verdict.
fn checks(cx: &mut Cx<'_>, p: &QueueOpts, skip_locked: bool, t: &Totals, names: &[String], stats: &[Stats]) {
    let levels: Vec<(String, String)> = names
        .iter()
        .cloned()
        .zip(stats.iter().map(|s| s.isolation.clone()))
        .collect();
    cx.ran_under_levels(&levels, "read committed");
    cx.check(t.duplicates == 0, msg::no_dups());
    cx.check(t.lost == 0 && t.left_in_db == 0, msg::none_lost());
    cx.check(t.left_in_db as usize == t.lost, msg::db_agrees());
    if let Some(killed) = stats.iter().position(|s| s.killed).map(|i| names[i].clone()) {
        cx.metric("killed_worker", killed);
    } else if p.kill_worker_after.is_some() {
        cx.check(false, msg::w1_terminated());
    }
    // Whether batches overlap is a matter of timing: it says something about
    // the locks only when each batch's work is long against the scheduling
    // noise of a busy machine, and there are batches enough for every worker.
    let measurable = p.work_ms >= 10 && p.workers > 1 && p.messages.div_ceil(p.batch) >= p.workers;
    let (duplicates, lost, parallel) = (t.duplicates, t.lost, t.parallel);
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
            cx.note(msg::for_update_note(t.short, p.batch));
        }
        cx.anomaly(duplicates > 0 || lost > 0 || (measurable && parallel == 1));
    }
}

mod msg {
    crate::messages! {
        prefix "qu";
        taken_again(id, first, worker) {
            en: "message {id}, whose batch {first} committed, was dequeued again by {worker}: the queue hands out processed messages",
            tr: "partisini {first} commit etmiş olan {id} numaralı mesaj {worker} tarafından yeniden alındı: kuyruk işlenmiş mesajları veriyor",
        }
        why_stopped() {
            en: "another worker found a message taken twice",
            tr: "başka bir worker iki kez alınan bir mesaj buldu",
        }
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
