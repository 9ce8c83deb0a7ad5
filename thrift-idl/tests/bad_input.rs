//! Bad input on the binary port: each gets a clear answer (or a close) for that client
//! alone, nothing is allocated on a claimed length, and a fresh client is served after it.

mod common;

use common::*;
use kumiho_thrift::auth::SharedSecret;
use kumiho_thrift::binary::{message_type, ttype, BinaryWriter};
use kumiho_thrift::client::Client;
use kumiho_thrift::codec::{self, exception_kind};
use kumiho_thrift::connection::{Connection, Framing};
use kumiho_thrift::error::WireError;
use kumiho_thrift::sasl;
use kumiho_thrift::server::ServerOptions;
use rand::{RngCore, SeedableRng};
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Reads until the server closes the connection; returns what it sent.
async fn read_to_close(stream: &mut TcpStream) -> Vec<u8> {
    let mut out = Vec::new();
    // A reset after the server's last words counts as closing too.
    let _ = stream.read_to_end(&mut out).await;
    out
}

/// The start of a NOSASL call whose first field is a string claiming `len` bytes.
fn call_with_string_claiming(len: i32) -> Vec<u8> {
    let mut buf = bytes::BytesMut::new();
    let mut w = BinaryWriter::new(&mut buf);
    w.message_begin("ExecuteStatement", message_type::CALL, 1);
    w.field_begin(ttype::STRUCT, 1);
    w.field_begin(ttype::STRING, 2);
    w.i32(len);
    buf.to_vec()
}

/// Asserts `bytes` is a PROTOCOL_ERROR exception whose message contains `needle`.
fn assert_protocol_error(bytes: &[u8], needle: &str) {
    let len = codec::message_len(bytes, 1 << 20)
        .unwrap()
        .expect("a whole message");
    let header = codec::read_header(&bytes[..len]).unwrap();
    assert_eq!(header.message_type, message_type::EXCEPTION);
    match codec::decode_exception_body(&bytes[header.body_offset..len]) {
        WireError::Application { kind, message } => {
            assert_eq!(kind, exception_kind::PROTOCOL_ERROR);
            assert!(message.contains(needle), "{message}");
        }
        other => panic!("expected an exception, got {other}"),
    }
}

#[tokio::test]
async fn random_bytes_close_that_connection_only() {
    let mut server = TestServer::binary(ServerOptions::default()).await;
    let mut bystander = Client::connect(&server.address(), plain("bystander", "x"))
        .await
        .unwrap();
    let mut rng = rand::rngs::StdRng::seed_from_u64(11);
    for first in [0x01u8, 0x80, 0x00, 0x47, 0x16] {
        let mut garbage = vec![0u8; 4096];
        rng.fill_bytes(&mut garbage);
        garbage[0] = first;
        let mut stream = TcpStream::connect(server.addr).await.unwrap();
        // The server may close before reading everything; that is its right. Ending our
        // side tells a server still waiting for a claimed length that no more is coming.
        let _ = stream.write_all(&garbage).await;
        let _ = stream.shutdown().await;
        read_to_close(&mut stream).await;
    }
    assert_served(&mut bystander).await;
    assert_fresh_clients_served(&server.address()).await;
    server.stop().await;
}

#[tokio::test]
async fn a_sasl_negotiation_frame_claiming_2_gib_is_refused() {
    let mut server = TestServer::binary(ServerOptions::default()).await;
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    let mut frame = vec![sasl::status::START];
    frame.extend_from_slice(&0x8000_0000u32.to_be_bytes());
    stream.write_all(&frame).await.unwrap();
    read_to_close(&mut stream).await;
    assert_fresh_clients_served(&server.address()).await;
    server.stop().await;
}

#[tokio::test]
async fn a_sasl_data_frame_claiming_2_gib_is_refused() {
    let mut server = TestServer::binary(ServerOptions::default()).await;
    let stream = TcpStream::connect(server.addr).await.unwrap();
    let mut conn = Connection::new(stream, Framing::Raw, 1 << 20);
    sasl::start_plain(&mut conn, "alice", "x").await.unwrap();
    conn.write_raw(&0x8000_0000u32.to_be_bytes()).await.unwrap();
    // The server says why in a frame of its own, then closes.
    conn.set_framing(Framing::SaslFrames);
    let reply = conn
        .read_message()
        .await
        .unwrap()
        .expect("an exception first");
    assert_protocol_error(&reply, "over the limit");
    assert!(matches!(conn.read_message().await, Ok(None) | Err(_)));
    assert_fresh_clients_served(&server.address()).await;
    server.stop().await;
}

#[tokio::test]
async fn a_thrift_string_claiming_2_gib_is_refused() {
    let mut server = TestServer::binary(ServerOptions::default()).await;
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    stream
        .write_all(&call_with_string_claiming(i32::MAX))
        .await
        .unwrap();
    let answer = read_to_close(&mut stream).await;
    assert_protocol_error(&answer, "over the limit");
    assert_fresh_clients_served(&server.address()).await;
    server.stop().await;
}

#[tokio::test]
async fn a_negative_string_length_is_refused() {
    let mut server = TestServer::binary(ServerOptions::default()).await;
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    stream
        .write_all(&call_with_string_claiming(-5))
        .await
        .unwrap();
    let answer = read_to_close(&mut stream).await;
    assert_protocol_error(&answer, "negative string length");
    assert_fresh_clients_served(&server.address()).await;
    server.stop().await;
}

#[tokio::test]
async fn a_message_over_the_configured_limit_is_refused() {
    let mut server = TestServer::binary(ServerOptions {
        max_message_size: 4096,
        ..ServerOptions::default()
    })
    .await;
    let mut client = Client::connect(&server.address(), plain("alice", "x"))
        .await
        .unwrap();
    let mut req = open_session_req("alice");
    req.configuration = Some([("big".to_owned(), "x".repeat(8192))].into());
    let err = client
        .call::<_, kumiho_thrift::cli::TOpenSessionResp>("OpenSession", &req)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, WireError::Application { kind: exception_kind::PROTOCOL_ERROR, message }
            if message.contains("over the limit of 4096")),
        "{err}"
    );
    assert_fresh_clients_served(&server.address()).await;
    server.stop().await;
}

#[tokio::test]
async fn a_wrong_password_is_refused_with_a_sasl_message() {
    let mut server = TestServer::binary(ServerOptions {
        authenticator: Arc::new(SharedSecret::new("s3cret")),
        ..ServerOptions::default()
    })
    .await;
    let err = Client::connect(&server.address(), plain("gateway", "guess"))
        .await
        .unwrap_err();
    match &err {
        WireError::Sasl(message) => {
            assert!(message.contains("wrong password"), "{message}");
            assert!(!message.contains("s3cret"), "{message}");
        }
        other => panic!("expected a SASL refusal, got {other}"),
    }
    let mut client = Client::connect(&server.address(), plain("gateway", "s3cret"))
        .await
        .unwrap();
    let conf = open_session(&mut client, "gateway").await;
    assert_eq!(conf["user"], "gateway");
    server.stop().await;
}

#[tokio::test]
async fn an_unsupported_sasl_mechanism_is_refused_by_name() {
    let mut server = TestServer::binary(ServerOptions::default()).await;
    let stream = TcpStream::connect(server.addr).await.unwrap();
    let mut conn = Connection::new(stream, Framing::Raw, 1 << 20);
    conn.write_raw(&sasl::encode_frame(sasl::status::START, b"GSSAPI"))
        .await
        .unwrap();
    let (status, message) = sasl::read_frame(&mut conn).await.unwrap().unwrap();
    assert_eq!(status, sasl::status::BAD);
    let message = String::from_utf8(message).unwrap();
    assert!(
        message.contains("GSSAPI") && message.contains("PLAIN"),
        "{message}"
    );
    assert_fresh_clients_served(&server.address()).await;
    server.stop().await;
}
