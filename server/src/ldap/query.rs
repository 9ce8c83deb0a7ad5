//! The searches LDAP authentication sends (Kyuubi's `QueryFactory`): a user's entry, the groups it is a member of, the operator's own query; every value from a client is escaped (RFC 4515), so that no user name can change a filter.

/// The object classes of user entries, as Kyuubi searches them: OpenLDAP's `person` and
/// `inetOrgPerson`, Active Directory's `user`.
pub const USER_CLASSES: &str =
    "(|(objectClass=person)(objectClass=user)(objectClass=inetOrgPerson))";

/// Escapes a value for an assertion in a search filter (RFC 4515, section 3): `*`, `(`, `)`,
/// `\` and NUL become `\2a`, `\28`, `\29`, `\5c` and `\00`, and so do other control
/// characters, byte by byte; everything else (UTF-8 included) stays as it is.
pub fn escape_filter_value(value: &str) -> String {
    let mut escaped = String::with_capacity(value.len() + 8);
    for c in value.chars() {
        match c {
            '*' | '(' | ')' | '\\' => escaped.push_str(&format!("\\{:02x}", c as u32)),
            c if c.is_control() => {
                let mut bytes = [0; 4];
                for byte in c.encode_utf8(&mut bytes).bytes() {
                    escaped.push_str(&format!("\\{byte:02x}"));
                }
            }
            c => escaped.push(c),
        }
    }
    escaped
}

/// Where entries are searched and which attribute names them: from a DN pattern
/// `uid=%s,ou=people,dc=example,dc=com`, the base `ou=people,dc=example,dc=com` and `uid=%s`;
/// from a base DN, the base and `GUIDKEY=%s` (Kyuubi's `LdapUtils.patternsToBaseDns`).
#[derive(Clone, Debug, PartialEq)]
pub struct NamedUnder {
    /// The DN searched under (subtree).
    pub base: String,
    /// The attribute holding the name, e.g. `uid` or `cn`.
    pub attribute: String,
    /// The attribute's value with `%s` for the name, usually just `%s`.
    pub value: String,
}

impl NamedUnder {
    /// From a DN pattern; `None` unless its first RDN is `attribute=...%s...` and a base
    /// follows it.
    pub fn from_pattern(pattern: &str) -> Option<NamedUnder> {
        let (rdn, base) = split_first_rdn(pattern)?;
        let (attribute, value) = rdn.split_once('=')?;
        let (attribute, base) = (attribute.trim(), base.trim());
        (is_attribute(attribute) && value.contains("%s") && !base.is_empty()).then(|| NamedUnder {
            base: base.to_owned(),
            attribute: attribute.to_owned(),
            value: value.trim().to_owned(),
        })
    }

    /// Entries under `base` named by `attribute` (Kyuubi's `guidKey`).
    pub fn by_key(attribute: &str, base: &str) -> NamedUnder {
        NamedUnder {
            base: base.to_owned(),
            attribute: attribute.to_owned(),
            value: "%s".to_owned(),
        }
    }

    /// `(attribute=value)` for `name`, escaped.
    pub fn assertion(&self, name: &str) -> String {
        let value = self
            .value
            .split("%s")
            .map(escape_filter_value)
            .collect::<Vec<_>>()
            .join(&escape_filter_value(name));
        format!("({}={value})", self.attribute)
    }
}

/// Splits a DN at its first comma that is not escaped: the first RDN and the rest.
fn split_first_rdn(dn: &str) -> Option<(&str, &str)> {
    let mut escaped = false;
    for (i, c) in dn.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            ',' => return Some((&dn[..i], &dn[i + 1..])),
            _ => {}
        }
    }
    None
}

/// Whether `name` can be an attribute description in a filter: a name (`uid`,
/// `sAMAccountName`, `member`) or an OID (`0.9.2342.19200300.100.1.1`), nothing that could
/// close or open a filter.
pub fn is_attribute(name: &str) -> bool {
    let mut chars = name.chars();
    match chars.next() {
        Some(c) if c.is_ascii_alphabetic() => chars.all(|c| c.is_ascii_alphanumeric() || c == '-'),
        Some(c) if c.is_ascii_digit() => chars.all(|c| c.is_ascii_digit() || c == '.'),
        _ => false,
    }
}

/// The user entries named `user` under `under` (Kyuubi's `findUserDnByName`).
pub fn user(under: &NamedUnder, user: &str) -> String {
    format!("(&{USER_CLASSES}{})", under.assertion(user))
}

/// The groups named in `groups` under `under`, of class `class`, that list the user as a
/// member under `membership_key`: by DN (`member`, `uniqueMember`) or by name (`memberUid`)
/// (Kyuubi's `findGroupsForUser`, with the wanted groups in the filter).
pub fn groups_with_member(
    class: &str,
    under: &NamedUnder,
    groups: &[String],
    membership_key: &str,
    user_dn: &str,
    user: &str,
) -> String {
    let names: String = groups.iter().map(|group| under.assertion(group)).collect();
    format!(
        "(&(objectClass={class})(|{names})(|({membership_key}={})({membership_key}={})))",
        escape_filter_value(user_dn),
        escape_filter_value(user)
    )
}

/// The group named `group` under `under`, of class `class` (Kyuubi's `findGroupDnById`).
pub fn group(class: &str, under: &NamedUnder, group: &str) -> String {
    format!("(&(objectClass={class}){})", under.assertion(group))
}

/// Whether an entry (searched with scope base) lists `group_dn` under `user_membership_key`,
/// e.g. `memberOf` (Kyuubi's `isUserMemberOfGroup`).
pub fn lists_group(user_membership_key: &str, group_dn: &str) -> String {
    format!("({user_membership_key}={})", escape_filter_value(group_dn))
}

/// The operator's query (Kyuubi's `customLDAPQuery`) with each `%s` replaced by the user name,
/// escaped (Kyuubi inserts it as it is).
pub fn custom(query: &str, user: &str) -> String {
    query.replace("%s", &escape_filter_value(user))
}

/// A DN in a form fit for comparing two DNs of one directory: lower case, no spaces around
/// `,` and `=`.
pub fn comparable_dn(dn: &str) -> String {
    let mut out = String::with_capacity(dn.len());
    let mut chars = dn.trim().chars().peekable();
    while let Some(c) = chars.next() {
        if c == ',' || c == '=' {
            while out.ends_with(' ') && !out.ends_with("\\ ") {
                out.pop();
            }
            out.push(c);
            while chars.peek() == Some(&' ') {
                chars.next();
            }
        } else {
            out.extend(c.to_lowercase());
        }
    }
    out
}
