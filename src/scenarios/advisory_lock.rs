//! Advisory locks: a job that must run on one instance only.
use anyhow::Result;

use super::{ScenarioInfo, VariantInfo};
use crate::engine::{VariantCtx, lit};
use crate::sql::SqlFile;

static SQL: SqlFile = SqlFile::new("lab/advisory-lock.sql", include_str!("../../lab/advisory-lock.sql"));

pub const INFO: ScenarioInfo = ScenarioInfo {
    name: "advisory-lock",
    variants: &[
        VariantInfo { name: "try-xact-lock" },
        VariantInfo {
            name: "session-lock-pooled",
        },
    ],
};

pub async fn run(ctx: &mut VariantCtx<'_>) -> Result<()> {
    // The run's schema is part of the key, so lab runs on one server do not collide.
    let key = lit(&format!("{}:nightly-stock-sync", ctx.env.schema));
    match ctx.variant {
        "try-xact-lock" => try_xact_lock(ctx, &key).await,
        "session-lock-pooled" => session_lock_pooled(ctx, &key).await,
        other => anyhow::bail!(crate::tr!(
            "run.no_variant",
            scenario = "advisory-lock",
            variant = other
        )),
    }
}

fn got(rows: &crate::engine::Rows) -> bool {
    rows.get(0, "got") == Some("t")
}

async fn try_xact_lock(ctx: &mut VariantCtx<'_>, key: &str) -> Result<()> {
    let instances = ctx.open(["instance-1", "instance-2", "instance-3"]).await?;
    let try_lock = SQL.bind("try_xact_lock", &[("key", &key)])?;
    for s in &instances {
        s.run("BEGIN").await?;
    }
    // All three try while the first try's transaction is still open.
    let mut ran = 0;
    let mut skipped = 0;
    let mut winners = Vec::new();
    for s in &instances {
        if got(&s.run(&try_lock).await?) {
            s.note(crate::tr!("al.ran_sync"));
            s.run(SQL.get("sync")?).await?;
            ran += 1;
            winners.push(s.name().to_string());
        } else {
            s.note(crate::tr!("al.skipped"));
            skipped += 1;
        }
    }
    let holders = ctx.env.rows(&SQL.bind("holders", &[("key", &key)])?).await?;
    for s in &instances {
        s.run("COMMIT").await?;
    }
    ctx.evidence(&crate::tr!("al.ev_while"), &holders);
    // The lock went away with the transaction: the next night's run gets it.
    let next = &instances[1];
    next.run("BEGIN").await?;
    let next_got = got(&next.run(&try_lock).await?);
    next.run("COMMIT").await?;
    let after = ctx.env.rows(&SQL.bind("holders", &[("key", &key)])?).await?;

    ctx.metric("ran", ran);
    ctx.metric("skipped", skipped);
    let got = crate::i18n::t(if next_got { "al.got" } else { "al.did_not_get" }, &[]);
    ctx.observe(crate::i18n::t(
        "al.xact",
        &[("winners", &winners.join(", ")), ("skipped", &skipped), ("got", &got)],
    ));
    ctx.expect(ran == 1 && skipped == 2, crate::tr!("al.one_runs"));
    ctx.expect(next_got, crate::tr!("al.released"));
    ctx.expect(after.rows.is_empty(), crate::tr!("al.none_left"));
    ctx.anomaly(ran != 1);
    Ok(())
}

async fn session_lock_pooled(ctx: &mut VariantCtx<'_>, key: &str) -> Result<()> {
    let [pooled, other] = ctx.open(["pooled-conn", "other-conn"]).await?;
    let try_lock = SQL.bind("try_session_lock", &[("key", &key)])?;
    // Last night's job took a session lock and finished without unlocking;
    // its connection went back to the pool, open and idle.
    pooled.run(&SQL.bind("session_lock", &[("key", &key)])?).await?;
    pooled.run(SQL.get("sync")?).await?;
    pooled.note(crate::tr!("al.pooled_note"));
    let holders = ctx.env.rows(&SQL.bind("holders", &[("key", &key)])?).await?;
    ctx.evidence(&crate::tr!("al.ev_idle"), &holders);

    let mut ran = 1; // last night's job
    let mut skipped = 0;
    let first = got(&other.run(&try_lock).await?);
    if first {
        ran += 1;
        other.run(&SQL.bind("unlock", &[("key", &key)])?).await?;
    } else {
        other.note(crate::tr!("al.skipped_nothing"));
        skipped += 1;
    }
    // The fix: the pool resets a connection it takes back (DISCARD ALL does this too);
    // better still, the job uses the _xact_ lock, which cannot outlive its transaction.
    pooled.run(SQL.get("pool_reset")?).await?;
    let second = got(&other.run(&try_lock).await?);
    if second {
        other.note(crate::tr!("al.ran_sync"));
        other.run(SQL.get("sync")?).await?;
        other.run(&SQL.bind("unlock", &[("key", &key)])?).await?;
        ran += 1;
    } else {
        skipped += 1;
    }

    ctx.metric("ran", ran);
    ctx.metric("skipped", skipped);
    let first_s = crate::i18n::t(if first { "al.not_skipped" } else { "al.skipped_idle" }, &[]);
    let second_s = crate::i18n::t(if second { "al.ran" } else { "al.skipped_again" }, &[]);
    ctx.observe(crate::i18n::t(
        "al.pooled",
        &[("first", &first_s), ("second", &second_s)],
    ));
    ctx.expect(!holders.rows.is_empty(), crate::tr!("al.still_holds"));
    ctx.expect(!first, crate::tr!("al.next_skipped"));
    ctx.expect(second, crate::tr!("al.after_reset"));
    ctx.anomaly(!first);
    Ok(())
}
