//! The workload: transactions generated from a seed over a few keys of a
//! list-append table, run by several sessions at one isolation level, each
//! recorded with its session, start and end, what it read and how it ended.
//!
//! As Jepsen's list-append does, a key takes a bounded number of appends and
//! is then retired for a fresh one, so reads stay short however long the
//! run; every appended element is unique.
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use tokio_postgres::Client;

use super::chaos::{Chaos, connection_gone};
use super::check::Level;
use super::history::{Elem, Key, Op, STANDBY, Scan, Status, Txn};
use super::msg;
use crate::i18n::Context;
use crate::postgres::ConnInfo;
use crate::postgres::connect;

/// The table every session appends to and reads from.
pub const TABLE: &str = "append";
pub const CREATE: &str = "CREATE TABLE append (k bigint PRIMARY KEY, v bigint[] NOT NULL)";
/// Jepsen's append: the row made if it is not there, else the element added at the end.
pub const APPEND: &str =
    "INSERT INTO append AS t (k, v) VALUES ($1, ARRAY[$2::bigint]) ON CONFLICT (k) DO UPDATE SET v = t.v || $2::bigint";
pub const READ: &str = "SELECT v FROM append WHERE k = $1";
/// An rw-register's write (`--workload rw-register`): the row made if it is
/// not there, else its value replaced whole, blind (what was there is not
/// read). The value is kept as a list of one, so a read is [`READ`].
pub const WRITE: &str =
    "INSERT INTO append AS t (k, v) VALUES ($1, ARRAY[$2::bigint]) ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v";
/// A read through pgpool-II: the list, and how far the server that
/// answered had replayed the primary's WAL (NULL on the primary itself).
/// Always one row. Through pgpool-II every statement goes in the simple
/// query protocol (its values written in: integers only): pgpool-II 4.3
/// loses track of the extended protocol's messages after an error on one
/// server ("unexpected message from server"). lab/pgpool.conf lists the
/// function as read-only: the read is balanced as any other.
fn read_balanced(key: Key) -> String {
    format!("SELECT (SELECT v FROM append WHERE k = {key}), pg_last_wal_replay_lsn()::text, now()::text")
}

/// A predicate read through pgpool-II: the rows of keys `lo..=hi` as a
/// JSON array of [k, v] (always one row, as [`read_balanced`]'s).
fn scan_balanced(lo: Key, hi: Key) -> String {
    format!(
        "SELECT (SELECT coalesce(json_agg(json_build_array(k, v) ORDER BY k), '[]') FROM append WHERE k BETWEEN {lo} AND {hi})::text, pg_last_wal_replay_lsn()::text, now()::text"
    )
}

/// Through pgpool-II: the server's word that the standby's side of a
/// session's last transaction ended, a new one having begun there
/// (`began`, its now()) for transaction `index`; `last` kept up to date.
fn began_anew(last: &mut Option<String>, began: Option<String>, session: u64, index: u64) -> Result<()> {
    let Some(b) = began else { return Ok(()) };
    if last.as_ref() == Some(&b) {
        anyhow::bail!(msg::same_standby_txn(session, index, b));
    }
    *last = Some(b);
    Ok(())
}

/// A list as PostgreSQL writes a bigint[] in text (`{1,2,3}`).
fn parse_list(text: &str) -> Option<Vec<i64>> {
    let inner = text.strip_prefix('{')?.strip_suffix('}')?;
    if inner.is_empty() {
        return Some(Vec::new());
    }
    inner.split(',').map(|e| e.parse().ok()).collect()
}

/// The append of `elem` to `key` as a statement of its own (a spec's step).
pub fn append_sql(key: Key, elem: Elem) -> String {
    format!(
        "INSERT INTO append AS t (k, v) VALUES ({key}, ARRAY[{elem}::bigint]) ON CONFLICT (k) DO UPDATE SET v = t.v || {elem}::bigint;"
    )
}

/// An rw-register's write of `value` to `key` as a statement of its own.
pub fn write_sql(key: Key, value: Elem) -> String {
    format!(
        "INSERT INTO append AS t (k, v) VALUES ({key}, ARRAY[{value}::bigint]) ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v;"
    )
}

pub fn read_sql(key: Key) -> String {
    format!("SELECT v FROM append WHERE k = {key};")
}

/// What the generated transactions look like.
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    /// Keys in play at once.
    pub keys: usize,
    /// Operations per transaction, at most.
    pub max_ops: usize,
    /// Appends a key takes before a fresh key replaces it.
    pub max_writes: usize,
    /// The predicate workload (`--workload predicate`): predicate reads too.
    pub predicate: bool,
    /// The rw-register workload (`--workload rw-register`): writes of
    /// values, reads of one value, in place of appends and reads of lists.
    pub register: bool,
}

impl Default for Shape {
    fn default() -> Shape {
        Shape {
            keys: 4,
            max_ops: 4,
            max_writes: 32,
            predicate: false,
            register: false,
        }
    }
}

/// A transaction as generated: its number, its operations (reads not yet
/// run) and which of its reads are predicate reads.
pub type Generated = (u64, Vec<Op>, Box<[Scan]>);

/// The predicate read of keys `lo..=hi`: every row of the range, in key order.
pub const SCAN: &str = "SELECT k, v FROM append WHERE k BETWEEN $1 AND $2 ORDER BY k";

/// The same as a statement of its own (a spec's step).
pub fn scan_sql(lo: Key, hi: Key) -> String {
    format!("SELECT k, v FROM append WHERE k BETWEEN {lo} AND {hi} ORDER BY k;")
}

/// Each key of `scan`'s range with the list its row holds in `rows` ((key,
/// list) in key order, as [`SCAN`] returns them), `[]` where the range has
/// no row.
pub fn scanned(scan: &Scan, rows: &[(Key, Vec<Elem>)]) -> Vec<Vec<Elem>> {
    let mut rows = rows.iter().peekable();
    (scan.lo..=scan.hi)
        .map(|k| {
            while rows.next_if(|(r, _)| *r < k).is_some() {}
            rows.next_if(|(r, _)| *r == k)
                .map(|(_, l)| l.clone())
                .unwrap_or_default()
        })
        .collect()
}

/// The transactions of a seed, in order: the same seed, the same transactions.
///
/// The list-append workload draws each operation's key from the keys in
/// play, each retired after its appends. The predicate workload works on
/// a block of keys at a time (the keys in play, a closed set: a key not in
/// a predicate read's answer has no row yet), its operations a predicate
/// read of part of the block, a read of one key or an append (the key's
/// first makes its row: an insert into every range that holds it); the
/// block is retired for the next after two appends per key, so that
/// close to half of them are inserts.
pub struct Generator {
    state: u64,
    shape: Shape,
    /// (key, appends it took) for each key in play.
    active: Vec<(Key, usize)>,
    next_key: Key,
    next_elem: Elem,
    made: u64,
}

impl Generator {
    pub fn new(seed: u64, shape: Shape) -> Generator {
        Generator {
            state: seed,
            shape,
            active: (1..=shape.keys as Key).map(|k| (k, 0)).collect(),
            next_key: shape.keys as Key + 1,
            next_elem: 1,
            made: 0,
        }
    }

    /// splitmix64.
    fn random(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// The next transaction.
    pub fn next_txn(&mut self) -> Generated {
        if self.shape.predicate {
            return self.next_predicate_txn();
        }
        let n = 1 + (self.random() % self.shape.max_ops as u64) as usize;
        let mut ops = Vec::with_capacity(n);
        for _ in 0..n {
            let r = self.random();
            let slot = (r % self.shape.keys as u64) as usize;
            let key = self.active[slot].0;
            if (r >> 32).is_multiple_of(2) {
                ops.push(match self.shape.register {
                    true => Op::Get(key, None),
                    false => Op::Read(key, None),
                });
            } else {
                let elem = self.next_elem;
                self.next_elem += 1;
                ops.push(match self.shape.register {
                    true => Op::Write(key, elem),
                    false => Op::Append(key, elem),
                });
                self.active[slot].1 += 1;
                if self.active[slot].1 >= self.shape.max_writes {
                    self.active[slot] = (self.next_key, 0);
                    self.next_key += 1;
                }
            }
        }
        self.made += 1;
        (self.made - 1, ops, Box::default())
    }

    /// The next transaction of the predicate workload: `active[0]` is the
    /// block's first key and the appends it took.
    fn next_predicate_txn(&mut self) -> Generated {
        let keys = self.shape.keys as u64;
        let n = 1 + (self.random() % self.shape.max_ops as u64) as usize;
        let mut ops = Vec::with_capacity(n * 2);
        let mut scans = Vec::new();
        for _ in 0..n {
            let r = self.random();
            let (first, _) = self.active[0];
            let key = first + (r % keys) as Key;
            match (r >> 32) % 3 {
                0 => {
                    // A range of two keys or more where the block has them.
                    let width = 2 + (r >> 40) % keys.saturating_sub(1).max(1);
                    let lo = first + ((r >> 48) % (keys + 1).saturating_sub(width).max(1)) as Key;
                    let hi = (lo + width as Key - 1).min(first + keys as Key - 1);
                    scans.push(Scan {
                        lo,
                        hi,
                        op: ops.len() as u32,
                    });
                    ops.extend((lo..=hi).map(|k| Op::Read(k, None)));
                }
                1 => ops.push(Op::Read(key, None)),
                _ => {
                    ops.push(Op::Append(key, self.next_elem));
                    self.next_elem += 1;
                    self.active[0].1 += 1;
                    if self.active[0].1 >= 2 * self.shape.keys {
                        self.active[0] = (first + keys as Key, 0);
                    }
                }
            }
        }
        self.made += 1;
        (self.made - 1, ops, scans.into())
    }
}

/// How long the workload runs.
#[derive(Debug, Clone, Copy)]
pub enum Budget {
    Txns(u64),
    Seconds(f64),
}

/// One level's run: the generator the sessions draw from, and what they recorded.
pub struct Workload {
    pub level: Level,
    pub budget: Budget,
    generator: Mutex<Generator>,
    began: Instant,
    /// Transactions recorded, as they end (kept when the run is cut short).
    recorded: Mutex<Vec<Txn>>,
    /// Each session's transaction whose COMMIT is out and not yet
    /// answered, as an unknown outcome: a run cut short keeps it, so a
    /// read of its element (it may have committed) has a writer. Taken
    /// with `recorded` locked first, in [`Workload::record`] and
    /// [`Workload::so_far`] alike, so none is lost or kept twice.
    committing: Mutex<Vec<Txn>>,
    /// The level each session read back from the server.
    pub read_back: Mutex<Vec<String>>,
    done: AtomicU64,
    stopped: std::sync::atomic::AtomicBool,
    /// Each statement's deadline.
    pub deadline: Duration,
    pub bar: indicatif::ProgressBar,
    /// The nemesis the sessions live through (none: a lost connection ends the run).
    pub chaos: Option<Arc<Chaos>>,
    /// Through pgpool-II (`--via pgpool`): it decides which server answers
    /// each statement, and each read says which one did ([`READ_BALANCED`]).
    pub balanced: bool,
    /// Where each read-only transaction goes (`--replica`), drawn from it.
    seed: u64,
}

/// Whether transaction `index` of the seed's, read-only, goes to the
/// standby (`--replica`): half of them, the same ones for the same seed.
pub fn to_standby(seed: u64, index: u64, ops: &[Op]) -> bool {
    if !ops.iter().all(|o| matches!(o, Op::Read(..) | Op::Get(..))) {
        return false;
    }
    // splitmix64 of (seed, index): no shared state between the sessions.
    let mut z = (seed ^ 0x7265_706c_6963_6121).wrapping_add(index.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (z ^ (z >> 31)).is_multiple_of(2)
}

/// A session ready to run transactions.
struct Prepared {
    backend: i32,
    statements: Statements,
}

/// A connection's prepared statements.
struct Statements {
    append: tokio_postgres::Statement,
    select: tokio_postgres::Statement,
    scan: tokio_postgres::Statement,
    write: tokio_postgres::Statement,
}

impl Statements {
    async fn prepare(client: &Client) -> Result<Statements, tokio_postgres::Error> {
        Ok(Statements {
            append: client.prepare(APPEND).await?,
            select: client.prepare(READ).await?,
            write: client.prepare(WRITE).await?,
            scan: client.prepare(SCAN).await?,
        })
    }
}

/// How one statement ended.
enum Outcome<T> {
    Ok(T),
    /// A serialization failure or deadlock: the transaction is aborted, as the level allows.
    Abort(String),
    /// The connection went under a nemesis that ends connections (its
    /// SQLSTATE, if the server said one).
    Lost(Option<String>),
    /// Anything else: the run cannot go on.
    Error(anyhow::Error),
}

impl<T> Outcome<T> {
    fn map<U>(self, f: impl FnOnce(T) -> U) -> Outcome<U> {
        match self {
            Outcome::Ok(v) => Outcome::Ok(f(v)),
            Outcome::Abort(c) => Outcome::Abort(c),
            Outcome::Lost(c) => Outcome::Lost(c),
            Outcome::Error(e) => Outcome::Error(e),
        }
    }

    fn and_then<U>(self, f: impl FnOnce(T) -> Outcome<U>) -> Outcome<U> {
        match self {
            Outcome::Ok(v) => f(v),
            Outcome::Abort(c) => Outcome::Abort(c),
            Outcome::Lost(c) => Outcome::Lost(c),
            Outcome::Error(e) => Outcome::Error(e),
        }
    }
}

/// `f`, unless a black hole cuts the session off first (then none).
async fn unless_cut<T>(
    cuts: &mut Option<tokio::sync::watch::Receiver<u64>>,
    f: impl std::future::Future<Output = T>,
) -> Option<T> {
    let cut = async {
        let changed = match cuts {
            Some(rx) => rx.changed().await.is_ok(),
            None => false,
        };
        if !changed {
            std::future::pending::<()>().await
        }
    };
    tokio::select! {
        r = f => Some(r),
        () = cut => None,
    }
}

/// Where a session connects.
pub struct Link {
    /// The server (through lab's fault proxy under a partition nemesis).
    pub pg: ConnInfo,
    /// Its application_name.
    pub app: String,
    /// Run on each new connection (the search_path).
    pub setup: String,
}

/// How a session's run on one connection ended.
enum Ended {
    /// The budget is spent (or the run stops).
    Done,
    /// The connection went (a nemesis): `backend` is the one it had;
    /// `partitioned`: lab's proxy cut it off, and the server may keep it.
    Lost { backend: i32, partitioned: bool },
}

impl Workload {
    pub fn new(
        level: Level,
        budget: Budget,
        seed: u64,
        shape: Shape,
        deadline: Duration,
        bar: indicatif::ProgressBar,
    ) -> Workload {
        Workload {
            level,
            budget,
            generator: Mutex::new(Generator::new(seed, shape)),
            seed,
            began: Instant::now(),
            recorded: Mutex::default(),
            committing: Mutex::default(),
            read_back: Mutex::default(),
            done: AtomicU64::new(0),
            stopped: Default::default(),
            deadline,
            bar,
            chaos: None,
            balanced: false,
        }
    }

    /// The instant the transactions' clock counts from.
    pub fn began(&self) -> Instant {
        self.began
    }

    fn now(&self) -> u64 {
        self.began.elapsed().as_nanos() as u64
    }

    /// No session starts another transaction (one failed, or the run stops).
    pub fn stop(&self) {
        self.stopped.store(true, Ordering::SeqCst);
    }

    /// The next transaction to run, while the budget lasts.
    fn next(&self) -> Option<Generated> {
        if self.stopped.load(Ordering::SeqCst) {
            return None;
        }
        let mut g = self.generator.lock().unwrap();
        match self.budget {
            Budget::Txns(n) if g.made >= n => None,
            Budget::Seconds(s) if self.began.elapsed().as_secs_f64() >= s => None,
            _ => Some(g.next_txn()),
        }
    }

    /// One session: connected (again, after a nemesis ended its
    /// connection, once a partition has healed and the backend it leaves
    /// is gone), then transactions until the budget is spent.
    /// With `standby`, its read-only transactions go there or to the
    /// primary ([`to_standby`]).
    pub async fn session(&self, link: &Link, standby: Option<&Link>, session: u64) -> Result<()> {
        let i = (session - 1) as usize;
        loop {
            // Subscribed before the partition is looked at: a black hole
            // from now on is seen, while connecting too.
            let mut cuts = self.chaos.as_ref().map(|c| c.cuts(i));
            let on_standby = match standby {
                Some(l) => Some(connect::connect(&l.pg, &l.app, Some(&l.setup), None).await?),
                None => None,
            };
            let conn = match &self.chaos {
                Some(c) => {
                    c.healed(i).await;
                    match unless_cut(&mut cuts, c.connect(&link.pg, &link.app, Some(&link.setup))).await {
                        Some(conn) => conn?,
                        // Cut off while connecting: again once the partition heals.
                        None => continue,
                    }
                }
                None => connect::connect(&link.pg, &link.app, Some(&link.setup), None).await?,
            };
            match self
                .client(&conn.client, on_standby.as_ref().map(|c| &c.client), session, &mut cuts)
                .await?
            {
                Ended::Done => return Ok(()),
                Ended::Lost { backend, partitioned } => {
                    drop(conn);
                    if partitioned && let Some(c) = &self.chaos {
                        c.healed(i).await;
                        c.bury(backend).await?;
                    }
                }
            }
        }
    }

    /// One session's run on one connection: its level set and read back,
    /// then transactions until the budget is spent or (under a nemesis)
    /// the connection goes. An error no level explains ends the run.
    async fn client(
        &self,
        client: &Client,
        standby: Option<&Client>,
        session: u64,
        cut_off: &mut Option<tokio::sync::watch::Receiver<u64>>,
    ) -> Result<Ended> {
        let i = (session - 1) as usize;
        let partitioned = || self.chaos.as_ref().is_some_and(|c| c.partitioned(i));
        let Prepared { backend, statements } = match self.prepare(client, i, cut_off).await? {
            Ok(p) => p,
            Err(lost) => return Ok(lost),
        };
        let standby = match standby {
            Some(s) => Some((s, Statements::prepare(s).await?)),
            None => None,
        };
        let mut no_cuts = None;
        let mut last_there: Option<String> = None;
        // The level named in every BEGIN too (the session's default, read back, is the same).
        let begin = format!("BEGIN ISOLATION LEVEL {}", self.level.sql().to_uppercase());
        while let Some((index, mut ops, scans)) = self.next() {
            // A read-only transaction on the standby (`--replica`), or on the primary.
            let there = standby.as_ref().filter(|_| to_standby(self.seed, index, &ops));
            let (client, statements, cuts) = match there {
                Some((s, st)) => (*s, st, &mut no_cuts),
                None => (client, &statements, &mut *cut_off),
            };
            let start = self.now();
            let (outcome, at, lsn, began_there) = self
                .operations(client, (&begin, statements), (&mut ops, &scans), there.is_some(), cuts)
                .await;
            began_anew(&mut last_there, began_there, session, index)?;
            let mut xid = None;
            let mut gone = false;
            let ended = match outcome {
                // The transaction's id, read in the COMMIT's own message (no
                // round trip more): the server's commit order can be asked later.
                Outcome::Ok(()) => {
                    self.committing.lock().unwrap().push(Txn {
                        backend: Some(backend),
                        scans: scans.clone(),
                        ..Txn::new(index, session, Status::Info, start, unknown_reads(&ops))
                    });
                    let commit = match there {
                        Some(_) => self.bounded(client.simple_query(COMMIT), cuts).await,
                        None => self.bounded(self.commit(client, i, backend), cuts).await,
                    };
                    match commit {
                        Outcome::Ok(answer) => {
                            xid = assigned_xid(&answer);
                            Ok((Status::Ok, None))
                        }
                        Outcome::Abort(c) => Ok((Status::Fail, Some(c))),
                        // The COMMIT went out and its answer never came: it
                        // may have committed (Jepsen's :info).
                        Outcome::Lost(c) => {
                            gone = true;
                            Ok((Status::Info, c))
                        }
                        // The outcome of a COMMIT whose answer never came is unknown.
                        Outcome::Error(e) => Err((Status::Info, None, e)),
                    }
                }
                Outcome::Abort(c) => match self.bounded(client.batch_execute("ROLLBACK"), cuts).await {
                    Outcome::Error(e) => Err((Status::Fail, Some(c), e)),
                    Outcome::Lost(_) => {
                        gone = true;
                        Ok((Status::Fail, Some(c)))
                    }
                    _ => Ok((Status::Fail, Some(c))),
                },
                // No COMMIT was sent: the server cannot have committed it.
                Outcome::Lost(c) => {
                    gone = true;
                    Ok((Status::Fail, c))
                }
                Outcome::Error(e) => Err((Status::Fail, None, e)),
            };
            let end = self.now();
            let txn = |status, sqlstate: Option<String>, ops, at| Txn {
                sqlstate: sqlstate.map(String::into_boxed_str),
                end: (status != Status::Info).then_some(end),
                at,
                xid,
                // The standby's backend is not the session's; through
                // pgpool-II the session has one on each server.
                backend: (there.is_none() && !self.balanced).then_some(backend),
                node: (there.is_some() || lsn.is_some()).then(|| STANDBY.into()),
                lsn: lsn.clone().map(String::into_boxed_str),
                scans: scans.clone(),
                ..Txn::new(index, session, status, start, ops)
            };
            match ended {
                Ok((status, sqlstate)) => {
                    // An unknown outcome keeps its appends, not its reads (Jepsen's :info).
                    let ops = if status == Status::Info {
                        unknown_reads(&ops)
                    } else {
                        ops
                    };
                    self.record(txn(status, sqlstate, ops, at));
                    if gone {
                        return Ok(Ended::Lost {
                            backend,
                            partitioned: partitioned(),
                        });
                    }
                }
                Err((status, sqlstate, e)) => {
                    self.record(txn(status, sqlstate, ops, at));
                    // Which session and which transaction (its index in the history).
                    return Err(e).ctx(|| msg::in_txn(session, index));
                }
            }
        }
        Ok(Ended::Done)
    }

    /// The session made ready, within the deadline: its level set and
    /// read back, its backend, the statements prepared. A connection a
    /// nemesis ended (or a black hole cut off) meanwhile is `Err(Lost)`.
    async fn prepare(
        &self,
        client: &Client,
        i: usize,
        cut_off: &mut Option<tokio::sync::watch::Receiver<u64>>,
    ) -> Result<std::result::Result<Prepared, Ended>> {
        let set = format!("SET default_transaction_isolation = '{}'", self.level.sql());
        let lost =
            |e: &tokio_postgres::Error| self.chaos.as_ref().is_some_and(|c| c.ends_connections()) && connection_gone(e);
        let prepared = async {
            client.batch_execute(&set).await?;
            // A deadlock between two sessions is found after the waiting one's
            // deadlock_timeout (1 s by default): the hunt's come every few hundred
            // transactions, so a short one keeps the run going. Only a superuser
            // may set it; elsewhere the server's stands.
            if let Err(e) = client.batch_execute("SET deadlock_timeout = '10ms'").await
                && e.code() != Some(&tokio_postgres::error::SqlState::INSUFFICIENT_PRIVILEGE)
            {
                return Err(e);
            }
            let read = client
                .simple_query("BEGIN; SHOW transaction_isolation; COMMIT")
                .await?
                .into_iter()
                .find_map(|m| match m {
                    tokio_postgres::SimpleQueryMessage::Row(r) => r.get(0).map(str::to_string),
                    _ => None,
                })
                .unwrap_or_default();
            let backend = client.query_one("SELECT pg_backend_pid()", &[]).await?.get::<_, i32>(0);
            Ok((read, backend, Statements::prepare(client).await?))
        };
        // Within the deadline, and given up when a black hole cuts it off.
        let prepared = tokio::time::timeout(self.deadline, unless_cut(cut_off, prepared))
            .await
            .map_err(|_| anyhow::anyhow!(msg::no_answer(self.deadline.as_secs_f64())))?;
        let Some(prepared) = prepared else {
            return Ok(Err(Ended::Lost {
                backend: 0,
                partitioned: true,
            }));
        };
        let (read, backend, statements) = match prepared {
            Ok(p) => p,
            Err(e) if lost(&e) => {
                let partitioned = self.chaos.as_ref().is_some_and(|c| c.partitioned(i));
                return Ok(Err(Ended::Lost {
                    backend: 0,
                    partitioned,
                }));
            }
            Err(e) => return Err(e.into()),
        };
        self.read_back.lock().unwrap().push(read);
        if let Some(c) = &self.chaos {
            c.backend(i, backend);
        }
        Ok(Ok(Prepared { backend, statements }))
    }

    /// BEGIN and a transaction's operations, each read filling in what it
    /// returned, until one does not go through: how the last ended, when
    /// the server answered each, and (on the standby) how far it had
    /// replayed the primary's WAL as the snapshot was taken.
    async fn operations(
        &self,
        client: &Client,
        (begin, statements): (&str, &Statements),
        (ops, scans): (&mut [Op], &[Scan]),
        on_standby: bool,
        cuts: &mut Option<tokio::sync::watch::Receiver<u64>>,
    ) -> (Outcome<()>, Vec<u64>, Option<String>, Option<String>) {
        let mut outcome = self.bounded(client.batch_execute(begin), cuts).await;
        let mut lsn = None;
        // Through pgpool-II: when the transaction began on the standby (its now()).
        let mut began_there = None;
        if on_standby && matches!(outcome, Outcome::Ok(_)) {
            outcome = self
                .bounded(client.query_one("SELECT pg_last_wal_replay_lsn()::text", &[]), cuts)
                .await
                .map(|row| lsn = row.get::<_, Option<String>>(0));
        }
        let mut at = Vec::with_capacity(ops.len());
        let Statements {
            append,
            select,
            scan,
            write,
        } = statements;
        for i in 0..ops.len() {
            if !matches!(outcome, Outcome::Ok(_)) {
                break;
            }
            if let Some(s) = Scan::at(scans, i) {
                // A predicate read: its first key's op runs it for the whole range.
                if i == s.op as usize && self.balanced {
                    let sql = scan_balanced(s.lo, s.hi);
                    let row = self.balanced_row(client, &sql, cuts, (&mut lsn, &mut began_there));
                    outcome = row.await.and_then(|v| {
                        let rows: Option<Vec<(Key, Vec<Elem>)>> = v.and_then(|t| serde_json::from_str(&t).ok());
                        let Some(rows) = rows else {
                            return Outcome::Error(anyhow::anyhow!(msg::statement()));
                        };
                        for (op, list) in ops[s.ops()].iter_mut().zip(scanned(s, &rows)) {
                            if let Op::Read(_, seen) = op {
                                *seen = Some(list);
                            }
                        }
                        Outcome::Ok(())
                    });
                } else if i == s.op as usize {
                    outcome = self.scan(client, scan, s, &mut ops[s.ops()], cuts).await;
                }
                if matches!(outcome, Outcome::Ok(_)) {
                    at.push(self.now());
                }
                continue;
            }
            let op = &mut ops[i];
            outcome = match op {
                Op::Append(k, v) if self.balanced => (self.bounded(client.simple_query(&append_sql(*k, *v)), cuts))
                    .await
                    .map(|_| ()),
                Op::Append(k, v) => self
                    .bounded(client.execute(append, &[&*k, &*v]), cuts)
                    .await
                    .map(|_| ()),
                Op::Read(k, seen) if self.balanced => {
                    (self.balanced_list(client, *k, cuts, (&mut lsn, &mut began_there)))
                        .await
                        .map(|list| *seen = Some(list))
                }
                Op::Read(k, seen) => self.bounded(client.query_opt(select, &[&*k]), cuts).await.map(|row| {
                    *seen = Some(row.map(|r| r.get::<_, Vec<i64>>(0)).unwrap_or_default());
                }),
                Op::Write(k, v) if self.balanced => (self.bounded(client.simple_query(&write_sql(*k, *v)), cuts))
                    .await
                    .map(|_| ()),
                Op::Write(k, v) => self.bounded(client.execute(write, &[&*k, &*v]), cuts).await.map(|_| ()),
                Op::Get(k, seen) if self.balanced => {
                    (self.balanced_list(client, *k, cuts, (&mut lsn, &mut began_there)))
                        .await
                        .map(|list| *seen = list.first().copied())
                }
                Op::Get(k, seen) => self.bounded(client.query_opt(select, &[&*k]), cuts).await.map(|row| {
                    *seen = row.and_then(|r| r.get::<_, Vec<i64>>(0).first().copied());
                }),
            };
            if matches!(outcome, Outcome::Ok(_)) {
                at.push(self.now());
            }
        }
        (outcome, at, lsn, began_there)
    }

    /// Key `k`'s list read through pgpool-II ([]: no row).
    async fn balanced_list(
        &self,
        client: &Client,
        k: Key,
        cuts: &mut Option<tokio::sync::watch::Receiver<u64>>,
        there: (&mut Option<String>, &mut Option<String>),
    ) -> Outcome<Vec<Elem>> {
        let sql = read_balanced(k);
        (self.balanced_row(client, &sql, cuts, there).await).and_then(|v| {
            match v.map_or(Some(Vec::new()), |t| parse_list(&t)) {
                Some(list) => Outcome::Ok(list),
                None => Outcome::Error(anyhow::anyhow!(msg::statement())),
            }
        })
    }

    /// A read through pgpool-II (`sql`: one row, its value first, then the
    /// answering server's replay LSN and now()): the value as text. The
    /// transaction's first read the standby answered says where it read
    /// (`there`: the LSN it had replayed to, and its transaction's start).
    async fn balanced_row(
        &self,
        client: &Client,
        sql: &str,
        cuts: &mut Option<tokio::sync::watch::Receiver<u64>>,
        (lsn, began_there): (&mut Option<String>, &mut Option<String>),
    ) -> Outcome<Option<String>> {
        (self.bounded(client.simple_query(sql), cuts).await).map(|answer| {
            let row = (crate::postgres::connect::text_rows(&answer).into_iter().next()).unwrap_or_default();
            if lsn.is_none() {
                *lsn = row.get(1).cloned().flatten();
                *began_there = lsn.as_ref().and(row.get(2).cloned().flatten());
            }
            row.first().cloned().flatten()
        })
    }

    /// The predicate read `s`: what it returned of each key of its range, in `reads`.
    async fn scan(
        &self,
        client: &Client,
        statement: &tokio_postgres::Statement,
        s: &Scan,
        reads: &mut [Op],
        cuts: &mut Option<tokio::sync::watch::Receiver<u64>>,
    ) -> Outcome<()> {
        (self.bounded(client.query(statement, &[&s.lo, &s.hi]), cuts).await).map(|rows| {
            let rows: Vec<(Key, Vec<Elem>)> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
            for (op, list) in reads.iter_mut().zip(scanned(s, &rows)) {
                if let Op::Read(_, seen) = op {
                    *seen = Some(list);
                }
            }
        })
    }

    /// COMMIT sent; a pause waiting for this session's next COMMIT is told
    /// once the request is on its way to the server.
    async fn commit(
        &self,
        client: &Client,
        i: usize,
        backend: i32,
    ) -> Result<Vec<tokio_postgres::SimpleQueryMessage>, tokio_postgres::Error> {
        if self.balanced {
            // Through pgpool-II a query of two statements goes to the
            // primary only: the standby's side of the transaction would
            // stay open, and the session's next reads there would see its
            // snapshot. The id first (to the primary), then COMMIT alone,
            // which pgpool-II sends to every server in the transaction.
            let mut answer = client.simple_query("SELECT txid_current_if_assigned()").await?;
            answer.extend(client.simple_query("COMMIT").await?);
            return Ok(answer);
        }
        let commit = client.simple_query(COMMIT);
        tokio::pin!(commit);
        let first = tokio::select! {
            biased;
            r = &mut commit => Some(r),
            _ = std::future::ready(()) => None,
        };
        match first {
            Some(r) => r,
            None => {
                if let Some(c) = &self.chaos {
                    c.committing(i, backend);
                }
                commit.await
            }
        }
    }

    fn record(&self, txn: Txn) {
        {
            let mut recorded = self.recorded.lock().unwrap();
            self.committing
                .lock()
                .unwrap()
                .retain(|t| (t.session, t.index) != (txn.session, txn.index));
            recorded.push(txn);
        }
        let n = self.done.fetch_add(1, Ordering::Relaxed) + 1;
        match self.budget {
            Budget::Txns(_) => self.bar.set_position(n),
            Budget::Seconds(_) => self.bar.set_position(self.began.elapsed().as_secs()),
        }
    }

    /// What was recorded so far, with each COMMIT still out as an unknown
    /// outcome (a run cut short: the server may have committed it, and a
    /// recorded read may have seen its element).
    pub fn so_far(&self) -> Vec<Txn> {
        let mut recorded = self.recorded.lock().unwrap();
        let mut txns = std::mem::take(&mut *recorded);
        txns.append(&mut self.committing.lock().unwrap());
        txns
    }

    /// A statement within its deadline; a serialization failure (40001)
    /// or a deadlock (40P01) is an abort; under a nemesis that ends
    /// connections, the connection gone (or cut off by a partition, which
    /// `cuts` says) is lost; anything else an error.
    async fn bounded<T>(
        &self,
        f: impl std::future::Future<Output = Result<T, tokio_postgres::Error>>,
        cuts: &mut Option<tokio::sync::watch::Receiver<u64>>,
    ) -> Outcome<T> {
        let cut = async {
            match cuts {
                Some(rx) => {
                    if rx.changed().await.is_err() {
                        std::future::pending::<()>().await
                    }
                }
                None => std::future::pending::<()>().await,
            }
        };
        let answer = tokio::select! {
            r = tokio::time::timeout(self.deadline, f) => r,
            () = cut => return Outcome::Lost(None),
        };
        let ends = self.chaos.as_ref().is_some_and(|c| c.ends_connections());
        match answer {
            Err(_) => Outcome::Error(anyhow::anyhow!(msg::no_answer(self.deadline.as_secs_f64()))),
            Ok(Ok(v)) => Outcome::Ok(v),
            Ok(Err(e)) => match e.code().map(|c| c.code()) {
                Some(c @ ("40001" | "40P01")) => Outcome::Abort(c.to_string()),
                // Through pgpool-II, now and then under load: a statement of a
                // new transaction fails with "current transaction is aborted".
                // This one is recorded failed with it, the session opened
                // again (new backends), and the run counts them.
                Some(c @ "25P02") if self.balanced => Outcome::Lost(Some(c.to_string())),
                _ if ends && connection_gone(&e) => Outcome::Lost(e.code().map(|c| c.code().to_string())),
                _ => Outcome::Error(crate::postgres::connect::sql_error(e, msg::statement())),
            },
        }
    }
}

/// A transaction's COMMIT, its id (if it has one: it wrote) read first.
const COMMIT: &str = "SELECT txid_current_if_assigned(); COMMIT";

/// The id `COMMIT` read (none for a transaction that wrote nothing).
fn assigned_xid(answer: &[tokio_postgres::SimpleQueryMessage]) -> Option<u64> {
    let row = crate::postgres::connect::text_rows(answer).into_iter().next()?;
    row.into_iter().next().flatten()?.parse().ok()
}

/// The level every session read back, or why not.
pub fn level_read_back(read: &[String], asked: Level) -> Result<String> {
    for r in read {
        if Level::parse(r) != Some(asked) {
            bail!(msg::level_differs(asked.sql(), r));
        }
    }
    Ok(asked.sql().to_string())
}

/// A transaction's operations as an unknown outcome holds them: its
/// appends, its reads unknown (Jepsen's :info carries no reads).
fn unknown_reads(ops: &[Op]) -> Vec<Op> {
    (ops.iter())
        .map(|o| match o {
            Op::Read(k, _) => Op::Read(*k, None),
            Op::Get(k, _) => Op::Get(*k, None),
            a => a.clone(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run cut short while T1's COMMIT was out, after T2 (recorded) read
    /// T1's element: T1 is kept as an unknown outcome, so the element has
    /// a writer (no garbage read) and T1 counts as committed; once T1 is
    /// recorded it is there once.
    #[test]
    fn a_commit_still_out_is_kept_as_unknown() {
        let bar = indicatif::ProgressBar::hidden();
        let w = Workload::new(
            Level::Serializable,
            Budget::Txns(2),
            1,
            Shape::default(),
            Duration::from_secs(1),
            bar,
        );
        let txn = |index, session, status, ops| Txn::new(index, session, status, 0, ops);
        w.committing.lock().unwrap().push(txn(
            1,
            1,
            Status::Info,
            unknown_reads(&[Op::Read(1, Some(vec![])), Op::Append(1, 10)]),
        ));
        w.record(txn(2, 2, Status::Ok, vec![Op::Read(1, Some(vec![10]))]));
        let history = crate::commands::hunt::history::History {
            header: None,
            txns: w.so_far(),
            ..Default::default()
        };
        assert_eq!(history.txns[1].ops, vec![Op::Read(1, None), Op::Append(1, 10)]);
        let c = crate::commands::hunt::check::check(&history, Default::default()).unwrap();
        assert!(c.anomalies.is_empty(), "{:?}", c.names());
        assert_eq!(c.committed, 2);
        // Without it, T2's read of 10 is garbage: the false alarm this prevents.
        let alone = crate::commands::hunt::history::History {
            header: None,
            txns: vec![history.txns[0].clone()],
            ..Default::default()
        };
        let names = crate::commands::hunt::check::check(&alone, Default::default())
            .unwrap()
            .names();
        assert_eq!(names.iter().map(|n| n.text()).collect::<Vec<_>>(), ["garbage-read"]);
        // Recorded at last: kept once.
        w.committing
            .lock()
            .unwrap()
            .push(txn(3, 1, Status::Info, vec![Op::Append(2, 11)]));
        w.record(txn(3, 1, Status::Ok, vec![Op::Append(2, 11)]));
        assert_eq!(w.so_far().len(), 1);
    }

    #[test]
    fn half_the_read_only_transactions_go_to_the_standby_the_same_for_a_seed() {
        let reads = vec![Op::Read(1, None), Op::Read(2, None)];
        let writes = vec![Op::Read(1, None), Op::Append(1, 5)];
        let picked: Vec<bool> = (0..1000).map(|i| to_standby(7, i, &reads)).collect();
        let n = picked.iter().filter(|p| **p).count();
        assert!((400..600).contains(&n), "{n}");
        assert_eq!(picked, (0..1000).map(|i| to_standby(7, i, &reads)).collect::<Vec<_>>());
        assert_ne!(picked, (0..1000).map(|i| to_standby(8, i, &reads)).collect::<Vec<_>>());
        assert!((0..1000).all(|i| !to_standby(7, i, &writes)));
    }

    #[test]
    fn the_same_seed_gives_the_same_transactions() {
        let shape = Shape::default();
        let a: Vec<_> = {
            let mut g = Generator::new(7, shape);
            (0..200).map(|_| g.next_txn()).collect()
        };
        let mut g = Generator::new(7, shape);
        let b: Vec<_> = (0..200).map(|_| g.next_txn()).collect();
        assert_eq!(a, b);
        let mut g = Generator::new(8, shape);
        let c: Vec<_> = (0..200).map(|_| g.next_txn()).collect();
        assert_ne!(a, c);
    }

    #[test]
    fn the_predicate_workload_reads_ranges_of_one_block_at_a_time() {
        let shape = Shape {
            keys: 4,
            predicate: true,
            ..Shape::default()
        };
        let mut g = Generator::new(3, shape);
        let txns: Vec<Generated> = (0..300).map(|_| g.next_txn()).collect();
        let mut inserts = 0;
        let mut made: std::collections::BTreeSet<Key> = Default::default();
        for (_, ops, scans) in &txns {
            for s in scans.iter() {
                assert_eq!(s.damage(ops), None, "{s:?} {ops:?}");
                assert!(s.hi > s.lo, "a range of two keys or more: {s:?}");
                // Within one block of four keys.
                assert_eq!((s.lo - 1) / 4, (s.hi - 1) / 4, "{s:?}");
            }
            for o in ops {
                if let Op::Append(k, _) = o {
                    inserts += made.insert(*k) as usize;
                }
            }
        }
        let appends = txns
            .iter()
            .flat_map(|t| &t.1)
            .filter(|o| matches!(o, Op::Append(..)))
            .count();
        // Two appends per key of a block, on keys drawn at random: close
        // to half of them make the row (1 - (3/4)^8 of a block's keys are
        // written at all).
        assert!(inserts * 5 >= appends * 2, "{inserts} of {appends}");
        assert!(txns.iter().filter(|t| !t.2.is_empty()).count() > 100);
        let again: Vec<Generated> = {
            let mut g = Generator::new(3, shape);
            (0..300).map(|_| g.next_txn()).collect()
        };
        assert_eq!(txns, again);
    }

    #[test]
    fn a_range_s_rows_are_read_key_by_key() {
        let s = Scan { lo: 5, hi: 8, op: 0 };
        let rows = vec![(6, vec![1, 2]), (8, vec![3])];
        assert_eq!(scanned(&s, &rows), vec![vec![], vec![1, 2], vec![], vec![3]]);
        assert_eq!(scanned(&s, &[]), vec![Vec::<Elem>::new(); 4]);
    }

    #[test]
    fn elements_are_unique_and_keys_retire() {
        let shape = Shape {
            keys: 2,
            max_ops: 4,
            max_writes: 3,
            predicate: false,
            register: false,
        };
        let mut g = Generator::new(1, shape);
        let ops: Vec<Op> = (0..100).flat_map(|_| g.next_txn().1).collect();
        let mut elems: Vec<Elem> = ops
            .iter()
            .filter_map(|o| match o {
                Op::Append(_, v) => Some(*v),
                _ => None,
            })
            .collect();
        let n = elems.len();
        elems.sort();
        elems.dedup();
        assert_eq!(elems.len(), n);
        let mut per_key: std::collections::HashMap<Key, usize> = Default::default();
        for o in &ops {
            if let Op::Append(k, _) = o {
                *per_key.entry(*k).or_default() += 1;
            }
        }
        assert!(per_key.values().all(|n| *n <= 3), "{per_key:?}");
        assert!(per_key.len() > 2);
        assert!(ops.iter().any(|o| matches!(o, Op::Read(..))));
    }
}
