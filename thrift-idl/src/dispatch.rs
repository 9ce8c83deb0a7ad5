//! From a call message to its reply: decode the request, run the [`CliService`] method,
//! encode what it returns. Every transport serves calls through [`dispatch`].

use bytes::Bytes;
use thrift::protocol::TSerializable;

use crate::binary::message_type;
use crate::cli::*;
use crate::codec::{self, exception_kind};
use crate::service::{CallContext, CliService, Reply};

/// A reply message in two parts, so that a forwarded body is written without copying.
#[derive(Clone, Debug)]
pub struct Outgoing {
    /// The message header, with the caller's seqid.
    pub header: Bytes,
    /// The `_result` struct, or the exception struct.
    pub body: Bytes,
}

impl Outgoing {
    /// A `TApplicationException` answering the call `name` / `seqid`.
    pub fn exception(name: &str, seqid: i32, kind: i32, message: &str) -> Self {
        Self {
            header: codec::encode_header(name, message_type::EXCEPTION, seqid),
            body: codec::encode_exception_body(kind, message),
        }
    }

    /// Header and body in one buffer (for an HTTP body).
    pub fn to_bytes(&self) -> Bytes {
        let mut out = Vec::with_capacity(self.header.len() + self.body.len());
        out.extend_from_slice(&self.header);
        out.extend_from_slice(&self.body);
        out.into()
    }
}

/// Serves one complete call message (as found by [`codec::message_len`]).
///
/// Bad input never fails the connection here: an unknown method gets an `UNKNOWN_METHOD`
/// exception (impyla calls Impala-only methods and falls back on that), undecodable
/// arguments a `PROTOCOL_ERROR` exception, each addressed to the caller's seqid.
pub async fn dispatch<S: CliService>(service: &S, ctx: &CallContext, message: &[u8]) -> Outgoing {
    let header = match codec::read_header(message) {
        Ok(header) => header,
        Err(e) => {
            return Outgoing::exception("", 0, exception_kind::PROTOCOL_ERROR, &e.to_string())
        }
    };
    if header.message_type != message_type::CALL {
        return Outgoing::exception(
            &header.name,
            header.seqid,
            exception_kind::INVALID_MESSAGE_TYPE,
            &format!(
                "expected a CALL message, got message type {}",
                header.message_type
            ),
        );
    }
    let body = &message[header.body_offset..];
    match call(service, ctx, &header.name, body).await {
        Some(Ok(result)) => Outgoing {
            header: codec::encode_reply_header(&header.name, header.seqid),
            body: result,
        },
        Some(Err(e)) => {
            tracing::debug!(method = %header.name, error = %e, "undecodable call");
            Outgoing::exception(
                &header.name,
                header.seqid,
                exception_kind::PROTOCOL_ERROR,
                &format!("cannot decode the arguments of {}: {e}", header.name),
            )
        }
        None => {
            tracing::debug!(method = %header.name, "unknown method");
            Outgoing::exception(
                &header.name,
                header.seqid,
                exception_kind::UNKNOWN_METHOD,
                &format!("Invalid method name: '{}'", header.name),
            )
        }
    }
}

/// The `_result` body of a reply, typed or already encoded.
fn encode<T: TSerializable>(reply: Reply<T>) -> Bytes {
    match reply {
        Reply::Typed(resp) => codec::encode_result_body(&resp),
        Reply::Encoded(body) => body,
    }
}

/// Declares the RPC table once: the wire names, and the match that routes each name to its
/// method with its request type.
macro_rules! rpc_table {
    ($($name:literal => $method:ident($req:ty)),* $(,)?) => {
        /// The RPC names this module dispatches, in table order.
        #[cfg(test)]
        const DISPATCHED: &[&str] = &[$($name),*];

        /// Decodes and runs the call `name`; `None` if no RPC has that name.
        async fn call<S: CliService>(
            service: &S,
            ctx: &CallContext,
            name: &str,
            body: &[u8],
        ) -> Option<Result<Bytes, crate::error::WireError>> {
            Some(match name {
                $($name => match codec::decode_args::<$req>(body) {
                    Ok(req) => Ok(encode(service.$method(ctx, req).await)),
                    Err(e) => Err(e),
                },)*
                _ => return None,
            })
        }
    };
}

rpc_table! {
    "OpenSession" => open_session(TOpenSessionReq),
    "CloseSession" => close_session(TCloseSessionReq),
    "GetInfo" => get_info(TGetInfoReq),
    "ExecuteStatement" => execute_statement(TExecuteStatementReq),
    "GetTypeInfo" => get_type_info(TGetTypeInfoReq),
    "GetCatalogs" => get_catalogs(TGetCatalogsReq),
    "GetSchemas" => get_schemas(TGetSchemasReq),
    "GetTables" => get_tables(TGetTablesReq),
    "GetTableTypes" => get_table_types(TGetTableTypesReq),
    "GetColumns" => get_columns(TGetColumnsReq),
    "GetFunctions" => get_functions(TGetFunctionsReq),
    "GetPrimaryKeys" => get_primary_keys(TGetPrimaryKeysReq),
    "GetCrossReference" => get_cross_reference(TGetCrossReferenceReq),
    "GetOperationStatus" => get_operation_status(TGetOperationStatusReq),
    "CancelOperation" => cancel_operation(TCancelOperationReq),
    "CloseOperation" => close_operation(TCloseOperationReq),
    "GetResultSetMetadata" => get_result_set_metadata(TGetResultSetMetadataReq),
    "FetchResults" => fetch_results(TFetchResultsReq),
    "GetDelegationToken" => get_delegation_token(TGetDelegationTokenReq),
    "CancelDelegationToken" => cancel_delegation_token(TCancelDelegationTokenReq),
    "RenewDelegationToken" => renew_delegation_token(TRenewDelegationTokenReq),
    "GetQueryId" => get_query_id(TGetQueryIdReq),
    "SetClientInfo" => set_client_info(TSetClientInfoReq),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::RPC_NAMES;

    #[test]
    fn dispatches_every_rpc_of_the_service() {
        assert_eq!(DISPATCHED, &RPC_NAMES[..]);
    }
}
