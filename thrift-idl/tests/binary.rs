//! The binary port end to end: the async client against a real server over SASL PLAIN and
//! NOSASL, what the service learns of its callers, refused transports, and shutdown.

mod common;

use common::*;
use kumiho_thrift::cli::*;
use kumiho_thrift::client::{Client, ClientAuth};
use kumiho_thrift::codec::exception_kind;
use kumiho_thrift::connection::{Connection, Framing};
use kumiho_thrift::error::WireError;
use kumiho_thrift::handle::HandleId;
use kumiho_thrift::server::ServerOptions;
use kumiho_thrift::service::Transport;
use kumiho_thrift::{codec, sasl, status};
use std::time::Duration;
use tokio::net::TcpStream;

#[tokio::test]
async fn a_sasl_client_is_served_as_its_user() {
    let mut server = TestServer::binary(ServerOptions::default()).await;
    let mut client = Client::connect(&server.address(), plain("alice", "anonymous"))
        .await
        .unwrap();
    let conf = open_session(&mut client, "alice").await;
    assert_eq!(conf["user"], "alice");
    assert_eq!(conf["transport"], transport_name(Transport::Sasl));
    assert_served(&mut client).await;
    drop(client);
    let closed = server.closed.recv().await.unwrap();
    assert_eq!(closed.user.as_deref(), Some("alice"));
    assert_eq!(closed.transport, Transport::Sasl);
    server.stop().await;
}

#[tokio::test]
async fn a_nosasl_client_is_served_without_a_user() {
    let mut server = TestServer::binary(ServerOptions::default()).await;
    let mut client = Client::connect(&server.address(), ClientAuth::NoSasl)
        .await
        .unwrap();
    let conf = open_session(&mut client, "bob").await;
    assert_eq!(conf["user"], "");
    assert_eq!(conf["requested_user"], "bob");
    assert_eq!(conf["transport"], transport_name(Transport::NoSasl));
    drop(client);
    let closed = server.closed.recv().await.unwrap();
    assert_eq!(closed.transport, Transport::NoSasl);
    server.stop().await;
}

#[tokio::test]
async fn each_connection_is_reported_closed_once_with_its_own_id() {
    let mut server = TestServer::binary(ServerOptions::default()).await;
    let mut first = Client::connect(&server.address(), plain("a", "x"))
        .await
        .unwrap();
    let mut second = Client::connect(&server.address(), plain("b", "x"))
        .await
        .unwrap();
    assert_served(&mut first).await;
    assert_served(&mut second).await;
    drop(first);
    let a = server.closed.recv().await.unwrap();
    drop(second);
    let b = server.closed.recv().await.unwrap();
    assert_eq!(a.user.as_deref(), Some("a"));
    assert_eq!(b.user.as_deref(), Some("b"));
    assert_ne!(a.connection_id, b.connection_id);
    server.stop().await;
    // Stopped, the server has dropped the service and with it the sender: no more reports.
    assert!(server.closed.recv().await.is_none());
}

#[tokio::test]
async fn a_forwarded_reply_reaches_the_client_intact() {
    let mut server = TestServer::binary(ServerOptions::default()).await;
    let mut client = Client::connect(&server.address(), ClientAuth::NoSasl)
        .await
        .unwrap();
    let req = TExecuteStatementReq {
        session_handle: HandleId::new().session_handle(),
        statement: "SELECT 42".into(),
        conf_overlay: None,
        run_async: Some(true),
        query_timeout: None,
    };
    let resp: TExecuteStatementResp = client.call("ExecuteStatement", &req).await.unwrap();
    assert_eq!(
        resp.status.error_message.as_deref(),
        Some("echo: SELECT 42")
    );
    // The undecoded path returns the very `_result` body the service encoded.
    let body = client.call_encoded("ExecuteStatement", &req).await.unwrap();
    assert_eq!(body, codec::encode_result_body(&resp));
    server.stop().await;
}

#[tokio::test]
async fn an_unknown_method_gets_unknown_method_and_the_connection_lives_on() {
    let mut server = TestServer::binary(ServerOptions::default()).await;
    for auth in [plain("alice", "x"), ClientAuth::NoSasl] {
        let mut client = Client::connect(&server.address(), auth).await.unwrap();
        let err = client
            .call::<_, TGetInfoResp>("GetLog", &get_info_req())
            .await
            .unwrap_err();
        match err {
            WireError::Application { kind, message } => {
                assert_eq!(kind, exception_kind::UNKNOWN_METHOD);
                assert!(message.contains("GetLog"), "{message}");
            }
            other => panic!("expected UNKNOWN_METHOD, got {other}"),
        }
        assert_served(&mut client).await;
    }
    server.stop().await;
}

#[tokio::test]
async fn arguments_of_the_wrong_shape_get_protocol_error_and_the_connection_lives_on() {
    let mut server = TestServer::binary(ServerOptions::default()).await;
    let mut client = Client::connect(&server.address(), plain("alice", "x"))
        .await
        .unwrap();
    // GetInfo's arguments where OpenSession's are expected: a required field is missing.
    let err = client
        .call::<_, TOpenSessionResp>("OpenSession", &get_info_req())
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            WireError::Application {
                kind: exception_kind::PROTOCOL_ERROR,
                ..
            }
        ),
        "{err}"
    );
    assert_served(&mut client).await;
    server.stop().await;
}

#[tokio::test]
async fn a_message_split_across_sasl_frames_is_reassembled() {
    let mut server = TestServer::binary(ServerOptions::default()).await;
    let stream = TcpStream::connect(server.addr).await.unwrap();
    let mut conn = Connection::new(stream, Framing::Raw, codec::DEFAULT_MAX_MESSAGE_SIZE);
    sasl::start_plain(&mut conn, "alice", "x").await.unwrap();
    let call = codec::encode_call("GetInfo", 3, &get_info_req());
    let (a, b) = call.split_at(10);
    let mut frames = Vec::new();
    for part in [a, b] {
        frames.extend_from_slice(&(part.len() as u32).to_be_bytes());
        frames.extend_from_slice(part);
    }
    conn.write_raw(&frames).await.unwrap();
    let reply = conn.read_message().await.unwrap().unwrap();
    let header = codec::read_header(&reply).unwrap();
    assert_eq!((header.name.as_str(), header.seqid), ("GetInfo", 3));
    let resp: TGetInfoResp = codec::decode_result_body(&reply[header.body_offset..]).unwrap();
    assert_eq!(
        resp.info_value,
        TGetInfoValue::StringValue(SERVER_NAME.into())
    );
    server.stop().await;
}

#[tokio::test]
async fn the_plain_response_may_come_with_status_ok() {
    // PyHive's thrift_sasl sends the PLAIN response with OK, Hive JDBC with COMPLETE.
    let mut server = TestServer::binary(ServerOptions::default()).await;
    let stream = TcpStream::connect(server.addr).await.unwrap();
    let mut conn = Connection::new(stream, Framing::Raw, 1 << 20);
    let mut hello = sasl::encode_frame(sasl::status::START, b"PLAIN");
    hello.extend(sasl::encode_frame(
        sasl::status::OK,
        &sasl::PlainCredentials::encode("carol", "x"),
    ));
    conn.write_raw(&hello).await.unwrap();
    let (status, payload) = sasl::read_frame(&mut conn).await.unwrap().unwrap();
    assert_eq!((status, payload.len()), (sasl::status::COMPLETE, 0));
    server.stop().await;
}

#[tokio::test]
async fn a_sasl_client_is_refused_clearly_when_only_nosasl_is_allowed() {
    let mut server = TestServer::binary(ServerOptions {
        allow_sasl: false,
        ..ServerOptions::default()
    })
    .await;
    let err = Client::connect(&server.address(), plain("alice", "x"))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, WireError::Sasl(m) if m.contains("does not accept SASL")),
        "{err}"
    );
    let mut client = Client::connect(&server.address(), ClientAuth::NoSasl)
        .await
        .unwrap();
    assert_served(&mut client).await;
    server.stop().await;
}

#[tokio::test]
async fn a_nosasl_client_is_refused_clearly_when_sasl_is_required() {
    let mut server = TestServer::binary(ServerOptions {
        allow_nosasl: false,
        ..ServerOptions::default()
    })
    .await;
    let mut client = Client::connect(&server.address(), ClientAuth::NoSasl)
        .await
        .unwrap();
    let err = client
        .call::<_, TGetInfoResp>("GetInfo", &get_info_req())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, WireError::Application { message, .. } if message.contains("requires SASL")),
        "{err}"
    );
    let mut client = Client::connect(&server.address(), plain("alice", "x"))
        .await
        .unwrap();
    assert_served(&mut client).await;
    server.stop().await;
}

#[tokio::test]
async fn shutdown_stops_accepting_and_closes_idle_connections() {
    let mut server = TestServer::binary(ServerOptions::default()).await;
    let addr = server.address();
    let mut client = Client::connect(&addr, plain("alice", "x")).await.unwrap();
    assert_served(&mut client).await;
    // The server returns only once the idle connection is gone.
    server.stop().await;
    assert!(client
        .call::<_, TGetInfoResp>("GetInfo", &get_info_req())
        .await
        .is_err());
    assert!(Client::connect(&addr, ClientAuth::NoSasl).await.is_err());
}

#[tokio::test]
async fn pipelined_calls_are_answered_in_order_and_unanswered_ones_are_skipped() {
    let mut server = TestServer::binary(ServerOptions::default()).await;
    for auth in [plain("alice", "x"), ClientAuth::NoSasl] {
        let mut client = Client::connect(&server.address(), auth).await.unwrap();
        // A call nobody waits for, refused by the server (an unknown method): skipped.
        client.queue_unanswered("GetLog", &get_info_req());
        let open = client.queue("OpenSession", &open_session_req("bob"));
        client.queue_unanswered("GetInfo", &get_info_req());
        let info = client.queue("GetInfo", &get_info_req());

        let open = client.reply(open).await.unwrap();
        let open: TOpenSessionResp = codec::decode_result_body(&open).unwrap();
        assert_eq!(open.configuration.unwrap()["requested_user"], "bob");
        let info = client.reply(info).await.unwrap();
        let info: TGetInfoResp = codec::decode_result_body(&info).unwrap();
        assert_eq!(
            info.info_value,
            TGetInfoValue::StringValue(SERVER_NAME.into())
        );
        // Queued and flushed with no reply awaited: read on the way to the next call's.
        client.queue_unanswered(
            "CloseSession",
            &TCloseSessionReq {
                session_handle: HandleId::new().session_handle(),
            },
        );
        client.flush().await.unwrap();
        assert_served(&mut client).await;
    }
    server.stop().await;
}

#[tokio::test]
async fn a_pipelined_call_that_waits_does_not_hold_back_the_replies_before_it() {
    let mut server = TestServer::binary(ServerOptions::default()).await;
    let mut client = Client::connect(&server.address(), plain("alice", "x"))
        .await
        .unwrap();
    // One write: two calls answered at once, then one that waits until released.
    let first = client.queue("OpenSession", &open_session_req("first"));
    let second = client.queue("OpenSession", &open_session_req("second"));
    let waiting = client.queue(
        "GetOperationStatus",
        &TGetOperationStatusReq {
            operation_handle: HandleId::new()
                .operation_handle(TOperationType::EXECUTE_STATEMENT, true),
            get_progress_update: None,
        },
    );
    client.flush().await.unwrap();
    let answered = tokio::time::timeout(Duration::from_secs(10), async {
        let first = client.reply(first).await.unwrap();
        let second = client.reply(second).await.unwrap();
        (first, second)
    })
    .await
    .expect("the replies before a waiting call arrive while it waits");
    for (reply, user) in [(answered.0, "first"), (answered.1, "second")] {
        let resp: TOpenSessionResp = codec::decode_result_body(&reply).unwrap();
        assert_eq!(resp.configuration.unwrap()["requested_user"], user);
    }
    server.status_polls.add_permits(1);
    let status = client.reply(waiting).await.unwrap();
    let status: TGetOperationStatusResp = codec::decode_result_body(&status).unwrap();
    assert!(!status::is_ok(&status.status));
    assert_served(&mut client).await;
    server.stop().await;
}

#[tokio::test]
async fn replies_read_on_the_way_are_kept_for_their_callers_unless_forgotten() {
    let mut server = TestServer::binary(ServerOptions::default()).await;
    let mut client = Client::connect(&server.address(), plain("alice", "x"))
        .await
        .unwrap();
    let first = client.queue("OpenSession", &open_session_req("first"));
    let forgotten = client.queue("OpenSession", &open_session_req("forgotten"));
    let third = client.queue("OpenSession", &open_session_req("third"));
    client.forget(forgotten);
    let user = |reply: bytes::Bytes| {
        let resp: TOpenSessionResp = codec::decode_result_body(&reply).unwrap();
        resp.configuration.unwrap()["requested_user"].clone()
    };
    // Read out of order: the first reply is read on the way and kept for its caller.
    assert_eq!(user(client.reply(third).await.unwrap()), "third");
    assert_eq!(user(client.reply(first).await.unwrap()), "first");
    assert_served(&mut client).await;
    server.stop().await;
}

fn waiting_status_poll() -> TGetOperationStatusReq {
    TGetOperationStatusReq {
        operation_handle: HandleId::new().operation_handle(TOperationType::EXECUTE_STATEMENT, true),
        get_progress_update: None,
    }
}

#[tokio::test]
async fn a_client_that_hangs_up_during_a_call_that_waits_is_reported_closed_at_once() {
    let mut server = TestServer::binary(ServerOptions::default()).await;
    let mut client = Client::connect(&server.address(), plain("alice", "x"))
        .await
        .unwrap();
    // A call held until the test releases it (a synchronous query), then the client is gone.
    client.queue_unanswered("GetOperationStatus", &waiting_status_poll());
    client.flush().await.unwrap();
    drop(client);
    let closed = tokio::time::timeout(Duration::from_secs(10), server.closed.recv())
        .await
        .expect("a client gone during a call that waits is reported before the call ends");
    assert_eq!(closed.unwrap().user.as_deref(), Some("alice"));
    server.stop().await;
}

#[tokio::test]
async fn a_call_pipelined_behind_one_that_waits_is_answered_after_it() {
    let mut server = TestServer::binary(ServerOptions::default()).await;
    let mut client = Client::connect(&server.address(), plain("alice", "x"))
        .await
        .unwrap();
    let waiting = client.queue("GetOperationStatus", &waiting_status_poll());
    client.flush().await.unwrap();
    // Sent while the server watches the connection for a hang-up: kept, not lost.
    tokio::time::sleep(Duration::from_millis(50)).await;
    let behind = client.queue("OpenSession", &open_session_req("behind"));
    client.flush().await.unwrap();
    server.status_polls.add_permits(1);
    let status: TGetOperationStatusResp =
        codec::decode_result_body(&client.reply(waiting).await.unwrap()).unwrap();
    assert!(!status::is_ok(&status.status));
    let opened: TOpenSessionResp =
        codec::decode_result_body(&client.reply(behind).await.unwrap()).unwrap();
    assert_eq!(opened.configuration.unwrap()["requested_user"], "behind");
    server.stop().await;
}

#[tokio::test]
async fn a_client_whose_call_was_cut_off_says_so_and_refuses_later_calls() {
    let mut server = TestServer::binary(ServerOptions::default()).await;
    let mut client = Client::connect(&server.address(), plain("alice", "x"))
        .await
        .unwrap();
    assert!(!client.is_cut_off());
    let waiting = client.queue("GetOperationStatus", &waiting_status_poll());
    let cut = tokio::time::timeout(Duration::from_millis(100), client.reply(waiting)).await;
    assert!(cut.is_err(), "the status poll waits until released");
    assert!(client.is_cut_off());
    // The next reply on the wire would be the cut-off call's: refused at once, not misread.
    let error = client
        .call::<_, TGetInfoResp>("GetInfo", &get_info_req())
        .await
        .unwrap_err();
    assert!(error.to_string().contains("cut off"), "{error}");
    server.status_polls.add_permits(1);
    server.stop().await;
}
