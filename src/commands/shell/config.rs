//! `lab shell`: the command line checked into a run's configuration.
//! Pure: a spec to load is read where the run starts (the job).
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Result, bail};

use super::args::ShellArgs;
use super::msg as smsg;
use crate::i18n::Lang;
use crate::options::{self, ServerWanted, Shared};

/// A checked `lab shell` run.
pub struct ShellRun {
    pub shared: Shared,
    pub schema: String,
    pub keep_schema: bool,
    /// The sessions named (`--sessions`), when no spec names them.
    pub sessions: Option<Vec<String>>,
    /// `--spec FILE`: its setup runs, its sessions are the shell's.
    pub spec: Option<PathBuf>,
    pub predict: bool,
}

impl ShellRun {
    pub fn new(args: &ShellArgs, lang: Lang) -> Result<ShellRun> {
        if args.spec.is_some() && args.sessions.is_some() {
            bail!(smsg::spec_sessions());
        }
        let sessions = match &args.spec {
            Some(_) => None,
            None => {
                let names = super::session_names(args.sessions.as_deref())?;
                alike(&names)?;
                Some(names)
            }
        };
        Ok(ShellRun {
            shared: Shared::new(lang, ServerWanted::of(&args.server), Duration::from_secs(10)),
            schema: options::check_schema(&args.schema.name.schema)?,
            keep_schema: args.schema.keep_schema,
            sessions,
            spec: args.spec.clone(),
            predict: args.predict,
        })
    }
}

/// The shell finds a session by its name in any case (`b: ...`, `\s b`),
/// and calls its own connection "setup": names alike are refused.
pub fn alike(sessions: &[String]) -> Result<()> {
    for (i, name) in sessions.iter().enumerate() {
        if let Some(other) = sessions[..i]
            .iter()
            .map(String::as_str)
            .chain(["setup"])
            .find(|o| o.eq_ignore_ascii_case(name))
        {
            bail!(smsg::spec_sessions_alike(other, name));
        }
    }
    Ok(())
}
