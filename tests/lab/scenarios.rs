use crate::support::{assert_documented, metric, scenario_json, variant};

#[test]
fn lost_update() {
    let r = scenario_json("lost-update", &[]);
    assert_eq!(r["scenario"], "lost-update");
    assert_eq!(r["as_expected"], true, "{r:#}");
    assert!(
        r["server_version"]
            .as_str()
            .unwrap()
            .chars()
            .next()
            .unwrap()
            .is_ascii_digit()
    );

    let rc = variant(&r, "read-committed");
    assert_documented(rc);
    assert_eq!(rc["anomaly"], true);
    assert_eq!(metric(rc, "final_quantity"), 35);
    assert_eq!(rc["sqlstates"].as_array().unwrap().len(), 0);

    let rr = variant(&r, "repeatable-read");
    assert_documented(rr);
    assert_eq!(rr["anomaly"], false);
    assert_eq!(metric(rr, "final_quantity"), 35);
    assert_eq!(rr["sqlstates"], serde_json::json!(["40001"]));

    for name in ["atomic-update", "select-for-update"] {
        let v = variant(&r, name);
        assert_documented(v);
        assert_eq!(v["anomaly"], false);
        assert_eq!(metric(v, "final_quantity"), 34);
        assert_eq!(metric(v, "b_waited"), true);
        // The wait was confirmed from the server, then the step completed.
        let results: Vec<&str> = v["timeline"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["session"] == "B")
            .map(|e| e["result"].as_str().unwrap())
            .collect();
        let waiting = results
            .iter()
            .position(|r| *r == "waiting")
            .expect("B waited");
        assert_eq!(results[waiting + 1], "completed", "{results:?}");
    }

    let ov = variant(&r, "optimistic-version");
    assert_documented(ov);
    assert_eq!(metric(ov, "rows_affected_b"), 0);
    assert_eq!(metric(ov, "final_quantity"), 35);
    assert_eq!(
        ov["evidence"][0]["rows"].as_array().unwrap().len(),
        3,
        "the three value sets"
    );
}

#[test]
fn variant_selection_runs_only_those() {
    let r = scenario_json(
        "lost-update",
        &[
            "--variant",
            "optimistic-version",
            "--variant",
            "read-committed",
        ],
    );
    let names: Vec<&str> = r["variants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, vec!["read-committed", "optimistic-version"]);
}
