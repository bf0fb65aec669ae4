//! libpq's require_auth: which authentication requests the server may make.
//! tokio-postgres answers whatever the server asks for and does not say
//! what that was, so lab reads the server's Authentication messages
//! itself, on the stream tokio-postgres reads (after TLS), and fails the
//! read that brings a request the setting does not allow, before
//! tokio-postgres can answer it (no password leaves for a server that was
//! not allowed to ask for one). The parsing is pure; [`Guard`] is the stream.
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use crate::i18n::Text;

/// The authentication request codes libpq names (AuthenticationXxx's Int32).
const OK: u32 = 0;
const PASSWORD: u32 = 3;
const MD5: u32 = 5;
const GSS: u32 = 7;
const GSS_CONT: u32 = 8;
const SSPI: u32 = 9;
const SASL: u32 = 10;
const SASL_CONT: u32 = 11;
const SASL_FIN: u32 = 12;
/// Not a request code: `oauth`, a SASL mechanism lab has not, tracked for
/// duplicates only (the SASL requests are SCRAM's for lab).
const OAUTH_MARK: u32 = 31;

/// require_auth as libpq reads it (PostgreSQL 16 and later).
#[derive(Clone, Debug, PartialEq)]
pub struct RequireAuth {
    /// The value as given, for messages.
    pub value: String,
    /// Where it came from ("require_auth in --database-url", "PGREQUIREAUTH=...").
    pub origin: String,
    /// One bit per request code the server may send.
    allowed: u32,
    /// An AuthenticationOk with no exchange finished before it (trust) is
    /// refused: a list without `none`, or a negated list with `!none`.
    required: bool,
}

impl RequireAuth {
    /// Parses a value as libpq does: None when empty; the error in libpq's words.
    pub fn parse(value: &str, origin: &str) -> Result<Option<RequireAuth>, Text> {
        if value.is_empty() {
            return Ok(None);
        }
        let mut allowed: u32 = 0;
        let mut required = true;
        let mut negated = false;
        for (i, part) in value.split(',').enumerate() {
            let part = part.trim();
            let method = match part.strip_prefix('!') {
                Some(m) => {
                    if i == 0 {
                        // A permissive set, subtracted from.
                        required = false;
                        allowed = u32::MAX;
                        negated = true;
                    } else if !negated {
                        return Err(msg::negative_mixed(part));
                    }
                    m
                }
                None if negated => return Err(msg::positive_mixed(part)),
                None => part,
            };
            let bits: u32 = match method {
                "password" => 1 << PASSWORD,
                "md5" => 1 << MD5,
                "gss" => (1 << GSS) | (1 << GSS_CONT),
                "sspi" => (1 << SSPI) | (1 << GSS_CONT),
                "scram-sha-256" => (1 << SASL) | (1 << SASL_CONT) | (1 << SASL_FIN),
                "oauth" => 1 << OAUTH_MARK,
                "none" => {
                    // Whether an unauthenticated connection is allowed.
                    if required == negated {
                        return Err(msg::twice(part));
                    }
                    required = negated;
                    continue;
                }
                _ => return Err(msg::invalid(origin, method)),
            };
            if negated {
                if allowed & bits == 0 {
                    return Err(msg::twice(part));
                }
                allowed &= !bits;
            } else {
                if allowed & bits == bits {
                    return Err(msg::twice(part));
                }
                allowed |= bits;
            }
        }
        Ok(Some(RequireAuth {
            value: value.to_string(),
            origin: origin.to_string(),
            allowed,
            required,
        }))
    }

    /// Whether the server may send this request, given whether an exchange
    /// was finished before it (libpq's check_expected_areq): why not, if not.
    fn check(&self, code: u32, finished: bool) -> Result<(), Text> {
        let ok = match code {
            OK => !self.required || finished,
            PASSWORD | MD5 | GSS | GSS_CONT | SSPI | SASL | SASL_CONT | SASL_FIN => self.allowed & (1 << code) != 0,
            _ => false,
        };
        if ok {
            return Ok(());
        }
        let reason = match code {
            OK => msg::not_completed(),
            PASSWORD => msg::cleartext(),
            MD5 => msg::hashed(),
            GSS | GSS_CONT => msg::gssapi(),
            SSPI => msg::sspi(),
            SASL | SASL_CONT | SASL_FIN => msg::sasl(),
            _ => msg::unknown(),
        };
        Err(msg::failed(&self.value, &self.origin, reason))
    }
}

/// Whether an error is a require_auth refusal (then no other host or
/// sslmode attempt is made: libpq gives up too).
pub fn is_refusal(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<Text>().is_some_and(|t| t.key() == "auth.failed")
            || c.downcast_ref::<crate::i18n::Framed>()
                .is_some_and(|f| f.text.key() == "auth.failed")
    })
}

/// The refusal, as the error of the read that brought the request.
pub fn refusal_of(e: &(dyn std::error::Error + 'static)) -> Option<Text> {
    let mut cur = Some(e);
    while let Some(e) = cur {
        if let Some(t) = e
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
            .and_then(|i| i.downcast_ref::<Text>())
            .filter(|t| t.key() == "auth.failed")
        {
            return Some(t.clone());
        }
        cur = e.source();
    }
    None
}

/// Where the reading is in the server's message stream.
#[derive(Debug)]
enum Parse {
    /// The type byte and the length: `n` of 5 bytes read.
    Header { head: [u8; 5], n: usize },
    /// A message's body: `left` bytes of it to come; the first four of an
    /// Authentication message are its code.
    Body {
        auth: bool,
        left: usize,
        code: [u8; 4],
        n: usize,
    },
    /// Authentication is over (or the stream is not the protocol lab
    /// knows): nothing more is read.
    Done,
}

/// The server's messages in, each Authentication request checked against
/// require_auth until the server says AuthenticationOk.
#[derive(Debug)]
pub struct Watch {
    rule: Arc<RequireAuth>,
    parse: Parse,
    finished: bool,
}

impl Watch {
    pub fn new(rule: Arc<RequireAuth>) -> Watch {
        Watch {
            rule,
            parse: Parse::Header { head: [0; 5], n: 0 },
            finished: false,
        }
    }

    /// Reads bytes as the server sent them: the refusal, if a request in them is not allowed.
    pub fn feed(&mut self, mut bytes: &[u8]) -> Result<(), Text> {
        while !bytes.is_empty() {
            match &mut self.parse {
                Parse::Done => return Ok(()),
                Parse::Header { head, n } => {
                    head[*n] = bytes[0];
                    *n += 1;
                    bytes = &bytes[1..];
                    if *n == 5 {
                        let len = u32::from_be_bytes([head[1], head[2], head[3], head[4]]) as usize;
                        self.parse = match len.checked_sub(4) {
                            None => Parse::Done,
                            Some(0) if head[0] == b'R' => Parse::Done,
                            Some(0) => Parse::Header { head: [0; 5], n: 0 },
                            Some(left) => Parse::Body {
                                auth: head[0] == b'R',
                                left,
                                code: [0; 4],
                                n: 0,
                            },
                        };
                    }
                }
                Parse::Body { auth, left, code, n } => {
                    if *auth && *n < 4 {
                        code[*n] = bytes[0];
                        *n += 1;
                        *left -= 1;
                        bytes = &bytes[1..];
                        if *n == 4 {
                            // The code is complete: checked before any of it is handed on.
                            let (c, rest) = (u32::from_be_bytes(*code), *left);
                            *auth = false;
                            self.rule.check(c, self.finished)?;
                            if matches!(c, PASSWORD | MD5 | SASL_FIN) {
                                self.finished = true;
                            }
                            if c == OK {
                                self.parse = Parse::Done;
                            } else if rest == 0 {
                                self.parse = Parse::Header { head: [0; 5], n: 0 };
                            }
                        } else if *left == 0 {
                            // Shorter than its code: not a message lab knows.
                            self.parse = Parse::Done;
                        }
                        continue;
                    }
                    let take = (*left).min(bytes.len());
                    *left -= take;
                    bytes = &bytes[take..];
                    if *left == 0 {
                        self.parse = Parse::Header { head: [0; 5], n: 0 };
                    }
                }
            }
        }
        Ok(())
    }
}

/// A stream whose reads go through a [`Watch`].
pub struct Guard<S> {
    inner: S,
    watch: Watch,
}

impl<S> Guard<S> {
    pub fn new(inner: S, rule: Arc<RequireAuth>) -> Guard<S> {
        Guard {
            inner,
            watch: Watch::new(rule),
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Guard<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => match this.watch.feed(&buf.filled()[before..]) {
                Ok(()) => Poll::Ready(Ok(())),
                Err(refused) => {
                    // The request is never handed on.
                    buf.set_filled(before);
                    Poll::Ready(Err(std::io::Error::other(refused)))
                }
            },
            other => other,
        }
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Guard<S> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

mod msg {
    crate::messages! {
        prefix "auth";
        failed(value, origin, reason) {
            en: "authentication method requirement \"{value}\" ({origin}) failed: {reason}",
            tr: "kimlik doğrulama yöntemi gereksinimi \"{value}\" ({origin}) karşılanmadı: {reason}",
        }
        not_completed() {
            en: "server did not complete authentication",
            tr: "sunucu kimlik doğrulamayı tamamlamadı",
        }
        cleartext() {
            en: "server requested a cleartext password",
            tr: "sunucu açık metin bir parola istedi",
        }
        hashed() {
            en: "server requested a hashed password",
            tr: "sunucu özetlenmiş (hash) bir parola istedi",
        }
        gssapi() {
            en: "server requested GSSAPI authentication",
            tr: "sunucu GSSAPI kimlik doğrulaması istedi",
        }
        sspi() {
            en: "server requested SSPI authentication",
            tr: "sunucu SSPI kimlik doğrulaması istedi",
        }
        sasl() {
            en: "server requested SASL authentication",
            tr: "sunucu SASL kimlik doğrulaması istedi",
        }
        unknown() {
            en: "server requested an unknown authentication type",
            tr: "sunucu bilinmeyen bir kimlik doğrulama türü istedi",
        }
        invalid(origin, method) {
            en: "{origin}: invalid require_auth value: \"{method}\"",
            tr: "{origin}: geçersiz require_auth değeri: \"{method}\"",
        }
        negative_mixed(method) {
            en: "negative require_auth method \"{method}\" cannot be mixed with non-negative methods",
            tr: "olumsuzlanmış require_auth yöntemi \"{method}\" olumsuzlanmamış yöntemlerle karıştırılamaz",
        }
        positive_mixed(method) {
            en: "require_auth method \"{method}\" cannot be mixed with negative methods",
            tr: "require_auth yöntemi \"{method}\" olumsuzlanmış yöntemlerle karıştırılamaz",
        }
        twice(method) {
            en: "require_auth method \"{method}\" is specified more than once",
            tr: "require_auth yöntemi \"{method}\" birden fazla kez verilmiş",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::i18n::Lang;

    fn rule(v: &str) -> Arc<RequireAuth> {
        Arc::new(RequireAuth::parse(v, "require_auth").unwrap().unwrap())
    }

    fn error(v: &str) -> String {
        RequireAuth::parse(v, "require_auth in --database-url")
            .unwrap_err()
            .render(Lang::En)
    }

    /// An Authentication message with this code (and a body after it).
    fn request(code: u32, body: &[u8]) -> Vec<u8> {
        let mut m = vec![b'R'];
        m.extend((8 + body.len() as u32).to_be_bytes());
        m.extend(code.to_be_bytes());
        m.extend(body);
        m
    }

    /// What the server's messages meet, fed one byte at a time and all at once.
    fn verdict<M: AsRef<[u8]>>(v: &str, messages: &[M]) -> Result<(), String> {
        let bytes: Vec<u8> = messages.iter().flat_map(|m| m.as_ref().iter().copied()).collect();
        let mut whole = Watch::new(rule(v));
        let a = whole.feed(&bytes).map_err(|t| t.render(Lang::En));
        let mut bytewise = Watch::new(rule(v));
        let b = bytes
            .iter()
            .try_for_each(|b| bytewise.feed(std::slice::from_ref(b)))
            .map_err(|t| t.render(Lang::En));
        assert_eq!(a, b, "{v}");
        a
    }

    #[test]
    fn values_are_read_as_libpq_reads_them() {
        assert_eq!(RequireAuth::parse("", "x").unwrap(), None);
        assert_eq!(
            error("foo"),
            "require_auth in --database-url: invalid require_auth value: \"foo\""
        );
        assert_eq!(
            error("!password,md5"),
            "require_auth method \"md5\" cannot be mixed with negative methods"
        );
        assert_eq!(
            error("md5,!password"),
            "negative require_auth method \"!password\" cannot be mixed with non-negative methods"
        );
        assert_eq!(
            error("md5,md5"),
            "require_auth method \"md5\" is specified more than once"
        );
        assert_eq!(
            error("none,none"),
            "require_auth method \"none\" is specified more than once"
        );
        assert_eq!(
            error("!none,!none"),
            "require_auth method \"!none\" is specified more than once"
        );
        assert_eq!(
            error("!md5,!md5"),
            "require_auth method \"!md5\" is specified more than once"
        );
        for ok in [
            "md5,scram-sha-256",
            "!password,!md5",
            "none",
            "!none",
            "gss,sspi",
            "scram-sha-256,none,oauth",
        ] {
            assert!(RequireAuth::parse(ok, "x").is_ok(), "{ok}");
        }
    }

    #[test]
    fn each_request_is_allowed_or_refused_before_it_is_answered() {
        let ok = request(OK, b"");
        let md5 = request(MD5, b"salt");
        let clear = request(PASSWORD, b"");
        let sasl = request(SASL, b"SCRAM-SHA-256\0\0");
        let sasl_cont = request(SASL_CONT, b"r=abc");
        let sasl_fin = request(SASL_FIN, b"v=xyz");
        let ready = vec![b'Z', 0, 0, 0, 5, b'I'];
        let scram = [&sasl, &sasl_cont, &sasl_fin, &ok, &ready];
        // A list without none: trust (Ok with no exchange) is refused.
        assert_eq!(
            verdict("scram-sha-256", &[&ok, &ready]),
            Err("authentication method requirement \"scram-sha-256\" (require_auth) failed: server did not complete authentication".into())
        );
        assert_eq!(verdict("none", &[&ok, &ready]), Ok(()));
        assert_eq!(
            verdict("scram-sha-256", &[&md5]),
            Err("authentication method requirement \"scram-sha-256\" (require_auth) failed: server requested a hashed password".into())
        );
        assert_eq!(verdict("md5,scram-sha-256", &scram), Ok(()));
        assert_eq!(verdict("md5", &[&md5, &ok, &ready]), Ok(()));
        assert!(
            verdict("!password", &[&clear])
                .unwrap_err()
                .ends_with("server requested a cleartext password")
        );
        assert_eq!(verdict("!password", &[&ok]), Ok(()));
        assert_eq!(verdict("!password,!md5", &scram), Ok(()));
        assert!(
            verdict("!scram-sha-256", &scram)
                .unwrap_err()
                .ends_with("server requested SASL authentication")
        );
        assert!(
            verdict("!none", &[&ok])
                .unwrap_err()
                .ends_with("server did not complete authentication")
        );
        assert!(
            verdict("none", &[&md5])
                .unwrap_err()
                .ends_with("server requested a hashed password")
        );
        // SCRAM ended early (Ok before the server's final message) is not a finished exchange.
        assert!(
            verdict("scram-sha-256", &[&sasl, &sasl_cont, &ok])
                .unwrap_err()
                .ends_with("server did not complete authentication")
        );
        // After Ok nothing is read: what follows may look like anything.
        assert_eq!(verdict("md5", &[&md5, &ok, &clear]), Ok(()));
    }
}
