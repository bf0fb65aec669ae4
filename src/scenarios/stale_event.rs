//! Out-of-order events: versions travel in the message.
use anyhow::Result;

use super::{ScenarioInfo, VariantInfo};
use crate::engine::VariantCtx;
use crate::sql::SqlFile;

static SQL: SqlFile = SqlFile::new("lab/stale-event.sql", include_str!("../../lab/stale-event.sql"));

pub const INFO: ScenarioInfo = ScenarioInfo {
    name: "stale-event",
    variants: &[
        VariantInfo {
            name: "no-version-check",
        },
        VariantInfo { name: "version-check" },
    ],
};

/// (version, price) as the ERP published them; delivered in reverse.
const EVENTS: [(i64, &str); 2] = [(1, "40.00"), (2, "45.00")];

pub async fn run(ctx: &mut VariantCtx<'_>) -> Result<()> {
    let checked = match ctx.variant {
        "no-version-check" => false,
        "version-check" => true,
        other => anyhow::bail!(crate::tr!("run.no_variant", scenario = "stale-event", variant = other)),
    };
    let [consumer] = ctx.open(["consumer"]).await?;
    let mut dropped = 0;
    for (version, price) in EVENTS.iter().rev() {
        consumer.note(if *version == 1 {
            crate::tr!("se.received_late", version = version, price = price)
        } else {
            crate::tr!("se.received", version = version, price = price)
        });
        let sql = SQL.bind(
            if checked { "apply_if_newer" } else { "apply_blindly" },
            &[("price", price), ("version", version)],
        )?;
        if consumer.run(&sql).await?.count == 0 {
            consumer.note(crate::tr!("se.dropped", version = version));
            dropped += 1;
        }
    }
    let book = ctx.env.rows(SQL.get("book")?).await?;
    let final_version = book.int("source_version")?;
    let price = book.get(0, "price").unwrap_or("?").to_string();
    ctx.metric("final_version", final_version);
    ctx.metric("final_price", &price);
    ctx.metric("dropped_stale", dropped);
    ctx.observe(crate::i18n::t(
        "se.result",
        &[("price", &price), ("version", &final_version), ("dropped", &dropped)],
    ));
    if checked {
        ctx.expect(final_version == 2 && price == "45.00", crate::tr!("se.v2_stays"));
        ctx.expect(dropped == 1, crate::tr!("se.v1_dropped"));
    } else {
        ctx.expect(final_version == 1 && price == "40.00", crate::tr!("se.v1_overwrites"));
    }
    ctx.anomaly(final_version != 2);
    Ok(())
}
