//! A fault proxy between lab's sessions and the server, on loopback. Each
//! connection is forwarded byte for byte until lab puts a fault on it (it
//! knows the connection by the application_name of its startup packet, or,
//! where TLS hides that packet, by the name lab gave the proxy for it):
//!
//! - a black hole: nothing passes either way any more, and the proxy's
//!   kernel acknowledges nothing on either socket (a filter drops every
//!   packet that reaches them), so each peer sees the other vanish, as a
//!   host that lost power or a cable pulled: retransmissions and keepalive
//!   probes go unanswered;
//! - a reset: both sockets closed at once with RST;
//! - a close: both sides closed in order (FIN), as a client process that exits;
//! - a delay: every chunk from then on waits that long before it passes.
//!
//! The fault meets the first bytes forwarded after it is set: set before a
//! step is sent, it meets that statement; set while a step waits on the
//! server, it meets the answer.
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::postgres::ConnInfo as Config;
use anyhow::Result;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinSet;
use tokio_postgres::config::Host;

use crate::i18n::Context;

/// What lab does to one connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    BlackHole,
    Reset,
    Close,
    Delay(Duration),
}

/// One proxied connection: its application_name, its fault, and the local
/// port of the proxy's connection to the server (what the server sees as its client).
struct Link {
    app: String,
    fault: watch::Sender<Option<Fault>>,
    upstream_port: u16,
}

/// The proxy: a loopback port whose connections go on to the server.
pub struct Proxy {
    pub addr: SocketAddr,
    links: Arc<Mutex<Vec<Link>>>,
    /// The application_name of connections whose startup packet TLS hides.
    encrypted_as: Arc<Mutex<String>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl Proxy {
    /// A proxy in front of `server` (its first TCP host and port).
    pub async fn start(server: &Config) -> Result<Proxy> {
        let host = match server.get_hosts().first() {
            Some(Host::Tcp(h)) => h.clone(),
            _ => anyhow::bail!(msg::tcp_only()),
        };
        let port = server.get_ports().first().copied().unwrap_or(5432);
        let upstream = format!("{host}:{port}");
        let listener = TcpListener::bind("127.0.0.1:0").await.ctx(msg::listen)?;
        let addr = listener.local_addr().ctx(msg::listen)?;
        let links: Arc<Mutex<Vec<Link>>> = Arc::default();
        let (stop, mut stopped) = tokio::sync::oneshot::channel();
        let registry = links.clone();
        let encrypted_as: Arc<Mutex<String>> = Arc::default();
        let named = encrypted_as.clone();
        let task = tokio::spawn(async move {
            let mut conns = JoinSet::new();
            loop {
                tokio::select! {
                    _ = &mut stopped => break,
                    accepted = listener.accept() => {
                        let Ok((client, _)) = accepted else { continue };
                        let (upstream, registry, named) = (upstream.clone(), registry.clone(), named.clone());
                        conns.spawn(async move { let _ = relay(client, &upstream, &registry, &named).await; });
                    }
                    Some(_) = conns.join_next(), if !conns.is_empty() => {}
                }
            }
            conns.shutdown().await;
        });
        Ok(Proxy {
            addr,
            links,
            encrypted_as,
            stop: Some(stop),
            task: Some(task),
        })
    }

    /// The application_name of the connections to come whose startup
    /// packet is encrypted (TLS): the proxy cannot read it, lab says it.
    pub fn name_encrypted(&self, app: &str) {
        *self.encrypted_as.lock().unwrap() = app.to_string();
    }

    /// `base`'s user, password, database, options and TLS, reaching the
    /// server through the proxy (a byte relay: TLS goes end to end, the
    /// certificate checked against the server's host name).
    pub fn config(&self, base: &Config) -> Config {
        base.through(self.addr.ip(), self.addr.port())
    }

    /// Puts `fault` on every connection whose application_name is `app`
    /// (as the server stores it); how many there were.
    pub fn set(&self, app: &str, fault: Fault) -> usize {
        let app = super::connect::app_name(app);
        let links = self.links.lock().unwrap();
        let mut n = 0;
        for l in links.iter().filter(|l| l.app == app) {
            let _ = l.fault.send(Some(fault));
            n += 1;
        }
        n
    }

    /// The ports the server sees the proxy's connections for `app` come from.
    pub fn upstream_ports(&self, app: &str) -> Vec<u16> {
        let app = super::connect::app_name(app);
        let links = self.links.lock().unwrap();
        links.iter().filter(|l| l.app == app).map(|l| l.upstream_port).collect()
    }

    /// Stops accepting and ends every connection.
    pub async fn stop(mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.task.take() {
            let _ = t.await;
        }
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        if let Some(t) = &self.task {
            t.abort();
        }
    }
}

/// One client connection: its startup packet read (for its
/// application_name), then both directions forwarded under its fault.
async fn relay(
    mut client: TcpStream,
    upstream: &str,
    registry: &Mutex<Vec<Link>>,
    encrypted_as: &Mutex<String>,
) -> Result<()> {
    let mut server = TcpStream::connect(upstream).await?;
    client.set_nodelay(true)?;
    server.set_nodelay(true)?;
    let (startup, app) = read_startup(&mut client, &mut server).await?;
    server.write_all(&startup).await?;
    let app = app.unwrap_or_else(|| encrypted_as.lock().unwrap().clone());
    let (tx, rx) = watch::channel(None);
    let upstream_port = server.local_addr()?.port();
    registry.lock().unwrap().push(Link {
        app: app.clone(),
        fault: tx,
        upstream_port,
    });
    let r = forward(client, server, rx).await;
    registry
        .lock()
        .unwrap()
        .retain(|l| l.app != app || !l.fault.is_closed());
    r
}

/// The client's startup packet (after an SSLRequest, answered as the server
/// answers it), and the application_name in it; where the client goes on
/// in TLS (the server said S, or direct negotiation), the bytes read so far
/// and no name.
async fn read_startup(client: &mut TcpStream, server: &mut TcpStream) -> Result<(Vec<u8>, Option<String>)> {
    loop {
        let mut len = [0u8; 4];
        client.read_exact(&mut len).await?;
        // A TLS handshake record (direct negotiation): no packet of ours.
        if len[0] == 0x16 {
            return Ok((len.to_vec(), None));
        }
        let n = u32::from_be_bytes(len) as usize;
        anyhow::ensure!((8..=10_000).contains(&n), "startup packet of {n} bytes");
        let mut body = vec![0u8; n - 4];
        client.read_exact(&mut body).await?;
        let code = u32::from_be_bytes([body[0], body[1], body[2], body[3]]);
        if code == 80877103 || code == 80877104 {
            // SSLRequest or GSSENCRequest: the server says N (or S); pass it on.
            server.write_all(&len).await?;
            server.write_all(&body).await?;
            let mut answer = [0u8; 1];
            server.read_exact(&mut answer).await?;
            client.write_all(&answer).await?;
            if answer[0] == b'S' && code == 80877103 {
                return Ok((Vec::new(), None));
            }
            continue;
        }
        let mut packet = len.to_vec();
        packet.extend_from_slice(&body);
        return Ok((packet, Some(application_name(&body[4..]))));
    }
}

/// application_name from a startup packet's `key\0value\0` pairs.
fn application_name(pairs: &[u8]) -> String {
    let mut parts = pairs.split(|b| *b == 0);
    while let (Some(k), Some(v)) = (parts.next(), parts.next()) {
        if k == b"application_name" {
            return String::from_utf8_lossy(v).into_owned();
        }
        if k.is_empty() {
            break;
        }
    }
    String::new()
}

/// Forwards both ways until either side ends, under the connection's fault.
async fn forward(client: TcpStream, server: TcpStream, fault: watch::Receiver<Option<Fault>>) -> Result<()> {
    let (cfd, sfd) = (client.as_raw_fd(), server.as_raw_fd());
    let (cr, cw) = client.into_split();
    let (sr, sw) = server.into_split();
    let up = pump(cr, sw, fault.clone());
    let down = pump(sr, cw, fault.clone());
    let mut watch_fault = fault;
    tokio::select! {
        r = up => r,
        r = down => r,
        r = applied(&mut watch_fault, cfd, sfd) => r,
    }
}

/// Waits for a fault that acts on the sockets themselves: a black hole
/// (both sockets stop answering, and this task keeps them open, silent,
/// until the proxy stops), a reset or a close (both ended now).
async fn applied(fault: &mut watch::Receiver<Option<Fault>>, client: i32, server: i32) -> Result<()> {
    loop {
        if fault.changed().await.is_err() {
            std::future::pending::<()>().await;
        }
        let now = *fault.borrow();
        match now {
            Some(Fault::BlackHole) => {
                drop_everything(client)?;
                drop_everything(server)?;
                // The pumps see nothing more; the sockets stay open and mute.
                std::future::pending::<()>().await;
            }
            Some(Fault::Reset) => {
                linger_zero(client)?;
                linger_zero(server)?;
                return Ok(());
            }
            Some(Fault::Close) => return Ok(()),
            _ => {}
        }
    }
}

/// Copies one direction, each chunk after the connection's delay if it has
/// one; under a black hole nothing more passes.
async fn pump(
    mut from: impl AsyncRead + Unpin,
    mut to: impl AsyncWrite + Unpin,
    fault: watch::Receiver<Option<Fault>>,
) -> Result<()> {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = from.read(&mut buf).await?;
        if n == 0 {
            return Ok(());
        }
        let now = *fault.borrow();
        match now {
            Some(Fault::BlackHole) => continue,
            Some(Fault::Delay(d)) => tokio::time::sleep(d).await,
            _ => {}
        }
        to.write_all(&buf[..n]).await?;
    }
}

/// A socket filter that drops every packet before TCP sees it: the kernel
/// then acknowledges nothing on this socket, as if its host were gone.
fn drop_everything(fd: i32) -> Result<()> {
    let mut drop_all = [libc::sock_filter {
        code: (libc::BPF_RET | libc::BPF_K) as u16,
        jt: 0,
        jf: 0,
        k: 0,
    }];
    let prog = libc::sock_fprog {
        len: 1,
        filter: drop_all.as_mut_ptr(),
    };
    // The kernel copies the program: it need not outlive the call.
    set_option(fd, libc::SO_ATTACH_FILTER, &prog)
}

/// SO_LINGER 0: closing sends RST instead of FIN.
fn linger_zero(fd: i32) -> Result<()> {
    let l = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    set_option(fd, libc::SO_LINGER, &l)
}

/// A SOL_SOCKET option on a socket this task owns.
fn set_option<T>(fd: i32, name: libc::c_int, value: &T) -> Result<()> {
    // SAFETY: `value` is a live `T` of the size given, which is what option `name` reads.
    let r = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            name,
            value as *const T as *const libc::c_void,
            std::mem::size_of::<T>() as libc::socklen_t,
        )
    };
    if r != 0 {
        return Err(std::io::Error::last_os_error()).ctx(msg::filter);
    }
    Ok(())
}

pub mod msg {
    crate::messages! {
        prefix "fp";
        tcp_only() {
            en: "the fault proxy needs the server's TCP address (not a Unix socket)",
            tr: "hata proxy'si sunucunun TCP adresini ister (Unix soketi değil)",
        }
        listen() {
            en: "the fault proxy could not listen on a loopback port",
            tr: "hata proxy'si bir loopback portunu dinleyemedi",
        }
        filter() {
            en: "the fault proxy could not set its sockets' options",
            tr: "hata proxy'si soketlerinin seçeneklerini ayarlayamadı",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_application_name_is_read_from_the_startup_packet() {
        let pairs = b"user\0postgres\0application_name\0lab:x:lost-client/black-hole:A\0database\0postgres\0\0";
        assert_eq!(application_name(pairs), "lab:x:lost-client/black-hole:A");
        assert_eq!(application_name(b"user\0postgres\0\0"), "");
    }
}
