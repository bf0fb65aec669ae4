//! `lab explore`: its command line.
use clap::Args;

use crate::options::{CommonArgs, JobsArgs, LabDirArgs, SpecFormat};

/// Every interleaving of a spec at every isolation level, grouped by what happened.
#[derive(Debug, Clone, Args)]
#[command(
    after_help = "A spec that lists no permutation gets every interleaving of its steps, as \
                  isolationtester generates them; one that lists some runs them, or with \
                  --all-permutations every interleaving of each listed one's steps (its final \
                  read, a last session doing nothing before, stays last). A lab scenario or \
                  phenomenon is explored over every interleaving. Each run gets a signature \
                  (who waited for whom, which step failed with which SQLSTATE, what the final \
                  reads returned or whether `# occurs-if:` held); runs with the same signature \
                  form a class.\n\
                  Exit codes: 0 every level ran (and is as the spec's `# expect:` documents), \
                  1 a level is not as documented, 2 could not run.",
    mut_arg("jobs", |a| a.help(
        "Permutations run at once, each worker in a schema of its own (default: one per core to start, up \
         to 2 per core while each one added makes the runs faster)")),
    mut_arg("junit", |a| a.help("Also write a JUnit XML report (one test case per level) to FILE")),
    mut_arg("html", |a| a.help(
        "Also write a self-contained HTML report (each level's classes, each with the swimlanes of its \
         representative) to FILE")),
)]
pub struct ExploreArgs {
    /// A spec file, or a lab scenario with a spec (write-skew) or a phenomenon (g2-item).
    #[arg(value_name = "SPEC|SCENARIO|PHENOMENON")]
    pub spec: String,

    /// Only this level (repeatable): read-uncommitted, read-committed,
    /// repeatable-read, serializable, or all (the default).
    #[arg(long, value_name = "LEVEL")]
    pub level: Vec<String>,

    /// Where the spec lists permutations: every interleaving of their steps instead.
    #[arg(long)]
    pub all_permutations: bool,

    /// Run N interleavings drawn at random (the same N for the same --seed).
    #[arg(long, value_name = "N")]
    pub sample: Option<usize>,

    /// The seed of --sample.
    #[arg(long, default_value_t = 1, value_name = "S")]
    pub seed: u64,

    /// Output format (isolation: what isolationtester prints for the spec, at its own level).
    #[arg(long, value_enum, ignore_case = true, default_value_t = SpecFormat::Table)]
    pub format: SpecFormat,

    /// Workshop mode: after exploring, run one class's representative again,
    /// showing each step and waiting for Enter (needs a terminal and one level).
    #[arg(long)]
    pub step: bool,

    /// The class --step walks through (1: the largest).
    #[arg(long, default_value_t = 1, value_name = "N", requires = "step")]
    pub class: usize,

    #[command(flatten)]
    pub jobs: JobsArgs,

    #[command(flatten)]
    pub lab_dir: LabDirArgs,

    #[command(flatten)]
    pub common: CommonArgs,
}

crate::help_tr! {
    ("cmd.explore", "Bir spec'in her iç içe geçişi, her izolasyon seviyesinde, ne olduğuna göre gruplanmış"),
    ("after.explore", "Permütasyon listelemeyen bir spec, adımlarının isolationtester'ın ürettiği her iç içe geçişini alır; listeleyen bir spec onları çalıştırır, --all-permutations ile de listelenen her permütasyonun adımlarının her iç içe geçişini (son okuması, öncesinde bir şey yapmayan son oturum, sonda kalır). Bir lab senaryosu ya da fenomeni her iç içe geçişiyle keşfedilir. Her koşu bir imza alır (kim kimi bekledi, hangi adım hangi SQLSTATE ile bitti, son okumalar ne döndü ya da `# occurs-if:` tuttu mu); aynı imzalı koşular bir sınıf oluşturur.\nÇıkış kodları: 0 her seviye çalıştı (ve spec'in `# expect:` satırının belgelediği gibi), 1 bir seviye belgelendiği gibi değil, 2 çalıştırılamadı."),
    ("arg.explore.spec", "Bir spec dosyası ya da spec'i olan bir lab senaryosu (write-skew) veya bir fenomen (g2-item)"),
    ("arg.explore.level", "Yalnızca bu seviye (tekrarlanabilir): read-uncommitted, read-committed, repeatable-read, serializable ya da all (varsayılan)"),
    ("arg.explore.all_permutations", "Spec permütasyon listeliyorsa: onların yerine adımlarının her iç içe geçişi"),
    ("arg.explore.sample", "Rastgele seçilmiş N iç içe geçiş çalıştır (aynı --seed için aynı N)"),
    ("arg.explore.seed", "--sample'ın tohumu"),
    ("arg.explore.jobs", "Aynı anda çalışan permütasyon sayısı, her işçi kendi şemasında (varsayılan: çekirdek başına 2)"),
    ("arg.explore.format", "Çıktı biçimi (isolation: isolationtester'ın spec için, kendi seviyesinde yazdırdığı)"),
    ("arg.explore.junit", "Ayrıca FILE dosyasına bir JUnit XML raporu yaz (seviye başına bir test case)"),
    ("arg.explore.html", "Ayrıca FILE dosyasına kendi içinde tam bir HTML raporu yaz (her seviyenin sınıfları, her biri temsilcisinin swimlane'leriyle)"),
    ("arg.explore.wait_timeout", "Bir adım için saniye cinsinden son süre"),
    ("arg.explore.step", "Atölye modu: keşiften sonra bir sınıfın temsilcisini yeniden çalıştır, her adımı göster ve Enter'ı bekle (terminal ve tek seviye gerekir)"),
    ("arg.explore.class", "--step'in adım adım yürüttüğü sınıf (1: en büyüğü)"),
    ("arg.explore.lab_dir", "lab'ın spec'lerini DIR içindeki düzenlenmiş kopyalardan al (DIR'de olmayan dosya lab'ın kendi kopyasından gelir)"),
}
