//! Workshop stepping (`--step`): before each statement a session runs, say
//! which session runs what and why, and wait for Enter ("s" and Enter runs
//! the rest of the variant without stopping). Prompts go to stderr; tables
//! stay on stdout. Nothing here is global: the run hands a `Stepper` to the
//! sessions that should stop.
use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use super::guess::{self, Guess, Tally};
use super::msg;
use crate::i18n::Lang;
use crate::sql_lexer;

/// Puts a timeline entry's outcome into words (the renderer's; the engine renders nothing).
pub type OutcomeLine = fn(&crate::report::Entry, Lang) -> String;

pub struct Stepper {
    lang: Lang,
    outcome: OutcomeLine,
    skipping: AtomicBool,
    /// A server timeout that a person's pace would set off is running: the
    /// variant's remaining statements are shown, not waited for.
    unattended: AtomicBool,
    input: tokio::sync::Mutex<()>,
    /// Why each step runs, by step name, in the run's language (from the
    /// `# why:` comments of the spec and the SQL files).
    whys: Mutex<HashMap<String, String>>,
    /// `--predict`: the prompt asks what the statement will do.
    predict: bool,
    /// Each session's guess for the statement it runs now, until judged.
    guesses: Mutex<HashMap<String, Guess>>,
    tally: Mutex<Tally>,
}

impl Stepper {
    pub fn new(lang: Lang, outcome: OutcomeLine) -> Stepper {
        Stepper {
            lang,
            outcome,
            skipping: AtomicBool::new(false),
            unattended: AtomicBool::new(false),
            input: tokio::sync::Mutex::new(()),
            whys: Mutex::default(),
            predict: false,
            guesses: Mutex::default(),
            tally: Mutex::default(),
        }
    }

    /// Asks for a guess at each prompt (guess first), judged when the server answers.
    pub fn predicting(mut self, on: bool) -> Stepper {
        self.predict = on;
        self
    }

    /// A new variant: stop before each step again, with its steps' reasons.
    pub fn reset(&self, whys: HashMap<String, String>) {
        self.skipping.store(false, Ordering::SeqCst);
        self.unattended.store(false, Ordering::SeqCst);
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

    /// Prints each timeline entry's outcome as it is recorded, while the
    /// room still watches statement by statement (stepping, or a timeout
    /// running on its own; not once the rest was asked to run): a recorder's live sink.
    pub fn live(self: &std::sync::Arc<Self>) -> super::observe::LiveSink {
        let watching = self.clone();
        Box::new(move |e| {
            if watching.active() {
                let outcome = (watching.outcome)(e, watching.lang);
                crate::output::eline!(
                    "{}",
                    crate::output::eparagraph(&format!("    {}: ", e.session), &outcome)
                );
            }
            watching.judge(e);
        })
    }

    /// A session's guess against what its statement did, once the server said.
    fn judge(&self, e: &crate::report::Entry) {
        let Some(did) = guess::did(e) else { return };
        let Some(g) = self.guesses.lock().unwrap().remove(&e.session) else {
            return;
        };
        let mut tally = self.tally.lock().unwrap();
        crate::output::eline!(
            "{}",
            crate::output::eparagraph("      ", tally.judge(&g, &did, self.lang).trim_start())
        );
    }

    /// A new variant begins: say which, and what it should show, before its first prompt.
    pub fn announce(&self, label: &str, expected: &str) {
        if self.active() {
            crate::output::eline!("\n{}", crate::output::eparagraph(&format!("▶ {label}: "), expected));
        }
    }

    /// Why a session runs `sql`: the step's own reason, else what its kind of
    /// statement does, else a generic line.
    fn why(&self, step: Option<&str>, sql: &str) -> String {
        if let Some(w) = step.and_then(|s| self.whys.lock().unwrap().get(s).cloned()) {
            return w;
        }
        let words = sql_lexer::words(sql, 2);
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

    /// Shows `session`'s next statement and why, and waits for Enter;
    /// `failed`: its transaction already failed (a COMMIT will be a ROLLBACK).
    pub async fn before(&self, session: &str, step: Option<&str>, sql: &str, why: Option<String>, failed: bool) {
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
        if self.unattended.load(Ordering::SeqCst) {
            // A timeout is running: shown, not waited for.
            crate::output::eline!(
                "{}\n{}",
                msg::step_next(session).render(lang),
                crate::output::eparagraph("    ", &statement)
            );
            return;
        }
        let mut why = why.unwrap_or_else(|| self.why(step, sql));
        // COMMIT, END or PREPARE TRANSACTION; not COMMIT PREPARED (refused
        // there, 25P02) nor a ROLLBACK, which ends it as asked.
        let commits = sql_lexer::tx_effect(sql) == sql_lexer::TxEffect::End
            && !matches!(
                sql_lexer::words(sql, 1).first().map(String::as_str),
                Some("ROLLBACK" | "ABORT")
            );
        if failed && commits {
            why = format!("{why}; {}", msg::commit_failed_tx().render(lang));
        }
        let prompt = if self.predict {
            msg::step_guess()
        } else {
            msg::step_prompt()
        };
        let asked = crate::output::eparagraph("", &prompt.render(lang));
        crate::output::eline!(
            "\n{}\n{}\n{}\n{asked}",
            msg::step_next(session).render(lang),
            crate::output::eparagraph("    ", &statement),
            crate::output::eparagraph(&format!("    {}: ", crate::i18n::ui::why().render(lang)), &why),
        );
        let skip = loop {
            let Some(line) = read_line().await else {
                // End of input: nobody is there to press Enter any more.
                break true;
            };
            if line.trim().eq_ignore_ascii_case("s") {
                break true;
            }
            if !self.predict {
                break false;
            }
            match guess::guess(&line) {
                Some(Ok(g)) => {
                    self.guesses.lock().unwrap().insert(session.to_string(), g);
                }
                // Not a guess: asked again, the statement not yet run.
                Some(Err(())) => {
                    let bad = crate::output::eparagraph("", &guess::msg::predict_bad().render(lang));
                    crate::output::eline!("{bad}\n{asked}");
                    continue;
                }
                None => {}
            }
            break false;
        };
        if skip {
            self.skipping.store(true, Ordering::SeqCst);
            crate::output::eline!("{}", msg::step_skipping().render(lang));
        } else if let Some((setting, value)) = pace_sensitive(sql) {
            // From here a person's pause would set the timeout off before its
            // time: the variant's next statements run on their own.
            self.unattended.store(true, Ordering::SeqCst);
            let said = msg::step_unattended(setting, value).render(lang);
            crate::output::eline!("{}", crate::output::eparagraph("", &said));
        }
    }
}

/// A line typed at the terminal; none at the end of the input.
async fn read_line() -> Option<String> {
    let read = tokio::task::spawn_blocking(|| {
        let mut line = String::new();
        std::io::stdin().read_line(&mut line).map(|n| (n > 0).then_some(line))
    })
    .await;
    read.ok().and_then(Result::ok).flatten()
}

/// A SET of a timeout that counts while the session waits for its next
/// statement (idle in a transaction, or the whole transaction): the setting
/// and its value. lock_timeout and statement_timeout count only while a
/// statement runs, so a person's pace cannot set them off.
pub fn pace_sensitive(sql: &str) -> Option<(&'static str, String)> {
    let words = sql_lexer::words(sql, 4);
    let lower: Vec<String> = words.iter().map(|w| w.to_ascii_lowercase()).collect();
    let at = lower.iter().position(|w| w == "set")?;
    let name = lower.get(at + 1..)?.iter().find(|w| *w != "local" && *w != "session")?;
    let setting = [
        "idle_in_transaction_session_timeout",
        "transaction_timeout",
        "idle_session_timeout",
    ]
    .into_iter()
    .find(|s| name == s)?;
    // Without its comments (a spec's two-way parameter: /*:timeout*/'1s').
    let mut text = sql.to_string();
    while let (Some(a), Some(b)) = (text.find("/*"), text.find("*/")) {
        if b < a {
            break;
        }
        text.replace_range(a..b + 2, "");
    }
    let value = text
        .split_once('=')
        .or_else(|| {
            let i = text.to_ascii_lowercase().find(" to ")?;
            Some((&text[..i], &text[i + 4..]))
        })
        .map(|(_, v)| v.trim().trim_end_matches(';').trim().to_string())
        .unwrap_or_default();
    Some((setting, value))
}

#[cfg(test)]
mod tests {
    use super::pace_sensitive;

    #[test]
    fn only_timeouts_that_count_between_statements_are_pace_sensitive() {
        assert_eq!(
            pace_sensitive("SET idle_in_transaction_session_timeout = '200ms';"),
            Some(("idle_in_transaction_session_timeout", "'200ms'".to_string()))
        );
        assert!(pace_sensitive("SET LOCAL transaction_timeout = '1s'").is_some());
        assert!(pace_sensitive("SET lock_timeout = '1s'").is_none());
        assert!(pace_sensitive("SET statement_timeout = '1s'").is_none());
        assert!(pace_sensitive("SELECT 1").is_none());
    }
}
