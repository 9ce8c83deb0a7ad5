//! Hive's collection functions: `size`, `sort_array` and `str_to_map` (and Spark's
//! `array_size` and `map_contains_key`), the aggregates
//! `collect_list` and `collect_set`, and `generator_field`, by which the generators read
//! their structs' fields.

use std::collections::{HashSet, VecDeque};
use std::sync::Arc;

use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, MapBuilder, MapFieldNames, StringBuilder,
};
use datafusion::arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::{DataFusionError, Result, ScalarValue};
use datafusion::functions::expr_fn::coalesce;
use datafusion::functions_nested::expr_fn::{
    array_has, array_length, array_sort, cardinality, map_keys,
};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::{
    cast, lit, Accumulator, AggregateUDF, AggregateUDFImpl, ColumnarValue, Expr,
    ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};

use super::{bad_arguments, literal_string, HiveFunction};

pub fn functions() -> Vec<ScalarUDF> {
    vec![
        HiveFunction::rewrite("reverse", string_or_array, |t| Ok(t[0].clone()), reverse).udf(),
        HiveFunction::rewrite(
            "array_sort",
            |name, types| match types {
                [t, ..] if is_array(t) || t.is_null() => Ok(types.to_vec()),
                _ => Err(bad_arguments(name, "an array", types)),
            },
            |t| Ok(t[0].clone()),
            array_sort_nulls_last,
        )
        .udf(),
        HiveFunction::rewrite("size", array_or_map, |_| Ok(DataType::Int32), size).udf(),
        HiveFunction::rewrite(
            "array_size",
            |name, types| match types {
                [t] if is_array(t) => Ok(types.to_vec()),
                [DataType::Null] => Ok(vec![DataType::new_list(DataType::Null, true)]),
                _ => Err(bad_arguments(name, "an array", types)),
            },
            |_| Ok(DataType::Int32),
            array_size,
        )
        .udf(),
        HiveFunction::rewrite(
            "map_contains_key",
            map_and_key,
            |_| Ok(DataType::Boolean),
            map_contains_key,
        )
        .udf(),
        HiveFunction::rewrite(
            "sort_array",
            sort_array_types,
            |t| Ok(t[0].clone()),
            sort_array,
        )
        .udf(),
        ScalarUDF::new_from_impl(StrToMap::new()),
        ScalarUDF::new_from_impl(GeneratorField::new()),
    ]
}

/// `generator_field(struct, i, count)`: the `i`th field (from 0) of a struct of `count`
/// fields, NULL for a NULL struct: the columns of the generators `inline`, `json_tuple`
/// and `parse_url_tuple`, which [`crate::hive_syntax`] writes as these. By position, as
/// an alias list names them (`AS (a, b)`; `count` is its length, which must be the
/// structs' number of fields, as in Hive), where DataFusion's `get_field` takes a name; and
/// unlike `get_field`, which the optimizer moves below the projection computing the
/// struct, repeating that (a JSON text parsed again for each key), the struct is computed
/// once and shared by its columns.
#[derive(Debug, PartialEq, Eq, Hash)]
struct GeneratorField {
    signature: Signature,
}

impl GeneratorField {
    fn new() -> Self {
        Self {
            signature: Signature::any(3, Volatility::Immutable),
        }
    }

    /// The field `i` of a struct type of `count` fields, with the arguments' constants.
    fn field(types: &[DataType], constants: &[Option<&ScalarValue>]) -> Result<(usize, FieldRef)> {
        let constant = |at: usize| -> Option<usize> {
            match constants
                .get(at)
                .copied()
                .flatten()?
                .cast_to(&DataType::Int64)
                .ok()?
            {
                ScalarValue::Int64(Some(n)) => usize::try_from(n).ok(),
                _ => None,
            }
        };
        let (Some(i), Some(count)) = (constant(1), constant(2)) else {
            return Err(DataFusionError::Plan(
                "generator_field takes a struct and two integer constants".into(),
            ));
        };
        match &types[0] {
            DataType::Struct(fields) if fields.len() == count && i < count => {
                Ok((i, Arc::clone(&fields[i])))
            }
            DataType::Struct(fields) => Err(DataFusionError::Plan(format!(
                // Only inline's count can differ: a tuple's struct has a field per name.
                "inline's structs have {} fields, and the AS clause names {count}",
                fields.len()
            ))),
            other => Err(DataFusionError::Plan(format!(
                "the generator's values are {other}, not structs: inline takes an array of structs"
            ))),
        }
    }
}

impl ScalarUDFImpl for GeneratorField {
    fn name(&self) -> &str {
        "generator_field"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn documentation(&self) -> Option<&datafusion::logical_expr::Documentation> {
        super::usage::documentation("generator_field")
    }

    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Err(DataFusionError::Internal(
            "generator_field's type is read from its arguments".into(),
        ))
    }

    fn return_field_from_args(
        &self,
        args: datafusion::logical_expr::ReturnFieldArgs,
    ) -> Result<FieldRef> {
        let types: Vec<DataType> = args
            .arg_fields
            .iter()
            .map(|f| f.data_type().clone())
            .collect();
        let (_, field) = Self::field(&types, args.scalar_arguments)?;
        Ok(Arc::new(field.as_ref().clone().with_nullable(true)))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let types: Vec<DataType> = args
            .arg_fields
            .iter()
            .map(|f| f.data_type().clone())
            .collect();
        let constants: Vec<Option<&ScalarValue>> = args
            .args
            .iter()
            .map(|a| match a {
                ColumnarValue::Scalar(s) => Some(s),
                ColumnarValue::Array(_) => None,
            })
            .collect();
        let (i, _) = Self::field(&types, &constants)?;
        let structs = args.args[0].to_array(args.number_rows)?;
        let structs = structs.as_struct();
        let values = structs.column(i);
        // A NULL struct's fields are NULL, whatever its children hold.
        let nulls = datafusion::arrow::buffer::NullBuffer::union(structs.nulls(), values.nulls());
        let values = values.to_data().into_builder().nulls(nulls).build()?;
        super::columnar(
            datafusion::arrow::array::make_array(values),
            &args.args[..1],
        )
    }
}

pub fn aggregates() -> Vec<AggregateUDF> {
    vec![
        AggregateUDF::new_from_impl(Collect::new("collect_list", false)),
        AggregateUDF::new_from_impl(Collect::new("collect_set", true)),
    ]
}

/// `size(array or map)`: its number of elements; -1 for NULL, as Hive (and Spark unless
/// ANSI mode) answers.
fn size(args: Vec<Expr>, types: &[DataType]) -> Result<Expr> {
    let value = args.into_iter().next().expect("one argument");
    datafusion::logical_expr::when(value.clone().is_null(), lit(-1i32))
        .otherwise(element_count(value, &types[0]))
}

/// `array_size(array)` (Spark's): the elements of an array, NULL for NULL.
fn array_size(args: Vec<Expr>, types: &[DataType]) -> Result<Expr> {
    let value = args.into_iter().next().expect("one argument");
    datafusion::logical_expr::when(value.clone().is_null(), lit(ScalarValue::Int32(None)))
        .otherwise(element_count(value, &types[0]))
}

/// The elements of an array, or the entries of a map, as an `INT`: `size`'s and
/// `array_size`'s count.
fn element_count(value: Expr, t: &DataType) -> Expr {
    // array_length counts the outer array only (cardinality would count nested elements),
    // and is NULL for an empty one.
    let count = match t {
        DataType::Map(..) => cardinality(value),
        _ => coalesce(vec![array_length(value.clone()), lit(0u64)]),
    };
    cast(count, DataType::Int32)
}

/// `map_contains_key(map, key)` (Spark's): whether the map has the key.
fn map_contains_key(args: Vec<Expr>, _: &[DataType]) -> Result<Expr> {
    let [map, key] = <[Expr; 2]>::try_from(args).expect("two arguments");
    Ok(array_has(map_keys(map), key))
}

fn map_and_key(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    match types {
        [map @ DataType::Map(entries, _), _] => match entries.data_type() {
            DataType::Struct(fields) if fields.len() == 2 => {
                Ok(vec![map.clone(), fields[0].data_type().clone()])
            }
            _ => Err(bad_arguments(name, "(map, key)", types)),
        },
        _ => Err(bad_arguments(name, "(map, key)", types)),
    }
}

/// `sort_array(array[, ascending])`: sorted ascending with NULLs first (Hive's order), or
/// descending with NULLs last.
fn sort_array(args: Vec<Expr>, _: &[DataType]) -> Result<Expr> {
    let mut args = args.into_iter();
    let array = args.next().expect("an array");
    let ascending = match args.next() {
        None => true,
        Some(Expr::Literal(ScalarValue::Boolean(Some(ascending)), _)) => ascending,
        Some(other) if literal_string(&other).is_some() => true,
        Some(_) => {
            return Err(datafusion::error::DataFusionError::Plan(
                "sort_array: the order must be a constant true (ascending) or false".into(),
            ))
        }
    };
    Ok(if ascending {
        array_sort(array, lit("ASC"), lit("NULLS FIRST"))
    } else {
        array_sort(array, lit("DESC"), lit("NULLS LAST"))
    })
}

fn is_array(t: &DataType) -> bool {
    matches!(
        t,
        DataType::List(_) | DataType::LargeList(_) | DataType::FixedSizeList(..)
    )
}

fn array_or_map(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    match types {
        [t] if is_array(t) || matches!(t, DataType::Map(..)) => Ok(types.to_vec()),
        [DataType::Null] => Ok(vec![DataType::new_list(DataType::Null, true)]),
        _ => Err(bad_arguments(name, "an array or a map", types)),
    }
}

fn sort_array_types(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    match types {
        [t] if is_array(t) => Ok(types.to_vec()),
        [t, DataType::Boolean] if is_array(t) => Ok(types.to_vec()),
        _ => Err(bad_arguments(name, "(array[, ascending boolean])", types)),
    }
}

/// `collect_list(x)` and `collect_set(x)`: the group's non-NULL values as an array, in the
/// order they were read (`collect_set` without repeats); an empty array for a group with
/// none, as in Hive and Spark.
#[derive(Debug, PartialEq, Eq, Hash)]
struct Collect {
    name: &'static str,
    distinct: bool,
    signature: Signature,
}

impl Collect {
    fn new(name: &'static str, distinct: bool) -> Self {
        Self {
            name,
            distinct,
            signature: Signature::any(1, Volatility::Immutable),
        }
    }
}

impl AggregateUDFImpl for Collect {
    fn name(&self) -> &str {
        self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        Ok(DataType::new_list(arg_types[0].clone(), true))
    }

    fn documentation(&self) -> Option<&datafusion::logical_expr::Documentation> {
        super::usage::documentation(self.name)
    }

    fn return_field(&self, arg_fields: &[FieldRef]) -> Result<FieldRef> {
        // Never NULL: a group without values collects an empty array.
        let data_type = self.return_type(&[arg_fields[0].data_type().clone()])?;
        Ok(Arc::new(Field::new(self.name, data_type, false)))
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        let data_type = DataType::new_list(args.input_fields[0].data_type().clone(), true);
        Ok(vec![super::state_field(&args, "values", data_type, true)])
    }

    fn accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        let data_type = element_type(args.return_field.data_type());
        Ok(Box::new(CollectAccumulator {
            data_type,
            values: Vec::new(),
            seen: self.distinct.then(HashSet::new),
        }))
    }

    fn default_value(&self, data_type: &DataType) -> Result<ScalarValue> {
        let item = element_type(data_type);
        Ok(ScalarValue::List(ScalarValue::new_list_nullable(
            &[],
            &item,
        )))
    }

    /// Over a window frame that slides (`ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING`), the
    /// frame's values, which rows leave as others enter.
    fn create_sliding_accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        let data_type = element_type(args.return_field.data_type());
        Ok(Box::new(SlidingCollect {
            data_type,
            values: VecDeque::new(),
            distinct: self.distinct,
        }))
    }
}

/// The type of the elements of the collected array `data_type`.
fn element_type(data_type: &DataType) -> DataType {
    match data_type {
        DataType::List(item) => item.data_type().clone(),
        other => other.clone(),
    }
}

/// The non-NULL values of a sliding window frame, in the order they entered it;
/// `collect_set`'s repeats are dropped when the frame's array is made.
#[derive(Debug)]
struct SlidingCollect {
    data_type: DataType,
    values: VecDeque<ScalarValue>,
    distinct: bool,
}

impl Accumulator for SlidingCollect {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        let array = values[0].as_ref();
        for i in 0..array.len() {
            if !array.is_null(i) {
                self.values
                    .push_back(ScalarValue::try_from_array(array, i)?);
            }
        }
        Ok(())
    }

    /// The rows leaving the frame are its first ones, in order.
    fn retract_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        let array = values[0].as_ref();
        let leaving = array.len() - array.null_count();
        self.values.drain(..leaving.min(self.values.len()));
        Ok(())
    }

    fn supports_retract_batch(&self) -> bool {
        true
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        for list in states[0].as_list::<i32>().iter().flatten() {
            self.update_batch(&[list])?;
        }
        Ok(())
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        Ok(vec![self.evaluate()?])
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        let values: Vec<ScalarValue> = if self.distinct {
            let mut seen = HashSet::new();
            self.values
                .iter()
                .filter(|value| seen.insert(*value))
                .cloned()
                .collect()
        } else {
            self.values.iter().cloned().collect()
        };
        Ok(ScalarValue::List(ScalarValue::new_list_nullable(
            &values,
            &self.data_type,
        )))
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self) + self.values.iter().map(ScalarValue::size).sum::<usize>()
    }
}

#[derive(Debug)]
struct CollectAccumulator {
    data_type: DataType,
    values: Vec<ScalarValue>,
    /// The values collected so far, for `collect_set`.
    seen: Option<HashSet<ScalarValue>>,
}

impl CollectAccumulator {
    fn add(&mut self, array: &dyn Array) -> Result<()> {
        for i in 0..array.len() {
            if array.is_null(i) {
                continue;
            }
            let value = ScalarValue::try_from_array(array, i)?;
            if let Some(seen) = &mut self.seen {
                if !seen.insert(value.clone()) {
                    continue;
                }
            }
            self.values.push(value);
        }
        Ok(())
    }
}

impl Accumulator for CollectAccumulator {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        self.add(values[0].as_ref())
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let lists = states[0].as_list::<i32>();
        for list in lists.iter().flatten() {
            self.add(list.as_ref())?;
        }
        Ok(())
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        Ok(vec![self.evaluate()?])
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        Ok(ScalarValue::List(ScalarValue::new_list_nullable(
            &self.values,
            &self.data_type,
        )))
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self)
            + self.values.iter().map(ScalarValue::size).sum::<usize>()
            + self
                .seen
                .as_ref()
                .map_or(0, |seen| seen.iter().map(ScalarValue::size).sum::<usize>())
    }
}

/// `str_to_map(text[, pairs_delimiter[, key_delimiter]])`: Hive's map of the text's
/// `key:value` pairs (delimiters `,` and `:` by default), both strings; a pair without the
/// key delimiter has a NULL value, a key given twice keeps its first place and its last
/// value, and empty pairs at the end are dropped (Java's `split`). Hive's delimiters are
/// regexes; the engine takes them as literal text (`'\\|'` is `|`), which is what they are
/// in practice, and refuses one with another regex character.
#[derive(Debug, PartialEq, Eq, Hash)]
struct StrToMap {
    signature: Signature,
}

impl StrToMap {
    fn new() -> Self {
        Self {
            signature: Signature::user_defined(Volatility::Immutable),
        }
    }

    fn map_type() -> DataType {
        let entries = DataType::Struct(
            vec![
                Field::new("key", DataType::Utf8, false),
                Field::new("value", DataType::Utf8, true),
            ]
            .into(),
        );
        DataType::Map(Arc::new(Field::new("entries", entries, false)), false)
    }
}

impl ScalarUDFImpl for StrToMap {
    fn name(&self) -> &str {
        "str_to_map"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        let string = |t: &DataType| super::is_string(t) || t.is_null();
        if (1..=3).contains(&types.len()) && types.iter().all(string) {
            Ok(vec![DataType::Utf8; types.len()])
        } else {
            Err(super::bad_arguments(
                self.name(),
                "(text[, pairs delimiter[, key delimiter]])",
                types,
            ))
        }
    }

    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(Self::map_type())
    }

    fn documentation(&self) -> Option<&datafusion::logical_expr::Documentation> {
        super::usage::documentation("str_to_map")
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let rows = args.number_rows;
        let arrays = ColumnarValue::values_to_arrays(&args.args)?;
        let strings: Vec<_> = arrays.iter().map(|a| a.as_string::<i32>()).collect();
        let names = MapFieldNames {
            entry: "entries".into(),
            key: "key".into(),
            value: "value".into(),
        };
        let mut out = MapBuilder::new(Some(names), StringBuilder::new(), StringBuilder::new());
        for i in 0..rows {
            let delimiter = |at: usize, default: &'static str| -> Result<Option<String>> {
                match strings.get(at) {
                    None => Ok(Some(default.to_owned())),
                    Some(s) if s.is_null(i) => Ok(None),
                    Some(s) => literal_delimiter(s.value(i)).map(Some),
                }
            };
            let (Some(pairs), Some(key_value)) = (delimiter(1, ",")?, delimiter(2, ":")?) else {
                out.append(false)?;
                continue;
            };
            if strings[0].is_null(i) {
                out.append(false)?;
                continue;
            }
            let mut entries: Vec<(&str, Option<&str>)> = Vec::new();
            let mut pieces: Vec<&str> = strings[0].value(i).split(pairs.as_str()).collect();
            // Java's split drops trailing empty strings (but keeps a lone "").
            while pieces.len() > 1 && pieces.last() == Some(&"") {
                pieces.pop();
            }
            for piece in pieces {
                let (key, value) = match piece.split_once(key_value.as_str()) {
                    Some((key, value)) => (key, Some(value)),
                    None => (piece, None),
                };
                match entries.iter_mut().find(|(k, _)| *k == key) {
                    Some(entry) => entry.1 = value,
                    None => entries.push((key, value)),
                }
            }
            for (key, value) in entries {
                out.keys().append_value(key);
                out.values().append_option(value);
            }
            out.append(true)?;
        }
        super::columnar(Arc::new(out.finish()), &args.args)
    }
}

/// A delimiter's text, Java's regex escapes (`\\|`) removed; a delimiter with another
/// regex character is refused.
fn literal_delimiter(regex: &str) -> Result<String> {
    let mut out = String::with_capacity(regex.len());
    let mut chars = regex.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(escaped) if !escaped.is_ascii_alphanumeric() => out.push(escaped),
                _ => return Err(regex_delimiter(regex)),
            },
            '.' | '[' | ']' | '(' | ')' | '{' | '}' | '*' | '+' | '?' | '^' | '$' | '|' => {
                return Err(regex_delimiter(regex))
            }
            other => out.push(other),
        }
    }
    if out.is_empty() {
        return Err(regex_delimiter(regex));
    }
    Ok(out)
}

fn regex_delimiter(regex: &str) -> DataFusionError {
    DataFusionError::NotImplemented(format!(
        "str_to_map takes delimiters of plain text (or escaped characters such as '\\\\|'); \
         '{regex}' is a regex"
    ))
}

/// Spark's `reverse`: an array's elements in reverse order, or a string's characters
/// (DataFusion's `reverse` read an array as the text of its elements).
fn reverse(args: Vec<Expr>, types: &[DataType]) -> Result<Expr> {
    Ok(if is_array(&types[0]) {
        datafusion::functions_nested::expr_fn::array_reverse(args[0].clone())
    } else {
        datafusion::functions::expr_fn::reverse(args[0].clone())
    })
}

fn string_or_array(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    match types {
        [t] if is_array(t) => Ok(types.to_vec()),
        [t] if super::is_string(t) || t.is_null() => Ok(vec![DataType::Utf8]),
        _ => Err(bad_arguments(name, "a string or an array", types)),
    }
}

/// Spark's `array_sort(a)`: ascending, NULLs last (DataFusion's puts them first); its
/// other forms, `array_sort(a, 'DESC'[, 'NULLS FIRST'])`, stay DataFusion's.
fn array_sort_nulls_last(args: Vec<Expr>, _: &[DataType]) -> Result<Expr> {
    let mut args = args;
    if args.len() == 1 {
        args.extend([lit("ASC"), lit("NULLS LAST")]);
    }
    Ok(datafusion::functions_nested::sort::array_sort_udf().call(args))
}
