//! The executor on a paused clock: timeouts, retries, backoff, deadlines, panics.

use std::time::Duration;

use tokio::time::Instant;
use tool_contract::extract::State;
use tool_contract::{ErrorCategory, ToolContext};

use crate::pipeline::{ctx_builder, registry};
use crate::probe::Calls;

fn probe(mode: &str) -> String {
    format!(r#"{{"name":"run_probe","arguments":{{"mode":"{mode}"}}}}"#)
}

fn calls(ctx: &ToolContext) -> u32 {
    ctx.extensions().get::<Calls>().unwrap().get()
}

#[tokio::test(start_paused = true)]
async fn a_transient_failure_is_retried_and_then_succeeds() {
    let ctx = ctx_builder().build();
    let obs = registry().handle(&probe("flaky_once"), &ctx).await;
    assert!(obs.ok, "{obs:?}");
    assert_eq!(obs.meta.attempts, 2);
    assert_eq!(
        obs.data_value().unwrap()["attempt"],
        2,
        "the handler saw the attempt number"
    );
    assert_eq!(calls(&ctx), 2);
}

#[tokio::test(start_paused = true)]
async fn retry_after_is_honoured_and_attempts_are_capped() {
    let ctx = ctx_builder().build();
    let t0 = Instant::now();
    let obs = registry().handle(&probe("rate_limited"), &ctx).await;
    assert_eq!(obs.code(), Some("UPSTREAM_RATE_LIMITED"));
    assert_eq!(obs.meta.attempts, 3, "max_attempts = 3");
    assert_eq!(calls(&ctx), 3);
    // Two waits of at least retry_after_ms (1200) each, more than the 100-1000 ms backoff.
    assert!(
        t0.elapsed() >= Duration::from_millis(2400),
        "{:?}",
        t0.elapsed()
    );
    assert!(
        t0.elapsed() < Duration::from_millis(2600),
        "{:?}",
        t0.elapsed()
    );
}

#[tokio::test(start_paused = true)]
async fn non_retryable_categories_are_never_retried() {
    for mode in [
        "not_found",
        "retryable_not_found",
        "conflict",
        "bad_output",
        "panic",
    ] {
        let ctx = ctx_builder().build();
        let obs = registry().handle(&probe(mode), &ctx).await;
        assert!(!obs.ok, "{mode}");
        assert_eq!(obs.meta.attempts, 1, "{mode} was retried");
        assert_eq!(calls(&ctx), 1, "{mode}");
    }
}

#[tokio::test(start_paused = true)]
async fn a_hanging_handler_is_cut_off_at_each_timeout() {
    let ctx = ctx_builder().build();
    let t0 = Instant::now();
    let obs = registry().handle(&probe("hang"), &ctx).await;
    assert_eq!(obs.code(), Some("TOOL_TIMEOUT"));
    assert_eq!(obs.category(), Some(ErrorCategory::Transient));
    assert_eq!(obs.meta.attempts, 3);
    let spent = t0.elapsed();
    // Three 1000 ms attempts plus two backoffs of at most 100 and 200 ms.
    assert!(
        spent >= Duration::from_millis(3000) && spent <= Duration::from_millis(3300),
        "{spent:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn the_deadline_caps_attempts_and_retries() {
    let deadline = std::time::Instant::now() + Duration::from_millis(1500);
    let ctx = ctx_builder().deadline(deadline).build();
    let t0 = Instant::now();
    let obs = registry().handle(&probe("hang"), &ctx).await;
    assert_eq!(obs.code(), Some("TOOL_TIMEOUT"));
    assert!(obs.meta.attempts <= 2, "{}", obs.meta.attempts);
    assert!(
        t0.elapsed() <= Duration::from_millis(1600),
        "ran past the deadline: {:?}",
        t0.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_handler_is_isolated() {
    let reg = registry();
    let ctx = ctx_builder().build();
    let panics = (0..8).map(|_| {
        let reg = reg.clone();
        let ctx = ctx.clone();
        tokio::spawn(async move { reg.handle(&probe("panic"), &ctx).await })
    });
    let oks = (0..8).map(|_| {
        let reg = reg.clone();
        let ctx = ctx.clone();
        tokio::spawn(async move { reg.handle(&probe("ok"), &ctx).await })
    });
    let panics: Vec<_> = panics.collect();
    let oks: Vec<_> = oks.collect();
    for p in panics {
        let obs = p.await.expect("the task itself must not panic");
        assert_eq!(obs.code(), Some("HANDLER_PANICKED"));
        assert_eq!(obs.category(), Some(ErrorCategory::Internal));
        assert!(!serde_json::to_string(&obs).unwrap().contains("hunter2"));
    }
    for o in oks {
        assert!(o.await.unwrap().ok);
    }
    let State(calls) = State::<Calls>(ctx.extensions().get::<Calls>().unwrap().clone());
    assert_eq!(calls.get(), 16);
}

#[tokio::test(start_paused = true)]
async fn output_contract_violations_are_withheld() {
    let obs = registry()
        .handle(&probe("bad_output"), &ctx_builder().build())
        .await;
    assert_eq!(obs.code(), Some("OUTPUT_CONTRACT_VIOLATION"));
    assert!(obs.data.is_none());
    // The fingerprint is a hash whose digits may spell anything: look everywhere else.
    let mut seen = serde_json::to_value(&obs).unwrap();
    seen["meta"]["fingerprint"] = serde_json::Value::Null;
    assert!(
        !seen.to_string().contains("91"),
        "the bad value reached the envelope"
    );
}

#[tokio::test(start_paused = true)]
async fn a_retry_after_beyond_the_cap_is_left_to_the_caller() {
    let ctx = ctx_builder().build();
    let t0 = Instant::now();
    let obs = registry()
        .handle(&probe("rate_limited_for_an_hour"), &ctx)
        .await;
    assert_eq!(obs.code(), Some("UPSTREAM_RATE_LIMITED"));
    assert_eq!(
        obs.error.as_ref().unwrap().retry_after_ms(),
        Some(3_600_000)
    );
    assert_eq!(obs.meta.attempts, 1);
    assert!(
        t0.elapsed() < Duration::from_secs(1),
        "the call waited: {:?}",
        t0.elapsed()
    );
}

/// Each way the attempt loop stops early is written in the receipt, for operators: the model
/// sees only the error.
#[tokio::test(start_paused = true)]
async fn the_receipt_says_why_an_attempt_was_not_retried() {
    use std::sync::Arc;
    use tool_contract::policy::Budget;
    use tool_contract::receipt::MemorySink;

    let sink = Arc::new(MemorySink::new());
    let reg = crate::pipeline::registry_with(Some(Arc::clone(&sink)));
    let diagnostics = |sink: &MemorySink| sink.receipts().last().unwrap().diagnostics.clone();

    let obs = reg.handle(&probe("ok"), &ctx_builder().build()).await;
    assert!(obs.ok, "{obs:?}");
    assert_eq!(diagnostics(&sink), Vec::<String>::new());

    // A wait longer than the tool's retry policy allows is the caller's to schedule.
    let obs = reg
        .handle(&probe("rate_limited_for_an_hour"), &ctx_builder().build())
        .await;
    assert_eq!(obs.code(), Some("UPSTREAM_RATE_LIMITED"));
    let d = diagnostics(&sink);
    assert_eq!(d.len(), 1, "{d:?}");
    assert!(
        d[0].starts_with("attempt 1: no retry, retry_after_ms exceeds "),
        "{d:?}"
    );

    // The backend asks for 1200 ms and the turn has 1000 ms left.
    let deadline = std::time::Instant::now() + Duration::from_millis(1000);
    let ctx = ctx_builder().deadline(deadline).build();
    let obs = reg.handle(&probe("rate_limited"), &ctx).await;
    assert_eq!(
        (obs.code(), obs.meta.attempts),
        (Some("UPSTREAM_RATE_LIMITED"), 1)
    );
    assert_eq!(
        diagnostics(&sink),
        ["attempt 1: no retry, the deadline is too close"]
    );

    // The first attempt spends its whole timeout; the budget cannot cover a second one.
    let ctx = ctx_builder().budget(Budget::new(5, 1500)).build();
    let obs = reg.handle(&probe("hang"), &ctx).await;
    assert_eq!((obs.code(), obs.meta.attempts), (Some("TOOL_TIMEOUT"), 1));
    assert_eq!(
        diagnostics(&sink),
        ["attempt 2: no retry, the budget is spent"]
    );

    let obs = reg.handle(&probe("panic"), &ctx_builder().build()).await;
    assert_eq!(
        (obs.code(), obs.meta.attempts),
        (Some("HANDLER_PANICKED"), 1)
    );
    assert_eq!(diagnostics(&sink), ["attempt 1: the handler panicked"]);
}
