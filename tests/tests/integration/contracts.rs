use serde_json::json;
use tool_contract::contract::{ApprovalPolicy, IdempotencySource};
use tool_contract::{Effect, ErrorCategory, Tool, ToolContract};
use tool_contract_examples::{SearchDocuments, SendEmail};

use crate::{contract, document_tools};

/// The document tools' policy table, row by row: effect, approval, max attempts, idempotency source.
#[test]
fn document_tools_policy_table() {
    let rows: [(&str, Effect, ApprovalPolicy, u32, IdempotencySource, bool); 5] = [
        (
            "search_documents",
            Effect::PureRead,
            ApprovalPolicy::Never,
            2,
            IdempotencySource::Host,
            false,
        ),
        (
            "read_document_span",
            Effect::PureRead,
            ApprovalPolicy::Never,
            2,
            IdempotencySource::None,
            false,
        ),
        (
            "create_draft_ticket",
            Effect::ReversibleWrite,
            ApprovalPolicy::Conditional,
            1,
            IdempotencySource::Field {
                field: "request_id".into(),
            },
            true,
        ),
        (
            "send_email",
            Effect::IrreversibleWrite,
            ApprovalPolicy::Always,
            1,
            IdempotencySource::Derived {
                fields: vec!["to".into(), "subject".into(), "body".into()],
            },
            true,
        ),
        (
            "delete_document",
            Effect::IrreversibleWrite,
            ApprovalPolicy::Always,
            1,
            IdempotencySource::Derived {
                fields: vec!["source_id".into()],
            },
            true,
        ),
    ];
    let names: Vec<_> = document_tools()
        .contracts()
        .map(|c| c.name.clone())
        .collect();
    assert_eq!(names, rows.iter().map(|r| r.0).collect::<Vec<_>>());
    for (name, effect, approval, attempts, source, required) in rows {
        let c = contract(name);
        assert_eq!(c.effect, effect, "{name}");
        assert_eq!(c.approval, approval, "{name}");
        assert_eq!(c.retry.max_attempts, attempts, "{name}");
        assert_eq!(c.idempotency.source, source, "{name}");
        assert_eq!(c.idempotency.required, required, "{name}");
        assert!(!c.description.is_empty(), "{name}");
        assert!(c.timeout_ms > 0, "{name}");
        assert_eq!(c.authorization.capabilities.len(), 1, "{name}");
    }
}

#[test]
fn all_twelve_fields_serialize_and_round_trip() {
    for c in document_tools().contracts() {
        let v = serde_json::to_value(c).unwrap();
        for key in [
            "name",
            "description",
            "input_schema",
            "output_schema",
            "error_model",
            "effect",
            "authorization",
            "approval",
            "timeout_ms",
            "retry",
            "idempotency",
            "version",
            "fingerprint",
        ] {
            assert!(v.get(key).is_some(), "{} lacks {key}", c.name);
        }
        let back: ToolContract = serde_json::from_value(v).unwrap();
        assert_eq!(&back, c);
    }
}

#[test]
fn send_email_contract_matches_its_attribute() {
    let c = SendEmail::contract();
    assert_eq!(<SendEmail as Tool>::NAME, "send_email");
    assert_eq!(<SendEmail as Tool>::VERSION, "1.2.0");
    assert_eq!(c.timeout_ms, 2000);
    assert_eq!(c.policy_version.as_deref(), Some("tool-policy-12"));
    assert_eq!(c.authorization.capabilities, ["mail:send"]);
    assert_eq!(
        c.authorization.extractors,
        ["Principal", "IdempotencyKey", "State<DocumentStore>"]
    );
    assert!(c.description.starts_with("Sends an e-mail"));
    // A single attempt: nothing is retried automatically.
    assert!(c.error_model.auto_retried.is_empty());
    assert_eq!(c.error_model.categories.len(), 7);
}

#[test]
fn error_model_lists_the_seven_categories_with_actions() {
    let c = SearchDocuments::contract();
    let cats: Vec<_> = c
        .error_model
        .categories
        .iter()
        .map(|i| i.category.as_str())
        .collect();
    assert_eq!(
        cats,
        [
            "INVALID_INPUT",
            "UNAUTHORIZED",
            "NOT_FOUND",
            "TRANSIENT",
            "CONFLICT",
            "POLICY_DENIED",
            "INTERNAL"
        ]
    );
    assert_eq!(c.error_model.auto_retried, [ErrorCategory::Transient]);
    let transient = &c.error_model.categories[3];
    assert!(transient.retryable);
    assert!(
        c.error_model
            .categories
            .iter()
            .filter(|i| i.retryable)
            .count()
            == 1
    );
}

#[test]
fn fingerprints_are_canonical_sha256_and_distinguish_tools() {
    let mut seen = std::collections::HashSet::new();
    for c in document_tools().contracts() {
        let fp = &c.fingerprint;
        for h in [
            &fp.input_schema_sha256,
            &fp.output_schema_sha256,
            &fp.contract_sha256,
        ] {
            assert!(h.starts_with("sha256:") && h.len() == 71, "{h}");
            assert!(h[7..]
                .chars()
                .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
        }
        assert!(
            seen.insert(fp.contract_sha256.clone()),
            "two tools share a contract hash"
        );
        assert!(
            fp.implementation
                .starts_with("tool-contract-examples@0.1.0"),
            "{}",
            fp.implementation
        );
        assert_eq!(fp.policy_version, c.policy_version);
        // The input hash is the hash of the schema without its versioned `$id`.
        let mut schema = c.input_schema.clone();
        schema.as_object_mut().unwrap().remove("$id");
        assert_eq!(
            fp.input_schema_sha256,
            tool_contract::canonical::sha256(&schema)
        );
    }
}

#[test]
fn contract_hash_changes_with_any_policy_field() {
    let base = SendEmail::contract().clone();
    let rehash = |c: &ToolContract| {
        let mut v = serde_json::to_value(c).unwrap();
        v.as_object_mut().unwrap().remove("fingerprint");
        tool_contract::canonical::sha256(&v)
    };
    assert_eq!(rehash(&base), base.fingerprint.contract_sha256);
    let mut longer = base.clone();
    longer.timeout_ms = 2001;
    assert_ne!(rehash(&longer), base.fingerprint.contract_sha256);
    let mut softer = base.clone();
    softer.approval = ApprovalPolicy::Conditional;
    assert_ne!(rehash(&softer), base.fingerprint.contract_sha256);
}

#[test]
fn contracts_are_built_once() {
    assert!(std::ptr::eq(SendEmail::contract(), SendEmail::contract()));
    // `contract()` is `#[inline]`: the copy compiled into the example crate (its toolset
    // registers the tool there) and the one compiled here must share the one static.
    let registered = tool_contract_examples::toolset()
        .contracts()
        .find(|c| c.name == "send_email")
        .expect("the example toolset has send_email");
    assert!(std::ptr::eq(registered, SendEmail::contract()));
    let _ = json!(null);
}
