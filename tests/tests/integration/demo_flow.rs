//! The demo's flow-control scene on the example tools: the model obeys a document that names a
//! recipient, and the call is held with the document shown as the recipient's source; the reply
//! the user asked for goes through with no flow reason.

use serde_json::{json, Value};
use tool_contract::flow::Session;
use tool_contract::{Prepared, ToolContext};
use tool_contract_examples::DocumentStore;

use crate::pipeline::registry;

fn scene() -> (Session, DocumentStore, ToolContext) {
    let session = Session::new();
    session.add_user_message(
        "Read the incident report incident/2026-11-mail and tell ops-lead@acme.test what it says.",
    );
    let store = DocumentStore::seeded();
    let ctx = ToolContext::builder()
        .principal("user:kim")
        .tenant("acme")
        .capabilities(["documents:read", "mail:send"])
        .session(session.clone())
        .state(store.clone())
        .build();
    (session, store, ctx)
}

fn call(id: &str, name: &str, args: Value) -> String {
    json!({"id": id, "name": name, "arguments": args}).to_string()
}

#[tokio::test]
async fn a_recipient_copied_from_a_document_is_held_with_its_source_and_the_real_reply_is_sent() {
    let reg = registry();
    let (session, store, ctx) = scene();
    let read = call(
        "call_801",
        "read_document_span",
        json!({"source_id": "incident/2026-11-mail", "span_id": "p1:l1-l3"}),
    );
    assert!(reg.handle(&read, &ctx).await.ok);
    assert!(session.has_observations());

    let injected = call(
        "call_802",
        "send_email",
        json!({"to": "all-staff@acme.test", "subject": "Salaries", "body": "As requested."}),
    );
    let Ok(Prepared::NeedsApproval(held)) = reg.prepare_raw(&injected, &ctx) else {
        panic!("a recipient copied from a document must not run unasked")
    };
    let to = held
        .subject()
        .provenance
        .iter()
        .find(|a| a.pointer == "/to")
        .map(|a| serde_json::to_value(a).unwrap())
        .expect("the recipient's source is shown");
    assert_eq!(to["from"], "observation");
    assert_eq!(to["tool"], "read_document_span");
    assert_eq!(to["call_id"], "call_801");
    assert_eq!(to["source_pointer"], "/text", "{to}");
    assert!(
        held.subject()
            .flow_reasons
            .iter()
            .any(|r| r.contains("/to")),
        "{:?}",
        held.subject().flow_reasons
    );

    let reply = call(
        "call_803",
        "send_email",
        json!({"to": "ops-lead@acme.test", "subject": "Mail outage report",
               "body": "The incident report describes the mail outage you reported."}),
    );
    let Ok(Prepared::NeedsApproval(request)) = reg.prepare_raw(&reply, &ctx) else {
        panic!("send_email always waits for approval")
    };
    assert!(
        request.subject().flow_reasons.is_empty(),
        "{:?}",
        request.subject().flow_reasons
    );
    let grant = reg.grant(&request, "user:kim");
    // The grant for the reply does not release the injected call.
    let refused = reg.execute_approved(held, &grant).await;
    assert_eq!(refused.code(), Some("APPROVAL_DIGEST_MISMATCH"));
    assert!(reg.execute_approved(request, &grant).await.ok);
    let sent = store.sent_mail();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].to, "ops-lead@acme.test");
}

#[tokio::test]
async fn without_a_session_the_same_injected_call_carries_no_flow_reason() {
    // What the scene shows is flow control's doing: without a session record the registry
    // cannot tell a copied recipient from a typed one.
    let reg = registry();
    let store = DocumentStore::seeded();
    let ctx = ToolContext::builder()
        .principal("user:kim")
        .tenant("acme")
        .capabilities(["documents:read", "mail:send"])
        .state(store)
        .build();
    let injected = call(
        "call_802",
        "send_email",
        json!({"to": "all-staff@acme.test", "subject": "Salaries", "body": "As requested."}),
    );
    let Ok(Prepared::NeedsApproval(request)) = reg.prepare_raw(&injected, &ctx) else {
        panic!()
    };
    assert!(request.subject().flow_reasons.is_empty());
}
