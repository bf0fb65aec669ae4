//! `lab hunt`: generated transactions on a real server find what each
//! level allows (G-single at READ COMMITTED, G2-item at REPEATABLE READ)
//! and nothing at SERIALIZABLE; each cycle found comes back as a spec that
//! lab's engine and PostgreSQL's isolationtester replay; recorded histories
//! (lab's and Jepsen's) are checked without a server; tampered histories
//! are not as documented; bad input is one line; Ctrl-C keeps what was found.
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::{TestServer, one_line_exit_2, run, stopped_part_way};

fn scratch(name: &str) -> crate::support::Scratch {
    crate::support::scratch("lab-hunt-test", name)
}

/// `lab hunt ... --format json` on `srv`, reproducers in `dir`.
fn hunt(srv: &TestServer, dir: &Path, args: &[&str]) -> (i32, Value) {
    let url = srv.url();
    let specs = dir.join("specs");
    let mut all = vec![
        "hunt",
        "--database-url",
        url.as_str(),
        "--format",
        "json",
        "--specs",
        specs.to_str().unwrap(),
    ];
    all.extend_from_slice(args);
    let r = run(&all);
    assert!(r.code == 0 || r.code == 1, "exit {}: {}", r.code, r.stderr);
    (r.code, serde_json::from_str(&r.stdout).expect("JSON"))
}

fn check(file: &Path, args: &[&str]) -> (i32, Value) {
    let mut all = vec!["hunt", "--check", file.to_str().unwrap(), "--format", "json"];
    all.extend_from_slice(args);
    let r = run(&all);
    assert!(r.code == 0 || r.code == 1, "exit {}: {}", r.code, r.stderr);
    (r.code, serde_json::from_str(&r.stdout).expect("JSON"))
}

/// The anomaly named `name` of the report's only level.
pub(crate) fn anomaly<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["levels"][0]["anomalies"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == name)
        .unwrap_or_else(|| panic!("no {name} in {}", report["levels"][0]["anomalies"]))
}

pub(crate) fn names(report: &Value) -> Vec<String> {
    report["levels"][0]["anomalies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap().to_string())
        .collect()
}

/// The reproducer of `a` replayed the anomaly every time, and replays it
/// again: `lab explore` on it at the level finds the anomaly in its one
/// run (its `# occurs-if:` holds), and PostgreSQL's isolationtester prints
/// what lab's engine prints.
fn replays(srv: &TestServer, a: &Value, level: &str) -> String {
    let r = &a["reproducer"];
    assert_eq!(r["reproduced"], true, "{a}");
    assert_eq!(r["showed"], 10, "{a}");
    assert_eq!(r["replays"], 10, "{a}");
    let path = r["path"].as_str().unwrap();
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.contains("# occurs-if: "), "{text}");
    let url = srv.url();
    let x = run(&[
        "explore",
        path,
        "--level",
        level,
        "--format",
        "json",
        "--database-url",
        url.as_str(),
    ]);
    assert_eq!(x.code, 0, "{}", x.stderr);
    let report: Value = serde_json::from_str(&x.stdout).unwrap();
    assert_eq!(report["levels"][0]["tally"]["anomaly"], 1, "{}", x.stdout);
    let theirs = crate::oracle::isolationtester_output(srv, &text, &[]);
    let ours = run(&["spec", path, "--format", "isolation", "--database-url", url.as_str()]);
    assert_eq!(ours.code, 0, "{}", ours.stderr);
    assert_eq!(String::from_utf8_lossy(&theirs.stdout), ours.stdout);
    text
}

#[test]
fn repeatable_read_finds_g2_item_and_hands_back_a_spec_that_replays_it() {
    let srv = TestServer::start();
    let dir = scratch("rr");
    let history = dir.join("rr.jsonl");
    let junit = dir.join("hunt.xml");
    let html = dir.join("hunt.html");
    let (code, report) = hunt(
        &srv,
        &dir,
        &[
            "--level",
            "repeatable-read",
            "--history",
            history.to_str().unwrap(),
            "--junit",
            junit.to_str().unwrap(),
            "--html",
            html.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "{report}");
    let level = &report["levels"][0];
    assert_eq!(level["level"], "repeatable read");
    assert_eq!(level["transactions"], 2000);
    // Snapshot isolation: write skew is allowed, lost updates are not.
    let n = names(&report);
    assert!(n.contains(&"G2-item".to_string()), "{n:?}");
    for forbidden in ["G0", "G1a", "G1b", "G1c", "G-single"] {
        assert!(!n.contains(&forbidden.to_string()), "{n:?}");
    }
    let a = anomaly(&report, "G2-item");
    assert_eq!(a["forbidden"], false);
    assert!(
        a["cycle"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|l| l["why"]["kind"] == "rw")
            .count()
            >= 2
    );
    assert!(a["explanation"][0].as_str().unwrap().contains("read key"), "{a}");
    // One numbering throughout: the T-numbers the explanations use.
    let named: Vec<String> = a["transactions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| format!("T{t}"))
        .collect();
    assert_eq!(a["txns"], a["transactions"], "{a}");
    for link in a["cycle"].as_array().unwrap() {
        for end in ["from", "to"] {
            assert!(named.contains(&format!("T{}", link[end])), "{a}");
        }
    }
    let explained = a["explanation"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap())
        .collect::<String>();
    assert!(named.iter().all(|t| explained.contains(t.as_str())), "{a}");
    // The server's own commit order of the cycle's writers, from the ids
    // their COMMITs read and the commit timestamps the server kept.
    let recorded: Vec<Value> = std::fs::read_to_string(&history)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(recorded.iter().all(|t| t["backend"].as_i64().unwrap_or(0) > 0));
    let wrote = |t: &Value| t["type"] == "ok" && t["ops"].to_string().contains("append");
    assert!(
        recorded
            .iter()
            .filter(|t| wrote(t))
            .all(|t| t["xid"].as_u64().is_some())
    );
    let writers_of = |a: &Value| -> Vec<&Value> {
        let mut ids: Vec<u64> = a["transactions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i.as_u64().unwrap())
            .collect();
        ids.sort();
        ids.dedup();
        ids.iter()
            .map(|i| recorded.iter().find(|t| t["index"] == *i).unwrap())
            .filter(|t| wrote(t))
            .collect()
    };
    let in_cycle = writers_of(a);
    assert!(in_cycle.len() >= 2, "{a}");
    assert!(in_cycle.iter().all(|t| t["committed_at"].is_string()), "{in_cycle:?}");
    let last = a["explanation"].as_array().unwrap().last().unwrap().as_str().unwrap();
    assert!(last.starts_with("the server committed them in this order"), "{a}");
    for t in &in_cycle {
        assert!(last.contains(&format!("T{} (", t["index"])), "{last}");
    }
    // Those of the cycle that wrote nothing have no commit timestamp: named as such.
    let readers: Vec<u64> = a["transactions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| recorded.iter().find(|t| t["index"] == *i).unwrap())
        .filter(|t| !wrote(t))
        .map(|t| t["index"].as_u64().unwrap())
        .collect();
    for r in &readers {
        let named = last.split_once("not in it: ").map(|(_, rest)| rest).unwrap_or("");
        assert!(named.contains(&format!("T{r}")), "{last}");
    }
    let mut all_writers: Vec<u64> = report["levels"][0]["anomalies"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|a| writers_of(a).into_iter().map(|t| t["index"].as_u64().unwrap()))
        .collect();
    all_writers.sort();
    all_writers.dedup();
    let mut timed: Vec<u64> = recorded
        .iter()
        .filter(|t| t["committed_at"].is_string())
        .map(|t| t["index"].as_u64().unwrap())
        .collect();
    timed.sort();
    assert_eq!(timed, all_writers, "commit times for the anomalies' writers only");
    let spec = replays(&srv, a, "repeatable-read");
    // The same spec explored at SERIALIZABLE: the anomaly is gone.
    let path = a["reproducer"]["path"].as_str().unwrap();
    let url = srv.url();
    let x = run(&[
        "explore",
        path,
        "--level",
        "serializable",
        "--format",
        "json",
        "--database-url",
        url.as_str(),
    ]);
    let ser: Value = serde_json::from_str(&x.stdout).unwrap();
    assert_eq!(ser["levels"][0]["tally"]["anomaly"], 0, "{spec}\n{}", x.stdout);

    // The history it recorded, checked as if it came from a serializable run: forbidden, exit 1.
    let (code, checked) = check(&history, &["--level", "serializable"]);
    assert_eq!(code, 1);
    assert!(
        checked["levels"][0]["forbidden_found"]
            .as_array()
            .unwrap()
            .contains(&Value::from("G2-item"))
    );
    // At its own level (read from the history's header): as documented,
    // over the same seconds (txns/s the same live and checked).
    let (code, again) = check(&history, &[]);
    assert_eq!(code, 0);
    assert_eq!(again["levels"][0]["seconds"], report["levels"][0]["seconds"]);

    let xml = std::fs::read_to_string(&junit).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let cases: Vec<_> = doc.descendants().filter(|n| n.has_tag_name("testcase")).collect();
    // lost and unknown-contradicted are judged only under a nemesis, G2
    // only with predicate reads.
    assert_eq!(
        cases.len(),
        lab::commands::hunt::check::Class::ALL.len() - 3,
        "a case per anomaly class"
    );
    assert!(!cases.iter().any(|c| c.attribute("name") == Some("lost")));
    assert!(cases.iter().any(|c| c.attribute("name") == Some("G2-item")));
    assert_eq!(doc.root_element().attribute("failures"), Some("0"));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("class=\"cycle\"") && page.contains("class=\"swimlanes\""));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn read_committed_finds_g_single_and_its_reproducer_replays_it() {
    let srv = TestServer::start();
    let dir = scratch("rc");
    let (code, report) = hunt(&srv, &dir, &["--level", "read-committed", "--seed", "3"]);
    assert_eq!(code, 0, "{report}");
    let a = anomaly(&report, "G-single");
    assert_eq!(a["forbidden"], false);
    let rw = a["cycle"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["why"]["kind"] == "rw")
        .count();
    assert_eq!(rw, 1, "{a}");
    replays(&srv, a, "read-committed");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Read uncommitted is asked for and read back as itself, and checked
/// against what read committed forbids (PostgreSQL documents it so).
#[test]
fn read_uncommitted_runs_as_itself_and_is_held_to_read_committed() {
    let srv = TestServer::start();
    let dir = scratch("ru");
    let (code, report) = hunt(&srv, &dir, &["--level", "read-uncommitted", "--seed", "3"]);
    assert_eq!(code, 0, "{report}");
    let level = &report["levels"][0];
    assert_eq!(level["level"], "read uncommitted", "{level}");
    assert_eq!(level["forbidden_found"].as_array().map(Vec::len), Some(0), "{level}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn at_serializable_nothing_but_the_unsettled_g2_item_and_the_same_seed_runs_the_same_transactions() {
    let srv = TestServer::start();
    let dir = scratch("ser");
    let h1 = dir.join("a.jsonl");
    let h2 = dir.join("b.jsonl");
    let (code, report) = hunt(
        &srv,
        &dir,
        &[
            "--level",
            "serializable",
            "--txns",
            "600",
            "--history",
            h1.to_str().unwrap(),
            "--seed",
            "9",
        ],
    );
    // Unsettled (issue 29, docs/HUNT.md): now and then a run
    // at SERIALIZABLE finds a G2-item of three committed transactions that
    // its sequential reproducer does not replay (PostgreSQL aborts one with
    // 40001 there): on 15.18 in 100 000 transactions, and once in this test
    // on 18.6. Whether PostgreSQL or lab's recording is at fault is not yet
    // known. The test allows exactly that shape, says so on stderr, and
    // fails on anything else: another class, or a cycle that replays.
    let anomalies = report["levels"][0]["anomalies"].as_array().unwrap().clone();
    for a in &anomalies {
        assert_eq!(a["name"], "G2-item", "{a}");
        assert_eq!(a["reproducer"]["reproduced"], false, "{a}");
        eprintln!("the unsettled SERIALIZABLE G2-item again (issue 29): {a}");
    }
    assert_eq!(code, if anomalies.is_empty() { 0 } else { 1 }, "{report}");
    let level = &report["levels"][0];
    assert!(
        level["aborted"].as_u64().unwrap() > 0,
        "SERIALIZABLE aborts some: {level}"
    );
    assert_eq!(level["level"], "serializable");
    // The same seed: the same transactions (their operations, not the
    // reads' results or which session ran them).
    let (code, _) = hunt(
        &srv,
        &dir,
        &[
            "--level",
            "serializable",
            "--txns",
            "600",
            "--history",
            h2.to_str().unwrap(),
            "--seed",
            "9",
            "--no-specs",
        ],
    );
    assert_eq!(code, 0);
    type Ops = Vec<(String, i64, Option<i64>)>;
    let shape = |p: &Path| -> Vec<(u64, Ops)> {
        let mut v: Vec<_> = std::fs::read_to_string(p)
            .unwrap()
            .lines()
            .skip(1)
            .map(|l| {
                let t: Value = serde_json::from_str(l).unwrap();
                let ops = t["ops"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|o| {
                        (
                            o[0].as_str().unwrap().to_string(),
                            o[1].as_i64().unwrap(),
                            o[2].as_i64(),
                        )
                    })
                    .collect();
                (t["index"].as_u64().unwrap(), ops)
            })
            .collect();
        v.sort();
        v
    };
    assert_eq!(shape(&h1), shape(&h2));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_jepsen_history_is_checked_without_a_server() {
    let file = Path::new("tests/hunt/write-skew.edn");
    let (code, report) = check(file, &["--level", "serializable"]);
    assert_eq!(code, 1, "{report}");
    assert_eq!(names(&report), vec!["G2-item"]);
    let level = &report["levels"][0];
    assert_eq!(
        (level["committed"].as_u64(), level["aborted"].as_u64()),
        (Some(3), Some(1))
    );
    // A Jepsen history's processes and clock: its session and real-time orders checked.
    assert_eq!(
        (report["realtime"].as_bool(), report["session_order"].as_bool()),
        (Some(true), Some(true))
    );
    let (code, report) = check(file, &["--level", "repeatable-read"]);
    assert_eq!(code, 0, "{report}");
    // Without a level: judged as serializable, and said so.
    let r = run(&["hunt", "--check", file.to_str().unwrap()]);
    assert_eq!(r.code, 1);
    assert!(r.stdout.contains("judged as serializable"), "{}", r.stdout);
    assert!(r.stdout.contains("G2-item"), "{}", r.stdout);
}

/// Long Fork (issue 65): two appends each seen by one reader and missed by
/// the other. Its two rw edges are not adjacent: a G-nonadjacent, which
/// snapshot isolation (PostgreSQL's REPEATABLE READ) forbids and read
/// committed allows; the models it rules out are named as Elle names them.
#[test]
fn a_long_fork_is_forbidden_at_repeatable_read_and_allowed_at_read_committed() {
    let file = Path::new("tests/hunt/long-fork.edn");
    let (code, report) = check(file, &["--level", "repeatable-read"]);
    assert_eq!(code, 1, "{report}");
    assert_eq!(names(&report), vec!["G-nonadjacent"]);
    let level = &report["levels"][0];
    // Its processes and clock are checked too: the strong form of the model.
    assert_eq!(level["model"], "strong-snapshot-isolation");
    assert_eq!(
        level["not"],
        serde_json::json!(["repeatable-read", "snapshot-isolation"])
    );
    assert!(
        level["also_not"]
            .as_array()
            .unwrap()
            .contains(&Value::from("serializable"))
    );
    let (code, report) = check(file, &["--level", "read-committed"]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(anomaly(&report, "G-nonadjacent")["forbidden"], false);
    let r = run(&["hunt", "--check", file.to_str().unwrap(), "--level", "repeatable-read"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stdout
            .contains("held to strong-snapshot-isolation: the history is not repeatable-read, snapshot-isolation"),
        "{}",
        r.stdout
    );
}

/// Predicate write skew by hand: each transaction read the range 1..2
/// with no row in it and made one there. G2, through the predicate only:
/// allowed at repeatable read (snapshot isolation), forbidden at
/// serializable (a predicate read that is not a read of each key of its
/// range is damage: [`bad_input_is_one_line_and_exit_2`]).
#[test]
fn a_predicate_write_skew_is_g2_allowed_at_repeatable_read_forbidden_at_serializable() {
    let file = Path::new("tests/hunt/predicate-write-skew.jsonl");
    let (code, report) = check(file, &["--level", "repeatable-read"]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(names(&report), vec!["G2"]);
    assert_eq!(anomaly(&report, "G2")["forbidden"], false);
    let (code, report) = check(file, &["--level", "serializable"]);
    assert_eq!(code, 1, "{report}");
    let g2 = anomaly(&report, "G2");
    assert_eq!(g2["forbidden"], true);
    let text = g2.to_string();
    assert!(text.contains("(a predicate read) and key 2 had none"), "{text}");
}

/// The predicate workload, live: at repeatable read the sessions' range
/// reads miss rows another transaction inserts and both commit (G2, a
/// phantom), and the reproducer's range SELECTs replay it, in lab's engine
/// and isolationtester alike; at serializable nothing, and the same
/// spec run there shows no anomaly (SSI's predicate locks abort one).
#[test]
fn the_predicate_workload_finds_phantoms_at_repeatable_read_and_none_at_serializable() {
    let srv = TestServer::start();
    let dir = scratch("predicate-live");
    let args = ["--workload", "predicate", "--txns", "2000", "--seed", "2"];
    let (code, report) = hunt(&srv, &dir, &[&args[..], &["--level", "repeatable-read"]].concat());
    assert_eq!(code, 0, "{report}");
    assert!(names(&report).contains(&"G2".to_string()), "{report}");
    let g2 = anomaly(&report, "G2");
    assert_eq!(g2["forbidden"], false);
    let spec = replays(&srv, g2, "repeatable-read");
    assert!(spec.contains("WHERE k BETWEEN"), "{spec}");
    let url = srv.url();
    let path = g2["reproducer"]["path"].as_str().unwrap();
    let x = run(&[
        "explore",
        path,
        "--level",
        "serializable",
        "--format",
        "json",
        "--database-url",
        url.as_str(),
    ]);
    assert_eq!(x.code, 0, "{}", x.stderr);
    let at_ser: Value = serde_json::from_str(&x.stdout).unwrap();
    assert_eq!(at_ser["levels"][0]["tally"]["anomaly"], 0, "{}", x.stdout);
    let (code, report) = hunt(&srv, &dir, &[&args[..], &["--level", "serializable"]].concat());
    assert_eq!(code, 0, "{report}");
    assert_eq!(names(&report), Vec::<String>::new(), "{report}");
}

/// rw-register: blind writes of whole values and reads of one value. A
/// read does not show the versions before it, so each key's version order
/// comes from the server's commit order of its writers
/// (pg_xact_commit_timestamp, recorded in the history). READ COMMITTED
/// allows what it shows (G-single among them), whose reproducer replays it;
/// the same history held to REPEATABLE READ is not as documented (exit 1);
/// without the commit timestamps the checker says how many keys' orders it
/// could not decide; SERIALIZABLE shows nothing.
#[test]
fn the_rw_register_workload_orders_versions_by_the_server_s_commit_order() {
    let srv = TestServer::start();
    let dir = scratch("register-live");
    let history = dir.join("register.jsonl");
    let args = [
        "--workload",
        "rw-register",
        "--txns",
        "2000",
        "--history",
        history.to_str().unwrap(),
    ];
    let (code, report) = hunt(&srv, &dir, &[&args[..], &["--level", "read-committed"]].concat());
    assert_eq!(code, 0, "{report}");
    let orders = &report["levels"][0]["version_orders"];
    assert!(orders["server"].as_u64().unwrap() > 0, "{orders}");
    assert_eq!(
        (&orders["undecided"], &orders["cyclic"]),
        (&Value::from(0), &Value::from(0)),
        "{orders}"
    );
    let g_single = anomaly(&report, "G-single");
    assert_eq!(g_single["forbidden"], false);
    let why = g_single["explanation"].to_string();
    assert!(
        why.contains("in the order the server committed the key's writers"),
        "{why}"
    );
    let spec = replays(&srv, g_single, "read-committed");
    assert!(spec.contains("rw-register"), "{spec}");
    let text = std::fs::read_to_string(&history).unwrap();
    assert!(
        text.contains(r#""workload":"rw-register""#) && text.contains(r#"["w","#),
        "{text}"
    );

    let (code, checked) = check(&history, &["--level", "repeatable-read"]);
    assert_eq!(code, 1, "{checked}");
    assert!(
        checked["levels"][0]["forbidden_found"].to_string().contains("G-single"),
        "{checked}"
    );

    // The same transactions, the server's commit order taken out.
    let bare: String = text
        .lines()
        .map(|l| match l.find(r#","committed_at":""#) {
            Some(i) => {
                let value = i + r#","committed_at":""#.len();
                let end = value + l[value..].find('"').unwrap() + 1;
                format!("{}{}", &l[..i], &l[end..])
            }
            None => l.to_string(),
        })
        .map(|l| l + "\n")
        .collect();
    assert!(!bare.contains("committed_at"), "{bare}");
    let bare_file = dir.join("bare.jsonl");
    std::fs::write(&bare_file, bare).unwrap();
    let (_, checked) = check(&bare_file, &[]);
    let orders = &checked["levels"][0]["version_orders"];
    assert_eq!(orders["server"], 0, "{orders}");
    assert!(orders["undecided"].as_u64().unwrap() > 0, "{orders}");

    let (code, report) = hunt(&srv, &dir, &[&args[..], &["--level", "serializable"]].concat());
    assert_eq!(code, 0, "{report}");
    assert_eq!(names(&report), Vec::<String>::new(), "{report}");

    // Mutation: the server's commit order turned around. A transaction that
    // read a value and then wrote the key now "committed" before the value's
    // writer: the orders contradict each other, and the clean history is not.
    let text = std::fs::read_to_string(&history).unwrap();
    let key = r#","committed_at":""#;
    let mut sorted: Vec<String> = (text.lines())
        .filter_map(|l| {
            l.find(key)
                .map(|i| l[i + key.len()..].split('"').next().unwrap().to_string())
        })
        .collect();
    sorted.sort();
    let reversed: String = (text.lines())
        .map(|l| match l.find(key) {
            Some(i) => {
                let at = l[i + key.len()..].split('"').next().unwrap();
                let rank = sorted.iter().position(|s| s == at).unwrap();
                l.replace(at, &sorted[sorted.len() - 1 - rank]) + "\n"
            }
            None => format!("{l}\n"),
        })
        .collect();
    let reversed_file = dir.join("reversed.jsonl");
    std::fs::write(&reversed_file, reversed).unwrap();
    let (code, checked) = check(&reversed_file, &[]);
    assert_eq!(code, 1, "{checked}");
    assert!(
        checked["levels"][0]["version_orders"]["cyclic"].as_u64().unwrap() > 0,
        "{checked}"
    );
    assert!(names(&checked).contains(&"cyclic-versions".to_string()), "{checked}");
}

/// A history PostgreSQL 18.6 gave at SERIALIZABLE (lab hunt, seed 31, 15
/// minutes, 4.98 million transactions), cut to the transactions that touched
/// keys 263 to 271 and to their operations on them (each key's history
/// whole): the one G2-item of that run, three committed transactions
/// (T6789 read key 269 before T6790's append; T6793 read T6790's append to
/// key 270 and key 267 without T6789's), and nothing else. docs/HUNT.md says
/// why it may be PostgreSQL's and not lab's.
#[test]
fn postgresql_18s_serializable_g2_item_is_checked_from_its_history() {
    let file = Path::new("tests/hunt/pg18-serializable-g2-item.jsonl");
    let (code, report) = check(file, &["--level", "serializable"]);
    assert_eq!(code, 1, "{report}");
    assert_eq!(names(&report), vec!["G2-item"]);
    let anomaly = &report["levels"][0]["anomalies"][0];
    assert_eq!(anomaly["transactions"], serde_json::json!([6789, 6790, 6793]));
    let kinds: Vec<&str> = anomaly["cycle"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["why"]["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["rw", "wr", "rw"]);
    // Snapshot isolation allows it: at REPEATABLE READ the same history is as documented.
    let (code, report) = check(file, &["--level", "repeatable-read"]);
    assert_eq!(code, 0, "{report}");
    // Checked at a level other than the one it was recorded at: lab says so.
    let args = ["hunt", "--check", file.to_str().unwrap(), "--level", "repeatable-read"];
    let r = run(&args);
    assert!(
        r.stderr
            .contains("was recorded at serializable; it is checked against what repeatable read forbids"),
        "{}",
        r.stderr
    );
    let r = run(&["hunt", "--check", file.to_str().unwrap(), "--level", "serializable"]);
    assert!(!r.stderr.contains("was recorded at"), "{}", r.stderr);
}

/// Mutations of a real history: a serializable run's history, then one
/// transaction whose elements others read marked as aborted (G1a), or one
/// read given an element nobody appended (garbage): each forbidden at
/// every level, exit 1.
#[test]
fn a_tampered_history_is_not_as_documented() {
    let srv = TestServer::start();
    let dir = scratch("tamper");
    let history = dir.join("h.jsonl");
    let (code, _) = hunt(
        &srv,
        &dir,
        &[
            "--level",
            "serializable",
            "--txns",
            "400",
            "--history",
            history.to_str().unwrap(),
            "--no-specs",
        ],
    );
    assert_eq!(code, 0);
    let lines: Vec<Value> = std::fs::read_to_string(&history)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let (code, _) = check(&history, &[]);
    assert_eq!(code, 0, "untouched, the history is clean");
    // A committed transaction some read saw: claim it aborted.
    let seen: Vec<i64> = lines[1..]
        .iter()
        .filter(|t| t["type"] == "ok")
        .flat_map(|t| t["ops"].as_array().unwrap().clone())
        .filter(|o| o[0] == "r")
        .flat_map(|o| o[2].as_array().cloned().unwrap_or_default())
        .filter_map(|e| e.as_i64())
        .collect();
    let victim = lines[1..]
        .iter()
        .position(|t| {
            t["type"] == "ok"
                && t["ops"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|o| o[0] == "append" && seen.contains(&o[2].as_i64().unwrap()))
        })
        .expect("some append was read")
        + 1;
    let write = |lines: &[Value], name: &str| -> PathBuf {
        let p = dir.join(name);
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(&p, text).unwrap();
        p
    };
    let mut aborted = lines.clone();
    aborted[victim]["type"] = "fail".into();
    let (code, report) = check(&write(&aborted, "g1a.jsonl"), &[]);
    assert_eq!(code, 1);
    assert!(names(&report).contains(&"G1a".to_string()), "{report}");
    for level in ["read-uncommitted", "read-committed", "repeatable-read"] {
        assert_eq!(check(&write(&aborted, "g1a.jsonl"), &["--level", level]).0, 1);
    }
    let mut garbage = lines.clone();
    let reader = garbage
        .iter_mut()
        .skip(1)
        .find(|t| {
            t["type"] == "ok"
                && t["ops"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|o| o[0] == "r" && o[2].as_array().is_some_and(|l| !l.is_empty()))
        })
        .unwrap();
    for o in reader["ops"].as_array_mut().unwrap() {
        if o[0] == "r"
            && let Some(l) = o[2].as_array_mut()
            && !l.is_empty()
        {
            l.push(Value::from(999_999_999i64));
            break;
        }
    }
    let (code, report) = check(&write(&garbage, "garbage.jsonl"), &[]);
    assert_eq!(code, 1);
    assert!(names(&report).contains(&"garbage-read".to_string()), "{report}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `lab hunt --check` of a file `name` in `dir` holding `text`: the file, and how the run went.
fn check_text(dir: &Path, name: &str, text: &str) -> (PathBuf, crate::support::Run) {
    let file = dir.join(name);
    std::fs::write(&file, text).unwrap();
    let r = run(&["hunt", "--check", file.to_str().unwrap()]);
    (file, r)
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let dir = scratch("bad");
    let (damaged, r) = check_text(
        &dir,
        "damaged.jsonl",
        "{\"lab\":\"hunt\"}\n{\"index\":0,\"session\":1,\"type\":\"ok\",\"start\":0,\"end\":1,\"ops\":[]}\n{\"index\":1,\n",
    );
    one_line_exit_2(&r, &format!("{}:3:", damaged.display()));
    // A predicate read that is not a read of each key of its range.
    let (scan, r) = check_text(
        &dir,
        "scan.jsonl",
        "{\"index\":0,\"session\":1,\"type\":\"ok\",\"start\":0,\"end\":1,\"ops\":[[\"r\",1,[]]],\"scans\":[{\"lo\":1,\"hi\":2,\"op\":0}]}\n",
    );
    one_line_exit_2(&r, &format!("{}:1: the predicate read of keys 1 to 2", scan.display()));
    let (unknown, r) = check_text(
        &dir,
        "unknown.jsonl",
        "{\"index\":0,\"session\":1,\"type\":\"ok\",\"start\":0,\"end\":1,\"ops\":[[\"write\",1,2]]}\n",
    );
    one_line_exit_2(&r, "\"write\"");
    // --specs names a file: refused before anything runs (no server is
    // started: that would take longer than this line does).
    one_line_exit_2(
        &run(&["hunt", "--specs", unknown.to_str().unwrap()]),
        &format!("could not write {}: not a directory", unknown.display()),
    );
    // A directory that is not there is fine, and is not made by the check.
    let later = dir.join("later/specs");
    let r = run(&[
        "hunt",
        "--specs",
        later.to_str().unwrap(),
        "--database-url",
        "postgres://lab@127.0.0.1:1/nothing-listens",
    ]);
    one_line_exit_2(&r, "127.0.0.1:1");
    assert!(!dir.join("later").exists(), "made by the check and left");
    // A .jsonl file is read as JSON lines, whatever it begins with.
    let (not_json, r) = check_text(&dir, "not-json.jsonl", "not json\n");
    one_line_exit_2(&r, &format!("{}:1: not one JSON value per line", not_json.display()));
    let (edn, r) = check_text(
        &dir,
        "bad.edn",
        "{:type :invoke, :f :txn, :value [[:append 1 2]], :process 0}\n{:type :ok, :f :txn\n",
    );
    one_line_exit_2(&r, &format!("{}:2:", edn.display()));
    // Two workloads in one history; an rw-register read of a value nobody wrote.
    let (workloads, r) = check_text(
        &dir,
        "workloads.jsonl",
        "{\"index\":0,\"session\":1,\"type\":\"ok\",\"start\":0,\"end\":1,\"ops\":[[\"w\",1,2]]}\n\
         {\"index\":1,\"session\":2,\"type\":\"ok\",\"start\":2,\"end\":3,\"ops\":[[\"append\",1,3]]}\n",
    );
    one_line_exit_2(
        &r,
        &format!("{}:2: an append in an rw-register history", workloads.display()),
    );
    let (nobody, r) = check_text(
        &dir,
        "nobody.edn",
        "{:type :invoke, :f :txn, :value [[:w 1 2]], :process 0}\n{:type :ok, :f :txn, :value [[:w 1 2]], :process 0}\n\
         {:type :invoke, :f :txn, :value [[:r 1 nil]], :process 1}\n{:type :ok, :f :txn, :value [[:r 1 7]], :process 1}\n",
    );
    one_line_exit_2(
        &r,
        &format!(
            "{}:4: a committed read of key 1 returned 7, a value no transaction",
            nobody.display()
        ),
    );
    // Times on some operations only: no one clock to order them by.
    let (clocks, r) = check_text(
        &dir,
        "clocks.edn",
        "{:type :invoke, :f :txn, :value [[:w 1 2]], :process 0, :time 5}\n{:type :ok, :f :txn, :value [[:w 1 2]], :process 0}\n",
    );
    one_line_exit_2(
        &r,
        &format!(
            "{}:2: an operation with :time among operations without",
            clocks.display()
        ),
    );
    // Keys of two kinds in one history (Elle refuses them too).
    let (mixed, r) = check_text(
        &dir,
        "mixed.edn",
        "{:type :invoke, :f :txn, :value [[:append 1 2]], :process 0}\n{:type :ok, :f :txn, :value [[:append 1 2]], :process 0}\n\
         {:type :invoke, :f :txn, :value [[:r :x nil]], :process 0}\n{:type :ok, :f :txn, :value [[:r :x [2]]], :process 0}\n",
    );
    one_line_exit_2(
        &r,
        &format!("{}:4: the key :x mixes integer keys with named ones", mixed.display()),
    );
    let (_, r) = check_text(
        &dir,
        "twice.jsonl",
        "{\"index\":0,\"session\":1,\"type\":\"ok\",\"start\":0,\"end\":1,\"ops\":[[\"append\",1,5]]}\n\
         {\"index\":1,\"session\":2,\"type\":\"ok\",\"start\":0,\"end\":1,\"ops\":[[\"append\",1,5]]}\n",
    );
    one_line_exit_2(&r, "the element 5 is appended to key 1 twice");
    // What rw-register's versions may be assumed to do, asked of a
    // list-append history, or of a live list-append run (before a server starts).
    let twice = dir.join("twice.jsonl");
    one_line_exit_2(
        &run(&["hunt", "--check", twice.to_str().unwrap(), "--sequential-keys"]),
        "--sequential-keys orders an rw-register's versions, which its reads do not show; a list-append history",
    );
    one_line_exit_2(
        &run(&["hunt", "--linearizable-keys", "--workload", "predicate"]),
        "--linearizable-keys orders an rw-register's versions, which its reads do not show; a predicate history",
    );
    one_line_exit_2(&run(&["hunt", "--check", "/nonexistent/h.jsonl"]), "could not read");
    // A history that could not be written is refused before a server starts, as --junit is.
    one_line_exit_2(
        &run(&["hunt", "--history", "/nonexistent/dir/h.jsonl"]),
        "could not write /nonexistent/dir/h.jsonl",
    );
    // Nothing recorded is nothing checked, not a pass.
    for text in ["", "{\"lab\":\"hunt\",\"level\":\"serializable\"}\n"] {
        one_line_exit_2(&check_text(&dir, "empty.jsonl", text).1, "holds no transactions");
    }
    // Sizes no server can take are refused before one starts.
    one_line_exit_2(&run(&["hunt", "--keys", "0"]), "--keys");
    one_line_exit_2(&run(&["hunt", "--clients", "400"]), "--clients 400");
    one_line_exit_2(
        &run(&["hunt", "--clients", "5", "--max-connections", "4"]),
        "--clients 5",
    );
    one_line_exit_2(&run(&["hunt", "--level", "snapshot"]), "--level snapshot");
    one_line_exit_2(&run(&["hunt", "--seconds", "0"]), "--seconds");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A Jepsen rw-register history whose reads alone order nothing: process
/// 0 writes 1, process 1 then writes 2, process 2 then reads 1. Nothing
/// is found, and the key is said undecided; with each key assumed
/// linearizable, 2 came after 1 and the read of 1 after 2: cyclic
/// versions, exit 1. Assumed sequentially consistent only, three
/// processes order nothing.
#[test]
fn assumed_linearizable_keys_order_what_a_register_s_reads_cannot() {
    let dir = scratch("keys");
    let text: String = [(0, "[:w 1 1]", "[:w 1 1]"), (1, "[:w 1 2]", "[:w 1 2]"), (2, "[:r 1 nil]", "[:r 1 1]")]
        .iter()
        .map(|(p, invoke, ok)| {
            format!(
                "{{:type :invoke, :f :txn, :value [{invoke}], :process {p}}}\n{{:type :ok, :f :txn, :value [{ok}], :process {p}}}\n"
            )
        })
        .collect();
    let (file, _) = check_text(&dir, "h.edn", &text);
    let check = |flags: &[&str]| {
        let mut args = vec!["hunt", "--check", file.to_str().unwrap(), "--format", "json"];
        args.extend(flags);
        let r = run(&args);
        let v: Value = serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {}", r.stderr));
        let level = &v["levels"][0];
        let names: Vec<String> = (level["anomalies"].as_array().unwrap().iter())
            .map(|a| a["name"].as_str().unwrap().to_string())
            .collect();
        (r.code, names, level["version_orders"].clone())
    };
    let (code, names, orders) = check(&[]);
    assert_eq!((code, names.len()), (0, 0), "{names:?}");
    assert_eq!(orders["undecided"], 1, "{orders}");
    let (code, names, orders) = check(&["--sequential-keys"]);
    assert_eq!((code, names.len()), (0, 0), "{names:?}");
    assert_eq!(orders["undecided"], 1, "{orders}");
    let (code, names, orders) = check(&["--linearizable-keys"]);
    assert_eq!((code, names), (1, vec!["cyclic-versions".to_string()]));
    assert_eq!(orders["cyclic"], 1, "{orders}");
    // lab's JSON lines' nil read (null), after the write ended, on another session.
    let (stale, _) = check_text(
        &dir,
        "stale.jsonl",
        "{\"lab\":\"hunt\",\"workload\":\"rw-register\"}\n\
         {\"index\":0,\"session\":1,\"type\":\"ok\",\"start\":100,\"end\":200,\"ops\":[[\"w\",1,1]]}\n\
         {\"index\":1,\"session\":2,\"type\":\"ok\",\"start\":300,\"end\":400,\"ops\":[[\"r\",1,null]]}\n",
    );
    for (flag, code) in [(None, 0), (Some("--linearizable-keys"), 1)] {
        let mut args = vec!["hunt", "--check", stale.to_str().unwrap()];
        args.extend(flag);
        assert_eq!(run(&args).code, code, "{flag:?}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// More sessions than the server has room for: one line that says how many
/// it has, and nothing on stdout (no empty table before the error).
#[test]
fn more_clients_than_the_server_has_room_for_is_one_line_and_no_table() {
    let srv = TestServer::start();
    let url = srv.url();
    let r = run(&["hunt", "--database-url", &url, "--clients", "1000", "--no-specs"]);
    one_line_exit_2(&r, "--clients asks for 1000: ask for");
    assert_eq!(r.stdout, "", "nothing ran, nothing to show");
}

/// `lab ARGS` stopped by Ctrl-C once `until` holds on the server: exit
/// 130, "interrupted" on stderr; its JSON.
fn interrupted(srv: &TestServer, args: &[std::ffi::OsString], until: &str) -> Value {
    let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
    let (json, err) = stopped_part_way(
        srv,
        &args,
        until,
        |_, pid| unsafe {
            libc::kill(pid as i32, libc::SIGINT);
        },
        130,
    );
    assert!(err.contains("interrupted"), "{err}");
    json
}

#[test]
fn ctrl_c_checks_the_history_recorded_so_far_and_exits_130() {
    let srv = TestServer::start();
    let dir = scratch("int");
    let history = dir.join("h.jsonl");
    let specs = dir.join("specs");
    let args: Vec<std::ffi::OsString> = vec![
        "hunt".into(),
        "--level".into(),
        "repeatable-read".into(),
        "--seconds".into(),
        "120".into(),
        "--history".into(),
        history.clone().into(),
        "--specs".into(),
        specs.into(),
    ];
    let json = interrupted(
        &srv,
        &args,
        // Once some transactions have committed (a session in a transaction may
        // still be reading its level back), as the server's statistics show them.
        "SELECT (coalesce(sum(n_tup_ins + n_tup_upd), 0) > 20)::int::bigint FROM pg_stat_user_tables WHERE schemaname LIKE 'lab_hunt_%'",
    );
    let level = &json["levels"][0];
    assert_eq!(level["partial"], true, "{json}");
    assert!(level["transactions"].as_u64().unwrap() > 0, "{json}");
    assert_eq!(json["error"]["exit_code"], 130);
    let written = std::fs::read_to_string(&history).unwrap();
    assert!(written.lines().count() > 1, "the history so far is written");
    // Nothing of the run is left on the server.
    let c = srv.client();
    srv.wait_for_zero(
        &c,
        "SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE 'lab:hunt%'",
    );
    assert_eq!(
        srv.query_i64(
            &c,
            "SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'lab_hunt_%' OR nspname LIKE 'lab_ex_%'"
        ),
        0
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Ctrl-C while the reproducers are replayed: the level's history is
/// whole and checked, and it is reported with what was found, not dropped.
#[test]
fn ctrl_c_during_the_replays_keeps_the_level_and_what_it_found() {
    let srv = TestServer::start();
    let dir = scratch("int-replay");
    let specs = dir.join("specs");
    let args: Vec<std::ffi::OsString> = vec![
        "hunt".into(),
        "--level".into(),
        "read-committed".into(),
        "--replays".into(),
        "1000".into(),
        "--specs".into(),
        specs.into(),
    ];
    let json = interrupted(
        &srv,
        &args,
        // A replay under way: its worker's schema is there.
        "SELECT (count(*) > 0)::int::bigint FROM pg_namespace WHERE nspname LIKE 'lab_ex_%'",
    );
    let level = &json["levels"][0];
    assert_eq!(level["level"], "read committed", "{json}");
    assert_eq!(level["partial"], false, "its history was whole: {json}");
    assert_eq!(level["transactions"], 2000, "{json}");
    assert!(!level["anomalies"].as_array().unwrap().is_empty(), "{json}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_replay_the_connection_limit_cannot_hold_is_written_and_said_not_replayed() {
    let dir = scratch("maxconn");
    let specs = dir.join("specs");
    let r = run(&[
        "hunt",
        "--level",
        "repeatable-read",
        "--clients",
        "2",
        "--max-connections",
        "3",
        "--format",
        "json",
        "--specs",
        specs.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let report: Value = serde_json::from_str(&r.stdout).unwrap();
    let a = anomaly(&report, "G2-item");
    let rep = &a["reproducer"];
    assert_eq!(rep["reproduced"], false, "{a}");
    assert_eq!(rep["replays"], 0);
    assert!(
        rep["instead"].as_str().unwrap().contains("--max-connections is 3"),
        "{rep}"
    );
    assert!(
        Path::new(rep["path"].as_str().unwrap()).is_file(),
        "the spec is written all the same"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `lab hunt ARGS --format json` on lab's own throwaway server (no
/// --database-url: the nemesis signals its processes).
fn hunt_own(args: &[&str]) -> (i32, Value, String) {
    let mut all = vec!["hunt", "--format", "json", "--no-specs"];
    all.extend_from_slice(args);
    let r = run(&all);
    assert!(r.code == 0 || r.code == 1, "exit {}: {}", r.code, r.stderr);
    (r.code, serde_json::from_str(&r.stdout).expect("JSON"), r.stderr)
}

/// The lines of a history file: its header, its transactions, its faults.
pub(crate) fn history_lines(path: &Path) -> (Value, Vec<Value>, Vec<Value>) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines().map(|l| serde_json::from_str::<Value>(l).unwrap());
    let header = lines.next().unwrap();
    let (faults, txns): (Vec<Value>, Vec<Value>) = lines.partition(|l| l.get("nemesis").is_some());
    (header, txns, faults)
}

/// Backends paused, killed, the server restarted while the transactions
/// run, on a healthy server: the faults are in the history as Jepsen's
/// nemesis operations are, what was in flight is an unknown outcome, and
/// nothing acknowledged is lost (nor any anomaly read committed forbids:
/// at serializable a pause may widen the commit window of the G2-item
/// issue 29 left unsettled, which this test is not about).
#[test]
fn a_nemesis_on_a_durable_server_loses_nothing_and_is_recorded() {
    let dir = scratch("nemesis");
    let history = dir.join("h.jsonl");
    let junit = dir.join("h.xml");
    let (code, report, stderr) = hunt_own(&[
        "--junit",
        junit.to_str().unwrap(),
        "--level",
        "read-committed",
        "--nemesis",
        "pause,kill,restart",
        "--nemesis-interval",
        "50",
        "--seconds",
        "3",
        "--history",
        history.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}\n{report}");
    let level = &report["levels"][0];
    assert_eq!(level["forbidden_found"], serde_json::json!([]), "{report}");
    assert!(!names(&report).iter().any(|n| n == "lost"), "{report}");
    let counted = level["nemesis"]["faults"].as_object().expect("the faults counted");
    for f in ["pause", "kill", "restart"] {
        assert!(counted.contains_key(f), "{counted:?}");
    }
    let (header, txns, faults) = history_lines(&history);
    assert_eq!(header["nemesis"], serde_json::json!(["pause", "kill", "restart"]));
    assert!(!faults.is_empty(), "no fault recorded");
    for f in &faults {
        let kind = f["nemesis"].as_str().unwrap();
        assert!(["pause", "kill", "restart"].contains(&kind), "{f}");
        assert_eq!(
            counted[kind].as_u64().unwrap() as usize,
            faults.iter().filter(|g| g["nemesis"] == kind).count()
        );
        assert!(f["start"].as_u64() <= f["end"].as_u64(), "{f}");
    }
    // A kill or a restart ends every session's connection: some
    // transactions were in flight, an unknown outcome when their COMMIT
    // had gone out, else failed with the connection (no SQLSTATE, or the
    // server's 57P0x), not aborted by the level (40001, 40P01).
    if faults.iter().any(|f| f["nemesis"] != "pause") {
        let cut = |t: &&Value| {
            t["type"] == "info" || (t["type"] == "fail" && t["sqlstate"].as_str().is_none_or(|c| c.starts_with("57P")))
        };
        assert!(txns.iter().any(|t| cut(&t)), "nothing was in flight");
    }
    // The final read, one transaction past the last of the sessions'.
    let last = txns.last().unwrap();
    assert_eq!(last["session"], 5, "{last}");
    // Durability has its JUnit cases, passed.
    let xml = std::fs::read_to_string(&junit).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let cases: Vec<_> = doc.descendants().filter(|n| n.has_tag_name("testcase")).collect();
    // Every class but G2 (no predicate reads).
    assert_eq!(cases.len(), lab::commands::hunt::check::Class::ALL.len() - 1);
    assert!(cases.iter().any(|c| c.attribute("name") == Some("lost")));
    assert!(!cases.iter().any(|c| c.attribute("name") == Some("G2")));
    assert_eq!(doc.root_element().attribute("failures"), Some("0"));
    // The history checked again, without a server: the same verdict.
    let (code, again) = check(&history, &[]);
    assert_eq!(code, 0, "{again}");
    assert_eq!(names(&again), names(&report), "{again}");
}

/// Two levels under kill and restart: the second starts on a control
/// connection lab opened again (the first level's faults ended the
/// harness's), and neither loses anything or shows what it forbids.
#[test]
fn a_nemesis_over_two_levels_goes_on_after_the_control_connection_is_gone() {
    let (code, report, stderr) = hunt_own(&[
        "--level",
        "read-committed",
        "--level",
        "repeatable-read",
        "--nemesis",
        "kill,restart",
        "--nemesis-interval",
        "50",
        "--seconds",
        "1.5",
    ]);
    assert_eq!(code, 0, "{stderr}\n{report}");
    let levels = report["levels"].as_array().unwrap();
    assert_eq!(levels.len(), 2, "{report}");
    for l in levels {
        assert_eq!(l["forbidden_found"], serde_json::json!([]), "{l}");
        assert!(
            l["nemesis"]["faults"]
                .as_object()
                .unwrap()
                .values()
                .any(|n| n.as_u64() > Some(0)),
            "{l}"
        );
    }
}

/// The mutation: lab's server run as it usually is (synchronous_commit
/// off), with the WAL writer asleep, so that a kill or a restart loses
/// commits it acknowledged. The hunt must say so, and exit 1.
#[test]
fn a_server_that_loses_acknowledged_commits_is_caught() {
    let dir = scratch("nemesis-mutation");
    let lab_dir = dir.join("lab");
    std::fs::create_dir_all(&lab_dir).unwrap();
    std::fs::write(
        lab_dir.join("hunt-nemesis.conf"),
        "fsync = off\nsynchronous_commit = off\nwal_writer_delay = 10000ms\n",
    )
    .unwrap();
    let (code, report, stderr) = hunt_own(&[
        "--level",
        "read-committed",
        "--nemesis",
        "kill,restart",
        "--nemesis-interval",
        "50",
        "--seconds",
        "3",
        "--lab-dir",
        lab_dir.to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{stderr}\n{report}");
    let lost = anomaly(&report, "lost");
    assert_eq!(lost["forbidden"], true, "{lost}");
    assert!(lost.to_string().contains("an acknowledged write is lost"), "{lost}");
}

/// pause, kill and restart signal the server's processes: refused by name
/// against a server lab did not start (before connecting to it), as are
/// faults lab does not inject and intervals out of range.
#[test]
fn a_nemesis_on_a_server_lab_did_not_start_is_refused() {
    let url = "postgres://lab@127.0.0.1:1/nothing-listens";
    let r = run(&["hunt", "--nemesis", "pause,kill", "--database-url", url]);
    one_line_exit_2(&r, "--nemesis pause,kill signals the server's processes");
    one_line_exit_2(
        &run(&["hunt", "--nemesis", "kill,crash"]),
        "--nemesis crash: not a fault",
    );
    // failover runs the workload on lab's HA cluster: alone, on lab's own.
    one_line_exit_2(
        &run(&["hunt", "--nemesis", "failover,pause"]),
        "--nemesis failover runs the workload on lab's HA cluster (Patroni, three nodes), where --nemesis pause has no meaning",
    );
    one_line_exit_2(
        &run(&["hunt", "--nemesis", "failover", "--replica"]),
        "where --replica has no meaning",
    );
    one_line_exit_2(
        &run(&["hunt", "--nemesis", "failover", "--database-url", url]),
        "--nemesis failover signals the server's processes",
    );
    one_line_exit_2(
        &run(&["hunt", "--nemesis", "kill", "--nemesis-interval", "0"]),
        "--nemesis-interval",
    );
}

/// A process's state letter and parent, from /proc (none once it is gone).
fn proc_state(pid: u32) -> Option<(char, u32)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let mut rest = stat.rsplit(')').next()?.split_whitespace();
    let state = rest.next()?.chars().next()?;
    let ppid = rest.next()?.parse().ok()?;
    (state != 'Z').then_some((state, ppid))
}

/// The pids whose parent is `parent`.
fn children_of(parent: u32) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|p| proc_state(*p).is_some_and(|(_, pp)| pp == parent))
        .collect()
}

/// `lab hunt --nemesis pause` started on lab's own server, once one of its
/// backends is stopped: (lab's pid, the stopped backend, the postmaster).
fn paused_hunt() -> (std::process::Child, u32, Vec<u32>) {
    let child = crate::support::lab()
        .args(["hunt", "--level", "read-committed", "--no-specs", "--format", "json"])
        .args(["--nemesis", "pause", "--nemesis-interval", "1", "--seconds", "60"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let lab_pid = child.id();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    // lab's postmaster, then one of its backends stopped.
    let stopped = loop {
        assert!(std::time::Instant::now() < deadline, "no backend was ever stopped");
        let stopped = (children_of(lab_pid).into_iter())
            .flat_map(children_of)
            .find(|p| proc_state(*p).is_some_and(|(s, _)| s == 'T'));
        if let Some(p) = stopped {
            break p;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    };
    let server: Vec<u32> = children_of(lab_pid)
        .into_iter()
        .filter(|p| children_of(*p).contains(&stopped))
        .collect();
    (child, stopped, server)
}

/// Until `pid` is gone, within `secs` (`why` otherwise).
fn gone_within(pid: u32, secs: u64, why: &str) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    while proc_state(pid).is_some() {
        assert!(
            std::time::Instant::now() < deadline,
            "{why}: {pid} {:?}",
            proc_state(pid)
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// lab SIGKILLed while a backend of its server is stopped (SIGSTOP): the
/// guard continues it, so it and the whole server end (a stopped process
/// would sit on the postmaster's SIGQUIT until the postmaster's SIGKILL,
/// 5 s later on PostgreSQL 14 and later, for ever before).
#[test]
fn a_sigkilled_lab_leaves_no_backend_stopped_and_no_server() {
    let (mut child, stopped, server) = paused_hunt();
    let lab_pid = child.id();
    unsafe { libc::kill(lab_pid as i32, libc::SIGKILL) };
    child.wait().unwrap();
    gone_within(stopped, 3, "the backend was left stopped");
    for p in server {
        gone_within(p, 15, "the server outlived lab");
    }
    // The next start removes what the killed run left in the temp dir.
    let _ = run(&["nowait"]);
    crate::support::assert_no_leftovers(lab_pid);
}

/// lab SIGKILLed after a restart: the postmaster lab started again (from a
/// thread of its own, which keeps its parent-death signal armed) ends with
/// lab, as the first one would.
#[test]
fn a_sigkilled_lab_takes_its_restarted_server_with_it() {
    let mut child = crate::support::lab()
        .args(["hunt", "--level", "read-committed", "--no-specs", "--format", "json"])
        .args(["--nemesis", "restart", "--nemesis-interval", "20", "--seconds", "60"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let lab_pid = child.id();
    let postmaster = || {
        (children_of(lab_pid).into_iter()).find(|p| {
            std::fs::read(format!("/proc/{p}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(&format!("lab-pg-{lab_pid}-")))
        })
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let first = loop {
        assert!(std::time::Instant::now() < deadline, "the server never started");
        if let Some(p) = postmaster() {
            break p;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    let again = loop {
        assert!(std::time::Instant::now() < deadline, "the server was never restarted");
        if let Some(p) = postmaster().filter(|p| *p != first) {
            break p;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    unsafe { libc::kill(lab_pid as i32, libc::SIGKILL) };
    child.wait().unwrap();
    gone_within(again, 15, "the restarted server outlived lab");
    let _ = run(&["nowait"]);
    crate::support::assert_no_leftovers(lab_pid);
}

/// Ctrl-C while a backend is stopped: lab continues it in its clean-up,
/// checks the history so far, stops its server at once and exits 130.
#[test]
fn ctrl_c_under_a_pause_continues_the_backend_and_exits_130() {
    let (child, stopped, _) = paused_hunt();
    let lab_pid = child.id();
    let sent = std::time::Instant::now();
    unsafe { libc::kill(lab_pid as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(
        sent.elapsed() < std::time::Duration::from_secs(4),
        "{:?}",
        sent.elapsed()
    );
    let report: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(report["levels"][0]["partial"], true, "{report}");
    gone_within(stopped, 3, "the backend was left stopped");
    crate::support::assert_no_leftovers(lab_pid);
}

/// The transactions of a history that ran on the standby: (index, ops, lsn).
fn on_standby(path: &Path) -> Vec<(u64, Value, String)> {
    let (header, txns, _) = history_lines(path);
    assert_eq!(header["replica"], true, "{header}");
    txns.iter()
        .filter(|t| t["node"] == "standby")
        .map(|t| {
            let lsn = t["lsn"].as_str().unwrap_or_else(|| panic!("no lsn: {t}")).to_string();
            (t["index"].as_u64().unwrap(), t["ops"].clone(), lsn)
        })
        .collect()
}

/// `--replica`: lab's own standby takes half the read-only transactions,
/// the same ones for the same seed, each recorded with the node and the
/// standby's replay LSN; what the checker finds there is what a standby's
/// reads can show beside the primary's (Long Fork, G-nonadjacent), no
/// other forbidden anomaly. At serializable (refused by a hot standby)
/// every transaction stays on the primary.
#[test]
fn replica_reads_go_to_lab_s_standby_as_the_seed_says_and_are_recorded() {
    let dir = scratch("replica");
    let mut runs = Vec::new();
    for name in ["a.jsonl", "b.jsonl"] {
        let history = dir.join(name);
        let (code, report, stderr) = hunt_own(&[
            "--replica",
            "--level",
            "repeatable-read",
            "--txns",
            "400",
            "--seed",
            "3",
            "--history",
            history.to_str().unwrap(),
        ]);
        if code == 1 {
            assert_eq!(
                report["levels"][0]["forbidden_found"],
                serde_json::json!(["G-nonadjacent"]),
                "{stderr}\n{report}"
            );
        }
        let standby = on_standby(&history);
        assert!(!standby.is_empty(), "no transaction on the standby");
        assert_eq!(report["levels"][0]["on_standby"], standby.len(), "{report}");
        for (i, ops, lsn) in &standby {
            assert!(
                ops.as_array().unwrap().iter().all(|o| o[0] == "r"),
                "T{i} wrote on the standby: {ops}"
            );
            assert!(lsn.contains('/'), "T{i}: {lsn}");
        }
        let mut indexes: Vec<u64> = standby.into_iter().map(|(i, ..)| i).collect();
        indexes.sort_unstable();
        runs.push(indexes);
    }
    assert_eq!(runs[0], runs[1], "the same seed, the same transactions on the standby");

    let history = dir.join("ser.jsonl");
    let (code, report, stderr) = hunt_own(&[
        "--replica",
        "--level",
        "serializable",
        "--txns",
        "200",
        "--history",
        history.to_str().unwrap(),
    ]);
    assert!(code == 0 || names(&report) == ["G2-item"], "{stderr}\n{report}");
    assert!(on_standby(&history).is_empty());

    // A TLS-only server's standby is TLS-only too: its sessions speak it.
    let (_, report, stderr) = hunt_own(&["--tls", "--replica", "--level", "read-committed", "--txns", "200"]);
    assert!(
        report["levels"][0]["on_standby"].as_u64() > Some(0),
        "{stderr}\n{report}"
    );
}

/// `--sync-replica remote-apply`: every commit waits until lab's standby
/// has applied it, so no read there started after a commit was
/// acknowledged misses it. Held to real-time order (`--realtime`), the
/// asynchronous standby serves such stale reads (a G-single-realtime,
/// forbidden), the synchronous one none; the mode is in the history's
/// header, the JSON and the text. (Long Fork, G-nonadjacent without
/// real time, may still show: that is what a synchronous standby allows.)
#[test]
fn a_synchronous_standby_serves_no_read_older_than_an_acknowledged_commit() {
    let dir = scratch("sync-replica");
    let forbidden = |report: &Value| -> Vec<String> {
        serde_json::from_value(report["levels"][0]["forbidden_found"].clone()).unwrap()
    };
    let hunt = |history: &Path, extra: &[&str]| {
        let mut args = vec![
            "--replica",
            "--realtime",
            "--level",
            "repeatable-read",
            "--txns",
            "1000",
        ];
        args.extend_from_slice(&["--seed", "1", "--history", history.to_str().unwrap()]);
        args.extend_from_slice(extra);
        hunt_own(&args)
    };
    // The asynchronous one with reproducers: one whose transactions read
    // on the standby too is written, not replayed (a spec runs on one
    // server), and says why; the others are replayed.
    let specs = dir.join("specs");
    let async_history = dir.join("async.jsonl");
    let r = run(&[
        "hunt",
        "--format",
        "json",
        "--specs",
        specs.to_str().unwrap(),
        "--replica",
        "--realtime",
        "--level",
        "repeatable-read",
        "--txns",
        "1000",
        "--seed",
        "1",
        "--history",
        async_history.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let report: Value = serde_json::from_str(&r.stdout).unwrap();
    assert!(
        forbidden(&report).iter().any(|n| n == "G-single-realtime"),
        "an asynchronous standby's stale read: {report}"
    );
    assert!(report["levels"][0].get("synchronous_commit").is_none(), "{report}");
    let anomalies = report["levels"][0]["anomalies"].as_array().unwrap();
    let not_replayed: Vec<&Value> = anomalies.iter().filter(|a| a["reproducer"]["replays"] == 0).collect();
    assert!(!not_replayed.is_empty(), "{report}");
    for a in anomalies {
        let rep = &a["reproducer"];
        if rep.is_null() {
            continue;
        }
        if rep["replays"] == 0 {
            let why = rep["instead"].as_str().unwrap_or_default();
            assert!(
                why.contains("read on lab's standby, and a spec's sessions all run on one server"),
                "{a}"
            );
            assert!(Path::new(rep["path"].as_str().unwrap()).exists(), "{a}");
        } else {
            assert_eq!(rep["replays"], 10, "{a}");
        }
    }

    let history = dir.join("sync.jsonl");
    let (_, report, stderr) = hunt(&history, &["--sync-replica", "remote-apply"]);
    let found = forbidden(&report);
    assert!(
        found.iter().all(|n| n == "G-nonadjacent"),
        "a synchronous standby: {found:?}\n{stderr}"
    );
    assert_eq!(report["levels"][0]["synchronous_commit"], "remote_apply", "{report}");
    assert!(report["levels"][0]["on_standby"].as_u64() > Some(0), "{report}");
    let (header, ..) = history_lines(&history);
    assert_eq!(header["synchronous_commit"], "remote_apply", "{header}");
    let r = run(&["hunt", "--check", history.to_str().unwrap(), "--realtime"]);
    assert!(
        r.stdout
            .contains("every commit waited for it (synchronous_commit = remote_apply)"),
        "{}",
        r.stdout
    );

    // Refused (exit 2): without --replica; through pgpool-II (which sets
    // synchronous_commit itself); with a nemesis that restarts the server
    // (the standby comes back seconds later, every commit waiting).
    for (args, named) in [
        (&["--sync-replica", "on"][..], "--replica"),
        (&["--replica", "--via", "pgpool", "--sync-replica", "on"][..], "--via"),
        (
            &["--replica", "--sync-replica", "on", "--nemesis", "pause,kill"][..],
            "--nemesis kill",
        ),
        (
            &["--replica", "--sync-replica", "on", "--nemesis", "restart"][..],
            "--nemesis restart",
        ),
    ] {
        let mut all = vec!["hunt"];
        all.extend_from_slice(args);
        let r = run(&all);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains(named), "{args:?}: {}", r.stderr);
    }
}

/// `--replica --via pgpool`: every session through lab's pgpool-II, which
/// balances a transaction's reads to the standby until its first write and
/// sends the writes to the primary. A REPEATABLE READ transaction then
/// reads one server's snapshot and commits on the other: the checker finds
/// what repeatable read forbids (exit 1), in transactions that read on the
/// standby and wrote on the primary, and says so. SERIALIZABLE, which
/// pgpool-II never balances, stays on the primary: as documented.
#[test]
fn through_pgpool_a_repeatable_read_transaction_spans_two_servers() {
    let dir = scratch("pgpool");
    let history = dir.join("rr.jsonl");
    let (code, report, stderr) = hunt_own(&[
        "--replica",
        "--via",
        "pgpool",
        "--level",
        "repeatable-read",
        "--txns",
        "6000",
        "--history",
        history.to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{stderr}\n{report}");
    let level = &report["levels"][0];
    let forbidden: Vec<String> = serde_json::from_value(level["forbidden_found"].clone()).unwrap();
    assert!(!forbidden.is_empty(), "{report}");
    // Some transactions read on the standby and wrote on the primary.
    let split: Vec<u64> = on_standby(&history)
        .into_iter()
        .filter(|(_, ops, _)| ops.as_array().unwrap().iter().any(|o| o[0] == "append"))
        .map(|(i, ..)| i)
        .collect();
    assert!(!split.is_empty(), "no transaction read on the standby and wrote");
    // A forbidden anomaly rests on one of them, and the text says why.
    let text = report.to_string();
    assert!(
        text.contains("One transaction, two servers: pgpool-II balances a transaction's reads until its first write"),
        "{report}"
    );
    let history = dir.join("ser.jsonl");
    let (code, report, stderr) = hunt_own(&[
        "--replica",
        "--via",
        "pgpool",
        "--level",
        "serializable",
        "--txns",
        "300",
        "--history",
        history.to_str().unwrap(),
    ]);
    assert!(code == 0 || names(&report) == ["G2-item"], "{stderr}\n{report}");
    assert!(on_standby(&history).is_empty());
    // The predicate and rw-register workloads go through pgpool-II too:
    // their predicate reads and register reads balanced to the standby
    // (the rows of a range read there, as one JSON value with the LSN).
    for (workload, read) in [("predicate", "r"), ("rw-register", "r")] {
        let history = dir.join(format!("{workload}.jsonl"));
        let (code, report, stderr) = hunt_own(&[
            "--replica",
            "--via",
            "pgpool",
            "--workload",
            workload,
            "--level",
            "repeatable-read",
            "--txns",
            "800",
            "--history",
            history.to_str().unwrap(),
        ]);
        assert!(code == 0 || code == 1, "{stderr}\n{report}");
        let there = on_standby(&history);
        assert!(
            there
                .iter()
                .any(|(_, ops, _)| ops.as_array().unwrap().iter().any(|o| o[0] == read)),
            "{workload}: no read on the standby"
        );
        if workload == "predicate" {
            let (_, txns, _) = history_lines(&history);
            let scanned = txns
                .iter()
                .filter(|t| t["node"] == "standby" && t["scans"].is_array())
                .count();
            assert!(scanned > 0, "no predicate read on the standby");
        }
    }
    // Refused before anything starts: with a nemesis, without --replica.
    one_line_exit_2(
        &run(&["hunt", "--replica", "--via", "pgpool", "--nemesis", "pause"]),
        "--via pgpool runs without a nemesis",
    );
    let r = run(&["hunt", "--via", "pgpool"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("--replica"), "{}", r.stderr);
}

/// `--nemesis partition` through lab's fault proxy, on a server lab did not
/// start (the proxy needs no signal to its processes): sessions cut off
/// reconnect once the partition heals, after the backend the server kept
/// for them is gone; nothing acknowledged is lost.
#[test]
fn a_partition_nemesis_on_the_user_s_server_loses_nothing() {
    let srv = TestServer::start();
    let dir = scratch("partition");
    let history = dir.join("p.jsonl");
    let (code, report) = hunt(
        &srv,
        &dir,
        &[
            "--level",
            "read-committed",
            "--nemesis",
            "partition",
            "--nemesis-interval",
            "20",
            "--seconds",
            "3",
            "--no-specs",
            "--history",
            history.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "{report}");
    let (header, _, faults) = history_lines(&history);
    assert_eq!(header["nemesis"], serde_json::json!(["partition"]));
    assert!(!faults.is_empty(), "no partition recorded");
    assert!(
        faults
            .iter()
            .all(|f| f["nemesis"] == "partition" && ["black hole", "reset"].contains(&f["how"].as_str().unwrap())),
        "{faults:?}"
    );
    assert!(!names(&report).iter().any(|n| n == "lost"), "{report}");
}
