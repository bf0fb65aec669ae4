use crate::support::{assert_documented, metric, scenario_json, step, variant};

#[test]
fn lost_update() {
    let r = scenario_json("lost-update", &[]);
    assert_eq!(r["scenario"], "lost-update");
    assert_eq!(r["as_expected"], true, "{r:#}");
    assert!(
        r["server_version"]
            .as_str()
            .unwrap()
            .chars()
            .next()
            .unwrap()
            .is_ascii_digit()
    );

    let rc = variant(&r, "read-committed");
    assert_documented(rc);
    assert_eq!(rc["anomaly"], true);
    assert_eq!(metric(rc, "final_quantity"), 35);
    assert_eq!(rc["sqlstates"].as_array().unwrap().len(), 0);

    let rr = variant(&r, "repeatable-read");
    assert_documented(rr);
    assert_eq!(rr["anomaly"], false);
    assert_eq!(metric(rr, "final_quantity"), 35);
    assert_eq!(rr["sqlstates"], serde_json::json!(["40001"]));

    for name in ["atomic-update", "select-for-update"] {
        let v = variant(&r, name);
        assert_documented(v);
        assert_eq!(v["anomaly"], false);
        assert_eq!(metric(v, "final_quantity"), 34);
        assert_eq!(metric(v, "b_waited"), true);
        // The wait was confirmed from the server, then the step completed.
        let results: Vec<&str> = v["timeline"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["session"] == "B")
            .map(|e| e["result"].as_str().unwrap())
            .collect();
        let waiting = results.iter().position(|r| *r == "waiting").expect("B waited");
        assert_eq!(results[waiting + 1], "completed", "{results:?}");
    }

    let ov = variant(&r, "optimistic-version");
    assert_documented(ov);
    assert_eq!(metric(ov, "rows_affected_b"), 0);
    assert_eq!(metric(ov, "final_quantity"), 35);
    assert_eq!(
        ov["evidence"][0]["rows"].as_array().unwrap().len(),
        3,
        "the three value sets"
    );
}

#[test]
fn variant_selection_runs_only_those() {
    let r = scenario_json(
        "lost-update",
        &["--variant", "optimistic-version", "--variant", "read-committed"],
    );
    let names = variant_names(&r);
    assert_eq!(names, vec!["read-committed", "optimistic-version"]);
}

#[test]
fn write_skew() {
    let r = scenario_json("write-skew", &[]);
    for name in ["read-committed", "repeatable-read"] {
        let v = variant(&r, name);
        assert_documented(v);
        assert_eq!(v["anomaly"], true);
        assert_eq!(metric(v, "pending_orders"), 2);
        assert_eq!(metric(v, "attempts"), serde_json::json!({"A": 1, "B": 1}));
        assert!(v["sqlstates"].as_array().unwrap().is_empty());
    }

    let s = variant(&r, "serializable");
    assert_documented(s);
    assert_eq!(s["anomaly"], false);
    assert_eq!(metric(s, "pending_orders"), 1);
    assert_eq!(s["sqlstates"], serde_json::json!(["40001"]));
    // Where it surfaced is recorded from the server's answer.
    let failed: Vec<&serde_json::Value> = s["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["sqlstate"] == "40001")
        .collect();
    assert_eq!(failed.len(), 1);
    assert!(
        failed[0]["detail"]
            .as_str()
            .unwrap()
            .contains("read/write dependencies")
    );
    let at = failed[0]["sql"].as_str().unwrap();
    assert!(at.starts_with("INSERT") || at.starts_with("COMMIT"), "{at}");

    let retry = variant(&r, "serializable-retry");
    assert_documented(retry);
    assert_eq!(metric(retry, "pending_orders"), 1);
    assert_eq!(metric(retry, "attempts"), serde_json::json!({"A": 1, "B": 2}));
    let timeline = retry["timeline"].as_array().unwrap();
    assert!(
        timeline.iter().any(|e| {
            e["result"] == "note" && e["detail"].as_str().unwrap().contains("attempt 1 failed with 40001")
        })
    );
    // The retry re-ran the read: B's last check saw A's order.
    let b_checks: Vec<&str> = timeline
        .iter()
        .filter(|e| e["session"] == "B" && e["sql"].as_str().unwrap().starts_with("SELECT count(*)"))
        .map(|e| e["detail"].as_str().unwrap())
        .collect();
    assert_eq!(b_checks, vec!["pending=0", "pending=1"]);

    let ni = variant(&r, "serializable-no-index");
    assert_documented(ni);
    assert_eq!(
        metric(ni, "unrelated_failures"),
        serde_json::json!({"with_index": 0, "neighbours": 1, "without_index": 1})
    );
    let types = metric(ni, "siread_lock_types");
    assert_eq!(types["without_index"], serde_json::json!(["relation"]));
    assert!(
        types["with_index"]
            .as_array()
            .unwrap()
            .contains(&serde_json::json!("page"))
    );
    assert_eq!(
        ni["evidence"].as_array().unwrap().len(),
        3,
        "SIReadLock rows for each part"
    );
}

#[test]
fn retries_can_be_turned_off() {
    let run = crate::support::run(&[
        "write-skew",
        "--variant",
        "serializable-retry",
        "--retry-attempts",
        "1",
        "--format",
        "json",
    ]);
    assert_eq!(run.code, 1, "a variant not as documented exits 1: {}", run.stderr);
    let r: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let v = variant(&r, "serializable-retry");
    assert_eq!(
        v["as_expected"], false,
        "with one attempt the failed request cannot recover"
    );
    assert_eq!(metric(v, "attempts"), serde_json::json!({"A": 1, "B": 1}));
    assert_eq!(r["as_expected"], false);
}

/// Lock scenarios run with a short timeout so the suite stays quick.
const QUICK: &[&str] = &["--timeout-ms", "200"];

fn results_of<'a>(v: &'a serde_json::Value, session: &str) -> Vec<&'a str> {
    v["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["session"] == session)
        .map(|e| e["result"].as_str().unwrap())
        .collect()
}

#[test]
fn fk_blocking() {
    let r = scenario_json("fk-blocking", QUICK);
    let fu = variant(&r, "for-update");
    assert_documented(fu);
    assert_eq!(metric(fu, "b_waited"), true);
    assert!(metric(fu, "b_wait_ms").as_f64().unwrap() >= 200.0);
    assert_eq!(fu["sqlstates"], serde_json::json!(["55P03"]));
    let err = fu["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["sqlstate"] == "55P03")
        .unwrap();
    assert!(
        err["detail"].as_str().unwrap().contains("FOR KEY SHARE"),
        "{}",
        err["detail"]
    );

    let nk = variant(&r, "for-no-key-update");
    assert_documented(nk);
    assert_eq!(metric(nk, "b_waited"), false);
    assert!(!results_of(nk, "B").contains(&"waiting"));
}

#[test]
fn deadlock() {
    let r = scenario_json("deadlock", &[]);
    let rev = variant(&r, "reverse-order");
    assert_documented(rev);
    assert_eq!(rev["sqlstates"], serde_json::json!(["40P01"]));
    let victim = metric(rev, "victim");
    assert!(victim == "A" || victim == "B", "{victim}");
    let timeout = metric(rev, "deadlock_timeout_ms").as_f64().unwrap();
    assert!(metric(rev, "detect_ms").as_f64().unwrap() >= timeout - 50.0);
    // The victim's COMMIT comes back as ROLLBACK.
    let commit = if victim == "A" { "a_commit" } else { "b_commit" };
    assert_eq!(step(rev, commit)[0]["detail"], "ROLLBACK");
    // Both waited, each for the other, as the server said.
    assert_eq!(step(rev, "a_reserve_2")[0]["blocked_by"], serde_json::json!(["B"]));
    assert_eq!(step(rev, "b_reserve_1")[0]["blocked_by"], serde_json::json!(["A"]));

    let same = variant(&r, "same-order");
    assert_documented(same);
    assert!(same["sqlstates"].as_array().unwrap().is_empty());
    assert_eq!(metric(same, "victim"), serde_json::Value::Null);
    assert!(results_of(same, "B").contains(&"waiting"));
}

#[test]
fn nowait() {
    let r = scenario_json("nowait", &[]);
    let nw = variant(&r, "nowait");
    assert_documented(nw);
    assert_eq!(nw["sqlstates"], serde_json::json!(["55P03"]));
    assert_eq!(metric(nw, "b_rows"), 0);
    let sl = variant(&r, "skip-locked");
    assert_documented(sl);
    assert_eq!(metric(sl, "b_rows"), 0);
    assert!(sl["sqlstates"].as_array().unwrap().is_empty());
    for v in [nw, sl] {
        assert!(!results_of(v, "B").contains(&"waiting"));
    }
    // SKIP LOCKED's whole point: B got no row, and the timeline says so.
    let skipped = step(sl, "b_edit_skip_locked");
    assert_eq!(skipped[0]["detail"], "(0 rows)");
    assert_eq!(
        skipped[0]["results"][0]["columns"],
        serde_json::json!(["order_id", "status"])
    );
    assert_eq!(skipped[0]["results"][0]["rows"], serde_json::json!([]));
}

#[test]
fn advisory_lock() {
    let r = scenario_json("advisory-lock", &[]);
    let x = variant(&r, "try-xact-lock");
    assert_documented(x);
    assert_eq!(
        (metric(x, "ran"), metric(x, "skipped")),
        (serde_json::json!(1), serde_json::json!(2))
    );
    let p = variant(&r, "session-lock-pooled");
    assert_documented(p);
    assert_eq!(p["anomaly"], true);
    assert_eq!(
        (metric(p, "ran"), metric(p, "skipped")),
        (serde_json::json!(2), serde_json::json!(1))
    );
}

#[test]
fn ddl_lock_queue() {
    let r = scenario_json("ddl-lock-queue", QUICK);
    let q = variant(&r, "no-lock-timeout");
    assert_documented(q);
    assert_eq!(metric(q, "c_blocked_by_b"), true);
    // The seed's table: C blocked by B, B blocked by A.
    let rows = q["evidence"][0]["rows"].as_array().unwrap();
    let row = |s: &str| rows.iter().find(|r| r[0] == s).unwrap().clone();
    assert!(row("C")[2].as_str().unwrap().contains("(B)"));
    assert!(row("B")[2].as_str().unwrap().contains("(A)"));

    let t = variant(&r, "lock-timeout-retry");
    assert_documented(t);
    assert_eq!(metric(t, "b_attempts"), 2);
    assert_eq!(t["sqlstates"], serde_json::json!(["55P03"]));
}

#[test]
fn rc_recheck() {
    let r = scenario_json("rc-recheck", &[]);
    let rc = variant(&r, "read-committed");
    assert_documented(rc);
    assert_eq!(rc["anomaly"], true);
    assert_eq!(metric(rc, "deleted_rows"), 0);
    let rr = variant(&r, "repeatable-read");
    assert_documented(rr);
    assert_eq!(rr["sqlstates"], serde_json::json!(["40001"]));
}

#[test]
fn timeouts() {
    let r = scenario_json("timeouts", QUICK);
    let lt = variant(&r, "lock-timeout");
    assert_documented(lt);
    assert_eq!(lt["sqlstates"], serde_json::json!(["55P03"]));
    assert_eq!(metric(lt, "b_locks_after_rollback"), 0);
    let st = variant(&r, "statement-timeout");
    assert_documented(st);
    assert_eq!(st["sqlstates"], serde_json::json!(["57014", "25P02"]));
    let idle = variant(&r, "idle-in-transaction");
    assert_documented(idle);
    assert_eq!(metric(idle, "b_terminated"), true);
    assert!(metric(idle, "a_waited_ms").as_f64().unwrap() >= 100.0);
    let tt = variant(&r, "transaction-timeout");
    if crate::support::server_major(&r) >= 17 {
        assert_documented(tt);
        assert_eq!(metric(tt, "b_terminated"), true);
    } else {
        assert_eq!(tt["skipped"], true);
        assert!(tt["skip_reason"].as_str().unwrap().contains("17"));
        assert_eq!(tt["as_expected"], true, "a skip does not fail the run");
    }
    assert_eq!(r["as_expected"], true);
}

const SMALL_QUEUE: &[&str] = &[
    "--messages",
    "200",
    "--workers",
    "4",
    "--batch",
    "10",
    "--work-ms",
    "10",
];

#[test]
fn queue() {
    let run = crate::support::run(&[&["queue", "--format", "json"], SMALL_QUEUE].concat());
    assert_eq!(run.code, 0, "{}", run.stderr);
    // Progress bars go to stderr only when it is a terminal; here it is a pipe.
    assert!(run.stderr.is_empty(), "unexpected stderr: {}", run.stderr);
    let r: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    for name in ["for-update", "skip-locked"] {
        let v = variant(&r, name);
        assert_documented(v);
        assert_eq!(metric(v, "duplicates"), 0);
        assert_eq!(metric(v, "lost"), 0);
        assert_eq!(metric(v, "total"), 200);
        let per: Vec<u64> = metric(v, "per_worker")
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap())
            .collect();
        assert_eq!(per.len(), 4);
        assert_eq!(per.iter().sum::<u64>(), 200);
        assert_eq!(metric(v, "ideal_ms"), 50.0, "ceil(200/10) x 10 ms / 4");
        for key in ["elapsed_ms", "efficiency", "msgs_per_s"] {
            assert!(metric(v, key).as_f64().unwrap() > 0.0, "{key}");
        }
    }
    assert_eq!(metric(variant(&r, "for-update"), "max_parallel_batches"), 1);
    let skip = variant(&r, "skip-locked");
    assert!(metric(skip, "max_parallel_batches").as_u64().unwrap() > 1);
    assert!(
        metric(skip, "per_worker")
            .as_array()
            .unwrap()
            .iter()
            .all(|n| n.as_u64().unwrap() > 0)
    );
}

#[test]
fn queue_survives_a_killed_worker() {
    let r = scenario_json("queue", &[SMALL_QUEUE, &["--kill-worker-after", "2"]].concat());
    for name in ["for-update", "skip-locked"] {
        let v = variant(&r, name);
        assert_documented(v);
        let killed = metric(v, "killed_worker");
        let idx: usize = killed.as_str().unwrap()[1..].parse::<usize>().unwrap() - 1;
        assert_eq!(metric(v, "lost"), 0);
        assert_eq!(metric(v, "duplicates"), 0);
        assert_eq!(metric(v, "total"), 200, "the others finished the killed worker's batch");
        assert_eq!(
            metric(v, "per_worker")[idx],
            20,
            "{killed} committed 2 batches before it was killed"
        );
        let table = &v["evidence"][0]["rows"];
        assert!(
            table[idx][6].as_str().unwrap().contains("terminated mid-batch"),
            "{table}"
        );
    }
}

#[test]
fn lost_update_token_merge_and_audit() {
    let r = scenario_json(
        "lost-update",
        &[
            "--variant",
            "read-committed",
            "--variant",
            "updated-at-token",
            "--variant",
            "field-merge",
        ],
    );
    let rc = variant(&r, "read-committed");
    assert_eq!(metric(rc, "audit_writes"), 2);
    let audit = rc["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["title"].as_str().unwrap().contains("audit"))
        .unwrap();
    let rows: Vec<Vec<&str>> = audit["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect())
        .collect();
    assert_eq!(rows[0][..4], ["A", "quantity_on_hand", "36", "35"]);
    assert_eq!(rows[1][..4], ["B", "quantity_on_hand", "35", "35"]);

    let token = variant(&r, "updated-at-token");
    assert_documented(token);
    assert_eq!(token["anomaly"], true);
    assert_eq!(metric(token, "equal_stamps"), true);
    assert_eq!(metric(token, "rows_affected_b"), 1);
    let stamps = &token["evidence"][0]["rows"];
    assert_eq!(stamps[0][1], stamps[1][1], "the two stamps shown are equal");

    let merge = variant(&r, "field-merge");
    assert_documented(merge);
    assert_eq!(metric(merge, "row_version_conflict"), true);
    assert_eq!(metric(merge, "both_changes_landed"), true);
}

#[test]
fn stock_race() {
    let r = scenario_json("stock-race", &[]);
    let rmw = variant(&r, "read-modify-write");
    assert_documented(rmw);
    assert_eq!(rmw["anomaly"], true);
    assert_eq!(metric(rmw, "requests"), 100);
    assert_eq!(metric(rmw, "sold"), 100);
    assert_eq!(metric(rmw, "final_stock"), 99);
    assert_eq!(metric(rmw, "lost_decrements"), 99);

    let guard = variant(&r, "atomic-guard");
    assert_documented(guard);
    assert_eq!(
        (metric(guard, "sold"), metric(guard, "rejected")),
        (serde_json::json!(100), serde_json::json!(0))
    );
    assert_eq!(metric(guard, "final_stock"), 0);
    assert_eq!(metric(guard, "lost_decrements"), 0);

    let over = variant(&r, "oversell");
    assert_documented(over);
    assert_eq!(metric(over, "sold"), 100, "read-modify-write sold every request");
    assert_eq!(metric(over, "oversold"), 10);
    let g = metric(over, "atomic_guard");
    assert_eq!(
        (g["sold"].as_u64(), g["rejected"].as_u64(), g["final_stock"].as_i64()),
        (Some(90), Some(10), Some(0))
    );
}

#[test]
fn stock_race_with_more_stock_than_requests() {
    let run = crate::support::run(&[
        "stock-race",
        "--variant",
        "atomic-guard",
        "--stock",
        "50",
        "--requests",
        "20",
        "--format",
        "json",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let r: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let v = variant(&r, "atomic-guard");
    assert_eq!(
        (metric(v, "sold"), metric(v, "final_stock")),
        (serde_json::json!(20), serde_json::json!(30))
    );
}

#[test]
fn stale_event() {
    let r = scenario_json("stale-event", &[]);
    let blind = variant(&r, "no-version-check");
    assert_documented(blind);
    assert_eq!(blind["anomaly"], true);
    assert_eq!(metric(blind, "final_version"), 1);
    let checked = variant(&r, "version-check");
    assert_documented(checked);
    assert_eq!(metric(checked, "final_version"), 2);
    assert_eq!(metric(checked, "dropped_stale"), 1);
}

#[test]
fn invoice_numbering() {
    let r = scenario_json(
        "invoice-numbering",
        &[
            "--invoices",
            "12",
            "--workers",
            "3",
            "--latency-ms",
            "10",
            "--transient-rate",
            "0.15",
        ],
    );
    let m = |v: &str, k: &str| metric(variant(&r, v), k);
    for v in r["variants"].as_array().unwrap() {
        assert_documented(v);
    }
    // Cancelled while queued: invoice 3; rejected for good: invoice 7.
    assert!(m("max-plus-one", "duplicates").as_u64().unwrap() > 0);
    assert_eq!(variant(&r, "max-plus-one")["anomaly"], true);
    let holes: Vec<u64> = m("enqueue-time", "gap_numbers")
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_u64().unwrap())
        .collect();
    assert_eq!(holes, vec![3, 7], "the cancelled and the rejected invoices' numbers");
    assert!(m("sequence", "gaps").as_u64().unwrap() > 0);
    for v in ["lock-over-call", "jit-reservation", "orphan-recovery"] {
        assert_eq!(m(v, "duplicates"), 0, "{v}");
        assert_eq!(m(v, "gaps"), 0, "{v}");
    }
    assert_eq!(m("lock-over-call", "max_parallel_sends"), 1);
    assert!(m("jit-reservation", "max_parallel_sends").as_u64().unwrap() > 1);
    // Every invoice but the cancelled one is issued: the rejected one was corrected and kept its number.
    assert_eq!(m("jit-reservation", "issued"), 11);
    // The crash after the integrator accepted (invoice 5) and the one before the call (9).
    assert_eq!(m("orphan-recovery", "orphans_repaired"), 1);
    assert_eq!(m("orphan-recovery", "orphans_resent"), 1);
    assert_eq!(m("orphan-recovery", "orphans_recovered"), 2);
    assert!(m("orphan-recovery", "breaker_opened").as_u64().unwrap() > 0);
    // 24 scheduler invoices, 3 workers: with priority none is taken ahead of
    // the interactive one; in FIFO all but the two taken beside it at most.
    assert_eq!(m("priority", "taken_ahead_priority"), 0);
    let fifo = m("priority", "taken_ahead_fifo").as_u64().unwrap();
    assert!((22..=24).contains(&fifo), "{fifo}");
}

#[test]
fn http_etag() {
    let r = scenario_json("http-etag", &[]);
    let statuses = |v: &serde_json::Value, client: &str| metric(v, &format!("{client}_statuses"));
    let blind = variant(&r, "no-precondition");
    assert_documented(blind);
    assert_eq!(blind["anomaly"], true);
    assert_eq!(statuses(blind, "a"), serde_json::json!([200, 200]));
    assert_eq!(statuses(blind, "b"), serde_json::json!([200, 200]));
    // B's PUT put the stock back: A's sale of one of 36 copies is gone.
    assert_eq!(
        (metric(blind, "final_stock"), metric(blind, "final_price")),
        (36.into(), "45.00".into())
    );
    let guarded = variant(&r, "if-match");
    assert_documented(guarded);
    assert_eq!(guarded["anomaly"], false);
    assert_eq!(statuses(guarded, "b"), serde_json::json!([200, 412, 200, 200]));
    assert_eq!(
        (metric(guarded, "final_stock"), metric(guarded, "final_version")),
        (35.into(), 3.into())
    );
    // The timeline shows each request with the SQL the API ran for it, in that order.
    let timeline = guarded["timeline"].as_array().unwrap();
    let stale = timeline
        .iter()
        .position(|e| e["session"] == "B" && e["detail"].as_str().unwrap().starts_with("412"))
        .expect("B's 412 is in the timeline");
    assert!(timeline[stale]["sql"].as_str().unwrap().contains("If-Match: \"v1\""));
    assert_eq!(timeline[stale + 1]["session"], "api");
    assert_eq!(timeline[stale + 1]["step"], "put_if_match");
    assert_eq!(timeline[stale + 1]["detail"], "(0 rows)");
    let required = variant(&r, "if-match-required");
    assert_documented(required);
    assert_eq!(statuses(required, "a"), serde_json::json!([200, 428, 200]));
    let warn = variant(&r, "warn-mode");
    assert_documented(warn);
    assert_eq!(metric(warn, "warned_writes"), 1);
    assert_eq!(warn["anomaly"], true);
    let weak = variant(&r, "weak-etag");
    assert_documented(weak);
    assert_eq!(statuses(weak, "a"), serde_json::json!([200, 412, 200, 412]));
    assert_eq!(
        metric(weak, "a_etags_seen"),
        serde_json::json!(["W/\"v1\"", "W/\"v1\""])
    );
    let create = variant(&r, "if-none-match-create");
    assert_documented(create);
    let mut both = [
        statuses(create, "a")[0].as_u64().unwrap(),
        statuses(create, "b")[0].as_u64().unwrap(),
    ];
    both.sort_unstable();
    assert_eq!(both, [201, 412]);
}

#[test]
fn pooler() {
    let r = scenario_json("pooler", &[]);
    for v in r["variants"].as_array().unwrap() {
        assert_documented(v);
        assert_eq!(v["skipped"], false, "pgbouncer is installed here: {}", v["skip_reason"]);
    }
    // A's session state reached B, on one backend; SET LOCAL did not.
    let leak = variant(&r, "set-leak");
    assert_eq!(metric(leak, "a_backend"), metric(leak, "b_backend"));
    assert_eq!(metric(leak, "b_statement_timeout"), "1234ms");
    assert_eq!(variant(&r, "set-local")["anomaly"], false);
    assert_eq!(variant(&r, "session-advisory-lock")["anomaly"], true);
    let xact = variant(&r, "xact-advisory-lock");
    assert_ne!(metric(xact, "a_backend"), metric(xact, "b_backend"));
    assert_eq!(
        variant(&r, "prepared-statement")["sqlstates"],
        serde_json::json!(["42P05"])
    );
    assert_eq!(metric(variant(&r, "listen-lost"), "l_notifications"), 0);
    assert_eq!(metric(variant(&r, "listen-direct"), "l_notifications"), 1);
    // The wait is the pooler's: a client queued in SHOW POOLS, none on the server.
    let full = variant(&r, "pool-exhaustion");
    assert_eq!(
        (metric(full, "cl_waiting"), metric(full, "server_lock_waits")),
        (1.into(), 0.into())
    );
    let waiting: Vec<_> = full["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["result"] == "waiting")
        .collect();
    assert_eq!(waiting.len(), 1);
    assert_eq!(
        (&waiting[0]["session"], &waiting[0]["wait"]),
        (&"C".into(), &"pooler".into())
    );
}

fn variant_names(report: &serde_json::Value) -> Vec<&str> {
    report["variants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["name"].as_str().unwrap())
        .collect()
}

#[test]
fn replica() {
    let r = scenario_json("replica", &["--via", "standby"]);
    let names = variant_names(&r);
    assert!(
        names.len() == 8 && names.iter().all(|n| !n.starts_with("pgpool-")),
        "{names:?}"
    );
    for v in r["variants"].as_array().unwrap() {
        assert_documented(v);
        assert_eq!(v["skipped"], false, "{}", v["skip_reason"]);
    }
    // The bytes tell the lag that replay_lag does not.
    let stale = variant(&r, "stale-read");
    assert!(metric(stale, "lag_bytes").as_i64().unwrap() > 0);
    // COMMIT waited for the standby: SyncRep, seen from pg_stat_activity.
    let sync = variant(&r, "remote-apply");
    let waits: Vec<_> = sync["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["result"] == "waiting")
        .collect();
    assert_eq!((waits.len(), &waits[0]["wait"]), (1, &"sync-rep".into()));
    // Long Fork: T1 waited in SyncRep, and the two readers read opposite orders.
    let fork = variant(&r, "long-fork");
    assert_eq!(fork["anomaly"], true, "{fork}");
    let waited: Vec<_> = (fork["timeline"].as_array().unwrap().iter())
        .filter(|e| e["result"] == "waiting")
        .map(|e| (e["session"].as_str().unwrap(), e["wait"].as_str().unwrap()))
        .collect();
    assert_eq!(waited, [("T1", "sync-rep")]);
    let read = |s: &str| -> Vec<String> {
        (fork["timeline"].as_array().unwrap().iter())
            .filter(|e| e["session"] == s && e["step"] == "read_both" && e["result"] == "ok")
            .map(|e| e["detail"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(read("RP")[0].contains("1=42.00 2=39.00"), "{:?}", read("RP"));
    assert!(read("RS")[0].contains("1=45.00 2=35.00"), "{:?}", read("RS"));
    // The standby cancelled the reports with the server's own words.
    for name in ["lock-conflict", "snapshot-conflict"] {
        assert_eq!(variant(&r, name)["sqlstates"], serde_json::json!(["40001"]), "{name}");
    }
    let feedback = variant(&r, "hot-standby-feedback");
    assert!(metric(feedback, "dead_not_removable").as_i64().unwrap() > 0);
    assert!(feedback["sqlstates"].as_array().unwrap().is_empty());
}

/// Through lab's own pgpool-II: which server answered each read is the
/// server's own word (pg_is_in_recovery()), and the sessions reach the
/// servers through pgpool only.
#[test]
fn replica_via_pgpool() {
    let r = scenario_json("replica", &["--via", "pgpool"]);
    let names = variant_names(&r);
    assert_eq!(
        names,
        [
            "pgpool-stale-read",
            "pgpool-write-sticky",
            "pgpool-lsn-token",
            "pgpool-txn-split"
        ]
    );
    for v in r["variants"].as_array().unwrap() {
        assert_documented(v);
        assert_eq!(v["skipped"], false, "{}", v["skip_reason"]);
        assert!(metric(v, "pgpool").as_str().unwrap().starts_with("pgpool-II"));
    }
    let answered = |v: &serde_json::Value| -> Vec<String> {
        v["timeline"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|e| {
                let d = e["detail"].as_str()?;
                d.contains("on_standby=").then(|| d.to_string())
            })
            .collect()
    };
    let stale = variant(&r, "pgpool-stale-read");
    assert_eq!(metric(stale, "read_after_write_by"), "standby");
    assert_eq!(stale["anomaly"], true);
    let reads = answered(stale);
    assert!(
        reads.len() == 3 && reads.iter().all(|d| d.contains("on_standby=t")),
        "{reads:?}"
    );
    let sticky = variant(&r, "pgpool-write-sticky");
    assert_eq!(
        (
            metric(sticky, "read_after_write_by"),
            metric(sticky, "read_after_catch_up_by")
        ),
        ("primary".into(), "primary".into())
    );
    // The read before the write was balanced to the standby: 'always' is what moved the others.
    assert!(answered(sticky)[0].contains("on_standby=t"), "{:?}", answered(sticky));
    let token = variant(&r, "pgpool-lsn-token");
    assert_eq!(token["anomaly"], false);
    let split = variant(&r, "pgpool-txn-split");
    assert_eq!(
        (metric(split, "read_by"), metric(split, "isolation")),
        ("standby".into(), "repeatable read".into())
    );
    assert!(
        split["sqlstates"].as_array().unwrap().is_empty(),
        "no 40001: {}",
        split["sqlstates"]
    );
    for v in r["variants"].as_array().unwrap() {
        for e in v["timeline"].as_array().unwrap() {
            let s = e["session"].as_str().unwrap_or("");
            assert!(
                ["C", "W", "standby", "lab", ""].contains(&s),
                "{}: session {s}",
                v["name"]
            );
        }
    }
}
