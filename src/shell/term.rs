//! The terminal side of `lab shell`: rustyline's line editor on a thread of
//! its own (its `readline` blocks), asked for one line at a time with the
//! prompt of the moment, and a printer that writes above the line being
//! typed (rustyline's external printer) or, without a terminal, plainly.
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
}

type Boxed = Box<dyn ExternalPrinter + Send>;

/// Prints whole lines while a prompt may be showing.
#[derive(Clone)]
pub struct Printer {
    editor: Arc<Mutex<Option<Boxed>>>,
    /// A prompt is up (the editor is reading a line). Held while a line is
    /// printed, so the prompt comes after it or the editor prints it.
    reading: Arc<Mutex<bool>>,
}

impl Printer {
    /// Through the editor while its prompt is up (above the prompt); else
    /// straight away (the editor would keep it until its next prompt, and
    /// a Ctrl-C at the prompt could lose it).
    pub fn say(&self, text: &str) {
        let reading = self.reading.lock().unwrap();
        if *reading
            && let Some(p) = self.editor.lock().unwrap().as_mut()
            && p.print(format!("{text}\n")).is_ok()
        {
            return;
        }
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{text}");
        let _ = out.flush();
    }
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
    pub fn start() -> Term {
        let saved = termios();
        let (ask, asked) = mpsc::channel::<String>();
        let (lines_tx, lines) = amp::unbounded_channel();
        let (printer_tx, printer_rx) = mpsc::channel::<Option<Boxed>>();
        let reading = Arc::new(Mutex::new(false));
        let prompt_up = reading.clone();
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
                    Err(_) => Read::Eof,
                };
                if lines_tx.send(read).is_err() {
                    break;
                }
            }
        });
        let printer = printer_rx.recv().ok().flatten();
        Term {
            ask: Some(ask),
            lines,
            printer: Printer {
                editor: Arc::new(Mutex::new(printer)),
                reading,
            },
            saved,
        }
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

/// The terminal settings of stdin, when it is a terminal.
fn termios() -> Option<libc::termios> {
    // SAFETY: tcgetattr fills the struct it is given, or fails for a non-terminal.
    unsafe {
        let mut t: libc::termios = std::mem::zeroed();
        (libc::tcgetattr(libc::STDIN_FILENO, &mut t) == 0).then_some(t)
    }
}
