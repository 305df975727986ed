//! The expansions use absolute paths only: they compile where the prelude's names are shadowed
//! and under strict lints (serde `test_gen.rs`, thiserror `test_lints.rs`).
#![deny(
    missing_docs,
    unused_qualifications,
    unused_imports,
    non_camel_case_types
)]
#![allow(dead_code)]

/// Shadows everything an unhygienic expansion might name bare.
mod shadowed {
    #![allow(missing_docs)]
    struct Result;
    struct Ok;
    struct Err;
    struct Option;
    struct Some;
    struct None;
    struct String;
    struct Vec;
    struct Box;
    struct Send;
    struct Sync;
    struct Future;
    struct OnceLock;
    mod core {}
    mod std {}

    #[derive(::serde::Deserialize, ::schemars::JsonSchema, ::tool_contract::ToolArgs)]
    #[serde(deny_unknown_fields)]
    #[tool(semantic = check)]
    pub struct LookupOrderArgs {
        /// The order number.
        #[tool(idempotency_key)]
        #[schemars(length(min = 1, max = 40))]
        pub order_id: ::std::string::String,
        /// How many lines to show.
        #[schemars(range(min = 1, max = 10))]
        pub lines: u8,
    }

    fn check(
        _args: &LookupOrderArgs,
        _ctx: &::tool_contract::ToolContext,
    ) -> ::std::vec::Vec<::tool_contract::ValidationIssue> {
        ::std::vec::Vec::new()
    }

    #[derive(::serde::Serialize, ::schemars::JsonSchema)]
    pub struct Order {
        pub id: ::std::string::String,
    }

    /// Looks up one order by number. Use it when the user names an order; not for searches.
    #[::tool_contract::tool(
        version = "1.0.0",
        effect = "reversible_write",
        timeout_ms = 100,
        approval = "conditional",
        retry(max_attempts = 2)
    )]
    pub async fn lookup_order(
        args: LookupOrderArgs,
        tenant: ::tool_contract::extract::Tenant,
    ) -> ::core::result::Result<Order, ::tool_contract::ToolError> {
        let _ = tenant;
        ::core::result::Result::Ok(Order { id: args.order_id })
    }

    impl ::tool_contract::ApprovalCondition for LookupOrderArgs {
        fn requires_approval(&self, _ctx: &::tool_contract::ToolContext) -> bool {
            self.lines > 5
        }
    }
}

#[test]
fn expansion_is_hygienic() {
    use tool_contract::Tool;
    let c = shadowed::LookupOrder::contract();
    assert_eq!(c.name, "lookup_order");
    let ctx = tool_contract::ToolContext::builder().tenant("acme").build();
    let args = shadowed::LookupOrderArgs {
        order_id: "o-1".into(),
        lines: 7,
    };
    assert!(shadowed::LookupOrder::requires_approval(&args, &ctx));
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let out = rt.block_on(shadowed::LookupOrder.call(args, &ctx)).unwrap();
    assert_eq!(out.id, "o-1");
}
