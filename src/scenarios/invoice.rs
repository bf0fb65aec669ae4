//! Gapless legal invoice numbers with parallel workers (seed 001): five ways
//! to number, an orphan recovery with a circuit breaker, and priority. The
//! verdict is an audit of what the (simulated) integrator accepted against the
//! local records, not what the code believes it did.
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow};

use super::{ScenarioInfo, VariantInfo};
use crate::config::InvoiceParams;
use crate::engine::{Barrier, Session, VariantCtx, join_all, millis};
use crate::report::Evidence;
use crate::sql::SqlFile;

static SQL: SqlFile = SqlFile::new(
    "lab/invoice-numbering.sql",
    include_str!("../../lab/invoice-numbering.sql"),
);

pub const INFO: ScenarioInfo = ScenarioInfo {
    name: "invoice-numbering",
    variants: &[
        VariantInfo { name: "max-plus-one" },
        VariantInfo { name: "enqueue-time" },
        VariantInfo { name: "sequence" },
        VariantInfo { name: "lock-over-call" },
        VariantInfo {
            name: "jit-reservation",
        },
        VariantInfo {
            name: "orphan-recovery",
        },
        VariantInfo { name: "priority" },
    ],
};

/// What the integrator said.
#[derive(Debug, Clone, PartialEq)]
enum Reply {
    Accepted,
    Duplicate,
    /// Why, as a key of the i18n table.
    Rejected(&'static str),
    Transient,
}

impl Reply {
    /// What the integrator said, in the run's language.
    fn say(&self) -> String {
        match self {
            Reply::Accepted => crate::tr!("in.reply_accepted"),
            Reply::Duplicate => crate::tr!("in.reply_duplicate"),
            Reply::Rejected(why) => crate::tr!("in.reply_rejected", why = crate::i18n::t(why, &[])),
            Reply::Transient => crate::tr!("in.reply_transient"),
        }
    }
}

/// The external integrator, in process: slow, sometimes failing, and the
/// keeper of what it accepted (the audit's remote side).
struct Integrator {
    latency: Duration,
    transient_rate: f64,
    state: Mutex<Remote>,
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
        {
            let mut s = self.state.lock().unwrap();
            s.calls += 1;
            s.in_flight += 1;
            s.max_in_flight = s.max_in_flight.max(s.in_flight);
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
            return Reply::Rejected("in.invalid_tax");
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
}

pub async fn run(ctx: &mut VariantCtx<'_>) -> Result<()> {
    let p = ctx.env.params.invoice;
    let strategy = match ctx.variant {
        "max-plus-one" => Strategy::MaxPlusOne,
        "enqueue-time" => Strategy::EnqueueTime,
        "sequence" => Strategy::Sequence,
        "lock-over-call" => Strategy::LockOverCall,
        "jit-reservation" | "orphan-recovery" => Strategy::Jit,
        "priority" => return priority(ctx, &p).await,
        other => anyhow::bail!(crate::tr!(
            "run.no_variant",
            scenario = "invoice-numbering",
            variant = other
        )),
    };
    let orphans = ctx.variant == "orphan-recovery";
    // Producers: the scheduler's batch, then users' clicks.
    let users = (p.invoices / 5).max(1);
    let batch = p.invoices - users;
    enqueue(ctx, batch, 0, "scheduler").await?;
    enqueue(ctx, users, 0, "user").await?;
    ctx.env.rows(SQL.get("invalid_tax_numbers")?).await?;
    if strategy == Strategy::EnqueueTime {
        ctx.env.rows(SQL.get("number_at_enqueue")?).await?;
        ctx.env.rows(SQL.get("counter_after_enqueue")?).await?;
    }
    // Users cancel some invoices while they are still queued.
    let cancelled: Vec<i64> = (1..=p.invoices as i64).filter(|i| i % 10 == 3).collect();
    for id in &cancelled {
        ctx.env.rows(&SQL.bind("cancel", &[("invoice_id", id)])?).await?;
    }
    ctx.narrate(crate::tr!(
        "in.queued",
        batch = batch,
        users = users,
        cancelled = format!("{cancelled:?}")
    ));
    let shared = Arc::new(Shared {
        integrator: Integrator {
            latency: p.latency,
            transient_rate: p.transient_rate,
            state: Mutex::default(),
        },
        strategy,
        first_round: (strategy == Strategy::MaxPlusOne).then(|| ctx.barrier("first_numbers_taken", p.workers as usize)),
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
    });

    let (workers, tallies, elapsed) = send_all(ctx, "W", &shared, &p).await?;

    let mut recovery = None;
    if orphans {
        recovery = Some(recover(ctx, &shared, &workers[0], &p).await?);
    }
    audit(ctx, &p, &shared, &tallies, elapsed, &cancelled, recovery).await
}

/// Opens the workers (`{prefix}1`, `{prefix}2`, ...) and runs them until the
/// queue is empty; their tallies and how long it took.
async fn send_all(
    ctx: &mut VariantCtx<'_>,
    prefix: &str,
    shared: &Arc<Shared>,
    p: &InvoiceParams,
) -> Result<(Vec<Session>, Vec<Tally>, Duration)> {
    let names: Vec<String> = (1..=p.workers).map(|i| format!("{prefix}{i}")).collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let workers = ctx.sessions(&refs).await?;
    let began = Instant::now();
    let handles = workers
        .iter()
        .map(|w| {
            let (w, shared) = (w.clone(), shared.clone());
            tokio::spawn(async move { worker(&w, &shared).await })
        })
        .collect();
    let tallies = join_all(ctx.env.wait_timeout * 6, &crate::tr!("in.a_worker"), handles).await?;
    Ok((workers, tallies, began.elapsed()))
}

/// A producer queues `count` invoices.
async fn enqueue(ctx: &VariantCtx<'_>, count: u32, priority: i32, source: &str) -> Result<()> {
    let source = crate::engine::lit(source);
    ctx.env
        .rows(&SQL.bind(
            "enqueue",
            &[("count", &count), ("priority", &priority), ("source", &source)],
        )?)
        .await?;
    Ok(())
}

fn row_int(rows: &crate::engine::Rows, col: &str) -> Option<i64> {
    rows.get(0, col).and_then(|v| v.parse().ok())
}

/// Takes invoices until the queue is empty; each is numbered and sent the
/// strategy's way, retried in place on transient failures.
async fn worker(w: &Session, sh: &Shared) -> Result<Tally> {
    let mut tally = Tally::default();
    let mut first = true;
    loop {
        w.run("BEGIN").await?;
        let taken = w.run(SQL.get("take")?).await?;
        let Some(id) = row_int(&taken, "invoice_id") else {
            w.run("COMMIT").await?;
            return Ok(tally);
        };
        let reserved = row_int(&taken, "reserved_no");
        let tax = taken.get(0, "tax_number").unwrap_or("").to_string();
        let barrier = if first { sh.first_round.clone() } else { None };
        first = false;
        process(w, sh, id, reserved, &tax, barrier, &mut tally).await?;
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
    let lock_again = format!("SELECT invoice_id FROM invoices WHERE invoice_id = {id} FOR UPDATE");
    let keeps_tx = matches!(sh.strategy, Strategy::Sequence | Strategy::LockOverCall);
    let mut reserved = reserved;
    for attempt in 1..=20i64 {
        if keeps_tx {
            // A failed call undoes the numbering but keeps the invoice locked (and so ours).
            w.run("SAVEPOINT numbering").await?;
        }
        // 1. Number the invoice.
        let (no, hold_from) = match sh.strategy {
            Strategy::MaxPlusOne => (w.int(SQL.get("max_plus_one")?, "no").await?, None),
            Strategy::EnqueueTime => (reserved.with_context(|| crate::tr!("in.not_numbered", id = id))?, None),
            Strategy::Sequence => (w.int(SQL.get("next_from_sequence")?, "no").await?, None),
            Strategy::LockOverCall => {
                let no = w.int(SQL.get("lock_counter")?, "no").await?;
                (no, Some(Instant::now()))
            }
            Strategy::Jit => match reserved {
                Some(no) => (no, None),
                None => {
                    let no = w.int(SQL.get("reserve")?, "no").await?;
                    (no, Some(Instant::now()))
                }
            },
        };
        // 2. Commit before the call, unless the strategy keeps its transaction across it.
        if !keeps_tx {
            w.run(&SQL.bind("mark_sending", &[("no", &no), ("invoice_id", &id)])?)
                .await?;
            w.run("COMMIT").await?;
            if let Some(t) = hold_from {
                tally.holds.push(t.elapsed());
            }
            reserved = Some(no);
        }
        if let Some(b) = &barrier
            && attempt == 1
        {
            b.wait(w.name()).await?;
        }
        if sh.crash_before_send.contains(&id) && attempt == 1 {
            w.note(crate::tr!("in.crash_before", id = id, no = no));
            tally.crashed.push(id);
            return Ok(());
        }
        // 3. The external call.
        let reply = sh.integrator.send(no, id, tax, attempt).await;
        w.note(crate::tr!(
            "in.integrator_says",
            id = id,
            no = no,
            attempt = attempt,
            reply = reply.say()
        ));
        if reply == Reply::Accepted && sh.crash_after_accept.contains(&id) {
            w.note(crate::tr!("in.crash_after", id = id));
            tally.crashed.push(id);
            return Ok(());
        }
        // 4. Record the outcome.
        match reply {
            Reply::Accepted => {
                if !keeps_tx {
                    w.run("BEGIN").await?;
                }
                if sh.strategy == Strategy::LockOverCall {
                    w.run(SQL.get("advance_counter")?).await?;
                }
                w.run(&SQL.bind("record_sent", &[("no", &no), ("invoice_id", &id)])?)
                    .await?;
                w.run(&SQL.bind("mark", &[("status", &"'SENT'"), ("invoice_id", &id)])?)
                    .await?;
                w.run("COMMIT").await?;
                if let (true, Some(t)) = (keeps_tx, hold_from) {
                    tally.holds.push(t.elapsed());
                }
                tally.sent += 1;
                sh.sent_at.lock().unwrap().insert(id, Instant::now());
                return Ok(());
            }
            Reply::Rejected(why) => {
                if keeps_tx {
                    // The counter lock goes; a sequence value stays consumed.
                    w.run("ROLLBACK TO SAVEPOINT numbering").await?;
                    if let Some(t) = hold_from {
                        tally.holds.push(t.elapsed());
                    }
                    w.run(&SQL.bind("mark", &[("status", &"'REJECTED'"), ("invoice_id", &id)])?)
                        .await?;
                    w.run("COMMIT").await?;
                    return Ok(());
                }
                if sh.strategy == Strategy::Jit {
                    // The number stays with the invoice: a user corrects it and it goes out again with it.
                    w.run(&SQL.bind("mark", &[("status", &"'ERROR'"), ("invoice_id", &id)])?)
                        .await?;
                    w.note(crate::tr!(
                        "in.corrected",
                        id = id,
                        why = crate::i18n::t(why, &[]),
                        no = no
                    ));
                    w.run(&SQL.bind("correct_and_requeue", &[("invoice_id", &id)])?).await?;
                } else {
                    w.run(&SQL.bind("mark", &[("status", &"'REJECTED'"), ("invoice_id", &id)])?)
                        .await?;
                }
                return Ok(());
            }
            Reply::Duplicate | Reply::Transient => {
                if keeps_tx {
                    // The counter lock goes; a sequence value stays consumed.
                    w.run("ROLLBACK TO SAVEPOINT numbering").await?;
                    if let Some(t) = hold_from {
                        tally.holds.push(t.elapsed());
                    }
                } else {
                    w.run(&SQL.bind("mark", &[("status", &"'ERROR'"), ("invoice_id", &id)])?)
                        .await?;
                    if sh.strategy != Strategy::Jit {
                        reserved = if sh.strategy == Strategy::EnqueueTime {
                            reserved
                        } else {
                            None
                        };
                    }
                    w.run("BEGIN").await?;
                    w.run(&lock_again).await?;
                }
            }
        }
    }
    Err(anyhow!(crate::tr!("in.not_sent", id = id)))
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
async fn recover(ctx: &mut VariantCtx<'_>, sh: &Shared, w: &Session, p: &InvoiceParams) -> Result<Recovery> {
    let threshold = p.latency * 2;
    // The integrator is down for the first calls of the sweep: the breaker must not hammer it.
    sh.integrator.state.lock().unwrap().fail_next = 4;
    ctx.narrate(crate::tr!("in.sweep", ms = threshold.as_millis()));
    let mut rec = Recovery {
        repaired: 0,
        resent: 0,
        breaker_opened: 0,
        calls_skipped: 0,
    };
    let mut failures_in_row = 0u32;
    let mut open_until: Option<Instant> = None;
    let deadline = Instant::now() + ctx.env.wait_timeout * 3;
    loop {
        let stuck = w
            .run(&SQL.bind(
                "stuck_sending",
                &[("threshold_s", &format!("{:.3}", threshold.as_secs_f64()))],
            )?)
            .await?;
        let pending = ctx
            .env
            .int("SELECT count(*) FROM invoices WHERE status = 'SENDING'")
            .await?;
        if pending == 0 {
            return Ok(rec);
        }
        if Instant::now() > deadline {
            return Err(anyhow!(crate::tr!("in.sweep_unfinished")));
        }
        for i in 0..stuck.rows.len() {
            let id: i64 = stuck.get(i, "invoice_id").and_then(|v| v.parse().ok()).unwrap_or(0);
            let no: i64 = stuck.get(i, "reserved_no").and_then(|v| v.parse().ok()).unwrap_or(0);
            match sh.integrator.lookup(no) {
                Some(holder) if holder == id => {
                    w.note(crate::tr!("in.sweep_repair", no = no, id = id));
                    record_accepted(w, no, id).await?;
                    rec.repaired += 1;
                }
                Some(holder) => {
                    return Err(anyhow!(crate::tr!("in.belongs", no = no, holder = holder, id = id)));
                }
                None => {
                    if let Some(until) = open_until {
                        if Instant::now() < until {
                            rec.calls_skipped += 1;
                            continue;
                        }
                        w.note(crate::tr!("in.half_open"));
                    }
                    let reply = sh
                        .integrator
                        .send(no, id, "0000000000", 100 + failures_in_row as i64)
                        .await;
                    if reply == Reply::Accepted {
                        w.note(crate::tr!("in.resent", id = id, no = no));
                        record_accepted(w, no, id).await?;
                        rec.resent += 1;
                        failures_in_row = 0;
                        open_until = None;
                    } else {
                        failures_in_row += 1;
                        w.note(crate::tr!("in.resend_failed", id = id, no = no, reply = reply.say()));
                        if failures_in_row >= 3 || open_until.is_some() {
                            rec.breaker_opened += 1;
                            open_until = Some(Instant::now() + threshold);
                            w.note(crate::tr!("in.breaker_open", ms = threshold.as_millis()));
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
async fn record_accepted(w: &Session, no: i64, id: i64) -> Result<()> {
    w.run("BEGIN").await?;
    w.run(&SQL.bind("record_sent", &[("no", &no), ("invoice_id", &id)])?)
        .await?;
    w.run(&SQL.bind("mark", &[("status", &"'SENT'"), ("invoice_id", &id)])?)
        .await?;
    w.run("COMMIT").await?;
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

async fn audit(
    ctx: &mut VariantCtx<'_>,
    p: &InvoiceParams,
    sh: &Shared,
    tallies: &[Tally],
    elapsed: Duration,
    cancelled: &[i64],
    recovery: Option<Recovery>,
) -> Result<()> {
    let (accepted, duplicates, max_parallel, calls) = {
        let s = sh.integrator.state.lock().unwrap();
        (s.accepted.clone(), s.duplicates.clone(), s.max_in_flight, s.calls)
    };
    let local_rows = ctx.env.rows(SQL.get("outgoing")?).await?;
    let local: BTreeMap<i64, i64> = (0..local_rows.rows.len())
        .filter_map(|i| {
            Some((
                local_rows.get(i, "invoice_no")?.parse().ok()?,
                local_rows.get(i, "invoice_id")?.parse().ok()?,
            ))
        })
        .collect();
    let high = ctx
        .env
        .int(SQL.get("numbers_issued")?)
        .await?
        .max(accepted.keys().max().copied().unwrap_or(0));
    let gaps: Vec<i64> = (1..=high).filter(|n| !accepted.contains_key(n)).collect();
    let unknown_locally: Vec<i64> = accepted.keys().filter(|n| !local.contains_key(n)).copied().collect();
    let mut per_invoice: BTreeMap<i64, usize> = BTreeMap::new();
    for inv in accepted.values() {
        *per_invoice.entry(*inv).or_default() += 1;
    }
    let sent_twice: Vec<i64> = per_invoice.iter().filter(|(_, n)| **n > 1).map(|(i, _)| *i).collect();
    let issued = accepted.len();
    let holds: Vec<Duration> = tallies.iter().flat_map(|t| t.holds.clone()).collect();
    let statuses = ctx.env.rows(SQL.get("statuses")?).await?;
    ctx.evidence(&crate::tr!("in.ev_statuses"), &statuses);
    ctx.evidence_table(Evidence {
        title: crate::tr!("in.ev_audit"),
        columns: vec![crate::tr!("in.col_check"), crate::tr!("in.col_found")],
        rows: vec![
            vec![crate::tr!("in.accepted_numbers"), issued.to_string()],
            vec![
                crate::tr!("in.dup_numbers"),
                fmt_list(&duplicates.iter().map(|(n, _)| *n).collect::<Vec<_>>()),
            ],
            vec![crate::tr!("in.gaps_in", high = high), fmt_list(&gaps)],
            vec![crate::tr!("in.unknown_locally"), fmt_list(&unknown_locally)],
            vec![crate::tr!("in.sent_twice"), fmt_list(&sent_twice)],
        ],
    });
    let per_s = if elapsed.is_zero() {
        0.0
    } else {
        issued as f64 / elapsed.as_secs_f64()
    };
    ctx.metric("invoices", p.invoices);
    ctx.metric("issued", issued);
    ctx.metric("duplicates", duplicates.len());
    ctx.metric("gaps", gaps.len());
    ctx.metric("gap_numbers", &gaps);
    ctx.metric(
        "orphans_recovered",
        recovery.as_ref().map_or(0, |r| r.repaired + r.resent),
    );
    ctx.metric("invoices_per_s", (per_s * 10.0).round() / 10.0);
    // Calls per second, retries and resends included: the integrator pipeline's throughput.
    let sends_per_s = if elapsed.is_zero() {
        0.0
    } else {
        calls as f64 / elapsed.as_secs_f64()
    };
    ctx.metric("sends_per_s", (sends_per_s * 10.0).round() / 10.0);
    ctx.metric("counter_lock_hold_ms_p50", percentile(holds.clone(), 0.5));
    ctx.metric("counter_lock_hold_ms_p99", percentile(holds.clone(), 0.99));
    ctx.metric("max_parallel_sends", max_parallel);
    ctx.metric("latency_ms", p.latency.as_millis() as u64);
    ctx.metric("workers", p.workers);
    let gap_list = if gaps.is_empty() {
        crate::i18n::t("in.none", &[])
    } else {
        fmt_list(&gaps)
    };
    ctx.observe(crate::i18n::t(
        "in.audit",
        &[
            ("issued", &issued),
            ("dups", &duplicates.len()),
            ("gaps", &gap_list),
            ("unknown", &unknown_locally.len()),
            ("rate", &format!("{per_s:.1}")),
            ("workers", &p.workers),
            ("par", &max_parallel),
        ],
    ));
    ctx.expect(unknown_locally.is_empty(), crate::tr!("in.all_known"));
    ctx.expect(sent_twice.is_empty(), crate::tr!("in.not_twice"));
    let clean = duplicates.is_empty() && gaps.is_empty();
    match ctx.variant {
        "max-plus-one" => {
            ctx.expect(!duplicates.is_empty(), crate::tr!("in.same_number"));
            ctx.anomaly(!clean);
        }
        "enqueue-time" => {
            ctx.expect(duplicates.is_empty(), crate::tr!("in.no_dups"));
            ctx.expect(!gaps.is_empty(), crate::tr!("in.leave_holes"));
            let holes: BTreeSet<i64> = gaps.iter().copied().collect();
            ctx.expect(
                cancelled.iter().all(|c| holes.contains(c)),
                crate::tr!("in.cancelled_holes"),
            );
            ctx.anomaly(!clean);
        }
        "sequence" => {
            ctx.expect(duplicates.is_empty(), crate::tr!("in.no_dups"));
            ctx.expect(!gaps.is_empty(), crate::tr!("in.burn"));
            ctx.anomaly(!clean);
        }
        "lock-over-call" => {
            ctx.expect(clean, crate::tr!("in.clean"));
            ctx.expect(max_parallel == 1, crate::tr!("in.one_at_a_time"));
            let p50 = percentile(holds, 0.5).unwrap_or(0.0);
            ctx.expect(p50 >= millis(p.latency / 2), crate::tr!("in.held_for_call"));
            ctx.anomaly(!clean);
        }
        "jit-reservation" | "orphan-recovery" => {
            ctx.expect(clean, crate::tr!("in.clean"));
            ctx.expect(p.workers < 2 || max_parallel > 1, crate::tr!("in.parallel"));
            if let Some(r) = &recovery {
                let crashed: usize = tallies.iter().map(|t| t.crashed.len()).sum();
                ctx.metric("orphans_repaired", r.repaired);
                ctx.metric("orphans_resent", r.resent);
                ctx.metric("breaker_opened", r.breaker_opened);
                ctx.metric("breaker_calls_skipped", r.calls_skipped);
                ctx.expect(r.repaired == sh.crash_after_accept.len(), crate::tr!("in.repaired"));
                ctx.expect(r.resent == sh.crash_before_send.len(), crate::tr!("in.resent_all"));
                ctx.expect(r.repaired + r.resent == crashed, crate::tr!("in.recovered"));
                ctx.expect(r.breaker_opened > 0, crate::tr!("in.breaker"));
            }
            ctx.anomaly(!clean);
        }
        _ => {}
    }
    Ok(())
}

fn fmt_list(v: &[i64]) -> String {
    if v.is_empty() {
        crate::tr!("in.none")
    } else {
        v.iter().map(|n| n.to_string()).collect::<Vec<_>>().join(", ")
    }
}

/// A scheduler batch, then one interactive invoice; FIFO against priority ordering.
async fn priority(ctx: &mut VariantCtx<'_>, p: &InvoiceParams) -> Result<()> {
    let batch = (p.invoices * 2).max(10);
    let mut waits = Vec::new();
    for (part, ordered) in [
        (crate::tr!("in.fifo"), false),
        (crate::tr!("in.interactive_first"), true),
    ] {
        ctx.env
            .rows("DELETE FROM outgoing_invoices; DELETE FROM invoices; UPDATE invoice_sequences SET next_no = 1")
            .await?;
        enqueue(ctx, batch, 0, "scheduler").await?;
        let interactive_priority = if ordered { 1 } else { 0 };
        enqueue(ctx, 1, interactive_priority, "user").await?;
        let interactive = ctx.env.int("SELECT max(invoice_id) FROM invoices").await?;
        ctx.narrate(crate::tr!(
            "in.priority_part",
            part = part,
            batch = batch,
            interactive = interactive
        ));
        let shared = Arc::new(Shared {
            integrator: Integrator {
                latency: p.latency,
                transient_rate: 0.0,
                state: Mutex::default(),
            },
            strategy: Strategy::Jit,
            first_round: None,
            crash_after_accept: BTreeSet::new(),
            crash_before_send: BTreeSet::new(),
            sent_at: Mutex::default(),
        });
        let queued = Instant::now();
        send_all(ctx, if ordered { "PW" } else { "FW" }, &shared, p).await?;
        let sent = shared.sent_at.lock().unwrap().clone();
        let at = sent
            .get(&interactive)
            .copied()
            .ok_or_else(|| anyhow!(crate::tr!("in.interactive_not_sent")))?;
        let before = sent.values().filter(|t| **t < at).count();
        waits.push((part, millis(at.duration_since(queued)), before));
    }
    ctx.evidence_table(Evidence {
        title: crate::tr!("in.ev_wait"),
        columns: vec![
            crate::tr!("in.col_order"),
            crate::tr!("in.col_waited"),
            crate::tr!("in.col_before"),
        ],
        rows: waits
            .iter()
            .map(|(p, ms, n)| vec![p.to_string(), format!("{ms:.0}"), n.to_string()])
            .collect(),
    });
    let (fifo, prio) = (&waits[0], &waits[1]);
    ctx.metric("interactive_wait_ms_fifo", fifo.1);
    ctx.metric("interactive_wait_ms_priority", prio.1);
    ctx.metric("sent_before_fifo", fifo.2);
    ctx.metric("sent_before_priority", prio.2);
    ctx.observe(crate::i18n::t(
        "in.priority",
        &[
            ("fifo_n", &fifo.2),
            ("fifo_ms", &format!("{:.0}", fifo.1)),
            ("prio_n", &prio.2),
            ("prio_ms", &format!("{:.0}", prio.1)),
        ],
    ));
    ctx.expect(
        fifo.2 + (p.workers as usize) >= batch as usize,
        crate::tr!("in.fifo_waits"),
    );
    ctx.expect(prio.2 < p.workers as usize, crate::tr!("in.prio_first_round"));
    ctx.anomaly(false);
    Ok(())
}
