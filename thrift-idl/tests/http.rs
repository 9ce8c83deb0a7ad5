//! The HTTP port end to end with hyper's client: Basic credentials, SPNEGO (with a stand-in
//! Kerberos acceptor), the auth cookie, wrong paths and methods, refused credentials and
//! oversized bodies.

mod common;

use std::sync::Arc;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use bytes::Bytes;
use common::*;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1;
use hyper::header::{self, HeaderValue};
use hyper::{Method, Request, StatusCode};
use hyper_util::rt::TokioIo;
use kumiho_thrift::auth::SharedSecret;
use kumiho_thrift::binary::message_type;
use kumiho_thrift::cli::*;
use kumiho_thrift::codec::{self, exception_kind};
use kumiho_thrift::error::WireError;
use kumiho_thrift::kerberos::{AcceptContext, KerberosAcceptor, Step, Unwrapped};
use kumiho_thrift::server::ServerOptions;
use kumiho_thrift::service::Transport;
use tokio::net::TcpStream;

/// One HTTP/1.1 connection to the test server.
struct HttpClient {
    sender: http1::SendRequest<Full<Bytes>>,
}

/// What came back: status, headers of interest, body.
struct HttpReply {
    status: StatusCode,
    content_type: Option<String>,
    set_cookie: Option<String>,
    www_authenticate: Option<String>,
    /// Every `WWW-Authenticate` header, in order.
    challenges: Vec<String>,
    body: Bytes,
}

impl HttpClient {
    async fn connect(server: &TestServer) -> Self {
        let stream = TcpStream::connect(server.addr).await.unwrap();
        let (sender, conn) = http1::handshake(TokioIo::new(stream)).await.unwrap();
        tokio::spawn(conn);
        Self { sender }
    }

    async fn send(
        &mut self,
        method: Method,
        path: &str,
        headers: &[(&str, String)],
        body: Bytes,
    ) -> HttpReply {
        let mut req = Request::builder()
            .method(method)
            .uri(path)
            .header(header::HOST, "localhost");
        for (name, value) in headers {
            req = req.header(*name, value);
        }
        let resp = self
            .sender
            .send_request(req.body(Full::new(body)).unwrap())
            .await
            .unwrap();
        let text = |v: Option<&HeaderValue>| v.map(|v| v.to_str().unwrap().to_owned());
        HttpReply {
            status: resp.status(),
            content_type: text(resp.headers().get(header::CONTENT_TYPE)),
            set_cookie: text(resp.headers().get(header::SET_COOKIE)),
            www_authenticate: text(resp.headers().get(header::WWW_AUTHENTICATE)),
            challenges: resp
                .headers()
                .get_all(header::WWW_AUTHENTICATE)
                .iter()
                .map(|v| v.to_str().unwrap().to_owned())
                .collect(),
            body: resp.into_body().collect().await.unwrap().to_bytes(),
        }
    }

    /// POSTs a call to `/cliservice`.
    async fn call<T: thrift::protocol::TSerializable>(
        &mut self,
        method: &str,
        req: &T,
        headers: &[(&str, String)],
    ) -> HttpReply {
        let body = codec::encode_call(method, 7, req);
        self.send(Method::POST, "/cliservice", headers, body).await
    }
}

/// A server with `options` and a client connected to it.
async fn start_with(options: ServerOptions) -> (TestServer, HttpClient) {
    let server = TestServer::start(Port::Http, options).await;
    let client = HttpClient::connect(&server).await;
    (server, client)
}

/// A GetInfo call with `headers`, refused with 401.
async fn refused(client: &mut HttpClient, headers: &[(&str, String)]) -> HttpReply {
    let reply = client.call("GetInfo", &get_info_req(), headers).await;
    assert_eq!(reply.status, StatusCode::UNAUTHORIZED);
    reply
}

fn basic(user: &str, password: &str) -> (&'static str, String) {
    (
        "authorization",
        format!("Basic {}", STANDARD.encode(format!("{user}:{password}"))),
    )
}

/// Decodes a Thrift reply body to `name` with the test seqid.
fn decode_reply<T: thrift::protocol::TSerializable>(reply: &HttpReply, name: &str) -> T {
    assert_eq!(reply.status, StatusCode::OK, "{:?}", reply.body);
    assert_eq!(reply.content_type.as_deref(), Some("application/x-thrift"));
    let header = codec::read_header(&reply.body).unwrap();
    assert_eq!((header.name.as_str(), header.seqid), (name, 7));
    assert_eq!(header.message_type, message_type::REPLY);
    codec::decode_result_body(&reply.body[header.body_offset..]).unwrap()
}

/// The auth cookie `authenticated` set, sent alone (no credentials), opens a session as
/// `user`, and no new cookie is set.
async fn the_cookie_opens_sessions_as(
    client: &mut HttpClient,
    authenticated: &HttpReply,
    user: &str,
) {
    let set_cookie = (authenticated.set_cookie.as_deref()).expect("a hive.server2.auth cookie");
    assert!(set_cookie.starts_with("hive.server2.auth="), "{set_cookie}");
    let cookie = set_cookie.split(';').next().unwrap().to_owned();
    let reply = client
        .call(
            "OpenSession",
            &open_session_req("ignored"),
            &[("cookie", cookie)],
        )
        .await;
    let resp: TOpenSessionResp = decode_reply(&reply, "OpenSession");
    assert_eq!(resp.configuration.unwrap()["user"], user);
    assert_eq!(reply.set_cookie, None);
}

fn body_text(reply: &HttpReply) -> String {
    String::from_utf8(reply.body.to_vec()).unwrap()
}

#[tokio::test]
async fn basic_credentials_then_the_cookie_alone_are_accepted() {
    let mut server = TestServer::start(Port::Http, ServerOptions::default()).await;
    let mut client = HttpClient::connect(&server).await;
    let reply = client
        .call(
            "OpenSession",
            &open_session_req("alice"),
            &[basic("alice", "pw")],
        )
        .await;
    let resp: TOpenSessionResp = decode_reply(&reply, "OpenSession");
    let conf = resp.configuration.unwrap();
    assert_eq!(conf["user"], "alice");
    assert_eq!(conf["transport"], transport_name(Transport::Http));
    // A new connection, the cookie and no credentials: the same user.
    let mut client = HttpClient::connect(&server).await;
    the_cookie_opens_sessions_as(&mut client, &reply, "alice").await;
    server.stop().await;
}

#[tokio::test]
async fn a_leading_slash_in_the_configured_path_is_optional() {
    let mut server = TestServer::start(
        Port::Http,
        ServerOptions {
            http_path: "/cliservice".into(),
            ..ServerOptions::default()
        },
    )
    .await;
    let mut client = HttpClient::connect(&server).await;
    let reply = client
        .call("GetInfo", &get_info_req(), &[basic("a", "x")])
        .await;
    let resp: TGetInfoResp = decode_reply(&reply, "GetInfo");
    assert_eq!(
        resp.info_value,
        TGetInfoValue::StringValue(SERVER_NAME.into())
    );
    server.stop().await;
}

#[tokio::test]
async fn a_trailing_slash_reaches_the_endpoint_as_pyhive_sends_it() {
    let mut server = TestServer::start(Port::Http, ServerOptions::default()).await;
    let mut client = HttpClient::connect(&server).await;
    let call = codec::encode_call("GetInfo", 7, &get_info_req());
    let reply = client
        .send(Method::POST, "/cliservice/", &[basic("a", "x")], call)
        .await;
    assert_eq!(reply.status, StatusCode::OK);
    let _: TGetInfoResp = decode_reply(&reply, "GetInfo");
    server.stop().await;
}

#[tokio::test]
async fn missing_or_wrong_credentials_get_401_with_a_message() {
    let (mut server, mut client) = start_with(ServerOptions {
        authenticator: Arc::new(SharedSecret::new("s3cret")),
        ..ServerOptions::default()
    })
    .await;
    let reply = refused(&mut client, &[]).await;
    assert!(body_text(&reply).contains("Basic"));

    let reply = refused(&mut client, &[basic("gateway", "guess")]).await;
    assert!(body_text(&reply).contains("wrong password"));
    assert!(!body_text(&reply).contains("s3cret"));

    let forged = (
        "cookie",
        "hive.server2.auth=YWRtaW4.9999999999.AAAA".to_owned(),
    );
    let reply = client.call("GetInfo", &get_info_req(), &[forged]).await;
    assert_eq!(reply.status, StatusCode::UNAUTHORIZED);

    // The same connection is still served once the credentials are right.
    let reply = client
        .call("GetInfo", &get_info_req(), &[basic("gateway", "s3cret")])
        .await;
    let _: TGetInfoResp = decode_reply(&reply, "GetInfo");
    server.stop().await;
}

#[tokio::test]
async fn other_paths_get_404_and_other_methods_405() {
    let mut server = TestServer::start(Port::Http, ServerOptions::default()).await;
    let mut client = HttpClient::connect(&server).await;
    let call = codec::encode_call("GetInfo", 7, &get_info_req());
    let reply = client
        .send(Method::POST, "/elsewhere", &[basic("a", "x")], call.clone())
        .await;
    assert_eq!(reply.status, StatusCode::NOT_FOUND);
    assert!(body_text(&reply).contains("/cliservice"));
    let reply = client
        .send(Method::GET, "/cliservice", &[basic("a", "x")], Bytes::new())
        .await;
    assert_eq!(reply.status, StatusCode::METHOD_NOT_ALLOWED);
    server.stop().await;
}

#[tokio::test]
async fn an_unknown_method_gets_an_unknown_method_exception() {
    let mut server = TestServer::start(Port::Http, ServerOptions::default()).await;
    let mut client = HttpClient::connect(&server).await;
    let reply = client
        .call("GetLog", &get_info_req(), &[basic("a", "x")])
        .await;
    assert_eq!(reply.status, StatusCode::OK);
    let header = codec::read_header(&reply.body).unwrap();
    assert_eq!(header.message_type, message_type::EXCEPTION);
    assert!(matches!(
        codec::decode_exception_body(&reply.body[header.body_offset..]),
        WireError::Application {
            kind: exception_kind::UNKNOWN_METHOD,
            ..
        }
    ));
    server.stop().await;
}

#[tokio::test]
async fn bad_bodies_get_400_and_oversized_ones_413() {
    let mut server = TestServer::start(
        Port::Http,
        ServerOptions {
            max_message_size: 4096,
            ..ServerOptions::default()
        },
    )
    .await;
    let mut client = HttpClient::connect(&server).await;
    let reply = client
        .send(
            Method::POST,
            "/cliservice",
            &[basic("a", "x")],
            Bytes::from_static(b"\x80\x01\x00\x01garbage"),
        )
        .await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST);
    let call = codec::encode_call("GetInfo", 7, &get_info_req());
    let reply = client
        .send(
            Method::POST,
            "/cliservice",
            &[basic("a", "x")],
            call.slice(..call.len() - 1),
        )
        .await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST);
    let reply = client
        .send(
            Method::POST,
            "/cliservice",
            &[basic("a", "x")],
            Bytes::from(vec![0u8; 8192]),
        )
        .await;
    assert_eq!(reply.status, StatusCode::PAYLOAD_TOO_LARGE);
    assert!(body_text(&reply).contains("4096"));

    // A fresh connection is served normally.
    let mut client = HttpClient::connect(&server).await;
    let reply = client
        .call("GetInfo", &get_info_req(), &[basic("a", "x")])
        .await;
    let _: TGetInfoResp = decode_reply(&reply, "GetInfo");
    server.stop().await;
}

#[tokio::test]
async fn a_call_whose_client_hangs_up_runs_to_its_end() {
    use std::time::Duration;
    use tokio::io::AsyncWriteExt;

    let mut server = TestServer::start(Port::Http, ServerOptions::default()).await;
    // A status poll held until the test releases it, sent by a client that then goes.
    let body = codec::encode_call(
        "GetOperationStatus",
        7,
        &TGetOperationStatusReq {
            operation_handle: kumiho_thrift::handle::HandleId::new()
                .operation_handle(TOperationType::EXECUTE_STATEMENT, true),
            get_progress_update: None,
        },
    );
    let (name, credentials) = basic("a", "x");
    let head = format!(
        "POST /cliservice HTTP/1.1\r\nHost: localhost\r\n{name}: {credentials}\r\n\
         Content-Type: application/x-thrift\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(&body).await.unwrap();
    // No signal says the call is held, or that hyper saw the hang-up: give each a moment.
    tokio::time::sleep(Duration::from_millis(300)).await;
    drop(stream);
    tokio::time::sleep(Duration::from_millis(300)).await;
    server.status_polls.add_permits(1);
    // The call takes the permit: it was still waiting, not dropped with the connection.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while server.status_polls.available_permits() > 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the call ended with its client's connection"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    server.stop().await;
}

/// Accepts the token `ticket` in one step as `alice/admin@EXAMPLE.COM`, answering `ap-rep`;
/// refuses anything else with a GSS-like text.
struct StandInKerberos;

struct StandInContext;

impl KerberosAcceptor for StandInKerberos {
    fn principal(&self) -> &str {
        "kumiho/gw@EXAMPLE.COM"
    }
    fn start(&self) -> Box<dyn AcceptContext> {
        Box::new(StandInContext)
    }
}

impl AcceptContext for StandInContext {
    fn step(&mut self, token: &[u8]) -> Result<Step, String> {
        match token {
            b"ticket" => Ok(Step::Established(Some(b"ap-rep".to_vec()))),
            _ => Err("Clock skew too great".into()),
        }
    }
    fn client_principal(&self) -> Result<String, String> {
        Ok("alice/admin@EXAMPLE.COM".into())
    }
    fn wrap(&mut self, _: &[u8], _: bool) -> Result<Vec<u8>, String> {
        unreachable!("HTTP wraps nothing")
    }
    fn unwrap(&mut self, _: &[u8]) -> Result<Unwrapped, String> {
        unreachable!("HTTP unwraps nothing")
    }
    fn wrap_size_limit(&self, _: bool, _: u32) -> Result<u32, String> {
        unreachable!("HTTP wraps nothing")
    }
}

#[tokio::test]
async fn spnego_then_the_cookie_and_no_passwords_under_kerberos() {
    let mut server = TestServer::start(
        Port::Http,
        ServerOptions {
            kerberos: Some(Arc::new(StandInKerberos)),
            ..ServerOptions::default()
        },
    )
    .await;
    let mut client = HttpClient::connect(&server).await;
    // No credentials, or a password: the Negotiate challenge, and what to send.
    for headers in [vec![], vec![basic("alice", "pw")]] {
        let reply = client.call("GetInfo", &get_info_req(), &headers).await;
        assert_eq!(reply.status, StatusCode::UNAUTHORIZED);
        assert_eq!(reply.www_authenticate.as_deref(), Some("Negotiate"));
        assert!(
            body_text(&reply).contains("Negotiate"),
            "{}",
            body_text(&reply)
        );
    }
    let negotiate = |token: &[u8]| {
        (
            "authorization",
            format!("Negotiate {}", STANDARD.encode(token)),
        )
    };
    let reply = client
        .call("GetInfo", &get_info_req(), &[negotiate(b"stale")])
        .await;
    assert_eq!(reply.status, StatusCode::UNAUTHORIZED);
    let text = body_text(&reply);
    assert!(
        text.contains("Clock skew too great") && text.contains("kumiho/gw@EXAMPLE.COM"),
        "{text}"
    );

    // A ticket: the principal's short name, the AP-REP back, and a cookie.
    let reply = client
        .call(
            "OpenSession",
            &open_session_req("ignored"),
            &[negotiate(b"ticket")],
        )
        .await;
    let resp: TOpenSessionResp = decode_reply(&reply, "OpenSession");
    assert_eq!(resp.configuration.unwrap()["user"], "alice");
    assert_eq!(
        reply.www_authenticate,
        Some(format!("Negotiate {}", STANDARD.encode(b"ap-rep")))
    );
    the_cookie_opens_sessions_as(&mut client, &reply, "alice").await;
    server.stop().await;
}

#[tokio::test]
async fn kerberos_with_passwords_takes_either_and_challenges_with_both() {
    let (mut server, mut client) = start_with(ServerOptions {
        kerberos: Some(Arc::new(StandInKerberos)),
        passwords_with_kerberos: true,
        authenticator: Arc::new(SharedSecret::new("s3cret")),
        ..ServerOptions::default()
    })
    .await;
    // Neither, a wrong password, a scheme neither: both challenges, two headers, and why.
    for (headers, says) in [
        (vec![], "--negotiate -u : --service-name kumiho) or HTTP Basic credentials (curl -u user:password)"),
        (vec![basic("alice", "wrong")], "wrong password"),
        (vec![("authorization", "Bearer abc".to_owned())], "takes Negotiate"),
    ] {
        let reply = refused(&mut client, &headers).await;
        assert_eq!(reply.challenges, ["Negotiate", "Basic realm=\"kumiho\""]);
        assert!(body_text(&reply).contains(says), "{}", body_text(&reply));
    }
    // A password, then a ticket.
    let reply = client
        .call(
            "OpenSession",
            &open_session_req("ignored"),
            &[basic("bob", "s3cret")],
        )
        .await;
    let resp: TOpenSessionResp = decode_reply(&reply, "OpenSession");
    assert_eq!(resp.configuration.unwrap()["user"], "bob");
    let ticket = (
        "authorization",
        format!("Negotiate {}", STANDARD.encode(b"ticket")),
    );
    let reply = client
        .call("OpenSession", &open_session_req("ignored"), &[ticket])
        .await;
    let resp: TOpenSessionResp = decode_reply(&reply, "OpenSession");
    assert_eq!(resp.configuration.unwrap()["user"], "alice");
    server.stop().await;
}
