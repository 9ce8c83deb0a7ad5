//! Session and operation handles: the 16-byte guid and secret of a `THandleIdentifier`.

use std::fmt;

use rand::RngCore;
use uuid::Uuid;

use crate::cli::{THandleIdentifier, TOperationHandle, TOperationType, TSessionHandle};

/// A session or operation identifier: a random guid and a random secret.
///
/// Clients echo both back; a handle whose secret does not match is treated as unknown, so
/// that guessing a guid seen in a log does not give access to another user's session.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct HandleId {
    pub guid: Uuid,
    pub secret: Uuid,
}

impl HandleId {
    /// A fresh random handle, from the thread's CSPRNG (ChaCha, seeded and reseeded by the
    /// operating system): `Uuid::new_v4` would make a system call for each half, on every
    /// statement's way to its engine.
    pub fn new() -> Self {
        let mut guid = [0u8; 16];
        let mut secret = [0u8; 16];
        let mut rng = rand::rng();
        rng.fill_bytes(&mut guid);
        rng.fill_bytes(&mut secret);
        Self {
            guid: uuid::Builder::from_random_bytes(guid).into_uuid(),
            secret: uuid::Builder::from_random_bytes(secret).into_uuid(),
        }
    }

    /// Reads a wire identifier; `None` when the guid or secret is not 16 bytes.
    pub fn from_thrift(id: &THandleIdentifier) -> Option<Self> {
        Some(Self {
            guid: Uuid::from_slice(&id.guid).ok()?,
            secret: Uuid::from_slice(&id.secret).ok()?,
        })
    }

    pub fn to_thrift(&self) -> THandleIdentifier {
        THandleIdentifier {
            guid: self.guid.as_bytes().to_vec(),
            secret: self.secret.as_bytes().to_vec(),
        }
    }

    pub fn from_session(handle: &TSessionHandle) -> Option<Self> {
        Self::from_thrift(&handle.session_id)
    }

    pub fn from_operation(handle: &TOperationHandle) -> Option<Self> {
        Self::from_thrift(&handle.operation_id)
    }

    pub fn session_handle(&self) -> TSessionHandle {
        TSessionHandle {
            session_id: self.to_thrift(),
        }
    }

    pub fn operation_handle(&self, kind: TOperationType, has_result_set: bool) -> TOperationHandle {
        TOperationHandle {
            operation_id: self.to_thrift(),
            operation_type: kind,
            has_result_set,
            modified_row_count: None,
        }
    }
}

impl Default for HandleId {
    fn default() -> Self {
        Self::new()
    }
}

/// Prints the guid only: the secret never reaches a log.
impl fmt::Display for HandleId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.guid)
    }
}

impl fmt::Debug for HandleId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HandleId({})", self.guid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_through_the_wire_type() {
        let id = HandleId::new();
        assert_eq!(HandleId::from_thrift(&id.to_thrift()), Some(id));
        assert_eq!(HandleId::from_session(&id.session_handle()), Some(id));
    }

    #[test]
    fn rejects_short_identifiers() {
        let bad = THandleIdentifier {
            guid: vec![1, 2, 3],
            secret: vec![0; 16],
        };
        assert_eq!(HandleId::from_thrift(&bad), None);
    }

    #[test]
    fn display_hides_the_secret() {
        let id = HandleId::new();
        let shown = format!("{id} {id:?}");
        assert!(!shown.contains(&id.secret.to_string()));
    }
}
