//! The interface's words: column headers, verdicts, the server's banner...
crate::messages! {
    prefix "ui";
    col_scenario() {
        en: "scenario",
        tr: "senaryo",
    }
    col_summary() {
        en: "summary",
        tr: "özet",
    }
    col_variants() {
        en: "variants",
        tr: "varyantlar",
    }
    col_variant() {
        en: "variant",
        tr: "varyant",
    }
    col_expected() {
        en: "expected",
        tr: "beklenen",
    }
    col_observed() {
        en: "observed",
        tr: "gözlenen",
    }
    col_anomaly() {
        en: "anomaly",
        tr: "anomali",
    }
    col_verdict() {
        en: "verdict",
        tr: "sonuç",
    }
    col_t_ms() {
        en: "t ms",
        tr: "t ms",
    }
    verdict_ok() {
        en: "as documented",
        tr: "belgelendiği gibi",
    }
    verdict_not() {
        en: "NOT as documented",
        tr: "belgelendiği gibi DEĞİL",
    }
    verdict_skipped() {
        en: "skipped",
        tr: "atlandı",
    }
    verdict_pooler() {
        en: "differs behind the pooler",
        tr: "pooler arkasında farklı",
    }
    yes() {
        en: "yes",
        tr: "evet",
    }
    no() {
        en: "no",
        tr: "hayır",
    }
    skipped() {
        en: "skipped",
        tr: "atlandı",
    }
    note() {
        en: "note",
        tr: "not",
    }
    col_statements() {
        en: "statements",
        tr: "komut",
    }
    col_waits() {
        en: "waits",
        tr: "bekleme",
    }
    col_errors() {
        en: "errors",
        tr: "hata",
    }
    steps_hidden(hidden, total) {
        en: "{hidden} of {total} steps answered at once and are not shown (--verbose shows every one); per session:",
        tr: "{total} adımın {hidden} tanesi hemen yanıtlandı ve gösterilmiyor (--verbose hepsini gösterir); oturum başına:",
    }
    metrics() {
        en: "metrics",
        tr: "ölçümler",
    }
    version_over_tls(version, tls) {
        en: "{version} over {tls}",
        tr: "{version} ({tls})",
    }
    tls_verified(version, host) {
        en: "{version}, certificate verified for {host}",
        tr: "{version}, sertifika {host} için doğrulandı",
    }
    tls_chain_only(version) {
        en: "{version}, certificate chain verified (host name not checked)",
        tr: "{version}, sertifika zinciri doğrulandı (sunucu adı denetlenmedi)",
    }
    tls_unverified(version) {
        en: "{version}, certificate not verified",
        tr: "{version}, sertifika doğrulanmadı",
    }
    scenario_footer(scenario, version, ms) {
        en: "{scenario} on PostgreSQL {version} ({ms} ms)",
        tr: "PostgreSQL {version} üzerinde {scenario} ({ms} ms)",
    }
    all_summary(version, variants, ok, skipped, ms) {
        en: "Summary: PostgreSQL {version}, {variants} variants, {ok} as documented, {skipped} skipped ({ms} ms)",
        tr: "Özet: PostgreSQL {version}, {variants} varyant, {ok} tanesi belgelendiği gibi, {skipped} tanesi atlandı ({ms} ms)",
    }
    all_summary_pooler(version, variants, ok, differs, skipped, ms) {
        en: "Summary: PostgreSQL {version}, {variants} variants, {ok} as documented, {differs} differing behind the pooler (as documented there), {skipped} skipped ({ms} ms)",
        tr: "Özet: PostgreSQL {version}, {variants} varyant, {ok} tanesi belgelendiği gibi, {differs} tanesi pooler arkasında orada belgelendiği gibi farklı, {skipped} tanesi atlandı ({ms} ms)",
    }
    error() {
        en: "error",
        tr: "hata",
    }
    interrupted_unclean() {
        en: "interrupted: the server did not answer lab's clean-up; what lab made there (its schema lab_..., its sessions) may still be there",
        tr: "kesildi: sunucu lab'ın temizliğine cevap vermedi; lab'ın orada oluşturduğu (lab_... şeması, oturumları) hâlâ orada olabilir",
    }
    interrupted() {
        en: "interrupted: lab ended its sessions and cleaned up as at the end of any run",
        tr: "kesildi: lab oturumlarını kapattı ve her çalıştırmanın sonundaki gibi temizledi",
    }
    server_running(version, ms, schema) {
        en: "PostgreSQL {version} is running (ready in {ms} ms), with the lab schema \"{schema}\".",
        tr: "PostgreSQL {version} çalışıyor ({ms} ms'de hazır), lab şeması \"{schema}\".",
    }
    server_run_against() {
        en: "Run scenarios against it with",
        tr: "Senaryoları buna karşı şöyle çalıştırın",
    }
    server_stop() {
        en: "Stop with Ctrl-C.",
        tr: "Durdurmak için Ctrl-C.",
    }
    server_stopped() {
        en: "server stopped and removed",
        tr: "sunucu durduruldu ve kaldırıldı",
    }
    locks_title(version, time, every) {
        en: "lab sessions on PostgreSQL {version} at {time} (every {every} s; Ctrl-C to stop)",
        tr: "PostgreSQL {version} üzerindeki lab oturumları, {time} (her {every} sn; durdurmak için Ctrl-C)",
    }
    locks_title_once(version, time) {
        en: "sessions on PostgreSQL {version} at {time}",
        tr: "PostgreSQL {version} üzerindeki oturumlar, {time}",
    }
    locks_none() {
        en: "no lab session is connected",
        tr: "bağlı lab oturumu yok",
    }
    locks_needs_server() {
        en: "lab locks watches a running server: give it --database-url (the one `lab server` prints) or set DATABASE_URL",
        tr: "lab locks çalışan bir sunucuyu izler: --database-url verin (`lab server`ın yazdığı) ya da DATABASE_URL ayarlayın",
    }
    col_pid() {
        en: "pid",
        tr: "pid",
    }
    col_session() {
        en: "session",
        tr: "oturum",
    }
    col_state() {
        en: "state",
        tr: "durum",
    }
    col_wait_event() {
        en: "wait event",
        tr: "bekleme olayı",
    }
    col_blocked_by() {
        en: "blocked by",
        tr: "bekleten",
    }
    col_lock_mode() {
        en: "lock mode",
        tr: "kilit modu",
    }
    col_query() {
        en: "statement",
        tr: "komut",
    }
    col_waiting() {
        en: "waiting",
        tr: "bekliyor",
    }
    help_flag() {
        en: "Print help",
        tr: "Yardımı göster",
    }
    version_flag() {
        en: "Print version",
        tr: "Sürümü göster",
    }
    help_commands() {
        en: "Commands",
        tr: "Komutlar",
    }
    help_command_value() {
        en: "COMMAND",
        tr: "KOMUT",
    }
    help_options_value() {
        en: "OPTIONS",
        tr: "SEÇENEKLER",
    }
    help_options() {
        en: "Options",
        tr: "Seçenekler",
    }
    help_regress_options() {
        en: "pg_isolation_regress's options",
        tr: "pg_isolation_regress'in seçenekleri",
    }
    help_usage() {
        en: "Usage:",
        tr: "Kullanım:",
    }
    help_subcommand() {
        en: "Print this message or the help of the given subcommand(s)",
        tr: "Bu mesajı ya da verilen komutun yardımını göster",
    }
    help_default() {
        en: "default",
        tr: "varsayılan",
    }
    help_possible() {
        en: "possible values",
        tr: "olası değerler",
    }
    help_env() {
        en: "env",
        tr: "ortam değişkeni",
    }
    why() {
        en: "why",
        tr: "neden",
    }
    waiting(who) {
        en: "waiting for {who}",
        tr: "{who} bekleniyor",
    }
    waiting_lock(who, lock) {
        en: "waiting for {who} ({lock})",
        tr: "{who} bekleniyor ({lock})",
    }
    waiting_unseen(who) {
        en: "waited for {who} (the server's error says so)",
        tr: "{who} beklendi (sunucunun hatası öyle diyor)",
    }
    somebody() {
        en: "another session",
        tr: "başka bir oturum",
    }
    after_waiting(ms) {
        en: "after waiting {ms} ms: ",
        tr: "{ms} ms bekledikten sonra: ",
    }
    cancelled_by_lab() {
        en: " (cancelled by lab)",
        tr: " (lab iptal etti)",
    }
    failed_checks() {
        en: "NOT as documented",
        tr: "belgelendiği gibi DEĞİL",
    }
    checks() {
        en: "checks",
        tr: "kontroller",
    }
    usage(error) {
        en: "{error}",
        tr: "{error}",
    }
    /// Words lab already put in the run's language (joined phrases).
    verbatim(text) {
        en: "{text}",
        tr: "{text}",
    }
}
