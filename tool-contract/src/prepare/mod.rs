//! `prepare`: stages 1 to 6 of a call, from the proposal text to a call that may run.
//!
//! | stage | module | refuses with |
//! |---|---|---|
//! | 1 parse | [`crate::proposal`] | `PROPOSAL_*`, `DUPLICATE_KEY`, `NUMBER_OUT_OF_RANGE` |
//! | 2 lookup | [`crate::catalog`] | `UNKNOWN_TOOL`, `TOOL_VERSION_NOT_FOUND` |
//! | 3 validate | [`validate`] | `INPUT_VALIDATION_FAILED` (repairable), `SEMANTIC_RULE_DENIED` |
//! | 4 authorize | [`authorize`] | `UNAUTHORIZED`, the state gate's error, `DEADLINE_EXCEEDED`, `IDEMPOTENCY_KEY_*` |
//! | 5 flow | [`flow`] | `UNTRUSTED_FLOW`, `CONFIDENTIAL_EGRESS` (only with a session) |
//! | 6 approval | [`finish`] | the budget's error; a call that needs approval is held, not refused |
//!
//! Each stage takes the call the previous one returned ([`crate::call`]) and returns the next,
//! so no stage can see a call an earlier one did not pass.
//!
//! # Two ways in, one way on
//! Stages 1 to 3 have two engines. The **fast path** reads the common proposal shape into a
//! borrowed tree (`crate::proposal::fast`), then looks the tool up, applies the null/default
//! plan, checks the input schema and decodes the arguments on that tree. The **full path**
//! parses into a `serde_json::Value` and does the same steps on it. Both run the same function
//! for those steps ([`validate::admit`], generic over the representation), and each rule they
//! apply is written once (`crate::proposal::rules`, `crate::args::ArgsPlan`, the compiled
//! schema, the tool's `Deserialize`). The fast path never refuses anything: whatever it does not
//! accept it hands to the full path, which then gives the verdict and the error. From the
//! semantic rules on, every check runs once, on whichever path admitted the call, through the
//! same code ([`validate::checks`]), so a check added there applies to both.
//!
//! The fast path is tried first unless the host turned it off
//! ([`RegistryBuilder::fast_path`](crate::RegistryBuilder::fast_path)); a receipt sink does not
//! change which path runs. The two are compared on generated proposals by a differential
//! property test (same verdict, same validated arguments, byte-identical envelopes).

use std::time::Instant;

use serde_json::Value;

use crate::approval::ApprovalRequest;
use crate::call::{AuthorizedCall, CallOrigin, PreparedCall, ValidatedCall};
use crate::catalog::Catalog;
use crate::context::ToolContext;
use crate::error::ToolError;
use crate::proposal::Proposal;
use crate::receipt::ProposalRecord;
use crate::refuse::{refuse, Rejection};
use crate::repair::{RepairFeedback, RepairIssue};
use crate::services::Services;
use crate::stage::Stage;

pub(crate) mod authorize;
pub(crate) mod finish;
pub(crate) mod flow;
pub(crate) mod validate;

/// A proposal that passed every check.
// Both variants carry a whole prepared call; boxing one would only add an allocation per call.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Prepared {
    /// Ready to [`execute`](crate::Registry::execute).
    Ready(PreparedCall),
    /// Needs a human's approval first.
    NeedsApproval(ApprovalRequest),
}

/// The stages, over the registry's tools and services.
#[derive(Clone, Copy)]
pub(crate) struct Pipeline<'r> {
    pub(crate) catalog: &'r Catalog,
    pub(crate) services: &'r Services,
    pub(crate) standing: &'r crate::standing::StandingRules,
}

impl Pipeline<'_> {
    /// Stages 1 to 5 from raw proposal text.
    pub(crate) fn prepare_raw(&self, raw: &str, ctx: &ToolContext) -> Result<Prepared, Rejection> {
        let admitted = match self.try_fast(raw, ctx) {
            Some(admitted) => admitted,
            None => self.admit_raw(raw, ctx)?,
        };
        let validated = validate::checks(self.services, admitted, ctx)?;
        let authorized = authorize::authorize(self.services, validated, ctx)?;
        let traced = flow::flow(self.services, authorized, ctx)?;
        finish::finish(
            self.services,
            traced,
            ctx,
            finish::Approvers::Rules(self.standing),
        )
    }

    /// Stages 2 to 5 from a parsed proposal.
    pub(crate) fn prepare(
        &self,
        proposal: Proposal,
        ctx: &ToolContext,
    ) -> Result<Prepared, Rejection> {
        let validated = self.validate(proposal, ctx)?;
        let authorized = authorize::authorize(self.services, validated, ctx)?;
        let traced = flow::flow(self.services, authorized, ctx)?;
        finish::finish(
            self.services,
            traced,
            ctx,
            finish::Approvers::Rules(self.standing),
        )
    }

    /// Stages 2 and 3 from a parsed proposal (the full path).
    pub(crate) fn validate(
        &self,
        proposal: Proposal,
        ctx: &ToolContext,
    ) -> Result<ValidatedCall, Rejection> {
        let admitted = self.admit(proposal, ctx)?;
        validate::checks(self.services, admitted, ctx)
    }

    /// The fast path's seam: the proposal admitted exactly as the full path would admit it, or
    /// `None` to hand it to the full path (see the module docs).
    fn try_fast(&self, raw: &str, ctx: &ToolContext) -> Option<validate::Admitted> {
        if !self.services.fast_path {
            return None;
        }
        validate::admit_fast(self.catalog, self.services, raw, ctx)
    }

    /// The full path from raw text, for what the fast path handed over.
    // Out of line and marked cold: the fast path admits the common call, and this path's
    // parser, lookup errors and refusals would otherwise be inlined into every call's code,
    // pushing the hot path out of the instruction cache.
    #[cold]
    #[inline(never)]
    fn admit_raw(&self, raw: &str, ctx: &ToolContext) -> Result<validate::Admitted, Rejection> {
        match Proposal::parse(raw, &self.services.limits) {
            Ok(proposal) => self.admit(proposal, ctx),
            Err(err) => Err(self.refuse_unparsed(err)),
        }
    }

    /// The full path's stages 2 and 3 up to the semantic rules.
    fn admit(
        &self,
        proposal: Proposal,
        ctx: &ToolContext,
    ) -> Result<validate::Admitted, Rejection> {
        validate::admit_full(self.catalog, self.services, proposal, ctx)
    }

    /// A proposal that did not parse: refused at stage 1, with its error as repair feedback.
    fn refuse_unparsed(&self, err: ToolError) -> Rejection {
        let origin = CallOrigin {
            call_id: self.services.next_call_id(),
            started: Instant::now(),
            record: Some(Box::new(ProposalRecord {
                name: String::new(),
                arguments: Value::Null,
                call_id: None,
            })),
            received_at_ms: self.services.received_at_ms(),
            flow: None,
            approval: None,
        };
        let issue = RepairIssue {
            path: String::new(),
            keyword: err.code().to_owned(),
            expected: Value::String("a well-formed proposal".into()),
            actual: Value::String(err.message().to_owned()),
        };
        let feedback = RepairFeedback::new("", vec![issue]);
        refuse(
            self.services,
            err,
            None,
            "",
            origin,
            Stage::Parse,
            Some(feedback),
        )
    }
}

/// `authorize` and `finish`, as the registry exposes them one stage at a time.
impl Pipeline<'_> {
    /// Stages 4 and 5: the trusted context's checks, then flow control.
    pub(crate) fn authorize(
        &self,
        call: ValidatedCall,
        ctx: &ToolContext,
    ) -> Result<AuthorizedCall, Rejection> {
        let authorized = authorize::authorize(self.services, call, ctx)?;
        flow::flow(self.services, authorized, ctx)
    }

    pub(crate) fn finish(
        &self,
        call: AuthorizedCall,
        ctx: &ToolContext,
    ) -> Result<Prepared, Rejection> {
        finish::finish(
            self.services,
            call,
            ctx,
            finish::Approvers::Rules(self.standing),
        )
    }
}
