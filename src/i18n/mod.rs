//! Every human-facing text, once per language: `en.rs` and `tr.rs`. The
//! scenario catalogue (summaries, documented outcomes, explanations) and the
//! interface's words live there and nowhere else. JSON keys and SQLSTATEs
//! stay as they are in every language.
mod en;
mod tr;

use clap::ValueEnum;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Lang {
    En,
    Tr,
}

impl Lang {
    /// The language of the environment (LC_ALL, then LC_MESSAGES, then LANG),
    /// English unless it is Turkish.
    pub fn from_env(env: &dyn Fn(&str) -> Option<String>) -> Lang {
        let locale = ["LC_ALL", "LC_MESSAGES", "LANG"]
            .iter()
            .find_map(|v| env(v).filter(|s| !s.is_empty()));
        match locale {
            Some(l) if l.to_ascii_lowercase().starts_with("tr") => Lang::Tr,
            _ => Lang::En,
        }
    }

    pub fn texts(self) -> &'static Texts {
        match self {
            Lang::En => &en::TEXTS,
            Lang::Tr => &tr::TEXTS,
        }
    }
}

pub struct VariantText {
    pub name: &'static str,
    /// The documented outcome, one line.
    pub expected: &'static str,
    /// What happened and why (the mechanism), and the fix, in a few lines.
    pub explain: &'static str,
}

pub struct ScenarioText {
    pub name: &'static str,
    pub summary: &'static str,
    pub variants: &'static [VariantText],
}

macro_rules! ui_texts {
    ($($field:ident),* $(,)?) => {
        /// The interface's words. `{name}` marks a value filled in with [`fill`].
        pub struct Ui {
            $(pub $field: &'static str,)*
        }

        impl Ui {
            /// Every text with its name, for the completeness tests.
            pub fn all(&self) -> Vec<(&'static str, &'static str)> {
                vec![$((stringify!($field), self.$field)),*]
            }
        }
    };
}

ui_texts!(
    col_scenario,
    col_summary,
    col_variants,
    col_variant,
    col_expected,
    col_observed,
    col_anomaly,
    col_verdict,
    col_t_ms,
    verdict_ok,
    verdict_not,
    verdict_skipped,
    yes,
    no,
    skipped,
    note,
    metrics,
    why,
    scenario_footer,
    all_summary,
    error,
    interrupted,
    step_next,
    step_prompt,
    step_skipping,
    step_needs_terminal,
    step_begin,
    step_commit,
    step_rollback,
    step_other,
    server_running,
    server_run_against,
    server_stop,
    server_stopped,
    locks_title,
    locks_none,
    locks_needs_server,
    col_pid,
    col_session,
    col_state,
    col_wait_event,
    col_blocked_by,
    col_lock_mode,
    col_query,
    col_waiting,
    step_waiting,
    step_after_waiting,
    step_commit_rolled_back,
    retry_again,
    retry_exhausted,
);

pub struct Texts {
    pub ui: Ui,
    pub scenarios: &'static [ScenarioText],
    /// What scenarios say about what they observed, by key: templates with
    /// `{name}` placeholders.
    pub say: &'static [(&'static str, &'static str)],
}

impl Texts {
    fn variant(&self, scenario: &str, variant: &str) -> Option<&'static VariantText> {
        self.scenarios
            .iter()
            .find(|s| s.name == scenario)?
            .variants
            .iter()
            .find(|v| v.name == variant)
    }

    pub fn summary(&self, scenario: &str) -> &'static str {
        self.scenarios
            .iter()
            .find(|s| s.name == scenario)
            .map_or("", |s| s.summary)
    }

    pub fn expected(&self, scenario: &str, variant: &str) -> &'static str {
        self.variant(scenario, variant).map_or("", |v| v.expected)
    }

    /// The template for `key` (the key itself if there is none: a test makes sure there always is).
    pub fn say<'a>(&self, key: &'a str) -> &'a str {
        self.say.iter().find(|(k, _)| *k == key).map_or(key, |(_, t)| t)
    }

    pub fn explain(&self, scenario: &str, variant: &str) -> &'static str {
        self.variant(scenario, variant).map_or("", |v| v.explain)
    }
}

/// Fills `{name}` placeholders.
pub fn fill(template: &str, values: &[(&str, &dyn std::fmt::Display)]) -> String {
    let mut out = template.to_string();
    for (k, v) in values {
        out = out.replace(&format!("{{{k}}}"), &v.to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenarios::ALL;

    const LANGS: [Lang; 2] = [Lang::En, Lang::Tr];

    /// The placeholders of a text, sorted: a translation must keep them all.
    fn holes(s: &str) -> Vec<String> {
        let mut v: Vec<String> = s
            .split('{')
            .skip(1)
            .filter_map(|p| p.split('}').next().map(str::to_string))
            .collect();
        v.sort();
        v
    }

    #[test]
    fn every_scenario_and_variant_has_its_texts_in_every_language() {
        for lang in LANGS {
            let t = lang.texts();
            assert_eq!(
                t.scenarios.len(),
                ALL.len(),
                "{lang:?}: a scenario without texts, or texts without a scenario"
            );
            for s in ALL {
                assert!(!t.summary(s.name).is_empty(), "{lang:?}: {} has no summary", s.name);
                let texts = t.scenarios.iter().find(|x| x.name == s.name).unwrap();
                assert_eq!(texts.variants.len(), s.variants.len(), "{lang:?}: {} variants", s.name);
                for v in s.variants {
                    assert!(
                        !t.expected(s.name, v.name).is_empty(),
                        "{lang:?}: {}/{} expected",
                        s.name,
                        v.name
                    );
                    assert!(
                        !t.explain(s.name, v.name).is_empty(),
                        "{lang:?}: {}/{} explanation",
                        s.name,
                        v.name
                    );
                }
            }
        }
    }

    #[test]
    fn every_interface_text_exists_in_both_languages_and_differs_where_it_should() {
        let (en, tr) = (Lang::En.texts().ui.all(), Lang::Tr.texts().ui.all());
        assert_eq!(en.len(), tr.len());
        for ((name, e), (_, t)) in en.iter().zip(&tr) {
            assert!(
                !e.trim().is_empty() && !t.trim().is_empty(),
                "{name} is empty in a language"
            );
            // The same placeholders in both, so no value is lost in translation.
            assert_eq!(holes(e), holes(t), "{name}: placeholders differ");
        }
        let same = en.iter().zip(&tr).filter(|((_, e), (_, t))| e == t).count();
        assert!(same <= 3, "{same} interface texts are not translated");
        // Explanations are translated, not copied.
        for s in ALL {
            for v in s.variants {
                assert_ne!(
                    Lang::En.texts().explain(s.name, v.name),
                    Lang::Tr.texts().explain(s.name, v.name)
                );
            }
        }
    }

    #[test]
    fn every_observation_key_used_exists_in_both_languages_with_the_same_placeholders() {
        let (en, tr) = (Lang::En.texts(), Lang::Tr.texts());
        assert_eq!(en.say.len(), tr.say.len());
        for (key, text) in en.say {
            let other = tr
                .say
                .iter()
                .find(|(k, _)| k == key)
                .unwrap_or_else(|| panic!("{key} has no Turkish text"));
            assert_eq!(holes(text), holes(other.1), "{key}: placeholders differ");
        }
        // Every key the code uses is there (the sources are scanned for say("...")).
        let sources = [
            include_str!("../engine.rs"),
            include_str!("../scenarios/lost_update.rs"),
            include_str!("../scenarios/write_skew.rs"),
            include_str!("../scenarios/fk_blocking.rs"),
            include_str!("../scenarios/deadlock.rs"),
            include_str!("../scenarios/nowait.rs"),
            include_str!("../scenarios/advisory_lock.rs"),
            include_str!("../scenarios/ddl_lock_queue.rs"),
            include_str!("../scenarios/rc_recheck.rs"),
            include_str!("../scenarios/timeouts.rs"),
            include_str!("../scenarios/queue.rs"),
            include_str!("../scenarios/stock_race.rs"),
            include_str!("../scenarios/stale_event.rs"),
            include_str!("../scenarios/invoice.rs"),
        ];
        // A key looks like "xx.word" or "xx.word.word"; every such literal must have a text.
        let is_key = |t: &str| {
            let mut parts = t.split('.');
            let head = parts.next().unwrap_or("");
            let rest: Vec<&str> = parts.collect();
            head.len() == 2
                && head.chars().all(|c| c.is_ascii_lowercase())
                && !rest.is_empty()
                && rest
                    .iter()
                    .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
        };
        // The string literals of a source (escaped quotes inside them kept apart).
        let literals = |src: &str| {
            let (mut out, mut cur, mut inside, mut escaped) = (Vec::new(), String::new(), false, false);
            for c in src.chars() {
                match (inside, escaped, c) {
                    (true, true, _) => escaped = false,
                    (true, false, '\\') => escaped = true,
                    (true, false, '"') => {
                        out.push(std::mem::take(&mut cur));
                        inside = false;
                    }
                    (true, false, c) => cur.push(c),
                    (false, _, '"') => inside = true,
                    _ => {}
                }
            }
            out
        };
        let mut used = 0;
        for src in sources {
            for literal in literals(src).into_iter().filter(|l| is_key(l)) {
                assert!(en.say.iter().any(|(k, _)| *k == literal), "\"{literal}\" has no text");
                used += 1;
            }
        }
        assert!(used > 50, "only {used} uses found");
    }

    #[test]
    fn language_comes_from_the_environment() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string())
        };
        assert_eq!(Lang::from_env(&env(&[("LANG", "tr_TR.UTF-8")])), Lang::Tr);
        assert_eq!(
            Lang::from_env(&env(&[("LANG", "tr_TR.UTF-8"), ("LC_ALL", "C")])),
            Lang::En
        );
        assert_eq!(Lang::from_env(&env(&[("LANG", "de_DE.UTF-8")])), Lang::En);
        assert_eq!(Lang::from_env(&env(&[])), Lang::En);
        assert_eq!(fill("{a} and {b}", &[("a", &1), ("b", &"x")]), "1 and x");
    }
}
