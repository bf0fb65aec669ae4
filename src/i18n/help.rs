//! The command line's help in Turkish, by key: `cmd.<command>` (its about),
//! `after.<command>`, `arg.<command>.<id>` or, for every command, `arg.<id>`.
//! Here: lab's own and the options several commands share; a command's
//! own are beside its arguments (`help_tr!` in its args), the scenarios'
//! in the catalogue. English help is written on the clap types.
pub static HELP_TR: &[(&str, &str)] = &[
    (
        "cmd.lab",
        "PostgreSQL eşzamanlılık anomalilerini istendiğinde, çözümleriyle yan yana oluşturur ve sunucunun belgelendiği gibi davranıp davranmadığını söyler.",
    ),
    (
        "after.lab",
        "Veritabanı verilmezse lab, bu makinede bulduğu programlarla geçici bir PostgreSQL başlatır ve sonra kaldırır.\nÇıkış kodları: 0 her varyant belgelenen sonucu gösterdi, 1 en az biri göstermedi, 2 çalıştırılamadı, 130 kesildi.",
    ),
    (
        "arg.lab_dir",
        "Senaryoları DIR içindeki lab dosyalarının (spec ve SQL) düzenlenmiş kopyalarından çalıştır; DIR'de olmayan dosya lab'ın kendi kopyasından gelir",
    ),
    (
        "arg.lang",
        "lab'ın söylediği her şeyin dili (varsayılan: LC_ALL/LC_MESSAGES/LANG'den, yoksa İngilizce)",
    ),
    ("arg.format", "Çıktı biçimi"),
    (
        "arg.quiet",
        "stdout'a hiçbir şey yazma, ilerleme gösterme: nasıl gittiğini çıkış kodu, stderr (hatalar, uyarılar, bir çalıştırmanın neden başarısız olduğu) ve rapor dosyaları söyler",
    ),
    (
        "arg.color",
        "Çıktının ne zaman renklendirileceği: auto (bir terminalde, NO_COLOR ayarlı değilse), always, never",
    ),
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
        "arg.tls",
        "Geçici cluster yalnızca TLS konuşur (ssl=on, şifresiz bağlantı reddedilir); CA ve sertifikayı lab bu çalıştırma için üretir, sonra siler",
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
];
