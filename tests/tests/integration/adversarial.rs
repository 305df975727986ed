//! Hostile proposals: each gets its documented category, bounded work, and never a panic.

use proptest::prelude::*;
use serde_json::json;
use tool_contract::{ErrorCategory, Registry};

use crate::pipeline::{ctx, ctx_builder, registry};

fn reject(reg: &Registry, raw: &str, ctx: &tool_contract::ToolContext) -> (ErrorCategory, String) {
    match reg.prepare_raw(raw, ctx) {
        Ok(_) => panic!("accepted: {}", &raw[..raw.len().min(200)]),
        Err(r) => (
            r.observation().category().unwrap(),
            r.observation().code().unwrap().to_owned(),
        ),
    }
}

#[test]
fn the_adversarial_table() {
    let reg = registry();
    let c = ctx();
    let wrap = |args: &str| format!(r#"{{"name":"search_documents","arguments":{args}}}"#);
    let deep = wrap(&format!("{}{}", "[".repeat(10_000), "]".repeat(10_000)));
    let big_string = wrap(&format!(r#"{{"query":"{}"}}"#, "a".repeat(50 << 20)));
    let tiny_objects = wrap(&format!("[{}{{}}]", "{},".repeat((8 << 20) / 3)));
    let pinned = ctx_builder()
        .pin_version("search_documents", "3.0.0")
        .build();
    let table: Vec<(
        &str,
        String,
        &tool_contract::ToolContext,
        ErrorCategory,
        &str,
    )> = vec![
        (
            "10k-deep nesting",
            deep,
            &c,
            ErrorCategory::InvalidInput,
            "PROPOSAL_TOO_DEEP",
        ),
        (
            "50 MB string",
            big_string,
            &c,
            ErrorCategory::InvalidInput,
            "PROPOSAL_TOO_LARGE",
        ),
        (
            "8 MB of tiny objects",
            tiny_objects,
            &c,
            ErrorCategory::InvalidInput,
            "PROPOSAL_TOO_LARGE",
        ),
        (
            "duplicate top-level key",
            r#"{"name":"search_documents","name":"send_email","arguments":{}}"#.into(),
            &c,
            ErrorCategory::InvalidInput,
            "DUPLICATE_KEY",
        ),
        (
            "duplicate nested key",
            wrap(r#"{"query":"refund","query":"payroll"}"#),
            &c,
            ErrorCategory::InvalidInput,
            "DUPLICATE_KEY",
        ),
        (
            "1e400",
            wrap(r#"{"query":"refund","top_k":1e400}"#),
            &c,
            ErrorCategory::InvalidInput,
            "NUMBER_OUT_OF_RANGE",
        ),
        (
            "2^64",
            wrap(r#"{"query":"refund","top_k":18446744073709551616}"#),
            &c,
            ErrorCategory::InvalidInput,
            "NUMBER_OUT_OF_RANGE",
        ),
        (
            "lone surrogate",
            wrap(r#"{"query":"\udc00refund"}"#),
            &c,
            ErrorCategory::InvalidInput,
            "PROPOSAL_MALFORMED",
        ),
        (
            "unknown tool",
            r#"{"name":"drop_database","arguments":{}}"#.into(),
            &c,
            ErrorCategory::InvalidInput,
            "UNKNOWN_TOOL",
        ),
        (
            "unknown version",
            wrap(r#"{"query":"refund"}"#),
            &pinned,
            ErrorCategory::NotFound,
            "TOOL_VERSION_NOT_FOUND",
        ),
        (
            "extra field",
            wrap(r#"{"query":"refund","verbose":true}"#),
            &c,
            ErrorCategory::InvalidInput,
            "INPUT_VALIDATION_FAILED",
        ),
        (
            "model-supplied tenant_id",
            wrap(r#"{"query":"refund","tenant_id":"globex"}"#),
            &c,
            ErrorCategory::InvalidInput,
            "INPUT_VALIDATION_FAILED",
        ),
        (
            "arguments not an object",
            wrap(r#"[1,2,3]"#),
            &c,
            ErrorCategory::InvalidInput,
            "INPUT_VALIDATION_FAILED",
        ),
        (
            "trailing garbage",
            format!("{} x", wrap(r#"{"query":"refund"}"#)),
            &c,
            ErrorCategory::InvalidInput,
            "PROPOSAL_MALFORMED",
        ),
    ];
    for (name, raw, ctx, category, code) in table {
        let got = reject(&reg, &raw, ctx);
        assert_eq!(got, (category, code.to_owned()), "{name}");
    }
}

#[test]
fn depth_and_value_caps_apply_below_the_byte_cap() {
    let reg = registry();
    let deep = format!(
        r#"{{"name":"search_documents","arguments":{{"query":{}1{}}}}}"#,
        "[".repeat(100),
        "]".repeat(100)
    );
    assert_eq!(reject(&reg, &deep, &ctx()).1, "PROPOSAL_TOO_DEEP");
    let many = format!(
        r#"{{"name":"search_documents","arguments":{{"query":[{}0]}}}}"#,
        "0,".repeat(150_000)
    );
    assert!(many.len() < 1 << 20);
    assert_eq!(reject(&reg, &many, &ctx()).1, "PROPOSAL_TOO_MANY_VALUES");
}

#[test]
fn openai_string_arguments_get_the_same_limits() {
    let reg = registry();
    let inner = json!({"query": "refund", "query2": 1})
        .to_string()
        .replace("query2", "query");
    let raw = json!({"type": "function", "id": "call_x", "function": {"name": "search_documents", "arguments": inner}}).to_string();
    assert_eq!(reject(&reg, &raw, &ctx()).1, "DUPLICATE_KEY");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, .. ProptestConfig::default() })]

    /// Any bytes as a proposal: an envelope, never a panic.
    #[test]
    fn any_bytes_yield_an_envelope(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let reg = registry();
        let raw = String::from_utf8_lossy(&bytes);
        if let Err(r) = reg.prepare_raw(&raw, &ctx()) {
            prop_assert!(!r.observation().ok);
            prop_assert_eq!(r.observation().provenance.trust.as_str(), "untrusted");
        }
    }

    /// Any JSON-ish text around a real tool name: an envelope, never a panic.
    #[test]
    fn any_arguments_yield_an_envelope(args in "[\\[\\]{}\",:0-9a-z.eE+-]{0,200}") {
        let reg = registry();
        let raw = format!(r#"{{"name":"search_documents","arguments":{args}}}"#);
        let _ = reg.prepare_raw(&raw, &ctx());
    }

    /// Any structurally valid arguments: the pipeline runs to an observation.
    #[test]
    fn any_valid_shape_runs(query in "[a-z ]{2,40}", top_k in 1u8..=20, incident in any::<bool>()) {
        let reg = registry();
        let types = if incident { json!(["incident"]) } else { json!(["policy"]) };
        let raw = json!({"name": "search_documents", "arguments": {"query": query, "top_k": top_k, "source_types": types}}).to_string();
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let obs = rt.block_on(reg.handle(&raw, &ctx()));
        let semantic_block = incident && top_k > 5;
        prop_assert_eq!(obs.ok, !semantic_block, "{:?}", obs.error);
    }
}
