//! The REST API (`/api/v1`, Kyuubi's port 10099): ping, batches ([`BatchManager`] calls), and sessions and operations (calls on the gateway's HiveServer2 service, [`sessions`]).
//!
//! | call | answer |
//! |---|---|
//! | `GET /api/v1/ping` | `pong` (no credentials needed: a liveness probe) |
//! | `POST /api/v1/batches` (JSON `BatchRequest`) | `Batch` |
//! | `GET /api/v1/batches?batchType=&batchState=&batchUser=&batchName=&createTime=&endTime=&from=&size=&desc=` | `{"from","total","batches"}` |
//! | `GET /api/v1/batches/{id}` | `Batch` |
//! | `GET /api/v1/batches/{id}/localLog?from=&size=` | `{"logRowSet","rowCount"}` |
//! | `DELETE /api/v1/batches/{id}` | `{"success","msg"}` |
//! | `POST /api/v1/sessions` (JSON `{"configs"}`) | `{"identifier","kyuubiInstance"}` |
//! | `GET /api/v1/sessions` | `[SessionData]`: the caller's sessions, whichever frontend opened them |
//! | `GET /api/v1/sessions/count` | `{"openSessionCount"}` |
//! | `GET /api/v1/sessions/execPool/statistic` | `{"execPoolSize","execPoolActiveCount","execPoolWorkQueueSize"}` |
//! | `GET /api/v1/sessions/{id}` | `KyuubiSessionEvent` |
//! | `DELETE /api/v1/sessions/{id}` | 200, closed |
//! | `GET /api/v1/sessions/{id}/info/{infoType}` | `{"infoType","infoValue"}` |
//! | `GET /api/v1/sessions/{id}/operations` | `[OperationData]`: its open operations |
//! | `POST /api/v1/sessions/{id}/operations/statement` (JSON `{"statement","runAsync","queryTimeout","confOverlay"}`) | `{"identifier"}` |
//! | `POST /api/v1/sessions/{id}/operations/{typeInfo,catalogs,schemas,tables,tableTypes,columns,functions,primaryKeys,crossReference}` | `{"identifier"}` |
//! | `GET /api/v1/operations/{id}/event` | `KyuubiOperationEvent` (`state`, `exception`, ...) |
//! | `GET /api/v1/operations/{id}/log?maxrows=&fetchorientation=` | `{"logRowSet","rowCount"}` |
//! | `GET /api/v1/operations/{id}/resultsetmetadata` | `{"columns"}` |
//! | `GET /api/v1/operations/{id}/rowset?maxrows=&fetchorientation=` | `{"rows","rowCount"}` |
//! | `PUT /api/v1/operations/{id}` (JSON `{"action": "CANCEL" or "CLOSE"}`) | 200 |
//! | `GET /api/v1/admin/sessions?users=&sessionType=` | `[SessionData]` of every user ([`admin`]: super-users) |
//! | `DELETE /api/v1/admin/sessions/{id}` | closed |
//! | `GET /api/v1/admin/operations?users=&sessionHandle=&sessionType=` | `[OperationData]` |
//! | `DELETE /api/v1/admin/operations/{id}` | closed |
//! | `GET /api/v1/admin/engine?type=&sharelevel=&subdomain=&hive.server2.proxy.user=&cluster=` | `[Engine]` |
//! | `DELETE /api/v1/admin/engine?...` | the engine deregistered and stopped |
//! | `GET /api/v1/admin/server` | `[ServerData]`: the gateways registered in the HA namespace ([`servers`]) |
//! | `POST /api/v1/admin/refresh/{hadoop_conf,user_defaults_conf,kubernetes_conf}` | the cluster configs reread ([`refresh`]); `unlimited_users`, `deny_users`, `deny_ips`: 501 |
//!
//! Every other call needs HTTP Basic credentials, checked by the gateway's authenticator (the
//! one the Thrift HTTP frontend uses), or under KERBEROS a SPNEGO token (either, the client
//! choosing, under KERBEROS,FILE and KERBEROS,LDAP); `proxyUser` (or
//! `hive.server2.proxy.user`) in the query acts as another user under the cluster's
//! super-user rules. Errors are plain text saying what to fix, with the status saying whose
//! fault: 400 bad input, 401 credentials, 403 not yours, 404 unknown, 405 method, 413 a
//! body over [`MAX_BODY`] (refused from its `Content-Length` before it is read, and cut off
//! if it streams past it), 415 not JSON; 502 a lost engine or a launch still running, as the
//! HiveServer2 service reports them.
//!
//! `POST /batches` also takes Kyuubi's upload form (`multipart/form-data`: `batchRequest`,
//! `resourceFile`), up to [`MAX_UPLOAD`], the file streamed to disk ([`multipart`]).

use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, LengthLimitError, Limited};
use hyper::body::Body;
use hyper::header::{self, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use kumiho_engine_launcher::batch::BatchType;
use kumiho_thrift::auth::Authenticator;
use kumiho_thrift::kerberos::KerberosAcceptor;
use kumiho_thrift::server::{
    client_address, method_not_allowed, serve_http1_tls, text_response, HttpCredentials, ServerTls,
};
use serde::Serialize;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::batch::{BatchFilter, BatchManager, BatchRequest, BatchState, StagedResource};
use crate::errors::GatewayError;
use multipart::UploadError;
use refresh::Refresh;
use sessions::{Caller, MetadataKind, OperationPart, SessionsApi};

mod admin;
mod forward;
mod multipart;
mod refresh;
mod results;
pub mod servers;
pub mod sessions;

/// The API's base path (Kyuubi's).
pub const BASE_PATH: &str = "/api/v1";

/// Largest request body accepted: a `BatchRequest` is a few kilobytes.
pub const MAX_BODY: usize = 1024 * 1024;

/// Largest multipart upload (the resource file and the request), streamed to disk.
pub const MAX_UPLOAD: u64 = 512 * 1024 * 1024;

/// Batches per page when `size` is not given (Kyuubi's default).
const DEFAULT_PAGE: usize = 100;

/// The REST API's shared state.
pub struct RestApi {
    pub batches: Arc<BatchManager>,
    pub authenticator: Arc<dyn Authenticator>,
    /// Authentication KERBEROS: SPNEGO (`Authorization: Negotiate`) instead of Basic.
    pub kerberos: Option<Arc<dyn KerberosAcceptor>>,
    /// With `kerberos`, Basic too (KERBEROS,FILE; KERBEROS,LDAP), each client choosing.
    pub passwords_with_kerberos: bool,
    /// The header a proxy in front writes each client's address into (`client-ip-header`);
    /// `None`: the TCP peer is the client.
    pub client_ip_header: Option<hyper::header::HeaderName>,
}

/// Serves the API on `listener` until `shutdown`; sessions and operations when `sessions`
/// is given; HTTPS with `tls`.
pub async fn serve(
    listener: TcpListener,
    api: Arc<RestApi>,
    sessions: Option<Arc<SessionsApi>>,
    tls: Option<Arc<ServerTls>>,
    shutdown: CancellationToken,
) {
    serve_http1_tls(listener, tls, shutdown, "rest", move |req, peer| {
        let api = api.clone();
        let sessions = sessions.clone();
        async move { api.respond_with(sessions.as_deref(), req, peer).await }
    })
    .await;
}

/// Where the API listens, for logs.
pub fn describe(addr: SocketAddr) -> String {
    format!("http://{addr}{BASE_PATH}")
}

/// A route of the API.
#[derive(Debug, PartialEq)]
enum Route<'a> {
    Ping,
    Batches,
    Batch(&'a str),
    BatchLog(&'a str),
    Sessions,
    SessionCount,
    Session(&'a str),
    SessionInfo(&'a str, &'a str),
    SessionOperations(&'a str),
    Statement(&'a str),
    Metadata(&'a str, MetadataKind),
    Operation(&'a str),
    OperationRead(&'a str, OperationPart),
    ExecPool,
    AdminSessions,
    AdminSession(&'a str),
    AdminOperations,
    AdminOperation(&'a str),
    AdminEngine,
    AdminServers,
    AdminRefresh(Refresh),
    AdminBatchCount,
}

/// The route of `path`, or `None` (404).
fn route(path: &str) -> Option<Route<'_>> {
    let rest = path.strip_prefix(BASE_PATH)?.strip_prefix('/')?;
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    let parts: Vec<&str> = rest.split('/').collect();
    match parts.as_slice() {
        ["ping"] => Some(Route::Ping),
        ["batches"] => Some(Route::Batches),
        ["batches", id] if !id.is_empty() => Some(Route::Batch(id)),
        ["batches", id, "localLog"] if !id.is_empty() => Some(Route::BatchLog(id)),
        ["sessions"] => Some(Route::Sessions),
        ["sessions", "count"] => Some(Route::SessionCount),
        ["sessions", "execPool", "statistic"] => Some(Route::ExecPool),
        ["sessions", id] if !id.is_empty() => Some(Route::Session(id)),
        ["sessions", id, "info", info] if !id.is_empty() => Some(Route::SessionInfo(id, info)),
        ["sessions", id, "operations"] if !id.is_empty() => Some(Route::SessionOperations(id)),
        ["sessions", id, "operations", "statement"] if !id.is_empty() => Some(Route::Statement(id)),
        ["sessions", id, "operations", kind] if !id.is_empty() => {
            MetadataKind::parse(kind).map(|kind| Route::Metadata(id, kind))
        }
        ["operations", id] if !id.is_empty() => Some(Route::Operation(id)),
        ["operations", id, part] if !id.is_empty() => {
            OperationPart::parse(part).map(|part| Route::OperationRead(id, part))
        }
        ["admin", "sessions"] => Some(Route::AdminSessions),
        ["admin", "sessions", id] if !id.is_empty() => Some(Route::AdminSession(id)),
        ["admin", "operations"] => Some(Route::AdminOperations),
        ["admin", "operations", id] if !id.is_empty() => Some(Route::AdminOperation(id)),
        ["admin", "engine"] => Some(Route::AdminEngine),
        ["admin", "server"] => Some(Route::AdminServers),
        ["admin", "refresh", what] => Refresh::parse(what).map(Route::AdminRefresh),
        ["admin", "batch", "count"] => Some(Route::AdminBatchCount),
        _ => None,
    }
}

impl RestApi {
    /// The answer to `req` without sessions and operations.
    #[cfg(test)]
    async fn respond<B>(&self, req: Request<B>, peer: SocketAddr) -> Response<Full<Bytes>>
    where
        B: Body<Data = Bytes> + Send + 'static,
        B::Error: std::fmt::Display + Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        self.respond_with(None, req, peer).await
    }

    async fn respond_with<B>(
        &self,
        sessions: Option<&SessionsApi>,
        req: Request<B>,
        peer: SocketAddr,
    ) -> Response<Full<Bytes>>
    where
        B: Body<Data = Bytes> + Send + 'static,
        B::Error: std::fmt::Display + Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let peer = client_address(req.headers(), self.client_ip_header.as_ref(), peer);
        let path = req.uri().path().to_owned();
        let Some(route) = route(&path) else {
            return text_response(
                StatusCode::NOT_FOUND,
                format!(
                    "no such endpoint {path}; the REST API serves {BASE_PATH}/ping, {BASE_PATH}/batches, {BASE_PATH}/sessions, {BASE_PATH}/operations and {BASE_PATH}/admin\n"
                ),
            );
        };
        let allowed = match route {
            Route::Ping
            | Route::BatchLog(_)
            | Route::SessionCount
            | Route::SessionInfo(..)
            | Route::SessionOperations(_)
            | Route::OperationRead(..)
            | Route::ExecPool
            | Route::AdminSessions
            | Route::AdminOperations
            | Route::AdminServers
            | Route::AdminBatchCount => "GET",
            Route::AdminRefresh(_) => "POST",
            Route::AdminSession(_) | Route::AdminOperation(_) => "DELETE",
            Route::AdminEngine => "GET, DELETE",
            Route::Batches | Route::Sessions => "GET, POST",
            Route::Batch(_) | Route::Session(_) => "GET, DELETE",
            Route::Statement(_) | Route::Metadata(..) => "POST",
            Route::Operation(_) => "PUT",
        };
        let method = req.method().clone();
        if !allowed.split(", ").any(|m| m == method.as_str()) {
            return method_not_allowed(allowed, format!("{path} takes {allowed}, not {method}\n"));
        }
        if route == Route::Ping {
            return text_response(StatusCode::OK, "pong".to_owned());
        }
        let credentials = self.credentials();
        let user = match credentials.authenticate(req.headers().get(header::AUTHORIZATION)) {
            Ok(authenticated) => authenticated.user,
            Err(message) => return credentials.refuse(format!("{message}\n")),
        };
        let query = Query::parse(req.uri().query().unwrap_or(""));
        let proxy = query.proxy_user();
        let batch_route = matches!(
            route,
            Route::Batches | Route::Batch(_) | Route::BatchLog(_) | Route::AdminBatchCount
        );
        if !batch_route {
            let Some(sessions) = sessions else {
                return error_response(&GatewayError::NotFound(format!(
                    "{path}: this gateway serves no REST sessions"
                )));
            };
            let caller = Caller {
                user: &user,
                proxy,
                peer,
            };
            return self
                .respond_sessions(sessions, route, method, &caller, &query, req)
                .await
                .unwrap_or_else(|e| error_response(&e));
        }
        let result = match (route, method) {
            (Route::Batches, Method::POST) => {
                tracing::debug!(%peer, %user, "batch submission");
                match self.post_batch(req, &user, peer.ip(), proxy).await {
                    Ok(result) => result,
                    Err(response) => return *response,
                }
            }
            (Route::Batches, _) => query
                .filter()
                .map(|filter| json(&self.batches.list(&filter, &user, proxy))),
            (Route::Batch(id), Method::DELETE) => {
                forward::cancel_batch(&self.batches, id, &user, proxy, &req).await
            }
            (Route::Batch(id), _) => self.batches.get(id, &user, proxy).map(|b| json(&b)),
            (Route::AdminBatchCount, _) => query.filter().and_then(|mut filter| {
                // Kyuubi's default: a count without batchType is of SPARK batches.
                filter.batch_type.get_or_insert(BatchType::Spark);
                let count = self.batches.count(&filter, &user)?;
                Ok(json(&serde_json::json!({ "count": count })))
            }),
            (Route::BatchLog(id), _) => query.log_page().and_then(|(from, size)| {
                self.batches
                    .local_log(id, &user, proxy, from, size)
                    .map(|rows| json(&rows))
            }),
            _ => unreachable!("ping is answered above, sessions and operations below"),
        };
        result.unwrap_or_else(|e| error_response(&e))
    }

    /// The calls of sessions and operations ([`sessions`]).
    async fn respond_sessions<B>(
        &self,
        sessions: &SessionsApi,
        route: Route<'_>,
        method: Method,
        caller: &Caller<'_>,
        query: &Query,
        req: Request<B>,
    ) -> Result<Response<Full<Bytes>>, GatewayError>
    where
        B: Body<Data = Bytes> + Send + 'static,
        B::Error: std::fmt::Display + Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        // The refresh calls take no body: kyuubi-admin sends none, `curl -d ''` an empty form.
        let takes_body = !matches!(route, Route::AdminRefresh(_));
        let body = match method {
            Method::POST | Method::PUT if takes_body => {
                match read_json_body(req, "the request as application/json").await {
                    Ok(body) => body,
                    Err(response) => return Ok(*response),
                }
            }
            _ => Bytes::new(),
        };
        match (route, method) {
            (Route::Sessions, Method::POST) => {
                tracing::debug!(peer = %caller.peer, user = %caller.user, "REST session");
                sessions.open(caller, &body).await
            }
            (Route::Sessions, _) => Ok(sessions.list(caller)),
            (Route::SessionCount, _) => Ok(sessions.count()),
            (Route::Session(id), Method::DELETE) => sessions.close(id, caller).await,
            (Route::Session(id), _) => sessions.get(id, caller),
            (Route::SessionInfo(id, info), _) => sessions.info(id, info, caller).await,
            (Route::SessionOperations(id), _) => sessions.operations(id, caller).await,
            (Route::Statement(id), _) => sessions.statement(id, caller, &body).await,
            (Route::Metadata(id, kind), _) => sessions.metadata(id, kind, caller, &body).await,
            (Route::Operation(id), _) => sessions.act(id, caller, &body).await,
            (Route::OperationRead(id, part), _) => sessions.read(id, part, caller, query).await,
            (Route::ExecPool, _) => Ok(sessions.exec_pool()),
            (Route::AdminSessions, _) => sessions.admin(caller.user).list_sessions(query),
            (Route::AdminSession(id), _) => sessions.admin(caller.user).close_session(id).await,
            (Route::AdminOperations, _) => sessions.admin(caller.user).list_operations(query),
            (Route::AdminOperation(id), _) => sessions.admin(caller.user).close_operation(id).await,
            (Route::AdminEngine, Method::DELETE) => {
                sessions.admin(caller.user).stop_engines(query).await
            }
            (Route::AdminEngine, _) => sessions.admin(caller.user).list_engines(query).await,
            (Route::AdminServers, _) => sessions.admin(caller.user).list_servers().await,
            (Route::AdminRefresh(what), _) => sessions.admin(caller.user).refresh(what).await,
            _ => unreachable!("batch routes are answered by respond_with"),
        }
    }

    /// `POST /batches`: a JSON `BatchRequest`, or a form with the resource uploaded. `Err`
    /// is an answer about the body itself (413, 415, 400).
    async fn post_batch<B>(
        &self,
        req: Request<B>,
        user: &str,
        client: std::net::IpAddr,
        proxy: Option<&str>,
    ) -> Result<Result<Response<Full<Bytes>>, GatewayError>, Box<Response<Full<Bytes>>>>
    where
        B: Body<Data = Bytes> + Send + 'static,
        B::Error: std::fmt::Display + Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let content_type = content_type(&req).to_owned();
        if !content_type.to_ascii_lowercase().starts_with("multipart/") {
            let body = read_json_body(
                req,
                "the BatchRequest as application/json, or upload the resource with multipart/form-data",
            )
            .await?;
            return Ok(match BatchRequest::from_json(&body) {
                Ok(request) => self
                    .batches
                    .submit(user, client, request, proxy, None)
                    .map(|batch| json(&batch)),
                Err(message) => Err(GatewayError::BadRequest(message)),
            });
        }
        let Some(boundary) = multipart::boundary(&content_type) else {
            return Err(Box::new(text_response(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                format!("Content-Type `{content_type}` is not supported; upload with multipart/form-data (with its boundary) or post the BatchRequest as application/json\n"),
            )));
        };
        if declared_length(&req).is_some_and(|len| len > MAX_UPLOAD) {
            return Err(Box::new(upload_too_large()));
        }
        let staging = self
            .batches
            .staging_dir()
            .join(uuid::Uuid::new_v4().to_string());
        let upload = match multipart::read(req.into_body(), &boundary, &staging, MAX_UPLOAD).await {
            Ok(upload) => upload,
            Err(UploadError::TooLarge) => return Err(Box::new(upload_too_large())),
            Err(UploadError::Bad(message)) => {
                return Ok(Err(GatewayError::BadRequest(format!(
                    "the multipart form cannot be read: {message}"
                ))))
            }
            Err(UploadError::Io(e)) => {
                return Ok(Err(GatewayError::Internal(format!(
                    "cannot stage the uploaded resource under {}: {e}",
                    staging.display()
                ))))
            }
        };
        let request = match BatchRequest::from_json(&upload.request) {
            Ok(request) => request,
            Err(message) => {
                let _ = tokio::fs::remove_dir_all(&upload.staging).await;
                return Ok(Err(GatewayError::BadRequest(format!(
                    "part `batchRequest`: {message}"
                ))));
            }
        };
        let staged = StagedResource {
            file_name: upload
                .file
                .file_name()
                .map(|name| name.to_string_lossy().into_owned())
                .unwrap_or_default(),
            dir: upload.staging,
        };
        Ok(self
            .batches
            .submit(user, client, request, proxy, Some(staged))
            .map(|batch| json(&batch)))
    }

    /// What the API takes: Basic credentials checked by the authenticator, or under KERBEROS
    /// a SPNEGO token (the user its principal's short name; one token per request: the API
    /// sets no cookie), or both.
    fn credentials(&self) -> HttpCredentials<'_> {
        HttpCredentials::new(
            self.kerberos.as_deref(),
            self.passwords_with_kerberos,
            self.authenticator.as_ref(),
        )
    }
}

/// The request's `Content-Type` as sent (a multipart boundary is case-sensitive); empty when
/// there is none or it is not text.
fn content_type<B>(req: &Request<B>) -> &str {
    req.headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
}

/// The body of a JSON request (`what` says how to send it), at most [`MAX_BODY`] bytes: refused from
/// its `Content-Length` before a byte is read, and cut off when it streams past the cap.
async fn read_json_body<B>(req: Request<B>, what: &str) -> Result<Bytes, Box<Response<Full<Bytes>>>>
where
    B: Body<Data = Bytes> + Send + 'static,
    B::Error: std::fmt::Display + Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let content_type = content_type(&req).to_ascii_lowercase();
    if !content_type.is_empty() && !content_type.starts_with("application/json") {
        return Err(Box::new(text_response(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            format!("Content-Type `{content_type}` is not supported; post {what}\n"),
        )));
    }
    if declared_length(&req).is_some_and(|len| len > MAX_BODY as u64) {
        return Err(Box::new(too_large()));
    }
    match Limited::new(req.into_body(), MAX_BODY).collect().await {
        Ok(body) => Ok(body.to_bytes()),
        Err(e) if e.downcast_ref::<LengthLimitError>().is_some() => Err(Box::new(too_large())),
        Err(e) => Err(Box::new(text_response(
            StatusCode::BAD_REQUEST,
            format!("cannot read the request body: {e}\n"),
        ))),
    }
}

/// The body's declared `Content-Length`.
fn declared_length<B>(req: &Request<B>) -> Option<u64> {
    req.headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.trim().parse::<u64>().ok())
}

fn upload_too_large() -> Response<Full<Bytes>> {
    closing(text_response(
        StatusCode::PAYLOAD_TOO_LARGE,
        format!("the upload is over the REST API's limit of {MAX_UPLOAD} bytes; put the resource where spark-submit can read it (HDFS, S3, a shared path) and name it in `resource`\n"),
    ))
}

fn too_large() -> Response<Full<Bytes>> {
    closing(text_response(
        StatusCode::PAYLOAD_TOO_LARGE,
        format!("the request body is over the REST API's limit of {MAX_BODY} bytes; a BatchRequest names its resource by path or URL\n"),
    ))
}

/// `response` with `Connection: close`. A body refused unread leaves the connection unusable
/// (the rest of the body is still on its way), so the server closes it after the answer; the
/// header tells the client so, where a keep-alive client would send its next request on the
/// connection as it closed and see "Remote end closed connection without response".
fn closing(mut response: Response<Full<Bytes>>) -> Response<Full<Bytes>> {
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

/// A 200 answer with `value` as JSON.
fn json<T: Serialize>(value: &T) -> Response<Full<Bytes>> {
    match serde_json::to_vec(value) {
        Ok(bytes) => {
            let mut response = Response::new(Full::new(Bytes::from(bytes)));
            response.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            response
        }
        Err(e) => error_response(&GatewayError::Internal(format!("cannot encode JSON: {e}"))),
    }
}

/// The one mapping of gateway errors onto HTTP statuses.
fn error_response(error: &GatewayError) -> Response<Full<Bytes>> {
    let status = match error {
        GatewayError::BadRequest(_) => StatusCode::BAD_REQUEST,
        GatewayError::Refused(_) => StatusCode::FORBIDDEN,
        GatewayError::NotFound(_)
        | GatewayError::InvalidHandle { .. }
        | GatewayError::Closed { .. } => StatusCode::NOT_FOUND,
        GatewayError::RegistryUnavailable { .. } | GatewayError::Config(_) => {
            StatusCode::SERVICE_UNAVAILABLE
        }
        GatewayError::Upstream(_) => StatusCode::BAD_GATEWAY,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    };
    if error.is_clients_fault() {
        tracing::debug!(%error, "REST request refused");
    } else {
        tracing::warn!(%error, "REST request failed");
    }
    text_response(status, format!("{error}\n"))
}

/// Query parameters, percent-decoded; the last of a repeated name wins.
#[derive(Debug, Default)]
struct Query(Vec<(String, String)>);

impl Query {
    fn parse(query: &str) -> Query {
        Query(
            query
                .split('&')
                .filter(|pair| !pair.is_empty())
                .map(|pair| {
                    let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
                    (percent_decode(key), percent_decode(value))
                })
                .collect(),
        )
    }

    /// A parameter's value; blank counts as absent.
    fn get(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.trim())
            .filter(|v| !v.is_empty())
    }

    fn number<T: std::str::FromStr>(&self, key: &str, default: T) -> Result<T, GatewayError> {
        match self.get(key) {
            None => Ok(default),
            Some(text) => text.parse().map_err(|_| {
                GatewayError::BadRequest(format!(
                    "query parameter `{key}` `{text}` is not a valid number"
                ))
            }),
        }
    }

    /// The user to act as: `proxyUser`, else `hive.server2.proxy.user`.
    fn proxy_user(&self) -> Option<&str> {
        self.get("proxyUser")
            .or_else(|| self.get("hive.server2.proxy.user"))
    }

    /// `GET /batches`' filters and page.
    fn filter(&self) -> Result<BatchFilter, GatewayError> {
        let batch_type = match self.get("batchType") {
            None => None,
            Some(text) => Some(text.parse::<BatchType>().map_err(|_| {
                GatewayError::BadRequest(format!(
                    "batchType `{text}` is not supported; use SPARK or PYSPARK"
                ))
            })?),
        };
        let state = match self.get("batchState") {
            None => None,
            Some(text) => Some(BatchState::parse(text).map_err(GatewayError::BadRequest)?),
        };
        let create_time: i64 = self.number("createTime", 0)?;
        let end_time: i64 = self.number("endTime", 0)?;
        if create_time < 0 || end_time < 0 || (end_time != 0 && create_time > end_time) {
            return Err(GatewayError::BadRequest(format!(
                "invalid time range: createTime {create_time} and endTime {end_time} must be milliseconds since the epoch, createTime <= endTime (0: no bound)"
            )));
        }
        let from: i64 = self.number("from", 0)?;
        let size: i64 = self.number("size", DEFAULT_PAGE as i64)?;
        if from < 0 || size < 0 {
            return Err(GatewayError::BadRequest(format!(
                "`from` {from} and `size` {size} must not be negative"
            )));
        }
        let desc = match self.get("desc").map(str::to_ascii_lowercase).as_deref() {
            None | Some("false") => false,
            Some("true") => true,
            Some(other) => {
                return Err(GatewayError::BadRequest(format!(
                    "`desc` `{other}` must be true or false"
                )))
            }
        };
        Ok(BatchFilter {
            batch_type,
            state,
            user: self.get("batchUser").map(str::to_owned),
            name: self.get("batchName").map(str::to_owned),
            create_time: create_time as u64,
            end_time: end_time as u64,
            from: from as usize,
            size: size as usize,
            desc,
        })
    }

    /// `localLog`'s `from` (-1 by default: on from the last read) and `size` (100).
    fn log_page(&self) -> Result<(i64, usize), GatewayError> {
        let from: i64 = self.number("from", -1)?;
        let size: i64 = self.number("size", DEFAULT_PAGE as i64)?;
        if size < 0 {
            return Err(GatewayError::BadRequest(format!(
                "`size` {size} must not be negative"
            )));
        }
        Ok((from, size as usize))
    }
}

/// `%XX` and `+` decoded; malformed escapes are kept as written.
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                match std::str::from_utf8(&bytes[i + 1..i + 3])
                    .ok()
                    .and_then(|hex| u8::from_str_radix(hex, 16).ok())
                {
                    Some(byte) => {
                        out.push(byte);
                        i += 3;
                        continue;
                    }
                    None => out.push(b'%'),
                }
            }
            byte => out.push(byte),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests;
