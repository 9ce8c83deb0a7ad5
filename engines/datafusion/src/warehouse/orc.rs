//! ORC tables (`STORED AS ORC`): Hive's and Spark's ORC files read as a warehouse table,
//! and the warehouse's rows written as ORC files that Hive and Spark read.
//!
//! A table's files are listed by DataFusion as any table's (partition directories, pruning),
//! and, as Hive does, every file of the directory is data but hidden ones (a name starting
//! with `.` or `_`: Spark's `_SUCCESS` and `.crc` files, the warehouse's metadata), whatever
//! its name: Hive names its ORC files `000000_0`, Spark `part-...-c000.zstd.orc`.
//!
//! - [`read`]: each file's columns matched to the table's (schema evolution, Hive's
//!   unnamed `_colN` columns).
//! - [`write`]: orc-rust's writer under DataFusion's file sink, and the types it cannot write,
//!   refused up front.
//!
//! A table's columns, when an EXTERNAL table leaves them out, are datafusion-orc's reading
//! of the files' schemas.

mod read;
mod write;

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::catalog::Session;
use datafusion::common::{GetExt, Statistics};
use datafusion::datasource::file_format::file_compression_type::FileCompressionType;
use datafusion::datasource::file_format::{format_as_file_type, FileFormat, FileFormatFactory};
use datafusion::datasource::physical_plan::{
    FileGroup, FileScanConfig, FileSinkConfig, FileSource,
};
use datafusion::datasource::sink::DataSinkExec;
use datafusion::datasource::source::DataSourceExec;
use datafusion::datasource::table_schema::TableSchema;
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::dml::InsertOp;
use datafusion::logical_expr::{LogicalPlan, LogicalPlanBuilder};
use datafusion::physical_expr::LexRequirement;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::prelude::SessionContext;
use object_store::path::Path;
use object_store::{ObjectMeta, ObjectStore};

use read::OrcTableSource;
pub use write::check_writable;
use write::OrcSink;

/// The extension of the files the warehouse writes (Hive's are read whatever their names).
const EXTENSION: &str = "orc";

/// DataFusion's file format for ORC tables: reads with [`OrcTableSource`], writes with
/// [`OrcSink`].
#[derive(Debug, Default)]
pub struct OrcTableFormat;

/// Whether a listed file is data in Hive's sense: not hidden (a name starting with `.` or
/// `_`), as Hive's and Spark's readers decide.
pub fn is_data_file(path: &Path) -> bool {
    path.filename()
        .is_some_and(|name| !name.starts_with('.') && !name.starts_with('_'))
}

#[async_trait]
impl FileFormat for OrcTableFormat {
    fn get_ext(&self) -> String {
        EXTENSION.to_owned()
    }

    fn get_ext_with_compression(&self, _compression: &FileCompressionType) -> Result<String> {
        Ok(EXTENSION.to_owned())
    }

    fn compression_type(&self) -> Option<FileCompressionType> {
        None
    }

    async fn infer_schema(
        &self,
        state: &dyn Session,
        store: &Arc<dyn ObjectStore>,
        objects: &[ObjectMeta],
    ) -> Result<SchemaRef> {
        let data: Vec<ObjectMeta> = objects
            .iter()
            .filter(|o| is_data_file(&o.location))
            .cloned()
            .collect();
        if data.is_empty() {
            return Err(DataFusionError::Plan(
                "there are no ORC files to take the table's columns from; name the columns \
                 (CREATE EXTERNAL TABLE t (c type, ...) STORED AS ORC LOCATION ...)"
                    .to_owned(),
            ));
        }
        datafusion_orc::OrcFormat
            .infer_schema(state, store, &data)
            .await
    }

    async fn infer_stats(
        &self,
        _state: &dyn Session,
        _store: &Arc<dyn ObjectStore>,
        table_schema: SchemaRef,
        _object: &ObjectMeta,
    ) -> Result<Statistics> {
        // Unknown: a file's statistics would cost a read of its footer at every query.
        Ok(Statistics::new_unknown(&table_schema))
    }

    async fn create_physical_plan(
        &self,
        _state: &dyn Session,
        mut conf: FileScanConfig,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        for group in &mut conf.file_groups {
            if group.iter().any(|f| !is_data_file(&f.object_meta.location)) {
                let files = std::mem::replace(group, FileGroup::new(Vec::new()))
                    .into_inner()
                    .into_iter()
                    .filter(|f| is_data_file(&f.object_meta.location))
                    .collect();
                *group = FileGroup::new(files);
            }
        }
        Ok(DataSourceExec::from_data_source(conf))
    }

    async fn create_writer_physical_plan(
        &self,
        input: Arc<dyn ExecutionPlan>,
        _state: &dyn Session,
        conf: FileSinkConfig,
        order_requirements: Option<LexRequirement>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        if conf.insert_op != InsertOp::Append {
            return Err(DataFusionError::NotImplemented(
                "ORC files are only appended; the warehouse replaces files itself".to_owned(),
            ));
        }
        let sink = Arc::new(OrcSink::new(conf));
        Ok(Arc::new(DataSinkExec::new(input, sink, order_requirements)))
    }

    fn file_source(&self, table_schema: TableSchema) -> Arc<dyn FileSource> {
        Arc::new(OrcTableSource::new(table_schema))
    }
}

/// [`OrcTableFormat`] as DataFusion's `COPY TO` plans take a format.
#[derive(Debug, Default)]
struct OrcFormatFactory;

impl GetExt for OrcFormatFactory {
    fn get_ext(&self) -> String {
        EXTENSION.to_owned()
    }
}

impl FileFormatFactory for OrcFormatFactory {
    fn create(
        &self,
        _state: &dyn Session,
        _options: &HashMap<String, String>,
    ) -> Result<Arc<dyn FileFormat>> {
        Ok(Arc::new(OrcTableFormat))
    }

    fn default(&self) -> Arc<dyn FileFormat> {
        Arc::new(OrcTableFormat)
    }
}

/// Writes the rows of `plan` as ORC files under the directory `path`, in Hive's
/// `col=value/` directories of the `partition_by` columns (the plan's last ones); returns
/// what DataFusion's writes return, a batch holding the row count.
pub async fn write(
    context: &SessionContext,
    plan: LogicalPlan,
    path: &str,
    partition_by: Vec<String>,
    table: &str,
) -> Result<Vec<RecordBatch>> {
    let schema = plan.schema().as_arrow().clone();
    check_writable(
        schema
            .fields()
            .iter()
            .filter(|f| !partition_by.contains(f.name()))
            .map(|f| f.as_ref()),
        table,
    )?;
    let copy = LogicalPlanBuilder::copy_to(
        plan,
        path.to_owned(),
        format_as_file_type(Arc::new(OrcFormatFactory)),
        HashMap::new(),
        partition_by,
    )?
    .build()?;
    context.execute_logical_plan(copy).await?.collect().await
}

#[cfg(test)]
mod tests;
