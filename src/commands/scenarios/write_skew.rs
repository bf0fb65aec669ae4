//! Write skew: "a customer may have at most one Pending order", checked then
//! inserted by two requests at once (lab/write-skew.spec). The plain
//! variants are the spec's permutations; the retry and the index exercise
//! run the spec's statements from code (a retry is a loop).
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use anyhow::Result;
use tokio::sync::oneshot;

use super::{Cx, Scenario};
use crate::engine::{Barrier, Deviation, Observation, PgError, Session, join_within};
use crate::i18n::{Arg, Text};
use crate::report::{Phrase, ResultSet};
use crate::retry::{RETRYABLE, RetryPolicy, Rng};
use crate::specfile::Param;

pub static SCENARIO: Scenario = Scenario {
    name: "write-skew",
    about: msg::about,
    summary: msg::summary,
    readme: "Rule: at most one Pending order per customer. Both requests check, then insert. READ COMMITTED and \
             REPEATABLE READ both insert (2 pending); SERIALIZABLE fails one with 40001 and records where it \
             surfaced; with retry the failed request re-runs the whole transaction after a jittered back-off \
             and inserts nothing. The no-index variant shows the `SIReadLock` rows: with \
             `ix_orders_customer_id` two customers both commit, neighbours on one index leaf page conflict, and \
             without the index a relation-level lock fails an unrelated request.",
    spec: Some("write-skew.spec"),
    variants: VARIANTS,
    options: None,
};

crate::variants! {
    prefix "ws";
    read_committed "read-committed" {
        expected => {
            en: "both see 0 pending and insert: 2 pending orders for the customer (anomaly)",
            tr: "ikisi de 0 bekleyen görür ve ekler: müşterinin 2 bekleyen siparişi olur (anomali)",
        },
        explain => {
            en: "Both checks run before either insert, and neither insert touches a row the other read, so nothing blocks and nothing conflicts: the rule 'at most one pending order' is broken.",
            tr: "İki kontrol de eklemelerden önce çalışır ve hiçbir ekleme diğerinin okuduğu satıra dokunmaz; bu yüzden ne bekleme ne çakışma olur: \"en fazla bir bekleyen sipariş\" kuralı delinir.",
        },
    }
    repeatable_read "repeatable-read" {
        expected => {
            en: "both insert too: no row is written by both, so snapshot isolation has nothing to detect; 2 pending (anomaly)",
            tr: "ikisi de ekler: ikisinin birden yazdığı satır yok, snapshot isolation'ın yakalayacağı bir şey yok; 2 bekleyen (anomali)",
        },
        explain => {
            en: "Snapshot isolation detects only write-write conflicts on the same row. The two inserts are different rows, so both commit: write skew.",
            tr: "Snapshot isolation yalnızca aynı satıra yapılan yazma-yazma çakışmalarını yakalar. İki ekleme farklı satırlar, ikisi de commit eder: write skew.",
        },
    }
    serializable "serializable" {
        expected => {
            en: "one commits, the other fails with 40001 (read/write dependencies among transactions); 1 pending",
            tr: "biri commit eder, diğeri 40001 ile düşer (transaction'lar arasında okuma/yazma bağımlılığı); 1 bekleyen",
        },
        explain => {
            en: "SSI tracks read/write dependencies with predicate (SIRead) locks that never block; when two transactions form a dangerous cycle, one is cancelled with 40001. Correct results need retries.",
            tr: "SSI okuma/yazma bağımlılıklarını kimseyi bekletmeyen predicate (SIRead) lock'larla izler; iki transaction tehlikeli bir döngü oluşturunca biri 40001 ile iptal edilir. Doğru sonuç retry ile gelir.",
        },
    }
    serializable_retry "serializable-retry" {
        expected => {
            en: "the failed request retries the whole transaction after a back-off, sees the pending order and inserts nothing; 1 pending",
            tr: "düşen istek bir bekleme sonrası transaction'ı baştan çalıştırır, bekleyen siparişi görür ve eklemez; 1 bekleyen",
        },
        explain => {
            en: "The failed request runs its whole transaction again after a randomised back-off; its new check sees the committed pending order, so it inserts nothing. Retry 40001 and 40P01 only, and run the read again.",
            tr: "Düşen istek rastgele bir beklemeden sonra bütün transaction'ı yeniden çalıştırır; yeni kontrolü commit edilmiş bekleyen siparişi görür, hiçbir şey eklemez. Yalnızca 40001 ve 40P01'i tekrar et, okumayı da tekrar et.",
        },
    }
    serializable_no_index "serializable-no-index" {
        expected => {
            en: "different customers under SERIALIZABLE: with ix_orders_customer_id both commit; neighbours on one index leaf page conflict (40001); without the index the relation-level predicate lock fails an unrelated request (40001)",
            tr: "SERIALIZABLE'da farklı müşteriler: ix_orders_customer_id varken ikisi de commit eder; aynı index yaprak sayfasındaki komşular çakışır (40001); index yokken ilişki seviyesindeki predicate lock ilgisiz bir isteği düşürür (40001)",
        },
        explain => {
            en: "Predicate locks follow the plan: a sequential scan locks the whole relation, so every insert conflicts with every check; an index scan locks the leaf pages it read, so only neighbouring keys conflict. The right index keeps false positives rare.",
            tr: "Predicate lock'lar planı izler: sequential scan bütün tabloyu kilitler, her ekleme her kontrolle çakışır; index scan okuduğu yaprak sayfalarını kilitler, yalnızca komşu anahtarlar çakışır. Doğru index yanlış alarmları seyrek tutar.",
        },
    }
}

const CUSTOMER: i64 = 1234;

/// What one request did, as the server answered it.
fn request_outcome(o: &Observation, who: &str) -> Result<(Text, Option<String>)> {
    let p = who.to_lowercase();
    let insert = o.step(&format!("{p}_insert"))?;
    let commit = o.step(&format!("{p}_commit"))?;
    let saw = o.step(&format!("{p}_check"))?.int("pending")?;
    Ok(match (insert.error(), commit.error()) {
        (Some(e), _) => (msg::failed(who, e.line(), "INSERT", ""), e.code.clone()),
        (None, Some(e)) => (msg::failed(who, e.line(), "COMMIT", ""), e.code.clone()),
        (None, None) => (msg::inserted_after(who, saw), None),
    })
}

/// The three plain variants: both requests check, A inserts and commits,
/// then B inserts and commits.
async fn rule(cx: &mut Cx<'_>, label: &str, level: &str) -> Result<()> {
    let o = cx.permutation(label).run().await?;
    cx.ran_under(&o, &["A", "B"], level);
    let (pa, pb) = (o.step("a_check")?.int("pending")?, o.step("b_check")?.int("pending")?);
    cx.check(pa == 0 && pb == 0, msg::both_saw_none(pa, pb));
    let pending = o.step("pending")?.int("pending")?;
    let ((da, ca), (db, cb)) = (request_outcome(&o, "A")?, request_outcome(&o, "B")?);
    cx.metric("pending_orders", pending);
    cx.metric("attempts", BTreeMap::from([("A", 1), ("B", 1)]));
    cx.observe(msg::observed_rule(da, db, pending, CUSTOMER));
    cx.anomaly(pending > 1);
    let codes: Vec<String> = [ca, cb].into_iter().flatten().collect();
    if level == "serializable" {
        cx.check(
            o.step("a_insert")?.ok() && o.step("a_commit")?.ok(),
            msg::first_commits(),
        );
        cx.check(codes == ["40001"], msg::one_40001());
        cx.check(pending == 1, msg::one_pending());
        let at = ["b_insert", "b_commit", "a_insert", "a_commit"]
            .iter()
            .find(|s| o.step(s).is_ok_and(|r| r.failed_with("40001")));
        if let Some(at) = at {
            let stmt = if at.ends_with("insert") { "INSERT" } else { "COMMIT" };
            cx.note(msg::ssi_note(stmt));
        }
    } else {
        cx.check(codes.is_empty(), msg::neither_fails());
        cx.check(pending == 2, msg::two_pending());
        if codes.is_empty() && pending == 2 {
            cx.note(msg::snapshot_note(level.to_uppercase()));
        }
    }
    Ok(())
}

async fn read_committed(cx: &mut Cx<'_>) -> Result<()> {
    rule(cx, "read-committed", "read committed").await
}

async fn repeatable_read(cx: &mut Cx<'_>) -> Result<()> {
    rule(cx, "repeatable-read", "repeatable read").await
}

async fn serializable(cx: &mut Cx<'_>) -> Result<()> {
    rule(cx, "serializable", "serializable").await
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

/// A request's statements: the spec's steps, bound to its customer.
#[derive(Clone)]
struct Statements {
    prefix: &'static str,
    begin: String,
    check: String,
    insert: String,
}

impl Statements {
    fn new(cx: &mut Cx<'_>, prefix: &'static str, customer: i64) -> Result<Statements> {
        let order_no = format!("BK-T{}{customer}", prefix.to_uppercase());
        let c = [("customer", Param::Num(customer as f64))];
        Ok(Statements {
            prefix,
            begin: cx.step_sql(&format!("{prefix}_begin_s"), &[])?,
            check: cx.step_sql(&format!("{prefix}_check"), &c)?,
            insert: cx.step_sql(
                &format!("{prefix}_insert"),
                &[
                    ("customer", Param::Num(customer as f64)),
                    ("order_no", Param::Str(order_no)),
                ],
            )?,
        })
    }

    fn step(&self, what: &str) -> String {
        format!("{}_{what}", self.prefix)
    }
}

/// Whose turn it is: the requests run concurrently, but A checks before B
/// and A writes before B, so the timeline, and where a 40001 surfaces, are
/// the same on every run. Both still check before either writes.
#[derive(Default)]
struct Turns {
    /// B waits for A's check before its own BEGIN...
    check_after: Option<oneshot::Receiver<()>>,
    checked: Option<oneshot::Sender<()>>,
    /// ... and for A's transaction to end before writing.
    write_after: Option<oneshot::Receiver<()>>,
    written: Option<oneshot::Sender<()>>,
}

/// One request: BEGIN; check; (first attempt: wait at the barrier, then for
/// its turn); insert if none pending; COMMIT. Retried as a whole on 40001 when
/// `retry` is set.
struct Request {
    session: Session,
    sql: Statements,
    /// Both requests have checked.
    checked: Arc<Barrier>,
    /// The driver has looked at the locks (only when it takes part).
    go: Option<Arc<Barrier>>,
    turns: Turns,
    policy: RetryPolicy,
}

type Turn = Arc<Mutex<Turns>>;

impl Request {
    async fn run(self) -> Result<Outcome> {
        let s = self.session.clone();
        let failed_in: Arc<Mutex<Option<&'static str>>> = Arc::default();
        let turn: Turn = Arc::new(Mutex::new(self.turns));
        let (sql, checked, go) = (self.sql, self.checked, self.go);
        let mut rng = Rng::from_entropy(s.name());
        let attempted = self
            .policy
            .run(&s, &mut rng, |attempt| {
                let (s, failed_in, turn, checked, go, sql) = (
                    s.clone(),
                    failed_in.clone(),
                    turn.clone(),
                    checked.clone(),
                    go.clone(),
                    sql.clone(),
                );
                async move {
                    let r = attempt_once(&s, attempt, &sql, &checked, go.as_deref(), &turn, &failed_in).await;
                    // Whatever happened, the first attempt lets the other request go on
                    // (a dropped sender lets it go on too).
                    let mut t = turn.lock().unwrap();
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
            s.exec("rollback", "ROLLBACK").await?;
        }
        let failed_in = *failed_in.lock().unwrap();
        Ok(Outcome {
            attempts: attempted.attempts,
            result: attempted.result,
            failed_in,
        })
    }
}

/// Waits for the other request's signal (or its end: a dropped sender),
/// within the run's deadline.
async fn await_turn(s: &Session, rx: Option<oneshot::Receiver<()>>) {
    if let Some(rx) = rx {
        let _ = tokio::time::timeout(s.deadline(), rx).await;
    }
}

async fn attempt_once(
    s: &Session,
    attempt: u32,
    sql: &Statements,
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
        await_turn(s, rx).await;
    }
    s.exec(&sql.step("begin_s"), &sql.begin).await?;
    let pending = match s.exec_allow(&sql.step("check"), &sql.check, RETRYABLE).await? {
        // A check that returns no count is the server answering something else.
        Ok(r) => crate::engine::answer::last_set(&r)
            .and_then(|set| crate::engine::answer::int_of(set, "pending"))
            .ok_or_else(|| Deviation(crate::engine::msg::no_int(s.at(&sql.check), "pending")))?,
        Err(e) => return fail("SELECT", e),
    };
    if attempt == 1 {
        if let Some(tx) = turn.lock().unwrap().checked.take() {
            let _ = tx.send(());
        }
        checked.wait(s.name()).await?;
        if let Some(go) = go {
            go.wait(s.name()).await?;
        }
        let rx = turn.lock().unwrap().write_after.take();
        await_turn(s, rx).await;
    }
    if pending > 0 {
        s.note(msg::saw_note(pending));
        return match s.exec_allow(&sql.step("commit"), "COMMIT", RETRYABLE).await? {
            Ok(_) => Ok(Ok(Decision::SawPending(pending))),
            Err(e) => fail("COMMIT", e),
        };
    }
    s.note(msg::saw_none_note());
    if let Err(e) = s.exec_allow(&sql.step("insert"), &sql.insert, RETRYABLE).await? {
        return fail("INSERT", e);
    }
    match s.exec_allow(&sql.step("commit"), "COMMIT", RETRYABLE).await? {
        Ok(_) => Ok(Ok(Decision::Inserted)),
        Err(e) => fail("COMMIT", e),
    }
}

struct Pair {
    a: tokio::task::JoinHandle<Result<Outcome>>,
    b: tokio::task::JoinHandle<Result<Outcome>>,
    checked: Arc<Barrier>,
}

/// Starts A and B (A's writes first), both checking before either writes.
fn pair(
    cx: &mut Cx<'_>,
    sessions: (&Session, &Session),
    customers: (i64, i64),
    retry: bool,
    go: Option<Arc<Barrier>>,
) -> Result<Pair> {
    let checked = cx.barrier("both_checked", if go.is_some() { 3 } else { 2 });
    let (checked_tx, checked_rx) = oneshot::channel();
    let (written_tx, written_rx) = oneshot::channel();
    let policy = if retry {
        cx.opts.retry
    } else {
        RetryPolicy {
            max_attempts: 1,
            ..cx.opts.retry
        }
    };
    let ra = Request {
        session: sessions.0.clone(),
        sql: Statements::new(cx, "a", customers.0)?,
        checked: checked.clone(),
        go: go.clone(),
        turns: Turns {
            checked: Some(checked_tx),
            written: Some(written_tx),
            ..Turns::default()
        },
        policy,
    };
    let rb = Request {
        session: sessions.1.clone(),
        sql: Statements::new(cx, "b", customers.1)?,
        checked: checked.clone(),
        go,
        turns: Turns {
            check_after: Some(checked_rx),
            write_after: Some(written_rx),
            ..Turns::default()
        },
        policy,
    };
    Ok(Pair {
        a: tokio::spawn(ra.run()),
        b: tokio::spawn(rb.run()),
        checked,
    })
}

impl Pair {
    async fn join(self, cx: &Cx<'_>) -> Result<(Outcome, Outcome)> {
        let deadline = cx.env.wait_timeout * 2;
        let a = join_within(deadline, msg::session_task("A"), self.a).await?;
        let b = join_within(deadline, msg::session_task("B"), self.b).await?;
        Ok((a, b))
    }
}

fn describe(who: &str, o: &Outcome) -> Text {
    let tries: Arg = if o.attempts > 1 {
        msg::attempt(o.attempts).into()
    } else {
        "".into()
    };
    match &o.result {
        Ok(Decision::Inserted) => msg::inserted(who, tries),
        Ok(Decision::SawPending(n)) => msg::saw(who, *n, tries),
        Err(e) => msg::failed(who, e.line(), o.failed_in.unwrap_or("?"), tries),
    }
}

async fn serializable_retry(cx: &mut Cx<'_>) -> Result<()> {
    let sessions = cx.open(&["A", "B"]).await?;
    let (oa, ob) = pair(cx, (&sessions[0], &sessions[1]), (CUSTOMER, CUSTOMER), true, None)?
        .join(cx)
        .await?;
    let pending = cx
        .env
        .int(
            &cx.sql("write-skew.sql")?
                .bind("pending", &[("customer_id", &CUSTOMER)])?,
        )
        .await?;
    cx.metric("pending_orders", pending);
    cx.metric("attempts", BTreeMap::from([("A", oa.attempts), ("B", ob.attempts)]));
    cx.observe(msg::observed_rule(
        describe("A", &oa),
        describe("B", &ob),
        pending,
        CUSTOMER,
    ));
    cx.ran_under_all("serializable");
    cx.anomaly(pending > 1);
    let failures = [&oa, &ob].iter().filter(|o| o.result.is_err()).count();
    cx.check(failures == 0, msg::no_error());
    cx.check(oa.attempts + ob.attempts >= 3, msg::second_attempt());
    let decisions = [oa.result.clone().ok(), ob.result.clone().ok()];
    cx.check(
        decisions.contains(&Some(Decision::Inserted)) && decisions.contains(&Some(Decision::SawPending(1))),
        msg::retried_sees(),
    );
    cx.check(pending == 1, msg::one_pending());
    Ok(())
}

struct Part {
    title: fn() -> Text,
    key: &'static str,
    customers: (i64, i64),
    with_index: bool,
    expect_conflict: bool,
}

const PARTS: [Part; 3] = [
    Part {
        title: msg::part_with_index,
        key: "with_index",
        customers: (1234, 5),
        with_index: true,
        expect_conflict: false,
    },
    Part {
        title: msg::part_neighbours,
        key: "neighbours",
        customers: (1234, 1235),
        with_index: true,
        expect_conflict: true,
    },
    Part {
        title: msg::part_without_index,
        key: "without_index",
        customers: (1234, 5),
        with_index: false,
        expect_conflict: true,
    },
];

async fn serializable_no_index(cx: &mut Cx<'_>) -> Result<()> {
    let sql = cx.sql("write-skew.sql")?;
    let sessions = cx.open(&["A", "B"]).await?;
    let (a, b) = (&sessions[0], &sessions[1]);
    cx.env.rows(sql.get("fill_history")?).await?;
    cx.env.rows(sql.get("analyze")?).await?;
    cx.narrate(msg::setup());

    let mut failures = BTreeMap::new();
    let mut lock_types = BTreeMap::new();
    for part in &PARTS {
        cx.env.rows(sql.get("clear_pending")?).await?;
        if !part.with_index {
            cx.env.rows(sql.get("drop_index")?).await?;
            cx.narrate(msg::dropped_index());
        }
        let title = (part.title)();
        cx.narrate(msg::part(title.clone()));
        // Which plan the check uses decides which predicate locks it takes.
        let explain = sql.bind("explain_check", &[("customer_id", &part.customers.0)])?;
        let plan = a.rows("explain_check", &explain).await?;
        let lines: Vec<&str> = plan.rows.iter().filter_map(|r| r[0].as_deref()).collect();
        let uses_index = lines.iter().any(|l| l.contains("ix_orders_customer_id"));
        let scan = lines
            .iter()
            .find(|l| l.contains(" on "))
            .map_or("?", |l| l.trim().trim_start_matches("->").trim());
        cx.narrate(msg::plan(scan));
        if part.with_index {
            cx.check(uses_index, msg::reads_index(part.key));
        }

        let go = cx.barrier("locks_captured", 3);
        let requests = pair(cx, (a, b), part.customers, false, Some(go.clone()))?;
        // The driver is the third party of both barriers: after both checks,
        // before either insert, it reads the predicate locks they hold.
        requests.checked.wait("lab").await?;
        // Behind a transaction pooler: the backends their open transactions run on.
        crate::engine::session::refresh_pids(&cx.env.control, &[a.clone(), b.clone()])
            .await
            .map_err(anyhow::Error::from)?;
        let pids = format!("ARRAY[{}, {}]", a.pid(), b.pid());
        let locks = cx.env.rows(&sql.bind("siread_locks", &[("pids", &pids)])?).await?;
        go.wait("lab").await?;
        let (oa, ob) = requests.join(cx).await?;

        let conflicts = [&oa, &ob]
            .iter()
            .filter(|o| matches!(&o.result, Err(e) if e.is("40001")))
            .count();
        let summary = summarize_locks(&locks, a.pid(), b.pid());
        cx.evidence(
            msg::ev_siread(title.clone()),
            vec![
                crate::i18n::ui::col_session().into(),
                Phrase::Plain("locktype".into()),
                Phrase::Plain("relation".into()),
                msg::col_pages().into(),
            ],
            summary.rows,
        );
        let shared: Arg = match (part.with_index, summary.shared_index_pages.is_empty()) {
            (false, _) => "".into(),
            (true, true) => msg::no_shared_page().into(),
            (true, false) => {
                msg::shared_page(summary.shared_index_pages.into_iter().collect::<Vec<_>>().join(", ")).into()
            }
        };
        cx.observe(msg::observed_part(
            part.key,
            describe("A", &oa),
            describe("B", &ob),
            shared,
        ));
        cx.check(
            (conflicts == 1) == part.expect_conflict && conflicts <= 1,
            if part.expect_conflict {
                msg::part_conflict(part.key)
            } else {
                msg::part_both_commit(part.key)
            },
        );
        if part.key == "without_index" {
            cx.check(summary.types.contains("relation"), msg::relation_lock());
        }
        failures.insert(part.key, conflicts);
        lock_types.insert(part.key, summary.types.into_iter().collect::<Vec<_>>());
    }
    cx.metric("unrelated_failures", &failures);
    cx.metric("siread_lock_types", &lock_types);
    // How the plans were obtained: history and statistics, no planner settings.
    cx.metric(
        "plan_setting",
        serde_json::json!({"history_rows": 20_000, "analyzed": true, "planner_settings_changed": false}),
    );
    cx.ran_under_all("serializable");
    cx.note(msg::siread_note());
    cx.anomaly(false);
    Ok(())
}

struct LockSummary {
    rows: Vec<Vec<Phrase>>,
    types: BTreeSet<String>,
    shared_index_pages: BTreeSet<String>,
}

fn summarize_locks(locks: &ResultSet, pid_a: i32, pid_b: i32) -> LockSummary {
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
            _ => "-".to_string(),
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
            let shown = if at == ["-"] {
                Phrase::Text(msg::whole_relation())
            } else if n > 6 {
                Phrase::Text(msg::in_all(at.join(" "), n))
            } else {
                Phrase::Plain(at.join(" "))
            };
            vec![Phrase::Plain(s), Phrase::Plain(t), Phrase::Plain(r), shown]
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

mod msg {
    crate::messages! {
        prefix "ws";
        about() {
            en: "Write skew: \"at most one pending order per customer\" under each isolation level, with retry",
            tr: "Write skew: her isolation level'da \"müşteri başına en fazla bir bekleyen sipariş\", yeniden denemeyle",
        }
        summary() {
            en: "two requests each check \"no Pending order yet\" for a customer, then both insert one",
            tr: "iki istek bir müşteri için \"henüz bekleyen sipariş yok\" diye kontrol eder, sonra ikisi de birer sipariş ekler",
        }
        inserted(who, tries) {
            en: "{who} inserted{tries}",
            tr: "{who} ekledi{tries}",
        }
        inserted_after(who, n) {
            en: "{who} saw {n} pending and inserted",
            tr: "{who} {n} bekleyen gördü ve ekledi",
        }
        saw(who, n, tries) {
            en: "{who} saw {n} pending, inserted nothing{tries}",
            tr: "{who} {n} bekleyen gördü, eklemedi{tries}",
        }
        failed(who, error, stmt, tries) {
            en: "{who} failed at {stmt}: {error}{tries}",
            tr: "{who} {stmt} sırasında başarısız oldu: {error}{tries}",
        }
        attempt(n) {
            en: " (attempt {n})",
            tr: " ({n}. deneme)",
        }
        observed_rule(a, b, pending, customer) {
            en: "{a}; {b}; {pending} pending for customer {customer}",
            tr: "{a}; {b}; {customer} numaralı müşterinin {pending} bekleyen siparişi var",
        }
        observed_part(part, a, b, shared) {
            en: "{part}: {a}, {b}{shared}",
            tr: "{part}: {a}, {b}{shared}",
        }
        no_shared_page() {
            en: " (no shared index page)",
            tr: " (ortak index sayfası yok)",
        }
        shared_page(pages) {
            en: " (both hold index page {pages})",
            tr: " (ikisi de {pages} numaralı index sayfasını tutuyor)",
        }
        saw_note(n) {
            en: "saw {n} pending order(s): nothing inserted",
            tr: "{n} bekleyen sipariş gördü: hiçbir şey eklemedi",
        }
        saw_none_note() {
            en: "saw 0 pending orders: inserting one",
            tr: "0 bekleyen sipariş gördü: bir tane ekliyor",
        }
        both_saw_none(a, b) {
            en: "both checks see 0 pending orders (A saw {a}, B saw {b})",
            tr: "iki kontrol de 0 bekleyen sipariş görür (A {a}, B {b} gördü)",
        }
        first_commits() {
            en: "the first request commits its order",
            tr: "ilk istek siparişini commit eder",
        }
        one_40001() {
            en: "exactly one request fails, with 40001",
            tr: "tam olarak bir istek, 40001 ile başarısız olur",
        }
        one_pending() {
            en: "1 pending order",
            tr: "1 bekleyen sipariş",
        }
        ssi_note(at) {
            en: "The 40001 surfaced at the {at}: SSI detects the read/write dependency cycle when the second writer writes into what the first had read (or at commit when both are still running), and cancels the one that would complete it.",
            tr: "40001 {at} sırasında çıktı: SSI, ikinci yazan birincinin okuduğu yere yazdığında (ya da ikisi de sürerken commit anında) okuma/yazma bağımlılık döngüsünü fark eder ve döngüyü tamamlayacak olanı iptal eder.",
        }
        no_error() {
            en: "no request ends in an error (the failed one is retried)",
            tr: "hiçbir istek hatayla bitmez (başarısız olan yeniden denenir)",
        }
        second_attempt() {
            en: "one request needs a second attempt",
            tr: "bir istek ikinci bir denemeye ihtiyaç duyar",
        }
        retried_sees() {
            en: "one inserts; the retried one sees 1 pending and inserts nothing",
            tr: "biri ekler; yeniden denenen 1 bekleyen görür ve hiçbir şey eklemez",
        }
        neither_fails() {
            en: "neither request fails",
            tr: "iki istek de başarısız olmaz",
        }
        two_pending() {
            en: "2 pending orders: the rule is broken",
            tr: "2 bekleyen sipariş: kural çiğnendi",
        }
        snapshot_note(isolation) {
            en: "{isolation}: each request's check saw a snapshot without the other's insert, and the two inserts touch different rows, so nothing conflicts.",
            tr: "{isolation}: her isteğin kontrolü diğerinin eklemesini içermeyen bir snapshot gördü ve iki ekleme farklı satırlara dokunuyor, bu yüzden hiçbir şey çakışmıyor.",
        }
        part(part) {
            en: "part: {part}",
            tr: "bölüm: {part}",
        }
        part_with_index() {
            en: "with ix_orders_customer_id, customers 1234 and 5",
            tr: "ix_orders_customer_id ile, 1234 ve 5 numaralı müşteriler",
        }
        part_neighbours() {
            en: "with ix_orders_customer_id, neighbours 1234 and 1235 (same index leaf page)",
            tr: "ix_orders_customer_id ile, komşu 1234 ve 1235 (aynı index yaprak sayfası)",
        }
        part_without_index() {
            en: "without the index, customers 1234 and 5",
            tr: "index olmadan, 1234 ve 5 numaralı müşteriler",
        }
        setup() {
            en: "setup: 20 000 orders of history over 2 000 customers (10 each), ANALYZE orders",
            tr: "hazırlık: 2 000 müşteriye (her birine 10) dağılmış 20 000 sipariş geçmişi, ANALYZE orders",
        }
        dropped_index() {
            en: "DROP INDEX ix_orders_customer_id",
            tr: "DROP INDEX ix_orders_customer_id",
        }
        plan(scan) {
            en: "the check's plan: {scan}",
            tr: "kontrolün planı: {scan}",
        }
        reads_index(part) {
            en: "{part}: the check reads through ix_orders_customer_id",
            tr: "{part}: kontrol ix_orders_customer_id üzerinden okur",
        }
        ev_siread(part) {
            en: "SIReadLock rows after both checks — {part}",
            tr: "iki kontrolden sonra SIReadLock satırları — {part}",
        }
        col_pages() {
            en: "pages / tuples",
            tr: "sayfalar / tuple'lar",
        }
        part_conflict(part) {
            en: "{part}: one request fails with 40001",
            tr: "{part}: bir istek 40001 ile başarısız olur",
        }
        part_both_commit(part) {
            en: "{part}: both commit",
            tr: "{part}: ikisi de commit eder",
        }
        relation_lock() {
            en: "without the index the check takes a relation-level SIReadLock",
            tr: "index olmadan kontrol relation düzeyinde bir SIReadLock alır",
        }
        siread_note() {
            en: "SSI records what each transaction read as SIRead predicate locks: a sequential scan locks the whole relation, an index scan locks the B-tree leaf pages it visited and the heap tuples it read. An INSERT conflicts with a reader whose lock covers where the new row or index entry lands, so without the index every insert conflicts with every check, and with it only keys that share a leaf page do (a false positive, but rare).",
            tr: "SSI her transaction'ın okuduklarını SIRead predicate lock olarak kaydeder: sequential scan bütün relation'ı kilitler, index scan ise gezdiği B-tree yaprak sayfalarını ve okuduğu heap tuple'larını. Bir INSERT, kilidi yeni satırın ya da index girdisinin düştüğü yeri kapsayan bir okuyucuyla çakışır; bu yüzden index olmadan her ekleme her kontrolle çakışır, index varken yalnızca aynı yaprak sayfasını paylaşan anahtarlar çakışır (yanlış pozitif, ama nadir).",
        }
        whole_relation() {
            en: "whole relation",
            tr: "bütün relation",
        }
        in_all(shown, n) {
            en: "{shown} … ({n} in all)",
            tr: "{shown} … (toplam {n})",
        }
        session_task(session) {
            en: "write-skew: session {session}",
            tr: "write-skew: {session} oturumu",
        }
    }
}
