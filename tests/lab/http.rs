//! `lab http-etag`'s API on its own, against a real PostgreSQL: malformed
//! preconditions are 400 with the reason, a client that goes away
//! mid-request leaves nothing half-done, a port in use is exit 2.
use std::sync::Arc;
use std::time::{Duration, Instant};

use lab::commands::scenarios::http_etag::api::{Config, Mode, Server};
use lab::commands::scenarios::http_etag::client::{HttpClient, Request, Response};
use lab::commands::scenarios::http_etag::serve::Log;
use lab::files::LabFiles;
use lab::named_sql::SqlFile;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::support::{TestServer, one_line_exit_2, run};

const APP: &str = "lab-test-api";
const SCHEMA: &str = "http_test";

/// A connection of the test's own (TestServer's helpers block; these tests are async).
async fn pg(srv: &TestServer) -> tokio_postgres::Client {
    lab::postgres::connect::connect(&srv.cluster.config(), "lab-test", None, None)
        .await
        .unwrap()
        .client
}

/// The API on two connections of its own to a fresh lab schema.
async fn start(srv: &TestServer, mode: Mode) -> Server {
    let files = LabFiles::embedded();
    let control = pg(srv).await;
    lab::postgres::connect::rebuild_schema(
        &control,
        SCHEMA,
        &files.read("schema.sql").unwrap(),
        &files.read("seed.sql").unwrap(),
    )
    .await
    .unwrap();
    // Sessions named APP ("lab-test-" and the session's name).
    let env = srv.env(SCHEMA).await;
    let opener = lab::engine::Opener::new(&env, "lab-test-".into(), "http-test".into(), Default::default());
    let db = vec![
        opener.open_quiet("api").await.unwrap(),
        opener.open_quiet("api").await.unwrap(),
    ];
    let cfg = Config {
        port: 0,
        mode,
        sql: SqlFile::load(&files, "http-etag.sql").unwrap(),
        deadline: Duration::from_secs(5),
        log: Arc::new(Log::default()),
    };
    Server::start(cfg, db).await.unwrap()
}

async fn send(api: &Server, req: Request) -> Response {
    let mut c = HttpClient::new("T", api.addr, Duration::from_secs(5));
    c.send(&req).await.unwrap().1
}

fn put(if_match: &str) -> Request {
    Request::put("/books/1", "{\"price\":\"42.00\",\"stock\":35}").header("If-Match", if_match)
}

fn error_of(r: &Response) -> String {
    r.field("error")
        .and_then(|e| e.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// The book's version and the number of audited writes to it.
async fn state(srv: &TestServer) -> (i64, i64) {
    let c = pg(srv).await;
    let v: i32 = c
        .query_one(&format!("SELECT version FROM {SCHEMA}.books WHERE book_id = 1"), &[])
        .await
        .unwrap()
        .get(0);
    let n: i64 = c
        .query_one(
            &format!("SELECT count(*) FROM {SCHEMA}.audit_log WHERE row_id = '1'"),
            &[],
        )
        .await
        .unwrap()
        .get(0);
    (v as i64, n)
}

/// Waits (with a deadline) until the API's connections are idle outside a transaction.
async fn connections_idle(srv: &TestServer, want: i64) {
    let c = pg(srv).await;
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let idle: i64 = c
            .query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND state = 'idle'",
                &[&APP],
            )
            .await
            .unwrap()
            .get(0);
        let all: i64 = c
            .query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1",
                &[&APP],
            )
            .await
            .unwrap()
            .get(0);
        if idle == want && all == want {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "API connections: {idle} idle of {all}, want {want}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[test]
fn malformed_preconditions_are_400_with_the_reason() {
    let srv = TestServer::start();
    srv.rt.block_on(async {
        let api = start(&srv, Mode::Lenient).await;
        for (value, reason) in [
            ("v1", "double quotes"),
            ("\"v1", "double quotes"),
            ("w/\"v1\"", "upper case"),
            ("\"v 1\"", "0x20"),
            ("*, \"v1\"", "stands alone"),
            (" , ", "empty"),
        ] {
            let r = send(&api, put(value)).await;
            assert_eq!(r.status, 400, "If-Match: {value}: {}", r.body);
            let error = error_of(&r);
            assert!(error.contains("If-Match") && error.contains(reason), "{value}: {error}");
        }
        // The reason in the client's language.
        let r = send(&api, put("v1").header("Accept-Language", "tr-TR")).await;
        assert!(error_of(&r).contains("çift tırnak"), "{}", r.body);
        // A body that is not the book, and a book id that is not one.
        let r = send(
            &api,
            Request::put("/books/1", "{\"price\":\"4.5.0\",\"stock\":1}").header("If-Match", "\"v1\""),
        )
        .await;
        assert_eq!((r.status, error_of(&r).contains("price")), (400, true), "{}", r.body);
        let r = send(&api, Request::put("/books/1", "not json").header("If-Match", "\"v1\"")).await;
        assert_eq!(r.status, 400, "{}", r.body);
        let r = send(&api, Request::get("/books/x")).await;
        assert_eq!(r.status, 400, "{}", r.body);
        // Nothing was written by any of them; a good request still works.
        assert_eq!(state(&srv).await, (1, 0));
        let r = send(&api, put("\"v1\"")).await;
        assert_eq!((r.status, r.header("etag")), (200, Some("\"v2\"")), "{}", r.body);
        // A strong tag that is not the current version is 412, a weak one too.
        assert_eq!(send(&api, put("\"v1\"")).await.status, 412);
        assert_eq!(send(&api, put("W/\"v2\"")).await.status, 412);
        assert_eq!(send(&api, put("\"v9\", \"v2\"")).await.status, 200);
        api.stop().await;
        connections_idle(&srv, 0).await;
    });
}

#[test]
fn a_client_that_goes_away_mid_request_leaves_nothing_half_done() {
    let srv = TestServer::start();
    srv.rt.block_on(async {
        let api = start(&srv, Mode::Lenient).await;
        // Half a body, then the connection closes.
        let mut s = tokio::net::TcpStream::connect(api.addr).await.unwrap();
        s.write_all(
            b"PUT /books/1 HTTP/1.1\r\nHost: lab\r\nContent-Type: application/json\r\n\
              If-Match: \"v1\"\r\nContent-Length: 100\r\n\r\n{\"price\":",
        )
        .await
        .unwrap();
        drop(s);
        // A whole request whose client leaves without reading the answer.
        let mut s = tokio::net::TcpStream::connect(api.addr).await.unwrap();
        let body = "{\"price\":\"42.00\",\"stock\":35}";
        s.write_all(
            format!(
                "PUT /books/1 HTTP/1.1\r\nHost: lab\r\nContent-Type: application/json\r\n\
                 If-Match: \"v1\"\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            )
            .as_bytes(),
        )
        .await
        .unwrap();
        s.shutdown().await.unwrap();
        drop(s);
        // The API still answers, and its connections are idle, in no transaction.
        let r = send(&api, Request::get("/books/1")).await;
        assert_eq!(r.status, 200, "{}", r.body);
        connections_idle(&srv, 2).await;
        // The abandoned write happened whole or not at all: version and audit agree.
        let (version, writes) = state(&srv).await;
        assert!(
            (version, writes) == (1, 0) || (version, writes) == (2, 2),
            "version {version} with {writes} audited writes"
        );
        // And the next writer's precondition sees exactly that.
        let r = send(&api, put(&format!("\"v{version}\""))).await;
        assert_eq!(r.status, 200, "{}", r.body);
        // A client that reads a little of a slow answer and goes: the server is unaffected.
        let mut s = tokio::net::TcpStream::connect(api.addr).await.unwrap();
        s.write_all(b"GET /books/1 HTTP/1.1\r\nHost: lab\r\n\r\n")
            .await
            .unwrap();
        let mut first = [0u8; 12];
        s.read_exact(&mut first).await.unwrap();
        assert_eq!(&first, b"HTTP/1.1 200");
        drop(s);
        assert_eq!(send(&api, Request::get("/books/1")).await.status, 200);
        api.stop().await;
        connections_idle(&srv, 0).await;
    });
}

#[test]
fn a_port_in_use_is_a_setup_error() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let r = run(&["http-etag", "--variant", "if-match", "--port", &port]);
    one_line_exit_2(&r, &format!("cannot listen on 127.0.0.1:{port}"));
    drop(taken);
}
