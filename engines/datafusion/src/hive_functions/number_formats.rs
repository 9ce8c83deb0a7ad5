//! Spark's number formats: `to_number(text, format)` reads a number written as the format
//! describes (`to_number('$1,234.50', '$9,999.99')` is 1234.50, a `DECIMAL(6,2)`), and
//! `try_to_number` gives NULL where `to_number` fails; `to_char(number, format)` (and
//! `to_varchar`) writes one (`to_char(-12454.8, '99G999D9S')` is `12,454.8-`), as Spark's
//! `ToNumberParser` reads and writes them. `to_char` of a date or a timestamp is
//! `date_format`, and of a binary value its `'hex'`, `'base64'` or `'utf-8'` text, as in
//! Spark 4. DataFusion's `to_char` (of dates, in `strftime` patterns) is replaced.
//!
//! A format is read once per query, in upper case, and must be a constant: its digits give
//! `to_number`'s type. Its parts, in this order (`[MI|S] [$] [0|9|G|,]... [.|D] [0|9]...
//! [$] [PR|MI|S]`):
//! - `0` and `9`: a digit; a `0` before the decimal point asks for exactly as many digits as
//!   the `0`s and `9`s after it (`to_char(5, '000')` is `005`), a `9` for at most as many
//!   (`to_char(5, '999')` is `  5`);
//! - `,` or `G` between digits, `.` or `D` once: the thousands separator and the point;
//! - `$`: a dollar sign;
//! - `S` at either end: the sign, `+` or `-`; `MI` at either end: a `-` for a negative
//!   number (a space otherwise); `PR` at the end: a negative number between `<` and `>`.
//!
//! `to_char` of a number with more digits than its format holds writes `#` for each digit
//! (`to_char(12345, '99')` is `##`), as Spark. A number that is not a `DECIMAL` is written
//! as Spark writes the decimal it casts it to: an integer whole, a `DOUBLE` or a string
//! through `DECIMAL(38,18)` (NULL beyond it).

use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, AsArray, Decimal128Builder, StringBuilder};
use datafusion::arrow::datatypes::{DataType, Decimal128Type, Field, FieldRef, Float64Type};
use datafusion::common::{DataFusionError, Result, ScalarValue};
use datafusion::logical_expr::simplify::{ExprSimplifyResult, SimplifyContext};
use datafusion::logical_expr::{
    ColumnarValue, Documentation, Expr, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF,
    ScalarUDFImpl, Signature, Volatility,
};

use super::encoding::bytes_of;
use super::{bad_arguments, is_integer, is_string};
use crate::spark_casts::double_to_decimal::unscaled;

pub fn functions() -> Vec<ScalarUDF> {
    vec![
        ScalarUDF::new_from_impl(ToNumber {
            name: "to_number",
            fails: true,
            signature: Signature::user_defined(Volatility::Immutable),
        }),
        ScalarUDF::new_from_impl(ToNumber {
            name: "try_to_number",
            fails: false,
            signature: Signature::user_defined(Volatility::Immutable),
        }),
        ScalarUDF::new_from_impl(ToChar {
            name: "to_char",
            aliases: vec!["to_varchar".to_owned()],
            signature: Signature::user_defined(Volatility::Immutable),
            moments: super::HiveFunction::rewrite(
                "to_char",
                |_, types| Ok(types.to_vec()),
                |_| Ok(DataType::Utf8),
                super::datetime::date_format,
            )
            .udf(),
        }),
    ]
}

/// How many digits a part of a format stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Digits {
    /// Exactly this many: `0` first, before the point.
    Exactly(usize),
    /// At most this many: `9` first, or any after the point.
    AtMost(usize),
}

impl Digits {
    fn count(self) -> usize {
        match self {
            Digits::Exactly(n) | Digits::AtMost(n) => n,
        }
    }
}

/// What one part of a group of digits is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum GroupItem {
    Digits(Digits),
    Separator,
}

/// One part of a format.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Part {
    /// Digits and the thousands separators between them, left to right.
    Group(Vec<GroupItem>),
    Point,
    Dollar,
    /// `S`: `+` or `-`.
    PlusOrMinus,
    /// `MI`: `-` or nothing.
    Minus,
    /// `PR`'s `<`, before everything else.
    OpenBracket,
    /// `PR`'s `>`, where `PR` stood.
    CloseBracket,
    Unknown(char),
}

impl Part {
    /// The part as a message names it.
    fn described(&self) -> String {
        match self {
            Part::Group(_) => "digit sequence".to_owned(),
            Part::Point => ". or D".to_owned(),
            Part::Dollar => "$".to_owned(),
            Part::PlusOrMinus => "S".to_owned(),
            Part::Minus => "MI".to_owned(),
            Part::OpenBracket | Part::CloseBracket => "PR".to_owned(),
            Part::Unknown(c) => format!("character '{c}'"),
        }
    }

    /// Whether the part stands where `slot` does in a format's order (any group for a group).
    fn fits(&self, slot: &Part) -> bool {
        match (self, slot) {
            (Part::Group(_), Part::Group(_)) => true,
            _ => self == slot,
        }
    }
}

/// A number format, read and checked.
#[derive(Debug)]
pub struct NumberFormat {
    parts: Vec<Part>,
    /// Its digits, in all.
    precision: usize,
    /// Its digits after the point.
    scale: usize,
}

impl NumberFormat {
    /// The format `text` describes (in any case), or what is wrong with it.
    pub fn new(text: &str) -> std::result::Result<Self, String> {
        let text = text.to_uppercase();
        if text.is_empty() {
            return Err("the format is empty".to_owned());
        }
        let parts = grouped(tokens(&text));
        let format = Self {
            precision: parts.iter().map(digit_count).sum(),
            scale: match parts.iter().position(|p| *p == Part::Point) {
                Some(point) => parts[point..].iter().map(digit_count).sum(),
                None => 0,
            },
            parts,
        };
        format
            .check()
            .map_err(|why| format!("the format '{text}' is invalid: {why}"))?;
        Ok(format)
    }

    /// The type `to_number` gives: a `DECIMAL` of the format's digits.
    pub fn decimal_type(&self) -> DataType {
        DataType::Decimal128(self.precision as u8, self.scale as i8)
    }

    fn check(&self) -> std::result::Result<(), String> {
        let parts = &self.parts;
        let index_of = |part: &Part| parts.iter().position(|p| p == part);
        let Some(first_digits) = parts.iter().position(|p| matches!(p, Part::Group(_))) else {
            return Err("it has no digits; write 0 or 9 for each".to_owned());
        };
        if self.precision > 38 {
            return Err(format!(
                "it has {} digits, beyond a DECIMAL's 38",
                self.precision
            ));
        }
        let point = index_of(&Part::Point);
        if let Some(dollar) = index_of(&Part::Dollar) {
            if first_digits < dollar {
                return Err("its $ must come before its digits".to_owned());
            }
            if point.is_some_and(|point| point < dollar) {
                return Err("its $ must come before its decimal point".to_owned());
            }
        }
        for (i, part) in parts.iter().enumerate() {
            let Part::Group(items) = part else { continue };
            let separators = items.iter().filter(|item| **item == GroupItem::Separator);
            if point.is_some_and(|point| i > point) {
                if separators.count() > 0 {
                    return Err("a , or G cannot follow the decimal point".to_owned());
                }
            } else if items.iter().enumerate().any(|(j, item)| {
                *item == GroupItem::Separator
                    && (j == 0
                        || j == items.len() - 1
                        || items[j - 1] == GroupItem::Separator
                        || items[j + 1] == GroupItem::Separator)
            }) {
                return Err("a , or G must stand between digits".to_owned());
            }
        }
        for once in [
            Part::Point,
            Part::PlusOrMinus,
            Part::Minus,
            Part::Dollar,
            Part::CloseBracket,
        ] {
            if parts.iter().filter(|p| **p == once).count() > 1 {
                return Err(format!("at most one {} is allowed", once.described()));
            }
        }
        let group = || Part::Group(Vec::new());
        let order: [&[Part]; 8] = [
            &[Part::OpenBracket],
            &[Part::Minus, Part::PlusOrMinus],
            &[Part::Dollar],
            &[group()],
            &[Part::Point],
            &[group()],
            &[Part::Dollar],
            &[Part::Minus, Part::PlusOrMinus, Part::CloseBracket],
        ];
        let mut at = 0;
        for slot in order {
            if parts
                .get(at)
                .is_some_and(|part| slot.iter().any(|s| part.fits(s)))
            {
                at += 1;
            }
        }
        match parts.get(at) {
            None => Ok(()),
            Some(part) => Err(format!(
                "found the unexpected {}; a format is [MI|S] [$] [0|9|G|,]... [.|D] [0|9]... \
                 [$] [PR|MI|S]",
                part.described()
            )),
        }
    }

    /// The number `input` writes as this format describes it, as the unscaled value of
    /// [`NumberFormat::decimal_type`]; `None` when it does not match.
    pub fn read(&self, input: &str) -> Option<i128> {
        let input: Vec<char> = input.chars().collect();
        let mut reading = Reading::default();
        let mut at = 0;
        for part in &self.parts {
            let next = input.get(at).copied();
            match part {
                Part::Group(items) => at = reading.digits(items, &input, at)?,
                Part::Point => {
                    if next == Some('.') {
                        reading.after_point = true;
                        at += 1;
                    }
                }
                Part::Dollar => match next {
                    Some('$') => at += 1,
                    Some(_) => return None,
                    None => {}
                },
                Part::PlusOrMinus => match next {
                    Some('+') => at += 1,
                    Some('-') => {
                        reading.negative = !reading.negative;
                        at += 1;
                    }
                    _ => {}
                },
                Part::Minus => {
                    if next == Some('-') {
                        reading.negative = !reading.negative;
                        at += 1;
                    }
                }
                Part::OpenBracket => {
                    if next == Some('<') {
                        if reading.opened {
                            return None;
                        }
                        reading.opened = true;
                        at += 1;
                    }
                }
                Part::CloseBracket => {
                    if next == Some('>') {
                        if !reading.opened {
                            return None;
                        }
                        reading.closed = true;
                        reading.negative = !reading.negative;
                        at += 1;
                    }
                }
                Part::Unknown(_) => return None,
            }
        }
        if at < input.len()
            || reading.opened != reading.closed
            || (reading.before.is_empty() && reading.after.is_empty())
        {
            return None;
        }
        let mut digits = reading.before;
        digits.push_str(&reading.after);
        digits.extend(std::iter::repeat_n('0', self.scale - reading.after.len()));
        let value: i128 = digits.parse().ok()?;
        Some(if reading.negative { -value } else { value })
    }

    /// `unscaled` (a decimal of `scale` places) written as this format describes.
    pub fn write(&self, unscaled: i128, scale: i8) -> String {
        let negative = unscaled < 0;
        let (mut before, mut after) = plain_digits(unscaled.unsigned_abs(), scale);
        let (room_before, room_after) = (self.precision - self.scale, self.scale);
        if before.len() > room_before || after.len() > room_after {
            before = "#".repeat(room_before);
            after = "#".repeat(room_after);
        }
        let before: Vec<char> = " "
            .repeat(room_before - before.len())
            .chars()
            .chain(before.chars())
            .collect();
        let after: Vec<char> = after
            .chars()
            .chain(std::iter::repeat_n('0', room_after - after.len()))
            .collect();
        let (mut next_before, mut next_after) = (0, 0);
        let mut out = Written::default();
        let mut after_point = false;
        for part in &self.parts {
            match part {
                Part::Group(items) => {
                    for item in items {
                        match item {
                            GroupItem::Digits(digits) if after_point => {
                                for _ in 0..digits.count() {
                                    out.0.push(after[next_after]);
                                    next_after += 1;
                                }
                            }
                            GroupItem::Digits(digits) => {
                                for _ in 0..digits.count() {
                                    match before[next_before] {
                                        ' ' if matches!(digits, Digits::Exactly(_)) => {
                                            out.0.push('0')
                                        }
                                        ' ' => out.space_before_sign(),
                                        digit => out.0.push(digit),
                                    }
                                    next_before += 1;
                                }
                            }
                            GroupItem::Separator => {
                                if out.0.last().is_some_and(char::is_ascii_digit) {
                                    out.0.push(',');
                                } else {
                                    out.space_before_sign();
                                }
                            }
                        }
                    }
                }
                Part::Point => {
                    // No digit before the point: a 0 there (`0.50`).
                    if let Some(last) = out.0.last_mut().filter(|c| **c == ' ') {
                        *last = '0';
                    }
                    out.0.push('.');
                    after_point = true;
                }
                Part::Dollar => out.0.push('$'),
                Part::PlusOrMinus => {
                    out.blank_lone_point();
                    out.sign_after_spaces(if negative { '-' } else { '+' });
                }
                Part::Minus => {
                    if negative {
                        out.blank_lone_point();
                        out.sign_after_spaces('-');
                    } else {
                        out.0.push(' ');
                    }
                }
                Part::OpenBracket => {
                    if negative {
                        out.0.push('<');
                    }
                }
                Part::CloseBracket => {
                    out.blank_lone_point();
                    if negative {
                        out.sign_after_spaces('>');
                    } else {
                        out.0.extend([' ', ' ']);
                    }
                }
                Part::Unknown(_) => {}
            }
        }
        out.blank_lone_point();
        let text: String = out.0.into_iter().collect();
        if text.is_empty() || text == "+" || text == "-" {
            "0".to_owned()
        } else {
            text
        }
    }
}

/// A format's characters as parts, each `0`/`9` run one group of digits and each
/// separator its own, not yet grouped ([`grouped`]).
fn tokens(text: &str) -> Vec<Part> {
    let chars: Vec<char> = text.chars().collect();
    let mut parts = Vec::new();
    let mut after_point = false;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '0' | '9' => {
                let start = i;
                while i < chars.len() && matches!(chars[i], '0' | '9') {
                    i += 1;
                }
                let count = i - start;
                let digits = if c == '0' && !after_point {
                    Digits::Exactly(count)
                } else {
                    Digits::AtMost(count)
                };
                parts.push(Part::Group(vec![GroupItem::Digits(digits)]));
                continue;
            }
            '.' | 'D' => {
                parts.push(Part::Point);
                after_point = true;
            }
            ',' | 'G' => parts.push(Part::Group(vec![GroupItem::Separator])),
            '$' => parts.push(Part::Dollar),
            'S' => parts.push(Part::PlusOrMinus),
            'M' if chars.get(i + 1) == Some(&'I') => {
                parts.push(Part::Minus);
                i += 1;
            }
            'P' if chars.get(i + 1) == Some(&'R') => {
                parts.insert(0, Part::OpenBracket);
                parts.push(Part::CloseBracket);
                i += 1;
            }
            other => parts.push(Part::Unknown(other)),
        }
        i += 1;
    }
    parts
}

/// Consecutive digits and separators joined into one group.
fn grouped(tokens: Vec<Part>) -> Vec<Part> {
    let mut parts: Vec<Part> = Vec::with_capacity(tokens.len());
    for token in tokens {
        match (parts.last_mut(), token) {
            (Some(Part::Group(items)), Part::Group(more)) => items.extend(more),
            (_, token) => parts.push(token),
        }
    }
    parts
}

fn digit_count(part: &Part) -> usize {
    match part {
        Part::Group(items) => items
            .iter()
            .map(|item| match item {
                GroupItem::Digits(digits) => digits.count(),
                GroupItem::Separator => 0,
            })
            .sum(),
        _ => 0,
    }
}

/// A number's digits before and after its point, without its sign, leading zeros and
/// trailing zeros (`0.50` is `("", "5")`), as Spark compares them with a format.
fn plain_digits(magnitude: u128, scale: i8) -> (String, String) {
    let (before, after) = if scale <= 0 {
        let zeros = "0".repeat(usize::from(scale.unsigned_abs()));
        (format!("{magnitude}{zeros}"), String::new())
    } else {
        let text = format!("{magnitude:0>width$}", width = usize::from(scale as u8) + 1);
        let (before, after) = text.split_at(text.len() - scale as usize);
        (before.to_owned(), after.to_owned())
    };
    (
        before.trim_start_matches('0').to_owned(),
        after.trim_end_matches('0').to_owned(),
    )
}

/// What [`NumberFormat::read`] has read so far.
#[derive(Default)]
struct Reading {
    before: String,
    after: String,
    after_point: bool,
    negative: bool,
    opened: bool,
    closed: bool,
}

impl Reading {
    /// Reads the digits, separators and spaces from `at` on for a group of the format:
    /// where they end, or `None` when their groups do not fit the format's.
    fn digits(&mut self, items: &[GroupItem], input: &[char], mut at: usize) -> Option<usize> {
        // The size of each group of digits the input has, right to left, and the format's.
        let mut sizes = Vec::new();
        let mut current = 0;
        while let Some(&c) = input.get(at) {
            if c.is_whitespace() {
            } else if c.is_ascii_digit() {
                current += 1;
                if self.after_point {
                    self.after.push(c);
                } else {
                    self.before.push(c);
                }
            } else if c == ',' {
                sizes.push(current);
                current = 0;
            } else {
                break;
            }
            at += 1;
        }
        sizes.push(current);
        sizes.reverse();
        let expected: Vec<Digits> = items
            .iter()
            .rev()
            .filter_map(|item| match item {
                GroupItem::Digits(digits) => Some(*digits),
                GroupItem::Separator => None,
            })
            .collect();
        if sizes.len() > expected.len() {
            return None;
        }
        for (i, digits) in expected.iter().enumerate() {
            let found = sizes.get(i).copied().unwrap_or(0);
            let fits = match digits {
                Digits::Exactly(n) => found == *n,
                Digits::AtMost(n) => found <= *n,
            };
            if !fits {
                return None;
            }
        }
        Some(at)
    }
}

/// The text [`NumberFormat::write`] builds, with Spark's moves of signs past spaces.
#[derive(Default)]
struct Written(Vec<char>);

impl Written {
    /// `sign` at the end, moved left past the spaces before it, so that it follows the last
    /// digit (`5-  `).
    fn sign_after_spaces(&mut self, sign: char) {
        self.0.push(sign);
        let mut i = self.0.len() - 1;
        while i >= 1 && self.0[i - 1] == ' ' && self.0[i] == sign {
            self.0.swap(i - 1, i);
            i -= 1;
        }
    }

    /// A space for a digit the number lacks, put before a sign or `<` already written, so
    /// that the sign stays next to the digits (`  -5`).
    fn space_before_sign(&mut self) {
        self.0.push(' ');
        let mut i = self.0.len() - 1;
        while i >= 1 && matches!(self.0[i - 1], '+' | '-' | '<') && self.0[i] == ' ' {
            self.0.swap(i - 1, i);
            i -= 1;
        }
    }

    /// A point with no digit after it becomes a space.
    fn blank_lone_point(&mut self) {
        if let Some(i) = self.0.iter().position(|c| *c == '.') {
            if self.0.get(i + 1).is_none_or(|c| *c == ' ') {
                self.0[i] = ' ';
            }
        }
    }
}

/// The constant format of a call, read; `Ok(None)` for a NULL one.
fn constant_format(name: &str, format: Option<&ScalarValue>) -> Result<Option<NumberFormat>> {
    let text = match format {
        Some(
            ScalarValue::Utf8(text) | ScalarValue::LargeUtf8(text) | ScalarValue::Utf8View(text),
        ) => text.as_deref(),
        Some(ScalarValue::Null) => None,
        _ => {
            return Err(DataFusionError::Plan(format!(
                "{name}: the format must be a constant string such as '9,999.99'"
            )))
        }
    };
    match text {
        None => Ok(None),
        Some(text) => NumberFormat::new(text)
            .map(Some)
            .map_err(|why| DataFusionError::Plan(format!("{name}: {why}"))),
    }
}

/// `to_number(text, format)` and `try_to_number`.
struct ToNumber {
    name: &'static str,
    /// Whether a text the format does not describe fails the query (`to_number`) or is
    /// NULL (`try_to_number`).
    fails: bool,
    signature: Signature,
}

crate::functions::identified_by_name!(ToNumber, ToChar);

impl ScalarUDFImpl for ToNumber {
    fn name(&self) -> &str {
        self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn documentation(&self) -> Option<&Documentation> {
        super::usage::documentation(self.name)
    }

    fn coerce_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        let text = |t: &DataType| is_string(t) || t.is_numeric() || t.is_null();
        match types {
            // A NULL format stays one, which return_field_from_args sees as a constant.
            [value, format] if text(value) && (is_string(format) || format.is_null()) => {
                Ok(vec![DataType::Utf8, format.clone()])
            }
            _ => Err(bad_arguments(self.name, "(text, format)", types)),
        }
    }

    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Err(DataFusionError::Internal(format!(
            "{}'s type comes from its format",
            self.name
        )))
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let format = args.scalar_arguments.get(1).copied().flatten();
        let data_type = match constant_format(self.name, format)? {
            Some(format) => format.decimal_type(),
            // Spark's type for a NULL format.
            None => DataType::Decimal128(10, 0),
        };
        Ok(Arc::new(Field::new(self.name, data_type, true)))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let DataType::Decimal128(precision, scale) = *args.return_field.data_type() else {
            return Err(DataFusionError::Internal(format!(
                "{} is a decimal",
                self.name
            )));
        };
        let format = match &args.args[1] {
            ColumnarValue::Scalar(format) => constant_format(self.name, Some(format))?,
            ColumnarValue::Array(_) => constant_format(self.name, None)?,
        };
        let texts = args.args[0].to_array(args.number_rows)?;
        let texts = super::encoding::strings_of(&texts);
        let mut out = Decimal128Builder::with_capacity(texts.len());
        for text in texts {
            match (text, &format) {
                (Some(text), Some(format)) => match format.read(text) {
                    Some(value) => out.append_value(value),
                    None if self.fails => {
                        return Err(DataFusionError::Execution(format!(
                            "{}: '{text}' is not a number as the format describes; \
                             try_to_number gives NULL for it",
                            self.name
                        )))
                    }
                    None => out.append_null(),
                },
                _ => out.append_null(),
            }
        }
        let out = out.finish().with_precision_and_scale(precision, scale)?;
        Ok(ColumnarValue::Array(Arc::new(out)))
    }
}

/// `to_char(x, format)` (`to_varchar`).
struct ToChar {
    name: &'static str,
    aliases: Vec<String>,
    signature: Signature,
    /// `to_char` of a date or a timestamp: `date_format`.
    moments: ScalarUDF,
}

fn is_moment(data_type: &DataType) -> bool {
    matches!(
        data_type,
        DataType::Date32 | DataType::Date64 | DataType::Timestamp(..)
    )
}

impl ScalarUDFImpl for ToChar {
    fn name(&self) -> &str {
        self.name
    }

    fn aliases(&self) -> &[String] {
        &self.aliases
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn documentation(&self) -> Option<&Documentation> {
        super::usage::documentation(self.name)
    }

    fn coerce_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        let [value, format] = types else {
            return Err(bad_arguments(self.name, "(value, format)", types));
        };
        if !(is_string(format) || format.is_null()) {
            return Err(bad_arguments(self.name, "(value, format)", types));
        }
        // As Spark casts what it writes: integers whole, anything else a DECIMAL(38,18).
        let value = match value {
            DataType::Date32
            | DataType::Date64
            | DataType::Timestamp(..)
            | DataType::Binary
            | DataType::LargeBinary
            | DataType::BinaryView
            | DataType::Decimal128(..) => value.clone(),
            t if is_integer(t) => DataType::Decimal128(20, 0),
            // Through DECIMAL(38,18) as the kernel reads them ([`as_spark_decimal`]).
            DataType::Float16 | DataType::Float32 | DataType::Float64 => DataType::Float64,
            t if is_string(t) => DataType::Utf8,
            t if t.is_null() => DataType::Decimal128(38, 18),
            _ => return Err(bad_arguments(self.name, "(number, format)", types)),
        };
        Ok(vec![value, DataType::Utf8])
    }

    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(DataType::Utf8)
    }

    fn simplify(&self, args: Vec<Expr>, info: &SimplifyContext) -> Result<ExprSimplifyResult> {
        let types = args
            .iter()
            .map(|arg| info.get_data_type(arg))
            .collect::<Result<Vec<_>>>()?;
        match types.first() {
            Some(t) if is_moment(t) => self.moments.simplify(args, info),
            _ => Ok(ExprSimplifyResult::Original(args)),
        }
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        if is_moment(args.arg_fields[0].data_type()) {
            return self.moments.invoke_with_args(args);
        }
        let format = match &args.args[1] {
            ColumnarValue::Scalar(format) => format.clone(),
            ColumnarValue::Array(_) => {
                return Err(DataFusionError::Plan(format!(
                    "{}: the format must be a constant string such as '9,999.99'",
                    self.name
                )))
            }
        };
        let values = args.args[0].to_array(args.number_rows)?;
        if matches!(
            values.data_type(),
            DataType::Binary | DataType::LargeBinary | DataType::BinaryView
        ) {
            return Ok(ColumnarValue::Array(binary_text(
                self.name, &values, &format,
            )?));
        }
        let Some(format) = constant_format(self.name, Some(&format))? else {
            return Ok(ColumnarValue::Scalar(ScalarValue::Utf8(None)));
        };
        let decimals = as_spark_decimal(&values)?;
        let mut out = StringBuilder::with_capacity(decimals.len(), decimals.len() * 8);
        for value in decimals {
            out.append_option(value.map(|(unscaled, scale)| format.write(unscaled, scale)));
        }
        Ok(ColumnarValue::Array(Arc::new(out.finish())))
    }
}

/// Each value as the decimal Spark writes (unscaled, and its scale): a decimal as it is, an
/// integer whole, a `DOUBLE` or a string as Spark casts it to `DECIMAL(38,18)` (a double by
/// its shortest digits, a string's text rounded half up; NULL beyond 20 integer digits or
/// for a text that is no number).
fn as_spark_decimal(values: &ArrayRef) -> Result<Vec<Option<(i128, i8)>>> {
    const SCALE: i8 = 18;
    Ok(match values.data_type() {
        DataType::Decimal128(_, scale) => values
            .as_primitive::<Decimal128Type>()
            .iter()
            .map(|v| v.map(|v| (v, *scale)))
            .collect(),
        DataType::Float64 => values
            .as_primitive::<Float64Type>()
            .iter()
            .map(|x| x.and_then(|x| unscaled(x, 38, SCALE)).map(|v| (v, SCALE)))
            .collect(),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => {
            super::encoding::strings_of(values)
                .into_iter()
                .map(|text| {
                    text.and_then(|t| text_as_decimal(t, SCALE))
                        .map(|v| (v, SCALE))
                })
                .collect()
        }
        other => {
            return Err(DataFusionError::Internal(format!(
                "to_char of a {other}, which its coercion leaves out"
            )))
        }
    })
}

/// A number's text (`' 12.5 '`, `'-1e3'`) as a `DECIMAL(38, scale)`'s unscaled value,
/// rounded half up; `None` for a text that is no number or does not fit.
fn text_as_decimal(text: &str, scale: i8) -> Option<i128> {
    let text = text.trim_matches(|c: char| c <= ' ');
    let plain = crate::spark_casts::string_to_decimal::plain_digits(text);
    let text = plain.as_deref().unwrap_or(text);
    let (negative, unsigned) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let (whole, fraction) = unsigned.split_once('.').unwrap_or((unsigned, ""));
    let digits_only = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.len() + fraction.len() == 0 || !digits_only(whole) || !digits_only(fraction) {
        return None;
    }
    let whole = whole.trim_start_matches('0');
    let places = usize::try_from(scale).ok()?;
    if whole.len() + places > 38 {
        return None;
    }
    let kept: String = fraction
        .chars()
        .chain(std::iter::repeat('0'))
        .take(places)
        .collect();
    let mut value: i128 = format!("{whole}{kept}").parse().unwrap_or(0);
    if fraction.as_bytes().get(places).is_some_and(|d| *d >= b'5') {
        value += 1;
    }
    if value >= 10i128.pow(38) {
        return None;
    }
    Some(if negative { -value } else { value })
}

/// `to_char(binary, 'hex' | 'base64' | 'utf-8')`: its bytes as upper-case hex digits, as
/// Base64, or read as UTF-8 (a byte that is none a replacement character), as Spark writes
/// them.
fn binary_text(name: &str, values: &ArrayRef, format: &ScalarValue) -> Result<ArrayRef> {
    let format = match format {
        ScalarValue::Utf8(f) | ScalarValue::LargeUtf8(f) | ScalarValue::Utf8View(f) => f.clone(),
        _ => None,
    };
    let Some(format) = format else {
        return Ok(datafusion::arrow::array::new_null_array(
            &DataType::Utf8,
            values.len(),
        ));
    };
    let write: fn(&[u8]) -> String = match format.to_lowercase().as_str() {
        "hex" => |bytes| bytes.iter().map(|b| format!("{b:02X}")).collect(),
        "base64" => |bytes| {
            use base64::Engine;
            base64::engine::general_purpose::STANDARD.encode(bytes)
        },
        "utf-8" | "utf8" => |bytes| String::from_utf8_lossy(bytes).into_owned(),
        _ => {
            return Err(DataFusionError::Plan(format!(
                "{name}: a binary value is written as 'hex', 'base64' or 'utf-8', not \
                 '{format}'"
            )))
        }
    };
    let bytes = bytes_of(values)?;
    let mut out = StringBuilder::with_capacity(bytes.len(), bytes.len() * 8);
    for value in bytes {
        out.append_option(value.map(write));
    }
    Ok(Arc::new(out.finish()))
}

#[cfg(test)]
mod tests;
