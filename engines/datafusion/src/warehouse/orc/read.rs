//! Reading ORC files as a table's rows: each file's columns matched to the table's by name
//! (by position in Hive's old files, whose columns are named `_col0`, `_col1`, ...), cast to
//! the table's types, NULL where a file lacks a column, partition values filled in.
//!
//! datafusion-orc's own source hands over a file's columns as they are, so a table whose
//! files differ from its columns (a column added with ALTER TABLE, Spark's `INT` under a
//! `BIGINT` column, the engine's `STRING`, which DataFusion keeps as `Utf8View`), or a
//! partitioned table, could not be read with it; this source reads with orc-rust and leaves
//! the partition columns and the rest of the query's projection to DataFusion's
//! [`ProjectionOpener`], as DataFusion's CSV and JSON sources do.

use std::sync::Arc;

use bytes::Bytes;
use datafusion::arrow::array::{new_null_array, ArrayRef, RecordBatch, RecordBatchOptions};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{FieldRef, Schema, SchemaRef};
use datafusion::datasource::listing::PartitionedFile;
use datafusion::datasource::physical_plan::{
    FileOpenFuture, FileOpener, FileScanConfig, FileSource,
};
use datafusion::datasource::projection::{ProjectionOpener, SplitProjection};
use datafusion::datasource::table_schema::TableSchema;
use datafusion::error::{DataFusionError, Result};
use datafusion::physical_expr::projection::ProjectionExprs;
use datafusion::physical_plan::metrics::ExecutionPlanMetricsSet;
use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt, TryFutureExt, TryStreamExt};
use object_store::{ObjectMeta, ObjectStore, ObjectStoreExt};
use orc_rust::projection::ProjectionMask;
use orc_rust::reader::AsyncChunkReader;
use orc_rust::ArrowReaderBuilder;

/// Rows per batch when the plan does not say.
const DEFAULT_BATCH_SIZE: usize = 8192;

/// DataFusion's file source for a warehouse table's ORC files.
#[derive(Clone)]
pub struct OrcTableSource {
    /// The table's columns: the files' (as the table declares them), then the partitions'.
    table_schema: TableSchema,
    /// The query's projection, split into the file columns to read and what is computed
    /// over them (partition columns included).
    projection: SplitProjection,
    batch_size: Option<usize>,
    metrics: ExecutionPlanMetricsSet,
}

impl OrcTableSource {
    pub fn new(table_schema: TableSchema) -> Self {
        Self {
            projection: SplitProjection::unprojected(&table_schema),
            table_schema,
            batch_size: None,
            metrics: ExecutionPlanMetricsSet::new(),
        }
    }
}

impl FileSource for OrcTableSource {
    fn create_file_opener(
        &self,
        store: Arc<dyn ObjectStore>,
        config: &FileScanConfig,
        _partition: usize,
    ) -> Result<Arc<dyn FileOpener>> {
        let columns = self
            .table_schema
            .file_schema()
            .project(&self.projection.file_indices)?;
        let opener = Arc::new(OrcFileOpener {
            store,
            table_file_schema: Arc::clone(self.table_schema.file_schema()),
            columns: Arc::new(columns),
            batch_size: self
                .batch_size
                .or(config.batch_size)
                .unwrap_or(DEFAULT_BATCH_SIZE),
        });
        ProjectionOpener::try_new(
            self.projection.clone(),
            opener,
            self.table_schema.file_schema(),
        )
    }

    fn table_schema(&self) -> &TableSchema {
        &self.table_schema
    }

    fn with_batch_size(&self, batch_size: usize) -> Arc<dyn FileSource> {
        Arc::new(Self {
            batch_size: Some(batch_size),
            ..self.clone()
        })
    }

    fn try_pushdown_projection(
        &self,
        projection: &ProjectionExprs,
    ) -> Result<Option<Arc<dyn FileSource>>> {
        let merged = self.projection.source.try_merge(projection)?;
        Ok(Some(Arc::new(Self {
            projection: SplitProjection::new(self.table_schema.file_schema(), &merged),
            ..self.clone()
        })))
    }

    fn projection(&self) -> Option<&ProjectionExprs> {
        Some(&self.projection.source)
    }

    fn metrics(&self) -> &ExecutionPlanMetricsSet {
        &self.metrics
    }

    fn file_type(&self) -> &str {
        "orc"
    }

    fn apply_expressions(
        &self,
        f: &mut dyn FnMut(
            &Arc<dyn datafusion::physical_plan::PhysicalExpr>,
        ) -> Result<datafusion::common::tree_node::TreeNodeRecursion>,
    ) -> Result<datafusion::common::tree_node::TreeNodeRecursion> {
        datafusion::physical_plan::apply_expression_roots(self.projection.source.iter(), f)
    }
}

/// Opens one ORC file and gives its rows as `columns`.
struct OrcFileOpener {
    store: Arc<dyn ObjectStore>,
    /// Every file column of the table, in order: Hive's `_colN` files are matched by it.
    table_file_schema: SchemaRef,
    /// The file columns the query reads, with the table's types.
    columns: SchemaRef,
    batch_size: usize,
}

impl FileOpener for OrcFileOpener {
    fn open(&self, file: PartitionedFile) -> Result<FileOpenFuture> {
        let reader = StoreReader {
            store: Arc::clone(&self.store),
            file: file.object_meta.clone(),
        };
        let table_file_schema = Arc::clone(&self.table_file_schema);
        let columns = Arc::clone(&self.columns);
        let batch_size = self.batch_size;
        let location = file.object_meta.location.clone();
        Ok(async move {
            let unreadable = |e: orc_rust::error::OrcError| {
                DataFusionError::Execution(format!(
                    "{location} is not a readable ORC file ({e}); every file in an ORC \
                     table's directory but hidden ones (named ._ or _...) is read as ORC"
                ))
            };
            let mut builder = ArrowReaderBuilder::try_new_async(reader)
                .await
                .map_err(unreadable)?;
            let root = builder.file_metadata().root_data_type().clone();
            let file_names: Vec<&str> = root.children().iter().map(|c| c.name()).collect();
            let sources = match_columns(&file_names, &table_file_schema, &columns);
            let mask = ProjectionMask::roots(
                &root,
                sources
                    .iter()
                    .flatten()
                    .map(|&i| root.children()[i].data_type().column_index()),
            );
            // The names the projected file columns have in the batches orc-rust gives.
            let read_names: Vec<Option<String>> = sources
                .iter()
                .map(|source| source.map(|i| root.children()[i].name().to_owned()))
                .collect();
            if let Some(range) = &file.range {
                builder = builder.with_file_byte_range(range.start as usize..range.end as usize);
            }
            let stream = builder
                .with_batch_size(batch_size)
                .with_projection(mask)
                .build_async()
                .map_err(DataFusionError::from)
                .map(move |batch| as_table_columns(&batch?, &read_names, &columns));
            Ok(stream.boxed())
        }
        .boxed())
    }
}

/// For each column the query reads, the index of the file column holding it: the one of
/// its name (any case, as Hive and Spark match ORC columns), or in a file whose columns are
/// all named `_colN` (Hive before 2.0 wrote no names), the one at the table column's
/// position. None: the file has no such column (added later), read as NULL.
fn match_columns(
    file_names: &[&str],
    table_file_schema: &Schema,
    columns: &Schema,
) -> Vec<Option<usize>> {
    let positional = !file_names.is_empty()
        && file_names.iter().all(|name| {
            name.strip_prefix("_col")
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        });
    columns
        .fields()
        .iter()
        .map(|field| {
            if positional {
                table_file_schema
                    .index_of(field.name())
                    .ok()
                    .filter(|&i| i < file_names.len())
            } else {
                file_names
                    .iter()
                    .position(|name| name.eq_ignore_ascii_case(field.name()))
            }
        })
        .collect()
}

/// A batch as the file gave it, as the table's `columns`: each cast to the table's type
/// (a value that does not fit, as Hive's schema evolution reads it, is NULL), a missing one
/// NULL.
fn as_table_columns(
    batch: &RecordBatch,
    read_names: &[Option<String>],
    columns: &SchemaRef,
) -> Result<RecordBatch> {
    let arrays = columns
        .fields()
        .iter()
        .zip(read_names)
        .map(|(field, name)| column(batch, name.as_deref(), field))
        .collect::<Result<Vec<ArrayRef>>>()?;
    let options = RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
    Ok(RecordBatch::try_new_with_options(
        Arc::clone(columns),
        arrays,
        &options,
    )?)
}

fn column(batch: &RecordBatch, name: Option<&str>, field: &FieldRef) -> Result<ArrayRef> {
    let Some(array) = name.and_then(|name| batch.column_by_name(name)) else {
        return Ok(new_null_array(field.data_type(), batch.num_rows()));
    };
    if array.data_type() == field.data_type() {
        return Ok(Arc::clone(array));
    }
    cast(array, field.data_type()).map_err(|e| {
        DataFusionError::Execution(format!(
            "column '{}' of an ORC file is {} where the table has {}, which it does not \
             convert to: {e}",
            field.name(),
            array.data_type(),
            field.data_type()
        ))
    })
}

/// orc-rust's reader over an object store: the file's size is known from the listing, so
/// only ranges are fetched.
struct StoreReader {
    store: Arc<dyn ObjectStore>,
    file: ObjectMeta,
}

impl AsyncChunkReader for StoreReader {
    fn len(&mut self) -> BoxFuture<'_, std::io::Result<u64>> {
        let size = self.file.size;
        async move { Ok(size) }.boxed()
    }

    fn get_bytes(&mut self, offset: u64, length: u64) -> BoxFuture<'_, std::io::Result<Bytes>> {
        if length == 0 {
            // An empty stream (a column of NULLs alone has no data): object stores refuse an
            // empty range.
            return async { Ok(Bytes::new()) }.boxed();
        }
        self.store
            .get_range(&self.file.location, offset..offset + length)
            .map_err(std::io::Error::from)
            .boxed()
    }
}
