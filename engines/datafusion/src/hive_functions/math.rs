//! Hive's arithmetic functions DataFusion lacks or takes otherwise: `pmod`, `rand` with a
//! seed, `e`, `negative`, `positive`, `shiftleft`, `shiftright`.

use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex};

use datafusion::arrow::array::Float64Array;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{Result, ScalarValue};
use datafusion::functions::expr_fn::nullif;
use datafusion::logical_expr::simplify::{ExprSimplifyResult, SimplifyContext};
use datafusion::logical_expr::type_coercion::binary::type_union_resolution;
use datafusion::logical_expr::{
    lit, BinaryExpr, ColumnarValue, Documentation, Expr, Operator, ScalarFunctionArgs, ScalarUDF,
    ScalarUDFImpl, Signature, TypeSignature, Volatility,
};

use super::{bad_arguments, is_integer, Rewrite};

pub fn functions() -> Vec<ScalarUDF> {
    vec![
        Rewrite::new("pmod", two_numbers, |t| Ok(t[0].clone()), pmod).udf(),
        ScalarUDF::new_from_impl(Rand::new()),
        Rewrite::new(
            "e",
            |name, types| match types {
                [] => Ok(vec![]),
                _ => Err(bad_arguments(name, "no argument", types)),
            },
            |_| Ok(DataType::Float64),
            |_, _| Ok(lit(std::f64::consts::E)),
        )
        .with_signature(Signature::nullary(Volatility::Immutable))
        .udf(),
        Rewrite::new(
            "negative",
            one_number,
            |t| Ok(t[0].clone()),
            |a, _| Ok(-a[0].clone()),
        )
        .udf(),
        Rewrite::new(
            "positive",
            one_number,
            |t| Ok(t[0].clone()),
            |a, _| Ok(a[0].clone()),
        )
        .udf(),
        Rewrite::new(
            "shiftleft",
            shift_types,
            |t| Ok(t[0].clone()),
            |a, _| shift(a, Operator::BitwiseShiftLeft),
        )
        .udf(),
        Rewrite::new(
            "shiftright",
            shift_types,
            |t| Ok(t[0].clone()),
            |a, _| shift(a, Operator::BitwiseShiftRight),
        )
        .udf(),
    ]
}

fn one_number(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    match types {
        [t] if t.is_numeric() => Ok(vec![t.clone()]),
        [t] if t.is_null() => Ok(vec![DataType::Int32]),
        _ => Err(bad_arguments(name, "a number", types)),
    }
}

/// `shiftleft(a, b)`, `shiftright(a, b)`: `a` an `INT` or a `BIGINT` (smaller integers are
/// `INT`s, as in Hive), shifted by `b` bits.
fn shift_types(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    match types {
        [a, b] if is_integer(a) && is_integer(b) => {
            let t = if matches!(a, DataType::Int64 | DataType::UInt32 | DataType::UInt64) {
                DataType::Int64
            } else {
                DataType::Int32
            };
            Ok(vec![t.clone(), t])
        }
        _ => Err(bad_arguments(
            name,
            "an integer and a number of bits",
            types,
        )),
    }
}

fn shift(args: Vec<Expr>, op: Operator) -> Result<Expr> {
    let [a, b] = <[Expr; 2]>::try_from(args).expect("two arguments");
    Ok(Expr::BinaryExpr(BinaryExpr::new(
        Box::new(a),
        op,
        Box::new(b),
    )))
}

/// `pmod(a, b)`: `a` modulo `b`, never negative for a positive `b` (`pmod(-7, 3)` is 2
/// where `-7 % 3` is -1); NULL when `b` is 0, as in Hive, not a division error.
fn pmod(args: Vec<Expr>, types: &[DataType]) -> Result<Expr> {
    let [a, b] = <[Expr; 2]>::try_from(args).expect("two arguments");
    let divisor = nullif(b, lit(ScalarValue::new_zero(&types[1])?));
    Ok(((a % divisor.clone()) + divisor.clone()) % divisor)
}

fn two_numbers(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    let numeric = |t: &DataType| t.is_numeric() || t.is_null();
    match types {
        [a, b] if numeric(a) && numeric(b) => {
            let common = type_union_resolution(types)
                .filter(|t| t.is_numeric())
                .unwrap_or(DataType::Int64);
            Ok(vec![common.clone(), common])
        }
        _ => Err(bad_arguments(name, "two numbers", types)),
    }
}

/// `rand([seed])`, a `DOUBLE` in [0, 1). Without a seed, DataFusion's `random()`. With one,
/// Hive's: the numbers of a `java.util.Random(seed)`, one per row in the order rows are
/// computed, so a query gives the same numbers on every run (`rand(42)` is
/// 0.7275636800328681 on the first row, as in Hive) as long as its rows are computed in
/// one order (one partition, as one Hive mapper). A seed read from a column is its first
/// row's, as in Hive; NULL is 0.
///
/// The registered function has no generator: the optimizer gives each seeded call, in each
/// run of a query, a function with its own ([`ScalarUDFImpl::simplify`]). A call that
/// reaches execution un-simplified (the optimizer turned off) starts the sequence again on
/// each batch.
#[derive(Debug)]
pub struct Rand {
    signature: Signature,
    /// The generator of one call in one run; made when the first batch is computed.
    generator: Option<Arc<Mutex<Option<JavaRandom>>>>,
}

impl Rand {
    fn new() -> Self {
        Self {
            signature: Signature::one_of(
                vec![
                    TypeSignature::Nullary,
                    TypeSignature::Uniform(1, vec![DataType::Int64]),
                ],
                Volatility::Volatile,
            ),
            generator: None,
        }
    }
}

// One call's function is itself alone.
impl PartialEq for Rand {
    fn eq(&self, other: &Self) -> bool {
        match (&self.generator, &other.generator) {
            (None, None) => true,
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

impl Eq for Rand {}

impl Hash for Rand {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.generator.as_ref().map(Arc::as_ptr).hash(state);
    }
}

impl ScalarUDFImpl for Rand {
    fn name(&self) -> &str {
        "rand"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn documentation(&self) -> Option<&Documentation> {
        super::usage::documentation("rand")
    }

    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(DataType::Float64)
    }

    fn simplify(&self, args: Vec<Expr>, _: &SimplifyContext) -> Result<ExprSimplifyResult> {
        if self.generator.is_some() {
            return Ok(ExprSimplifyResult::Original(args));
        }
        if args.is_empty() {
            return Ok(ExprSimplifyResult::Simplified(
                datafusion::functions::math::random().call(args),
            ));
        }
        let seeded = Rand {
            signature: self.signature.clone(),
            generator: Some(Arc::new(Mutex::new(None))),
        };
        Ok(ExprSimplifyResult::Simplified(
            ScalarUDF::new_from_impl(seeded).call(args),
        ))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let Some(seed) = args.args.first() else {
            return datafusion::functions::math::random().invoke_with_args(args);
        };
        let rows = args.number_rows;
        if rows == 0 {
            return Ok(ColumnarValue::Array(Arc::new(Float64Array::from(
                Vec::<f64>::new(),
            ))));
        }
        let seed = match seed {
            ColumnarValue::Scalar(value) => value.clone(),
            ColumnarValue::Array(values) => ScalarValue::try_from_array(values, 0)?,
        };
        let seed = match seed {
            ScalarValue::Int64(Some(seed)) => seed,
            _ => 0,
        };
        let fill = |generator: &mut JavaRandom| {
            (0..rows)
                .map(|_| generator.next_double())
                .collect::<Float64Array>()
        };
        let values = match &self.generator {
            // Never held across an await: a batch's numbers are drawn at once.
            Some(generator) => {
                let mut generator = generator.lock().unwrap_or_else(|e| e.into_inner());
                fill(generator.get_or_insert_with(|| JavaRandom::new(seed)))
            }
            None => fill(&mut JavaRandom::new(seed)),
        };
        Ok(ColumnarValue::Array(Arc::new(values)))
    }
}

/// `java.util.Random`'s linear congruential generator, which Hive's `rand(seed)` draws from.
#[derive(Debug)]
pub struct JavaRandom {
    state: u64,
}

impl JavaRandom {
    const MULTIPLIER: u64 = 0x5_DEEC_E66D;
    const ADDEND: u64 = 0xB;
    const MASK: u64 = (1 << 48) - 1;

    pub fn new(seed: i64) -> Self {
        Self {
            state: (seed as u64 ^ Self::MULTIPLIER) & Self::MASK,
        }
    }

    /// The next `bits` random bits (`Random.next`).
    fn next(&mut self, bits: u32) -> u64 {
        self.state = self
            .state
            .wrapping_mul(Self::MULTIPLIER)
            .wrapping_add(Self::ADDEND)
            & Self::MASK;
        self.state >> (48 - bits)
    }

    /// `Random.nextDouble`: 53 random bits as a fraction.
    pub fn next_double(&mut self) -> f64 {
        let bits = (self.next(26) << 27) + self.next(27);
        bits as f64 / (1u64 << 53) as f64
    }
}
