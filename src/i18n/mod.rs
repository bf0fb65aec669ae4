//! Every human-facing text, once per language: `en.rs` and `tr.rs`. The
//! scenario catalogue (summaries, documented outcomes, explanations) and the
//! interface's words live there and nowhere else. JSON keys and SQLSTATEs
//! stay as they are in every language.
mod en;
mod text;
mod tr;

pub use text::{Arg, Context, Def, Framed, Text, check_defs, error_line, fill as fill_text, placeholders};

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
    help_flag,
    version_flag,
    help_commands,
    help_command_value,
    help_options,
    help_usage,
    help_subcommand,
    help_default,
    help_possible,
    help_env,
);

pub struct Texts {
    pub ui: Ui,
    pub scenarios: &'static [ScenarioText],
    /// What scenarios say about what they observed, by key: templates with
    /// `{name}` placeholders.
    pub say: &'static [(&'static str, &'static str)],
    /// The command line's help by key: `cmd.<command>` (its about),
    /// `after.<command>`, `arg.<command>.<id>` or, for every command, `arg.<id>`.
    /// English has none: its help is written on the clap types in `cli`.
    pub help: &'static [(&'static str, &'static str)],
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

    /// The template for `key`, if there is one.
    pub fn say_opt(&self, key: &str) -> Option<&'static str> {
        self.say.iter().find(|(k, _)| *k == key).map(|(_, t)| *t)
    }

    /// The template for `key` (the key itself if there is none: a test makes sure there always is).
    pub fn say<'a>(&self, key: &'a str) -> &'a str {
        self.say.iter().find(|(k, _)| *k == key).map_or(key, |(_, t)| t)
    }

    pub fn explain(&self, scenario: &str, variant: &str) -> &'static str {
        self.variant(scenario, variant).map_or("", |v| v.explain)
    }
}

static CURRENT: std::sync::OnceLock<Lang> = std::sync::OnceLock::new();

/// Sets the language of this process's texts (once, at start; English until then).
pub fn set_current(lang: Lang) {
    let _ = CURRENT.set(lang);
}

pub fn current() -> Lang {
    CURRENT.get().copied().unwrap_or(Lang::En)
}

/// The sentence for `key` in the process's language, placeholders filled.
pub fn t(key: &str, values: &[(&str, &dyn std::fmt::Display)]) -> String {
    fill(current().texts().say(key), values)
}

/// `tr!("key", name = value, ...)`: the sentence for `key` in the process's
/// language (see [`t`]). Every human-facing sentence outside `i18n` goes through it.
#[macro_export]
macro_rules! tr {
    ($key:literal) => {
        $crate::i18n::t($key, &[])
    };
    ($key:literal, $($name:ident = $value:expr),+ $(,)?) => {
        $crate::i18n::t($key, &[$((stringify!($name), &$value as &dyn std::fmt::Display)),+])
    };
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

    /// The files under `dir` (relative to the crate) ending in `ext`, with their text.
    fn files(dir: &str, ext: &str) -> Vec<(String, String)> {
        fn walk(dir: &std::path::Path, ext: &str, out: &mut Vec<(String, String)>) {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    walk(&path, ext, out);
                } else if path.to_string_lossy().ends_with(ext) {
                    out.push((path.display().to_string(), std::fs::read_to_string(&path).unwrap()));
                }
            }
        }
        let mut out = Vec::new();
        walk(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(dir),
            ext,
            &mut out,
        );
        out.sort();
        out
    }

    /// Every source file that speaks to a person: all of src/ but the language files.
    fn sources() -> Vec<(String, String)> {
        let all = files("src", ".rs");
        assert!(all.len() > 25, "only {} sources found", all.len());
        all.into_iter()
            .filter(|(path, _)| !path.ends_with("i18n/en.rs") && !path.ends_with("i18n/tr.rs"))
            .collect()
    }

    /// The source before its unit tests.
    fn code(src: &str) -> &str {
        src.split("#[cfg(test)]").next().unwrap_or(src)
    }

    /// The string literals of a source (escaped quotes inside them kept apart).
    fn literals(src: &str) -> Vec<String> {
        let (mut out, mut cur, mut inside, mut escaped) = (Vec::new(), String::new(), false, false);
        let mut prev = ' ';
        for c in src.chars() {
            match (inside, escaped, c) {
                (true, true, _) => escaped = false,
                (true, false, '\\') => escaped = true,
                (true, false, '"') => {
                    out.push(std::mem::take(&mut cur));
                    inside = false;
                }
                (true, false, c) => cur.push(c),
                // A char literal '"' is not the start of a string.
                (false, _, '"') if prev != '\'' => inside = true,
                _ => {}
            }
            prev = c;
        }
        out
    }

    /// A sentence a person would read: a word of three letters or more once
    /// placeholders are removed, not SQL (which starts with an upper-case keyword).
    fn is_prose(literal: &str) -> bool {
        let mut bare = String::new();
        let mut depth = 0;
        for c in literal.chars() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                c if depth == 0 => bare.push(c),
                _ => {}
            }
        }
        let first = bare.split_whitespace().next().unwrap_or("");
        let sql = first.len() >= 3 && first.chars().all(|c| c.is_ascii_uppercase() || c == '_');
        !sql && bare.split(|c: char| !c.is_ascii_alphabetic()).any(|w| w.len() >= 3) && bare.contains(' ')
    }

    /// The text between a call's parentheses, starting right after `(`.
    fn call_args(src: &str) -> &str {
        let mut depth = 1;
        let mut in_str = false;
        let mut escaped = false;
        for (i, c) in src.char_indices() {
            match (in_str, escaped, c) {
                (true, true, _) => escaped = false,
                (true, false, '\\') => escaped = true,
                (true, false, '"') => in_str = false,
                (false, _, '"') => in_str = true,
                (false, _, '(') | (false, _, '[') => depth += 1,
                (false, _, ')') | (false, _, ']') => {
                    depth -= 1;
                    if depth == 0 {
                        return &src[..i];
                    }
                }
                _ => {}
            }
        }
        src
    }

    #[test]
    fn no_sentence_is_written_outside_the_language_files() {
        // Where the code hands a person text: each such call takes its words from
        // tr!/say (a key), never from a literal sentence.
        let calls = [
            ".note(",
            ".narrate(",
            ".expect(",
            ".observe(",
            ".skip(",
            ".evidence(",
            "bail!(",
            "anyhow!(",
            ".context(",
            ".with_context(",
            "sql_error(",
            "title: ",
            "columns: ",
            "eprintln!(",
            "println!(",
            "st.why = ",
        ];
        let mut checked = 0;
        for (file, src) in sources() {
            let code = code(&src);
            for call in calls {
                for (at, _) in code.match_indices(call) {
                    let rest = &code[at + call.len()..];
                    let args = if call.ends_with('(') {
                        call_args(rest)
                    } else {
                        rest.split([';', '\n']).next().unwrap_or("")
                    };
                    checked += 1;
                    for literal in literals(args) {
                        assert!(
                            !is_prose(&literal),
                            "{file}: {call}... carries a sentence of its own: \"{literal}\"; \
                             put it in en.rs and tr.rs and use tr!(\"key\")"
                        );
                    }
                }
            }
        }
        assert!(checked > 200, "only {checked} calls checked");
        // The checker sees what it must.
        assert!(is_prose("B waits for A"));
        assert!(is_prose("{at}: no answer within {deadline} s"));
        assert!(!is_prose("{}: {e}"));
        assert!(!is_prose("DROP INDEX ix_orders_customer_id"));
        assert!(!is_prose("lu.final"));
    }

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
        for lang in LANGS {
            let mut keys: Vec<&str> = lang.texts().say.iter().map(|(k, _)| *k).collect();
            keys.sort_unstable();
            let dup = keys.windows(2).find(|w| w[0] == w[1]);
            assert!(
                dup.is_none(),
                "{lang:?}: key {dup:?} twice (only the first would be used)"
            );
        }
        for (key, text) in en.say {
            let other = tr
                .say
                .iter()
                .find(|(k, _)| k == key)
                .unwrap_or_else(|| panic!("{key} has no Turkish text"));
            assert_eq!(holes(text), holes(other.1), "{key}: placeholders differ");
        }
        // Every key the code uses is there (the sources are scanned for key literals).
        // A key looks like "xx.word" or "xx.word.word"; every such literal must have a text.
        let is_key = |t: &str| {
            let mut parts = t.split('.');
            let head = parts.next().unwrap_or("");
            let rest: Vec<&str> = parts.collect();
            head.len() == 2
                && !t.ends_with(".rs")
                && head.chars().all(|c| c.is_ascii_lowercase())
                && !rest.is_empty()
                && rest
                    .iter()
                    .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
        };
        let mut used = 0;
        for (_, src) in sources() {
            for literal in literals(code(&src)).into_iter().filter(|l| is_key(l)) {
                assert!(en.say.iter().any(|(k, _)| *k == literal), "\"{literal}\" has no text");
                used += 1;
            }
        }
        assert!(used > 50, "only {used} uses found");
    }

    #[test]
    fn the_command_line_help_is_complete_in_every_language() {
        use clap::CommandFactory;
        // Every about and option help of the English tree has its Turkish text,
        // and every Turkish text belongs to something that exists.
        let help = Lang::Tr.texts().help;
        let find = |k: &str| help.iter().any(|(key, _)| *key == k);
        let mut used = vec!["cmd.lab".to_string(), "after.lab".to_string()];
        fn walk(c: &clap::Command, out: &mut Vec<(String, Vec<String>)>) {
            let name = c.get_name().to_string();
            if name != "lab" {
                out.push((format!("cmd.{name}"), vec![]));
            }
            for a in c.get_arguments() {
                let id = a.get_id().to_string();
                out.push((format!("arg.{name}.{id}"), vec![format!("arg.{id}")]));
            }
            for s in c.get_subcommands() {
                walk(s, out);
            }
        }
        let mut needed = Vec::new();
        walk(&crate::cli::Cli::command(), &mut needed);
        for (key, fallbacks) in &needed {
            let hit = std::iter::once(key).chain(fallbacks).find(|k| find(k));
            assert!(hit.is_some(), "no Turkish help for {key}");
            used.push(hit.unwrap().clone());
        }
        for (key, text) in help {
            assert!(used.iter().any(|u| u == key), "{key} is not used");
            assert!(!text.trim().is_empty());
        }
        // And the localized command is what a Turkish user sees.
        let out = crate::cli::command(Lang::Tr).render_long_help().to_string();
        assert!(
            out.contains("Kullanım:") && out.contains("Komutlar") && out.contains("Yardımı göster"),
            "{out}"
        );
        assert!(!out.contains("Print help") && !out.contains("possible values"), "{out}");
    }

    #[test]
    fn every_statement_a_session_runs_says_why_in_every_language() {
        use crate::sql::SqlFile;
        // Every walkthrough in lab/ but the schema, the seed and the lock view's query.
        let files: Vec<SqlFile> = files("lab", ".sql")
            .into_iter()
            .filter(|(path, _)| {
                !["schema.sql", "seed.sql", "locks.sql"]
                    .iter()
                    .any(|f| path.ends_with(f))
            })
            .map(|(path, text)| SqlFile::new(Box::leak(path.into_boxed_str()), Box::leak(text.into_boxed_str())))
            .collect();
        assert_eq!(files.len(), crate::scenarios::ALL.len(), "one walkthrough per scenario");
        // Run on the lab's own connection (setup, evidence): `--step` never shows these.
        let lab_only = [
            "advisory-lock.holders",
            "ddl-lock-queue.queue",
            "deadlock.deadlock_timeout",
            "deadlock.reserved",
            "deadlock.can_set_deadlock_timeout",
            "invoice-numbering.enqueue",
            "invoice-numbering.invalid_tax_numbers",
            "invoice-numbering.number_at_enqueue",
            "invoice-numbering.counter_after_enqueue",
            "invoice-numbering.cancel",
            "invoice-numbering.outgoing",
            "invoice-numbering.numbers_issued",
            "invoice-numbering.statuses",
            "lost-update.audit",
            "lost-update.reset_order",
            "queue.fill",
            "queue.analyze",
            "queue.left_over",
            "rc-recheck.rows",
            "stale-event.book",
            "stock-race.free_connections",
            "stock-race.set_stock",
            "stock-race.stock",
            "write-skew.pending",
            "write-skew.fill_history",
            "write-skew.analyze",
            "write-skew.drop_index",
            "write-skew.clear_pending",
            "write-skew.siread_locks",
        ];
        let mut seen = Vec::new();
        for f in &files {
            for name in f.names() {
                let origin = format!("{}.{name}", f.stem());
                let stepped = !lab_only.contains(&origin.as_str());
                for lang in LANGS {
                    let why = lang.texts().say_opt(&format!("why.{origin}"));
                    assert_eq!(why.is_some(), stepped, "{lang:?}: why.{origin} (stepped: {stepped})");
                }
                seen.push(origin);
            }
        }
        for l in lab_only {
            assert!(seen.iter().any(|s| s == l), "{l} is no statement");
        }
        // No why for a statement that does not exist.
        for (key, _) in Lang::En.texts().say.iter().filter(|(k, _)| k.starts_with("why.")) {
            let origin = &key["why.".len()..];
            assert!(
                origin.starts_with("verb.") || seen.iter().any(|s| s == origin),
                "{key}: no such statement"
            );
        }
        for lang in LANGS {
            assert!(lang.texts().say_opt("why.verb.savepoint").is_some());
            assert!(lang.texts().say_opt("why.verb.rollback_to").is_some());
        }
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
