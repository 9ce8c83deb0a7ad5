//! The checked-in generated code must be exactly what thrift-compiler makes of the IDL.

use std::process::Command;

#[test]
fn checked_in_code_matches_a_fresh_generation() {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/gen-thrift.sh");
    let out = Command::new("bash")
        .arg(script)
        .arg("--check")
        .output()
        .expect("run scripts/gen-thrift.sh");
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
