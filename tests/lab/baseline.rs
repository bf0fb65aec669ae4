//! `--baseline FILE`: a run compared with an earlier run's JSON; the same
//! server twice differs in nothing, a baseline whose waits and counts were
//! other is listed difference by difference (exit 1), bad baselines are one
//! line (exit 2).
use serde_json::Value;

use crate::support::{TestServer, one_line_exit_2, run};

fn scratch(name: &str) -> crate::support::Scratch {
    crate::support::scratch("lab-baseline", name)
}

#[test]
fn a_second_run_is_the_same_and_a_changed_baseline_is_listed() {
    let srv = TestServer::start();
    let dir = scratch("lost-update");
    let first = run(&["lost-update", "--database-url", &srv.url(), "--format", "json"]);
    assert_eq!(first.code, 0, "{}", first.why());
    let path = dir.join("base.json");
    std::fs::write(&path, &first.stdout).unwrap();
    let base = path.to_str().unwrap();

    let r = run(&["lost-update", "--database-url", &srv.url(), "--baseline", base]);
    assert_eq!(r.code, 0, "{}", r.why());
    assert!(r.stderr.contains("the same as the baseline"), "{}", r.stderr);

    // A baseline where B never waited for A and no decrement was lost: the
    // server that made it behaved otherwise, and each difference is named.
    let mut edited: Value = serde_json::from_str(&first.stdout).unwrap();
    for v in edited["variants"].as_array_mut().unwrap() {
        if v["name"] == "atomic-update" {
            for e in v["timeline"].as_array_mut().unwrap() {
                e.as_object_mut().unwrap().remove("blocked_by");
            }
        }
        if v["name"] == "read-committed" {
            v["metrics"]["lost_decrements"] = 0.into();
        }
    }
    std::fs::write(&path, serde_json::to_string(&edited).unwrap()).unwrap();
    let r = run(&["lost-update", "--database-url", &srv.url(), "--baseline", base]);
    assert_eq!(r.code, 1, "{}", r.why());
    assert!(r.stderr.contains("2 differences from the baseline"), "{}", r.stderr);
    let row = |variant: &str, what: &str| {
        r.stderr
            .lines()
            .any(|l| l.contains(&format!("lost-update / {variant}")) && l.contains(what))
    };
    assert!(row("atomic-update", "waits"), "{}", r.stderr);
    assert!(r.stderr.contains("waited for A"), "{}", r.stderr);
    assert!(row("read-committed", "metric lost_decrements"), "{}", r.stderr);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_baselines_are_one_line_and_exit_2() {
    let dir = scratch("bad");
    let write = |name: &str, text: &str| {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p.to_str().unwrap().to_string()
    };
    let cases = [
        (vec!["lost-update"], write("text.json", "not json"), "not JSON"),
        (
            vec!["lost-update"],
            write(
                "matrix.json",
                r#"{"server_version": "15", "levels": [], "phenomena": []}"#,
            ),
            "the JSON of another command",
        ),
        (
            vec!["lost-update"],
            write("other.json", r#"{"rows": [1, 2]}"#),
            "not the JSON of a lab run",
        ),
        (
            vec!["spec", "lab/nowait.spec"],
            write(
                "all.json",
                r#"{"server_version": "15", "scenarios": [{"scenario": "lost-update", "variants": [{"name": "a", "as_expected": true}]}]}"#,
            ),
            "none of its scenarios (lost-update) is in this run",
        ),
        (
            vec!["lost-update"],
            dir.join("missing.json").to_str().unwrap().to_string(),
            "cannot read it",
        ),
    ];
    for (args, file, want) in cases {
        let mut a: Vec<&str> = args.clone();
        a.extend(["--baseline", &file]);
        one_line_exit_2(&run(&a), want);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `lab phenomena --baseline`: each cell compared as a variant of its
/// phenomenon; a baseline where G0 occurred at READ COMMITTED is one
/// difference, exit 1; `lab all`'s JSON is another command's, exit 2.
#[test]
fn the_matrix_compares_cell_by_cell() {
    let srv = TestServer::start();
    let dir = scratch("matrix");
    let args = [
        "phenomena",
        "--database-url",
        &srv.url(),
        "--show",
        "g0",
        "--level",
        "read-committed",
    ];
    let mut first = args.to_vec();
    first.extend(["--format", "json"]);
    let r = run(&first);
    assert_eq!(r.code, 0, "{}", r.why());
    let path = dir.join("matrix.json");
    std::fs::write(&path, &r.stdout).unwrap();
    let base = path.to_str().unwrap();
    let mut again = args.to_vec();
    again.extend(["--baseline", base]);
    let r = run(&again);
    assert_eq!(r.code, 0, "{}", r.why());
    assert!(r.stderr.contains("the same as the baseline"), "{}", r.stderr);

    let mut edited: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    edited["phenomena"][0]["cells"]["read-committed"]["verdict"] = "occurs".into();
    std::fs::write(&path, serde_json::to_string(&edited).unwrap()).unwrap();
    let r = run(&again);
    assert_eq!(r.code, 1, "{}", r.why());
    assert!(r.stderr.contains("1 differences from the baseline"), "{}", r.stderr);
    assert!(
        r.stderr
            .lines()
            .any(|l| l.contains("phenomena.g0 / read-committed") && l.contains("anomaly")),
        "{}",
        r.stderr
    );

    let all = dir.join("all.json");
    std::fs::write(
        &all,
        r#"{"server_version": "15", "scenarios": [{"scenario": "lost-update", "variants": [{"name": "a", "as_expected": true}]}]}"#,
    )
    .unwrap();
    let mut wrong = args.to_vec();
    wrong.extend(["--baseline", all.to_str().unwrap()]);
    one_line_exit_2(&run(&wrong), "the JSON of another command");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `lab compare`: runs side by side, a column per run; what differs is named
/// with the servers that gave each value; bad input is one line, exit 2.
#[test]
fn compare_puts_runs_side_by_side_and_names_what_differs() {
    let srv = TestServer::start();
    let dir = scratch("compare");
    let first = run(&["lost-update", "--database-url", &srv.url(), "--format", "json"]);
    assert_eq!(first.code, 0, "{}", first.why());
    let a = dir.join("a.json");
    std::fs::write(&a, &first.stdout).unwrap();
    // The same run as another server would have made it: B never waited in atomic-update.
    let mut edited: Value = serde_json::from_str(&first.stdout).unwrap();
    edited["server_version"] = "99.0".into();
    for v in edited["variants"].as_array_mut().unwrap() {
        if v["name"] == "atomic-update" {
            for e in v["timeline"].as_array_mut().unwrap() {
                e.as_object_mut().unwrap().remove("blocked_by");
            }
        }
    }
    let b = dir.join("b.json");
    std::fs::write(&b, serde_json::to_string(&edited).unwrap()).unwrap();
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let version = first.stdout.split("\"server_version\":").nth(1).unwrap();
    let version = version.trim_start().trim_start_matches('"').split('"').next().unwrap();

    let r = run(&["compare", a, b, "--differences", "--format", "markdown"]);
    assert_eq!(r.code, 0, "{}", r.why());
    assert!(
        r.stdout
            .starts_with(&format!("| scenario / variant | {version} | 99.0 | differs |")),
        "{}",
        r.stdout
    );
    let rows: Vec<&str> = r.stdout.lines().skip(2).collect();
    assert_eq!(rows.len(), 1, "{}", r.stdout);
    assert!(rows[0].starts_with("| lost-update / atomic-update |"), "{}", rows[0]);
    assert!(
        rows[0].contains("waits: B (") && rows[0].contains("| none (99.0)"),
        "{}",
        rows[0]
    );
    assert!(
        r.stderr.contains("2 runs compared: 1 variant(s) differ"),
        "{}",
        r.stderr
    );
    // Every row without --differences.
    let all = run(&["compare", a, a]);
    assert_eq!(all.code, 0, "{}", all.why());
    assert!(all.stdout.contains("lost-update / read-committed"), "{}", all.stdout);

    // Nothing differs: no empty table, the count on stderr says so.
    let none = run(&["compare", a, a, "--differences"]);
    assert_eq!(none.code, 0, "{}", none.why());
    assert!(none.stdout.is_empty(), "{}", none.stdout);
    assert!(
        none.stderr.contains("2 runs compared: 0 variant(s) differ"),
        "{}",
        none.stderr
    );

    one_line_exit_2(&run(&["compare", a]), "takes at least 2 values (1 given)");
    let junk = dir.join("junk.json");
    std::fs::write(&junk, "[1, 2]").unwrap();
    one_line_exit_2(
        &run(&["compare", a, junk.to_str().unwrap()]),
        "not the JSON of a lab run",
    );
    let matrix = dir.join("m.json");
    std::fs::write(&matrix, r#"{"server_version": "15.18", "levels": [], "phenomena": []}"#).unwrap();
    one_line_exit_2(
        &run(&["compare", a, matrix.to_str().unwrap()]),
        "runs of different commands",
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `lab all --baseline` on the server under test, against the run of
/// another major the version matrix saved (tests/versions: 18 for any
/// server but 18, 15 for 18), lists exactly the variants the matrix shows
/// differing between the two majors, and against the saved run of its own
/// major lists none.
#[test]
fn a_baseline_of_another_major_lists_what_the_version_matrix_shows() {
    let dir = scratch("versions");
    let probe = run(&["nowait", "--variant", "nowait", "--format", "json"]);
    assert_eq!(probe.code, 0, "{}", probe.why());
    let version: Value = serde_json::from_str(&probe.stdout).unwrap();
    let major = crate::support::server_major(&version);
    let saved = crate::support::version_runs("all");
    let of = |m: u32| {
        saved
            .iter()
            .find(|(v, _)| v[0] == m)
            .map(|(_, p)| p.display().to_string())
            .unwrap()
    };
    let (same, other) = (of(major), of(if major == 18 { 15 } else { 18 }));
    // What the matrix shows between the two majors, variant by variant.
    let matrix = run(&["compare", &same, &other, "--differences", "--format", "markdown"]);
    assert_eq!(matrix.code, 0, "{}", matrix.why());
    let shown: Vec<String> = matrix
        .stdout
        .lines()
        .skip(2)
        .filter_map(|l| l.strip_prefix("| ")?.split(" | ").next().map(str::to_string))
        .collect();
    assert!(!shown.is_empty(), "the majors differ somewhere: {}", matrix.stdout);

    let r = run(&["all", "--format", "json", "--baseline", &other]);
    // Skipped on one side only: listed, never failed.
    let verdicts_differ = matrix.stdout.lines().skip(2).any(|l| !l.contains("| runs: "));
    assert_eq!(r.code, if verdicts_differ { 1 } else { 0 }, "{}", r.why());
    let listed: Vec<String> = r
        .stderr
        .lines()
        .filter_map(|l| {
            let l = l.strip_prefix("not compared: ").or_else(|| l.strip_prefix("│ "))?;
            let key = l.split(": ").next()?.split(" ┆ ").next()?.trim();
            key.contains(" / ").then(|| key.to_string())
        })
        .collect();
    let (mut a, mut b) = (shown.clone(), listed.clone());
    a.sort();
    b.sort();
    assert_eq!(
        b, a,
        "--baseline listed {listed:?}, the matrix shows {shown:?}:\n{}",
        r.stderr
    );

    // The same run against the saved run of its own major: nothing differs.
    let now = dir.join("now.json");
    std::fs::write(&now, &r.stdout).unwrap();
    let again = run(&["compare", &same, now.to_str().unwrap(), "--differences"]);
    assert_eq!(again.code, 0, "{}", again.why());
    assert!(
        again.stderr.contains("2 runs compared: 0 variant(s) differ"),
        "{}{}",
        again.stdout,
        again.stderr
    );
    let _ = std::fs::remove_dir_all(&dir);
}
