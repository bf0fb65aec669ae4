//! A lost client (lab/lost-client.sql): A holds a row lock in a transaction
//! when its client vanishes; B wants the row. A's connection runs through
//! lab's fault proxy, which makes A's client vanish for real (no packet
//! passes, none is acknowledged); B talks to the server directly. What ends
//! A's transaction, if anything, is read from the server: A's backend gone,
//! B's wait over.
use std::time::{Duration, Instant};

use anyhow::Result;

use super::{Cx, Scenario};
use crate::engine::session::Waiting;
use crate::engine::{Answer, Deviation, Session};

use crate::named_sql::SqlFile;
use crate::postgres::faults::{Fault, Proxy};
use crate::report::millis;

pub static SCENARIO: Scenario = Scenario {
    name: "lost-client",
    about: msg::about,
    summary: msg::summary,
    readme: "A updates book 1's stock in a transaction; then its client vanishes (lab's fault proxy drops every \
             packet both ways: a crashed host, a pulled cable, a NAT that forgot the connection); B updates the \
             same row. By default the server keeps A's lock: B still waits after three times `--timeout-ms` (the \
             anomaly; TCP keepalive's defaults notice after about two hours). `idle_in_transaction_session_timeout` \
             ends A's session after the timeout and B goes on; server-side `tcp_keepalives_*` end it after the \
             probes go unanswered; `client_connection_check_interval` (14+) ends a statement whose client went \
             away while it ran.",
    spec: None,
    variants: VARIANTS,
    options: None,
};

crate::variants! {
    prefix "lc";
    black_hole "black-hole" {
        expected => {
            en: "A's client vanishes inside its transaction; the server does not notice: A's backend stays idle in transaction with the row lock, B still waits for it after three times the timeout (anomaly)",
            tr: "A'nın istemcisi transaction'ının içinde kaybolur; sunucu fark etmez: A'nın backend'i satır kilidiyle idle in transaction kalır, B zaman aşımının üç katı sonra hâlâ onu bekler (anomali)",
        },
        explain => {
            en: "A backend idle in a transaction waits for its client's next message. A client that vanished without a FIN or RST sends none, and a silent TCP connection looks healthy: the kernel probes it only after tcp_keepalives_idle (two hours by default), so the session, its transaction and its locks stay. Fixes: idle_in_transaction_session_timeout, server-side TCP keepalives, short transactions.",
            tr: "Bir transaction içinde boşta bekleyen backend istemcisinin bir sonraki mesajını bekler. FIN ya da RST göndermeden kaybolan bir istemci hiçbir şey göndermez ve sessiz bir TCP bağlantısı sağlıklı görünür: çekirdek onu ancak tcp_keepalives_idle sonra yoklar (varsayılan iki saat), böylece oturum, transaction'ı ve kilitleri kalır. Çözümler: idle_in_transaction_session_timeout, sunucu tarafında TCP keepalive, kısa transaction'lar.",
        },
    }
    idle_in_transaction_timeout "idle-in-transaction-timeout" {
        expected => {
            en: "with idle_in_transaction_session_timeout the server ends A's session after the timeout: its lock goes and B gets the row",
            tr: "idle_in_transaction_session_timeout ile sunucu A'nın oturumunu zaman aşımından sonra sonlandırır: kilidi gider ve B satırı alır",
        },
        explain => {
            en: "The server's own timer runs while a session sits idle inside a transaction, whatever happened to its client: after the timeout the backend ends (25P03 to a client that would still be there) and its locks are released. It needs no word from the network.",
            tr: "Bir oturum transaction içinde boşta beklerken sunucunun kendi sayacı işler, istemcisine ne olduğundan bağımsız: zaman aşımından sonra backend sonlanır (hâlâ orada olsaydı istemci 25P03 alırdı) ve kilitleri bırakılır. Ağdan hiçbir haber gerekmez.",
        },
    }
    tcp_keepalives "tcp-keepalives" {
        expected => {
            en: "with server-side tcp_keepalives (idle 1 s, interval 1 s, count 2) the server's kernel gives up on the silent client after about 3 s: A's session ends and B gets the row",
            tr: "sunucu tarafında tcp_keepalives ile (idle 1 sn, interval 1 sn, count 2) sunucunun çekirdeği sessiz istemciden yaklaşık 3 sn sonra vazgeçer: A'nın oturumu sonlanır ve B satırı alır",
        },
        explain => {
            en: "TCP keepalive probes an idle connection after tcp_keepalives_idle and declares it dead after tcp_keepalives_count unanswered probes, tcp_keepalives_interval apart. The backend's read then fails and the session ends, with its locks. It notices a vanished peer (no answer at all), which idle_in_transaction_session_timeout would also end, and a session idle outside a transaction, which it would not.",
            tr: "TCP keepalive boştaki bir bağlantıyı tcp_keepalives_idle sonra yoklar ve tcp_keepalives_interval arayla cevapsız kalan tcp_keepalives_count yoklamadan sonra ölü sayar. Backend'in okuması o zaman başarısız olur ve oturum kilitleriyle birlikte sonlanır. Kaybolan bir karşı tarafı (hiç cevap yok) fark eder; bunu idle_in_transaction_session_timeout da sonlandırırdı; transaction dışında boşta bekleyen bir oturumu ise o sonlandırmazdı.",
        },
    }
    client_connection_check "client-connection-check" {
        expected => {
            en: "A's client goes away while A's long statement runs; with client_connection_check_interval the server notices within the interval, ends A's statement and session, and B gets the row (PostgreSQL 14+)",
            tr: "A'nın uzun komutu çalışırken istemcisi gider; client_connection_check_interval ile sunucu bunu aralık içinde fark eder, A'nın komutunu ve oturumunu sonlandırır ve B satırı alır (PostgreSQL 14+)",
        },
        explain => {
            en: "While a statement runs the backend does not read from its client, so a closed connection goes unseen until the statement ends and its answer cannot be sent: a long statement keeps its locks for its whole length. client_connection_check_interval makes the backend check the socket that often during the statement and give up on a client that is gone.",
            tr: "Bir komut çalışırken backend istemcisinden okumaz, bu yüzden kapanmış bir bağlantı komut bitip cevabı gönderilemeyene kadar görülmez: uzun bir komut kilitlerini boyu boyunca tutar. client_connection_check_interval backend'in komut sırasında soketi bu sıklıkla denetlemesini ve gitmiş bir istemciden vazgeçmesini sağlar.",
        },
    }
}

/// The variant's stage: the fault proxy in front of A, A through it, B direct.
struct Stage {
    proxy: Proxy,
    sql: SqlFile,
    a: Session,
    b: Session,
    /// The server's peer for A is the proxy's own connection (nothing, a
    /// pooler say, stands between): what A's server-side socket sees is what
    /// happens to A's network.
    direct: bool,
}

impl Stage {
    /// None (and the variant skipped, with why) where the server is not reached over TCP.
    async fn start(cx: &mut Cx<'_>) -> Result<Option<Stage>> {
        let sql = cx.sql("lost-client.sql")?;
        let proxy = match Proxy::start(&cx.env.pg).await {
            Ok(p) => p,
            Err(e) => {
                cx.skip(msg::needs_tcp(crate::i18n::error_line(&e, crate::i18n::Lang::En)));
                return Ok(None);
            }
        };
        // A's network is the proxy: straight to the server, not through
        // lab's pooler; A is the variant's session all the same (ended with it).
        let opener = cx.opener().via(proxy.config(&cx.env.pg));
        proxy.name_encrypted(&crate::postgres::connect::app_name(&format!("{}A", opener.app())));
        let a = opener.open("A").await?;
        let b = cx.open(&["B"]).await?.remove(0);
        let port = cx
            .env
            .int(&format!(
                "SELECT coalesce(client_port, -1) FROM pg_stat_activity WHERE pid = {}",
                a.pid()
            ))
            .await?;
        let direct = proxy.upstream_ports(a.app()).iter().any(|p| i64::from(*p) == port);
        Ok(Some(Stage {
            proxy,
            sql,
            a,
            b,
            direct,
        }))
    }

    /// None (and the variant skipped, with why) when something stands
    /// between the proxy and the server: the server's socket would then
    /// see that, not A's client.
    async fn direct(cx: &mut Cx<'_>) -> Result<Option<Stage>> {
        let Some(st) = Stage::start(cx).await? else {
            return Ok(None);
        };
        if !st.direct {
            cx.skip(msg::not_direct());
            st.proxy.stop().await;
            return Ok(None);
        }
        Ok(Some(st))
    }

    /// A takes book 1's row in a transaction, with `settings` first. Returns
    /// when A's last statement was about to be sent: A's connection was last
    /// busy, and its backend went idle, no sooner (lab reading the answer
    /// later, on a busy machine, must not shorten what it measures).
    async fn a_holds_the_row(&self, settings: &[(&str, String)]) -> Result<Instant> {
        for (name, sql) in settings {
            self.a.exec(name, sql).await?;
        }
        self.a.exec("a_begin", self.sql.get("a_begin")?).await?;
        let sent = Instant::now();
        self.a.exec("a_lock", self.sql.get("a_lock")?).await?;
        Ok(sent)
    }

    /// A's client vanishes (or goes away): the proxy's fault on A's connection.
    fn cut(&self, cx: &Cx<'_>, fault: Fault) {
        self.proxy.set(self.a.app(), fault);
        cx.narrate(match fault {
            Fault::Close => msg::a_closed(),
            _ => msg::a_vanished(),
        });
    }
}

/// What the server says of A's backend: its state, or "gone".
async fn backend_state(cx: &Cx<'_>, sql: &SqlFile, pid: i32) -> Result<String> {
    let set = cx.env.rows(&sql.bind("backend", &[("pid", &pid)])?).await?;
    Ok(match set.get(0, "state") {
        Some(state) => format!("{state} ({})", set.get(0, "wait_event").unwrap_or("-")),
        None => msg::gone().en(),
    })
}

/// B's wait, then its answer within `within`: the answer, and whether A's
/// backend is gone then. A run past `within` ends A's backend itself (lab
/// must leave nothing behind) and B's answer follows.
async fn b_after_a(cx: &mut Cx<'_>, st: &Stage, within: Duration) -> Result<(Option<Answer>, Option<Instant>, bool)> {
    let waiting = b_waits(cx, st).await?;
    b_gets(cx, st, waiting, within).await
}

/// B begins and updates A's row: lab sees it wait for A.
async fn b_waits(cx: &Cx<'_>, st: &Stage) -> Result<Waiting> {
    st.b.exec("b_begin", st.sql.get("b_begin")?).await?;
    st.b.send_until_waiting(&cx.env.control, "b_update", st.sql.get("b_update")?, &[&st.a])
        .await
}

/// B's answer within `within`, as [`b_after_a`] has it.
async fn b_gets(
    cx: &mut Cx<'_>,
    st: &Stage,
    mut waiting: Waiting,
    within: Duration,
) -> Result<(Option<Answer>, Option<Instant>, bool)> {
    let answer = waiting.answer_within(within).await;
    // When B's answer came, not when lab (on a loaded machine, later) read it.
    let answered = waiting.answered_at();
    let a_pid = st.a.pid();
    let gone = if matches!(answer, Some(Ok(_))) {
        // B gets the row as A's exiting backend releases its locks; the
        // server lists that backend until it has finished exiting.
        let left = format!("SELECT count(*) = 0 FROM pg_stat_activity WHERE pid = {a_pid}");
        let from = Instant::now();
        let gone = cx.env.until(&left, cx.env.wait_timeout, msg::reading_a).await?;
        cx.metric("a_gone_after_b_ms", millis(from.elapsed()));
        gone
    } else {
        cx.env.backends_left(&[a_pid]).await? == 0
    };
    if answer.is_none() {
        // Still waiting: the evidence, then lab ends A's session itself.
        cx.metric("a_backend", backend_state(cx, &st.sql, a_pid).await?);
        cx.env.terminate(&[a_pid], st.a.app()).await;
        cx.narrate(msg::lab_ends_a());
        if waiting.answer_within(cx.env.wait_timeout).await.is_none() {
            return Err(Deviation(msg::b_never(crate::engine::secs(cx.env.wait_timeout))).into());
        }
    }
    st.b.exec("b_commit", st.sql.get("b_commit")?).await?;
    Ok((answer, answered, gone))
}

/// The checks of a variant whose mechanism ends A's session: B got the row
/// (its answer came at `answered`) once the server had ended A's session, no
/// sooner than `at_least` after `since` (lab's clock: before A's last
/// statement was sent, or before the cut).
fn ended(
    cx: &mut Cx<'_>,
    got: &Option<Answer>,
    since: Instant,
    answered: Option<Instant>,
    gone: bool,
    at_least: Duration,
) {
    let waited = answered.map_or_else(|| since.elapsed(), |at| at.saturating_duration_since(since));
    cx.metric("b_got_row_after_ms", millis(waited));
    let ok = matches!(got, Some(Ok(_)));
    cx.check(ok, msg::b_got_row());
    cx.check(gone, msg::a_gone());
    cx.check(!ok || waited >= at_least, msg::not_sooner(at_least.as_millis() as u64));
    cx.observe(if ok {
        msg::observed_ended(format!("{:.0}", millis(waited)))
    } else {
        msg::observed_still()
    });
    cx.anomaly(!ok);
}

async fn black_hole(cx: &mut Cx<'_>) -> Result<()> {
    let Some(st) = Stage::start(cx).await? else {
        return Ok(());
    };
    let window = cx.opts.timeout * 3;
    st.a_holds_the_row(&[]).await?;
    st.cut(cx, Fault::BlackHole);
    let (got, _, gone) = b_after_a(cx, &st, window).await?;
    let still = got.is_none() && !gone;
    cx.metric("window_ms", window.as_millis() as u64);
    cx.check(still, msg::still_waiting(window.as_millis() as u64));
    cx.observe(if still {
        msg::observed_still()
    } else {
        msg::observed_noticed()
    });
    cx.anomaly(still);
    st.proxy.stop().await;
    Ok(())
}

async fn idle_in_transaction_timeout(cx: &mut Cx<'_>) -> Result<()> {
    let Some(st) = Stage::start(cx).await? else {
        return Ok(());
    };
    let t = cx.opts.timeout;
    let set = st
        .sql
        .bind("idle_timeout", &[("timeout", &format!("{}ms", t.as_millis()))])?;
    st.a_holds_the_row(&[]).await?;
    // B waits for A's row before A's timer starts (A sets it, then its
    // client vanishes): a loaded machine's pause cannot let the timer end A
    // before lab has seen B wait.
    let waiting = b_waits(cx, &st).await?;
    let idle_from = Instant::now();
    st.a.exec("idle_timeout", &set).await?;
    st.cut(cx, Fault::BlackHole);
    let (got, answered, gone) = b_gets(cx, &st, waiting, t * 5 + Duration::from_secs(1)).await?;
    // Measured from A's last statement (sent): its idle time began later.
    ended(cx, &got, idle_from, answered, gone, t);
    st.proxy.stop().await;
    Ok(())
}

async fn tcp_keepalives(cx: &mut Cx<'_>) -> Result<()> {
    let Some(st) = Stage::direct(cx).await? else {
        return Ok(());
    };
    let set = st.sql.get("keepalives")?.to_string();
    let silent_from = st.a_holds_the_row(&[("keepalives", set)]).await?;
    // B waits for A's row before A's client vanishes, as in the variants
    // above: A's idle time counts from its last statement, and a loaded
    // machine's pause before B's UPDATE must not let the server end A
    // before lab has seen B wait. (A probe sent before the cut is answered
    // and A's idle time starts again: later, never sooner.)
    let waiting = b_waits(cx, &st).await?;
    st.cut(cx, Fault::BlackHole);
    // idle 1 s, then 2 probes 1 s apart: about 3 s; the deadline on top.
    let (got, answered, gone) = b_gets(cx, &st, waiting, Duration::from_secs(3) + cx.env.wait_timeout).await?;
    ended(cx, &got, silent_from, answered, gone, Duration::from_secs(1));
    st.proxy.stop().await;
    Ok(())
}

async fn client_connection_check(cx: &mut Cx<'_>) -> Result<()> {
    if cx.env.server.version_num < 140000 {
        let version = cx.env.server.version.clone();
        cx.skip(msg::needs_14(version));
        return Ok(());
    }
    let Some(st) = Stage::start(cx).await? else {
        return Ok(());
    };
    let t = cx.opts.timeout;
    let set = st
        .sql
        .bind("check_interval", &[("timeout", &format!("{}ms", t.as_millis()))])?;
    st.a_holds_the_row(&[("check_interval", set)]).await?;
    // A's long statement holds its row lock all along, three times as long
    // as lab watches B (so only the check can end it within that time).
    let window = t * 5 + Duration::from_secs(1);
    let seconds = format!("{:.3}", (window * 3).as_secs_f64());
    let long = st.sql.bind("a_long", &[("seconds", &seconds)])?;
    st.a.prompt(Some("a_long"), &long, None).await;
    let mut a_long = st.a.send(&long);
    // The client goes away while the statement runs: the server says it runs first.
    let running = format!(
        "SELECT (state = 'active' AND query LIKE 'SELECT pg_sleep%')::text FROM pg_stat_activity WHERE pid = {}",
        st.a.pid()
    );
    if !cx.env.until(&running, cx.env.wait_timeout, msg::a_not_running).await? {
        return Err(Deviation(msg::a_not_running()).into());
    }
    st.a.note(msg::a_running());
    // B waits for A's row before A's client goes: the check interval starts
    // with the cut, and a loaded machine's pause between the cut and B's
    // UPDATE could otherwise let the server end A before B ever waited.
    let waiting = b_waits(cx, &st).await?;
    let gone_from = Instant::now();
    st.cut(cx, Fault::Close);
    // A's client hears at once that its connection is gone: recorded then,
    // before B's answer (the timeline is in the order things are recorded).
    // B's wait is measured from its own UPDATE, whatever this takes.
    if a_long.ready_within(cx.env.wait_timeout).await
        && let Some((answer, at)) = a_long.take()
    {
        cx.recorder()
            .answer(at, "A", Some("a_long"), &long, &answer, None, None);
    }
    let (got, answered, gone) = b_gets(cx, &st, waiting, window).await?;
    ended(cx, &got, gone_from, answered, gone, Duration::ZERO);
    st.proxy.stop().await;
    Ok(())
}

mod msg {
    crate::messages! {
        prefix "lc";
        about() {
            en: "A lost client: its row lock stays until the server notices, or a timeout ends its session",
            tr: "Kaybolan istemci: satır kilidi, sunucu fark edene ya da bir zaman aşımı oturumunu bitirene kadar kalır",
        }
        summary() {
            en: "A's client vanishes inside a transaction holding a row; B waits for the row",
            tr: "A'nın istemcisi bir satırı tutan transaction'ın içinde kaybolur; B satırı bekler",
        }
        needs_tcp(why) {
            en: "needs the server's TCP address for lab's fault proxy ({why})",
            tr: "lab'ın hata proxy'si için sunucunun TCP adresi gerekir ({why})",
        }
        not_direct() {
            en: "something stands between lab and the server (a pooler?): the server's socket sees it, not A's client, so what happens to A's network cannot reach the server",
            tr: "lab ile sunucu arasında bir şey var (bir pooler?): sunucunun soketi A'nın istemcisini değil onu görür, bu yüzden A'nın ağına olan sunucuya ulaşamaz",
        }
        needs_14(version) {
            en: "client_connection_check_interval exists from PostgreSQL 14 (this is {version})",
            tr: "client_connection_check_interval PostgreSQL 14'ten beri var (bu sunucu {version})",
        }
        a_vanished() {
            en: "A's client vanishes: from now on no packet passes between it and the server, none is acknowledged",
            tr: "A'nın istemcisi kaybolur: artık onunla sunucu arasında hiçbir paket geçmez, hiçbiri onaylanmaz",
        }
        a_closed() {
            en: "A's client goes away: its connection is closed (FIN) while its statement runs",
            tr: "A'nın istemcisi gider: komutu çalışırken bağlantısı kapanır (FIN)",
        }
        a_running() {
            en: "A's long statement runs (pg_stat_activity: active)",
            tr: "A'nın uzun komutu çalışıyor (pg_stat_activity: active)",
        }
        a_not_running() {
            en: "A's long statement was not seen running on the server",
            tr: "A'nın uzun komutu sunucuda çalışırken görülmedi",
        }
        lab_ends_a() {
            en: "lab ends A's backend itself (pg_terminate_backend), so that nothing of the variant stays",
            tr: "lab, varyanttan hiçbir şey kalmasın diye A'nın backend'ini kendisi sonlandırır (pg_terminate_backend)",
        }
        reading_a() {
            en: "reading A's backend from pg_stat_activity",
            tr: "A'nın backend'i pg_stat_activity'den okunuyor",
        }
        gone() {
            en: "gone",
            tr: "yok",
        }
        b_never(deadline) {
            en: "B's UPDATE did not answer within {deadline} s even after A's backend was ended",
            tr: "B'nin UPDATE'i A'nın backend'i sonlandırıldıktan sonra bile {deadline} sn içinde yanıt vermedi",
        }
        still_waiting(ms) {
            en: "{ms} ms after A's client vanished, A's backend still holds the lock and B still waits (the server has not noticed)",
            tr: "A'nın istemcisi kaybolduktan {ms} ms sonra A'nın backend'i hâlâ kilidi tutuyor ve B hâlâ bekliyor (sunucu fark etmedi)",
        }
        b_got_row() {
            en: "B's UPDATE gets the row",
            tr: "B'nin UPDATE'i satırı alır",
        }
        a_gone() {
            en: "A's backend is gone when B gets the row (the server ended A's session)",
            tr: "B satırı aldığında A'nın backend'i yok (sunucu A'nın oturumunu sonlandırdı)",
        }
        not_sooner(ms) {
            en: "B waits at least {ms} ms: the server ended A's session no sooner than its setting says",
            tr: "B en az {ms} ms bekler: sunucu A'nın oturumunu ayarının dediğinden önce sonlandırmadı",
        }
        observed_ended(ms) {
            en: "A's session ended on the server; B got the row {ms} ms after A's client went silent",
            tr: "A'nın oturumu sunucuda sonlandı; B satırı A'nın istemcisi sustuktan {ms} ms sonra aldı",
        }
        observed_still() {
            en: "A's backend kept its lock; B was still waiting at the end of the window",
            tr: "A'nın backend'i kilidini tuttu; B pencerenin sonunda hâlâ bekliyordu",
        }
        observed_noticed() {
            en: "the server ended A's session within the window",
            tr: "sunucu A'nın oturumunu pencere içinde sonlandırdı",
        }
    }
}
