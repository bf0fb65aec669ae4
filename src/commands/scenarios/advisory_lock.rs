//! Advisory locks: a job that must run on one instance only (lab/advisory-lock.spec).
use anyhow::Result;

use super::{Cx, Scenario};
use crate::engine::{Observation, ProbeQuery};

pub static SCENARIO: Scenario = Scenario {
    name: "advisory-lock",
    about: msg::about,
    summary: msg::summary,
    readme: "Three instances of the nightly sync: exactly one gets `pg_try_advisory_xact_lock`. A session-level \
             lock left on a pooled connection skips the next run although nothing runs, until the pool's reset.",
    spec: Some("advisory-lock.spec"),
    variants: VARIANTS,
    options: None,
};

crate::variants! {
    prefix "al";
    try_xact_lock "try-xact-lock" {
        expected => {
            en: "exactly one instance gets pg_try_advisory_xact_lock and runs, two skip; the lock goes with the transaction, so the next run gets it",
            tr: "pg_try_advisory_xact_lock'u tam olarak bir örnek alır ve çalışır, ikisi atlar; kilit transaction'la gider, sonraki çalıştırma alır",
        },
        explain => {
            en: "An advisory lock is a lock on a number the application chooses. pg_try_advisory_xact_lock never waits and disappears with the transaction, even if the connection dies: the one that gets it runs, the others skip.",
            tr: "Advisory lock, uygulamanın seçtiği bir sayı üzerindeki kilittir. pg_try_advisory_xact_lock beklemez ve bağlantı kopsa bile transaction'la birlikte kaybolur: alan çalışır, diğerleri atlar.",
        },
    }
    session_lock_pooled "session-lock-pooled" {
        expected => {
            en: "a session-level lock left behind on a pooled connection skips the next run although nothing runs; after the pool's reset (pg_advisory_unlock_all) the next run goes ahead",
            tr: "havuzdaki bir bağlantıda kalan oturum seviyesi kilit, hiçbir şey çalışmazken sonraki çalıştırmayı atlatır; havuzun sıfırlamasından (pg_advisory_unlock_all) sonra çalıştırma devam eder",
        },
        explain => {
            en: "A session-level advisory lock lives as long as the connection. In a pool the connection outlives the job, so the lock does too and skips the next run. Unlock explicitly, reset pooled connections (DISCARD ALL), or use the transaction-level lock.",
            tr: "Oturum seviyesi advisory lock bağlantı yaşadıkça yaşar. Havuzda bağlantı işten uzun yaşar, kilit de öyle, sonraki çalıştırmayı atlatır. Açıkça bırak, havuz bağlantılarını sıfırla (DISCARD ALL) ya da transaction seviyesi kilidi kullan.",
        },
    }
}

fn got(o: &Observation, step: &str) -> Result<bool> {
    Ok(o.step(step)?.text("got")? == "t")
}

fn holders(cx: &Cx<'_>) -> Result<ProbeQuery> {
    Ok(ProbeQuery::Sql(
        cx.sql("advisory-lock.sql")?.get("holders")?.to_string(),
    ))
}

async fn try_xact_lock(cx: &mut Cx<'_>) -> Result<()> {
    let q = holders(cx)?;
    let o = cx
        .own_permutation()
        .probe("while", "i1_sync", q.clone())
        .probe("after", "i2_commit_next", q)
        .run()
        .await?;
    cx.ran_under(&o, &["instance-1", "instance-2", "instance-3"], "read committed");
    let mut winners = Vec::new();
    for (name, step) in [
        ("instance-1", "i1_try"),
        ("instance-2", "i2_try"),
        ("instance-3", "i3_try"),
    ] {
        if got(&o, step)? {
            winners.push(name.to_string());
        }
    }
    let (ran, skipped) = (winners.len(), 3 - winners.len());
    let next_got = got(&o, "i2_try_next")?;
    let left = o.probe("after").map_or(0, |r| r.rows.len());
    if let Some(held) = o.probe("while") {
        cx.evidence_sessions(msg::ev_while(), held, &o);
    }
    cx.metric("ran", ran);
    cx.metric("skipped", skipped);
    cx.observe(msg::observed_xact(
        if winners.is_empty() {
            "-".to_string()
        } else {
            winners.join(", ")
        },
        skipped,
        if next_got { msg::got() } else { msg::did_not_get() },
    ));
    cx.check(ran == 1 && skipped == 2, msg::one_runs());
    cx.check(next_got, msg::released());
    cx.check(left == 0, msg::none_left());
    cx.anomaly(ran != 1);
    Ok(())
}

async fn session_lock_pooled(cx: &mut Cx<'_>) -> Result<()> {
    cx.pooler_changes(msg::pooler_changes());
    let q = holders(cx)?;
    let o = cx.own_permutation().probe("idle", "pooled_sync", q).run().await?;
    let idle = o.probe("idle").cloned();
    if let Some(held) = &idle {
        cx.evidence_sessions(msg::ev_idle(), held, &o);
    }
    let (first, second) = (got(&o, "other_try")?, got(&o, "other_try_again")?);
    // Last night's job ran; tonight's runs each ran if they got the lock.
    cx.metric("ran", 1 + usize::from(first) + usize::from(second));
    cx.metric("skipped", usize::from(!first) + usize::from(!second));
    cx.observe(msg::observed_pooled(
        if first { msg::not_skipped() } else { msg::skipped_idle() },
        if second { msg::ran() } else { msg::skipped_again() },
    ));
    let still_held = idle.is_some_and(|r| !r.rows.is_empty());
    if still_held && !first {
        cx.note(msg::pooled_note());
    }
    cx.check(still_held, msg::still_holds());
    cx.check(!first, msg::next_skipped());
    cx.check(second, msg::after_reset());
    cx.anomaly(!first);
    Ok(())
}

mod msg {
    crate::messages! {
        prefix "al";
        pooler_changes() {
            en: "behind a transaction pooler the session-level lock stays with the server connection that took it, not with the client: another client's transaction may run on that connection (and get the lock again), the pool reset may run on another one (and release nothing), as PgBouncer documents for transaction mode; use pg_try_advisory_xact_lock",
            tr: "transaction pooler arkasında oturum düzeyindeki kilit istemcide değil onu alan sunucu bağlantısında kalır: başka bir istemcinin transaction'ı o bağlantıda çalışabilir (ve kilidi yeniden alır), havuz sıfırlaması başka bir bağlantıda çalışabilir (ve hiçbir şey bırakmaz); PgBouncer transaction modu için bunu belgeler; pg_try_advisory_xact_lock kullanın",
        }
        about() {
            en: "Advisory locks: one instance of the nightly job, and the pooled-connection pitfall",
            tr: "Advisory lock'lar: gece işinin tek kopyası ve havuzdaki bağlantı tuzağı",
        }
        summary() {
            en: "three instances start the nightly stock sync together; an advisory lock lets one run",
            tr: "gece stok senkronizasyonunun üç örneği birlikte başlar; bir advisory lock birini çalıştırır",
        }
        observed_xact(winners, skipped, got) {
            en: "{winners} ran, {skipped} skipped; after COMMIT the next run {got} the lock",
            tr: "{winners} çalıştı, {skipped} atladı; COMMIT sonrası sonraki çalıştırma kilidi {got}",
        }
        got() {
            en: "got",
            tr: "aldı",
        }
        did_not_get() {
            en: "did not get",
            tr: "alamadı",
        }
        observed_pooled(first, second) {
            en: "the next run on another connection was {first}; after the pool reset it {second}",
            tr: "başka bağlantıdaki sonraki çalıştırma {first}; havuz sıfırlandıktan sonra {second}",
        }
        not_skipped() {
            en: "not skipped",
            tr: "atlanmadı",
        }
        skipped_idle() {
            en: "skipped though nothing ran",
            tr: "hiçbir şey çalışmazken atlandı",
        }
        ran() {
            en: "ran",
            tr: "çalıştı",
        }
        skipped_again() {
            en: "was skipped again",
            tr: "yine atlandı",
        }
        ev_while() {
            en: "advisory lock while the sync ran (pg_locks)",
            tr: "senkronizasyon çalışırken advisory lock (pg_locks)",
        }
        one_runs() {
            en: "exactly one runs and two skip",
            tr: "tam olarak biri çalışır, ikisi atlar",
        }
        released() {
            en: "the lock is released with the transaction",
            tr: "kilit transaction ile birlikte bırakılır",
        }
        none_left() {
            en: "no advisory lock is left after the transactions end",
            tr: "transaction'lar bittikten sonra hiçbir advisory lock kalmaz",
        }
        pooled_note() {
            en: "last night's job took a session-level lock and never unlocked it; its connection went back to the pool, open and idle, still holding it",
            tr: "dünkü iş oturum düzeyinde bir kilit aldı ve hiç bırakmadı; bağlantısı havuza açık ve boşta döndü, kilidi hâlâ tutuyor",
        }
        ev_idle() {
            en: "advisory locks while nothing runs (pg_locks)",
            tr: "hiçbir şey çalışmazken advisory lock'lar (pg_locks)",
        }
        still_holds() {
            en: "the idle pooled connection still holds the lock",
            tr: "havuzdaki boşta bağlantı kilidi hâlâ tutuyor",
        }
        next_skipped() {
            en: "the next run is skipped while the pooled connection holds the lock",
            tr: "havuzdaki bağlantı kilidi tuttuğu sürece sonraki çalıştırma atlanır",
        }
        after_reset() {
            en: "after the reset the next run goes ahead",
            tr: "sıfırlamadan sonra sonraki çalıştırma devam eder",
        }
    }
}
