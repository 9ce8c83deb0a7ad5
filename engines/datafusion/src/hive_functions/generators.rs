//! Hive's generators `explode`, `posexplode`, `stack` and `inline` (and Spark's
//! `explode_outer`, `posexplode_outer`, `inline_outer`) as functions of the
//! registry, so that `SHOW FUNCTIONS` lists them and `DESCRIBE FUNCTION` describes them as
//! Hive's do. Their calls where Hive takes them (a select list, `LATERAL VIEW`) are
//! rewritten before planning ([`crate::hive_syntax`]); a call anywhere else reaches these,
//! which refuse it, saying where a generator goes. (`json_tuple` is a function of its own,
//! [`super::strings`].)

use datafusion::arrow::datatypes::DataType;
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::{
    ColumnarValue, Documentation, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
    Volatility,
};

pub fn functions() -> Vec<ScalarUDF> {
    [
        "explode",
        "posexplode",
        "stack",
        "inline",
        "explode_outer",
        "posexplode_outer",
        "inline_outer",
    ]
    .into_iter()
    .map(|name| {
        ScalarUDF::new_from_impl(Generator {
            name,
            signature: Signature::variadic_any(Volatility::Immutable),
        })
    })
    .collect()
}

/// A generator called where it cannot give rows.
struct Generator {
    name: &'static str,
    signature: Signature,
}

crate::functions::identified_by_name!(Generator);

impl Generator {
    fn misplaced(&self) -> DataFusionError {
        DataFusionError::Plan(format!(
            "{} is a generator: it stands as a column of a select list (SELECT {}(...) \
             [AS (a, b)] FROM t) or in LATERAL VIEW {}(...) view AS a, ..., not inside \
             another expression",
            self.name, self.name, self.name
        ))
    }
}

impl ScalarUDFImpl for Generator {
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
        Err(self.misplaced())
    }

    fn invoke_with_args(&self, _: ScalarFunctionArgs) -> Result<ColumnarValue> {
        Err(self.misplaced())
    }
}
