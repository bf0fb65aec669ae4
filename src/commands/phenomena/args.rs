//! `lab phenomena`: its command line.
use clap::Args;

use crate::options::{BaselineArgs, CommonArgs, Format, JobsArgs, LabDirArgs};

/// The anomaly matrix (dirty write ... write skew) measured at every isolation level.
#[derive(Debug, Clone, Args)]
#[command(
    mut_arg("jobs", |a| a.help(
        "Cells run at once, each in a schema of its own (default: 4 per core; --all-interleavings: one per \
         core to start, up to 4 per core while it helps)")),
    mut_arg("junit", |a| a.help("Also write a JUnit XML report (one test case per cell) to FILE")),
    mut_arg("baseline", |a| a.help(
        "Compare with an earlier run's JSON (`lab phenomena --format json`) instead of with the \
         documentation: exit 1 only where a cell's verdict, wait or SQLSTATE differs")),
    mut_arg("html", |a| a.help(
        "Also write a self-contained HTML report (the matrix as a coloured grid, each cell's swimlanes) to FILE")),
    mut_arg("lab_dir", |a| a.help(
        "Run the phenomena from edited copies of lab's files in DIR (DIR/phenomena/<id>.spec); a file DIR \
         does not have comes from lab's own")),
)]
pub struct PhenomenaArgs {
    /// Also print this phenomenon's timelines at every level (its id: g0, p4, g2-item, ...).
    #[arg(long, value_name = "ID")]
    pub show: Option<String>,

    /// Only this level (repeatable): read-uncommitted, read-committed, repeatable-read, serializable.
    #[arg(long, value_name = "LEVEL")]
    pub level: Vec<String>,

    /// Output format.
    #[arg(long, value_enum, ignore_case = true, default_value_t = Format::Table)]
    pub format: Format,

    /// After the matrix, what each phenomenon is.
    #[arg(long)]
    pub explain: bool,

    /// Also run every interleaving of each cell's steps (as `lab explore`
    /// does): each cell then says in how many the anomaly occurs, how many
    /// blocked and how many aborted, beside its own interleaving's verdict.
    #[arg(long)]
    pub all_interleavings: bool,

    #[command(flatten)]
    pub jobs: JobsArgs,

    #[command(flatten)]
    pub baseline: BaselineArgs,

    #[command(flatten)]
    pub lab_dir: LabDirArgs,

    #[command(flatten)]
    pub common: CommonArgs,
}

crate::help_tr! {
    ("cmd.phenomena", "Anomali matrisi (dirty write ... write skew), her izolasyon seviyesinde sunucuda ölçülerek"),
    ("arg.phenomena.show", "Bu fenomenin her seviyedeki zaman çizelgelerini de yazdır (kimliği: g0, p4, g2-item, ...)"),
    ("arg.phenomena.level", "Yalnızca bu seviye (tekrarlanabilir): read-uncommitted, read-committed, repeatable-read, serializable"),
    ("arg.phenomena.explain", "Matristen sonra her fenomenin ne olduğu"),
    ("arg.phenomena.jobs", "Aynı anda çalışan hücre sayısı, her biri kendi şemasında (varsayılan: çekirdek başına 4)"),
    ("arg.phenomena.wait_timeout", "Bir adım için saniye cinsinden son süre"),
    ("arg.phenomena.baseline", "Belgelerle değil, daha önceki bir çalıştırmanın JSON'uyla (`lab phenomena --format json`) karşılaştır: çıkış kodu yalnızca bir hücrenin hükmü, beklemesi ya da SQLSTATE'i farklıysa 1 olur"),
    ("arg.phenomena.junit", "Ayrıca FILE dosyasına bir JUnit XML raporu yaz (hücre başına bir test case)"),
    ("arg.phenomena.html", "Ayrıca FILE dosyasına kendi içinde tam bir HTML raporu yaz (renkli ızgara olarak matris, her hücrenin swimlane'leri)"),
    ("arg.phenomena.lab_dir", "Fenomenleri DIR içindeki düzenlenmiş kopyalardan çalıştır (DIR/phenomena/<kimlik>.spec); DIR'de olmayan dosya lab'ın kendi kopyasından gelir"),
    ("arg.phenomena.all_interleavings", "Her hücrenin adımlarının her iç içe geçişini de çalıştır (lab explore gibi): her hücre, kendi iç içe geçişinin kararının yanında anomalinin kaçında oluştuğunu, kaçının beklediğini ve kaçının iptal edildiğini söyler"),
}
