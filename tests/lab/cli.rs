use std::time::Duration;

use crate::support::{TestServer, lab, run, run_cmd};

/// Exit 2, one line on stderr starting with `error:`, promptly, and no secret echoed.
fn assert_one_line_error(r: &crate::support::Run, needle: &str) {
    assert_eq!(r.code, 2, "exit code; stderr: {}", r.stderr);
    let lines: Vec<&str> = r.stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "one line expected: {:?}", r.stderr);
    assert!(lines[0].starts_with("error: "), "{}", lines[0]);
    assert!(lines[0].contains(needle), "expected {needle:?} in {}", lines[0]);
    assert!(
        !r.stderr.contains("panicked") && !r.stderr.contains("RUST_BACKTRACE"),
        "{}",
        r.stderr
    );
    assert!(r.took < Duration::from_secs(8), "took {:?}", r.took);
}

#[test]
fn unknown_scenario_is_a_usage_error() {
    let r = run(&["no-such-scenario"]);
    assert_one_line_error(&r, "no-such-scenario");
}

/// A command's option typed before the command (`lab --lab-dir D all`, as
/// `git -C D` is) says where it goes; one no command has stays unknown.
#[test]
fn an_option_before_its_command_says_where_it_goes() {
    let r = run(&["--lab-dir=lab", "all"]);
    assert_one_line_error(
        &r,
        "'--lab-dir' is an option of the command: put it after it (lab all --lab-dir ...)",
    );
    // Its value is not the command, even where it names one.
    let r = run(&["--variant", "deadlock", "all"]);
    assert_one_line_error(&r, "put it after it (lab all --variant ...)");
    // The command after it does not take it: the ones that do are named.
    let r = run(&["--jobs", "4", "list"]);
    assert_one_line_error(&r, "'--jobs' is an option of the commands (");
    assert!(
        r.stderr
            .contains("not of lab: put it after one (lab COMMAND --jobs ...)"),
        "{}",
        r.stderr
    );
    let r = run(&["--lang", "tr", "--schema", "x", "lost-update"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("'--schema' komutun bir seçeneği: komuttan sonra yazın (lab lost-update --schema ...)"),
        "{}",
        r.stderr
    );
    // After a command that does not take it, or taken by none: unknown.
    assert_one_line_error(&run(&["list", "--lab-dir", "lab"]), "unknown option '--lab-dir'");
    assert_one_line_error(&run(&["--bogus", "all"]), "unknown option '--bogus'");
}

#[test]
fn unknown_variant_names_the_real_ones() {
    let r = run(&["lost-update", "--variant", "nope"]);
    assert_one_line_error(&r, "unknown variant 'nope'");
    assert!(r.stderr.contains("optimistic-version"));
}

#[test]
fn all_runs_the_scenarios_and_variants_its_variant_options_name() {
    let r = run(&[
        "all",
        "--variant",
        "stale-event",
        "--variant",
        "nowait/skip-locked",
        "--format",
        "json",
    ]);
    assert_eq!(r.code, 0, "{}", r.why());
    let report: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let ran: Vec<(String, Vec<String>)> = report["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let variants = s["variants"].as_array().unwrap();
            let names = variants.iter().map(|v| v["name"].as_str().unwrap().to_string());
            (s["scenario"].as_str().unwrap().to_string(), names.collect())
        })
        .collect();
    // In the catalogue's order, whatever order they were named in.
    let expected = vec![
        ("nowait".to_string(), vec!["skip-locked".to_string()]),
        (
            "stale-event".to_string(),
            vec!["no-version-check".to_string(), "version-check".to_string()],
        ),
    ];
    assert_eq!(ran, expected);

    assert_one_line_error(
        &run(&["all", "--variant", "nope"]),
        "unknown scenario in --variant 'nope'",
    );
    assert_one_line_error(
        &run(&["all", "--variant", "nowait/nope"]),
        "unknown variant 'nope' of nowait",
    );
}

#[test]
fn bad_option_value_is_one_line() {
    let r = run(&["lost-update", "--format", "xml"]);
    assert_one_line_error(&r, "xml");
    // A negative number is a bad value, not an option; a stray word is not an
    // option either; an option given last with no value says it needs one.
    for (args, says) in [
        (
            &["lost-update", "--timeout-ms", "-5"][..],
            "invalid value '-5' for '--timeout-ms <MS>'",
        ),
        (&["hunt", "--seed", "-1"], "invalid value '-1' for '--seed <SEED>'"),
        (&["lost-update", "extra-arg"], "unexpected argument 'extra-arg'"),
        (&["lost-update", "--variant"], "'--variant <NAME>' needs a value"),
        (
            &["lost-update", "--format"],
            "'--format <FORMAT>' needs a value (possible values: table, json, mermaid, markdown)",
        ),
        (&["lost-update", "--wait-timeout", "0"], "more than 0 and at most 3600"),
        // Several suggestions read as alternatives.
        (&["lost-upd"], "did you mean 'list' or 'lost-update'?"),
    ] {
        assert_one_line_error(&run(args), says);
    }
}

#[test]
fn closed_port_fails_fast() {
    let r = run(&["lost-update", "--database-url", "postgres://lab:pw@127.0.0.1:1/lab"]);
    assert_one_line_error(&r, "could not connect");
    // Nothing ran: no empty summary table ahead of the error.
    for cmd in ["lost-update", "all"] {
        let r = run(&[cmd, "--summary", "--database-url", "postgres://lab:pw@127.0.0.1:1/lab"]);
        assert_one_line_error(&r, "could not connect");
        assert!(r.stdout.is_empty(), "{cmd}: {}", r.stdout);
    }
}

#[test]
fn malformed_url_never_echoes_the_password() {
    let r = run(&[
        "lost-update",
        "--database-url",
        "postgres://u:hunter2@localhost:notaport/db",
    ]);
    assert_one_line_error(&r, "port in --database-url: invalid value");
    assert!(!r.stderr.contains("hunter2"));
}

#[test]
fn missing_binaries_name_the_ways_out() {
    let r = run(&["lost-update", "--pg-bin", "/nonexistent/pg/bin"]);
    assert_one_line_error(&r, "apt-get install postgresql");
    assert!(r.stderr.contains("docker compose up -d") && r.stderr.contains("--pg-bin"));
    let r = run_cmd(lab().args(["lost-update"]).env("LAB_PG_BIN", "/nonexistent/pg/bin"));
    assert_one_line_error(&r, "/nonexistent/pg/bin");
}

#[test]
fn bad_schema_name_is_refused() {
    let r = run(&["lost-update", "--schema", "Robert'); DROP TABLE students;--"]);
    assert_one_line_error(&r, "--schema");
}

#[test]
fn wrong_password_and_unknown_database_are_refused_cleanly() {
    let srv = TestServer::start();
    let c = srv.client();
    srv.exec(&c, "CREATE ROLE lab_pw LOGIN PASSWORD 'right-secret'");
    // Password authentication for that role only (the cluster trusts the rest).
    let hba = srv.data_dir().join("pg_hba.conf");
    let old = std::fs::read_to_string(&hba).unwrap();
    std::fs::write(&hba, format!("host all lab_pw 127.0.0.1/32 scram-sha-256\n{old}")).unwrap();
    srv.exec(&c, "SELECT pg_reload_conf()");

    let port = srv.cluster.port;
    let r = run(&[
        "lost-update",
        "--database-url",
        &format!("postgres://lab_pw:wrong-secret@127.0.0.1:{port}/postgres"),
    ]);
    assert_one_line_error(&r, "password authentication failed");
    assert!(!r.stderr.contains("wrong-secret"));

    let r = run(&[
        "lost-update",
        "--database-url",
        &format!("postgres://postgres@127.0.0.1:{port}/no_such_db"),
    ]);
    assert_one_line_error(&r, "does not exist");
}

#[test]
fn list_shows_every_scenario_and_variant() {
    let r = run(&["list"]);
    assert_eq!(r.code, 0);
    for s in lab::commands::scenarios::ALL {
        assert!(r.stdout.contains(s.name), "{}", s.name);
        for v in s.variants {
            assert!(r.stdout.contains(v.name), "{}/{}", s.name, v.name);
        }
    }
}

/// The JUnit report parses, and has the structure CI systems' JUnit schema
/// asks for: testsuites > testsuite (name, tests, failures, errors, skipped,
/// time; properties first) > testcase (classname, name, time), with failure
/// or skipped inside.
#[test]
fn junit_report_is_well_formed_junit() {
    let dir = std::env::temp_dir().join(format!("lab-junit-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("report.xml");
    // With one attempt the retry variant is not as documented: a failure to report.
    let r = run(&[
        "write-skew",
        "--variant",
        "serializable",
        "--variant",
        "serializable-retry",
        "--retry-attempts",
        "1",
        "--junit",
        path.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let xml = std::fs::read_to_string(&path).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let doc = roxmltree::Document::parse(&xml).expect("well-formed XML");
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "testsuites");
    assert_eq!(root.attribute("tests"), Some("2"));
    assert_eq!(root.attribute("failures"), Some("1"));
    let suites: Vec<_> = root.children().filter(|n| n.is_element()).collect();
    assert_eq!(suites.len(), 1);
    let suite = suites[0];
    assert_eq!(suite.tag_name().name(), "testsuite");
    for attr in ["name", "tests", "failures", "errors", "skipped", "time"] {
        assert!(suite.attribute(attr).is_some(), "testsuite@{attr}");
    }
    let children: Vec<_> = suite.children().filter(|n| n.is_element()).collect();
    assert_eq!(children[0].tag_name().name(), "properties");
    let cases: Vec<_> = children[1..].to_vec();
    assert_eq!(cases.len(), 2);
    for c in &cases {
        assert_eq!(c.tag_name().name(), "testcase");
        assert_eq!(c.attribute("classname"), Some("lab.write-skew"));
        assert!(c.attribute("time").unwrap().parse::<f64>().is_ok());
    }
    let failure = cases[1]
        .children()
        .find(|n| n.has_tag_name("failure"))
        .expect("the retry variant failed");
    let text = failure.text().unwrap();
    assert!(
        text.starts_with("expected: ") && text.contains("\nobserved: "),
        "{text}"
    );
    assert!(cases[0].children().all(|n| !n.is_element()), "a passing case is empty");
}

#[test]
fn an_unwritable_junit_path_is_refused_before_anything_runs() {
    // Refused before a server is started: with no server programs to be
    // found, a later check would have failed on those instead.
    let r = crate::support::run_cmd(lab().env("LAB_PG_BIN", "/nonexistent-pg-bin").args([
        "lost-update",
        "--junit",
        "/nonexistent-dir/report.xml",
    ]));
    assert_one_line_error(&r, "/nonexistent-dir/report.xml");
}

#[test]
fn an_unwritable_html_path_is_refused_before_anything_runs() {
    for command in [
        &["lost-update"][..],
        &["phenomena"][..],
        &["spec", "lab/examples/last-copy.spec"][..],
    ] {
        let mut args = command.to_vec();
        args.extend(["--html", "/nonexistent-dir/report.html"]);
        let r = run(&args);
        assert_one_line_error(&r, "could not write the HTML report to /nonexistent-dir/report.html");
    }
}

/// Runs lab with stdout going to `stdout` (not captured), and checks that nothing is left.
fn run_into(args: &[&str], stdout: impl Into<std::process::Stdio>) -> crate::support::Run {
    let began = std::time::Instant::now();
    let child = lab()
        .args(args)
        .stdout(stdout)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    crate::support::assert_no_leftovers(pid);
    crate::support::Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::new(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        took: began.elapsed(),
    }
}

#[test]
fn a_full_disk_is_an_error_and_nothing_is_left() {
    let full = || std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    let r = run_into(&["nowait", "--format", "json"], full());
    assert_one_line_error(&r, "could not write to standard output");
    let r = run_into(&["completions", "bash"], full());
    assert_one_line_error(&r, "No space left on device");
}

#[test]
fn a_closed_pipe_ends_lab_quietly_and_nothing_is_left() {
    // The reader is gone before lab writes its first line (`lab ... | head -0`).
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let r = run_into(&["lost-update"], writer);
    assert_eq!(r.code, 141, "{}", r.stderr);
    assert_eq!(r.stderr, "", "quietly");
}

#[test]
fn lab_locks_into_head_ends_quietly() {
    use std::io::BufRead;
    let srv = TestServer::start();
    let mut child = lab()
        .args(["locks", "--every", "0.1", "--database-url", &srv.url()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.contains("lab sessions on PostgreSQL"), "{first}");
    // `head -1` exits: the pipe is closed; lab ends at its next refresh.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(std::time::Instant::now() < deadline, "lab locks still running");
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert_eq!(status.code(), Some(141), "{err}");
    assert_eq!(err, "", "no panic, no message");
}

#[test]
fn summary_prints_only_the_verdict_table() {
    let r = run(&[
        "all",
        "--summary",
        "--variant",
        "nowait",
        "--variant",
        "lost-update/read-committed",
    ]);
    assert_eq!(r.code, 0, "{}", r.why());
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert!(lines[0].starts_with("Summary: PostgreSQL"), "{}", r.stdout);
    assert!(!r.stdout.contains("t ms"), "no timeline: {}", r.stdout);
    // One line per variant, between the header and the bottom border.
    let rows: Vec<&&str> = lines[1..].iter().filter(|l| l.contains("as documented")).collect();
    assert_eq!(rows.len(), 3, "{}", r.stdout);
    assert!(rows.iter().any(|l| l.contains("lost-update") && l.contains("yes")));
    assert_eq!(lines.len(), 1 + 4 + 3, "{}", r.stdout);
}

#[test]
fn long_timelines_are_summarised_unless_verbose() {
    let short = run(&["invoice-numbering", "--variant", "lock-over-call"]);
    assert_eq!(short.code, 0, "{}", short.stderr);
    let long = run(&["invoice-numbering", "--variant", "lock-over-call", "--verbose"]);
    assert_eq!(long.code, 0, "{}", long.stderr);
    assert!(
        short
            .stdout
            .contains("steps answered at once and are not shown (--verbose shows every one)")
    );
    assert!(!long.stdout.contains("are not shown"));
    // The steps that answered at once are only in the verbose one; the verdicts are the same.
    assert!(long.stdout.matches("→ COMMIT").count() > 0);
    assert_eq!(short.stdout.matches("→ COMMIT").count(), 0, "{}", short.stdout);
    assert!(short.stdout.lines().count() * 3 < long.stdout.lines().count());
    assert!(short.stdout.contains("as documented") && long.stdout.contains("as documented"));
}

#[test]
fn mermaid_shows_each_variant_as_a_sequence_diagram() {
    let r = run(&["lost-update", "--variant", "select-for-update", "--format", "mermaid"]);
    assert_eq!(r.code, 0, "{}", r.why());
    assert!(
        r.stdout
            .starts_with("#### lost-update / select-for-update: as documented\n\n```mermaid\nsequenceDiagram\n"),
        "{}",
        r.stdout
    );
    // B's wait for A's row lock, as the server showed it, is a note on B.
    assert!(r.stdout.contains("Note over s_B: ⏳ waiting for A"), "{}", r.stdout);
    assert!(r.stdout.contains("PG-->>s_B: ✔ after waiting"), "{}", r.stdout);
    assert_eq!(r.stdout.matches("```").count(), 2);
    let r = run(&[
        "phenomena",
        "--show",
        "g0",
        "--level",
        "read-committed",
        "--format",
        "mermaid",
    ]);
    assert_eq!(r.code, 0, "{}", r.why());
    assert!(r.stdout.contains("#### g0 / read-committed: ✓ blocked"), "{}", r.stdout);
    assert!(r.stdout.contains("Note over s_T2: ⏳ waiting for T1"), "{}", r.stdout);
}

#[test]
fn replica_via_pgpool_is_checked_before_any_server_starts() {
    // Asked for through pgpool-II: a program that is not there is a setup error, not a skip.
    let r = crate::support::run_cmd(
        crate::support::lab()
            .args(["replica", "--via", "pgpool"])
            .env("LAB_PGPOOL_BIN", "/nonexistent/pgpool")
            .env("LAB_PG_BIN", "/nonexistent/bin"),
    );
    crate::support::one_line_exit_2(&r, "apt-get install pgpool2");
    // A variant --via leaves out is a contradiction, said with what --via runs.
    let r = crate::support::run(&["replica", "--via", "pgpool", "--variant", "stale-read"]);
    crate::support::one_line_exit_2(&r, "they run: pgpool-stale-read, pgpool-write-sticky");
    let r = crate::support::run(&["replica", "--via", "pgbouncer"]);
    crate::support::one_line_exit_2(&r, "possible values: standby, pgpool");
}

#[test]
fn a_pgbouncer_setting_that_names_no_program_is_one_line_with_how_to_install() {
    let r = crate::support::run_cmd(
        crate::support::lab()
            .args(["pooler", "--variant", "set-leak"])
            .env("LAB_PGBOUNCER_BIN", "/nonexistent/pgbouncer"),
    );
    crate::support::one_line_exit_2(&r, "apt-get install pgbouncer");
}

/// Piped, tables are 160 columns wide, or $COLUMNS where it is given (a
/// handout at 100 columns).
#[test]
fn piped_tables_take_their_width_from_columns() {
    let widest = |columns: Option<&str>| {
        let mut c = lab();
        c.arg("list");
        if let Some(n) = columns {
            c.env("COLUMNS", n);
        }
        let r = run_cmd(&mut c);
        assert_eq!(r.code, 0, "{}", r.stderr);
        r.stdout
            .lines()
            .filter(|l| l.starts_with(['│', '┌', '└', '╞', '├']))
            .map(|l| l.chars().count())
            .max()
            .unwrap()
    };
    assert!(widest(Some("100")) <= 100);
    assert!(widest(None) > 100, "160 wide by default");
    // Nonsense is the default.
    assert_eq!(widest(Some("wide")), widest(None));
}

/// Prose keeps to the width tables take: a handout at 60 columns has no
/// longer line, its explanations wrapped under their label.
#[test]
fn piped_prose_wraps_at_columns_too() {
    let r = run_cmd(lab().args(["lost-update", "--explain"]).env("COLUMNS", "60"));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let longest = r.stdout.lines().map(|l| l.chars().count()).max().unwrap();
    assert!(longest <= 60, "{longest}:\n{}", r.stdout);
    let why = r
        .stdout
        .lines()
        .position(|l| l.starts_with("why: "))
        .expect("an explanation");
    let next = r.stdout.lines().nth(why + 1).unwrap();
    assert!(next.starts_with("     ") && !next.trim().is_empty(), "{next}");
}
