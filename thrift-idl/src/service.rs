//! The HiveServer2 service as an async trait: one method per RPC of TCLIService.
//!
//! Engines and the gateway implement [`CliService`]; the transports decode each call, invoke
//! the method, and encode what it returns. RPCs declare no exceptions: failures travel in
//! each response's `TStatus`. A method may answer with a typed response or, on the gateway's
//! forwarding path, with a reply another server already encoded ([`Reply::Encoded`]).

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use bytes::Bytes;

use crate::cli::*;
use crate::status::{self, FromStatus};

/// How a client reached the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    /// Binary TCP after a SASL PLAIN handshake, messages in length-prefixed frames.
    Sasl,
    /// Binary TCP with no SASL: raw TBinaryProtocol on the socket.
    NoSasl,
    /// One message per HTTP POST body.
    Http,
    /// Calls made in-process on the service for a REST API client (Kyuubi's `/api/v1`
    /// sessions), one per REST request: like HTTP, a session outlives its connections.
    Rest,
}

impl Transport {
    /// Whether a session lives as long as the TCP connection that opened it (binary).
    pub fn is_binary(self) -> bool {
        matches!(self, Transport::Sasl | Transport::NoSasl)
    }
}

/// What the server knows about the caller of an RPC.
///
/// For binary transports this is one per TCP connection; for HTTP one per request, since
/// an HTTP client's session outlives its TCP connections.
#[derive(Clone, Debug)]
pub struct CallContext {
    /// Identifies the binary connection (for closing its sessions when it drops); HTTP
    /// requests get a fresh id each.
    pub connection_id: u64,
    pub peer: SocketAddr,
    pub transport: Transport,
    /// The user the transport authenticated (SASL PLAIN authcid, HTTP Basic user or cookie,
    /// or the short name of a Kerberos principal: SASL GSSAPI, SPNEGO); `None` for NOSASL,
    /// where the user arrives only in `TOpenSessionReq.username`.
    pub user: Option<String>,
    /// Work the service leaves for after the reply is written.
    pub after_reply: AfterReply,
}

/// Work a service leaves for after its reply (a proxy's write to its upstream that the
/// client need not wait for). Over a binary connection it runs once the reply is written,
/// before the connection's next call is read, so calls and their work stay in order; over
/// HTTP, before the reply is sent.
#[derive(Clone, Default)]
pub struct AfterReply(Arc<Mutex<Vec<DeferredWork>>>);

type DeferredWork = Pin<Box<dyn Future<Output = ()> + Send>>;

impl AfterReply {
    pub fn push(&self, work: impl Future<Output = ()> + Send + 'static) {
        self.lock().push(Box::pin(work));
    }

    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    /// Runs the work left so far, in the order it was left.
    pub async fn run(&self) {
        let work = std::mem::take(&mut *self.lock());
        for work in work {
            work.await;
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<DeferredWork>> {
        // Holders only push or take: a panicking one leaves a consistent Vec.
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl std::fmt::Debug for AfterReply {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AfterReply")
            .field("pending", &self.lock().len())
            .finish()
    }
}

/// A response: typed, to be encoded by the transport, or already encoded by another server.
#[derive(Debug)]
pub enum Reply<T> {
    Typed(T),
    /// The bytes of the RPC's `_result` struct (field 0 = the response), exactly as they
    /// follow the message header in a reply; the transport writes its own header with the
    /// caller's seqid in front. Lets a proxy forward a reply without decoding it.
    Encoded(Bytes),
}

impl<T> From<T> for Reply<T> {
    fn from(value: T) -> Self {
        Reply::Typed(value)
    }
}

/// The TCLIService RPCs, one async method each.
///
/// Methods without a default must be implemented; the defaults answer that the RPC is not
/// supported (delegation tokens, key metadata) or accept it (SetClientInfo).
/// [`CliService::connection_closed`] runs when a binary connection ends, however it ends.
pub trait CliService: Send + Sync + 'static {
    /// `OpenSession`.
    fn open_session(
        &self,
        ctx: &CallContext,
        req: TOpenSessionReq,
    ) -> impl Future<Output = Reply<TOpenSessionResp>> + Send;

    /// `CloseSession`.
    fn close_session(
        &self,
        ctx: &CallContext,
        req: TCloseSessionReq,
    ) -> impl Future<Output = Reply<TCloseSessionResp>> + Send;

    /// `GetInfo`.
    fn get_info(
        &self,
        ctx: &CallContext,
        req: TGetInfoReq,
    ) -> impl Future<Output = Reply<TGetInfoResp>> + Send;

    /// `ExecuteStatement`.
    fn execute_statement(
        &self,
        ctx: &CallContext,
        req: TExecuteStatementReq,
    ) -> impl Future<Output = Reply<TExecuteStatementResp>> + Send;

    /// `GetTypeInfo`.
    fn get_type_info(
        &self,
        ctx: &CallContext,
        req: TGetTypeInfoReq,
    ) -> impl Future<Output = Reply<TGetTypeInfoResp>> + Send;

    /// `GetCatalogs`.
    fn get_catalogs(
        &self,
        ctx: &CallContext,
        req: TGetCatalogsReq,
    ) -> impl Future<Output = Reply<TGetCatalogsResp>> + Send;

    /// `GetSchemas`.
    fn get_schemas(
        &self,
        ctx: &CallContext,
        req: TGetSchemasReq,
    ) -> impl Future<Output = Reply<TGetSchemasResp>> + Send;

    /// `GetTables`.
    fn get_tables(
        &self,
        ctx: &CallContext,
        req: TGetTablesReq,
    ) -> impl Future<Output = Reply<TGetTablesResp>> + Send;

    /// `GetTableTypes`.
    fn get_table_types(
        &self,
        ctx: &CallContext,
        req: TGetTableTypesReq,
    ) -> impl Future<Output = Reply<TGetTableTypesResp>> + Send;

    /// `GetColumns`.
    fn get_columns(
        &self,
        ctx: &CallContext,
        req: TGetColumnsReq,
    ) -> impl Future<Output = Reply<TGetColumnsResp>> + Send;

    /// `GetFunctions`.
    fn get_functions(
        &self,
        ctx: &CallContext,
        req: TGetFunctionsReq,
    ) -> impl Future<Output = Reply<TGetFunctionsResp>> + Send;

    /// `GetPrimaryKeys`.
    fn get_primary_keys(
        &self,
        ctx: &CallContext,
        req: TGetPrimaryKeysReq,
    ) -> impl Future<Output = Reply<TGetPrimaryKeysResp>> + Send {
        let _ = (ctx, req);
        async move {
            Reply::Typed(TGetPrimaryKeysResp::from_status(status::not_supported(
                "GetPrimaryKeys",
            )))
        }
    }

    /// `GetCrossReference`.
    fn get_cross_reference(
        &self,
        ctx: &CallContext,
        req: TGetCrossReferenceReq,
    ) -> impl Future<Output = Reply<TGetCrossReferenceResp>> + Send {
        let _ = (ctx, req);
        async move {
            Reply::Typed(TGetCrossReferenceResp::from_status(status::not_supported(
                "GetCrossReference",
            )))
        }
    }

    /// `GetOperationStatus`.
    fn get_operation_status(
        &self,
        ctx: &CallContext,
        req: TGetOperationStatusReq,
    ) -> impl Future<Output = Reply<TGetOperationStatusResp>> + Send;

    /// `CancelOperation`.
    fn cancel_operation(
        &self,
        ctx: &CallContext,
        req: TCancelOperationReq,
    ) -> impl Future<Output = Reply<TCancelOperationResp>> + Send;

    /// `CloseOperation`.
    fn close_operation(
        &self,
        ctx: &CallContext,
        req: TCloseOperationReq,
    ) -> impl Future<Output = Reply<TCloseOperationResp>> + Send;

    /// `GetResultSetMetadata`.
    fn get_result_set_metadata(
        &self,
        ctx: &CallContext,
        req: TGetResultSetMetadataReq,
    ) -> impl Future<Output = Reply<TGetResultSetMetadataResp>> + Send;

    /// `FetchResults`.
    fn fetch_results(
        &self,
        ctx: &CallContext,
        req: TFetchResultsReq,
    ) -> impl Future<Output = Reply<TFetchResultsResp>> + Send;

    /// `GetDelegationToken`.
    fn get_delegation_token(
        &self,
        ctx: &CallContext,
        req: TGetDelegationTokenReq,
    ) -> impl Future<Output = Reply<TGetDelegationTokenResp>> + Send {
        let _ = (ctx, req);
        async move {
            Reply::Typed(TGetDelegationTokenResp::from_status(status::not_supported(
                "GetDelegationToken",
            )))
        }
    }

    /// `CancelDelegationToken`.
    fn cancel_delegation_token(
        &self,
        ctx: &CallContext,
        req: TCancelDelegationTokenReq,
    ) -> impl Future<Output = Reply<TCancelDelegationTokenResp>> + Send {
        let _ = (ctx, req);
        async move {
            Reply::Typed(TCancelDelegationTokenResp::from_status(
                status::not_supported("CancelDelegationToken"),
            ))
        }
    }

    /// `RenewDelegationToken`.
    fn renew_delegation_token(
        &self,
        ctx: &CallContext,
        req: TRenewDelegationTokenReq,
    ) -> impl Future<Output = Reply<TRenewDelegationTokenResp>> + Send {
        let _ = (ctx, req);
        async move {
            Reply::Typed(TRenewDelegationTokenResp::from_status(
                status::not_supported("RenewDelegationToken"),
            ))
        }
    }

    /// `GetQueryId`.
    fn get_query_id(
        &self,
        ctx: &CallContext,
        req: TGetQueryIdReq,
    ) -> impl Future<Output = Reply<TGetQueryIdResp>> + Send {
        let _ = (ctx, req);
        async move {
            Reply::Typed(TGetQueryIdResp {
                query_id: String::new(),
            })
        }
    }

    /// `SetClientInfo`.
    fn set_client_info(
        &self,
        ctx: &CallContext,
        req: TSetClientInfoReq,
    ) -> impl Future<Output = Reply<TSetClientInfoResp>> + Send {
        let _ = (ctx, req);
        async move { Reply::Typed(TSetClientInfoResp::from_status(status::ok())) }
    }

    /// Called once when a binary connection closes, cleanly or not; HTTP has no such event.
    fn connection_closed(&self, ctx: &CallContext) -> impl Future<Output = ()> + Send {
        let _ = ctx;
        async {}
    }
}

/// Every RPC of the service: its wire name, in the IDL's order.
pub const RPC_NAMES: [&str; 23] = [
    "OpenSession",
    "CloseSession",
    "GetInfo",
    "ExecuteStatement",
    "GetTypeInfo",
    "GetCatalogs",
    "GetSchemas",
    "GetTables",
    "GetTableTypes",
    "GetColumns",
    "GetFunctions",
    "GetPrimaryKeys",
    "GetCrossReference",
    "GetOperationStatus",
    "CancelOperation",
    "CloseOperation",
    "GetResultSetMetadata",
    "FetchResults",
    "GetDelegationToken",
    "CancelDelegationToken",
    "RenewDelegationToken",
    "GetQueryId",
    "SetClientInfo",
];
