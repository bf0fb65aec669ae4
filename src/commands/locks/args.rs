//! `lab locks`: its command line.
use clap::Args;

use crate::options::UrlArgs;

/// Live lock view: lab's sessions on a server, who waits for whom, refreshed.
#[derive(Debug, Clone, Args)]
#[command(mut_arg("database_url", |a| a.help("The server to watch (the URL `lab server` prints)")))]
pub struct LocksArgs {
    #[command(flatten)]
    pub url: UrlArgs,

    /// Seconds between refreshes.
    #[arg(long, default_value_t = 1.0, value_name = "SECONDS")]
    pub every: f64,

    /// Print the view once (without the refresh line) and exit.
    #[arg(long)]
    pub once: bool,

    /// Also show sessions that are not lab's (the room's psql windows, a
    /// by-hand exercise).
    #[arg(long)]
    pub all: bool,
}

crate::help_tr! {
    ("arg.locks.every", "Yenilemeler arasındaki saniye"),
    ("arg.locks.once", "Görünümü bir kez (yenileme satırı olmadan) yazdır ve çık"),
    ("arg.locks.all", "lab'ın olmayan oturumları da göster (salondaki psql pencereleri, elle yapılan bir alıştırma)"),
    ("cmd.locks", "Canlı kilit görünümü: bir sunucudaki lab oturumları, kim kimi bekliyor, yenilenerek"),
    ("arg.locks.database_url", "İzlenecek sunucu (`lab server`'ın yazdığı URL)"),
}
