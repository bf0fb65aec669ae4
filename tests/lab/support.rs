use std::io::{Read as _, Write};
use std::process::{Child, ChildStdin, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

pub fn lab() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_lab"));
    // The tests choose their server explicitly.
    for v in [
        "DATABASE_URL",
        "PGHOST",
        "PGPORT",
        "PGUSER",
        "PGDATABASE",
        "PGPASSWORD",
        "PGPASSFILE",
        "PGSERVICE",
        "PGSERVICEFILE",
        "LAB_SCHEMA",
        "LAB_DIR",
        "COLUMNS",
        // Run in GitHub Actions, lab would add each test's run to the job's summary.
        "GITHUB_STEP_SUMMARY",
    ] {
        c.env_remove(v);
    }
    c.stdin(Stdio::null());
    c
}

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
    pub took: Duration,
}

impl Run {
    /// Why a run did not exit 0, for an assertion's message: its stderr, and
    /// from its JSON (when it printed some) each variant not as documented
    /// with the checks that failed, or the scenario's error.
    pub fn why(&self) -> String {
        let mut out = self.stderr.clone();
        let Ok(report) = serde_json::from_str::<Value>(&self.stdout) else {
            return out;
        };
        let scenarios = match report.get("scenarios").and_then(Value::as_array) {
            Some(all) => all.clone(),
            None => vec![report],
        };
        for s in &scenarios {
            for v in s["variants"].as_array().into_iter().flatten() {
                if v["as_expected"] == false {
                    out += &format!("\n{}/{}: {:?}", s["scenario"], v["name"], failed_checks(v));
                }
            }
            if !s["error"].is_null() {
                out += &format!("\n{}: error {}", s["scenario"], s["error"]);
            }
        }
        out
    }
}

/// Exit 2 with one line on stderr, an error that contains `needle`.
pub fn one_line_exit_2(r: &Run, needle: &str) {
    assert_eq!(r.code, 2, "stderr: {}", r.stderr);
    let lines: Vec<&str> = r.stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "{:?}", r.stderr);
    assert!(
        lines[0].starts_with("error: ") && lines[0].contains(needle),
        "{}",
        lines[0]
    );
}

pub fn run(args: &[&str]) -> Run {
    run_cmd(lab().args(args))
}

pub fn run_cmd(cmd: &mut Command) -> Run {
    let began = Instant::now();
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("lab starts");
    let pid = child.id();
    let Output { status, stdout, stderr } = child.wait_with_output().expect("lab finishes");
    let r = Run {
        code: status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
        took: began.elapsed(),
    };
    assert_no_leftovers(pid);
    r
}

/// Runs a scenario on its own throwaway cluster and returns the JSON report.
pub fn scenario_json(scenario: &str, extra: &[&str]) -> Value {
    let mut args = vec![scenario, "--format", "json"];
    args.extend_from_slice(extra);
    let r = run(&args);
    assert!(
        r.code == 0 || r.code == 1,
        "lab {args:?} could not run (exit {}): {}",
        r.code,
        r.stderr
    );
    serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("bad JSON ({e}): {}", r.stdout))
}

pub fn variant<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["variants"]
        .as_array()
        .expect("variants")
        .iter()
        .find(|v| v["name"] == name)
        .unwrap_or_else(|| panic!("no variant {name} in {report}"))
}

/// Asserts a variant behaved as documented, showing its observation if not.
pub fn assert_documented(v: &Value) {
    assert_eq!(
        v["as_expected"],
        true,
        "{} not as documented: {}; failed: {:?}",
        v["name"],
        v["observed"],
        failed_checks(v)
    );
}

/// The timeline entries of one step (by its spec or SQL file name).
pub fn step<'a>(v: &'a Value, name: &str) -> Vec<&'a Value> {
    v["timeline"]
        .as_array()
        .expect("timeline")
        .iter()
        .filter(|e| e["step"] == name)
        .collect()
}

/// The ids of the checks that failed.
pub fn failed_checks(v: &Value) -> Vec<String> {
    v["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .filter(|c| c["ok"] == false)
        .map(|c| format!("{}: {}", c["id"].as_str().unwrap(), c["text"].as_str().unwrap()))
        .collect()
}

pub fn metric(v: &Value, key: &str) -> Value {
    v["metrics"]
        .get(key)
        .cloned()
        .unwrap_or_else(|| panic!("{}: no metric {key} in {}", v["name"], v["metrics"]))
}

/// No temp dir and no server of a finished lab process remain.
pub fn assert_no_leftovers(pid: u32) {
    let prefix = format!("lab-pg-{pid}-");
    let left: Vec<_> = std::fs::read_dir(lab::postgres::cluster::run_root())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .map(|e| e.path())
        .collect();
    assert!(left.is_empty(), "lab (pid {pid}) left {left:?} behind");
    let servers = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .filter(|c| String::from_utf8_lossy(c).contains(&prefix))
        .count();
    assert_eq!(servers, 0, "a server of lab (pid {pid}) is still running");
}

/// A throwaway cluster owned by the test (removed when dropped), for tests
/// that point lab at an existing server.
pub struct TestServer {
    pub cluster: lab::postgres::cluster::Cluster,
    pub rt: tokio::runtime::Runtime,
}

impl TestServer {
    pub fn start() -> TestServer {
        TestServer::started(None)
    }

    /// One of the PostgreSQL whose programs are in `bin`, whatever the
    /// other tests run on.
    pub fn start_on(bin: &std::path::Path) -> TestServer {
        TestServer::started(Some(bin))
    }

    fn started(bin: Option<&std::path::Path>) -> TestServer {
        let cluster =
            lab::postgres::cluster::Cluster::start(bin, lab::i18n::Lang::En).expect("throwaway cluster starts");
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        TestServer { cluster, rt }
    }

    pub fn url(&self) -> String {
        self.cluster.url()
    }

    pub fn client(&self) -> tokio_postgres::Client {
        self.rt
            .block_on(lab::postgres::connect::connect(
                &self.cluster.config(),
                "lab-test",
                None,
                None,
            ))
            .expect("test connects")
            .client
    }

    pub fn query_i64(&self, client: &tokio_postgres::Client, sql: &str) -> i64 {
        self.rt.block_on(client.query_one(sql, &[])).expect(sql).get(0)
    }

    pub fn exec(&self, client: &tokio_postgres::Client, sql: &str) {
        self.rt.block_on(client.batch_execute(sql)).expect(sql);
    }

    /// Polls a count until it is 0 (the server's own asynchronous work), with a deadline.
    pub fn wait_for_zero(&self, client: &tokio_postgres::Client, sql: &str) {
        self.wait_for(client, sql, 0);
    }

    /// Polls a value until it is `want` (the server's own asynchronous
    /// work: a backend ending, a configuration reload), with a deadline.
    pub fn wait_for(&self, client: &tokio_postgres::Client, sql: &str, want: i64) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.query_i64(client, sql) != want {
            assert!(Instant::now() < deadline, "still not {want} after 10 s: {sql}");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// A run's environment on this server, as the harness makes one (its
    /// objects in `schema`, no neutral settings), for tests that open
    /// sessions themselves.
    pub async fn env(&self, schema: &str) -> lab::engine::Env {
        let control = lab::postgres::connect::connect(&self.cluster.config(), "lab-test:control", None, None)
            .await
            .expect("test connects")
            .client;
        let server = lab::postgres::connect::server_info(&control)
            .await
            .expect("server info");
        lab::engine::Env::new(
            control,
            server,
            lab::engine::env::EnvSpec {
                pg: self.cluster.config(),
                run: "test".into(),
                schema: schema.into(),
                wait_timeout: Duration::from_secs(10),
                neutral: false,
                stepper: None,
                max_connections: None,
                throwaway: None,
                own: None,
            },
        )
        .await
        .expect("the environment is made")
    }

    pub fn data_dir(&self) -> std::path::PathBuf {
        self.cluster.socket_dir().join("data")
    }

    /// The server's log lines about connections it ended (FATAL: a
    /// timeout, pg_terminate_backend...), for the message of a test whose
    /// run lost a session: the server says why, where lab only saw it close.
    pub fn ended_connections(&self) -> String {
        let log = std::fs::read_to_string(self.cluster.socket_dir().join("server.log")).unwrap_or_default();
        let lines: Vec<&str> = log.lines().filter(|l| l.contains("FATAL")).collect();
        format!("\nthe server's FATAL lines:\n{}", lines.join("\n"))
    }

    /// The server goes away at once (SIGQUIT to the postmaster: an
    /// immediate shutdown), as a crashed or failed-over server does.
    pub fn crash(&self) {
        let pidfile = std::fs::read_to_string(self.data_dir().join("postmaster.pid")).unwrap();
        let postmaster: i32 = pidfile.lines().next().unwrap().trim().parse().unwrap();
        unsafe { libc::kill(postmaster, libc::SIGQUIT) };
    }
}

/// A real PgBouncer in front of a test server, with two databases: `tx`
/// (pool_mode = transaction) and `session` (pool_mode = session). It runs as
/// the server's user (PgBouncer refuses root) and is stopped on drop.
pub struct PgBouncer {
    pub port: u16,
    _inner: lab::postgres::pgbouncer::PgBouncer,
}

impl PgBouncer {
    pub fn start(srv: &TestServer) -> PgBouncer {
        PgBouncer::start_with(srv, "")
    }

    /// With `extra` lines in its [pgbouncer] section.
    pub fn start_with(srv: &TestServer, extra: &str) -> PgBouncer {
        use lab::postgres::pgbouncer::Pool;
        let pools = [Pool::new("tx", "transaction", 40), Pool::new("session", "session", 40)];
        let inner = lab::postgres::pgbouncer::PgBouncer::start_with(&srv.cluster.config(), &pools, extra)
            .expect("pgbouncer starts (scripts/test installs the Debian package pgbouncer)");
        PgBouncer {
            port: inner.port,
            _inner: inner,
        }
    }

    pub fn url(&self, database: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{database}", self.port)
    }
}

/// Runs lab (`args`, with `--format json` and a JUnit file) against `srv`,
/// stops it with `stop` once `until` counts 1, and checks how a run stopped
/// part-way ends: exit code `exit`, one line on stderr, JSON on stdout, one
/// JUnit error. Returns the JSON and stderr's line.
pub fn stopped_part_way(
    srv: &TestServer,
    args: &[&std::ffi::OsStr],
    until: &str,
    stop: impl Fn(&TestServer, u32),
    exit: i32,
) -> (Value, String) {
    let c = srv.client();
    let junit = std::env::temp_dir().join(format!(
        "lab-partial-{}-{:?}.xml",
        std::process::id(),
        std::thread::current().id()
    ));
    let child = lab()
        .args(args)
        .args(["--format", "json", "--database-url", &srv.url(), "--junit"])
        .arg(&junit)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    srv.wait_for(&c, until, 1);
    stop(srv, child.id());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(exit), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    let json: Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
    let xml = std::fs::read_to_string(&junit).expect("the JUnit file is written");
    let _ = std::fs::remove_file(&junit);
    let doc = roxmltree::Document::parse(&xml).unwrap();
    assert_eq!(doc.root_element().attribute("errors"), Some("1"));
    (json, err)
}

/// Reads a child's stdout as it comes (a report larger than the pipe must
/// not block lab); the text once it ends.
pub fn stdout_of(child: &mut std::process::Child) -> std::thread::JoinHandle<String> {
    use std::io::Read;
    let mut stdout = child.stdout.take().expect("stdout is piped");
    std::thread::spawn(move || {
        let mut s = String::new();
        stdout.read_to_string(&mut s).unwrap();
        s
    })
}

/// `lab ARGS` in a pseudo-terminal (util-linux `script`), its stdio piped,
/// in the C locale, without the caller's DATABASE_URL or NO_COLOR.
pub fn in_script(args: &str) -> Command {
    in_script_sized(args, None)
}

/// [`in_script`] on a terminal `columns` wide (a bare pty reports no size).
pub fn in_script_sized(args: &str, columns: Option<u16>) -> Command {
    let size = columns.map(|c| format!("stty cols {c} rows 40; ")).unwrap_or_default();
    let mut c = Command::new("script");
    // `exec`: lab alone is the terminal's foreground process group, as when
    // a user's shell starts it. Left in it, the `sh -c` that script starts
    // (dash, where SHELL is unset or /bin/sh) takes a Ctrl-C typed while lab
    // handles it, and dies of it once lab exits: exit 130 that is not lab's.
    c.args([
        "-qec",
        &format!("{size}exec {} {args}", env!("CARGO_BIN_EXE_lab")),
        "/dev/null",
    ])
    // The same shell for script to start wherever the tests run.
    .env("SHELL", "/bin/sh")
    .env("LANG", "C")
    .env_remove("LC_ALL")
    .env_remove("DATABASE_URL")
    .env_remove("NO_COLOR")
    .stdin(Stdio::piped())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    c
}

/// The runs `scripts/version-matrix.sh` saved (SAVE=tests/versions) of
/// `kind` (`all`, `phenomena`), oldest version first.
pub fn version_runs(kind: &str) -> Vec<(Vec<u32>, std::path::PathBuf)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/versions");
    let mut runs: Vec<(Vec<u32>, std::path::PathBuf)> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_str()?.to_string();
            let version = name.strip_prefix(&format!("{kind}-"))?.strip_suffix(".json")?;
            let parts = version
                .split('.')
                .map(|p| p.parse().ok())
                .collect::<Option<Vec<u32>>>()?;
            Some((parts, e.path()))
        })
        .collect();
    runs.sort();
    runs
}

/// The major version of the server a report (lab's JSON) was made on.
pub fn server_major(report: &Value) -> u32 {
    let version = report["server_version"].as_str().expect("server_version");
    version
        .split('.')
        .next()
        .and_then(|m| m.parse().ok())
        .expect("a major version")
}

/// A directory of a test's own under the temporary directory, removed when
/// the test ends, passed or failed (a failing assertion prints what it
/// needs from it first).
pub struct Scratch(std::path::PathBuf);

/// `<tmp>/<prefix>-<pid>-<name>`, empty.
pub fn scratch(prefix: &str, name: &str) -> Scratch {
    let dir = std::env::temp_dir().join(format!("{prefix}-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    Scratch(dir)
}

impl std::ops::Deref for Scratch {
    type Target = std::path::Path;
    fn deref(&self) -> &std::path::Path {
        &self.0
    }
}

impl AsRef<std::path::Path> for Scratch {
    fn as_ref(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// lab in a pseudo-terminal (util-linux `script`), typed at line by line:
/// each line goes in once what it answers has been printed.
pub struct Pty {
    child: Child,
    stdin: ChildStdin,
    out: Arc<Mutex<String>>,
    /// How far `expect` has read.
    seen: usize,
}

impl Pty {
    /// `lab shell ARGS`.
    pub fn start(args: &[&str]) -> Pty {
        Pty::lab(&format!("shell {}", args.join(" ")))
    }

    /// `lab ARGS`.
    pub fn lab(args: &str) -> Pty {
        Pty::sized(args, None)
    }

    /// `lab ARGS` on a terminal `columns` wide (none: a bare pty, no size).
    pub fn sized(args: &str, columns: Option<u16>) -> Pty {
        let mut child = in_script_sized(args, columns)
            .env("NO_COLOR", "1")
            .spawn()
            .expect("script (util-linux) runs");
        let stdin = child.stdin.take().unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let out = Arc::new(Mutex::new(String::new()));
        let sink = out.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = stdout.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        Pty {
            child,
            stdin,
            out,
            seen: 0,
        }
    }

    /// Types `line` and Enter.
    pub fn send(&mut self, line: &str) {
        self.stdin.write_all(format!("{line}\r").as_bytes()).unwrap();
        self.stdin.flush().unwrap();
    }

    pub fn ctrl_c(&mut self) {
        self.stdin.write_all(b"\x03").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Waits (with a deadline) until lab prints `needle` after what was
    /// already read; what came before it, and it.
    pub fn expect(&mut self, needle: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            {
                let out = self.out.lock().unwrap();
                if let Some(i) = out[self.seen..].find(needle) {
                    let got = out[self.seen..self.seen + i + needle.len()].to_string();
                    self.seen += i + needle.len();
                    return got;
                }
            }
            if Instant::now() >= deadline {
                // Copied first: a panic while the lock is held would poison it.
                let printed = self.out.lock().unwrap().clone();
                panic!("no {needle:?} within 60 s; lab printed:\n{printed}");
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// `\q`, then the exit code and everything printed.
    pub fn quit(mut self) -> (i32, String) {
        self.send("\\q");
        self.exit()
    }

    /// Ctrl-D at an empty prompt, then the exit code and everything printed.
    pub fn ctrl_d(mut self) -> (i32, String) {
        self.stdin.write_all(b"\x04").unwrap();
        self.stdin.flush().unwrap();
        self.exit()
    }

    pub fn exit(mut self) -> (i32, String) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while self.child.try_wait().unwrap().is_none() {
            assert!(Instant::now() < deadline, "lab did not exit within 30 s");
            std::thread::sleep(Duration::from_millis(20));
        }
        let code = self.child.wait().unwrap().code().unwrap_or(-1);
        std::thread::sleep(Duration::from_millis(50));
        let out = self.out.lock().unwrap().clone();
        (code, out)
    }
}
