//! `prepare_raw`'s fast path (a borrowed tree, the arguments' `Value` built only on demand)
//! must give the same verdict, the same validated arguments, the same envelope and the same
//! receipt as the full path. The registries below differ only in
//! `RegistryBuilder::fast_path`: first a fixed list of tricky proposals, then a differential
//! property test over generated ones.

use std::sync::Arc;

use proptest::prelude::*;
use serde_json::{json, Value};
use tool_contract::proposal::{Proposal, ProposalLimits};
use tool_contract::receipt::{Receipt, ReceiptSink};
use tool_contract::{Prepared, Registry, Rejection};

use crate::pipeline::{builder_with, ctx, normalized};

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

/// Keeps the last receipt only.
#[derive(Default)]
struct LastReceipt(std::sync::Mutex<Option<Receipt>>);

impl ReceiptSink for LastReceipt {
    fn record(&self, receipt: &Receipt) {
        *self.0.lock().unwrap() = Some(receipt.clone());
    }
}

/// Two registries that differ only in the path they take, each with its own receipts.
struct Pair {
    fast: Registry,
    full: Registry,
    fast_receipts: Arc<LastReceipt>,
    full_receipts: Arc<LastReceipt>,
}

fn pair() -> Pair {
    let (fast_receipts, full_receipts) = (Arc::default(), Arc::default());
    Pair {
        fast: builder_with(None)
            .receipts(Arc::clone(&fast_receipts))
            .build()
            .unwrap(),
        full: builder_with(None)
            .receipts(Arc::clone(&full_receipts))
            .fast_path(false)
            .build()
            .unwrap(),
        fast_receipts,
        full_receipts,
    }
}

/// The last receipt without its timings.
fn last_receipt(sink: &LastReceipt) -> Value {
    let mut r = serde_json::to_value(sink.0.lock().unwrap().as_ref().expect("a receipt")).unwrap();
    for timing in ["received_at_ms", "prepare_us", "execute_us"] {
        r[timing] = json!(0);
    }
    if let Some(attempts) = r["executed"]["attempts"].as_array_mut() {
        for a in attempts {
            a["latency_ms"] = json!(0);
        }
    }
    r
}

/// Runs `raw` through both paths: the same envelope, byte for byte (wall time zeroed), and the
/// same receipt.
async fn same_on_both_paths(pair: &Pair, raw: &str) -> Result<(), String> {
    let mut a = pair.fast.handle(raw, &ctx()).await;
    let mut b = pair.full.handle(raw, &ctx()).await;
    a.meta.latency_ms = 0;
    b.meta.latency_ms = 0;
    if a.to_json() != b.to_json() {
        return Err(format!(
            "envelopes differ for {raw}:\n{}\n{}",
            a.to_json(),
            b.to_json()
        ));
    }
    let (ra, rb) = (
        last_receipt(&pair.fast_receipts),
        last_receipt(&pair.full_receipts),
    );
    if ra != rb {
        return Err(format!("receipts differ for {raw}:\n{ra}\n{rb}"));
    }
    Ok(())
}

/// What `prepare_raw` decided, comparable across registries.
fn verdict(p: &Result<Prepared, Rejection>) -> Value {
    match p {
        Ok(Prepared::Ready(c)) => json!({"ready": c.arguments(), "version": c.tool_version()}),
        Ok(Prepared::NeedsApproval(r)) => json!({"approval": r.subject(), "digest": r.digest()}),
        Err(r) => json!({
            "refused": r.observation().code(),
            "stage": r.stage().as_str(),
            "feedback": r.feedback(),
        }),
    }
}

/// The same verdict and the same validated arguments from `prepare_raw` on both paths, and from
/// `prepare` on the parsed proposal.
fn same_prepared(pair: &Pair, raw: &str) -> Result<(), String> {
    let fast = pair.fast.prepare_raw(raw, &ctx());
    let full = pair.full.prepare_raw(raw, &ctx());
    if verdict(&fast) != verdict(&full) {
        return Err(format!("{raw}: {} vs {}", verdict(&fast), verdict(&full)));
    }
    // `prepare` on the parsed proposal, in both registries, so each counts the same call ids.
    let parsed = Proposal::parse(raw, &ProposalLimits::default());
    if let Ok(p) = &parsed {
        let _ = pair.full.prepare(p.clone(), &ctx());
    }
    let parsed = parsed.map(|p| pair.fast.prepare(p, &ctx()));
    let same = match (fast, parsed) {
        (Ok(Prepared::Ready(a)), Ok(Ok(Prepared::Ready(b)))) => {
            a.arguments() == b.arguments() && a.tool_version() == b.tool_version()
        }
        (Ok(Prepared::NeedsApproval(a)), Ok(Ok(Prepared::NeedsApproval(b)))) => {
            a.subject() == b.subject() && a.digest() == b.digest()
        }
        (Err(a), Ok(Err(b))) => a.observation().code() == b.observation().code(),
        (Err(a), Err(b)) => a.observation().code() == Some(b.code()),
        _ => false,
    };
    if same {
        Ok(())
    } else {
        Err(format!("{raw}: prepare_raw and prepare disagree"))
    }
}

#[tokio::test]
async fn the_fast_path_gives_the_full_paths_envelopes() {
    let pair = pair();
    for raw in PROPOSALS {
        same_on_both_paths(&pair, raw).await.unwrap();
        let a = pair.fast.handle(raw, &ctx()).await;
        let b = pair.full.handle(raw, &ctx()).await;
        assert_eq!(comparable(raw, &a), comparable(raw, &b), "{raw}");
    }
}

#[test]
fn the_fast_path_prepares_the_same_arguments() {
    let pair = pair();
    for raw in PROPOSALS {
        same_prepared(&pair, raw).unwrap();
    }
}

/// One value of a generated argument, as a model might write it.
fn value() -> impl Strategy<Value = String> {
    // Numbers at the edges of the number policy.
    let number = prop_oneof![
        Just("0"),
        Just("-0"),
        Just("8"),
        Just("8.0"),
        Just("8e0"),
        Just("80e-1"),
        Just("5"),
        Just("50"),
        Just("-1"),
        Just("0.5"),
        Just("1e-400"),
        Just("1e400"),
        Just("1e20"),
        Just("9007199254740992"),
        Just("9007199254740993"),
        Just("9007199254740993.0"),
        Just("18446744073709551615"),
        Just("18446744073709551616"),
        Just("-9223372036854775808"),
        Just("-9223372036854775809"),
        Just("01"),
        Just("1."),
    ];
    // Strings with escapes, astral characters and a lone surrogate.
    let string = prop_oneof![
        Just(r#""refund policy""#),
        Just(r#""re\"fund""#),
        Just(r#""\u00e9\ud83d\ude00""#),
        Just(r#""\ud83d""#),
        Just(r#""line\nbreak\t""#),
        Just(r#""policy""#),
        Just(r#""manual""#),
        Just(r#""blog""#),
        Just(r#""2026-01-01""#),
        Just(r#""2026-02-30""#),
        Just(r#""high""#),
        Just(r#""kim@acme.test""#),
        Just(r#""policy/refund""#),
        Just(r#""p1""#),
        Just(r#""""#),
        Just(r#""ab""#),
    ];
    let scalar = prop_oneof![
        number.prop_map(str::to_owned),
        string.prop_map(str::to_owned),
        Just("null".to_owned()),
        Just("true".to_owned()),
        "[a-z ]{0,70}".prop_map(|s| format!("\"{s}\"")),
    ];
    scalar.prop_recursive(2, 12, 4, |inner| {
        let key = prop_oneof![Just("a"), Just("b"), Just("high")];
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4)
                .prop_map(|v| format!("[{}]", v.join(","))),
            proptest::collection::vec((key, inner), 0..3).prop_map(|m| {
                let members: Vec<String> = m.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
                format!("{{{}}}", members.join(","))
            }),
        ]
    })
}

/// The arguments object: keys the example tools know (and some they do not), sometimes
/// repeated, in any order.
fn arguments() -> impl Strategy<Value = String> {
    let key = prop_oneof![
        Just("query"),
        Just("top_k"),
        Just("source_types"),
        Just("date_from"),
        Just("source_id"),
        Just("span_id"),
        Just("max_chars"),
        Just("request_id"),
        Just("title"),
        Just("body"),
        Just("priority"),
        Just("to"),
        Just("subject"),
        Just("tenant_id"),
        Just("x"),
    ];
    proptest::collection::vec((key, value()), 0..6).prop_map(|members| {
        let members: Vec<String> = members
            .iter()
            .map(|(k, v)| format!("\"{k}\": {v}"))
            .collect();
        format!("{{{}}}", members.join(", "))
    })
}

/// A whole proposal: a known tool, an unknown one or a bad name; the common shape or another;
/// an id or not; duplicate members; whitespace.
fn proposal() -> impl Strategy<Value = String> {
    let name = prop_oneof![
        Just(r#""search_documents""#),
        Just(r#""read_document_span""#),
        Just(r#""create_draft_ticket""#),
        Just(r#""send_email""#),
        Just(r#""get_policy_revision""#),
        Just(r#""no_such_tool""#),
        Just(r#""""#),
        Just("5"),
        Just("null"),
    ];
    let id = prop_oneof![
        Just(None),
        Just(Some(r#""call_77""#)),
        Just(Some(r#""""#)),
        Just(Some(r#""call 8""#)),
        Just(Some("7")),
        Just(Some("null")),
    ];
    (name, id, arguments(), 0u8..8, any::<bool>()).prop_map(|(name, id, args, shape, spaced)| {
        let gap = if spaced { " \n\t " } else { "" };
        let id = id
            .map(|id| format!("\"id\":{gap}{id},{gap}"))
            .unwrap_or_default();
        match shape {
            0..=3 => format!("{{{id}\"name\":{gap}{name},{gap}\"arguments\":{gap}{args}}}"),
            4 => format!("{{\"arguments\": {args}, {id}\"name\": {name}}}"),
            5 => format!(
                "{{{id}\"type\": \"function\", \"function\": {{\"name\": {name}, \"arguments\": {}}}}}",
                serde_json::to_string(&args).unwrap()
            ),
            6 => format!("{{{id}\"name\": {name}, \"name\": {name}, \"arguments\": {args}}}"),
            _ => format!("{{{id}\"type\": \"tool_use\", \"name\": {name}, \"input\": {args}}}"),
        }
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Generated proposals through both paths: the same verdict, the same validated arguments,
    /// byte-identical envelopes and the same receipts.
    #[test]
    fn both_paths_agree_on_generated_proposals(raws in proptest::collection::vec(proposal(), 1..4)) {
        // One pair for every case: building registries compiles their schemas, and every
        // operation below runs on both, so their call-id counters stay in step.
        static PAIR: std::sync::LazyLock<Pair> = std::sync::LazyLock::new(pair);
        let pair = &*PAIR;
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        for raw in &raws {
            let prepared = same_prepared(pair, raw);
            prop_assert!(prepared.is_ok(), "{}", prepared.unwrap_err());
            let handled = rt.block_on(same_on_both_paths(pair, raw));
            prop_assert!(handled.is_ok(), "{}", handled.unwrap_err());
        }
    }
}
