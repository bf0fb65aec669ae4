//! Gapless legal invoice numbers with parallel workers (seed 001): five ways
//! to number, an orphan recovery with a circuit breaker, and priority. The
//! verdict is an audit of what the (simulated) integrator accepted against the
//! local records, not what the code believes it did.
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Result, bail};

use super::{Cx, Options, Scenario, ScenarioOptions};
use crate::engine::{Barrier, Deviation, Session, join_all};
use crate::i18n::{Context, Text};
use crate::named_sql::SqlFile;
use crate::report::{Phrase, millis};
use crate::sql_lexer::literal;

pub static SCENARIO: Scenario = Scenario {
    name: "invoice-numbering",
    about: msg::about,
    summary: msg::summary,
    readme: "Seed 001: `--invoices` (20) invoices queued by the scheduler and by users (some cancelled while queued, one with an \
             invalid tax number) are taken by `--workers` with SKIP LOCKED and sent to an in-process integrator \
             with `--latency-ms` (0.5–1.5× it) and `--transient-rate` failures, which rejects a number it already \
             has as a duplicate and answers \"is number X here?\". Each variant ends with an audit of the \
             integrator's accepted numbers against the local records: duplicates, gaps (listed), numbers unknown \
             locally, invoices sent twice. MAX()+1 gives duplicates; numbering at enqueue and `nextval()` give \
             gaps; holding the counter lock across the call gives neither but one invoice per latency; JIT \
             reservation gives neither and sends in parallel; orphan recovery repairs or resends crashed sends \
             with their numbers behind a circuit breaker; priority shows an interactive invoice overtaking a \
             scheduler batch.",
    spec: None,
    variants: VARIANTS,
    options: Some(Options::of::<InvoiceOpts>(&[
        ("invoices", "Numaralanıp gönderilecek faturalar"),
        ("workers", "Eşzamanlı fatura gönderen worker'lar"),
        (
            "latency_ms",
            "Entegratörün ortalama gecikmesi, ms (kaynağın 200 ms-2 sn'si, küçültülmüş); her çağrı bunun 0.5-1.5 katı sürer",
        ),
        (
            "transient_rate",
            "Geçici olarak başarısız olan çağrıların oranı (her çalıştırmada aynı çağrılar)",
        ),
    ])),
};

crate::variants! {
    prefix "in";
    max_plus_one "max-plus-one" {
        expected => {
            en: "MAX(invoice_no) + 1 at send time: two workers take the same number; the integrator rejects the second as duplicate (anomaly)",
            tr: "gönderimde MAX(invoice_no) + 1: iki worker aynı numarayı alır; entegratör ikinciyi mükerrer diye reddeder (anomali)",
        },
        explain => {
            en: "MAX()+1 reads what others have not written yet: two workers see the same maximum and take the same number; the integrator rejects the second as a duplicate.",
            tr: "MAX()+1 başkalarının henüz yazmadığını okur: iki worker aynı en büyük değeri görür ve aynı numarayı alır; entegratör ikinciyi mükerrer diye reddeder.",
        },
    }
    enqueue_time "enqueue-time" {
        expected => {
            en: "numbers fixed when queued: invoices rejected for good or cancelled in the queue leave holes (anomaly)",
            tr: "numara kuyruğa girerken verilir: kalıcı olarak reddedilen ya da kuyruktayken iptal edilen faturalar boşluk bırakır (anomali)",
        },
        explain => {
            en: "A number fixed when the invoice is queued is lost when the invoice is later rejected for good or cancelled: holes in the series.",
            tr: "Fatura kuyruğa girerken verilen numara, fatura sonra kalıcı olarak reddedilir ya da iptal edilirse kaybolur: seride boşluk.",
        },
    }
    sequence "sequence" {
        expected => {
            en: "nextval() at send time: a failed send rolls back but the value is gone: gaps (anomaly)",
            tr: "gönderimde nextval(): başarısız gönderim geri alınır ama değer gitmiştir: boşluk (anomali)",
        },
        explain => {
            en: "nextval() is never rolled back, by design: every failed send burns a number. Sequences are for keys, not for gapless legal numbers.",
            tr: "nextval() tasarım gereği asla geri alınmaz: her başarısız gönderim bir numara yakar. Sequence anahtarlar içindir, boşluksuz yasal numaralar için değil.",
        },
    }
    lock_over_call "lock-over-call" {
        expected => {
            en: "the counter row locked FOR UPDATE across the external call: no duplicates, no gaps, but one invoice per integrator latency whatever the number of workers",
            tr: "sayaç satırı dış çağrı boyunca FOR UPDATE ile kilitli: mükerrer yok, boşluk yok, ama worker sayısı ne olursa olsun her gecikmede bir fatura",
        },
        explain => {
            en: "Holding the counter row lock across the external call keeps the series gapless but puts every worker behind one integrator call: about one invoice per latency.",
            tr: "Sayaç satırının kilidini dış çağrı boyunca tutmak seriyi boşluksuz tutar ama bütün worker'ları tek bir entegratör çağrısının arkasına dizer: gecikme başına yaklaşık bir fatura.",
        },
    }
    jit_reservation "jit-reservation" {
        expected => {
            en: "a short transaction reserves the number just before the call; failures keep it and retries reuse it: no duplicates, no gaps, sends in parallel",
            tr: "kısa bir transaction numarayı çağrıdan hemen önce ayırır; hata numarayı korur, tekrarlar aynı numarayı kullanır: mükerrer yok, boşluk yok, gönderimler paralel",
        },
        explain => {
            en: "A short transaction reserves the number just before the call and commits; the call runs with no lock held; a failed invoice keeps its number and its retries reuse it.",
            tr: "Kısa bir transaction numarayı çağrıdan hemen önce ayırır ve commit eder; çağrı hiçbir kilit tutmadan yapılır; başarısız fatura numarasını korur ve tekrarları aynı numarayı kullanır.",
        },
    }
    orphan_recovery "orphan-recovery" {
        expected => {
            en: "jit-reservation with crashes after the integrator accepted (and before it was called): the sweep asks the integrator, repairs or resends with the same number behind a circuit breaker; no duplicates, no gaps",
            tr: "entegratör kabul ettikten sonra (ve çağrılmadan önce) çöken jit-reservation: tarama entegratöre sorar, aynı numarayla onarır ya da yeniden gönderir, arada bir circuit breaker; mükerrer yok, boşluk yok",
        },
        explain => {
            en: "When a worker dies between the integrator's yes and the local record, the invoice stays in SENDING with its number. The sweep asks the integrator for that number: repair if it is there, resend with the same number if not; a circuit breaker stops hammering an integrator that keeps failing.",
            tr: "Bir worker entegratörün evet'i ile yerel kayıt arasında ölünce fatura numarasıyla SENDING'de kalır. Tarama entegratöre o numarayı sorar: oradaysa onarır, değilse aynı numarayla yeniden gönderir; circuit breaker durmadan hata veren entegratöre yüklenmeyi keser.",
        },
    }
    priority "priority" {
        expected => {
            en: "one interactive invoice queued behind a scheduler batch: with priority ordering the first round of takes takes it, without it the whole batch is taken first",
            tr: "zamanlayıcı paketinin arkasında kuyruğa giren tek bir etkileşimli fatura: öncelik sıralamasıyla ilk alma turu onu alır, onsuz önce bütün paket alınır",
        },
        explain => {
            en: "With priority in the dequeue order an interactive invoice overtakes a scheduler batch; the numbering does not change, only the order.",
            tr: "Kuyruktan alma sırasında öncelik olunca etkileşimli fatura zamanlayıcı paketini geçer; numaralandırma değişmez, yalnızca sıra değişir.",
        },
    }
}

/// `lab invoice-numbering`'s own options.
#[derive(Debug, Clone, clap::Args)]
pub struct InvoiceOpts {
    /// Invoices to number and send.
    #[arg(long, default_value_t = 20, value_name = "N")]
    pub invoices: u32,

    /// Workers sending invoices concurrently.
    #[arg(long, default_value_t = 4, value_name = "N")]
    pub workers: u32,

    /// The integrator's mean latency in ms (the seed's 200 ms-2 s, scaled down); each call takes 0.5-1.5 times it.
    #[arg(long, default_value_t = 50, value_name = "MS")]
    pub latency_ms: u64,

    /// Share of calls that fail transiently (the same calls on every run).
    #[arg(long, default_value_t = 0.15, value_name = "RATE")]
    pub transient_rate: f64,
}

impl ScenarioOptions for InvoiceOpts {
    fn check(&self) -> Result<()> {
        if !(1..=50).contains(&self.workers) {
            bail!(crate::options::msg::between("--workers", 1, 50));
        }
        if self.invoices < self.workers || self.invoices > 10_000 {
            bail!(msg::invoices_range());
        }
        if !(1..=5000).contains(&self.latency_ms) {
            bail!(crate::options::msg::between("--latency-ms", 1, 5000));
        }
        if !(0.0..=0.5).contains(&self.transient_rate) {
            bail!(crate::options::msg::between("--transient-rate", 0, 0.5));
        }
        Ok(())
    }
}

impl InvoiceOpts {
    fn latency(&self) -> Duration {
        Duration::from_millis(self.latency_ms)
    }
}

/// What the integrator said.
#[derive(Debug, Clone, PartialEq)]
enum Reply {
    Accepted,
    Duplicate,
    /// Rejected for good (the invoice's tax number is invalid).
    Rejected,
    Transient,
}

impl Reply {
    /// What the integrator said.
    fn say(&self) -> Text {
        match self {
            Reply::Accepted => msg::reply_accepted(),
            Reply::Duplicate => msg::reply_duplicate(),
            Reply::Rejected => msg::reply_rejected(msg::invalid_tax()),
            Reply::Transient => msg::reply_transient(),
        }
    }
}

/// The external integrator, in process: slow, sometimes failing, and the
/// keeper of what it accepted (the audit's remote side).
struct Integrator {
    latency: Duration,
    transient_rate: f64,
    state: Mutex<Remote>,
    /// Calls so far, watched by the first call when it waits for a second.
    arrivals: tokio::sync::watch::Sender<u64>,
    /// The first call waits up to this long for a second call to arrive:
    /// where the strategy lets sends overlap, they do on every run, however
    /// busy the machine; where it does not, the second cannot come.
    overlap: Option<Duration>,
}

impl Integrator {
    fn new(latency: Duration, transient_rate: f64, overlap: Option<Duration>) -> Integrator {
        Integrator {
            latency,
            transient_rate,
            state: Mutex::default(),
            arrivals: tokio::sync::watch::Sender::new(0),
            overlap,
        }
    }
}

#[derive(Default)]
struct Remote {
    accepted: BTreeMap<i64, i64>,
    duplicates: Vec<(i64, i64)>,
    calls: u64,
    in_flight: usize,
    max_in_flight: usize,
    /// The next calls fail (an outage), for the circuit breaker.
    fail_next: u32,
}

/// A stable pseudo-random number in [0, 1) for (a, b): failures and latencies
/// are the same on every run, whatever the interleaving.
fn unit(a: i64, b: i64) -> f64 {
    let mut x = (a as u64).wrapping_mul(0x9e3779b97f4a7c15) ^ (b as u64).wrapping_mul(0xbf58476d1ce4e5b9);
    x ^= x >> 31;
    x = x.wrapping_mul(0x94d049bb133111eb);
    x ^= x >> 29;
    (x >> 11) as f64 / (1u64 << 53) as f64
}

impl Integrator {
    async fn send(&self, no: i64, invoice: i64, tax: &str, attempt: i64) -> Reply {
        let first = {
            let mut s = self.state.lock().unwrap();
            s.calls += 1;
            s.in_flight += 1;
            s.max_in_flight = s.max_in_flight.max(s.in_flight);
            s.calls == 1
        };
        self.arrivals.send_modify(|n| *n += 1);
        if let (true, Some(within)) = (first, self.overlap) {
            let mut arrivals = self.arrivals.subscribe();
            let _ = tokio::time::timeout(within, arrivals.wait_for(|n| *n >= 2)).await;
        }
        // The seed's 200 ms–2 s, scaled down: mean `latency`, from half to one and a half times it.
        let jitter = 0.5 + unit(invoice, attempt + 1000);
        tokio::time::sleep(self.latency.mul_f64(jitter)).await;
        let mut s = self.state.lock().unwrap();
        s.in_flight -= 1;
        if s.fail_next > 0 {
            s.fail_next -= 1;
            return Reply::Transient;
        }
        if unit(invoice, attempt) < self.transient_rate {
            return Reply::Transient;
        }
        if tax == "INVALID" {
            return Reply::Rejected;
        }
        if let Some(&holder) = s.accepted.get(&no) {
            if holder != invoice {
                s.duplicates.push((no, invoice));
                return Reply::Duplicate;
            }
            // Idempotent: the same invoice with the same number again.
            return Reply::Accepted;
        }
        s.accepted.insert(no, invoice);
        Reply::Accepted
    }

    /// "Is number X of series A here?"
    fn lookup(&self, no: i64) -> Option<i64> {
        self.state.lock().unwrap().accepted.get(&no).copied()
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Strategy {
    MaxPlusOne,
    EnqueueTime,
    Sequence,
    LockOverCall,
    Jit,
}

/// Per-worker findings.
#[derive(Default)]
struct Tally {
    sent: u64,
    /// Invoices that could not be sent (their number refused every time).
    unsent: Vec<i64>,
    /// (counter locked, released) per numbering, for the counter's lock hold times.
    holds: Vec<Duration>,
    crashed: Vec<i64>,
}

struct Shared {
    integrator: Integrator,
    strategy: Strategy,
    /// The first invoice of each worker waits here after taking its number,
    /// so the MAX()+1 race happens on every run, not by luck.
    first_round: Option<Arc<Barrier>>,
    /// Invoice ids whose worker "crashes" after the integrator accepted them.
    crash_after_accept: BTreeSet<i64>,
    /// ... and before calling it.
    crash_before_send: BTreeSet<i64>,
    sent_at: Mutex<BTreeMap<i64, Instant>>,
    /// Every take that got an invoice: (invoice, take sent, take answered).
    takes: Mutex<Vec<(i64, Instant, Instant)>>,
    sql: Arc<SqlFile>,
    /// How many invoices were queued: the most duplicates one invoice can meet.
    invoices: u32,
}

async fn max_plus_one(cx: &mut Cx<'_>) -> Result<()> {
    numbering(cx, Strategy::MaxPlusOne, false).await
}

async fn enqueue_time(cx: &mut Cx<'_>) -> Result<()> {
    numbering(cx, Strategy::EnqueueTime, false).await
}

async fn sequence(cx: &mut Cx<'_>) -> Result<()> {
    numbering(cx, Strategy::Sequence, false).await
}

async fn lock_over_call(cx: &mut Cx<'_>) -> Result<()> {
    numbering(cx, Strategy::LockOverCall, false).await
}

async fn jit_reservation(cx: &mut Cx<'_>) -> Result<()> {
    numbering(cx, Strategy::Jit, false).await
}

async fn orphan_recovery(cx: &mut Cx<'_>) -> Result<()> {
    numbering(cx, Strategy::Jit, true).await
}

async fn numbering(cx: &mut Cx<'_>, strategy: Strategy, orphans: bool) -> Result<()> {
    let p = cx.options::<InvoiceOpts>().clone();
    let sql = Arc::new(cx.sql("invoice-numbering.sql")?);
    // Producers: the scheduler's batch, then users' clicks.
    let users = (p.invoices / 5).max(1);
    let batch = p.invoices - users;
    enqueue(cx, &sql, batch, 0, "scheduler").await?;
    enqueue(cx, &sql, users, 0, "user").await?;
    cx.env.rows(sql.get("invalid_tax_numbers")?).await?;
    if strategy == Strategy::EnqueueTime {
        cx.env.rows(sql.get("number_at_enqueue")?).await?;
        cx.env.rows(sql.get("counter_after_enqueue")?).await?;
    }
    // Users cancel some invoices while they are still queued.
    let cancelled: Vec<i64> = (1..=p.invoices as i64).filter(|i| i % 10 == 3).collect();
    for id in &cancelled {
        cx.env.rows(&sql.bind("cancel", &[("invoice_id", id)])?).await?;
    }
    cx.narrate(msg::queued(batch, users, format!("{cancelled:?}")));
    let shared = Arc::new(Shared {
        // Jit's sends run in parallel: the first waits (within the deadline) for a second.
        integrator: Integrator::new(
            p.latency(),
            p.transient_rate,
            (strategy == Strategy::Jit && p.workers > 1).then_some(cx.env.wait_timeout),
        ),
        strategy,
        first_round: (strategy == Strategy::MaxPlusOne).then(|| cx.barrier("first_numbers_taken", p.workers as usize)),
        crash_after_accept: if orphans {
            (1..=p.invoices as i64).filter(|i| i % 10 == 5).collect()
        } else {
            BTreeSet::new()
        },
        crash_before_send: if orphans {
            (1..=p.invoices as i64).filter(|i| i % 10 == 9).collect()
        } else {
            BTreeSet::new()
        },
        sent_at: Mutex::default(),
        takes: Mutex::default(),
        sql: sql.clone(),
        invoices: p.invoices,
    });

    let (workers, tallies, elapsed) = send_all(cx, "W", &shared, &p).await?;

    let mut recovery = None;
    if orphans {
        recovery = Some(recover(cx, &shared, &workers[0], &p).await?);
    }
    audit(cx, &p, &shared, &tallies, elapsed, &cancelled, recovery).await
}

/// Opens the workers (`{prefix}1`, `{prefix}2`, ...) and runs them until the
/// queue is empty; their tallies and how long it took.
async fn send_all(
    cx: &mut Cx<'_>,
    prefix: &str,
    shared: &Arc<Shared>,
    p: &InvoiceOpts,
) -> Result<(Vec<Session>, Vec<Tally>, Duration)> {
    let names: Vec<String> = (1..=p.workers).map(|i| format!("{prefix}{i}")).collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let workers = cx.open(&refs).await?;
    let began = Instant::now();
    let handles = workers
        .iter()
        .map(|w| {
            let (w, shared) = (w.clone(), shared.clone());
            tokio::spawn(async move { worker(&w, &shared).await })
        })
        .collect();
    let tallies = join_all(cx.env.wait_timeout * 6, msg::a_worker(), handles).await?;
    Ok((workers, tallies, began.elapsed()))
}

/// A producer queues `count` invoices.
async fn enqueue(cx: &Cx<'_>, sql: &SqlFile, count: u32, priority: i32, source: &str) -> Result<()> {
    let source = literal(source);
    cx.env
        .rows(&sql.bind(
            "enqueue",
            &[("count", &count), ("priority", &priority), ("source", &source)],
        )?)
        .await?;
    Ok(())
}

/// Every transaction says its level: the numbering's correctness rests on READ COMMITTED's row locks.
const BEGIN: &str = "BEGIN ISOLATION LEVEL READ COMMITTED";

fn row_int(rows: &crate::report::ResultSet, col: &str) -> Option<i64> {
    rows.get(0, col).and_then(|v| v.parse().ok())
}

/// Takes invoices until the queue is empty; each is numbered and sent the
/// strategy's way, retried in place on transient failures.
async fn worker(w: &Session, sh: &Shared) -> Result<Tally> {
    let mut tally = Tally::default();
    let mut first = true;
    loop {
        w.exec("", BEGIN).await?;
        let sent = Instant::now();
        let taken = w.rows("take", sh.sql.get("take")?).await?;
        let Some(id) = row_int(&taken, "invoice_id") else {
            w.exec("", "COMMIT").await?;
            return Ok(tally);
        };
        sh.takes.lock().unwrap().push((id, sent, Instant::now()));
        let reserved = row_int(&taken, "reserved_no");
        let tax = taken.get(0, "tax_number").unwrap_or("").to_string();
        let barrier = if first { sh.first_round.clone() } else { None };
        first = false;
        process(w, sh, id, reserved, &tax, barrier, &mut tally).await?;
    }
}

/// Sets an invoice's status.
async fn mark(w: &Session, sh: &Shared, status: &str, id: i64) -> Result<()> {
    w.exec(
        "mark",
        &sh.sql
            .bind("mark", &[("status", &literal(status)), ("invoice_id", &id)])?,
    )
    .await?;
    Ok(())
}

impl Strategy {
    /// Whether the numbering's transaction stays open across the external call.
    fn keeps_tx(self) -> bool {
        matches!(self, Strategy::Sequence | Strategy::LockOverCall)
    }
}

/// One invoice, from taken (its row locked, a transaction open) to done.
async fn process(
    w: &Session,
    sh: &Shared,
    id: i64,
    reserved: Option<i64>,
    tax: &str,
    barrier: Option<Arc<Barrier>>,
    tally: &mut Tally,
) -> Result<()> {
    let keeps_tx = sh.strategy.keeps_tx();
    let mut reserved = reserved;
    let mut budget = Retries::new(sh.invoices);
    for attempt in 1i64.. {
        if budget.spent() {
            break;
        }
        if keeps_tx {
            // A failed call undoes the numbering but keeps the invoice locked (and so ours).
            w.exec("", "SAVEPOINT numbering").await?;
        }
        // 1. Number the invoice.
        let (no, hold_from) = take_number(w, sh, id, reserved).await?;
        // 2. Commit before the call, unless the strategy keeps its transaction across it.
        if !keeps_tx {
            commit_number(w, sh, id, no, hold_from, tally).await?;
            reserved = Some(no);
        }
        if let Some(b) = &barrier
            && attempt == 1
        {
            b.wait(w.name()).await?;
        }
        if sh.crash_before_send.contains(&id) && attempt == 1 {
            w.note(msg::crash_before(id, no));
            tally.crashed.push(id);
            return Ok(());
        }
        // 3. The external call.
        let reply = sh.integrator.send(no, id, tax, attempt).await;
        w.note(msg::integrator_says(id, no, attempt, reply.say()));
        if reply == Reply::Accepted && sh.crash_after_accept.contains(&id) {
            w.note(msg::crash_after(id));
            tally.crashed.push(id);
            return Ok(());
        }
        // 4. Record the outcome.
        match reply {
            Reply::Accepted => return record_acceptance(w, sh, id, no, hold_from, tally).await,
            Reply::Rejected => return record_rejection(w, sh, id, no, hold_from, tally).await,
            // A number that stays with its invoice (reserved, or given at
            // enqueue) is unique or the numbering is broken: the integrator
            // will refuse it every time. The invoice is left unsent.
            Reply::Duplicate if matches!(sh.strategy, Strategy::Jit | Strategy::EnqueueTime) => {
                w.note(msg::number_taken(id, no));
                tally.unsent.push(id);
                return Ok(());
            }
            Reply::Duplicate | Reply::Transient => {
                budget.count(&reply);
                if keeps_tx {
                    undo_numbering(w, hold_from, tally).await?;
                } else {
                    // Only enqueue-time and JIT numbers stay with the invoice for its retries.
                    if sh.strategy != Strategy::Jit && sh.strategy != Strategy::EnqueueTime {
                        reserved = None;
                    }
                    retake(w, sh, id).await?;
                }
            }
        }
    }
    w.note(msg::not_sent(id, budget.transients, budget.duplicates));
    tally.unsent.push(id);
    Ok(())
}

/// How often one invoice may be sent again before it is left unsent. Two
/// budgets: the integrator's transient failures, at most [`Retries::TRANSIENTS`];
/// and duplicates, each meaning another invoice was accepted with that number
/// first, so bounded by the other invoices however often a loaded machine
/// lets the others' calls win the MAX()+1 race.
struct Retries {
    transients: u32,
    duplicates: u32,
    others: u32,
}

impl Retries {
    const TRANSIENTS: u32 = 20;

    /// For one of `invoices` queued invoices.
    fn new(invoices: u32) -> Retries {
        Retries {
            transients: 0,
            duplicates: 0,
            others: invoices.saturating_sub(1),
        }
    }

    fn count(&mut self, reply: &Reply) {
        match reply {
            Reply::Duplicate => self.duplicates += 1,
            Reply::Transient => self.transients += 1,
            Reply::Accepted | Reply::Rejected => {}
        }
    }

    /// No further attempt.
    fn spent(&self) -> bool {
        self.transients >= Self::TRANSIENTS || self.duplicates > self.others
    }
}

/// The invoice's number for this attempt the strategy's way, and when the
/// counter lock was taken if this attempt took it (for its hold time).
async fn take_number(w: &Session, sh: &Shared, id: i64, reserved: Option<i64>) -> Result<(i64, Option<Instant>)> {
    let sql = &sh.sql;
    Ok(match sh.strategy {
        Strategy::MaxPlusOne => (w.int("max_plus_one", sql.get("max_plus_one")?, "no").await?, None),
        Strategy::EnqueueTime => (reserved.ctx(|| msg::not_numbered(id))?, None),
        Strategy::Sequence => (
            w.int("next_from_sequence", sql.get("next_from_sequence")?, "no")
                .await?,
            None,
        ),
        Strategy::LockOverCall => {
            let no = w.int("lock_counter", sql.get("lock_counter")?, "no").await?;
            (no, Some(Instant::now()))
        }
        Strategy::Jit => match reserved {
            Some(no) => (no, None),
            None => {
                let no = w.int("reserve", sql.get("reserve")?, "no").await?;
                (no, Some(Instant::now()))
            }
        },
    })
}

/// Records the number on the invoice (SENDING) and commits: the call runs
/// with no lock held.
async fn commit_number(
    w: &Session,
    sh: &Shared,
    id: i64,
    no: i64,
    hold_from: Option<Instant>,
    tally: &mut Tally,
) -> Result<()> {
    w.exec(
        "mark_sending",
        &sh.sql.bind("mark_sending", &[("no", &no), ("invoice_id", &id)])?,
    )
    .await?;
    w.exec("", "COMMIT").await?;
    if let Some(t) = hold_from {
        tally.holds.push(t.elapsed());
    }
    Ok(())
}

/// The integrator accepted: the number recorded and the invoice SENT, in the
/// transaction kept across the call or in a new one.
async fn record_acceptance(
    w: &Session,
    sh: &Shared,
    id: i64,
    no: i64,
    hold_from: Option<Instant>,
    tally: &mut Tally,
) -> Result<()> {
    let keeps_tx = sh.strategy.keeps_tx();
    if !keeps_tx {
        w.exec("", BEGIN).await?;
    }
    if sh.strategy == Strategy::LockOverCall {
        w.exec("advance_counter", sh.sql.get("advance_counter")?).await?;
    }
    w.exec(
        "record_sent",
        &sh.sql.bind("record_sent", &[("no", &no), ("invoice_id", &id)])?,
    )
    .await?;
    mark(w, sh, "SENT", id).await?;
    w.exec("", "COMMIT").await?;
    if let (true, Some(t)) = (keeps_tx, hold_from) {
        tally.holds.push(t.elapsed());
    }
    tally.sent += 1;
    sh.sent_at.lock().unwrap().insert(id, Instant::now());
    Ok(())
}

/// The integrator rejected the invoice for good.
async fn record_rejection(
    w: &Session,
    sh: &Shared,
    id: i64,
    no: i64,
    hold_from: Option<Instant>,
    tally: &mut Tally,
) -> Result<()> {
    if sh.strategy.keeps_tx() {
        undo_numbering(w, hold_from, tally).await?;
        mark(w, sh, "REJECTED", id).await?;
        w.exec("", "COMMIT").await?;
        return Ok(());
    }
    if sh.strategy == Strategy::Jit {
        // The number stays with the invoice: a user corrects it and it goes out again with it.
        mark(w, sh, "ERROR", id).await?;
        w.note(msg::corrected(id, msg::invalid_tax(), no));
        w.exec(
            "correct_and_requeue",
            &sh.sql.bind("correct_and_requeue", &[("invoice_id", &id)])?,
        )
        .await?;
    } else {
        mark(w, sh, "REJECTED", id).await?;
    }
    Ok(())
}

/// Back to before the numbering, the invoice still locked: the counter lock
/// goes; a sequence value stays consumed.
async fn undo_numbering(w: &Session, hold_from: Option<Instant>, tally: &mut Tally) -> Result<()> {
    w.exec("", "ROLLBACK TO SAVEPOINT numbering").await?;
    if let Some(t) = hold_from {
        tally.holds.push(t.elapsed());
    }
    Ok(())
}

/// A failed call with the numbering committed: the invoice marked ERROR, then
/// taken again (a new transaction, its row locked) for the retry.
async fn retake(w: &Session, sh: &Shared, id: i64) -> Result<()> {
    mark(w, sh, "ERROR", id).await?;
    w.exec("", BEGIN).await?;
    let lock_again = format!("SELECT invoice_id FROM invoices WHERE invoice_id = {id} FOR UPDATE");
    w.exec("", &lock_again).await?;
    Ok(())
}

struct Recovery {
    repaired: usize,
    resent: usize,
    breaker_opened: u32,
    calls_skipped: u32,
}

/// The orphan sweep: invoices stuck in SENDING longer than the threshold are
/// looked up at the integrator by their number: repaired locally if it has
/// them, sent again with the same number if not, through a circuit breaker.
async fn recover(cx: &mut Cx<'_>, sh: &Shared, w: &Session, p: &InvoiceOpts) -> Result<Recovery> {
    let threshold = p.latency() * 2;
    // The integrator is down for the first calls of the sweep: the breaker must not hammer it.
    sh.integrator.state.lock().unwrap().fail_next = 4;
    cx.narrate(msg::sweep(threshold.as_millis() as u64));
    let mut rec = Recovery {
        repaired: 0,
        resent: 0,
        breaker_opened: 0,
        calls_skipped: 0,
    };
    let mut failures_in_row = 0u32;
    let mut open_until: Option<Instant> = None;
    let deadline = Instant::now() + cx.env.wait_timeout * 3;
    loop {
        let stuck = w
            .rows(
                "stuck_sending",
                &sh.sql.bind(
                    "stuck_sending",
                    &[("threshold_s", &format!("{:.3}", threshold.as_secs_f64()))],
                )?,
            )
            .await?;
        let pending = cx
            .env
            .int("SELECT count(*) FROM invoices WHERE status = 'SENDING'")
            .await?;
        if pending == 0 {
            return Ok(rec);
        }
        if Instant::now() > deadline {
            return Err(Deviation(msg::sweep_unfinished(pending)).into());
        }
        if stuck.rows.is_empty() {
            // The server's own clock says which are older than the threshold:
            // a sweep that finds none of them cannot finish.
            let old = cx
                .env
                .int(&format!(
                    "SELECT count(*) FROM invoices WHERE status = 'SENDING' \
                      AND updated_at < now() - make_interval(secs => {:.3})",
                    threshold.as_secs_f64()
                ))
                .await?;
            if old > 0 {
                return Err(Deviation(msg::sweep_blind(old, threshold.as_millis() as u64)).into());
            }
        }
        for i in 0..stuck.rows.len() {
            let id: i64 = stuck.get(i, "invoice_id").and_then(|v| v.parse().ok()).unwrap_or(0);
            let no: i64 = stuck.get(i, "reserved_no").and_then(|v| v.parse().ok()).unwrap_or(0);
            match sh.integrator.lookup(no) {
                Some(holder) if holder == id => {
                    w.note(msg::sweep_repair(no, id));
                    record_accepted(w, sh, no, id).await?;
                    rec.repaired += 1;
                }
                Some(holder) => bail!(msg::belongs(no, holder, id)),
                None => {
                    if let Some(until) = open_until {
                        if Instant::now() < until {
                            rec.calls_skipped += 1;
                            continue;
                        }
                        w.note(msg::half_open());
                    }
                    let reply = sh
                        .integrator
                        .send(no, id, "0000000000", 100 + failures_in_row as i64)
                        .await;
                    if reply == Reply::Accepted {
                        w.note(msg::resent(id, no));
                        record_accepted(w, sh, no, id).await?;
                        rec.resent += 1;
                        failures_in_row = 0;
                        open_until = None;
                    } else {
                        failures_in_row += 1;
                        w.note(msg::resend_failed(id, no, reply.say()));
                        if failures_in_row >= 3 || open_until.is_some() {
                            rec.breaker_opened += 1;
                            open_until = Some(Instant::now() + threshold);
                            w.note(msg::breaker_open(threshold.as_millis() as u64));
                        }
                    }
                }
            }
        }
        // The sweep is a periodic job: this is its period, not a way of waiting for someone.
        tokio::time::sleep(threshold / 2).await;
    }
}

/// The local record of an invoice the integrator accepted, in one transaction.
async fn record_accepted(w: &Session, sh: &Shared, no: i64, id: i64) -> Result<()> {
    w.exec("", BEGIN).await?;
    w.exec(
        "record_sent",
        &sh.sql.bind("record_sent", &[("no", &no), ("invoice_id", &id)])?,
    )
    .await?;
    mark(w, sh, "SENT", id).await?;
    w.exec("", "COMMIT").await?;
    Ok(())
}

fn percentile(mut v: Vec<Duration>, q: f64) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort();
    let i = ((v.len() - 1) as f64 * q).round() as usize;
    Some(millis(v[i]))
}

fn fmt_list(v: &[i64]) -> Phrase {
    if v.is_empty() {
        Phrase::Text(msg::none())
    } else {
        Phrase::Plain(v.iter().map(|n| n.to_string()).collect::<Vec<_>>().join(", "))
    }
}

/// `n` per second of `elapsed`.
fn rate(n: f64, elapsed: Duration) -> f64 {
    if elapsed.is_zero() {
        0.0
    } else {
        n / elapsed.as_secs_f64()
    }
}

/// What the audit found: the integrator's accepted numbers against the
/// local records.
struct Findings {
    /// (number, invoice) the integrator turned away as duplicates.
    duplicates: Vec<(i64, i64)>,
    max_parallel: usize,
    calls: u64,
    /// The highest number issued here or accepted there: gaps count up to it.
    high: i64,
    gaps: Vec<i64>,
    unknown_locally: Vec<i64>,
    sent_twice: Vec<i64>,
    issued: usize,
    /// Every worker's counter lock hold times.
    holds: Vec<Duration>,
}

impl Findings {
    /// No duplicates, no gaps.
    fn clean(&self) -> bool {
        self.duplicates.is_empty() && self.gaps.is_empty()
    }
}

/// The integrator's side and the local one, read once the workers are done.
async fn findings(cx: &mut Cx<'_>, sh: &Shared, tallies: &[Tally]) -> Result<Findings> {
    let (accepted, duplicates, max_parallel, calls) = {
        let s = sh.integrator.state.lock().unwrap();
        (s.accepted.clone(), s.duplicates.clone(), s.max_in_flight, s.calls)
    };
    let local_rows = cx.env.rows(sh.sql.get("outgoing")?).await?;
    let local: BTreeMap<i64, i64> = (0..local_rows.rows.len())
        .filter_map(|i| {
            Some((
                local_rows.get(i, "invoice_no")?.parse().ok()?,
                local_rows.get(i, "invoice_id")?.parse().ok()?,
            ))
        })
        .collect();
    let high = cx
        .env
        .int(sh.sql.get("numbers_issued")?)
        .await?
        .max(accepted.keys().max().copied().unwrap_or(0));
    let mut per_invoice: BTreeMap<i64, usize> = BTreeMap::new();
    for inv in accepted.values() {
        *per_invoice.entry(*inv).or_default() += 1;
    }
    Ok(Findings {
        duplicates,
        max_parallel,
        calls,
        high,
        gaps: (1..=high).filter(|n| !accepted.contains_key(n)).collect(),
        unknown_locally: accepted.keys().filter(|n| !local.contains_key(n)).copied().collect(),
        sent_twice: per_invoice.iter().filter(|(_, n)| **n > 1).map(|(i, _)| *i).collect(),
        issued: accepted.len(),
        holds: tallies.iter().flat_map(|t| t.holds.clone()).collect(),
    })
}

async fn audit(
    cx: &mut Cx<'_>,
    p: &InvoiceOpts,
    sh: &Shared,
    tallies: &[Tally],
    elapsed: Duration,
    cancelled: &[i64],
    recovery: Option<Recovery>,
) -> Result<()> {
    let f = findings(cx, sh, tallies).await?;
    let statuses = cx.env.rows(sh.sql.get("statuses")?).await?;
    cx.evidence_rows(msg::ev_statuses(), &statuses);
    cx.evidence(
        msg::ev_audit(),
        vec![msg::col_check().into(), msg::col_found().into()],
        vec![
            vec![msg::accepted_numbers().into(), Phrase::Plain(f.issued.to_string())],
            vec![
                msg::dup_numbers().into(),
                fmt_list(&f.duplicates.iter().map(|(n, _)| *n).collect::<Vec<_>>()),
            ],
            vec![msg::gaps_in(f.high).into(), fmt_list(&f.gaps)],
            vec![msg::unknown_locally().into(), fmt_list(&f.unknown_locally)],
            vec![msg::sent_twice().into(), fmt_list(&f.sent_twice)],
        ],
    );
    figures(cx, p, &f, elapsed, recovery.as_ref());
    cx.ran_under_all("read committed");
    cx.check(f.unknown_locally.is_empty(), msg::all_known());
    cx.check(f.sent_twice.is_empty(), msg::not_twice());
    let unsent: Vec<i64> = tallies.iter().flat_map(|t| t.unsent.iter().copied()).collect();
    cx.metric("unsent", &unsent);
    cx.check(unsent.is_empty(), msg::all_sent(fmt_ids(&unsent)));
    strategy_checks(cx, p, sh, tallies, cancelled, recovery.as_ref(), &f);
    cx.anomaly(!f.clean());
    Ok(())
}

/// Invoice ids, or "-" for none.
fn fmt_ids(ids: &[i64]) -> String {
    if ids.is_empty() {
        return "-".into();
    }
    ids.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")
}

/// The audit's metrics and the observed line.
fn figures(cx: &mut Cx<'_>, p: &InvoiceOpts, f: &Findings, elapsed: Duration, recovery: Option<&Recovery>) {
    let per_s = rate(f.issued as f64, elapsed);
    cx.metric("invoices", p.invoices);
    cx.metric("issued", f.issued);
    cx.metric("duplicates", f.duplicates.len());
    cx.metric("gaps", f.gaps.len());
    cx.metric("gap_numbers", &f.gaps);
    cx.metric("orphans_recovered", recovery.map_or(0, |r| r.repaired + r.resent));
    cx.metric("invoices_per_s", (per_s * 10.0).round() / 10.0);
    // Calls per second, retries and resends included: the integrator pipeline's throughput.
    let sends_per_s = rate(f.calls as f64, elapsed);
    cx.metric("sends_per_s", (sends_per_s * 10.0).round() / 10.0);
    cx.metric("counter_lock_hold_ms_p50", percentile(f.holds.clone(), 0.5));
    cx.metric("counter_lock_hold_ms_p99", percentile(f.holds.clone(), 0.99));
    cx.metric("max_parallel_sends", f.max_parallel);
    cx.metric("latency_ms", p.latency_ms);
    cx.metric("workers", p.workers);
    let gap_list: crate::i18n::Arg = match fmt_list(&f.gaps) {
        Phrase::Text(t) => t.into(),
        Phrase::Plain(s) => s.into(),
    };
    cx.observe(msg::audit(
        f.issued,
        f.duplicates.len(),
        gap_list,
        f.unknown_locally.len(),
        format!("{per_s:.1}"),
        p.workers,
        f.max_parallel,
    ));
}

/// What each strategy must show: its anomaly, or none and the price it pays.
fn strategy_checks(
    cx: &mut Cx<'_>,
    p: &InvoiceOpts,
    sh: &Shared,
    tallies: &[Tally],
    cancelled: &[i64],
    recovery: Option<&Recovery>,
    f: &Findings,
) {
    let (duplicates, gaps, max_parallel) = (&f.duplicates, &f.gaps, f.max_parallel);
    match (sh.strategy, recovery) {
        (Strategy::MaxPlusOne, _) => {
            cx.check(!duplicates.is_empty(), msg::same_number());
        }
        (Strategy::EnqueueTime, _) => {
            cx.check(duplicates.is_empty(), msg::no_dups());
            cx.check(!gaps.is_empty(), msg::leave_holes());
            let holes: BTreeSet<i64> = gaps.iter().copied().collect();
            cx.check(cancelled.iter().all(|c| holes.contains(c)), msg::cancelled_holes());
        }
        (Strategy::Sequence, _) => {
            cx.check(duplicates.is_empty(), msg::no_dups());
            cx.check(!gaps.is_empty(), msg::burn());
        }
        (Strategy::LockOverCall, _) => {
            cx.check(f.clean(), msg::clean());
            cx.check(max_parallel == 1, msg::one_at_a_time());
            let p50 = percentile(f.holds.clone(), 0.5).unwrap_or(0.0);
            cx.check(p50 >= millis(p.latency() / 2), msg::held_for_call());
        }
        (Strategy::Jit, recovery) => {
            cx.check(f.clean(), msg::clean());
            cx.check(p.workers < 2 || max_parallel > 1, msg::parallel());
            if let Some(r) = recovery {
                let crashed: usize = tallies.iter().map(|t| t.crashed.len()).sum();
                cx.metric("orphans_repaired", r.repaired);
                cx.metric("orphans_resent", r.resent);
                cx.metric("breaker_opened", r.breaker_opened);
                cx.metric("breaker_calls_skipped", r.calls_skipped);
                cx.check(r.repaired == sh.crash_after_accept.len(), msg::repaired());
                cx.check(r.resent == sh.crash_before_send.len(), msg::resent_all());
                cx.check(r.repaired + r.resent == crashed, msg::recovered());
                cx.check(r.breaker_opened > 0, msg::breaker());
            }
        }
    }
}

/// How many invoices were taken ahead of `id`: the takes answered before its
/// own take was sent. The server ran those first, whatever the machine's
/// speed; a take running at the same moment as its own is not ahead of it,
/// and neither is a send that merely finished sooner.
fn taken_ahead(takes: &[(i64, Instant, Instant)], id: i64) -> Option<usize> {
    let began = takes.iter().find(|t| t.0 == id)?.1;
    Some(takes.iter().filter(|t| t.2 < began).count())
}

/// A scheduler batch, then one interactive invoice; FIFO against priority ordering.
async fn priority(cx: &mut Cx<'_>) -> Result<()> {
    let p = cx.options::<InvoiceOpts>().clone();
    let sql = Arc::new(cx.sql("invoice-numbering.sql")?);
    let batch = (p.invoices * 2).max(10);
    let mut waits = Vec::new();
    for (part, ordered) in [(msg::fifo(), false), (msg::interactive_first(), true)] {
        cx.env
            .rows("DELETE FROM outgoing_invoices; DELETE FROM invoices; UPDATE invoice_sequences SET next_no = 1")
            .await?;
        enqueue(cx, &sql, batch, 0, "scheduler").await?;
        enqueue(cx, &sql, 1, if ordered { 1 } else { 0 }, "user").await?;
        let interactive = cx.env.int("SELECT max(invoice_id) FROM invoices").await?;
        cx.narrate(msg::priority_part(part.clone(), batch, interactive));
        let shared = Arc::new(Shared {
            integrator: Integrator::new(p.latency(), 0.0, None),
            strategy: Strategy::Jit,
            first_round: None,
            crash_after_accept: BTreeSet::new(),
            crash_before_send: BTreeSet::new(),
            sent_at: Mutex::default(),
            takes: Mutex::default(),
            sql: sql.clone(),
            invoices: batch + 1,
        });
        let queued = Instant::now();
        send_all(cx, if ordered { "PW" } else { "FW" }, &shared, &p).await?;
        let sent = shared.sent_at.lock().unwrap().clone();
        let at = sent.get(&interactive).copied().ctx(msg::interactive_not_sent)?;
        let before = sent.values().filter(|t| **t < at).count();
        let ahead = taken_ahead(&shared.takes.lock().unwrap(), interactive).ctx(msg::interactive_not_sent)?;
        waits.push((part, millis(at.duration_since(queued)), before, ahead));
    }
    cx.evidence(
        msg::ev_wait(),
        vec![
            msg::col_order().into(),
            msg::col_ahead().into(),
            msg::col_before().into(),
            msg::col_waited().into(),
        ],
        waits
            .iter()
            .map(|(p, ms, n, ahead)| {
                vec![
                    Phrase::Text(p.clone()),
                    Phrase::Plain(ahead.to_string()),
                    Phrase::Plain(n.to_string()),
                    Phrase::Plain(format!("{ms:.0}")),
                ]
            })
            .collect(),
    );
    let (fifo, prio) = (&waits[0], &waits[1]);
    cx.metric("interactive_wait_ms_fifo", fifo.1);
    cx.metric("interactive_wait_ms_priority", prio.1);
    cx.metric("sent_before_fifo", fifo.2);
    cx.metric("sent_before_priority", prio.2);
    cx.metric("taken_ahead_fifo", fifo.3);
    cx.metric("taken_ahead_priority", prio.3);
    cx.observe(msg::priority(
        fifo.3,
        format!("{:.0}", fifo.1),
        prio.3,
        format!("{:.0}", prio.1),
    ));
    // FIFO: every scheduler invoice is taken before it, but for the takes
    // running at the same moment as its own (one per other worker at most).
    let least = (batch as usize).saturating_sub(p.workers as usize - 1);
    cx.check(fifo.3 >= least, msg::fifo_waits(least));
    cx.check(prio.3 == 0, msg::prio_first_round());
    cx.anomaly(false);
    Ok(())
}

mod msg {
    crate::messages! {
        prefix "in";
        about() {
            en: "Gapless invoice numbers with parallel workers and a slow, failing integrator",
            tr: "Paralel worker'lar ve yavaş, hata veren bir entegratörle boşluksuz fatura numaraları",
        }
        summary() {
            en: "gapless invoice numbers while parallel workers send to a slow, failing integrator",
            tr: "paralel worker'lar yavaş ve hata veren bir entegratöre gönderirken boşluksuz fatura numaraları",
        }
        audit(issued, dups, gaps, unknown, rate, workers, par) {
            en: "{issued} numbers issued; {dups} duplicate(s); gaps {gaps}; {unknown} unknown locally; {rate} invoices/s with {workers} worker(s) ({par} in parallel at most)",
            tr: "{issued} numara verildi; {dups} mükerrer; boşluklar {gaps}; yerelde bilinmeyen {unknown}; {workers} worker ile saniyede {rate} fatura (aynı anda en fazla {par})",
        }
        none() {
            en: "none",
            tr: "yok",
        }
        priority(fifo_n, fifo_ms, prio_n, prio_ms) {
            en: "first in, first out: {fifo_n} invoices were taken ahead of it (sent after {fifo_ms} ms); with priority: {prio_n} (sent after {prio_ms} ms)",
            tr: "ilk giren ilk çıkar: ondan önce {fifo_n} fatura alındı ({fifo_ms} ms sonra gönderildi); öncelikle: {prio_n} ({prio_ms} ms sonra gönderildi)",
        }
        reply_accepted() {
            en: "accepted",
            tr: "kabul edildi",
        }
        reply_duplicate() {
            en: "duplicate number",
            tr: "mükerrer numara",
        }
        reply_rejected(why) {
            en: "rejected: {why}",
            tr: "reddedildi: {why}",
        }
        reply_transient() {
            en: "temporary failure",
            tr: "geçici hata",
        }
        invalid_tax() {
            en: "invalid tax number",
            tr: "geçersiz vergi numarası",
        }
        queued(batch, users, cancelled) {
            en: "queued {batch} invoices from the scheduler and {users} from users; cancelled {cancelled} while queued; invoices with id ending in 7 have an invalid tax number",
            tr: "zamanlayıcıdan {batch}, kullanıcılardan {users} fatura kuyruğa girdi; kuyruktayken {cancelled} iptal edildi; id'si 7 ile biten faturaların vergi numarası geçersiz",
        }
        not_numbered(id) {
            en: "invoice {id} was not numbered when it was queued",
            tr: "{id} numaralı fatura kuyruğa girerken numara almamış",
        }
        crash_before(id, no) {
            en: "invoice {id} (number {no}): the worker crashes before calling the integrator",
            tr: "fatura {id} (numara {no}): worker entegratörü çağırmadan önce çöker",
        }
        integrator_says(id, no, attempt, reply) {
            en: "invoice {id}, number {no}, attempt {attempt}: integrator says {reply}",
            tr: "fatura {id}, numara {no}, deneme {attempt}: entegratörün cevabı {reply}",
        }
        crash_after(id) {
            en: "invoice {id}: the worker crashes after the integrator accepted, before recording it",
            tr: "fatura {id}: worker, entegratör kabul ettikten sonra, bunu kaydetmeden önce çöker",
        }
        corrected(id, why, no) {
            en: "invoice {id} rejected ({why}): corrected by a user, queued again with number {no}",
            tr: "fatura {id} reddedildi ({why}): bir kullanıcı düzeltti, {no} numarasıyla yeniden kuyruğa girdi",
        }
        all_sent(unsent) {
            en: "every invoice the workers took was sent (left unsent: {unsent})",
            tr: "worker'ların aldığı her fatura gönderildi (gönderilmeden kalan: {unsent})",
        }
        number_taken(id, no) {
            en: "invoice {id}: the integrator already has number {no} for another invoice; a number that stays with its invoice cannot be sent again: left unsent",
            tr: "fatura {id}: entegratörde {no} numarası başka bir faturaya ait; faturasında kalan bir numara yeniden gönderilemez: gönderilmeden bırakıldı",
        }
        sweep_blind(n, ms) {
            en: "the orphan sweep found none of the {n} invoice(s) the server says have been in SENDING longer than {ms} ms",
            tr: "yetim taraması, sunucuya göre {ms} ms'den uzun süredir SENDING'de olan {n} faturanın hiçbirini bulmadı",
        }
        not_sent(id, transients, duplicates) {
            en: "invoice-numbering: invoice {id} was not sent ({transients} transient failures, {duplicates} duplicates)",
            tr: "invoice-numbering: fatura {id} gönderilemedi ({transients} geçici hata, {duplicates} mükerrer)",
        }
        sweep(ms) {
            en: "orphan sweep every {ms} ms for invoices in SENDING longer than {ms} ms; the integrator is failing for a while",
            tr: "{ms} ms'den uzun süredir SENDING'de olan faturalar için her {ms} ms'de bir yetim taraması; entegratör bir süre hata veriyor",
        }
        sweep_unfinished(pending) {
            en: "the orphan sweep did not finish: {pending} invoice(s) still in SENDING at its deadline",
            tr: "yetim taraması bitmedi: süresi dolduğunda {pending} fatura hâlâ SENDING'de",
        }
        sweep_repair(no, id) {
            en: "sweep: number {no} is at the integrator (invoice {id}): repairing the local record",
            tr: "tarama: {no} numarası entegratörde (fatura {id}): yerel kayıt onarılıyor",
        }
        belongs(no, holder, id) {
            en: "invoice-numbering: number {no} belongs to invoice {holder}, not {id}",
            tr: "invoice-numbering: {no} numarası {id} değil {holder} numaralı faturanın",
        }
        half_open() {
            en: "sweep: circuit breaker half-open, one trial call",
            tr: "tarama: circuit breaker yarı açık, tek bir deneme çağrısı",
        }
        resent(id, no) {
            en: "sweep: invoice {id} sent again with its number {no}: accepted",
            tr: "tarama: fatura {id} kendi numarası {no} ile yeniden gönderildi: kabul edildi",
        }
        resend_failed(id, no, reply) {
            en: "sweep: resending invoice {id} (number {no}) failed: {reply}",
            tr: "tarama: fatura {id} (numara {no}) yeniden gönderilemedi: {reply}",
        }
        breaker_open(ms) {
            en: "sweep: circuit breaker open for {ms} ms; numbers stay reserved",
            tr: "tarama: circuit breaker {ms} ms açık; numaralar ayrılmış kalır",
        }
        ev_statuses() {
            en: "invoices by status",
            tr: "duruma göre faturalar",
        }
        ev_audit() {
            en: "audit: the integrator's accepted numbers against the local records",
            tr: "denetim: entegratörün kabul ettiği numaralar ve yerel kayıtlar",
        }
        col_check() {
            en: "check",
            tr: "kontrol",
        }
        col_found() {
            en: "found",
            tr: "bulunan",
        }
        accepted_numbers() {
            en: "numbers accepted by the integrator",
            tr: "entegratörün kabul ettiği numaralar",
        }
        dup_numbers() {
            en: "numbers two invoices took (rejected as duplicate)",
            tr: "iki faturanın aldığı numaralar (mükerrer diye reddedildi)",
        }
        gaps_in(high) {
            en: "gaps in 1..{high}",
            tr: "1..{high} aralığındaki boşluklar",
        }
        unknown_locally() {
            en: "accepted remotely, unknown locally",
            tr: "uzakta kabul edilmiş, yerelde bilinmiyor",
        }
        sent_twice() {
            en: "invoices sent under more than one number",
            tr: "birden fazla numarayla gönderilen faturalar",
        }
        all_known() {
            en: "every number the integrator accepted is known locally",
            tr: "entegratörün kabul ettiği her numara yerelde biliniyor",
        }
        not_twice() {
            en: "no invoice went out under two numbers",
            tr: "hiçbir fatura iki numarayla gitmedi",
        }
        same_number() {
            en: "two workers take the same number and the integrator rejects one",
            tr: "iki worker aynı numarayı alır ve entegratör birini reddeder",
        }
        no_dups() {
            en: "no duplicates",
            tr: "mükerrer yok",
        }
        leave_holes() {
            en: "rejected and cancelled invoices leave holes",
            tr: "reddedilen ve iptal edilen faturalar boşluk bırakır",
        }
        cancelled_holes() {
            en: "the cancelled invoices' numbers are holes",
            tr: "iptal edilen faturaların numaraları boşluktur",
        }
        burn() {
            en: "failed sends burn sequence values: gaps",
            tr: "başarısız gönderimler sequence değerlerini yakar: boşluklar",
        }
        clean() {
            en: "no duplicates and no gaps",
            tr: "mükerrer yok, boşluk yok",
        }
        one_at_a_time() {
            en: "one send at a time: the counter lock is held across the call",
            tr: "bir seferde tek gönderim: sayaç kilidi çağrı boyunca tutulur",
        }
        held_for_call() {
            en: "the counter lock is held for an integrator call",
            tr: "sayaç kilidi bir entegratör çağrısı boyunca tutulur",
        }
        parallel() {
            en: "sends run in parallel (no lock held across the call)",
            tr: "gönderimler paralel çalışır (çağrı boyunca kilit tutulmaz)",
        }
        repaired() {
            en: "every invoice accepted before a crash is repaired",
            tr: "çökmeden önce kabul edilen her fatura onarılır",
        }
        resent_all() {
            en: "every invoice never sent goes out with its number",
            tr: "hiç gönderilmemiş her fatura kendi numarasıyla gider",
        }
        recovered() {
            en: "every orphan is recovered",
            tr: "her yetim kurtarılır",
        }
        breaker() {
            en: "the circuit breaker stops hammering the failing integrator",
            tr: "circuit breaker hata veren entegratöre yüklenmeyi keser",
        }
        fifo() {
            en: "first in, first out",
            tr: "ilk giren ilk çıkar",
        }
        interactive_first() {
            en: "interactive first",
            tr: "önce etkileşimli",
        }
        priority_part(part, batch, interactive) {
            en: "part: {part}: {batch} scheduler invoices queued, then interactive invoice {interactive}",
            tr: "bölüm: {part}: {batch} zamanlayıcı faturası kuyruğa girdi, ardından {interactive} numaralı etkileşimli fatura",
        }
        interactive_not_sent() {
            en: "invoice-numbering: the interactive invoice was not sent",
            tr: "invoice-numbering: etkileşimli fatura gönderilmedi",
        }
        ev_wait() {
            en: "the interactive invoice's wait",
            tr: "etkileşimli faturanın beklemesi",
        }
        col_order() {
            en: "dequeue order",
            tr: "kuyruktan alma sırası",
        }
        col_waited() {
            en: "waited ms",
            tr: "beklenen ms",
        }
        col_before() {
            en: "invoices sent before it",
            tr: "ondan önce gönderilen faturalar",
        }
        col_ahead() {
            en: "taken ahead of it",
            tr: "ondan önce alınan",
        }
        fifo_waits(least) {
            en: "in FIFO order (nearly) the whole batch is taken ahead of it: at least {least} takes were answered before its own began",
            tr: "FIFO sırasında (neredeyse) bütün paket ondan önce alınır: onunkinden önce en az {least} alma yanıtlandı",
        }
        prio_first_round() {
            en: "with priority no invoice is taken ahead of it: no take was answered before its own began (the first round takes it)",
            tr: "öncelikle ondan önce hiçbir fatura alınmaz: onunki başlamadan hiçbir alma yanıtlanmadı (ilk tur onu alır)",
        }
        a_worker() {
            en: "invoice-numbering: a worker",
            tr: "invoice-numbering: bir worker",
        }
        invoices_range() {
            en: "--invoices must be at least --workers and at most 10000",
            tr: "--invoices en az --workers kadar, en fazla 10000 olmalı",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Soak, e5126f1: with four workers an invoice lost the MAX()+1 race 20
    /// times and was left unsent although every other invoice went out.
    #[test]
    fn duplicates_are_bounded_by_the_other_invoices_not_by_the_transient_budget() {
        let mut r = Retries::new(40);
        for _ in 0..25 {
            r.count(&Reply::Duplicate);
        }
        assert!(!r.spent(), "25 duplicates among 40 invoices: still sent again");
        for _ in 25..40 {
            r.count(&Reply::Duplicate);
        }
        assert!(
            r.spent(),
            "40 duplicates among 40 invoices: more than the others could win"
        );
        let mut r = Retries::new(40);
        for _ in 0..19 {
            r.count(&Reply::Transient);
        }
        r.count(&Reply::Duplicate);
        assert!(!r.spent());
        r.count(&Reply::Transient);
        assert!(r.spent(), "the 20th transient failure ends it");
        let mut r = Retries::new(1);
        r.count(&Reply::Accepted);
        assert!(!r.spent());
        r.count(&Reply::Duplicate);
        assert!(r.spent(), "a lone invoice has no one to lose a number to");
    }

    /// (invoice, take sent, take answered), in ms from `t0`.
    fn takes(t0: Instant, spans: &[(i64, u64, u64)]) -> Vec<(i64, Instant, Instant)> {
        let at = |ms| t0 + Duration::from_millis(ms);
        spans.iter().map(|&(id, s, a)| (id, at(s), at(a))).collect()
    }

    #[test]
    fn a_take_at_the_same_moment_is_not_ahead() {
        let t0 = Instant::now();
        // Four workers take at once; the interactive invoice (41) is one of them.
        let t = takes(t0, &[(1, 0, 3), (41, 1, 4), (2, 2, 5), (3, 0, 6)]);
        assert_eq!(taken_ahead(&t, 41), Some(0));
    }

    /// Soak run 49: the interactive invoice's send was the slowest of its
    /// round, so seven sends finished before it; it was still the first taken.
    #[test]
    fn sends_finishing_sooner_are_not_ahead() {
        let t0 = Instant::now();
        let mut spans = vec![(41, 0, 2), (1, 0, 3), (2, 1, 3), (3, 1, 4)];
        // Later rounds: taken after the interactive one's take was answered.
        spans.extend((4..12).map(|i| (i, 30 + i as u64, 31 + i as u64)));
        assert_eq!(taken_ahead(&takes(t0, &spans), 41), Some(0));
    }

    #[test]
    fn fifo_takes_the_batch_ahead() {
        let t0 = Instant::now();
        // Batch 1..=40 one take after another, then 41 beside the last three.
        let mut spans: Vec<_> = (1..=37).map(|i| (i, 10 * i as u64, 10 * i as u64 + 5)).collect();
        spans.extend([(38, 400, 420), (39, 401, 421), (40, 402, 422), (41, 403, 423)]);
        assert_eq!(taken_ahead(&takes(t0, &spans), 41), Some(37));
        assert_eq!(taken_ahead(&takes(t0, &spans), 99), None);
    }
}
