//! The four timeouts, each bounding a wait, each shown releasing the locks
//! held (lab/timeouts.spec).
use std::time::Duration;

use anyhow::Result;

use super::{Cx, Scenario};
use crate::engine::ProbeQuery;
use crate::report::millis;
use crate::specfile::Param;

pub static SCENARIO: Scenario = Scenario {
    name: "timeouts",
    about: msg::about,
    summary: msg::summary,
    readme: "Each timeout ends a wait (55P03, 57014, a terminated session) and each shows the locks are free \
             again. `transaction_timeout` exists from PostgreSQL 17: on older servers that variant is reported \
             as skipped, which does not fail the run.",
    spec: Some("timeouts.spec"),
    variants: VARIANTS,
    options: None,
};

crate::variants! {
    prefix "to";
    lock_timeout "lock-timeout" {
        expected => {
            en: "B's UPDATE waits for A's row lock, then fails with 55P03; after ROLLBACK B holds no locks",
            tr: "B'nin UPDATE'i A'nın satır kilidini bekler, sonra 55P03 ile düşer; ROLLBACK sonrası B hiç kilit tutmaz",
        },
        explain => {
            en: "lock_timeout bounds how long one statement waits for a lock (55P03). The statement fails; the transaction must roll back, which releases what it held.",
            tr: "lock_timeout bir komutun kilit için ne kadar bekleyeceğini sınırlar (55P03). Komut düşer; transaction geri alınmalı, bu da tuttuklarını bırakır.",
        },
    }
    statement_timeout "statement-timeout" {
        expected => {
            en: "B's long statement is cancelled with 57014; the error aborts B's transaction at once, which frees its row lock (A does not wait), but B must still ROLLBACK (until then 25P02)",
            tr: "B'nin uzun komutu 57014 ile iptal edilir; hata B'nin transaction'ını hemen iptal eder ve satır kilidini bırakır (A beklemez), ama B yine de ROLLBACK demeli (o zamana kadar 25P02)",
        },
        explain => {
            en: "statement_timeout cancels a statement that runs too long (57014). The error aborts the transaction at once, releasing its locks; the session must still ROLLBACK (25P02 until then).",
            tr: "statement_timeout çok uzun süren bir komutu iptal eder (57014). Hata transaction'ı hemen iptal eder ve kilitlerini bırakır; oturum yine de ROLLBACK demeli (o zamana kadar 25P02).",
        },
    }
    idle_in_transaction "idle-in-transaction" {
        expected => {
            en: "B, idle in a transaction holding a row lock, is terminated by the server; A, waiting on that row, goes on; B's next statement finds the connection gone",
            tr: "satır kilidi tutarak transaction içinde boşta bekleyen B'yi sunucu sonlandırır; o satırı bekleyen A devam eder; B'nin sonraki komutu bağlantıyı kopmuş bulur",
        },
        explain => {
            en: "idle_in_transaction_session_timeout ends a session that sits in an open transaction, the usual cause of locks held for ever and of VACUUM held back. The server terminates it and its locks are released.",
            tr: "idle_in_transaction_session_timeout açık bir transaction'da oturup kalan oturumu sonlandırır; sonsuza dek tutulan kilitlerin ve geride kalan VACUUM'un olağan sebebi budur. Sunucu oturumu bitirir, kilitleri bırakılır.",
        },
    }
    transaction_timeout "transaction-timeout" {
        expected => {
            en: "PostgreSQL 17+: B's transaction is ended by the server at transaction_timeout, freeing the row A waits for (skipped on older servers)",
            tr: "PostgreSQL 17+: B'nin transaction'ı transaction_timeout'ta sunucu tarafından sonlandırılır, A'nın beklediği satır serbest kalır (eski sunucularda atlanır)",
        },
        explain => {
            en: "transaction_timeout (PostgreSQL 17 and later) bounds a whole transaction, busy or idle; at the limit the server ends the session and its locks go.",
            tr: "transaction_timeout (PostgreSQL 17 ve sonrası) meşgul ya da boşta bütün bir transaction'ı sınırlar; sınırda sunucu oturumu bitirir ve kilitleri gider.",
        },
    }
}

fn locks(o: &crate::engine::Observation, probe: &str) -> i64 {
    o.probe(probe)
        .and_then(|r| r.get(0, "locks")?.parse().ok())
        .unwrap_or(-1)
}

async fn lock_timeout(cx: &mut Cx<'_>) -> Result<()> {
    let t = cx.opts.timeout;
    cx.metric("timeout_ms", t.as_millis() as u64);
    let o = cx
        .own_permutation()
        .bind("timeout", Param::millis(t))
        .waits_within("b_lock", &["A"], Some(t * 3))
        .probe("b_locks", "b_rollback", ProbeQuery::LocksHeld("B".into()))
        .run()
        .await?;
    let b = o.step("b_lock")?;
    let b_locks = locks(&o, "b_locks");
    cx.metric("waited_ms", millis(b.took()));
    cx.metric("b_locks_after_rollback", b_locks);
    cx.observe(match b.error() {
        Some(e) => msg::observed_lock(format!("{:.0}", millis(b.took())), e.line(), b_locks),
        None => msg::observed_update_ok(),
    });
    cx.check(b.failed_with("55P03"), msg::b_55p03());
    cx.check(b.took() >= t, msg::not_sooner_lock());
    cx.check(b_locks == 0, msg::no_locks());
    cx.anomaly(false);
    Ok(())
}

async fn statement_timeout(cx: &mut Cx<'_>) -> Result<()> {
    let t = cx.opts.timeout;
    cx.metric("timeout_ms", t.as_millis() as u64);
    let o = cx
        .own_permutation()
        .bind("timeout", Param::millis(t))
        // The statement's own work is long (ten times the timeout); the server cancels it.
        .bind("long_s", Param::Num(t.as_secs_f64() * 10.0))
        // A step is complete once the server is ready again, after the abort:
        // the locks are looked at right after the cancelled statement.
        .probe("aborted", "b_long_query", ProbeQuery::LocksHeld("B".into()))
        .probe("b_locks", "b_rollback", ProbeQuery::LocksHeld("B".into()))
        .run()
        .await?;
    let (long, next, a) = (o.step("b_long_query")?, o.step("b_still_there")?, o.step("a_lock")?);
    let (held, b_locks) = (locks(&o, "aborted"), locks(&o, "b_locks"));
    cx.metric("waited_ms", millis(long.took()));
    cx.metric("b_locks_while_aborted", held);
    cx.metric("b_locks_after_rollback", b_locks);
    cx.observe(match long.error() {
        Some(e) => msg::observed_statement(
            e.line(),
            format!("{:.0}", millis(long.took())),
            held,
            super::context::waited_for(a.waited()),
            match next.error() {
                Some(e) => msg::next_failed(e.code.clone().unwrap_or_default()),
                None => msg::next_ok(),
            },
        ),
        None => msg::observed_statement_ok(),
    });
    cx.check(long.failed_with("57014"), msg::cancelled());
    cx.check(long.took() >= t, msg::not_sooner_statement());
    cx.check(held == 0, msg::aborted_no_locks());
    cx.check(next.failed_with("25P02"), msg::rollback_first());
    cx.check(b_locks == 0, msg::no_locks());
    cx.anomaly(false);
    Ok(())
}

/// The session a timeout ends, and its steps.
struct Victim<'a> {
    label: &'a str,
    name: &'a str,
    /// Its step from whose sending lab's clock counts the timeout.
    from: &'a str,
    /// Its step after which the server's clock is read.
    timer: &'a str,
    clock: Clock,
    /// Its step that speaks after the timeout.
    check: &'a str,
}

/// Where a victim's timeout starts on the server's clock: the moment its
/// backend went idle in its transaction (idle_in_transaction_session_timeout),
/// or the start of its SET (transaction_timeout, set inside the transaction,
/// starts counting as the SET runs).
#[derive(Clone, Copy)]
enum Clock {
    Idle,
    Set,
}

/// A session's backend as an [`ProbeQuery::Activity`] probe read it.
struct Activity {
    state: String,
    query_start: f64,
    state_change: f64,
}

fn activity(o: &crate::engine::Observation, probe: &str) -> Option<Activity> {
    let r = o.probe(probe)?;
    let secs = |col| r.get(0, col)?.parse::<f64>().ok();
    Some(Activity {
        state: r.get(0, "state")?.to_string(),
        query_start: secs("query_start")?,
        state_change: secs("state_change")?,
    })
}

/// What the server's clock says of A's statement against the victim's
/// timeout, which starts at `clock` (seconds since the epoch) and cannot end
/// the victim sooner than `t` after: when A's backend began the statement
/// and, if it had answered when the server was asked, when it ended, both
/// after `clock`.
#[derive(Debug)]
struct ServerSays {
    began: Duration,
    ended: Option<Duration>,
    t: Duration,
}

impl ServerSays {
    /// A's statement began before the timeout could fire and ended after:
    /// it met the victim's lock and outlasted it.
    fn spanned(&self) -> bool {
        self.began < self.t && self.ended.is_some_and(|e| e >= self.t)
    }

    /// A's backend began its statement half the timeout or more after the
    /// clock started (a starved backend): the victim may be gone before A
    /// asks for the row.
    fn late(&self) -> bool {
        self.began >= self.t / 2
    }
}

fn server_says(clock: f64, a: &Activity, t: Duration) -> ServerSays {
    let after = |at: f64| Duration::from_secs_f64((at - clock).max(0.0));
    // Only an answered statement has its end in state_change.
    let answered = a.state == "idle in transaction" || a.state == "idle";
    ServerSays {
        began: after(a.query_start),
        ended: answered.then(|| after(a.state_change)),
        t,
    }
}

/// A victim session sets the timeout, locks the row and sits in its
/// transaction; A waits for the row until the server ends the victim. The
/// timeout's clock starts no sooner than `from`, the victim's step, was sent,
/// and on the server's clock as `timer`, the victim's SET, says (`clock`).
async fn ended_by_server(cx: &mut Cx<'_>, v: Victim<'_>) -> Result<()> {
    let Victim {
        label,
        name: victim,
        from,
        timer,
        clock,
        check,
    } = v;
    let t = cx.opts.timeout;
    cx.metric("timeout_ms", t.as_millis() as u64);
    let o = cx
        .permutation(label)
        .bind("timeout", Param::millis(t))
        // Seen if lab looks in time: checked below, with what lab sent late.
        .may_wait_within("a_lock", &[victim], Some(t * 5 + Duration::from_secs(1)))
        .probe("victim", timer, ProbeQuery::Activity(victim.into()))
        .probe("a", "a_lock", ProbeQuery::Activity("A".into()))
        .run()
        .await?;
    let (a, seen, start) = (o.step("a_lock")?, o.step(check)?, o.step(from)?);
    // A's wait must be seen from the server, unless lab sent A's statement,
    // or first asked the server about it, so late (a loaded runner: half the
    // timeout after the victim's step) that the server could end the victim
    // before lab looked. A server that lets A through at once answers before
    // lab asks: no look, not late; but a starved lab may not run again until
    // A has answered: then the answer is its first chance to look.
    let first_look = a.looked.unwrap_or(a.done);
    let lab_late = a.sent.saturating_sub(start.sent) >= t / 2 || first_look.saturating_sub(start.sent) >= t / 2;
    // The server's own clock, which a starved lab does not slow down: A's
    // statement ran across the moment the victim's timeout could fire, or A's
    // backend began it late.
    let says = match (activity(&o, "victim"), activity(&o, "a")) {
        (Some(v), Some(a)) => Some(server_says(
            match clock {
                Clock::Idle => v.state_change,
                Clock::Set => v.query_start,
            },
            &a,
            t,
        )),
        _ => None,
    };
    let spanned = says.as_ref().is_some_and(ServerSays::spanned);
    let late = lab_late || says.as_ref().is_some_and(ServerSays::late);
    if !a.waited() {
        // Said only when lab did not see the wait: the server's clock, read
        // once A had answered.
        if let Some(s) = &says {
            let ms = |d: Duration| format!("{:.0}", millis(d));
            cx.note(msg::unseen(
                victim,
                ms(s.began),
                s.ended.map_or_else(|| "?".into(), ms),
                match (spanned, late) {
                    (true, _) => msg::unseen_spanned(victim),
                    (false, true) => msg::unseen_late(),
                    (false, false) => msg::unseen_neither(victim),
                },
            ));
        }
    }
    cx.check(
        a.waited_for().is_some_and(|by| by == [victim.to_string()]) || (!a.waited() && (spanned || late)),
        msg::a_waited(victim),
    );
    let gone = match o.pid_of(victim) {
        Some(pid) => cx.await_gone(pid).await?,
        None => false,
    };
    cx.metric("a_waited_ms", millis(a.took()));
    cx.metric("b_terminated", gone);
    cx.observe(msg::observed_ended(
        format!("{:.0}", millis(a.took())),
        victim,
        match seen.error() {
            Some(e) => msg::seen(e.line()),
            None => msg::seen_ok(),
        },
    ));
    // How long the lock lasted, measured from the earliest moment the
    // server's clock can have started: on a loaded machine lab may send A's
    // statement late, which shortens A's own wait, never this.
    let lasted = a.done.saturating_sub(start.sent);
    cx.metric("lock_lasted_ms", millis(lasted));
    cx.check(a.ok() && lasted >= t / 2, msg::lasted(victim));
    cx.check(seen.error().is_some_and(|e| e.connection_lost), msg::conn_gone(victim));
    cx.check(gone, msg::terminated(victim));
    cx.anomaly(false);
    Ok(())
}

async fn idle_in_transaction(cx: &mut Cx<'_>) -> Result<()> {
    // Idle in transaction from the end of its SET on, which comes once it
    // holds the row (a loaded machine's pause before the UPDATE cannot end it first).
    ended_by_server(
        cx,
        Victim {
            label: "idle-in-transaction",
            name: "B_idle",
            from: "bi_set",
            timer: "bi_set",
            clock: Clock::Idle,
            check: "bi_still_there",
        },
    )
    .await
}

async fn transaction_timeout(cx: &mut Cx<'_>) -> Result<()> {
    if cx.env.server.version_num < 170000 {
        let version = cx.env.server.version.clone();
        cx.skip(msg::no_transaction_timeout(version));
        return Ok(());
    }
    // lab's clock: from the start of its transaction; the server's: from the
    // SET, which starts the timeout of a transaction already open.
    ended_by_server(
        cx,
        Victim {
            label: "transaction-timeout",
            name: "B_xact",
            from: "bx_begin",
            timer: "bx_set",
            clock: Clock::Set,
            check: "bx_still_there",
        },
    )
    .await
}

mod msg {
    crate::messages! {
        prefix "to";
        about() {
            en: "Four timeouts that end a wait and free its locks",
            tr: "Bir beklemeyi bitirip kilitleri bırakan dört zaman aşımı",
        }
        summary() {
            en: "lock_timeout, statement_timeout, idle_in_transaction_session_timeout and transaction_timeout",
            tr: "lock_timeout, statement_timeout, idle_in_transaction_session_timeout ve transaction_timeout",
        }
        observed_lock(ms, error, locks) {
            en: "B waited {ms} ms and failed: {error}; B holds {locks} lock(s) after ROLLBACK",
            tr: "B {ms} ms bekledi ve başarısız oldu: {error}; ROLLBACK sonrası B {locks} kilit tutuyor",
        }
        observed_update_ok() {
            en: "B's UPDATE succeeded",
            tr: "B'nin UPDATE'i başarılı oldu",
        }
        observed_statement(error, ms, locks, waited, next) {
            en: "B's statement failed after {ms} ms: {error}; the aborted transaction held {locks} lock(s); A {waited} B; B's next statement {next}",
            tr: "B'nin komutu {ms} ms sonra başarısız oldu: {error}; iptal edilen transaction {locks} kilit tutuyordu; A, B'yi {waited}; B'nin sonraki komutu {next}",
        }
        next_failed(code) {
            en: "failed with {code}",
            tr: "{code} ile düştü",
        }
        next_ok() {
            en: "succeeded",
            tr: "başarılı oldu",
        }
        observed_statement_ok() {
            en: "B's statement completed",
            tr: "B'nin komutu tamamlandı",
        }
        observed_ended(ms, victim, seen) {
            en: "A waited {ms} ms until the server ended {victim}; {seen}",
            tr: "A, sunucu {victim} oturumunu sonlandırana kadar {ms} ms bekledi; {seen}",
        }
        seen_ok() {
            en: "its next statement succeeded",
            tr: "sonraki komutu başarılı oldu",
        }
        seen(what) {
            en: "its next statement: {what}",
            tr: "sonraki komutu: {what}",
        }
        no_transaction_timeout(version) {
            en: "transaction_timeout exists from PostgreSQL 17; this server is {version}",
            tr: "transaction_timeout PostgreSQL 17'den beri var; bu sunucu {version}",
        }
        b_55p03() {
            en: "B fails with 55P03",
            tr: "B 55P03 ile başarısız olur",
        }
        not_sooner_lock() {
            en: "B gave up no sooner than lock_timeout",
            tr: "B, lock_timeout'tan önce vazgeçmedi",
        }
        no_locks() {
            en: "B holds no locks after ROLLBACK",
            tr: "ROLLBACK'ten sonra B hiçbir kilit tutmaz",
        }
        cancelled() {
            en: "B's statement is cancelled with 57014",
            tr: "B'nin komutu 57014 ile iptal edilir",
        }
        not_sooner_statement() {
            en: "no sooner than statement_timeout",
            tr: "statement_timeout'tan önce değil",
        }
        aborted_no_locks() {
            en: "the aborted transaction holds no locks",
            tr: "iptal edilmiş transaction hiçbir kilit tutmaz",
        }
        rollback_first() {
            en: "B must ROLLBACK first (25P02)",
            tr: "B önce ROLLBACK yapmalıdır (25P02)",
        }
        a_waited(victim) {
            en: "A waits for {victim} (pg_blocking_pids says so, or the server's clock shows A's statement running across the moment {victim}'s timeout could fire; unless A's statement came too late to wait)",
            tr: "A, {victim} oturumunu bekler (pg_blocking_pids söyler ya da sunucunun saati A'nın komutunun {victim} zaman aşımının dolabileceği anı kapsadığını gösterir; A'nın komutu beklenemeyecek kadar geç gelmediyse)",
        }
        unseen(victim, began, ended, verdict) {
            en: "lab did not see A wait; by the server's clock A's UPDATE began {began} ms and ended {ended} ms after {victim}'s timeout started: {verdict}",
            tr: "lab A'nın beklediğini görmedi; sunucunun saatine göre A'nın UPDATE'i {victim} zaman aşımı başladıktan {began} ms sonra başladı, {ended} ms sonra bitti: {verdict}",
        }
        unseen_spanned(victim) {
            en: "it ran across the moment {victim}'s timeout could fire, so it waited for {victim}'s lock",
            tr: "{victim} zaman aşımının dolabileceği anı kapsadı, yani {victim} oturumunun kilidini bekledi",
        }
        unseen_late() {
            en: "it began half the timeout late or more (a starved backend), so it need not have waited",
            tr: "zaman aşımının yarısı kadar ya da daha geç başladı (CPU bulamayan bir backend), beklemesi gerekmeyebilirdi",
        }
        unseen_neither(victim) {
            en: "it neither began late nor outlasted {victim}'s timeout",
            tr: "ne geç başladı ne de {victim} zaman aşımını aştı",
        }
        lasted(victim) {
            en: "{victim}'s lock lasted until its timeout, then A got the row",
            tr: "{victim} oturumunun kilidi zaman aşımına kadar sürdü, sonra A satırı aldı",
        }
        conn_gone(victim) {
            en: "{victim}'s connection is gone when it next speaks",
            tr: "{victim} tekrar konuştuğunda bağlantısı yok olmuştur",
        }
        terminated(victim) {
            en: "the server terminated {victim}'s backend",
            tr: "sunucu {victim} oturumunun backend'ini sonlandırdı",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(state: &str, query_start: f64, state_change: f64) -> Activity {
        Activity {
            state: state.into(),
            query_start,
            state_change,
        }
    }

    const T: Duration = Duration::from_millis(300);

    #[test]
    fn a_statement_that_outlasts_the_moment_the_timeout_fires_spanned_it() {
        // Began 103 ms after the victim went idle, answered at 301 ms.
        let s = server_says(1000.0, &a("idle in transaction", 1000.103, 1000.301), T);
        assert!(s.spanned() && !s.late(), "{s:?}");
    }

    #[test]
    fn a_statement_answered_at_once_did_not() {
        let s = server_says(1000.0, &a("idle in transaction", 1000.002, 1000.0025), T);
        assert!(!s.spanned() && !s.late(), "{s:?}");
    }

    #[test]
    fn a_statement_still_running_has_no_end_to_read() {
        // Seen while it waits: state_change is its start.
        let s = server_says(1000.0, &a("active", 1000.002, 1000.002), T);
        assert!(s.ended.is_none() && !s.spanned(), "{s:?}");
    }

    #[test]
    fn a_backend_that_began_half_the_timeout_late_is_late() {
        let s = server_says(1000.0, &a("idle in transaction", 1000.160, 1000.161), T);
        assert!(!s.spanned() && s.late(), "{s:?}");
        // Began after the timeout fired: late, and nothing spanned.
        let s = server_says(1000.0, &a("idle in transaction", 1000.350, 1000.351), T);
        assert!(!s.spanned() && s.late(), "{s:?}");
    }
}
