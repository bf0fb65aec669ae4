//! The session engine: drives named sessions, each on its own connection,
//! records every statement and outcome with a timestamp, confirms waits from
//! the server (never by sleeping), keeps a deadline on every wait, and knows
//! no scenario by name.
//!
//! - [`session`]: one connection, the statements it sends, its transaction;
//! - [`schedule`]: a spec permutation run as isolationtester runs it;
//! - [`observe`]: the timeline recorder and the observations verdicts read;
//! - [`step`]: workshop stepping.
pub mod answer;
pub mod env;
pub mod guess;
pub mod msg;
pub mod observe;
pub mod schedule;
pub mod session;
pub mod step;
pub mod transcript;

use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;
use tokio::task::JoinHandle;

pub use answer::{Answer, PgError, Res};
pub use env::Env;
pub use observe::{Deviation, Observation, Recorder, StepRun, Waited, raw_error};
pub use schedule::{ExpectedWait, Probe, ProbeQuery};
pub use session::{Opener, Sent, Session};
pub use step::Stepper;

use crate::i18n::{Context, Text};

/// A barrier for sessions running their own logic concurrently, with a deadline.
pub struct Barrier {
    inner: tokio::sync::Barrier,
    name: String,
    label: String,
    deadline: Duration,
}

impl Barrier {
    pub fn new(name: &str, label: &str, parties: usize, deadline: Duration) -> Arc<Barrier> {
        Arc::new(Barrier {
            inner: tokio::sync::Barrier::new(parties),
            name: name.to_string(),
            label: label.to_string(),
            deadline,
        })
    }

    /// `who` names the waiting party in the error if the deadline passes.
    pub async fn wait(&self, who: &str) -> Result<()> {
        tokio::time::timeout(self.deadline, self.inner.wait())
            .await
            .map_err(|_| msg::barrier(&self.label, who, &self.name, secs(self.deadline)))?;
        Ok(())
    }
}

/// Awaits futures concurrently, keeping their order (a small join_all).
pub async fn join_all_ordered<F, T>(futs: impl IntoIterator<Item = F>) -> Vec<T>
where
    F: std::future::Future<Output = T>,
{
    let mut futs: Vec<_> = futs.into_iter().map(Box::pin).collect();
    let mut out: Vec<Option<T>> = futs.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (i, f) in futs.iter_mut().enumerate() {
            if out[i].is_none() {
                match f.as_mut().poll(cx) {
                    std::task::Poll::Ready(v) => out[i] = Some(v),
                    std::task::Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            std::task::Poll::Pending
        } else {
            std::task::Poll::Ready(())
        }
    })
    .await;
    out.into_iter().map(|v| v.expect("every future finished")).collect()
}

/// Waits for a spawned task with a deadline; `what` names it in the error.
pub async fn join_within<T>(deadline: Duration, what: Text, h: JoinHandle<Result<T>>) -> Result<T> {
    match tokio::time::timeout(deadline, h).await {
        Err(_) => Err(msg::not_finished(what, secs(deadline)).into()),
        Ok(Err(e)) => Err(anyhow::Error::new(e)).ctx(|| what),
        Ok(Ok(r)) => r,
    }
}

/// Waits for spawned tasks, all at once, each within `deadline`; their
/// results in order, or the first error.
pub async fn join_all<T>(deadline: Duration, what: Text, handles: Vec<JoinHandle<Result<T>>>) -> Result<Vec<T>> {
    join_all_ordered(handles.into_iter().map(|h| join_within(deadline, what.clone(), h)))
        .await
        .into_iter()
        .collect()
}

/// A task of [`spawn_in_order`]: boxed, so that tasks of different bodies share one list.
pub type Task<T> = std::pin::Pin<Box<dyn std::future::Future<Output = Result<T>> + Send>>;

/// Spawns `tasks`, at most `jobs` running at once, each started only after
/// every one before it has (`jobs` 1 runs them one by one, in order); the
/// caller awaits the handles in order.
pub fn spawn_in_order<T: Send + 'static>(jobs: usize, tasks: Vec<Task<T>>) -> Vec<JoinHandle<Result<T>>> {
    let permits = Arc::new(tokio::sync::Semaphore::new(jobs.max(1)));
    let (turn, _) = tokio::sync::watch::channel(0usize);
    let turn = Arc::new(turn);
    tasks
        .into_iter()
        .enumerate()
        .map(|(i, task)| {
            let (permits, turn) = (permits.clone(), turn.clone());
            tokio::spawn(async move {
                let _ = turn.subscribe().wait_for(|n| *n == i).await;
                let _permit = permits.acquire_owned().await.expect("never closed");
                turn.send_modify(|n| *n += 1);
                task.await
            })
        })
        .collect()
}

/// What a run made on the server (schemas) and has not dropped yet. Once
/// the clean-up has begun it is closed: a task aborted part-way that still
/// gets to run cannot make one the clean-up would not see.
#[derive(Default)]
pub struct Made(std::sync::Mutex<(bool, Vec<String>)>);

impl Made {
    /// Lists `name` before it is made; an error once closed (make nothing then).
    pub fn add(&self, name: &str) -> Result<()> {
        let mut m = self.0.lock().unwrap();
        if m.0 {
            anyhow::bail!(msg::stopped());
        }
        m.1.push(name.to_string());
        Ok(())
    }

    /// Takes `names` off the list once they are dropped.
    pub fn dropped(&self, names: &[String]) {
        self.0.lock().unwrap().1.retain(|n| !names.contains(n));
    }

    /// Closes the list; what is on it.
    pub fn close(&self) -> Vec<String> {
        let mut m = self.0.lock().unwrap();
        m.0 = true;
        m.1.clone()
    }

    /// What is on it now.
    pub fn names(&self) -> Vec<String> {
        self.0.lock().unwrap().1.clone()
    }
}

/// Aborts its tasks when dropped (a caller that stops awaiting them stops them).
pub struct AbortOnDrop(pub Vec<tokio::task::AbortHandle>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        for t in &self.0 {
            t.abort();
        }
    }
}

/// A spawned task's result, a panic or cancellation as an error.
pub async fn joined<T>(h: JoinHandle<Result<T>>) -> Result<T> {
    h.await.map_err(|e| anyhow::anyhow!("{e}"))?
}

/// Asks a yes-or-no question (one value) until the answer is yes (`t`,
/// `true`) or `within` has passed; whether it was yes.
pub async fn until_yes<F, Fut>(within: Duration, mut ask: F) -> Result<bool>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<Option<String>>>,
{
    let deadline = std::time::Instant::now() + within;
    loop {
        if matches!(ask().await?.as_deref(), Some("t" | "true")) {
            return Ok(true);
        }
        if std::time::Instant::now() > deadline {
            return Ok(false);
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

/// Seconds, as a person reads them in a message ("2.5", "30").
pub fn secs(d: Duration) -> f64 {
    (d.as_secs_f64() * 1000.0).round() / 1000.0
}

/// How many workers (`lab explore`'s) run at once, each on connections of its own.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Jobs {
    /// At most.
    pub most: usize,
    /// From the start; more join, up to `most`, while each one added makes
    /// the runs go faster or runs wait (every worker's connections cost the
    /// server a backend's start each: several milliseconds of CPU).
    pub first: usize,
}

impl Jobs {
    /// `--jobs N`: N from the start. Else one worker per core, up to `most`.
    pub fn of(given: Option<usize>, most: usize, cores: usize) -> Jobs {
        match given {
            Some(n) => Jobs {
                most: n.max(1),
                first: n.max(1),
            },
            None => Jobs {
                most,
                first: cores.clamp(1, most.max(1)),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Jobs;

    #[test]
    fn jobs_given_start_at_once_else_one_worker_per_core_up_to_the_most() {
        assert_eq!(Jobs::of(Some(3), 8, 2), Jobs { most: 3, first: 3 });
        assert_eq!(Jobs::of(Some(0), 8, 2), Jobs { most: 1, first: 1 });
        assert_eq!(Jobs::of(None, 4, 2), Jobs { most: 4, first: 2 });
        // Fewer allowed than cores: no more than allowed at first.
        assert_eq!(Jobs::of(None, 2, 8), Jobs { most: 2, first: 2 });
        assert_eq!(Jobs::of(None, 4, 0), Jobs { most: 4, first: 1 });
    }
}
