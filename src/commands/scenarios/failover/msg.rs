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
    stale_primary_won(old, new) {
        en: "{old}'s Patroni took the leader lock back, its PostgreSQL still a primary on its old timeline: {new}'s promotion is discarded (Patroni before 3.1 lets a stale primary win the leader race when the lock is free: patroni#2787)",
        tr: "{old} düğümünün Patroni'si lider kilidini geri aldı, PostgreSQL'i hâlâ eski timeline'ında primary: {new} düğümünün terfisi boşa gitti (Patroni 3.1 öncesi, kilit boşsa eski bir primary'nin lider yarışını kazanmasına izin verir: patroni#2787)",
    }
    cluster_not_kept() {
        en: "lab's HA cluster is not healthy again: the next variant starts a new one",
        tr: "lab'ın HA cluster'ı yeniden sağlıklı değil: sonraki varyant yeni bir tane başlatır",
    }
    not_rejoined(node, s) {
        en: "{node} did not rejoin within {s} s",
        tr: "{node} {s} sn içinde geri katılmadı",
    }
    walsenders_stopped(node, standbys) {
        en: "lab stops (SIGSTOP) {node}'s WAL senders to {standbys}: they send nothing more, the connections stay open",
        tr: "lab {node} düğümünün {standbys} için WAL gönderenlerini durdurur (SIGSTOP): artık bir şey göndermezler, bağlantılar açık kalır",
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
    demoted(node) {
        en: "Patroni demoted {node}: it no longer takes writes",
        tr: "Patroni {node} düğümünü düşürdü: artık yazma almıyor",
    }
    all_streaming() {
        en: "all three nodes stream again",
        tr: "üç düğüm de yeniden akıyor",
    }
    more_acked(n, ids) {
        en: "{n} more writes acknowledged (ids {ids}), not shown one by one",
        tr: "{n} yazma daha onaylandı (id'ler {ids}), tek tek gösterilmiyor",
    }
    routed_to(node) {
        en: "Patroni's REST API: GET /primary answers 200 on {node} only; W writes there",
        tr: "Patroni'nin REST API'si: GET /primary yalnızca {node} üzerinde 200 der; W oraya yazar",
    }
    routed_nowhere() {
        en: "Patroni's REST API: no node answers 200 to GET /primary; W drops its connection and writes nowhere",
        tr: "Patroni'nin REST API'si: hiçbir düğüm GET /primary'ye 200 demiyor; W bağlantısını bırakır ve hiçbir yere yazmaz",
    }
    warning_is_failure(id) {
        en: "the client reads the WARNING that came with COMMIT: write {id} is reported as not known to be committed",
        tr: "istemci COMMIT ile gelen WARNING'i okur: {id} numaralı yazmanın commit edildiği bilinmiyor diye bildirilir",
    }
    cancel_reports_commit(id) {
        en: "the cancelled wait ends with a WARNING, and write {id}'s COMMIT reports success",
        tr: "iptal edilen bekleme bir WARNING ile biter ve {id} numaralı yazmanın COMMIT'i başarı bildirir",
    }
    read_by_other(id) {
        en: "R, another session, reads row {id} on the primary",
        tr: "başka bir oturum olan R, {id} numaralı satırı primary'de okur",
    }
    none_reported_lost(node, lost) {
        en: "no write the client reported committed is missing on the new primary {node} (missing: {lost})",
        tr: "istemcinin commit edildi dediği hiçbir yazma yeni primary {node} üzerinde eksik değil (eksik: {lost})",
    }
    cancelled_unknown(id) {
        en: "write {id}, reported unknown, is not on the new primary",
        tr: "belirsiz bildirilen {id} numaralı yazma yeni primary'de yok",
    }
    observed_guarded(id, acked, node) {
        en: "write {id} came back with the WARNING and was reported unknown; all {acked} writes reported committed are on {node}",
        tr: "{id} numaralı yazma WARNING ile döndü ve belirsiz bildirildi; commit edildi denen {acked} yazmanın hepsi {node} üzerinde",
    }
    cancelled_lost(id, node, lost) {
        en: "row {id}, reported committed and read by R, is missing on the new primary {node} (missing: {lost})",
        tr: "commit edildi denen ve R'nin okuduğu {id} numaralı satır yeni primary {node} üzerinde yok (eksik: {lost})",
    }
    observed_cancelled(id, node) {
        en: "write {id} was reported committed, read by another session, and is missing on {node} after the failover",
        tr: "{id} numaralı yazma commit edildi diye bildirildi, başka bir oturum onu okudu ve failover'dan sonra {node} üzerinde yok",
    }
    same_after_rejoin(node, lost) {
        en: "{node}, rejoined as a replica (pg_rewind), holds the same: missing there too: {lost}",
        tr: "replika olarak geri katılan (pg_rewind) {node} aynısını tutar: orada da eksik: {lost}",
    }
    standby_stored(node) {
        en: "the standby {node} has received the commit's WAL while its COMMIT waits (remote_apply, replay stopped)",
        tr: "COMMIT beklerken standby {node} commit'in WAL'ını almıştır (remote_apply, replay durdurulmuş)",
    }
    replay_stopped(node) {
        en: "lab stops {node}'s startup process (SIGSTOP): WAL still arrives there and is flushed, none is applied (Patroni would resume a replay paused with pg_wal_replay_pause() in its next loop); continued once the primary has crashed",
        tr: "lab {node} düğümünün startup sürecini durdurur (SIGSTOP): WAL oraya gelmeye ve diske yazılmaya devam eder, hiçbiri uygulanmaz (Patroni pg_wal_replay_pause() ile duraklatılmış bir replay'i bir sonraki döngüsünde sürdürür); primary çöktükten sonra devam ettirilir",
    }
    commit_connection_lost(id) {
        en: "payment {id}'s COMMIT loses its connection: the client cannot know whether it committed",
        tr: "{id} numaralı ödemenin COMMIT'i bağlantısını kaybeder: istemci commit edilip edilmediğini bilemez",
    }
    retry_found_it() {
        en: "the retry on the new primary inserts nothing (INSERT 0 0): the first payment is there",
        tr: "yeni primary'deki yeniden deneme hiçbir şey eklemez (INSERT 0 0): ilk ödeme oradadır",
    }
    paid_once(times) {
        en: "request r1 has one payment ({times})",
        tr: "r1 isteğinin bir ödemesi var ({times})",
    }
    observed_once(times) {
        en: "request r1 paid {times} time(s): the retry found the payment under its key",
        tr: "r1 isteği {times} kez ödendi: yeniden deneme ödemeyi anahtarıyla buldu",
    }
    retry_inserted() {
        en: "the blind retry on the new primary inserts another payment (INSERT 0 1)",
        tr: "yeni primary'deki kör yeniden deneme bir ödeme daha ekler (INSERT 0 1)",
    }
    paid_twice(times) {
        en: "request r1 has two payments ({times}): the COMMIT that looked failed had committed",
        tr: "r1 isteğinin iki ödemesi var ({times}): başarısız görünen COMMIT commit olmuştu",
    }
    observed_twice(times) {
        en: "request r1 paid {times} time(s): the lost COMMIT had committed, the retry paid again",
        tr: "r1 isteği {times} kez ödendi: kaybolan COMMIT commit olmuştu, yeniden deneme bir kez daha ödedi",
    }
    rejoined_check(node) {
        en: "{node} rejoins as a replica",
        tr: "{node} replika olarak geri katılır",
    }
    standbys_stopped(s, r) {
        en: "lab stops the standbys {s} and {r}: their Patroni frozen (so it does not restart them), their PostgreSQL crashed",
        tr: "lab {s} ve {r} standby'larını durdurur: Patroni'leri dondurulur (onları yeniden başlatmasın diye), PostgreSQL'leri çökertilir",
    }
    standbys_resumed(s, r) {
        en: "lab resumes the standbys' Patroni ({s}, {r}): each starts its PostgreSQL, which streams again",
        tr: "lab standby'ların Patroni'lerini devam ettirir ({s}, {r}): her biri PostgreSQL'ini başlatır, o da yeniden akar",
    }
    names_star(names) {
        en: "Patroni keeps synchronous replication on with no standby left: synchronous_standby_names = '*' (read: '{names}')",
        tr: "Patroni hiç standby kalmadığında senkron replikasyonu açık tutar: synchronous_standby_names = '*' (okunan: '{names}')",
    }
    strict_waits() {
        en: "W's COMMIT waits (SyncRep) while no standby streams",
        tr: "hiçbir standby akmazken W'nin COMMIT'i bekler (SyncRep)",
    }
    strict_returns() {
        en: "it returns once a standby is back, and a standby has flushed it (pg_stat_replication's flush_lsn)",
        tr: "bir standby geri gelince döner ve bir standby onu diske yazmıştır (pg_stat_replication'ın flush_lsn'i)",
    }
    observed_strict(names) {
        en: "synchronous_standby_names became '{names}'; W's COMMIT waited until a standby was back",
        tr: "synchronous_standby_names '{names}' oldu; W'nin COMMIT'i bir standby geri gelene kadar bekledi",
    }
    names_emptied(names) {
        en: "Patroni turns synchronous replication off: synchronous_standby_names is empty (read: '{names}')",
        tr: "Patroni senkron replikasyonu kapatır: synchronous_standby_names boş (okunan: '{names}')",
    }
    acked_unprotected(n, ids) {
        en: "the primary acknowledges W's {n} writes, all beyond its WAL position when the standbys died: on the primary only ({ids})",
        tr: "primary W'nin {n} yazmasını onaylar, hepsi standby'lar öldüğündeki WAL konumunun ötesinde: yalnızca primary'de ({ids})",
    }
    observed_degraded(n) {
        en: "synchronous_standby_names emptied; {n} acknowledged writes exist on the primary only",
        tr: "synchronous_standby_names boşaltıldı; onaylanan {n} yazma yalnızca primary'de var",
    }
    standbys_back() {
        en: "the standbys come back and stream",
        tr: "standby'lar geri gelir ve akar",
    }
    frozen(node) {
        en: "lab freezes {node} (SIGSTOP to its Patroni and every PostgreSQL process of it), as a paused VM",
        tr: "lab {node} düğümünü dondurur (Patroni'sine ve tüm PostgreSQL süreçlerine SIGSTOP), duraklatılmış bir VM gibi",
    }
    zombie_resumed(node) {
        en: "lab resumes {node}'s PostgreSQL (SIGCONT); its Patroni stays frozen for now",
        tr: "lab {node} düğümünün PostgreSQL'ini devam ettirir (SIGCONT); Patroni'si şimdilik donmuş kalır",
    }
    manager_resumed(node) {
        en: "lab resumes {node}'s Patroni: it finds another node holds the leader key and demotes its PostgreSQL",
        tr: "lab {node} düğümünün Patroni'sini devam ettirir: lider anahtarını başka bir düğümün tuttuğunu görür ve PostgreSQL'ini düşürür",
    }
    two_primaries(old, new) {
        en: "{old} and {new} both take writes (pg_is_in_recovery() is false on both): two primaries",
        tr: "{old} ve {new} ikisi de yazma alır (pg_is_in_recovery() ikisinde de false): iki primary",
    }
    zombie_cannot_ack(node) {
        en: "W's COMMIT on {node} waits (SyncRep) and is never acknowledged",
        tr: "W'nin {node} üzerindeki COMMIT'i bekler (SyncRep) ve hiç onaylanmaz",
    }
    observed_zombie_fenced(node) {
        en: "{node} came back as a second primary but could acknowledge nothing; nothing acknowledged was lost",
        tr: "{node} ikinci bir primary olarak geri geldi ama hiçbir şeyi onaylayamadı; onaylanmış hiçbir şey kaybolmadı",
    }
    zombie_acked(node, n) {
        en: "{node}, replaced but resumed, acknowledges W's writes on its open connection ({n})",
        tr: "yerine başkası geçmiş ama devam eden {node}, açık bağlantısındaki W'nin yazmalarını onaylar ({n})",
    }
    zombie_lost(expected, lost) {
        en: "those writes ({expected}) are missing on the new primary (missing: {lost})",
        tr: "o yazmalar ({expected}) yeni primary'de yok (eksik: {lost})",
    }
    observed_zombie(node, n) {
        en: "the zombie {node} acknowledged {n} writes after the failover; none of them survived",
        tr: "zombi {node} failover'dan sonra {n} yazma onayladı; hiçbiri hayatta kalmadı",
    }
    manager_killed(node) {
        en: "lab kills {node}'s Patroni (SIGKILL); its PostgreSQL keeps running as primary",
        tr: "lab {node} düğümünün Patroni'sini öldürür (SIGKILL); PostgreSQL'i primary olarak çalışmaya devam eder",
    }
    manager_restarted(node) {
        en: "lab starts {node}'s Patroni again: it finds its PostgreSQL running, another node holding the leader key, and demotes it",
        tr: "lab {node} düğümünün Patroni'sini yeniden başlatır: PostgreSQL'ini çalışır, lider anahtarını başka bir düğümde bulur ve onu düşürür",
    }
    routed_none_orphan(node) {
        en: "W acknowledges no write on {node} once its Patroni is dead: the health check sends it elsewhere",
        tr: "Patroni'si öldükten sonra W {node} üzerinde hiçbir yazma onaylatmaz: sağlık denetimi onu başka yere gönderir",
    }
    observed_routed(node) {
        en: "W waited for Patroni's REST API to name a primary, then wrote on {node}; nothing acknowledged was lost",
        tr: "W, Patroni'nin REST API'sinin bir primary göstermesini bekledi, sonra {node} üzerine yazdı; onaylanmış hiçbir şey kaybolmadı",
    }
    orphan_acked(node, n) {
        en: "{node}, with no Patroni, acknowledges W's writes after the other node's promotion ({n})",
        tr: "Patroni'si olmayan {node}, diğer düğümün terfisinden sonra W'nin yazmalarını onaylar ({n})",
    }
    observed_split(node, n) {
        en: "split brain: {node} acknowledged {n} writes after the failover; none survived its rejoin",
        tr: "split brain: {node} failover'dan sonra {n} yazma onayladı; geri katılmasından sonra hiçbiri kalmadı",
    }
    needs_nft(install) {
        en: "the partition needs nftables (nft): {install}",
        tr: "bölünme nftables (nft) gerektirir: {install}",
    }
    partitioned(node) {
        en: "lab cuts {node} off from etcd and the other nodes, both ways (nftables in the cluster's namespace); lab's own connections still reach it",
        tr: "lab {node} düğümünü etcd'den ve diğer düğümlerden iki yönde de koparır (cluster'ın ad alanında nftables); lab'ın kendi bağlantıları ona hâlâ ulaşır",
    }
    healed(node) {
        en: "lab heals the partition: {node} reaches etcd and the other nodes again",
        tr: "lab bölünmeyi iyileştirir: {node} etcd'ye ve diğer düğümlere yeniden ulaşır",
    }
    isolated_cannot_ack(node) {
        en: "W's COMMIT on the isolated {node} waits (SyncRep) and is not acknowledged",
        tr: "W'nin yalıtılmış {node} üzerindeki COMMIT'i bekler (SyncRep) ve onaylanmaz",
    }
    observed_partition_sync(old, new) {
        en: "the isolated {old} acknowledged nothing; {new} took over with every acknowledged write",
        tr: "yalıtılmış {old} hiçbir şey onaylamadı; {new} onaylanan her yazmayla yerini aldı",
    }
    isolated_acked(node, n) {
        en: "the isolated {node} acknowledges W's writes after the cut ({n}) until it is demoted",
        tr: "yalıtılmış {node}, düşürülene kadar kesintiden sonra W'nin yazmalarını onaylar ({n})",
    }
    isolated_lost(acked, lost) {
        en: "every write it acknowledged after the cut is missing on the new primary ({acked} acknowledged, {lost} missing)",
        tr: "kesintiden sonra onayladığı her yazma yeni primary'de yok ({acked} onaylandı, {lost} eksik)",
    }
    observed_partition(node, n) {
        en: "the isolated {node} acknowledged {n} writes after the cut; all are gone",
        tr: "yalıtılmış {node} kesintiden sonra {n} yazma onayladı; hepsi gitti",
    }
    watch_needs_url() {
        en: "--watch writes to your own cluster: give --database-url with its hosts (postgres://h1,h2,h3/db?target_session_attrs=read-write)",
        tr: "--watch kendi cluster'ınıza yazar: hostlarıyla birlikte --database-url verin (postgres://h1,h2,h3/db?target_session_attrs=read-write)",
    }
    watch_no_primary(hosts, s) {
        en: "none of the hosts {hosts} took writes within {s} s (unreachable, or all in recovery)",
        tr: "{hosts} hostlarından hiçbiri {s} sn içinde yazma almadı (ulaşılamıyor ya da hepsi recovery'de)",
    }
    watch_stopped(n) {
        en: "the writer stops after {n} writes; lab reads everything back from the primary",
        tr: "yazıcı {n} yazmadan sonra durur; lab her şeyi primary'den geri okur",
    }
    watch_expected() {
        en: "every write acknowledged through your failovers is on the cluster afterwards, each transaction wholly or not at all, none twice; the windows without writes are measured",
        tr: "failover'larınız boyunca onaylanan her yazma sonra cluster'dadır, her işlem ya tamamen ya hiç, hiçbiri iki kez değil; yazmasız pencereler ölçülür",
    }
    watch_explain() {
        en: "A writer appends unique ids to lists, two per transaction, through your cluster's failovers, reconnecting to whichever host of the URL takes writes. lab keeps what every COMMIT answered; at the end the primary's lists say which acknowledged writes are gone (lost), which writes whose outcome the client could not know are there after all, and whether a transaction is there only in part or twice.",
        tr: "Bir yazıcı cluster'ınızın failover'ları boyunca benzersiz id'leri listelere ekler, işlem başına iki tane, URL'deki hostlardan hangisi yazma alıyorsa ona yeniden bağlanarak. lab her COMMIT'in cevabını tutar; sonunda primary'nin listeleri hangi onaylanmış yazmaların gittiğini (kayıp), istemcinin sonucunu bilemediği hangi yazmaların yine de orada olduğunu ve bir işlemin yalnızca kısmen ya da iki kez orada olup olmadığını söyler.",
    }
    watch_none_lost(acked, lost) {
        en: "all {acked} acknowledged writes are on the cluster (missing: {lost})",
        tr: "onaylanan {acked} yazmanın hepsi cluster'da (eksik: {lost})",
    }
    watch_atomic(torn) {
        en: "every transaction is there whole or not at all (in one list only: {torn})",
        tr: "her işlem ya tamamen orada ya da hiç (yalnızca bir listede: {torn})",
    }
    watch_no_duplicates(dups) {
        en: "no write is there twice (twice: {dups})",
        tr: "hiçbir yazma iki kez orada değil (iki kez: {dups})",
    }
    watch_failed_absent(ids) {
        en: "no write the server refused is there (there: {ids})",
        tr: "sunucunun reddettiği hiçbir yazma orada değil (orada: {ids})",
    }
    watch_observed(writes, acked, lost, unknown, windows) {
        en: "{writes} writes, {acked} acknowledged, {lost} of them lost; {unknown} with an unknown outcome are there; {windows} window(s) without writes",
        tr: "{writes} yazma, {acked} onaylandı, {lost} tanesi kayıp; sonucu belirsiz {unknown} tanesi orada; yazmasız {windows} pencere",
    }
    watch_windows_title() {
        en: "windows without an acknowledged write (ms into the run): the last write before, the first after, the attempts in between",
        tr: "onaylanmış yazma olmayan pencereler (çalıştırmanın ms'si): öncesindeki son yazma, sonrasındaki ilk, aradaki denemeler",
    }
    watch_clean_up() {
        en: "dropping lab's table on your cluster",
        tr: "lab'ın cluster'ınızdaki tablosu siliniyor",
    }
}
