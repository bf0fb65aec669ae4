//! `--html FILE`: one self-contained page for a projector (inline CSS and
//! SVG, nothing fetched): a swimlane per session for each variant (statements
//! as boxes in time order, waits as hatched bars naming the blocker and the
//! lock, an arrow from the step that released the lock to the step it
//! unblocked, errors in red with their SQLSTATE), a Gantt chart per worker
//! for the pools, the phenomena matrix as a coloured grid, and for a run of
//! several scenarios a contents list and the summary first.
use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::Style;
use super::junit::xml_escape as esc;
use crate::i18n::ui;
use crate::report::{Entry, ScenarioReport, StepResult, VariantReport};

/// What the page shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Scenarios or spec files: a diagram per variant.
    Runs,
    /// `lab phenomena`: the matrix first, then each cell's swimlanes.
    Matrix,
    /// `lab explore`: a report per level, a variant per class of
    /// interleavings; a class shows its representative, not an expectation.
    Classes,
    /// `lab shell`'s `\html`: what a person ran, which nothing expected;
    /// no verdict, the variant's `expected` says where it came from.
    Session,
}

/// Scenarios whose variants are worker pools: a Gantt chart per worker.
const POOLS: &[&str] = &["queue", "stock-race", "invoice-numbering"];
/// A timeline longer than this is drawn as a Gantt chart too.
const SWIMLANE_MAX: usize = 80;

/// An id from names: lower-case letters, digits and dashes.
fn id(parts: &[&str]) -> String {
    parts
        .join("-")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect()
}

/// At most `n` characters, with an ellipsis when cut.
fn cut(s: &str, n: usize) -> String {
    let one: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if one.chars().count() <= n {
        one
    } else {
        format!("{}…", one.chars().take(n.saturating_sub(1)).collect::<String>())
    }
}

const CSS: &str = "
:root { --ok: #1b5e20; --bad: #b71c1c; --wait: #e65100; --ink: #212121; --muted: #616161; --line: #bdbdbd; }
body { font: 20px/1.4 system-ui, sans-serif; color: var(--ink); margin: 1.5em; background: #fff; }
h1 { font-size: 34px; margin: 0 0 .4em; } h2 { font-size: 28px; margin: 1.6em 0 .3em; border-bottom: 2px solid var(--line); }
h3 { font-size: 24px; margin: 1.2em 0 .2em; }
table { border-collapse: collapse; margin: .5em 0 1em; } td, th { border: 1px solid var(--line); padding: .25em .6em; text-align: left; vertical-align: top; }
.ok { color: var(--ok); font-weight: 700; } .bad { color: var(--bad); font-weight: 700; } .skip { color: var(--muted); font-weight: 700; }
.meta { color: var(--muted); } .scroll { overflow-x: auto; border: 1px solid var(--line); padding: .3em; }
svg text { font-family: system-ui, sans-serif; }
td.cell-ok { background: #c8e6c9; } td.cell-occurs { background: #fff3b0; } td.cell-bad { background: #b71c1c; color: #fff; }
@media print { body { font-size: 12pt; margin: 0; } .scroll { overflow: visible; border: 0; } h2 { page-break-before: auto; } }
";

/// The whole page.
pub fn page(scenarios: &[ScenarioReport], kind: Kind, style: &Style) -> String {
    let mut body = String::new();
    let version = scenarios
        .iter()
        .map(|s| s.server_version.as_str())
        .find(|v| !v.is_empty())
        .unwrap_or("");
    let _ = writeln!(body, "<h1>{}</h1>", esc(&style.say(&msg::title())));
    let _ = writeln!(body, "<p class=\"meta\">{}</p>", esc(&style.say(&msg::server(version))));
    // A run that stopped part-way says so first, not only at the scenario
    // it stopped in, further down.
    for (i, s) in scenarios.iter().filter(|s| s.error.is_some()).enumerate() {
        if let Some(e) = &s.error {
            // The first one is where the page's link to it goes; ids are unique.
            let anchor = if i == 0 { " id=\"stopped\"" } else { "" };
            let _ = writeln!(
                body,
                "<p class=\"bad\"{anchor}><a href=\"#{}\">{}/{}</a>: {}</p>",
                id(&["scenario", &s.scenario]),
                esc(&s.scenario),
                esc(&e.variant),
                esc(&e.message)
            );
        }
    }
    if kind == Kind::Matrix {
        body.push_str(&matrix(scenarios, style));
    }
    if scenarios.len() > 1 && kind != Kind::Matrix {
        body.push_str(&contents(scenarios, kind, style));
    }
    for s in scenarios {
        let _ = writeln!(
            body,
            "<h2 id=\"{}\">{}</h2>",
            id(&["scenario", &s.scenario]),
            heading(s, style)
        );
        if let Some(e) = &s.error {
            let _ = writeln!(body, "<p class=\"bad\">{}: {}</p>", esc(&e.variant), esc(&e.message));
        }
        for v in &s.variants {
            body.push_str(&variant(&s.scenario, v, kind, style));
        }
    }
    format!(
        "<!DOCTYPE html>\n<html lang=\"{}\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width\">\n<title>{}</title>\n<style>{CSS}</style>\n</head>\n<body>\n{DEFS}\n{body}</body>\n</html>\n",
        match style.lang {
            crate::i18n::Lang::En => "en",
            crate::i18n::Lang::Tr => "tr",
        },
        esc(&style.say(&msg::title())),
    )
}

/// A scenario's heading: its name where it has one, with its id after it
/// as the terminal's matrix writes it ("lost update (P4) (p4)"), else its id.
fn heading(s: &ScenarioReport, style: &Style) -> String {
    let short = s.scenario.strip_prefix("phenomena.").unwrap_or(&s.scenario);
    match &s.title {
        Some(t) => format!(
            "{} <span class=\"meta\">({})</span>",
            esc(&t.render(style.lang)),
            esc(short)
        ),
        None => esc(&s.scenario),
    }
}

fn verdict(v: &VariantReport, style: &Style) -> String {
    if v.skipped.is_some() {
        format!(
            "<span class=\"skip\">{}</span>",
            esc(&style.say(&ui::verdict_skipped()))
        )
    } else if v.pooler_differs.is_some() {
        format!("<span class=\"skip\">{}</span>", esc(&style.say(&ui::verdict_pooler())))
    } else if v.as_expected {
        format!("<span class=\"ok\">{}</span>", esc(&style.say(&ui::verdict_ok())))
    } else {
        format!("<span class=\"bad\">{}</span>", esc(&style.say(&ui::verdict_not())))
    }
}

/// The summary first: each variant with its verdict, linked to its diagram.
fn contents(scenarios: &[ScenarioReport], kind: Kind, style: &Style) -> String {
    let (what, which) = match kind {
        Kind::Classes => (msg::col_level(), msg::col_class()),
        _ => (ui::col_scenario(), ui::col_variant()),
    };
    let mut t = format!(
        "<table id=\"summary\"><tr><th>{}</th><th>{}</th><th>{}</th><th>{}</th></tr>\n",
        esc(&style.say(&what)),
        esc(&style.say(&which)),
        esc(&style.say(&ui::col_anomaly())),
        esc(&style.say(&ui::col_verdict())),
    );
    for s in scenarios {
        for v in &s.variants {
            let anomaly = match v.anomaly {
                Some(true) => style.say(&ui::yes()),
                Some(false) => style.say(&ui::no()),
                None => "-".to_string(),
            };
            let _ = writeln!(
                t,
                "<tr><td><a href=\"#{}\">{}</a></td><td><a href=\"#{}\">{}</a></td><td>{}</td><td>{}</td></tr>",
                id(&["scenario", &s.scenario]),
                esc(&s.scenario),
                id(&["variant", &s.scenario, &v.name]),
                esc(&v.shown_name(style.lang)),
                esc(&anomaly),
                verdict(v, style)
            );
        }
    }
    t.push_str("</table>\n");
    t
}

/// The phenomena matrix: a row per phenomenon, a column per level.
fn matrix(scenarios: &[ScenarioReport], style: &Style) -> String {
    let mut levels: Vec<&str> = Vec::new();
    for s in scenarios {
        for v in &s.variants {
            if !levels.contains(&v.name.as_str()) {
                levels.push(&v.name);
            }
        }
    }
    let mut t = String::from("<table id=\"matrix\"><tr><th></th>");
    for l in &levels {
        let _ = write!(t, "<th>{}</th>", esc(l));
    }
    t.push_str("</tr>\n");
    for s in scenarios {
        let _ = write!(
            t,
            "<tr><th><a href=\"#{}\">{}</a></th>",
            id(&["scenario", &s.scenario]),
            heading(s, style)
        );
        for l in &levels {
            match s.variants.iter().find(|v| v.name == *l) {
                None => t.push_str("<td></td>"),
                Some(v) => {
                    let (class, word) = match (v.as_expected, v.anomaly == Some(true)) {
                        (false, _) => ("cell-bad", ui::verdict_not()),
                        (true, true) => ("cell-occurs", msg::occurs()),
                        (true, false) => ("cell-ok", msg::prevented()),
                    };
                    // The cell's own lines where the variant has them (how it was
                    // prevented, the counts), else the word for its colour.
                    let lines: Vec<String> = if v.cell.is_empty() {
                        vec![esc(&style.say(&word))]
                    } else {
                        v.cell.iter().map(|l| esc(&style.say(l))).collect()
                    };
                    let _ = write!(
                        t,
                        "<td class=\"{class}\" title=\"{}\">{}</td>",
                        esc(&v.observed_line(style.lang)),
                        lines.join("<br>")
                    );
                }
            }
        }
        t.push_str("</tr>\n");
    }
    t.push_str("</table>\n");
    t
}

/// lab's prose as HTML: escaped, with what its texts put in backticks
/// (Markdown-style: `quantity_on_hand - 1`) set as code. Backticks that
/// do not pair up stay as written.
fn prose(s: &str) -> String {
    let pieces: Vec<&str> = s.split('`').collect();
    if pieces.len().is_multiple_of(2) {
        return esc(s);
    }
    let mut out = String::new();
    for (i, p) in pieces.iter().enumerate() {
        if i % 2 == 1 {
            let _ = write!(out, "<code>{}</code>", esc(p));
        } else {
            out.push_str(&esc(p));
        }
    }
    out
}

fn variant(scenario: &str, v: &VariantReport, kind: Kind, style: &Style) -> String {
    let mut out = String::new();
    if kind == Kind::Session {
        let _ = writeln!(out, "<p class=\"meta\">{}</p>", prose(&style.say(&v.expected)));
    } else {
        let _ = writeln!(
            out,
            "<h3 id=\"{}\">{} / {} — {}</h3>",
            id(&["variant", scenario, &v.name]),
            esc(scenario),
            esc(&v.shown_name(style.lang)),
            verdict(v, style)
        );
        let _ = writeln!(
            out,
            "<p><b>{}:</b> {}<br><b>{}:</b> {}</p>",
            esc(&style.say(&match kind {
                Kind::Classes => msg::representative(),
                _ => ui::col_expected(),
            })),
            prose(&style.say(&v.expected)),
            esc(&style.say(&ui::col_observed())),
            prose(&v.observed_line(style.lang))
        );
    }
    if let Some(reason) = v.skipped.as_ref().or(v.pooler_differs.as_ref()) {
        let _ = writeln!(out, "<p class=\"skip\">{}</p>", prose(&style.say(reason)));
    }
    let failed = v.failed_beside_expected(style.lang);
    if !failed.is_empty() {
        let _ = writeln!(
            out,
            "<p class=\"bad\">{}: {}</p>",
            esc(&style.say(&ui::failed_checks())),
            failed.iter().map(|f| prose(f)).collect::<Vec<_>>().join("; ")
        );
    }
    if let Some(fig) = &v.cycle {
        let _ = writeln!(
            out,
            "<div class=\"scroll\">{}</div>",
            cycle(&id(&["cycle", scenario, &v.name]), fig)
        );
    }
    if v.timeline.is_empty() && v.spans.is_empty() {
        return out;
    }
    let pool = POOLS.contains(&scenario) || v.timeline.len() > SWIMLANE_MAX || !v.spans.is_empty();
    let svg = if pool {
        let rows = if v.spans.is_empty() {
            timeline_bars(&v.timeline)
        } else {
            span_bars(&v.spans)
        };
        gantt(&id(&["gantt", scenario, &v.name]), &rows)
    } else {
        swimlanes(&id(&["swimlanes", scenario, &v.name]), &v.timeline, style)
    };
    let _ = writeln!(out, "<div class=\"scroll\">{svg}</div>");
    if style.explain && kind != Kind::Session {
        let _ = writeln!(out, "<p class=\"meta\">{}</p>", prose(&style.say(&v.explain)));
    }
    out
}

/// A cycle of transactions: its nodes on a circle, each edge an arrow to
/// the next with its label (rw k3: an anti-dependency on key 3).
fn cycle(svg_id: &str, fig: &crate::report::CycleFigure) -> String {
    let n = fig.nodes.len().max(1);
    let (w, h) = (420.0_f64, 300.0_f64);
    let (cx, cy, r) = (w / 2.0, h / 2.0, 100.0_f64);
    let at = |i: usize| {
        let a = -std::f64::consts::FRAC_PI_2 + 2.0 * std::f64::consts::PI * i as f64 / n as f64;
        (cx + r * a.cos(), cy + r * a.sin())
    };
    let mut s = format!(
        "<svg id=\"{svg_id}\" class=\"cycle\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\">\n"
    );
    for (k, (from, to, label)) in fig.edges.iter().enumerate() {
        let ((x1, y1), (x2, y2)) = (at(*from), at(*to));
        // Bent outwards (two nodes: one arc each way), stopping short of the circles.
        let (mx, my) = ((x1 + x2) / 2.0, (y1 + y2) / 2.0);
        let (dx, dy) = (x2 - x1, y2 - y1);
        let len = (dx * dx + dy * dy).sqrt().max(1.0);
        let bend = if n == 2 { 50.0 } else { 25.0 };
        let (qx, qy) = (mx + dy / len * bend, my - dx / len * bend);
        let shorten = |(px, py): (f64, f64), (ox, oy): (f64, f64)| {
            let (ux, uy) = (ox - px, oy - py);
            let l = (ux * ux + uy * uy).sqrt().max(1.0);
            (px + ux / l * 26.0, py + uy / l * 26.0)
        };
        let (sx, sy) = shorten((x1, y1), (qx, qy));
        let (ex, ey) = shorten((x2, y2), (qx, qy));
        let color = if label.starts_with("rw") { "#c62828" } else { "#1565c0" };
        let _ = writeln!(
            s,
            "<path id=\"{svg_id}-e{k}\" d=\"M{sx:.1},{sy:.1} Q{qx:.1},{qy:.1} {ex:.1},{ey:.1}\" fill=\"none\" stroke=\"{color}\" stroke-width=\"2\" marker-end=\"url(#arrow)\"/>"
        );
        let _ = writeln!(
            s,
            "<text x=\"{qx:.1}\" y=\"{qy:.1}\" text-anchor=\"middle\" font-size=\"12\" fill=\"{color}\">{}</text>",
            esc(label)
        );
    }
    for (i, name) in fig.nodes.iter().enumerate() {
        let (x, y) = at(i);
        let _ = writeln!(
            s,
            "<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"24\" fill=\"#ede7f6\" stroke=\"#6a1b9a\"/><text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"13\">{}</text>",
            y + 4.0,
            esc(name)
        );
    }
    s.push_str("</svg>");
    s
}

/// The sessions of a timeline, in the order they first appear.
fn lanes(entries: &[Entry]) -> Vec<&str> {
    let mut lanes: Vec<&str> = Vec::new();
    for e in entries {
        if !lanes.contains(&e.session.as_str()) {
            lanes.push(&e.session);
        }
    }
    lanes
}

/// The hatching of waits and the arrowhead, defined once for every diagram.
const DEFS: &str = "<svg width=\"0\" height=\"0\" style=\"position:absolute\" aria-hidden=\"true\"><defs>\
<pattern id=\"hatch\" patternUnits=\"userSpaceOnUse\" width=\"8\" height=\"8\" patternTransform=\"rotate(45)\">\
<rect width=\"8\" height=\"8\" fill=\"#fff3e0\"/><line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"8\" stroke=\"#e65100\" stroke-width=\"3\"/></pattern>\
<marker id=\"arrow\" markerWidth=\"10\" markerHeight=\"8\" refX=\"9\" refY=\"4\" orient=\"auto\"><path d=\"M0,0 L10,4 L0,8 z\" fill=\"#6a1b9a\"/></marker>\
</defs></svg>";

const LABEL_W: usize = 120;
/// Swimlanes run down the page, a column per session: a projector's width
/// holds four or five sessions, and time reads top to bottom.
const TIME_W: usize = 90;
const HEAD_H: usize = 44;
const ROW_H: usize = 66;

fn box_colours(e: &Entry) -> (&'static str, &'static str) {
    match e.result {
        StepResult::Error => ("#ffebee", "#b71c1c"),
        StepResult::Waiting => ("url(#hatch)", "#e65100"),
        StepResult::Completed => ("#e3f2fd", "#0d47a1"),
        StepResult::Note | StepResult::Notice => ("#f5f5f5", "#757575"),
        StepResult::Ok => ("#ffffff", "#424242"),
    }
}

/// Where things go in a swimlane diagram: a column per session, a row per entry.
struct Grid<'a> {
    lanes: Vec<&'a str>,
    col_w: usize,
    /// The characters of text a column holds.
    chars: usize,
    /// Each row's text: its statement's lines, then its outcome's (a
    /// step), or whom it waits for and which lock (a wait).
    text: Vec<(Vec<String>, Vec<String>)>,
    /// Where each row starts; a row is as tall as its text.
    tops: Vec<usize>,
    heights: Vec<usize>,
}

/// A line of text in a box or a band.
const LINE_H: usize = 22;
/// A statement longer than this many lines is cut (the box's title holds it all).
const SQL_LINES: usize = 5;

/// `text` on one line, then in lines of at most `chars` characters at
/// spaces, at most `max` of them (the last then ends with an ellipsis).
fn lines_of(text: &str, chars: usize, max: usize) -> Vec<String> {
    let one: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one.is_empty() {
        return Vec::new();
    }
    let mut lines = crate::output::wrap(&one, chars, 0);
    if lines.len() > max {
        lines.truncate(max);
        let last = lines.last_mut().expect("max > 0");
        *last = cut(&format!("{last} …"), chars);
        if !last.ends_with('…') {
            last.push('…');
        }
    }
    lines
}

impl<'a> Grid<'a> {
    fn new(entries: &'a [Entry], style: &Style) -> Grid<'a> {
        let lanes = lanes(entries);
        let col_w = (1200 / lanes.len().max(1)).clamp(230, 330);
        let chars = col_w / 10;
        let text: Vec<_> = entries.iter().map(|e| row_text(e, chars, style)).collect();
        let heights: Vec<usize> = text
            .iter()
            .map(|(a, b)| ROW_H.max(LINE_H * (a.len() + b.len()) + LINE_H))
            .collect();
        let tops = heights
            .iter()
            .scan(HEAD_H, |y, h| {
                let top = *y;
                *y += h;
                Some(top)
            })
            .collect();
        Grid {
            lanes,
            col_w,
            chars,
            text,
            tops,
            heights,
        }
    }

    fn lane_of(&self, s: &str) -> usize {
        self.lanes.iter().position(|l| *l == s).unwrap_or(0)
    }

    fn x_of(&self, lane: usize) -> usize {
        TIME_W + lane * self.col_w
    }

    fn y_of(&self, row: usize) -> usize {
        self.tops[row]
    }

    /// The middle of a row's first two lines (where its arrows meet it).
    fn mid_of(&self, row: usize) -> usize {
        self.tops[row] + ROW_H / 2
    }

    fn bottom(&self) -> usize {
        self.tops.last().zip(self.heights.last()).map_or(HEAD_H, |(t, h)| t + h)
    }
}

/// A row's text: a step's statement and its outcome (an error with its
/// SQLSTATE, its mark in front once); a wait's statement and whom it waits for.
fn row_text(e: &Entry, chars: usize, style: &Style) -> (Vec<String>, Vec<String>) {
    if e.result == StepResult::Waiting {
        let who = e.blocked_by.as_ref().map(|b| b.join(", ")).unwrap_or_default();
        let label = match &e.lock {
            Some(lock) => style.say(&ui::waiting_lock(&who, lock)),
            None => style.say(&ui::waiting(&who)),
        };
        return (lines_of(&e.sql, chars - 3, SQL_LINES), lines_of(&label, chars - 5, 3));
    }
    let mut outcome = super::text::outcome_line(e, style);
    if e.result == StepResult::Error
        && let Some(code) = &e.sqlstate
        && !outcome.contains(code.as_str())
    {
        let rest = outcome.strip_prefix("✖ ").unwrap_or(&outcome);
        outcome = format!("✖ {code} {rest}");
    }
    (lines_of(&e.sql, chars - 2, SQL_LINES), lines_of(&outcome, chars - 2, 2))
}

/// `lines` as SVG text, the first at (`x`, `y`), one under the other.
fn text_lines(s: &mut String, lines: &[String], x: usize, y: usize, fill: &str) {
    for (k, line) in lines.iter().enumerate() {
        let _ = write!(
            s,
            "<text x=\"{x}\" y=\"{}\" font-size=\"16\" fill=\"{fill}\">{}</text>",
            y + k * LINE_H,
            esc(line)
        );
    }
}

/// Statements as boxes in time order (top to bottom), one lane per session.
fn swimlanes(svg_id: &str, entries: &[Entry], style: &Style) -> String {
    let g = Grid::new(entries, style);
    let width = TIME_W + g.lanes.len() * g.col_w + 10;
    let height = g.bottom() + 10;
    let mut s = format!(
        "<svg id=\"{svg_id}\" class=\"swimlanes\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\">\n"
    );
    lane_heads(&mut s, &g, height, style);
    let ended_at = wait_bars(&mut s, &g, entries);
    step_boxes(&mut s, &g, entries, style);
    release_arrows(&mut s, &g, entries, &ended_at);
    s.push_str("</svg>");
    s
}

/// Each lane's background and session name, and the time column's heading.
fn lane_heads(s: &mut String, g: &Grid<'_>, height: usize, style: &Style) {
    let (col_w, chars) = (g.col_w, g.chars);
    for (i, l) in g.lanes.iter().enumerate() {
        let _ = writeln!(
            s,
            "<rect x=\"{}\" y=\"0\" width=\"{col_w}\" height=\"{height}\" fill=\"{}\"/><text x=\"{}\" y=\"30\" font-size=\"22\" font-weight=\"700\" text-anchor=\"middle\">{}</text>",
            g.x_of(i),
            if i % 2 == 0 { "#fafafa" } else { "#f0f0f0" },
            g.x_of(i) + col_w / 2,
            esc(&cut(l, chars))
        );
    }
    let _ = writeln!(
        s,
        "<text x=\"8\" y=\"30\" font-size=\"16\" fill=\"#616161\">{}</text>",
        esc(&style.say(&ui::col_t_ms()))
    );
}

/// Waits: a hatched bar from where the wait was seen to where it ended, under
/// the boxes. Which wait (its row) each ending row ended.
fn wait_bars(s: &mut String, g: &Grid<'_>, entries: &[Entry]) -> BTreeMap<usize, usize> {
    let col_w = g.col_w;
    let mut ended_at: BTreeMap<usize, usize> = BTreeMap::new();
    for (i, e) in entries.iter().enumerate() {
        if e.result != StepResult::Waiting {
            continue;
        }
        let end = entries[i + 1..]
            .iter()
            .position(|n| n.session == e.session && matches!(n.result, StepResult::Completed | StepResult::Error))
            .map(|p| i + 1 + p);
        let last = end.unwrap_or(entries.len() - 1);
        let lane = g.lane_of(&e.session);
        let _ = writeln!(
            s,
            "<rect class=\"wait\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"url(#hatch)\" stroke=\"#e65100\" stroke-width=\"2\" rx=\"6\"/>",
            g.x_of(lane) + 4,
            g.y_of(i) + 4,
            col_w - 8,
            g.y_of(last) + g.heights[last] - g.y_of(i) - 8,
        );
        // What it runs and whom it waits for, on a white band at the top of the bar.
        let (sql, label) = &g.text[i];
        let _ = write!(
            s,
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#ffffff\" stroke=\"#e65100\" rx=\"4\"/>",
            g.x_of(lane) + 10,
            g.y_of(i) + 10,
            col_w - 20,
            LINE_H * (sql.len() + label.len()) + 6,
        );
        text_lines(s, sql, g.x_of(lane) + 16, g.y_of(i) + 30, "#212121");
        text_lines(
            s,
            label,
            g.x_of(lane) + 16,
            g.y_of(i) + 30 + LINE_H * sql.len(),
            "#bf360c",
        );
        s.push('\n');
        if let Some(end) = end {
            ended_at.insert(end, i);
        }
    }
    ended_at
}

/// Every row's time, and a box for each step that is not a wait: its
/// statement and its outcome (errors with their SQLSTATE).
fn step_boxes(s: &mut String, g: &Grid<'_>, entries: &[Entry], style: &Style) {
    let col_w = g.col_w;
    for (i, e) in entries.iter().enumerate() {
        let _ = writeln!(
            s,
            "<text x=\"8\" y=\"{}\" font-size=\"15\" fill=\"#616161\">{:.1}</text>",
            g.mid_of(i) + 5,
            e.t_ms
        );
        if e.result == StepResult::Waiting {
            continue;
        }
        let lane = g.lane_of(&e.session);
        let (fill, stroke) = box_colours(e);
        let (x, y) = (g.x_of(lane) + 8, g.y_of(i) + 6);
        let (sql, outcome) = &g.text[i];
        let _ = write!(
            s,
            "<g class=\"step\"><title>{}</title><rect x=\"{x}\" y=\"{y}\" width=\"{}\" height=\"{}\" fill=\"{fill}\" stroke=\"{stroke}\" stroke-width=\"2\" rx=\"6\"/>",
            esc(&format!("{}\n{}", e.sql, super::text::outcome_line(e, style))),
            col_w - 16,
            g.heights[i] - 12,
        );
        text_lines(s, sql, x + 8, y + 23, "#212121");
        text_lines(s, outcome, x + 8, y + 23 + LINE_H * sql.len(), stroke);
        s.push_str("</g>\n");
    }
}

/// An arrow from the step that released the lock (the blocker's last step
/// before the wait ended) to the step it unblocked.
fn release_arrows(s: &mut String, g: &Grid<'_>, entries: &[Entry], ended_at: &BTreeMap<usize, usize>) {
    let col_w = g.col_w;
    for (&end, &start) in ended_at {
        let Some(by) = entries[start].blocked_by.as_ref() else {
            continue;
        };
        let release = (start..end).rev().find(|&k| by.contains(&entries[k].session));
        if let Some(k) = release {
            let (from, to) = (g.lane_of(&entries[k].session), g.lane_of(&entries[end].session));
            let (x1, x2) = if from < to {
                (g.x_of(from) + col_w - 8, g.x_of(to) + 8)
            } else {
                (g.x_of(from) + 8, g.x_of(to) + col_w - 8)
            };
            let _ = writeln!(
                s,
                "<line class=\"release\" x1=\"{x1}\" y1=\"{}\" x2=\"{x2}\" y2=\"{}\" stroke=\"#6a1b9a\" stroke-width=\"3\" marker-end=\"url(#arrow)\"/>",
                g.mid_of(k),
                g.mid_of(end)
            );
        }
    }
}

/// One bar of a Gantt chart: from, to (ms), colour, tooltip.
struct Bar {
    from: f64,
    to: f64,
    colour: &'static str,
    title: String,
}

/// Bars from a timeline: a transaction (BEGIN to COMMIT/ROLLBACK; AND
/// CHAIN ends one bar and opens the next), or a statement on its own (as
/// long as it waited), per session.
fn timeline_bars(entries: &[Entry]) -> Vec<(String, Vec<Bar>)> {
    use crate::sql_lexer::{TxEffect, statements, tx_effect, words};
    lanes(entries)
        .into_iter()
        .map(|l| {
            let mut bars = Vec::new();
            let mut open: Option<f64> = None;
            for e in entries.iter().filter(|e| e.session == l) {
                let mut in_tx = open.is_some();
                for stmt in statements(&e.sql) {
                    match tx_effect(stmt) {
                        TxEffect::Begin => {
                            open.get_or_insert(e.t_ms);
                        }
                        effect @ (TxEffect::End | TxEffect::Chain) => {
                            let Some(from) = open.take() else { continue };
                            // A failed step, or a COMMIT the server answered with a rollback.
                            let committed = matches!(words(stmt, 1)[0].as_str(), "COMMIT" | "END")
                                && e.result != StepResult::Error
                                && !matches!(&e.detail, crate::report::Phrase::Plain(t) if t == "ROLLBACK");
                            bars.push(Bar {
                                from,
                                to: e.t_ms,
                                colour: if committed { "#1565c0" } else { "#b71c1c" },
                                title: format!("{from:.1}–{:.1} ms", e.t_ms),
                            });
                            if effect == TxEffect::Chain {
                                open = Some(e.t_ms);
                            }
                        }
                        TxEffect::None => {}
                    }
                    in_tx |= open.is_some();
                }
                if !in_tx && !matches!(e.result, StepResult::Note | StepResult::Notice) {
                    bars.push(Bar {
                        from: e.t_ms - e.waited_ms.unwrap_or(0.0),
                        to: e.t_ms,
                        colour: if e.result == StepResult::Error {
                            "#b71c1c"
                        } else {
                            "#2e7d32"
                        },
                        title: cut(&e.sql, 60),
                    });
                }
            }
            (l.to_string(), bars)
        })
        .collect()
}

/// Bars from a pool's reported spans of work (its batches).
fn span_bars(spans: &BTreeMap<String, Vec<[f64; 2]>>) -> Vec<(String, Vec<Bar>)> {
    spans
        .iter()
        .map(|(worker, spans)| {
            let bars = spans
                .iter()
                .map(|[a, b]| Bar {
                    from: *a,
                    to: *b,
                    colour: "#1565c0",
                    title: format!("{a:.1}–{b:.1} ms"),
                })
                .collect();
            (worker.clone(), bars)
        })
        .collect()
}

/// A lane per worker, its bars on a time axis.
fn gantt(svg_id: &str, rows: &[(String, Vec<Bar>)]) -> String {
    let end_ms = rows
        .iter()
        .flat_map(|(_, b)| b.iter().map(|b| b.to))
        .fold(1.0_f64, f64::max);
    let plot_w = 1100.0;
    let lane_h = 40;
    let width = LABEL_W + plot_w as usize + 30;
    let height = rows.len() * lane_h + 40;
    let x = |t: f64| LABEL_W as f64 + t.max(0.0) / end_ms * plot_w;
    let mut s = format!(
        "<svg id=\"{svg_id}\" class=\"gantt\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\">\n"
    );
    for (i, (lane, bars)) in rows.iter().enumerate() {
        let y = i * lane_h;
        let _ = writeln!(
            s,
            "<rect x=\"0\" y=\"{y}\" width=\"{width}\" height=\"{lane_h}\" fill=\"{}\"/><text x=\"8\" y=\"{}\" font-size=\"18\" font-weight=\"700\">{}</text>",
            if i % 2 == 0 { "#fafafa" } else { "#ffffff" },
            y + 26,
            esc(&cut(lane, 10))
        );
        for b in bars {
            let _ = writeln!(
                s,
                "<rect class=\"bar\" x=\"{:.1}\" y=\"{}\" width=\"{:.1}\" height=\"{}\" fill=\"{}\" rx=\"3\"><title>{}</title></rect>",
                x(b.from),
                y + 8,
                (x(b.to) - x(b.from)).max(2.0),
                lane_h - 16,
                b.colour,
                esc(&b.title)
            );
        }
    }
    // The time axis.
    let axis_y = rows.len() * lane_h + 20;
    for k in 0..=5 {
        let t = end_ms * k as f64 / 5.0;
        let _ = writeln!(
            s,
            "<line x1=\"{:.1}\" y1=\"0\" x2=\"{:.1}\" y2=\"{}\" stroke=\"#e0e0e0\"/><text x=\"{:.1}\" y=\"{}\" font-size=\"14\" text-anchor=\"middle\">{:.0} ms</text>",
            x(t),
            x(t),
            axis_y - 14,
            x(t),
            axis_y + 4,
            t
        );
    }
    s.push_str("</svg>");
    s
}

pub mod msg {
    crate::messages! {
        prefix "ht";
        col_level() {
            en: "level",
            tr: "düzey",
        }
        col_class() {
            en: "class",
            tr: "sınıf",
        }
        representative() {
            en: "representative (paste it into the spec's permutations)",
            tr: "temsilci (spec'in permutation listesine yapıştırılabilir)",
        }
        title() {
            en: "lab: what the server did",
            tr: "lab: sunucunun yaptıkları",
        }
        server(version) {
            en: "PostgreSQL {version}",
            tr: "PostgreSQL {version}",
        }
        occurs() {
            en: "occurs",
            tr: "oluşur",
        }
        prevented() {
            en: "prevented",
            tr: "önlenir",
        }
        could_not_write(path) {
            en: "could not write the HTML report to {path}",
            tr: "HTML raporu {path} dosyasına yazılamadı",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{lines_of, timeline_bars};

    #[test]
    fn a_run_stopped_part_way_says_so_above_the_summary() {
        let mut done = crate::report::ScenarioReport::new("lost-update", "18.1");
        done.variants = Vec::new();
        let mut stopped = crate::report::ScenarioReport::new("write-skew", "18.1");
        stopped.error = Some(crate::report::RunError {
            variant: "serializable".into(),
            message: "interrupted: lab ended its sessions".into(),
            exit_code: 130,
        });
        let style = crate::render::Style::plain(crate::i18n::Lang::En);
        let page = super::page(&[done, stopped], super::Kind::Runs, &style);
        let banner = page.find("id=\"stopped\"").expect("a banner");
        assert!(
            banner < page.find("<table id=\"summary\"").expect("a summary"),
            "{page}"
        );
        assert!(page[banner..].contains("write-skew/serializable</a>: interrupted: lab ended its sessions"));
    }

    #[test]
    fn two_stopped_scenarios_have_one_stopped_anchor() {
        let stopped = |name: &str| {
            let mut r = crate::report::ScenarioReport::new(name, "18.1");
            r.error = Some(crate::report::RunError {
                variant: "v".into(),
                message: "failed".into(),
                exit_code: 2,
            });
            r
        };
        let style = crate::render::Style::plain(crate::i18n::Lang::En);
        let page = super::page(&[stopped("a"), stopped("b")], super::Kind::Runs, &style);
        assert_eq!(page.matches("id=\"stopped\"").count(), 1, "{page}");
        assert_eq!(page.matches("<p class=\"bad\"><a href=").count(), 1, "{page}");
    }

    #[test]
    fn a_matrix_cell_says_what_its_variant_says_and_a_documented_anomaly_is_not_red() {
        let mut r = crate::report::ScenarioReport::new("phenomena.g2-item", "18.1");
        let cell = |name: &str, anomaly: bool, as_expected: bool, lines: &[&str]| {
            let mut v =
                crate::report::VariantReport::new(name, crate::i18n::ui::verdict_ok(), crate::i18n::ui::verdict_ok());
            v.anomaly = Some(anomaly);
            v.as_expected = as_expected;
            v.cell = lines.iter().map(|l| crate::i18n::ui::verbatim(*l)).collect();
            v
        };
        r.variants = vec![
            cell("repeatable-read", true, true, &["✗ occurs", "6/6 <occur>"]),
            cell("serializable", false, false, &["✓ blocked", "≠ expected ✓ aborted"]),
            cell("read-committed", true, true, &[]),
        ];
        let style = crate::render::Style::plain(crate::i18n::Lang::En);
        let page = super::page(&[r], super::Kind::Matrix, &style);
        assert!(page.contains(">✗ occurs<br>6/6 &lt;occur&gt;</td>"), "{page}");
        assert!(
            page.contains("<td class=\"cell-bad\" title=\"\">✓ blocked<br>≠ expected ✓ aborted</td>"),
            "{page}"
        );
        assert!(
            page.contains("<td class=\"cell-occurs\" title=\"\">occurs</td>"),
            "{page}"
        );
        // Yellow, as the terminal's matrix has it; red is for not as documented.
        assert!(page.contains("td.cell-occurs { background: #fff3b0; }"), "{page}");
    }

    #[test]
    fn a_phenomenon_is_headed_by_its_name_in_the_page_language_with_its_id() {
        let mut r = crate::report::ScenarioReport::new("phenomena.p4", "18.1");
        r.title = Some(crate::i18n::Arg::Each {
            en: "lost update (P4)".into(),
            tr: "kayıp güncelleme (P4)".into(),
        });
        let page = |lang| super::page(&[r.clone()], super::Kind::Matrix, &crate::render::Style::plain(lang));
        let en = page(crate::i18n::Lang::En);
        assert!(
            en.contains(
                "<tr><th><a href=\"#scenario-phenomena-p4\">lost update (P4) <span class=\"meta\">(p4)</span></a></th>"
            ),
            "{en}"
        );
        assert!(
            en.contains("<h2 id=\"scenario-phenomena-p4\">lost update (P4) <span class=\"meta\">(p4)</span></h2>"),
            "{en}"
        );
        let tr = page(crate::i18n::Lang::Tr);
        assert!(
            tr.contains(">kayıp güncelleme (P4) <span class=\"meta\">(p4)</span></a></th>"),
            "{tr}"
        );
        // Without a name, its id as before.
        let plain = super::page(
            &[crate::report::ScenarioReport::new("lost-update", "18.1")],
            super::Kind::Runs,
            &crate::render::Style::plain(crate::i18n::Lang::En),
        );
        assert!(
            plain.contains("<h2 id=\"scenario-lost-update\">lost-update</h2>"),
            "{plain}"
        );
    }

    #[test]
    fn backticks_in_prose_are_code_and_the_rest_is_escaped() {
        assert_eq!(
            super::prose("B's `quantity_on_hand - 1` waits for <A>"),
            "B&apos;s <code>quantity_on_hand - 1</code> waits for &lt;A&gt;"
        );
        // Unpaired: as written.
        assert_eq!(super::prose("a ` b"), "a ` b");
    }

    #[test]
    fn a_statement_wraps_at_spaces_and_a_long_one_ends_with_an_ellipsis() {
        let sql = "UPDATE stock_items\n   SET quantity_on_hand = quantity_on_hand - 1 WHERE book_id = 1;";
        let lines = lines_of(sql, 30, 5);
        assert_eq!(
            lines,
            [
                "UPDATE stock_items SET",
                "quantity_on_hand =",
                "quantity_on_hand - 1 WHERE",
                "book_id = 1;"
            ]
        );
        assert!(lines.iter().all(|l| l.chars().count() <= 30));
        let cut = lines_of(sql, 30, 2);
        assert_eq!(cut, ["UPDATE stock_items SET", "quantity_on_hand = …"]);
        assert!(lines_of("  ", 30, 2).is_empty());
        // A word longer than a line is cut, never lost.
        let long = lines_of(&"x".repeat(45), 20, 5);
        assert_eq!(long.concat(), "x".repeat(45));
    }
    use crate::report::{Entry, Phrase, StepResult};

    fn entry(t_ms: f64, sql: &str, result: StepResult, detail: &str) -> Entry {
        let mut e = Entry::new(t_ms, "A", result, Phrase::Plain(detail.into()));
        e.sql = sql.into();
        e
    }

    #[test]
    fn a_transaction_is_one_bar_from_begin_to_its_end() {
        let ok = StepResult::Ok;
        let timeline = [
            entry(1.0, "BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT 1;", ok, "SELECT 1"),
            // Inside the transaction: no bar of its own, and no end.
            entry(2.0, "ROLLBACK TO SAVEPOINT s;", ok, "ROLLBACK"),
            entry(3.0, "COMMIT AND CHAIN;", ok, "COMMIT"),
            entry(4.0, "UPDATE t SET v = 1; COMMIT;", ok, "COMMIT"),
            entry(5.0, "SELECT 2;", ok, "SELECT 1"),
            entry(6.0, "BEGIN;", ok, "BEGIN"),
            // A failed transaction's COMMIT rolls it back.
            entry(7.0, "COMMIT;", ok, "ROLLBACK"),
        ];
        let bars = timeline_bars(&timeline);
        let spans: Vec<(f64, f64, &str)> = bars[0].1.iter().map(|b| (b.from, b.to, b.colour)).collect();
        let (blue, red, green) = ("#1565c0", "#b71c1c", "#2e7d32");
        assert_eq!(
            spans,
            [(1.0, 3.0, blue), (3.0, 4.0, blue), (5.0, 5.0, green), (6.0, 7.0, red)]
        );
    }
}
