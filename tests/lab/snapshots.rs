//! Snapshots (insta) of every text renderer from hand-made reports, in
//! English and Turkish: the timeline, a variant with its evidence and notes,
//! the verdict table, the summaries, the catalogue list, JUnit and Mermaid.
//! A change to what a person reads shows up here as a diff to review
//! (`cargo insta review`, or INSTA_UPDATE=always to accept).
use lab::i18n::{Arg, Def, Lang, Text};
use lab::render::{self, Listed, Style};
use lab::report::{AllReport, Check, Entry, Evidence, Phrase, ScenarioReport, StepResult, VariantReport, WaitKind};

/// A run's wall time, for JUnit's root (every snapshot: 1.5 s).
const WALL: std::time::Duration = std::time::Duration::from_millis(1500);

/// A JSON document with lab's version replaced (a release would change every snapshot).
fn versionless(json: String) -> String {
    let at = format!("\"lab_version\": \"{}\"", env!("CARGO_PKG_VERSION"));
    assert!(json.contains(&at), "{json}");
    json.replacen(&at, "\"lab_version\": \"[version]\"", 1)
}

macro_rules! def {
    ($name:ident, $key:literal, $en:literal, $tr:literal, [$($p:literal),*]) => {
        static $name: Def = Def { key: $key, en: $en, tr: $tr, params: &[$($p),*] };
    };
}

def!(
    EXPECTED_OK,
    "t.expected_ok",
    "B waits for A, then reads 35",
    "B, A'yı bekler, sonra 35 okur",
    []
);
def!(
    EXPECTED_BAD,
    "t.expected_bad",
    "B's UPDATE fails with 40001",
    "B'nin UPDATE'i 40001 ile başarısız olur",
    []
);
def!(
    EXPLAIN,
    "t.explain",
    "A row lock is held until COMMIT.",
    "Satır kilidi COMMIT'e kadar tutulur.",
    []
);
def!(OBSERVED, "t.observed", "final {stock}", "son {stock}", ["stock"]);
def!(CHECK, "t.check", "B waits for A", "B, A'yı bekler", []);
def!(NOTE, "t.note", "two writes in the audit", "denetimde iki yazma", []);
def!(TITLE, "t.title", "audit trail", "denetim kaydı", []);
def!(
    SUMMARY,
    "t.summary",
    "two clerks sell the last copies",
    "iki satıcı son kopyaları satar",
    []
);

fn text(def: &'static Def) -> Text {
    Text::new(def, Vec::new())
}

fn entry(t_ms: f64, session: &str, sql: &str, result: StepResult, detail: &str) -> Entry {
    let mut e = Entry::new(t_ms, session, result, Phrase::Plain(detail.to_string()));
    e.sql = sql.to_string();
    e
}

fn waited() -> VariantReport {
    let mut wait = entry(
        3.0,
        "B",
        "UPDATE stock_items SET quantity_on_hand = 34;",
        StepResult::Waiting,
        "",
    );
    wait.detail = Phrase::Text(lab::i18n::ui::waiting(vec!["A".to_string()]));
    wait.blocked_by = Some(vec!["A".into()]);
    wait.wait = Some(WaitKind::Lock);
    wait.lock = Some("ShareLock on transactionid".into());
    let mut done = entry(
        4.5,
        "B",
        "UPDATE stock_items SET quantity_on_hand = 34;",
        StepResult::Completed,
        "UPDATE 1",
    );
    done.waited_ms = Some(1.5);
    let mut begin = entry(1.0, "A", "BEGIN;", StepResult::Ok, "BEGIN");
    begin.isolation = Some("read committed".into());
    VariantReport {
        sessions: [
            ("A".to_string(), over_tls()),
            ("B".to_string(), lab::report::Connection::of(None)),
        ]
        .into_iter()
        .collect(),
        name: "select-for-update".into(),
        as_expected: true,
        anomaly: Some(false),
        expected: text(&EXPECTED_OK),
        explain: text(&EXPLAIN),
        observed: vec![Text::new(&OBSERVED, vec![("stock", Arg::Int(34))])],
        checks: vec![Check {
            id: "t.check".into(),
            ok: true,
            text: text(&CHECK),
        }],
        elapsed_ms: 12.0,
        sqlstates: vec![],
        metrics: serde_json::from_str(r#"{"final_quantity": 34}"#).unwrap(),
        timeline: vec![
            begin,
            entry(
                2.0,
                "A",
                "UPDATE stock_items SET quantity_on_hand = 35;",
                StepResult::Ok,
                "UPDATE 1",
            ),
            wait,
            entry(4.0, "A", "COMMIT;", StepResult::Ok, "COMMIT"),
            done,
        ],
        skipped: None,
        pooler_differs: None,
        diff: None,
        notes: vec![text(&NOTE)],
        evidence: vec![Evidence {
            title: Phrase::Text(text(&TITLE)),
            columns: vec![Phrase::Plain("session".into()), Phrase::Plain("new_value".into())],
            rows: vec![
                vec![Phrase::Plain("A".into()), Phrase::Plain("35".into())],
                vec![Phrase::Plain("B".into()), Phrase::Plain("34".into())],
            ],
        }],
        spans: Default::default(),
        cycle: None,
        label: None,
        cell: vec![],
    }
}

fn failed() -> VariantReport {
    let mut error = entry(
        2.5,
        "B",
        "UPDATE stock_items SET quantity_on_hand = 35;",
        StepResult::Error,
        "ERROR 40001: could not serialize access due to concurrent update",
    );
    error.sqlstate = Some("40001".into());
    VariantReport {
        sessions: Default::default(),
        name: "repeatable-read".into(),
        as_expected: false,
        anomaly: Some(true),
        expected: text(&EXPECTED_BAD),
        explain: text(&EXPLAIN),
        observed: vec![Text::new(&OBSERVED, vec![("stock", Arg::Int(35))])],
        checks: vec![Check {
            id: "t.check".into(),
            ok: false,
            text: text(&CHECK),
        }],
        elapsed_ms: 8.0,
        sqlstates: vec!["40001".into()],
        metrics: Default::default(),
        timeline: vec![entry(1.0, "A", "BEGIN;", StepResult::Ok, "BEGIN"), error],
        skipped: None,
        pooler_differs: None,
        diff: None,
        notes: vec![],
        evidence: vec![],
        spans: Default::default(),
        cycle: None,
        label: None,
        cell: vec![],
    }
}

/// A connection over TLS, checked with verify-full.
fn over_tls() -> lab::report::Connection {
    lab::report::Connection::of(Some(lab::postgres::tls::Facts {
        version: "TLSv1.3".into(),
        cipher: "TLS13_AES_256_GCM_SHA384".into(),
        subject: Some("CN=db.example.com".into()),
        verified: "chain and host name",
        host: "db.example.com".into(),
    }))
}

fn scenario() -> ScenarioReport {
    ScenarioReport {
        scenario: "demo".into(),
        server_version: "15.18".into(),
        as_expected: false,
        elapsed_ms: 20.0,
        variants: vec![waited(), failed()],
        error: None,
        // Reached over TLS: the footer and the JSON say how.
        connection: Some(over_tls()),
        title: None,
    }
}

fn all() -> AllReport {
    AllReport {
        server_version: "15.18".into(),
        as_expected: false,
        elapsed_ms: 20.0,
        scenarios: vec![scenario()],
    }
}

fn styles() -> [(&'static str, Style); 2] {
    let explained = |lang| Style {
        explain: true,
        ..Style::plain(lang)
    };
    [("en", explained(Lang::En)), ("tr", explained(Lang::Tr))]
}

#[test]
fn timeline_and_variant() {
    for (lang, style) in styles() {
        insta::assert_snapshot!(format!("timeline_{lang}"), render::timeline(&waited().timeline, &style));
        insta::assert_snapshot!(format!("variant_{lang}"), render::variant("demo", &waited(), &style));
    }
}

#[test]
fn verdict_table_and_summaries() {
    for (lang, style) in styles() {
        insta::assert_snapshot!(
            format!("verdicts_{lang}"),
            render::scenario_outcomes(&scenario(), &style)
        );
        insta::assert_snapshot!(format!("summary_{lang}"), render::all_summary(&all(), &style));
        insta::assert_snapshot!(format!("brief_summary_{lang}"), render::brief_summary(&all(), &style));
    }
}

#[test]
fn catalogue_list() {
    let listed = vec![Listed {
        name: "demo",
        summary: text(&SUMMARY),
        variants: vec![
            ("select-for-update", text(&EXPECTED_OK)),
            ("repeatable-read", text(&EXPECTED_BAD)),
        ],
        readme: "",
    }];
    for (lang, style) in styles() {
        insta::assert_snapshot!(format!("list_{lang}"), render::list(&listed, &style));
    }
}

#[test]
fn junit_and_mermaid() {
    // JUnit is English whatever the language; Mermaid follows the reader's.
    insta::assert_snapshot!("junit", render::junit(&[scenario()], WALL));
    for (lang, style) in styles() {
        insta::assert_snapshot!(
            format!("mermaid_{lang}"),
            render::mermaid::report(&[scenario()], &style)
        );
    }
}

/// `lab phenomena`'s report, hand-made: a cell that occurs, one blocked
/// (who for whom), one aborted with its SQLSTATE and its interleavings
/// counted, one not as documented (read back at another level), and a
/// phenomenon whose second cell was never measured (a run cut short).
fn matrix() -> lab::report::phenomena::MatrixReport {
    use lab::report::phenomena::{Cell, Expected, How, Interleavings, MatrixError, MatrixReport, Row, Verdict};
    let cell = |verdict, how, expected: (Verdict, Option<How>)| Cell {
        verdict,
        how,
        sqlstate: None,
        at_step: None,
        waited_for: None,
        expected: Expected {
            verdict: expected.0,
            how: expected.1,
        },
        as_expected: true,
        wrong_level: None,
        interleavings: None,
        timeline: vec![
            entry(1.0, "T1", "BEGIN;", StepResult::Ok, "BEGIN"),
            entry(2.0, "T2", "SELECT v FROM t;", StepResult::Ok, "v=1"),
        ],
        elapsed_ms: 5.0,
    };
    let occurs = cell(Verdict::Occurs, How::None, (Verdict::Occurs, None));
    let blocked = Cell {
        at_step: Some("t2_write".into()),
        waited_for: Some(vec!["T1".into()]),
        ..cell(
            Verdict::Prevented,
            How::Blocked,
            (Verdict::Prevented, Some(How::Blocked)),
        )
    };
    let aborted = Cell {
        sqlstate: Some("40001".into()),
        at_step: Some("t2_commit".into()),
        interleavings: Some(Interleavings {
            runs: 20,
            occur: 0,
            blocked: 6,
            aborted: 12,
            dead_ends: 2,
            stuck: 0,
            as_expected: true,
        }),
        ..cell(Verdict::Prevented, How::Aborted, (Verdict::Prevented, None))
    };
    let wrong = Cell {
        as_expected: false,
        wrong_level: Some("repeatable read".into()),
        ..cell(Verdict::Prevented, How::Snapshot, (Verdict::Occurs, None))
    };
    let each = |en: &str, tr: &str| Arg::Each {
        en: en.into(),
        tr: tr.into(),
    };
    MatrixReport {
        server_version: "15.18".into(),
        as_expected: false,
        elapsed_ms: None,
        levels: vec!["read-committed".into(), "serializable".into()],
        phenomena: vec![
            Row {
                id: "p4".into(),
                name: "lost update (P4)".into(),
                title: each("lost update (P4)", "kayıp güncelleme (P4)"),
                what: each("two writers, one lost", "iki yazar, biri kayıp"),
                cells: vec![(1, Some(occurs)), (3, Some(aborted))],
            },
            Row {
                id: "g0".into(),
                name: "dirty write (G0)".into(),
                title: each("dirty write (G0)", "kirli yazma (G0)"),
                what: each(
                    "a write over an uncommitted write",
                    "commit edilmemiş bir yazmanın üstüne yazma",
                ),
                cells: vec![(1, Some(blocked)), (3, Some(wrong))],
            },
            Row {
                id: "g1a".into(),
                name: "aborted read (G1a)".into(),
                title: each("aborted read (G1a)", "iptal edilmiş okuma (G1a)"),
                what: each("a read of a write rolled back", "geri alınmış bir yazmayı okuma"),
                cells: vec![(1, None), (3, None)],
            },
        ],
        error: Some(MatrixError {
            phenomenon: Some("g1a".into()),
            level: Some("read-committed".into()),
            message: "interrupted".into(),
            exit_code: 130,
        }),
    }
}

#[test]
fn phenomena_matrix_json_mermaid_and_suites() {
    let m = matrix();
    for (lang, style) in styles() {
        insta::assert_snapshot!(
            format!("phenomena_{lang}"),
            render::phenomena::text(&m, &style, true, true)
        );
        insta::assert_snapshot!(
            format!("phenomena_mermaid_{lang}"),
            render::phenomena::mermaid(&m, &style)
        );
    }
    insta::assert_snapshot!("phenomena_json", versionless(render::phenomena::json(&m).unwrap()));
    insta::assert_snapshot!("phenomena_junit", render::junit(&render::phenomena::suites(&m), WALL));
}

/// `lab explore`'s report, hand-made: two levels of a spec that says what
/// an anomaly is, sampled, run one at a time; classes that waited, aborted
/// at COMMIT, read, and one at a dead end; the spec's own permutation marked.
/// Sessions, each over TLS as [`over_tls`] says.
fn sessions_over_tls(names: &[&str]) -> std::collections::BTreeMap<String, lab::report::Connection> {
    names.iter().map(|n| (n.to_string(), over_tls())).collect()
}

fn explored() -> lab::report::explore::ExploreReport {
    use lab::commands::explore::msg as m;
    use lab::i18n::ui::verbatim;
    use lab::report::explore::{
        Aborts, ClassReport, Ended, ExploreReport, Heading, LevelReport, RunLine, Signature, StepOutcome, Summary,
        Tally, What,
    };
    let step = |name: &str, waited: Option<&str>, ended: Ended, rows: Option<&str>| StepOutcome {
        step: name.into(),
        waited_for: waited.map(|w| vec![w.to_string()]),
        ended,
        rows: rows.map(str::to_string),
        commit: name.ends_with("_c"),
    };
    let waited = Signature {
        anomaly: Some(false),
        steps: vec![
            step("a_w", None, Ended::Ok, None),
            step("b_w", Some("A"), Ended::Ok, None),
        ],
    };
    let aborted = Signature {
        anomaly: Some(false),
        steps: vec![step("b_c", None, Ended::Error("40001".into()), None)],
    };
    let skewed = Signature {
        anomaly: Some(true),
        steps: vec![step("r", None, Ended::Ok, Some("n=2"))],
    };
    let stuck = Signature {
        anomaly: Some(false),
        steps: vec![step("b_w", Some("A"), Ended::DeadEnd, None)],
    };
    let class = |n: usize, runs: usize, what: Vec<lab::i18n::Text>, sig: &Signature, marked: bool| ClassReport {
        class: n,
        runs,
        serial: usize::from(n == 1),
        what: What(what),
        representative: format!("a_w b_w a_c b_c /* {n} */"),
        marked,
        signature: sig.clone(),
        timeline: vec![entry(1.0, "A", "BEGIN;", StepResult::Ok, "BEGIN")],
        elapsed_ms: 3.0,
    };
    let tally = |runs, anomaly, blocked, aborted, dead_ends| Tally {
        runs,
        anomaly,
        blocked,
        aborted,
        failed: 0,
        dead_ends,
        stuck: 0,
        serial: 1,
        classes: 2,
        aborts: if aborted > 0 {
            vec![Aborts {
                sqlstate: "40001".into(),
                at_commit: true,
                runs: aborted,
            }]
        } else {
            vec![]
        },
    };
    let rc = LevelReport {
        level: Some("read-committed".into()),
        name: verbatim("read-committed".to_string()),
        permutations: 6,
        tally: tally(6, Some(4), 2, 0, 0),
        own_level: None,
        as_expected: Some(true),
        judged_at: vec!["read-committed".into()],
        summary: Summary {
            parts: vec![m::occur(verbatim("read-committed".to_string()), 4, 6), m::blocked_n(2)],
            own: None,
            verdict: Some(m::documented(m::occurs_some())),
        },
        classes: vec![
            class(1, 4, vec![m::anomaly(), m::read("r", "n=2")], &skewed, true),
            class(2, 2, vec![m::waited("b_w", "A")], &waited, false),
        ],
        expected: Some(m::occurs_some()),
        elapsed_ms: 40.0,
        marked: true,
    };
    let ser = LevelReport {
        level: Some("serializable".into()),
        name: verbatim("serializable".to_string()),
        permutations: 6,
        tally: tally(6, Some(0), 2, 3, 1),
        own_level: Some("repeatable read".into()),
        as_expected: Some(false),
        judged_at: vec!["serializable".into()],
        summary: Summary {
            parts: vec![
                m::occur(verbatim("serializable".to_string()), 0, 6),
                m::aborted_at_commit_n(3, "40001"),
                m::dead_ends_n(1),
            ],
            own: Some(m::own_level("repeatable read")),
            verdict: Some(m::not_documented(m::occurs_none())),
        },
        classes: vec![
            class(1, 3, vec![m::aborted("b_c", "40001")], &aborted, false),
            class(2, 3, vec![m::plain()], &stuck, false),
        ],
        expected: Some(m::occurs_none()),
        elapsed_ms: 55.5,
        marked: false,
    };
    ExploreReport {
        spec: "write-skew".into(),
        own_level: None,
        schemas_remade: 1,
        server_version: "15.18".into(),
        as_expected: false,
        elapsed_ms: 1234.5,
        levels: vec![rc, ser],
        runs: vec![RunLine {
            level: Some("read-committed".into()),
            ran_at: vec!["read committed".into()],
            permutation: "a_w b_w a_c b_c".into(),
            class: Some(1),
            signature: Some(skewed.clone()),
            elapsed_ms: 6.5,
        }],
        sessions: sessions_over_tls(&["a", "b", "setup"]),
        error: None,
        heading: Heading {
            permutations: 6,
            levels: 2,
            runs: 12,
            sampled: Some((6, "70".into(), 1)),
            alone: Some(m::shared_advisory()),
            judged: true,
        },
    }
}

#[test]
fn explore_levels_classes_json_and_suites() {
    let r = explored();
    for (lang, style) in styles() {
        insta::assert_snapshot!(format!("explore_{lang}"), render::explore::text(&r, &style));
        let (junit, pages) = render::explore::suites(&r, style.lang);
        insta::assert_snapshot!(format!("explore_junit_{lang}"), render::junit(&junit, WALL));
        assert_eq!(pages.len(), 2, "a page per level");
        assert_eq!(pages[1].variants.len(), 2, "a diagram per class");
    }
    insta::assert_snapshot!("explore_json", versionless(render::explore::json(&r).unwrap()));
}

/// `lab shell`'s `\html` page of a session (hand-made: A holds a row lock,
/// B waits for it, then fails with 40001), in both languages.
#[test]
fn shell_session_page() {
    let mut wait = entry(2.0, "B", "UPDATE t SET v = 2;", StepResult::Waiting, "");
    wait.detail = Phrase::Text(lab::i18n::ui::waiting(vec!["A".to_string()]));
    wait.blocked_by = Some(vec!["A".into()]);
    wait.wait = Some(WaitKind::Lock);
    let mut failed = entry(
        3.5,
        "B",
        "UPDATE t SET v = 2;",
        StepResult::Error,
        "ERROR 40001: could not serialize access due to concurrent update",
    );
    failed.sqlstate = Some("40001".into());
    let timeline = vec![
        entry(1.0, "A", "UPDATE t SET v = 1;", StepResult::Ok, "UPDATE 1"),
        wait,
        entry(3.0, "A", "COMMIT;", StepResult::Ok, "COMMIT"),
        failed,
    ];
    let report = lab::commands::shell::session_report("15.18", timeline);
    for (lang, style) in styles() {
        insta::assert_snapshot!(
            format!("shell_html_{lang}"),
            render::html::page(std::slice::from_ref(&report), render::html::Kind::Session, &style)
        );
    }
}

/// `lab spec`'s report of one spec (hand-made): a permutation as expected,
/// one whose output differs from its expected file (the diff in JUnit), and
/// what the spec left behind in the database given.
#[test]
fn spec_report_text_json_and_junit() {
    let mut ok = waited();
    ok.name = "s1_r s2_w s1_c s2_c".into();
    let mut differs = failed();
    differs.name = "s2_w s1_r s1_c s2_c".into();
    differs.diff = Some("--- expected/receipt.out\n+++ results/receipt.out\n@@ -3 +3 @@\n-step s1_c: COMMIT;\n+step s1_c: COMMIT; <waiting ...>\n".into());
    let mut left = VariantReport::new("database", text(&EXPECTED_OK), text(&EXPLAIN));
    left.as_expected = false;
    left.observed = vec![Text::new(
        &OBSERVED,
        vec![("stock", Arg::Str("table public.receipt".into()))],
    )];
    let report = ScenarioReport {
        scenario: "receipt".into(),
        server_version: "15.18".into(),
        as_expected: false,
        elapsed_ms: 30.0,
        variants: vec![ok, differs, left],
        error: None,
        connection: None,
        title: None,
    };
    for (lang, style) in styles() {
        insta::assert_snapshot!(format!("spec_{lang}"), render::scenario(&report, &style));
    }
    let run = AllReport {
        server_version: "15.18".into(),
        as_expected: false,
        elapsed_ms: 30.0,
        scenarios: vec![report.clone()],
    };
    insta::assert_snapshot!("spec_json", versionless(render::document("spec", &run).unwrap()));
    insta::assert_snapshot!("spec_junit", render::junit(std::slice::from_ref(&report), WALL));
}

/// `lab hunt`'s report from a hand-made history (a Long Fork, Jepsen's
/// format), judged at REPEATABLE READ and read committed, one reproducer
/// replayed (8 of 10 showed it): text in both languages, JSON, JUnit.
#[test]
fn hunt_levels_anomalies_json_and_suites() {
    use lab::commands::hunt::check::{self, Level, Options};
    use lab::commands::hunt::history::History;
    use lab::commands::hunt::job::{Found, Outputs, Replayed};
    use lab::commands::hunt::reproduce::{self, Order};
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/hunt/long-fork.edn")).unwrap();
    let history = History::parse(&text).unwrap();
    let options = Options::default();
    let checked = check::check(&history, options).unwrap();
    assert!(!checked.anomalies.is_empty(), "a Long Fork is found");
    let found = |level: Level, replayed: Vec<(usize, Replayed)>| Found {
        level: Some(level),
        history: history.clone(),
        checked: checked.clone(),
        replayed,
        file: Some("lab-hunt/history.jsonl".into()),
        read_back_differs: None,
        secs: 0.004,
        partial: false,
    };
    let r = reproduce::build(
        &history,
        &checked.anomalies[0],
        Level::RepeatableRead,
        (true, Order::Answered),
        "a hand-made history",
    );
    let replayed = Replayed {
        reproducer: r,
        path: Some("lab-hunt/long-fork.spec".into()),
        showed: 8,
        of: 10,
        instead: Some("no cycle".into()),
        shrunk: true,
    };
    let levels = [
        found(Level::ReadCommitted, Vec::new()),
        found(Level::RepeatableRead, vec![(0, replayed)]),
    ];
    for (lang, l) in [("en", Lang::En), ("tr", Lang::Tr)] {
        let outputs = Outputs {
            lang: l,
            found: &levels,
            version: "15.18",
            about: "long-fork.edn".into(),
            options,
            sessions: sessions_over_tls(&["c1", "c2"]),
        };
        let report = outputs.report(None);
        insta::assert_snapshot!(format!("hunt_{lang}"), render::hunt::text(&report, l));
        if l == Lang::En {
            insta::assert_snapshot!("hunt_json", versionless(render::hunt::json(&report).unwrap()));
            let (junit, pages) = render::hunt::suites(&report);
            insta::assert_snapshot!("hunt_junit", render::junit(&junit, WALL));
            assert!(
                pages[1].variants.iter().any(|v| v.cycle.is_some()),
                "the cycle is drawn"
            );
        }
    }
}
