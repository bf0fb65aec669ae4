//! A reverse proxy in front of the API that weakens the entity tags it
//! passes on, as a proxy that changes the body does (nginx's gzip turns a
//! strong `"v1"` into `W/"v1"` since 1.7.3): the weak-etag variant's pitfall.
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Result;
use axum::body::Body;
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::header::{ETAG, HeaderValue};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;

use super::etag::parse_tag;
use super::serve::{Listener, Log};
use crate::i18n::Text;
use crate::report::{Entry, Phrase, StepResult};

/// The lane the proxy's rewrites are shown in.
pub const LANE: &str = "proxy";

pub struct Proxy {
    pub addr: SocketAddr,
    listener: Listener,
}

struct State {
    upstream: SocketAddr,
    log: Arc<Log>,
}

impl Proxy {
    /// A proxy on a free loopback port forwarding to `upstream`.
    pub async fn start(upstream: SocketAddr, log: Arc<Log>) -> Result<Proxy> {
        let state = Arc::new(State { upstream, log });
        let service = hyper::service::service_fn(move |req: Request<Incoming>| {
            let state = state.clone();
            async move { Ok::<_, Infallible>(forward(&state, req).await) }
        });
        let listener = Listener::bind(0, service).await?;
        Ok(Proxy {
            addr: listener.addr,
            listener,
        })
    }

    pub async fn stop(self) {
        self.listener.stop().await;
    }
}

fn bad_gateway() -> Response<Body> {
    let mut r = Response::new(Body::empty());
    *r.status_mut() = StatusCode::BAD_GATEWAY;
    r
}

/// Passes the request on (on a connection of its own) and the answer back,
/// with a strong ETag made weak.
async fn forward(state: &State, req: Request<Incoming>) -> Response<Body> {
    let (parts, body) = req.into_parts();
    let Ok(body) = body.collect().await.map(|b| b.to_bytes()) else {
        return bad_gateway();
    };
    let request_id = parts
        .headers
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let upstream = Request::from_parts(parts, Full::new(body));
    let answer = async {
        let stream = tokio::net::TcpStream::connect(state.upstream).await.ok()?;
        let (mut sender, conn) = hyper::client::conn::http1::handshake::<_, Full<Bytes>>(TokioIo::new(stream))
            .await
            .ok()?;
        tokio::spawn(async move {
            let _ = conn.await;
        });
        let response = sender.send_request(upstream).await.ok()?;
        let (parts, body) = response.into_parts();
        let body = body.collect().await.ok()?.to_bytes();
        Some((parts, body))
    };
    let Some((mut parts, body)) = answer.await else {
        return bad_gateway();
    };
    let strong = parts
        .headers
        .get(ETAG)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| parse_tag(v).ok())
        .filter(|t| !t.weak);
    if let Some(tag) = strong {
        let weak = tag.weakened();
        if let Ok(v) = HeaderValue::from_str(&weak.to_string()) {
            parts.headers.insert(ETAG, v);
            note(
                state,
                request_id.as_deref(),
                msg::weakened(tag.to_string(), weak.to_string()),
            );
        }
    }
    Response::from_parts(parts, Body::from(body))
}

fn note(state: &State, request: Option<&str>, text: Text) {
    let recorder = &state.log.recorder;
    state.log.record(
        request,
        Entry::new(recorder.now_ms(), LANE, StepResult::Note, Phrase::Text(text)),
    );
}

pub mod msg {
    crate::messages! {
        prefix "hp";
        weakened(strong, weak) {
            en: "ETag {strong} passed on as {weak} (the body was transformed, so the tag is weakened)",
            tr: "ETag {strong}, {weak} olarak iletildi (gövde dönüştürüldü, etiket zayıflatıldı)",
        }
    }
}
