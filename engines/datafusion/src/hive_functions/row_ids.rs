//! Spark's `monotonically_increasing_id()`: a `BIGINT` for each row, unique and increasing
//! within each partition of the rows, not consecutive. Spark packs a partition's number and
//! a row's number within it; here each batch of rows takes the next run of numbers from one
//! counter of the engine's, so the ids of a query's rows are unique across its partitions
//! (and its sessions), and grow with each batch a partition reads.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use datafusion::arrow::array::Int64Array;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::Result;
use datafusion::logical_expr::{
    ColumnarValue, Documentation, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
    Volatility,
};

pub fn functions() -> Vec<ScalarUDF> {
    vec![ScalarUDF::new_from_impl(RowIds {
        name: "monotonically_increasing_id",
        signature: Signature::nullary(Volatility::Volatile),
        next: Arc::new(AtomicI64::new(0)),
    })]
}

struct RowIds {
    name: &'static str,
    signature: Signature,
    /// The first id the next batch takes.
    next: Arc<AtomicI64>,
}

crate::functions::identified_by_name!(RowIds);

impl ScalarUDFImpl for RowIds {
    fn name(&self) -> &str {
        self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn documentation(&self) -> Option<&Documentation> {
        super::usage::documentation(self.name)
    }

    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(DataType::Int64)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let rows = args.number_rows as i64;
        let first = self.next.fetch_add(rows, Ordering::Relaxed);
        let ids: Int64Array = (first..first + rows).collect();
        Ok(ColumnarValue::Array(Arc::new(ids)))
    }
}
