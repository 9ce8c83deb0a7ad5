//! The HTTP auth cookie `hive.server2.auth`: after one request with credentials, a client
//! sends it back instead, as Hive JDBC does. The cookie is signed, not stored, so the server
//! keeps no state per client and a forged or expired cookie is simply not accepted.
//!
//! The signing key is random per process unless the server is given a shared secret: then
//! every server holding the same secret derives the same key, so that a cookie issued by one
//! gateway is accepted by the others behind the same name (a load balancer, ZooKeeper
//! discovery).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

/// The cookie's name, as HiveServer2 sets it.
pub const COOKIE_NAME: &str = "hive.server2.auth";

/// How long a cookie stands in for credentials (HiveServer2's
/// `hive.server2.thrift.http.cookie.max.age` default).
pub const COOKIE_MAX_AGE: Duration = Duration::from_secs(86_400);

/// Separates the cookie key from any other use of the same shared secret.
const KEY_DERIVATION_LABEL: &[u8] = b"kumiho hive.server2.auth cookie key v1";

/// Issues and checks cookies under a key that lives as long as the server.
pub struct CookieSigner {
    key: [u8; 32],
}

impl CookieSigner {
    /// A signer with a random key: its cookies are good on this server only.
    pub fn new() -> Self {
        Self {
            key: rand::random(),
        }
    }

    /// A signer whose key is derived from `secret` (HMAC-SHA256 of a fixed label under the
    /// secret), so that every server sharing the secret accepts the others' cookies.
    pub fn from_shared_secret(secret: &str) -> Self {
        let mut mac =
            Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("HMAC takes any key length");
        mac.update(KEY_DERIVATION_LABEL);
        Self {
            key: mac.finalize().into_bytes().into(),
        }
    }

    /// A shared-secret signer when a secret is given, else a random one.
    pub fn for_secret(secret: Option<&str>) -> Self {
        secret.map_or_else(Self::new, Self::from_shared_secret)
    }

    /// A `Set-Cookie` header value naming `user`.
    pub fn set_cookie(&self, user: &str) -> String {
        let expires = now_secs() + COOKIE_MAX_AGE.as_secs();
        let claims = format!("{}.{expires}", URL_SAFE_NO_PAD.encode(user));
        let signature = URL_SAFE_NO_PAD.encode(self.mac(&claims).finalize().into_bytes());
        format!(
            "{COOKIE_NAME}={claims}.{signature}; Max-Age={}; Path=/; HttpOnly",
            COOKIE_MAX_AGE.as_secs()
        )
    }

    /// The user of a valid, unexpired cookie among `Cookie` header values.
    pub fn user<'a>(&self, cookie_headers: impl IntoIterator<Item = &'a [u8]>) -> Option<String> {
        cookie_headers
            .into_iter()
            .filter_map(|header| std::str::from_utf8(header).ok())
            .flat_map(|header| header.split(';'))
            .filter_map(|pair| pair.trim().split_once('='))
            .filter(|(name, _)| *name == COOKIE_NAME)
            .find_map(|(_, value)| self.verify(value))
    }

    fn verify(&self, value: &str) -> Option<String> {
        let (claims, signature) = value.rsplit_once('.')?;
        let signature = URL_SAFE_NO_PAD.decode(signature).ok()?;
        // Constant-time comparison of the signature.
        self.mac(claims).verify_slice(&signature).ok()?;
        let (user, expires) = claims.split_once('.')?;
        if expires.parse::<u64>().ok()? <= now_secs() {
            return None;
        }
        String::from_utf8(URL_SAFE_NO_PAD.decode(user).ok()?).ok()
    }

    fn mac(&self, claims: &str) -> Hmac<Sha256> {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.key).expect("HMAC takes any key length");
        mac.update(claims.as_bytes());
        mac
    }
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(set_cookie: &str) -> &str {
        set_cookie.split(';').next().unwrap()
    }

    #[test]
    fn a_cookie_names_its_user() {
        let signer = CookieSigner::new();
        let set = signer.set_cookie("alice");
        let header = format!("other=1; {}", value(&set));
        assert_eq!(signer.user([header.as_bytes()]), Some("alice".into()));
    }

    #[test]
    fn forged_or_foreign_cookies_are_refused() {
        let signer = CookieSigner::new();
        let set = signer.set_cookie("alice");
        let forged = value(&set).replace(
            &URL_SAFE_NO_PAD.encode("alice"),
            &URL_SAFE_NO_PAD.encode("admin"),
        );
        assert_eq!(signer.user([forged.as_bytes()]), None);
        let other_server = CookieSigner::new();
        assert_eq!(other_server.user([value(&set).as_bytes()]), None);
        assert_eq!(signer.user([b"hive.server2.auth=garbage".as_slice()]), None);
    }

    #[test]
    fn servers_sharing_a_secret_accept_each_others_cookies() {
        let first = CookieSigner::from_shared_secret("cluster secret");
        let second = CookieSigner::for_secret(Some("cluster secret"));
        let set = first.set_cookie("alice");
        assert_eq!(second.user([value(&set).as_bytes()]), Some("alice".into()));
        let stranger = CookieSigner::from_shared_secret("another secret");
        assert_eq!(stranger.user([value(&set).as_bytes()]), None);
        assert_eq!(
            CookieSigner::for_secret(None).user([value(&set).as_bytes()]),
            None
        );
    }

    #[test]
    fn expired_cookies_are_refused() {
        let signer = CookieSigner::new();
        let claims = format!("{}.{}", URL_SAFE_NO_PAD.encode("alice"), now_secs() - 1);
        let signature = URL_SAFE_NO_PAD.encode(signer.mac(&claims).finalize().into_bytes());
        let header = format!("{COOKIE_NAME}={claims}.{signature}");
        assert_eq!(signer.user([header.as_bytes()]), None);
    }
}
