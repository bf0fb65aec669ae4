//! `lab`: parse the command line, run, map the result to an exit code.
use std::process::ExitCode;

use clap::Parser;
use clap::error::ErrorKind;

fn main() -> ExitCode {
    let cli = match lab::cli::Cli::try_parse() {
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
            eprintln!("error: {} (see lab --help)", lab::cli::one_line_usage_error(&e));
            return lab::Exit::CouldNotRun.into();
        }
    };
    let lang = lab::language(cli.lang);
    match lab::run(cli) {
        Ok(code) => code.into(),
        Err(err) => {
            lab::print_error(&err, lang);
            lab::Exit::CouldNotRun.into()
        }
    }
}
