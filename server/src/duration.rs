//! Durations as operators write them: humantime (`30m`, `1h 30m`, `500ms`) or ISO-8601 (`PT30M`).
//!
//! Kyuubi's session keys carry ISO-8601 durations (`PT30M`), while YAML files read better
//! with `30m`; both are accepted everywhere a duration is configured.

use std::time::Duration;

/// Parses `30m`, `45s`, `PT30M`, `PT1H30M`, `PT0.5S`, or a bare number of milliseconds
/// (Kyuubi accepts plain milliseconds for its time settings).
pub fn parse(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    if text.is_empty() {
        return Err("a duration is required, e.g. `30m` or `PT30M`".to_owned());
    }
    if let Ok(millis) = text.parse::<u64>() {
        return Ok(Duration::from_millis(millis));
    }
    if text.len() > 1 && (text.starts_with('P') || text.starts_with('p')) {
        return parse_iso8601(text);
    }
    humantime::parse_duration(text).map_err(|e| {
        format!("`{text}` is not a duration ({e}); write e.g. `30s`, `5m`, `1h` or `PT5M`")
    })
}

/// ISO-8601 durations of days and time (`P1D`, `PT1H2M3.5S`); years, months and weeks have
/// no fixed length and are refused.
fn parse_iso8601(text: &str) -> Result<Duration, String> {
    let bad =
        |why: &str| format!("`{text}` is not an ISO-8601 duration: {why}; write e.g. `PT30M`");
    let upper = text.to_ascii_uppercase();
    let body = &upper[1..];
    let (date_part, time_part) = match body.split_once('T') {
        Some((date, time)) => (date, Some(time)),
        None => (body, None),
    };
    let mut total = 0f64;
    let mut units_seen = 0;
    let mut add_fields = |part: &str, units: &[(char, f64)]| -> Result<(), String> {
        let mut number = String::new();
        for c in part.chars() {
            if c.is_ascii_digit() || c == '.' {
                number.push(c);
                continue;
            }
            let Some((_, seconds)) = units.iter().find(|(unit, _)| *unit == c) else {
                return Err(bad(&format!("unit `{c}` is not supported here")));
            };
            let value: f64 = number
                .parse()
                .map_err(|_| bad(&format!("`{number}` before `{c}` is not a number")))?;
            total += value * seconds;
            units_seen += 1;
            number.clear();
        }
        if number.is_empty() {
            Ok(())
        } else {
            Err(bad("a number has no unit"))
        }
    };
    add_fields(date_part, &[('D', 86_400.0)])?;
    if let Some(time) = time_part {
        if time.is_empty() {
            return Err(bad("`T` is followed by nothing"));
        }
        add_fields(time, &[('H', 3_600.0), ('M', 60.0), ('S', 1.0)])?;
    }
    if units_seen == 0 {
        return Err(bad("it has no fields"));
    }
    Duration::try_from_secs_f64(total).map_err(|_| bad("it is out of range"))
}

/// Prints a duration the way [`parse`] reads it back (`30m`, `1h 30m`).
pub fn format(duration: Duration) -> String {
    humantime::format_duration(duration).to_string()
}

/// `#[serde(with = "crate::duration::serde_text")]` (deserialising only) for `Duration` fields written as text.
pub mod serde_text {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer};

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Duration, D::Error> {
        DurationText::deserialize(deserializer)?
            .duration()
            .map_err(serde::de::Error::custom)
    }

    /// YAML reads `30000` as a number and `30s` as a string; both are durations.
    #[derive(Deserialize)]
    #[serde(untagged)]
    pub(super) enum DurationText {
        Millis(u64),
        Text(String),
    }

    impl DurationText {
        pub(super) fn duration(self) -> Result<Duration, String> {
            match self {
                DurationText::Millis(millis) => Ok(Duration::from_millis(millis)),
                DurationText::Text(text) => super::parse(&text),
            }
        }
    }
}

/// [`serde_text`] for a setting that may be absent (`None`: not set).
pub mod serde_optional_text {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer};

    use super::serde_text::DurationText;

    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<Duration>, D::Error> {
        Option::<DurationText>::deserialize(deserializer)?
            .map(DurationText::duration)
            .transpose()
            .map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_humantime_iso8601_and_millis() {
        assert_eq!(parse("30m"), Ok(Duration::from_secs(1800)));
        assert_eq!(parse("1h 30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse("PT30M"), Ok(Duration::from_secs(1800)));
        assert_eq!(parse("pt1h2m3s"), Ok(Duration::from_secs(3723)));
        assert_eq!(parse("PT0.5S"), Ok(Duration::from_millis(500)));
        assert_eq!(parse("P1DT1S"), Ok(Duration::from_secs(86_401)));
        assert_eq!(parse("1500"), Ok(Duration::from_millis(1500)));
    }

    #[test]
    fn refuses_nonsense_with_a_hint() {
        for bad in ["", "soon", "PT", "P", "PTM", "P1Y", "PT5", "PT1X"] {
            let err = parse(bad).unwrap_err();
            assert!(err.contains("e.g."), "{bad}: {err}");
        }
    }

    #[test]
    fn format_round_trips() {
        let d = Duration::from_secs(5400);
        assert_eq!(parse(&format(d)), Ok(d));
    }
}
