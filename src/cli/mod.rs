//! The command line's root: `lab`, its global `--lang`, and the list of
//! commands (a command's own arguments are in its folder under
//! `commands/`; the options several take, in `options`). Each scenario's
//! subcommand is made from its declaration in the catalogue (the common run
//! options plus its own). Clap types stop at each command's `config`, which
//! turns them into a checked run configuration.
pub mod help;

use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand};

use crate::commands::compare::CompareArgs;
use crate::commands::completions::CompletionsArgs;
use crate::commands::explore::args::ExploreArgs;
use crate::commands::hunt::args::HuntArgs;
use crate::commands::locks::args::LocksArgs;
use crate::commands::man::ManArgs;
use crate::commands::phenomena::args::PhenomenaArgs;
use crate::commands::scenarios::args::{AllArgs, ListArgs, RunArgs};
use crate::commands::scenarios::{self, Params, Scenario};
use crate::commands::server::ServeArgs;
use crate::commands::shell::args::ShellArgs;
use crate::commands::spec::args::SpecArgs;
use crate::i18n::{Lang, ui};
use crate::options::{Invocation, Run};
use crate::output::ColorWhen;

pub use help::{color_of_args, help_output, language_of_args};

#[derive(Debug, Parser)]
#[command(
    name = "lab",
    version,
    about = "Makes PostgreSQL concurrency anomalies happen on demand, next to their fixes, \
             and says whether the server behaved as documented.",
    after_help = "With no database given, lab starts a throwaway PostgreSQL from the binaries \
                  it finds on this machine and removes it afterwards.\n\
                  Exit codes: 0 every variant showed its documented outcome, 1 at least one did \
                  not, 2 could not run, 130 interrupted."
)]
pub struct Cli {
    /// Language of everything lab says (default: from LC_ALL/LC_MESSAGES/LANG, else English).
    #[arg(long, global = true, value_enum, ignore_case = true)]
    pub lang: Option<Lang>,

    /// Nothing on stdout and no progress: the exit code, stderr (errors,
    /// warnings, why a run failed) and the report files say how it went.
    #[arg(long, short = 'q', global = true)]
    pub quiet: bool,

    /// When to colour the output: auto (a terminal, unless NO_COLOR is set), always, never.
    #[arg(long, global = true, value_enum, ignore_case = true, value_name = "WHEN", default_value_t = ColorWhen::Auto)]
    pub color: ColorWhen,

    #[command(subcommand)]
    pub command: Command,
}

/// Declares the commands that are not scenarios (each scenario has its own,
/// from the catalogue): the `Command` enum clap parses, and its run, which
/// hands each command's arguments to their [`Run`]. A command's about is its
/// arguments' doc comment.
macro_rules! commands {
    ($($variant:ident($args:ty),)*) => {
        #[derive(Debug, Subcommand)]
        pub enum Command {
            $($variant($args),)*
        }

        impl Command {
            pub fn run(self, cx: &Invocation<'_>) -> anyhow::Result<crate::output::Exit> {
                match self {
                    $(Command::$variant(args) => args.run(cx),)*
                }
            }
        }
    };
}

// A new command: its module under commands/ (`pub mod` in commands/mod.rs)
// and one line here.
commands! {
    List(ListArgs),
    All(AllArgs),
    Server(ServeArgs),
    Locks(LocksArgs),
    Spec(Box<SpecArgs>),
    Phenomena(PhenomenaArgs),
    Explore(ExploreArgs),
    Hunt(HuntArgs),
    Compare(CompareArgs),
    Shell(ShellArgs),
    Completions(CompletionsArgs),
    Man(ManArgs),
}

/// A parsed command line.
pub enum Parsed {
    Fixed(Cli),
    Scenario {
        lang: Option<Lang>,
        /// `--quiet` and `--color`.
        writing: (bool, ColorWhen),
        scenario: &'static Scenario,
        run: RunArgs,
        /// Its own options, checked.
        params: anyhow::Result<Params>,
    },
}

impl Parsed {
    /// `--quiet` and `--color`, for [`crate::output::configure`].
    pub fn writing(&self) -> (bool, ColorWhen) {
        match self {
            Parsed::Fixed(cli) => (cli.quiet, cli.color),
            Parsed::Scenario { writing, .. } => *writing,
        }
    }
}

/// A scenario's subcommand: its about, the common run options, its own.
fn scenario_command(s: &'static Scenario) -> clap::Command {
    let cmd = RunArgs::augment_args(clap::Command::new(s.name));
    let cmd = match &s.options {
        Some(o) => (o.augment)(cmd),
        None => cmd,
    };
    // After the arguments: deriving them sets the about from their type's doc comment.
    cmd.about((s.about)().en())
}

/// The command line as clap sees it, in `lang`: abouts and option help in
/// that language where lab has them (English is written on the types above
/// and in the catalogue), and clap's own words from the interface's.
pub fn command(lang: Lang) -> clap::Command {
    let mut cmd = Cli::command();
    for s in scenarios::ALL {
        cmd = cmd.subcommand(scenario_command(s));
    }
    let mut cmd = help::localize(cmd, lang, true);
    // `help` is clap's own subcommand, made when the command is built.
    cmd.build();
    let about = ui::help_subcommand().render(lang);
    cmd.mut_subcommand("help", |h| {
        h.about(about.clone())
            .mut_subcommand("help", |hh| hh.about(about.clone()))
    })
}

/// Parses `args` (the program name first).
pub fn parse(args: &[String], lang: Lang) -> Result<Parsed, clap::Error> {
    let m = command(lang).try_get_matches_from(args)?;
    let lang_given = m.get_one::<Lang>("lang").copied();
    if let Some((name, sub)) = m.subcommand()
        && let Some(scenario) = scenarios::find(name)
    {
        let run = RunArgs::from_arg_matches(sub)?;
        let params = match &scenario.options {
            Some(o) => (o.parse)(sub),
            None => scenario.default_params(),
        };
        return Ok(Parsed::Scenario {
            lang: lang_given,
            writing: (
                m.get_flag("quiet"),
                m.get_one::<ColorWhen>("color").copied().unwrap_or_default(),
            ),
            scenario,
            run,
            params,
        });
    }
    Ok(Parsed::Fixed(Cli::from_arg_matches(&m)?))
}

/// The text of a usage error line: `<error> (see lab --help)`.
pub fn usage_line(e: &clap::Error, lang: Lang, args: &[String]) -> String {
    help::usage_line(e, lang, args, &command(lang))
}
