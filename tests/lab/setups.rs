//! The setups a smoke check really meets: a streaming standby given instead
//! of the primary, a role whose defaults would change the results, libpq's
//! password and service files, an unset CI secret, and connection errors that
//! say where lab looked.
use std::os::unix::fs::PermissionsExt;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{TestServer, failed_checks, lab, one_line_exit_2, run, run_cmd};

const LAB_BACKENDS: &str = "SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE 'lab:%'";

#[test]
fn a_standby_is_refused_before_anything_is_created() {
    let srv = TestServer::start();
    let standby = srv.cluster.standby().expect("a streaming standby starts");
    // It is a standby, as the server itself says.
    let s = srv
        .rt
        .block_on(lab::postgres::connect::connect(
            &standby.config(),
            "lab-test",
            None,
            None,
        ))
        .unwrap()
        .client;
    let in_recovery: bool = srv
        .rt
        .block_on(s.query_one("SELECT pg_is_in_recovery()", &[]))
        .unwrap()
        .get(0);
    assert!(in_recovery);
    let place = format!("127.0.0.1:{}", standby.port);
    let url = standby.url();
    for command in [
        &["lost-update"][..],
        &["phenomena"][..],
        &["spec", "lab/examples/last-copy.spec"][..],
    ] {
        let mut args = command.to_vec();
        args.extend(["--database-url", &url]);
        let r = run(&args);
        one_line_exit_2(&r, "is a read-only standby");
        assert!(r.stderr.contains(&place), "{}", r.stderr);
        assert!(r.stderr.contains("give lab the primary's URL"), "{}", r.stderr);
    }
    // Nothing was created, on the standby or (through it) on the primary.
    let c = srv.client();
    assert_eq!(
        srv.query_i64(&c, "SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'lab%'"),
        0
    );
    assert_eq!(
        srv.query_i64(&c, "SELECT count(*) FROM pg_database WHERE datname LIKE 'lab%'"),
        0
    );
    srv.wait_for_zero(&c, LAB_BACKENDS);
}

/// A role that may create in the test database, with `defaults` (`ALTER
/// ROLE ... SET name = value`); its URL.
fn role_with_defaults(srv: &TestServer, c: &tokio_postgres::Client, role: &str, defaults: &[(&str, &str)]) -> String {
    let sets: String = defaults
        .iter()
        .map(|(k, v)| format!("ALTER ROLE {role} SET {k} = {v};"))
        .collect();
    srv.exec(
        c,
        &format!("CREATE ROLE {role} LOGIN; GRANT CREATE ON DATABASE postgres TO {role}; {sets}"),
    );
    format!("postgres://{role}@127.0.0.1:{}/postgres", srv.cluster.port)
}

/// A shared server's role, with defaults that break every scenario that
/// waits, retries or writes if a session inherits them; its URL.
fn hostile_role(srv: &TestServer, c: &tokio_postgres::Client, role: &str) -> String {
    role_with_defaults(
        srv,
        c,
        role,
        &[
            ("lock_timeout", "'200ms'"),
            ("statement_timeout", "'1500ms'"),
            ("idle_in_transaction_session_timeout", "'300ms'"),
            ("idle_session_timeout", "'700ms'"),
            ("default_transaction_isolation", "'serializable'"),
            ("default_transaction_read_only", "on"),
        ],
    )
}

#[test]
fn hostile_role_defaults_do_not_change_the_results() {
    let srv = TestServer::start();
    let c = srv.client();
    let url = hostile_role(&srv, &c, "hostile");
    // The defaults are in force for anyone connecting as that role.
    let mut hostile_config = srv.cluster.config();
    hostile_config.user("hostile");
    let h = srv
        .rt
        .block_on(lab::postgres::connect::connect(&hostile_config, "lab-test", None, None))
        .unwrap()
        .client;
    let shown: Vec<String> = srv
        .rt
        .block_on(h.query(
            "SELECT current_setting('lock_timeout') UNION ALL SELECT current_setting('default_transaction_isolation')",
            &[],
        ))
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(shown, ["200ms", "serializable"]);
    drop(h);

    let r = run(&["all", "--database-url", &url, "--format", "json"]);
    assert_eq!(r.code, 0, "{}{}{}", r.stdout, r.stderr, srv.ended_connections());
    let report: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(report["as_expected"], true);
    // Each transaction ran at the level its scenario chose, not the role's serializable.
    let levels: Vec<&str> = report["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["variants"].as_array().unwrap())
        .flat_map(|v| v["timeline"].as_array().into_iter().flatten())
        .filter_map(|e| e["isolation"].as_str())
        .collect();
    assert!(levels.contains(&"read committed"), "{levels:?}");

    let r = run(&["phenomena", "--database-url", &url]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    srv.wait_for_zero(&c, LAB_BACKENDS);
}

/// `lab pooler`'s clients set nothing (as an application's would not), so
/// their server connections carry the role's defaults: the transactions
/// pool-exhaustion and xact-advisory-lock hold open must not be ended by the
/// role's idle-in-transaction timeout (CI saw A ended by a 300 ms one on a
/// loaded runner; at 1 ms it ends them every time unless they turn it off).
#[test]
fn a_roles_idle_in_transaction_timeout_does_not_end_the_pooler_transactions() {
    let srv = TestServer::start();
    let c = srv.client();
    let url = role_with_defaults(
        &srv,
        &c,
        "impatient",
        &[("idle_in_transaction_session_timeout", "'1ms'")],
    );
    for variant in ["pool-exhaustion", "xact-advisory-lock"] {
        let r = run(&["pooler", "--variant", variant, "--database-url", &url]);
        assert_eq!(
            r.code,
            0,
            "{variant}: {}{}{}",
            r.stdout,
            r.stderr,
            srv.ended_connections()
        );
    }
    srv.wait_for_zero(&c, LAB_BACKENDS);
}

/// The test server with password authentication for every role but postgres.
fn with_passwords(srv: &TestServer) {
    let hba = srv.data_dir().join("pg_hba.conf");
    std::fs::write(
        &hba,
        "local all all trust\n\
         host all postgres 127.0.0.1/32 trust\n\
         host replication postgres 127.0.0.1/32 trust\n\
         host all all 127.0.0.1/32 scram-sha-256\n",
    )
    .unwrap();
    let c = srv.client();
    srv.exec(
        &c,
        "CREATE ROLE app LOGIN PASSWORD 'pw:with\\colon';
         GRANT CREATE ON DATABASE postgres TO app;
         SELECT pg_reload_conf();",
    );
    // The reload is asynchronous: wait until a connection without a password is refused.
    let mut config = srv.cluster.config();
    config.user("app");
    let deadline = Instant::now() + Duration::from_secs(10);
    while srv
        .rt
        .block_on(lab::postgres::connect::connect(&config, "lab-test", None, None))
        .is_ok()
    {
        assert!(Instant::now() < deadline, "pg_hba.conf was not reloaded");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn the_password_file_and_the_service_file_work_as_in_libpq() {
    let srv = TestServer::start();
    with_passwords(&srv);
    let port = srv.cluster.port;
    let dir = std::env::temp_dir().join(format!("lab-libpq-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pgpass = dir.join("pgpass");
    std::fs::write(
        &pgpass,
        format!("# lab test\nelsewhere:{port}:*:app:wrong\n127.0.0.1:{port}:*:app:pw\\:with\\\\colon\n"),
    )
    .unwrap();
    std::fs::set_permissions(&pgpass, std::fs::Permissions::from_mode(0o600)).unwrap();
    let url = format!("postgres://app@127.0.0.1:{port}/postgres");

    // No password anywhere: refused, and the error says where lab connected and why there.
    let r = run_cmd(lab().env("HOME", &dir).args(["nowait", "--database-url", &url]));
    one_line_exit_2(&r, "the server named by --database-url");
    assert!(r.stderr.contains(&format!("127.0.0.1:{port}")), "{}", r.stderr);

    // The password file, as psql reads it.
    let r = run_cmd(
        lab()
            .env("HOME", &dir)
            .env("PGPASSFILE", &pgpass)
            .args(["nowait", "--database-url", &url]),
    );
    assert_eq!(r.code, 0, "{}", r.why());

    // A service file names the server (and PGPASSFILE still gives the password).
    let services = dir.join("services.conf");
    std::fs::write(
        &services,
        format!("[other]\nhost=192.0.2.1\n\n[shop]\nhost=127.0.0.1\nport={port}\nuser=app\ndbname=postgres\n"),
    )
    .unwrap();
    let r = run_cmd(
        lab()
            .env("HOME", &dir)
            .env("PGPASSFILE", &pgpass)
            .env("PGSERVICEFILE", &services)
            .env("PGSERVICE", "shop")
            .args(["nowait", "--format", "json"]),
    );
    assert_eq!(r.code, 0, "{}", r.why());
    let report: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(report["as_expected"], true);
    let r = run_cmd(
        lab()
            .env("HOME", &dir)
            .env("PGSERVICEFILE", &services)
            .env("PGSERVICE", "nosuch")
            .args(["nowait"]),
    );
    one_line_exit_2(&r, "PGSERVICE names service \"nosuch\"");

    // A password file others can read is ignored, with libpq's warning.
    std::fs::set_permissions(&pgpass, std::fs::Permissions::from_mode(0o644)).unwrap();
    let r = run_cmd(
        lab()
            .env("HOME", &dir)
            .env("PGPASSFILE", &pgpass)
            .args(["nowait", "--database-url", &url]),
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("has group or world access"), "{}", r.stderr);
    assert!(
        !r.stderr.contains("colon"),
        "the password is never echoed: {}",
        r.stderr
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_empty_database_url_is_refused_not_replaced_by_a_throwaway_server() {
    let r = run_cmd(lab().env("DATABASE_URL", "").args(["nowait"]));
    one_line_exit_2(&r, "DATABASE_URL is set but empty");
    // Refused before any server is started: with no server programs to be
    // found, a throwaway cluster would have failed on those instead.
    let r = run_cmd(
        lab()
            .env("LAB_PG_BIN", "/nonexistent-pg-bin")
            .args(["phenomena", "--database-url", ""]),
    );
    one_line_exit_2(&r, "--database-url is set but empty");
}

#[test]
fn two_runs_share_a_crowded_server_with_max_connections() {
    let srv = TestServer::start();
    let c = srv.client();
    // The throwaway cluster allows 300; other clients hold 200 of them, so
    // about 97 are free, as on a default server (max_connections = 100).
    let config = srv.cluster.config();
    let held: Vec<_> = (0..200)
        .map(|_| {
            srv.rt
                .block_on(lab::postgres::connect::connect(&config, "lab-test-crowd", None, None))
                .expect("a crowd connection")
        })
        .collect();
    let free = srv.query_i64(
        &c,
        "SELECT current_setting('max_connections')::int - current_setting('superuser_reserved_connections')::int \
                - (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend')",
    );
    assert!((90..=100).contains(&free), "{free}");
    let spawn = |schema: &str| {
        lab()
            .args(["all", "--format", "json", "--max-connections", "45", "--schema", schema])
            .args(["--database-url", &srv.url()])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn("lab_a"), spawn("lab_b"));
    for child in [a, b] {
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
        let failing: Vec<String> = report["scenarios"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|s| s["variants"].as_array().into_iter().flatten())
            .filter(|v| v["as_expected"] == false)
            .map(|v| format!("{}: {:?}", v["name"], crate::support::failed_checks(v)))
            .collect();
        assert_eq!(out.status.code(), Some(0), "{stderr}{failing:?}");
        assert_eq!(report["as_expected"], true);
        // stock-race ran as many requests as the cap leaves, and said so.
        let stock = report["scenarios"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["scenario"] == "stock-race")
            .unwrap();
        for v in stock["variants"].as_array().unwrap() {
            assert_eq!(v["metrics"]["requests"], 44, "{v}");
            assert!(
                v["notes"].to_string().contains("--max-connections 45"),
                "{}",
                v["notes"]
            );
        }
    }
    drop(held);
    srv.wait_for_zero(&c, LAB_BACKENDS);
}

#[test]
fn a_transaction_pooler_is_refused_with_one_line_and_a_session_pooler_works() {
    let srv = TestServer::start();
    let bouncer = crate::support::PgBouncer::start(&srv);
    let place = format!("127.0.0.1:{}", bouncer.port);
    for command in [
        &["lost-update"][..],
        &["phenomena"][..],
        &["spec", "lab/examples/last-copy.spec"][..],
    ] {
        let url = bouncer.url("tx");
        let mut args = command.to_vec();
        args.extend(["--database-url", &url]);
        let r = run(&args);
        one_line_exit_2(&r, &format!("{place} is a transaction pooler"));
    }
    // A pooler that hands out its idle server connections in turn can pass
    // the backend-pid probe; the first prepared statement then tells.
    let rr = crate::support::PgBouncer::start_with(&srv, "server_round_robin = 1\nmin_pool_size = 5");
    for _ in 0..3 {
        let r = run(&["nowait", "--database-url", &rr.url("tx")]);
        one_line_exit_2(&r, "transaction pooler");
    }
    drop(rr);
    // Behind a session pooler each client keeps its server connection: the
    // sessions' settings are SQL, not startup options the pooler would drop.
    // Every scenario, within the pool's 40 server connections.
    let r = run(&[
        "all",
        "--format",
        "json",
        "--max-connections",
        "35",
        "--database-url",
        &bouncer.url("session"),
    ]);
    assert_eq!(r.code, 0, "{}", r.why());
    let report: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(report["as_expected"], true);
    // A pool with no server connection left is an error in seconds, not a
    // two-minute queue: 100 stock-race requests do not fit in 40.
    let r = run(&["stock-race", "--database-url", &bouncer.url("session")]);
    one_line_exit_2(&r, "accepted the connection but ran nothing on it within 5 s");
    let c = srv.client();
    assert_eq!(
        srv.query_i64(&c, "SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'lab%'"),
        0
    );
}

/// `--pooler`: every session goes through lab's own PgBouncer in
/// transaction mode, in front of a role whose defaults would change the
/// results. Every variant gives its documented verdict (or, where a
/// transaction pooler is documented to change it, says so with why), and
/// PgBouncer counted the variant's transactions.
#[test]
fn every_scenario_through_labs_own_transaction_pooler() {
    let srv = TestServer::start();
    let c = srv.client();
    let url = hostile_role(&srv, &c, "pooled");
    let r = run(&["all", "--pooler", "--database-url", &url, "--format", "json"]);
    assert_eq!(r.code, 0, "{}{}{}", r.stdout, r.stderr, srv.ended_connections());
    let report: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(report["as_expected"], true);
    let mut differs = Vec::new();
    for s in report["scenarios"].as_array().unwrap() {
        for v in s["variants"].as_array().unwrap() {
            let name = format!("{}/{}", s["scenario"].as_str().unwrap(), v["name"].as_str().unwrap());
            let m = &v["metrics"];
            assert!(m["pooler"].as_str().unwrap().starts_with("PgBouncer"), "{name}: {m}");
            // lab pooler's variants run behind PgBouncers of their own.
            if v["skipped"] == false && s["scenario"] != "pooler" {
                assert!(m["pooler_transactions"].as_i64().unwrap() > 0, "{name}: {m}");
            }
            if let Some(why) = v["pooler_differs"].as_str() {
                assert!(!failed_checks(v).is_empty(), "{name}: differs only with a failed check");
                assert!(why.contains("transaction pooler"), "{why}");
                differs.push(name);
            }
        }
    }
    // Only the variant that relies on a session-level lock may differ.
    assert!(
        differs.iter().all(|d| d == "advisory-lock/session-lock-pooled"),
        "{differs:?}"
    );
    // The waits were seen behind the pooler too.
    let waited = report["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["variants"].as_array().unwrap())
        .flat_map(|v| v["timeline"].as_array().into_iter().flatten())
        .filter(|e| e["result"] == "waiting")
        .count();
    assert!(waited >= 10, "{waited} waits");
    // Nothing left: no backend of lab's (the pool's server connections went
    // with PgBouncer), no schema.
    srv.wait_for_zero(&c, "SELECT count(*) FROM pg_stat_activity WHERE usename = 'pooled'");
    assert_eq!(
        srv.query_i64(&c, "SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'lab%'"),
        0
    );
}

/// Behind lab's pooler, a statement that has no server connection yet
/// because the pool is full: PgBouncer counts its client as waiting while
/// its one server connection serves A (what lab's engine names a pooler
/// wait), and no backend runs the session.
#[test]
fn a_full_pool_is_seen_in_pgbouncer_not_on_the_server() {
    use lab::engine::session::refresh_pids;
    use lab::engine::{Opener, Recorder};
    let srv = TestServer::start();
    // PgBouncer is started on a runtime thread that outlives it.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        use lab::postgres::pgbouncer::Front;
        let front = Front::start(&srv.cluster.config(), vec![Front::pool("p", 1)])
            .await
            .unwrap();
        let env = srv.env("p").await.with_pooler(front);
        let front = env.pooler.clone().unwrap();
        let opener = Opener::new(&env, "lab:pool-test:".into(), "pool-test".into(), Recorder::default());
        let (a, b) = (opener.open("A").await.unwrap(), opener.open("B").await.unwrap());
        let control = lab::postgres::connect::connect(&srv.cluster.config(), "lab-test", None, None)
            .await
            .unwrap()
            .client;
        // A's transaction holds the pool's one server connection.
        a.exec("begin", "BEGIN").await.unwrap();
        refresh_pids(&control, &[a.clone(), b.clone()]).await.unwrap();
        assert!(a.pid() > 0);
        let mut sent = b.send("SELECT 1");
        let deadline = Instant::now() + Duration::from_secs(10);
        while !front.full("p").await.unwrap() {
            assert!(Instant::now() < deadline, "PgBouncer never counted B as waiting");
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        refresh_pids(&control, &[a.clone(), b.clone()]).await.unwrap();
        assert_eq!(b.pid(), 0, "no backend runs B's statement");
        assert!(!sent.ready());
        a.exec("commit", "COMMIT").await.unwrap();
        assert!(sent.ready_within(Duration::from_secs(10)).await);
        assert!(sent.take().unwrap().0.is_ok());
        assert!(!front.full("p").await.unwrap());
    });
}

#[test]
fn pooler_without_pgbouncer_is_one_line_before_any_server_starts() {
    let r = run_cmd(
        lab()
            .args(["lost-update", "--pooler"])
            .env("LAB_PGBOUNCER_BIN", "/nonexistent/pgbouncer")
            .env("LAB_PG_BIN", "/nonexistent/bin"),
    );
    one_line_exit_2(&r, "LAB_PGBOUNCER_BIN=/nonexistent/pgbouncer is not a program");
}

/// Through lab's pgpool-II in front of a pair that wants passwords: the
/// client and pgpool-II's own server connections authenticate with the
/// URL's password (SCRAM), which no output shows. A password pgpool-II's
/// pool_passwd cannot hold (a colon) skips the variants, with why.
#[test]
fn lab_replica_via_pgpool_on_a_pair_that_wants_passwords() {
    let srv = TestServer::start();
    with_passwords(&srv);
    // Its standby copies the primary's pg_hba.conf, as a real pair's does:
    // pgpool-II wants the same authentication from both.
    let standby = srv.cluster.standby().expect("a streaming standby starts");
    let c = srv.client();
    // Pausing replay needs a superuser (or a grant); the role still logs in with its password.
    srv.exec(&c, "ALTER ROLE app SUPERUSER");
    let run_with = |password: &str| {
        let url = |port: u16| format!("postgres://app:{password}@127.0.0.1:{port}/postgres");
        let r = run(&[
            "replica",
            "--via",
            "pgpool",
            "--format",
            "json",
            "--database-url",
            &url(srv.cluster.port),
            "--standby-url",
            &url(standby.port),
        ]);
        assert_eq!(r.code, 0, "{}", r.why());
        let report: Value = serde_json::from_str(&r.stdout).unwrap();
        (report["variants"].as_array().unwrap().clone(), r)
    };
    // 'pw:with\colon', as with_passwords sets it.
    let (variants, r) = run_with("pw%3Awith%5Ccolon");
    assert_eq!(variants.len(), 4);
    for v in &variants {
        assert!(v["skipped"] == true, "{v}");
        assert!(v["skip_reason"].as_str().unwrap().contains("colon"), "{v}");
    }
    assert!(!r.stdout.contains("with\\colon") && !r.stderr.contains("with\\colon"));
    srv.exec(&c, "ALTER ROLE app PASSWORD 'pgpool-secret'");
    // The standby knows the new password once it has replayed the change:
    // until then lab is rightly refused there (exit 2).
    let lsn: String = srv
        .rt
        .block_on(c.query_one("SELECT pg_current_wal_lsn()::text", &[]))
        .unwrap()
        .get(0);
    let on_standby = srv
        .rt
        .block_on(lab::postgres::connect::connect(
            &standby.config(),
            "lab-test",
            None,
            None,
        ))
        .expect("the standby takes a connection");
    srv.wait_for(
        &on_standby.client,
        &format!("SELECT (pg_last_wal_replay_lsn() >= '{lsn}'::pg_lsn)::int::bigint"),
        1,
    );
    let (variants, r) = run_with("pgpool-secret");
    for v in &variants {
        assert!(v["skipped"] == false && v["as_expected"] == true, "{v}");
    }
    assert!(!r.stdout.contains("pgpool-secret") && !r.stderr.contains("pgpool-secret"));
    assert_eq!(
        srv.query_i64(&c, "SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'lab%'"),
        0
    );
}

#[test]
fn lab_replica_on_the_users_own_pair() {
    let srv = TestServer::start();
    let standby = srv.cluster.standby().expect("a streaming standby starts");
    let r = run(&[
        "replica",
        "--format",
        "json",
        "--database-url",
        &srv.url(),
        "--standby-url",
        &standby.url(),
    ]);
    assert_eq!(r.code, 0, "{}{}", r.stderr, r.stdout);
    let report: Value = serde_json::from_str(&r.stdout).unwrap();
    for v in report["variants"].as_array().unwrap() {
        let name = v["name"].as_str().unwrap();
        if ["stale-read", "lsn-token", "sticky-by-time"].contains(&name) || name.starts_with("pgpool-") {
            // Replay paused and resumed on the user's standby (read through
            // lab's own pgpool-II in front of the pair); nothing else changed there.
            assert!(v["skipped"] == false && v["as_expected"] == true, "{v}");
        } else {
            // They would change the user's settings: skipped, with why.
            assert!(v["skipped"] == true, "{v}");
            assert!(v["skip_reason"].as_str().unwrap().contains("lab's own"), "{v}");
        }
    }
    // A server that is not a standby, and a standby of another primary, are refused.
    let r = run(&["replica", "--database-url", &srv.url(), "--standby-url", &srv.url()]);
    one_line_exit_2(&r, "is not a standby");
    let other = TestServer::start();
    let theirs = other.cluster.standby().expect("another standby");
    let r = run(&["replica", "--database-url", &srv.url(), "--standby-url", &theirs.url()]);
    one_line_exit_2(&r, "does not replicate from --database-url's server");
    let c = srv.client();
    assert_eq!(
        srv.query_i64(&c, "SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'lab%'"),
        0
    );
}
