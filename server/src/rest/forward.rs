//! Passes a batch's cancel on to the gateway that runs the batch (its `kyuubiInstance`),
//! as Kyuubi redirects calls on another instance's batch: that gateway writes the batch's
//! record, so it alone stops it. Reads need no passing on: every gateway sharing the work
//! directory reads the record and the log there.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::header::{self, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use kumiho_thrift::server::text_response;
use tokio::net::TcpStream;

use super::{json, MAX_BODY};
use crate::batch::{BatchManager, Cancel};
use crate::errors::GatewayError;

/// Marks a call one gateway passed to another, so that it is never passed on again.
pub const FORWARDED: &str = "x-kumiho-forwarded";

/// How long to wait for the other gateway to accept the connection.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// How long to wait for its answer: a cancel there waits up to 15 s for the batch to stop.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(30);

/// `DELETE /batches/{id}`: cancelled here, or by the gateway that runs the batch, with the
/// caller's credentials; when that gateway does not answer, from here if this gateway
/// follows the batch's process, else 502 naming the gateway.
pub async fn cancel_batch<B>(
    batches: &BatchManager,
    id: &str,
    user: &str,
    proxy: Option<&str>,
    req: &Request<B>,
) -> Result<Response<Full<Bytes>>, GatewayError> {
    let instance = match batches.cancel(id, user, proxy, true).await? {
        Cancel::Answered(closed) => return Ok(json(&closed)),
        Cancel::RunsOn(instance) => instance,
    };
    if req.headers().contains_key(FORWARDED) {
        return Err(GatewayError::Internal(format!(
            "batch {id} was passed here by another gateway, but it runs on {instance}"
        )));
    }
    let target = req
        .uri()
        .path_and_query()
        .map_or(req.uri().path(), |p| p.as_str());
    let authorization = req.headers().get(header::AUTHORIZATION);
    let why = match send(&instance, Method::DELETE, target, authorization).await {
        Ok(answer) => return Ok(answer),
        Err(why) => why,
    };
    tracing::warn!(batch = id, %instance, error = %why, "the gateway running a batch did not take its cancel");
    match batches.cancel(id, user, proxy, false).await? {
        Cancel::Answered(closed) => Ok(json(&closed)),
        Cancel::RunsOn(_) => Ok(text_response(
            StatusCode::BAD_GATEWAY,
            format!(
                "batch {id} runs on the gateway at {instance}, which did not answer ({why}); \
                 if that gateway stopped, the next gateway started on its work directory takes \
                 its batches up: cancel it there\n"
            ),
        )),
    }
}

async fn send(
    instance: &str,
    method: Method,
    path_and_query: &str,
    authorization: Option<&HeaderValue>,
) -> Result<Response<Full<Bytes>>, String> {
    let stream = tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(instance))
        .await
        .map_err(|_| format!("no connection within {CONNECT_TIMEOUT:?}"))?
        .map_err(|e| format!("cannot connect: {e}"))?;
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| format!("HTTP handshake failed: {e}"))?;
    let connection = tokio::spawn(connection);
    let mut request = Request::builder()
        .method(method)
        .uri(path_and_query)
        .header(header::HOST, instance)
        .header(FORWARDED, "1");
    if let Some(authorization) = authorization {
        request = request.header(header::AUTHORIZATION, authorization);
    }
    let request = request
        .body(Full::new(Bytes::new()))
        .map_err(|e| format!("cannot build the request: {e}"))?;
    let answered = tokio::time::timeout(ANSWER_TIMEOUT, async {
        let response = sender
            .send_request(request)
            .await
            .map_err(|e| format!("no answer: {e}"))?;
        let (parts, body) = response.into_parts();
        let body = Limited::new(body, MAX_BODY)
            .collect()
            .await
            .map_err(|e| format!("its answer broke off: {e}"))?
            .to_bytes();
        Ok::<_, String>((parts, body))
    })
    .await
    .map_err(|_| format!("no answer within {ANSWER_TIMEOUT:?}"));
    connection.abort();
    let (parts, body) = answered??;
    let mut response = Response::new(Full::new(body));
    *response.status_mut() = parts.status;
    if let Some(content_type) = parts.headers.get(header::CONTENT_TYPE) {
        response
            .headers_mut()
            .insert(header::CONTENT_TYPE, content_type.clone());
    }
    Ok(response)
}
