//! What the server answered a statement: results, rows, or an error in the
//! server's words. Plain data, read by sessions, the scheduler and the
//! checks; nothing here talks to a server.
use serde::Serialize;
use tokio_postgres::SimpleQueryMessage;

use crate::report::ResultSet;
use crate::sql_lexer;

/// What the server said instead of a result: an error, or the connection's end.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PgError {
    /// The SQLSTATE; none when the connection went without the server saying why.
    pub code: Option<String>,
    pub severity: String,
    pub message: String,
    pub detail: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    pub context: Option<String>,
    /// Where in the statement (or in a query the server ran for it) the
    /// error is, as libpq shows it with a caret.
    #[serde(skip)]
    pub position: Option<ErrorPos>,
    /// The connection is gone (the server ended it, or it was lost).
    pub connection_lost: bool,
    /// The results of the step's statements that ran before the failing one.
    #[serde(skip)]
    pub before: Vec<Res>,
}

/// An error's position: a 1-based character of the statement sent, or of
/// an internal query (a PL/pgSQL statement's) with that query.
#[derive(Debug, Clone, PartialEq)]
pub enum ErrorPos {
    Statement(u32),
    Internal(u32, String),
}

impl PgError {
    pub fn is(&self, code: &str) -> bool {
        self.code.as_deref() == Some(code)
    }

    /// The connection went for a reason no scenario documents: an
    /// administrator's command, a crash, or nothing the server said. That is
    /// the environment failing lab (exit 2), not the server behaving
    /// differently; timeouts that end sessions (25P03, 25P04, 57P05) are
    /// observations.
    pub fn lost_to_outside(&self) -> bool {
        self.connection_lost && matches!(self.code.as_deref(), None | Some("57P01" | "57P02" | "57P03"))
    }

    /// The error as one line, as psql would show it (server words, untranslated).
    pub fn line(&self) -> String {
        let mut s = match &self.code {
            Some(code) => format!("{} {code}: {}", self.severity, self.message),
            None => self.message.clone(),
        };
        if let Some(d) = &self.detail {
            s.push_str(&format!(" | DETAIL: {}", d.replace('\n', " ")));
        }
        if let Some(c) = &self.context {
            s.push_str(&format!(" | CONTEXT: {}", c.replace('\n', " ")));
        }
        s
    }
}

/// The answer to one statement.
#[derive(Debug, Clone, PartialEq)]
pub struct Res {
    /// psql's command tag ("UPDATE 1", "BEGIN", "SELECT 3").
    pub tag: String,
    /// Rows affected or returned, as the server counted them.
    pub count: u64,
    /// The rows, for a statement that returns rows (a SELECT with none too).
    pub set: Option<ResultSet>,
}

/// A step's answer: one result per statement, or what went wrong.
pub type Answer = std::result::Result<Vec<Res>, PgError>;

/// The last result set of an answer's statements.
pub fn last_set(results: &[Res]) -> Option<&ResultSet> {
    results.iter().rev().find_map(|r| r.set.as_ref())
}

/// What the timeline shows for an answer: the last statement's rows or tag.
pub fn describe(results: &[Res]) -> String {
    match results.last() {
        None => String::new(),
        Some(Res { set: Some(set), .. }) => set.describe(),
        Some(r) => r.tag.clone(),
    }
}

/// The results of the statements sent after a prelude of `skip` statements.
pub fn after_prelude(mut all: Vec<Res>, skip: usize) -> Vec<Res> {
    if all.len() >= skip {
        all.split_off(skip)
    } else {
        Vec::new()
    }
}

pub fn int_of(set: &ResultSet, col: &str) -> Option<i64> {
    set.get(0, col)?.parse().ok()
}

/// One result per statement, from the simple query protocol's messages.
pub fn results_of(sql: &str, msgs: &[SimpleQueryMessage]) -> Vec<Res> {
    let stmts = sql_lexer::statements(sql);
    let mut out = Vec::new();
    let mut cur: Option<ResultSet> = None;
    for m in msgs {
        match m {
            SimpleQueryMessage::RowDescription(cols) => {
                cur = Some(ResultSet {
                    columns: cols.iter().map(|c| c.name().to_string()).collect(),
                    rows: Vec::new(),
                });
            }
            SimpleQueryMessage::Row(r) => {
                let set = cur.get_or_insert_with(|| ResultSet {
                    columns: r.columns().iter().map(|c| c.name().to_string()).collect(),
                    rows: Vec::new(),
                });
                set.rows
                    .push((0..r.len()).map(|i| r.get(i).map(str::to_string)).collect());
            }
            SimpleQueryMessage::CommandComplete(n) => {
                let stmt = stmts.get(out.len()).copied().unwrap_or("");
                out.push(Res {
                    tag: sql_lexer::command_tag(stmt, *n),
                    count: *n,
                    set: cur.take(),
                });
            }
            _ => {}
        }
    }
    out
}

/// A typed query's rows as one result, every value read as text.
pub fn rows_of(rows: &[tokio_postgres::Row]) -> Res {
    let columns: Vec<String> = rows
        .first()
        .map(|r| r.columns().iter().map(|c| c.name().to_string()).collect())
        .unwrap_or_default();
    let set = ResultSet {
        rows: rows
            .iter()
            .map(|r| (0..r.len()).map(|i| text_of(r, i)).collect())
            .collect(),
        columns,
    };
    Res {
        tag: format!("SELECT {}", rows.len()),
        count: rows.len() as u64,
        set: Some(set),
    }
}

/// A value of a typed query's row as text (the types lab's statements return).
fn text_of(row: &tokio_postgres::Row, i: usize) -> Option<String> {
    use tokio_postgres::types::Type;
    let t = row.columns()[i].type_();
    match *t {
        Type::INT2 => row.get::<_, Option<i16>>(i).map(|v| v.to_string()),
        Type::INT4 => row.get::<_, Option<i32>>(i).map(|v| v.to_string()),
        Type::INT8 => row.get::<_, Option<i64>>(i).map(|v| v.to_string()),
        Type::BOOL => row
            .get::<_, Option<bool>>(i)
            .map(|v| if v { "t" } else { "f" }.to_string()),
        _ => row.try_get::<_, Option<String>>(i).ok().flatten(),
    }
}
