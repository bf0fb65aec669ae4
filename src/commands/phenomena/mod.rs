//! `lab phenomena`: the classic anomaly matrix measured on the server. Each
//! phenomenon is a spec under lab/phenomena/ (one permutation, the minimal
//! interleaving); each runs at every isolation level, in a schema of its own
//! (cells run in parallel), and the server's answers decide whether the
//! anomaly occurred and, if not, how it was prevented.
//!
//! A phenomenon's header says what it is and what to expect:
//! `# name:` (and `# name-tr:`, else the English name), `# what:` / `# what-tr:`, `# expect: LEVEL=occurs|prevented/HOW ...`,
//! and one or more `# occurs-if: STEP COLUMN = VALUE` (or `STEP rows = N`,
//! `STEP ok`, `STEP nowait`, `STEP before OTHER`, several joined by `and`): the anomaly
//! occurred when all the conditions of any one line hold for what the steps
//! returned. A condition says what makes the outcome an anomaly in any
//! interleaving of the steps (`lab explore`, `--all-interleavings`), not only
//! in the one the spec lists: what each transaction read as well as what it left.
pub mod args;
pub mod config;
pub mod job;

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Result, bail};

use crate::engine::schedule;
use crate::engine::{Env, Observation, Opener, Recorder, StepRun};
use crate::files::LabFiles;
use crate::i18n::{Context, Lang};
use crate::postgres::connect;
use crate::report::Entry;
pub use crate::report::phenomena::{Cell, Expected, How, Interleavings, LEVELS, Verdict};
use crate::specfile::{self, Param, Spec};

/// One phenomenon, read from its spec.
pub struct Phenomenon {
    pub id: String,
    pub name: String,
    /// Its Turkish name (`# name-tr:`); the English one where the file gives none.
    pub name_tr: String,
    pub what_en: String,
    pub what_tr: String,
    pub spec: Spec,
    /// Per level (in [`LEVELS`] order).
    pub expect: Vec<Expected>,
    /// The anomaly occurred if all the conditions of any one line hold.
    pub occurs_if: Vec<Vec<Condition>>,
}

impl Phenomenon {
    /// Its name, in the language it is shown in.
    pub fn name(&self) -> crate::i18n::Arg {
        crate::i18n::Arg::Each {
            en: self.name.clone(),
            tr: self.name_tr.clone(),
        }
    }

    /// What it is, in the language it is shown in.
    pub fn what(&self) -> crate::i18n::Arg {
        crate::i18n::Arg::Each {
            en: self.what_en.clone(),
            tr: self.what_tr.clone(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Condition {
    /// `STEP COLUMN = VALUE`: a row the step returned has that value.
    Value {
        step: String,
        column: String,
        value: String,
    },
    /// `STEP rows = N`: the step returned N rows.
    Rows { step: String, rows: usize },
    /// `STEP ok`: the step answered without an error (a COMMIT that committed).
    Ok { step: String },
    /// `STEP nowait`: the step answered without waiting for another session.
    NoWait { step: String },
    /// `STEP before OTHER`: the step had its answer (not an error) before OTHER was sent
    /// (the order the server let them finish in, not the order lab sent them).
    Before { step: String, other: String },
}

impl Condition {
    /// Whether what the steps returned satisfies the condition.
    pub fn holds(&self, o: &Observation) -> bool {
        let runs = |step: &str| -> Vec<&StepRun> { o.steps.iter().filter(|s| s.name == step).collect() };
        match self {
            Condition::Value { step, column, value } => runs(step).iter().any(|r| {
                r.rows()
                    .is_ok_and(|set| (0..set.rows.len()).any(|i| set.get(i, column) == Some(value.as_str())))
            }),
            Condition::Rows { step, rows } => runs(step)
                .iter()
                .any(|r| r.rows().is_ok_and(|set| set.rows.len() == *rows)),
            // A COMMIT of a failed transaction answers ROLLBACK: not ok.
            Condition::Ok { step } => runs(step)
                .iter()
                .any(|r| r.results().is_ok_and(|rs| rs.iter().all(|x| x.tag != "ROLLBACK"))),
            Condition::NoWait { step } => runs(step).iter().any(|r| r.ok() && !r.waited()),
            Condition::Before { step, other } => runs(step)
                .iter()
                .any(|r| r.ok() && runs(other).iter().any(|o| r.done <= o.sent)),
        }
    }

    fn step(&self) -> &str {
        match self {
            Condition::Value { step, .. }
            | Condition::Rows { step, .. }
            | Condition::Ok { step }
            | Condition::NoWait { step }
            | Condition::Before { step, .. } => step,
        }
    }

    /// Every step the condition names.
    fn steps(&self) -> Vec<&str> {
        match self {
            Condition::Before { step, other } => vec![step, other],
            _ => vec![self.step()],
        }
    }
}

fn header_value<'a>(spec: &'a Spec, key: &str) -> Vec<&'a str> {
    spec.header
        .iter()
        .filter_map(|l| l.trim().strip_prefix(key)?.strip_prefix(':'))
        .map(str::trim)
        .collect()
}

/// Reads a phenomenon's spec (`phenomena/<id>.spec`).
pub fn load(id: &str, text: &str) -> Result<Phenomenon> {
    let file = format!("phenomena/{id}.spec");
    let spec = specfile::parse(text).map_err(|e| msg::bad_at(&file, e.line, e.message))?;
    spec.check().map_err(|e| msg::bad(&file, e.to_string()))?;
    if spec.permutations.len() != 1 {
        bail!(msg::one_permutation(&file));
    }
    let one = |key: &str| -> Result<String> {
        header_value(&spec, key)
            .first()
            .map(|s| s.to_string())
            .ctx(|| msg::missing(&file, key))
    };
    let (name, what_en, what_tr) = (one("name")?, one("what")?, one("what-tr")?);
    let name_tr = one("name-tr")
        .ok()
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| name.clone());
    let expect = expectations(&spec, &file, "expect")?.ctx(|| msg::missing(&file, "expect"))?;
    let occurs_if = occurs_if(&spec, &file)?;
    if occurs_if.is_empty() {
        bail!(msg::missing(&file, "occurs-if"));
    }
    Ok(Phenomenon {
        id: id.to_string(),
        name,
        name_tr,
        what_en,
        what_tr,
        spec,
        expect,
        occurs_if,
    })
}

/// A spec's `# KEY: LEVEL=occurs|prevented[/HOW] ...` line, per level (in
/// [`LEVELS`] order), if it has one: `expect` documents the spec's own
/// permutation, `expect-all` every interleaving (where they differ).
pub fn expectations(spec: &Spec, file: &str, key: &str) -> Result<Option<Vec<Expected>>> {
    let Some(line) = header_value(spec, key).first().copied() else {
        return Ok(None);
    };
    let mut expect = Vec::new();
    for (level, _) in LEVELS {
        let word = line
            .split_whitespace()
            .find_map(|w| w.strip_prefix(level)?.strip_prefix('='))
            .ctx(|| msg::no_expectation(file, key, level))?;
        let (verdict, how) = word.split_once('/').map_or((word, None), |(v, h)| (v, Some(h)));
        let verdict = match verdict {
            "occurs" => Verdict::Occurs,
            "prevented" => Verdict::Prevented,
            other => bail!(msg::bad_verdict(file, other)),
        };
        let how = match how {
            None => None,
            Some("blocked") => Some(How::Blocked),
            Some("aborted") => Some(How::Aborted),
            Some("snapshot") => Some(How::Snapshot),
            Some(other) => bail!(msg::bad_how(file, other)),
        };
        expect.push(Expected { verdict, how });
    }
    Ok(Some(expect))
}

/// A spec's `# occurs-if:` lines (none if it has none), each checked
/// against the spec's steps.
pub fn occurs_if(spec: &Spec, file: &str) -> Result<Vec<Vec<Condition>>> {
    let mut occurs_if = Vec::new();
    for line in header_value(spec, "occurs-if") {
        let mut all = Vec::new();
        for c in line.split(" and ") {
            let words: Vec<&str> = c.split_whitespace().collect();
            let cond = match words[..] {
                [step, "ok"] => Condition::Ok { step: step.into() },
                [step, "nowait"] => Condition::NoWait { step: step.into() },
                [step, "before", other] => Condition::Before {
                    step: step.into(),
                    other: other.into(),
                },
                [step, "rows", "=", n] => Condition::Rows {
                    step: step.into(),
                    rows: n.parse().map_err(|_| msg::bad_condition(file, c))?,
                },
                [step, column, "=", value] => Condition::Value {
                    step: step.into(),
                    column: column.into(),
                    value: value.into(),
                },
                _ => bail!(msg::bad_condition(file, c)),
            };
            for step in cond.steps() {
                spec.find(step).ctx(|| msg::no_step(file, step))?;
            }
            all.push(cond);
        }
        occurs_if.push(all);
    }
    Ok(occurs_if)
}

/// Whether a spec's `# occurs-if:` lines (any one of them, each condition
/// of it) hold on what its steps did; none when it has none.
pub fn occurs(occurs_if: &[Vec<Condition>], o: &Observation) -> Option<bool> {
    (!occurs_if.is_empty()).then(|| occurs_if.iter().any(|all| all.iter().all(|c| c.holds(o))))
}

/// A `# occurs-if:` column that a step's rows do not have, so the condition
/// could never hold (a typo): the step, the column, the columns it has.
pub fn missing_column(occurs_if: &[Vec<Condition>], o: &Observation) -> Option<(String, String, Vec<String>)> {
    occurs_if.iter().flatten().find_map(|c| match c {
        Condition::Value { step, column, .. } => o.steps.iter().filter(|s| &s.name == step).find_map(|r| {
            let set = r.rows().ok()?;
            (!set.columns.iter().any(|c| c == column)).then(|| (step.clone(), column.clone(), set.columns.clone()))
        }),
        _ => None,
    })
}

/// Every phenomenon under lab/phenomena/, in the catalogue's order.
pub fn all(files: &LabFiles) -> Result<Vec<Phenomenon>> {
    ORDER
        .iter()
        .map(|id| load(id, &files.read(&format!("phenomena/{id}.spec"))?))
        .collect()
}

/// The matrix's rows, from the writes that are never allowed to the anomalies
/// only SERIALIZABLE prevents.
pub const ORDER: &[&str] = &[
    "g0",
    "g1a",
    "g1b",
    "g1c",
    "otv",
    "pmp",
    "pmp-write",
    "p2",
    "p3",
    "p4",
    "g-single",
    "g-single-dependencies",
    "g-single-write-1",
    "g-single-write-2",
    "g2-item",
    "g2",
    "g2-two-edges",
    "read-only-anomaly",
    "read-only-deferrable",
];

/// What decided the cell: the anomaly's condition on what the steps
/// returned; otherwise the first serialization failure or deadlock, else the
/// first wait, else the snapshot.
pub fn judge(p: &Phenomenon, o: &Observation, expected: Expected, timeline: Vec<Entry>) -> Cell {
    let occurs = occurs(&p.occurs_if, o) == Some(true);
    let aborted = o
        .steps
        .iter()
        .find(|s| s.code().is_some_and(|c| c == "40001" || c == "40P01"));
    let waited = o.steps.iter().find(|s| s.waited());
    let (how, sqlstate, at_step, waited_for) = if occurs {
        (How::None, None, None, None)
    } else if let Some(s) = aborted {
        (How::Aborted, s.code().map(str::to_string), Some(s.name.clone()), None)
    } else if let Some(s) = waited {
        (
            How::Blocked,
            None,
            Some(s.name.clone()),
            Some(s.waited_for().unwrap_or_default().to_vec()),
        )
    } else {
        (How::Snapshot, None, None, None)
    };
    let verdict = if occurs { Verdict::Occurs } else { Verdict::Prevented };
    let as_expected = verdict == expected.verdict && expected.how.is_none_or(|h| h == how);
    Cell {
        verdict,
        how,
        sqlstate,
        at_step,
        waited_for,
        expected,
        as_expected,
        wrong_level: None,
        interleavings: None,
        timeline,
        elapsed_ms: 0.0,
    }
}

/// A checked `lab phenomena` run: the phenomena and levels to measure.
pub struct MatrixConfig {
    pub lang: Lang,
    /// The phenomena measured (all, or the one `--show` names).
    pub phenomena: Vec<Arc<Phenomenon>>,
    pub levels: Vec<usize>,
    /// Cells at once (`most`), and the interleavings' workers.
    pub jobs: crate::engine::Jobs,
    pub wait_timeout: Duration,
    /// Every interleaving of each cell's steps too (`--all-interleavings`).
    pub all_interleavings: bool,
}

/// A level's index in [`LEVELS`] from its JSON name, in any case, with
/// `-`, `_` or a space between its words (`READ_COMMITTED`, `read committed`).
pub fn level(name: &str) -> Result<usize> {
    let spelt = name.trim().to_ascii_lowercase().replace(['_', ' '], "-");
    LEVELS
        .iter()
        .position(|(n, _)| *n == spelt)
        .ok_or_else(|| msg::no_level(name).into())
}

/// Every phenomenon, or the one named, read and checked before anything connects.
pub fn chosen(files: &LabFiles, show: Option<&str>) -> Result<Vec<Arc<Phenomenon>>> {
    let show = show.map(|s| s.trim().to_ascii_lowercase());
    let show = show.as_deref();
    if let Some(id) = show
        && !ORDER.contains(&id)
    {
        bail!(msg::no_phenomenon(id, ORDER.join(", ")));
    }
    Ok(all(files)?
        .into_iter()
        .filter(|p| show.is_none_or(|s| s == p.id))
        .map(Arc::new)
        .collect())
}

/// The matrix of one run: each cell as it is measured (a run stopped
/// part-way keeps them), and the schemas of cells still running.
pub struct Matrix {
    pub cfg: MatrixConfig,
    schemas: Arc<crate::engine::Made>,
    grid: std::sync::Mutex<Vec<Vec<Option<Cell>>>>,
}

impl Matrix {
    pub fn new(cfg: MatrixConfig) -> Matrix {
        let grid = cfg.phenomena.iter().map(|_| vec![None; cfg.levels.len()]).collect();
        Matrix {
            cfg,
            schemas: Arc::default(),
            grid: std::sync::Mutex::new(grid),
        }
    }

    /// Runs every cell, `jobs` at once, in the matrix's order (`--jobs 1`
    /// measures them one by one, row by row).
    pub async fn measure(&self, env: &Arc<Env>) -> Result<()> {
        let mut tasks: Vec<crate::engine::Task<Cell>> = Vec::new();
        for (i, p) in self.cfg.phenomena.iter().enumerate() {
            for &l in &self.cfg.levels {
                let (p, env, schemas) = (p.clone(), env.clone(), self.schemas.clone());
                let schema = format!("lab_ph_{}_{}_{l}", std::process::id(), i);
                tasks.push(Box::pin(async move { cell(&env, &p, l, &schema, &schemas).await }));
            }
        }
        let width = self.cfg.levels.len();
        let handles = crate::engine::spawn_in_order(self.cfg.jobs.most, tasks);
        // A cell that failed, or a run stopped, stops the cells not yet
        // measured: none makes a schema after the clean-up.
        let _stop = crate::engine::AbortOnDrop(handles.iter().map(|h| h.abort_handle()).collect());
        for (k, h) in handles.into_iter().enumerate() {
            let c = crate::engine::joined(h).await?;
            self.grid.lock().unwrap()[k / width][k % width] = Some(c);
        }
        Ok(())
    }

    /// The schemas of cells that did not drop their own (a run cut short):
    /// each is tried; the first that could not be dropped is the error.
    pub async fn clean_up(&self, control: &tokio_postgres::Client) -> Result<()> {
        let left = self.schemas.close();
        if left.is_empty() {
            return Ok(());
        }
        let drop = async {
            control
                .batch_execute(&format!("DROP SCHEMA IF EXISTS {} CASCADE", left.join(", ")))
                .await
                .map_err(|e| connect::sql_error(e, connect::msg::drop_schema()))
        };
        connect::within(self.cfg.wait_timeout, drop).await?;
        // Listed until dropped: a clean-up tried again drops them.
        self.schemas.dropped(&left);
        Ok(())
    }

    /// The cells measured so far, by phenomenon and level.
    pub fn grid(&self) -> Vec<Vec<Option<Cell>>> {
        self.grid.lock().unwrap().clone()
    }
}

/// One phenomenon at one level, in a schema of its own.
async fn cell(env: &Env, p: &Phenomenon, level: usize, schema: &str, schemas: &crate::engine::Made) -> Result<Cell> {
    let began = std::time::Instant::now();
    schemas.add(schema)?;
    let env = &env.in_schema(schema);
    env.control
        .batch_execute(&format!("CREATE SCHEMA {schema}"))
        .await
        .map_err(|e| connect::sql_error(e, msg::schema(schema)))?;
    let recorder = Recorder::default();
    let opener = Opener::new(
        env,
        format!("lab:phenomena:{}/{}:", p.id, LEVELS[level].0),
        format!("phenomena/{}/{}", p.id, LEVELS[level].0),
        recorder.clone(),
    );
    let names: Vec<&str> = p.spec.sessions.iter().map(|s| s.name.as_str()).collect();
    let sessions = opener.open_all(&names).await?;
    let setup = opener.open_quiet("setup").await?;
    let plan = p
        .spec
        .plan(&p.spec.permutations[0])
        .map_err(|e| msg::bad(&p.id, e.to_string()))?;
    let params = [("level", Param::Str(LEVELS[level].1.to_string()))];
    let o = schedule::run(
        env,
        &sessions,
        &setup,
        schedule::Plan {
            spec: &p.spec,
            plan: &plan,
            params: &params,
            expect: &[],
            probes: &[],
            recorder: &recorder,
            transcript: None,
            patient: true,
            dead_ends: false,
            first_look: None,
        },
    )
    .await;
    drop(sessions);
    drop(setup);
    let dropped = env
        .control
        .batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"))
        .await;
    // Listed until dropped: the run's clean-up tries again (on a new
    // control connection, if this one was lost).
    if dropped.is_ok() {
        schemas.dropped(&[schema.to_string()]);
    }
    let o = o?;
    dropped.map_err(|e| connect::sql_error(e, msg::schema(schema)))?;
    // The level each transaction ran under, read back: a server that ignores
    // the setting would make every cell of the row the same.
    let want = LEVELS[level].1;
    let read = o.levels_ran_at();
    let mut c = judge(p, &o, p.expect[level].clone(), recorder.take());
    c.elapsed_ms = crate::report::round_ms(began.elapsed().as_secs_f64() * 1000.0);
    if read.iter().any(|l| *l != want) {
        c.as_expected = false;
        c.wrong_level = Some(read.into_iter().collect::<Vec<_>>().join(", "));
    }
    Ok(c)
}

/// The JSON's rows: a phenomenon each, its measured cells by level.
pub(crate) mod msg {
    crate::messages! {
        prefix "ph";
        bad(file, why) {
            en: "{file}: {why}",
            tr: "{file}: {why}",
        }
        bad_at(file, line, why) {
            en: "{file}:{line}: {why}",
            tr: "{file}:{line}: {why}",
        }
        one_permutation(file) {
            en: "{file}: a phenomenon has one permutation, its minimal interleaving",
            tr: "{file}: bir fenomenin tek bir permütasyonu olur, en küçük iç içe geçişi",
        }
        missing(file, key) {
            en: "{file}: no `# {key}:` line",
            tr: "{file}: `# {key}:` satırı yok",
        }
        no_expectation(file, key, level) {
            en: "{file}: `# {key}:` says nothing of {level}",
            tr: "{file}: `# {key}:` {level} için bir şey söylemiyor",
        }
        bad_verdict(file, word) {
            en: "{file}: `{word}` is neither occurs nor prevented",
            tr: "{file}: `{word}` ne occurs ne prevented",
        }
        bad_how(file, word) {
            en: "{file}: `{word}` is not blocked, aborted or snapshot",
            tr: "{file}: `{word}` blocked, aborted ya da snapshot değil",
        }
        bad_condition(file, condition) {
            en: "{file}: `{condition}` in `# occurs-if:` is not `STEP COLUMN = VALUE`, `STEP rows = N`, `STEP ok`, `STEP nowait` or `STEP before STEP`",
            tr: "{file}: `# occurs-if:` içindeki `{condition}`, `ADIM SÜTUN = DEĞER`, `ADIM rows = N`, `ADIM ok`, `ADIM nowait` ya da `ADIM before ADIM` değil",
        }
        no_step(file, step) {
            en: "{file}: `# occurs-if:` names no step {step}",
            tr: "{file}: `# occurs-if:` olmayan bir adımı anıyor: {step}",
        }
        no_column(file, step, column, columns) {
            en: "{file}: `# occurs-if:` names column {column}, which {step} does not return (its columns: {columns})",
            tr: "{file}: `# occurs-if:` {column} sütununu anıyor, ama {step} bu sütunu döndürmüyor (sütunları: {columns})",
        }
        no_phenomenon(id, known) {
            en: "no phenomenon {id} (there are: {known})",
            tr: "{id} diye bir fenomen yok (olanlar: {known})",
        }
        no_level(level) {
            en: "no isolation level {level} (read-uncommitted, read-committed, repeatable-read, serializable)",
            tr: "{level} diye bir izolasyon seviyesi yok (read-uncommitted, read-committed, repeatable-read, serializable)",
        }
        schema(schema) {
            en: "could not create or drop the cell's schema {schema}",
            tr: "hücrenin {schema} şeması oluşturulamadı ya da silinemedi",
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_level_is_read_in_any_case_and_spelling() {
        for spelt in ["read-committed", "READ-COMMITTED", "read_committed", "Read Committed"] {
            assert_eq!(super::level(spelt).unwrap(), 1, "{spelt}");
        }
        assert_eq!(super::level("SERIALIZABLE").unwrap(), 3);
        assert!(super::level("snapshot").is_err());
        assert!(super::level("read--committed").is_err());
    }
}
