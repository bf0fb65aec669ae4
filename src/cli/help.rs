//! The command line as a person reads it: help and usage errors in the
//! run's language (clap's own words replaced where lab has its own).
use clap::ValueEnum;

use crate::commands::scenarios;
use crate::commands::spec::args::REGRESS_HEADING;
use crate::i18n::{Lang, ui};

/// The Turkish text for a help key: the fixed table, then the catalogue.
fn turkish(key: &str) -> Option<String> {
    if let Some(t) = crate::i18n::help_tr(key) {
        return Some(t.to_string());
    }
    if let Some(name) = key.strip_prefix("cmd.") {
        return scenarios::find(name).map(|s| (s.about)().render(Lang::Tr));
    }
    let rest = key.strip_prefix("arg.")?;
    let (name, id) = rest.split_once('.')?;
    let s = scenarios::find(name)?;
    let o = s.options.as_ref()?;
    o.help_tr.iter().find(|(k, _)| *k == id).map(|(_, t)| t.to_string())
}

/// An option's help with its default, its possible values and its
/// environment variable written out in `lang`'s words (clap's are English).
fn annotate(a: clap::Arg, lang: Lang) -> clap::Arg {
    let mut notes = Vec::new();
    if let Some(env) = a.get_env() {
        notes.push(format!("[{}: {}]", ui::help_env().render(lang), env.to_string_lossy()));
    }
    if a.get_action().takes_values() && !a.get_default_values().is_empty() {
        let d: Vec<String> = a
            .get_default_values()
            .iter()
            .map(|v| v.to_string_lossy().into_owned())
            .collect();
        notes.push(format!("[{}: {}]", ui::help_default().render(lang), d.join(", ")));
    }
    let values: Vec<String> = a
        .get_possible_values()
        .iter()
        .filter(|v| !v.is_hide_set())
        .map(|v| v.get_name().to_string())
        .collect();
    if !values.is_empty() && a.get_action().takes_values() {
        notes.push(format!("[{}: {}]", ui::help_possible().render(lang), values.join(", ")));
    }
    if notes.is_empty() {
        return a;
    }
    let help = a.get_help().map(|h| h.to_string()).unwrap_or_default();
    a.help(format!("{help} {}", notes.join(" ")).trim().to_string())
        .hide_default_value(true)
        .hide_possible_values(true)
        .hide_env(true)
}

pub(super) fn localize(mut cmd: clap::Command, lang: Lang, root: bool) -> clap::Command {
    use clap::{Arg, ArgAction};
    let find = |key: &str| if lang == Lang::Tr { turkish(key) } else { None };
    let name = cmd.get_name().to_string();
    if let Some(t) = find(&format!("cmd.{name}")) {
        cmd = cmd.about(t);
    }
    if let Some(t) = find(&format!("after.{name}")) {
        cmd = cmd.after_help(t);
    }
    let ids: Vec<String> = cmd.get_arguments().map(|a| a.get_id().to_string()).collect();
    for id in ids {
        if let Some(t) = find(&format!("arg.{name}.{id}")).or_else(|| find(&format!("arg.{id}"))) {
            cmd = cmd.mut_arg(&id, |a| a.help(t));
        }
    }
    let say = |t: crate::i18n::Text| t.render(lang);
    cmd = cmd
        .disable_help_flag(true)
        .arg(
            Arg::new("help")
                .short('h')
                .long("help")
                .action(ArgAction::Help)
                .help(say(ui::help_flag())),
        )
        .subcommand_help_heading(say(ui::help_commands()))
        .subcommand_value_name(say(ui::help_command_value()))
        .help_template(format!(
            "{{before-help}}{{about-with-newline}}\n{} {{usage}}\n\n{{all-args}}{{after-help}}",
            say(ui::help_usage())
        ));
    if root {
        cmd = cmd.disable_version_flag(true).arg(
            Arg::new("version")
                .short('V')
                .long("version")
                .action(ArgAction::Version)
                .help(say(ui::version_flag())),
        );
    }
    let options = say(ui::help_options());
    cmd.mut_args(|a| {
        // `--timeout-ms -5` is a bad value, not an unknown option '-5'.
        let a = if a.get_action().takes_values() {
            a.allow_negative_numbers(true)
        } else {
            a
        };
        let a = annotate(a, lang);
        match a.get_help_heading() {
            None => a.help_heading(options.clone()),
            Some(REGRESS_HEADING) => a.help_heading(say(ui::help_regress_options())),
            Some(_) => a,
        }
    })
    .mut_subcommands(|s| localize(s, lang, false))
}

/// `--help` or `--version` as clap renders it (coloured for a terminal), with
/// the usage line's `[OPTIONS]`, clap's own word, in `lang`'s.
pub fn help_output(e: &clap::Error, lang: Lang, terminal: bool) -> String {
    let styled = e.render();
    let text = if crate::output::colour(terminal) {
        styled.ansi().to_string()
    } else {
        styled.to_string()
    };
    let options = format!("[{}]", ui::help_options_value().render(lang));
    text.replace("[OPTIONS]", &options)
}

/// A usage error on one line, in `lang`: the common kinds in our own words
/// (from the error's context), any other in clap's.
pub fn usage_error(e: &clap::Error, lang: Lang, args: &[String], cmd: &clap::Command) -> String {
    use clap::error::{ContextKind, ErrorKind};
    let get = |k: ContextKind| e.get(k).map(|v| v.to_string());
    let arg = get(ContextKind::InvalidArg).unwrap_or_default();
    let text = match e.kind() {
        // A word where none is taken (an option's words start with '-').
        ErrorKind::UnknownArgument if !arg.starts_with('-') => msg::unexpected_arg(arg),
        ErrorKind::UnknownArgument => match before_its_command(&arg, args, cmd) {
            Some(placed) => return placed.render(lang),
            None => msg::unknown_arg(arg),
        },
        ErrorKind::InvalidSubcommand => match get(ContextKind::InvalidSubcommand) {
            Some(command) => msg::unknown_command(command),
            None => return one_line_usage_error(e),
        },
        ErrorKind::InvalidValue | ErrorKind::ValueValidation => {
            let value = get(ContextKind::InvalidValue).unwrap_or_default();
            // Clap lists no possible values as an empty list; no value at
            // all is the option given last, with nothing after it.
            let valid = get(ContextKind::ValidValue).filter(|v| !v.is_empty());
            let none_given = value.is_empty() && e.kind() == ErrorKind::InvalidValue;
            match (none_given, valid) {
                (true, Some(valid)) => msg::needs_value_of(arg, valid),
                (true, None) => msg::needs_value(arg),
                (false, Some(valid)) => msg::invalid_value_of(value, arg, valid),
                (false, None) => msg::invalid_value(value, arg),
            }
        }
        ErrorKind::MissingRequiredArgument => msg::missing(arg),
        ErrorKind::MissingSubcommand => msg::missing_command(),
        ErrorKind::ArgumentConflict => msg::conflict(arg, get(ContextKind::PriorArg).unwrap_or_default()),
        ErrorKind::TooFewValues => match (get(ContextKind::MinValues), get(ContextKind::ActualNumValues)) {
            (Some(min), Some(given)) => msg::too_few(arg, min, given),
            _ => msg::values(arg),
        },
        ErrorKind::NoEquals | ErrorKind::TooManyValues | ErrorKind::WrongNumberOfValues => msg::values(arg),
        _ => return one_line_usage_error(e),
    };
    // Several suggestions read as alternatives: 'list' or 'lost-update'.
    let or = format!("' {} '", msg::or().render(lang));
    let tip = [
        ContextKind::SuggestedArg,
        ContextKind::SuggestedSubcommand,
        ContextKind::SuggestedValue,
    ]
    .into_iter()
    .find_map(|k| e.get(k))
    .map(|v| match v {
        clap::error::ContextValue::Strings(all) => all.join(&or),
        one => one.to_string(),
    });
    match tip {
        Some(t) => format!("{}; {}", text.render(lang), msg::tip(t).render(lang)),
        None => text.render(lang),
    }
}

/// An option of the commands given before any command (`lab --lab-dir D
/// all`): where it belongs, naming the command that follows it when that
/// command takes it. None where the option was not before a command or no
/// command takes it.
fn before_its_command(arg: &str, args: &[String], cmd: &clap::Command) -> Option<crate::i18n::Text> {
    let long = arg.strip_prefix("--")?;
    let names: Vec<&str> = cmd.get_subcommands().map(clap::Command::get_name).collect();
    let options: Vec<(&str, &clap::Arg)> = cmd
        .get_subcommands()
        .filter_map(|s| Some((s.get_name(), s.get_arguments().find(|a| a.get_long() == Some(long))?)))
        .collect();
    let taking: Vec<&str> = options.iter().map(|(name, _)| *name).collect();
    // `--lab-dir D` or `--lab-dir=D`.
    let given = |a: &String| a.strip_prefix(arg).is_some_and(|v| v.is_empty() || v.starts_with('='));
    let at = args.iter().skip(1).position(given)? + 1;
    let value_follows = args[at] == arg;
    if taking.is_empty() || args[1..at].iter().any(|a| names.contains(&a.as_str())) {
        return None;
    }
    // `--variant deadlock all`: the word after an option that takes a value is its value.
    let takes_value = options.first().is_some_and(|(_, a)| a.get_action().takes_values());
    let from = (at + 1 + usize::from(value_follows && takes_value)).min(args.len());
    Some(match args[from..].iter().find(|a| names.contains(&a.as_str())) {
        Some(c) if taking.contains(&c.as_str()) => msg::after_the_command(arg, c),
        _ => {
            let mut some: Vec<&str> = taking.iter().copied().take(3).collect();
            if taking.len() > 3 {
                some.push("...");
            }
            msg::after_a_command(arg, some.join(", "))
        }
    })
}

/// Clap's message without its usage block, on one line.
pub fn one_line_usage_error(e: &clap::Error) -> String {
    let text = e.render().to_string();
    text.lines()
        .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more information"))
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
        .trim_start_matches("error: ")
        .to_string()
}

/// The text of a usage error line: `<error> (see lab --help)`.
pub fn usage_line(e: &clap::Error, lang: Lang, args: &[String], cmd: &clap::Command) -> String {
    msg::usage(usage_error(e, lang, args, cmd)).render(lang)
}

/// The language of a command line clap could not parse: its `--lang`, if it
/// has a readable one, else the environment's.
pub fn language_of_args(args: &[String], env: &dyn Fn(&str) -> Option<String>) -> Lang {
    let given = args
        .iter()
        .enumerate()
        .find_map(|(i, a)| match a.strip_prefix("--lang") {
            Some("") => args.get(i + 1).cloned(),
            Some(v) => v.strip_prefix('=').map(str::to_string),
            None => None,
        });
    given
        .and_then(|v| Lang::from_str(&v, true).ok())
        .unwrap_or_else(|| Lang::from_env(env))
}

/// `--color WHEN` in `args`, read before they are parsed (help is coloured
/// as it says); auto when it is not there or names nothing.
pub fn color_of_args(args: &[String]) -> crate::output::ColorWhen {
    use crate::output::ColorWhen;
    args.iter()
        .take_while(|a| *a != "--")
        .enumerate()
        .filter_map(|(i, a)| match a.strip_prefix("--color") {
            Some("") => args.get(i + 1).cloned(),
            Some(v) => v.strip_prefix('=').map(str::to_string),
            None => None,
        })
        .last()
        .and_then(|v| <ColorWhen as clap::ValueEnum>::from_str(&v, true).ok())
        .unwrap_or_default()
}

pub mod msg {
    crate::messages! {
        prefix "us";
        usage(error) {
            en: "{error} (see lab --help)",
            tr: "{error} (bkz. lab --help)",
        }
        unknown_arg(arg) {
            en: "unknown option '{arg}'",
            tr: "bilinmeyen seçenek '{arg}'",
        }
        after_the_command(arg, command) {
            en: "'{arg}' is an option of the command: put it after it (lab {command} {arg} ...)",
            tr: "'{arg}' komutun bir seçeneği: komuttan sonra yazın (lab {command} {arg} ...)",
        }
        after_a_command(arg, commands) {
            en: "'{arg}' is an option of the commands ({commands}), not of lab: put it after one (lab COMMAND {arg} ...)",
            tr: "'{arg}' lab'ın değil, komutların seçeneği ({commands}): bir komuttan sonra yazın (lab KOMUT {arg} ...)",
        }
        unexpected_arg(arg) {
            en: "unexpected argument '{arg}'",
            tr: "beklenmeyen argüman '{arg}'",
        }
        needs_value(arg) {
            en: "'{arg}' needs a value",
            tr: "'{arg}' bir değer ister",
        }
        needs_value_of(arg, valid) {
            en: "'{arg}' needs a value (possible values: {valid})",
            tr: "'{arg}' bir değer ister (olası değerler: {valid})",
        }
        unknown_command(command) {
            en: "unknown command '{command}'",
            tr: "bilinmeyen komut '{command}'",
        }
        invalid_value(value, arg) {
            en: "invalid value '{value}' for '{arg}'",
            tr: "'{arg}' için geçersiz değer '{value}'",
        }
        invalid_value_of(value, arg, valid) {
            en: "invalid value '{value}' for '{arg}' (possible values: {valid})",
            tr: "'{arg}' için geçersiz değer '{value}' (olası değerler: {valid})",
        }
        missing(arg) {
            en: "'{arg}' is required",
            tr: "'{arg}' gerekli",
        }
        conflict(arg, other) {
            en: "'{arg}' cannot be used with '{other}'",
            tr: "'{arg}', '{other}' ile birlikte kullanılamaz",
        }
        values(arg) {
            en: "wrong number of values for '{arg}'",
            tr: "'{arg}' için yanlış sayıda değer",
        }
        too_few(arg, min, given) {
            en: "'{arg}' takes at least {min} values ({given} given)",
            tr: "'{arg}' en az {min} değer alır ({given} verildi)",
        }
        or() {
            en: "or",
            tr: "ya da",
        }
        tip(suggestion) {
            en: "did you mean '{suggestion}'?",
            tr: "'{suggestion}' mi demek istediniz?",
        }
        missing_command() {
            en: "a command is required",
            tr: "bir komut gerekli",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::ColorWhen;

    #[test]
    fn color_is_read_before_the_arguments_are_parsed() {
        let args = |a: &str| -> Vec<String> { a.split(' ').map(str::to_string).collect() };
        assert_eq!(color_of_args(&args("lab list")), ColorWhen::Auto);
        assert_eq!(color_of_args(&args("lab --color always list")), ColorWhen::Always);
        assert_eq!(color_of_args(&args("lab list --color=NEVER --help")), ColorWhen::Never);
        // The last one given wins; a bad value or one after -- is not read.
        assert_eq!(
            color_of_args(&args("lab --color never all --color always")),
            ColorWhen::Always
        );
        assert_eq!(color_of_args(&args("lab --color sometimes")), ColorWhen::Auto);
        assert_eq!(color_of_args(&args("lab spec -- --color always")), ColorWhen::Auto);
    }
}
