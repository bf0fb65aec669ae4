//! Deadlock: two sessions reserve two books in opposite orders (lab/deadlock.spec).
use anyhow::Result;

use super::{Cx, Scenario};
use crate::report::millis;
use crate::specfile::Param;

pub static SCENARIO: Scenario = Scenario {
    name: "deadlock",
    about: msg::about,
    summary: msg::summary,
    readme: "Two stock rows locked in opposite orders: after `deadlock_timeout` (read from the server) one session \
             gets 40P01, its COMMIT comes back as ROLLBACK, the DETAIL says who waited for whom. In `book_id` \
             order B just waits.",
    spec: Some("deadlock.spec"),
    variants: VARIANTS,
    options: None,
};

crate::variants! {
    prefix "dl";
    reverse_order "reverse-order" {
        expected => {
            en: "after deadlock_timeout one fails with 40P01 (DETAIL: who waits for whom); its COMMIT comes back as ROLLBACK; the other commits",
            tr: "deadlock_timeout sonrası biri 40P01 alır (DETAIL: kim kimi bekliyor); onun COMMIT'i ROLLBACK döner; diğeri commit eder",
        },
        explain => {
            en: "Each session holds one row and waits for the other's. After deadlock_timeout the waiting backend runs the deadlock detector, finds the cycle and cancels a transaction (40P01); that transaction is aborted, so its COMMIT rolls back. Lock rows in one agreed order (e.g. by book_id).",
            tr: "Her oturum bir satırı tutar ve diğerininkini bekler. deadlock_timeout sonrası bekleyen backend deadlock dedektörünü çalıştırır, döngüyü bulur ve bir transaction'ı iptal eder (40P01); o transaction iptal edildiği için COMMIT'i ROLLBACK olur. Satırları her yerde aynı sırada kilitle (ör. book_id sırasıyla).",
        },
    }
    same_order "same-order" {
        expected => {
            en: "both lock in book_id order: B simply waits for A; no deadlock; both commit",
            tr: "ikisi de book_id sırasıyla kilitler: B yalnızca A'yı bekler; deadlock yok; ikisi de commit eder",
        },
        explain => {
            en: "Locking in the same order turns the cycle into a queue: B simply waits for A, then goes on.",
            tr: "Aynı sırada kilitlemek döngüyü bir kuyruğa çevirir: B yalnızca A'yı bekler, sonra devam eder.",
        },
    }
}

/// How many copies of books 1 and 2 are reserved, from the `reserved` step.
fn reserved(o: &crate::engine::Observation) -> Result<(String, String)> {
    let rows = o.step("reserved")?.rows()?;
    let at = |i| rows.get(i, "quantity_reserved").unwrap_or("?").to_string();
    Ok((at(0), at(1)))
}

async fn reverse_order(cx: &mut Cx<'_>) -> Result<()> {
    let timeout = cx.env.deadlock_timeout;
    let timeout_ms = timeout.as_millis() as i64;
    cx.metric("deadlock_timeout_ms", timeout_ms);
    // Each session waits for the other until the detector runs: that takes
    // deadlock_timeout, and lab lets the server have the whole deadline.
    let o = cx
        .own_permutation()
        .bind("b_deadlock_timeout", Param::millis(timeout * 2))
        .waits("a_reserve_2", &["B"])
        .waits("b_reserve_1", &["A"])
        .run()
        .await?;
    cx.ran_under(&o, &["A", "B"], "read committed");
    if let Some(e) = o.step("b_slow_detector")?.error() {
        // Not a superuser: the detector may then run in either session first.
        cx.note(msg::no_timeout_note(e.line()));
    }
    let victims: Vec<(&str, &crate::engine::StepRun)> = [("A", o.step("a_reserve_2")?), ("B", o.step("b_reserve_1")?)]
        .into_iter()
        .filter(|(_, s)| s.failed_with("40P01"))
        .collect();
    let errors = ["a_reserve_2", "b_reserve_1"]
        .iter()
        .filter_map(|s| o.step(s).ok()?.error())
        .count();
    cx.check(victims.len() == 1 && errors == 1, msg::one_40p01());
    let (r1, r2) = reserved(&o)?;
    cx.check(r1 == "1" && r2 == "1", msg::reserved_once(&r1, &r2));
    match victims.first() {
        Some((victim, step)) => {
            // From the victim's wait starting to its error: deadlock_timeout plus the detector's work.
            let detect_ms = millis(step.took());
            cx.metric("victim", victim);
            cx.metric("detect_ms", detect_ms);
            let commit = if *victim == "A" { "a_commit" } else { "b_commit" };
            let rolled_back = o.step(commit)?.results()?.last().is_some_and(|r| r.tag == "ROLLBACK");
            cx.check(rolled_back, msg::commit_rolls_back(*victim));
            cx.observe(msg::observed_victim(*victim, format!("{detect_ms:.0}"), timeout_ms));
            if let Some(detail) = step.error().and_then(|e| e.detail.as_deref()) {
                cx.note(msg::server_detail(o.name_processes(detail)));
            }
            cx.check(detect_ms + 50.0 >= timeout_ms as f64, msg::not_sooner());
        }
        None => {
            cx.metric("victim", serde_json::Value::Null);
            cx.observe(msg::observed_none());
        }
    }
    cx.anomaly(false);
    Ok(())
}

async fn same_order(cx: &mut Cx<'_>) -> Result<()> {
    let o = cx.own_permutation().waits("b_reserve_1", &["A"]).run().await?;
    cx.ran_under(&o, &["A", "B"], "read committed");
    let (r1, r2) = reserved(&o)?;
    cx.metric("victim", serde_json::Value::Null);
    let b = o.step("b_reserve_1")?;
    cx.observe(msg::observed_same(super::context::waited_for(b.waited()), &r1, &r2));
    cx.check(o.sqlstates().is_empty() && r1 == "2" && r2 == "2", msg::both_commit());
    cx.anomaly(false);
    Ok(())
}

mod msg {
    crate::messages! {
        prefix "dl";
        about() {
            en: "Deadlock: two sessions update two rows in opposite orders, and the fix",
            tr: "Deadlock: iki oturum iki satırı ters sırada günceller, ve çözümü",
        }
        summary() {
            en: "A and B each update two stock rows; in opposite orders the deadlock detector cancels one",
            tr: "A ve B ikişer stok satırı günceller; ters sırada deadlock dedektörü birini iptal eder",
        }
        observed_victim(victim, ms, timeout) {
            en: "{victim} was cancelled with 40P01 after waiting {ms} ms (deadlock_timeout {timeout} ms); the other went on",
            tr: "{victim} {ms} ms bekledikten sonra 40P01 ile iptal edildi (deadlock_timeout {timeout} ms); diğeri devam etti",
        }
        observed_none() {
            en: "no session failed",
            tr: "hiçbir oturum düşmedi",
        }
        observed_same(waited, r1, r2) {
            en: "B {waited} A; books 1 and 2 reserved {r1} and {r2} times",
            tr: "B, A'yı {waited}; 1 ve 2 numaralı kitaplar {r1} ve {r2} kez ayrıldı",
        }
        no_timeout_note(error) {
            en: "B could not lengthen its deadlock_timeout ({error}), so which session the detector cancels can vary run to run",
            tr: "B deadlock_timeout'unu uzatamadı ({error}), bu yüzden dedektörün hangi oturumu iptal ettiği çalıştırmadan çalıştırmaya değişebilir",
        }
        one_40p01() {
            en: "exactly one session fails, with 40P01",
            tr: "tam olarak bir oturum, 40P01 ile başarısız olur",
        }
        reserved_once(r1, r2) {
            en: "each book reserved exactly once: the survivor's work; the victim's rolled back (reserved {r1} and {r2})",
            tr: "her kitap tam bir kez ayrıldı: hayatta kalanın işi; kurbanınki geri alındı ({r1} ve {r2} ayrıldı)",
        }
        commit_rolls_back(victim) {
            en: "{victim}'s COMMIT comes back as ROLLBACK",
            tr: "{victim} oturumunun COMMIT'i ROLLBACK olarak döner",
        }
        server_detail(detail) {
            en: "server DETAIL: {detail}",
            tr: "sunucu DETAIL: {detail}",
        }
        not_sooner() {
            en: "the deadlock is detected no sooner than deadlock_timeout",
            tr: "deadlock, deadlock_timeout'tan önce fark edilmez",
        }
        both_commit() {
            en: "no error; both commit: each book reserved twice",
            tr: "hata yok; ikisi de commit eder: her kitap iki kez ayrıldı",
        }
    }
}
