//! The network failing under a run: lab's fault proxy stands between lab and
//! a test server, and one session's connection is black-holed, reset or
//! delayed at a wait the server confirmed, or while its statement runs. A
//! lost connection is exit 2 within lab's deadline, naming the session and
//! the step, with partial JSON and JUnit, and nothing left on the server; a
//! delay only makes a wait longer and changes no verdict.
use std::io::Read;
use std::process::Stdio;
use std::time::{Duration, Instant};

use lab::postgres::faults::{Fault, Proxy};
use serde_json::Value;

use crate::support::{TestServer, lab};

/// Where the fault meets the run: the scenario, its variant, the session,
/// the step, and what the server shows when that moment has come.
struct Moment {
    scenario: &'static str,
    variant: &'static str,
    session: &'static str,
    step: &'static str,
    /// A condition on that session's backend, in `pg_stat_activity`.
    when: &'static str,
}

/// B waits for A's row until its lock_timeout (--timeout-ms): a wait that
/// lasts, so the test sees it however busy the machine is (lost-update's
/// B waits only until lab, having seen the wait, lets A commit).
const AT_A_WAIT: Moment = Moment {
    scenario: "timeouts",
    variant: "lock-timeout",
    session: "B",
    step: "b_lock",
    when: "wait_event_type = 'Lock'",
};

const MID_STATEMENT: Moment = Moment {
    scenario: "timeouts",
    variant: "statement-timeout",
    session: "B",
    step: "b_long_query",
    when: "state = 'active' AND query LIKE 'SELECT pg_sleep%'",
};

struct Outcome {
    code: i32,
    stderr: String,
    json: Value,
    junit: String,
}

/// Runs the moment's variant against `srv` through a fault proxy and puts
/// `fault` on the session's connection when the server shows the moment.
fn run_with(srv: &TestServer, m: &Moment, fault: Fault) -> Outcome {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let proxy = rt.block_on(Proxy::start(&srv.cluster.config())).unwrap();
    let url = format!("postgres://postgres@127.0.0.1:{}/postgres", proxy.addr.port());
    let junit = std::env::temp_dir().join(format!(
        "lab-network-{}-{}-{:?}.xml",
        std::process::id(),
        m.variant,
        fault
    ));
    let mut child = lab()
        .args([
            m.scenario,
            "--variant",
            m.variant,
            "--format",
            "json",
            "--wait-timeout",
            "3",
            // The wait and the statement the fault meets last this long (the
            // deadline is at least three times it).
            "--timeout-ms",
            "1000",
        ])
        .args(["--database-url", &url, "--junit"])
        .arg(&junit)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let reader = crate::support::stdout_of(&mut child);
    let app = format!("lab:lab:{}/{}:{}", m.scenario, m.variant, m.session);
    let c = srv.client();
    let seen = format!(
        "SELECT count(*) FROM pg_stat_activity WHERE application_name = '{app}' AND {}",
        m.when
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    while srv.query_i64(&c, &seen) == 0 {
        assert!(Instant::now() < deadline, "never saw {app}: {}", m.when);
        assert!(child.try_wait().unwrap().is_none(), "lab ended before the fault");
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(proxy.set(&app, fault), 1, "one connection of {app}");
    // lab's deadline bounds it (twice --wait-timeout at most, then clean-up); never the kernel's TCP timeout.
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "lab did not end after the fault");
        std::thread::sleep(Duration::from_millis(5));
    };
    let mut stderr = String::new();
    child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    let json = serde_json::from_str(&reader.join().unwrap()).expect("stdout is JSON");
    let junit_text = std::fs::read_to_string(&junit).expect("the JUnit file is written");
    let _ = std::fs::remove_file(&junit);
    rt.block_on(proxy.stop());
    // Nothing of the run is left on the server: no backend, no lock, no schema.
    srv.wait_for_zero(
        &c,
        "SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE 'lab:%'",
    );
    assert_eq!(
        srv.query_i64(&c, "SELECT count(*) FROM pg_namespace WHERE nspname = 'lab'"),
        0
    );
    Outcome {
        code: status.code().unwrap_or(-1),
        stderr,
        json,
        junit: junit_text,
    }
}

/// A lost connection: exit 2, one line naming the session and the step, the
/// partial report saying where it stopped.
fn assert_lost(o: &Outcome, m: &Moment) {
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert_eq!(o.stderr.lines().count(), 1, "{}", o.stderr);
    assert!(o.stderr.contains(&format!("session {}", m.session)), "{}", o.stderr);
    assert!(o.stderr.contains(m.step), "{}", o.stderr);
    let error = &o.json["error"];
    assert_eq!(error["variant"], m.variant, "{}", o.json);
    assert_eq!(error["exit_code"], 2);
    assert!(o.stderr.contains(error["message"].as_str().unwrap()), "{}", o.stderr);
    let doc = roxmltree::Document::parse(&o.junit).unwrap();
    assert_eq!(doc.root_element().attribute("errors"), Some("1"));
}

/// A delay: the run ends as documented, the wait only longer.
fn assert_unchanged(o: &Outcome, m: &Moment) {
    assert_eq!(o.code, 0, "{}", o.stderr);
    let v = crate::support::variant(&o.json, m.variant);
    crate::support::assert_documented(v);
}

#[test]
fn a_black_hole_at_a_confirmed_wait_is_exit_2_within_the_deadline() {
    let srv = TestServer::start();
    assert_lost(&run_with(&srv, &AT_A_WAIT, Fault::BlackHole), &AT_A_WAIT);
}

#[test]
fn a_black_hole_while_a_statement_runs_is_exit_2_within_the_deadline() {
    let srv = TestServer::start();
    assert_lost(&run_with(&srv, &MID_STATEMENT, Fault::BlackHole), &MID_STATEMENT);
}

#[test]
fn a_reset_at_a_confirmed_wait_is_exit_2_at_once() {
    let srv = TestServer::start();
    assert_lost(&run_with(&srv, &AT_A_WAIT, Fault::Reset), &AT_A_WAIT);
}

#[test]
fn a_reset_while_a_statement_runs_is_exit_2_at_once() {
    let srv = TestServer::start();
    assert_lost(&run_with(&srv, &MID_STATEMENT, Fault::Reset), &MID_STATEMENT);
}

#[test]
fn a_delay_at_a_confirmed_wait_changes_no_verdict() {
    let srv = TestServer::start();
    let o = run_with(&srv, &AT_A_WAIT, Fault::Delay(Duration::from_millis(300)));
    assert_unchanged(&o, &AT_A_WAIT);
}

#[test]
fn a_delay_while_a_statement_runs_changes_no_verdict() {
    let srv = TestServer::start();
    let o = run_with(&srv, &MID_STATEMENT, Fault::Delay(Duration::from_millis(300)));
    assert_unchanged(&o, &MID_STATEMENT);
}

/// What a run whose own connection (`app`) was black-holed did.
struct Silenced {
    code: i32,
    stderr: String,
    /// Its backend, as the server showed it before the fault.
    pid: i64,
}

/// Runs lab with `args` against `srv` through a fault proxy and black-holes
/// its connection `app` (lab's control connection, `lab locks`'s) once the
/// server shows `ready`; then waits for lab to end (a hang fails the test).
fn black_hole_own(srv: &TestServer, args: &[&str], app: &str, ready: &str) -> Silenced {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let proxy = rt.block_on(Proxy::start(&srv.cluster.config())).unwrap();
    let url = format!("postgres://postgres@127.0.0.1:{}/postgres", proxy.addr.port());
    let mut child = lab()
        .args(args)
        .args(["--database-url", &url])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let c = srv.client();
    let deadline = Instant::now() + Duration::from_secs(30);
    while srv.query_i64(&c, ready) == 0 {
        assert!(Instant::now() < deadline, "never saw: {ready}");
        assert!(child.try_wait().unwrap().is_none(), "lab ended before the fault");
        std::thread::sleep(Duration::from_millis(1));
    }
    let pid = srv.query_i64(
        &c,
        &format!("SELECT pid::bigint FROM pg_stat_activity WHERE application_name = '{app}'"),
    );
    assert_eq!(proxy.set(app, Fault::BlackHole), 1, "one connection of {app}");
    // The kernel would wait for ever: the proxy acknowledges nothing, and
    // the server's side of the connection stays open and idle.
    let deadline = Instant::now() + Duration::from_secs(90);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("lab did not end after its own connection went silent");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let mut stderr = String::new();
    child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    rt.block_on(proxy.stop());
    Silenced {
        code: status.code().unwrap_or(-1),
        stderr,
        pid,
    }
}

#[test]
fn a_black_hole_on_the_control_connection_ends_the_run_and_a_new_one_cleans_up() {
    let srv = TestServer::start();
    // One cell at a time: once the first cell's schema is there, every
    // later cell needs the control connection (its CREATE SCHEMA at least).
    let first = "SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'lab\\_ph\\_%'";
    let o = black_hole_own(
        &srv,
        &["phenomena", "--jobs", "1", "--wait-timeout", "3"],
        "lab:phenomena:control",
        first,
    );
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert_eq!(o.stderr.lines().count(), 1, "{}", o.stderr);
    assert!(o.stderr.contains("control connection"), "{}", o.stderr);
    assert!(o.stderr.contains("got no answer for 10 s"), "{}", o.stderr);
    // A new control connection dropped the cells' schemas and ended the
    // silent one's backend, which the server would otherwise keep.
    let c = srv.client();
    srv.wait_for_zero(
        &c,
        "SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE 'lab:%'",
    );
    assert!(o.pid > 0);
    assert_eq!(srv.query_i64(&c, first), 0);
}

#[test]
fn a_black_hole_under_lab_locks_ends_it() {
    let srv = TestServer::start();
    let o = black_hole_own(
        &srv,
        &["locks", "--every", "0.1"],
        "lab-locks",
        "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'lab-locks'",
    );
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(o.stderr.contains("got no answer for 10 s"), "{}", o.stderr);
    assert_eq!(o.stderr.lines().count(), 1, "{}", o.stderr);
}

/// A TCP proxy in front of `upstream` that forwards everything, except
/// for the first connection whose startup packet names an
/// application_name ending in `victim`: after `chunks` reads from its
/// client, nothing passes either way any more, and both sockets stay open
/// (the server keeps its backend, as behind a network that lost the client).
/// Lives as long as the test.
fn silencing_proxy(upstream: u16, victim: &'static str, chunks: usize) -> u16 {
    use std::io::Write;
    use std::net::{TcpListener, TcpStream};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let taken = Arc::new(AtomicBool::new(false));
    std::thread::spawn(move || {
        for client in listener.incoming().flatten() {
            let server = TcpStream::connect(("127.0.0.1", upstream)).unwrap();
            let _ = client.set_nodelay(true);
            let _ = server.set_nodelay(true);
            let silent = Arc::new(AtomicBool::new(false));
            let taken = taken.clone();
            let pipe = move |mut from: TcpStream, mut to: TcpStream, up: bool, silent: Arc<AtomicBool>| {
                let mut buf = vec![0u8; 65536];
                let mut reads = 0;
                let mut victim_here = false;
                while let Ok(n) = from.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    reads += 1;
                    if up && reads == 1 {
                        let startup = String::from_utf8_lossy(&buf[..n]).into_owned();
                        let app = startup.split('\0').skip_while(|k| *k != "application_name").nth(1);
                        victim_here = app.is_some_and(|a| a.ends_with(victim)) && !taken.swap(true, Ordering::SeqCst);
                    }
                    if victim_here && reads > chunks {
                        silent.store(true, Ordering::SeqCst);
                    }
                    if silent.load(Ordering::SeqCst) {
                        continue;
                    }
                    if to.write_all(&buf[..n]).is_err() {
                        break;
                    }
                }
                if !silent.load(Ordering::SeqCst) {
                    let _ = to.shutdown(std::net::Shutdown::Write);
                } else {
                    // Silent for good: the sockets stay open until the test ends.
                    std::mem::forget(to);
                }
            };
            let (c2, s2, quiet) = (client.try_clone().unwrap(), server.try_clone().unwrap(), silent.clone());
            let p = pipe.clone();
            std::thread::spawn(move || p(client, server, true, silent));
            std::thread::spawn(move || pipe(s2, c2, false, quiet));
        }
    });
    port
}

/// A session whose connection goes silent after its handshake (its setup
/// SETs, or its first question) fails the run within the deadline, and
/// lab ends the backend the server started for it: the server would keep
/// it, idle, until its TCP keepalive gave up (two hours by default).
#[test]
fn a_session_silent_after_its_handshake_leaves_no_backend() {
    let srv = TestServer::start();
    let c = srv.client();
    for chunks in [1, 2] {
        let port = silencing_proxy(srv.cluster.port, ":T1", chunks);
        let url = format!("postgres://postgres@127.0.0.1:{port}/postgres");
        let r = crate::support::run(&[
            "phenomena",
            "--show",
            "p4",
            "--level",
            "read-committed",
            "--wait-timeout",
            "3",
            "--database-url",
            &url,
        ]);
        assert_eq!(r.code, 2, "{}", r.why());
        assert!(r.stderr.contains("could not open session T1"), "{}", r.stderr);
        // The proxy still holds both sockets open: only lab can have ended it.
        srv.wait_for_zero(
            &c,
            "SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE 'lab:%'",
        );
        assert_eq!(
            srv.query_i64(
                &c,
                "SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'lab\\_ph\\_%'"
            ),
            0
        );
    }
}

/// A scenario run holds its schema by an advisory lock on its control
/// connection. That connection black-holed mid-scenario: the run ends
/// (exit 2), and the new control connection ends the old one's backend,
/// waits for its lock to go, claims the schema and drops it.
#[test]
fn a_black_hole_on_a_scenario_runs_control_connection_leaves_nothing() {
    let srv = TestServer::start();
    let o = black_hole_own(
        &srv,
        &["lost-update", "--wait-timeout", "3"],
        "lab:lab:control",
        "SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE 'lab:lab:lost-update/%'",
    );
    let c = srv.client();
    srv.wait_for_zero(
        &c,
        "SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE 'lab:%'",
    );
    assert!(o.pid > 0);
    // The run may have finished its variants before it needed the control
    // connection again; either way nothing is left and the exit says which.
    assert!(o.code == 2 || o.code == 0, "{}", o.stderr);
    if o.code == 2 {
        assert!(o.stderr.contains("got no answer for 10 s"), "{}", o.stderr);
    }
    assert_eq!(
        srv.query_i64(&c, "SELECT count(*) FROM pg_namespace WHERE nspname = 'lab'"),
        0,
        "{}",
        o.stderr
    );
    assert_eq!(
        srv.query_i64(&c, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'"),
        0
    );
}
