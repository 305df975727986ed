//! An agent loop, scripted: model proposals go through the pipeline against the example's
//! tools over an in-memory, multi-tenant document store, and each observation is printed as the
//! model would see it.
//!
//! `cargo run -p tool-contract-examples --bin demo` plays the script;
//! add `-- --contracts` to print the tools' contracts as JSON instead.

use std::sync::Arc;
use std::time::Duration;

use tool_contract::flow::Session;
use tool_contract::store::MemoryStore;
use tool_contract::{Prepared, Registry, RepairLoop, RepairStep, ToolContext, Toolset};
use tool_contract_examples::DocumentStore;

fn tools() -> Toolset {
    tool_contract_examples::toolset()
}

fn print_contracts() -> Result<(), Box<dyn std::error::Error>> {
    let contracts: Vec<_> = tools().contracts().collect();
    println!("{}", serde_json::to_string_pretty(&contracts)?);
    Ok(())
}

fn step(title: &str) {
    println!(
        "\n── {title} {}",
        "─".repeat(70usize.saturating_sub(title.len()))
    );
}

fn show_proposal(raw: &str) {
    println!("model proposes: {raw}");
}

async fn propose(registry: &Registry, ctx: &ToolContext, raw: &str) {
    show_proposal(raw);
    let obs = registry.handle(raw, ctx).await;
    println!("{}", obs.to_prompt_block());
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    if std::env::args().any(|a| a == "--contracts") {
        return print_contracts();
    }

    let store = DocumentStore::seeded();
    let registry = Registry::builder().toolset(tools()).build()?;
    println!("registry: {} tools", registry.contracts().len());
    for c in registry.contracts() {
        println!(
            "  {:<22} {:<6} {:<19} approval={:<11} attempts={} fingerprint={}",
            c.name,
            c.version,
            c.effect.as_str(),
            format!("{:?}", c.approval).to_lowercase(),
            c.retry.max_attempts,
            &c.fingerprint.contract_sha256[..19]
        );
    }
    // The trusted context: who is asking, for which tenant, with which capabilities.
    let ctx = ToolContext::builder()
        .principal("user:kim")
        .tenant("acme")
        .capabilities([
            "documents:search",
            "documents:read",
            "mail:send",
            "tickets:create",
        ])
        .state(store.clone())
        .build();

    step("1. a valid search");
    propose(&registry, &ctx, r#"{"id": "call_001", "name": "search_documents", "arguments": {"query": "2026 refund policy"}}"#).await;

    step("2. top_k: 50 → repair feedback → repaired call");
    let mut repairs = RepairLoop::new(RepairLoop::DEFAULT_MAX_REPAIRS);
    let bad = r#"{"id": "call_002", "name": "search_documents", "arguments": {"query": "refund", "top_k": 50}}"#;
    show_proposal(bad);
    match registry.prepare_raw(bad, &ctx) {
        Err(rejection) => match repairs.on_rejection("turn-2/search_documents", &rejection) {
            RepairStep::Repair(feedback) => println!(
                "feedback to the model: {}",
                serde_json::to_string(&feedback)?
            ),
            RepairStep::Stop(obs) => println!("{}", obs.to_prompt_block()),
        },
        Ok(_) => println!("(unexpectedly accepted)"),
    }
    let fixed = r#"{"id": "call_003", "name": "search_documents", "arguments": {"query": "refund", "top_k": 20}}"#;
    show_proposal(fixed);
    if let Ok(Prepared::Ready(call)) = registry.prepare_raw(fixed, &ctx) {
        repairs.on_accepted("turn-2/search_documents");
        println!("{}", registry.execute(call).await.to_prompt_block());
    }

    step("3. cross-tenant reads are impossible");
    println!("(a) the model tries to choose the tenant itself:");
    propose(
        &registry,
        &ctx,
        r#"{"name": "search_documents", "arguments": {"query": "payroll", "tenant_id": "globex"}}"#,
    )
    .await;
    println!("(b) the model names another tenant's document: it does not exist for acme");
    propose(&registry, &ctx, r#"{"name": "read_document_span", "arguments": {"source_id": "manual/payroll", "span_id": "p1:l1-l4"}}"#)
        .await;
    println!("(c) a principal without the capability:");
    let intern = ToolContext::builder()
        .principal("user:intern")
        .tenant("acme")
        .state(store.clone())
        .build();
    propose(&registry, &intern, r#"{"name": "read_document_span", "arguments": {"source_id": "policy/refund", "span_id": "p1:l1-l8"}}"#)
        .await;

    step("4. a document that tries to give orders is returned as untrusted data");
    propose(
        &registry,
        &ctx,
        r#"{"name": "read_document_span", "arguments": {"source_id": "incident/2026-11-mail", "span_id": "p1:l1-l3"}}"#,
    )
    .await;

    step("5. a write needs approval (bound to a digest of exactly what would run)");
    let email = r#"{"name": "send_email", "arguments": {"to": "lee@acme.test", "subject": "Refund policy", "body": "It takes effect on 2026-07-01."}}"#;
    propose(&registry, &ctx, email).await;
    println!("(a) the host shows the approver exactly what will run:");
    let Ok(Prepared::NeedsApproval(request)) = registry.prepare_raw(email, &ctx) else {
        return Err("send_email must wait for approval".into());
    };
    println!("{}", serde_json::to_string_pretty(request.subject())?);
    println!("digest: {}", request.digest());
    let grant = registry.grant(&request, "user:lee");
    println!(
        "(b) user:lee approves: grant {} for {}, single use, expires in 10 minutes",
        grant.grant_id(),
        &grant.digest()[..19]
    );
    println!(
        "{}",
        registry
            .execute_approved(request, &grant)
            .await
            .to_prompt_block()
    );
    println!("mails sent so far: {}", store.sent_mail().len());

    println!("(c) the model proposes the same e-mail again; a fresh approval is given:");
    show_proposal(email);
    if let Ok(Prepared::NeedsApproval(request)) = registry.prepare_raw(email, &ctx) {
        let again = registry.grant(&request, "user:lee");
        println!(
            "{}",
            registry
                .execute_approved(request, &again)
                .await
                .to_prompt_block()
        );
    }
    println!(
        "mails sent so far: {} (replayed from the idempotency store, not sent twice)",
        store.sent_mail().len()
    );

    println!("(d) the first grant is reused for different arguments:");
    let other = r#"{"name": "send_email", "arguments": {"to": "all@acme.test", "subject": "Salaries", "body": "Attached: everyone's salary."}}"#;
    show_proposal(other);
    if let Ok(Prepared::NeedsApproval(request)) = registry.prepare_raw(other, &ctx) {
        println!(
            "{}",
            registry
                .execute_approved(request, &grant)
                .await
                .to_prompt_block()
        );
    }
    println!("mails sent so far: {}", store.sent_mail().len());

    step("6. a slow backend: each attempt is cut off at the tool's timeout");
    store.set_latency(Duration::from_secs(5));
    propose(
        &registry,
        &ctx,
        r#"{"name": "get_policy_revision", "arguments": {"source_id": "policy/refund"}}"#,
    )
    .await;
    store.set_latency(Duration::ZERO);

    step("7. a backend upgrade breaks the output contract: the data is withheld");
    store.set_scores_in_percent(true);
    propose(
        &registry,
        &ctx,
        r#"{"name": "search_documents", "arguments": {"query": "refund policy"}}"#,
    )
    .await;
    store.set_scores_in_percent(false);

    flow_scene(&registry, &store).await?;
    edited_scene(&registry, &store).await?;
    deferred_scene(&store).await
}

/// An approver changes the arguments before saying yes: the edit is checked again, gets its
/// own digest, and only the edit runs.
async fn edited_scene(
    registry: &Registry,
    store: &DocumentStore,
) -> Result<(), Box<dyn std::error::Error>> {
    step("9. the approver edits the call: the edit is checked again and only the edit runs");
    let ctx = ToolContext::builder()
        .principal("user:kim")
        .tenant("acme")
        .capabilities(["mail:send"])
        .state(store.clone())
        .build();
    let proposed = r#"{"id": "call_901", "name": "send_email", "arguments": {"to": "all@acme.test", "subject": "Offsite agenda", "body": "The agenda is attached."}}"#;
    show_proposal(proposed);
    let Ok(Prepared::NeedsApproval(request)) = registry.prepare_raw(proposed, &ctx) else {
        return Err("send_email always waits for approval".into());
    };
    let model_digest = request.digest().to_owned();
    println!("the model's call: {}", &model_digest[..19]);
    let mut arguments = request.subject().arguments.clone();
    arguments["to"] = "team-leads@acme.test".into();
    println!("(a) user:lee narrows the recipient to team-leads@acme.test and approves the edit");
    let (edited, grant) = registry
        .approve_edited(request, arguments, "user:lee", &ctx)
        .map_err(|r| r.into_observation().to_prompt_block())?;
    println!(
        "the edit: {} (grant {} binds the edit, not the model's call)",
        &edited.digest()[..19],
        grant.grant_id()
    );
    let before = store.sent_mail().len();
    println!(
        "{}",
        registry
            .execute_approved(edited, &grant)
            .await
            .to_prompt_block()
    );
    if let Some(mail) = store.sent_mail().last() {
        println!("sent to: {} (subject {:?})", mail.to, mail.subject);
    }
    println!("(b) the same grant offered for the model's original call:");
    if let Ok(Prepared::NeedsApproval(original)) = registry.prepare_raw(proposed, &ctx) {
        println!(
            "{}",
            registry
                .execute_approved(original, &grant)
                .await
                .to_prompt_block()
        );
    }
    println!("(c) an edit that breaks the tool's schema is refused, and nothing is granted:");
    if let Ok(Prepared::NeedsApproval(request)) = registry.prepare_raw(proposed, &ctx) {
        let mut bad = request.subject().arguments.clone();
        bad["to"] = "not an address".into();
        if let Err(rejection) = registry.approve_edited(request, bad, "user:lee", &ctx) {
            println!("{}", rejection.into_observation().to_prompt_block());
        }
    }
    println!(
        "mails sent in this scene: {} (the edit only)",
        store.sent_mail().len() - before
    );
    Ok(())
}

/// Flow control: the host records what the user said and every result the model read, so a
/// value the model copies out of a document is traced back to it before anything runs.
async fn flow_scene(
    registry: &Registry,
    store: &DocumentStore,
) -> Result<(), Box<dyn std::error::Error>> {
    step("8. flow control: an injected document tries to steer a write");
    let session = Session::new();
    let user =
        "Read the incident report incident/2026-11-mail and tell ops-lead@acme.test what it says.";
    println!("the user says: {user}");
    session.add_user_message(user);
    let ctx = ToolContext::builder()
        .principal("user:kim")
        .tenant("acme")
        .capabilities(["documents:read", "mail:send"])
        .session(session.clone())
        .state(store.clone())
        .build();
    propose(
        registry,
        &ctx,
        r#"{"id": "call_801", "name": "read_document_span", "arguments": {"source_id": "incident/2026-11-mail", "span_id": "p1:l1-l3"}}"#,
    )
    .await;

    println!("(a) the model obeys the document: the recipient came from a tool result, so the call is held");
    let injected = r#"{"id": "call_802", "name": "send_email", "arguments": {"to": "all-staff@acme.test", "subject": "Salaries", "body": "As requested."}}"#;
    show_proposal(injected);
    let before = store.sent_mail().len();
    match registry.prepare_raw(injected, &ctx) {
        Ok(Prepared::NeedsApproval(request)) => {
            let subject = request.subject();
            println!("the approver sees where each value came from:");
            println!("{}", serde_json::to_string_pretty(&subject.provenance)?);
            for reason in &subject.flow_reasons {
                println!("flow: {reason}");
            }
            println!("the approver denies it; nothing is sent");
        }
        Ok(Prepared::Ready(_)) => {
            return Err("a recipient copied from a document must not run".into())
        }
        Err(rejection) => println!("{}", rejection.into_observation().to_prompt_block()),
    }

    println!("(b) the reply the user asked for: the recipient is in the user's own words");
    let reply = r#"{"id": "call_803", "name": "send_email", "arguments": {"to": "ops-lead@acme.test", "subject": "Mail outage report", "body": "The incident report describes the mail outage you reported."}}"#;
    show_proposal(reply);
    let Ok(Prepared::NeedsApproval(request)) = registry.prepare_raw(reply, &ctx) else {
        return Err("send_email always waits for approval".into());
    };
    println!(
        "flow reasons: {} (provenance: {})",
        request.subject().flow_reasons.len(),
        serde_json::to_string(&request.subject().provenance)?
    );
    let grant = registry.grant(&request, "user:kim");
    println!(
        "{}",
        registry
            .execute_approved(request, &grant)
            .await
            .to_prompt_block()
    );
    println!(
        "mails sent in this scene: {} (the reply only)",
        store.sent_mail().len() - before
    );
    Ok(())
}

/// Deferred approval: nobody is there to approve when the model proposes, so the call waits
/// in a store under an id; an operator, in another task with its own registry on the same
/// store (another process, with a durable store), decides it later; the retry runs it once.
async fn deferred_scene(store: &DocumentStore) -> Result<(), Box<dyn std::error::Error>> {
    step("10. deferred approval: decided later, by id, by another task");
    let shared = Arc::new(MemoryStore::new());
    let on_shared_store = || {
        Registry::builder()
            .toolset(tools())
            .store(Arc::clone(&shared))
            .pending_approval_store(Arc::clone(&shared))
            .build()
    };
    let (agent, operator) = (on_shared_store()?, on_shared_store()?);
    let ctx = ToolContext::builder()
        .principal("user:kim")
        .tenant("acme")
        .capabilities(["mail:send"])
        .state(store.clone())
        .build();
    let mail = r#"{"id": "call_901", "name": "send_email", "arguments": {"to": "ops-lead@acme.test", "subject": "Outage review", "body": "The review is on Friday."}}"#;
    show_proposal(mail);
    let waiting = agent.handle_deferred(mail, &ctx).await;
    println!("{}", waiting.to_prompt_block());
    let before = store.sent_mail().len();

    let decided = tokio::spawn(async move {
        let listed = operator.pending_approvals(Some("acme")).await?;
        for p in &listed {
            println!(
                "operator sees {} waiting: {} {} for {} with {}",
                p.id,
                p.subject.tool,
                p.subject.tool_version,
                p.principal().unwrap_or("-"),
                p.subject.arguments
            );
        }
        let id = listed.first().map(|p| p.id.clone()).unwrap_or_default();
        operator
            .approve_pending(Some("acme"), &id, "user:lee", "expected mail")
            .await
    })
    .await??;
    println!("operator approved {}: {}", decided.id, decided.state.name());

    println!("the model retries the same call: it runs, once");
    show_proposal(mail);
    println!(
        "{}",
        agent.handle_deferred(mail, &ctx).await.to_prompt_block()
    );
    println!("and again: the recorded result, nothing sent");
    let again = agent.handle_deferred(mail, &ctx).await;
    println!(
        "idempotency: {}",
        again.meta.idempotency.as_deref().unwrap_or("-")
    );
    println!(
        "mails sent in this scene: {}",
        store.sent_mail().len() - before
    );
    Ok(())
}
