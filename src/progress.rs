//! The one place progress bars are made: on stderr, hidden when stderr is not
//! a terminal, so callers never branch on it.
use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

static OFF: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// No bars from now on: `--step` talks to the person on the same terminal.
pub fn turn_off() {
    OFF.store(true, std::sync::atomic::Ordering::SeqCst);
}

pub fn enabled() -> bool {
    !OFF.load(std::sync::atomic::Ordering::SeqCst) && std::io::stderr().is_terminal()
}

/// The style of `template`; indicatif's default should the template not parse
/// (a translation with a stray brace must not stop a run).
fn style(template: &str) -> ProgressStyle {
    ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar())
}

/// A spinner with a message, e.g. the variant being run.
pub fn spinner(msg: impl Into<String>) -> ProgressBar {
    if !enabled() {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    pb.set_style(style("{spinner} {msg} {elapsed}"));
    pb.set_message(msg.into());
    pb.enable_steady_tick(Duration::from_millis(100));
    pb
}

/// A bar counting to `len`, inside `multi` when given.
pub fn bar(multi: Option<&MultiProgress>, len: u64, msg: impl Into<String>) -> ProgressBar {
    if !enabled() {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
    pb.set_style(style("{msg:>12} [{bar:30}] {pos}/{len}").progress_chars("=> "));
    pb.set_message(msg.into());
    match multi {
        Some(m) => m.add(pb),
        None => pb,
    }
}

/// A group of bars drawn together (hidden when not a terminal).
pub fn multi() -> MultiProgress {
    if enabled() {
        MultiProgress::new()
    } else {
        MultiProgress::with_draw_target(ProgressDrawTarget::hidden())
    }
}

/// A counter without a known end (messages one worker processed), inside `multi`.
pub fn counter(multi: &MultiProgress, msg: impl Into<String>) -> ProgressBar {
    if !enabled() {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    pb.set_style(style(&format!("{{msg:>12}} {{pos}} {}", crate::tr!("pr.messages"))));
    pb.set_message(msg.into());
    multi.add(pb)
}
