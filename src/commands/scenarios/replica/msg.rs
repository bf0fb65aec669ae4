//! What `lab replica` says, in English and Turkish.
crate::messages! {
    prefix "rp";
    no_basebackup(bin) {
        en: "lab makes its standby with pg_basebackup: none is beside postgres in {bin}, nor one of its version or later where lab looks for server programs; give --standby-url, or binaries that have it",
        tr: "lab standby'ını pg_basebackup ile yapar: {bin} içinde postgres'in yanında yok, lab'ın sunucu programlarına baktığı yerlerde de bu sürümden ya da sonrasından biri yok; --standby-url verin ya da onu içeren programlar kullanın",
    }
    about() {
        en: "Read replicas: stale reads, LSN tokens, remote_apply, time-based stickiness, recovery conflicts",
        tr: "Okuma replikaları: bayat okumalar, LSN jetonları, remote_apply, zamana dayalı yapışkanlık, kurtarma çakışmaları",
    }
    summary() {
        en: "a write on the primary and reads on a streaming standby with replay paused",
        tr: "primary'de bir yazma ve replay'i duraklatılmış bir streaming standby'da okumalar",
    }
    h_leaves() {
        en: "H disconnects: its advisory lock goes with its session",
        tr: "H bağlantıyı kapatır: advisory kilidi oturumuyla birlikte gider",
    }
    needs_standby_url() {
        en: "needs a standby: give --standby-url (a standby of --database-url), or run without --database-url and lab makes one",
        tr: "bir standby gerekir: --standby-url verin (--database-url'in standby'ı) ya da --database-url olmadan çalıştırın, lab bir tane yapar",
    }
    needs_own_standby(settings) {
        en: "runs on lab's own standby only (it needs {settings}); run without --database-url",
        tr: "yalnızca lab'ın kendi standby'ında çalışır ({settings} gerekir); --database-url olmadan çalıştırın",
    }
    needs_own_primary() {
        en: "runs on lab's own primary only (it changes synchronous_standby_names); run without --database-url",
        tr: "yalnızca lab'ın kendi primary'sinde çalışır (synchronous_standby_names'i değiştirir); --database-url olmadan çalıştırın",
    }
    standby_check() {
        en: "checking the standby",
        tr: "standby denetleniyor",
    }
    not_a_standby(place) {
        en: "--standby-url: the server at {place} is not a standby (pg_is_in_recovery() is false)",
        tr: "--standby-url: {place} adresindeki sunucu bir standby değil (pg_is_in_recovery() false)",
    }
    not_our_standby(place) {
        en: "--standby-url: the standby at {place} does not replicate from --database-url's server (their system identifiers differ)",
        tr: "--standby-url: {place} adresindeki standby --database-url'in sunucusundan replike etmiyor (sistem tanımlayıcıları farklı)",
    }
    made(port, ms) {
        en: "a streaming standby made with pg_basebackup -R on 127.0.0.1:{port} ({ms} ms)",
        tr: "127.0.0.1:{port} üzerinde pg_basebackup -R ile yapılmış bir streaming standby ({ms} ms)",
    }
    never_caught_up(lsn, deadline) {
        en: "the standby did not replay up to {lsn} within {deadline} s",
        tr: "standby {deadline} sn içinde {lsn} konumuna kadar uygulamadı",
    }
    never_paused(deadline) {
        en: "replay on the standby did not pause within {deadline} s",
        tr: "standby'daki replay {deadline} sn içinde durmadı",
    }
    never_sync(deadline) {
        en: "the standby did not become synchronous within {deadline} s",
        tr: "standby {deadline} sn içinde senkron olmadı",
    }
    report_never_waited(deadline) {
        en: "the standby's report query did not wait for H's lock within {deadline} s",
        tr: "standby'daki rapor sorgusu {deadline} sn içinde H'nin kilidini beklemedi",
    }
    admin_reopened(severity, code, message) {
        en: "lab's own session on the standby was ended by the server ({severity} {code}: {message}); lab opened it again",
        tr: "lab'ın standby'daki kendi oturumunu sunucu sonlandırdı ({severity} {code}: {message}); lab onu yeniden açtı",
    }
    paused() {
        en: "replay paused (pg_get_wal_replay_pause_state: paused)",
        tr: "replay duraklatıldı (pg_get_wal_replay_pause_state: paused)",
    }
    pgpool_no_host_check(key, mode) {
        en: "pgpool-II checks a server's certificate chain but never its host name, so {key}={mode} cannot hold between pgpool-II and your servers (lab's own, with --tls, it runs)",
        tr: "pgpool-II bir sunucunun sertifika zincirini denetler ama sunucu adını hiç denetlemez, bu yüzden {key}={mode} pgpool-II ile sizin sunucularınız arasında sağlanamaz (lab'ın kendi sunucularıyla, --tls ile, çalışır)",
    }
    pgpool_no_root_file(key, mode) {
        en: "pgpool-II checks a server's certificate only against a root file (ssl_ca_cert), and {key}={mode} gives none (sslrootcert=system): give sslrootcert a file to run it",
        tr: "pgpool-II bir sunucunun sertifikasını yalnızca bir kök dosyasına (ssl_ca_cert) karşı denetler ve {key}={mode} hiç vermiyor (sslrootcert=system): çalıştırmak için sslrootcert'e bir dosya verin",
    }
    pgpool_password() {
        en: "pgpool-II keeps the servers' password in its pool_passwd as user:password, and refuses a login whose password has a colon in it: give the role another password to run it",
        tr: "pgpool-II sunucuların parolasını pool_passwd içinde kullanıcı:parola olarak tutar ve parolasında iki nokta üst üste olan girişi reddeder: çalıştırmak için role başka bir parola verin",
    }
    no_pgpool(install) {
        en: "needs pgpool-II: {install}",
        tr: "pgpool-II gerekir: {install}",
    }
    pgpool_started(version, port, setting) {
        en: "lab's {version} on 127.0.0.1:{port} in front of the primary (backend 0) and the standby (backend 1), load balancing on; set for this variant: {setting}",
        tr: "lab'ın {version}'i 127.0.0.1:{port} üzerinde primary'nin (backend 0) ve standby'ın (backend 1) önünde, yük dengeleme açık; bu varyant için ayarlanan: {setting}",
    }
    balanced(by) {
        en: "pgpool-II balances the session's read to the standby (answered by: {by})",
        tr: "pgpool-II oturumun okumasını standby'a dengeler (cevap veren: {by})",
    }
    pgpool_stale(price, by) {
        en: "right after the session's own write the read is answered by the standby with the old price 42.00 (read {price}, answered by: {by})",
        tr: "oturumun kendi yazmasından hemen sonra okumayı standby eski fiyatla 42.00 cevaplar (okunan {price}, cevap veren: {by})",
    }
    pgpool_caught_up(price, by) {
        en: "after resume the standby has replayed the write and answers 45.00 (read {price}, answered by: {by})",
        tr: "devam edince standby yazmayı uygulamış ve 45.00 cevaplar (okunan {price}, cevap veren: {by})",
    }
    observed_pgpool_stale(price, by) {
        en: "the read after the write: {price}, answered by the {by}",
        tr: "yazmadan sonraki okuma: {price}, cevap veren: {by}",
    }
    sticky_after_write(price, by) {
        en: "after the write the read goes to the primary: 45.00 (read {price}, answered by: {by})",
        tr: "yazmadan sonra okuma primary'ye gider: 45.00 (okunan {price}, cevap veren: {by})",
    }
    sticky_later(price, by) {
        en: "once the standby has caught up the session still reads from the primary (read {price}, answered by: {by})",
        tr: "standby yetiştikten sonra da oturum primary'den okur (okunan {price}, cevap veren: {by})",
    }
    observed_pgpool_sticky(price, by, later) {
        en: "the read after the write: {price}, answered by the {by}; after catch-up answered by the {later}",
        tr: "yazmadan sonraki okuma: {price}, cevap veren: {by}; yetiştikten sonra cevap veren: {later}",
    }
    token_check_paused(by) {
        en: "with replay paused the token check, balanced to the standby, says not replayed (answered by: {by})",
        tr: "replay duraklatılmışken standby'a dengelenen jeton denetimi uygulanmadı der (cevap veren: {by})",
    }
    pgpool_fell_back(price, by) {
        en: "the read with /*NO LOAD BALANCE*/ is answered by the primary: 45.00 (read {price}, answered by: {by})",
        tr: "/*NO LOAD BALANCE*/ ile okumayı primary cevaplar: 45.00 (okunan {price}, cevap veren: {by})",
    }
    pgpool_token_standby(price, by) {
        en: "after resume the check passes on the standby, which serves 45.00 (read {price}, answered by: {by})",
        tr: "devam edince denetim standby'da geçer ve standby 45.00 sunar (okunan {price}, cevap veren: {by})",
    }
    observed_pgpool_token(first, first_by, second, second_by) {
        en: "while paused {first} from the {first_by}; after catch-up {second} from the {second_by}",
        tr: "duraklatılmışken {first} (cevap veren: {first_by}); yetiştikten sonra {second} (cevap veren: {second_by})",
    }
    txn_read_on_standby(price, by, level) {
        en: "the transaction's read is answered by the standby with 42.00 at repeatable read (read {price}, answered by: {by}, level: {level})",
        tr: "işlemin okumasını standby repeatable read seviyesinde 42.00 ile cevaplar (okunan {price}, cevap veren: {by}, seviye: {level})",
    }
    txn_wrote_on_primary(wrote) {
        en: "its write, 42.00 + 1.00, runs on the primary, returns 43.00 and commits, no 40001 (returned: {wrote})",
        tr: "yazması, 42.00 + 1.00, primary'de çalışır, 43.00 döndürür ve commit edilir, 40001 yok (dönen: {wrote})",
    }
    txn_lost(price) {
        en: "the primary now has 43.00: W's committed 45.00 is lost (read {price})",
        tr: "primary'de artık 43.00 var: W'nin commit edilmiş 45.00'ı kayboldu (okunan {price})",
    }
    observed_txn_split(price, by, last) {
        en: "read {price} from the {by}, wrote from it on the primary, which ends with {last}",
        tr: "{price} okudu (cevap veren: {by}), ona göre primary'ye yazdı; primary'de sonuç {last}",
    }
    received() {
        en: "the standby has received the write's WAL (pg_last_wal_receive_lsn)",
        tr: "standby yazmanın WAL'ını almış (pg_last_wal_receive_lsn)",
    }
    standby_stale(price) {
        en: "the standby reads the old price 42.00 after the commit (read: {price})",
        tr: "standby commit'ten sonra eski fiyatı 42.00 okur (okunan: {price})",
    }
    lag_bytes(bytes) {
        en: "the primary reports bytes not replayed (lag_bytes: {bytes})",
        tr: "primary uygulanmamış baytları bildirir (lag_bytes: {bytes})",
    }
    caught_up(price) {
        en: "after resume the standby reads 45.00 (read: {price})",
        tr: "devam edince standby 45.00 okur (okunan: {price})",
    }
    observed_stale(price, bytes, lag) {
        en: "standby read {price}; lag_bytes {bytes}, replay_lag {lag}",
        tr: "standby {price} okudu; lag_bytes {bytes}, replay_lag {lag}",
    }
    token_reached(lsn) {
        en: "the standby has replayed {lsn}: read here",
        tr: "standby {lsn} konumunu uygulamış: burada oku",
    }
    token_not_reached(lsn, ms) {
        en: "the standby did not reach {lsn} within {ms} ms: read from the primary",
        tr: "standby {ms} ms içinde {lsn} konumuna ulaşmadı: primary'den oku",
    }
    fell_back(price) {
        en: "while replay is paused the read goes to the primary and sees the write (read: {price})",
        tr: "replay duraklatılmışken okuma primary'ye gider ve yazmayı görür (okunan: {price})",
    }
    standby_after_token(price) {
        en: "once the standby reaches the token it serves the write (read: {price})",
        tr: "standby jetona ulaşınca yazmayı sunar (okunan: {price})",
    }
    observed_token(first, second) {
        en: "first read {first} (primary), second read {second} (standby)",
        tr: "ilk okuma {first} (primary), ikinci okuma {second} (standby)",
    }
    commit_waited() {
        en: "the COMMIT waits for the standby (wait_event SyncRep)",
        tr: "COMMIT standby'ı bekler (wait_event SyncRep)",
    }
    not_applied_yet(price) {
        en: "while it waits the standby still reads 42.00 (read: {price})",
        tr: "beklerken standby hâlâ 42.00 okur (okunan: {price})",
    }
    commit_returned() {
        en: "the COMMIT returns once replay resumes",
        tr: "replay devam edince COMMIT döner",
    }
    applied_on_return(price) {
        en: "right after the COMMIT returns the standby reads 45.00 (read: {price})",
        tr: "COMMIT döner dönmez standby 45.00 okur (okunan: {price})",
    }
    observed_remote_apply(during, after) {
        en: "standby read {during} during the COMMIT, {after} after it",
        tr: "standby COMMIT sırasında {during}, sonrasında {after} okudu",
    }
    within_window(ms) {
        en: "within {ms} ms of the write: read from the primary",
        tr: "yazmadan sonraki {ms} ms içinde: primary'den oku",
    }
    after_window(ms) {
        en: "{ms} ms after the write: read from the standby",
        tr: "yazmadan {ms} ms sonra: standby'dan oku",
    }
    sticky_fresh(price) {
        en: "within the window the read sees the write (read: {price})",
        tr: "pencere içinde okuma yazmayı görür (okunan: {price})",
    }
    sticky_stale(price) {
        en: "after the window the standby serves the old price 42.00 (read: {price})",
        tr: "pencereden sonra standby eski fiyatı 42.00 sunar (okunan: {price})",
    }
    observed_sticky(first, second) {
        en: "read {first} within the window, {second} after it",
        tr: "pencere içinde {first}, sonrasında {second} okundu",
    }
    report_cancelled(code, message) {
        en: "the standby's report is cancelled with 40001, conflict with recovery (got: {code} {message})",
        tr: "standby'daki rapor 40001 ile iptal edilir, conflict with recovery (alınan: {code} {message})",
    }
    detail_says(detail) {
        en: "the server's DETAIL names the conflict (DETAIL: {detail})",
        tr: "sunucunun DETAIL'i çakışmayı adlandırır (DETAIL: {detail})",
    }
    confl_rose(counter, before, after) {
        en: "pg_stat_database_conflicts.{counter} rises ({before} → {after})",
        tr: "pg_stat_database_conflicts.{counter} artar ({before} → {after})",
    }
    other_conflict_first(detail) {
        en: "R was first cancelled by another recovery conflict (DETAIL: {detail}), replayed before the DDL's lock: the DDL is undone and the report run again",
        tr: "R önce başka bir kurtarma çakışmasıyla iptal edildi (DETAIL: {detail}), DDL'in kilidinden önce yeniden oynatılan: DDL geri alınır ve rapor yeniden çalıştırılır",
    }
    observed_conflict(code, detail) {
        en: "report: {code}; {detail}",
        tr: "rapor: {code}; {detail}",
    }
    feedback_seen() {
        en: "the primary has the standby's xmin (pg_stat_replication.backend_xmin)",
        tr: "primary standby'ın xmin'ine sahip (pg_stat_replication.backend_xmin)",
    }
    report_completed(code) {
        en: "the standby's report completes, not cancelled (error: {code})",
        tr: "standby'daki rapor tamamlanır, iptal edilmez (hata: {code})",
    }
    replay_went_on() {
        en: "the vacuum is replayed while the report still runs",
        tr: "rapor sürerken vacuum yeniden oynatılır",
    }
    vacuum_kept(rows) {
        en: "the primary's VACUUM reports dead rows it could not remove ({rows})",
        tr: "primary'nin VACUUM'u kaldıramadığı ölü satırları bildirir ({rows})",
    }
    horizon_check() {
        en: "asking the primary which snapshots hold VACUUM back",
        tr: "primary'ye VACUUM'u hangi snapshot'ların geri tuttuğu soruluyor",
    }
    vacuum_waits(rows, who) {
        en: "VACUUM on the primary kept the {rows} deleted row(s): a snapshot there still needs them ({who}); once it is gone, VACUUM again",
        tr: "primary'deki VACUUM silinen {rows} satırı tuttu: oradaki bir snapshot hâlâ onlara ihtiyaç duyuyor ({who}); o gidince yeniden VACUUM",
    }
    vacuum_held_back(rows, who, deadline) {
        en: "VACUUM on the primary still kept the {rows} deleted row(s) after {deadline} s (a snapshot on the primary needs them: {who}): nothing for the standby's report to conflict with",
        tr: "primary'deki VACUUM {deadline} sn sonra hâlâ silinen {rows} satırı tutuyordu (primary'deki bir snapshot onlara ihtiyaç duyuyor: {who}): standby'daki raporun çakışacağı bir şey yok",
    }
    no_conflict(before, after) {
        en: "no snapshot conflict on the standby (confl_snapshot {before} → {after})",
        tr: "standby'da snapshot çakışması yok (confl_snapshot {before} → {after})",
    }
    observed_feedback(rows) {
        en: "report completed; VACUUM left {rows} dead row(s) on the primary",
        tr: "rapor tamamlandı; VACUUM primary'de {rows} ölü satır bıraktı",
    }
    never_waited_absent(deadline) {
        en: "commits did not start waiting for the absent synchronous standby within {deadline} s",
        tr: "commit'ler {deadline} sn içinde olmayan senkron standby'ı beklemeye başlamadı",
    }
    fork_waited() {
        en: "T1's COMMIT waits for a synchronous standby that is not there (wait_event SyncRep): its commit record is written and streamed, its row not yet visible on the primary",
        tr: "T1'in COMMIT'i olmayan bir senkron standby'ı bekler (wait_event SyncRep): commit kaydı yazılmış ve gönderilmiştir, satırı primary'de henüz görünmez",
    }
    fork_replayed(lsn) {
        en: "the standby replays T1's commit record (up to {lsn}), then replay is paused before T2 commits",
        tr: "standby T1'in commit kaydını uygular ({lsn} konumuna kadar), sonra T2 commit edilmeden önce replay duraklatılır",
    }
    fork_primary(prices) {
        en: "a reader on the primary sees T2's write and not T1's: 1=42.00 2=39.00 (read: {prices})",
        tr: "primary'deki bir okuyucu T2'nin yazmasını görür, T1'inkini görmez: 1=42.00 2=39.00 (okunan: {prices})",
    }
    fork_standby(prices) {
        en: "a reader on the standby sees T1's write and not T2's: 1=45.00 2=35.00 (read: {prices})",
        tr: "standby'daki bir okuyucu T1'in yazmasını görür, T2'ninkini görmez: 1=45.00 2=35.00 (okunan: {prices})",
    }
    fork_returned() {
        en: "T1's COMMIT returns once lab ends its wait (committed locally, with a WARNING)",
        tr: "lab beklemesini bitirince T1'in COMMIT'i döner (yerelde commit edilmiş, bir WARNING ile)",
    }
    fork_converged(primary, standby) {
        en: "once replay resumes both read 1=45.00 2=39.00 (primary: {primary}; standby: {standby})",
        tr: "replay devam edince ikisi de 1=45.00 2=39.00 okur (primary: {primary}; standby: {standby})",
    }
    observed_fork(primary, standby) {
        en: "primary read {primary}, standby read {standby}: each saw one of two commits and not the other",
        tr: "primary {primary}, standby {standby} okudu: her biri iki commit'ten birini gördü, diğerini görmedi",
    }
}
