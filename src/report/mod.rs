//! What a run produced, as plain data. Nothing here formats a sentence:
//! texts are [`Text`]s (a message key with its values) that the renderers
//! put into words; machine outputs (JSON, JUnit) always use English, so they
//! are the same whatever `--lang` says.
pub mod explore;
pub mod hunt;
pub mod phenomena;

use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

use crate::i18n::{Lang, Text};

/// A cycle of transactions, drawn beside their swimlanes (`lab hunt`):
/// its nodes in order, and edges (from, to, label) by node position.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CycleFigure {
    pub nodes: Vec<String>,
    pub edges: Vec<(usize, usize, String)>,
}

/// A piece of text that is either a translated message or something quoted
/// as it is (SQL, values, what the server said).
#[derive(Debug, Clone, PartialEq)]
pub enum Phrase {
    Plain(String),
    Text(Text),
}

impl Phrase {
    pub fn render(&self, lang: Lang) -> String {
        match self {
            Phrase::Plain(s) => s.clone(),
            Phrase::Text(t) => t.render(lang),
        }
    }
}

impl Serialize for Phrase {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.render(Lang::En))
    }
}

impl From<&str> for Phrase {
    fn from(v: &str) -> Phrase {
        Phrase::Plain(v.to_string())
    }
}

impl From<String> for Phrase {
    fn from(v: String) -> Phrase {
        Phrase::Plain(v)
    }
}

impl From<Text> for Phrase {
    fn from(v: Text) -> Phrase {
        Phrase::Text(v)
    }
}

/// How a timeline entry ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StepResult {
    /// Answered without waiting.
    Ok,
    /// The server confirmed the session waits (on a lock, a safe snapshot, a standby).
    Waiting,
    /// A step that waited returned.
    Completed,
    /// The server answered with an error (or the connection went).
    Error,
    /// A decision of the session's own logic, or lab's narration.
    Note,
    /// A NOTICE the server sent the session.
    Notice,
}

/// What a waiting step waits on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum WaitKind {
    /// A heavyweight lock (`pg_blocking_pids`).
    Lock,
    /// A safe snapshot (SERIALIZABLE READ ONLY DEFERRABLE: `pg_safe_snapshot_blocking_pids`).
    SafeSnapshot,
    /// A synchronous standby (`wait_event` = SyncRep).
    SyncRep,
    /// A server connection from a pooler (PgBouncer's SHOW POOLS: cl_waiting).
    Pooler,
    /// Shown as waiting because the spec says so (`(*)` or a blocker annotation).
    Annotation,
    /// Not seen while it lasted; the server's error says it waited (40P01's DETAIL, 55P03).
    ServerError,
}

/// Rows a statement returned.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ResultSet {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Option<String>>>,
}

impl ResultSet {
    pub fn get(&self, row: usize, col: &str) -> Option<&str> {
        let i = self.columns.iter().position(|c| c == col)?;
        self.rows.get(row)?.get(i)?.as_deref()
    }

    /// `col=value, ...` for up to four rows, `(0 rows)` for none; one column
    /// over several rows (EXPLAIN) as its lines.
    pub fn describe(&self) -> String {
        if self.rows.is_empty() {
            return "(0 rows)".into();
        }
        if self.columns.len() == 1 && self.rows.len() > 1 {
            return self
                .rows
                .iter()
                .map(|r| r[0].as_deref().unwrap_or("NULL"))
                .collect::<Vec<_>>()
                .join("\n");
        }
        let shown: Vec<String> = self
            .rows
            .iter()
            .take(4)
            .map(|r| {
                self.columns
                    .iter()
                    .zip(r)
                    .map(|(c, v)| format!("{c}={}", v.as_deref().unwrap_or("NULL")))
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .collect();
        let more = if self.rows.len() > 4 {
            format!(" (+{} more)", self.rows.len() - 4)
        } else {
            String::new()
        };
        format!("{}{more}", shown.join("; "))
    }
}

/// One row of the timeline: one step of one session, or a note.
#[derive(Debug, Clone, Serialize)]
pub struct Entry {
    pub t_ms: f64,
    pub session: String,
    /// The spec's (or SQL file's) name for the step.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<String>,
    pub sql: String,
    pub result: StepResult,
    pub sqlstate: Option<String>,
    /// The command tag or values, the server's error, or the note.
    pub detail: Phrase,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocked_by: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wait: Option<WaitKind>,
    /// The lock the step waits for, as pg_locks names it ("ShareLock on transaction").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lock: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waited_ms: Option<f64>,
    /// The isolation level the transaction this step began runs under, read back from the server.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub isolation: Option<String>,
    /// Lab cancelled the statement (every session was waiting, or its deadline passed).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub cancelled_by_lab: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub results: Vec<ResultSet>,
}

impl Entry {
    pub fn new(t_ms: f64, session: &str, result: StepResult, detail: Phrase) -> Entry {
        Entry {
            t_ms,
            session: session.to_string(),
            step: None,
            sql: String::new(),
            result,
            sqlstate: None,
            detail,
            blocked_by: None,
            wait: None,
            lock: None,
            waited_ms: None,
            isolation: None,
            cancelled_by_lab: false,
            results: Vec::new(),
        }
    }
}

/// A small table of evidence (rows from pg_locks, audit rows, conflict values...).
#[derive(Debug, Clone, Serialize)]
pub struct Evidence {
    pub title: Phrase,
    pub columns: Vec<Phrase>,
    pub rows: Vec<Vec<Phrase>>,
}

/// One documented expectation and whether it held.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    /// The message key: stable, for a pipeline that asserts on one check.
    pub id: String,
    pub ok: bool,
    pub text: Text,
}

#[derive(Debug, Clone, Serialize)]
pub struct VariantReport {
    pub name: String,
    pub as_expected: bool,
    /// Whether the variant showed its anomaly; none where nothing says
    /// what the anomaly is (a spec without `# occurs-if:`).
    pub anomaly: Option<bool>,
    pub expected: Text,
    /// What happens and why, and the fix (shown with --explain; not in JSON).
    #[serde(skip)]
    pub explain: Text,
    #[serde(serialize_with = "joined")]
    pub observed: Vec<Text>,
    pub checks: Vec<Check>,
    pub elapsed_ms: f64,
    /// Every SQLSTATE raised in the variant, in order.
    pub sqlstates: Vec<String>,
    pub metrics: Map<String, Value>,
    pub timeline: Vec<Entry>,
    /// Why the variant did not run (a server too old for it, a program
    /// missing): JSON says `"skipped": true` and the reason in `skip_reason`.
    #[serde(flatten, serialize_with = "skip_fields")]
    pub skipped: Option<Text>,
    /// Behind lab's transaction pooler (`--pooler`) the variant's checks
    /// failed in the way a transaction pooler is documented to change it:
    /// why. The failed checks stay in `checks`; the verdict counts as documented.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pooler_differs: Option<Text>,
    /// An output compared with an expected file and found to differ: the
    /// diff (`diff -U3`, as the terminal shows it after the table).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<Text>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<Evidence>,
    /// Each worker's spans of work (from, to: ms since the variant began),
    /// for a Gantt chart: the pools' batches.
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub spans: std::collections::BTreeMap<String, Vec<[f64; 2]>>,
    /// A cycle of transactions to draw before the swimlanes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cycle: Option<CycleFigure>,
    /// How each session's connection is made, by session name (TLS or
    /// not, its version, cipher, the certificate's subject and what was
    /// checked): from each session's own handshake.
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub sessions: std::collections::BTreeMap<String, Connection>,
    /// How a person reads `name`, where it is one of lab's own words
    /// ("expected output"); `name` stays the same in every language (JSON, JUnit).
    #[serde(skip)]
    pub label: Option<Text>,
    /// What a matrix shows for the variant, a line each, where the
    /// variant is a matrix cell (the phenomena's: "✓ blocked").
    #[serde(skip)]
    pub cell: Vec<Text>,
}

/// How a connection is made: plaintext (`"tls": false`), or TLS with
/// what its handshake gave.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Connection {
    pub tls: bool,
    #[serde(flatten)]
    pub facts: Option<crate::postgres::tls::Facts>,
}

impl Connection {
    pub fn of(facts: Option<crate::postgres::tls::Facts>) -> Connection {
        Connection {
            tls: facts.is_some(),
            facts,
        }
    }
}

impl ScenarioReport {
    /// The same, on the server a run's environment reached (its version,
    /// and how the control connection is made).
    pub fn on(scenario: &str, server: &crate::postgres::connect::ServerInfo) -> ScenarioReport {
        ScenarioReport {
            connection: Some(Connection::of(server.tls.clone())),
            ..ScenarioReport::new(scenario, &server.version)
        }
    }
}

impl VariantReport {
    /// The one constructor: a variant as documented so far, with nothing observed yet.
    pub fn new(name: impl Into<String>, expected: Text, explain: Text) -> VariantReport {
        VariantReport {
            name: name.into(),
            as_expected: true,
            anomaly: Some(false),
            expected,
            explain,
            observed: Vec::new(),
            checks: Vec::new(),
            elapsed_ms: 0.0,
            sqlstates: Vec::new(),
            metrics: Map::new(),
            timeline: Vec::new(),
            skipped: None,
            pooler_differs: None,
            diff: None,
            cell: Vec::new(),
            notes: Vec::new(),
            evidence: Vec::new(),
            spans: Default::default(),
            cycle: None,
            sessions: Default::default(),
            label: None,
        }
    }

    /// A variant named by one of lab's own texts: `name` is its English.
    pub fn named(label: Text, expected: Text, explain: Text) -> VariantReport {
        VariantReport {
            label: Some(label.clone()),
            ..VariantReport::new(label.render(Lang::En), expected, explain)
        }
    }

    /// The variant's name as a person reads it in `lang`.
    pub fn shown_name(&self, lang: Lang) -> String {
        self.label
            .as_ref()
            .map_or_else(|| self.name.clone(), |l| l.render(lang))
    }

    /// The observed outcome as one line in `lang`.
    pub fn observed_line(&self, lang: Lang) -> String {
        join(&self.observed, lang)
    }

    pub fn failed(&self) -> impl Iterator<Item = &Check> {
        self.checks.iter().filter(|c| !c.ok)
    }

    /// The failed checks a person is shown beside the expected outcome, in
    /// `lang`: one that says no more than the expectation (the expected
    /// output's "the output is byte for byte F") is left out.
    pub fn failed_beside_expected(&self, lang: Lang) -> Vec<String> {
        let expected = self.expected.render(lang);
        self.failed()
            .map(|c| c.text.render(lang))
            .filter(|t| *t != expected)
            .collect()
    }
}

/// Every SQLSTATE a timeline's steps failed with, in order.
pub fn sqlstates_of(timeline: &[Entry]) -> Vec<String> {
    timeline
        .iter()
        .filter(|e| e.result == StepResult::Error)
        .filter_map(|e| e.sqlstate.clone())
        .collect()
}

pub fn join(texts: &[Text], lang: Lang) -> String {
    texts.iter().map(|t| t.render(lang)).collect::<Vec<_>>().join("; ")
}

/// `"skipped": true|false`, and `"skip_reason"` when it is.
fn skip_fields<S: Serializer>(reason: &Option<Text>, s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut m = s.serialize_map(None)?;
    m.serialize_entry("skipped", &reason.is_some())?;
    if let Some(r) = reason {
        m.serialize_entry("skip_reason", r)?;
    }
    m.end()
}

fn joined<S: Serializer>(texts: &[Text], s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&join(texts, Lang::En))
}

#[derive(Debug, Clone, Serialize)]
pub struct ScenarioReport {
    pub scenario: String,
    pub server_version: String,
    pub as_expected: bool,
    pub elapsed_ms: f64,
    pub variants: Vec<VariantReport>,
    /// Why the run stopped in this scenario (exit 2 or 130): the variants
    /// that finished before are kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<RunError>,
    /// How lab's control connection reached the server (TLS or not): the
    /// sessions' own are in each variant's `sessions`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connection: Option<Connection>,
    /// What a reader calls it, where that is not its id (a phenomenon's
    /// `# name:`, in either language): the HTML page heads its row and section with it.
    #[serde(skip)]
    pub title: Option<crate::i18n::Arg>,
}

impl ScenarioReport {
    /// The one constructor: a scenario (or spec, or phenomenon) with no variant run yet.
    pub fn new(scenario: &str, server_version: &str) -> ScenarioReport {
        ScenarioReport {
            scenario: scenario.to_string(),
            server_version: server_version.to_string(),
            as_expected: true,
            elapsed_ms: 0.0,
            variants: Vec::new(),
            error: None,
            connection: None,
            title: None,
        }
    }
}

/// Why a run cut short stopped, as a command's JSON says it.
#[derive(Debug, Clone, Serialize)]
pub struct Stopped {
    pub message: String,
    pub exit_code: u8,
}

/// A run that stopped part-way: where, and the one-line error.
#[derive(Debug, Clone, Serialize)]
pub struct RunError {
    /// The variant that was running (or about to) when it stopped.
    pub variant: String,
    pub message: String,
    /// The exit code the run ends with: 2 (could not run) or 130 (interrupted).
    pub exit_code: u8,
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

/// Milliseconds, to 0.1 ms.
pub fn millis(d: std::time::Duration) -> f64 {
    round_ms(d.as_secs_f64() * 1000.0)
}
