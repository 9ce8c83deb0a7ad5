//! Hive's data masking functions (Hive 2.1+, `GenericUDFMask*`): `mask`, `mask_first_n`,
//! `mask_last_n`, `mask_show_first_n`, `mask_show_last_n` and `mask_hash`, which column
//! masking policies (Ranger's) call. Upper-case letters become `X`, lower-case `x`, digits
//! `n`, and other characters stay, unless the call names other replacements.

use datafusion::arrow::array::{Array, ArrayRef, AsArray};
use datafusion::arrow::datatypes::{DataType, Int64Type};
use datafusion::error::Result;
use datafusion::logical_expr::{lit, Expr, ScalarUDF};

use super::encoding::{integers_of, string_result, strings_of};
use super::{bad_arguments, ComputeFn, HiveFunction};

pub fn functions() -> Vec<ScalarUDF> {
    let masked = |_: &[DataType]| Ok(DataType::Utf8);
    // Each `mask_*_n` function and the characters it masks.
    let counted: [(&'static str, ComputeFn); 4] = [
        ("mask_first_n", |a| mask_n(a, Masked::FirstN)),
        ("mask_last_n", |a| mask_n(a, Masked::LastN)),
        ("mask_show_first_n", |a| mask_n(a, Masked::AllButFirstN)),
        ("mask_show_last_n", |a| mask_n(a, Masked::AllButLastN)),
    ];
    std::iter::once(HiveFunction::computed("mask", mask_types, masked, mask).udf())
        .chain(counted.into_iter().map(|(name, compute)| {
            HiveFunction::computed(name, mask_n_types, masked, compute).udf()
        }))
        .chain([HiveFunction::rewrite("mask_hash", mask_hash_types, masked, mask_hash).udf()])
        .collect()
}

/// What a replacement argument asks for a class of characters.
#[derive(Clone, Copy, PartialEq)]
enum Replacement {
    /// Hive's `-1`: the character stays.
    Keep,
    With(char),
}

/// The replacements of upper-case letters, lower-case letters, digits and other characters.
#[derive(Clone, Copy)]
struct Replacements([Replacement; 4]);

impl Replacements {
    /// Hive's defaults: `X`, `x`, `n`, others kept.
    const HIVE: Self = Self([
        Replacement::With('X'),
        Replacement::With('x'),
        Replacement::With('n'),
        Replacement::Keep,
    ]);

    /// The character `c` masked, as Hive's `MaskTransformer.transformChar` (by its Unicode
    /// category).
    fn mask(&self, c: char) -> char {
        let class = if c.is_uppercase() {
            0
        } else if c.is_lowercase() {
            1
        } else if c.is_ascii_digit() {
            // Java's DECIMAL_DIGIT_NUMBER also holds other scripts' digits, which the
            // standard library cannot tell from other numerals; they stay "other" here.
            2
        } else {
            3
        };
        match self.0[class] {
            Replacement::Keep => c,
            Replacement::With(r) => r,
        }
    }
}

/// The replacement arguments' values in a row, from the argument at `first` on. As Hive
/// reads them: a string's first character, an integer's character code (`-1` keeps the
/// character), and a NULL or empty string the default.
fn replacements(args: &[ArrayRef], first: usize, row: usize) -> Replacements {
    let mut chosen = Replacements::HIVE;
    for (slot, arg) in chosen.0.iter_mut().zip(args.iter().skip(first)) {
        if arg.is_null(row) {
            continue;
        }
        let replacement = match arg.data_type() {
            DataType::Int64 => {
                let code = arg.as_primitive::<Int64Type>().value(row);
                match u32::try_from(code).ok().and_then(char::from_u32) {
                    Some(c) => Replacement::With(c),
                    None => Replacement::Keep,
                }
            }
            _ => match arg.as_string::<i32>().value(row).chars().next() {
                Some(c) => Replacement::With(c),
                None => continue,
            },
        };
        *slot = replacement;
    }
    chosen
}

/// A value to mask is taken as text (Hive masks a number's digits with `1`; the engine masks
/// its text, as Spark's `mask` does); a replacement is a string or a character code.
fn replacement_types(types: &[DataType]) -> Option<Vec<DataType>> {
    types
        .iter()
        .map(|t| {
            if super::is_string(t) || t.is_null() {
                Some(DataType::Utf8)
            } else if t.is_integer() {
                Some(DataType::Int64)
            } else {
                None
            }
        })
        .collect()
}

fn maskable(t: &DataType) -> bool {
    super::is_string(t) || t.is_null() || t.is_numeric()
}

fn mask_types(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    match types {
        [value, chars @ ..] if maskable(value) && chars.len() <= 4 => {
            if let Some(chars) = replacement_types(chars) {
                return Ok(std::iter::once(DataType::Utf8).chain(chars).collect());
            }
            Err(bad_arguments(name, MASK_TAKES, types))
        }
        _ => Err(bad_arguments(name, MASK_TAKES, types)),
    }
}

const MASK_TAKES: &str = "(value[, upper, lower, digit, other])";

fn mask_n_types(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    let takes = "(value[, count[, upper, lower, digit, other]])";
    match types {
        [value] if maskable(value) => Ok(vec![DataType::Utf8]),
        [value, count, chars @ ..]
            if maskable(value) && super::is_integer(count) && chars.len() <= 4 =>
        {
            let chars =
                replacement_types(chars).ok_or_else(|| bad_arguments(name, takes, types))?;
            Ok([DataType::Utf8, DataType::Int64]
                .into_iter()
                .chain(chars)
                .collect())
        }
        _ => Err(bad_arguments(name, takes, types)),
    }
}

fn mask_hash_types(name: &str, types: &[DataType]) -> Result<Vec<DataType>> {
    match types {
        [t] if super::is_string(t) || t.is_null() => Ok(vec![DataType::Utf8]),
        _ => Err(bad_arguments(name, "a string", types)),
    }
}

/// `mask(value[, upper, lower, digit, other])`: every character masked.
fn mask(args: &[ArrayRef]) -> Result<ArrayRef> {
    Ok(string_result(
        strings_of(&args[0])
            .into_iter()
            .enumerate()
            .map(|(row, value)| {
                let chosen = replacements(args, 1, row);
                value.map(|value| value.chars().map(|c| chosen.mask(c)).collect())
            }),
    ))
}

/// Which characters a `mask_*_n` function masks, of a count `n`.
#[derive(Clone, Copy)]
enum Masked {
    /// `mask_first_n`.
    FirstN,
    /// `mask_last_n`.
    LastN,
    /// `mask_show_first_n`.
    AllButFirstN,
    /// `mask_show_last_n`.
    AllButLastN,
}

/// `mask_first_n(value[, n[, upper, lower, digit, other]])` and its kin: `n` (4 by default,
/// a negative one 0, a NULL one 4, as Hive) characters masked or shown.
fn mask_n(args: &[ArrayRef], masked: Masked) -> Result<ArrayRef> {
    let counts = match args.get(1) {
        Some(counts) => integers_of(counts),
        None => vec![None; args[0].len()],
    };
    Ok(string_result(
        strings_of(&args[0])
            .into_iter()
            .zip(counts)
            .enumerate()
            .map(|(row, (value, count))| {
                let chosen = replacements(args, 2, row);
                let n = usize::try_from(count.unwrap_or(4).max(0)).unwrap_or(usize::MAX);
                let value = value?;
                let length = value.chars().count();
                let is_masked = |at: usize| match masked {
                    Masked::FirstN => at < n,
                    Masked::LastN => at + n >= length,
                    Masked::AllButFirstN => at >= n,
                    Masked::AllButLastN => at + n < length,
                };
                Some(
                    value
                        .chars()
                        .enumerate()
                        .map(|(at, c)| if is_masked(at) { chosen.mask(c) } else { c })
                        .collect(),
                )
            }),
    ))
}

/// `mask_hash(s)`: the SHA-256 digest of the string's UTF-8 in lower-case hex, as Hive's
/// (`DigestUtils.sha256Hex`).
fn mask_hash(args: Vec<Expr>, _: &[DataType]) -> Result<Expr> {
    use datafusion::functions::expr_fn::{encode, sha256};
    let value = args.into_iter().next().expect("one argument");
    Ok(encode(sha256(value), lit("hex")))
}
