//! FOR UPDATE vs FOR NO KEY UPDATE against a foreign key check (lab/fk-blocking.spec).
use anyhow::Result;

use super::{Cx, Scenario};
use crate::report::millis;
use crate::specfile::Param;

pub static SCENARIO: Scenario = Scenario {
    name: "fk-blocking",
    about: msg::about,
    summary: msg::summary,
    readme: "A locks book 1 to change its price; B adds an order item for it. The FK check's `FOR KEY SHARE` \
             waits behind `FOR UPDATE` until `lock_timeout` (55P03, with the server's CONTEXT line), and passes \
             `FOR NO KEY UPDATE` at once.",
    spec: Some("fk-blocking.spec"),
    variants: VARIANTS,
    options: None,
};

crate::variants! {
    prefix "fk";
    for_update "for-update" {
        expected => {
            en: "B's INSERT waits on the FK check's FOR KEY SHARE, then fails with 55P03 at lock_timeout (CONTEXT names FOR KEY SHARE)",
            tr: "B'nin INSERT'ü FK kontrolünün FOR KEY SHARE'inde bekler, lock_timeout'ta 55P03 ile düşer (CONTEXT FOR KEY SHARE der)",
        },
        explain => {
            en: "The foreign key check on order_items takes FOR KEY SHARE on the book. FOR UPDATE conflicts with it, so adding an order item waits for the price change. Lock with FOR NO KEY UPDATE when the key is not changed.",
            tr: "order_items üzerindeki foreign key kontrolü kitapta FOR KEY SHARE alır. FOR UPDATE bununla çakışır, sipariş kalemi eklemek fiyat değişikliğini bekler. Anahtarı değiştirmiyorsan FOR NO KEY UPDATE ile kilitle.",
        },
    }
    for_no_key_update "for-no-key-update" {
        expected => {
            en: "B's INSERT completes without waiting: FOR NO KEY UPDATE does not conflict with FOR KEY SHARE",
            tr: "B'nin INSERT'ü beklemeden tamamlanır: FOR NO KEY UPDATE, FOR KEY SHARE ile çakışmaz",
        },
        explain => {
            en: "FOR NO KEY UPDATE, the mode an ordinary UPDATE takes, does not conflict with FOR KEY SHARE: orders for the book go through while its price is being changed.",
            tr: "Sıradan bir UPDATE'in aldığı mod olan FOR NO KEY UPDATE, FOR KEY SHARE ile çakışmaz: fiyat değişirken kitabın siparişleri geçer.",
        },
    }
}

async fn for_update(cx: &mut Cx<'_>) -> Result<()> {
    let timeout = cx.opts.timeout;
    let o = cx
        .own_permutation()
        .bind("timeout", Param::millis(timeout))
        .waits_within("b_add_item", &["A"], Some(timeout * 3))
        .run()
        .await?;
    cx.ran_under(&o, &["A", "B"], "read committed");
    let b = o.step("b_add_item")?;
    let wait_ms = if b.waited() { millis(b.took()) } else { 0.0 };
    cx.metric("b_waited", b.waited());
    cx.metric("b_wait_ms", wait_ms);
    cx.metric("lock_timeout_ms", timeout.as_millis() as u64);
    match b.error() {
        Some(e) => cx.observe(msg::observed_failed(format!("{wait_ms:.0}"), e.line())),
        None => cx.observe(msg::observed_ok(if b.waited() {
            msg::waited_for_a()
        } else {
            msg::did_not_wait()
        })),
    }
    let context = b.error().and_then(|e| e.context.clone()).unwrap_or_default();
    cx.check(b.failed_with("55P03"), msg::b_55p03());
    cx.check(context.contains("FOR KEY SHARE"), msg::context_names());
    if let Some(line) = context.lines().find(|l| l.contains("FOR KEY SHARE")) {
        cx.note(msg::server_context(line));
    }
    // The price change blocked an unrelated order: that is the bad outcome.
    cx.anomaly(b.waited());
    Ok(())
}

async fn for_no_key_update(cx: &mut Cx<'_>) -> Result<()> {
    let timeout = cx.opts.timeout;
    let o = cx
        .own_permutation()
        .bind("timeout", Param::millis(timeout))
        .run()
        .await?;
    cx.ran_under(&o, &["A", "B"], "read committed");
    let b = o.step("b_add_item")?;
    cx.metric("b_waited", b.waited());
    cx.metric("b_wait_ms", if b.waited() { millis(b.took()) } else { 0.0 });
    cx.metric("lock_timeout_ms", timeout.as_millis() as u64);
    match b.error() {
        Some(e) => cx.observe(msg::observed_failed(format!("{:.0}", millis(b.took())), e.line())),
        None => cx.observe(msg::observed_ok(if b.waited() {
            msg::waited_for_a()
        } else {
            msg::did_not_wait()
        })),
    }
    cx.check(b.ok(), msg::b_insert_ok());
    cx.anomaly(b.waited() || !b.ok());
    Ok(())
}

mod msg {
    crate::messages! {
        prefix "fk";
        about() {
            en: "FOR UPDATE vs FOR NO KEY UPDATE against a foreign key check",
            tr: "Bir foreign key kontrolüne karşı FOR UPDATE ve FOR NO KEY UPDATE",
        }
        summary() {
            en: "A locks a book to change its price while B adds an order item for it (the FK check takes FOR KEY SHARE)",
            tr: "A fiyatını değiştirmek için bir kitabı kilitlerken B o kitap için sipariş kalemi ekler (FK kontrolü FOR KEY SHARE alır)",
        }
        observed_ok(waited) {
            en: "B's INSERT {waited} and completed",
            tr: "B'nin INSERT'ü {waited} ve tamamlandı",
        }
        waited_for_a() {
            en: "waited for A",
            tr: "A'yı bekledi",
        }
        did_not_wait() {
            en: "did not wait",
            tr: "beklemedi",
        }
        observed_failed(ms, error) {
            en: "B's INSERT waited {ms} ms, then failed: {error}",
            tr: "B'nin INSERT'ü {ms} ms bekledi, sonra başarısız oldu: {error}",
        }
        b_55p03() {
            en: "B fails with 55P03 (lock timeout)",
            tr: "B 55P03 (lock timeout) ile başarısız olur",
        }
        context_names() {
            en: "the server's CONTEXT names FOR KEY SHARE",
            tr: "sunucunun CONTEXT satırı FOR KEY SHARE'i anar",
        }
        server_context(line) {
            en: "server CONTEXT: {line}",
            tr: "sunucu CONTEXT: {line}",
        }
        b_insert_ok() {
            en: "B's INSERT succeeds",
            tr: "B'nin INSERT'i başarılı olur",
        }
    }
}
