//! `lab hunt`: generated list-append (or rw-register) transactions on real sessions, their
//! history checked for anomalies (Elle's method), and a spec that replays
//! each one.
pub mod anomaly;
pub mod args;
mod blocks;
pub mod chaos;
pub mod check;
pub mod config;
pub mod cycles;
pub mod durability;
pub mod edges;
pub mod edn;
mod elle;
pub mod explain;
pub mod graph;
pub mod history;
pub mod jepsen;
pub mod job;
mod keys;
pub mod models;
pub mod msg;
pub mod nemesis;
pub mod register;
pub mod reproduce;
pub mod versions;
pub mod workload;
