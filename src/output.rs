//! What lab gives back: its exit code, what it writes to stdout (one writer,
//! which tolerates a reader that went away), and the one error line on stderr.
use std::io::Write;
use std::process::ExitCode;

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

/// Writes to stdout. A reader that went away (`lab all | head`) is
/// [`ClosedPipe`]: lab stops, cleans up and ends quietly; any other failure
/// (a full disk) is an error: output was lost, the run cannot pass.
pub fn out(text: &str) -> Result<()> {
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
