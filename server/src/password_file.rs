//! Authentication FILE: users and bcrypt password hashes from a file, as `htpasswd -B` writes it.
//!
//! One `user:hash` per line (`#` comments and blank lines allowed), the hash bcrypt's
//! (`$2y$`, `$2b$`, `$2a$`), the format Trino's file password authenticator and Apache's
//! `htpasswd -B -C 10 FILE USER` use. The file is mounted like a ConfigMap: it is read
//! again when its modification time or size changes, and a version that does not parse
//! keeps the last good one (logged, naming the line). bcrypt is slow on purpose (tens of
//! milliseconds), so a password that matched is remembered
//! ([`crate::password_check::RememberedPasswords`]) until the file changes.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use kumiho_thrift::auth::Authenticator;

use crate::password_check::{run_slow, wrong_credentials, RememberedPasswords};

/// Users and their bcrypt hashes.
#[derive(Debug, PartialEq)]
struct Users(HashMap<String, String>);

impl Users {
    /// Parses the file's text; the error names the line and what is wrong with it (never
    /// the hash).
    fn parse(text: &str) -> Result<Users, String> {
        let mut users = HashMap::new();
        for (number, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let at = || format!("line {}", number + 1);
            let Some((user, hash)) = line.split_once(':') else {
                return Err(format!("{}: expected `user:bcrypt-hash`", at()));
            };
            if user.is_empty() {
                return Err(format!("{}: the user name is empty", at()));
            }
            if hash.parse::<bcrypt::HashParts>().is_err() {
                return Err(format!(
                    "{}: the password of `{user}` is not a bcrypt hash; write it with `htpasswd -B FILE {user}`",
                    at()
                ));
            }
            if users.insert(user.to_owned(), hash.to_owned()).is_some() {
                return Err(format!("{}: user `{user}` is listed twice", at()));
            }
        }
        Ok(Users(users))
    }
}

/// What identifies a version of the file without reading it.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Stamp {
    modified: Option<SystemTime>,
    len: u64,
}

fn stamp(path: &Path) -> std::io::Result<Stamp> {
    let meta = std::fs::metadata(path)?;
    Ok(Stamp {
        modified: meta.modified().ok(),
        len: meta.len(),
    })
}

struct Loaded {
    users: Users,
    stamp: Stamp,
}

/// Authentication FILE (see the module's documentation).
pub struct PasswordFile {
    path: PathBuf,
    loaded: Mutex<Loaded>,
    /// Passwords that matched, forgotten when the file changes.
    remembered: RememberedPasswords,
}

impl PasswordFile {
    /// Reads the file; an error (unreadable, or a line that does not parse) stops the
    /// gateway's start with what to fix.
    pub fn open(path: &Path) -> Result<PasswordFile, String> {
        let describe = |e: String| format!("password-file {}: {e}", path.display());
        let stamp = stamp(path).map_err(|e| describe(e.to_string()))?;
        let text = std::fs::read_to_string(path).map_err(|e| describe(e.to_string()))?;
        let users = Users::parse(&text).map_err(describe)?;
        tracing::info!(file = %path.display(), users = users.0.len(), "password file loaded");
        Ok(PasswordFile {
            path: path.to_owned(),
            loaded: Mutex::new(Loaded { users, stamp }),
            remembered: RememberedPasswords::default(),
        })
    }

    /// Reads the file again when it changed; a broken version is logged and ignored.
    fn refresh(&self, loaded: &mut Loaded) {
        let Ok(now) = stamp(&self.path) else {
            return;
        };
        if now == loaded.stamp {
            return;
        }
        loaded.stamp = now;
        match std::fs::read_to_string(&self.path)
            .map_err(|e| e.to_string())
            .and_then(|text| Users::parse(&text))
        {
            Ok(users) => {
                tracing::info!(file = %self.path.display(), users = users.0.len(), "password file reloaded");
                loaded.users = users;
                self.remembered.forget_all();
            }
            Err(e) => {
                tracing::warn!(file = %self.path.display(), error = %e, "password file not reloaded: keeping its last good version");
            }
        }
    }
}

impl Authenticator for PasswordFile {
    fn authenticate(&self, user: &str, password: &str) -> Result<(), String> {
        let refused = || {
            wrong_credentials(
                user,
                "check both, or ask an operator to add the user to the gateway's password file",
            )
        };
        let hash = {
            let mut loaded = self.loaded.lock().unwrap_or_else(|p| p.into_inner());
            self.refresh(&mut loaded);
            if self.remembered.knows(user, password) {
                return Ok(());
            }
            match loaded.users.0.get(user) {
                Some(hash) => hash.clone(),
                None => return Err(refused()),
            }
        };
        // bcrypt takes tens of milliseconds: off the runtime's other tasks when it can be.
        if !run_slow(|| bcrypt::verify(password, &hash).unwrap_or(false)) {
            return Err(refused());
        }
        self.remembered.remember(user, password);
        Ok(())
    }
}

#[cfg(test)]
mod tests;
