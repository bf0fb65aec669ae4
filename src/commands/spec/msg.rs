//! What `lab spec` says: its errors, and the words of its reports.
crate::messages! {
    prefix "sp";
    no_such_file(path) {
        en: "{path}: no such file",
        tr: "{path}: böyle bir dosya yok",
    }
    no_such_test(name, path) {
        en: "{name}: no such file, nor test {path}",
        tr: "{name}: böyle bir dosya yok, {path} testi de yok",
    }
    no_such_dir(path) {
        en: "{path}: no such directory",
        tr: "{path}: böyle bir dizin yok",
    }
    no_specs_in(path) {
        en: "{path}: no .spec file in this directory",
        tr: "{path}: bu dizinde .spec dosyası yok",
    }
    nothing_to_run() {
        en: "no spec to run: name spec files, directories or --schedule",
        tr: "çalıştırılacak spec yok: spec dosyaları, dizinler ya da --schedule verin",
    }
    bad_schedule_line(path, line, text) {
        en: "{path}:{line}: not a schedule line (expected `test: NAME ...` or `ignore: NAME`): {text}",
        tr: "{path}:{line}: bir schedule satırı değil (`test: AD ...` ya da `ignore: AD` bekleniyordu): {text}",
    }
    too_many_parallel(max, path, line, text) {
        en: "too many parallel tests (more than {max}) in schedule file \"{path}\" line {line}: {text}",
        tr: "schedule dosyası \"{path}\" satır {line}: çok fazla paralel test ({max} testten fazla): {text}",
    }
    load_extension(ext, db) {
        en: "could not load extension {ext} into database {db}",
        tr: "{ext} eklentisi {db} veritabanına yüklenemedi",
    }
    create_role(role) {
        en: "could not create role {role} (--create-role)",
        tr: "{role} rolü oluşturulamadı (--create-role)",
    }
    drop_role(role) {
        en: "could not drop role {role}, which lab made for --create-role",
        tr: "lab'ın --create-role için oluşturduğu {role} rolü silinemedi",
    }
    no_launcher() {
        en: "--launcher: lab runs the specs on its own engine, with no program to launch; leave it out",
        tr: "--launcher: lab spec'leri kendi motoruyla çalıştırır, başlatacağı bir program yok; bu seçeneği çıkarın",
    }
    server_twice(given, other) {
        en: "{given} and {other} both say which server to use; give one",
        tr: "{given} ve {other} ikisi de hangi sunucunun kullanılacağını söylüyor; birini verin",
    }
    schedule_missing(path, line, name) {
        en: "{path}:{line}: no spec for test {name} (looked for specs/{name}.spec and {name}.spec)",
        tr: "{path}:{line}: {name} testi için spec yok (specs/{name}.spec ve {name}.spec arandı)",
    }
    parse_error(path, line, message) {
        en: "{path}:{line}: {message}",
        tr: "{path}:{line}: {message}",
    }
    invalid(path, message) {
        en: "{path}: {message}",
        tr: "{path}: {message}",
    }
    no_expected(path, spec) {
        en: "{path}: no such file: spec {spec} has no expected output to be compared with (pg_regress stops with \"diff command failed\" there too)",
        tr: "{path}: böyle bir dosya yok: {spec} spec'inin karşılaştırılacak beklenen çıktısı yok (pg_regress de orada \"diff command failed\" ile durur)",
    }
    expected_one() {
        en: "--expected compares one spec: give exactly one spec file (or use --expected-dir)",
        tr: "--expected tek bir spec'i karşılaştırır: tam olarak bir spec dosyası verin (ya da --expected-dir kullanın)",
    }
    create_db(db) {
        en: "could not create the database {db} for the spec",
        tr: "spec için {db} veritabanı oluşturulamadı",
    }
    create_db_denied(db) {
        en: "could not create the database {db} for the spec (the role needs CREATEDB)",
        tr: "spec için {db} veritabanı oluşturulamadı (rolün CREATEDB yetkisi olmalı)",
    }
    drop_db(db) {
        en: "could not drop the spec's database {db}",
        tr: "spec'in {db} veritabanı silinemedi",
    }
    runs_to_end() {
        en: "every step runs to its end within the deadline",
        tr: "her adım son süre içinde sonuna kadar çalışır",
    }
    compared() {
        en: "as the expected output says",
        tr: "beklenen çıktının dediği gibi",
    }
    ran(steps, waited) {
        en: "{steps} steps, {waited} waited",
        tr: "{steps} adım, {waited} tanesi bekledi",
    }
    errors(codes) {
        en: "errors {codes}",
        tr: "hatalar {codes}",
    }
    cancelled(steps) {
        en: "lab cancelled {steps} at the deadline",
        tr: "lab {steps} adımını son sürede iptal etti",
    }
    stopped(error) {
        en: "stopped: {error}",
        tr: "durdu: {error}",
    }
    comments(text) {
        en: "{text}",
        tr: "{text}",
    }
    expected_variant() {
        en: "expected output",
        tr: "beklenen çıktı",
    }
    same_output(path) {
        en: "the output is byte for byte {path}",
        tr: "çıktı bayt bayt {path} ile aynı",
    }
    same() {
        en: "same",
        tr: "aynı",
    }
    differs() {
        en: "differs (diff below)",
        tr: "farklı (fark aşağıda)",
    }
    matched(matched, total, secs) {
        en: "{matched} of {total} specs match their expected output ({secs} s)",
        tr: "{total} spec'ten {matched} tanesi beklenen çıktısıyla aynı ({secs} sn)",
    }
    snapshot() {
        en: "could not read what the database holds (pg_identify_object over the catalogue)",
        tr: "veritabanında ne olduğu okunamadı (katalog üzerinde pg_identify_object)",
    }
    left(objects) {
        en: "left behind: {objects}",
        tr: "geride bıraktı: {objects}",
    }
    in_flight_left(spec, objects) {
        en: "{spec}, cut short, left behind: {objects} (--clean drops what a spec leaves)",
        tr: "yarıda kesilen {spec} geride bıraktı: {objects} (--clean bir spec'in bıraktığını siler)",
    }
    in_flight_not_dropped(spec, objects) {
        en: "{spec}, cut short, left behind what --clean could not drop: {objects}",
        tr: "yarıda kesilen {spec}, --clean'in silemediğini geride bıraktı: {objects}",
    }
    cut_short(spec) {
        en: "{spec} was cut short (the clean-up looks at what it left)",
        tr: "{spec} yarıda kesildi (geride bıraktığına temizlik bakıyor)",
    }
    in_flight_unknown(spec) {
        en: "{spec} was cut short, and what it left in the database could not be read",
        tr: "{spec} yarıda kesildi; veritabanında ne bıraktığı okunamadı",
    }
    renamed(objects) {
        en: "renamed what was there before: {objects} (lab does not rename it back)",
        tr: "önceden var olanı yeniden adlandırdı: {objects} (lab eski adını geri vermez)",
    }
    gone(objects) {
        en: "dropped what was there before: {objects}",
        tr: "önceden var olanı sildi: {objects}",
    }
    cleaned() {
        en: "--clean dropped all of it",
        tr: "--clean hepsini sildi",
    }
    not_cleaned(objects) {
        en: "--clean could not drop: {objects}",
        tr: "--clean şunları silemedi: {objects}",
    }
    leaves_nothing() {
        en: "the spec leaves nothing behind in the database",
        tr: "spec veritabanında geride bir şey bırakmaz",
    }
    leaves_nothing_why() {
        en: "specs run one after another in the database given; the next must not run on top of what this one created",
        tr: "spec'ler verilen veritabanında art arda çalışır; sonraki, bunun oluşturdukları üzerinde çalışmamalı",
    }
    spec_variant() {
        en: "spec",
        tr: "spec",
    }
    parses() {
        en: "the spec parses",
        tr: "spec ayrıştırılır",
    }
    parses_why() {
        en: "isolationtester stops at a spec it cannot read or parse; pg_regress fails that test and runs the rest",
        tr: "isolationtester okuyamadığı ya da ayrıştıramadığı bir spec'te durur; pg_regress o testi başarısız sayar ve kalanları çalıştırır",
    }
    does_not_parse(why) {
        en: "{why}",
        tr: "{why}",
    }
    not_run_variant() {
        en: "not run",
        tr: "çalıştırılmadı",
    }
    database_variant() {
        en: "database",
        tr: "veritabanı",
    }
    runs_in_clean_database() {
        en: "runs in the database as it was before the specs ran",
        tr: "veritabanında, spec'ler çalışmadan önceki hâliyle çalışır",
    }
    not_run(by, objects) {
        en: "not run: the database holds what {by} left behind ({objects}); --clean drops exactly that",
        tr: "çalıştırılmadı: veritabanında {by} spec'inin geride bıraktıkları var ({objects}); --clean tam olarak bunları siler",
    }
    in_database(db) {
        en: "the role cannot create databases: the specs run one at a time in {db}, as isolationtester runs them",
        tr: "rol veritabanı oluşturamıyor: spec'ler isolationtester'daki gibi {db} içinde birer birer çalışır",
    }
    pooler_in_database(place) {
        en: "{place} is a transaction pooler: lab spec runs through it only in the database given, as isolationtester does (add --in-database, or --use-existing with --dbname NAME); a database lab made would have to be known to the pooler, and could not be dropped while the pooler keeps server connections in it",
        tr: "{place} bir transaction pooler: lab spec onun üzerinden yalnızca verilen veritabanında, isolationtester gibi çalışır (--in-database ekleyin, ya da --dbname NAME ile --use-existing); lab'ın oluşturacağı bir veritabanını pooler'ın tanıması gerekirdi ve pooler orada sunucu bağlantıları tuttukça silinemezdi",
    }
    pooler_twice(place) {
        en: "{place} is a transaction pooler already: --pooler puts lab's own PgBouncer in front of a server, not of another pooler; leave --pooler out to run through this one",
        tr: "{place} zaten bir transaction pooler: --pooler lab'ın kendi PgBouncer'ını bir sunucunun önüne koyar, başka bir pooler'ın değil; bunun üzerinden çalıştırmak için --pooler'ı kaldırın",
    }
    db_exists(db) {
        en: "the database {db} exists: --use-existing runs the specs in it as it is (lab drops only databases it made)",
        tr: "{db} veritabanı zaten var: --use-existing spec'leri onun içinde olduğu gibi çalıştırır (lab yalnızca kendi oluşturduğu veritabanlarını siler)",
    }
    unwritable(path, error) {
        en: "{path}: cannot write it: {error}",
        tr: "{path}: yazılamıyor: {error}",
    }
    bad_isolation_timeout(value) {
        en: "PGISOLATIONTIMEOUT: not a number of seconds: {value}",
        tr: "PGISOLATIONTIMEOUT: saniye cinsinden bir sayı değil: {value}",
    }
    same_in(runs) {
        en: "every permutation prints the same in all {runs} runs",
        tr: "her permütasyon {runs} çalıştırmanın hepsinde aynı çıktıyı verir",
    }
    same_in_why() {
        en: "an isolation test is deterministic only if nothing in its output depends on timing",
        tr: "bir izolasyon testi ancak çıktısındaki hiçbir şey zamanlamaya bağlı değilse belirlenimcidir",
    }
    outputs_of(permutation, outputs, counts) {
        en: "permutation {permutation}: {outputs} different outputs ({counts} runs)",
        tr: "{permutation} permütasyonu: {outputs} farklı çıktı ({counts} çalıştırma)",
    }
    repeat_variant(runs) {
        en: "repeated {runs} times",
        tr: "{runs} kez tekrarlandı",
    }
    steady(spec, runs) {
        en: "{spec}: the same output in all {runs} runs",
        tr: "{spec}: {runs} çalıştırmanın hepsinde aynı çıktı",
    }
    flaky(spec, permutation, outputs, runs, counts) {
        en: "FLAKY {spec}: permutation {permutation}: {outputs} different outputs in {runs} runs ({counts}); the diffs from the most frequent:",
        tr: "KARARSIZ {spec}: {permutation} permütasyonu: {runs} çalıştırmada {outputs} farklı çıktı ({counts}); en sık görülene göre farklar:",
    }
}
