//! `lab explore`'s report: per level, its runs counted and grouped into
//! classes (runs with the same signature), each with its representative;
//! every run, with its class. Texts are message keys with their values:
//! the renderer puts them into words (JSON always in English).
use serde::{Serialize, Serializer};

use super::Entry;
pub use super::Stopped;
use crate::i18n::{Lang, Text};

/// One `lab explore` run.
#[derive(Debug, Clone, Serialize)]
pub struct ExploreReport {
    pub spec: String,
    /// The level(s) the spec names for every statement, when it does.
    pub own_level: Option<String>,
    pub schemas_remade: usize,
    pub server_version: String,
    pub as_expected: bool,
    pub elapsed_ms: f64,
    pub levels: Vec<LevelReport>,
    pub runs: Vec<RunLine>,
    /// How each session's connection is made, by session name (TLS or
    /// not, its version, cipher, the certificate's subject and what was
    /// checked): from each session's own handshake.
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub sessions: std::collections::BTreeMap<String, super::Connection>,
    /// Why a run cut short stopped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<Stopped>,
    /// What the table's head says.
    #[serde(skip)]
    pub heading: Heading,
}

/// The table's head: the spec's size, and what changed how it ran.
#[derive(Debug, Clone, Default)]
pub struct Heading {
    /// The most permutations of a level.
    pub permutations: usize,
    pub levels: usize,
    pub runs: usize,
    /// `--sample N --seed S` of so many.
    pub sampled: Option<(usize, String, u64)>,
    /// Why the runs went one at a time.
    pub alone: Option<Text>,
    /// Whether the spec says what an anomaly is (`# occurs-if:`): the anomaly column.
    pub judged: bool,
}

/// One level's runs.
#[derive(Debug, Clone, Serialize)]
pub struct LevelReport {
    /// Its JSON name (none: the spec's own level).
    pub level: Option<String>,
    /// How the text names it.
    #[serde(skip)]
    pub name: Text,
    /// How many permutations there were (before --sample): a number where JSON's can hold it.
    #[serde(serialize_with = "big")]
    pub permutations: u128,
    pub tally: Tally,
    /// The levels the transactions read back, when one is not the level asked.
    pub own_level: Option<String>,
    /// As documented (`# expect:`), when the spec says.
    pub as_expected: Option<bool>,
    /// The levels whose `# expect:` the runs were held to.
    pub judged_at: Vec<String>,
    pub summary: Summary,
    pub classes: Vec<ClassReport>,
    /// What `# expect:` documents for the level's runs (JUnit's expectation).
    #[serde(skip)]
    pub expected: Option<Text>,
    /// The level's runs' own time, added up.
    #[serde(skip)]
    pub elapsed_ms: f64,
    /// One of its classes holds the spec's own permutation.
    #[serde(skip)]
    pub marked: bool,
}

/// A level's one-line summary: its parts (joined with ", "), the level
/// read back, and the verdict against `# expect:`.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    pub parts: Vec<Text>,
    pub own: Option<Text>,
    pub verdict: Option<Text>,
}

impl Summary {
    pub fn render(&self, lang: Lang) -> String {
        let mut line = self.parts.iter().map(|t| t.render(lang)).collect::<Vec<_>>().join(", ");
        if let Some(own) = &self.own {
            line.push_str(&format!(" ({})", own.render(lang)));
        }
        if let Some(v) = &self.verdict {
            line.push_str(&format!(" [{}]", v.render(lang)));
        }
        line
    }
}

impl Serialize for Summary {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.render(Lang::En))
    }
}

/// Runs with the same signature.
#[derive(Debug, Clone, Serialize)]
pub struct ClassReport {
    /// Its number (1: the largest).
    pub class: usize,
    pub runs: usize,
    /// How many of its permutations run one session after another.
    pub serial: usize,
    pub what: What,
    /// Its first run's permutation.
    pub representative: String,
    /// It holds the spec's own permutation.
    pub marked: bool,
    pub signature: Signature,
    /// The representative's timeline (the HTML's swimlanes) and time.
    #[serde(skip)]
    pub timeline: Vec<Entry>,
    #[serde(skip)]
    pub elapsed_ms: f64,
}

/// What happened in a class's runs, a phrase each (joined with "; ").
#[derive(Debug, Clone, Default)]
pub struct What(pub Vec<Text>);

impl What {
    pub fn render(&self, lang: Lang) -> String {
        self.0.iter().map(|t| t.render(lang)).collect::<Vec<_>>().join("; ")
    }
}

impl Serialize for What {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.render(Lang::En))
    }
}

/// One run: its level, the levels its transactions read back, its permutation, its class.
#[derive(Debug, Clone, Serialize)]
pub struct RunLine {
    pub level: Option<String>,
    pub ran_at: Vec<String>,
    pub permutation: String,
    pub class: Option<usize>,
    pub signature: Option<Signature>,
    pub elapsed_ms: f64,
}

fn big<S: Serializer>(n: &u128, s: S) -> Result<S::Ok, S::Error> {
    match u64::try_from(*n) {
        Ok(n) => s.serialize_u64(n),
        Err(_) => s.serialize_str(&n.to_string()),
    }
}

/// How a step ended.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case", tag = "ended", content = "sqlstate")]
pub enum Ended {
    Ok,
    /// A COMMIT that answered ROLLBACK: its transaction had failed.
    RolledBack,
    /// An error with this SQLSTATE ("" when the connection went without one).
    Error(String),
    /// Waiting only for sessions whose next step comes after its own:
    /// nothing could end the wait, so lab cancelled it at once.
    DeadEnd,
    /// Still running at its deadline: lab cancelled it.
    Stuck,
}

/// One step of a run, as the signature keeps it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct StepOutcome {
    pub step: String,
    /// The sessions the server said it waited for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waited_for: Option<Vec<String>>,
    #[serde(flatten)]
    pub ended: Ended,
    /// What a final read returned (`col=value, ...`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rows: Option<String>,
    /// The step is a COMMIT (a function of the step: it groups nothing).
    #[serde(skip)]
    pub commit: bool,
}

/// What happened in one run, whatever order its steps ran in.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Signature {
    /// Whether the anomaly occurred (specs with `# occurs-if:`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub anomaly: Option<bool>,
    /// Every step, in the order the spec declares them.
    pub steps: Vec<StepOutcome>,
}

/// A level's runs counted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Tally {
    pub runs: usize,
    /// Runs showing the anomaly (specs with `# occurs-if:`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub anomaly: Option<usize>,
    pub blocked: usize,
    pub aborted: usize,
    pub failed: usize,
    /// Runs with a step cut at a dead end.
    pub dead_ends: usize,
    /// Runs with a step cancelled at its deadline.
    pub stuck: usize,
    pub serial: usize,
    pub classes: usize,
    /// The aborted runs by SQLSTATE and by whether the abort came at
    /// COMMIT (the first abort of each run).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub aborts: Vec<Aborts>,
}

/// Aborted runs of one kind.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Aborts {
    pub sqlstate: String,
    pub at_commit: bool,
    pub runs: usize,
}
