//! `lab phenomena`: the anomaly matrix measured on a real server, each cell
//! decided by what the server answered; a mechanism broken in an edited copy
//! of a phenomenon's spec changes the cell and the exit code.
use serde_json::Value;

use crate::support::{TestServer, run};

fn cell<'a>(report: &'a Value, id: &str, level: &str) -> &'a Value {
    let p = report["phenomena"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == id)
        .unwrap_or_else(|| panic!("no {id}"));
    &p["cells"][level]
}

/// `lab phenomena --show ID ARGS` on a server of its own, from a --lab-dir
/// holding phenomenon `id`'s spec with `from` replaced by `to`.
fn run_mutated(id: &str, from: &str, to: &str, args: &[&str]) -> crate::support::Run {
    let srv = TestServer::start();
    let dir = std::env::temp_dir().join(format!("lab-phenomena-{id}-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("phenomena")).unwrap();
    let path = format!("phenomena/{id}.spec");
    let text = lab::files::LabFiles::embedded().read(&path).unwrap();
    let edited = text.replace(from, to);
    assert_ne!(edited, text.as_ref(), "the mutation applies");
    std::fs::write(dir.join(&path), edited).unwrap();
    let url = srv.url();
    let mut all = vec![
        "phenomena",
        "--database-url",
        &url,
        "--lab-dir",
        dir.to_str().unwrap(),
        "--show",
        id,
    ];
    all.extend_from_slice(args);
    let r = run(&all);
    let _ = std::fs::remove_dir_all(&dir);
    r
}

#[test]
fn the_matrix_is_measured_and_as_documented() {
    let srv = TestServer::start();
    let junit = std::env::temp_dir().join(format!("lab-phenomena-{}.xml", std::process::id()));
    let r = run(&[
        "phenomena",
        "--database-url",
        &srv.url(),
        "--format",
        "json",
        "--junit",
        junit.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let xml = std::fs::read_to_string(&junit).unwrap();
    let _ = std::fs::remove_file(&junit);
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let cases = doc.descendants().filter(|n| n.has_tag_name("testcase")).count();
    assert_eq!(
        cases,
        lab::commands::phenomena::ORDER.len() * 4,
        "one test case per cell"
    );
    let report: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(report["as_expected"], true);
    assert_eq!(report["levels"].as_array().unwrap().len(), 4);
    let rows = report["phenomena"].as_array().unwrap();
    assert_eq!(rows.len(), lab::commands::phenomena::ORDER.len());
    for p in rows {
        for (level, c) in p["cells"].as_object().unwrap() {
            assert_eq!(c["as_expected"], true, "{} at {level}: {c}", p["id"]);
            assert!(!c["timeline"].as_array().unwrap().is_empty(), "{} {level}", p["id"]);
        }
    }
    // How each cell was decided, from the server's answers.
    let p4 = cell(&report, "p4", "read-committed");
    assert_eq!(
        (p4["verdict"].as_str(), p4["how"].as_str()),
        (Some("occurs"), Some("none"))
    );
    let p4 = cell(&report, "p4", "repeatable-read");
    assert_eq!(p4["how"], "aborted");
    assert_eq!(p4["sqlstate"], "40001");
    assert_eq!(p4["at_step"], "t2_write");
    let g0 = cell(&report, "g0", "read-committed");
    assert_eq!(g0["how"], "blocked");
    assert_eq!(g0["waited_for"], serde_json::json!(["T1"]));
    let w2 = cell(&report, "g-single-write-2", "repeatable-read");
    assert_eq!(
        (w2["how"].as_str(), w2["at_step"].as_str()),
        (Some("blocked"), Some("t2_move2"))
    );
    assert_eq!(w2["waited_for"], serde_json::json!(["T1"]));
    assert_eq!(cell(&report, "p3", "repeatable-read")["how"], "snapshot");
    assert_eq!(cell(&report, "g2-item", "repeatable-read")["verdict"], "occurs");
    assert_eq!(cell(&report, "g2-item", "serializable")["how"], "aborted");
    // Every transaction ran at the level of its column, read back from the server.
    let t = cell(&report, "g2", "serializable")["timeline"].as_array().unwrap();
    assert!(t.iter().any(|e| e["isolation"] == "serializable"), "{t:?}");
}

#[test]
fn a_lost_update_that_no_longer_happens_is_not_as_documented() {
    // The mutation: T2 lets the database add (copies + 1) instead of
    // writing what it computed, so at READ COMMITTED its write waits for T1,
    // re-reads the row and no update is lost: not what the documentation
    // says READ COMMITTED allows in the original.
    let r = run_mutated(
        "p4",
        "step t2_write { UPDATE shelf SET copies = 11 WHERE book_id = 1 RETURNING copies; }",
        "step t2_write { UPDATE shelf SET copies = copies + 1 WHERE book_id = 1 RETURNING copies; }",
        &["--level", "read-committed"],
    );
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("≠ expected ✗ occurs"), "{}", r.stdout);
    assert!(r.stdout.contains("✓ blocked t2_write waited for T1"), "{}", r.stdout);
}

#[test]
fn a_write_that_no_longer_waits_is_not_as_documented() {
    // The mutation: T1 only reads book 2 instead of deleting it, so no row
    // lock is held and T2's write to book 2 goes ahead at once: the
    // `nowait` condition holds and the cell is no longer "prevented, blocked".
    let r = run_mutated(
        "g-single-write-2",
        "step t1_delete { DELETE FROM shelf WHERE copies = 20 RETURNING book_id; }",
        "step t1_delete { SELECT book_id FROM shelf WHERE copies = 20; }",
        &["--format", "json"],
    );
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let report: Value = serde_json::from_str(&r.stdout).unwrap();
    for level in ["read-committed", "serializable"] {
        let c = cell(&report, "g-single-write-2", level);
        assert_eq!(
            (c["verdict"].as_str(), c["how"].as_str()),
            (Some("occurs"), Some("none")),
            "{c}"
        );
        assert_eq!(c["as_expected"], false);
    }
}

#[test]
fn a_cell_whose_transaction_runs_at_another_level_is_that_cells_deviation() {
    // The mutation: the read-only report is pinned to READ COMMITTED, so at
    // REPEATABLE READ and SERIALIZABLE that cell measures something else.
    // The cell is not as documented (exit 1) and says what level was read
    // back; the matrix still comes out whole.
    let r = run_mutated(
        "read-only-anomaly",
        "session T3\nsetup { SET default_transaction_isolation = /*:level*/'read committed'; }",
        "session T3\nsetup { SET default_transaction_isolation = 'read committed'; }",
        &["--format", "json"],
    );
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let report: Value = serde_json::from_str(&r.stdout).unwrap();
    let rr = cell(&report, "read-only-anomaly", "repeatable-read");
    assert_eq!(rr["as_expected"], false, "{rr}");
    assert!(rr["wrong_level"].as_str().unwrap().contains("read committed"), "{rr}");
    // At READ COMMITTED the pinned level is the cell's own: as documented.
    let rc = cell(&report, "read-only-anomaly", "read-committed");
    assert_eq!(rc["as_expected"], true, "{rc}");
    assert!(rc.get("wrong_level").is_none(), "{rc}");
}

#[test]
fn unknown_phenomena_and_levels_are_refused() {
    for args in [
        vec!["phenomena", "--show", "nosuch"],
        vec!["phenomena", "--level", "snapshot"],
    ] {
        let r = run(&args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    }
}

/// Runs the matrix one cell at a time, stops it with `stop` once the second
/// phenomenon has begun (every cell of the first is measured), and checks
/// the JSON, JUnit and stderr of a run stopped part-way.
fn matrix_stopped_part_way(stop: impl Fn(&TestServer, u32), exit: i32) {
    let srv = TestServer::start();
    let second = format!(
        "SELECT least(count(*), 1) FROM pg_stat_activity WHERE application_name LIKE 'lab:phenomena:{}/%'",
        lab::commands::phenomena::ORDER[1]
    );
    let args = ["phenomena", "--jobs", "1"].map(std::ffi::OsStr::new);
    let (json, err) = crate::support::stopped_part_way(&srv, &args, &second, stop, exit);
    assert_eq!(json["as_expected"], false);
    // The first phenomenon's cells, every one, with their verdicts.
    let first = &json["phenomena"][0];
    assert_eq!(first["id"], lab::commands::phenomena::ORDER[0]);
    assert_eq!(first["cells"].as_object().unwrap().len(), 4, "{json}");
    // Where it stopped and why.
    assert_eq!(json["error"]["exit_code"], exit);
    assert!(json["error"]["phenomenon"].is_string());
    let message = json["error"]["message"].as_str().unwrap();
    assert!(err.contains(message), "the same line on stderr: {err}");
}

#[test]
fn a_matrix_that_fails_part_way_keeps_every_measured_cell() {
    // The server goes away (an immediate shutdown).
    matrix_stopped_part_way(|srv, _| srv.crash(), 2);
}

/// `--all-interleavings` stopped once every cell is measured and the
/// interleavings are being counted: the error names the phenomenon whose
/// count it cut, in JSON and as a JUnit error (a CI job must not see green).
#[test]
fn all_interleavings_stopped_while_counting_is_an_error_in_junit() {
    let srv = TestServer::start();
    let counting = "SELECT least(count(*), 1) FROM pg_stat_activity WHERE application_name LIKE 'lab:explore:%'";
    let args = ["phenomena", "--all-interleavings"].map(std::ffi::OsStr::new);
    let (json, _) = crate::support::stopped_part_way(
        &srv,
        &args,
        counting,
        |_, pid| {
            unsafe { libc::kill(pid as i32, libc::SIGINT) };
        },
        130,
    );
    assert_eq!(json["as_expected"], false);
    assert_eq!(json["error"]["exit_code"], 130);
    assert!(json["error"]["phenomenon"].is_string(), "{json}");
    assert!(json["error"]["level"].is_null(), "{json}");
}

#[test]
fn a_matrix_stopped_by_ctrl_c_keeps_every_measured_cell() {
    matrix_stopped_part_way(
        |_, pid| {
            unsafe { libc::kill(pid as i32, libc::SIGINT) };
        },
        130,
    );
}
