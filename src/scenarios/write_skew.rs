//! Write skew: "a customer may have at most one Pending order", checked then
//! inserted by two requests at once.
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use anyhow::Result;
use tokio::sync::oneshot;

use super::{ScenarioInfo, VariantInfo};
use crate::engine::{Barrier, PgError, Session, VariantCtx, join, lit};
use crate::report::Evidence;
use crate::retry::{RETRYABLE, RetryPolicy, Rng};
use crate::sql::SqlFile;

static SQL: SqlFile = SqlFile::new("lab/write-skew.sql", include_str!("../../lab/write-skew.sql"));

pub const INFO: ScenarioInfo = ScenarioInfo {
    name: "write-skew",
    variants: &[
        VariantInfo { name: "read-committed" },
        VariantInfo {
            name: "repeatable-read",
        },
        VariantInfo { name: "serializable" },
        VariantInfo {
            name: "serializable-retry",
        },
        VariantInfo {
            name: "serializable-no-index",
        },
    ],
};

const CUSTOMER: i64 = 1234;

pub async fn run(ctx: &mut VariantCtx<'_>) -> Result<()> {
    match ctx.variant {
        "read-committed" => rule(ctx, "READ COMMITTED", false).await,
        "repeatable-read" => rule(ctx, "REPEATABLE READ", false).await,
        "serializable" => rule(ctx, "SERIALIZABLE", false).await,
        "serializable-retry" => rule(ctx, "SERIALIZABLE", true).await,
        "serializable-no-index" => no_index(ctx).await,
        other => anyhow::bail!(crate::tr!("run.no_variant", scenario = "write-skew", variant = other)),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Decision {
    Inserted,
    SawPending(i64),
}

struct Outcome {
    attempts: u32,
    result: std::result::Result<Decision, PgError>,
    /// The statement a 40001 surfaced in, as the server reported it.
    failed_in: Option<&'static str>,
}

/// One request: BEGIN; check; (first attempt: wait at the barrier, then for
/// its turn); insert if none pending; COMMIT. Retried as a whole on 40001 when
/// `retry` is set.
struct Request {
    session: Session,
    isolation: &'static str,
    customer: i64,
    order_no: String,
    /// Both requests have checked.
    checked: Arc<Barrier>,
    /// The driver has looked at the locks (only when it takes part).
    go: Option<Arc<Barrier>>,
    /// Whose turn it is: the requests run concurrently, but A checks before
    /// B and A writes before B, so the timeline, and where a 40001 surfaces,
    /// are the same on every run. Both still check before either writes.
    turns: Turns,
    retry: bool,
}

#[derive(Default)]
struct Turns {
    /// B waits for A's check before its own BEGIN...
    check_after: Option<oneshot::Receiver<()>>,
    checked: Option<oneshot::Sender<()>>,
    /// ... and for A's transaction to end before writing.
    write_after: Option<oneshot::Receiver<()>>,
    written: Option<oneshot::Sender<()>>,
}

impl Request {
    async fn run(self, policy: RetryPolicy) -> Result<Outcome> {
        let policy = if self.retry {
            policy
        } else {
            RetryPolicy {
                max_attempts: 1,
                ..policy
            }
        };
        let s = self.session.clone();
        let failed_in: Arc<Mutex<Option<&'static str>>> = Arc::default();
        let shared = Arc::new(Mutex::new(self.turns));
        let (isolation, customer, order_no) = (self.isolation, self.customer, self.order_no);
        let (checked, go) = (self.checked, self.go);
        let mut rng = Rng::from_entropy(s.name());
        let attempted = policy
            .run(&s, &mut rng, |attempt| {
                let (s, failed_in, shared, checked, go, order_no) = (
                    s.clone(),
                    failed_in.clone(),
                    shared.clone(),
                    checked.clone(),
                    go.clone(),
                    order_no.clone(),
                );
                async move {
                    let r = attempt_once(
                        &s,
                        attempt,
                        isolation,
                        customer,
                        &order_no,
                        &checked,
                        go.as_deref(),
                        &shared,
                        &failed_in,
                    )
                    .await;
                    // Whatever happened, the first attempt lets the other request go on
                    // (a dropped sender lets it go on too).
                    let mut t = shared.lock().unwrap();
                    t.checked.take();
                    if let Some(tx) = t.written.take() {
                        let _ = tx.send(());
                    }
                    r
                }
            })
            .await?;
        if attempted.result.is_err() {
            // The failed attempt may have left its transaction open (an INSERT failed).
            s.run("ROLLBACK").await?;
        }
        let failed_in = *failed_in.lock().unwrap();
        Ok(Outcome {
            attempts: attempted.attempts,
            result: attempted.result,
            failed_in,
        })
    }
}

type Turn = Arc<Mutex<Turns>>;

/// Waits for the other request's signal (or its end: a dropped sender), with a deadline.
async fn await_turn(rx: Option<oneshot::Receiver<()>>) {
    if let Some(rx) = rx {
        let _ = tokio::time::timeout(std::time::Duration::from_secs(30), rx).await;
    }
}

#[allow(clippy::too_many_arguments)]
async fn attempt_once(
    s: &Session,
    attempt: u32,
    isolation: &str,
    customer: i64,
    order_no: &str,
    checked: &Barrier,
    go: Option<&Barrier>,
    turn: &Turn,
    failed_in: &Mutex<Option<&'static str>>,
) -> Result<std::result::Result<Decision, PgError>> {
    let fail = |stmt: &'static str, e: PgError| {
        *failed_in.lock().unwrap() = Some(stmt);
        Ok(Err(e))
    };
    if attempt == 1 {
        let rx = turn.lock().unwrap().check_after.take();
        await_turn(rx).await;
    }
    s.run(&SQL.bind("begin", &[("isolation", &isolation)])?).await?;
    let pending = match s
        .run_allow(&SQL.bind("check", &[("customer_id", &customer)])?, RETRYABLE)
        .await?
    {
        Ok(rows) => rows.int("pending")?,
        Err(e) => return fail("SELECT", e),
    };
    if attempt == 1 {
        if let Some(tx) = turn.lock().unwrap().checked.take() {
            let _ = tx.send(());
        }
        checked.wait(&format!("session {}", s.name())).await?;
        if let Some(go) = go {
            go.wait(&format!("session {}", s.name())).await?;
        }
        let rx = turn.lock().unwrap().write_after.take();
        await_turn(rx).await;
    }
    if pending > 0 {
        s.note(crate::tr!("ws.saw_note", n = pending));
        return match s.run_allow("COMMIT", RETRYABLE).await? {
            Ok(_) => Ok(Ok(Decision::SawPending(pending))),
            Err(e) => fail("COMMIT", e),
        };
    }
    s.note(crate::tr!("ws.saw_none_note"));
    let insert = SQL.bind("insert", &[("order_no", &lit(order_no)), ("customer_id", &customer)])?;
    if let Err(e) = s.run_allow(&insert, RETRYABLE).await? {
        return fail("INSERT", e);
    }
    match s.run_allow("COMMIT", RETRYABLE).await? {
        Ok(_) => Ok(Ok(Decision::Inserted)),
        Err(e) => fail("COMMIT", e),
    }
}

/// Runs A then B (A's writes first), both checking before either writes.
async fn pair(
    ctx: &mut VariantCtx<'_>,
    a: &Session,
    b: &Session,
    isolation: &'static str,
    customers: (i64, i64),
    retry: bool,
    go: Option<Arc<Barrier>>,
) -> Result<Pair> {
    let checked = ctx.barrier("both_checked", if go.is_some() { 3 } else { 2 });
    let (checked_tx, checked_rx) = oneshot::channel();
    let (written_tx, written_rx) = oneshot::channel();
    let policy = ctx.env.retry;
    let ra = Request {
        session: a.clone(),
        isolation,
        customer: customers.0,
        order_no: format!("BK-TA{}", customers.0),
        checked: checked.clone(),
        go: go.clone(),
        turns: Turns {
            checked: Some(checked_tx),
            written: Some(written_tx),
            ..Turns::default()
        },
        retry,
    };
    let rb = Request {
        session: b.clone(),
        isolation,
        customer: customers.1,
        order_no: format!("BK-TB{}", customers.1),
        checked: checked.clone(),
        go,
        turns: Turns {
            check_after: Some(checked_rx),
            write_after: Some(written_rx),
            ..Turns::default()
        },
        retry,
    };
    Ok(Pair {
        a: tokio::spawn(ra.run(policy)),
        b: tokio::spawn(rb.run(policy)),
        checked,
    })
}

struct Pair {
    a: tokio::task::JoinHandle<Result<Outcome>>,
    b: tokio::task::JoinHandle<Result<Outcome>>,
    checked: Arc<Barrier>,
}

impl Pair {
    async fn join(self, ctx: &VariantCtx<'_>) -> Result<(Outcome, Outcome)> {
        let a = join(ctx.env, &crate::tr!("ws.session_task", session = "A"), self.a).await?;
        let b = join(ctx.env, &crate::tr!("ws.session_task", session = "B"), self.b).await?;
        Ok((a, b))
    }
}

fn describe(who: &str, o: &Outcome) -> String {
    let tries = if o.attempts > 1 {
        crate::i18n::t("ws.attempt", &[("n", &o.attempts)])
    } else {
        String::new()
    };
    match &o.result {
        Ok(Decision::Inserted) => crate::i18n::t("ws.inserted", &[("who", &who), ("tries", &tries)]),
        Ok(Decision::SawPending(n)) => crate::i18n::t("ws.saw", &[("who", &who), ("n", n), ("tries", &tries)]),
        Err(e) => crate::i18n::t(
            "ws.failed",
            &[
                ("who", &who),
                ("code", &e.code),
                ("stmt", &o.failed_in.unwrap_or("?")),
                ("tries", &tries),
            ],
        ),
    }
}

async fn rule(ctx: &mut VariantCtx<'_>, isolation: &'static str, retry: bool) -> Result<()> {
    let [a, b] = ctx.open(["A", "B"]).await?;
    let (oa, ob) = pair(ctx, &a, &b, isolation, (CUSTOMER, CUSTOMER), retry, None)
        .await?
        .join(ctx)
        .await?;
    let pending = ctx
        .env
        .int(&SQL.bind("pending", &[("customer_id", &CUSTOMER)])?)
        .await?;

    ctx.metric("pending_orders", pending);
    ctx.metric("attempts", BTreeMap::from([("A", oa.attempts), ("B", ob.attempts)]));
    let (da, db) = (describe("A", &oa), describe("B", &ob));
    ctx.observe(crate::i18n::t(
        "ws.rule",
        &[("a", &da), ("b", &db), ("pending", &pending), ("customer", &CUSTOMER)],
    ));
    ctx.anomaly(pending > 1);
    let failures: Vec<&PgError> = [&oa, &ob].iter().filter_map(|o| o.result.as_ref().err()).collect();
    match (isolation, retry) {
        ("SERIALIZABLE", false) => {
            ctx.expect(oa.result == Ok(Decision::Inserted), crate::tr!("ws.first_commits"));
            ctx.expect(
                failures.len() == 1 && failures[0].code == "40001",
                crate::tr!("ws.one_40001"),
            );
            ctx.expect(pending == 1, crate::tr!("ws.one_pending"));
            if let Some(at) = ob.failed_in.or(oa.failed_in) {
                ctx.note(crate::tr!("ws.ssi_note", at = at));
            }
        }
        ("SERIALIZABLE", true) => {
            ctx.expect(failures.is_empty(), crate::tr!("ws.no_error"));
            ctx.expect(oa.attempts + ob.attempts >= 3, crate::tr!("ws.second_attempt"));
            let decisions = [oa.result.clone().ok(), ob.result.clone().ok()];
            ctx.expect(
                decisions.contains(&Some(Decision::Inserted)) && decisions.contains(&Some(Decision::SawPending(1))),
                crate::tr!("ws.retried_sees"),
            );
            ctx.expect(pending == 1, crate::tr!("ws.one_pending"));
        }
        _ => {
            ctx.expect(failures.is_empty(), crate::tr!("ws.neither_fails"));
            ctx.expect(pending == 2, crate::tr!("ws.two_pending"));
            ctx.note(crate::tr!("ws.snapshot_note", isolation = isolation));
        }
    }
    Ok(())
}

struct Part {
    /// A key of the i18n table.
    title: &'static str,
    key: &'static str,
    customers: (i64, i64),
    with_index: bool,
    expect_conflict: bool,
}

const PARTS: [Part; 3] = [
    Part {
        title: "ws.part_with_index",
        key: "with_index",
        customers: (1234, 5),
        with_index: true,
        expect_conflict: false,
    },
    Part {
        title: "ws.part_neighbours",
        key: "neighbours",
        customers: (1234, 1235),
        with_index: true,
        expect_conflict: true,
    },
    Part {
        title: "ws.part_without_index",
        key: "without_index",
        customers: (1234, 5),
        with_index: false,
        expect_conflict: true,
    },
];

async fn no_index(ctx: &mut VariantCtx<'_>) -> Result<()> {
    let [a, b] = ctx.open(["A", "B"]).await?;
    ctx.env.rows(SQL.get("fill_history")?).await?;
    ctx.env.rows(SQL.get("analyze")?).await?;
    ctx.narrate(crate::tr!("ws.setup"));

    let mut failures = BTreeMap::new();
    let mut lock_types = BTreeMap::new();
    for part in &PARTS {
        ctx.env.rows(SQL.get("clear_pending")?).await?;
        if !part.with_index {
            ctx.env.rows(SQL.get("drop_index")?).await?;
            ctx.narrate("DROP INDEX ix_orders_customer_id".to_string());
        }
        let title = crate::i18n::t(part.title, &[]);
        ctx.narrate(crate::tr!("any.part", part = title));
        // Which plan the check uses decides which predicate locks it takes.
        let plan = a
            .run(&SQL.bind("explain_check", &[("customer_id", &part.customers.0)])?)
            .await?;
        let plan_text: Vec<&str> = plan.rows.iter().filter_map(|r| r[0].as_deref()).collect();
        let uses_index = plan_text.iter().any(|l| l.contains("ix_orders_customer_id"));
        let scan = plan_text
            .iter()
            .find(|l| l.contains(" on "))
            .map_or("?", |l| l.trim().trim_start_matches("->").trim());
        ctx.narrate(crate::tr!("ws.plan", scan = scan));
        if part.with_index {
            ctx.expect(uses_index, crate::tr!("ws.reads_index", part = part.key));
        }

        let go = ctx.barrier("locks_captured", 3);
        let requests = pair(ctx, &a, &b, "SERIALIZABLE", part.customers, false, Some(go.clone())).await?;
        // The driver is the third party of both barriers: after both checks,
        // before either insert, it reads the predicate locks they hold.
        requests.checked.wait("lab").await?;
        let pids = format!("ARRAY[{}, {}]", a.pid(), b.pid());
        let locks = ctx.env.rows(&SQL.bind("siread_locks", &[("pids", &pids)])?).await?;
        go.wait("lab").await?;
        let (oa, ob) = requests.join(ctx).await?;

        let conflicts = [&oa, &ob]
            .iter()
            .filter(|o| matches!(&o.result, Err(e) if e.code == "40001"))
            .count();
        let summary = summarize_locks(&locks, a.pid(), b.pid());
        ctx.evidence_table(Evidence {
            title: crate::tr!("ws.ev_siread", part = title),
            columns: vec![
                crate::tr!("any.col_session"),
                "locktype".into(),
                "relation".into(),
                crate::tr!("ws.col_pages"),
            ],
            rows: summary.rows,
        });
        let shared = summary.shared_index_pages;
        let shared_note = match (part.with_index, shared.is_empty()) {
            (false, _) => String::new(),
            (true, true) => crate::i18n::t("ws.no_shared_page", &[]),
            (true, false) => {
                let pages = shared.iter().map(|p| p.to_string()).collect::<Vec<_>>().join(", ");
                crate::i18n::t("ws.shared_page", &[("pages", &pages)])
            }
        };
        let (da, db) = (describe("A", &oa), describe("B", &ob));
        ctx.observe(crate::i18n::t(
            "ws.part",
            &[("part", &part.key), ("a", &da), ("b", &db), ("shared", &shared_note)],
        ));
        ctx.expect(
            (conflicts == 1) == part.expect_conflict && conflicts <= 1,
            if part.expect_conflict {
                crate::tr!("ws.part_conflict", part = part.key)
            } else {
                crate::tr!("ws.part_both_commit", part = part.key)
            },
        );
        if part.key == "without_index" {
            ctx.expect(summary.types.contains("relation"), crate::tr!("ws.relation_lock"));
        }
        failures.insert(part.key, conflicts);
        lock_types.insert(part.key, summary.types.into_iter().collect::<Vec<_>>());
    }
    ctx.metric("unrelated_failures", &failures);
    ctx.metric("siread_lock_types", &lock_types);
    // How the plans were obtained: history and statistics, no planner settings.
    ctx.metric(
        "plan_setting",
        serde_json::json!({"history_rows": 20_000, "analyzed": true, "planner_settings_changed": false}),
    );
    ctx.note(crate::tr!("ws.siread_note"));
    ctx.anomaly(false);
    Ok(())
}

struct LockSummary {
    rows: Vec<Vec<String>>,
    types: BTreeSet<String>,
    shared_index_pages: BTreeSet<String>,
}

fn summarize_locks(locks: &crate::engine::Rows, pid_a: i32, pid_b: i32) -> LockSummary {
    // (session, locktype, relation) -> the pages / tuples it covers
    let mut groups: BTreeMap<(String, String, String), Vec<String>> = BTreeMap::new();
    let mut index_pages: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut types = BTreeSet::new();
    for i in 0..locks.rows.len() {
        let pid: i32 = locks.get(i, "pid").and_then(|p| p.parse().ok()).unwrap_or(0);
        let session = if pid == pid_a {
            "A"
        } else if pid == pid_b {
            "B"
        } else {
            "?"
        }
        .to_string();
        let locktype = locks.get(i, "locktype").unwrap_or("").to_string();
        let relation = locks.get(i, "relation").unwrap_or("").to_string();
        let page = locks.get(i, "page").unwrap_or("");
        let tuple = locks.get(i, "tuple").unwrap_or("");
        let at = match locktype.as_str() {
            "tuple" => format!("({page},{tuple})"),
            "page" => page.to_string(),
            _ => crate::tr!("ws.whole_relation"),
        };
        if locktype == "page" && relation == "ix_orders_customer_id" {
            index_pages.entry(session.clone()).or_default().insert(page.to_string());
        }
        types.insert(locktype.clone());
        groups.entry((session, locktype, relation)).or_default().push(at);
    }
    let rows = groups
        .into_iter()
        .map(|((s, t, r), mut at)| {
            let n = at.len();
            at.truncate(6);
            let more = if n > 6 {
                crate::tr!("ws.in_all", n = n)
            } else {
                String::new()
            };
            vec![s, t, r, format!("{}{more}", at.join(" "))]
        })
        .collect();
    let empty = BTreeSet::new();
    let shared = index_pages
        .get("A")
        .unwrap_or(&empty)
        .intersection(index_pages.get("B").unwrap_or(&empty))
        .cloned()
        .collect();
    LockSummary {
        rows,
        types,
        shared_index_pages: shared,
    }
}
