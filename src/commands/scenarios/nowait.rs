//! NOWAIT and SKIP LOCKED against a row someone is editing (lab/nowait.spec).
use anyhow::Result;

use super::{Cx, Scenario};
use crate::report::millis;

pub static SCENARIO: Scenario = Scenario {
    name: "nowait",
    about: msg::about,
    summary: msg::summary,
    readme: "A edits order 1 (`FOR UPDATE`): `NOWAIT` fails at once with 55P03, `SKIP LOCKED` returns no rows at once.",
    spec: Some("nowait.spec"),
    variants: VARIANTS,
    options: None,
};

crate::variants! {
    prefix "nw";
    nowait "nowait" {
        expected => {
            en: "B's FOR UPDATE NOWAIT fails at once with 55P03: \"this record is being edited by someone else\"",
            tr: "B'nin FOR UPDATE NOWAIT'i hemen 55P03 ile düşer: \"bu kayıt şu an başkası tarafından düzenleniyor\"",
        },
        explain => {
            en: "NOWAIT turns a row lock that cannot be taken at once into an error (55P03) instead of a wait: the right tool for 'someone else is editing this record'.",
            tr: "NOWAIT, hemen alınamayan satır kilidini beklemek yerine hataya (55P03) çevirir: \"bu kaydı başkası düzenliyor\" uyarısı için doğru araç.",
        },
    }
    skip_locked "skip-locked" {
        expected => {
            en: "B's FOR UPDATE SKIP LOCKED returns no rows, at once, without error",
            tr: "B'nin FOR UPDATE SKIP LOCKED'ı hemen, hatasız, hiç satır döndürmez",
        },
        explain => {
            en: "SKIP LOCKED silently passes over rows it cannot lock at once: right for a queue, wrong for the one record a user asked for.",
            tr: "SKIP LOCKED hemen kilitleyemediği satırları sessizce atlar: kuyruk için doğru, kullanıcının istediği tek kayıt için yanlış.",
        },
    }
}

async fn nowait(cx: &mut Cx<'_>) -> Result<()> {
    let o = cx.own_permutation().run().await?;
    let b = o.step("b_edit_nowait")?;
    let ms = format!("{:.1}", millis(b.took()));
    cx.metric("b_wait_ms", millis(b.took()));
    cx.metric("b_rows", b.rows().map_or(0, |r| r.rows.len()));
    match b.error() {
        Some(e) => {
            cx.observe(msg::observed_failed(ms, e.line()));
            cx.note(msg::app_shows());
        }
        None => cx.observe(msg::observed_rows(b.rows()?.rows.len(), ms)),
    }
    cx.check(b.failed_with("55P03"), msg::b_55p03());
    cx.anomaly(b.waited());
    Ok(())
}

async fn skip_locked(cx: &mut Cx<'_>) -> Result<()> {
    let o = cx.own_permutation().run().await?;
    let b = o.step("b_edit_skip_locked")?;
    let ms = format!("{:.1}", millis(b.took()));
    cx.metric("b_wait_ms", millis(b.took()));
    let rows = b.rows().map_or(0, |r| r.rows.len());
    cx.metric("b_rows", rows);
    match b.error() {
        Some(e) => cx.observe(msg::observed_failed(ms, e.line())),
        None => cx.observe(msg::observed_rows(rows, ms)),
    }
    cx.check(b.ok() && rows == 0, msg::no_rows());
    cx.anomaly(b.waited());
    Ok(())
}

mod msg {
    crate::messages! {
        prefix "nw";
        about() {
            en: "NOWAIT and SKIP LOCKED against a row someone is editing",
            tr: "Birinin düzenlediği satıra karşı NOWAIT ve SKIP LOCKED",
        }
        summary() {
            en: "A holds an order FOR UPDATE (someone is editing it); B asks for it without waiting",
            tr: "A bir siparişi FOR UPDATE ile tutuyor (biri düzenliyor); B beklemeden ister",
        }
        observed_failed(ms, error) {
            en: "B's statement failed after {ms} ms: {error}",
            tr: "B'nin komutu {ms} ms sonra başarısız oldu: {error}",
        }
        observed_rows(rows, ms) {
            en: "B got {rows} row(s) after {ms} ms, no error",
            tr: "B {ms} ms sonra hatasız {rows} satır aldı",
        }
        app_shows() {
            en: "the application shows: \"this record is being edited by someone else\"",
            tr: "uygulama şunu gösterir: \"bu kayıt şu anda başka biri tarafından düzenleniyor\"",
        }
        b_55p03() {
            en: "B fails with 55P03",
            tr: "B 55P03 ile başarısız olur",
        }
        no_rows() {
            en: "B gets no rows and no error",
            tr: "B ne satır ne hata alır",
        }
    }
}
