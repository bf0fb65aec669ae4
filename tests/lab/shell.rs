use crate::oracle::{build_bookstore, isolationtester_output};
use crate::support::{Pty, Run, TestServer, one_line_exit_2, run, run_cmd};

/// `lab spec FILE --format isolation` on the test server.
fn replay(srv: &TestServer, spec: &std::path::Path) -> Run {
    run(&[
        "spec",
        spec.to_str().unwrap(),
        "--format",
        "isolation",
        "--database-url",
        &srv.url(),
    ])
}

const UPDATE_1: &str = "UPDATE stock_items SET quantity_on_hand = quantity_on_hand - 1 WHERE book_id = 1;";
const UPDATE_2: &str = "UPDATE stock_items SET quantity_on_hand = quantity_on_hand - 1 WHERE book_id = 2;";

fn on(srv: &TestServer, schema: &str) -> Vec<String> {
    vec![
        "--database-url".into(),
        format!("'{}'", srv.url()),
        "--schema".into(),
        schema.into(),
    ]
}

/// `lab shell` on the test server in `schema`, with `extra` options, in a pseudo-terminal.
fn shell(srv: &TestServer, schema: &str, extra: &[&str]) -> Pty {
    let mut args = on(srv, schema);
    args.extend(extra.iter().map(|a| a.to_string()));
    Pty::start(&args.iter().map(String::as_str).collect::<Vec<_>>())
}

/// `<tmp>/lab-shell-<pid>-<name>`: a file of this test process's own.
fn temp_file(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("lab-shell-{}-{name}", std::process::id()))
}

/// `lab shell` on the test server in `schema`, with `extra` options, `input` piped in whole.
fn piped(srv: &TestServer, schema: &str, extra: &[&str], input: &[u8]) -> std::process::Output {
    piped_with(srv, schema, extra, input, &[])
}

/// [`piped`], with `env` set for lab.
fn piped_with(
    srv: &TestServer,
    schema: &str,
    extra: &[&str],
    input: &[u8],
    env: &[(&str, &std::path::Path)],
) -> std::process::Output {
    use std::io::Write;
    let mut child = crate::support::lab()
        .args(["shell", "--database-url", &srv.url(), "--schema", schema])
        .args(extra)
        .envs(env.iter().copied())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input).unwrap();
    drop(stdin);
    child.wait_with_output().unwrap()
}

/// What a piped shell printed: its stdout, then its stderr.
fn printed(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
}

/// Nothing of the shell's is left on the server: no session, no schema.
fn nothing_left(srv: &TestServer, schema: &str) {
    let c = srv.client();
    srv.wait_for_zero(
        &c,
        &format!("SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE 'lab:{schema}:%'"),
    );
    assert_eq!(
        srv.query_i64(
            &c,
            &format!("SELECT count(*) FROM pg_namespace WHERE nspname = '{schema}'")
        ),
        0
    );
}

/// On a terminal 60 columns wide, what the shell says is cut at spaces,
/// its continuation indented, and `\\?`'s descriptions go on under their
/// column; the caret of an error stays under its character.
#[test]
fn what_the_shell_says_fits_a_narrow_terminal() {
    let srv = TestServer::start();
    let args = on(&srv, "shell_narrow").join(" ");
    let mut sh = Pty::sized(&format!("shell {args}"), Some(60));
    // (Where the lines break depends on the version's length: 15.18, 18.6.)
    let banner = sh.expect("leave.");
    let lines: Vec<&str> = banner.split("\r\n").collect();
    assert!(lines.len() >= 3, "{banner:?}");
    assert!(
        lines[1..]
            .iter()
            .all(|l| l.starts_with("  ") && l.chars().count() <= 60),
        "{banner:?}"
    );
    sh.send("BEGIN;");
    sh.expect("A → BEGIN (read committed)");
    sh.send(UPDATE_1);
    sh.expect("A → UPDATE 1");
    sh.send(&format!("B: {UPDATE_1}"));
    let wait = sh.expect("of stock_items)");
    let at = wait.find("⏳ B waits for A").expect("the wait");
    assert!(
        wait[at..].contains("\r\n  ") && !wait[at..].contains("\r\n   "),
        "{wait:?}"
    );
    sh.send("\\?");
    let help = sh.expect("there before)");
    assert!(
        help.contains("  \\save FILE.spec    write what ran as an isolationtester\r\n                     spec (lab spec FILE replays it)"),
        "{help:?}"
    );
    sh.send("SELECT nope_a_column_that_is_not_there FROM stock_items WHERE book_id = 1 AND quantity_on_hand > 0;");
    let error = sh.expect("^");
    let line = error
        .rfind("LINE 1: SELECT nope_a_column")
        .expect("LINE 1 whole on one line");
    let caret_line = error[line..].split("\r\n").nth(1).unwrap_or_default();
    assert_eq!(caret_line.find('^'), Some(2 + "LINE 1: SELECT ".len()), "{error:?}");
    sh.send("A: ROLLBACK;");
    sh.expect("✔ B after");
    sh.send("\\q");
    sh.expect("bye: the sessions are ended");
    let (code, out) = sh.exit();
    assert_eq!(code, 0, "{out}");
}

#[test]
fn a_wait_shows_live_and_the_saved_spec_replays_it_in_lab_and_isolationtester() {
    let srv = TestServer::start();
    let mut sh = shell(&srv, "shell_wait", &[]);
    sh.expect("lab shell: sessions A, B on PostgreSQL");
    sh.send("BEGIN;");
    sh.expect("A → BEGIN (read committed)");
    sh.expect("A (in transaction, read committed)> ");
    sh.send(UPDATE_1);
    sh.expect("A → UPDATE 1");
    sh.send("B: BEGIN ISOLATION LEVEL READ COMMITTED;");
    sh.expect("B → BEGIN (read committed)");
    sh.send(&format!("B: {UPDATE_1}"));
    // The prompt is back, B's wait confirmed by the server, naming A and the lock.
    let wait = sh.expect("of stock_items)");
    assert!(
        wait.contains("⏳ B waits for A (ShareLock on transaction ") && wait.contains("tuple (0,1) of stock_items)"),
        "{wait}"
    );
    sh.send("\\s B");
    sh.expect("B (waiting for A)> ");
    sh.send("A: COMMIT;");
    sh.expect("A → COMMIT");
    let done = sh.expect("→ UPDATE 1");
    assert!(done.contains("✔ B after "), "{done}");
    sh.send("SELECT quantity_on_hand FROM stock_items WHERE book_id = 1;");
    let rows = sh.expect("(1 row)");
    assert!(rows.contains(" 34 "), "36 in the seed, less A's and B's: {rows}");
    sh.send("COMMIT;");
    sh.expect("B → COMMIT");
    sh.send("\\timeline");
    sh.expect("⏳ waiting for A (ShareLock on transaction");
    let spec = temp_file("wait.spec");
    sh.send(&format!("\\save {}", spec.display()));
    sh.expect("saved 7 step(s)");
    let page = spec.with_extension("html");
    sh.send(&format!("\\html {}", page.display()));
    sh.expect("wrote the HTML report");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("<svg") && html.contains("ShareLock"),
        "the swimlanes and the wait"
    );
    // What a person ran has no expectation to be judged by: no verdict.
    for verdict in ["as documented", "not as documented", "expected:"] {
        assert!(!html.contains(verdict), "{verdict} in the shell's page");
    }
    assert!(
        html.contains("Recorded by <code>lab shell</code>"),
        "where it came from"
    );
    let _ = std::fs::remove_file(&page);
    let (code, out) = sh.quit();
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("bye: the sessions are ended"), "{out}");
    nothing_left(&srv, "shell_wait");

    let text = std::fs::read_to_string(&spec).unwrap();
    assert!(text.contains("# uses: bookstore"), "{text}");
    assert!(text.contains("\npermutation a1 a2 b1 b2(a3) a3 b3 b4\n"), "{text}");
    // lab replays it: the same wait, completion and value.
    let r = replay(&srv, &spec);
    assert_eq!(r.code, 0, "{}", r.why());
    let expected_steps = [
        "step b2: UPDATE stock_items SET quantity_on_hand = quantity_on_hand - 1 WHERE book_id = 1; <waiting ...>",
        "step a3: COMMIT;",
        "step b2: <... completed>",
        "step b3: SELECT quantity_on_hand FROM stock_items WHERE book_id = 1;",
    ];
    let mut at = 0;
    for s in expected_steps {
        let i = r.stdout[at..]
            .find(s)
            .unwrap_or_else(|| panic!("{s} in order:\n{}", r.stdout));
        at += i + s.len();
    }
    assert!(r.stdout[at..].contains("              34\n(1 row)"), "{}", r.stdout);
    // And so does PostgreSQL's isolationtester, against the lab schema.
    build_bookstore(&srv, &srv.client());
    let iso = isolationtester_output(&srv, &text, &[("PGOPTIONS", "-c search_path=lab")]);
    assert!(iso.status.success());
    let iso = String::from_utf8_lossy(&iso.stdout);
    let lab_out = r.stdout.split_once("starting permutation").unwrap().1;
    let iso_out = iso.split_once("starting permutation").unwrap().1;
    assert_eq!(lab_out, iso_out);
    let _ = std::fs::remove_file(&spec);
}

#[test]
fn ctrl_c_cancels_the_waiting_statement_of_its_session_only() {
    let srv = TestServer::start();
    let mut sh = shell(&srv, "shell_cancel", &[]);
    sh.expect("A> ");
    sh.send("BEGIN;");
    sh.expect("A → BEGIN");
    sh.send(UPDATE_1);
    sh.expect("A → UPDATE 1");
    sh.send("B: BEGIN;");
    sh.expect("B → BEGIN");
    sh.send(&format!("B: {UPDATE_1}"));
    sh.expect("⏳ B waits for A");
    sh.send("\\s B");
    sh.expect("B (waiting for A)> ");
    sh.ctrl_c();
    let cancelled = sh.expect("canceling statement due to user request");
    assert!(
        cancelled.contains("✖ B after ") && cancelled.contains(": ERROR 57014"),
        "{cancelled}"
    );
    sh.expect("B (in failed transaction)> ");
    // A keeps its transaction and its row.
    sh.send("A: SELECT quantity_on_hand FROM stock_items WHERE book_id = 1;");
    let a = sh.expect("A → SELECT 1");
    assert!(a.contains(" 35 "), "36 in the seed, less A's own: {a}");
    sh.send("\\s A");
    sh.expect("A (in transaction, read committed)> ");
    sh.send("COMMIT;");
    sh.expect("A → COMMIT");
    // Ctrl-C with nothing running keeps the shell; Ctrl-D leaves it.
    sh.ctrl_c();
    sh.expect("A runs nothing to cancel; \\q or Ctrl-D leaves");
    // Control keys go to the line editor once its prompt is up.
    sh.expect("A> ");
    let (code, out) = sh.ctrl_d();
    assert!(out.contains("bye: the sessions are ended"), "{out}");
    assert_eq!(code, 0, "{out}");
    nothing_left(&srv, "shell_cancel");
}

#[test]
fn ctrl_c_before_the_prompt_comes_back_cancels_the_statement_out() {
    let srv = TestServer::start();
    let mut sh = shell(&srv, "shell_cancel_early", &[]);
    sh.expect("A> ");
    // Typed, and Ctrl-C straight after: the editor has given the line up and
    // lab is watching the statement (the prompt comes back only after 1 s),
    // so the key is a SIGINT that must not be lost, nor echoed as `^C`.
    // What is left of the line is not sent.
    sh.send("SELECT pg_sleep(60); SELECT 42 AS answer;");
    sh.expect("SELECT 42 AS answer;");
    sh.ctrl_c();
    let cancelled = sh.expect("canceling statement due to user request");
    assert!(
        cancelled.contains("cancelling A's statement") && cancelled.contains("✖ A ERROR 57014"),
        "{cancelled}"
    );
    sh.expect("the 1 statement(s) after it are not sent");
    let mut next = sh.expect("A> ");
    sh.send("SELECT 1 AS one;");
    next += &sh.expect("A → SELECT 1");
    assert!(!next.contains("answer"), "the second statement was not sent: {next}");
    let (code, out) = sh.quit();
    assert_eq!(code, 0, "{out}");
    assert!(!out.contains("^C"), "{out}");
    nothing_left(&srv, "shell_cancel_early");
}

#[test]
fn a_deadlock_shows_its_victim_and_the_other_side_going_on() {
    let srv = TestServer::start();
    let mut sh = shell(&srv, "shell_deadlock", &[]);
    sh.expect("A> ");
    for (who, sql, answer) in [
        ("A", "BEGIN;", "A → BEGIN"),
        ("A", UPDATE_1, "A → UPDATE 1"),
        ("B", "BEGIN;", "B → BEGIN"),
        ("B", UPDATE_2, "B → UPDATE 1"),
        ("A", UPDATE_2, "⏳ A waits for B"),
        ("B", UPDATE_1, "⏳ B waits for A"),
    ] {
        sh.send(&format!("{who}: {sql}"));
        sh.expect(answer);
    }
    // The deadlock detector (deadlock_timeout, 1 s) picks a victim; the other goes on.
    let shown = sh.expect("deadlock detected");
    let victim = if shown.contains("✖ A after") { "A" } else { "B" };
    assert!(
        shown.contains(&format!("✖ {victim} after")) && shown.contains("ERROR 40P01"),
        "{shown}"
    );
    let other = if victim == "A" { "B" } else { "A" };
    let rest = sh.expect("→ UPDATE 1");
    assert!(rest.contains(&format!("✔ {other} after")), "{rest}");
    assert!(
        rest.contains("DETAIL: Process") && rest.contains("(A)") && rest.contains("(B)"),
        "the DETAIL names both sessions: {rest}"
    );
    let spec = temp_file("deadlock.spec");
    sh.send(&format!("\\save {}", spec.display()));
    sh.expect("saved 6 step(s)");
    let (code, out) = sh.quit();
    assert_eq!(code, 0, "{out}");
    nothing_left(&srv, "shell_deadlock");
    // The replay fails the same victim: the other side's deadlock_timeout is long in the spec.
    let text = std::fs::read_to_string(&spec).unwrap();
    assert!(
        text.contains(&format!("session {other}\nsetup {{ SET deadlock_timeout = '10s'; }}")),
        "{text}"
    );
    let r = replay(&srv, &spec);
    assert_eq!(r.code, 0, "{}", r.why());
    let before = r.stdout.split("ERROR:  deadlock detected").next().unwrap();
    let failed_step = before.lines().rev().find_map(|l| l.strip_prefix("step ")).unwrap();
    let victim_step = if victim == "A" { "a3" } else { "b3" };
    assert!(failed_step.starts_with(&format!("{victim_step}:")), "{}", r.stdout);
    // As live: the victim's error first, then the other side going on. (A
    // blocker mark on the victim would hold its error until then.)
    assert!(!text.contains(&format!("{victim_step}(")), "{text}");
    let other_step = if victim == "A" { "b3" } else { "a3" };
    let went_on = r
        .stdout
        .find(&format!("step {other_step}: <... completed>"))
        .unwrap_or_else(|| panic!("{other_step} completes after a wait: {}", r.stdout));
    assert!(before.len() < went_on, "{}", r.stdout);
    let _ = std::fs::remove_file(&spec);
}

/// What no spec could replay is not saved, with the reason: a statement
/// still waiting, a `}` (it ends a spec's SQL block), a cancelled step.
/// A `\setup` that would wait for a session's lock is cancelled, not
/// left hanging; one typed after statements ran is refused (the saved
/// spec would run it first). `B:` alone on a line sends the next lines to B.
#[test]
fn what_no_spec_replays_is_not_saved_and_setup_never_waits() {
    let srv = TestServer::start();
    let mut sh = shell(&srv, "shell_unsaved", &[]);
    sh.expect("A> ");
    sh.send("BEGIN;");
    sh.expect("A → BEGIN");
    sh.send(UPDATE_1);
    sh.expect("A → UPDATE 1");
    sh.send("\\setup UPDATE stock_items SET quantity_on_hand = 5 WHERE book_id = 1");
    let refused = sh.expect("use a session for this one");
    assert!(
        refused.contains("\\setup runs before the sessions' first statement"),
        "{refused}"
    );
    let spec = temp_file("unsaved.spec");
    sh.send("B:");
    sh.expect("B-> ");
    sh.send(UPDATE_1);
    sh.expect("⏳ B waits for A");
    sh.send(&format!("\\save {}", spec.display()));
    sh.expect("not saved: B's UPDATE stock_items SET quantity_on_hand = … (b1) has not answered yet");
    sh.send("A: SELECT '{1,2}'::int[] AS arr;");
    sh.expect("A → SELECT 1");
    sh.send("A: COMMIT;");
    sh.expect("✔ B after");
    sh.send(&format!("\\save {}", spec.display()));
    let brace = sh.expect("chr(125) in a string)");
    assert!(
        brace.contains("not saved: A's SELECT '{1,2}'::int[] AS arr (a3) has a '}'")
            && brace.contains("this shell's statements can no longer be saved as a spec")
            && brace.contains("start a new `lab shell` and write the statement another way"),
        "{brace}"
    );
    sh.send("B: SELECT pg_sleep(60);");
    sh.expect("B is still running");
    sh.send("\\s B");
    sh.expect("B (running)> ");
    sh.ctrl_c();
    sh.expect("57014");
    sh.send(&format!("\\save {}", spec.display()));
    let cancelled = sh.expect("rolls back)");
    assert!(
        cancelled.contains("not saved: B's SELECT pg_sleep(60) (b2) was cancelled (Ctrl-C)")
            && cancelled.contains("this shell's statements can no longer be saved as a spec")
            && cancelled.contains("start a new `lab shell`"),
        "{cancelled}"
    );
    let (code, out) = sh.quit();
    assert_eq!(code, 0, "{out}");
    assert!(!spec.exists(), "nothing written");
    nothing_left(&srv, "shell_unsaved");

    // A spec whose session A takes a lock in its own setup: a \setup that
    // waits for it is cancelled, and the shell goes on.
    let file = temp_file("locked.spec");
    std::fs::write(
        &file,
        "setup { CREATE TABLE shell_locked (k int); }\nteardown { DROP TABLE shell_locked; }\n\
         session A\nsetup { BEGIN; LOCK TABLE shell_locked; }\nstep a1 { COMMIT; }\n\
         session B\nstep b1 { SELECT count(*) FROM shell_locked; }\n",
    )
    .unwrap();
    let mut sh = shell(&srv, "shell_setup_wait", &["--spec", file.to_str().unwrap()]);
    sh.expect("A (in transaction, read committed)> ");
    sh.send("\\setup INSERT INTO shell_locked VALUES (1)");
    let cancelled = sh.expect("57014");
    assert!(
        cancelled.contains("the setup statement waits for A, so it is cancelled"),
        "{cancelled}"
    );
    // A ran nothing yet, and its setup took a lock: a spec without A
    // would replay without the lock, and a spec's session needs a step.
    sh.send("B: SELECT 1 AS one;");
    sh.expect("B → SELECT 1");
    let locked_spec = temp_file("locked-saved.spec");
    sh.send(&format!("\\save {}", locked_spec.display()));
    sh.expect("not saved: A's setup block ran, and A ran no statement");
    sh.send("\\run a1 b1");
    sh.expect("B → SELECT 1");
    sh.send(&format!("\\save {}", locked_spec.display()));
    sh.expect("saved 3 step(s)");
    let (code, out) = sh.quit();
    assert_eq!(code, 0, "{out}");
    nothing_left(&srv, "shell_setup_wait");
    assert!(locked_spec.exists(), "saved once A ran a step");
    let _ = std::fs::remove_file(&file);
    let _ = std::fs::remove_file(&locked_spec);
}

/// A script that is not UTF-8 (Latin-5, say) is refused with one line and
/// exit 2, not taken for the end of the input.
#[test]
fn input_that_is_not_utf8_is_one_line_and_exit_2() {
    let srv = TestServer::start();
    // 'Çanakkale' in ISO-8859-9: 0xC7 is no UTF-8.
    let out = piped(
        &srv,
        "lab_latin5",
        &[],
        b"SELECT 1 AS one;\nSELECT '\xC7anakkale';\nSELECT 2 AS two;\n",
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stdout}\n{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("not UTF-8"), "{stderr}");
    assert!(stdout.contains("A → SELECT 1") && !stdout.contains("two"), "{stdout}");
    nothing_left(&srv, "lab_latin5");
}

#[test]
fn predict_asks_first_and_tallies_in_turkish_too() {
    let srv = TestServer::start();
    let mut sh = shell(&srv, "shell_predict", &["--predict", "--lang", "tr"]);
    sh.expect("önce tahmin");
    for (sql, guess, judged) in [
        ("A: BEGIN;", "", "✔ doğru"),
        (&*format!("A: {UPDATE_1}"), "", "✔ doğru"),
        ("B: BEGIN;", "-", "B → BEGIN"),
        (&*format!("B: {UPDATE_1}"), "wait A", "✔ doğru"),
        ("A: SELECT 1 / 0;", "value 1", "✖ öyle değil"),
    ] {
        sh.send(sql);
        sh.expect("için tahmin> ");
        sh.send(guess);
        sh.expect(judged);
    }
    // Ctrl-C at the guess drops the statement: nothing is sent.
    sh.send("A: ROLLBACK; SELECT 'not sent';");
    sh.expect("için tahmin> ");
    sh.ctrl_c();
    sh.expect("A oturumunun ifadesi gönderilmiyor");
    sh.expect("ondan sonraki 1 ifade gönderilmiyor");
    let (code, out) = sh.quit();
    assert_eq!(code, 0, "{out}");
    assert!(!out.contains("A → ROLLBACK") && !out.contains("?column?"), "{out}");
    // The lock in Turkish words; its mode and the table as the server names them.
    assert!(
        out.contains("⏳ B, A oturumunu bekliyor (stock_items tablosunun (0,1) satırı için ")
            && out.contains(" numaralı transaction üzerinde ShareLock)"),
        "{out}"
    );
    assert!(out.contains("tahminler: 4 tahminden 3 doğru"), "{out}");
    nothing_left(&srv, "shell_predict");

    // The input ends at a guess: as Ctrl-D at the prompt, the shell ends
    // and the statement is not sent (it was, without its guess).
    let out = piped(
        &srv,
        "shell_predict",
        &["--predict"],
        b"SELECT 41 + 1 AS answer;\n\nSELECT 'not sent' AS never;\n",
    );
    let printed = printed(&out);
    assert_eq!(out.status.code(), Some(0), "{printed}");
    assert!(printed.contains("42"), "{printed}");
    assert!(
        printed.contains("the input ended at the guess: A's statement is not sent"),
        "{printed}"
    );
    assert!(!printed.contains("never"), "{printed}");
    nothing_left(&srv, "shell_predict");
}

#[test]
fn a_spec_is_walked_step_by_step_and_serializable_aborts_one() {
    let srv = TestServer::start();
    let mut sh = shell(&srv, "shell_spec", &["--spec", "lab/write-skew.spec"]);
    sh.expect("sessions A, B");
    sh.send("\\steps");
    sh.expect("a_begin_rc a_begin_rr a_begin_s a_check");
    sh.send("\\run a_begin_s b_begin_s a_check b_check a_insert b_insert a_commit");
    let walked = sh.expect("A → COMMIT");
    // Each step is shown before it runs, with its `# why:`.
    assert!(
        walked.contains("A ▸ a_check: SELECT count(*) AS pending FROM orders WHERE customer_id = /*:customer*/1234"),
        "{walked}"
    );
    assert!(
        walked.contains("why: no pending order was seen: insert one"),
        "{walked}"
    );
    sh.send("\\run b_commit");
    let b = sh.expect("40001");
    assert!(b.contains("✖ B ERROR 40001"), "{b}");
    sh.send("\\run nope");
    sh.expect("the spec has no step nope");
    let spec = temp_file("walked.spec");
    sh.send(&format!("\\save {}", spec.display()));
    sh.expect("saved 8 step(s)");
    let (code, out) = sh.quit();
    assert_eq!(code, 0, "{out}");
    nothing_left(&srv, "shell_spec");
    // The walk, saved: the spec's own setup and step names, in the order run.
    let text = std::fs::read_to_string(&spec).unwrap();
    assert!(text.contains("DELETE FROM orders WHERE status = 'Pending'"), "{text}");
    assert!(
        text.contains("\npermutation a_begin_s b_begin_s a_check b_check a_insert b_insert a_commit b_commit\n"),
        "{text}"
    );
    let r = replay(&srv, &spec);
    assert_eq!(r.code, 0, "{}", r.why());
    assert!(
        r.stdout
            .contains("step b_commit: COMMIT;\nERROR:  could not serialize access"),
        "{}",
        r.stdout
    );
    let _ = std::fs::remove_file(&spec);
}

#[test]
fn bad_shell_input_is_one_line_and_exit_2() {
    one_line_exit_2(
        &run(&["shell", "--sessions", "A,a"]),
        "--sessions needs one to eight names",
    );
    one_line_exit_2(&run(&["shell", "--spec", "no/such.spec"]), "no/such.spec");
    one_line_exit_2(
        &run(&["shell", "--spec", "lab/write-skew.spec", "--sessions", "A"]),
        "leave out --sessions",
    );
    // Sessions the shell could not tell apart (`s1: ...` finds either).
    let alike = temp_file("alike.spec");
    std::fs::write(
        &alike,
        "session s1\nstep a { SELECT 1; }\nsession S1\nstep b { SELECT 2; }\n",
    )
    .unwrap();
    one_line_exit_2(
        &run(&["shell", "--spec", alike.to_str().unwrap()]),
        "sessions s1 and S1 differ only in case",
    );
    let _ = std::fs::remove_file(&alike);
    let r = run_cmd(crate::support::lab().args(["shell", "--database-url", "postgresql://lab:secret@127.0.0.1:1/x"]));
    assert_eq!(r.code, 2, "{}", r.why());
    assert!(!r.stderr.contains("secret"), "{}", r.stderr);
}

/// Input that ends part-way through a statement: the statement is not
/// sent (a statement runs at its ';'), and the shell says so.
#[test]
fn a_statement_left_without_its_semicolon_at_the_end_of_input_is_named_not_run() {
    let srv = TestServer::start();
    let out = piped(
        &srv,
        "lab_unended",
        &[],
        b"BEGIN;\n\\locks\nSELECT 41 + 1 AS answer;\nB: SELECT 'never sent' -- no semicolon\n",
    );
    let printed = printed(&out);
    assert_eq!(out.status.code(), Some(0), "{printed}");
    assert!(printed.contains("42"), "{printed}");
    assert!(
        printed.contains("not run: B: SELECT 'never sent' -- no semicolon (no ';' ended it)"),
        "{printed}"
    );
    assert!(!printed.contains("B → SELECT 'never sent'"), "{printed}");
    // \locks shows no statement lab sent for itself (its handshake, the level read back after BEGIN).
    assert!(printed.contains("idle in transaction"), "{printed}");
    assert!(
        !printed.contains("SHOW transaction_isolation") && !printed.contains("pg_backend_pid()"),
        "{printed}"
    );
    nothing_left(&srv, "lab_unended");
    // A script that ends with a comment: nothing left unsent, nothing said.
    let script = temp_file("script.sql");
    std::fs::write(&script, "SELECT 1;\n-- the end of the demo\n").unwrap();
    let r = run_cmd(
        crate::support::lab()
            .args(["shell", "--database-url", &srv.url(), "--schema", "lab_unended"])
            .stdin(std::fs::File::open(&script).unwrap()),
    );
    std::fs::remove_file(&script).unwrap();
    assert_eq!(r.code, 0, "{}", r.why());
    assert!(
        !r.stdout.contains("not run") && !r.stderr.contains("not run"),
        "{}",
        r.stdout
    );
}

/// A statement sent while another session's still runs (waiting for no
/// lock) is saved, with a note: isolationtester runs the first to its end
/// before the next, so the replay's order is not the live one.
#[test]
fn a_statement_sent_beside_a_running_one_is_saved_with_a_note() {
    let srv = TestServer::start();
    let mut sh = shell(&srv, "shell_overlap", &[]);
    sh.expect("A> ");
    sh.send("SELECT pg_sleep(1.8);");
    sh.expect("A is still running");
    sh.send("B: SELECT 1 AS one;");
    sh.expect("B → SELECT 1");
    sh.expect("A → SELECT 1");
    let spec = temp_file("overlap.spec");
    sh.send(&format!("\\save {}", spec.display()));
    let saved = sh.expect("before b1 starts");
    assert!(
        saved.contains("saved 2 step(s)")
            && saved.contains(
                "note: B's SELECT 1 AS one (b1) was sent while A's SELECT pg_sleep(1.8) (a1) was still running"
            )
            && saved.contains("on replay a1 runs to its end"),
        "{saved}"
    );
    let (code, out) = sh.quit();
    assert_eq!(code, 0, "{out}");
    nothing_left(&srv, "shell_overlap");
    let text = std::fs::read_to_string(&spec).unwrap();
    assert!(text.contains("\npermutation a1 b1\n"), "{text}");
    let _ = std::fs::remove_file(&spec);
}

/// A role whose default level is REPEATABLE READ: the shell's sessions
/// still begin READ COMMITTED (lab's neutral settings), so the saved spec
/// sets that in each session, and the replay runs as the shell ran. Only
/// what differs is written.
#[test]
fn settings_the_shell_ran_with_are_saved_where_the_role_defaults_differ() {
    let srv = TestServer::start();
    let c = srv.client();
    srv.exec(
        &c,
        "ALTER ROLE CURRENT_USER SET default_transaction_isolation = 'repeatable read'",
    );
    let mut sh = shell(&srv, "shell_settings", &[]);
    sh.expect("A> ");
    sh.send("BEGIN;");
    sh.expect("A → BEGIN (read committed)");
    sh.send("SELECT current_setting('transaction_isolation') AS level;");
    sh.expect("A → SELECT 1");
    sh.send("COMMIT;");
    sh.expect("A → COMMIT");
    let spec = temp_file("settings.spec");
    sh.send(&format!("\\save {}", spec.display()));
    sh.expect("saved 3 step(s)");
    let (code, out) = sh.quit();
    assert_eq!(code, 0, "{out}");
    nothing_left(&srv, "shell_settings");
    let text = std::fs::read_to_string(&spec).unwrap();
    assert!(
        text.contains("session A\nsetup { SET default_transaction_isolation = 'read committed'; }\n"),
        "{text}"
    );
    assert!(!text.contains("lock_timeout"), "only what differs: {text}");
    let r = replay(&srv, &spec);
    assert_eq!(r.code, 0, "{}", r.why());
    assert!(
        r.stdout.contains("read committed") && !r.stdout.contains("repeatable read"),
        "{}",
        r.stdout
    );
    let _ = std::fs::remove_file(&spec);
}

/// Keys typed while a statement is out and no prompt is up are not echoed
/// by the terminal (they would land in the answers being printed); the
/// next prompt reads them, and shows them once.
#[test]
fn keys_typed_before_the_prompt_is_back_reach_it_shown_once() {
    let srv = TestServer::start();
    let mut sh = shell(&srv, "shell_typeahead", &[]);
    sh.expect("A> ");
    // The keys must reach lab in the second no prompt is up after A's
    // statement went out; on a busy machine A's running prompt may come
    // first, and the keys are then typed at a prompt like any others: once
    // more, up to five times.
    let mut typed = None;
    for k in 0..5 {
        sh.send("SELECT pg_sleep(3) AS slept;");
        // The editor's newline after the line: it has put the terminal
        // back, and A's statement is out, with no prompt up for 1 s.
        sh.expect("AS slept;");
        sh.expect("\n");
        let line = format!("SELECT {} AS seven;", 7 + k);
        sh.send(&format!("B: {line}"));
        let b = sh.expect("B → SELECT 1");
        sh.expect("A → SELECT 1");
        if b.contains("A is still running") {
            typed = Some(line);
            break;
        }
        assert!(
            b.contains("A (running)> "),
            "neither ahead of the prompt nor at it: {b}"
        );
    }
    let typed = typed.expect("keys typed before the prompt in one of five tries");
    // Lines that reach the editor in one read (typed ahead at a prompt, or
    // pasted without bracketed paste) each run, in order: rustyline keeps
    // what it read past a line for the next prompt (its buffer-redux).
    sh.send("BEGIN;\rSELECT 40 + 2 AS answer;\rCOMMIT;");
    let burst = sh.expect("A → COMMIT");
    assert!(burst.contains("A → BEGIN") && burst.contains("42"), "{burst}");
    let (code, out) = sh.quit();
    assert_eq!(code, 0, "{out}");
    assert_eq!(out.matches(&typed).count(), 1, "{out}");
    nothing_left(&srv, "shell_typeahead");
}

/// Ctrl-C on a session that runs nothing names the statements still out
/// elsewhere and how to cancel each; a statement for a busy session says
/// how to cancel what holds it (no `\s` to the current one); messages
/// name a statement by its words, not only by its step.
#[test]
fn ctrl_c_names_the_statements_still_out_and_messages_quote_them() {
    let srv = TestServer::start();
    let mut sh = shell(&srv, "shell_out", &[]);
    sh.expect("A> ");
    sh.send("BEGIN;");
    sh.expect("A → BEGIN");
    sh.send(UPDATE_1);
    sh.expect("A → UPDATE 1");
    sh.send(&format!("B: {UPDATE_1}"));
    sh.expect("⏳ B waits for A");
    sh.expect("A (in transaction, read committed)> ");
    sh.ctrl_c();
    sh.expect("A runs nothing to cancel; B's statement is still out: \\s B, then Ctrl-C, cancels it");
    sh.send("B: SELECT 42 AS never;");
    sh.expect("B has not finished its last statement: it must end first (\\s B, then Ctrl-C cancels it)");
    sh.send("\\s B");
    sh.expect("B (waiting for A)> ");
    sh.send("B: SELECT 42 AS never;");
    sh.expect("B has not finished its last statement: it must end first (Ctrl-C cancels it)");
    let spec = temp_file("out.spec");
    sh.send(&format!("\\save {}", spec.display()));
    sh.expect(
        "not saved: B's UPDATE stock_items SET quantity_on_hand = … (b1) has not answered yet, \
         and a spec that ends with it would replay an answer that did not come; save once it has (Ctrl-C on B cancels it)",
    );
    let (code, out) = sh.quit();
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("leaving: B's UPDATE stock_items SET quantity_on_hand = … (b1) had not answered; it is cancelled"),
        "{out}"
    );
    assert!(!out.contains("B → SELECT 1"), "not sent: {out}");
    assert!(!spec.exists());
    nothing_left(&srv, "shell_out");
}

/// Piped in, Ctrl-C is no advice: a statement for a busy session is not
/// sent, and the shell says only that. An error with a position shows
/// psql's `LINE n:` and caret; a command given an argument it does not
/// take says its usage.
#[test]
fn piped_input_gets_no_ctrl_c_advice_and_errors_show_where() {
    let srv = TestServer::start();
    let script = format!(
        "SELECT 1,\n  2 + ,\n 3;\n\\locks extra\nBEGIN;\n{UPDATE_1}\nB: {UPDATE_1}\nB: SELECT 42 AS never;\n\\save {}\n",
        temp_file("piped.spec").display()
    );
    let out = piped(&srv, "shell_piped", &[], script.as_bytes());
    let printed = printed(&out);
    assert_eq!(out.status.code(), Some(0), "{printed}");
    let caret = format!(
        "✖ A ERROR 42601: syntax error at or near \",\"\n  LINE 2:   2 + ,\n{}^\n",
        " ".repeat(2 + "LINE 2:   2 + ".len())
    );
    assert!(printed.contains(&caret), "{caret}\nin\n{printed}");
    assert!(printed.contains("usage: \\locks (\\? lists the commands)"), "{printed}");
    assert!(printed.contains("⏳ B waits for A"), "{printed}");
    assert!(
        printed.contains("not sent: B has not finished its last statement\n"),
        "{printed}"
    );
    assert!(
        printed.contains(
            "not saved: B's UPDATE stock_items SET quantity_on_hand = … (b1) has not answered yet, \
             and a spec that ends with it would replay an answer that did not come; save once it has\n"
        ),
        "{printed}"
    );
    assert!(
        printed.contains(
            "leaving: B's UPDATE stock_items SET quantity_on_hand = … (b1) had not answered; it is cancelled"
        ),
        "{printed}"
    );
    assert!(!printed.contains("Ctrl-C") && !printed.contains("never"), "{printed}");
    nothing_left(&srv, "shell_piped");
}

/// `\save ~/...` and `\html ~/...` write under $HOME, as psql reads `~`;
/// the replay command is quoted for a POSIX shell where the path needs it.
#[test]
fn a_tilde_is_home_and_the_replay_command_is_quoted_for_a_shell() {
    let srv = TestServer::start();
    let home = crate::support::scratch("lab-shell", "home");
    let out = piped_with(
        &srv,
        "shell_home",
        &[],
        b"SELECT 1 AS one;\n\\save ~/it's mine.spec\n\\html ~/page.html\n",
        &[("HOME", &home)],
    );
    let printed = printed(&out);
    assert_eq!(out.status.code(), Some(0), "{printed}");
    let spec = home.join("it's mine.spec");
    let shown = spec.display().to_string();
    let quoted = format!("'{}'", shown.replace('\'', "'\\''"));
    assert!(
        printed.contains(&format!("saved 1 step(s) to {shown}: `lab spec {quoted}` replays them")),
        "{printed}"
    );
    assert!(spec.exists(), "{printed}");
    assert!(home.join("page.html").exists(), "{printed}");
    // The quoted command is what a shell reads back as the file.
    let echoed = std::process::Command::new("sh")
        .args(["-c", &format!("printf %s {quoted}")])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&echoed.stdout), shown);
    nothing_left(&srv, "shell_home");
}
