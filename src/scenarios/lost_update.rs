//! Lost update: two clerks remove one copy of book 1 at the same time.
use anyhow::Result;

use super::{ScenarioInfo, VariantInfo};
use crate::engine::{VariantCtx, lit};
use crate::report::Evidence;
use crate::sql::SqlFile;

static SQL: SqlFile = SqlFile::new("lab/lost-update.sql", include_str!("../../lab/lost-update.sql"));

pub const INFO: ScenarioInfo = ScenarioInfo {
    name: "lost-update",
    variants: &[
        VariantInfo { name: "read-committed" },
        VariantInfo {
            name: "repeatable-read",
        },
        VariantInfo { name: "atomic-update" },
        VariantInfo {
            name: "select-for-update",
        },
        VariantInfo {
            name: "updated-at-token",
        },
        VariantInfo { name: "field-merge" },
        VariantInfo {
            name: "optimistic-version",
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
        "updated-at-token" => updated_at_token(ctx).await,
        "field-merge" => field_merge(ctx).await,
        other => anyhow::bail!(crate::tr!("run.no_variant", scenario = "lost-update", variant = other)),
    }
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
    let [a, b] = ctx.open(["A", "B"]).await?;
    let repeatable = begin == "begin_repeatable_read";
    for s in [&a, &b] {
        s.run(SQL.get(begin)?).await?;
    }
    let qa = a.int(SQL.get("read")?, "quantity_on_hand").await?;
    let qb = b.int(SQL.get("read")?, "quantity_on_hand").await?;
    a.run(&SQL.bind("write", &[("new_quantity", &(qa - 1))])?).await?;
    a.run("COMMIT").await?;
    let b_write = b
        .run_allow(&SQL.bind("write", &[("new_quantity", &(qb - 1))])?, &["40001"])
        .await?;
    let b_end = if b_write.is_ok() { "COMMIT" } else { "ROLLBACK" };
    b.run(b_end).await?;

    let q = final_quantity(ctx).await?;
    ctx.expect(
        qa == START && qb == START,
        crate::tr!("lu.both_read", start = START, qa = qa, qb = qb),
    );
    match &b_write {
        Ok(_) => ctx.observe(crate::i18n::t("lu.rmw.ok", &[("q", &q)])),
        Err(e) => ctx.observe(crate::i18n::t(
            "lu.rmw.err",
            &[("code", &e.code), ("message", &e.message), ("q", &q)],
        )),
    }
    if repeatable {
        ctx.expect(
            matches!(&b_write, Err(e) if e.code == "40001"),
            crate::tr!("lu.b_update_40001"),
        );
        ctx.expect(q == START - 1, crate::tr!("lu.final_a_only", q = START - 1));
        ctx.anomaly(q != START - 1 || b_write.is_ok());
        if b_write.is_err() {
            ctx.note(crate::tr!("lu.rr_note"));
        }
    } else {
        ctx.expect(b_write.is_ok(), crate::tr!("lu.b_update_ok"));
        ctx.expect(q == START - 1, crate::tr!("lu.final_one_lost", q = START - 1));
        // Two decrements committed, one remains: the other was overwritten.
        ctx.anomaly(b_write.is_ok() && q != START - 2);
        ctx.metric("lost_decrements", (START - 2 - q).abs());
        // The audit trail proves it: two writes, the second over the first.
        let audit = ctx.env.rows(SQL.get("audit")?).await?;
        let writes = audit.rows.len();
        ctx.evidence(&crate::tr!("lu.ev_audit"), &audit);
        ctx.metric("audit_writes", writes);
        ctx.expect(writes == 2, crate::tr!("lu.audit_both"));
        if writes == 2 {
            let cell = |r: usize, c: usize| audit.rows[r][c].clone().unwrap_or_else(|| "?".into());
            ctx.note(crate::tr!(
                "lu.audit_note",
                from1 = cell(0, 2),
                to1 = cell(0, 3),
                by1 = cell(0, 0),
                from2 = cell(1, 2),
                to2 = cell(1, 3),
                by2 = cell(1, 0),
            ));
        }
    }
    Ok(())
}

async fn atomic_update(ctx: &mut VariantCtx<'_>) -> Result<()> {
    let [a, b] = ctx.open(["A", "B"]).await?;
    for s in [&a, &b] {
        s.run(SQL.get("begin_read_committed")?).await?;
    }
    a.run(SQL.get("atomic_decrement")?).await?;
    let mut pending = b.send(SQL.get("atomic_decrement")?).await;
    let wait = ctx.await_wait(&mut pending).await?;
    a.run("COMMIT").await?;
    let b_rows = pending.finish().await?;
    b.run("COMMIT").await?;

    let q = final_quantity(ctx).await?;
    ctx.metric("b_waited", wait.blocked());
    let waited = crate::i18n::t(
        if wait.blocked() {
            "any.waited_for"
        } else {
            "any.did_not_wait_for"
        },
        &[],
    );
    ctx.observe(crate::i18n::t(
        "lu.atomic",
        &[("waited", &waited), ("rows", &b_rows.count), ("q", &q)],
    ));
    ctx.expect(
        wait == crate::engine::Wait::Blocked(vec!["A".into()]),
        crate::tr!("lu.b_update_waits"),
    );
    ctx.expect(q == START - 2, crate::tr!("lu.final", q = START - 2));
    ctx.anomaly(q != START - 2);
    Ok(())
}

async fn select_for_update(ctx: &mut VariantCtx<'_>) -> Result<()> {
    let [a, b] = ctx.open(["A", "B"]).await?;
    for s in [&a, &b] {
        s.run(SQL.get("begin_read_committed")?).await?;
    }
    let qa = a.int(SQL.get("read_for_update")?, "quantity_on_hand").await?;
    let mut pending = b.send(SQL.get("read_for_update")?).await;
    let wait = ctx.await_wait(&mut pending).await?;
    a.run(&SQL.bind("write", &[("new_quantity", &(qa - 1))])?).await?;
    a.run("COMMIT").await?;
    let qb = pending.finish().await?.int("quantity_on_hand")?;
    b.run(&SQL.bind("write", &[("new_quantity", &(qb - 1))])?).await?;
    b.run("COMMIT").await?;

    let q = final_quantity(ctx).await?;
    ctx.metric("b_waited", wait.blocked());
    let waited = crate::i18n::t(
        if wait.blocked() {
            "any.waited_for"
        } else {
            "any.did_not_wait_for"
        },
        &[],
    );
    ctx.observe(crate::i18n::t("lu.sfu", &[("waited", &waited), ("qb", &qb), ("q", &q)]));
    ctx.expect(
        wait == crate::engine::Wait::Blocked(vec!["A".into()]),
        crate::tr!("lu.b_sfu_waits"),
    );
    ctx.expect(qb == START - 1, crate::tr!("lu.b_reads_after", q = START - 1));
    ctx.expect(q == START - 2, crate::tr!("lu.final", q = START - 2));
    ctx.anomaly(q != START - 2);
    Ok(())
}

async fn optimistic_version(ctx: &mut VariantCtx<'_>) -> Result<()> {
    let [a, b] = ctx.open(["A", "B"]).await?;
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
        b.note(crate::tr!("lu.conflict_note"));
        ctx.evidence_table(Evidence {
            title: crate::tr!("lu.ev_conflict"),
            columns: vec![
                crate::tr!("lu.col_value_set"),
                "quantity_on_hand".into(),
                "version".into(),
            ],
            rows: vec![
                vec![crate::tr!("lu.b_wanted"), (qb - 1).to_string(), (vb + 1).to_string()],
                vec![crate::tr!("lu.b_read"), qb.to_string(), vb.to_string()],
                vec![
                    crate::tr!("lu.db_now"),
                    now.get(0, "quantity_on_hand").unwrap_or("?").into(),
                    now.get(0, "version").unwrap_or("?").into(),
                ],
            ],
        });
    }
    let q = final_quantity(ctx).await?;
    ctx.metric("rows_affected_a", a_rows);
    ctx.metric("rows_affected_b", b_rows);
    ctx.observe(crate::i18n::t(
        "lu.optimistic",
        &[("a", &a_rows), ("b", &b_rows), ("q", &q)],
    ));
    ctx.expect(a_rows == 1, crate::tr!("lu.a_one_row"));
    ctx.expect(b_rows == 0, crate::tr!("lu.b_zero_rows"));
    ctx.expect(q == START - 1, crate::tr!("lu.final_stale_refused", q = START - 1));
    // Nothing was lost silently: B knows its write did not happen.
    ctx.anomaly(b_rows != 0 && q != START - 2);
    Ok(())
}

/// updated_at as the concurrency token. The application stamps it from its
/// own clock into a timestamp(0) column; the clock readings are fixed here
/// (10:00:00.2 and 10:00:00.4) so the two saves land in the same second on
/// every run, as they would by chance in production.
async fn updated_at_token(ctx: &mut VariantCtx<'_>) -> Result<()> {
    let [a, b] = ctx.open(["A", "B"]).await?;
    let ra = a.run(SQL.get("read_order")?).await?;
    let rb = b.run(SQL.get("read_order")?).await?;
    let stamp_a = ra.get(0, "updated_at").unwrap_or("").to_string();
    let stamp_b = rb.get(0, "updated_at").unwrap_or("").to_string();
    let note_b = crate::tr!("lu.data_note_b");
    let note_b = note_b.as_str();
    let a_save = SQL.bind(
        "save_order_if_unchanged",
        &[
            ("address", &lit("Moda, Kadikoy, Istanbul")),
            ("note", &"NULL"),
            ("now", &"'2026-11-30 10:00:00.2'"),
            ("read_stamp", &lit(&stamp_a)),
        ],
    )?;
    let a_rows = a.run(&a_save).await?.count;
    let after_a = ctx.env.rows(SQL.get("read_order")?).await?;
    let stamp_after_a = after_a.get(0, "updated_at").unwrap_or("").to_string();
    // B saves its form: the address it read (the old one) and its note.
    let b_save = SQL.bind(
        "save_order_if_unchanged",
        &[
            ("address", &lit(rb.get(0, "delivery_address").unwrap_or(""))),
            ("note", &lit(note_b)),
            ("now", &"'2026-11-30 10:00:00.4'"),
            ("read_stamp", &lit(&stamp_b)),
        ],
    )?;
    let b_rows = b.run(&b_save).await?.count;
    let end = ctx.env.rows(SQL.get("read_order")?).await?;
    let address = end.get(0, "delivery_address").unwrap_or("").to_string();
    ctx.evidence_table(Evidence {
        title: crate::tr!("lu.ev_token"),
        columns: vec!["updated_at".into(), crate::tr!("lu.col_value")],
        rows: vec![
            vec![crate::tr!("lu.as_b_read"), stamp_b.clone()],
            vec![crate::tr!("lu.after_a_save"), stamp_after_a.clone()],
        ],
    });
    ctx.metric("rows_affected_a", a_rows);
    ctx.metric("rows_affected_b", b_rows);
    ctx.metric("equal_stamps", stamp_b == stamp_after_a);
    let lost = b_rows == 1 && address != "Moda, Kadikoy, Istanbul";
    let fate = crate::i18n::t(if lost { "lu.token.lost" } else { "lu.token.kept" }, &[]);
    ctx.observe(crate::i18n::t(
        "lu.token",
        &[("stamp", &stamp_b), ("b", &b_rows), ("fate", &fate)],
    ));
    ctx.expect(stamp_b == stamp_after_a, crate::tr!("lu.same_stamp"));
    ctx.expect(a_rows == 1 && b_rows == 1, crate::tr!("lu.both_saves_ok"));
    ctx.expect(lost, crate::tr!("lu.address_lost"));
    ctx.anomaly(lost);
    ctx.note(crate::tr!("lu.token_note"));
    Ok(())
}

/// A corrects the address while B writes a note, each from the form it read.
async fn field_merge(ctx: &mut VariantCtx<'_>) -> Result<()> {
    let [a, b] = ctx.open(["A", "B"]).await?;
    let new_address = "Moda, Kadikoy, Istanbul";
    let note = crate::tr!("lu.data_note");
    let note = note.as_str();
    let mut outcomes = Vec::new();
    for (part, per_field) in [(crate::tr!("lu.part_row"), false), (crate::tr!("lu.part_field"), true)] {
        ctx.env.rows(SQL.get("reset_order")?).await?;
        ctx.narrate(crate::tr!("any.part", part = part));
        let ra = a.run(SQL.get("read_order_versioned")?).await?;
        let rb = b.run(SQL.get("read_order_versioned")?).await?;
        let (a_sql, b_sql) = if per_field {
            let old_address = ra.get(0, "delivery_address").map_or("NULL".into(), lit);
            let old_note = rb.get(0, "note").map_or("NULL".into(), lit);
            (
                SQL.bind(
                    "save_address_if_field_unchanged",
                    &[("address", &lit(new_address)), ("read_address", &old_address)],
                )?,
                SQL.bind(
                    "save_note_if_field_unchanged",
                    &[("note", &lit(note)), ("read_note", &old_note)],
                )?,
            )
        } else {
            (
                SQL.bind(
                    "save_address_row_version",
                    &[("address", &lit(new_address)), ("read_version", &ra.int("version")?)],
                )?,
                SQL.bind(
                    "save_note_row_version",
                    &[("note", &lit(note)), ("read_version", &rb.int("version")?)],
                )?,
            )
        };
        let a_rows = a.run(&a_sql).await?.count;
        let b_rows = b.run(&b_sql).await?.count;
        if b_rows == 0 {
            b.note(crate::tr!("lu.needless_note"));
        }
        let end = ctx.env.rows(SQL.get("read_order_versioned")?).await?;
        let landed = end.get(0, "delivery_address") == Some(new_address) && end.get(0, "note") == Some(note);
        outcomes.push((part, a_rows, b_rows, landed, end));
    }
    ctx.evidence_table(Evidence {
        title: crate::tr!("lu.ev_order"),
        columns: vec![
            crate::tr!("lu.col_approach"),
            crate::tr!("lu.col_a_rows"),
            crate::tr!("lu.col_b_rows"),
            "delivery_address".into(),
            "note".into(),
        ],
        rows: outcomes
            .iter()
            .map(|(part, a_rows, b_rows, _, end)| {
                vec![
                    part.to_string(),
                    a_rows.to_string(),
                    b_rows.to_string(),
                    end.get(0, "delivery_address").unwrap_or("NULL").into(),
                    end.get(0, "note").unwrap_or("NULL").into(),
                ]
            })
            .collect(),
    });
    let (row, field) = (&outcomes[0], &outcomes[1]);
    ctx.metric("row_version_conflict", row.2 == 0);
    ctx.metric("field_merge_conflict", field.2 == 0);
    ctx.metric("both_changes_landed", field.3);
    let needless = if row.2 == 0 {
        crate::i18n::t("lu.merge.needless", &[])
    } else {
        String::new()
    };
    let landed = crate::i18n::t(
        if field.3 {
            "lu.merge.landed"
        } else {
            "lu.merge.not_landed"
        },
        &[],
    );
    ctx.observe(crate::i18n::t(
        "lu.merge",
        &[("rows", &row.2), ("needless", &needless), ("landed", &landed)],
    ));
    ctx.expect(row.1 == 1 && row.2 == 0, crate::tr!("lu.row_conflict"));
    ctx.expect(
        field.1 == 1 && field.2 == 1 && field.3,
        crate::tr!("lu.field_both_land"),
    );
    ctx.anomaly(false);
    Ok(())
}
