use std::io::Write;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::support::{Pty, TestServer, in_script, in_script_sized, lab, run};

/// Runs lab inside a pseudo-terminal (util-linux `script`), typing `input`.
fn in_pty(args: &str, input: &str, env: &[(&str, &str)]) -> (i32, String) {
    in_pty_sized(args, input, env, None)
}

/// [`in_pty`] on a terminal `columns` wide.
fn in_pty_sized(args: &str, input: &str, env: &[(&str, &str)], columns: Option<u16>) -> (i32, String) {
    let mut c = in_script_sized(args, columns);
    for (k, v) in env {
        c.env(k, v);
    }
    let mut child = c.spawn().expect("script (util-linux) runs");
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.as_bytes()).unwrap();
    stdin.flush().unwrap();
    // Keep stdin open until lab is done, so it never reads an early end of input.
    let deadline = Instant::now() + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "lab under script did not finish");
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn step_pauses_before_each_statement_and_s_skips_the_rest() {
    // Three Enters, then "s": four prompts, then the rest runs without stopping.
    let (code, out) = in_pty(
        "lost-update --variant atomic-update --step",
        "\n\n\ns\n",
        &[("NO_COLOR", "1")],
    );
    assert_eq!(code, 0, "{out}");
    let before_skip = out
        .split("running the rest of this variant without stopping")
        .next()
        .unwrap();
    assert_eq!(before_skip.matches("next: session").count(), 4, "{out}");
    assert!(out.contains("next: session A runs"));
    // Each statement's own reason, from the language files.
    assert!(out.contains("why: start a READ COMMITTED transaction"), "{out}");
    assert!(out.contains("why: fix 1: let the database compute"), "{out}");
    assert!(out.contains("as documented"));
    assert!(!out.contains("\u{1b}[38;5"), "NO_COLOR means no colour");
}

/// On a terminal 60 columns wide, with stdout piped to a file (`| tee`),
/// the prompts on the terminal wrap at 60, each line under its label.
#[test]
fn step_prompts_fit_the_terminal_when_stdout_is_piped() {
    let dir = std::env::temp_dir().join(format!("lab-step-width-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let piped = dir.join("stdout.txt");
    let (code, out) = in_pty_sized(
        &format!("lost-update --variant atomic-update --step > {}", piped.display()),
        &"\n".repeat(12),
        &[("NO_COLOR", "1")],
        Some(60),
    );
    assert_eq!(code, 0, "{out}");
    let prompts: Vec<&str> = out.lines().collect();
    let longest = prompts.iter().map(|l| l.trim_end().chars().count()).max().unwrap();
    assert!(longest <= 60, "{longest}:\n{out}");
    let why = prompts
        .iter()
        .position(|l| l.starts_with("    why: start a READ COMMITTED"))
        .expect("a why");
    assert!(prompts[why + 1].starts_with("         "), "{out}");
    // stdout, a file, keeps the width of no terminal.
    let report = std::fs::read_to_string(&piped).unwrap();
    assert!(report.lines().any(|l| l.chars().count() > 60), "{report}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A COMMIT in a transaction that already failed (40001 at B's INSERT) is
/// announced as the ROLLBACK the server will make of it, not as a commit.
#[test]
fn step_says_a_commit_after_a_failure_will_be_a_rollback() {
    let (code, out) = in_pty(
        "write-skew --variant serializable --step",
        &"\n".repeat(30),
        &[("NO_COLOR", "1")],
    );
    assert_eq!(code, 0, "{out}");
    let said = "but this transaction already failed: the server ends it with ROLLBACK";
    assert_eq!(out.matches(said).count(), 1, "{out}");
    let after = &out[out.find(said).unwrap()..];
    assert!(after.contains("B: → ROLLBACK"), "{out}");
}

#[test]
fn step_speaks_turkish_too() {
    let (code, out) = in_pty("nowait --variant skip-locked --step --lang tr", "s\n", &[]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("sıradaki: A oturumu çalıştırıyor"), "{out}");
    assert!(out.contains("belgelendiği gibi"));
}

#[test]
fn step_covers_the_worker_pools_too() {
    // Two Enters (W1's and W2's BEGIN), then "s".
    let (code, out) = in_pty(
        "queue --variant skip-locked --messages 40 --workers 2 --work-ms 1 --step",
        "\n\ns\n",
        &[("NO_COLOR", "1")],
    );
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("next: session W1 runs") && out.contains("next: session W2 runs"),
        "{out}"
    );
    assert!(out.contains("FOR UPDATE SKIP LOCKED"), "{out}");
    assert!(
        out.contains("why: take the first unprocessed batch nobody holds"),
        "{out}"
    );
    assert!(!out.contains("/40"), "no progress bars while stepping: {out}");
}

#[test]
fn step_is_refused_without_a_terminal() {
    let r = run(&["nowait", "--step"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("--step") && r.stderr.contains("terminal"),
        "{}",
        r.stderr
    );
    assert_eq!(r.stderr.lines().count(), 1);
}

#[test]
fn colour_only_on_a_terminal() {
    let (_, coloured) = in_pty("nowait --variant nowait", "", &[]);
    assert!(coloured.contains("\u{1b}["), "a terminal gets colour");
    let piped = run(&["nowait", "--variant", "nowait"]);
    assert!(!piped.stdout.contains('\u{1b}'), "a pipe gets none");
}

#[test]
fn explain_and_list_explain_in_both_languages() {
    let r = run(&["list", "--explain"]);
    assert_eq!(r.code, 0);
    assert!(r.stdout.contains("EvalPlanQual"));
    let tr = run(&["list", "--explain", "--lang", "tr"]);
    assert!(
        tr.stdout.contains("senaryo") && tr.stdout.contains("EvalPlanQual"),
        "{}",
        tr.stdout
    );
    let turkish_env = crate::support::run_cmd(lab().args(["list"]).env("LANG", "tr_TR.UTF-8"));
    assert!(turkish_env.stdout.contains("özet"), "LANG picks Turkish");
    let e = run(&["rc-recheck", "--variant", "read-committed", "--explain"]);
    assert!(
        e.stdout.contains("why: The waiting DELETE re-evaluates its WHERE"),
        "{}",
        e.stdout
    );
    let bad =
        crate::support::run_cmd(lab().args(["nowait", "--database-url", "postgres://x@127.0.0.1:1/x", "--lang", "tr"]));
    assert!(bad.stderr.starts_with("hata: "), "{}", bad.stderr);
}

#[test]
fn completions_are_generated() {
    for shell in ["bash", "zsh", "fish"] {
        let r = run(&["completions", shell]);
        assert_eq!(r.code, 0);
        assert!(r.stdout.contains("write-skew"), "{shell}");
    }
}

#[test]
fn locks_shows_a_blocked_session_during_a_scenario() {
    let srv = TestServer::start();
    let c = srv.client();
    // B waits up to 5 s for A's row lock: time enough to look.
    let mut scenario = lab()
        .args([
            "timeouts",
            "--variant",
            "lock-timeout",
            "--timeout-ms",
            "5000",
            "--wait-timeout",
            "20",
            "--database-url",
            &srv.url(),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let waiting =
        "SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE 'lab:%:B' AND wait_event_type = 'Lock'";
    let deadline = Instant::now() + Duration::from_secs(10);
    while srv.query_i64(&c, waiting) == 0 {
        assert!(Instant::now() < deadline, "B never waited");
        std::thread::sleep(Duration::from_millis(5));
    }
    let view = run(&["locks", "--once", "--database-url", &srv.url()]);
    assert_eq!(view.code, 0, "{}", view.stderr);
    // A block per session, wrapped at 80 columns without cutting a word.
    assert!(view.stdout.lines().all(|l| l.chars().count() <= 80), "{}", view.stdout);
    assert!(
        !view.stdout.contains("Ctrl-C"),
        "--once has no refresh line: {}",
        view.stdout
    );
    let b_block: String = view
        .stdout
        .split("\n\n")
        .find(|b| b.starts_with("timeouts/lock-timeout:B "))
        .expect("B is listed")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(b_block.contains("wait event: Lock"), "{b_block}");
    assert!(
        b_block.contains("blocked by: timeouts/lock-timeout:A ("),
        "blocked by A: {b_block}"
    );
    assert!(b_block.contains(" ms"), "how long it has waited: {b_block}");
    assert!(
        b_block.contains("ShareLock") || b_block.contains("ExclusiveLock"),
        "{b_block}"
    );
    // --all also lists sessions that are not lab's (this test's own connection).
    let mine = srv.client();
    srv.exec(&mine, "SET application_name = 'room-psql'");
    let all = run(&["locks", "--once", "--all", "--database-url", &srv.url()]);
    assert!(all.stdout.contains("\nroom-psql (pid: "), "{}", all.stdout);
    assert!(all.stdout.contains("\ntimeouts/lock-timeout:B "), "{}", all.stdout);
    let lab_only = run(&["locks", "--once", "--database-url", &srv.url()]);
    assert!(
        lab_only.stdout.contains("\ntimeouts/lock-timeout:B "),
        "{}",
        lab_only.stdout
    );
    assert!(!lab_only.stdout.contains("room-psql"), "{}", lab_only.stdout);
    let _ = scenario.kill();
    let _ = scenario.wait();
}

/// The English sentences a Turkish run must not print: every English text's
/// fixed parts (placeholders cut out) of some length that no Turkish text shares.
fn english_fragments() -> Vec<&'static str> {
    let defs: Vec<&lab::i18n::Def> = lab::messages().into_iter().flatten().collect();
    let turkish: Vec<&str> = defs.iter().map(|d| d.tr).collect();
    let mut out = Vec::new();
    for d in &defs {
        for part in d.en.split(['{', '}']).step_by(2) {
            let part = part.trim();
            if part.len() >= 16 && !turkish.iter().any(|t| t.contains(part)) {
                out.push(part);
            }
        }
    }
    out
}

#[test]
fn a_turkish_run_speaks_turkish_in_its_notes_checks_and_errors() {
    let fragments = english_fragments();
    assert!(fragments.len() > 100, "only {} fragments", fragments.len());
    // Timelines, notes, narration, evidence and outcomes of several scenarios.
    let runs = [
        run(&["--lang", "tr", "lost-update"]),
        run(&["--lang", "tr", "deadlock", "--timeout-ms", "200"]),
        run(&[
            "--lang",
            "tr",
            "queue",
            "--variant",
            "skip-locked",
            "--messages",
            "200",
            "--work-ms",
            "5",
        ]),
        run(&[
            "--lang",
            "tr",
            "stock-race",
            "--variant",
            "oversell",
            "--requests",
            "20",
        ]),
    ];
    for r in &runs {
        let text = format!("{}{}", r.stdout, r.stderr);
        assert_eq!(r.code, 0, "{text}");
        assert!(text.contains("belgelendiği gibi"), "{text}");
        for f in &fragments {
            assert!(!text.contains(f), "English in a Turkish run: {f:?}\n{text}");
        }
    }
    assert!(runs[0].stdout.contains("not: Denetim kaydı"), "{}", runs[0].stdout);
    assert!(runs[2].stdout.contains("neden durdu"), "{}", runs[2].stdout);
    // Errors: our own, the command line's, and from the environment's language.
    let bad_variant = run(&["--lang", "tr", "lost-update", "--variant", "nope"]);
    assert_eq!(bad_variant.code, 2);
    assert!(
        bad_variant.stderr.starts_with("hata: ") && bad_variant.stderr.contains("bilinmeyen varyantı 'nope'"),
        "{}",
        bad_variant.stderr
    );
    let bad_value = crate::support::run_cmd(
        lab()
            .args(["lost-update", "--format", "xml"])
            .env("LANG", "tr_TR.UTF-8"),
    );
    assert_eq!(bad_value.code, 2);
    assert!(
        bad_value.stderr.contains("geçersiz değer 'xml'"),
        "{}",
        bad_value.stderr
    );
    let unreachable = run(&["--lang", "tr", "nowait", "--database-url", "postgres://x@127.0.0.1:1/x"]);
    assert!(unreachable.stderr.contains("bağlanılamadı"), "{}", unreachable.stderr);
    for r in [&bad_variant, &bad_value, &unreachable] {
        for f in &fragments {
            assert!(!r.stderr.contains(f), "English in a Turkish error: {f:?}: {}", r.stderr);
        }
    }
}

/// `lab spec --step`: each step of a spec file is shown with its session,
/// its SQL and the comment above it before it runs; `--explain` prints the
/// spec's comments after each permutation.
#[test]
fn step_walks_through_a_spec_file() {
    let srv = TestServer::start();
    let args = format!(
        "spec --database-url {} lab/examples/last-copy.spec --step --explain",
        srv.url()
    );
    let (code, out) = in_pty(&args, "\n\n\n\ns\n", &[("NO_COLOR", "1")]);
    assert_eq!(code, 0, "{out}");
    let before_skip = out
        .split("running the rest of this variant without stopping")
        .next()
        .unwrap();
    assert_eq!(before_skip.matches("next: session").count(), 5, "{out}");
    assert!(out.contains("next: session B runs"), "{out}");
    assert!(
        out.contains("why: A sells one copy; the row lock is A's until it commits"),
        "{out}"
    );
    assert!(!out.contains("why: why:"), "{out}");
    assert!(
        out.contains("why: The last copy: two clerks sell the last copy"),
        "{out}"
    );
    assert!(out.contains("B waits for A; when A commits"), "{out}");
}

#[test]
fn step_walks_through_http_requests() {
    // Enter for A's GET and B's GET, then "s".
    let (code, out) = in_pty("http-etag --variant if-match --step", "\n\ns\n", &[("NO_COLOR", "1")]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("next: session A runs") && out.contains("next: session B runs"),
        "{out}"
    );
    assert!(out.contains("GET /books/1"), "{out}");
    assert!(out.contains("why: read book 1 and its ETag"), "{out}");
    assert!(out.contains("412 Precondition Failed"), "{out}");
}

#[test]
fn step_shows_each_outcome_and_each_verdict_before_the_next_variant() {
    let (code, out) = in_pty(
        "lost-update --variant read-committed --variant select-for-update --step",
        &"\n".repeat(40),
        &[("NO_COLOR", "1")],
    );
    assert_eq!(code, 0, "{out}");
    // Each statement's outcome right under its prompt, a wait as it happens.
    assert!(out.contains("    A: → quantity_on_hand=36"), "{out}");
    assert!(
        out.contains("    B: ⏳ waiting for A (ShareLock on transactionid)"),
        "{out}"
    );
    assert!(out.contains("    B: ✔ after waiting"), "{out}");
    // The first variant's timeline and verdict come before the second one begins.
    let verdict = out
        .lines()
        .position(|l| l.contains("│ read-committed ") && l.contains("as documented"))
        .expect("read-committed's verdict");
    let next = out
        .lines()
        .position(|l| l.starts_with("▶ lost-update/select-for-update"))
        .expect("select-for-update is announced");
    let timeline = out
        .lines()
        .position(|l| l.contains("── lost-update / read-committed ──"))
        .expect("read-committed's timeline");
    assert!(timeline < verdict && verdict < next, "{out}");
}

#[test]
fn stepping_at_a_teachers_pace_never_fails_a_timeout_variant() {
    // Enter every 1.5 s: longer than the 300 ms idle_in_transaction_session_timeout.
    let mut child = in_script("timeouts --variant idle-in-transaction --timeout-ms 300 --step")
        .env("NO_COLOR", "1")
        .spawn()
        .expect("script (util-linux) runs");
    let mut stdin = child.stdin.take().unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "lab under script did not finish");
        // A person's pace, not a synchronisation: lab waits on its own prompts.
        std::thread::sleep(Duration::from_millis(1500));
        let _ = stdin.write_all(b"\n");
        let _ = stdin.flush();
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.contains("idle_in_transaction_session_timeout = '300ms' now counts while the room reads"),
        "{text}"
    );
    assert!(
        text.lines()
            .any(|l| l.contains("│ idle-in-transaction ") && l.contains("as documented")),
        "{text}"
    );
}

/// `lab explore --step`: after the exploration, a class's representative
/// runs again, one step per Enter; its timeline follows the classes.
#[test]
fn step_walks_through_a_class_representative() {
    let srv = TestServer::start();
    let args = format!(
        "explore g1c --database-url {} --level serializable --step --class 2",
        srv.url()
    );
    let (code, out) = in_pty(&args, "\n\n\n\n\n\n\n\n\n\n", &[("NO_COLOR", "1")]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("next: session T1 runs"), "{out}");
    let stepped = out.split("class 2, step by step: ").nth(1).expect("the stepped class");
    // Class 2 of SERIALIZABLE: one of the two transactions aborted at commit.
    assert!(stepped.contains("40001"), "{out}");
    let r = run(&["explore", "g1c", "--database-url", &srv.url(), "--step"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("--step"), "{}", r.stderr);
}

#[test]
fn step_predict_asks_first_and_keeps_the_tally() {
    // Three guesses of "runs at once", B's wait for A, then a wrong one for A's COMMIT, then "s".
    let (code, out) = in_pty(
        "lost-update --variant atomic-update --step --predict",
        "\n\n\nwiat A\nwait A\nerror\ns\n",
        &[("NO_COLOR", "1")],
    );
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("your guess, then Enter"), "{out}");
    // A mistyped guess is asked again, B's UPDATE not yet run: the next line is its guess.
    assert_eq!(out.matches("not a guess").count(), 1, "{out}");
    assert!(
        out.contains("guessed: waited for A | the server: waited for A ✔ right (guesses: 4 of 4 right)"),
        "{out}"
    );
    assert!(
        out.contains("guessed: failed | the server: ran at once ✖ not so (guesses: 4 of 5 right)"),
        "{out}"
    );
    // --predict without --step is a usage error.
    let r = run(&["lost-update", "--predict"]);
    assert_eq!(r.code, 2, "{}", r.why());
}

/// Ctrl-C at a step's prompt ends the run at once (exit 130, everything
/// removed), not at the next Enter: the prompt's read of the terminal does
/// not hold lab back.
#[test]
fn ctrl_c_at_a_step_prompt_exits_at_once() {
    let mut pty = Pty::lab("lost-update --variant atomic-update --step");
    pty.expect("[Enter] run it");
    pty.ctrl_c();
    // Nothing more is typed: lab must leave on its own.
    let (code, out) = pty.exit();
    assert_eq!(code, 130, "{out}");
    assert!(out.contains("interrupted"), "{out}");
}

/// The presenter's terminal goes away mid-step (an SSH connection dropped):
/// SIGHUP, and every later write to the terminal fails. lab ends as
/// interrupted (130), cleaned up; it panicked (101) writing its next line.
#[test]
fn a_terminal_closed_during_step_ends_the_run_as_interrupted() {
    use std::io::Read;
    use std::os::fd::{FromRawFd, OwnedFd};
    use std::os::unix::process::CommandExt;
    let (mut master, slave) = unsafe {
        let (mut m, mut s) = (0, 0);
        let rc = libc::openpty(&mut m, &mut s, std::ptr::null_mut(), std::ptr::null(), std::ptr::null());
        assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
        // Not inherited: a master still open in lab (or in another test's child) would keep the terminal up.
        for fd in [m, s] {
            libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
        }
        (std::fs::File::from_raw_fd(m), OwnedFd::from_raw_fd(s))
    };
    let mut cmd = lab();
    cmd.args(["lost-update", "--variant", "select-for-update", "--step"])
        .env("NO_COLOR", "1")
        .stdin(slave.try_clone().unwrap())
        .stdout(slave.try_clone().unwrap())
        .stderr(slave.try_clone().unwrap());
    // Its own session, the pty its controlling terminal: closing the pty hangs it up.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY, 0) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let child = cmd.spawn().unwrap();
    drop(slave);
    let pid = child.id();
    // Ended (SIGINT: lab cleans up) if the test fails first: nothing outlives it.
    struct Reap(std::process::Child);
    impl Drop for Reap {
        fn drop(&mut self) {
            if self.0.try_wait().ok().flatten().is_none() {
                unsafe { libc::kill(self.0.id() as i32, libc::SIGINT) };
                let deadline = Instant::now() + Duration::from_secs(15);
                while self.0.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(20));
                }
                let _ = self.0.kill();
                let _ = self.0.wait();
            }
        }
    }
    let mut child = Reap(child);
    // Read until the second prompt: one Enter typed, the run under way.
    let mut seen = String::new();
    let mut buf = [0u8; 4096];
    let mut entered = false;
    while seen.matches("next: session").count() < 2 {
        // Within a deadline: a lab that prints nothing must not hang the test.
        let mut fd = libc::pollfd {
            fd: std::os::fd::AsRawFd::as_raw_fd(&master),
            events: libc::POLLIN,
            revents: 0,
        };
        assert!(
            unsafe { libc::poll(&mut fd, 1, 60_000) } > 0,
            "no prompt within 60 s: {seen}"
        );
        let n = master.read(&mut buf).expect("lab prints its prompts");
        assert!(n > 0, "the terminal closed early: {seen}");
        seen.push_str(&String::from_utf8_lossy(&buf[..n]));
        if !entered && seen.contains("next: session") {
            master.write_all(b"\r").unwrap();
            entered = true;
        }
    }
    drop(master);
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(s) = child.0.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "lab outlived its terminal");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(130), "{status:?}; it printed:\n{seen}");
    crate::support::assert_no_leftovers(pid);
}
