//! The GSSAPI negotiation against a stand-in context: frames in the order Hive JDBC and
//! pure-sasl send them, each refusal, and data frames through the security layers of QOP
//! `auth-int` and `auth-conf`.

use super::*;
use crate::codec;
use crate::connection::Framing;
use crate::kerberos::{AuthToLocal, Unwrapped};
use crate::sasl::{Identity, PlainCredentials};
use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};

/// Accepts the token `ticket-for-kumiho` in one step (answering `ap-rep`), or in two after
/// `part-1`; "wraps" by prefixing `W:` (signed), or `C:` and flipping every byte
/// (encrypted), so that a token is two bytes longer than its message.
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
    fn wrap(&mut self, message: &[u8], confidential: bool) -> Result<Vec<u8>, String> {
        Ok(match confidential {
            false => [b"W:".as_slice(), message].concat(),
            true => [b"C:".to_vec(), flip(message)].concat(),
        })
    }
    fn unwrap(&mut self, token: &[u8]) -> Result<Unwrapped, String> {
        match token.split_at_checked(2) {
            Some((b"W:", message)) => Ok(Unwrapped {
                message: message.to_vec(),
                confidential: false,
            }),
            Some((b"C:", message)) => Ok(Unwrapped {
                message: flip(message),
                confidential: true,
            }),
            _ => Err("Token header is malformed or corrupt".into()),
        }
    }
    fn wrap_size_limit(&self, _confidential: bool, max_token: u32) -> Result<u32, String> {
        Ok(max_token.saturating_sub(2))
    }
}

/// The stand-in's "encryption".
fn flip(bytes: &[u8]) -> Vec<u8> {
    bytes.iter().map(|b| !b).collect()
}

/// Runs the server on one end of a pipe; the test plays the client on the other.
fn server() -> (
    DuplexStream,
    tokio::task::JoinHandle<Result<String, WireError>>,
) {
    let (client, server) = tokio::io::duplex(4096);
    let task = tokio::spawn(async move {
        let mut conn = Connection::new(server, Framing::Raw, 1 << 20);
        accept_gssapi(&mut conn, &StandIn, Qop::Auth).await
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
    answer_with_buffer(layer, 0, authzid)
}

fn answer_with_buffer(layer: u8, max_buffer: u32, authzid: &str) -> Vec<u8> {
    let choice = LayerChoice {
        layer,
        max_buffer,
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
        crate::sasl::accept(&mut conn, Some(&StandIn), Qop::Auth, Some(&AlicePw)).await
    });
    (client, task)
}

#[tokio::test]
async fn offered_both_each_client_gets_the_mechanism_it_chose() {
    let (mut client, task) = server_of_both();
    send(&mut client, status::START, b"GSSAPI").await;
    send(&mut client, status::OK, b"ticket-no-mutual").await;
    receive(&mut client).await;
    send(&mut client, status::OK, &answer(layer::NONE, "")).await;
    assert_eq!(receive(&mut client).await.0, status::COMPLETE);
    assert_eq!(
        task.await.unwrap().unwrap(),
        Identity::Principal {
            principal: "alice@EXAMPLE.COM".into(),
            user: "alice".into(),
            qop: Qop::Auth,
        }
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
    assert!(choice.check("alice@EXAMPLE.COM", Qop::Auth).is_ok());
    assert!(LayerChoice {
        layer: layer::NONE | layer::INTEGRITY,
        ..choice.clone()
    }
    .check("alice@EXAMPLE.COM", Qop::Auth)
    .is_err());
    // The offers of each QOP: the one required and, for auth-int, the stronger auth-conf.
    assert_eq!(Qop::Auth.offered_layers(), layer::NONE);
    assert_eq!(
        Qop::AuthInt.offered_layers(),
        layer::INTEGRITY | layer::CONFIDENTIALITY
    );
    assert_eq!(Qop::AuthConf.offered_layers(), layer::CONFIDENTIALITY);
    for (qop, chosen, ok) in [
        (Qop::AuthInt, layer::INTEGRITY, true),
        (Qop::AuthInt, layer::CONFIDENTIALITY, true),
        (Qop::AuthInt, layer::NONE, false),
        (Qop::AuthConf, layer::INTEGRITY, false),
    ] {
        let choice = LayerChoice {
            layer: chosen,
            ..choice.clone()
        };
        assert_eq!(
            choice.check("alice@EXAMPLE.COM", qop).is_ok(),
            ok,
            "{qop} {chosen}"
        );
    }
    assert_eq!("AUTH-CONF".parse::<Qop>(), Ok(Qop::AuthConf));
    assert!("privacy".parse::<Qop>().unwrap_err().contains("auth-int"));
}

// Security layers: QOP auth-int and auth-conf.

/// The largest message (and frame) the layer servers take.
const LIMIT: usize = 4096;

/// A server requiring `qop` that, once the client is authenticated, reads one message and
/// writes it back; its result is the client's principal, or what went wrong.
fn echo_server(
    qop: Qop,
) -> (
    DuplexStream,
    tokio::task::JoinHandle<Result<String, WireError>>,
) {
    let (client, server) = tokio::io::duplex(1 << 16);
    let task = tokio::spawn(async move {
        let mut conn = Connection::new(server, Framing::Raw, LIMIT);
        let principal = accept_gssapi(&mut conn, &StandIn, qop).await?;
        let message = conn.read_message().await?.ok_or(WireError::Closed)?;
        conn.write_message(&message[..5], &message[5..]).await?;
        Ok(principal)
    });
    (client, task)
}

/// Plays the client up to the server's answer to its choice of `layer` and `max_buffer`;
/// returns the server's offer (unwrapped) and that answer.
async fn choose(client: &mut DuplexStream, layer: u8, max_buffer: u32) -> (Vec<u8>, (u8, Vec<u8>)) {
    send(client, status::START, b"GSSAPI").await;
    send(client, status::OK, b"ticket-no-mutual").await;
    let (_, offer) = receive(client).await;
    send(
        client,
        status::OK,
        &answer_with_buffer(layer, max_buffer, ""),
    )
    .await;
    let offer = offer.strip_prefix(b"W:").unwrap().to_vec();
    (offer, receive(client).await)
}

/// A TBinaryProtocol message of `len` bytes or so: a Thrift exception carrying text.
fn message(len: usize) -> Vec<u8> {
    codec::encode_exception("GetInfo", 7, 0, &"x".repeat(len)).to_vec()
}

/// `bytes` as the client writes them: one frame per piece, each token wrapped as `wrap` does.
fn client_frames(bytes: &[u8], piece: usize, confidential: bool) -> Vec<u8> {
    let mut out = Vec::new();
    for chunk in bytes.chunks(piece) {
        let token = StandInContext { established: true }
            .wrap(chunk, confidential)
            .unwrap();
        out.extend_from_slice(&(token.len() as u32).to_be_bytes());
        out.extend_from_slice(&token);
    }
    out
}

#[tokio::test]
async fn under_auth_conf_every_frame_is_encrypted_and_fits_the_clients_buffer() {
    // auth-int is required; the client chooses the stronger auth-conf, offered too.
    let (mut client, task) = echo_server(Qop::AuthInt);
    let (offer, done) = choose(&mut client, layer::CONFIDENTIALITY, 42).await;
    assert_eq!(
        offer,
        [6, 0, 0x10, 0],
        "integrity and confidentiality, 4096 bytes"
    );
    assert_eq!(done, (status::COMPLETE, vec![]), "COMPLETE is not wrapped");
    // The call, cut by the client into frames of 100 bytes, arrives as one message.
    let call = message(300);
    client
        .write_all(&client_frames(&call, 100, true))
        .await
        .unwrap();
    // The reply comes back in tokens of at most 42 bytes (the client's buffer), each
    // encrypted: the text never crosses in clear.
    let mut reply = Vec::new();
    while reply.len() < call.len() {
        let mut head = [0u8; 4];
        client.read_exact(&mut head).await.unwrap();
        let mut token = vec![0; u32::from_be_bytes(head) as usize];
        assert!(token.len() <= 42, "a token of {} bytes", token.len());
        client.read_exact(&mut token).await.unwrap();
        assert!(!token.windows(3).any(|w| w == b"xxx"), "text in clear");
        let (tag, sealed) = token.split_at(2);
        assert_eq!(tag, b"C:");
        reply.extend(flip(sealed));
    }
    assert_eq!(reply, call);
    assert_eq!(task.await.unwrap().unwrap(), "alice@EXAMPLE.COM");
}

#[tokio::test]
async fn under_auth_int_frames_are_signed_and_a_corrupt_one_ends_the_connection() {
    let (mut client, task) = echo_server(Qop::AuthInt);
    let (_, done) = choose(&mut client, layer::INTEGRITY, 65536).await;
    assert_eq!(done.0, status::COMPLETE);
    let mut frames = client_frames(&message(50), 1000, false);
    frames[4] = b'X'; // the token's tag: it no longer verifies
    client.write_all(&frames).await.unwrap();
    let error = task.await.unwrap().unwrap_err().to_string();
    assert!(
        error.contains("a data frame under SASL QOP auth-int does not unwrap")
            && error.contains("Token header is malformed"),
        "{error}"
    );
}

#[tokio::test]
async fn under_auth_conf_a_frame_that_is_only_signed_is_refused() {
    let (mut client, task) = echo_server(Qop::AuthConf);
    let (offer, done) = choose(&mut client, layer::CONFIDENTIALITY, 65536).await;
    assert_eq!(offer[0], layer::CONFIDENTIALITY, "auth-conf alone");
    assert_eq!(done.0, status::COMPLETE);
    client
        .write_all(&client_frames(&message(50), 1000, false))
        .await
        .unwrap();
    let error = task.await.unwrap().unwrap_err().to_string();
    assert!(error.contains("is not encrypted"), "{error}");
}

#[tokio::test]
async fn a_frame_over_the_limit_is_refused_before_its_bytes_arrive() {
    let (mut client, task) = echo_server(Qop::AuthConf);
    choose(&mut client, layer::CONFIDENTIALITY, 65536).await;
    // Only the length: the server must not wait for (or allocate) 2 GiB.
    client.write_all(&(1u32 << 31).to_be_bytes()).await.unwrap();
    let error = task.await.unwrap().unwrap_err();
    assert!(
        matches!(error, WireError::TooLarge { len, max } if len == 1 << 31 && max == LIMIT),
        "{error:?}"
    );
}

#[tokio::test]
async fn a_client_choosing_less_than_the_required_qop_is_told_what_to_ask_for() {
    for chosen in [layer::NONE, layer::INTEGRITY] {
        let (mut client, task) = echo_server(Qop::AuthConf);
        let (_, (status, message)) = choose(&mut client, chosen, 65536).await;
        let message = String::from_utf8(message).unwrap();
        assert_eq!(status, status::BAD);
        assert!(
            message.contains("this server requires QOP auth-conf")
                && message.contains(";saslQop=auth-conf"),
            "{message}"
        );
        assert!(task.await.unwrap().is_err());
    }
}

#[tokio::test]
async fn a_client_that_finds_no_common_layer_is_logged_with_the_qop_it_needs() {
    // Hive JDBC asking for auth against auth-conf: it sends BAD with its SaslException.
    let (mut client, task) = echo_server(Qop::AuthConf);
    send(&mut client, status::START, b"GSSAPI").await;
    send(&mut client, status::OK, b"ticket-no-mutual").await;
    receive(&mut client).await;
    let gave_up = b"No common protection layer between client and server";
    send(&mut client, status::BAD, gave_up).await;
    let error = task.await.unwrap().unwrap_err().to_string();
    assert!(
        error.contains("No common protection layer")
            && error.contains("this server offers QOP auth-conf"),
        "{error}"
    );
    // Nothing is written back to a client that gave up.
    let mut rest = Vec::new();
    client.read_to_end(&mut rest).await.unwrap();
    assert!(rest.is_empty(), "{rest:?}");
}

#[tokio::test]
async fn a_client_buffer_too_small_for_any_data_is_refused() {
    let (mut client, task) = echo_server(Qop::AuthInt);
    let (_, (status, message)) = choose(&mut client, layer::INTEGRITY, 2).await;
    assert_eq!(status, status::ERROR);
    assert!(
        String::from_utf8(message)
            .unwrap()
            .contains("at most 2 bytes"),
        "the stand-in's tokens add 2 bytes"
    );
    assert!(task.await.unwrap().is_err());
}

/// The stand-in acceptor with auth_to_local rules.
struct Mapped(AuthToLocal);

impl KerberosAcceptor for Mapped {
    fn principal(&self) -> &str {
        StandIn.principal()
    }
    fn start(&self) -> Box<dyn AcceptContext> {
        StandIn.start()
    }
    fn session_user(&self, principal: &str) -> Result<String, String> {
        self.0.map(principal)
    }
}

#[tokio::test]
async fn the_session_user_is_the_acceptors_and_a_principal_it_refuses_gets_bad() {
    for (rules, expected) in [
        ("RULE:[1:$1]s/^/u_/", Ok("u_alice")),
        ("RULE:[1:$1@$0](.*@OTHER)s/@.*//", Err("alice@EXAMPLE.COM")),
    ] {
        let acceptor = Mapped(AuthToLocal::parse(rules, "EXAMPLE.COM").unwrap());
        let (mut client, server) = tokio::io::duplex(4096);
        let task = tokio::spawn(async move {
            let mut conn = Connection::new(server, Framing::Raw, LIMIT);
            crate::sasl::accept(&mut conn, Some(&acceptor), Qop::Auth, None).await
        });
        let (_, (status, message)) = choose(&mut client, layer::NONE, 0).await;
        match expected {
            Ok(user) => {
                assert_eq!(status, status::COMPLETE);
                let Identity::Principal { user: mapped, .. } = task.await.unwrap().unwrap() else {
                    panic!("not GSSAPI");
                };
                assert_eq!(mapped, user);
            }
            Err(principal) => {
                let message = String::from_utf8(message).unwrap();
                assert_eq!(status, status::BAD);
                assert!(
                    message.contains(&format!("maps Kerberos principal {principal}")),
                    "{message}"
                );
                assert!(task.await.unwrap().is_err());
            }
        }
    }
}
