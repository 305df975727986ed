//! Audit: every approval decision of a session can be rebuilt from its receipts alone.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{json, Value};
use tool_contract::approval::{ApprovalDecision, ApprovalGrant, ApprovalKey};
use tool_contract::clock::ManualClock;
use tool_contract::receipt::MemorySink;
use tool_contract::standing::StandingRule;
use tool_contract::{ApprovalRequest, Prepared, Registry, ToolContext};
use tool_contract_examples::{CreateDraftTicket, DocumentStore, SendEmail};

const T0: u64 = 1_800_000_000_000;

/// One decision as an auditor reads it off a receipt.
#[derive(Debug, PartialEq)]
struct Decision {
    decision: String,
    principal: String,
    tenant: String,
    approver: Option<String>,
    grant_id: Option<String>,
    rule_id: Option<String>,
    reason: Option<String>,
    /// The recipient the model proposed, and the one that was approved, when they differ.
    edited: Option<(String, String)>,
    ran: bool,
}

/// Rebuilds the decisions from receipts as a sink stored them: JSON only, no live objects.
fn rebuild(receipts: &[Value]) -> BTreeMap<String, Decision> {
    let text = |v: &Value| v.as_str().map(str::to_owned);
    receipts
        .iter()
        .filter(|r| !r["approval"].is_null())
        .map(|r| {
            let a = &r["approval"];
            let edited = (a["decision"] == "approved_edited").then(|| {
                (
                    a["proposed_arguments"]["to"].as_str().unwrap().to_owned(),
                    a["approved_arguments"]["to"].as_str().unwrap().to_owned(),
                )
            });
            let d = Decision {
                decision: text(&a["decision"]).unwrap(),
                principal: text(&a["principal"]).unwrap(),
                tenant: text(&a["tenant"]).unwrap(),
                approver: text(&a["approver"]),
                grant_id: text(&a["grant_id"]),
                rule_id: text(&a["rule_id"]),
                reason: text(&a["reason"]),
                edited,
                ran: r["outcome"]["ok"] == true,
            };
            (text(&r["call_id"]).unwrap(), d)
        })
        .collect()
}

fn email(id: &str, to: &str, subject: &str) -> String {
    json!({"id": id, "name": "send_email", "arguments": {"to": to, "subject": subject, "body": "Hello."}})
        .to_string()
}

#[tokio::test]
async fn every_approval_decision_of_a_session_is_rebuilt_from_its_receipts() {
    let sink = Arc::new(MemorySink::new());
    let reg = Registry::builder()
        .tool(SendEmail)
        .tool(CreateDraftTicket)
        .approval_key(ApprovalKey::new(&[3u8; 32]).unwrap())
        .clock(ManualClock::new(T0))
        .receipts(Arc::clone(&sink))
        .standing_rule(
            StandingRule::builder("rule-team", "send_email")
                .versions("^1.2")
                .tenant("acme")
                .constraints(json!({"properties": {"to": {"const": "team@acme.test"}}}))
                .expires_at_ms(T0 + 3_600_000)
                .max_uses(5)
                .granted_by("user:boss")
                .build()
                .unwrap(),
        )
        .build()
        .unwrap();
    let mail = DocumentStore::new();
    let ctx = ToolContext::builder()
        .principal("user:kim")
        .tenant("acme")
        .capabilities(["mail:send", "tickets:create"])
        .state(mail.clone())
        .build();
    let mut grants: BTreeMap<&str, String> = BTreeMap::new();

    // No approval needed: no record.
    let ticket = r#"{"id": "c0", "name": "create_draft_ticket", "arguments": {"request_id": "req-00000001", "title": "Printer jammed", "body": "", "priority": "normal"}}"#;
    assert!(reg.handle(ticket, &ctx).await.ok);
    // Approved as proposed.
    let (id, obs) = ("c1", {
        let raw = email("c1", "lee@acme.test", "Minutes");
        let Ok(Prepared::NeedsApproval(req)) = reg.prepare_raw(&raw, &ctx) else {
            panic!()
        };
        let grant = reg.grant(&req, "user:lee");
        grants.insert("c1", grant.grant_id().to_owned());
        reg.execute_approved(req, &grant).await
    });
    assert!(obs.ok, "{id}: {}", obs.to_value());
    // Denied.
    let obs = reg
        .handle_with_approver(
            &email("c2", "all@acme.test", "Salaries"),
            &ctx,
            |_: &ApprovalRequest| async { ApprovalDecision::deny("user:lee", "not to everyone") },
        )
        .await;
    assert_eq!(obs.code(), Some("APPROVAL_DENIED"));
    // Edited.
    let raw = email("c3", "all@acme.test", "Offsite");
    let Ok(Prepared::NeedsApproval(req)) = reg.prepare_raw(&raw, &ctx) else {
        panic!()
    };
    let mut args = req.subject().arguments.clone();
    args["to"] = json!("ops@acme.test");
    let (edited, grant) = reg.approve_edited(req, args, "user:lee", &ctx).unwrap();
    grants.insert("c3", grant.grant_id().to_owned());
    assert!(reg.execute_approved(edited, &grant).await.ok);
    // A standing rule.
    assert!(
        reg.handle(&email("c4", "team@acme.test", "Standup"), &ctx)
            .await
            .ok
    );
    // Pending: nobody decided.
    let obs = reg
        .handle(&email("c5", "cfo@acme.test", "Budget"), &ctx)
        .await;
    assert_eq!(obs.code(), Some("APPROVAL_REQUIRED"));
    // A tampered grant: the call still waits.
    let raw = email("c6", "cfo@acme.test", "Budget v2");
    let Ok(Prepared::NeedsApproval(req)) = reg.prepare_raw(&raw, &ctx) else {
        panic!()
    };
    let mut forged = serde_json::to_value(reg.grant(&req, "user:lee")).unwrap();
    forged["approver"] = json!("user:ceo");
    let forged: ApprovalGrant = serde_json::from_value(forged).unwrap();
    let obs = reg.execute_approved(req, &forged).await;
    assert_eq!(obs.code(), Some("APPROVAL_GRANT_INVALID"));

    // The auditor has only the receipts, as JSON.
    let receipts: Vec<Value> = sink
        .receipts()
        .iter()
        .map(|r| serde_json::to_value(r).unwrap())
        .collect();
    assert_eq!(receipts.len(), 7, "one receipt per call");
    let decisions = rebuild(&receipts);
    let d = |decision: &str, approver: Option<&str>, reason: Option<&str>, ran: bool| Decision {
        decision: decision.to_owned(),
        principal: "user:kim".to_owned(),
        tenant: "acme".to_owned(),
        approver: approver.map(str::to_owned),
        grant_id: None,
        rule_id: None,
        reason: reason.map(str::to_owned),
        edited: None,
        ran,
    };
    let expected = BTreeMap::from([
        (
            "c1".to_owned(),
            Decision {
                grant_id: Some(grants["c1"].clone()),
                ..d("approved", Some("user:lee"), None, true)
            },
        ),
        (
            "c2".to_owned(),
            d("denied", Some("user:lee"), Some("not to everyone"), false),
        ),
        (
            "c3".to_owned(),
            Decision {
                grant_id: Some(grants["c3"].clone()),
                edited: Some(("all@acme.test".into(), "ops@acme.test".into())),
                ..d("approved_edited", Some("user:lee"), None, true)
            },
        ),
        (
            "c4".to_owned(),
            Decision {
                rule_id: Some("rule-team".into()),
                ..d("standing_rule", Some("user:boss"), None, true)
            },
        ),
        (
            "c5".to_owned(),
            d(
                "pending",
                None,
                Some("a human must approve this call before it runs"),
                false,
            ),
        ),
        (
            "c6".to_owned(),
            d(
                "pending",
                None,
                Some("grant refused: APPROVAL_GRANT_INVALID"),
                false,
            ),
        ),
    ]);
    assert_eq!(decisions, expected);
    // Each decision names the exact call: its digest is in the receipt.
    for r in receipts.iter().filter(|r| !r["approval"].is_null()) {
        assert!(r["approval"]["digest"]
            .as_str()
            .unwrap()
            .starts_with("sha256:"));
    }
    assert_eq!(receipts[4]["approval"]["rule_use"], 1);
    assert_eq!(mail.sent_mail().len(), 3);
}

#[derive(serde::Deserialize, schemars::JsonSchema, tool_contract::ToolArgs)]
#[serde(deny_unknown_fields)]
pub struct PayInvoiceArgs {
    /// The invoice to pay.
    #[schemars(length(min = 1, max = 32))]
    pub invoice: String,
}

/// Pays an invoice. It cannot be undone; every call needs approval.
#[tool_contract::tool(
    version = "1.0.0",
    effect = "irreversible_write",
    timeout_ms = 100,
    approval,
    idempotency(host)
)]
pub async fn pay_invoice(args: PayInvoiceArgs) -> Result<String, tool_contract::ToolError> {
    Ok(args.invoice)
}

/// A genuine grant offered again (the host chose a new key, so the store does not replay):
/// refused, and the receipt says the call still waits, naming the used grant.
#[tokio::test]
async fn a_used_grant_leaves_the_next_call_pending_in_its_receipt() {
    use tool_contract::extract::IdempotencyKey;
    let sink = Arc::new(MemorySink::new());
    let reg = Registry::builder()
        .tool(PayInvoice)
        .clock(ManualClock::new(T0))
        .receipts(Arc::clone(&sink))
        .build()
        .unwrap();
    let keyed = |k: &str| {
        ToolContext::builder()
            .principal("user:kim")
            .tenant("acme")
            .idempotency_key(IdempotencyKey::new(k).unwrap())
            .build()
    };
    let raw = r#"{"name": "pay_invoice", "arguments": {"invoice": "inv-1"}}"#;
    let Ok(Prepared::NeedsApproval(first)) = reg.prepare_raw(raw, &keyed("k1")) else {
        panic!()
    };
    let grant = reg.grant(&first, "user:lee");
    assert!(reg.execute_approved(first, &grant).await.ok);
    let Ok(Prepared::NeedsApproval(again)) = reg.prepare_raw(raw, &keyed("k2")) else {
        panic!()
    };
    let obs = reg.execute_approved(again, &grant).await;
    assert_eq!(obs.code(), Some("APPROVAL_GRANT_CONSUMED"));
    let a = sink.receipts().pop().unwrap().approval.unwrap();
    assert_eq!(a.decision.as_str(), "pending");
    assert_eq!(
        a.reason.as_deref(),
        Some("grant refused: APPROVAL_GRANT_CONSUMED")
    );
    assert_eq!(a.grant_id.as_deref(), Some(grant.grant_id()));
}

/// A host that leaves a call waiting gets the same observation as `pending_observation`, and
/// the pending decision in a receipt.
#[tokio::test]
async fn leave_pending_answers_like_pending_observation_and_records_it() {
    let sink = Arc::new(MemorySink::new());
    let reg = Registry::builder()
        .tool(SendEmail)
        .receipts(Arc::clone(&sink))
        .build()
        .unwrap();
    let ctx = ToolContext::builder()
        .principal("user:kim")
        .tenant("acme")
        .capability("mail:send")
        .build();
    let raw = email("c1", "lee@acme.test", "Minutes");
    let Ok(Prepared::NeedsApproval(req)) = reg.prepare_raw(&raw, &ctx) else {
        panic!()
    };
    let shown = req.pending_observation();
    let digest = req.digest().to_owned();
    assert!(
        sink.receipts().is_empty(),
        "pending_observation records nothing"
    );
    let obs = reg.leave_pending(req);
    assert_eq!(obs.code(), shown.code());
    assert_eq!(obs.code(), Some("APPROVAL_REQUIRED"));
    assert_eq!(
        obs.error.as_ref().unwrap().safe_details(),
        shown.error.as_ref().unwrap().safe_details()
    );
    assert_eq!(obs.meta.call_id, "c1");
    let receipts = sink.receipts();
    assert_eq!(receipts.len(), 1);
    let a = receipts[0].approval.as_ref().unwrap();
    assert_eq!(a.decision.as_str(), "pending");
    assert_eq!(a.digest.as_deref(), Some(digest.as_str()));
}
