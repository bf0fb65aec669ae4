//! What `lab spec` says: its errors, and the words of its reports.
crate::messages! {
    prefix "sp";
    unreadable(path, error) {
        en: "{path}: cannot read it: {error}",
        tr: "{path}: okunamıyor: {error}",
    }
    no_such_file(path) {
        en: "{path}: no such file",
        tr: "{path}: böyle bir dosya yok",
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
        en: "{path}:{line}: not a schedule line (expected `test: NAME ...`): {text}",
        tr: "{path}:{line}: bir schedule satırı değil (`test: AD ...` bekleniyordu): {text}",
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
    expected_one() {
        en: "--expected compares one spec: give exactly one spec file (or use --expected-dir)",
        tr: "--expected tek bir spec'i karşılaştırır: tam olarak bir spec dosyası verin (ya da --expected-dir kullanın)",
    }
    jobs() {
        en: "--jobs must be at least 1",
        tr: "--jobs en az 1 olmalı",
    }
    create_db(db) {
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
}
