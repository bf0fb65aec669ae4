//! What libpq reads besides the connection string, so lab reaches the same
//! server as psql with the same setup: the password file (`~/.pgpass`,
//! `PGPASSFILE`) and the connection service file (`PGSERVICE`,
//! `~/.pg_service.conf`, `PGSERVICEFILE`, `PGSYSCONFDIR/pg_service.conf`).
//! The parsing is pure (text in, values out) and unit-tested.
use std::path::{Path, PathBuf};

/// The password for a connection from a password file's text, as libpq
/// matches it: the first line whose host, port, database and user each equal
/// the connection's or are `*`; `\:` and `\\` escape inside fields; lines
/// starting with `#` are comments.
pub fn pgpass_lookup(text: &str, host: &str, port: u16, dbname: &str, user: &str) -> Option<String> {
    let port = port.to_string();
    for line in text.lines() {
        let line = line.trim_end_matches('\r');
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields = split_escaped(line);
        if fields.len() < 5 {
            continue;
        }
        let want = [host, port.as_str(), dbname, user];
        if fields[..4].iter().zip(want).all(|(f, w)| f == "*" || f == w) {
            // A password may itself hold ':' (escaped); everything after the
            // fourth separator is the password.
            return Some(fields[4..].join(":"));
        }
    }
    None
}

fn split_escaped(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(n) = chars.next() {
                    fields.last_mut().unwrap().push(n);
                }
            }
            ':' => fields.push(String::new()),
            c => fields.last_mut().unwrap().push(c),
        }
    }
    fields
}

/// The password file libpq would read, when it is usable: `PGPASSFILE`, else
/// `~/.pgpass`; like libpq, a file others can read is ignored (with the reason).
pub fn pgpass_file(env: &dyn Fn(&str) -> Option<String>) -> Result<Option<PathBuf>, String> {
    let path = match env("PGPASSFILE") {
        Some(p) => PathBuf::from(p),
        None => match env("HOME") {
            Some(home) => Path::new(&home).join(".pgpass"),
            None => return Ok(None),
        },
    };
    let Ok(meta) = std::fs::metadata(&path) else {
        return Ok(None);
    };
    use std::os::unix::fs::PermissionsExt;
    if meta.is_file() && meta.permissions().mode() & 0o077 != 0 {
        return Err(path.display().to_string());
    }
    Ok(meta.is_file().then_some(path))
}

/// The settings of service `name` from a service file's text (INI: `[name]`
/// then `key=value` lines), or None when the file has no such section.
pub fn service_section(text: &str, name: &str) -> Option<Vec<(String, String)>> {
    let mut found = None::<Vec<(String, String)>>;
    let mut inside = false;
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(section) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            if found.is_some() && inside {
                break;
            }
            inside = section.trim() == name;
            if inside {
                found = Some(Vec::new());
            }
            continue;
        }
        if inside
            && let Some((k, v)) = line.split_once('=')
            && let Some(f) = found.as_mut()
        {
            f.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    found
}

/// The service files libpq reads for `PGSERVICE`, in its order: the user's
/// (`PGSERVICEFILE`, else `~/.pg_service.conf`), then the system's
/// (`PGSYSCONFDIR/pg_service.conf`, else the Debian package's directory).
pub fn service_files(env: &dyn Fn(&str) -> Option<String>) -> Vec<PathBuf> {
    let mut files = Vec::new();
    match env("PGSERVICEFILE") {
        Some(p) => files.push(PathBuf::from(p)),
        None => {
            if let Some(home) = env("HOME") {
                files.push(Path::new(&home).join(".pg_service.conf"));
            }
        }
    }
    let sysconf = env("PGSYSCONFDIR").unwrap_or_else(|| "/etc/postgresql-common".to_string());
    files.push(Path::new(&sysconf).join("pg_service.conf"));
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pgpass_matches_as_libpq_does() {
        let text = "# comment\n\
                    db.example:5432:shop:app:first\n\
                    *:6543:*:app:pooled\\:pw\n\
                    localhost:*:*:*:local\\\\pw\n";
        assert_eq!(
            pgpass_lookup(text, "db.example", 5432, "shop", "app").as_deref(),
            Some("first")
        );
        assert_eq!(pgpass_lookup(text, "db.example", 5432, "other", "app"), None);
        assert_eq!(
            pgpass_lookup(text, "anywhere", 6543, "x", "app").as_deref(),
            Some("pooled:pw")
        );
        assert_eq!(
            pgpass_lookup(text, "localhost", 1, "d", "u").as_deref(),
            Some("local\\pw")
        );
        assert_eq!(pgpass_lookup(text, "elsewhere", 1, "d", "u"), None);
        assert_eq!(pgpass_lookup("short:line\n", "short", 1, "d", "u"), None);
    }

    #[test]
    fn service_sections_are_read_by_name() {
        let text = "[other]\nhost=a\n\n# c\n[shop]\nhost = db.example\nport=6543\ndbname=shop\n[after]\nhost=b\n";
        assert_eq!(
            service_section(text, "shop").unwrap(),
            vec![
                ("host".to_string(), "db.example".to_string()),
                ("port".to_string(), "6543".to_string()),
                ("dbname".to_string(), "shop".to_string()),
            ]
        );
        assert_eq!(service_section(text, "missing"), None);
    }
}
