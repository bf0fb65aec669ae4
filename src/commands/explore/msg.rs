//! What `lab explore` says: its errors, and the words of its output.
crate::messages! {
    prefix "ex";
    no_room(free, jobs, need, per) {
        en: "the server has room for {free} more connection(s) besides lab's control connection; {jobs} worker(s) at once need {need} ({per} each: the spec's sessions and a setup connection): ask for fewer with --jobs, or free some",
        tr: "sunucuda lab'in kontrol bağlantısı dışında {free} bağlantılık yer var; aynı anda {jobs} çalışan {need} bağlantı ister (her biri {per}: spec'in oturumları ve bir setup bağlantısı): --jobs ile daha azını isteyin ya da yer açın",
    }
    no_sessions() {
        en: "the spec has no session: nothing to interleave",
        tr: "spec'te hiç oturum yok: iç içe geçirilecek bir şey yok",
    }
    undefined_step() {
        en: "a permutation names a step the spec does not have",
        tr: "bir permütasyon spec'te olmayan bir adımı anıyor",
    }
    too_many(count, max) {
        en: "{count} permutations is more than {max}: pick some with --sample N (and --seed S)",
        tr: "{count} permütasyon {max} sınırından fazla: --sample N (ve --seed S) ile bir kısmını seçin",
    }
    schema(schema) {
        en: "could not create or drop the worker's schema {schema}",
        tr: "işçinin {schema} şeması oluşturulamadı ya da silinemedi",
    }
    level(level) {
        en: "the server does not take the isolation level {level} (SET default_transaction_isolation failed)",
        tr: "sunucu {level} izolasyon seviyesini kabul etmiyor (SET default_transaction_isolation başarısız)",
    }
    no_target(name, scenarios, phenomena) {
        en: "{name}: no such spec file, and no lab scenario or phenomenon of that name (scenarios with a spec: {scenarios}; phenomena: {phenomena})",
        tr: "{name}: böyle bir spec dosyası yok, bu adda bir lab senaryosu ya da fenomeni de yok (spec'i olan senaryolar: {scenarios}; fenomenler: {phenomena})",
    }
    isolation_level() {
        en: "--format isolation runs the spec at its own level, as isolationtester does: leave out --level",
        tr: "--format isolation spec'i isolationtester gibi kendi seviyesinde çalıştırır: --level vermeyin",
    }
    step_one() {
        en: "--step walks one class at one level: give --level (and --class N, from 1)",
        tr: "--step tek bir seviyede tek bir sınıfı adım adım yürütür: --level verin (ve 1'den başlayan --class N)",
    }
    no_class(class, classes) {
        en: "there is no class {class}: the runs fell into {classes} class(es)",
        tr: "{class} diye bir sınıf yok: koşular {classes} sınıfa ayrıldı",
    }
    sample_zero() {
        en: "--sample must be at least 1",
        tr: "--sample en az 1 olmalı",
    }
    jobs() {
        en: "--jobs must be at least 1",
        tr: "--jobs en az 1 olmalı",
    }
    own_named(level) {
        en: "the spec's own ({level})",
        tr: "spec'in kendi seviyesi ({level})",
    }
    own() {
        en: "the spec's own",
        tr: "spec'in kendi seviyesi",
    }
    occur(level, k, n) {
        en: "{level}: {k} of {n} interleavings show the anomaly",
        tr: "{level}: {n} iç içe geçişten {k} tanesinde anomali oluşuyor",
    }
    ran(level, n) {
        en: "{level}: {n} interleavings",
        tr: "{level}: {n} iç içe geçiş",
    }
    blocked_n(n) {
        en: "{n} blocked",
        tr: "{n} tanesi bekledi",
    }
    aborted_n(n, sqlstate) {
        en: "{n} aborted {sqlstate}",
        tr: "{n} tanesi {sqlstate} ile düştü",
    }
    aborted_at_commit_n(n, sqlstate) {
        en: "{n} aborted {sqlstate} at commit",
        tr: "{n} tanesi COMMIT'te {sqlstate} ile düştü",
    }
    aborted_some_at_commit_n(n, sqlstate, k) {
        en: "{n} aborted {sqlstate} ({k} at commit)",
        tr: "{n} tanesi {sqlstate} ile düştü ({k} tanesi COMMIT'te)",
    }
    aborted_kinds_n(n, kinds) {
        en: "{n} aborted ({kinds})",
        tr: "{n} tanesi düştü ({kinds})",
    }
    abort_kind(n, sqlstate) {
        en: "{n} {sqlstate}",
        tr: "{n} × {sqlstate}",
    }
    abort_kind_at_commit(n, sqlstate) {
        en: "{n} {sqlstate} at commit",
        tr: "{n} × COMMIT'te {sqlstate}",
    }
    failed_n(n) {
        en: "{n} failed with another error",
        tr: "{n} tanesi başka bir hatayla bitti",
    }
    dead_ends_n(n) {
        en: "{n} at a dead end (a step waited for sessions whose next step comes after its own: lab cut it at once)",
        tr: "{n} tanesi çıkmazda (bir adım, sonraki adımı kendisinden sonra gelen oturumları bekliyordu: lab onu hemen kesti)",
    }
    stuck_n(n) {
        en: "{n} stuck at the deadline (a step lab cancelled)",
        tr: "{n} tanesi süre sınırında takıldı (lab bir adımı iptal etti)",
    }
    serial_n(n) {
        en: "{n} serial",
        tr: "{n} tanesi seri",
    }
    own_level(levels) {
        en: "its steps name their own level: read back {levels}",
        tr: "adımları kendi seviyelerini belirtiyor: geri okunan {levels}",
    }
    documented(expected) {
        en: "documented: {expected}",
        tr: "belgelenen: {expected}",
    }
    not_documented(expected) {
        en: "NOT AS DOCUMENTED: expected {expected}",
        tr: "BELGELENDİĞİ GİBİ DEĞİL: beklenen {expected}",
    }
    at_level(level, expected) {
        en: "{expected} at {level}",
        tr: "{level} seviyesinde {expected}",
    }
    each_at_its_level(each) {
        en: "each run at the level it read back: {each}",
        tr: "her koşu geri okuduğu seviyede: {each}",
    }
    occurs_some() {
        en: "the anomaly in some interleaving",
        tr: "bazı iç içe geçişlerde anomali",
    }
    occurs_none() {
        en: "the anomaly in no interleaving",
        tr: "hiçbir iç içe geçişte anomali yok",
    }
    shared_advisory() {
        en: "advisory locks",
        tr: "tavsiye kilitlerini (advisory lock)",
    }
    shared_deferrable() {
        en: "DEFERRABLE transactions (each waits for every serializable one on the server)",
        tr: "DEFERRABLE işlemleri (her biri sunucudaki bütün serializable işlemleri bekler)",
    }
    shared_roles() {
        en: "roles",
        tr: "rolleri",
    }
    shared_outside() {
        en: "objects outside its schema",
        tr: "şemasının dışındaki nesneleri",
    }
    shared_toast() {
        en: "the pg_toast schema",
        tr: "pg_toast şemasını",
    }
    shared_notify() {
        en: "NOTIFY and LISTEN (a channel is the database's)",
        tr: "NOTIFY ve LISTEN'i (kanal veritabanınındır)",
    }
    shared_views() {
        en: "pg_locks or pg_stat_activity (every run's backends show there)",
        tr: "pg_locks ya da pg_stat_activity'yi (her koşunun backend'leri orada görünür)",
    }
    shared_concurrently() {
        en: "CONCURRENTLY (it waits for the transactions of every run)",
        tr: "CONCURRENTLY'yi (her koşunun transaction'larını bekler)",
    }
    plain() {
        en: "no waits, no errors",
        tr: "bekleme yok, hata yok",
    }
    waited(step, by) {
        en: "{step} waited for {by}",
        tr: "{step}, {by} oturumunu bekledi",
    }
    rolled_back(step) {
        en: "{step} rolled back",
        tr: "{step} geri alındı",
    }
    aborted(step, sqlstate) {
        en: "{step} aborted {sqlstate}",
        tr: "{step} düştü {sqlstate}",
    }
    failed(step, sqlstate) {
        en: "{step} failed {sqlstate}",
        tr: "{step} hata {sqlstate}",
    }
    dead_end(step) {
        en: "{step} at a dead end, cut",
        tr: "{step} çıkmazda, kesildi",
    }
    stuck(step) {
        en: "{step} stuck at the deadline, cancelled",
        tr: "{step} süre sınırında takıldı, iptal edildi",
    }
    read(step, rows) {
        en: "{step} read {rows}",
        tr: "{step} okudu: {rows}",
    }
    anomaly() {
        en: "anomaly",
        tr: "anomali",
    }
}
