//! What a transaction pooler does to session state, on lab's own PgBouncer
//! in front of the server (lab/pooler.sql): clients A, B and C go through
//! PgBouncer in transaction mode, W and L talk to the server directly. Each
//! pitfall runs next to its fix; the pooler's own view (SHOW POOLS, SHOW
//! SERVERS, its log) stands next to the server's.
use std::time::{Duration, Instant};

use anyhow::Result;

use super::{Cx, Scenario};
use crate::engine::answer::last_set;
use crate::engine::observe::Waited;
use crate::engine::{Answer, Deviation, Session, secs};
use crate::named_sql::SqlFile;
use crate::postgres::connect;
use crate::postgres::pgbouncer::{self, PgBouncer, Pool};
use crate::report::{ResultSet, WaitKind};

pub static SCENARIO: Scenario = Scenario {
    name: "pooler",
    about: msg::about,
    summary: msg::summary,
    readme: "lab's own PgBouncer (transaction mode) next to direct connections: a session `SET`, a session \
             advisory lock and a `PREPARE` leak to the next client of the same server connection (fixes: \
             `SET LOCAL`, `pg_try_advisory_xact_lock`, unnamed statements); a `LISTEN` through the pooler never \
             hears the `NOTIFY` (fix: a direct listener); a full pool makes a client wait where the server \
             shows no wait at all (seen in `SHOW POOLS`). Skipped, with how to install it, where pgbouncer is missing.",
    spec: None,
    variants: VARIANTS,
    options: None,
};

crate::variants! {
    prefix "po";
    set_leak "set-leak" {
        expected => {
            en: "A and B run on one server backend; A's session-level SET search_path and statement_timeout show up in B's session",
            tr: "A ve B tek bir sunucu backend'inde çalışır; A'nın oturum düzeyindeki SET search_path ve statement_timeout ayarları B'nin oturumunda görünür",
        },
        explain => {
            en: "In transaction mode PgBouncer hands a server connection to a client for one transaction only; a session-level SET stays on that server connection and the next client to get it runs with it (a statement_timeout that cancels someone else's report, a search_path that writes into the wrong schema). PgBouncer runs no server_reset_query in transaction mode.",
            tr: "Transaction modunda PgBouncer bir sunucu bağlantısını istemciye yalnızca bir işlem için verir; oturum düzeyindeki SET o sunucu bağlantısında kalır ve onu sıradaki alan istemci bununla çalışır (başkasının raporunu iptal eden bir statement_timeout, yanlış şemaya yazan bir search_path). PgBouncer transaction modunda server_reset_query çalıştırmaz.",
        },
    }
    set_local "set-local" {
        expected => {
            en: "A's SET LOCAL holds inside its transaction only; B, on the same backend, runs with the server's defaults",
            tr: "A'nın SET LOCAL'i yalnızca kendi işleminde geçerlidir; aynı backend'deki B sunucunun varsayılanlarıyla çalışır",
        },
        explain => {
            en: "SET LOCAL (or set_config(..., true)) ends with the transaction, before the pooler hands the connection on; settings a request needs go inside its transaction, or into the role (ALTER ROLE ... SET), which every server connection gets when it starts.",
            tr: "SET LOCAL (ya da set_config(..., true)) işlemle birlikte, pooler bağlantıyı başkasına vermeden önce biter; bir isteğin ihtiyaç duyduğu ayarlar işleminin içine ya da her sunucu bağlantısının başlarken aldığı role (ALTER ROLE ... SET) konur.",
        },
    }
    session_advisory_lock "session-advisory-lock" {
        expected => {
            en: "A and B both get pg_try_advisory_lock on the same key (true, true): they share one backend, which holds the lock; a direct connection is refused",
            tr: "A ve B'nin ikisi de aynı anahtarla pg_try_advisory_lock'u alır (true, true): kilidi tutan tek bir backend'i paylaşırlar; doğrudan bir bağlantı reddedilir",
        },
        explain => {
            en: "A session-level advisory lock belongs to the server backend and is re-entrant; through a transaction pooler two clients get the same backend, so both 'hold' the lock and the mutual exclusion is gone, and the lock outlives the client that took it.",
            tr: "Oturum düzeyindeki advisory kilit sunucu backend'ine aittir ve yeniden girilebilirdir; transaction pooler üzerinden iki istemci aynı backend'i alır, ikisi de kilidi 'tutar' ve karşılıklı dışlama kaybolur; kilit de onu alan istemciden uzun yaşar.",
        },
    }
    xact_advisory_lock "xact-advisory-lock" {
        expected => {
            en: "inside transactions, pg_try_advisory_xact_lock on the same key gives A true and B false: each transaction has its own server connection",
            tr: "işlemler içinde aynı anahtarla pg_try_advisory_xact_lock A'ya true, B'ye false verir: her işlemin kendi sunucu bağlantısı vardır",
        },
        explain => {
            en: "A transaction-level advisory lock lives exactly as long as the transaction, and the pooler keeps a client on one server connection for the whole transaction: the lock means what it says, and it cannot leak to the next client.",
            tr: "İşlem düzeyindeki advisory kilit tam olarak işlem kadar yaşar ve pooler istemciyi tüm işlem boyunca tek bir sunucu bağlantısında tutar: kilit söylediği şeyi yapar ve sıradaki istemciye sızamaz.",
        },
    }
    prepared_statement "prepared-statement" {
        expected => {
            en: "B executes with_vat, which A prepared (50.40), and B's own PREPARE with_vat fails with 42P05 (already exists)",
            tr: "B, A'nın hazırladığı with_vat'ı çalıştırır (50.40) ve B'nin kendi PREPARE with_vat'ı 42P05 ile başarısız olur (zaten var)",
        },
        explain => {
            en: "A named prepared statement (SQL PREPARE or the protocol's named Parse) is kept by the server backend; through a transaction pooler it shows up for whichever client gets that backend next, and a client that prepares the same name fails. Drivers that name statements themselves break this way unless the pooler tracks them: PgBouncer does so since 1.21 (max_prepared_statements).",
            tr: "Adlı bir prepared statement (SQL PREPARE ya da protokolün adlı Parse'ı) sunucu backend'inde tutulur; transaction pooler üzerinden o backend'i sıradaki alan istemcide görünür ve aynı adı hazırlayan istemci başarısız olur. Komutlara kendisi ad veren sürücüler, pooler onları izlemedikçe böyle bozulur: PgBouncer bunu 1.21'den beri yapar (max_prepared_statements).",
        },
    }
    unnamed_statement "unnamed-statement" {
        expected => {
            en: "A and B run the same statement as the protocol's unnamed statement (Parse, Bind, Execute in one round trip): both get 50.40 and nothing is left on the backend",
            tr: "A ve B aynı komutu protokolün adsız komutu olarak çalıştırır (Parse, Bind, Execute tek gidiş dönüşte): ikisi de 50.40 alır ve backend'de hiçbir şey kalmaz",
        },
        explain => {
            en: "The unnamed statement is replaced by the next Parse and lives only within one round trip, which a transaction pooler never splits: parameters stay out of the SQL text, and no state is left for the next client. Named statements need a pooler that tracks them (PgBouncer 1.21+ with max_prepared_statements) or session pooling.",
            tr: "Adsız komut bir sonraki Parse ile değişir ve yalnızca bir gidiş dönüş boyunca yaşar; transaction pooler bunu hiçbir zaman bölmez: parametreler SQL metninin dışında kalır ve sıradaki istemciye durum bırakılmaz. Adlı komutlar onları izleyen bir pooler (max_prepared_statements ile PgBouncer 1.21+) ya da session pooling ister.",
        },
    }
    listen_lost "listen-lost" {
        expected => {
            en: "L's LISTEN through the pooler never receives the NOTIFY: PgBouncer drops the notification that arrives while no client is linked to the server connection",
            tr: "L'nin pooler üzerinden LISTEN'ı NOTIFY'ı hiçbir zaman almaz: PgBouncer, sunucu bağlantısına bağlı bir istemci yokken gelen bildirimi atar",
        },
        explain => {
            en: "LISTEN registers the server backend, not the client. The backend sends the notification as soon as it is idle, which in transaction pooling means no client is linked to it, so PgBouncer drops it (its log: got packet 'A' from server when not linked); had another client been linked, that client would have got it.",
            tr: "LISTEN istemciyi değil sunucu backend'ini kaydeder. Backend bildirimi boşta kalır kalmaz gönderir; transaction pooling'de bu, ona bağlı bir istemci olmadığı anlamına gelir ve PgBouncer onu atar (günlüğü: got packet 'A' from server when not linked); başka bir istemci bağlı olsaydı bildirimi o alırdı.",
        },
    }
    listen_direct "listen-direct" {
        expected => {
            en: "a listener on a direct connection receives the NOTIFY once, with its payload",
            tr: "doğrudan bir bağlantıdaki dinleyici NOTIFY'ı bir kez, içeriğiyle alır",
        },
        explain => {
            en: "Listeners keep a session of their own: connect them straight to the server (or through a session-mode pool), and let the notifying side go through the transaction pooler.",
            tr: "Dinleyiciler kendilerine ait bir oturum tutar: onları doğrudan sunucuya (ya da session modundaki bir havuz üzerinden) bağlayın, bildiren taraf transaction pooler'dan geçsin.",
        },
    }
    pool_exhaustion "pool-exhaustion" {
        expected => {
            en: "with both server connections of the pool in A's and B's open transactions, C waits in PgBouncer (SHOW POOLS: cl_waiting 1) while the server shows no lock wait at all; C runs once A commits",
            tr: "havuzun iki sunucu bağlantısı da A ve B'nin açık işlemlerindeyken C PgBouncer'da bekler (SHOW POOLS: cl_waiting 1), sunucu ise hiç kilit beklemesi göstermez; A commit edince C çalışır",
        },
        explain => {
            en: "A pool has pool_size server connections; a client in a transaction keeps one until COMMIT. When all are taken, the next client queues inside PgBouncer: pg_locks and pg_stat_activity show idle-in-transaction backends and no waiter, because the waiting client has no backend at all. Look at SHOW POOLS (cl_waiting, maxwait) and keep transactions short (nothing slow, no user think time, inside them).",
            tr: "Bir havuzda pool_size kadar sunucu bağlantısı vardır; işlemdeki bir istemci COMMIT'e kadar birini tutar. Hepsi doluyken sıradaki istemci PgBouncer içinde sıraya girer: pg_locks ve pg_stat_activity işlemde boşta bekleyen backend'ler gösterir, bekleyen yoktur, çünkü bekleyen istemcinin hiç backend'i yoktur. SHOW POOLS'a (cl_waiting, maxwait) bakın ve işlemleri kısa tutun (içlerinde yavaş iş, kullanıcı düşünme süresi olmasın).",
        },
    }
}

/// One server connection shared by every client (what makes state leak).
const SHARED: &str = "shared";
/// Two server connections (a client in a transaction keeps one).
const TWO: &str = "two";
/// The lane of the pooler's own observations.
const POOLER: &str = "pgbouncer";

/// A statement's result: rows, or the server's SQLSTATE and message.
type Outcome = std::result::Result<ResultSet, (String, String)>;

/// A client's session, through the pooler or straight to the server: a
/// plain client (no settings of lab's), its statements recorded in its lane.
async fn open_client(cx: &Cx<'_>, name: &str, cfg: crate::postgres::ConnInfo) -> Result<Session> {
    cx.opener().elsewhere(cfg).raw().open(name).await
}

/// Runs a statement of lab/pooler.sql (the run's key and channel bound) to
/// its answer and records it.
async fn run(c: &Session, sql: &SqlFile, step: &str, cx: &Cx<'_>) -> Result<Outcome> {
    let (key, channel) = names(cx);
    run_bound(c, sql, step, &[("key", &key), ("channel", &channel)]).await
}

async fn run_bound(
    c: &Session,
    sql: &SqlFile,
    step: &str,
    values: &[(&str, &(dyn std::fmt::Display + Sync))],
) -> Result<Outcome> {
    let text = sql.bind(step, values)?;
    Ok(outcome(c.run(step, &text).await?))
}

/// Like [`run`], for a statement that must succeed.
async fn rows(c: &Session, sql: &SqlFile, step: &str, cx: &Cx<'_>) -> Result<ResultSet> {
    match run(c, sql, step, cx).await? {
        Ok(set) => Ok(set),
        Err((code, message)) => Err(Deviation(msg::failed(c.name(), step, code, message)).into()),
    }
}

/// The backend this client's statements run on now.
async fn backend(c: &Session, sql: &SqlFile, cx: &Cx<'_>) -> Result<i32> {
    let set = rows(c, sql, "backend", cx).await?;
    Ok(int(&set, "backend") as i32)
}

/// The advisory lock key and the channel of this run: both are shared by
/// the whole database, so they are derived from the run's schema.
fn names(cx: &Cx<'_>) -> (String, String) {
    let schema = &cx.env.schema;
    (
        format!("hashtext('{}:pooler')", schema.replace('\'', "''")),
        format!("\"price_changes_{}\"", schema.replace('"', "")),
    )
}

/// An answer as the checks read it: the rows of its last statement that
/// returned any, or the server's SQLSTATE and message.
fn outcome(answer: Answer) -> Outcome {
    match answer {
        Ok(results) => Ok(last_set(&results).cloned().unwrap_or_default()),
        Err(e) => Err((e.code.unwrap_or_default(), e.message)),
    }
}

/// The payloads a session has heard.
fn heard(c: &Session) -> Vec<String> {
    c.notifications().into_iter().map(|n| n.payload).collect()
}

fn int(set: &ResultSet, col: &str) -> i64 {
    set.get(0, col).and_then(|v| v.parse().ok()).unwrap_or(-1)
}

fn text(set: &ResultSet, col: &str) -> String {
    set.get(0, col).unwrap_or("-").to_string()
}

/// lab's PgBouncer for one variant, and the backends its clients used (to
/// see them gone afterwards).
struct Stage {
    pgb: Option<PgBouncer>,
    /// PgBouncer's admin console (SHOW POOLS, SHOW SERVERS), one connection for the variant.
    admin: tokio_postgres::Client,
    sql: SqlFile,
    backends: Vec<i32>,
}

impl Stage {
    /// Starts PgBouncer in front of the run's server, or says why the
    /// variant is skipped (no pgbouncer on this machine).
    async fn start(cx: &mut Cx<'_>) -> Result<Option<Stage>> {
        if let Err(e) = pgbouncer::find_bin() {
            // LAB_PGBOUNCER_BIN naming no program is a setup error; no pgbouncer at all skips.
            if std::env::var_os("LAB_PGBOUNCER_BIN").is_some_and(|v| !v.is_empty()) {
                return Err(e);
            }
            cx.skip(msg::no_pgbouncer(pgbouncer::msg::install()));
            return Ok(None);
        }
        // It logs in to the server itself: require_auth cannot hold it.
        if let Some(why) = pgbouncer::unheld(&cx.env.pg) {
            cx.skip(why);
            return Ok(None);
        }
        // Three server connections behind PgBouncer, two direct ones at most.
        cx.ensure_room(5)?;
        let sql = cx.sql("pooler.sql")?;
        let server = cx.env.pg.clone();
        let pools = [Pool::new(SHARED, "transaction", 1), Pool::new(TWO, "transaction", 2)];
        // On this thread, as the throwaway cluster: PgBouncer's parent-death
        // signal is tied to the thread that starts it (a blocking-pool
        // thread ends after 10 s idle, and would take PgBouncer with it).
        let pgb = tokio::task::block_in_place(|| PgBouncer::start(&server, &pools))?;
        cx.narrate(msg::started(&pgb.version, pgb.port));
        cx.metric("pgbouncer", &pgb.version);
        let silence = crate::postgres::watchdog::control_silence(std::time::Duration::ZERO);
        let admin = connect::connect_control(&pgb.admin(), "lab-admin", None, silence)
            .await?
            .client;
        Ok(Some(Stage {
            admin,
            pgb: Some(pgb),
            sql,
            backends: Vec::new(),
        }))
    }

    fn pgb(&self) -> &PgBouncer {
        self.pgb.as_ref().expect("running")
    }

    async fn client(&self, cx: &Cx<'_>, name: &str, pool: &str) -> Result<Session> {
        open_client(cx, name, self.pgb().config(pool)).await
    }

    async fn direct(&self, cx: &Cx<'_>, name: &str) -> Result<Session> {
        open_client(cx, name, cx.env.pg.clone()).await
    }

    /// `SHOW POOLS` (or another admin command): the rows of `pool`.
    async fn show(&self, command: &str, pool: &str) -> Result<Vec<Vec<(String, String)>>> {
        pgbouncer::show(&self.admin, command, pool).await
    }

    async fn server_pids(&self, pool: &str) -> Result<Vec<i32>> {
        pgbouncer::server_pids(&self.admin, pool).await
    }

    /// Stops PgBouncer and waits until the server backends its clients used
    /// are gone, or (behind a pooler of the user's, which keeps them) idle
    /// and holding no lock: nothing of the variant is left on them. Direct
    /// connections are the variant's, awaited when it closes.
    async fn stop(mut self, cx: &Cx<'_>) -> Result<()> {
        let mut pids = self.backends.clone();
        for pool in [SHARED, TWO] {
            pids.extend(self.server_pids(pool).await.unwrap_or_default());
        }
        if let Some(pgb) = self.pgb.take() {
            tokio::task::spawn_blocking(move || drop(pgb)).await?;
        }
        let deadline = Instant::now() + cx.env.wait_timeout;
        loop {
            let busy: i64 = cx
                .env
                .control
                .query_one(
                    "SELECT count(*) FROM unnest($1::int[]) p \
                     WHERE EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = p \
                                   AND (a.state IS DISTINCT FROM 'idle' OR a.xact_start IS NOT NULL)) \
                        OR EXISTS (SELECT 1 FROM pg_locks l WHERE l.pid = p)",
                    &[&pids],
                )
                .await
                .map_err(|e| connect::sql_error(e, msg::backends_left()))?
                .get(0);
            if busy == 0 {
                return Ok(());
            }
            if Instant::now() > deadline {
                anyhow::bail!(msg::still_busy(busy, secs(cx.env.wait_timeout)));
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }
}

/// The backends A and B ran on, and whether they are one.
async fn backends(cx: &mut Cx<'_>, st: &mut Stage, a: &Session, b: &Session) -> Result<bool> {
    let pa = backend(a, &st.sql, cx).await?;
    let pb = backend(b, &st.sql, cx).await?;
    st.backends.extend([pa, pb]);
    cx.metric("a_backend", pa);
    cx.metric("b_backend", pb);
    Ok(pa == pb)
}

async fn set_leak(cx: &mut Cx<'_>) -> Result<()> {
    let Some(mut st) = Stage::start(cx).await? else {
        return Ok(());
    };
    let (a, b) = (st.client(cx, "A", SHARED).await?, st.client(cx, "B", SHARED).await?);
    let shared = backends(cx, &mut st, &a, &b).await?;
    rows(&a, &st.sql, "set_session", cx).await?;
    let seen = rows(&b, &st.sql, "settings", cx).await?;
    st.stop(cx).await?;
    let (path, timeout) = (text(&seen, "search_path"), text(&seen, "statement_timeout"));
    cx.check(shared, msg::one_backend());
    let leaked = path.contains("a_private") && timeout == "1234ms";
    cx.check(leaked, msg::b_sees_a(&path, &timeout));
    cx.metric("b_search_path", &path);
    cx.metric("b_statement_timeout", &timeout);
    cx.observe(msg::observed_settings(&path, &timeout));
    cx.anomaly(leaked);
    Ok(())
}

async fn set_local(cx: &mut Cx<'_>) -> Result<()> {
    let Some(mut st) = Stage::start(cx).await? else {
        return Ok(());
    };
    let (a, b) = (st.client(cx, "A", SHARED).await?, st.client(cx, "B", SHARED).await?);
    let w = st.direct(cx, "W").await?;
    let shared = backends(cx, &mut st, &a, &b).await?;
    let inside = rows(&a, &st.sql, "set_local", cx).await?;
    let seen = rows(&b, &st.sql, "settings", cx).await?;
    let fresh = rows(&w, &st.sql, "settings", cx).await?;
    st.stop(cx).await?;
    cx.check(shared, msg::one_backend());
    cx.check(
        text(&inside, "statement_timeout") == "1234ms",
        msg::a_had_it(text(&inside, "statement_timeout")),
    );
    let (path, timeout) = (text(&seen, "search_path"), text(&seen, "statement_timeout"));
    let clean = path == text(&fresh, "search_path") && timeout == text(&fresh, "statement_timeout");
    cx.check(clean, msg::b_sees_defaults(&path, &timeout));
    cx.metric("b_search_path", &path);
    cx.metric("b_statement_timeout", &timeout);
    cx.observe(msg::observed_settings(&path, &timeout));
    cx.anomaly(!clean);
    Ok(())
}

fn got_lock(o: &Outcome) -> Option<bool> {
    o.as_ref().ok().map(|s| text(s, "got_lock") == "t")
}

async fn session_advisory_lock(cx: &mut Cx<'_>) -> Result<()> {
    let Some(mut st) = Stage::start(cx).await? else {
        return Ok(());
    };
    let (a, b) = (st.client(cx, "A", SHARED).await?, st.client(cx, "B", SHARED).await?);
    let w = st.direct(cx, "W").await?;
    let shared = backends(cx, &mut st, &a, &b).await?;
    let la = got_lock(&run(&a, &st.sql, "lock_session", cx).await?);
    let lb = got_lock(&run(&b, &st.sql, "lock_session", cx).await?);
    let lw = got_lock(&run(&w, &st.sql, "lock_session", cx).await?);
    st.stop(cx).await?;
    cx.check(shared, msg::one_backend());
    let both = la == Some(true) && lb == Some(true);
    cx.check(both, msg::both_got(flag(la), flag(lb)));
    cx.check(lw == Some(false), msg::direct_refused(flag(lw)));
    cx.observe(msg::observed_locks(flag(la), flag(lb)));
    cx.anomaly(both);
    Ok(())
}

fn flag(v: Option<bool>) -> &'static str {
    match v {
        Some(true) => "true",
        Some(false) => "false",
        None => "error",
    }
}

async fn xact_advisory_lock(cx: &mut Cx<'_>) -> Result<()> {
    let Some(mut st) = Stage::start(cx).await? else {
        return Ok(());
    };
    let (a, b) = (st.client(cx, "A", TWO).await?, st.client(cx, "B", TWO).await?);
    rows(&a, &st.sql, "begin", cx).await?;
    let la = got_lock(&run(&a, &st.sql, "lock_xact", cx).await?);
    rows(&b, &st.sql, "begin", cx).await?;
    let lb = got_lock(&run(&b, &st.sql, "lock_xact", cx).await?);
    let shared = backends(cx, &mut st, &a, &b).await?;
    rows(&a, &st.sql, "commit", cx).await?;
    rows(&b, &st.sql, "commit", cx).await?;
    // What makes the transaction-level lock safe behind a pooler: after
    // COMMIT the server connections the pool hands to the next client hold none.
    let pids = st.backends.iter().map(i32::to_string).collect::<Vec<_>>().join(",");
    let left = cx
        .env
        .int(&format!(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid IN ({pids})"
        ))
        .await?;
    st.stop(cx).await?;
    cx.check(!shared, msg::two_backends());
    let one = la == Some(true) && lb == Some(false);
    cx.check(one, msg::one_got(flag(la), flag(lb)));
    cx.metric("advisory_locks_after_commit", left);
    cx.check(left == 0, msg::lock_gone(left));
    cx.observe(msg::observed_locks(flag(la), flag(lb)));
    cx.anomaly(!one);
    Ok(())
}

async fn prepared_statement(cx: &mut Cx<'_>) -> Result<()> {
    let Some(mut st) = Stage::start(cx).await? else {
        return Ok(());
    };
    let (a, b) = (st.client(cx, "A", SHARED).await?, st.client(cx, "B", SHARED).await?);
    let shared = backends(cx, &mut st, &a, &b).await?;
    rows(&a, &st.sql, "prepare", cx).await?;
    let executed = run(&b, &st.sql, "execute", cx).await?;
    let again = run(&b, &st.sql, "prepare", cx).await?;
    st.stop(cx).await?;
    cx.check(shared, msg::one_backend());
    let gross = executed.as_ref().map(|s| text(s, "gross")).unwrap_or_default();
    cx.check(gross == "50.40", msg::b_ran_a_statement(&gross));
    let code = again.as_ref().err().map(|(c, _)| c.clone()).unwrap_or_default();
    cx.check(code == "42P05", msg::b_prepare_exists(&code));
    cx.observe(msg::observed_prepared(&gross, &code));
    cx.anomaly(gross == "50.40" || code == "42P05");
    Ok(())
}

async fn unnamed_statement(cx: &mut Cx<'_>) -> Result<()> {
    let Some(mut st) = Stage::start(cx).await? else {
        return Ok(());
    };
    let (a, b) = (st.client(cx, "A", SHARED).await?, st.client(cx, "B", SHARED).await?);
    let shared = backends(cx, &mut st, &a, &b).await?;
    // Parse, Bind and Execute of the unnamed statement in one round trip: nothing is left behind.
    let sql = "SELECT round($1::numeric * 1.20, 2)::text AS gross";
    let mut grosses = Vec::new();
    if let Some(stp) = &cx.env.stepper {
        let why = msg::why_unnamed().render(stp.lang());
        stp.add_whys([("unnamed".to_string(), why)].into());
    }
    let price = "42.00";
    let shown = format!("{sql}  -- $1 = '{price}'");
    for c in [&a, &b] {
        let answer = c
            .typed("unnamed", sql, &[(&price, tokio_postgres::types::Type::TEXT)], &shown)
            .await?;
        grosses.push(outcome(answer).map(|s| text(&s, "gross")).unwrap_or_else(|(c, _)| c));
    }
    let left = rows(&b, &st.sql, "prepared_here", cx).await?;
    let version = st.pgb().version.clone();
    st.stop(cx).await?;
    cx.check(shared, msg::one_backend());
    cx.check(grosses.iter().all(|g| g == "50.40"), msg::both_ran(grosses.join(", ")));
    let prepared = int(&left, "prepared");
    cx.check(prepared == 0, msg::nothing_left(prepared));
    cx.note(msg::pgbouncer_121(version));
    cx.observe(msg::observed_unnamed(grosses.join(", "), prepared));
    cx.anomaly(prepared != 0);
    Ok(())
}

/// Waits (within the deadline) until PgBouncer's log has `needle`.
async fn logged(cx: &Cx<'_>, st: &Stage, needle: &str) -> bool {
    let deadline = Instant::now() + cx.env.wait_timeout;
    loop {
        if st.pgb().log().contains(needle) {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

async fn listen_lost(cx: &mut Cx<'_>) -> Result<()> {
    let Some(mut st) = Stage::start(cx).await? else {
        return Ok(());
    };
    let l = st.client(cx, "L", SHARED).await?;
    let w = st.direct(cx, "W").await?;
    st.backends.push(backend(&l, &st.sql, cx).await?);
    rows(&l, &st.sql, "listen", cx).await?;
    rows(&w, &st.sql, "notify", cx).await?;
    // The listening backend sends the notification at once; the pooler has
    // no client linked to that server connection and drops it (its log says so).
    let dropped = logged(cx, &st, "got packet 'A' from server when not linked").await;
    if dropped {
        cx.recorder().note(POOLER, msg::dropped_logged());
    }
    rows(&l, &st.sql, "ping", cx).await?;
    let got: Vec<String> = heard(&l);
    st.stop(cx).await?;
    cx.check(dropped, msg::pooler_dropped());
    cx.check(got.is_empty(), msg::never_heard(got.len()));
    cx.metric("l_notifications", got.len());
    cx.observe(msg::observed_listen(got.len()));
    cx.anomaly(got.is_empty());
    Ok(())
}

async fn listen_direct(cx: &mut Cx<'_>) -> Result<()> {
    let Some(st) = Stage::start(cx).await? else {
        return Ok(());
    };
    let l = st.direct(cx, "L").await?;
    let w = st.direct(cx, "W").await?;
    rows(&l, &st.sql, "listen", cx).await?;
    rows(&w, &st.sql, "notify", cx).await?;
    // A direct listener gets it without asking: wait for it, within the deadline.
    let deadline = Instant::now() + cx.env.wait_timeout;
    let got = loop {
        let got: Vec<String> = heard(&l);
        if !got.is_empty() || Instant::now() > deadline {
            break got;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    };
    if let Some(p) = got.first() {
        cx.recorder().note("L", msg::heard(p));
    }
    st.stop(cx).await?;
    cx.check(
        got.len() == 1 && got[0] == "book 1: 45.00",
        msg::heard_once(got.join(", ")),
    );
    cx.metric("l_notifications", got.len());
    cx.observe(msg::observed_listen(got.len()));
    cx.anomaly(got.is_empty());
    Ok(())
}

async fn pool_exhaustion(cx: &mut Cx<'_>) -> Result<()> {
    let Some(mut st) = Stage::start(cx).await? else {
        return Ok(());
    };
    let (a, b) = (st.client(cx, "A", TWO).await?, st.client(cx, "B", TWO).await?);
    let c = st.client(cx, "C", TWO).await?;
    let w = st.direct(cx, "W").await?;
    rows(&a, &st.sql, "begin", cx).await?;
    rows(&b, &st.sql, "begin", cx).await?;
    backends(cx, &mut st, &a, &b).await?;
    // C's statement needs a server connection; both are in A's and B's transactions.
    let work = st.sql.get("work")?.to_string();
    if let Some(stp) = &cx.env.stepper {
        stp.before("C", Some("work"), &work, None, false).await;
    }
    let mut pending = c.send(&work);
    let sent = pending.at;
    // The wait is the pooler's: confirmed from SHOW POOLS, within the deadline.
    let deadline = Instant::now() + cx.env.wait_timeout;
    let pool = loop {
        let rows = st.show("SHOW POOLS", TWO).await?;
        let row = rows.into_iter().next().unwrap_or_default();
        if pgbouncer::value(&row, "cl_waiting") >= 1 || Instant::now() > deadline || pending.ready() {
            break row;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    };
    let waiting = pgbouncer::value(&pool, "cl_waiting");
    let (active, servers) = (
        pgbouncer::value(&pool, "cl_active"),
        pgbouncer::value(&pool, "sv_active"),
    );
    cx.metric(
        "maxwait_ms",
        pgbouncer::value(&pool, "maxwait") * 1000 + pgbouncer::value(&pool, "maxwait_us") / 1000,
    );
    let waited = Waited {
        by: vec!["A".into(), "B".into()],
        kind: WaitKind::Pooler,
        lock: None,
    };
    if waiting >= 1 {
        cx.recorder().waiting(sent, "C", Some("work"), &work, &waited);
        cx.recorder().note(POOLER, msg::pools_row(waiting, active, servers));
    }
    let pids = st.server_pids(TWO).await?;
    let list = pids.iter().map(i32::to_string).collect::<Vec<_>>().join(", ");
    let list = if list.is_empty() { "0".to_string() } else { list };
    let locks = run_bound(&w, &st.sql, "ungranted", &[("pids", &list)]).await?;
    let activity = run_bound(&w, &st.sql, "activity", &[("pids", &list)]).await?;
    if let Ok(set) = &activity {
        cx.evidence_rows(msg::server_view(), set);
    }
    rows(&a, &st.sql, "commit", cx).await?;
    // A's commit frees a server connection: C's statement runs now.
    let done = if pending.ready_within(cx.env.wait_timeout).await {
        pending.take()
    } else {
        c.cancel().await;
        None
    };
    let took = sent.elapsed();
    if let Some((answer, at)) = &done {
        let wait = (waiting >= 1).then_some((&waited, took));
        cx.recorder().answer(*at, "C", Some("work"), &work, answer, wait, None);
    }
    rows(&b, &st.sql, "commit", cx).await?;
    st.stop(cx).await?;
    cx.check(waiting >= 1, msg::c_queued(waiting));
    let lock_waits = locks.as_ref().map(|s| int(s, "lock_waits")).unwrap_or(-1);
    cx.check(lock_waits == 0, msg::no_server_wait(lock_waits));
    let completed = matches!(done, Some((Ok(_), _)));
    let waited = took;
    cx.check(completed, msg::c_ran_after_commit());
    cx.metric("cl_waiting", waiting);
    cx.metric("server_lock_waits", lock_waits);
    cx.metric("c_waited_ms", crate::report::millis(waited));
    cx.observe(msg::observed_exhaustion(waiting, lock_waits));
    cx.anomaly(waiting >= 1);
    Ok(())
}

mod msg {
    crate::messages! {
        prefix "po";
        about() {
            en: "Transaction pooling pitfalls on lab's own PgBouncer: SET, advisory locks, PREPARE, LISTEN, a full pool",
            tr: "lab'ın kendi PgBouncer'ında transaction pooling tuzakları: SET, advisory kilitler, PREPARE, LISTEN, dolu havuz",
        }
        summary() {
            en: "clients through PgBouncer in transaction mode next to direct connections",
            tr: "transaction modundaki PgBouncer üzerinden istemciler, doğrudan bağlantıların yanında",
        }
        no_pgbouncer(install) {
            en: "pgbouncer is not installed here: {install}",
            tr: "burada pgbouncer kurulu değil: {install}",
        }
        started(version, port) {
            en: "{version} on 127.0.0.1:{port}: pool shared (pool_size 1) and pool two (pool_size 2), pool_mode transaction",
            tr: "127.0.0.1:{port} üzerinde {version}: shared havuzu (pool_size 1) ve two havuzu (pool_size 2), pool_mode transaction",
        }
        lock_gone(n) {
            en: "after COMMIT the pool's server connections hold no advisory lock (pg_locks: {n})",
            tr: "COMMIT'ten sonra havuzun sunucu bağlantıları hiçbir advisory kilit tutmaz (pg_locks: {n})",
        }
        failed(client, step, code, message) {
            en: "{client}: {step} failed: {message} (SQLSTATE {code})",
            tr: "{client}: {step} başarısız: {message} (SQLSTATE {code})",
        }
        backends_left() {
            en: "reading what is left of the pooled backends",
            tr: "havuzdaki backend'lerden geriye kalanlar okunuyor",
        }
        still_busy(count, deadline) {
            en: "{count} pooled backend(s) still in a transaction or holding a lock {deadline} s after PgBouncer stopped",
            tr: "PgBouncer durduktan {deadline} sn sonra havuzdaki {count} backend hâlâ bir işlemde ya da kilit tutuyor",
        }
        one_backend() {
            en: "A and B run on the same server backend (pg_backend_pid)",
            tr: "A ve B aynı sunucu backend'inde çalışır (pg_backend_pid)",
        }
        two_backends() {
            en: "A's and B's transactions run on different server backends",
            tr: "A ve B'nin işlemleri farklı sunucu backend'lerinde çalışır",
        }
        b_sees_a(path, timeout) {
            en: "B runs with A's settings (search_path {path}, statement_timeout {timeout})",
            tr: "B, A'nın ayarlarıyla çalışır (search_path {path}, statement_timeout {timeout})",
        }
        a_had_it(timeout) {
            en: "inside its transaction A runs with its SET LOCAL (statement_timeout {timeout})",
            tr: "A kendi işleminde SET LOCAL'iyle çalışır (statement_timeout {timeout})",
        }
        b_sees_defaults(path, timeout) {
            en: "B runs with the server's defaults, as a fresh direct connection does (search_path {path}, statement_timeout {timeout})",
            tr: "B, yeni bir doğrudan bağlantı gibi sunucunun varsayılanlarıyla çalışır (search_path {path}, statement_timeout {timeout})",
        }
        observed_settings(path, timeout) {
            en: "B: search_path {path}, statement_timeout {timeout}",
            tr: "B: search_path {path}, statement_timeout {timeout}",
        }
        both_got(a, b) {
            en: "A and B both get the lock (A: {a}, B: {b})",
            tr: "A ve B'nin ikisi de kilidi alır (A: {a}, B: {b})",
        }
        direct_refused(w) {
            en: "a direct connection does not get it: the pooled backend holds it (W: {w})",
            tr: "doğrudan bir bağlantı kilidi alamaz: havuzdaki backend onu tutuyor (W: {w})",
        }
        one_got(a, b) {
            en: "A gets the lock and B does not (A: {a}, B: {b})",
            tr: "A kilidi alır, B alamaz (A: {a}, B: {b})",
        }
        observed_locks(a, b) {
            en: "A: {a}, B: {b}",
            tr: "A: {a}, B: {b}",
        }
        b_ran_a_statement(gross) {
            en: "B executes the statement A prepared (result: {gross})",
            tr: "B, A'nın hazırladığı komutu çalıştırır (sonuç: {gross})",
        }
        b_prepare_exists(code) {
            en: "B's PREPARE of the same name fails with 42P05 (got: {code})",
            tr: "B'nin aynı adla PREPARE'ı 42P05 ile başarısız olur (alınan: {code})",
        }
        observed_prepared(gross, code) {
            en: "B's EXECUTE gave {gross}; B's PREPARE: {code}",
            tr: "B'nin EXECUTE'u {gross} verdi; B'nin PREPARE'ı: {code}",
        }
        why_unnamed() {
            en: "the statement with a parameter, as the protocol's unnamed statement (query_typed)",
            tr: "parametreli komut, protokolün adsız komutu olarak (query_typed)",
        }
        both_ran(results) {
            en: "A and B both run it (results: {results})",
            tr: "A ve B'nin ikisi de onu çalıştırır (sonuçlar: {results})",
        }
        nothing_left(prepared) {
            en: "no named statement is left on the backend (pg_prepared_statements: {prepared})",
            tr: "backend'de adlı komut kalmaz (pg_prepared_statements: {prepared})",
        }
        pgbouncer_121(version) {
            en: "named protocol-level statements through a transaction pooler need PgBouncer 1.21 or later with max_prepared_statements > 0 (lab's is {version})",
            tr: "transaction pooler üzerinden protokol düzeyinde adlı komutlar max_prepared_statements > 0 ile PgBouncer 1.21 ya da sonrasını ister (lab'ınki {version})",
        }
        observed_unnamed(results, prepared) {
            en: "results {results}; {prepared} named statement(s) left",
            tr: "sonuçlar {results}; {prepared} adlı komut kaldı",
        }
        dropped_logged() {
            en: "log: got packet 'A' from server when not linked (the notification is dropped)",
            tr: "günlük: got packet 'A' from server when not linked (bildirim atıldı)",
        }
        pooler_dropped() {
            en: "PgBouncer dropped the notification (its log says so)",
            tr: "PgBouncer bildirimi attı (günlüğü bunu söylüyor)",
        }
        never_heard(count) {
            en: "L receives no notification, even after a round trip (received: {count})",
            tr: "L bir gidiş dönüşten sonra bile bildirim almaz (alınan: {count})",
        }
        observed_listen(count) {
            en: "L received {count} notification(s)",
            tr: "L {count} bildirim aldı",
        }
        heard(payload) {
            en: "notification on price_changes: {payload}",
            tr: "price_changes üzerinde bildirim: {payload}",
        }
        heard_once(payloads) {
            en: "L receives the notification once, with its payload (received: {payloads})",
            tr: "L bildirimi bir kez, içeriğiyle alır (alınan: {payloads})",
        }
        pools_row(waiting, active, servers) {
            en: "SHOW POOLS: cl_waiting {waiting}, cl_active {active}, sv_active {servers}",
            tr: "SHOW POOLS: cl_waiting {waiting}, cl_active {active}, sv_active {servers}",
        }
        server_view() {
            en: "the pool's server backends, as pg_stat_activity shows them while C waits",
            tr: "C beklerken havuzun sunucu backend'leri, pg_stat_activity'nin gösterdiği şekliyle",
        }
        c_queued(waiting) {
            en: "C waits in PgBouncer for a server connection (SHOW POOLS cl_waiting: {waiting})",
            tr: "C, PgBouncer'da bir sunucu bağlantısı bekler (SHOW POOLS cl_waiting: {waiting})",
        }
        no_server_wait(waits) {
            en: "the server shows no lock wait for the pool's backends (ungranted locks: {waits})",
            tr: "sunucu havuzun backend'leri için kilit beklemesi göstermez (verilmemiş kilitler: {waits})",
        }
        c_ran_after_commit() {
            en: "C's statement runs once A commits",
            tr: "A commit edince C'nin komutu çalışır",
        }
        observed_exhaustion(waiting, waits) {
            en: "cl_waiting {waiting} in PgBouncer; {waits} lock wait(s) on the server",
            tr: "PgBouncer'da cl_waiting {waiting}; sunucuda {waits} kilit beklemesi",
        }
    }
}
