//! The pipeline's stages, numbered once, here. Rejections, receipts, tracing spans and the
//! documentation all name stages through [`Stage`] and the finer checks through
//! gates (an internal refinement of a stage).

use std::fmt;

use serde::{Deserialize, Serialize};

/// The stages a proposal passes, in call order. A refused call names the stage that refused
/// it; a call that ran names how it ended ([`Stage::Done`], [`Stage::Replayed`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Stage {
    /// 1. The proposal text is parsed under the limits and the number policy.
    Parse,
    /// 2. The tool is found by name, at the version the context pins or the newest.
    Lookup,
    /// 3. The arguments: nulls dropped, defaults filled, the input schema, decoding, the
    ///    semantic rules.
    Validate,
    /// 4. The trusted context: capabilities, the state gate, the deadline, the idempotency
    ///    key.
    Authorize,
    /// 5. Flow control: where each argument's value came from, against its field's policy
    ///    (only with a session; see [`crate::flow`]).
    Flow,
    /// 6. A human's approval, for the calls that need one.
    Approval,
    /// 7. The idempotency store: a replay, a conflict or a call still running ends the call
    ///    here.
    Idempotency,
    /// 8. The handler: per-attempt timeouts, retries, panic isolation.
    Execute,
    /// 9. The output contract: an output that breaks its schema is withheld.
    Output,
    /// The call passed every stage and its output reached the envelope.
    Done,
    /// The idempotency stage answered with a stored result; nothing ran.
    Replayed,
}

impl Stage {
    /// The stages in call order (without the two endings).
    pub const ALL: &'static [Stage] = &[
        Stage::Parse,
        Stage::Lookup,
        Stage::Validate,
        Stage::Authorize,
        Stage::Flow,
        Stage::Approval,
        Stage::Idempotency,
        Stage::Execute,
        Stage::Output,
    ];

    /// The stage's name as receipts and spans write it (`parse`, `lookup`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Parse => "parse",
            Stage::Lookup => "lookup",
            Stage::Validate => "validate",
            Stage::Authorize => "authorize",
            Stage::Flow => "flow",
            Stage::Approval => "approval",
            Stage::Idempotency => "idempotency",
            Stage::Execute => "execute",
            Stage::Output => "output",
            Stage::Done => "done",
            Stage::Replayed => "replayed",
        }
    }

    /// The stage's number in call order (1 to 9); the two endings have none.
    pub fn number(self) -> Option<u8> {
        Stage::ALL
            .iter()
            .position(|s| *s == self)
            .and_then(|i| u8::try_from(i + 1).ok())
    }
}

impl PartialEq<str> for Stage {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Stage {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One check a prepared call passed, as its receipt lists them (`gates`), in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Gate {
    Lookup,
    Schema,
    Semantic,
    Capabilities,
    State,
    Deadline,
    Idempotency,
    Flow,
    Approval,
    Budget,
}

impl Gate {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Gate::Lookup => "lookup",
            Gate::Schema => "schema",
            Gate::Semantic => "semantic",
            Gate::Capabilities => "capabilities",
            Gate::State => "state",
            Gate::Deadline => "deadline",
            Gate::Idempotency => "idempotency",
            Gate::Flow => "flow",
            Gate::Approval => "approval",
            Gate::Budget => "budget",
        }
    }

    /// The gates of a call that needs no approval, in order.
    pub(crate) const PREPARED: &'static [Gate] = &[
        Gate::Lookup,
        Gate::Schema,
        Gate::Semantic,
        Gate::Capabilities,
        Gate::State,
        Gate::Deadline,
        Gate::Idempotency,
        Gate::Budget,
    ];

    /// The same, for a call whose arguments flow control traced.
    pub(crate) const PREPARED_TRACED: &'static [Gate] = &[
        Gate::Lookup,
        Gate::Schema,
        Gate::Semantic,
        Gate::Capabilities,
        Gate::State,
        Gate::Deadline,
        Gate::Idempotency,
        Gate::Flow,
        Gate::Budget,
    ];

    /// The gates of a call released by a valid approval grant, in order.
    pub(crate) const APPROVED: &'static [Gate] = &[
        Gate::Lookup,
        Gate::Schema,
        Gate::Semantic,
        Gate::Capabilities,
        Gate::State,
        Gate::Deadline,
        Gate::Idempotency,
        Gate::Approval,
        Gate::Budget,
    ];

    /// The same, for a call whose arguments flow control traced.
    pub(crate) const APPROVED_TRACED: &'static [Gate] = &[
        Gate::Lookup,
        Gate::Schema,
        Gate::Semantic,
        Gate::Capabilities,
        Gate::State,
        Gate::Deadline,
        Gate::Idempotency,
        Gate::Flow,
        Gate::Approval,
        Gate::Budget,
    ];
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_numbers() {
        assert_eq!(Stage::Parse.number(), Some(1));
        assert_eq!(Stage::Output.number(), Some(9));
        assert_eq!(Stage::Done.number(), None);
        for s in Stage::ALL.iter().chain(&[Stage::Done, Stage::Replayed]) {
            assert_eq!(serde_json::to_value(s).unwrap(), s.as_str());
        }
    }
}
