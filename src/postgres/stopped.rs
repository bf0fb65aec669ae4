//! Processes lab stops with SIGSTOP (a backend, a standby's WAL receiver),
//! always continued: by lab when their span ends, by lab's clean-up when a
//! run stops part-way, and when lab dies in any way (SIGKILL included) by a
//! guard process. Before lab stops a process it tells the guard its pid on
//! a pipe; when the pipe closes (lab exited, however) the guard sends
//! SIGCONT to every pid it was told and exits. The guard is `/bin/sh` in a
//! process group of its own (a Ctrl-C in the terminal does not end it
//! first), ignoring the signals a terminal or a shutdown sends.
//!
//! A pid the guard continues may have ended meanwhile and, rarely, been
//! given to another process: SIGCONT does nothing to a process that is not
//! stopped.
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Mutex;

use anyhow::Result;

use crate::i18n::Context;

/// The guard: reads pids until its input closes, then continues them all.
const GUARD: &str = "trap '' INT TERM HUP QUIT; p=''; \
                     while read -r x; do p=\"$p $x\"; done; \
                     [ -n \"$p\" ] && kill -CONT $p 2>/dev/null; exit 0";

/// Stops and continues processes; every one it stopped is continued.
pub struct Stopper {
    guard: Mutex<Option<(Child, ChildStdin)>>,
    /// Stopped now.
    stopped: Mutex<Vec<i32>>,
}

impl Stopper {
    /// Starts the guard.
    pub fn start() -> Result<Stopper> {
        let mut child = Command::new("/bin/sh")
            .args(["-c", GUARD])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .ctx(msg::guard)?;
        let stdin = child.stdin.take().expect("piped");
        Ok(Stopper {
            guard: Mutex::new(Some((child, stdin))),
            stopped: Mutex::default(),
        })
    }

    /// SIGSTOP to `pid`, once the guard knows to continue it.
    pub fn stop(&self, pid: i32) -> Result<()> {
        {
            let mut guard = self.guard.lock().unwrap();
            let (_, stdin) = guard.as_mut().ok_or_else(|| anyhow::anyhow!(msg::guard()))?;
            writeln!(stdin, "{pid}").and_then(|()| stdin.flush()).ctx(msg::guard)?;
        }
        self.stopped.lock().unwrap().push(pid);
        // SAFETY: a plain signal to a pid.
        unsafe { libc::kill(pid, libc::SIGSTOP) };
        Ok(())
    }

    /// SIGCONT to `pid`.
    pub fn cont(&self, pid: i32) {
        self.stopped.lock().unwrap().retain(|p| *p != pid);
        unsafe { libc::kill(pid, libc::SIGCONT) };
    }

    /// Continues every process stopped now.
    pub fn cont_all(&self) {
        let pids = std::mem::take(&mut *self.stopped.lock().unwrap());
        for pid in pids {
            unsafe { libc::kill(pid, libc::SIGCONT) };
        }
    }

    /// How many are stopped now.
    pub fn stopped(&self) -> usize {
        self.stopped.lock().unwrap().len()
    }
}

impl Drop for Stopper {
    fn drop(&mut self) {
        self.cont_all();
        if let Some((mut child, stdin)) = self.guard.lock().unwrap().take() {
            // Its input closes: it continues what it was told, again, and exits.
            drop(stdin);
            let _ = child.wait();
        }
    }
}

mod msg {
    crate::messages! {
        prefix "sg";
        guard() {
            en: "could not start or reach the guard that continues the processes lab stops (/bin/sh)",
            tr: "lab'ın durdurduğu süreçleri devam ettiren bekçi başlatılamadı ya da ona ulaşılamadı (/bin/sh)",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// The state letter of `pid` in /proc (T: stopped).
    fn state(pid: i32) -> char {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        stat.rsplit(')')
            .next()
            .and_then(|r| r.trim_start().chars().next())
            .unwrap_or('?')
    }

    fn until(pid: i32, want: char) -> bool {
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if state(pid) == want {
                return true;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        false
    }

    #[test]
    fn a_stopped_process_is_continued_when_the_stopper_goes() {
        let mut sleeper = Command::new("sleep").arg("30").spawn().unwrap();
        let pid = sleeper.id() as i32;
        let s = Stopper::start().unwrap();
        s.stop(pid).unwrap();
        assert!(until(pid, 'T'), "stopped");
        assert_eq!(s.stopped(), 1);
        s.cont(pid);
        assert!(until(pid, 'S'), "continued");
        s.stop(pid).unwrap();
        assert!(until(pid, 'T'));
        drop(s);
        assert!(until(pid, 'S'), "continued when dropped");
        let _ = sleeper.kill();
        let _ = sleeper.wait();
    }

    #[test]
    fn the_guard_continues_what_it_was_told_when_its_input_closes() {
        // As if lab died: the guard's input closes without lab continuing anything.
        let mut sleeper = Command::new("sleep").arg("30").spawn().unwrap();
        let pid = sleeper.id() as i32;
        let s = Stopper::start().unwrap();
        s.stop(pid).unwrap();
        assert!(until(pid, 'T'));
        let (mut guard, stdin) = s.guard.lock().unwrap().take().unwrap();
        s.stopped.lock().unwrap().clear();
        drop(stdin);
        guard.wait().unwrap();
        assert!(until(pid, 'S'), "the guard continued it");
        let _ = sleeper.kill();
        let _ = sleeper.wait();
    }
}
