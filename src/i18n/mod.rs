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

/// Every message block lab declares.
pub fn all_messages() -> Vec<&'static [Def]> {
    MESSAGE_BLOCKS.iter().copied().collect()
}
