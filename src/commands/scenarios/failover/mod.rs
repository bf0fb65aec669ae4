//! What an HA cluster's failover does to acknowledged writes
//! (lab/failover.sql), on lab's own cluster: Patroni and etcd, three
//! PostgreSQL nodes (src/postgres/patroni.rs). A writer (W) records what
//! every COMMIT answered, the node that answered and the WAL position; lab
//! makes the failure happen at a moment the servers confirm (a walsender
//! stopped, a commit seen waiting in SyncRep, replay paused), then reads
//! back which rows the new primary holds, and the old one once it has
//! rejoined. Verdicts come from those rows, SQLSTATEs, LSNs and Patroni's
//! own state, never from how long something took; the times are metrics.
use std::time::Duration;

use anyhow::Result;

use super::{Cx, Options, Scenario};

mod fx;
mod msg;
mod opts;
pub mod verdict;
mod writer;

pub use fx::release;
use fx::{Fx, HA_DEADLINE};
use opts::FailoverOpts;
use verdict::{Outcome, Tally, Write, ranges, tally, window_around};
use writer::Writer;

pub static SCENARIO: Scenario = Scenario {
    name: "failover",
    about: msg::about,
    summary: msg::summary,
    readme: "lab's own HA cluster (Patroni 3 and etcd, three PostgreSQL nodes in namespaces of lab's own, \
             kept across variants, nodes rejoined with pg_rewind): a writer records every acknowledged \
             write with its LSN and node. Asynchronous replication loses acknowledged commits when the \
             primary crashes, and pg_rewind discards them for good; synchronous replication keeps them (the \
             commit in flight fails). Not in `lab all` unless named (`--variant failover`).",
    spec: None,
    variants: VARIANTS,
    options: Some(Options::of::<FailoverOpts>(&[(
        "writes",
        "bir failover'dan önce ve sırasında yazıcının kaç yazma yaptığı",
    )])),
};

crate::variants! {
    prefix "fo";
    async_loses_acked "async-loses-acked" {
        expected(n) = |p| (opts::opts(p).writes) => {
            en: "with asynchronous replication and the primary's WAL senders stopped, the primary acknowledges {n} commits no standby has; it crashes, Patroni promotes the other node, and those {n} acknowledged rows are missing there, and on the old primary too once pg_rewind has made it a replica (anomaly)",
            tr: "asenkron replikasyonda ve primary'nin WAL gönderenleri durdurulmuşken primary hiçbir standby'da olmayan {n} commit'i onaylar; çöker, Patroni diğer düğümü terfi ettirir ve onaylanan o {n} satır orada yoktur, eski primary de pg_rewind ile replika olduktan sonra onlarda yoktur (anomali)",
        },
        explain => {
            en: "Asynchronous replication acknowledges a COMMIT once it is on the primary's disk; the standbys get it later. Whatever they had not received when the primary died is on no server that can take over: the failover promotes a standby without it, and when the old primary comes back, pg_rewind winds it back to where the new primary's history forked, discarding the rest. The application was told 'committed' for rows that are gone (Patroni issue 1411; a 2025 Jepsen analysis of CloudNativePG). maximum_lag_on_failover bounds how much, not whether.",
            tr: "Asenkron replikasyon bir COMMIT'i primary'nin diskine yazılınca onaylar; standby'lar onu sonra alır. Primary öldüğünde henüz almadıkları her şey, yerini alabilecek hiçbir sunucuda yoktur: failover onsuz bir standby'ı terfi ettirir, eski primary geri geldiğinde pg_rewind onu yeni primary'nin tarihinin ayrıldığı noktaya geri sarar ve gerisini atar. Uygulamaya artık var olmayan satırlar için 'commit edildi' denmiştir (Patroni issue 1411; CloudNativePG'nin 2025 Jepsen analizi). maximum_lag_on_failover ne kadarını sınırlar, olup olmamasını değil.",
        },
    }
    sync_keeps_acked "sync-keeps-acked" {
        expected => {
            en: "with Patroni's synchronous_mode, the WAL sender to the synchronous standby stopped, W's next COMMIT waits (SyncRep) and fails when the primary crashes: unknown to W, not acknowledged; the synchronous standby is promoted with every acknowledged row",
            tr: "Patroni'nin synchronous_mode'unda, senkron standby'a giden WAL göndereni durdurulmuşken W'nin sonraki COMMIT'i bekler (SyncRep) ve primary çöktüğünde başarısız olur: W için belirsiz, onaylanmamış; senkron standby onaylanan her satırla terfi eder",
        },
        explain => {
            en: "With synchronous_mode Patroni names one standby in synchronous_standby_names and promotes only that one: a COMMIT returns once that standby has the commit on disk, so everything acknowledged is on the node that takes over. A commit whose standby never confirmed it does not return: when the primary dies the client gets an error, not a success, and the row it wrote is not on the new primary (the client must find out, or retry with an idempotency key). The cost is a round trip per commit, and writes stall while the standby does not answer.",
            tr: "synchronous_mode ile Patroni synchronous_standby_names'e tek bir standby yazar ve yalnızca onu terfi ettirir: bir COMMIT, o standby commit'i diske yazınca döner; onaylanan her şey yerini alacak düğümdedir. Standby'ın hiç onaylamadığı bir commit dönmez: primary öldüğünde istemci başarı değil hata alır ve yazdığı satır yeni primary'de yoktur (istemci bunu öğrenmeli ya da bir idempotency anahtarıyla yeniden denemelidir). Bedeli commit başına bir gidiş-dönüş ve standby cevap vermezken yazmaların durmasıdır.",
        },
    }
}

/// The writer's rows against what a node holds, with the ids listed.
fn read_back(writes: &[Write], present: &[i64]) -> Tally {
    tally(writes, present)
}

/// The writes of `ids` and whether each outcome is `o`.
fn all(outcomes: &[Outcome], o: Outcome) -> bool {
    !outcomes.is_empty() && outcomes.iter().all(|x| *x == o)
}

/// The writes as evidence: id, what the client was told, the node and LSN,
/// and whether each node read back holds it.
fn evidence(cx: &mut Cx<'_>, writes: &[Write], holders: &[(String, Vec<i64>)]) {
    use crate::report::Phrase;
    let mut columns = vec![
        Phrase::Plain("id".into()),
        Phrase::Text(msg::col_outcome()),
        Phrase::Plain("node".into()),
        Phrase::Plain("lsn".into()),
    ];
    columns.extend(holders.iter().map(|(n, _)| Phrase::Plain(n.clone())));
    let rows = writes
        .iter()
        .map(|w| {
            let mut row = vec![
                Phrase::Plain(w.id.to_string()),
                Phrase::Text(match w.outcome {
                    Outcome::Acked => msg::acked(),
                    Outcome::Failed => msg::failed(),
                    Outcome::Unknown => msg::unknown(),
                }),
                Phrase::Plain(w.node.clone().unwrap_or_else(|| "-".into())),
                Phrase::Plain(
                    w.lsn
                        .map_or("-".into(), |l| format!("{:X}/{:X}", l >> 32, l & 0xffff_ffff)),
                ),
            ];
            row.extend(
                holders
                    .iter()
                    .map(|(_, ids)| Phrase::Plain(if ids.contains(&w.id) { "✔" } else { "✖" }.into())),
            );
            row
        })
        .collect();
    cx.evidence(msg::writes_title(), columns, rows);
}

/// The metrics every variant with a failover reports.
fn failover_metrics(cx: &mut Cx<'_>, writes: &[Write], crashed_ms: f64, promoted_ms: Option<f64>, t: &Tally) {
    cx.metric("acked", t.acked);
    cx.metric("lost", t.lost.len());
    if let Some(p) = promoted_ms {
        cx.metric("failover_ms", (p - crashed_ms).round());
    }
    if let Some(w) = window_around(writes, crashed_ms) {
        cx.metric("unavailable_ms", w.ms().round());
        cx.metric("retries", w.attempts);
    }
}

async fn async_loses_acked(cx: &mut Cx<'_>) -> Result<()> {
    let Some(fx) = Fx::begin(cx).await? else {
        return Ok(());
    };
    let n = opts::opts(&cx.params).writes;
    let (p, c) = (fx.roles.primary, fx.roles.candidate);
    let mut w = Writer::new();
    if !w.connect(cx, &fx, HA_DEADLINE).await? {
        return Err(crate::engine::Deviation(msg::no_primary_at_start()).into());
    }
    let before = w.write_n(cx, &fx, 3).await?;
    // Every standby has them: replication works before it is stopped.
    let last = w.writes.iter().filter_map(|x| x.lsn).max().unwrap_or(0);
    let replicated =
        fx.received(c, last, HA_DEADLINE).await? && fx.received(fx.roles.replica, last, HA_DEADLINE).await?;
    fx.stop_walsenders(cx, p, None).await?;
    let during = w.write_n(cx, &fx, n).await?;
    let first = w.writes[before.len()..]
        .iter()
        .filter_map(|x| x.lsn)
        .min()
        .unwrap_or(u64::MAX);
    // The servers say the standbys lack them: their WAL received stops short of the first.
    let lacked =
        !fx.received(c, first, Duration::ZERO).await? && !fx.received(fx.roles.replica, first, Duration::ZERO).await?;
    let unreplicated: Vec<i64> = w.writes[before.len()..].iter().map(|x| x.id).collect();
    let crashed = fx.crash(cx, p);
    let (promoted, _) = tokio::join!(fx.promoted(cx, p), w.write_through(cx, &fx, HA_DEADLINE));
    let promoted = promoted?;
    let after = w.write_n(cx, &fx, 2).await?;
    let new = promoted.map(|(i, _)| i).unwrap_or(c);
    let on_new = fx.ids_on(new).await?;
    let rejoined = fx.rejoined(cx, p).await?;
    let on_old = fx.ids_on(p).await?;
    let t_new = read_back(&w.writes, &on_new);
    let t_old = read_back(&w.writes, &on_old);
    cx.check(
        all(&before, Outcome::Acked) && replicated,
        msg::before_replicated(before.len()),
    );
    cx.check(
        all(&during, Outcome::Acked) && lacked,
        msg::acked_unreplicated(n, fx.name(p)),
    );
    cx.check(promoted.is_some_and(|(i, _)| i == c), msg::promoted_other(fx.name(c)));
    cx.check(
        t_new.lost == unreplicated,
        msg::lost_on_new(ranges(&unreplicated), ranges(&t_new.lost)),
    );
    cx.check(
        rejoined && t_old.lost == unreplicated,
        msg::lost_after_rejoin(fx.name(p), ranges(&t_old.lost)),
    );
    cx.check(all(&after, Outcome::Acked), msg::writes_after());
    cx.observe(msg::observed_lost(t_new.acked, ranges(&t_new.lost), fx.name(new)));
    failover_metrics(cx, &w.writes, crashed, promoted.map(|(_, t)| t), &t_new);
    cx.metric("lost_after_rejoin", t_old.lost.len());
    let holders = vec![(fx.name(new).to_string(), on_new), (fx.name(p).to_string(), on_old)];
    evidence(cx, &w.writes, &holders);
    cx.anomaly(!t_new.lost.is_empty());
    Ok(())
}

async fn sync_keeps_acked(cx: &mut Cx<'_>) -> Result<()> {
    let Some(fx) = Fx::begin(cx).await? else {
        return Ok(());
    };
    let (p, s) = (fx.roles.primary, fx.roles.candidate);
    let mut w = Writer::new();
    if !w.connect(cx, &fx, HA_DEADLINE).await? {
        return Err(crate::engine::Deviation(msg::no_primary_at_start()).into());
    }
    let before = w.write_n(cx, &fx, 3).await?;
    fx.stop_walsenders(cx, p, Some(s)).await?;
    let id = w.next_id();
    let mut pending = w.begin(&fx, "write", id).await?;
    let waited = w
        .waits_for_standby(cx, &fx, &mut pending, fx.name(s), cx.env.wait_timeout)
        .await?;
    let crashed = fx.crash(cx, p);
    let in_flight = w.finish(cx, &fx, pending, HA_DEADLINE).await?.outcome;
    let (promoted, _) = tokio::join!(fx.promoted(cx, p), w.write_through(cx, &fx, HA_DEADLINE));
    let promoted = promoted?;
    let after = w.write_n(cx, &fx, 2).await?;
    let new = promoted.map(|(i, _)| i).unwrap_or(s);
    let on_new = fx.ids_on(new).await?;
    let rejoined = fx.rejoined(cx, p).await?;
    let on_old = fx.ids_on(p).await?;
    let t_new = read_back(&w.writes, &on_new);
    let t_old = read_back(&w.writes, &on_old);
    cx.check(all(&before, Outcome::Acked), msg::before_acked(before.len()));
    cx.check(waited, msg::commit_waited(fx.name(s)));
    cx.check(in_flight != Outcome::Acked, msg::in_flight_not_acked(id));
    cx.check(promoted.is_some_and(|(i, _)| i == s), msg::promoted_sync(fx.name(s)));
    cx.check(
        t_new.lost.is_empty() && t_new.acked > 0,
        msg::none_lost(fx.name(new), ranges(&t_new.lost)),
    );
    cx.check(
        rejoined && t_old.lost.is_empty(),
        msg::none_lost_after_rejoin(fx.name(p), ranges(&t_old.lost)),
    );
    cx.check(all(&after, Outcome::Acked), msg::writes_after());
    cx.observe(msg::observed_kept(t_new.acked, fx.name(new), id));
    failover_metrics(cx, &w.writes, crashed, promoted.map(|(_, t)| t), &t_new);
    let holders = vec![(fx.name(new).to_string(), on_new), (fx.name(p).to_string(), on_old)];
    evidence(cx, &w.writes, &holders);
    cx.anomaly(!t_new.lost.is_empty());
    Ok(())
}
