//! `lab failover` and lab's own HA cluster (Patroni, etcd, three
//! PostgreSQL nodes in namespaces of lab's own): the cluster starts,
//! fails over, rejoins and leaves nothing; every variant's verdict; the
//! mutations; `--watch` against the cluster; bad input.
use std::time::{Duration, Instant};

use lab::postgres::patroni::{self, Availability, HaCluster};

fn programs() -> patroni::Programs {
    match patroni::programs().expect("LAB_PATRONI_BIN and LAB_ETCD_BIN name programs") {
        Availability::Ready(p) => p,
        Availability::Missing(why) => panic!("the HA cluster's programs: {}", why.render(lab::i18n::Lang::En)),
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn the_cluster_starts_fails_over_rejoins_and_leaves_nothing() {
    let began = std::time::SystemTime::now();
    let rt = runtime();
    let bin = lab::postgres::cluster::find_bin_dir(None).unwrap();
    let (processes, pids) = rt.block_on(async {
        let ha = HaCluster::start(&bin, programs(), Duration::from_secs(60))
            .await
            .expect("the HA cluster starts");
        eprintln!("healthy after {:?} ({})", ha.startup, ha.versions);
        let leader = ha.leader().await.unwrap().expect("a leader");
        assert_eq!(leader, 0, "node1 bootstraps the cluster");
        let members = ha.members().await.unwrap();
        assert!(patroni::healthy(&members, 3), "{members:?}");
        let timeline = members[0].timeline.unwrap();

        // A crash of the primary's PostgreSQL: Patroni fails over to node2 (node3 never leads).
        let crashed = Instant::now();
        assert!(ha.crash_postgres(0));
        let deadline = Instant::now() + Duration::from_secs(40);
        loop {
            if let Ok(Some(l)) = ha.leader().await
                && l != 0
            {
                assert_eq!(l, 1, "node2 is promoted");
                break;
            }
            assert!(Instant::now() < deadline, "no failover: {}", ha.log_tail());
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        eprintln!("failover after {:?}", crashed.elapsed());
        // node1 rejoins with pg_rewind, on the new timeline.
        ha.until_healthy(Instant::now() + Duration::from_secs(60))
            .await
            .expect("node1 rejoins");
        let members = ha.members().await.unwrap();
        assert!(members.iter().all(|m| m.timeline == Some(timeline + 1)), "{members:?}");
        eprintln!("rejoined after {:?}", crashed.elapsed());
        let pids: Vec<i32> = (0..3).filter_map(|i| ha.postmaster(i)).collect();
        assert_eq!(pids.len(), 3);
        (ha.processes(), pids)
    });
    assert!(processes >= 10, "{processes} processes in the namespace");
    for p in pids {
        assert!(
            !std::path::Path::new(&format!("/proc/{p}")).exists(),
            "postmaster {p} survived"
        );
    }
    let me = std::process::id();
    let left = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .filter(|c| String::from_utf8_lossy(c).contains(&format!("lab-pg-{me}-")))
        .count();
    assert_eq!(left, 0);
    // No dynamic shared memory segment of a node (their groups are
    // 61001-61003) left in /dev/shm since the test began: the crash killed a
    // postmaster, whose segments stay where they are made.
    use std::os::unix::fs::MetadataExt;
    let segments: Vec<String> = std::fs::read_dir("/dev/shm")
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("PostgreSQL."))
        .filter(|e| {
            e.metadata()
                .is_ok_and(|m| (61001..=61003).contains(&m.gid()) && m.modified().is_ok_and(|t| t >= began))
        })
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(segments.is_empty(), "left in /dev/shm: {segments:?}");
}

/// Every variant on one run of lab's own cluster: its verdict, its anomaly,
/// and the figures docs/FAILOVER.md quotes, read from the JSON.
#[test]
fn every_variant_behaves_as_documented() {
    let r = crate::support::run(&["failover", "--format", "json"]);
    assert_eq!(r.code, 0, "{}", r.why());
    let report: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let anomaly = |name: &str| crate::support::variant(&report, name)["anomaly"] == true;
    let metric = |name: &str, key: &str| crate::support::metric(crate::support::variant(&report, name), key);
    for (name, shows) in [
        ("async-loses-acked", true),
        ("sync-keeps-acked", false),
        ("cancelled-sync-wait", true),
        ("warning-as-failure", false),
        ("unknown-outcome", true),
        ("idempotency-key", false),
        ("sync-degrades", true),
        ("sync-strict", false),
        ("zombie-primary", true),
        ("manager-dies", true),
        ("manager-dies-routed", false),
        ("partition-async", true),
        ("partition-sync", false),
    ] {
        let v = crate::support::variant(&report, name);
        crate::support::assert_documented(v);
        assert_eq!(anomaly(name), shows, "{name}: {v}");
        assert_ne!(v["skipped"], true, "{name} was skipped: {}", v["skip_reason"]);
    }
    assert_eq!(metric("async-loses-acked", "lost"), 5);
    assert_eq!(metric("sync-keeps-acked", "lost"), 0);
    assert_eq!(metric("cancelled-sync-wait", "lost"), 1);
    assert_eq!(metric("unknown-outcome", "payments"), 2);
    assert_eq!(metric("idempotency-key", "payments"), 1);
    assert_eq!(metric("sync-degrades", "unprotected"), 5);
    assert_eq!(metric("sync-strict", "synchronous_standby_names"), "*");
    assert_eq!(metric("zombie-primary", "lost"), 5);
    assert_eq!(metric("manager-dies", "lost"), 5);
    assert!(metric("partition-async", "lost").as_u64().unwrap() >= 5);
    for name in ["async-loses-acked", "zombie-primary", "partition-sync"] {
        assert!(metric(name, "failover_ms").as_f64().unwrap() > 0.0, "{name}");
        assert!(metric(name, "unavailable_ms").as_f64().unwrap() > 0.0, "{name}");
    }
    // Speed is printed by bench/failover.sh, never asserted: here only that it says.
    eprintln!("lab failover: {:.1} s", r.took.as_secs_f64());
}

/// An edited copy of lab's files under --lab-dir.
fn lab_dir(edits: &[(&str, &str, &str)]) -> crate::support::Scratch {
    let dir = crate::support::scratch("failover-mutation", "lab");
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("lab");
    for (file, from, to) in edits {
        // Edits to one file add up.
        let text = std::fs::read_to_string(dir.join(file))
            .or_else(|_| std::fs::read_to_string(root.join(file)))
            .unwrap();
        assert!(text.contains(from), "{file} has no {from:?}");
        std::fs::write(dir.join(file), text.replacen(from, to, 1)).unwrap();
    }
    dir
}

/// The mechanisms broken: synchronous replication off in sync-keeps-acked,
/// strict mode off in sync-strict, the idempotency key removed from the
/// payment: exit 1, naming the checks that failed.
#[test]
fn mutations_exit_1_naming_the_check() {
    let dir = lab_dir(&[
        (
            "failover.conf",
            "[sync-keeps-acked]\nsynchronous_mode = true",
            "[sync-keeps-acked]\nsynchronous_mode = false",
        ),
        (
            "failover.conf",
            "[sync-strict]\nsynchronous_mode = true\nsynchronous_mode_strict = true",
            "[sync-strict]\nsynchronous_mode = true\nsynchronous_mode_strict = false",
        ),
        // The key gone: no UNIQUE, a plain INSERT.
        (
            "failover.sql",
            "request_id text NOT NULL UNIQUE",
            "request_id text NOT NULL",
        ),
        ("failover.sql", " ON CONFLICT (request_id) DO NOTHING;", ";"),
    ]);
    let r = crate::support::run(&[
        "failover",
        "--lab-dir",
        dir.to_str().unwrap(),
        "--variant",
        "sync-keeps-acked",
        "--variant",
        "sync-strict",
        "--variant",
        "idempotency-key",
        "--format",
        "json",
    ]);
    assert_eq!(r.code, 1, "{}", r.why());
    let report: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let failed = |name: &str| crate::support::failed_checks(crate::support::variant(&report, name));
    assert!(
        failed("sync-keeps-acked").iter().any(|c| c.contains("fo.none_lost")),
        "{:?}",
        failed("sync-keeps-acked")
    );
    assert!(
        failed("sync-strict")
            .iter()
            .any(|c| c.contains("fo.names_star") || c.contains("fo.strict_waits")),
        "{:?}",
        failed("sync-strict")
    );
    assert!(
        failed("idempotency-key").iter().any(|c| c.contains("fo.paid_once")),
        "{:?}",
        failed("idempotency-key")
    );
}

/// Processes whose command line holds `needle` (a lab run's directory).
fn processes_with(needle: &str) -> Vec<(i32, String)> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let pid: i32 = e.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            let state = stat.rsplit(')').next()?.split_whitespace().next()?.to_string();
            let cmd = String::from_utf8_lossy(&std::fs::read(e.path().join("cmdline")).ok()?).replace('\0', " ");
            (state != "Z" && cmd.contains(needle)).then_some((pid, cmd))
        })
        .collect()
}

/// Ctrl-C of a run tidies everything (exit 130); a SIGKILL leaves no
/// process (the kernel ends the namespace's), and the next run removes
/// its directory.
#[test]
fn ctrl_c_and_sigkill_leave_nothing_running() {
    for signal in [libc::SIGINT, libc::SIGKILL] {
        let mut child = crate::support::lab()
            .args(["failover", "--variant", "zombie-primary"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let prefix = format!("lab-pg-{}-", child.id());
        // The cluster is up: three Patroni processes and their PostgreSQL.
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let running = processes_with(&prefix);
            let patroni = running.iter().filter(|(_, c)| c.contains("patroni")).count();
            let postgres = running.iter().filter(|(_, c)| c.contains("bin/postgres")).count();
            if patroni >= 3 && postgres >= 3 {
                break;
            }
            assert!(Instant::now() < deadline, "the cluster never started: {running:?}");
            std::thread::sleep(Duration::from_millis(50));
        }
        let postmasters: Vec<i32> = processes_with(&prefix)
            .into_iter()
            .filter(|(_, c)| c.contains("bin/postgres"))
            .map(|(p, _)| p)
            .collect();
        unsafe { libc::kill(child.id() as i32, signal) };
        let status = child.wait().unwrap();
        if signal == libc::SIGINT {
            assert_eq!(status.code(), Some(130));
        }
        let deadline = Instant::now() + Duration::from_secs(15);
        while !processes_with(&prefix).is_empty() {
            assert!(
                Instant::now() < deadline,
                "outlived lab ({signal}): {:?}",
                processes_with(&prefix)
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        for pm in postmasters {
            assert!(
                !std::path::Path::new(&format!("/proc/{pm}/stat")).exists() || {
                    let s = std::fs::read_to_string(format!("/proc/{pm}/stat")).unwrap_or_default();
                    s.rsplit(')').next().is_some_and(|r| r.trim_start().starts_with('Z'))
                }
            );
        }
        if signal == libc::SIGKILL {
            // The next start removes what the killed run left.
            let _ = crate::support::run(&["nowait"]);
        }
        crate::support::assert_no_leftovers(child.id());
    }
}

/// Without Patroni (PATH without it) the variants are skipped with the
/// install line; LAB_PATRONI_BIN naming no program, a manager that never
/// becomes healthy, --watch without a URL or with unreachable hosts: one
/// line, exit 2, nothing left behind.
#[test]
fn bad_input() {
    let empty = crate::support::scratch("failover-path", "bin");
    let r = crate::support::run_cmd(crate::support::lab().env("PATH", empty.to_str().unwrap()).args([
        "failover",
        "--variant",
        "async-loses-acked",
        "--format",
        "json",
    ]));
    assert_eq!(r.code, 0, "{}", r.why());
    let report: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let v = crate::support::variant(&report, "async-loses-acked");
    assert_eq!(v["skipped"], true);
    assert!(
        v["skip_reason"]
            .as_str()
            .unwrap()
            .contains("apt-get install patroni etcd-server"),
        "{v}"
    );

    let r = crate::support::run_cmd(
        crate::support::lab()
            .env("LAB_PATRONI_BIN", "/nonexistent/patroni")
            .args(["failover", "--variant", "async-loses-acked"]),
    );
    crate::support::one_line_exit_2(&r, "LAB_PATRONI_BIN=/nonexistent/patroni is not a program");

    // A "Patroni" that never serves: the deadline, then exit 2, nothing left.
    let fake = crate::support::scratch("failover-fake", "bin");
    let script = fake.join("patroni");
    std::fs::write(
        &script,
        "#!/bin/sh\ncase \"$1\" in --version) echo 'patroni 3.0.2' ;; *) exec sleep 600 ;; esac\n",
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&*fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let r = crate::support::run_cmd(crate::support::lab().env("LAB_PATRONI_BIN", &script).args([
        "failover",
        "--variant",
        "async-loses-acked",
        "--ha-timeout",
        "4",
    ]));
    crate::support::one_line_exit_2(&r, "did not become healthy");

    let r = crate::support::run(&["failover", "--watch"]);
    crate::support::one_line_exit_2(&r, "--watch writes to your own cluster");
    let r = crate::support::run(&[
        "failover",
        "--watch",
        "--database-url",
        "postgres://postgres@127.0.0.1:1,127.0.0.1:2/lab?target_session_attrs=read-write&connect_timeout=1",
        "--seconds",
        "2",
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(r.stderr.trim().lines().count(), 1, "{}", r.stderr);
}

/// `--watch` on a cluster failed over by hand (lab's own, from the
/// library): with synchronous replication nothing acknowledged is lost
/// (exit 0); asynchronous, with the primary's WAL senders stopped before
/// the crash, the acknowledged writes the standbys never got are reported
/// lost (exit 1); each time the window without writes is measured.
#[test]
fn watch_reports_what_a_failover_by_hand_lost() {
    let rt = runtime();
    let bin = lab::postgres::cluster::find_bin_dir(None).unwrap();
    let ha = rt
        .block_on(HaCluster::start(&bin, programs(), Duration::from_secs(60)))
        .expect("the HA cluster starts");
    let url = format!(
        "postgres://postgres@{}/lab?target_session_attrs=read-write",
        (0..3)
            .map(|i| format!("127.0.0.1:{}", ha.nodes[i].local_port))
            .collect::<Vec<_>>()
            .join(",")
    );
    for (sync, lossy) in [(true, false), (false, true)] {
        rt.block_on(async {
            ha.patch_config(&format!("{{\"synchronous_mode\": {sync}}}"))
                .await
                .unwrap();
            ha.until_healthy(Instant::now() + Duration::from_secs(60))
                .await
                .unwrap();
            // Patroni says so: a synchronous standby, or none.
            let deadline = Instant::now() + Duration::from_secs(30);
            while ha.members().await.unwrap().iter().any(|m| m.role == "sync_standby") != sync {
                assert!(Instant::now() < deadline);
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        });
        let child = crate::support::lab()
            .args([
                "failover",
                "--watch",
                "--database-url",
                &url,
                "--seconds",
                "12",
                "--format",
                "json",
            ])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let table = format!("lab_failover_watch_{}", child.id());
        rt.block_on(async {
            let leader = ha.leader().await.unwrap().unwrap();
            let c = ha.connect(leader, "lab").await.unwrap();
            let written = format!("SELECT coalesce(sum(cardinality(v)), 0)::bigint FROM {table}");
            async fn count(c: &tokio_postgres::Client, sql: &str) -> i64 {
                c.query_one(sql, &[]).await.map(|r| r.get::<_, i64>(0)).unwrap_or(0)
            }
            let deadline = Instant::now() + Duration::from_secs(30);
            while count(&c, &written).await < 40 {
                assert!(Instant::now() < deadline, "lab wrote nothing");
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            if lossy {
                ha.stop_walsenders(leader, None).await.unwrap();
                let now = count(&c, &written).await;
                while count(&c, &written).await < now + 40 {
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
            }
            assert!(ha.crash_postgres(leader));
            ha.until_healthy(Instant::now() + Duration::from_secs(60))
                .await
                .unwrap();
        });
        let out = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let report: serde_json::Value = serde_json::from_str(&stdout)
            .unwrap_or_else(|e| panic!("{e}: {stdout} {}", String::from_utf8_lossy(&out.stderr)));
        let v = crate::support::variant(&report, "watch");
        let lost = crate::support::metric(v, "lost").as_u64().unwrap();
        let windows = crate::support::metric(v, "unavailable");
        assert!(!windows.as_array().unwrap().is_empty(), "{v}");
        assert_eq!(crate::support::metric(v, "torn"), 0, "{v}");
        assert_eq!(crate::support::metric(v, "duplicates"), 0, "{v}");
        if lossy {
            assert_eq!(out.status.code(), Some(1), "{v}");
            assert!(lost >= 1, "{v}");
            assert!(
                crate::support::failed_checks(v)
                    .iter()
                    .any(|c| c.contains("fo.watch_none_lost"))
            );
        } else {
            assert_eq!(out.status.code(), Some(0), "{v}");
            assert_eq!(lost, 0, "{v}");
        }
        // lab dropped its table, and only its table.
        rt.block_on(async {
            let leader = ha.leader().await.unwrap().unwrap();
            let c = ha.connect(leader, "lab").await.unwrap();
            let n: i64 = c
                .query_one(
                    "SELECT count(*) FROM pg_class WHERE relname LIKE 'lab_failover_watch%'",
                    &[],
                )
                .await
                .unwrap()
                .get(0);
            assert_eq!(n, 0);
        });
    }
    drop(ha);
}

/// `lab hunt --nemesis failover ARGS --format json` (its pid, exit code,
/// report and stderr), checked to have left nothing behind.
fn hunt_failover(args: &[&str]) -> (i32, serde_json::Value, String) {
    let mut all = vec!["hunt", "--format", "json", "--no-specs", "--nemesis", "failover"];
    all.extend_from_slice(args);
    let child = crate::support::lab()
        .args(&all)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    let (code, stderr) = (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).to_string(),
    );
    assert!(code == 0 || code == 1, "exit {code}: {stderr}");
    assert!(
        processes_with(&format!("lab-pg-{pid}-")).is_empty(),
        "the cluster outlived lab"
    );
    crate::support::assert_no_leftovers(pid);
    let report = serde_json::from_slice(&out.stdout).expect("JSON");
    (code, report, stderr)
}

/// `lab hunt --nemesis failover`: the workload through failovers of lab's
/// HA cluster with Patroni's synchronous mode, lab/failover.conf's [hunt]
/// (seed 1, as the mutation below: the primary first cut off, then its
/// PostgreSQL killed): each failover in the history, the sessions going
/// on on the promoted node through the one connection string, nothing
/// acknowledged lost, nothing read committed forbids.
#[test]
fn hunt_through_failovers_loses_nothing_acknowledged_with_synchronous_replication() {
    let dir = crate::support::scratch("hunt-failover", "h");
    let history = dir.join("h.jsonl");
    let (code, report, stderr) = hunt_failover(&[
        "--level",
        "read-committed",
        "--seed",
        "1",
        "--seconds",
        "30",
        "--history",
        history.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}\n{report}");
    assert!(stderr.contains("\"synchronous_mode\": true"), "{stderr}");
    let level = &report["levels"][0];
    assert_eq!(level["forbidden_found"], serde_json::json!([]), "{report}");
    assert!(!crate::hunt::names(&report).iter().any(|n| n == "lost"), "{report}");
    let (header, txns, faults) = crate::hunt::history_lines(&history);
    assert_eq!(header["nemesis"], serde_json::json!(["failover"]));
    assert!(!faults.is_empty(), "no failover recorded");
    for f in &faults {
        assert_eq!(f["nemesis"], "failover", "{f}");
        assert!(f["target"].as_str().unwrap().ends_with("(the primary)"), "{f}");
        assert!(f["how"].as_str().unwrap().contains("promoted node"), "{f}");
    }
    assert!(
        faults[0]["how"].as_str().unwrap().starts_with("cut off from etcd"),
        "seed 1 cuts the primary off first: {:?}",
        faults[0]
    );
    // The sessions (1 to 4; 5 is the final read) went on after the first
    // failover, on the node Patroni promoted, and committed there.
    let first_end = faults[0]["end"].as_u64().unwrap();
    assert!(
        txns.iter()
            .any(|t| t["type"] == "ok" && t["session"].as_u64() < Some(5) && t["start"].as_u64() > Some(first_end)),
        "nothing committed after the failover"
    );
    // The failover cut what was in flight: an unknown outcome or a failure
    // with the connection, not an abort the level explains.
    let cut = |t: &&serde_json::Value| {
        t["type"] == "info" || (t["type"] == "fail" && !matches!(t["sqlstate"].as_str(), Some("40001" | "40P01")))
    };
    assert!(txns.iter().any(|t| cut(&t)), "nothing was in flight");
}

/// The mutation: Patroni's synchronous mode off in [hunt] (an edited
/// lab/failover.conf); seed 1 cuts the primary off first, and while
/// Patroni waits out its ttl the isolated primary acknowledges commits
/// the promoted node never gets: lost, exit 1.
#[test]
fn hunt_catches_what_an_asynchronous_failover_loses() {
    let partitionable = programs().nft.is_some();
    assert!(partitionable, "nft is missing: the nftables package brings it");
    let dir = lab_dir(&[(
        "failover.conf",
        "[hunt]\nsynchronous_mode = true",
        "[hunt]\nsynchronous_mode = false",
    )]);
    let (code, report, stderr) = hunt_failover(&[
        "--level",
        "read-committed",
        "--seed",
        "1",
        "--seconds",
        "5",
        "--lab-dir",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{stderr}\n{report}");
    let lost = crate::hunt::anomaly(&report, "lost");
    assert_eq!(lost["forbidden"], true, "{lost}");
    assert!(lost.to_string().contains("an acknowledged write is lost"), "{lost}");
}
