//! `lab spec`: its command line, with pg_isolation_regress's own options.
use std::path::PathBuf;

use clap::Args;

use crate::options::{BaselineArgs, CommonArgs, JobsArgs, SpecFormat};

/// Run isolationtester spec files (PostgreSQL's isolation test format), in parallel.
#[derive(Debug, Clone, Args)]
#[command(
    after_help = "Each spec runs in a fresh database of its own, created from template0 and \
                  dropped afterwards; a role that cannot create databases (or --in-database) \
                  runs them one at a time in the database given, as isolationtester does.\n\
                  With --inputdir/--outputdir/--expecteddir (or another of pg_isolation_regress's \
                  options), lab writes pg_regress's layout (results/, regression.diffs, regression.out) \
                  and prints its lines: a Makefile's pg_isolation_regress line runs unchanged with lab spec.\n\
                  Exit codes: 0 every permutation ran to its end (and matched its expected file), \
                  1 one did not, 2 could not run (a spec that does not parse, no server).",
    mut_arg("jobs", |a| a.help(
        "Specs run at once, each in its own database (default: the number of cores; 1 with --repeat)")),
    mut_arg("junit", |a| a.help("Also write a JUnit XML report (one test case per spec and permutation) to FILE")),
    mut_arg("html", |a| a.help("Also write a self-contained HTML report (a swimlane diagram per permutation) to FILE")),
    // No default: PGISOLATIONTIMEOUT, or pg_isolation_regress's, sets it.
    mut_arg("wait_timeout", |a| a.default_value(None).help(
        "Deadline, in seconds, for any one step: a step still running then is cancelled, as isolationtester \
         does after PGISOLATIONTIMEOUT (which sets it when this is not given; else 10, or isolationtester's \
         300 with pg_isolation_regress's options)")),
    mut_arg("baseline", |a| a.help(
        "Compare with an earlier run's JSON (`--format json`) instead of with the expected output: exit 1 \
         only where a verdict, a wait, a SQLSTATE or a counted metric differs")),
)]
pub struct SpecArgs {
    /// Spec files, or directories holding them (every *.spec inside).
    #[arg(value_name = "FILE|DIR")]
    pub paths: Vec<PathBuf>,

    /// Also run the tests a pg_regress schedule lists (`test: a b c` lines);
    /// NAME is read from specs/NAME.spec (or NAME.spec) beside the schedule.
    #[arg(long, value_name = "FILE")]
    pub schedule: Vec<PathBuf>,

    /// Output format (isolation: exactly what PostgreSQL's isolationtester prints).
    #[arg(long, value_enum, ignore_case = true, default_value_t = SpecFormat::Table)]
    pub format: SpecFormat,

    /// Compare the output with this expected file (one spec only).
    #[arg(long, value_name = "FILE.out")]
    pub expected: Option<PathBuf>,

    /// Compare each spec's output with DIR/NAME.out (or NAME_0.out ... NAME_9.out,
    /// as pg_regress accepts); a difference is printed as a unified diff and exits 1.
    #[arg(long, value_name = "DIR")]
    pub expected_dir: Option<PathBuf>,

    /// Run the specs one at a time in the database given (the URL's, or
    /// --dbname), as isolationtester does, instead of a fresh database each;
    /// what a spec leaves behind is reported by name. The default for a role
    /// that cannot create databases.
    #[arg(long)]
    pub in_database: bool,

    /// The database the specs run in, one at a time: made by lab as
    /// pg_regress makes it and dropped afterwards, or with --use-existing
    /// (--in-database) one that exists.
    #[arg(long, value_name = "NAME", help_heading = REGRESS_HEADING)]
    pub dbname: Option<String>,

    /// pg_regress's --use-existing: run in the database given as it is
    /// (the same as --in-database).
    #[arg(long, help_heading = REGRESS_HEADING)]
    pub use_existing: bool,

    /// In the database given, drop what a spec left behind (exactly what it
    /// created, never what was there before) and go on.
    #[arg(long)]
    pub clean: bool,

    /// pg_regress's --inputdir: tests named on the command line or in a
    /// schedule are DIR/specs/NAME.spec.
    #[arg(long, value_name = "DIR", help_heading = REGRESS_HEADING)]
    pub inputdir: Option<PathBuf>,

    /// pg_regress's --expecteddir: expected files are DIR/expected/NAME.out
    /// (default: --inputdir).
    #[arg(long, value_name = "DIR", help_heading = REGRESS_HEADING)]
    pub expecteddir: Option<PathBuf>,

    /// pg_regress's --outputdir: results/NAME.out, regression.diffs and
    /// regression.out are written in DIR (default: .).
    #[arg(long, value_name = "DIR", help_heading = REGRESS_HEADING)]
    pub outputdir: Option<PathBuf>,

    /// Run every spec N times (one spec at a time unless --jobs) and report
    /// the permutations whose output differed between runs, with how often
    /// each output appeared.
    #[arg(long, value_name = "N")]
    pub repeat: Option<usize>,

    /// While the specs run, keep every core busy, as a loaded CI runner would.
    #[arg(long)]
    pub load: bool,

    /// Run every session through lab's own PgBouncer in transaction mode, in
    /// front of the server (a pool per spec database), as an application
    /// behind a pooled port does; needs pgbouncer installed. (A pooler of
    /// your own: --in-database with its URL.)
    #[arg(long)]
    pub pooler: bool,

    /// After each permutation, the comments the spec has before its steps.
    #[arg(long)]
    pub explain: bool,

    /// With --format isolation (whose stdout and stderr are isolationtester's
    /// alone), also say on stderr what lab adds: where the specs run, what a
    /// spec left behind, the diff against the expected file, how many
    /// matched. In the table: every step of a long timeline.
    #[arg(long)]
    pub verbose: bool,

    /// Workshop mode: before each step, show its session and SQL and wait for
    /// Enter (needs a terminal; runs one spec at a time).
    #[arg(long)]
    pub step: bool,

    #[command(flatten)]
    pub jobs: JobsArgs,

    #[command(flatten)]
    pub baseline: BaselineArgs,

    #[command(flatten)]
    pub common: CommonArgs,

    // Last: its heading holds for what follows it.
    #[command(flatten)]
    pub regress: RegressArgs,
}

/// The heading of pg_isolation_regress's own options in `lab spec --help`.
pub const REGRESS_HEADING: &str = "pg_isolation_regress's options";
// (Its Turkish is ui::help_regress_options.)

/// pg_isolation_regress's options that lab takes as it does, so that a
/// Makefile's line can call `lab spec` in its place. Any of them (or
/// --inputdir, --outputdir, --expecteddir) writes pg_regress's layout.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = REGRESS_HEADING)]
pub struct RegressArgs {
    /// Where initdb and postgres are, for the throwaway cluster (pg_regress
    /// runs psql from there; lab needs no psql).
    /// (Empty, as PGXS's `make check` passes it: the PATH's.)
    #[arg(long, value_name = "BINPATH")]
    pub bindir: Option<String>,

    /// Use the server running on HOST (pg_regress's PGHOST).
    #[arg(long, value_name = "HOST")]
    pub host: Option<String>,

    /// Use the server running at PORT (pg_regress's PGPORT); with
    /// --temp-instance lab picks a free port itself.
    #[arg(long, value_name = "PORT")]
    pub port: Option<u16>,

    /// Connect as USER (pg_regress's PGUSER).
    #[arg(long, value_name = "USER")]
    pub user: Option<String>,

    /// Run on a throwaway cluster of lab's own, whatever the environment
    /// says (lab keeps it in a directory of its own, not DIR, and removes
    /// it afterwards).
    #[arg(long, value_name = "DIR")]
    pub temp_instance: Option<PathBuf>,

    /// Append FILE to the throwaway cluster's postgresql.conf (repeatable).
    #[arg(long, value_name = "FILE")]
    pub temp_config: Vec<PathBuf>,

    /// The databases lab makes use the C locale (LC_COLLATE and LC_CTYPE 'C').
    #[arg(long)]
    pub no_locale: bool,

    /// The databases lab makes have this encoding (sessions still talk UTF8).
    #[arg(long, value_name = "ENCODING")]
    pub encoding: Option<String>,

    /// CREATE EXTENSION IF NOT EXISTS this one in each database lab makes (repeatable).
    #[arg(long, value_name = "EXT")]
    pub load_extension: Vec<String>,

    /// At most N tests of a schedule group at once (printed as pg_regress
    /// prints it: "in groups of N").
    #[arg(long, value_name = "N")]
    pub max_connections: Option<usize>,

    /// A schedule group of more than N tests is refused, as pg_regress refuses it.
    #[arg(long, value_name = "N")]
    pub max_concurrent_tests: Option<usize>,

    /// Roles (comma-separated) with LOGIN and every privilege on each
    /// database lab makes; one that does not exist yet is made, and dropped
    /// afterwards (one that exists is used as it is).
    #[arg(long, value_name = "ROLE,...", value_delimiter = ',')]
    pub create_role: Vec<String>,

    /// Accepted; pg_regress passes it to psql's tests only, which lab does not run.
    #[arg(long, value_name = "DIR")]
    pub dlpath: Option<PathBuf>,

    /// Refused: lab runs the specs itself, with nothing to launch.
    #[arg(long, value_name = "CMD", hide = true)]
    pub launcher: Option<String>,
}

impl RegressArgs {
    /// Whether any option of pg_regress's own was given.
    pub fn any(&self) -> bool {
        self.bindir.is_some()
            || self.host.is_some()
            || self.port.is_some()
            || self.user.is_some()
            || self.temp_instance.is_some()
            || !self.temp_config.is_empty()
            || self.no_locale
            || self.encoding.is_some()
            || !self.load_extension.is_empty()
            || !self.create_role.is_empty()
            || self.max_connections.is_some()
            || self.max_concurrent_tests.is_some()
            || self.dlpath.is_some()
            || self.launcher.is_some()
    }
}

crate::help_tr! {
    ("cmd.spec", "isolationtester spec dosyalarını (PostgreSQL'in izolasyon testi biçimi) paralel çalıştır"),
    ("after.spec", "Her spec kendi yeni veritabanında çalışır: template0'dan oluşturulur, sonra silinir; veritabanı oluşturamayan bir rol (ya da --in-database) onları isolationtester'daki gibi verilen veritabanında birer birer çalıştırır.\n--inputdir/--outputdir/--expecteddir (ya da pg_isolation_regress'in başka bir seçeneği) ile lab pg_regress'in düzenini yazar (results/, regression.diffs, regression.out) ve onun satırlarını basar; bir Makefile'ın pg_isolation_regress satırı lab spec ile değiştirilmeden çalışır.\nÇıkış kodları: 0 her permütasyon sonuna kadar çalıştı (ve beklenen dosyasıyla aynı), 1 biri çalışmadı, 2 çalıştırılamadı (ayrıştırılamayan bir spec, sunucu yok)."),
    ("arg.spec.paths", "Spec dosyaları ya da onları tutan dizinler (içindeki her *.spec)"),
    ("arg.spec.schedule", "Bir pg_regress schedule dosyasının listelediği testleri de çalıştır (`test: a b c` satırları); AD, schedule'ın yanındaki specs/AD.spec (ya da AD.spec) dosyasından okunur"),
    ("arg.spec.format", "Çıktı biçimi (isolation: PostgreSQL'in isolationtester'ının yazdığının aynısı)"),
    ("arg.spec.expected", "Çıktıyı bu beklenen dosyayla karşılaştır (yalnızca tek spec)"),
    ("arg.spec.expected_dir", "Her spec'in çıktısını DIR/AD.out (ya da pg_regress'in kabul ettiği gibi AD_0.out ... AD_9.out) ile karşılaştır; fark birleşik diff olarak yazılır ve çıkış kodu 1 olur"),
    ("arg.spec.jobs", "Aynı anda çalışan spec sayısı, her biri kendi veritabanında (varsayılan: çekirdek sayısı; --repeat ile 1)"),
    ("arg.spec.junit", "Ayrıca FILE dosyasına bir JUnit XML raporu yaz (spec ve permütasyon başına bir test case)"),
    ("arg.spec.html", "Ayrıca FILE dosyasına kendi içinde tam bir HTML raporu yaz (permütasyon başına bir swimlane diyagramı)"),
    ("arg.spec.wait_timeout", "Bir adım için saniye cinsinden son süre: o zaman hâlâ çalışan adım iptal edilir, isolationtester'ın PGISOLATIONTIMEOUT'tan sonra yaptığı gibi (bu verilmezse PGISOLATIONTIMEOUT belirler; yoksa 10, pg_isolation_regress'in seçenekleriyle isolationtester'ınki gibi 300)"),
    ("arg.spec.in_database", "Spec'leri her biri için yeni bir veritabanı yerine, isolationtester'daki gibi verilen veritabanında (URL'ninki ya da --dbname) birer birer çalıştır; bir spec'in geride bıraktıkları adıyla bildirilir. Veritabanı oluşturamayan bir rol için varsayılan"),
    ("arg.spec.dbname", "Spec'lerin birer birer çalıştığı veritabanı: lab onu pg_regress'in yaptığı gibi oluşturur ve sonra siler; --use-existing (--in-database) ile var olan bir veritabanı"),
    ("arg.spec.use_existing", "pg_regress'in --use-existing'i: verilen veritabanında olduğu gibi çalıştır (--in-database ile aynı)"),
    ("arg.spec.clean", "Verilen veritabanında bir spec'in geride bıraktıklarını sil (tam olarak onun oluşturduklarını, önceden var olanı asla) ve devam et"),
    ("arg.spec.inputdir", "pg_regress'in --inputdir'i: komut satırında ya da schedule'da adı geçen testler DIR/specs/AD.spec dosyalarıdır"),
    ("arg.spec.expecteddir", "pg_regress'in --expecteddir'i: beklenen dosyalar DIR/expected/AD.out (varsayılan: --inputdir)"),
    ("arg.spec.outputdir", "pg_regress'in --outputdir'i: results/AD.out, regression.diffs ve regression.out DIR içine yazılır (varsayılan: .)"),
    ("arg.spec.bindir", "Geçici kümenin initdb ve postgres programlarının yeri (pg_regress oradan psql çalıştırır; lab'ın psql'e ihtiyacı yok)"),
    ("arg.spec.host", "HOST üzerinde çalışan sunucuyu kullan (pg_regress'in PGHOST'u)"),
    ("arg.spec.port", "PORT'taki sunucuyu kullan (pg_regress'in PGPORT'u); --temp-instance ile lab boş bir portu kendisi seçer"),
    ("arg.spec.user", "USER olarak bağlan (pg_regress'in PGUSER'ı)"),
    ("arg.spec.temp_instance", "Ortam ne derse desin lab'ın kendi geçici kümesinde çalış (lab onu DIR'de değil kendi dizininde tutar ve sonra kaldırır)"),
    ("arg.spec.temp_config", "FILE'ı geçici kümenin postgresql.conf dosyasının sonuna ekle (tekrarlanabilir)"),
    ("arg.spec.no_locale", "lab'ın oluşturduğu veritabanları C yerel ayarını kullanır (LC_COLLATE ve LC_CTYPE 'C')"),
    ("arg.spec.encoding", "lab'ın oluşturduğu veritabanları bu kodlamayla oluşturulur (oturumlar yine UTF8 konuşur)"),
    ("arg.spec.load_extension", "lab'ın oluşturduğu her veritabanında bu eklenti için CREATE EXTENSION IF NOT EXISTS (tekrarlanabilir)"),
    ("arg.spec.max_connections", "Bir schedule grubunun testlerinden aynı anda en çok N tane (pg_regress'in yazdığı gibi yazılır: \"in groups of N\")"),
    ("arg.spec.max_concurrent_tests", "N testten büyük bir schedule grubu, pg_regress'in reddettiği gibi reddedilir"),
    ("arg.spec.create_role", "LOGIN ve lab'ın oluşturduğu her veritabanında bütün yetkileri olan roller (virgülle ayrılmış); olmayan oluşturulur ve sonra silinir (var olan olduğu gibi kullanılır)"),
    ("arg.spec.dlpath", "Kabul edilir; pg_regress onu yalnızca psql testlerine verir, lab bunları çalıştırmaz"),
    ("arg.spec.launcher", "Reddedilir: lab spec'leri kendisi çalıştırır, başlatacağı bir şey yok"),
    ("arg.spec.repeat", "Her spec'i N kez çalıştır (--jobs verilmedikçe birer birer) ve çıktısı çalıştırmadan çalıştırmaya değişen permütasyonları, her çıktının ne sıklıkla geldiğiyle bildir"),
    ("arg.spec.load", "Spec'ler çalışırken her çekirdeği meşgul tut, yüklü bir CI makinesinin yapacağı gibi"),
    ("arg.spec.baseline", "Beklenen çıktı yerine daha önceki bir çalıştırmanın JSON'uyla (`--format json`) karşılaştır: çıkış kodu yalnızca bir hüküm, bir bekleme, bir SQLSTATE ya da sayılan bir metrik farklıysa 1 olur"),
    ("arg.spec.verbose", "--format isolation ile (stdout ve stderr yalnızca isolationtester'ınkidir) lab'ın eklediklerini de stderr'e yaz: spec'lerin nerede çalıştığı, bir spec'in geride bıraktıkları, beklenen dosyaya göre diff, kaçının aynı çıktığı. Tabloda: uzun bir zaman çizelgesinin her adımı"),
    ("arg.spec.explain", "Her permütasyondan sonra, spec'in adımlarından önceki yorumlar"),
    ("arg.spec.step", "Atölye modu: her adımdan önce oturumunu ve SQL'ini göster ve Enter'ı bekle (terminal gerekir; spec'leri birer birer çalıştırır)"),
}
