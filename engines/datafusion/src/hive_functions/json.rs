//! Hive's JSON functions: `get_json_object(json, '$.path')` and `json_tuple(json, k1, ...)`,
//! which read JSON text and give values as Hive's Jackson writes them ([`Json`]): a string
//! without its quotes, another value as compact JSON text with its object keys in the
//! text's order and its fractional numbers as Java writes a `DOUBLE` (`1.0E7`).

use datafusion::arrow::array::{Array, ArrayRef, AsArray, StringBuilder};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{Result, ScalarValue};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

use super::bad_arguments;
use super::HiveFunction;

pub fn functions() -> Vec<ScalarUDF> {
    vec![
        ScalarUDF::new_from_impl(GetJsonObject::new()),
        HiveFunction::computed(
            "json_tuple",
            json_tuple_types,
            super::string_tuple_type,
            json_tuple,
        )
        .udf(),
    ]
}

fn string_like(t: &DataType) -> bool {
    super::is_string(t) || t.is_null()
}

/// A JSON value as Jackson reads it for Hive: an object's members in the text's order.
/// `to_json` and `from_json` ([`super::json_values`]) write and read their JSON through it
/// too, so all the JSON functions write numbers and keys alike.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Json {
    Null,
    Bool(bool),
    Integer(i128),
    Double(f64),
    /// A number written as these digits: a `DECIMAL` keeps its scale (`1.50`), as Spark's
    /// `to_json` writes it.
    Number(String),
    String(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

impl Json {
    /// An object's value of `key`: the last given, as a Java map keeps it.
    pub(super) fn member<'a>(members: &'a [(String, Json)], key: &str) -> Option<&'a Json> {
        members.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// The value as Hive's JSON functions return it: a string without its quotes, NULL for
    /// JSON null, any other value as compact JSON text.
    fn hive_text(&self) -> Option<String> {
        match self {
            Json::Null => None,
            Json::String(s) => Some(s.clone()),
            other => {
                let mut text = String::new();
                other.write(&mut text);
                Some(text)
            }
        }
    }

    /// Compact JSON text, as Jackson writes it: strings escaped as JSON requires, numbers
    /// as Java writes a `long` or a `double`.
    pub(super) fn write(&self, out: &mut String) {
        let quoted = |out: &mut String, s: &str| {
            out.push_str(&serde_json::to_string(s).unwrap_or_default());
        };
        match self {
            Json::Null => out.push_str("null"),
            Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Json::Integer(i) => out.push_str(&i.to_string()),
            Json::Double(x) => out.push_str(&super::printf::java_double(*x)),
            Json::Number(digits) => out.push_str(digits),
            Json::String(s) => quoted(out, s),
            Json::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    item.write(out);
                }
                out.push(']');
            }
            Json::Object(members) => {
                out.push('{');
                for (i, (key, value)) in members.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    quoted(out, key);
                    out.push(':');
                    value.write(out);
                }
                out.push('}');
            }
        }
    }
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        deserializer.deserialize_any(JsonVisitor)
    }
}

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E>(self) -> std::result::Result<Json, E> {
        Ok(Json::Null)
    }

    fn visit_bool<E>(self, b: bool) -> std::result::Result<Json, E> {
        Ok(Json::Bool(b))
    }

    fn visit_i64<E>(self, i: i64) -> std::result::Result<Json, E> {
        Ok(Json::Integer(i.into()))
    }

    fn visit_u64<E>(self, i: u64) -> std::result::Result<Json, E> {
        Ok(Json::Integer(i.into()))
    }

    fn visit_f64<E>(self, x: f64) -> std::result::Result<Json, E> {
        Ok(Json::Double(x))
    }

    fn visit_str<E>(self, s: &str) -> std::result::Result<Json, E> {
        Ok(Json::String(s.to_owned()))
    }

    fn visit_string<E>(self, s: String) -> std::result::Result<Json, E> {
        Ok(Json::String(s))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Json, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Json::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Json, A::Error> {
        let mut members = Vec::new();
        while let Some(member) = map.next_entry::<String, Json>()? {
            members.push(member);
        }
        Ok(Json::Object(members))
    }
}

/// `get_json_object(json, path)`: the value at a JSONPath (`$`, `.name`, `['name']`,
/// `[n]`, `[*]`) in a JSON text, as Hive returns it: a string without its quotes, any other
/// value as JSON text; NULL when the text is not JSON, the path is malformed or leads
/// nowhere, or the value is JSON null.
#[derive(Debug, PartialEq, Eq, Hash)]
struct GetJsonObject {
    signature: Signature,
}

impl GetJsonObject {
    fn new() -> Self {
        Self {
            signature: Signature::user_defined(Volatility::Immutable),
        }
    }
}

impl ScalarUDFImpl for GetJsonObject {
    fn name(&self) -> &str {
        "get_json_object"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        match types {
            [a, b] if string_like(a) && string_like(b) => Ok(vec![DataType::Utf8; 2]),
            _ => Err(bad_arguments(
                self.name(),
                "(JSON text, JSONPath such as '$.a.b[0]')",
                types,
            )),
        }
    }

    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(DataType::Utf8)
    }

    fn documentation(&self) -> Option<&datafusion::logical_expr::Documentation> {
        super::usage::documentation("get_json_object")
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let rows = args.number_rows;
        let arrays = ColumnarValue::values_to_arrays(&args.args)?;
        let (json, path) = (arrays[0].as_string::<i32>(), arrays[1].as_string::<i32>());
        // A constant path (the usual case) is parsed once.
        let constant = match &args.args[1] {
            ColumnarValue::Scalar(ScalarValue::Utf8(Some(p))) => Some(parse_path(p)),
            _ => None,
        };
        let mut out = StringBuilder::with_capacity(rows, rows * 8);
        for i in 0..rows {
            if json.is_null(i) || path.is_null(i) {
                out.append_null();
                continue;
            }
            let parsed;
            let steps = match &constant {
                Some(steps) => steps.as_deref(),
                None => {
                    parsed = parse_path(path.value(i));
                    parsed.as_deref()
                }
            };
            let value = steps.and_then(|steps| {
                let document: Json = serde_json::from_str(json.value(i)).ok()?;
                select(&document, steps)
            });
            out.append_option(value.as_ref().and_then(Json::hive_text));
        }
        super::columnar(std::sync::Arc::new(out.finish()), &args.args)
    }
}

fn json_tuple_types(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    super::string_tuple_types(name, types, "(JSON text, key, ...)")
}

/// `json_tuple(json, k1, k2, ...)`: the values of the keys of a JSON object, as Hive's
/// `GenericUDTFJSONTuple` gives them ([`Json::hive_text`]); every value NULL when the text is
/// NULL, not JSON or not an object, a value NULL for a missing or NULL key. The text is
/// parsed once for all the keys.
fn json_tuple(args: &[ArrayRef]) -> Result<ArrayRef> {
    super::string_tuple(args, |text, keys| {
        let object = text
            .and_then(|text| serde_json::from_str::<Json>(text).ok())
            .and_then(|document| match document {
                Json::Object(members) => Some(members),
                _ => None,
            });
        keys.iter()
            .map(|key| {
                let members = object.as_deref()?;
                Json::member(members, (*key)?)?.hive_text()
            })
            .collect()
    })
}

/// One step of a JSONPath.
#[derive(Clone, Debug, PartialEq)]
enum Step {
    Key(String),
    Index(usize),
    /// `[*]`: every element, the results gathered in an array.
    All,
}

/// A JSONPath as steps; `None` when it is malformed (Hive then answers NULL).
fn parse_path(path: &str) -> Option<Vec<Step>> {
    let mut rest = path.trim().strip_prefix('$')?;
    let mut steps = Vec::new();
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('.') {
            let end = after.find(['.', '[']).unwrap_or(after.len());
            if end == 0 {
                return None;
            }
            let key = &after[..end];
            steps.push(if key == "*" {
                Step::All
            } else {
                Step::Key(key.to_owned())
            });
            rest = &after[end..];
        } else if let Some(after) = rest.strip_prefix('[') {
            let end = after.find(']')?;
            let inside = after[..end].trim();
            steps.push(if inside == "*" {
                Step::All
            } else if let Some(key) = inside
                .strip_prefix('\'')
                .and_then(|k| k.strip_suffix('\''))
                .or_else(|| inside.strip_prefix('"').and_then(|k| k.strip_suffix('"')))
            {
                Step::Key(key.to_owned())
            } else {
                Step::Index(inside.parse().ok()?)
            });
            rest = &after[end + 1..];
        } else {
            return None;
        }
    }
    Some(steps)
}

fn select(value: &Json, steps: &[Step]) -> Option<Json> {
    let Some((step, rest)) = steps.split_first() else {
        return Some(value.clone());
    };
    match (step, value) {
        (Step::Key(key), Json::Object(members)) => select(Json::member(members, key)?, rest),
        (Step::Index(i), Json::Array(items)) => select(items.get(*i)?, rest),
        (Step::All, Json::Array(items)) => gathered(items.iter(), rest),
        (Step::All, Json::Object(members)) => gathered(members.iter().map(|(_, v)| v), rest),
        _ => None,
    }
}

/// `[*]`'s values, each followed along the rest of the path, gathered in an array.
fn gathered<'a>(values: impl Iterator<Item = &'a Json>, rest: &[Step]) -> Option<Json> {
    let items: Vec<Json> = values.filter_map(|v| select(v, rest)).collect();
    (!items.is_empty()).then_some(Json::Array(items))
}
