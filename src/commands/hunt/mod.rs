//! `lab hunt`: generated list-append transactions on real sessions, their
//! history checked for anomalies (Elle's method), and a spec that replays
//! each one.
pub mod args;
pub mod check;
pub mod config;
pub mod edn;
pub mod graph;
pub mod history;
pub mod job;
pub mod msg;
pub mod reproduce;
pub mod workload;
