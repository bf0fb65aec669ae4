//! The Bookstore's HTTP API (axum, on lab's runtime): `GET /books/{id}`
//! with the row version as a strong ETag, `PUT /books/{id}` as one SQL
//! statement guarded by the version in If-Match (lab/http-etag.sql), and
//! `GET /metrics`. What it ran on the database goes to the timeline.
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use anyhow::Result;
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;
use axum::routing::get;

use super::etag::{self, Condition, ETag};
use super::serve::{Listener, Log};
use crate::engine::Session;
use crate::engine::answer::last_set;
use crate::i18n::{Lang, Text};
use crate::named_sql::SqlFile;
use crate::report::{Entry, Phrase, ResultSet, StepResult};

/// What the API does with a PUT that carries no If-Match.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Accepted silently (most APIs).
    Lenient,
    /// Accepted, answered with a Warning header and counted: the migration step.
    Warn,
    /// Refused with 428 Precondition Required (RFC 6585 §3).
    Required,
}

/// The header a warn-mode answer carries.
pub const WARNING: &str = "299 - \"PUT without If-Match accepted; it will be refused with 428\"";

/// The lane the API's SQL is shown in.
pub const LANE: &str = "api";

pub struct Config {
    pub port: u16,
    pub mode: Mode,
    /// lab/http-etag.sql (from --lab-dir where given).
    pub sql: SqlFile,
    /// The longest a statement may take before the API gives up (503).
    pub deadline: Duration,
    pub log: Arc<Log>,
}

struct Pool {
    conns: Vec<tokio::sync::Mutex<Session>>,
    next: AtomicUsize,
}

impl Pool {
    /// A free connection, or the next one in turn once it is free.
    async fn get(&self) -> tokio::sync::MutexGuard<'_, Session> {
        for c in &self.conns {
            if let Ok(g) = c.try_lock() {
                return g;
            }
        }
        let i = self.next.fetch_add(1, Ordering::Relaxed) % self.conns.len();
        self.conns[i].lock().await
    }
}

struct Api {
    cfg: Config,
    pool: Pool,
    /// PUTs accepted without If-Match in warn mode, by client (User-Agent).
    unconditional: std::sync::Mutex<BTreeMap<String, u64>>,
}

/// The API on its port; [`Server::stop`] ends it and its connections.
pub struct Server {
    pub addr: std::net::SocketAddr,
    listener: Listener,
}

impl Server {
    /// Serves the API on 127.0.0.1 (`cfg.port`, 0 for a free one) with the
    /// given database sessions (at least one).
    pub async fn start(cfg: Config, db: Vec<Session>) -> Result<Server> {
        assert!(!db.is_empty(), "the API needs a database connection");
        let api = Arc::new(Api {
            pool: Pool {
                conns: db.into_iter().map(tokio::sync::Mutex::new).collect(),
                next: AtomicUsize::new(0),
            },
            cfg,
            unconditional: Default::default(),
        });
        let port = api.cfg.port;
        let router = Router::new()
            .route("/books/{id}", get(get_book).put(put_book))
            .route("/metrics", get(metrics))
            .with_state(api);
        let listener = Listener::bind(port, hyper_util::service::TowerToHyperService::new(router)).await?;
        Ok(Server {
            addr: listener.addr,
            listener,
        })
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub async fn stop(self) {
        self.listener.stop().await;
    }
}

/// The language of the answer's words (`Accept-Language: tr`).
fn lang_of(h: &HeaderMap) -> Lang {
    match h.get(header::ACCEPT_LANGUAGE).and_then(|v| v.to_str().ok()) {
        Some(v) if v.trim_start().to_ascii_lowercase().starts_with("tr") => Lang::Tr,
        _ => Lang::En,
    }
}

fn request_id(h: &HeaderMap) -> Option<String> {
    h.get("x-request-id").and_then(|v| v.to_str().ok()).map(str::to_string)
}

fn client_of(h: &HeaderMap) -> String {
    h.get(header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("-")
        .to_string()
}

fn json(status: StatusCode, body: serde_json::Value) -> Response {
    let mut r = Response::new(Body::from(body.to_string()));
    *r.status_mut() = status;
    r.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    r
}

/// An error answer: `{"error": ..., "fix": ...}` in the client's language.
fn problem(status: StatusCode, lang: Lang, error: Text, fix: Option<Text>) -> Response {
    let mut body = serde_json::json!({ "error": error.render(lang) });
    if let Some(f) = fix {
        body["fix"] = f.render(lang).into();
    }
    json(status, body)
}

fn with_etag(mut r: Response, version: i64) -> Response {
    if let Ok(v) = HeaderValue::from_str(&ETag::of_version(version).to_string()) {
        r.headers_mut().insert(header::ETAG, v);
    }
    r
}

/// A book's representation from a row of get_book / the writes.
fn book_json(id: i32, set: &ResultSet) -> (serde_json::Value, i64) {
    let get = |c: &str| set.get(0, c).map(str::to_string);
    let version = get("version").and_then(|v| v.parse().ok()).unwrap_or(0);
    let mut body = serde_json::json!({
        "book_id": id,
        "price": get("price"),
        "stock": get("stock").and_then(|v| v.parse::<i64>().ok()),
        "version": version,
    });
    if let Some(t) = get("title") {
        body["title"] = t.into();
    }
    (body, version)
}

/// Why a statement could not give its answer (the API says 503).
struct Failed(Text);

impl Api {
    /// Runs one of lab/http-etag.sql's statements with its values bound, and
    /// files it (with its answer) under the request.
    async fn run(
        &self,
        request: Option<&str>,
        name: &str,
        values: &[(&str, &(dyn std::fmt::Display + Sync))],
    ) -> Result<ResultSet, Failed> {
        let sql = self
            .cfg
            .sql
            .bind(name, values)
            .map_err(|e| Failed(msg::statement(name, format!("{e:#}"))))?;
        let db = self.pool.get().await;
        let recorder = &self.cfg.log.recorder;
        let Some((answer, done)) = db.answer_within(&sql, self.cfg.deadline).await else {
            let text = msg::no_answer(crate::engine::secs(self.cfg.deadline));
            let mut e = Entry::new(recorder.now_ms(), LANE, StepResult::Error, Phrase::Text(text.clone()));
            e.step = Some(name.to_string());
            e.sql = sql;
            self.cfg.log.record(request, e);
            return Err(Failed(text));
        };
        self.cfg.log.record(
            request,
            recorder.entry(done, LANE, Some(name), &sql, &answer, None, None),
        );
        match answer {
            Ok(results) => Ok(last_set(&results).cloned().unwrap_or_default()),
            Err(e) => Err(Failed(msg::database(match &e.code {
                Some(code) => format!("{} (SQLSTATE {code})", e.message),
                None => e.message,
            }))),
        }
    }

    fn note(&self, request: Option<&str>, text: Text) {
        let recorder = &self.cfg.log.recorder;
        self.cfg.log.record(
            request,
            Entry::new(recorder.now_ms(), LANE, StepResult::Note, Phrase::Text(text)),
        );
    }
}

fn unavailable(lang: Lang, f: Failed) -> Response {
    problem(StatusCode::SERVICE_UNAVAILABLE, lang, f.0, None)
}

fn parse_id(raw: &str) -> Result<i32, Text> {
    raw.parse::<i32>()
        .ok()
        .filter(|id| *id > 0)
        .ok_or_else(|| msg::bad_id(raw))
}

async fn get_book(State(api): State<Arc<Api>>, Path(raw): Path<String>, h: HeaderMap) -> Response {
    let lang = lang_of(&h);
    let id = match parse_id(&raw) {
        Ok(id) => id,
        Err(t) => return problem(StatusCode::BAD_REQUEST, lang, t, None),
    };
    match api.run(request_id(&h).as_deref(), "get_book", &[("id", &id)]).await {
        Err(f) => unavailable(lang, f),
        Ok(set) if set.rows.is_empty() => problem(StatusCode::NOT_FOUND, lang, msg::not_found(id), None),
        Ok(set) => {
            let (body, version) = book_json(id, &set);
            with_etag(json(StatusCode::OK, body), version)
        }
    }
}

/// A PUT's body: the book's editable fields (a whole representation).
struct Put {
    price: String,
    stock: i64,
    title: Option<String>,
}

fn parse_put(body: &[u8]) -> Result<Put, Text> {
    let v: serde_json::Value = serde_json::from_slice(body).map_err(|e| msg::bad_json(e.to_string()))?;
    let price = match v.get("price") {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(serde_json::Value::Number(n)) => n.to_string(),
        _ => return Err(msg::bad_field("price")),
    };
    // A price is digits with at most two decimals: it is bound into the SQL as a numeric literal.
    let (whole, cents) = price.split_once('.').unwrap_or((&price, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() || whole.len() > 8 || !digits(whole) || cents.len() > 2 || !digits(cents) {
        return Err(msg::bad_field("price"));
    }
    let stock = v
        .get("stock")
        .and_then(serde_json::Value::as_i64)
        .filter(|s| (0..=1_000_000).contains(s))
        .ok_or_else(|| msg::bad_field("stock"))?;
    let title = match v.get("title") {
        None => None,
        Some(serde_json::Value::String(t)) if !t.is_empty() && t.len() <= 200 && !t.chars().any(char::is_control) => {
            Some(t.clone())
        }
        Some(_) => return Err(msg::bad_field("title")),
    };
    Ok(Put { price, stock, title })
}

/// A string as an SQL literal (standard_conforming_strings is on for lab's sessions).
fn literal(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

fn condition(h: &HeaderMap, name: header::HeaderName, shown: &str) -> Result<Option<Condition>, Text> {
    let values: Vec<&HeaderValue> = h.get_all(&name).iter().collect();
    if values.is_empty() {
        return Ok(None);
    }
    let mut joined = Vec::new();
    for v in values {
        joined.push(v.to_str().map_err(|_| etag::msg::in_header(shown, msg::not_ascii()))?);
    }
    etag::parse_condition(shown, &joined.join(", ")).map(Some)
}

async fn put_book(State(api): State<Arc<Api>>, Path(raw): Path<String>, h: HeaderMap, body: Bytes) -> Response {
    let lang = lang_of(&h);
    let rid = request_id(&h);
    let rid = rid.as_deref();
    let id = match parse_id(&raw) {
        Ok(id) => id,
        Err(t) => return problem(StatusCode::BAD_REQUEST, lang, t, None),
    };
    let bad = |t: Text| problem(StatusCode::BAD_REQUEST, lang, t, None);
    let if_match = match condition(&h, header::IF_MATCH, "If-Match") {
        Ok(c) => c,
        Err(t) => return bad(t),
    };
    let if_none_match = match condition(&h, header::IF_NONE_MATCH, "If-None-Match") {
        Ok(c) => c,
        Err(t) => return bad(t),
    };
    let put = match parse_put(&body) {
        Ok(p) => p,
        Err(t) => return bad(t),
    };
    match (if_match, if_none_match) {
        (Some(_), Some(_)) => bad(msg::both_conditions()),
        (None, Some(Condition::Any)) => create(&api, rid, id, put, lang).await,
        (None, Some(Condition::Tags(_))) => bad(msg::none_match_star_only()),
        (Some(c), None) => update_if_match(&api, rid, id, put, c, lang).await,
        (None, None) => match api.cfg.mode {
            Mode::Required => {
                api.note(rid, msg::note_required());
                problem(
                    StatusCode::PRECONDITION_REQUIRED,
                    lang,
                    msg::required(),
                    Some(msg::required_fix(id)),
                )
            }
            Mode::Lenient => write(&api, rid, id, &put, Guard::None, lang).await,
            Mode::Warn => {
                let client = client_of(&h);
                *api.unconditional.lock().unwrap().entry(client.clone()).or_default() += 1;
                api.note(rid, msg::note_warned(client));
                let mut r = write(&api, rid, id, &put, Guard::None, lang).await;
                if r.status().is_success() {
                    r.headers_mut()
                        .insert(header::WARNING, HeaderValue::from_static(WARNING));
                }
                r
            }
        },
    }
}

async fn update_if_match(api: &Api, rid: Option<&str>, id: i32, put: Put, c: Condition, lang: Lang) -> Response {
    if c == Condition::Any {
        // If-Match: * holds for any current representation: a missing book fails it.
        return write(api, rid, id, &put, Guard::Exists, lang).await;
    }
    let versions = c.strong_versions();
    if versions.is_empty() {
        // Strong comparison (RFC 9110 §13.1.1): a weak tag never matches; no row can change.
        let weak: Vec<String> = c.weak_tags().iter().map(|t| t.to_string()).collect();
        api.note(
            rid,
            if weak.is_empty() {
                msg::note_no_version()
            } else {
                msg::note_weak(weak.join(", "))
            },
        );
        return problem(
            StatusCode::PRECONDITION_FAILED,
            lang,
            msg::precondition_failed(),
            Some(msg::precondition_fix(id)),
        );
    }
    let list = versions.iter().map(i64::to_string).collect::<Vec<_>>().join(", ");
    write(api, rid, id, &put, Guard::Versions(list), lang).await
}

/// What a write is conditional on.
enum Guard {
    /// Nothing: the row is written whatever it holds (404 if it is missing).
    None,
    /// `If-Match: *`: the book exists (412 if it is missing).
    Exists,
    /// `If-Match` tags: the row is still at one of these versions (412 if not).
    Versions(String),
}

/// Runs a write: one statement; rows affected decides (0 rows: 412 when a
/// precondition was given, else 404).
async fn write(api: &Api, rid: Option<&str>, id: i32, put: &Put, guard: Guard, lang: Lang) -> Response {
    let (statement, versions) = match &guard {
        Guard::Versions(v) => ("put_if_match", v.as_str()),
        Guard::None | Guard::Exists => ("put_unconditional", ""),
    };
    let values: [(&str, &(dyn std::fmt::Display + Sync)); 4] = [
        ("id", &id),
        ("price", &put.price),
        ("stock", &put.stock),
        ("versions", &versions),
    ];
    match api.run(rid, statement, &values).await {
        Err(f) => unavailable(lang, f),
        Ok(set) if set.rows.is_empty() => match guard {
            Guard::Exists | Guard::Versions(_) => problem(
                StatusCode::PRECONDITION_FAILED,
                lang,
                msg::precondition_failed(),
                Some(msg::precondition_fix(id)),
            ),
            Guard::None => problem(StatusCode::NOT_FOUND, lang, msg::not_found(id), None),
        },
        Ok(set) => {
            let (body, version) = book_json(id, &set);
            with_etag(json(StatusCode::OK, body), version)
        }
    }
}

async fn create(api: &Api, rid: Option<&str>, id: i32, put: Put, lang: Lang) -> Response {
    let Some(title) = put.title.as_deref() else {
        return problem(StatusCode::BAD_REQUEST, lang, msg::bad_field("title"), None);
    };
    let title = literal(title);
    let values: [(&str, &(dyn std::fmt::Display + Sync)); 4] = [
        ("id", &id),
        ("title", &title),
        ("price", &put.price),
        ("stock", &put.stock),
    ];
    match api.run(rid, "create_if_absent", &values).await {
        Err(f) => unavailable(lang, f),
        Ok(set) if set.rows.is_empty() => problem(
            StatusCode::PRECONDITION_FAILED,
            lang,
            msg::exists(id),
            Some(msg::exists_fix(id)),
        ),
        Ok(set) => {
            let (body, version) = book_json(id, &set);
            let mut r = with_etag(json(StatusCode::CREATED, body), version);
            if let Ok(v) = HeaderValue::from_str(&format!("/books/{id}")) {
                r.headers_mut().insert(header::LOCATION, v);
            }
            r
        }
    }
}

async fn metrics(State(api): State<Arc<Api>>) -> Response {
    let mut text = String::from(
        "# HELP lab_unconditional_writes_total PUTs accepted without If-Match in warn mode, by client.\n\
         # TYPE lab_unconditional_writes_total counter\n",
    );
    for (client, n) in api.unconditional.lock().unwrap().iter() {
        text.push_str(&format!(
            "lab_unconditional_writes_total{{client=\"{}\"}} {n}\n",
            client.replace(['\\', '"', '\n'], "_")
        ));
    }
    let mut r = Response::new(Body::from(text));
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4"),
    );
    r
}

pub mod msg {
    crate::messages! {
        prefix "ha";
        statement(name, error) {
            en: "lab/http-etag.sql: {name}: {error}",
            tr: "lab/http-etag.sql: {name}: {error}",
        }
        no_answer(deadline) {
            en: "the database gave no answer within {deadline} s",
            tr: "veritabanı {deadline} sn içinde yanıt vermedi",
        }
        database(error) {
            en: "the database refused the statement: {error}",
            tr: "veritabanı komutu reddetti: {error}",
        }
        bad_id(raw) {
            en: "{raw} is not a book id (a positive integer)",
            tr: "{raw} bir kitap numarası değil (pozitif bir tam sayı)",
        }
        not_found(id) {
            en: "there is no book {id}",
            tr: "{id} numaralı kitap yok",
        }
        bad_json(error) {
            en: "the body is not JSON: {error}",
            tr: "gövde JSON değil: {error}",
        }
        bad_field(field) {
            en: "the body's {field} is missing or not valid (price: \"45.00\", stock: 0 or more, title: text)",
            tr: "gövdedeki {field} eksik ya da geçersiz (price: \"45.00\", stock: 0 ya da fazlası, title: metin)",
        }
        not_ascii() {
            en: "the value is not visible ASCII",
            tr: "değer görünür ASCII değil",
        }
        both_conditions() {
            en: "send If-Match (change an existing book) or If-None-Match: * (create a new one), not both",
            tr: "If-Match (var olan kitabı değiştirmek) ya da If-None-Match: * (yenisini oluşturmak) gönderin, ikisini birden değil",
        }
        none_match_star_only() {
            en: "on PUT this API takes only If-None-Match: * (create if absent)",
            tr: "bu API PUT'ta yalnızca If-None-Match: * kabul eder (yoksa oluştur)",
        }
        required() {
            en: "this API requires a precondition: a PUT without If-Match could overwrite a change you have not seen",
            tr: "bu API önkoşul ister: If-Match'siz bir PUT görmediğiniz bir değişikliğin üzerine yazabilir",
        }
        required_fix(id) {
            en: "GET /books/{id}, then send its ETag back: If-Match: \"v<version>\"",
            tr: "GET /books/{id} yapın, sonra ETag'ini geri gönderin: If-Match: \"v<sürüm>\"",
        }
        precondition_failed() {
            en: "the book changed since the version your If-Match names",
            tr: "kitap, If-Match'inizin verdiği sürümden bu yana değişti",
        }
        precondition_fix(id) {
            en: "GET /books/{id} again, apply your change to what it returns, PUT with its ETag",
            tr: "GET /books/{id} ile yeniden okuyun, değişikliğinizi dönen veriye uygulayın, onun ETag'i ile PUT yapın",
        }
        exists(id) {
            en: "book {id} already exists (If-None-Match: * holds only while it does not)",
            tr: "{id} numaralı kitap zaten var (If-None-Match: * yalnızca yokken tutar)",
        }
        exists_fix(id) {
            en: "GET /books/{id} to see it; change it with If-Match",
            tr: "görmek için GET /books/{id}; değiştirmek için If-Match kullanın",
        }
        note_required() {
            en: "no If-Match: refused with 428 before any SQL",
            tr: "If-Match yok: herhangi bir SQL'den önce 428 ile reddedildi",
        }
        note_warned(client) {
            en: "no If-Match from {client}: accepted with a Warning and counted",
            tr: "{client} If-Match göndermedi: Warning ile kabul edildi ve sayıldı",
        }
        note_weak(tags) {
            en: "If-Match {tags} is weak: a strong comparison never matches it (RFC 9110 §13.1.1), no SQL runs",
            tr: "If-Match {tags} zayıf: güçlü karşılaştırma onu hiçbir zaman eşleştirmez (RFC 9110 §13.1.1), SQL çalışmaz",
        }
        note_no_version() {
            en: "If-Match names no version this API ever sent: no SQL runs",
            tr: "If-Match bu API'nin gönderdiği hiçbir sürümü belirtmiyor: SQL çalışmaz",
        }
    }
}
