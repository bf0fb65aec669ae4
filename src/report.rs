//! What a run produced, as plain serialisable data. Nothing here formats.
use serde::Serialize;
use serde_json::{Map, Value};

/// How a timeline entry ended. `waiting` is recorded when the server confirmed
/// the session waits on a lock; `completed` when such a step later returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StepResult {
    Ok,
    Waiting,
    Completed,
    Error,
    /// A line of narrative from the session's own logic (a decision, a back-off).
    Note,
}

#[derive(Debug, Clone, Serialize)]
pub struct Entry {
    pub t_ms: f64,
    pub session: String,
    pub sql: String,
    pub result: StepResult,
    pub sqlstate: Option<String>,
    pub detail: String,
}

/// A small table of evidence (rows from pg_locks, audit rows, conflict values...).
#[derive(Debug, Clone, Serialize)]
pub struct Evidence {
    pub title: String,
    pub columns: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

#[derive(Debug, Clone, Serialize)]
pub struct VariantReport {
    pub name: String,
    pub as_expected: bool,
    pub anomaly: bool,
    pub expected: String,
    pub observed: String,
    pub elapsed_ms: f64,
    /// Every SQLSTATE raised in the variant, in order.
    pub sqlstates: Vec<String>,
    pub metrics: Map<String, Value>,
    pub timeline: Vec<Entry>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<Evidence>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ScenarioReport {
    pub scenario: String,
    pub server_version: String,
    pub as_expected: bool,
    pub elapsed_ms: f64,
    pub variants: Vec<VariantReport>,
}

#[derive(Debug, Clone, Serialize)]
pub struct AllReport {
    pub server_version: String,
    pub as_expected: bool,
    pub elapsed_ms: f64,
    pub scenarios: Vec<ScenarioReport>,
}

pub fn round_ms(ms: f64) -> f64 {
    (ms * 10.0).round() / 10.0
}
