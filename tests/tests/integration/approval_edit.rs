//! Approving with edited arguments: the edit goes through every check again, gets its own
//! digest, and the grant binds the edit; the receipt keeps the model's call and the human's
//! side by side.

use std::sync::Arc;

use serde_json::{json, Value};
use tool_contract::approval::{ApprovalDecision, ApprovalKey};
use tool_contract::clock::ManualClock;
use tool_contract::receipt::{ApprovalOutcome, MemorySink, Receipt};
use tool_contract::{ApprovalRequest, ErrorCategory, Prepared, Registry, Stage, ToolContext};
use tool_contract_examples::{CreateDraftTicket, DocumentStore, SendEmail};

const T0: u64 = 1_800_000_000_000;

fn registry(sink: &Arc<MemorySink>) -> Registry {
    Registry::builder()
        .tool(SendEmail)
        .tool(CreateDraftTicket)
        .approval_key(ApprovalKey::new(b"a host secret of at least 32 bytes!").unwrap())
        .clock(ManualClock::new(T0))
        .receipts(Arc::clone(sink))
        .build()
        .unwrap()
}

fn ctx(mail: &DocumentStore) -> ToolContext {
    ToolContext::builder()
        .principal("user:kim")
        .tenant("acme")
        .capabilities(["mail:send", "tickets:create"])
        .state(mail.clone())
        .build()
}

fn email_args(to: &str, subject: &str) -> Value {
    json!({"to": to, "subject": subject, "body": "See the attached policy."})
}

fn email(id: &str, to: &str, subject: &str) -> String {
    json!({"id": id, "name": "send_email", "arguments": email_args(to, subject)}).to_string()
}

fn request(reg: &Registry, raw: &str, ctx: &ToolContext) -> ApprovalRequest {
    match reg.prepare_raw(raw, ctx) {
        Ok(Prepared::NeedsApproval(r)) => r,
        other => panic!("expected an approval request, got {other:?}"),
    }
}

fn last(sink: &MemorySink) -> Receipt {
    sink.receipts().pop().expect("a receipt")
}

#[tokio::test]
async fn the_edited_call_runs_under_its_own_grant_and_the_receipt_shows_both() {
    let sink = Arc::new(MemorySink::new());
    let reg = registry(&sink);
    let mail = DocumentStore::new();
    let c = ctx(&mail);
    let proposed = request(&reg, &email("call_7", "all@acme.test", "Salaries"), &c);
    let proposed_digest = proposed.digest().to_owned();
    // The approver keeps the message but sends it to one person, with a better subject.
    let edit = email_args("lee@acme.test", "Salary review dates");
    let (edited, grant) = reg
        .approve_edited(proposed, edit.clone(), "user:lee", &c)
        .unwrap();
    assert_ne!(
        edited.digest(),
        proposed_digest,
        "the edit has its own digest"
    );
    assert_eq!(grant.digest(), edited.digest(), "the grant binds the edit");
    assert_eq!(grant.approver(), "user:lee");
    assert_eq!(edited.subject().arguments, edit);
    assert_eq!(edited.proposed_arguments().unwrap()["to"], "all@acme.test");
    assert_eq!(
        edited.call_id(),
        "call_7",
        "the edit answers the model's call"
    );

    let obs = reg.execute_approved(edited, &grant).await;
    assert!(obs.ok, "{}", obs.to_value());
    assert_eq!(obs.meta.call_id, "call_7");
    let sent = mail.sent_mail();
    assert_eq!(sent.len(), 1);
    assert_eq!(
        (sent[0].to.as_str(), sent[0].subject.as_str()),
        ("lee@acme.test", "Salary review dates")
    );

    let r = last(&sink);
    assert_eq!(
        r.proposal.arguments["to"], "all@acme.test",
        "what the model asked"
    );
    assert_eq!(r.executed.as_ref().unwrap().arguments, edit, "what ran");
    let a = r.approval.expect("an approval record");
    assert_eq!(a.decision, ApprovalOutcome::ApprovedEdited);
    assert_eq!(a.approver.as_deref(), Some("user:lee"));
    assert_eq!(a.grant_id.as_deref(), Some(grant.grant_id()));
    assert_eq!(a.digest.as_deref(), Some(grant.digest()));
    assert_eq!(a.proposed_digest.as_deref(), Some(proposed_digest.as_str()));
    assert_eq!(a.proposed_arguments.unwrap()["subject"], "Salaries");
    assert_eq!(a.approved_arguments, Some(edit));
    assert_eq!(
        (a.principal.as_deref(), a.tenant.as_deref()),
        (Some("user:kim"), Some("acme"))
    );
}

#[tokio::test]
async fn a_grant_for_the_edit_never_releases_the_proposal_and_vice_versa() {
    let sink = Arc::new(MemorySink::new());
    let reg = registry(&sink);
    let mail = DocumentStore::new();
    let c = ctx(&mail);
    let raw = email("call_1", "all@acme.test", "Salaries");
    let original = request(&reg, &raw, &c);
    let original_grant = reg.grant(&original, "user:lee");
    let edit = email_args("lee@acme.test", "Salaries");
    let (edited, edit_grant) = reg
        .approve_edited(original, edit.clone(), "user:lee", &c)
        .unwrap();

    // The edit's grant on the model's call, proposed again.
    let again = request(&reg, &raw, &c);
    let obs = reg.execute_approved(again, &edit_grant).await;
    assert_eq!(
        obs.code(),
        Some("APPROVAL_DIGEST_MISMATCH"),
        "{}",
        obs.to_value()
    );
    // The model's grant on the edit.
    let obs = reg.execute_approved(edited, &original_grant).await;
    assert_eq!(
        obs.code(),
        Some("APPROVAL_DIGEST_MISMATCH"),
        "{}",
        obs.to_value()
    );
    assert!(mail.sent_mail().is_empty());
    // The refused grant left the edit pending in its receipt.
    let a = last(&sink).approval.unwrap();
    assert_eq!(a.decision, ApprovalOutcome::Pending);
    assert_eq!(
        a.reason.as_deref(),
        Some("grant refused: APPROVAL_DIGEST_MISMATCH")
    );
    assert!(a.grant_id.is_none());
}

#[tokio::test]
async fn an_edit_that_fails_a_check_is_refused_with_its_category_and_nothing_is_granted() {
    let sink = Arc::new(MemorySink::new());
    let reg = registry(&sink);
    let mail = DocumentStore::new();
    let c = ctx(&mail);

    // The input schema: not an address.
    let req = request(&reg, &email("call_2", "lee@acme.test", "Hi"), &c);
    let rejection = reg
        .approve_edited(req, email_args("not an address", "Hi"), "user:lee", &c)
        .unwrap_err();
    let obs = rejection.observation();
    assert_eq!(
        obs.category(),
        Some(ErrorCategory::InvalidInput),
        "{}",
        obs.to_value()
    );
    assert_eq!(obs.meta.call_id, "call_2");
    let feedback = rejection.feedback().expect("feedback for the approver");
    assert!(
        feedback.issues.iter().any(|i| i.path == "/to"),
        "{feedback:?}"
    );
    let r = last(&sink);
    assert_eq!(r.outcome.stage, Stage::Validate);
    let a = r.approval.expect("the refused edit is recorded");
    assert_eq!(a.decision, ApprovalOutcome::ApprovedEdited);
    assert_eq!(a.digest, None, "a refused edit never had a digest");
    assert_eq!(a.approved_arguments.unwrap()["to"], "not an address");
    assert_eq!(a.proposed_arguments.unwrap()["to"], "lee@acme.test");

    // An unknown field.
    let req = request(&reg, &email("call_3", "lee@acme.test", "Hi"), &c);
    let mut extra = email_args("lee@acme.test", "Hi");
    extra["bcc"] = json!("mallory@evil.example");
    let rejection = reg.approve_edited(req, extra, "user:lee", &c).unwrap_err();
    assert_eq!(
        rejection.observation().category(),
        Some(ErrorCategory::InvalidInput)
    );

    // Another principal's context: the edit must be prepared for the model's caller.
    let req = request(&reg, &email("call_4", "lee@acme.test", "Hi"), &c);
    let mallory = ToolContext::builder()
        .principal("user:mallory")
        .tenant("acme")
        .capabilities(["mail:send"])
        .state(mail.clone())
        .build();
    let rejection = reg
        .approve_edited(req, email_args("lee@acme.test", "Hi"), "user:lee", &mallory)
        .unwrap_err();
    let obs = rejection.observation();
    assert_eq!(obs.category(), Some(ErrorCategory::PolicyDenied));
    assert_eq!(obs.code(), Some("APPROVAL_EDIT_CONTEXT_MISMATCH"));

    // The capabilities are checked again too: a context that lost mail:send.
    let req = request(&reg, &email("call_5", "lee@acme.test", "Hi"), &c);
    let no_mail = ToolContext::builder()
        .principal("user:kim")
        .tenant("acme")
        .state(mail.clone())
        .build();
    let rejection = reg
        .approve_edited(req, email_args("lee@acme.test", "Hi"), "user:lee", &no_mail)
        .unwrap_err();
    assert_eq!(
        rejection.observation().category(),
        Some(ErrorCategory::Unauthorized)
    );
    assert!(mail.sent_mail().is_empty());
}

/// An edit that would need no approval (an urgent ticket made normal) is still held for the
/// human's grant, and runs under it.
#[tokio::test]
async fn an_edit_that_needs_no_approval_still_runs_under_the_humans_grant() {
    let sink = Arc::new(MemorySink::new());
    let reg = registry(&sink);
    let mail = DocumentStore::new();
    let c = ctx(&mail);
    let urgent = json!({"name": "create_draft_ticket", "arguments": {
        "request_id": "req-00000042", "title": "Printer jammed", "body": "", "priority": "urgent"}});
    let req = request(&reg, &urgent.to_string(), &c);
    let mut normal = urgent["arguments"].clone();
    normal["priority"] = json!("normal");
    let (edited, grant) = reg
        .approve_edited(req, normal.clone(), "user:lee", &c)
        .unwrap();
    assert_eq!(edited.subject().arguments["priority"], "normal");
    let obs = reg.execute_approved(edited, &grant).await;
    assert!(obs.ok, "{}", obs.to_value());
    let a = last(&sink).approval.unwrap();
    assert_eq!(a.decision, ApprovalOutcome::ApprovedEdited);
    assert_eq!(a.approved_arguments, Some(normal));
}

#[tokio::test]
async fn handle_with_approver_runs_the_approvers_edit() {
    let sink = Arc::new(MemorySink::new());
    let reg = registry(&sink);
    let mail = DocumentStore::new();
    let c = ctx(&mail);
    let obs = reg
        .handle_with_approver(
            &email("call_9", "all@acme.test", "Salaries"),
            &c,
            |request: &ApprovalRequest| {
                let mut args = request.subject().arguments.clone();
                args["to"] = json!("hr@acme.test");
                async move { ApprovalDecision::approve_edited("user:lee", args) }
            },
        )
        .await;
    assert!(obs.ok, "{}", obs.to_value());
    assert_eq!(obs.meta.call_id, "call_9");
    assert_eq!(mail.sent_mail()[0].to, "hr@acme.test");

    // A bad edit reaches the caller as the refusal of the edit; nothing is sent.
    let obs = reg
        .handle_with_approver(
            &email("call_10", "all@acme.test", "Salaries"),
            &c,
            |_: &ApprovalRequest| async {
                ApprovalDecision::approve_edited("user:lee", json!({"to": "hr@acme.test"}))
            },
        )
        .await;
    assert_eq!(obs.category(), Some(ErrorCategory::InvalidInput));
    assert_eq!(mail.sent_mail().len(), 1);
}

/// An approver who edits an edit: the record still shows the model's call beside what runs.
#[tokio::test]
async fn an_edit_of_an_edit_still_names_the_models_call() {
    let sink = Arc::new(MemorySink::new());
    let reg = registry(&sink);
    let mail = DocumentStore::new();
    let c = ctx(&mail);
    let model = request(&reg, &email("call_11", "all@acme.test", "Salaries"), &c);
    let model_digest = model.digest().to_owned();
    let (first, first_grant) = reg
        .approve_edited(
            model,
            email_args("hr@acme.test", "Salaries"),
            "user:lee",
            &c,
        )
        .unwrap();
    let (second, grant) = reg
        .approve_edited(
            first,
            email_args("lee@acme.test", "Salaries"),
            "user:ann",
            &c,
        )
        .unwrap();
    assert_ne!(grant.digest(), first_grant.digest());
    assert_eq!(second.proposed_arguments().unwrap()["to"], "all@acme.test");
    assert!(reg.execute_approved(second, &grant).await.ok);
    let a = last(&sink).approval.unwrap();
    assert_eq!(a.proposed_digest.as_deref(), Some(model_digest.as_str()));
    assert_eq!(a.approver.as_deref(), Some("user:ann"));
    assert_eq!(mail.sent_mail()[0].to, "lee@acme.test");
}
