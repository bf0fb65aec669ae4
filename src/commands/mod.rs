//! The commands, one module each: its arguments (`args`), its checked
//! configuration (`config`), its run (`job`) and its domain, side by side.
pub mod compare;
pub mod completions;
pub mod explore;
pub mod hunt;
pub mod locks;
pub mod man;
pub mod phenomena;
pub mod scenarios;
pub mod server;
pub mod shell;
pub mod spec;
