//! Registration node names and registry path checks.

use super::*;

fn registration(sequence: u64) -> EngineRegistration {
    EngineRegistration {
        space: "/ns/u/default".to_owned(),
        host: "10.0.0.7".to_owned(),
        port: 41234,
        version: "0.1.0".to_owned(),
        ref_id: "7c9e6679-7425-40de-944b-e07fc1f90ae7".to_owned(),
        sequence,
        pid: None,
    }
}

#[test]
fn node_names_look_like_kyuubis_and_parse_back() {
    let original = registration(42);
    let name = original.node_name();
    assert_eq!(
        name,
        "serviceUri=10.0.0.7:41234;version=0.1.0;refId=7c9e6679-7425-40de-944b-e07fc1f90ae7;sequence=0000000042"
    );
    assert_eq!(
        EngineRegistration::parse_node_name("/ns/u/default", &name),
        Some(original)
    );
}

#[test]
fn foreign_node_names_are_skipped() {
    for name in [
        "lock",
        "serviceUri=h:1;version=1;sequence=0000000001",
        "serviceUri=h:notaport;version=1;refId=r;sequence=0000000001",
        "serviceUri=h:1;version=1;refId=r;sequence=12",
    ] {
        assert_eq!(
            EngineRegistration::parse_node_name("/s", name),
            None,
            "{name}"
        );
    }
}

#[test]
fn path_components_are_checked() {
    assert_eq!(
        path_components("/a_lock/b/c").unwrap(),
        ["a_lock", "b", "c"]
    );
    for bad in ["", "a/b", "/", "/a/", "/a/..", "/a/.seq", "/a/b\u{0}c"] {
        assert!(path_components(bad).is_err(), "`{bad}` was accepted");
    }
}
