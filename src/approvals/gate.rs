//! Which hook calls are permission gates calyx answers, and in which response schema: per-CLI
//! knowledge, kept in `calyx_integrations::gate` (the reasons, per CLI, are documented there)
//! and named here so the approvals code reads `approvals::gate::*`.

pub use calyx_integrations::gate::{
    gate, gemini_asks, hermes_acts, kimi_acts, may_gate, schema_of, Policy, Schema, HERMES_EXPIRY,
};
