//! One integration-test binary. Every test runs against a real PostgreSQL
//! started by the same throwaway-cluster code the CLI uses.

/// Helpers: running the `lab` binary, a test cluster, JSON access.
mod support;

/// Bad input and failures: exit code 2, one line, nothing left behind.
mod cli;

/// Each scenario's variants: verdicts and metrics, as `lab --format json` reports them.
mod scenarios;

/// Runs against an existing server: isolation between runs, cleanup, foreign schemas.
mod server;

/// The retry policy against a real server: which codes retry, attempt limits.
mod retry;

/// Faults: servers that are not PostgreSQL, missing privileges, killed
/// backends, Ctrl-C and SIGKILL mid-scenario, concurrent runs.
mod faults;

/// Setups a smoke check meets: a standby, hostile role defaults, libpq's
/// password and service files, an empty URL, errors that say where.
mod setups;

/// PostgreSQL's isolationtester runs every spec under lab/ unchanged, and
/// lab observes the order of waits, completions and errors it prints.
mod oracle;

/// `lab spec`: PostgreSQL's isolation suite byte for byte against its own
/// harness; lab's specs; bad input; the deadline; JSON and JUnit.
mod spec;

/// `--baseline`: a run compared with an earlier run's JSON.
mod baseline;

/// `lab phenomena`: the anomaly matrix, measured and as documented.
mod phenomena;

/// `lab explore`: every interleaving, grouped; isolationtester's runs byte
/// for byte; class counts; mutations that move runs between classes.
mod explore;

/// `lab hunt`: anomalies found in generated transactions, their reproducers
/// replayed by lab and isolationtester, histories checked without a server.
mod hunt;

/// Mutations: a mechanism broken in an edited copy of a lab file (--lab-dir)
/// gives a "not as documented" verdict, exit 1, never a hang.
mod mutations;

/// Contracts: the JSON in every language, README.md and docs/*.md against
/// what lab prints, every scenario registered everywhere.
mod contract;

/// Texts: both languages complete, every step says why, no sentence outside a
/// message declaration.
mod texts;

/// `lab http-etag`'s API on its own: malformed preconditions, clients that
/// go away mid-request, a port in use.
mod http;

/// `--html`: the report in a real browser (headless Chromium).
mod report;

/// Snapshots of every text renderer from hand-made reports, in both languages.
mod snapshots;

/// `lab shell` in a pseudo-terminal: live waits, Ctrl-C, deadlocks, guesses,
/// a saved spec replayed by lab and isolationtester.
mod shell;
/// Workshop mode: --step in a pseudo-terminal, --explain, both languages, colour, lab locks, completions.
mod workshop;

/// The crate's modules depend on each other one way (read from the source).
mod layers;

/// The network failing under a run (lab's fault proxy): black hole, reset,
/// delay of one session's connection, at a confirmed wait and mid-statement.
mod network;

/// TLS and libpq's connection settings, psql (libpq) as the oracle.
mod tls;

/// `lab failover` on lab's own HA cluster (Patroni, etcd, three nodes).
mod failover;

/// What a CI relies on: --require, what every JSON says about itself, JUnit's times.
mod ci;
