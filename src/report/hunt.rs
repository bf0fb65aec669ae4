//! `lab hunt`'s report (and `lab hunt --check`'s): per level, the history
//! checked, the anomalies found with the sentences that explain them, the
//! models the history rules out, each reproducer's replays; and for JUnit,
//! every anomaly class judged at the level. Texts are message keys with
//! their values: the renderer puts them into words (JSON always in English).
use std::collections::BTreeMap;

use serde::Serialize;

pub use super::Stopped;
use super::{CycleFigure, Entry};
use crate::i18n::Text;

/// One hunt, or one history checked.
#[derive(Debug, Clone, Serialize)]
pub struct HuntReport {
    pub server_version: String,
    /// "seed 1, 4 sessions, 4 keys", or the file checked.
    pub about: String,
    pub realtime: bool,
    pub session_order: bool,
    pub levels: Vec<HuntLevel>,
    pub not_visible: &'static str,
    pub as_expected: bool,
    /// How each session of the workload connected, by session name (TLS
    /// or not, its version, cipher, the certificate's subject and what
    /// was checked): from each session's own handshake.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub sessions: BTreeMap<String, super::Connection>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<Stopped>,
}

/// What list-append cannot see, said in every report.
pub const NOT_VISIBLE: &str =
    "list-append sees item dependencies only: predicate anti-dependencies (G2 proper) are not checked";
/// What the predicate workload cannot see.
pub const NOT_VISIBLE_PREDICATE: &str = "predicate reads are ranges of keys over a closed set: the rows a range did not return are checked (phantoms, G2); predicates over values are not";
/// What the rw-register workload cannot see.
pub const NOT_VISIBLE_REGISTER: &str = "rw-register sees item dependencies only (ww and rw only between versions known to come one before the other): predicate anti-dependencies (G2 proper) are not checked";

/// One level's history, checked.
#[derive(Debug, Clone, Serialize)]
pub struct HuntLevel {
    /// The level asked (none: a history checked that names none).
    pub level: Option<String>,
    /// The level the history was judged at (serializable when it names none).
    pub judged_at: String,
    /// The consistency model that level is held to, as Elle names it.
    pub model: String,
    /// The weakest models the history violates, and the stronger ones it therefore violates too.
    pub not: Vec<String>,
    pub also_not: Vec<String>,
    pub transactions: usize,
    pub committed: usize,
    pub aborted: usize,
    pub unknown: usize,
    /// The transactions' own time, first start to last end (to the ms).
    pub seconds: f64,
    pub anomalies: Vec<AnomalyReport>,
    /// Every anomaly found, counted by name.
    pub counts: BTreeMap<String, usize>,
    /// The names found that the level forbids.
    pub forbidden_found: Vec<String>,
    /// The level the sessions read back, when it is not the level asked.
    pub level_read_back_differs: Option<String>,
    /// The cycle search gave up on a component too large to search whole.
    pub search_cut_short: bool,
    /// The run stopped part-way: the history so far.
    pub partial: bool,
    /// Where the history was written.
    pub history: Option<String>,
    /// The faults a nemesis injected, counted by kind (`--nemesis`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nemesis: Option<NemesisReport>,
    /// How many transactions read on lab's standby (`--replica`), and in a sentence.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub on_standby: Option<usize>,
    #[serde(skip)]
    pub standby_line: Option<Text>,
    /// The standby was synchronous, every commit waiting as this value of
    /// synchronous_commit says (`--sync-replica`), and in a sentence.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub synchronous_commit: Option<String>,
    #[serde(skip)]
    pub sync_line: Option<Text>,
    /// An rw-register history's: how many keys' version orders came from
    /// the server's commit order, from the history alone, or were not
    /// decided (or cyclic), and in a sentence.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version_orders: Option<BTreeMap<&'static str, usize>>,
    #[serde(skip)]
    pub versions_line: Option<Text>,
    pub as_expected: bool,
    /// The level as the text names it ("-" for none).
    #[serde(skip)]
    pub name: String,
    /// The transactions' own time, unrounded (the rate's).
    #[serde(skip)]
    pub secs: f64,
    /// Each name found, and whether the level forbids it.
    #[serde(skip)]
    pub found: Vec<(String, bool)>,
    /// The models ruled out, in a sentence.
    #[serde(skip)]
    pub models_line: Option<Text>,
    /// Every anomaly class judged at the level (JUnit's cases).
    #[serde(skip)]
    pub classes: Vec<ClassCase>,
}

/// What a level's nemesis did.
#[derive(Debug, Clone, Serialize)]
pub struct NemesisReport {
    /// Each kind of fault, how many times it was injected.
    pub faults: BTreeMap<String, usize>,
    /// In a sentence.
    #[serde(skip)]
    pub line: Text,
}

/// One anomaly found.
#[derive(Debug, Clone, Serialize)]
pub struct AnomalyReport {
    /// The checker's own account of it (its name, its cycle or the read
    /// it rests on), with transactions named by their T-numbers.
    #[serde(flatten)]
    pub found: serde_json::Map<String, serde_json::Value>,
    pub forbidden: bool,
    /// Its transactions' T-numbers.
    pub transactions: Vec<u64>,
    /// Edge by edge or read by read, in words.
    pub explanation: Vec<Text>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reproducer: Option<ReproducerReport>,
    /// Its name ("G2-item").
    #[serde(skip)]
    pub name: String,
    /// "forbidden at serializable" or "allowed at read committed".
    #[serde(skip)]
    pub judged: Text,
    /// "T12, T40, T41".
    #[serde(skip)]
    pub txns: String,
    /// What its reproducer's replays showed, in a sentence.
    #[serde(skip)]
    pub replay_line: Option<Text>,
    /// Its transactions as swimlanes, and its cycle, for the HTML.
    #[serde(skip)]
    pub timeline: Vec<Entry>,
    #[serde(skip)]
    pub cycle: Option<CycleFigure>,
}

/// A reproducer, written and replayed.
#[derive(Debug, Clone, Serialize)]
pub struct ReproducerReport {
    pub path: Option<String>,
    /// Every replay showed the anomaly.
    pub reproduced: bool,
    pub showed: usize,
    pub replays: usize,
    /// What the replays showed instead, when one did not show it.
    pub instead: Option<String>,
    pub steps: usize,
    pub unshrunk_steps: usize,
    pub shrunk: bool,
}

/// One anomaly class, judged at a level (a JUnit case).
#[derive(Debug, Clone)]
pub struct ClassCase {
    pub name: String,
    /// What the level documents for the class.
    pub expected: Text,
    /// Found, and forbidden at the level.
    pub bad: bool,
    pub found: bool,
    /// The explanations of what was found, or "none found".
    pub observed: Vec<Text>,
    pub check: Text,
}
