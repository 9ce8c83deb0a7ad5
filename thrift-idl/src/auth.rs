//! Checking PLAIN credentials (SASL PLAIN on the binary port, HTTP Basic on the HTTP port).

use std::fmt;

use subtle::ConstantTimeEq;

/// Decides whether a user may connect with a password.
pub trait Authenticator: Send + Sync + 'static {
    /// Checks PLAIN credentials (SASL and HTTP Basic). `Err(message)` is shown to the client,
    /// so it must say what to fix without revealing the secret.
    fn authenticate(&self, user: &str, password: &str) -> Result<(), String>;
}

/// Authentication NONE: any user, any password (clients always send one).
#[derive(Clone, Copy, Debug, Default)]
pub struct AnyPassword;

impl Authenticator for AnyPassword {
    fn authenticate(&self, _user: &str, _password: &str) -> Result<(), String> {
        Ok(())
    }
}

/// Any user whose password equals one shared secret: how engines accept only the gateway.
#[derive(Clone)]
pub struct SharedSecret(String);

impl SharedSecret {
    pub fn new(secret: impl Into<String>) -> Self {
        Self(secret.into())
    }
}

impl Authenticator for SharedSecret {
    fn authenticate(&self, user: &str, password: &str) -> Result<(), String> {
        // Constant-time, so that response times do not reveal how much of a guess matched.
        if bool::from(self.0.as_bytes().ct_eq(password.as_bytes())) {
            Ok(())
        } else {
            Err(format!(
                "wrong password for user '{user}': this server accepts only the shared secret \
                 it was configured with"
            ))
        }
    }
}

/// Never prints the secret.
impl fmt::Debug for SharedSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SharedSecret(<redacted>)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_password_accepts_everyone() {
        assert!(AnyPassword.authenticate("alice", "anonymous").is_ok());
        assert!(AnyPassword.authenticate("", "").is_ok());
    }

    #[test]
    fn shared_secret_accepts_only_the_secret() {
        let auth = SharedSecret::new("s3cret");
        assert!(auth.authenticate("gateway", "s3cret").is_ok());
        for wrong in ["", "s3cre", "s3cret!", "S3CRET"] {
            let err = auth.authenticate("gateway", wrong).unwrap_err();
            assert!(err.contains("gateway") && !err.contains("s3cret"), "{err}");
        }
    }

    #[test]
    fn debug_hides_the_secret() {
        assert!(!format!("{:?}", SharedSecret::new("s3cret")).contains("s3cret"));
    }
}
