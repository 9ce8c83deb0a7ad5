//! A small CliService for the wire tests, and servers started on `127.0.0.1:0`.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;

use kumiho_thrift::cli::*;
use kumiho_thrift::client::{Client, ClientAuth};
use kumiho_thrift::codec;
use kumiho_thrift::handle::HandleId;
use kumiho_thrift::server::{serve_binary, serve_http, ServerOptions};
use kumiho_thrift::service::{CallContext, CliService, Reply, Transport};
use kumiho_thrift::status::{self, FromStatus};
use tokio::net::TcpListener;
use tokio::sync::{mpsc, Semaphore};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// The name GetInfo(DBMS_NAME) answers.
pub const SERVER_NAME: &str = "Kumiho wire test";

/// Answers OpenSession with what the transport told it about the caller, GetInfo with its
/// name, ExecuteStatement through `Reply::Encoded` (the forwarding path), GetOperationStatus
/// once the test releases it (a call that waits), the rest with "not supported"; reports
/// each closed binary connection.
pub struct EchoService {
    closed: mpsc::UnboundedSender<CallContext>,
    status_polls: Arc<Semaphore>,
}

fn unsupported() -> TStatus {
    status::not_supported("this test RPC")
}

impl CliService for EchoService {
    async fn open_session(
        &self,
        ctx: &CallContext,
        req: TOpenSessionReq,
    ) -> Reply<TOpenSessionResp> {
        let mut configuration = BTreeMap::new();
        configuration.insert("user".to_owned(), ctx.user.clone().unwrap_or_default());
        configuration.insert("transport".to_owned(), format!("{:?}", ctx.transport));
        configuration.insert(
            "requested_user".to_owned(),
            req.username.unwrap_or_default(),
        );
        Reply::Typed(TOpenSessionResp {
            status: status::ok(),
            server_protocol_version: req.client_protocol,
            session_handle: Some(HandleId::new().session_handle()),
            configuration: Some(configuration),
        })
    }

    async fn close_session(
        &self,
        _: &CallContext,
        _: TCloseSessionReq,
    ) -> Reply<TCloseSessionResp> {
        Reply::Typed(TCloseSessionResp {
            status: status::ok(),
        })
    }

    async fn get_info(&self, _: &CallContext, _: TGetInfoReq) -> Reply<TGetInfoResp> {
        Reply::Typed(TGetInfoResp {
            status: status::ok(),
            info_value: TGetInfoValue::StringValue(SERVER_NAME.into()),
        })
    }

    async fn execute_statement(
        &self,
        _: &CallContext,
        req: TExecuteStatementReq,
    ) -> Reply<TExecuteStatementResp> {
        let resp = TExecuteStatementResp {
            status: status::error(status::SQLSTATE_SYNTAX, format!("echo: {}", req.statement)),
            operation_handle: None,
        };
        Reply::Encoded(codec::encode_result_body(&resp))
    }

    async fn get_type_info(&self, _: &CallContext, _: TGetTypeInfoReq) -> Reply<TGetTypeInfoResp> {
        Reply::Typed(TGetTypeInfoResp {
            status: unsupported(),
            operation_handle: None,
        })
    }

    async fn get_catalogs(&self, _: &CallContext, _: TGetCatalogsReq) -> Reply<TGetCatalogsResp> {
        Reply::Typed(TGetCatalogsResp {
            status: unsupported(),
            operation_handle: None,
        })
    }

    async fn get_schemas(&self, _: &CallContext, _: TGetSchemasReq) -> Reply<TGetSchemasResp> {
        Reply::Typed(TGetSchemasResp {
            status: unsupported(),
            operation_handle: None,
        })
    }

    async fn get_tables(&self, _: &CallContext, _: TGetTablesReq) -> Reply<TGetTablesResp> {
        Reply::Typed(TGetTablesResp {
            status: unsupported(),
            operation_handle: None,
        })
    }

    async fn get_table_types(
        &self,
        _: &CallContext,
        _: TGetTableTypesReq,
    ) -> Reply<TGetTableTypesResp> {
        Reply::Typed(TGetTableTypesResp {
            status: unsupported(),
            operation_handle: None,
        })
    }

    async fn get_columns(&self, _: &CallContext, _: TGetColumnsReq) -> Reply<TGetColumnsResp> {
        Reply::Typed(TGetColumnsResp {
            status: unsupported(),
            operation_handle: None,
        })
    }

    async fn get_functions(
        &self,
        _: &CallContext,
        _: TGetFunctionsReq,
    ) -> Reply<TGetFunctionsResp> {
        Reply::Typed(TGetFunctionsResp {
            status: unsupported(),
            operation_handle: None,
        })
    }

    async fn get_operation_status(
        &self,
        _: &CallContext,
        _: TGetOperationStatusReq,
    ) -> Reply<TGetOperationStatusResp> {
        if let Ok(permit) = self.status_polls.acquire().await {
            permit.forget();
        }
        Reply::Typed(TGetOperationStatusResp::from_status(unsupported()))
    }

    async fn cancel_operation(
        &self,
        _: &CallContext,
        _: TCancelOperationReq,
    ) -> Reply<TCancelOperationResp> {
        Reply::Typed(TCancelOperationResp {
            status: unsupported(),
        })
    }

    async fn close_operation(
        &self,
        _: &CallContext,
        _: TCloseOperationReq,
    ) -> Reply<TCloseOperationResp> {
        Reply::Typed(TCloseOperationResp {
            status: unsupported(),
        })
    }

    async fn get_result_set_metadata(
        &self,
        _: &CallContext,
        _: TGetResultSetMetadataReq,
    ) -> Reply<TGetResultSetMetadataResp> {
        Reply::Typed(TGetResultSetMetadataResp {
            status: unsupported(),
            schema: None,
        })
    }

    async fn fetch_results(
        &self,
        _: &CallContext,
        _: TFetchResultsReq,
    ) -> Reply<TFetchResultsResp> {
        Reply::Typed(TFetchResultsResp {
            status: unsupported(),
            has_more_rows: None,
            results: None,
        })
    }

    async fn connection_closed(&self, ctx: &CallContext) {
        let _ = self.closed.send(ctx.clone());
    }
}

/// Which port a test server listens on.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Port {
    Binary,
    Http,
}

/// A server running on `127.0.0.1:0` until `stop` is called.
pub struct TestServer {
    pub addr: SocketAddr,
    shutdown: CancellationToken,
    task: JoinHandle<std::io::Result<()>>,
    /// One entry per binary connection the server has finished with.
    pub closed: mpsc::UnboundedReceiver<CallContext>,
    /// GetOperationStatus calls wait for a permit each.
    pub status_polls: Arc<Semaphore>,
}

impl TestServer {
    pub async fn start(port: Port, options: ServerOptions) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (closed_tx, closed) = mpsc::unbounded_channel();
        let status_polls = Arc::new(Semaphore::new(0));
        let service = Arc::new(EchoService {
            closed: closed_tx,
            status_polls: Arc::clone(&status_polls),
        });
        let shutdown = CancellationToken::new();
        let options = Arc::new(options);
        let task = match port {
            Port::Binary => {
                tokio::spawn(serve_binary(listener, service, options, shutdown.clone()))
            }
            Port::Http => tokio::spawn(serve_http(listener, service, options, shutdown.clone())),
        };
        Self {
            addr,
            shutdown,
            task,
            closed,
            status_polls,
        }
    }

    pub async fn binary(options: ServerOptions) -> Self {
        Self::start(Port::Binary, options).await
    }

    pub fn address(&self) -> String {
        self.addr.to_string()
    }

    /// Cancels the server and waits for it to return.
    pub async fn stop(&mut self) {
        self.shutdown.cancel();
        (&mut self.task).await.unwrap().unwrap();
    }
}

pub fn plain(user: &str, password: &str) -> ClientAuth {
    ClientAuth::Plain {
        user: user.into(),
        password: password.into(),
    }
}

pub fn open_session_req(user: &str) -> TOpenSessionReq {
    TOpenSessionReq {
        client_protocol: TProtocolVersion::HIVE_CLI_SERVICE_PROTOCOL_V10,
        username: Some(user.into()),
        password: Some("pw".into()),
        configuration: None,
    }
}

pub fn get_info_req() -> TGetInfoReq {
    TGetInfoReq {
        session_handle: HandleId::new().session_handle(),
        info_type: TGetInfoType::CLI_DBMS_NAME,
    }
}

/// Opens a session and returns the configuration the server echoed.
pub async fn open_session(client: &mut Client, user: &str) -> BTreeMap<String, String> {
    let resp: TOpenSessionResp = client
        .call("OpenSession", &open_session_req(user))
        .await
        .unwrap();
    assert!(status::is_ok(&resp.status));
    assert_eq!(
        resp.server_protocol_version,
        TProtocolVersion::HIVE_CLI_SERVICE_PROTOCOL_V10
    );
    resp.configuration.unwrap()
}

/// Asserts a client on this connection is served: GetInfo answers with the server's name.
pub async fn assert_served(client: &mut Client) {
    let resp: TGetInfoResp = client.call("GetInfo", &get_info_req()).await.unwrap();
    assert_eq!(
        resp.info_value,
        TGetInfoValue::StringValue(SERVER_NAME.into())
    );
}

/// Asserts a fresh client of each binary kind is served normally.
pub async fn assert_fresh_clients_served(addr: &str) {
    for auth in [plain("fresh", "pw"), ClientAuth::NoSasl] {
        let mut client = Client::connect(addr, auth).await.unwrap();
        assert_served(&mut client).await;
    }
}

/// The transport name the echo service reports.
pub fn transport_name(t: Transport) -> String {
    format!("{t:?}")
}
