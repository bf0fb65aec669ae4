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
pub mod watch;
mod writer;

use fx::Fx;
pub use fx::release;
use opts::FailoverOpts;
use verdict::{Outcome, Tally, Write, ranges, tally, window_around};
use writer::Writer;

pub static SCENARIO: Scenario = Scenario {
    name: "failover",
    about: msg::about,
    summary: msg::summary,
    readme: "lab's own HA cluster (Patroni and etcd, three PostgreSQL nodes in namespaces of lab's own, kept \
             across variants, failed nodes rejoined with pg_rewind); a writer records what every COMMIT answered, \
             with its LSN and node, and lab reads back what the new primary and the rejoined old one hold. \
             Asynchronous replication loses acknowledged commits when the primary crashes (synchronous keeps them); \
             a cancelled synchronous wait reports COMMIT and the row is lost (unless the client treats the WARNING \
             as failure); a COMMIT that lost its connection had committed and a blind retry pays twice (an \
             idempotency key pays once); synchronous mode quietly turns asynchronous when the standbys die (strict \
             mode stalls instead); a frozen primary, an orphaned PostgreSQL whose Patroni died and a partitioned \
             primary acknowledge writes that are lost (synchronous replication, REST-API routing fence them). \
             `--watch` checks your own cluster through your own failovers. Not in `lab all` unless named.",
    spec: None,
    variants: VARIANTS,
    options: Some(Options::of::<FailoverOpts>(&[
        (
            "writes",
            "bir failover'dan önce ve sırasında yazıcının kaç yazma yaptığı",
        ),
        (
            "watch",
            "lab'ın değil sizin cluster'ınız: --database-url hostlarını verirken (postgres://h1,h2,h3/db?target_session_attrs=read-write), siz onu kendi yolunuzla failover yaparken bir yazıcı yeniden bağlanarak yazar; Ctrl-C'de (ya da --seconds sonunda) lab her şeyi geri okur ve neyin kaybolduğunu bildirir. lab kendine ait tek bir tablo oluşturur ve siler.",
        ),
        (
            "seconds",
            "--watch ile: bu kadar saniye sonra yazmayı bırak (yoksa Ctrl-C'de)",
        ),
        (
            "ha_timeout",
            "lab'ın HA cluster'ını ne kadar beklediği: sağlıklı hale gelmesi, failover yapması, bir düğümün geri katılması için (saniye; Patroni'nin ttl'i 20)",
        ),
    ])),
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
    cancelled_sync_wait "cancelled-sync-wait" {
        expected => {
            en: "W's COMMIT waits for the synchronous standby (SyncRep); C cancels it: W gets a WARNING and COMMIT, R reads the row on the primary; the primary crashes, the synchronous standby is promoted and the row W was told is committed is missing (anomaly)",
            tr: "W'nin COMMIT'i senkron standby'ı bekler (SyncRep); C onu iptal eder: W bir WARNING ve COMMIT alır, R satırı primary'de okur; primary çöker, senkron standby terfi eder ve W'ye commit edildiği söylenen satır yoktur (anomali)",
        },
        explain => {
            en: "A commit is written on the primary before it waits for the synchronous standby; cancelling the wait (a driver's statement timeout, pg_cancel_backend, Ctrl-C) cannot undo it. PostgreSQL ends the wait with a WARNING ('canceling wait for synchronous replication due to user request', DETAIL 'The transaction has already committed locally, but might not have been replicated to the standby.') and reports COMMIT: most drivers show success, other sessions read the row, and a failover then loses it (pgsql-hackers 2019 and 2021: patches to forbid the cancel were proposed, none is in PostgreSQL up to 18). A retry of the same statement after the cancel is acknowledged at once, with the same exposure.",
            tr: "Bir commit senkron standby'ı beklemeden önce primary'ye yazılır; beklemeyi iptal etmek (bir sürücünün statement timeout'u, pg_cancel_backend, Ctrl-C) onu geri alamaz. PostgreSQL beklemeyi bir WARNING ile bitirir ('canceling wait for synchronous replication due to user request', DETAIL 'The transaction has already committed locally, but might not have been replicated to the standby.') ve COMMIT bildirir: çoğu sürücü başarı gösterir, diğer oturumlar satırı okur ve ardından bir failover onu kaybeder (pgsql-hackers 2019 ve 2021: iptali yasaklayan yamalar önerildi, 18'e kadar hiçbiri PostgreSQL'de yok). İptalden sonra aynı ifadenin yeniden denenmesi hemen onaylanır, aynı riskle.",
        },
    }
    warning_as_failure "warning-as-failure" {
        expected => {
            en: "the same cancelled wait, but W's client treats a COMMIT that comes with the WARNING as not committed: it tells nobody the write is done; after the failover nothing the client reported committed is missing, and the cancelled write is an unknown outcome (absent)",
            tr: "aynı iptal edilen bekleme, ama W'nin istemcisi WARNING ile gelen bir COMMIT'i commit edilmemiş sayar: kimseye yazmanın bittiğini söylemez; failover'dan sonra istemcinin commit edildi dediği hiçbir şey eksik değildir ve iptal edilen yazma belirsiz bir sonuçtur (yok)",
        },
        explain => {
            en: "PostgreSQL up to 18 keeps reporting COMMIT after a cancelled synchronous wait, so the guard is the client's: it reads the notices of its COMMIT, and 'canceling wait for synchronous replication' (or 'terminating connection' during the wait) means the outcome is unknown, not success. The application does not confirm the write to its user; it checks later, or retries with an idempotency key once a primary answers. Better still, do not cancel COMMITs: statement timeouts belong before the commit.",
            tr: "PostgreSQL 18'e kadar iptal edilen bir senkron beklemeden sonra COMMIT bildirmeye devam eder; bu yüzden koruma istemcidedir: COMMIT'inin bildirimlerini okur ve 'canceling wait for synchronous replication' (ya da bekleme sırasında 'terminating connection') sonucun başarı değil belirsiz olduğu anlamına gelir. Uygulama yazmayı kullanıcısına onaylamaz; sonra kontrol eder ya da bir primary cevap verince bir idempotency anahtarıyla yeniden dener. Daha iyisi COMMIT'leri iptal etmemektir: statement timeout'lar commit'ten önceye aittir.",
        },
    }
    unknown_outcome "unknown-outcome" {
        expected => {
            en: "W pays request r1 with synchronous_commit = remote_apply while the synchronous standby's replay is paused; its COMMIT waits, the standby has the WAL, the primary crashes: W sees the connection lost and retries blindly on the new primary, which had the first payment already: r1 is paid twice (anomaly)",
            tr: "W, senkron standby'ın replay'i duraklatılmışken synchronous_commit = remote_apply ile r1 isteğini öder; COMMIT'i bekler, standby WAL'a sahiptir, primary çöker: W bağlantının koptuğunu görür ve yeni primary'de körlemesine yeniden dener, oysa ilk ödeme orada zaten vardı: r1 iki kez ödenir (anomali)",
        },
        explain => {
            en: "A connection lost during COMMIT does not say whether the commit happened: the server may have committed (and a standby may have it, as here) or not. An application that treats the error as 'not done' and retries writes the same thing twice: a double charge, a duplicate order. The failure looks like a failure and was a success.",
            tr: "COMMIT sırasında kopan bir bağlantı commit'in olup olmadığını söylemez: sunucu commit etmiş olabilir (ve burada olduğu gibi bir standby'da bulunabilir) ya da etmemiş. Hatayı 'yapılmadı' sayıp yeniden deneyen bir uygulama aynı şeyi iki kez yazar: çift tahsilat, tekrarlanan sipariş. Hata gibi görünen şey bir başarıydı.",
        },
    }
    idempotency_key "idempotency-key" {
        expected => {
            en: "the same lost COMMIT, with payments keyed by the request id: the retry on the new primary inserts nothing (INSERT 0 0, the first payment is there) and r1 is paid once",
            tr: "aynı kaybolan COMMIT, ödemeler istek kimliğiyle anahtarlanmış: yeni primary'deki yeniden deneme hiçbir şey eklemez (INSERT 0 0, ilk ödeme oradadır) ve r1 bir kez ödenir",
        },
        explain => {
            en: "The client gives every request an id of its own and the table keeps it UNIQUE; the write is INSERT ... ON CONFLICT (request_id) DO NOTHING. Retrying after an unknown outcome is then safe: the retry either writes the row or finds it, and rows affected (0 or 1) tells which. This is what makes 'retry on connection loss' correct through a failover.",
            tr: "İstemci her isteğe kendi kimliğini verir ve tablo onu UNIQUE tutar; yazma INSERT ... ON CONFLICT (request_id) DO NOTHING'dir. Belirsiz bir sonuçtan sonra yeniden denemek o zaman güvenlidir: yeniden deneme ya satırı yazar ya da bulur ve etkilenen satır sayısı (0 ya da 1) hangisi olduğunu söyler. Bir failover boyunca 'bağlantı kopunca yeniden dene'yi doğru yapan budur.",
        },
    }
    sync_degrades "sync-degrades" {
        expected(n) = |p| (opts::opts(p).writes) => {
            en: "with synchronous_mode but not strict, both standbys die: Patroni empties synchronous_standby_names and the primary acknowledges W's {n} writes that no standby has (beyond every standby's last flushed position): replication is asynchronous again, silently (anomaly)",
            tr: "synchronous_mode açık ama strict değilken iki standby da ölür: Patroni synchronous_standby_names'i boşaltır ve primary W'nin hiçbir standby'da olmayan {n} yazmasını onaylar (her standby'ın diske yazdığı son konumun ötesinde): replikasyon sessizce yine asenkrondur (anomali)",
        },
        explain => {
            en: "Patroni's synchronous_mode favours availability: when no standby can be synchronous it removes synchronous_standby_names, and commits that were waiting (a few seconds: until its next loop) go through, unprotected. Nothing is lost while the primary lives, but every write acknowledged from then on exists on one server only; Patroni also clears its /sync key, so no standby may be promoted automatically until one is synchronous again (Patroni issues 397 and 400).",
            tr: "Patroni'nin synchronous_mode'u erişilebilirliği yeğler: hiçbir standby senkron olamadığında synchronous_standby_names'i kaldırır ve bekleyen commit'ler (birkaç saniye: bir sonraki döngüsüne kadar) korumasız geçer. Primary yaşadıkça bir şey kaybolmaz, ama o andan sonra onaylanan her yazma tek bir sunucudadır; Patroni /sync anahtarını da temizler, bu yüzden biri yeniden senkron olana kadar hiçbir standby otomatik terfi ettirilemez (Patroni issue 397 ve 400).",
        },
    }
    sync_strict "sync-strict" {
        expected => {
            en: "with synchronous_mode_strict, both standbys die: Patroni sets synchronous_standby_names to '*' and W's COMMIT waits (SyncRep) while no standby streams; once they are back it returns, and a standby has flushed it",
            tr: "synchronous_mode_strict ile iki standby da ölür: Patroni synchronous_standby_names'i '*' yapar ve hiçbir standby akmazken W'nin COMMIT'i bekler (SyncRep); geri geldiklerinde döner ve bir standby onu diske yazmıştır",
        },
        explain => {
            en: "synchronous_mode_strict keeps synchronous replication on when no standby is left: writes stop instead of going on unprotected, and resume once a standby is back. Durability over availability: the primary alone never acknowledges a commit. ('*' accepts any standby, including one tagged nosync that Patroni would never promote: it then holds the commit, but cannot take over.)",
            tr: "synchronous_mode_strict hiçbir standby kalmadığında senkron replikasyonu açık tutar: yazmalar korumasız devam etmek yerine durur ve bir standby geri gelince sürer. Erişilebilirlik yerine dayanıklılık: primary tek başına hiçbir commit'i onaylamaz. ('*' her standby'ı kabul eder, Patroni'nin asla terfi ettirmeyeceği nosync etiketli birini de: o zaman commit onda olur ama yerini alamaz.)",
        },
    }
    zombie_primary "zombie-primary" {
        expected(n) = |p| (opts::opts(p).writes) => {
            en: "the primary is frozen (Patroni and PostgreSQL stopped, as a paused VM); its leader key expires and Patroni promotes the other node; the old PostgreSQL resumes before its Patroni and acknowledges W's {n} writes on the open connection: two primaries; its Patroni then demotes it and pg_rewind discards those {n} rows (anomaly)",
            tr: "primary dondurulur (Patroni ve PostgreSQL durdurulmuş, duraklatılmış bir VM gibi); lider anahtarının süresi dolar ve Patroni diğer düğümü terfi ettirir; eski PostgreSQL Patroni'sinden önce devam eder ve açık bağlantıdaki W'nin {n} yazmasını onaylar: iki primary; sonra Patroni'si onu düşürür ve pg_rewind o {n} satırı atar (anomali)",
        },
        explain => {
            en: "A primary that stops (a VM paused, a long GC or I/O stall, a SIGSTOP) does not know it was replaced: when it resumes it serves the connections it has until its manager wakes up and demotes it. With asynchronous replication every commit it acknowledges in between is on a dead branch of history. lab resumes PostgreSQL before Patroni to make that window certain; in production the scheduler decides, and a client with an open connection can get through in milliseconds.",
            tr: "Duran bir primary (duraklatılmış bir VM, uzun bir GC ya da I/O takılması, bir SIGSTOP) yerine başkasının geçtiğini bilmez: devam ettiğinde, yöneticisi uyanıp onu düşürene kadar elindeki bağlantılara hizmet eder. Asenkron replikasyonda arada onayladığı her commit tarihin ölü bir dalındadır. lab bu pencereyi kesin kılmak için PostgreSQL'i Patroni'den önce devam ettirir; üretimde bunu zamanlayıcı belirler ve açık bağlantısı olan bir istemci milisaniyeler içinde geçebilir.",
        },
    }
    manager_dies "manager-dies" {
        expected(n) = |p| (opts::opts(p).writes) => {
            en: "the primary's Patroni is killed, its PostgreSQL keeps running; the leader key expires, Patroni promotes the other node: two primaries, and the old one acknowledges W's {n} writes on the open connection; when its Patroni comes back it demotes it and pg_rewind discards them (anomaly)",
            tr: "primary'nin Patroni'si öldürülür, PostgreSQL'i çalışmaya devam eder; lider anahtarının süresi dolar, Patroni diğer düğümü terfi ettirir: iki primary ve eski olan açık bağlantıdaki W'nin {n} yazmasını onaylar; Patroni'si geri gelince onu düşürür ve pg_rewind onları atar (anomali)",
        },
        explain => {
            en: "PostgreSQL does not run under Patroni: its postmaster is handed to init. When only Patroni dies (OOM killer, a bad upgrade, systemd restarting it) the cluster loses the leader's heartbeat and promotes a standby, while the old primary still takes writes from every client connected to it: split brain until Patroni returns and rewinds it (repmgr issue 766, CloudNativePG issue 7407). pg_is_in_recovery() is false on both: a client cannot tell.",
            tr: "PostgreSQL Patroni'nin altında çalışmaz: postmaster'ı init'e devredilir. Yalnızca Patroni öldüğünde (OOM killer, hatalı bir yükseltme, onu yeniden başlatan systemd) cluster liderin kalp atışını kaybeder ve bir standby'ı terfi ettirir; eski primary ise ona bağlı her istemciden yazma almaya devam eder: Patroni dönüp onu geri sarana kadar split brain (repmgr issue 766, CloudNativePG issue 7407). pg_is_in_recovery() ikisinde de false'tur: istemci ayırt edemez.",
        },
    }
    manager_dies_routed "manager-dies-routed" {
        expected => {
            en: "the same dead Patroni, with W routed by Patroni's REST API as HAProxy's health check does (GET /primary: 200 on the leader only): the old node answers nothing, W drops its connection there and writes nowhere until the new primary answers 200, then there; nothing acknowledged is lost",
            tr: "aynı ölü Patroni, W'nin yönlendirmesi HAProxy'nin sağlık denetiminin yaptığı gibi Patroni'nin REST API'siyle (GET /primary: yalnızca liderde 200): eski düğüm cevap vermez, W oradaki bağlantısını bırakır ve yeni primary 200 diyene kadar hiçbir yere yazmaz, sonra oraya; onaylanmış hiçbir şey kaybolmaz",
        },
        explain => {
            en: "Route clients by the manager's view, not PostgreSQL's: Patroni answers /primary (or /leader) with 200 only while it holds the leader lock, and a dead Patroni answers nothing. HAProxy with 'option httpchk GET /primary' and 'on-marked-down shutdown-sessions' sends new connections only to the leader and closes those to a node that fails the check, so the orphaned PostgreSQL gets no writes. The cost is a window with no primary at all (until the ttl expires). Synchronous replication fences it too: the orphan's commits would wait for a standby that was promoted.",
            tr: "İstemcileri PostgreSQL'in değil yöneticinin görüşüne göre yönlendirin: Patroni /primary (ya da /leader) isteğine yalnızca lider kilidini tutarken 200 der ve ölü bir Patroni hiç cevap vermez. 'option httpchk GET /primary' ve 'on-marked-down shutdown-sessions' ile HAProxy yeni bağlantıları yalnızca lidere gönderir, denetimi geçemeyen düğüme olanları kapatır; sahipsiz kalan PostgreSQL yazma almaz. Bedeli hiç primary olmayan bir penceredir (ttl dolana kadar). Senkron replikasyon da onu çitler: sahipsizin commit'leri terfi etmiş bir standby'ı beklerdi.",
        },
    }
    partition_async "partition-async" {
        expected => {
            en: "nftables cuts the primary off from etcd and the other nodes (lab's client still reaches it); with asynchronous replication it goes on acknowledging W's writes until Patroni, unable to renew its lock, demotes it; the other node is promoted when the ttl expires, and every write the isolated primary acknowledged after the cut is missing there, and on the old primary once the partition heals and it rejoins (anomaly)",
            tr: "nftables primary'yi etcd'den ve diğer düğümlerden koparır (lab'ın istemcisi ona hâlâ ulaşır); asenkron replikasyonda, kilidini yenileyemeyen Patroni onu düşürene kadar W'nin yazmalarını onaylamaya devam eder; ttl dolunca diğer düğüm terfi eder ve yalıtılmış primary'nin kesintiden sonra onayladığı her yazma orada yoktur, bölünme iyileşip eski primary geri katıldıktan sonra onda da (anomali)",
        },
        explain => {
            en: "A network partition leaves the primary serving its side: the clients that can still reach it keep writing, and with asynchronous replication nothing stops those commits. Patroni demotes a leader that cannot reach the DCS within retry_timeout, which bounds the window, but what was acknowledged in it never reached the side that elects the new primary. (lab tells the nodes apart by the group their processes run as: nftables marks each connection with its opener's group and drops both directions of the isolated node's.)",
            tr: "Bir ağ bölünmesi primary'yi kendi tarafına hizmet eder halde bırakır: ona hâlâ ulaşabilen istemciler yazmaya devam eder ve asenkron replikasyonda bu commit'leri hiçbir şey durdurmaz. Patroni retry_timeout içinde DCS'e ulaşamayan bir lideri düşürür, bu pencereyi sınırlar; ama içinde onaylananlar yeni primary'yi seçen tarafa hiç ulaşmadı. (lab düğümleri süreçlerinin çalıştığı grupla ayırır: nftables her bağlantıyı açanın grubuyla işaretler ve yalıtılan düğümünkilerin iki yönünü de düşürür.)",
        },
    }
    partition_sync "partition-sync" {
        expected => {
            en: "the same partition with synchronous_mode: W's COMMIT on the isolated primary waits (SyncRep) for the standby it cannot reach, until Patroni demotes it: not acknowledged; the synchronous standby is promoted with every acknowledged write",
            tr: "synchronous_mode ile aynı bölünme: yalıtılmış primary'deki W'nin COMMIT'i ulaşamadığı standby için bekler (SyncRep), ta ki Patroni onu düşürene kadar: onaylanmaz; senkron standby onaylanan her yazmayla terfi eder",
        },
        explain => {
            en: "Synchronous replication makes the isolated side unable to acknowledge anything: every commit waits for a standby on the other side. Clients there see writes hang, then fail when Patroni demotes the primary; the side with etcd promotes the synchronous standby, which has every commit that was acknowledged.",
            tr: "Senkron replikasyon yalıtılmış tarafı hiçbir şeyi onaylayamaz hale getirir: her commit diğer taraftaki bir standby'ı bekler. Oradaki istemciler yazmaların takıldığını, sonra Patroni primary'yi düşürünce başarısız olduğunu görür; etcd'nin olduğu taraf, onaylanmış her commit'e sahip senkron standby'ı terfi ettirir.",
        },
    }
}

/// The writer's rows against what a node holds.
fn read_back(writes: &[Write], present: &[i64]) -> Tally {
    tally(writes, present)
}

/// The writer, connected to the primary at the variant's start.
async fn writer(cx: &Cx<'_>, fx: &Fx) -> Result<Writer> {
    let mut w = Writer::new();
    if !w.connect(cx, fx, fx.deadline).await? {
        return Err(crate::engine::Deviation(msg::no_primary_at_start()).into());
    }
    Ok(w)
}

/// W's first `n` writes, acknowledged and received by both standbys (as
/// each says: its WAL received reaches the last one's), so that whatever
/// the variant does next starts from a cluster where they are safe.
async fn first_writes(cx: &Cx<'_>, fx: &Fx, w: &mut Writer, n: usize) -> Result<bool> {
    let outcomes = w.write_n(cx, fx, n).await?;
    let last = w.writes.iter().filter_map(|x| x.lsn).max().unwrap_or(u64::MAX);
    let received = fx.received(fx.roles.candidate, last, fx.deadline).await?
        && fx.received(fx.roles.replica, last, fx.deadline).await?;
    Ok(all(&outcomes, Outcome::Acked) && received)
}

/// The rows each of `nodes` holds: (its name, the writer's ids there).
async fn holders(fx: &Fx, nodes: &[usize]) -> Result<Vec<(String, Vec<i64>)>> {
    let mut out = Vec::new();
    for &i in nodes {
        out.push((fx.name(i).to_string(), fx.ids_on(i).await?));
    }
    Ok(out)
}

/// The writes of `ids` and whether each outcome is `o`.
fn all(outcomes: &[Outcome], o: Outcome) -> bool {
    !outcomes.is_empty() && outcomes.iter().all(|x| *x == o)
}

/// The writes as evidence, consecutive ones alike grouped: their ids, what
/// the client was told, the node that answered, and whether each node read
/// back holds them; every write (id, outcome, node, LSN) as a metric.
fn evidence(cx: &mut Cx<'_>, writes: &[Write], holders: &[(String, Vec<i64>)]) {
    use crate::report::Phrase;
    let mut columns = vec![
        Phrase::Plain("ids".into()),
        Phrase::Text(msg::col_outcome()),
        Phrase::Plain("node".into()),
    ];
    columns.extend(holders.iter().map(|(n, _)| Phrase::Plain(n.clone())));
    let key = |w: &Write| {
        let held: Vec<bool> = holders.iter().map(|(_, ids)| ids.contains(&w.id)).collect();
        (w.outcome, w.node.clone(), held)
    };
    type Alike = (Outcome, Option<String>, Vec<bool>);
    let mut groups: Vec<(Vec<i64>, Alike)> = Vec::new();
    for w in writes {
        let k = key(w);
        match groups.last_mut() {
            Some((ids, last)) if *last == k && ids.last().is_some_and(|l| l + 1 == w.id) => ids.push(w.id),
            _ => groups.push((vec![w.id], k)),
        }
    }
    let rows = groups
        .into_iter()
        .map(|(ids, (outcome, node, held))| {
            let mut row = vec![
                Phrase::Plain(ranges(&ids)),
                Phrase::Text(match outcome {
                    Outcome::Acked => msg::acked(),
                    Outcome::Failed => msg::failed(),
                    Outcome::Unknown => msg::unknown(),
                }),
                Phrase::Plain(node.unwrap_or_else(|| "-".into())),
            ];
            row.extend(
                held.into_iter()
                    .map(|h| Phrase::Plain(if h { "✔" } else { "✖" }.into())),
            );
            row
        })
        .collect();
    cx.evidence(msg::writes_title(), columns, rows);
    // Every write, consecutive ones alike in runs: ids, outcome, node, LSNs.
    type Run = (Vec<i64>, Outcome, Option<String>, Option<u64>, Option<u64>);
    let mut runs: Vec<Run> = Vec::new();
    for w in writes {
        match runs.last_mut() {
            Some((ids, o, n, _, last))
                if *o == w.outcome && *n == w.node && ids.last().is_some_and(|l| l + 1 == w.id) =>
            {
                ids.push(w.id);
                *last = w.lsn.or(*last);
            }
            _ => runs.push((vec![w.id], w.outcome, w.node.clone(), w.lsn, w.lsn)),
        }
    }
    let hex = |l: Option<u64>| l.map(|l| format!("{:X}/{:X}", l >> 32, l & 0xffff_ffff));
    let all: Vec<serde_json::Value> = runs
        .into_iter()
        .map(|(ids, o, node, first, last)| {
            serde_json::json!({
                "ids": ranges(&ids),
                "count": ids.len(),
                "outcome": match o { Outcome::Acked => "acked", Outcome::Failed => "failed", Outcome::Unknown => "unknown" },
                "node": node,
                "first_lsn": hex(first),
                "last_lsn": hex(last),
            })
        })
        .collect();
    cx.metric("writes", all);
}

/// How long two nodes took writes: from the promotion lab saw to the
/// demotion it saw now.
fn split_brain(cx: &mut Cx<'_>, promoted_ms: Option<f64>) {
    if let Some(p) = promoted_ms {
        cx.metric("two_primaries_ms", (cx.recorder().now_ms() - p).round());
    }
}

/// The metrics every variant with a failover reports.
fn failover_metrics(cx: &mut Cx<'_>, writes: &[Write], crashed_ms: f64, promoted_ms: Option<f64>, t: &Tally) {
    cx.metric("acked", t.acked);
    cx.metric("lost", t.lost.len());
    if let Some(p) = promoted_ms {
        cx.metric("failover_ms", (p - crashed_ms).round());
    }
    // What the client saw: the longest time between two acknowledged
    // writes with attempts that failed in between (after a partition the
    // isolated primary still acknowledges for a while).
    let longest = verdict::windows(writes)
        .into_iter()
        .filter(|w| w.first_ok_ms > crashed_ms)
        .max_by(|a, b| a.ms().total_cmp(&b.ms()))
        .or_else(|| window_around(writes, crashed_ms));
    if let Some(w) = longest {
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
    if !w.connect(cx, &fx, fx.deadline).await? {
        return Err(crate::engine::Deviation(msg::no_primary_at_start()).into());
    }
    // Every standby has them: replication works before it is stopped.
    let before = first_writes(cx, &fx, &mut w, 3).await?;
    fx.stop_walsenders(cx, p, None).await?;
    let during = w.write_n(cx, &fx, n).await?;
    let first = w.writes[3..].iter().filter_map(|x| x.lsn).min().unwrap_or(u64::MAX);
    // The servers say the standbys lack them: their WAL received stops short of the first.
    let lacked =
        !fx.received(c, first, Duration::ZERO).await? && !fx.received(fx.roles.replica, first, Duration::ZERO).await?;
    let unreplicated: Vec<i64> = w.writes[3..].iter().map(|x| x.id).collect();
    let crashed = fx.crash(cx, p);
    let (promoted, _) = tokio::join!(fx.promoted(cx, p), w.write_through(cx, &fx, fx.deadline));
    let promoted = promoted?;
    let after = w.write_n(cx, &fx, 2).await?;
    let new = promoted.map(|(i, _)| i).unwrap_or(c);
    let on_new = fx.ids_on(new).await?;
    let rejoined = fx.rejoined(cx, p).await?;
    let on_old = fx.ids_on(p).await?;
    let t_new = read_back(&w.writes, &on_new);
    let t_old = read_back(&w.writes, &on_old);
    cx.check(before, msg::before_replicated(3));
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
    if !w.connect(cx, &fx, fx.deadline).await? {
        return Err(crate::engine::Deviation(msg::no_primary_at_start()).into());
    }
    let before = first_writes(cx, &fx, &mut w, 3).await?;
    fx.stop_walsenders(cx, p, Some(s)).await?;
    let id = w.next_id();
    let mut pending = w.begin(&fx, "write", id).await?;
    let waited = w
        .waits_for_standby(cx, &fx, &mut pending, fx.name(s), cx.env.wait_timeout)
        .await?;
    let crashed = fx.crash(cx, p);
    let in_flight = w.finish(cx, &fx, pending, fx.deadline).await?.outcome;
    let (promoted, _) = tokio::join!(fx.promoted(cx, p), w.write_through(cx, &fx, fx.deadline));
    let promoted = promoted?;
    let after = w.write_n(cx, &fx, 2).await?;
    let new = promoted.map(|(i, _)| i).unwrap_or(s);
    let on_new = fx.ids_on(new).await?;
    let rejoined = fx.rejoined(cx, p).await?;
    let on_old = fx.ids_on(p).await?;
    let t_new = read_back(&w.writes, &on_new);
    let t_old = read_back(&w.writes, &on_old);
    cx.check(before, msg::before_replicated(3));
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

async fn cancelled_sync_wait(cx: &mut Cx<'_>) -> Result<()> {
    cancelled(cx, false).await
}

async fn warning_as_failure(cx: &mut Cx<'_>) -> Result<()> {
    cancelled(cx, true).await
}

/// A COMMIT's synchronous wait cancelled, then the primary crashes; with
/// `guard`, W's client counts a COMMIT that came with the WARNING as unknown.
async fn cancelled(cx: &mut Cx<'_>, guard: bool) -> Result<()> {
    let Some(fx) = Fx::begin(cx).await? else {
        return Ok(());
    };
    let (p, s) = (fx.roles.primary, fx.roles.candidate);
    let mut w = writer(cx, &fx).await?;
    let before = first_writes(cx, &fx, &mut w, 2).await?;
    fx.stop_walsenders(cx, p, Some(s)).await?;
    let id = w.next_id();
    let mut pending = w.begin(&fx, "write", id).await?;
    let waited = w
        .waits_for_standby(cx, &fx, &mut pending, fx.name(s), cx.env.wait_timeout)
        .await?;
    // C cancels W's statement (a statement_timeout, a person pressing Ctrl-C).
    let pid = w.session().map_or(0, |x| x.pid());
    let c = fx.open(p, "C").await?;
    c.exec("cancel", &fx.sql.bind("cancel", &[("pid", &pid)])?).await?;
    let answered = w.finish(cx, &fx, pending, cx.env.wait_timeout).await?;
    let warned = answered
        .warning
        .as_deref()
        .is_some_and(|m| m.contains("synchronous replication"));
    let told_committed = answered.outcome == Outcome::Acked;
    if guard && warned {
        w.reclassify(id, Outcome::Unknown);
        if let Some(x) = w.session() {
            x.note(msg::warning_is_failure(id));
        }
    }
    // Another session reads the row on the primary.
    let r = fx.open(p, "R").await?;
    let seen = r.rows("read_one", &fx.sql.bind("read_one", &[("id", &id)])?).await?;
    let seen = seen.get(0, "rows") == Some("1");
    drop((c, r));
    let crashed = fx.crash(cx, p);
    let (promoted, _) = tokio::join!(fx.promoted(cx, p), w.write_through(cx, &fx, fx.deadline));
    let promoted = promoted?;
    let new = promoted.map(|(i, _)| i).unwrap_or(s);
    let on_new = fx.ids_on(new).await?;
    let rejoined = fx.rejoined(cx, p).await?;
    let on_old = fx.ids_on(p).await?;
    let t_new = read_back(&w.writes, &on_new);
    let t_old = read_back(&w.writes, &on_old);
    cx.check(before, msg::before_replicated(2));
    cx.check(waited, msg::commit_waited(fx.name(s)));
    cx.check(told_committed && warned, msg::cancel_reports_commit(id));
    cx.check(seen, msg::read_by_other(id));
    cx.check(promoted.is_some_and(|(i, _)| i == s), msg::promoted_sync(fx.name(s)));
    if guard {
        cx.check(
            t_new.lost.is_empty(),
            msg::none_reported_lost(fx.name(new), ranges(&t_new.lost)),
        );
        cx.check(t_new.unknown_absent.contains(&id), msg::cancelled_unknown(id));
        cx.observe(msg::observed_guarded(id, t_new.acked, fx.name(new)));
    } else {
        cx.check(
            t_new.lost == vec![id],
            msg::cancelled_lost(id, fx.name(new), ranges(&t_new.lost)),
        );
        cx.observe(msg::observed_cancelled(id, fx.name(new)));
    }
    cx.check(
        rejoined && t_old.lost == t_new.lost,
        msg::same_after_rejoin(fx.name(p), ranges(&t_old.lost)),
    );
    failover_metrics(cx, &w.writes, crashed, promoted.map(|(_, t)| t), &t_new);
    let held = vec![(fx.name(new).to_string(), on_new), (fx.name(p).to_string(), on_old)];
    evidence(cx, &w.writes, &held);
    cx.anomaly(!t_new.lost.is_empty());
    Ok(())
}

async fn unknown_outcome(cx: &mut Cx<'_>) -> Result<()> {
    lost_commit(cx, false).await
}

async fn idempotency_key(cx: &mut Cx<'_>) -> Result<()> {
    lost_commit(cx, true).await
}

/// A payment whose COMMIT loses its connection though the standby has
/// it, retried on the new primary: blindly, or under its request id.
async fn lost_commit(cx: &mut Cx<'_>, keyed: bool) -> Result<()> {
    let Some(fx) = Fx::begin(cx).await? else {
        return Ok(());
    };
    let (p, s) = (fx.roles.primary, fx.roles.candidate);
    let statement = if keyed { "pay_once" } else { "pay" };
    let table = if keyed {
        "create_payments_keyed"
    } else {
        "create_payments"
    };
    let mut w = writer(cx, &fx).await?;
    let ws = w
        .session()
        .cloned()
        .ok_or_else(|| anyhow::Error::new(msg::no_primary_at_start()))?;
    ws.exec(table, fx.sql.get(table)?).await?;
    ws.exec("remote_apply", fx.sql.get("remote_apply")?).await?;
    // The synchronous standby stores WAL but applies none: a remote_apply
    // COMMIT waits. Its startup process stopped, not replay paused with
    // pg_wal_replay_pause(): Patroni resumes that within its next loop.
    let startup = fx.ha.stop_replay(s).await?;
    cx.narrate(msg::replay_stopped(fx.name(s)));
    let id = w.next_id();
    let mut pending = w.begin(&fx, statement, id).await?;
    let waited = w
        .waits_for_standby(cx, &fx, &mut pending, fx.name(s), cx.env.wait_timeout)
        .await?;
    // The standby has the commit on disk: its WAL received reaches the primary's.
    let lsn = fx
        .lsn_on(p, "SELECT pg_current_wal_lsn()::text")
        .await?
        .unwrap_or(u64::MAX);
    let stored = fx.received(s, lsn, cx.env.wait_timeout).await?;
    let crashed = fx.crash(cx, p);
    // The primary is gone: the standby applies what it has, and may be promoted.
    unsafe { libc::kill(startup, libc::SIGCONT) };
    let first = w.finish(cx, &fx, pending, fx.deadline).await?.outcome;
    // The application retries the request once a primary answers.
    let (promoted, retried) = tokio::join!(fx.promoted(cx, p), w.retry(cx, &fx, statement, id, fx.deadline));
    let promoted = promoted?;
    let retried = retried?;
    let new = promoted.map(|(i, _)| i).unwrap_or(s);
    let paid = fx.opener(new).open("check").await?;
    let set = paid.rows("paid", fx.sql.get("paid")?).await?;
    drop(paid);
    let times: i64 = set.get(0, "payments").and_then(|v| v.parse().ok()).unwrap_or(0);
    let rejoined = fx.rejoined(cx, p).await?;
    cx.check(waited, msg::commit_waited(fx.name(s)));
    cx.check(stored, msg::standby_stored(fx.name(s)));
    cx.check(first == Outcome::Unknown, msg::commit_connection_lost(id));
    cx.check(promoted.is_some_and(|(i, _)| i == s), msg::promoted_sync(fx.name(s)));
    let retry_inserted = retried.as_ref().map(|a| a.tags.iter().any(|t| t == "INSERT 0 1"));
    if keyed {
        cx.check(retry_inserted == Some(false), msg::retry_found_it());
        cx.check(times == 1, msg::paid_once(times));
        cx.observe(msg::observed_once(times));
    } else {
        cx.check(retry_inserted == Some(true), msg::retry_inserted());
        cx.check(times == 2, msg::paid_twice(times));
        cx.observe(msg::observed_twice(times));
    }
    cx.check(rejoined, msg::rejoined_check(fx.name(p)));
    cx.metric("payments", times);
    if let Some(w) = window_around(&w.writes, crashed) {
        cx.metric("unavailable_ms", w.ms().round());
    }
    if let Some((_, t)) = promoted {
        cx.metric("failover_ms", (t - crashed).round());
    }
    cx.anomaly(times > 1);
    Ok(())
}

async fn sync_degrades(cx: &mut Cx<'_>) -> Result<()> {
    standbys_die(cx, false).await
}

async fn sync_strict(cx: &mut Cx<'_>) -> Result<()> {
    standbys_die(cx, true).await
}

/// Both standbys die (their Patroni stopped so that it does not restart
/// them, their PostgreSQL crashed) while the primary takes writes.
async fn standbys_die(cx: &mut Cx<'_>, strict: bool) -> Result<()> {
    let Some(fx) = Fx::begin(cx).await? else {
        return Ok(());
    };
    let n = opts::opts(&cx.params).writes;
    let (p, s, r) = (fx.roles.primary, fx.roles.candidate, fx.roles.replica);
    let mut w = writer(cx, &fx).await?;
    let before = first_writes(cx, &fx, &mut w, 2).await?;
    for i in [s, r] {
        fx.ha.signal_patroni(i, libc::SIGSTOP);
        fx.crash(cx, i);
    }
    // Whatever W writes from now on is beyond the primary's WAL position
    // when both standbys were gone: on no standby.
    let flushed = fx
        .lsn_on(p, "SELECT pg_current_wal_lsn()::text")
        .await?
        .unwrap_or(u64::MAX);
    cx.narrate(msg::standbys_stopped(fx.name(s), fx.name(r)));
    // Patroni on the primary notices: synchronous_standby_names changes.
    let names_sql = "SELECT current_setting('synchronous_standby_names')";
    let names = fx
        .until_reads(p, names_sql, |v| v != fx.name(s), fx.deadline)
        .await?
        .unwrap_or_default();
    let check = fx.opener(p).open("check").await?;
    check.rows("sync_names", fx.sql.get("sync_names")?).await?;
    check.rows("replication", fx.sql.get("replication")?).await?;
    let (stalled, returned, after_lsn_ok);
    if strict {
        let id = w.next_id();
        let mut pending = w.begin(&fx, "write", id).await?;
        let waited = w
            .waits_for_standby(cx, &fx, &mut pending, "*", cx.env.wait_timeout)
            .await?;
        // Still waiting with no standby streaming, as the primary says.
        let streaming = fx
            .value(p, "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'")
            .await?;
        stalled = waited && !Writer::answered(&mut pending) && streaming.as_deref() == Some("0");
        for i in [s, r] {
            fx.ha.signal_patroni(i, libc::SIGCONT);
        }
        cx.narrate(msg::standbys_resumed(fx.name(s), fx.name(r)));
        let a = w.finish(cx, &fx, pending, fx.deadline).await?;
        returned = a.outcome == Outcome::Acked;
        let lsn = w.writes.last().and_then(|x| x.lsn).unwrap_or(u64::MAX);
        let best = fx
            .value(p, "SELECT max(flush_lsn)::text FROM pg_stat_replication")
            .await?
            .as_deref()
            .and_then(verdict::lsn);
        after_lsn_ok = best.is_some_and(|b| b >= lsn);
    } else {
        let outcomes = w.write_n(cx, &fx, n).await?;
        stalled = false;
        returned = all(&outcomes, Outcome::Acked);
        after_lsn_ok = false;
        for i in [s, r] {
            fx.ha.signal_patroni(i, libc::SIGCONT);
        }
        cx.narrate(msg::standbys_resumed(fx.name(s), fx.name(r)));
    }
    drop(check);
    let unprotected = verdict::beyond(&w.writes, flushed);
    let healthy = fx.back(cx).await?;
    cx.check(before, msg::before_replicated(2));
    if strict {
        cx.check(names == "*", msg::names_star(&names));
        cx.check(stalled, msg::strict_waits());
        cx.check(returned && after_lsn_ok, msg::strict_returns());
        cx.observe(msg::observed_strict(&names));
    } else {
        cx.check(names.is_empty(), msg::names_emptied(&names));
        cx.check(
            returned && unprotected.len() == n,
            msg::acked_unprotected(n, ranges(&unprotected)),
        );
        cx.observe(msg::observed_degraded(unprotected.len()));
    }
    cx.check(healthy, msg::standbys_back());
    // Strict: the one write waited and a standby has it.
    let unprotected = if strict {
        if after_lsn_ok { 0 } else { unprotected.len() }
    } else {
        unprotected.len()
    };
    cx.metric("unprotected", unprotected);
    cx.metric("synchronous_standby_names", &names);
    let held = holders(&fx, &[p]).await?;
    evidence(cx, &w.writes, &held);
    cx.anomaly(unprotected > 0);
    Ok(())
}

async fn zombie_primary(cx: &mut Cx<'_>) -> Result<()> {
    zombie(cx).await
}

/// The primary frozen past the ttl, then resumed PostgreSQL first.
async fn zombie(cx: &mut Cx<'_>) -> Result<()> {
    let Some(fx) = Fx::begin(cx).await? else {
        return Ok(());
    };
    let n = opts::opts(&cx.params).writes;
    let (p, s) = (fx.roles.primary, fx.roles.candidate);
    let mut w = writer(cx, &fx).await?;
    let before = first_writes(cx, &fx, &mut w, 2).await?;
    fx.ha.signal_patroni(p, libc::SIGSTOP);
    fx.ha.freeze_postgres(p, libc::SIGSTOP);
    let frozen = cx.recorder().now_ms();
    cx.narrate(msg::frozen(fx.name(p)));
    let promoted = fx.promoted(cx, p).await?;
    let new = promoted.map(|(i, _)| i).unwrap_or(s);
    fx.ha.freeze_postgres(p, libc::SIGCONT);
    cx.narrate(msg::zombie_resumed(fx.name(p)));
    let two = fx.takes_writes(p).await && fx.takes_writes(new).await;
    let zombie_from = w.writes.len();
    let mut zombie_waited = false;
    if fx.sync {
        let id = w.next_id();
        let mut pending = w.begin(&fx, "write", id).await?;
        zombie_waited = w
            .waits_for_standby(cx, &fx, &mut pending, fx.name(s), cx.env.wait_timeout)
            .await?;
        fx.ha.signal_patroni(p, libc::SIGCONT);
        cx.narrate(msg::manager_resumed(fx.name(p)));
        w.finish(cx, &fx, pending, fx.deadline).await?;
    } else {
        w.write_n(cx, &fx, n).await?;
        fx.ha.signal_patroni(p, libc::SIGCONT);
        cx.narrate(msg::manager_resumed(fx.name(p)));
    }
    // W goes on once the zombie is demoted (its writes until then would be lost too).
    if !fx.demoted(cx, p).await? && fx.ha.leader().await.ok().flatten() == Some(p) {
        // Patroni before 3.1 lets a primary without the leader lock take
        // it, when it is free, whatever its timeline (patroni#2787).
        cx.recorder()
            .note("patroni", msg::stale_primary_won(fx.name(p), fx.name(new)));
    }
    split_brain(cx, promoted.map(|(_, t)| t));
    let zombie_acked: Vec<i64> = w.writes[zombie_from..]
        .iter()
        .filter(|x| x.outcome == Outcome::Acked)
        .map(|x| x.id)
        .collect();
    let end = Split::settle(cx, &fx, &mut w, p, new).await?;
    let t_new = &end.t_new;
    split_checks(cx, &fx, before, promoted, two, p, new);
    if fx.sync {
        cx.check(
            zombie_waited && zombie_acked.is_empty(),
            msg::zombie_cannot_ack(fx.name(p)),
        );
        cx.check(t_new.lost.is_empty(), msg::none_lost(fx.name(new), ranges(&t_new.lost)));
        cx.observe(msg::observed_zombie_fenced(fx.name(p)));
    } else {
        cx.check(
            zombie_acked.len() == n,
            msg::zombie_acked(fx.name(p), zombie_acked.len()),
        );
        cx.check(
            t_new.lost == zombie_acked,
            msg::zombie_lost(ranges(&zombie_acked), ranges(&t_new.lost)),
        );
        cx.observe(msg::observed_zombie(fx.name(p), zombie_acked.len()));
    }
    end.conclude(cx, &fx, &w, frozen, promoted);
    Ok(())
}

/// The end of two primaries at once (a zombie, an orphan): what the new
/// primary and the old one, rejoined, hold of W's writes.
struct Split {
    new: usize,
    old: usize,
    on_new: Vec<i64>,
    on_old: Vec<i64>,
    rejoined: bool,
    t_new: verdict::Tally,
    t_old: verdict::Tally,
}

impl Split {
    /// W's writes through to the primary there is now, then each node's read back.
    async fn settle(cx: &mut Cx<'_>, fx: &Fx, w: &mut Writer, old: usize, new: usize) -> Result<Split> {
        w.write_through(cx, fx, fx.deadline).await?;
        let on_new = fx.ids_on(new).await?;
        let rejoined = fx.rejoined(cx, old).await?;
        let on_old = fx.ids_on(old).await?;
        Ok(Split {
            new,
            old,
            t_new: read_back(&w.writes, &on_new),
            t_old: read_back(&w.writes, &on_old),
            on_new,
            on_old,
            rejoined,
        })
    }

    /// The old primary holds what the new one does once rejoined; the
    /// failover's figures and the evidence; an anomaly where a write was lost.
    fn conclude(self, cx: &mut Cx<'_>, fx: &Fx, w: &Writer, failed_ms: f64, promoted: Option<(usize, f64)>) {
        cx.check(
            self.rejoined && self.t_old.lost == self.t_new.lost,
            msg::same_after_rejoin(fx.name(self.old), ranges(&self.t_old.lost)),
        );
        failover_metrics(cx, &w.writes, failed_ms, promoted.map(|(_, t)| t), &self.t_new);
        let held = vec![
            (fx.name(self.new).to_string(), self.on_new),
            (fx.name(self.old).to_string(), self.on_old),
        ];
        evidence(cx, &w.writes, &held);
        cx.anomaly(!self.t_new.lost.is_empty());
    }
}

/// What holds for two primaries at once, whatever made them: W's first
/// writes reached the standbys, the candidate was promoted, and the old
/// primary took writes beside the new one.
fn split_checks(
    cx: &mut Cx<'_>,
    fx: &Fx,
    before: bool,
    promoted: Option<(usize, f64)>,
    two: bool,
    old: usize,
    new: usize,
) {
    let s = fx.roles.candidate;
    cx.check(before, msg::before_replicated(2));
    cx.check(promoted.is_some_and(|(i, _)| i == s), msg::promoted_other(fx.name(s)));
    cx.check(two, msg::two_primaries(fx.name(old), fx.name(new)));
}

async fn manager_dies(cx: &mut Cx<'_>) -> Result<()> {
    manager(cx, false).await
}

async fn manager_dies_routed(cx: &mut Cx<'_>) -> Result<()> {
    manager(cx, true).await
}

/// The primary's Patroni killed; its PostgreSQL goes on.
async fn manager(cx: &mut Cx<'_>, routed: bool) -> Result<()> {
    let Some(fx) = Fx::begin(cx).await? else {
        return Ok(());
    };
    let n = opts::opts(&cx.params).writes;
    let (p, s) = (fx.roles.primary, fx.roles.candidate);
    let mut w = writer(cx, &fx).await?;
    let before = first_writes(cx, &fx, &mut w, 2).await?;
    fx.ha.signal_patroni(p, libc::SIGKILL);
    let killed = cx.recorder().now_ms();
    cx.narrate(msg::manager_killed(fx.name(p)));
    let orphan_from = w.writes.len();
    let (promoted, two);
    if routed {
        // W follows Patroni's REST API: nowhere until a leader answers.
        let (pr, _) = tokio::join!(fx.promoted(cx, p), w.write_routed(cx, &fx, fx.deadline));
        promoted = pr?;
        two = fx.takes_writes(p).await && promoted.is_some_and(|(i, _)| i != p);
        w.write_n(cx, &fx, 2).await?;
    } else {
        promoted = fx.promoted(cx, p).await?;
        two = fx.takes_writes(p).await && promoted.is_some();
        w.write_n(cx, &fx, n).await?;
    }
    let orphan_acked: Vec<i64> = w.writes[orphan_from..]
        .iter()
        .filter(|x| x.outcome == Outcome::Acked && x.node.as_deref() == Some(fx.name(p)))
        .map(|x| x.id)
        .collect();
    let new = promoted.map(|(i, _)| i).unwrap_or(s);
    fx.ha.start_patroni(p)?;
    cx.narrate(msg::manager_restarted(fx.name(p)));
    fx.demoted(cx, p).await?;
    split_brain(cx, promoted.map(|(_, t)| t));
    let end = Split::settle(cx, &fx, &mut w, p, new).await?;
    let t_new = &end.t_new;
    split_checks(cx, &fx, before, promoted, two, p, new);
    if routed {
        cx.check(orphan_acked.is_empty(), msg::routed_none_orphan(fx.name(p)));
        cx.check(t_new.lost.is_empty(), msg::none_lost(fx.name(new), ranges(&t_new.lost)));
        cx.observe(msg::observed_routed(fx.name(new)));
    } else {
        cx.check(
            orphan_acked.len() == n,
            msg::orphan_acked(fx.name(p), orphan_acked.len()),
        );
        cx.check(
            t_new.lost == orphan_acked,
            msg::zombie_lost(ranges(&orphan_acked), ranges(&t_new.lost)),
        );
        cx.observe(msg::observed_split(fx.name(p), orphan_acked.len()));
    }
    end.conclude(cx, &fx, &w, killed, promoted);
    Ok(())
}

async fn partition_async(cx: &mut Cx<'_>) -> Result<()> {
    partition(cx).await
}

async fn partition_sync(cx: &mut Cx<'_>) -> Result<()> {
    partition(cx).await
}

/// The primary cut off from etcd and the other nodes; lab's client is not.
async fn partition(cx: &mut Cx<'_>) -> Result<()> {
    let Some(fx) = Fx::begin(cx).await? else {
        return Ok(());
    };
    if !fx.ha.partitionable {
        cx.skip(msg::needs_nft(crate::postgres::patroni::msg::install()));
        return Ok(());
    }
    let n = opts::opts(&cx.params).writes;
    let (p, s) = (fx.roles.primary, fx.roles.candidate);
    let mut w = writer(cx, &fx).await?;
    let before = first_writes(cx, &fx, &mut w, 2).await?;
    fx.ha.partition(p)?;
    let cut = cx.recorder().now_ms();
    cx.narrate(msg::partitioned(fx.name(p)));
    let from = w.writes.len();
    let mut waited = false;
    if fx.sync {
        let id = w.next_id();
        let mut pending = w.begin(&fx, "write", id).await?;
        waited = w
            .waits_for_standby(cx, &fx, &mut pending, fx.name(s), cx.env.wait_timeout)
            .await?;
        w.finish(cx, &fx, pending, fx.deadline).await?;
    } else {
        w.write_until_refused(cx, &fx, n, fx.deadline).await?;
    }
    let isolated: Vec<Write> = w.writes[from..].to_vec();
    let isolated_acked: Vec<i64> = isolated
        .iter()
        .filter(|x| x.outcome == Outcome::Acked)
        .map(|x| x.id)
        .collect();
    let (promoted, _) = tokio::join!(fx.promoted(cx, p), w.write_through(cx, &fx, fx.deadline));
    let promoted = promoted?;
    let new = promoted.map(|(i, _)| i).unwrap_or(s);
    let on_new = fx.ids_on(new).await?;
    fx.ha.heal()?;
    cx.narrate(msg::healed(fx.name(p)));
    let rejoined = fx.rejoined(cx, p).await?;
    let on_old = fx.ids_on(p).await?;
    let t_new = read_back(&w.writes, &on_new);
    let t_old = read_back(&w.writes, &on_old);
    cx.check(before, msg::before_replicated(2));
    cx.check(promoted.is_some_and(|(i, _)| i == s), msg::promoted_other(fx.name(s)));
    if fx.sync {
        cx.check(
            waited && isolated_acked.is_empty(),
            msg::isolated_cannot_ack(fx.name(p)),
        );
        cx.check(
            t_new.lost.is_empty() && t_new.acked > 0,
            msg::none_lost(fx.name(new), ranges(&t_new.lost)),
        );
        cx.observe(msg::observed_partition_sync(fx.name(p), fx.name(new)));
    } else {
        cx.check(
            isolated_acked.len() >= n,
            msg::isolated_acked(fx.name(p), isolated_acked.len()),
        );
        cx.check(
            !t_new.lost.is_empty() && t_new.lost == isolated_acked,
            msg::isolated_lost(isolated_acked.len(), t_new.lost.len()),
        );
        cx.observe(msg::observed_partition(fx.name(p), t_new.lost.len()));
    }
    cx.check(
        rejoined && t_old.lost == t_new.lost,
        msg::same_after_rejoin(fx.name(p), ranges(&t_old.lost)),
    );
    failover_metrics(cx, &w.writes, cut, promoted.map(|(_, t)| t), &t_new);
    let held = vec![(fx.name(new).to_string(), on_new), (fx.name(p).to_string(), on_old)];
    evidence(cx, &w.writes, &held);
    cx.anomaly(!t_new.lost.is_empty());
    Ok(())
}
