//! The terminal side of `lab shell`: rustyline's line editor on a thread of
//! its own (its `readline` blocks), asked for one line at a time with the
//! prompt of the moment, and a printer on a thread of its own that writes
//! above the line being typed (rustyline's external printer) or, with no
//! prompt up or no terminal, plainly.
use std::io::Write;
use std::sync::{Arc, Mutex, mpsc};

use rustyline::error::ReadlineError;
use rustyline::{DefaultEditor, ExternalPrinter};
use tokio::sync::mpsc as amp;

/// What the person did at a prompt.
#[derive(Debug)]
pub enum Read {
    Line(String),
    /// Ctrl-C at the prompt.
    Interrupted,
    /// Ctrl-D, or the end of the input.
    Eof,
    /// The input is not UTF-8 text.
    NotText,
}

type Boxed = Box<dyn ExternalPrinter + Send>;

/// What the printer's thread is given: a line, or a request to say when
/// every line before it is out.
enum Out {
    Line(String),
    Flushed(mpsc::Sender<()>),
}

/// Prints whole lines while a prompt may be showing. The lines go to a
/// thread of its own, in order: rustyline's external printer may block
/// (its one-slot channel is emptied only while the editor reads a line),
/// and the shell, which asks for the next line, must never wait on it.
#[derive(Clone)]
pub struct Printer {
    lines: mpsc::Sender<Out>,
}

impl Printer {
    pub fn say(&self, text: &str) {
        let _ = self.lines.send(Out::Line(text.to_string()));
    }

    /// Waits (a second at most) until the lines said so far are out.
    fn flush(&self) {
        let (tx, rx) = mpsc::channel();
        if self.lines.send(Out::Flushed(tx)).is_ok() {
            let _ = rx.recv_timeout(std::time::Duration::from_secs(1));
        }
    }
}

/// The printer's thread: through the editor while its prompt is up (above
/// the prompt); else straight away, with the prompt kept from being drawn
/// meanwhile (the editor would keep the line until its next prompt, and a
/// Ctrl-C at the prompt could lose it).
fn printer(lines: mpsc::Receiver<Out>, editor: mpsc::Receiver<Option<Boxed>>, reading: Arc<Mutex<bool>>) {
    let mut editor = editor.recv().ok().flatten();
    while let Ok(out) = lines.recv() {
        let text = match out {
            Out::Line(text) => text,
            Out::Flushed(done) => {
                let _ = done.send(());
                continue;
            }
        };
        let up = reading.lock().unwrap();
        if *up && let Some(p) = editor.as_mut() {
            // Not held while printing: the editor takes it to start and end
            // a prompt, and may be the one this print waits for.
            drop(up);
            if p.print(format!("{text}\n")).is_ok() {
                continue;
            }
            let _held = reading.lock().unwrap();
            plain(&text);
        } else {
            plain(&text);
        }
    }
}

fn plain(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{text}");
    let _ = out.flush();
}

/// The line editor's thread: prompts go one way, lines come back.
pub struct Term {
    ask: Option<mpsc::Sender<String>>,
    lines: amp::UnboundedReceiver<Read>,
    pub printer: Printer,
    /// The terminal's settings when the shell began, put back when it ends
    /// (a shell that stops while the editor holds raw mode leaves none behind).
    saved: Option<libc::termios>,
}

impl Term {
    /// Starts the editor and the printer. On a terminal, what is typed
    /// while no prompt is up (a statement is out) is not echoed: the
    /// terminal would write it into the answers being printed (and `^C`
    /// before the next line). It is still read, by the next prompt, which
    /// shows it: the editor takes the terminal's settings as it finds them
    /// at each prompt (echo off here) and puts them back after.
    pub fn start() -> Term {
        let saved = termios();
        if let Some(t) = saved.filter(|_| !plain_terminal()) {
            let mut quiet = t;
            quiet.c_lflag &= !(libc::ECHO | libc::ECHONL);
            // SAFETY: stdin's descriptor and a termios read from it.
            unsafe {
                libc::tcsetattr(libc::STDIN_FILENO, libc::TCSADRAIN, &quiet);
            }
        }
        let (ask, asked) = mpsc::channel::<String>();
        let (lines_tx, lines) = amp::unbounded_channel();
        let (printer_tx, printer_rx) = mpsc::channel::<Option<Boxed>>();
        let reading = Arc::new(Mutex::new(false));
        let prompt_up = reading.clone();
        let (out_tx, out_rx) = mpsc::channel();
        std::thread::spawn(move || printer(out_rx, printer_rx, reading));
        std::thread::spawn(move || {
            let mut editor = match DefaultEditor::new() {
                Ok(e) => e,
                Err(_) => {
                    let _ = printer_tx.send(None);
                    let _ = lines_tx.send(Read::Eof);
                    return;
                }
            };
            let printer = editor.create_external_printer().ok().map(|p| Box::new(p) as Boxed);
            let _ = printer_tx.send(printer);
            while let Ok(prompt) = asked.recv() {
                *prompt_up.lock().unwrap() = true;
                let line = editor.readline(&prompt);
                *prompt_up.lock().unwrap() = false;
                let read = match line {
                    Ok(line) => {
                        if !line.trim().is_empty() {
                            let _ = editor.add_history_entry(line.as_str());
                        }
                        Read::Line(line)
                    }
                    Err(ReadlineError::Interrupted) => Read::Interrupted,
                    Err(ReadlineError::Io(e)) if e.kind() == std::io::ErrorKind::InvalidData => Read::NotText,
                    Err(_) => Read::Eof,
                };
                if lines_tx.send(read).is_err() {
                    break;
                }
            }
        });
        Term {
            ask: Some(ask),
            lines,
            printer: Printer { lines: out_tx },
            saved,
        }
    }

    /// Whether the input is a terminal (a person typing), not a pipe or a file.
    pub fn is_terminal(&self) -> bool {
        self.saved.is_some()
    }

    /// Shows `prompt` and starts reading a line (it comes through [`Term::next`]).
    pub fn ask(&self, prompt: String) {
        if let Some(a) = &self.ask {
            let _ = a.send(prompt);
        }
    }

    /// The line asked for; `Eof` once the editor is gone.
    pub async fn next(&mut self) -> Read {
        self.lines.recv().await.unwrap_or(Read::Eof)
    }
}

impl Drop for Term {
    fn drop(&mut self) {
        // What was said is out before the terminal is put back (and before
        // lab's last line, an error, say).
        self.printer.flush();
        // The editor's thread ends at its next prompt; the terminal is put back now.
        self.ask = None;
        if let Some(t) = &self.saved {
            // SAFETY: stdin's descriptor and a termios read from it.
            unsafe {
                libc::tcsetattr(libc::STDIN_FILENO, libc::TCSANOW, t);
            }
        }
    }
}

/// A terminal the editor does not edit on (rustyline's unsupported ones:
/// it reads whole lines there, and the terminal's echo is all a person
/// sees of what they type).
fn plain_terminal() -> bool {
    std::env::var("TERM").is_ok_and(|t| ["dumb", "cons25", "emacs"].iter().any(|u| u.eq_ignore_ascii_case(&t)))
}

/// The terminal settings of stdin, when it is a terminal.
fn termios() -> Option<libc::termios> {
    // SAFETY: tcgetattr fills the struct it is given, or fails for a non-terminal.
    unsafe {
        let mut t: libc::termios = std::mem::zeroed();
        (libc::tcgetattr(libc::STDIN_FILENO, &mut t) == 0).then_some(t)
    }
}
