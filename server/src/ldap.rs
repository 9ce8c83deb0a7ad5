//! Authentication LDAP: a password is checked by binding to the directory, as HiveServer2's and Kyuubi's LDAP providers do, and the user may be required to be in a list or a group.
//!
//! The settings are Kyuubi's `kyuubi.authentication.ldap.*` (Hive's
//! `hive.server2.authentication.ldap.*`):
//!
//! - `ldap-url`: `ldap://` or `ldaps://` servers, separated by spaces, tried in order until
//!   one answers. `ldap-start-tls` upgrades each `ldap://` connection to TLS before the first
//!   bind ([`LdapTls`]); a server that refuses the upgrade is not asked in clear. Over TLS the
//!   server's certificate must chain to the system's trust store, or with `ldap-ca-file` to
//!   the CAs of that file alone, and name the URL's host.
//!
//! Where the user's password is checked, one of:
//!
//! - `ldap-bind-dn` and `ldap-bind-password` (`binddn`, `bindpw`): the gateway binds as this
//!   service account, searches for the user's entry (objectClass `person`, `user` or
//!   `inetOrgPerson`) by each `ldap-user-dn-pattern`'s first RDN under the rest of it, else
//!   by `ldap-guid-key` (`guidKey`, default `uid`) under `ldap-base-dn`, and binds as the one
//!   entry found with the user's password. No entry or several: a wrong user name or password.
//! - `ldap-domain`: the user binds as `user@domain` (Active Directory's user principal name).
//! - else `ldap-user-dn-pattern`: DNs with `%s` for the user, several separated by `:`, tried
//!   in order (`userDNPattern`), e.g. `uid=%s,ou=people,dc=example,dc=com`;
//! - else `ldap-base-dn` (`baseDN`): the pattern `GUIDKEY=%s,BASE`.
//!
//! Who may log in once the password is right ([`Admission`], Kyuubi's filters), all optional:
//!
//! - `ldap-user-filter` (`userFilter`): user names, compared without regard to case;
//! - `ldap-group-filter` (`groupFilter`): group names; the user must be a member of one. A
//!   group is an entry of class `ldap-group-class-key` (`groupClassKey`, default
//!   `groupOfNames`) named by each `ldap-group-dn-pattern`'s first RDN (`groupDNPattern`,
//!   e.g. `cn=%s,ou=groups,dc=example,dc=com`), else by the guid key under the base DN, that
//!   lists the user's DN or name under `ldap-group-membership-key` (`groupMembershipKey`,
//!   default `member`); or, with `ldap-user-membership-key` (`userMembershipKey`, e.g.
//!   `memberOf`), whose DN the user's entry lists under that key;
//! - `ldap-custom-query` (`customLDAPQuery`), instead of the two filters: a search filter run
//!   under the base DN, `%s` for the user name; the user must be among the entries found or
//!   listed under the group membership key of one of them.
//!
//! Searches run as the service account, or else as the user. Every name from a client is
//! escaped: in a DN (RFC 4514), so that `,`, `=`, `+` or `*` in it cannot name another entry
//! (with a domain, names holding such characters are refused), and in a search filter
//! (RFC 4515, [`query::escape_filter_value`]), so that `*)(uid=*` cannot find another entry.
//! Names with spaces around them are refused: the directory would ignore the spaces. An
//! empty password is refused before any bind: LDAP takes it as an anonymous bind, which
//! succeeds. A wrong password, an unknown user and a user name that several entries hold
//! get FILE's answer; a right password of a user the filters leave out gets "not allowed",
//! checked only once the password is right, so that it reveals nothing to a guesser; a
//! directory that does not answer, or that refuses the service account or a search, gets
//! another answer, for an operator. A password that matched is remembered for a few minutes ([`crate::password_check`]).

pub mod query;

use std::sync::Arc;
use std::time::Duration;

use kumiho_thrift::auth::Authenticator;
use kumiho_thrift::server::read_certificates;
use ldap3::{Ldap, LdapConnAsync, LdapConnSettings, LdapError, Scope, SearchEntry, SearchOptions};
use rustls::pki_types::CertificateDer;
use rustls::{ClientConfig, RootCertStore};

use crate::cluster::Secret;
use crate::config::ServerConfig;
use crate::password_check::{wait_for, wrong_credentials, RememberedPasswords};
use query::NamedUnder;

/// How long connecting to one server (TCP and TLS) may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// How long one bind may take once connected.
const BIND_TIMEOUT: Duration = Duration::from_secs(10);

/// How long one search may take.
const SEARCH_TIMEOUT: Duration = Duration::from_secs(10);

/// Bind results that mean "not this name with this password" (RFC 4511 A.1):
/// invalidCredentials, noSuchObject, invalidDNSyntax, inappropriateAuthentication,
/// insufficientAccessRights, unwillingToPerform (a disabled account), constraintViolation
/// (a locked one). Any other code is the server's trouble, and the next server is tried.
const REFUSED: [u32; 7] = [49, 32, 34, 48, 50, 53, 19];

/// Search results that are no trouble: sizeLimitExceeded (more entries than asked for, the
/// ones sent are kept) and noSuchObject (a base that is not there holds nothing).
const SIZE_LIMIT_EXCEEDED: u32 = 4;
const NO_SUCH_OBJECT: u32 = 32;

/// Characters refused in a user name bound as `user@domain`: they would make it another
/// kind of name (a DN, `DOMAIN\user`, another domain).
const NOT_IN_PRINCIPAL: &[char] = &['@', '\\', ',', '=', '+', '"', '<', '>', ';', '#', '*'];

/// Kyuubi's defaults for `guidKey`, `groupClassKey` and `groupMembershipKey`.
const DEFAULT_GUID_KEY: &str = "uid";
const DEFAULT_GROUP_CLASS: &str = "groupOfNames";
const DEFAULT_GROUP_MEMBERSHIP_KEY: &str = "member";

/// How a user's password is checked.
#[derive(Clone, Debug, PartialEq)]
pub enum BindAs {
    /// A bind as `user@domain`.
    Domain(String),
    /// Binds as DNs with `%s` where the escaped user name goes, tried in order.
    Patterns(Vec<String>),
    /// A bind as this service account, a search for the user's entry
    /// ([`LdapSettings::user_bases`]), a bind as that entry.
    ServiceAccount { dn: String, password: Secret },
}

/// Who may log in once the password is right (Kyuubi's filters); the default admits all.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Admission {
    /// User names admitted, lower case (`ldap-user-filter`); empty: any.
    pub users: Vec<String>,
    /// Groups the user must be a member of one of (`ldap-group-filter`).
    pub groups: Option<GroupFilter>,
    /// A search the user must be found by (`ldap-custom-query`).
    pub custom_query: Option<CustomQuery>,
}

impl Admission {
    /// Whether checking needs the user's entry (and so a search or a known DN).
    pub fn needs_entry(&self) -> bool {
        self.groups.is_some() || self.custom_query.is_some()
    }
}

/// `ldap-group-filter` and the keys that say how groups list their members.
#[derive(Clone, Debug, PartialEq)]
pub struct GroupFilter {
    /// Group names (the value of their first RDN, e.g. `cn`).
    pub names: Vec<String>,
    /// Where groups are and the attribute that names them.
    pub bases: Vec<NamedUnder>,
    /// Object class of group entries (`ldap-group-class-key`).
    pub class: String,
    /// Attribute of a group listing its members' DNs or names (`ldap-group-membership-key`).
    pub membership_key: String,
    /// Attribute of a user listing the DNs of its groups (`ldap-user-membership-key`); when
    /// set, it is checked instead of the group's list.
    pub user_membership_key: Option<String>,
}

/// `ldap-custom-query`.
#[derive(Clone, Debug, PartialEq)]
pub struct CustomQuery {
    /// Searched under (subtree): `ldap-base-dn`.
    pub base: String,
    /// The filter, `%s` for the user name.
    pub filter: String,
    /// Attribute of the entries found that may list the user (`ldap-group-membership-key`).
    pub membership_key: String,
}

/// The LDAP settings, checked: where to bind, as what, and whom to admit.
#[derive(Clone, Debug, PartialEq)]
pub struct LdapSettings {
    /// Servers, tried in order until one answers.
    pub urls: Vec<String>,
    /// How a user's password is checked.
    pub bind_as: BindAs,
    /// Where users' entries are searched (with a service account, or for filters when users
    /// bind as `user@domain`); empty when no search is needed.
    pub user_bases: Vec<NamedUnder>,
    /// Who may log in once the password is right.
    pub admission: Admission,
    /// TLS towards the servers.
    pub tls: LdapTls,
}

/// TLS towards the directory: StartTLS on `ldap://` URLs, and the CAs trusted.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LdapTls {
    /// `ldap-start-tls`: `ldap://` connections are upgraded before the first bind.
    pub start_tls: bool,
    /// The CAs of `ldap-ca-file`, in place of the system's trust store; `None`: the system's.
    pub trusted_cas: Option<Vec<CertificateDer<'static>>>,
}

impl LdapTls {
    /// Reads `ldap-start-tls` and `ldap-ca-file` for `urls`; a setting that would do nothing
    /// (StartTLS on an `ldaps://` URL, CAs with no TLS) is an error, so that an operator who
    /// believes passwords travel under TLS is not mistaken.
    fn from_config(config: &ServerConfig, urls: &[String]) -> Result<LdapTls, String> {
        let tls_from_start = |url: &&String| url.starts_with("ldaps://");
        if config.ldap_start_tls {
            if let Some(url) = urls.iter().find(tls_from_start) {
                return Err(format!(
                    "ldap-start-tls upgrades ldap:// connections, but `{url}` is ldaps:// (TLS from the start); \
                     use ldap:// URLs with ldap-start-tls, or remove ldap-start-tls"
                ));
            }
        }
        let Some(path) = &config.ldap_ca_file else {
            return Ok(LdapTls {
                start_tls: config.ldap_start_tls,
                trusted_cas: None,
            });
        };
        if !config.ldap_start_tls && !urls.iter().any(|url| tls_from_start(&url)) {
            return Err(
                "ldap-ca-file is set but no LDAP server is reached over TLS: use ldaps:// URLs or set ldap-start-tls"
                    .to_owned(),
            );
        }
        let cas = read_certificates(path, "ldap-ca-file")?;
        let mut roots = RootCertStore::empty();
        for ca in &cas {
            roots.add(ca.clone()).map_err(|e| {
                format!(
                    "ldap-ca-file {}: a certificate cannot be trusted as a CA ({e})",
                    path.display()
                )
            })?;
        }
        Ok(LdapTls {
            start_tls: config.ldap_start_tls,
            trusted_cas: Some(cas),
        })
    }

    /// The client configuration trusting `ldap-ca-file`'s CAs; `None` leaves ldap3's, which
    /// trusts the system's store.
    fn client_config(&self) -> Option<Arc<ClientConfig>> {
        let cas = self.trusted_cas.as_ref()?;
        let mut roots = RootCertStore::empty();
        roots.add_parsable_certificates(cas.iter().cloned());
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("ring supports TLS 1.2 and 1.3")
            .with_root_certificates(roots)
            .with_no_client_auth();
        Some(Arc::new(config))
    }

    /// Whether a password sent to `url` crosses the network in clear.
    fn in_clear(&self, url: &str) -> bool {
        url.starts_with("ldap://") && !self.start_tls
    }
}

/// The value of a setting, trimmed; `None` when absent or empty.
fn given(value: &Option<String>) -> Option<String> {
    value
        .as_deref()
        .map(str::trim)
        .filter(|text| !text.is_empty())
        .map(str::to_owned)
}

/// Each pattern of a `:`-separated list as a base and a naming attribute; `key` names the
/// setting in the error.
fn named_under(patterns: &str, key: &str, example: &str) -> Result<Vec<NamedUnder>, String> {
    patterns
        .split(':')
        .map(|pattern| {
            NamedUnder::from_pattern(pattern.trim()).ok_or_else(|| {
                format!(
                    "{key} `{}` is not a DN whose first RDN holds %s, e.g. `{example}` (several separated by `:`)",
                    pattern.trim()
                )
            })
        })
        .collect()
}

/// An attribute or object class name from a setting, checked; `default` when not set.
fn attribute(value: &Option<String>, key: &str, default: &str) -> Result<String, String> {
    let name = given(value).unwrap_or_else(|| default.to_owned());
    if query::is_attribute(&name) {
        Ok(name)
    } else {
        Err(format!(
            "{key} `{name}` is not an LDAP attribute or class name, e.g. `{default}`"
        ))
    }
}

impl LdapSettings {
    /// Reads the `ldap-*` settings of `authentication: LDAP`; the error says what to set.
    pub fn from_config(config: &ServerConfig) -> Result<LdapSettings, String> {
        let Some(url_text) = given(&config.ldap_url) else {
            return Err(
                "authentication LDAP needs ldap-url, e.g. `ldap://ldap.example.com:389` (several separated by spaces)"
                    .to_owned(),
            );
        };
        let urls = url_text
            .split_whitespace()
            .map(|url| check_url(url).map(|()| url.to_owned()))
            .collect::<Result<Vec<_>, _>>()?;
        let guid_key = attribute(&config.ldap_guid_key, "ldap-guid-key", DEFAULT_GUID_KEY)?;
        let base_dn = given(&config.ldap_base_dn);
        let patterns = given(&config.ldap_user_dn_pattern);
        let domain = given(&config.ldap_domain);
        let bind_dn = given(&config.ldap_bind_dn);
        let bind_password = config
            .ldap_bind_password
            .as_ref()
            .filter(|secret| !secret.0.is_empty());
        // Where users' entries are searched: each pattern's base, else the base DN.
        let user_bases = match (&patterns, &base_dn) {
            (Some(patterns), _) if bind_dn.is_some() => named_under(
                patterns,
                "ldap-user-dn-pattern",
                "uid=%s,ou=people,dc=example,dc=com",
            )?,
            (None, Some(base)) => vec![NamedUnder::by_key(&guid_key, base)],
            _ => Vec::new(),
        };
        let bind_as = match (bind_dn, bind_password, &domain, &patterns, &base_dn) {
            (Some(_), None, ..) | (None, Some(_), ..) => {
                return Err(
                    "ldap-bind-dn and ldap-bind-password go together (Kyuubi's binddn and bindpw): the gateway binds \
                     as that account to search for users; set both (the password best from the environment, \
                     KUMIHO_LDAP_BIND_PASSWORD), or neither"
                        .to_owned(),
                )
            }
            (Some(_), Some(_), Some(_), ..) => {
                return Err(
                    "ldap-domain and ldap-bind-dn are both set, but with a bind DN users are found by a search; remove \
                     ldap-domain (for Active Directory, set ldap-guid-key to sAMAccountName and ldap-base-dn)"
                        .to_owned(),
                )
            }
            (Some(_), Some(_), None, None, None) => {
                return Err(
                    "ldap-bind-dn needs ldap-base-dn (users are searched under it by ldap-guid-key) or \
                     ldap-user-dn-pattern (by each pattern's first RDN under the rest)"
                        .to_owned(),
                );
            }
            (Some(dn), Some(password), None, ..) => BindAs::ServiceAccount {
                dn,
                password: password.clone(),
            },
            (None, None, Some(_), Some(_), _) => {
                return Err(
                    "ldap-domain and ldap-user-dn-pattern are both set, but users bind one way: \
                     as user@domain (Active Directory) or by the DN pattern; remove one"
                        .to_owned(),
                )
            }
            (None, None, Some(domain), None, _) => {
                if domain.contains(['@', ' ']) {
                    return Err(format!(
                        "ldap-domain `{domain}` is not a domain; write it as `example.com`"
                    ));
                }
                BindAs::Domain(domain.clone())
            }
            (None, None, None, Some(patterns), _) => BindAs::Patterns(
                patterns
                    .split(':')
                    .map(|pattern| check_pattern(pattern.trim()).map(|()| pattern.trim().to_owned()))
                    .collect::<Result<_, _>>()?,
            ),
            (None, None, None, None, Some(base)) => {
                BindAs::Patterns(vec![format!("{guid_key}=%s,{base}")])
            }
            (None, None, None, None, None) => {
                return Err(
                    "authentication LDAP needs ldap-user-dn-pattern (e.g. `uid=%s,ou=people,dc=example,dc=com`), \
                     ldap-base-dn (users bind as `uid=USER,BASE`), ldap-domain (as `USER@DOMAIN`), or ldap-bind-dn \
                     and ldap-bind-password with one of the first two (users are searched for)"
                        .to_owned(),
                )
            }
        };
        let admission = admission(config, &guid_key, base_dn.as_deref())?;
        if admission.needs_entry() && matches!(bind_as, BindAs::Domain(_)) && user_bases.is_empty()
        {
            return Err(
                "ldap-group-filter and ldap-custom-query need the user's entry, which with ldap-domain is searched \
                 under ldap-base-dn by ldap-guid-key; set ldap-base-dn"
                    .to_owned(),
            );
        }
        let tls = LdapTls::from_config(config, &urls)?;
        Ok(LdapSettings {
            urls,
            bind_as,
            user_bases,
            admission,
            tls,
        })
    }

    /// The names `user` binds as, in order (none with a service account, which searches
    /// for the user); `None` for a name that cannot be one. Spaces around a name are
    /// refused: directories ignore them when matching (RFC 4518), so ` bob` would bind as
    /// `bob` but hold sessions under another name.
    pub fn bind_names(&self, user: &str) -> Option<Vec<String>> {
        if user.is_empty() || user.trim() != user || user.chars().any(char::is_control) {
            return None;
        }
        match &self.bind_as {
            BindAs::Domain(domain) => {
                (!user.contains(NOT_IN_PRINCIPAL)).then(|| vec![format!("{user}@{domain}")])
            }
            BindAs::Patterns(patterns) => {
                let value = escape_dn_value(user);
                Some(patterns.iter().map(|p| p.replace("%s", &value)).collect())
            }
            BindAs::ServiceAccount { .. } => Some(Vec::new()),
        }
    }
}

/// Reads `ldap-user-filter` and `ldap-group-filter`: a YAML list of names, or Kyuubi's
/// comma-separated text.
pub(crate) fn names<'de, D>(deserializer: D) -> Result<Option<Vec<String>>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    #[derive(serde::Deserialize)]
    #[serde(untagged)]
    enum Names {
        Text(String),
        List(Vec<String>),
    }
    Ok(Some(match serde::Deserialize::deserialize(deserializer)? {
        Names::Text(text) => text.split(',').map(str::to_owned).collect(),
        Names::List(list) => list,
    }))
}

/// The filters of the config, checked.
fn admission(
    config: &ServerConfig,
    guid_key: &str,
    base_dn: Option<&str>,
) -> Result<Admission, String> {
    let names = |list: &Option<Vec<String>>| -> Vec<String> {
        list.iter()
            .flatten()
            .map(|name| name.trim().to_owned())
            .filter(|name| !name.is_empty())
            .collect()
    };
    let users: Vec<String> = names(&config.ldap_user_filter)
        .into_iter()
        .map(|name| name.to_lowercase())
        .collect();
    let group_names = names(&config.ldap_group_filter);
    let membership_key = attribute(
        &config.ldap_group_membership_key,
        "ldap-group-membership-key",
        DEFAULT_GROUP_MEMBERSHIP_KEY,
    )?;
    let custom_query = match given(&config.ldap_custom_query) {
        None => None,
        Some(_) if !users.is_empty() || !group_names.is_empty() => {
            return Err(
                "ldap-custom-query takes the place of ldap-user-filter and ldap-group-filter (as Kyuubi's \
                 customLDAPQuery does); remove one or the other"
                    .to_owned(),
            )
        }
        Some(filter) => {
            let Some(base) = base_dn else {
                return Err(
                    "ldap-custom-query needs ldap-base-dn, the entry it searches under".to_owned(),
                );
            };
            if ldap3::parse_filter(query::custom(&filter, "user")).is_err() {
                return Err(format!(
                    "ldap-custom-query `{filter}` is not an LDAP search filter, e.g. \
                     `(&(objectClass=person)(memberOf=cn=analysts,ou=groups,dc=example,dc=com)(uid=%s))`"
                ));
            }
            Some(CustomQuery {
                base: base.to_owned(),
                filter,
                membership_key: membership_key.clone(),
            })
        }
    };
    let group_only = [
        ("ldap-group-dn-pattern", &config.ldap_group_dn_pattern),
        ("ldap-group-class-key", &config.ldap_group_class_key),
        ("ldap-user-membership-key", &config.ldap_user_membership_key),
    ];
    let groups = if group_names.is_empty() {
        if let Some((key, _)) = group_only.iter().find(|(_, value)| given(value).is_some()) {
            return Err(format!(
                "{key} is set but ldap-group-filter is not; list the groups users must be in, or remove {key}"
            ));
        }
        if custom_query.is_none() && given(&config.ldap_group_membership_key).is_some() {
            return Err(
                "ldap-group-membership-key is set but neither ldap-group-filter nor ldap-custom-query; remove it"
                    .to_owned(),
            );
        }
        None
    } else {
        let bases = match (given(&config.ldap_group_dn_pattern), base_dn) {
            (Some(patterns), _) => named_under(
                &patterns,
                "ldap-group-dn-pattern",
                "cn=%s,ou=groups,dc=example,dc=com",
            )?,
            (None, Some(base)) => vec![NamedUnder::by_key(guid_key, base)],
            (None, None) => {
                return Err(
                    "ldap-group-filter needs ldap-group-dn-pattern (e.g. `cn=%s,ou=groups,dc=example,dc=com`) or \
                     ldap-base-dn (groups are searched under it by ldap-guid-key)"
                        .to_owned(),
                )
            }
        };
        let user_membership_key = match given(&config.ldap_user_membership_key) {
            Some(_) => Some(attribute(
                &config.ldap_user_membership_key,
                "ldap-user-membership-key",
                "memberOf",
            )?),
            None => None,
        };
        Some(GroupFilter {
            names: group_names,
            bases,
            class: attribute(
                &config.ldap_group_class_key,
                "ldap-group-class-key",
                DEFAULT_GROUP_CLASS,
            )?,
            membership_key,
            user_membership_key,
        })
    };
    Ok(Admission {
        users,
        groups,
        custom_query,
    })
}

fn check_url(url: &str) -> Result<(), String> {
    let host = url
        .strip_prefix("ldap://")
        .or_else(|| url.strip_prefix("ldaps://"))
        .ok_or_else(|| {
            format!("ldap-url `{url}` is not an ldap:// or ldaps:// URL, e.g. `ldaps://ldap.example.com:636`")
        })?;
    let host = host.split('/').next().unwrap_or_default();
    if host.is_empty() || host.starts_with(':') {
        return Err(format!(
            "ldap-url `{url}` names no host, e.g. `ldap://ldap.example.com:389`"
        ));
    }
    Ok(())
}

/// Whether an LDAP URL names this host by a loopback name, where a password in clear does
/// not cross a network.
fn on_loopback(url: &str) -> bool {
    let host_port = url.split("://").nth(1).unwrap_or_default();
    let host_port = host_port.split('/').next().unwrap_or_default();
    let host = match host_port.strip_prefix('[') {
        Some(bracketed) => bracketed.split(']').next().unwrap_or_default(),
        None => host_port.split(':').next().unwrap_or_default(),
    };
    host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

fn check_pattern(pattern: &str) -> Result<(), String> {
    if pattern.contains("%s") && pattern.contains('=') {
        Ok(())
    } else {
        Err(format!(
            "ldap-user-dn-pattern `{pattern}` is not a DN with %s for the user, e.g. `uid=%s,ou=people,dc=example,dc=com` (several separated by `:`)"
        ))
    }
}

/// Escapes a value for an attribute value in a DN (RFC 4514, section 2.4): the special
/// characters get a backslash, a leading `#` or space and a trailing space too; `*`, NUL and
/// other control characters are written as hex pairs.
pub fn escape_dn_value(value: &str) -> String {
    let last = value.chars().count().saturating_sub(1);
    let mut escaped = String::with_capacity(value.len() + 8);
    for (i, c) in value.chars().enumerate() {
        match c {
            '"' | '+' | ',' | ';' | '<' | '>' | '\\' | '=' => {
                escaped.push('\\');
                escaped.push(c);
            }
            '#' if i == 0 => escaped.push_str("\\#"),
            ' ' if i == 0 || i == last => escaped.push_str("\\ "),
            '*' => escaped.push_str("\\2A"),
            c if c.is_control() => {
                let mut bytes = [0; 4];
                for byte in c.encode_utf8(&mut bytes).bytes() {
                    escaped.push_str(&format!("\\{byte:02X}"));
                }
            }
            c => escaped.push(c),
        }
    }
    escaped
}

/// What the directory said of a user and password.
#[derive(Debug, PartialEq)]
enum Verdict {
    /// The password is right and the filters admit the user.
    Admitted,
    /// Wrong password, unknown user, or a name several entries hold.
    Refused,
    /// The password is right, but the filters leave the user out.
    NotAllowed,
}

/// Why a server could not say.
#[derive(Debug)]
enum Trouble {
    /// It did not answer (connection, TLS, timeout, a server-side failure of a bind).
    Unreachable(String),
    /// It answered, but refused the gateway's service account or one of its searches: the
    /// operator's settings.
    Failing(String),
}

impl From<LdapError> for Trouble {
    fn from(e: LdapError) -> Trouble {
        Trouble::Unreachable(e.to_string())
    }
}

/// What the servers said, together.
#[derive(Debug, PartialEq)]
enum Outcome {
    Said(Verdict),
    /// No server answered; why, for the operator.
    Unreachable(String),
    /// A server answered but the gateway's bind or searches failed; why, for the operator.
    Failing(String),
}

/// What a user the filters leave out is told: not a wrong password, and nothing of other
/// users or of the groups admitted.
pub fn not_allowed(user: &str) -> String {
    format!(
        "user '{user}' is not allowed to use this gateway: the password is right, but the user is not a member \
         of the LDAP users or groups the gateway admits; ask an operator for access"
    )
}

/// Authentication LDAP (see the module's documentation).
pub struct LdapAuthenticator {
    settings: LdapSettings,
    /// TLS client configuration of `ldap-ca-file`, built once.
    tls_config: Option<Arc<ClientConfig>>,
    remembered: RememberedPasswords,
}

impl LdapAuthenticator {
    pub fn new(settings: LdapSettings) -> LdapAuthenticator {
        tracing::info!(
            urls = %settings.urls.join(" "),
            bind_as = ?settings.bind_as,
            user_bases = ?settings.user_bases,
            admission = ?settings.admission,
            start_tls = settings.tls.start_tls,
            ca_file = settings.tls.trusted_cas.is_some(),
            "LDAP authentication"
        );
        let in_clear: Vec<&str> = (settings.urls.iter())
            .filter(|url| settings.tls.in_clear(url) && !on_loopback(url))
            .map(String::as_str)
            .collect();
        if !in_clear.is_empty() {
            tracing::warn!(
                urls = %in_clear.join(" "),
                "LDAP: users' passwords cross the network in clear to these servers; use ldaps:// or set ldap-start-tls"
            );
        }
        LdapAuthenticator {
            tls_config: settings.tls.client_config(),
            settings,
            remembered: RememberedPasswords::default(),
        }
    }

    /// Asks the first server that answers.
    async fn check(&self, user: &str, password: &str, names: &[String]) -> Outcome {
        let mut unreachable = Vec::new();
        let mut failing = Vec::new();
        for url in &self.settings.urls {
            match self.check_at(url, user, password, names).await {
                Ok(verdict) => return Outcome::Said(verdict),
                Err(Trouble::Unreachable(why)) => unreachable.push(format!("{url}: {why}")),
                Err(Trouble::Failing(why)) => failing.push(format!("{url}: {why}")),
            }
        }
        if failing.is_empty() {
            Outcome::Unreachable(unreachable.join("; "))
        } else {
            failing.extend(unreachable);
            Outcome::Failing(failing.join("; "))
        }
    }

    /// Asks the server at `url`, on one connection.
    async fn check_at(
        &self,
        url: &str,
        user: &str,
        password: &str,
        names: &[String],
    ) -> Result<Verdict, Trouble> {
        let mut settings = LdapConnSettings::new()
            .set_conn_timeout(CONNECT_TIMEOUT)
            .set_starttls(self.settings.tls.start_tls);
        if let Some(config) = &self.tls_config {
            settings = settings.set_config(config.clone());
        }
        let (connection, mut ldap) = LdapConnAsync::with_settings(settings, url).await?;
        let driver = tokio::spawn(connection.drive());
        let verdict = self.check_on(&mut ldap, user, password, names).await;
        let _ = ldap.with_timeout(BIND_TIMEOUT).unbind().await;
        driver.abort();
        verdict
    }

    async fn check_on(
        &self,
        ldap: &mut Ldap,
        user: &str,
        password: &str,
        names: &[String],
    ) -> Result<Verdict, Trouble> {
        if let BindAs::ServiceAccount {
            dn,
            password: service_password,
        } = &self.settings.bind_as
        {
            if !bind(ldap, dn, &service_password.0).await? {
                return Err(Trouble::Failing(format!(
                    "the directory refused the gateway's bind as `{dn}`: check ldap-bind-dn and ldap-bind-password"
                )));
            }
            let Some(entry) = self.find_user(ldap, user).await? else {
                return Ok(Verdict::Refused);
            };
            // Filters first, as the service account; their answer counts only if the
            // password is right.
            let admitted = self.admits(ldap, user, Some(&entry)).await?;
            return Ok(match bind(ldap, &entry, password).await? {
                false => Verdict::Refused,
                true if admitted => Verdict::Admitted,
                true => Verdict::NotAllowed,
            });
        }
        let mut bound = None;
        for name in names {
            if bind(ldap, name, password).await? {
                bound = Some(name);
                break;
            }
        }
        let Some(name) = bound else {
            return Ok(Verdict::Refused);
        };
        let entry = match &self.settings.bind_as {
            BindAs::Patterns(_) => Some(name.clone()),
            _ if self.settings.admission.needs_entry() => self.find_user(ldap, user).await?,
            _ => None,
        };
        Ok(match self.admits(ldap, user, entry.as_deref()).await? {
            true => Verdict::Admitted,
            false => Verdict::NotAllowed,
        })
    }

    /// The DN of `user`'s entry, if exactly one entry holds the name.
    async fn find_user(&self, ldap: &mut Ldap, user: &str) -> Result<Option<String>, Trouble> {
        let mut found = Vec::new();
        for under in &self.settings.user_bases {
            let filter = query::user(under, user);
            found.extend(search(ldap, &under.base, Scope::Subtree, &filter, &["1.1"], 2).await?);
            if found.len() > 1 {
                break;
            }
        }
        if found.len() == 1 {
            Ok(found.pop().map(|entry| entry.dn))
        } else {
            tracing::debug!(%user, entries = found.len(), "LDAP: not exactly one entry for the user");
            Ok(None)
        }
    }

    /// Whether the filters admit `user`, whose entry is `entry` (when it was needed and
    /// found).
    async fn admits(
        &self,
        ldap: &mut Ldap,
        user: &str,
        entry: Option<&str>,
    ) -> Result<bool, Trouble> {
        let admission = &self.settings.admission;
        if !admission.users.is_empty() && !admission.users.contains(&user.to_lowercase()) {
            return Ok(false);
        }
        let Some(entry) = entry else {
            return Ok(!admission.needs_entry());
        };
        if let Some(groups) = &admission.groups {
            if !in_groups(ldap, groups, user, entry).await? {
                return Ok(false);
            }
        }
        if let Some(custom) = &admission.custom_query {
            return found_by_query(ldap, custom, user, entry).await;
        }
        Ok(true)
    }
}

/// `Ok(true)` when `name` bound with `password`, `Ok(false)` when the server refused it,
/// `Err` when it could not say.
async fn bind(ldap: &mut Ldap, name: &str, password: &str) -> Result<bool, LdapError> {
    let result = ldap
        .with_timeout(BIND_TIMEOUT)
        .simple_bind(name, password)
        .await?;
    match result.rc {
        0 => Ok(true),
        rc if REFUSED.contains(&rc) => Ok(false),
        _ => Err(LdapError::from(result)),
    }
}

/// The entries `filter` finds (at most `limit`; 0: no limit), with `attributes` (`1.1`:
/// none).
async fn search(
    ldap: &mut Ldap,
    base: &str,
    scope: Scope,
    filter: &str,
    attributes: &[&str],
    limit: i32,
) -> Result<Vec<SearchEntry>, Trouble> {
    let ldap3::SearchResult(entries, result) = ldap
        .with_timeout(SEARCH_TIMEOUT)
        .with_search_options(SearchOptions::new().sizelimit(limit))
        .search(base, scope, filter, attributes.to_vec())
        .await?;
    match result.rc {
        0 | SIZE_LIMIT_EXCEEDED => Ok(entries.into_iter().map(SearchEntry::construct).collect()),
        NO_SUCH_OBJECT => Ok(Vec::new()),
        _ => Err(Trouble::Failing(format!(
            "a search under `{base}` failed: {}",
            LdapError::from(result)
        ))),
    }
}

/// Whether `user` (entry `entry`) is a member of one of the groups.
async fn in_groups(
    ldap: &mut Ldap,
    groups: &GroupFilter,
    user: &str,
    entry: &str,
) -> Result<bool, Trouble> {
    for under in &groups.bases {
        match &groups.user_membership_key {
            None => {
                let filter = query::groups_with_member(
                    &groups.class,
                    under,
                    &groups.names,
                    &groups.membership_key,
                    entry,
                    user,
                );
                if !search(ldap, &under.base, Scope::Subtree, &filter, &["1.1"], 1)
                    .await?
                    .is_empty()
                {
                    return Ok(true);
                }
            }
            Some(key) => {
                for name in &groups.names {
                    let filter = query::group(&groups.class, under, name);
                    let found =
                        search(ldap, &under.base, Scope::Subtree, &filter, &["1.1"], 2).await?;
                    let [group] = found.as_slice() else {
                        continue;
                    };
                    let lists = query::lists_group(key, &group.dn);
                    if !search(ldap, entry, Scope::Base, &lists, &["1.1"], 1)
                        .await?
                        .is_empty()
                    {
                        return Ok(true);
                    }
                }
            }
        }
    }
    Ok(false)
}

/// Whether the custom query finds `user`'s entry, or an entry listing it under the
/// membership key (by DN or by name).
async fn found_by_query(
    ldap: &mut Ldap,
    custom: &CustomQuery,
    user: &str,
    entry: &str,
) -> Result<bool, Trouble> {
    let filter = query::custom(&custom.filter, user);
    let found = search(
        ldap,
        &custom.base,
        Scope::Subtree,
        &filter,
        &[custom.membership_key.as_str()],
        0,
    )
    .await?;
    let me = query::comparable_dn(entry);
    Ok(found.iter().any(|found| {
        query::comparable_dn(&found.dn) == me
            || found
                .attrs
                .iter()
                .filter(|(key, _)| key.eq_ignore_ascii_case(&custom.membership_key))
                .flat_map(|(_, values)| values)
                .any(|value| query::comparable_dn(value) == me || value.eq_ignore_ascii_case(user))
    }))
}

impl Authenticator for LdapAuthenticator {
    fn authenticate(&self, user: &str, password: &str) -> Result<(), String> {
        let refused = || {
            wrong_credentials(
                user,
                "check both (the gateway checks them with its LDAP directory)",
            )
        };
        // An empty password would be an anonymous bind, which succeeds.
        if password.is_empty() {
            return Err(refused());
        }
        let Some(names) = self.settings.bind_names(user) else {
            return Err(refused());
        };
        if self.remembered.knows(user, password) {
            return Ok(());
        }
        let cannot_check = |what: &str| {
            format!(
                "cannot check the password of user '{user}': {what}; this is not a wrong password: ask an \
                 operator (the gateway's log says why)"
            )
        };
        match wait_for(self.check(user, password, &names)) {
            Outcome::Said(Verdict::Admitted) => {
                self.remembered.remember(user, password);
                Ok(())
            }
            Outcome::Said(Verdict::Refused) => Err(refused()),
            Outcome::Said(Verdict::NotAllowed) => {
                tracing::info!(%user, "LDAP: the password is right but the filters leave the user out");
                Err(not_allowed(user))
            }
            Outcome::Unreachable(why) => {
                tracing::warn!(%user, error = %why, "no LDAP server answered: passwords cannot be checked");
                Err(cannot_check("the gateway's LDAP server does not answer"))
            }
            Outcome::Failing(why) => {
                tracing::warn!(%user, error = %why, "LDAP: the gateway's own bind or search failed: passwords cannot be checked");
                Err(cannot_check("the gateway cannot search its LDAP directory"))
            }
        }
    }
}

#[cfg(test)]
mod tests;
