//! Out-of-order events: versions travel in the message (lab/stale-event.spec).
use anyhow::Result;

use super::{Cx, Scenario};

pub static SCENARIO: Scenario = Scenario {
    name: "stale-event",
    about: msg::about,
    summary: msg::summary,
    readme: "The ERP's price changes v1 and v2 arrive as v2, v1: applied blindly, the stale v1 wins; with \
             `WHERE source_version < incoming` it is dropped and counted.",
    spec: Some("stale-event.spec"),
    variants: VARIANTS,
    options: None,
};

crate::variants! {
    prefix "se";
    no_version_check "no-version-check" {
        expected => {
            en: "the last delivered message wins: the stale v1 overwrites v2 (anomaly)",
            tr: "son gelen mesaj kazanır: bayat v1, v2'nin üstüne yazar (anomali)",
        },
        explain => {
            en: "Messages arrive in any order; applying each one blindly lets a delayed old message bring back old data.",
            tr: "Mesajlar herhangi bir sırada gelir; her birini körü körüne uygulamak gecikmiş eski bir mesajın eski veriyi geri getirmesine izin verir.",
        },
    }
    version_check "version-check" {
        expected => {
            en: "UPDATE ... WHERE source_version < incoming: v2 applies, the stale v1 is dropped and counted",
            tr: "UPDATE ... WHERE source_version < gelen: v2 uygulanır, bayat v1 atılır ve sayılır",
        },
        explain => {
            en: "The version travels in the message and the update applies only if it is newer than what the row holds; older messages are dropped and counted.",
            tr: "Sürüm mesajın içinde taşınır ve güncelleme yalnızca satırdakinden yeniyse uygulanır; eski mesajlar atılır ve sayılır.",
        },
    }
}

/// Applies v2 then v1 with the given steps; the final price and version, and
/// how many events were dropped (applied to no row).
async fn deliver(cx: &mut Cx<'_>, label: &str, v2: &str, v1: &str) -> Result<(String, i64, u64)> {
    let o = cx.permutation(label).run().await?;
    let mut dropped = 0;
    for step in [v2, v1] {
        if o.step(step)?.count()? == 0 {
            dropped += 1;
        }
    }
    let book = o.step("book")?;
    let (price, version) = (book.text("price")?, book.int("source_version")?);
    cx.metric("final_version", version);
    cx.metric("final_price", &price);
    cx.metric("dropped_stale", dropped);
    cx.observe(msg::observed(&price, version, dropped));
    cx.anomaly(version != 2);
    Ok((price, version, dropped))
}

async fn no_version_check(cx: &mut Cx<'_>) -> Result<()> {
    let (price, version, _) = deliver(cx, "no-version-check", "apply_v2_blindly", "apply_v1_blindly").await?;
    cx.check(version == 1 && price == "40.00", msg::v1_overwrites());
    Ok(())
}

async fn version_check(cx: &mut Cx<'_>) -> Result<()> {
    let (price, version, dropped) = deliver(cx, "version-check", "apply_v2_if_newer", "apply_v1_if_newer").await?;
    cx.check(version == 2 && price == "45.00", msg::v2_stays());
    cx.check(dropped == 1, msg::v1_dropped());
    Ok(())
}

mod msg {
    crate::messages! {
        prefix "se";
        about() {
            en: "Out-of-order events: a stale price change overwrites a newer one unless versions travel with it",
            tr: "Sırası karışmış olaylar: sürümler birlikte taşınmazsa bayat bir fiyat değişikliği yenisinin üzerine yazar",
        }
        summary() {
            en: "the ERP's price changes v1 and v2 arrive out of order (v2 first)",
            tr: "ERP'nin v1 ve v2 fiyat değişiklikleri ters sırada gelir (önce v2)",
        }
        observed(price, version, dropped) {
            en: "final price {price} at source version {version}; {dropped} stale event(s) dropped",
            tr: "son fiyat {price}, kaynak sürümü {version}; {dropped} bayat olay atıldı",
        }
        v2_stays() {
            en: "v2's price stays",
            tr: "v2'nin fiyatı kalır",
        }
        v1_dropped() {
            en: "the stale v1 is dropped and counted",
            tr: "bayat v1 atılır ve sayılır",
        }
        v1_overwrites() {
            en: "the stale v1 overwrites v2",
            tr: "bayat v1, v2'nin üzerine yazar",
        }
    }
}
