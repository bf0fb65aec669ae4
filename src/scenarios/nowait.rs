//! NOWAIT and SKIP LOCKED against a row someone is editing.
use anyhow::Result;

use super::{ScenarioInfo, VariantInfo};
use crate::engine::{VariantCtx, Wait, millis};
use crate::sql::SqlFile;

static SQL: SqlFile = SqlFile::new("lab/nowait.sql", include_str!("../../lab/nowait.sql"));

pub const INFO: ScenarioInfo = ScenarioInfo {
    name: "nowait",
    variants: &[VariantInfo { name: "nowait" }, VariantInfo { name: "skip-locked" }],
};

pub async fn run(ctx: &mut VariantCtx<'_>) -> Result<()> {
    let nowait = match ctx.variant {
        "nowait" => true,
        "skip-locked" => false,
        other => anyhow::bail!(crate::tr!("run.no_variant", scenario = "nowait", variant = other)),
    };
    let [a, b] = ctx.open(["A", "B"]).await?;
    a.run("BEGIN").await?;
    a.run(SQL.get("edit")?).await?;
    b.run("BEGIN").await?;
    let mut ask = b
        .send(SQL.get(if nowait { "edit_nowait" } else { "edit_skip_locked" })?)
        .await;
    let wait = ctx.await_wait(&mut ask).await?;
    let (outcome, took) = ask.finish_timed(&["55P03"]).await?;
    b.run("ROLLBACK").await?;
    a.run("COMMIT").await?;

    let rows = outcome.as_ref().map(|r| r.rows.len()).unwrap_or(0);
    ctx.metric("b_wait_ms", millis(took));
    ctx.metric("b_rows", rows);
    ctx.expect(wait == Wait::DidNotWait, crate::tr!("nw.b_no_wait"));
    ctx.anomaly(wait.blocked());
    if nowait {
        match &outcome {
            Err(e) => {
                b.note(crate::tr!("nw.app_shows"));
                ctx.observe(crate::i18n::t(
                    "nw.failed",
                    &[
                        ("ms", &format!("{:.1}", millis(took))),
                        ("code", &e.code),
                        ("message", &e.message),
                    ],
                ));
            }
            Ok(_) => ctx.observe(crate::i18n::t("nw.got_row", &[("ms", &format!("{:.1}", millis(took)))])),
        }
        ctx.expect(
            matches!(&outcome, Err(e) if e.code == "55P03"),
            crate::tr!("any.b_55p03"),
        );
    } else {
        ctx.observe(crate::i18n::t(
            "nw.rows",
            &[("rows", &rows), ("ms", &format!("{:.1}", millis(took)))],
        ));
        ctx.expect(outcome.is_ok() && rows == 0, crate::tr!("nw.no_rows"));
    }
    Ok(())
}
