//! READ COMMITTED re-checks a waiting statement's WHERE on the updated row (lab/rc-recheck.spec).
use anyhow::Result;

use super::{Cx, Scenario};

pub static SCENARIO: Scenario = Scenario {
    name: "rc-recheck",
    about: msg::about,
    summary: msg::summary,
    readme: "`hits = hits + 1` against `DELETE ... WHERE hits = 10`: under READ COMMITTED the waiting DELETE \
             re-checks the new row and deletes nothing; under REPEATABLE READ it fails with 40001.",
    spec: Some("rc-recheck.spec"),
    variants: VARIANTS,
    options: None,
};

crate::variants! {
    prefix "rc";
    read_committed "read-committed" {
        expected => {
            en: "B's DELETE waits for A, re-checks the updated row (hits = 11) and deletes nothing (anomaly)",
            tr: "B'nin DELETE'i A'yı bekler, güncellenmiş satırı (hits = 11) yeniden kontrol eder ve hiçbir şey silmez (anomali)",
        },
        explain => {
            en: "The waiting DELETE re-evaluates its WHERE against the row version A committed (EvalPlanQual). hits is now 11, so nothing matches, though hits = 10 held before and after from each session's own point of view.",
            tr: "Bekleyen DELETE, WHERE'ini A'nın commit ettiği satır sürümüne karşı yeniden değerlendirir (EvalPlanQual). hits artık 11, hiçbir şey eşleşmez; oysa her oturumun kendi bakışından hits = 10 önce de sonra da vardı.",
        },
    }
    repeatable_read "repeatable-read" {
        expected => {
            en: "B's DELETE waits for A, then fails with 40001 instead of silently deleting nothing",
            tr: "B'nin DELETE'i A'yı bekler, sonra sessizce hiçbir şey silmemek yerine 40001 ile düşer",
        },
        explain => {
            en: "Under REPEATABLE READ the DELETE may not act on a row changed after its snapshot: it fails with 40001 and the application retries, instead of silently deleting nothing.",
            tr: "REPEATABLE READ'de DELETE, snapshot'ından sonra değişmiş bir satıra dokunamaz: sessizce hiçbir şey silmemek yerine 40001 ile düşer ve uygulama tekrar eder.",
        },
    }
}

/// Runs the permutation; B's DELETE waits for A's hit. Returns B's DELETE
/// outcome and what the table holds afterwards.
async fn recheck(cx: &mut Cx<'_>, label: &str, b_level: &str) -> Result<(Option<String>, u64, String)> {
    let o = cx.permutation(label).waits("b_delete_tens", &["A"]).run().await?;
    cx.ran_under(&o, &["A"], "read committed");
    cx.ran_under(&o, &["B"], b_level);
    let delete = o.step("b_delete_tens")?;
    let rows = o.step("rows")?.rows()?;
    let hits = rows.get(0, "hits").unwrap_or("-").to_string();
    let deleted = if delete.ok() { delete.count()? } else { 0 };
    cx.metric("deleted_rows", deleted);
    match delete.error() {
        None => cx.observe(msg::observed_ok(deleted, &hits)),
        Some(e) => cx.observe(msg::observed_failed(e.line(), &hits)),
    }
    cx.check(rows.rows.len() == 1 && hits == "11", msg::row_remains());
    Ok((delete.code().map(str::to_string), deleted, hits))
}

async fn read_committed(cx: &mut Cx<'_>) -> Result<()> {
    let (code, deleted, hits) = recheck(cx, "read-committed", "read committed").await?;
    cx.check(code.is_none() && deleted == 0, msg::zero_rows());
    if code.is_none() && deleted == 0 && hits == "11" {
        cx.note(msg::epq_note());
    }
    cx.anomaly(code.is_none() && deleted == 0);
    Ok(())
}

async fn repeatable_read(cx: &mut Cx<'_>) -> Result<()> {
    let (code, _, _) = recheck(cx, "repeatable-read", "repeatable read").await?;
    cx.check(code.as_deref() == Some("40001"), msg::b_40001());
    cx.anomaly(code.is_none());
    Ok(())
}

mod msg {
    crate::messages! {
        prefix "rc";
        about() {
            en: "The READ COMMITTED re-check: hits = hits + 1 against DELETE ... WHERE hits = 10",
            tr: "READ COMMITTED yeniden kontrolü: DELETE ... WHERE hits = 10'a karşı hits = hits + 1",
        }
        summary() {
            en: "hits = hits + 1 against DELETE ... WHERE hits = 10 (the PostgreSQL manual's example)",
            tr: "hits = hits + 1'e karşı DELETE ... WHERE hits = 10 (PostgreSQL belgelerindeki örnek)",
        }
        observed_ok(n, hits) {
            en: "B's DELETE deleted {n} row(s); hits is now {hits}",
            tr: "B'nin DELETE'i {n} satır sildi; hits şimdi {hits}",
        }
        observed_failed(error, hits) {
            en: "B's DELETE failed: {error}; hits is now {hits}",
            tr: "B'nin DELETE'i başarısız oldu: {error}; hits şimdi {hits}",
        }
        row_remains() {
            en: "the row remains with hits = 11",
            tr: "satır hits = 11 ile kalır",
        }
        b_40001() {
            en: "B fails with 40001",
            tr: "B 40001 ile başarısız olur",
        }
        zero_rows() {
            en: "B deletes 0 rows, without error",
            tr: "B hatasız 0 satır siler",
        }
        epq_note() {
            en: "READ COMMITTED: the waiting DELETE re-evaluates its WHERE against the row version A committed (EvalPlanQual); hits is 11 now, so nothing matches, though hits = 10 held before and after from each session's own point of view.",
            tr: "READ COMMITTED: bekleyen DELETE, WHERE koşulunu A'nın commit ettiği satır versiyonuna karşı yeniden değerlendirir (EvalPlanQual); hits artık 11, bu yüzden hiçbir şey eşleşmez, oysa her oturumun kendi bakış açısından hits = 10 önce de sonra da doğruydu.",
        }
    }
}
