//! Standing approvals: a scoped rule a human grants once, which approves matching calls
//! without asking.
//!
//! A [`StandingRule`] names a tool, a range of its versions, optionally a principal and a
//! tenant, a JSON Schema the call's arguments must satisfy, an expiry and a number of uses.
//! Registered on the registry ([`RegistryBuilder::standing_rule`](crate::RegistryBuilder::standing_rule)
//! or [`Registry::add_standing_rule`](crate::Registry::add_standing_rule)), it is consulted
//! only for a call that passed every other check and would otherwise wait for a human:
//!
//! - the call's tool is the rule's and its version matches the rule's requirement;
//! - the rule's principal and tenant, when set, are the trusted context's (unset means any);
//! - the call's arguments, validated and with defaults applied (exactly what the approver
//!   would be shown), satisfy the rule's constraints (JSON Schema, Draft 2020-12);
//! - the rule has not expired, and has not been found used up;
//! - the call was not sent for approval by flow control, unless the rule says it covers flow
//!   escalations ([`StandingRuleBuilder::covers_flow_escalations`]): a value copied from a tool
//!   result is exactly what a person should see.
//!
//! Such a call comes back from `prepare` as [`Prepared::Ready`](crate::Prepared::Ready), with
//! [`PreparedCall::standing_rule`](crate::PreparedCall::standing_rule) naming the rule. Its use
//! is counted when it is executed, after its idempotency key is claimed (a replay uses
//! nothing), atomically in the registry's [`ApprovalStore`] (one use number per call, shared by
//! every process on the store). A call that finds the rule used up or expired is refused
//! (`POLICY_DENIED`, `APPROVAL_RULE_EXHAUSTED` / `APPROVAL_RULE_EXPIRED`) and nothing runs;
//! the registry then stops applying the rule, so the model's next proposal of the call asks a
//! human. The receipt names the rule and the use ([`crate::receipt::ApprovalRecord`]).
//!
//! Uses are counted per rule id in the store: registering a rule again under the same id
//! (after a restart, on another replica) continues its count.
//!
//! ```
//! use serde_json::json;
//! use tool_contract::standing::StandingRule;
//!
//! // user:lee lets kim send mail to colleagues at acme, 20 times, until the end of the day.
//! let rule = StandingRule::builder("rule-mail-colleagues", "send_email")
//!     .versions("^1.2")
//!     .principal("user:kim")
//!     .tenant("acme")
//!     .constraints(json!({
//!         "properties": {"to": {"type": "string", "pattern": "@acme\\.test$"}},
//!         "required": ["to"]
//!     }))
//!     .expires_at_ms(1_900_000_000_000)
//!     .max_uses(20)
//!     .granted_by("user:lee")
//!     .build()
//!     .unwrap();
//! assert_eq!(rule.id(), "rule-mail-colleagues");
//! ```

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};

use serde_json::Value;

use crate::context::ToolContext;
use crate::contract::ToolContract;
use crate::error::ToolError;
use crate::store::ApprovalStore;

/// A scoped, expiring, counted approval of every call that matches it; see the
/// [module docs](self).
pub struct StandingRule {
    id: String,
    tool: String,
    versions: semver::VersionReq,
    principal: Option<String>,
    tenant: Option<String>,
    constraints: Value,
    validator: jsonschema::Validator,
    expires_at_ms: u64,
    max_uses: u64,
    granted_by: String,
    flow_escalations: bool,
}

impl StandingRule {
    /// Starts a rule with id `id` (unique among the rules sharing a store) for tool `tool`.
    pub fn builder(id: impl Into<String>, tool: impl Into<String>) -> StandingRuleBuilder {
        StandingRuleBuilder {
            id: id.into(),
            tool: tool.into(),
            versions: None,
            principal: None,
            tenant: None,
            constraints: Value::Bool(true),
            expires_at_ms: None,
            max_uses: None,
            granted_by: None,
            flow_escalations: false,
        }
    }

    /// The rule's id.
    pub fn id(&self) -> &str {
        &self.id
    }
    /// The tool it approves.
    pub fn tool(&self) -> &str {
        &self.tool
    }
    /// The versions of the tool it approves.
    pub fn versions(&self) -> &semver::VersionReq {
        &self.versions
    }
    /// The principal it is limited to, if any.
    pub fn principal(&self) -> Option<&str> {
        self.principal.as_deref()
    }
    /// The tenant it is limited to, if any.
    pub fn tenant(&self) -> Option<&str> {
        self.tenant.as_deref()
    }
    /// The JSON Schema the arguments must satisfy.
    pub fn constraints(&self) -> &Value {
        &self.constraints
    }
    /// When it stops approving, in milliseconds since the Unix epoch.
    pub fn expires_at_ms(&self) -> u64 {
        self.expires_at_ms
    }
    /// How many calls it approves at most, across every process sharing the store.
    pub fn max_uses(&self) -> u64 {
        self.max_uses
    }
    /// Who granted it.
    pub fn granted_by(&self) -> &str {
        &self.granted_by
    }
    /// Whether it also approves calls flow control sent for approval.
    pub fn covers_flow_escalations(&self) -> bool {
        self.flow_escalations
    }

    /// Whether the rule approves a call of `contract` with `arguments` (validated, defaults
    /// applied) under `ctx` at `now_ms`, `escalated` saying whether flow control sent it for
    /// approval. Uses are not looked at: they are counted when the call runs.
    pub fn matches(
        &self,
        contract: &ToolContract,
        arguments: &Value,
        ctx: &ToolContext,
        escalated: bool,
        now_ms: u64,
    ) -> bool {
        self.tool == contract.name
            && semver::Version::parse(&contract.version).is_ok_and(|v| self.versions.matches(&v))
            && self
                .principal
                .as_deref()
                .is_none_or(|p| ctx.principal().is_some_and(|c| c.as_str() == p))
            && self
                .tenant
                .as_deref()
                .is_none_or(|t| ctx.tenant().is_some_and(|c| c.as_str() == t))
            && now_ms < self.expires_at_ms
            && (!escalated || self.flow_escalations)
            // Arguments are always an object; anything else matches no rule, whatever its
            // constraints say (a schema without `"type": "object"` accepts any string).
            && arguments.is_object()
            && self.validator.is_valid(arguments)
    }
}

impl fmt::Debug for StandingRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StandingRule")
            .field("id", &self.id)
            .field("tool", &self.tool)
            .field("versions", &self.versions.to_string())
            .field("principal", &self.principal)
            .field("tenant", &self.tenant)
            .field("constraints", &self.constraints)
            .field("expires_at_ms", &self.expires_at_ms)
            .field("max_uses", &self.max_uses)
            .field("granted_by", &self.granted_by)
            .field("covers_flow_escalations", &self.flow_escalations)
            .finish()
    }
}

/// Builds a [`StandingRule`]. Versions, expiry, maximum uses and who granted it are
/// required: a rule never approves without bounds.
#[derive(Debug, Clone)]
pub struct StandingRuleBuilder {
    id: String,
    tool: String,
    versions: Option<String>,
    principal: Option<String>,
    tenant: Option<String>,
    constraints: Value,
    expires_at_ms: Option<u64>,
    max_uses: Option<u64>,
    granted_by: Option<String>,
    flow_escalations: bool,
}

impl StandingRuleBuilder {
    /// The versions approved, as a semver requirement (`"^1.2"`, `"=1.2.0"`, `">=1, <3"`).
    pub fn versions(mut self, requirement: impl Into<String>) -> Self {
        self.versions = Some(requirement.into());
        self
    }
    /// Approves only calls of this principal (default: any).
    pub fn principal(mut self, principal: impl Into<String>) -> Self {
        self.principal = Some(principal.into());
        self
    }
    /// Approves only calls for this tenant (default: any).
    pub fn tenant(mut self, tenant: impl Into<String>) -> Self {
        self.tenant = Some(tenant.into());
        self
    }
    /// A JSON Schema (Draft 2020-12) the arguments must satisfy (default: any arguments).
    /// It sees the arguments the approver would be shown: validated, defaults applied.
    pub fn constraints(mut self, schema: Value) -> Self {
        self.constraints = schema;
        self
    }
    /// When the rule stops approving, in milliseconds since the Unix epoch (the registry's
    /// clock decides).
    pub fn expires_at_ms(mut self, at: u64) -> Self {
        self.expires_at_ms = Some(at);
        self
    }
    /// How many calls the rule approves at most (at least 1).
    pub fn max_uses(mut self, uses: u64) -> Self {
        self.max_uses = Some(uses);
        self
    }
    /// Who granted the rule; receipts name them as the approver.
    pub fn granted_by(mut self, approver: impl Into<String>) -> Self {
        self.granted_by = Some(approver.into());
        self
    }
    /// Lets the rule approve calls flow control sent for approval too (default: never, so a
    /// value copied from a tool result is always shown to a person).
    pub fn covers_flow_escalations(mut self) -> Self {
        self.flow_escalations = true;
        self
    }

    /// The rule, or why it cannot be one.
    pub fn build(self) -> Result<StandingRule, StandingRuleError> {
        let bad = |message: String| Err(StandingRuleError { message });
        if self.id.is_empty() || self.id.len() > 256 {
            return bad("a standing rule needs an id of 1 to 256 bytes".into());
        }
        let Some(versions) = self.versions else {
            return bad(format!("standing rule {:?} needs versions", self.id));
        };
        let versions = match semver::VersionReq::parse(&versions) {
            Ok(v) => v,
            Err(e) => {
                return bad(format!(
                    "standing rule {:?}: versions {versions:?} are not a semver requirement: {e}",
                    self.id
                ))
            }
        };
        let Some(expires_at_ms) = self.expires_at_ms else {
            return bad(format!("standing rule {:?} needs an expiry", self.id));
        };
        let max_uses = match self.max_uses {
            Some(n) if n >= 1 && i64::try_from(n).is_ok() => n,
            _ => {
                return bad(format!(
                    "standing rule {:?} needs a maximum of uses from 1 to 2^63 - 1",
                    self.id
                ))
            }
        };
        let Some(granted_by) = self.granted_by.filter(|g| !g.is_empty()) else {
            return bad(format!(
                "standing rule {:?} needs the approver who granted it",
                self.id
            ));
        };
        // Compiled as the tools' own schemas are: Draft 2020-12, formats asserted, linear-time
        // regexes, no remote references.
        let validator = match jsonschema::options()
            .with_draft(jsonschema::Draft::Draft202012)
            .should_validate_formats(true)
            .with_pattern_options(jsonschema::PatternOptions::regex())
            .build(&self.constraints)
        {
            Ok(v) => v,
            Err(e) => {
                return bad(format!(
                    "standing rule {:?}: its constraints are not a valid JSON Schema: {e}",
                    self.id
                ))
            }
        };
        Ok(StandingRule {
            id: self.id,
            tool: self.tool,
            versions,
            principal: self.principal,
            tenant: self.tenant,
            constraints: self.constraints,
            validator,
            expires_at_ms,
            max_uses,
            granted_by: granted_by.chars().take(256).collect(),
            flow_escalations: self.flow_escalations,
        })
    }
}

/// A standing rule that cannot be built or registered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StandingRuleError {
    message: String,
}

impl StandingRuleError {
    pub(crate) fn new(message: String) -> Self {
        StandingRuleError { message }
    }
}

impl fmt::Display for StandingRuleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for StandingRuleError {}

/// A registered rule, and whether this process found it used up.
pub(crate) struct Registered {
    rule: StandingRule,
    spent: AtomicBool,
}

/// The registry's standing rules, in registration order (the first that matches approves).
pub(crate) struct StandingRules {
    rules: RwLock<Vec<Arc<Registered>>>,
    store: Arc<dyn ApprovalStore>,
}

impl StandingRules {
    pub(crate) fn new(store: Arc<dyn ApprovalStore>) -> Self {
        StandingRules {
            rules: RwLock::new(Vec::new()),
            store,
        }
    }

    /// Adds `rule`; refused when a rule with its id is registered.
    pub(crate) fn add(&self, rule: StandingRule) -> Result<(), StandingRuleError> {
        let mut rules = self.rules.write().unwrap_or_else(|e| e.into_inner());
        if rules.iter().any(|r| r.rule.id == rule.id) {
            return Err(StandingRuleError::new(format!(
                "a standing rule with id {:?} is already registered",
                rule.id
            )));
        }
        rules.push(Arc::new(Registered {
            rule,
            spent: AtomicBool::new(false),
        }));
        Ok(())
    }

    /// Removes the rule with id `id`; whether there was one.
    pub(crate) fn revoke(&self, id: &str) -> bool {
        let mut rules = self.rules.write().unwrap_or_else(|e| e.into_inner());
        let before = rules.len();
        rules.retain(|r| r.rule.id != id);
        rules.len() != before
    }

    /// The first rule that approves the call, ready to count its use at execution.
    pub(crate) fn find(
        &self,
        contract: &ToolContract,
        arguments: &Value,
        ctx: &ToolContext,
        escalated: bool,
        now_ms: u64,
    ) -> Option<StandingUse> {
        let rules = self.rules.read().unwrap_or_else(|e| e.into_inner());
        rules
            .iter()
            .find(|r| {
                !r.spent.load(Ordering::Relaxed)
                    && r.rule.matches(contract, arguments, ctx, escalated, now_ms)
            })
            .map(|r| StandingUse {
                rule: Arc::clone(r),
                store: Arc::clone(&self.store),
            })
    }
}

/// A call's claim on a standing rule, counted when the call is executed.
pub(crate) struct StandingUse {
    rule: Arc<Registered>,
    store: Arc<dyn ApprovalStore>,
}

impl StandingUse {
    pub(crate) fn rule_id(&self) -> &str {
        &self.rule.rule.id
    }

    pub(crate) fn granted_by(&self) -> &str {
        &self.rule.rule.granted_by
    }

    /// Counts one use of the rule, atomically in the store: the use number, or why the call
    /// may not run.
    pub(crate) async fn consume(
        &self,
        deadline: Option<tokio::time::Instant>,
        now_ms: u64,
    ) -> Result<u64, ToolError> {
        let rule = &self.rule.rule;
        if now_ms >= rule.expires_at_ms {
            self.rule.spent.store(true, Ordering::Relaxed);
            return Err(ToolError::policy_denied(
                "APPROVAL_RULE_EXPIRED",
                "the standing approval that covered this call has expired; propose the call \
                 again to ask a human",
            ));
        }
        let counted = crate::idempotency::bounded(
            deadline,
            self.store
                .consume_rule_use(&rule.id, rule.max_uses, rule.expires_at_ms, now_ms),
        )
        .await;
        match counted {
            Ok(Some(n)) => Ok(n),
            Ok(None) => {
                // Later proposals skip the rule and ask a human instead of failing here too.
                self.rule.spent.store(true, Ordering::Relaxed);
                Err(ToolError::policy_denied(
                    "APPROVAL_RULE_EXHAUSTED",
                    "the standing approval that covered this call is used up; propose the \
                     call again to ask a human",
                ))
            }
            Err(e) => {
                tracing::warn!(error = %e, "approval store unavailable");
                Err(crate::idempotency::store_unavailable())
            }
        }
    }
}

impl fmt::Debug for StandingUse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StandingUse")
            .field("rule", &self.rule.rule.id)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn base() -> StandingRuleBuilder {
        StandingRule::builder("r1", "send_email")
            .versions("^1")
            .expires_at_ms(10)
            .max_uses(1)
            .granted_by("user:lee")
    }

    #[test]
    fn a_rule_needs_its_bounds_and_valid_parts() {
        assert!(base().build().is_ok());
        let cases = [
            (
                StandingRule::builder("r1", "t")
                    .expires_at_ms(1)
                    .max_uses(1)
                    .granted_by("a"),
                "needs versions",
            ),
            (base().versions("not a req"), "not a semver requirement"),
            (base().max_uses(0), "maximum of uses"),
            (base().max_uses(u64::MAX), "maximum of uses"),
            (base().granted_by(""), "approver"),
            (
                base().constraints(json!({"type": 5})),
                "not a valid JSON Schema",
            ),
            (
                base().constraints(json!({"pattern": "(a+)+\\1"})),
                "not a valid JSON Schema",
            ),
            (
                StandingRule::builder("", "t")
                    .versions("*")
                    .expires_at_ms(1)
                    .max_uses(1)
                    .granted_by("a"),
                "id",
            ),
            (
                StandingRule::builder("r", "t")
                    .versions("*")
                    .max_uses(1)
                    .granted_by("a"),
                "expiry",
            ),
        ];
        for (builder, expect) in cases {
            let err = builder.build().unwrap_err().to_string();
            assert!(err.contains(expect), "{err} should say {expect}");
        }
    }
}
