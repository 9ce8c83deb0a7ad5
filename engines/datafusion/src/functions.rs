//! Hive functions that DataFusion lacks and that clients call on their own: every session
//! has them.
//!
//! - `current_database()` (alias `current_schema()`, as in Spark): the database unqualified
//!   names resolve in, which `USE` changes; Hive scripts and SQL editors ask it to know
//!   where a session is.

use datafusion::arrow::datatypes::DataType;
use datafusion::common::ScalarValue;
use datafusion::error::Result;
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use datafusion::prelude::SessionContext;

/// Registers the functions in a session's context.
pub fn register(ctx: &SessionContext) {
    ctx.register_udf(ScalarUDF::from(CurrentDatabase::new()));
}

/// `current_database()`: the session's default schema, read from the settings the query
/// runs with.
#[derive(Debug, PartialEq, Eq, Hash)]
struct CurrentDatabase {
    signature: Signature,
    aliases: Vec<String>,
}

impl CurrentDatabase {
    fn new() -> Self {
        Self {
            // Volatile, so that the planner does not fold it into a constant with settings
            // other than the session's; it is read when the query runs.
            signature: Signature::nullary(Volatility::Volatile),
            aliases: vec!["current_schema".to_owned()],
        }
    }
}

impl ScalarUDFImpl for CurrentDatabase {
    fn name(&self) -> &str {
        "current_database"
    }

    fn aliases(&self) -> &[String] {
        &self.aliases
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(DataType::Utf8)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let database = args.config_options.catalog.default_schema.clone();
        Ok(ColumnarValue::Scalar(ScalarValue::Utf8(Some(database))))
    }
}
