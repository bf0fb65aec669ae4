//! `lab <scenario>`, `lab all` and `lab list`: their command line.
use clap::{Args, ValueEnum};

use crate::options::{BaselineArgs, CommonArgs, Format, JobsArgs, LabDirArgs, LabSchemaArgs};

// The options of every scenario's command and of `lab all` (no doc comment:
// it would be their about).
#[derive(Debug, Clone, Args)]
#[command(
    mut_arg("junit", |a| a.help("Also write a JUnit XML report (one test case per variant) to FILE")),
    mut_arg("html", |a| a.help("Also write a self-contained HTML report (swimlanes, Gantt charts) to FILE")),
    mut_arg("baseline", |a| a.help(
        "Compare with an earlier run's JSON (`--format json`, say on the version in production) instead of \
         with the documentation: exit 1 only where a verdict, a wait, a SQLSTATE or a counted metric differs")),
    mut_arg("wait_timeout", |a| a.help("Deadline, in seconds, for every wait (a lock wait, a barrier, a statement)")),
    mut_arg("jobs", |a| a.help(
        "`lab all`: scenarios run at once, each in a schema of its own (replica in a database of its own on \
         the throwaway server, else alone); 1 runs them one by one. Default 4; 1 with --step or --max-connections")),
    mut_arg("lab_dir", |a| a.help(
        "Run the scenarios from edited copies of lab's files (specs and SQL) in DIR; a file DIR does not have \
         comes from lab's own copies")),
)]
pub struct RunArgs {
    /// Run only this variant (repeatable); with `lab all`, SCENARIO or SCENARIO/VARIANT.
    #[arg(long = "variant", value_name = "NAME")]
    pub variants: Vec<String>,

    /// Output format.
    #[arg(long, value_enum, ignore_case = true, default_value_t = Format::Table)]
    pub format: Format,

    /// After each variant, explain what happened and why, and the fix.
    #[arg(long)]
    pub explain: bool,

    /// Show every step of long timelines (invoice-numbering's run to thousands
    /// of lines); by default they keep the waits, errors and notes, and a
    /// count per session.
    #[arg(long)]
    pub verbose: bool,

    /// Print only the verdict table (no timelines): one screen for `lab all`.
    #[arg(long, conflicts_with_all = ["explain", "step"])]
    pub summary: bool,

    /// Workshop mode: before each step, show which session runs which statement
    /// and why, and wait for Enter (needs a terminal).
    #[arg(long)]
    pub step: bool,

    /// With --step: guess first. Each prompt asks what the statement will do
    /// (runs at once, waits for whom, fails with which error, which value),
    /// then shows the guess beside what the server did, with a tally.
    #[arg(long, requires = "step")]
    pub predict: bool,

    /// The timeout, in ms, that scenarios showing a timeout set (lock_timeout in
    /// fk-blocking and ddl-lock-queue, each of the four in timeouts, lost-client's
    /// idle_in_transaction_session_timeout).
    #[arg(long, default_value_t = 1000, value_name = "MS")]
    pub timeout_ms: u64,

    /// Use at most N connections to the server in all (the control connection
    /// included), so that several runs can share a server; stock-race runs
    /// fewer requests to fit, and says so.
    #[arg(long, value_name = "N")]
    pub max_connections: Option<usize>,

    /// Run every session through lab's own PgBouncer in transaction mode, in
    /// front of the server (the throwaway one or --database-url), as an
    /// application behind a pooled port does; needs pgbouncer installed.
    #[arg(long)]
    pub pooler: bool,

    /// Exit 1 when a variant named here is skipped (no pgbouncer, pgpool-II,
    /// Patroni or etcd on this machine, a server too old for it), naming it
    /// and why: `all`, SCENARIO or SCENARIO/VARIANT (with `lab <scenario>`,
    /// VARIANT too); repeatable or comma-separated. For a CI that must run them.
    #[arg(long, value_name = "WHAT", value_delimiter = ',')]
    pub require: Vec<String>,

    /// Attempts in all for a transaction retried on 40001/40P01 (1 = no retry).
    #[arg(long, default_value_t = 5, value_name = "N")]
    pub retry_attempts: u32,

    /// Back-off before the first retry, in ms; it doubles each attempt, with jitter.
    #[arg(long, default_value_t = 10, value_name = "MS")]
    pub retry_base_ms: u64,

    /// Longest back-off, in ms.
    #[arg(long, default_value_t = 200, value_name = "MS")]
    pub retry_cap_ms: u64,

    #[command(flatten)]
    pub common: CommonArgs,

    #[command(flatten)]
    pub baseline: BaselineArgs,

    #[command(flatten)]
    pub jobs: JobsArgs,

    #[command(flatten)]
    pub lab_dir: LabDirArgs,

    #[command(flatten)]
    pub schema: LabSchemaArgs,
}

/// Run every scenario (4 at a time; reported in catalogue order), then print one summary table.
#[derive(Debug, Clone, Args)]
pub struct AllArgs {
    #[command(flatten)]
    pub run: RunArgs,
}

/// List every scenario with a one-line summary and its variants.
#[derive(Debug, Clone, Args)]
pub struct ListArgs {
    /// With each variant's explanation.
    #[arg(long)]
    pub explain: bool,

    /// Output format (markdown: the scenario table of docs/GUIDE.md; json: the catalogue, each variant explained).
    #[arg(long, value_enum, ignore_case = true, default_value_t = ListFormat::Table)]
    pub format: ListFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ListFormat {
    Table,
    Markdown,
    Json,
}

crate::help_tr! {
    ("arg.predict", "--step ile: önce tahmin. Her istem ifadenin ne yapacağını sorar (hemen çalışır, kimi bekler, hangi hatayla başarısız olur, hangi değer), sonra tahmini sunucunun yaptığının yanında bir sayımla gösterir"),
    ("arg.variants", "Yalnızca bu varyantı çalıştır (tekrarlanabilir); `lab all` ile SENARYO ya da SENARYO/VARYANT"),
    ("arg.verbose", "Uzun zaman çizelgelerinin her adımını göster (invoice-numbering binlerce satır tutar); varsayılan olarak beklemeler, hatalar ve notlar ile oturum başına bir sayım kalır"),
    ("arg.summary", "Yalnızca karar tablosunu yazdır (zaman çizelgeleri yok): `lab all` için tek ekran"),
    ("arg.timeout_ms", "Zaman aşımı gösteren senaryoların ayarladığı süre, ms (fk-blocking ve ddl-lock-queue'da lock_timeout, timeouts'ta dördü de, lost-client'ta idle_in_transaction_session_timeout)"),
    ("arg.require", "Burada adı geçen bir varyant atlanırsa (bu makinede pgbouncer, pgpool-II, Patroni ya da etcd yok, sunucu onun için fazla eski) onu ve nedenini söyleyerek 1 ile çık: `all`, SENARYO ya da SENARYO/VARYANT (`lab <senaryo>` ile VARYANT da); tekrarlanabilir ya da virgülle ayrılmış. Onları çalıştırması gereken bir CI için"),
    ("arg.retry_attempts", "40001/40P01'de yeniden denenen bir transaction için toplam deneme sayısı (1 = yeniden deneme yok)"),
    ("arg.retry_base_ms", "İlk yeniden denemeden önceki bekleme, ms; her denemede iki katına çıkar, rastgele sapmayla"),
    ("arg.retry_cap_ms", "En uzun bekleme, ms"),
    ("cmd.list", "Her senaryoyu tek satırlık özeti ve varyantlarıyla listele"),
    ("cmd.all", "Bütün senaryoları çalıştır (aynı anda 4; katalog sırasıyla raporlanır), sonra tek bir özet tablo yazdır"),
    ("arg.list.explain", "Her varyantın açıklamasıyla"),
    ("arg.list.format", "Çıktı biçimi (markdown: docs/GUIDE.md'deki senaryo tablosu; json: katalog, her varyant açıklamasıyla)"),
}
