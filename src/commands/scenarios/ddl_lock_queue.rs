//! The DDL lock queue: an ALTER TABLE waiting behind a report blocks every
//! reader behind it (lab/ddl-lock-queue.spec).

use anyhow::Result;

use super::{Cx, Scenario};
use crate::engine::{ProbeQuery, StepRun};
use crate::report::millis;
use crate::specfile::Param;

pub static SCENARIO: Scenario = Scenario {
    name: "ddl-lock-queue",
    about: msg::about,
    summary: msg::summary,
    readme: "A's report holds `books`; B's `ALTER TABLE` queues for ACCESS EXCLUSIVE; C's plain SELECT queues \
             behind B (the seed's `pg_stat_activity` / `pg_blocking_pids` table). With a short `lock_timeout` B \
             gives way, C goes on, B's retry succeeds after the report.",
    spec: Some("ddl-lock-queue.spec"),
    variants: VARIANTS,
    options: None,
};

crate::variants! {
    prefix "dq";
    no_lock_timeout "no-lock-timeout" {
        expected => {
            en: "C (which does not conflict with A) is blocked by B, which is blocked by A, until the report ends",
            tr: "C (A ile çakışmadığı hâlde) B tarafından, B de A tarafından rapor bitene kadar bekletilir",
        },
        explain => {
            en: "ALTER TABLE needs ACCESS EXCLUSIVE and waits behind the report's ACCESS SHARE. Lock requests queue in order, so C's harmless read waits behind the ALTER: one migration stops all traffic on the table.",
            tr: "ALTER TABLE ACCESS EXCLUSIVE ister ve raporun ACCESS SHARE'inin arkasında bekler. Kilit istekleri sırayla kuyruğa girer, C'nin zararsız okuması ALTER'ın arkasında bekler: tek bir migration tablodaki bütün trafiği durdurur.",
        },
    }
    lock_timeout_retry "lock-timeout-retry" {
        expected => {
            en: "B sets a short lock_timeout, fails with 55P03 and pauses: C waits at most that long; B's retry succeeds once A ends",
            tr: "B kısa bir lock_timeout verir, 55P03 ile düşer ve ara verir: C en fazla o kadar bekler; A bitince B'nin tekrarı başarılı olur",
        },
        explain => {
            en: "With a short lock_timeout the migration gives up its place in the queue, readers go on, and it retries later. Always set lock_timeout for migrations.",
            tr: "Kısa bir lock_timeout ile migration kuyruktaki yerini bırakır, okuyanlar devam eder, migration sonra tekrar dener. Migration'lara her zaman lock_timeout ver.",
        },
    }
}

async fn no_lock_timeout(cx: &mut Cx<'_>) -> Result<()> {
    let queue = cx.sql("ddl-lock-queue.sql")?.get("queue")?.to_string();
    let o = cx
        .own_permutation()
        .waits("b_alter", &["A"])
        .waits("c_read", &["B"])
        .probe("queue", "c_read", ProbeQuery::Sql(queue))
        .run()
        .await?;
    // The seed's view of the queue, taken while B and C wait.
    if let Some(q) = o.probe("queue") {
        cx.evidence_sessions(msg::ev_queue(), q, &o);
    }
    let (b, c) = (o.step("b_alter")?, o.step("c_read")?);
    let c_by_b = c.waited_for() == Some(&["B".to_string()][..]);
    cx.metric("c_blocked_by_b", c_by_b);
    cx.metric("c_wait_ms", millis(c.took()));
    cx.metric("b_attempts", 1);
    let by = c.waited_for().map_or_else(|| msg::nobody().en(), |b| b.join(", "));
    cx.observe(msg::observed_queue(
        format!("{:.0}", millis(b.took())),
        by,
        format!("{:.0}", millis(c.took())),
    ));
    cx.anomaly(c_by_b);
    Ok(())
}

async fn lock_timeout_retry(cx: &mut Cx<'_>) -> Result<()> {
    let timeout = cx.opts.timeout;
    let o = cx
        .own_permutation()
        .bind("timeout", Param::millis(timeout))
        .waits_within("b_alter", &["A"], Some(timeout * 3))
        // C's wait ends with B's lock_timeout, which may fire before lab looks.
        .may_wait_within("c_read", &["B"], Some(timeout * 3))
        .run()
        .await?;
    let (first, c, again) = (o.step("b_alter")?, o.step("c_read")?, o.step("b_alter_again")?);
    let mut attempts = if first.ok() { 1 } else { 2 };
    let retried = if behind_outsider(again) {
        retry_migration(cx, &mut attempts).await?
    } else {
        again.ok()
    };
    let c_took = c.took();
    cx.metric("c_blocked_by_b", c.waited_for() == Some(&["B".to_string()][..]));
    cx.metric("c_wait_ms", millis(c_took));
    cx.metric("b_attempts", attempts);
    cx.metric("lock_timeout_ms", timeout.as_millis() as u64);
    cx.observe(msg::observed_retry(
        match first.code() {
            None => msg::first_ok(),
            Some(code) => msg::first_failed(code),
        },
        format!("{:.0}", millis(c_took)),
        if retried { msg::done() } else { msg::not_done() },
        attempts,
    ));
    cx.check(first.failed_with("55P03"), msg::first_55p03());
    // The server's lock_timeout fired: B waited at least that long (a loaded
    // machine only makes the wait longer).
    cx.check(first.took() >= timeout, msg::waited_timeout(timeout.as_millis() as u64));
    // C got its rows while A's report was still open: B's timeout let it
    // through, A's commit did not (lab sends A's COMMIT only after it).
    let through = c.ok() && c.done <= o.step("a_commit")?.sent;
    cx.check(through, msg::c_no_longer());
    cx.check(retried, msg::retry_ok());
    // What the retry was for: books has the new column, as the catalogue says.
    let columns = cx
        .env
        .int(
            "SELECT count(*) FROM information_schema.columns \
              WHERE table_schema = current_schema() AND table_name = 'books' AND column_name = 'subtitle'",
        )
        .await?;
    cx.metric("subtitle_columns", columns);
    cx.check(columns == 1, msg::column_added(columns));
    cx.anomaly(!through);
    Ok(())
}

/// The retry after A's commit timed out, and lab saw it held up only by a
/// backend that is not the scenario's (autovacuum truncating a catalogue
/// the ALTER writes, on a busy server): A's lock was not what stopped it.
fn behind_outsider(again: &StepRun) -> bool {
    again.failed_with("55P03") && !again.outsiders.is_empty() && again.waited_for().is_none_or(<[String]>::is_empty)
}

/// As a migration tool does (seed 003: pause, then try again), from a
/// session of the variant's: the ALTER with the same lock_timeout, up to
/// three more times. Whether one succeeds.
async fn retry_migration(cx: &mut Cx<'_>, attempts: &mut u32) -> Result<bool> {
    let params = [("timeout", Param::millis(cx.opts.timeout))];
    let (set, pause, alter) = (
        cx.step_sql("b_lock_timeout", &params)?,
        cx.step_sql("b_pause", &params)?,
        cx.step_sql("b_alter_again", &params)?,
    );
    let b = cx.open(&["B"]).await?.remove(0);
    b.exec("b_lock_timeout", &set).await?;
    for _ in 0..3 {
        b.exec("b_pause", &pause).await?;
        *attempts += 1;
        if b.exec_allow("b_alter_again", &alter, &["55P03"]).await?.is_ok() {
            return Ok(true);
        }
    }
    Ok(false)
}

mod msg {
    crate::messages! {
        prefix "dq";
        about() {
            en: "The DDL lock queue: ALTER TABLE behind a report blocks every reader behind it",
            tr: "DDL kilit kuyruğu: bir raporun arkasındaki ALTER TABLE, arkasındaki bütün okuyucuları bloklar",
        }
        summary() {
            en: "A's long report holds books; B's ALTER TABLE queues for ACCESS EXCLUSIVE; C's plain SELECT queues behind B",
            tr: "A'nın uzun raporu books'u tutar; B'nin ALTER TABLE'ı ACCESS EXCLUSIVE için sıraya girer; C'nin sade SELECT'i B'nin arkasına girer",
        }
        observed_queue(b, by, c) {
            en: "B waited {b} ms for A; C was blocked by {by} for {c} ms",
            tr: "B, A'yı {b} ms bekledi; C'yi {by} {c} ms bekletti",
        }
        nobody() {
            en: "nobody",
            tr: "kimse",
        }
        observed_retry(first, c, done, n) {
            en: "B's first ALTER {first}; C waited {c} ms; B {done} after {n} attempt(s)",
            tr: "B'nin ilk ALTER'ı {first}; C {c} ms bekledi; B {n} denemede {done}",
        }
        first_ok() {
            en: "succeeded",
            tr: "başarılı oldu",
        }
        first_failed(code) {
            en: "failed with {code}",
            tr: "{code} ile düştü",
        }
        done() {
            en: "succeeded",
            tr: "başarılı oldu",
        }
        not_done() {
            en: "still failed",
            tr: "yine başaramadı",
        }
        ev_queue() {
            en: "the lock queue (pg_stat_activity, pg_blocking_pids)",
            tr: "kilit kuyruğu (pg_stat_activity, pg_blocking_pids)",
        }
        first_55p03() {
            en: "B's first attempt fails with 55P03",
            tr: "B'nin ilk denemesi 55P03 ile başarısız olur",
        }
        c_no_longer() {
            en: "C gets its rows once B's lock_timeout fires, while A's report is still open",
            tr: "C, B'nin lock_timeout'u dolunca, A'nın raporu hâlâ açıkken satırlarını alır",
        }
        waited_timeout(ms) {
            en: "B's first ALTER waited at least its lock_timeout ({ms} ms) before it failed",
            tr: "B'nin ilk ALTER'ı başarısız olmadan önce en az lock_timeout'u kadar ({ms} ms) bekledi",
        }
        column_added(n) {
            en: "after the retry books has the column subtitle (read back from the catalogue: {n})",
            tr: "yeniden denemeden sonra books'ta subtitle sütunu var (katalogdan okunan: {n})",
        }
        retry_ok() {
            en: "B's retry succeeds once A has ended",
            tr: "A bittikten sonra B'nin yeniden denemesi başarılı olur",
        }
    }
}
