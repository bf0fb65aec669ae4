//! `lab phenomena`'s report: the matrix as measured, cell by cell (a run
//! stopped part-way keeps the cells it measured and says where it stopped).
use serde::{Serialize, Serializer};

use super::Entry;
use crate::i18n::Arg;

/// The four levels, as JSON names them and as `SET default_transaction_isolation` takes them.
pub const LEVELS: [(&str, &str); 4] = [
    ("read-uncommitted", "read uncommitted"),
    ("read-committed", "read committed"),
    ("repeatable-read", "repeatable read"),
    ("serializable", "serializable"),
];

/// The matrix of one run.
#[derive(Debug, Clone, Serialize)]
pub struct MatrixReport {
    pub server_version: String,
    pub as_expected: bool,
    /// The run's wall time (not for a run stopped part-way).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub elapsed_ms: Option<f64>,
    /// The levels measured, in LEVELS order, as JSON names them.
    pub levels: Vec<String>,
    pub phenomena: Vec<Row>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<MatrixError>,
}

/// One phenomenon's row: a cell per level, none where it was not measured.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub id: String,
    /// Its English name (JSON's).
    pub name: String,
    /// Its name and what it is, in the language they are shown in.
    #[serde(skip)]
    pub title: Arg,
    #[serde(skip)]
    pub what: Arg,
    /// (level, cell) in the run's level order (a level is its index in
    /// [`LEVELS`]); JSON has the measured ones as a map by level.
    #[serde(serialize_with = "measured")]
    pub cells: Vec<(usize, Option<Cell>)>,
}

/// Where a run stopped part-way: the first cell with no result, or the
/// phenomenon whose interleavings were not all counted.
#[derive(Debug, Clone, Serialize)]
pub struct MatrixError {
    pub phenomenon: Option<String>,
    pub level: Option<String>,
    pub message: String,
    pub exit_code: u8,
}

fn measured<S: Serializer>(cells: &[(usize, Option<Cell>)], s: S) -> Result<S::Ok, S::Error> {
    s.collect_map(cells.iter().filter_map(|(l, c)| Some((LEVELS[*l].0, c.as_ref()?))))
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Expected {
    pub verdict: Verdict,
    /// How it is prevented, when the documentation says.
    pub how: Option<How>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Occurs,
    Prevented,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum How {
    /// A step waited for another session (who for whom is in the cell).
    Blocked,
    /// A step failed with a serialization failure or a deadlock.
    Aborted,
    /// No wait, no error: the transaction's snapshot did not see it.
    Snapshot,
    /// The anomaly occurred.
    None,
}

/// One cell: a phenomenon at a level, as the server decided it.
#[derive(Debug, Clone, Serialize)]
pub struct Cell {
    pub verdict: Verdict,
    pub how: How,
    pub sqlstate: Option<String>,
    pub at_step: Option<String>,
    /// The sessions the waiting step waited for, for a cell prevented by blocking.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waited_for: Option<Vec<String>>,
    pub expected: Expected,
    pub as_expected: bool,
    /// The levels the transactions read back, when one of them is not the
    /// cell's: the cell then measured something else, and is not as documented.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wrong_level: Option<String>,
    /// `--all-interleavings`: every interleaving of the cell's steps counted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interleavings: Option<Interleavings>,
    pub timeline: Vec<Entry>,
    /// How long the cell took, schema to schema (JUnit's and HTML's times).
    #[serde(skip)]
    pub elapsed_ms: f64,
}

/// A cell's interleavings: how many ran, and how many showed the anomaly,
/// waited, aborted, or could not go on.
#[derive(Debug, Clone, Serialize)]
pub struct Interleavings {
    pub runs: usize,
    pub occur: usize,
    pub blocked: usize,
    pub aborted: usize,
    /// Interleavings that could not run as written (a step cut at a dead end).
    pub dead_ends: usize,
    /// Interleavings with a step cancelled at its deadline.
    pub stuck: usize,
    /// Whether the count agrees with the documentation (`# expect-all:`,
    /// else `# expect:`): some interleaving shows an anomaly that occurs,
    /// none one that is prevented.
    pub as_expected: bool,
}

impl Row {
    /// The cells measured, with their levels.
    pub fn measured(&self) -> impl Iterator<Item = (usize, &Cell)> {
        self.cells.iter().filter_map(|(l, c)| Some((*l, c.as_ref()?)))
    }
}

impl MatrixReport {
    /// Every cell measured, row by row.
    pub fn cells(&self) -> impl Iterator<Item = &Cell> {
        self.phenomena.iter().flat_map(|r| r.measured().map(|(_, c)| c))
    }
}
