//! Where the server comes from: a throwaway cluster lab starts, or the one
//! the user names. Nothing here knows a scenario.
pub mod auth;
pub mod cluster;
pub mod connect;
pub mod conninfo;
pub mod faults;
pub mod libpq;
pub mod netns;
pub mod patroni;
pub mod pgbouncer;
pub mod pgpool;
pub mod sidecar;
pub mod stopped;
pub mod tls;
pub mod watchdog;

pub use conninfo::{ConnInfo, RunOn};
