//! The HTTP auth cookie `hive.server2.auth`: after one request with credentials, a client
//! sends it back instead, as Hive JDBC does. The cookie is signed, not stored, so the server
//! keeps no state per client and a forged or expired cookie is simply not accepted.

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

/// Issues and checks cookies under a random key that lives as long as the server.
pub struct CookieSigner {
    key: [u8; 32],
}

impl CookieSigner {
    pub fn new() -> Self {
        Self {
            key: rand::random(),
        }
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
    fn expired_cookies_are_refused() {
        let signer = CookieSigner::new();
        let claims = format!("{}.{}", URL_SAFE_NO_PAD.encode("alice"), now_secs() - 1);
        let signature = URL_SAFE_NO_PAD.encode(signer.mac(&claims).finalize().into_bytes());
        let header = format!("{COOKIE_NAME}={claims}.{signature}");
        assert_eq!(signer.user([header.as_bytes()]), None);
    }
}
