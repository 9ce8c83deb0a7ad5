//! `format_number(x, 'pattern')`: `x` written by a Java `DecimalFormat` pattern
//! (`'#,###.00'`, `'0.0#'`, `'$#,##0.00;($#,##0.00)'`, `'0.0%'`), as Hive's and Spark's,
//! rounded half to even. Exponents (`E`) and currency signs (`¤`) are refused.

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, StringBuilder};
use datafusion::arrow::datatypes::{DataType, Decimal128Type, Float64Type, Int64Type};
use datafusion::common::{DataFusionError, Result};

use super::math::{round_digits, shortest_digits, Rounding};

/// A `DecimalFormat` pattern read as `DecimalFormat.applyPattern` reads it (US symbols).
#[derive(Debug, Clone, PartialEq)]
pub struct DecimalPattern {
    positive_prefix: String,
    positive_suffix: String,
    negative_prefix: String,
    negative_suffix: String,
    min_integer: usize,
    min_fraction: usize,
    max_fraction: usize,
    /// Digits between grouping separators; 0 for none.
    grouping: usize,
    point_always_shown: bool,
    /// 100 for `%`, 1000 for `‰`.
    multiplier: u32,
}

/// Spark's pattern for an empty one: `DecimalFormat`'s default without fractions.
const DEFAULT_PATTERN: &str = "#,###,###,###,###,###,##0";

impl DecimalPattern {
    pub fn parse(pattern: &str) -> Result<Self> {
        let pattern = if pattern.is_empty() {
            DEFAULT_PATTERN
        } else {
            pattern
        };
        let refuse = |why: &str| {
            DataFusionError::Execution(format!("format_number: the pattern '{pattern}' {why}"))
        };
        let chars: Vec<char> = pattern.chars().collect();
        let mut pos = 0;
        let mut subpatterns = Vec::new();
        // Each subpattern: prefix, number, suffix; the negative one's number is not read.
        for _ in 0..2 {
            if pos >= chars.len() && !subpatterns.is_empty() {
                break;
            }
            let mut prefix = String::new();
            let mut suffix = String::new();
            let mut multiplier = 1;
            let (mut left, mut zeros, mut right) = (0usize, 0usize, 0usize);
            let mut decimal: Option<usize> = None;
            let mut grouping: Option<usize> = None;
            let mut phase = 0;
            let mut quoted = false;
            while pos < chars.len() {
                let c = chars[pos];
                pos += 1;
                if phase == 1 {
                    match c {
                        '#' => {
                            if zeros > 0 {
                                right += 1;
                            } else {
                                left += 1;
                            }
                            if decimal.is_none() {
                                grouping = grouping.map(|g| g + 1);
                            }
                        }
                        '0' => {
                            if right > 0 {
                                return Err(refuse("has a '0' after a '#' in its fraction"));
                            }
                            zeros += 1;
                            if decimal.is_none() {
                                grouping = grouping.map(|g| g + 1);
                            }
                        }
                        ',' => grouping = Some(0),
                        '.' => {
                            if decimal.is_some() {
                                return Err(refuse("has two decimal points"));
                            }
                            decimal = Some(left + zeros + right);
                        }
                        'E' => return Err(refuse("has an exponent, which is not supported")),
                        _ => {
                            phase = 2;
                            pos -= 1;
                        }
                    }
                    continue;
                }
                let affix = if phase == 0 { &mut prefix } else { &mut suffix };
                if quoted {
                    if c == '\'' {
                        if chars.get(pos) == Some(&'\'') {
                            pos += 1;
                            affix.push('\'');
                        } else {
                            quoted = false;
                        }
                    } else {
                        affix.push(c);
                    }
                    continue;
                }
                match c {
                    '#' | '0' | ',' | '.' if phase == 0 => {
                        phase = 1;
                        pos -= 1;
                    }
                    '\'' => {
                        if chars.get(pos) == Some(&'\'') {
                            pos += 1;
                            affix.push('\'');
                        } else {
                            quoted = true;
                        }
                    }
                    ';' => break,
                    '%' => {
                        multiplier = 100;
                        affix.push('%');
                    }
                    '\u{2030}' => {
                        multiplier = 1000;
                        affix.push('\u{2030}');
                    }
                    '\u{a4}' => return Err(refuse("has a currency sign, which is not supported")),
                    _ if phase == 2 && matches!(c, '#' | '0' | ',' | '.') => {
                        return Err(refuse("has a digit or separator in its suffix"));
                    }
                    _ => affix.push(c),
                }
            }
            if quoted {
                return Err(refuse("has an unclosed quote"));
            }
            // `#.##` is read as `#0.##`, `.##` as `.0#` (Java's patterns without a `0`).
            if zeros == 0 && left > 0 && decimal.is_some() {
                let mut n = decimal.unwrap_or(0);
                if n == 0 {
                    n += 1;
                }
                right = left - n;
                left = n - 1;
                zeros = 1;
            }
            let total = left + zeros + right;
            let decimal_at = decimal.unwrap_or(total);
            subpatterns.push(Subpattern {
                prefix,
                suffix,
                multiplier,
                min_integer: decimal_at - left,
                max_fraction: decimal.map_or(0, |d| total - d),
                min_fraction: decimal.map_or(0, |d| (left + zeros).saturating_sub(d)),
                grouping: grouping.unwrap_or(0),
                point_always_shown: decimal == Some(0) || decimal == Some(total),
            });
        }
        let positive = subpatterns.remove(0);
        let (negative_prefix, negative_suffix) = match subpatterns.pop() {
            Some(negative) => (negative.prefix, negative.suffix),
            None => (format!("-{}", positive.prefix), positive.suffix.clone()),
        };
        Ok(Self {
            positive_prefix: positive.prefix,
            positive_suffix: positive.suffix,
            negative_prefix,
            negative_suffix,
            min_integer: positive.min_integer,
            min_fraction: positive.min_fraction,
            max_fraction: positive.max_fraction,
            grouping: positive.grouping,
            point_always_shown: positive.point_always_shown,
            multiplier: positive.multiplier,
        })
    }

    /// A `DOUBLE`: its shortest decimal digits (`Double.toString`'s) rounded half to even, a
    /// tie among them settled by the exact binary value, as Java's `DigitList` rounds.
    pub fn format_double(&self, x: f64) -> String {
        if x.is_nan() {
            return "NaN".to_owned();
        }
        let negative = x.is_sign_negative();
        let x = x.abs() * f64::from(self.multiplier);
        if x.is_infinite() {
            return self.affixed(negative, "\u{221e}".to_owned());
        }
        if x == 0.0 {
            return self.affixed(negative, self.number("", ""));
        }
        let (_, digits, point) = shortest_digits(x);
        let keep = point + self.max_fraction as i64;
        let tie = usize::try_from(keep)
            .ok()
            .is_some_and(|k| k < digits.len() && digits[k] == 5 && k + 1 == digits.len());
        if tie {
            // The exact value decides: Rust writes it rounded half to even.
            let text = format!("{:.*}", self.max_fraction, x);
            let (integer, fraction) = text.split_once('.').unwrap_or((text.as_str(), ""));
            return self.affixed(negative, self.number(integer, fraction));
        }
        let (kept, carried) = round_digits(&digits, keep, Rounding::HalfEven);
        let point = if carried { point + 1 } else { point };
        let (integer, fraction) = self.split(&kept, point);
        self.affixed(negative, self.number(&integer, &fraction))
    }

    /// The integer and fraction digits (at most the most fraction digits) of
    /// `0.DIGITS * 10^point`.
    fn split(&self, digits: &[u8], point: i64) -> (String, String) {
        let digit_at = |i: i64| {
            let digit = usize::try_from(i).ok().and_then(|i| digits.get(i)).copied();
            char::from(b'0' + digit.unwrap_or(0))
        };
        let integer = (0..point.max(0)).map(digit_at).collect();
        let fraction = (point..point + self.max_fraction as i64)
            .map(digit_at)
            .collect();
        (integer, fraction)
    }

    /// An integer.
    pub fn format_integer(&self, x: i64) -> String {
        let value = i128::from(x).unsigned_abs() * u128::from(self.multiplier);
        self.affixed(x < 0, self.number(&value.to_string(), ""))
    }

    /// A decimal, `value` at `scale`, rounded half to even.
    pub fn format_decimal(&self, value: i128, scale: i8) -> String {
        let mut digits: Vec<u8> = value
            .unsigned_abs()
            .to_string()
            .bytes()
            .map(|b| b - b'0')
            .collect();
        let mut point = digits.len() as i64 - i64::from(scale);
        // The multiplier's zeros move the point.
        point += match self.multiplier {
            100 => 2,
            1000 => 3,
            _ => 0,
        };
        if digits.iter().all(|&d| d == 0) {
            digits.clear();
        }
        let keep = point + self.max_fraction as i64;
        let (kept, carried) = round_digits(&digits, keep, Rounding::HalfEven);
        let point = if carried { point + 1 } else { point };
        let (integer, fraction) = self.split(&kept, point);
        self.affixed(value < 0, self.number(&integer, &fraction))
    }

    fn affixed(&self, negative: bool, number: String) -> String {
        if negative {
            format!("{}{number}{}", self.negative_prefix, self.negative_suffix)
        } else {
            format!("{}{number}{}", self.positive_prefix, self.positive_suffix)
        }
    }

    /// The digits as the pattern writes them: `integer` without its leading zeros, padded to
    /// the least integer digits and grouped; `fraction` (at most the most fraction digits)
    /// without its trailing zeros beyond the least.
    fn number(&self, integer: &str, fraction: &str) -> String {
        let integer = integer.trim_start_matches('0');
        let integer = format!(
            "{}{integer}",
            "0".repeat(self.min_integer.saturating_sub(integer.len()))
        );
        let mut fraction = fraction.to_owned();
        while fraction.len() > self.min_fraction && fraction.ends_with('0') {
            fraction.pop();
        }
        while fraction.len() < self.min_fraction {
            fraction.push('0');
        }
        let mut out = String::with_capacity(integer.len() * 4 / 3 + fraction.len() + 2);
        for (i, c) in integer.chars().enumerate() {
            if self.grouping > 0 && i > 0 && (integer.len() - i).is_multiple_of(self.grouping) {
                out.push(',');
            }
            out.push(c);
        }
        // Neither an integer digit nor a fraction: a zero.
        if integer.is_empty() && fraction.is_empty() {
            out.push('0');
        }
        if !fraction.is_empty() || self.point_always_shown {
            out.push('.');
        }
        out.push_str(&fraction);
        out
    }
}

/// One side of a pattern, before the negative one takes only its prefix and suffix.
struct Subpattern {
    prefix: String,
    suffix: String,
    multiplier: u32,
    min_integer: usize,
    min_fraction: usize,
    max_fraction: usize,
    grouping: usize,
    point_always_shown: bool,
}

/// `format_number(x, pattern)` of `x` (a `BIGINT`, a `DOUBLE` or a decimal) by each row's
/// pattern (a `STRING`); NULL for a NULL `x` or pattern.
pub fn format_number(args: &[ArrayRef]) -> Result<ArrayRef> {
    let patterns = args[1].as_string::<i32>();
    let mut last: Option<(String, DecimalPattern)> = None;
    let mut out = StringBuilder::with_capacity(patterns.len(), patterns.len() * 8);
    for row in 0..patterns.len() {
        if patterns.is_null(row) || args[0].is_null(row) {
            out.append_null();
            continue;
        }
        let text = patterns.value(row);
        // The pattern is parsed again only when it changes (usually a constant).
        let pattern = match &last {
            Some((seen, pattern)) if seen == text => pattern,
            _ => {
                &last
                    .insert((text.to_owned(), DecimalPattern::parse(text)?))
                    .1
            }
        };
        let value = match args[0].data_type() {
            DataType::Int64 => {
                pattern.format_integer(args[0].as_primitive::<Int64Type>().value(row))
            }
            DataType::Float64 => {
                pattern.format_double(args[0].as_primitive::<Float64Type>().value(row))
            }
            DataType::Decimal128(_, scale) => {
                pattern.format_decimal(args[0].as_primitive::<Decimal128Type>().value(row), *scale)
            }
            other => {
                return Err(DataFusionError::Internal(format!(
                    "format_number of a {other} array"
                )))
            }
        };
        out.append_value(value);
    }
    Ok(Arc::new(out.finish()))
}

#[cfg(test)]
mod tests {
    use crate::hive_functions::tests::check;
    use crate::test_util::{engine, error, open, value_rows};

    // Every expected value is Spark 4's (its literals with a point are decimals, the
    // engine's doubles: each case's digits round alike either way).
    #[tokio::test]
    async fn format_number_writes_a_decimal_format_pattern() {
        let engine = engine().await;
        let session = open(&engine);
        let cases: [(&str, &[&str]); 12] = [
            (
                "SELECT format_number(0.1D, '0.00000000000000000000'), \
                 format_number(0.125D, '#.##'), format_number(2.675D, '0.00'), \
                 format_number(1e-7D, '0.########')",
                &["0.10000000000000000000", "0.12", "2.67", "0.0000001"],
            ),
            (
                "SELECT format_number(1234567.891, '#,###.00'), \
                 format_number(1234567.891, '#,###.##'), format_number(1234567.891, '#.##'), \
                 format_number(1234567.891, '')",
                &["1,234,567.89", "1,234,567.89", "1234567.89", "1,234,568"],
            ),
            (
                "SELECT format_number(0.5, '#,###.00'), format_number(0.5, '#,##0.00'), \
                 format_number(0.125, '#.##'), format_number(0.135, '0.00'), \
                 format_number(2.5, '0'), format_number(3.5, '0')",
                &[".50", "0.50", "0.12", "0.14", "2", "4"],
            ),
            (
                "SELECT format_number(-1234.5, '#,###.00'), format_number(-0.001, '0.00'), \
                 format_number(1234567, '#,##0'), format_number(1234567, '##,##,###')",
                &["-1,234.50", "-0.00", "1,234,567", "1,234,567"],
            ),
            (
                "SELECT format_number(12.3, '000.000'), format_number(12.3, '#'), \
                 format_number(0, '#'), format_number(0, '#.##'), format_number(0.0, '0.##')",
                &["012.300", "12", "0", "0", "0"],
            ),
            (
                "SELECT format_number(CAST(1234.565 AS DECIMAL(10,3)), '#,###.00'), \
                 format_number(1.005, '0.00'), format_number(1e20, '#,###'), \
                 format_number(CAST(1234 AS INT), '#,###.0')",
                &["1,234.56", "1.00", "100,000,000,000,000,000,000", "1,234.0"],
            ),
            (
                "SELECT format_number(1234.5, '$#,###.00'), format_number(0.25, '0.0%'), \
                 format_number(1234.5, '#,###.00;(#,###.00)'), \
                 format_number(-1234.5, '#,###.00;(#,###.00)')",
                &["$1,234.50", "25.0%", "1,234.50", "(1,234.50)"],
            ),
            (
                "SELECT format_number(1234.5, 'abc'), format_number(NULL, '#.#'), \
                 format_number(1.5, CAST(NULL AS STRING))",
                &["abc1234", "NULL", "NULL"],
            ),
            (
                "SELECT format_number(1234.5, '#,##0.0#'), format_number(1234.567, '#,##0.0#'), \
                 format_number(1234.5, '0,000'), format_number(12, '0,000')",
                &["1,234.5", "1,234.57", "1,234", "0,012"],
            ),
            (
                "SELECT format_number(1234.5, '''#''#'), format_number(1234.5, '#,###.00 EUR')",
                &["#1234", "1,234.50 EUR"],
            ),
            (
                "SELECT typeof(format_number(1.5, '#.#')), format_number(1e-5, '#.##########'), \
                 format_number(123456789012345678, '#,###')",
                &["string", "0.00001", "123,456,789,012,345,678"],
            ),
            (
                "SELECT format_number(CAST(1.5 AS FLOAT), '0.000'), \
                 format_number(CAST(0.1 AS FLOAT), '0.0000000000'), \
                 format_number(0.1, '0.00000000000000000000')",
                &["1.500", "0.1000000015", "0.10000000000000000000"],
            ),
        ];
        for (sql, expected) in cases {
            check(&engine, &session, sql, expected).await;
        }
        let rows = value_rows(
            &engine,
            &session,
            "SELECT format_number(x, '#,###.00') FROM VALUES (1234.5D), (NULL), (-0.004D) AS t(x)",
        )
        .await;
        assert_eq!(rows, [["1,234.50"], ["NULL"], ["-.00"]]);
        // Spark writes `1.23E3`; exponents are not supported here.
        let message = error(&engine, &session, "SELECT format_number(1234.5, '0.00E0')")
            .await
            .to_string();
        assert!(message.contains("exponent"), "{message}");
    }
}
