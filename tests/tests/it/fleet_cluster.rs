//! The fleet on a three-node Redis Cluster started on loopback (`redis-server
//! --cluster-enabled yes`, `redis-cli --cluster create`; `#[ignore]`d in a plain `cargo
//! test`, run by `scripts/fleet`): the same scenarios as on one redis-server, with each
//! session's and each task's keys in one hash slot, spread over the three nodes.

use std::time::Duration;

use crate::fleet_sessions::{answers_are_relayed, sessions_are_shared, two_instances_on};
use crate::fleet_streams::{get_streams_hear_once, streams_resume_anywhere};
use crate::redis_support::cluster;

#[tokio::test]
#[ignore = "needs redis-server: run scripts/fleet"]
async fn a_fleet_on_a_redis_cluster_shares_sessions_streams_answers_tasks_and_state() {
    let cluster = cluster("fleet").await;
    let fleet = two_instances_on(&cluster.url, Duration::from_secs(60)).await;
    sessions_are_shared(&fleet).await;
    answers_are_relayed(&fleet).await;
    streams_resume_anywhere(&fleet).await;
    get_streams_hear_once(&fleet).await;
    crate::tasks::tasks_are_shared(&cluster.url).await;
    crate::single_use::single_use_is_shared(&cluster.url).await;
    // The keys went to every node: a cluster, not one node doing all the work.
    let mut holding = 0;
    for port in &cluster.ports {
        let out = tokio::process::Command::new("redis-cli")
            .args(["-p", &port.to_string(), "DBSIZE"])
            .output()
            .await
            .unwrap();
        let keys: usize = String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse()
            .unwrap_or(0);
        println!("fleet: cluster node on port {port} holds {keys} keys");
        holding += usize::from(keys > 0);
    }
    assert!(holding >= 2, "the keys spread over the nodes");
}
