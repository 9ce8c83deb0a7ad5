//! The embedded class, the settings and their order, and the startup check against stand-in
//! Thrift Servers.

use std::process::Command;

use kumiho_thrift::auth::{AnyPassword, Authenticator, SharedSecret};
use tokio::net::TcpListener;

use super::*;

const JAVA_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/java");

#[test]
fn the_embedded_class_is_ours_and_loads_on_java_8() {
    // The class file's magic, then minor and major version: 52 is Java 8.
    assert_eq!(&AUTHENTICATOR_BYTES[..4], &[0xCA, 0xFE, 0xBA, 0xBE]);
    assert_eq!(
        u16::from_be_bytes([AUTHENTICATOR_BYTES[6], AUTHENTICATOR_BYTES[7]]),
        52
    );
    let contains = |needle: &str| {
        AUTHENTICATOR_BYTES
            .windows(needle.len())
            .any(|window| window == needle.as_bytes())
    };
    assert!(contains(&AUTHENTICATOR_CLASS.replace('.', "/")));
    assert!(contains(
        "org/apache/hive/service/auth/PasswdAuthenticationProvider"
    ));
    assert!(contains(TOKEN_VARIABLE));
}

/// `java/build.sh` was run after the last change to the source: the committed class is what
/// the source compiles to. javac's output may differ between JDK versions, so this compares
/// only with the javac version that made the committed class (`classes/javac-version`), and
/// says so when it cannot.
#[test]
fn committed_class_is_what_the_source_compiles_to() {
    let made_by = std::fs::read_to_string(format!("{JAVA_DIR}/classes/javac-version")).unwrap();
    let made_by = made_by.trim();
    let local = Command::new("javac").arg("-version").output();
    let local = match local {
        Ok(output) if output.status.success() => {
            let text = String::from_utf8_lossy(&output.stdout).to_string()
                + &String::from_utf8_lossy(&output.stderr);
            text.split_whitespace()
                .nth(1)
                .and_then(|version| version.split('.').next())
                .unwrap_or_default()
                .to_owned()
        }
        _ => {
            eprintln!("no javac here: the committed class is not compared with its source");
            return;
        }
    };
    if local != made_by {
        eprintln!(
            "javac {local} here, the committed class was made by javac {made_by}: not compared"
        );
        return;
    }
    let out = tempfile::tempdir().unwrap();
    let status = Command::new("javac")
        .args(["--release", "8", "-g:none", "-encoding", "UTF-8", "-d"])
        .arg(out.path())
        .arg(format!(
            "{JAVA_DIR}/stub/org/apache/hive/service/auth/PasswdAuthenticationProvider.java"
        ))
        .arg(format!(
            "{JAVA_DIR}/src/org/kumiho/spark/GateAuthenticator.java"
        ))
        .status()
        .unwrap();
    assert!(status.success());
    let compiled = std::fs::read(out.path().join(AUTHENTICATOR_FILE)).unwrap();
    assert!(
        compiled == AUTHENTICATOR_BYTES,
        "java/classes/{AUTHENTICATOR_FILE} is not what java/src compiles to: run engines/spark/java/build.sh"
    );
}

#[test]
fn install_writes_the_class_and_makes_a_fresh_secret_token() {
    let dir = tempfile::tempdir().unwrap();
    let first = Lockdown::install(dir.path()).unwrap();
    assert!(first.classes.is_absolute());
    assert_eq!(first.classes, dir.path().join(CLASSES_DIR));
    assert_eq!(
        std::fs::read(first.classes.join(AUTHENTICATOR_FILE)).unwrap(),
        AUTHENTICATOR_BYTES
    );
    // Again over the same directory (a USER engine restarting): a new token.
    let second = Lockdown::install(dir.path()).unwrap();
    assert_ne!(first.token, second.token);
    let token = first.token.expose();
    assert!(
        token.len() == 64 && token.chars().all(|c| c.is_ascii_hexdigit()),
        "{token}"
    );
    assert!(!format!("{first:?}").contains(token));
}

#[test]
fn every_hive_setting_is_given_as_spark_hadoop_then_spark_hive_conf_and_as_hiveconf() {
    let options = Lockdown::spark_submit_options();
    let arguments = Lockdown::hiveconf_args();
    for (key, value) in Lockdown::hive_settings() {
        let hadoop = format!("spark.hadoop.{key}={value}");
        let hive = format!("spark.{key}={value}");
        let at = |what: &str| options.iter().position(|option| option == what).unwrap();
        assert_eq!(options[at(&hadoop) - 1], "--conf");
        assert_eq!(options[at(&hive) - 1], "--conf");
        // spark.hive.* is applied after spark.hadoop.*: both must say the same.
        assert!(at(&hadoop) < at(&hive));
        let argument = format!("{key}={value}");
        let at = arguments.iter().position(|a| *a == argument).unwrap();
        assert_eq!(arguments[at - 1], "--hiveconf");
    }
    assert!(options.contains(&format!(
        "spark.hadoop.hive.server2.custom.authentication.class={AUTHENTICATOR_CLASS}"
    )));
    assert!(options.contains(&"spark.hive.server2.authentication=CUSTOM".to_owned()));
}

/// A stand-in Thrift Server that answers SASL PLAIN with `authenticator`, for a few logins.
async fn thrift_server(authenticator: impl Authenticator + Clone) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap().to_string();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let authenticator = authenticator.clone();
            tokio::spawn(async move {
                let mut conn = Connection::new(stream, Framing::Raw, NEGOTIATION_LIMIT);
                let _ = sasl::accept_plain(&mut conn, &authenticator).await;
            });
        }
    });
    address
}

#[tokio::test]
async fn the_check_passes_when_only_the_token_gets_in() {
    let token = GateToken::generate().unwrap();
    let address = thrift_server(SharedSecret::new(token.expose())).await;
    check(&address, &token).await.unwrap();
}

#[tokio::test]
async fn the_check_fails_when_any_password_gets_in() {
    let token = GateToken::generate().unwrap();
    let address = thrift_server(AnyPassword).await;
    let error = check(&address, &token).await.unwrap_err().to_string();
    assert!(
        error.contains("admitted a wrong password") && !error.contains(token.expose()),
        "{error}"
    );
}

#[tokio::test]
async fn the_check_fails_when_the_token_is_refused_and_says_why() {
    let token = GateToken::generate().unwrap();
    let address = thrift_server(SharedSecret::new("another")).await;
    let error = check(&address, &token).await.unwrap_err().to_string();
    assert!(
        error.contains("refused the gate's own login")
            && error.contains("wrong password for user 'kumiho-spark-engine'")
            && error.contains(AUTHENTICATOR_CLASS)
            && !error.contains(token.expose()),
        "{error}"
    );
}
