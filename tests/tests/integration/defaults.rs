use serde_json::json;
use tool_contract::schema::default_mismatches;
use tool_contract_examples::{SearchDocumentsArgs, SourceType};

#[test]
fn search_defaults_in_the_schema_are_what_serde_applies() {
    let mismatches = default_mismatches::<SearchDocumentsArgs>(&json!({"query": "refund policy"}));
    assert!(mismatches.is_empty(), "{mismatches:?}");
    let args: SearchDocumentsArgs =
        serde_json::from_value(json!({"query": "refund policy"})).unwrap();
    assert_eq!(args.top_k, 8);
    assert_eq!(
        args.source_types.into_iter().collect::<Vec<_>>(),
        [SourceType::Policy, SourceType::Manual]
    );
    assert_eq!(args.date_from, None);
}

/// The check itself must fail when schema and serde disagree, or it proves nothing.
#[test]
fn a_lying_default_is_caught() {
    #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct Lying {
        #[serde(default = "three")]
        #[schemars(default = "five")]
        top_k: u8,
    }
    fn three() -> u8 {
        3
    }
    fn five() -> u8 {
        5
    }
    let mismatches = default_mismatches::<Lying>(&json!({}));
    assert_eq!(mismatches, ["top_k: schema says 5, serde applies 3"]);
}

#[test]
fn a_minimal_instance_that_sets_the_default_is_reported() {
    let mismatches =
        default_mismatches::<SearchDocumentsArgs>(&json!({"query": "refund", "top_k": 8}));
    assert_eq!(mismatches.len(), 1);
    assert!(mismatches[0].starts_with("top_k"));
    let bad = default_mismatches::<SearchDocumentsArgs>(&json!({"top_k": 8}));
    assert!(bad[0].contains("does not deserialize"));
}
