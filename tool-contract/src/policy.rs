//! Stage 4: authorization and policy, from the trusted context only: capabilities, the
//! host's state gate, and the deadline and budget that must cover the tool's timeout.

use std::time::Duration;

use tokio::time::Instant;

pub use crate::budget::Budget;
use crate::budget::Reservation;
use crate::context::ToolContext;
use crate::contract::ToolContract;
use crate::error::ToolError;

/// Says whether a tool may run in the agent's current state: an action that is valid in
/// general may still not be allowed now. Closures `Fn(&ToolContract, &ToolContext) -> Result<(), ToolError>` implement it.
///
/// ```
/// use tool_contract::policy::StateGate;
/// use tool_contract::{ToolContext, ToolContract, ToolError};
///
/// // While answering, writes wait until the agent reached the "act" state.
/// let gate = |c: &ToolContract, ctx: &ToolContext| {
///     if c.effect.is_write() && ctx.agent_state() != Some("act") {
///         return Err(ToolError::policy_denied("STATE_NOT_ALLOWED", "writes are not allowed in this state"));
///     }
///     Ok(())
/// };
/// # fn takes(_: impl StateGate) {}
/// takes(gate);
/// ```
pub trait StateGate: Send + Sync + 'static {
    /// `Ok` when `contract`'s tool may run now; the error becomes the observation.
    fn check(&self, contract: &ToolContract, ctx: &ToolContext) -> Result<(), ToolError>;
}

impl<F> StateGate for F
where
    F: Fn(&ToolContract, &ToolContext) -> Result<(), ToolError> + Send + Sync + 'static,
{
    fn check(&self, contract: &ToolContract, ctx: &ToolContext) -> Result<(), ToolError> {
        self(contract, ctx)
    }
}

/// Reserves tool time for one attempt; the first attempt also counts as the call.
pub(crate) fn reserve_attempt(
    contract: &ToolContract,
    ctx: &ToolContext,
    first: bool,
) -> Result<Option<Reservation>, ToolError> {
    let Some(budget) = ctx.budget() else {
        return Ok(None);
    };
    budget
        .reserve(contract.timeout_ms, first)
        .map(Some)
        .ok_or_else(|| {
            ToolError::policy_denied(
                "BUDGET_EXHAUSTED",
                "the turn's tool budget cannot cover another attempt",
            )
            .with_detail("remaining_ms", budget.remaining_ms())
        })
}

/// Requires every capability of the contract.
pub(crate) fn check_capabilities(
    contract: &ToolContract,
    ctx: &ToolContext,
) -> Result<(), ToolError> {
    let missing: Vec<&String> = contract
        .authorization
        .capabilities
        .iter()
        .filter(|c| !ctx.has_capability(c))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(ToolError::unauthorized(
        "CAPABILITY_DENIED",
        "the caller lacks a capability this tool requires",
    )
    .with_detail(
        "missing",
        missing.iter().map(|c| c.as_str()).collect::<Vec<_>>(),
    ))
}

/// The remaining deadline must cover one full attempt.
pub(crate) fn check_deadline(contract: &ToolContract, ctx: &ToolContext) -> Result<(), ToolError> {
    let Some(deadline) = ctx.deadline() else {
        return Ok(());
    };
    // Read only when there is a deadline: a clock read costs more than most checks.
    let remaining = deadline.saturating_duration_since(Instant::now());
    if remaining < Duration::from_millis(contract.timeout_ms) {
        return Err(ToolError::policy_denied(
            "DEADLINE_TOO_SHORT",
            "the time left in this turn is shorter than the tool's timeout",
        )
        .with_detail(
            "remaining_ms",
            u64::try_from(remaining.as_millis()).unwrap_or(u64::MAX),
        )
        .with_detail("timeout_ms", contract.timeout_ms));
    }
    Ok(())
}

/// Reserves one call and one timeout's worth of tool time, if the context carries a budget.
pub(crate) fn reserve(
    contract: &ToolContract,
    ctx: &ToolContext,
) -> Result<Option<Reservation>, ToolError> {
    let Some(budget) = ctx.budget() else {
        return Ok(None);
    };
    budget
        .reserve(contract.timeout_ms, true)
        .map(Some)
        .ok_or_else(|| {
            ToolError::policy_denied(
                "BUDGET_EXHAUSTED",
                "the turn's tool budget cannot cover this call",
            )
            .with_detail("remaining_calls", budget.remaining_calls())
            .with_detail("remaining_ms", budget.remaining_ms())
            .with_detail("timeout_ms", contract.timeout_ms)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget_reserves_and_refunds() {
        let b = Budget::new(2, 1000);
        let r = b.reserve(600, true).unwrap();
        assert!(b.reserve(600, true).is_none(), "time overspent");
        assert_eq!(
            b.remaining_calls(),
            1,
            "a failed reservation must not consume a call"
        );
        r.settle(Duration::from_millis(100));
        assert_eq!(b.remaining_ms(), 900);
        let _r2 = b.reserve(600, true).unwrap();
        assert!(b.reserve(1, true).is_none(), "calls overspent");
    }
}
