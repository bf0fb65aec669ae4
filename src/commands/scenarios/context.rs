//! What a scenario's variant programs against: its sessions, its spec's
//! permutations, and the findings it records (checks, observations, notes,
//! evidence, metrics). A variant returns no sentences: every text is a
//! message key with its values, rendered later in the reader's language.
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use anyhow::Result;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::engine::schedule::{self, ExpectedWait, Probe, ProbeQuery};
use crate::engine::{Barrier, Env, Observation, Opener, Recorder, Session, secs};
use crate::files::LabFiles;
use crate::i18n::{Context, Text};
use crate::named_sql::SqlFile;
use crate::progress::Progress;
use crate::report::{Check, Entry, Evidence, Phrase, ResultSet, VariantReport, round_ms};
use crate::retry::RetryPolicy;
use crate::specfile::{Param, Spec};

/// A scenario's own options (its subcommand's flags beyond the common ones),
/// parsed by clap and checked once.
pub type Params = Arc<dyn std::any::Any + Send + Sync>;

/// Which variant a [`Cx`] runs, and what it documents.
pub struct Identity {
    pub scenario: &'static str,
    pub variant: &'static str,
    /// The scenario's spec file under lab/, if it has one.
    pub spec: Option<&'static str>,
    /// The documented outcome with the options asked for.
    pub expected: Text,
    pub explain: Text,
}

/// Settings every scenario may use, from the command line.
#[derive(Debug, Clone)]
pub struct RunOpts {
    /// The timeout the timeout-demonstrating steps set (`--timeout-ms`).
    pub timeout: Duration,
    pub retry: RetryPolicy,
    pub files: LabFiles,
    pub progress: Progress,
    /// The language of the run, for what a scenario prints itself (a warning on stderr).
    pub lang: crate::i18n::Lang,
}

#[derive(Default)]
struct Findings {
    checks: Vec<Check>,
    observed: Vec<Text>,
    notes: Vec<Text>,
    evidence: Vec<Evidence>,
    spans: std::collections::BTreeMap<String, Vec<[f64; 2]>>,
    metrics: Map<String, Value>,
    anomaly: bool,
    skipped: Option<Text>,
    /// Why a transaction pooler is documented to change this variant's outcome.
    pooler_changes: Option<Text>,
    /// The documented outcome with the parameters that really ran, when
    /// they differ from the ones asked for.
    expected: Option<Text>,
}

/// One variant's run.
pub struct Cx<'e> {
    pub env: &'e Env,
    pub opts: &'e RunOpts,
    /// The scenario's and the variant's names.
    pub scenario: &'static str,
    pub variant: &'static str,
    spec_file: Option<&'static str>,
    expected: Text,
    explain: Text,
    pub params: Params,
    recorder: Recorder,
    opener: Opener,
    f: Findings,
    spec: Option<Arc<Spec>>,
    /// Both clocks when the variant began (see [`clock_step_ms`]).
    clocks: (Instant, SystemTime),
}

impl<'e> Cx<'e> {
    pub fn new(env: &'e Env, opts: &'e RunOpts, id: Identity, params: Params) -> Self {
        let recorder = Recorder::default();
        let label = format!("{}/{}", id.scenario, id.variant);
        let opener = Opener::new(
            env,
            format!("{}{label}:", env.app_prefix()),
            label.clone(),
            recorder.clone(),
        );
        if let Some(st) = &env.stepper {
            st.reset(Default::default());
            st.announce(&label, &id.expected.render(st.lang()));
            // Each statement's outcome the moment it is known, under its prompt.
            recorder.set_live(st.live());
        }
        Cx {
            env,
            opts,
            scenario: id.scenario,
            variant: id.variant,
            spec_file: id.spec,
            expected: id.expected,
            explain: id.explain,
            params,
            recorder,
            opener,
            f: Findings::default(),
            spec: None,
            clocks: (Instant::now(), SystemTime::now()),
        }
    }

    /// `scenario/variant`, for messages.
    pub fn label(&self) -> String {
        format!("{}/{}", self.scenario, self.variant)
    }

    /// The scenario's options (the type its declaration names).
    pub fn options<T: 'static>(&self) -> &T {
        self.params
            .downcast_ref::<T>()
            .expect("a scenario reads the options type it declares")
    }

    /// The scenario's spec, parsed and checked (once per variant).
    pub fn spec(&mut self) -> Result<Arc<Spec>> {
        if let Some(s) = &self.spec {
            return Ok(s.clone());
        }
        let name = self.spec_file.ctx(|| msg::no_spec(self.scenario))?;
        let text = self.opts.files.read(name)?;
        let spec = crate::specfile::parse(&text).map_err(|e| msg::bad_spec_at(name, e.line, e.message))?;
        spec.check().map_err(|e| msg::bad_spec(name, e.to_string()))?;
        if let Some(st) = &self.env.stepper {
            let lang = st.lang();
            st.add_whys(
                spec.steps()
                    .filter_map(|(id, s)| Some((s.name.clone(), spec.why(id, lang)?)))
                    .collect(),
            );
        }
        let spec = Arc::new(spec);
        self.spec = Some(spec.clone());
        Ok(spec)
    }

    /// A spec step's SQL with two-way parameters bound (for variants that run
    /// the spec's statements from code: loops, retries).
    pub fn step_sql(&mut self, step: &str, params: &[(&str, Param)]) -> Result<String> {
        let spec = self.spec()?;
        let id = spec
            .find(step)
            .ctx(|| msg::no_step(self.spec_file.unwrap_or("-"), step))?;
        Ok(crate::specfile::bind(spec.step(id).sql.trim(), params))
    }

    /// One of lab's SQL files (named statements), from --lab-dir where given.
    pub fn sql(&self, path: &str) -> Result<SqlFile> {
        let file = SqlFile::load(&self.opts.files, path)?;
        if let Some(st) = &self.env.stepper {
            st.add_whys(file.whys(st.lang()));
        }
        Ok(file)
    }

    /// The spec's permutation labelled with this variant's name (`# variant: NAME`).
    pub fn own_permutation(&mut self) -> Perm<'_, 'e> {
        self.permutation(self.variant)
    }

    /// A permutation of the spec, by its `# variant:` label.
    pub fn permutation(&mut self, label: &str) -> Perm<'_, 'e> {
        Perm {
            cx: self,
            label: label.to_string(),
            params: Vec::new(),
            expect: Vec::new(),
            probes: Vec::new(),
        }
    }

    /// Opens sessions on connections of their own (concurrently).
    pub async fn open(&self, names: &[&str]) -> Result<Vec<Session>> {
        self.opener.open_all(names).await
    }

    /// Refuses, before anything starts, a variant that would open more
    /// sessions than `--max-connections` leaves (its workers would otherwise
    /// fail one by one, part-way).
    pub fn ensure_room(&self, sessions: usize) -> Result<()> {
        if let Some(max) = self.opener.max_sessions()
            && sessions > max
        {
            anyhow::bail!(crate::engine::msg::too_many_sessions(self.label(), sessions, max + 1));
        }
        Ok(())
    }

    /// Opens sessions from other threads or runtimes; they belong to this variant all the same.
    pub fn opener(&self) -> Opener {
        self.opener.clone()
    }

    pub fn recorder(&self) -> &Recorder {
        &self.recorder
    }

    pub fn barrier(&self, name: &str, parties: usize) -> Arc<Barrier> {
        Barrier::new(name, &self.label(), parties, self.env.wait_timeout)
    }

    /// The session name of a backend pid, for server messages that name processes.
    pub fn session_of(&self, pid: i32) -> Option<String> {
        self.opener.pids().into_iter().find(|(_, p)| *p == pid).map(|(n, _)| n)
    }

    /// The backend serving session `name` now: the one it opened on or,
    /// behind a transaction pooler, the one its open transaction runs on.
    pub async fn backend_of(&self, name: &str) -> Result<Option<i32>> {
        if !self.opener.pooled() {
            return Ok(self.pid_of(name));
        }
        let app = crate::postgres::connect::app_name(&format!("{}{name}", self.opener.app()));
        let serving = crate::engine::session::backends_by_app(&self.env.control, &[&app])
            .await
            .ctx(crate::engine::msg::read_blocking)?;
        Ok(serving.first().map(|(_, pid)| *pid))
    }

    pub fn pid_of(&self, name: &str) -> Option<i32> {
        self.opener
            .pids()
            .into_iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, p)| p)
    }

    /// A line of lab's own narration in the timeline (where a part begins...).
    pub fn narrate(&self, text: Text) {
        self.recorder.note("lab", text);
    }

    /// A documented expectation and whether the server met it.
    pub fn check(&mut self, ok: bool, text: Text) {
        self.f.checks.push(Check {
            id: text.key().to_string(),
            ok,
            text,
        });
    }

    /// Part of the one-line observed outcome (built from observed values only).
    pub fn observe(&mut self, text: Text) {
        self.f.observed.push(text);
    }

    pub fn note(&mut self, text: Text) {
        self.f.notes.push(text);
    }

    pub fn metric(&mut self, key: &str, value: impl Serialize) {
        self.f
            .metrics
            .insert(key.to_string(), serde_json::to_value(value).unwrap_or(Value::Null));
    }

    /// Whether the bad thing (a lost write, a broken rule...) happened.
    pub fn anomaly(&mut self, happened: bool) {
        self.f.anomaly = happened;
    }

    /// The documented outcome for the parameters that ran (a server with
    /// fewer free connections runs fewer requests than asked).
    pub fn expected(&mut self, text: Text) {
        self.f.expected = Some(text);
    }

    pub fn skip(&mut self, reason: Text) {
        self.f.skipped = Some(reason);
    }

    /// Behind lab's transaction pooler (`--pooler`): the outcome may differ
    /// from the direct one for this documented reason. Failed checks then
    /// make the verdict "differs behind the pooler", with the reason.
    pub fn pooler_changes(&mut self, reason: Text) {
        if self.env.pooler.is_some() {
            self.f.pooler_changes = Some(reason);
        }
    }

    pub fn evidence(&mut self, title: impl Into<Phrase>, columns: Vec<Phrase>, rows: Vec<Vec<Phrase>>) {
        self.f.evidence.push(Evidence {
            title: title.into(),
            columns,
            rows,
        });
    }

    /// A worker's spans of work (for the HTML report's Gantt chart).
    pub fn spans(&mut self, worker: &str, spans: Vec<[f64; 2]>) {
        self.f.spans.insert(worker.to_string(), spans);
    }

    /// Rows as evidence, under their own column names.
    pub fn evidence_rows(&mut self, title: impl Into<Phrase>, set: &ResultSet) {
        let columns = set.columns.iter().map(|c| Phrase::Plain(c.clone())).collect();
        let rows = set
            .rows
            .iter()
            .map(|r| {
                r.iter()
                    .map(|v| Phrase::Plain(v.clone().unwrap_or_else(|| "NULL".into())))
                    .collect()
            })
            .collect();
        self.evidence(title, columns, rows);
    }

    /// Rows with a `pid` column as evidence, each row's session named first,
    /// and the pids in a `blocked_by` column named too ({123} -> {123 (B)}).
    pub fn evidence_sessions(&mut self, title: impl Into<Phrase>, set: &ResultSet, o: &Observation) {
        let pid = set.columns.iter().position(|c| c == "pid");
        let mut columns = vec![Phrase::Text(crate::i18n::ui::col_session())];
        columns.extend(set.columns.iter().map(|c| Phrase::Plain(c.clone())));
        let rows = set
            .rows
            .iter()
            .map(|r| {
                let session = pid
                    .and_then(|i| r[i].as_deref()?.parse().ok())
                    .and_then(|p| o.session_of(p))
                    .unwrap_or("?");
                let mut row = vec![Phrase::Plain(session.to_string())];
                row.extend(r.iter().zip(&set.columns).map(|(v, column)| {
                    let mut v = v.clone().unwrap_or_else(|| "NULL".into());
                    if column == "blocked_by" {
                        for (name, pid) in &o.sessions {
                            v = v.replace(&pid.to_string(), &format!("{pid} ({name})"));
                        }
                    }
                    Phrase::Plain(v)
                }));
                row
            })
            .collect();
        self.evidence(title, columns, rows);
    }

    /// Checks that every transaction of these sessions ran under `level`, as
    /// each session read it back from the server inside the transaction.
    pub fn ran_under(&mut self, o: &Observation, sessions: &[&str], level: &str) {
        let seen: BTreeSet<&str> = sessions.iter().flat_map(|s| o.isolation_of(s)).collect();
        let every = sessions.iter().all(|s| !o.isolation_of(s).is_empty());
        self.check_levels(sessions.join(", "), seen, every, level);
    }

    /// Checks that every transaction the variant's sessions began from code
    /// ran under `level`, as each read it back from the server.
    pub fn ran_under_all(&mut self, level: &str) {
        let seen = self.recorder.isolations();
        self.ran_under_levels(&seen, level);
    }

    /// Checks that the (session, level) pairs read back are all `level`.
    pub fn ran_under_levels(&mut self, seen: &[(String, String)], level: &str) {
        let levels: BTreeSet<&str> = seen.iter().map(|(_, l)| l.as_str()).collect();
        let sessions: BTreeSet<&str> = seen.iter().map(|(s, _)| s.as_str()).collect();
        let sessions = sessions.into_iter().collect::<Vec<_>>().join(", ");
        self.check_levels(sessions, levels, !seen.is_empty(), level);
    }

    /// The check itself: every session read a level back (`every`), and the
    /// levels read are `level` alone.
    fn check_levels(&mut self, sessions: String, levels: BTreeSet<&str>, every: bool, level: &str) {
        let ok = every && levels.len() == 1 && levels.contains(level);
        let read = if levels.is_empty() {
            "-".to_string()
        } else {
            levels.into_iter().collect::<Vec<_>>().join(", ")
        };
        self.check(ok, msg::ran_under(sessions, level, read));
    }

    pub async fn await_gone(&self, pid: i32) -> Result<bool> {
        self.env.await_gone(&[pid]).await
    }

    /// Closes every session and waits until the server has no backend of this
    /// variant left, so nothing of it survives into the next one. After a
    /// failure the backends are terminated first.
    pub async fn close(self, failed: bool) -> Result<VariantReport> {
        let pooled = self.env.pooler.is_some();
        let pids: Vec<i32> = if pooled {
            // The pool keeps the server connections the sessions used, with
            // what the variant left on them (a session lock, a LISTEN): they
            // are ended, as a direct session's backend ends with it.
            self.env.pooled_backends(self.opener.app()).await?
        } else {
            self.opener.pids().into_iter().map(|(_, p)| p).collect()
        };
        if failed || pooled {
            self.env.terminate(&pids, self.opener.app()).await;
        }
        let wait = self.env.wait_timeout;
        let deadline = Instant::now() + wait;
        let mut terminated = failed || pooled;
        while self.env.backends_serving(&pids, self.opener.app()).await? > 0 {
            if !terminated && Instant::now() + wait / 2 > deadline {
                // A session still busy (a task that kept its connection): end it.
                self.env.terminate(&pids, self.opener.app()).await;
                terminated = true;
            }
            if Instant::now() > deadline {
                anyhow::bail!(msg::still_connected(self.label(), secs(wait)));
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        if !self.env.await_pooler_forgets(&pids).await? {
            anyhow::bail!(msg::still_connected(self.label(), secs(wait)));
        }
        let timeline: Vec<Entry> = self.recorder.take();
        let mut f = self.f;
        // lab's durations are on the monotonic clock, the server's
        // timestamps (now(), pg_stat_activity's times, which some checks
        // read) on the wall clock: a step between them (at least 1 ms, and
        // 0.1% of the variant: more than NTP ever slews) is said, so a check
        // it could have moved can be read with it. (A step forward does not
        // make PostgreSQL's timeouts fire sooner: +300 ms during deadlock's
        // wait, the 40P01 still came 1000 ms after.)
        let now = (Instant::now(), SystemTime::now());
        let step = clock_step_ms(self.clocks, now);
        let elapsed_ms = now.0.saturating_duration_since(self.clocks.0).as_secs_f64() * 1000.0;
        if step.abs() >= (elapsed_ms / 1000.0).max(1.0) {
            f.notes.push(msg::clock_stepped(format!("{step:+.1}")));
        }
        let passed = f.checks.iter().all(|c| c.ok);
        let pooler_differs = f.pooler_changes.filter(|_| !passed);
        Ok(VariantReport {
            as_expected: passed || pooler_differs.is_some(),
            anomaly: Some(f.anomaly),
            observed: f.observed,
            checks: f.checks,
            elapsed_ms: round_ms(self.recorder.started().elapsed().as_secs_f64() * 1000.0),
            sqlstates: crate::report::sqlstates_of(&timeline),
            metrics: f.metrics,
            timeline,
            skipped: f.skipped,
            pooler_differs,
            notes: f.notes,
            evidence: f.evidence,
            spans: f.spans,
            sessions: self.recorder.take_connections(),
            ..VariantReport::new(self.variant, f.expected.unwrap_or(self.expected), self.explain)
        })
    }
}

/// How far the wall clock moved against the monotonic clock between two
/// readings of both, in ms (positive: the wall clock gained).
fn clock_step_ms(from: (Instant, SystemTime), to: (Instant, SystemTime)) -> f64 {
    let wall = |t: SystemTime| {
        t.duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64())
    };
    let mono = to.0.saturating_duration_since(from.0).as_secs_f64();
    (wall(to.1) - wall(from.1) - mono) * 1000.0
}

/// A spec permutation about to run: its parameters, the waits the
/// documentation expects, and the snapshots to take on the way.
pub struct Perm<'c, 'e> {
    cx: &'c mut Cx<'e>,
    label: String,
    params: Vec<(&'static str, Param)>,
    expect: Vec<ExpectedWait>,
    probes: Vec<Probe>,
}

impl Perm<'_, '_> {
    /// Binds a two-way parameter (`/*:name*/literal` in the spec).
    pub fn bind(mut self, name: &'static str, value: Param) -> Self {
        self.params.push((name, value));
        self
    }

    /// `step` waits for `by` (and every other step does not wait).
    pub fn waits(self, step: &str, by: &[&str]) -> Self {
        self.waits_within(step, by, None)
    }

    /// ... and the server ends the wait within `within` (lab cancels it after that).
    pub fn waits_within(mut self, step: &str, by: &[&str], within: Option<Duration>) -> Self {
        self.expect.push(ExpectedWait {
            step: step.to_string(),
            by: by.iter().map(|s| s.to_string()).collect(),
            within,
            optional: false,
        });
        self
    }

    /// `step` may wait, for `by` only, and the server ends the wait within
    /// `within`: a wait another session's timeout ends may be over before
    /// lab looks, so lab does not require to have seen it.
    pub fn may_wait_within(mut self, step: &str, by: &[&str], within: Option<Duration>) -> Self {
        self.expect.push(ExpectedWait {
            step: step.to_string(),
            by: by.iter().map(|s| s.to_string()).collect(),
            within,
            optional: true,
        });
        self
    }

    /// Takes a snapshot `name` right after `after` was handled.
    pub fn probe(mut self, name: &str, after: &str, query: ProbeQuery) -> Self {
        self.probes.push(Probe {
            name: name.to_string(),
            after: after.to_string(),
            query,
        });
        self
    }

    /// Runs the permutation on fresh sessions, then checks its waits: each
    /// documented wait happened, for whom it says, and no other step waited.
    pub async fn run(self) -> Result<Observation> {
        let Perm {
            cx,
            label,
            params,
            expect,
            probes,
        } = self;
        let spec = cx.spec()?;
        let file = cx.spec_file.unwrap_or("-");
        let perm = spec.labelled(&label).ctx(|| msg::no_permutation(file, &label))?;
        // Only the sessions this permutation uses get a connection.
        let spec = spec.used_by(perm);
        let plan = spec.plan(perm).map_err(|e| msg::bad_spec(file, e.to_string()))?;
        for e in &expect {
            spec.find(&e.step).ctx(|| msg::no_step(file, &e.step))?;
        }
        let names: Vec<&str> = spec.sessions.iter().map(|s| s.name.as_str()).collect();
        let sessions = cx.opener.open_all(&names).await?;
        let setup = cx.opener.open_quiet("setup").await?;
        let o = schedule::run(
            cx.env,
            &sessions,
            &setup,
            schedule::Plan {
                spec: &spec,
                plan: &plan,
                params: &params,
                expect: &expect,
                probes: &probes,
                recorder: &cx.recorder,
                transcript: None,
                patient: false,
                dead_ends: false,
                first_look: None,
            },
        )
        .await?;
        for e in &expect {
            let run = o.step(&e.step)?;
            let want: BTreeSet<&str> = e.by.iter().map(String::as_str).collect();
            let got: Option<BTreeSet<&str>> = run.waited_for().map(|b| b.iter().map(String::as_str).collect());
            // A lock timeout's error says the step waited for a lock, however
            // short the wait and whoever held it: a loaded machine may not get
            // to look before the timeout fires.
            let timed_out = run.failed_with("55P03") && got.as_ref().is_some_and(|b| b.is_empty());
            let observed = match &got {
                None => msg::did_not_wait(),
                Some(_) if timed_out => msg::waited_until_timeout(),
                Some(b) => msg::waited_for(b.iter().copied().collect::<Vec<_>>().join(", ")),
            };
            let ok = got.as_ref() == Some(&want) || timed_out || (e.optional && got.is_none());
            let text = if e.optional {
                msg::may_wait(&e.step, e.by.join(", "), observed)
            } else {
                msg::waits(&e.step, e.by.join(", "), observed)
            };
            cx.check(ok, text);
        }
        // A wait lab saw held only by a backend that is not the run's
        // (autovacuum truncating a catalogue) is not the scenario's.
        let unexpected: Vec<String> = o
            .waits()
            .filter(|(s, w)| !w.by.is_empty() || s.outsiders.is_empty())
            .filter(|(s, _)| !expect.iter().any(|e| e.step == s.name))
            .map(|(s, w)| {
                if w.by.is_empty() {
                    s.name.clone()
                } else {
                    format!("{} ({})", s.name, w.by.join(", "))
                }
            })
            .collect();
        let none = unexpected.is_empty();
        cx.check(
            none,
            msg::no_other_waits(if none { "-".to_string() } else { unexpected.join("; ") }),
        );
        for s in o.steps.iter().filter(|s| s.cancelled_by_lab) {
            // A step documented to wait within a bound (its lock_timeout's)
            // that answered with the lock timeout's own 55P03, not lab's
            // 57014: the server's timeout had passed by the time the backend
            // took the cancel in (PostgreSQL reports the lock timeout first),
            // so the server ended the wait; only its answer came late (a
            // starved machine: soak, 1 run in 10). A lock_timeout longer than
            // the bound, or none, answers lab's cancel with 57014.
            let bounded = expect.iter().any(|e| e.step == s.name && e.within.is_some());
            if bounded && s.failed_with("55P03") {
                cx.note(msg::timeout_met_cancel(&s.name));
                continue;
            }
            cx.check(false, msg::had_to_cancel(&s.name));
        }
        Ok(o)
    }
}

/// "waited for" or "did not wait for", as the server said, to be followed by who.
pub fn waited_for(waited: bool) -> Text {
    if waited {
        msg::did_wait_for()
    } else {
        msg::did_not_wait_for()
    }
}

pub mod msg {
    crate::messages! {
        prefix "cx";
        did_wait_for() {
            en: "waited for",
            tr: "bekledi",
        }
        did_not_wait_for() {
            en: "did not wait for",
            tr: "beklemedi",
        }
        no_spec(scenario) {
            en: "scenario {scenario} has no spec file",
            tr: "{scenario} senaryosunun spec dosyası yok",
        }
        bad_spec(file, error) {
            en: "{file}: {error}",
            tr: "{file}: {error}",
        }
        bad_spec_at(file, line, error) {
            en: "{file}:{line}: {error}",
            tr: "{file}:{line}: {error}",
        }
        no_permutation(file, label) {
            en: "{file} has no permutation marked `# variant: {label}`",
            tr: "{file} içinde `# variant: {label}` ile işaretli bir permütasyon yok",
        }
        no_step(file, step) {
            en: "{file} has no step {step}",
            tr: "{file} içinde {step} adımı yok",
        }
        waits(step, by, observed) {
            en: "{step} waits for {by} ({observed})",
            tr: "{step}, {by} oturumunu bekler ({observed})",
        }
        waited_for(by) {
            en: "it waited for {by}",
            tr: "{by} oturumunu bekledi",
        }
        did_not_wait() {
            en: "it did not wait",
            tr: "beklemedi",
        }
        waited_until_timeout() {
            en: "it waited for a lock until its lock_timeout, as the server's error says",
            tr: "sunucunun hatasının dediği gibi lock_timeout'una kadar bir kilit bekledi",
        }
        may_wait(step, by, observed) {
            en: "{step} waits for {by} if at all ({observed})",
            tr: "{step} bekliyorsa {by} oturumunu bekler ({observed})",
        }
        no_other_waits(waited) {
            en: "no other step waits (waited: {waited})",
            tr: "başka hiçbir adım beklemez (bekleyen: {waited})",
        }
        clock_stepped(ms) {
            en: "the machine's wall clock moved {ms} ms against its monotonic clock during this variant: the server's timestamps are on the wall clock, lab's durations on the monotonic one",
            tr: "makinenin duvar saati bu varyant sırasında monoton saatine göre {ms} ms kaydı: sunucunun zaman damgaları duvar saatinde, lab'ın süreleri monoton saatte",
        }
        timeout_met_cancel(step) {
            en: "lab's cancel met {step}'s lock_timeout, already past: the server answered with its own lock timeout (55P03), late",
            tr: "lab'ın iptali {step} adımının zaten geçmiş lock_timeout'uyla karşılaştı: sunucu kendi kilit zaman aşımıyla (55P03) yanıt verdi, geç",
        }
        had_to_cancel(step) {
            en: "{step} is not left waiting until lab cancels it",
            tr: "{step}, lab iptal edene kadar bekletilmez",
        }
        ran_under(sessions, level, read) {
            en: "{sessions} run under {level} (read back: {read})",
            tr: "{sessions}, {level} altında çalışır (sunucudan okunan: {read})",
        }
        at_most(flag, max) {
            en: "{flag} must be at most {max}",
            tr: "{flag} en fazla {max} olabilir",
        }
        still_connected(label, deadline) {
            en: "{label}: sessions were still connected {deadline} s after the variant ended",
            tr: "{label}: varyant bittikten {deadline} sn sonra oturumlar hâlâ bağlıydı",
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant, SystemTime};

    use super::clock_step_ms;

    #[test]
    fn a_wall_clock_step_is_measured_against_the_monotonic_clock() {
        let (m, w) = (Instant::now(), SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000));
        let second = Duration::from_secs(1);
        // Both moved a second: no step.
        assert_eq!(clock_step_ms((m, w), (m + second, w + second)), 0.0);
        // The wall clock gained 314 ms (a deadlock detected "early"), or lost 2.5.
        let gained = clock_step_ms((m, w), (m + second, w + second + Duration::from_millis(314)));
        assert!((gained - 314.0).abs() < 1e-6, "{gained}");
        let lost = clock_step_ms((m, w), (m + second, w + second - Duration::from_micros(2500)));
        assert!((lost + 2.5).abs() < 1e-6, "{lost}");
    }
}
