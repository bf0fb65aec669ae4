//! The engine's messages: what sessions, the scheduler and the recorder say.
crate::messages! {
    prefix "en";
    stopped() {
        en: "the run has stopped: its clean-up has begun",
        tr: "çalıştırma durdu: temizliği başladı",
    }
    zero_rows() {
        en: "(0 rows)",
        tr: "(0 satır)",
    }
    quoted(sql) {
        en: "`{sql}`",
        tr: "`{sql}`",
    }
    at(label, session, sql) {
        en: "{label}: session {session}: `{sql}`",
        tr: "{label}: {session} oturumu: `{sql}`",
    }
    too_many_sessions(label, sessions, max) {
        en: "{label} needs {sessions} sessions and a control connection, more than --max-connections {max}: give the run more, or fewer workers",
        tr: "{label} {sessions} oturum ve bir kontrol bağlantısı ister, --max-connections {max} değerinden fazla: çalıştırmaya daha fazla bağlantı ya da daha az worker verin",
    }
    over_cap(label, session, max) {
        en: "{label}: session {session} would be one connection more than --max-connections {max} allows: give the run more",
        tr: "{label}: {session} oturumu --max-connections {max} sınırını aşacaktı: çalıştırmaya daha fazla bağlantı verin",
    }
    open(label, session) {
        en: "{label}: could not open session {session}",
        tr: "{label}: {session} oturumu açılamadı",
    }
    unexpected(at, error) {
        en: "{at}: unexpected {error}",
        tr: "{at}: beklenmeyen {error}",
    }
    read_again(severity, code, message) {
        en: "the server cancelled lab's own read on this session ({severity} {code}: {message}); lab asked again",
        tr: "sunucu lab'ın bu oturumdaki kendi okumasını iptal etti ({severity} {code}: {message}); lab yeniden sordu",
    }
    connection_lost(at, error) {
        en: "{at}: the session's connection was lost ({error})",
        tr: "{at}: oturumun bağlantısı koptu ({error})",
    }
    no_answer(at, deadline) {
        en: "{at}: no answer within {deadline} s",
        tr: "{at}: {deadline} sn içinde cevap gelmedi",
    }
    step_lost(step, at, deadline) {
        en: "step {step}: {at}: no answer within {deadline} s, even after lab cancelled the statement and ended its backend: the session's connection is gone",
        tr: "{step} adımı: {at}: lab komutu iptal edip backend'ini sonlandırdıktan sonra bile {deadline} sn içinde cevap yok: oturumun bağlantısı kopmuş",
    }
    no_connection(step, session) {
        en: "step {step}: session {session}'s connection was lost at an earlier step: the step cannot be sent",
        tr: "{step} adımı: {session} oturumunun bağlantısı önceki bir adımda koptu: adım gönderilemez",
    }
    step_connection_lost(step, at, error) {
        en: "step {step}: {at}: the session's connection was lost ({error})",
        tr: "{step} adımı: {at}: oturumun bağlantısı koptu ({error})",
    }
    did_not_wait(at) {
        en: "{at}: answered without waiting for a lock",
        tr: "{at}: bir kilit beklemeden yanıtlandı",
    }
    no_rows(at) {
        en: "{at}: returned no rows",
        tr: "{at}: satır döndürmedi",
    }
    no_int(at, col) {
        en: "{at}: no integer in column {col}",
        tr: "{at}: {col} sütununda tamsayı yok",
    }
    step_failed(step, error) {
        en: "step {step} failed: {error}",
        tr: "{step} adımı başarısız: {error}",
    }
    step_no_rows(step) {
        en: "step {step} returned no rows",
        tr: "{step} adımı satır döndürmedi",
    }
    step_no_value(step, col) {
        en: "step {step} returned no value in column {col}",
        tr: "{step} adımı {col} sütununda değer döndürmedi",
    }
    step_not_run(step) {
        en: "step {step} did not run (the spec's permutation has no such step)",
        tr: "{step} adımı çalışmadı (spec'in permütasyonunda böyle bir adım yok)",
    }
    read_blocking() {
        en: "could not ask the server who waits for whom",
        tr: "sunucuya kimin kimi beklediği sorulamadı",
    }
    pool_full(s) {
        en: "the transaction pooler gave lab's control connection no server connection within {s} s while the sessions held theirs: its pool must have room for every session of a spec and one more (PgBouncer's default_pool_size)",
        tr: "transaction pooler, oturumlar kendi sunucu bağlantılarını tutarken lab'ın kontrol bağlantısına {s} sn içinde sunucu bağlantısı vermedi: havuzunda bir spec'in her oturumuna ve bir fazlasına yer olmalı (PgBouncer'ın default_pool_size'ı)",
    }
    read_activity() {
        en: "could not read pg_stat_activity",
        tr: "pg_stat_activity okunamadı",
    }
    terminate() {
        en: "could not end the run's sessions",
        tr: "çalıştırmanın oturumları sonlandırılamadı",
    }
    check_failed(sql) {
        en: "check failed: {sql}",
        tr: "kontrol başarısız: {sql}",
    }
    check_no_integer(sql) {
        en: "check returned no integer: {sql}",
        tr: "kontrol tamsayı döndürmedi: {sql}",
    }
    barrier(label, who, barrier, deadline) {
        en: "{label}: {who}: barrier '{barrier}' was not reached by every party within {deadline} s",
        tr: "{label}: {who}: '{barrier}' bariyerine {deadline} sn içinde herkes ulaşmadı",
    }
    not_finished(what, deadline) {
        en: "{what}: did not finish within {deadline} s",
        tr: "{what}: {deadline} sn içinde bitmedi",
    }
    setup_failed(error) {
        en: "the spec's setup failed: {error}",
        tr: "spec'in setup'ı başarısız oldu: {error}",
    }
    session_setup_failed(session, error) {
        en: "the setup of session {session} failed: {error}",
        tr: "{session} oturumunun setup'ı başarısız oldu: {error}",
    }
    probe_failed(name) {
        en: "could not take the snapshot {name}",
        tr: "{name} anlık görüntüsü alınamadı",
    }
    never_completed(step) {
        en: "step {step} never completed: its blocker annotations cannot be met",
        tr: "{step} adımı hiç tamamlanmadı: engelleyici işaretleri karşılanamıyor",
    }
    held_by_outsider(step, who) {
        en: "{step} waits for a lock a backend that is not the run's holds: {who} (not a wait of the run's)",
        tr: "{step}, çalıştırmaya ait olmayan bir backend'in tuttuğu bir kilidi bekliyor: {who} (çalıştırmanın beklemesi sayılmaz)",
    }
    cancelled_stuck(session, ms) {
        en: "every running step had waited {ms} ms and only the server could end that: lab cancelled {session}'s statement",
        tr: "çalışan her adım {ms} ms beklemişti ve bunu ancak sunucu bitirebilirdi: lab, {session} oturumunun komutunu iptal etti",
    }
    cancelled_dead_end(session, by) {
        en: "{session} waited for {by}, which had no step running: only a step of {session}'s own could have ended the wait, so the permutation could not go on: lab cancelled {session}'s statement",
        tr: "{session}, çalışan adımı olmayan {by} oturumunu bekliyordu: beklemeyi ancak {session} oturumunun kendi adımı bitirebilirdi, permütasyon ilerleyemezdi: lab, {session} oturumunun komutunu iptal etti",
    }
    cancelled_deadline(session, deadline) {
        en: "{session}'s statement did not answer within {deadline} s: lab cancelled it",
        tr: "{session} oturumunun komutu {deadline} sn içinde cevap vermedi: lab onu iptal etti",
    }
    terminated(session) {
        en: "the cancelled statement did not end: lab terminated {session}'s backend",
        tr: "iptal edilen komut bitmedi: lab {session} oturumunun backend'ini sonlandırdı",
    }
    step_next(session) {
        en: "next: session {session} runs",
        tr: "sıradaki: {session} oturumu çalıştırıyor",
    }
    step_prompt() {
        en: "[Enter] run it   [s Enter] run the rest of this variant without stopping",
        tr: "[Enter] çalıştır   [s Enter] bu varyantın kalanını durmadan çalıştır",
    }
    step_guess() {
        en: "your guess, then Enter: [Enter] runs at once   [wait A]   [error 40001]   [value 5]\n  [-] no guess   [s] run the rest without stopping",
        tr: "tahmininiz, sonra Enter: [Enter] hemen çalışır   [wait A]   [error 40001]   [value 5]\n  [-] tahmin yok   [s] kalanı durmadan çalıştır",
    }
    step_unattended(setting, value) {
        en: "{setting} = {value} now counts while the room reads: the rest of this variant runs on its own (each statement is shown)",
        tr: "{setting} = {value} artık salon okurken de sayıyor: bu varyantın kalanı kendi kendine çalışır (her komut gösterilir)",
    }
    step_skipping() {
        en: "running the rest of this variant without stopping",
        tr: "bu varyantın kalanı durmadan çalışıyor",
    }
    why_begin() {
        en: "start a transaction",
        tr: "bir transaction başlat",
    }
    why_commit() {
        en: "make the transaction's changes visible and release its locks",
        tr: "transaction'ın değişikliklerini görünür kıl ve kilitlerini bırak",
    }
    commit_failed_tx() {
        en: "but this transaction already failed: the server ends it with ROLLBACK",
        tr: "ama bu transaction zaten başarısız oldu: sunucu onu ROLLBACK ile bitirir",
    }
    why_rollback() {
        en: "undo the transaction and release its locks",
        tr: "transaction'ı geri al ve kilitlerini bırak",
    }
    why_savepoint() {
        en: "mark a point to roll back to, keeping the rest of the transaction",
        tr: "geri dönülecek bir nokta işaretle, transaction'ın geri kalanını koruyarak",
    }
    why_rollback_to() {
        en: "undo back to the savepoint; the transaction goes on",
        tr: "savepoint'e kadar geri al; transaction devam eder",
    }
    why_other() {
        en: "the scenario's next step",
        tr: "senaryonun sıradaki adımı",
    }
}
