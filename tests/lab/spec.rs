//! `lab spec`: PostgreSQL's own isolation suite, run by lab and by
//! PostgreSQL's harness (pg_isolation_regress, isolationtester) on the same
//! server, compared byte for byte; lab's specs; bad input; the deadline.
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::oracle::{build_bookstore, isolationtester, isolationtester_output};
use crate::support::{TestServer, one_line_exit_2, run, run_cmd};

const SUITE: &str = "tests/pg15-isolation";

/// Specs whose output under lab differs from PostgreSQL's harness on the
/// same server, and why (docs/SPEC.md lists them too).
const DIFFER_FROM_ISOLATIONTESTER: &[(&str, &str)] = &[(
    "intra-grant-inplace-db",
    "it names the database isolation_regression; lab runs each spec in a database of its own",
)];

/// Specs whose output differs from PostgreSQL 15's expected files on this
/// machine's PostgreSQL 15 (where PostgreSQL's own harness differs too), and why.
const DIFFER_FROM_EXPECTED_15: &[(&str, &str)] = &[(
    "intra-grant-inplace-db",
    "it names the database isolation_regression (and VACUUM FREEZE does not wait for \
     the GRANT here, under isolationtester either)",
)];

fn scratch(name: &str) -> crate::support::Scratch {
    crate::support::scratch("lab-spec-test", name)
}

/// The specs a JSON report says did not match their expected output.
fn differing(report: &Value) -> Vec<String> {
    report["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| {
            let v = s["variants"].as_array().unwrap();
            !v.last().unwrap()["as_expected"].as_bool().unwrap()
        })
        .map(|s| s["scenario"].as_str().unwrap().to_string())
        .collect()
}

fn schedule_against(srv: &TestServer, expected: &Path) -> (usize, Vec<String>) {
    let r = run(&[
        "spec",
        "--database-url",
        &srv.url(),
        "--schedule",
        &format!("{SUITE}/isolation_schedule"),
        "--expected-dir",
        expected.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert!(r.code == 0 || r.code == 1, "lab spec: exit {}: {}", r.code, r.stderr);
    let report: Value = serde_json::from_str(&r.stdout).expect("JSON");
    let total = report["scenarios"].as_array().unwrap().len();
    (total, differing(&report))
}

fn assert_rate(what: &str, total: usize, differ: &[String], known: &[(&str, &str)]) {
    let unexplained: Vec<&String> = differ.iter().filter(|d| !known.iter().any(|(k, _)| k == d)).collect();
    assert!(
        unexplained.is_empty(),
        "{what}: {unexplained:?} differ and are not among the known differences"
    );
    let matched = total - differ.len();
    assert!(
        matched * 100 >= total * 95,
        "{what}: only {matched} of {total} byte-equal"
    );
    eprintln!("{what}: {matched} of {total} specs byte-equal");
}

/// The specs of PostgreSQL 15's schedule that a role without superuser
/// cannot run as written (their output differs under isolationtester too),
/// and why.
const SUPERUSER_ONLY: &[(&str, &str)] = &[
    ("deadlock-hard", "SET deadlock_timeout"),
    ("deadlock-soft", "SET deadlock_timeout"),
    ("deadlock-soft-2", "SET deadlock_timeout"),
    ("deadlock-parallel", "SET deadlock_timeout"),
    ("fk-deadlock", "SET deadlock_timeout"),
    ("fk-deadlock2", "SET deadlock_timeout"),
    ("eval-plan-qual", "a step locks pg_class"),
    ("intra-grant-inplace", "SET deadlock_timeout"),
    ("intra-grant-inplace-db", "CREATE ROLE"),
    ("reindex-concurrently-toast", "SET allow_system_table_mods"),
    ("vacuum-conflict", "CREATE ROLE"),
    ("stats", "SET track_functions"),
    ("cluster-conflict", "CREATE ROLE"),
    ("cluster-conflict-partition", "CREATE ROLE"),
    ("truncate-conflict", "CREATE ROLE"),
];

/// PostgreSQL 18's schedule: 15's tests that need a superuser, and three
/// of the tests it added (run as a plain role they fail in their setup, as
/// under isolationtester).
const SUPERUSER_ONLY_18: &[&[(&str, &str)]] = &[
    SUPERUSER_ONLY,
    &[
        ("ddl-dependency-locking", "CREATE FOREIGN DATA WRAPPER"),
        ("pub-concurrent-drop", "CREATE PUBLICATION FOR TABLES IN SCHEMA"),
        ("drop-owned-grant", "CREATE ROLE"),
    ],
];

/// A copy of PostgreSQL's `src/test/isolation` under `tests/`: its
/// schedule's tests, and those a role without superuser cannot run.
struct Schedule {
    dir: &'static str,
    tests: usize,
    /// Of them, those that need no superuser.
    core: usize,
    superuser_only: &'static [&'static [(&'static str, &'static str)]],
}

const PG15: Schedule = Schedule {
    dir: SUITE,
    tests: 115,
    core: 100,
    superuser_only: &[SUPERUSER_ONLY],
};

/// PostgreSQL 18.6's files (Debian's source package postgresql-18
/// 18.6-3), run on 18.6: the three tests 18.5 and 18.6 added for fixes in
/// the server fail on 18.4.
const PG18: Schedule = Schedule {
    dir: "tests/pg18-isolation",
    tests: 122,
    core: 104,
    superuser_only: SUPERUSER_ONLY_18,
};

impl Schedule {
    /// The tests of the schedule, in its order.
    fn tests(&self) -> Vec<String> {
        let all: Vec<String> = std::fs::read_to_string(format!("{}/isolation_schedule", self.dir))
            .unwrap()
            .lines()
            .filter_map(|l| l.strip_prefix("test: "))
            .flat_map(|l| l.split_whitespace().map(str::to_string).collect::<Vec<_>>())
            .collect();
        assert_eq!(
            all.len(),
            self.tests,
            "{}'s schedule has {} tests",
            self.dir,
            self.tests
        );
        for (name, _) in self.superuser_only.iter().flat_map(|l| l.iter()) {
            assert!(
                all.iter().any(|t| t == name),
                "{name} is not in {}'s schedule",
                self.dir
            );
        }
        let core = all.iter().filter(|t| !self.needs_superuser(t)).count();
        assert_eq!(core, self.core, "{}: tests that need no superuser", self.dir);
        all
    }

    fn needs_superuser(&self, test: &str) -> bool {
        self.superuser_only.iter().any(|l| l.iter().any(|(s, _)| *s == test))
    }
}

/// pg_regress's test lines, timings aside: (name, ok or FAILED).
fn test_lines(stdout: &str) -> Vec<(String, String)> {
    stdout
        .lines()
        .filter(|l| l.contains(" ... "))
        .map(|l| {
            let (name, rest) = l.split_once(" ... ").unwrap();
            let name = name.trim().trim_start_matches("test ").trim().to_string();
            (name, rest.split_whitespace().next().unwrap().to_string())
        })
        .collect()
}

/// The tests regression.diffs has a diff for.
fn diffed(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.strip_prefix("diff -U3 "))
        .map(|l| l.rsplit('/').next().unwrap().trim_end_matches(".out").to_string())
        .collect()
}

/// The drop-in's database exists (pg_isolation_regress leaves it behind):
/// lab, which drops only databases it made, refuses it, exit 2, and prints
/// no "All N tests passed." for the run that did not happen.
#[test]
fn an_existing_dbname_is_refused_without_a_passed_banner() {
    let srv = TestServer::start();
    let client = srv.client();
    srv.exec(&client, "CREATE DATABASE isolation_regression");
    let out = scratch("exists");
    let r = run(&[
        "spec",
        "--database-url",
        &srv.url(),
        &format!("--inputdir={SUITE}"),
        &format!("--outputdir={}", out.display()),
        "--dbname=isolation_regression",
        "two-ids",
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("the database isolation_regression exists"),
        "{}",
        r.stderr
    );
    assert!(!r.stdout.contains("tests passed"), "{}", r.stdout);
    let kept = srv.query_i64(
        &client,
        "SELECT count(*) FROM pg_database WHERE datname = 'isolation_regression'",
    );
    assert_eq!(kept, 1, "lab does not drop a database it did not make");
    srv.exec(&client, "DROP DATABASE isolation_regression");
}

/// PostgreSQL's isolation schedule, run first by pg_isolation_regress (the
/// real harness: isolationtester, serially) and then by lab, on one server:
/// lab's transcript is byte for byte what isolationtester printed, for every
/// spec but the known ones; on PostgreSQL 15 it is also what PostgreSQL's
/// expected files hold. Then as pg_isolation_regress's drop-in, in a
/// database of the name the specs expect: the same files, lines and diffs,
/// every result byte for byte; and as a role that cannot create databases,
/// in its own: every spec that needs no superuser.
#[test]
fn postgresql_isolation_schedule_byte_for_byte() {
    let srv = TestServer::start();
    let client = srv.client();
    srv.exec(&client, "CREATE DATABASE isolation_regression");
    let out = scratch("regress");
    let regress = isolationtester().with_file_name("pg_isolation_regress");
    let theirs = Command::new(&regress)
        .args([
            &format!("--inputdir={SUITE}"),
            &format!("--outputdir={}", out.display()),
            "--host=127.0.0.1",
            &format!("--port={}", srv.cluster.port),
            "--user=postgres",
            "--use-existing",
            "--dbname=isolation_regression",
            &format!("--schedule={SUITE}/isolation_schedule"),
        ])
        .output()
        .expect("pg_isolation_regress runs (postgresql-client has it; scripts/test installs it)");
    assert!(
        theirs.status.code().is_some_and(|c| c <= 1),
        "pg_isolation_regress: {}",
        theirs.status
    );
    let their_lines = test_lines(&String::from_utf8_lossy(&theirs.stdout));
    assert_eq!(their_lines.len(), 115, "the schedule has 115 tests");

    let (total, differ) = schedule_against(&srv, &out.join("results"));
    assert_eq!(total, 115, "the schedule has 115 tests");
    assert_rate("lab vs isolationtester", total, &differ, DIFFER_FROM_ISOLATIONTESTER);

    let version = srv.query_i64(&client, "SELECT current_setting('server_version_num')::bigint");
    if version / 10000 == 15 {
        let (total, differ) = schedule_against(&srv, Path::new(&format!("{SUITE}/expected")));
        assert_rate(
            "lab vs PostgreSQL 15's expected files",
            total,
            &differ,
            DIFFER_FROM_EXPECTED_15,
        );
    }
    let left = srv.query_i64(
        &client,
        "SELECT count(*) FROM pg_database WHERE datname LIKE 'lab\\_spec\\_%'",
    );
    assert_eq!(left, 0, "lab spec left databases behind");

    // pg_isolation_regress's drop-in: lab makes the database (it must not exist).
    srv.exec(&client, "DROP DATABASE isolation_regression");
    let mine = scratch("layout");
    let r = run(&[
        "spec",
        "--database-url",
        &srv.url(),
        &format!("--inputdir={SUITE}"),
        &format!("--outputdir={}", mine.display()),
        &format!("--schedule={SUITE}/isolation_schedule"),
        "--dbname=isolation_regression",
    ]);
    assert!(r.code == 0 || r.code == 1, "lab spec: exit {}: {}", r.code, r.stderr);
    assert_eq!(r.code, theirs.status.code().unwrap(), "{}", r.stdout);
    assert_eq!(test_lines(&r.stdout), their_lines, "pg_regress's lines");
    let names = |dir: &Path| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    assert_eq!(names(&mine.join("results")), names(&out.join("results")));
    let same = names(&out.join("results"))
        .iter()
        .filter(|n| {
            std::fs::read(out.join("results").join(n)).unwrap() == std::fs::read(mine.join("results").join(n)).unwrap()
        })
        .count();
    assert_eq!(same, 115, "results/ byte for byte isolationtester's");
    assert_eq!(
        diffed(&mine.join("regression.diffs")),
        diffed(&out.join("regression.diffs"))
    );
    assert_eq!(
        mine.join("regression.out").exists(),
        out.join("regression.out").exists(),
        "regression.out is kept only when a test failed"
    );
    let left = srv.query_i64(
        &client,
        "SELECT count(*) FROM pg_database WHERE datname = 'isolation_regression'",
    );
    assert_eq!(left, 0, "lab drops the database it made");

    // A role that owns its database and may not create one: the specs run
    // in it, one at a time, each one's leftovers dropped by --clean.
    srv.exec(&client, "CREATE ROLE lab_owner LOGIN");
    srv.exec(&client, "CREATE DATABASE lab_owner OWNER lab_owner");
    let url = format!("postgres://lab_owner@127.0.0.1:{}/lab_owner", srv.cluster.port);
    let r = run(&[
        "spec",
        "--database-url",
        &url,
        "--schedule",
        &format!("{SUITE}/isolation_schedule"),
        "--expected-dir",
        out.join("results").to_str().unwrap(),
        "--clean",
        "--format",
        "json",
    ]);
    assert_eq!(r.code, 1, "the superuser's specs differ: {}", r.stderr);
    assert!(
        r.stderr
            .contains("the role cannot create databases: the specs run one at a time in lab_owner"),
        "{}",
        r.stderr
    );
    let report: Value = serde_json::from_str(&r.stdout).expect("JSON");
    let differ = differing(&report);
    let unexplained: Vec<&String> = differ.iter().filter(|d| !PG15.needs_superuser(d)).collect();
    assert!(unexplained.is_empty(), "{unexplained:?} differ as a plain role");
    assert!(
        115 - differ.len() >= 100,
        "only {} of 115 byte-equal",
        115 - differ.len()
    );
    eprintln!("as a role without CREATEDB: {} of 115 byte-equal", 115 - differ.len());
    // What each spec left, --clean dropped, and it said so.
    let mut cleaned = 0;
    for s in report["scenarios"].as_array().unwrap() {
        for v in s["variants"].as_array().unwrap() {
            if v["name"] == "database" {
                assert_eq!(v["as_expected"], true, "{v}");
                cleaned += 1;
            }
        }
    }
    assert!(
        cleaned >= 5,
        "specs that leave tables behind (deadlock-hard ...): {cleaned}"
    );
    let _ = std::fs::remove_dir_all(&out);
    let _ = std::fs::remove_dir_all(&mine);
}

/// `out` is, end to end, one expected file of each test in turn
/// (`NAME.out` or `NAME_0.out` ... `NAME_9.out` in `dir`, as pg_regress
/// accepts): how many; or the first test whose output is none of its files,
/// with what lab printed there.
fn one_expected_file_each(out: &[u8], dir: &Path, tests: &[String]) -> Result<usize, String> {
    let mut at = 0;
    for (n, t) in tests.iter().enumerate() {
        let mut files = vec![dir.join(format!("{t}.out"))];
        files.extend((0..10).map(|i| dir.join(format!("{t}_{i}.out"))));
        let hit = files
            .iter()
            .filter_map(|f| std::fs::read(f).ok())
            .find(|e| out[at..].starts_with(e));
        match hit {
            Some(e) => at += e.len(),
            None => {
                let shown = String::from_utf8_lossy(&out[at..out.len().min(at + 2000)]).into_owned();
                return Err(format!("{t} (after {n} equal) printed:\n{shown}"));
            }
        }
    }
    if at != out.len() {
        return Err(format!(
            "more after the last test: {}",
            String::from_utf8_lossy(&out[at..])
        ));
    }
    Ok(tests.len())
}

/// `lab spec ARGS` with stdout and stderr in one file, as pg_regress runs
/// isolationtester (`> results/NAME.out 2>&1`): the exit code and that file.
fn merged(args: &[&str], file: &Path) -> (i32, Vec<u8>) {
    let f = std::fs::File::create(file).unwrap();
    let mut cmd = crate::support::lab();
    cmd.args(args).stdout(f.try_clone().unwrap()).stderr(f);
    let mut child = cmd.spawn().expect("lab starts");
    let pid = child.id();
    let status = child.wait().expect("lab finishes");
    crate::support::assert_no_leftovers(pid);
    (status.code().unwrap_or(-1), std::fs::read(file).unwrap())
}

/// `lab spec --format isolation` where pg_regress would run isolationtester
/// (stdout and stderr in one file): that file holds what isolationtester
/// writes and nothing of lab's own (where the specs run, what a spec left
/// and --clean dropped, how many matched: the JSON and --verbose have it),
/// and the exit code says how it went. As a role that owns its database and
/// may not create one, the 100 tests of PostgreSQL's schedule that need no
/// superuser, one after another in that database; as a superuser, all 115 in
/// the database they name (`--in-database`). Compared with PostgreSQL 15's
/// expected files on 15, else with what pg_isolation_regress wrote on this
/// server.
#[test]
fn merged_stdout_and_stderr_are_isolationtesters_in_the_database_given() {
    let srv = TestServer::start();
    let client = srv.client();
    let work = scratch("merged");
    let version = srv.query_i64(&client, "SELECT current_setting('server_version_num')::bigint");
    srv.exec(&client, "CREATE DATABASE isolation_regression");
    let expected = if version / 10000 == 15 {
        PathBuf::from(format!("{SUITE}/expected"))
    } else {
        let regress = isolationtester().with_file_name("pg_isolation_regress");
        let theirs = Command::new(&regress)
            .args([
                &format!("--inputdir={SUITE}"),
                &format!("--outputdir={}", work.display()),
                "--host=127.0.0.1",
                &format!("--port={}", srv.cluster.port),
                "--user=postgres",
                "--use-existing",
                "--dbname=isolation_regression",
                &format!("--schedule={SUITE}/isolation_schedule"),
            ])
            .output()
            .expect("pg_isolation_regress runs (postgresql-client has it; scripts/test installs it)");
        assert!(
            theirs.status.code().is_some_and(|c| c <= 1),
            "pg_isolation_regress: {}",
            theirs.status
        );
        srv.exec(&client, "DROP DATABASE isolation_regression");
        srv.exec(&client, "CREATE DATABASE isolation_regression");
        work.join("results")
    };
    let url = as_plain_owner_and_superuser(&srv, &PG15, &expected, &work);
    let dir = expected.to_str().unwrap();

    // The same without --clean: a test that leaves tables is exit 1, and
    // says so only with --verbose.
    let leaves = format!("{SUITE}/specs/partition-concurrent-attach.spec");
    let alone = |extra: &[&str]| {
        let mut args = vec![
            "spec",
            "--database-url",
            &url,
            "--format",
            "isolation",
            "--expected-dir",
            dir,
        ];
        args.extend_from_slice(extra);
        args.push(&leaves);
        run(&args)
    };
    let r = alone(&[]);
    assert_eq!(r.code, 1, "{}", r.why());
    assert_eq!(r.stderr, "", "nothing of lab's beside isolationtester's output");
    assert_eq!(
        r.stdout,
        std::fs::read_to_string(expected.join("partition-concurrent-attach.out")).unwrap()
    );
    srv.exec(&client, "DROP DATABASE lab_plain_owner");
    srv.exec(&client, "CREATE DATABASE lab_plain_owner OWNER lab_plain_owner");
    let r = alone(&["--verbose"]);
    assert_eq!(r.code, 1, "{}", r.why());
    for line in [
        "the role cannot create databases: the specs run one at a time in lab_plain_owner",
        "partition-concurrent-attach: left behind: table public.tpart_2",
        "1 of 1 specs match their expected output",
    ] {
        assert!(r.stderr.contains(line), "--verbose says {line:?}: {}", r.stderr);
    }

    let _ = std::fs::remove_dir_all(&work);
}

/// `schedule`'s tests with stdout and stderr in one file, compared with the
/// files in `expected`: as a role that owns its database and may not
/// create one (made here), every test that needs no superuser, one after
/// another in that database, with `--clean`; then as a superuser, all of
/// them in the database they name (`--in-database`). The plain owner's URL.
fn as_plain_owner_and_superuser(srv: &TestServer, schedule: &Schedule, expected: &Path, work: &Path) -> String {
    let client = srv.client();
    let all = schedule.tests();
    let core: Vec<String> = all.iter().filter(|t| !schedule.needs_superuser(t)).cloned().collect();
    let specs: Vec<String> = core
        .iter()
        .map(|t| format!("{}/specs/{t}.spec", schedule.dir))
        .collect();
    srv.exec(&client, "CREATE ROLE lab_plain_owner LOGIN NOCREATEDB");
    srv.exec(&client, "CREATE DATABASE lab_plain_owner OWNER lab_plain_owner");
    let url = format!(
        "postgres://lab_plain_owner@127.0.0.1:{}/lab_plain_owner",
        srv.cluster.port
    );
    let dir = expected.to_str().unwrap();
    let mut args = vec![
        "spec",
        "--database-url",
        &url,
        "--format",
        "isolation",
        "--expected-dir",
        dir,
        "--clean",
    ];
    args.extend(specs.iter().map(String::as_str));
    let (code, out) = merged(&args, &work.join("owner.out"));
    let equal = one_expected_file_each(&out, expected, &core).unwrap_or_else(|e| panic!("as a plain owner: {e}"));
    assert_eq!(equal, core.len());
    assert_eq!(code, 0, "every test matched, what some left was dropped");
    eprintln!(
        "{}, as a role without CREATEDB, merged stdout and stderr: {equal} of {} byte-equal",
        schedule.dir,
        core.len()
    );

    // A superuser, in the database the specs name: all of them.
    let superuser = format!(
        "postgres://postgres@127.0.0.1:{}/isolation_regression",
        srv.cluster.port
    );
    let file = format!("{}/isolation_schedule", schedule.dir);
    let args = [
        "spec",
        "--database-url",
        &superuser,
        "--in-database",
        "--format",
        "isolation",
        "--expected-dir",
        dir,
        "--clean",
        "--schedule",
        &file,
    ];
    let (code, out) = merged(&args, &work.join("superuser.out"));
    let equal = one_expected_file_each(&out, expected, &all).unwrap_or_else(|e| panic!("as a superuser: {e}"));
    assert_eq!(equal, all.len());
    assert_eq!(code, 0);
    eprintln!(
        "{}, as a superuser with --in-database, merged stdout and stderr: {equal} of {} byte-equal",
        schedule.dir,
        all.len()
    );
    url
}

/// PostgreSQL 18's own schedule and expected files on PostgreSQL 18.6
/// (`scripts/fetch-pg.sh 18.6`, whatever server the other tests run on):
/// merged stdout and stderr byte for byte, as a plain owner (the 104 tests
/// that need no superuser) and as a superuser (all 122).
#[test]
fn postgresql_18s_schedule_merged_byte_for_byte_on_18_6() {
    let root = env!("CARGO_MANIFEST_DIR");
    let fetched = Command::new(format!("{root}/scripts/fetch-pg.sh"))
        .arg("18.6")
        .output()
        .unwrap();
    assert!(
        fetched.status.success(),
        "scripts/fetch-pg.sh 18.6: {}",
        String::from_utf8_lossy(&fetched.stderr)
    );
    let bin = PathBuf::from(String::from_utf8_lossy(&fetched.stdout).trim());
    let srv = TestServer::start_on(&bin);
    let client = srv.client();
    let version = srv.query_i64(&client, "SELECT current_setting('server_version_num')::bigint");
    assert_eq!(version, 180006);
    srv.exec(&client, "CREATE DATABASE isolation_regression");
    let work = scratch("merged-18");
    let expected = PathBuf::from(format!("{}/expected", PG18.dir));
    as_plain_owner_and_superuser(&srv, &PG18, &expected, &work);
    let _ = std::fs::remove_dir_all(&work);
}

/// lab's own specs under `lab spec --format isolation` print what
/// isolationtester prints for them on the same server.
#[test]
fn lab_specs_print_what_isolationtester_prints() {
    let srv = TestServer::start();
    build_bookstore(&srv, &srv.client());
    let out = scratch("lab-specs");
    let mut specs: Vec<PathBuf> = ["lab", "lab/phenomena"]
        .iter()
        .flat_map(|d| std::fs::read_dir(d).unwrap().flatten())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "spec"))
        .collect();
    specs.sort();
    assert!(specs.len() >= 25, "{specs:?}");
    for spec in &specs {
        let name = spec.file_stem().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(spec).unwrap();
        let iso = isolationtester_output(&srv, &text, &[("PGOPTIONS", "-c search_path=lab")]);
        assert!(iso.status.success(), "isolationtester {name}");
        let mut text = iso.stdout;
        text.extend(iso.stderr);
        std::fs::write(out.join(format!("{name}.out")), text).unwrap();
    }
    // The server's own datestyle and time zone: no pg_regress settings.
    let r = run_cmd(
        crate::support::lab()
            .args([
                "spec",
                "--database-url",
                &srv.url(),
                "lab",
                "lab/phenomena",
                "--format",
                "isolation",
                // How many matched is lab's own line: beside isolationtester's output only with --verbose.
                "--verbose",
            ])
            .args(["--expected-dir", out.to_str().unwrap()])
            .env("PGDATESTYLE", "ISO, MDY")
            .env("PGTZ", "UTC"),
    );
    assert_eq!(r.code, 0, "{}", r.why());
    assert!(
        r.stderr.contains(&format!("{0} of {0} specs match", specs.len())),
        "{}",
        r.stderr
    );
    let _ = std::fs::remove_dir_all(&out);
}

fn write_spec(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

/// A spec that cannot run is refused before anything connects: one line,
/// FILE:LINE where there is a line, exit 2.
#[test]
fn bad_specs_get_one_line_and_exit_2() {
    let dir = scratch("bad");
    let cases = [
        (
            "syntax.spec",
            "session s1\nstep a { SELECT 1; }\npermutation a (\n",
            "syntax.spec:3: syntax error",
        ),
        (
            "unknown.spec",
            "session s1\nstep a { SELECT 1; }\npermutation a b\n",
            "undefined step \"b\" specified in permutation",
        ),
        (
            "duplicate.spec",
            "session s1\nstep a { SELECT 1; }\nsession s2\nstep a { SELECT 2; }\n",
            "duplicate step name: a",
        ),
        ("empty.spec", "", "empty.spec:1: syntax error: expected a session"),
        (
            "unterminated.spec",
            "session s1\nstep a { SELECT 1;\n",
            "unterminated.spec:2: unterminated sql block",
        ),
    ];
    for (file, text, want) in cases {
        let path = write_spec(&dir, file, text);
        let r = run(&["spec", &path]);
        assert_eq!(r.code, 2, "{file}: {}", r.stderr);
        assert_eq!(r.stderr.lines().count(), 1, "{file}: {}", r.stderr);
        assert!(r.stderr.contains(want), "{file}: {}", r.stderr);
        assert!(r.stdout.is_empty(), "{file}: {}", r.stdout);
    }
    for args in [
        vec!["spec"],
        vec!["spec", "/nonexistent.spec"],
        vec!["spec", "--jobs", "0", "lab/nowait.spec"],
        vec![
            "spec",
            "lab/nowait.spec",
            "lab/deadlock.spec",
            "--expected",
            "lab/nowait.spec",
        ],
    ] {
        let r = run(&args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert_eq!(r.stderr.lines().count(), 1, "{args:?}: {}", r.stderr);
    }
    // A test name under --inputdir that is not there: where lab looked.
    let r = run(&["spec", "--inputdir", dir.to_str().unwrap(), "nosuchtest"]);
    one_line_exit_2(
        &r,
        &format!(
            "nosuchtest: no such file, nor test {}",
            dir.join("specs/nosuchtest.spec").display()
        ),
    );
    // lab's own words are Turkish too.
    let typo = write_spec(&dir, "typo.spec", "sesion s1\n");
    let r = run(&["spec", &typo, "--lang", "tr"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("typo.spec:1: söz dizimi hatası: bir session bekleniyordu, \"sesion\" bulundu"),
        "{}",
        r.stderr
    );
    for flag in ["--jobs", "--repeat"] {
        let r = run(&["spec", flag, "0", "lab/nowait.spec"]);
        assert_eq!(r.code, 2, "{flag}: {}", r.stderr);
        assert!(r.stderr.contains(&format!("{flag} must be at least 1")), "{}", r.stderr);
    }
    // An expected directory without the spec's file: nothing to compare
    // with is not a pass.
    let dir_s = dir.to_str().unwrap();
    std::fs::create_dir_all(dir.join("specs")).unwrap();
    write_spec(&dir.join("specs"), "plain.spec", "session s1\nstep a { SELECT 1; }\n");
    for args in [
        vec!["spec", "lab/nowait.spec", "--expected-dir", dir_s],
        vec!["spec", "--inputdir", dir_s, "--outputdir", dir_s, "plain"],
    ] {
        let r = run(&args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert_eq!(r.stderr.lines().count(), 1, "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains("has no expected output"), "{args:?}: {}", r.stderr);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

const STUCK: &str = "setup { CREATE TABLE t (i int); INSERT INTO t VALUES (1); }
teardown { DROP TABLE t; }
session s1
step s1b { BEGIN; }
step s1u { UPDATE t SET i = 2; }
step s1c { COMMIT; }
session s2
step s2u { UPDATE t SET i = 3; }
step s2s { SELECT i FROM t; }
step s2x { SELECT nosuchcolumn FROM t; }
permutation s1b s1u s2u s2s s1c
permutation s1b s1u s1c s2u s2s
";

/// A permutation that cannot go on (s2's next step waits behind its own
/// waiting step) ends at the deadline naming the step lab cancelled, exit
/// 1, and the next permutation runs, as isolationtester does (it prints
/// the same, byte for byte); unused steps are warned about on stderr.
#[test]
fn a_stuck_permutation_ends_at_the_deadline_and_the_next_runs() {
    let srv = TestServer::start();
    let dir = scratch("stuck");
    let path = write_spec(&dir, "stuck.spec", STUCK);
    let url = srv.url();
    let stuck = |format: &str| {
        run(&[
            "spec",
            "--database-url",
            &url,
            &path,
            "--wait-timeout",
            "1",
            "--format",
            format,
        ])
    };
    let r = stuck("json");
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let report: Value = serde_json::from_str(&r.stdout).unwrap();
    let perms = report["scenarios"][0]["variants"].as_array().unwrap();
    assert_eq!(perms.len(), 2, "the next permutation ran");
    assert_eq!(perms[0]["as_expected"], false);
    assert!(
        perms[0]["observed"]
            .as_str()
            .unwrap()
            .contains("lab cancelled s2u at the deadline"),
        "{}",
        perms[0]["observed"]
    );
    assert_eq!(perms[1]["as_expected"], true);

    let r = stuck("isolation");
    assert_eq!(r.code, 1);
    assert_eq!(r.stderr, "unused step name: s2x\n");
    let iso = isolationtester_output(&srv, STUCK, &[("PGISOLATIONTIMEOUT", "1")]);
    assert_eq!(r.stdout, String::from_utf8_lossy(&iso.stdout), "lab vs isolationtester");
    assert!(
        r.stdout
            .contains("isolationtester: canceling step s2u after 1 seconds\n")
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Mutations: the server behaving differently from what the expected file
/// shows (sessions made SERIALIZABLE by default), or a golden file off by
/// one byte, is a difference: exit 1 with a unified diff.
#[test]
fn a_difference_from_the_expected_file_exits_1_with_a_diff() {
    let srv = TestServer::start();
    let spec = format!("{SUITE}/specs/lock-update-delete.spec");
    let expected = format!("{SUITE}/expected/lock-update-delete.out");
    let base = || {
        let mut c = crate::support::lab();
        c.args(["spec", "--database-url", &srv.url(), &spec, "--expected", &expected]);
        c
    };
    let r = run_cmd(&mut base());
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);

    let r = run_cmd(base().env("PGOPTIONS", "-c default_transaction_isolation=serializable"));
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("+ERROR:  could not serialize access"), "{}", r.stdout);
    assert!(r.stdout.contains(&format!("--- {expected}")), "{}", r.stdout);

    let dir = scratch("golden");
    let mut golden = std::fs::read_to_string(&expected).unwrap();
    golden = golden.replacen("(1 row)", "(1 rows)", 1);
    let edited = dir.join("lock-update-delete.out");
    std::fs::write(&edited, golden).unwrap();
    let junit = dir.join("golden.xml");
    let r = run(&[
        "spec",
        "--database-url",
        &srv.url(),
        &spec,
        "--expected",
        edited.to_str().unwrap(),
        "--format",
        "json",
        "--junit",
        junit.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let report: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(differing(&report), vec!["lock-update-delete".to_string()]);
    // The diff goes where CI reads it: in the JSON and in JUnit's failure.
    let variants = report["scenarios"][0]["variants"].as_array().unwrap();
    let golden_case = variants
        .iter()
        .find(|v| v["name"] == "expected output")
        .expect("its case");
    let diff = golden_case["diff"].as_str().expect("the diff in the JSON");
    assert!(diff.contains("-(1 rows)\n+(1 row)\n"), "{diff}");
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("-(1 rows)\n+(1 row)\n"), "{xml}");

    // Of several expected files (pg_regress's NAME_1.out), the one matched
    // is the one named.
    std::fs::copy(&expected, dir.join("lock-update-delete_1.out")).unwrap();
    let r = run(&[
        "spec",
        "--database-url",
        &srv.url(),
        &spec,
        "--expected-dir",
        dir.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let report: Value = serde_json::from_str(&r.stdout).unwrap();
    let variants = report["scenarios"][0]["variants"].as_array().unwrap();
    let golden_case = variants
        .iter()
        .find(|v| v["name"] == "expected output")
        .expect("its case");
    let said = golden_case["expected"].as_str().unwrap();
    assert!(said.ends_with("lock-update-delete_1.out"), "{said}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The default output, JSON and JUnit: one variant (test case) per
/// permutation, each with its timeline; waits named; no database left.
#[test]
fn timelines_json_and_junit_per_permutation() {
    let srv = TestServer::start();
    let dir = scratch("junit");
    let junit = dir.join("spec.xml");
    let r = run(&[
        "spec",
        "--database-url",
        &srv.url(),
        "lab/nowait.spec",
        "lab/deadlock.spec",
        "--format",
        "json",
        "--junit",
        junit.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.why());
    let report: Value = serde_json::from_str(&r.stdout).unwrap();
    let specs = report["scenarios"].as_array().unwrap();
    assert_eq!(specs.len(), 2);
    let deadlock = &specs[1];
    assert_eq!(deadlock["scenario"], "deadlock");
    let perms = deadlock["variants"].as_array().unwrap();
    let text = std::fs::read_to_string("lab/deadlock.spec").unwrap();
    assert_eq!(
        perms.len(),
        text.lines().filter(|l| l.starts_with("permutation")).count()
    );
    let codes: Vec<&str> = perms
        .iter()
        .flat_map(|p| p["sqlstates"].as_array().unwrap())
        .filter_map(Value::as_str)
        .collect();
    assert!(codes.contains(&"40P01"), "{codes:?}");
    let waited = perms
        .iter()
        .flat_map(|p| p["timeline"].as_array().unwrap())
        .any(|e| e["result"] == "waiting" && e["blocked_by"].is_array());
    assert!(waited, "a wait, with whom it waits for");
    let xml = std::fs::read_to_string(&junit).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let cases = doc.descendants().filter(|n| n.has_tag_name("testcase")).count();
    let all: usize = specs.iter().map(|s| s["variants"].as_array().unwrap().len()).sum();
    assert_eq!(cases, all);
    let client = srv.client();
    let left = srv.query_i64(
        &client,
        "SELECT count(*) FROM pg_database WHERE datname LIKE 'lab\\_spec\\_%'",
    );
    assert_eq!(left, 0);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Sessions are named `<PGAPPNAME>/<session>` and get PGDATESTYLE, PGTZ
/// and PGOPTIONS, as libpq and isolationtester give them.
#[test]
fn sessions_take_the_libpq_environment() {
    let srv = TestServer::start();
    let dir = scratch("env");
    let path = write_spec(
        &dir,
        "env.spec",
        "session s1\nstep show { SELECT current_setting('application_name') AS app, \
         current_setting('DateStyle') AS ds, current_setting('TimeZone') AS tz, \
         current_setting('work_mem') AS wm; }\n",
    );
    let r = run_cmd(
        crate::support::lab()
            .args(["spec", "--database-url", &srv.url(), &path, "--format", "isolation"])
            .env("PGAPPNAME", "workshop")
            .env("PGDATESTYLE", "SQL, DMY")
            .env("PGTZ", "Europe/Istanbul")
            .env("PGOPTIONS", "-c work_mem=7MB"),
    );
    assert_eq!(r.code, 0, "{}", r.why());
    assert!(
        r.stdout.contains("workshop/s1|SQL, DMY|Europe/Istanbul|7MB"),
        "{}",
        r.stdout
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A spec's `# occurs-if:` says, for each permutation `lab spec` runs,
/// whether it showed the anomaly (a hunt's reproducer, replayed, says
/// whether it reproduced); a spec without one says nothing of it.
#[test]
fn a_replay_says_whether_its_occurs_if_held() {
    let srv = TestServer::start();
    let anomaly = |spec: &str| {
        let r = run(&["spec", "--database-url", &srv.url(), spec, "--format", "json"]);
        assert_eq!(r.code, 0, "{}", r.why());
        let report: Value = serde_json::from_str(&r.stdout).expect("JSON");
        report["scenarios"][0]["variants"][0]["anomaly"].clone()
    };
    // p4, a lost update: READ COMMITTED lets it happen; at REPEATABLE READ
    // the second write fails with 40001.
    assert_eq!(anomaly("lab/phenomena/p4.spec"), Value::Bool(true));
    let dir = scratch("occurs-if");
    let text = std::fs::read_to_string("lab/phenomena/p4.spec").unwrap();
    let rr = write_spec(
        &dir,
        "p4-rr.spec",
        &text.replace("'read committed'", "'repeatable read'"),
    );
    assert_eq!(anomaly(&rr), Value::Bool(false));
    assert_eq!(anomaly("lab/examples/last-copy.spec"), Value::Null);
}

/// Runs two specs one by one, stops the run with `stop` at the second one's
/// first wait, and checks that the first is reported whole and the second
/// says where and why it stopped, on stdout's JSON, in JUnit and on stderr.
fn spec_stopped_part_way(stop: impl Fn(&crate::support::TestServer, u32), exit: i32) {
    let srv = crate::support::TestServer::start();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let (first, second) = (
        root.join("lab/examples/last-copy.spec"),
        root.join("lab/fk-blocking.spec"),
    );
    let args = [
        std::ffi::OsStr::new("spec"),
        "--jobs".as_ref(),
        "1".as_ref(),
        first.as_os_str(),
        second.as_os_str(),
    ];
    let waiting = "SELECT count(*) FROM pg_stat_activity \
                   WHERE application_name LIKE 'lab:spec:fk-blocking/%' AND wait_event_type = 'Lock'";
    let (json, err) = crate::support::stopped_part_way(&srv, &args, waiting, stop, exit);
    let specs = json["scenarios"].as_array().unwrap();
    assert_eq!(specs.len(), 2, "{json}");
    // The spec that finished, with its permutations; then where it stopped and why.
    assert_eq!(specs[0]["scenario"], "last-copy");
    assert!(!specs[0]["variants"].as_array().unwrap().is_empty());
    assert_eq!(specs[1]["scenario"], "fk-blocking");
    assert_eq!(specs[1]["error"]["exit_code"], exit);
    let message = specs[1]["error"]["message"].as_str().unwrap();
    assert!(err.contains(message), "the same line on stderr: {err}");
}

#[test]
fn a_spec_run_that_fails_part_way_keeps_every_finished_spec() {
    // The server goes away (an immediate shutdown): the spec cannot be finished.
    spec_stopped_part_way(|srv, _| srv.crash(), 2);
}

#[test]
fn a_spec_run_stopped_by_ctrl_c_keeps_every_finished_spec() {
    spec_stopped_part_way(
        |_, pid| {
            unsafe { libc::kill(pid as i32, libc::SIGINT) };
        },
        130,
    );
}

/// Ctrl-C while a spec runs in the database given: its statement does not
/// go on running in the server (a closed connection does not stop
/// pg_sleep), and what it made goes as after a permutation: by its
/// teardown; without one, it is named, and `--clean` drops it.
#[test]
fn ctrl_c_in_the_database_given_ends_the_backends_and_tidies_as_a_permutation_would() {
    let srv = TestServer::start();
    let client = srv.client();
    let dir = scratch("interrupted");
    let with_teardown = write_spec(
        &dir,
        "slow.spec",
        "setup { CREATE TABLE slowtab (i int); }\nteardown { DROP TABLE slowtab; }\n\
         session s1\nstep a { SELECT pg_sleep(60); }\n",
    );
    let without = write_spec(
        &dir,
        "slow_left.spec",
        "setup { CREATE TABLE slowtab (i int); }\nsession s1\nstep a { SELECT pg_sleep(60); }\n",
    );
    let sleeping = "SELECT count(*) FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(60);'";
    let interrupted = |spec: &str, clean: bool| -> String {
        let mut cmd = crate::support::lab();
        cmd.args(["spec", "--database-url", &srv.url(), "--in-database", spec]);
        if clean {
            cmd.arg("--clean");
        }
        let child = cmd
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        srv.wait_for(&client, sleeping, 1);
        unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(130), "{err}");
        // Ended before lab exits, not some time later.
        assert_eq!(srv.query_i64(&client, sleeping), 0, "the statement still runs: {err}");
        err
    };
    let table = "SELECT count(*) FROM pg_class WHERE relname = 'slowtab'";

    let err = interrupted(&with_teardown, false);
    assert_eq!(srv.query_i64(&client, table), 0, "its teardown ran: {err}");
    assert!(!err.contains("left behind"), "{err}");

    let err = interrupted(&without, false);
    assert!(
        err.contains(
            "warning: slow_left, cut short, left behind: table public.slowtab (--clean drops what a spec leaves)"
        ),
        "{err}"
    );
    assert_eq!(srv.query_i64(&client, table), 1);
    srv.exec(&client, "DROP TABLE slowtab");

    let err = interrupted(&without, true);
    assert_eq!(srv.query_i64(&client, table), 0, "--clean dropped it: {err}");
    assert!(!err.contains("left behind"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A spec that leaves a table behind in the database given: reported by
/// name, exit 1, and the next spec is not run on top of it; with --clean,
/// lab drops exactly what the spec made (a view on a table that was there
/// before goes, the table stays) and the next spec runs.
#[test]
fn in_the_database_given_what_a_spec_leaves_is_named_and_only_that_is_cleaned() {
    let srv = TestServer::start();
    let client = srv.client();
    srv.exec(&client, "CREATE TABLE mine (i int)");
    let dir = scratch("leftovers");
    let leaky = write_spec(
        &dir,
        "leaky.spec",
        "setup { CREATE TABLE leaky (i int); CREATE VIEW leaky_view AS SELECT i FROM mine; \
         CREATE ROLE lab_leaky_role; }\n\
         session s1\nstep r { SELECT count(*) FROM leaky; }\n",
    );
    let next = write_spec(
        &dir,
        "next.spec",
        "setup { CREATE TABLE next (i int); }\nteardown { DROP TABLE next; }\n\
         session s1\nstep r { SELECT count(*) FROM next; }\n",
    );
    let count = |sql: &str| srv.query_i64(&client, sql);
    let r = run(&[
        "spec",
        "--database-url",
        &srv.url(),
        "--in-database",
        &leaky,
        &next,
        "--format",
        "isolation",
        "--verbose",
    ]);
    assert_eq!(r.code, 1, "{}", r.why());
    assert!(
        r.stderr
            .contains("leaky: left behind: role lab_leaky_role, table public.leaky, view public.leaky_view"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("not run: the database holds what leaky left behind"),
        "{}",
        r.stderr
    );
    assert_eq!(
        count("SELECT count(*) FROM pg_class WHERE relname = 'next'"),
        0,
        "next did not run"
    );
    assert_eq!(count("SELECT count(*) FROM pg_class WHERE relname = 'leaky'"), 1);
    srv.exec(
        &client,
        "DROP VIEW leaky_view; DROP TABLE leaky; DROP ROLE lab_leaky_role",
    );

    let url = srv.url();
    let clean = |extra: &[&str]| {
        let mut args = vec!["spec", "--database-url", url.as_str(), "--in-database", "--clean"];
        args.extend_from_slice(extra);
        run(&args)
    };
    let r = clean(&[&leaky, &next]);
    assert_eq!(r.code, 0, "{}", r.why());
    assert!(r.stdout.contains("--clean dropped all of it"), "{}", r.stdout);
    assert_eq!(
        count(
            "SELECT (SELECT count(*) FROM pg_class WHERE relname IN ('leaky', 'leaky_view', 'next')) \
             + (SELECT count(*) FROM pg_roles WHERE rolname = 'lab_leaky_role')"
        ),
        0
    );
    assert_eq!(
        count("SELECT count(*) FROM pg_class WHERE relname = 'mine'"),
        1,
        "what was there stays"
    );

    // A spec that renames a table that was there before, and drops
    // another: the same tables to lab (their OIDs), told, never dropped,
    // even with --clean; exit 1, and the specs after it still run.
    srv.exec(
        &client,
        "CREATE TABLE precious AS SELECT generate_series(1, 1000) AS i; CREATE TABLE keepme (i int)",
    );
    let renames = write_spec(
        &dir,
        "renames.spec",
        "setup { ALTER TABLE precious RENAME TO precious_renamed; DROP TABLE keepme; }\n\
         session s1\nstep r { SELECT count(*) FROM precious_renamed; }\n",
    );
    let r = clean(&[&renames, &next, "--format", "json"]);
    assert_eq!(r.code, 1, "{}", r.why());
    let report: Value = serde_json::from_str(&r.stdout).expect("JSON");
    let observed = |spec: &str| -> Vec<String> {
        let s = report["scenarios"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["scenario"] == spec);
        let variants = s.unwrap_or_else(|| panic!("{spec} ran: {report}"))["variants"]
            .as_array()
            .unwrap();
        variants
            .iter()
            .map(|v| v["observed"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(
        observed("renames")[1],
        "renamed what was there before: table public.precious → public.precious_renamed \
         (lab does not rename it back); dropped what was there before: table public.keepme"
    );
    assert_eq!(
        count("SELECT count(*) FROM precious_renamed"),
        1000,
        "its rows are still there"
    );
    assert_eq!(observed("next").len(), 1, "next ran, and left nothing");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--repeat 20` on a spec made flaky on purpose (two steps finishing
/// together, no blocker marker) reports it, exit 1, with both outputs and
/// how often each came; a spec whose output does not depend on timing is
/// the same in all 20 runs, exit 0, even with every core kept busy.
#[test]
fn repeat_finds_the_spec_made_flaky_on_purpose() {
    let srv = TestServer::start();
    let r = run(&[
        "spec",
        "--database-url",
        &srv.url(),
        "--repeat",
        "20",
        "tests/spec/flaky.spec",
    ]);
    assert_eq!(r.code, 1, "{}", r.why());
    assert!(
        r.stdout
            .contains("FLAKY flaky: permutation s2w s1x s1end s2end: 2 different outputs in 20 runs"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("step s1x: SELECT pg_advisory_unlock(1), pg_advisory_lock(2); <waiting ...>"),
        "{}",
        r.stdout
    );
    // With every core kept busy too (--load), as on a loaded CI runner.
    let r = run(&[
        "spec",
        "--database-url",
        &srv.url(),
        "--repeat",
        "20",
        "--load",
        &format!("{SUITE}/specs/deadlock-simple.spec"),
    ]);
    assert_eq!(r.code, 0, "{}", r.why());
    assert!(
        r.stdout.contains("deadlock-simple: the same output in all 20 runs"),
        "{}",
        r.stdout
    );
}

/// A step held back by an annotation nothing left can meet (s1 raises no
/// notice): once every step has answered, isolationtester gives up at once
/// with its own line and exit 1, and so does lab, byte for byte.
#[test]
fn annotations_nothing_can_meet_end_the_permutation_as_isolationtester_does() {
    let srv = TestServer::start();
    let text = "session s1\nstep a { SELECT 1 AS one; }\nsession s2\nstep b { SELECT 2 AS two; }\n\
                permutation a b(a notices 1)\n";
    let iso = isolationtester_output(&srv, text, &[]);
    assert_eq!(iso.status.code(), Some(1));
    let mut want = iso.stdout;
    want.extend(iso.stderr);
    let want = String::from_utf8(want).unwrap();
    assert!(
        want.ends_with(
            "step b: SELECT 2 AS two; <waiting ...>\nfailed to complete permutation due to mutually-blocking steps\n"
        ),
        "{want}"
    );
    let dir = scratch("mutually-blocking");
    let spec = write_spec(&dir, "held.spec", text);
    let r = run(&["spec", "--database-url", &srv.url(), &spec, "--format", "isolation"]);
    assert_eq!(r.stdout.clone() + &r.stderr, want);
    assert_eq!(r.code, 1, "{}", r.why());
    // As pg_isolation_regress's test: the output is what was expected, and
    // pg_regress 15 says the test process exited 1 (log_child_failure).
    std::fs::create_dir_all(dir.join("specs")).unwrap();
    std::fs::create_dir_all(dir.join("expected")).unwrap();
    std::fs::write(dir.join("specs/held.spec"), text).unwrap();
    std::fs::write(dir.join("expected/held.out"), &want).unwrap();
    let mut cmd = crate::support::lab();
    cmd.current_dir(&dir)
        .args(["spec", "--database-url", &srv.url(), "--outputdir=out", "held"]);
    let r = run_cmd(&mut cmd);
    assert_eq!(r.code, 0, "pg_regress counts it passed: {}", r.why());
    assert!(
        r.stdout
            .contains("test held                         ... ok     (test process exited with exit code 1)"),
        "{}",
        r.stdout
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A spec that ends its own session's backend: isolationtester prints the
/// FATAL and goes on; the next step on that session cannot be sent, and it
/// says so on stdout and exits 1 (no teardown, no more permutations). lab,
/// byte for byte, and exit 1.
#[test]
fn a_step_on_a_session_whose_connection_is_gone_ends_the_run_as_isolationtester_does() {
    let srv = TestServer::start();
    let text = "session s1\nstep a { SELECT pg_terminate_backend(pg_backend_pid()); }\nstep b { SELECT 1; }\n\
                permutation a b\npermutation b a\n";
    let iso = isolationtester_output(&srv, text, &[]);
    assert_eq!(iso.status.code(), Some(1));
    let stdout = String::from_utf8(iso.stdout).unwrap();
    assert!(
        stdout.ends_with("failed to send query for step b: no connection to the server\n\n"),
        "{stdout}"
    );
    let dir = scratch("dead-session");
    let spec = write_spec(&dir, "dead.spec", text);
    let r = run(&["spec", "--database-url", &srv.url(), &spec, "--format", "isolation"]);
    assert_eq!(r.stdout, stdout);
    assert_eq!(r.stderr, String::from_utf8(iso.stderr).unwrap());
    assert_eq!(r.code, 1, "{}", r.why());
    let _ = std::fs::remove_dir_all(&dir);
}

/// PGISOLATIONTIMEOUT sets the step deadline when --wait-timeout is not
/// given, and the step is cancelled with isolationtester's own line: the
/// transcript is byte for byte isolationtester's under the same setting.
#[test]
fn pgisolationtimeout_is_honoured_as_isolationtester_does() {
    let srv = TestServer::start();
    let text = "session s1\nstep s1sleep { SELECT pg_sleep(3); }\nstep s1after { SELECT 1 AS after; }\n";
    let iso = isolationtester_output(&srv, text, &[("PGISOLATIONTIMEOUT", "1")]);
    let mut want = iso.stdout;
    want.extend(iso.stderr);
    let want = String::from_utf8(want).unwrap();
    assert!(
        want.contains("isolationtester: canceling step s1sleep after 1 seconds"),
        "{want}"
    );
    let dir = scratch("timeout");
    let spec = write_spec(&dir, "slow.spec", text);
    let r = run_cmd(
        crate::support::lab()
            .args(["spec", "--database-url", &srv.url(), &spec, "--format", "isolation"])
            .env("PGISOLATIONTIMEOUT", "1"),
    );
    assert_eq!(r.stdout + &r.stderr, want);
    let r = run_cmd(
        crate::support::lab()
            .args(["spec", "--database-url", &srv.url(), &spec])
            .env("PGISOLATIONTIMEOUT", "soon"),
    );
    assert_eq!(r.code, 2);
    assert_eq!(r.stderr, "error: PGISOLATIONTIMEOUT: not a number of seconds: soon\n");
    let _ = std::fs::remove_dir_all(&dir);
}

/// An extension's Makefile line: tests named as pg_regress names them,
/// under --inputdir, results and diffs in pg_regress's layout, its lines on
/// stdout; a test that differs from its expected file is FAILED, its diff
/// in regression.diffs, exit 1; when all pass, the summary files go.
#[test]
fn tests_named_under_inputdir_write_pg_regress_layout() {
    let srv = TestServer::start();
    let input = scratch("ext-input");
    std::fs::create_dir_all(input.join("specs")).unwrap();
    std::fs::create_dir_all(input.join("expected")).unwrap();
    for name in ["deadlock-simple", "lock-update-delete"] {
        std::fs::copy(
            format!("{SUITE}/specs/{name}.spec"),
            input.join("specs").join(format!("{name}.spec")),
        )
        .unwrap();
        std::fs::copy(
            format!("{SUITE}/expected/{name}.out"),
            input.join("expected").join(format!("{name}.out")),
        )
        .unwrap();
    }
    let output = input.join("output_iso");
    let lab_in = |args: &[&str], env: &[(&str, &str)]| {
        let mut cmd = crate::support::lab();
        cmd.current_dir(&input)
            .args([
                "spec",
                "--database-url",
                &srv.url(),
                "--inputdir=.",
                "--outputdir=output_iso",
            ])
            .args(args)
            .envs(env.iter().copied());
        run_cmd(&mut cmd)
    };
    let r = lab_in(&["deadlock-simple", "lock-update-delete"], &[]);
    assert_eq!(r.code, 0, "{}", r.why());
    assert_eq!(
        test_lines(&r.stdout),
        vec![
            ("deadlock-simple".to_string(), "ok".to_string()),
            ("lock-update-delete".to_string(), "ok".to_string())
        ]
    );
    assert!(r.stdout.contains(" All 2 tests passed. "), "{}", r.stdout);
    assert!(output.join("results/lock-update-delete.out").is_file());
    assert!(
        !output.join("regression.diffs").exists(),
        "removed when every test passed"
    );

    let expected = input.join("expected/deadlock-simple.out");
    let text = std::fs::read_to_string(&expected).unwrap();
    std::fs::write(&expected, text.replace("deadlock detected", "no deadlock")).unwrap();
    let r = lab_in(&["deadlock-simple", "lock-update-delete"], &[]);
    assert_eq!(r.code, 1, "{}", r.why());
    assert!(
        r.stdout.contains("test deadlock-simple              ... FAILED"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains(" 1 of 2 tests failed. "), "{}", r.stdout);
    let diffs = std::fs::read_to_string(output.join("regression.diffs")).unwrap();
    assert!(diffs.starts_with("diff -U3 "), "{diffs}");
    assert!(
        diffs.contains("-ERROR:  no deadlock\n+ERROR:  deadlock detected\n"),
        "{diffs}"
    );
    let log = std::fs::read_to_string(output.join("regression.out")).unwrap();
    assert_eq!(test_lines(&log).len(), 2, "{log}");

    // Without --inputdir, pg_regress's is the current directory: the same
    // failure, not a pass for want of anything to compare with.
    let mut cmd = crate::support::lab();
    cmd.current_dir(&input).args([
        "spec",
        "--database-url",
        &srv.url(),
        "--outputdir=output_iso",
        "deadlock-simple",
    ]);
    let r = run_cmd(&mut cmd);
    assert_eq!(r.code, 1, "{}", r.why());
    assert!(r.stdout.contains(" 1 of 1 tests failed. "), "{}", r.stdout);

    // pg_regress's settings whatever the environment says (a CI runner's
    // PGTZ=UTC, say), as pg_regress sets them: the expected file is
    // isolationtester's, run as pg_isolation_regress runs it.
    let settings = "session s1\nstep show { SELECT current_setting('TimeZone') AS tz, \
                    current_setting('DateStyle') AS ds, current_setting('IntervalStyle') AS ivs, \
                    current_setting('application_name') AS app; }\n";
    std::fs::write(input.join("specs/settings.spec"), settings).unwrap();
    let iso = isolationtester_output(
        &srv,
        settings,
        &[
            ("PGTZ", "America/Los_Angeles"),
            ("PGDATESTYLE", "Postgres, MDY"),
            ("PGOPTIONS", "-c intervalstyle=postgres_verbose"),
            ("PGAPPNAME", "isolation/settings"),
        ],
    );
    assert!(iso.status.success());
    assert!(
        String::from_utf8_lossy(&iso.stdout).contains("isolation/settings/s1"),
        "{}",
        String::from_utf8_lossy(&iso.stdout)
    );
    std::fs::write(input.join("expected/settings.out"), iso.stdout).unwrap();
    let r = lab_in(
        &["settings"],
        &[("PGTZ", "UTC"), ("PGDATESTYLE", "ISO, DMY"), ("PGAPPNAME", "ci")],
    );
    assert_eq!(r.code, 0, "{}", r.why());
    let _ = std::fs::remove_dir_all(&input);
}

/// A Makefile's pg_isolation_regress line, unchanged, with `lab spec` in
/// its place: --host/--port/--user, --bindir, --dlpath, --load-extension,
/// --encoding, --no-locale, --max-connections, a schedule with an
/// `ignore:` line and a spec that does not parse. PostgreSQL's harness runs
/// it first on the same server: the same test lines, exit code, summary,
/// results byte for byte (where isolationtester's words for a spec it
/// cannot parse are not lab's: failed, exited 1, a diff, and the run goes on).
#[test]
fn pg_isolation_regress_command_line_unchanged() {
    let srv = TestServer::start();
    let client = srv.client();
    let input = scratch("drop-in-options");
    std::fs::create_dir_all(input.join("specs")).unwrap();
    std::fs::create_dir_all(input.join("expected")).unwrap();
    let one = "Parsed test spec with 1 sessions\n\nstarting permutation: s1a\nstep s1a: SELECT 1 AS one;\n\
               one\n---\n  1\n(1 row)\n\n";
    let specs = [
        (
            "made",
            "session s1\nstep made { SELECT pg_encoding_to_char(encoding) AS encoding, datcollate, datctype \
             FROM pg_database WHERE datname = current_database(); }\n\
             step exts { SELECT extname FROM pg_extension ORDER BY extname; }\n\
             step roles { SELECT rolname, has_database_privilege(rolname, current_database(), 'CREATE') \
             AS can_create FROM pg_roles WHERE rolname LIKE 'regress_lab_%' ORDER BY rolname; }\n",
            "Parsed test spec with 1 sessions\n\nstarting permutation: made exts roles\n\
             step made: SELECT pg_encoding_to_char(encoding) AS encoding, datcollate, datctype \
             FROM pg_database WHERE datname = current_database();\n\
             encoding|datcollate|datctype\n--------+----------+--------\nLATIN1  |C         |C       \n(1 row)\n\n\
             step exts: SELECT extname FROM pg_extension ORDER BY extname;\n\
             extname\n-------\nlo     \nplpgsql\n(2 rows)\n\n\
             step roles: SELECT rolname, has_database_privilege(rolname, current_database(), 'CREATE') \
             AS can_create FROM pg_roles WHERE rolname LIKE 'regress_lab_%' ORDER BY rolname;\n\
             rolname      |can_create\n-------------+----------\nregress_lab_a|t         \n\
             regress_lab_b|t         \n(2 rows)\n\n",
        ),
        ("ok1", "session s1\nstep s1a { SELECT 1 AS one; }\n", one),
        ("fail", "session s1\nstep s1a { SELECT 2 AS one; }\n", one),
        ("ign", "session s1\nstep s1a { SELECT 3 AS one; }\n", one),
        ("bad", "session s1\nstep s1a { SELECT 1 AS one;\n", one),
    ];
    for (name, spec, expected) in specs {
        std::fs::write(input.join(format!("specs/{name}.spec")), spec).unwrap();
        std::fs::write(input.join(format!("expected/{name}.out")), expected).unwrap();
    }
    std::fs::write(
        input.join("schedule"),
        "test: made ok1\nignore: ign\ntest: ign fail\ntest: bad\n",
    )
    .unwrap();
    let port = srv.cluster.port.to_string();
    // pg_regress runs psql from --bindir: an installation's bin has both;
    // npm's embedded builds have the server programs only, so psql is
    // linked in beside them (Debian's, on PATH).
    let bin = input.join("bin");
    std::fs::create_dir(&bin).unwrap();
    for entry in std::fs::read_dir(&srv.cluster.bin).unwrap() {
        let entry = entry.unwrap();
        std::os::unix::fs::symlink(entry.path(), bin.join(entry.file_name())).unwrap();
    }
    if !bin.join("psql").exists() {
        let psql = Command::new("sh").args(["-c", "command -v psql"]).output().unwrap();
        let psql = String::from_utf8_lossy(&psql.stdout).trim().to_string();
        assert!(
            !psql.is_empty(),
            "psql on PATH (scripts/test installs postgresql-client)"
        );
        std::os::unix::fs::symlink(psql, bin.join("psql")).unwrap();
    }
    let bindir = format!("--bindir={}", bin.display());
    let options = |out: &str| -> Vec<String> {
        [
            "--inputdir=.",
            &format!("--outputdir={out}"),
            &bindir,
            "--dlpath=/nonexistent",
            "--host=127.0.0.1",
            &format!("--port={port}"),
            "--user=postgres",
            "--schedule=schedule",
            "--max-connections=1",
            "--load-extension=lo",
            "--no-locale",
            "--encoding=LATIN1",
            "--create-role=regress_lab_a,regress_lab_b",
        ]
        .map(String::from)
        .to_vec()
    };
    let theirs = Command::new(isolationtester().with_file_name("pg_isolation_regress"))
        .current_dir(&input)
        .args(options("theirs"))
        .output()
        .expect("pg_isolation_regress runs");
    let their_out = String::from_utf8_lossy(&theirs.stdout).into_owned();
    assert_eq!(
        theirs.status.code(),
        Some(1),
        "{their_out}{}",
        String::from_utf8_lossy(&theirs.stderr)
    );
    // (It leaves its database and roles behind; lab must not find them there.)
    srv.exec(&client, "DROP DATABASE isolation_regression");
    srv.exec(&client, "DROP ROLE regress_lab_a, regress_lab_b");

    let r = run_cmd(
        crate::support::lab()
            .current_dir(&input)
            .arg("spec")
            .args(options("mine")),
    );
    assert_eq!(r.code, 1, "{}", r.why());
    assert_eq!(test_lines(&r.stdout), test_lines(&their_out), "{}", r.stdout);
    assert_eq!(
        test_lines(&r.stdout),
        [
            ("made", "ok"),
            ("ok1", "ok"),
            ("ign", "failed"),
            ("fail", "FAILED"),
            ("bad", "FAILED")
        ]
        .map(|(n, s)| (n.to_string(), s.to_string()))
    );
    for line in [
        "parallel group (2 tests, in groups of 1):  made ok1",
        "     ign                          ... failed (ignored) ",
        "test bad                          ... FAILED (test process exited with exit code 1) ",
        " 3 of 5 tests failed, 1 of these failures ignored. ",
    ] {
        assert!(their_out.contains(line), "pg_isolation_regress: {their_out}");
        assert!(r.stdout.contains(line), "lab: {}", r.stdout);
    }
    for name in ["made", "ok1", "fail", "ign"] {
        let file = format!("results/{name}.out");
        assert_eq!(
            std::fs::read_to_string(input.join("mine").join(&file)).unwrap(),
            std::fs::read_to_string(input.join("theirs").join(&file)).unwrap(),
            "{file}"
        );
    }
    let why = std::fs::read_to_string(input.join("mine/results/bad.out")).unwrap();
    assert!(why.contains("unterminated"), "{why}");
    assert_eq!(
        diffed(&input.join("mine/regression.diffs")),
        diffed(&input.join("theirs/regression.diffs"))
    );
    assert_eq!(
        srv.query_i64(
            &client,
            "SELECT count(*) FROM pg_database WHERE datname LIKE 'lab\\_spec\\_%'"
        ),
        0,
        "lab drops the databases it made"
    );
    assert_eq!(
        srv.query_i64(
            &client,
            "SELECT count(*) FROM pg_roles WHERE rolname LIKE 'regress\\_lab\\_%'"
        ),
        0,
        "and the roles it made"
    );

    // The same test named alone is not ignored (pg_regress 15: FAILED, exit 1).
    std::fs::write(input.join("schedule"), "ignore: ign\ntest: ign\n").unwrap();
    let r = run_cmd(crate::support::lab().current_dir(&input).args([
        "spec",
        "--outputdir=alone",
        "--host=127.0.0.1",
        &format!("--port={port}"),
        "--user=postgres",
        "--schedule=schedule",
        "ign",
    ]));
    assert_eq!(r.code, 1, "{}", r.why());
    assert_eq!(
        test_lines(&r.stdout),
        [("ign", "failed"), ("ign", "FAILED")].map(|(n, s)| (n.to_string(), s.to_string()))
    );
    assert!(
        r.stdout.contains(" 2 of 2 tests failed, 1 of these failures ignored. "),
        "{}",
        r.stdout
    );

    // Without the options that make the database, `made` is not what it was.
    std::fs::write(input.join("schedule"), "test: made\n").unwrap();
    let r = run_cmd(crate::support::lab().current_dir(&input).args([
        "spec",
        "--inputdir=.",
        "--outputdir=plain",
        "--host=127.0.0.1",
        &format!("--port={port}"),
        "--user=postgres",
        "--schedule=schedule",
    ]));
    assert_eq!(r.code, 1, "{}", r.why());
    assert_eq!(test_lines(&r.stdout), [("made".to_string(), "FAILED".to_string())]);
}

/// --temp-instance: lab's own throwaway cluster whatever the environment
/// says (pg_regress unsets PGHOST and the rest), --temp-config appended to
/// its configuration (the setting is read back by the spec), and nothing
/// left behind: not DIR, not the cluster. pg_regress's options that cannot
/// be taken: one line, exit 2.
#[test]
fn temp_instance_and_temp_config_as_pg_regress_takes_them() {
    let input = scratch("temp-instance");
    std::fs::create_dir_all(input.join("specs")).unwrap();
    std::fs::create_dir_all(input.join("expected")).unwrap();
    std::fs::write(
        input.join("specs/conf.spec"),
        "session s1\nstep wm { SHOW work_mem; }\nstep px { SHOW max_prepared_transactions; }\n",
    )
    .unwrap();
    // work_mem from --temp-config; max_prepared_transactions as pg_regress
    // sets it for its temporary instance.
    std::fs::write(
        input.join("expected/conf.out"),
        "Parsed test spec with 1 sessions\n\nstarting permutation: wm px\nstep wm: SHOW work_mem;\n\
         work_mem\n--------\n7MB     \n(1 row)\n\nstep px: SHOW max_prepared_transactions;\n\
         max_prepared_transactions\n-------------------------\n                        2\n(1 row)\n\n",
    )
    .unwrap();
    std::fs::write(input.join("extra.conf"), "work_mem = '7MB'\n").unwrap();
    let lab = |args: &[&str]| {
        run_cmd(
            crate::support::lab()
                .current_dir(&input)
                .args(["spec", "--temp-instance=./tmp_check", "--outputdir=out"])
                .args(args)
                // Not where pg_regress's temp instance connects.
                .env("DATABASE_URL", "postgres://nobody@127.0.0.1:1/nowhere")
                .env("PGHOST", "127.0.0.1")
                .env("PGPORT", "1"),
        )
    };
    // (An empty --bindir, as PGXS's `make check` passes it: the PATH's.)
    let r = lab(&["--temp-config=extra.conf", "--bindir=", "conf"]);
    assert_eq!(r.code, 0, "{}", r.why());
    assert!(r.stdout.contains(" All 1 tests passed. "), "{}", r.stdout);
    assert!(
        !input.join("tmp_check").exists(),
        "lab's cluster lives in a directory of its own"
    );
    let r = lab(&["conf"]);
    assert_eq!(r.code, 1, "without it, work_mem is the default: {}", r.why());

    for (args, says) in [
        (&["--temp-config=nope.conf", "conf"][..], "nope.conf: cannot read it"),
        (
            &["--database-url=postgres://x@127.0.0.1:1/y", "conf"][..],
            "--database-url and --temp-instance both say which server to use",
        ),
        (&["--host=localhost", "conf"][..], "--temp-instance and --host both say"),
        (
            &["--launcher=valgrind", "conf"][..],
            "--launcher: lab runs the specs on its own engine",
        ),
    ] {
        one_line_exit_2(&lab(args), says);
    }
    std::fs::write(input.join("schedule"), "test: conf\ntest: conf conf conf\n").unwrap();
    one_line_exit_2(
        &lab(&["--schedule=schedule", "--max-concurrent-tests=2"]),
        "too many parallel tests (more than 2) in schedule file \"schedule\" line 2: test: conf conf conf",
    );
}

/// A setup, a session's setup or a teardown that fails where the server
/// gives a position: libpq's `LINE n:` display and caret (a later line of
/// the block, cut to 60 columns with `...`, a tab, wide characters) and a
/// PL/pgSQL statement's `QUERY:`, byte for byte as isolationtester prints
/// them on the same server.
#[test]
fn failed_setup_and_teardown_say_where_as_libpq_does() {
    let srv = TestServer::start();
    let client = srv.client();
    let dir = scratch("error-position");
    let specs = [
        (
            "later-line",
            "setup {\n  CREATE TABLE ep_t (a int);\n  INSERT INTO ep_t VALUES (1;\n}\n\
             session s1\nstep s1a { SELECT 1; }\n",
        ),
        (
            "teardown",
            "setup { CREATE TABLE ep_t2 (a int); }\nteardown { DROP TABLE ep_t2; SELECT 1/0 FROM ep_t2 \
             WHERE a = 1 OR a > 0 OR a < 100 OR a IS NULL OR zz = 1; }\n\
             session s1\nstep s1a { SELECT 1 AS one; }\n",
        ),
        (
            "internal-query",
            "session s1\nsetup { DO $$ BEGIN PERFORM nosuch FROM pg_class; END $$; }\nstep s1a { SELECT 1; }\n",
        ),
        (
            "cut",
            "setup { CREATE TABLE ep_t4 (a int); SELECT a FROM ep_t4 WHERE a = 1 OR a = 2 OR a = 3 \
             OR a = 4 OR a = 5 OR a = 6 OR a = 7 OR a = 8 OR a = 9 OR a = 10 OR a = 11 OR zz = 1 OR a = 13; }\n\
             session s1\nstep s1a { SELECT 1; }\n",
        ),
        (
            "wide",
            "setup {\n\tSELECT 1 AS café, 2 AS 漢字漢字 FROM nosuch;\n}\nsession s1\nstep s1a { SELECT 1; }\n",
        ),
    ];
    for (name, text) in specs {
        let iso = isolationtester_output(&srv, text, &[]);
        // (What isolationtester's failed teardown left in its database.)
        srv.exec(&client, "DROP TABLE IF EXISTS ep_t, ep_t2, ep_t4");
        let mut want = iso.stdout;
        want.extend(iso.stderr);
        let want = String::from_utf8(want).unwrap();
        assert!(want.contains("\nLINE ") && want.contains("^\n"), "{name}: {want}");
        let spec = write_spec(&dir, &format!("{name}.spec"), text);
        let r = run(&["spec", "--database-url", &srv.url(), &spec, "--format", "isolation"]);
        assert_eq!(r.stdout + &r.stderr, want, "{name}");
    }
}

/// Ctrl-C while specs run side by side: exit 130, and nothing is left
/// behind (no database of lab's, no session), whatever the runs still
/// going were doing (one may have been creating its database).
#[test]
fn interrupted_side_by_side_it_leaves_no_database_behind() {
    let srv = TestServer::start();
    let schedule = format!("{SUITE}/isolation_schedule");
    let (_, err) = crate::support::stopped_part_way(
        &srv,
        &["spec", "--schedule", &schedule, "--repeat", "3", "--jobs", "2"].map(std::ffi::OsStr::new),
        "SELECT count(*) FROM (SELECT 1 FROM pg_database WHERE datname LIKE 'lab\\_spec\\_%' OFFSET 1 LIMIT 1) d",
        |_, pid| unsafe {
            libc::kill(pid as i32, libc::SIGINT);
        },
        130,
    );
    assert!(err.contains("interrupted"), "{err}");
    let c = srv.client();
    // Every database lab made is dropped before it exits.
    assert_eq!(
        srv.query_i64(
            &c,
            "SELECT count(*) FROM pg_database WHERE datname LIKE 'lab\\_spec\\_%'"
        ),
        0
    );
    // Its connections closed with it; their backends end in the server's own time.
    srv.wait_for_zero(
        &c,
        "SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE 'lab:spec:%'",
    );
}

/// `lab spec --pooler`: through lab's PgBouncer in transaction mode a
/// spec of transactions prints what it prints on the server itself, and a
/// session-level advisory lock is lost between transactions, as a
/// transaction pooler is documented to lose it: the other session gets it.
#[test]
fn through_lab_pooler_a_session_lock_is_lost_and_nothing_else_changes() {
    let srv = TestServer::start();
    let url = srv.url();
    let output = |spec: &str, pooler: bool| {
        let mut args = vec!["spec", "--database-url", &url, spec, "--format", "isolation"];
        if pooler {
            args.push("--pooler");
        }
        let r = run_cmd(
            crate::support::lab()
                .args(&args)
                .env("PGTZ", "UTC")
                .env("PGDATESTYLE", "ISO, MDY"),
        );
        assert_eq!(r.code, 0, "{spec} pooler={pooler}: {}", r.why());
        r.stdout
    };
    assert_eq!(
        output("lab/lost-update.spec", true),
        output("lab/lost-update.spec", false)
    );
    let (pooled, direct) = (
        output("lab/advisory-lock.spec", true),
        output("lab/advisory-lock.spec", false),
    );
    let other_try = |out: &str| {
        let at = out.find("step other_try:").expect("other_try ran");
        out[at..].lines().nth(3).unwrap().trim().to_string()
    };
    assert_eq!(other_try(&direct), "f", "on the server the lock is held: {direct}");
    assert_eq!(other_try(&pooled), "t", "behind the pooler it is not: {pooled}");
    let c = srv.client();
    assert_eq!(
        srv.query_i64(
            &c,
            "SELECT count(*) FROM pg_database WHERE datname LIKE 'lab\\_spec\\_%'"
        ),
        0
    );
}

/// The specs of PostgreSQL's schedule whose output a transaction pooler
/// changes, as PgBouncer documents for `pool_mode = transaction` (state
/// that lives on a server connection, not with the client), and why.
const POOLER_CHANGES: &[(&str, &str)] = &[
    ("lock-update-delete", "a session advisory lock"),
    ("insert-conflict-specconflict", "a session advisory lock"),
    ("lock-committed-update", "a session advisory lock"),
    ("lock-committed-keyupdate", "a session advisory lock"),
    ("tuplelock-update", "a session advisory lock"),
    ("nowait-4", "a session advisory lock"),
    ("nowait-5", "a session advisory lock"),
    ("skip-locked-4", "a session advisory lock"),
    ("multiple-cic", "a session advisory lock"),
    ("plpgsql-toast", "a session advisory lock"),
    ("temp-schema-cleanup", "temporary tables and a session advisory lock"),
    ("inherit-temp", "temporary tables"),
    ("horizons", "temporary tables"),
    ("async-notify", "LISTEN"),
    (
        "detach-partition-concurrently-3",
        "pg_backend_pid() names a server connection",
    ),
    (
        "detach-partition-concurrently-4",
        "pg_backend_pid() names a server connection",
    ),
    (
        "stats",
        "pg_stat_force_next_flush() flushes a server connection's statistics",
    ),
];

/// Specs a transaction pooler changes only when it hands a session another
/// server connection than its last one (PgBouncer mostly gives the last
/// one back), and why.
const POOLER_MAY_CHANGE: &[(&str, &str)] = &[
    (
        "detach-partition-concurrently-1",
        "PREPARE in a transaction, DEALLOCATE after it: a prepared statement lives on a server connection",
    ),
    (
        "drop-index-concurrently-1",
        "PREPARE in steps of their own, EXECUTE in a later transaction: a prepared statement lives on a \
         server connection (CI, loaded, 2026-12-04: \"prepared statement getrow_idxscan does not exist\")",
    ),
    (
        "intra-grant-inplace-db",
        "a session's setup creates a temporary table its later steps use",
    ),
    (
        "multiple-row-versions",
        "a million-row table: through the pooler (3 s deadline, see below) a step can outlast it on a loaded \
         machine (2026-12-07, load 6: rx1 cancelled, the rest of the permutation unrun)",
    ),
    (
        "vacuum-conflict",
        "SET ROLE in one step, VACUUM (no transaction block, so no prelude) in the next: \
         whether it runs on the server connection with the role depends on the pooler's timing",
    ),
    (
        "cluster-conflict",
        "SET ROLE, then CLUSTER sent alone (block-sensitive, so no prelude): as vacuum-conflict",
    ),
    (
        "cluster-conflict-partition",
        "SET ROLE, then CLUSTER of a partitioned table (no transaction block): as vacuum-conflict",
    ),
    (
        "deadlock-parallel",
        "on a loaded machine its deadlock may wait for d1's 10 s deadlock_timeout \
         (the spec's own comment), past the 3 s step deadline this run uses",
    ),
];

/// A transaction pooler of the user's (PgBouncer, `pool_mode =
/// transaction`): lab spec refuses to make databases through it, runs
/// PostgreSQL's schedule in the database given, and every spec prints what
/// PostgreSQL expects but the ones whose state a transaction pooler is
/// documented not to keep; nothing of lab's stays on the pooler's server
/// connections, nothing in the database.
#[test]
fn through_a_users_transaction_pooler_specs_run_in_the_database_given() {
    let srv = TestServer::start();
    let pgb = crate::support::PgBouncer::start(&srv);
    let url = pgb.url("tx");
    let r = run(&["spec", "--database-url", &url, "lab/write-skew.spec"]);
    crate::support::one_line_exit_2(
        &r,
        "is a transaction pooler: lab spec runs through it only in the database given",
    );
    let r = run(&[
        "spec",
        "--database-url",
        &url,
        "--in-database",
        "--pooler",
        "lab/write-skew.spec",
    ]);
    crate::support::one_line_exit_2(&r, "is a transaction pooler already");
    // Other commands still refuse it.
    let r = run(&["write-skew", "--database-url", &url]);
    crate::support::one_line_exit_2(&r, "is a transaction pooler (backend");

    // What the schedule prints on the server itself, in the same database,
    // is what it is compared with.
    let direct = scratch("users-pooler-direct");
    let out = scratch("users-pooler");
    let schedule = |url: &str, out: &Path, expected: &str, deadline: &str| {
        run_cmd(
            crate::support::lab()
                .args([
                    "spec",
                    "--database-url",
                    url,
                    "--in-database",
                    "--clean",
                    "--schedule",
                    &format!("{SUITE}/isolation_schedule"),
                    &format!("--inputdir={SUITE}"),
                    &format!("--outputdir={}", out.display()),
                    &format!("--expected-dir={expected}"),
                    "--format",
                    "json",
                ])
                .env("PGISOLATIONTIMEOUT", deadline),
        )
    };
    // (The pooler's `tx` is the server's postgres database.)
    // On the server nothing is stuck: a deadline past every deadlock_timeout
    // of the suite's (deadlock-parallel's 10 s), so load cannot change it.
    let r = schedule(&srv.url(), &direct, &format!("{SUITE}/expected"), "30");
    assert!(r.code <= 1, "on the server: {}", r.why());
    // Through the pooler a stuck step (a session lock the pooler kept) is
    // cancelled sooner.
    let r = schedule(&url, &out, direct.join("results").to_str().unwrap(), "3");
    assert_eq!(r.code, 1, "the pooler changes some: {}", r.stderr);
    let report: Value = serde_json::from_str(&r.stdout).expect("JSON");
    let differ = differing(&report);
    let expected: Vec<String> = POOLER_CHANGES.iter().map(|(k, _)| k.to_string()).collect();
    let version = {
        let c = srv.client();
        srv.query_i64(&c, "SELECT current_setting('server_version_num')::bigint")
    };
    let diffs = std::fs::read_to_string(out.join("regression.diffs")).unwrap_or_default();
    let unexplained: Vec<&String> = differ
        .iter()
        .filter(|d| !expected.contains(d) && !POOLER_MAY_CHANGE.iter().any(|(k, _)| k == d))
        .collect();
    let entries: Vec<String> = report["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| unexplained.iter().any(|u| s["scenario"].as_str() == Some(u.as_str())))
        .map(|s| s.to_string().chars().take(3000).collect())
        .collect();
    assert!(
        unexplained.is_empty(),
        "{unexplained:?} differ through the pooler:\n{diffs}\n{entries:#?}\nlab said:\n{}",
        r.stderr
    );
    if version / 10000 == 15 {
        // On the server the suite was written for, each documented change shows.
        let missing: Vec<&String> = expected.iter().filter(|e| !differ.contains(e)).collect();
        assert!(missing.is_empty(), "{missing:?} print the same through the pooler");
    }
    eprintln!("through a transaction pooler: {} of 115 byte-equal", 115 - differ.len());
    let c = srv.client();
    // (The one lab's control connection asked its last question on is
    // cleaned in place, and keeps the control's name.)
    assert_eq!(
        srv.query_i64(
            &c,
            "SELECT count(*) FROM pg_stat_activity \
              WHERE (application_name LIKE 'lab:spec:%' OR application_name LIKE 'isolation/%') \
                AND application_name NOT LIKE '%/control connection'"
        ),
        0,
        "server connections lab's sessions used are ended"
    );
    assert_eq!(
        srv.query_i64(
            &c,
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' OR pid IN \
               (SELECT pid FROM pg_stat_activity WHERE application_name LIKE 'isolation/%')"
        ),
        0,
        "no lock held on the pooler's server connections"
    );
    assert_eq!(
        srv.query_i64(&c, "SELECT count(*) FROM pg_class WHERE relpersistence = 't'"),
        0,
        "no temporary table left on them"
    );
    assert_eq!(
        srv.query_i64(
            &c,
            "SELECT count(*) FROM pg_class WHERE relnamespace = 'public'::regnamespace"
        ),
        0,
        "nothing left in the database"
    );
}
