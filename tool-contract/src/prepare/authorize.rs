//! Stage 4, authorize: the trusted context decides, never the model's arguments. Capabilities,
//! the host's state gate, the deadline, then the idempotency key (from the arguments, a hash of
//! named fields, or the host).

use serde_json::Value;

use crate::call::{AuthorizedCall, ValidatedCall};
use crate::context::ToolContext;
use crate::contract::IdempotencySource;
use crate::error::{ErrorCategory, ToolError};
use crate::policy;
use crate::refuse::{refuse, Rejection};
use crate::repair::{RepairFeedback, RepairIssue};
use crate::services::Services;
use crate::stage::Stage;

pub(crate) fn authorize(
    services: &Services,
    call: ValidatedCall,
    ctx: &ToolContext,
) -> Result<AuthorizedCall, Rejection> {
    let contract = call.entry.contract;
    let authorized = policy::check_capabilities(contract, ctx)
        .and_then(|()| {
            services
                .gate
                .as_ref()
                .map_or(Ok(()), |g| g.check(contract, ctx))
        })
        .and_then(|()| policy::check_deadline(contract, ctx));
    if let Err(err) = authorized {
        return Err(refuse(
            services,
            err,
            Some(&call.entry),
            "",
            call.origin,
            Stage::Authorize,
            None,
        ));
    }
    // Only keys taken from the arguments need them as a `Value` (built now on the fast path);
    // the others never look.
    let from_args = matches!(
        contract.idempotency.source,
        IdempotencySource::Field { .. } | IdempotencySource::Derived { .. }
    );
    let no_args = Value::Null;
    let key_args = if from_args {
        call.args.get(&call.entry.plan)
    } else {
        &no_args
    };
    match crate::idempotency::resolve_key(contract, key_args, ctx) {
        Ok(key) => Ok(AuthorizedCall {
            validated: call,
            key,
            flow: None,
        }),
        Err(err) => Err(refuse_key(services, err, call)),
    }
}

/// A call whose idempotency key could not be resolved; a key field the model left out or
/// got wrong comes back as repair feedback.
// Cold: see `crate::refuse::refuse`.
#[cold]
#[inline(never)]
fn refuse_key(services: &Services, err: ToolError, call: ValidatedCall) -> Rejection {
    let feedback = (err.category() == ErrorCategory::InvalidInput).then(|| {
        let field = err
            .safe_details()
            .get("field")
            .and_then(Value::as_str)
            .unwrap_or("");
        RepairFeedback::new(
            &call.entry.contract.name,
            vec![RepairIssue {
                path: format!("/{field}"),
                keyword: err.code().to_owned(),
                expected: Value::String(err.message().to_owned()),
                actual: Value::Null,
            }],
        )
    });
    refuse(
        services,
        err,
        Some(&call.entry),
        "",
        call.origin,
        Stage::Authorize,
        feedback,
    )
}
