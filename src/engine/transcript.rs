//! isolationtester's transcript: what PostgreSQL's isolationtester prints
//! for a spec (src/test/isolation/isolationtester.c, PostgreSQL 15), byte
//! for byte, so `lab spec --format isolation` can be compared with
//! PostgreSQL's expected files.
//!
//! libpq hands a session's NOTICEs to isolationtester's notice processor
//! only when isolationtester reads that session's connection; lab's
//! connections read all the time, so a NOTICE waits here until the
//! scheduler looks at its session the way isolationtester would
//! ([`Transcript::consume`]), and a NOTIFY until the session's step completes.
use std::collections::HashMap;
use std::sync::Mutex;

use super::answer::{Answer, PgError};
use crate::report::ResultSet;
use crate::target::connect::Async;

/// Where a line goes: isolationtester writes some to stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Out,
    Err,
}

/// A NOTIFY: channel, payload, the sender's backend pid.
type Notify = (String, String, i32);

#[derive(Default)]
pub struct Transcript {
    out: Mutex<Vec<(Stream, String)>>,
    /// NOTICEs received and not yet read by "isolationtester", per session.
    notices: Mutex<HashMap<String, Vec<String>>>,
    /// NOTIFYs received, per session.
    notifies: Mutex<HashMap<String, Vec<Notify>>>,
    /// NOTICEs printed, per session.
    consumed: Mutex<HashMap<String, usize>>,
    /// isolationtester would have exited here, having said why.
    ended: std::sync::atomic::AtomicBool,
}

impl Transcript {
    pub fn out(&self, text: impl Into<String>) {
        self.out.lock().unwrap().push((Stream::Out, text.into()));
    }

    pub fn err(&self, text: impl Into<String>) {
        self.out.lock().unwrap().push((Stream::Err, text.into()));
    }

    /// What isolationtester says on stderr before it exits (the spec ends there).
    pub fn fatal(&self, text: impl Into<String>) {
        self.err(text);
        self.ended.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// Whether isolationtester would have said why it stopped.
    pub fn ended(&self) -> bool {
        self.ended.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// A session's connection received something outside an answer.
    pub fn arrived(&self, session: &str, m: &Async<'_>) {
        match m {
            Async::Notice(n) => {
                let mut text = format!("{session}: {}:  {}\n", n.severity(), n.message());
                if let Some(d) = n.detail() {
                    text.push_str(&format!("DETAIL:  {d}\n"));
                }
                if let Some(h) = n.hint() {
                    text.push_str(&format!("HINT:  {h}\n"));
                }
                self.notices
                    .lock()
                    .unwrap()
                    .entry(session.to_string())
                    .or_default()
                    .push(text);
            }
            Async::Notify(n) => self
                .notifies
                .lock()
                .unwrap()
                .entry(session.to_string())
                .or_default()
                .push((n.channel().to_string(), n.payload().to_string(), n.process_id())),
        }
    }

    /// isolationtester reads the session's connection: its NOTICEs are printed.
    pub fn consume(&self, session: &str) {
        let pending = self.notices.lock().unwrap().remove(session).unwrap_or_default();
        *self.consumed.lock().unwrap().entry(session.to_string()).or_default() += pending.len();
        for text in pending {
            self.out(text);
        }
    }

    /// The NOTICEs of a session printed so far (what isolationtester counts).
    pub fn consumed(&self, session: &str) -> usize {
        self.consumed.lock().unwrap().get(session).copied().unwrap_or(0)
    }

    /// `step NAME: SQL`, with what follows it (` <waiting ...>`).
    pub fn step(&self, name: &str, sql: &str, suffix: &str) {
        self.out(format!("step {name}: {sql}{suffix}\n"));
    }

    pub fn completed(&self, name: &str) {
        self.out(format!("step {name}: <... completed>\n"));
    }

    /// A step's results as isolationtester prints them: each result set,
    /// and the error (its severity and primary message only: the detail
    /// may hold transaction ids).
    pub fn answer(&self, answer: &Answer) {
        let (results, error) = match answer {
            Ok(r) => (r.as_slice(), None),
            Err(e) => (e.before.as_slice(), Some(e)),
        };
        for set in results.iter().filter_map(|r| r.set.as_ref()) {
            self.out(pq_print(set));
        }
        if let Some(e) = error {
            if e.connection_lost && e.severity == "FATAL" {
                // libpq's own words follow the server's when the connection closes.
                self.out(format!(
                    "{}\n",
                    error_message(e)
                        + "server closed the connection unexpectedly\n\
                     \tThis probably means the server terminated abnormally\n\
                     \tbefore or while processing the request.\n"
                ));
            } else if e.severity.is_empty() {
                self.out(format!("{}\n\n", e.message));
            } else {
                self.out(format!("{}:  {}\n", e.severity, e.message));
            }
        }
    }

    /// NOTIFYs the session received, after its step completed; `sessions`
    /// names the spec's backends (name, pid).
    pub fn notifies(&self, session: &str, sessions: &[(String, i32)]) {
        let pending = self.notifies.lock().unwrap().remove(session).unwrap_or_default();
        for (channel, payload, pid) in pending {
            let from = sessions
                .iter()
                .find(|(_, p)| *p == pid)
                .map_or_else(|| format!("PID {pid}"), |(name, _)| name.clone());
            self.out(format!(
                "{session}: NOTIFY \"{channel}\" with payload \"{payload}\" from {from}\n"
            ));
        }
    }

    /// Everything, stdout and stderr interleaved as they were written (what
    /// pg_isolation_regress keeps, with `2>&1`).
    pub fn combined(&self) -> String {
        self.out.lock().unwrap().iter().map(|(_, t)| t.as_str()).collect()
    }

    /// The pieces in order, each with its stream.
    pub fn pieces(&self) -> Vec<(Stream, String)> {
        self.out.lock().unwrap().clone()
    }

    /// The pieces written so far, taken (the next permutation's start empty).
    pub fn take(&self) -> Vec<(Stream, String)> {
        std::mem::take(&mut *self.out.lock().unwrap())
    }
}

/// libpq's PQerrorMessage for an error result (default verbosity): what
/// isolationtester prints when a setup or teardown block fails.
pub fn error_message(e: &PgError) -> String {
    if e.severity.is_empty() {
        return format!("{}\n", e.message);
    }
    let mut s = format!("{}:  {}\n", e.severity, e.message);
    if let Some(d) = &e.detail {
        s.push_str(&format!("DETAIL:  {d}\n"));
    }
    if let Some(h) = &e.hint {
        s.push_str(&format!("HINT:  {h}\n"));
    }
    if let Some(c) = &e.context {
        s.push_str(&format!("CONTEXT:  {c}\n"));
    }
    s
}

/// libpq's PQprint with isolationtester's options (header, align, `|`
/// between fields): a column is right-aligned when every non-empty value in
/// it looks like a number; widths count bytes, as C's printf does.
pub fn pq_print(set: &ResultSet) -> String {
    let n = set.columns.len();
    if n == 0 {
        return String::new();
    }
    let mut width: Vec<usize> = set.columns.iter().map(String::len).collect();
    let mut not_num = vec![false; n];
    for row in &set.rows {
        for (j, v) in row.iter().enumerate().take(n) {
            let Some(v) = v.as_deref().filter(|v| !v.is_empty()) else {
                continue;
            };
            if !not_num[j] {
                not_num[j] = !looks_numeric(v);
            }
            width[j] = width[j].max(v.len());
        }
    }
    let pad = |s: &str, j: usize| -> String {
        let fill = " ".repeat(width[j].saturating_sub(s.len()));
        if not_num[j] {
            format!("{s}{fill}")
        } else {
            format!("{fill}{s}")
        }
    };
    let mut out = String::new();
    let header: Vec<String> = set.columns.iter().enumerate().map(|(j, c)| pad(c, j)).collect();
    out.push_str(&header.join("|"));
    out.push('\n');
    let border: Vec<String> = width.iter().map(|w| "-".repeat(*w)).collect();
    out.push_str(&border.join("+"));
    out.push('\n');
    for row in &set.rows {
        let cells: Vec<String> = (0..n)
            .map(|j| pad(row.get(j).and_then(|v| v.as_deref()).unwrap_or(""), j))
            .collect();
        out.push_str(&cells.join("|"));
        out.push('\n');
    }
    let rows = set.rows.len();
    out.push_str(&format!("({rows} row{})\n\n", if rows == 1 { "" } else { "s" }));
    out
}

/// fe-print.c's test: digits, '.', 'E', 'e', ' ', '-' only (looking at the
/// first byte of each character), not starting with E, ending in a digit.
fn looks_numeric(v: &str) -> bool {
    let mut last = '0';
    for c in v.chars() {
        let first = if c.is_ascii() { c } else { '\u{80}' };
        last = first;
        if !(first.is_ascii_digit() || matches!(first, '.' | 'E' | 'e' | ' ' | '-')) {
            return false;
        }
    }
    !v.starts_with(['E', 'e']) && last.is_ascii_digit()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(cols: &[&str], rows: &[&[Option<&str>]]) -> ResultSet {
        ResultSet {
            columns: cols.iter().map(|c| c.to_string()).collect(),
            rows: rows
                .iter()
                .map(|r| r.iter().map(|v| v.map(str::to_string)).collect())
                .collect(),
        }
    }

    #[test]
    fn pq_print_aligns_numbers_right_and_text_left() {
        // From PostgreSQL's expected/insert-conflict-specconflict.out and friends.
        let s = set(&["key", "data"], &[&[Some("k1"), Some("inserted s1")]]);
        assert_eq!(
            pq_print(&s),
            "key|data       \n---+-----------\nk1 |inserted s1\n(1 row)\n\n"
        );
        let s = set(&["pg_advisory_unlock"], &[&[Some("t")]]);
        assert_eq!(
            pq_print(&s),
            "pg_advisory_unlock\n------------------\nt                 \n(1 row)\n\n"
        );
        let s = set(&["balance"], &[&[Some("100")], &[Some("-7")]]);
        assert_eq!(pq_print(&s), "balance\n-------\n    100\n     -7\n(2 rows)\n\n");
        // No rows: a column is numeric until a value says otherwise.
        let s = set(&["key", "data"], &[]);
        assert_eq!(pq_print(&s), "key|data\n---+----\n(0 rows)\n\n");
        // NULLs and empty strings do not count; 1e5 and E1 are told apart.
        let s = set(&["a", "b"], &[&[None, Some("1e5")], &[Some("E1"), None]]);
        assert_eq!(pq_print(&s), "a |  b\n--+---\n  |1e5\nE1|   \n(2 rows)\n\n");
        assert_eq!(pq_print(&set(&[], &[])), "");
    }

    #[test]
    fn widths_count_bytes_like_printf() {
        let s = set(&["ad"], &[&[Some("ç")], &[Some("abc")]]);
        assert_eq!(pq_print(&s), "ad \n---\nç \nabc\n(2 rows)\n\n");
    }
}
