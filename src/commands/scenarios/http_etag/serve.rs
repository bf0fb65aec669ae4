//! HTTP one layer above the database (seed 000's ETag / If-Match / 412 /
//! 428): the Bookstore's API served in-process on loopback, a proxy that
//! weakens entity tags as compressing proxies do, and the clients lab
//! drives step by step.
use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Mutex;

use anyhow::Result;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use tokio::task::JoinSet;

use crate::engine::Recorder;
use crate::i18n::Context;
use crate::report::Entry;

/// Where servers file what they did for a request: under the client's
/// request id until the client has recorded its request, so the timeline
/// reads request, SQL, response; straight to the timeline otherwise.
#[derive(Default)]
pub struct Log {
    pub recorder: Recorder,
    pending: Mutex<HashMap<String, Vec<Entry>>>,
}

impl Log {
    pub fn new(recorder: Recorder) -> Log {
        Log {
            recorder,
            pending: Mutex::default(),
        }
    }

    pub fn record(&self, request: Option<&str>, e: Entry) {
        match request {
            Some(id) => self.pending.lock().unwrap().entry(id.to_string()).or_default().push(e),
            None => self.recorder.push(e),
        }
    }

    /// What the servers did for request `id`, in the order they did it.
    pub fn take(&self, id: &str) -> Vec<Entry> {
        self.pending.lock().unwrap().remove(id).unwrap_or_default()
    }
}

/// A server on a loopback port: its accept loop and every connection it
/// serves run in one task set, all ended by [`Listener::stop`] (or on drop).
pub struct Listener {
    pub addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl Listener {
    /// Binds 127.0.0.1:`port` (0: a free port) and serves each connection
    /// with `service`. A port that cannot be bound is a setup error.
    pub async fn bind<S>(port: u16, service: S) -> Result<Listener>
    where
        S: hyper::service::Service<
                hyper::Request<Incoming>,
                Response = hyper::Response<axum::body::Body>,
                Error = Infallible,
            > + Clone
            + Send
            + 'static,
        S::Future: Send + 'static,
    {
        let at = SocketAddr::from(([127, 0, 0, 1], port));
        let listener = tokio::net::TcpListener::bind(at)
            .await
            .ctx(|| msg::cannot_listen(at.to_string()))?;
        let addr = listener.local_addr().ctx(|| msg::cannot_listen(at.to_string()))?;
        let (stop, mut stopped) = tokio::sync::oneshot::channel();
        let task = tokio::spawn(async move {
            let mut connections = JoinSet::new();
            loop {
                tokio::select! {
                    _ = &mut stopped => break,
                    accepted = listener.accept() => {
                        let Ok((stream, _)) = accepted else { continue };
                        let service = service.clone();
                        connections.spawn(async move {
                            // A client that goes away mid-request ends only its own connection.
                            let _ = hyper::server::conn::http1::Builder::new()
                                .serve_connection(TokioIo::new(stream), service)
                                .await;
                        });
                    }
                    Some(_) = connections.join_next(), if !connections.is_empty() => {}
                }
            }
            connections.shutdown().await;
        });
        Ok(Listener {
            addr,
            stop: Some(stop),
            task: Some(task),
        })
    }

    /// Stops accepting and ends every connection (and the requests in them).
    pub async fn stop(mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.task.take() {
            let _ = t.await;
        }
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        if let Some(t) = &self.task {
            t.abort();
        }
    }
}

pub mod msg {
    crate::messages! {
        prefix "hs";
        cannot_listen(addr) {
            en: "cannot listen on {addr}",
            tr: "{addr} adresi dinlenemiyor",
        }
    }
}
