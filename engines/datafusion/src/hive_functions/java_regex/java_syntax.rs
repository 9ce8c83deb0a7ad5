//! Java's regex syntax that fancy-regex reads otherwise, written as fancy-regex reads it:
//!
//! - `\d`, `\w`, `\s` and their negations are ASCII's, as in Java without
//!   `UNICODE_CHARACTER_CLASS` (Rust's are Unicode's: `\w+` took all of `café`, Java `caf`);
//! - the POSIX classes `\p{Alpha}`, `\p{Punct}`, `\p{Digit}`, ... are ASCII's, as Java's
//!   (Rust knows some of those names as Unicode properties, and not `Punct`);
//! - `\Q...\E` quotes its text (Rust has no such quoting).
//!
//! Inside a character class, a class becomes its ranges, and a negated one a nested class,
//! which both read alike (`[\d.]`, `[^\s,]`, `[\S]`).

use std::borrow::Cow;

/// Java's ASCII classes: the ranges each letter stands for.
fn class_ranges(letter: char) -> Option<&'static str> {
    Some(match letter {
        'd' => "0-9",
        'w' => "a-zA-Z_0-9",
        's' => r" \t\n\x0B\f\r",
        _ => return None,
    })
}

/// Java's POSIX classes (US-ASCII only), by name.
fn posix_ranges(name: &str) -> Option<&'static str> {
    Some(match name {
        "Lower" => "a-z",
        "Upper" => "A-Z",
        "ASCII" => r"\x00-\x7F",
        "Alpha" => "a-zA-Z",
        "Digit" => "0-9",
        "Alnum" => "a-zA-Z0-9",
        "Punct" => r##"!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~"##,
        "Graph" => r"!-~",
        "Print" => r" -~",
        "Blank" => r" \t",
        "Cntrl" => r"\x00-\x1F\x7F",
        "XDigit" => "0-9a-fA-F",
        "Space" => r" \t\n\x0B\f\r",
        _ => return None,
    })
}

/// `pattern` with Java's meanings written as fancy-regex reads them; the pattern itself when
/// it has none of them.
pub fn translated(pattern: &str) -> Cow<'_, str> {
    if !pattern.contains('\\') {
        return Cow::Borrowed(pattern);
    }
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = String::with_capacity(pattern.len() + 16);
    let mut class_depth = 0usize;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\\' if i + 1 < chars.len() => {
                let next = chars[i + 1];
                i += 2;
                if next == 'Q' {
                    // Quoted up to `\E` or the end.
                    while i < chars.len() && !(chars[i] == '\\' && chars.get(i + 1) == Some(&'E')) {
                        out.push_str(&fancy_regex::escape(&chars[i].to_string()));
                        i += 1;
                    }
                    i += 2;
                    continue;
                }
                let posix = if matches!(next, 'p' | 'P') && chars.get(i) == Some(&'{') {
                    chars[i + 1..]
                        .iter()
                        .position(|&c| c == '}')
                        .map(|len| chars[i + 1..i + 1 + len].iter().collect::<String>())
                        .and_then(|name| posix_ranges(&name).map(|ranges| (name, ranges)))
                } else {
                    None
                };
                let (ranges, negated) = match (class_ranges(next.to_ascii_lowercase()), posix) {
                    (_, Some((name, ranges))) => {
                        i += name.chars().count() + 2;
                        (ranges, next == 'P')
                    }
                    (Some(ranges), None) => (ranges, next.is_ascii_uppercase()),
                    (None, None) => {
                        out.push('\\');
                        out.push(next);
                        continue;
                    }
                };
                match (class_depth > 0, negated) {
                    (true, false) => out.push_str(ranges),
                    (_, true) => {
                        out.push_str("[^");
                        out.push_str(ranges);
                        out.push(']');
                    }
                    (false, false) => {
                        out.push('[');
                        out.push_str(ranges);
                        out.push(']');
                    }
                }
            }
            '[' => {
                class_depth += 1;
                out.push(c);
                i += 1;
                // A `]` first in a class (after `^`) is one of its characters.
                if chars.get(i) == Some(&'^') {
                    out.push('^');
                    i += 1;
                }
                if chars.get(i) == Some(&']') {
                    out.push_str("\\]");
                    i += 1;
                }
            }
            ']' if class_depth > 0 => {
                class_depth -= 1;
                out.push(c);
                i += 1;
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::translated;

    #[test]
    fn java_classes_are_asciis() {
        assert_eq!(
            translated(r"\d+-\w*\s"),
            r"[0-9]+-[a-zA-Z_0-9]*[ \t\n\x0B\f\r]"
        );
        assert_eq!(translated(r"[\d.]+[^\s,]"), r"[0-9.]+[^ \t\n\x0B\f\r,]");
        assert_eq!(translated(r"[\S]\D"), r"[[^ \t\n\x0B\f\r]][^0-9]");
        assert_eq!(translated(r"\p{Alpha}+\P{Digit}"), r"[a-zA-Z]+[^0-9]");
        assert_eq!(translated(r"\p{L}\b\."), r"\p{L}\b\.");
        assert_eq!(translated("plain"), "plain");
    }

    #[test]
    fn quoted_text_is_literal() {
        assert_eq!(translated(r"\Qa.b*\Ec"), r"a\.b\*c");
        assert_eq!(translated(r"x\Q[1]"), r"x\[1\]");
    }
}
