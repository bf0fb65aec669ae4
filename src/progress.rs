//! The one place progress bars are made: on stderr, hidden when stderr is not
//! a terminal or a person is stepping, so callers never branch on it.
use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::i18n::Lang;

#[derive(Debug, Clone, Copy)]
pub struct Progress {
    enabled: bool,
    lang: Lang,
}

impl Progress {
    /// Bars on stderr when it is a terminal, unless a person steps through
    /// statements on it (bars would draw over the prompts).
    pub fn for_stderr(lang: Lang, stepping: bool) -> Progress {
        Progress {
            enabled: !stepping && std::io::stderr().is_terminal() && !crate::output::quiet(),
            lang,
        }
    }

    pub fn hidden(lang: Lang) -> Progress {
        Progress { enabled: false, lang }
    }

    /// A spinner with a message, e.g. the variant being run.
    pub fn spinner(&self, msg: impl Into<String>) -> ProgressBar {
        if !self.enabled {
            return ProgressBar::hidden();
        }
        let pb = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        pb.set_style(style("{spinner} {msg} {elapsed}"));
        pb.set_message(msg.into());
        pb.enable_steady_tick(Duration::from_millis(100));
        pb
    }

    /// A bar counting to `len`, inside `multi` when given.
    pub fn bar(&self, multi: Option<&MultiProgress>, len: u64, msg: impl Into<String>) -> ProgressBar {
        if !self.enabled {
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

    /// A group of bars drawn together (hidden when bars are off).
    pub fn multi(&self) -> MultiProgress {
        if self.enabled {
            MultiProgress::new()
        } else {
            MultiProgress::with_draw_target(ProgressDrawTarget::hidden())
        }
    }

    /// A counter without a known end (messages one worker processed), inside `multi`.
    pub fn counter(&self, multi: &MultiProgress, msg: impl Into<String>) -> ProgressBar {
        if !self.enabled {
            return ProgressBar::hidden();
        }
        let pb = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        let unit = msg::messages().render(self.lang);
        pb.set_style(style(&format!("{{msg:>12}} {{pos}} {unit}")));
        pb.set_message(msg.into());
        multi.add(pb)
    }
}

/// The style of `template`; indicatif's default should the template not parse
/// (a translation with a stray brace must not stop a run).
fn style(template: &str) -> ProgressStyle {
    ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar())
}

pub mod msg {
    crate::messages! {
        prefix "pr";
        messages() {
            en: "messages",
            tr: "mesaj",
        }
    }
}
