//! Named statements from the SQL files in lab/ (the code-driven scenarios'
//! statements and lab's own reads). Each file is a walkthrough a person can
//! follow in psql; a statement is the text after a `-- name: x` line up to
//! the next blank line. Values are psql variables (`:name`), set with `\set`
//! by hand and bound here by the lab. `-- why:` and `-- why-tr:` lines in a
//! statement's block say why a session runs it (shown by `--step`).
use std::collections::HashMap;

use anyhow::{Result, bail};

use crate::files::LabFiles;
use crate::i18n::Lang;

#[derive(Clone)]
pub struct SqlFile {
    pub path: String,
    statements: Vec<Statement>,
}

#[derive(Clone)]
struct Statement {
    name: String,
    sql: String,
    why_en: Option<String>,
    why_tr: Option<String>,
}

impl SqlFile {
    pub fn load(files: &LabFiles, path: &str) -> Result<SqlFile> {
        Ok(SqlFile::parse(path, &files.read(path)?))
    }

    pub fn parse(path: &str, text: &str) -> SqlFile {
        SqlFile {
            path: path.to_string(),
            statements: parse(text),
        }
    }

    fn statement(&self, name: &str) -> Result<&Statement> {
        match self.statements.iter().find(|s| s.name == name) {
            Some(s) => Ok(s),
            None => bail!(msg::no_statement(&self.path, name)),
        }
    }

    /// The statement called `name`, without its trailing semicolon.
    pub fn get(&self, name: &str) -> Result<&str> {
        Ok(&self.statement(name)?.sql)
    }

    /// The statement with its psql variables replaced by the given values.
    pub fn bind(&self, name: &str, params: &[(&str, &(dyn std::fmt::Display + Sync))]) -> Result<String> {
        let st = self.statement(name)?;
        bind(&st.sql, params).map_err(|var| msg::no_bind_value(&self.path, name, var).into())
    }

    pub fn names(&self) -> Vec<&str> {
        self.statements.iter().map(|s| s.name.as_str()).collect()
    }

    /// Why each statement runs, in `lang`, by name.
    pub fn whys(&self, lang: Lang) -> HashMap<String, String> {
        self.statements
            .iter()
            .filter_map(|s| {
                let why = match lang {
                    Lang::En => s.why_en.clone(),
                    Lang::Tr => s.why_tr.clone(),
                }?;
                Some((s.name.clone(), why))
            })
            .collect()
    }
}

fn parse(text: &str) -> Vec<Statement> {
    let mut out = Vec::new();
    let mut current: Option<Statement> = None;
    let mut lines: Vec<&str> = Vec::new();
    let mut flush = |cur: &mut Option<Statement>, lines: &mut Vec<&str>| {
        if let Some(mut st) = cur.take() {
            st.sql = lines.join("\n").trim().trim_end_matches(';').trim().to_string();
            out.push(st);
        }
        lines.clear();
    };
    for line in text.lines() {
        let t = line.trim();
        if let Some(name) = t.strip_prefix("-- name:") {
            flush(&mut current, &mut lines);
            current = Some(Statement {
                name: name.trim().to_string(),
                sql: String::new(),
                why_en: None,
                why_tr: None,
            });
        } else if t.is_empty() {
            flush(&mut current, &mut lines);
        } else if let Some(st) = current.as_mut() {
            if let Some(why) = t.strip_prefix("-- why:") {
                st.why_en = Some(why.trim().to_string());
            } else if let Some(why) = t.strip_prefix("-- why-tr:") {
                st.why_tr = Some(why.trim().to_string());
            } else if !t.starts_with("--") {
                // Other comments inside a block document it for psql readers.
                lines.push(line);
            }
        }
    }
    flush(&mut current, &mut lines);
    out
}

/// Replaces `:var` (not `::cast`) with the value given for `var`; the name of
/// a variable with no value is the error.
pub fn bind(sql: &str, params: &[(&str, &(dyn std::fmt::Display + Sync))]) -> std::result::Result<String, String> {
    let chars: Vec<char> = sql.chars().collect();
    let mut out = String::with_capacity(sql.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let prev_colon = i > 0 && chars[i - 1] == ':';
        let next_ident = chars.get(i + 1).is_some_and(|n| n.is_ascii_alphabetic() || *n == '_');
        // psql's :'var': the value as a quoted literal; :"var": as a quoted identifier.
        let quote = match chars.get(i + 1) {
            Some(&q) if c == ':' && !prev_colon && (q == '\'' || q == '"') => Some(q),
            _ => None,
        };
        if let Some(q) = quote {
            let start = i + 2;
            let mut end = start;
            while end < chars.len() && (chars[end].is_ascii_alphanumeric() || chars[end] == '_') {
                end += 1;
            }
            if end > start && chars.get(end) == Some(&q) {
                let var: String = chars[start..end].iter().collect();
                match params.iter().find(|(n, _)| *n == var) {
                    Some((_, v)) => {
                        let doubled = v.to_string().replace(q, &format!("{q}{q}"));
                        out.push_str(&format!("{q}{doubled}{q}"));
                    }
                    None => return Err(var),
                }
                i = end + 1;
                continue;
            }
        }
        if c == ':' && !prev_colon && next_ident {
            let start = i + 1;
            let mut end = start;
            while end < chars.len() && (chars[end].is_ascii_alphanumeric() || chars[end] == '_') {
                end += 1;
            }
            let var: String = chars[start..end].iter().collect();
            match params.iter().find(|(n, _)| *n == var) {
                Some((_, v)) => out.push_str(&v.to_string()),
                None => return Err(var),
            }
            i = end;
        } else {
            out.push(c);
            i += 1;
        }
    }
    Ok(out)
}

pub(crate) mod msg {
    crate::messages! {
        prefix "sq";
        no_statement(file, name) {
            en: "{file} has no statement named {name}",
            tr: "{file} içinde {name} adlı bir komut yok",
        }
        no_bind_value(file, name, var) {
            en: "{file}: {name}: no value for :{var}",
            tr: "{file}: {name}: :{var} için değer yok",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file() -> SqlFile {
        SqlFile::parse(
            "test.sql",
            "-- intro comment\n\n-- name: a\n-- why: to read\n-- why-tr: okumak için\n-- a psql note\nSELECT 1::int\n  FROM t;\n\n\
             -- name: b\nUPDATE t SET x = :x WHERE id = :id AND y = :x;\n",
        )
    }

    #[test]
    fn statements_are_found_by_name_with_their_reasons() {
        let f = file();
        assert_eq!(f.names(), vec!["a", "b"]);
        assert_eq!(f.get("a").unwrap(), "SELECT 1::int\n  FROM t");
        assert!(f.get("zzz").is_err());
        assert_eq!(f.whys(Lang::En).get("a").map(String::as_str), Some("to read"));
        assert_eq!(f.whys(Lang::Tr).get("a").map(String::as_str), Some("okumak için"));
        assert!(!f.whys(Lang::En).contains_key("b"));
    }

    #[test]
    fn variables_are_bound_and_casts_left_alone() {
        let f = file();
        assert_eq!(
            f.bind("b", &[("x", &35), ("id", &1)]).unwrap(),
            "UPDATE t SET x = 35 WHERE id = 1 AND y = 35"
        );
        assert_eq!(bind("SELECT '1'::int", &[]).unwrap(), "SELECT '1'::int");
        assert_eq!(
            bind("SELECT :'lsn'::pg_lsn", &[("lsn", &"0/3'0")]).unwrap(),
            "SELECT '0/3''0'::pg_lsn"
        );
        assert_eq!(
            bind("VACUUM :\"schema\".t", &[("schema", &"la\"b")]).unwrap(),
            "VACUUM \"la\"\"b\".t"
        );
        assert!(f.bind("b", &[("x", &1)]).is_err());
    }
}
