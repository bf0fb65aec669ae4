//! Contracts others rely on: the JSON is the same in every language, the
//! README and the guide pages under docs/ show what lab prints, every
//! scenario is registered everywhere.
//!
//! `LAB_BLESS=1 cargo test contract` rewrites the generated parts (the
//! sample output in README.md, the scenario table in docs/GUIDE.md, the
//! version table in docs/CI.md) from what lab prints now.
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::run;

/// README.md and every docs/*.md: where the generated sections may live.
fn doc_paths() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    docs.insert(0, root.join("README.md"));
    docs
}

/// The one file among README.md and docs/*.md with the marker `begin`, and
/// its text; none, or more than one, fails.
fn doc_with(begin: &str) -> (PathBuf, String) {
    let mut found: Vec<(PathBuf, String)> = doc_paths()
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (p, text)
        })
        .filter(|(_, text)| text.contains(begin))
        .collect();
    match found.len() {
        1 => found.remove(0),
        0 => panic!("neither README.md nor any docs/*.md has the {begin:?} marker"),
        _ => panic!(
            "{begin:?} is in more than one file: {:?}",
            found.iter().map(|(p, _)| p.display().to_string()).collect::<Vec<_>>()
        ),
    }
}

fn bless() -> bool {
    std::env::var_os("LAB_BLESS").is_some_and(|v| v == "1")
}

/// The text between the line `begin` and the next line `end` in `doc` (the
/// file `path`), and where it starts and ends.
fn section<'a>(path: &Path, doc: &'a str, begin: &str, end: &str) -> (usize, usize, &'a str) {
    let start = doc
        .find(begin)
        .unwrap_or_else(|| panic!("{} has no {begin:?} marker", path.display()))
        + begin.len();
    let start = start + doc[start..].find('\n').expect("marker line ends") + 1;
    let len = doc[start..]
        .find(end)
        .unwrap_or_else(|| panic!("{} has no {end:?} after {begin:?}", path.display()));
    (start, start + len, &doc[start..start + len])
}

/// Compares a generated section (of README.md or the docs/*.md page that
/// has its marker) with what lab prints now; with LAB_BLESS=1 writes it
/// instead.
fn check_section(begin: &str, end: &str, now: &str, same: impl Fn(&str, &str) -> bool) {
    let (path, doc) = doc_with(begin);
    let (from, to, written) = section(&path, &doc, begin, end);
    if same(written, now) {
        return;
    }
    if bless() {
        std::fs::write(&path, format!("{}{now}{}", &doc[..from], &doc[to..])).unwrap();
        return;
    }
    let file = path.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap_or(&path).display();
    panic!(
        "{file}: section after {begin:?} is out of date (LAB_BLESS=1 cargo test contract rewrites it).\n\
         --- {file} ---\n{written}\n--- lab prints ---\n{now}"
    );
}

/// Timings and other measured numbers, zeroed.
fn without_timings(v: &mut Value) {
    match v {
        Value::Object(map) => {
            for (k, x) in map.iter_mut() {
                if k.ends_with("_ms") && x.is_number() {
                    *x = Value::from(0);
                } else {
                    without_timings(x);
                }
            }
        }
        Value::Array(xs) => xs.iter_mut().for_each(without_timings),
        // Observations quote waits and lock-timeout errors with their lengths.
        Value::String(s) => *s = digits_zeroed(s),
        _ => {}
    }
}

fn digits_zeroed(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut in_number = false;
    for c in s.chars() {
        if c.is_ascii_digit() || (in_number && c == '.') {
            if !in_number {
                out.push('0');
            }
            in_number = true;
        } else {
            in_number = false;
            out.push(c);
        }
    }
    out
}

#[test]
fn the_json_is_the_same_in_every_language() {
    // A scenario with waits, errors, notes, evidence and a retry: every kind of entry.
    for args in [
        &["fk-blocking", "--timeout-ms", "200"][..],
        &[
            "write-skew",
            "--variant",
            "serializable",
            "--variant",
            "serializable-retry",
        ][..],
        &[
            "lost-update",
            "--variant",
            "read-committed",
            "--variant",
            "optimistic-version",
        ][..],
    ] {
        let mut reports = Vec::new();
        for lang in ["en", "tr"] {
            let mut a = vec!["--lang", lang];
            a.extend_from_slice(args);
            a.extend_from_slice(&["--format", "json"]);
            let r = run(&a);
            assert_eq!(r.code, 0, "lab {a:?}: {}{}", r.stdout, r.stderr);
            let mut v: Value = serde_json::from_str(&r.stdout).unwrap();
            without_timings(&mut v);
            reports.push(v);
        }
        if reports[0] != reports[1] {
            let en = serde_json::to_string_pretty(&reports[0]).unwrap();
            let tr = serde_json::to_string_pretty(&reports[1]).unwrap();
            let first = en
                .lines()
                .zip(tr.lines())
                .find(|(a, b)| a != b)
                .map(|(a, b)| format!("en: {a}\ntr: {b}"));
            panic!(
                "lab {args:?}: JSON differs between --lang en and tr\n{}",
                first.unwrap_or_default()
            );
        }
    }
}

#[test]
fn the_guide_scenario_table_is_what_lab_list_prints() {
    let r = run(&["list", "--format", "markdown"]);
    assert_eq!(r.code, 0, "{}", r.why());
    check_section(
        "<!-- generated: lab list --format markdown -->",
        "<!-- end generated -->",
        &r.stdout,
        |a, b| a == b,
    );
}

/// docs/CI.md's version table is `lab compare` over the seven versions' runs
/// as the version matrix saved them, and every one of them was as documented.
#[test]
fn the_ci_page_version_table_is_what_the_saved_matrix_compares_to() {
    for kind in ["all", "phenomena"] {
        let runs = crate::support::version_runs(kind);
        let majors: Vec<u32> = runs.iter().map(|(v, _)| v[0]).collect();
        assert_eq!(majors, [12, 13, 14, 15, 16, 17, 18], "tests/versions/{kind}-*.json");
        for (_, path) in &runs {
            let run: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
            assert!(run["as_expected"].as_bool().unwrap_or(true), "{}", path.display());
            if kind == "phenomena" {
                for p in run["phenomena"].as_array().unwrap() {
                    for (level, cell) in p["cells"].as_object().unwrap() {
                        assert_eq!(cell["as_expected"], true, "{} {} {level}", path.display(), p["id"]);
                    }
                }
            }
        }
    }
    // `lab compare` over the saved runs of `kind`, oldest first.
    let compare = |kind: &str, more: &[&str]| {
        let files: Vec<String> = crate::support::version_runs(kind)
            .iter()
            .map(|(_, p)| p.display().to_string())
            .collect();
        let mut args = vec!["compare"];
        args.extend(files.iter().map(String::as_str));
        args.extend(more);
        let r = run(&args);
        assert_eq!(r.code, 0, "{}", r.why());
        r
    };
    let r = compare("all", &["--differences", "--format", "markdown"]);
    check_section(
        "<!-- generated: lab compare tests/versions/all-*.json --differences --format markdown -->",
        "<!-- end generated -->",
        &r.stdout,
        |a, b| a == b,
    );
    // The matrix's cells are the same on all seven.
    let r = compare("phenomena", &["--differences"]);
    assert!(
        r.stderr.contains("7 runs compared: 0 cell(s) of the matrix differ"),
        "{}",
        r.stderr
    );
}

/// A rendered run as the cells of each logical row of each table (wrapped
/// lines joined, whitespace dropped, numbers zeroed) and the lines between
/// tables: what stays the same between two runs on two machines.
fn shape(text: &str) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = Vec::new();
    let mut row: Option<Vec<String>> = None;
    let squash = |s: &str| digits_zeroed(&s.split_whitespace().collect::<String>());
    for line in text.lines() {
        if let Some(inner) = line.strip_prefix('│').and_then(|l| l.strip_suffix('│')) {
            let cells: Vec<&str> = inner.split('┆').collect();
            // A first cell with text starts a new row; an empty one continues the wrapped row.
            let new_row = !cells[0].trim().is_empty() || row.is_none();
            if new_row {
                out.extend(row.take());
                row = Some(vec![String::new(); cells.len()]);
            }
            let r = row.as_mut().unwrap();
            for (acc, cell) in r.iter_mut().zip(&cells) {
                acc.push_str(cell);
            }
        } else {
            out.extend(row.take());
            // Borders and separators carry nothing; anything else is a line of its own.
            if !line.chars().all(|c| " ─═╌┌┐└┘├┤┬┴┼╞╡╪┆".contains(c)) {
                out.push(vec![line.to_string()]);
            }
        }
    }
    out.extend(row);
    out.into_iter()
        .map(|cells| cells.iter().map(|c| squash(c)).collect())
        .collect()
}

#[test]
fn the_readme_sample_output_is_what_lab_prints() {
    let r = run(&["--lang", "en", "lost-update", "--variant", "read-committed"]);
    assert_eq!(r.code, 0, "{}", r.why());
    let now = format!("```text\n{}```\n", r.stdout);
    check_section(
        "<!-- generated: lab lost-update --variant read-committed -->",
        "<!-- end generated -->",
        &now,
        |a, b| shape(a) == shape(b),
    );
}

#[test]
fn the_shape_of_a_table_ignores_wrapping_and_timings_but_not_content() {
    let narrow = "┌──┬──┐\n│ 1.5 ┆ SELECT a │\n│     ┆ FROM t;  │\n└──┴──┘\nnote: x 12\n";
    let wide = "┌──┬──┐\n│ 21.0 ┆ SELECT a FROM t; │\n└──┴──┘\nnote: x 3\n";
    let other = "┌──┬──┐\n│ 21.0 ┆ SELECT b FROM t; │\n└──┴──┘\nnote: x 3\n";
    assert_eq!(shape(narrow), shape(wide));
    assert_ne!(shape(wide), shape(other));
    assert_eq!(shape(wide).len(), 2);
}

/// Every scenario module under src/commands/scenarios (a file, or a folder's mod.rs) is registered, and every
/// registered scenario is a subcommand, in `lab list` and in the shell
/// completions (`lab all` runs `ALL`).
#[test]
fn every_scenario_is_registered_everywhere() {
    let names: Vec<&str> = lab::commands::scenarios::ALL.iter().map(|s| s.name).collect();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/commands/scenarios");
    let registry = std::fs::read_to_string(dir.join("mod.rs")).unwrap();
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let file = entry.unwrap().file_name().to_string_lossy().into_owned();
        let (module, path) = match file.strip_suffix(".rs") {
            Some(m) => (m.to_string(), dir.join(&file)),
            None if dir.join(&file).join("mod.rs").is_file() => (file.clone(), dir.join(&file).join("mod.rs")),
            None => continue,
        };
        let source = std::fs::read_to_string(path).unwrap();
        if !source.contains("pub static SCENARIO") {
            continue;
        }
        assert!(
            registry.contains(&format!("&{module}::SCENARIO")),
            "src/commands/scenarios/{file} declares a scenario that ALL does not list"
        );
        seen += 1;
    }
    assert_eq!(
        seen,
        names.len(),
        "scenario modules found: {seen}, registered: {}",
        names.len()
    );
    let mut unique = names.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(
        unique.len(),
        names.len(),
        "a scenario name is registered twice: {names:?}"
    );

    let list = run(&["--lang", "en", "list"]);
    let completions = run(&["completions", "bash"]);
    for name in &names {
        let help = run(&["--lang", "en", name, "--help"]);
        assert_eq!(help.code, 0, "lab {name} --help: {}", help.stderr);
        assert!(list.stdout.contains(name), "lab list does not show {name}");
        assert!(completions.stdout.contains(name), "completions miss {name}");
        let scenario = lab::commands::scenarios::find(name).unwrap();
        assert!(!scenario.variants.is_empty(), "{name} has no variant");
        if let Some(spec) = scenario.spec {
            assert!(
                Path::new(env!("CARGO_MANIFEST_DIR")).join("lab").join(spec).is_file(),
                "{name}'s spec lab/{spec} does not exist"
            );
        }
    }
}

/// A spec's `# variant:` labels and the scenario's declared variants are one
/// list: every label names a variant (one that runs several permutations
/// labels them VARIANT/PART), so a renamed variant cannot leave its
/// permutation behind.
#[test]
fn every_spec_label_names_a_declared_variant() {
    let mut labels = 0;
    for s in lab::commands::scenarios::ALL {
        let Some(spec) = s.spec else { continue };
        let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("lab").join(spec)).unwrap();
        for line in text.lines() {
            let Some(label) = line.trim().strip_prefix("# variant:") else {
                continue;
            };
            let variant = label.trim().split('/').next().unwrap_or("");
            assert!(
                s.variant(variant).is_some(),
                "lab/{spec}: `# variant: {}` names no variant of {} ({})",
                label.trim(),
                s.name,
                s.variant_names().join(", ")
            );
            labels += 1;
        }
    }
    assert!(labels > 20, "only {labels} labels read");
}
