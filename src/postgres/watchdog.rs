//! A deadline on lab's own connections (the control connection, `lab
//! locks`): a request the server leaves unanswered for too long ends the
//! connection instead of waiting for ever.
//!
//! A session may wait as long as a lock is held, and has deadlines of its
//! own; lab's control connection only asks questions the server answers at
//! once (who blocks whom, a catalogue read, lab's DDL). When the network or
//! the server stops answering it, the kernel may never notice: a silent
//! peer behind a proxy or a pooler that still acknowledges every packet
//! looks like a slow query, and TCP keepalive probes only an idle socket.
//! So the stream counts the protocol's requests and answers: each simple
//! Query and each Sync (and the startup packet) is answered by one
//! ReadyForQuery. While a request is outstanding, any byte from the server
//! restarts the clock (a long answer in several parts is progress); when it
//! runs out, the next read fails and the connection ends with it, and every
//! request on it fails at once.
//!
//! The count holds for what lab's own connections send: simple and
//! extended queries, COPY in the simple protocol, Terminate. An extended
//! `COPY FROM STDIN` (tokio-postgres's `copy_in`) would not do: the server
//! answers no Sync sent while the copy is open, so one request would stay
//! outstanding for ever. A watched connection must not use it.
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

/// How long lab's control connection may leave a request unanswered:
/// twice the run's wait deadline, at least 10 s (a catalogue read on a
/// loaded server) and at most 2 minutes (a presenter's step mode raises
/// the waits to an hour; the control connection never waits for them).
pub fn control_silence(wait_timeout: Duration) -> Duration {
    (wait_timeout * 2).clamp(Duration::from_secs(10), Duration::from_secs(120))
}

/// Splits one direction of the protocol into messages: each is a type
/// byte and a length (which counts itself) then its body; the client's
/// first message, the startup packet, has no type byte.
#[derive(Debug)]
struct Framer {
    typed: bool,
    head: [u8; 5],
    got: usize,
    skip: usize,
}

impl Framer {
    fn new(typed: bool) -> Framer {
        Framer {
            typed,
            head: [0; 5],
            got: 0,
            skip: 0,
        }
    }

    /// Reads `bytes`, calling `on` with each message's type (0 for the
    /// startup packet) as its header completes.
    fn feed(&mut self, mut bytes: &[u8], mut on: impl FnMut(u8)) {
        while !bytes.is_empty() {
            if self.skip > 0 {
                let n = self.skip.min(bytes.len());
                self.skip -= n;
                bytes = &bytes[n..];
                continue;
            }
            let need = if self.typed { 5 } else { 4 };
            let n = (need - self.got).min(bytes.len());
            self.head[self.got..self.got + n].copy_from_slice(&bytes[..n]);
            self.got += n;
            bytes = &bytes[n..];
            if self.got == need {
                let (kind, len) = if self.typed {
                    (self.head[0], &self.head[1..5])
                } else {
                    (0, &self.head[0..4])
                };
                let len = u32::from_be_bytes([len[0], len[1], len[2], len[3]]) as usize;
                self.skip = len.saturating_sub(4);
                self.got = 0;
                self.typed = true;
                on(kind);
            }
        }
    }
}

/// A stream to the server whose reads fail once a request has gone
/// unanswered for `limit` (see the module's documentation).
pub struct Watched<S> {
    inner: S,
    limit: Duration,
    /// Where the connection goes, for the message.
    place: String,
    sent: Framer,
    received: Framer,
    /// Requests sent whose ReadyForQuery has not come.
    outstanding: usize,
    clock: Pin<Box<Sleep>>,
}

impl<S> Watched<S> {
    pub fn new(inner: S, limit: Duration, place: String) -> Watched<S> {
        Watched {
            inner,
            limit,
            place,
            sent: Framer::new(false),
            received: Framer::new(true),
            outstanding: 0,
            clock: Box::pin(tokio::time::sleep(limit)),
        }
    }

    fn restart(&mut self) {
        let at = Instant::now() + self.limit;
        self.clock.as_mut().reset(at);
    }

    /// Ready with the error once the clock has run out on an outstanding
    /// request; otherwise it wakes this task when it does.
    fn check(&mut self, cx: &mut Context<'_>) -> Poll<io::Error> {
        if self.outstanding == 0 || self.clock.as_mut().poll(cx).is_pending() {
            return Poll::Pending;
        }
        let why = msg::silent(self.place.clone(), self.limit.as_secs_f64());
        crate::i18n::closed_because(why.clone());
        Poll::Ready(io::Error::new(io::ErrorKind::TimedOut, why.to_string()))
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Watched<S> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        let before = buf.filled().len();
        match Pin::new(&mut this.inner).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                let new = &buf.filled()[before..];
                if !new.is_empty() {
                    let mut answered = 0;
                    this.received.feed(new, |kind| answered += usize::from(kind == b'Z'));
                    this.outstanding = this.outstanding.saturating_sub(answered);
                    this.restart();
                }
                Poll::Ready(Ok(()))
            }
            Poll::Pending => this.check(cx).map(Err),
            other => other,
        }
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Watched<S> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, bytes: &[u8]) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        let r = Pin::new(&mut this.inner).poll_write(cx, bytes);
        if let Poll::Ready(Ok(n)) = r {
            let mut asked = 0;
            this.sent.feed(&bytes[..n], |kind| {
                asked += usize::from(matches!(kind, 0 | b'Q' | b'S'))
            });
            if asked > 0 {
                if this.outstanding == 0 {
                    this.restart();
                }
                this.outstanding += asked;
                // The reads may be parked already: this task must wake when
                // the clock runs out even if the server never writes again.
                let _ = this.check(cx);
            }
        }
        r
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

pub mod msg {
    crate::messages! {
        prefix "wd";
        silent(place, s) {
            en: "lab's control connection to {place} got no answer for {s} s (the server or the network stopped answering)",
            tr: "lab'ın {place} adresine kontrol bağlantısı {s} sn boyunca cevap alamadı (sunucu ya da ağ cevap vermez oldu)",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    fn kinds(framer: &mut Framer, chunks: &[&[u8]]) -> Vec<u8> {
        let mut seen = Vec::new();
        for c in chunks {
            framer.feed(c, |k| seen.push(k));
        }
        seen
    }

    /// A typed message: its type, a length counting itself, the body.
    fn message(kind: u8, body: &[u8]) -> Vec<u8> {
        let mut m = vec![kind];
        m.extend_from_slice(&(body.len() as u32 + 4).to_be_bytes());
        m.extend_from_slice(body);
        m
    }

    #[test]
    fn the_startup_packet_has_no_type_byte_and_later_messages_do() {
        let mut f = Framer::new(false);
        let mut startup = 12u32.to_be_bytes().to_vec();
        startup.extend_from_slice(&[0, 3, 0, 0, 0, 0, 0, 0]);
        let q = message(b'Q', b"SELECT 1\0");
        let mut all = startup.clone();
        all.extend_from_slice(&q);
        assert_eq!(kinds(&mut f, &[&all]), vec![0, b'Q']);
    }

    #[test]
    fn messages_split_anywhere_are_counted_once() {
        let mut stream = message(b'T', b"row description");
        stream.extend(message(b'D', b"a row"));
        stream.extend(message(b'C', b"SELECT 1\0"));
        stream.extend(message(b'Z', b"I"));
        for cut in 0..stream.len() {
            let mut f = Framer::new(true);
            let (a, b) = stream.split_at(cut);
            assert_eq!(kinds(&mut f, &[a, b]), vec![b'T', b'D', b'C', b'Z'], "cut at {cut}");
        }
        // A byte at a time.
        let mut f = Framer::new(true);
        let bytes: Vec<&[u8]> = stream.chunks(1).collect();
        assert_eq!(kinds(&mut f, &bytes), vec![b'T', b'D', b'C', b'Z']);
    }

    #[test]
    fn the_limit_is_twice_the_wait_within_bounds() {
        assert_eq!(control_silence(Duration::from_secs(3)), Duration::from_secs(10));
        assert_eq!(control_silence(Duration::from_secs(10)), Duration::from_secs(20));
        assert_eq!(control_silence(Duration::from_secs(3600)), Duration::from_secs(120));
    }

    /// A startup packet and a query written through the watchdog, read
    /// until both are answered; the server (the other end of a pipe, which
    /// never closes) sends each message of `script` after its delay.
    async fn ask(script: Vec<(u64, Vec<u8>)>) -> io::Result<usize> {
        let (client, mut server) = tokio::io::duplex(1024);
        tokio::spawn(async move {
            for (delay, bytes) in script {
                tokio::time::sleep(Duration::from_secs(delay)).await;
                server.write_all(&bytes).await.unwrap();
            }
            std::future::pending::<()>().await;
        });
        let mut w = Watched::new(client, Duration::from_secs(10), "test".into());
        let mut startup = 8u32.to_be_bytes().to_vec();
        startup.extend_from_slice(&[0, 3, 0, 0]);
        w.write_all(&startup).await?;
        w.write_all(&message(b'Q', b"SELECT 1\0")).await?;
        let mut got = vec![0; 64];
        let mut total = 0;
        while w.outstanding > 0 {
            total += w.read(&mut got).await?;
        }
        Ok(total)
    }

    #[tokio::test(start_paused = true)]
    async fn an_unanswered_request_fails_after_the_limit() {
        let started = Instant::now();
        // The startup is answered at 3 s, the query never.
        let e = ask(vec![(3, message(b'Z', b"I"))]).await.unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::TimedOut);
        assert_eq!(started.elapsed(), Duration::from_secs(13));
        let line = crate::i18n::error_line(&anyhow::Error::new(e), crate::i18n::Lang::En);
        assert!(line.contains("got no answer for 10 s"), "{line}");
    }

    #[tokio::test(start_paused = true)]
    async fn answers_end_the_watch_and_progress_restarts_it() {
        let started = Instant::now();
        // Startup answered at 9 s, the query's row at 18 s, its end at 27 s:
        // never 10 s of silence.
        let script = vec![
            (9, message(b'Z', b"I")),
            (9, message(b'D', b"row")),
            (9, message(b'Z', b"I")),
        ];
        assert_eq!(ask(script).await.unwrap(), 6 + 8 + 6);
        assert_eq!(started.elapsed(), Duration::from_secs(27));
    }
}
