use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::Arc;

use super::*;
use crate::cluster::{Cluster, ClusterConfig};

fn cluster(yaml: &str) -> Cluster {
    Cluster {
        name: "prod".to_owned(),
        source: PathBuf::from("prod.yaml"),
        config: ClusterConfig::from_yaml(yaml).unwrap(),
    }
}

fn ip(text: &str) -> IpAddr {
    text.parse().unwrap()
}

fn refusal(result: Result<Admission, Refused>) -> String {
    match result {
        Ok(_) => panic!("admitted"),
        Err(refused) => refused.message,
    }
}

#[test]
fn each_cap_counts_its_own_sessions_and_names_itself_when_full() {
    let prod = cluster(
        "limits: {max-sessions-per-user: 3, max-sessions-per-ip: 3, max-sessions-per-user-ip: 2}\n",
    );
    let counts = Arc::new(SessionCounts::default());
    let (laptop, desktop) = (ip("10.0.0.1"), ip("10.0.0.2"));
    let _first = counts.admit(&prod, "alice", laptop).unwrap();
    let _second = counts.admit(&prod, "alice", laptop).unwrap();
    let message = refusal(counts.admit(&prod, "alice", laptop));
    assert!(
        message.contains("user `alice` at 10.0.0.1 already has 2 open sessions")
            && message.contains("limits.max-sessions-per-user-ip"),
        "{message}"
    );
    let _third = counts.admit(&prod, "alice", desktop).unwrap();
    let message = refusal(counts.admit(&prod, "alice", desktop));
    assert!(
        message.contains("user `alice` already has 3 open sessions, the limit of cluster `prod` (limits.max-sessions-per-user)"),
        "{message}"
    );
    let _bob = counts.admit(&prod, "bob", laptop).unwrap();
    let message = refusal(counts.admit(&prod, "carol", laptop));
    assert!(
        message.contains("client address 10.0.0.1 already has 3 open sessions")
            && message.contains("limits.max-sessions-per-ip"),
        "{message}"
    );
    // A refusal takes no place: the counts are those of the sessions admitted.
    assert_eq!((counts.of_user("alice"), counts.of_user("carol")), (3, 0));
    assert_eq!(counts.from_address(laptop), 3);
}

#[test]
fn a_released_place_is_taken_again_and_released_once() {
    let prod = cluster("limits: {max-sessions-per-user: 1}\n");
    let counts = Arc::new(SessionCounts::default());
    let first = counts.admit(&prod, "alice", ip("10.0.0.1")).unwrap();
    refusal(counts.admit(&prod, "alice", ip("10.0.0.1")));
    first.release();
    first.release();
    drop(first);
    assert_eq!(counts.of_user("alice"), 0);
    let again = counts.admit(&prod, "alice", ip("10.0.0.1")).unwrap();
    assert_eq!(counts.of_user("alice"), 1);
    drop(again);
    // Nothing is kept for users and addresses without sessions.
    assert!(counts.by_user.is_empty() && counts.by_address.is_empty());
    assert!(counts.by_user_address.is_empty());
}

#[test]
fn unlimited_users_are_counted_but_never_refused() {
    let prod = cluster(
        "limits: {max-sessions-per-user: 1, max-sessions-per-ip: 1, unlimited-users: [etl]}\n",
    );
    let counts = Arc::new(SessionCounts::default());
    let places: Vec<Admission> = (0..3)
        .map(|_| counts.admit(&prod, "etl", ip("10.0.0.9")).unwrap())
        .collect();
    assert_eq!(counts.of_user("etl"), 3);
    // Their sessions still fill the address for everyone else.
    refusal(counts.admit(&prod, "alice", ip("10.0.0.9")));
    drop(places);
    counts.admit(&prod, "alice", ip("10.0.0.9")).unwrap();
}

#[test]
fn a_cap_of_zero_refuses_every_session() {
    let prod = cluster("limits: {max-sessions-per-ip: 0}\n");
    let counts = Arc::new(SessionCounts::default());
    refusal(counts.admit(&prod, "alice", ip("10.0.0.1")));
    assert!(counts.by_user.is_empty() && counts.by_address.is_empty());
}

#[test]
fn an_ipv4_client_over_ipv6_counts_as_its_ipv4_address() {
    let prod = cluster("limits: {max-sessions-per-ip: 1}\n");
    let counts = Arc::new(SessionCounts::default());
    let _place = counts.admit(&prod, "alice", ip("::ffff:10.0.0.1")).unwrap();
    let message = refusal(counts.admit(&prod, "bob", ip("10.0.0.1")));
    assert!(message.contains("client address 10.0.0.1 "), "{message}");
}

#[test]
fn concurrent_sessions_cannot_both_take_the_last_place() {
    let prod = Arc::new(cluster("limits: {max-sessions-per-user: 5}\n"));
    let counts = Arc::new(SessionCounts::default());
    let admitted: Vec<Admission> = std::thread::scope(|scope| {
        let tries: Vec<_> = (0..8)
            .map(|_| {
                let (counts, prod) = (counts.clone(), prod.clone());
                scope.spawn(move || {
                    (0..50)
                        .filter_map(|_| counts.admit(&prod, "alice", ip("10.0.0.1")).ok())
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        tries.into_iter().flat_map(|t| t.join().unwrap()).collect()
    });
    assert_eq!(admitted.len(), 5);
    assert_eq!(counts.of_user("alice"), 5);
}

#[test]
fn denied_users_and_addresses_are_refused_saying_which_list() {
    let prod = cluster("deny-users: [mallory]\ndeny-ips: [10.9.9.9, '192.168.0.0/16']\n");
    let denied = |login: &str, user: &str, client: &str| {
        check_deny_lists(&prod, login, user, ip(client))
            .unwrap_err()
            .message
    };
    assert!(denied("mallory", "mallory", "10.0.0.1")
        .contains("user `mallory` is denied on cluster `prod` (its deny-users)"));
    // A denied login user cannot get in as someone else, nor anyone as a denied user.
    assert!(denied("mallory", "alice", "10.0.0.1").contains("`mallory`"));
    assert!(denied("ops", "mallory", "10.0.0.1").contains("`mallory`"));
    let exact = denied("alice", "alice", "10.9.9.9");
    assert!(
        exact.contains("sessions from 10.9.9.9 are denied on cluster `prod` (its deny-ips)"),
        "{exact}"
    );
    let network = denied("alice", "alice", "::ffff:192.168.4.2");
    assert!(
        network.contains("from 192.168.4.2 are denied")
            && network.contains("which has 192.168.0.0/16"),
        "{network}"
    );
    check_deny_lists(&prod, "alice", "alice", ip("10.9.9.8")).unwrap();
}

#[test]
fn a_deny_ips_entry_that_is_no_address_is_a_config_error() {
    let error = ClusterConfig::from_yaml("deny-ips: [10.0.0.300]\n").unwrap_err();
    assert!(
        error.contains("`10.0.0.300` is neither an IP address"),
        "{error}"
    );
    let network = ClusterConfig::from_yaml("deny-ips: ['10.1.2.3/16']\n").unwrap();
    assert_eq!(network.deny_ips[0].to_string(), "10.1.0.0/16");
}
