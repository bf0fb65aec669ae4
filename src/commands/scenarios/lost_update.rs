//! Lost update: two clerks remove one copy of book 1 at the same time
//! (lab/lost-update.spec). Book 1 has 36 copies; 34 must remain.
use anyhow::Result;

use super::{Cx, Scenario};
use crate::engine::Observation;
use crate::report::Phrase;

pub static SCENARIO: Scenario = Scenario {
    name: "lost-update",
    about: msg::about,
    summary: msg::summary,
    readme: "Book 1 has 36 copies; clerks A and B each remove one; A commits first; 34 must remain. \
             Read-modify-write under READ COMMITTED loses one (35), and the trigger-maintained audit trail \
             shows both writes; REPEATABLE READ refuses B with 40001; `quantity_on_hand - 1` and `FOR UPDATE` \
             make B wait and give 34; a version column with a rows-affected check reports B's conflict with \
             the three value sets. `updated_at` as the token (second precision, the application's clock) lets \
             B overwrite A within the same second; a row-wide version makes a note edit conflict with an \
             address edit, per-field checks let both land.",
    spec: Some("lost-update.spec"),
    variants: VARIANTS,
    options: None,
};

crate::variants! {
    prefix "lu";
    read_committed "read-committed" {
        expected => {
            en: "both read 36 and write 35; both commit; final 35: one decrement is lost (anomaly)",
            tr: "ikisi de 36 okur ve 35 yazar; ikisi de commit eder; sonuç 35: bir düşüş kaybolur (anomali)",
        },
        explain => {
            en: "Each statement in READ COMMITTED sees the latest committed data, but the new value was computed in the application from an earlier read: B writes 35 over A's 35 without knowing. Fix: let the database compute (quantity_on_hand - 1), lock the row while reading (FOR UPDATE), or check a version.",
            tr: "READ COMMITTED'de her komut son commit edilmiş veriyi görür, ama yeni değer uygulamada daha önceki bir okumadan hesaplandı: B, A'nın 35'inin üstüne habersizce 35 yazar. Çözüm: hesabı veritabanına bırak (quantity_on_hand - 1), okurken satırı kilitle (FOR UPDATE) ya da sürüm kontrolü yap.",
        },
    }
    repeatable_read "repeatable-read" {
        expected => {
            en: "B's UPDATE fails with 40001 (concurrent update); final 35 after A alone; nothing lost silently",
            tr: "B'nin UPDATE'i 40001 ile düşer (concurrent update); A tek başına 35 bırakır; sessizce kaybolan bir şey yok",
        },
        explain => {
            en: "REPEATABLE READ gives the transaction one snapshot; updating a row another transaction changed after that snapshot is refused with 40001 instead of overwriting it. Nothing is lost, but the application must retry the whole transaction, its read included.",
            tr: "REPEATABLE READ transaction'a tek bir snapshot verir; snapshot'tan sonra başkasının değiştirdiği satırı güncellemek üzerine yazmak yerine 40001 ile reddedilir. Kayıp yok, ama uygulama transaction'ı okumasıyla birlikte baştan tekrar etmeli.",
        },
    }
    atomic_update "atomic-update" {
        expected => {
            en: "B's `quantity_on_hand - 1` waits for A, then re-reads the committed row; final 34",
            tr: "B'nin `quantity_on_hand - 1`'i A'yı bekler, sonra commit edilmiş satırı yeniden okur; sonuç 34",
        },
        explain => {
            en: "The UPDATE takes the row lock; B's UPDATE waits for A, then READ COMMITTED re-reads the committed row version (EvalPlanQual) and subtracts 1 from 35. Letting the database do the arithmetic is the simplest fix.",
            tr: "UPDATE satır kilidini alır; B'nin UPDATE'i A'yı bekler, sonra READ COMMITTED commit edilmiş sürümü yeniden okur (EvalPlanQual) ve 35'ten 1 düşer. Hesabı veritabanına bırakmak en basit çözüm.",
        },
    }
    select_for_update "select-for-update" {
        expected => {
            en: "B's SELECT ... FOR UPDATE waits for A, then reads 35 and writes 34; final 34",
            tr: "B'nin SELECT ... FOR UPDATE'i A'yı bekler, sonra 35 okur ve 34 yazar; sonuç 34",
        },
        explain => {
            en: "FOR UPDATE takes the row lock when reading, so B's read waits until A commits and then returns the new value; the application computes from current data. Keep such locks short, never across a user's think time.",
            tr: "FOR UPDATE okurken satır kilidini alır; B'nin okuması A commit edene kadar bekler ve yeni değeri döndürür, uygulama güncel veriyle hesaplar. Bu kilitleri kısa tut, asla kullanıcının düşünme süresi boyunca değil.",
        },
    }
    updated_at_token "updated-at-token" {
        expected => {
            en: "updated_at as the token: A's save within the same second leaves the stamp B read, so B's conditional save succeeds and silently overwrites A's address (anomaly)",
            tr: "token olarak updated_at: A'nın aynı saniyedeki kaydı B'nin okuduğu damgayı değiştirmez, B'nin koşullu kaydı geçer ve A'nın adresini sessizce ezer (anomali)",
        },
        explain => {
            en: "A concurrency token must change on every write. A second-precision timestamp stamped by the application can be the same before and after a write in the same second, so the conditional UPDATE still matches and overwrites. Use an integer version (or xmin).",
            tr: "Eşzamanlılık belirteci her yazmada değişmeli. Uygulamanın damgaladığı saniye hassasiyetli bir zaman, aynı saniyedeki bir yazmadan önce ve sonra aynı kalabilir; koşullu UPDATE yine eşleşir ve üzerine yazar. Tamsayı bir sürüm (ya da xmin) kullan.",
        },
    }
    field_merge "field-merge" {
        expected => {
            en: "A corrects the address, B writes a note: one row-wide version gives B a needless conflict; per-field checks let both changes land",
            tr: "A adresi düzeltir, B not yazar: satır çapında tek sürüm B'ye gereksiz bir çakışma verir; alan bazında kontrol ikisinin de değişikliğini yazar",
        },
        explain => {
            en: "A row-wide version makes any two edits conflict, even of different fields. Sending only the changed fields, each checked against the value originally read, lets independent edits both land and still catches real conflicts.",
            tr: "Satır çapında tek sürüm, farklı alanlara dokunsalar bile her iki düzenlemeyi çakıştırır. Yalnızca değişen alanları, her birini ilk okunan değere karşı kontrol ederek göndermek bağımsız değişikliklerin ikisini de yazar ve gerçek çakışmaları yine yakalar.",
        },
    }
    optimistic_version "optimistic-version" {
        expected => {
            en: "A's versioned UPDATE affects 1 row, B's affects 0: the conflict is reported with B's intent, what B read and what the row holds now; final 35",
            tr: "A'nın sürümlü UPDATE'i 1 satır, B'ninki 0 satır etkiler: çakışma B'nin yazmak istediği, okuduğu ve satırın şu anki değerleriyle bildirilir; sonuç 35",
        },
        explain => {
            en: "The version read with the row travels with the form and the write checks it. Rows affected decides: 0 means someone changed the row since it was read. Show the user what they wanted to write, what they read and what the row holds now.",
            tr: "Satırla birlikte okunan sürüm formla taşınır ve yazma onu kontrol eder. Etkilenen satır sayısı karar verir: 0, satır okunduktan sonra birinin onu değiştirdiği demektir. Kullanıcıya ne yazmak istediğini, ne okuduğunu ve satırın şimdi ne tuttuğunu göster.",
        },
    }
}

/// Copies on hand before the clerks start.
const START: i64 = 36;
const NEW_ADDRESS: &str = "Moda, Kadikoy, Istanbul";

fn final_quantity(cx: &mut Cx<'_>, o: &Observation) -> Result<i64> {
    let q = o.step("stock")?.int("quantity_on_hand")?;
    cx.metric("final_quantity", q);
    Ok(q)
}

/// Whether the step's COMMIT committed (a failed transaction's comes back ROLLBACK).
fn committed(o: &Observation, step: &str) -> Result<bool> {
    Ok(o.step(step)?.results()?.last().is_some_and(|r| r.tag == "COMMIT"))
}

/// Both clerks read under `level`, A writes and commits, then B writes the
/// value it computed from its own read: the observation and the final quantity.
async fn read_then_write(cx: &mut Cx<'_>, label: &str, level: &str) -> Result<(Observation, i64)> {
    let o = cx.permutation(label).run().await?;
    cx.ran_under(&o, &["A", "B"], level);
    let (qa, qb) = (
        o.step("a_read")?.int("quantity_on_hand")?,
        o.step("b_read")?.int("quantity_on_hand")?,
    );
    cx.check(qa == START && qb == START, msg::both_read(START, qa, qb));
    let q = final_quantity(cx, &o)?;
    cx.observe(match o.step("b_write")?.error() {
        None => msg::observed_b_write_ok(q),
        Some(e) => msg::observed_b_write_failed(e.line(), q),
    });
    Ok((o, q))
}

/// Both clerks read, A writes and commits, then B writes the value it
/// computed from its own (now stale) read.
async fn read_committed(cx: &mut Cx<'_>) -> Result<()> {
    let (o, q) = read_then_write(cx, "read-committed", "read committed").await?;
    let b_write = o.step("b_write")?;
    cx.check(b_write.ok() && committed(&o, "b_commit")?, msg::b_update_ok());
    cx.check(q == START - 1, msg::final_one_lost(START - 1));
    // Two decrements committed, one remains: the other was overwritten.
    cx.anomaly(b_write.ok() && q != START - 2);
    cx.metric("lost_decrements", (START - 2 - q).abs());
    // The audit trail proves it: two writes, the second over the first.
    let audit = o.step("audit")?.rows()?.clone();
    cx.metric("audit_writes", audit.rows.len());
    cx.check(audit.rows.len() == 2, msg::audit_both());
    if audit.rows.len() == 2 {
        let cell = |r: usize, c: &str| audit.get(r, c).unwrap_or("?").to_string();
        // The second write left what the first did: it was computed without the first.
        let note = if cell(1, "new_value") == cell(0, "new_value") {
            msg::audit_note
        } else {
            msg::audit_note_kept
        };
        cx.note(note(
            cell(0, "old_value"),
            cell(0, "new_value"),
            cell(0, "session"),
            cell(1, "old_value"),
            cell(1, "new_value"),
            cell(1, "session"),
        ));
    }
    cx.evidence_rows(msg::ev_audit(), &audit);
    Ok(())
}

async fn repeatable_read(cx: &mut Cx<'_>) -> Result<()> {
    let (o, q) = read_then_write(cx, "repeatable-read", "repeatable read").await?;
    let b_write = o.step("b_write")?;
    cx.check(b_write.failed_with("40001"), msg::b_update_40001());
    cx.check(q == START - 1, msg::final_a_only(START - 1));
    cx.anomaly(q != START - 1 || b_write.ok());
    if b_write.failed_with("40001") {
        cx.note(msg::rr_note());
    }
    Ok(())
}

/// "B waited for A" or "B did not wait for A", from what the server said.
fn waited_for_a(waited: bool) -> crate::i18n::Text {
    if waited {
        msg::waited_for_a()
    } else {
        msg::did_not_wait_for_a()
    }
}

async fn atomic_update(cx: &mut Cx<'_>) -> Result<()> {
    let o = cx.own_permutation().waits("b_decrement", &["A"]).run().await?;
    cx.ran_under(&o, &["A", "B"], "read committed");
    let b = o.step("b_decrement")?;
    let q = final_quantity(cx, &o)?;
    cx.metric("b_waited", b.waited());
    cx.observe(msg::observed_atomic(waited_for_a(b.waited()), b.count()?, q));
    cx.check(q == START - 2, msg::final_is(START - 2));
    cx.anomaly(q != START - 2);
    Ok(())
}

async fn select_for_update(cx: &mut Cx<'_>) -> Result<()> {
    let o = cx.own_permutation().waits("b_read_for_update", &["A"]).run().await?;
    cx.ran_under(&o, &["A", "B"], "read committed");
    let b = o.step("b_read_for_update")?;
    let qb = b.int("quantity_on_hand")?;
    let q = final_quantity(cx, &o)?;
    cx.metric("b_waited", b.waited());
    cx.observe(msg::observed_select_for_update(waited_for_a(b.waited()), qb, q));
    cx.check(qb == START - 1, msg::b_reads_after(START - 1));
    cx.check(q == START - 2, msg::final_is(START - 2));
    cx.anomaly(q != START - 2);
    Ok(())
}

/// updated_at as the concurrency token. The application stamps it from its
/// own clock into a timestamp(0) column; the clock readings are fixed in the
/// spec (10:00:00.2 and 10:00:00.4) so the two saves land in the same second
/// on every run, as they would by chance in production.
async fn updated_at_token(cx: &mut Cx<'_>) -> Result<()> {
    let o = cx.own_permutation().run().await?;
    let read_a = o.step("a_open_form")?.text("updated_at")?;
    let read_b = o.step("b_open_form")?.text("updated_at")?;
    let after_a = o.step("stamp")?.text("updated_at")?;
    let (a_rows, b_rows) = (o.step("a_save_form")?.count()?, o.step("b_save_form")?.count()?);
    let address = o.step("order")?.text("delivery_address")?;
    cx.evidence(
        msg::ev_token(),
        vec![Phrase::Plain("updated_at".into()), msg::col_value().into()],
        vec![
            vec![msg::as_b_read().into(), read_b.clone().into()],
            vec![msg::after_a_save().into(), after_a.clone().into()],
        ],
    );
    cx.metric("rows_affected_a", a_rows);
    cx.metric("rows_affected_b", b_rows);
    cx.metric("equal_stamps", read_b == after_a);
    let lost = b_rows == 1 && address != NEW_ADDRESS;
    cx.observe(msg::observed_token(
        &read_b,
        &after_a,
        b_rows,
        if lost { msg::token_lost() } else { msg::token_kept() },
    ));
    cx.check(read_a == read_b, msg::same_form(&read_a, &read_b));
    cx.check(read_b == after_a, msg::same_stamp());
    cx.check(a_rows == 1 && b_rows == 1, msg::both_saves_ok());
    cx.check(lost, msg::address_lost());
    cx.anomaly(lost);
    if lost {
        cx.note(msg::token_note());
    }
    Ok(())
}

/// A corrects the address while B writes a note, each from the form it read:
/// once with one row-wide version, once with per-field checks.
async fn field_merge(cx: &mut Cx<'_>) -> Result<()> {
    let mut parts = Vec::new();
    for (label, part, a_step, b_step) in [
        (
            "field-merge/row-version",
            msg::part_row(),
            "a_save_address_if_version",
            "b_save_note_if_version",
        ),
        (
            "field-merge/per-field",
            msg::part_field(),
            "a_save_address_if_same",
            "b_save_note_if_same",
        ),
    ] {
        cx.narrate(msg::part(part.clone()));
        let o = cx.permutation(label).run().await?;
        let (a_rows, b_rows) = (o.step(a_step)?.count()?, o.step(b_step)?.count()?);
        let order = o.step("order")?;
        let (address, note) = (order.text("delivery_address")?, order.text("note")?);
        let landed = address == NEW_ADDRESS && note != "NULL";
        parts.push((part, a_rows, b_rows, landed, address, note));
    }
    cx.evidence(
        msg::ev_order(),
        vec![
            msg::col_approach().into(),
            msg::col_a_rows().into(),
            msg::col_b_rows().into(),
            Phrase::Plain("delivery_address".into()),
            Phrase::Plain("note".into()),
        ],
        parts
            .iter()
            .map(|(part, a, b, _, address, note)| {
                vec![
                    part.clone().into(),
                    a.to_string().into(),
                    b.to_string().into(),
                    address.clone().into(),
                    note.clone().into(),
                ]
            })
            .collect(),
    );
    let (row, field) = (&parts[0], &parts[1]);
    cx.metric("row_version_conflict", row.2 == 0);
    cx.metric("field_merge_conflict", field.2 == 0);
    cx.metric("both_changes_landed", field.3);
    cx.observe(msg::observed_merge(
        row.2,
        if row.2 == 0 {
            msg::merge_needless()
        } else {
            msg::merge_no_conflict()
        },
        if field.3 {
            msg::merge_landed()
        } else {
            msg::merge_not_landed()
        },
    ));
    cx.check(row.1 == 1 && row.2 == 0, msg::row_conflict());
    cx.check(field.1 == 1 && field.2 == 1 && field.3, msg::field_both_land());
    if row.2 == 0 {
        cx.note(msg::needless_note());
    }
    cx.anomaly(false);
    Ok(())
}

async fn optimistic_version(cx: &mut Cx<'_>) -> Result<()> {
    let o = cx.own_permutation().run().await?;
    let rb = o.step("b_read_versioned")?;
    let (qb, vb) = (rb.int("quantity_on_hand")?, rb.int("version")?);
    let (a_rows, b_rows) = (
        o.step("a_write_if_version")?.count()?,
        o.step("b_write_if_version")?.count()?,
    );
    let now = o.step("b_current")?;
    let q = final_quantity(cx, &o)?;
    // Checking rows affected is the point: 0 means a conflict, not success.
    if b_rows == 0 {
        cx.evidence(
            msg::ev_conflict(),
            vec![
                msg::col_value_set().into(),
                Phrase::Plain("quantity_on_hand".into()),
                Phrase::Plain("version".into()),
            ],
            vec![
                vec![
                    msg::b_wanted().into(),
                    (qb - 1).to_string().into(),
                    (vb + 1).to_string().into(),
                ],
                vec![msg::b_read().into(), qb.to_string().into(), vb.to_string().into()],
                vec![
                    msg::db_now().into(),
                    now.text("quantity_on_hand")?.into(),
                    now.text("version")?.into(),
                ],
            ],
        );
        cx.note(msg::conflict_note());
    }
    cx.metric("rows_affected_a", a_rows);
    cx.metric("rows_affected_b", b_rows);
    cx.observe(msg::observed_optimistic(a_rows, b_rows, q));
    cx.check(qb == START && vb == 1, msg::b_read_version(START, qb, vb));
    cx.check(a_rows == 1, msg::a_one_row());
    cx.check(b_rows == 0, msg::b_zero_rows());
    cx.check(q == START - 1, msg::final_stale_refused(START - 1));
    // Nothing was lost silently: B knows its write did not happen.
    cx.anomaly(b_rows != 0 && q != START - 2);
    Ok(())
}

mod msg {
    crate::messages! {
        prefix "lu";
        about() {
            en: "Lost update: two clerks decrement the same stock row (READ COMMITTED, REPEATABLE READ, and the fixes)",
            tr: "Kayıp güncelleme: iki görevli aynı stok satırını azaltır (READ COMMITTED, REPEATABLE READ ve çözümler)",
        }
        summary() {
            en: "two clerks remove one copy of the same book at once (36 on hand, 34 must remain)",
            tr: "iki depo görevlisi aynı kitabın stoğundan aynı anda birer kopya düşüyor (36 var, 34 kalmalı)",
        }
        observed_b_write_ok(q) {
            en: "B's UPDATE succeeded; final {q}",
            tr: "B'nin UPDATE'i başarılı oldu; sonuç {q}",
        }
        observed_b_write_failed(error, q) {
            en: "B's UPDATE failed: {error}; final {q}",
            tr: "B'nin UPDATE'i başarısız oldu: {error}; sonuç {q}",
        }
        waited_for_a() {
            en: "waited for A",
            tr: "A'yı bekledi",
        }
        did_not_wait_for_a() {
            en: "did not wait for A",
            tr: "A'yı beklemedi",
        }
        observed_atomic(waited, rows, q) {
            en: "B {waited}; B's UPDATE affected {rows} row(s); final {q}",
            tr: "B {waited}; B'nin UPDATE'i {rows} satırı etkiledi; sonuç {q}",
        }
        observed_select_for_update(waited, qb, q) {
            en: "B {waited}, then read {qb}; final {q}",
            tr: "B {waited}, sonra {qb} okudu; sonuç {q}",
        }
        observed_optimistic(a, b, q) {
            en: "A's versioned UPDATE affected {a} row(s), B's {b}; final {q}",
            tr: "A'nın sürümlü UPDATE'i {a}, B'ninki {b} satır etkiledi; sonuç {q}",
        }
        observed_token(read, after, b, fate) {
            en: "updated_at was {read} when B read it and {after} after A's save; B's conditional save affected {b} row(s); A's address {fate}",
            tr: "updated_at B okuduğunda {read}, A'nın kaydından sonra {after} idi; B'nin koşullu kaydı {b} satır etkiledi; A'nın adresi {fate}",
        }
        token_lost() {
            en: "was overwritten",
            tr: "ezildi",
        }
        token_kept() {
            en: "survived",
            tr: "korundu",
        }
        observed_merge(rows, conflict, landed) {
            en: "row-wide version: B's save affected {rows} row(s){conflict}; per-field checks: both changes {landed}",
            tr: "satır çapında sürüm: B'nin kaydı {rows} satır etkiledi{conflict}; alan bazında kontrol: iki değişiklik de {landed}",
        }
        merge_needless() {
            en: " (a needless conflict)",
            tr: " (gereksiz bir çakışma)",
        }
        merge_no_conflict() {
            en: " (no conflict)",
            tr: " (çakışma yok)",
        }
        merge_landed() {
            en: "landed",
            tr: "yazıldı",
        }
        merge_not_landed() {
            en: "did not both land",
            tr: "birlikte yazılamadı",
        }
        part(part) {
            en: "part: {part}",
            tr: "bölüm: {part}",
        }
        both_read(start, qa, qb) {
            en: "both sessions read {start} (A read {qa}, B read {qb})",
            tr: "iki oturum da {start} okur (A {qa}, B {qb} okudu)",
        }
        b_update_40001() {
            en: "B's UPDATE fails with 40001",
            tr: "B'nin UPDATE'i 40001 ile başarısız olur",
        }
        final_a_only(q) {
            en: "final {q} (A's decrement only)",
            tr: "sonuç {q} (yalnızca A'nın azaltması)",
        }
        rr_note() {
            en: "REPEATABLE READ: B's snapshot predates A's commit, so PostgreSQL refuses to update a row changed since; the application must retry the whole transaction (read included).",
            tr: "REPEATABLE READ: B'nin snapshot'ı A'nın commit'inden eski, bu yüzden PostgreSQL o zamandan beri değişmiş bir satırı güncellemeyi reddeder; uygulama bütün transaction'ı (okuma dahil) yeniden denemelidir.",
        }
        b_update_ok() {
            en: "B's UPDATE succeeds and B commits",
            tr: "B'nin UPDATE'i başarılı olur ve B commit eder",
        }
        final_one_lost(q) {
            en: "final {q}: one of the two decrements lost",
            tr: "sonuç {q}: iki azaltmadan biri kayboldu",
        }
        ev_audit() {
            en: "audit trail of stock_items book 1 (trigger-maintained)",
            tr: "1 numaralı kitabın stock_items denetim kaydı (trigger ile tutulur)",
        }
        audit_both() {
            en: "the audit trail holds both writes",
            tr: "denetim kaydında iki yazma da var",
        }
        audit_note(from1, to1, by1, from2, to2, by2) {
            en: "The audit trail shows two committed writes, {from1} → {to1} by {by1} and {from2} → {to2} by {by2}: the second wrote over the first without reading it, so one decrement is gone.",
            tr: "Denetim kaydı iki commit edilmiş yazma gösteriyor: {by1} tarafından {from1} → {to1} ve {by2} tarafından {from2} → {to2}: ikincisi birincinin üzerine onu okumadan yazdı, bu yüzden bir azaltma kayboldu.",
        }
        audit_note_kept(from1, to1, by1, from2, to2, by2) {
            en: "The audit trail shows two committed writes, {from1} → {to1} by {by1} and {from2} → {to2} by {by2}: the second started from what the first left, so no decrement is lost.",
            tr: "Denetim kaydı iki commit edilmiş yazma gösteriyor: {by1} tarafından {from1} → {to1} ve {by2} tarafından {from2} → {to2}: ikincisi birincinin bıraktığından başladı, bu yüzden hiçbir azaltma kaybolmadı.",
        }
        final_is(q) {
            en: "final {q}",
            tr: "sonuç {q}",
        }
        b_reads_after(q) {
            en: "B reads {q} after A commits",
            tr: "A commit ettikten sonra B {q} okur",
        }
        conflict_note() {
            en: "0 rows affected: conflict, reported to the user with the three value sets",
            tr: "0 satır etkilendi: çakışma, kullanıcıya üç değer kümesiyle bildirilir",
        }
        ev_conflict() {
            en: "B's conflict (what the application shows)",
            tr: "B'nin çakışması (uygulamanın gösterdiği)",
        }
        col_value_set() {
            en: "value set",
            tr: "değer kümesi",
        }
        b_wanted() {
            en: "B wanted to write",
            tr: "B'nin yazmak istediği",
        }
        b_read() {
            en: "B originally read",
            tr: "B'nin başta okuduğu",
        }
        db_now() {
            en: "database holds now",
            tr: "veritabanında şu an olan",
        }
        b_read_version(start, q, v) {
            en: "B read {start} at version 1 (read {q} at version {v})",
            tr: "B, 1. sürümde {start} okur ({v}. sürümde {q} okudu)",
        }
        a_one_row() {
            en: "A's UPDATE affects 1 row",
            tr: "A'nın UPDATE'i 1 satırı etkiler",
        }
        b_zero_rows() {
            en: "B's UPDATE affects 0 rows (conflict detected)",
            tr: "B'nin UPDATE'i 0 satırı etkiler (çakışma yakalandı)",
        }
        final_stale_refused(q) {
            en: "final {q} (B's stale write refused)",
            tr: "sonuç {q} (B'nin bayat yazması reddedildi)",
        }
        ev_token() {
            en: "the token B checked against",
            tr: "B'nin karşılaştırdığı token",
        }
        col_value() {
            en: "value",
            tr: "değer",
        }
        as_b_read() {
            en: "as B read it",
            tr: "B'nin okuduğu hâli",
        }
        after_a_save() {
            en: "after A's save",
            tr: "A kaydettikten sonra",
        }
        same_form(a, b) {
            en: "A and B open the same form (updated_at {a} and {b})",
            tr: "A ve B aynı formu açar (updated_at {a} ve {b})",
        }
        same_stamp() {
            en: "A's save leaves the same second-precision stamp",
            tr: "A'nın kaydı saniye hassasiyetindeki damgayı aynı bırakır",
        }
        both_saves_ok() {
            en: "both conditional saves succeed",
            tr: "iki koşullu kayıt da başarılı olur",
        }
        address_lost() {
            en: "A's address change is silently lost",
            tr: "A'nın adres değişikliği sessizce kaybolur",
        }
        token_note() {
            en: "An integer version (see optimistic-version) changes on every write whatever the clock says; a timestamp only when the clock has moved past its precision, and app servers' clocks disagree besides.",
            tr: "Tamsayı bir versiyon (bkz. optimistic-version) saat ne derse desin her yazmada değişir; bir zaman damgası ise yalnızca saat hassasiyetinin ötesine geçtiğinde değişir, üstelik uygulama sunucularının saatleri birbirini tutmaz.",
        }
        part_row() {
            en: "one row-wide version",
            tr: "satır genelinde tek versiyon",
        }
        part_field() {
            en: "per-field checks",
            tr: "alan bazında kontroller",
        }
        needless_note() {
            en: "0 rows: conflict reported to the user, although A changed another field",
            tr: "0 satır: A başka bir alanı değiştirmiş olsa da kullanıcıya çakışma bildirildi",
        }
        ev_order() {
            en: "the order after both saves",
            tr: "iki kayıttan sonra sipariş",
        }
        col_approach() {
            en: "approach",
            tr: "yaklaşım",
        }
        col_a_rows() {
            en: "A's rows",
            tr: "A'nın satırları",
        }
        col_b_rows() {
            en: "B's rows",
            tr: "B'nin satırları",
        }
        row_conflict() {
            en: "with one row-wide version B gets a conflict",
            tr: "satır genelinde tek versiyonla B çakışma alır",
        }
        field_both_land() {
            en: "with per-field checks both changes land",
            tr: "alan bazında kontrollerle iki değişiklik de yerine geçer",
        }
    }
}
