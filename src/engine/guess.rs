//! Guess first (seed 003's "Önce Tahmin Et"): what the room says a
//! statement will do, read from a typed line, and held against what the
//! server did (answered at once, waited for whom, failed with which
//! SQLSTATE, which value). `lab shell --predict` and `--step --predict` ask.
use crate::i18n::{Lang, Text};

/// What the room guessed a statement would do.
#[derive(Debug, Clone, PartialEq)]
pub enum Guess {
    /// It runs at once (Enter, `ok`).
    RunsAtOnce,
    /// It waits for these sessions (`wait A`; `wait` alone: for somebody).
    Waits(Vec<String>),
    /// It fails, with this SQLSTATE if given (`error 40001`).
    Fails(Option<String>),
    /// Its first row's first value (`value 5`).
    Value(String),
}

/// A guess as typed; none for `-` (no guess) and for what is not one.
pub fn guess(text: &str) -> Option<Result<Guess, ()>> {
    let t = text.trim();
    let (verb, rest) = match t.split_once(char::is_whitespace) {
        Some((v, r)) => (v.to_ascii_lowercase(), r.trim()),
        None => (t.to_ascii_lowercase(), ""),
    };
    Some(Ok(match verb.as_str() {
        "-" => return None,
        "" | "ok" | "runs" | "r" => Guess::RunsAtOnce,
        "wait" | "waits" | "w" | "bekler" => Guess::Waits(
            rest.split([',', ' '])
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect(),
        ),
        "error" | "fails" | "e" | "hata" => Guess::Fails((!rest.is_empty()).then(|| rest.to_ascii_uppercase())),
        "value" | "v" | "değer" => Guess::Value(rest.to_string()),
        _ => return Some(Err(())),
    }))
}

/// What the server did with a statement, as a guess is compared with it.
#[derive(Debug, Clone, PartialEq)]
pub enum Did {
    RanAtOnce { value: Option<String> },
    Waited { by: Vec<String> },
    Failed { code: Option<String> },
}

impl Guess {
    /// Whether the server did what was guessed.
    pub fn right(&self, did: &Did) -> bool {
        match (self, did) {
            (Guess::RunsAtOnce, Did::RanAtOnce { .. }) => true,
            (Guess::Waits(who), Did::Waited { by }) => who.iter().all(|w| by.iter().any(|b| b.eq_ignore_ascii_case(w))),
            (Guess::Fails(None), Did::Failed { .. }) => true,
            (Guess::Fails(Some(c)), Did::Failed { code }) => code.as_deref() == Some(c.as_str()),
            (Guess::Value(v), Did::RanAtOnce { value }) => value.as_deref() == Some(v.as_str()),
            _ => false,
        }
    }
}

/// What the server did, from a timeline entry; none for a note or a notice.
pub fn did(e: &crate::report::Entry) -> Option<Did> {
    use crate::report::StepResult;
    Some(match e.result {
        StepResult::Waiting => Did::Waited {
            by: e.blocked_by.clone().unwrap_or_default(),
        },
        StepResult::Ok | StepResult::Completed => Did::RanAtOnce {
            value: e.results.last().and_then(|set| set.rows.first()?.first()?.clone()),
        },
        StepResult::Error => Did::Failed {
            code: e.sqlstate.clone(),
        },
        StepResult::Note | StepResult::Notice => return None,
    })
}

/// Guesses made and guesses right, counted as they are judged.
#[derive(Debug, Default)]
pub struct Tally {
    pub right: usize,
    pub made: usize,
}

impl Tally {
    /// Judges `g` against `d`: the line that says so, in `lang`.
    pub fn judge(&mut self, g: &Guess, d: &Did, lang: Lang) -> String {
        let right = g.right(d);
        self.made += 1;
        self.right += usize::from(right);
        let words = |d: &Did| match d {
            Did::RanAtOnce { value: Some(v) } => msg::returned(v),
            Did::RanAtOnce { value: None } => msg::ran_at_once(),
            Did::Waited { by } if by.is_empty() => msg::waited_for(msg::somebody()),
            Did::Waited { by } => msg::waited_for(by.join(", ")),
            Did::Failed { code: Some(c) } => msg::failed_with(c),
            Did::Failed { code: None } => msg::failed(),
        };
        let guessed = match g {
            Guess::RunsAtOnce => msg::ran_at_once(),
            Guess::Waits(by) if by.is_empty() => msg::waited_for(msg::somebody()),
            Guess::Waits(by) => msg::waited_for(by.join(", ")),
            Guess::Fails(Some(c)) => msg::failed_with(c),
            Guess::Fails(None) => msg::failed(),
            Guess::Value(v) => msg::returned(v),
        };
        let verdict = if right { msg::right() } else { msg::wrong() };
        format!(
            "{} {} ({})",
            msg::guessed(guessed, words(d)).render(lang),
            verdict.render(lang),
            self.line().render(lang)
        )
    }

    /// `guesses: 3 of 4 right`.
    pub fn line(&self) -> Text {
        msg::tally(self.right as u64, self.made as u64)
    }
}

pub mod msg {
    crate::messages! {
        prefix "gu";
        predict_on() {
            en: "guess first: before each statement, say what it will do. Enter: runs at once; wait A: waits for A; error 40001: fails with that SQLSTATE; value 5: returns 5; -: no guess",
            tr: "önce tahmin: her ifadeden önce ne yapacağını söyleyin. Enter: hemen çalışır; wait A: A'yı bekler; error 40001: o SQLSTATE ile başarısız olur; value 5: 5 döner; -: tahmin yok",
        }
        predict_bad() {
            en: "not a guess: Enter, wait A, error 40001, value 5 or -",
            tr: "tahmin değil: Enter, wait A, error 40001, value 5 ya da -",
        }
        guessed(guess, did) {
            en: "  guessed: {guess} | the server: {did}",
            tr: "  tahmin: {guess} | sunucu: {did}",
        }
        right() {
            en: "✔ right",
            tr: "✔ doğru",
        }
        wrong() {
            en: "✖ not so",
            tr: "✖ öyle değil",
        }
        ran_at_once() {
            en: "ran at once",
            tr: "hemen çalıştı",
        }
        returned(value) {
            en: "ran at once, returned {value}",
            tr: "hemen çalıştı, {value} döndü",
        }
        waited_for(by) {
            en: "waited for {by}",
            tr: "{by} bekledi",
        }
        failed_with(code) {
            en: "failed with {code}",
            tr: "{code} ile başarısız oldu",
        }
        failed() {
            en: "failed",
            tr: "başarısız oldu",
        }
        somebody() {
            en: "somebody",
            tr: "birisi",
        }
        tally(right, total) {
            en: "guesses: {right} of {total} right",
            tr: "tahminler: {total} tahminden {right} doğru",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guesses_are_compared_with_what_the_server_did() {
        let g = |t: &str| guess(t).unwrap().unwrap();
        assert_eq!(g(""), Guess::RunsAtOnce);
        assert_eq!(g("wait a"), Guess::Waits(vec!["a".into()]));
        assert_eq!(g("error 40p01"), Guess::Fails(Some("40P01".into())));
        assert_eq!(guess("-"), None);
        assert_eq!(guess("maybe"), Some(Err(())));
        let waited = Did::Waited { by: vec!["A".into()] };
        assert!(g("wait a").right(&waited));
        assert!(g("wait").right(&waited));
        assert!(!g("wait b").right(&waited));
        assert!(!g("").right(&waited));
        let failed = Did::Failed {
            code: Some("40001".into()),
        };
        assert!(g("error").right(&failed) && g("error 40001").right(&failed));
        assert!(!g("error 40P01").right(&failed));
        let ran = Did::RanAtOnce {
            value: Some("5".into()),
        };
        assert!(g("value 5").right(&ran) && g("ok").right(&ran));
        assert!(!g("value 4").right(&ran));
    }
}
