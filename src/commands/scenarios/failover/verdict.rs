//! What a failover did to the writes, from what the writer recorded (each
//! write's outcome as the client saw it) and the rows read back from the
//! servers. Pure: unit-tested on hand-made histories.
use std::collections::BTreeMap;

/// How a write ended, as the client saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// COMMIT answered: the application was told it is done.
    Acked,
    /// The server answered an error: it did not commit.
    Failed,
    /// The connection went before COMMIT answered (or the client chose not
    /// to trust the answer): committed or not, nobody knows.
    Unknown,
}

/// One write the writer made.
#[derive(Debug, Clone, PartialEq)]
pub struct Write {
    pub id: i64,
    pub outcome: Outcome,
    /// The node that answered (its name), when one did.
    pub node: Option<String>,
    /// pg_current_wal_lsn() right after the commit, on that node.
    pub lsn: Option<u64>,
    /// When the outcome was known (ms into the variant).
    pub t_ms: f64,
}

/// The writes against the rows the servers hold.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Tally {
    pub acked: usize,
    /// Acknowledged, and not there.
    pub lost: Vec<i64>,
    /// Acknowledged and there.
    pub kept: usize,
    /// Outcome unknown to the client, there after all.
    pub unknown_present: Vec<i64>,
    /// Outcome unknown, not there.
    pub unknown_absent: Vec<i64>,
    /// Reported failed by the server, there all the same.
    pub failed_present: Vec<i64>,
    /// Ids there more than once.
    pub duplicates: Vec<i64>,
    /// Ids there that the writer never wrote.
    pub strangers: Vec<i64>,
}

/// Compares what the writer was told with the ids a server holds (one
/// entry per row: an id twice is a duplicate).
pub fn tally(writes: &[Write], present: &[i64]) -> Tally {
    let mut count: BTreeMap<i64, usize> = BTreeMap::new();
    for id in present {
        *count.entry(*id).or_default() += 1;
    }
    // A write retried keeps its id: its last outcome is what the client knows.
    let mut last: BTreeMap<i64, Outcome> = BTreeMap::new();
    for w in writes {
        let o = last.entry(w.id).or_insert(w.outcome);
        // Once acknowledged, a write is acknowledged whatever a retry said.
        if *o != Outcome::Acked {
            *o = w.outcome;
        }
    }
    let mut t = Tally::default();
    for (&id, &o) in &last {
        let there = count.get(&id).copied().unwrap_or(0) > 0;
        match (o, there) {
            (Outcome::Acked, true) => {
                t.acked += 1;
                t.kept += 1;
            }
            (Outcome::Acked, false) => {
                t.acked += 1;
                t.lost.push(id);
            }
            (Outcome::Unknown, true) => t.unknown_present.push(id),
            (Outcome::Unknown, false) => t.unknown_absent.push(id),
            (Outcome::Failed, true) => t.failed_present.push(id),
            (Outcome::Failed, false) => {}
        }
    }
    t.duplicates = count.iter().filter(|(_, n)| **n > 1).map(|(id, _)| *id).collect();
    t.strangers = count.keys().filter(|id| !last.contains_key(id)).copied().collect();
    t
}

/// A time the writer could not write: from its last acknowledged write
/// before a failure to its first one after (ms into the variant).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Window {
    pub last_ok_ms: f64,
    pub first_ok_ms: f64,
    /// Attempts that did not end acknowledged in between.
    pub attempts: usize,
}

impl Window {
    pub fn ms(&self) -> f64 {
        self.first_ok_ms - self.last_ok_ms
    }
}

/// The windows in which writes did not get through: each run of
/// attempts that were not acknowledged, between two that were (a run at
/// the end, never followed by an acknowledged write, is left open: none).
pub fn windows(writes: &[Write]) -> Vec<Window> {
    windows_across(writes, &[])
}

/// The same, and each gap between two acknowledged writes in which the
/// writer found its connection gone (`breaks`, ms into the variant) before
/// it tried another write: the server went away between two writes, and
/// none got through until the writer was connected again.
pub fn windows_across(writes: &[Write], breaks: &[f64]) -> Vec<Window> {
    let mut out = Vec::new();
    let mut last_ok: Option<f64> = None;
    let mut failed = 0;
    for w in writes {
        if w.outcome == Outcome::Acked {
            if let Some(last) = last_ok
                && (failed > 0 || breaks.iter().any(|b| *b >= last && *b <= w.t_ms))
            {
                out.push(Window {
                    last_ok_ms: last,
                    first_ok_ms: w.t_ms,
                    attempts: failed,
                });
            }
            last_ok = Some(w.t_ms);
            failed = 0;
        } else if last_ok.is_some() {
            failed += 1;
        }
    }
    out
}

/// The window around one event (ms into the variant): the last
/// acknowledged write before it, the first after.
pub fn window_around(writes: &[Write], event_ms: f64) -> Option<Window> {
    let before = writes
        .iter()
        .filter(|w| w.outcome == Outcome::Acked && w.t_ms <= event_ms)
        .map(|w| w.t_ms)
        .fold(None, |a: Option<f64>, t| Some(a.map_or(t, |a| a.max(t))))?;
    let after = writes
        .iter()
        .filter(|w| w.outcome == Outcome::Acked && w.t_ms > event_ms)
        .map(|w| w.t_ms)
        .fold(None, |a: Option<f64>, t| Some(a.map_or(t, |a| a.min(t))))?;
    let attempts = writes
        .iter()
        .filter(|w| w.outcome != Outcome::Acked && w.t_ms > before && w.t_ms < after)
        .count();
    Some(Window {
        last_ok_ms: before,
        first_ok_ms: after,
        attempts,
    })
}

/// The two lists write `id` appends to (`--watch`): keys of its thousand,
/// so that no list grows long.
pub fn keys(id: i64) -> (String, String) {
    let group = id / 1000;
    (format!("{group}:{}", id % 4), format!("{group}:{}", (id + 1) % 4))
}

/// What the lists read back say of the writes (`--watch`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Lists {
    /// The writes against the ids in their first list.
    pub tally: Tally,
    /// Ids in one of their two lists only: a transaction half there.
    pub torn: Vec<i64>,
}

/// Checks the lists (key, ids in order) against the writes: each write's
/// id must be in both of its lists or in neither.
pub fn lists(writes: &[Write], lists: &[(String, Vec<i64>)]) -> Lists {
    let find = |k: &str| {
        lists
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.as_slice())
            .unwrap_or(&[])
    };
    let mut first = Vec::new();
    let mut torn = Vec::new();
    let mut ids: Vec<i64> = lists.iter().flat_map(|(_, v)| v.iter().copied()).collect();
    ids.sort_unstable();
    ids.dedup();
    for id in ids {
        let (k1, k2) = keys(id);
        let in1 = find(&k1).iter().filter(|x| **x == id).count();
        let in2 = find(&k2).iter().filter(|x| **x == id).count();
        first.extend(std::iter::repeat_n(id, in1));
        if (in1 == 0) != (in2 == 0) {
            torn.push(id);
        }
        // An id in a list it does not belong to is a stranger of the tally.
        if in1 == 0 && in2 == 0 {
            first.push(id);
        }
    }
    Lists {
        tally: tally(writes, &first),
        torn,
    }
}

/// A WAL position as PostgreSQL prints it (`0/3000148`).
pub fn lsn(text: &str) -> Option<u64> {
    let (hi, lo) = text.trim().split_once('/')?;
    Some((u64::from_str_radix(hi, 16).ok()? << 32) | u64::from_str_radix(lo, 16).ok()?)
}

/// The acknowledged writes whose commit a standby that reached `standby`
/// (its flush position) does not hold: on the primary only.
pub fn beyond(writes: &[Write], standby: u64) -> Vec<i64> {
    writes
        .iter()
        .filter(|w| w.outcome == Outcome::Acked && w.lsn.is_some_and(|l| l > standby))
        .map(|w| w.id)
        .collect()
}

/// Ids as a short list for a person: runs joined (`1-3, 7, 9-12`).
pub fn ranges(ids: &[i64]) -> String {
    let mut ids = ids.to_vec();
    ids.sort_unstable();
    ids.dedup();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < ids.len() {
        let mut j = i;
        while j + 1 < ids.len() && ids[j + 1] == ids[j] + 1 {
            j += 1;
        }
        out.push(if j > i {
            format!("{}-{}", ids[i], ids[j])
        } else {
            ids[i].to_string()
        });
        i = j + 1;
    }
    if out.is_empty() { "-".into() } else { out.join(", ") }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(id: i64, outcome: Outcome, t_ms: f64) -> Write {
        Write {
            id,
            outcome,
            node: None,
            lsn: None,
            t_ms,
        }
    }

    #[test]
    fn acknowledged_writes_missing_are_lost() {
        let writes = [
            w(1, Outcome::Acked, 1.0),
            w(2, Outcome::Acked, 2.0),
            w(3, Outcome::Acked, 3.0),
            w(4, Outcome::Unknown, 4.0),
            w(5, Outcome::Failed, 5.0),
            w(6, Outcome::Acked, 9.0),
        ];
        let t = tally(&writes, &[1, 3, 6]);
        assert_eq!(t.acked, 4);
        assert_eq!(t.kept, 3);
        assert_eq!(t.lost, vec![2]);
        assert_eq!(t.unknown_absent, vec![4]);
        assert!(t.unknown_present.is_empty() && t.failed_present.is_empty());
        assert!(t.duplicates.is_empty() && t.strangers.is_empty());
    }

    #[test]
    fn an_unknown_outcome_present_and_a_blind_retry_duplicate() {
        // Request 7's COMMIT lost its connection; the retry wrote it again.
        let writes = [w(7, Outcome::Unknown, 1.0), w(7, Outcome::Acked, 5.0)];
        let t = tally(&writes, &[7, 7]);
        assert_eq!(t.duplicates, vec![7]);
        assert_eq!(t.kept, 1);
        // Without the retry: present though nobody knew.
        let t = tally(&writes[..1], &[7]);
        assert_eq!(t.unknown_present, vec![7]);
        // A failed write present, and a row nobody wrote.
        let t = tally(&[w(8, Outcome::Failed, 1.0)], &[8, 99]);
        assert_eq!(t.failed_present, vec![8]);
        assert_eq!(t.strangers, vec![99]);
    }

    #[test]
    fn unavailability_is_between_acknowledged_writes() {
        let writes = [
            w(1, Outcome::Acked, 10.0),
            w(2, Outcome::Acked, 20.0),
            w(3, Outcome::Unknown, 25.0),
            w(3, Outcome::Failed, 400.0),
            w(3, Outcome::Acked, 1020.0),
            w(4, Outcome::Acked, 1030.0),
            w(5, Outcome::Failed, 2000.0),
        ];
        let ws = windows(&writes);
        assert_eq!(ws.len(), 1, "{ws:?}");
        assert_eq!(ws[0].ms(), 1000.0);
        assert_eq!(ws[0].attempts, 2);
        let around = window_around(&writes, 22.0).unwrap();
        assert_eq!(
            (around.last_ok_ms, around.first_ok_ms, around.attempts),
            (20.0, 1020.0, 2)
        );
        // No acknowledged write after the event: no window yet.
        assert_eq!(window_around(&writes, 1500.0), None);
        // The connection found gone between writes 1 and 2 (the server
        // crashed while the writer was between two): a window with no
        // attempt in it; a break after the last acknowledged write opens none.
        let ws = windows_across(&writes[..2], &[15.0, 30.0]);
        assert_eq!(ws.len(), 1, "{ws:?}");
        assert_eq!((ws[0].last_ok_ms, ws[0].first_ok_ms, ws[0].attempts), (10.0, 20.0, 0));
        assert!(windows_across(&writes[..2], &[30.0]).is_empty());
    }

    #[test]
    fn lsns_and_what_a_standby_lacks() {
        assert_eq!(lsn("0/3000148"), Some(0x3000148));
        assert_eq!(lsn("1/0"), Some(1 << 32));
        assert_eq!(lsn("nope"), None);
        let mut a = w(1, Outcome::Acked, 1.0);
        a.lsn = Some(100);
        let mut b = w(2, Outcome::Acked, 2.0);
        b.lsn = Some(200);
        let mut c = w(3, Outcome::Unknown, 3.0);
        c.lsn = Some(300);
        assert_eq!(beyond(&[a, b, c], 150), vec![2]);
    }

    #[test]
    fn lists_tell_lost_torn_and_duplicated_writes() {
        assert_eq!(keys(5), ("0:1".to_string(), "0:2".to_string()));
        assert_eq!(keys(1003), ("1:3".to_string(), "1:0".to_string()));
        let writes = [
            w(1, Outcome::Acked, 1.0),
            w(2, Outcome::Acked, 2.0),
            w(3, Outcome::Unknown, 3.0),
            w(4, Outcome::Acked, 4.0),
        ];
        // 1 in both lists, 2 missing, 3 (unknown) there, 4 in one list only and twice in it.
        let l = vec![
            ("0:1".to_string(), vec![1]),
            ("0:2".to_string(), vec![1]),
            ("0:3".to_string(), vec![3]),
            ("0:0".to_string(), vec![3, 4, 4]),
        ];
        let got = lists(&writes, &l);
        assert_eq!(got.tally.lost, vec![2]);
        assert_eq!(got.tally.unknown_present, vec![3]);
        assert_eq!(got.torn, vec![4]);
        assert_eq!(got.tally.duplicates, vec![4]);
    }

    #[test]
    fn ids_read_as_ranges() {
        assert_eq!(ranges(&[3, 1, 2, 7, 9, 10, 11]), "1-3, 7, 9-11");
        assert_eq!(ranges(&[]), "-");
        assert_eq!(ranges(&[5]), "5");
    }
}
