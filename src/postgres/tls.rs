//! TLS as libpq's sslmode says, through rustls: which attempts a connection
//! makes (allow, prefer), what is verified (nothing, the chain, the chain
//! and the host name; `require` verifies the chain when a root file is
//! there, as libpq does), the client certificate, the revocation list, SNI,
//! ALPN `postgresql` and direct negotiation; and what the handshake gave
//! (version, cipher, the server's certificate) for the run's header and JSON.
use std::future::Future;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context as TaskContext, Poll};

use anyhow::{Result, bail};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, CertificateRevocationListDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, SignatureScheme};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// libpq's sslmode, weakest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum SslMode {
    Disable,
    Allow,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl SslMode {
    pub fn name(self) -> &'static str {
        match self {
            SslMode::Disable => "disable",
            SslMode::Allow => "allow",
            SslMode::Prefer => "prefer",
            SslMode::Require => "require",
            SslMode::VerifyCa => "verify-ca",
            SslMode::VerifyFull => "verify-full",
        }
    }

    fn parse(s: &str) -> Option<SslMode> {
        [
            SslMode::Disable,
            SslMode::Allow,
            SslMode::Prefer,
            SslMode::Require,
            SslMode::VerifyCa,
            SslMode::VerifyFull,
        ]
        .into_iter()
        .find(|m| m.name() == s)
    }
}

/// What is checked of the server's certificate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Check {
    /// Nothing (sslmode=require, prefer, allow without a root file).
    Nothing,
    /// The chain to a root (verify-ca; require with a root file).
    Chain,
    /// The chain and the host name (verify-full).
    Full,
}

/// A connection's settings as TLS reads them (conninfo's, each with where it came from).
pub trait Keys {
    /// The setting, as given (possibly empty).
    fn get(&self, key: &str) -> Option<&str>;
    /// Where `key` came from, as a message names it.
    fn origin(&self, key: &str) -> String;
}

/// A connection's TLS settings, read and ready.
pub struct Settings {
    pub mode: SslMode,
    /// Where sslmode came from, as messages name it.
    pub mode_origin: String,
    pub check: Check,
    /// sslnegotiation=direct: TLS from the first byte (PostgreSQL 17+).
    pub direct: bool,
    /// The root certificate file the chain is checked against (none: no
    /// file, or sslrootcert=system): what a sidecar of lab's in front of the
    /// server checks it with too.
    pub root_file: Option<PathBuf>,
    /// rustls' configuration; None with sslmode=disable.
    client: Option<Arc<rustls::ClientConfig>>,
}

impl std::fmt::Debug for Settings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "sslmode={} check={:?}", self.mode.name(), self.check)
    }
}

impl Settings {
    /// No TLS (lab's own servers without `--tls`).
    pub fn disabled() -> Arc<Settings> {
        Arc::new(Settings {
            mode: SslMode::Disable,
            mode_origin: "sslmode".into(),
            check: Check::Nothing,
            direct: false,
            root_file: None,
            client: None,
        })
    }

    /// verify-full against `root` (lab's own CA, for its servers with `--tls`).
    pub fn verify_full(root: &Path) -> Result<Arc<Settings>> {
        let roots = read_roots(root, "sslrootcert")?;
        Ok(Arc::new(Settings {
            mode: SslMode::VerifyFull,
            mode_origin: "sslmode".into(),
            check: Check::Full,
            direct: false,
            root_file: Some(root.to_path_buf()),
            client: Some(client_config(Check::Full, Some(roots), Vec::new(), None, true, None)?),
        }))
    }

    /// The settings libpq would use for these parameters: sslmode (prefer by
    /// default, verify-full with sslrootcert=system), the root file
    /// (sslrootcert, else ~/.postgresql/root.crt), the client's certificate
    /// and key (sslcert and sslkey, else ~/.postgresql/postgresql.{crt,key}),
    /// sslcrl, sslsni, sslnegotiation, the protocol versions. A file that
    /// is named and cannot be used is an error naming the setting.
    pub fn from_params(params: &impl Keys, env: &dyn Fn(&str) -> Option<String>) -> Result<Arc<Settings>> {
        let value = |k: &str| params.get(k).filter(|v| !v.is_empty());
        let system = value("sslrootcert") == Some("system");
        let mode = match value("sslmode") {
            Some(m) => SslMode::parse(m).ok_or_else(|| msg::bad_value(params.origin("sslmode")))?,
            None if value("requiressl").is_some_and(|v| v.trim() == "1") => SslMode::Require,
            None if system => SslMode::VerifyFull,
            None => SslMode::Prefer,
        };
        let mode_origin = params.origin("sslmode");
        if system && mode != SslMode::VerifyFull {
            bail!(msg::weak_with_system(mode_origin, mode.name()));
        }
        let direct = match value("sslnegotiation") {
            None | Some("postgres") => false,
            Some("direct") => true,
            Some(_) => bail!(msg::bad_value(params.origin("sslnegotiation"))),
        };
        if direct && mode < SslMode::Require {
            bail!(msg::weak_with_direct(mode_origin, mode.name()));
        }
        let sni = match value("sslsni") {
            None | Some("1") => true,
            Some("0") => false,
            Some(_) => bail!(msg::bad_value(params.origin("sslsni"))),
        };
        let versions = protocol_versions(params)?;
        if mode == SslMode::Disable {
            return Ok(Arc::new(Settings {
                mode,
                mode_origin,
                check: Check::Nothing,
                direct,
                root_file: None,
                client: None,
            }));
        }
        let home = env("HOME").map(|h| Path::new(&h).join(".postgresql"));
        let default = |name: &str| home.as_ref().map(|d| d.join(name));
        let (roots, root_file) = root_file(params, mode, system, &default)?;
        if roots.is_none() && mode >= SslMode::VerifyCa {
            let file = default("root.crt").map_or("~/.postgresql/root.crt".into(), |p| p.display().to_string());
            bail!(msg::no_root(mode_origin, mode.name(), file));
        }
        let check = match (mode, &roots) {
            (SslMode::VerifyFull, _) => Check::Full,
            (_, Some(_)) => Check::Chain,
            (_, None) => Check::Nothing,
        };
        // The revocation list: named, or the default one where it exists; used when verifying.
        let crls = match (value("sslcrl"), check) {
            (_, Check::Nothing) => Vec::new(),
            (Some(f), _) => read_crls(Path::new(f), &params.origin("sslcrl"))?,
            (None, _) => match default("root.crl").filter(|p| p.exists()) {
                Some(p) => read_crls(&p, &format!("sslcrl ({})", p.display()))?,
                None => Vec::new(),
            },
        };
        let identity = client_identity(params, &default)?;
        let client = client_config(check, roots, crls, identity, sni, Some(versions))?;
        Ok(Arc::new(Settings {
            mode,
            mode_origin,
            check,
            direct,
            root_file,
            client: Some(client),
        }))
    }

    /// The attempts a connection makes, in order: with TLS or without.
    /// allow: without, then with; prefer: with, then without.
    pub fn attempts(&self) -> &'static [bool] {
        match self.mode {
            SslMode::Disable => &[false],
            SslMode::Allow => &[false, true],
            SslMode::Prefer => &[true, false],
            _ => &[true],
        }
    }

    /// A connector for one host (its name is what verify-full checks and
    /// what SNI sends), recording the handshake in `facts`.
    pub fn connector(&self, host: &str, facts: Arc<Mutex<Option<Facts>>>) -> Option<Connector> {
        let config = self.client.clone()?;
        let name = match host.parse::<IpAddr>() {
            Ok(ip) => ServerName::IpAddress(ip.into()),
            Err(_) => ServerName::try_from(host.to_string()).ok()?,
        };
        Some(Connector {
            config,
            name,
            host: host.to_string(),
            check: self.check,
            facts,
            wrap: None,
        })
    }
}

/// The protocol versions `ssl_min_protocol_version` and
/// `ssl_max_protocol_version` leave (rustls speaks 1.2 and 1.3; libpq's
/// older minimums allow both).
fn protocol_versions(params: &impl Keys) -> Result<Vec<&'static rustls::SupportedProtocolVersion>> {
    let version = |key: &str| -> Result<Option<&'static rustls::SupportedProtocolVersion>> {
        match params.get(key).filter(|v| !v.is_empty()) {
            None | Some("TLSv1") | Some("TLSv1.1") => Ok(None),
            Some("TLSv1.2") => Ok(Some(&rustls::version::TLS12)),
            Some("TLSv1.3") => Ok(Some(&rustls::version::TLS13)),
            Some(_) => bail!(msg::bad_value(params.origin(key))),
        }
    };
    let (min, max) = (
        version("ssl_min_protocol_version")?,
        version("ssl_max_protocol_version")?,
    );
    let is13 =
        |v: Option<&rustls::SupportedProtocolVersion>| v.is_some_and(|v| v.version == rustls::ProtocolVersion::TLSv1_3);
    let is12 =
        |v: Option<&rustls::SupportedProtocolVersion>| v.is_some_and(|v| v.version == rustls::ProtocolVersion::TLSv1_2);
    let versions: Vec<&'static rustls::SupportedProtocolVersion> = [&rustls::version::TLS12, &rustls::version::TLS13]
        .into_iter()
        .filter(|v| !is13(min) || is13(Some(v)))
        .filter(|v| !is12(max) || is12(Some(v)))
        .collect();
    if versions.is_empty() {
        bail!(msg::bad_value(params.origin("ssl_max_protocol_version")));
    }
    Ok(versions)
}

/// The roots to verify against, and the file they came from: the
/// platform's (`sslrootcert=system`), the file named, or the default one
/// (`default("root.crt")`) where it exists.
fn root_file(
    params: &impl Keys,
    mode: SslMode,
    system: bool,
    default: &dyn Fn(&str) -> Option<PathBuf>,
) -> Result<(Option<rustls::RootCertStore>, Option<PathBuf>)> {
    if system {
        return Ok((Some(system_roots(&params.origin("sslrootcert"))?), None));
    }
    Ok(match params.get("sslrootcert").filter(|v| !v.is_empty()) {
        Some(f) if Path::new(f).exists() || mode >= SslMode::VerifyCa => {
            let origin = params.origin("sslrootcert");
            (Some(read_roots(Path::new(f), &origin)?), Some(PathBuf::from(f)))
        }
        // libpq: a named root file that is not there verifies nothing with require.
        Some(_) => (None, None),
        None => match default("root.crt").filter(|p| p.exists()) {
            Some(p) => {
                let origin = format!("sslrootcert ({})", p.display());
                (Some(read_roots(&p, &origin)?), Some(p))
            }
            None => (None, None),
        },
    })
}

/// The client's certificate and key: named (then they must be there), or
/// the default ones (`default("postgresql.crt")`, `.key`) where the
/// certificate exists; none with `sslcertmode=disable`.
fn client_identity(params: &impl Keys, default: &dyn Fn(&str) -> Option<PathBuf>) -> Result<Option<Identity>> {
    let value = |k: &str| params.get(k).filter(|v| !v.is_empty());
    if value("sslcertmode") == Some("disable") {
        return Ok(None);
    }
    let cert = match value("sslcert") {
        Some(f) => Some((PathBuf::from(f), params.origin("sslcert"))),
        None => default("postgresql.crt")
            .filter(|p| p.exists())
            .map(|p| (p.clone(), format!("sslcert ({})", p.display()))),
    };
    let Some((cert, cert_origin)) = cert else {
        return Ok(None);
    };
    let (key, key_origin) = match value("sslkey") {
        Some(f) => (PathBuf::from(f), params.origin("sslkey")),
        None => {
            let p = default("postgresql.key").unwrap_or_else(|| PathBuf::from("postgresql.key"));
            let o = format!("sslkey ({})", p.display());
            (p, o)
        }
    };
    Ok(Some(read_identity(&cert, &cert_origin, &key, &key_origin)?))
}

/// The certificates of a root file.
fn read_roots(path: &Path, origin: &str) -> Result<rustls::RootCertStore> {
    if !path.exists() {
        bail!(msg::file_missing(origin, path.display().to_string()));
    }
    let mut store = rustls::RootCertStore::empty();
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| msg::file_unreadable(origin, path.display().to_string(), pem_error(e)))?;
    for cert in certs {
        let cert = cert.map_err(|e| msg::file_unreadable(origin, path.display().to_string(), pem_error(e)))?;
        store
            .add(cert)
            .map_err(|e| msg::file_unreadable(origin, path.display().to_string(), e.to_string()))?;
    }
    if store.is_empty() {
        bail!(msg::file_unreadable(
            origin,
            path.display().to_string(),
            msg::no_certificate()
        ));
    }
    Ok(store)
}

/// The system's roots (sslrootcert=system), as OpenSSL finds them: SSL_CERT_FILE, SSL_CERT_DIR, the platform's store.
fn system_roots(origin: &str) -> Result<rustls::RootCertStore> {
    let found = rustls_native_certs::load_native_certs();
    let mut store = rustls::RootCertStore::empty();
    let (_added, _bad) = store.add_parsable_certificates(found.certs);
    if store.is_empty() {
        let why = found
            .errors
            .first()
            .map_or("no certificate found".to_string(), |e| e.to_string());
        bail!(msg::file_unreadable(origin, "system", why));
    }
    Ok(store)
}

fn read_crls(path: &Path, origin: &str) -> Result<Vec<CertificateRevocationListDer<'static>>> {
    if !path.exists() {
        bail!(msg::file_missing(origin, path.display().to_string()));
    }
    let crls: Result<Vec<_>, _> = CertificateRevocationListDer::pem_file_iter(path)
        .map_err(|e| msg::file_unreadable(origin, path.display().to_string(), pem_error(e)))?
        .collect();
    crls.map_err(|e| msg::file_unreadable(origin, path.display().to_string(), pem_error(e)).into())
}

type Identity = (Vec<CertificateDer<'static>>, PrivateKeyDer<'static>);

/// The client's certificate and key; a key others may read is refused, as libpq refuses it.
fn read_identity(cert: &Path, cert_origin: &str, key: &Path, key_origin: &str) -> Result<Identity> {
    if !cert.exists() {
        bail!(msg::file_missing(cert_origin, cert.display().to_string()));
    }
    let certs: Vec<_> = CertificateDer::pem_file_iter(cert)
        .and_then(|i| i.collect::<Result<Vec<_>, _>>())
        .map_err(|e| msg::file_unreadable(cert_origin, cert.display().to_string(), pem_error(e)))?;
    if certs.is_empty() {
        bail!(msg::file_unreadable(
            cert_origin,
            cert.display().to_string(),
            msg::no_certificate()
        ));
    }
    let meta = std::fs::metadata(key).map_err(|_| msg::no_key(key_origin, key.display().to_string()))?;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    if !meta.is_file() {
        bail!(msg::file_unreadable(
            key_origin,
            key.display().to_string(),
            msg::not_a_file()
        ));
    }
    let mode = meta.permissions().mode();
    let loose = if meta.uid() == 0 {
        mode & 0o037 != 0
    } else {
        mode & 0o077 != 0
    };
    if loose {
        bail!(msg::key_access(key_origin, key.display().to_string()));
    }
    let text = std::fs::read_to_string(key)
        .map_err(|e| msg::file_unreadable(key_origin, key.display().to_string(), e.to_string()))?;
    if text.contains("ENCRYPTED") {
        bail!(msg::key_encrypted(key_origin, key.display().to_string()));
    }
    let pk = PrivateKeyDer::from_pem_slice(text.as_bytes())
        .map_err(|e| msg::file_unreadable(key_origin, key.display().to_string(), pem_error(e)))?;
    Ok((certs, pk))
}

fn pem_error(e: rustls::pki_types::pem::Error) -> String {
    match e {
        rustls::pki_types::pem::Error::Io(io) => io.to_string(),
        rustls::pki_types::pem::Error::NoItemsFound => "no PEM item in it".to_string(),
        other => format!("{other:?}"),
    }
}

/// ring: it builds with no system packages. (rustls 0.23.48 marks it
/// deprecated for lacking post-quantum key exchange, which PostgreSQL's
/// OpenSSL servers do not need.)
#[allow(deprecated)]
fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn client_config(
    check: Check,
    roots: Option<rustls::RootCertStore>,
    crls: Vec<CertificateRevocationListDer<'static>>,
    identity: Option<Identity>,
    sni: bool,
    versions: Option<Vec<&'static rustls::SupportedProtocolVersion>>,
) -> Result<Arc<rustls::ClientConfig>> {
    let provider = provider();
    let webpki = match roots {
        Some(roots) => {
            let mut b = rustls::client::WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone());
            if !crls.is_empty() {
                b = b.with_crls(crls).only_check_end_entity_revocation();
            }
            Some(b.build()?)
        }
        None => None,
    };
    let verifier = Arc::new(Verifier {
        check,
        webpki,
        algorithms: provider.signature_verification_algorithms,
    });
    let versions = versions.unwrap_or_else(|| vec![&rustls::version::TLS12, &rustls::version::TLS13]);
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&versions)?
        .dangerous()
        .with_custom_certificate_verifier(verifier);
    let mut config = match identity {
        Some((certs, key)) => builder.with_client_auth_cert(certs, key)?,
        None => builder.with_no_client_auth(),
    };
    config.enable_sni = sni;
    // As libpq 17+: the server may insist on it (direct negotiation does).
    config.alpn_protocols = vec![b"postgresql".to_vec()];
    Ok(Arc::new(config))
}

/// libpq's checks of the server's certificate, by sslmode.
#[derive(Debug)]
struct Verifier {
    check: Check,
    webpki: Option<Arc<rustls::client::WebPkiServerVerifier>>,
    algorithms: rustls::crypto::WebPkiSupportedAlgorithms,
}

impl ServerCertVerifier for Verifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some(webpki) = self.webpki.as_ref().filter(|_| self.check != Check::Nothing) else {
            return Ok(ServerCertVerified::assertion());
        };
        match webpki.verify_server_cert(end_entity, intermediates, server_name, ocsp, now) {
            // The chain was good (webpki checks the name after it).
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) if self.check == Check::Chain => Ok(ServerCertVerified::assertion()),
            r => r,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

/// What a TLS handshake gave, for the run's header and JSON.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Facts {
    /// "TLSv1.3", as pg_stat_ssl names it.
    pub version: String,
    pub cipher: String,
    /// The server certificate's subject ("CN=db.example.com").
    pub subject: Option<String>,
    /// What was checked: "nothing", "chain", "chain and host name".
    pub verified: &'static str,
    /// The host name the certificate was checked against (or sent in SNI).
    pub host: String,
}

impl Facts {}

/// Any stream to the server (TCP, a Unix socket, TLS over either; watched or not).
pub trait Stream: AsyncRead + AsyncWrite + Unpin + Send {}
impl<S: AsyncRead + AsyncWrite + Unpin + Send> Stream for S {}

/// What wraps a decrypted stream.
type Wrap = Box<dyn FnOnce(Box<dyn Stream>) -> Box<dyn Stream> + Send>;

/// tokio-postgres' TLS connector for one host.
pub struct Connector {
    config: Arc<rustls::ClientConfig>,
    name: ServerName<'static>,
    host: String,
    check: Check,
    facts: Arc<Mutex<Option<Facts>>>,
    /// What wraps the decrypted stream (lab's watchdog, which reads the protocol).
    wrap: Option<Wrap>,
}

impl Connector {
    /// The decrypted stream goes through `wrap` (the watchdog, which must see the protocol in the clear).
    /// Wrapped again, the new wrap outside the one before.
    pub fn wrapped(mut self, wrap: impl FnOnce(Box<dyn Stream>) -> Box<dyn Stream> + Send + 'static) -> Connector {
        self.wrap = Some(match self.wrap.take() {
            Some(before) => Box::new(move |s| wrap(before(s))),
            None => Box::new(wrap),
        });
        self
    }
}

impl<S> tokio_postgres::tls::TlsConnect<S> for Connector
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    type Stream = TlsStream;
    type Error = std::io::Error;
    type Future = Pin<Box<dyn Future<Output = std::io::Result<TlsStream>> + Send>>;

    fn connect(self, stream: S) -> Self::Future {
        Box::pin(async move {
            let host = self.host.clone();
            let tls = tokio_rustls::TlsConnector::from(self.config)
                .connect(self.name, stream)
                .await
                .map_err(|e| std::io::Error::other(describe(e, &host)))?;
            let tls: tokio_rustls::client::TlsStream<S> = tls;
            let (_, conn) = tls.get_ref();
            let leaf = conn.peer_certificates().and_then(|c| c.first()).cloned();
            let parsed = leaf
                .as_ref()
                .and_then(|c| x509_parser::parse_x509_certificate(c.as_ref()).ok().map(|(_, p)| p));
            let end_point = leaf.as_ref().zip(parsed.as_ref()).and_then(|(der, cert)| {
                let alg = cert.signature_algorithm.algorithm.to_id_string();
                end_point_digest(&alg).map(|d| ring::digest::digest(d, der.as_ref()).as_ref().to_vec())
            });
            let version = match conn.protocol_version() {
                Some(rustls::ProtocolVersion::TLSv1_3) => "TLSv1.3",
                Some(rustls::ProtocolVersion::TLSv1_2) => "TLSv1.2",
                _ => "TLS",
            };
            *self.facts.lock().unwrap() = Some(Facts {
                version: version.to_string(),
                cipher: conn
                    .negotiated_cipher_suite()
                    .map(|s| format!("{:?}", s.suite()))
                    .unwrap_or_default(),
                subject: parsed.as_ref().map(|c| c.subject().to_string()),
                verified: match self.check {
                    Check::Nothing => "nothing",
                    Check::Chain => "chain",
                    Check::Full => "chain and host name",
                },
                host,
            });
            let inner: Box<dyn Stream> = Box::new(tls);
            let inner = match self.wrap {
                Some(wrap) => wrap(inner),
                None => inner,
            };
            Ok(TlsStream { inner, end_point })
        })
    }
}

/// RFC 5929's tls-server-end-point hash for a certificate signed with
/// `oid`: its signature's hash, SHA-256 for MD5 and SHA-1; none for a
/// signature without one (Ed25519), as PostgreSQL.
fn end_point_digest(oid: &str) -> Option<&'static ring::digest::Algorithm> {
    match oid {
        // md5, sha1, sha256 with RSA; ecdsa with sha1, sha256
        "1.2.840.113549.1.1.4"
        | "1.2.840.113549.1.1.5"
        | "1.2.840.113549.1.1.11"
        | "1.2.840.10045.4.1"
        | "1.2.840.10045.4.3.2" => Some(&ring::digest::SHA256),
        "1.2.840.113549.1.1.12" | "1.2.840.10045.4.3.3" => Some(&ring::digest::SHA384),
        "1.2.840.113549.1.1.13" | "1.2.840.10045.4.3.4" => Some(&ring::digest::SHA512),
        _ => None,
    }
}

/// A handshake's failure in libpq's words where it has some.
fn describe(e: std::io::Error, host: &str) -> String {
    let Some(tls) = e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>()) else {
        return e.to_string();
    };
    match tls {
        rustls::Error::InvalidCertificate(CertificateError::NotValidForNameContext { presented, .. }) => {
            msg::name_mismatch(presented.join(", "), host).to_string()
        }
        rustls::Error::InvalidCertificate(CertificateError::NotValidForName) => {
            msg::name_mismatch("?", host).to_string()
        }
        rustls::Error::InvalidCertificate(CertificateError::Expired | CertificateError::ExpiredContext { .. }) => {
            msg::verify_failed("certificate has expired").to_string()
        }
        rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer) => {
            msg::verify_failed("unable to get local issuer certificate").to_string()
        }
        rustls::Error::InvalidCertificate(CertificateError::Revoked) => {
            msg::verify_failed("certificate revoked").to_string()
        }
        rustls::Error::InvalidCertificate(c) => msg::verify_failed(format!("{c:?}")).to_string(),
        other => msg::tls_error(other.to_string()).to_string(),
    }
}

/// A TLS stream tokio-postgres reads and writes, with its channel binding.
pub struct TlsStream {
    inner: Box<dyn Stream>,
    end_point: Option<Vec<u8>>,
}

impl AsyncRead for TlsStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for TlsStream {
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

impl tokio_postgres::tls::TlsStream for TlsStream {
    fn channel_binding(&self) -> tokio_postgres::tls::ChannelBinding {
        match &self.end_point {
            Some(h) => tokio_postgres::tls::ChannelBinding::tls_server_end_point(h.clone()),
            None => tokio_postgres::tls::ChannelBinding::none(),
        }
    }
}

/// A CA and a server certificate lab makes for a run of its own servers
/// with `--tls` (kept in the run's directory, removed with it): the CA's
/// PEM, and the server's certificate and key, valid for localhost and
/// 127.0.0.1.
pub struct RunCerts {
    pub ca_pem: String,
    pub cert_pem: String,
    pub key_pem: String,
}

impl RunCerts {
    pub fn make() -> Result<RunCerts> {
        use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair, KeyUsagePurpose};
        let ca_key = KeyPair::generate()?;
        let mut ca = CertificateParams::default();
        ca.distinguished_name.push(DnType::CommonName, "lab run CA");
        ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let ca_cert = ca.self_signed(&ca_key)?;
        let key = KeyPair::generate()?;
        let mut leaf = CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".to_string()])?;
        leaf.distinguished_name.push(DnType::CommonName, "localhost");
        let cert = leaf.signed_by(&key, &ca_cert, &ca_key)?;
        Ok(RunCerts {
            ca_pem: ca_cert.pem(),
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
        })
    }

    /// Writes `root.crt`, `server.crt` and `server.key` (0600) into `dir`.
    pub fn write(&self, dir: &Path) -> std::io::Result<()> {
        use std::os::unix::fs::PermissionsExt;
        std::fs::write(dir.join("root.crt"), &self.ca_pem)?;
        std::fs::write(dir.join("server.crt"), &self.cert_pem)?;
        let key = dir.join("server.key");
        std::fs::write(&key, &self.key_pem)?;
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600))
    }
}

pub(crate) mod msg {
    crate::messages! {
        prefix "tls";
        bad_value(key) {
            en: "{key}: invalid value (not repeated here: it may be a secret in the wrong place)",
            tr: "{key}: geçersiz değer (burada tekrarlanmıyor: yanlış yere yazılmış bir sır olabilir)",
        }
        weak_with_system(key, mode) {
            en: "{key}: weak sslmode \"{mode}\" may not be used with sslrootcert=system (use \"verify-full\")",
            tr: "{key}: zayıf sslmode \"{mode}\" sslrootcert=system ile kullanılamaz (\"verify-full\" kullanın)",
        }
        weak_with_direct(key, mode) {
            en: "{key}: weak sslmode \"{mode}\" may not be used with sslnegotiation=direct (use \"require\", \"verify-ca\", or \"verify-full\")",
            tr: "{key}: zayıf sslmode \"{mode}\" sslnegotiation=direct ile kullanılamaz (\"require\", \"verify-ca\" ya da \"verify-full\" kullanın)",
        }
        no_root(key, mode, file) {
            en: "{key}={mode}: root certificate file \"{file}\" does not exist; give it with sslrootcert, use the system's roots with sslrootcert=system, or choose an sslmode that does not verify the server",
            tr: "{key}={mode}: kök sertifika dosyası \"{file}\" yok; sslrootcert ile verin, sistemin köklerini sslrootcert=system ile kullanın ya da sunucuyu doğrulamayan bir sslmode seçin",
        }
        file_missing(key, file) {
            en: "{key}: file \"{file}\" does not exist",
            tr: "{key}: \"{file}\" dosyası yok",
        }
        file_unreadable(key, file, why) {
            en: "{key}: could not read \"{file}\": {why}",
            tr: "{key}: \"{file}\" okunamadı: {why}",
        }
        no_key(key, file) {
            en: "{key}: certificate present, but not private key file \"{file}\"",
            tr: "{key}: sertifika var ama özel anahtar dosyası \"{file}\" yok",
        }
        key_access(key, file) {
            en: "{key}: private key file \"{file}\" has group or world access; file must have permissions u=rw (0600) or less if owned by the current user, or permissions u=rw,g=r (0640) or less if owned by root",
            tr: "{key}: özel anahtar dosyası \"{file}\" gruba ya da herkese açık; dosyanın izinleri, mevcut kullanıcıya aitse u=rw (0600) ya da daha az, root'a aitse u=rw,g=r (0640) ya da daha az olmalı",
        }
        key_encrypted(key, file) {
            en: "{key}: private key file \"{file}\" is encrypted, and lab reads only unencrypted keys (sslpassword is not supported)",
            tr: "{key}: özel anahtar dosyası \"{file}\" şifreli; lab yalnızca şifresiz anahtarları okur (sslpassword desteklenmez)",
        }
        name_mismatch(names, host) {
            en: "server certificate for \"{names}\" does not match host name \"{host}\" (sslmode=verify-full)",
            tr: "\"{names}\" için sunucu sertifikası \"{host}\" sunucu adıyla eşleşmiyor (sslmode=verify-full)",
        }
        not_a_file() {
            en: "not a regular file",
            tr: "normal bir dosya değil",
        }
        no_certificate() {
            en: "no certificate in it",
            tr: "içinde sertifika yok",
        }
        verify_failed(why) {
            en: "SSL error: certificate verify failed: {why}",
            tr: "SSL hatası: sertifika doğrulanamadı: {why}",
        }
        tls_error(why) {
            en: "SSL error: {why}",
            tr: "SSL hatası: {why}",
        }
    }
}
