//! `lab completions`: shell completions, their descriptions in the run's language.
use anyhow::Result;
use clap::Args;

use crate::output::{self, Exit};

/// Print shell completions.
#[derive(Debug, Clone, Args)]
pub struct CompletionsArgs {
    /// The shell to write completions for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// Writes the completions to stdout.
pub fn run(args: &CompletionsArgs, cmd: &mut clap::Command) -> Result<Exit> {
    let mut buf = Vec::new();
    clap_complete::generate(args.shell, cmd, "lab", &mut buf);
    output::out(&String::from_utf8_lossy(&buf))?;
    Ok(Exit::Ok)
}

impl crate::options::Run for CompletionsArgs {
    // The descriptions shells show next to commands and options speak the run's language.
    fn run(self, cx: &crate::options::Invocation<'_>) -> Result<Exit> {
        run(&self, &mut (cx.command)(cx.lang))
    }
}

crate::help_tr! {
    ("arg.completions.shell", "Tamamlamaların yazılacağı kabuk"),
    ("cmd.completions", "Kabuk tamamlamalarını yazdır"),
}
