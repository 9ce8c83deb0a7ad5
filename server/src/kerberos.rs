//! Authentication KERBEROS: the gateway's service principal and keytab, and MIT krb5's
//! GSS-API accepting clients' tickets for the frontends.
//!
//! The library (`libgssapi_krb5.so.2`, Debian's `libgssapi-krb5-2`) is loaded when the
//! first acceptor opens ([`gssapi`]), so neither building nor running a gateway without
//! KERBEROS needs it; without it, opening fails with what to install.
//!
//! The keytab reaches the library through `KRB5_KTNAME`, which it reads whenever it opens
//! the default keytab. The environment may only be changed while the process has a single
//! thread, so `kumiho`'s `main` calls [`use_keytab`] before the runtime starts, and
//! [`GssAcceptor::open`] checks that it was done. Opening also acquires the acceptor
//! credentials, so a missing, unreadable or wrong keytab stops the start with its name.
//!
//! Client principals become session users by `kerberos-auth-to-local`'s rules (Hadoop's
//! auth_to_local, [`AuthToLocal`]), or, without them, by their first component.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use kumiho_thrift::auth::Authenticator;
use kumiho_thrift::kerberos::{
    kerberos_required, short_name, AcceptContext, AuthToLocal, KerberosAcceptor, Step, Unwrapped,
};
use kumiho_thrift::sasl::Qop;

use gssapi::{AcceptorContext, Credentials, Name};

// The only unsafe code of the crate: MIT krb5's C functions, behind a safe layer.
#[allow(unsafe_code)]
mod gssapi;

pub mod ticket;

pub use gssapi::LIBRARY_VARIABLE;

/// The environment variable MIT krb5 takes the default keytab's name from.
pub const KEYTAB_VARIABLE: &str = "KRB5_KTNAME";

/// The placeholder in `kerberos-principal` replaced by the gateway's host name, as in
/// Hadoop's `SecurityUtil.getServerPrincipal`.
pub const HOST_PLACEHOLDER: &str = "_HOST";

/// The service principal with `_HOST` (as the instance) replaced by `host` in lower case:
/// `kumiho/_HOST@EXAMPLE.COM` on `gw1.example.com` is `kumiho/gw1.example.com@EXAMPLE.COM`.
pub fn service_principal(configured: &str, host: &str) -> String {
    let (name, realm) = match configured.split_once('@') {
        Some((name, realm)) => (name, Some(realm)),
        None => (configured, None),
    };
    let name = match name.split_once('/') {
        Some((service, HOST_PLACEHOLDER)) => format!("{service}/{}", host.to_lowercase()),
        _ => name.to_owned(),
    };
    match realm {
        Some(realm) => format!("{name}@{realm}"),
        None => name,
    }
}

/// Checks the form `service/host@REALM` that Hive JDBC's `principal=` takes (it splits the
/// service and host apart for SASL); the error names the `setting` and says what to write.
pub fn check_principal_form(setting: &str, principal: &str) -> Result<(), String> {
    let well_formed = principal.split_once('@').is_some_and(|(name, realm)| {
        !realm.is_empty()
            && !realm.contains(['@', '/'])
            && name.split_once('/').is_some_and(|(service, host)| {
                !service.is_empty() && !host.is_empty() && !host.contains('/')
            })
    });
    if well_formed {
        Ok(())
    } else {
        Err(format!(
            "{setting} `{principal}` must be service/host@REALM, e.g. \
             kumiho/_HOST@EXAMPLE.COM or HTTP/_HOST@EXAMPLE.COM (_HOST is replaced by the \
             gateway's host name)"
        ))
    }
}

/// The keytab name MIT krb5 is given for `keytab`: `FILE:` and its absolute path.
fn keytab_name(keytab: &Path) -> String {
    let absolute = std::path::absolute(keytab).unwrap_or_else(|_| keytab.to_owned());
    format!("FILE:{}", absolute.display())
}

/// Points MIT krb5's default keytab at `keytab`. Call it before any other thread starts
/// (the environment is not safe to change while others may read it).
pub fn use_keytab(keytab: &Path) {
    std::env::set_var(KEYTAB_VARIABLE, keytab_name(keytab));
}

/// Accepts clients' Kerberos tickets for the gateway's service principal (and, on the HTTP
/// frontends, its SPNEGO principal), with the credentials acquired from the keytab when the
/// gateway started.
pub struct GssAcceptor {
    /// The principal named in messages: the service principal.
    principal: String,
    /// Every principal whose tickets are taken, when there are several; their credentials
    /// take any key in the keytab, so the ticket's principal is checked after acceptance.
    several: Option<Vec<String>>,
    credentials: Arc<Credentials>,
    /// Maps client principals to session users; `None`: to their first component.
    auth_to_local: Option<Arc<AuthToLocal>>,
}

impl GssAcceptor {
    /// Checks the keytab and acquires acceptor credentials for `principal` from it; errors
    /// name the file and say what to fix.
    pub fn open(principal: &str, keytab: &Path) -> Result<Self, String> {
        Ok(Self {
            principal: principal.to_owned(),
            several: None,
            credentials: Self::credentials_for(principal, keytab)?,
            auth_to_local: None,
        })
    }

    /// Maps client principals to session users by `rules` instead of their first component.
    pub fn with_auth_to_local(mut self, rules: Option<Arc<AuthToLocal>>) -> Self {
        self.auth_to_local = rules;
        self
    }

    /// [`Self::open`] for tickets of any of `principals` (the first is the one messages
    /// name), each checked to have its key in the keytab.
    pub fn open_any(principals: &[String], keytab: &Path) -> Result<Self, String> {
        let [first, others @ ..] = principals else {
            return Err("no Kerberos principal to accept tickets for".to_owned());
        };
        let mut acceptor = Self::open(first, keytab)?;
        if others.is_empty() {
            return Ok(acceptor);
        }
        for principal in others {
            Self::credentials_for(principal, keytab)?;
        }
        let any_in_keytab = Credentials::accept(gssapi::library()?, None).map_err(|e| {
            format!(
                "cannot accept Kerberos clients with kerberos-keytab {}: {e}",
                keytab.display()
            )
        })?;
        acceptor.credentials = Arc::new(any_in_keytab);
        acceptor.several = Some(principals.to_vec());
        Ok(acceptor)
    }

    /// Acceptor credentials for exactly `principal`, from `keytab`.
    fn credentials_for(principal: &str, keytab: &Path) -> Result<Arc<Credentials>, String> {
        check_principal_form("the Kerberos principal", principal)?;
        std::fs::File::open(keytab).map_err(|e| {
            format!(
                "cannot read kerberos-keytab {}: {e}; export the key of {principal} into it \
                 (kadmin: ktadd -k FILE {principal}) and let the gateway's user read it",
                keytab.display()
            )
        })?;
        let wanted = keytab_name(keytab);
        let actual = std::env::var(KEYTAB_VARIABLE).unwrap_or_default();
        if actual != wanted {
            return Err(format!(
                "{KEYTAB_VARIABLE} is `{actual}` but kerberos-keytab is {}: a program that \
                 embeds the gateway must call kumiho_server::kerberos::use_keytab before it \
                 starts threads (the kumiho binary does)",
                keytab.display()
            ));
        }
        let gss = gssapi::library()?;
        let name = Name::krb5_principal(gss, principal)
            .map_err(|e| format!("kerberos-principal `{principal}` is not a principal: {e}"))?;
        let credentials = Credentials::accept(gss, Some(&name)).map_err(|e| {
            format!(
                "cannot accept Kerberos clients as {principal} with kerberos-keytab {}: {e}; \
                 the keytab must hold a key for exactly this principal (klist -kt {})",
                keytab.display(),
                keytab.display()
            )
        })?;
        Ok(Arc::new(credentials))
    }
}

impl KerberosAcceptor for GssAcceptor {
    fn principal(&self) -> &str {
        &self.principal
    }

    fn start(&self) -> Box<dyn AcceptContext> {
        Box::new(GssContext {
            context: AcceptorContext::new(Arc::clone(&self.credentials)),
            allowed: self.several.clone(),
        })
    }

    fn session_user(&self, principal: &str) -> Result<String, String> {
        match &self.auth_to_local {
            Some(rules) => rules.map(principal),
            None => Ok(short_name(principal).to_owned()),
        }
    }
}

/// One client's context in MIT krb5.
struct GssContext {
    context: AcceptorContext,
    /// The principals a ticket may be for, when the credentials take any in the keytab.
    allowed: Option<Vec<String>>,
}

impl GssContext {
    /// Refuses a ticket for a principal of the keytab that this frontend does not serve.
    fn check_target(&self) -> Result<(), String> {
        let Some(allowed) = &self.allowed else {
            return Ok(());
        };
        let target = self.context.target_name()?.display()?;
        if allowed.contains(&target) {
            Ok(())
        } else {
            Err(format!(
                "the ticket is for {target}, which this frontend does not serve (it takes {})",
                allowed.join(" and ")
            ))
        }
    }
}

impl AcceptContext for GssContext {
    fn step(&mut self, token: &[u8]) -> Result<Step, String> {
        // Decrypting a ticket with a key from the keytab: local work, no round trip.
        let reply = self.context.step(token)?;
        if self.context.is_complete() {
            self.check_target()?;
            Ok(Step::Established(reply))
        } else {
            Ok(Step::Continue(reply.unwrap_or_default()))
        }
    }

    fn client_principal(&self) -> Result<String, String> {
        self.context.source_name()?.display()
    }

    fn wrap(&mut self, message: &[u8], confidential: bool) -> Result<Vec<u8>, String> {
        self.context.wrap(message, confidential)
    }

    fn unwrap(&mut self, token: &[u8]) -> Result<Unwrapped, String> {
        let (message, confidential) = self.context.unwrap(token)?;
        Ok(Unwrapped {
            message,
            confidential,
        })
    }

    fn wrap_size_limit(&self, confidential: bool, max_token: u32) -> Result<u32, String> {
        self.context.wrap_size_limit(confidential, max_token)
    }
}

/// PLAIN and Basic credentials under authentication KERBEROS (the REST API's Basic
/// authentication, and any path that asks for a password): always refused, with what to do.
pub struct KerberosOnly {
    principal: String,
}

impl KerberosOnly {
    pub fn new(acceptor: &Arc<GssAcceptor>) -> Self {
        Self {
            principal: acceptor.principal.clone(),
        }
    }
}

impl Authenticator for KerberosOnly {
    fn authenticate(&self, _user: &str, _password: &str) -> Result<(), String> {
        Err(kerberos_required(&self.principal))
    }
}

/// The keytab and principal of authentication KERBEROS, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KerberosSettings {
    /// The service principal, `_HOST` replaced.
    pub principal: String,
    /// The HTTP frontends' SPNEGO principal, `_HOST` replaced, if any.
    pub spnego_principal: Option<String>,
    pub keytab: PathBuf,
    /// The protection SASL GSSAPI clients of the binary port must give their data.
    pub sasl_qop: Qop,
    /// `kerberos-auth-to-local`'s rules as written, if any.
    pub auth_to_local: Option<String>,
}

impl KerberosSettings {
    /// The auth_to_local rules, parsed, `DEFAULT` mapping the service principal's realm (where
    /// Hadoop takes krb5.conf's default realm, the gateway's own in any sane setup); `None`
    /// without the setting. The error says which rule is wrong.
    pub fn auth_to_local(&self) -> Result<Option<AuthToLocal>, String> {
        let Some(rules) = &self.auth_to_local else {
            return Ok(None);
        };
        let realm = self
            .principal
            .rsplit_once('@')
            .map_or("", |(_, realm)| realm);
        AuthToLocal::parse(rules, realm)
            .map(Some)
            .map_err(|e| format!("kerberos-auth-to-local: {e}"))
    }

    /// The principals the HTTP frontends take tickets for: the service principal (Hive JDBC
    /// asks for it), then the SPNEGO principal (curl, browsers and most HTTP clients ask
    /// for `HTTP/host`).
    pub fn http_principals(&self) -> Vec<String> {
        std::iter::once(self.principal.clone())
            .chain(self.spnego_principal.clone())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_placeholder_is_replaced_in_lower_case() {
        assert_eq!(
            service_principal("kumiho/_HOST@EXAMPLE.COM", "GW1.Example.com"),
            "kumiho/gw1.example.com@EXAMPLE.COM"
        );
        assert_eq!(
            service_principal("kumiho/gw2.example.com@EXAMPLE.COM", "gw1"),
            "kumiho/gw2.example.com@EXAMPLE.COM",
            "an explicit host stays"
        );
        assert_eq!(
            service_principal("_HOST/_HOST@REALM_HOST", "h"),
            "_HOST/h@REALM_HOST",
            "only the instance is a placeholder"
        );
        assert_eq!(service_principal("kumiho/_HOST", "h"), "kumiho/h");
    }

    #[test]
    fn principals_must_name_service_host_and_realm() {
        for good in [
            "kumiho/_HOST@EXAMPLE.COM",
            "hive/gw.example.com@EXAMPLE.COM",
        ] {
            assert!(check_principal_form("p", good).is_ok(), "{good}");
        }
        for bad in [
            "kumiho@EXAMPLE.COM",
            "kumiho/gw",
            "/gw@EXAMPLE.COM",
            "kumiho/@EXAMPLE.COM",
            "kumiho/gw@",
            "kumiho/a/b@EXAMPLE.COM",
        ] {
            let err = check_principal_form("kerberos-principal", bad).unwrap_err();
            assert!(
                err.contains(bad) && err.contains("service/host@REALM"),
                "{err}"
            );
        }
    }

    #[test]
    fn a_missing_keytab_is_named() {
        let err = GssAcceptor::open(
            "kumiho/gw@EXAMPLE.COM",
            Path::new("/nonexistent/kumiho.keytab"),
        )
        .err()
        .unwrap();
        assert!(
            err.contains("cannot read kerberos-keytab /nonexistent/kumiho.keytab"),
            "{err}"
        );
    }

    #[test]
    fn without_the_gss_api_library_kerberos_does_not_start_and_says_what_to_install() {
        let dir = tempfile::tempdir().unwrap();
        let keytab = dir.path().join("kumiho.keytab");
        std::fs::write(&keytab, b"").unwrap();
        // The environment as `kumiho`'s main sets it before threads start; nextest runs each
        // test in a process of its own, and no other test loads the library.
        std::env::set_var(LIBRARY_VARIABLE, "/nonexistent/libgssapi_krb5.so.2");
        use_keytab(&keytab);
        let err = GssAcceptor::open("kumiho/gw@EXAMPLE.COM", &keytab)
            .err()
            .unwrap();
        assert!(
            err.starts_with(
                "authentication KERBEROS needs MIT krb5's GSS-API library, and \
                 /nonexistent/libgssapi_krb5.so.2 (from KUMIHO_GSSAPI_LIBRARY) cannot be loaded"
            ),
            "{err}"
        );
        assert!(err.contains("apt-get install libgssapi-krb5-2"), "{err}");
    }

    #[test]
    fn plain_credentials_are_refused_with_what_to_do() {
        let only = KerberosOnly {
            principal: "kumiho/gw@EXAMPLE.COM".into(),
        };
        let err = only.authenticate("alice", "pw").unwrap_err();
        assert!(err.contains("Kerberos only"), "{err}");
    }
}
