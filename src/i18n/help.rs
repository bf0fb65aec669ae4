//! The command line's help in Turkish, by key: `cmd.<command>` (its about),
//! `after.<command>`, `arg.<command>.<id>` or, for every command, `arg.<id>`.
//! English help is written on the clap types (src/cli.rs); scenario
//! commands and their options take theirs from the catalogue.
pub static HELP_TR: &[(&str, &str)] = &[
    (
        "cmd.lab",
        "PostgreSQL eşzamanlılık anomalilerini istendiğinde, çözümleriyle yan yana oluşturur ve sunucunun belgelendiği gibi davranıp davranmadığını söyler.",
    ),
    (
        "after.lab",
        "Veritabanı verilmezse lab, bu makinede bulduğu programlarla geçici bir PostgreSQL başlatır ve sonra kaldırır.\nÇıkış kodları: 0 her varyant belgelenen sonucu gösterdi, 1 en az biri göstermedi, 2 çalıştırılamadı, 130 kesildi.",
    ),
    ("cmd.list", "Her senaryoyu tek satırlık özeti ve varyantlarıyla listele"),
    (
        "cmd.all",
        "Bütün senaryoları çalıştır (aynı anda 4; katalog sırasıyla raporlanır), sonra tek bir özet tablo yazdır",
    ),
    (
        "cmd.server",
        "Geçici PostgreSQL'i lab şemasıyla başlat ve Ctrl-C'ye kadar açık tut",
    ),
    (
        "cmd.locks",
        "Canlı kilit görünümü: bir sunucudaki lab oturumları, kim kimi bekliyor, yenilenerek",
    ),
    (
        "cmd.spec",
        "isolationtester spec dosyalarını (PostgreSQL'in izolasyon testi biçimi) paralel çalıştır",
    ),
    (
        "after.spec",
        "Her spec kendi yeni veritabanında çalışır: template0'dan oluşturulur, sonra silinir; veritabanı oluşturamayan bir rol (ya da --in-database) onları isolationtester'daki gibi verilen veritabanında birer birer çalıştırır.\n--inputdir/--outputdir/--expecteddir (ya da pg_isolation_regress'in başka bir seçeneği) ile lab pg_regress'in düzenini yazar (results/, regression.diffs, regression.out) ve onun satırlarını basar; bir Makefile'ın pg_isolation_regress satırı lab spec ile değiştirilmeden çalışır.\nÇıkış kodları: 0 her permütasyon sonuna kadar çalıştı (ve beklenen dosyasıyla aynı), 1 biri çalışmadı, 2 çalıştırılamadı (ayrıştırılamayan bir spec, sunucu yok).",
    ),
    (
        "arg.spec.paths",
        "Spec dosyaları ya da onları tutan dizinler (içindeki her *.spec)",
    ),
    (
        "arg.spec.schedule",
        "Bir pg_regress schedule dosyasının listelediği testleri de çalıştır (`test: a b c` satırları); AD, schedule'ın yanındaki specs/AD.spec (ya da AD.spec) dosyasından okunur",
    ),
    (
        "arg.spec.format",
        "Çıktı biçimi (isolation: PostgreSQL'in isolationtester'ının yazdığının aynısı)",
    ),
    (
        "arg.spec.expected",
        "Çıktıyı bu beklenen dosyayla karşılaştır (yalnızca tek spec)",
    ),
    (
        "arg.spec.expected_dir",
        "Her spec'in çıktısını DIR/AD.out (ya da pg_regress'in kabul ettiği gibi AD_0.out ... AD_9.out) ile karşılaştır; fark birleşik diff olarak yazılır ve çıkış kodu 1 olur",
    ),
    (
        "arg.spec.jobs",
        "Aynı anda çalışan spec sayısı, her biri kendi veritabanında (varsayılan: çekirdek sayısı; --repeat ile 1)",
    ),
    (
        "arg.spec.junit",
        "Ayrıca FILE dosyasına bir JUnit XML raporu yaz (spec ve permütasyon başına bir test case)",
    ),
    (
        "arg.spec.html",
        "Ayrıca FILE dosyasına kendi içinde tam bir HTML raporu yaz (permütasyon başına bir swimlane diyagramı)",
    ),
    (
        "arg.spec.wait_timeout",
        "Bir adım için saniye cinsinden son süre: o zaman hâlâ çalışan adım iptal edilir, isolationtester'ın PGISOLATIONTIMEOUT'tan sonra yaptığı gibi (bu verilmezse PGISOLATIONTIMEOUT belirler; yoksa 10, pg_isolation_regress'in seçenekleriyle isolationtester'ınki gibi 300)",
    ),
    (
        "arg.spec.in_database",
        "Spec'leri her biri için yeni bir veritabanı yerine, isolationtester'daki gibi verilen veritabanında (URL'ninki ya da --dbname) birer birer çalıştır; bir spec'in geride bıraktıkları adıyla bildirilir. Veritabanı oluşturamayan bir rol için varsayılan",
    ),
    (
        "arg.spec.dbname",
        "Spec'lerin birer birer çalıştığı veritabanı: lab onu pg_regress'in yaptığı gibi oluşturur ve sonra siler; --use-existing (--in-database) ile var olan bir veritabanı",
    ),
    (
        "arg.spec.use_existing",
        "pg_regress'in --use-existing'i: verilen veritabanında olduğu gibi çalıştır (--in-database ile aynı)",
    ),
    (
        "arg.spec.clean",
        "Verilen veritabanında bir spec'in geride bıraktıklarını sil (tam olarak onun oluşturduklarını, önceden var olanı asla) ve devam et",
    ),
    (
        "arg.spec.inputdir",
        "pg_regress'in --inputdir'i: komut satırında ya da schedule'da adı geçen testler DIR/specs/AD.spec dosyalarıdır",
    ),
    (
        "arg.spec.expecteddir",
        "pg_regress'in --expecteddir'i: beklenen dosyalar DIR/expected/AD.out (varsayılan: --inputdir)",
    ),
    (
        "arg.spec.outputdir",
        "pg_regress'in --outputdir'i: results/AD.out, regression.diffs ve regression.out DIR içine yazılır (varsayılan: .)",
    ),
    (
        "arg.spec.bindir",
        "Geçici kümenin initdb ve postgres programlarının yeri (pg_regress oradan psql çalıştırır; lab'ın psql'e ihtiyacı yok)",
    ),
    (
        "arg.spec.host",
        "HOST üzerinde çalışan sunucuyu kullan (pg_regress'in PGHOST'u)",
    ),
    (
        "arg.spec.port",
        "PORT'taki sunucuyu kullan (pg_regress'in PGPORT'u); --temp-instance ile lab boş bir portu kendisi seçer",
    ),
    ("arg.spec.user", "USER olarak bağlan (pg_regress'in PGUSER'ı)"),
    (
        "arg.spec.temp_instance",
        "Ortam ne derse desin lab'ın kendi geçici kümesinde çalış (lab onu DIR'de değil kendi dizininde tutar ve sonra kaldırır)",
    ),
    (
        "arg.spec.temp_config",
        "FILE'ı geçici kümenin postgresql.conf dosyasının sonuna ekle (tekrarlanabilir)",
    ),
    (
        "arg.spec.no_locale",
        "lab'ın oluşturduğu veritabanları C yerel ayarını kullanır (LC_COLLATE ve LC_CTYPE 'C')",
    ),
    (
        "arg.spec.encoding",
        "lab'ın oluşturduğu veritabanları bu kodlamayla oluşturulur (oturumlar yine UTF8 konuşur)",
    ),
    (
        "arg.spec.load_extension",
        "lab'ın oluşturduğu her veritabanında bu eklenti için CREATE EXTENSION IF NOT EXISTS (tekrarlanabilir)",
    ),
    (
        "arg.spec.max_connections",
        "Bir schedule grubunun testlerinden aynı anda en çok N tane (pg_regress'in yazdığı gibi yazılır: \"in groups of N\")",
    ),
    (
        "arg.spec.max_concurrent_tests",
        "N testten büyük bir schedule grubu, pg_regress'in reddettiği gibi reddedilir",
    ),
    (
        "arg.spec.create_role",
        "LOGIN ve lab'ın oluşturduğu her veritabanında bütün yetkileri olan roller (virgülle ayrılmış); olmayan oluşturulur ve sonra silinir (var olan olduğu gibi kullanılır)",
    ),
    (
        "arg.spec.dlpath",
        "Kabul edilir; pg_regress onu yalnızca psql testlerine verir, lab bunları çalıştırmaz",
    ),
    (
        "arg.spec.launcher",
        "Reddedilir: lab spec'leri kendisi çalıştırır, başlatacağı bir şey yok",
    ),
    (
        "arg.spec.repeat",
        "Her spec'i N kez çalıştır (--jobs verilmedikçe birer birer) ve çıktısı çalıştırmadan çalıştırmaya değişen permütasyonları, her çıktının ne sıklıkla geldiğiyle bildir",
    ),
    (
        "arg.spec.load",
        "Spec'ler çalışırken her çekirdeği meşgul tut, yüklü bir CI makinesinin yapacağı gibi",
    ),
    (
        "arg.spec.baseline",
        "Beklenen çıktı yerine daha önceki bir çalıştırmanın JSON'uyla (`--format json`) karşılaştır: çıkış kodu yalnızca bir hüküm, bir bekleme, bir SQLSTATE ya da sayılan bir metrik farklıysa 1 olur",
    ),
    (
        "arg.spec.explain",
        "Her permütasyondan sonra, spec'in adımlarından önceki yorumlar",
    ),
    (
        "arg.spec.step",
        "Atölye modu: her adımdan önce oturumunu ve SQL'ini göster ve Enter'ı bekle (terminal gerekir; spec'leri birer birer çalıştırır)",
    ),
    (
        "cmd.phenomena",
        "Anomali matrisi (dirty write ... write skew), her izolasyon seviyesinde sunucuda ölçülerek",
    ),
    (
        "arg.phenomena.show",
        "Bu fenomenin her seviyedeki zaman çizelgelerini de yazdır (kimliği: g0, p4, g2-item, ...)",
    ),
    (
        "arg.phenomena.level",
        "Yalnızca bu seviye (tekrarlanabilir): read-uncommitted, read-committed, repeatable-read, serializable",
    ),
    ("arg.phenomena.explain", "Matristen sonra her fenomenin ne olduğu"),
    (
        "arg.phenomena.jobs",
        "Aynı anda çalışan hücre sayısı, her biri kendi şemasında (varsayılan: çekirdek başına 4)",
    ),
    ("arg.phenomena.wait_timeout", "Bir adım için saniye cinsinden son süre"),
    (
        "arg.phenomena.baseline",
        "Belgelerle değil, daha önceki bir çalıştırmanın JSON'uyla (`lab phenomena --format json`) karşılaştır: çıkış kodu yalnızca bir hücrenin hükmü, beklemesi ya da SQLSTATE'i farklıysa 1 olur",
    ),
    (
        "arg.phenomena.junit",
        "Ayrıca FILE dosyasına bir JUnit XML raporu yaz (hücre başına bir test case)",
    ),
    (
        "arg.phenomena.html",
        "Ayrıca FILE dosyasına kendi içinde tam bir HTML raporu yaz (renkli ızgara olarak matris, her hücrenin swimlane'leri)",
    ),
    (
        "arg.phenomena.lab_dir",
        "Fenomenleri DIR içindeki düzenlenmiş kopyalardan çalıştır (DIR/phenomena/<kimlik>.spec); DIR'de olmayan dosya lab'ın kendi kopyasından gelir",
    ),
    (
        "arg.phenomena.all_interleavings",
        "Her hücrenin adımlarının her iç içe geçişini de çalıştır (lab explore gibi): her hücre, kendi iç içe geçişinin kararının yanında anomalinin kaçında oluştuğunu, kaçının beklediğini ve kaçının iptal edildiğini söyler",
    ),
    (
        "arg.predict",
        "--step ile: önce tahmin. Her istem ifadenin ne yapacağını sorar (hemen çalışır, kimi bekler, hangi hatayla başarısız olur, hangi değer), sonra tahmini sunucunun yaptığının yanında bir sayımla gösterir",
    ),
    (
        "cmd.compare",
        "Çalıştırmalar yan yana (sürümler, sağlayıcılar): her varyantın çalıştırma başına hükmü, beklemeleri ve SQLSTATE'leri, ve nerede farklı oldukları",
    ),
    (
        "after.compare",
        "Her FILE tek türden bir çalıştırmanın JSON'udur: `lab all --format json` (ya da bir senaryonunki, ya da `lab spec`'inki) veya `lab phenomena --format json`. Her varyant (her fenomen ve seviye) bir satır, her çalıştırma sunucusunun sürümüyle başlıklı bir sütun; `differs` neyin (çalışıp çalışmadığı, hüküm, anomali, beklemeler, SQLSTATE'ler, sayılan metrikler) hangi sunucularda farklı olduğunu söyler.\nÇıkış kodları: 0 karşılaştırıldı, 2 okunamadı.",
    ),
    (
        "arg.compare.files",
        "Çalıştırmaların JSON dosyaları, sütunlarının sırasıyla (iki ya da daha fazla)",
    ),
    (
        "arg.compare.format",
        "Çıktı biçimi (markdown: bir README ya da issue için tablo)",
    ),
    (
        "arg.compare.differences",
        "Yalnızca çalıştırmaların farklı olduğu satırlar",
    ),
    (
        "cmd.shell",
        "Tek bir terminalde birkaç oturum: beklemeler sunucu onayladıkça canlı gösterilir, çalışanlar bir spec olarak kaydedilir",
    ),
    (
        "after.shell",
        "İfadeler ';' ile biter ve geçerli oturuma gider; `B: <sql>;` birini B'ye gönderir. Bekleyen bir ifade istemi hemen geri verir, kimi beklediğiyle birlikte; cevabı geldiğinde yazılır. \\? komutları listeler (\\s B, \\timeline, \\locks, \\save FILE.spec, \\run STEP, \\predict); Ctrl-C geçerli oturumun ifadesini iptal eder; \\q ya da Ctrl-D çıkar.",
    ),
    (
        "arg.shell.sessions",
        "Oturumlar, her biri kendi bağlantısında (varsayılan A,B)",
    ),
    (
        "arg.shell.spec",
        "Bir spec yükle: setup'ı çalıştırılır, oturumları kabuğun oturumları olur, `\\run STEP` adımlarını çalıştırır",
    ),
    (
        "arg.shell.predict",
        "Önce tahmin: her ifadeden önce ne yapacağını söyleyin; sonunda bir sayım",
    ),
    (
        "cmd.hunt",
        "Kimsenin yazmadığı anomalileri bul: rastgele list-append işlemleri, geçmişlerinin denetimi, her birini yeniden oynatan bir spec",
    ),
    (
        "after.hunt",
        "C oturum, bir list-append tablosunun K anahtarı üzerinde üretilmiş işlemler çalıştırır (okuma SELECT v, ekleme INSERT ... ON CONFLICT DO UPDATE SET v = v || x; her eklenen öğe tektir); aynı seed aynı işlemleri verir. Geçmiş Elle'in list-append denetimiyle denetlenir: okumaların döndürdüğünden çıkarılan ww, wr ve rw bağımlılıkları, G0, G1c, G-single, G-nonadjacent, G2-item olarak sınıflanan döngüler ve G1a, G1b, kayıp ve kirli güncellemeler, çöp, gelecekten ve iç tutarsız okumalar. Her düzey PostgreSQL'in belgelediği modele göre değerlendirilir: READ COMMITTED read committed'a (G0, G1a, G1b, G1c yasak); REPEATABLE READ snapshot isolation'a (G-single, G-nonadjacent, kayıp güncellemeler de); SERIALIZABLE serializability'ye (her döngü). Bulunan her döngü için lab onu yeniden oynatan bir isolationtester spec'i yazar, oynatır ve denetleyicinin anomaliyi yeniden görüp görmediğini söyler.\nÇıkış kodları: 0 hiçbir düzeyin yasakladığı anomali yok, 1 yasak bir anomali (ya da istendiği gibi okunmayan bir düzey), 2 çalıştırılamadı, 130 kesildi (o ana kadarki geçmiş denetlenir).",
    ),
    (
        "arg.hunt.level",
        "read-uncommitted, read-committed, repeatable-read, serializable ya da all (varsayılan: PostgreSQL'de farklı davranan üç düzey; tekrarlanabilir)",
    ),
    (
        "arg.hunt.keys",
        "Aynı anda oyundaki anahtar sayısı (bir anahtar 32 ekleme alır, sonra yerini yeni bir anahtar alır)",
    ),
    ("arg.hunt.clients", "Aynı anda işlem çalıştıran oturum sayısı"),
    ("arg.hunt.txns", "Düzey başına işlem sayısı (varsayılan 2000)"),
    (
        "arg.hunt.seconds",
        "Her düzeyi bir işlem sayısı yerine S saniye çalıştır",
    ),
    ("arg.hunt.seed", "İşlemlerin üretildiği seed"),
    ("arg.hunt.ops", "İşlem başına en çok işlem adımı"),
    (
        "arg.hunt.max_connections",
        "Çalıştırmanın kullanabileceği en çok bağlantı, kontrol bağlantısı dahil",
    ),
    (
        "arg.hunt.history",
        "Geçmişi JSON satırları olarak FILE dosyasına yaz (birden çok düzeyde her biri FILE.DÜZEY.jsonl)",
    ),
    (
        "arg.hunt.check",
        "Kaydedilmiş bir geçmişi (lab'ın JSON satırları ya da Jepsen'in history.edn dosyası) sunucusuz denetle",
    ),
    (
        "arg.hunt.realtime",
        "İşlemleri gerçek zamana göre de sırala (biri öteki başlamadan bitti)",
    ),
    (
        "arg.hunt.session_order",
        "Her oturumun işlemlerini çalıştırdığı sırayla da sırala",
    ),
    (
        "arg.hunt.all_cycles",
        "Sınıf başına bir değil, her güçlü bağlı bileşenin her döngü sınıfı",
    ),
    ("arg.hunt.specs", "Yeniden üreticilerin yazılacağı dizin"),
    ("arg.hunt.no_specs", "Yeniden üretici yazma"),
    ("arg.hunt.replays", "Her yeniden üreticinin kaç kez oynatılacağı"),
    (
        "arg.hunt.no_shrink",
        "Yeniden üreticide döngünün işlemlerinin her adımını tut",
    ),
    ("arg.hunt.format", "Çıktı biçimi"),
    (
        "arg.hunt.junit",
        "Ayrıca FILE dosyasına bir JUnit XML raporu yaz (anomali sınıfı ve düzey başına bir test case)",
    ),
    (
        "arg.hunt.html",
        "Ayrıca FILE dosyasına kendi içinde tam bir HTML raporu yaz (her anomalinin döngüsü, işlemlerinin swimlane'lerinin yanında)",
    ),
    ("arg.hunt.wait_timeout", "Bir ifade için saniye cinsinden son süre"),
    (
        "cmd.explore",
        "Bir spec'in her iç içe geçişi, her izolasyon seviyesinde, ne olduğuna göre gruplanmış",
    ),
    (
        "after.explore",
        "Permütasyon listelemeyen bir spec, adımlarının isolationtester'ın ürettiği her iç içe geçişini alır; listeleyen bir spec onları çalıştırır, --all-permutations ile de listelenen her permütasyonun adımlarının her iç içe geçişini (son okuması, öncesinde bir şey yapmayan son oturum, sonda kalır). Bir lab senaryosu ya da fenomeni her iç içe geçişiyle keşfedilir. Her koşu bir imza alır (kim kimi bekledi, hangi adım hangi SQLSTATE ile bitti, son okumalar ne döndü ya da `# occurs-if:` tuttu mu); aynı imzalı koşular bir sınıf oluşturur.\nÇıkış kodları: 0 her seviye çalıştı (ve spec'in `# expect:` satırının belgelediği gibi), 1 bir seviye belgelendiği gibi değil, 2 çalıştırılamadı.",
    ),
    (
        "arg.explore.target",
        "Bir spec dosyası ya da spec'i olan bir lab senaryosu (write-skew) veya bir fenomen (g2-item)",
    ),
    (
        "arg.explore.level",
        "Yalnızca bu seviye (tekrarlanabilir): read-uncommitted, read-committed, repeatable-read, serializable ya da all (varsayılan)",
    ),
    (
        "arg.explore.all_permutations",
        "Spec permütasyon listeliyorsa: onların yerine adımlarının her iç içe geçişi",
    ),
    (
        "arg.explore.sample",
        "Rastgele seçilmiş N iç içe geçiş çalıştır (aynı --seed için aynı N)",
    ),
    ("arg.explore.seed", "--sample'ın tohumu"),
    (
        "arg.explore.jobs",
        "Aynı anda çalışan permütasyon sayısı, her işçi kendi şemasında (varsayılan: çekirdek başına 2)",
    ),
    (
        "arg.explore.format",
        "Çıktı biçimi (isolation: isolationtester'ın spec için, kendi seviyesinde yazdırdığı)",
    ),
    (
        "arg.explore.junit",
        "Ayrıca FILE dosyasına bir JUnit XML raporu yaz (seviye başına bir test case)",
    ),
    (
        "arg.explore.html",
        "Ayrıca FILE dosyasına kendi içinde tam bir HTML raporu yaz (her seviyenin sınıfları, her biri temsilcisinin swimlane'leriyle)",
    ),
    ("arg.explore.wait_timeout", "Bir adım için saniye cinsinden son süre"),
    (
        "arg.explore.step",
        "Atölye modu: keşiften sonra bir sınıfın temsilcisini yeniden çalıştır, her adımı göster ve Enter'ı bekle (terminal ve tek seviye gerekir)",
    ),
    (
        "arg.explore.class",
        "--step'in adım adım yürüttüğü sınıf (1: en büyüğü)",
    ),
    (
        "arg.lab_dir",
        "Senaryoları DIR içindeki lab dosyalarının (spec ve SQL) düzenlenmiş kopyalarından çalıştır; DIR'de olmayan dosya lab'ın kendi kopyasından gelir",
    ),
    (
        "arg.explore.lab_dir",
        "lab'ın spec'lerini DIR içindeki düzenlenmiş kopyalardan al (DIR'de olmayan dosya lab'ın kendi kopyasından gelir)",
    ),
    ("cmd.completions", "Kabuk tamamlamalarını yazdır"),
    (
        "arg.lang",
        "lab'ın söylediği her şeyin dili (varsayılan: LC_ALL/LC_MESSAGES/LANG'den, yoksa İngilizce)",
    ),
    ("arg.list.explain", "Her varyantın açıklamasıyla"),
    (
        "arg.variants",
        "Yalnızca bu varyantı çalıştır (tekrarlanabilir); `lab all` ile SENARYO ya da SENARYO/VARYANT",
    ),
    ("arg.format", "Çıktı biçimi"),
    (
        "arg.explain",
        "Her varyanttan sonra ne olduğunu, nedenini ve çözümünü açıkla",
    ),
    (
        "arg.step",
        "Atölye modu: her adımdan önce hangi oturumun hangi komutu neden çalıştıracağını göster ve Enter'ı bekle (terminal gerekir)",
    ),
    (
        "arg.jobs",
        "`lab all`: aynı anda çalışan senaryo sayısı, her biri kendi şemasında (replica geçici sunucuda kendi veritabanında, başka yerde tek başına); 1 sırayla çalıştırır. Varsayılan 4; --step ya da --max-connections ile 1",
    ),
    (
        "arg.pooler",
        "Her oturumu sunucunun (geçici olanın ya da --database-url'in) önündeki, transaction modunda çalışan lab'ın kendi PgBouncer'ı üzerinden çalıştır; pooled bir porttaki uygulama gibi; pgbouncer kurulu olmalı",
    ),
    (
        "arg.max_connections",
        "Sunucuya toplam en çok N bağlantı kullan (kontrol bağlantısı dahil); böylece birkaç çalıştırma bir sunucuyu paylaşabilir; stock-race sığmak için daha az istek çalıştırır ve bunu söyler",
    ),
    (
        "arg.verbose",
        "Uzun zaman çizelgelerinin her adımını göster (invoice-numbering binlerce satır tutar); varsayılan olarak beklemeler, hatalar ve notlar ile oturum başına bir sayım kalır",
    ),
    (
        "arg.summary",
        "Yalnızca karar tablosunu yazdır (zaman çizelgeleri yok): `lab all` için tek ekran",
    ),
    (
        "arg.junit",
        "Ayrıca FILE dosyasına bir JUnit XML raporu yaz (varyant başına bir test case)",
    ),
    (
        "arg.baseline",
        "Belgelerle değil, daha önceki bir çalıştırmanın JSON'uyla (`--format json`, örneğin üretimdeki sürümde) karşılaştır: çıkış kodu yalnızca bir hüküm, bir bekleme, bir SQLSTATE ya da sayılan bir metrik farklıysa 1 olur",
    ),
    (
        "arg.html",
        "Ayrıca FILE dosyasına kendi içinde tam bir HTML raporu yaz (swimlane'ler, Gantt şemaları)",
    ),
    (
        "arg.wait_timeout",
        "Her bekleme için saniye cinsinden son süre (kilit beklemesi, bariyer, komut)",
    ),
    (
        "arg.timeout_ms",
        "Zaman aşımı gösteren senaryoların ayarladığı süre, ms (fk-blocking ve ddl-lock-queue'da lock_timeout, timeouts'ta dördü de, lost-client'ta idle_in_transaction_session_timeout)",
    ),
    (
        "arg.retry_attempts",
        "40001/40P01'de yeniden denenen bir transaction için toplam deneme sayısı (1 = yeniden deneme yok)",
    ),
    (
        "arg.retry_base_ms",
        "İlk yeniden denemeden önceki bekleme, ms; her denemede iki katına çıkar, rastgele sapmayla",
    ),
    ("arg.retry_cap_ms", "En uzun bekleme, ms"),
    (
        "arg.database_url",
        "PostgreSQL URL'si ya da key=value bağlantı dizesi. Verilmezse (PGSERVICE/PGHOST/PGPORT/PGUSER/PGDATABASE de yoksa) geçici bir cluster başlatılır",
    ),
    (
        "arg.pg_bin",
        "Geçici cluster için initdb ve postgres'in bulunduğu dizin",
    ),
    (
        "arg.schema",
        "lab'ın oluşturduğu, kullandığı ve sildiği şema. Aynı sunucu ve şemaya ikinci bir çalıştırma, ilki sürerken reddedilir",
    ),
    (
        "arg.keep_schema",
        "Çalıştırmadan sonra lab şemasını çalıştırmanın bıraktığı gibi tut (varsayılan olarak silinir; çalıştırmadan önce de varsa tohum satırlarıyla yeniden kurulur)",
    ),
    (
        "arg.locks.database_url",
        "İzlenecek sunucu (`lab server`'ın yazdığı URL)",
    ),
    ("arg.every", "Yenilemeler arasındaki saniye"),
    ("arg.once", "Görünümü bir kez (yenileme satırı olmadan) yazdır ve çık"),
    (
        "arg.all",
        "lab'ın olmayan oturumları da göster (salondaki psql pencereleri, elle yapılan bir alıştırma)",
    ),
    ("arg.shell", "Tamamlamaların yazılacağı kabuk"),
];
