//! `lab server`: the throwaway cluster with the lab schema, until Ctrl-C.
use anyhow::Result;
use clap::Args;

use crate::files;
use crate::harness::{Signals, msg, start_target};
use crate::i18n::{self, Context, Lang, ui};
use crate::output::{Exit, out};
use crate::postgres::RunOn;
use crate::postgres::connect;

/// Start the throwaway PostgreSQL with the lab schema and keep it until Ctrl-C.
#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    #[command(flatten)]
    pub local: crate::options::LocalArgs,

    #[command(flatten)]
    pub schema: crate::options::SchemaArgs,
}

/// The throwaway cluster's options, checked.
pub fn run(args: &ServeArgs, lang: Lang) -> Result<Exit> {
    let schema = crate::options::check_schema(&args.schema.schema)?;
    crate::harness::block_on(serve(args.local.pg_bin.clone(), schema, args.local.tls, lang))
}

/// `lab server`: the throwaway cluster with the lab schema, until Ctrl-C.
pub async fn serve(pg_bin: Option<std::path::PathBuf>, schema: String, tls: bool, lang: Lang) -> Result<Exit> {
    let mut signals = Signals::new()?;
    let (cluster, pg) = start_target(
        &RunOn::Throwaway {
            pg_bin,
            conf: String::new(),
            tls,
        },
        lang,
    )
    .await?;
    let cluster = cluster.ctx(msg::no_cluster)?;
    // Named as every lab control connection is, so `lab locks` leaves it out.
    let silence = crate::postgres::watchdog::control_silence(std::time::Duration::ZERO);
    let control = connect::connect_control(&pg, "lab:server:control", None, silence)
        .await?
        .client;
    let server = connect::server_info(&control).await?;
    files::LabFiles::embedded().build_schema(&control, &schema).await?;
    let url = cluster.url();
    // With --tls the URL has a query already, and an & the shell would take.
    let sep = if url.contains('?') { '&' } else { '?' };
    let quoted = if url.contains('&') {
        format!("'{url}'")
    } else {
        url.clone()
    };
    let say = |t: i18n::Text| t.render(lang);
    let running = say(ui::server_running(
        &server.version,
        cluster.startup.as_millis() as u64,
        &schema,
    ));
    // The DATABASE_URL= and binaries: lines are read by scripts: they stay as they are.
    out(&format!(
        "{running}\n\
         binaries: {}\n\
         DATABASE_URL={url}\n\
         psql \"{url}{sep}options=-csearch_path%3D{schema}\"\n\
         PGOPTIONS='-c search_path={schema}' isolationtester \"{url}\" < lab/lost-update.spec\n\
         {}: lab <scenario> --database-url {quoted}\n\
         lab locks --database-url {quoted}\n\
         {}\n",
        cluster.bin.display(),
        say(ui::server_run_against()),
        say(ui::server_stop()),
    ))?;
    signals.recv().await;
    drop(control);
    drop(cluster);
    crate::output::eline!("{}", say(ui::server_stopped()));
    Ok(Exit::Ok)
}

impl crate::options::Run for ServeArgs {
    fn run(self, cx: &crate::options::Invocation<'_>) -> Result<Exit> {
        run(&self, cx.lang)
    }
}

crate::help_tr! {
    ("cmd.server", "Geçici PostgreSQL'i lab şemasıyla başlat ve Ctrl-C'ye kadar açık tut"),
}
