//! Named statements from the files in lab/. Each file is a walkthrough a
//! person can follow in psql; a statement is the text after a `-- name: x`
//! line up to the next blank line. Values are psql variables (`:name`), set
//! with `\set` by hand and bound here by the lab.
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use anyhow::{Result, bail};

pub struct SqlFile {
    pub path: &'static str,
    text: &'static str,
    parsed: OnceLock<Vec<Statement>>,
}

impl SqlFile {
    pub const fn new(path: &'static str, text: &'static str) -> SqlFile {
        SqlFile {
            path,
            text,
            parsed: OnceLock::new(),
        }
    }

    fn statements(&self) -> &[Statement] {
        self.parsed.get_or_init(|| parse(self.text))
    }

    fn statement(&self, name: &str) -> Result<&Statement> {
        match self.statements().iter().find(|s| s.name == name) {
            Some(s) => Ok(s),
            None => bail!(crate::tr!("ru.no_statement", file = self.path, name = name)),
        }
    }

    /// The statement called `name`, without its trailing semicolon.
    pub fn get(&self, name: &str) -> Result<&str> {
        let st = self.statement(name)?;
        self.remember(&st.sql, name);
        Ok(&st.sql)
    }

    /// The statement with its psql variables replaced by the given values.
    pub fn bind(&self, name: &str, params: &[(&str, &(dyn std::fmt::Display + Sync))]) -> Result<String> {
        let st = self.statement(name)?;
        let sql = bind(&st.sql, params).map_err(|e| anyhow::anyhow!("{}: {name}: {e}", self.path))?;
        self.remember(&sql, name);
        Ok(sql)
    }

    /// The file's name without its directory and `.sql`, e.g. `lost-update`.
    pub fn stem(&self) -> &'static str {
        let file = self.path.rsplit('/').next().unwrap_or(self.path);
        file.strip_suffix(".sql").unwrap_or(file)
    }

    fn remember(&self, sql: &str, name: &str) {
        if !TRACKING.load(std::sync::atomic::Ordering::Relaxed) {
            return;
        }
        HANDED_OUT
            .get_or_init(Mutex::default)
            .lock()
            .unwrap()
            .insert(sql.to_string(), format!("{}.{name}", self.stem()));
    }

    pub fn names(&self) -> Vec<&str> {
        self.statements().iter().map(|s| s.name.as_str()).collect()
    }
}

/// Statement texts handed out, with where they come from (`file-stem.name`):
/// `--step` looks up "why.<that>" in the language's texts before a session runs one.
static HANDED_OUT: OnceLock<Mutex<HashMap<String, String>>> = OnceLock::new();

/// Off unless a person steps through statements: then every statement handed
/// out is remembered (a map insert per bind is not worth paying otherwise).
static TRACKING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

pub fn track_origins() {
    TRACKING.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// `file-stem.name` of a statement handed out by a [`SqlFile`] since [`track_origins`].
pub fn origin_of(sql: &str) -> Option<String> {
    HANDED_OUT.get()?.lock().unwrap().get(sql).cloned()
}

struct Statement {
    name: String,
    sql: String,
}

type Building<'a> = Option<(String, Vec<&'a str>)>;

fn parse(text: &str) -> Vec<Statement> {
    let mut out = Vec::new();
    let mut current: Building = None;
    let mut flush = |cur: &mut Building| {
        if let Some((name, lines)) = cur.take() {
            let sql = lines.join("\n").trim().trim_end_matches(';').trim().to_string();
            out.push(Statement { name, sql });
        }
    };
    for line in text.lines() {
        if let Some(name) = line.trim().strip_prefix("-- name:") {
            flush(&mut current);
            current = Some((name.trim().to_string(), Vec::new()));
        } else if line.trim().is_empty() {
            flush(&mut current);
        } else if let Some((_, lines)) = current.as_mut() {
            // Comments inside a statement's block document it for psql readers;
            // `--step` takes its words from the language files.
            if !line.trim_start().starts_with("--") {
                lines.push(line);
            }
        }
    }
    flush(&mut current);
    out
}

/// Replaces `:var` (not `::cast`) with the value given for `var`.
pub fn bind(sql: &str, params: &[(&str, &(dyn std::fmt::Display + Sync))]) -> Result<String> {
    let chars: Vec<char> = sql.chars().collect();
    let mut out = String::with_capacity(sql.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let prev_colon = i > 0 && chars[i - 1] == ':';
        let next_ident = chars.get(i + 1).is_some_and(|n| n.is_ascii_alphabetic() || *n == '_');
        if c == ':' && !prev_colon && next_ident {
            let start = i + 1;
            let mut end = start;
            while end < chars.len() && (chars[end].is_ascii_alphanumeric() || chars[end] == '_') {
                end += 1;
            }
            let var: String = chars[start..end].iter().collect();
            match params.iter().find(|(n, _)| *n == var) {
                Some((_, v)) => out.push_str(&v.to_string()),
                None => bail!(crate::tr!("ru.no_bind_value", var = var)),
            }
            i = end;
        } else {
            out.push(c);
            i += 1;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    static F: SqlFile = SqlFile::new(
        "test.sql",
        "-- intro comment\n\n-- name: a\n-- why\nSELECT 1::int\n  FROM t;\n\n-- name: b\nUPDATE t SET x = :x WHERE id = :id AND y = :x;\n",
    );

    #[test]
    fn statements_are_found_by_name() {
        assert_eq!(F.names(), vec!["a", "b"]);
        assert_eq!(F.get("a").unwrap(), "SELECT 1::int\n  FROM t");
        assert!(F.get("zzz").is_err());
    }

    #[test]
    fn a_statement_handed_out_knows_where_it_comes_from() {
        track_origins();
        let sql = F.get("a").unwrap().to_string();
        assert_eq!(origin_of(&sql).as_deref(), Some("test.a"));
        let bound = F.bind("b", &[("x", &1), ("id", &2)]).unwrap();
        assert_eq!(origin_of(&bound).as_deref(), Some("test.b"));
        assert_eq!(origin_of("SELECT 'never handed out'"), None);
    }

    #[test]
    fn variables_are_bound_and_casts_left_alone() {
        assert_eq!(
            F.bind("b", &[("x", &35), ("id", &1)]).unwrap(),
            "UPDATE t SET x = 35 WHERE id = 1 AND y = 35"
        );
        assert_eq!(bind("SELECT '1'::int", &[]).unwrap(), "SELECT '1'::int");
        assert!(F.bind("b", &[("x", &1)]).is_err());
    }
}
