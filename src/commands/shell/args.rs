//! `lab shell`: its command line.
use std::path::PathBuf;

use clap::Args;

use crate::options::{LabSchemaArgs, ServerArgs};

/// Several sessions in one terminal: waits shown live as the server confirms them, what ran saved as a spec.
#[derive(Debug, Clone, Args)]
#[command(
    after_help = "Statements end with ';' and go to the current session; `B: <sql>;` sends one to B. \
                  A statement that waits gives the prompt back at once, with whom it waits for; \
                  its answer is printed when it comes. \\? lists the commands (\\s B, \\timeline, \\locks, \\save FILE.spec, \\run STEP, \\predict); \
                  Ctrl-C cancels the current session's statement; \\q or Ctrl-D leaves."
)]
pub struct ShellArgs {
    /// The sessions, each on its own connection (default A,B).
    #[arg(long, value_name = "A,B,...")]
    pub sessions: Option<String>,

    /// Load a spec: its setup runs, its sessions are the shell's, `\run STEP` runs its steps.
    #[arg(long, value_name = "FILE")]
    pub spec: Option<PathBuf>,

    /// Guess first: before each statement, say what it will do; a tally at the end.
    #[arg(long)]
    pub predict: bool,

    #[command(flatten)]
    pub server: ServerArgs,

    #[command(flatten)]
    pub schema: LabSchemaArgs,
}

crate::help_tr! {
    ("cmd.shell", "Tek bir terminalde birkaç oturum: beklemeler sunucu onayladıkça canlı gösterilir, çalışanlar bir spec olarak kaydedilir"),
    ("after.shell", "İfadeler ';' ile biter ve geçerli oturuma gider; `B: <sql>;` birini B'ye gönderir. Bekleyen bir ifade istemi hemen geri verir, kimi beklediğiyle birlikte; cevabı geldiğinde yazılır. \\? komutları listeler (\\s B, \\timeline, \\locks, \\save FILE.spec, \\run STEP, \\predict); Ctrl-C geçerli oturumun ifadesini iptal eder; \\q ya da Ctrl-D çıkar."),
    ("arg.shell.sessions", "Oturumlar, her biri kendi bağlantısında (varsayılan A,B)"),
    ("arg.shell.spec", "Bir spec yükle: setup'ı çalıştırılır, oturumları kabuğun oturumları olur, `\\run STEP` adımlarını çalıştırır"),
    ("arg.shell.predict", "Önce tahmin: her ifadeden önce ne yapacağını söyleyin; sonunda bir sayım"),
}
