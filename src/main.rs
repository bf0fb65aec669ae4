//! `lab`: parse the command line, run, map the result to an exit code.
use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use clap::error::ErrorKind;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args_os().map(|a| a.to_string_lossy().into_owned()).collect();
    // The language comes first: the help and the usage errors speak it too.
    let lang = lab::cli::language_of_args(&args, &lab::postgres::conninfo::process_env);
    // So is --color: help is coloured as it says.
    lab::output::configure(false, lab::cli::color_of_args(&args));
    let parsed = match lab::cli::parse(&args, lang) {
        Ok(p) => p,
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {
            let mut out = std::io::stdout().lock();
            let help = lab::cli::help_output(&e, lang, out.is_terminal());
            // A reader that stopped reading (`lab --help | head`) is no error.
            let _ = out.write_all(help.as_bytes()).and_then(|()| out.flush());
            return ExitCode::SUCCESS;
        }
        Err(e) if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let err = std::io::stderr();
            let _ = err
                .lock()
                .write_all(lab::cli::help_output(&e, lang, err.is_terminal()).as_bytes());
            return lab::Exit::CouldNotRun.into();
        }
        Err(e) => {
            // Usage errors on one line, like every other error.
            let error = lab::i18n::ui::error().render(lang);
            // Not eprintln!: a closed stderr is no reason to panic.
            let _ = writeln!(std::io::stderr(), "{error}: {}", lab::cli::usage_line(&e, lang, &args));
            return lab::Exit::CouldNotRun.into();
        }
    };
    match lab::run(parsed, lang) {
        Ok(code) => code.into(),
        // Whoever read stdout stopped reading (`lab all | head`): end quietly,
        // as a program killed by SIGPIPE would (128 + 13).
        Err(err) if lab::is_closed_pipe(&err) => ExitCode::from(141),
        Err(err) => {
            lab::print_error(&err, lang);
            lab::Exit::CouldNotRun.into()
        }
    }
}
