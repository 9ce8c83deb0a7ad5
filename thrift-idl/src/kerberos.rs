//! Kerberos on the frontends, apart from the GSS-API library that speaks it: the acceptor a
//! server is given ([`KerberosAcceptor`]), one client's security context ([`AcceptContext`]),
//! and the session user a client principal maps to ([`short_name`], or Hadoop's
//! auth_to_local rules in [`AuthToLocal`]).
//!
//! The library (MIT krb5's GSS-API, loaded at run time) lives in the gateway, which owns the
//! keytab; this crate only drives contexts, so that its negotiations can be tested with a
//! stand-in context.

mod auth_to_local;

pub use auth_to_local::AuthToLocal;

/// Accepts Kerberos clients for one service principal (the gateway's, from its keytab).
pub trait KerberosAcceptor: Send + Sync + 'static {
    /// The service principal clients must ask tickets for, e.g. `kumiho/host@REALM`.
    fn principal(&self) -> &str;
    /// A fresh security context for one client's authentication.
    fn start(&self) -> Box<dyn AcceptContext>;
    /// The session user of an authenticated client's principal; `Err` refuses the client,
    /// saying why. By default the principal's short name ([`short_name`]).
    fn session_user(&self, principal: &str) -> Result<String, String> {
        Ok(short_name(principal).to_owned())
    }
}

/// The server side of one client's GSS-API security context.
///
/// Errors are the GSS status text (e.g. "Clock skew too great", "Wrong principal in
/// request"): they go to the client and to the log as they are, and never hold a token.
pub trait AcceptContext: Send {
    /// Feeds the client's next token (`gss_accept_sec_context`).
    fn step(&mut self, token: &[u8]) -> Result<Step, String>;
    /// The authenticated client's principal, e.g. `alice@EXAMPLE.COM`, once established.
    fn client_principal(&self) -> Result<String, String>;
    /// Protects a message (`gss_wrap`): for integrity, and for confidentiality too (encrypted)
    /// when `confidential`. The SASL GSSAPI security-layer exchange wraps for integrity only.
    fn wrap(&mut self, message: &[u8], confidential: bool) -> Result<Vec<u8>, String>;
    /// Checks and unprotects a message the client wrapped (`gss_unwrap`).
    fn unwrap(&mut self, token: &[u8]) -> Result<Unwrapped, String>;
    /// The largest message whose wrapped token is at most `max_token` bytes
    /// (`gss_wrap_size_limit`), for a peer that takes tokens of at most that size.
    fn wrap_size_limit(&self, confidential: bool, max_token: u32) -> Result<u32, String>;
}

/// A message a peer wrapped, unprotected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unwrapped {
    pub message: Vec<u8>,
    /// Whether the token was encrypted (`conf_state`), not only signed.
    pub confidential: bool,
}

/// What one accept step produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// The context needs another token from the client; this one goes to it first.
    Continue(Vec<u8>),
    /// The context is established; a token for the client (Kerberos' AP-REP, for mutual
    /// authentication) if the mechanism made one.
    Established(Option<Vec<u8>>),
}

/// The session user of a principal: its first component, before any `/` or `@`
/// (`alice@EXAMPLE.COM` and `alice/admin@EXAMPLE.COM` are both `alice`), as Hadoop's
/// `DEFAULT` auth_to_local rule maps principals of the default realm.
pub fn short_name(principal: &str) -> &str {
    let end = principal.find(['/', '@']).unwrap_or(principal.len());
    &principal[..end]
}

/// Accepts a client whose first token establishes the context, as a Kerberos ticket in
/// SPNEGO does (HTTP's `Authorization: Negotiate`, which carries no state between
/// requests): the client's principal and the token for it (the AP-REP), if any.
pub fn accept_in_one_step(
    acceptor: &dyn KerberosAcceptor,
    token: &[u8],
) -> Result<(String, Option<Vec<u8>>), String> {
    let mut context = acceptor.start();
    let refused = |gss: String| not_accepted(&gss, acceptor.principal());
    match context.step(token).map_err(refused)? {
        Step::Established(reply) => {
            let principal = context.client_principal().map_err(refused)?;
            Ok((principal, reply))
        }
        Step::Continue(_) => Err(
            "the SPNEGO token needs another round trip (NTLM, or a mechanism list without a \
             Kerberos ticket), which this server does not hold state for: send a Kerberos \
             ticket in the first token"
                .into(),
        ),
    }
}

/// What a client whose token is refused is told, with the GSS status text: most causes are
/// the client's (no or an expired ticket, a ticket for another principal, its clock), the
/// rest the keytab's (a stale key version).
pub fn not_accepted(gss: &str, principal: &str) -> String {
    if gss.contains("Request is a replay") {
        return format!(
            "Kerberos authentication failed: {gss}. The client sent a token this server \
             already accepted: each request needs a fresh one, or the auth cookie the first \
             answer set (PyHive over HTTP resends its first token and drops the cookie: use \
             its binary port, or impyla)"
        );
    }
    format!(
        "Kerberos authentication failed: {gss}. Check that the client has a valid ticket \
         (kinit), asks for the service principal {principal}, that its clock is within the \
         KDC's skew (5 minutes) of the gateway's, and that the gateway's keytab holds the \
         principal's current key"
    )
}

/// What a client that tries PLAIN, Basic or NOSASL against a Kerberos server is told.
pub fn kerberos_required(principal: &str) -> String {
    format!(
        "this server authenticates with Kerberos only: get a ticket (kinit) and connect with \
         SASL GSSAPI for the service principal {principal} (JDBC: ;principal={principal}; \
         PyHive: auth='KERBEROS', kerberos_service_name='{}'; HTTP: Authorization: Negotiate)",
        short_name(principal)
    )
}

/// What a NOSASL client is told by a server taking Kerberos tickets and passwords both
/// (KERBEROS,FILE; KERBEROS,LDAP).
pub fn kerberos_or_password_required(principal: &str) -> String {
    format!(
        "this server authenticates with a Kerberos ticket or a user and password, never \
         without SASL: get a ticket (kinit) and connect with SASL GSSAPI for the service \
         principal {principal} (JDBC: ;principal={principal}; PyHive: auth='KERBEROS', \
         kerberos_service_name='{}'), or connect with a user and password (SASL PLAIN; JDBC: \
         drop ;auth=noSasl; PyHive: auth='LDAP')",
        short_name(principal)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_names_drop_instance_and_realm() {
        assert_eq!(short_name("alice@EXAMPLE.COM"), "alice");
        assert_eq!(short_name("alice/admin@EXAMPLE.COM"), "alice");
        assert_eq!(short_name("kumiho/host.example.com@EXAMPLE.COM"), "kumiho");
        assert_eq!(short_name("bob"), "bob");
        assert_eq!(short_name(""), "");
    }

    #[test]
    fn a_replayed_token_is_told_apart() {
        let replay = not_accepted("Unspecified GSS failure (Request is a replay)", "k/h@R");
        assert!(replay.contains("fresh one"), "{replay}");
        let skew = not_accepted("Unspecified GSS failure (Clock skew too great)", "k/h@R");
        assert!(skew.contains("k/h@R") && skew.contains("clock"), "{skew}");
    }

    #[test]
    fn the_refusal_names_the_principal_and_the_client_settings() {
        let message = kerberos_required("kumiho/gw@EXAMPLE.COM");
        assert!(
            message.contains(";principal=kumiho/gw@EXAMPLE.COM"),
            "{message}"
        );
        assert!(
            message.contains("kerberos_service_name='kumiho'"),
            "{message}"
        );
    }
}
