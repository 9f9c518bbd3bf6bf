//! Which protocol era a request speaks, for what differs between them beyond rmcp's shaping of
//! results.
//!
//! On 2026-07-28 there is no handshake: each request carries its protocol version and the client's
//! capabilities in `_meta`, the server may not send requests to the client (approvals are asked in
//! `input_required` results instead of `elicitation/create`), and `notifications/message` may only
//! accompany a request that asked for it. Handshake-era connections (up to 2025-11-25) keep what
//! they negotiated at `initialize`.

use rmcp::model::ProtocolVersion;
use rmcp::service::RequestContext;
use rmcp::{Peer, RoleServer};

/// Whether `context`'s request speaks protocol 2026-07-28 or later.
pub fn is_modern(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|version| version >= ProtocolVersion::V_2026_07_28)
}

/// Whether the connection to `peer` opened with the `initialize` handshake (only such a
/// connection may hear log notifications outside a request).
pub fn is_handshake(peer: &Peer<RoleServer>) -> bool {
    peer.peer_info()
        .is_some_and(|info| info.protocol_version < ProtocolVersion::V_2026_07_28)
}
