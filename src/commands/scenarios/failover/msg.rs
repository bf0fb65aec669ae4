//! What `lab failover` says, in English and Turkish.
crate::messages! {
    prefix "fo";
    about() {
        en: "HA failover: what a Patroni cluster's failover does to acknowledged writes",
        tr: "HA failover: bir Patroni cluster'ının failover'ının onaylanmış yazmalara yaptığı",
    }
    summary() {
        en: "a writer on lab's own Patroni cluster (etcd, three nodes) through crashes, pauses and partitions",
        tr: "lab'ın kendi Patroni cluster'ında (etcd, üç düğüm) çökmeler, duraklamalar ve bölünmeler boyunca bir yazıcı",
    }
    needs_patroni(why) {
        en: "needs lab's HA cluster: {why}",
        tr: "lab'ın HA cluster'ı gerekir: {why}",
    }
    needs_root() {
        en: "lab's HA cluster runs in namespaces of its own (PID, network), which only root can make: run lab as root",
        tr: "lab'ın HA cluster'ı kendi ad alanlarında (PID, ağ) çalışır ve bunları yalnızca root oluşturabilir: lab'ı root olarak çalıştırın",
    }
    lacks_program(program, dir) {
        en: "Patroni needs {program} beside postgres, which {dir} lacks: install the postgresql package",
        tr: "Patroni postgres'in yanında {program} ister, {dir} içinde yok: postgresql paketini kurun",
    }
    cluster_started(s, versions, bin) {
        en: "lab's HA cluster is healthy after {s} s: etcd and three nodes streaming ({versions}; PostgreSQL from {bin})",
        tr: "lab'ın HA cluster'ı {s} sn sonra sağlıklı: etcd ve akan üç düğüm ({versions}; PostgreSQL {bin} içinden)",
    }
    settings(json) {
        en: "Patroni's settings for this variant (PATCH /config, from lab/failover.conf): {json}",
        tr: "bu varyant için Patroni ayarları (PATCH /config, lab/failover.conf'tan): {json}",
    }
    settings_not_applied(json, s) {
        en: "the primary did not show Patroni's settings {json} within {s} s",
        tr: "primary Patroni'nin {json} ayarlarını {s} sn içinde göstermedi",
    }
    sync_mode() {
        en: "synchronous",
        tr: "senkron",
    }
    async_mode() {
        en: "asynchronous",
        tr: "asenkron",
    }
    roles(primary, candidate, replica, mode) {
        en: "primary {primary}; {candidate} may take over; {replica} is an asynchronous replica that never leads; replication {mode}",
        tr: "primary {primary}; yerini {candidate} alabilir; {replica} hiç lider olmayan asenkron bir replika; replikasyon {mode}",
    }
    setup() {
        en: "making the writer's table on the HA cluster",
        tr: "HA cluster'ında yazıcının tablosu oluşturuluyor",
    }
    reading_on(node) {
        en: "lab reads back on {node}",
        tr: "lab {node} üzerinde geri okur",
    }
    crashed(node) {
        en: "lab crashes {node}'s PostgreSQL: every process of it stopped, then killed (SIGKILL), as a crash or the OOM killer would",
        tr: "lab {node} düğümünün PostgreSQL'ini çökertir: tüm süreçleri durdurulur, sonra öldürülür (SIGKILL), bir çökme ya da OOM killer'ın yapacağı gibi",
    }
    nothing_to_crash(node) {
        en: "{node}'s PostgreSQL was not running when lab came to crash it",
        tr: "lab çökertmeye geldiğinde {node} düğümünün PostgreSQL'i çalışmıyordu",
    }
    promoted(node, timeline, old) {
        en: "Patroni promoted {node} (timeline {timeline}) in place of {old}: it leads and is out of recovery",
        tr: "Patroni {old} yerine {node} düğümünü terfi ettirdi (timeline {timeline}): lider ve recovery'den çıkmış",
    }
    no_promotion(s) {
        en: "Patroni promoted no other node within {s} s",
        tr: "Patroni {s} sn içinde başka bir düğümü terfi ettirmedi",
    }
    rejoined(node, timeline) {
        en: "{node} rejoined as a replica on timeline {timeline} (Patroni rewound it with pg_rewind); all three nodes stream",
        tr: "{node} timeline {timeline} üzerinde replika olarak geri katıldı (Patroni onu pg_rewind ile geri sardı); üç düğüm de akıyor",
    }
    not_rejoined(node, s) {
        en: "{node} did not rejoin within {s} s",
        tr: "{node} {s} sn içinde geri katılmadı",
    }
    walsenders_stopped(node, standbys) {
        en: "lab stops (SIGSTOP) {node}'s WAL senders to {standbys}: they send nothing more, the connections stay open",
        tr: "lab {node} düğümünün {standbys} için WAL gönderenlerini durdurur (SIGSTOP): artık bir şey göndermezler, bağlantılar açık kalır",
    }
    no_leader() {
        en: "lab's HA cluster has no running leader",
        tr: "lab'ın HA cluster'ının çalışan bir lideri yok",
    }
    connected(node, tries, ms) {
        en: "connected to {node}, the node that takes writes ({tries} connection(s) tried in {ms} ms)",
        tr: "yazma alan düğüm {node} ile bağlantı kuruldu ({ms} ms içinde {tries} bağlantı denendi)",
    }
    no_primary(s) {
        en: "no node took writes within {s} s",
        tr: "{s} sn içinde hiçbir düğüm yazma almadı",
    }
    not_connected() {
        en: "the writer has no connection",
        tr: "yazıcının bağlantısı yok",
    }
    no_answer(id, s) {
        en: "write {id} got no answer within {s} s: lab cancelled it (its outcome is unknown)",
        tr: "{id} numaralı yazma {s} sn içinde cevap almadı: lab onu iptal etti (sonucu belirsiz)",
    }
    is_primary() {
        en: "asking whether the node takes writes",
        tr: "düğümün yazma alıp almadığı soruluyor",
    }
    col_outcome() {
        en: "the client was told",
        tr: "istemciye söylenen",
    }
    acked() {
        en: "committed",
        tr: "commit edildi",
    }
    failed() {
        en: "failed",
        tr: "başarısız",
    }
    unknown() {
        en: "unknown",
        tr: "belirsiz",
    }
    writes_title() {
        en: "every write, what the client was told, and which nodes hold it once read back",
        tr: "her yazma, istemciye söylenen ve geri okunduğunda hangi düğümlerin onu tuttuğu",
    }
    no_primary_at_start() {
        en: "the writer found no primary at the start of the variant",
        tr: "yazıcı varyantın başında primary bulamadı",
    }
    before_replicated(n) {
        en: "W's {n} first writes are acknowledged and every standby has received them",
        tr: "W'nin ilk {n} yazması onaylanır ve her standby onları almıştır",
    }
    acked_unreplicated(n, node) {
        en: "{node} acknowledges W's {n} next writes while no standby receives them (their WAL position is beyond what each standby received)",
        tr: "{node}, W'nin sonraki {n} yazmasını hiçbir standby onları almazken onaylar (WAL konumları her standby'ın aldığının ötesinde)",
    }
    promoted_other(node) {
        en: "Patroni promotes {node}",
        tr: "Patroni {node} düğümünü terfi ettirir",
    }
    lost_on_new(expected, lost) {
        en: "the acknowledged writes the standbys never received ({expected}) are missing on the new primary (missing: {lost})",
        tr: "standby'ların hiç almadığı onaylanmış yazmalar ({expected}) yeni primary'de yoktur (eksik: {lost})",
    }
    lost_after_rejoin(node, lost) {
        en: "once {node} has rejoined as a replica (pg_rewind), it lacks them too: gone for good (missing: {lost})",
        tr: "{node} replika olarak geri katıldıktan (pg_rewind) sonra onda da yoktur: kalıcı olarak gitmiştir (eksik: {lost})",
    }
    writes_after() {
        en: "W's writes on the new primary are acknowledged",
        tr: "W'nin yeni primary'deki yazmaları onaylanır",
    }
    observed_lost(acked, lost, node) {
        en: "of {acked} acknowledged writes, {lost} are missing on the new primary {node}",
        tr: "{acked} onaylanmış yazmadan {lost} yeni primary {node} üzerinde yok",
    }
    before_acked(n) {
        en: "W's {n} first writes are acknowledged",
        tr: "W'nin ilk {n} yazması onaylanır",
    }
    commit_waited(standby) {
        en: "W's next COMMIT waits for the synchronous standby {standby} (wait_event SyncRep)",
        tr: "W'nin sonraki COMMIT'i senkron standby {standby} için bekler (wait_event SyncRep)",
    }
    in_flight_not_acked(id) {
        en: "write {id}, in flight when the primary crashed, is not acknowledged",
        tr: "primary çöktüğünde yolda olan {id} numaralı yazma onaylanmaz",
    }
    promoted_sync(node) {
        en: "Patroni promotes the synchronous standby {node}",
        tr: "Patroni senkron standby {node} düğümünü terfi ettirir",
    }
    none_lost(node, lost) {
        en: "every acknowledged write is on the new primary {node} (missing: {lost})",
        tr: "onaylanan her yazma yeni primary {node} üzerindedir (eksik: {lost})",
    }
    none_lost_after_rejoin(node, lost) {
        en: "and on {node} once it has rejoined as a replica (missing: {lost})",
        tr: "ve {node} replika olarak geri katıldıktan sonra onda da (eksik: {lost})",
    }
    observed_kept(acked, node, id) {
        en: "all {acked} acknowledged writes are on the new primary {node}; write {id}, in flight, was not acknowledged",
        tr: "onaylanan {acked} yazmanın hepsi yeni primary {node} üzerinde; yoldaki {id} numaralı yazma onaylanmadı",
    }
}
