//! Read replicas (lab/replica.sql): a streaming standby of the run's server
//! (lab's own, made with pg_basebackup -R for each variant, or the user's
//! with --standby-url). Staleness is made deterministic by pausing replay on
//! the standby, never by sleeping; recovery conflicts by a report query on
//! the standby that waits on an advisory lock lab holds there.
use std::time::{Duration, Instant};

use anyhow::Result;

use super::{Cx, Options, Scenario};

mod msg;
mod opts;
mod standby;
mod through_pgpool;
use crate::engine::answer::{PgError, last_set};
use crate::engine::observe::Waited;
use crate::engine::{Deviation, Session, secs};
use crate::named_sql::SqlFile;
use crate::report::{ResultSet, StepResult, WaitKind};
use opts::ReplicaOpts;
use opts::opts;
use standby::{Standby, primary_lsn, waits_for_standby};
use through_pgpool::{pgpool_lsn_token, pgpool_stale_read, pgpool_txn_split, pgpool_write_sticky};

pub static SCENARIO: Scenario = Scenario {
    name: "replica",
    about: msg::about,
    summary: msg::summary,
    readme: "A streaming standby of the run's server (lab's own, or `--standby-url`), replay paused to make \
             staleness deterministic: a read on the standby misses the user's own write, which the bytes \
             not replayed show and `replay_lag` (a duration) cannot; an LSN token read waits or goes to the \
             primary; `remote_apply` makes COMMIT wait (SyncRep); \"primary for N ms after a write\" serves a stale read once the lag is longer; a standby \
             query is cancelled by the primary's VACUUM (snapshot) or DDL (lock), not with hot_standby_feedback. \
             Through lab's own pgpool-II (`--via pgpool`): a read after the session's own write is balanced to the \
             stale standby; `disable_load_balance_on_write = 'always'` and an LSN token fix it; a transaction's read \
             on the standby and its write on the primary lose an update at REPEATABLE READ.",
    spec: None,
    variants: VARIANTS,
    options: Some(Options::of::<ReplicaOpts>(&[
        (
            "standby_url",
            "--database-url'in standby'ı (kendi çiftiniz); yoksa lab geçici sunucusunun standby'ını kendisi yapar",
        ),
        (
            "lsn_wait_ms",
            "lsn-token: okumanın standby'ın jetona yetişmesini primary'ye gitmeden önce ne kadar beklediği (ms)",
        ),
        (
            "sticky_ms",
            "sticky-by-time: bir yazmadan sonra okumaların kaç ms primary'ye gittiği",
        ),
        (
            "via",
            "yalnızca standby'dan doğrudan okuyan varyantlar (`standby`) ya da yalnızca lab'ın yük dengelemeli kendi pgpool-II'si üzerinden olanlar (`pgpool`, o zaman kurulu olmalı); varsayılan ikisi de",
        ),
    ])),
};

crate::variants! {
    prefix "rp";
    stale_read "stale-read" {
        expected => {
            en: "with replay paused the standby reads the old price 42.00 after the write commits; the primary reports the bytes not replayed (replay_lag is only a duration); after resume the standby reads 45.00",
            tr: "replay duraklatılmışken standby yazma commit edildikten sonra eski fiyatı (42.00) okur; primary uygulanmamış baytları bildirir (replay_lag yalnızca bir süredir); devam edince standby 45.00 okur",
        },
        explain => {
            en: "A standby applies the primary's WAL asynchronously: a read there right after a write may miss it (read-your-writes is broken). pg_stat_replication.replay_lag is a duration, worked out when the standby reports its progress: with replay stuck, how long ago the oldest WAL not yet replayed was sent, as of the standby's last report. It does not say whether your write is there, and read right after the write it is as small as the write is young. Only LSNs say that (pg_last_wal_replay_lsn() on the standby against the write's LSN); the bytes not replayed (pg_wal_lsn_diff(sent_lsn, replay_lsn)) say how far behind it is.",
            tr: "Standby primary'nin WAL'ını asenkron uygular: bir yazmadan hemen sonra oradaki okuma onu kaçırabilir (kendi yazdığını okuma bozulur). pg_stat_replication.replay_lag bir süredir ve standby ilerlemesini bildirdiğinde hesaplanır: replay durmuşken, henüz uygulanmamış en eski WAL'ın ne kadar önce gönderildiği, standby'ın son bildirimindeki haliyle. Yazmanın orada olup olmadığını söylemez; yazmadan hemen sonra okunduğunda o yazma ne kadar gençse o kadar küçüktür. Bunu yalnızca LSN'ler söyler (standby'da pg_last_wal_replay_lsn() ile yazmanın LSN'i); uygulanmamış baytlar (pg_wal_lsn_diff(sent_lsn, replay_lsn)) ne kadar geride olduğunu söyler.",
        },
    }
    lsn_token "lsn-token" {
        expected => {
            en: "the read carries the commit's LSN: with replay paused the standby does not reach it within the bound, the read goes to the primary and sees 45.00; once replay resumes the standby reaches it and serves 45.00",
            tr: "okuma commit'in LSN'ini taşır: replay duraklatılmışken standby sınır içinde ona ulaşmaz, okuma primary'ye gider ve 45.00 görür; replay devam edince standby ona ulaşır ve 45.00 sunar",
        },
        explain => {
            en: "After a commit the application keeps pg_current_wal_lsn() with the user (a cookie, a session); a read waits on the standby until pg_last_wal_replay_lsn() reaches it, or goes to the primary after a bound. The user always sees their own write, and the standby serves them as soon as it has caught up.",
            tr: "Commit'ten sonra uygulama pg_current_wal_lsn() değerini kullanıcıyla birlikte tutar (bir çerez, bir oturum); okuma standby'da pg_last_wal_replay_lsn() ona ulaşana kadar bekler ya da bir sınırdan sonra primary'ye gider. Kullanıcı her zaman kendi yazmasını görür; standby yetişir yetişmez ona hizmet eder.",
        },
    }
    remote_apply "remote-apply" {
        expected => {
            en: "with synchronous_commit = remote_apply and replay paused the COMMIT waits (wait_event SyncRep) while the standby still reads 42.00; it returns when replay resumes, and the standby then reads 45.00",
            tr: "synchronous_commit = remote_apply ve replay duraklatılmışken COMMIT bekler (wait_event SyncRep), standby hâlâ 42.00 okur; replay devam edince döner ve standby artık 45.00 okur",
        },
        explain => {
            en: "With the standby in synchronous_standby_names and synchronous_commit = remote_apply, COMMIT returns only after the standby has applied the commit: every read on it after that sees the write. The cost is the commit's latency, and a stalled standby stalls commits; the wait is SyncRep in pg_stat_activity, not a lock (pg_blocking_pids shows nothing).",
            tr: "Standby synchronous_standby_names içindeyken ve synchronous_commit = remote_apply ile COMMIT yalnızca standby commit'i uyguladıktan sonra döner: ondan sonraki her okuma yazmayı görür. Bedeli commit gecikmesidir; takılan bir standby commit'leri de takar; bekleme bir kilit değil, pg_stat_activity'de SyncRep'tir (pg_blocking_pids bir şey göstermez).",
        },
    }
    sticky_by_time "sticky-by-time" {
        expected(ms) = |p| (opts(p).sticky_ms) => {
            en: "reads go to the primary for {ms} ms after the write (45.00); the next read after that goes to the standby, whose replay is still behind: stale 42.00 (anomaly)",
            tr: "okumalar yazmadan sonra {ms} ms boyunca primary'ye gider (45.00); ondan sonraki okuma replay'i hâlâ geride olan standby'a gider: bayat 42.00 (anomali)",
        },
        explain => {
            en: "\"Read from the primary for N ms after a write\" (as Rails' database selector does, 2 s by default) assumes the lag is shorter than N. It usually is, until a long transaction, a vacuum or a paused replay makes it longer: then the user's own write disappears. Carry the LSN instead (lsn-token) or make the standby synchronous (remote-apply).",
            tr: "\"Bir yazmadan sonra N ms primary'den oku\" (Rails'in veritabanı seçicisinin yaptığı gibi, varsayılan 2 sn) gecikmenin N'den kısa olduğunu varsayar. Genellikle öyledir, ta ki uzun bir işlem, bir vacuum ya da duraklatılmış bir replay onu uzatana kadar: o zaman kullanıcının kendi yazması kaybolur. Bunun yerine LSN'i taşıyın (lsn-token) ya da standby'ı senkron yapın (remote-apply).",
        },
    }
    lock_conflict "lock-conflict" {
        expected => {
            en: "the standby's report holds books; the primary's ALTER TABLE is replayed with an ACCESS EXCLUSIVE lock; after max_standby_streaming_delay the report is cancelled with 40001 (canceling statement due to conflict with recovery, relation lock) and confl_lock rises",
            tr: "standby'daki rapor books'u tutar; primary'deki ALTER TABLE ACCESS EXCLUSIVE kilitle yeniden oynatılır; max_standby_streaming_delay sonunda rapor 40001 ile iptal edilir (canceling statement due to conflict with recovery, relation lock) ve confl_lock artar",
        },
        explain => {
            en: "WAL replay cannot wait forever for a standby query: the startup process waits max_standby_streaming_delay for conflicting locks to go, then cancels the queries holding them. DDL on the primary (even ADD COLUMN) takes ACCESS EXCLUSIVE, which conflicts with every reader of the table on the standby.",
            tr: "WAL replay bir standby sorgusunu sonsuza kadar bekleyemez: startup süreci çakışan kilitlerin gitmesi için max_standby_streaming_delay kadar bekler, sonra onları tutan sorguları iptal eder. Primary'deki DDL (ADD COLUMN bile) ACCESS EXCLUSIVE alır; bu, standby'daki tablonun her okuyucusuyla çakışır.",
        },
    }
    snapshot_conflict "snapshot-conflict" {
        expected => {
            en: "a REPEATABLE READ report on the standby still needs rows the primary deletes and vacuums away; after max_standby_streaming_delay it is cancelled with 40001 (conflict with recovery, row versions that must be removed) and confl_snapshot rises",
            tr: "standby'daki REPEATABLE READ rapor, primary'nin silip vacuum ile kaldırdığı satırlara hâlâ ihtiyaç duyar; max_standby_streaming_delay sonunda 40001 ile iptal edilir (conflict with recovery, row versions that must be removed) ve confl_snapshot artar",
        },
        explain => {
            en: "The primary's VACUUM removes row versions no snapshot on the primary needs; it does not know about snapshots on the standby. Replaying the cleanup there conflicts with older snapshots, and after max_standby_streaming_delay those queries are cancelled. Long reports on a standby either accept cancels, a longer delay (replication lag), or hot_standby_feedback (bloat on the primary).",
            tr: "Primary'nin VACUUM'u primary'deki hiçbir snapshot'ın ihtiyaç duymadığı satır sürümlerini kaldırır; standby'daki snapshot'ları bilmez. Temizliğin orada yeniden oynatılması daha eski snapshot'larla çakışır ve max_standby_streaming_delay sonunda bu sorgular iptal edilir. Standby'daki uzun raporlar ya iptalleri, ya daha uzun bir gecikmeyi (replikasyon gecikmesi) ya da hot_standby_feedback'i (primary'de şişme) kabul eder.",
        },
    }
    hot_standby_feedback "hot-standby-feedback" {
        expected => {
            en: "with hot_standby_feedback = on the primary knows the report's xmin: its VACUUM leaves the deleted rows (dead but not yet removable), the report is not cancelled and replay goes on (anomaly: the cost is bloat on the primary)",
            tr: "hot_standby_feedback = on ile primary raporun xmin'ini bilir: VACUUM silinen satırları bırakır (ölü ama henüz kaldırılamaz), rapor iptal edilmez ve replay sürer (anomali: bedeli primary'de şişme)",
        },
        explain => {
            en: "hot_standby_feedback makes the standby report its oldest snapshot to the primary, which then keeps the rows that snapshot needs: no snapshot conflicts, but a long report on the standby holds back VACUUM on the primary (bloat), as a long transaction on the primary itself would.",
            tr: "hot_standby_feedback standby'ın en eski snapshot'ını primary'ye bildirmesini sağlar; primary de o snapshot'ın ihtiyaç duyduğu satırları tutar: snapshot çakışması olmaz, ama standby'daki uzun bir rapor primary'deki VACUUM'u geri tutar (şişme), tıpkı primary'deki uzun bir işlem gibi.",
        },
    }
    long_fork "long-fork" {
        expected => {
            en: "T1 (book 1: 45.00) commits first: its COMMIT waits for a synchronous standby that is not there, its commit record already replayed on lab's standby; T2 (book 2: 39.00) commits after it without waiting. A reader on the primary sees 1=42.00 2=39.00 (T2, not T1), a reader on the standby 1=45.00 2=35.00 (T1, not T2): Long Fork (anomaly); once T1's wait ends and replay resumes, both read 1=45.00 2=39.00",
            tr: "T1 (1 numaralı kitap: 45.00) önce commit edilir: COMMIT'i olmayan bir senkron standby'ı bekler, commit kaydı lab'ın standby'ında çoktan uygulanmıştır; T2 (2 numaralı kitap: 39.00) ondan sonra beklemeden commit edilir. Primary'deki okuyucu 1=42.00 2=39.00 (T2, T1 değil), standby'daki okuyucu 1=45.00 2=35.00 (T1, T2 değil) görür: Long Fork (anomali); T1'in beklemesi bitip replay devam edince ikisi de 1=45.00 2=39.00 okur",
        },
        explain => {
            en: "The primary makes a commit visible when its backend leaves the ProcArray, after it has written its commit record and waited for synchronous standbys; a standby makes it visible when it replays the record, in WAL order. Two commits can therefore become visible in one order on the primary and in the other on a standby: readers on different nodes disagree about which came first, which no single snapshot allows (Long Fork, Elle's G-nonadjacent: snapshot isolation forbids it, and PostgreSQL's primary alone never shows it). Jepsen found it on RDS for PostgreSQL Multi-AZ clusters (2025), with no synchronous wait: the window there is microseconds wide; here a synchronous wait that never ends holds it open, so it shows every time. Reads that must agree on order belong on one node (or carry the primary's position and wait for it, which makes a standby read no older than the primary, not a snapshot the primary had).",
            tr: "Primary bir commit'i, backend'i commit kaydını yazıp senkron standby'ları bekledikten sonra ProcArray'den çıktığında görünür yapar; standby ise kaydı uyguladığında, WAL sırasıyla. Bu yüzden iki commit primary'de bir sırayla, standby'da öteki sırayla görünür olabilir: farklı düğümlerdeki okuyucular hangisinin önce geldiğinde anlaşamaz; bunu hiçbir tek snapshot vermez (Long Fork, Elle'in G-nonadjacent'i: snapshot isolation yasaklar ve PostgreSQL'in primary'si tek başına bunu asla göstermez). Jepsen bunu RDS for PostgreSQL Multi-AZ kümelerinde buldu (2025), senkron bekleme olmadan: oradaki pencere mikrosaniyeler genişliğindedir; burada hiç bitmeyen bir senkron bekleme onu açık tutar, böylece her seferinde görünür. Sıra konusunda anlaşması gereken okumalar tek bir düğüme aittir (ya da primary'nin konumunu taşıyıp onu beklerler; bu bir standby okumasını primary'den eski olmaktan kurtarır ama onu primary'nin sahip olduğu bir snapshot yapmaz).",
        },
    }
    pgpool_stale_read "pgpool-stale-read" {
        expected => {
            en: "through pgpool-II (load balancing on) the session's read goes to the standby (on_standby true); right after its own write, committed on the primary, the same session reads the old price 42.00 from the paused standby (anomaly); after resume 45.00, still from the standby",
            tr: "pgpool-II üzerinden (yük dengeleme açık) oturumun okuması standby'a gider (on_standby true); primary'de commit edilen kendi yazmasından hemen sonra aynı oturum duraklatılmış standby'dan eski fiyatı 42.00 okur (anomali); devam edince 45.00, yine standby'dan",
        },
        explain => {
            en: "pgpool-II gives the application one connection string and sends each SELECT it may balance to the node the session was given (by backend_weight), writes to the primary. With disable_load_balance_on_write = 'transaction' (its default) a write holds reads on the primary only until its transaction ends; an autocommit write ends at once, so the next read goes back to the standby, which may not have replayed it: the user's own write disappears one layer above where `lab replica` shows it.",
            tr: "pgpool-II uygulamaya tek bir bağlantı adresi verir; dengeleyebildiği her SELECT'i oturuma verilen düğüme (backend_weight'e göre), yazmaları primary'ye gönderir. disable_load_balance_on_write = 'transaction' (varsayılanı) ile bir yazma okumaları yalnızca işlemi bitene kadar primary'de tutar; autocommit bir yazma hemen biter, sonraki okuma onu henüz uygulamamış olabilecek standby'a döner: kullanıcının kendi yazması `lab replica`'nın gösterdiğinin bir katman üstünde kaybolur.",
        },
    }
    pgpool_write_sticky "pgpool-write-sticky" {
        expected => {
            en: "with disable_load_balance_on_write = 'always' the read before the write goes to the standby; after the write every read of the session goes to the primary: 45.00 right away, and still the primary once the standby has caught up (the cost)",
            tr: "disable_load_balance_on_write = 'always' ile yazmadan önceki okuma standby'a gider; yazmadan sonra oturumun her okuması primary'ye gider: hemen 45.00 ve standby yetiştikten sonra da primary (bedeli)",
        },
        explain => {
            en: "pgpool-II's own fix: once a session has written, 'always' stops balancing its reads for the rest of the session, so it reads its writes; the standby serves that session nothing more, even when it has caught up. pgpool-II takes any statement it does not balance for a write, a SET included: a session that sets anything when it connects (many drivers and ORMs do) never reads from the standby under 'always' (lab's sessions send their settings in the startup packet). 'trans_transaction' stops balancing after a write in an explicit transaction, 'dml_adaptive' per table written.",
            tr: "pgpool-II'nin kendi çözümü: bir oturum yazdıktan sonra 'always' oturumun geri kalanında okumalarını dengelemez; böylece oturum kendi yazmalarını okur; standby yetişse bile o oturuma artık hiçbir şey sunmaz. pgpool-II dengelemediği her ifadeyi, SET dahil, yazma sayar: bağlanırken bir şey ayarlayan oturum (birçok sürücü ve ORM bunu yapar) 'always' altında standby'dan hiç okumaz (lab'ın oturumları ayarlarını başlangıç paketinde gönderir). 'trans_transaction' açık bir işlemdeki yazmadan sonra, 'dml_adaptive' yazılan tablo başına dengelemeyi durdurur.",
        },
    }
    pgpool_lsn_token "pgpool-lsn-token" {
        expected => {
            en: "the application keeps the commit's LSN (pg_current_wal_lsn() through pgpool-II, answered by the primary); its check on the paused standby says not replayed, so it reads with /*NO LOAD BALANCE*/ from the primary: 45.00; after resume the check passes on the standby, which serves 45.00",
            tr: "uygulama commit'in LSN'ini tutar (pgpool-II üzerinden pg_current_wal_lsn(), primary cevaplar); duraklatılmış standby'daki denetimi uygulanmadı der, bu yüzden /*NO LOAD BALANCE*/ ile primary'den okur: 45.00; devam edince denetim standby'da geçer ve standby 45.00 sunar",
        },
        explain => {
            en: "The fix in the application, through the same pooler: after a write it keeps the LSN, and before a read it asks the balanced node whether pg_last_wal_replay_lsn() has reached it; if not, the read goes to the primary with pgpool-II's /*NO LOAD BALANCE*/ hint. Reads use the standby as soon as it has the user's write, and never before.",
            tr: "Aynı pooler üzerinden uygulamadaki çözüm: bir yazmadan sonra LSN'i tutar, bir okumadan önce dengelenen düğüme pg_last_wal_replay_lsn()'in ona ulaşıp ulaşmadığını sorar; ulaşmadıysa okuma pgpool-II'nin /*NO LOAD BALANCE*/ ipucuyla primary'ye gider. Okumalar kullanıcının yazmasına sahip olur olmaz standby'ı kullanır, daha önce asla.",
        },
    }
    pgpool_txn_split "pgpool-txn-split" {
        expected => {
            en: "a REPEATABLE READ transaction through pgpool-II reads the price on the paused standby (42.00, after W's 45.00 committed on the primary); its write, price + 1.00 from what it read, goes to the primary, returns 43.00 and commits without 40001: W's 45.00 is lost (anomaly)",
            tr: "pgpool-II üzerinden bir REPEATABLE READ işlem fiyatı duraklatılmış standby'da okur (W'nin 45.00'ı primary'de commit edildikten sonra 42.00); okuduğunun 1.00 fazlası olan yazması primary'ye gider, 43.00 döndürür ve 40001 olmadan commit edilir: W'nin 45.00'ı kaybolur (anomali)",
        },
        explain => {
            en: "pgpool-II balances a SELECT in a transaction until the transaction has written: the read runs on the standby with the standby's snapshot, the write on the primary with another. The transaction is two transactions on two servers, so its isolation level protects neither: no 40001, and a write based on a stale read overwrites a committed one. Read what you will write with SELECT ... FOR UPDATE (pgpool-II sends it to the primary), or use SERIALIZABLE (which pgpool-II does not balance).",
            tr: "pgpool-II bir işlemdeki SELECT'i işlem yazana kadar dengeler: okuma standby'da standby'ın snapshot'ıyla, yazma primary'de başka bir snapshot'la çalışır. İşlem iki sunucuda iki işlemdir; izolasyon seviyesi ikisini de korumaz: 40001 yok ve bayat bir okumaya dayanan yazma commit edilmiş birinin üzerine yazar. Yazacağınızı SELECT ... FOR UPDATE ile okuyun (pgpool-II onu primary'ye gönderir) ya da SERIALIZABLE kullanın (pgpool-II onu dengelemez).",
        },
    }
}

/// Settings of lab's standby for the conflict variants: a short delay
/// before the standby cancels what blocks replay.
const CONFLICT: &str = "max_standby_streaming_delay = 100ms";

fn price(set: &ResultSet) -> String {
    set.get(0, "price").unwrap_or("-").to_string()
}

/// The primary's session, committing as a real server does.
async fn primary(cx: &Cx<'_>, st: &Standby) -> Result<Session> {
    let p = cx.open(&["P"]).await?.remove(0);
    p.exec("durable", st.sql.get("durable")?).await?;
    Ok(p)
}

/// The primary's session and the write: the commit's WAL position.
async fn write(p: &Session, sql: &SqlFile) -> Result<String> {
    p.exec("write", sql.get("write")?).await?;
    let set = p.rows("write_lsn", sql.get("write_lsn")?).await?;
    Ok(set.get(0, "lsn").unwrap_or_default().to_string())
}

/// The lag as the primary sees it, for the standby furthest behind, once
/// the walsender has sent the write (`lsn`): it sends asynchronously.
async fn lag(cx: &Cx<'_>, p: &Session, sql: &SqlFile, lsn: &str) -> Result<(i64, String, String)> {
    let sent = format!(
        "SELECT bool_or(sent_lsn >= '{}'::pg_lsn AND replay_lsn IS NOT NULL)::text FROM pg_stat_replication",
        lsn.replace('\'', "")
    );
    cx.env.until(&sent, cx.env.wait_timeout, msg::standby_check).await?;
    let text = format!(
        "{} ORDER BY pg_wal_lsn_diff(sent_lsn, replay_lsn) DESC NULLS LAST LIMIT 1",
        sql.get("lag")?
    );
    let set = p.rows("lag", &text).await?;
    Ok((
        set.get(0, "lag_bytes").and_then(|v| v.parse().ok()).unwrap_or(-1),
        set.get(0, "replay_lag").unwrap_or("NULL").to_string(),
        set.get(0, "sync_state").unwrap_or("-").to_string(),
    ))
}

async fn stale_read(cx: &mut Cx<'_>) -> Result<()> {
    let Some(st) = Standby::start(cx, "").await? else {
        return Ok(());
    };
    let p = primary(cx, &st).await?;
    let r = st.open("R").await?;
    st.pause(cx).await?;
    let lsn = write(&p, &st.sql).await?;
    // The standby has the WAL (received), it only has not applied it.
    let received = st.until("received", &lsn, cx.env.wait_timeout).await?;
    let stale = price(&r.rows("read", st.sql.get("read")?).await?);
    let (lag_bytes, replay_lag, _) = lag(cx, &p, &st.sql, &lsn).await?;
    st.resume().await?;
    let replayed = st.until("replayed", &lsn, cx.env.wait_timeout).await?;
    let fresh = price(&r.rows("read", st.sql.get("read")?).await?);
    drop(r);
    st.stop().await?;
    cx.check(received, msg::received());
    cx.check(stale == "42.00", msg::standby_stale(&stale));
    cx.check(lag_bytes > 0, msg::lag_bytes(lag_bytes));
    cx.check(replayed && fresh == "45.00", msg::caught_up(&fresh));
    cx.metric("lag_bytes", lag_bytes);
    cx.metric("replay_lag", &replay_lag);
    cx.observe(msg::observed_stale(&stale, lag_bytes, &replay_lag));
    cx.anomaly(stale == "42.00");
    Ok(())
}

async fn lsn_token(cx: &mut Cx<'_>) -> Result<()> {
    let Some(st) = Standby::start(cx, "").await? else {
        return Ok(());
    };
    let bound = Duration::from_millis(cx.options::<ReplicaOpts>().lsn_wait_ms);
    let p = primary(cx, &st).await?;
    let r = st.open("R").await?;
    st.pause(cx).await?;
    let token = write(&p, &st.sql).await?;
    // The read carries the token: wait (bounded) for the standby to replay it.
    let reached = st.until("replayed", &token, bound).await?;
    let first = if reached {
        r.note(msg::token_reached(&token));
        price(&r.rows("read", st.sql.get("read")?).await?)
    } else {
        r.note(msg::token_not_reached(&token, bound.as_millis() as u64));
        price(&p.rows("read", st.sql.get("read")?).await?)
    };
    st.resume().await?;
    let later = st.until("replayed", &token, cx.env.wait_timeout).await?;
    if later {
        r.note(msg::token_reached(&token));
    }
    let second = price(&r.rows("read", st.sql.get("read")?).await?);
    drop(r);
    st.stop().await?;
    cx.check(!reached && first == "45.00", msg::fell_back(&first));
    cx.check(later && second == "45.00", msg::standby_after_token(&second));
    cx.metric("token", &token);
    cx.observe(msg::observed_token(&first, &second));
    cx.anomaly(first != "45.00" || second != "45.00");
    Ok(())
}

async fn remote_apply(cx: &mut Cx<'_>) -> Result<()> {
    if cx.env.throwaway.is_none() {
        // It changes synchronous_standby_names on the primary: only on lab's own.
        cx.skip(msg::needs_own_primary());
        return Ok(());
    }
    let Some(st) = Standby::start(cx, "").await? else {
        return Ok(());
    };
    let sessions = cx.open(&["P", "primary"]).await?;
    let (p, admin) = (&sessions[0], &sessions[1]);
    let sql = st.sql.get("write")?.to_string();
    let run = async {
        admin.exec("sync_on", st.sql.get("sync_on")?).await?;
        admin.exec("reload", st.sql.get("reload")?).await?;
        // Synchronous once the primary says so.
        let sync = "SELECT bool_or(sync_state = 'sync')::text FROM pg_stat_replication";
        if !cx.env.until(sync, cx.env.wait_timeout, msg::standby_check).await? {
            return Err(Deviation(msg::never_sync(secs(cx.env.wait_timeout))).into());
        }
        // A server that never makes commits wait shows it in the checks below.
        let _ = st.commits_wait(cx).await?;
        let r = st.open("R").await?;
        st.pause(cx).await?;
        p.exec("remote_apply", st.sql.get("remote_apply")?).await?;
        let mut sent = p.send(&sql);
        // The COMMIT waits for the standby: wait_event SyncRep, which pg_blocking_pids does not show.
        let deadline = Instant::now() + cx.env.wait_timeout;
        let waiting = waits_for_standby(cx, p, &mut sent, deadline).await?;
        let w = Waited {
            by: vec!["standby".into()],
            kind: WaitKind::SyncRep,
            lock: None,
        };
        if waiting {
            cx.recorder().waiting(sent.at, "P", Some("write"), &sql, &w);
        }
        let during = price(&r.rows("read", st.sql.get("read")?).await?);
        st.resume().await?;
        let returned = sent.ready_within(cx.env.wait_timeout).await;
        let answer = sent.take();
        if let Some((a, at)) = &answer {
            let took = at.saturating_duration_since(sent.at);
            cx.recorder()
                .answer(*at, "P", Some("write"), &sql, a, waiting.then_some((&w, took)), None);
        }
        let committed = matches!(answer, Some((Ok(_), _)));
        let after = price(&r.rows("read", st.sql.get("read")?).await?);
        drop(r);
        Ok::<_, anyhow::Error>((waiting, during, returned && committed, after))
    };
    let result = run.await;
    // Always asynchronous again, whatever happened.
    let _ = admin.exec("sync_off", st.sql.get("sync_off")?).await;
    let _ = admin.exec("reload", st.sql.get("reload")?).await;
    drop(sessions);
    st.stop().await?;
    let (waiting, during, committed, after) = result?;
    cx.check(waiting, msg::commit_waited());
    cx.check(during == "42.00", msg::not_applied_yet(&during));
    cx.check(committed, msg::commit_returned());
    cx.check(after == "45.00", msg::applied_on_return(&after));
    cx.observe(msg::observed_remote_apply(&during, &after));
    cx.anomaly(after != "45.00");
    Ok(())
}

/// Commits wait for the absent standby of `sync_absent`: lab's own probe
/// (not in the timeline) waits in SyncRep, and lab ends its wait. A commit
/// waits only once the checkpointer has read the new setting: asked again
/// until one does, within the deadline.
async fn commits_wait_for_nobody(cx: &Cx<'_>, st: &Standby) -> Result<bool> {
    let probe = cx.opener().open_quiet("probe").await?;
    let deadline = Instant::now() + cx.env.wait_timeout;
    loop {
        let mut sent = probe.send(st.sql.get("sync_probe")?);
        let waited = waits_for_standby(cx, &probe, &mut sent, deadline).await?;
        if waited {
            let end = st.sql.bind("end_wait", &[("pid", &probe.pid())])?;
            cx.env
                .value(&format!("SELECT ({end})::text"), msg::standby_check)
                .await?;
        }
        if !sent.ready_within(cx.env.wait_timeout).await {
            return Ok(false);
        }
        if waited || Instant::now() > deadline {
            return Ok(waited);
        }
    }
}

/// What `read_both` read: "1=45.00 2=35.00".
fn prices(set: &ResultSet) -> String {
    set.get(0, "prices").unwrap_or("-").to_string()
}

async fn long_fork(cx: &mut Cx<'_>) -> Result<()> {
    if cx.env.throwaway.is_none() {
        // It changes synchronous_standby_names on the primary: only on lab's own.
        cx.skip(msg::needs_own_primary());
        return Ok(());
    }
    let Some(st) = Standby::start(cx, "").await? else {
        return Ok(());
    };
    let sessions = cx.open(&["T1", "T2", "RP", "primary"]).await?;
    let (t1, t2, rp, admin) = (&sessions[0], &sessions[1], &sessions[2], &sessions[3]);
    let rs = st.open("RS").await?;
    let write = st.sql.get("write")?.to_string();
    let read = st.sql.get("read_both")?;
    let run = async {
        admin.exec("sync_absent", st.sql.get("sync_absent")?).await?;
        admin.exec("reload", st.sql.get("reload")?).await?;
        if !commits_wait_for_nobody(cx, &st).await? {
            return Err(Deviation(msg::never_waited_absent(secs(cx.env.wait_timeout))).into());
        }
        t1.exec("durable", st.sql.get("durable")?).await?;
        let mut sent = t1.send(&write);
        let deadline = Instant::now() + cx.env.wait_timeout;
        let waiting = waits_for_standby(cx, t1, &mut sent, deadline).await?;
        let w = Waited {
            by: vec!["standby".into()],
            kind: WaitKind::SyncRep,
            lock: None,
        };
        if waiting {
            cx.recorder().waiting(sent.at, "T1", Some("write"), &write, &w);
        }
        // T1's commit record is in the WAL: the standby replays it, then
        // stops before anything T2 writes.
        let lsn = primary_lsn(cx).await?;
        let replayed = st.until("replayed", &lsn, cx.env.wait_timeout).await?;
        st.pause(cx).await?;
        t2.exec("write_second", st.sql.get("write_second")?).await?;
        let on_primary = prices(&rp.rows("read_both", read).await?);
        let on_standby = prices(&rs.rows("read_both", read).await?);
        // T1 committed locally: lab ends its wait, and the primary shows it.
        let end = st.sql.bind("end_wait", &[("pid", &t1.pid())])?;
        admin.exec("end_wait", &end).await?;
        let returned = sent.ready_within(cx.env.wait_timeout).await;
        let answer = sent.take();
        if let Some((a, at)) = &answer {
            let took = at.saturating_duration_since(sent.at);
            cx.recorder()
                .answer(*at, "T1", Some("write"), &write, a, waiting.then_some((&w, took)), None);
        }
        let committed = returned && matches!(answer, Some((Ok(_), _)));
        st.resume().await?;
        let now = primary_lsn(cx).await?;
        let caught_up = st.until("replayed", &now, cx.env.wait_timeout).await?;
        let after = (
            prices(&rp.rows("read_both", read).await?),
            prices(&rs.rows("read_both", read).await?),
        );
        Ok::<_, anyhow::Error>((
            waiting,
            (replayed, lsn),
            on_primary,
            on_standby,
            committed,
            caught_up,
            after,
        ))
    };
    let result = run.await;
    // Asynchronous again, whatever happened: a commit still waiting is let go.
    let _ = admin.exec("sync_off", st.sql.get("sync_off")?).await;
    let _ = admin.exec("reload", st.sql.get("reload")?).await;
    drop(rs);
    drop(sessions);
    st.stop().await?;
    let (waiting, (replayed, lsn), on_primary, on_standby, committed, caught_up, (after_p, after_s)) = result?;
    cx.check(waiting, msg::fork_waited());
    cx.check(replayed, msg::fork_replayed(&lsn));
    cx.check(on_primary == "1=42.00 2=39.00", msg::fork_primary(&on_primary));
    cx.check(on_standby == "1=45.00 2=35.00", msg::fork_standby(&on_standby));
    cx.check(committed, msg::fork_returned());
    let both = "1=45.00 2=39.00";
    cx.check(
        caught_up && after_p == both && after_s == both,
        msg::fork_converged(&after_p, &after_s),
    );
    cx.observe(msg::observed_fork(&on_primary, &on_standby));
    cx.anomaly(on_primary == "1=42.00 2=39.00" && on_standby == "1=45.00 2=35.00");
    Ok(())
}

async fn sticky_by_time(cx: &mut Cx<'_>) -> Result<()> {
    let Some(st) = Standby::start(cx, "").await? else {
        return Ok(());
    };
    let window = Duration::from_millis(cx.options::<ReplicaOpts>().sticky_ms);
    let p = primary(cx, &st).await?;
    let r = st.open("R").await?;
    st.pause(cx).await?;
    let lsn = write(&p, &st.sql).await?;
    let wrote = Instant::now();
    // Within the window the application reads from the primary.
    r.note(msg::within_window(window.as_millis() as u64));
    let first = price(&p.rows("read", st.sql.get("read")?).await?);
    // The rule itself is about time: the user's next click comes after the
    // window. Replay stays paused, so the lag is longer than the window
    // however long this takes; no session waits on another here.
    tokio::time::sleep_until((wrote + window).into()).await;
    r.note(msg::after_window(window.as_millis() as u64));
    let second = price(&r.rows("read", st.sql.get("read")?).await?);
    let (lag_bytes, _, _) = lag(cx, &p, &st.sql, &lsn).await?;
    drop(r);
    st.stop().await?;
    cx.check(first == "45.00", msg::sticky_fresh(&first));
    cx.check(second == "42.00", msg::sticky_stale(&second));
    cx.check(lag_bytes > 0, msg::lag_bytes(lag_bytes));
    cx.metric("lag_bytes", lag_bytes);
    cx.observe(msg::observed_sticky(&first, &second));
    cx.anomaly(second == "42.00");
    Ok(())
}

/// The standby's recovery-conflict counters: (snapshot, lock).
async fn conflicts(st: &Standby) -> Result<(i64, i64)> {
    let set = st.admin.rows("conflicts", st.sql.get("conflicts")?).await?;
    let n = |c: &str| set.get(0, c).and_then(|v| v.parse().ok()).unwrap_or(-1);
    Ok((n("confl_snapshot"), n("confl_lock")))
}

/// Waits until the standby's counters differ from `before` (they reach the
/// statistics when the cancelled backend reports them).
async fn conflicts_after(cx: &Cx<'_>, st: &Standby, before: (i64, i64)) -> Result<(i64, i64)> {
    let deadline = Instant::now() + cx.env.wait_timeout;
    loop {
        let set = st
            .admin
            .value("SELECT confl_snapshot || ',' || confl_lock FROM pg_stat_database_conflicts WHERE datname = current_database()")
            .await?
            .unwrap_or_default();
        let mut it = set.split(',').map(|v| v.parse::<i64>().unwrap_or(-1));
        let now = (it.next().unwrap_or(-1), it.next().unwrap_or(-1));
        if now != before || Instant::now() > deadline {
            return Ok(now);
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// The report on the standby: R (in `rr` a REPEATABLE READ transaction with
/// its snapshot taken) runs a long query that waits on H's advisory lock,
/// confirmed from the standby. Returns the statement in flight.
async fn long_report(
    cx: &Cx<'_>,
    st: &Standby,
    r: &Session,
    h: &Session,
    rr: bool,
) -> Result<crate::engine::session::Sent> {
    h.exec("hold", st.sql.get("hold")?).await?;
    if rr {
        r.exec("begin_rr", st.sql.get("begin_rr")?).await?;
        r.exec("count", st.sql.get("count")?).await?;
    }
    let sql = st.sql.get("long_read")?;
    let sent = r.send(sql);
    let blocked = format!("SELECT {} = ANY(pg_blocking_pids({}))", h.pid(), r.pid());
    if !st.admin.until(&blocked, cx.env.wait_timeout).await? {
        return Err(Deviation(msg::report_never_waited(secs(cx.env.wait_timeout))).into());
    }
    let w = Waited {
        by: vec!["H".into()],
        kind: WaitKind::Lock,
        lock: Some("ExclusiveLock on advisory".into()),
    };
    cx.recorder().waiting(sent.at, "R", Some("long_read"), sql, &w);
    Ok(sent)
}

/// The report's answer (within the standby's delay and the deadline), recorded.
async fn report_answer(
    cx: &Cx<'_>,
    st: &Standby,
    mut sent: crate::engine::session::Sent,
    delay: Duration,
) -> Result<Option<std::result::Result<ResultSet, PgError>>> {
    let sql = st.sql.get("long_read")?;
    if !sent.ready_within(delay + cx.env.wait_timeout).await {
        return Ok(None);
    }
    let Some((answer, at)) = sent.take() else {
        return Ok(None);
    };
    let w = Waited {
        by: vec!["H".into()],
        kind: WaitKind::Lock,
        lock: None,
    };
    cx.recorder().answer(
        at,
        "R",
        Some("long_read"),
        sql,
        &answer,
        Some((&w, at.saturating_duration_since(sent.at))),
        None,
    );
    Ok(Some(answer.map(|r| last_set(&r).cloned().unwrap_or_default())))
}

/// max_standby_streaming_delay as the standby has it.
async fn delay_of(cx: &mut Cx<'_>, st: &Standby) -> Result<Duration> {
    let ms = st
        .admin
        .value("SELECT setting FROM pg_settings WHERE name = 'max_standby_streaming_delay'")
        .await?
        .and_then(|v| v.parse::<i64>().ok())
        .unwrap_or(-1);
    cx.metric("max_standby_streaming_delay_ms", ms);
    if ms < 0 {
        return Ok(Duration::MAX / 4);
    }
    Ok(Duration::from_millis(ms as u64))
}

/// H leaves: its session-level advisory lock goes with its session, and the
/// report waiting on it goes on. (Not `pg_advisory_unlock`: a statement
/// of lab's own on the standby could itself meet a recovery conflict.)
fn release(st: &Standby, h: Session) {
    st.admin.recorder().note("H", msg::h_leaves());
    drop(h);
}

/// What became of the report once the primary's conflicting work was done.
enum Report {
    /// It answered (or did not within the deadline).
    Answered(Option<std::result::Result<ResultSet, PgError>>),
    /// The standby replayed the work while the report still waited for its
    /// lock: replay met no conflict.
    StillWaiting(crate::engine::session::Sent),
}

/// The report's answer, or that the standby replayed the primary's WAL up
/// to `lsn` while the report still waited for its lock (the server says
/// both). Either is known as soon as it happens: nothing waits for a
/// conflict that cannot come.
async fn report_or_replay(
    cx: &Cx<'_>,
    st: &Standby,
    mut sent: crate::engine::session::Sent,
    r: &Session,
    lsn: &str,
    delay: Duration,
) -> Result<Report> {
    let replayed = st.sql.bind("replayed", &[("lsn", &lsn)])?;
    let waiting = format!(
        "SELECT (state = 'active' AND wait_event_type = 'Lock')::text FROM pg_stat_activity WHERE pid = {}",
        r.pid()
    );
    let deadline = Instant::now() + delay + cx.env.wait_timeout;
    while !sent.ready() && Instant::now() < deadline {
        let done = st.admin.value(&replayed).await?;
        if matches!(done.as_deref(), Some("t" | "true")) {
            let still = st.admin.value(&waiting).await?;
            if matches!(still.as_deref(), Some("t" | "true")) {
                return Ok(Report::StillWaiting(sent));
            }
            // Cancelled: its answer is on its way.
            break;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    Ok(Report::Answered(report_answer(cx, st, sent, delay).await?))
}

fn cancelled(o: &Option<std::result::Result<ResultSet, PgError>>) -> (String, String, String) {
    match o {
        Some(Err(e)) => (
            e.code.clone().unwrap_or_default(),
            e.message.clone(),
            e.detail.clone().unwrap_or_default(),
        ),
        Some(Ok(_)) => ("-".into(), "-".into(), "-".into()),
        None => ("none".into(), "-".into(), "-".into()),
    }
}

/// How many times a report is asked before its answer stands, when another
/// conflict than the variant's own cancelled it first.
const ATTEMPTS: u32 = 3;

/// Whether the report was cancelled by the other kind of recovery conflict
/// than the variant's (`counter` 0: snapshot, 1: lock; `cause`, what its
/// DETAIL says), and only by it, as the server's DETAIL and the standby's
/// counters `before` and `after` say.
fn other_conflict(
    code: &str,
    detail: &str,
    cause: &str,
    before: (i64, i64),
    after: (i64, i64),
    counter: usize,
) -> bool {
    let rose = [after.0 > before.0, after.1 > before.1];
    code == "40001" && !detail.contains(cause) && rose[1 - counter] && !rose[counter]
}

/// The primary's dead catalog rows in this database are cleaned up and that
/// cleanup replayed before any report runs (see `settle` in lab/replica.sql).
async fn settle(cx: &Cx<'_>, st: &Standby, p: &Session) -> Result<()> {
    p.exec("settle", st.sql.get("settle")?).await?;
    p.exec("flush", st.sql.get("flush")?).await?;
    // All of it is flushed now: the standby is sent it at once.
    let lsn = cx
        .env
        .value("SELECT pg_current_wal_flush_lsn()::text", msg::standby_check)
        .await?
        .unwrap_or_default();
    if !st.until("replayed", &lsn, cx.env.wait_timeout).await? {
        return Err(Deviation(msg::never_caught_up(&lsn, secs(cx.env.wait_timeout))).into());
    }
    Ok(())
}

type Answer = Option<std::result::Result<ResultSet, PgError>>;

/// One report on the standby (R, waiting on H) meeting the replay of `steps`
/// on the primary: its answer and the standby's counters before and after.
async fn provoke(
    cx: &Cx<'_>,
    st: &Standby,
    p: &Session,
    (rr, steps): (bool, &[&str]),
    delay: Duration,
) -> Result<(Answer, (i64, i64), (i64, i64))> {
    let (r, h) = (st.open("R").await?, st.open("H").await?);
    let before = conflicts(st).await?;
    let sent = long_report(cx, st, &r, &h, rr).await?;
    for step in steps {
        if *step == "vacuum" {
            vacuum_away(cx, st, p).await?;
        } else {
            p.exec(step, &st.sql.bind(step, &[("schema", &cx.env.schema)])?).await?;
        }
    }
    let lsn = primary_lsn(cx).await?;
    let answer = match report_or_replay(cx, st, sent, &r, &lsn, delay).await? {
        Report::Answered(a) => a,
        // Replayed with the report still waiting: no conflict came. The
        // report is let go (its lock's holder leaves) and answers.
        Report::StillWaiting(sent) => {
            release(st, h);
            report_answer(cx, st, sent, delay).await?
        }
    };
    if rr {
        let _ = r.exec_allow("rollback", st.sql.get("rollback")?, &["25P02"]).await;
    }
    // The cancelled backend reports the conflict to the statistics when it
    // next flushes them: at once when its session ends. (A report that was
    // not cancelled has nothing to report: the counters are read once.)
    drop(r);
    let after = if matches!(answer, Some(Err(_))) {
        conflicts_after(cx, st, before).await?
    } else {
        conflicts(st).await?
    };
    Ok((answer, before, after))
}

/// The backends in the primary's database (the one asking aside) whose
/// snapshot may still need dead rows: a key per backend and snapshot, and
/// what each is doing.
const HOLDERS: &str = "SELECT coalesce(string_agg(pid || ':' || backend_xmin, ','), '') AS keys, \
     coalesce(string_agg(format('pid %s (%s)', pid, coalesce(nullif(left(query, 60), ''), backend_type)), '; '), '') AS who \
     FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_xmin IS NOT NULL";

/// The primary's VACUUM (the `vacuum` step), again until it has removed the
/// deleted rows. A snapshot on the primary that still needs them keeps them
/// (autovacuum's ANALYZE of the freshly loaded table, in this database), and
/// then there is no cleanup whose replay could conflict with the report.
/// Between tries, each in the timeline, lab waits until the backends that
/// held a snapshot in this database have let it go (the server says), all
/// within the deadline; past it, the run stops (exit 2): the server did
/// what it documents, lab could not set the scene.
async fn vacuum_away(cx: &Cx<'_>, st: &Standby, p: &Session) -> Result<()> {
    let sql = st.sql.bind("vacuum", &[("schema", &cx.env.schema)])?;
    let deadline = Instant::now() + cx.env.wait_timeout;
    loop {
        let seen = cx.recorder().details("P", StepResult::Notice).len();
        p.exec("vacuum", &sql).await?;
        let kept = not_removable(&cx.recorder().details("P", StepResult::Notice)[seen..]);
        if kept == 0 {
            return Ok(());
        }
        let holders = cx.env.rows(HOLDERS).await?;
        let (keys, who) = (
            holders.get(0, "keys").unwrap_or(""),
            holders.get(0, "who").unwrap_or(""),
        );
        if Instant::now() > deadline {
            anyhow::bail!(msg::vacuum_held_back(kept, who, secs(cx.env.wait_timeout)));
        }
        cx.narrate(msg::vacuum_waits(kept, who));
        if keys.is_empty() {
            // Held from elsewhere (another database's backend on PostgreSQL
            // 13 and older, a prepared transaction): VACUUM itself is asked again.
            tokio::time::sleep(Duration::from_millis(20)).await;
            continue;
        }
        let gone = format!(
            "SELECT (NOT EXISTS (SELECT 1 FROM pg_stat_activity \
             WHERE pid || ':' || backend_xmin = ANY(string_to_array('{keys}', ','))))::text"
        );
        cx.env
            .until(
                &gone,
                deadline.saturating_duration_since(Instant::now()),
                msg::horizon_check,
            )
            .await?;
    }
}

/// A report on the standby meets the replay of `steps` on the primary: it is
/// cancelled with 40001 and the server's DETAIL naming `cause`, and the
/// standby's counter `counter` (0: confl_snapshot, 1: confl_lock) rises.
/// With `undo` (a step that reverts `steps`), the primary's dead catalog
/// rows are settled first, and a report the other kind of conflict
/// cancelled first (the server's DETAIL and counters say which) is run
/// again after `undo`, [`ATTEMPTS`] times in all, each shown in the
/// timeline; the last answer stands. (A snapshot conflict comes first when
/// rows the report's snapshot still needs are pruned, by the DDL's own
/// catalog lookups or other work: on a standby that snapshot's xmin is the
/// whole cluster's, held back by any open transaction on the server.)
async fn conflict(
    cx: &mut Cx<'_>,
    rr: bool,
    steps: &[&str],
    undo: Option<&str>,
    cause: &str,
    counter: usize,
) -> Result<()> {
    let Some(st) = Standby::start(cx, CONFLICT).await? else {
        return Ok(());
    };
    let delay = delay_of(cx, &st).await?;
    let p = primary(cx, &st).await?;
    let mut attempt = 1;
    let (answer, before, after) = loop {
        if undo.is_some() {
            settle(cx, &st, &p).await?;
        }
        let (answer, before, after) = provoke(cx, &st, &p, (rr, steps), delay).await?;
        let (code, _, detail) = cancelled(&answer);
        match undo {
            Some(undo) if attempt < ATTEMPTS && other_conflict(&code, &detail, cause, before, after, counter) => {
                cx.narrate(msg::other_conflict_first(&detail));
                p.exec(undo, st.sql.get(undo)?).await?;
                attempt += 1;
            }
            _ => break (answer, before, after),
        }
    };
    st.stop().await?;
    let (code, message, detail) = cancelled(&answer);
    cx.check(
        code == "40001" && message.contains("conflict with recovery"),
        msg::report_cancelled(&code, &message),
    );
    cx.check(detail.contains(cause), msg::detail_says(&detail));
    let name = ["confl_snapshot", "confl_lock"][counter];
    let (was, now) = if counter == 0 {
        (before.0, after.0)
    } else {
        (before.1, after.1)
    };
    cx.check(now > was, msg::confl_rose(name, was, now));
    cx.metric(name, now);
    cx.metric("attempts", attempt);
    cx.observe(msg::observed_conflict(&code, &detail));
    cx.anomaly(code == "40001");
    Ok(())
}

async fn lock_conflict(cx: &mut Cx<'_>) -> Result<()> {
    conflict(cx, false, &["alter"], Some("unalter"), "relation lock", 1).await
}

async fn snapshot_conflict(cx: &mut Cx<'_>) -> Result<()> {
    conflict(cx, true, &["delete_vacuum", "vacuum"], None, "row versions", 0).await
}

/// Dead rows VACUUM VERBOSE said it could not remove yet (its INFO lines).
fn not_removable(infos: &[String]) -> i64 {
    infos
        .iter()
        .filter_map(|l| {
            let words: Vec<&str> = l.split(|c: char| c.is_whitespace() || c == ',').collect();
            // PostgreSQL 14+: "... N are dead but not yet removable"; 12-13,
            // in the DETAIL: "N dead row versions cannot be removed yet".
            words.windows(5).find_map(|w| {
                if w[1..] == ["are", "dead", "but", "not"] || w[1..4] == ["dead", "row", "versions"] {
                    w[0].parse::<i64>().ok()
                } else {
                    None
                }
            })
        })
        .max()
        .unwrap_or(0)
}

async fn hot_standby_feedback(cx: &mut Cx<'_>) -> Result<()> {
    let settings = format!("{CONFLICT}\nhot_standby_feedback = on\nwal_receiver_status_interval = 1s");
    let Some(st) = Standby::start(cx, &settings).await? else {
        return Ok(());
    };
    let delay = delay_of(cx, &st).await?;
    let p = primary(cx, &st).await?;
    // The standby's first feedback reaches the primary: from then on the
    // primary keeps every row version the standby's oldest snapshot needs
    // (the report's, once it runs: it starts at or after that xmin).
    let xmin = "SELECT bool_or(backend_xmin IS NOT NULL)::text FROM pg_stat_replication";
    let held = cx.env.until(xmin, cx.env.wait_timeout, msg::standby_check).await?;
    // Cleanup done before that, replayed after the report took its snapshot,
    // would cancel it for a reason of its own. So the schema's dead catalog
    // rows are cleaned up and everything written so far is replayed before
    // the report starts (soak: 1 run in 20 on a busy machine without this;
    // without the wait above, with other runs' dead rows in shared
    // catalogs, cancelled 2 runs of 4 behind the pooler).
    settle(cx, &st, &p).await?;
    let (r, h) = (st.open("R").await?, st.open("H").await?);
    let before = conflicts(&st).await?;
    let sent = long_report(cx, &st, &r, &h, true).await?;
    p.exec("delete_vacuum", st.sql.get("delete_vacuum")?).await?;
    p.exec("vacuum", &st.sql.bind("vacuum", &[("schema", &cx.env.schema)])?)
        .await?;
    let kept = not_removable(&cx.recorder().details("P", StepResult::Notice));
    // The vacuum's WAL is replayed while the report still runs: no conflict to resolve.
    let lsn = cx
        .env
        .value("SELECT pg_current_wal_lsn()::text", msg::standby_check)
        .await?
        .unwrap_or_default();
    let replayed = st.until("replayed", &lsn, delay + cx.env.wait_timeout).await?;
    release(&st, h);
    let answer = report_answer(cx, &st, sent, delay).await?;
    let _ = r.exec_allow("rollback", st.sql.get("rollback")?, &["25P02"]).await;
    let after = conflicts(&st).await?;
    drop(r);
    st.stop().await?;
    cx.check(held, msg::feedback_seen());
    cx.check(
        matches!(answer, Some(Ok(_))),
        msg::report_completed(cancelled(&answer).0),
    );
    cx.check(replayed, msg::replay_went_on());
    cx.check(kept > 0, msg::vacuum_kept(kept));
    cx.check(after.0 == before.0, msg::no_conflict(before.0, after.0));
    cx.metric("dead_not_removable", kept);
    cx.observe(msg::observed_feedback(kept));
    cx.anomaly(kept > 0);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::other_conflict;

    const LOCK: &str = "relation lock";
    const SNAPSHOT: &str = "User query might have needed to see row versions that must be removed.";
    const HELD: &str = "User was holding a relation lock for too long.";

    #[test]
    fn a_snapshot_conflict_first_is_another_conflict_for_the_lock_variant() {
        // Soak run 33: the lock variant's report cancelled for row versions.
        assert!(other_conflict("40001", SNAPSHOT, LOCK, (0, 0), (1, 0), 1));
        // Its own conflict, or both counters risen: the answer stands.
        assert!(!other_conflict("40001", HELD, LOCK, (0, 0), (0, 1), 1));
        assert!(!other_conflict("40001", SNAPSHOT, LOCK, (0, 0), (1, 1), 1));
        // The DETAIL names the variant's own conflict: it stands, whatever the counters.
        assert!(!other_conflict("40001", HELD, LOCK, (0, 0), (1, 0), 1));
    }

    #[test]
    fn no_cancel_or_no_counter_is_never_another_conflict() {
        // Not cancelled (replay met no conflict: the mechanism broke).
        assert!(!other_conflict("-", "-", LOCK, (0, 0), (0, 0), 1));
        assert!(!other_conflict("none", "-", "row versions", (2, 3), (2, 3), 0));
        // Cancelled, but the counters say nothing: not run again.
        assert!(!other_conflict("40001", SNAPSHOT, LOCK, (2, 3), (2, 3), 1));
        // Another SQLSTATE is not a recovery conflict.
        assert!(!other_conflict("57014", SNAPSHOT, LOCK, (0, 0), (1, 0), 1));
    }

    #[test]
    fn a_lock_conflict_first_is_another_conflict_for_the_snapshot_variant() {
        assert!(other_conflict("40001", HELD, "row versions", (4, 1), (4, 2), 0));
        assert!(!other_conflict("40001", SNAPSHOT, "row versions", (4, 1), (5, 1), 0));
    }
}
