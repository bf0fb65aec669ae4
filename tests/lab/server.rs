use crate::support::{TestServer, assert_documented, metric, run, variant};
use std::time::{Duration, Instant};

const LAB_BACKENDS: &str = "SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE 'lab:%'";

#[test]
fn runs_against_an_existing_server_and_leaves_nothing() {
    let srv = TestServer::start();
    let c = srv.client();
    srv.exec(
        &c,
        "CREATE TABLE public.bystander (id int); INSERT INTO public.bystander VALUES (1)",
    );
    let r = run(&["lost-update", "--format", "json", "--database-url", &srv.url()]);
    assert_eq!(r.code, 0, "{}", r.why());
    // Only its own schema was created, and it is gone; nothing else was touched.
    assert_eq!(
        srv.query_i64(&c, "SELECT count(*) FROM pg_namespace WHERE nspname = 'lab'"),
        0
    );
    assert_eq!(srv.query_i64(&c, "SELECT count(*) FROM public.bystander"), 1);
    // lab has exited; its backends end as the server notices the closed sockets.
    srv.wait_for_zero(&c, LAB_BACKENDS);

    let r = run(&[
        "lost-update",
        "--variant",
        "read-committed",
        "--keep-schema",
        "--database-url",
        &srv.url(),
    ]);
    assert_eq!(r.code, 0, "{}", r.why());
    assert_eq!(srv.query_i64(&c, "SELECT count(*) FROM lab.books"), 5);
}

#[test]
fn a_second_run_on_the_same_schema_is_refused_and_another_schema_works() {
    let srv = TestServer::start();
    let c = srv.client();
    // Hold the run lock exactly as a running lab's control connection does.
    srv.exec(&c, "SELECT pg_advisory_lock(hashtext('lab-run'), hashtext('lab'))");
    let r = run(&["lost-update", "--database-url", &srv.url()]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("another lab run is using schema \"lab\""),
        "{}",
        r.stderr
    );
    assert_eq!(r.stderr.lines().count(), 1);

    let r = run(&[
        "lost-update",
        "--format",
        "json",
        "--schema",
        "lab_room2",
        "--database-url",
        &srv.url(),
    ]);
    assert_eq!(r.code, 0, "{}", r.why());

    srv.exec(&c, "SELECT pg_advisory_unlock_all()");
    let r = run(&["lost-update", "--format", "json", "--database-url", &srv.url()]);
    assert_eq!(r.code, 0, "{}", r.why());
}

#[test]
fn a_schema_lab_did_not_create_is_never_touched() {
    let srv = TestServer::start();
    let c = srv.client();
    srv.exec(
        &c,
        "CREATE SCHEMA lab; CREATE TABLE lab.precious (id int); INSERT INTO lab.precious VALUES (42)",
    );
    let r = run(&["lost-update", "--database-url", &srv.url()]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("was not created by lab"), "{}", r.stderr);
    assert_eq!(srv.query_i64(&c, "SELECT id::bigint FROM lab.precious"), 42);
}

#[test]
fn libpq_variables_select_the_server() {
    let srv = TestServer::start();
    let port = srv.cluster.port.to_string();
    let r = crate::support::run_cmd(
        crate::support::lab()
            .args(["lost-update", "--variant", "atomic-update", "--keep-schema"])
            .env("PGHOST", "127.0.0.1")
            .env("PGPORT", &port)
            .env("PGUSER", "postgres")
            .env("PGDATABASE", "postgres"),
    );
    assert_eq!(r.code, 0, "{}", r.why());
    // It ran there, not on a cluster of its own: the kept schema is on this server.
    let c = srv.client();
    assert_eq!(
        srv.query_i64(
            &c,
            "SELECT quantity_on_hand::bigint FROM lab.stock_items WHERE book_id = 1"
        ),
        34
    );

    // A run on a schema that was there before it (as `lab server`'s is, for
    // the room's psql windows) leaves it there, made again with its seed
    // rows, and only its own backends go.
    let r = run(&[
        "lost-update",
        "--variant",
        "atomic-update",
        "--database-url",
        &srv.url(),
    ]);
    assert_eq!(r.code, 0, "{}", r.why());
    assert_eq!(
        srv.query_i64(
            &c,
            "SELECT quantity_on_hand::bigint FROM lab.stock_items WHERE book_id = 1"
        ),
        36
    );
    srv.wait_for_zero(&c, LAB_BACKENDS);
}

#[test]
fn server_command_prints_a_url_and_cleans_up_on_ctrl_c() {
    use std::io::{BufRead, BufReader};
    let mut child = crate::support::lab()
        .arg("server")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let url = lines
        .by_ref()
        .map_while(Result::ok)
        .find_map(|l| l.strip_prefix("DATABASE_URL=").map(str::to_string))
        .expect("a DATABASE_URL line");
    // The printed URL works, and the lab schema is there.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let config = lab::postgres::conninfo::parse_url(&url, &|_| None, lab::i18n::Lang::En).unwrap();
    let client = rt
        .block_on(lab::postgres::connect::connect(&config, "lab-test", None, None))
        .unwrap()
        .client;
    let books: i64 = rt
        .block_on(client.query_one("SELECT count(*) FROM lab.books", &[]))
        .unwrap()
        .get(0);
    assert_eq!(books, 5);
    // The room's lock view shows no session of lab server's own.
    let view = run(&["locks", "--once", "--database-url", &url]);
    assert_eq!(view.code, 0, "{}", view.stderr);
    assert!(!view.stdout.contains("(pid: "), "{}", view.stdout);
    drop(client);
    unsafe { libc::kill(pid as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
    crate::support::assert_no_leftovers(pid);
}

#[test]
fn sigkill_leaves_no_server_running_and_the_next_run_cleans_up() {
    use std::io::{BufRead, BufReader};
    let mut child = crate::support::lab()
        .arg("server")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    assert!(
        lines
            .by_ref()
            .map_while(Result::ok)
            .any(|l| l.starts_with("DATABASE_URL="))
    );
    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    child.wait().unwrap();
    // The kernel told the server its parent died (PR_SET_PDEATHSIG): it shuts down.
    let prefix = format!("lab-pg-{pid}-");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let running = std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
            .any(|c| String::from_utf8_lossy(&c).contains(&prefix));
        if !running {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the server outlived lab");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // The next start removes what the killed run left.
    let r = run(&["list"]);
    assert_eq!(r.code, 0);
    let _ = run(&["lost-update", "--variant", "read-committed"]);
    crate::support::assert_no_leftovers(pid);
}

/// With the detector at its fastest (deadlock_timeout = 1ms) the deadlock is
/// found while lab is still confirming the waits: the one victim, the
/// survivor's wait and the DETAIL must be read the same way on every run.
#[test]
fn a_deadlock_found_within_a_millisecond_is_read_the_same_every_time() {
    let srv = TestServer::start();
    let c = srv.client();
    // ALTER SYSTEM refuses to run in a transaction: one statement per call.
    srv.exec(&c, "ALTER SYSTEM SET deadlock_timeout = '1ms'");
    srv.exec(&c, "SELECT pg_reload_conf()");
    // The reload is asynchronous: the backends take it when they see the signal.
    srv.wait_for(
        &c,
        "SELECT setting::bigint FROM pg_settings WHERE name = 'deadlock_timeout'",
        1,
    );
    let url = srv.url();
    let mut victims = Vec::new();
    for _ in 0..10 {
        let r = run(&[
            "deadlock",
            "--variant",
            "reverse-order",
            "--format",
            "json",
            "--database-url",
            &url,
        ]);
        assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
        let report: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
        let v = variant(&report, "reverse-order");
        assert_documented(v);
        assert_eq!(metric(v, "deadlock_timeout_ms"), 1);
        victims.push(metric(v, "victim").as_str().unwrap().to_string());
    }
    eprintln!("victims: {victims:?}");
}

/// The scenarios whose sessions the server lists at this moment, by name.
fn scenarios_running(srv: &TestServer, c: &tokio_postgres::Client) -> std::collections::BTreeSet<String> {
    srv.rt
        .block_on(c.query(
            "SELECT DISTINCT split_part(split_part(application_name, ':', 3), '/', 1) FROM pg_stat_activity \
             WHERE application_name LIKE 'lab:lab:%/%'",
            &[],
        ))
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect()
}

#[test]
fn lab_all_runs_scenarios_side_by_side_with_the_same_verdicts_in_the_catalogue_order() {
    let srv = TestServer::start();
    let c = srv.client();
    let mut child = crate::support::lab()
        .args(["all", "--format", "json", "--database-url", &srv.url()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut s).unwrap();
        s
    });
    // Seen from the server: sessions of several scenarios at the same moment.
    let mut most = 0;
    while child.try_wait().unwrap().is_none() {
        most = most.max(scenarios_running(&srv, &c).len());
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let status = child.wait().unwrap();
    let report: serde_json::Value = serde_json::from_str(&reader.join().unwrap()).unwrap();
    assert_eq!(status.code(), Some(0), "{report}");
    assert!(most >= 2, "never saw two scenarios at once ({most})");
    assert_eq!(report["as_expected"], true);
    let order: Vec<&str> = report["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["scenario"].as_str().unwrap())
        .collect();
    // lab all runs every scenario but those it runs only when named (failover).
    let catalogue: Vec<&str> = lab::commands::scenarios::ALL
        .iter()
        .map(|s| s.name)
        .filter(|n| !lab::commands::scenarios::ON_REQUEST.contains(n))
        .collect();
    assert_eq!(order, catalogue);
    for s in report["scenarios"].as_array().unwrap() {
        for v in s["variants"].as_array().unwrap() {
            assert_documented(v);
        }
    }
    // Every scenario's own schema is gone.
    assert_eq!(
        srv.query_i64(&c, "SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'lab%'"),
        0
    );
    srv.wait_for_zero(&c, LAB_BACKENDS);
}

/// On lab's throwaway server replica runs beside the others in a database
/// of its own (another scenario's open transaction would keep the rows its
/// VACUUM must remove); queue and stock-race run beside them too.
#[test]
fn on_the_throwaway_server_replica_runs_beside_the_others_in_its_own_database() {
    replica_beside_the_others(&[]);
}

/// The same behind lab's pooler: replica's pool connects to its database,
/// and its sessions' transactions went through it. hot-standby-feedback is
/// among them: beside the others there its report was once cancelled (cleanup
/// replayed under a report that started before the standby's first feedback).
#[test]
fn behind_the_pooler_replica_runs_beside_the_others_in_its_own_database() {
    replica_beside_the_others(&["--pooler", "--variant", "replica/hot-standby-feedback"]);
}

fn replica_beside_the_others(more: &[&str]) {
    let mut args = vec![
        "all",
        "--format",
        "json",
        "--variant",
        "replica/snapshot-conflict",
        "--variant",
        "replica/stale-read",
        "--variant",
        "timeouts/idle-in-transaction",
        "--variant",
        "queue/skip-locked",
        "--variant",
        "stock-race/oversell",
    ];
    args.extend(more);
    let pooled = more.contains(&"--pooler");
    let r = crate::support::run(&args);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let report: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let mut replica = 0;
    for s in report["scenarios"].as_array().unwrap() {
        for v in s["variants"].as_array().unwrap() {
            assert_documented(v);
            let m = &v["metrics"];
            if pooled {
                assert!(m["pooler_transactions"].as_i64().unwrap() > 0, "{m}");
            }
            if s["scenario"] == "replica" {
                assert_eq!(m["database"], "lab_replica", "{m}");
                replica += 1;
            }
        }
    }
    assert_eq!(replica, if pooled { 3 } else { 2 });
}

#[test]
fn ctrl_c_while_scenarios_run_side_by_side_leaves_nothing() {
    let srv = TestServer::start();
    let c = srv.client();
    let mut child = crate::support::lab()
        .args(["all", "--database-url", &srv.url()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while scenarios_running(&srv, &c).len() < 2 {
        assert!(std::time::Instant::now() < deadline, "never saw two scenarios at once");
        assert!(child.try_wait().unwrap().is_none(), "lab ended early");
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    assert_eq!(child.wait().unwrap().code(), Some(130));
    srv.wait_for_zero(&c, LAB_BACKENDS);
    let left: Vec<String> = srv
        .rt
        .block_on(c.query("SELECT nspname::text FROM pg_namespace WHERE nspname LIKE 'lab%'", &[]))
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert!(left.is_empty(), "schemas left: {left:?}");
}

/// A step overdue is cancelled (or terminated) by its backend's pid, read
/// when the session opened. Pids come round again: the signal reaches the
/// backend holding the pid only if it had started by the time the pid was
/// read from it. A backend that started later (here: a "since" long before
/// it) is not signalled at all, as the server says (no row); the backend
/// the pid was read from is.
#[test]
fn a_signal_reaches_only_the_backend_its_pid_was_read_from() {
    use lab::engine::env::signal_sql;
    use lab::engine::{Opener, Recorder};
    let srv = TestServer::start();
    srv.rt.block_on(async {
        let env = srv.env("public").await;
        let opener = Opener::new(
            &env,
            "lab:signal-test:".into(),
            "signal-test".into(),
            Recorder::default(),
        );
        let s = opener.open("A").await.unwrap();
        let (pid, since) = s.backend();
        let since = since.expect("read with the pid").to_string();
        let mut sent = s.send("SELECT pg_sleep(60)");
        let running = format!("SELECT state FROM pg_stat_activity WHERE pid = {pid}");
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let rows = lab::postgres::connect::text_rows(&env.control.simple_query(&running).await.unwrap());
            if rows.first().and_then(|r| r[0].as_deref()) == Some("active") {
                break;
            }
            assert!(Instant::now() < deadline, "A's statement never ran");
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        let signalled = |sql: String| {
            let control = env.control.clone();
            async move { lab::postgres::connect::text_rows(&control.simple_query(&sql).await.unwrap()) }
        };
        // 1970: the backend holding the pid started after that.
        assert!(signalled(signal_sql(false, pid, Some("1"))).await.is_empty());
        assert!(!sent.ready(), "a backend newer than the pid's reading was cancelled");
        let rows = signalled(signal_sql(false, pid, Some(&since))).await;
        assert_eq!(rows, [[Some("t".to_string())]]);
        assert!(sent.ready_within(Duration::from_secs(10)).await, "not cancelled");
        let (answer, _) = sent.take().unwrap();
        assert_eq!(answer.unwrap_err().code.as_deref(), Some("57014"));
        // What is not a number is not put in the statement: no guard then.
        assert_eq!(signal_sql(true, 7, Some("1; DROP")), "SELECT pg_terminate_backend(7)");
    });
}
