use std::time::Duration;

use lab::engine::{Opener, Recorder};
use lab::report::StepResult;
use lab::retry::{RETRYABLE, RetryPolicy, Rng};

use crate::support::TestServer;

const FAIL_40001: &str = "DO $$ BEGIN RAISE EXCEPTION 'simulated' USING ERRCODE = 'serialization_failure'; END $$";
const FAIL_23505: &str = "DO $$ BEGIN RAISE EXCEPTION 'simulated' USING ERRCODE = 'unique_violation'; END $$";

/// Runs a transaction whose attempts fail with `codes[attempt-1]` (then
/// succeed); the attempts, the failures, whether it succeeded, and how many
/// notes the timeline holds about failed attempts.
fn attempts_with(
    srv: &TestServer,
    policy: RetryPolicy,
    codes: &'static [&'static str],
) -> (u32, Vec<String>, bool, usize) {
    srv.rt.block_on(async {
        let recorder = Recorder::default();
        let env = srv.env("public").await;
        let opener = Opener::new(&env, "lab:retry-test:".into(), "retry-test".into(), recorder.clone());
        let s = opener.open("A").await.unwrap();
        let mut rng = Rng::new(3);
        let attempted = policy
            .run(&s, &mut rng, |attempt| {
                let s = s.clone();
                async move {
                    s.exec("", "BEGIN").await?;
                    let sql = match codes.get(attempt as usize - 1) {
                        Some(&"40001") => FAIL_40001,
                        Some(&"23505") => FAIL_23505,
                        _ => "SELECT 1 AS ok",
                    };
                    // 23505 is allowed through here so the policy sees it and must not retry it.
                    let allowed: Vec<&str> = RETRYABLE.iter().copied().chain(["23505"]).collect();
                    match s.exec_allow("attempt", sql, &allowed).await? {
                        Ok(_) => {
                            s.exec("", "COMMIT").await?;
                            Ok(Ok(()))
                        }
                        Err(e) => Ok(Err(e)),
                    }
                }
            })
            .await
            .unwrap();
        let notes = recorder
            .take()
            .iter()
            .filter(|e| e.result == StepResult::Note)
            .filter(|e| serde_json::to_string(&e.detail).unwrap().contains("failed with"))
            .count();
        (attempted.attempts, attempted.failures, attempted.result.is_ok(), notes)
    })
}

#[test]
fn retries_serialization_failures_up_to_the_limit() {
    let srv = TestServer::start();
    let fast = RetryPolicy {
        max_attempts: 3,
        base: Duration::from_millis(1),
        cap: Duration::from_millis(2),
    };
    // Fails twice, succeeds on the third attempt.
    let (attempts, failures, ok, notes) = attempts_with(&srv, fast, &["40001", "40001"]);
    assert_eq!((attempts, ok), (3, true));
    assert_eq!(failures, vec!["40001", "40001"]);
    assert_eq!(notes, 2, "each failed attempt is in the timeline");
    // Fails every time: stops at max_attempts with the last error.
    let (attempts, failures, ok, _) = attempts_with(&srv, fast, &["40001", "40001", "40001", "40001"]);
    assert_eq!((attempts, ok), (3, false));
    assert_eq!(failures.len(), 3);
}

#[test]
fn other_errors_are_not_retried() {
    let srv = TestServer::start();
    let (attempts, failures, ok, _) = attempts_with(&srv, RetryPolicy::default(), &["23505"]);
    assert_eq!((attempts, ok), (1, false));
    assert_eq!(failures, vec!["23505"]);
}
