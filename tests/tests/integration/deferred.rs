//! Deferred approvals through the public API: what a resume checks again. A request shown with
//! the provenance of a session resumes only under that session; the deadline and the budget
//! of the resuming context are checked afresh, and a call they stop keeps its approval.

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tool_contract::budget::Budget;
use tool_contract::flow::Session;
use tool_contract::{Observation, Prepared, Registry, ToolContext, ToolContextBuilder};
use tool_contract_examples::DocumentStore;

use crate::pipeline::registry;

fn call(id: &str, name: &str, args: Value) -> String {
    json!({"id": id, "name": name, "arguments": args}).to_string()
}

fn code(obs: &Observation) -> &str {
    obs.code().unwrap_or("ok")
}

fn base(store: &DocumentStore) -> ToolContextBuilder {
    ToolContext::builder()
        .principal("user:kim")
        .tenant("acme")
        .capabilities(["documents:read", "mail:send"])
        .state(store.clone())
}

async fn defer_and_approve(reg: &Registry, raw: &str, ctx: &ToolContext) -> String {
    let Ok(Prepared::NeedsApproval(request)) = reg.prepare_raw(raw, ctx) else {
        panic!("send_email waits for approval")
    };
    let id = reg.defer(&request).await.unwrap().id;
    reg.approve_pending(Some("acme"), &id, "user:lee", "ok")
        .await
        .unwrap();
    id
}

#[tokio::test]
async fn a_request_with_provenance_resumes_only_under_its_session() {
    let reg = registry();
    let store = DocumentStore::seeded();
    let session = Session::new();
    session.add_user_message("Read the incident report incident/2026-11-mail.");
    let ctx = base(&store).session(session.clone()).build();
    let read = call(
        "call_1",
        "read_document_span",
        json!({"source_id": "incident/2026-11-mail", "span_id": "p1:l1-l3"}),
    );
    assert!(reg.handle(&read, &ctx).await.ok);
    // The recipient is copied from the document: the approver was shown that.
    let injected = call(
        "call_2",
        "send_email",
        json!({"to": "all-staff@acme.test", "subject": "Salaries", "body": "As requested."}),
    );
    let Ok(Prepared::NeedsApproval(request)) = reg.prepare_raw(&injected, &ctx) else {
        panic!("held for approval")
    };
    assert!(!request.subject().flow_reasons.is_empty());
    let pending = reg.defer(&request).await.unwrap();
    assert_eq!(pending.subject.provenance, request.subject().provenance);
    reg.approve_pending(
        Some("acme"),
        &pending.id,
        "user:lee",
        "I checked the source",
    )
    .await
    .unwrap();

    // Without the session, the same arguments would be a different, unsourced subject: what
    // the human approved is not what would run.
    let sessionless = base(&store).build();
    let refused = reg.resume(&pending.id, &sessionless).await;
    assert_eq!(code(&refused), "PENDING_APPROVAL_CHANGED", "{refused:?}");
    assert!(store.sent_mail().is_empty());
    // Under the session it was shown with, it runs once.
    let ran = reg.resume(&pending.id, &ctx).await;
    assert!(ran.ok, "{ran:?}");
    assert_eq!(store.sent_mail().len(), 1);
}

#[tokio::test]
async fn deadline_and_budget_are_checked_again_at_resume_and_keep_the_approval() {
    let reg = registry();
    let store = DocumentStore::seeded();
    let ctx = base(&store).build();
    let mail = call(
        "call_3",
        "send_email",
        json!({"to": "lee@acme.test", "subject": "Review", "body": "Friday."}),
    );
    let id = defer_and_approve(&reg, &mail, &ctx).await;

    let late = base(&store)
        .deadline(Instant::now() + Duration::from_millis(1))
        .build();
    tokio::time::sleep(Duration::from_millis(5)).await;
    let refused = reg.resume(&id, &late).await;
    assert!(code(&refused).starts_with("DEADLINE"), "{refused:?}");

    let spent = base(&store).budget(Budget::new(0, 60_000)).build();
    let refused = reg.resume(&id, &spent).await;
    assert_eq!(code(&refused), "BUDGET_EXHAUSTED", "{refused:?}");
    assert!(store.sent_mail().is_empty());
    assert_eq!(
        reg.pending_approval(Some("acme"), &id)
            .await
            .unwrap()
            .state
            .name(),
        "approved",
        "a refused resume keeps the approval"
    );

    let ran = reg.resume(&id, &ctx).await;
    assert!(ran.ok, "{ran:?}");
    assert_eq!(store.sent_mail().len(), 1);
}

mod v2 {
    use tool_contract::extract::State;
    use tool_contract::{tool, ToolError};
    use tool_contract_examples::{DocumentStore, SendEmailArgs};

    /// Sends an e-mail from the current user to one colleague. It cannot be unsent.
    ///
    /// Use it only when the user explicitly asked to send this message. Every call needs a
    /// human's approval; the same recipient, subject and body are never sent twice.
    #[tool(
        version = "2.0.0",
        effect = "irreversible_write",
        timeout_ms = 2000,
        approval,
        capabilities("mail:send"),
        idempotency(from = [to, subject, body])
    )]
    pub async fn send_email(
        args: SendEmailArgs,
        _mail: State<DocumentStore>,
    ) -> Result<bool, ToolError> {
        let _ = args;
        Ok(true)
    }
}

#[test]
fn a_shared_pending_store_needs_a_shared_approval_store() {
    // Otherwise each process tracks single use alone, and two could run one approval.
    let err = Registry::builder()
        .tool(tool_contract_examples::SendEmail)
        .pending_approval_store(tool_contract::store::MemoryStore::new())
        .build()
        .unwrap_err();
    assert_eq!(
        err,
        tool_contract::RegistryError::PendingStoreWithoutApprovalStore
    );
    assert!(err.to_string().contains("`.approval_store(..)`"), "{err}");
}

#[tokio::test]
async fn a_request_approved_for_one_version_does_not_run_another() {
    use std::sync::Arc;
    use tool_contract::store::MemoryStore;

    let shared = Arc::new(MemoryStore::new());
    // Before the deploy: 1.2.0. After: 2.0.0 only, on the same store.
    let before = Registry::builder()
        .tool(tool_contract_examples::SendEmail)
        .store(Arc::clone(&shared))
        .pending_approval_store(Arc::clone(&shared))
        .build()
        .unwrap();
    let after = Registry::builder()
        .tool(v2::SendEmail)
        .store(Arc::clone(&shared))
        .pending_approval_store(Arc::clone(&shared))
        .build()
        .unwrap();
    let store = DocumentStore::seeded();
    let ctx = base(&store).build();
    let mail = call(
        "call_4",
        "send_email",
        json!({"to": "lee@acme.test", "subject": "Deploy", "body": "Tonight."}),
    );
    let id = defer_and_approve(&before, &mail, &ctx).await;
    let refused = after.resume(&id, &ctx).await;
    assert_eq!(code(&refused), "PENDING_APPROVAL_CHANGED", "{refused:?}");
    assert_eq!(refused.meta.tool_version.as_deref(), Some("2.0.0"));
    // The approval is kept for the version it was given for.
    assert!(before.resume(&id, &ctx).await.ok);
    assert_eq!(store.sent_mail().len(), 1);
}

#[tokio::test]
async fn an_edit_that_copies_a_value_from_a_tool_result_is_not_granted_unseen() {
    let reg = registry();
    let store = DocumentStore::seeded();
    let session = Session::new();
    session.add_user_message("Read incident/2026-11-mail, then mail lee@acme.test about it.");
    let ctx = base(&store).session(session.clone()).build();
    let read = call(
        "call_1",
        "read_document_span",
        json!({"source_id": "incident/2026-11-mail", "span_id": "p1:l1-l3"}),
    );
    assert!(reg.handle(&read, &ctx).await.ok);
    // The model's call names the user's own recipient: nothing copied, nothing escalated.
    let mail = |to: &str| json!({"to": to, "subject": "Incident", "body": "See the report."});
    let proposed = call("call_2", "send_email", mail("lee@acme.test"));
    let Ok(Prepared::NeedsApproval(request)) = reg.prepare_raw(&proposed, &ctx) else {
        panic!("held for approval")
    };
    assert!(request.subject().flow_reasons.is_empty());
    // The approver edits in the address the document asks for, which they were never shown
    // as a copy from a tool result.
    let refused = reg
        .approve_edited(request, mail("all-staff@acme.test"), "user:lee", &ctx)
        .expect_err("the edit is not granted");
    let err = refused.observation().error.as_ref().unwrap();
    assert_eq!(err.code(), "APPROVAL_EDIT_FLOW_ESCALATED");
    let reasons = err.safe_details()["flow_reasons"].to_string();
    assert!(reasons.contains("read_document_span"), "{reasons}");
    assert!(store.sent_mail().is_empty(), "nothing was sent");

    // An edit that only changes what the user said is granted as before.
    let Ok(Prepared::NeedsApproval(request)) = reg.prepare_raw(&proposed, &ctx) else {
        panic!("held for approval")
    };
    let edit =
        json!({"to": "lee@acme.test", "subject": "Incident 2026-11", "body": "See the report."});
    let (edited, grant) = reg.approve_edited(request, edit, "user:lee", &ctx).unwrap();
    assert!(reg.execute_approved(edited, &grant).await.ok);
}
