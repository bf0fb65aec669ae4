//! Türkçe metinler.
use super::{ScenarioText, Texts, Ui, VariantText};

pub static TEXTS: Texts = Texts {
    ui: Ui {
        col_scenario: "senaryo",
        col_summary: "özet",
        col_variants: "varyantlar",
        col_variant: "varyant",
        col_expected: "beklenen",
        col_observed: "gözlenen",
        col_anomaly: "anomali",
        col_verdict: "sonuç",
        col_t_ms: "t ms",
        verdict_ok: "belgelendiği gibi",
        verdict_not: "belgelendiği gibi DEĞİL",
        verdict_skipped: "atlandı",
        yes: "evet",
        no: "hayır",
        skipped: "atlandı",
        note: "not",
        metrics: "ölçümler",
        why: "neden",
        scenario_footer: "PostgreSQL {version} üzerinde {scenario} ({ms} ms)",
        all_summary: "Özet: PostgreSQL {version}, {variants} varyant, {ok} tanesi belgelendiği gibi ({ms} ms)",
        error: "hata",
        interrupted: "kesildi: oturumlar kapatıldı, lab'ın nesneleri kaldırıldı",
        step_next: "sıradaki: {session} oturumu çalıştırıyor",
        step_prompt: "[Enter] çalıştır   [s Enter] bu varyantın kalanını durmadan çalıştır",
        step_skipping: "bu varyantın kalanı durmadan çalışıyor",
        step_needs_terminal: "--step her adımdan önce Enter bekler, bu yüzden stdin'de bir terminal ister; --step olmadan ya da bir terminalden çalıştırın",
        step_begin: "bir transaction başlat",
        step_commit: "transaction'ın değişikliklerini görünür kıl ve kilitlerini bırak",
        step_rollback: "transaction'ı geri al ve kilitlerini bırak",
        step_other: "senaryonun sıradaki adımı",
        server_running: "PostgreSQL {version} çalışıyor ({ms} ms'de hazır), lab şeması \"{schema}\".",
        server_run_against: "Senaryoları buna karşı şöyle çalıştırın",
        server_stop: "Durdurmak için Ctrl-C.",
        server_stopped: "sunucu durduruldu ve kaldırıldı",
        locks_title: "PostgreSQL {version} üzerindeki lab oturumları, {time} (her {every} sn; durdurmak için Ctrl-C)",
        locks_none: "bağlı lab oturumu yok",
        locks_needs_server: "lab locks çalışan bir sunucuyu izler: --database-url verin (`lab server`ın yazdığı) ya da DATABASE_URL ayarlayın",
        col_pid: "pid",
        col_session: "oturum",
        col_state: "durum",
        col_wait_event: "bekleme olayı",
        col_blocked_by: "bekleten",
        col_lock_mode: "kilit modu",
        col_query: "komut",
        step_waiting: "{who} tarafından tutulan ya da sırada beklenen bir kilidi bekliyor",
        step_after_waiting: "{ms} ms bekledikten sonra: ",
        step_commit_rolled_back: "ROLLBACK (transaction hata almıştı, COMMIT onu geri aldı)",
        retry_again: "{attempt}. deneme {code} ile düştü; geri alınıyor, bütün transaction {ms} ms sonra baştan deneniyor",
        retry_exhausted: "{attempt}. deneme {code} ile düştü; deneme hakkı kalmadı",
        col_waiting: "bekliyor",
    },
    scenarios: SCENARIOS,
    say: SAY,
};

pub static SAY: &[(&str, &str)] = &[
    ("any.waited_for", "bekledi"),
    ("any.did_not_wait_for", "beklemedi"),
    (
        "lu.rmw.ok",
        "B'nin UPDATE'i başarılı oldu; ikisi de commit etti; sonuç {q}",
    ),
    ("lu.rmw.err", "B'nin UPDATE'i {code} ile düştü ({message}); sonuç {q}"),
    (
        "lu.atomic",
        "B, A'yı {waited}; B'nin UPDATE'i {rows} satırı etkiledi; sonuç {q}",
    ),
    ("lu.sfu", "B, A'yı {waited}, sonra {qb} okudu; sonuç {q}"),
    (
        "lu.optimistic",
        "A'nın sürümlü UPDATE'i {a}, B'ninki {b} satır etkiledi; sonuç {q}",
    ),
    (
        "lu.token",
        "updated_at A'nın kaydından önce de sonra da {stamp} idi; B'nin kontrolü geçti ({b} satır); A'nın adresi {fate}",
    ),
    ("lu.token.lost", "ezildi"),
    ("lu.token.kept", "korundu"),
    (
        "lu.merge",
        "satır çapında sürüm: B'nin kaydı {rows} satır etkiledi{needless}; alan bazında kontrol: iki değişiklik de {landed}",
    ),
    ("lu.merge.needless", " (gereksiz bir çakışma)"),
    ("lu.merge.landed", "yazıldı"),
    ("lu.merge.not_landed", "birlikte yazılamadı"),
    ("ws.inserted", "{who} ekledi{tries}"),
    ("ws.saw", "{who} {n} bekleyen gördü, eklemedi{tries}"),
    ("ws.failed", "{who} {stmt} sırasında {code} ile düştü{tries}"),
    ("ws.attempt", " ({n}. deneme)"),
    (
        "ws.rule",
        "{a}; {b}; {customer} numaralı müşterinin {pending} bekleyen siparişi var",
    ),
    ("ws.part", "{part}: {a}, {b}{shared}"),
    ("ws.no_shared_page", " (ortak index sayfası yok)"),
    ("ws.shared_page", " (ikisi de {pages} numaralı index sayfasını tutuyor)"),
    ("fk.ok", "B'nin INSERT'ü {waited} ve tamamlandı"),
    ("fk.waited_for_a", "A'yı bekledi"),
    ("fk.did_not_wait", "beklemedi"),
    (
        "fk.err",
        "B'nin INSERT'ü {ms} ms bekledi, sonra {code} ile düştü: {message}",
    ),
    (
        "dl.victim",
        "{victim} {ms} ms bekledikten sonra 40P01 ile iptal edildi (deadlock_timeout {timeout} ms); COMMIT'i geri alındı; diğeri commit etti",
    ),
    ("dl.none", "hiçbir oturum düşmedi"),
    (
        "dl.same",
        "B, A'yı {waited}; ikisi de commit etti; 1 ve 2 numaralı kitaplar {r1} ve {r2} kez ayrıldı",
    ),
    ("nw.failed", "B {ms} ms sonra {code} ile düştü: {message}"),
    ("nw.got_row", "B satırı {ms} ms sonra aldı"),
    ("nw.rows", "B {ms} ms sonra hatasız {rows} satır aldı"),
    (
        "al.xact",
        "{winners} çalıştı, {skipped} atladı; COMMIT sonrası sonraki çalıştırma kilidi {got}",
    ),
    ("al.got", "aldı"),
    ("al.did_not_get", "alamadı"),
    (
        "al.pooled",
        "başka bağlantıdaki sonraki çalıştırma {first}; havuz sıfırlandıktan sonra {second}",
    ),
    ("al.not_skipped", "atlanmadı"),
    ("al.skipped_idle", "hiçbir şey çalışmazken atlandı"),
    ("al.ran", "çalıştı"),
    ("al.skipped_again", "yine atlandı"),
    ("dq.queue", "B, A'yı {b} ms bekledi; C'yi {by} {c} ms bekletti"),
    ("dq.nobody", "kimse"),
    (
        "dq.retry",
        "B'nin ilk ALTER'ı {first}; C {c} ms bekledi; B {n} denemede {done}",
    ),
    ("dq.first_ok", "başarılı oldu"),
    ("dq.first_failed", "lock_timeout'ta {code} ile düştü"),
    ("dq.done", "başarılı oldu"),
    ("dq.not_done", "yine başaramadı"),
    ("rc.ok", "B'nin DELETE'i {n} satır sildi; hits şimdi {hits}"),
    ("rc.err", "B'nin DELETE'i {code} ile düştü: {message}"),
    (
        "to.lock",
        "B {ms} ms bekledi ve {code} ile düştü; ROLLBACK sonrası B {locks} kilit tutuyor",
    ),
    ("to.update_ok", "B'nin UPDATE'i başarılı oldu"),
    (
        "to.statement",
        "B'nin komutu {ms} ms sonra {code} ile iptal edildi; iptal edilen transaction {locks} kilit tutuyordu; A, B'yi {waited}; B'nin sonraki komutu {next}",
    ),
    ("to.next_failed", "{code} ile düştü"),
    ("to.next_ok", "başarılı oldu"),
    ("to.statement_ok", "B'nin komutu tamamlandı"),
    ("to.ended", "A, sunucu B'yi sonlandırana kadar {ms} ms bekledi; {seen}"),
    ("to.seen_ok", "B'nin sonraki komutu başarılı oldu"),
    ("to.seen", "B'nin sonraki komutu: {what}"),
    (
        "qu.result",
        "{workers} worker {total} mesaj işledi, {dups} tekrar, {lost} kayıp; ideal {ideal} ms'ye karşı {elapsed} ms (verim {eff}); aynı anda en fazla {par} paket",
    ),
    (
        "sr.rmw",
        "{requests} isteğin her biri {stock} okudu; {sold} \"satış\"; son stok {final}: {lost} düşüş kayboldu",
    ),
    (
        "sr.guard",
        "{sold} satıldı, {rejected} reddedildi; son stok {final} ({stock} idi)",
    ),
    (
        "sr.oversell",
        "stok {stock}, {requests} istek: oku-değiştir-yaz {naive} sattı ({over} fazla); atomik koşul {guarded} sattı ve {rejected} reddetti",
    ),
    (
        "se.result",
        "son fiyat {price}, kaynak sürümü {version}; {dropped} bayat olay atıldı",
    ),
    (
        "in.audit",
        "{issued} numara verildi; {dups} mükerrer; boşluklar {gaps}; yerelde bilinmeyen {unknown}; {workers} worker ile saniyede {rate} fatura (aynı anda en fazla {par})",
    ),
    ("in.none", "yok"),
    (
        "in.priority",
        "ilk giren ilk çıkar: ondan önce {fifo_n} fatura gitti ({fifo_ms} ms); öncelikle: {prio_n} ({prio_ms} ms)",
    ),
    ("en.skipped", "atlandı: {reason}"),
    ("en.differs", "{observed} — belgelenenden farklı: {failures}"),
];

pub static SCENARIOS: &[ScenarioText] = &[
    ScenarioText {
        name: "lost-update",
        summary: "iki depo görevlisi aynı kitabın stoğundan aynı anda birer kopya düşüyor (36 var, 34 kalmalı)",
        variants: &[
            VariantText {
                name: "read-committed",
                expected: "ikisi de 36 okur ve 35 yazar; ikisi de commit eder; sonuç 35: bir düşüş kaybolur (anomali)",
                explain: "READ COMMITTED'de her komut son commit edilmiş veriyi görür, ama yeni değer uygulamada daha önceki bir okumadan hesaplandı: B, A'nın 35'inin üstüne habersizce 35 yazar. Çözüm: hesabı veritabanına bırak (quantity_on_hand - 1), okurken satırı kilitle (FOR UPDATE) ya da sürüm kontrolü yap.",
            },
            VariantText {
                name: "repeatable-read",
                expected: "B'nin UPDATE'i 40001 ile düşer (concurrent update); A tek başına 35 bırakır; sessizce kaybolan bir şey yok",
                explain: "REPEATABLE READ transaction'a tek bir snapshot verir; snapshot'tan sonra başkasının değiştirdiği satırı güncellemek üzerine yazmak yerine 40001 ile reddedilir. Kayıp yok, ama uygulama transaction'ı okumasıyla birlikte baştan tekrar etmeli.",
            },
            VariantText {
                name: "atomic-update",
                expected: "B'nin `quantity_on_hand - 1`'i A'yı bekler, sonra commit edilmiş satırı yeniden okur; sonuç 34",
                explain: "UPDATE satır kilidini alır; B'nin UPDATE'i A'yı bekler, sonra READ COMMITTED commit edilmiş sürümü yeniden okur (EvalPlanQual) ve 35'ten 1 düşer. Hesabı veritabanına bırakmak en basit çözüm.",
            },
            VariantText {
                name: "select-for-update",
                expected: "B'nin SELECT ... FOR UPDATE'i A'yı bekler, sonra 35 okur ve 34 yazar; sonuç 34",
                explain: "FOR UPDATE okurken satır kilidini alır; B'nin okuması A commit edene kadar bekler ve yeni değeri döndürür, uygulama güncel veriyle hesaplar. Bu kilitleri kısa tut, asla kullanıcının düşünme süresi boyunca değil.",
            },
            VariantText {
                name: "updated-at-token",
                expected: "token olarak updated_at: A'nın aynı saniyedeki kaydı B'nin okuduğu damgayı değiştirmez, B'nin koşullu kaydı geçer ve A'nın adresini sessizce ezer (anomali)",
                explain: "Eşzamanlılık belirteci her yazmada değişmeli. Uygulamanın damgaladığı saniye hassasiyetli bir zaman, aynı saniyedeki bir yazmadan önce ve sonra aynı kalabilir; koşullu UPDATE yine eşleşir ve üzerine yazar. Tamsayı bir sürüm (ya da xmin) kullan.",
            },
            VariantText {
                name: "field-merge",
                expected: "A adresi düzeltir, B not yazar: satır çapında tek sürüm B'ye gereksiz bir çakışma verir; alan bazında kontrol ikisinin de değişikliğini yazar",
                explain: "Satır çapında tek sürüm, farklı alanlara dokunsalar bile her iki düzenlemeyi çakıştırır. Yalnızca değişen alanları, her birini ilk okunan değere karşı kontrol ederek göndermek bağımsız değişikliklerin ikisini de yazar ve gerçek çakışmaları yine yakalar.",
            },
            VariantText {
                name: "optimistic-version",
                expected: "A'nın sürümlü UPDATE'i 1 satır, B'ninki 0 satır etkiler: çakışma B'nin yazmak istediği, okuduğu ve satırın şu anki değerleriyle bildirilir; sonuç 35",
                explain: "Satırla birlikte okunan sürüm formla taşınır ve yazma onu kontrol eder. Etkilenen satır sayısı karar verir: 0, satır okunduktan sonra birinin onu değiştirdiği demektir. Kullanıcıya ne yazmak istediğini, ne okuduğunu ve satırın şimdi ne tuttuğunu göster.",
            },
        ],
    },
    ScenarioText {
        name: "write-skew",
        summary: "iki istek bir müşteri için \"henüz bekleyen sipariş yok\" diye kontrol eder, sonra ikisi de birer sipariş ekler",
        variants: &[
            VariantText {
                name: "read-committed",
                expected: "ikisi de 0 bekleyen görür ve ekler: müşterinin 2 bekleyen siparişi olur (anomali)",
                explain: "İki kontrol de eklemelerden önce çalışır ve hiçbir ekleme diğerinin okuduğu satıra dokunmaz; bu yüzden ne bekleme ne çakışma olur: \"en fazla bir bekleyen sipariş\" kuralı delinir.",
            },
            VariantText {
                name: "repeatable-read",
                expected: "ikisi de ekler: ikisinin birden yazdığı satır yok, snapshot isolation'ın yakalayacağı bir şey yok; 2 bekleyen (anomali)",
                explain: "Snapshot isolation yalnızca aynı satıra yapılan yazma-yazma çakışmalarını yakalar. İki ekleme farklı satırlar, ikisi de commit eder: write skew.",
            },
            VariantText {
                name: "serializable",
                expected: "biri commit eder, diğeri 40001 ile düşer (transaction'lar arasında okuma/yazma bağımlılığı); 1 bekleyen",
                explain: "SSI okuma/yazma bağımlılıklarını kimseyi bekletmeyen predicate (SIRead) lock'larla izler; iki transaction tehlikeli bir döngü oluşturunca biri 40001 ile iptal edilir. Doğru sonuç retry ile gelir.",
            },
            VariantText {
                name: "serializable-retry",
                expected: "düşen istek bir bekleme sonrası transaction'ı baştan çalıştırır, bekleyen siparişi görür ve eklemez; 1 bekleyen",
                explain: "Düşen istek rastgele bir beklemeden sonra bütün transaction'ı yeniden çalıştırır; yeni kontrolü commit edilmiş bekleyen siparişi görür, hiçbir şey eklemez. Yalnızca 40001 ve 40P01'i tekrar et, okumayı da tekrar et.",
            },
            VariantText {
                name: "serializable-no-index",
                expected: "SERIALIZABLE'da farklı müşteriler: ix_orders_customer_id varken ikisi de commit eder; aynı index yaprak sayfasındaki komşular çakışır (40001); index yokken ilişki seviyesindeki predicate lock ilgisiz bir isteği düşürür (40001)",
                explain: "Predicate lock'lar planı izler: sequential scan bütün tabloyu kilitler, her ekleme her kontrolle çakışır; index scan okuduğu yaprak sayfalarını kilitler, yalnızca komşu anahtarlar çakışır. Doğru index yanlış alarmları seyrek tutar.",
            },
        ],
    },
    ScenarioText {
        name: "fk-blocking",
        summary: "A fiyatını değiştirmek için bir kitabı kilitlerken B o kitap için sipariş kalemi ekler (FK kontrolü FOR KEY SHARE alır)",
        variants: &[
            VariantText {
                name: "for-update",
                expected: "B'nin INSERT'ü FK kontrolünün FOR KEY SHARE'inde bekler, lock_timeout'ta 55P03 ile düşer (CONTEXT FOR KEY SHARE der)",
                explain: "order_items üzerindeki foreign key kontrolü kitapta FOR KEY SHARE alır. FOR UPDATE bununla çakışır, sipariş kalemi eklemek fiyat değişikliğini bekler. Anahtarı değiştirmiyorsan FOR NO KEY UPDATE ile kilitle.",
            },
            VariantText {
                name: "for-no-key-update",
                expected: "B'nin INSERT'ü beklemeden tamamlanır: FOR NO KEY UPDATE, FOR KEY SHARE ile çakışmaz",
                explain: "Sıradan bir UPDATE'in aldığı mod olan FOR NO KEY UPDATE, FOR KEY SHARE ile çakışmaz: fiyat değişirken kitabın siparişleri geçer.",
            },
        ],
    },
    ScenarioText {
        name: "deadlock",
        summary: "A ve B ikişer stok satırı günceller; ters sırada deadlock dedektörü birini iptal eder",
        variants: &[
            VariantText {
                name: "reverse-order",
                expected: "deadlock_timeout sonrası biri 40P01 alır (DETAIL: kim kimi bekliyor); onun COMMIT'i ROLLBACK döner; diğeri commit eder",
                explain: "Her oturum bir satırı tutar ve diğerininkini bekler. deadlock_timeout sonrası bekleyen backend deadlock dedektörünü çalıştırır, döngüyü bulur ve bir transaction'ı iptal eder (40P01); o transaction iptal edildiği için COMMIT'i ROLLBACK olur. Satırları her yerde aynı sırada kilitle (ör. book_id sırasıyla).",
            },
            VariantText {
                name: "same-order",
                expected: "ikisi de book_id sırasıyla kilitler: B yalnızca A'yı bekler; deadlock yok; ikisi de commit eder",
                explain: "Aynı sırada kilitlemek döngüyü bir kuyruğa çevirir: B yalnızca A'yı bekler, sonra devam eder.",
            },
        ],
    },
    ScenarioText {
        name: "nowait",
        summary: "A bir siparişi FOR UPDATE ile tutuyor (biri düzenliyor); B beklemeden ister",
        variants: &[
            VariantText {
                name: "nowait",
                expected: "B'nin FOR UPDATE NOWAIT'i hemen 55P03 ile düşer: \"bu kayıt şu an başkası tarafından düzenleniyor\"",
                explain: "NOWAIT, hemen alınamayan satır kilidini beklemek yerine hataya (55P03) çevirir: \"bu kaydı başkası düzenliyor\" uyarısı için doğru araç.",
            },
            VariantText {
                name: "skip-locked",
                expected: "B'nin FOR UPDATE SKIP LOCKED'ı hemen, hatasız, hiç satır döndürmez",
                explain: "SKIP LOCKED hemen kilitleyemediği satırları sessizce atlar: kuyruk için doğru, kullanıcının istediği tek kayıt için yanlış.",
            },
        ],
    },
    ScenarioText {
        name: "advisory-lock",
        summary: "gece stok senkronizasyonunun üç örneği birlikte başlar; bir advisory lock birini çalıştırır",
        variants: &[
            VariantText {
                name: "try-xact-lock",
                expected: "pg_try_advisory_xact_lock'u tam olarak bir örnek alır ve çalışır, ikisi atlar; kilit transaction'la gider, sonraki çalıştırma alır",
                explain: "Advisory lock, uygulamanın seçtiği bir sayı üzerindeki kilittir. pg_try_advisory_xact_lock beklemez ve bağlantı kopsa bile transaction'la birlikte kaybolur: alan çalışır, diğerleri atlar.",
            },
            VariantText {
                name: "session-lock-pooled",
                expected: "havuzdaki bir bağlantıda kalan oturum seviyesi kilit, hiçbir şey çalışmazken sonraki çalıştırmayı atlatır; havuzun sıfırlamasından (pg_advisory_unlock_all) sonra çalıştırma devam eder",
                explain: "Oturum seviyesi advisory lock bağlantı yaşadıkça yaşar. Havuzda bağlantı işten uzun yaşar, kilit de öyle, sonraki çalıştırmayı atlatır. Açıkça bırak, havuz bağlantılarını sıfırla (DISCARD ALL) ya da transaction seviyesi kilidi kullan.",
            },
        ],
    },
    ScenarioText {
        name: "ddl-lock-queue",
        summary: "A'nın uzun raporu books'u tutar; B'nin ALTER TABLE'ı ACCESS EXCLUSIVE için sıraya girer; C'nin sade SELECT'i B'nin arkasına girer",
        variants: &[
            VariantText {
                name: "no-lock-timeout",
                expected: "C (A ile çakışmadığı hâlde) B tarafından, B de A tarafından rapor bitene kadar bekletilir",
                explain: "ALTER TABLE ACCESS EXCLUSIVE ister ve raporun ACCESS SHARE'inin arkasında bekler. Kilit istekleri sırayla kuyruğa girer, C'nin zararsız okuması ALTER'ın arkasında bekler: tek bir migration tablodaki bütün trafiği durdurur.",
            },
            VariantText {
                name: "lock-timeout-retry",
                expected: "B kısa bir lock_timeout verir, 55P03 ile düşer ve ara verir: C en fazla o kadar bekler; A bitince B'nin tekrarı başarılı olur",
                explain: "Kısa bir lock_timeout ile migration kuyruktaki yerini bırakır, okuyanlar devam eder, migration sonra tekrar dener. Migration'lara her zaman lock_timeout ver.",
            },
        ],
    },
    ScenarioText {
        name: "rc-recheck",
        summary: "hits = hits + 1'e karşı DELETE ... WHERE hits = 10 (PostgreSQL belgelerindeki örnek)",
        variants: &[
            VariantText {
                name: "read-committed",
                expected: "B'nin DELETE'i A'yı bekler, güncellenmiş satırı (hits = 11) yeniden kontrol eder ve hiçbir şey silmez (anomali)",
                explain: "Bekleyen DELETE, WHERE'ini A'nın commit ettiği satır sürümüne karşı yeniden değerlendirir (EvalPlanQual). hits artık 11, hiçbir şey eşleşmez; oysa her oturumun kendi bakışından hits = 10 önce de sonra da vardı.",
            },
            VariantText {
                name: "repeatable-read",
                expected: "B'nin DELETE'i A'yı bekler, sonra sessizce hiçbir şey silmemek yerine 40001 ile düşer",
                explain: "REPEATABLE READ'de DELETE, snapshot'ından sonra değişmiş bir satıra dokunamaz: sessizce hiçbir şey silmemek yerine 40001 ile düşer ve uygulama tekrar eder.",
            },
        ],
    },
    ScenarioText {
        name: "timeouts",
        summary: "lock_timeout, statement_timeout, idle_in_transaction_session_timeout ve transaction_timeout",
        variants: &[
            VariantText {
                name: "lock-timeout",
                expected: "B'nin UPDATE'i A'nın satır kilidini bekler, sonra 55P03 ile düşer; ROLLBACK sonrası B hiç kilit tutmaz",
                explain: "lock_timeout bir komutun kilit için ne kadar bekleyeceğini sınırlar (55P03). Komut düşer; transaction geri alınmalı, bu da tuttuklarını bırakır.",
            },
            VariantText {
                name: "statement-timeout",
                expected: "B'nin uzun komutu 57014 ile iptal edilir; hata B'nin transaction'ını hemen iptal eder ve satır kilidini bırakır (A beklemez), ama B yine de ROLLBACK demeli (o zamana kadar 25P02)",
                explain: "statement_timeout çok uzun süren bir komutu iptal eder (57014). Hata transaction'ı hemen iptal eder ve kilitlerini bırakır; oturum yine de ROLLBACK demeli (o zamana kadar 25P02).",
            },
            VariantText {
                name: "idle-in-transaction",
                expected: "satır kilidi tutarak transaction içinde boşta bekleyen B'yi sunucu sonlandırır; o satırı bekleyen A devam eder; B'nin sonraki komutu bağlantıyı kopmuş bulur",
                explain: "idle_in_transaction_session_timeout açık bir transaction'da oturup kalan oturumu sonlandırır; sonsuza dek tutulan kilitlerin ve geride kalan VACUUM'un olağan sebebi budur. Sunucu oturumu bitirir, kilitleri bırakılır.",
            },
            VariantText {
                name: "transaction-timeout",
                expected: "PostgreSQL 17+: B'nin transaction'ı transaction_timeout'ta sunucu tarafından sonlandırılır, A'nın beklediği satır serbest kalır (eski sunucularda atlanır)",
                explain: "transaction_timeout (PostgreSQL 17 ve sonrası) meşgul ya da boşta bütün bir transaction'ı sınırlar; sınırda sunucu oturumu bitirir ve kilitleri gider.",
            },
        ],
    },
    ScenarioText {
        name: "queue",
        summary: "outbox relay: worker'lar mesaj paketlerini FOR UPDATE ya da FOR UPDATE SKIP LOCKED ile alır",
        variants: &[
            VariantText {
                name: "for-update",
                expected: "tekrar yok, kayıp yok, ama worker'lar aynı satırlar için sıraya girer: paketler birer birer işlenir (süre ceil(mesaj/paket) x iş civarında)",
                explain: "Her worker aynı ilk satırları ister, biri hariç hepsi satır kilitlerinde bekler. Tutan commit edince bekleyenler satırları yeniden kontrol eder (EvalPlanQual), işlenmişleri atlar ve sonrakileri kilitler: iş birer paket ilerler.",
            },
            VariantText {
                name: "skip-locked",
                expected: "tekrar yok, kayıp yok, iş bütün worker'lara dağılır, paketler paralel işlenir (verim 1'e yakın)",
                explain: "SKIP LOCKED her worker'ın başka worker'ın tuttuğu satırları atlayıp sıradaki boş paketi almasını sağlar: bekleme yok, tekrar yok, iş bütün worker'lara dağılır.",
            },
        ],
    },
    ScenarioText {
        name: "stock-race",
        summary: "S stoğa karşı R eşzamanlı \"bir tane al\" isteği (varsayılan 100 ve 100): tam olarak R düşülmeli",
        variants: &[
            VariantText {
                name: "read-modify-write",
                expected: "her istek S okur ve S - 1 yazar: R isteğin hepsi \"başarılı\" ama stok 1 düşer; R - 1 düşüş kaybolur (anomali)",
                explain: "Her istek stok - 1'i aynı okumadan hesapladı; yazmalar satır kilidinde sıraya girdi ama her biri kendi bayat değerini yazdı. Yarış uygulamanın okuması ile yazması arasında.",
            },
            VariantText {
                name: "atomic-guard",
                expected: "UPDATE ... SET stock = stock - 1 WHERE stock >= 1: tam olarak R satılır, sonuç S - R",
                explain: "Tek komut satır kilidi altında okur ve yazar, WHERE koşulu bekledikten sonra stoğu yeniden kontrol eder: etkilenen satır sayısı bu isteğin bir kopya alıp almadığını söyler.",
            },
            VariantText {
                name: "oversell",
                expected: "stok 90, 100 istek: oku-değiştir-yaz 90'dan fazla satar; atomik koşul tam 90 satar ve 10'u reddeder",
                explain: "Oku-değiştir-yaz stoğu bayat bir okumayla kontrol eder, olmayan kopyaları satar; koşullu UPDATE kilit altında yeniden kontrol eder ve fazlasını reddeder.",
            },
        ],
    },
    ScenarioText {
        name: "stale-event",
        summary: "ERP'nin v1 ve v2 fiyat değişiklikleri ters sırada gelir (önce v2)",
        variants: &[
            VariantText {
                name: "no-version-check",
                expected: "son gelen mesaj kazanır: bayat v1, v2'nin üstüne yazar (anomali)",
                explain: "Mesajlar herhangi bir sırada gelir; her birini körü körüne uygulamak gecikmiş eski bir mesajın eski veriyi geri getirmesine izin verir.",
            },
            VariantText {
                name: "version-check",
                expected: "UPDATE ... WHERE source_version < gelen: v2 uygulanır, bayat v1 atılır ve sayılır",
                explain: "Sürüm mesajın içinde taşınır ve güncelleme yalnızca satırdakinden yeniyse uygulanır; eski mesajlar atılır ve sayılır.",
            },
        ],
    },
    ScenarioText {
        name: "invoice-numbering",
        summary: "paralel worker'lar yavaş ve hata veren bir entegratöre gönderirken boşluksuz fatura numaraları",
        variants: &[
            VariantText {
                name: "max-plus-one",
                expected: "gönderimde MAX(invoice_no) + 1: iki worker aynı numarayı alır; entegratör ikinciyi mükerrer diye reddeder (anomali)",
                explain: "MAX()+1 başkalarının henüz yazmadığını okur: iki worker aynı en büyük değeri görür ve aynı numarayı alır; entegratör ikinciyi mükerrer diye reddeder.",
            },
            VariantText {
                name: "enqueue-time",
                expected: "numara kuyruğa girerken verilir: kalıcı olarak reddedilen ya da kuyruktayken iptal edilen faturalar boşluk bırakır (anomali)",
                explain: "Fatura kuyruğa girerken verilen numara, fatura sonra kalıcı olarak reddedilir ya da iptal edilirse kaybolur: seride boşluk.",
            },
            VariantText {
                name: "sequence",
                expected: "gönderimde nextval(): başarısız gönderim geri alınır ama değer gitmiştir: boşluk (anomali)",
                explain: "nextval() tasarım gereği asla geri alınmaz: her başarısız gönderim bir numara yakar. Sequence anahtarlar içindir, boşluksuz yasal numaralar için değil.",
            },
            VariantText {
                name: "lock-over-call",
                expected: "sayaç satırı dış çağrı boyunca FOR UPDATE ile kilitli: mükerrer yok, boşluk yok, ama worker sayısı ne olursa olsun her gecikmede bir fatura",
                explain: "Sayaç satırının kilidini dış çağrı boyunca tutmak seriyi boşluksuz tutar ama bütün worker'ları tek bir entegratör çağrısının arkasına dizer: gecikme başına yaklaşık bir fatura.",
            },
            VariantText {
                name: "jit-reservation",
                expected: "kısa bir transaction numarayı çağrıdan hemen önce ayırır; hata numarayı korur, tekrarlar aynı numarayı kullanır: mükerrer yok, boşluk yok, gönderimler paralel",
                explain: "Kısa bir transaction numarayı çağrıdan hemen önce ayırır ve commit eder; çağrı hiçbir kilit tutmadan yapılır; başarısız fatura numarasını korur ve tekrarları aynı numarayı kullanır.",
            },
            VariantText {
                name: "orphan-recovery",
                expected: "entegratör kabul ettikten sonra (ve çağrılmadan önce) çöken jit-reservation: tarama entegratöre sorar, aynı numarayla onarır ya da yeniden gönderir, arada bir circuit breaker; mükerrer yok, boşluk yok",
                explain: "Bir worker entegratörün evet'i ile yerel kayıt arasında ölünce fatura numarasıyla SENDING'de kalır. Tarama entegratöre o numarayı sorar: oradaysa onarır, değilse aynı numarayla yeniden gönderir; circuit breaker durmadan hata veren entegratöre yüklenmeyi keser.",
            },
            VariantText {
                name: "priority",
                expected: "zamanlayıcı paketinin arkasında kuyruğa giren tek bir etkileşimli fatura: öncelik sıralamasıyla ilk paketlerde, onsuz bütün paketten sonra gönderilir",
                explain: "Kuyruktan alma sırasında öncelik olunca etkileşimli fatura zamanlayıcı paketini geçer; numaralandırma değişmez, yalnızca sıra değişir.",
            },
        ],
    },
];
