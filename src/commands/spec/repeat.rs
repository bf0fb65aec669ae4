//! `lab spec --repeat N`: the same spec run N times; a permutation whose
//! output was not the same every time is flaky. Outputs are compared per
//! permutation (isolationtester's `starting permutation:` sections), so
//! one flaky permutation does not hide which one it is.
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// A permutation whose output differed between runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flaky {
    /// Its `starting permutation:` line's steps ("" for what comes before the first).
    pub permutation: String,
    /// Each output seen and in how many runs, the most frequent first
    /// (ties: the one seen first).
    pub outputs: Vec<(String, usize)>,
}

impl Flaky {
    /// How many runs printed each output, most frequent first: `16 + 4`.
    pub fn counts(&self) -> String {
        let counts: Vec<String> = self.outputs.iter().map(|(_, n)| n.to_string()).collect();
        counts.join(" + ")
    }

    /// A unified diff from the most frequent output to each other one.
    pub fn diffs(&self) -> String {
        let (first, n) = &self.outputs[0];
        let mut out = String::new();
        for (other, m) in &self.outputs[1..] {
            let diff = similar::TextDiff::from_lines(first.as_str(), other.as_str())
                .unified_diff()
                .context_radius(3)
                .header(&format!("seen {n} times"), &format!("seen {m} times"))
                .to_string();
            out.push_str(&diff);
        }
        out
    }
}

/// An isolationtester transcript cut into its permutations: (steps, text),
/// each text from its `starting permutation:` heading to the next; what
/// comes before the first is a piece of its own, named "".
pub fn permutations(transcript: &str) -> Vec<(String, String)> {
    const START: &str = "\nstarting permutation: ";
    let starts: Vec<usize> = transcript.match_indices(START).map(|(i, _)| i).collect();
    let mut out = Vec::new();
    let first = starts.first().copied().unwrap_or(transcript.len());
    if first > 0 {
        out.push((String::new(), transcript[..first].to_string()));
    }
    for (k, &at) in starts.iter().enumerate() {
        let end = starts.get(k + 1).copied().unwrap_or(transcript.len());
        let text = &transcript[at..end];
        let heading = &text[START.len()..];
        let name = heading[..heading.find('\n').unwrap_or(heading.len())].to_string();
        out.push((name, text.to_string()));
    }
    out
}

/// The permutations whose text was not the same in every run, given each
/// run's whole transcript. A run cut short (fewer permutations) counts as
/// an output of its own for the permutations it lacks.
pub fn flaky(runs: &[&str]) -> Vec<Flaky> {
    let cut: Vec<Vec<(String, String)>> = runs.iter().map(|t| permutations(t)).collect();
    let most = cut.iter().map(Vec::len).max().unwrap_or(0);
    let mut found = Vec::new();
    for k in 0..most {
        let mut outputs: Vec<(String, usize)> = Vec::new();
        let mut name = String::new();
        for run in &cut {
            let text = match run.get(k) {
                Some((n, t)) => {
                    if name.is_empty() {
                        name = n.clone();
                    }
                    t.clone()
                }
                None => "(the run stopped before this permutation)\n".to_string(),
            };
            match outputs.iter_mut().find(|(t, _)| *t == text) {
                Some((_, n)) => *n += 1,
                None => outputs.push((text, 1)),
            }
        }
        if outputs.len() > 1 {
            // Stable: ties keep the order first seen.
            outputs.sort_by_key(|o| std::cmp::Reverse(o.1));
            found.push(Flaky {
                permutation: name,
                outputs,
            });
        }
    }
    found
}

/// `--load`: one thread per core spinning until dropped, as a loaded CI
/// runner's other jobs would keep them.
pub struct Load {
    stop: Arc<AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Load {
    pub fn start(threads: usize) -> Load {
        let stop = Arc::new(AtomicBool::new(false));
        let threads = (0..threads)
            .map(|_| {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    let mut x: u64 = 1;
                    while !stop.load(Ordering::Relaxed) {
                        for _ in 0..10_000 {
                            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
                        }
                    }
                })
            })
            .collect();
        Load { stop, threads }
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "Parsed test spec with 2 sessions\n\nstarting permutation: s1 s2\nstep s1: SELECT 1;\nstep s2: SELECT 2;\n\nstarting permutation: s2 s1\nstep s2: SELECT 2;\nstep s1: SELECT 1;\n";

    #[test]
    fn a_transcript_is_cut_at_each_permutation() {
        let p = permutations(A);
        assert_eq!(p.len(), 3, "{p:?}");
        assert_eq!(p[0], (String::new(), "Parsed test spec with 2 sessions\n".to_string()));
        assert_eq!(p[1].0, "s1 s2");
        assert_eq!(
            p[1].1,
            "\nstarting permutation: s1 s2\nstep s1: SELECT 1;\nstep s2: SELECT 2;\n"
        );
        assert_eq!(p[2].0, "s2 s1");
        assert!(p[2].1.ends_with("step s1: SELECT 1;\n"));
        assert_eq!(p.iter().map(|(_, t)| t.as_str()).collect::<String>(), A);
    }

    #[test]
    fn the_same_output_every_time_is_not_flaky() {
        assert!(flaky(&[A, A, A]).is_empty());
    }

    #[test]
    fn a_permutation_that_differed_is_named_with_its_counts() {
        let b = A.replace(
            "step s2: SELECT 2;\nstep s1: SELECT 1;\n",
            "step s2: SELECT 2; <waiting ...>\nstep s1: SELECT 1;\n",
        );
        let f = flaky(&[A, &b, A]);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].permutation, "s2 s1");
        assert_eq!(f[0].outputs.iter().map(|(_, n)| *n).collect::<Vec<_>>(), vec![2, 1]);
        assert!(
            f[0].diffs().contains("+step s2: SELECT 2; <waiting ...>"),
            "{}",
            f[0].diffs()
        );
    }

    #[test]
    fn a_run_cut_short_differs_where_it_stopped() {
        let short = A.split("\nstarting permutation: s2 s1").next().unwrap();
        let f = flaky(&[A, short]);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].permutation, "s2 s1");
    }
}
