//! `lab explore`: every interleaving of a spec at every level, grouped by
//! what happened; byte for byte isolationtester's runs; the class counts of
//! lab's specs; mutations that move permutations between classes; bad input.
use serde_json::Value;

use crate::oracle::isolationtester_output;
use crate::support::{TestServer, one_line_exit_2, run};

const SUITE: &str = "tests/pg15-isolation";

fn scratch(name: &str) -> crate::support::Scratch {
    crate::support::scratch("lab-explore-test", name)
}

/// `lab explore ... --format json` on `srv`; exit 0 or 1 expected.
fn explore_json(srv: &TestServer, args: &[&str]) -> (i32, Value) {
    let url = srv.url();
    let mut all = vec!["explore", "--database-url", url.as_str(), "--format", "json"];
    all.extend_from_slice(args);
    let r = run(&all);
    assert!(r.code == 0 || r.code == 1, "exit {}: {}", r.code, r.stderr);
    (r.code, serde_json::from_str(&r.stdout).expect("JSON"))
}

/// `lab explore FILE --format isolation` on the server at `url`.
fn as_isolationtester(path: &std::path::Path, url: &str) -> crate::support::Run {
    run(&[
        "explore",
        path.to_str().unwrap(),
        "--database-url",
        url,
        "--format",
        "isolation",
    ])
}

/// Per level: (runs, anomaly, blocked, aborted, dead ends, stuck, classes).
fn tallies(report: &Value) -> Vec<(String, [i64; 7])> {
    report["levels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            let t = &l["tally"];
            let n = |k: &str| t[k].as_i64().unwrap_or(-1);
            (
                l["level"].as_str().unwrap_or("own").to_string(),
                [
                    n("runs"),
                    n("anomaly"),
                    n("blocked"),
                    n("aborted"),
                    n("dead_ends"),
                    n("stuck"),
                    n("classes"),
                ],
            )
        })
        .collect()
}

/// The specs of PostgreSQL's schedule that list no permutation: lab runs
/// every one isolationtester generates, in its order, and prints exactly
/// what isolationtester prints on the same server (and, on PostgreSQL 15,
/// what PostgreSQL's expected files hold).
#[test]
fn isolation_format_is_isolationtester_byte_for_byte_on_the_generated_permutations() {
    let srv = TestServer::start();
    let client = srv.client();
    let v15 = srv.query_i64(&client, "SELECT current_setting('server_version_num')::bigint") / 10000 == 15;
    let mut specs: Vec<std::path::PathBuf> = std::fs::read_dir(format!("{SUITE}/specs"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            !std::fs::read_to_string(p)
                .unwrap()
                .lines()
                .any(|l| l.starts_with("permutation"))
        })
        .collect();
    specs.sort();
    assert_eq!(specs.len(), 14, "{specs:?}");
    let url = srv.url();
    for path in &specs {
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(path).unwrap();
        let theirs = isolationtester_output(&srv, &text, &[]);
        let ours = as_isolationtester(path, &url);
        assert_eq!(ours.code, 0, "{name}: {}", ours.stderr);
        assert_eq!(
            ours.stdout,
            String::from_utf8_lossy(&theirs.stdout),
            "{name}: lab explore --format isolation differs from isolationtester"
        );
        if v15 {
            let mut cmd = crate::support::lab();
            cmd.env("PGDATESTYLE", "Postgres, MDY").args([
                "explore",
                path.to_str().unwrap(),
                "--database-url",
                &url,
                "--format",
                "isolation",
            ]);
            let dated = crate::support::run_cmd(&mut cmd);
            let expected = std::fs::read_to_string(format!("{SUITE}/expected/{name}.out")).unwrap();
            assert_eq!(
                dated.stdout, expected,
                "{name}: differs from PostgreSQL 15's expected file"
            );
        }
    }
}

/// Listed permutations with blocker marks and names that need quotes:
/// isolationtester's output byte for byte (its `starting permutation:`
/// line has the names as they are, no marks), and a representative line
/// that pastes back into the spec.
#[test]
fn quoted_names_and_marks_print_as_isolationtester_and_paste_back() {
    let srv = TestServer::start();
    let text = "setup { CREATE TABLE q (k int PRIMARY KEY, v int); INSERT INTO q VALUES (1, 0); }\n\
                teardown { DROP TABLE q; }\n\
                session \"s 1\"\n\
                step \"r 1\" { BEGIN; UPDATE q SET v = v + 1 WHERE k = 1; }\n\
                step \"c 1\" { COMMIT; }\n\
                session s2\n\
                step \"w 2\" { UPDATE q SET v = v + 10 WHERE k = 1; }\n\
                permutation \"r 1\" \"w 2\" \"c 1\"\n\
                permutation \"r 1\" \"w 2\"(\"c 1\") \"c 1\"\n";
    let dir = scratch("quoted");
    let path = dir.join("quoted.spec");
    std::fs::write(&path, text).unwrap();
    let url = srv.url();
    let theirs = isolationtester_output(&srv, text, &[]);
    let ours = as_isolationtester(&path, &url);
    assert_eq!(ours.code, 0, "{}", ours.stderr);
    assert_eq!(ours.stdout, String::from_utf8_lossy(&theirs.stdout));
    let (_, report) = explore_json(&srv, &[path.to_str().unwrap(), "--level", "read-committed"]);
    let class = &report["levels"][0]["classes"][0];
    assert_eq!(class["representative"], "\"r 1\" \"w 2\" \"c 1\"", "{report}");
    let spec = lab::specfile::parse(&format!(
        "{text}permutation {}\n",
        class["representative"].as_str().unwrap()
    ))
    .expect("the representative pastes back");
    spec.check().expect("a valid permutation");
}

/// Write skew over every interleaving: both checks see no pending order and
/// both insert in 18 of the 20 at READ COMMITTED and REPEATABLE READ (the
/// two serial ones see the first order); SERIALIZABLE lets none through,
/// aborting one transaction with 40001 in the 18 concurrent ones.
#[test]
fn write_skew_class_counts_at_each_level() {
    let srv = TestServer::start();
    let (code, report) = explore_json(&srv, &["write-skew"]);
    assert_eq!(code, 0, "{report}");
    let t = tallies(&report);
    assert_eq!(t[0], ("read-uncommitted".into(), [20, 18, 0, 0, 0, 0, 2]), "{t:?}");
    assert_eq!(t[1], ("read-committed".into(), [20, 18, 0, 0, 0, 0, 2]), "{t:?}");
    assert_eq!(t[2], ("repeatable-read".into(), [20, 18, 0, 0, 0, 0, 2]), "{t:?}");
    assert_eq!(t[3], ("serializable".into(), [20, 0, 0, 18, 0, 0, 5]), "{t:?}");
    let levels = report["levels"].as_array().unwrap();
    // Its steps name their level: asked for READ UNCOMMITTED, they run READ COMMITTED, and it says so.
    assert_eq!(levels[0]["own_level"], "read committed");
    assert!(levels[1]["own_level"].is_null());
    let ser = &levels[3]["classes"].as_array().unwrap();
    let serial = ser
        .iter()
        .find(|c| c["what"] == "no waits, no errors")
        .expect("a serial class");
    assert_eq!(serial["serial"], 2);
    // Each class's representative is a line the spec's permutation list takes.
    let spec = lab::specfile::parse(&format!(
        "{}\npermutation {}\n",
        lab::files::LabFiles::embedded().read("write-skew.spec").unwrap(),
        ser[0]["representative"].as_str().unwrap()
    ))
    .unwrap();
    spec.check().expect("the representative is a valid permutation");
    // Every run is listed with its class.
    assert_eq!(report["runs"].as_array().unwrap().len(), 80);
    let judged = |l: &Value| l["judged_at"].as_array().unwrap().clone();
    assert_eq!(judged(&levels[0]), ["read-committed"]);
    assert_eq!(judged(&levels[3]), ["serializable"]);

    // The file as written: its three permutations, one per level, name their
    // own level, so each level asked runs all three at theirs. Each run is
    // held to its own level's expectation: as documented at every level.
    let (code, file) = explore_json(&srv, &["lab/write-skew.spec"]);
    assert_eq!(code, 0, "{file}");
    let t = tallies(&file);
    for (i, (level, _)) in t.iter().enumerate() {
        assert_eq!(t[i].1, [3, 2, 0, 1, 0, 0, 3], "{level}: {t:?}");
        let l = &file["levels"][i];
        assert_eq!(l["as_expected"], true, "{level}: {}", l["summary"]);
        assert_eq!(
            judged(l),
            ["read-committed", "repeatable-read", "serializable"],
            "{level}"
        );
    }
}

/// Every spec file lab ships, explored as a user runs it (`lab explore
/// FILE`: its listed permutations at each level), is as documented. Among
/// them: timeouts.spec, whose permutations leave a session in a failed
/// transaction or with a timeout SET (the next run on those connections,
/// at another level, could not set its level); otv.spec, whose `# expect:`
/// is about its listed permutation and `# expect-all:` about every
/// interleaving.
#[test]
fn every_spec_lab_ships_explores_as_documented() {
    let srv = TestServer::start();
    let mut files: Vec<std::path::PathBuf> = ["lab", "lab/examples", "lab/phenomena"]
        .iter()
        .flat_map(|d| std::fs::read_dir(d).unwrap().flatten().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "spec"))
        .collect();
    files.sort();
    assert!(files.len() > 25, "{files:?}");
    for f in &files {
        let (code, report) = explore_json(&srv, &[f.to_str().unwrap()]);
        assert_eq!(code, 0, "{}: {report}", f.display());
        for l in report["levels"].as_array().unwrap() {
            assert_ne!(l["as_expected"], false, "{}: {}", f.display(), l["summary"]);
            assert_eq!(l["tally"]["stuck"], 0, "{}: {}", f.display(), l["summary"]);
        }
    }
    // All of timeouts.spec's four permutations ran at each of the four levels.
    let (_, t) = explore_json(&srv, &["lab/timeouts.spec"]);
    assert_eq!(t["runs"].as_array().unwrap().len(), 16, "{t}");
    // otv.spec: its one permutation is blocked, not the anomaly (`# expect:`);
    // some of every interleaving show it at READ COMMITTED (`# expect-all:`).
    let (code, one) = explore_json(&srv, &["lab/phenomena/otv.spec", "--level", "read-committed"]);
    assert_eq!(
        (code, one["levels"][0]["tally"]["anomaly"].as_i64()),
        (0, Some(0)),
        "{one}"
    );
    let (code, every) = explore_json(
        &srv,
        &[
            "lab/phenomena/otv.spec",
            "--level",
            "read-committed",
            "--all-permutations",
        ],
    );
    assert_eq!(code, 0, "{every}");
    assert!(every["levels"][0]["tally"]["anomaly"].as_i64() > Some(0), "{every}");
}

/// The phenomena over every interleaving, at each level: how many show the
/// anomaly, wait, abort, or cannot go on (a dead end: a step waiting for a
/// session whose next step comes after its own, cut at once; none waits for
/// the deadline).
#[test]
fn phenomena_class_counts_at_each_level() {
    let srv = TestServer::start();
    // (phenomenon, per level: runs, anomaly, blocked, aborted, dead ends).
    let cases: &[(&str, [[i64; 5]; 4])] = &[
        (
            "g0",
            [
                [20, 0, 18, 0, 14],
                [20, 0, 18, 0, 14],
                [20, 0, 18, 4, 14],
                [20, 0, 18, 4, 14],
            ],
        ),
        (
            "g1c",
            [[20, 0, 0, 0, 0], [20, 0, 0, 0, 0], [20, 0, 0, 0, 0], [20, 0, 0, 18, 0]],
        ),
        (
            "p4",
            [
                [20, 12, 12, 0, 6],
                [20, 12, 12, 0, 6],
                [20, 0, 12, 12, 6],
                [20, 0, 12, 12, 6],
            ],
        ),
        (
            "pmp-write",
            [[10, 2, 6, 0, 3], [10, 2, 6, 0, 3], [10, 0, 6, 5, 3], [10, 0, 6, 5, 3]],
        ),
        (
            "g2-item",
            [
                [20, 18, 0, 0, 0],
                [20, 18, 0, 0, 0],
                [20, 18, 0, 0, 0],
                [20, 0, 0, 18, 0],
            ],
        ),
        (
            "g-single-write-2",
            [
                [35, 0, 20, 0, 10],
                [35, 0, 20, 0, 10],
                [35, 0, 20, 8, 10],
                [35, 0, 20, 8, 10],
            ],
        ),
    ];
    for (id, want) in cases {
        let (code, report) = explore_json(&srv, &[id]);
        assert_eq!(code, 0, "{id}: {report}");
        let t = tallies(&report);
        let got: Vec<[i64; 5]> = t.iter().map(|(_, t)| [t[0], t[1], t[2], t[3], t[4]]).collect();
        assert_eq!(got, want.to_vec(), "{id}");
        assert!(
            t.iter().all(|(_, t)| t[5] == 0),
            "{id}: nothing stuck at the deadline: {t:?}"
        );
        for (l, t) in report["levels"].as_array().unwrap().iter().zip(&t) {
            assert_eq!(l["as_expected"], true, "{id}: {l}");
            assert!(l["own_level"].is_null(), "{id}: the level is lab's to set: {l}");
            // The dead ends are the runs of the classes that say so, a step of each ended "dead_end".
            let cut: i64 = l["classes"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|c| c["what"].as_str().unwrap().contains("at a dead end, cut"))
                .inspect(|c| {
                    let steps = c["signature"]["steps"].as_array().unwrap();
                    assert!(steps.iter().any(|s| s["ended"] == "dead_end"), "{id}: {c}");
                })
                .map(|c| c["runs"].as_i64().unwrap())
                .sum();
            assert_eq!(cut, t.1[4], "{id}: {l}");
        }
    }
    // The matrix with every interleaving: each cell's count beside its own verdict.
    let url = srv.url();
    let r = run(&[
        "phenomena",
        "--database-url",
        &url,
        "--show",
        "g2-item",
        "--all-interleavings",
        "--format",
        "json",
    ]);
    assert_eq!(r.code, 0, "{}", r.why());
    let m: Value = serde_json::from_str(&r.stdout).unwrap();
    let cells = &m["phenomena"][0]["cells"];
    assert_eq!(cells["serializable"]["interleavings"]["occur"], 0);
    assert_eq!(cells["serializable"]["interleavings"]["aborted"], 18);
    assert_eq!(cells["read-committed"]["interleavings"]["occur"], 18);
    assert_eq!(cells["read-committed"]["interleavings"]["dead_ends"], 0);
    assert_eq!(cells["read-committed"]["interleavings"]["stuck"], 0);
    assert_eq!(cells["read-committed"]["verdict"], "occurs");
}

const LOCKED: &str = "# occurs-if: r1 n = 10 and r2 n = 10 and c1 ok and c2 ok
# expect: read-uncommitted=prevented read-committed=prevented repeatable-read=prevented serializable=prevented
setup { CREATE TABLE stock (id int PRIMARY KEY, n int NOT NULL); INSERT INTO stock VALUES (1, 10); }
teardown { DROP TABLE stock; }
session s1
step b1 { BEGIN; }
step r1 { SELECT n FROM stock WHERE id = 1 FOR UPDATE; }
step w1 { UPDATE stock SET n = 9 WHERE id = 1; }
step c1 { COMMIT; }
session s2
step b2 { BEGIN; }
step r2 { SELECT n FROM stock WHERE id = 1 FOR UPDATE; }
step w2 { UPDATE stock SET n = 9 WHERE id = 1; }
step c2 { COMMIT; }
permutation b1 b2 r1 r2 w1 c1 w2 c2
";

/// A lock clause removed: the interleavings that waited now read the same
/// stock and both commit (lost updates at READ COMMITTED), the run is not
/// as the spec documents (exit 1). An index removed: SERIALIZABLE, reading
/// each its own row, now locks the whole table and aborts interleavings
/// that committed before.
#[test]
fn a_mutation_moves_permutations_between_classes() {
    let srv = TestServer::start();
    let dir = scratch("mutations");
    let locked = dir.join("locked.spec");
    std::fs::write(&locked, LOCKED).unwrap();
    let unlocked = dir.join("unlocked.spec");
    std::fs::write(&unlocked, LOCKED.replace(" FOR UPDATE", "")).unwrap();
    let args = |p: &std::path::Path| {
        vec![
            p.to_str().unwrap().to_string(),
            "--all-permutations".into(),
            "--level".into(),
            "read-committed".into(),
        ]
    };
    let (code, with) = explore_json(&srv, &args(&locked).iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(code, 0, "{with}");
    let (code, without) = explore_json(&srv, &args(&unlocked).iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(
        code, 1,
        "lost updates at READ COMMITTED are not as the spec documents: {without}"
    );
    let (w, wo) = (&tallies(&with)[0].1, &tallies(&without)[0].1);
    assert_eq!(w[1], 0, "with FOR UPDATE no interleaving loses an update: {with}");
    assert!(w[2] > 0, "with FOR UPDATE the second reader waits: {with}");
    assert!(wo[1] > 0, "without it some interleavings lose an update: {without}");
    assert!(wo[2] < w[2], "fewer wait without the lock clause: {w:?} {wo:?}");

    let indexed = "setup { CREATE TABLE acct (id int PRIMARY KEY, n int NOT NULL); INSERT INTO acct SELECT g, 0 FROM generate_series(1, 2000) g; }
teardown { DROP TABLE acct; }
session s1
setup { BEGIN ISOLATION LEVEL SERIALIZABLE; SET enable_seqscan = off; }
step r1 { SELECT n FROM acct WHERE id = 1; }
step w1 { UPDATE acct SET n = 1 WHERE id = 1; }
step c1 { COMMIT; }
session s2
setup { BEGIN ISOLATION LEVEL SERIALIZABLE; SET enable_seqscan = off; }
step r2 { SELECT n FROM acct WHERE id = 1900; }
step w2 { UPDATE acct SET n = 1 WHERE id = 1900; }
step c2 { COMMIT; }
";
    let with_index = dir.join("indexed.spec");
    std::fs::write(&with_index, indexed).unwrap();
    let no_index = dir.join("no-index.spec");
    std::fs::write(&no_index, indexed.replace(" PRIMARY KEY", "")).unwrap();
    let (_, a) = explore_json(&srv, &[with_index.to_str().unwrap()]);
    let (_, b) = explore_json(&srv, &[no_index.to_str().unwrap()]);
    let (ta, tb) = (&tallies(&a)[0].1, &tallies(&b)[0].1);
    assert_eq!(ta[0], 20);
    assert_eq!(ta[3], 0, "each reads and writes its own row through the index: {a}");
    assert!(tb[3] > 0, "without the index the reads lock the table: {b}");
    assert!(tb[6] > ta[6], "more classes without the index: {ta:?} {tb:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A step still running at its deadline is cancelled, counted as stuck (not
/// as a dead end), and the next permutation runs.
#[test]
fn a_step_past_its_deadline_is_stuck_and_the_runs_go_on() {
    let srv = TestServer::start();
    let dir = scratch("deadline");
    let spec = dir.join("slow.spec");
    std::fs::write(
        &spec,
        "session s1\nstep slow { SELECT pg_sleep(60); }\nsession s2\nstep quick { SET work_mem = '4MB'; }\n",
    )
    .unwrap();
    let (code, report) = explore_json(
        &srv,
        &[
            spec.to_str().unwrap(),
            "--level",
            "read-committed",
            "--wait-timeout",
            "1.5",
        ],
    );
    assert_eq!(code, 0, "{report}");
    assert_eq!(tallies(&report)[0].1, [2, -1, 0, 0, 0, 2, 1], "{report}");
    let class = &report["levels"][0]["classes"][0];
    assert_eq!(class["what"], "slow stuck at the deadline, cancelled", "{class}");
    let slow = class["signature"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["step"] == "slow")
        .unwrap()
        .clone();
    assert_eq!(slow["ended"], "stuck", "{slow}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// PostgreSQL's specs that make a role, a schema, or a toast table named
/// the same in every run: side by side, a run's setup found another's
/// ("role ... already exists", exit 2). They run one at a time, and say so.
/// A spec whose teardown leaves what its setup makes again.
#[test]
fn specs_that_make_what_runs_would_share_run_one_at_a_time() {
    let srv = TestServer::start();
    let url = srv.url();
    for (name, why) in [
        ("cluster-conflict", "roles"),
        ("truncate-conflict", "roles"),
        ("reindex-schema", "objects outside its schema"),
        ("reindex-concurrently-toast", "the pg_toast schema"),
    ] {
        let path = format!("{SUITE}/specs/{name}.spec");
        let r = run(&["explore", &path, "--database-url", &url, "--level", "read-committed"]);
        assert_eq!(r.code, 0, "{name}: {}", r.stderr);
        assert!(
            r.stdout.contains(&format!("runs one at a time: the spec uses {why}")),
            "{name}: {}",
            r.stdout
        );
    }
    // partition-concurrent-attach's teardown drops tpart, not tpart_2 where a
    // permutation leaves it unattached: the next run's setup (CREATE TABLE
    // tpart_2) fails on it. That run goes again on its schema made afresh,
    // and says so; on one worker, the same 3 of 12 every time.
    let path = format!("{SUITE}/specs/partition-concurrent-attach.spec");
    let (code, report) = explore_json(&srv, &[&path, "--jobs", "1"]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["schemas_remade"], 3, "{report}");
    assert_eq!(report["runs"].as_array().unwrap().len(), 12, "{report}");
}

/// --sample draws the same interleavings for the same seed; JUnit has one
/// case per level; the HTML report holds each class.
#[test]
fn samples_and_reports() {
    let srv = TestServer::start();
    let spec = format!("{SUITE}/specs/receipt-report.spec");
    let runs = |seed: &str| -> Vec<String> {
        let (_, r) = explore_json(&srv, &[&spec, "--sample", "7", "--seed", seed]);
        r["runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x["permutation"].as_str().unwrap().to_string())
            .collect()
    };
    let (a, b, c) = (runs("5"), runs("5"), runs("6"));
    assert_eq!(a.len(), 7);
    assert_eq!(a, b);
    assert_ne!(a, c);
    let dir = scratch("reports");
    let (junit, html) = (dir.join("x.xml"), dir.join("x.html"));
    let url = srv.url();
    let r = run(&[
        "explore",
        "g1c",
        "--database-url",
        &url,
        "--junit",
        junit.to_str().unwrap(),
        "--html",
        html.to_str().unwrap(),
        "--lang",
        "tr",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("iç içe geçiş"), "Turkish output: {}", r.stdout);
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert_eq!(xml.matches("<testcase").count(), 4, "{xml}");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("t1_commit") && page.contains("40001"),
        "the classes' swimlanes"
    );
    // Turkish (--lang tr): a grid of levels and classes, each class with its representative.
    assert!(page.contains("<th>düzey</th><th>sınıf</th>"), "the summary's headings");
    assert!(
        page.contains("<b>temsilci (spec"),
        "a class shows its representative, not an expectation"
    );
    assert!(
        !page.contains("<b>beklenen:"),
        "no class is labelled with an expectation"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let srv = TestServer::start();
    let url = srv.url();
    let dir = scratch("bad");
    let write = |name: &str, text: &str| {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p.to_str().unwrap().to_string()
    };
    let no_sessions = write("empty.spec", "setup { SELECT 1; }\n");
    let big = write(
        "big.spec",
        &(0..4)
            .map(|s| {
                format!(
                    "session s{s}\n{}",
                    (0..5)
                        .map(|k| format!("step x{s}{k} {{SELECT 1;}}\n"))
                        .collect::<String>()
                )
            })
            .collect::<String>(),
    );
    let bad_setup = write("setup.spec", "setup { SELECT nope; }\nsession a\nstep a1 {SELECT 1;}\n");
    let with = |args: &[&str]| {
        let mut all = vec!["explore", "--database-url", url.as_str()];
        all.extend_from_slice(args);
        run(&all)
    };
    one_line_exit_2(&with(&[&no_sessions]), "expected a session");
    // 20! / (5!)^4 = 11732745024 interleavings.
    one_line_exit_2(&with(&[&big]), "11732745024 permutations");
    one_line_exit_2(&with(&[&bad_setup]), "setup");
    one_line_exit_2(&with(&[&big, "--level", "snapshot"]), "snapshot");
    one_line_exit_2(
        &with(&[&no_sessions, "--format", "isolation", "--level", "serializable"]),
        "--level",
    );
    one_line_exit_2(&with(&["no-such-thing"]), "no-such-thing");
    one_line_exit_2(&with(&[&big, "--sample", "0"]), "--sample");
    // More workers at once than the server has room for: said before any starts.
    let r = with(&["write-skew", "--jobs", "400"]);
    // (As many as there are runs: write-skew's 20 interleavings at 4 levels.)
    one_line_exit_2(&r, "80 worker(s) at once need 320 (4 each");
    assert_eq!(r.stdout, "", "nothing ran");
    // A sample of a space too large to list runs.
    let r = with(&[&big, "--sample", "3", "--level", "read-committed", "--format", "json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // Nothing of lab's left in the database.
    let client = srv.client();
    assert_eq!(
        srv.query_i64(
            &client,
            "SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'lab\\_ex\\_%'"
        ),
        0
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Ctrl-C part-way: exit 130, one line, the runs so far in JSON, a JUnit
/// error; the workers' schemas and sessions are gone.
#[test]
fn interrupted_part_way_it_reports_what_ran_and_leaves_nothing() {
    let srv = TestServer::start();
    let args: Vec<&std::ffi::OsStr> = ["explore", "otv"].iter().map(std::ffi::OsStr::new).collect();
    let (json, err) = crate::support::stopped_part_way(
        &srv,
        &args,
        "SELECT (count(*) > 0)::int::bigint FROM pg_namespace WHERE nspname LIKE 'lab\\_ex\\_%'",
        |_, pid| unsafe {
            libc::kill(pid as i32, libc::SIGINT);
        },
        130,
    );
    assert!(err.contains("interrupted"), "{err}");
    assert_eq!(json["error"]["exit_code"], 130);
    assert_eq!(json["as_expected"], false);
    let client = srv.client();
    assert_eq!(
        srv.query_i64(
            &client,
            "SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'lab\\_ex\\_%'"
        ),
        0
    );
    srv.wait_for_zero(
        &client,
        "SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE 'lab:explore:%'",
    );
}

/// Specs that list their permutations, with what would differ beside other
/// runs or in a schema of lab's: a NOTIFY every run's LISTEN gets, the lock
/// view, a `CONCURRENTLY` waiting for every run, a step after `SET ROLE`,
/// `EXPLAIN VERBOSE` naming the table's schema, steps no permutation uses
/// (named on stderr). Byte for byte isolationtester's, on the same server.
#[test]
fn listed_permutations_print_as_isolationtester_where_runs_could_meet() {
    let srv = TestServer::start();
    let url = srv.url();
    for name in [
        "async-notify",
        "partition-drop-index-locking",
        "detach-partition-concurrently-1",
        "cluster-conflict",
        "merge-join",
        "eval-plan-qual-trigger",
    ] {
        let path = std::path::PathBuf::from(format!("{SUITE}/specs/{name}.spec"));
        let text = std::fs::read_to_string(&path).unwrap();
        let theirs = isolationtester_output(&srv, &text, &[]);
        let ours = as_isolationtester(&path, &url);
        assert_eq!(ours.code, 0, "{name}: {}", ours.stderr);
        assert_eq!(
            ours.stdout,
            String::from_utf8_lossy(&theirs.stdout),
            "{name}: lab explore --format isolation differs from isolationtester"
        );
        let unused = |s: &str| s.lines().filter(|l| l.starts_with("unused step name:")).count();
        assert_eq!(
            unused(&ours.stderr),
            unused(&String::from_utf8_lossy(&theirs.stderr)),
            "{name}: {}",
            ours.stderr
        );
    }
}

/// Each level is held to its own `# expect:`; a level a step sets with
/// `SET TRANSACTION` is the level its transaction ran at; JSON stays
/// English under `--lang tr`, with each run's signature; a `# occurs-if:`
/// column no step returns is exit 2.
#[test]
fn levels_are_judged_and_read_back_one_by_one() {
    let srv = TestServer::start();
    let url = srv.url();
    let dir = scratch("levels");
    let skew = std::fs::read_to_string("lab/write-skew.spec").unwrap();
    // A server that aborts at SERIALIZABLE where the spec says the anomaly occurs there.
    let says_occurs = dir.join("says-occurs.spec");
    std::fs::write(
        &says_occurs,
        skew.replace("serializable=prevented", "serializable=occurs"),
    )
    .unwrap();
    assert_ne!(
        skew,
        std::fs::read_to_string(&says_occurs).unwrap(),
        "the mutation took"
    );
    let (code, report) = explore_json(&srv, &[says_occurs.to_str().unwrap(), "--level", "serializable"]);
    assert_eq!(code, 1, "{report}");
    assert_eq!(report["levels"][0]["as_expected"], false, "{report}");
    let (code, report) = explore_json(&srv, &["write-skew", "--level", "serializable", "--lang", "tr"]);
    assert_eq!(code, 0, "{report}");
    let level = &report["levels"][0];
    assert!(
        level["summary"].as_str().unwrap().contains("aborted 40001"),
        "English, with the SQLSTATE: {level}"
    );
    let aborts = level["tally"]["aborts"].as_array().unwrap();
    let total: i64 = aborts.iter().map(|a| a["runs"].as_i64().unwrap()).sum();
    assert_eq!(total, level["tally"]["aborted"].as_i64().unwrap(), "{level}");
    assert!(aborts.iter().any(|a| a["at_commit"] == true), "{level}");
    let first = &report["runs"][0];
    assert!(
        first["signature"]["steps"].is_array() && first["permutation"].is_string(),
        "{first}"
    );
    assert!(report["levels"][0]["permutations"].is_u64(), "{report}");
    // BEGIN, then SET TRANSACTION (the check at the level asked): the runs
    // read back SERIALIZABLE, and say so.
    let set_tx = dir.join("set-tx.spec");
    std::fs::write(
        &set_tx,
        "setup { CREATE TABLE d (id int, v int); INSERT INTO d VALUES (1, 0), (2, 0); }\n\
         teardown { DROP TABLE d; }\n\
         session s1\nstep s1b { BEGIN; }\nstep s1t { SET TRANSACTION ISOLATION LEVEL SERIALIZABLE; }\n\
         step s1r { SELECT sum(v) FROM d; }\nstep s1w { UPDATE d SET v = 1 WHERE id = 1; }\nstep s1c { COMMIT; }\n\
         session s2\nstep s2b { BEGIN; }\nstep s2t { SET TRANSACTION ISOLATION LEVEL SERIALIZABLE; }\n\
         step s2r { SELECT sum(v) FROM d; }\nstep s2w { UPDATE d SET v = 1 WHERE id = 2; }\nstep s2c { COMMIT; }\n\
         session check\nstep chk { SELECT sum(v) FROM d; }\n\
         permutation s1b s1t s2b s2t s1r s2r s1w s2w s1c s2c chk\n",
    )
    .unwrap();
    let (code, report) = explore_json(&srv, &[set_tx.to_str().unwrap(), "--level", "read-committed"]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["levels"][0]["own_level"], "serializable", "{report}");
    assert_eq!(
        report["runs"][0]["ran_at"],
        serde_json::json!(["serializable"]),
        "{report}"
    );
    // A column the check does not return: the condition could never hold.
    let typo = dir.join("typo.spec");
    std::fs::write(
        &typo,
        skew.replacen("# occurs-if:", "# occurs-if: a_check nosuchcol = 0 and", 1),
    )
    .unwrap();
    let r = run(&[
        "explore",
        typo.to_str().unwrap(),
        "--database-url",
        &url,
        "--level",
        "read-committed",
    ]);
    one_line_exit_2(&r, "nosuchcol");
    std::fs::remove_dir_all(&dir).unwrap();
}
