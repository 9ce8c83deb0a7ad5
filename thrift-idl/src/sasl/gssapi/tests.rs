//! The GSSAPI negotiation against a stand-in context: frames in the order Hive JDBC and
//! pure-sasl send them, and each refusal.

use super::*;
use crate::connection::Framing;
use crate::sasl::PlainCredentials;
use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};

/// Accepts the token `ticket-for-kumiho` in one step (answering `ap-rep`), or in two after
/// `part-1`; "wraps" by prefixing `W:`.
struct StandIn;

struct StandInContext {
    established: bool,
}

impl KerberosAcceptor for StandIn {
    fn principal(&self) -> &str {
        "kumiho/gw@EXAMPLE.COM"
    }
    fn start(&self) -> Box<dyn AcceptContext> {
        Box::new(StandInContext { established: false })
    }
}

impl AcceptContext for StandInContext {
    fn step(&mut self, token: &[u8]) -> Result<Step, String> {
        match token {
            b"part-1" => Ok(Step::Continue(b"more".to_vec())),
            b"ticket-for-kumiho" => {
                self.established = true;
                Ok(Step::Established(Some(b"ap-rep".to_vec())))
            }
            b"ticket-no-mutual" => {
                self.established = true;
                Ok(Step::Established(None))
            }
            _ => Err("Wrong principal in request".into()),
        }
    }
    fn client_principal(&self) -> Result<String, String> {
        assert!(self.established);
        Ok("alice@EXAMPLE.COM".into())
    }
    fn wrap(&mut self, message: &[u8]) -> Result<Vec<u8>, String> {
        Ok([b"W:".as_slice(), message].concat())
    }
    fn unwrap(&mut self, token: &[u8]) -> Result<Vec<u8>, String> {
        token
            .strip_prefix(b"W:")
            .map(<[u8]>::to_vec)
            .ok_or_else(|| "Token header is malformed or corrupt".into())
    }
}

/// Runs the server on one end of a pipe; the test plays the client on the other.
fn server() -> (
    DuplexStream,
    tokio::task::JoinHandle<Result<String, WireError>>,
) {
    let (client, server) = tokio::io::duplex(4096);
    let task = tokio::spawn(async move {
        let mut conn = Connection::new(server, Framing::Raw, 1 << 20);
        accept_gssapi(&mut conn, &StandIn).await
    });
    (client, task)
}

async fn send(client: &mut DuplexStream, status: u8, payload: &[u8]) {
    client
        .write_all(&encode_frame(status, payload))
        .await
        .unwrap();
}

async fn receive(client: &mut DuplexStream) -> (u8, Vec<u8>) {
    let mut head = [0u8; 5];
    client.read_exact(&mut head).await.unwrap();
    let mut payload = vec![0; u32::from_be_bytes(head[1..].try_into().unwrap()) as usize];
    client.read_exact(&mut payload).await.unwrap();
    (head[0], payload)
}

fn answer(layer: u8, authzid: &str) -> Vec<u8> {
    let choice = LayerChoice {
        layer,
        max_buffer: 0,
        authzid: authzid.into(),
    };
    [b"W:".as_slice(), &choice.encode()].concat()
}

#[tokio::test]
async fn a_client_asking_qop_auth_is_authenticated_as_its_principal() {
    // Hive JDBC: two-step context (to cover Continue), empty answer to AP-REP, no authzid.
    let (mut client, task) = server();
    send(&mut client, status::START, b"GSSAPI").await;
    send(&mut client, status::OK, b"part-1").await;
    assert_eq!(receive(&mut client).await, (status::OK, b"more".to_vec()));
    send(&mut client, status::OK, b"ticket-for-kumiho").await;
    assert_eq!(receive(&mut client).await, (status::OK, b"ap-rep".to_vec()));
    send(&mut client, status::OK, b"").await;
    let (status, offer) = receive(&mut client).await;
    assert_eq!(status, status::OK);
    assert_eq!(offer, b"W:\x01\x01\x00\x00", "none only, 65536 bytes");
    send(&mut client, status::OK, &answer(layer::NONE, "")).await;
    assert_eq!(receive(&mut client).await, (status::COMPLETE, vec![]));
    assert_eq!(task.await.unwrap().unwrap(), "alice@EXAMPLE.COM");
}

#[tokio::test]
async fn pure_sasl_names_its_principal_as_authzid() {
    let (mut client, task) = server();
    send(&mut client, status::START, b"GSSAPI").await;
    send(&mut client, status::OK, b"ticket-for-kumiho").await;
    receive(&mut client).await;
    send(&mut client, status::OK, b"").await;
    receive(&mut client).await;
    send(
        &mut client,
        status::COMPLETE,
        &answer(layer::NONE, "alice@EXAMPLE.COM"),
    )
    .await;
    assert_eq!(receive(&mut client).await.0, status::COMPLETE);
    assert_eq!(task.await.unwrap().unwrap(), "alice@EXAMPLE.COM");
}

#[tokio::test]
async fn without_a_last_token_the_offer_follows_at_once() {
    let (mut client, task) = server();
    send(&mut client, status::START, b"GSSAPI").await;
    send(&mut client, status::OK, b"ticket-no-mutual").await;
    assert_eq!(receive(&mut client).await.1, b"W:\x01\x01\x00\x00");
    send(&mut client, status::OK, &answer(layer::NONE, "")).await;
    assert_eq!(receive(&mut client).await.0, status::COMPLETE);
    assert!(task.await.unwrap().is_ok());
}

#[tokio::test]
async fn a_refused_ticket_is_told_with_the_gss_text() {
    let (mut client, task) = server();
    send(&mut client, status::START, b"GSSAPI").await;
    send(&mut client, status::OK, b"ticket-for-someone-else").await;
    let (status, message) = receive(&mut client).await;
    let message = String::from_utf8(message).unwrap();
    assert_eq!(status, status::BAD);
    assert!(message.contains("Wrong principal in request"), "{message}");
    assert!(message.contains("kumiho/gw@EXAMPLE.COM"), "{message}");
    assert!(task.await.unwrap().is_err());
}

#[tokio::test]
async fn clients_requiring_integrity_or_confidentiality_are_refused() {
    for (layer, qop) in [
        (layer::INTEGRITY, "auth-int"),
        (layer::CONFIDENTIALITY, "auth-conf"),
    ] {
        let (mut client, task) = server();
        send(&mut client, status::START, b"GSSAPI").await;
        send(&mut client, status::OK, b"ticket-no-mutual").await;
        receive(&mut client).await;
        send(&mut client, status::OK, &answer(layer, "")).await;
        let (status, message) = receive(&mut client).await;
        let message = String::from_utf8(message).unwrap();
        assert_eq!(status, status::BAD);
        assert!(
            message.contains(qop) && message.contains("QOP auth only"),
            "{message}"
        );
        assert!(task.await.unwrap().is_err());
    }
}

#[tokio::test]
async fn acting_as_another_principal_is_refused() {
    let (mut client, task) = server();
    send(&mut client, status::START, b"GSSAPI").await;
    send(&mut client, status::OK, b"ticket-no-mutual").await;
    receive(&mut client).await;
    send(
        &mut client,
        status::OK,
        &answer(layer::NONE, "bob@EXAMPLE.COM"),
    )
    .await;
    let (status, message) = receive(&mut client).await;
    assert_eq!(status, status::BAD);
    assert!(String::from_utf8(message)
        .unwrap()
        .contains("hive.server2.proxy.user"));
    assert!(task.await.unwrap().is_err());
}

/// Kerberos and passwords both (KERBEROS,LDAP): the server of `accept` with both offered;
/// `alice`'s password is `pw`.
fn server_of_both() -> (
    DuplexStream,
    tokio::task::JoinHandle<Result<crate::sasl::Identity, WireError>>,
) {
    struct AlicePw;
    impl crate::auth::Authenticator for AlicePw {
        fn authenticate(&self, user: &str, password: &str) -> Result<(), String> {
            match (user, password) {
                ("alice", "pw") => Ok(()),
                _ => Err("wrong user name or password".into()),
            }
        }
    }
    let (client, server) = tokio::io::duplex(4096);
    let task = tokio::spawn(async move {
        let mut conn = Connection::new(server, Framing::Raw, 1 << 20);
        crate::sasl::accept(&mut conn, Some(&StandIn), Some(&AlicePw)).await
    });
    (client, task)
}

#[tokio::test]
async fn offered_both_each_client_gets_the_mechanism_it_chose() {
    use crate::sasl::Identity;
    let (mut client, task) = server_of_both();
    send(&mut client, status::START, b"GSSAPI").await;
    send(&mut client, status::OK, b"ticket-no-mutual").await;
    receive(&mut client).await;
    send(&mut client, status::OK, &answer(layer::NONE, "")).await;
    assert_eq!(receive(&mut client).await.0, status::COMPLETE);
    assert_eq!(
        task.await.unwrap().unwrap(),
        Identity::Principal("alice@EXAMPLE.COM".into())
    );

    for (password, expected) in [("pw", status::COMPLETE), ("not-pw", status::BAD)] {
        let (mut client, task) = server_of_both();
        send(&mut client, status::START, b"PLAIN").await;
        let credentials = PlainCredentials::encode("alice", password);
        send(&mut client, status::COMPLETE, &credentials).await;
        let (status, message) = receive(&mut client).await;
        assert_eq!(status, expected, "{}", String::from_utf8_lossy(&message));
        match task.await.unwrap() {
            Ok(identity) => assert_eq!(identity, Identity::User("alice".into())),
            Err(e) => assert!(e.to_string().contains("wrong user name or password"), "{e}"),
        }
    }

    let (mut client, task) = server_of_both();
    send(&mut client, status::START, b"DIGEST-MD5").await;
    let (status, message) = receive(&mut client).await;
    let message = String::from_utf8(message).unwrap();
    assert_eq!(status, status::BAD);
    assert!(
        message.contains("offers GSSAPI (a Kerberos ticket) and PLAIN (a user and password)"),
        "{message}"
    );
    assert!(task.await.unwrap().is_err());
}

#[tokio::test]
async fn a_plain_client_is_told_to_use_kerberos() {
    let (mut client, task) = server();
    send(&mut client, status::START, b"PLAIN").await;
    send(
        &mut client,
        status::COMPLETE,
        &PlainCredentials::encode("alice", "pw"),
    )
    .await;
    let (status, message) = receive(&mut client).await;
    let message = String::from_utf8(message).unwrap();
    assert_eq!(status, status::BAD);
    assert!(
        message.contains("Kerberos only") && message.contains(";principal=kumiho/gw@EXAMPLE.COM"),
        "{message}"
    );
    assert!(task.await.unwrap().is_err());
}

#[test]
fn security_layer_messages_round_trip() {
    assert_eq!(encode_offer(layer::NONE, 65536), [1, 1, 0, 0]);
    assert_eq!(
        encode_offer(layer::NONE | layer::INTEGRITY, u32::MAX),
        [3, 0xff, 0xff, 0xff]
    );
    let choice = LayerChoice {
        layer: layer::NONE,
        max_buffer: 0x0a0b0c,
        authzid: "alice@EXAMPLE.COM".into(),
    };
    assert_eq!(&choice.encode()[..4], &[1, 0x0a, 0x0b, 0x0c]);
    assert_eq!(LayerChoice::decode(&choice.encode()).unwrap(), choice);
    assert_eq!(
        LayerChoice::decode(&[1, 0, 0, 0]).unwrap().authzid,
        "",
        "no authzid"
    );
    assert!(LayerChoice::decode(&[1, 0, 0])
        .unwrap_err()
        .contains("3 bytes"));
    assert!(LayerChoice::decode(&[1, 0, 0, 0, 0xff]).is_err());
    assert!(choice.check("alice@EXAMPLE.COM").is_ok());
    assert!(LayerChoice {
        layer: layer::NONE | layer::INTEGRITY,
        ..choice
    }
    .check("alice@EXAMPLE.COM")
    .is_err());
}
