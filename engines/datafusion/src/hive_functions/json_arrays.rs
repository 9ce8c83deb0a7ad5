//! Spark's `json_array_length(json)` and `json_object_keys(json)`: the elements of the
//! outermost JSON array and the keys of the outermost JSON object, NULL for text that is not
//! one or is malformed. As Spark's Jackson parser, each reads the first value and ignores
//! what follows it (`[1] x` is 1).

use std::fmt;
use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, Int32Array, ListBuilder, StringBuilder};
use datafusion::arrow::datatypes::DataType;
use datafusion::error::Result;
use datafusion::logical_expr::ScalarUDF;
use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::encoding::strings_of;
use super::{bad_arguments, is_string, HiveFunction};

pub fn functions() -> Vec<ScalarUDF> {
    let json_text = |name: &str, types: &[DataType]| match types {
        [t] if is_string(t) || t.is_null() => Ok(vec![DataType::Utf8]),
        _ => Err(bad_arguments(name, "a JSON string", types)),
    };
    vec![
        HiveFunction::computed(
            "json_array_length",
            json_text,
            |_| Ok(DataType::Int32),
            json_array_length,
        )
        .udf(),
        HiveFunction::computed(
            "json_object_keys",
            json_text,
            |_| Ok(DataType::new_list(DataType::Utf8, true)),
            json_object_keys,
        )
        .udf(),
    ]
}

fn json_array_length(args: &[ArrayRef]) -> Result<ArrayRef> {
    let lengths: Int32Array = strings_of(&args[0])
        .into_iter()
        .map(|text| match first_value::<Value>(text?)? {
            Value::Array(elements) => Some(elements.len() as i32),
            _ => None,
        })
        .collect();
    Ok(Arc::new(lengths))
}

/// The keys in the order written, a key written twice twice, as Spark lists them.
fn json_object_keys(args: &[ArrayRef]) -> Result<ArrayRef> {
    let mut out = ListBuilder::new(StringBuilder::new());
    for text in strings_of(&args[0]) {
        match text
            .and_then(first_value::<ObjectKeys>)
            .and_then(|keys| keys.0)
        {
            Some(keys) => {
                for key in keys {
                    out.values().append_value(key);
                }
                out.append(true);
            }
            None => out.append_null(),
        }
    }
    Ok(Arc::new(out.finish()))
}

/// The first JSON value of `text`, `None` when it does not start with a well-formed one.
fn first_value<T: for<'de> Deserialize<'de>>(text: &str) -> Option<T> {
    serde_json::Deserializer::from_str(text)
        .into_iter::<T>()
        .next()?
        .ok()
}

/// The keys of a JSON object, read without keeping its values; `None` for another value.
struct ObjectKeys(Option<Vec<String>>);

impl<'de> Deserialize<'de> for ObjectKeys {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(KeysVisitor)
    }
}

struct KeysVisitor;

impl<'de> Visitor<'de> for KeysVisitor {
    type Value = ObjectKeys;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ObjectKeys, A::Error> {
        let mut keys = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            map.next_value::<IgnoredAny>()?;
            keys.push(key);
        }
        Ok(ObjectKeys(Some(keys)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ObjectKeys, A::Error> {
        // Read to its end, so that a malformed array is malformed JSON.
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(ObjectKeys(None))
    }

    fn visit_bool<E>(self, _: bool) -> Result<ObjectKeys, E> {
        Ok(ObjectKeys(None))
    }

    fn visit_i64<E>(self, _: i64) -> Result<ObjectKeys, E> {
        Ok(ObjectKeys(None))
    }

    fn visit_u64<E>(self, _: u64) -> Result<ObjectKeys, E> {
        Ok(ObjectKeys(None))
    }

    fn visit_f64<E>(self, _: f64) -> Result<ObjectKeys, E> {
        Ok(ObjectKeys(None))
    }

    fn visit_str<E>(self, _: &str) -> Result<ObjectKeys, E> {
        Ok(ObjectKeys(None))
    }

    fn visit_unit<E>(self) -> Result<ObjectKeys, E> {
        Ok(ObjectKeys(None))
    }
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

    #[tokio::test]
    async fn json_object_keys_lists_the_outermost_keys_as_written() {
        let engine = engine().await;
        let s = open(&engine);
        check(
            &engine,
            &s,
            "SELECT json_object_keys('{\"b\":1,\"a\":{\"c\":2},\"b\":3}'), \
             json_object_keys('[1]'), json_object_keys('{}'), json_object_keys('{\"a\":1} x'), \
             json_object_keys('{bad'), json_object_keys(NULL), json_object_keys('{\"a\":[1,}')",
            &["[b, a, b]", "NULL", "[]", "[a]", "NULL", "NULL", "NULL"],
        )
        .await;
    }
}
