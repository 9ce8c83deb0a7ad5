//! Writing a query's rows as ORC files: DataFusion's file sink (its split into Hive's
//! `col=value/` directories and into files included) with orc-rust's writer under it.
//!
//! orc-rust writes booleans, integers, floats, strings, binaries, dates and timestamps, and
//! panics on any other type; so a table with another type (a decimal, an array, a map, a
//! struct) is refused before anything is written, naming the column.

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::compute::{cast_with_options, CastOptions};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::common::runtime::SpawnedTask;
use datafusion::datasource::file_format::file_compression_type::FileCompressionType;
use datafusion::datasource::file_format::write::demux::DemuxedStreamReceiver;
use datafusion::datasource::file_format::write::{get_writer_schema, ObjectWriterBuilder};
use datafusion::datasource::physical_plan::{FileSink, FileSinkConfig};
use datafusion::datasource::sink::DataSink;
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_plan::{DisplayAs, DisplayFormatType};
use object_store::ObjectStore;
use orc_rust::compression::CompressionType;
use orc_rust::ArrowWriterBuilder;
use tokio::io::AsyncWriteExt;
use tokio::task::JoinSet;

/// The size at which a stripe is closed and its bytes go to the store: Hive's default
/// (`orc.stripe.size`), and orc-rust's.
const STRIPE_BYTES: usize = 64 * 1024 * 1024;

/// The type a column of table type `table_type` is written as, None when ORC files written
/// here cannot hold it. DataFusion's in-memory variants become the ORC type they stand for
/// (`Utf8View` a string); unsigned integers, which Hive has not, a signed one that holds them
/// (an unsigned 64-bit value beyond BIGINT's range fails the write).
pub fn written_type(table_type: &DataType) -> Option<DataType> {
    use DataType::*;
    Some(match table_type {
        Boolean | Int8 | Int16 | Int32 | Int64 | Float32 | Float64 | Date32 | Utf8 | LargeUtf8
        | Binary | LargeBinary => table_type.clone(),
        Utf8View => Utf8,
        BinaryView | FixedSizeBinary(_) => Binary,
        UInt8 => Int16,
        UInt16 => Int32,
        UInt32 | UInt64 => Int64,
        Float16 => Float32,
        Date64 => Date32,
        Timestamp(unit, None) => Timestamp(*unit, None),
        // An instant: ORC's timestamp with local time zone, which orc-rust writes in UTC.
        Timestamp(unit, Some(_)) => Timestamp(*unit, Some("UTC".into())),
        Dictionary(_, value) => written_type(value)?,
        _ => return None,
    })
}

/// Refuses a table whose files would hold a column ORC files written here cannot: the
/// first such column, its type, and what to do instead.
pub fn check_writable<'a>(columns: impl IntoIterator<Item = &'a Field>, table: &str) -> Result<()> {
    for field in columns {
        if written_type(field.data_type()).is_none() {
            return Err(DataFusionError::Plan(format!(
                "column '{}' of {table} is {}, which the DataFusion engine cannot write to \
                 ORC files (its ORC writer, orc-rust, takes BOOLEAN, TINYINT, SMALLINT, INT, \
                 BIGINT, FLOAT, DOUBLE, STRING, BINARY, DATE and TIMESTAMP, and no DECIMAL, \
                 ARRAY, MAP or STRUCT); store the table AS PARQUET, or cast the column \
                 (DOUBLE or STRING for a decimal)",
                field.name(),
                crate::types::type_string(field.data_type()).to_uppercase()
            )));
        }
    }
    Ok(())
}

/// The schema files are written with: each column as [`written_type`] gives it.
fn file_schema(schema: &Schema) -> Result<SchemaRef> {
    check_writable(schema.fields().iter().map(|f| f.as_ref()), "the table")?;
    let fields: Vec<Field> = schema
        .fields()
        .iter()
        .map(|f| {
            let data_type = written_type(f.data_type()).expect("checked just above");
            Field::new(f.name(), data_type, true)
        })
        .collect();
    Ok(Arc::new(Schema::new(fields)))
}

/// A batch in the file's schema. A value that does not fit (an unsigned integer beyond the
/// signed range) fails the write rather than turning NULL.
fn as_written(batch: &RecordBatch, schema: &SchemaRef) -> Result<RecordBatch> {
    let options = CastOptions {
        safe: false,
        ..Default::default()
    };
    let columns = batch
        .columns()
        .iter()
        .zip(schema.fields())
        .map(|(array, field)| {
            if array.data_type() == field.data_type() {
                Ok(Arc::clone(array))
            } else {
                cast_with_options(array, field.data_type(), &options).map_err(|e| {
                    DataFusionError::Execution(format!(
                        "column '{}' cannot be written to ORC as {}: {e}",
                        field.name(),
                        field.data_type()
                    ))
                })
            }
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(RecordBatch::try_new(Arc::clone(schema), columns)?)
}

/// DataFusion's sink writing ORC files, one per path its demultiplexer opens.
pub struct OrcSink {
    config: FileSinkConfig,
}

impl OrcSink {
    pub fn new(config: FileSinkConfig) -> Self {
        Self { config }
    }
}

impl fmt::Debug for OrcSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OrcSink").finish_non_exhaustive()
    }
}

impl DisplayAs for OrcSink {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "OrcSink(file={})", self.config.original_url)
    }
}

#[async_trait]
impl DataSink for OrcSink {
    fn schema(&self) -> &SchemaRef {
        self.config.output_schema()
    }

    async fn write_all(
        &self,
        data: SendableRecordBatchStream,
        context: &Arc<TaskContext>,
    ) -> Result<u64> {
        FileSink::write_all(self, data, context).await
    }
}

#[async_trait]
impl FileSink for OrcSink {
    fn config(&self) -> &FileSinkConfig {
        &self.config
    }

    async fn spawn_writer_tasks_and_join(
        &self,
        context: &Arc<TaskContext>,
        demux_task: SpawnedTask<Result<()>>,
        mut file_stream_rx: DemuxedStreamReceiver,
        store: Arc<dyn ObjectStore>,
    ) -> Result<u64> {
        let schema = file_schema(&get_writer_schema(&self.config))?;
        let buffer_size = context
            .session_config()
            .options()
            .execution
            .objectstore_writer_buffer_size;
        let mut tasks: JoinSet<Result<u64>> = JoinSet::new();
        while let Some((path, batches)) = file_stream_rx.recv().await {
            let mut out = ObjectWriterBuilder::new(
                // ORC compresses its own streams; the file as a whole never is.
                FileCompressionType::UNCOMPRESSED,
                &path,
                Arc::clone(&store),
            )
            .with_buffer_size(Some(buffer_size))
            .build()?;
            let schema = Arc::clone(&schema);
            // orc-rust's writer is synchronous and not Send: it encodes on a thread of its
            // own, whose bytes this task puts in the store, a stripe at most in memory. Not
            // tokio's blocking pool: DataFusion's demultiplexer feeds every open file (one
            // per partition) at once, and with more files than the pool has threads (512)
            // it waits on a file whose encoder waits for a thread: a deadlock.
            let (chunks, mut encoded) = tokio::sync::mpsc::channel::<Vec<u8>>(2);
            let (done, encoder) = tokio::sync::oneshot::channel();
            let target = path.to_string();
            std::thread::Builder::new()
                .name("orc-writer".to_owned())
                .spawn(move || {
                    let _ = done.send(encode(batches, chunks, &schema));
                })
                .map_err(|e| {
                    DataFusionError::ResourcesExhausted(format!(
                        "cannot start a thread to write {target}: {e}"
                    ))
                })?;
            let target = path.to_string();
            tasks.spawn(async move {
                while let Some(bytes) = encoded.recv().await {
                    out.write_all(&bytes).await?;
                }
                let rows = encoder.await.map_err(|_| {
                    DataFusionError::Internal(format!("the ORC writer of {target} panicked"))
                })??;
                // Completed only when the encoder finished the file: a failed one is never
                // made whole (and its staging directory is deleted).
                out.shutdown().await?;
                Ok(rows)
            });
        }
        let mut rows = 0;
        while let Some(result) = tasks.join_next().await {
            match result {
                Ok(written) => rows += written?,
                Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
                Err(e) => return Err(DataFusionError::External(Box::new(e))),
            }
        }
        demux_task
            .join_unwind()
            .await
            .map_err(|e| DataFusionError::ExecutionJoin(Box::new(e)))??;
        Ok(rows)
    }
}

/// Encodes one file's batches, handing its bytes to `chunks` as stripes fill; the rows
/// written. Runs on its own thread (orc-rust's writer blocks and is not Send).
fn encode(
    mut batches: tokio::sync::mpsc::Receiver<RecordBatch>,
    chunks: tokio::sync::mpsc::Sender<Vec<u8>>,
    schema: &SchemaRef,
) -> Result<u64> {
    let buffer = SharedBuffer::default();
    let mut writer = ArrowWriterBuilder::new(buffer.clone(), Arc::clone(schema))
        // Snappy, as Spark 3 writes ORC: fast, and read by Hive, Spark and Trino.
        .with_compression(CompressionType::Snappy)
        .with_stripe_byte_size(STRIPE_BYTES)
        .try_build()
        .map_err(orc_error)?;
    let mut rows = 0u64;
    while let Some(batch) = batches.blocking_recv() {
        rows += batch.num_rows() as u64;
        writer
            .write(&as_written(&batch, schema)?)
            .map_err(orc_error)?;
        let bytes = buffer.take();
        if !bytes.is_empty() && chunks.blocking_send(bytes).is_err() {
            // The store failed; the task writing to it reports why.
            return Ok(rows);
        }
    }
    writer.close().map_err(orc_error)?;
    let _ = chunks.blocking_send(buffer.take());
    Ok(rows)
}

fn orc_error(e: orc_rust::error::OrcError) -> DataFusionError {
    DataFusionError::External(Box::new(e))
}

/// Bytes orc-rust has written and the store has not yet taken; only the thread encoding the
/// file writes and takes them (a std mutex: no await anywhere near it).
#[derive(Clone, Default)]
struct SharedBuffer(Arc<std::sync::Mutex<Vec<u8>>>);

impl SharedBuffer {
    /// The bytes written since the last call.
    fn take(&self) -> Vec<u8> {
        std::mem::take(&mut self.0.lock().expect("not poisoned"))
    }
}

impl std::io::Write for SharedBuffer {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .expect("not poisoned")
            .extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
