//! The files under `lab/`: the copies embedded in the binary, or edited
//! copies in a directory given with `--lab-dir` (or `LAB_DIR`). A file the
//! directory does not have is taken from the embedded copies, so a teacher
//! can copy and change only the file they are changing.
use std::borrow::Cow;
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

use crate::i18n::Context;

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/embedded.rs"));
}

#[derive(Debug, Clone, Default)]
pub struct LabFiles {
    dir: Option<PathBuf>,
}

impl LabFiles {
    pub fn embedded() -> LabFiles {
        LabFiles { dir: None }
    }

    /// Files from `dir` where it has them.
    pub fn with_dir(dir: &Path) -> Result<LabFiles> {
        if !dir.is_dir() {
            bail!(msg::not_a_dir(dir.display().to_string()));
        }
        Ok(LabFiles {
            dir: Some(dir.to_path_buf()),
        })
    }

    /// `--lab-dir DIR` where given, else the embedded files.
    pub fn of(dir: Option<&Path>) -> Result<LabFiles> {
        match dir {
            Some(d) => LabFiles::with_dir(d),
            None => Ok(LabFiles::embedded()),
        }
    }

    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// The text of `name` (a path relative to lab/, e.g. `lost-update.spec`).
    pub fn read(&self, name: &str) -> Result<Cow<'static, str>> {
        if let Some(dir) = &self.dir {
            let path = dir.join(name);
            if path.exists() {
                let text = std::fs::read_to_string(&path).ctx(|| msg::unreadable(path.display().to_string()))?;
                return Ok(Cow::Owned(text));
            }
        }
        match embedded::EMBEDDED.iter().find(|(n, _)| *n == name) {
            Some((_, text)) => Ok(Cow::Borrowed(text)),
            None => bail!(msg::no_such_file(name)),
        }
    }

    /// The lab schema `schema` made afresh from these files' schema.sql and
    /// seed.sql (refused if a schema of that name is not lab's).
    pub async fn build_schema(&self, control: &tokio_postgres::Client, schema: &str) -> Result<()> {
        let (schema_sql, seed_sql) = (self.read("schema.sql")?, self.read("seed.sql")?);
        crate::postgres::connect::rebuild_schema(control, schema, &schema_sql, &seed_sql).await
    }

    /// Whether `name` comes from the edited directory.
    pub fn edited(&self, name: &str) -> bool {
        self.dir.as_ref().is_some_and(|d| d.join(name).exists())
    }

    /// The names of every embedded file.
    pub fn names() -> impl Iterator<Item = &'static str> {
        embedded::EMBEDDED.iter().map(|(n, _)| *n)
    }
}

pub(crate) mod msg {
    crate::messages! {
        prefix "fi";
        not_a_dir(dir) {
            en: "--lab-dir {dir} is not a directory",
            tr: "--lab-dir {dir} bir dizin değil",
        }
        unreadable(path) {
            en: "could not read {path}",
            tr: "{path} okunamadı",
        }
        no_such_file(name) {
            en: "lab has no file {name}",
            tr: "lab'da {name} diye bir dosya yok",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_in_lab_is_embedded() {
        // lab/examples/ holds specs for `lab spec`, read from disk.
        let on_disk: Vec<String> = walk(Path::new(env!("CARGO_MANIFEST_DIR")).join("lab").as_path())
            .into_iter()
            .filter(|f| !f.starts_with("examples/"))
            .collect();
        let embedded: Vec<&str> = LabFiles::names().collect();
        assert_eq!(on_disk.len(), embedded.len(), "{on_disk:?} vs {embedded:?}");
        for f in &on_disk {
            assert!(embedded.contains(&f.as_str()), "{f} is not embedded");
        }
    }

    fn walk(dir: &Path) -> Vec<String> {
        fn go(dir: &Path, root: &Path, out: &mut Vec<String>) {
            for e in std::fs::read_dir(dir).unwrap().flatten() {
                let p = e.path();
                if p.is_dir() {
                    go(&p, root, out);
                } else if p.extension().is_some_and(|x| x == "spec" || x == "sql" || x == "conf") {
                    out.push(p.strip_prefix(root).unwrap().to_string_lossy().into_owned());
                }
            }
        }
        let mut out = Vec::new();
        go(dir, dir, &mut out);
        out
    }

    #[test]
    fn an_edited_copy_wins_and_the_rest_comes_from_the_binary() {
        let dir = std::env::temp_dir().join(format!("lab-files-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("seed.sql"), "-- edited").unwrap();
        let files = LabFiles::with_dir(&dir).unwrap();
        assert_eq!(files.read("seed.sql").unwrap(), "-- edited");
        assert!(files.edited("seed.sql"));
        assert!(files.read("schema.sql").unwrap().contains("CREATE TABLE books"));
        assert!(!files.edited("schema.sql"));
        assert!(files.read("nope.sql").is_err());
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(LabFiles::with_dir(&dir).is_err());
    }
}
