//! Stage 3, validate (with stage 2's lookup before it): the null/default plan, the input schema
//! with every error reported, decoding into the tool's argument type, then the tool's semantic
//! rules. The result has passed every check that looks only at the arguments.

use std::sync::Arc;
use std::time::Instant;

use bumpalo::Bump;
use serde_json::Value;

use crate::args::Arguments;
use crate::call::{CallOrigin, ValidatedCall};
use crate::catalog::Catalog;
use crate::context::ToolContext;
use crate::entry::{Decoded, Entry};
use crate::error::ToolError;
use crate::json::Tree;
use crate::proposal::Proposal;
use crate::receipt::ProposalRecord;
use crate::refuse::{refuse, refuse_repairable, Rejection};
use crate::repair::{self, RepairFeedback, RepairIssue};
use crate::services::Services;
use crate::stage::Stage;

/// A proposal admitted by stages 1 to 3 up to the semantic rules: parsed, its tool found, its
/// arguments planned, schema-valid and decoded.
pub(crate) struct Admitted {
    entry: Arc<Entry>,
    args: Arguments,
    decoded: Decoded,
    origin: CallOrigin,
}

/// Why arguments were not admitted.
enum NotAdmitted {
    /// The input schema refused them.
    Schema,
    /// They did not decode into the tool's argument type (the message says why).
    Decode(String),
    /// Host code (a `Deserialize` impl) panicked.
    Hook(ToolError),
}

/// The arguments in either representation a parser produces.
trait Representation<'a> {
    /// Applies the entry's null/default plan.
    fn apply_plan(&mut self, entry: &'a Entry, bump: &'a Bump);
    /// The entry's input schema's verdict.
    fn schema_valid(&self, entry: &Entry) -> bool;
    /// Decodes into the tool's argument type.
    fn decode(&self, entry: &Entry) -> Result<Decoded, NotAdmitted>;
}

impl<'a> Representation<'a> for Value {
    fn apply_plan(&mut self, entry: &'a Entry, _bump: &'a Bump) {
        entry.plan.apply(self);
    }
    fn schema_valid(&self, entry: &Entry) -> bool {
        entry.input.is_valid(self)
    }
    fn decode(&self, entry: &Entry) -> Result<Decoded, NotAdmitted> {
        match crate::entry::decode_value(&*entry.runner, self) {
            Ok(Ok(decoded)) => Ok(decoded),
            Ok(Err(msg)) => Err(NotAdmitted::Decode(msg)),
            Err(err) => Err(NotAdmitted::Hook(err)),
        }
    }
}

impl<'a> Representation<'a> for Tree<'a> {
    fn apply_plan(&mut self, entry: &'a Entry, bump: &'a Bump) {
        entry.plan.apply_tree(self, bump);
    }
    fn schema_valid(&self, entry: &Entry) -> bool {
        entry.input_tree.is_valid(self)
    }
    fn decode(&self, entry: &Entry) -> Result<Decoded, NotAdmitted> {
        // A failure leaves the call to the full path, which words every refusal.
        match entry.runner.decode(self) {
            Ok(Ok(decoded)) => Ok(decoded),
            Ok(Err(_)) | Err(_) => Err(NotAdmitted::Decode(String::new())),
        }
    }
}

/// The steps both paths share after lookup, in order: the plan, the input schema, decoding.
fn admit<'a, R: Representation<'a>>(
    entry: &'a Entry,
    args: &mut R,
    bump: &'a Bump,
) -> Result<Decoded, NotAdmitted> {
    args.apply_plan(entry, bump);
    if !args.schema_valid(entry) {
        return Err(NotAdmitted::Schema);
    }
    args.decode(entry)
}

/// The fast path: `None` leaves the proposal to the full path, which then decides everything,
/// including every error; nothing here has a side effect before it is sure (the call id is
/// taken only once the call is admitted).
pub(crate) fn admit_fast(
    catalog: &Catalog,
    services: &Services,
    raw: &str,
    ctx: &ToolContext,
) -> Option<Admitted> {
    let started = Instant::now();
    // The proposal's tree lives in the thread's arena until its arguments are decoded.
    let (entry, decoded, call_id, record) = crate::json::with_arena(|bump| {
        let read = crate::proposal::fast::read(raw, bump, &services.limits)?;
        let entry = Arc::clone(catalog.lookup(read.name, ctx).ok()?);
        let record = services.keeps_receipts().then(|| {
            Box::new(ProposalRecord {
                name: read.name.to_owned(),
                arguments: read.arguments.to_value(),
                call_id: read.call_id.map(str::to_owned),
            })
        });
        let mut args = read.arguments;
        let decoded = admit(&entry, &mut args, bump).ok()?;
        Some((entry, decoded, read.call_id.map(str::to_owned), record))
    })?;
    let origin = CallOrigin {
        call_id: call_id.unwrap_or_else(|| services.next_call_id()),
        started,
        record,
        received_at_ms: services.received_at_ms(),
        flow: None,
        approval: None,
    };
    Some(Admitted {
        entry,
        args: Arguments::deferred(raw, services.limits),
        decoded,
        origin,
    })
}

/// The full path: lookup, then [`admit`] on the `Value`, with every refusal worded for the
/// model.
pub(crate) fn admit_full(
    catalog: &Catalog,
    services: &Services,
    mut proposal: Proposal,
    ctx: &ToolContext,
) -> Result<Admitted, Rejection> {
    let started = Instant::now();
    let record = services.keeps_receipts().then(|| {
        Box::new(ProposalRecord {
            name: proposal.name.clone(),
            arguments: proposal.arguments.clone(),
            call_id: proposal.call_id.clone(),
        })
    });
    let call_id = proposal
        .call_id
        .take()
        .unwrap_or_else(|| services.next_call_id());
    let origin = CallOrigin {
        call_id,
        started,
        record,
        received_at_ms: services.received_at_ms(),
        flow: None,
        approval: None,
    };
    let entry = match catalog.lookup(&proposal.name, ctx) {
        Ok(e) => Arc::clone(e),
        Err(err) => {
            let feedback = (err.code() == "UNKNOWN_TOOL").then(|| {
                RepairFeedback::new(
                    &proposal.name,
                    vec![RepairIssue {
                        path: String::new(),
                        keyword: "UNKNOWN_TOOL".into(),
                        expected: err
                            .safe_details()
                            .get("available")
                            .cloned()
                            .unwrap_or(Value::Null),
                        actual: Value::String(proposal.name.chars().take(64).collect()),
                    }],
                )
            });
            return Err(refuse(
                services,
                err,
                None,
                &proposal.name,
                origin,
                Stage::Lookup,
                feedback,
            ));
        }
    };
    admit_value(services, entry, proposal.arguments, origin)
}

/// The full path after lookup, for `entry`: also how an approver's edited arguments are
/// admitted, at the version the model's call was prepared for.
pub(crate) fn admit_value(
    services: &Services,
    entry: Arc<Entry>,
    mut args: Value,
    origin: CallOrigin,
) -> Result<Admitted, Rejection> {
    // The full path's plan needs no arena; an empty one costs nothing until used.
    let decoded = match admit(&entry, &mut args, &Bump::new()) {
        Ok(decoded) => decoded,
        Err(NotAdmitted::Schema) => {
            // Capped: feedback goes back into the model's context, and an array of 60 000
            // wrong items must not become 60 000 issues.
            let issues: Vec<RepairIssue> = entry
                .input
                .iter_errors(&args)
                .take(repair::MAX_ISSUES)
                .map(|e| repair::issue_from_error(&e, &args))
                .collect();
            return Err(refuse_repairable(services, issues, &entry, origin));
        }
        Err(NotAdmitted::Decode(msg)) => {
            let issues = vec![RepairIssue {
                path: String::new(),
                keyword: "deserialize".into(),
                expected: Value::String("arguments matching the input schema".into()),
                actual: Value::String(msg.chars().take(200).collect()),
            }];
            return Err(refuse_repairable(services, issues, &entry, origin));
        }
        Err(NotAdmitted::Hook(err)) => {
            return Err(refuse(
                services,
                err,
                Some(&entry),
                "",
                origin,
                Stage::Validate,
                None,
            ))
        }
    };
    Ok(Admitted {
        entry,
        args: Arguments::ready(args),
        decoded,
        origin,
    })
}

/// Every check after admission, on either path: the semantic rules.
pub(crate) fn checks(
    services: &Services,
    admitted: Admitted,
    ctx: &ToolContext,
) -> Result<ValidatedCall, Rejection> {
    let Admitted {
        entry,
        args,
        decoded,
        origin,
    } = admitted;
    let semantic = match entry.runner.semantic(&decoded, ctx) {
        Ok(issues) => issues,
        Err(err) => {
            return Err(refuse(
                services,
                err,
                Some(&entry),
                "",
                origin,
                Stage::Validate,
                None,
            ))
        }
    };
    if !semantic.is_empty() {
        return Err(refuse_semantic(services, &semantic, &entry, &args, origin));
    }
    Ok(ValidatedCall {
        entry,
        args,
        decoded,
        origin,
    })
}

/// A call its semantic rules refused: repair feedback when every issue is repairable, else a
/// policy denial.
// Cold: see `crate::refuse::refuse`.
#[cold]
#[inline(never)]
fn refuse_semantic(
    services: &Services,
    semantic: &[crate::error::ValidationIssue],
    entry: &Arc<Entry>,
    args: &Arguments,
    origin: CallOrigin,
) -> Rejection {
    let issues: Vec<RepairIssue> = semantic
        .iter()
        .map(|i| repair::issue_from_semantic(i, args.get(&entry.plan)))
        .collect();
    if semantic.iter().all(|i| i.repairable) {
        return refuse_repairable(services, issues, entry, origin);
    }
    // A rule no regeneration can satisfy is a policy decision, not a repair prompt.
    let err = ToolError::policy_denied("SEMANTIC_RULE_DENIED", "a business rule forbids this call")
        .with_detail(
            "issues",
            serde_json::to_value(&issues).unwrap_or(Value::Null),
        );
    refuse(
        services,
        err,
        Some(entry),
        "",
        origin,
        Stage::Validate,
        None,
    )
}
