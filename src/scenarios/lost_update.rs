//! Lost update: two clerks remove one copy of book 1 at the same time.
use anyhow::Result;

use super::{ScenarioInfo, VariantInfo};
use crate::engine::{Session, VariantCtx};
use crate::report::Evidence;
use crate::sql::SqlFile;

static SQL: SqlFile = SqlFile::new(
    "lab/lost-update.sql",
    include_str!("../../lab/lost-update.sql"),
);

pub const INFO: ScenarioInfo = ScenarioInfo {
    name: "lost-update",
    summary: "two clerks remove one copy of the same book at once (36 on hand, 34 must remain)",
    variants: &[
        VariantInfo {
            name: "read-committed",
            expected: "both read 36 and write 35; both commit; final 35: one decrement is lost (anomaly)",
        },
        VariantInfo {
            name: "repeatable-read",
            expected: "B's UPDATE fails with 40001 (concurrent update); final 35 after A alone; nothing lost silently",
        },
        VariantInfo {
            name: "atomic-update",
            expected: "B's `quantity_on_hand - 1` waits for A, then re-reads the committed row; final 34",
        },
        VariantInfo {
            name: "select-for-update",
            expected: "B's SELECT ... FOR UPDATE waits for A, then reads 35 and writes 34; final 34",
        },
        VariantInfo {
            name: "optimistic-version",
            expected: "A's versioned UPDATE affects 1 row, B's affects 0: the conflict is reported with B's intent, \
                       what B read and what the row holds now; final 35",
        },
    ],
};

const START: i64 = 36;

pub async fn run(ctx: &mut VariantCtx<'_>) -> Result<()> {
    match ctx.variant {
        "read-committed" => read_modify_write(ctx, "begin_read_committed").await,
        "repeatable-read" => read_modify_write(ctx, "begin_repeatable_read").await,
        "atomic-update" => atomic_update(ctx).await,
        "select-for-update" => select_for_update(ctx).await,
        "optimistic-version" => optimistic_version(ctx).await,
        other => anyhow::bail!("lost-update has no variant {other}"),
    }
}

async fn two(ctx: &mut VariantCtx<'_>) -> Result<(Session, Session)> {
    let mut s = ctx.sessions(&["A", "B"]).await?;
    let b = s.pop().unwrap();
    let a = s.pop().unwrap();
    Ok((a, b))
}

async fn final_quantity(ctx: &mut VariantCtx<'_>) -> Result<i64> {
    let q = ctx
        .env
        .int("SELECT quantity_on_hand FROM stock_items WHERE book_id = 1")
        .await?;
    ctx.metric("final_quantity", q);
    Ok(q)
}

/// The seed's interleaving: both read, A writes and commits, then B writes
/// the value it computed from its own (now stale) read.
async fn read_modify_write(ctx: &mut VariantCtx<'_>, begin: &str) -> Result<()> {
    let (a, b) = two(ctx).await?;
    let repeatable = begin == "begin_repeatable_read";
    for s in [&a, &b] {
        s.run(SQL.get(begin)?).await?;
    }
    let qa = a.int(SQL.get("read")?, "quantity_on_hand").await?;
    let qb = b.int(SQL.get("read")?, "quantity_on_hand").await?;
    a.run(&SQL.bind("write", &[("new_quantity", &(qa - 1))])?)
        .await?;
    a.run("COMMIT").await?;
    let b_write = b
        .run_allow(
            &SQL.bind("write", &[("new_quantity", &(qb - 1))])?,
            &["40001"],
        )
        .await?;
    let b_end = if b_write.is_ok() {
        "COMMIT"
    } else {
        "ROLLBACK"
    };
    b.run(b_end).await?;

    let q = final_quantity(ctx).await?;
    ctx.expect(
        qa == START && qb == START,
        format!("both sessions read {START} (A read {qa}, B read {qb})"),
    );
    match &b_write {
        Ok(_) => ctx.observe(format!("B's UPDATE succeeded; both committed; final {q}")),
        Err(e) => ctx.observe(format!(
            "B's UPDATE failed with {} ({}); final {q}",
            e.code, e.message
        )),
    }
    if repeatable {
        ctx.expect(
            matches!(&b_write, Err(e) if e.code == "40001"),
            "B's UPDATE fails with 40001",
        );
        ctx.expect(
            q == START - 1,
            format!("final {} (A's decrement only)", START - 1),
        );
        ctx.anomaly(q != START - 1 || b_write.is_ok());
        if b_write.is_err() {
            ctx.note("REPEATABLE READ: B's snapshot predates A's commit, so PostgreSQL refuses to update a row changed since; \
                      the application must retry the whole transaction (read included).");
        }
    } else {
        ctx.expect(b_write.is_ok(), "B's UPDATE succeeds");
        ctx.expect(
            q == START - 1,
            format!("final {}: one of the two decrements lost", START - 1),
        );
        // Two decrements committed, one remains: the other was overwritten.
        ctx.anomaly(b_write.is_ok() && q != START - 2);
        ctx.metric("lost_decrements", (START - 2 - q).abs());
    }
    Ok(())
}

async fn atomic_update(ctx: &mut VariantCtx<'_>) -> Result<()> {
    let (a, b) = two(ctx).await?;
    for s in [&a, &b] {
        s.run(SQL.get("begin_read_committed")?).await?;
    }
    a.run(SQL.get("atomic_decrement")?).await?;
    let mut pending = b.send(SQL.get("atomic_decrement")?);
    let wait = ctx.await_wait(&mut pending).await?;
    a.run("COMMIT").await?;
    let b_rows = pending.finish().await?;
    b.run("COMMIT").await?;

    let q = final_quantity(ctx).await?;
    ctx.metric("b_waited", wait.blocked());
    ctx.observe(format!(
        "B {} A; B's UPDATE affected {} row(s); final {q}",
        if wait.blocked() {
            "waited for"
        } else {
            "did not wait for"
        },
        b_rows.count
    ));
    ctx.expect(
        wait == crate::engine::Wait::Blocked(vec!["A".into()]),
        "B's UPDATE waits for A",
    );
    ctx.expect(q == START - 2, format!("final {}", START - 2));
    ctx.anomaly(q != START - 2);
    Ok(())
}

async fn select_for_update(ctx: &mut VariantCtx<'_>) -> Result<()> {
    let (a, b) = two(ctx).await?;
    for s in [&a, &b] {
        s.run(SQL.get("begin_read_committed")?).await?;
    }
    let qa = a
        .int(SQL.get("read_for_update")?, "quantity_on_hand")
        .await?;
    let mut pending = b.send(SQL.get("read_for_update")?);
    let wait = ctx.await_wait(&mut pending).await?;
    a.run(&SQL.bind("write", &[("new_quantity", &(qa - 1))])?)
        .await?;
    a.run("COMMIT").await?;
    let qb = pending.finish().await?.int("quantity_on_hand")?;
    b.run(&SQL.bind("write", &[("new_quantity", &(qb - 1))])?)
        .await?;
    b.run("COMMIT").await?;

    let q = final_quantity(ctx).await?;
    ctx.metric("b_waited", wait.blocked());
    ctx.observe(format!(
        "B {} A, then read {qb}; final {q}",
        if wait.blocked() {
            "waited for"
        } else {
            "did not wait for"
        }
    ));
    ctx.expect(
        wait == crate::engine::Wait::Blocked(vec!["A".into()]),
        "B's SELECT ... FOR UPDATE waits for A",
    );
    ctx.expect(
        qb == START - 1,
        format!("B reads {} after A commits", START - 1),
    );
    ctx.expect(q == START - 2, format!("final {}", START - 2));
    ctx.anomaly(q != START - 2);
    Ok(())
}

async fn optimistic_version(ctx: &mut VariantCtx<'_>) -> Result<()> {
    let (a, b) = two(ctx).await?;
    // Form-style: each read and each write is its own short transaction.
    let ra = a.run(SQL.get("read_versioned")?).await?;
    let rb = b.run(SQL.get("read_versioned")?).await?;
    let (qa, va) = (ra.int("quantity_on_hand")?, ra.int("version")?);
    let (qb, vb) = (rb.int("quantity_on_hand")?, rb.int("version")?);
    let a_rows = a
        .run(&SQL.bind(
            "write_if_version",
            &[("new_quantity", &(qa - 1)), ("read_version", &va)],
        )?)
        .await?
        .count;
    let b_rows = b
        .run(&SQL.bind(
            "write_if_version",
            &[("new_quantity", &(qb - 1)), ("read_version", &vb)],
        )?)
        .await?
        .count;
    // Checking rows affected is the point: 0 means a conflict, not success.
    if b_rows == 0 {
        let now = b.run(SQL.get("current")?).await?;
        b.note("0 rows affected: conflict, reported to the user with the three value sets");
        ctx.evidence_table(Evidence {
            title: "B's conflict (what the application shows)".into(),
            columns: vec![
                "value set".into(),
                "quantity_on_hand".into(),
                "version".into(),
            ],
            rows: vec![
                vec![
                    "B wanted to write".into(),
                    (qb - 1).to_string(),
                    (vb + 1).to_string(),
                ],
                vec!["B originally read".into(), qb.to_string(), vb.to_string()],
                vec![
                    "database holds now".into(),
                    now.get(0, "quantity_on_hand").unwrap_or("?").into(),
                    now.get(0, "version").unwrap_or("?").into(),
                ],
            ],
        });
    }
    let q = final_quantity(ctx).await?;
    ctx.metric("rows_affected_a", a_rows);
    ctx.metric("rows_affected_b", b_rows);
    ctx.observe(format!(
        "A's versioned UPDATE affected {a_rows} row, B's {b_rows}; final {q}"
    ));
    ctx.expect(a_rows == 1, "A's UPDATE affects 1 row");
    ctx.expect(b_rows == 0, "B's UPDATE affects 0 rows (conflict detected)");
    ctx.expect(
        q == START - 1,
        format!("final {} (B's stale write refused)", START - 1),
    );
    // Nothing was lost silently: B knows its write did not happen.
    ctx.anomaly(b_rows != 0 && q != START - 2);
    Ok(())
}
