crate::messages! {
    prefix "hu";
    in_txn(session, index) {
        en: "session {session}, transaction {index}",
        tr: "{session} oturumu, {index} numaralı transaction",
    }
    no_answer(secs) {
        en: "a statement did not answer within {secs} s (--wait-timeout)",
        tr: "bir ifade {secs} sn içinde yanıt vermedi (--wait-timeout)",
    }
    statement() {
        en: "a hunt statement failed in a way no isolation level explains",
        tr: "bir hunt ifadesi hiçbir yalıtım düzeyinin açıklamadığı biçimde hata verdi",
    }
    level_differs(asked, read) {
        en: "the sessions asked for {asked} and the server reads back {read}",
        tr: "oturumlar {asked} istedi, sunucu {read} okuyor",
    }
    bad_level(given) {
        en: "--level {given}: not a level (read-uncommitted, read-committed, repeatable-read, serializable, all)",
        tr: "--level {given}: bir düzey değil (read-uncommitted, read-committed, repeatable-read, serializable, all)",
    }
    check_one_level() {
        en: "--check judges a history at one level: give one --level",
        tr: "--check bir geçmişi tek bir düzeyde değerlendirir: tek bir --level verin",
    }
    at_least_one(flag) {
        en: "{flag} must be at least 1",
        tr: "{flag} en az 1 olmalı",
    }
    bad_nemesis(given) {
        en: "--nemesis {given}: not a fault lab hunt injects (pause, kill, restart, partition, failover)",
        tr: "--nemesis {given}: lab hunt'ın enjekte ettiği bir hata değil (pause, kill, restart, partition, failover)",
    }
    failover_alone(other) {
        en: "--nemesis failover runs the workload on lab's HA cluster (Patroni, three nodes), where {other} has no meaning: ask for failover alone",
        tr: "--nemesis failover iş yükünü lab'ın HA cluster'ında (Patroni, üç düğüm) çalıştırır; orada {other} anlamsızdır: failover'ı tek başına isteyin",
    }
    failover_needs_root() {
        en: "--nemesis failover starts lab's HA cluster in network namespaces of its own, which needs root",
        tr: "--nemesis failover lab'ın HA cluster'ını kendi ağ ad alanlarında başlatır; bunun için root gerekir",
    }
    failover_needs(why) {
        en: "--nemesis failover needs lab's HA cluster: {why}",
        tr: "--nemesis failover lab'ın HA cluster'ını ister: {why}",
    }
    failover_lacks(program, dir) {
        en: "--nemesis failover: the server programs in {dir} have no {program}, which Patroni runs (give --pg-bin a directory that has it)",
        tr: "--nemesis failover: {dir} içindeki sunucu programlarında Patroni'nin çalıştırdığı {program} yok (--pg-bin'e onu içeren bir dizin verin)",
    }
    ha_started(s, versions, settings) {
        en: "lab's HA cluster ({versions}) healthy after {s} s; the sessions reach whichever node is the primary through one connection string (target_session_attrs=read-write), Patroni's settings: {settings}",
        tr: "lab'ın HA cluster'ı ({versions}) {s} sn sonra sağlıklı; oturumlar hangi düğüm primary ise ona tek bir bağlantı dizesiyle ulaşır (target_session_attrs=read-write), Patroni'nin ayarları: {settings}",
    }
    same_standby_txn(session, index, began) {
        en: "session {session}, transaction {index}: its reads through pgpool-II ran in the standby's transaction of the one before (begun at {began}): that transaction's COMMIT did not reach the standby",
        tr: "{session} oturumu, {index} numaralı transaction: pgpool-II üzerinden okumaları standby'da bir öncekinin transaction'ında çalıştı ({began} başlamış): o transaction'ın COMMIT'i standby'a ulaşmadı",
    }
    pgpool_no_nemesis() {
        en: "--via pgpool runs without a nemesis: pgpool-II holds the sessions' connections to both servers, and a fault would be judged against what it does with them",
        tr: "--via pgpool nemesis olmadan çalışır: oturumların iki sunucuya bağlantılarını pgpool-II tutar ve bir hata, onun bunlarla yaptığına göre değerlendirilirdi",
    }
    keys_register_only(flag, workload) {
        en: "{flag} orders an rw-register's versions, which its reads do not show; a {workload} history's reads show theirs",
        tr: "{flag} bir rw-register'ın okumalarının göstermediği sürüm sırasını verir; bir {workload} geçmişinin okumaları kendi sürümlerini gösterir",
    }
    not_settled(s, logs) {
        en: "lab's HA cluster was not settled (every node streaming, the synchronous standby named and caught up) within {s} s (lab's deadline for its HA cluster: --wait-timeout, at least 60 s); Patroni's last words: {logs}",
        tr: "lab'ın HA cluster'ı {s} sn içinde oturmadı (her düğüm akıyor, senkron standby adlandırılmış ve yetişmiş) (lab'ın HA cluster'ı için süresi: --wait-timeout, en az 60 sn); Patroni'nin son sözleri: {logs}",
    }
    no_promotion(s, logs) {
        en: "Patroni promoted no other node within {s} s of the primary's failure (lab's deadline for its HA cluster: --wait-timeout, at least 60 s); its last words: {logs}",
        tr: "Patroni primary'nin arızasından sonra {s} sn içinde başka bir düğümü terfi ettirmedi (lab'ın HA cluster'ı için süresi: --wait-timeout, en az 60 sn); son sözleri: {logs}",
    }
    no_postmaster(node) {
        en: "the nemesis could not kill {node}'s PostgreSQL: no postmaster, or its processes outlived SIGKILL by 10 s",
        tr: "nemesis {node} düğümünün PostgreSQL'ini öldüremedi: postmaster yok ya da süreçleri SIGKILL'den 10 sn sonra hâlâ yaşıyor",
    }
    the_primary(node) {
        en: "{node} (the primary)",
        tr: "{node} (primary)",
    }
    failover_kill(new) {
        en: "its PostgreSQL killed (SIGKILL); Patroni promoted {new}",
        tr: "PostgreSQL'i öldürüldü (SIGKILL); Patroni {new} düğümünü terfi ettirdi",
    }
    failover_partition(new) {
        en: "cut off from etcd and the other nodes (the sessions still reach it); Patroni promoted {new}, then the partition healed",
        tr: "etcd'den ve diğer düğümlerden koparıldı (oturumlar ona hâlâ ulaşır); Patroni {new} düğümünü terfi ettirdi, sonra bölünme iyileşti",
    }
    nemesis_interval() {
        en: "--nemesis-interval must be at least 1 and at most 600000 (ms)",
        tr: "--nemesis-interval en az 1 ve en çok 600000 (ms) olmalı",
    }
    nemesis_needs_own(faults) {
        en: "--nemesis {faults} signals the server's processes, which lab does only to the server it started: drop --database-url (and PGHOST...) to hunt on lab's own",
        tr: "--nemesis {faults} sunucunun süreçlerine sinyal gönderir; lab bunu yalnızca kendi başlattığı sunucuya yapar: lab'ın kendi sunucusunda avlamak için --database-url'i (ve PGHOST...) bırakın",
    }
    replica_needs_own() {
        en: "--replica starts a streaming standby of the server lab started: drop --database-url (and PGHOST...) to hunt on lab's own",
        tr: "--replica lab'ın başlattığı sunucunun akışlı bir yedeğini (standby) başlatır: lab'ın kendi sunucusunda avlamak için --database-url'i (ve PGHOST...) bırakın",
    }
    not_synchronous(mode, s) {
        en: "lab's standby was not synchronous with synchronous_commit = {mode} after {s} s (pg_stat_replication's sync_state, the setting read back)",
        tr: "lab'ın standby'ı {s} sn sonra synchronous_commit = {mode} ile eşzamanlı değildi (pg_stat_replication'ın sync_state'i, geri okunan ayar)",
    }
    standby_behind(lsn, s) {
        en: "lab's standby had not replayed the primary's WAL up to {lsn} after {s} s",
        tr: "lab'ın standby'ı {s} sn sonra birincil sunucunun WAL'ını {lsn} konumuna kadar hâlâ işlememişti",
    }
    backend_stays(pid, s) {
        en: "backend {pid}, which a partition cut off, was still there {s} s after lab ended it",
        tr: "bir bölünmenin kopardığı {pid} backend'i, lab onu sonlandırdıktan {s} sn sonra hâlâ oradaydı",
    }
    the_server(pid) {
        en: "the server (postmaster {pid})",
        tr: "sunucu (postmaster {pid})",
    }
    predicate_keys(max) {
        en: "--keys is at most {max} with --workload predicate (a predicate read covers up to a block of keys)",
        tr: "--workload predicate ile --keys en çok {max} olabilir (bir koşullu okuma en çok bir anahtar bloğunu kapsar)",
    }
    too_large() {
        en: "--keys is at most 1000000, --ops and --replays at most 1000",
        tr: "--keys en çok 1000000, --ops ve --replays en çok 1000 olabilir",
    }
    seconds() {
        en: "--seconds must be more than 0 and at most 86400",
        tr: "--seconds 0'dan büyük ve en çok 86400 olmalı",
    }
    too_many_clients(clients, max) {
        en: "--clients {clients} needs {clients} sessions and a control connection; the server allows {max}",
        tr: "--clients {clients}, {clients} oturum ve bir kontrol bağlantısı ister; sunucu {max} bağlantıya izin veriyor",
    }
    could_not_write(path) {
        en: "could not write {path}",
        tr: "{path} yazılamadı",
    }
    not_a_directory(path) {
        en: "could not write {path}: not a directory",
        tr: "{path} yazılamadı: bir dizin değil",
    }
    could_not_read(path, why) {
        en: "could not read {path}: {why}",
        tr: "{path} okunamadı: {why}",
    }
    damaged(path, line, what) {
        en: "{path}:{line}: {what}",
        tr: "{path}:{line}: {what}",
    }
    schema(schema) {
        en: "could not make or drop the hunt's schema {schema}",
        tr: "hunt'ın şeması {schema} oluşturulamadı ya da silinemedi",
    }
    spec_about(name, level, seed, txns) {
        en: "lab hunt found {name} at {level} (seed {seed}) among transactions {txns}; this spec replays it.",
        tr: "lab hunt {level} düzeyinde {name} buldu (seed {seed}), işlemler {txns}; bu spec onu yeniden oynatır.",
    }
    other_level(path, recorded, asked) {
        en: "note: {path} was recorded at {recorded}; it is checked against what {asked} forbids, as --level asks",
        tr: "not: {path} {recorded} seviyesinde kaydedildi; --level istediği için {asked} seviyesinin yasakladıklarına göre denetleniyor",
    }
    empty_history(path) {
        en: "{path} holds no transactions: there is nothing to check",
        tr: "{path} hiç işlem içermiyor: denetlenecek bir şey yok",
    }
    no_room(free, clients) {
        en: "the server has room for {free} more connection(s) besides lab's control connection, and --clients asks for {clients}: ask for {free} or fewer, or free some",
        tr: "sunucuda lab'in kontrol bağlantısı dışında {free} bağlantılık yer var, --clients ise {clients} istiyor: {free} ya da daha azını isteyin ya da yer açın",
    }
    about_run(seed, clients, keys) {
        en: "seed {seed}, {clients} sessions, {keys} keys",
        tr: "seed {seed}, {clients} oturum, {keys} anahtar",
    }
    ru_as_rc() {
        en: "read uncommitted, which PostgreSQL runs as read committed",
        tr: "PostgreSQL'in read committed olarak çalıştırdığı read uncommitted",
    }
    forbidden_at(level) {
        en: "forbidden at {level}",
        tr: "{level} düzeyinde yasak",
    }
    allowed_at(level) {
        en: "allowed at {level}",
        tr: "{level} düzeyinde izinli",
    }
    why_ww(from, first, key, to, then) {
        en: "{from} appended {first} to key {key}, and {to} appended {then} right after it (ww)",
        tr: "{from} {key} anahtarına {first} ekledi, {to} hemen ardından {then} ekledi (ww)",
    }
    why_wr(to, key, seen, from, elem) {
        en: "{to} read key {key} = {seen}, ending in {from}'s {elem} (wr)",
        tr: "{to} {key} anahtarını {seen} okudu; sondaki {elem} {from} işleminin (wr)",
    }
    why_rw(from, key, seen, elem, to) {
        en: "{from} read key {key} = {seen}, without {elem}, which {to} appended next (rw)",
        tr: "{from} {key} anahtarını {seen} okudu; {to} işleminin sonra eklediği {elem} yoktu (rw)",
    }
    why_rw_phantom(from, lo, hi, key, elem, to) {
        en: "{from} read the rows of keys {lo} to {hi} (a predicate read) and key {key} had none; {to} appended {elem} to it after that read (rw through the predicate: a phantom)",
        tr: "{from} {lo}-{hi} anahtarlarının satırlarını okudu (koşullu okuma) ve {key} anahtarının satırı yoktu; {to} o okumadan sonra ona {elem} ekledi (koşul üzerinden rw: hayalet satır)",
    }
    why_ww_unread(from, first, key, to, then) {
        en: "{from} appended {first} to key {key}, the last element any read showed, and {to} appended {then} after it, read by nobody (ww)",
        tr: "{from} {key} anahtarına, okumaların gösterdiği son öğe olan {first} değerini ekledi; {to} ardından kimsenin okumadığı {then} değerini ekledi (ww)",
    }
    why_rw_unread(from, key, seen, elem, to) {
        en: "{from} read key {key} = {seen}, its whole known order, without {elem}, which {to} appended after it and nobody read (rw)",
        tr: "{from} {key} anahtarını bilinen sıranın tamamı olan {seen} olarak okudu; {to} işleminin sonradan eklediği ve kimsenin okumadığı {elem} yoktu (rw)",
    }
    why_ww_register(from, first, key, to, then, by) {
        en: "{from} wrote {first} to key {key}, and {to} wrote {then}, the next version ({by}) (ww)",
        tr: "{from} {key} anahtarına {first} yazdı, {to} bir sonraki sürüm olan {then} değerini yazdı ({by}) (ww)",
    }
    why_wr_register(to, key, elem, from) {
        en: "{to} read key {key} = {elem}, which {from} wrote (wr)",
        tr: "{to} {key} anahtarını {elem} okudu; bu değeri {from} yazdı (wr)",
    }
    why_rw_register(from, key, seen, to, elem, by) {
        en: "{from} read key {key} = {seen}, and {to} wrote {elem}, the next version ({by}) (rw)",
        tr: "{from} {key} anahtarını {seen} okudu; {to} bir sonraki sürüm olan {elem} değerini yazdı ({by}) (rw)",
    }
    why_lost_update_register(first, key, seen, others) {
        en: "{first} and {others} each read key {key} = {seen} and then wrote it: one's update is lost to the other (lost update)",
        tr: "{first} ve {others} {key} anahtarını {seen} okuyup ardından ona yazdı: birinin güncellemesi ötekine kayboldu (kayıp güncelleme)",
    }
    register_replay() {
        en: "The transactions wrote registers (rw-register); here each write is an append of the value it wrote, which takes the same row lock, so that the replay's reads show each key's version order.",
        tr: "İşlemler register yazdı (rw-register); burada her yazma, yazdığı değerin eklenmesidir; aynı satır kilidini alır ve yeniden oynatmanın okumaları her anahtarın sürüm sırasını gösterir.",
    }
    versions_line(server, inferred, undecided) {
        en: "rw-register: each key's version order from the server's commit order of its writers (pg_xact_commit_timestamp) for {server} key(s), from the history's reads and writes alone for {inferred}; no one order for {undecided} (their reads give wr edges, and ww and rw edges only where one version is known to come before another)",
        tr: "rw-register: her anahtarın sürüm sırası {server} anahtar için sunucunun yazanlarını commit ettiği sıradan (pg_xact_commit_timestamp), {inferred} anahtar için yalnızca geçmişin okuma ve yazmalarından alındı; {undecided} anahtar için tek bir sıra yok (okumaları wr kenarları verir; ww ve rw kenarları yalnızca bir sürümün ötekinden önce geldiği bilinen yerlerde)",
    }
    versions_line_one(server, inferred, assumption, n, undecided) {
        en: "rw-register: each key's version order from the server's commit order of its writers (pg_xact_commit_timestamp) for {server} key(s), from the history's reads and writes alone for {inferred}, {assumption} for {n}; no one order for {undecided} (their reads give wr edges, and ww and rw edges only where one version is known to come before another)",
        tr: "rw-register: her anahtarın sürüm sırası {server} anahtar için sunucunun yazanlarını commit ettiği sıradan (pg_xact_commit_timestamp), {inferred} anahtar için yalnızca geçmişin okuma ve yazmalarından, {n} anahtar için {assumption} alındı; {undecided} anahtar için tek bir sıra yok (okumaları wr kenarları verir; ww ve rw kenarları yalnızca bir sürümün ötekinden önce geldiği bilinen yerlerde)",
    }
    assuming_sequential() {
        en: "with each session seeing each key's versions in order (--sequential-keys)",
        tr: "her oturumun sürümleri sırayla gördüğü varsayımıyla (--sequential-keys)",
    }
    assuming_linearizable() {
        en: "with each transaction seeing every version written before it began (--linearizable-keys)",
        tr: "her işlemin kendisi başlamadan önce yazılmış her sürümü gördüğü varsayımıyla (--linearizable-keys)",
    }
    versions_line_assumed(server, inferred, sequential, linearizable, undecided) {
        en: "rw-register: each key's version order from the server's commit order of its writers (pg_xact_commit_timestamp) for {server} key(s), from the history's reads and writes alone for {inferred}, with each session seeing each key's versions in order (--sequential-keys) for {sequential}, with each transaction seeing every version written before it began (--linearizable-keys) for {linearizable}; no one order for {undecided} (their reads give wr edges, and ww and rw edges only where one version is known to come before another)",
        tr: "rw-register: her anahtarın sürüm sırası {server} anahtar için sunucunun yazanlarını commit ettiği sıradan (pg_xact_commit_timestamp), {inferred} anahtar için yalnızca geçmişin okuma ve yazmalarından, {sequential} anahtar için her oturumun sürümleri sırayla gördüğü varsayımıyla (--sequential-keys), {linearizable} anahtar için her işlemin kendisi başlamadan önce yazılmış her sürümü gördüğü varsayımıyla (--linearizable-keys) alındı; {undecided} anahtar için tek bir sıra yok (okumaları wr kenarları verir; ww ve rw kenarları yalnızca bir sürümün ötekinden önce geldiği bilinen yerlerde)",
    }
    why_ww_register_later(from, first, key, to, then, by) {
        en: "{from} wrote {first} to key {key}, and {to} wrote {then}, a later version ({by}) (ww)",
        tr: "{from} {key} anahtarına {first} yazdı, {to} daha sonraki bir sürüm olan {then} değerini yazdı ({by}) (ww)",
    }
    why_rw_register_later(from, key, seen, to, elem, by) {
        en: "{from} read key {key} = {seen}, and {to} wrote {elem}, a later version ({by}) (rw)",
        tr: "{from} {key} anahtarını {seen} okudu; {to} daha sonraki bir sürüm olan {elem} değerini yazdı ({by}) (rw)",
    }
    nil_first() {
        en: "nil comes before every value; the key's order is not decided",
        tr: "nil her değerden önce gelir; anahtarın sırası belirlenemedi",
    }
    why_cyclic_versions_history(key, elem) {
        en: "key {key}'s versions cannot be put in one order: the history's reads and writes put {elem} both before and after another version (cyclic versions)",
        tr: "{key} anahtarının sürümleri tek bir sıraya konamıyor: geçmişin okuma ve yazmaları {elem} değerini başka bir sürümün hem önüne hem ardına koyuyor (döngüsel sürümler)",
    }
    why_cyclic_versions_history_assumed(key, elem, assumed) {
        en: "key {key}'s versions cannot be put in one order: the history's reads and writes{assumed} put {elem} both before and after another version (cyclic versions)",
        tr: "{key} anahtarının sürümleri tek bir sıraya konamıyor: geçmişin okuma ve yazmaları{assumed} {elem} değerini başka bir sürümün hem önüne hem ardına koyuyor (döngüsel sürümler)",
    }
    assumed_sequential() {
        en: ", with each session seeing the key's versions in order (--sequential-keys),",
        tr: ", her oturumun anahtarın sürümlerini sırayla gördüğü varsayımıyla (--sequential-keys),",
    }
    assumed_linearizable() {
        en: ", with each transaction seeing every version written before it began (--linearizable-keys),",
        tr: ", her işlemin kendisi başlamadan önce yazılmış her sürümü gördüğü varsayımıyla (--linearizable-keys),",
    }
    assumed_both() {
        en: ", with each session seeing the key's versions in order and each transaction every version written before it began (--sequential-keys, --linearizable-keys),",
        tr: ", her oturumun anahtarın sürümlerini sırayla, her işlemin kendisi başlamadan önce yazılmış her sürümü gördüğü varsayımıyla (--sequential-keys, --linearizable-keys),",
    }
    by_commit_order() {
        en: "in the order the server committed the key's writers",
        tr: "sunucunun anahtarın yazanlarını commit ettiği sırayla",
    }
    by_history() {
        en: "as the history's reads and writes order them",
        tr: "geçmişin okuma ve yazmalarının sıraladığı gibi",
    }
    by_sequential_keys() {
        en: "as the history's reads and writes order them, each session seeing the key's versions in order (--sequential-keys)",
        tr: "geçmişin okuma ve yazmalarının sıraladığı gibi, her oturum anahtarın sürümlerini sırayla görerek (--sequential-keys)",
    }
    by_linearizable_keys() {
        en: "as the history's reads and writes order them, each transaction seeing every version of the key written before it began (--linearizable-keys)",
        tr: "geçmişin okuma ve yazmalarının sıraladığı gibi, her işlem anahtarın kendisi başlamadan önce yazılmış her sürümünü görerek (--linearizable-keys)",
    }
    why_cyclic_versions(key, elem) {
        en: "key {key}'s versions cannot be put in one order: the server's commit order and the history's reads and writes put {elem} both before and after another version (cyclic versions)",
        tr: "{key} anahtarının sürümleri tek bir sıraya konamıyor: sunucunun commit sırası ile geçmişin okuma ve yazmaları {elem} değerini başka bir sürümün hem önüne hem ardına koyuyor (döngüsel sürümler)",
    }
    why_cyclic_versions_assumed(key, elem, assumed) {
        en: "key {key}'s versions cannot be put in one order: the server's commit order and the history's reads and writes{assumed} put {elem} both before and after another version (cyclic versions)",
        tr: "{key} anahtarının sürümleri tek bir sıraya konamıyor: sunucunun commit sırası ile geçmişin okuma ve yazmaları{assumed} {elem} değerini başka bir sürümün hem önüne hem ardına koyuyor (döngüsel sürümler)",
    }
    why_realtime(from, to) {
        en: "{from} ended before {to} began (real time)",
        tr: "{from}, {to} başlamadan bitti (gerçek zaman)",
    }
    why_session(from, to, session) {
        en: "{from} ran before {to} on session {session}",
        tr: "{from}, {session} oturumunda {to} işleminden önce çalıştı",
    }
    commit_order(order) {
        en: "the server committed them in this order (pg_xact_commit_timestamp, UTC): {order}",
        tr: "sunucu bunları şu sırayla commit etti (pg_xact_commit_timestamp, UTC): {order}",
    }
    commit_order_readers(order, readers) {
        en: "the server committed them in this order (pg_xact_commit_timestamp, UTC): {order}; not in it: {readers}, which wrote nothing (no transaction id, so no commit timestamp)",
        tr: "sunucu bunları şu sırayla commit etti (pg_xact_commit_timestamp, UTC): {order}; içinde olmayan: {readers}, hiçbir şey yazmadı (transaction id yok, bu yüzden commit zaman damgası da yok)",
    }
    why_g1a(reader, key, seen, elem, writer) {
        en: "{reader} read key {key} = {seen}, with {elem}, appended by {writer}, which did not commit",
        tr: "{reader} {key} anahtarını {seen} okudu; içindeki {elem} commit edilmemiş {writer} işleminin",
    }
    why_g1b(reader, key, seen, elem, writer) {
        en: "{reader} read key {key} = {seen}, ending in {elem}, which {writer} appended to again before committing",
        tr: "{reader} {key} anahtarını {seen} okudu; sondaki {elem} ara bir durum, {writer} commit etmeden önce yine ekledi",
    }
    why_garbage(reader, key, seen, elem) {
        en: "{reader} read key {key} = {seen}, with {elem}, which nobody appended",
        tr: "{reader} {key} anahtarını {seen} okudu; içindeki {elem} hiç eklenmedi",
    }
    why_duplicate(reader, key, seen, elem) {
        en: "{reader} read key {key} = {seen}, with {elem} twice",
        tr: "{reader} {key} anahtarını {seen} okudu; {elem} iki kez var",
    }
    why_order(reader, key, seen, other, other_seen) {
        en: "{reader} read key {key} = {seen}, and {other} read {other_seen}: neither order extends the other",
        tr: "{reader} {key} anahtarını {seen}, {other} ise {other_seen} okudu: sıralar birbirini sürdürmüyor",
    }
    why_lost_update(first, key, seen, others) {
        en: "{first} and {others} each read key {key} = {seen} and then appended to it: one's update is lost to the other (lost update)",
        tr: "{first} ve {others} {key} anahtarını {seen} okuyup ardından ona ekleme yaptı: birinin güncellemesi ötekine kayboldu (kayıp güncelleme)",
    }
    why_dirty_update(writer, elem, key, aborted, by) {
        en: "{writer} appended {elem} to key {key} on top of {aborted}, which {by} appended and did not commit (dirty update)",
        tr: "{writer} {key} anahtarına {elem} değerini, commit edilmemiş {by} işleminin eklediği {aborted} üzerine ekledi (kirli güncelleme)",
    }
    why_future_read(reader, key, seen, elem) {
        en: "{reader} read key {key} = {seen}, with {elem}, which it appends only later (future read)",
        tr: "{reader} {key} anahtarını {seen} okudu; içindeki {elem} değerini kendisi ancak sonra ekliyor (gelecekten okuma)",
    }
    why_lost(writer, elem, key, reader, seen) {
        en: "{writer} appended {elem} to key {key} and its COMMIT was acknowledged; {reader}, the last read of key {key}, began after that and after every read that showed {elem}, yet read {seen}, without it: an acknowledged write is lost",
        tr: "{writer} {key} anahtarına {elem} ekledi ve COMMIT'i onaylandı; {key} anahtarının son okuması {reader} bundan ve {elem} değerini gösteren her okumadan sonra başladı, yine de onsuz {seen} okudu: onaylanmış bir yazma kayboldu",
    }
    why_unknown_contradicted(writer, elem, key, reader, seen, revealer, shown, shown_key) {
        en: "{writer}'s COMMIT got no answer (unknown outcome); {revealer} read its {shown} in key {shown_key}, so it committed; yet {reader}, the last read of key {key}, began after that and after every read that showed its {elem}, and read {seen}, without it: neither of its two outcomes explains the reads",
        tr: "{writer} işleminin COMMIT'i cevap almadı (sonucu bilinmiyor); {revealer} onun {shown_key} anahtarındaki {shown} değerini okudu, demek ki commit edildi; yine de {key} anahtarının son okuması {reader} bundan ve onun {elem} değerini gösteren her okumadan sonra başladı ve onsuz {seen} okudu: iki olası sonucundan hiçbiri okumaları açıklamıyor",
    }
    nemesis_line(faults) {
        en: "nemesis: {faults} injected, each undone before the next",
        tr: "nemesis: {faults} enjekte edildi, her biri bir sonrakinden önce geri alındı",
    }
    wal_order(order) {
        en: "their commit records in the primary's WAL, the order a standby applies them in (pg_walinspect): {order}",
        tr: "commit kayıtları birincilin WAL'ında, bir standby'ın onları uyguladığı sırayla (pg_walinspect): {order}",
    }
    split_reads(which) {
        en: "read on lab's standby, replayed up to (pg_last_wal_replay_lsn), and wrote on the primary: {which}. One transaction, two servers: pgpool-II balances a transaction's reads until its first write, so they see the standby's snapshot, which is not the one the writes commit in",
        tr: "lab'ın standby'ında okudu, işlendiği konumla (pg_last_wal_replay_lsn), ve birincilde yazdı: {which}. Tek transaction, iki sunucu: pgpool-II bir transaction'ın okumalarını ilk yazmasına kadar dengeler; okumalar standby'ın snapshot'ını görür, yazmaların commit edildiği snapshot'ı değil",
    }
    standby_reads(which) {
        en: "read on lab's standby, replayed up to (pg_last_wal_replay_lsn): {which}; the others on the primary. A standby makes commits visible in WAL order, the primary in the order its backends end them, and the two orders may differ",
        tr: "lab'ın standby'ında okuyanlar, işlendiği konumla (pg_last_wal_replay_lsn): {which}; diğerleri birincilde. Standby commit'leri WAL sırasıyla görünür kılar, birincil ise backend'lerinin onları bitirdiği sırayla; bu iki sıra farklı olabilir",
    }
    standby_line(n, all) {
        en: "replica: {n} of the {all} transactions read on lab's standby (the others on the primary)",
        tr: "replica: {all} işlemin {n} tanesi lab'ın standby'ında okudu (diğerleri birincilde)",
    }
    sync_line(mode) {
        en: "replica: lab's standby was synchronous, every commit waited for it (synchronous_commit = {mode}): a commit is visible there before it is on the primary",
        tr: "replica: lab'ın standby'ı eşzamanlıydı, her commit onu bekledi (synchronous_commit = {mode}): bir commit orada birincilden önce görünür",
    }
    standby_line_25p02(n, all, failed) {
        en: "replica: {n} of the {all} transactions read on lab's standby (the others on the primary); {failed} failed through pgpool-II with SQLSTATE 25P02 (current transaction is aborted) though their session had ended its last transaction; lab opened those sessions again",
        tr: "replica: {all} işlemin {n} tanesi lab'ın standby'ında okudu (diğerleri birincilde); {failed} tanesi, oturumları son transaction'ını bitirmiş olmasına rağmen pgpool-II üzerinden SQLSTATE 25P02 (current transaction is aborted) ile başarısız oldu; lab o oturumları yeniden açtı",
    }
    nemesis_none(asked) {
        en: "nemesis: {asked} asked, no fault injected (the run ended first)",
        tr: "nemesis: {asked} istendi, hiç hata enjekte edilmedi (çalıştırma önce bitti)",
    }
    models_ruled_out(level, model, not, also) {
        en: "{level}, held to {model}: the history is not {not} (and so not {also})",
        tr: "{level}, {model} modeline göre: geçmiş {not} değil (dolayısıyla {also} da değil)",
    }
    models_ruled_out_alone(level, model, not) {
        en: "{level}, held to {model}: the history is not {not}",
        tr: "{level}, {model} modeline göre: geçmiş {not} değil",
    }
    why_internal(reader, key, seen) {
        en: "{reader} read key {key} = {seen}, which does not show its own earlier reads and appends",
        tr: "{reader} {key} anahtarını {seen} okudu; kendi önceki okuma ve eklemelerini göstermiyor",
    }
    expected_none(level) {
        en: "none: {level} forbids it",
        tr: "yok: {level} bunu yasaklar",
    }
    expected_allowed(level) {
        en: "may occur: {level} allows it",
        tr: "olabilir: {level} buna izin verir",
    }
    not_found() {
        en: "not found",
        tr: "bulunmadı",
    }
    check_class(name, level) {
        en: "no {name} where {level} forbids it",
        tr: "{level} yasaklarken {name} yok",
    }
    steps(n) {
        en: "{n} steps",
        tr: "{n} adım",
    }
    steps_shrunk(n, of) {
        en: "{n} steps, shrunk from {of}",
        tr: "{n} adım, {of} adımdan küçültüldü",
    }
    reproduced(path, k, n, steps) {
        en: "reproducer {path}: reproduced {k} of {n} replays ({steps})",
        tr: "yeniden üretici {path}: {n} oynatmanın {k} tanesinde yeniden üretildi ({steps})",
    }
    not_reproduced(path, k, n, instead, steps) {
        en: "reproducer {path}: reproduced {k} of {n} replays; the others showed {instead} ({steps})",
        tr: "yeniden üretici {path}: {n} oynatmanın {k} tanesinde yeniden üretildi; diğerleri {instead} gösterdi ({steps})",
    }
    replay_needs(need, max) {
        en: "a replay needs {need} connections and --max-connections is {max}",
        tr: "bir oynatma {need} bağlantı ister, --max-connections {max}",
    }
    sync_replica_nemesis(fault) {
        en: "--sync-replica with --nemesis {fault}: after a kill or a restart lab's standby connects again only seconds later, and every commit waits for it meanwhile (pause and partition go with it)",
        tr: "--sync-replica ile --nemesis {fault}: bir kill ya da restart'tan sonra lab'ın standby'ı ancak saniyeler sonra yeniden bağlanır ve bu arada her commit onu bekler (pause ve partition onunla kullanılabilir)",
    }
    replay_one_server(txns) {
        en: "{txns} read on lab's standby, and a spec's sessions all run on one server, where what a standby showed beside the primary cannot show",
        tr: "{txns} lab'ın standby'ında okudu; bir spec'in oturumlarının hepsi tek sunucuda çalışır ve bir standby'ın birincilin yanında gösterdiği orada görünemez",
    }
    not_replayed(path, why, steps) {
        en: "reproducer {path}: not replayed: {why} ({steps})",
        tr: "yeniden üretici {path}: oynatılmadı: {why} ({steps})",
    }
}
