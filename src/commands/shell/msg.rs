//! What `lab shell` says, in English and Turkish.
crate::messages! {
    prefix "sh";
    banner(sessions, version) {
        en: "lab shell: sessions {sessions} on PostgreSQL {version}, each on its own connection. Statements end with ';'. \\? for help, \\q to leave.",
        tr: "lab shell: {sessions} oturumları PostgreSQL {version} üzerinde, her biri kendi bağlantısında. İfadeler ';' ile biter. Yardım için \\?, çıkmak için \\q.",
    }
    help() {
        en: "  B: <sql>;          run one statement on B without switching\n  \\s B               B becomes the current session\n  \\timeline          what each session did so far, in time order\n  \\locks             who waits for whom, as the server says\n  \\save FILE.spec    write what ran as an isolationtester spec (lab spec FILE replays it)\n  \\html FILE         write the HTML report of what happened\n  \\run STEP ...      run a loaded spec's step on its session (--spec FILE); \\steps lists them\n  \\setup <sql>       run on lab's own connection, saved as the spec's setup\n  \\predict [on|off]  guess first: before each statement, say what it will do\n  Ctrl-C             cancel the current session's running statement\n  \\q or Ctrl-D       leave (sessions ended, the lab schema dropped unless it was there before)",
        tr: "  B: <sql>;          geçiş yapmadan B'de tek bir ifade çalıştır\n  \\s B               B geçerli oturum olur\n  \\timeline          her oturumun şimdiye kadar yaptıkları, zaman sırasıyla\n  \\locks             sunucuya göre kim kimi bekliyor\n  \\save FILE.spec    çalışanları isolationtester spec'i olarak yaz (lab spec FILE yeniden oynatır)\n  \\html FILE         olanların HTML raporunu yaz\n  \\run STEP ...      yüklenen spec'in adımını kendi oturumunda çalıştır (--spec FILE); \\steps listeler\n  \\setup <sql>       lab'ın kendi bağlantısında çalıştır, spec'in setup'ı olarak kaydedilir\n  \\predict [on|off]  önce tahmin et: her ifadeden önce ne yapacağını söyle\n  Ctrl-C             geçerli oturumun çalışan ifadesini iptal et\n  \\q ya da Ctrl-D    çık (oturumlar kapanır, lab şeması önceden yoksa silinir)",
    }
    waits(who, by, lock) {
        en: "⏳ {who} waits for {by} ({lock})",
        tr: "⏳ {who}, {by} oturumunu bekliyor ({lock})",
    }
    waits_for(who, by) {
        en: "⏳ {who} waits for {by}",
        tr: "⏳ {who}, {by} oturumunu bekliyor",
    }
    lock_on(mode, object) {
        en: "{mode} on {object}",
        tr: "{object} üzerinde {mode}",
    }
    lock_transaction(xid) {
        en: "transaction {xid}",
        tr: "{xid} numaralı transaction",
    }
    lock_virtual(vxid) {
        en: "virtual transaction {vxid}",
        tr: "{vxid} numaralı sanal transaction",
    }
    lock_tuple(page, tuple, relation) {
        en: "tuple ({page},{tuple}) of {relation}",
        tr: "{relation} tablosunun ({page},{tuple}) satırı",
    }
    lock_relation(relation) {
        en: "relation {relation}",
        tr: "{relation} ilişkisi",
    }
    lock_for_row(lock, row) {
        en: "{lock}, {row}",
        tr: "{row} için {lock}",
    }
    safe_snapshot() {
        en: "a safe snapshot: SERIALIZABLE READ ONLY DEFERRABLE",
        tr: "güvenli bir snapshot: SERIALIZABLE READ ONLY DEFERRABLE",
    }
    outside(pids) {
        en: "backend {pids}, not a session of this shell",
        tr: "{pids} backend'i, bu kabuğun oturumu değil",
    }
    sync_rep() {
        en: "a synchronous standby's confirmation (SyncRep)",
        tr: "senkron standby'ın onayı (SyncRep)",
    }
    done(who, result) {
        en: "{who} → {result}",
        tr: "{who} → {result}",
    }
    done_after(who, took, result) {
        en: "✔ {who} after {took} → {result}",
        tr: "✔ {who} {took} sonra → {result}",
    }
    millis(ms) {
        en: "{ms} ms",
        tr: "{ms} milisaniye",
    }
    seconds(secs) {
        en: "{secs} s",
        tr: "{secs} saniye",
    }
    failed(who, error) {
        en: "✖ {who} {error}",
        tr: "✖ {who} {error}",
    }
    failed_after(who, took, error) {
        en: "✖ {who} after {took}: {error}",
        tr: "✖ {who} {took} sonra: {error}",
    }
    rows(count) {
        en: "({count} rows)",
        tr: "({count} satır)",
    }
    one_row() {
        en: "(1 row)",
        tr: "(1 satır)",
    }
    running(who) {
        en: "… {who} is still running (it waits for no lock): its answer will show here when it comes",
        tr: "… {who} hâlâ çalışıyor (bir kilit beklemiyor): cevabı geldiğinde burada görünecek",
    }
    busy(who) {
        en: "{who} has not finished its last statement: it must end first (\\s {who}, then Ctrl-C cancels it)",
        tr: "{who} son ifadesini bitirmedi: önce o bitmeli (\\s {who}, sonra Ctrl-C onu iptal eder)",
    }
    busy_current(who) {
        en: "{who} has not finished its last statement: it must end first (Ctrl-C cancels it)",
        tr: "{who} son ifadesini bitirmedi: önce o bitmeli (Ctrl-C onu iptal eder)",
    }
    busy_piped(who) {
        en: "not sent: {who} has not finished its last statement",
        tr: "gönderilmedi: {who} son ifadesini bitirmedi",
    }
    no_session(name, sessions) {
        en: "no session {name} (the sessions: {sessions})",
        tr: "{name} diye bir oturum yok (oturumlar: {sessions})",
    }
    usage(usage) {
        en: "usage: {usage} (\\? lists the commands)",
        tr: "kullanım: {usage} (\\? komutları listeler)",
    }
    unknown(command) {
        en: "unknown command {command}: \\? lists the commands",
        tr: "bilinmeyen komut {command}: \\? komutları listeler",
    }
    cancelling(who) {
        en: "cancelling {who}'s statement (pg_cancel_backend)",
        tr: "{who} oturumunun ifadesi iptal ediliyor (pg_cancel_backend)",
    }
    guess_dropped(who) {
        en: "Ctrl-C: {who}'s statement is not sent",
        tr: "Ctrl-C: {who} oturumunun ifadesi gönderilmiyor",
    }
    guess_eof(who) {
        en: "the input ended at the guess: {who}'s statement is not sent",
        tr: "girdi tahminde bitti: {who} oturumunun ifadesi gönderilmiyor",
    }
    rest_not_sent(n) {
        en: "the {n} statement(s) after it are not sent",
        tr: "ondan sonraki {n} ifade gönderilmiyor",
    }
    nothing_running(who) {
        en: "{who} runs nothing to cancel; \\q or Ctrl-D leaves",
        tr: "{who} iptal edilecek bir şey çalıştırmıyor; \\q ya da Ctrl-D çıkar",
    }
    nothing_running_but(who, other) {
        en: "{who} runs nothing to cancel; {other}'s statement is still out: \\s {other}, then Ctrl-C, cancels it",
        tr: "{who} iptal edilecek bir şey çalıştırmıyor; {other} oturumunun ifadesi henüz cevap vermedi: \\s {other}, sonra Ctrl-C onu iptal eder",
    }
    nothing_running_but_many(who, others) {
        en: "{who} runs nothing to cancel; statements still out: {others}",
        tr: "{who} iptal edilecek bir şey çalıştırmıyor; henüz cevap vermeyen ifadeler: {others}",
    }
    still_out(who) {
        en: "{who}'s (\\s {who}, then Ctrl-C, cancels it)",
        tr: "{who} oturumununki (\\s {who}, sonra Ctrl-C onu iptal eder)",
    }
    saved(path, steps, replay) {
        en: "saved {steps} step(s) to {path}: `lab spec {replay}` replays them",
        tr: "{steps} adım {path} dosyasına kaydedildi: `lab spec {replay}` yeniden oynatır",
    }
    save_cancelled(who, statement) {
        en: "not saved: {who}'s {statement} was cancelled (Ctrl-C), and a spec has no step that cancels another: this shell's statements can no longer be saved as a spec. To record one, start a new `lab shell` and let each statement answer (a wait ends when the session it waits for commits or rolls back)",
        tr: "kaydedilmedi: {who} oturumunun {statement} ifadesi iptal edildi (Ctrl-C) ve spec'te başka bir adımı iptal eden adım yok: bu kabuğun ifadeleri artık spec olarak kaydedilemez. Kaydetmek için yeni bir `lab shell` başlatın ve her ifadenin cevabını bekleyin (bir bekleme, beklenen oturum COMMIT ya da ROLLBACK yapınca biter)",
    }
    save_brace(who, statement) {
        en: "not saved: {who}'s {statement} has a '}', which ends a spec's SQL block (isolationtester's too) with no way to escape it: this shell's statements can no longer be saved as a spec. To record one, start a new `lab shell` and write the statement another way (ARRAY[1,2] for an array literal, chr(125) in a string)",
        tr: "kaydedilmedi: {who} oturumunun {statement} ifadesinde bir '}' var; spec'in SQL bloğunu (isolationtester'ınkini de) kaçışı olmadan bitirir: bu kabuğun ifadeleri artık spec olarak kaydedilemez. Kaydetmek için yeni bir `lab shell` başlatın ve ifadeyi başka türlü yazın (dizi sabiti için ARRAY[1,2], metin içinde chr(125))",
    }
    save_brace_setup(statement) {
        en: "not saved: the \\setup statement {statement} has a '}', which ends a spec's SQL block (isolationtester's too) with no way to escape it: this shell's statements can no longer be saved as a spec. To record one, start a new `lab shell` and write the statement another way (ARRAY[1,2] for an array literal, chr(125) in a string)",
        tr: "kaydedilmedi: \\setup ifadesinde ({statement}) bir '}' var; spec'in SQL bloğunu (isolationtester'ınkini de) kaçışı olmadan bitirir: bu kabuğun ifadeleri artık spec olarak kaydedilemez. Kaydetmek için yeni bir `lab shell` başlatın ve ifadeyi başka türlü yazın (dizi sabiti için ARRAY[1,2], metin içinde chr(125))",
    }
    save_idle_setup(who) {
        en: "not saved: {who}'s setup block ran, and {who} ran no statement; a spec's session needs a step, so the spec would leave {who} out, and its setup (a lock it takes, say) with it; run one statement on {who} ({who}: SELECT 1;) and save again",
        tr: "kaydedilmedi: {who} oturumunun setup bloğu çalıştı ama {who} hiç ifade çalıştırmadı; spec'te her oturumun en az bir adımı olur, yani spec {who} oturumunu, onunla da setup'ını (aldığı bir kilidi, örneğin) dışarıda bırakırdı; {who} üzerinde bir ifade çalıştırıp ({who}: SELECT 1;) yeniden kaydedin",
    }
    save_pending(who, statement) {
        en: "not saved: {who}'s {statement} has not answered yet, and a spec that ends with it would replay an answer that did not come; save once it has (Ctrl-C on {who} cancels it)",
        tr: "kaydedilmedi: {who} oturumunun {statement} ifadesi henüz cevap vermedi; onunla biten bir spec gelmemiş bir cevabı oynatırdı; cevap geldikten sonra kaydedin ({who} üzerinde Ctrl-C onu iptal eder)",
    }
    save_pending_piped(who, statement) {
        en: "not saved: {who}'s {statement} has not answered yet, and a spec that ends with it would replay an answer that did not come; save once it has",
        tr: "kaydedilmedi: {who} oturumunun {statement} ifadesi henüz cevap vermedi; onunla biten bir spec gelmemiş bir cevabı oynatırdı; cevap geldikten sonra kaydedin",
    }
    setup_after_steps() {
        en: "\\setup runs before the sessions' first statement: it is saved as the spec's setup, which runs first on replay; use a session for this one",
        tr: "\\setup oturumların ilk ifadesinden önce çalışır: spec'in setup'ı olarak kaydedilir ve yeniden oynatmada önce çalışır; bunun için bir oturum kullanın",
    }
    setup_waits(by) {
        en: "the setup statement waits for {by}, so it is cancelled: end {by}'s transaction first",
        tr: "setup ifadesi {by} oturumunu bekliyor, bu yüzden iptal edildi: önce {by} oturumunun transaction'ını bitirin",
    }
    setup_no_answer(secs) {
        en: "the setup statement did not answer its cancel within {secs} s",
        tr: "setup ifadesi iptaline {secs} saniye içinde cevap vermedi",
    }
    not_utf8() {
        en: "the input is not UTF-8 text: lab shell reads UTF-8 (convert the file with iconv -t UTF-8)",
        tr: "girdi UTF-8 metin değil: lab shell UTF-8 okur (dosyayı iconv -t UTF-8 ile dönüştürün)",
    }
    saved_overlap(running, sent, running_step, sent_step) {
        en: "  note: {sent} was sent while {running} was still running (waiting for no lock); a spec cannot say so, and on replay {running_step} runs to its end before {sent_step} starts",
        tr: "  not: {sent}, {running} hâlâ çalışırken (bir kilit beklemeden) gönderildi; spec bunu ifade edemez ve yeniden oynatmada {running_step} bitmeden {sent_step} başlamaz",
    }
    of_session(who, statement) {
        en: "{who}'s {statement}",
        tr: "{who} oturumunun {statement} ifadesi",
    }
    nothing_ran() {
        en: "nothing ran yet: nothing to save",
        tr: "henüz hiçbir şey çalışmadı: kaydedilecek bir şey yok",
    }
    not_written(path, error) {
        en: "could not write {path}: {error}",
        tr: "{path} yazılamadı: {error}",
    }
    html_written(path) {
        en: "wrote the HTML report to {path}",
        tr: "HTML raporu {path} dosyasına yazıldı",
    }
    no_spec() {
        en: "no spec is loaded: start the shell with --spec FILE",
        tr: "yüklü spec yok: kabuğu --spec FILE ile başlatın",
    }
    no_step(step, steps) {
        en: "the spec has no step {step} (its steps: {steps})",
        tr: "spec'te {step} adımı yok (adımları: {steps})",
    }
    run_step(session, step, sql) {
        en: "{session} ▸ {step}: {sql}",
        tr: "{session} ▸ {step}: {sql}",
    }
    run_step_why(why) {
        en: "  why: {why}",
        tr: "  neden: {why}",
    }
    steps_of(session, steps) {
        en: "  {session}: {steps}",
        tr: "  {session}: {steps}",
    }
    setup_failed(error) {
        en: "the setup statement failed: {error}",
        tr: "setup ifadesi başarısız: {error}",
    }
    setup_done(result) {
        en: "setup → {result}",
        tr: "setup → {result}",
    }
    setup_busy() {
        en: "a statement is still running: \\setup runs when every session is idle",
        tr: "hâlâ çalışan bir ifade var: \\setup her oturum boştayken çalışır",
    }
    in_tx(level) {
        en: "in transaction, {level}",
        tr: "transaction içinde, {level}",
    }
    failed_tx() {
        en: "in failed transaction",
        tr: "başarısız transaction içinde",
    }
    waiting_state(by) {
        en: "waiting for {by}",
        tr: "{by} bekleniyor",
    }
    running_state() {
        en: "running",
        tr: "çalışıyor",
    }
    empty_timeline() {
        en: "nothing ran yet",
        tr: "henüz hiçbir şey çalışmadı",
    }
    predict_ask(who) {
        en: "guess for {who}> ",
        tr: "{who} için tahmin> ",
    }
    sigint() {
        en: "could not watch for Ctrl-C (SIGINT)",
        tr: "Ctrl-C (SIGINT) izlenemedi",
    }
    not_ended(text) {
        en: "not run: {text} (no ';' ended it)",
        tr: "çalıştırılmadı: {text} (';' ile bitmedi)",
    }
    left_cancelled(who, statement) {
        en: "leaving: {who}'s {statement} had not answered; it is cancelled",
        tr: "çıkılıyor: {who} oturumunun {statement} ifadesi cevap vermemişti; iptal edildi",
    }
    read_settings() {
        en: "could not read the server's settings (pg_settings)",
        tr: "sunucunun ayarları okunamadı (pg_settings)",
    }
    left() {
        en: "bye: the sessions are ended",
        tr: "görüşmek üzere: oturumlar kapatıldı",
    }
    no_sessions() {
        en: "--sessions needs one to eight names, like A,B,C (letters, digits and _, each once)",
        tr: "--sessions bir ile sekiz arası ad ister, örneğin A,B,C (harf, rakam ve _, her biri bir kez)",
    }
    spec_sessions() {
        en: "--spec gives the sessions (the spec's own): leave out --sessions",
        tr: "--spec oturumları verir (spec'in kendi oturumları): --sessions vermeyin",
    }
    spec_sessions_alike(one, other) {
        en: "the spec's sessions {one} and {other} differ only in case (or one is the shell's own \"setup\"): the shell could not tell them apart",
        tr: "spec'in {one} ve {other} oturumları yalnızca büyük/küçük harfte ayrılıyor (ya da biri kabuğun kendi \"setup\" bağlantısı): kabuk onları ayırt edemez",
    }
    about_saved(version) {
        en: "Recorded by `lab shell` on PostgreSQL {version}: one step per statement, one permutation in the order they ran.",
        tr: "`lab shell` ile PostgreSQL {version} üzerinde kaydedildi: her ifade bir adım, çalıştıkları sırayla tek bir permütasyon.",
    }
    about_replay() {
        en: "Replay: lab spec FILE (or isolationtester against `lab server`, with PGOPTIONS='-c search_path=lab').",
        tr: "Yeniden oynatma: lab spec FILE (ya da `lab server`'a karşı isolationtester, PGOPTIONS='-c search_path=lab' ile).",
    }
}
