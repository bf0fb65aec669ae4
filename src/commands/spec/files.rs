//! Which specs a `lab spec` run has: files, directories, pg_regress
//! schedules; each parsed and checked before anything connects, and the
//! expected files it is compared with.
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

use super::msg;
use crate::specfile::{self, Spec};

/// One spec to run.
pub struct SpecFile {
    /// The test's name: the file name without `.spec`.
    pub name: String,
    pub path: PathBuf,
    pub spec: Spec,
    /// The steps no permutation uses (isolationtester warns about them).
    pub unused: Vec<String>,
    /// The expected outputs it may match (NAME.out, NAME_1.out ...), if compared.
    pub expected: Vec<PathBuf>,
    /// Its header says `# uses: bookstore`: it runs against the lab schema
    /// (lab's own specs), built in its database and first on the search_path.
    pub bookstore: bool,
    /// Its `# occurs-if:` conditions (lab's phenomena and hunt's
    /// reproducers): a permutation where one holds showed the anomaly.
    pub occurs_if: Vec<Vec<crate::commands::phenomena::Condition>>,
    /// In pg_regress's layout, a spec that could not be read or parsed is a
    /// failed test (the rest still run): why, as one line.
    pub broken: Option<String>,
    /// A schedule's `ignore:` line named it: its failure does not count.
    pub ignored: bool,
}

impl SpecFile {
    /// A test whose spec could not be read or parsed, with why.
    pub fn broken(path: &Path, why: String) -> SpecFile {
        SpecFile {
            name: test_name(path),
            path: path.to_path_buf(),
            spec: Spec::default(),
            unused: Vec::new(),
            expected: Vec::new(),
            bookstore: false,
            occurs_if: Vec::new(),
            broken: Some(why),
            ignored: false,
        }
    }
}

/// A test's name: its file's name without `.spec`.
fn test_name(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

/// One test to run: its spec file, and whether a schedule's `ignore:`
/// line named it before (pg_regress then reports its failure as "failed
/// (ignored)" and does not count it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Test {
    pub path: PathBuf,
    pub ignored: bool,
}

/// The specs to run, in schedule groups: a plain path is a group of its
/// own, a schedule's `test: a b c` line one group (pg_regress runs it at once).
pub type Groups = Vec<Vec<Test>>;

/// Reads and checks every spec the schedules and paths name, in
/// pg_regress's order: the schedules' tests first, then those named alone.
/// With `inputdir` (pg_regress's `--inputdir`), a name that is not a file
/// is a test: `inputdir/specs/NAME.spec`, and schedules look there too.
/// A schedule's group may hold `max_group` tests at most (pg_regress's
/// --max-concurrent-tests).
pub fn collect(
    paths: &[PathBuf],
    schedules: &[PathBuf],
    inputdir: Option<&Path>,
    max_group: Option<usize>,
) -> Result<Groups> {
    let mut groups = Vec::new();
    for s in schedules {
        groups.extend(schedule(s, inputdir, max_group)?);
    }
    let alone = |path: PathBuf| vec![Test { ignored: false, path }];
    for p in paths {
        if p.is_dir() {
            let mut in_dir: Vec<PathBuf> = std::fs::read_dir(p)
                .map_err(|e| crate::options::msg::unreadable(p.display().to_string(), e.to_string()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| f.extension().is_some_and(|x| x == "spec") && f.is_file())
                .collect();
            if in_dir.is_empty() {
                bail!(msg::no_specs_in(p.display().to_string()));
            }
            in_dir.sort();
            groups.extend(in_dir.into_iter().map(alone));
        } else if p.exists() {
            groups.push(alone(p.clone()));
        } else if let Some(found) = inputdir.and_then(|d| test_in(d, &p.to_string_lossy())) {
            groups.push(alone(found));
        } else if let Some(d) = inputdir {
            // Where a test of that name would be, too.
            let test = test_path(d, &p.to_string_lossy());
            bail!(msg::no_such_test(p.display().to_string(), test.display().to_string()));
        } else {
            bail!(msg::no_such_file(p.display().to_string()));
        }
    }
    if groups.is_empty() {
        bail!(msg::nothing_to_run());
    }
    Ok(groups)
}

/// A test's spec under a pg_regress input directory: DIR/specs/NAME.spec.
fn test_path(dir: &Path, name: &str) -> PathBuf {
    dir.join("specs").join(format!("{name}.spec"))
}

/// That spec, if it is there.
fn test_in(dir: &Path, name: &str) -> Option<PathBuf> {
    let p = test_path(dir, name);
    p.is_file().then_some(p)
}

/// pg_regress's schedule: `test: a b c` lines (a group pg_regress runs at
/// once), `ignore: a` lines (a later failure of `a` in this schedule does
/// not count: pg_regress 15 keeps the list per schedule file), `#`
/// comments; NAME is specs/NAME.spec (or NAME.spec) beside it, or under
/// `inputdir` when given.
pub fn schedule(path: &Path, inputdir: Option<&Path>, max_group: Option<usize>) -> Result<Groups> {
    let mut ignore = Vec::new();
    let text = std::fs::read_to_string(path)
        .map_err(|e| crate::options::msg::unreadable(path.display().to_string(), e.to_string()))?;
    let dir = inputdir.unwrap_or_else(|| path.parent().unwrap_or(Path::new(".")));
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(name) = line.strip_prefix("ignore:") {
            // As pg_regress 15 reads it: the rest of the line is one name.
            ignore.push(name.trim().to_string());
            continue;
        }
        let Some(names) = line.strip_prefix("test:") else {
            bail!(msg::bad_schedule_line(path.display().to_string(), i + 1, line));
        };
        let names: Vec<&str> = names.split_whitespace().collect();
        if let Some(max) = max_group
            && names.len() > max
        {
            bail!(msg::too_many_parallel(max, path.display().to_string(), i + 1, line));
        }
        let mut group = Vec::new();
        for name in names {
            let found = test_in(dir, name).or_else(|| {
                let p = dir.join(format!("{name}.spec"));
                p.is_file().then_some(p)
            });
            // (pg_regress stops the run there too: "diff command failed".)
            let path = match found {
                Some(p) => p,
                None => bail!(msg::schedule_missing(path.display().to_string(), i + 1, name)),
            };
            group.push(Test {
                path,
                ignored: ignore.iter().any(|n| n == name),
            });
        }
        if !group.is_empty() {
            out.push(group);
        }
    }
    Ok(out)
}

/// Parses and checks one spec file: `FILE:LINE: message` when it does not parse.
pub fn load(path: &Path) -> Result<SpecFile> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => msg::no_such_file(shown.clone()),
        _ => crate::options::msg::unreadable(shown.clone(), e.to_string()),
    })?;
    parsed(path, &text)
}

/// A spec's text parsed and checked, as if read from `path`.
pub fn parsed(path: &Path, text: &str) -> Result<SpecFile> {
    let shown = path.display().to_string();
    let spec = specfile::parse(text).map_err(|e| msg::parse_error(shown.clone(), e.line, e.message))?;
    let unused = spec.check().map_err(|e| msg::invalid(shown.clone(), e.to_string()))?;
    let name = test_name(path);
    let bookstore = spec.header.iter().any(|l| l.trim() == "uses: bookstore");
    let occurs_if = crate::commands::phenomena::occurs_if(&spec, &shown)?;
    Ok(SpecFile {
        name,
        path: path.to_path_buf(),
        spec,
        unused,
        expected: Vec::new(),
        bookstore,
        occurs_if,
        broken: None,
        ignored: false,
    })
}

/// The expected files a test may match, as pg_regress looks for them:
/// NAME.out, then NAME_0.out ... NAME_9.out.
pub fn expected_in(dir: &Path, name: &str) -> Vec<PathBuf> {
    std::iter::once(dir.join(format!("{name}.out")))
        .chain((0..=9).map(|i| dir.join(format!("{name}_{i}.out"))))
        .filter(|p| p.is_file())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `ignore: NAME` counts for the tests after it (pg_regress 15 reads
    /// the schedule as it runs it); a group larger than --max-concurrent-tests
    /// is refused with the line pg_regress prints.
    #[test]
    fn ignore_lines_mark_later_tests_and_groups_are_bounded() {
        let dir = std::env::temp_dir().join(format!("lab-files-ignore-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("specs")).unwrap();
        for name in ["a", "b"] {
            std::fs::write(
                dir.join(format!("specs/{name}.spec")),
                "session s\nstep x { SELECT 1; }\n",
            )
            .unwrap();
        }
        let schedule = dir.join("schedule");
        std::fs::write(&schedule, "test: b\nignore: b\ntest: a b\n").unwrap();
        // A second schedule has a list of its own (pg_regress 15 ran it so).
        let other = dir.join("other");
        std::fs::write(&other, "test: b\n").unwrap();
        let groups = collect(&[], &[schedule.clone(), other], Some(&dir), None).unwrap();
        let marks: Vec<Vec<bool>> = groups.iter().map(|g| g.iter().map(|t| t.ignored).collect()).collect();
        assert_eq!(marks, [vec![false], vec![false, true], vec![false]]);
        let refused = super::schedule(&schedule, Some(&dir), Some(1));
        std::fs::remove_dir_all(&dir).unwrap();
        let err = crate::i18n::error_line(&refused.unwrap_err(), crate::i18n::Lang::En);
        assert!(
            err.starts_with("too many parallel tests (more than 1) in schedule file \"")
                && err.ends_with("\" line 3: test: a b"),
            "{err}"
        );
    }

    /// pg_regress runs the schedules' tests first, then those named alone.
    #[test]
    fn schedules_come_before_tests_named_alone() {
        let dir = std::env::temp_dir().join(format!("lab-files-order-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("specs")).unwrap();
        for name in ["alone", "scheduled"] {
            std::fs::write(
                dir.join(format!("specs/{name}.spec")),
                "session s\nstep x { SELECT 1; }\n",
            )
            .unwrap();
        }
        let schedule = dir.join("schedule");
        std::fs::write(&schedule, "# a comment\ntest: scheduled\n").unwrap();
        let groups = collect(
            &[PathBuf::from("alone")],
            std::slice::from_ref(&schedule),
            Some(&dir),
            None,
        );
        std::fs::remove_dir_all(&dir).unwrap();
        let names: Vec<Vec<String>> = (groups.unwrap().iter())
            .map(|g| {
                g.iter()
                    .map(|t| t.path.file_stem().unwrap().to_string_lossy().into())
                    .collect()
            })
            .collect();
        assert_eq!(names, [["scheduled"], ["alone"]]);
    }
}
