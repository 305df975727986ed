//! Approval requests: what a human is asked to approve, bound to a digest of exactly what will
//! run. Grants that release a request build on this (see the exactly-once work).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::effect::Effect;
use crate::execute::PreparedCall;
use crate::schema::sha256_canonical;

/// What will run if a human approves: tool, version, canonical arguments (defaults applied),
/// effect, principal and tenant, plus the digest of all of it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ApprovalSubject {
    /// Tool name.
    pub tool: String,
    /// Tool version.
    pub tool_version: String,
    /// Effect class.
    pub effect: Effect,
    /// Validated arguments with defaults applied.
    pub arguments: Value,
    /// Who asked.
    pub principal: Option<String>,
    /// For which tenant.
    pub tenant: Option<String>,
    /// The call id.
    pub call_id: String,
}

impl ApprovalSubject {
    /// `sha256:` of the canonical subject: a grant approves this digest and nothing else.
    pub fn digest(&self) -> String {
        sha256_canonical(self)
    }
}

/// A call that passed every check but needs a human's approval before it runs.
#[derive(Debug)]
pub struct ApprovalRequest {
    subject: ApprovalSubject,
    digest: String,
    // Held, not exposed: only an approval releases it.
    pub(crate) call: PreparedCall,
}

impl ApprovalRequest {
    pub(crate) fn new(subject: ApprovalSubject, call: PreparedCall) -> Self {
        let digest = subject.digest();
        ApprovalRequest {
            subject,
            digest,
            call,
        }
    }

    /// What the approver is shown.
    pub fn subject(&self) -> &ApprovalSubject {
        &self.subject
    }

    /// The digest an approval must name.
    pub fn digest(&self) -> &str {
        &self.digest
    }
}
