//! `lab locks`: a refreshing table of lab's sessions on a server: who waits,
//! for which lock mode, blocked by whom, for how long, running what. For a
//! second terminal next to `--step`.
pub mod args;

use std::io::IsTerminal;
use std::time::Duration;

use anyhow::{Result, bail};

use crate::output::Exit;
use crate::postgres::conninfo::EnvLookup;

use crate::files::LabFiles;
use crate::i18n::{Context, Lang, ui};
use crate::named_sql::SqlFile;
use crate::output::wrap;
use crate::postgres::connect;
use crate::render::Style;

/// The view's width: it is read on a projector and pasted into issues.
const WIDTH: usize = 80;

/// What to show: lab's sessions, or every client's (the room's psql windows too).
#[derive(Debug, Clone, Copy)]
pub struct View {
    pub all: bool,
    pub once: bool,
    pub every: Duration,
}

/// `lab locks`: the server named, the view checked, then watched.
pub fn run(args: &args::LocksArgs, env: EnvLookup<'_>, lang: Lang) -> Result<Exit> {
    // The server as libpq finds it: the URL, else a service and the PG* variables.
    let given = args.url.database_url.as_deref().filter(|u| !u.trim().is_empty());
    let config = match crate::postgres::conninfo::resolve(given, None, env, lang)? {
        crate::postgres::RunOn::Server(c, _) => *c,
        crate::postgres::RunOn::Throwaway { .. } => bail!(ui::locks_needs_server()),
    };
    if !(args.every.is_finite() && (0.1..=3600.0).contains(&args.every)) {
        bail!(crate::options::msg::between("--every", 0.1, 3600));
    }
    let view = View {
        all: args.all,
        once: args.once,
        every: Duration::from_secs_f64(args.every),
    };
    crate::harness::block_on(watch(config, view, lang))
}

/// One snapshot of the view, as text: a block per session, wrapped at 80 columns.
pub async fn snapshot(client: &tokio_postgres::Client, version: &str, view: View, style: &Style) -> Result<String> {
    let sql = SqlFile::load(&LabFiles::embedded(), "locks.sql")?;
    let mut query = sql
        .get(if view.all { "all_sessions" } else { "lab_sessions" })?
        .to_string();
    if version.split('.').next().and_then(|m| m.parse::<u32>().ok()) < Some(14) {
        // pg_locks.waitstart came in 14: before it, how long is not shown.
        query = query.replace("min(l.waitstart)", "NULL::timestamptz");
    }
    let rows = client
        .query(&query, &[])
        .await
        .map_err(|e| connect::sql_error(e, crate::engine::msg::read_activity()))?;
    let names: Vec<(i32, String)> = rows
        .iter()
        .map(|r| (r.get::<_, i32>("pid"), r.get::<_, String>("session")))
        .collect();
    let name_of = |pid: i32| {
        names
            .iter()
            .find(|(p, _)| *p == pid)
            .map_or_else(|| pid.to_string(), |(_, n)| format!("{n} ({pid})"))
    };
    let now = client
        .query_one("SELECT to_char(clock_timestamp(), 'HH24:MI:SS')", &[])
        .await
        .ctx(msg::read_clock)?
        .get::<_, String>(0);
    let title = if view.once {
        ui::locks_title_once(version, now)
    } else {
        ui::locks_title(version, now, view.every.as_secs_f64())
    };
    let mut out: Vec<String> = wrap(&style.say(&title), WIDTH, 2);
    if rows.is_empty() {
        out.extend(wrap(&style.say(&ui::locks_none()), WIDTH, 2));
    }
    for r in &rows {
        let pid = r.get::<_, i32>("pid");
        let blocked: Vec<i32> = r.get("blocked_by");
        let mut facts = vec![format!(
            "{}: {}",
            style.say(&ui::col_state()),
            r.get::<_, Option<String>>("state").unwrap_or_default()
        )];
        if !blocked.is_empty() {
            let by = blocked.into_iter().map(name_of).collect::<Vec<_>>().join(", ");
            facts.push(format!("{}: {by}", style.say(&ui::col_blocked_by())));
        }
        for (label, column) in [
            (ui::col_lock_mode(), "lock_mode"),
            (ui::col_waiting(), "waiting"),
            (ui::col_wait_event(), "wait_event"),
        ] {
            let value: String = r.get(column);
            if !value.is_empty() {
                facts.push(format!("{}: {value}", style.say(&label)));
            }
        }
        out.push(String::new());
        let head = format!(
            "{} ({}: {pid}) · {}",
            r.get::<_, String>("session"),
            style.say(&ui::col_pid()),
            facts.join(" · ")
        );
        out.extend(wrap(&head, WIDTH, 4));
        let query = r.get::<_, Option<String>>("query").unwrap_or_default();
        if !query.is_empty() {
            let line = format!("    {}: {query}", style.say(&ui::col_query()));
            out.extend(wrap(&line, WIDTH, 6));
        }
    }
    Ok(out.join("\n") + "\n")
}

/// Prints the view every `every` until Ctrl-C (or once).
pub async fn watch(config: crate::postgres::ConnInfo, view: View, lang: Lang) -> Result<crate::output::Exit> {
    let silence = crate::postgres::watchdog::control_silence(std::time::Duration::ZERO);
    let client = connect::connect_control(&config, "lab-locks", None, silence)
        .await?
        .client;
    let server = connect::server_info(&client).await?;
    let style = Style::for_stdout(lang, false);
    let clear = std::io::stdout().is_terminal();
    loop {
        let text = snapshot(&client, &server.version, view, &style).await?;
        if clear {
            crate::output::out("\x1b[2J\x1b[H")?;
        }
        crate::output::out(&text)?;
        if view.once {
            return Ok(crate::output::Exit::Ok);
        }
        // The view's refresh period (a display loop, nothing waits on it).
        tokio::select! {
            _ = tokio::time::sleep(view.every) => {}
            _ = tokio::signal::ctrl_c() => return Ok(crate::output::Exit::Ok),
        }
    }
}

pub(crate) mod msg {
    crate::messages! {
        prefix "lk";
        read_clock() {
            en: "could not read the server's clock",
            tr: "sunucunun saati okunamadı",
        }
    }
}

impl crate::options::Run for args::LocksArgs {
    fn run(self, cx: &crate::options::Invocation<'_>) -> Result<Exit> {
        run(&self, cx.env, cx.lang)
    }
}
