//! FOR UPDATE vs FOR NO KEY UPDATE against a foreign key check.
use anyhow::Result;

use super::{ScenarioInfo, VariantInfo};
use crate::engine::{VariantCtx, Wait, lit, millis};
use crate::sql::SqlFile;

static SQL: SqlFile = SqlFile::new("lab/fk-blocking.sql", include_str!("../../lab/fk-blocking.sql"));

pub const INFO: ScenarioInfo = ScenarioInfo {
    name: "fk-blocking",
    variants: &[
        VariantInfo { name: "for-update" },
        VariantInfo {
            name: "for-no-key-update",
        },
    ],
};

pub async fn run(ctx: &mut VariantCtx<'_>) -> Result<()> {
    let for_update = match ctx.variant {
        "for-update" => true,
        "for-no-key-update" => false,
        other => anyhow::bail!(crate::tr!("run.no_variant", scenario = "fk-blocking", variant = other)),
    };
    let [a, b] = ctx.open(["A", "B"]).await?;
    let timeout = ctx.env.timeout;
    a.run("BEGIN").await?;
    a.run(SQL.get(if for_update {
        "lock_for_update"
    } else {
        "lock_for_no_key_update"
    })?)
    .await?;
    b.run(&SQL.bind(
        "set_lock_timeout",
        &[("timeout", &lit(&format!("{}ms", timeout.as_millis())))],
    )?)
    .await?;
    b.run("BEGIN").await?;
    let mut insert = b.send(SQL.get("add_item")?).await;
    let wait = ctx.await_wait(&mut insert).await?;
    let (outcome, took) = insert.finish_timed(&["55P03"]).await?;
    let b_wait_ms = if wait.blocked() { millis(took) } else { 0.0 };
    b.run(if outcome.is_ok() { "COMMIT" } else { "ROLLBACK" }).await?;
    a.run(SQL.get("change_price")?).await?;
    a.run("COMMIT").await?;

    ctx.metric("b_waited", wait.blocked());
    ctx.metric("b_wait_ms", b_wait_ms);
    ctx.metric("lock_timeout_ms", timeout.as_millis() as u64);
    match &outcome {
        Ok(_) => {
            let waited = crate::i18n::t(
                if wait.blocked() {
                    "fk.waited_for_a"
                } else {
                    "fk.did_not_wait"
                },
                &[],
            );
            ctx.observe(crate::i18n::t("fk.ok", &[("waited", &waited)]))
        }
        Err(e) => ctx.observe(crate::i18n::t(
            "fk.err",
            &[
                ("ms", &format!("{b_wait_ms:.0}")),
                ("code", &e.code),
                ("message", &e.message),
            ],
        )),
    }
    if for_update {
        ctx.expect(wait == Wait::Blocked(vec!["A".into()]), crate::tr!("fk.b_insert_waits"));
        let context = outcome
            .as_ref()
            .err()
            .and_then(|e| e.context.clone())
            .unwrap_or_default();
        ctx.expect(
            matches!(&outcome, Err(e) if e.code == "55P03"),
            crate::tr!("fk.b_55p03"),
        );
        ctx.expect(context.contains("FOR KEY SHARE"), crate::tr!("fk.context_names"));
        if let Some(line) = context.lines().find(|l| l.contains("FOR KEY SHARE")) {
            ctx.note(crate::tr!("any.server_context", line = line));
        }
        // The price change blocked an unrelated order: that is the bad outcome.
        ctx.anomaly(wait.blocked());
    } else {
        ctx.expect(wait == Wait::DidNotWait, crate::tr!("fk.b_insert_no_wait"));
        ctx.expect(outcome.is_ok(), crate::tr!("fk.b_insert_ok"));
        ctx.anomaly(wait.blocked() || outcome.is_err());
    }
    Ok(())
}
