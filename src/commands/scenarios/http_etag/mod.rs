//! The lost update one layer up (seed 000): two people edit book 1 through
//! a real HTTP API (lab's own, served on loopback, lab/http-etag.sql) with
//! real HTTP clients A and B, driven request by request. ETag / If-Match /
//! 412 / 428 (RFC 9110 §13.1.1, RFC 6585 §3), the warn mode of a
//! migration, a proxy that weakens tags, and If-None-Match: * for creates.
pub mod api;
pub mod client;
pub mod etag;
pub mod proxy;
pub mod serve;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Result;

use super::{Cx, Options, Scenario, ScenarioOptions};
use crate::engine::Session;
use crate::i18n::Text;
use crate::named_sql::SqlFile;
use crate::report::{Entry, Phrase, StepResult};
use api::{Mode, Server};
use client::{HttpClient, Request, Response};
use proxy::Proxy;
use serve::Log;

pub static SCENARIO: Scenario = Scenario {
    name: "http-etag",
    about: msg::about,
    summary: msg::summary,
    readme: "Two clients edit book 1 through lab's HTTP API: without a precondition B's PUT overwrites A's sale; \
             with `If-Match` B gets 412 and retries; 428 when a precondition is required; warn mode counts \
             unconditional writes; a proxy's weak ETag is refused every time; `If-None-Match: *` creates once.",
    spec: None,
    variants: VARIANTS,
    options: Some(Options::of::<HttpOpts>(&[(
        "port",
        "API'nin 127.0.0.1 üzerinde dinleyeceği port (0: boş bir port)",
    )])),
};

crate::variants! {
    prefix "he";
    no_precondition "no-precondition" {
        expected => {
            en: "both PUTs are accepted: B's PUT, built on what it read before A's sale, puts the stock back (A's sale is lost)",
            tr: "iki PUT da kabul edilir: A'nın satışından önce okuduğuna dayanan B'nin PUT'u stoğu geri koyar (A'nın satışı kaybolur)",
        },
        explain => {
            en: "A PUT sends a whole representation. Without a precondition the server cannot tell a copy read before someone else's write from a fresh one, so the last PUT wins and silently undoes the change it never saw. The database did nothing wrong: each UPDATE was atomic; the race is between GET and PUT, across two HTTP requests.",
            tr: "PUT tüm temsili gönderir. Önkoşul yoksa sunucu, başkasının yazmasından önce okunmuş bir kopyayı güncel olandan ayıramaz; son PUT kazanır ve görmediği değişikliği sessizce geri alır. Veritabanı yanlış bir şey yapmadı: her UPDATE atomikti; yarış GET ile PUT arasında, iki HTTP isteği boyunca.",
        },
    }
    if_match "if-match" {
        expected => {
            en: "A's PUT with If-Match \"v1\" gets 200 and ETag \"v2\"; B's PUT with the stale \"v1\" gets 412 and writes nothing; B re-reads, retries with \"v2\" and gets 200: both changes stay",
            tr: "A'nın If-Match \"v1\" ile PUT'u 200 ve ETag \"v2\" alır; B'nin bayat \"v1\" ile PUT'u 412 alır ve hiçbir şey yazmaz; B yeniden okur, \"v2\" ile tekrar dener ve 200 alır: iki değişiklik de kalır",
        },
        explain => {
            en: "The server sends the row's version as a strong ETag; the client sends it back in If-Match (RFC 9110 §13.1.1). The write is one UPDATE ... WHERE version IN (...): rows affected decides, 0 rows is 412 Precondition Failed. The client re-reads, applies its change to the new state and retries: optimistic concurrency carried by HTTP itself.",
            tr: "Sunucu satırın sürümünü güçlü bir ETag olarak gönderir; istemci onu If-Match ile geri yollar (RFC 9110 §13.1.1). Yazma tek bir UPDATE ... WHERE version IN (...) komutudur: etkilenen satır sayısı karar verir, 0 satır 412 Precondition Failed demektir. İstemci yeniden okur, değişikliğini yeni duruma uygular ve tekrar dener: HTTP'nin kendisiyle taşınan iyimser eşzamanlılık.",
        },
    }
    if_match_required "if-match-required" {
        expected => {
            en: "a PUT without If-Match gets 428 Precondition Required with a body that says how to fix it, and writes nothing; the same PUT with If-Match gets 200",
            tr: "If-Match'siz bir PUT, nasıl düzeltileceğini söyleyen bir gövdeyle 428 Precondition Required alır ve hiçbir şey yazmaz; aynı PUT If-Match ile 200 alır",
        },
        explain => {
            en: "RFC 6585 §3: a server that requires conditional requests answers 428 to a write without one, so a client that forgets If-Match finds out at once instead of losing someone's update. 428 enforces on the server; it is no guarantee for a client (RFC 6585 §7): every client still has to send the ETag it read.",
            tr: "RFC 6585 §3: koşullu istek şart koşan bir sunucu, koşulsuz bir yazmaya 428 ile yanıt verir; If-Match'i unutan istemci başkasının güncellemesini kaybettirmek yerine bunu hemen öğrenir. 428 sunucu tarafında bir zorlamadır, istemci için bir güvence değildir (RFC 6585 §7): her istemci yine okuduğu ETag'i göndermelidir.",
        },
    }
    warn_mode "warn-mode" {
        expected => {
            en: "the unconditional PUT is accepted with a Warning header and counted in /metrics for its client; A's conditional PUT is not; the lost update still happens until 428 is switched on (anomaly)",
            tr: "koşulsuz PUT bir Warning başlığıyla kabul edilir ve /metrics'te istemcisi için sayılır; A'nın koşullu PUT'u sayılmaz; 428 açılana kadar kayıp güncelleme yine olur (anomali)",
        },
        explain => {
            en: "Requiring If-Match breaks every client that does not send it yet. The transition: for one release, accept unconditional writes but answer them with a warning header and count them per client (here lab_unconditional_writes_total in /metrics, by User-Agent); when the count stays at zero, switch to 428. Warn mode measures the problem, it does not prevent it. (RFC 9111 obsoleted the Warning header; any header the clients log will do.)",
            tr: "If-Match'i zorunlu kılmak, onu henüz göndermeyen her istemciyi bozar. Geçiş: bir sürüm boyunca koşulsuz yazmaları kabul edin, ama bir uyarı başlığıyla yanıtlayıp istemci başına sayın (burada /metrics'te User-Agent'a göre lab_unconditional_writes_total); sayı sıfırda kalınca 428'e geçin. Uyarı modu sorunu ölçer, önlemez. (RFC 9111 Warning başlığını kaldırdı; istemcilerin kaydettiği herhangi bir başlık iş görür.)",
        },
    }
    weak_etag "weak-etag" {
        expected => {
            en: "the API sends a strong \"v1\", the proxy passes on W/\"v1\", and every PUT with If-Match W/\"v1\" gets 412 although nothing changed (anomaly)",
            tr: "API güçlü \"v1\" gönderir, proxy W/\"v1\" iletir ve If-Match W/\"v1\" ile her PUT hiçbir şey değişmemişken 412 alır (anomali)",
        },
        explain => {
            en: "If-Match uses the strong comparison (RFC 9110 §13.1.1): a weak tag never matches, so a client behind a proxy that weakens ETags (nginx does when its gzip changes the body) can never write, and retrying does not help. To see it, compare the ETag the origin sends with the one the client gets (curl -i on both). To fix it, keep the proxy from transforming API responses (no compression there, or compress at the origin, which can keep a strong tag per encoding), or have the origin send the version in a header no proxy touches.",
            tr: "If-Match güçlü karşılaştırma kullanır (RFC 9110 §13.1.1): zayıf bir etiket hiçbir zaman eşleşmez; ETag'leri zayıflatan bir proxy'nin arkasındaki istemci (nginx, gzip gövdeyi değiştirdiğinde bunu yapar) hiçbir zaman yazamaz ve tekrar denemek işe yaramaz. Görmek için kaynağın gönderdiği ETag ile istemciye ulaşanı karşılaştırın (ikisinde de curl -i). Düzeltmek için proxy'nin API yanıtlarını dönüştürmesini engelleyin (orada sıkıştırma yok ya da sıkıştırmayı kaynakta yapın; kaynak kodlama başına güçlü etiket tutabilir) ya da sürümü hiçbir proxy'nin dokunmadığı bir başlıkta gönderin.",
        },
    }
    if_none_match_create "if-none-match-create" {
        expected => {
            en: "A and B PUT the same new book with If-None-Match: *, B once A is answered: A gets 201 Created, B 412, and the book holds A's title",
            tr: "A ve B aynı yeni kitabı If-None-Match: * ile PUT eder, B A yanıtlandıktan sonra: A 201 Created, B 412 alır ve kitapta A'nın başlığı olur",
        },
        explain => {
            en: "If-None-Match: * on a PUT means create only if nothing is there (RFC 9110 §13.1.2). The API makes it one INSERT ... ON CONFLICT DO NOTHING: the unique key decides between two concurrent creates (the second waits for the first to commit, then inserts nothing), and 0 rows is 412. Without it the second PUT would overwrite the first creation. lab sends B's PUT once A's is answered, so every run shows the same order.",
            tr: "PUT'ta If-None-Match: *, yalnızca orada bir şey yoksa oluştur demektir (RFC 9110 §13.1.2). API bunu tek bir INSERT ... ON CONFLICT DO NOTHING yapar: eşzamanlı iki oluşturma arasında benzersiz anahtar karar verir (ikincisi ilkinin commit etmesini bekler, sonra hiçbir şey eklemez) ve 0 satır 412 demektir. Bu olmadan ikinci PUT ilk oluşturmanın üzerine yazardı. lab, B'nin PUT'unu A'nınki yanıtlandıktan sonra gönderir; böylece her çalıştırma aynı sırayı gösterir.",
        },
    }
}

/// `lab http-etag`'s own options.
#[derive(Debug, Clone, clap::Args)]
pub struct HttpOpts {
    /// The port the API listens on, on 127.0.0.1 (0: a free port).
    #[arg(long, default_value_t = 0, value_name = "PORT")]
    pub port: u16,
}

impl ScenarioOptions for HttpOpts {
    fn check(&self) -> Result<()> {
        Ok(())
    }
}

/// The book both clients edit: 36 copies at 42.00 (lab/seed.sql).
const BOOK: i32 = 1;
const PATH: &str = "/books/1";
/// The book the create variant makes (the seed has books 1 to 5).
const NEW_BOOK: i32 = 6;

fn body(price: &str, stock: i64) -> String {
    format!("{{\"price\":\"{price}\",\"stock\":{stock}}}")
}

/// The API, its clients and what they were answered, for one variant.
struct Stage {
    api: Server,
    proxy: Option<Proxy>,
    log: Arc<Log>,
    clients: BTreeMap<String, HttpClient>,
    statuses: BTreeMap<String, Vec<u16>>,
    lab: Session,
    /// lab/http-etag.sql, for lab's own reads of the rows.
    sql: SqlFile,
}

impl Stage {
    /// Starts the API in `mode` on two database connections of the variant,
    /// and lab's own session for reading the rows back.
    async fn start(cx: &mut Cx<'_>, mode: Mode) -> Result<Stage> {
        let sql = cx.sql("http-etag.sql")?;
        let opener = cx.opener();
        let db = vec![opener.open_quiet("api").await?, opener.open_quiet("api").await?];
        let lab = opener.open_quiet("lab").await?;
        let log = Arc::new(Log::new(cx.recorder().clone()));
        let port = cx.options::<HttpOpts>().port;
        let api = Server::start(
            api::Config {
                port,
                mode,
                sql: sql.clone(),
                deadline: cx.env.wait_timeout,
                log: log.clone(),
            },
            db,
        )
        .await?;
        Ok(Stage {
            api,
            proxy: None,
            log,
            clients: BTreeMap::new(),
            statuses: BTreeMap::new(),
            lab,
            sql,
        })
    }

    /// A client talking straight to the API.
    fn client(&mut self, cx: &Cx<'_>, name: &str) {
        self.add(cx, name, self.api.addr);
    }

    fn add(&mut self, cx: &Cx<'_>, name: &str, addr: SocketAddr) {
        self.clients
            .insert(name.to_string(), HttpClient::new(name, addr, cx.env.wait_timeout));
    }

    /// Under `--step`, shows the request and why, and waits for the person.
    async fn prompt(cx: &Cx<'_>, name: &str, req: &Request, why: &Text) {
        if let Some(st) = &cx.env.stepper {
            st.before(name, None, &req.shown(), Some(why.render(st.lang())), false)
                .await;
        }
    }

    /// Sends a request from client `name` and puts it in the timeline: the
    /// request and its answer, then the SQL the API ran for it.
    async fn send(&mut self, cx: &Cx<'_>, name: &str, req: Request, why: Text) -> Result<Response> {
        Self::prompt(cx, name, &req, &why).await;
        let recorder = cx.recorder().clone();
        let at = recorder.now_ms();
        let client = self.clients.get_mut(name).expect("the variant made this client");
        let (id, response) = client.send(&req).await?;
        self.record(&recorder, at, name, &req, &id, &response);
        Ok(response)
    }

    fn record(
        &mut self,
        recorder: &crate::engine::Recorder,
        at: f64,
        name: &str,
        req: &Request,
        id: &str,
        r: &Response,
    ) {
        let result = if r.status < 400 {
            StepResult::Ok
        } else {
            StepResult::Error
        };
        let mut e = Entry::new(at, name, result, Phrase::Plain(shown(r)));
        e.sql = req.shown();
        recorder.push(e);
        for e in self.log.take(id) {
            recorder.push(e);
        }
        self.statuses.entry(name.to_string()).or_default().push(r.status);
    }

    /// `client` sells one copy of what it read in `read`, sending back the
    /// ETag it got (If-Match).
    async fn sell_if_match(&mut self, cx: &Cx<'_>, client: &str, read: &Response) -> Result<Response> {
        let req = Request::put(PATH, sale(read)).header("If-Match", etag_of(read));
        self.send(cx, client, req, msg::why_sell_if_match()).await
    }

    /// The book's row as the database holds it: (price, stock, version).
    async fn book(&self, id: i32) -> Result<Option<(String, i64, i64, String)>> {
        let sql = self.sql.bind("get_book", &[("id", &id)])?;
        let set = self.lab.rows("get_book", &sql).await?;
        if set.rows.is_empty() {
            return Ok(None);
        }
        let get = |c: &str| set.get(0, c).unwrap_or_default().to_string();
        let int = |c: &str| get(c).parse::<i64>().unwrap_or(-1);
        Ok(Some((get("price"), int("stock"), int("version"), get("title"))))
    }

    /// The audit trail of book 1's writes, as evidence; the number of writes.
    async fn audit(&self, cx: &mut Cx<'_>) -> Result<Vec<(String, String, String)>> {
        let sql = self.sql.bind("audit", &[("id", &BOOK)])?;
        let set = self.lab.rows("audit", &sql).await?;
        cx.evidence_rows(msg::audit_title(), &set);
        Ok(set
            .rows
            .iter()
            .map(|r| {
                let v = |i: usize| r.get(i).cloned().flatten().unwrap_or_default();
                (v(0), v(1), v(2))
            })
            .collect())
    }

    /// Reads book 1 back, records the final values and returns them.
    async fn finish(self, cx: &mut Cx<'_>) -> Result<(String, i64, i64)> {
        let (price, stock, version, _) = self.book(BOOK).await?.unwrap_or_default();
        cx.metric("final_price", &price);
        cx.metric("final_stock", stock);
        cx.metric("final_version", version);
        self.stop(cx).await;
        Ok((price, stock, version))
    }

    async fn stop(self, cx: &mut Cx<'_>) {
        for (name, statuses) in &self.statuses {
            cx.metric(&format!("{}_statuses", name.to_lowercase()), statuses);
        }
        drop(self.clients);
        if let Some(p) = self.proxy {
            p.stop().await;
        }
        self.api.stop().await;
    }
}

/// `412 Precondition Failed · ETag "v2" · price=45.00 stock=35 version=2`.
fn shown(r: &Response) -> String {
    let mut s = format!("{} {}", r.status, r.reason);
    if let Some(t) = r.header("etag") {
        s.push_str(&format!(" · ETag {t}"));
    }
    if r.header("warning").is_some() {
        s.push_str(" · Warning");
    }
    if let Some(e) = r.field("error").and_then(|e| e.as_str().map(str::to_string)) {
        s.push_str(&format!(" · {e}"));
    } else if let (Some(p), Some(st)) = (r.field("price"), r.field("stock")) {
        let p = p.as_str().map(str::to_string).unwrap_or_else(|| p.to_string());
        s.push_str(&format!(" · price={p} stock={st}"));
    }
    s
}

fn etag_of(r: &Response) -> String {
    r.header("etag").unwrap_or("-").to_string()
}

/// What both clients read first: book 1 at v1.
async fn both_read(st: &mut Stage, cx: &Cx<'_>) -> Result<(Response, Response)> {
    let a = st.send(cx, "A", Request::get(PATH), msg::why_get()).await?;
    let b = st.send(cx, "B", Request::get(PATH), msg::why_get()).await?;
    Ok((a, b))
}

/// A's sale (stock one less) and B's price change, each on what it read.
fn sale(read: &Response) -> String {
    let stock = read.field("stock").and_then(|s| s.as_i64()).unwrap_or(0);
    body(&price_of(read), stock - 1)
}

fn price_change(read: &Response) -> String {
    let stock = read.field("stock").and_then(|s| s.as_i64()).unwrap_or(0);
    body("45.00", stock)
}

fn price_of(r: &Response) -> String {
    r.field("price")
        .and_then(|p| p.as_str().map(str::to_string))
        .unwrap_or_default()
}

fn stock_of(r: &Response) -> i64 {
    r.field("stock").and_then(|s| s.as_i64()).unwrap_or(-1)
}

async fn no_precondition(cx: &mut Cx<'_>) -> Result<()> {
    let mut st = Stage::start(cx, Mode::Lenient).await?;
    st.client(cx, "A");
    st.client(cx, "B");
    let (a, b) = both_read(&mut st, cx).await?;
    let read = stock_of(&a);
    let pa = st.send(cx, "A", Request::put(PATH, sale(&a)), msg::why_sell()).await?;
    let pb = st
        .send(cx, "B", Request::put(PATH, price_change(&b)), msg::why_reprice_blind())
        .await?;
    let audit = st.audit(cx).await?;
    let (price, stock, _) = st.finish(cx).await?;
    cx.check(
        pa.status == 200 && pb.status == 200,
        msg::both_accepted(pa.status, pb.status),
    );
    let lost = stock == read;
    cx.check(lost, msg::sale_lost(read, stock));
    let put_back = audit
        .iter()
        .any(|(c, old, new)| c == "quantity_on_hand" && *old == (read - 1).to_string() && *new == read.to_string());
    cx.check(put_back, msg::audit_put_back(read - 1, read));
    cx.observe(msg::observed(&price, stock, read - 1));
    cx.anomaly(lost);
    Ok(())
}

async fn if_match(cx: &mut Cx<'_>) -> Result<()> {
    let mut st = Stage::start(cx, Mode::Lenient).await?;
    st.client(cx, "A");
    st.client(cx, "B");
    let (a, b) = both_read(&mut st, cx).await?;
    let read = stock_of(&a);
    let pa = st.sell_if_match(cx, "A", &a).await?;
    let stale = st
        .send(
            cx,
            "B",
            Request::put(PATH, price_change(&b)).header("If-Match", etag_of(&b)),
            msg::why_reprice_if_match(),
        )
        .await?;
    let again = st.send(cx, "B", Request::get(PATH), msg::why_reread()).await?;
    let retry = st
        .send(
            cx,
            "B",
            Request::put(PATH, price_change(&again)).header("If-Match", etag_of(&again)),
            msg::why_retry(),
        )
        .await?;
    st.audit(cx).await?;
    let (price, stock, version) = st.finish(cx).await?;
    cx.check(
        pa.status == 200 && etag_of(&pa) == "\"v2\"",
        msg::answered("A", "200 ETag \"v2\"", format!("{} ETag {}", pa.status, etag_of(&pa))),
    );
    cx.check(stale.status == 412, msg::answered("B", "412", stale.status));
    cx.check(
        stock_of(&again) == read - 1,
        msg::reread_sees(read - 1, stock_of(&again)),
    );
    cx.check(
        retry.status == 200 && etag_of(&retry) == "\"v3\"",
        msg::answered(
            "B",
            "200 ETag \"v3\"",
            format!("{} ETag {}", retry.status, etag_of(&retry)),
        ),
    );
    let kept = price == "45.00" && stock == read - 1 && version == 3;
    cx.check(kept, msg::both_kept(read - 1));
    cx.observe(msg::observed(&price, stock, read - 1));
    cx.anomaly(!kept);
    Ok(())
}

async fn if_match_required(cx: &mut Cx<'_>) -> Result<()> {
    let mut st = Stage::start(cx, Mode::Required).await?;
    st.client(cx, "A");
    let a = st.send(cx, "A", Request::get(PATH), msg::why_get()).await?;
    let read = stock_of(&a);
    let blind = st
        .send(cx, "A", Request::put(PATH, sale(&a)), msg::why_forgot())
        .await?;
    let after = st.book(BOOK).await?.unwrap_or_default();
    let fixed = st.sell_if_match(cx, "A", &a).await?;
    st.audit(cx).await?;
    let (price, stock, version) = st.finish(cx).await?;
    cx.check(blind.status == 428, msg::answered("A", "428", blind.status));
    let fix = blind
        .field("fix")
        .and_then(|f| f.as_str().map(str::to_string))
        .unwrap_or_default();
    cx.check(fix.contains("If-Match"), msg::says_how(fix));
    cx.check(after.2 == 1 && after.1 == read, msg::refused_wrote_nothing(after.2));
    cx.check(
        fixed.status == 200 && version == 2 && stock == read - 1,
        msg::answered("A", "200", fixed.status),
    );
    cx.observe(msg::observed_required(blind.status, &price, stock, version));
    cx.anomaly(blind.status != 428);
    Ok(())
}

/// The warn-mode counter of a client, from the API's /metrics.
fn counted(metrics: &str, client: &str) -> u64 {
    let key = format!("lab_unconditional_writes_total{{client=\"lab-client-{client}\"}} ");
    metrics
        .lines()
        .find_map(|l| l.strip_prefix(&key)?.trim().parse().ok())
        .unwrap_or(0)
}

async fn warn_mode(cx: &mut Cx<'_>) -> Result<()> {
    let mut st = Stage::start(cx, Mode::Warn).await?;
    st.client(cx, "A");
    st.client(cx, "B");
    st.client(cx, "ops");
    let (a, b) = both_read(&mut st, cx).await?;
    let read = stock_of(&a);
    let pa = st.sell_if_match(cx, "A", &a).await?;
    let pb = st
        .send(cx, "B", Request::put(PATH, price_change(&b)), msg::why_reprice_blind())
        .await?;
    let m = st.send(cx, "ops", Request::get("/metrics"), msg::why_metrics()).await?;
    let (count_a, count_b) = (counted(&m.body, "A"), counted(&m.body, "B"));
    cx.metric("warned_writes", count_a + count_b);
    st.audit(cx).await?;
    let (price, stock, _) = st.finish(cx).await?;
    cx.check(
        pa.status == 200 && pa.header("warning").is_none(),
        msg::no_warning_for("A"),
    );
    cx.check(
        pb.status == 200 && pb.header("warning") == Some(api::WARNING),
        msg::warned(pb.status),
    );
    cx.check(count_b == 1 && count_a == 0, msg::counted(count_a, count_b));
    let lost = stock == read;
    cx.check(lost, msg::sale_lost(read, stock));
    cx.observe(msg::observed_warn(&price, stock, read - 1, count_b));
    cx.anomaly(lost);
    Ok(())
}

async fn weak_etag(cx: &mut Cx<'_>) -> Result<()> {
    let mut st = Stage::start(cx, Mode::Lenient).await?;
    let proxy = Proxy::start(st.api.addr, st.log.clone()).await?;
    st.add(cx, "A", proxy.addr);
    st.proxy = Some(proxy);
    st.client(cx, "B");
    let origin = st.send(cx, "B", Request::get(PATH), msg::why_origin()).await?;
    let mut refused = Vec::new();
    let mut seen = Vec::new();
    for attempt in 0..2 {
        let why = if attempt == 0 {
            msg::why_get_proxy()
        } else {
            msg::why_reread()
        };
        let a = st.send(cx, "A", Request::get(PATH), why).await?;
        seen.push(etag_of(&a));
        let put = st.sell_if_match(cx, "A", &a).await?;
        refused.push(put.status);
    }
    let audit = st.audit(cx).await?;
    let (price, stock, version) = st.finish(cx).await?;
    let strong = etag::parse_tag(&etag_of(&origin)).is_ok_and(|t| !t.weak);
    cx.check(strong, msg::origin_strong(etag_of(&origin)));
    let weak = seen.iter().all(|t| t.starts_with("W/"));
    cx.check(weak, msg::proxy_weak(seen.join(", ")));
    cx.check(
        refused.iter().all(|s| *s == 412),
        msg::refused_every_time(refused.iter().map(u16::to_string).collect::<Vec<_>>().join(", ")),
    );
    cx.check(version == 1 && audit.is_empty(), msg::nothing_changed(version));
    cx.metric("a_etags_seen", &seen);
    cx.observe(msg::observed_weak(&price, stock, version, refused.len()));
    cx.anomaly(refused.iter().all(|s| *s == 412) && version == 1);
    Ok(())
}

async fn if_none_match_create(cx: &mut Cx<'_>) -> Result<()> {
    let mut st = Stage::start(cx, Mode::Lenient).await?;
    st.client(cx, "A");
    st.client(cx, "B");
    let path = format!("/books/{NEW_BOOK}");
    let req = |who: &str| {
        Request::put(
            &path,
            format!("{{\"title\":\"{who}'s new book\",\"price\":\"30.00\",\"stock\":5}}"),
        )
        .header("If-None-Match", "*")
    };
    let (ra, rb) = (req("A"), req("B"));
    // A's request first; B's is held until A is answered, so every run shows
    // the same order. (Sent at the same moment, the unique key would make the
    // second INSERT wait for the first to commit, then insert nothing: the
    // same 412, in an order no run can promise.)
    let ans_a = st.send(cx, "A", ra, msg::why_create()).await?;
    let ans_b = st.send(cx, "B", rb, msg::why_create_second()).await?;
    let row = st.book(NEW_BOOK).await?;
    st.stop(cx).await;
    let statuses = [ans_a.status, ans_b.status];
    cx.check(statuses == [201, 412], msg::one_created(ans_a.status, ans_b.status));
    let winner = if ans_a.status == 201 { "A" } else { "B" };
    let title = row.as_ref().map(|r| r.3.clone()).unwrap_or_default();
    cx.check(
        row.as_ref().is_some_and(|r| r.2 == 1) && title == format!("{winner}'s new book"),
        msg::winner_kept(winner, &title),
    );
    cx.metric("created_by", winner);
    cx.observe(msg::observed_create(ans_a.status, ans_b.status, &title));
    cx.anomaly(statuses != [201, 412]);
    Ok(())
}

mod msg {
    crate::messages! {
        prefix "he";
        about() {
            en: "The lost update over HTTP: ETag and If-Match (412), 428 Precondition Required, warn mode, weak ETags, If-None-Match",
            tr: "HTTP üzerinden kayıp güncelleme: ETag ve If-Match (412), 428 Precondition Required, uyarı modu, zayıf ETag'ler, If-None-Match",
        }
        summary() {
            en: "two clients edit book 1 through lab's own HTTP API (axum on loopback)",
            tr: "iki istemci 1 numaralı kitabı lab'ın kendi HTTP API'si üzerinden düzenler (loopback'te axum)",
        }
        why_get() {
            en: "read book 1 and its ETag, as a form or an app does before an edit",
            tr: "bir form ya da uygulamanın düzenlemeden önce yaptığı gibi 1 numaralı kitabı ve ETag'ini oku",
        }
        why_sell() {
            en: "A sells one copy: sends the book back with stock one less, with no precondition",
            tr: "A bir kopya satar: kitabı bir eksik stokla, önkoşulsuz geri gönderir",
        }
        why_reprice_blind() {
            en: "B changes the price on the copy it read earlier, with no precondition",
            tr: "B fiyatı daha önce okuduğu kopya üzerinde değiştirir, önkoşulsuz",
        }
        why_sell_if_match() {
            en: "sell one copy, only if the book is still at the version read (If-Match)",
            tr: "yalnızca kitap hâlâ okunan sürümdeyse bir kopya sat (If-Match)",
        }
        why_reprice_if_match() {
            en: "B changes the price on its stale copy, with the ETag it read: the version has moved",
            tr: "B fiyatı bayat kopyası üzerinde, okuduğu ETag ile değiştirir: sürüm ilerledi",
        }
        why_reread() {
            en: "read the book again after the 412, with its new ETag",
            tr: "412'den sonra kitabı yeni ETag'iyle yeniden oku",
        }
        why_retry() {
            en: "apply the price change to the fresh copy and PUT with its ETag",
            tr: "fiyat değişikliğini taze kopyaya uygula ve onun ETag'iyle PUT yap",
        }
        why_forgot() {
            en: "a client that forgets If-Match",
            tr: "If-Match'i unutan bir istemci",
        }
        why_metrics() {
            en: "read the API's count of unconditional writes, by client",
            tr: "API'nin istemci başına koşulsuz yazma sayısını oku",
        }
        why_origin() {
            en: "read book 1 from the API itself: its ETag as the origin sends it",
            tr: "1 numaralı kitabı doğrudan API'den oku: ETag'i kaynağın gönderdiği hâliyle",
        }
        why_get_proxy() {
            en: "read book 1 through the proxy: its ETag as the client gets it",
            tr: "1 numaralı kitabı proxy üzerinden oku: ETag'i istemcinin aldığı hâliyle",
        }
        why_create() {
            en: "create book 6 only if nobody has (If-None-Match: *)",
            tr: "6 numaralı kitabı yalnızca kimse oluşturmadıysa oluştur (If-None-Match: *)",
        }
        why_create_second() {
            en: "the other client creates book 6 the same way, once the first is answered",
            tr: "diğer istemci 6 numaralı kitabı aynı yolla oluşturur, ilki yanıtlandıktan sonra",
        }
        audit_title() {
            en: "audit trail of book 1 (every write the API made)",
            tr: "1 numaralı kitabın denetim kaydı (API'nin yaptığı her yazma)",
        }
        both_accepted(a, b) {
            en: "both PUTs are accepted (A: {a}, B: {b})",
            tr: "iki PUT da kabul edilir (A: {a}, B: {b})",
        }
        sale_lost(read, stock) {
            en: "A's sale is lost: the stock is back at {read} (read back: {stock})",
            tr: "A'nın satışı kaybolur: stok yeniden {read} (okunan: {stock})",
        }
        audit_put_back(sold, read) {
            en: "the audit shows B's write putting the stock back from {sold} to {read}",
            tr: "denetim kaydı B'nin yazmasının stoğu {sold}'dan {read}'e geri koyduğunu gösterir",
        }
        answered(client, want, got) {
            en: "{client} is answered {want} (got {got})",
            tr: "{client} {want} yanıtını alır (alınan: {got})",
        }
        reread_sees(want, got) {
            en: "B's re-read sees A's sale: stock {want} (read: {got})",
            tr: "B'nin yeniden okuması A'nın satışını görür: stok {want} (okunan: {got})",
        }
        both_kept(stock) {
            en: "both changes stay: price 45.00, stock {stock}, version 3",
            tr: "iki değişiklik de kalır: fiyat 45.00, stok {stock}, sürüm 3",
        }
        says_how(fix) {
            en: "the 428's body says how to fix the request (fix: {fix})",
            tr: "428'in gövdesi isteğin nasıl düzeltileceğini söyler (fix: {fix})",
        }
        refused_wrote_nothing(version) {
            en: "the refused PUT wrote nothing (version read back: {version})",
            tr: "reddedilen PUT hiçbir şey yazmadı (okunan sürüm: {version})",
        }
        no_warning_for(client) {
            en: "{client}'s conditional PUT is accepted without a Warning",
            tr: "{client}'nın koşullu PUT'u Warning olmadan kabul edilir",
        }
        warned(status) {
            en: "B's unconditional PUT is accepted with a Warning header (status {status})",
            tr: "B'nin koşulsuz PUT'u bir Warning başlığıyla kabul edilir (durum {status})",
        }
        counted(a, b) {
            en: "/metrics counts one unconditional write for B and none for A (A: {a}, B: {b})",
            tr: "/metrics B için bir koşulsuz yazma, A için hiç saymaz (A: {a}, B: {b})",
        }
        origin_strong(etag) {
            en: "the API sends a strong ETag ({etag})",
            tr: "API güçlü bir ETag gönderir ({etag})",
        }
        proxy_weak(etags) {
            en: "through the proxy the client gets a weak ETag ({etags})",
            tr: "proxy üzerinden istemci zayıf bir ETag alır ({etags})",
        }
        refused_every_time(statuses) {
            en: "every PUT with the weak ETag is refused with 412 ({statuses})",
            tr: "zayıf ETag ile her PUT 412 ile reddedilir ({statuses})",
        }
        nothing_changed(version) {
            en: "nothing changed the book meanwhile: still version 1, no write in the audit (version: {version})",
            tr: "bu arada kitabı hiçbir şey değiştirmedi: hâlâ sürüm 1, denetim kaydında yazma yok (sürüm: {version})",
        }
        one_created(a, b) {
            en: "A's create gets 201 and B's 412 (A: {a}, B: {b})",
            tr: "A'nın oluşturması 201, B'ninki 412 alır (A: {a}, B: {b})",
        }
        winner_kept(winner, title) {
            en: "book 6 exists once, at version 1, with {winner}'s title ({title})",
            tr: "6 numaralı kitap bir kez, sürüm 1'de, {winner} başlığıyla var ({title})",
        }
        observed(price, stock, want) {
            en: "final price {price}, stock {stock} (with both changes: {want})",
            tr: "son fiyat {price}, stok {stock} (iki değişiklikle: {want})",
        }
        observed_required(status, price, stock, version) {
            en: "the PUT without If-Match got {status}; final price {price}, stock {stock}, version {version}",
            tr: "If-Match'siz PUT {status} aldı; son fiyat {price}, stok {stock}, sürüm {version}",
        }
        observed_warn(price, stock, want, warned) {
            en: "final price {price}, stock {stock} (with both changes: {want}); {warned} warned write(s) counted",
            tr: "son fiyat {price}, stok {stock} (iki değişiklikle: {want}); {warned} uyarılı yazma sayıldı",
        }
        observed_weak(price, stock, version, refused) {
            en: "{refused} PUT(s) refused; the book is unchanged: price {price}, stock {stock}, version {version}",
            tr: "{refused} PUT reddedildi; kitap değişmedi: fiyat {price}, stok {stock}, sürüm {version}",
        }
        observed_create(a, b, title) {
            en: "A: {a}, B: {b}; book 6 is \"{title}\"",
            tr: "A: {a}, B: {b}; 6 numaralı kitap \"{title}\"",
        }
    }
}
