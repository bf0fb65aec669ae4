//! Which specs a `lab spec` run has: files, directories, pg_regress
//! schedules; each parsed and checked before anything connects, and the
//! expected files it is compared with.
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

use super::msg;
use crate::spec::{self, Spec};

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
}

/// Reads and checks every spec the paths and schedules name, in order.
pub fn collect(paths: &[PathBuf], schedules: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut in_dir: Vec<PathBuf> = std::fs::read_dir(p)
                .map_err(|e| msg::unreadable(p.display().to_string(), e.to_string()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| f.extension().is_some_and(|x| x == "spec") && f.is_file())
                .collect();
            if in_dir.is_empty() {
                bail!(msg::no_specs_in(p.display().to_string()));
            }
            in_dir.sort();
            files.extend(in_dir);
        } else if p.exists() {
            files.push(p.clone());
        } else {
            bail!(msg::no_such_file(p.display().to_string()));
        }
    }
    for s in schedules {
        files.extend(schedule(s)?);
    }
    if files.is_empty() {
        bail!(msg::nothing_to_run());
    }
    Ok(files)
}

/// pg_regress's schedule: `test: a b c` lines (a group pg_regress runs at
/// once), `#` comments; NAME is specs/NAME.spec (or NAME.spec) beside it.
pub fn schedule(path: &Path) -> Result<Vec<PathBuf>> {
    let text = std::fs::read_to_string(path).map_err(|e| msg::unreadable(path.display().to_string(), e.to_string()))?;
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some(names) = line.strip_prefix("test:") else {
            bail!(msg::bad_schedule_line(path.display().to_string(), i + 1, line));
        };
        for name in names.split_whitespace() {
            let found = [
                dir.join("specs").join(format!("{name}.spec")),
                dir.join(format!("{name}.spec")),
            ]
            .into_iter()
            .find(|p| p.is_file());
            match found {
                Some(p) => out.push(p),
                None => bail!(msg::schedule_missing(path.display().to_string(), i + 1, name)),
            }
        }
    }
    Ok(out)
}

/// Parses and checks one spec file: `FILE:LINE: message` when it does not parse.
pub fn load(path: &Path) -> Result<SpecFile> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| msg::unreadable(shown.clone(), e.to_string()))?;
    parsed(path, &text)
}

/// A spec's text parsed and checked, as if read from `path`.
pub fn parsed(path: &Path, text: &str) -> Result<SpecFile> {
    let shown = path.display().to_string();
    let spec = spec::parse(text).map_err(|e| msg::parse_error(shown.clone(), e.line, e.message))?;
    let unused = spec.check().map_err(|e| msg::invalid(shown.clone(), e.to_string()))?;
    let name = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| shown.clone());
    let bookstore = spec.header.iter().any(|l| l.trim() == "uses: bookstore");
    Ok(SpecFile {
        name,
        path: path.to_path_buf(),
        spec,
        unused,
        expected: Vec::new(),
        bookstore,
    })
}

/// The expected files a test may match, as pg_regress looks for them:
/// NAME.out, then NAME_1.out ... NAME_9.out.
pub fn expected_in(dir: &Path, name: &str) -> Vec<PathBuf> {
    std::iter::once(dir.join(format!("{name}.out")))
        .chain((1..=9).map(|i| dir.join(format!("{name}_{i}.out"))))
        .filter(|p| p.is_file())
        .collect()
}
