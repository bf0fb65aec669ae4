//! Deadlock: two sessions reserve two books in opposite orders.
use anyhow::Result;

use super::{ScenarioInfo, VariantInfo};
use crate::engine::{VariantCtx, Wait, lit, millis};
use crate::sql::SqlFile;

static SQL: SqlFile = SqlFile::new("lab/deadlock.sql", include_str!("../../lab/deadlock.sql"));

pub const INFO: ScenarioInfo = ScenarioInfo {
    name: "deadlock",
    variants: &[
        VariantInfo { name: "reverse-order" },
        VariantInfo { name: "same-order" },
    ],
};

pub async fn run(ctx: &mut VariantCtx<'_>) -> Result<()> {
    let reverse = match ctx.variant {
        "reverse-order" => true,
        "same-order" => false,
        other => anyhow::bail!(crate::tr!("run.no_variant", scenario = "deadlock", variant = other)),
    };
    let [a, b] = ctx.open(["A", "B"]).await?;
    let timeout_ms = ctx.env.int(SQL.get("deadlock_timeout")?).await?;
    ctx.metric("deadlock_timeout_ms", timeout_ms);
    let reserve = |book: i64| SQL.bind("reserve", &[("book_id", &book)]);
    if reverse {
        let can = ctx.env.rows(SQL.get("can_set_deadlock_timeout")?).await?;
        if can.get(0, "can") == Some("t") {
            let longer = lit(&format!("{}ms", timeout_ms * 2));
            b.run(&SQL.bind("set_deadlock_timeout", &[("timeout", &longer)])?)
                .await?;
        } else {
            ctx.note(crate::tr!("dl.no_timeout_note"));
        }
    }
    a.run("BEGIN").await?;
    b.run("BEGIN").await?;
    a.run(&reserve(1)?).await?;
    if reverse {
        b.run(&reserve(2)?).await?;
        let mut a2 = a.send(&reserve(2)?).await;
        let a_wait = ctx.await_wait(&mut a2).await?;
        // B closes the cycle: B waits for A, A waits for B.
        let mut b1 = b.send(&reserve(1)?).await;
        let b_wait = ctx.await_wait(&mut b1).await?;
        let (ra, a_took) = a2.finish_timed(&["40P01"]).await?;
        let (rb, b_took) = b1.finish_timed(&["40P01"]).await?;
        a.run("COMMIT").await?;
        b.run("COMMIT").await?;

        let victims: Vec<(&str, &crate::engine::PgError, std::time::Duration)> =
            [("A", &ra, a_took), ("B", &rb, b_took)]
                .into_iter()
                .filter_map(|(n, r, took)| r.as_ref().err().map(|e| (n, e, took)))
                .collect();
        ctx.expect(a_wait == Wait::Blocked(vec!["B".into()]), crate::tr!("dl.a_waits"));
        ctx.expect(b_wait.blocked(), crate::tr!("dl.b_waits"));
        ctx.expect(
            victims.len() == 1 && victims[0].1.code == "40P01",
            crate::tr!("dl.one_40p01"),
        );
        let reserved = ctx.env.rows(SQL.get("reserved")?).await?;
        let both_one = (0..2).all(|i| reserved.get(i, "quantity_reserved") == Some("1"));
        ctx.expect(both_one, crate::tr!("dl.reserved_once"));
        if let Some((victim, err, took)) = victims.first() {
            // From the victim's wait starting to its error: deadlock_timeout plus the detector's work.
            let detect_ms = millis(*took);
            ctx.metric("victim", victim);
            ctx.metric("detect_ms", detect_ms);
            ctx.observe(crate::i18n::t(
                "dl.victim",
                &[
                    ("victim", victim),
                    ("ms", &format!("{detect_ms:.0}")),
                    ("timeout", &timeout_ms),
                ],
            ));
            if let Some(detail) = &err.detail {
                let named = name_processes(ctx, detail);
                ctx.note(crate::tr!("dl.server_detail", detail = named));
            }
            ctx.expect(detect_ms + 50.0 >= timeout_ms as f64, crate::tr!("dl.not_sooner"));
        } else {
            ctx.metric("victim", serde_json::Value::Null);
            ctx.observe(crate::i18n::t("dl.none", &[]));
        }
        ctx.anomaly(false);
    } else {
        let mut b1 = b.send(&reserve(1)?).await;
        let b_wait = ctx.await_wait(&mut b1).await?;
        a.run(&reserve(2)?).await?;
        a.run("COMMIT").await?;
        b1.finish().await?;
        b.run(&reserve(2)?).await?;
        b.run("COMMIT").await?;
        let reserved = ctx.env.rows(SQL.get("reserved")?).await?;
        let both_two = (0..2).all(|i| reserved.get(i, "quantity_reserved") == Some("2"));
        ctx.metric("victim", serde_json::Value::Null);
        ctx.expect(b_wait == Wait::Blocked(vec!["A".into()]), crate::tr!("any.b_waits_a"));
        ctx.expect(both_two, crate::tr!("dl.both_commit"));
        let waited = crate::i18n::t(
            if b_wait.blocked() {
                "any.waited_for"
            } else {
                "any.did_not_wait_for"
            },
            &[],
        );
        let (r1, r2) = (
            reserved.get(0, "quantity_reserved").unwrap_or("?").to_string(),
            reserved.get(1, "quantity_reserved").unwrap_or("?").to_string(),
        );
        ctx.observe(crate::i18n::t(
            "dl.same",
            &[("waited", &waited), ("r1", &r1), ("r2", &r2)],
        ));
        ctx.anomaly(false);
    }
    Ok(())
}

/// Replaces "Process 1234" in the server's DETAIL with the session's name.
fn name_processes(ctx: &VariantCtx<'_>, detail: &str) -> String {
    let mut out = detail.replace('\n', " ");
    let mut pids: Vec<i32> = detail
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|w| w.parse().ok())
        .collect();
    pids.sort_unstable();
    pids.dedup();
    for pid in pids {
        {
            if let Some(name) = ctx.session_of(pid) {
                out = out.replace(&format!("process {pid}"), &format!("process {pid} ({name})"));
                out = out.replace(&format!("Process {pid}"), &format!("Process {pid} ({name})"));
            }
        }
    }
    out
}
