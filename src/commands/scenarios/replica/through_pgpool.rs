//! The replica variants through pgpool-II (`lab replica --via pgpool`): lab's
//! own pgpool-II in front of the primary and the standby, load balancing on
//! (lab/pgpool.conf). The sessions connect to pgpool only, as an
//! application would; every read says which server answered it
//! (`pg_is_in_recovery()`), and staleness is made deterministic by pausing
//! replay on the standby, as in the other replica variants.
use anyhow::Result;

use super::msg;
use super::opts::ReplicaOpts;
use super::standby::{Standby, primary_lsn};
use crate::commands::scenarios::Cx;
use crate::engine::{Opener, Session};
use crate::named_sql::SqlFile;
use crate::postgres::pgpool::{self, Pgpool};
use crate::report::ResultSet;

/// lab's pgpool-II for one variant, and how to open sessions through it.
struct Balanced {
    pool: Pgpool,
    opener: Opener,
}

impl Balanced {
    async fn open(&self, name: &str) -> Result<Session> {
        self.opener.open(name).await
    }

    /// Stops pgpool-II (its connections to both servers end with it), then the standby.
    async fn stop(self, st: Standby) -> Result<()> {
        let Balanced { pool, opener } = self;
        drop(opener);
        tokio::task::spawn_blocking(move || drop(pool)).await?;
        st.stop().await
    }
}

/// The standby and lab's pgpool-II in front of it and the primary, with
/// `extra` lines in its configuration; none (the variant skipped, with
/// why) where pgpool-II or a standby cannot be had.
async fn start(cx: &mut Cx<'_>, extra: &str) -> Result<Option<(Standby, Balanced)>> {
    if let Err(e) = pgpool::find_bin() {
        // LAB_PGPOOL_BIN naming no program is a setup error (as is --via
        // pgpool, refused before the run); no pgpool-II at all skips.
        if pgpool::asked_for() {
            return Err(e);
        }
        cx.skip(msg::no_pgpool(pgpool::msg::install()));
        return Ok(None);
    }
    // pool_passwd keeps `user:password` a line, and pgpool-II fails the
    // login of a password with a colon in it (tried with 4.3.5).
    if cx
        .env
        .pg
        .get_password()
        .is_some_and(|p| p.contains(&b':') || p.contains(&b'\n'))
    {
        cx.skip(msg::pgpool_password());
        return Ok(None);
    }
    // pgpool-II checks a server's certificate chain (against a file), never
    // its host name: what the settings ask beyond that, it cannot do.
    let tls = &cx.env.pg.tls;
    use crate::postgres::tls::Check;
    if tls.check == Check::Full && cx.env.throwaway.is_none() {
        cx.skip(msg::pgpool_no_host_check(&tls.mode_origin, tls.mode.name()));
        return Ok(None);
    }
    if tls.check != Check::Nothing && tls.root_file.is_none() {
        cx.skip(msg::pgpool_no_root_file(&tls.mode_origin, tls.mode.name()));
        return Ok(None);
    }
    if let Some(why) = pgpool::unheld(&cx.env.pg) {
        cx.skip(why);
        return Ok(None);
    }
    let settings = cx.opts.files.read("pgpool.conf")?.into_owned();
    let Some(st) = Standby::start(cx, "").await? else {
        return Ok(None);
    };
    let (primary, standby) = (cx.env.pg.clone(), st.cfg.clone());
    let extra = extra.to_string();
    // On this thread, as the standby: pgpool-II's parent-death signal is
    // tied to the thread that starts it.
    let started = tokio::task::block_in_place(|| Pgpool::start(&primary, &standby, &settings, &extra));
    let pool = match started {
        Ok(p) => p,
        Err(e) => {
            st.stop().await?;
            return Err(e);
        }
    };
    let setting = if extra.is_empty() {
        "disable_load_balance_on_write = 'transaction' (its default)".to_string()
    } else {
        extra.clone()
    };
    cx.narrate(msg::pgpool_started(&pool.version, pool.port, &setting));
    cx.metric("pgpool", &pool.version);
    let database = cx.env.pg.get_dbname().unwrap_or("postgres").to_string();
    // As on a real server, COMMIT flushes its WAL, which is what the
    // standby is sent (lab's throwaway server runs with it off); set in the
    // startup packet, as every setting of these sessions: pgpool-II may
    // take a SET for a write.
    let mut cfg = pool.config(&database);
    cfg.options("-c synchronous_commit=on");
    // Listed with the variant's sessions: its end makes sure their
    // backends on the primary are gone too.
    let opener = cx.opener().balanced(cfg);
    Ok(Some((st, Balanced { pool, opener })))
}

/// A read's price and which server answered it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Answered {
    price: String,
    on_standby: Option<bool>,
}

impl Answered {
    fn of(set: &ResultSet) -> Answered {
        Answered {
            price: set.get(0, "price").unwrap_or("-").to_string(),
            on_standby: on_standby(set),
        }
    }

    fn by(&self) -> &'static str {
        by(self.on_standby)
    }

    fn is(&self, price: &str, on_standby: bool) -> bool {
        self.price == price && self.on_standby == Some(on_standby)
    }
}

/// `on_standby` as the server wrote it (`t`/`f`, or `true`/`false`).
fn on_standby(set: &ResultSet) -> Option<bool> {
    match set.get(0, "on_standby")? {
        "t" | "true" => Some(true),
        "f" | "false" => Some(false),
        _ => None,
    }
}

fn by(on_standby: Option<bool>) -> &'static str {
    match on_standby {
        Some(true) => "standby",
        Some(false) => "primary",
        None => "?",
    }
}

async fn read(s: &Session, sql: &SqlFile, step: &str) -> Result<Answered> {
    Ok(Answered::of(&s.rows(step, sql.get(step)?).await?))
}

/// The application's check of its token, through pgpool-II: whether the
/// server that answered has replayed up to it, and which server that was.
async fn token_check(c: &Session, sql: &SqlFile, token: &str) -> Result<(bool, &'static str)> {
    let set = c
        .rows("token_reached", &sql.bind("token_reached", &[("lsn", &token)])?)
        .await?;
    Ok((set.get(0, "replayed") == Some("t"), by(on_standby(&set))))
}

/// The write through pgpool-II and, once the standby has received it
/// (not replayed: replay is paused), the primary's WAL position.
async fn write_received(cx: &Cx<'_>, st: &Standby, c: &Session) -> Result<(String, bool)> {
    c.exec("write", st.sql.get("write")?).await?;
    let lsn = primary_lsn(cx).await?;
    let received = st.until("received", &lsn, cx.env.wait_timeout).await?;
    Ok((lsn, received))
}

pub(super) async fn pgpool_stale_read(cx: &mut Cx<'_>) -> Result<()> {
    let Some((st, b)) = start(cx, "").await? else {
        return Ok(());
    };
    let c = b.open("C").await?;
    st.pause(cx).await?;
    let before = read(&c, &st.sql, "read_where").await?;
    let (lsn, received) = write_received(cx, &st, &c).await?;
    let stale = read(&c, &st.sql, "read_where").await?;
    st.resume().await?;
    let replayed = st.until("replayed", &lsn, cx.env.wait_timeout).await?;
    let fresh = read(&c, &st.sql, "read_where").await?;
    drop(c);
    b.stop(st).await?;
    cx.check(before.on_standby == Some(true), msg::balanced(before.by()));
    cx.check(received, msg::received());
    cx.check(stale.is("42.00", true), msg::pgpool_stale(&stale.price, stale.by()));
    cx.check(
        replayed && fresh.is("45.00", true),
        msg::pgpool_caught_up(&fresh.price, fresh.by()),
    );
    cx.metric("read_after_write_by", stale.by());
    cx.observe(msg::observed_pgpool_stale(&stale.price, stale.by()));
    cx.anomaly(stale.price == "42.00");
    Ok(())
}

pub(super) async fn pgpool_write_sticky(cx: &mut Cx<'_>) -> Result<()> {
    let Some((st, b)) = start(cx, "disable_load_balance_on_write = 'always'").await? else {
        return Ok(());
    };
    let c = b.open("C").await?;
    st.pause(cx).await?;
    let before = read(&c, &st.sql, "read_where").await?;
    let (lsn, received) = write_received(cx, &st, &c).await?;
    let after = read(&c, &st.sql, "read_where").await?;
    st.resume().await?;
    let replayed = st.until("replayed", &lsn, cx.env.wait_timeout).await?;
    let later = read(&c, &st.sql, "read_where").await?;
    drop(c);
    b.stop(st).await?;
    cx.check(before.on_standby == Some(true), msg::balanced(before.by()));
    cx.check(received, msg::received());
    cx.check(
        after.is("45.00", false),
        msg::sticky_after_write(&after.price, after.by()),
    );
    cx.check(
        replayed && later.is("45.00", false),
        msg::sticky_later(&later.price, later.by()),
    );
    cx.metric("read_after_write_by", after.by());
    cx.metric("read_after_catch_up_by", later.by());
    cx.observe(msg::observed_pgpool_sticky(&after.price, after.by(), later.by()));
    cx.anomaly(after.price != "45.00");
    Ok(())
}

pub(super) async fn pgpool_lsn_token(cx: &mut Cx<'_>) -> Result<()> {
    let Some((st, b)) = start(cx, "").await? else {
        return Ok(());
    };
    let bound = std::time::Duration::from_millis(cx.options::<ReplicaOpts>().lsn_wait_ms);
    let c = b.open("C").await?;
    st.pause(cx).await?;
    c.exec("write", st.sql.get("write")?).await?;
    // The token, asked through pgpool-II: pg_current_wal_lsn() is volatile
    // and not in read_only_function_list, so the primary answers (a
    // standby would refuse it: recovery is in progress).
    let token = c
        .rows("write_lsn", st.sql.get("write_lsn")?)
        .await?
        .get(0, "lsn")
        .unwrap_or_default()
        .to_string();
    // The application waits (bounded) for the node reads are balanced to.
    let reached_in_time = st.until("replayed", &token, bound).await?;
    let (reached, check_by) = token_check(&c, &st.sql, &token).await?;
    let first = if reached {
        c.note(msg::token_reached(&token));
        read(&c, &st.sql, "read_where").await?
    } else {
        c.note(msg::token_not_reached(&token, bound.as_millis() as u64));
        read(&c, &st.sql, "read_primary").await?
    };
    st.resume().await?;
    let later = st.until("replayed", &token, cx.env.wait_timeout).await?;
    let (reached_later, again_by) = token_check(&c, &st.sql, &token).await?;
    if reached_later {
        c.note(msg::token_reached(&token));
    }
    let second = read(&c, &st.sql, "read_where").await?;
    drop(c);
    b.stop(st).await?;
    cx.check(
        !reached_in_time && !reached && check_by == "standby",
        msg::token_check_paused(check_by),
    );
    cx.check(
        first.is("45.00", false),
        msg::pgpool_fell_back(&first.price, first.by()),
    );
    cx.check(
        later && reached_later && again_by == "standby" && second.is("45.00", true),
        msg::pgpool_token_standby(&second.price, second.by()),
    );
    cx.metric("token", &token);
    cx.observe(msg::observed_pgpool_token(
        &first.price,
        first.by(),
        &second.price,
        second.by(),
    ));
    cx.anomaly(first.price != "45.00" || second.price != "45.00");
    Ok(())
}

pub(super) async fn pgpool_txn_split(cx: &mut Cx<'_>) -> Result<()> {
    let Some((st, b)) = start(cx, "").await? else {
        return Ok(());
    };
    let w = b.open("W").await?;
    let c = b.open("C").await?;
    st.pause(cx).await?;
    let (_, received) = write_received(cx, &st, &w).await?;
    c.exec("begin", st.sql.get("begin_rr_app")?).await?;
    let set = c.rows("read_in_txn", st.sql.get("read_in_txn")?).await?;
    let (seen, level) = (Answered::of(&set), set.get(0, "isolation").unwrap_or("-").to_string());
    let sql = st.sql.bind("add_to_read", &[("price", &seen.price)])?;
    let wrote = match c.exec_allow("add_to_read", &sql, &["40001"]).await? {
        Ok(r) => crate::engine::answer::last_set(&r).map(Answered::of),
        Err(_) => None,
    };
    let committed = c.exec_allow("commit", st.sql.get("commit")?, &["40001"]).await?.is_ok();
    let last = read(&w, &st.sql, "read_primary").await?;
    st.resume().await?;
    drop((w, c));
    b.stop(st).await?;
    cx.check(received, msg::received());
    cx.check(
        seen.is("42.00", true) && level == "repeatable read",
        msg::txn_read_on_standby(&seen.price, seen.by(), &level),
    );
    let wrote_text = wrote
        .as_ref()
        .map_or("40001".to_string(), |a| format!("{} ({})", a.price, a.by()));
    cx.check(
        wrote.as_ref().is_some_and(|a| a.is("43.00", false)) && committed,
        msg::txn_wrote_on_primary(&wrote_text),
    );
    cx.check(last.is("43.00", false), msg::txn_lost(&last.price));
    cx.metric("read_by", seen.by());
    cx.metric("isolation", &level);
    cx.observe(msg::observed_txn_split(&seen.price, seen.by(), &last.price));
    cx.anomaly(last.price == "43.00");
    Ok(())
}
