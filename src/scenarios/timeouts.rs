//! The four timeouts, each bounding a wait, each shown releasing the locks held.
use anyhow::Result;

use super::{ScenarioInfo, VariantInfo};
use crate::engine::{CONNECTION_LOST, VariantCtx, Wait, lit, millis};
use crate::sql::SqlFile;

static SQL: SqlFile = SqlFile::new("lab/timeouts.sql", include_str!("../../lab/timeouts.sql"));

pub const INFO: ScenarioInfo = ScenarioInfo {
    name: "timeouts",
    variants: &[
        VariantInfo { name: "lock-timeout" },
        VariantInfo {
            name: "statement-timeout",
        },
        VariantInfo {
            name: "idle-in-transaction",
        },
        VariantInfo {
            name: "transaction-timeout",
        },
    ],
};

pub async fn run(ctx: &mut VariantCtx<'_>) -> Result<()> {
    let timeout = ctx.env.timeout;
    ctx.metric("timeout_ms", timeout.as_millis() as u64);
    let t = lit(&format!("{}ms", timeout.as_millis()));
    match ctx.variant {
        "lock-timeout" => lock_timeout(ctx, &t).await,
        "statement-timeout" => statement_timeout(ctx, &t).await,
        "idle-in-transaction" => terminated(ctx, "set_idle_timeout", &t, "25P03").await,
        "transaction-timeout" => {
            if ctx.env.server.version_num < 170000 {
                ctx.skip(crate::tr!(
                    "to.no_transaction_timeout",
                    version = ctx.env.server.version
                ));
                return Ok(());
            }
            terminated(ctx, "set_transaction_timeout", &t, "25P04").await
        }
        other => anyhow::bail!(crate::tr!("run.no_variant", scenario = "timeouts", variant = other)),
    }
}

async fn lock_timeout(ctx: &mut VariantCtx<'_>, t: &str) -> Result<()> {
    let [a, b] = ctx.open(["A", "B"]).await?;
    a.run("BEGIN").await?;
    a.run(SQL.get("lock_row")?).await?;
    b.run(&SQL.bind("set_lock_timeout", &[("timeout", &t)])?).await?;
    b.run("BEGIN").await?;
    let mut update = b.send(SQL.get("lock_row")?).await;
    let wait = ctx.await_wait(&mut update).await?;
    let (r, took) = update.finish_timed(&["55P03"]).await?;
    b.run("ROLLBACK").await?;
    let b_locks = ctx.locks_held(&b).await?;
    a.run("COMMIT").await?;

    ctx.metric("waited_ms", millis(took));
    ctx.metric("b_locks_after_rollback", b_locks);
    let observed = match &r {
        Err(e) => crate::i18n::t(
            "to.lock",
            &[
                ("ms", &format!("{:.0}", millis(took))),
                ("code", &e.code),
                ("locks", &b_locks),
            ],
        ),
        Ok(_) => crate::i18n::t("to.update_ok", &[]),
    };
    ctx.observe(observed);
    ctx.expect(wait == Wait::Blocked(vec!["A".into()]), crate::tr!("any.b_waits_a"));
    ctx.expect(matches!(&r, Err(e) if e.code == "55P03"), crate::tr!("any.b_55p03"));
    ctx.expect(took >= ctx.env.timeout, crate::tr!("to.not_sooner_lock"));
    ctx.expect(b_locks == 0, crate::tr!("to.no_locks"));
    ctx.anomaly(false);
    Ok(())
}

async fn statement_timeout(ctx: &mut VariantCtx<'_>, t: &str) -> Result<()> {
    let [a, b] = ctx.open(["A", "B"]).await?;
    b.run("BEGIN").await?;
    b.run(SQL.get("lock_row")?).await?;
    b.run(&SQL.bind("set_statement_timeout", &[("timeout", &t)])?).await?;
    // The statement's own work is long (ten times the timeout); the server cancels it.
    let seconds = ctx.env.timeout.as_secs_f64() * 10.0;
    let (r, took) = b
        .send(&SQL.bind("long_query", &[("seconds", &seconds)])?)
        .await
        .finish_timed(&["57014"])
        .await?;
    // B's session is stuck in the aborted block until it rolls back. (The
    // server reports the error before it finishes aborting, so the locks are
    // looked at only after B's next statement has been refused.)
    let aborted = b.run_allow(SQL.get("still_there")?, &["25P02"]).await?;
    let held_while_aborted = ctx.locks_held(&b).await?;
    // The abort released B's row lock: A gets the row without waiting.
    a.run("BEGIN").await?;
    let mut a_update = a.send(SQL.get("lock_row")?).await;
    let a_wait = ctx.await_wait(&mut a_update).await?;
    a_update.finish().await?;
    a.run("COMMIT").await?;
    b.run("ROLLBACK").await?;
    let b_locks = ctx.locks_held(&b).await?;

    ctx.metric("waited_ms", millis(took));
    ctx.metric("b_locks_while_aborted", held_while_aborted);
    ctx.metric("b_locks_after_rollback", b_locks);
    let observed = match &r {
        Err(e) => {
            let waited = crate::i18n::t(
                if a_wait.blocked() {
                    "any.waited_for"
                } else {
                    "any.did_not_wait_for"
                },
                &[],
            );
            let next = match &aborted {
                Err(e) => crate::i18n::t("to.next_failed", &[("code", &e.code)]),
                Ok(_) => crate::i18n::t("to.next_ok", &[]),
            };
            crate::i18n::t(
                "to.statement",
                &[
                    ("code", &e.code),
                    ("ms", &format!("{:.0}", millis(took))),
                    ("locks", &held_while_aborted),
                    ("waited", &waited),
                    ("next", &next),
                ],
            )
        }
        Ok(_) => crate::i18n::t("to.statement_ok", &[]),
    };
    ctx.observe(observed);
    ctx.expect(matches!(&r, Err(e) if e.code == "57014"), crate::tr!("to.cancelled"));
    ctx.expect(took >= ctx.env.timeout, crate::tr!("to.not_sooner_statement"));
    ctx.expect(held_while_aborted == 0, crate::tr!("to.aborted_no_locks"));
    ctx.expect(a_wait == Wait::DidNotWait, crate::tr!("to.a_no_wait"));
    ctx.expect(
        matches!(&aborted, Err(e) if e.code == "25P02"),
        crate::tr!("to.rollback_first"),
    );
    ctx.expect(b_locks == 0, crate::tr!("to.no_locks"));
    ctx.anomaly(false);
    Ok(())
}

async fn terminated(ctx: &mut VariantCtx<'_>, setting: &str, t: &str, code: &str) -> Result<()> {
    let [a, b] = ctx.open(["A", "B"]).await?;
    b.run(&SQL.bind(setting, &[("timeout", &t)])?).await?;
    b.run("BEGIN").await?;
    b.run(SQL.get("lock_row")?).await?;
    b.note(crate::tr!("to.idle_holding"));
    a.run("BEGIN").await?;
    let mut a_update = a.send(SQL.get("lock_row")?).await;
    let a_wait = ctx.await_wait(&mut a_update).await?;
    let (_, a_took) = a_update.finish_timed(&[]).await?;
    a.run("COMMIT").await?;
    let client_sees = b.run_allow(SQL.get("still_there")?, &[code, CONNECTION_LOST]).await?;
    let gone = ctx.await_gone(&b).await?;

    ctx.metric("a_waited_ms", millis(a_took));
    ctx.metric("b_terminated", gone);
    let seen = match &client_sees {
        Ok(_) => crate::i18n::t("to.seen_ok", &[]),
        Err(e) if e.code == CONNECTION_LOST => crate::i18n::t("to.seen", &[("what", &e.message)]),
        Err(e) => crate::i18n::t("to.seen", &[("what", &format!("{} {}", e.code, e.message))]),
    };
    ctx.observe(crate::i18n::t(
        "to.ended",
        &[("ms", &format!("{:.0}", millis(a_took))), ("seen", &seen)],
    ));
    ctx.expect(a_wait == Wait::Blocked(vec!["B".into()]), crate::tr!("to.a_waits_b"));
    ctx.expect(a_took >= ctx.env.timeout / 2, crate::tr!("to.lasted"));
    ctx.expect(client_sees.is_err(), crate::tr!("to.conn_gone"));
    ctx.expect(gone, crate::tr!("to.terminated"));
    ctx.anomaly(false);
    Ok(())
}
