//! `--html`: the report opened in a real browser (headless Chromium from the
//! Debian package; scripts/test installs it). The page must not be blank, and
//! its swimlanes, Gantt charts, matrix and summary must be laid out (their
//! ids found with non-empty bounding boxes, as the browser computed them).
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::support::run;

fn chromium() -> &'static str {
    for c in ["/usr/bin/chromium", "/usr/bin/chromium-browser"] {
        if Path::new(c).exists() {
            return c;
        }
    }
    panic!("no chromium: scripts/test installs it (Debian package chromium)");
}

/// Chromium headless with the flags this machine needs (no sandbox as root,
/// no background networking), on a profile of its own.
fn browser(profile: &Path) -> Command {
    let mut c = Command::new(chromium());
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
    ])
    .arg(format!("--user-data-dir={}", profile.display()));
    c
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lab-report-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The bounding box of every element matching `selector`, as laid out by
/// the browser: the report plus a probe script, dumped after it ran.
fn boxes(html: &Path, selector: &str, dir: &Path) -> Vec<(String, f64, f64)> {
    let page = std::fs::read_to_string(html).unwrap();
    let probe = format!(
        "<script>addEventListener('load', () => {{ const out = [...document.querySelectorAll('{selector}')]\
         .map(e => {{ const r = e.getBoundingClientRect(); return [e.id || e.getAttribute('class') || e.tagName, r.width, r.height]; }});\
         const pre = document.createElement('pre'); pre.id = 'probe'; pre.textContent = JSON.stringify(out); document.body.append(pre); }});</script></body>"
    );
    let probed = dir.join("probed.html");
    std::fs::write(&probed, page.replace("</body>", &probe)).unwrap();
    let out = browser(&dir.join("profile"))
        .args(["--virtual-time-budget=5000", "--dump-dom"])
        .arg(format!("file://{}", probed.display()))
        .output()
        .expect("chromium runs");
    let dom = String::from_utf8_lossy(&out.stdout);
    let json = dom
        .split("<pre id=\"probe\">")
        .nth(1)
        .and_then(|r| r.split("</pre>").next())
        .unwrap_or_else(|| panic!("the probe ran: {}", String::from_utf8_lossy(&out.stderr)))
        .replace("&quot;", "\"");
    let v: Value = serde_json::from_str(&json).unwrap();
    v.as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b[0].as_str().unwrap_or("").to_string(),
                b[1].as_f64().unwrap_or(0.0),
                b[2].as_f64().unwrap_or(0.0),
            )
        })
        .collect()
}

/// A screenshot of the page; the share of its pixels that are not white.
fn screenshot(html: &Path, png: &Path, dir: &Path) -> f64 {
    let out = browser(&dir.join("profile"))
        .args(["--window-size=1400,1800"])
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("file://{}", html.display()))
        .output()
        .expect("chromium runs");
    assert!(png.exists(), "no screenshot: {}", String::from_utf8_lossy(&out.stderr));
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(png).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let bytes = &buf[..info.buffer_size()];
    let channels = info.color_type.samples();
    let pixels = bytes.len() / channels;
    let inked = bytes
        .chunks(channels)
        .filter(|p| p.iter().take(3).any(|&c| c < 200))
        .count();
    inked as f64 / pixels as f64
}

#[test]
fn the_html_report_is_drawn_by_a_real_browser() {
    let dir = temp("scenarios");
    let html = dir.join("lab.html");
    let r = run(&[
        "lost-update",
        "--variant",
        "read-committed",
        "--variant",
        "select-for-update",
        "--html",
        html.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.why());
    let page = std::fs::read_to_string(&html).unwrap();
    // Self-contained: nothing is fetched (the SVG namespace is a name, not a fetch).
    let bare = page.replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
    assert!(!bare.contains("http://") && !bare.contains("https://"), "a link out");
    assert!(!bare.contains("<link") && !bare.contains(" src="), "nothing fetched");
    let found = boxes(&html, "svg.swimlanes, g.step, rect.wait, line.release", &dir);
    let laid_out = |id: &str| found.iter().any(|(i, w, h)| i == id && *w > 100.0 && *h > 50.0);
    assert!(laid_out("swimlanes-lost-update-read-committed"), "{found:?}");
    assert!(laid_out("swimlanes-lost-update-select-for-update"), "{found:?}");
    // Statements as boxes, B's wait as a hatched bar, A's COMMIT's arrow to it.
    let count = |class: &str| {
        found
            .iter()
            .filter(|(i, w, h)| i == class && *w > 0.0 && *h > 0.0)
            .count()
    };
    assert!(count("step") >= 16, "{found:?}");
    assert_eq!(count("wait"), 1, "{found:?}");
    assert_eq!(count("release"), 1, "{found:?}");
    let png = dir.join("lab.png");
    let ink = screenshot(&html, &png, &dir);
    assert!(ink > 0.02, "the page looks blank ({ink:.3} of the pixels inked)");
    // docs/WORKSHOP.md's picture is this screenshot (LAB_BLESS=1 makes it again).
    if std::env::var_os("LAB_BLESS").is_some() {
        let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs");
        std::fs::create_dir_all(&docs).unwrap();
        std::fs::copy(&png, docs.join("html-report.png")).unwrap();
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn several_specs_have_their_summary_first() {
    let dir = temp("specs");
    let html = dir.join("specs.html");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let specs: Vec<String> = ["lab/examples/last-copy.spec", "lab/nowait.spec"]
        .iter()
        .map(|p| root.join(p).display().to_string())
        .collect();
    let mut args = vec!["spec", "--html", html.to_str().unwrap()];
    args.extend(specs.iter().map(String::as_str));
    let r = run(&args);
    assert!(r.code == 0 || r.code == 1, "{}", r.stderr);
    let found = boxes(&html, "#summary, svg.swimlanes", &dir);
    assert_eq!(found.first().map(|f| f.0.as_str()), Some("summary"), "{found:?}");
    assert!(found.iter().any(|(i, w, h)| i == "summary" && *w > 100.0 && *h > 50.0));
    assert!(
        found.iter().filter(|(i, _, _)| i.starts_with("swimlanes-")).count() >= 2,
        "{found:?}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_pools_get_gantt_charts_and_the_matrix_a_coloured_grid() {
    let dir = temp("all");
    let html = dir.join("lab.html");
    let r = run(&[
        "queue",
        "--messages",
        "200",
        "--work-ms",
        "5",
        "--html",
        html.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.why());
    let found = boxes(&html, "svg.gantt, rect.bar", &dir);
    for id in ["gantt-queue-for-update", "gantt-queue-skip-locked"] {
        assert!(
            found.iter().any(|(i, w, h)| i == id && *w > 100.0 && *h > 50.0),
            "{id}: {found:?}"
        );
    }
    // A bar per batch: 200 messages in batches of 10, in each variant.
    let bars = found.iter().filter(|(i, w, _)| i == "bar" && *w > 0.0).count();
    assert!(bars >= 40, "{bars} bars");
    let html = dir.join("phenomena.html");
    let r = run(&["phenomena", "--html", html.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.why());
    let found = boxes(&html, "#matrix, td.cell-ok, td.cell-occurs, td.cell-bad", &dir);
    assert!(
        found.iter().any(|(i, w, h)| i == "matrix" && *w > 200.0 && *h > 100.0),
        "{found:?}"
    );
    let cells = found.iter().filter(|(i, _, _)| i.starts_with("cell-")).count();
    assert_eq!(cells, 76, "every cell of the matrix is drawn");
    assert!(!found.iter().any(|(i, _, _)| i == "cell-bad"), "all as documented");
    // A cell says how the server prevented the anomaly, as the terminal's matrix does.
    let page = std::fs::read_to_string(&html).unwrap();
    let row = page
        .lines()
        .find(|l| l.contains(">write skew (G2-item, A5B) <span class=\"meta\">(g2-item)</span></a></th>"))
        .expect("write skew's row, headed by its name as in the terminal");
    assert_eq!(row.matches(">✗ occurs</td>").count(), 3, "{row}");
    assert!(row.contains(">✓ aborted"), "{row}");
    std::fs::remove_dir_all(&dir).unwrap();
}
