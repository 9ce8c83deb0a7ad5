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

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, BooleanArray, Int32Array, ListArray, MapArray, StructArray,
    UInt32Array,
};
use datafusion::arrow::buffer::{NullBuffer, OffsetBuffer};
use datafusion::arrow::compute::kernels::cast::cast;
use datafusion::arrow::compute::{
    filter, interleave, nullif, prep_null_mask_filter, take, take_arrays,
};
use datafusion::arrow::datatypes::{DataType, Field, FieldRef, Fields, Int64Type};
use datafusion::arrow::row::{RowConverter, SortField};
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::{
    ColumnarValue, Documentation, HigherOrderFunctionArgs, HigherOrderReturnFieldArgs,
    HigherOrderSignature, HigherOrderUDF, HigherOrderUDFImpl, LambdaArgument,
    LambdaParametersProgress, ValueOrLambda, Volatility,
};

use super::usage;

/// The name `array_sort(array, (l, r) -> ...)` is planned under: DataFusion's own
/// `array_sort`, a scalar function, cannot take a lambda, and is found first by name.
pub const SORT_WITH_COMPARATOR: &str = "array_sort_with_comparator";

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
                let (k1, k2) = (map_key_type(name, m1)?, map_key_type(name, m2)?);
                if k1 != k2 {
                    return Err(DataFusionError::Plan(format!(
                        "{name} takes two maps of one key type; it was given keys of {k1} and {k2}"
                    )));
                }
                Ok(vec![m1.clone(), m2.clone()])
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
            Transform => transform(&values[0], lambdas[0], returns)?,
            Filter => filter_elements(&values[0], lambdas[0])?,
            Exists => exists(&values[0], lambdas[0], true)?,
            Forall => exists(&values[0], lambdas[0], false)?,
            Aggregate => aggregate(&values[0], &values[1], lambdas[0], lambdas.get(1).copied())?,
            ZipWith => zip_with(&values[0], &values[1], lambdas[0], returns)?,
            MapFilter => map_filter(&values[0], lambdas[0])?,
            TransformKeys => transform_entries(&values[0], lambdas[0], returns, true)?,
            TransformValues => transform_entries(&values[0], lambdas[0], returns, false)?,
            MapZipWith => map_zip_with(&values[0], &values[1], lambdas[0], returns)?,
            SortWithComparator => sort_with_comparator(&values[0], lambdas[0])?,
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

// ---- evaluation ----

/// The elements of a batch's arrays (or a map's entries), one after another, with their
/// rows; a NULL row has none.
struct Flat {
    /// Where each row's elements start in `values`, from 0.
    offsets: OffsetBuffer<i32>,
    /// The elements (a map's entries: a struct of `key` and `value`).
    values: ArrayRef,
    /// The row of each element, by which a captured column's value is repeated for each.
    rows: UInt32Array,
    nulls: Option<NullBuffer>,
}

impl Flat {
    fn of_list(array: &ArrayRef) -> Result<Self> {
        let list = array.as_list_opt::<i32>().ok_or_else(|| {
            DataFusionError::Internal(format!("expected an array, got {}", array.data_type()))
        })?;
        Self::new(list.offsets(), list.values(), list.nulls())
    }

    fn of_map(array: &ArrayRef) -> Result<Self> {
        let map = array.as_map_opt().ok_or_else(|| {
            DataFusionError::Internal(format!("expected a map, got {}", array.data_type()))
        })?;
        let entries: ArrayRef = Arc::new(map.entries().clone());
        Self::new(map.offsets(), &entries, map.nulls())
    }

    fn new(
        offsets: &OffsetBuffer<i32>,
        child: &ArrayRef,
        nulls: Option<&NullBuffer>,
    ) -> Result<Self> {
        let start = offsets[0] as usize;
        let end = offsets[offsets.len() - 1] as usize;
        let mut values = child.slice(start, end - start);
        let mut lengths: Vec<usize> = offsets.lengths().collect();
        if let Some(nulls) = nulls {
            // A NULL row's elements (which DataFusion leaves behind some NULL maps) are
            // never the lambda's to see.
            if nulls.null_count() > 0
                && (0..lengths.len()).any(|r| nulls.is_null(r) && lengths[r] > 0)
            {
                let keep: BooleanArray = lengths
                    .iter()
                    .enumerate()
                    .flat_map(|(r, n)| std::iter::repeat_n(Some(nulls.is_valid(r)), *n))
                    .collect();
                values = filter(&values, &keep)?;
                for (r, n) in lengths.iter_mut().enumerate() {
                    if nulls.is_null(r) {
                        *n = 0;
                    }
                }
            }
        }
        let rows = lengths
            .iter()
            .enumerate()
            .flat_map(|(r, n)| std::iter::repeat_n(r as u32, *n))
            .collect();
        Ok(Self {
            offsets: OffsetBuffer::from_lengths(lengths),
            values,
            rows,
            nulls: nulls.cloned(),
        })
    }

    fn rows(&self) -> usize {
        self.offsets.len() - 1
    }

    fn range(&self, row: usize) -> std::ops::Range<usize> {
        self.offsets[row] as usize..self.offsets[row + 1] as usize
    }

    /// Each element's position in its array, from 0: Spark's `i` in `(x, i) -> ...`.
    fn positions(&self) -> ArrayRef {
        let positions: Int32Array = (0..self.rows())
            .flat_map(|r| 0..self.range(r).len() as i32)
            .collect();
        Arc::new(positions)
    }

    fn map_parts(&self) -> (ArrayRef, ArrayRef) {
        let entries = self.values.as_struct();
        (Arc::clone(entries.column(0)), Arc::clone(entries.column(1)))
    }
}

/// The lambda's body over the elements `rows` gives the rows of (`len` of them), with the
/// variables `params` gives; each captured column's value repeated for its row's elements.
fn evaluate(
    lambda: &LambdaArgument,
    params: &[&dyn Fn() -> Result<ArrayRef>],
    rows: &UInt32Array,
    len: usize,
) -> Result<ArrayRef> {
    lambda
        .evaluate(params, |captured| Ok(take_arrays(captured, rows, None)?))?
        .into_array(len)
}

/// A predicate lambda's answers as booleans.
fn booleans(result: &ArrayRef) -> Result<BooleanArray> {
    Ok(cast(result, &DataType::Boolean)?.as_boolean().clone())
}

/// Which elements a predicate keeps: those it is true for (not NULL).
fn kept(answers: &BooleanArray) -> BooleanArray {
    match answers.nulls() {
        Some(_) => prep_null_mask_filter(answers),
        None => answers.clone(),
    }
}

fn transform(array: &ArrayRef, lambda: &LambdaArgument, returns: &DataType) -> Result<ArrayRef> {
    let flat = Flat::of_list(array)?;
    let transformed = evaluate(
        lambda,
        &[&|| Ok(Arc::clone(&flat.values)), &|| Ok(flat.positions())],
        &flat.rows,
        flat.values.len(),
    )?;
    Ok(Arc::new(ListArray::try_new(
        list_field(returns)?,
        flat.offsets,
        transformed,
        flat.nulls,
    )?))
}

fn filter_elements(array: &ArrayRef, lambda: &LambdaArgument) -> Result<ArrayRef> {
    let flat = Flat::of_list(array)?;
    let keep = kept(&booleans(&evaluate(
        lambda,
        &[&|| Ok(Arc::clone(&flat.values)), &|| Ok(flat.positions())],
        &flat.rows,
        flat.values.len(),
    )?)?);
    let kept = filter(&flat.values, &keep)?;
    let lengths = (0..flat.rows()).map(|r| {
        let range = flat.range(r);
        keep.values()
            .slice(range.start, range.len())
            .count_set_bits()
    });
    let DataType::List(field) = array.data_type() else {
        unreachable!("the argument was coerced to a list");
    };
    Ok(Arc::new(ListArray::try_new(
        Arc::clone(field),
        OffsetBuffer::from_lengths(lengths),
        kept,
        flat.nulls,
    )?))
}

/// `exists` (`some`), or `forall` (`!some`): Spark's three-valued logic, where a NULL answer
/// for an element makes the result NULL unless another element decides it.
fn exists(array: &ArrayRef, lambda: &LambdaArgument, some: bool) -> Result<ArrayRef> {
    let flat = Flat::of_list(array)?;
    let answers = booleans(&evaluate(
        lambda,
        &[&|| Ok(Arc::clone(&flat.values))],
        &flat.rows,
        flat.values.len(),
    )?)?;
    let result: BooleanArray = (0..flat.rows())
        .map(|r| {
            if flat.nulls.as_ref().is_some_and(|n| n.is_null(r)) {
                return None;
            }
            let mut unknown = false;
            for i in flat.range(r) {
                if answers.is_null(i) {
                    unknown = true;
                } else if answers.value(i) == some {
                    return Some(some);
                }
            }
            (!unknown).then_some(!some)
        })
        .collect();
    Ok(Arc::new(result))
}

/// `aggregate`: the merge lambda applied to every row's `n`th element at once, `n` from the
/// first, with each row's accumulator; then the finish lambda over the accumulators.
fn aggregate(
    array: &ArrayRef,
    start: &ArrayRef,
    merge: &LambdaArgument,
    finish: Option<&LambdaArgument>,
) -> Result<ArrayRef> {
    let flat = Flat::of_list(array)?;
    let mut accumulators = Arc::clone(start);
    let longest = (0..flat.rows())
        .map(|r| flat.range(r).len())
        .max()
        .unwrap_or(0);
    for n in 0..longest {
        let (rows, elements): (Vec<u32>, Vec<u32>) = (0..flat.rows())
            .filter(|&r| flat.range(r).len() > n)
            .map(|r| (r as u32, flat.range(r).start as u32 + n as u32))
            .unzip();
        let rows = UInt32Array::from(rows);
        let elements = UInt32Array::from(elements);
        let merged = evaluate(
            merge,
            &[&|| Ok(take(&accumulators, &rows, None)?), &|| {
                Ok(take(&flat.values, &elements, None)?)
            }],
            &rows,
            rows.len(),
        )?;
        // The merged accumulators in their rows; the others as they were.
        let mut sources: Vec<(usize, usize)> = (0..flat.rows()).map(|r| (0, r)).collect();
        for (i, row) in rows.values().iter().enumerate() {
            sources[*row as usize] = (1, i);
        }
        accumulators = interleave(&[accumulators.as_ref(), merged.as_ref()], &sources)?;
    }
    let result = match finish {
        Some(finish) => finish
            .evaluate(&[&|| Ok(Arc::clone(&accumulators))], |captured| {
                Ok(captured.to_vec())
            })?
            .into_array(flat.rows())?,
        None => accumulators,
    };
    match &flat.nulls {
        Some(nulls) if nulls.null_count() > 0 => {
            let is_null: BooleanArray = nulls.iter().map(|valid| Some(!valid)).collect();
            Ok(nullif(&result, &is_null)?)
        }
        _ => Ok(result),
    }
}

fn zip_with(
    left: &ArrayRef,
    right: &ArrayRef,
    lambda: &LambdaArgument,
    returns: &DataType,
) -> Result<ArrayRef> {
    let (left, right) = (Flat::of_list(left)?, Flat::of_list(right)?);
    let nulls = NullBuffer::union(left.nulls.as_ref(), right.nulls.as_ref());
    let mut lengths = Vec::with_capacity(left.rows());
    let (mut rows, mut lefts, mut rights) = (Vec::new(), Vec::new(), Vec::new());
    for r in 0..left.rows() {
        let (a, b) = (left.range(r), right.range(r));
        let length = if nulls.as_ref().is_some_and(|n| n.is_null(r)) {
            0
        } else {
            a.len().max(b.len())
        };
        lengths.push(length);
        for n in 0..length {
            rows.push(r as u32);
            lefts.push((n < a.len()).then(|| (a.start + n) as u32));
            rights.push((n < b.len()).then(|| (b.start + n) as u32));
        }
    }
    let rows = UInt32Array::from(rows);
    let lefts = UInt32Array::from(lefts);
    let rights = UInt32Array::from(rights);
    let zipped = evaluate(
        lambda,
        &[&|| Ok(take(&left.values, &lefts, None)?), &|| {
            Ok(take(&right.values, &rights, None)?)
        }],
        &rows,
        rows.len(),
    )?;
    Ok(Arc::new(ListArray::try_new(
        list_field(returns)?,
        OffsetBuffer::from_lengths(lengths),
        zipped,
        nulls,
    )?))
}

fn map_filter(map: &ArrayRef, lambda: &LambdaArgument) -> Result<ArrayRef> {
    let flat = Flat::of_map(map)?;
    let (keys, values) = flat.map_parts();
    let keep = kept(&booleans(&evaluate(
        lambda,
        &[&|| Ok(Arc::clone(&keys)), &|| Ok(Arc::clone(&values))],
        &flat.rows,
        flat.values.len(),
    )?)?);
    let kept = filter(&flat.values, &keep)?;
    let lengths = (0..flat.rows()).map(|r| {
        let range = flat.range(r);
        keep.values()
            .slice(range.start, range.len())
            .count_set_bits()
    });
    let DataType::Map(field, ordered) = map.data_type() else {
        unreachable!("the argument was coerced to a map");
    };
    Ok(Arc::new(MapArray::try_new(
        Arc::clone(field),
        OffsetBuffer::from_lengths(lengths),
        kept.as_struct().clone(),
        flat.nulls,
        *ordered,
    )?))
}

/// `transform_keys` (`keys`) or `transform_values`: the lambda's answer for each entry in
/// place of its key or value. New keys must be neither NULL nor repeated in a map, as Spark
/// requires (its default `spark.sql.mapKeyDedupPolicy`, EXCEPTION).
fn transform_entries(
    map: &ArrayRef,
    lambda: &LambdaArgument,
    returns: &DataType,
    keys: bool,
) -> Result<ArrayRef> {
    let flat = Flat::of_map(map)?;
    let (old_keys, old_values) = flat.map_parts();
    let answers = evaluate(
        lambda,
        &[&|| Ok(Arc::clone(&old_keys)), &|| {
            Ok(Arc::clone(&old_values))
        }],
        &flat.rows,
        flat.values.len(),
    )?;
    let (new_keys, new_values) = if keys {
        unique_keys(&answers, &flat)?;
        (answers, old_values)
    } else {
        (old_keys, answers)
    };
    map_from(returns, flat.offsets, new_keys, new_values, flat.nulls)
}

/// Fails as Spark does when a map would have a NULL key or a key twice.
fn unique_keys(keys: &ArrayRef, flat: &Flat) -> Result<()> {
    if keys.null_count() > 0 {
        return Err(DataFusionError::Execution(
            "Cannot use null as map key (transform_keys gave NULL)".to_owned(),
        ));
    }
    let converter = RowConverter::new(vec![SortField::new(keys.data_type().clone())])?;
    let rows = converter.convert_columns(&[Arc::clone(keys)])?;
    let mut seen = HashSet::new();
    for r in 0..flat.rows() {
        seen.clear();
        for i in flat.range(r) {
            if !seen.insert(rows.row(i)) {
                return Err(DataFusionError::Execution(format!(
                    "Duplicate map key {} was found, please check the input data \
                     (transform_keys gave it twice in one map)",
                    display(keys, i)?
                )));
            }
        }
    }
    Ok(())
}

fn map_zip_with(
    first: &ArrayRef,
    second: &ArrayRef,
    lambda: &LambdaArgument,
    returns: &DataType,
) -> Result<ArrayRef> {
    let (first, second) = (Flat::of_map(first)?, Flat::of_map(second)?);
    let nulls = NullBuffer::union(first.nulls.as_ref(), second.nulls.as_ref());
    let ((keys1, values1), (keys2, values2)) = (first.map_parts(), second.map_parts());
    let converter = RowConverter::new(vec![SortField::new(keys1.data_type().clone())])?;
    let rows1 = converter.convert_columns(&[Arc::clone(&keys1)])?;
    let rows2 = converter.convert_columns(&[Arc::clone(&keys2)])?;
    let mut lengths = Vec::with_capacity(first.rows());
    let (mut rows, mut keys, mut lefts, mut rights) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut in_second = HashMap::new();
    for r in 0..first.rows() {
        if nulls.as_ref().is_some_and(|n| n.is_null(r)) {
            lengths.push(0);
            continue;
        }
        in_second.clear();
        in_second.extend(second.range(r).map(|j| (rows2.row(j), j)));
        let before = keys.len();
        // The first map's keys in its order, then the second's it lacks, as Spark.
        for i in first.range(r) {
            let j = in_second.remove(&rows1.row(i));
            keys.push((0, i));
            lefts.push(Some(i as u32));
            rights.push(j.map(|j| j as u32));
        }
        for j in second.range(r) {
            if in_second.contains_key(&rows2.row(j)) {
                keys.push((1, j));
                lefts.push(None);
                rights.push(Some(j as u32));
            }
        }
        rows.extend(std::iter::repeat_n(r as u32, keys.len() - before));
        lengths.push(keys.len() - before);
    }
    let keys = interleave(&[keys1.as_ref(), keys2.as_ref()], &keys)?;
    let rows = UInt32Array::from(rows);
    let lefts = UInt32Array::from(lefts);
    let rights = UInt32Array::from(rights);
    let values = evaluate(
        lambda,
        &[
            &|| Ok(Arc::clone(&keys)),
            &|| Ok(take(&values1, &lefts, None)?),
            &|| Ok(take(&values2, &rights, None)?),
        ],
        &rows,
        rows.len(),
    )?;
    map_from(
        returns,
        OffsetBuffer::from_lengths(lengths),
        keys,
        values,
        nulls,
    )
}

/// `array_sort(array, comparator)`: a bottom-up merge sort of every row's array at once.
/// Each round compares the next pair of every merge under way, in one evaluation of the
/// comparator; the left element goes first unless the comparator is positive, so equal
/// elements keep their order, as in Java's (Spark's) sort, and any consistent comparator
/// sorts as Spark's does.
fn sort_with_comparator(array: &ArrayRef, comparator: &LambdaArgument) -> Result<ArrayRef> {
    let flat = Flat::of_list(array)?;
    // `order[k]` is the element at position k, each row's positions sorted run by run.
    let mut order: Vec<u32> = (0..flat.values.len() as u32).collect();
    let longest = (0..flat.rows())
        .map(|r| flat.range(r).len())
        .max()
        .unwrap_or(0);
    let mut width = 1;
    while width < longest {
        let mut merges: Vec<Merge> = Vec::new();
        for r in 0..flat.rows() {
            let range = flat.range(r);
            let mut start = range.start;
            while start + width < range.end {
                let middle = start + width;
                let end = (start + 2 * width).min(range.end);
                merges.push(Merge {
                    row: r as u32,
                    left: start..middle,
                    right: middle..end,
                    out: start,
                });
                start = end;
            }
        }
        let mut merged = order.clone();
        loop {
            let active: Vec<&mut Merge> = merges
                .iter_mut()
                .filter(|m| !m.left.is_empty() && !m.right.is_empty())
                .collect();
            if active.is_empty() {
                break;
            }
            let rows = UInt32Array::from_iter_values(active.iter().map(|m| m.row));
            let lefts = UInt32Array::from_iter_values(active.iter().map(|m| order[m.left.start]));
            let rights = UInt32Array::from_iter_values(active.iter().map(|m| order[m.right.start]));
            let compared = evaluate(
                comparator,
                &[&|| Ok(take(&flat.values, &lefts, None)?), &|| {
                    Ok(take(&flat.values, &rights, None)?)
                }],
                &rows,
                rows.len(),
            )?;
            let compared = cast(&compared, &DataType::Int64)?;
            let compared = compared.as_primitive::<Int64Type>();
            if let Some(k) = (0..compared.len()).find(|&k| compared.is_null(k)) {
                // Spark's words (COMPARATOR_RETURNS_NULL).
                return Err(DataFusionError::Execution(format!(
                    "The comparator has returned a NULL for a comparison between {} and {}; \
                     array_sort's comparator must return a negative integer, 0 or a positive \
                     integer",
                    display(&take(&flat.values, &lefts, None)?, k)?,
                    display(&take(&flat.values, &rights, None)?, k)?,
                )));
            }
            for (m, c) in active.into_iter().zip(compared.values()) {
                let side = if *c > 0 { &mut m.right } else { &mut m.left };
                merged[m.out] = order[side.start];
                side.start += 1;
                m.out += 1;
            }
        }
        // What is left of a merge (one side done) follows in its order.
        for m in merges.iter_mut() {
            for k in m.left.clone().chain(m.right.clone()) {
                merged[m.out] = order[k];
                m.out += 1;
            }
        }
        order = merged;
        width *= 2;
    }
    let sorted = take(&flat.values, &UInt32Array::from(order), None)?;
    let DataType::List(field) = array.data_type() else {
        unreachable!("the argument was coerced to a list");
    };
    Ok(Arc::new(ListArray::try_new(
        Arc::clone(field),
        flat.offsets,
        sorted,
        flat.nulls,
    )?))
}

/// One merge of two sorted runs of a row's array under way in [`sort_with_comparator`]:
/// the positions of each run not yet taken, and where the next one taken goes.
struct Merge {
    row: u32,
    left: std::ops::Range<usize>,
    right: std::ops::Range<usize>,
    out: usize,
}

// ---- types ----

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

/// A map of the type `returns` from its rows' offsets, keys and values.
fn map_from(
    returns: &DataType,
    offsets: OffsetBuffer<i32>,
    keys: ArrayRef,
    values: ArrayRef,
    nulls: Option<NullBuffer>,
) -> Result<ArrayRef> {
    let DataType::Map(entries, ordered) = returns else {
        return Err(DataFusionError::Internal(format!(
            "expected a map type, got {returns}"
        )));
    };
    let DataType::Struct(fields) = entries.data_type() else {
        return Err(DataFusionError::Internal(format!(
            "expected a map's entries, got {entries}"
        )));
    };
    let entries_array = StructArray::try_new(fields.clone(), vec![keys, values], None)?;
    Ok(Arc::new(MapArray::try_new(
        Arc::clone(entries),
        offsets,
        entries_array,
        nulls,
        *ordered,
    )?))
}

/// A value as an error shows it.
fn display(array: &ArrayRef, i: usize) -> Result<String> {
    let formatter = ArrayFormatter::try_new(array.as_ref(), &FormatOptions::default())?;
    Ok(formatter.value(i).to_string())
}

#[cfg(test)]
mod tests;
