//! What a person types into `lab shell`, read without a server: a
//! backslash command, or SQL for a session (the current one, or the one a
//! `B:` prefix names), gathered over lines until a statement ends with `;`.
use std::ffi::OsStr;
use std::path::PathBuf;

use crate::sql_lexer;

/// A backslash command.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    Help,
    Quit,
    /// `\s B`: B becomes the current session.
    Switch(String),
    Timeline,
    Locks,
    Save(PathBuf),
    Html(PathBuf),
    /// `\run STEP [STEP ...]`: a loaded spec's steps, each on its own session.
    Run(Vec<String>),
    /// `\steps`: the loaded spec's steps.
    Steps,
    /// `\setup SQL`: run on lab's own connection, saved as the spec's setup.
    Setup(String),
    /// `\predict [on|off]`: guess first.
    Predict(Option<bool>),
    /// A command given a wrong argument, or none where it needs one: its usage.
    Usage(String),
    /// A command lab does not know.
    Unknown(String),
    /// `C: ...` where the shell has no session C (no SQL starts that way).
    NoSession(String),
}

/// What a complete input is.
#[derive(Debug, Clone, PartialEq)]
pub enum Input {
    Command(Command),
    /// Statements for a session (`None`: the current one).
    Sql {
        session: Option<String>,
        statements: Vec<String>,
    },
}

/// Lines typed so far, until they make an input.
#[derive(Debug, Default)]
pub struct Buffer {
    text: String,
    session: Option<String>,
}

impl Buffer {
    /// Whether nothing is part-way typed: no statement, and no `B:` alone
    /// on its line waiting for its statement (the prompt says so).
    pub fn is_empty(&self) -> bool {
        self.text.trim().is_empty() && self.session.is_none()
    }

    /// What is typed so far.
    pub fn text(&self) -> &str {
        self.text.trim()
    }

    /// The session a `B:` prefix gave it, if one did.
    pub fn session(&self) -> Option<&str> {
        self.session.as_deref()
    }

    pub fn clear(&mut self) {
        self.text.clear();
        self.session = None;
    }

    /// Takes one typed line; an input once the line completes one.
    /// `sessions` are the names a `B:` prefix may give.
    ///
    /// A backslash command acts wherever it is typed, as in psql: part-way
    /// through a statement too (which it leaves as typed so far), unless a
    /// quote, dollar quote or comment the statement opened is still open.
    pub fn push(&mut self, line: &str, sessions: &[String]) -> Option<Input> {
        if !self.is_empty()
            && let Some(rest) = line.trim_start().strip_prefix('\\')
            && !sql_lexer::left_open(&self.text)
        {
            return Some(Input::Command(command(rest.trim_end())));
        }
        if self.is_empty() {
            self.clear();
            let t = line.trim();
            if t.is_empty() {
                return None;
            }
            if let Some(rest) = t.strip_prefix('\\') {
                return Some(Input::Command(command(rest)));
            }
            if let Some((name, rest)) = t.split_once(':') {
                if let Some(s) = sessions.iter().find(|s| s.eq_ignore_ascii_case(name.trim())) {
                    self.session = Some(s.clone());
                    return self.add(rest);
                }
                // One word and a colon starts no SQL statement: a session's name mistyped.
                let word = name.trim();
                if !word.is_empty() && word.len() <= 16 && word.chars().all(|c| c.is_alphanumeric() || c == '_') {
                    return Some(Input::Command(Command::NoSession(word.to_string())));
                }
            }
        }
        self.add(line)
    }

    fn add(&mut self, line: &str) -> Option<Input> {
        if !self.text.is_empty() {
            self.text.push('\n');
        }
        self.text.push_str(line);
        if !sql_lexer::ends_statement(&self.text) {
            return None;
        }
        let statements = sql_lexer::statements(&self.text)
            .into_iter()
            .map(str::to_string)
            .collect();
        let session = self.session.take();
        self.text.clear();
        Some(Input::Sql { session, statements })
    }
}

fn command(text: &str) -> Command {
    let home = std::env::var_os("HOME");
    command_in(text, home.as_deref())
}

/// [`command`], with `home` the directory a leading `~` names.
fn command_in(text: &str, home: Option<&OsStr>) -> Command {
    let (name, arg) = match text.split_once(char::is_whitespace) {
        Some((n, a)) => (n, a.trim()),
        None => (text.trim(), ""),
    };
    let path = |c: fn(PathBuf) -> Command| {
        if arg.is_empty() {
            Command::Usage(format!("\\{name} FILE"))
        } else {
            c(typed_path(arg, home))
        }
    };
    // A command that takes no argument says so when it is given one.
    let bare = |c: Command| {
        if arg.is_empty() {
            c
        } else {
            Command::Usage(format!("\\{name}"))
        }
    };
    match name {
        "?" | "help" => Command::Help,
        "q" | "quit" => Command::Quit,
        "s" if !arg.is_empty() => Command::Switch(arg.to_string()),
        "s" => Command::Usage("\\s SESSION".into()),
        "timeline" | "t" => bare(Command::Timeline),
        "locks" | "l" => bare(Command::Locks),
        "save" => path(Command::Save),
        "html" => path(Command::Html),
        "run" | "r" if !arg.is_empty() => Command::Run(arg.split_whitespace().map(str::to_string).collect()),
        "run" | "r" => Command::Usage("\\run STEP".into()),
        "steps" => bare(Command::Steps),
        "setup" if !arg.is_empty() => Command::Setup(arg.trim_end_matches(';').trim().to_string()),
        "setup" => Command::Usage("\\setup SQL".into()),
        "predict" => match arg {
            "" => Command::Predict(None),
            "on" => Command::Predict(Some(true)),
            "off" => Command::Predict(Some(false)),
            _ => Command::Usage("\\predict [on|off]".into()),
        },
        other => Command::Unknown(format!("\\{other}")),
    }
}

/// A file name as typed: a leading `~/`, or `~` alone, is the home
/// directory, as psql reads it (the shell that started lab never sees it).
fn typed_path(arg: &str, home: Option<&OsStr>) -> PathBuf {
    match (arg.strip_prefix('~'), home) {
        (Some(""), Some(home)) => PathBuf::from(home),
        (Some(rest), Some(home)) if rest.starts_with('/') => PathBuf::from(home).join(rest.trim_start_matches('/')),
        _ => PathBuf::from(arg),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> Vec<String> {
        vec!["A".into(), "B".into()]
    }

    #[test]
    fn a_statement_is_gathered_over_lines_until_its_semicolon() {
        let mut b = Buffer::default();
        assert_eq!(b.push("UPDATE stock_items", &names()), None);
        assert!(!b.is_empty());
        assert_eq!(
            b.push("   SET qty = qty - 1;", &names()),
            Some(Input::Sql {
                session: None,
                statements: vec!["UPDATE stock_items\n   SET qty = qty - 1".into()],
            })
        );
        assert!(b.is_empty());
    }

    #[test]
    fn a_prefix_names_the_session_and_a_line_may_hold_several_statements() {
        let mut b = Buffer::default();
        assert_eq!(
            b.push("b: BEGIN; SELECT 'a;b';", &names()),
            Some(Input::Sql {
                session: Some("B".into()),
                statements: vec!["BEGIN".into(), "SELECT 'a;b'".into()],
            })
        );
        // One word and a colon that names no session: said, not sent as SQL.
        assert_eq!(
            b.push("C: SELECT 1;", &names()),
            Some(Input::Command(Command::NoSession("C".into())))
        );
        assert!(b.is_empty());
        // A colon elsewhere is the statement's.
        assert_eq!(b.push("SELECT 1::int", &names()), None);
        b.clear();
        assert_eq!(
            b.push("SELECT '\\q';", &names()),
            Some(Input::Sql {
                session: None,
                statements: vec!["SELECT '\\q'".into()]
            })
        );
        // `B:` alone on its line: the statement on the next lines is B's.
        assert_eq!(b.push("B:", &names()), None);
        assert!(!b.is_empty());
        assert_eq!(b.session(), Some("B"));
        assert_eq!(b.push("SELECT 2", &names()), None);
        assert_eq!(
            b.push(";", &names()),
            Some(Input::Sql {
                session: Some("B".into()),
                statements: vec!["SELECT 2".into()]
            })
        );
        assert!(b.is_empty());
    }

    #[test]
    fn backslash_commands_start_a_line_and_say_what_they_lack() {
        let mut b = Buffer::default();
        let cmd = |b: &mut Buffer, l: &str| match b.push(l, &names()) {
            Some(Input::Command(c)) => c,
            other => panic!("{l}: {other:?}"),
        };
        assert_eq!(cmd(&mut b, "\\s B"), Command::Switch("B".into()));
        assert_eq!(cmd(&mut b, "\\save /tmp/x.spec"), Command::Save("/tmp/x.spec".into()));
        assert_eq!(cmd(&mut b, "\\save"), Command::Usage("\\save FILE".into()));
        assert_eq!(cmd(&mut b, "\\locks"), Command::Locks);
        assert_eq!(cmd(&mut b, "\\locks extra"), Command::Usage("\\locks".into()));
        assert_eq!(cmd(&mut b, "\\t all"), Command::Usage("\\t".into()));
        assert_eq!(cmd(&mut b, "\\steps a1"), Command::Usage("\\steps".into()));
        assert_eq!(cmd(&mut b, "\\run a1 b1"), Command::Run(vec!["a1".into(), "b1".into()]));
        assert_eq!(
            cmd(&mut b, "\\setup INSERT INTO t VALUES (1);"),
            Command::Setup("INSERT INTO t VALUES (1)".into())
        );
        assert_eq!(cmd(&mut b, "\\predict off"), Command::Predict(Some(false)));
        assert_eq!(cmd(&mut b, "\\frob"), Command::Unknown("\\frob".into()));
        // Part-way through a statement, a command acts and the statement stays as typed.
        assert_eq!(b.push("SELECT", &names()), None);
        assert_eq!(cmd(&mut b, "\\?"), Command::Help);
        assert!(!b.is_empty());
        assert_eq!(
            b.push("1;", &names()),
            Some(Input::Sql {
                session: None,
                statements: vec!["SELECT\n1".into()]
            })
        );
        // Inside a quote the statement opened, a backslash is the statement's.
        assert_eq!(b.push("SELECT 'a", &names()), None);
        assert!(matches!(b.push("\\q';", &names()), Some(Input::Sql { .. })));
    }

    #[test]
    fn a_leading_tilde_is_the_home_directory_as_in_psql() {
        let home = Some(OsStr::new("/home/ayse"));
        let save = |t: &str| command_in(t, home);
        assert_eq!(save("save ~/x.spec"), Command::Save("/home/ayse/x.spec".into()));
        assert_eq!(
            save("html ~/talks/x.html"),
            Command::Html("/home/ayse/talks/x.html".into())
        );
        assert_eq!(save("save ~"), Command::Save("/home/ayse".into()));
        // Only a leading `~` alone or before `/`: another user's, or a `~` inside, stays.
        assert_eq!(save("save ~ali/x.spec"), Command::Save("~ali/x.spec".into()));
        assert_eq!(save("save /tmp/~/x.spec"), Command::Save("/tmp/~/x.spec".into()));
        assert_eq!(command_in("save ~/x.spec", None), Command::Save("~/x.spec".into()));
    }
}
