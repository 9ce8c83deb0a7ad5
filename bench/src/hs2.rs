//! HiveServer2 sessions and statements on kumiho-thrift's client: what a JDBC driver sends,
//! one RPC at a time, with reply sizes counted for throughput figures.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use kumiho_thrift::cli::{
    TCloseOperationReq, TCloseOperationResp, TCloseSessionReq, TCloseSessionResp, TColumn,
    TExecuteStatementReq, TExecuteStatementResp, TFetchOrientation, TFetchResultsReq,
    TFetchResultsResp, TGetOperationStatusReq, TGetOperationStatusResp, TGetResultSetMetadataReq,
    TGetResultSetMetadataResp, TOpenSessionReq, TOpenSessionResp, TOperationHandle,
    TOperationState, TProtocolVersion, TSessionHandle, TStatus,
};
use kumiho_thrift::client::{Client, ClientAuth};
use kumiho_thrift::codec;
use kumiho_thrift::status;
use thrift::protocol::TSerializable;

use crate::error::{BenchError, Result};

/// Longest a statement may run before the benchmark gives up on it.
const STATEMENT_TIMEOUT: Duration = Duration::from_secs(600);

/// A server to measure: where it listens, how to log in, and what every session asks for.
#[derive(Clone, Debug)]
pub struct Target {
    /// Shown in the report: `kumiho`, `engine`, `spark`, `kumiho+spark`.
    pub name: String,
    pub addr: String,
    pub auth: ClientAuth,
    /// OpenSession configuration (Kyuubi's keys through kumiho).
    pub session_conf: BTreeMap<String, String>,
}

impl Target {
    /// A SASL PLAIN target.
    pub fn plain(name: &str, addr: String, user: &str, password: &str) -> Self {
        Target {
            name: name.to_owned(),
            addr,
            auth: ClientAuth::Plain {
                user: user.to_owned(),
                password: password.to_owned(),
            },
            session_conf: BTreeMap::new(),
        }
    }

    /// The same target, with one more session setting.
    pub fn with_conf(mut self, key: &str, value: &str) -> Self {
        self.session_conf.insert(key.to_owned(), value.to_owned());
        self
    }

    fn user(&self) -> Option<String> {
        match &self.auth {
            ClientAuth::Plain { user, .. } => Some(user.clone()),
            ClientAuth::NoSasl => None,
        }
    }

    /// Connects and authenticates (TCP, then SASL PLAIN).
    pub async fn connect(&self) -> Result<Connection> {
        let client = Client::connect(&self.addr, self.auth.clone())
            .await
            .map_err(|source| BenchError::Wire {
                rpc: "connect",
                target: self.name.clone(),
                source,
            })?;
        Ok(Connection {
            client,
            target: self.name.clone(),
            rpc_times: None,
        })
    }

    /// Connects and opens a session: what a client does before its first statement.
    pub async fn open_session(&self) -> Result<Session> {
        let mut connection = self.connect().await?;
        let handle = connection.open_session(self).await?.0;
        Ok(Session { connection, handle })
    }
}

/// One authenticated connection; calls are sequential.
pub struct Connection {
    client: Client,
    target: String,
    /// When on: each call's name and round-trip time, in order.
    rpc_times: Option<Vec<(&'static str, Duration)>>,
}

impl Connection {
    /// Calls `rpc` and decodes the reply; an error status is a [`BenchError::Refused`].
    async fn call<Req, Resp>(&mut self, rpc: &'static str, req: &Req) -> Result<(Resp, usize)>
    where
        Req: TSerializable,
        Resp: TSerializable + HasStatus,
    {
        let sent = Instant::now();
        let body = self
            .client
            .call_encoded(rpc, req)
            .await
            .map_err(|source| self.wire(rpc, source))?;
        if let Some(times) = &mut self.rpc_times {
            times.push((rpc, sent.elapsed()));
        }
        let resp: Resp =
            codec::decode_result_body(&body).map_err(|source| self.wire(rpc, source))?;
        if !status::is_ok(resp.status()) {
            return Err(BenchError::Refused {
                rpc,
                target: self.target.clone(),
                message: resp.status().error_message.clone().unwrap_or_else(|| {
                    format!("{:?} without a message", resp.status().status_code)
                }),
            });
        }
        Ok((resp, body.len()))
    }

    /// Starts noting each call's round-trip time.
    pub fn time_rpcs(&mut self) {
        self.rpc_times = Some(Vec::new());
    }

    /// The calls noted since the last take, in order.
    pub fn take_rpc_times(&mut self) -> Vec<(&'static str, Duration)> {
        self.rpc_times
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    fn wire(&self, rpc: &'static str, source: kumiho_thrift::error::WireError) -> BenchError {
        BenchError::Wire {
            rpc,
            target: self.target.clone(),
            source,
        }
    }

    /// OpenSession with the target's settings; returns the handle and the reply's configuration.
    pub async fn open_session(
        &mut self,
        target: &Target,
    ) -> Result<(TSessionHandle, BTreeMap<String, String>)> {
        let req = TOpenSessionReq {
            client_protocol: TProtocolVersion::HIVE_CLI_SERVICE_PROTOCOL_V10,
            username: target.user(),
            password: None,
            configuration: Some(target.session_conf.clone()),
        };
        let (resp, _): (TOpenSessionResp, _) = self.call("OpenSession", &req).await?;
        let handle = resp.session_handle.ok_or_else(|| BenchError::Refused {
            rpc: "OpenSession",
            target: self.target.clone(),
            message: "the reply has no session handle".to_owned(),
        })?;
        Ok((handle, resp.configuration.unwrap_or_default()))
    }

    pub async fn close_session(&mut self, handle: &TSessionHandle) -> Result<()> {
        let req = TCloseSessionReq {
            session_handle: handle.clone(),
        };
        let _: (TCloseSessionResp, _) = self.call("CloseSession", &req).await?;
        Ok(())
    }

    /// ExecuteStatement(runAsync), then GetOperationStatus until the statement finished, as
    /// beeline does. Returns the handle and how many status calls it took.
    pub async fn execute(
        &mut self,
        handle: &TSessionHandle,
        sql: &str,
    ) -> Result<(TOperationHandle, u32)> {
        let req = TExecuteStatementReq {
            session_handle: handle.clone(),
            statement: sql.to_owned(),
            conf_overlay: None,
            run_async: Some(true),
            query_timeout: None,
        };
        let (resp, _): (TExecuteStatementResp, _) = self.call("ExecuteStatement", &req).await?;
        let operation = resp.operation_handle.ok_or_else(|| BenchError::Refused {
            rpc: "ExecuteStatement",
            target: self.target.clone(),
            message: "the reply has no operation handle".to_owned(),
        })?;
        let started = std::time::Instant::now();
        let mut polls = 0;
        loop {
            let req = TGetOperationStatusReq {
                operation_handle: operation.clone(),
                get_progress_update: None,
            };
            let (resp, _): (TGetOperationStatusResp, _) =
                self.call("GetOperationStatus", &req).await?;
            polls += 1;
            match resp.operation_state {
                Some(TOperationState::FINISHED_STATE) => return Ok((operation, polls)),
                Some(
                    state @ (TOperationState::ERROR_STATE
                    | TOperationState::CANCELED_STATE
                    | TOperationState::CLOSED_STATE
                    | TOperationState::TIMEDOUT_STATE),
                ) => {
                    return Err(BenchError::Refused {
                        rpc: "GetOperationStatus",
                        target: self.target.clone(),
                        message: format!(
                            "`{sql}` ended in {state:?}: {}",
                            resp.error_message.unwrap_or_default()
                        ),
                    })
                }
                _ if started.elapsed() > STATEMENT_TIMEOUT => {
                    return Err(BenchError::Refused {
                        rpc: "GetOperationStatus",
                        target: self.target.clone(),
                        message: format!("`{sql}` still running after {STATEMENT_TIMEOUT:?}"),
                    })
                }
                // The server holds the call briefly while the statement runs; when it
                // answers at once, do not spin.
                _ => tokio::time::sleep(Duration::from_millis(1)).await,
            }
        }
    }

    pub async fn result_metadata(&mut self, operation: &TOperationHandle) -> Result<()> {
        let req = TGetResultSetMetadataReq {
            operation_handle: operation.clone(),
        };
        let _: (TGetResultSetMetadataResp, _) = self.call("GetResultSetMetadata", &req).await?;
        Ok(())
    }

    /// One FetchResults(FETCH_NEXT) call: rows in the batch and bytes of the reply.
    pub async fn fetch(&mut self, operation: &TOperationHandle, max_rows: i64) -> Result<Batch> {
        let req = TFetchResultsReq {
            operation_handle: operation.clone(),
            orientation: TFetchOrientation::FETCH_NEXT,
            max_rows,
            fetch_type: None,
        };
        let (resp, bytes): (TFetchResultsResp, _) = self.call("FetchResults", &req).await?;
        let rows = resp
            .results
            .map(|rowset| match rowset.columns.as_deref() {
                Some([first, ..]) => column_len(first),
                _ => rowset.rows.len(),
            })
            .unwrap_or(0);
        Ok(Batch { rows, bytes })
    }

    /// Fetches until an empty batch; returns rows and reply bytes in all.
    pub async fn fetch_all(
        &mut self,
        operation: &TOperationHandle,
        max_rows: i64,
    ) -> Result<Batch> {
        let mut total = Batch { rows: 0, bytes: 0 };
        loop {
            let batch = self.fetch(operation, max_rows).await?;
            total.bytes += batch.bytes;
            if batch.rows == 0 {
                return Ok(total);
            }
            total.rows += batch.rows;
        }
    }

    pub async fn close_operation(&mut self, operation: &TOperationHandle) -> Result<()> {
        let req = TCloseOperationReq {
            operation_handle: operation.clone(),
        };
        let _: (TCloseOperationResp, _) = self.call("CloseOperation", &req).await?;
        Ok(())
    }

    /// A whole statement as beeline runs it: execute, poll, metadata, fetch all, close.
    pub async fn run_statement(
        &mut self,
        handle: &TSessionHandle,
        sql: &str,
        fetch_size: i64,
    ) -> Result<Batch> {
        let (operation, _) = self.execute(handle, sql).await?;
        self.result_metadata(&operation).await?;
        let batch = self.fetch_all(&operation, fetch_size).await?;
        self.close_operation(&operation).await?;
        Ok(batch)
    }
}

/// What a fetch brought back.
#[derive(Clone, Copy, Debug)]
pub struct Batch {
    pub rows: usize,
    /// Size of the reply messages' bodies, as they travelled.
    pub bytes: usize,
}

/// An open session on its own connection.
pub struct Session {
    pub connection: Connection,
    pub handle: TSessionHandle,
}

impl Session {
    /// A statement run to completion: see [`Connection::run_statement`].
    pub async fn run(&mut self, sql: &str, fetch_size: i64) -> Result<Batch> {
        self.connection
            .run_statement(&self.handle, sql, fetch_size)
            .await
    }

    pub async fn close(mut self) -> Result<()> {
        self.connection.close_session(&self.handle).await
    }
}

fn column_len(column: &TColumn) -> usize {
    match column {
        TColumn::BoolVal(c) => c.values.len(),
        TColumn::ByteVal(c) => c.values.len(),
        TColumn::I16Val(c) => c.values.len(),
        TColumn::I32Val(c) => c.values.len(),
        TColumn::I64Val(c) => c.values.len(),
        TColumn::DoubleVal(c) => c.values.len(),
        TColumn::StringVal(c) => c.values.len(),
        TColumn::BinaryVal(c) => c.values.len(),
    }
}

/// Replies that carry a status.
pub trait HasStatus {
    fn status(&self) -> &TStatus;
}

macro_rules! has_status {
    ($($resp:ty),*) => { $( impl HasStatus for $resp { fn status(&self) -> &TStatus { &self.status } } )* };
}
has_status!(
    TOpenSessionResp,
    TCloseSessionResp,
    TExecuteStatementResp,
    TGetOperationStatusResp,
    TGetResultSetMetadataResp,
    TFetchResultsResp,
    TCloseOperationResp
);
