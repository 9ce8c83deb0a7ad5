//! Authentication LDAP: a password is checked by binding to the directory as its user, as HiveServer2's and Kyuubi's LDAP providers do.
//!
//! The settings are Kyuubi's `kyuubi.authentication.ldap.*` (Hive's
//! `hive.server2.authentication.ldap.*`), in the subset a simple bind needs:
//!
//! - `ldap-url`: `ldap://` or `ldaps://` servers, separated by spaces, tried in order until
//!   one answers (`ldaps://` checks the server's certificate against the system's roots).
//! - `ldap-domain`: the user binds as `user@domain` (Active Directory's user principal name).
//! - else `ldap-user-dn-pattern`: DNs with `%s` for the user, several separated by `:`, tried
//!   in order (Hive's `userDNPattern`), e.g. `uid=%s,ou=people,dc=example,dc=com`;
//! - else `ldap-base-dn`: the pattern `uid=%s,BASE` (Hive's default `guidKey`).
//!
//! The user name is escaped in the DN (RFC 4514), so that `,`, `=`, `+` or `*` in it cannot
//! name another entry; with a domain, names holding such characters are refused. Names with
//! spaces around them are refused too: the directory would ignore the spaces. An empty
//! password is refused before any bind: LDAP takes it as an anonymous bind, which succeeds.
//! A wrong password and an unknown user get FILE's answer; a directory that does not answer
//! gets another one, for an operator. Searches (group and user filters, a bind user) and
//! StartTLS are not built. A password that matched is remembered for a few minutes
//! ([`crate::password_check`]).

use std::time::Duration;

use kumiho_thrift::auth::Authenticator;
use ldap3::{LdapConnAsync, LdapConnSettings, LdapError};

use crate::config::ServerConfig;
use crate::password_check::{wait_for, wrong_credentials, RememberedPasswords};

/// How long connecting to one server (TCP and TLS) may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// How long one bind may take once connected.
const BIND_TIMEOUT: Duration = Duration::from_secs(10);

/// Bind results that mean "not this name with this password" (RFC 4511 A.1):
/// invalidCredentials, noSuchObject, invalidDNSyntax, inappropriateAuthentication,
/// insufficientAccessRights, unwillingToPerform (a disabled account), constraintViolation
/// (a locked one). Any other code is the server's trouble, and the next server is tried.
const REFUSED: [u32; 7] = [49, 32, 34, 48, 50, 53, 19];

/// Characters refused in a user name bound as `user@domain`: they would make it another
/// kind of name (a DN, `DOMAIN\user`, another domain).
const NOT_IN_PRINCIPAL: &[char] = &['@', '\\', ',', '=', '+', '"', '<', '>', ';', '#', '*'];

/// How a user name becomes the names bound as.
#[derive(Clone, Debug, PartialEq)]
pub enum BindAs {
    /// `user@domain`.
    Domain(String),
    /// DNs with `%s` where the escaped user name goes, tried in order.
    Patterns(Vec<String>),
}

/// The LDAP settings, checked: where to bind and as what.
#[derive(Clone, Debug, PartialEq)]
pub struct LdapSettings {
    /// Servers, tried in order until one answers.
    pub urls: Vec<String>,
    /// How a user name becomes the names bound as.
    pub bind_as: BindAs,
}

impl LdapSettings {
    /// Reads the `ldap-*` settings of `authentication: LDAP`; the error says what to set.
    pub fn from_config(config: &ServerConfig) -> Result<LdapSettings, String> {
        let given = |value: &Option<String>| {
            value
                .as_deref()
                .map(str::trim)
                .filter(|text| !text.is_empty())
                .map(str::to_owned)
        };
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
        let bind_as = match (
            given(&config.ldap_domain),
            given(&config.ldap_user_dn_pattern),
            given(&config.ldap_base_dn),
        ) {
            (Some(_), Some(_), _) => {
                return Err(
                    "ldap-domain and ldap-user-dn-pattern are both set, but users bind one way: \
                     as user@domain (Active Directory) or by the DN pattern; remove one"
                        .to_owned(),
                )
            }
            (Some(domain), None, _) => {
                if domain.contains(['@', ' ']) {
                    return Err(format!(
                        "ldap-domain `{domain}` is not a domain; write it as `example.com`"
                    ));
                }
                BindAs::Domain(domain)
            }
            (None, Some(patterns), _) => BindAs::Patterns(
                patterns
                    .split(':')
                    .map(|pattern| check_pattern(pattern.trim()).map(|()| pattern.trim().to_owned()))
                    .collect::<Result<_, _>>()?,
            ),
            (None, None, Some(base)) => BindAs::Patterns(vec![format!("uid=%s,{base}")]),
            (None, None, None) => {
                return Err(
                    "authentication LDAP needs ldap-user-dn-pattern (e.g. `uid=%s,ou=people,dc=example,dc=com`), \
                     ldap-base-dn (users bind as `uid=USER,BASE`) or ldap-domain (as `USER@DOMAIN`)"
                        .to_owned(),
                )
            }
        };
        Ok(LdapSettings { urls, bind_as })
    }

    /// The names `user` binds as, in order; `None` for a name that cannot be one. Spaces
    /// around a name are refused: directories ignore them when matching (RFC 4518), so
    /// ` bob` would bind as `bob` but hold sessions under another name.
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
        }
    }
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

/// What the directory said.
#[derive(Debug, PartialEq)]
enum Outcome {
    Bound,
    Refused,
    /// No server answered; why, for the operator.
    Unreachable(String),
}

/// Authentication LDAP (see the module's documentation).
pub struct LdapAuthenticator {
    settings: LdapSettings,
    remembered: RememberedPasswords,
}

impl LdapAuthenticator {
    pub fn new(settings: LdapSettings) -> LdapAuthenticator {
        tracing::info!(urls = %settings.urls.join(" "), bind_as = ?settings.bind_as, "LDAP authentication");
        LdapAuthenticator {
            settings,
            remembered: RememberedPasswords::default(),
        }
    }

    /// Binds as each name on the first server that answers.
    async fn bind(&self, names: &[String], password: &str) -> Outcome {
        let mut failures = Vec::new();
        for url in &self.settings.urls {
            match bind_at(url, names, password).await {
                Ok(true) => return Outcome::Bound,
                Ok(false) => return Outcome::Refused,
                Err(e) => failures.push(format!("{url}: {e}")),
            }
        }
        Outcome::Unreachable(failures.join("; "))
    }
}

/// `Ok(true)` when one of `names` bound with `password` at `url`, `Ok(false)` when the
/// server refused them all, `Err` when it could not say.
async fn bind_at(url: &str, names: &[String], password: &str) -> Result<bool, LdapError> {
    let settings = LdapConnSettings::new().set_conn_timeout(CONNECT_TIMEOUT);
    let (connection, mut ldap) = LdapConnAsync::with_settings(settings, url).await?;
    let driver = tokio::spawn(connection.drive());
    let outcome = async {
        for name in names {
            let result = ldap
                .with_timeout(BIND_TIMEOUT)
                .simple_bind(name, password)
                .await?;
            match result.rc {
                0 => return Ok(true),
                rc if REFUSED.contains(&rc) => continue,
                _ => return Err(LdapError::from(result)),
            }
        }
        Ok(false)
    }
    .await;
    let _ = ldap.with_timeout(BIND_TIMEOUT).unbind().await;
    driver.abort();
    outcome
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
        match wait_for(self.bind(&names, password)) {
            Outcome::Bound => {
                self.remembered.remember(user, password);
                Ok(())
            }
            Outcome::Refused => Err(refused()),
            Outcome::Unreachable(why) => {
                tracing::warn!(%user, error = %why, "no LDAP server answered: passwords cannot be checked");
                Err(format!(
                    "cannot check the password of user '{user}': the gateway's LDAP server does not \
                     answer; this is not a wrong password: ask an operator (the gateway's log says why)"
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests;
