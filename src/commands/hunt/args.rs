//! `lab hunt`: its command line.
use std::path::PathBuf;

use clap::{Args, ValueEnum};

use crate::options::{CommonArgs, LabDirArgs};

/// Find anomalies nobody scripted: random list-append transactions, their history checked, a spec replaying each.
#[derive(Debug, Clone, Args)]
#[command(
    after_help = "C sessions run generated transactions over K keys of a list-append table \
                  (a read is SELECT v, an append INSERT ... ON CONFLICT DO UPDATE SET v = v || x; \
                  every appended element is unique); the same seed gives the same transactions. \
                  With --workload predicate, predicate reads too (SELECT k, v ... WHERE k BETWEEN \
                  a AND b over a closed block of keys): a row a range did not return and another \
                  transaction inserted is a phantom, and a cycle through one is G2. \
                  The history is checked as Elle checks list-append: ww, wr and rw dependencies \
                  inferred from what the reads returned, cycles classified as G0, G1c, G-single, \
                  G-nonadjacent, G2-item (G2), and G1a, G1b, lost and dirty updates, garbage, future \
                  and internal reads. Each level is held to the model PostgreSQL documents: READ \
                  COMMITTED to read committed (forbids G0, G1a, G1b, G1c); REPEATABLE READ to \
                  snapshot isolation (also G-single, G-nonadjacent, lost updates); SERIALIZABLE \
                  to serializability (every cycle). For each cycle found lab writes an isolationtester spec that replays it, \
                  replays it and says whether the checker sees the anomaly again.\n\
                  Exit codes: 0 no anomaly a level forbids, 1 a forbidden anomaly (or a level not \
                  read back as asked), 2 could not run, 130 interrupted (the history so far is checked).",
    mut_arg("junit", |a| a.help("Also write a JUnit XML report (one test case per anomaly class and level) to FILE")),
    mut_arg("html", |a| a.help(
        "Also write a self-contained HTML report (each anomaly's cycle beside its transactions' swimlanes) to FILE")),
    mut_arg("wait_timeout", |a| a.help("Deadline, in seconds, for any one statement")),
)]
pub struct HuntArgs {
    /// read-uncommitted, read-committed, repeatable-read, serializable, or all
    /// (the default: the three levels that differ in PostgreSQL; repeatable).
    #[arg(long, value_name = "LEVEL")]
    pub level: Vec<String>,

    /// Keys in play at once (a key takes 32 appends, then a fresh one replaces it).
    #[arg(long, default_value_t = 4, value_name = "K")]
    pub keys: usize,

    /// Sessions running transactions at once.
    #[arg(long, default_value_t = 4, value_name = "C")]
    pub clients: usize,

    /// Transactions per level (default 2000).
    #[arg(long, value_name = "N", conflicts_with = "seconds")]
    pub txns: Option<u64>,

    /// Run each level for S seconds instead of a number of transactions.
    #[arg(long, value_name = "S")]
    pub seconds: Option<f64>,

    /// The seed the transactions come from.
    #[arg(long, default_value_t = 1, value_name = "SEED")]
    pub seed: u64,

    /// Operations per transaction, at most.
    #[arg(long, default_value_t = 4, value_name = "N")]
    pub ops: usize,

    /// The most connections the run may use, its control connection included.
    #[arg(long, value_name = "N")]
    pub max_connections: Option<usize>,

    /// Write the history as JSON lines to FILE (with several levels, FILE.LEVEL.jsonl each).
    #[arg(long, value_name = "FILE")]
    pub history: Option<PathBuf>,

    /// Check a recorded history (lab's JSON lines or Jepsen's history.edn) without a server.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["txns", "seconds", "history"])]
    pub check: Option<PathBuf>,

    /// Also order transactions by real time (one ended before the other began).
    #[arg(long)]
    pub realtime: bool,

    /// Also order each session's transactions as it ran them.
    #[arg(long)]
    pub session_order: bool,

    /// rw-register: assume each key sequentially consistent (each session sees its versions in order).
    #[arg(long)]
    pub sequential_keys: bool,

    /// rw-register: assume each key linearizable (an operation sees every version written before it began).
    #[arg(long)]
    pub linearizable_keys: bool,

    /// Every cycle class of every strongly connected component, not one per class.
    #[arg(long)]
    pub all_cycles: bool,

    /// Where the reproducers are written.
    #[arg(long, default_value = "lab-hunt", value_name = "DIR")]
    pub specs: PathBuf,

    /// Write no reproducers.
    #[arg(long)]
    pub no_specs: bool,

    /// Times each reproducer is replayed.
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub replays: usize,

    /// Keep every operation of the cycle's transactions in the reproducer.
    #[arg(long)]
    pub no_shrink: bool,

    /// Faults injected while the transactions run, as Jepsen's nemeses:
    /// pause (SIGSTOP of a backend), kill (SIGKILL of a backend: crash
    /// recovery), restart (immediate shutdown and start), partition (lab's
    /// fault proxy cuts sessions off), failover (on lab's HA cluster,
    /// Patroni and three nodes: the primary killed or cut off until another
    /// is promoted; alone). pause, kill, restart and failover need lab's
    /// own server (no --database-url).
    #[arg(long, value_name = "FAULT,...", conflicts_with = "check")]
    pub nemesis: Vec<String>,

    /// Milliseconds between one fault's end and the next one's start.
    #[arg(long, default_value_t = 200, value_name = "MS")]
    pub nemesis_interval: u64,

    /// Start a streaming standby of lab's own server and send each read-only
    /// transaction to it or to the primary at random (seeded), recorded
    /// with the node and the standby's replay LSN; at serializable every
    /// transaction stays on the primary (a hot standby refuses it).
    #[arg(long, conflicts_with = "check")]
    pub replica: bool,

    /// With --replica: lab's standby made synchronous (named in the
    /// primary's synchronous_standby_names) and every commit waiting as
    /// synchronous_commit = MODE says, as in a cluster with synchronous
    /// replication; confirmed from the server before the transactions start.
    /// A commit waiting for the standby is visible there before it is on the
    /// primary: with remote-apply and --nemesis pause, Long Fork in seconds.
    #[arg(long, value_enum, requires = "replica", conflicts_with = "via", value_name = "MODE")]
    pub sync_replica: Option<SyncReplica>,

    /// With --replica: every session through lab's own pgpool-II in front
    /// of the primary and the standby (load balancing on, lab/pgpool.conf),
    /// as an application behind it; pgpool-II, not lab, decides where each
    /// statement goes, and each read records which server answered it.
    #[arg(
        long,
        value_enum,
        requires = "replica",
        conflicts_with = "check",
        value_name = "POOLER"
    )]
    pub via: Option<HuntVia>,

    /// The transactions: list-append (appends and reads of one key),
    /// predicate (predicate reads too, SELECT ... WHERE k BETWEEN a AND b
    /// over a closed block of keys, where an append that makes a row is an
    /// insert into every range holding its key: phantoms and predicate
    /// write skew, named G2), or rw-register (blind writes of whole values
    /// and reads of one value; each key's version order taken from the
    /// server's commit order, pg_xact_commit_timestamp, as Emme does).
    #[arg(long, value_enum, default_value_t = HuntWorkload::ListAppend, conflicts_with = "check")]
    pub workload: HuntWorkload,

    /// Output format.
    #[arg(long, value_enum, ignore_case = true, default_value_t = HuntFormat::Table)]
    pub format: HuntFormat,

    #[command(flatten)]
    pub lab_dir: LabDirArgs,

    #[command(flatten)]
    pub common: CommonArgs,
}

/// What a commit waits for from lab's synchronous standby (`--sync-replica`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SyncReplica {
    /// The standby has flushed the commit record (synchronous_commit = on).
    On,
    /// The standby has written it (remote_write).
    RemoteWrite,
    /// The standby has applied it: visible there (remote_apply).
    RemoteApply,
}

impl SyncReplica {
    /// The value of synchronous_commit.
    pub fn setting(self) -> &'static str {
        match self {
            SyncReplica::On => "on",
            SyncReplica::RemoteWrite => "remote_write",
            SyncReplica::RemoteApply => "remote_apply",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum HuntWorkload {
    ListAppend,
    Predicate,
    RwRegister,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum HuntVia {
    Pgpool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum HuntFormat {
    Table,
    Json,
    /// The classes judged at each level as a Markdown table (a GitHub job's step summary).
    Markdown,
}

crate::help_tr! {
    ("cmd.hunt", "Kimsenin yazmadığı anomalileri bul: rastgele list-append işlemleri, geçmişlerinin denetimi, her birini yeniden oynatan bir spec"),
    ("after.hunt", "C oturum, bir list-append tablosunun K anahtarı üzerinde üretilmiş işlemler çalıştırır (okuma SELECT v, ekleme INSERT ... ON CONFLICT DO UPDATE SET v = v || x; her eklenen öğe tektir); aynı seed aynı işlemleri verir. --workload predicate ile koşullu okumalar da (kapalı bir anahtar bloğu üzerinde SELECT k, v ... WHERE k BETWEEN a AND b): bir aralığın döndürmediği ve başka bir işlemin eklediği satır hayalet satırdır ve ondan geçen döngü G2'dir. Geçmiş Elle'in list-append denetimiyle denetlenir: okumaların döndürdüğünden çıkarılan ww, wr ve rw bağımlılıkları, G0, G1c, G-single, G-nonadjacent, G2-item (G2) olarak sınıflanan döngüler ve G1a, G1b, kayıp ve kirli güncellemeler, çöp, gelecekten ve iç tutarsız okumalar. Her düzey PostgreSQL'in belgelediği modele göre değerlendirilir: READ COMMITTED read committed'a (G0, G1a, G1b, G1c yasak); REPEATABLE READ snapshot isolation'a (G-single, G-nonadjacent, kayıp güncellemeler de); SERIALIZABLE serializability'ye (her döngü). Bulunan her döngü için lab onu yeniden oynatan bir isolationtester spec'i yazar, oynatır ve denetleyicinin anomaliyi yeniden görüp görmediğini söyler.\nÇıkış kodları: 0 hiçbir düzeyin yasakladığı anomali yok, 1 yasak bir anomali (ya da istendiği gibi okunmayan bir düzey), 2 çalıştırılamadı, 130 kesildi (o ana kadarki geçmiş denetlenir)."),
    ("arg.hunt.level", "read-uncommitted, read-committed, repeatable-read, serializable ya da all (varsayılan: PostgreSQL'de farklı davranan üç düzey; tekrarlanabilir)"),
    ("arg.hunt.keys", "Aynı anda oyundaki anahtar sayısı (bir anahtar 32 ekleme alır, sonra yerini yeni bir anahtar alır)"),
    ("arg.hunt.clients", "Aynı anda işlem çalıştıran oturum sayısı"),
    ("arg.hunt.txns", "Düzey başına işlem sayısı (varsayılan 2000)"),
    ("arg.hunt.seconds", "Her düzeyi bir işlem sayısı yerine S saniye çalıştır"),
    ("arg.hunt.seed", "İşlemlerin üretildiği seed"),
    ("arg.hunt.ops", "İşlem başına en çok işlem adımı"),
    ("arg.hunt.max_connections", "Çalıştırmanın kullanabileceği en çok bağlantı, kontrol bağlantısı dahil"),
    ("arg.hunt.history", "Geçmişi JSON satırları olarak FILE dosyasına yaz (birden çok düzeyde her biri FILE.DÜZEY.jsonl)"),
    ("arg.hunt.check", "Kaydedilmiş bir geçmişi (lab'ın JSON satırları ya da Jepsen'in history.edn dosyası) sunucusuz denetle"),
    ("arg.hunt.realtime", "İşlemleri gerçek zamana göre de sırala (biri öteki başlamadan bitti)"),
    ("arg.hunt.session_order", "Her oturumun işlemlerini çalıştırdığı sırayla da sırala"),
    ("arg.hunt.sequential_keys", "rw-register: her anahtarı sıralı tutarlı say (her oturum sürümlerini sırayla görür)"),
    ("arg.hunt.linearizable_keys", "rw-register: her anahtarı doğrusallaştırılabilir say (bir işlem, başlamadan önce yazılmış her sürümü görür)"),
    ("arg.hunt.all_cycles", "Sınıf başına bir değil, her güçlü bağlı bileşenin her döngü sınıfı"),
    ("arg.hunt.specs", "Yeniden üreticilerin yazılacağı dizin"),
    ("arg.hunt.no_specs", "Yeniden üretici yazma"),
    ("arg.hunt.replays", "Her yeniden üreticinin kaç kez oynatılacağı"),
    ("arg.hunt.no_shrink", "Yeniden üreticide döngünün işlemlerinin her adımını tut"),
    ("arg.hunt.nemesis", "İşlemler çalışırken Jepsen'in nemesis'leri gibi enjekte edilen hatalar: pause (bir backend'e SIGSTOP), kill (bir backend'e SIGKILL: çökme kurtarması), restart (anında kapatma ve başlatma), partition (lab'ın hata proxy'si oturumları sunucudan koparır), failover (lab'ın HA cluster'ında, Patroni ve üç düğüm: başka biri terfi edene kadar primary öldürülür ya da koparılır; tek başına). pause, kill, restart ve failover lab'ın kendi sunucusunu ister (--database-url olmadan)"),
    ("arg.hunt.nemesis_interval", "Bir hatanın bitişiyle sonrakinin başlangıcı arasındaki milisaniye"),
    ("arg.hunt.replica", "lab'ın kendi sunucusunun akışlı bir yedeğini (standby) başlat ve her salt okunur işlemi rastgele (tohumdan) ona ya da birincile gönder; düğüm ve yedeğin replay LSN'i ile kaydedilir; serializable'da her işlem birincilde kalır (hot standby onu reddeder)"),
    ("arg.hunt.workload", "İşlemler: list-append (tek anahtarın eklemeleri ve okumaları) predicate (koşullu okumalar da: kapalı bir anahtar bloğu üzerinde SELECT ... WHERE k BETWEEN a AND b; bir satırı yaratan ekleme, anahtarını içeren her aralığa bir insert'tür: hayalet satırlar ve koşullu write skew, G2 diye adlandırılır) ya da rw-register (değerlerin bütün olarak kör yazılması ve tek değer okumaları; her anahtarın sürüm sırası Emme'nin yaptığı gibi sunucunun commit sırasından, pg_xact_commit_timestamp, alınır)"),
    ("arg.hunt.sync_replica", "--replica ile: lab'ın standby'ı eşzamanlı yapılır (birincilin synchronous_standby_names'inde) ve her commit synchronous_commit = MODE'un dediğini bekler, eşzamanlı replikasyonlu bir kümede olduğu gibi; işlemler başlamadan sunucudan doğrulanır. Standby'ı bekleyen bir commit orada birincilden önce görünür: remote-apply ve --nemesis pause ile Long Fork saniyeler içinde"),
    ("arg.hunt.via", "--replica ile: her oturum birincilin ve standby'ın önündeki lab'ın kendi pgpool-II'si üzerinden (yük dengeleme açık, lab/pgpool.conf), arkasındaki bir uygulama gibi; her ifadenin nereye gideceğine lab değil pgpool-II karar verir ve her okuma hangi sunucunun cevap verdiğini kaydeder"),
    ("arg.hunt.format", "Çıktı biçimi"),
    ("arg.hunt.junit", "Ayrıca FILE dosyasına bir JUnit XML raporu yaz (anomali sınıfı ve düzey başına bir test case)"),
    ("arg.hunt.html", "Ayrıca FILE dosyasına kendi içinde tam bir HTML raporu yaz (her anomalinin döngüsü, işlemlerinin swimlane'lerinin yanında)"),
    ("arg.hunt.wait_timeout", "Bir ifade için saniye cinsinden son süre"),
}
