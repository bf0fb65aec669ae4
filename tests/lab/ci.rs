//! What a CI pipeline relies on: `--require` (a skip it names fails the
//! run), what every JSON document says about itself, JUnit's times.
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::support::{TestServer, one_line_exit_2, run, run_cmd, scratch};

/// `lab ARGS` on a machine without `program`: wherever lab would find it
/// (on PATH, or where lab looks besides) /dev/null is mounted over it, in a
/// mount namespace of the run's own (unshare(1); as root, else in a user
/// namespace), so nothing outside the run changes.
fn lab_without(program: &str, args: &[&str]) -> Command {
    const HIDE: &str = r#"p=$1; lab=$2; shift 2
for d in $(echo "$PATH" | tr : ' ') /usr/sbin /usr/bin /usr/local/bin; do
  if [ -e "$d/$p" ]; then mount --bind /dev/null "$d/$p" || exit 99; fi
done
exec "$lab" "$@""#;
    let base = crate::support::lab();
    let mut c = Command::new("unshare");
    if unsafe { libc::geteuid() } != 0 {
        c.args(["--user", "--map-root-user"]);
    }
    c.args(["--mount", "--propagation", "private", "sh", "-c", HIDE, "sh", program])
        .arg(env!("CARGO_BIN_EXE_lab"))
        .args(args);
    for (k, v) in base.get_envs() {
        match v {
            Some(v) => c.env(k, v),
            None => c.env_remove(k),
        };
    }
    c.stdin(Stdio::null());
    c
}

/// Without pgbouncer, `lab all` skips the pooler's variants and exits 0; with
/// `--require pooler` it exits 1, says on stderr which variants were
/// skipped and why, and its JSON and JUnit count them as failures. What
/// `--require` names must be in the run (bad input, exit 2, before any
/// server is reached).
#[test]
fn require_turns_a_skip_into_exit_1_naming_what_was_skipped() {
    let srv = TestServer::start();
    let url = srv.url();
    let dir = scratch("ci", "require");
    let junit = dir.join("junit.xml");
    let mut args = vec![
        "all",
        "--variant",
        "pooler",
        "--variant",
        "lost-update/read-committed",
        "--database-url",
        &url,
        "--format",
        "json",
    ];
    let r = run_cmd(&mut lab_without("pgbouncer", &args));
    assert_eq!(r.code, 0, "a skip passes unless required: {}", r.why());
    let report: Value = serde_json::from_str(&r.stdout).unwrap();
    let scenario = |report: &Value, name: &str| -> Value {
        report["scenarios"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["scenario"] == name)
            .unwrap_or_else(|| panic!("no {name} in {report}"))
            .clone()
    };
    let pooler = scenario(&report, "pooler");
    let skipped: Vec<&str> = pooler["variants"]
        .as_array()
        .unwrap()
        .iter()
        .inspect(|v| {
            assert_eq!(v["skipped"], true, "{v}");
            assert!(
                v["skip_reason"]
                    .as_str()
                    .unwrap()
                    .starts_with("pgbouncer is not installed here"),
                "{v}"
            );
        })
        .map(|v| v["name"].as_str().unwrap())
        .collect();
    assert!(skipped.len() >= 9, "{skipped:?}");

    args.extend(["--require", "pooler", "--junit", junit.to_str().unwrap()]);
    let r = run_cmd(&mut lab_without("pgbouncer", &args));
    assert_eq!(r.code, 1, "{}", r.stderr);
    let lines: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(
        lines,
        [format!(
            "required but skipped (--require): pooler: {}: pgbouncer is not installed here: install it \
             (Debian/Ubuntu: apt-get install pgbouncer; macOS: brew install pgbouncer) or set LAB_PGBOUNCER_BIN \
             to the program",
            skipped.join(", ")
        )],
    );
    let report: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(report["as_expected"], false);
    let pooler = scenario(&report, "pooler");
    assert_eq!(pooler["as_expected"], false);
    assert_eq!(pooler["variants"][0]["as_expected"], false);
    assert_eq!(scenario(&report, "lost-update")["as_expected"], true, "lost-update ran");
    let xml = std::fs::read_to_string(&junit).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let root = doc.root_element();
    assert_eq!(root.attribute("failures"), Some(skipped.len().to_string().as_str()));
    assert_eq!(root.attribute("skipped"), Some("0"));
    let required = doc
        .descendants()
        .filter(|n| n.has_tag_name("failure") && n.attribute("type") == Some("required"))
        .count();
    assert_eq!(required, skipped.len());

    // Required and run: exit 0.
    let ran = [
        "lost-update",
        "--variant",
        "read-committed",
        "--require",
        "all",
        "--database-url",
        &url,
    ];
    let r = run_cmd(&mut lab_without("pgbouncer", &ran));
    assert_eq!(r.code, 0, "{}", r.why());

    // What the run does not run cannot be required.
    for (args, says) in [
        (
            vec!["lost-update", "--require", "pooler"],
            "--require 'pooler' names nothing this run runs",
        ),
        (
            vec!["all", "--variant", "pooler", "--require", "pooler,replica"],
            "--require 'replica' names nothing this run runs",
        ),
        (
            vec!["pooler", "--require", "set-leek"],
            "--require 'set-leek' names nothing this run runs",
        ),
    ] {
        let mut args = args.clone();
        args.extend(["--database-url", "postgres://nobody@127.0.0.1:1/none"]);
        one_line_exit_2(&run(&args), says);
    }
}

/// Every command's JSON says what made it (`lab_version`, `format_version`,
/// `command`) before its own fields; JUnit's root `time` is the run's wall
/// time (at most the process's, at least its longest suite's), not the sum
/// of its suites'.
#[test]
fn every_json_says_what_made_it_and_junit_times_the_run() {
    let srv = TestServer::start();
    let url = srv.url();
    let dir = scratch("ci", "json");
    let spec = dir.join("counter.spec");
    std::fs::write(
        &spec,
        "setup { CREATE TABLE counter (n int); INSERT INTO counter VALUES (0); }\n\
         teardown { DROP TABLE counter; }\n\
         session a\nstep a_read { SELECT n FROM counter; }\n\
         session b\nstep b_bump { UPDATE counter SET n = n + 1; }\n",
    )
    .unwrap();
    let spec = spec.to_str().unwrap();
    let junit = dir.join("junit.xml");
    let junit_path = junit.to_str().unwrap();
    let history = format!("{}/tests/hunt/write-skew.edn", env!("CARGO_MANIFEST_DIR"));
    let with_url = |args: &[&str]| -> Vec<String> {
        let mut a: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        a.extend(["--database-url".into(), url.clone(), "--format".into(), "json".into()]);
        a
    };
    let runs: Vec<(&str, Vec<String>)> = vec![
        (
            "all",
            with_url(&[
                "all",
                "--variant",
                "lost-update",
                "--variant",
                "write-skew/serializable",
                "--junit",
                junit_path,
            ]),
        ),
        ("lost-update", with_url(&["lost-update", "--variant", "read-committed"])),
        ("spec", with_url(&["spec", spec])),
        ("explore", with_url(&["explore", spec])),
        ("phenomena", with_url(&["phenomena", "--level", "read-committed"])),
        (
            "hunt",
            vec![
                "hunt".into(),
                "--check".into(),
                history,
                "--format".into(),
                "json".into(),
            ],
        ),
    ];
    for (command, args) in runs {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let r = run(&args);
        assert!(r.code == 0 || r.code == 1, "lab {args:?}: {}", r.why());
        let report: Value = serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {}", r.stdout));
        assert_eq!(report["lab_version"], env!("CARGO_PKG_VERSION"), "{command}");
        assert_eq!(report["format_version"], 1, "{command}");
        assert_eq!(report["command"], command);
        // First, before the report's own fields.
        let keys: Vec<&str> = r.stdout.lines().skip(1).take(3).map(str::trim).collect();
        assert!(keys[0].starts_with("\"lab_version\""), "{command}: {keys:?}");
        assert!(keys[2].starts_with("\"command\""), "{command}: {keys:?}");
        if command == "all" {
            let xml = std::fs::read_to_string(&junit).unwrap();
            let doc = roxmltree::Document::parse(&xml).unwrap();
            let time = |n: roxmltree::Node| n.attribute("time").unwrap().parse::<f64>().unwrap();
            let root = time(doc.root_element());
            let suites: Vec<f64> = doc
                .descendants()
                .filter(|n| n.has_tag_name("testsuite"))
                .map(time)
                .collect();
            assert_eq!(suites.len(), 2);
            let longest = suites.iter().copied().fold(0.0, f64::max);
            assert!(
                root >= longest && root <= r.took.as_secs_f64() + 0.001,
                "root {root} s, suites {suites:?}, lab ran {:?}",
                r.took
            );
        }
    }
}

/// `--format markdown` prints the verdicts as a table GitHub renders, and
/// with `$GITHUB_STEP_SUMMARY` set every run appends the same table there
/// (after what earlier steps wrote), whatever its `--format`; a summary
/// file lab cannot write is refused before anything runs.
#[test]
fn markdown_tables_and_the_github_step_summary() {
    let srv = TestServer::start();
    let url = srv.url();
    let dir = scratch("ci", "markdown");
    let summary = dir.join("step_summary.md");
    std::fs::write(&summary, "earlier step\n").unwrap();
    let with_summary = |args: &[&str]| {
        let mut c = crate::support::lab();
        c.args(args)
            .args(["--database-url", &url])
            .env("GITHUB_STEP_SUMMARY", &summary);
        run_cmd(&mut c)
    };
    let all = [
        "all",
        "--variant",
        "lost-update",
        "--variant",
        "write-skew/serializable",
    ];
    let mut args = all.to_vec();
    args.extend(["--format", "markdown"]);
    let r = with_summary(&args);
    assert_eq!(r.code, 0, "{}", r.why());
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines[0], "### lab all");
    assert!(lines[2].starts_with("Summary: PostgreSQL "), "{}", r.stdout);
    assert_eq!(lines[4], "| scenario | variant | anomaly | verdict |");
    assert_eq!(lines[5], "| --- | --- | --- | --- |");
    assert!(
        lines.contains(&"| lost-update | read-committed | yes | ✅ as documented |"),
        "{}",
        r.stdout
    );
    let variants = lab::listed()
        .iter()
        .find(|s| s.name == "lost-update")
        .unwrap()
        .variants
        .len()
        + 1;
    assert_eq!(lines.len(), 6 + variants, "a row per variant: {}", r.stdout);
    // The same table (the run's time measured a moment later).
    let timeless = |s: &str| {
        s.split(" ms)")
            .map(|p| p.trim_end_matches(char::is_numeric))
            .collect::<String>()
    };
    let written = std::fs::read_to_string(&summary).unwrap();
    assert_eq!(timeless(&written), timeless(&format!("earlier step\n{}\n", r.stdout)));

    // Any format: the summary goes to the file, stdout keeps its own; in
    // the run's language.
    std::fs::write(&summary, "").unwrap();
    let r = with_summary(&[
        "--lang",
        "tr",
        "lost-update",
        "--variant",
        "read-committed",
        "--format",
        "json",
    ]);
    assert_eq!(r.code, 0, "{}", r.why());
    assert!(serde_json::from_str::<Value>(&r.stdout).is_ok());
    let written = std::fs::read_to_string(&summary).unwrap();
    assert!(
        written.starts_with("### lab lost-update\n\nÖzet: PostgreSQL "),
        "{written}"
    );
    assert!(
        written.contains("| lost-update | read-committed | evet | ✅ belgelendiği gibi |"),
        "{written}"
    );

    // lab spec and lab phenomena too.
    let spec = dir.join("counter.spec");
    std::fs::write(
        &spec,
        "setup { CREATE TABLE counter (n int); INSERT INTO counter VALUES (0); }\n\
         teardown { DROP TABLE counter; }\n\
         session a\nstep a_read { SELECT n FROM counter; }\n\
         session b\nstep b_bump { UPDATE counter SET n = n + 1; }\n",
    )
    .unwrap();
    std::fs::write(&summary, "").unwrap();
    let r = with_summary(&["spec", spec.to_str().unwrap(), "--format", "markdown"]);
    assert_eq!(r.code, 0, "{}", r.why());
    assert!(r.stdout.starts_with("### lab spec\n"), "{}", r.stdout);
    assert!(
        r.stdout.contains("| counter | a_read b_bump | - | ✅ as documented |"),
        "{}",
        r.stdout
    );
    let r = with_summary(&["phenomena", "--level", "read-committed", "--format", "markdown"]);
    assert_eq!(r.code, 0, "{}", r.why());
    assert!(r.stdout.starts_with("### lab phenomena\n"), "{}", r.stdout);
    let written = std::fs::read_to_string(&summary).unwrap();
    assert!(
        written.contains("### lab spec\n") && written.contains("### lab phenomena\n"),
        "{written}"
    );

    // A summary file lab cannot write: one line, exit 2, nothing run.
    let mut c = crate::support::lab();
    c.args(["lost-update", "--database-url", &url])
        .env("GITHUB_STEP_SUMMARY", dir.as_ref() as &std::path::Path);
    one_line_exit_2(&run_cmd(&mut c), "could not write the step summary to");
}

/// `lab list --format json`: the catalogue as `lab list` shows it.
#[test]
fn lab_list_as_json() {
    let r = run(&["list", "--format", "json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let list: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(list["command"], "list");
    let names: Vec<&str> = list["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    let listed: Vec<&str> = lab::listed().iter().map(|s| s.name).collect();
    assert_eq!(names, listed);
    for s in list["scenarios"].as_array().unwrap() {
        assert!(!s["summary"].as_str().unwrap().is_empty(), "{s}");
        for v in s["variants"].as_array().unwrap() {
            assert!(v["explain"].as_str().unwrap().len() > 20, "{v}");
        }
    }
}

/// `lab man` prints lab(1) in roff, made from the same command line as
/// `--help` (every command in it, in the run's language); `lab man COMMAND`
/// one command's page; `--dir` writes them all, as a package installs them.
#[test]
fn lab_man_prints_the_manual_pages() {
    let r = run(&["man"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout
            .contains(&format!(".TH lab 1  \"lab {}\"", env!("CARGO_PKG_VERSION"))),
        "{}",
        r.stdout
    );
    let listed: Vec<&str> = lab::listed().iter().map(|s| s.name).collect();
    for command in ["all", "spec", "phenomena", "explore", "hunt", "man"]
        .iter()
        .chain(&listed)
    {
        assert!(
            r.stdout.contains(&format!("lab\\-{}(1)", command.replace('-', "\\-"))),
            "lab(1) names lab-{command}(1)"
        );
    }
    let tr = run(&["--lang", "tr", "man"]);
    assert!(
        tr.stdout.contains("PostgreSQL eşzamanlılık anomalilerini"),
        "{}",
        tr.stdout
    );

    let all = run(&["man", "all"]);
    assert_eq!(all.code, 0, "{}", all.stderr);
    assert!(all.stdout.contains(".TH lab-all 1"), "{}", all.stdout);
    assert!(all.stdout.contains("\\fB\\-\\-require\\fR"), "{}", all.stdout);
    one_line_exit_2(&run(&["man", "nope"]), "lab has no command 'nope'");

    let dir = scratch("ci", "man");
    let man1 = dir.join("man1");
    let r = run(&["man", "--dir", man1.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "");
    let mut files: Vec<String> = std::fs::read_dir(&man1)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert!(files.contains(&"lab.1".to_string()) && files.contains(&"lab-lost-update.1".to_string()));
    assert!(!files.contains(&"lab-help.1".to_string()));
    assert_eq!(std::fs::read_to_string(man1.join("lab-all.1")).unwrap(), all.stdout);
    assert_eq!(files.len(), 1 + listed.len() + 12, "{files:?}");
}

/// `--quiet`: nothing on stdout, the exit code and the report files say
/// how it went. `--color always` colours the verdicts even into a pipe,
/// `never` and `auto` (a pipe is no terminal) do not.
#[test]
fn quiet_and_color() {
    let srv = TestServer::start();
    let url = srv.url();
    let dir = scratch("ci", "quiet");
    let junit = dir.join("junit.xml");
    let one = ["lost-update", "--variant", "read-committed", "--database-url", &url];
    let mut args = one.to_vec();
    args.extend(["--quiet", "--junit", junit.to_str().unwrap()]);
    let r = run(&args);
    assert_eq!((r.code, r.stdout.as_str(), r.stderr.as_str()), (0, "", ""));
    assert!(
        std::fs::read_to_string(&junit)
            .unwrap()
            .contains("name=\"read-committed\"")
    );
    let r = run(&["-q", "list"]);
    assert_eq!((r.code, r.stdout.as_str()), (0, ""));
    // Errors still say why.
    one_line_exit_2(&run(&["--quiet", "man", "nope"]), "lab has no command 'nope'");

    let escape = "\u{1b}[";
    for (color, coloured) in [("always", true), ("never", false), ("auto", false)] {
        let mut args = one.to_vec();
        args.extend(["--color", color]);
        let r = run(&args);
        assert_eq!(r.code, 0, "{}", r.why());
        assert_eq!(r.stdout.contains(escape), coloured, "--color {color}: {}", r.stdout);
    }
    let r = run(&["--color", "always", "--help"]);
    assert!(r.stdout.contains(escape), "{}", r.stdout);
    let r = run(&["lost-update", "--color", "sometimes"]);
    one_line_exit_2(&r, "invalid value 'sometimes' for '--color <WHEN>'");
}

/// The GitHub Actions workflow docs/CI.md offers (`docs/ci/github-actions.yml`)
/// is YAML a runner reads, and every `lab` command in it is one lab accepts
/// as written (parsed as `lab` parses it), whose `--help` runs; its
/// DATABASE_URL is one lab reads.
#[test]
fn the_github_workflow_example_runs_commands_lab_accepts() {
    use yaml_rust2::YamlLoader;
    let path = format!("{}/docs/ci/github-actions.yml", env!("CARGO_MANIFEST_DIR"));
    let docs = YamlLoader::load_from_str(&std::fs::read_to_string(&path).unwrap()).expect("the workflow is YAML");
    let job = &docs[0]["jobs"]["lab"];
    assert_eq!(
        job["services"]["postgres"]["image"]
            .as_str()
            .map(|i| i.starts_with("postgres:")),
        Some(true)
    );
    let url = job["env"]["DATABASE_URL"].as_str().expect("DATABASE_URL");
    let lookup = |_: &str| None;
    assert!(
        lab::postgres::conninfo::resolve(Some(url), None, &lookup, lab::i18n::Lang::En).is_ok(),
        "{url}"
    );
    let steps = job["steps"].as_vec().expect("steps");
    let commands: Vec<Vec<String>> = steps
        .iter()
        .filter_map(|s| s["run"].as_str())
        .flat_map(|run| run.lines().map(str::trim).map(str::to_string).collect::<Vec<_>>())
        .filter(|l| l.starts_with("lab "))
        .map(|l| l.split_whitespace().map(str::to_string).collect())
        .collect();
    assert!(commands.len() >= 3, "{commands:?}");
    let all = commands
        .iter()
        .find(|c| c[1] == "all")
        .expect("the workflow runs lab all");
    assert!(all.windows(2).any(|w| w[0] == "--require"), "{all:?}");
    for argv in &commands {
        if argv[1] == "--version" {
            assert_eq!(run(&["--version"]).code, 0);
            continue;
        }
        if let Err(e) = lab::cli::parse(argv, lab::i18n::Lang::En) {
            panic!("{argv:?}: {e}");
        }
        let help = run(&[argv[1].as_str(), "--help"]);
        assert_eq!(help.code, 0, "lab {} --help: {}", argv[1], help.stderr);
    }
    // Every uses: names a version.
    for s in steps {
        if let Some(uses) = s["uses"].as_str() {
            assert!(uses.contains('@'), "{uses}");
        }
    }
}

/// The Dockerfile, read as Docker would (no engine here): it builds with
/// the Rust lab declares (`rust-version`) or a later one, installs the
/// Debian packages lab's own messages tell a person to install, puts lab in
/// /usr/bin with its manual pages and completions from `lab man` and `lab
/// completions`, and runs `lab all`; each lab command in it is one lab
/// accepts; the build context leaves target/ out.
#[test]
fn the_dockerfile_builds_with_lab_s_rust_and_installs_what_lab_drives() {
    let root = env!("CARGO_MANIFEST_DIR");
    let text = std::fs::read_to_string(format!("{root}/Dockerfile")).unwrap();
    // Instructions, continuation lines joined, comments left out.
    let joined = text.replace("\\\n", " ");
    let instructions: Vec<(&str, &str)> = joined
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| l.split_once(' ').unwrap_or((l, "")))
        .collect();
    let of = |kind: &str| -> Vec<&str> {
        instructions
            .iter()
            .filter(|(k, _)| *k == kind)
            .map(|(_, v)| *v)
            .collect()
    };
    let version = |v: &str| -> Vec<u32> { v.split('.').map(|n| n.parse().unwrap()).collect() };
    let cargo = std::fs::read_to_string(format!("{root}/Cargo.toml")).unwrap();
    let declared = cargo
        .lines()
        .find_map(|l| l.strip_prefix("rust-version = "))
        .unwrap()
        .trim_matches('"');
    let from = of("FROM");
    let rust = from[0]
        .strip_prefix("rust:")
        .and_then(|r| r.split('-').next())
        .expect("built in the rust image");
    assert!(
        version(rust) >= version(declared),
        "rust {rust} < rust-version {declared}"
    );
    assert!(from.last().unwrap().starts_with("debian:"), "{from:?}");

    let runs = of("RUN");
    let install = runs
        .iter()
        .find(|r| r.contains("apt-get install"))
        .expect("the packages");
    let hints = [
        lab::postgres::pgbouncer::msg::install().en(),
        lab::postgres::pgpool::msg::install().en(),
    ];
    for package in ["postgresql", "pgbouncer", "pgpool2"] {
        assert!(
            install.split_whitespace().any(|w| w == package),
            "{package} installed: {install}"
        );
    }
    for hint in hints {
        let named = hint
            .split("apt-get install ")
            .nth(1)
            .unwrap()
            .split(';')
            .next()
            .unwrap();
        assert!(install.split_whitespace().any(|w| w == named), "{named}: {install}");
    }
    // lab in /usr/bin, and every lab command the build runs is one lab accepts.
    let build = runs.iter().find(|r| r.contains("cargo build")).unwrap();
    assert!(
        build.contains("--locked") && build.contains("/out/usr/bin/lab"),
        "{build}"
    );
    let mut checked = 0;
    for step in build.split("&&") {
        let words: Vec<String> = step
            .split('>')
            .next()
            .unwrap()
            .split_whitespace()
            .map(str::to_string)
            .collect();
        if words.first().map(String::as_str) == Some("/out/usr/bin/lab") {
            let mut argv = words.clone();
            argv[0] = "lab".into();
            if let Err(e) = lab::cli::parse(&argv, lab::i18n::Lang::En) {
                panic!("{step}: {e}");
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 4, "lab man and three completions: {build}");
    assert!(build.contains("/usr/share/man/man1"), "{build}");
    assert_eq!(of("ENTRYPOINT"), ["[\"lab\"]"]);
    let cmd: Vec<String> = serde_json::from_str(of("CMD")[0]).unwrap();
    let mut argv = vec!["lab".to_string()];
    argv.extend(cmd);
    assert!(lab::cli::parse(&argv, lab::i18n::Lang::En).is_ok(), "{argv:?}");
    let ignored = std::fs::read_to_string(format!("{root}/.dockerignore")).unwrap();
    assert!(ignored.lines().any(|l| l.trim() == "target"), "{ignored}");
}

/// `scripts/deb` makes a Debian package (cargo-deb) of the lab binary given:
/// /usr/bin/lab, the manual pages `lab man` writes, the completions, the
/// README and the guide pages beside it (docs/, where its links point); it
/// depends on libc6 and recommends what lab drives. Unpacked as
/// dpkg unpacks it, its lab runs and its pages are the ones lab prints.
#[test]
fn scripts_deb_packages_lab_its_pages_and_completions() {
    let dir = scratch("ci", "deb");
    let out = std::process::Command::new(format!("{}/scripts/deb", env!("CARGO_MANIFEST_DIR")))
        .env("LAB_BIN", env!("CARGO_BIN_EXE_lab"))
        .env("LAB_DEB_DIR", dir.as_ref() as &std::path::Path)
        .env("LAB_DEB_COMPRESS", "none")
        .output()
        .expect("scripts/deb runs (cargo-deb: scripts/test installs it)");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let deb = String::from_utf8(out.stdout).unwrap().trim().to_string();
    assert!(
        deb.ends_with(&format!("lab_{}_{}.deb", env!("CARGO_PKG_VERSION"), arch())),
        "{deb}"
    );
    let field = |name: &str| {
        let o = Command::new("dpkg-deb").args(["--field", &deb, name]).output().unwrap();
        String::from_utf8(o.stdout).unwrap().trim().to_string()
    };
    assert_eq!(field("Package"), "lab");
    // dpkg-shlibdeps's, through cargo-deb: libc6 with the version lab links against.
    assert!(field("Depends").starts_with("libc6 (>= "), "{}", field("Depends"));
    assert_eq!(field("Recommends"), "postgresql, pgbouncer, pgpool2");
    assert!(field("Description").contains("installs one program, /usr/bin/lab"));

    let root = dir.join("root");
    let x = Command::new("dpkg-deb").args(["-x", &deb]).arg(&root).status().unwrap();
    assert!(x.success());
    let lab = root.join("usr/bin/lab");
    let version = Command::new(&lab).arg("--version").output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&version.stdout).trim(),
        format!("lab {}", env!("CARGO_PKG_VERSION"))
    );
    for file in [
        "usr/share/man/man1/lab.1.gz",
        "usr/share/man/man1/lab-all.1.gz",
        "usr/share/bash-completion/completions/lab",
        "usr/share/zsh/vendor-completions/_lab",
        "usr/share/fish/vendor_completions.d/lab.fish",
        "usr/share/doc/lab/README.md",
        "usr/share/doc/lab/docs/GUIDE.md",
        "usr/share/doc/lab/docs/findings/ssi-commit-window.md",
        "usr/share/doc/lab/docs/html-report.png",
    ] {
        let meta = std::fs::metadata(root.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert!(meta.len() > 0, "{file}");
    }
    // Every guide page of the checkout, as it is.
    let docs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs");
    let mut pages = 0;
    for entry in std::fs::read_dir(&docs).unwrap() {
        let page = entry.unwrap().path();
        if page.extension().is_none_or(|x| x != "md") {
            continue;
        }
        let name = page.file_name().unwrap().to_string_lossy().into_owned();
        let packaged = std::fs::read(root.join("usr/share/doc/lab/docs").join(&name))
            .unwrap_or_else(|e| panic!("usr/share/doc/lab/docs/{name}: {e}"));
        assert_eq!(packaged, std::fs::read(&page).unwrap(), "usr/share/doc/lab/docs/{name}");
        pages += 1;
    }
    assert!(pages > 5, "only {pages} pages under docs/");
    let page = Command::new("gzip")
        .args(["-dc"])
        .arg(root.join("usr/share/man/man1/lab-all.1.gz"))
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8(page.stdout).unwrap(),
        run(&["--lang", "en", "man", "all"]).stdout
    );
}

/// dpkg's name for this machine's architecture.
fn arch() -> String {
    let o = Command::new("dpkg").arg("--print-architecture").output().unwrap();
    String::from_utf8(o.stdout).unwrap().trim().to_string()
}
