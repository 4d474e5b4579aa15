//! Which every-call hooks the user made into gates (`[approvals] deny_gates` in config.toml).

use crate::AgentKind;

/// Which every-call hooks the user made into gates (`[approvals] deny_gates`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Policy {
    pub gemini: bool,
    pub hermes: bool,
    pub kimi: bool,
    pub cursor: bool,
}

impl Policy {
    /// The CLIs whose gate hook fires for every call, so holding it is the user's choice.
    pub const OPT_IN: [AgentKind; 4] = [
        AgentKind::Gemini,
        AgentKind::Hermes,
        AgentKind::Kimi,
        AgentKind::Cursor,
    ];

    /// Turns `kind`'s gate on; false when `kind` has no opt-in gate.
    pub fn enable(&mut self, kind: AgentKind) -> bool {
        let switch = match kind {
            AgentKind::Gemini => &mut self.gemini,
            AgentKind::Hermes => &mut self.hermes,
            AgentKind::Kimi => &mut self.kimi,
            AgentKind::Cursor => &mut self.cursor,
            _ => return false,
        };
        *switch = true;
        true
    }
}
