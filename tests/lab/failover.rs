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
}
