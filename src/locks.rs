//! `lab locks`: a refreshing table of lab's sessions on a server: who waits,
//! for which lock mode, blocked by whom, for how long, running what. For a
//! second terminal next to `--step`.
use std::io::IsTerminal;
use std::time::Duration;

use anyhow::Result;

use crate::files::LabFiles;
use crate::i18n::{Context, Lang, ui};
use crate::render::{Style, table};
use crate::sql::SqlFile;
use crate::target::connect;

/// One snapshot of the view, as text.
pub async fn snapshot(
    client: &tokio_postgres::Client,
    version: &str,
    every: Duration,
    style: &Style,
) -> Result<String> {
    let sql = SqlFile::load(&LabFiles::embedded(), "locks.sql")?;
    let rows = client
        .query(sql.get("lab_sessions")?, &[])
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
    let title = style.say(&ui::locks_title(version, now, every.as_secs_f64()));
    if rows.is_empty() {
        return Ok(format!("{title}\n{}\n", style.say(&ui::locks_none())));
    }
    let mut t = table(
        [
            ui::col_pid(),
            ui::col_session(),
            ui::col_state(),
            ui::col_wait_event(),
            ui::col_blocked_by(),
            ui::col_lock_mode(),
            ui::col_waiting(),
            ui::col_query(),
        ]
        .iter()
        .map(|t| style.say(t))
        .collect(),
        style,
    );
    for r in &rows {
        let blocked: Vec<i32> = r.get("blocked_by");
        t.add_row(vec![
            r.get::<_, i32>("pid").to_string(),
            r.get::<_, String>("session"),
            r.get::<_, Option<String>>("state").unwrap_or_default(),
            r.get::<_, String>("wait_event"),
            blocked.into_iter().map(name_of).collect::<Vec<_>>().join(", "),
            r.get::<_, String>("lock_mode"),
            r.get::<_, String>("waiting"),
            r.get::<_, Option<String>>("query").unwrap_or_default(),
        ]);
    }
    Ok(format!("{title}\n{t}\n"))
}

/// Prints the view every `every` until Ctrl-C (or once).
pub async fn watch(config: tokio_postgres::Config, every: Duration, once: bool, lang: Lang) -> Result<crate::Exit> {
    let client = connect::connect(&config, "lab-locks", None, None).await?.client;
    let server = connect::server_info(&client).await?;
    let style = Style::for_stdout(lang, false);
    let clear = std::io::stdout().is_terminal();
    loop {
        let text = snapshot(&client, &server.version, every, &style).await?;
        if clear {
            crate::out("\x1b[2J\x1b[H")?;
        }
        crate::out(&text)?;
        if once {
            return Ok(crate::Exit::Ok);
        }
        // The view's refresh period (a display loop, nothing waits on it).
        tokio::select! {
            _ = tokio::time::sleep(every) => {}
            _ = tokio::signal::ctrl_c() => return Ok(crate::Exit::Ok),
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
