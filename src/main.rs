//! `lab`: parse the command line, run, map the result to an exit code.
use std::process::ExitCode;

use clap::FromArgMatches;
use clap::error::ErrorKind;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args_os().map(|a| a.to_string_lossy().into_owned()).collect();
    // The language comes first: the help and the usage errors speak it too.
    let lang = lab::language_of_args(&args);
    lab::i18n::set_current(lang);
    let parsed = lab::cli::command(lang)
        .try_get_matches_from(&args)
        .and_then(|m| lab::cli::Cli::from_arg_matches(&m));
    let cli = match parsed {
        Ok(cli) => cli,
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            return lab::Exit::CouldNotRun.into();
        }
        Err(e) => {
            // Usage errors on one line, like every other error.
            let text = lab::tr!("ru.usage", error = lab::cli::usage_error(&e));
            eprintln!("{}: {text}", lang.texts().ui.error);
            return lab::Exit::CouldNotRun.into();
        }
    };
    match lab::run(cli) {
        Ok(code) => code.into(),
        Err(err) => {
            lab::print_error(&err, lang);
            lab::Exit::CouldNotRun.into()
        }
    }
}
