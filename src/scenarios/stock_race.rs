//! "100 concurrent decrements must remove exactly 100": R requests, each on
//! its own connection, buy one copy of book 1 at once. The requests' steps
//! are summarised (a hundred columns would not read), not recorded one by one.
use std::collections::BTreeMap;
use std::sync::Arc;

use anyhow::Result;

use super::{ScenarioInfo, VariantInfo};
use crate::engine::{Barrier, Session, VariantCtx, join_all};
use crate::progress;
use crate::report::Evidence;
use crate::sql::SqlFile;

static SQL: SqlFile = SqlFile::new("lab/stock-race.sql", include_str!("../../lab/stock-race.sql"));

pub const INFO: ScenarioInfo = ScenarioInfo {
    name: "stock-race",
    variants: &[
        VariantInfo {
            name: "read-modify-write",
        },
        VariantInfo { name: "atomic-guard" },
        VariantInfo { name: "oversell" },
    ],
};

#[derive(Debug, Clone, Copy)]
struct Tally {
    requests: usize,
    initial: i64,
    sold: usize,
    rejected: usize,
    final_stock: i64,
}

impl Tally {
    fn lost_decrements(&self) -> i64 {
        self.sold as i64 - (self.initial - self.final_stock)
    }

    fn oversold(&self) -> i64 {
        (self.sold as i64 - self.initial).max(0)
    }
}

pub async fn run(ctx: &mut VariantCtx<'_>) -> Result<()> {
    let p = ctx.env.params.stock;
    // A server that allows fewer connections gets as many requests as fit.
    let free = ctx.env.int(SQL.get("free_connections")?).await?;
    let requests = (p.requests as i64).min(free - 5).max(1) as usize;
    if requests < p.requests as usize {
        ctx.note(crate::tr!(
            "sr.fewer",
            free = free,
            requests = requests,
            asked = p.requests
        ));
    }
    let names: Vec<String> = (1..=requests).map(|i| format!("R{i:03}")).collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let sessions = ctx.sessions(&refs).await?;
    ctx.metric("requests", requests);
    match ctx.variant {
        "read-modify-write" => {
            let t = race(ctx, &sessions, p.stock as i64, false).await?;
            record(ctx, &t);
            ctx.observe(crate::i18n::t(
                "sr.rmw",
                &[
                    ("requests", &t.requests),
                    ("stock", &t.initial),
                    ("sold", &t.sold),
                    ("final", &t.final_stock),
                    ("lost", &t.lost_decrements()),
                ],
            ));
            ctx.expect(t.sold == t.requests, crate::tr!("sr.every_believes"));
            ctx.expect(t.final_stock == t.initial - 1, crate::tr!("sr.dropped_one"));
            ctx.anomaly(t.lost_decrements() > 0);
        }
        "atomic-guard" => {
            let t = race(ctx, &sessions, p.stock as i64, true).await?;
            record(ctx, &t);
            let expect_sold = t.requests.min(t.initial as usize);
            ctx.observe(crate::i18n::t(
                "sr.guard",
                &[
                    ("sold", &t.sold),
                    ("rejected", &t.rejected),
                    ("final", &t.final_stock),
                    ("stock", &t.initial),
                ],
            ));
            ctx.expect(t.sold == expect_sold, crate::tr!("sr.exactly_sold", n = expect_sold));
            ctx.expect(
                t.final_stock == t.initial - expect_sold as i64,
                crate::tr!("sr.one_copy_each"),
            );
            ctx.anomaly(t.lost_decrements() != 0 || t.oversold() > 0);
        }
        "oversell" => {
            let stock = (requests - requests / 10) as i64;
            let naive = race(ctx, &sessions, stock, false).await?;
            let guarded = race(ctx, &sessions, stock, true).await?;
            record(ctx, &naive);
            let side = |name: String, t: &Tally| {
                vec![
                    name,
                    t.initial.to_string(),
                    t.requests.to_string(),
                    t.sold.to_string(),
                    t.rejected.to_string(),
                    t.final_stock.to_string(),
                    t.oversold().to_string(),
                ]
            };
            ctx.evidence_table(Evidence {
                title: crate::tr!("sr.ev_side"),
                columns: vec![
                    crate::tr!("lu.col_approach"),
                    crate::tr!("sr.col_stock"),
                    crate::tr!("sr.col_requests"),
                    crate::tr!("sr.col_sold"),
                    crate::tr!("sr.col_rejected"),
                    crate::tr!("sr.col_final"),
                    crate::tr!("sr.col_oversold"),
                ],
                rows: vec![
                    side(crate::tr!("sr.rmw_name"), &naive),
                    side(crate::tr!("sr.guard_name"), &guarded),
                ],
            });
            ctx.metric(
                "atomic_guard",
                serde_json::json!({
                    "requests": guarded.requests, "sold": guarded.sold, "rejected": guarded.rejected,
                    "final_stock": guarded.final_stock, "oversold": guarded.oversold(),
                }),
            );
            ctx.observe(crate::i18n::t(
                "sr.oversell",
                &[
                    ("stock", &stock),
                    ("requests", &requests),
                    ("naive", &naive.sold),
                    ("over", &naive.oversold()),
                    ("guarded", &guarded.sold),
                    ("rejected", &guarded.rejected),
                ],
            ));
            ctx.expect(naive.sold > stock as usize, crate::tr!("sr.sells_more"));
            ctx.expect(
                guarded.sold == stock as usize,
                crate::tr!("sr.guard_exactly", n = stock),
            );
            ctx.expect(
                guarded.rejected == requests - stock as usize,
                crate::tr!("sr.rejects_rest"),
            );
            ctx.expect(guarded.final_stock == 0, crate::tr!("sr.ends_zero"));
            ctx.anomaly(naive.oversold() > 0);
        }
        other => anyhow::bail!(crate::tr!("run.no_variant", scenario = "stock-race", variant = other)),
    }
    Ok(())
}

fn record(ctx: &mut VariantCtx<'_>, t: &Tally) {
    ctx.metric("sold", t.sold);
    ctx.metric("rejected", t.rejected);
    ctx.metric("final_stock", t.final_stock);
    ctx.metric("lost_decrements", t.lost_decrements());
    ctx.metric("oversold", t.oversold());
}

/// All requests start together (a barrier); read-modify-write requests all
/// read before any writes (a second barrier), so the race happens every run.
async fn race(ctx: &mut VariantCtx<'_>, sessions: &[Session], stock: i64, guarded: bool) -> Result<Tally> {
    ctx.env.rows(&SQL.bind("set_stock", &[("stock", &stock)])?).await?;
    let n = sessions.len();
    let approach = if guarded {
        crate::tr!("sr.guard_name")
    } else {
        crate::tr!("sr.rmw_name")
    };
    ctx.narrate(crate::tr!("sr.set_stock", stock = stock, n = n, approach = approach));
    let start = ctx.barrier("start", n);
    let all_read = ctx.barrier("all_read", n);
    let bar = progress::bar(None, n as u64, &approach);
    let read = SQL.get("read")?.to_string();
    let buy = SQL.get("buy_one")?.to_string();
    let tasks = sessions.iter().map(|s| {
        let (s, start, all_read, bar, read, buy) = (
            s.clone(),
            start.clone(),
            all_read.clone(),
            bar.clone(),
            read.clone(),
            buy.clone(),
        );
        tokio::spawn(async move { request(&s, guarded, &start, &all_read, &read, &buy, bar).await })
    });
    let handles: Vec<_> = tasks.collect();
    let results = join_all(ctx.env.wait_timeout, &crate::tr!("sr.a_request"), handles).await;
    bar.finish_and_clear();
    let mut reads: BTreeMap<i64, usize> = BTreeMap::new();
    let mut sold = 0;
    for (seen, ok) in results? {
        if let Some(v) = seen {
            *reads.entry(v).or_default() += 1;
        }
        if ok {
            sold += 1;
        }
    }
    let final_stock = ctx.env.int(SQL.get("stock")?).await?;
    if guarded {
        ctx.narrate(crate::tr!(
            "sr.guard_result",
            n = n,
            sql = one_line(&buy),
            sold = sold,
            out = n - sold
        ));
    } else {
        let seen: Vec<String> = reads
            .iter()
            .map(|(v, c)| crate::tr!("sr.n_read", n = c, value = v))
            .collect();
        ctx.narrate(format!("{n} × `{}`: {}", one_line(&read), seen.join(", ")));
        ctx.narrate(crate::tr!("sr.each_wrote", sold = sold));
    }
    ctx.narrate(crate::tr!("sr.final", n = final_stock));
    Ok(Tally {
        requests: n,
        initial: stock,
        sold,
        rejected: n - sold,
        final_stock,
    })
}

fn one_line(sql: &str) -> String {
    sql.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// One "buy one" request. Returns what it read (read-modify-write) and whether it sold.
async fn request(
    s: &Session,
    guarded: bool,
    start: &Arc<Barrier>,
    all_read: &Arc<Barrier>,
    read: &str,
    buy: &str,
    bar: indicatif::ProgressBar,
) -> Result<(Option<i64>, bool)> {
    let c = s.client();
    let what = |step: &str| crate::tr!("sr.request_step", request = s.name(), step = step);
    start.wait(s.name()).await?;
    // The raw client does not go through the engine: under --step the request
    // shows each statement itself.
    let out = if guarded {
        s.step(buy).await;
        let n = c
            .execute(buy, &[])
            .await
            .map_err(|e| crate::db::sql_error(e, &what("buy")))?;
        (None, n == 1)
    } else {
        s.step(read).await;
        let q: i32 = c
            .query_one(read, &[])
            .await
            .map_err(|e| crate::db::sql_error(e, &what("read")))?
            .get(0);
        all_read.wait(s.name()).await?;
        let q = q as i64;
        if q >= 1 {
            let write = SQL.bind("write", &[("new_quantity", &(q - 1))])?;
            s.step(&write).await;
            c.execute(write.as_str(), &[])
                .await
                .map_err(|e| crate::db::sql_error(e, &what("write")))?;
            (Some(q), true)
        } else {
            (Some(q), false)
        }
    };
    bar.inc(1);
    Ok(out)
}
