//! Workshop stepping (`--step`): before each statement a session runs, say
//! which session runs what and why, and wait for Enter ("s" and Enter runs
//! the rest of the variant without stopping). Prompts go to stderr; tables
//! stay on stdout. Nothing here is global: the run hands a `Stepper` to the
//! sessions that should stop.
use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use super::msg;
use crate::i18n::Lang;
use crate::sqltext;

pub struct Stepper {
    lang: Lang,
    skipping: AtomicBool,
    input: tokio::sync::Mutex<()>,
    /// Why each step runs, by step name, in the run's language (from the
    /// `# why:` comments of the spec and the SQL files).
    whys: Mutex<HashMap<String, String>>,
}

impl Stepper {
    pub fn new(lang: Lang) -> Stepper {
        Stepper {
            lang,
            skipping: AtomicBool::new(false),
            input: tokio::sync::Mutex::new(()),
            whys: Mutex::default(),
        }
    }

    /// A new variant: stop before each step again, with its steps' reasons.
    pub fn reset(&self, whys: HashMap<String, String>) {
        self.skipping.store(false, Ordering::SeqCst);
        *self.whys.lock().unwrap() = whys;
    }

    /// More steps' reasons (from a spec or SQL file the variant reads).
    pub fn add_whys(&self, whys: HashMap<String, String>) {
        self.whys.lock().unwrap().extend(whys);
    }

    pub fn lang(&self) -> Lang {
        self.lang
    }

    /// Whether the person still steps (has not asked to run the rest).
    pub fn active(&self) -> bool {
        !self.skipping.load(Ordering::SeqCst)
    }

    /// Why a session runs `sql`: the step's own reason, else what its kind of
    /// statement does, else a generic line.
    fn why(&self, step: Option<&str>, sql: &str) -> String {
        if let Some(w) = step.and_then(|s| self.whys.lock().unwrap().get(s).cloned()) {
            return w;
        }
        let words = sqltext::words(sql, 2);
        let w: Vec<&str> = words.iter().map(String::as_str).collect();
        let text = match w[..] {
            ["ROLLBACK", "TO", ..] => msg::why_rollback_to(),
            ["SAVEPOINT", ..] => msg::why_savepoint(),
            ["BEGIN" | "START", ..] => msg::why_begin(),
            ["COMMIT" | "END", ..] => msg::why_commit(),
            ["ROLLBACK" | "ABORT", ..] => msg::why_rollback(),
            _ => msg::why_other(),
        };
        text.render(self.lang)
    }

    pub async fn before(&self, session: &str, step: Option<&str>, sql: &str, why: Option<String>) {
        if !self.active() {
            return;
        }
        // Sessions running concurrently ask one at a time.
        let _turn = self.input.lock().await;
        if !self.active() {
            return;
        }
        let lang = self.lang;
        let statement = sql.lines().map(str::trim).collect::<Vec<_>>().join(" ");
        let why = why.unwrap_or_else(|| self.why(step, sql));
        eprintln!(
            "\n{}\n    {statement}\n    {}: {why}\n{}",
            msg::step_next(session).render(lang),
            crate::i18n::ui::why().render(lang),
            msg::step_prompt().render(lang),
        );
        let line = tokio::task::spawn_blocking(|| {
            let mut line = String::new();
            std::io::stdin()
                .read_line(&mut line)
                .map(|n| if n == 0 { None } else { Some(line) })
        })
        .await;
        let skip = match line {
            Ok(Ok(Some(l))) => l.trim().eq_ignore_ascii_case("s"),
            // End of input: nobody is there to press Enter any more.
            _ => true,
        };
        if skip {
            self.skipping.store(true, Ordering::SeqCst);
            eprintln!("{}", msg::step_skipping().render(lang));
        }
    }
}
