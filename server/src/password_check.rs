//! What the authenticators that check passwords share: a short memory of passwords that matched, and running a slow check without stalling the runtime.
//!
//! A check costs tens of milliseconds (bcrypt for FILE, a round trip to the directory for
//! LDAP), and clients that reconnect for every statement would pay it on every connection.
//! So a password that matched is remembered, as a SHA-256 digest (never in clear), for
//! [`REMEMBER_FOR`]: a password changed or an account disabled at the source takes that
//! long to be refused here.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// How long a password that matched is taken without checking it again.
pub const REMEMBER_FOR: Duration = Duration::from_secs(300);

/// The most users remembered at once; beyond that the oldest are forgotten.
const REMEMBERED_USERS: usize = 10_000;

/// What a client is told when its user name or password is wrong; `hint` says where users
/// are kept. Unknown users and wrong passwords get the same answer.
pub fn wrong_credentials(user: &str, hint: &str) -> String {
    format!("wrong user name or password for user '{user}': {hint}")
}

/// Passwords that matched recently: user -> (SHA-256 of the password, when it matched).
///
/// A std `Mutex`: it is never held across an `.await` or a slow check.
#[derive(Debug, Default)]
pub struct RememberedPasswords(Mutex<HashMap<String, ([u8; 32], Instant)>>);

impl RememberedPasswords {
    /// Whether `password` matched for `user` less than [`REMEMBER_FOR`] ago.
    pub fn knows(&self, user: &str, password: &str) -> bool {
        let digest = digest(password);
        let remembered = self.0.lock().unwrap_or_else(|p| p.into_inner());
        remembered.get(user).is_some_and(|(known, at)| {
            at.elapsed() < REMEMBER_FOR && bool::from(known.ct_eq(&digest))
        })
    }

    /// Remembers that `password` matched for `user` now.
    pub fn remember(&self, user: &str, password: &str) {
        let digest = digest(password);
        let mut remembered = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if remembered.len() >= REMEMBERED_USERS {
            remembered.retain(|_, (_, at)| at.elapsed() < REMEMBER_FOR);
            if remembered.len() >= REMEMBERED_USERS {
                remembered.clear();
            }
        }
        remembered.insert(user.to_owned(), (digest, Instant::now()));
    }

    /// Forgets every password (the users changed at their source).
    pub fn forget_all(&self) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }
}

fn digest(password: &str) -> [u8; 32] {
    Sha256::digest(password.as_bytes()).into()
}

/// Runs a slow synchronous check; on a multi-thread runtime its worker hands its other tasks
/// to the rest first ([`tokio::task::block_in_place`]).
pub fn run_slow<T>(check: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current().map(|h| h.runtime_flavor()) {
        Ok(tokio::runtime::RuntimeFlavor::MultiThread) => tokio::task::block_in_place(check),
        _ => check(),
    }
}

/// Waits for an async check from synchronous code (the [`Authenticator`] trait): on the
/// gateway's multi-thread runtime, in place; elsewhere (a current-thread runtime, or none, as
/// in unit tests), on a runtime of its own in a thread of its own.
///
/// [`Authenticator`]: kumiho_thrift::auth::Authenticator
pub fn wait_for<F>(check: F) -> F::Output
where
    F: Future + Send,
    F::Output: Send,
{
    match tokio::runtime::Handle::try_current() {
        Ok(handle) if handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(|| handle.block_on(check))
        }
        _ => std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build()
                        .expect("a runtime for a password check")
                        .block_on(check)
                })
                .join()
                .expect("the password check panicked")
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_that_matched_is_known_until_forgotten() {
        let remembered = RememberedPasswords::default();
        assert!(!remembered.knows("alice", "pw"));
        remembered.remember("alice", "pw");
        assert!(remembered.knows("alice", "pw"));
        assert!(!remembered.knows("alice", "other"));
        assert!(!remembered.knows("bob", "pw"));
        remembered.forget_all();
        assert!(!remembered.knows("alice", "pw"));
    }

    #[test]
    fn async_checks_are_waited_for_with_or_without_a_runtime() {
        assert_eq!(wait_for(async { 1 + 1 }), 2);
        let current = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        assert_eq!(current.block_on(async { wait_for(async { 3 }) }), 3);
        let multi = tokio::runtime::Runtime::new().unwrap();
        assert_eq!(multi.block_on(async { wait_for(async { 4 }) }), 4);
    }
}
