//! Interval literals over a range of fields, as Hive and Spark write them:
//! `INTERVAL '1 12:30' DAY TO MINUTE`, `INTERVAL '-02:30:15' HOUR TO SECOND`,
//! `INTERVAL '1-2' YEAR TO MONTH`. DataFusion refuses a range (`... TO MINUTE`); the text is
//! read by the range's format and written as the fields DataFusion reads
//! (`'1 days 12 hours 30 minutes'`). A leading `-` negates every field, as in Spark. An
//! unquoted count, `INTERVAL 365 DAYS`, is quoted, as a window's frame needs it.

use datafusion::sql::sqlparser::ast::{DateTimeField, Expr, Interval, Value};

/// An interval literal with a range of fields as the same interval in DataFusion's words;
/// anything else (a text that does not fit its range too) is left as it is.
pub(super) fn as_fields(expr: &mut Expr) {
    quote_number(expr);
    let Expr::Interval(Interval {
        value,
        leading_field: Some(leading),
        last_field: Some(last),
        ..
    }) = expr
    else {
        return;
    };
    let Expr::Value(text) = value.as_ref() else {
        return;
    };
    let Value::SingleQuotedString(text) = &text.value else {
        return;
    };
    let Some(fields) = fields(text, leading, last) else {
        return;
    };
    *expr = written_out(fields);
}

/// `INTERVAL 365 DAYS` as `INTERVAL '365 DAYS'`: the same interval, in the form DataFusion
/// takes in a window's frame too (`RANGE BETWEEN INTERVAL 365 DAYS PRECEDING AND CURRENT
/// ROW`, which it refused with "INTERVAL expression cannot be ...").
fn quote_number(expr: &mut Expr) {
    let Expr::Interval(Interval {
        value,
        leading_field: Some(field),
        last_field: None,
        ..
    }) = expr
    else {
        return;
    };
    let Expr::Value(number) = value.as_ref() else {
        return;
    };
    let Value::Number(digits, _) = &number.value else {
        return;
    };
    let text = format!("{digits} {field}");
    *expr = written_out(text);
}

/// An interval of DataFusion's words, `INTERVAL '1 days 12 hours'`.
pub(super) fn written_out(text: String) -> Expr {
    Expr::Interval(Interval {
        value: Box::new(Expr::value(Value::SingleQuotedString(text))),
        leading_field: None,
        leading_precision: None,
        last_field: None,
        fractional_seconds_precision: None,
    })
}

/// `text`, written in the format of the range `leading TO last`, as `'N unit ...'`.
fn fields(text: &str, leading: &DateTimeField, last: &DateTimeField) -> Option<String> {
    use DateTimeField::{Day, Hour, Minute, Month, Second, Year};
    let text = text.trim();
    let (negative, body) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let (units, parts): (&[&str], Vec<&str>) = match (leading, last) {
        (Year, Month) => (&["years", "months"], body.split('-').collect()),
        (Day, Hour) => (&["days", "hours"], body.split(' ').collect()),
        (Day, Minute | Second) => {
            let (days, time) = body.split_once(' ')?;
            let mut parts = vec![days];
            parts.extend(time.split(':'));
            let units: &[&str] = if matches!(last, Minute) {
                &["days", "hours", "minutes"]
            } else {
                &["days", "hours", "minutes", "seconds"]
            };
            (units, parts)
        }
        (Hour, Minute) => (&["hours", "minutes"], body.split(':').collect()),
        (Hour, Second) => (&["hours", "minutes", "seconds"], body.split(':').collect()),
        (Minute, Second) => (&["minutes", "seconds"], body.split(':').collect()),
        _ => return None,
    };
    if parts.len() != units.len() {
        return None;
    }
    let sign = if negative { "-" } else { "" };
    let mut written = Vec::new();
    for (i, (part, unit)) in parts.iter().zip(units).enumerate() {
        // Only the seconds take a fraction.
        let fraction = *unit == "seconds" && i == units.len() - 1;
        if !valid_number(part, fraction) {
            return None;
        }
        written.push(format!("{sign}{part} {unit}"));
    }
    Some(written.join(" "))
}

fn valid_number(part: &str, fraction: bool) -> bool {
    let (whole, decimals) = match part.split_once('.') {
        Some((whole, decimals)) if fraction => (whole, Some(decimals)),
        Some(_) => return false,
        None => (part, None),
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    digits(whole) && decimals.is_none_or(digits)
}

#[cfg(test)]
mod tests {
    use super::*;
    use DateTimeField::{Day, Hour, Minute, Month, Second, Year};

    #[test]
    fn each_range_reads_its_format() {
        assert_eq!(
            fields("1 12:30", &Day, &Minute).as_deref(),
            Some("1 days 12 hours 30 minutes")
        );
        assert_eq!(
            fields("-02:30:15", &Hour, &Second).as_deref(),
            Some("-02 hours -30 minutes -15 seconds")
        );
        assert_eq!(
            fields("1 02:03:04.5", &Day, &Second).as_deref(),
            Some("1 days 02 hours 03 minutes 04.5 seconds")
        );
        assert_eq!(
            fields("1-2", &Year, &Month).as_deref(),
            Some("1 years 2 months")
        );
        assert_eq!(
            fields("10:15.25", &Minute, &Second).as_deref(),
            Some("10 minutes 15.25 seconds")
        );
        // A text that does not fit its range is left for DataFusion to refuse.
        assert_eq!(fields("1 12", &Day, &Minute), None);
        assert_eq!(fields("1.5-2", &Year, &Month), None);
        assert_eq!(fields("a:b", &Hour, &Minute), None);
    }
}
