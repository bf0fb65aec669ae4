//! pg_regress's layout, so that an extension's Makefile can call `lab spec`
//! where it calls pg_isolation_regress: `results/NAME.out` (isolationtester's
//! stdout and stderr), `regression.diffs` (`diff -U3` against the closest
//! expected file, appended per failed test), `regression.out` (the test
//! lines), and pg_regress's own lines on stdout: `test NAME ... ok`, a
//! `parallel group` line per schedule group, and its summary. On success,
//! as pg_regress does, the two summary files are removed.
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Result;

use super::msg;

/// Where a pg_regress-style run writes.
#[derive(Debug, Clone)]
pub struct Layout {
    /// `--outputdir`, made absolute (pg_regress prints it so).
    pub outputdir: PathBuf,
}

/// One test's line: its name, whether it passed, how long it took.
#[derive(Debug, Clone)]
pub struct TestLine {
    pub name: String,
    pub ok: bool,
    pub ms: u64,
    /// isolationtester would have exited 1 (a setup failed, a step timed
    /// out, steps blocked each other): pg_regress says so on the line.
    pub exited: bool,
    /// A schedule's `ignore:` line named it: a failure is "failed
    /// (ignored)" and does not count.
    pub ignored: bool,
    /// Its place among the tests as they finished: a parallel group's
    /// header names them in that order, as pg_regress does.
    pub finished: usize,
}

impl TestLine {
    /// A failure that counts.
    pub fn failed(&self) -> bool {
        !self.ok && !self.ignored
    }
}

impl Layout {
    pub fn new(outputdir: &Path) -> Layout {
        Layout {
            outputdir: absolute(outputdir),
        }
    }

    pub fn results(&self) -> PathBuf {
        self.outputdir.join("results")
    }

    pub fn diffs(&self) -> PathBuf {
        self.outputdir.join("regression.diffs")
    }

    pub fn log(&self) -> PathBuf {
        self.outputdir.join("regression.out")
    }

    /// Makes `results/` and starts both summary files afresh.
    pub fn prepare(&self) -> Result<()> {
        let results = self.results();
        std::fs::create_dir_all(&results).map_err(|e| msg::unwritable(results.display().to_string(), e.to_string()))?;
        for f in [self.diffs(), self.log()] {
            std::fs::write(&f, "").map_err(|e| msg::unwritable(f.display().to_string(), e.to_string()))?;
        }
        Ok(())
    }

    /// Writes a test's output to `results/NAME.out` and, when it matched
    /// none of its expected files, appends pg_regress's diff against the
    /// closest (`best`) one.
    pub fn record(&self, name: &str, output: &str, best: Option<&Path>) -> Result<()> {
        let result = self.results().join(format!("{name}.out"));
        std::fs::write(&result, output).map_err(|e| msg::unwritable(result.display().to_string(), e.to_string()))?;
        if let Some(expected) = best {
            let expected = absolute(expected);
            let mut text = format!("diff -U3 {} {}\n", expected.display(), result.display());
            text.push_str(&unified_diff(&expected, &result));
            self.append(&self.diffs(), &text)?;
        }
        Ok(())
    }

    /// Appends to `regression.out` what was printed for a group.
    pub fn log_lines(&self, text: &str) -> Result<()> {
        self.append(&self.log(), text)
    }

    fn append(&self, path: &Path, text: &str) -> Result<()> {
        std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(path)
            .and_then(|mut f| f.write_all(text.as_bytes()))
            .map_err(|e| msg::unwritable(path.display().to_string(), e.to_string()).into())
    }

    /// pg_regress's closing words, after which (every test passed) the two
    /// summary files are removed.
    pub fn close(&self, lines: &[TestLine]) -> String {
        let failed = lines.iter().filter(|l| l.failed()).count();
        let ignored = lines.iter().filter(|l| !l.ok && l.ignored).count();
        let mut out = summary(lines.len(), failed, ignored);
        // (pg_regress keeps them while regression.diffs has anything in it.)
        if failed + ignored > 0 {
            let _ = write!(
                out,
                "The differences that caused some tests to fail can be viewed in the\n\
                 file \"{}\".  A copy of the test summary that you see\n\
                 above is saved in the file \"{}\".\n\n",
                self.diffs().display(),
                self.log().display()
            );
        } else {
            let _ = std::fs::remove_file(self.diffs());
            let _ = std::fs::remove_file(self.log());
        }
        out
    }
}

/// pg_regress's banner before the tests.
pub const RUNNING: &str = "============== running regression test queries        ==============\n";

/// A schedule group's lines as pg_regress prints them: `test NAME ... ok`
/// for a group of one, else a `parallel group (N tests):` line and one
/// indented line per test.
/// `groups_of` is pg_regress's --max-connections, said on a larger group's line.
pub fn group_lines(group: &[TestLine], groups_of: Option<usize>) -> String {
    let status = |l: &TestLine| {
        format!(
            "{:<6}{} {:>8} ms\n",
            match (l.ok, l.ignored) {
                (true, _) => "ok",
                (false, false) => "FAILED",
                (false, true) => "failed (ignored)",
            },
            if l.exited {
                " (test process exited with exit code 1)"
            } else {
                ""
            },
            l.ms
        )
    };
    match group {
        [one] => format!("test {:<28} ... {}", one.name, status(one)),
        _ => {
            let mut out = match groups_of.filter(|n| *n < group.len()) {
                Some(n) => format!("parallel group ({} tests, in groups of {n}): ", group.len()),
                None => format!("parallel group ({} tests): ", group.len()),
            };
            let mut done: Vec<&TestLine> = group.iter().collect();
            done.sort_by_key(|l| l.finished);
            for l in done {
                let _ = write!(out, " {}", l.name);
            }
            out.push('\n');
            for l in group {
                let _ = write!(out, "     {:<28} ... {}", l.name, status(l));
            }
            out
        }
    }
}

/// The framed count, in pg_regress 15's words: ` All N tests passed. `,
/// ` F of N tests failed. `, and with failures ignored, how many.
pub fn summary(total: usize, failed: usize, ignored: usize) -> String {
    let line = match (failed, ignored) {
        (0, 0) => format!(" All {total} tests passed. "),
        (0, i) => format!(" {} of {total} tests passed, {i} failed test(s) ignored. ", total - i),
        (f, 0) => format!(" {f} of {total} tests failed. "),
        (f, i) => format!(" {} of {total} tests failed, {i} of these failures ignored. ", f + i),
    };
    let bar = "=".repeat(line.len());
    format!("\n{bar}\n{line}\n{bar}\n\n")
}

/// `diff -U3 expected result`, as pg_regress runs it (the system's diff,
/// with its file headers); lab's own unified diff where there is no diff.
fn unified_diff(expected: &Path, result: &Path) -> String {
    if let Ok(out) = std::process::Command::new("diff")
        .arg("-U3")
        .arg(expected)
        .arg(result)
        .output()
        && out.status.code().is_some_and(|c| c <= 1)
    {
        return String::from_utf8_lossy(&out.stdout).into_owned();
    }
    let want = std::fs::read_to_string(expected).unwrap_or_default();
    let got = std::fs::read_to_string(result).unwrap_or_default();
    similar::TextDiff::from_lines(&want, &got)
        .unified_diff()
        .context_radius(3)
        .header(&expected.display().to_string(), &result.display().to_string())
        .to_string()
}

fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(name: &str, ok: bool, ms: u64) -> TestLine {
        TestLine {
            name: name.into(),
            ok,
            ms,
            exited: false,
            ignored: false,
            finished: 0,
        }
    }

    /// The lines pg_isolation_regress 15 printed for the same tests.
    #[test]
    fn lines_are_pg_regress_own() {
        assert_eq!(
            group_lines(&[t("deadlock-simple", false, 42)], None),
            "test deadlock-simple              ... FAILED       42 ms\n"
        );
        assert_eq!(
            group_lines(
                &[t("read-only-anomaly", true, 36), t("tuplelock-update", true, 267)],
                None
            ),
            "parallel group (2 tests):  read-only-anomaly tuplelock-update\n     \
             read-only-anomaly            ... ok           36 ms\n     \
             tuplelock-update             ... ok          267 ms\n"
        );
        // pg_regress 15's log_child_failure(), between the status and the time.
        let exited = TestLine {
            exited: true,
            ..t("timeouts", false, 20_012)
        };
        assert_eq!(
            group_lines(&[exited], None),
            "test timeouts                     ... FAILED (test process exited with exit code 1)    20012 ms\n"
        );
        assert_eq!(
            summary(3, 1, 0),
            "\n======================\n 1 of 3 tests failed. \n======================\n\n"
        );
        assert_eq!(
            summary(115, 0, 0),
            "\n=======================\n All 115 tests passed. \n=======================\n\n"
        );
    }

    /// What pg_isolation_regress 15 printed with `ignore: ign` in its
    /// schedule and --max-connections=1 (the same run, 2026-12-06).
    #[test]
    fn ignored_failures_and_groups_of_as_pg_regress_prints_them() {
        let ignored = TestLine {
            ignored: true,
            ..t("ign", false, 14)
        };
        assert!(!ignored.failed());
        assert_eq!(
            group_lines(&[ignored], None),
            "test ign                          ... failed (ignored)       14 ms\n"
        );
        // An ignored test that passes is ok.
        let passed = TestLine {
            ignored: true,
            ..t("ign", true, 14)
        };
        assert_eq!(
            group_lines(&[passed], None),
            "test ign                          ... ok           14 ms\n"
        );
        assert_eq!(
            group_lines(&[t("ok1", true, 15), t("fail", false, 13)], Some(1)),
            "parallel group (2 tests, in groups of 1):  ok1 fail\n     \
             ok1                          ... ok           15 ms\n     \
             fail                         ... FAILED       13 ms\n"
        );
        // The header names the tests as they finished, the lines keep the
        // schedule's order (pg_isolation_regress 15, `test: ok1 missing`).
        let first = TestLine {
            finished: 1,
            ..t("ok1", true, 18)
        };
        let second = TestLine {
            finished: 0,
            ..t("missing", false, 0)
        };
        assert!(group_lines(&[first, second], None).starts_with(
            "parallel group (2 tests):  missing ok1\n     ok1                          ... ok           18 ms\n"
        ));
        // As many at once as the group has: no "in groups of".
        assert!(group_lines(&[t("a", true, 1), t("b", true, 1)], Some(2)).starts_with("parallel group (2 tests): "));
        assert_eq!(
            summary(5, 3, 1),
            "\n===================================================\n \
             4 of 5 tests failed, 1 of these failures ignored. \n\
             ===================================================\n\n"
        );
        assert_eq!(
            summary(2, 0, 1),
            "\n================================================\n \
             1 of 2 tests passed, 1 failed test(s) ignored. \n\
             ================================================\n\n"
        );
    }
}
