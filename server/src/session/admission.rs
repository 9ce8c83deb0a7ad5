//! Who may open a session: a cluster's deny lists, and its caps on the sessions open on this gateway per user, per client address and per user at one address.
//!
//! These are Kyuubi's `kyuubi.server.limit.connections.*` settings, per cluster: `deny-users`
//! and `deny-ips` beside `allowed-users`, and `limits.max-sessions-per-user`,
//! `max-sessions-per-ip`, `max-sessions-per-user-ip` and `unlimited-users`. The counts are
//! kept as sessions open and close, so a check is three map lookups rather than a walk over
//! every session, and a place is taken in the same step as the check: two sessions opened at
//! once cannot both take the last place. They count every session of the gateway whatever
//! its cluster, and the cluster a new session asks for sets the caps it must fit under; a
//! cap changed by a reload applies to the next session, not to those already open.

use std::fmt;
use std::hash::Hash;
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use dashmap::mapref::entry::Entry;
use dashmap::DashMap;

use crate::cluster::Cluster;
use crate::errors::GatewayError;

/// A session or batch refused here: why, as the metrics' `reason` label, and what its client
/// is told.
#[derive(Debug)]
pub struct Refused {
    /// `deny_user`, `deny_ip`, or the cap's key with underscores (`max_sessions_per_ip`).
    pub reason: &'static str,
    message: String,
}

impl From<Refused> for GatewayError {
    fn from(refused: Refused) -> Self {
        GatewayError::Refused(refused.message)
    }
}

/// Refuses a user or client address the cluster denies: the login user and the user the
/// session runs as (a proxy user) are both checked. For sessions and batches alike.
pub fn check_deny_lists(
    cluster: &Cluster,
    login_user: &str,
    user: &str,
    client: IpAddr,
) -> Result<(), Refused> {
    let config = &cluster.config;
    if let Some(denied) = [login_user, user]
        .into_iter()
        .find(|name| config.deny_users.iter().any(|denied| denied == name))
    {
        return Err(Refused {
            reason: "deny_user",
            message: format!(
                "user `{denied}` is denied on cluster `{}` (its deny-users); ask an operator if this is a mistake",
                cluster.name
            ),
        });
    }
    if let Some(rule) = config.deny_ips.iter().find(|rule| rule.matches(client)) {
        let client = client.to_canonical();
        let matched = match rule.to_string() == client.to_string() {
            true => String::new(),
            false => format!(", which has {rule}"),
        };
        return Err(Refused {
            reason: "deny_ip",
            message: format!(
                "sessions from {client} are denied on cluster `{}` (its deny-ips{matched}); connect from another address or ask an operator",
                cluster.name
            ),
        });
    }
    Ok(())
}

/// The sessions open on this gateway, counted by user, by client address and by both.
#[derive(Debug, Default)]
pub struct SessionCounts {
    by_user: DashMap<String, u32>,
    by_address: DashMap<IpAddr, u32>,
    by_user_address: DashMap<(String, IpAddr), u32>,
}

/// Which cap a session did not fit under.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cap {
    User,
    Address,
    UserAddress,
}

impl SessionCounts {
    /// Takes a place for a session of `user` from `client` under the caps of `cluster`
    /// (none for its `unlimited-users`), or says which cap is full. The place is given back
    /// when the [`Admission`] is released or dropped.
    pub fn admit(
        self: &Arc<Self>,
        cluster: &Cluster,
        user: &str,
        client: IpAddr,
    ) -> Result<Admission, Refused> {
        let limits = &cluster.config.limits;
        let unlimited = limits.unlimited_users.iter().any(|name| name == user);
        let cap = |cap: Option<u32>| cap.filter(|_| !unlimited);
        let client = client.to_canonical();
        let user_address = (user.to_owned(), client);
        let full = take(&self.by_user, user, cap(limits.max_sessions_per_user))
            .map_err(|open| (Cap::User, open))
            .and_then(|()| {
                take(&self.by_address, &client, cap(limits.max_sessions_per_ip)).map_err(|open| {
                    give_back(&self.by_user, user);
                    (Cap::Address, open)
                })
            })
            .and_then(|()| {
                take(
                    &self.by_user_address,
                    &user_address,
                    cap(limits.max_sessions_per_user_ip),
                )
                .map_err(|open| {
                    give_back(&self.by_user, user);
                    give_back(&self.by_address, &client);
                    (Cap::UserAddress, open)
                })
            });
        match full {
            Ok(()) => Ok(Admission {
                counts: self.clone(),
                user: user.to_owned(),
                client,
                released: AtomicBool::new(false),
            }),
            Err((cap, open)) => Err(refusal(cap, open, user, client, cluster)),
        }
    }

    /// Sessions `user` has open on this gateway.
    pub fn of_user(&self, user: &str) -> u32 {
        self.by_user.get(user).map_or(0, |count| *count)
    }

    /// Sessions open on this gateway from `client`.
    pub fn from_address(&self, client: IpAddr) -> u32 {
        self.by_address
            .get(&client.to_canonical())
            .map_or(0, |count| *count)
    }
}

/// What a client whose session does not fit is told: which cap, and what to do.
fn refusal(cap: Cap, open: u32, user: &str, client: IpAddr, cluster: &Cluster) -> Refused {
    let name = &cluster.name;
    let (who, key, reason) = match cap {
        Cap::User => (
            format!("user `{user}`"),
            "max-sessions-per-user",
            "max_sessions_per_user",
        ),
        Cap::Address => (
            format!("client address {client}"),
            "max-sessions-per-ip",
            "max_sessions_per_ip",
        ),
        Cap::UserAddress => (
            format!("user `{user}` at {client}"),
            "max-sessions-per-user-ip",
            "max_sessions_per_user_ip",
        ),
    };
    Refused {
        reason,
        message: format!(
            "{who} already has {open} open {}, the limit of cluster `{name}` (limits.{key}); close some first, or ask an operator to raise it",
            Sessions(open)
        ),
    }
}

/// "session" or "sessions".
struct Sessions(u32);

impl fmt::Display for Sessions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0 == 1 { "session" } else { "sessions" })
    }
}

/// Counts one more under `key` unless that would pass `cap`; `Err` holds the count found.
fn take<K, Q>(counts: &DashMap<K, u32>, key: &Q, cap: Option<u32>) -> Result<(), u32>
where
    K: Eq + Hash + std::borrow::Borrow<Q>,
    Q: Eq + Hash + ToOwned<Owned = K> + ?Sized,
{
    // The entry's shard stays locked from the check to the increment.
    match counts.entry(key.to_owned()) {
        Entry::Occupied(mut count) => match cap {
            Some(cap) if *count.get() >= cap => Err(*count.get()),
            _ => {
                *count.get_mut() += 1;
                Ok(())
            }
        },
        Entry::Vacant(_) if cap == Some(0) => Err(0),
        Entry::Vacant(place) => {
            place.insert(1);
            Ok(())
        }
    }
}

/// Counts one fewer under `key`, forgetting it at zero so that the maps hold only users and
/// addresses with open sessions.
fn give_back<K, Q>(counts: &DashMap<K, u32>, key: &Q)
where
    K: Eq + Hash + std::borrow::Borrow<Q>,
    Q: Eq + Hash + ?Sized,
{
    counts.remove_if_mut(key, |_, count| {
        *count = count.saturating_sub(1);
        *count == 0
    });
}

/// A session's place in the counts, given back once: at close, or when dropped.
#[derive(Debug)]
pub struct Admission {
    counts: Arc<SessionCounts>,
    user: String,
    client: IpAddr,
    released: AtomicBool,
}

impl Admission {
    /// Gives the place back (again is nothing).
    pub fn release(&self) {
        if self.released.swap(true, Ordering::AcqRel) {
            return;
        }
        let counts = &self.counts;
        give_back(&counts.by_user, self.user.as_str());
        give_back(&counts.by_address, &self.client);
        give_back(
            &counts.by_user_address,
            &(self.user.clone(), self.client) as &(String, IpAddr),
        );
    }
}

impl Drop for Admission {
    fn drop(&mut self) {
        self.release();
    }
}

#[cfg(test)]
mod tests;
