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
use crate::postgres::connect::Async;
use crate::report::ResultSet;

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
    /// Names in what the server says, as isolationtester's run would have
    /// them (`lab explore`'s schemas as `public`), before rows are padded.
    rename: Option<fn(&str) -> String>,
}

impl Transcript {
    /// A transcript that writes what the server says through `rename`.
    pub fn renaming(rename: fn(&str) -> String) -> Transcript {
        Transcript {
            rename: Some(rename),
            ..Transcript::default()
        }
    }

    fn renamed(&self, text: String) -> String {
        match self.rename {
            Some(f) => f(&text),
            None => text,
        }
    }

    pub fn out(&self, text: impl Into<String>) {
        let text = self.renamed(text.into());
        self.out.lock().unwrap().push((Stream::Out, text));
    }

    pub fn err(&self, text: impl Into<String>) {
        let text = self.renamed(text.into());
        self.out.lock().unwrap().push((Stream::Err, text));
    }

    /// What isolationtester says on stderr before it exits (the spec ends there).
    pub fn fatal(&self, text: impl Into<String>) {
        self.err(text);
        self.end();
    }

    /// [`Transcript::fatal`], said on stdout (where isolationtester's
    /// `failed to send query` goes before it exits).
    pub fn fatal_out(&self, text: impl Into<String>) {
        self.out(text);
        self.end();
    }

    fn end(&self) {
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
            match self.rename {
                // Renamed before the columns are padded to the widest value.
                Some(f) => {
                    let mut set = set.clone();
                    for v in set.rows.iter_mut().flatten().flatten() {
                        *v = f(v);
                    }
                    self.out(pq_print(&set));
                }
                None => self.out(pq_print(set)),
            }
        }
        if let Some(e) = error {
            if e.connection_lost && e.severity == "FATAL" {
                // libpq's own words follow the server's when the connection closes.
                self.out(format!(
                    "{}\n",
                    error_message(e, None)
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
/// isolationtester prints when a setup or teardown block fails. Given the
/// `query` (the text sent, as libpq keeps it), an error with a position
/// gets libpq's `LINE n:` display with its caret; a PL/pgSQL statement's
/// internal query is shown too (`QUERY:`).
pub fn error_message(e: &PgError, query: Option<&str>) -> String {
    use super::answer::ErrorPos;
    if e.severity.is_empty() {
        return format!("{}\n", e.message);
    }
    let mut s = format!("{}:  {}", e.severity, e.message);
    let cursor = match (&e.position, query) {
        (Some(ErrorPos::Statement(at)), Some(q)) => Some((q, *at)),
        (Some(ErrorPos::Internal(at, q)), _) => Some((q.as_str(), *at)),
        (Some(ErrorPos::Statement(at)), None) => {
            // libpq, without the query: the position in words.
            s.push_str(&format!(" at character {at}"));
            None
        }
        (None, _) => None,
    };
    s.push('\n');
    if let Some((q, at)) = cursor {
        s.push_str(&error_position(q, at as usize));
    }
    if let Some(d) = &e.detail {
        s.push_str(&format!("DETAIL:  {d}\n"));
    }
    if let Some(h) = &e.hint {
        s.push_str(&format!("HINT:  {h}\n"));
    }
    if let Some(ErrorPos::Internal(_, q)) = &e.position {
        s.push_str(&format!("QUERY:  {q}\n"));
    }
    if let Some(c) = &e.context {
        s.push_str(&format!("CONTEXT:  {c}\n"));
    }
    s
}

/// libpq's reportErrorPosition: the line of `query` that holds its
/// 1-based character `loc` (`LINE n: `, tabs as spaces, cut to about 60
/// columns around it with `...`), and a caret under that character.
/// Columns are counted as libpq counts them in UTF8: two for a wide
/// character, one for any other.
pub fn error_position(query: &str, loc: usize) -> String {
    const DISPLAY_SIZE: usize = 60;
    const MIN_RIGHT_CUT: usize = 10;
    let Some(loc) = loc.checked_sub(1) else {
        return String::new();
    };
    let chars: Vec<(usize, char)> = query.char_indices().collect();
    let text: String = query.chars().map(|c| if c == '\t' { ' ' } else { c }).collect();
    // Each character's byte offset and screen column, up to the end of loc's line.
    let (mut qidx, mut scridx) = (Vec::new(), Vec::new());
    let (mut scroffset, mut loc_line, mut ibeg, mut iend) = (0usize, 1usize, 0usize, None);
    for (cno, &(offset, ch)) in chars.iter().enumerate() {
        qidx.push(offset);
        scridx.push(scroffset);
        if ch == '\r' || ch == '\n' {
            if cno < loc {
                if ch == '\r' || cno == 0 || chars[cno - 1].1 != '\r' {
                    loc_line += 1;
                }
                ibeg = cno + 1;
            } else {
                iend = Some(cno);
                break;
            }
        }
        scroffset += if unicode_width::UnicodeWidthChar::width(ch) == Some(2) {
            2
        } else {
            1
        };
    }
    let mut iend = match iend {
        Some(i) => i,
        None => {
            qidx.push(query.len());
            scridx.push(scroffset);
            chars.len()
        }
    };
    if loc > iend {
        return String::new();
    }
    let (mut beg_trunc, mut end_trunc) = (false, false);
    if scridx[iend] - scridx[ibeg] > DISPLAY_SIZE {
        if scridx[ibeg] + DISPLAY_SIZE >= scridx[loc] + MIN_RIGHT_CUT {
            while scridx[iend] - scridx[ibeg] > DISPLAY_SIZE {
                iend -= 1;
            }
            end_trunc = true;
        } else {
            while scridx[loc] + MIN_RIGHT_CUT < scridx[iend] {
                iend -= 1;
                end_trunc = true;
            }
            while scridx[iend] - scridx[ibeg] > DISPLAY_SIZE {
                ibeg += 1;
                beg_trunc = true;
            }
        }
    }
    let mut prefix = format!("LINE {loc_line}: ");
    if beg_trunc {
        prefix.push_str("...");
    }
    let mut out = format!("{prefix}{}", &text[qidx[ibeg]..qidx[iend]]);
    if end_trunc {
        out.push_str("...");
    }
    out.push('\n');
    out.push_str(&" ".repeat(prefix.len() + scridx[loc] - scridx[ibeg]));
    out.push_str("^\n");
    out
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

    /// What libpq printed for the same queries and positions (isolationtester
    /// 15 on PostgreSQL 15, 2026-12-06).
    #[test]
    fn error_positions_are_shown_as_libpq_shows_them() {
        // A later line of the block.
        let block = "\n  CREATE TABLE t (a int);\n  INSERT INTO t VALUES (1;\n";
        assert_eq!(
            error_position(block, block.rfind(';').unwrap() + 1),
            "LINE 3:   INSERT INTO t VALUES (1;\n                                 ^\n"
        );
        // Cut on the right, then on the left, to about 60 columns.
        let long = "CREATE TABLE t4 (a int); SELECT a FROM t4 WHERE a = 1 OR a = 2 OR a = 3 OR a = 4 \
                    OR a = 5 OR a = 6 OR a = 7 OR a = 8 OR a = 9 OR a = 10 OR a = 11 OR a = 12 OR zz = 1 OR a = 13;";
        let at = long.find("zz").unwrap() + 1;
        assert_eq!(
            error_position(long, at),
            "LINE 1: ...R a = 8 OR a = 9 OR a = 10 OR a = 11 OR a = 12 OR zz = 1 OR ...\n\
             \x20                                                            ^\n"
        );
        let teardown = "DROP TABLE t2; SELECT 1/0 FROM t2 WHERE a = 1 OR a > 0 OR a < 100 OR a IS NULL OR zz = 1;";
        assert_eq!(
            error_position(teardown, 32),
            "LINE 1: DROP TABLE t2; SELECT 1/0 FROM t2 WHERE a = 1 OR a > 0 OR a ...\n\
             \x20                                      ^\n"
        );
        // A tab is a space; a wide character takes two columns.
        let wide = "\n\tSELECT 1 AS café, 2 AS 漢字漢字 FROM nosuch;\n";
        let at = wide[..wide.find("nosuch").unwrap()].chars().count() + 1;
        assert_eq!(
            error_position(wide, at),
            format!(
                "LINE 2:  SELECT 1 AS café, 2 AS 漢字漢字 FROM nosuch;\n{}^\n",
                " ".repeat(46)
            )
        );
        // No position, or one past the end: nothing.
        assert_eq!(error_position("SELECT", 0), "");
        assert_eq!(error_position("SELECT", 9), "");
    }

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
