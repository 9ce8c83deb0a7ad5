//! Operation handles the gateway assigns, for engines that accept them: with one, the gateway
//! answers an async ExecuteStatement at once and sends the statement's first status poll to
//! the engine in the same write, instead of waiting for the engine's handle first.
//!
//! An engine says it accepts them with [`ACCEPTED_KEY`] in its OpenSession reply; the gateway
//! then puts the handle in the statement's `confOverlay` under [`OPERATION_ID_KEY`]. Engines
//! that say nothing (the Spark Thrift Server) get statements as the client sent them.

use uuid::Uuid;

use crate::handle::HandleId;

/// OpenSession reply key: the engine creates a statement under the handle it is given.
pub const ACCEPTED_KEY: &str = "kumiho.engine.operation.id.accepted";

/// ExecuteStatement `confOverlay` key: the handle the statement's operation must have.
pub const OPERATION_ID_KEY: &str = "kumiho.operation.id";

/// The overlay value for a handle: its guid and secret, `guid:secret`.
pub fn encode(id: &HandleId) -> String {
    format!("{}:{}", id.guid, id.secret)
}

/// A handle from its overlay value; `None` when it is not `guid:secret` of two UUIDs.
pub fn decode(value: &str) -> Option<HandleId> {
    let (guid, secret) = value.split_once(':')?;
    Some(HandleId {
        guid: Uuid::parse_str(guid).ok()?,
        secret: Uuid::parse_str(secret).ok()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_handle_survives_its_overlay_value() {
        let id = HandleId::new();
        assert_eq!(decode(&encode(&id)), Some(id));
    }

    #[test]
    fn malformed_values_are_refused() {
        let guid = Uuid::new_v4();
        for value in ["", "x", &format!("{guid}"), &format!("{guid}:"), "a:b"] {
            assert_eq!(decode(value), None, "{value:?}");
        }
    }
}
