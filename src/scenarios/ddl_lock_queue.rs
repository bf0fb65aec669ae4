//! The DDL lock queue: an ALTER TABLE waiting behind a report blocks every reader behind it.
use std::time::Duration;

use anyhow::Result;

use super::{ScenarioInfo, VariantInfo};
use crate::engine::{Rows, Session, VariantCtx, Wait, lit, millis};
use crate::sql::SqlFile;

static SQL: SqlFile = SqlFile::new("lab/ddl-lock-queue.sql", include_str!("../../lab/ddl-lock-queue.sql"));

pub const INFO: ScenarioInfo = ScenarioInfo {
    name: "ddl-lock-queue",
    variants: &[
        VariantInfo {
            name: "no-lock-timeout",
        },
        VariantInfo {
            name: "lock-timeout-retry",
        },
    ],
};

pub async fn run(ctx: &mut VariantCtx<'_>) -> Result<()> {
    match ctx.variant {
        "no-lock-timeout" => no_lock_timeout(ctx).await,
        "lock-timeout-retry" => lock_timeout_retry(ctx).await,
        other => anyhow::bail!(crate::tr!(
            "run.no_variant",
            scenario = "ddl-lock-queue",
            variant = other
        )),
    }
}

/// The seed's view of the queue, with session names for pids.
async fn queue(ctx: &mut VariantCtx<'_>, sessions: &[&Session]) -> Result<Rows> {
    let pids = format!(
        "ARRAY[{}]",
        sessions
            .iter()
            .map(|s| s.pid().to_string())
            .collect::<Vec<_>>()
            .join(",")
    );
    let mut rows = ctx.env.rows(&SQL.bind("queue", &[("pids", &pids)])?).await?;
    rows.columns.insert(0, crate::tr!("any.col_session"));
    for r in rows.rows.iter_mut() {
        let pid: i32 = r[0].as_deref().and_then(|p| p.parse().ok()).unwrap_or(0);
        r.insert(0, ctx.session_of(pid));
        // {123} -> {123 (B)}
        if let Some(b) = r[2].as_mut() {
            for s in sessions {
                *b = b.replace(&s.pid().to_string(), &format!("{} ({})", s.pid(), s.name()));
            }
        }
    }
    Ok(rows)
}

async fn no_lock_timeout(ctx: &mut VariantCtx<'_>) -> Result<()> {
    let [a, b, c] = ctx.open(["A", "B", "C"]).await?;
    a.run("BEGIN").await?;
    a.run(SQL.get("report")?).await?;
    a.note(crate::tr!("dq.report_running"));
    let mut alter = b.send(SQL.get("alter")?).await;
    let b_wait = ctx.await_wait(&mut alter).await?;
    let mut read = c.send(SQL.get("read")?).await;
    let c_wait = ctx.await_wait(&mut read).await?;
    let q = queue(ctx, &[&a, &b, &c]).await?;
    ctx.evidence(&crate::tr!("dq.ev_queue"), &q);
    // The queue is observed: end the report now instead of waiting it out.
    a.run("COMMIT").await?;
    let (_, b_took) = alter.finish_timed(&[]).await?;
    let (_, c_took) = read.finish_timed(&[]).await?;

    let c_by_b = c_wait == Wait::Blocked(vec!["B".into()]);
    ctx.metric("c_blocked_by_b", c_by_b);
    ctx.metric("c_wait_ms", millis(c_took));
    ctx.metric("b_attempts", 1);
    let by = match &c_wait {
        Wait::Blocked(by) => by.join(", "),
        Wait::DidNotWait => crate::i18n::t("dq.nobody", &[]),
    };
    ctx.observe(crate::i18n::t(
        "dq.queue",
        &[
            ("b", &format!("{:.0}", millis(b_took))),
            ("by", &by),
            ("c", &format!("{:.0}", millis(c_took))),
        ],
    ));
    ctx.expect(
        b_wait == Wait::Blocked(vec!["A".into()]),
        crate::tr!("dq.b_alter_waits"),
    );
    ctx.expect(c_by_b, crate::tr!("dq.c_by_b"));
    ctx.anomaly(c_by_b);
    Ok(())
}

async fn lock_timeout_retry(ctx: &mut VariantCtx<'_>) -> Result<()> {
    let [a, b, c] = ctx.open(["A", "B", "C"]).await?;
    let timeout = ctx.env.timeout;
    a.run("BEGIN").await?;
    a.run(SQL.get("report")?).await?;
    a.note(crate::tr!("dq.report_running"));
    b.run(&SQL.bind(
        "set_lock_timeout",
        &[("timeout", &lit(&format!("{}ms", timeout.as_millis())))],
    )?)
    .await?;

    let mut alter = b.send(SQL.get("alter")?).await;
    let b_wait = ctx.await_wait(&mut alter).await?;
    let mut read = c.send(SQL.get("read")?).await;
    let c_wait = ctx.await_wait(&mut read).await?;
    let (first, _) = alter.finish_timed(&["55P03"]).await?;
    // B gave up its place in the queue: C goes on at once.
    let (_, c_took) = read.finish_timed(&[]).await?;
    let mut attempts = 1;
    let mut done = first.is_ok();
    if !done {
        // The migration pauses before retrying; meanwhile the report ends.
        b.note(crate::tr!("dq.pause_retry"));
        a.run("COMMIT").await?;
        tokio::time::sleep(Duration::from_millis(50)).await;
        attempts += 1;
        done = b.run_allow(SQL.get("alter")?, &["55P03"]).await?.is_ok();
    } else {
        a.run("COMMIT").await?;
    }

    let c_by_b = c_wait == Wait::Blocked(vec!["B".into()]);
    ctx.metric("c_blocked_by_b", c_by_b);
    ctx.metric("c_wait_ms", millis(c_took));
    ctx.metric("b_attempts", attempts);
    ctx.metric("lock_timeout_ms", timeout.as_millis() as u64);
    let first_s = match &first {
        Ok(_) => crate::i18n::t("dq.first_ok", &[]),
        Err(e) => crate::i18n::t("dq.first_failed", &[("code", &e.code)]),
    };
    let done_s = crate::i18n::t(if done { "dq.done" } else { "dq.not_done" }, &[]);
    ctx.observe(crate::i18n::t(
        "dq.retry",
        &[
            ("first", &first_s),
            ("c", &format!("{:.0}", millis(c_took))),
            ("done", &done_s),
            ("n", &attempts),
        ],
    ));
    ctx.expect(b_wait.blocked(), crate::tr!("dq.b_alter_waits"));
    ctx.expect(
        matches!(&first, Err(e) if e.code == "55P03"),
        crate::tr!("dq.first_55p03"),
    );
    // C queued behind B only until B's lock_timeout fired (allow the scheduler some slack).
    ctx.expect(
        c_took < timeout + Duration::from_millis(500),
        crate::tr!("dq.c_no_longer"),
    );
    ctx.expect(done && attempts == 2, crate::tr!("dq.retry_ok"));
    ctx.anomaly(c_took >= timeout + Duration::from_millis(500));
    Ok(())
}
