//! `prepare_raw`'s fast path (a borrowed tree, the arguments' `Value` built only on demand)
//! must give the same call and the same envelope as the full path. A registry with a receipt
//! sink always takes the full path, so the two registries below differ only in the path.

use std::sync::Arc;

use serde_json::{json, Value};
use tool_contract::proposal::{Proposal, ProposalLimits};
use tool_contract::receipt::MemorySink;
use tool_contract::Prepared;

use crate::pipeline::{ctx, normalized, registry, registry_with};

const PROPOSALS: &[&str] = &[
    r#"{"id": "call_1", "name": "search_documents", "arguments": {"query": "refund policy", "source_types": ["policy", "manual"], "top_k": 5}}"#,
    r#"{"name": "search_documents", "arguments": {"query": "refund"}}"#,
    r#"{"arguments": {"top_k": 3, "query": "refund"}, "name": "search_documents", "id": "call_2"}"#,
    r#"{"name": "search_documents", "arguments": {"query": "refund", "date_from": null, "top_k": null}}"#,
    r#"{"name": "search_documents", "arguments": {"query": "refund", "top_k": 8.0}}"#,
    r#"{"name": "search_documents", "arguments": {"query": "refund", "top_k": -0}}"#,
    r#"{"name": "search_documents", "arguments": {"query": "refund", "top_k": 50}}"#,
    r#"{"name": "search_documents", "arguments": {"query": "refund", "top_k": 18446744073709551615}}"#,
    r#"{"name": "search_documents", "arguments": {"query": "refund", "top_k": -9223372036854775808}}"#,
    r#"{"name": "search_documents", "arguments": {"query": "refund", "source_types": ["policy", "policy"]}}"#,
    r#"{"name": "search_documents", "arguments": {"query": "refund", "source_types": ["blog"]}}"#,
    r#"{"name": "search_documents", "arguments": {"query": "re\"fund\u00e9\ud83d\ude00", "date_from": "2026-01-01"}}"#,
    r#"{"name": "search_documents", "arguments": {"query": "refund", "date_from": "2026-02-30"}}"#,
    r#"{"name": "search_documents", "arguments": {"query": "\ud83d"}}"#,
    r#"{"name": "search_documents", "arguments": {"query": "refund", "tenant_id": "globex"}}"#,
    r#"{"name": "search_documents", "arguments": {"query": "refund", "query": "other"}}"#,
    r#"{"name": "search_documents", "arguments": {"query": "refund", "x": {"a": 1, "a": 2}}}"#,
    r#"{"name": "search_documents", "arguments": {"query": 5}}"#,
    r#"{"name": "search_documents", "arguments": {}}"#,
    r#"{"name": "search_documents", "arguments": []}"#,
    r#"{"name": "search_documents", "arguments": "{\"query\": \"refund\"}"}"#,
    r#"{"name": "search_documents", "input": {"query": "refund"}}"#,
    r#"{"id": "call_3", "type": "function", "function": {"name": "search_documents", "arguments": "{\"query\": \"refund\"}"}}"#,
    r#"{"id": "", "name": "search_documents", "arguments": {"query": "refund"}}"#,
    r#"{"id": "call 4", "name": "search_documents", "arguments": {"query": "refund"}}"#,
    r#"{"id": 7, "name": "search_documents", "arguments": {"query": "refund"}}"#,
    r#"{"name": "search_documents", "name": "search_documents", "arguments": {"query": "refund"}}"#,
    r#"{"name": "no_such_tool", "arguments": {}}"#,
    r#"{"name": "", "arguments": {}}"#,
    r#"{"name": "read_document_span", "arguments": {"source_id": "policy/refund", "span_id": "p1"}}"#,
    r#"{"name": "read_document_span", "arguments": {"source_id": "policy/refund", "span_id": "p1", "max_chars": null}}"#,
    r#"{"name": "create_draft_ticket", "arguments": {"request_id": "req-1", "title": "t", "body": "b", "priority": "high"}}"#,
    r#"{"name": "create_draft_ticket", "arguments": {"request_id": "req-2", "title": "t", "body": "b", "priority": {"high": null}}}"#,
    r#"{"name": "send_email", "arguments": {"to": "kim@acme.test", "subject": "s", "body": "b"}}"#,
    r#"  {"name" : "search_documents" , "arguments" : { "query" : "refund" } }  "#,
    r#"{"name": "search_documents", "arguments": {"query": "refund"}} x"#,
    r#"[]"#,
    r#""#,
];

/// The envelope without what legitimately differs: wall time, and generated call ids (each
/// registry counts its own).
fn comparable(raw: &str, obs: &tool_contract::envelope::Observation) -> Value {
    let mut v = normalized(obs);
    if !raw.contains("\"id\": \"call_") {
        v["meta"]["call_id"] = json!("generated");
    }
    v
}

#[tokio::test]
async fn the_fast_path_gives_the_full_paths_envelopes() {
    let fast = registry();
    let full = registry_with(Some(Arc::new(MemorySink::default())));
    for raw in PROPOSALS {
        let a = fast.handle(raw, &ctx()).await;
        let b = full.handle(raw, &ctx()).await;
        assert_eq!(comparable(raw, &a), comparable(raw, &b), "{raw}");
    }
}

#[test]
fn the_fast_path_prepares_the_same_arguments() {
    let fast = registry();
    let limits = ProposalLimits::default();
    for raw in PROPOSALS {
        let a = fast.prepare_raw(raw, &ctx());
        let b = Proposal::parse(raw, &limits).map(|p| fast.prepare(p, &ctx()));
        match (a, b) {
            (Ok(Prepared::Ready(a)), Ok(Ok(Prepared::Ready(b)))) => {
                assert_eq!(a.arguments(), b.arguments(), "{raw}");
                assert_eq!(a.tool_version(), b.tool_version(), "{raw}");
            }
            (Ok(Prepared::NeedsApproval(a)), Ok(Ok(Prepared::NeedsApproval(b)))) => {
                assert_eq!(a.subject(), b.subject(), "{raw}");
                assert_eq!(a.digest(), b.digest(), "{raw}");
            }
            (Err(a), Ok(Err(b))) => {
                assert_eq!(a.observation().code(), b.observation().code(), "{raw}")
            }
            (Err(a), Err(b)) => assert_eq!(a.observation().code(), Some(b.code()), "{raw}"),
            (a, b) => panic!("{raw}: {a:?} vs {b:?}"),
        }
    }
}
