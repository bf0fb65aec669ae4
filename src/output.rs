//! What lab gives back: its exit code, what it writes to stdout (one writer,
//! which tolerates a reader that went away), the one error line on stderr,
//! and how wide its lines may be (prose wrapped as tables are).
use std::io::Write;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

use anyhow::Result;

use crate::i18n::{self, Context, Lang, ui};

/// The documented exit codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Every variant showed its documented outcome.
    Ok = 0,
    /// At least one variant did not.
    Mismatch = 1,
    /// Could not run: usage, connection, an unexpected error.
    CouldNotRun = 2,
    /// Stopped by Ctrl-C or SIGTERM.
    Interrupted = 130,
    /// Whoever read stdout stopped reading (`lab all | head`): the code of a
    /// program killed by SIGPIPE (128 + 13).
    ClosedPipe = 141,
}

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> ExitCode {
        ExitCode::from(e as u8)
    }
}

impl Exit {
    /// 0 when everything was as documented, else 1.
    pub fn verdict(as_expected: bool) -> Exit {
        if as_expected { Exit::Ok } else { Exit::Mismatch }
    }
}

/// `eprintln!` that cannot panic: when stderr is gone (the terminal closed
/// under `--step`), what could not be said is lost, and SIGHUP still ends
/// the run as interrupted (130), not as a panic (101).
macro_rules! eline {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}
pub(crate) use eline;

/// `eprint!` that cannot panic (see [`eline`]).
macro_rules! etext {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stderr(), $($arg)*);
    }};
}
pub(crate) use etext;

/// `--color`: when lab colours what it writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ColorWhen {
    /// On a terminal, unless NO_COLOR is set.
    #[default]
    Auto,
    Always,
    Never,
}

static QUIET: AtomicBool = AtomicBool::new(false);
static COLOR: AtomicU8 = AtomicU8::new(ColorWhen::Auto as u8);

/// How lab writes for the whole run, from the command line, set before
/// anything runs: `--quiet` (nothing on stdout, no progress) and `--color`.
pub fn configure(quiet: bool, color: ColorWhen) {
    QUIET.store(quiet, Ordering::Relaxed);
    COLOR.store(color as u8, Ordering::Relaxed);
}

/// `--quiet`: stdout stays empty and no progress is drawn; stderr keeps the
/// errors, warnings and why a run failed; the report files are written.
pub fn quiet() -> bool {
    QUIET.load(Ordering::Relaxed)
}

/// Whether to colour what goes to a stream that is (or is not) a terminal:
/// `--color always` or `never`, else a terminal where NO_COLOR is not set.
pub fn colour(terminal: bool) -> bool {
    match COLOR.load(Ordering::Relaxed) {
        c if c == ColorWhen::Always as u8 => true,
        c if c == ColorWhen::Never as u8 => false,
        _ => terminal && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
    }
}

/// Writes to stdout (nothing under `--quiet`). A reader that went away (`lab
/// all | head`) is [`ClosedPipe`]: lab stops, cleans up and ends quietly; any
/// other failure (a full disk) is an error: output was lost, the run cannot pass.
pub fn out(text: &str) -> Result<()> {
    if quiet() {
        return Ok(());
    }
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(text.as_bytes()).and_then(|_| stdout.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Err(ClosedPipe.into()),
        Err(e) => Err(e).ctx(msg::stdout),
    }
}

/// stdout's reader closed the pipe: not an error to report, nobody is reading.
#[derive(Debug)]
pub struct ClosedPipe;

impl std::fmt::Display for ClosedPipe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("stdout closed")
    }
}

impl std::error::Error for ClosedPipe {}

/// Whether an error is (or was caused by) a closed stdout.
pub fn is_closed_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| e.is::<ClosedPipe>())
}

/// `error: ...` with the cause chain, on one line, in `lang`.
pub fn print_error(err: &anyhow::Error, lang: Lang) {
    crate::output::eline!("{}: {}", ui::error().render(lang), i18n::error_line(err, lang));
}

/// Writes a report file (JUnit, HTML); `what` names it in the error.
pub fn write_file(path: &std::path::Path, text: &str, what: fn(String) -> i18n::Text) -> Result<()> {
    std::fs::write(path, text).ctx(|| what(path.display().to_string()))
}

/// `text` added at the end of `path` (made if it is not there).
pub fn append_file(path: &std::path::Path, text: &str, what: fn(String) -> i18n::Text) -> Result<()> {
    use std::io::Write;
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .ctx(|| what(path.display().to_string()))
}

pub mod msg {
    crate::messages! {
        prefix "ru";
        stdout() {
            en: "could not write to standard output",
            tr: "standart çıktıya yazılamadı",
        }
        junit(path) {
            en: "could not write the JUnit report to {path}",
            tr: "JUnit raporu {path} dosyasına yazılamadı",
        }
    }
}

/// Lines fit this many columns when stdout is not a terminal and $COLUMNS says nothing.
const PIPE_WIDTH: u16 = 160;

/// No terminal, or one that reports no size (a bare pty): $COLUMNS where
/// it is given (`COLUMNS=100 lab all > handout.txt`), else a fixed width.
fn unsized_width() -> u16 {
    let columns = std::env::var("COLUMNS").ok().and_then(|c| c.trim().parse::<u16>().ok());
    columns.filter(|&c| c >= 40).unwrap_or(PIPE_WIDTH)
}

/// How wide lab's lines on stdout may be: the terminal's, else as
/// [`unsized_width`] says; tables and prose alike.
pub fn width() -> usize {
    sized(comfy_table::Table::new().width())
}

/// How wide lab's lines on stderr may be (`--step`'s prompts, which stay on
/// the terminal when stdout is piped: `lab write-skew --step | tee run.txt`).
pub fn ewidth() -> usize {
    sized(comfy_table::Table::new().use_stderr().width())
}

fn sized(terminal: Option<u16>) -> usize {
    usize::from(terminal.filter(|&w| w >= 40).unwrap_or_else(unsized_width))
}

/// The width of the terminal stdout is, when it is one that reports a
/// usable size (none when piped: `lab shell` then leaves its lines whole).
pub fn terminal_width() -> Option<usize> {
    comfy_table::Table::new().width().filter(|&w| w >= 40).map(usize::from)
}

/// Prose for stdout as a person reads it at [`width`]: `lead` then `text`,
/// wrapped at spaces, the lines after the first indented under the text
/// (and under their own indentation); a line break in `text` stays one.
pub fn paragraph(lead: &str, text: &str) -> String {
    paragraph_at(width(), lead, text)
}

/// [`paragraph`] for stderr, at [`ewidth`].
pub fn eparagraph(lead: &str, text: &str) -> String {
    paragraph_at(ewidth(), lead, text)
}

fn paragraph_at(width: usize, lead: &str, text: &str) -> String {
    let indent = lead.chars().count().min(12);
    let mut out = Vec::new();
    let mut lines = text.split('\n');
    out.extend(wrap(
        &format!("{lead}{}", lines.next().unwrap_or_default()),
        width,
        indent,
    ));
    for line in lines {
        let own = line.len() - line.trim_start_matches(' ').len();
        out.extend(wrap(&format!("{}{line}", " ".repeat(indent)), width, indent + own));
    }
    out.join("\n")
}

/// `text` cut into lines of at most `width` characters at spaces (its own
/// leading spaces kept), the lines after the first indented by `indent`;
/// only a word longer than a whole line is cut. Within a line the spaces
/// between words stay as written (`'a  b'` in a statement is not `'a b'`);
/// a break of another kind (a newline, a tab) is one space.
pub fn wrap(text: &str, width: usize, indent: usize) -> Vec<String> {
    let lead = text.len() - text.trim_start().len();
    let mut lines = vec![" ".repeat(lead)];
    let mut words_on_line = 0;
    for (gap, word) in words(&text[lead..]) {
        let mut rest: Vec<char> = word.chars().collect();
        while !rest.is_empty() {
            let line = lines.last_mut().expect("never empty");
            let sep = if words_on_line > 0 { gap.chars().count() } else { 0 };
            let used = line.chars().count() + sep;
            let room = width.saturating_sub(used);
            if rest.len() <= room || (words_on_line == 0 && room > 0) {
                // It fits, or it is longer than any line: cut it here.
                let take = rest.len().min(room);
                if words_on_line > 0 {
                    line.push_str(gap);
                }
                line.extend(rest.drain(..take));
                words_on_line += 1;
            } else {
                lines.push(" ".repeat(indent));
                words_on_line = 0;
            }
        }
    }
    lines
}

/// Each word of `text` (no leading whitespace) with the spaces before it:
/// as written where they are only spaces, else one.
fn words(text: &str) -> Vec<(&str, &str)> {
    let mut out = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let start = rest.len() - rest.trim_start().len();
        let gap = &rest[..start];
        let after = &rest[start..];
        if after.is_empty() {
            break;
        }
        let end = after.find(char::is_whitespace).unwrap_or(after.len());
        let gap = if gap.chars().all(|c| c == ' ') { gap } else { " " };
        out.push((gap, &after[..end]));
        rest = &after[end..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::wrap;

    #[test]
    fn a_paragraph_wraps_under_its_text_and_keeps_its_line_breaks() {
        assert_eq!(
            super::paragraph_at(20, "why: ", "the row lock is held until COMMIT"),
            "why: the row lock is\n     held until\n     COMMIT"
        );
        assert_eq!(super::paragraph_at(40, "note: ", "one\ntwo"), "note: one\n      two");
        // Spaces inside a line stay; an indented line continues under itself.
        assert_eq!(super::paragraph_at(40, "    ", "SELECT 'a  b';"), "    SELECT 'a  b';");
        assert_eq!(
            super::paragraph_at(16, "why: ", "x\n  indented text"),
            "why: x\n       indented\n       text"
        );
        // A long lead indents no further than 12.
        let p = super::paragraph_at(30, "▶ lost-update/atomic-update: ", "B waits for A");
        assert_eq!(p, "▶ lost-update/atomic-update: B\n            waits for A");
    }

    #[test]
    fn lines_break_at_spaces_and_only_overlong_words_are_cut() {
        assert_eq!(wrap("aa bb cc", 5, 2), ["aa bb", "  cc"]);
        assert_eq!(
            wrap("    statement: SELECT 1", 16, 6),
            ["    statement:", "      SELECT 1"]
        );
        assert_eq!(wrap("abcdefgh", 5, 1), ["abcde", " fgh"]);
        assert_eq!(wrap("x abcdefgh", 5, 1), ["x", " abcd", " efgh"]);
        // Spaces between words stay as written; a newline is a space.
        assert_eq!(wrap("'a  b'\nc", 40, 0), ["'a  b' c"]);
        assert_eq!(wrap("aa    bb", 5, 0), ["aa", "bb"]);
        for line in wrap(&"word ".repeat(100), 80, 4) {
            assert!(line.chars().count() <= 80, "{line}");
            assert!(line.trim().split(' ').all(|w| w == "word"), "{line}");
        }
    }
}
