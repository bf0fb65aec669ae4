//! `lab locks`: a refreshing table of lab's sessions on a server: who waits,
//! for which lock mode, blocked by whom, for how long, running what. For a
//! second terminal next to `--step`.
use std::io::IsTerminal;
use std::time::Duration;

use anyhow::Result;

use crate::db;
use crate::i18n::{Lang, fill};
use crate::render::{Style, table};
use crate::sql::SqlFile;

static SQL: SqlFile = SqlFile::new("lab/locks.sql", include_str!("../lab/locks.sql"));

/// One snapshot of the view, as text.
pub async fn snapshot(
    client: &tokio_postgres::Client,
    version: &str,
    every: Duration,
    style: &Style,
) -> Result<String> {
    let ui = &style.lang.texts().ui;
    let rows = client
        .query(SQL.get("lab_sessions")?, &[])
        .await
        .map_err(|e| db::sql_error(e, &crate::tr!("en.read_activity")))?;
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
        .map_err(|e| db::sql_error(e, &crate::tr!("ru.read_clock")))?
        .get::<_, String>(0);
    let title = fill(
        ui.locks_title,
        &[("version", &version), ("time", &now), ("every", &every.as_secs_f64())],
    );
    if rows.is_empty() {
        return Ok(format!("{title}\n{}\n", ui.locks_none));
    }
    let mut t = table(
        vec![
            ui.col_pid,
            ui.col_session,
            ui.col_state,
            ui.col_wait_event,
            ui.col_blocked_by,
            ui.col_lock_mode,
            ui.col_waiting,
            ui.col_query,
        ],
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
    let client = db::connect(&config, "lab-locks", None).await?;
    let server = db::server_info(&client).await?;
    let style = Style::for_stdout(lang, false);
    let clear = std::io::stdout().is_terminal();
    loop {
        let text = snapshot(&client, &server.version, every, &style).await?;
        if clear {
            print!("\x1b[2J\x1b[H");
        }
        print!("{text}");
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
