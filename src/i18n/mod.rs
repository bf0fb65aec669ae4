//! Every human-facing text of lab's own, in English and Turkish. Scenario
//! texts are declared in each scenario's module, next to its verdicts;
//! lab's other messages next to the code that says them, with
//! [`messages!`](crate::messages). Only renderers and the error printer turn
//! them into words.
mod help;
mod lang;
mod text;
pub mod ui;

pub use help::HELP_TR;
pub use lang::Lang;
pub use text::{Appended, Arg, Context, Def, Framed, Text, check_defs, closed_because, error_line, fill, placeholders};

#[doc(hidden)]
pub use linkme;

/// Every `messages!` block, each registered where it is declared: no list to keep.
#[linkme::distributed_slice]
pub static MESSAGE_BLOCKS: [&'static [Def]];

/// Every `help_tr!` block: a command's Turkish help, beside its arguments.
#[linkme::distributed_slice]
pub static HELP_BLOCKS: [&'static [(&'static str, &'static str)]];

/// The Turkish help for a key (`cmd.<command>`, `after.<command>`,
/// `arg.<command>.<id>`, `arg.<id>`): lab's own table, then the commands'.
pub fn help_tr(key: &str) -> Option<&'static str> {
    HELP_TR
        .iter()
        .chain(HELP_BLOCKS.iter().flat_map(|b| b.iter()))
        .find(|(k, _)| *k == key)
        .map(|(_, t)| *t)
}

/// Declares a command's Turkish help beside its arguments: `(key, text)`
/// pairs, registered where they are declared (see [`help_tr`]).
#[macro_export]
macro_rules! help_tr {
    ($( ($key:literal, $text:literal) ),* $(,)?) => {
        #[$crate::i18n::linkme::distributed_slice($crate::i18n::HELP_BLOCKS)]
        #[linkme(crate = $crate::i18n::linkme)]
        static HELP_TR_HERE: &[(&str, &str)] = &[$(($key, $text)),*];
    };
}

/// Every message block lab declares.
pub fn all_messages() -> Vec<&'static [Def]> {
    MESSAGE_BLOCKS.iter().copied().collect()
}
