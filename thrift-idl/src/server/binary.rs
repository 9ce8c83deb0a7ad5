//! The binary port: SASL PLAIN and NOSASL clients on one listener, told apart by the first
//! byte of each connection, or SASL GSSAPI clients when the options hold a Kerberos
//! acceptor (with PLAIN clients too when they say so, each client choosing); under TLS when
//! the options hold a [`ServerTls`] (TLS first, then SASL or NOSASL inside, as
//! HiveServer2's `hive.server2.use.SSL`).

use std::future::Future;
use std::net::SocketAddr;
use std::pin::{pin, Pin};
use std::sync::Arc;
use std::task::Poll;

use bytes::BytesMut;
use tokio::io::AsyncReadExt;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, UnixListener};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::Instrument;

use super::{accept, next_connection_id, Listener, ServerOptions, ServerTls};
use crate::codec::{self, exception_kind};
use crate::connection::{Connection, Framing};
use crate::dispatch::{dispatch, Outgoing};
use crate::error::WireError;
use crate::kerberos::{kerberos_or_password_required, kerberos_required};
use crate::sasl::{self, Identity};
use crate::service::{CallContext, CliService, Transport};

/// Serves the binary protocol until `shutdown` is cancelled, then waits for open
/// connections to finish the call they are serving and close.
///
/// The transport is detected from the first byte of each connection: SASL START (`0x01`),
/// or a TBinaryProtocol message (`0x80` strict, `0x00` old non-strict). A kind refused by
/// `options` gets a clear error (a SASL ERROR frame, or a Thrift exception) and is closed.
///
/// [`CliService::connection_closed`] runs once for every connection that reached the
/// service (NOSASL, or SASL after authentication), however it ends.
///
/// With `options.tls` every connection must open with a TLS handshake, inside which the
/// protocol is the same; a plaintext client is answered (a SASL ERROR frame, or a Thrift
/// exception for NOSASL) that the port requires TLS, and closed.
pub async fn serve_binary<S: CliService>(
    listener: TcpListener,
    service: Arc<S>,
    options: Arc<ServerOptions>,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    match options.tls.clone() {
        None => serve_listener(listener, service, options, shutdown).await,
        Some(tls) => serve_tls(listener, tls, service, options, shutdown).await,
    }
}

/// [`serve_binary`] on a local socket (in Linux's abstract namespace, see [`crate::stream`]),
/// for a gateway on the same host: the same protocol, authentication and options.
pub async fn serve_local<S: CliService>(
    listener: UnixListener,
    service: Arc<S>,
    options: Arc<ServerOptions>,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    serve_listener(listener, service, options, shutdown).await
}

async fn serve_listener<S: CliService, L: Listener>(
    listener: L,
    service: Arc<S>,
    options: Arc<ServerOptions>,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    let tracker = TaskTracker::new();
    while let Some((stream, peer)) = accept(&listener, &shutdown).await {
        let id = next_connection_id();
        let span = tracing::info_span!("connection", %peer, id);
        let handler = handle(
            stream,
            peer,
            id,
            service.clone(),
            options.clone(),
            shutdown.clone(),
        );
        tracker.spawn(handler.instrument(span));
    }
    tracker.close();
    tracker.wait().await;
    Ok(())
}

/// [`serve_listener`] with a TLS handshake on each connection before its first byte is read.
async fn serve_tls<S: CliService>(
    listener: TcpListener,
    tls: Arc<ServerTls>,
    service: Arc<S>,
    options: Arc<ServerOptions>,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    let tracker = TaskTracker::new();
    while let Some((stream, peer)) = accept(&listener, &shutdown).await {
        let id = next_connection_id();
        let span = tracing::info_span!("connection", %peer, id, tls = true);
        let (tls, service, options, shutdown) = (
            tls.clone(),
            service.clone(),
            options.clone(),
            shutdown.clone(),
        );
        let handler = async move {
            if let Some(stream) = tls.accept(stream, plaintext_answer, &shutdown).await {
                handle(stream, peer, id, service, options, shutdown).await;
            }
        };
        tracker.spawn(handler.instrument(span));
    }
    tracker.close();
    tracker.wait().await;
    Ok(())
}

/// What a plaintext client on the TLS binary port is told: a SASL ERROR frame for a SASL
/// client (Hive JDBC shows it as "Peer indicated failure: ..."), a Thrift exception for a
/// NOSASL one (the clients raise an exception reply whatever its name and seqid).
fn plaintext_answer(first_byte: u8) -> Option<Vec<u8>> {
    const MESSAGE: &str =
        "this port requires TLS: connect with TLS (JDBC: ;ssl=true;sslTrustStore=...; \
                           PyHive/impyla: use_ssl=True)";
    match first_byte {
        sasl::status::START => Some(sasl::encode_frame(sasl::status::ERROR, MESSAGE.as_bytes())),
        0x80 | 0x00 => Some(
            Outgoing::exception("", 0, exception_kind::PROTOCOL_ERROR, MESSAGE)
                .to_bytes()
                .to_vec(),
        ),
        _ => None,
    }
}

/// Runs one connection to its end and tells the service it ended.
async fn handle<S: CliService, T: AsyncRead + AsyncWrite + Unpin>(
    mut stream: T,
    peer: SocketAddr,
    id: u64,
    service: Arc<S>,
    options: Arc<ServerOptions>,
    shutdown: CancellationToken,
) {
    let mut first = BytesMut::with_capacity(1024);
    let read = tokio::select! {
        _ = shutdown.cancelled() => return,
        read = stream.read_buf(&mut first) => read,
    };
    match read {
        Ok(0) => return,
        Ok(_) => {}
        Err(e) => {
            tracing::debug!(error = %e, "connection failed before its first byte");
            return;
        }
    }
    let max = options.max_message_size;
    let mut ctx = CallContext {
        connection_id: id,
        peer,
        transport: Transport::NoSasl,
        user: None,
        after_reply: Default::default(),
    };
    let result = match first[0] {
        sasl::status::START => {
            let mut conn = Connection::with_buffered(stream, Framing::Raw, max, first);
            // GSSAPI with Kerberos, PLAIN with passwords (besides Kerberos if asked).
            let kerberos = options.kerberos.as_deref();
            let passwords = match kerberos {
                Some(_) => options.passwords_with_kerberos,
                None => options.allow_sasl,
            };
            let authenticated = if kerberos.is_some() || passwords {
                let passwords = passwords.then_some(options.authenticator.as_ref());
                match sasl::accept(&mut conn, kerberos, options.sasl_qop, passwords).await {
                    Ok(Identity::Principal {
                        principal,
                        user,
                        qop,
                    }) => {
                        tracing::debug!(%principal, %user, %qop, "SASL GSSAPI authenticated");
                        Ok(user)
                    }
                    Ok(Identity::User(user)) => {
                        tracing::debug!(%user, "SASL PLAIN authenticated");
                        Ok(user)
                    }
                    Err(e) => Err(e),
                }
            } else {
                Err(refuse_sasl(&mut conn).await)
            };
            match authenticated {
                Ok(user) => {
                    ctx.transport = Transport::Sasl;
                    ctx.user = Some(user);
                    let result = serve(&mut conn, &*service, &ctx, &shutdown).await;
                    service.connection_closed(&ctx).await;
                    result
                }
                Err(e) => Err(e),
            }
        }
        0x80 | 0x00 => {
            let mut conn = Connection::with_buffered(stream, Framing::Raw, max, first);
            if let Some(kerberos) = &options.kerberos {
                let message = if options.passwords_with_kerberos {
                    kerberos_or_password_required(kerberos.principal())
                } else {
                    kerberos_required(kerberos.principal())
                };
                refuse_nosasl(&mut conn, &message).await
            } else if options.allow_nosasl {
                let result = serve(&mut conn, &*service, &ctx, &shutdown).await;
                service.connection_closed(&ctx).await;
                result
            } else {
                refuse_nosasl(&mut conn, PASSWORD_REQUIRED).await
            }
        }
        0x16 => Err(WireError::Malformed(
            "the connection starts with a TLS handshake (0x16) but this port does not serve \
             TLS: connect without it (JDBC: drop ;ssl=true), or start the server with a \
             certificate"
                .into(),
        )),
        other => Err(WireError::Malformed(format!(
            "the connection starts with byte {other:#04x}, neither SASL (0x01) nor \
             TBinaryProtocol (0x80); is this an HTTP client on the binary port?"
        ))),
    };
    match result {
        Ok(()) => tracing::debug!("connection closed"),
        Err(e) if e.is_hang_up() => tracing::debug!("client hung up"),
        Err(WireError::Sasl(message)) => tracing::info!(%message, "SASL authentication refused"),
        Err(e) => tracing::info!(error = %e, "connection closed on bad input"),
    }
}

/// Serves calls until the client closes, the input breaks, or shutdown (between calls).
///
/// Calls are answered in order. A client that pipelines calls (the gateway, sending a
/// statement's next requests ahead) gets the replies of those answered at once in one write:
/// a reply to a call answered without waiting is held back while the next call has arrived,
/// and written with the replies after it as soon as a call must wait (a status poll on a
/// running statement, say) or nothing more has arrived. The reply of a call that waited is
/// written at once, with those held before it.
async fn serve<S: CliService, T>(
    conn: &mut Connection<T>,
    service: &S,
    ctx: &CallContext,
    shutdown: &CancellationToken,
) -> Result<(), WireError>
where
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let mut held = BytesMut::new();
    loop {
        let message = match conn.buffered_message() {
            Ok(None) => {
                write_held(conn, &mut held).await?;
                tokio::select! {
                    _ = shutdown.cancelled() => return Ok(()),
                    message = conn.read_message() => message,
                }
            }
            pipelined_or_broken => pipelined_or_broken,
        };
        let message = match message {
            Ok(Some(message)) => message,
            Ok(None) => return Ok(()),
            Err(e) => {
                write_held(conn, &mut held).await?;
                // The stream is out of step; tell the client why if it can still hear it.
                if matches!(e, WireError::TooLarge { .. } | WireError::Malformed(_)) {
                    let reply =
                        Outgoing::exception("", 0, exception_kind::PROTOCOL_ERROR, &e.to_string());
                    let _ = conn.write_message(&reply.header, &reply.body).await;
                }
                return Err(e);
            }
        };
        let mut dispatching = pin!(dispatch(service, ctx, &message));
        let (reply, waited) = match poll_once(dispatching.as_mut()).await {
            Poll::Ready(reply) => (reply, false),
            Poll::Pending => {
                // This call waits: the replies before it go now.
                write_held(conn, &mut held).await?;
                (until_hang_up(conn, dispatching.as_mut()).await?, true)
            }
        };
        // The reply of a call that waited goes at once: its client has been waiting on it
        // (a status poll on a statement that just finished), not on the calls behind it.
        if !waited && conn.has_buffered_input() && ctx.after_reply.is_empty() {
            conn.frame_parts_into(&[&reply.header, &reply.body], &mut held)?;
            continue;
        }
        if held.is_empty() {
            conn.write_message(&reply.header, &reply.body).await?;
        } else {
            conn.frame_parts_into(&[&reply.header, &reply.body], &mut held)?;
            write_held(conn, &mut held).await?;
        }
        ctx.after_reply.run().await;
    }
}

/// Awaits a call that waits (a synchronous statement, a held status poll) while watching its
/// client: a client that hangs up meanwhile (killed mid-query) ends the call at once, and the
/// service hears of it from [`CliService::connection_closed`] now rather than when the call is
/// over (which may be hours for a query). Calls the client pipelines meanwhile are kept for
/// later; past the size limit the client is no longer watched, only awaited. A client that
/// shuts down its sending side counts as gone (no HiveServer2 client does that and waits).
async fn until_hang_up<T, F>(
    conn: &mut Connection<T>,
    mut call: Pin<&mut F>,
) -> Result<F::Output, WireError>
where
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
    F: Future,
{
    loop {
        let watching = conn.buffered_len() < conn.max_message_size();
        tokio::select! {
            biased;
            reply = call.as_mut() => return Ok(reply),
            more = conn.await_more_input(), if watching => {
                if !more? {
                    return Err(WireError::Closed);
                }
            }
        }
    }
}

/// Writes the replies held back, if any, in one write.
async fn write_held<T>(conn: &mut Connection<T>, held: &mut BytesMut) -> Result<(), WireError>
where
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    if !held.is_empty() {
        conn.write_raw(held).await?;
        held.clear();
    }
    Ok(())
}

/// Polls a future once: its output if it is ready without waiting.
async fn poll_once<F: Future>(future: Pin<&mut F>) -> Poll<F::Output> {
    let mut future = Some(future);
    std::future::poll_fn(|cx| {
        let future = future.take().expect("polled once");
        Poll::Ready(future.poll(cx))
    })
    .await
}

/// Answers a SASL client on a port configured for NOSASL only; the refusal, or the error
/// that kept it from being sent.
async fn refuse_sasl<T>(conn: &mut Connection<T>) -> WireError
where
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let message = "this server does not accept SASL: connect without authentication \
                   (JDBC: ;auth=noSasl, PyHive: auth='NOSASL')";
    let frame = sasl::encode_frame(sasl::status::ERROR, message.as_bytes());
    match conn.write_raw(&frame).await {
        Ok(()) => WireError::Sasl(message.into()),
        Err(e) => e,
    }
}

/// What a NOSASL client is told on a port that checks passwords.
const PASSWORD_REQUIRED: &str = "this server requires SASL PLAIN authentication: connect with \
                                 a user and password (JDBC: drop ;auth=noSasl, PyHive: \
                                 auth='NONE' or 'LDAP')";

/// Answers a NOSASL client on a port that requires SASL, addressed to its first call.
async fn refuse_nosasl<T>(conn: &mut Connection<T>, message: &str) -> Result<(), WireError>
where
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let (name, seqid) = match conn.read_message().await? {
        Some(call) => codec::read_header(&call)
            .map(|h| (h.name, h.seqid))
            .unwrap_or_default(),
        None => return Ok(()),
    };
    let reply = Outgoing::exception(&name, seqid, exception_kind::PROTOCOL_ERROR, message);
    conn.write_message(&reply.header, &reply.body).await?;
    Err(WireError::Sasl(message.into()))
}
