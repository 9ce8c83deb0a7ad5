//! TLS on the binary and HTTP ports, with a rustls client and certificates made here: SASL
//! PLAIN and NOSASL inside TLS, HTTPS, plaintext clients on TLS ports (and TLS clients on
//! plaintext ports) refused for themselves alone, certificates read again when their files
//! change, and start-up errors naming the file at fault.

mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use common::*;
use http_body_util::{BodyExt, Full};
use hyper::{Method, Request, StatusCode};
use hyper_util::rt::TokioIo;
use kumiho_thrift::cli::*;
use kumiho_thrift::client::{Client, ClientAuth};
use kumiho_thrift::codec;
use kumiho_thrift::connection::{Connection, Framing};
use kumiho_thrift::error::WireError;
use kumiho_thrift::sasl;
use kumiho_thrift::server::{ServerOptions, ServerTls, TLS_RELOAD_CHECK};
use kumiho_thrift::service::Transport;
use rustls::pki_types::{CertificateDer, ServerName};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;
use tokio_rustls::TlsConnector;

/// A self-signed certificate for `localhost` and 127.0.0.1, written as PEM files.
struct TestCert {
    dir: tempfile::TempDir,
    der: CertificateDer<'static>,
}

impl TestCert {
    fn new() -> Self {
        let cert = TestCert {
            dir: tempfile::tempdir().unwrap(),
            der: CertificateDer::from(Vec::new()),
        };
        cert.renewed()
    }

    /// A new certificate and key in the same files.
    fn renewed(mut self) -> Self {
        let (cert_pem, key_pem, der) = make_cert();
        write_replacing(&self.cert_file(), &cert_pem);
        write_replacing(&self.key_file(), &key_pem);
        self.der = der;
        self
    }

    fn cert_file(&self) -> PathBuf {
        self.dir.path().join("chain.pem")
    }

    fn key_file(&self) -> PathBuf {
        self.dir.path().join("key.pem")
    }

    fn tls(&self) -> Arc<ServerTls> {
        Arc::new(ServerTls::load(&self.cert_file(), &self.key_file()).unwrap())
    }

    fn options(&self) -> ServerOptions {
        ServerOptions {
            tls: Some(self.tls()),
            ..ServerOptions::default()
        }
    }

    /// A client that trusts this certificate only.
    fn connector(&self) -> TlsConnector {
        connector_trusting(&self.der)
    }
}

/// PEM certificate, PEM key, DER certificate.
fn make_cert() -> (String, String, CertificateDer<'static>) {
    let made =
        rcgen::generate_simple_self_signed(vec!["localhost".to_owned(), "127.0.0.1".to_owned()])
            .unwrap();
    (
        made.cert.pem(),
        made.signing_key.serialize_pem(),
        made.cert.der().clone(),
    )
}

/// Writes a file the way a renewal does: a new file renamed over the old one.
fn write_replacing(path: &Path, text: &str) {
    let temp = path.with_extension("tmp");
    std::fs::write(&temp, text).unwrap();
    std::fs::rename(&temp, path).unwrap();
}

fn connector_trusting(der: &CertificateDer<'static>) -> TlsConnector {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(der.clone()).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    TlsConnector::from(Arc::new(config))
}

async fn tls_connect(
    server: &TestServer,
    connector: &TlsConnector,
) -> std::io::Result<TlsStream<TcpStream>> {
    let stream = TcpStream::connect(server.addr).await?;
    let name = ServerName::try_from("localhost").unwrap();
    connector.connect(name, stream).await
}

/// A binary connection over TLS, after SASL PLAIN (`Some` credentials) or NOSASL.
async fn binary_over_tls(
    server: &TestServer,
    connector: &TlsConnector,
    plain: Option<(&str, &str)>,
) -> Connection<TlsStream<TcpStream>> {
    let stream = tls_connect(server, connector).await.unwrap();
    let mut conn = Connection::new(stream, Framing::Raw, 1 << 20);
    if let Some((user, password)) = plain {
        sasl::start_plain(&mut conn, user, password).await.unwrap();
    }
    conn
}

/// OpenSession on a raw connection; the configuration the echo service answers with.
async fn open_session_on<S>(conn: &mut Connection<S>, user: &str) -> TOpenSessionResp
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let call = codec::encode_call("OpenSession", 1, &open_session_req(user));
    conn.write_message(&call, &[]).await.unwrap();
    let reply = conn.read_message().await.unwrap().expect("a reply");
    let header = codec::read_header(&reply).unwrap();
    assert_eq!((header.name.as_str(), header.seqid), ("OpenSession", 1));
    codec::decode_result_body(&reply[header.body_offset..]).unwrap()
}

#[tokio::test]
async fn tls_binary_port_serves_sasl_plain_and_nosasl_inside_tls() {
    let cert = TestCert::new();
    let mut server = TestServer::binary(cert.options()).await;
    let connector = cert.connector();

    let mut conn = binary_over_tls(&server, &connector, Some(("alice", "pw"))).await;
    let conf = open_session_on(&mut conn, "alice")
        .await
        .configuration
        .unwrap();
    assert_eq!(conf["user"], "alice");
    assert_eq!(conf["transport"], transport_name(Transport::Sasl));

    let mut conn = binary_over_tls(&server, &connector, None).await;
    let conf = open_session_on(&mut conn, "bob")
        .await
        .configuration
        .unwrap();
    assert_eq!(conf["transport"], transport_name(Transport::NoSasl));
    drop(conn);
    server.stop().await;
}

#[tokio::test]
async fn tls_binary_port_tells_plaintext_clients_tls_is_required_and_keeps_serving() {
    let cert = TestCert::new();
    let mut server = TestServer::binary(cert.options()).await;
    let connector = cert.connector();
    // A live TLS session across the refusals.
    let mut live = binary_over_tls(&server, &connector, Some(("alice", "pw"))).await;
    open_session_on(&mut live, "alice").await;

    // SASL in plaintext: a SASL ERROR frame saying why (beeline: "Peer indicated failure").
    let err = Client::connect(&server.address(), plain("alice", "pw"))
        .await
        .unwrap_err();
    match &err {
        WireError::Sasl(message) => assert!(message.contains("requires TLS"), "{message}"),
        other => panic!("expected a SASL refusal, got {other:?}"),
    }
    // NOSASL in plaintext: a Thrift exception for its first call.
    let mut client = Client::connect(&server.address(), ClientAuth::NoSasl)
        .await
        .unwrap();
    let err = client
        .call::<_, TOpenSessionResp>("OpenSession", &open_session_req("bob"))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("requires TLS"), "{err}");
    // Bytes of no protocol at all: closed without an answer.
    let mut junk = TcpStream::connect(server.addr).await.unwrap();
    junk.write_all(b"\x00\x00\x7f\xff\xff\xffGARBAGE")
        .await
        .ok();
    junk.write_all(&[0xAB; 64]).await.ok();
    let mut rest = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), junk.read_to_end(&mut rest)).await;

    open_session_on(&mut live, "alice").await;
    let mut fresh = binary_over_tls(&server, &connector, Some(("carol", "pw"))).await;
    open_session_on(&mut fresh, "carol").await;
    drop((live, fresh));
    server.stop().await;
}

#[tokio::test]
async fn tls_client_that_does_not_trust_the_certificate_fails_alone() {
    let cert = TestCert::new();
    let mut server = TestServer::binary(cert.options()).await;
    let (_, _, other_der) = make_cert();
    let err = tls_connect(&server, &connector_trusting(&other_der))
        .await
        .unwrap_err();
    assert!(
        err.to_string().to_lowercase().contains("certificate"),
        "{err}"
    );
    let mut conn = binary_over_tls(&server, &cert.connector(), Some(("alice", "pw"))).await;
    open_session_on(&mut conn, "alice").await;
    drop(conn);
    server.stop().await;
}

#[tokio::test]
async fn tls_client_on_a_plaintext_binary_port_fails_and_plaintext_clients_are_served() {
    let cert = TestCert::new();
    let mut server = TestServer::binary(ServerOptions::default()).await;
    assert!(tls_connect(&server, &cert.connector()).await.is_err());
    assert_fresh_clients_served(&server.address()).await;
    server.stop().await;
}

/// One HTTPS (or plain HTTP) request to `/cliservice` on a fresh connection.
async fn post<S>(stream: S, body: Bytes) -> (StatusCode, Bytes)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(conn);
    let req = Request::builder()
        .method(Method::POST)
        .uri("/cliservice")
        .header("host", "localhost")
        .header("authorization", "Basic YWxpY2U6cHc=") // alice:pw
        .body(Full::new(body))
        .unwrap();
    let resp = sender.send_request(req).await.unwrap();
    let status = resp.status();
    (status, resp.into_body().collect().await.unwrap().to_bytes())
}

#[tokio::test]
async fn tls_http_port_serves_https_and_answers_plain_http_with_400() {
    let cert = TestCert::new();
    let mut server = TestServer::start(Port::Http, cert.options()).await;
    let call = codec::encode_call("OpenSession", 7, &open_session_req("alice"));

    let stream = tls_connect(&server, &cert.connector()).await.unwrap();
    let (status, body) = post(stream, call.clone()).await;
    assert_eq!(status, StatusCode::OK);
    let header = codec::read_header(&body).unwrap();
    let resp: TOpenSessionResp = codec::decode_result_body(&body[header.body_offset..]).unwrap();
    assert_eq!(resp.configuration.unwrap()["user"], "alice");

    let plain = TcpStream::connect(server.addr).await.unwrap();
    let (status, body) = post(plain, call.clone()).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        String::from_utf8_lossy(&body).contains("speaks HTTPS"),
        "{body:?}"
    );

    let stream = tls_connect(&server, &cert.connector()).await.unwrap();
    assert_eq!(post(stream, call).await.0, StatusCode::OK);
    server.stop().await;
}

#[tokio::test]
async fn tls_certificate_is_read_again_when_its_files_change() {
    let cert = TestCert::new();
    let mut server = TestServer::binary(cert.options()).await;
    let first = cert.der.clone();
    let cert = cert.renewed();
    assert_ne!(first, cert.der);
    tokio::time::sleep(TLS_RELOAD_CHECK + Duration::from_millis(200)).await;
    // The first connection after the check finds the new certificate...
    let mut conn = binary_over_tls(&server, &cert.connector(), Some(("alice", "pw"))).await;
    open_session_on(&mut conn, "alice").await;
    // ...and a client trusting only the old one no longer connects.
    assert!(tls_connect(&server, &connector_trusting(&first))
        .await
        .is_err());

    // A pair that does not load (a key of another certificate) leaves the last good one.
    let (_, other_key, _) = make_cert();
    write_replacing(&cert.key_file(), &other_key);
    tokio::time::sleep(TLS_RELOAD_CHECK + Duration::from_millis(200)).await;
    let mut conn = binary_over_tls(&server, &cert.connector(), Some(("alice", "pw"))).await;
    open_session_on(&mut conn, "alice").await;
    drop(conn);
    server.stop().await;
}

#[test]
fn tls_load_errors_name_the_file_and_what_is_wrong_and_never_the_key() {
    let cert = TestCert::new();
    let dir = cert.dir.path();
    let load = |c: &Path, k: &Path| ServerTls::load(c, k).unwrap_err();
    let missing = dir.join("missing.pem");
    let err = load(&missing, &cert.key_file());
    assert!(
        err.contains("certificate file")
            && err.contains("missing.pem")
            && err.contains("does not exist"),
        "{err}"
    );
    let err = load(&cert.cert_file(), &missing);
    assert!(
        err.contains("key file") && err.contains("does not exist"),
        "{err}"
    );

    // Unreadable (a directory: root reads any file).
    let err = load(&cert.cert_file(), dir);
    assert!(
        err.contains("key file") && err.contains("cannot be read"),
        "{err}"
    );

    let empty = dir.join("empty.pem");
    std::fs::write(&empty, "").unwrap();
    assert!(load(&empty, &cert.key_file()).contains("is empty"));

    // The files swapped: the certificate file holds no certificate, the key file a certificate.
    let err = load(&cert.key_file(), &cert.key_file());
    assert!(err.contains("holds no PEM certificate"), "{err}");
    let err = load(&cert.cert_file(), &cert.cert_file());
    assert!(
        err.contains("holds no PEM private key") && err.contains("holds a certificate"),
        "{err}"
    );

    let encrypted = dir.join("encrypted.pem");
    std::fs::write(
        &encrypted,
        "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIBvTBXBgkqhkiG9w0BBQ0wSjApBgkqhkiG9w0BBQwwHAQI\n-----END ENCRYPTED PRIVATE KEY-----\n",
    )
    .unwrap();
    let err = load(&cert.cert_file(), &encrypted);
    assert!(err.contains("encrypted"), "{err}");
    assert!(!err.contains("MIIB"), "key material in {err}");

    let (_, other_key, _) = make_cert();
    let other = dir.join("other-key.pem");
    std::fs::write(&other, &other_key).unwrap();
    let err = load(&cert.cert_file(), &other);
    assert!(
        err.contains("is not the private key of the first certificate"),
        "{err}"
    );
    let body: String = other_key.lines().nth(1).unwrap().to_owned();
    assert!(!err.contains(&body), "key material in {err}");

    let truncated = dir.join("truncated.pem");
    std::fs::write(&truncated, &other_key[..other_key.len() / 2]).unwrap();
    let err = load(&cert.cert_file(), &truncated);
    assert!(
        err.contains("key file") && err.contains("truncated.pem"),
        "{err}"
    );
    assert!(!err.contains(&body), "key material in {err}");
}
