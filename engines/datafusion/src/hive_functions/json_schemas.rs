//! Spark's `schema_of_json(json)`: the type Spark's JSON reader infers for a document,
//! written as Spark writes a type (`ARRAY<STRUCT<a: BIGINT, b: STRING>>`), so that
//! `from_json(col, schema_of_json('{"a": 1}'))` reads documents like the sample.
//!
//! Spark's inference (its JSON data source's, without options): an integer is a `BIGINT`
//! (a `DECIMAL(p,0)` beyond one), another number a `DOUBLE`, an object a struct of its keys
//! in name order, an array the type its elements share. Types that differ widen: `BIGINT`
//! and `DOUBLE` to `DOUBLE`, structs to the union of their fields, anything else to
//! `STRING`. Last, a NULL becomes a `STRING`, and a struct field with nothing known of it
//! is dropped.
//!
//! `from_json` needs its schema as it plans, so a call of a literal is replaced by its
//! answer before planning ([`as_literal`]); a call of a column is answered row by row.

use std::cmp::Ordering;

use datafusion::arrow::array::ArrayRef;
use datafusion::arrow::datatypes::DataType;
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::ScalarUDF;
use datafusion::sql::sqlparser::ast::{Expr as SqlExpr, Value, ValueWithSpan};

use super::encoding::{string_result, strings_of};
use super::json::Json;
use super::{bad_arguments, is_string, HiveFunction};

pub fn functions() -> Vec<ScalarUDF> {
    vec![HiveFunction::computed(
        "schema_of_json",
        |name, types| match types {
            [t] if is_string(t) || t.is_null() => Ok(vec![DataType::Utf8]),
            _ => Err(bad_arguments(name, "one JSON string", types)),
        },
        |_| Ok(DataType::Utf8),
        |args| {
            let schemas = strings_of(&args[0])
                .into_iter()
                .map(|json| json.map(schema_of_json).transpose())
                .collect::<Result<Vec<_>>>()?;
            Ok(string_result(schemas.into_iter()) as ArrayRef)
        },
    )
    .udf()]
}

/// `schema_of_json('literal')` as written by a user, replaced by the literal it answers, so
/// that the schema is known as the query is planned. A document that is not JSON is left
/// to the call, which fails the query saying so.
pub(crate) fn as_literal(expr: &mut SqlExpr) {
    let Some((name, args)) = crate::hive_syntax::plain_call(expr) else {
        return;
    };
    let (
        "schema_of_json",
        [SqlExpr::Value(ValueWithSpan {
            value: Value::SingleQuotedString(json),
            ..
        })],
    ) = (name.as_str(), &args[..])
    else {
        return;
    };
    if let Ok(schema) = schema_of_json(json) {
        *expr = SqlExpr::value(Value::SingleQuotedString(schema));
    }
}

/// The type Spark infers for the document `json` (its first JSON value; what follows is
/// ignored, as Spark's parser stops there), as Spark writes it.
pub(crate) fn schema_of_json(json: &str) -> Result<String> {
    if json.trim().is_empty() {
        return Ok("STRING".to_owned());
    }
    let mut parser = serde_json::Deserializer::from_str(json);
    let document: Json = serde::Deserialize::deserialize(&mut parser).map_err(|e| {
        DataFusionError::Execution(format!(
            "schema_of_json: the sample is not JSON ({e}); give it one JSON document"
        ))
    })?;
    let inferred = Inferred::of(&document);
    // Spark keeps a struct, or an array of them, that has no field left, where a type
    // with nothing known of it elsewhere is a string.
    let top = match &inferred {
        Inferred::Struct(_) => inferred.canonical().unwrap_or(Inferred::Struct(Vec::new())),
        Inferred::Array(element) if matches!(**element, Inferred::Struct(_)) => {
            let element = element.canonical().unwrap_or(Inferred::Struct(Vec::new()));
            Inferred::Array(Box::new(element))
        }
        other => other.canonical().unwrap_or(Inferred::String),
    };
    let mut written = String::new();
    top.write(&mut written);
    Ok(written)
}

/// A type as Spark's JSON inference knows it.
#[derive(Clone, Debug, PartialEq)]
enum Inferred {
    /// JSON `null`: nothing known yet.
    Null,
    Boolean,
    Long,
    /// A `DECIMAL(precision, 0)`: an integer beyond a `BIGINT`.
    Decimal(u8),
    Double,
    String,
    Array(Box<Inferred>),
    /// Fields in name order (Java's, of UTF-16 code units).
    Struct(Vec<(String, Inferred)>),
}

impl Inferred {
    fn of(value: &Json) -> Inferred {
        match value {
            Json::Null => Inferred::Null,
            Json::Bool(_) => Inferred::Boolean,
            Json::Integer(i) if i64::try_from(*i).is_ok() => Inferred::Long,
            // serde_json reads integers up to u64's as integers, and larger ones as
            // doubles: Spark's `DECIMAL(21..38, 0)` for those is a `DOUBLE` here.
            Json::Integer(i) => Inferred::Decimal(i.unsigned_abs().to_string().len() as u8),
            Json::Double(_) | Json::Number(_) => Inferred::Double,
            Json::String(_) => Inferred::String,
            Json::Array(items) => Inferred::Array(Box::new(
                items
                    .iter()
                    .map(Inferred::of)
                    .fold(Inferred::Null, Inferred::widened),
            )),
            Json::Object(members) => {
                let mut fields: Vec<(String, Inferred)> = members
                    .iter()
                    .map(|(name, value)| (name.clone(), Inferred::of(value)))
                    .collect();
                // A stable sort: a key given twice is two fields, as in Spark.
                fields.sort_by(|(a, _), (b, _)| java_order(a, b));
                Inferred::Struct(fields)
            }
        }
    }

    /// The type that holds values of both (Spark's `compatibleType`).
    fn widened(self, other: Inferred) -> Inferred {
        use Inferred::*;
        match (self, other) {
            (a, b) if a == b => a,
            (Null, t) | (t, Null) => t,
            (Long, Double) | (Double, Long) => Double,
            (Decimal(_), Double) | (Double, Decimal(_)) => Double,
            // A BIGINT is a DECIMAL(20,0) beside a decimal.
            (Long, Decimal(p)) | (Decimal(p), Long) => Decimal(p.max(20)),
            (Decimal(p), Decimal(q)) => Decimal(p.max(q)),
            (Array(a), Array(b)) => Array(Box::new(a.widened(*b))),
            (Struct(a), Struct(b)) => Struct(merged(a, b)),
            _ => String,
        }
    }

    /// The type as Spark reports it: NULL a `STRING`, a struct without the fields of which
    /// nothing is known (`None` when none is left), an array of such a struct `None`.
    fn canonical(&self) -> Option<Inferred> {
        match self {
            Inferred::Null => Some(Inferred::String),
            Inferred::Array(element) => element.canonical().map(|e| Inferred::Array(Box::new(e))),
            Inferred::Struct(fields) => {
                let kept: Vec<(String, Inferred)> = fields
                    .iter()
                    .filter(|(name, _)| !name.is_empty())
                    .filter_map(|(name, t)| t.canonical().map(|t| (name.clone(), t)))
                    .collect();
                (!kept.is_empty()).then_some(Inferred::Struct(kept))
            }
            other => Some(other.clone()),
        }
    }

    fn write(&self, out: &mut String) {
        match self {
            Inferred::Null | Inferred::String => out.push_str("STRING"),
            Inferred::Boolean => out.push_str("BOOLEAN"),
            Inferred::Long => out.push_str("BIGINT"),
            Inferred::Decimal(precision) => out.push_str(&format!("DECIMAL({precision},0)")),
            Inferred::Double => out.push_str("DOUBLE"),
            Inferred::Array(element) => {
                out.push_str("ARRAY<");
                element.write(out);
                out.push('>');
            }
            Inferred::Struct(fields) => {
                out.push_str("STRUCT<");
                for (i, (name, t)) in fields.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    out.push_str(&quoted_if_needed(name));
                    out.push_str(": ");
                    t.write(out);
                }
                out.push('>');
            }
        }
    }
}

/// Two structs' fields, both in name order, as one struct's: a name in both has the type
/// that holds both.
fn merged(a: Vec<(String, Inferred)>, b: Vec<(String, Inferred)>) -> Vec<(String, Inferred)> {
    let mut out = Vec::with_capacity(a.len().max(b.len()));
    let (mut a, mut b) = (a.into_iter().peekable(), b.into_iter().peekable());
    loop {
        let order = match (a.peek(), b.peek()) {
            (Some((x, _)), Some((y, _))) => java_order(x, y),
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (None, None) => return out,
        };
        match order {
            Ordering::Less => out.extend(a.next()),
            Ordering::Greater => out.extend(b.next()),
            Ordering::Equal => {
                let ((name, x), (_, y)) = (a.next().expect("peeked"), b.next().expect("peeked"));
                out.push((name, x.widened(y)));
            }
        }
    }
}

/// Java's `String.compareTo`: by UTF-16 code units.
fn java_order(a: &str, b: &str) -> Ordering {
    a.encode_utf16().cmp(b.encode_utf16())
}

/// A field name as Spark writes it in a type: as it is when it is an identifier of ASCII
/// letters, digits and `_` not starting with a digit, else in backticks (doubled inside).
fn quoted_if_needed(name: &str) -> String {
    let plain = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if plain {
        name.to_owned()
    } else {
        format!("`{}`", name.replace('`', "``"))
    }
}

#[cfg(test)]
mod tests;
