//! `lab shell`: several sessions in one terminal. A statement goes to its
//! session's connection and the prompt comes back as soon as the server
//! says what became of it: answered, or waiting (`pg_blocking_pids`,
//! `pg_safe_snapshot_blocking_pids`, `pg_locks`, confirmed before the
//! prompt returns, never guessed from time). A waiting statement's answer
//! is printed above the line being typed when it comes. What ran is kept as
//! the scenarios keep it (the timeline), and `\save` writes it as an
//! isolationtester spec that `lab spec` and isolationtester replay.
//!
//! A person's pace has no deadline: nothing here cancels a wait. Leaving
//! ends the sessions whatever they are doing.
pub mod args;
pub mod config;
pub mod job;
pub mod line;
pub mod msg;
pub mod save;
pub mod term;

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use tokio::signal::unix::{Signal, SignalKind, signal};
use tokio_postgres::Statement;

use crate::engine::answer::ErrorPos;
use crate::engine::guess::{self, Did, Guess, Tally};
use crate::engine::observe::{Waited, deadlock_pairs, name_processes};
use crate::engine::schedule::{Live, Server, waited_of};
use crate::engine::session::Sent;
use crate::engine::transcript::error_position;
use crate::engine::{Answer, Env, Opener, PgError, Recorder, Session};
use crate::i18n::{Context, Lang, Text};
use crate::render::{self, Style, html};
use crate::report::{ResultSet, ScenarioReport, VariantReport, WaitKind};
use crate::specfile::Spec;
use crate::sql_lexer;
use line::{Buffer, Command, Input};
use save::{Ran, Recording};
use term::{Read, Term};

/// How long the prompt waits for a statement that neither answers nor
/// waits for a lock (a long query), before it comes back anyway; its
/// answer is printed when it comes.
const RUNNING: Duration = Duration::from_secs(1);
/// How long a cancelled statement has to answer before the prompt comes back anyway.
const CANCELLED: Duration = Duration::from_secs(5);
/// How often the server is asked again while a statement is on its way.
const POLL: Duration = Duration::from_millis(2);

/// What the guess prompt read.
enum Asked {
    /// A guess, or an empty line (none).
    Guess(Option<Guess>),
    /// Ctrl-C: the statement is dropped.
    Interrupted,
    /// Ctrl-D or the end of the input: the statement is dropped and the shell ends.
    Eof,
}

/// A spec walked with `\run`.
pub struct Loaded {
    pub spec: Spec,
    /// Its header says `# uses: bookstore`.
    pub bookstore: bool,
}

/// A checked `lab shell` configuration.
pub struct Config {
    pub sessions: Vec<String>,
    pub spec: Option<Loaded>,
    pub predict: bool,
    pub lang: Lang,
}

impl Config {
    /// Whether the lab schema is built for the sessions.
    pub fn bookstore(&self) -> bool {
        self.spec.as_ref().is_none_or(|l| l.bookstore)
    }
}

/// A statement sent and not yet answered.
struct Pending {
    sent: Sent,
    step: String,
    sql: String,
    /// The wait the server confirmed, if it did.
    waited: Option<Waited>,
    said_running: bool,
    /// lab asked the server to cancel it (Ctrl-C).
    cancelled: bool,
    guess: Option<Guess>,
    /// Its place in the recording.
    index: usize,
}

/// Runs the shell on `env` until `\q`, Ctrl-D or the end of the input.
pub async fn run(env: &Env, cfg: &Config) -> Result<()> {
    let style = Style::for_stdout(cfg.lang, false);
    let recorder = Recorder::default();
    let opener = Opener::new(env, env.app_prefix(), "shell".into(), recorder.clone());
    let setup = opener.open_quiet("setup").await?;
    let names: Vec<&str> = cfg.sessions.iter().map(String::as_str).collect();
    let sessions = opener.open_all(&names).await?;
    let live = Live::new(env, &sessions, &setup, true).await?;
    let control = &env.control;
    // The lock a backend waits for, in parts, and the row whose tuple
    // lock it holds (first in line for that row): words in Rust, in the
    // shell's language (see `lock_words`).
    let lock_q = control
        .prepare(
            "SELECT l.mode, l.locktype, l.transactionid::text, l.virtualxid, \
                    l.page::text, l.tuple::text, c.relname::text, \
                    t.page::text, t.tuple::text, t.relname::text \
               FROM pg_locks l LEFT JOIN pg_class c ON c.oid = l.relation \
               LEFT JOIN LATERAL (SELECT h.page, h.tuple, hc.relname \
                                    FROM pg_locks h JOIN pg_class hc ON hc.oid = h.relation \
                                   WHERE h.pid = l.pid AND h.locktype = 'tuple' AND h.granted \
                                   LIMIT 1) t ON true \
              WHERE l.pid = $1::int AND NOT l.granted LIMIT 1",
        )
        .await
        .ctx(crate::engine::msg::read_blocking)?;
    let state_q = control
        .prepare("SELECT state FROM pg_stat_activity WHERE pid = $1::int")
        .await
        .ctx(crate::engine::msg::read_blocking)?;
    // Listened to for the whole shell: a Ctrl-C typed between two prompts
    // (while a prompt is drawn, say) is kept until the next prompt reads it.
    let sigint = signal(SignalKind::interrupt()).ctx(msg::sigint)?;
    let mut shell = Shell {
        env,
        live,
        sessions: &sessions,
        setup: &setup,
        current: 0,
        pending: sessions.iter().map(|_| None).collect(),
        rec: Recording {
            sessions: cfg.sessions.clone(),
            bookstore: cfg.bookstore(),
            ..Recording::default()
        },
        recorder,
        term: Term::start(),
        style,
        lang: cfg.lang,
        spec: cfg.spec.as_ref(),
        predict: cfg.predict,
        tally: Tally::default(),
        lock_q,
        state_q,
        last_step: None,
        levels: sessions.iter().map(|_| None).collect(),
        buffer: Buffer::default(),
        sigint,
        stopped: false,
        ended: false,
    };
    shell.begin().await?;
    let result = shell.repl().await;
    shell.end().await;
    result
}

struct Shell<'a> {
    env: &'a Env,
    live: Live<'a>,
    sessions: &'a [Session],
    setup: &'a Session,
    current: usize,
    pending: Vec<Option<Pending>>,
    rec: Recording,
    recorder: Recorder,
    term: Term,
    style: Style,
    lang: Lang,
    spec: Option<&'a Loaded>,
    predict: bool,
    tally: Tally,
    lock_q: Statement,
    state_q: Statement,
    /// The last statement sent: its session and step (a wait it ends is marked with it).
    last_step: Option<(usize, String)>,
    /// Each session's isolation level, as read back after its transaction
    /// began (read then, so the prompt sends the session nothing of its own).
    levels: Vec<Option<String>>,
    buffer: Buffer,
    /// SIGINT: Ctrl-C while the line editor is not reading.
    sigint: Signal,
    /// A Ctrl-C came before the prompt was back: what is left of the line
    /// (or of `\run`'s steps) is not sent.
    stopped: bool,
    /// The input ended at a guess: the shell ends as at Ctrl-D.
    ended: bool,
}

impl Shell<'_> {
    fn say(&self, text: &str) {
        self.term.printer.say(text);
    }

    /// A message, fitted to the terminal's width as it is now.
    fn said(&self, t: Text) {
        self.say(&fit(&t.render(self.lang), line_width(), false));
    }

    fn names(&self) -> Vec<String> {
        self.sessions.iter().map(|s| s.name().to_string()).collect()
    }

    /// The banner; a loaded spec's setup blocks and its sessions' own.
    async fn begin(&mut self) -> Result<()> {
        self.said(msg::banner(self.names().join(", "), &self.env.server.version));
        if let Some(l) = self.spec {
            self.rec.setup = l.spec.setup.clone();
            self.rec.teardown = l.spec.teardown.clone();
            for sql in &l.spec.setup {
                self.setup_sql(sql, false).await?;
            }
            for s in &l.spec.sessions {
                self.rec
                    .session_blocks
                    .push((s.name.clone(), s.setup.clone(), s.teardown.clone()));
                if let (Some(sql), Some(i)) = (&s.setup, self.index_of(&s.name)) {
                    match self.sessions[i].simple(sql).await {
                        // A setup block may begin the session's transaction
                        // (`BEGIN; LOCK ...`): its level, for the prompt.
                        Ok(_) => self.levels[i] = self.sessions[i].isolation().await,
                        Err(e) => self.said(msg::setup_failed(e.to_string())),
                    }
                }
            }
        }
        if self.predict {
            self.said(guess::msg::predict_on());
        }
        Ok(())
    }

    /// Every running statement cancelled and the sessions ended; the tally.
    async fn end(&mut self) {
        for (i, p) in self.pending.iter().enumerate() {
            if let Some(p) = p {
                self.said(msg::left_cancelled(
                    self.sessions[i].name(),
                    save::statement(&p.sql, &p.step),
                ));
                let _ = self.live.cancel(self.sessions[i].pid()).await;
            }
        }
        let _ = self.env.terminate_sessions_via(&self.env.control).await;
        if self.tally.made > 0 {
            self.said(self.tally.line());
        }
        self.said(msg::left());
    }

    fn index_of(&self, name: &str) -> Option<usize> {
        self.sessions.iter().position(|s| s.name().eq_ignore_ascii_case(name))
    }

    async fn repl(&mut self) -> Result<()> {
        while !self.ended {
            let prompt = self.prompt().await?;
            match self.read(prompt).await? {
                Read::Eof => {
                    // As typed, a statement runs at its ';' only: say what was left unsent.
                    // (A comment alone, as a script may end with, is no statement.)
                    let left = self.buffer.text();
                    if !crate::sql_lexer::strip_comments(left).trim().is_empty() {
                        let left = left.replace('\n', " ");
                        let shown = match self.buffer.session() {
                            Some(s) => format!("{s}: {left}"),
                            None => left,
                        };
                        self.said(msg::not_ended(shown));
                    }
                    return Ok(());
                }
                Read::Interrupted => self.interrupt().await?,
                Read::NotText => bail!(msg::not_utf8()),
                Read::Line(l) => {
                    let names = self.names();
                    match self.buffer.push(&l, &names) {
                        None => {}
                        Some(Input::Command(Command::Quit)) => return Ok(()),
                        Some(Input::Command(c)) => self.command(c).await?,
                        Some(Input::Sql { session, statements }) => {
                            let s = match session {
                                Some(n) => self.index_of(&n).expect("a session's name"),
                                None => self.current,
                            };
                            self.stopped = false;
                            let n = statements.len();
                            for (i, sql) in statements.into_iter().enumerate() {
                                if self.stopped_before(n - i) {
                                    break;
                                }
                                let taken = self.spec_steps();
                                let step = self.rec.step_name(self.sessions[s].name(), &taken);
                                self.send(s, &sql, step).await?;
                            }
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// A line read at `prompt`, while answers are watched for and printed
    /// as they come; SIGINT (Ctrl-C while the editor is not reading) counts
    /// as Ctrl-C at the prompt.
    async fn read(&mut self, prompt: String) -> Result<Read> {
        self.term.ask(prompt);
        let mut tick = tokio::time::interval(Duration::from_millis(10));
        loop {
            tokio::select! {
                r = self.term.next() => return Ok(r),
                _ = tick.tick(), if self.pending.iter().any(Option::is_some) => {
                    self.pass(None).await?;
                }
                _ = self.sigint.recv() => self.interrupt().await?,
            }
        }
    }

    /// The prompt: the current session and its transaction, as the server says.
    async fn prompt(&self) -> Result<String> {
        let s = &self.sessions[self.current];
        let name = s.name();
        if !self.buffer.is_empty() {
            // The session the statement goes to: a `B:` prefix's, else the current one.
            return Ok(format!("{}-> ", self.buffer.session().unwrap_or(name)));
        }
        let state = match &self.pending[self.current] {
            Some(Pending { waited: Some(w), .. }) => Some(msg::waiting_state(w.by.join(", "))),
            Some(_) => Some(msg::running_state()),
            None => {
                let row = self
                    .env
                    .control
                    .query_opt(&self.state_q, &[&s.pid()])
                    .await
                    .ctx(crate::engine::msg::read_blocking)?;
                match row.and_then(|r| r.get::<_, Option<String>>(0)).as_deref() {
                    Some("idle in transaction") => {
                        Some(msg::in_tx(self.levels[self.current].clone().unwrap_or_default()))
                    }
                    Some("idle in transaction (aborted)") => Some(msg::failed_tx()),
                    _ => None,
                }
            }
        };
        Ok(match state {
            Some(t) => format!("{name} ({})> ", t.render(self.lang)),
            None => format!("{name}> "),
        })
    }

    fn spec_steps(&self) -> Vec<String> {
        self.spec
            .map(|l| l.spec.steps().map(|(_, st)| st.name.clone()).collect())
            .unwrap_or_default()
    }

    async fn command(&mut self, c: Command) -> Result<()> {
        match c {
            Command::Help => self.say(&fit(&msg::help().render(self.lang), line_width(), true)),
            Command::Quit => {}
            Command::Switch(name) => match self.index_of(&name) {
                Some(i) => self.current = i,
                None => self.said(msg::no_session(name, self.names().join(", "))),
            },
            Command::Timeline => {
                let entries = self.recorder.entries();
                if entries.is_empty() {
                    self.said(msg::empty_timeline());
                } else {
                    self.say(render::timeline(&entries, &self.style).trim_end());
                }
            }
            Command::Locks => {
                let view = crate::commands::locks::View {
                    all: false,
                    once: true,
                    every: Duration::from_secs(1),
                };
                let text =
                    crate::commands::locks::snapshot(&self.env.control, &self.env.server.version, view, &self.style)
                        .await?;
                self.say(text.trim_end());
            }
            Command::Save(path) => self.save(&path).await?,
            Command::Html(path) => self.html(&path),
            Command::Run(steps) => {
                let Some(l) = self.spec else {
                    self.said(msg::no_spec());
                    return Ok(());
                };
                // Every name checked before any step runs: a typo runs none.
                if let Some(bad) = steps.iter().find(|name| l.spec.find(name).is_none()) {
                    self.said(msg::no_step(bad, self.spec_steps().join(", ")));
                    return Ok(());
                }
                self.stopped = false;
                let n = steps.len();
                for (i, name) in steps.into_iter().enumerate() {
                    if self.stopped_before(n - i) {
                        break;
                    }
                    let id = l.spec.find(&name).expect("checked above");
                    let s = self
                        .index_of(&l.spec.session_of(id).name)
                        .expect("the spec's sessions are the shell's");
                    let sql = l.spec.step(id).sql.clone();
                    // What is about to run, and why, before any guess is asked.
                    let session = self.sessions[s].name().to_string();
                    self.said(msg::run_step(session, &name, crate::sql_lexer::one_line(&sql)));
                    if let Some(why) = l.spec.why(id, self.lang) {
                        self.said(msg::run_step_why(why));
                    }
                    self.send(s, &sql, name).await?;
                }
            }
            Command::Steps => match self.spec {
                None => self.said(msg::no_spec()),
                Some(l) => {
                    for s in &l.spec.sessions {
                        let steps: Vec<&str> = s.steps.iter().map(|st| st.name.as_str()).collect();
                        self.said(msg::steps_of(&s.name, steps.join(" ")));
                    }
                }
            },
            Command::Setup(sql) => {
                if self.pending.iter().any(Option::is_some) {
                    self.said(msg::setup_busy());
                } else if !self.rec.ran.is_empty() {
                    self.said(msg::setup_after_steps());
                } else {
                    self.setup_sql(&sql, true).await?;
                }
            }
            Command::Predict(on) => {
                self.predict = on.unwrap_or(!self.predict);
                if self.predict {
                    self.said(guess::msg::predict_on());
                } else if self.tally.made > 0 {
                    self.said(self.tally.line());
                }
            }
            Command::Usage(usage) => self.said(msg::usage(usage)),
            Command::Unknown(name) => self.said(msg::unknown(name)),
            Command::NoSession(name) => self.said(msg::no_session(name, self.names().join(", "))),
        }
        Ok(())
    }

    /// Runs `sql` on lab's own connection; `keep`: it goes into the saved
    /// spec's setup. One that the server says waits (for a session's
    /// lock) is cancelled at once, and so is one Ctrl-C stops: nothing
    /// here waits on a person's transaction.
    async fn setup_sql(&mut self, sql: &str, keep: bool) -> Result<()> {
        let mut sent = self.setup.send(sql);
        let mut cancelled: Option<Instant> = None;
        while !sent.ready() {
            if let Some(at) = cancelled {
                if at.elapsed() > CANCELLED {
                    bail!(msg::setup_no_answer(CANCELLED.as_secs()));
                }
            } else if let Some(w) = self.wait_of_pid(self.setup.pid()).await? {
                self.said(msg::setup_waits(w.by.join(", ")));
                self.live.cancel(self.setup.pid()).await?;
                cancelled = Some(Instant::now());
            }
            tokio::select! {
                _ = tokio::time::sleep(POLL) => {}
                _ = self.sigint.recv(), if cancelled.is_none() => {
                    self.said(msg::cancelling("setup"));
                    self.live.cancel(self.setup.pid()).await?;
                    cancelled = Some(Instant::now());
                }
            }
        }
        match sent.take() {
            Some((Ok(results), _)) => {
                if keep {
                    self.rec.setup.push(sql.to_string());
                }
                let tag = results.last().map(|r| r.tag.clone()).unwrap_or_default();
                self.said(msg::setup_done(tag));
            }
            Some((Err(e), _)) => self.said(msg::setup_failed(self.error_text(&e, Some(sql)))),
            None => {}
        }
        Ok(())
    }

    /// Ctrl-C: the current session's running statement is cancelled; with
    /// none, a statement part-way typed is dropped.
    async fn interrupt(&mut self) -> Result<()> {
        let s = self.current;
        let name = self.sessions[s].name().to_string();
        if let Some(p) = self.pending[s].as_mut() {
            p.cancelled = true;
            self.said(msg::cancelling(&name));
            self.live.cancel(self.sessions[s].pid()).await?;
            // The server takes the cancel in its own time, and until then the
            // statement still shows as waiting: its answer (57014, or its
            // result if it finished first) is what says the cancel arrived.
            if let Some(p) = self.pending[s].as_mut() {
                p.sent.ready_within(CANCELLED).await;
            }
            self.settle(Some(s)).await?;
        } else if !self.buffer.is_empty() {
            self.buffer.clear();
        } else {
            self.said(self.nothing_running(s));
        }
        Ok(())
    }

    /// Ctrl-C with nothing running on session `s`: the statements still
    /// out on other sessions, and how to cancel each; else how to leave.
    fn nothing_running(&self, s: usize) -> Text {
        let name = self.sessions[s].name();
        let out: Vec<&str> = (0..self.sessions.len())
            .filter(|t| *t != s && self.pending[*t].is_some())
            .map(|t| self.sessions[t].name())
            .collect();
        match out.as_slice() {
            [] => msg::nothing_running(name),
            [other] => msg::nothing_running_but(name, *other),
            many => msg::nothing_running_but_many(name, many.iter().map(|o| msg::still_out(*o)).collect::<Vec<_>>()),
        }
    }

    /// Sends one statement on session `s` as step `step`, then gives the
    /// prompt back once the server says what became of it.
    async fn send(&mut self, s: usize, sql: &str, step: String) -> Result<()> {
        let name = self.sessions[s].name().to_string();
        if self.pending[s].is_some() {
            // Nothing more of the line (or of `\run`'s steps) is sent: the
            // rest would run in an order nobody typed. Ctrl-C is advice
            // only for a person at a terminal.
            self.said(if !self.term.is_terminal() {
                msg::busy_piped(name)
            } else if s == self.current {
                msg::busy_current(name)
            } else {
                msg::busy(name)
            });
            self.stopped = true;
            return Ok(());
        }
        let guess = if self.predict {
            match self.ask_guess(&name).await? {
                Asked::Guess(g) => g,
                Asked::Interrupted => {
                    // Nothing was sent, and nothing more of the line is.
                    self.said(msg::guess_dropped(name));
                    self.stopped = true;
                    return Ok(());
                }
                Asked::Eof => {
                    // As Ctrl-D at the prompt: the shell ends, sending nothing more.
                    self.said(msg::guess_eof(name));
                    self.stopped = true;
                    self.ended = true;
                    return Ok(());
                }
            }
        } else {
            None
        };
        let index = self.rec.ran.len();
        for (t, p) in self.pending.iter().enumerate() {
            if let Some(p) = p.as_ref().filter(|p| t != s && p.waited.is_none()) {
                self.rec.overlaps.push((p.index, index));
            }
        }
        if index == 0 {
            // The timeline starts at the first statement.
            self.recorder.restart();
        }
        self.rec.ran.push(Ran {
            session: name,
            step: step.clone(),
            sql: sql.to_string(),
            released_by: None,
            cancelled: false,
        });
        let sent = self.sessions[s].send(sql);
        self.pending[s] = Some(Pending {
            sent,
            step: step.clone(),
            sql: sql.to_string(),
            waited: None,
            said_running: false,
            cancelled: false,
            guess,
            index,
        });
        self.last_step = Some((s, step));
        self.settle(Some(s)).await
    }

    /// The guess for `who`'s statement, if one was made.
    async fn ask_guess(&mut self, who: &str) -> Result<Asked> {
        loop {
            let prompt = msg::predict_ask(who).render(self.lang);
            match self.read(prompt).await? {
                Read::Line(l) => match guess::guess(&l) {
                    None => return Ok(Asked::Guess(None)),
                    Some(Ok(g)) => return Ok(Asked::Guess(Some(g))),
                    Some(Err(())) => self.said(guess::msg::predict_bad()),
                },
                Read::Interrupted => return Ok(Asked::Interrupted),
                Read::Eof => return Ok(Asked::Eof),
                Read::NotText => bail!(msg::not_utf8()),
            }
        }
    }

    /// Until every running statement has answered or the server says it
    /// waits (or, for one that does neither, [`RUNNING`] passed).
    async fn settle(&mut self, first: Option<usize>) -> Result<()> {
        let began = Instant::now();
        loop {
            // One already said to be running (a long query) holds no prompt
            // again: its answer is printed when it comes.
            let moving: Vec<usize> = (self.pass(first).await?.into_iter())
                .filter(|s| self.pending[*s].as_ref().is_none_or(|p| !p.said_running))
                .collect();
            if moving.is_empty() {
                return Ok(());
            }
            if began.elapsed() > RUNNING {
                for s in moving {
                    if let Some(p) = self.pending[s].as_mut().filter(|p| !p.said_running) {
                        p.said_running = true;
                        let who = self.sessions[s].name().to_string();
                        self.said(msg::running(who));
                    }
                }
                return Ok(());
            }
            tokio::select! {
                _ = tokio::time::sleep(POLL) => {}
                // Ctrl-C while the statement is out and no prompt is up: it is
                // cancelled, and its answer (57014) is taken in by the next look.
                _ = self.sigint.recv() => self.cancel_in_flight(first).await?,
            }
        }
    }

    /// Whether a Ctrl-C before the prompt came back stops the line here,
    /// with `left` of its statements (or `\run`'s steps) not sent; it says so.
    fn stopped_before(&self, left: usize) -> bool {
        if self.stopped {
            self.said(msg::rest_not_sent(left));
        }
        self.stopped
    }

    /// Ctrl-C before the prompt came back: the statement being sent on
    /// `s` is cancelled (once it has answered, the current session's, as at
    /// the prompt), or that nothing runs is said; nothing more of the line
    /// is sent.
    async fn cancel_in_flight(&mut self, s: Option<usize>) -> Result<()> {
        self.stopped = true;
        let s = s.filter(|s| self.pending[*s].is_some()).unwrap_or(self.current);
        let name = self.sessions[s].name().to_string();
        if let Some(p) = self.pending[s].as_mut() {
            p.cancelled = true;
            self.said(msg::cancelling(&name));
            self.live.cancel(self.sessions[s].pid()).await?;
        } else {
            self.said(self.nothing_running(s));
        }
        Ok(())
    }

    /// One look at every running statement: answers are recorded and
    /// printed in the order they came, new waits too; the sessions whose
    /// statement neither answered nor waits.
    ///
    /// The statement just sent (`first`) is looked at alone until it has
    /// answered or waits, as isolationtester reports a step before the
    /// waits it ended: a COMMIT's answer comes before that of the
    /// statement it let go, though the server may send the latter first.
    async fn pass(&mut self, first: Option<usize>) -> Result<Vec<usize>> {
        let mut moving = Vec::new();
        // The others' answers: errors first (a deadlock's victim before the
        // side its end let go: the victim's answer comes only after its
        // transaction is aborted, so it may reach lab second), then in the
        // order they came; then those still out.
        let mut others: Vec<(Option<(bool, Instant)>, usize)> = (0..self.sessions.len())
            .filter(|s| Some(*s) != first)
            .map(|s| {
                let done = self.pending[s].as_mut().and_then(|p| p.sent.peek());
                (done.map(|(a, at)| (a.is_ok(), at)), s)
            })
            .collect();
        others.sort_by_key(|(done, s)| (done.is_none(), *done, *s));
        let order: Vec<usize> = first.into_iter().chain(others.into_iter().map(|(_, s)| s)).collect();
        for s in order {
            if !moving.is_empty() && first.is_some() {
                // The statement just sent is still on its way.
                break;
            }
            let Some(p) = self.pending[s].as_mut() else { continue };
            if let Some((answer, _)) = p.sent.peek() {
                // An error ends a statement by itself; an answer after a wait
                // waits for the answer of what let it go.
                let waited = p.waited.clone().filter(|_| answer.is_ok());
                if let Some(w) = waited
                    && self.releaser_out(s, &w).await?
                {
                    moving.push(s);
                } else {
                    self.finish(s).await?;
                }
                continue;
            }
            let known = p.waited.as_ref().map(|old| old.by.clone());
            match self.wait_of(s).await? {
                Some(w) => {
                    if known.as_ref() != Some(&w.by) {
                        // A new wait (or one for others): its lock, once.
                        let w = self.described(s, w).await?;
                        let p = self.pending[s].as_mut().expect("pending");
                        self.recorder
                            .waiting(p.sent.at, self.sessions[s].name(), Some(&p.step), &p.sql, &w);
                        p.waited = Some(w.clone());
                        let who = self.sessions[s].name().to_string();
                        self.said(match &w.lock {
                            Some(lock) => msg::waits(who, w.by.join(", "), lock),
                            None => msg::waits_for(who, w.by.join(", ")),
                        });
                        self.judge_wait(s);
                    }
                }
                // Not waiting (yet, or any more): its answer is on its way.
                None => moving.push(s),
            }
        }
        Ok(moving)
    }

    /// Whether a session that `s` waited for has a statement whose answer
    /// has not reached lab though the server no longer keeps it waiting:
    /// what let `s` go (a deadlock's victim, aborted) is reported first.
    async fn releaser_out(&mut self, s: usize, w: &Waited) -> Result<bool> {
        for t in 0..self.sessions.len() {
            if t == s || !w.by.iter().any(|b| b == self.sessions[t].name()) {
                continue;
            }
            let Some(p) = self.pending[t].as_mut() else { continue };
            if p.sent.ready() {
                return Ok(true);
            }
            if self.wait_of(t).await?.is_none() {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// What the server says session `s`'s statement waits for, if
    /// anything (whom: the shell's sessions, lab's setup connection, or
    /// any other backend, named by pid).
    async fn wait_of(&self, s: usize) -> Result<Option<Waited>> {
        self.wait_of_pid(self.sessions[s].pid()).await
    }

    /// What the backend `pid` waits for, named as [`Shell::wait_of`] names it.
    async fn wait_of_pid(&self, pid: i32) -> Result<Option<Waited>> {
        let b = self.live.blocking(pid).await?;
        Ok(waited_of(&b, |pid| {
            Some(if pid == self.setup.pid() {
                "setup".to_string()
            } else {
                match self.sessions.iter().find(|x| x.pid() == pid) {
                    Some(x) => x.name().to_string(),
                    None => msg::outside(pid as i64).render(self.lang),
                }
            })
        }))
    }

    /// What a wait is for, in words: the lock (`ShareLock on transaction
    /// 725, tuple (0,1) of stock_items`), a safe snapshot, a standby.
    async fn described(&self, s: usize, mut w: Waited) -> Result<Waited> {
        w.lock = match w.kind {
            WaitKind::Lock => self
                .env
                .control
                .query_opt(&self.lock_q, &[&self.sessions[s].pid()])
                .await
                .ctx(crate::engine::msg::read_blocking)?
                .and_then(|r| {
                    let part = |i: usize| r.get::<_, Option<String>>(i);
                    lock_words(&LockParts {
                        mode: part(0),
                        locktype: part(1),
                        transactionid: part(2),
                        virtualxid: part(3),
                        page: part(4),
                        tuple: part(5),
                        relname: part(6),
                        held_page: part(7),
                        held_tuple: part(8),
                        held_relname: part(9),
                    })
                })
                .map(|t| t.render(self.lang)),
            WaitKind::SafeSnapshot => Some(msg::safe_snapshot().render(self.lang)),
            WaitKind::SyncRep => Some(msg::sync_rep().render(self.lang)),
            _ => None,
        };
        Ok(w)
    }

    /// Session `s`'s answer: recorded, printed, its guess judged.
    async fn finish(&mut self, s: usize) -> Result<()> {
        let mut p = self.pending[s].take().expect("pending");
        let Some((mut answer, at)) = p.sent.take() else {
            return Ok(());
        };
        let sessions = self.sessions;
        let session = &sessions[s];
        let began = session.track(&p.sql, &mut answer);
        // Read back when a transaction began, or its level was set.
        let isolation = match &answer {
            Ok(_) if began || sql_lexer::sets_tx_level(&p.sql) => session.isolation().await,
            _ => None,
        };
        if isolation.is_some() {
            self.levels[s] = isolation.clone();
        }
        let took = at.saturating_duration_since(p.sent.at);
        let entry = self.recorder.entry(
            at,
            session.name(),
            Some(&p.step),
            &p.sql,
            &answer,
            p.waited.as_ref().map(|w| (w, took)),
            isolation.clone(),
        );
        let did = guess::did(&entry);
        self.recorder.push(entry);
        if let Err(e) = &answer
            && e.is("40P01")
        {
            // The deadlock's other sides, as the server's DETAIL names them.
            let pairs = deadlock_pairs(e.detail.as_deref().unwrap_or_default());
            for pid in pairs.iter().flat_map(|(a, b)| [*a, *b]) {
                if let Some(other) = self
                    .sessions
                    .iter()
                    .find(|x| x.pid() == pid && x.pid() != session.pid())
                    && !self.rec.survivors.iter().any(|n| n == other.name())
                {
                    self.rec.survivors.push(other.name().to_string());
                }
            }
        }
        // What let a wait go is marked on a step that succeeded; an error
        // (a deadlock's victim, a serialization failure) ends it by itself,
        // and is reported before what its end let go, live and on replay.
        if p.waited.is_some()
            && answer.is_ok()
            && let Some((last, step)) = &self.last_step
            && *last != s
        {
            self.rec.ran[p.index].released_by = Some(step.clone());
        }
        if p.cancelled
            && let Err(e) = &answer
            && e.is("57014")
        {
            self.rec.ran[p.index].cancelled = true;
        }
        self.show(s, &p.sql, &answer, p.waited.is_some().then_some(took), isolation);
        if p.waited.is_none()
            && let (Some(g), Some(did)) = (p.guess.take(), did)
        {
            self.judged(&g, &did);
        }
        Ok(())
    }

    /// A guess against a wait the server just confirmed.
    fn judge_wait(&mut self, s: usize) {
        let p = self.pending[s].as_mut().expect("pending");
        if let (Some(g), Some(w)) = (p.guess.take(), &p.waited) {
            let did = Did::Waited { by: w.by.clone() };
            self.judged(&g, &did);
        }
    }

    fn judged(&mut self, g: &Guess, did: &Did) {
        let line = self.tally.judge(g, did, self.lang);
        self.say(&fit(&line, line_width(), false));
    }

    /// An answer as a person reads it: rows as a table, then the tag or the error.
    /// `sql`: the statement as sent, where an error's position points.
    fn show(&self, s: usize, sql: &str, answer: &Answer, waited: Option<Duration>, isolation: Option<String>) {
        let who = self.sessions[s].name().to_string();
        let secs = waited.map(|d| took(d, self.lang));
        match answer {
            Ok(results) => {
                for set in results.iter().filter_map(|r| r.set.as_ref()) {
                    self.say(&rows(set, &self.style));
                }
                let mut tag: Vec<String> = results.iter().map(|r| r.tag.clone()).collect();
                if let Some(l) = isolation {
                    tag.push(format!("({l})"));
                }
                let tag = tag.join(" ");
                self.said(match secs {
                    Some(secs) => msg::done_after(who, secs, tag),
                    None => msg::done(who, tag),
                });
            }
            Err(e) => {
                let line = self.error_text(e, Some(sql));
                self.said(match secs {
                    Some(secs) => msg::failed_after(who, secs, line),
                    None => msg::failed(who, line),
                });
            }
        }
    }

    /// The server's error as psql shows it, backends named by session:
    /// where it has a position in `query` (the statement as sent) or in a
    /// query the server ran for it, libpq's `LINE n:` and a caret under it.
    fn error_text(&self, e: &PgError, query: Option<&str>) -> String {
        let pids: Vec<(String, i32)> = self.sessions.iter().map(|s| (s.name().to_string(), s.pid())).collect();
        let mut t = match &e.code {
            Some(code) => format!("{} {code}: {}", e.severity, e.message),
            None => e.message.clone(),
        };
        let cursor = match (&e.position, query) {
            (Some(ErrorPos::Statement(at)), Some(q)) => Some((q, *at)),
            (Some(ErrorPos::Internal(at, q)), _) => Some((q.as_str(), *at)),
            _ => None,
        };
        if let Some((q, at)) = cursor {
            for line in error_position(q, at as usize).lines() {
                t.push_str("\n  ");
                t.push_str(line);
            }
        }
        for (label, part) in [("DETAIL", &e.detail), ("HINT", &e.hint)] {
            if let Some(p) = part {
                t.push_str(&format!(
                    "\n  {label}: {}",
                    name_processes(p, &pids).replace('\n', "\n    ")
                ));
            }
        }
        t
    }

    async fn save(&mut self, path: &Path) -> Result<()> {
        if self.rec.ran.is_empty() {
            self.said(msg::nothing_ran());
            return Ok(());
        }
        if let Some((s, p)) = self
            .pending
            .iter()
            .enumerate()
            .find_map(|(s, p)| p.as_ref().map(|p| (s, p)))
        {
            let (who, statement) = (self.sessions[s].name(), save::statement(&p.sql, &p.step));
            self.said(if self.term.is_terminal() {
                msg::save_pending(who, statement)
            } else {
                msg::save_pending_piped(who, statement)
            });
            return Ok(());
        }
        if let Some(why) = self.rec.unsaveable() {
            self.said(why);
            return Ok(());
        }
        self.rec.settings = self.forced_settings().await?;
        let about = [
            msg::about_saved(&self.env.server.version).render(Lang::En),
            msg::about_replay().render(Lang::En),
        ];
        match std::fs::write(path, self.rec.spec(&about)) {
            Ok(()) => {
                let shown = path.display().to_string();
                let replay = save::shell_quoted(&shown);
                self.said(msg::saved(shown, self.rec.ran.len() as u64, replay));
                for (running, sent) in &self.rec.overlaps {
                    let (running, sent) = (&self.rec.ran[*running], &self.rec.ran[*sent]);
                    self.said(msg::saved_overlap(
                        msg::of_session(&running.session, running.shown()),
                        msg::of_session(&sent.session, sent.shown()),
                        &running.step,
                        &sent.step,
                    ));
                }
            }
            Err(e) => self.said(msg::not_written(path.display().to_string(), e.to_string())),
        }
        Ok(())
    }

    /// lab's neutral settings, which the sessions ran with, where a new
    /// connection of this role to this database starts with another value
    /// (`pg_settings.reset_val`: the server's, the database's and the
    /// role's defaults, not a SET): a replay has to set them itself.
    async fn forced_settings(&self) -> Result<Vec<(String, String)>> {
        let neutral = crate::postgres::connect::neutral_settings(self.env.server.version_num);
        let names: Vec<&str> = neutral.iter().map(|(k, _)| *k).collect();
        let rows = self
            .env
            .control
            .query(
                "SELECT name, reset_val FROM pg_settings WHERE name = ANY($1)",
                &[&names],
            )
            .await
            .ctx(msg::read_settings)?;
        Ok(neutral
            .iter()
            .filter(|(k, v)| {
                rows.iter()
                    .any(|r| r.get::<_, &str>(0) == *k && r.get::<_, Option<&str>>(1) != Some(*v))
            })
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect())
    }

    fn html(&self, path: &Path) {
        let report = session_report(&self.env.server.version, self.recorder.entries());
        let page = html::page(&[report], html::Kind::Session, &self.style);
        match std::fs::write(path, page) {
            Ok(()) => self.said(msg::html_written(path.display().to_string())),
            Err(e) => self.said(msg::not_written(path.display().to_string(), e.to_string())),
        }
    }
}

/// A shell session as its `\html` page shows it: what the sessions ran, in
/// time order, which nothing expected.
pub fn session_report(version: &str, timeline: Vec<crate::report::Entry>) -> ScenarioReport {
    let mut report = ScenarioReport::new("shell", version);
    let mut v = VariantReport::new("session", msg::about_saved(version), msg::help());
    v.sqlstates = timeline.iter().filter_map(|e| e.sqlstate.clone()).collect();
    v.timeline = timeline;
    report.variants.push(v);
    report
}

/// What pg_locks says a backend waits for, in parts, as the server names
/// them; `held_*`: the row whose tuple lock it holds (it is first in line
/// for that row).
#[derive(Debug, Default)]
struct LockParts {
    mode: Option<String>,
    locktype: Option<String>,
    transactionid: Option<String>,
    virtualxid: Option<String>,
    page: Option<String>,
    tuple: Option<String>,
    relname: Option<String>,
    held_page: Option<String>,
    held_tuple: Option<String>,
    held_relname: Option<String>,
}

/// A lock in words (`ShareLock on transaction 725, tuple (0,1) of
/// stock_items`); none where pg_locks leaves out what the words need. Lock
/// modes, lock types and relation names stay as the server says them.
fn lock_words(l: &LockParts) -> Option<Text> {
    let mode = l.mode.as_deref()?;
    let lock = match l.locktype.as_deref()? {
        "transactionid" => msg::lock_on(mode, msg::lock_transaction(l.transactionid.as_deref()?)),
        "virtualxid" => msg::lock_on(mode, msg::lock_virtual(l.virtualxid.as_deref()?)),
        "tuple" => msg::lock_on(
            mode,
            msg::lock_tuple(l.page.as_deref()?, l.tuple.as_deref()?, l.relname.as_deref()?),
        ),
        "relation" => msg::lock_on(mode, msg::lock_relation(l.relname.as_deref()?)),
        other => msg::lock_on(mode, other),
    };
    // The row it is first in line for, when it holds that row's tuple lock.
    Some(match (&l.held_page, &l.held_tuple, &l.held_relname) {
        (Some(page), Some(tuple), Some(rel)) => msg::lock_for_row(lock, msg::lock_tuple(page, tuple, rel)),
        _ => lock,
    })
}

/// How long a statement waited, for a person: milliseconds under a second.
fn took(d: Duration, lang: Lang) -> String {
    if d < Duration::from_secs(1) {
        msg::millis(d.as_millis() as u64).render(lang)
    } else {
        msg::seconds(format!("{:.1}", d.as_secs_f64())).render(lang)
    }
}

/// How wide the shell's prose may be: the terminal's as it is now; piped
/// (a log, a test), lines stay whole, as psql leaves them.
fn line_width() -> usize {
    crate::output::terminal_width().unwrap_or(usize::MAX)
}

/// Prose cut at spaces to `width` columns, each line's continuation two
/// past its own indentation or, with `columns` (`\\?`'s lines, which set
/// their descriptions off in a column), under its description. A
/// `LINE n:` and the caret under it stay whole, as psql leaves them: cut,
/// the caret would point elsewhere.
fn fit(text: &str, width: usize, columns: bool) -> String {
    let mut out = Vec::new();
    for line in text.split('\n') {
        let own = line.len() - line.trim_start_matches(' ').len();
        let body = &line[own..];
        if body.starts_with("LINE ") || (!body.is_empty() && body.trim_end().chars().all(|c| c == '^')) {
            out.push(line.to_string());
            continue;
        }
        let described = body.find("  ").filter(|_| columns).map(|gap| {
            let at = own + gap + body[gap..].len() - body[gap..].trim_start_matches(' ').len();
            line[..at].chars().count()
        });
        let hang = described.filter(|c| c + 20 <= width).unwrap_or(own + 2);
        out.extend(crate::output::wrap(line, width, hang));
    }
    out.join("\n")
}

/// A result set as psql would print it, in a table.
fn rows(set: &ResultSet, style: &Style) -> String {
    let mut t = render::table(set.columns.clone(), style);
    for r in &set.rows {
        t.add_row(r.iter().map(|v| v.clone().unwrap_or_default()).collect::<Vec<_>>());
    }
    let n = set.rows.len();
    let count = if n == 1 { msg::one_row() } else { msg::rows(n as u64) };
    format!("{t}\n{}", count.render(style.lang))
}

/// The sessions `--sessions` names: one to eight, letters, digits and `_`, each once.
pub fn session_names(given: Option<&str>) -> Result<Vec<String>> {
    let names: Vec<String> = given
        .unwrap_or("A,B")
        .split(',')
        .map(|s| s.trim().to_string())
        .collect();
    let ok = (1..=8).contains(&names.len())
        && names.iter().enumerate().all(|(i, n)| {
            !n.is_empty()
                && n.len() <= 32
                && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !names[..i].iter().any(|m| m.eq_ignore_ascii_case(n))
                && !n.eq_ignore_ascii_case("setup")
        });
    if !ok {
        bail!(msg::no_sessions());
    }
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::{LockParts, lock_words};
    use crate::i18n::Lang;

    fn some(s: &str) -> Option<String> {
        Some(s.to_string())
    }

    #[test]
    fn a_lock_is_told_in_words_in_either_language() {
        let row_wait = LockParts {
            mode: some("ShareLock"),
            locktype: some("transactionid"),
            transactionid: some("725"),
            held_page: some("0"),
            held_tuple: some("1"),
            held_relname: some("stock_items"),
            ..LockParts::default()
        };
        let t = lock_words(&row_wait).unwrap();
        assert_eq!(
            t.render(Lang::En),
            "ShareLock on transaction 725, tuple (0,1) of stock_items"
        );
        assert_eq!(
            t.render(Lang::Tr),
            "stock_items tablosunun (0,1) satırı için 725 numaralı transaction üzerinde ShareLock"
        );
        let table = LockParts {
            mode: some("AccessExclusiveLock"),
            locktype: some("relation"),
            relname: some("books"),
            ..LockParts::default()
        };
        let t = lock_words(&table).unwrap();
        assert_eq!(t.render(Lang::En), "AccessExclusiveLock on relation books");
        assert_eq!(t.render(Lang::Tr), "books ilişkisi üzerinde AccessExclusiveLock");
        let tuple = LockParts {
            mode: some("AccessExclusiveLock"),
            locktype: some("tuple"),
            page: some("0"),
            tuple: some("3"),
            relname: some("orders"),
            ..LockParts::default()
        };
        assert_eq!(
            lock_words(&tuple).unwrap().render(Lang::En),
            "AccessExclusiveLock on tuple (0,3) of orders"
        );
        let vxid = LockParts {
            mode: some("ShareLock"),
            locktype: some("virtualxid"),
            virtualxid: some("4/12"),
            ..LockParts::default()
        };
        assert_eq!(
            lock_words(&vxid).unwrap().render(Lang::En),
            "ShareLock on virtual transaction 4/12"
        );
        let advisory = LockParts {
            mode: some("ExclusiveLock"),
            locktype: some("advisory"),
            ..LockParts::default()
        };
        assert_eq!(
            lock_words(&advisory).unwrap().render(Lang::Tr),
            "advisory üzerinde ExclusiveLock"
        );
        // What the words need and pg_locks left out: no words, as before.
        let gone = LockParts { relname: None, ..table };
        assert!(lock_words(&gone).is_none());
        assert!(lock_words(&LockParts::default()).is_none());
    }

    #[test]
    fn the_help_lines_up_its_descriptions_in_either_language() {
        for lang in [Lang::En, Lang::Tr] {
            let help = super::msg::help().render(lang);
            let starts: Vec<usize> = help
                .lines()
                .map(|l| {
                    let chars: Vec<char> = l.chars().collect();
                    (2..chars.len())
                        .find(|&i| chars[i - 1] == ' ' && chars[i - 2] == ' ' && chars[i] != ' ' && i > 3)
                        .unwrap_or(0)
                })
                .collect();
            assert!(
                starts.iter().all(|s| *s == starts[0] && *s > 0),
                "{lang:?}: {starts:?}\n{help}"
            );
        }
    }

    #[test]
    fn prose_fits_the_terminal_but_a_caret_stays_under_its_character() {
        let w = 40;
        let waits = "⏳ A waits for B (ShareLock on transaction 7453, B's UPDATE stock SET on_hand = on_hand - 1)";
        let lines: Vec<String> = super::fit(waits, w, false).lines().map(String::from).collect();
        assert!(
            lines.len() > 2 && lines.iter().all(|l| l.chars().count() <= w),
            "{lines:#?}"
        );
        assert!(
            lines[1..].iter().all(|l| l.starts_with("  ") && !l.starts_with("   ")),
            "{lines:#?}"
        );
        // Cut only at spaces: the words read back as they were.
        let words: Vec<&str> = lines.iter().flat_map(|l| l.split_whitespace()).collect();
        assert_eq!(words, waits.split_whitespace().collect::<Vec<_>>());

        // An error's LINE and caret are left as they are, however long.
        let error = "✖ A ERROR 42703: column \"nope\" does not exist\n  LINE 1: SELECT nope FROM stock WHERE book_id = 1 AND on_hand > 0 AND title IS NOT NULL\n                 ^";
        let fitted = super::fit(error, w, false);
        assert!(fitted.ends_with(&error[error.find("\n  LINE").unwrap()..]), "{fitted}");

        // \\?'s descriptions go on under their column.
        let help = super::fit(&super::msg::help().render(Lang::En), 60, true);
        let save: Vec<&str> = help.lines().skip_while(|l| !l.contains("\\save")).take(2).collect();
        assert_eq!(save[0].find("write"), Some(21), "{help}");
        assert_eq!(save[1].len() - save[1].trim_start().len(), 21, "{help}");
        assert!(help.lines().all(|l| l.chars().count() <= 60), "{help}");
    }

    #[test]
    fn session_names_are_checked() {
        assert_eq!(super::session_names(None).unwrap(), ["A", "B"]);
        assert_eq!(super::session_names(Some("a, b,C")).unwrap(), ["a", "b", "C"]);
        for bad in ["", "A,a", "A,,B", "A B", "A,setup", "1,2,3,4,5,6,7,8,9", "A;DROP"] {
            assert!(super::session_names(Some(bad)).is_err(), "{bad}");
        }
    }
}
