//! The one place connections are opened, and the lab schema's life cycle
//! (claim, build, drop) on the server.
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll, Waker};
use std::time::Duration;

use anyhow::{Result, bail};
use tokio_postgres::error::{DbError, SqlState};
use tokio_postgres::types::Type;
use tokio_postgres::{AsyncMessage, Client, NoTls};

use super::{auth, tls, watchdog};
use crate::i18n::{Context, Text};
pub use crate::postgres::conninfo::ConnInfo as Config;

/// The comment lab puts on its schema; a schema without it is never dropped.
const SCHEMA_MARK: &str = "lab: PostgreSQL concurrency lab schema";
/// The oldest server the scenarios are written for.
pub const MIN_SERVER_VERSION_NUM: i32 = 120000;

/// What the server sends a session outside any answer.
pub enum Async<'a> {
    /// A NOTICE, WARNING, INFO...
    Notice(&'a DbError),
    /// A NOTIFY on a channel the session listens to.
    Notify(&'a tokio_postgres::Notification),
}

/// Where the NOTICEs and NOTIFYs a session receives go.
pub type NoticeSink = Box<dyn Fn(Async<'_>) + Send + Sync>;

/// How a connection ended, as the server said it (a FATAL before closing), if it did.
#[derive(Debug, Clone, PartialEq)]
pub struct Ended {
    pub code: String,
    pub severity: String,
    pub message: String,
}

impl From<&DbError> for Ended {
    fn from(db: &DbError) -> Ended {
        Ended {
            code: db.code().code().to_string(),
            severity: db.severity().to_string(),
            message: db.message().to_string(),
        }
    }
}

impl Ended {
    /// Ended by a conflict with WAL replay on a standby (FATAL 40001,
    /// "terminating connection due to conflict with recovery").
    pub fn recovery_conflict(&self) -> bool {
        self.code == "40001" && self.message.contains("conflict with recovery")
    }
}

/// A connection: the client, and the task that drives it.
pub struct Conn {
    pub client: Client,
    end: EndWatch,
    pub driver: Drain,
    /// The TLS handshake's facts; None without TLS.
    pub tls: Option<tls::Facts>,
    /// Sends a cancel request the way the connection went.
    pub cancel: Canceller,
}

/// Waits for a connection's task to end and keeps what ended it.
#[derive(Clone)]
pub struct EndWatch(Arc<tokio::sync::Mutex<EndState>>);

enum EndState {
    Running(tokio::task::JoinHandle<Option<Ended>>),
    Done(Option<Ended>),
}

impl EndWatch {
    /// What ended the connection, waiting at most `within` for its task to finish.
    pub async fn ended(&self, within: Duration) -> Option<Ended> {
        let mut state = self.0.lock().await;
        if let EndState::Running(handle) = &mut *state {
            match tokio::time::timeout(within, handle).await {
                Ok(r) => *state = EndState::Done(r.ok().flatten()),
                Err(_) => return None,
            }
        }
        match &*state {
            EndState::Done(e) => e.clone(),
            EndState::Running(_) => None,
        }
    }
}

impl Conn {
    pub fn end_watch(&self) -> EndWatch {
        self.end.clone()
    }
}

/// Opens one connection tagged with `application_name`; `setup` (SET
/// statements: the search_path, the neutral settings) runs on it before it is
/// handed out. Sent as SQL, not as startup options: a pooler drops or refuses
/// those, and SET outranks role defaults all the same. NOTICEs go to `notices`.
pub async fn connect(base: &Config, app_name: &str, setup: Option<&str>, notices: Option<NoticeSink>) -> Result<Conn> {
    open(base, app_name, setup, notices, None).await
}

/// Opens one of lab's own connections (a run's control connection, `lab
/// locks`): as [`connect`], and a request it leaves unanswered for `silence`
/// ends it (see [`watchdog`]). A session's connection is never watched
/// this way: it may wait on a lock as long as the lock is held.
pub async fn connect_control(base: &Config, app_name: &str, setup: Option<&str>, silence: Duration) -> Result<Conn> {
    open(base, app_name, setup, None, Some(silence)).await
}

/// How long one host may take to answer: connect_timeout (lab's 5 s when
/// none is given; libpq's 0, for ever, is a day).
fn attempt_limit(config: &Config) -> Duration {
    match config.get_connect_timeout() {
        Some(t) => *t,
        None => Duration::from_secs(86_400),
    }
}

async fn open(
    base: &Config,
    app_name: &str,
    setup: Option<&str>,
    notices: Option<NoticeSink>,
    silence: Option<Duration>,
) -> Result<Conn> {
    let mut config = base.clone();
    config.application_name(self::app_name(app_name));
    let limit = attempt_limit(&config);
    let place = where_of(&config);
    let opened = establish(&config, silence).await?;
    let (client, connection) = (opened.client, opened.messages);
    let driver = Arc::new(Driver {
        link: std::sync::Mutex::new(Link::Open(connection)),
        waker: std::sync::Mutex::new(None),
        sink: notices,
    });
    let d = driver.clone();
    let task = tokio::spawn(async move { std::future::poll_fn(|cx| d.poll(cx)).await });
    if let Some(sql) = setup.filter(|s| !s.is_empty()) {
        // Bounded like the handshake: behind a pooler with no free server
        // connection the first statement queues (PgBouncer's query_wait_timeout is 120 s).
        let set = match tokio::time::timeout(limit, client.batch_execute(sql)).await {
            Ok(r) => r.map_err(|e| sql_error(e, msg::setup())),
            Err(_) => Err(msg::setup_queued(place, limit.as_secs_f64()).into()),
        };
        if let Err(e) = set {
            return Err(Stray::wrap(handshake_pid(&client).await, e));
        }
    }
    Ok(Conn {
        client,
        end: EndWatch(Arc::new(tokio::sync::Mutex::new(EndState::Running(task)))),
        driver: Drain(driver),
        tls: opened.tls,
        cancel: opened.cancel,
    })
}

/// A connection made, before lab drives it.
struct Opened {
    client: Client,
    messages: Box<dyn Messages>,
    tls: Option<tls::Facts>,
    cancel: Canceller,
}

/// Where a connection went and how, to send its cancel request the same way
/// (tokio-postgres' own cannot: lab opened the socket).
#[derive(Clone)]
pub struct Canceller {
    token: tokio_postgres::CancelToken,
    to: Endpoint,
    tls: Option<(Arc<tls::Settings>, String)>,
}

#[derive(Clone)]
enum Endpoint {
    Tcp(std::net::SocketAddr),
    Unix(std::path::PathBuf),
}

impl Canceller {
    /// Asks the server to cancel the connection's running statement (best effort).
    pub async fn cancel(&self) {
        let Ok(stream) = self.to.open(None).await else {
            return;
        };
        let connector = self
            .tls
            .as_ref()
            .and_then(|(settings, host)| settings.connector(host, Arc::default()));
        let _ = match connector {
            Some(c) => self.token.cancel_query_raw(stream, c).await,
            None => self.token.cancel_query_raw(stream, NoTls).await,
        };
    }
}

impl Endpoint {
    async fn open(&self, keepalive: Option<&Config>) -> std::io::Result<Socket> {
        match self {
            Endpoint::Tcp(addr) => {
                let s = tokio::net::TcpStream::connect(addr).await?;
                s.set_nodelay(true)?;
                if let Some(config) = keepalive {
                    tcp_options(&s, config)?;
                }
                Ok(Socket::Tcp(s))
            }
            Endpoint::Unix(path) => Ok(Socket::Unix(tokio::net::UnixStream::connect(path).await?)),
        }
    }
}

/// keepalives and tcp_user_timeout, as tokio-postgres would set them.
fn tcp_options(s: &tokio::net::TcpStream, config: &Config) -> std::io::Result<()> {
    let sock = socket2::SockRef::from(s);
    if let Some(t) = config.get_tcp_user_timeout() {
        sock.set_tcp_user_timeout(Some(*t))?;
    }
    if config.get_keepalives() {
        let mut k = socket2::TcpKeepalive::new().with_time(config.get_keepalives_idle());
        if let Some(i) = config.get_keepalives_interval() {
            k = k.with_interval(i);
        }
        if let Some(r) = config.get_keepalives_retries() {
            k = k.with_retries(r);
        }
        sock.set_tcp_keepalive(&k)?;
    }
    Ok(())
}

/// A connection as libpq makes one: each host in turn (in a random order
/// with load_balance_hosts=random), each of its addresses, with and
/// without TLS as sslmode says (prefer: with, then without; allow: the
/// other way), until one server matches target_session_attrs
/// (prefer-standby: a standby, else any). The last failure is the error.
fn establish(
    config: &Config,
    silence: Option<Duration>,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<Opened>> + Send + '_>> {
    // Boxed: Send is proven here, where the lifetimes are known (the
    // compiler cannot prove it through the callers' generic futures).
    Box::pin(async move {
        use crate::postgres::conninfo::TargetAttrs;
        let hosts = config.get_hosts();
        let mut order: Vec<usize> = (0..hosts.len()).collect();
        if config.load_balance {
            shuffle(&mut order);
        }
        let passes = match config.target {
            TargetAttrs::PreferStandby => vec![TargetAttrs::Standby, TargetAttrs::Any],
            t => vec![t],
        };
        let mut failure = None;
        for want in passes {
            for &i in &order {
                match attempt_host(config, i, want, silence).await {
                    Ok(opened) => return Ok(opened),
                    // libpq tries no other host either.
                    Err(e) if auth::is_refusal(&e) => return Err(e),
                    Err(e) => failure = Some(e),
                }
            }
        }
        Err(failure.unwrap_or_else(|| msg::could_not_connect(where_of(config)).into()))
    })
}

/// A random order (load_balance_hosts=random), from the hasher's random keys.
fn shuffle(order: &mut [usize]) {
    use std::hash::{BuildHasher, Hasher};
    for i in (1..order.len()).rev() {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_usize(i);
        let j = (h.finish() % (i as u64 + 1)) as usize;
        order.swap(i, j);
    }
}

/// One host: its addresses (hostaddr, or what its name resolves to) in
/// turn, each with the TLS attempts sslmode makes.
async fn attempt_host(
    config: &Config,
    i: usize,
    want: crate::postgres::conninfo::TargetAttrs,
    silence: Option<Duration>,
) -> Result<Opened> {
    use tokio_postgres::config::Host;
    let hosts = config.get_hosts();
    let ports = config.get_ports();
    let port = ports.get(i).or(ports.first()).copied().unwrap_or(5432);
    let host = &hosts[i];
    let place = place_of(host, port);
    let limit = attempt_limit(config);
    let could_not = |e: anyhow::Error| {
        Err::<(), _>(e)
            .ctx(|| msg::could_not_connect(place.clone()))
            .unwrap_err()
    };
    let (endpoints, name) = match host {
        Host::Unix(dir) => (vec![Endpoint::Unix(dir.join(format!(".s.PGSQL.{port}")))], None),
        Host::Tcp(name) => {
            let addrs: Vec<std::net::SocketAddr> = match config.hostaddrs.get(i).copied().flatten() {
                Some(ip) => vec![(ip, port).into()],
                None => match name.parse::<std::net::IpAddr>() {
                    Ok(ip) => vec![(ip, port).into()],
                    // An owned name: a borrowed one makes the future Send for one lifetime only.
                    Err(_) => {
                        match tokio::time::timeout(limit, tokio::net::lookup_host(format!("{name}:{port}"))).await {
                            Ok(Ok(a)) => a.collect(),
                            Ok(Err(e)) => return Err(could_not(e.into())),
                            Err(_) => return Err(msg::handshake(place, limit.as_secs_f64()).into()),
                        }
                    }
                },
            };
            (addrs.into_iter().map(Endpoint::Tcp).collect(), Some(name.clone()))
        }
    };
    let mut failure = None;
    for endpoint in endpoints {
        // TLS never goes over a Unix socket, as in libpq.
        let attempts: &[bool] = if name.is_some() {
            config.tls.attempts()
        } else {
            &[false]
        };
        for &with_tls in attempts {
            let attempt = attempt(config, &endpoint, name.as_deref(), with_tls, &place, silence);
            let opened = match tokio::time::timeout(limit, attempt).await {
                Ok(Ok(o)) => o,
                Ok(Err((e, _))) if auth::is_refusal(&e) => return Err(e),
                Ok(Err((e, reached))) => {
                    failure = Some(e);
                    if !reached {
                        // Nothing listens there: another attempt would not do better.
                        break;
                    }
                    continue;
                }
                Err(_) => {
                    failure = Some(msg::handshake(place.clone(), limit.as_secs_f64()).into());
                    break;
                }
            };
            match matches_target(opened, want).await {
                Ok(opened) => return Ok(opened),
                Err(e) => {
                    failure = Some(could_not(e));
                    break;
                }
            }
        }
    }
    Err(failure.unwrap_or_else(|| msg::could_not_connect(place).into()))
}

/// One attempt at one address, with TLS or without; on failure, whether
/// the server was reached (then sslmode's other attempt may follow).
async fn attempt(
    config: &Config,
    endpoint: &Endpoint,
    host: Option<&str>,
    with_tls: bool,
    place: &str,
    silence: Option<Duration>,
) -> std::result::Result<Opened, (anyhow::Error, bool)> {
    let socket = endpoint.open(Some(config)).await.map_err(|e| {
        let e = Err::<(), _>(e).ctx(|| msg::could_not_connect(place)).unwrap_err();
        (e, false)
    })?;
    let mut pg = config.pg().clone();
    let facts = Arc::new(std::sync::Mutex::new(None));
    let connected = match (with_tls, host) {
        (true, Some(host)) => {
            pg.ssl_mode(tokio_postgres::config::SslMode::Require);
            let Some(connector) = config.tls.connector(host, facts.clone()) else {
                return Err((msg::bad_tls_host(host).into(), false));
            };
            let connector = match silence {
                Some(limit) => connector.wrapped(watched(limit, place.to_string())),
                None => connector,
            };
            // require_auth reads the server's messages decrypted.
            let connector = match config.require_auth.clone() {
                Some(rule) => connector.wrapped(move |s| Box::new(auth::Guard::new(s, rule))),
                None => connector,
            };
            handshake(pg, socket, connector).await
        }
        _ => {
            pg.ssl_mode(tokio_postgres::config::SslMode::Disable);
            let socket = match silence {
                Some(limit) => Socket::Watched(Box::new(watchdog::Watched::new(socket, limit, place.to_string()))),
                None => socket,
            };
            let socket = match config.require_auth.clone() {
                Some(rule) => Socket::Guarded(Box::new(auth::Guard::new(socket, rule))),
                None => socket,
            };
            handshake(pg, socket, NoTls).await
        }
    };
    let (client, messages) = connected.map_err(|e| (describe_connect_error(e, place, with_tls, config), true))?;
    let tls = facts.lock().unwrap().take();
    let cancel = Canceller {
        token: client.cancel_token(),
        to: endpoint.clone(),
        tls: match (with_tls, host) {
            (true, Some(h)) => Some((config.tls.clone(), h.to_string())),
            _ => None,
        },
    };
    Ok(Opened {
        client,
        messages,
        tls,
        cancel,
    })
}

type Handshake = std::pin::Pin<
    Box<dyn std::future::Future<Output = Result<(Client, Box<dyn Messages>), tokio_postgres::Error>> + Send>,
>;

/// The startup handshake on a socket lab opened, everything owned (a
/// future Send for any lifetime, which the compiler cannot otherwise see).
fn handshake<T>(pg: tokio_postgres::Config, socket: Socket, tls: T) -> Handshake
where
    T: tokio_postgres::tls::TlsConnect<Socket> + Send + 'static,
    T::Stream: Send + 'static,
    T::Future: Send,
{
    Box::pin(async move {
        let (client, connection) = pg.connect_raw(socket, tls).await?;
        Ok((client, Box::new(connection) as Box<dyn Messages>))
    })
}

/// A socket lab opened: TCP or Unix, watched or not (a type of its own:
/// the compiler cannot prove a boxed stream's handshake Send).
pub enum Socket {
    Tcp(tokio::net::TcpStream),
    Unix(tokio::net::UnixStream),
    Watched(Box<watchdog::Watched<Socket>>),
    /// Its reads checked against require_auth (see [`auth`]).
    Guarded(Box<auth::Guard<Socket>>),
}

macro_rules! each_socket {
    ($self:expr, $s:ident => $e:expr) => {
        match $self.get_mut() {
            Socket::Tcp($s) => {
                let $s = std::pin::Pin::new($s);
                $e
            }
            Socket::Unix($s) => {
                let $s = std::pin::Pin::new($s);
                $e
            }
            Socket::Watched($s) => {
                let $s = std::pin::Pin::new(&mut **$s);
                $e
            }
            Socket::Guarded($s) => {
                let $s = std::pin::Pin::new(&mut **$s);
                $e
            }
        }
    };
}

impl tokio::io::AsyncRead for Socket {
    fn poll_read(
        self: std::pin::Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        each_socket!(self, s => s.poll_read(cx, buf))
    }
}

impl tokio::io::AsyncWrite for Socket {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        each_socket!(self, s => s.poll_write(cx, buf))
    }
    fn poll_flush(self: std::pin::Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<std::io::Result<()>> {
        each_socket!(self, s => s.poll_flush(cx))
    }
    fn poll_shutdown(self: std::pin::Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<std::io::Result<()>> {
        each_socket!(self, s => s.poll_shutdown(cx))
    }
}

/// Wraps a stream (in the clear) in lab's watchdog.
fn watched(
    limit: Duration,
    place: String,
) -> impl FnOnce(Box<dyn tls::Stream>) -> Box<dyn tls::Stream> + Send + 'static {
    move |s| Box::new(watchdog::Watched::new(s, limit, place))
}

/// Whether the server is what target_session_attrs asks for, asked as
/// libpq asks: transaction_read_only for read-write and read-only,
/// pg_is_in_recovery() for primary and standby.
async fn matches_target(opened: Opened, want: crate::postgres::conninfo::TargetAttrs) -> Result<Opened> {
    use crate::postgres::conninfo::TargetAttrs;
    let (sql, expected, name) = match want {
        TargetAttrs::Any | TargetAttrs::PreferStandby => return Ok(opened),
        TargetAttrs::ReadWrite => ("SHOW transaction_read_only", "off", "read-write"),
        TargetAttrs::ReadOnly => ("SHOW transaction_read_only", "on", "read-only"),
        TargetAttrs::Primary => ("SELECT pg_catalog.pg_is_in_recovery()", "f", "primary"),
        TargetAttrs::Standby => ("SELECT pg_catalog.pg_is_in_recovery()", "t", "standby"),
    };
    // Nobody drives the connection yet: drive it while the question is asked.
    let Opened {
        client,
        mut messages,
        tls,
        cancel,
    } = opened;
    let drive = std::future::poll_fn(|cx| {
        loop {
            match messages.poll_message(cx) {
                Poll::Ready(Some(Ok(_))) => continue,
                Poll::Ready(_) => return Poll::Ready(()),
                Poll::Pending => return Poll::Pending,
            }
        }
    });
    let got = tokio::select! {
        v = simple_value(&client, sql) => v.ok().flatten(),
        () = drive => None,
    };
    if got.as_deref() != Some(expected) {
        bail!(msg::not_target_session(name));
    }
    Ok(Opened {
        client,
        messages,
        tls,
        cancel,
    })
}

/// `work` on a connection, given at most `limit` to answer.
pub async fn within<T>(limit: Duration, work: impl std::future::Future<Output = Result<T>>) -> Result<T> {
    match tokio::time::timeout(limit, work).await {
        Ok(r) => r,
        Err(_) => bail!(msg::no_answer(limit.as_secs_f64())),
    }
}

/// The backend the server named in the handshake (its BackendKeyData),
/// without a round trip: tokio-postgres keeps it only in the cancel token,
/// which writes it in the cancel request it sends down a stream of ours.
/// Through a pooler it is the pooler's number, not a backend's.
pub async fn handshake_pid(client: &Client) -> Option<i32> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let (mut ours, theirs) = tokio::io::duplex(64);
    let token = client.cancel_token();
    let ask = token.cancel_query_raw(theirs, Transparent);
    // The server's side: where the client would speak TLS (an SSLRequest
    // first, or direct negotiation), say yes; the "TLS" is the identity,
    // and the cancel request comes in the clear.
    let answer = async {
        let mut head = [0u8; 8];
        ours.read_exact(&mut head).await.ok()?;
        let word = |b: &[u8], i: usize| u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        if word(&head, 0) == 8 && word(&head, 4) == 80877103 {
            ours.write_all(b"S").await.ok()?;
            ours.read_exact(&mut head).await.ok()?;
        }
        // Length 16, the cancel request code, the pid, the secret key.
        let mut rest = [0u8; 8];
        ours.read_exact(&mut rest).await.ok()?;
        (word(&head, 0) == 16 && word(&head, 4) == 80877102).then(|| word(&rest, 0) as i32)
    };
    // All in memory: a second is more than it ever takes.
    let both = async { tokio::join!(ask, answer).1 };
    tokio::time::timeout(Duration::from_secs(1), both).await.ok().flatten()
}

/// The identity in place of TLS, for [`handshake_pid`]'s in-memory stream.
struct Transparent;

/// The in-memory stream, as tokio-postgres takes a TLS one.
struct Clear(tokio::io::DuplexStream);

impl tokio_postgres::tls::TlsConnect<tokio::io::DuplexStream> for Transparent {
    type Stream = Clear;
    type Error = std::io::Error;
    type Future = std::future::Ready<std::io::Result<Clear>>;
    fn connect(self, stream: tokio::io::DuplexStream) -> Self::Future {
        std::future::ready(Ok(Clear(stream)))
    }
}

impl tokio::io::AsyncRead for Clear {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

impl tokio::io::AsyncWrite for Clear {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::pin::Pin::new(&mut self.0).poll_write(cx, buf)
    }
    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.0).poll_flush(cx)
    }
    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.0).poll_shutdown(cx)
    }
}

impl tokio_postgres::tls::TlsStream for Clear {
    fn channel_binding(&self) -> tokio_postgres::tls::ChannelBinding {
        tokio_postgres::tls::ChannelBinding::none()
    }
}

/// A connection that failed after its handshake, with the backend the
/// server started for it: the server may keep that backend (idle, waiting
/// for a client the network lost), so whoever has a control connection
/// ends it (see [`stray_backend`]). Says nothing itself: the error line is
/// its cause's.
#[derive(Debug)]
pub struct Stray {
    pid: Option<i32>,
    cause: anyhow::Error,
}

impl Stray {
    pub fn wrap(pid: Option<i32>, cause: anyhow::Error) -> anyhow::Error {
        anyhow::Error::new(Stray { pid, cause })
    }
}

impl std::fmt::Display for Stray {
    fn fmt(&self, _: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        Ok(())
    }
}

impl std::error::Error for Stray {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(self.cause.as_ref())
    }
}

/// The backend a failed connection left on the server, if the error says.
pub fn stray_backend(e: &anyhow::Error) -> Option<i32> {
    e.chain().find_map(|c| c.downcast_ref::<Stray>()).and_then(|s| s.pid)
}

/// An application_name as the server stores it: cut at 63 bytes (on a char boundary, which the server would not do).
pub fn app_name(name: &str) -> String {
    let mut name = name.to_string();
    while name.len() > 63 {
        name.pop();
    }
    name
}

/// A connection's protocol half, whatever its stream.
trait Messages: Send {
    fn poll_message(&mut self, cx: &mut TaskContext<'_>) -> Poll<Option<Result<AsyncMessage, tokio_postgres::Error>>>;
}

impl<S, T> Messages for tokio_postgres::Connection<S, T>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send,
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send,
{
    fn poll_message(&mut self, cx: &mut TaskContext<'_>) -> Poll<Option<Result<AsyncMessage, tokio_postgres::Error>>> {
        tokio_postgres::Connection::poll_message(self, cx)
    }
}

/// Drives a connection: a task polls it all the time; [`Drain::now`] also
/// reads, at once, whatever the server has already sent.
struct Driver {
    link: std::sync::Mutex<Link>,
    /// The task's waker: reading with it keeps the socket's wake-ups going to the task.
    waker: std::sync::Mutex<Option<Waker>>,
    sink: Option<NoticeSink>,
}

/// The connection, until it ends. It is dropped then, so the client's
/// requests fail at once instead of waiting in a channel nobody reads.
enum Link {
    Open(Box<dyn Messages>),
    /// A drain saw it end; the task has yet to report how.
    Ended(Option<Ended>),
    /// The task reported the end.
    Done,
}

impl Driver {
    fn poll(&self, cx: &mut TaskContext<'_>) -> Poll<Option<Ended>> {
        let mut link = self.link.lock().unwrap();
        *self.waker.lock().unwrap() = Some(cx.waker().clone());
        let end = match &mut *link {
            Link::Open(c) => std::task::ready!(self.read(c, cx)),
            Link::Ended(end) => end.take(),
            Link::Done => None,
        };
        *link = Link::Done;
        Poll::Ready(end)
    }

    /// Handles messages until the socket has no more; Ready when the connection ended.
    fn read(&self, conn: &mut Box<dyn Messages>, cx: &mut TaskContext<'_>) -> Poll<Option<Ended>> {
        loop {
            match conn.poll_message(cx) {
                Poll::Ready(Some(Ok(AsyncMessage::Notice(n)))) => {
                    if let Some(sink) = &self.sink {
                        sink(Async::Notice(&n));
                    }
                }
                Poll::Ready(Some(Ok(AsyncMessage::Notification(n)))) => {
                    if let Some(sink) = &self.sink {
                        sink(Async::Notify(&n));
                    }
                }
                Poll::Ready(Some(Ok(_))) => {}
                // The server's last word (a FATAL such as 25P03) before it closed the connection.
                Poll::Ready(Some(Err(e))) => {
                    return Poll::Ready(e.as_db_error().map(Ended::from));
                }
                Poll::Ready(None) => return Poll::Ready(None),
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}

/// Reads what a connection's server has sent, now.
#[derive(Clone)]
pub struct Drain(Arc<Driver>);

impl Drain {
    /// Handles every message already on the socket (NOTICEs go to the sink),
    /// as libpq's PQconsumeInput does, without waiting for the task to be scheduled.
    pub fn now(&self) {
        let d = &self.0;
        let Some(waker) = d.waker.lock().unwrap().clone() else {
            return;
        };
        let mut link = d.link.lock().unwrap();
        if let Link::Open(c) = &mut *link
            && let Poll::Ready(end) = d.read(c, &mut TaskContext::from_waker(&waker))
        {
            *link = Link::Ended(end);
            waker.wake();
        }
    }
}

/// tokio-postgres says "error connecting to server" / "db error"; the cause is
/// in its source. Keep the chain, it is printed on one line.
/// With TLS, the line names sslmode and where it came from.
fn describe_connect_error(e: tokio_postgres::Error, place: &str, with_tls: bool, config: &Config) -> anyhow::Error {
    let at = || match with_tls {
        true => msg::could_not_connect_tls(place, &config.tls.mode_origin, config.tls.mode.name()),
        false => msg::could_not_connect(place),
    };
    if let Some(db) = e.as_db_error() {
        return msg::refused(place, db.message(), db.code().code()).into();
    }
    if let Some(refused) = auth::refusal_of(&e) {
        return Err::<(), _>(anyhow::Error::new(refused))
            .ctx(|| msg::could_not_connect(place))
            .unwrap_err();
    }
    // tokio-postgres says "error performing TLS handshake" and the cause below it; "server does not support TLS" alone.
    let text = std::error::Error::source(&e).map(|c| c.to_string()).unwrap_or_default();
    if text.contains("server does not support TLS") {
        return Err::<(), _>(anyhow::Error::new(msg::no_tls_server()))
            .ctx(at)
            .unwrap_err();
    }
    if with_tls && !text.is_empty() {
        return Err::<(), _>(anyhow::anyhow!(text)).ctx(at).unwrap_err();
    }
    Err::<(), _>(e).ctx(at).unwrap_err()
}

/// Substitutes the schema for psql's `:"schema"` and drops psql's backslash
/// commands, so the files in lab/ run the same under psql and under lab.
pub fn render_sql(text: &str, schema: &str) -> String {
    text.lines()
        .filter(|l| !l.trim_start().starts_with('\\'))
        .map(|l| l.replace(":\"schema\"", &format!("\"{schema}\"")))
        .collect::<Vec<_>>()
        .join("\n")
}

#[derive(Debug, Clone)]
pub struct ServerInfo {
    pub version: String,
    pub version_num: i32,
    /// Whether the role lab connects as is a superuser (some settings need it).
    pub superuser: bool,
    /// A standby in recovery: read-only, nothing can be created on it.
    pub in_recovery: bool,
    /// lab reaches the server through a transaction pooler of the user's
    /// (accepted only where the run asked for it, see [`control`]): the
    /// control connection asks with unnamed statements only, and sessions
    /// carry their state with every transaction.
    pub behind_pooler: bool,
    /// How the control connection is encrypted (None: plaintext); the
    /// sessions' own connections are recorded each with its session.
    pub tls: Option<tls::Facts>,
}

/// What the server is, in one simple query (no prepared statement: what
/// a transaction pooler between lab and the server cannot lose).
pub async fn server_info(client: &Client) -> Result<ServerInfo> {
    let row = simple_row(
        client,
        "SELECT current_setting('server_version'), current_setting('server_version_num'), \
                coalesce((SELECT rolsuper FROM pg_roles WHERE rolname = current_user), false), \
                pg_is_in_recovery()",
    )
    .await
    .ctx(msg::version)?;
    let field = |i: usize| row.get(i).cloned().flatten().ctx(msg::version);
    let num: i32 = field(1)?.parse().ctx(msg::version)?;
    let mut info = check_version(field(0)?, num)?;
    info.superuser = field(2)? == "t";
    info.in_recovery = field(3)? == "t";
    Ok(info)
}

/// A run's control connection and what the server is, checked before
/// anything is created: not a standby, and not behind a transaction pooler
/// unless `pooler_ok` (then [`ServerInfo::behind_pooler`] says whether it
/// is). When connecting fails, the error also says where lab found the
/// server's address.
pub async fn control(
    target: &crate::postgres::RunOn,
    pg: &Config,
    app_name: &str,
    pooler_ok: bool,
    silence: Duration,
) -> Result<(Client, ServerInfo)> {
    let r = connect_control(pg, app_name, None, silence).await;
    let (conn, pooler) = match target {
        crate::postgres::RunOn::Server(_, origin) => {
            let conn = r.ctx(|| msg::named_by(origin))?;
            let pooler = transaction_pooler(&conn.client, pg, silence).await?;
            match pooler {
                Some(why) if !pooler_ok => bail!(why),
                _ => (conn, pooler.is_some()),
            }
        }
        // lab started it: nothing stands between lab and its own server.
        crate::postgres::RunOn::Throwaway { .. } => (r?, false),
    };
    let client = conn.client;
    let mut server = server_info(&client).await?;
    server.behind_pooler = pooler;
    server.tls = conn.tls;
    refuse_standby(&server, pg)?;
    Ok((client, server))
}

/// The first row of a simple query, as text (NULL as None); empty when
/// it returned no row.
pub async fn simple_row(client: &Client, sql: &str) -> Result<Vec<Option<String>>, tokio_postgres::Error> {
    Ok(text_rows(&client.simple_query(sql).await?)
        .into_iter()
        .next()
        .unwrap_or_default())
}

/// The rows a simple query returned, as text (NULL as None).
pub fn text_rows(msgs: &[tokio_postgres::SimpleQueryMessage]) -> Vec<Vec<Option<String>>> {
    msgs.iter()
        .filter_map(|m| match m {
            tokio_postgres::SimpleQueryMessage::Row(r) => {
                Some((0..r.len()).map(|i| r.get(i).map(str::to_string)).collect())
            }
            _ => None,
        })
        .collect()
}

/// The first column of the first row of a simple query (no prepared
/// statement: what a transaction pooler cannot lose).
pub async fn simple_value(client: &Client, sql: &str) -> Result<Option<String>, tokio_postgres::Error> {
    Ok(client.simple_query(sql).await?.iter().find_map(|m| match m {
        tokio_postgres::SimpleQueryMessage::Row(r) => r.get(0).map(str::to_string),
        _ => None,
    }))
}

/// How many more client connections the server accepts (for roles that are not superusers).
pub async fn free_connections(client: &Client) -> Result<i64> {
    let row = client
        .query_one(
            "SELECT current_setting('max_connections')::bigint \
                    - current_setting('superuser_reserved_connections')::bigint \
                    - (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend')",
            &[],
        )
        .await
        .ctx(msg::version)?;
    Ok(row.get(0))
}

/// A transaction pooler (PgBouncer's `pool_mode = transaction`, a managed
/// database's pooled port) between lab and the server, found before any
/// session starts (why, as the line a run that cannot work through one
/// gives): lab's sessions keep state on their connection (the search_path,
/// SETs, session advisory locks, the backend pid that wait detection
/// watches), and a transaction pooler hands each transaction to whichever
/// server connection is free. Seen from the server: a second client
/// connection is served by the backend the first one just used, or the first
/// comes back on another backend. Simple queries only: such a pooler loses
/// prepared statements between transactions.
async fn transaction_pooler(first: &Client, config: &Config, silence: Duration) -> Result<Option<Text>> {
    async fn pid_of(c: &Client, sql: &str) -> Result<String> {
        simple_value(c, sql).await.ctx(msg::version)?.ctx(msg::version)
    }
    let pid = |c| pid_of(c, "SELECT pg_backend_pid()");
    let p1 = pid(first).await?;
    let second = connect_control(config, "lab:pooler-probe", None, silence).await?.client;
    // BEGIN and the question in one message: the probe carries the role's
    // defaults, and an idle_in_transaction_session_timeout shorter than a
    // round trip would end it in between (CI saw 1 ms do so on a loaded
    // runner). Ended afterwards, it has already answered.
    let p2 = pid_of(&second, "BEGIN; SELECT pg_backend_pid()").await?;
    let mut again = Vec::new();
    for _ in 0..3 {
        again.push(pid(first).await?);
    }
    let _ = second.batch_execute("ROLLBACK").await;
    if p2 == p1 || again.iter().any(|p| *p != p1) {
        return Ok(Some(msg::transaction_pooler(where_of(config), p1)));
    }
    // A pooler that hands out its idle server connections in turn keeps
    // giving a lone client the same one; a prepared statement run in a
    // transaction of its own then lands on another.
    for _ in 0..3 {
        let prepared = first.prepare("SELECT 1").await;
        let ran = match prepared {
            Ok(st) => first.query(&st, &[]).await.map(|_| ()),
            Err(e) => Err(e),
        };
        match ran {
            Err(e) if prepared_elsewhere(&e) => return Ok(Some(msg::transaction_pooler_prepared())),
            other => other.ctx(msg::version)?,
        }
    }
    Ok(None)
}

/// A prepared statement looked for on another server connection than its
/// own (26000), or meeting another client's of the same name there (42P05):
/// what only a transaction pooler between lab and the server does.
fn prepared_elsewhere(e: &tokio_postgres::Error) -> bool {
    matches!(
        e.code(),
        Some(&SqlState::INVALID_SQL_STATEMENT_NAME | &SqlState::DUPLICATE_PSTATEMENT)
    )
}

/// A standby is refused before anything is created on it (it would fail on
/// the first CREATE with 25006, after lab had started).
fn refuse_standby(info: &ServerInfo, config: &Config) -> Result<()> {
    if info.in_recovery {
        bail!(msg::standby(where_of(config)));
    }
    Ok(())
}

/// `host:port` (or the socket directory) a configuration connects to, for messages.
pub fn where_of(config: &Config) -> String {
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let hosts: Vec<String> = config.get_hosts().iter().map(|h| place_of(h, port)).collect();
    hosts.join(",")
}

/// One host and port as messages name it: `host:port`, or the socket's path.
fn place_of(host: &tokio_postgres::config::Host, port: u16) -> String {
    match host {
        tokio_postgres::config::Host::Tcp(name) => format!("{name}:{port}"),
        tokio_postgres::config::Host::Unix(dir) => format!("{}/.s.PGSQL.{port}", dir.display()),
    }
}

/// The settings a role's or database's defaults (`ALTER ROLE ... SET`) could
/// change under lab and that decide what a scenario shows: every lab session
/// starts from the server's built-in values; a scenario that needs another
/// sets it itself. `transaction_timeout` exists from PostgreSQL 17,
/// `idle_session_timeout` from 14.
pub fn neutral_settings(version_num: i32) -> Vec<(&'static str, &'static str)> {
    let mut s = vec![
        ("lock_timeout", "0"),
        ("statement_timeout", "0"),
        ("idle_in_transaction_session_timeout", "0"),
        ("default_transaction_isolation", "read committed"),
        ("default_transaction_read_only", "off"),
        ("default_transaction_deferrable", "off"),
    ];
    if version_num >= 140000 {
        s.push(("idle_session_timeout", "0"));
    }
    if version_num >= 170000 {
        s.push(("transaction_timeout", "0"));
    }
    s
}

/// The neutral settings as SET statements, run on every lab connection
/// right after it opens (a session-level SET outranks role and database defaults).
pub fn neutral_sql(version_num: i32) -> String {
    neutral_settings(version_num)
        .into_iter()
        .map(|(k, v)| format!("SET {k} = '{v}';"))
        .collect()
}

/// The SET statements a session runs when it opens: its schema first on the
/// search_path, then `settings`.
pub fn session_setup(schema: Option<&str>, settings: &str) -> String {
    // check_schema() allows only [a-z0-9_]; quoted all the same.
    let path = schema.map_or(String::new(), |s| format!("SET search_path TO \"{s}\";"));
    format!("{path}{settings}")
}

/// The same as [`session_setup`], as a startup packet's `options`
/// (`-c search_path=... -c name=value`): for a connection through a load
/// balancer, where a SET is a statement it may take for a write. `settings`
/// is lab's own `SET name = 'value';` list.
pub fn startup_options(schema: Option<&str>, settings: &str) -> String {
    // In options, a space inside a value is escaped with a backslash.
    let escape = |v: &str| v.replace('\\', "\\\\").replace(' ', "\\ ");
    let mut out: Vec<String> = schema
        .map(|s| format!("-c search_path={}", escape(s)))
        .into_iter()
        .collect();
    for statement in crate::sql_lexer::statements(settings) {
        let rest = statement.trim().strip_prefix("SET ").unwrap_or(statement);
        if let Some((name, value)) = rest.split_once(" = ") {
            let value = value.trim().trim_matches('\'');
            out.push(format!("-c {}={}", name.trim(), escape(value)));
        }
    }
    out.join(" ")
}

/// The `options` startup parameter (`-c name=value`, `--name=value`, as
/// libpq sends PGOPTIONS) as SET statements, for sessions behind a
/// transaction pooler, which does not pass `options` on. A backslash
/// escapes the next character (a space), as the server reads options; any
/// other switch has no SET and is refused with the option named.
pub fn options_as_sets(options: &str) -> Result<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut chars = options.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => word.extend(chars.next()),
            c if c.is_whitespace() => {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
            }
            c => word.push(c),
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    let mut sets = String::new();
    let mut words = words.into_iter();
    while let Some(w) = words.next() {
        let setting = if w == "-c" {
            match words.next() {
                Some(s) => s,
                None => bail!(msg::option_without_setting(w)),
            }
        } else if let Some(rest) = w.strip_prefix("-c").or_else(|| w.strip_prefix("--")) {
            rest.to_string()
        } else {
            bail!(msg::option_not_a_setting(w));
        };
        let Some((name, value)) = setting.split_once('=') else {
            bail!(msg::option_without_setting(setting));
        };
        let name = name.replace('-', "_");
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.') {
            bail!(msg::option_without_setting(setting));
        }
        sets.push_str(&format!("SET {name} = {};", crate::sql_lexer::literal(value)));
    }
    Ok(sets)
}

/// The neutral settings on a connection already open (the control connection,
/// opened before the server's version was known).
pub async fn neutralize(client: &Client, version_num: i32) -> Result<()> {
    client
        .batch_execute(&neutral_sql(version_num))
        .await
        .ctx(msg::version)?;
    Ok(())
}

/// The server's version, refused when older than the oldest we support.
pub fn check_version(version: String, version_num: i32) -> Result<ServerInfo> {
    if version_num < MIN_SERVER_VERSION_NUM {
        bail!(msg::too_old(version, MIN_SERVER_VERSION_NUM / 10000));
    }
    Ok(ServerInfo {
        version: version.split_whitespace().next().unwrap_or(&version).to_string(),
        version_num,
        superuser: false,
        in_recovery: false,
        behind_pooler: false,
        tls: None,
    })
}

/// Claims the schema for this run: a session advisory lock held by the control
/// connection until it closes. A second run on the same server and schema is
/// refused rather than allowed to spoil the first one's results.
pub async fn claim_schema(control: &Client, schema: &str) -> Result<()> {
    let got: bool = control
        .query_one(
            "SELECT pg_try_advisory_lock(hashtext('lab-run'), hashtext($1))",
            &[&schema],
        )
        .await
        .ctx(msg::run_lock)?
        .get(0);
    if !got {
        bail!(msg::schema_busy(schema));
    }
    Ok(())
}

/// Gives the schema back at the end of a run, so a run started right after
/// this one is not refused while our connection is still closing.
pub async fn release_schema(control: &Client, schema: &str) -> Result<()> {
    control
        .execute(
            "SELECT pg_advisory_unlock(hashtext('lab-run'), hashtext($1))",
            &[&schema],
        )
        .await
        .ctx(msg::release_lock)?;
    Ok(())
}

/// Creates the schema afresh from `schema_sql` and `seed_sql` (lab/schema.sql
/// and lab/seed.sql), unless a schema of that name exists that lab did not create.
pub async fn rebuild_schema(control: &Client, schema: &str, schema_sql: &str, seed_sql: &str) -> Result<()> {
    ensure_ours(control, schema).await?;
    let sql = format!("{}\n{}", render_sql(schema_sql, schema), render_sql(seed_sql, schema));
    control
        .batch_execute(&sql)
        .await
        .map_err(|e| sql_error(e, msg::create_schema()))?;
    Ok(())
}

/// A database of lab's own on lab's throwaway server (a scenario that needs
/// one beside others); made afresh.
pub async fn create_database(control: &Client, name: &str) -> Result<()> {
    drop_database(control, name).await?;
    control
        .batch_execute(&format!("CREATE DATABASE \"{name}\""))
        .await
        .map_err(|e| sql_error(e, msg::create_database(name)))?;
    Ok(())
}

/// Drops a database lab made. Plainly first: the server then stops its
/// autovacuum workers there itself, which FORCE, for a role that is not a
/// superuser, may not; FORCE when sessions are still connected (a run cut
/// short); on PostgreSQL 12, which has no FORCE, those sessions are
/// terminated first.
pub async fn drop_database(control: &Client, name: &str) -> Result<()> {
    let q = format!("\"{}\"", name.replace('"', "\"\""));
    let plain = format!("DROP DATABASE IF EXISTS {q}");
    let failed = |e| sql_error(e, msg::drop_database(name));
    let Err(e) = control.batch_execute(&plain).await else {
        return Ok(());
    };
    if e.code() != Some(&SqlState::OBJECT_IN_USE) {
        return Err(failed(e));
    }
    match control.batch_execute(&format!("{plain} WITH (FORCE)")).await {
        Err(e) if e.code() == Some(&SqlState::SYNTAX_ERROR) => {
            control
                .execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1",
                    &[&name],
                )
                .await
                .map_err(failed)?;
            control.batch_execute(&plain).await.map_err(failed)
        }
        r => r.map_err(failed),
    }
}

pub async fn drop_schema(control: &Client, schema: &str) -> Result<()> {
    if ensure_ours(control, schema).await? {
        control
            .batch_execute(&format!("DROP SCHEMA \"{schema}\" CASCADE"))
            .await
            .map_err(|e| sql_error(e, msg::drop_schema()))?;
    }
    Ok(())
}

/// Whether a schema of lab's by that name is there already (one `lab
/// server` made, or a run with `--keep-schema`); an error if the schema is
/// not lab's.
pub async fn lab_schema_exists(control: &Client, schema: &str) -> Result<bool> {
    ensure_ours(control, schema).await
}

/// Ok(true) if the schema exists and is lab's, Ok(false) if it does not exist.
async fn ensure_ours(control: &Client, schema: &str) -> Result<bool> {
    // An unnamed statement: the control connection may be a transaction pooler's client.
    let rows = control
        .query_typed(
            "SELECT coalesce(obj_description(oid, 'pg_namespace'), '') FROM pg_namespace WHERE nspname = $1",
            &[(&schema, Type::TEXT)],
        )
        .await?;
    match rows.first() {
        None => Ok(false),
        Some(r) if r.get::<_, String>(0).starts_with(SCHEMA_MARK) => Ok(true),
        Some(_) => bail!(msg::not_ours(schema)),
    }
}

/// A database error as one line: what lab was doing, the server's message and SQLSTATE.
pub fn sql_error(e: tokio_postgres::Error, what: Text) -> anyhow::Error {
    match e.as_db_error() {
        Some(db) => Err::<(), _>(anyhow::Error::new(msg::error(db.message(), db.code().code())))
            .ctx(|| what)
            .unwrap_err(),
        None => Err::<(), _>(e).ctx(|| what).unwrap_err(),
    }
}

pub mod msg {
    crate::messages! {
        prefix "db";
        no_answer(s) {
            en: "no answer within {s} s",
            tr: "{s} sn içinde cevap gelmedi",
        }
        not_target_session(attrs) {
            en: "the server does not match target_session_attrs={attrs}",
            tr: "sunucu target_session_attrs={attrs} ile uyuşmuyor",
        }
        handshake(place, s) {
            en: "could not connect to PostgreSQL at {place}: the server did not complete the startup handshake within {s} s (is it PostgreSQL?)",
            tr: "{place} adresindeki PostgreSQL'e bağlanılamadı: sunucu başlangıç el sıkışmasını {s} sn içinde tamamlamadı (PostgreSQL mi?)",
        }
        refused(place, message, code) {
            en: "the server at {place} refused the connection: {message} (SQLSTATE {code})",
            tr: "{place} adresindeki sunucu bağlantıyı reddetti: {message} (SQLSTATE {code})",
        }
        could_not_connect_tls(place, key, mode) {
            en: "could not connect to PostgreSQL at {place} with TLS ({key}={mode})",
            tr: "{place} adresindeki PostgreSQL'e TLS ile bağlanılamadı ({key}={mode})",
        }
        no_tls_server() {
            en: "server does not support SSL, but SSL was required",
            tr: "sunucu SSL desteklemiyor, ama SSL istendi",
        }
        bad_tls_host(host) {
            en: "\"{host}\" is not a host name TLS can check a certificate against",
            tr: "\"{host}\", TLS'in bir sertifikayı karşılaştırabileceği bir sunucu adı değil",
        }
        could_not_connect(place) {
            en: "could not connect to PostgreSQL at {place}",
            tr: "{place} adresindeki PostgreSQL'e bağlanılamadı",
        }
        named_by(origin) {
            en: "the server named by {origin}",
            tr: "{origin} ile verilen sunucu",
        }
        version() {
            en: "could not read the server version (is this PostgreSQL?)",
            tr: "sunucu sürümü okunamadı (bu PostgreSQL mi?)",
        }
        too_old(version, min) {
            en: "PostgreSQL {version} is older than the oldest version lab supports ({min})",
            tr: "PostgreSQL {version}, lab'ın desteklediği en eski sürümden ({min}) eski",
        }
        run_lock() {
            en: "could not take the lab's run lock",
            tr: "lab'ın çalıştırma kilidi alınamadı",
        }
        schema_busy(schema) {
            en: "another lab run is using schema \"{schema}\" on this server; wait for it to finish, or give this run its own schema with --schema NAME",
            tr: "bu sunucuda başka bir lab çalıştırması \"{schema}\" şemasını kullanıyor; bitmesini bekleyin ya da bu çalıştırmaya --schema NAME ile kendi şemasını verin",
        }
        release_lock() {
            en: "could not release the lab's run lock",
            tr: "lab'ın çalıştırma kilidi bırakılamadı",
        }
        create_schema() {
            en: "could not create the lab schema",
            tr: "lab şeması oluşturulamadı",
        }
        drop_schema() {
            en: "could not drop the lab schema",
            tr: "lab şeması silinemedi",
        }
        create_database(name) {
            en: "could not create lab's database \"{name}\"",
            tr: "lab'ın \"{name}\" veritabanı oluşturulamadı",
        }
        drop_database(name) {
            en: "could not drop lab's database \"{name}\"",
            tr: "lab'ın \"{name}\" veritabanı silinemedi",
        }
        not_ours(schema) {
            en: "schema \"{schema}\" exists and was not created by lab; lab will not touch it: choose another with --schema NAME",
            tr: "\"{schema}\" şeması var ve lab tarafından oluşturulmamış; lab ona dokunmaz: --schema NAME ile başka bir ad seçin",
        }
        transaction_pooler(place, pid) {
            en: "{place} is a transaction pooler (backend {pid} served two client connections in turn): lab's sessions keep state on their connection that such a pooler does not keep (search_path, SET, session locks, the backend wait detection watches); give lab the server's direct address (with --pooler, lab puts a transaction pooler of its own in front of it and keeps the sessions' state itself) or the pooler's session-mode port",
            tr: "{place} bir transaction pooler (backend {pid} iki istemci bağlantısına sırayla hizmet etti): lab'ın oturumları bağlantılarında böyle bir pooler'ın tutmadığı durum tutar (search_path, SET, oturum kilitleri, bekleme tespitinin izlediği backend); lab'a sunucunun doğrudan adresini (--pooler ile lab önüne kendi transaction pooler'ını koyar ve oturumların durumunu kendisi tutar) ya da pooler'ın session modundaki portunu verin",
        }
        setup_queued(place, s) {
            en: "{place} accepted the connection but ran nothing on it within {s} s (a pooler with no free server connection? give the run fewer connections with --max-connections)",
            tr: "{place} bağlantıyı kabul etti ama {s} sn içinde üzerinde hiçbir şey çalıştırmadı (boş sunucu bağlantısı kalmamış bir pooler mı? --max-connections ile çalıştırmaya daha az bağlantı verin)",
        }
        setup() {
            en: "could not set up the session",
            tr: "oturum hazırlanamadı",
        }
        transaction_pooler_prepared() {
            en: "the server is behind a transaction pooler (a prepared statement was looked for on another server connection than its own, or met another client's there): lab's sessions keep state on their connection that such a pooler does not keep; give lab the server's direct address (with --pooler, lab puts a transaction pooler of its own in front of it and keeps the sessions' state itself) or the pooler's session-mode port",
            tr: "sunucu bir transaction pooler arkasında (hazırlanmış bir komut kendi sunucu bağlantısı yerine başka birinde arandı ya da orada başka bir istemcininkiyle karşılaştı): lab'ın oturumları bağlantılarında böyle bir pooler'ın tutmadığı durum tutar; lab'a sunucunun doğrudan adresini (--pooler ile lab önüne kendi transaction pooler'ını koyar ve oturumların durumunu kendisi tutar) ya da pooler'ın session modundaki portunu verin",
        }
        standby(place) {
            en: "the server at {place} is a read-only standby (pg_is_in_recovery() is true): give lab the primary's URL",
            tr: "{place} adresindeki sunucu salt okunur bir standby (pg_is_in_recovery() doğru): lab'a primary'nin URL'sini verin",
        }
        option_not_a_setting(option) {
            en: "startup option {option}: only settings (-c name=value) can reach the server through a transaction pooler, which does not pass the options on",
            tr: "başlangıç seçeneği {option}: transaction pooler seçenekleri iletmediği için sunucuya yalnızca ayarlar (-c name=value) ulaştırılabilir",
        }
        option_without_setting(option) {
            en: "startup option {option}: not a setting of the form name=value",
            tr: "başlangıç seçeneği {option}: name=value biçiminde bir ayar değil",
        }
        error(message, code) {
            en: "{message} (SQLSTATE {code})",
            tr: "{message} (SQLSTATE {code})",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::i18n::Lang;

    #[test]
    fn only_a_conflict_with_recovery_is_a_recovery_conflict_end() {
        let end = |code: &str, message: &str| Ended {
            code: code.into(),
            severity: "FATAL".into(),
            message: message.into(),
        };
        assert!(end("40001", "terminating connection due to conflict with recovery").recovery_conflict());
        // A serialization failure has the same SQLSTATE; a terminated backend, another.
        assert!(!end("40001", "could not serialize access due to concurrent update").recovery_conflict());
        assert!(!end("57P01", "terminating connection due to administrator command").recovery_conflict());
    }

    #[test]
    fn startup_options_carry_every_neutral_setting_and_the_schema() {
        let settings = neutral_sql(180000);
        let o = startup_options(Some("lab_x"), &settings);
        assert!(o.starts_with("-c search_path=lab_x -c lock_timeout=0 "), "{o}");
        // A space in a value is escaped, as the server reads options.
        assert!(o.contains("-c default_transaction_isolation=read\\ committed "), "{o}");
        assert_eq!(o.matches("-c ").count(), 1 + neutral_settings(180000).len(), "{o}");
        assert!(o.ends_with("-c transaction_timeout=0"), "{o}");
        assert_eq!(startup_options(None, ""), "");
    }

    #[test]
    fn startup_options_become_sets_for_a_transaction_pooler() {
        let sets = options_as_sets(
            "-c datestyle=Postgres,\\ MDY -c timezone=PST8PDT --intervalstyle=postgres_verbose -cwork-mem=1MB",
        )
        .unwrap();
        assert_eq!(
            sets,
            "SET datestyle = 'Postgres, MDY';SET timezone = 'PST8PDT';\
             SET intervalstyle = 'postgres_verbose';SET work_mem = '1MB';"
        );
        assert_eq!(options_as_sets("-c x.y='a'").unwrap(), "SET x.y = '''a''';");
        assert_eq!(options_as_sets("  ").unwrap(), "");
        let line = |o: &str| crate::i18n::error_line(&options_as_sets(o).unwrap_err(), Lang::En);
        assert!(
            line("-B 100").starts_with("startup option -B: only settings"),
            "{}",
            line("-B 100")
        );
        assert_eq!(line("-c"), "startup option -c: not a setting of the form name=value");
        assert_eq!(
            line("-c fsync"),
            "startup option fsync: not a setting of the form name=value"
        );
        assert!(line("-c a;b=1").contains("a;b=1"));
    }

    #[test]
    fn old_servers_are_refused_by_version() {
        let err = check_version("11.22".into(), 110022).err().unwrap();
        assert_eq!(
            crate::i18n::error_line(&err, Lang::En),
            "PostgreSQL 11.22 is older than the oldest version lab supports (12)"
        );
        assert_eq!(check_version("12.22".into(), 120022).unwrap().version, "12.22");
        assert_eq!(
            check_version("18.6 (Debian 18.6-1)".into(), 180006).unwrap().version,
            "18.6"
        );
    }

    #[test]
    fn psql_files_render_for_any_schema() {
        let schema = crate::files::LabFiles::embedded().read("schema.sql").unwrap();
        let sql = render_sql(&schema, "lab_two");
        assert!(sql.contains("CREATE SCHEMA \"lab_two\";"));
        assert!(sql.contains("SET search_path TO \"lab_two\";"));
        assert!(!sql.contains(":\"schema\""));
        assert!(!sql.lines().any(|l| l.trim_start().starts_with('\\')));
    }
}
