//! Hadoop's `hadoop.security.auth_to_local`: rules mapping a Kerberos principal to the session
//! user, as HiveServer2 and Kyuubi map theirs (Hadoop's `KerberosName`, mechanism `hadoop`).
//!
//! ```text
//! RULE:[2:$1@$0](.*@OTHER\.REALM)s/@.*//   etl/batch@OTHER.REALM  -> etl
//! RULE:[2:$1_$2@$0](etl_.*)s/@.*//          etl/batch@REALM        -> etl_batch
//! RULE:[1:$1]/L                             Alice@ANY.REALM        -> alice
//! DEFAULT                                   bob/admin@REALM        -> bob (REALM: the default)
//! ```
//!
//! Rules are tried in order; the first that applies gives the user. `RULE:[n:format]` applies
//! to principals of `n` components (`alice@R` has one, `etl/batch@R` two): `format` builds a
//! string from them (`$0` the realm, `$1` the first component, `$2` the second), which must
//! then match the whole `(regex)` if one is given; `s/pattern/replacement/` replaces the first
//! match of `pattern` in it (every match with `g`), and `/L` lowers its case. `DEFAULT` maps a
//! principal of the default realm to its first component. A principal no rule applies to is
//! refused, as Hadoop's `NoMatchingRule` refuses it, and so is a result that still holds `/`
//! or `@` (Hadoop's "non-simple name").
//!
//! The regular expressions are the `regex` crate's, which reads the usual rules as Java does;
//! it has no look-around and no back-references, and a rule using them is refused when parsed.
//! Replacements are written as Java writes them (`$1`, `${name}`, `\$` for a dollar sign) and
//! translated.

use std::fmt;

use regex::Regex;

/// A parsed list of auth_to_local rules and the realm `DEFAULT` maps.
#[derive(Clone, Debug)]
pub struct AuthToLocal {
    rules: Vec<Rule>,
    /// The realm whose principals `DEFAULT` maps to their first component.
    default_realm: String,
}

/// One rule, as written and as parsed.
#[derive(Clone, Debug)]
struct Rule {
    /// The rule's text, for messages.
    text: String,
    kind: RuleKind,
}

#[derive(Clone, Debug)]
enum RuleKind {
    /// `DEFAULT`: the first component of a principal of the default realm.
    Default,
    /// `RULE:[n:format](regex)s/pattern/replacement/g/L`.
    Map {
        /// How many components the principals it applies to have.
        components: usize,
        format: Vec<Piece>,
        /// Must match the whole formatted string (Java's `matches`).
        matching: Option<Regex>,
        substitution: Option<Substitution>,
        lower_case: bool,
    },
}

/// A piece of a rule's format: text, or `$n` (0 the realm, then the components).
#[derive(Clone, Debug, PartialEq, Eq)]
enum Piece {
    Text(String),
    Parameter(usize),
}

/// `s/pattern/replacement/g`, the replacement in the regex crate's syntax.
#[derive(Clone, Debug)]
struct Substitution {
    pattern: Regex,
    replacement: String,
    global: bool,
}

/// A principal split as Hadoop's `KerberosName` splits it: `service/host@REALM`.
struct KerberosName<'a> {
    service: &'a str,
    host: Option<&'a str>,
    realm: Option<&'a str>,
}

impl<'a> KerberosName<'a> {
    /// At most two components and a realm, none empty; a name without `@` that has more
    /// is taken whole as its first component, as Hadoop takes it.
    fn parse(principal: &'a str) -> Result<Self, String> {
        let (name, realm) = match principal.split_once('@') {
            Some((name, realm)) => (name, Some(realm)),
            None => (principal, None),
        };
        let (service, host) = match name.split_once('/') {
            Some((service, host)) => (service, Some(host)),
            None => (name, None),
        };
        let part_ok = |part: &str| !part.is_empty() && !part.contains(['/', '@']);
        if part_ok(service) && host.is_none_or(part_ok) && realm.is_none_or(part_ok) {
            Ok(Self {
                service,
                host,
                realm,
            })
        } else if realm.is_none() {
            Ok(Self {
                service: principal,
                host: None,
                realm: None,
            })
        } else {
            Err(format!(
                "Kerberos principal {principal} is malformed for auth_to_local rules, which \
                 map principals of one or two components (user@REALM, service/host@REALM)"
            ))
        }
    }
}

impl AuthToLocal {
    /// Parses rules written as Hadoop writes them, one after another (separated by newlines
    /// or spaces); `default_realm` is the realm `DEFAULT` maps. The error quotes the rule
    /// and says what is wrong with it.
    pub fn parse(rules: &str, default_realm: &str) -> Result<Self, String> {
        // Hadoop's rule parser, applied at the start of what remains, rule after rule.
        let parser = Regex::new(
            r"^\s*((DEFAULT)|(RULE:\[([0-9]*):([^\]]*)](\(([^)]*)\))?(s/([^/]*)/([^/]*)/(g)?)?))/?(L)?",
        )
        .expect("the rule parser is a valid regex");
        let mut parsed = Vec::new();
        let mut remaining = rules.trim();
        while !remaining.is_empty() {
            let Some(rule) = parser.captures(remaining) else {
                return Err(format!(
                    "auth_to_local rule `{}` does not parse: write DEFAULT or \
                     RULE:[n:format](regex)s/pattern/replacement/g, e.g. \
                     RULE:[2:$1@$0](.*@OTHER\\.REALM)s/@.*//",
                    first_line(remaining)
                ));
            };
            let whole = rule.get(0).expect("group 0 is the match");
            let text = whole.as_str().trim().to_owned();
            let kind = if rule.get(2).is_some() {
                RuleKind::Default
            } else {
                Self::map_rule(&text, &rule)?
            };
            parsed.push(Rule { text, kind });
            remaining = remaining[whole.end()..].trim_start();
        }
        if parsed.is_empty() {
            return Err(
                "auth_to_local rules are empty: write at least DEFAULT, or leave the setting \
                 out to map every principal to its first component"
                    .into(),
            );
        }
        Ok(Self {
            rules: parsed,
            default_realm: default_realm.to_owned(),
        })
    }

    /// `RULE:[n:format](regex)s/pattern/replacement/g/L` from the parser's groups.
    fn map_rule(text: &str, rule: &regex::Captures<'_>) -> Result<RuleKind, String> {
        let group = |i: usize| rule.get(i).map(|m| m.as_str());
        let bad = |what: String| format!("auth_to_local rule `{text}`: {what}");
        let components: usize = group(4)
            .unwrap_or_default()
            .parse()
            .map_err(|_| bad("[n:format] needs the number of components, e.g. [2:$1@$0]".into()))?;
        if components == 0 {
            return Err(bad(
                "a principal has at least one component: use [1:...] or [2:...]".into(),
            ));
        }
        let format = parse_format(group(5).unwrap_or_default(), components).map_err(&bad)?;
        let matching = match group(7) {
            Some(matching) => Some(
                Regex::new(&format!("^(?:{matching})$"))
                    .map_err(|e| bad(format!("({matching}) is not a regex: {e}")))?,
            ),
            None => None,
        };
        let substitution = match (group(9), group(10)) {
            (Some(pattern), Some(replacement)) => {
                let compiled = Regex::new(pattern)
                    .map_err(|e| bad(format!("s/{pattern}/ is not a regex: {e}")))?;
                let replacement =
                    java_replacement(replacement, compiled.captures_len() - 1).map_err(&bad)?;
                Some(Substitution {
                    pattern: compiled,
                    replacement,
                    global: group(11).is_some(),
                })
            }
            _ => None,
        };
        Ok(RuleKind::Map {
            components,
            format,
            matching,
            substitution,
            lower_case: group(12).is_some(),
        })
    }

    /// The session user of `principal` (e.g. `etl/batch@EXAMPLE.COM`), by the first rule that
    /// applies; `Err` says why the principal is refused, naming it.
    pub fn map(&self, principal: &str) -> Result<String, String> {
        let name = KerberosName::parse(principal)?;
        let Some(realm) = name.realm else {
            // Already a simple name, as Hadoop returns it.
            if name.host.is_none() {
                return Ok(name.service.to_owned());
            }
            return Err(format!(
                "Kerberos principal {principal} has no realm, which auth_to_local rules need"
            ));
        };
        let mut parameters = vec![realm, name.service];
        parameters.extend(name.host);
        for rule in &self.rules {
            if let Some(user) = rule.apply(&parameters, &self.default_realm) {
                if user.contains(['/', '@']) {
                    return Err(format!(
                        "auth_to_local rule `{}` maps Kerberos principal {principal} to \
                         `{user}`, which is not a user name (it holds `/` or `@`); ask an \
                         operator to fix the rule",
                        rule.text
                    ));
                }
                if user.is_empty() {
                    return Err(format!(
                        "auth_to_local rule `{}` maps Kerberos principal {principal} to an \
                         empty user name; ask an operator to fix the rule",
                        rule.text
                    ));
                }
                return Ok(user);
            }
        }
        Err(format!(
            "no auth_to_local rule maps Kerberos principal {principal} to a user (DEFAULT maps \
             only the realm {}): ask an operator to add a rule for it",
            self.default_realm
        ))
    }
}

/// The rules as written, one per line.
impl fmt::Display for AuthToLocal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, rule) in self.rules.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            f.write_str(&rule.text)?;
        }
        Ok(())
    }
}

impl Rule {
    /// The user this rule maps `parameters` (realm, then components) to, if it applies.
    fn apply(&self, parameters: &[&str], default_realm: &str) -> Option<String> {
        match &self.kind {
            RuleKind::Default => (parameters[0] == default_realm).then(|| parameters[1].to_owned()),
            RuleKind::Map {
                components,
                format,
                matching,
                substitution,
                lower_case,
            } => {
                if parameters.len() - 1 != *components {
                    return None;
                }
                let base: String = format
                    .iter()
                    .map(|piece| match piece {
                        Piece::Text(text) => text.as_str(),
                        // Checked against the number of components when parsed.
                        Piece::Parameter(i) => parameters[*i],
                    })
                    .collect();
                if matching.as_ref().is_some_and(|m| !m.is_match(&base)) {
                    return None;
                }
                let mut user = match substitution {
                    None => base,
                    Some(s) if s.global => s
                        .pattern
                        .replace_all(&base, s.replacement.as_str())
                        .into_owned(),
                    Some(s) => s
                        .pattern
                        .replacen(&base, 1, s.replacement.as_str())
                        .into_owned(),
                };
                if *lower_case {
                    user = user.to_lowercase();
                }
                Some(user)
            }
        }
    }
}

/// A rule's format: text and `$n`, each `n` at most the rule's number of components.
fn parse_format(format: &str, components: usize) -> Result<Vec<Piece>, String> {
    let mut pieces = Vec::new();
    let mut rest = format;
    while let Some(dollar) = rest.find('$') {
        if dollar > 0 {
            pieces.push(Piece::Text(rest[..dollar].to_owned()));
        }
        let after = &rest[dollar + 1..];
        let digits = after.len() - after.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let index: usize = after[..digits].parse().map_err(|_| {
            format!(
                "`$` in the format `{format}` must be followed by a component number ($0 the \
                 realm, $1 the first component)"
            )
        })?;
        if index > components {
            return Err(format!(
                "the format `{format}` names ${index}, but the rule is for principals of \
                 {components} component(s) ($0 is the realm)"
            ));
        }
        pieces.push(Piece::Parameter(index));
        rest = &after[digits..];
    }
    if !rest.is_empty() {
        pieces.push(Piece::Text(rest.to_owned()));
    }
    Ok(pieces)
}

/// A Java replacement string (`Matcher.replaceFirst`: `$n`, `${name}`, `\` escaping the next
/// character) in the regex crate's syntax (`${n}`, `$$` for a dollar sign). Java reads as
/// many digits after `$` as still name a group of the pattern, which has `groups` of them.
fn java_replacement(java: &str, groups: usize) -> Result<String, String> {
    let mut out = String::with_capacity(java.len());
    let mut chars = java.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('$') => out.push_str("$$"),
                Some(escaped) => out.push(escaped),
                None => {
                    return Err(format!(
                        "the replacement `{java}` ends with `\\`, which escapes nothing"
                    ))
                }
            },
            '$' => match chars.next() {
                Some('{') => {
                    let name: String = chars.by_ref().take_while(|&c| c != '}').collect();
                    out.push_str(&format!("${{{name}}}"));
                }
                Some(first) if first.is_ascii_digit() => {
                    let mut group = first.to_digit(10).expect("a digit") as usize;
                    if group > groups {
                        return Err(format!(
                            "the replacement `{java}` names group {group}, but the pattern has \
                             {groups}"
                        ));
                    }
                    while let Some(next) = chars.peek().and_then(|c| c.to_digit(10)) {
                        let longer = group * 10 + next as usize;
                        if longer > groups {
                            break;
                        }
                        group = longer;
                        chars.next();
                    }
                    out.push_str(&format!("${{{group}}}"));
                }
                _ => {
                    return Err(format!(
                        "the replacement `{java}` has `$` without a group number (write \\$ for \
                         a dollar sign)"
                    ))
                }
            },
            other => out.push(other),
        }
    }
    Ok(out)
}

/// The first line of `text`, for quoting in a message.
fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default()
}

#[cfg(test)]
mod tests;
