//! `lab man`: the manual page (roff, through clap_mangen), made from the
//! same command line as `--help`, in the run's language: lab's own page, or
//! one command's; `--dir` writes every page, as a package installs them.
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use clap::Args;

use crate::i18n::Context;
use crate::output::{self, Exit};

/// Print lab's manual page (roff), or one command's; with --dir, write every page.
#[derive(Debug, Clone, Args)]
pub struct ManArgs {
    /// The command whose page to print (`lab man all`: lab-all(1)); none: lab(1).
    #[arg(value_name = "COMMAND", conflicts_with = "dir")]
    pub command: Option<String>,

    /// Write lab.1 and a lab-COMMAND.1 for every command into DIR (made if
    /// need be), as a package installs them under man1/.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// The page of `cmd` (lab itself, or one of its commands, named `lab-NAME`).
pub fn page(cmd: clap::Command) -> Result<String> {
    let mut buf = Vec::new();
    clap_mangen::Man::new(cmd).render(&mut buf).ctx(msg::render)?;
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

/// A command's own page: `lab-NAME(1)`, its synopsis `lab NAME ...`, lab's version.
fn command_page(sub: &clap::Command) -> Result<String> {
    let name = sub.get_name();
    page(
        sub.clone()
            .name(format!("lab-{name}"))
            .bin_name(format!("lab {name}"))
            .version(env!("CARGO_PKG_VERSION")),
    )
}

/// Every page: lab's, then one per command (clap's `help` aside), with its file name.
pub fn pages(lab: &clap::Command) -> Result<Vec<(String, String)>> {
    let mut out = vec![("lab.1".to_string(), page(lab.clone())?)];
    for sub in lab.get_subcommands().filter(|s| s.get_name() != "help") {
        out.push((format!("lab-{}.1", sub.get_name()), command_page(sub)?));
    }
    Ok(out)
}

fn write_all(dir: &Path, lab: &clap::Command) -> Result<()> {
    std::fs::create_dir_all(dir).ctx(|| msg::could_not_write(dir.display().to_string()))?;
    for (file, text) in pages(lab)? {
        let path = dir.join(file);
        output::write_file(&path, &text, msg::could_not_write)?;
    }
    Ok(())
}

impl crate::options::Run for ManArgs {
    fn run(self, cx: &crate::options::Invocation<'_>) -> Result<Exit> {
        let lab = (cx.command)(cx.lang);
        if let Some(dir) = &self.dir {
            write_all(dir, &lab)?;
            return Ok(Exit::Ok);
        }
        let text = match &self.command {
            None => page(lab)?,
            Some(name) => match lab.find_subcommand(name).filter(|s| s.get_name() != "help") {
                Some(sub) => command_page(sub)?,
                None => bail!(msg::no_such_command(name)),
            },
        };
        output::out(&text)?;
        Ok(Exit::Ok)
    }
}

crate::help_tr! {
    ("cmd.man", "lab'ın kılavuz sayfasını (roff) ya da bir komutunkini yazdır; --dir ile her sayfayı yaz"),
    ("arg.man.command", "Sayfası yazdırılacak komut (`lab man all`: lab-all(1)); verilmezse lab(1)"),
    ("arg.man.dir", "DIR içine lab.1'i ve her komut için bir lab-KOMUT.1 yaz (gerekirse dizini oluşturur), bir paketin man1/ altına kurduğu gibi"),
}

mod msg {
    crate::messages! {
        prefix "man";
        render() {
            en: "could not make the manual page",
            tr: "kılavuz sayfası oluşturulamadı",
        }
        could_not_write(path) {
            en: "could not write the manual page to {path}",
            tr: "kılavuz sayfası {path} konumuna yazılamadı",
        }
        no_such_command(name) {
            en: "lab has no command '{name}' (see lab --help)",
            tr: "lab'ın '{name}' adlı bir komutu yok (bkz. lab --help)",
        }
    }
}
