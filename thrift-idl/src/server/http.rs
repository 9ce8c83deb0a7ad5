//! The HTTP port: one TBinaryProtocol message per POST body and per reply, authenticated by
//! HTTP Basic (or, with Kerberos, SPNEGO: `Authorization: Negotiate`, and Basic too if the
//! options say so) or by the auth cookie set on an earlier reply; HTTPS when the options
//! hold a [`ServerTls`].

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use bytes::Bytes;
use http_body_util::{BodyExt, Full, LengthLimitError, Limited};
use hyper::body::Incoming;
use hyper::header::{self, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::Instrument;

use super::client_address::client_address;
use super::cookie::CookieSigner;
use super::{accept, next_connection_id, ConnectionObserver, ServerOptions, ServerTls};
use crate::auth::Authenticator;
use crate::codec;
use crate::dispatch::dispatch;
use crate::kerberos::{accept_in_one_step, kerberos_required, short_name, KerberosAcceptor};
use crate::service::{CallContext, CliService, Transport};

/// The content type of Thrift over HTTP.
const THRIFT_CONTENT_TYPE: &str = "application/x-thrift";

/// Serves Thrift over HTTP/1.1 on `options.http_path` until `shutdown` is cancelled, then
/// lets requests in flight finish and waits for the connections to close. HTTPS with
/// `options.tls`.
pub async fn serve_http<S: CliService>(
    listener: TcpListener,
    service: Arc<S>,
    options: Arc<ServerOptions>,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    let endpoint = Arc::new(Endpoint {
        path: format!("/{}", options.http_path.trim_matches('/')),
        cookies: CookieSigner::for_secret(options.cookie_secret.as_deref()),
        service,
        options,
    });
    let observer = endpoint.options.http_connections.clone();
    let tls = endpoint.options.tls.clone();
    serve_observed(
        listener,
        tls,
        shutdown,
        "thrift",
        observer,
        move |req, peer| {
            let endpoint = endpoint.clone();
            async move { endpoint.handle(req, peer).await }
        },
    )
    .await;
    Ok(())
}

/// Serves HTTP/1.1 on `listener`, answering each request with `respond(request, peer)`, until
/// `shutdown` is cancelled; then lets requests in flight finish and waits for the
/// connections to close. Thrift over HTTP runs on it, and so does the gateway's metrics
/// endpoint (`endpoint` names which in the connection's span).
pub async fn serve_http1<R, F>(
    listener: TcpListener,
    shutdown: CancellationToken,
    endpoint: &'static str,
    respond: R,
) where
    R: Fn(Request<Incoming>, SocketAddr) -> F + Clone + Send + Sync + 'static,
    F: Future<Output = Response<Full<Bytes>>> + Send + 'static,
{
    serve_observed(listener, None, shutdown, endpoint, None, respond).await
}

/// [`serve_http1`], HTTPS when `tls` is given (the gateway's REST API).
pub async fn serve_http1_tls<R, F>(
    listener: TcpListener,
    tls: Option<Arc<ServerTls>>,
    shutdown: CancellationToken,
    endpoint: &'static str,
    respond: R,
) where
    R: Fn(Request<Incoming>, SocketAddr) -> F + Clone + Send + Sync + 'static,
    F: Future<Output = Response<Full<Bytes>>> + Send + 'static,
{
    serve_observed(listener, tls, shutdown, endpoint, None, respond).await
}

/// [`serve_http1_tls`], telling `observer` (if any) of each connection's start and end.
async fn serve_observed<R, F>(
    listener: TcpListener,
    tls: Option<Arc<ServerTls>>,
    shutdown: CancellationToken,
    endpoint: &'static str,
    observer: Option<Arc<dyn ConnectionObserver>>,
    respond: R,
) where
    R: Fn(Request<Incoming>, SocketAddr) -> F + Clone + Send + Sync + 'static,
    F: Future<Output = Response<Full<Bytes>>> + Send + 'static,
{
    let tracker = TaskTracker::new();
    while let Some((stream, peer)) = accept(&listener, &shutdown).await {
        let respond = respond.clone();
        let shutdown = shutdown.clone();
        let span = tracing::info_span!("http_connection", endpoint, %peer);
        let observed = observer.clone().map(Observed::new);
        // Two tasks of their own, so that a plaintext connection's task holds no TLS state.
        match &tls {
            None => {
                tracker.spawn(
                    async move {
                        // Ends the connection for the observer however the task ends.
                        let _observed = observed;
                        serve_connection(stream, peer, respond, shutdown).await
                    }
                    .instrument(span),
                );
            }
            Some(tls) => {
                let tls = tls.clone();
                tracker.spawn(
                    async move {
                        let _observed = observed;
                        if let Some(stream) = tls.accept(stream, plaintext_answer, &shutdown).await
                        {
                            serve_connection(stream, peer, respond, shutdown).await
                        }
                    }
                    .instrument(span),
                );
            }
        }
    }
    tracker.close();
    tracker.wait().await;
}

/// Serves HTTP/1.1 on one connection until it closes, or until `shutdown` and the end of the
/// request in flight.
async fn serve_connection<T, R, F>(
    stream: T,
    peer: SocketAddr,
    respond: R,
    shutdown: CancellationToken,
) where
    T: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    R: Fn(Request<Incoming>, SocketAddr) -> F + Clone + Send + Sync + 'static,
    F: Future<Output = Response<Full<Bytes>>> + Send + 'static,
{
    let handler = service_fn(move |req| {
        let response = respond(req, peer);
        async move { Ok::<_, Infallible>(response.await) }
    });
    let conn = http1::Builder::new().serve_connection(TokioIo::new(stream), handler);
    let mut conn = std::pin::pin!(conn);
    let result = tokio::select! {
        result = conn.as_mut() => result,
        _ = shutdown.cancelled() => {
            conn.as_mut().graceful_shutdown();
            conn.await
        }
    };
    match result {
        Ok(()) => tracing::debug!("connection closed"),
        Err(e) if e.is_incomplete_message() => tracing::debug!("client hung up"),
        // Not HTTP at all: most likely a TLS client on a port without TLS (hyper answers 400).
        Err(e) if e.is_parse() => {
            tracing::info!(error = %e, "a request that is not HTTP/1.1 (a TLS client on a port without TLS?); closed")
        }
        Err(e) => tracing::debug!(error = %e, "connection failed"),
    }
}

/// What a plaintext client on an HTTPS port is told: a 400 it can show (as nginx answers).
fn plaintext_answer(_first_byte: u8) -> Option<Vec<u8>> {
    const BODY: &str = "this port speaks HTTPS: connect with https:// (JDBC: ;ssl=true)\n";
    Some(
        format!(
            "HTTP/1.1 400 Bad Request\r\ncontent-type: text/plain; charset=utf-8\r\n\
             content-length: {}\r\nconnection: close\r\n\r\n{BODY}",
            BODY.len()
        )
        .into_bytes(),
    )
}

/// A connection an observer was told of; tells it of the end when dropped.
struct Observed(Arc<dyn ConnectionObserver>);

impl Observed {
    fn new(observer: Arc<dyn ConnectionObserver>) -> Self {
        observer.opened();
        Self(observer)
    }
}

impl Drop for Observed {
    fn drop(&mut self) {
        self.0.closed();
    }
}

/// The state every request of an HTTP server shares.
struct Endpoint<S> {
    /// `options.http_path` with one leading slash.
    path: String,
    service: Arc<S>,
    options: Arc<ServerOptions>,
    cookies: CookieSigner,
}

impl<S: CliService> Endpoint<S> {
    async fn handle(&self, req: Request<Incoming>, peer: SocketAddr) -> Response<Full<Bytes>> {
        let peer = client_address(req.headers(), self.options.client_ip_header.as_ref(), peer);
        // HiveServer2 maps its servlet at `/cliservice/*`: PyHive posts to `/cliservice/`.
        if req.uri().path().trim_end_matches('/') != self.path {
            return text(
                StatusCode::NOT_FOUND,
                format!(
                    "no such endpoint; Thrift over HTTP is served at {}",
                    self.path
                ),
            );
        }
        if req.method() != Method::POST {
            return method_not_allowed("POST", "Thrift over HTTP takes POST requests".into());
        }
        let Authenticated {
            user,
            set_cookie,
            negotiate_reply,
        } = match self.authenticate(&req) {
            Ok(authenticated) => authenticated,
            Err(message) => {
                // A client's first request often carries no credentials (SPNEGO clients wait
                // for the challenge): only a refusal of credentials is news.
                if req.headers().contains_key(header::AUTHORIZATION) {
                    tracing::info!(%message, "HTTP authentication refused");
                } else {
                    tracing::debug!(%message, "HTTP request without credentials");
                }
                return self.credentials().refuse(message);
            }
        };
        let max = self.options.max_message_size;
        let declared = req
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
        if declared.is_some_and(|len| len > max as u64) {
            return too_large(max);
        }
        let body = match Limited::new(req.into_body(), max).collect().await {
            Ok(body) => body.to_bytes(),
            Err(e) if e.downcast_ref::<LengthLimitError>().is_some() => return too_large(max),
            Err(e) => {
                tracing::debug!(error = %e, "reading a request body failed");
                return text(
                    StatusCode::BAD_REQUEST,
                    format!("cannot read the request body: {e}"),
                );
            }
        };
        match codec::message_len(&body, max) {
            Ok(Some(len)) if len == body.len() => {}
            Ok(Some(_)) => {
                return bad_body("the body holds more than one message; send one call per POST")
            }
            Ok(None) => return bad_body("the body ends in the middle of a Thrift message"),
            Err(e) => return bad_body(&e.to_string()),
        }
        let ctx = CallContext {
            connection_id: next_connection_id(),
            peer,
            transport: Transport::Http,
            user: Some(user),
            after_reply: Default::default(),
        };
        // The call runs to its end even if the client's connection closes meanwhile (hyper
        // then drops this handler): an HTTP session outlives its connections, as in
        // HiveServer2, and a call cut off half-way would leave the service's own connections
        // (a gateway's to its engine) out of step for the session's next call.
        let service = Arc::clone(&self.service);
        let call = tokio::spawn(async move {
            let reply = dispatch(&*service, &ctx, &body).await.to_bytes();
            ctx.after_reply.run().await;
            reply
        });
        let reply = match call.await {
            Ok(reply) => reply,
            Err(e) => {
                tracing::error!(error = %e, "a call failed without a reply");
                return text(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "the call failed without a reply; please report it".into(),
                );
            }
        };
        let mut response = Response::new(Full::new(reply));
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static(THRIFT_CONTENT_TYPE),
        );
        if let Some(cookie) = set_cookie.and_then(|c| HeaderValue::from_str(&c).ok()) {
            response.headers_mut().insert(header::SET_COOKIE, cookie);
        }
        // Kerberos' AP-REP, so that a client asking for mutual authentication gets it.
        let negotiate_reply = negotiate_reply
            .and_then(|token| HeaderValue::from_str(&format!("Negotiate {token}")).ok());
        if let Some(reply) = negotiate_reply {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, reply);
        }
        response
    }

    /// What the endpoint takes: SPNEGO tokens under Kerberos (for the HTTP acceptor's
    /// principals), Basic passwords without it or besides it.
    fn credentials(&self) -> HttpCredentials<'_> {
        let kerberos = self
            .options
            .http_kerberos
            .as_ref()
            .or(self.options.kerberos.as_ref());
        HttpCredentials::new(
            kerberos.map(|acceptor| acceptor.as_ref()),
            self.options.passwords_with_kerberos,
            self.options.authenticator.as_ref(),
        )
    }

    /// The user, from a valid cookie or else from Basic credentials or a SPNEGO token (then
    /// with a fresh cookie to set); `Err` with a message for the client.
    fn authenticate(&self, req: &Request<Incoming>) -> Result<Authenticated, String> {
        let cookies = req
            .headers()
            .get_all(header::COOKIE)
            .iter()
            .map(HeaderValue::as_bytes);
        if let Some(user) = self.cookies.user(cookies) {
            return Ok(Authenticated {
                user,
                set_cookie: None,
                negotiate_reply: None,
            });
        }
        let HttpUser {
            user,
            negotiate_reply,
        } = self
            .credentials()
            .authenticate(req.headers().get(header::AUTHORIZATION))?;
        let set_cookie = Some(self.cookies.set_cookie(&user));
        Ok(Authenticated {
            user,
            set_cookie,
            negotiate_reply: negotiate_reply.map(|token| STANDARD.encode(token)),
        })
    }
}

/// What an HTTP server (Thrift over HTTP, the gateway's REST API) takes as credentials in
/// `Authorization`: a Kerberos ticket in SPNEGO (`Negotiate`), a user and password
/// (`Basic`), or either, the client choosing.
#[derive(Clone, Copy)]
pub struct HttpCredentials<'a> {
    kerberos: Option<&'a dyn KerberosAcceptor>,
    /// Basic is taken (always without Kerberos).
    passwords: bool,
    authenticator: &'a dyn Authenticator,
}

/// Who an `Authorization` header authenticated.
#[derive(Debug, PartialEq, Eq)]
pub struct HttpUser {
    /// The user: Basic's, or the session user of the SPNEGO client's principal
    /// ([`KerberosAcceptor::session_user`]).
    pub user: String,
    /// SPNEGO's last token (Kerberos' AP-REP), for `WWW-Authenticate: Negotiate` on the
    /// reply.
    pub negotiate_reply: Option<Vec<u8>>,
}

impl<'a> HttpCredentials<'a> {
    /// SPNEGO with `kerberos`, Basic checked by `authenticator` without Kerberos or, with
    /// `passwords_with_kerberos`, besides it.
    pub fn new(
        kerberos: Option<&'a dyn KerberosAcceptor>,
        passwords_with_kerberos: bool,
        authenticator: &'a dyn Authenticator,
    ) -> Self {
        Self {
            kerberos,
            passwords: kerberos.is_none() || passwords_with_kerberos,
            authenticator,
        }
    }

    /// The user of an `Authorization` header; `Err` with a message for the client.
    pub fn authenticate(&self, authorization: Option<&HeaderValue>) -> Result<HttpUser, String> {
        let Some(authorization) = authorization else {
            return Err(self.required());
        };
        let scheme = authorization
            .to_str()
            .ok()
            .and_then(|value| value.split_whitespace().next())
            .unwrap_or_default();
        match self.kerberos {
            Some(kerberos) if !self.passwords => {
                let token = negotiate_token(authorization)
                    .map_err(|e| format!("{e}; {}", kerberos_required(kerberos.principal())))?;
                Self::spnego(kerberos, token)
            }
            Some(kerberos) if scheme.eq_ignore_ascii_case("negotiate") => {
                Self::spnego(kerberos, negotiate_token(authorization)?)
            }
            Some(_) if !scheme.eq_ignore_ascii_case("basic") => Err(format!(
                "unsupported authentication scheme '{scheme}': this server takes Negotiate \
                 (a Kerberos ticket in SPNEGO) or Basic (a user and password)"
            )),
            _ => {
                let (user, password) = basic_credentials(authorization)?;
                self.authenticator.authenticate(&user, &password)?;
                Ok(HttpUser {
                    user,
                    negotiate_reply: None,
                })
            }
        }
    }

    fn spnego(kerberos: &dyn KerberosAcceptor, token: Vec<u8>) -> Result<HttpUser, String> {
        let (principal, negotiate_reply) = accept_in_one_step(kerberos, &token)?;
        let user = kerberos.session_user(&principal)?;
        tracing::debug!(%principal, %user, "SPNEGO authenticated");
        Ok(HttpUser {
            user,
            negotiate_reply,
        })
    }

    /// What a request without credentials is told to send.
    fn required(&self) -> String {
        let ticket = self.kerberos.map(|kerberos| {
            format!(
                "a Kerberos ticket for {} with SPNEGO (Authorization: Negotiate; curl \
                 --negotiate -u : --service-name {})",
                kerberos.principal(),
                short_name(kerberos.principal())
            )
        });
        let password = self
            .passwords
            .then(|| "HTTP Basic credentials (curl -u user:password)".to_owned());
        let what: Vec<String> = ticket.into_iter().chain(password).collect();
        format!("authentication required: send {}", what.join(" or "))
    }

    /// 401 with `message` and a `WWW-Authenticate` challenge per scheme taken: `Negotiate`
    /// and `Basic realm="kumiho"`, each its own header, so that a client picks the one it
    /// speaks.
    pub fn refuse(&self, message: String) -> Response<Full<Bytes>> {
        let mut response = text(StatusCode::UNAUTHORIZED, message);
        let challenges = [
            self.kerberos.map(|_| "Negotiate"),
            self.passwords.then_some("Basic realm=\"kumiho\""),
        ];
        for challenge in challenges.into_iter().flatten() {
            response.headers_mut().append(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static(challenge),
            );
        }
        response
    }
}

/// Who a request is from, and what the reply must carry for it.
struct Authenticated {
    user: String,
    /// A fresh auth cookie, when the request authenticated with credentials.
    set_cookie: Option<String>,
    /// SPNEGO's last token, base64, for `WWW-Authenticate: Negotiate` on the reply.
    negotiate_reply: Option<String>,
}

/// Decodes `Negotiate base64(token)`; `Err` is a message for the client.
pub fn negotiate_token(value: &HeaderValue) -> Result<Vec<u8>, String> {
    let malformed =
        || "malformed Authorization header: expected Negotiate base64(token)".to_owned();
    let value = value.to_str().map_err(|_| malformed())?;
    let (scheme, encoded) = value.trim().split_once(' ').ok_or_else(malformed)?;
    if !scheme.eq_ignore_ascii_case("negotiate") {
        return Err(format!(
            "unsupported authentication scheme '{scheme}': this server takes Negotiate \
             (Kerberos SPNEGO)"
        ));
    }
    // Hive JDBC names its header `Authorization: Negotiate ` and gives it the token, so the
    // line reads `Authorization: Negotiate : TOKEN` (HiveServer2's lenient base64 decoder
    // skips the colon).
    let encoded = encoded.trim().trim_start_matches(':').trim_start();
    STANDARD.decode(encoded).map_err(|_| malformed())
}

/// Decodes `Basic base64(user:password)`; `Err` is a message for the client. The gateway's
/// REST API authenticates with it too.
pub fn basic_credentials(value: &HeaderValue) -> Result<(String, String), String> {
    let malformed =
        || "malformed Authorization header: expected Basic base64(user:password)".to_owned();
    let value = value.to_str().map_err(|_| malformed())?;
    let (scheme, encoded) = value.trim().split_once(' ').ok_or_else(malformed)?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return Err(format!(
            "unsupported authentication scheme '{scheme}': this server takes Basic"
        ));
    }
    let decoded = STANDARD.decode(encoded.trim()).map_err(|_| malformed())?;
    let decoded = String::from_utf8(decoded).map_err(|_| malformed())?;
    let (user, password) = decoded.split_once(':').ok_or_else(malformed)?;
    if user.is_empty() {
        return Err("the Basic credentials name no user".into());
    }
    Ok((user.to_owned(), password.to_owned()))
}

/// A plain-text answer: what an HTTP client (or a person with curl) is told went wrong.
pub fn text(status: StatusCode, message: String) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(message)));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

/// 405, with the methods the endpoint takes in `Allow`.
pub fn method_not_allowed(allowed: &'static str, message: String) -> Response<Full<Bytes>> {
    let mut response = text(StatusCode::METHOD_NOT_ALLOWED, message);
    response
        .headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static(allowed));
    response
}

fn too_large(max: usize) -> Response<Full<Bytes>> {
    text(
        StatusCode::PAYLOAD_TOO_LARGE,
        format!("the request body is over the server's limit of {max} bytes (max_message_size)"),
    )
}

fn bad_body(reason: &str) -> Response<Full<Bytes>> {
    text(
        StatusCode::BAD_REQUEST,
        format!("the request body is not one TBinaryProtocol message: {reason}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negotiate_tokens_decode_as_curl_and_hive_jdbc_send_them() {
        let token = |value: &str| negotiate_token(&HeaderValue::from_str(value).unwrap());
        assert_eq!(token("Negotiate YWJj").unwrap(), b"abc");
        assert_eq!(token("negotiate  YWJj ").unwrap(), b"abc");
        // Hive JDBC's `Authorization: Negotiate : TOKEN`.
        assert_eq!(token("Negotiate : YWJj").unwrap(), b"abc");
        assert!(token("Basic YWJj").unwrap_err().contains("takes Negotiate"));
        assert!(token("Negotiate !!!").unwrap_err().contains("malformed"));
        assert!(token("Negotiate").unwrap_err().contains("malformed"));
    }
}
