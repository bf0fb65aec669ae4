//! A real HTTP/1.1 client (hyper's), one keep-alive connection per client,
//! as a browser tab or a mobile app holds one: lab drives A and B with it.
use std::net::SocketAddr;
use std::time::Duration;

use anyhow::Result;
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;

use crate::engine::{Deviation, secs};
use crate::i18n::Context;

/// A request as the timeline shows it.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: &'static str,
    pub path: String,
    pub headers: Vec<(&'static str, String)>,
    pub body: Option<String>,
}

impl Request {
    pub fn get(path: impl Into<String>) -> Request {
        Request {
            method: "GET",
            path: path.into(),
            headers: Vec::new(),
            body: None,
        }
    }

    pub fn put(path: impl Into<String>, body: impl Into<String>) -> Request {
        Request {
            method: "PUT",
            path: path.into(),
            headers: vec![("Content-Type", "application/json".to_string())],
            body: Some(body.into()),
        }
    }

    pub fn header(mut self, name: &'static str, value: impl Into<String>) -> Request {
        self.headers.push((name, value.into()));
        self
    }

    /// The request line, the headers that matter to the story, and the body.
    pub fn shown(&self) -> String {
        let mut s = format!("{} {}", self.method, self.path);
        for (n, v) in &self.headers {
            if n.starts_with("If-") {
                s.push_str(&format!("\n{n}: {v}"));
            }
        }
        if let Some(b) = &self.body {
            s.push_str(&format!("\n{b}"));
        }
        s
    }
}

#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    pub reason: String,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// A field of the JSON body.
    pub fn field(&self, name: &str) -> Option<serde_json::Value> {
        serde_json::from_str::<serde_json::Value>(&self.body)
            .ok()?
            .get(name)
            .cloned()
    }
}

pub struct HttpClient {
    pub name: String,
    addr: SocketAddr,
    sender: Option<SendRequest<Full<Bytes>>>,
    deadline: Duration,
    sent: usize,
}

impl HttpClient {
    pub fn new(name: &str, addr: SocketAddr, deadline: Duration) -> HttpClient {
        HttpClient {
            name: name.to_string(),
            addr,
            sender: None,
            deadline,
            sent: 0,
        }
    }

    async fn connection(&mut self) -> Result<&mut SendRequest<Full<Bytes>>> {
        if self.sender.as_ref().is_none_or(|s| s.is_closed()) {
            let stream = tokio::net::TcpStream::connect(self.addr)
                .await
                .ctx(|| msg::connect(&self.name, self.addr.to_string()))?;
            let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
                .await
                .ctx(|| msg::connect(&self.name, self.addr.to_string()))?;
            // The connection runs until the client or the server closes it.
            tokio::spawn(async move {
                let _ = conn.await;
            });
            self.sender = Some(sender);
        }
        Ok(self.sender.as_mut().expect("just connected"))
    }

    /// Sends the request with the client's name and a request id (which the
    /// server files its SQL under), and waits for the whole answer, within
    /// the deadline. The id is returned with the answer.
    pub async fn send(&mut self, req: &Request) -> Result<(String, Response)> {
        self.sent += 1;
        let id = format!("{}-{}", self.name, self.sent);
        let (name, deadline, addr) = (self.name.clone(), self.deadline, self.addr);
        let answer = async {
            let mut builder = hyper::Request::builder()
                .method(req.method)
                .uri(&req.path)
                .header("Host", addr.to_string())
                .header("User-Agent", format!("lab-client-{name}"))
                .header("X-Request-Id", &id);
            for (n, v) in &req.headers {
                builder = builder.header(*n, v);
            }
            let body = Full::new(Bytes::from(req.body.clone().unwrap_or_default()));
            let request = builder.body(body).ctx(|| msg::failed(&name, req.shown()))?;
            let sender = self.connection().await?;
            sender.ready().await.ctx(|| msg::failed(&name, req.shown()))?;
            let response = sender
                .send_request(request)
                .await
                .ctx(|| msg::failed(&name, req.shown()))?;
            let (parts, body) = response.into_parts();
            let bytes = body.collect().await.ctx(|| msg::failed(&name, req.shown()))?.to_bytes();
            let headers = parts
                .headers
                .iter()
                .map(|(n, v)| {
                    (
                        n.as_str().to_string(),
                        String::from_utf8_lossy(v.as_bytes()).into_owned(),
                    )
                })
                .collect();
            Ok::<_, anyhow::Error>(Response {
                status: parts.status.as_u16(),
                reason: parts.status.canonical_reason().unwrap_or("").to_string(),
                headers,
                body: String::from_utf8_lossy(&bytes).into_owned(),
            })
        };
        match tokio::time::timeout(deadline, answer).await {
            Ok(r) => Ok((id.clone(), r?)),
            Err(_) => {
                // A server that does not answer is the server's behaviour, not lab's failure.
                self.sender = None;
                Err(Deviation(msg::no_answer(&self.name, req.shown(), secs(deadline))).into())
            }
        }
    }
}

pub mod msg {
    crate::messages! {
        prefix "hc";
        connect(client, addr) {
            en: "client {client} could not connect to {addr}",
            tr: "{client} istemcisi {addr} adresine bağlanamadı",
        }
        failed(client, request) {
            en: "client {client}: {request} failed",
            tr: "{client} istemcisi: {request} başarısız oldu",
        }
        no_answer(client, request, deadline) {
            en: "client {client}: {request}: no answer within {deadline} s",
            tr: "{client} istemcisi: {request}: {deadline} sn içinde yanıt gelmedi",
        }
    }
}
