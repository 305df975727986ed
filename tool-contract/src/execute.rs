//! Stages 6 and 7, execute: the idempotency claim, then the handler under a per-attempt
//! timeout, with retries of retryable errors only (exponential backoff with jitter,
//! `retry_after_ms` honoured, within the attempt budget and the deadline) and panic isolation;
//! then the output contract (stage 8, [`crate::output`]) before anything reaches the model, the
//! envelope and the receipt.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::time::{Duration, Instant};

use futures_util::FutureExt;
use serde_json::Value;
use tracing::Instrument;

use crate::call::PreparedCall;
use crate::clock::{micros, millis};
use crate::entry::{Decoded, Entry};
use crate::envelope::{Meta, Observation, Provenance};
use crate::error::{ErrorCategory, ToolError};
use crate::idempotency::{ClaimState, Disposition, Early, Held};
use crate::output::CheckedOutput;
use crate::policy;
use crate::receipt::{AttemptRecord, ExecutionRecord, OutcomeRecord, ProposalRecord, Receipt};
use crate::services::Services;
use crate::stage::Stage;

/// Categories never retried, whatever a handler says: repeating them cannot change the answer,
/// and only adds cost and attack surface.
fn never_retried(c: ErrorCategory) -> bool {
    matches!(
        c,
        ErrorCategory::InvalidInput
            | ErrorCategory::Unauthorized
            | ErrorCategory::NotFound
            | ErrorCategory::PolicyDenied
    )
}

/// The wait before the next attempt: the policy's ceiling with "equal jitter" (half fixed, half
/// random), or the error's `retry_after_ms` when that is longer.
fn backoff(
    retry: &crate::contract::RetryPolicy,
    attempt: u32,
    retry_after_ms: Option<u64>,
) -> Duration {
    let ceiling = retry.backoff_ceiling_ms(attempt);
    let jittered = ceiling / 2 + fastrand::u64(0..=ceiling - ceiling / 2);
    Duration::from_millis(jittered.max(retry_after_ms.unwrap_or(0)))
}

/// Not an `async fn`, and the call is lent to `run_inner` rather than moved into it: an
/// `async fn` holds a by-value argument twice (captured, and again as its body's local), and
/// every byte of the call's future is copied each time the future is moved. The block below
/// owns the call once and lends it in place.
pub(crate) fn run(
    services: &Services,
    mut call: PreparedCall,
) -> impl Future<Output = Observation> + '_ {
    let c = call.entry.contract;
    let span = tracing::info_span!(
        "execute_tool",
        "gen_ai.operation.name" = "execute_tool",
        "gen_ai.tool.name" = %c.name,
        "gen_ai.tool.call.id" = %call.call_id,
        "gen_ai.tool.type" = "function",
        "tool.version" = %c.version,
        "tool.effect" = c.effect.as_str(),
        "tool.flow" = call.flow_verdict,
        "tool.approval" = call.approval.as_ref().map(|a| a.decision.as_str()),
        "tool.approval.id" = call.approval.as_ref().and_then(|a| a.approval_id()),
        "tool.approval.approver" = call.approval.as_ref().and_then(|a| a.approver.as_deref()),
        "tool.attempts" = tracing::field::Empty,
        "tool.outcome" = tracing::field::Empty,
        "error.type" = tracing::field::Empty,
    );
    let outer = span.clone();
    async move { run_inner(services, &mut call, &span).await }.instrument(outer)
}

// `run_inner` keeps only what a call that succeeds on its first attempt executes; every other
// branch (a replay or refusal by the idempotency store, a standing rule, a handler's error, a
// retry, a panic, a timeout, a withheld output) calls out to a function marked cold, and the
// rarely taken awaits are boxed as trait objects so their state machines are not inlined
// either. With whole-program optimisation everything else would be inlined here, and the
// code a plain call runs would no longer fit the instruction cache beside the handler's
// (BENCHMARKS.md, the per-call pipeline).
async fn run_inner(
    services: &Services,
    call: &mut PreparedCall,
    span: &tracing::Span,
) -> Observation {
    // Borrowed, not cloned: the entry's count is shared by every task calling the tool, and
    // each bump moves its cache line between cores.
    let entry: &Entry = &call.entry;
    let c = entry.contract;
    let timeout = Duration::from_millis(c.timeout_ms);
    let keep_records = services.keeps_receipts();
    // Clock reads cost more than most checks here: the receipt's timings are taken only for a
    // sink.
    let exec_started = keep_records.then(Instant::now);
    let mut attempts: Vec<AttemptRecord> = Vec::new();
    let mut diagnostics = Vec::new();
    // The cold awaits (idempotency store, timer, backoff) are boxed: inline, their states
    // made every call's future several KiB, and a future is copied each time it is moved
    // (into the runtime, into `instrument`); a key-less call must not pay for the store.
    let begun = match std::mem::take(&mut call.claim) {
        ClaimState::Claimed(held) => Ok(*held),
        ClaimState::Early(early) => Err(*early),
        ClaimState::Pending if call.ctx.idempotency_key().is_some() => {
            let args = call.args.get(&entry.plan);
            crate::idempotency::begin(services, c, &call.ctx, args)
                .boxed()
                .await
        }
        ClaimState::Pending => Ok(None),
    };
    let mut held = match begun {
        Ok(held) => held,
        Err(early) => return end_early(services, call, early, span, exec_started),
    };
    if let Some(standing) = call.standing.take() {
        let consumed = consume_standing(
            services,
            &standing,
            &call.ctx,
            &mut call.approval,
            &mut held,
        )
        .boxed()
        .await;
        if let Err(err) = consumed {
            return refuse_unapproved(services, call, err, span, exec_started);
        }
    }
    let mut reservation = call.reservation.take();
    let mut attempt = 0u32;
    let mut stage = Stage::Execute;
    let mut last_err: Option<ToolError> = None;

    // Whether any attempt reached the handler, and whether any attempt ended in a way that may
    // have had its effect: a later attempt's error must not release a key an earlier one
    // may have used.
    let mut handler_ran = false;
    let mut ambiguous = false;
    let result: Result<CheckedOutput, ToolError> = loop {
        attempt += 1;
        // A call prepared in time may be executed late: nothing starts after the deadline.
        if call
            .ctx
            .deadline()
            .is_some_and(|d| d <= tokio::time::Instant::now())
        {
            attempt -= 1;
            break Err(deadline_passed(last_err.take()));
        }
        if attempt > 1 || reservation.is_none() && call.ctx.budget().is_some() {
            match policy::reserve_attempt(c, &call.ctx, attempt == 1) {
                Ok(r) => reservation = r,
                Err(err) => {
                    attempt -= 1;
                    break Err(budget_spent(
                        err,
                        last_err.take(),
                        attempt,
                        &mut diagnostics,
                    ));
                }
            }
        }
        call.ctx.set_attempt(attempt);
        let per_attempt = match call.ctx.deadline() {
            Some(d) => timeout.min(d.saturating_duration_since(tokio::time::Instant::now())),
            None => timeout,
        };
        let decoded = match call.decoded.take() {
            Some(d) => Ok(d),
            None => redecode(entry, &call.args),
        };
        // Attempt time is wanted for a budget's settlement and for receipts only.
        let t0 = (keep_records || reservation.is_some()).then(tokio::time::Instant::now);
        let ran_now = decoded.is_ok();
        handler_ran |= ran_now;
        let outcome = match decoded {
            Err(e) => Err(e),
            Ok(args) => {
                fail::fail_point!("tc::before_effect");
                let mut fut = std::pin::pin!(AssertUnwindSafe(entry.runner.run(
                    args,
                    &call.ctx,
                    &entry.output
                ))
                .catch_unwind());
                // A handler that finishes on its first poll never needs the timer; arming one
                // costs a shared-driver round trip per call.
                let first =
                    std::future::poll_fn(|cx| std::task::Poll::Ready(fut.as_mut().poll(cx))).await;
                let timed = match first {
                    std::task::Poll::Ready(done) => Ok(done),
                    std::task::Poll::Pending => {
                        tokio::time::timeout(per_attempt, fut).boxed().await
                    }
                };
                match timed {
                    Ok(Ok(result)) => result,
                    // The panic payload may hold anything the handler had; it never leaks.
                    Ok(Err(_panic)) => Err(panicked(attempt, &mut diagnostics)),
                    Err(_elapsed) => Err(timed_out(per_attempt)),
                }
            }
        };
        let used = t0.map_or(Duration::ZERO, |t0| t0.elapsed());
        if let Some(r) = reservation.take() {
            r.settle(used);
        }
        if keep_records {
            let code = match &outcome {
                Ok(_) => "ok".to_owned(),
                Err(e) => e.code().to_owned(),
            };
            attempts.push(AttemptRecord {
                attempt,
                latency_ms: millis(used),
                outcome: code,
            });
        }
        let err = match outcome {
            Ok(value) => break Ok(value),
            Err(err) => err,
        };
        ambiguous |=
            ran_now && crate::idempotency::disposition(Some(&err), true) == Disposition::Hold;
        match after_error(c, &call.ctx, attempt, err, &mut diagnostics) {
            Next::Stop(err) => break Err(err),
            Next::RetryAfter(delay, err) => {
                last_err = Some(err);
                tokio::time::sleep(delay).boxed().await;
            }
        }
    };

    // The output contract was checked where the output was serialized (`check_output`).
    let (result, provenance) = match result {
        Ok(CheckedOutput::Valid(raw, provenance)) => (Ok((raw, None)), provenance),
        Ok(CheckedOutput::Viewed {
            view,
            full,
            provenance,
        }) => (Ok((view, Some(full))), provenance),
        Ok(CheckedOutput::Invalid(violations)) => {
            stage = Stage::Output;
            let err = output_invalid(violations, &mut diagnostics);
            (Err(err), entry.output.provenance(None))
        }
        Ok(CheckedOutput::TooLarge(cap)) => {
            stage = Stage::Output;
            let err = output_too_large(cap, &mut diagnostics);
            (Err(err), entry.output.provenance(None))
        }
        Err(e) => (
            Err(handler_error(e, entry, &call.args)),
            entry.output.provenance(None),
        ),
    };
    let meta = Meta::of(
        c,
        std::mem::take(&mut call.call_id),
        millis(call.started.elapsed()),
        attempt,
    );
    span.record("tool.attempts", attempt);
    let observation = match result {
        Ok((data, None)) => {
            span.record("tool.outcome", "ok");
            Observation::success_raw(data, meta, provenance)
        }
        Ok((view, Some(full))) => {
            span.record("tool.outcome", "ok");
            Observation::success_viewed(view, full, meta, provenance)
        }
        Err(err) => failed(span, err, meta, provenance),
    };
    fail::fail_point!("tc::after_effect");
    if let Some(held) = held {
        let mut disposition =
            crate::idempotency::disposition(observation.error.as_ref(), handler_ran);
        if ambiguous && disposition == Disposition::Release {
            disposition = Disposition::Hold;
        }
        crate::idempotency::end(services, held, disposition, &observation, &mut diagnostics)
            .boxed()
            .await;
    }
    remember(call, &observation);
    let stage = if observation.ok { Stage::Done } else { stage };
    record(
        services,
        call,
        &observation,
        stage,
        attempts,
        diagnostics,
        exec_started,
    );
    observation
}

/// A call the idempotency store answered before its handler: a replay of the stored
/// envelope, or a refusal (a key in use, a conflicting payload, the store unavailable).
#[cold]
#[inline(never)]
fn end_early(
    services: &Services,
    call: &mut PreparedCall,
    early: Early,
    span: &tracing::Span,
    exec_started: Option<Instant>,
) -> Observation {
    let entry: &Entry = &call.entry;
    let meta = Meta::of(
        entry.contract,
        std::mem::take(&mut call.call_id),
        millis(call.started.elapsed()),
        0,
    );
    let (observation, stage) = early.into_observation(meta, entry.output.provenance(None));
    span.record("tool.attempts", 0);
    span.record("tool.outcome", stage.as_str());
    if let Some(code) = observation.code() {
        span.record("error.type", code);
    }
    let diagnostics = vec![format!("idempotency: {stage}; the handler did not run")];
    remember(call, &observation);
    record(
        services,
        call,
        &observation,
        stage,
        Vec::new(),
        diagnostics,
        exec_started,
    );
    observation
}

/// Counts a use of the call's standing rule. A standing rule's use is counted only by a call
/// that will run: after its key is claimed (a replay used nothing), and not after the
/// deadline (the attempt loop refuses that call before any attempt). On a refusal the key's
/// claim is released: nothing ran.
async fn consume_standing(
    services: &Services,
    standing: &crate::standing::StandingUse,
    ctx: &crate::context::ToolContext,
    approval: &mut Option<Box<crate::receipt::ApprovalRecord>>,
    held: &mut Option<Held>,
) -> Result<(), ToolError> {
    let now = services.clock.now_ms();
    if ctx
        .deadline()
        .is_some_and(|d| d <= tokio::time::Instant::now())
    {
        return Ok(());
    }
    match standing.consume(ctx.deadline(), now).await {
        Ok(n) => {
            if let Some(record) = approval.as_mut() {
                record.rule_use = Some(n);
            }
            Ok(())
        }
        Err(err) => {
            if let Some(held) = held.take() {
                crate::idempotency::release(services, ctx, held).await;
            }
            Err(err)
        }
    }
}

/// What ends a call whose deadline passed before an attempt: the last attempt's error if
/// there was one, else the deadline's.
#[cold]
#[inline(never)]
fn deadline_passed(last_err: Option<ToolError>) -> ToolError {
    last_err.unwrap_or_else(|| {
        ToolError::policy_denied(
            "DEADLINE_EXCEEDED",
            "the turn's deadline passed before the tool could run",
        )
    })
}

/// What ends a call whose budget refused an attempt: on a retry the handler's own error is
/// the news, and the budget is why it stops.
#[cold]
#[inline(never)]
fn budget_spent(
    err: ToolError,
    last_err: Option<ToolError>,
    attempt: u32,
    diagnostics: &mut Vec<String>,
) -> ToolError {
    match last_err {
        Some(last) => {
            diagnostics.push(format!(
                "attempt {}: no retry, the budget is spent",
                attempt + 1
            ));
            last
        }
        None => err,
    }
}

/// Decodes the validated arguments again: for a retry, or a call released by an approval.
#[cold]
#[inline(never)]
fn redecode(entry: &Entry, args: &crate::args::Arguments) -> Result<Decoded, ToolError> {
    crate::entry::decode_value(&*entry.runner, args.get(&entry.plan)).and_then(|d| {
        d.map_err(|_| {
            ToolError::internal(
                "ARGUMENTS_REDECODE_FAILED",
                "validated arguments could not be decoded again",
            )
        })
    })
}

/// The error for a handler that panicked; the payload is dropped unread.
#[cold]
#[inline(never)]
fn panicked(attempt: u32, diagnostics: &mut Vec<String>) -> ToolError {
    diagnostics.push(format!("attempt {attempt}: the handler panicked"));
    ToolError::internal("HANDLER_PANICKED", "the tool failed unexpectedly")
}

/// The error for an attempt that outran its timeout (the tool's, or what was left of the
/// deadline).
#[cold]
#[inline(never)]
fn timed_out(per_attempt: Duration) -> ToolError {
    ToolError::transient("TOOL_TIMEOUT", "the tool did not answer in time")
        .with_detail("timeout_ms", millis(per_attempt))
}

/// After a failed attempt: stop with the error, or retry after a delay.
enum Next {
    Stop(ToolError),
    RetryAfter(Duration, ToolError),
}

/// Logs a failed attempt's operator report, and decides whether it is retried: only a
/// retryable error of a category that may be retried, within the attempt budget, with a wait
/// the tool's retry policy allows that ends before the deadline.
#[cold]
#[inline(never)]
fn after_error(
    c: &crate::contract::ToolContract,
    ctx: &crate::context::ToolContext,
    attempt: u32,
    err: ToolError,
    diagnostics: &mut Vec<String>,
) -> Next {
    // The operator side goes to logs and the receipt here, per attempt: a retried error's
    // source would otherwise be lost with it.
    if let Some(report) = err.operator_report() {
        tracing::warn!(
            tool = %c.name,
            attempt,
            code = err.code(),
            operator = %report,
            "tool error"
        );
        diagnostics.push(format!("attempt {attempt}: {}: {report}", err.code()));
    }
    let retryable = err.retryable() && !never_retried(err.category());
    if !retryable || attempt >= c.retry.max_attempts {
        return Next::Stop(err);
    }
    // A wait longer than the tool's own backoff ceiling (or a minute) is the caller's to
    // schedule, not a reason to hold this call open.
    let wait_cap = c.retry.longest_wait_ms();
    if err.retry_after_ms().is_some_and(|ms| ms > wait_cap) {
        diagnostics.push(format!(
            "attempt {attempt}: no retry, retry_after_ms exceeds {wait_cap}"
        ));
        return Next::Stop(err);
    }
    let delay = backoff(&c.retry, attempt, err.retry_after_ms());
    let fits = ctx.deadline().is_none_or(|d| {
        tokio::time::Instant::now()
            .checked_add(delay)
            .is_some_and(|at| at < d)
    });
    if !fits {
        diagnostics.push(format!(
            "attempt {attempt}: no retry, the deadline is too close"
        ));
        return Next::Stop(err);
    }
    Next::RetryAfter(delay, err)
}

/// The error for an output that broke its schema and was withheld; what was wrong goes to the
/// receipt's diagnostics only.
#[cold]
#[inline(never)]
fn output_invalid(violations: Vec<String>, diagnostics: &mut Vec<String>) -> ToolError {
    diagnostics.extend(violations);
    ToolError::internal(
        "OUTPUT_CONTRACT_VIOLATION",
        "the tool's output broke its contract and was withheld",
    )
}

/// The error for an output longer than its cap, withheld.
#[cold]
#[inline(never)]
fn output_too_large(cap: u64, diagnostics: &mut Vec<String>) -> ToolError {
    diagnostics.push(format!("output is longer than its cap of {cap} bytes"));
    // The cap is safe to show; the output, and even its length, stay in the handler.
    ToolError::internal(
        "OUTPUT_CONTRACT_VIOLATION",
        "the tool's output is larger than its contract allows and was withheld",
    )
    .with_detail("reason", "output_too_large")
    .with_detail("max_output_bytes", cap)
}

/// A handler's error as the model sees it: its own repairable issues get what was sent at
/// each pointer, as the schema's do.
#[cold]
#[inline(never)]
fn handler_error(e: ToolError, entry: &Entry, args: &crate::args::Arguments) -> ToolError {
    if e.category() == ErrorCategory::InvalidInput {
        crate::repair::fill_actuals(e, args.get(&entry.plan))
    } else {
        e
    }
}

/// The error envelope of a call that ran and failed, with its span's outcome.
#[cold]
#[inline(never)]
fn failed(span: &tracing::Span, err: ToolError, meta: Meta, provenance: Provenance) -> Observation {
    span.record("tool.outcome", "error");
    span.record("error.type", err.code());
    Observation::failure(err, meta, provenance)
}

/// A call its standing rule could not approve (used up, expired, store unavailable): nothing
/// ran; the receipt lists the gates it passed before approval.
#[cold]
#[inline(never)]
fn refuse_unapproved(
    services: &Services,
    call: &mut PreparedCall,
    err: ToolError,
    span: &tracing::Span,
    exec_started: Option<Instant>,
) -> Observation {
    let entry: &Entry = &call.entry;
    let meta = Meta::of(
        entry.contract,
        std::mem::take(&mut call.call_id),
        millis(call.started.elapsed()),
        0,
    );
    span.record("tool.attempts", 0);
    span.record("tool.outcome", "error");
    span.record("error.type", err.code());
    let observation = Observation::failure(err, meta, entry.output.provenance(None));
    call.gates = if call.gates.contains(&crate::stage::Gate::Flow) {
        crate::stage::Gate::PREPARED_TRACED
    } else {
        crate::stage::Gate::PREPARED
    };
    let diagnostics =
        vec!["approval: the standing rule did not approve; the handler did not run".to_owned()];
    record(
        services,
        call,
        &observation,
        Stage::Approval,
        Vec::new(),
        diagnostics,
        exec_started,
    );
    observation
}

/// Records what the model is given into the call's session, if it has one: the output's data,
/// or an error's details (a handler may put upstream text there).
// Out of line, as is `record`: most hosts keep neither sessions nor receipts, and their
// calls should not carry this code (see `run_inner`).
#[inline(never)]
fn remember(call: &PreparedCall, observation: &Observation) {
    let Some(session) = call.ctx.session() else {
        return;
    };
    let details;
    let json = match (&observation.data, &observation.error) {
        (Some(data), _) => data.get(),
        (None, Some(err)) if !err.safe_details().is_empty() => {
            details = serde_json::to_string(err.safe_details()).unwrap_or_default();
            &details
        }
        _ => return,
    };
    let c = call.entry.contract;
    let source = crate::flow::ObservationSource {
        tool: c.name.clone(),
        version: Some(c.version.clone()),
        call_id: observation.meta.call_id.clone(),
    };
    session.record(source, call.entry.flow.confidential.clone(), json);
}

/// Sends the call's receipt to the registry's sink, if it has one.
#[inline(never)]
fn record(
    services: &Services,
    call: &mut PreparedCall,
    observation: &Observation,
    stage: Stage,
    attempts: Vec<AttemptRecord>,
    diagnostics: Vec<String>,
    exec_started: Option<Instant>,
) {
    let c = call.entry.contract;
    if let Some(sink) = &services.sink {
        let receipt = Receipt {
            call_id: observation.meta.call_id.clone(),
            received_at_ms: call.received_at_ms,
            proposal: call.record.take().map_or_else(
                || ProposalRecord {
                    name: c.name.clone(),
                    arguments: Value::Null,
                    call_id: None,
                },
                |r| *r,
            ),
            executed: Some(ExecutionRecord {
                tool: c.name.clone(),
                tool_version: c.version.clone(),
                contract_sha256: c.fingerprint.contract_sha256.clone(),
                implementation: c.fingerprint.implementation.clone(),
                arguments: call.args.take(&call.entry.plan),
                gates: call.gates.iter().map(|g| g.as_str().to_owned()).collect(),
                attempts,
            }),
            outcome: OutcomeRecord {
                ok: observation.ok,
                stage,
                code: observation.code().map(str::to_owned),
                category: observation.category(),
            },
            prepare_us: call.prepare_us,
            execute_us: exec_started.map_or(0, |t| micros(t.elapsed())),
            diagnostics,
            flow: call.flow.take().map(|f| *f),
            approval: call.approval.take().map(|a| *a),
            // What the model was not shown, as a digest only: a receipt must not become a
            // second copy of the data the view was there to keep out of sight.
            withheld_output_sha256: observation.has_withheld_data().then(|| {
                observation
                    .host_data_value()
                    .map_or_else(String::new, |full| crate::canonical::sha256(&full))
            }),
        };
        sink.record(&receipt);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::RetryPolicy;

    #[test]
    fn backoff_grows_is_capped_and_honours_retry_after() {
        let p = RetryPolicy::new(5, 100, 400);
        for _ in 0..100 {
            let d1 = backoff(&p, 1, None).as_millis();
            assert!((50..=100).contains(&d1), "{d1}");
            let d3 = backoff(&p, 3, None).as_millis();
            assert!((200..=400).contains(&d3), "{d3}");
            let d9 = backoff(&p, 9, None).as_millis();
            assert!(d9 <= 400, "{d9}");
        }
        assert_eq!(backoff(&p, 1, Some(1200)).as_millis(), 1200);
    }

    #[test]
    fn never_retried_categories() {
        for c in ErrorCategory::ALL {
            let expect = !matches!(
                c,
                ErrorCategory::Transient | ErrorCategory::Conflict | ErrorCategory::Internal
            );
            assert_eq!(never_retried(*c), expect, "{c}");
        }
    }
}
