//! PostgreSQL's own isolationtester as the oracle: every spec under lab/ is
//! run unchanged by isolationtester against a database holding the lab
//! schema, and by lab; for each variant, the order of steps, waits,
//! completions, errors and the rows returned must be the same.
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use lab::files::LabFiles;
use lab::specfile::Spec;
use serde_json::Value;

use crate::support::{TestServer, run};

/// One thing isolationtester prints (and lab records) about a step.
#[derive(Debug, Clone, PartialEq)]
enum Event {
    /// Answered without waiting.
    Done(String),
    Waiting(String),
    /// A waiting step answered.
    Completed(String),
    /// The server's primary message.
    Error(String, String),
    Rows(String, Vec<Vec<String>>),
}

/// isolationtester: `$LAB_ISOLATIONTESTER`, else PostgreSQL's build tree
/// under `pg_config --pkglibdir` (Debian's postgresql-client package).
pub fn isolationtester() -> PathBuf {
    if let Some(p) = std::env::var_os("LAB_ISOLATIONTESTER").filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    let out = Command::new("pg_config")
        .arg("--pkglibdir")
        .output()
        .expect("pg_config runs (scripts/test installs postgresql-client)");
    let dir = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let path = PathBuf::from(dir).join("pgxs/src/test/isolation/isolationtester");
    assert!(
        path.is_file(),
        "no isolationtester at {} (Debian's postgresql-client package has it; scripts/test installs it)",
        path.display()
    );
    path
}

/// Runs isolationtester on `srv`'s postgres database, the spec's text on its
/// stdin, with these environment variables; its whole output.
pub fn isolationtester_output(srv: &TestServer, text: &str, env: &[(&str, &str)]) -> std::process::Output {
    let mut child = Command::new(isolationtester())
        .arg(format!(
            "host=127.0.0.1 port={} user=postgres dbname=postgres",
            srv.cluster.port
        ))
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("isolationtester starts");
    child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

/// The lab schema (the Bookstore) in `srv`'s postgres database, as lab's specs need it.
pub fn build_bookstore(srv: &TestServer, client: &tokio_postgres::Client) {
    let files = LabFiles::embedded();
    srv.rt
        .block_on(lab::postgres::connect::rebuild_schema(
            client,
            "lab",
            &files.read("schema.sql").unwrap(),
            &files.read("seed.sql").unwrap(),
        ))
        .unwrap();
}

/// Runs a spec through isolationtester against `srv`, schema `lab`.
fn run_isolationtester(srv: &TestServer, text: &str) -> String {
    let out = isolationtester_output(
        srv,
        text,
        &[("PGOPTIONS", "-c search_path=lab"), ("PGISOLATIONTIMEOUT", "60")],
    );
    assert!(
        out.status.success(),
        "isolationtester failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// isolationtester's output, per permutation (by its step list).
fn parse_isolationtester(spec: &Spec, out: &str) -> Vec<(String, Vec<Event>)> {
    let sql_of = |name: &str| {
        spec.step(spec.find(name).unwrap_or_else(|| panic!("no step {name}")))
            .sql
            .clone()
    };
    let mut perms: Vec<(String, Vec<Event>)> = Vec::new();
    let mut current = String::new();
    let mut rest = out;
    while !rest.is_empty() {
        let line_end = rest.find('\n').map_or(rest.len(), |i| i + 1);
        let line = rest[..line_end].trim_end_matches('\n');
        if let Some(steps) = line.strip_prefix("starting permutation: ") {
            perms.push((steps.to_string(), Vec::new()));
            rest = &rest[line_end..];
            continue;
        }
        let events = match perms.last_mut() {
            Some((_, e)) => e,
            None => {
                rest = &rest[line_end..];
                continue;
            }
        };
        if let Some(after) = rest.strip_prefix("step ") {
            let colon = after.find(": ").expect("step NAME: ");
            let name = &after[..colon];
            let body = &after[colon + 2..];
            current = name.to_string();
            if let Some(r) = body.strip_prefix("<... completed>\n") {
                events.push(Event::Completed(name.to_string()));
                rest = r;
            } else {
                let sql = sql_of(name);
                let r = body
                    .strip_prefix(sql.as_str())
                    .unwrap_or_else(|| panic!("step {name}'s SQL: {body}"));
                if let Some(r) = r.strip_prefix(" <waiting ...>\n") {
                    events.push(Event::Waiting(name.to_string()));
                    rest = r;
                } else {
                    events.push(Event::Done(name.to_string()));
                    rest = r.strip_prefix('\n').unwrap_or(r);
                }
            }
            continue;
        }
        if let Some(msg) = line.strip_prefix("ERROR:  ").or_else(|| line.strip_prefix("FATAL:  ")) {
            events.push(Event::Error(current.clone(), msg.to_string()));
            rest = &rest[line_end..];
            continue;
        }
        // A result set: a header, a rule of '-' and '+', rows, "(N rows)".
        let next = &rest[line_end..];
        let next_line = next.lines().next().unwrap_or("");
        if !next_line.is_empty() && next_line.chars().all(|c| c == '-' || c == '+') {
            let mut rows = Vec::new();
            let mut r = &next[next.find('\n').map_or(next.len(), |i| i + 1)..];
            loop {
                let end = r.find('\n').map_or(r.len(), |i| i + 1);
                let l = r[..end].trim_end_matches('\n');
                r = &r[end..];
                if l.starts_with('(') && l.ends_with(')') && (l.contains(" row")) {
                    break;
                }
                rows.push(l.split('|').map(|v| v.trim().to_string()).collect());
            }
            events.push(Event::Rows(current.clone(), rows));
            rest = r;
            continue;
        }
        // Notices, libpq's words after a FATAL, blank lines.
        rest = &rest[line_end..];
    }
    perms
}

/// The server's primary message in lab's detail ("ERROR 40001: msg | DETAIL: ...").
fn primary(detail: &str) -> String {
    let msg = detail.split(" | ").next().unwrap_or(detail);
    match msg.split_once(": ") {
        Some((head, rest)) if head.split(' ').count() == 2 => rest.to_string(),
        _ => msg.to_string(),
    }
}

/// What lab recorded of a variant's steps, as isolationtester would print it.
fn lab_events(v: &Value) -> Vec<Event> {
    let mut out = Vec::new();
    let mut waiting: Vec<String> = Vec::new();
    for e in v["timeline"].as_array().unwrap() {
        let Some(step) = e["step"].as_str() else { continue };
        let step = step.to_string();
        let rows = |e: &Value| -> Vec<Event> {
            e["results"]
                .as_array()
                .map(|sets| {
                    sets.iter()
                        .map(|set| {
                            let rows = set["rows"]
                                .as_array()
                                .unwrap()
                                .iter()
                                .map(|r| {
                                    r.as_array()
                                        .unwrap()
                                        .iter()
                                        .map(|c| c.as_str().unwrap_or("").to_string())
                                        .collect()
                                })
                                .collect();
                            Event::Rows(step.clone(), rows)
                        })
                        .collect()
                })
                .unwrap_or_default()
        };
        match e["result"].as_str().unwrap() {
            "waiting" => {
                waiting.push(step.clone());
                out.push(Event::Waiting(step));
            }
            "ok" => {
                out.push(Event::Done(step.clone()));
                out.extend(rows(e));
            }
            "completed" => {
                waiting.retain(|s| *s != step);
                out.push(Event::Completed(step.clone()));
                out.extend(rows(e));
            }
            "error" => {
                if waiting.contains(&step) {
                    waiting.retain(|s| *s != step);
                    out.push(Event::Completed(step.clone()));
                } else {
                    out.push(Event::Done(step.clone()));
                }
                out.push(Event::Error(step, primary(e["detail"].as_str().unwrap())));
            }
            _ => {}
        }
    }
    out
}

/// Runs one spec both ways and returns the differences, if any.
fn cross_check(file: &str) -> Result<usize, String> {
    let text = LabFiles::embedded().read(file).unwrap().into_owned();
    let spec = lab::specfile::parse(&text).unwrap();
    let scenario = lab::commands::scenarios::ALL
        .iter()
        .find(|s| s.spec == Some(file))
        .unwrap_or_else(|| panic!("{file} belongs to no scenario"));
    let srv = TestServer::start();
    build_bookstore(&srv, &srv.client());
    let oracle = parse_isolationtester(&spec, &run_isolationtester(&srv, &text));
    // lab, on the same server, in a schema of its own.
    let r = run(&[
        scenario.name,
        "--database-url",
        &srv.url(),
        "--schema",
        "lab_oracle",
        "--format",
        "json",
    ]);
    if r.code != 0 {
        return Err(format!("{file}: lab exited {}: {}{}", r.code, r.stderr, r.stdout));
    }
    let report: Value = serde_json::from_str(&r.stdout).unwrap();
    let mut compared = 0;
    for v in report["variants"].as_array().unwrap() {
        if v["skipped"] == true {
            continue;
        }
        let name = v["name"].as_str().unwrap();
        // The permutations labelled with the variant (or one of its parts), in file order.
        let expected: Vec<Event> = spec
            .permutations
            .iter()
            .filter(|p| {
                p.label()
                    .is_some_and(|l| l == name || l.starts_with(&format!("{name}/")))
            })
            .flat_map(|p| {
                oracle
                    .iter()
                    .find(|(steps, _)| *steps == p.describe())
                    .unwrap_or_else(|| panic!("{file}: isolationtester did not run {}", p.describe()))
                    .1
                    .clone()
            })
            .collect();
        if expected.is_empty() {
            continue; // a code-driven variant
        }
        let got = lab_events(v);
        if got != expected {
            return Err(format!(
                "{file} / {name}:\n  isolationtester: {expected:?}\n  lab:             {got:?}"
            ));
        }
        compared += 1;
    }
    Ok(compared)
}

#[test]
fn every_spec_runs_in_isolationtester_and_lab_observes_what_it_prints() {
    // The scenarios' specs (the phenomena's run in lab spec's test, byte for byte).
    let specs: Vec<&str> = LabFiles::names()
        .filter(|n| n.ends_with(".spec") && !n.starts_with("phenomena/"))
        .collect();
    assert!(specs.len() >= 10, "{specs:?}");
    // One thread (and one throwaway server) per spec: they run side by side.
    let handles: Vec<_> = specs
        .iter()
        .map(|f| {
            let f = f.to_string();
            std::thread::spawn(move || (f.clone(), cross_check(&f)))
        })
        .collect();
    let mut failures = Vec::new();
    let mut compared = 0;
    for h in handles {
        let (file, r) = h.join().expect("a cross-check thread");
        match r {
            Ok(n) => {
                assert!(n > 0, "{file}: no variant compared");
                compared += n;
            }
            Err(e) => failures.push(e),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    // lost-update 7 (field-merge's two parts in one), write-skew 3, 2 each
    // for seven more, timeouts 3 (4 from PostgreSQL 17: transaction_timeout).
    assert!(compared >= 27, "only {compared} variants compared");
}

#[test]
fn isolationtester_output_is_read_as_it_prints() {
    let spec = lab::specfile::parse(
        "session A\nstep a1 { UPDATE t SET x = 1; }\nstep a2 { COMMIT; }\n\
         session B\nstep b1 { SELECT x\n  FROM t; }\n",
    )
    .unwrap();
    let out = "Parsed test spec with 2 sessions\n\nstarting permutation: a1 b1 a2\n\
               step a1: UPDATE t SET x = 1;\nstep b1: SELECT x\n  FROM t; <waiting ...>\n\
               step a2: COMMIT;\nstep b1: <... completed>\nx|y\n-+-\n1| \n(1 row)\n\n\
               ERROR:  could not serialize access\n";
    let perms = parse_isolationtester(&spec, out);
    assert_eq!(perms.len(), 1);
    assert_eq!(
        perms[0].1,
        vec![
            Event::Done("a1".into()),
            Event::Waiting("b1".into()),
            Event::Done("a2".into()),
            Event::Completed("b1".into()),
            Event::Rows("b1".into(), vec![vec!["1".into(), "".into()]]),
            Event::Error("b1".into(), "could not serialize access".into()),
        ]
    );
    assert_eq!(
        primary("ERROR 40001: could not serialize | DETAIL: x"),
        "could not serialize"
    );
    assert_eq!(primary("FATAL 25P03: terminating connection"), "terminating connection");
}
