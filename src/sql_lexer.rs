//! Just enough of SQL's lexical rules to split a step into its statements,
//! name each one's verb (the simple query protocol returns one result per
//! statement, without its command tag), find the spec's two-way parameters
//! outside quotes and comments, and write a literal.

/// Where a quoted string or identifier starting at `start` ends ('' and ""
/// inside it are the quote doubled).
pub fn skip_quoted(b: &[u8], start: usize) -> usize {
    quoted_end(b, start).unwrap_or(b.len())
}

/// Where a quoted string or identifier starting at `start` ends; none if it does not.
fn quoted_end(b: &[u8], start: usize) -> Option<usize> {
    let q = b[start];
    let mut i = start + 1;
    while i < b.len() {
        if b[i] == q {
            if b.get(i + 1) == Some(&q) {
                i += 2;
                continue;
            }
            return Some(i + 1);
        }
        i += 1;
    }
    None
}

/// Where a dollar-quoted string `$tag$ ... $tag$` starting at `start` ends;
/// `start + 1` when the `$` starts none (a positional `$1`).
pub fn skip_dollar(b: &[u8], start: usize) -> usize {
    dollar_end(b, start).unwrap_or(b.len())
}

/// Where a dollar quote starting at `start` ends (`start + 1` when it is
/// none); none if it does not.
fn dollar_end(b: &[u8], start: usize) -> Option<usize> {
    let tag_end = b[start + 1..]
        .iter()
        .position(|&c| !(c.is_ascii_alphanumeric() || c == b'_'))
        .map(|p| start + 1 + p);
    match tag_end {
        Some(e) if b[e] == b'$' && !b[start + 1..e].first().is_some_and(u8::is_ascii_digit) => {
            let tag = &b[start..=e];
            let body = e + 1;
            b[body..]
                .windows(tag.len())
                .position(|w| w == tag)
                .map(|p| body + p + tag.len())
        }
        _ => Some(start + 1),
    }
}

/// Where a `-- comment` starting at `start` ends (at its newline).
pub fn skip_line_comment(b: &[u8], start: usize) -> usize {
    b[start..]
        .iter()
        .position(|&c| c == b'\n')
        .map_or(b.len(), |p| start + p)
}

/// Where a `/* comment */` starting at `start` ends (after its `*/`).
pub fn skip_block_comment(b: &[u8], start: usize) -> usize {
    block_comment_end(b, start).unwrap_or(b.len())
}

fn block_comment_end(b: &[u8], start: usize) -> Option<usize> {
    b[start + 2..]
        .windows(2)
        .position(|w| w == b"*/")
        .map(|p| start + 2 + p + 2)
}

/// Whether `sql` ends a statement, as psql sees it: its last character
/// outside quotes and comments is a `;`, and no quote, dollar quote or
/// block comment is left open.
pub fn ends_statement(sql: &str) -> bool {
    let lexed = lex(sql);
    lexed.ends && !lexed.open
}

/// Whether `sql` leaves a quote, a dollar quote or a block comment open
/// (what is typed next is still inside it).
pub fn left_open(sql: &str) -> bool {
    lex(sql).open
}

/// `sql` read as psql's lexer reads it to find where statements end (and
/// as the server's grammar splits them): at a `;` outside quotes
/// (`E'...'` with its backslash escapes), dollar quotes, comments,
/// parentheses, and the `BEGIN ... END` of a `CREATE FUNCTION` or
/// `PROCEDURE` body (`BEGIN ATOMIC`; psql's heuristic: the statement
/// starts `CREATE [OR REPLACE] FUNCTION|PROCEDURE`, and a `CASE` inside
/// such a block ends with an `END` too).
struct Lexed {
    /// Each statement's byte range, its `;` left out.
    pieces: Vec<(usize, usize)>,
    /// The last character outside quotes and comments is a `;` that ended a statement.
    ends: bool,
    /// A quote, dollar quote or block comment is left open.
    open: bool,
}

fn lex(sql: &str) -> Lexed {
    let b = sql.as_bytes();
    let is_ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80;
    let mut out = Lexed {
        pieces: Vec::new(),
        ends: false,
        open: false,
    };
    let (mut start, mut i) = (0, 0);
    let (mut depth, mut begin) = (0usize, 0usize);
    // The first letters of the statement's leading CREATE, OR, REPLACE,
    // FUNCTION, PROCEDURE (0 for any other word), as psql keeps them.
    let mut lead: Vec<u8> = Vec::new();
    while i < b.len() {
        let c = b[i];
        let next = match c {
            b'\'' => {
                // E'...': a backslash escapes the next character.
                let escaped = i > 0 && matches!(b[i - 1], b'e' | b'E') && (i < 2 || !is_ident(b[i - 2]));
                out.ends = false;
                if escaped { escaped_end(b, i) } else { quoted_end(b, i) }
            }
            b'"' => {
                out.ends = false;
                quoted_end(b, i)
            }
            b'$' if i == 0 || !is_ident(b[i - 1]) => {
                out.ends = false;
                dollar_end(b, i)
            }
            b'-' if b.get(i + 1) == Some(&b'-') => Some(skip_line_comment(b, i)),
            b'/' if b.get(i + 1) == Some(&b'*') => block_comment_end(b, i),
            b'(' | b')' => {
                depth = if c == b'(' { depth + 1 } else { depth.saturating_sub(1) };
                out.ends = false;
                Some(i + 1)
            }
            b';' if depth == 0 && begin == 0 => {
                out.pieces.push((start, i));
                out.ends = true;
                lead.clear();
                start = i + 1;
                Some(i + 1)
            }
            c if is_ident(c) && !c.is_ascii_digit() => {
                let end = b[i..].iter().position(|&c| !is_ident(c)).map_or(b.len(), |p| i + p);
                let word = sql[i..end].to_ascii_lowercase();
                let first = match word.as_str() {
                    "create" | "or" | "replace" | "function" | "procedure" => word.as_bytes()[0],
                    _ => 0,
                };
                if lead.len() < 4 {
                    lead.push(first);
                }
                let body = matches!(
                    lead.as_slice(),
                    [b'c', b'f' | b'p', ..] | [b'c', b'o', b'r', b'f' | b'p', ..]
                );
                if body && depth == 0 {
                    match word.as_str() {
                        "begin" => begin += 1,
                        "case" if begin > 0 => begin += 1,
                        "end" => begin = begin.saturating_sub(1),
                        _ => {}
                    }
                }
                out.ends = false;
                Some(end)
            }
            c => {
                if !c.is_ascii_whitespace() {
                    out.ends = false;
                }
                Some(i + 1)
            }
        };
        match next {
            Some(n) => i = n,
            None => {
                out.open = true;
                break;
            }
        }
    }
    out.pieces.push((start.min(b.len()), b.len()));
    out
}

/// Where an `E'...'` string starting at `start` (its quote) ends: `\`
/// escapes the next character, `''` is a quote; none if it does not.
fn escaped_end(b: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'\'' if b.get(i + 1) == Some(&b'\'') => i += 2,
            b'\'' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// A statement on one line, its whitespace runs made single spaces.
pub fn one_line(sql: &str) -> String {
    sql.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `s` as an SQL string literal (standard_conforming_strings is on).
pub fn literal(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// The statements of `sql`, split where psql and the server split them
/// (see [`Lexed`]); empty statements are dropped.
pub fn statements(sql: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for (a, z) in lex(sql).pieces {
        push(&mut out, &sql[a..z]);
    }
    out
}

fn push<'a>(out: &mut Vec<&'a str>, stmt: &'a str) {
    if !strip_comments(stmt).trim().is_empty() {
        out.push(stmt.trim());
    }
}

/// The statement without leading comments.
pub fn strip_comments(stmt: &str) -> &str {
    let mut s = stmt.trim_start();
    loop {
        if let Some(rest) = s.strip_prefix("--") {
            s = rest.find('\n').map_or("", |p| &rest[p + 1..]).trim_start();
        } else if let Some(rest) = s.strip_prefix("/*") {
            s = rest.find("*/").map_or("", |p| &rest[p + 2..]).trim_start();
        } else {
            return s;
        }
    }
}

/// The first `n` words of a statement, upper-cased (its verb and what follows).
pub fn words(stmt: &str, n: usize) -> Vec<String> {
    strip_comments(stmt)
        .split(|c: char| c.is_whitespace() || c == ';' || c == '(')
        .filter(|w| !w.is_empty())
        .take(n)
        .map(str::to_ascii_uppercase)
        .collect()
}

/// Whether a statement sets the level of the transaction it runs in
/// (`SET TRANSACTION ISOLATION LEVEL ...`, `SET [LOCAL|SESSION]
/// transaction_isolation ...`): a transaction begun at one level runs at
/// another.
pub fn sets_tx_level(sql: &str) -> bool {
    statements(sql).iter().any(|stmt| {
        let w = words(stmt, 3);
        let guc = |i: usize| w.get(i).is_some_and(|x| x.starts_with("TRANSACTION_ISOLATION"));
        w.first().is_some_and(|x| x == "SET")
            && (w.get(1).is_some_and(|x| x == "TRANSACTION")
                || guc(1)
                || (w.get(1).is_some_and(|x| x == "LOCAL" || x == "SESSION") && guc(2)))
    })
}

/// What a statement does to the session's transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxEffect {
    Begin,
    End,
    /// `COMMIT AND CHAIN` (or `ROLLBACK`, `ABORT`, `END AND CHAIN`): ends
    /// the transaction and begins the next at once, with the same level.
    Chain,
    None,
}

pub fn tx_effect(stmt: &str) -> TxEffect {
    let w = words(stmt, 4);
    let second = w.get(1).map(String::as_str);
    match w.first().map(String::as_str) {
        Some("BEGIN") => TxEffect::Begin,
        Some("START") if second == Some("TRANSACTION") => TxEffect::Begin,
        Some("COMMIT" | "ROLLBACK" | "ABORT" | "END") if !matches!(second, Some("TO" | "PREPARED")) => {
            // The optional WORK or TRANSACTION, then AND [NO] CHAIN.
            let and = 1 + usize::from(matches!(second, Some("WORK" | "TRANSACTION")));
            if w.get(and).is_some_and(|x| x == "AND") && w.get(and + 1).is_some_and(|x| x == "CHAIN") {
                TxEffect::Chain
            } else {
                TxEffect::End
            }
        }
        Some("PREPARE") if second == Some("TRANSACTION") => TxEffect::End,
        _ => TxEffect::None,
    }
}

/// What a statement does to the session's settings, as a transaction
/// pooler would lose it: a session-level `SET`/`RESET` (kept, to be sent
/// again), `RESET ALL` (forgets those kept). `SET LOCAL`, `SET TRANSACTION`
/// and `SET CONSTRAINTS` end with the transaction: nothing to keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SettingEffect {
    Keep,
    ResetAll,
    None,
}

/// Whether the statement cannot run inside a transaction block (VACUUM,
/// ALTER SYSTEM, CREATE INDEX CONCURRENTLY, COMMIT PREPARED...: the
/// statements PostgreSQL passes to PreventInTransactionBlock): behind a
/// transaction pooler it is sent alone, without the SETs that would put it
/// in one.
pub fn outside_transaction(stmt: &str) -> bool {
    let w = words(stmt, 4);
    let w: Vec<&str> = w.iter().map(String::as_str).collect();
    match w.as_slice() {
        ["VACUUM", ..] | ["ALTER", "SYSTEM", ..] | ["CREATE" | "DROP", "DATABASE" | "TABLESPACE", ..] => true,
        ["COMMIT" | "ROLLBACK", "PREPARED", ..] | ["DISCARD", "ALL", ..] => true,
        ["CREATE", "INDEX" | "UNIQUE", ..] | ["DROP", ..] => w.contains(&"CONCURRENTLY"),
        ["REINDEX", kind, ..] => w.contains(&"CONCURRENTLY") || matches!(*kind, "SCHEMA" | "DATABASE" | "SYSTEM"),
        // DETACH PARTITION ... CONCURRENTLY comes after the table's name.
        ["ALTER", "TABLE", ..] => {
            let all = words(stmt, usize::MAX);
            all.iter().any(|w| w == "DETACH") && all.last().is_some_and(|w| w == "CONCURRENTLY")
        }
        ["CLUSTER"] => true,
        _ => false,
    }
}

/// Whether a statement sent alone does something else than the same
/// statement after others in one message, where it runs in the message's
/// implicit transaction block: ANALYZE of several tables commits after
/// each one only outside a block, CLUSTER and REINDEX of a partitioned
/// table refuse a block, LOCK, SAVEPOINT, DECLARE and SET LOCAL fail or
/// warn outside one. Behind a transaction pooler such a statement, when it
/// is a step of its own, goes without the SETs that would put it in a block.
pub fn block_sensitive(stmt: &str) -> bool {
    let w = words(stmt, 2);
    let w: Vec<&str> = w.iter().map(String::as_str).collect();
    matches!(
        w.as_slice(),
        [
            "ANALYZE" | "ANALYSE" | "CLUSTER" | "REINDEX" | "LOCK" | "SAVEPOINT" | "RELEASE" | "DECLARE",
            ..
        ] | ["ROLLBACK" | "ABORT", "TO", ..]
            | ["SET", "LOCAL" | "TRANSACTION" | "CONSTRAINTS", ..]
            | ["COMMIT" | "ROLLBACK" | "END" | "ABORT", "AND", ..]
    )
}

pub fn setting_effect(stmt: &str) -> SettingEffect {
    let w = words(stmt, 2);
    let second = w.get(1).map(String::as_str);
    match w.first().map(String::as_str) {
        Some("SET") if !matches!(second, Some("LOCAL" | "TRANSACTION" | "CONSTRAINTS")) => SettingEffect::Keep,
        Some("RESET") if second == Some("ALL") => SettingEffect::ResetAll,
        Some("RESET") => SettingEffect::Keep,
        _ => SettingEffect::None,
    }
}

/// psql's command tag for a statement that returned no rows, from its verb
/// and the row count the server reported.
pub fn command_tag(stmt: &str, count: u64) -> String {
    let w = words(stmt, 3);
    let verb = w.first().cloned().unwrap_or_default();
    match verb.as_str() {
        "INSERT" => format!("INSERT 0 {count}"),
        "UPDATE" | "DELETE" | "MERGE" | "SELECT" | "COPY" | "FETCH" | "MOVE" => format!("{verb} {count}"),
        "START" => "START TRANSACTION".into(),
        "END" => "COMMIT".into(),
        "ABORT" => "ROLLBACK".into(),
        "CREATE" | "DROP" | "ALTER" if w.len() > 1 => {
            // CREATE TABLE, DROP INDEX, ALTER TABLE ...
            let object = if w.get(1).is_some_and(|o| o == "UNIQUE" || o == "OR") {
                w.get(2).cloned().unwrap_or_default()
            } else {
                w[1].clone()
            };
            format!("{verb} {object}")
        }
        _ => verb,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_statement_ends_at_a_semicolon_outside_quotes_and_comments() {
        use super::ends_statement;
        assert!(ends_statement("SELECT 1;"));
        assert!(ends_statement("SELECT 1; -- done\n"));
        assert!(ends_statement("UPDATE t SET v = 'a;b'; /* c */ "));
        assert!(!ends_statement("SELECT 1"));
        assert!(!ends_statement("SELECT 'a;"));
        assert!(!ends_statement("SELECT $$ a; $$"));
        assert!(!ends_statement("DO $$ BEGIN PERFORM 1; "));
        assert!(ends_statement("DO $$ BEGIN PERFORM 1; END $$;"));
        assert!(!ends_statement("SELECT 1 /* ; "));
        assert!(!ends_statement("SELECT 1 -- ;"));
        assert!(!ends_statement(""));
        assert!(ends_statement("SELECT $1;"));
    }

    use super::*;

    #[test]
    fn a_statement_that_sets_its_transactions_level_is_told() {
        for yes in [
            "SET TRANSACTION ISOLATION LEVEL SERIALIZABLE",
            "BEGIN; set transaction isolation level repeatable read;",
            "SET transaction_isolation = 'serializable'",
            "SET LOCAL transaction_isolation='serializable'",
            "/* c */ SET SESSION transaction_isolation TO 'read committed'",
        ] {
            assert!(sets_tx_level(yes), "{yes}");
        }
        for no in [
            "BEGIN ISOLATION LEVEL SERIALIZABLE",
            "SET default_transaction_isolation = 'serializable'",
            "SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL SERIALIZABLE",
            "SELECT 'SET TRANSACTION'",
        ] {
            assert!(!sets_tx_level(no), "{no}");
        }
    }

    #[test]
    fn statements_split_outside_quotes_and_comments() {
        assert_eq!(
            statements("BEGIN; SELECT ';' AS x; -- c;\n SELECT $$a;b$$, \"q;\" ;"),
            ["BEGIN", "SELECT ';' AS x", "-- c;\n SELECT $$a;b$$, \"q;\""]
        );
        assert_eq!(statements("  ;  "), Vec::<&str>::new());
        assert_eq!(statements("SELECT 1 /* ; */"), ["SELECT 1 /* ; */"]);
        assert_eq!(statements("-- only a comment"), Vec::<&str>::new());
    }

    #[test]
    fn statements_split_as_psql_splits_them() {
        // A `;` inside parentheses ends nothing (a rule's actions).
        let rule = "CREATE RULE r AS ON INSERT TO t DO ALSO (INSERT INTO a VALUES (1); INSERT INTO b VALUES (2))";
        assert_eq!(statements(&format!("{rule}; SELECT 1")), [rule, "SELECT 1"]);
        assert!(!ends_statement(
            "CREATE RULE r AS ON INSERT TO t DO ALSO (INSERT INTO a VALUES (1);"
        ));
        // A function's BEGIN ATOMIC body, with a CASE in it.
        let f = "CREATE OR REPLACE FUNCTION f() RETURNS int LANGUAGE sql BEGIN ATOMIC \
                 SELECT CASE WHEN true THEN 1 END; SELECT 2; END";
        assert_eq!(statements(&format!("{f}; SELECT 3;")), [f, "SELECT 3"]);
        assert!(!ends_statement(
            "CREATE PROCEDURE p() BEGIN ATOMIC INSERT INTO t VALUES (1);"
        ));
        assert!(ends_statement(
            "CREATE PROCEDURE p() BEGIN ATOMIC INSERT INTO t VALUES (1); END;"
        ));
        // A transaction's BEGIN is no body.
        assert_eq!(statements("BEGIN; SELECT 1; END;"), ["BEGIN", "SELECT 1", "END"]);
        // E'...' has backslash escapes; a standard string does not.
        assert_eq!(
            statements("SELECT E'it\\'s; ok'; SELECT 'a\\'; SELECT 2"),
            ["SELECT E'it\\'s; ok'", "SELECT 'a\\'", "SELECT 2"]
        );
        assert!(ends_statement("SELECT e'\\\\';"));
        assert!(!ends_statement("SELECT E'\\';"));
        // A word ending in e before a quote is no E string.
        assert_eq!(
            statements("SELECT name'x\\'; SELECT 1"),
            ["SELECT name'x\\'", "SELECT 1"]
        );
        // $1 and a$b are no dollar quotes.
        assert_eq!(
            statements("SELECT $1; SELECT a$b; SELECT 2"),
            ["SELECT $1", "SELECT a$b", "SELECT 2"]
        );
    }

    #[test]
    fn transaction_effects_and_tags() {
        assert_eq!(tx_effect("begin isolation level serializable"), TxEffect::Begin);
        assert_eq!(tx_effect("START TRANSACTION"), TxEffect::Begin);
        assert_eq!(tx_effect("-- done\nCOMMIT"), TxEffect::End);
        assert_eq!(tx_effect("ROLLBACK TO SAVEPOINT s"), TxEffect::None);
        assert_eq!(tx_effect("COMMIT PREPARED 'x'"), TxEffect::None);
        assert_eq!(tx_effect("PREPARE TRANSACTION 'x'"), TxEffect::End);
        assert_eq!(tx_effect("commit and chain"), TxEffect::Chain);
        assert_eq!(tx_effect("ROLLBACK WORK AND CHAIN"), TxEffect::Chain);
        assert_eq!(tx_effect("END TRANSACTION AND CHAIN;"), TxEffect::Chain);
        assert_eq!(tx_effect("COMMIT AND NO CHAIN"), TxEffect::End);
        assert_eq!(tx_effect("ABORT"), TxEffect::End);
        assert_eq!(command_tag("insert into t values (1)", 1), "INSERT 0 1");
        assert_eq!(command_tag("UPDATE t SET x = 1", 3), "UPDATE 3");
        assert_eq!(command_tag("ALTER TABLE books ADD COLUMN s text", 0), "ALTER TABLE");
        assert_eq!(command_tag("SET lock_timeout = '1s'", 0), "SET");
        assert_eq!(command_tag("CREATE UNIQUE INDEX i ON t (x)", 0), "CREATE INDEX");
    }

    #[test]
    fn session_settings_a_pooler_would_lose() {
        assert_eq!(setting_effect("SET lock_timeout = '1s'"), SettingEffect::Keep);
        assert_eq!(
            setting_effect("set session deadlock_timeout to '2s'"),
            SettingEffect::Keep
        );
        assert_eq!(
            setting_effect("-- slow\nSET deadlock_timeout = '2s'"),
            SettingEffect::Keep
        );
        assert_eq!(setting_effect("RESET lock_timeout"), SettingEffect::Keep);
        assert_eq!(setting_effect("RESET ALL"), SettingEffect::ResetAll);
        assert_eq!(setting_effect("SET LOCAL lock_timeout = '1s'"), SettingEffect::None);
        assert_eq!(
            setting_effect("SET TRANSACTION ISOLATION LEVEL SERIALIZABLE"),
            SettingEffect::None
        );
        assert_eq!(setting_effect("SET CONSTRAINTS ALL DEFERRED"), SettingEffect::None);
        assert_eq!(
            setting_effect("SELECT set_config('a.b', '1', false)"),
            SettingEffect::None
        );
        assert!(outside_transaction("vacuum (verbose) lab.customers"));
        assert!(outside_transaction("ALTER SYSTEM SET synchronous_standby_names = '*'"));
        assert!(outside_transaction("CREATE INDEX CONCURRENTLY i ON t (x)"));
        assert!(outside_transaction("DROP INDEX CONCURRENTLY i"));
        assert!(!outside_transaction("CREATE INDEX i ON t (x)"));
        assert!(outside_transaction("COMMIT PREPARED 'a'"));
        assert!(block_sensitive("ANALYZE parted"));
        assert!(block_sensitive("lock part1 in share mode"));
        assert!(block_sensitive("ROLLBACK TO f"));
        assert!(block_sensitive("SET LOCAL x = 1"));
        assert!(!block_sensitive("SET x = 1"));
        assert!(!block_sensitive("ROLLBACK"));
        assert!(!block_sensitive("SELECT 1"));
        assert!(outside_transaction("rollback prepared 'a'"));
        assert!(!outside_transaction("COMMIT"));
        assert!(outside_transaction("REINDEX SCHEMA CONCURRENTLY s"));
        assert!(outside_transaction("REINDEX SCHEMA s"));
        assert!(!outside_transaction("REINDEX TABLE t"));
        assert!(outside_transaction(
            "ALTER TABLE d_listp DETACH PARTITION d_listp2 CONCURRENTLY"
        ));
        assert!(!outside_transaction("ALTER TABLE d_listp DETACH PARTITION d_listp2"));
        assert!(!outside_transaction(
            "ALTER TABLE d_listp DETACH PARTITION d_listp2 FINALIZE"
        ));
        assert!(!outside_transaction("ALTER TABLE books ADD COLUMN s text"));
        assert!(!outside_transaction("SELECT 1"));
    }
}
