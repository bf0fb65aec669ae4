//! The retry policy every scenario uses: the whole transaction (read
//! included) is run again on 40001 (serialization failure) and 40P01
//! (deadlock), and only on those, after an exponential back-off with jitter,
//! up to a maximum number of attempts. Each attempt and its SQLSTATE appear in
//! the timeline.
use std::future::Future;
use std::time::Duration;

use anyhow::Result;

use crate::engine::{PgError, Session};

/// SQLSTATEs after which running the whole transaction again can succeed.
pub const RETRYABLE: &[&str] = &["40001", "40P01"];

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetryPolicy {
    /// Attempts in all, the first one included (1 = no retry).
    pub max_attempts: u32,
    /// Back-off before the second attempt; doubles for each attempt after that.
    pub base: Duration,
    /// No back-off is longer than this.
    pub cap: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 5,
            base: Duration::from_millis(10),
            cap: Duration::from_millis(200),
        }
    }
}

/// What a transaction run under the policy came to.
#[derive(Debug)]
pub struct Attempted<T> {
    /// The last attempt's result: its value, or the error it ended with.
    pub result: std::result::Result<T, PgError>,
    pub attempts: u32,
    /// The SQLSTATE each failed attempt ended with, in order.
    pub failures: Vec<String>,
}

impl RetryPolicy {
    pub fn retries(code: &str) -> bool {
        RETRYABLE.contains(&code)
    }

    /// The back-off after failed attempt `attempt` (1-based): "equal jitter",
    /// a random point in [d/2, d] with d = min(cap, base · 2^(attempt-1)), so
    /// sessions that failed together do not retry together, and no back-off
    /// collapses to zero.
    pub fn backoff(&self, attempt: u32, rng: &mut Rng) -> Duration {
        let exp = self.base.saturating_mul(1u32 << (attempt.saturating_sub(1)).min(20));
        let d = exp.min(self.cap);
        let half = d / 2;
        half + Duration::from_nanos(rng.below(d.as_nanos().saturating_sub(half.as_nanos()) as u64 + 1))
    }

    /// Runs `body` (one whole transaction, BEGIN to COMMIT) until it succeeds,
    /// fails with a SQLSTATE that is not retryable, or runs out of attempts.
    /// The body returns Ok(Err(e)) for a server error it allowed (run its
    /// statements with [`RETRYABLE`] allowed); after one, the policy rolls
    /// back, notes the attempt in the timeline, backs off and calls it again.
    pub async fn run<T, F, Fut>(&self, session: &Session, rng: &mut Rng, mut body: F) -> Result<Attempted<T>>
    where
        F: FnMut(u32) -> Fut,
        Fut: Future<Output = Result<std::result::Result<T, PgError>>>,
    {
        let mut failures = Vec::new();
        let mut attempt = 1;
        loop {
            let r = body(attempt).await?;
            match r {
                Err(e) if e.code.as_deref().is_some_and(Self::retries) && attempt < self.max_attempts => {
                    let wait = self.backoff(attempt, rng);
                    let code = e.code.clone().unwrap_or_default();
                    session.note(msg::again(
                        attempt,
                        &code,
                        format!("{:.1}", wait.as_secs_f64() * 1000.0),
                    ));
                    session.exec("rollback", "ROLLBACK").await?;
                    failures.push(code);
                    // The back-off is the policy itself, not a way of ordering sessions.
                    tokio::time::sleep(wait).await;
                    attempt += 1;
                }
                Err(e) => {
                    let code = e.code.clone().unwrap_or_default();
                    if Self::retries(&code) {
                        session.note(msg::exhausted(attempt, &code));
                    }
                    failures.push(code);
                    return Ok(Attempted {
                        result: Err(e),
                        attempts: attempt,
                        failures,
                    });
                }
                Ok(v) => {
                    return Ok(Attempted {
                        result: Ok(v),
                        attempts: attempt,
                        failures,
                    });
                }
            }
        }
    }
}

/// A small PRNG (splitmix64) for jitter; seeded per session so runs differ.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// Seeded from the clock and a name, for back-off jitter.
    pub fn from_entropy(name: &str) -> Rng {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos() as u64;
        Rng(name.bytes().fold(t, |h, b| (h ^ b as u64).wrapping_mul(0x100000001b3)))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e3779b97f4a7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d049bb133111eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, n) (n = 0 gives 0).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            ((self.next_u64() as u128 * n as u128) >> 64) as u64
        }
    }
}

pub(crate) mod msg {
    crate::messages! {
        prefix "rt";
        again(attempt, code, ms) {
            en: "attempt {attempt} failed with {code}; rolling back, retrying the whole transaction after {ms} ms",
            tr: "{attempt}. deneme {code} ile düştü; geri alınıyor, bütün transaction {ms} ms sonra baştan deneniyor",
        }
        exhausted(attempt, code) {
            en: "attempt {attempt} failed with {code}; no attempts left",
            tr: "{attempt}. deneme {code} ile düştü; deneme hakkı kalmadı",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_serialization_failures_and_deadlocks_retry() {
        assert!(RetryPolicy::retries("40001"));
        assert!(RetryPolicy::retries("40P01"));
        for code in ["23505", "55P03", "57014", "25P02", "40002", "40003", "08006", ""] {
            assert!(!RetryPolicy::retries(code), "{code}");
        }
    }

    #[test]
    fn backoff_stays_within_its_jitter_bounds_and_cap() {
        let p = RetryPolicy {
            max_attempts: 10,
            base: Duration::from_millis(10),
            cap: Duration::from_millis(200),
        };
        let mut rng = Rng::new(42);
        for attempt in 1..=12 {
            let d = p.base.saturating_mul(1 << (attempt - 1)).min(p.cap);
            for _ in 0..1000 {
                let b = p.backoff(attempt, &mut rng);
                assert!(
                    b >= d / 2 && b <= d,
                    "attempt {attempt}: {b:?} outside [{:?}, {d:?}]",
                    d / 2
                );
            }
        }
    }

    #[test]
    fn backoff_is_jittered_not_constant() {
        let p = RetryPolicy::default();
        let mut rng = Rng::new(7);
        let samples: std::collections::HashSet<Duration> = (0..50).map(|_| p.backoff(2, &mut rng)).collect();
        assert!(samples.len() > 40, "{} distinct values", samples.len());
    }

    #[test]
    fn rng_is_uniform_enough() {
        let mut rng = Rng::new(1);
        let mut buckets = [0u32; 10];
        for _ in 0..100_000 {
            buckets[rng.below(10) as usize] += 1;
        }
        assert!(buckets.iter().all(|&b| (9_000..11_000).contains(&b)), "{buckets:?}");
        assert_eq!(rng.below(0), 0);
    }
}
