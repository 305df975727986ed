//! Idempotency keys: where a call's key comes from (the contract's source) and how a derived
//! key is made. Stores that replay results build on this (see the exactly-once work).

use serde_json::{Map, Value};

use crate::context::ToolContext;
use crate::contract::{IdempotencySource, ToolContract};
use crate::error::ToolError;
use crate::extract::IdempotencyKey;
use crate::schema::sha256_canonical;

/// Resolves the key of one call from its validated arguments (defaults applied) and context.
///
/// * `Field`: the field's string value (validated: 1..=255 printable ASCII);
/// * `Derived`: `sha256:` of the canonical JSON of `{tool, tenant, principal, args: {fields}}`,
///   so equal requests get equal keys and two tenants never share one;
/// * `Host`: the key the host put in the [`ToolContext`].
///
/// A write whose key is missing fails closed: `INVALID_INPUT` when the model must send it,
/// `POLICY_DENIED` when the host should have.
pub fn resolve_key(
    contract: &ToolContract,
    args: &Value,
    ctx: &ToolContext,
) -> Result<Option<IdempotencyKey>, ToolError> {
    let key = match &contract.idempotency.source {
        IdempotencySource::None => None,
        IdempotencySource::Field { field } => match args.get(field) {
            Some(Value::String(s)) => Some(
                IdempotencyKey::new(s.as_str())
                    .map_err(|e| e.with_detail("field", field.clone()))?,
            ),
            _ if contract.idempotency.required => {
                return Err(ToolError::invalid_input(
                    "IDEMPOTENCY_KEY_MISSING",
                    "this write needs its idempotency key field",
                )
                .with_detail("field", field.clone()));
            }
            _ => None,
        },
        IdempotencySource::Derived { fields } => {
            let mut picked = Map::new();
            for f in fields {
                picked.insert(f.clone(), args.get(f).cloned().unwrap_or(Value::Null));
            }
            let material = serde_json::json!({
                "tool": contract.name,
                "tenant": ctx.tenant().map(|t| t.as_str()),
                "principal": ctx.principal().map(|p| p.as_str()),
                "args": picked,
            });
            Some(IdempotencyKey::new(sha256_canonical(&material))?)
        }
        IdempotencySource::Host => match ctx.idempotency_key() {
            Some(k) => Some(k.clone()),
            None if contract.idempotency.required => {
                return Err(ToolError::policy_denied(
                    "IDEMPOTENCY_KEY_MISSING",
                    "the host supplied no idempotency key for this write",
                ));
            }
            None => None,
        },
    };
    Ok(key)
}
