//! Hive's everyday built-in functions that DataFusion lacks or spells differently, with Hive's
//! semantics, so that SQL written for Hive and Spark SQL runs unchanged.
//!
//! Most are defined as an expression of DataFusion's own functions ([`HiveFunction::rewrite`]): `if` is a
//! `CASE`, `year(d)` a `date_part`, `date_format(d, 'yyyy-MM-dd')` a `to_char` with the Java
//! pattern translated. The optimizer inlines that expression, so it is pushed down, folded
//! and vectorised like the built-ins it is made of. The rest are written out
//! (`get_json_object`, `collect_list`, `collect_set`). The families:
//!
//! - `conditional`: `if`, `isnull`, `isnotnull`, `field`, and the aggregate `count_if`.
//! - `datetime`: `year` ... `second`, `quarter`, `dayofweek`, `weekofyear`, `dayofyear`,
//!   `datediff`, `date_add`, `date_sub`, `add_months`, `next_day`, `last_day`, `months_between`,
//!   `trunc`, `date_trunc`, `to_date`, `from_utc_timestamp`, `to_utc_timestamp`, `date_format`,
//!   `from_unixtime`, `unix_timestamp`, with Java date patterns
//!   ([`datetime::java_pattern`]).
//! - `strings`: `concat`, `concat_ws`, `substr`, `chr`, `locate`, `sha2`, `space`.
//! - `java_regex`: `regexp_replace`, `regexp_extract`, `regexp_extract_all`, `split`,
//!   `rlike`, with regexes read and applied as Java's.
//! - `json`: `get_json_object`, `json_tuple` (a struct per row; `hive_syntax` makes it a
//!   generator), with JSON text written as Hive's Jackson writes it.
//! - `json_values`: Spark's `to_json` and `from_json`, through the same JSON values.
//! - `collections`: `size`, `sort_array`, `collect_list`, `collect_set`, `generator_field`.
//! - `math`: `pmod`, `rand(seed)` (Hive's `java.util.Random` numbers), `bround`,
//!   `format_number`, `width_bucket`.
//! - `decimal_format`: `format_number(x, pattern)`, Java's `DecimalFormat` patterns.
//! - `decimal_places`: Spark's `round`, `ceil` and `floor`, a `DOUBLE` by its shortest
//!   decimal form, to Spark's types.
//! - `encoding`: `conv`, `bin`, `unhex`, `unbase64`, `sha1`, `crc32`, `soundex`, computed
//!   value by value ([`HiveFunction::computed`]), and `hash`.
//! - `printf`: `printf` (`format_string`), Java's `String.format`.
//! - `charsets`: `encode(string, charset)`, `decode(binary, charset)`, beside DataFusion's
//!   `'hex'` and `'base64'`.
//! - `masking`: `mask`, `mask_first_n`, `mask_last_n`, `mask_show_first_n`,
//!   `mask_show_last_n`, `mask_hash`.
//! - `generators`: `explode`, `posexplode`, `stack`, `inline` as the registry lists them
//!   (`hive_syntax` rewrites their calls).
//! - `sentences`: `sentences`, Java's `BreakIterator` sentences and words.
//! - `ngrams`: the aggregates `ngrams` and `context_ngrams`, the most frequent n-grams of
//!   sentences (in a context).
//! - `histogram`: the aggregate `histogram_numeric`, Hive's streaming histogram.
//! - `xpath`: `xpath`, `xpath_string`, `xpath_boolean`, `xpath_short`, `xpath_int`,
//!   `xpath_long`, `xpath_float`, `xpath_double` (`xpath_number`), XPath 1.0 over XML text.
//! - `reflect`: `reflect` (`java_method`), the Java static methods analysts call through it.
//! - `url_coding`: `url_encode`, `url_decode`, `try_url_decode`, Java's form encoding.
//! - `bits`: `shiftrightunsigned`, and Spark's `bit_count` and `bit_get` (`getbit`).
//! - `bitmaps`: Spark's bitmap functions and aggregates for exact distinct counts.
//! - `extremes`: Spark's aggregates `max_by` and `min_by`.
//! - `nested_extremes`: `max` and `min` of structs and arrays in Spark's order (an analyzer
//!   rule, through `max_by` and `min_by`).
//! - `moments`: Spark's aggregates `skewness` and `kurtosis`.
//! - `arrays`: Spark's `slice`, `array_insert` and `try_element_at`.
//! - `array_matches`: Spark's `array_remove` (every match) and `array_contains` (NULL when a
//!   NULL element might match).
//! - `sequences`: Spark's `sequence` of integers, dates or timestamps.
//! - `maps`: Spark's `map_from_arrays`, `map_from_entries` and `map_concat`.
//! - `try_arithmetic`: Spark's `try_add`, `try_subtract`, `try_multiply` and `try_mod`.
//! - `calendar_names`: Spark's `weekday`, `dayname` and `monthname`.
//! - `epochs`: Spark's `timestamp_seconds`, `timestamp_millis`, `timestamp_micros`,
//!   `unix_seconds`, `unix_millis` (Hive's `to_epoch_milli`), `unix_micros`, `unix_date`.
//! - `make_timestamp`: Spark's `make_timestamp` of a date's and time's fields.
//! - `intervals`: Spark's `make_interval`, `make_dt_interval` and `make_ym_interval`.
//! - `vectors`: Spark's measures of vectors (`vector_cosine_similarity`, `vector_norm`, ...).
//! - `types_of`: Spark's `typeof`, its names of types.
//! - `hashes`: Spark's `xxhash64` and Hive's `murmur_hash`.
//! - `higher_order`: Spark's lambda functions `transform`, `filter`, `exists`, `forall`,
//!   `aggregate` (`reduce`), `zip_with`, `map_filter`, `transform_keys`, `transform_values`,
//!   `map_zip_with`, and `array_sort` with a comparator.
//! - `assertions`: Spark's `assert_true`.
//! - `aes`: Spark's `aes_encrypt`, `aes_decrypt` and `try_aes_decrypt` (GCM, CBC, ECB).
//! - `quoting`: Hive's `quote`.
//! - `json_arrays`: Spark's `json_array_length` and `json_object_keys`.
//! - `json_schemas`: Spark's `schema_of_json`, the type its JSON reader infers.
//! - `csv_values`: Spark's `to_csv`, `from_csv` and `schema_of_csv`.
//! - `most_frequent`: Spark's aggregate `mode`.
//! - `percentile_disc`: Spark's aggregate `percentile_disc(p) WITHIN GROUP (ORDER BY x)`.
//! - `quantile_summaries`: Spark's aggregate `percentile_approx` (`approx_percentile`), of
//!   `x`'s type.
//! - `decimal_division`: Spark's `a / b` of decimals (its type, rounded half up), which
//!   `hive_syntax` plans for `/`.
//! - `decimal_average`: `avg` in place of DataFusion's, Spark's rounded mean of decimals.
//! - `usage`: what `DESCRIBE FUNCTION` says of each.
//!
//! Plus Hive's names for DataFusion's functions ([`ALIASES`]).
//!
//! `date_format`, `from_unixtime`, `to_date`, `trunc`, `date_trunc`, `chr`, `concat`, `substr`
//! and the regex functions replace DataFusion's functions of those names: SQL written for Hive
//! means Java date patterns, a string from `from_unixtime`, Spark's units (`'MM'`, `'DD'`) in
//! `date_trunc`, a code modulo 256 in `chr`, NULL from `concat` with a NULL, a negative
//! `substr` start counted from the end, every regex match replaced. A date pattern with `%`
//! is still read as DataFusion's strftime.

use std::sync::Arc;

use datafusion::arrow::array::{
    Array, ArrayRef, ListArray, RecordBatchOptions, StringBuilder, StructArray,
};
use datafusion::arrow::buffer::OffsetBuffer;
use datafusion::arrow::datatypes::{DataType, Field, FieldRef, Fields, Schema};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::common::{DFSchema, ScalarValue};
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::context::ExecutionProps;
use datafusion::logical_expr::physical_planning_context::PhysicalPlanningContext;
use datafusion::logical_expr::simplify::{ExprSimplifyResult, SimplifyContext};
use datafusion::logical_expr::{
    cast, col, lit, ColumnarValue, Documentation, Expr, ScalarFunctionArgs, ScalarUDF,
    ScalarUDFImpl, Signature, Volatility,
};
use datafusion::optimizer::simplify_expressions::ExprSimplifier;
use datafusion::physical_expr::create_physical_expr;
use datafusion::prelude::SessionContext;

pub mod aes;
pub mod array_matches;
pub mod arrays;
pub mod assertions;
pub mod bitmaps;
pub mod bits;
pub mod calendar_names;
pub mod charsets;
pub mod collections;
pub mod conditional;
pub mod csv_values;
pub mod datetime;
pub mod decimal_average;
pub mod decimal_division;
pub mod decimal_format;
pub mod decimal_places;
pub mod encoding;
pub mod epochs;
pub mod extremes;
pub mod generators;
pub mod hashes;
pub mod higher_order;
pub mod histogram;
pub mod intervals;
pub mod java_regex;
pub mod json;
pub mod json_arrays;
pub mod json_schemas;
pub mod json_values;
pub mod make_timestamp;
pub mod maps;
pub mod masking;
pub mod math;
pub mod moments;
pub mod most_frequent;
pub mod nested_extremes;
pub mod ngrams;
pub mod number_formats;
pub mod percentile_disc;
pub mod printf;
pub mod quantile_summaries;
pub mod quoting;
pub mod reflect;
pub mod row_ids;
pub mod sentences;
pub mod sequences;
pub mod strings;
pub mod timestamp_units;
pub mod try_aggregates;
pub mod try_arithmetic;
pub mod types_of;
pub mod url_coding;
mod usage;
pub mod vectors;
pub mod xpath;

/// Hive's (and Spark's) names for functions DataFusion has under another name, with the
/// same meaning: `(DataFusion's name, Hive's name)`.
pub const ALIASES: &[(&str, &str)] = &[
    ("lower", "lcase"),
    ("upper", "ucase"),
    ("ceil", "ceiling"),
    ("make_array", "array"),
    ("first_value", "first"),
    ("last_value", "last"),
    // Hive's exact percentile interpolates between the two nearest values, as this does.
    ("percentile_cont", "percentile"),
    ("approx_distinct", "approx_count_distinct"),
    // Hive's and Spark's: unix_timestamp with its argument required.
    ("unix_timestamp", "to_unix_timestamp"),
    ("signum", "sign"),
    // The sample's, as Spark's `variance` and `std` (Hive's are the population's).
    ("var_samp", "variance"),
    ("stddev", "std"),
    // Spark's names (3.3 and later) for functions of the same meaning.
    ("starts_with", "startswith"),
    ("ends_with", "endswith"),
    ("character_length", "len"),
    ("bool_and", "every"),
    ("bool_or", "some"),
    ("bool_or", "any"),
    ("datediff", "date_diff"),
    ("date_add", "dateadd"),
    ("current_date", "curdate"),
    // Spark's position(substr, s[, pos]) is locate's; `POSITION(substr IN s)` stays DataFusion's.
    ("locate", "position"),
    // Spark's element_at counts an array from 1 (and from the end below 0), and reads a map's
    // key; DataFusion's takes maps only. Its NULL beyond either end is Spark's without ANSI.
    ("try_element_at", "element_at"),
    // Spark's try_ forms, NULL where the text does not read: what these already answer.
    ("to_timestamp", "try_to_timestamp"),
    ("to_date", "try_to_date"),
    ("make_timestamp", "try_make_timestamp"),
    ("make_interval", "try_make_interval"),
    // Spark's timestamps with and without a local zone: one type here, a wall-clock time in
    // the session's zone, which both are shown as.
    ("to_timestamp", "to_timestamp_ltz"),
    ("to_timestamp", "to_timestamp_ntz"),
    ("make_timestamp", "make_timestamp_ltz"),
    ("make_timestamp", "make_timestamp_ntz"),
    ("make_timestamp", "try_make_timestamp_ltz"),
    ("make_timestamp", "try_make_timestamp_ntz"),
    // Already NULL for a URL that does not parse.
    ("parse_url", "try_parse_url"),
];

/// Registers the Hive functions and aliases in a session's context.
pub fn register(ctx: &SessionContext) {
    for udf in conditional::functions()
        .into_iter()
        .chain(datetime::functions())
        .chain(strings::functions())
        .chain(java_regex::functions())
        .chain(timestamp_units::functions())
        .chain(json::functions())
        .chain(bitmaps::functions())
        .chain(json_values::functions())
        .chain(collections::functions())
        .chain(math::functions())
        .chain(decimal_places::functions())
        .chain(encoding::functions())
        .chain(printf::functions())
        .chain(masking::functions())
        .chain(charsets::functions())
        .chain(sentences::functions())
        .chain(generators::functions())
        .chain(xpath::functions())
        .chain(reflect::functions())
        .chain(url_coding::functions())
        .chain(bits::functions())
        .chain(arrays::functions())
        .chain(array_matches::functions())
        .chain(sequences::functions())
        .chain(maps::functions())
        .chain(try_arithmetic::functions())
        .chain(calendar_names::functions())
        .chain(epochs::functions())
        .chain(make_timestamp::functions())
        .chain(intervals::functions())
        .chain(vectors::functions())
        .chain(types_of::functions())
        .chain(hashes::functions())
        .chain(assertions::functions())
        .chain(quoting::functions())
        .chain(json_arrays::functions())
        .chain(number_formats::functions())
        .chain(row_ids::functions())
        .chain(aes::functions())
        .chain(json_schemas::functions())
        .chain(csv_values::functions())
    {
        ctx.register_udf(udf);
    }
    for udaf in collections::aggregates()
        .into_iter()
        .chain(conditional::aggregates())
        .chain(bitmaps::aggregates())
        .chain(ngrams::aggregates())
        .chain(histogram::aggregates())
        .chain(extremes::aggregates())
        .chain(moments::aggregates())
        .chain(most_frequent::aggregates())
        .chain(percentile_disc::aggregates())
        .chain(quantile_summaries::aggregates())
        .chain(decimal_average::aggregates())
        .chain(try_aggregates::aggregates())
        .chain(vectors::aggregates())
    {
        ctx.register_udaf(udaf);
    }
    for function in higher_order::functions() {
        ctx.register_higher_order_function(Arc::new(function));
    }
    // Each function gets all its aliases at once, so that every name of it finds the same
    // function: two copies (`bool_or(x)` beside `some(x)`) would be two aggregates of one
    // output name, which fails the plan.
    let state = ctx.state();
    let mut names: Vec<&str> = Vec::new();
    for (name, _) in ALIASES {
        if !names.contains(name) {
            names.push(name);
        }
    }
    for name in names {
        let aliases = ALIASES
            .iter()
            .filter(|(of, _)| *of == name)
            .map(|(_, alias)| *alias);
        if let Some(udf) = state.scalar_functions().get(name) {
            ctx.register_udf(udf.as_ref().clone().with_aliases(aliases));
        } else if let Some(udaf) = state.aggregate_functions().get(name) {
            ctx.register_udaf(udaf.as_ref().clone().with_aliases(aliases));
        }
    }
}

/// What a [`HiveFunction::rewrite`] does with its arguments, given their types after
/// coercion.
type RewriteFn = fn(Vec<Expr>, &[DataType]) -> Result<Expr>;

/// What a [`HiveFunction::computed`] does with its arguments' values, as arrays of one
/// length.
pub type ComputeFn = fn(&[ArrayRef]) -> Result<ArrayRef>;

/// A [`ComputeFn`] that reads timestamps in the session's zone.
pub type ZonedComputeFn = fn(&[ArrayRef], &crate::time_zones::Zone) -> Result<ArrayRef>;

/// Hive's argument types and coercions (an error names the function and what it takes).
type CoerceFn = fn(&str, &[DataType]) -> Result<Vec<DataType>>;

/// A Hive scalar function: its name, Hive's implicit conversions of its arguments, its
/// result type, and how it answers ([`Body`]).
pub struct HiveFunction {
    name: &'static str,
    aliases: Vec<String>,
    signature: Signature,
    /// The types the arguments are cast to (Hive's implicit conversions).
    coerce: CoerceFn,
    /// The result's type, from the coerced argument types.
    returns: fn(&[DataType]) -> Result<DataType>,
    body: Body,
}

/// How a [`HiveFunction`] answers.
#[derive(Clone, Copy)]
enum Body {
    /// As an expression of DataFusion's functions, which the optimizer's simplification puts
    /// in place of each call. A call that reaches execution un-simplified (the optimizer
    /// turned off with `datafusion.optimizer.max_passes=0`, say) evaluates the same
    /// expression over its arguments, so the answer never depends on the optimizer.
    Rewrite(RewriteFn),
    /// Value by value over its arguments' arrays; NULL in, NULL out.
    Computed(ComputeFn),
    /// As `Computed`, given the session's time zone as the query runs.
    ComputedInZone(ZonedComputeFn),
}

crate::functions::identified_by_name!(HiveFunction);

impl HiveFunction {
    /// A deterministic function defined as an expression of DataFusion's functions.
    pub fn rewrite(
        name: &'static str,
        coerce: CoerceFn,
        returns: fn(&[DataType]) -> Result<DataType>,
        rewrite: RewriteFn,
    ) -> Self {
        Self::with_body(name, coerce, returns, Body::Rewrite(rewrite))
    }

    /// A deterministic function computed over its arguments' arrays.
    pub fn computed(
        name: &'static str,
        coerce: CoerceFn,
        returns: fn(&[DataType]) -> Result<DataType>,
        compute: ComputeFn,
    ) -> Self {
        Self::with_body(name, coerce, returns, Body::Computed(compute))
    }

    /// A deterministic function computed over its arguments' arrays and the session's
    /// time zone.
    pub fn computed_in_zone(
        name: &'static str,
        coerce: CoerceFn,
        returns: fn(&[DataType]) -> Result<DataType>,
        compute: ZonedComputeFn,
    ) -> Self {
        Self::with_body(name, coerce, returns, Body::ComputedInZone(compute))
    }

    fn with_body(
        name: &'static str,
        coerce: CoerceFn,
        returns: fn(&[DataType]) -> Result<DataType>,
        body: Body,
    ) -> Self {
        Self {
            name,
            aliases: Vec::new(),
            signature: Signature::user_defined(Volatility::Immutable),
            coerce,
            returns,
            body,
        }
    }

    pub fn with_aliases(mut self, aliases: &[&str]) -> Self {
        self.aliases = aliases.iter().map(|a| (*a).to_owned()).collect();
        self
    }

    pub fn with_signature(mut self, signature: Signature) -> Self {
        self.signature = signature;
        self
    }

    pub fn udf(self) -> ScalarUDF {
        ScalarUDF::new_from_impl(self)
    }

    /// The call rewritten by `rewrite`, cast to the declared type should the expression's
    /// differ (the plan's schema was computed from the declared one).
    fn expression(
        &self,
        rewrite: RewriteFn,
        args: Vec<Expr>,
        types: &[DataType],
        schema: &DFSchema,
    ) -> Result<Expr> {
        let declared = (self.returns)(types)?;
        let expr = rewrite(args, types)?;
        use datafusion::logical_expr::ExprSchemable;
        Ok(if expr.get_type(schema)? == declared {
            expr
        } else {
            cast(expr, declared)
        })
    }
}

impl ScalarUDFImpl for HiveFunction {
    fn name(&self) -> &str {
        self.name
    }

    fn aliases(&self) -> &[String] {
        &self.aliases
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        (self.coerce)(self.name, arg_types)
    }

    fn documentation(&self) -> Option<&Documentation> {
        usage::documentation(self.name)
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        (self.returns)(arg_types)
    }

    fn simplify(&self, args: Vec<Expr>, info: &SimplifyContext) -> Result<ExprSimplifyResult> {
        let Body::Rewrite(rewrite) = self.body else {
            return Ok(ExprSimplifyResult::Original(args));
        };
        let types = args
            .iter()
            .map(|arg| info.get_data_type(arg))
            .collect::<Result<Vec<_>>>()?;
        let expr = self.expression(rewrite, args, &types, info.schema())?;
        Ok(ExprSimplifyResult::Simplified(expr))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let rewrite = match self.body {
            Body::Computed(compute) if self.signature.volatility == Volatility::Volatile => {
                // A value for each row, even of constant arguments (`reflect`'s `randomUUID`).
                let arrays = args
                    .args
                    .iter()
                    .map(|arg| arg.to_array(args.number_rows))
                    .collect::<Result<Vec<_>>>()?;
                return Ok(ColumnarValue::Array(compute(&arrays)?));
            }
            Body::Computed(compute) => {
                let arrays = ColumnarValue::values_to_arrays(&args.args)?;
                return columnar(compute(&arrays)?, &args.args);
            }
            Body::ComputedInZone(compute) => {
                let arrays = ColumnarValue::values_to_arrays(&args.args)?;
                let zone = crate::time_zones::Zone::of_session(&args.config_options);
                return columnar(compute(&arrays, &zone)?, &args.args);
            }
            Body::Rewrite(rewrite) => rewrite,
        };
        // Not simplified: evaluate the rewritten expression over the arguments, constants
        // kept as literals (some rewrites need them, e.g. a date pattern).
        let mut fields = Vec::new();
        let mut columns = Vec::new();
        let mut exprs = Vec::new();
        let types: Vec<DataType> = args
            .arg_fields
            .iter()
            .map(|f| f.data_type().clone())
            .collect();
        for (i, (value, field)) in args.args.into_iter().zip(&args.arg_fields).enumerate() {
            match value {
                ColumnarValue::Scalar(scalar) => exprs.push(lit(scalar)),
                ColumnarValue::Array(array) => {
                    let name = format!("arg{i}");
                    fields.push(Field::new(&name, field.data_type().clone(), true));
                    columns.push(array);
                    exprs.push(col(name));
                }
            }
        }
        let schema = Arc::new(Schema::new(fields));
        let df_schema = Arc::new(DFSchema::try_from(Arc::clone(&schema))?);
        let expr = self.expression(rewrite, exprs, &types, &df_schema)?;
        // Simplified as the optimizer would have: some of DataFusion's functions (now())
        // only work so.
        let info = SimplifyContext::builder()
            .with_schema(Arc::clone(&df_schema))
            .with_config_options(Arc::clone(&args.config_options))
            .with_current_time()
            .build();
        let expr = ExprSimplifier::new(info).simplify(expr)?;
        let mut props = ExecutionProps::new();
        props.config_options = Some(args.config_options);
        let physical = create_physical_expr(
            &expr,
            &df_schema,
            &props,
            &PhysicalPlanningContext::default(),
        )?;
        let options = RecordBatchOptions::new().with_row_count(Some(args.number_rows));
        let batch = RecordBatch::try_new_with_options(schema, columns, &options)?;
        physical.evaluate(&batch)
    }
}

/// A function's result over its arguments' rows: one value when every argument was one.
pub(crate) fn columnar(result: ArrayRef, args: &[ColumnarValue]) -> Result<ColumnarValue> {
    Ok(
        if args.iter().all(|a| matches!(a, ColumnarValue::Scalar(_))) {
            ColumnarValue::Scalar(ScalarValue::try_from_array(&result, 0)?)
        } else {
            ColumnarValue::Array(result)
        },
    )
}

/// The type of a `*_tuple` function's value per row (`json_tuple`, `parse_url_tuple`): a
/// struct of strings `c0`, `c1`, ..., one per argument after the first, which
/// [`crate::hive_syntax`] spreads into the generator's columns.
pub fn string_tuple_type(types: &[DataType]) -> Result<DataType> {
    let fields: Vec<Field> = (0..types.len().saturating_sub(1))
        .map(|i| Field::new(format!("c{i}"), DataType::Utf8, true))
        .collect();
    Ok(DataType::Struct(fields.into()))
}

/// A `*_tuple` function's arguments: a text and one string or more, as strings.
fn string_tuple_types(name: &str, types: &[DataType], takes: &str) -> Result<Vec<DataType>> {
    let string = |t: &DataType| is_string(t) || t.is_null();
    if types.len() >= 2 && types.iter().all(string) {
        Ok(vec![DataType::Utf8; types.len()])
    } else {
        Err(bad_arguments(name, takes, types))
    }
}

/// A `*_tuple` function's structs: for each row, `values(text, names)` gives the strings of
/// the names the arguments after the first give (`names[i]` NULL for a NULL argument).
fn string_tuple(
    args: &[ArrayRef],
    mut values: impl FnMut(Option<&str>, &[Option<&str>]) -> Vec<Option<String>>,
) -> Result<ArrayRef> {
    let texts = encoding::strings_of(&args[0]);
    let names: Vec<Vec<Option<&str>>> = args[1..].iter().map(encoding::strings_of).collect();
    let mut columns: Vec<StringBuilder> = names.iter().map(|_| StringBuilder::new()).collect();
    let mut row_names = Vec::with_capacity(names.len());
    for (row, text) in texts.into_iter().enumerate() {
        row_names.clear();
        row_names.extend(names.iter().map(|column| column[row]));
        for (column, value) in columns.iter_mut().zip(values(text, &row_names)) {
            column.append_option(value);
        }
    }
    let DataType::Struct(fields) = string_tuple_type(&vec![DataType::Utf8; args.len()])? else {
        unreachable!("a tuple's type is a struct");
    };
    let columns: Vec<ArrayRef> = columns
        .iter_mut()
        .map(|column| Arc::new(column.finish()) as ArrayRef)
        .collect();
    Ok(Arc::new(StructArray::try_new(fields, columns, None)?))
}

/// A list of structs of `fields` with the given columns, as one scalar: the answer (and the
/// partial state) of the aggregates `ngrams` and `histogram_numeric`.
fn struct_list(fields: Fields, columns: Vec<ArrayRef>) -> Result<ScalarValue> {
    let structs = StructArray::try_new(fields.clone(), columns, None)?;
    let list = ListArray::try_new(
        Arc::new(Field::new_list_field(DataType::Struct(fields), true)),
        OffsetBuffer::from_lengths([structs.len()]),
        Arc::new(structs),
        None,
    )?;
    Ok(ScalarValue::List(Arc::new(list)))
}

/// The partial state of such an aggregate: its list (`list_type`) so far, then its integer
/// parameters, named for the state's columns.
fn list_and_parameters_state(
    aggregate: &str,
    list_type: DataType,
    parameters: &[&str],
) -> Vec<FieldRef> {
    std::iter::once(Field::new(format!("{aggregate}[list]"), list_type, true))
        .chain(
            parameters
                .iter()
                .map(|p| Field::new(format!("{aggregate}[{p}]"), DataType::Int64, true)),
        )
        .map(Arc::new)
        .collect()
}

/// The error for arguments a function does not take: the caller's mistake.
/// The state field `part` of an aggregate's state (`count_if(x)[count]`), as each of the
/// engine's aggregates names its parts.
fn state_field(
    args: &datafusion::logical_expr::function::StateFieldsArgs,
    part: &str,
    data_type: DataType,
    nullable: bool,
) -> datafusion::arrow::datatypes::FieldRef {
    Arc::new(datafusion::arrow::datatypes::Field::new(
        format!("{}[{part}]", args.name),
        data_type,
        nullable,
    ))
}

fn bad_arguments(name: &str, takes: &str, got: &[DataType]) -> DataFusionError {
    let got = got
        .iter()
        .map(|t| t.to_string())
        .collect::<Vec<_>>()
        .join(", ");
    DataFusionError::Plan(format!("{name} takes {takes}; it was given ({got})"))
}

/// The constant string of an argument, or `None` when it is not a literal.
fn literal_string(expr: &Expr) -> Option<Option<&str>> {
    match expr {
        Expr::Literal(ScalarValue::Utf8(s), _)
        | Expr::Literal(ScalarValue::LargeUtf8(s), _)
        | Expr::Literal(ScalarValue::Utf8View(s), _) => Some(s.as_deref()),
        Expr::Literal(ScalarValue::Null, _) => Some(None),
        _ => None,
    }
}

fn is_string(t: &DataType) -> bool {
    matches!(t, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View)
}

fn is_binary(t: &DataType) -> bool {
    matches!(
        t,
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView
    )
}

fn is_integer(t: &DataType) -> bool {
    t.is_integer() || matches!(t, DataType::Null)
}

#[cfg(test)]
pub(crate) mod tests;
