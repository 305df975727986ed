//! Standing approvals: a rule approves the calls it matches without asking, each use counted
//! once; a call outside the rule always asks a human.

use std::sync::Arc;
use std::time::Duration;

use proptest::prelude::*;
use serde_json::{json, Value};
use tool_contract::approval::ApprovalKey;
use tool_contract::clock::ManualClock;
use tool_contract::flow::Session;
use tool_contract::receipt::{ApprovalOutcome, MemorySink};
use tool_contract::standing::{StandingRule, StandingRuleBuilder};
use tool_contract::store::MemoryStore;
use tool_contract::{Observation, Prepared, Registry, RegistryError, ToolContext};
use tool_contract_examples::{
    CreateDraftTicket, DocumentStore, ReadDocumentSpan, SearchDocuments, SendEmail,
};

const T0: u64 = 1_800_000_000_000;

fn rule(id: &str, tool: &str) -> StandingRuleBuilder {
    StandingRule::builder(id, tool)
        .versions("^1")
        .tenant("acme")
        .expires_at_ms(T0 + 60_000)
        .max_uses(2)
        .granted_by("user:lee")
}

fn colleagues_only() -> Value {
    json!({"properties": {"to": {"type": "string", "pattern": "@acme\\.test$"}}, "required": ["to"]})
}

struct Fixture {
    reg: Registry,
    clock: ManualClock,
    sink: Arc<MemorySink>,
    mail: DocumentStore,
}

fn fixture(rules: Vec<StandingRule>, store: Arc<MemoryStore>) -> Fixture {
    let clock = ManualClock::new(T0);
    let sink = Arc::new(MemorySink::new());
    let mut builder = Registry::builder()
        .tool(SendEmail)
        .tool(CreateDraftTicket)
        .tool(ReadDocumentSpan)
        .tool(SearchDocuments)
        .approval_key(ApprovalKey::new(&[9u8; 32]).unwrap())
        .approval_store(store)
        .clock(clock.clone())
        .receipts(Arc::clone(&sink));
    for r in rules {
        builder = builder.standing_rule(r);
    }
    Fixture {
        reg: builder.build().unwrap(),
        clock,
        sink,
        mail: DocumentStore::seeded(),
    }
}

impl Fixture {
    fn ctx(&self, principal: &str, tenant: Option<&str>) -> ToolContext {
        let mut b = ToolContext::builder()
            .principal(principal)
            .capabilities(["mail:send", "tickets:create", "documents:read"])
            .state(self.mail.clone());
        if let Some(t) = tenant {
            b = b.tenant(t);
        }
        b.build()
    }
}

fn email(to: &str, subject: &str) -> String {
    json!({"name": "send_email", "arguments": {"to": to, "subject": subject, "body": "Hello."}})
        .to_string()
}

fn asked(obs: &Observation) -> bool {
    obs.code() == Some("APPROVAL_REQUIRED")
}

#[tokio::test]
async fn a_matching_call_runs_without_asking_and_its_receipt_names_the_rule() {
    let fx = fixture(
        vec![rule("mail-colleagues", "send_email")
            .constraints(colleagues_only())
            .build()
            .unwrap()],
        Arc::new(MemoryStore::new()),
    );
    let kim = fx.ctx("user:kim", Some("acme"));
    match fx.reg.prepare_raw(&email("lee@acme.test", "Lunch"), &kim) {
        Ok(Prepared::Ready(call)) => assert_eq!(call.standing_rule(), Some("mail-colleagues")),
        other => panic!("the rule approves this call: {other:?}"),
    }
    let obs = fx.reg.handle(&email("lee@acme.test", "Lunch"), &kim).await;
    assert!(obs.ok, "{}", obs.to_value());
    assert_eq!(fx.mail.sent_mail().len(), 1);
    let a = fx.sink.receipts().pop().unwrap().approval.unwrap();
    assert_eq!(a.decision, ApprovalOutcome::StandingRule);
    assert_eq!(a.rule_id.as_deref(), Some("mail-colleagues"));
    assert_eq!(a.rule_use, Some(1));
    assert_eq!(a.approver.as_deref(), Some("user:lee"));
    assert!(a.digest.unwrap().starts_with("sha256:"));
    let ran = fx.sink.receipts().pop().unwrap().executed.unwrap();
    assert!(
        ran.gates.contains(&"approval".to_owned()),
        "{:?}",
        ran.gates
    );

    // Outside the constraints: a human is asked, nothing is sent.
    let obs = fx.reg.handle(&email("x@evil.example", "Lunch"), &kim).await;
    assert!(asked(&obs), "{}", obs.to_value());
    let pending = fx.sink.receipts().pop().unwrap().approval.unwrap();
    assert_eq!(pending.decision, ApprovalOutcome::Pending);
    assert_eq!(fx.mail.sent_mail().len(), 1);
}

#[tokio::test]
async fn uses_run_out_then_a_human_is_asked_and_replays_use_nothing() {
    let fx = fixture(
        vec![rule("two", "send_email").build().unwrap()],
        Arc::new(MemoryStore::new()),
    );
    let kim = fx.ctx("user:kim", Some("acme"));
    assert!(fx.reg.handle(&email("a@acme.test", "One"), &kim).await.ok);
    // The same call again is a replay: the rule's second use is still there.
    let replay = fx.reg.handle(&email("a@acme.test", "One"), &kim).await;
    assert_eq!(replay.meta.idempotency.as_deref(), Some("replayed"));
    let obs = fx.reg.handle(&email("b@acme.test", "Two"), &kim).await;
    assert!(obs.ok, "{}", obs.to_value());
    let uses: Vec<Option<u64>> = fx
        .sink
        .receipts()
        .iter()
        .filter_map(|r| r.approval.as_ref().map(|a| a.rule_use))
        .collect();
    assert_eq!(uses, [Some(1), None, Some(2)], "the replay counted nothing");
    // Used up: the next call is refused, then the registry asks a human.
    let obs = fx.reg.handle(&email("c@acme.test", "Three"), &kim).await;
    assert_eq!(
        obs.code(),
        Some("APPROVAL_RULE_EXHAUSTED"),
        "{}",
        obs.to_value()
    );
    assert_eq!(obs.meta.attempts, 0);
    let obs = fx.reg.handle(&email("c@acme.test", "Three"), &kim).await;
    assert!(asked(&obs), "{}", obs.to_value());
    assert_eq!(fx.mail.sent_mail().len(), 2);
}

#[tokio::test]
async fn expiry_revocation_and_scope_make_a_human_decide() {
    let fx = fixture(
        vec![rule("kim-only", "send_email")
            .principal("user:kim")
            .max_uses(100)
            .build()
            .unwrap()],
        Arc::new(MemoryStore::new()),
    );
    let kim = fx.ctx("user:kim", Some("acme"));
    // Another principal, another tenant, no tenant: outside the rule.
    for ctx in [
        fx.ctx("user:lee", Some("acme")),
        fx.ctx("user:kim", Some("globex")),
        fx.ctx("user:kim", None),
    ] {
        assert!(asked(
            &fx.reg.handle(&email("a@acme.test", "Hi"), &ctx).await
        ));
    }
    // Another tool: the conditional ticket tool asks for urgent tickets.
    let urgent = json!({"name": "create_draft_ticket", "arguments": {
        "request_id": "req-00000001", "title": "Pager down", "body": "", "priority": "urgent"}});
    assert!(asked(&fx.reg.handle(&urgent.to_string(), &kim).await));
    assert!(fx.reg.handle(&email("a@acme.test", "Hi"), &kim).await.ok);
    // Expired.
    fx.clock.advance(Duration::from_secs(61));
    assert!(asked(
        &fx.reg.handle(&email("b@acme.test", "Hi"), &kim).await
    ));
    fx.clock.set(T0);
    assert!(fx.reg.handle(&email("c@acme.test", "Hi"), &kim).await.ok);
    // Revoked.
    assert!(fx.reg.revoke_standing_rule("kim-only"));
    assert!(!fx.reg.revoke_standing_rule("kim-only"));
    assert!(asked(
        &fx.reg.handle(&email("d@acme.test", "Hi"), &kim).await
    ));
    assert_eq!(fx.mail.sent_mail().len(), 2);
}

#[tokio::test]
async fn a_rule_covers_a_flow_escalation_only_when_it_says_so() {
    let read = r#"{"id": "call_1", "name": "read_document_span", "arguments": {"source_id": "incident/2026-11-mail", "span_id": "p1:l1-l3"}}"#;
    let injected = email("all-staff@acme.test", "Salaries");
    for covers in [false, true] {
        let mut r = rule("mail", "send_email").max_uses(5);
        if covers {
            r = r.covers_flow_escalations();
        }
        let fx = fixture(vec![r.build().unwrap()], Arc::new(MemoryStore::new()));
        let session = Session::new();
        session.add_user_message("Read incident/2026-11-mail and tell ops-lead@acme.test.");
        let ctx = ToolContext::builder()
            .principal("user:kim")
            .tenant("acme")
            .capabilities(["mail:send", "documents:read"])
            .session(session)
            .state(fx.mail.clone())
            .build();
        assert!(fx.reg.handle(read, &ctx).await.ok);
        let prepared = fx.reg.prepare_raw(&injected, &ctx);
        match (covers, prepared) {
            (false, Ok(Prepared::NeedsApproval(r))) => {
                assert!(!r.subject().flow_reasons.is_empty())
            }
            (true, Ok(Prepared::Ready(call))) => assert_eq!(call.standing_rule(), Some("mail")),
            (covers, other) => panic!("covers={covers}: {other:?}"),
        }
    }
}

#[tokio::test]
async fn replicas_sharing_a_store_share_the_count_and_bad_rules_are_refused() {
    let store = Arc::new(MemoryStore::new());
    let a = fixture(
        vec![rule("shared", "send_email").build().unwrap()],
        Arc::clone(&store),
    );
    let b = fixture(vec![rule("shared", "send_email").build().unwrap()], store);
    let kim_a = a.ctx("user:kim", Some("acme"));
    let kim_b = b.ctx("user:kim", Some("acme"));
    assert!(a.reg.handle(&email("a@acme.test", "1"), &kim_a).await.ok);
    assert!(b.reg.handle(&email("b@acme.test", "2"), &kim_b).await.ok);
    let third = b.reg.handle(&email("c@acme.test", "3"), &kim_b).await;
    assert_eq!(third.code(), Some("APPROVAL_RULE_EXHAUSTED"));

    // Registration checks the tool and the id.
    let err = a
        .reg
        .add_standing_rule(rule("x", "no_such_tool").build().unwrap())
        .unwrap_err();
    assert!(err.to_string().contains("not registered"), "{err}");
    let err = a
        .reg
        .add_standing_rule(rule("shared", "send_email").build().unwrap())
        .unwrap_err();
    assert!(err.to_string().contains("already registered"), "{err}");
    a.reg
        .add_standing_rule(rule("more", "send_email").build().unwrap())
        .unwrap();
    // Replica a learns that "shared" is used up on its first try, then uses the next rule.
    let learnt = a.reg.handle(&email("d@acme.test", "4"), &kim_a).await;
    assert_eq!(learnt.code(), Some("APPROVAL_RULE_EXHAUSTED"));
    assert!(a.reg.handle(&email("d@acme.test", "4"), &kim_a).await.ok);
    let a_rule = a.sink.receipts().pop().unwrap().approval.unwrap().rule_id;
    assert_eq!(a_rule.as_deref(), Some("more"));
    let built = Registry::builder()
        .tool(SendEmail)
        .standing_rule(rule("t", "send_mail").build().unwrap())
        .build();
    assert!(matches!(built, Err(RegistryError::StandingRule(_))));
}

// ---- the property: never outside the rule ----

#[derive(Clone, Copy, Debug)]
enum Versions {
    Any,
    Caret12,
    Exact100,
    Two,
}

impl Versions {
    fn req(self) -> &'static str {
        match self {
            Versions::Any => "*",
            Versions::Caret12 => "^1.2",
            Versions::Exact100 => "=1.0.0",
            Versions::Two => ">=2",
        }
    }
    fn admits(self, version: &str) -> bool {
        match self {
            Versions::Any => true,
            Versions::Caret12 => version == "1.2.0",
            Versions::Exact100 => version == "1.0.0",
            Versions::Two => false,
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum Constraint {
    None,
    Colleagues,
    ShortSubject,
    NotUrgent,
}

impl Constraint {
    fn schema(self) -> Value {
        match self {
            Constraint::None => json!(true),
            Constraint::Colleagues => colleagues_only(),
            Constraint::ShortSubject => json!({"properties": {"subject": {"maxLength": 4}}}),
            Constraint::NotUrgent => {
                json!({"properties": {"priority": {"not": {"const": "urgent"}}}})
            }
        }
    }
    /// The same constraint, written out by hand over the call's arguments.
    fn admits(self, call: &Call) -> bool {
        match (self, call.tool) {
            (Constraint::None, _) => true,
            (Constraint::Colleagues, Tool::Email) => call.to.ends_with("@acme.test"),
            (Constraint::Colleagues, Tool::Ticket) => false, // no `to`: required fails
            (Constraint::ShortSubject, Tool::Email) => call.subject.chars().count() <= 4,
            (Constraint::ShortSubject, Tool::Ticket) => true,
            (Constraint::NotUrgent, Tool::Email) => true,
            (Constraint::NotUrgent, Tool::Ticket) => false, // only urgent tickets ask
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Tool {
    Email,
    Ticket,
}

impl Tool {
    fn name(self) -> &'static str {
        match self {
            Tool::Email => "send_email",
            Tool::Ticket => "create_draft_ticket",
        }
    }
    fn version(self) -> &'static str {
        match self {
            Tool::Email => "1.2.0",
            Tool::Ticket => "1.0.0",
        }
    }
}

#[derive(Clone, Debug)]
struct RuleSpec {
    tool: Tool,
    versions: Versions,
    principal: Option<&'static str>,
    tenant: Option<&'static str>,
    constraint: Constraint,
    expires_in_ms: u64,
    max_uses: u64,
}

#[derive(Clone, Debug)]
struct Call {
    tool: Tool,
    principal: &'static str,
    tenant: Option<&'static str>,
    to: &'static str,
    subject: &'static str,
    /// Clock advance before the call.
    wait_ms: u64,
}

fn rule_spec() -> impl Strategy<Value = RuleSpec> {
    (
        prop_oneof![Just(Tool::Email), Just(Tool::Ticket)],
        prop_oneof![
            Just(Versions::Any),
            Just(Versions::Caret12),
            Just(Versions::Exact100),
            Just(Versions::Two)
        ],
        prop_oneof![Just(None), Just(Some("user:kim")), Just(Some("user:lee"))],
        prop_oneof![Just(None), Just(Some("acme")), Just(Some("globex"))],
        prop_oneof![
            Just(Constraint::None),
            Just(Constraint::Colleagues),
            Just(Constraint::ShortSubject),
            Just(Constraint::NotUrgent)
        ],
        0u64..3_000,
        1u64..4,
    )
        .prop_map(
            |(tool, versions, principal, tenant, constraint, expires_in_ms, max_uses)| RuleSpec {
                tool,
                versions,
                principal,
                tenant,
                constraint,
                expires_in_ms,
                max_uses,
            },
        )
}

fn call() -> impl Strategy<Value = Call> {
    (
        prop_oneof![Just(Tool::Email), Just(Tool::Ticket)],
        prop_oneof![Just("user:kim"), Just("user:lee")],
        prop_oneof![Just(None), Just(Some("acme")), Just(Some("globex"))],
        prop_oneof![Just("lee@acme.test"), Just("x@evil.example")],
        prop_oneof![Just("Hi"), Just("Quarterly numbers")],
        0u64..800,
    )
        .prop_map(|(tool, principal, tenant, to, subject, wait_ms)| Call {
            tool,
            principal,
            tenant,
            to,
            subject,
            wait_ms,
        })
}

fn raw(call: &Call, n: usize) -> String {
    match call.tool {
        // A distinct body per call: no call is a replay of another.
        Tool::Email => json!({"name": "send_email", "arguments": {
            "to": call.to, "subject": call.subject, "body": format!("Message {n}.")}}),
        Tool::Ticket => json!({"name": "create_draft_ticket", "arguments": {
            "request_id": format!("req-{n:08}"), "title": "Pager down", "body": call.subject,
            "priority": "urgent"}}),
    }
    .to_string()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Random rules against random calls: a call runs without asking exactly when it matches
    /// the rule (tool, version, principal, tenant, constraints, expiry, uses left); every
    /// other call runs nothing.
    #[test]
    fn a_call_runs_unasked_iff_it_matches_the_rule(
        spec in rule_spec(),
        calls in proptest::collection::vec(call(), 1..8),
    ) {
        let mut b = StandingRule::builder("r", spec.tool.name())
            .versions(spec.versions.req())
            .constraints(spec.constraint.schema())
            .expires_at_ms(T0 + spec.expires_in_ms)
            .max_uses(spec.max_uses)
            .granted_by("user:lee");
        if let Some(p) = spec.principal { b = b.principal(p); }
        if let Some(t) = spec.tenant { b = b.tenant(t); }
        let fx = fixture(vec![b.build().unwrap()], Arc::new(MemoryStore::new()));
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let mut now = T0;
        let mut used = 0u64;
        for (n, c) in calls.iter().enumerate() {
            now += c.wait_ms;
            fx.clock.set(now);
            let matches = spec.tool == c.tool
                && spec.versions.admits(c.tool.version())
                && spec.principal.is_none_or(|p| p == c.principal)
                && spec.tenant.is_none_or(|t| Some(t) == c.tenant)
                && spec.constraint.admits(c)
                && now < T0 + spec.expires_in_ms
                && used < spec.max_uses;
            let sent_before = fx.mail.sent_mail().len();
            let obs = rt.block_on(fx.reg.handle(&raw(c, n), &fx.ctx(c.principal, c.tenant)));
            if matches {
                used += 1;
                if c.tool == Tool::Ticket && c.tenant.is_none() {
                    // Approved and run: the handler itself needs a tenant.
                    prop_assert_eq!(obs.code(), Some("TENANT_MISSING"), "{}", obs.to_value());
                } else {
                    prop_assert!(obs.ok, "call {n} {c:?} should run under {spec:?}: {}", obs.to_value());
                }
                let a = fx.sink.receipts().pop().unwrap().approval.unwrap();
                prop_assert_eq!(a.decision, ApprovalOutcome::StandingRule);
                prop_assert_eq!(a.rule_use, Some(used));
            } else {
                prop_assert!(!obs.ok, "call {n} {c:?} ran outside {spec:?}");
                prop_assert!(
                    matches!(obs.code(), Some("APPROVAL_REQUIRED" | "APPROVAL_RULE_EXHAUSTED")),
                    "{}", obs.to_value()
                );
                prop_assert_eq!(obs.meta.attempts, 0);
                prop_assert_eq!(fx.mail.sent_mail().len(), sent_before);
            }
        }
    }
}

#[test]
fn arguments_that_are_not_an_object_match_no_rule() {
    // A constraint schema without `"type": "object"` accepts any string; the rule must not.
    let rule = tool_contract::standing::StandingRule::builder("r-text", "send_email")
        .versions("^1")
        .expires_at_ms(u64::MAX)
        .max_uses(5)
        .granted_by("user:lee")
        .constraints(json!({
            "properties": {"to": {"const": "lee@acme.test"}},
            "required": ["to"]
        }))
        .build()
        .unwrap();
    let contract = <tool_contract_examples::SendEmail as tool_contract::Tool>::contract();
    let ctx = tool_contract::ToolContext::builder().tenant("acme").build();
    let text = json!(r#"{"to": "all-staff@acme.test"}"#);
    assert!(!rule.matches(contract, &text, &ctx, false, 0));
    assert!(rule.matches(contract, &json!({"to": "lee@acme.test"}), &ctx, false, 0));
}
