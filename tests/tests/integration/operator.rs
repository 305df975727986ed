//! Errors with an operator side, and repairable issues reported by the handler itself.

use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use tool_contract::receipt::MemorySink;
use tool_contract::{ErrorCategory, RepairFeedback, RepairLoop, RepairStep};
use tracing::field::{Field, Visit};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::Layer;

use crate::pipeline::{ctx, registry, registry_with};

const SECRET: &str = "hunter2";

fn probe(mode: &str, label: Option<&str>) -> String {
    let mut args = json!({ "mode": mode });
    if let Some(label) = label {
        args["label"] = json!(label);
    }
    json!({ "name": "run_probe", "arguments": args }).to_string()
}

/// Every event's fields, as text.
#[derive(Clone, Default)]
struct Events(Arc<Mutex<Vec<String>>>);

struct Text<'a>(&'a mut String);
impl Visit for Text<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.push_str(&format!("{}={value:?} ", field.name()));
    }
}

impl<S: tracing::Subscriber> Layer<S> for Events {
    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        let mut line = String::new();
        event.record(&mut Text(&mut line));
        self.0.lock().unwrap().push(line);
    }
}

#[tokio::test(start_paused = true)]
async fn a_secret_in_a_source_error_reaches_logs_and_receipts_never_the_model() {
    let sink = Arc::new(MemorySink::new());
    let reg = registry_with(Some(Arc::clone(&sink)));
    let events = Events::default();
    let subscriber = tracing_subscriber::registry().with(events.clone());
    let obs = {
        let _guard = tracing::subscriber::set_default(subscriber);
        reg.handle(&probe("leaky_source", None), &ctx()).await
    };
    assert_eq!(obs.code(), Some("UPSTREAM_UNAVAILABLE"));
    assert_eq!(obs.meta.attempts, 3, "a transient error is still retried");

    // The model's views: the envelope, the prompt block, Debug and Display.
    let err = obs.error.as_ref().unwrap();
    for (view, text) in [
        ("envelope", obs.to_value().to_string()),
        ("prompt block", obs.to_prompt_block()),
        ("debug", format!("{obs:?}")),
        ("display", err.to_string()),
    ] {
        assert!(!text.contains(SECRET), "{view} leaks the secret: {text}");
        assert!(
            !text.contains("db.internal"),
            "{view} leaks the host: {text}"
        );
    }

    // The host's views: the error itself, the receipt and the log.
    let source = std::error::Error::source(err).expect("the source error is kept");
    assert!(source.to_string().contains(SECRET));
    assert!(err.operator_details()["dsn"]
        .as_str()
        .unwrap()
        .contains(SECRET));
    let receipts = sink.receipts();
    let diagnostics = receipts.last().unwrap().diagnostics.join("\n");
    assert_eq!(
        diagnostics
            .matches("caused by: connect to db.internal")
            .count(),
        3,
        "one line per attempt: {diagnostics}"
    );
    assert!(diagnostics.contains("postgres://svc:hunter2@db.internal/probe"));
    let logged = events.0.lock().unwrap().join("\n");
    assert!(
        logged.contains("password=hunter2 refused") && logged.contains("UPSTREAM_UNAVAILABLE"),
        "{logged}"
    );
}

#[tokio::test]
async fn an_operator_side_on_a_refusal_reaches_the_receipt_not_the_envelope() {
    // A state gate refuses with an operator-only reason.
    let sink = Arc::new(MemorySink::new());
    let reg = crate::pipeline::builder_with(Some(Arc::clone(&sink)))
        .state_gate(
            |c: &tool_contract::ToolContract, _: &tool_contract::ToolContext| {
                if c.name == "run_probe" {
                    Err(tool_contract::ToolError::policy_denied(
                        "PROBES_PAUSED",
                        "probes are paused",
                    )
                    .with_operator_detail("ticket", "INC-4711 hunter2"))
                } else {
                    Ok(())
                }
            },
        )
        .build()
        .unwrap();
    let obs = reg.handle(&probe("ok", None), &ctx()).await;
    assert_eq!(obs.code(), Some("PROBES_PAUSED"));
    assert!(!obs.to_value().to_string().contains(SECRET));
    assert!(!obs.to_prompt_block().contains(SECRET));
    let receipt = sink.receipts().pop().unwrap();
    assert_eq!(
        receipt.diagnostics,
        vec![r#"operator details {"ticket":"INC-4711 hunter2"}"#.to_owned()]
    );
}

#[tokio::test]
async fn a_handler_reports_a_repairable_issue_shaped_like_the_schemas() {
    let reg = registry();
    let obs = reg.handle(&probe("reserved_label", None), &ctx()).await;
    assert_eq!(obs.category(), Some(ErrorCategory::InvalidInput));
    assert_eq!(obs.code(), Some("INPUT_VALIDATION_FAILED"));
    assert_eq!(obs.meta.attempts, 1, "invalid input is never retried");
    let err = obs.error.as_ref().unwrap();
    assert_eq!(
        err.safe_details()["issues"],
        json!([{
            "path": "/label",
            "keyword": "LABEL_RESERVED",
            "expected": "a label other than the reserved word 'probe'",
            // Filled in by the pipeline from the validated arguments (the default applied).
            "actual": "probe",
        }])
    );

    // The same shape as the schema layer's feedback for the same field.
    let schema = match reg.prepare_raw(&probe("ok", Some("")), &ctx()) {
        Err(rejection) => rejection,
        Ok(_) => panic!("an empty label breaks minLength"),
    };
    let from_schema = rejection_issue_keys(&schema.observation().to_value());
    let from_handler = rejection_issue_keys(&obs.to_value());
    assert_eq!(from_schema, from_handler);
    let feedback = RepairFeedback::from_observation(&obs).unwrap();
    assert_eq!(feedback.tool, "run_probe");
    assert_eq!(feedback.issues[0].path, "/label");
    assert_eq!(
        RepairFeedback::from_observation(schema.observation()).as_ref(),
        schema.feedback(),
        "one reading of feedback for both"
    );
}

fn rejection_issue_keys(envelope: &Value) -> Vec<String> {
    let issue = &envelope["error"]["safe_details"]["issues"][0];
    let mut keys: Vec<String> = issue
        .as_object()
        .unwrap_or_else(|| panic!("no issue in {envelope}"))
        .keys()
        .cloned()
        .collect();
    keys.sort();
    keys
}

#[tokio::test]
async fn the_repair_bound_counts_handler_issues_like_schema_issues() {
    let reg = registry();
    let mut repairs = RepairLoop::new(2);
    let chain = "turn-1/run_probe";
    // A schema rejection, then two handler rejections: the third repairable failure is the
    // last one allowed, whichever layer found it.
    let schema = reg
        .prepare_raw(&probe("ok", Some("")), &ctx())
        .err()
        .unwrap();
    assert!(
        matches!(repairs.on_rejection(chain, &schema), RepairStep::Repair(f) if f.repair_attempt == 1)
    );
    let obs = reg.handle(&probe("reserved_label", None), &ctx()).await;
    match repairs.on_observation(chain, &obs) {
        Some(RepairStep::Repair(f)) => assert_eq!(f.repair_attempt, 2),
        other => panic!("{other:?}"),
    }
    match repairs.on_observation(chain, &obs) {
        Some(RepairStep::Stop(end)) => {
            assert_eq!(end.code(), Some("TOOL_ARGUMENT_INVALID"));
            assert_eq!(
                end.error.as_ref().unwrap().safe_details()["issues"][0]["path"],
                "/label"
            );
        }
        other => panic!("{other:?}"),
    }
    // Success and unrelated failures are nothing to repair; success forgets the chain.
    let ok = reg.handle(&probe("ok", Some("fine")), &ctx()).await;
    assert!(repairs.on_observation(chain, &ok).is_none());
    let not_found = reg.handle(&probe("not_found", None), &ctx()).await;
    assert!(repairs.on_observation(chain, &not_found).is_none());
    let obs = reg.handle(&probe("reserved_label", None), &ctx()).await;
    assert!(
        matches!(repairs.on_observation(chain, &obs), Some(RepairStep::Repair(f)) if f.repair_attempt == 1)
    );
}
