//! "100 concurrent decrements must remove exactly 100": R requests, each on
//! its own connection, buy one copy of book 1 at once (lab/stock-race.sql).
//! The requests' steps are summarised (a hundred columns would not read),
//! not recorded one by one.
use std::collections::BTreeMap;
use std::sync::Arc;

use anyhow::{Result, bail};

use super::context::msg as cxmsg;
use super::{Cx, Options, Params, Scenario, ScenarioOptions};
use crate::engine::{Barrier, Session, join_all, raw_error};
use crate::i18n::Context;
use crate::named_sql::SqlFile;
use crate::report::Phrase;
use crate::sql_lexer::one_line;

pub static SCENARIO: Scenario = Scenario {
    name: "stock-race",
    about: msg::about,
    summary: msg::summary,
    readme: "`--stock` S (100) and `--requests` R (100) \"buy one\" requests, each on its own connection, released \
             together. Read-modify-write: all read S, all write S − 1, R − 1 decrements lost. The guard `UPDATE \
             ... WHERE quantity_on_hand >= 1` with a rows-affected check sells exactly R. With fewer copies than \
             requests (R − R/10, at least one short) read-modify-write oversells, the guard sells the stock and \
             rejects the rest. On a server with fewer free connections it runs as many requests as fit and says so.",
    spec: None,
    variants: VARIANTS,
    options: Some(Options::of::<StockOpts>(&[
        (
            "stock",
            "read-modify-write ve atomic-guard için 1 numaralı kitabın stoktaki kopyaları (S); \
             oversell R − R/10 kopya koyar (en az bir eksik)",
        ),
        (
            "requests",
            "Her biri kendi bağlantısında eşzamanlı \"bir tane al\" istekleri (R)",
        ),
    ])),
};

crate::variants! {
    prefix "sr";
    read_modify_write "read-modify-write" {
        expected(stock, requests, after, lost) = |p| {
                let o = opts(p);
                (
                    o.stock,
                    o.requests,
                    o.stock.saturating_sub(1),
                    o.requests.saturating_sub(1),
                )
            } => {
            en: "every request reads {stock} and writes {after}: all {requests} \"succeed\" but the stock drops by 1; {lost} decrements lost (anomaly)",
            tr: "her istek {stock} okur ve {after} yazar: {requests} isteğin hepsi \"başarılı\" olur ama stok 1 azalır; {lost} düşüş kaybolur (anomali)",
        },
        explain => {
            en: "Every request computed stock - 1 from the same read; the writes queued on the row lock, but each wrote its own stale value. The race is in the application, between its read and its write.",
            tr: "Her istek stok - 1'i aynı okumadan hesapladı; yazmalar satır kilidinde sıraya girdi ama her biri kendi bayat değerini yazdı. Yarış uygulamanın okuması ile yazması arasında.",
        },
    }
    atomic_guard "atomic-guard" {
        expected(sold, left) = |p| {
                let o = opts(p);
                let sold = o.requests.min(o.stock);
                (sold, o.stock - sold)
            } => {
            en: "UPDATE ... SET stock = stock - 1 WHERE stock >= 1: exactly {sold} sold, final {left}",
            tr: "UPDATE ... SET stock = stock - 1 WHERE stock >= 1: tam {sold} satış, son stok {left}",
        },
        explain => {
            en: "One statement reads and writes under the row lock, and its WHERE guard re-checks the stock after waiting: rows affected says whether this request got a copy.",
            tr: "Tek komut satır kilidi altında okur ve yazar, WHERE koşulu bekledikten sonra stoğu yeniden kontrol eder: etkilenen satır sayısı bu isteğin bir kopya alıp almadığını söyler.",
        },
    }
    oversell "oversell" {
        expected(stock, requests, rejected) = |p| {
                let r = opts(p).requests as usize;
                let s = oversell_stock(r);
                (s, r, r - s)
            } => {
            en: "stock {stock}, {requests} requests: read-modify-write sells more than {stock}; the atomic guard sells exactly {stock} and rejects {rejected}",
            tr: "stok {stock}, {requests} istek: oku-değiştir-yaz {stock}'dan fazla satar; atomik koruma tam {stock} satar ve {rejected} reddeder",
        },
        explain => {
            en: "Read-modify-write checks the stock on a stale read, so it sells copies that are gone; the guarded UPDATE re-checks under the lock and rejects the excess.",
            tr: "Oku-değiştir-yaz stoğu bayat bir okumayla kontrol eder, olmayan kopyaları satar; koşullu UPDATE kilit altında yeniden kontrol eder ve fazlasını reddeder.",
        },
    }
}

/// `lab stock-race`'s own options.
#[derive(Debug, Clone, clap::Args)]
pub struct StockOpts {
    /// Copies of book 1 in stock (S) for read-modify-write and atomic-guard;
    /// oversell stocks R − R/10 (at least one short).
    #[arg(long, default_value_t = 100, value_name = "S")]
    pub stock: u32,

    /// Concurrent "buy one" requests, each on its own connection (R).
    #[arg(long, default_value_t = 100, value_name = "R")]
    pub requests: u32,
}

impl ScenarioOptions for StockOpts {
    fn check(&self) -> Result<()> {
        if !(2..=1000).contains(&self.requests) {
            bail!(crate::options::msg::between("--requests", 2, 1000));
        }
        if self.stock > 1_000_000 {
            bail!(cxmsg::at_most("--stock", 1_000_000));
        }
        Ok(())
    }
}

fn opts(p: &Params) -> &StockOpts {
    p.downcast_ref().expect("stock-race options")
}

/// Fewer copies than requests for the oversell race: a tenth short, at least one.
fn oversell_stock(requests: usize) -> usize {
    requests - (requests / 10).max(1)
}

#[derive(Debug, Clone)]
struct Tally {
    requests: usize,
    initial: i64,
    sold: usize,
    rejected: usize,
    final_stock: i64,
    /// What the read-modify-write requests read, and how many read each value.
    reads: BTreeMap<i64, usize>,
}

impl Tally {
    fn lost_decrements(&self) -> i64 {
        self.sold as i64 - (self.initial - self.final_stock)
    }

    fn oversold(&self) -> i64 {
        (self.sold as i64 - self.initial).max(0)
    }

    /// "100 read 100" or "60 read 100, 40 read 99".
    fn reads_seen(&self) -> String {
        self.reads
            .iter()
            .rev()
            .map(|(v, n)| msg::n_read(*n, *v).en())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Opens the requests' sessions: as many as asked, or as fit on this server.
async fn sessions(cx: &mut Cx<'_>) -> Result<Option<Vec<Session>>> {
    let asked = cx.options::<StockOpts>().requests as i64;
    let free = crate::postgres::connect::free_connections(&cx.env.control).await?;
    // --max-connections counts the control connection too.
    let capped = cx.env.max_connections.map(|n| n as i64 - 1);
    let requests = asked.min(free - 5).min(capped.unwrap_or(i64::MAX)).max(1) as usize;
    if requests < asked as usize {
        match capped {
            Some(room) if room < free - 5 => cx.note(msg::fewer_by_cap(room + 1, requests, asked)),
            _ => cx.note(msg::fewer(free, requests, asked)),
        }
    }
    cx.metric("requests", requests);
    if requests < 2 {
        cx.skip(msg::no_room(free));
        return Ok(None);
    }
    let names: Vec<String> = (1..=requests).map(|i| format!("R{i:03}")).collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    Ok(Some(cx.open(&refs).await?))
}

fn record(cx: &mut Cx<'_>, t: &Tally) {
    cx.metric("sold", t.sold);
    cx.metric("rejected", t.rejected);
    cx.metric("final_stock", t.final_stock);
    cx.metric("lost_decrements", t.lost_decrements());
    cx.metric("oversold", t.oversold());
}

async fn read_modify_write(cx: &mut Cx<'_>) -> Result<()> {
    let sql = cx.sql("stock-race.sql")?;
    let Some(sessions) = sessions(cx).await? else {
        return Ok(());
    };
    let stock = cx.options::<StockOpts>().stock as i64;
    let t = race(cx, &sql, &sessions, stock, false).await?;
    record(cx, &t);
    cx.expected(read_modify_write::expected(
        t.initial,
        t.requests,
        t.initial - 1,
        t.requests as i64 - 1,
    ));
    cx.observe(msg::observed_rmw(
        t.requests,
        t.reads_seen(),
        t.sold,
        t.final_stock,
        t.lost_decrements(),
    ));
    cx.check(t.reads.keys().eq([stock].iter()), msg::all_read(stock));
    cx.check(t.sold == t.requests, msg::every_believes());
    cx.check(t.final_stock == t.initial - 1, msg::dropped_one());
    cx.anomaly(t.lost_decrements() > 0);
    Ok(())
}

async fn atomic_guard(cx: &mut Cx<'_>) -> Result<()> {
    let sql = cx.sql("stock-race.sql")?;
    let Some(sessions) = sessions(cx).await? else {
        return Ok(());
    };
    let stock = cx.options::<StockOpts>().stock as i64;
    let t = race(cx, &sql, &sessions, stock, true).await?;
    record(cx, &t);
    let expect_sold = t.requests.min(t.initial as usize);
    cx.expected(atomic_guard::expected(expect_sold, t.initial - expect_sold as i64));
    cx.observe(msg::observed_guard(t.sold, t.rejected, t.final_stock, t.initial));
    cx.check(t.sold == expect_sold, msg::exactly_sold(expect_sold));
    cx.check(t.final_stock == t.initial - expect_sold as i64, msg::one_copy_each());
    cx.anomaly(t.lost_decrements() != 0 || t.oversold() > 0);
    Ok(())
}

async fn oversell(cx: &mut Cx<'_>) -> Result<()> {
    let sql = cx.sql("stock-race.sql")?;
    let Some(sessions) = sessions(cx).await? else {
        return Ok(());
    };
    let requests = sessions.len();
    let stock = oversell_stock(requests);
    cx.expected(oversell::expected(stock, requests, requests - stock));
    let naive = race(cx, &sql, &sessions, stock as i64, false).await?;
    let guarded = race(cx, &sql, &sessions, stock as i64, true).await?;
    record(cx, &naive);
    let side = |name: crate::i18n::Text, t: &Tally| {
        vec![
            Phrase::Text(name),
            Phrase::Plain(t.initial.to_string()),
            Phrase::Plain(t.requests.to_string()),
            Phrase::Plain(t.sold.to_string()),
            Phrase::Plain(t.rejected.to_string()),
            Phrase::Plain(t.final_stock.to_string()),
            Phrase::Plain(t.oversold().to_string()),
        ]
    };
    cx.evidence(
        msg::ev_side(),
        vec![
            msg::col_approach().into(),
            msg::col_stock().into(),
            msg::col_requests().into(),
            msg::col_sold().into(),
            msg::col_rejected().into(),
            msg::col_final().into(),
            msg::col_oversold().into(),
        ],
        vec![side(msg::rmw_name(), &naive), side(msg::guard_name(), &guarded)],
    );
    cx.metric(
        "atomic_guard",
        serde_json::json!({
            "requests": guarded.requests, "sold": guarded.sold, "rejected": guarded.rejected,
            "final_stock": guarded.final_stock, "oversold": guarded.oversold(),
        }),
    );
    cx.observe(msg::observed_oversell(
        stock,
        requests,
        naive.sold,
        naive.oversold(),
        guarded.sold,
        guarded.rejected,
    ));
    cx.check(naive.sold > stock, msg::sells_more());
    cx.check(guarded.sold == stock, msg::guard_exactly(stock));
    cx.check(guarded.rejected == requests - stock, msg::rejects_rest());
    cx.check(guarded.final_stock == 0, msg::ends_zero());
    cx.anomaly(naive.oversold() > 0);
    Ok(())
}

/// All requests start together (a barrier); read-modify-write requests all
/// read before any writes (a second barrier), so the race happens every run.
async fn race(cx: &mut Cx<'_>, sql: &SqlFile, sessions: &[Session], stock: i64, guarded: bool) -> Result<Tally> {
    cx.env.rows(&sql.bind("set_stock", &[("stock", &stock)])?).await?;
    let n = sessions.len();
    let approach = if guarded { msg::guard_name() } else { msg::rmw_name() };
    cx.narrate(msg::set_stock(stock, n, approach.clone()));
    let start = cx.barrier("start", n);
    let all_read = cx.barrier("all_read", n);
    let bar = cx.opts.progress.bar(None, n as u64, approach.en());
    let read = sql.get("read")?.to_string();
    let buy = sql.get("buy_one")?.to_string();
    let write_template = Arc::new(sql.get("write")?.to_string());
    let handles = sessions
        .iter()
        .map(|s| {
            let (s, start, all_read, bar, read, buy, write) = (
                s.clone(),
                start.clone(),
                all_read.clone(),
                bar.clone(),
                read.clone(),
                buy.clone(),
                write_template.clone(),
            );
            tokio::spawn(async move { request(&s, guarded, &start, &all_read, &read, &buy, &write, bar).await })
        })
        .collect();
    let results = join_all(cx.env.wait_timeout, msg::a_request(), handles).await;
    bar.finish_and_clear();
    let mut reads: BTreeMap<i64, usize> = BTreeMap::new();
    let mut sold = 0;
    let t0 = cx.recorder().started();
    let ms = |t: std::time::Instant| crate::report::millis(t.saturating_duration_since(t0));
    for (s, (seen, ok, (from, to))) in sessions.iter().zip(results?) {
        // Each request's span, for the HTML report's Gantt chart.
        cx.spans(s.name(), vec![[ms(from), ms(to)]]);
        if let Some(v) = seen {
            *reads.entry(v).or_default() += 1;
        }
        if ok {
            sold += 1;
        }
    }
    let final_stock = cx.env.int(sql.get("stock")?).await?;
    let t = Tally {
        requests: n,
        initial: stock,
        sold,
        rejected: n - sold,
        final_stock,
        reads,
    };
    if guarded {
        cx.narrate(msg::guard_result(n, one_line(&buy), sold, n - sold));
    } else {
        cx.narrate(msg::reads(n, one_line(&read), t.reads_seen()));
        cx.narrate(msg::each_wrote(sold));
    }
    cx.narrate(msg::final_stock(final_stock));
    Ok(t)
}

/// One "buy one" request. Returns what it read (read-modify-write), whether
/// it sold, and when it ran (from the start barrier to its last answer).
#[allow(clippy::too_many_arguments)]
async fn request(
    s: &Session,
    guarded: bool,
    start: &Arc<Barrier>,
    all_read: &Arc<Barrier>,
    read: &str,
    buy: &str,
    write: &str,
    bar: indicatif::ProgressBar,
) -> Result<(Option<i64>, bool, (std::time::Instant, std::time::Instant))> {
    let what = |step: &str| msg::request_step(s.name(), step);
    start.wait(s.name()).await?;
    let began = std::time::Instant::now();
    // Not recorded statement by statement (the requests are summarised):
    // under --step the request shows each statement itself. One round trip
    // each (a simple query, which a transaction pooler passes whole).
    let out = if guarded {
        s.prompt(Some("buy_one"), buy, None).await;
        let r = s.simple(buy).await.map_err(|e| raw_error(e, what("buy")))?;
        (None, r.last().is_some_and(|r| r.count == 1))
    } else {
        s.prompt(Some("read"), read, None).await;
        let r = s.simple(read).await.map_err(|e| raw_error(e, what("read")))?;
        let q = crate::engine::answer::last_set(&r)
            .and_then(|set| set.rows.first()?.first()?.as_deref()?.parse::<i64>().ok())
            .ctx(|| msg::no_quantity(s.name()))?;
        all_read.wait(s.name()).await?;
        if q >= 1 {
            let sql = crate::named_sql::bind(write, &[("new_quantity", &(q - 1))]).map_err(msg::no_value)?;
            s.prompt(Some("write"), &sql, None).await;
            s.simple(&sql).await.map_err(|e| raw_error(e, what("write")))?;
            (Some(q), true)
        } else {
            (Some(q), false)
        }
    };
    bar.inc(1);
    Ok((out.0, out.1, (began, std::time::Instant::now())))
}

mod msg {
    crate::messages! {
        prefix "sr";
        no_quantity(session) {
            en: "request {session}: the read returned no quantity",
            tr: "istek {session}: okuma bir miktar döndürmedi",
        }
        about() {
            en: "R concurrent \"buy one\" requests against stock S: exactly R must be removed",
            tr: "S stoğuna karşı R eşzamanlı \"bir tane al\" isteği: tam olarak R düşülmeli",
        }
        summary() {
            en: "R concurrent \"buy one\" requests against stock S (defaults 100 and 100): exactly R must be removed",
            tr: "S stoğa karşı R eşzamanlı \"bir tane al\" isteği (varsayılan 100 ve 100): tam olarak R düşülmeli",
        }
        observed_rmw(requests, reads, sold, final_stock, lost) {
            en: "{requests} requests: {reads}; {sold} \"sold\"; final stock {final_stock}: {lost} decrement(s) lost",
            tr: "{requests} istek: {reads}; {sold} \"satış\"; son stok {final_stock}: {lost} düşüş kayboldu",
        }
        observed_guard(sold, rejected, final_stock, stock) {
            en: "{sold} sold, {rejected} rejected; final stock {final_stock} (from {stock})",
            tr: "{sold} satıldı, {rejected} reddedildi; son stok {final_stock} ({stock} idi)",
        }
        observed_oversell(stock, requests, naive, over, guarded, rejected) {
            en: "stock {stock}, {requests} requests: read-modify-write sold {naive} ({over} oversold); the atomic guard sold {guarded} and rejected {rejected}",
            tr: "stok {stock}, {requests} istek: oku-değiştir-yaz {naive} sattı ({over} fazla); atomik koşul {guarded} sattı ve {rejected} reddetti",
        }
        fewer(free, requests, asked) {
            en: "this server has room for {free} more connections: running {requests} requests instead of {asked}",
            tr: "bu sunucuda {free} bağlantılık yer var: {asked} yerine {requests} istek çalışıyor",
        }
        fewer_by_cap(max, requests, asked) {
            en: "--max-connections {max}: running {requests} requests instead of {asked}",
            tr: "--max-connections {max}: {asked} yerine {requests} istek çalışıyor",
        }
        no_room(free) {
            en: "this server has room for {free} more connections: not enough for two concurrent requests",
            tr: "bu sunucuda {free} bağlantılık yer var: iki eşzamanlı istek için yetmez",
        }
        all_read(stock) {
            en: "every request reads {stock} (all read before any writes)",
            tr: "her istek {stock} okur (hiçbiri yazmadan hepsi okur)",
        }
        every_believes() {
            en: "every request believes it sold a copy",
            tr: "her istek bir kopya sattığını sanır",
        }
        dropped_one() {
            en: "the stock dropped by one only",
            tr: "stok yalnızca bir azaldı",
        }
        exactly_sold(n) {
            en: "exactly {n} sold",
            tr: "tam olarak {n} satıldı",
        }
        one_copy_each() {
            en: "every sale removed exactly one copy",
            tr: "her satış tam bir kopya düştü",
        }
        ev_side() {
            en: "side by side",
            tr: "yan yana",
        }
        col_approach() {
            en: "approach",
            tr: "yaklaşım",
        }
        col_stock() {
            en: "stock",
            tr: "stok",
        }
        col_requests() {
            en: "requests",
            tr: "istek",
        }
        col_sold() {
            en: "sold",
            tr: "satılan",
        }
        col_rejected() {
            en: "rejected",
            tr: "reddedilen",
        }
        col_final() {
            en: "final stock",
            tr: "son stok",
        }
        col_oversold() {
            en: "oversold",
            tr: "fazla satılan",
        }
        rmw_name() {
            en: "read-modify-write",
            tr: "oku-değiştir-yaz",
        }
        guard_name() {
            en: "atomic guard",
            tr: "atomik koruma",
        }
        sells_more() {
            en: "read-modify-write sells more than the stock",
            tr: "oku-değiştir-yaz stoktan fazlasını satar",
        }
        guard_exactly(n) {
            en: "the atomic guard sells exactly {n}",
            tr: "atomik koruma tam olarak {n} satar",
        }
        rejects_rest() {
            en: "and rejects the rest",
            tr: "ve kalanı reddeder",
        }
        ends_zero() {
            en: "the guarded stock ends at 0",
            tr: "korunan stok 0'da biter",
        }
        set_stock(stock, n, approach) {
            en: "stock of book 1 set to {stock}; {n} requests start together ({approach})",
            tr: "1 numaralı kitabın stoku {stock} yapıldı; {n} istek birlikte başlıyor ({approach})",
        }
        guard_result(n, sql, sold, out) {
            en: "{n} × `{sql}`: {sold} affected 1 row (sold), {out} affected 0 (sold out)",
            tr: "{n} × `{sql}`: {sold} tanesi 1 satırı etkiledi (satıldı), {out} tanesi 0 (tükendi)",
        }
        reads(n, sql, seen) {
            en: "{n} × `{sql}`: {seen}",
            tr: "{n} × `{sql}`: {seen}",
        }
        n_read(n, value) {
            en: "{n} read {value}",
            tr: "{n} tanesi {value} okudu",
        }
        each_wrote(sold) {
            en: "every request wrote its own stock - 1 (`UPDATE ... SET quantity_on_hand = <read - 1>`): {sold} \"sold\"",
            tr: "her istek kendi okuduğu stok - 1'i yazdı (`UPDATE ... SET quantity_on_hand = <okunan - 1>`): {sold} \"satış\"",
        }
        final_stock(n) {
            en: "final stock {n}",
            tr: "son stok {n}",
        }
        request_step(request, step) {
            en: "stock-race: request {request}: {step}",
            tr: "stock-race: {request} isteği: {step}",
        }
        a_request() {
            en: "stock-race: a request",
            tr: "stock-race: bir istek",
        }
        no_value(var) {
            en: "stock-race: no value for :{var}",
            tr: "stock-race: :{var} için değer yok",
        }
    }
}
