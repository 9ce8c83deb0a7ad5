//! Spark's implicit casts of a function's arguments (non-ANSI, as Hive's), where DataFusion
//! refuses the call while the statement is planned ("Function 'sum' failed to match any
//! signature"):
//!
//! - a string given to a function that takes numbers is a `DOUBLE`: `sum(s)`, `avg(s)`,
//!   `stddev(s)`, `percentile(s, 0.5)`, `abs(s)`, `sqrt(s)`, `round(s, 1)`, `pmod(s, 2)` of a
//!   string column (every column of a text table that was declared `STRING`) are the numbers'
//!   answers, a value that is not a number counting as NULL ([`NUMBER_FUNCTIONS`],
//!   [`NUMBER_AGGREGATES`]);
//! - a number, a date, a timestamp or a boolean given to a function that takes strings is its
//!   text: `substr(id, 1, 2)`, `lpad(id, 5, '0')`, `split(price, '\\.')`, `length(id)` of an
//!   `INT` column ([`STRING_FUNCTIONS`]); the text is Spark's (`80.0` for a `DOUBLE`, through
//!   [`super::SPARK_TEXT_CASTS`]);
//! - a string where such a function takes an integer is one (`'12.5'` is 12, as Hive's
//!   and Spark's casts read it): `repeat('x', s)`, `substr(t, s)`, `lpad(t, s, '0')`.
//!
//! Each such scalar function is wrapped ([`ImplicitCasts`]) under its own name, each such
//! aggregate by [`crate::spark_aggregates`] through [`strings_as_numbers`]: the wrapper asks the function for its argument types first, and only when the
//! function refuses them asks again with arguments cast as Spark casts them ([`Reading`]),
//! which DataFusion then casts (`' 3 '` is 3.0 and `'abc'` NULL through
//! [`super::SPARK_DOUBLE_CASTS`]). Everything else is the function's own, so a call that
//! planned before plans as before.

use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::{Result, ScalarValue};
use datafusion::config::ConfigOptions;
use datafusion::logical_expr::interval_arithmetic::Interval;
use datafusion::logical_expr::preimage::PreimageResult;
use datafusion::logical_expr::simplify::{ExprSimplifyResult, SimplifyContext};
use datafusion::logical_expr::sort_properties::{ExprProperties, SortProperties};
use datafusion::logical_expr::type_coercion::functions::{fields_with_udf, UDFCoercionExt};
use datafusion::logical_expr::{
    AggregateUDF, ColumnarValue, Documentation, Expr, ExpressionPlacement, ReturnFieldArgs,
    ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, StructFieldMapping,
};
use datafusion::prelude::SessionContext;

use super::string_operands::is_string;

/// The scalar functions whose numbers Spark casts a string to (`ImplicitCastInputTypes` of
/// `NumericType` or `DoubleType`). A name the engine does not have is skipped.
pub const NUMBER_FUNCTIONS: &[&str] = &[
    "abs",
    "acos",
    "acosh",
    "asin",
    "asinh",
    "atan",
    "atan2",
    "atanh",
    "bround",
    "cbrt",
    "ceil",
    "cos",
    "cosh",
    "cot",
    "csc",
    "degrees",
    "exp",
    "expm1",
    "factorial",
    "floor",
    "hypot",
    "isnan",
    "ln",
    "log",
    "log10",
    "log1p",
    "log2",
    "mod",
    "nanvl",
    "negative",
    "pmod",
    "positive",
    "pow",
    "power",
    "radians",
    "rint",
    "round",
    "sec",
    "sign",
    "signum",
    "sin",
    "sinh",
    "sqrt",
    "tan",
    "tanh",
    "width_bucket",
];

/// The scalar functions whose strings Spark casts any atomic value to (`implicitCast` of an
/// `AtomicType` to `StringType`).
pub const STRING_FUNCTIONS: &[&str] = &[
    "ascii",
    "btrim",
    "char_length",
    "character_length",
    "contains",
    "ends_with",
    "endswith",
    "find_in_set",
    "initcap",
    "instr",
    "lcase",
    "left",
    "length",
    "levenshtein",
    "locate",
    "lower",
    "lpad",
    "ltrim",
    "regexp_count",
    "regexp_extract",
    "regexp_extract_all",
    "regexp_like",
    "regexp_replace",
    "repeat",
    "replace",
    "reverse",
    "right",
    "rpad",
    "rtrim",
    "soundex",
    "split",
    "split_part",
    "starts_with",
    "startswith",
    "substr",
    "substring",
    "substring_index",
    "translate",
    "trim",
    "ucase",
    "upper",
];

/// The functions that choose among their values, whose common type beside a string is a
/// string in Spark (`findWiderCommonType`): a date or timestamp beside a string, which
/// DataFusion refused while planning (`coalesce(d, 'unknown')`), is its text. Numbers beside
/// strings plan in DataFusion already and are [`super::STRING_COMMON_TYPES`]'s.
pub const CHOICE_FUNCTIONS: &[&str] = &["coalesce", "nvl", "ifnull", "nvl2"];

/// The aggregates whose argument Spark casts a string to a `DOUBLE`.
pub const NUMBER_AGGREGATES: &[&str] = &[
    "sum",
    "avg",
    "stddev",
    "stddev_samp",
    "stddev_pop",
    "var_samp",
    "var_pop",
    "corr",
    "covar_samp",
    "covar_pop",
    "skewness",
    "kurtosis",
    "median",
    "percentile_cont",
    "approx_percentile_cont",
    "percentile_approx",
    "regr_slope",
    "regr_intercept",
    "regr_count",
    "regr_r2",
    "regr_avgx",
    "regr_avgy",
    "regr_sxx",
    "regr_syy",
    "regr_sxy",
];

/// Replaces each function of [`NUMBER_FUNCTIONS`] and [`STRING_FUNCTIONS`] registered in `ctx`
/// by its wrapper ([`NUMBER_AGGREGATES`] are [`crate::spark_aggregates`]'s). Called once all of the engine's
/// functions are registered.
pub fn register(ctx: &SessionContext) {
    let state = ctx.state();
    // An alias (`ceiling`, `pow`) finds a function already wrapped under its name.
    let mut wrapped: Vec<String> = Vec::new();
    let scalar = NUMBER_FUNCTIONS
        .iter()
        .map(|name| (name, Reading::StringsAsNumbers))
        .chain(
            STRING_FUNCTIONS
                .iter()
                .chain(CHOICE_FUNCTIONS)
                .map(|name| (name, Reading::ValuesAsStrings)),
        );
    for (name, reading) in scalar {
        let Some(udf) = state.scalar_functions().get(*name) else {
            continue;
        };
        if !wrapped.iter().any(|done| done == udf.name()) {
            wrapped.push(udf.name().to_owned());
            ctx.register_udf(ScalarUDF::new_from_impl(ImplicitCasts::new(
                udf.as_ref().clone(),
                reading,
            )));
        }
    }
}

/// `function`, reading a number, a date, a timestamp or a boolean as its text where it takes a
/// string: the wrapper of a function planned outside the registry (`SUBSTR(s, p)`).
pub fn values_as_strings(function: ScalarUDF) -> ScalarUDF {
    ScalarUDF::new_from_impl(ImplicitCasts::new(function, Reading::ValuesAsStrings))
}

/// How a function's arguments are cast when it refuses them as they are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reading {
    /// Strings as `DOUBLE`s, every one of them.
    StringsAsNumbers,
    /// Numbers, dates, timestamps and booleans as strings: the first argument alone (the
    /// string most string functions take first), else all of them, else each alone. Then
    /// strings as `BIGINT`s, where Spark casts a string to the `INT` such a function takes
    /// (`repeat('x', s)`): each alone, else all of them but the first (`substr(t, s1, s2)`).
    ValuesAsStrings,
}

impl Reading {
    /// The argument types to offer, in turn, after `types` were refused.
    fn tries(self, types: &[DataType]) -> Vec<Vec<DataType>> {
        // `types` with the arguments at `positions` read as `read_as`.
        let reading = |positions: &[usize], read_as: &DataType| -> Vec<DataType> {
            let mut tried = types.to_vec();
            for &i in positions {
                tried[i] = read_as.clone();
            }
            tried
        };
        let positions = |of: fn(&DataType) -> bool| -> Vec<usize> {
            (0..types.len()).filter(|&i| of(&types[i])).collect()
        };
        let mut tries = match self {
            Reading::StringsAsNumbers => {
                vec![reading(&positions(is_string), &DataType::Float64)]
            }
            Reading::ValuesAsStrings => {
                let castable = positions(has_text);
                let mut tries = Vec::new();
                if castable.first() == Some(&0) {
                    tries.push(reading(&[0], &DataType::Utf8));
                }
                tries.push(reading(&castable, &DataType::Utf8));
                tries.extend(castable.iter().map(|&i| reading(&[i], &DataType::Utf8)));
                let strings = positions(is_string);
                tries.extend(strings.iter().map(|&i| reading(&[i], &DataType::Int64)));
                if strings.len() > 2 {
                    tries.push(reading(&strings[1..], &DataType::Int64));
                }
                tries
            }
        };
        tries.dedup();
        tries.retain(|tried| tried.as_slice() != types);
        tries
    }
}

/// Whether Spark casts a value of this type to a string where a string is taken.
pub(super) fn has_text(data_type: &DataType) -> bool {
    data_type.is_numeric()
        || matches!(
            data_type,
            DataType::Boolean | DataType::Date32 | DataType::Date64 | DataType::Timestamp(..)
        )
}

/// The argument types `function` takes for `types`; when it refuses them, the first that it
/// takes of those `reading` offers. The function's own refusal when it takes none.
fn coerced_types<F: UDFCoercionExt>(
    function: &F,
    types: &[DataType],
    reading: Reading,
) -> Result<Vec<DataType>> {
    let taken = |types: &[DataType]| {
        let fields: Vec<FieldRef> = types
            .iter()
            .map(|t| Arc::new(Field::new("argument", t.clone(), true)))
            .collect();
        fields_with_udf(&fields, function)
            .map(|fields| fields.iter().map(|f| f.data_type().clone()).collect())
    };
    let refused = match taken(types) {
        Ok(types) => return Ok(types),
        Err(refused) => refused,
    };
    reading
        .tries(types)
        .iter()
        .find_map(|tried| taken(tried).ok())
        .ok_or(refused)
}

/// A scalar function whose arguments are cast as `reading` says when it refuses them
/// ([`coerced_types`]); otherwise the wrapped function.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct ImplicitCasts {
    function: ScalarUDF,
    reading: Reading,
    signature: Signature,
}

impl ImplicitCasts {
    pub fn new(function: ScalarUDF, reading: Reading) -> Self {
        let signature = Signature::user_defined(function.signature().volatility);
        Self {
            function,
            reading,
            signature,
        }
    }

    fn inner(&self) -> &dyn ScalarUDFImpl {
        self.function.inner().as_ref()
    }
}

impl ScalarUDFImpl for ImplicitCasts {
    fn name(&self) -> &str {
        self.function.name()
    }

    fn aliases(&self) -> &[String] {
        self.function.aliases()
    }

    fn schema_name(&self, args: &[Expr]) -> Result<String> {
        self.inner().schema_name(args)
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        coerced_types(&self.function, types, self.reading)
    }

    fn return_type(&self, types: &[DataType]) -> Result<DataType> {
        self.inner().return_type(types)
    }

    fn with_updated_config(&self, config: &ConfigOptions) -> Option<ScalarUDF> {
        self.inner()
            .with_updated_config(config)
            .map(|function| ScalarUDF::new_from_impl(Self::new(function, self.reading)))
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        self.inner().return_field_from_args(args)
    }

    fn is_strict(&self) -> bool {
        self.inner().is_strict()
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        self.inner().invoke_with_args(args)
    }

    fn simplify(&self, args: Vec<Expr>, info: &SimplifyContext) -> Result<ExprSimplifyResult> {
        self.inner().simplify(args, info)
    }

    fn preimage(
        &self,
        args: &[Expr],
        literal: &Expr,
        info: &SimplifyContext,
    ) -> Result<PreimageResult> {
        self.inner().preimage(args, literal, info)
    }

    fn short_circuits(&self) -> bool {
        self.inner().short_circuits()
    }

    fn conditional_arguments<'a>(
        &self,
        args: &'a [Expr],
    ) -> Option<(Vec<&'a Expr>, Vec<&'a Expr>)> {
        self.inner().conditional_arguments(args)
    }

    fn struct_field_mapping(
        &self,
        literal_args: &[Option<ScalarValue>],
    ) -> Option<StructFieldMapping> {
        self.inner().struct_field_mapping(literal_args)
    }

    fn placement(&self, args: &[ExpressionPlacement]) -> ExpressionPlacement {
        self.inner().placement(args)
    }

    fn evaluate_bounds(&self, input: &[&Interval]) -> Result<Interval> {
        self.inner().evaluate_bounds(input)
    }

    fn propagate_constraints(
        &self,
        interval: &Interval,
        inputs: &[&Interval],
    ) -> Result<Option<Vec<Interval>>> {
        self.inner().propagate_constraints(interval, inputs)
    }

    fn output_ordering(&self, inputs: &[ExprProperties]) -> Result<SortProperties> {
        self.inner().output_ordering(inputs)
    }

    fn preserves_lex_ordering(&self, inputs: &[ExprProperties]) -> Result<bool> {
        self.inner().preserves_lex_ordering(inputs)
    }

    fn strictly_order_preserving(&self, inputs: &[ExprProperties]) -> Result<bool> {
        self.inner().strictly_order_preserving(inputs)
    }

    fn documentation(&self) -> Option<&Documentation> {
        self.inner().documentation()
    }
}

/// The argument types `aggregate` takes for `types`, a string read as a `DOUBLE` where it
/// refuses one: the aggregates of [`NUMBER_AGGREGATES`].
pub fn strings_as_numbers(aggregate: &AggregateUDF, types: &[DataType]) -> Result<Vec<DataType>> {
    coerced_types(aggregate, types, Reading::StringsAsNumbers)
}
