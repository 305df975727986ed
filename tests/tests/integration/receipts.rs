//! Receipts keep the proposal and what ran apart; spans carry the GenAI attribute names.

use std::sync::Arc;

use serde_json::json;
use tool_contract::receipt::{JsonLinesSink, MemorySink, Receipt};
use tool_contract::Registry;

use crate::pipeline::{ctx, registry_with};

#[tokio::test]
async fn a_receipt_separates_the_proposal_from_what_ran() {
    let sink = Arc::new(MemorySink::new());
    let reg = registry_with(Some(Arc::clone(&sink)));
    let raw =
        r#"{"id":"call_9","name":"search_documents","arguments":{"query":"refund","top_k":null}}"#;
    let obs = reg.handle(raw, &ctx()).await;
    assert!(obs.ok);
    let receipts = sink.receipts();
    assert_eq!(receipts.len(), 1);
    let r = &receipts[0];
    assert_eq!(r.call_id, "call_9");
    assert_eq!(
        r.proposal.arguments,
        json!({"query": "refund", "top_k": null}),
        "the raw proposal is kept"
    );
    let ran = r.executed.as_ref().unwrap();
    assert_eq!(
        ran.arguments,
        json!({"query": "refund", "source_types": ["policy", "manual"], "top_k": 8})
    );
    assert_eq!(ran.tool_version, "2.1.0");
    assert_eq!(ran.contract_sha256, obs.meta.fingerprint.clone().unwrap());
    assert_eq!(ran.gates.first().map(String::as_str), Some("lookup"));
    assert_eq!(ran.attempts.len(), 1);
    assert_eq!(ran.attempts[0].outcome, "ok");
    assert!(r.outcome.ok);
    assert_eq!(r.outcome.stage, "done");
}

#[tokio::test]
async fn rejected_proposals_get_receipts_too() {
    let sink = Arc::new(MemorySink::new());
    let reg = registry_with(Some(Arc::clone(&sink)));
    let _ = reg
        .handle(
            r#"{"name":"search_documents","arguments":{"query":"refund","top_k":50}}"#,
            &ctx(),
        )
        .await;
    let _ = reg.handle("not json", &ctx()).await;
    let receipts = sink.receipts();
    assert_eq!(receipts.len(), 2);
    assert_eq!(receipts[0].outcome.stage, "validate");
    assert_eq!(
        receipts[0].outcome.code.as_deref(),
        Some("INPUT_VALIDATION_FAILED")
    );
    assert!(receipts[0].executed.is_none());
    assert_eq!(receipts[1].outcome.stage, "parse");
}

#[tokio::test]
async fn json_lines_sink_writes_one_receipt_per_line() {
    let dir = std::env::temp_dir().join(format!("tc-receipts-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("receipts.jsonl");
    let _ = std::fs::remove_file(&path);
    let reg = Registry::builder()
        .toolset(crate::document_tools())
        .receipts(JsonLinesSink::open(&path).unwrap())
        .build()
        .unwrap();
    for q in ["refund", "policy"] {
        let raw = format!(r#"{{"name":"search_documents","arguments":{{"query":"{q}"}}}}"#);
        assert!(reg.handle(&raw, &ctx()).await.ok);
    }
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<Receipt> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[1].proposal.arguments["query"], "policy");
    std::fs::remove_dir_all(&dir).unwrap();
}
