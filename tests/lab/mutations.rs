//! Mutation tests: each breaks one mechanism in an edited copy of a lab file
//! (run with --lab-dir), as a teacher could, and lab must say "not as
//! documented" (exit 1) with its timeline, within the run's deadline; never
//! hang, never exit 2.
use std::time::Duration;

use serde_json::Value;

use crate::support::{failed_checks, run, variant};

/// The run's deadline in these tests (--wait-timeout), and a bound far above
/// anything a run should take: reaching it means something hung.
const WAIT: &str = "5";
const HANG: Duration = Duration::from_secs(40);

struct Mutation {
    scenario: &'static str,
    variant: &'static str,
    file: &'static str,
    from: &'static str,
    to: &'static str,
    args: &'static [&'static str],
}

/// Applies the edit in a directory of its own and runs the variant.
fn edited(m: &Mutation) -> crate::support::Run {
    // One directory per mutation run (the same variant may be mutated two ways at once).
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!(
        "lab-mutation-{}-{n}-{}-{}",
        std::process::id(),
        m.scenario,
        m.variant,
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let original = lab::files::LabFiles::embedded().read(m.file).unwrap().into_owned();
    assert!(original.contains(m.from), "{}: no {:?} to change", m.file, m.from);
    std::fs::write(dir.join(m.file), original.replace(m.from, m.to)).unwrap();
    let mut args = vec![
        m.scenario,
        "--variant",
        m.variant,
        "--lab-dir",
        dir.to_str().unwrap(),
        "--format",
        "json",
        "--wait-timeout",
        WAIT,
        "--timeout-ms",
        "200",
    ];
    args.extend_from_slice(m.args);
    let r = run(&args);
    std::fs::remove_dir_all(&dir).unwrap();
    r
}

/// Applies the mutation in a directory of its own and runs the variant.
fn mutated(m: &Mutation) -> (Value, Duration, Vec<String>) {
    let r = edited(m);
    assert_eq!(
        r.code, 1,
        "{}/{}: a broken mechanism must give a verdict (exit 1): {}{}",
        m.scenario, m.variant, r.stderr, r.stdout
    );
    assert!(r.took < HANG, "{}/{} took {:?}", m.scenario, m.variant, r.took);
    let report: Value = serde_json::from_str(&r.stdout).unwrap();
    let v = variant(&report, m.variant).clone();
    assert_eq!(v["as_expected"], false, "{}", v["observed"]);
    assert!(!v["timeline"].as_array().unwrap().is_empty(), "the timeline is kept");
    let failed = failed_checks(&v);
    assert!(!failed.is_empty());
    eprintln!(
        "{}/{}: exit 1 after {:?}; failed: {failed:?}",
        m.scenario, m.variant, r.took
    );
    (v, r.took, failed)
}

/// True if a failed check's id starts with `prefix`.
fn failed_with(failed: &[String], prefix: &str) -> bool {
    failed.iter().any(|f| f.starts_with(prefix))
}

#[test]
fn select_for_update_without_for_update() {
    let (_, _, failed) = mutated(&Mutation {
        scenario: "lost-update",
        variant: "select-for-update",
        file: "lost-update.spec",
        from: "FROM stock_items WHERE book_id = 1 FOR UPDATE;",
        to: "FROM stock_items WHERE book_id = 1;",
        args: &[],
    });
    assert!(failed_with(&failed, "cx.waits"), "{failed:?}");
}

#[test]
fn read_modify_write_turned_atomic_loses_nothing_and_says_so() {
    let (v, _, failed) = mutated(&Mutation {
        scenario: "lost-update",
        variant: "read-committed",
        file: "lost-update.spec",
        from: "step b_write           { UPDATE stock_items SET quantity_on_hand = 35 WHERE book_id = 1; }",
        to: "step b_write           { UPDATE stock_items SET quantity_on_hand = quantity_on_hand - 1 WHERE book_id = 1; }",
        args: &[],
    });
    assert!(failed_with(&failed, "lu.final_one_lost"), "{failed:?}");
    assert_eq!(v["anomaly"], false);
    // What lab says comes from what the audit trail holds, not from the script.
    let notes = v["notes"].to_string();
    assert!(
        notes.contains("35 → 34 by B") && notes.contains("no decrement is lost"),
        "{notes}"
    );
}

#[test]
fn repeatable_read_run_under_read_committed() {
    let (_, _, failed) = mutated(&Mutation {
        scenario: "lost-update",
        variant: "repeatable-read",
        file: "lost-update.spec",
        from: "BEGIN ISOLATION LEVEL REPEATABLE READ;",
        to: "BEGIN ISOLATION LEVEL READ COMMITTED;",
        args: &[],
    });
    assert!(failed_with(&failed, "cx.ran_under"), "{failed:?}");
    assert!(failed_with(&failed, "lu.b_update_40001"), "{failed:?}");
}

#[test]
fn optimistic_write_without_its_version_check() {
    mutated(&Mutation {
        scenario: "lost-update",
        variant: "optimistic-version",
        file: "lost-update.spec",
        from: " AND version = 1;",
        to: ";",
        args: &[],
    });
}

/// NOWAIT taken out: B waits for A (the timeline names A), every session is
/// stuck, and lab cancels B's statement.
fn nowait_without_nowait(args: &'static [&'static str]) -> Value {
    let (v, _, failed) = mutated(&Mutation {
        scenario: "nowait",
        variant: "nowait",
        file: "nowait.spec",
        from: "FOR UPDATE NOWAIT;",
        to: "FOR UPDATE;",
        args,
    });
    assert!(failed_with(&failed, "cx.no_other_waits"), "{failed:?}");
    assert!(failed_with(&failed, "cx.had_to_cancel"), "{failed:?}");
    // The wait is in the timeline, and so is lab's cancel.
    let timeline = v["timeline"].as_array().unwrap();
    assert!(
        timeline
            .iter()
            .any(|e| e["result"] == "waiting" && e["blocked_by"] == serde_json::json!(["A"]))
    );
    assert!(timeline.iter().any(|e| e["cancelled_by_lab"] == true));
    v
}

#[test]
fn nowait_without_nowait_waits_and_is_cancelled() {
    nowait_without_nowait(&[]);
}

/// Behind lab's transaction pooler the sessions' backends change between
/// transactions: the wait is still seen (found by application_name), named,
/// and the waiting statement cancelled on the backend it runs on.
#[test]
fn nowait_without_nowait_behind_the_pooler_waits_and_is_cancelled() {
    let v = nowait_without_nowait(&["--pooler"]);
    assert!(
        v["metrics"]["pooler_transactions"].as_i64().unwrap() > 0,
        "{}",
        v["metrics"]
    );
}

#[test]
fn select_for_update_without_for_update_behind_the_pooler() {
    let (v, _, failed) = mutated(&Mutation {
        scenario: "lost-update",
        variant: "select-for-update",
        file: "lost-update.spec",
        from: "FROM stock_items WHERE book_id = 1 FOR UPDATE;",
        to: "FROM stock_items WHERE book_id = 1;",
        args: &["--pooler"],
    });
    assert!(failed_with(&failed, "cx.waits"), "{failed:?}");
    assert!(
        v["pooler_differs"].is_null(),
        "a broken mechanism is not the pooler's doing"
    );
}

#[test]
fn skip_locked_without_skip_locked() {
    mutated(&Mutation {
        scenario: "nowait",
        variant: "skip-locked",
        file: "nowait.spec",
        from: "FOR UPDATE SKIP LOCKED;",
        to: "FOR UPDATE;",
        args: &[],
    });
}

#[test]
fn no_key_update_turned_into_for_update() {
    let (_, _, failed) = mutated(&Mutation {
        scenario: "fk-blocking",
        variant: "for-no-key-update",
        file: "fk-blocking.spec",
        from: "FOR NO KEY UPDATE;",
        to: "FOR UPDATE;",
        args: &[],
    });
    assert!(failed_with(&failed, "cx.no_other_waits"), "{failed:?}");
}

#[test]
fn same_order_locked_in_reverse_deadlocks() {
    let (v, _, _) = mutated(&Mutation {
        scenario: "deadlock",
        variant: "same-order",
        file: "deadlock.spec",
        from: "permutation a_begin b_begin a_reserve_1 b_reserve_1 a_reserve_2 a_commit b_reserve_2 b_commit reserved",
        to: "permutation a_begin b_begin a_reserve_1 b_reserve_2 a_reserve_2 b_reserve_1 a_commit b_commit reserved",
        args: &[],
    });
    assert_eq!(
        v["sqlstates"],
        serde_json::json!(["40P01"]),
        "the server broke the deadlock"
    );
}

#[test]
fn rc_recheck_repeatable_read_run_under_read_committed() {
    mutated(&Mutation {
        scenario: "rc-recheck",
        variant: "repeatable-read",
        file: "rc-recheck.spec",
        from: "step b_begin_rr { BEGIN ISOLATION LEVEL REPEATABLE READ; }",
        to: "step b_begin_rr { BEGIN ISOLATION LEVEL READ COMMITTED; }",
        args: &[],
    });
}

#[test]
fn migration_without_lock_timeout_holds_the_queue() {
    let (_, _, failed) = mutated(&Mutation {
        scenario: "ddl-lock-queue",
        variant: "lock-timeout-retry",
        file: "ddl-lock-queue.spec",
        from: "SET lock_timeout = /*:timeout*/'1s';",
        to: "SET lock_timeout = 0;",
        args: &[],
    });
    assert!(failed_with(&failed, "cx.had_to_cancel"), "{failed:?}");
}

/// A lock_timeout ten times the one documented: lab cancels the wait at
/// its bound (three times the timeout) and the server answers that cancel
/// (57014), not a lock timeout of its own.
#[test]
fn lock_timeout_far_longer_than_documented() {
    let (v, _, failed) = mutated(&Mutation {
        scenario: "fk-blocking",
        variant: "for-update",
        file: "fk-blocking.spec",
        from: "SET lock_timeout = /*:timeout*/'1s';",
        to: "SET lock_timeout = '2s';",
        args: &[],
    });
    assert!(failed_with(&failed, "cx.had_to_cancel"), "{failed:?}");
    assert!(failed_with(&failed, "fk.b_55p03"), "{failed:?}");
    assert_eq!(v["sqlstates"], serde_json::json!(["57014"]), "{}", v["observed"]);
}

#[test]
fn lock_timeout_switched_off() {
    mutated(&Mutation {
        scenario: "timeouts",
        variant: "lock-timeout",
        file: "timeouts.spec",
        from: "SET lock_timeout = /*:timeout*/'1s';",
        to: "SET lock_timeout = 0;",
        args: &[],
    });
}

#[test]
fn idle_timeout_switched_off() {
    let (_, _, failed) = mutated(&Mutation {
        scenario: "timeouts",
        variant: "idle-in-transaction",
        file: "timeouts.spec",
        from: "SET idle_in_transaction_session_timeout = /*:timeout*/'1s';",
        to: "SET idle_in_transaction_session_timeout = 0;",
        args: &[],
    });
    assert!(failed_with(&failed, "to.conn_gone"), "{failed:?}");
}

/// The server ends the idle session ten times sooner than the run's
/// timeout: the lock did not last, however late lab sent A's statement.
#[test]
fn idle_timeout_far_shorter_than_documented() {
    let (_, _, failed) = mutated(&Mutation {
        scenario: "timeouts",
        variant: "idle-in-transaction",
        file: "timeouts.spec",
        from: "SET idle_in_transaction_session_timeout = /*:timeout*/'1s';",
        to: "SET idle_in_transaction_session_timeout = '20ms';",
        args: &[],
    });
    assert!(failed_with(&failed, "to.lasted"), "{failed:?}");
}

/// The idle session locks another row: A goes through at once. Neither
/// pg_blocking_pids nor the server's clock (A's UPDATE ran across the moment
/// the timeout could fire) may call that a wait.
#[test]
fn idle_victim_locks_another_row() {
    let (v, _, failed) = mutated(&Mutation {
        scenario: "timeouts",
        variant: "idle-in-transaction",
        file: "timeouts.spec",
        from: "step bi_lock { UPDATE stock_items SET quantity_reserved = quantity_reserved + 1 WHERE book_id = 1; }",
        to: "step bi_lock { UPDATE stock_items SET quantity_reserved = quantity_reserved + 1 WHERE book_id = 2; }",
        args: &[],
    });
    assert!(failed_with(&failed, "to.a_waited"), "{failed:?}");
    // The server's clock, read after A answered, says why.
    let notes = v["notes"].to_string();
    assert!(notes.contains("neither began late nor outlasted"), "{notes}");
}

#[test]
fn stale_event_without_its_version_guard() {
    mutated(&Mutation {
        scenario: "stale-event",
        variant: "version-check",
        file: "stale-event.spec",
        from: " AND source_version < 1;",
        to: ";",
        args: &[],
    });
}

#[test]
fn advisory_lock_that_outlives_its_transaction() {
    mutated(&Mutation {
        scenario: "advisory-lock",
        variant: "try-xact-lock",
        file: "advisory-lock.spec",
        from: "step i1_try { SELECT pg_try_advisory_xact_lock(",
        to: "step i1_try { SELECT pg_try_advisory_lock(",
        args: &[],
    });
}

#[test]
fn write_skew_serializable_run_under_repeatable_read() {
    let (v, _, failed) = mutated(&Mutation {
        scenario: "write-skew",
        variant: "serializable",
        file: "write-skew.spec",
        from: "BEGIN ISOLATION LEVEL SERIALIZABLE;",
        to: "BEGIN ISOLATION LEVEL REPEATABLE READ;",
        args: &[],
    });
    assert!(failed_with(&failed, "cx.ran_under"), "{failed:?}");
    assert_eq!(v["anomaly"], true, "two pending orders");
}

#[test]
fn write_skew_retry_reads_the_same_spec() {
    // The retry variant runs the spec's statements from code: editing the
    // spec changes it too.
    let (_, _, failed) = mutated(&Mutation {
        scenario: "write-skew",
        variant: "serializable-retry",
        file: "write-skew.spec",
        from: "BEGIN ISOLATION LEVEL SERIALIZABLE;",
        to: "BEGIN ISOLATION LEVEL READ COMMITTED;",
        args: &[],
    });
    assert!(failed_with(&failed, "cx.ran_under"), "{failed:?}");
}

#[test]
fn queue_without_skip_locked() {
    let (_, _, failed) = mutated(&Mutation {
        scenario: "queue",
        variant: "skip-locked",
        file: "queue.sql",
        from: "LIMIT :batch\n FOR UPDATE SKIP LOCKED;",
        to: "LIMIT :batch\n FOR UPDATE;",
        args: &["--messages", "200", "--work-ms", "10"],
    });
    assert!(failed_with(&failed, "qu.parallel"), "{failed:?}");
}

#[test]
fn stock_race_without_its_stock_guard() {
    mutated(&Mutation {
        scenario: "stock-race",
        variant: "atomic-guard",
        file: "stock-race.sql",
        from: "WHERE book_id = 1 AND quantity_on_hand >= 1;",
        to: "WHERE book_id = 1;",
        args: &["--stock", "5", "--requests", "10"],
    });
}

#[test]
fn an_unchanged_copy_of_the_lab_files_passes() {
    // The control: the same runs from untouched copies of every file are as documented.
    let dir = std::env::temp_dir().join(format!("lab-unchanged-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for name in lab::files::LabFiles::names() {
        let text = lab::files::LabFiles::embedded().read(name).unwrap();
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text.as_bytes()).unwrap();
    }
    let r = run(&[
        "nowait",
        "--lab-dir",
        dir.to_str().unwrap(),
        "--format",
        "json",
        "--wait-timeout",
        WAIT,
    ]);
    assert_eq!(r.code, 0, "{}{}", r.stderr, r.stdout);
    // A spec that does not parse is a usage error, said in one line with where.
    std::fs::write(dir.join("nowait.spec"), "session A\nstep a { SELECT 1;\n").unwrap();
    let r = run(&["nowait", "--lab-dir", dir.to_str().unwrap()]);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.starts_with("error: nowait.spec:2: unterminated sql block"),
        "{}",
        r.stderr
    );
}

#[test]
fn if_match_without_its_version_guard_lets_the_stale_put_win() {
    let (v, _, failed) = mutated(&Mutation {
        scenario: "http-etag",
        variant: "if-match",
        file: "http-etag.sql",
        from: " WHERE book_id = :id AND version IN (:versions)",
        to: " WHERE book_id = :id AND :versions = :versions",
        args: &[],
    });
    // B's stale PUT is answered 200: its price change overwrote A's sale.
    assert!(failed_with(&failed, "he.answered"), "{failed:?}");
    assert_eq!(v["anomaly"], true);
}

#[test]
fn create_that_overwrites_gives_two_201s() {
    let (_, _, failed) = mutated(&Mutation {
        scenario: "http-etag",
        variant: "if-none-match-create",
        file: "http-etag.sql",
        from: "ON CONFLICT (book_id) DO NOTHING",
        to: "ON CONFLICT (book_id) DO UPDATE SET title = EXCLUDED.title",
        args: &[],
    });
    assert!(failed_with(&failed, "he.one_created"), "{failed:?}");
}

#[test]
fn set_leak_made_local_leaks_nothing_and_says_so() {
    let (v, _, failed) = mutated(&Mutation {
        scenario: "pooler",
        variant: "set-leak",
        file: "pooler.sql",
        from: "SET search_path = a_private, public; SET statement_timeout = '1234ms';",
        to: "BEGIN; SET LOCAL search_path = a_private, public; SET LOCAL statement_timeout = '1234ms'; COMMIT;",
        args: &[],
    });
    assert!(failed_with(&failed, "po.b_sees_a"), "{failed:?}");
    assert_eq!(v["anomaly"], false);
}

#[test]
fn pool_exhaustion_without_open_transactions_has_no_wait() {
    let (_, _, failed) = mutated(&Mutation {
        scenario: "pooler",
        variant: "pool-exhaustion",
        file: "pooler.sql",
        from: "-- name: begin\n-- why: a transaction: the pooler keeps this client on one server connection until it ends (held open on purpose: no idle timeout of the role's ends it)\n-- why-tr: bir işlem: pooler bu istemciyi işlem bitene kadar tek bir sunucu bağlantısında tutar (bilerek açık tutulur: rolün boşta zaman aşımı onu bitirmez)\nBEGIN;\nSET LOCAL idle_in_transaction_session_timeout = 0;",
        to: "-- name: begin\nSELECT 1;",
        args: &[],
    });
    assert!(failed_with(&failed, "po.c_queued"), "{failed:?}");
}

#[test]
fn replay_that_never_pauses_is_a_verdict_not_a_hang() {
    let (_, _, failed) = mutated(&Mutation {
        scenario: "replica",
        variant: "stale-read",
        file: "replica.sql",
        from: "SELECT pg_wal_replay_pause();",
        to: "SELECT 1;",
        args: &[],
    });
    assert!(failed.iter().any(|f| f.contains("did not pause")), "{failed:?}");
}

/// pgpool-II with load balancing off sends every read to the primary: the
/// stale read through it disappears, and so does the evidence that reads
/// were balanced at all.
#[test]
fn pgpool_without_load_balancing_has_no_stale_read() {
    let (v, _, failed) = mutated(&Mutation {
        scenario: "replica",
        variant: "pgpool-stale-read",
        file: "pgpool.conf",
        from: "load_balance_mode = on",
        to: "load_balance_mode = off",
        args: &[],
    });
    assert!(failed_with(&failed, "rp.balanced"), "{failed:?}");
    assert!(failed_with(&failed, "rp.pgpool_stale"), "{failed:?}");
    assert_eq!(v["anomaly"], false);
    assert_eq!(v["metrics"]["read_after_write_by"], "primary");
}

/// Reads weighted to the primary instead: the transaction's read is fresh,
/// its write is based on W's 45.00, nothing is lost.
#[test]
fn pgpool_weighted_to_the_primary_loses_no_update() {
    let (v, _, failed) = mutated(&Mutation {
        scenario: "replica",
        variant: "pgpool-txn-split",
        file: "pgpool.conf",
        from: "backend_weight0 = 0\nbackend_weight1 = 1",
        to: "backend_weight0 = 1\nbackend_weight1 = 0",
        args: &[],
    });
    assert!(failed_with(&failed, "rp.txn_lost"), "{failed:?}");
    assert_eq!(v["anomaly"], false);
    assert_eq!(v["metrics"]["read_by"], "primary");
}

#[test]
fn a_report_that_holds_no_lock_is_not_cancelled() {
    let (_, _, failed) = mutated(&Mutation {
        scenario: "replica",
        variant: "lock-conflict",
        file: "replica.sql",
        from: "ALTER TABLE books ADD COLUMN subtitle text;",
        to: "ALTER TABLE customers ADD COLUMN subtitle text;",
        args: &[],
    });
    assert!(failed_with(&failed, "rp.report_cancelled"), "{failed:?}");
}

/// Not a mutation: a snapshot conflict cancels the lock variant's report
/// first (soak run 33's shape, made certain: before its ALTER, P deletes
/// rows and its own scan prunes them, a cleanup the report's snapshot still
/// needs). The answer is that conflict's, not the lock's: the DDL is undone
/// and the report run again, and the second time (nothing left to delete)
/// the lock conflict cancels it. The verdict stays, and the timeline says
/// what happened.
#[test]
fn a_snapshot_conflict_before_the_lock_conflict_does_not_flip_it() {
    let r = edited(&Mutation {
        scenario: "replica",
        variant: "lock-conflict",
        file: "replica.sql",
        from: "ALTER TABLE books ADD COLUMN subtitle text;",
        to: "DO $$ BEGIN
  DELETE FROM customers WHERE customer_id > 1000;
  COMMIT;
  PERFORM count(*) FROM customers;
  ALTER TABLE books ADD COLUMN subtitle text;
END $$;",
        args: &[],
    });
    assert_eq!(r.code, 0, "{}", r.why());
    let report: Value = serde_json::from_str(&r.stdout).unwrap();
    let v = variant(&report, "lock-conflict");
    assert_eq!(v["metrics"]["attempts"], 2, "{}", v["timeline"]);
    let errors: Vec<&str> = v["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["session"] == "R" && e["result"] == "error")
        .map(|e| e["detail"].as_str().unwrap())
        .collect();
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(errors[0].contains("row versions that must be removed"), "{errors:?}");
    assert!(errors[1].contains("relation lock"), "{errors:?}");
}

/// A report that meets a snapshot conflict every time (P inserts rows,
/// deletes them and prunes them before each ALTER) is not run again into a
/// pass: after three attempts the last answer stands, a deviation.
#[test]
fn a_snapshot_conflict_every_time_is_still_a_deviation() {
    let (v, _, failed) = mutated(&Mutation {
        scenario: "replica",
        variant: "lock-conflict",
        file: "replica.sql",
        from: "ALTER TABLE books ADD COLUMN subtitle text;",
        to: "DO $$ BEGIN
  INSERT INTO customers (customer_id, name) SELECT g, 'c' || g FROM generate_series(5001, 6000) g;
  COMMIT;
  DELETE FROM customers WHERE customer_id > 5000;
  COMMIT;
  PERFORM count(*) FROM customers;
  ALTER TABLE books ADD COLUMN subtitle text;
END $$;",
        args: &[],
    });
    assert!(failed_with(&failed, "rp.detail_says"), "{failed:?}");
    assert_eq!(v["metrics"]["attempts"], 3, "{}", v["timeline"]);
}

/// lab's own session on the standby ended by a recovery conflict (FATAL
/// 40001) while it polls during the variant's conflict: it is opened again,
/// the timeline says so, and the verdict stands. Here made certain: its
/// read of the counters leaves it idle in a REPEATABLE READ transaction
/// whose snapshot the vacuum's cleanup conflicts with. (In the soak a race
/// of PostgreSQL 12 to 16 did it, 1 run in 15; the run ended with exit 2,
/// "checking the standby: connection closed".) On a loaded machine the
/// conflict can instead find the read still running: an ERROR 40001 that
/// aborts the transaction, not the session; the read is then asked again
/// after a ROLLBACK (the whole suite once ended it with exit 2, "current
/// transaction is aborted", 25P02), and the timeline says that instead.
#[test]
fn labs_standby_session_ended_by_a_recovery_conflict_is_opened_again() {
    let r = edited(&Mutation {
        scenario: "replica",
        variant: "snapshot-conflict",
        file: "replica.sql",
        from: "SELECT confl_snapshot, confl_lock FROM pg_stat_database_conflicts",
        to: "BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT confl_snapshot, confl_lock FROM pg_stat_database_conflicts",
        args: &[],
    });
    assert_eq!(r.code, 0, "{}", r.why());
    let report: Value = serde_json::from_str(&r.stdout).unwrap();
    let v = variant(&report, "snapshot-conflict");
    let reopened: Vec<&str> = v["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["session"] == "standby" && e["result"] == "note")
        .filter_map(|e| e["detail"].as_str())
        .filter(|d| d.contains("opened it again") || d.contains("asked again"))
        .collect();
    assert_eq!(reopened.len(), 1, "{}", v["timeline"]);
    let how = if reopened[0].contains("opened it again") {
        "FATAL 40001"
    } else {
        "ERROR 40001"
    };
    assert!(reopened[0].contains(how), "{reopened:?}");
    assert!(reopened[0].contains("conflict with recovery"), "{reopened:?}");
}

/// P's commit made local: lab's probe still finds commits waiting for the
/// standby (it sets remote_apply itself), and P's COMMIT, which does not
/// wait, is the deviation.
#[test]
fn a_commit_that_does_not_wait_for_the_standby() {
    let (_, _, failed) = mutated(&Mutation {
        scenario: "replica",
        variant: "remote-apply",
        file: "replica.sql",
        from: "\nSET synchronous_commit = remote_apply;",
        to: "\nSET synchronous_commit = local;",
        args: &[],
    });
    assert!(failed_with(&failed, "rp.commit_waited"), "{failed:?}");
}

/// T1's commit made local: it no longer waits for the absent synchronous
/// standby, the primary shows it at once, and the two readers agree: no
/// Long Fork, exit 1 naming the wait and the primary's read.
#[test]
fn a_long_fork_whose_first_commit_does_not_wait() {
    let (_, _, failed) = mutated(&Mutation {
        scenario: "replica",
        variant: "long-fork",
        file: "replica.sql",
        from: "\nSET synchronous_commit = on;",
        to: "\nSET synchronous_commit = local;",
        args: &[],
    });
    assert!(failed_with(&failed, "rp.fork_waited"), "{failed:?}");
    assert!(failed_with(&failed, "rp.fork_primary"), "{failed:?}");
}

// Issue 27's broken mechanisms: each gives exit 1 with the check it broke
// named, in a few seconds at --wait-timeout 5 (the times are printed).

#[test]
fn a_migration_retry_that_adds_nothing() {
    let (_, _, failed) = mutated(&Mutation {
        scenario: "ddl-lock-queue",
        variant: "lock-timeout-retry",
        file: "ddl-lock-queue.spec",
        from: "step b_alter_again { ALTER TABLE books ADD COLUMN subtitle text; }",
        to: "step b_alter_again { SELECT 1; }",
        args: &[],
    });
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert!(failed_with(&failed, "dq.column_added"), "{failed:?}");
}

#[test]
fn a_migration_retry_behind_a_report_still_open_is_not_tried_again() {
    // A's report never ends: the retry waits for A (a session of the
    // scenario's), so lab does not retry past it as it does past an outsider.
    let (v, _, failed) = mutated(&Mutation {
        scenario: "ddl-lock-queue",
        variant: "lock-timeout-retry",
        file: "ddl-lock-queue.spec",
        from: "step a_commit { COMMIT; }",
        to: "step a_commit { SELECT 1; }",
        args: &[],
    });
    assert!(failed_with(&failed, "dq.retry_ok"), "{failed:?}");
    assert_eq!(v["metrics"]["b_attempts"], 2, "{}", v["metrics"]);
}

/// A backend that is not the scenario's (here the run's own setup
/// connection, left in a transaction holding ACCESS SHARE on books; on a
/// busy server, autovacuum truncating pg_attribute) holds up B's retry after
/// A's commit: lab names it in the timeline and, as a migration tool does,
/// tries again: as documented, exit 0.
#[test]
fn a_migration_retry_held_up_by_a_backend_not_the_scenarios_is_tried_again() {
    let r = edited(&Mutation {
        scenario: "ddl-lock-queue",
        variant: "lock-timeout-retry",
        file: "ddl-lock-queue.spec",
        from: "  ALTER TABLE books DROP COLUMN IF EXISTS subtitle;\n}\n",
        to: "  ALTER TABLE books DROP COLUMN IF EXISTS subtitle;\n}\nsetup { BEGIN; LOCK TABLE books IN ACCESS SHARE MODE; }\n",
        args: &[],
    });
    assert_eq!(r.code, 0, "{}{}", r.stderr, r.stdout);
    let report: Value = serde_json::from_str(&r.stdout).unwrap();
    let v = variant(&report, "lock-timeout-retry");
    assert!(v["metrics"]["b_attempts"].as_u64().unwrap() >= 3, "{}", v["metrics"]);
    let timeline = v["timeline"].as_array().unwrap();
    let noted = timeline.iter().any(|e| {
        e["result"] == "note"
            && e["session"] == "B"
            && e["detail"].as_str().is_some_and(|d| {
                d.starts_with("b_alter_again waits for a lock a backend that is not the run's holds: client backend")
            })
    });
    assert!(noted, "{timeline:#?}");
    let retried = timeline
        .iter()
        .filter(|e| e["step"] == "b_alter_again")
        .filter(|e| e["result"] == "ok")
        .count();
    assert_eq!(retried, 1, "{timeline:#?}");
}

#[test]
fn a_transaction_level_lock_made_session_level_behind_the_pooler() {
    let (_, _, failed) = mutated(&Mutation {
        scenario: "pooler",
        variant: "xact-advisory-lock",
        file: "pooler.sql",
        from: "SELECT pg_try_advisory_xact_lock(:key) AS got_lock;",
        to: "SELECT pg_try_advisory_lock(:key) AS got_lock;",
        args: &[],
    });
    assert!(failed_with(&failed, "po.lock_gone"), "{failed:?}");
}

#[test]
fn a_dequeue_that_takes_processed_messages_again() {
    let (_, _, failed) = mutated(&Mutation {
        scenario: "queue",
        variant: "skip-locked",
        file: "queue.sql",
        from: "SELECT outbox_message_id FROM outbox_messages\n WHERE processed_at IS NULL\n ORDER BY outbox_message_id\n LIMIT :batch\n FOR UPDATE SKIP LOCKED;",
        to: "SELECT outbox_message_id FROM outbox_messages\n ORDER BY outbox_message_id\n LIMIT :batch\n FOR UPDATE SKIP LOCKED;",
        args: &[],
    });
    assert!(failed_with(&failed, "qu.taken_again"), "{failed:?}");
}

#[test]
fn a_reservation_that_does_not_advance_the_counter() {
    let (_, _, failed) = mutated(&Mutation {
        scenario: "invoice-numbering",
        variant: "jit-reservation",
        file: "invoice-numbering.sql",
        from: "UPDATE invoice_sequences SET next_no = next_no + 1 WHERE series = 'A' RETURNING next_no - 1 AS no;",
        to: "SELECT next_no AS no FROM invoice_sequences WHERE series = 'A';",
        args: &[],
    });
    assert!(failed_with(&failed, "in.all_sent"), "{failed:?}");
}

#[test]
fn a_dequeue_that_ignores_priority() {
    let (_, _, failed) = mutated(&Mutation {
        scenario: "invoice-numbering",
        variant: "priority",
        file: "invoice-numbering.sql",
        from: "ORDER BY priority DESC, invoice_id",
        to: "ORDER BY invoice_id",
        args: &["--invoices", "6", "--latency-ms", "5"],
    });
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert!(failed_with(&failed, "in.prio_first_round"), "{failed:?}");
}

#[test]
fn an_orphan_sweep_that_looks_a_day_back() {
    let (_, _, failed) = mutated(&Mutation {
        scenario: "invoice-numbering",
        variant: "orphan-recovery",
        file: "invoice-numbering.sql",
        from: "updated_at < now() - make_interval(secs => :threshold_s)",
        to: "updated_at < now() - make_interval(days => 1) AND :threshold_s > 0",
        args: &[],
    });
    assert!(failed_with(&failed, "in.sweep_blind"), "{failed:?}");
}

#[test]
fn a_standby_report_with_nothing_vacuumed_away() {
    let (_, _, failed) = mutated(&Mutation {
        scenario: "replica",
        variant: "snapshot-conflict",
        file: "replica.sql",
        from: "VACUUM (VERBOSE) :\"schema\".customers;",
        to: "ANALYZE (VERBOSE) :\"schema\".customers;",
        args: &[],
    });
    assert!(failed_with(&failed, "rp.report_cancelled"), "{failed:?}");
}

#[test]
fn a_lost_client_with_no_idle_timeout_keeps_its_lock() {
    let (_, _, failed) = mutated(&Mutation {
        scenario: "lost-client",
        variant: "idle-in-transaction-timeout",
        file: "lost-client.sql",
        from: "SET idle_in_transaction_session_timeout = :'timeout';",
        to: "SET idle_in_transaction_session_timeout = 0; SELECT :'timeout';",
        args: &[],
    });
    assert!(failed_with(&failed, "lc.b_got_row"), "{failed:?}");
}

/// The timeout far shorter than the variant says (20 ms, not 200): B's wait,
/// measured from when A's last statement was sent (so a busy machine can
/// only lengthen it), is shorter than the setting the variant documents; or,
/// on a machine busy enough that lab sends B's UPDATE more than 20 ms after
/// A's last statement (.ci/run's full suite on PostgreSQL 18 once), the
/// server has already ended A and B does not wait at all. Either is the
/// server ending A sooner than documented: exit 1 (`mutated` checks it).
#[test]
fn a_lost_client_idle_timeout_far_shorter_than_documented() {
    let (_, _, failed) = mutated(&Mutation {
        scenario: "lost-client",
        variant: "idle-in-transaction-timeout",
        file: "lost-client.sql",
        from: "SET idle_in_transaction_session_timeout = :'timeout';",
        to: "SET idle_in_transaction_session_timeout = '20ms'; SELECT :'timeout';",
        args: &[],
    });
    assert!(
        failed_with(&failed, "lc.not_sooner") || failed_with(&failed, "en.did_not_wait"),
        "{failed:?}"
    );
}

#[test]
fn a_lost_client_with_keepalives_at_their_defaults_keeps_its_lock() {
    let (_, _, failed) = mutated(&Mutation {
        scenario: "lost-client",
        variant: "tcp-keepalives",
        file: "lost-client.sql",
        from: "SET tcp_keepalives_idle = 1;",
        to: "SET tcp_keepalives_idle = 0;",
        args: &[],
    });
    assert!(failed_with(&failed, "lc.b_got_row"), "{failed:?}");
}

#[test]
fn a_lost_client_with_no_connection_check_keeps_its_lock() {
    if lab_server_version() < 140000 {
        return;
    }
    let (_, _, failed) = mutated(&Mutation {
        scenario: "lost-client",
        variant: "client-connection-check",
        file: "lost-client.sql",
        from: "SET client_connection_check_interval = :'timeout';",
        to: "SET client_connection_check_interval = 0; SELECT :'timeout';",
        args: &[],
    });
    assert!(failed_with(&failed, "lc.b_got_row"), "{failed:?}");
}

/// The version of the server the tests run on (the throwaway cluster's).
fn lab_server_version() -> i64 {
    let srv = crate::support::TestServer::start();
    let c = srv.client();
    srv.query_i64(&c, "SELECT current_setting('server_version_num')::bigint")
}
