//! READ COMMITTED re-checks a waiting statement's WHERE on the updated row.
use anyhow::Result;

use super::{ScenarioInfo, VariantInfo};
use crate::engine::{VariantCtx, Wait};
use crate::sql::SqlFile;

static SQL: SqlFile = SqlFile::new("lab/rc-recheck.sql", include_str!("../../lab/rc-recheck.sql"));

pub const INFO: ScenarioInfo = ScenarioInfo {
    name: "rc-recheck",
    variants: &[
        VariantInfo { name: "read-committed" },
        VariantInfo {
            name: "repeatable-read",
        },
    ],
};

pub async fn run(ctx: &mut VariantCtx<'_>) -> Result<()> {
    let repeatable = match ctx.variant {
        "read-committed" => false,
        "repeatable-read" => true,
        other => anyhow::bail!(crate::tr!("run.no_variant", scenario = "rc-recheck", variant = other)),
    };
    let [a, b] = ctx.open(["A", "B"]).await?;
    a.run("BEGIN").await?;
    a.run(SQL.get("hit")?).await?;
    b.run(if repeatable {
        "BEGIN ISOLATION LEVEL REPEATABLE READ"
    } else {
        "BEGIN ISOLATION LEVEL READ COMMITTED"
    })
    .await?;
    let mut delete = b.send(SQL.get("delete_tens")?).await;
    let wait = ctx.await_wait(&mut delete).await?;
    a.run("COMMIT").await?;
    let outcome = delete.finish_allow(&["40001"]).await?;
    b.run(if outcome.is_ok() { "COMMIT" } else { "ROLLBACK" }).await?;
    let left = ctx.env.rows(SQL.get("rows")?).await?;

    let deleted = outcome.as_ref().map(|r| r.count).unwrap_or(0);
    ctx.metric("deleted_rows", deleted);
    ctx.expect(wait == Wait::Blocked(vec!["A".into()]), crate::tr!("rc.b_delete_waits"));
    ctx.expect(left.get(0, "hits") == Some("11"), crate::tr!("rc.row_remains"));
    match &outcome {
        Ok(_) => {
            let hits = left.get(0, "hits").unwrap_or("-").to_string();
            ctx.observe(crate::i18n::t("rc.ok", &[("n", &deleted), ("hits", &hits)]))
        }
        Err(e) => ctx.observe(crate::i18n::t("rc.err", &[("code", &e.code), ("message", &e.message)])),
    }
    if repeatable {
        ctx.expect(
            matches!(&outcome, Err(e) if e.code == "40001"),
            crate::tr!("rc.b_40001"),
        );
        ctx.anomaly(outcome.is_ok());
    } else {
        ctx.expect(outcome.is_ok() && deleted == 0, crate::tr!("rc.zero_rows"));
        ctx.note(crate::tr!("rc.epq_note"));
        ctx.anomaly(outcome.is_ok() && deleted == 0);
    }
    Ok(())
}
