//! Spark's `json_array_length(json)`: the elements of the outermost JSON array, NULL for
//! text that is not one or is malformed. As Spark's Jackson parser, it reads the first
//! value and ignores what follows it (`[1] x` is 1).

use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, Int32Array};
use datafusion::arrow::datatypes::DataType;
use datafusion::error::Result;
use datafusion::logical_expr::ScalarUDF;
use serde_json::Value;

use super::encoding::strings_of;
use super::{bad_arguments, is_string, HiveFunction};

pub fn functions() -> Vec<ScalarUDF> {
    vec![HiveFunction::computed(
        "json_array_length",
        |name, types| match types {
            [t] if is_string(t) || t.is_null() => Ok(vec![DataType::Utf8]),
            _ => Err(bad_arguments(name, "a JSON string", types)),
        },
        |_| Ok(DataType::Int32),
        json_array_length,
    )
    .udf()]
}

fn json_array_length(args: &[ArrayRef]) -> Result<ArrayRef> {
    let lengths: Int32Array = strings_of(&args[0])
        .into_iter()
        .map(|text| {
            let first = serde_json::Deserializer::from_str(text?)
                .into_iter::<Value>()
                .next()?;
            match first.ok()? {
                Value::Array(elements) => Some(elements.len() as i32),
                _ => None,
            }
        })
        .collect();
    Ok(Arc::new(lengths))
}

#[cfg(test)]
mod tests {
    use crate::hive_functions::tests::check;
    use crate::test_util::{engine, open};

    // Every expected value is Spark's.
    #[tokio::test]
    async fn json_array_length_counts_the_outermost_array() {
        let engine = engine().await;
        let s = open(&engine);
        check(
            &engine,
            &s,
            "SELECT json_array_length('[1,2,3,{\"f1\":1,\"f2\":[5,6]},4]'), \
             json_array_length('[]'), json_array_length('[1,2'), \
             json_array_length('{\"a\":1}'), json_array_length(NULL), json_array_length('1'), \
             json_array_length(' [ 1 , [2,3] ] '), json_array_length(''), \
             json_array_length('[1] x'), json_array_length('[null]'), \
             json_array_length('[\"a]\"]'), json_array_length('[1,]')",
            &[
                "5", "0", "NULL", "NULL", "NULL", "NULL", "2", "NULL", "1", "1", "1", "NULL",
            ],
        )
        .await;
    }
}
