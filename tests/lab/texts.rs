//! Every text lab says exists in English and Turkish with the same
//! placeholders; every step says why; no sentence is written outside a
//! message declaration. (No server needed.)
use std::collections::HashSet;
use std::path::Path;

use lab::i18n::{Lang, check_defs};

/// The files under `dir` (relative to the crate) ending in `ext`, with their text.
fn files(dir: &str, ext: &str) -> Vec<(String, String)> {
    fn walk(dir: &Path, ext: &str, out: &mut Vec<(String, String)>) {
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
    walk(&Path::new(env!("CARGO_MANIFEST_DIR")).join(dir), ext, &mut out);
    out.sort();
    out
}

/// A source file without its unit tests.
fn code(src: &str) -> &str {
    src.split("#[cfg(test)]").next().unwrap_or(src)
}

#[test]
fn every_message_exists_in_both_languages_with_the_same_placeholders() {
    let all = lab::messages();
    let mut keys = HashSet::new();
    let mut count = 0;
    for defs in &all {
        let problems = check_defs(defs);
        assert!(problems.is_empty(), "{problems:#?}");
        for d in defs.iter() {
            assert!(keys.insert(d.key), "{} is declared twice", d.key);
            count += 1;
        }
    }
    assert!(count > 400, "only {count} messages");
    // Translated, not copied: a few words (SQL, names) may read the same.
    let same: Vec<&str> = all
        .iter()
        .flat_map(|d| d.iter())
        .filter(|d| d.en == d.tr && d.en.split_whitespace().count() > 3)
        .map(|d| d.key)
        .collect();
    assert!(same.len() <= 8, "not translated: {same:?}");
}

#[test]
fn every_messages_block_is_registered() {
    // lab::messages() lists each module's block (and each scenario's
    // variants! block, which declares its variants' texts); a block it
    // misses would escape the checks above.
    let blocks: usize = files("src", ".rs")
        .iter()
        .map(|(_, src)| {
            code(src).matches("crate::messages! {").count() + code(src).matches("crate::variants! {").count()
        })
        .sum();
    assert_eq!(
        blocks,
        lab::messages().len(),
        "a messages! block is missing from lab::messages()"
    );
}

#[test]
fn the_command_line_help_is_complete_in_every_language() {
    // Every about and option help differs between the two languages.
    fn walk(en: &clap::Command, tr: &clap::Command, missing: &mut Vec<String>) {
        let name = en.get_name();
        if en.get_about().is_some() && en.get_about().map(|a| a.to_string()) == tr.get_about().map(|a| a.to_string()) {
            missing.push(format!("about of {name}"));
        }
        for a in en.get_arguments() {
            let other = tr.get_arguments().find(|b| b.get_id() == a.get_id()).unwrap();
            // Without the notes lab adds in each language ([env: ...], [default: ...]).
            let own = |h: &clap::builder::StyledStr| {
                let mut h = h.to_string();
                while h.ends_with(']')
                    && let Some(i) = h.rfind(" [")
                {
                    h.truncate(i);
                }
                h
            };
            let (h1, h2) = (a.get_help().map(own), other.get_help().map(own));
            if h1.is_some() && h1 == h2 {
                missing.push(format!("{name} --{}", a.get_id()));
            }
        }
        for s in en.get_subcommands() {
            let t = tr.find_subcommand(s.get_name()).unwrap();
            walk(s, t, missing);
        }
    }
    let mut missing = Vec::new();
    walk(&lab::cli::command(Lang::En), &lab::cli::command(Lang::Tr), &mut missing);
    assert!(missing.is_empty(), "no Turkish help for {missing:?}");
    let out = lab::cli::command(Lang::Tr).render_long_help().to_string();
    assert!(
        out.contains("Kullanım:") && out.contains("Komutlar") && out.contains("Yardımı göster"),
        "{out}"
    );
    assert!(!out.contains("Print help") && !out.contains("possible values"), "{out}");
}

/// Statements lab runs on its own connection (setup, evidence): `--step`
/// never shows these, so they need no reason.
const LAB_ONLY: &[&str] = &[
    "advisory-lock.sql:holders",
    "ddl-lock-queue.sql:queue",
    "invoice-numbering.sql:enqueue",
    "invoice-numbering.sql:invalid_tax_numbers",
    "invoice-numbering.sql:number_at_enqueue",
    "invoice-numbering.sql:counter_after_enqueue",
    "invoice-numbering.sql:cancel",
    "invoice-numbering.sql:outgoing",
    "invoice-numbering.sql:numbers_issued",
    "invoice-numbering.sql:statuses",
    "locks.sql:all_sessions",
    "lost-client.sql:backend",
    "locks.sql:lab_sessions",
    "queue.sql:fill",
    "queue.sql:analyze",
    "queue.sql:left_over",
    "stock-race.sql:set_stock",
    "stock-race.sql:stock",
    "write-skew.sql:pending",
    "write-skew.sql:fill_history",
    "write-skew.sql:analyze",
    "write-skew.sql:drop_index",
    "write-skew.sql:clear_pending",
    "write-skew.sql:siread_locks",
];

#[test]
fn every_step_a_session_runs_says_why_in_every_language() {
    use lab::files::LabFiles;
    let files = LabFiles::embedded();
    let mut checked = 0;
    for name in LabFiles::names() {
        let text = files.read(name).unwrap();
        if let Some(id) = name.strip_prefix("phenomena/").and_then(|n| n.strip_suffix(".spec")) {
            // A phenomenon says what it is, in both languages, once (`# what:`, `# what-tr:`).
            let p = lab::commands::phenomena::load(id, &text).unwrap_or_else(|e| panic!("{name}: {e:#}"));
            assert!(!p.what_en.is_empty() && !p.what_tr.is_empty(), "{name}");
            // Its name too (`# name-tr:`): the matrix's rows read in the run's language.
            assert_ne!(p.name_tr, p.name, "{name} has no `# name-tr:`");
            assert!(
                lab::commands::phenomena::ORDER.contains(&id),
                "{name} is not in the matrix"
            );
            checked += 1;
            continue;
        }
        if name.ends_with(".spec") {
            let spec = lab::specfile::parse(&text).unwrap();
            for (id, step) in spec.steps() {
                // Transaction control has the reason of its verb.
                let verb = lab::sql_lexer::words(&step.sql, 1);
                if matches!(verb.first().map(String::as_str), Some("BEGIN" | "COMMIT" | "ROLLBACK")) {
                    continue;
                }
                for lang in [Lang::En, Lang::Tr] {
                    assert!(
                        spec.why(id, lang).is_some(),
                        "{name}: step {} has no why ({lang:?})",
                        step.name
                    );
                }
                checked += 1;
            }
        } else if name.ends_with(".sql") && !matches!(name, "schema.sql" | "seed.sql") {
            let file = lab::named_sql::SqlFile::parse(name, &text);
            let (en, tr) = (file.whys(Lang::En), file.whys(Lang::Tr));
            for statement in file.names() {
                let key = format!("{name}:{statement}");
                let stepped = !LAB_ONLY.contains(&key.as_str());
                assert_eq!(
                    en.contains_key(statement),
                    stepped,
                    "{key}: why in English (stepped: {stepped})"
                );
                assert_eq!(
                    tr.contains_key(statement),
                    stepped,
                    "{key}: why in Turkish (stepped: {stepped})"
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 100, "only {checked} steps checked");
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
fn no_sentence_is_written_outside_a_message_declaration() {
    // Reports take Texts, so a scenario cannot hand them a sentence; errors
    // and prints could: each such call must take its words from a message.
    let calls = [
        "bail!(",
        "anyhow!(",
        ".context(",
        ".with_context(",
        "eprintln!(",
        "println!(",
    ];
    let mut checked = 0;
    for (file, src) in files("src", ".rs") {
        let code = code(&src);
        for call in calls {
            for (at, _) in code.match_indices(call) {
                checked += 1;
                for literal in literals(call_args(&code[at + call.len()..])) {
                    assert!(
                        !is_prose(&literal),
                        "{file}: {call}... carries a sentence of its own: \"{literal}\"; declare a message"
                    );
                }
            }
        }
    }
    assert!(checked > 30, "only {checked} calls checked");
    // The checker sees what it must.
    assert!(is_prose("B waits for A"));
    assert!(is_prose("{at}: no answer within {deadline} s"));
    assert!(!is_prose("{}: {e}"));
    assert!(!is_prose("DROP INDEX ix_orders_customer_id"));
}
