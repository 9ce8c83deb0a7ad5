//! Spark SQL's higher-order functions, whose arguments include lambdas: `transform`,
//! `filter`, `exists`, `forall`, `aggregate` (`reduce`), `zip_with`, `map_filter`,
//! `transform_keys`, `transform_values`, `map_zip_with`, and `array_sort` with a comparator
//! ([`SORT_WITH_COMPARATOR`]), with Spark 3.5's semantics.
//!
//! Each is a DataFusion [`HigherOrderUDF`]: DataFusion plans the lambda (its body may name
//! the row's columns, which it captures, and nested lambdas), and hands the function the
//! lambda's compiled body. The function evaluates the body once over all the elements of a
//! batch's arrays (or maps) at once: the elements flattened into one column per lambda
//! variable, each captured column repeated for its row's elements; then rebuilds the arrays
//! from the offsets. `aggregate` and the comparator's sort, whose steps depend on earlier
//! ones, evaluate it once per step over every row's element of that step.
//! ([`crate::hive_syntax`] parses the lambdas.)
//!
//! Here the functions' arguments and types; `flat` lays the elements out for a lambda,
//! `arrays`, `maps` and `sort` answer.

use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, Field, FieldRef, Fields};
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::type_coercion::binary::comparison_coercion;
use datafusion::logical_expr::{
    ColumnarValue, Documentation, HigherOrderFunctionArgs, HigherOrderReturnFieldArgs,
    HigherOrderSignature, HigherOrderUDF, HigherOrderUDFImpl, LambdaParametersProgress,
    ValueOrLambda, Volatility,
};

use super::usage;

mod arrays;
mod flat;
mod maps;
mod sort;

/// The name `array_sort(array, (l, r) -> ...)` is planned under: DataFusion's own
/// `array_sort`, a scalar function, cannot take a lambda, and is found first by name.
pub const SORT_WITH_COMPARATOR: &str = "array_sort_with_comparator";

/// Whether `name` is one of this module's names for the engine's own use, which users call by
/// another (`array_sort`): left out of SHOW FUNCTIONS and the JDBC function list.
pub fn is_internal(name: &str) -> bool {
    name == SORT_WITH_COMPARATOR
}

/// The higher-order functions, to register in a session.
pub fn functions() -> Vec<HigherOrderUDF> {
    use Kind::*;
    [
        ("transform", Transform, &[][..]),
        ("filter", Filter, &[]),
        ("exists", Exists, &[]),
        ("forall", Forall, &[]),
        ("aggregate", Aggregate, &["reduce"]),
        ("zip_with", ZipWith, &[]),
        ("map_filter", MapFilter, &[]),
        ("transform_keys", TransformKeys, &[]),
        ("transform_values", TransformValues, &[]),
        ("map_zip_with", MapZipWith, &[]),
        (SORT_WITH_COMPARATOR, SortWithComparator, &[]),
    ]
    .into_iter()
    .map(|(name, kind, aliases)| {
        HigherOrderUDF::new_from_impl(HigherOrder {
            name,
            kind,
            aliases: aliases.iter().map(|a| (*a).to_owned()).collect(),
            signature: HigherOrderSignature::user_defined(Volatility::Immutable),
        })
    })
    .collect()
}

/// Which function a [`HigherOrder`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    /// `transform(array, x -> y)` or `(x, i) -> y`: each element mapped.
    Transform,
    /// `filter(array, x -> bool)` or `(x, i) -> bool`: the elements it is true for.
    Filter,
    /// `exists(array, x -> bool)`: true for some element (NULL if none and some NULL).
    Exists,
    /// `forall(array, x -> bool)`: true for every element (NULL if none false, some NULL).
    Forall,
    /// `aggregate(array, start, (acc, x) -> acc[, acc -> result])`: a left fold.
    Aggregate,
    /// `zip_with(a, b, (x, y) -> z)`: pairs of elements, the shorter padded with NULLs.
    ZipWith,
    /// `map_filter(map, (k, v) -> bool)`: the entries it is true for.
    MapFilter,
    /// `transform_keys(map, (k, v) -> key)`: each entry's key replaced.
    TransformKeys,
    /// `transform_values(map, (k, v) -> value)`: each entry's value replaced.
    TransformValues,
    /// `map_zip_with(m1, m2, (k, v1, v2) -> value)`: each key of either map, the value of
    /// the other NULL where it lacks the key.
    MapZipWith,
    /// `array_sort(array, (l, r) -> int)`: sorted by the comparator, stably.
    SortWithComparator,
}

/// One of Spark's higher-order functions.
#[derive(Debug, PartialEq, Eq, Hash)]
struct HigherOrder {
    name: &'static str,
    kind: Kind,
    aliases: Vec<String>,
    signature: HigherOrderSignature,
}

impl HigherOrderUDFImpl for HigherOrder {
    fn name(&self) -> &str {
        self.name
    }

    fn aliases(&self) -> &[String] {
        &self.aliases
    }

    fn signature(&self) -> &HigherOrderSignature {
        &self.signature
    }

    fn documentation(&self) -> Option<&Documentation> {
        usage::documentation(self.name)
    }

    fn coerce_value_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        use Kind::*;
        let name = self.name;
        match (self.kind, types) {
            (Transform | Filter | Exists | Forall | SortWithComparator, [list]) => {
                Ok(vec![as_list(name, list)?])
            }
            (Aggregate, [list, start]) => Ok(vec![as_list(name, list)?, start.clone()]),
            (ZipWith, [a, b]) => Ok(vec![as_list(name, a)?, as_list(name, b)?]),
            (MapFilter | TransformKeys | TransformValues, [map]) => {
                Ok(vec![as_map(name, map)?.clone()])
            }
            (MapZipWith, [m1, m2]) => {
                // The keys are matched in one type: both maps' keys as the wider one's, as
                // Spark coerces them (INT and BIGINT keys as BIGINT).
                let (k1, k2) = (map_key_type(name, m1)?, map_key_type(name, m2)?);
                let key = comparison_coercion(k1, k2).ok_or_else(|| {
                    DataFusionError::Plan(format!(
                        "{name} takes two maps whose keys compare; it was given keys of {k1} and {k2}"
                    ))
                })?;
                Ok(vec![with_key_type(m1, &key), with_key_type(m2, &key)])
            }
            _ => Err(DataFusionError::Plan(format!(
                "{name} takes {}; it was given {} value argument(s)",
                self.takes(),
                types.len()
            ))),
        }
    }

    fn lambda_parameters(
        &self,
        step: usize,
        fields: &[ValueOrLambda<FieldRef, Option<FieldRef>>],
    ) -> Result<LambdaParametersProgress> {
        use Kind::*;
        let values: Vec<&FieldRef> = fields
            .iter()
            .filter_map(|f| match f {
                ValueOrLambda::Value(v) => Some(v),
                ValueOrLambda::Lambda(_) => None,
            })
            .collect();
        let lambdas: Vec<&Option<FieldRef>> = fields
            .iter()
            .filter_map(|f| match f {
                ValueOrLambda::Lambda(l) => Some(l),
                ValueOrLambda::Value(_) => None,
            })
            .collect();
        let expected = match self.kind {
            Aggregate => 1..=2,
            _ => 1..=1,
        };
        if !expected.contains(&lambdas.len()) {
            return Err(DataFusionError::Plan(format!(
                "{} takes {}",
                self.name,
                self.takes()
            )));
        }
        let element = |i: usize| element_field(self.name, values[i]);
        let index = || Arc::new(Field::new("i", DataType::Int32, false));
        let params = match self.kind {
            Transform | Filter => vec![element(0)?, index()],
            Exists | Forall => vec![element(0)?],
            SortWithComparator => vec![element(0)?, element(0)?],
            ZipWith => vec![nullable(&element(0)?), nullable(&element(1)?)],
            MapFilter | TransformKeys | TransformValues => {
                let (key, value) = map_fields(self.name, values[0])?;
                vec![key, value]
            }
            MapZipWith => {
                let (key, v1) = map_fields(self.name, values[0])?;
                let (_, v2) = map_fields(self.name, values[1])?;
                vec![key, nullable(&v1), nullable(&v2)]
            }
            Aggregate => return aggregate_parameters(step, values[1], &element(0)?, &lambdas),
        };
        Ok(LambdaParametersProgress::Complete(vec![params]))
    }

    fn coerce_values_for_lambdas(
        &self,
        fields: &[ValueOrLambda<DataType, DataType>],
    ) -> Result<Option<Vec<DataType>>> {
        // `aggregate`'s start takes the type of the merge's result, which its accumulator has.
        let [ValueOrLambda::Value(list), ValueOrLambda::Value(_), ValueOrLambda::Lambda(merge), ..] =
            fields
        else {
            return Ok(None);
        };
        if self.kind != Kind::Aggregate {
            return Ok(None);
        }
        Ok(Some(vec![list.clone(), merge.clone()]))
    }

    fn return_field_from_args(&self, args: HigherOrderReturnFieldArgs) -> Result<FieldRef> {
        use Kind::*;
        let values: Vec<&FieldRef> = args
            .arg_fields
            .iter()
            .filter_map(|f| match f {
                ValueOrLambda::Value(v) => Some(v),
                ValueOrLambda::Lambda(_) => None,
            })
            .collect();
        let lambdas: Vec<&FieldRef> = args
            .arg_fields
            .iter()
            .filter_map(|f| match f {
                ValueOrLambda::Lambda(l) => Some(l),
                ValueOrLambda::Value(_) => None,
            })
            .collect();
        let result = lambdas[0].data_type();
        let data_type = match self.kind {
            Transform | ZipWith => list_of(result.clone()),
            Filter => {
                self.expect_boolean(result)?;
                values[0].data_type().clone()
            }
            Exists | Forall => {
                self.expect_boolean(result)?;
                DataType::Boolean
            }
            MapFilter => {
                self.expect_boolean(result)?;
                values[0].data_type().clone()
            }
            Aggregate => {
                let start = values[1].data_type();
                if start != result {
                    return Err(DataFusionError::Plan(format!(
                        "aggregate's start and the result of its merge lambda must have one type; \
                         they are {start} and {result} (cast the start to the merge's type)"
                    )));
                }
                lambdas.get(1).unwrap_or(&lambdas[0]).data_type().clone()
            }
            TransformKeys => {
                let (_, value) = map_fields(self.name, values[0])?;
                map_of(values[0], Field::new("key", result.clone(), false), value)
            }
            TransformValues | MapZipWith => {
                let (key, _) = map_fields(self.name, values[0])?;
                map_of(values[0], key, Field::new("value", result.clone(), true))
            }
            SortWithComparator => {
                if !result.is_integer() && !result.is_null() {
                    return Err(DataFusionError::Plan(format!(
                        "array_sort's comparator must return an integer (negative, 0 or \
                         positive); it returns {result}"
                    )));
                }
                values[0].data_type().clone()
            }
        };
        Ok(Arc::new(Field::new(self.name, data_type, true)))
    }

    fn invoke_with_args(&self, args: HigherOrderFunctionArgs) -> Result<ColumnarValue> {
        use Kind::*;
        let rows = args.number_rows;
        let mut values = Vec::new();
        let mut lambdas = Vec::new();
        for arg in &args.args {
            match arg {
                ValueOrLambda::Value(value) => values.push(value.to_array(rows)?),
                ValueOrLambda::Lambda(lambda) => lambdas.push(lambda),
            }
        }
        let returns = args.return_field.data_type();
        let result = match self.kind {
            Transform => arrays::transform(&values[0], lambdas[0], returns)?,
            Filter => arrays::filter_elements(&values[0], lambdas[0])?,
            Exists => arrays::exists(&values[0], lambdas[0], true)?,
            Forall => arrays::exists(&values[0], lambdas[0], false)?,
            Aggregate => {
                arrays::aggregate(&values[0], &values[1], lambdas[0], lambdas.get(1).copied())?
            }
            ZipWith => arrays::zip_with(&values[0], &values[1], lambdas[0], returns)?,
            MapFilter => maps::map_filter(&values[0], lambdas[0])?,
            TransformKeys => maps::transform_entries(&values[0], lambdas[0], returns, true)?,
            TransformValues => maps::transform_entries(&values[0], lambdas[0], returns, false)?,
            MapZipWith => maps::map_zip_with(&values[0], &values[1], lambdas[0], returns)?,
            SortWithComparator => sort::sort_with_comparator(&values[0], lambdas[0])?,
        };
        Ok(ColumnarValue::Array(result))
    }
}

impl HigherOrder {
    /// What the function's arguments are, for an error.
    fn takes(&self) -> &'static str {
        use Kind::*;
        match self.kind {
            Transform => "an array and a lambda x -> ... or (x, i) -> ...",
            Filter => "an array and a lambda x -> ... or (x, i) -> ... giving a boolean",
            Exists | Forall => "an array and a lambda x -> ... giving a boolean",
            Aggregate => "an array, a start, a lambda (acc, x) -> ... and an optional acc -> ...",
            ZipWith => "two arrays and a lambda (x, y) -> ...",
            MapFilter => "a map and a lambda (k, v) -> ... giving a boolean",
            TransformKeys | TransformValues => "a map and a lambda (k, v) -> ...",
            MapZipWith => "two maps and a lambda (k, v1, v2) -> ...",
            SortWithComparator => "an array and a lambda (l, r) -> ... giving an integer",
        }
    }

    fn expect_boolean(&self, result: &DataType) -> Result<()> {
        if matches!(result, DataType::Boolean | DataType::Null) {
            return Ok(());
        }
        Err(DataFusionError::Plan(format!(
            "{}'s lambda must give a boolean; it gives {result}",
            self.name
        )))
    }
}

/// `aggregate`'s lambdas' parameters: the merge's `(acc, x)`, then the finish's `acc`. The
/// accumulator has the start's type, or, when the merge gives another (`0` summing
/// `DOUBLE`s), the merge's: the start is then cast to it ([`HigherOrderUDFImpl::coerce_values_for_lambdas`]),
/// where Spark refuses the call.
fn aggregate_parameters(
    step: usize,
    start: &FieldRef,
    element: &FieldRef,
    lambdas: &[&Option<FieldRef>],
) -> Result<LambdaParametersProgress> {
    let accumulator = |field: &FieldRef| -> FieldRef {
        Arc::new(field.as_ref().clone().with_name("acc").with_nullable(true))
    };
    let finish = lambdas.len() == 2;
    let complete = |acc: FieldRef| {
        let mut params = vec![vec![Arc::clone(&acc), Arc::clone(element)]];
        if finish {
            params.push(vec![acc]);
        }
        LambdaParametersProgress::Complete(params)
    };
    let partial = |acc: FieldRef| {
        let mut params = vec![Some(vec![acc, Arc::clone(element)])];
        if finish {
            params.push(None);
        }
        LambdaParametersProgress::Partial(params)
    };
    let start = accumulator(start);
    Ok(match (step, lambdas[0]) {
        (_, None) => partial(start),
        (1, Some(merged)) if merged.data_type() == start.data_type() => complete(start),
        (1, Some(merged)) => partial(accumulator(merged)),
        (_, Some(merged)) => complete(accumulator(merged)),
    })
}

/// A value argument as an array: Spark's arrays are DataFusion's lists of any layout, and
/// NULL an array of NULLs.
fn as_list(name: &str, t: &DataType) -> Result<DataType> {
    match t {
        DataType::List(_) => Ok(t.clone()),
        DataType::LargeList(f)
        | DataType::ListView(f)
        | DataType::LargeListView(f)
        | DataType::FixedSizeList(f, _) => Ok(DataType::List(Arc::clone(f))),
        DataType::Null => Ok(list_of(DataType::Null)),
        other => Err(DataFusionError::Plan(format!(
            "{name} takes an array; it was given {other}"
        ))),
    }
}

fn as_map<'a>(name: &str, t: &'a DataType) -> Result<&'a DataType> {
    match t {
        DataType::Map(..) => Ok(t),
        other => Err(DataFusionError::Plan(format!(
            "{name} takes a map; it was given {other}"
        ))),
    }
}

fn map_key_type<'a>(name: &str, t: &'a DataType) -> Result<&'a DataType> {
    let (key, _) = map_fields_of(name, as_map(name, t)?)?;
    Ok(key.data_type())
}

/// A map type with its keys of another type.
fn with_key_type(map: &DataType, key: &DataType) -> DataType {
    let DataType::Map(entries, ordered) = map else {
        return map.clone();
    };
    let DataType::Struct(fields) = entries.data_type() else {
        return map.clone();
    };
    let fields: Fields = fields
        .iter()
        .enumerate()
        .map(|(i, f)| match i {
            0 => Arc::new(f.as_ref().clone().with_data_type(key.clone())),
            _ => Arc::clone(f),
        })
        .collect();
    DataType::Map(
        Arc::new(
            entries
                .as_ref()
                .clone()
                .with_data_type(DataType::Struct(fields)),
        ),
        *ordered,
    )
}

fn element_field(name: &str, list: &FieldRef) -> Result<FieldRef> {
    match list.data_type() {
        DataType::List(f) => Ok(Arc::clone(f)),
        other => Err(DataFusionError::Plan(format!(
            "{name} takes an array; it was given {other}"
        ))),
    }
}

fn map_fields(name: &str, map: &FieldRef) -> Result<(FieldRef, FieldRef)> {
    let (key, value) = map_fields_of(name, map.data_type())?;
    Ok((Arc::clone(key), Arc::clone(value)))
}

fn map_fields_of<'a>(name: &str, t: &'a DataType) -> Result<(&'a FieldRef, &'a FieldRef)> {
    if let DataType::Map(entries, _) = t {
        if let DataType::Struct(fields) = entries.data_type() {
            if let [key, value] = fields.iter().as_slice() {
                return Ok((key, value));
            }
        }
    }
    Err(DataFusionError::Plan(format!(
        "{name} takes a map; it was given {t}"
    )))
}

fn nullable(field: &FieldRef) -> FieldRef {
    Arc::new(field.as_ref().clone().with_nullable(true))
}

fn list_of(element: DataType) -> DataType {
    DataType::List(Arc::new(Field::new_list_field(element, true)))
}

fn list_field(list: &DataType) -> Result<FieldRef> {
    match list {
        DataType::List(f) => Ok(Arc::clone(f)),
        other => Err(DataFusionError::Internal(format!(
            "expected an array type, got {other}"
        ))),
    }
}

/// The type of a map like `like` (its entries' names, its ordering) of the given fields.
fn map_of(like: &FieldRef, key: impl Into<FieldRef>, value: impl Into<FieldRef>) -> DataType {
    let (entries_name, ordered) = match like.data_type() {
        DataType::Map(entries, ordered) => (entries.name().clone(), *ordered),
        _ => ("entries".to_owned(), false),
    };
    let fields = Fields::from(vec![key.into(), value.into()]);
    DataType::Map(
        Arc::new(Field::new(entries_name, DataType::Struct(fields), false)),
        ordered,
    )
}

#[cfg(test)]
mod tests;
