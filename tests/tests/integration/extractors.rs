use serde_json::json;
use tool_contract::extract::{FromToolContext, IdempotencyKey, State, Tenant};
use tool_contract::{DynTool, ErrorCategory, Tool, ToolContext};
use tool_contract_examples::{
    DocumentStore, ReadDocumentSpan, SearchDocuments, SearchDocumentsArgs, SendEmail, SendEmailArgs,
};

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn ctx(tenant: &str) -> ToolContext {
    ToolContext::builder()
        .tenant(tenant)
        .principal("user:1")
        .state(DocumentStore::seeded())
        .build()
}

#[test]
fn tenant_comes_from_the_context_so_other_tenants_stay_invisible() {
    let args: SearchDocumentsArgs =
        serde_json::from_value(json!({"query": "payroll employees"})).unwrap();
    let acme = rt()
        .block_on(SearchDocuments.call(args.clone(), &ctx("acme")))
        .unwrap();
    assert!(
        acme.items.is_empty(),
        "acme saw another tenant's payroll: {:?}",
        acme.items
    );
    let globex = rt()
        .block_on(SearchDocuments.call(args, &ctx("globex")))
        .unwrap();
    assert_eq!(globex.items.len(), 1);
    assert_eq!(globex.items[0].source_id, "manual/payroll");
}

#[test]
fn missing_trusted_context_is_an_error_envelope_not_a_panic() {
    let args = json!({"source_id": "policy/refund", "span_id": "p3:l12-l28"});
    let no_tenant = ToolContext::builder()
        .state(DocumentStore::seeded())
        .build();
    let err = rt()
        .block_on(ReadDocumentSpan.call_value(args.clone(), &no_tenant))
        .unwrap_err();
    assert_eq!(
        (err.category(), err.code()),
        (ErrorCategory::Unauthorized, "TENANT_MISSING")
    );

    let no_store = ToolContext::builder().tenant("acme").build();
    let err = rt()
        .block_on(ReadDocumentSpan.call_value(args.clone(), &no_store))
        .unwrap_err();
    assert_eq!(
        (err.category(), err.code()),
        (ErrorCategory::Internal, "STATE_MISSING")
    );
    assert!(
        !err.message().contains("DocumentStore"),
        "the type name leaked: {}",
        err.message()
    );

    let ok = rt()
        .block_on(ReadDocumentSpan.call_value(args, &ctx("acme")))
        .unwrap();
    assert_eq!(
        ok["text"],
        "The 2026 refund policy takes effect on 2026-07-01."
    );
}

#[test]
fn not_found_and_unauthorized_are_different_observations() {
    let missing = json!({"source_id": "policy/none", "span_id": "p1"});
    let err = rt()
        .block_on(ReadDocumentSpan.call_value(missing, &ctx("acme")))
        .unwrap_err();
    assert_eq!(err.category(), ErrorCategory::NotFound);
    assert_eq!(err.safe_details()["source_id"], "policy/none");
}

#[test]
fn the_idempotency_key_reaches_the_handler() {
    let args = SendEmailArgs {
        to: "kim@acme.test".into(),
        subject: "Refunds".into(),
        body: "See policy.".into(),
    };
    let key = IdempotencyKey::new("send-email-abc123").unwrap();
    let with_key = ToolContext::builder()
        .principal("user:1")
        .idempotency_key(key)
        .state(tool_contract_examples::DocumentStore::new())
        .build();
    let receipt = rt()
        .block_on(SendEmail.call(args.clone(), &with_key))
        .unwrap();
    assert_eq!(receipt.idempotency_key, "send-email-abc123");

    let without = ToolContext::builder()
        .principal("user:1")
        .state(tool_contract_examples::DocumentStore::new())
        .build();
    let err = rt().block_on(SendEmail.call(args, &without)).unwrap_err();
    assert_eq!(err.code(), "IDEMPOTENCY_KEY_UNAVAILABLE");
}

#[test]
fn idempotency_keys_are_validated() {
    assert!(IdempotencyKey::new("a").is_ok());
    assert!(IdempotencyKey::new("k".repeat(255)).is_ok());
    for bad in [
        String::new(),
        "k".repeat(256),
        "has space".into(),
        "tab\t".into(),
        "ключ".into(),
    ] {
        let err = IdempotencyKey::new(bad.clone()).unwrap_err();
        assert_eq!(err.category(), ErrorCategory::InvalidInput, "{bad:?}");
    }
    assert!(serde_json::from_value::<IdempotencyKey>(json!("bad key")).is_err());
}

#[test]
fn args_that_do_not_deserialize_are_invalid_input() {
    let err = rt()
        .block_on(SearchDocuments.call_value(json!({"query": 5}), &ctx("acme")))
        .unwrap_err();
    assert_eq!(
        (err.category(), err.code()),
        (ErrorCategory::InvalidInput, "ARGUMENTS_UNREADABLE")
    );
}

#[test]
fn custom_extractors_see_only_the_context() {
    struct AcmeOnly;
    impl FromToolContext for AcmeOnly {
        fn from_tool_context(ctx: &ToolContext) -> Result<Self, tool_contract::ToolError> {
            let tenant = Tenant::from_tool_context(ctx)?;
            if tenant.as_str() == "acme" {
                Ok(AcmeOnly)
            } else {
                Err(tool_contract::ToolError::policy_denied(
                    "ACME_ONLY",
                    "only acme may call this",
                ))
            }
        }
    }
    assert!(AcmeOnly::from_tool_context(&ctx("acme")).is_ok());
    assert_eq!(
        AcmeOnly::from_tool_context(&ctx("globex"))
            .err()
            .unwrap()
            .code(),
        "ACME_ONLY"
    );
    let State(store) = State::<DocumentStore>::from_tool_context(&ctx("acme")).unwrap();
    assert_eq!(store.of_tenant("acme").len(), 2);
}
