//! The contract's own fields: name, description, effect, authorization, approval, timeout,
//! retry, idempotency, policy version, provenance, output size cap, open output, dependency
//! versions and error model; the two schemas go to
//! [`super::schema`], the flow declarations to [`super::flow`].
//!
//! A field this table does not know is major, "not understood", whenever it differs: a field
//! added to [`ToolContract`](crate::ToolContract) must be given a rule here before a change of
//! it can pass as minor.

use serde_json::{Map, Value};

use super::{push_pointer, schema, show, Change, ChangeClass, ChangeKind, Rules};
use crate::contract::ApprovalPolicy;
use crate::schema::Direction;
use crate::Effect;

/// Extractors that scope what the handler may touch; dropping one is a security change.
const IDENTITY_EXTRACTORS: &[&str] = &["Tenant", "Principal", "Capabilities"];

pub(super) fn compare(old: &Value, new: &Value, rules: &Rules, out: &mut Vec<Change>) {
    let (Some(o), Some(n)) = (old.as_object(), new.as_object()) else {
        if !same(old, new) {
            out.push(not_understood("", "a contract is not a JSON object"));
        }
        return;
    };
    let mut keys: Vec<&str> = o.keys().map(String::as_str).collect();
    keys.extend(n.keys().map(String::as_str).filter(|k| !o.contains_key(*k)));
    let cx = Fields {
        old: o,
        new: n,
        rules,
        write: effect(n.get("effect"))
            .or_else(|| effect(o.get("effect")))
            .is_some_and(Effect::is_write),
    };
    for key in keys {
        let (a, b) = (o.get(key), n.get(key));
        let ptr = push_pointer("", key);
        let start = out.len();
        match key {
            // What the bump is judged against, and the hashes of what is compared here.
            "version" | "fingerprint" => continue,
            "name" => cx.name(a, b, out),
            "description" => {
                if !same_opt(a, b) {
                    out.push(Change::new(
                        ptr.clone(),
                        ChangeKind::DescriptionChanged,
                        ChangeClass::Patch,
                        "the description changed: documentation only",
                    ));
                }
            }
            "input_schema" | "output_schema" => cx.schema(key, a, b, out),
            "model_view_schema" => match (a, b) {
                (Some(_), Some(_)) => cx.schema(key, a, b, out),
                _ => super::output::model_view(a, b, out),
            },
            "effect" => cx.effect(a, b, out),
            "approval" => cx.approval(a, b, out),
            "authorization" => cx.authorization(a, b, out),
            "timeout_ms" => cx.timeout(a, b, out),
            "retry" => cx.retry(a, b, out),
            "idempotency" => cx.idempotency(a, b, out),
            "policy_version" => {
                if !same_opt(a, b) {
                    out.push(Change::new(
                        ptr.clone(),
                        ChangeKind::PolicyVersionChanged,
                        ChangeClass::Major,
                        format!(
                            "policy version changed from {} to {}: what the host's policy allows is outside the contract, so the change is treated as major",
                            show_opt(a),
                            show_opt(b)
                        ),
                    ));
                }
            }
            "provenance" => cx.provenance(a, b, out),
            "max_output_bytes" => super::output::output_cap(a, b, out),
            "open_output" => super::output::open_output(a, b, out),
            "depends_on" => super::output::dependencies(a, b, out),
            "flow" => super::flow::compare(o, n, out),
            "error_model" => cx.error_model(a, b, out),
            _ => {
                if !same_opt(a, b) {
                    out.push(not_understood(
                        &ptr,
                        &format!(
                            "`{key}` {} is a contract field this classifier does not know",
                            presence(a, b)
                        ),
                    ));
                }
            }
        }
        // Never silent: a field that differs without a change found is at least a patch.
        if out.len() == start && !same_field(key, a, b) {
            out.push(Change::new(
                ptr,
                ChangeKind::Rewritten,
                ChangeClass::Patch,
                format!("`{key}` is written differently with the same meaning"),
            ));
        }
    }
}

struct Fields<'a> {
    old: &'a Map<String, Value>,
    new: &'a Map<String, Value>,
    rules: &'a Rules,
    /// Whether the tool (as it is now) writes: retries and idempotency weigh more then.
    write: bool,
}

impl Fields<'_> {
    fn name(&self, a: Option<&Value>, b: Option<&Value>, out: &mut Vec<Change>) {
        if !same_opt(a, b) {
            out.push(Change::new(
                "/name",
                ChangeKind::ToolRenamed,
                ChangeClass::Major,
                format!(
                    "the tool was renamed from {} to {}: calls by the old name fail",
                    show_opt(a),
                    show_opt(b)
                ),
            ));
        }
    }

    fn schema(&self, key: &str, a: Option<&Value>, b: Option<&Value>, out: &mut Vec<Change>) {
        let dir = if key == "input_schema" {
            Direction::Input
        } else {
            Direction::Output
        };
        let ptr = push_pointer("", key);
        match (a, b) {
            (Some(x), Some(y)) => schema::compare(dir, x, y, &ptr, &ptr, out),
            (None, None) => {}
            _ => out.push(not_understood(&ptr, &format!("`{key}` {}", presence(a, b)))),
        }
    }

    fn effect(&self, a: Option<&Value>, b: Option<&Value>, out: &mut Vec<Change>) {
        if same_opt(a, b) {
            return;
        }
        match (effect(a), effect(b)) {
            (Some(x), Some(y)) if x < y => out.push(Change::new(
                "/effect",
                ChangeKind::EffectEscalated,
                ChangeClass::Security,
                format!("effect escalated from `{x}` to `{y}`: the tool may now do more than callers and approvers agreed to"),
            )),
            (Some(x), Some(y)) if x > y => out.push(Change::new(
                "/effect",
                ChangeKind::EffectLowered,
                ChangeClass::Major,
                format!("effect lowered from `{x}` to `{y}`: callers that relied on what the tool did lose it"),
            )),
            _ => out.push(not_understood(
                "/effect",
                &format!("effect changed from {} to {}", show_opt(a), show_opt(b)),
            )),
        }
    }

    fn approval(&self, a: Option<&Value>, b: Option<&Value>, out: &mut Vec<Change>) {
        if same_opt(a, b) {
            return;
        }
        let rank = |v: Option<&Value>| {
            let policy: ApprovalPolicy = serde_json::from_value(v?.clone()).ok()?;
            Some(match policy {
                ApprovalPolicy::Never => 0,
                ApprovalPolicy::Conditional => 1,
                ApprovalPolicy::Always => 2,
            })
        };
        let what = format!("approval changed from {} to {}", show_opt(a), show_opt(b));
        match (rank(a), rank(b)) {
            (Some(x), Some(y)) if y < x => out.push(Change::new(
                "/approval",
                ChangeKind::ApprovalWeakened,
                ChangeClass::Security,
                format!("{what}: calls that waited for a person now run without one"),
            )),
            (Some(x), Some(y)) if y > x => out.push(Change::new(
                "/approval",
                ChangeKind::ApprovalStrengthened,
                ChangeClass::Major,
                format!("{what}: calls that ran at once may now wait for a person's approval"),
            )),
            _ => out.push(not_understood("/approval", &what)),
        }
    }

    fn authorization(&self, a: Option<&Value>, b: Option<&Value>, out: &mut Vec<Change>) {
        let (Some(x), Some(y)) = (a.and_then(Value::as_object), b.and_then(Value::as_object))
        else {
            if !same_opt(a, b) {
                out.push(not_understood(
                    "/authorization",
                    &format!("`authorization` {}", presence(a, b)),
                ));
            }
            return;
        };
        for key in union_keys(x, y) {
            let (p, q) = (x.get(key), y.get(key));
            let ptr = push_pointer("/authorization", key);
            let lists = (p.map(strings), q.map(strings));
            match (key, lists) {
                ("capabilities", (Some(Some(old)), Some(Some(new)))) => {
                    for (i, cap) in new.iter().enumerate() {
                        if !old.contains(cap) {
                            out.push(Change::new(
                                push_pointer(&ptr, &i.to_string()),
                                ChangeKind::CapabilityAdded,
                                ChangeClass::Major,
                                format!("capability `{cap}` is now required: callers without it are refused"),
                            ));
                        }
                    }
                    for (i, cap) in old.iter().enumerate() {
                        if !new.contains(cap) {
                            out.push(Change::new(
                                push_pointer(&ptr, &i.to_string()),
                                ChangeKind::CapabilityRemoved,
                                ChangeClass::Security,
                                format!("capability `{cap}` is no longer required: callers who lack it may now run the tool"),
                            ));
                        }
                    }
                }
                ("extractors", (Some(Some(old)), Some(Some(new)))) => {
                    for (i, ex) in new.iter().enumerate() {
                        if !old.contains(ex) {
                            out.push(Change::new(
                                push_pointer(&ptr, &i.to_string()),
                                ChangeKind::ExtractorAdded,
                                ChangeClass::Major,
                                format!("the handler now takes `{ex}` from the trusted context: hosts that do not supply it get refusals"),
                            ));
                        }
                    }
                    for (i, ex) in old.iter().enumerate() {
                        if new.contains(ex) {
                            continue;
                        }
                        let base = ex.split('<').next().unwrap_or(ex).trim();
                        let (class, reason) = if IDENTITY_EXTRACTORS.contains(&base) {
                            (
                                ChangeClass::Security,
                                format!("the handler no longer takes `{ex}` from the trusted context: check that it does not now act beyond the caller's scope"),
                            )
                        } else {
                            (
                                ChangeClass::Minor,
                                format!("the handler no longer takes `{ex}` from the trusted context: hosts need to supply less"),
                            )
                        };
                        out.push(Change::new(
                            push_pointer(&ptr, &i.to_string()),
                            ChangeKind::ExtractorRemoved,
                            class,
                            reason,
                        ));
                    }
                }
                _ => {
                    if !same_opt(p, q) {
                        out.push(not_understood(
                            &ptr,
                            &format!("`authorization.{key}` {}", presence(p, q)),
                        ));
                    }
                }
            }
        }
    }

    fn timeout(&self, a: Option<&Value>, b: Option<&Value>, out: &mut Vec<Change>) {
        if same_opt(a, b) {
            return;
        }
        let (Some(x), Some(y)) = (a.and_then(Value::as_u64), b.and_then(Value::as_u64)) else {
            return out.push(not_understood(
                "/timeout_ms",
                &format!("timeout changed from {} to {}", show_opt(a), show_opt(b)),
            ));
        };
        let change = if y < x {
            Change::new(
                "/timeout_ms",
                ChangeKind::TimeoutLowered,
                ChangeClass::Major,
                format!(
                    "timeout lowered from {x} ms to {y} ms: calls that took longer now time out"
                ),
            )
        } else {
            match self.rules.caller_deadline_ms {
                Some(deadline) if y > deadline => Change::new(
                    "/timeout_ms",
                    ChangeKind::TimeoutRaised,
                    ChangeClass::Major,
                    format!("timeout raised from {x} ms to {y} ms, past the callers' deadline of {deadline} ms: callers give up before the tool does"),
                ),
                _ => Change::new(
                    "/timeout_ms",
                    ChangeKind::TimeoutRaised,
                    ChangeClass::Minor,
                    format!("timeout raised from {x} ms to {y} ms: slow calls that timed out may now finish"),
                ),
            }
        };
        out.push(change);
    }

    /// Retries added to a write run it again after a transient failure: major. On a read they
    /// are harmless: minor.
    fn retries_added(&self, ptr: &str, what: String) -> Change {
        if self.write {
            Change::new(
                ptr,
                ChangeKind::RetriesAdded,
                ChangeClass::Major,
                format!("{what}: a write now runs again after a transient failure"),
            )
        } else {
            Change::new(
                ptr,
                ChangeKind::RetriesAdded,
                ChangeClass::Minor,
                format!("{what}: a read may safely run again"),
            )
        }
    }

    fn retry(&self, a: Option<&Value>, b: Option<&Value>, out: &mut Vec<Change>) {
        let (Some(x), Some(y)) = (a.and_then(Value::as_object), b.and_then(Value::as_object))
        else {
            if !same_opt(a, b) {
                out.push(not_understood(
                    "/retry",
                    &format!("`retry` {}", presence(a, b)),
                ));
            }
            return;
        };
        for key in union_keys(x, y) {
            let (p, q) = (x.get(key), y.get(key));
            if same_opt(p, q) {
                continue;
            }
            let ptr = push_pointer("/retry", key);
            let numbers = (p.and_then(Value::as_u64), q.and_then(Value::as_u64));
            match (key, numbers) {
                ("max_attempts", (Some(m), Some(k))) if k > m => {
                    out.push(self.retries_added(&ptr, format!("automatic attempts raised from {m} to {k}")));
                }
                ("max_attempts", (Some(m), Some(k))) => out.push(Change::new(
                    ptr,
                    ChangeKind::RetriesReduced,
                    ChangeClass::Minor,
                    format!("automatic attempts lowered from {m} to {k}: transient failures reach the caller sooner"),
                )),
                ("backoff_ms" | "max_backoff_ms", (Some(m), Some(k))) => out.push(Change::new(
                    ptr,
                    ChangeKind::RetryBackoffChanged,
                    ChangeClass::Minor,
                    format!("`{key}` changed from {m} ms to {k} ms: retries wait a different time"),
                )),
                _ => out.push(not_understood(&ptr, &format!("`retry.{key}` {}", presence(p, q)))),
            }
        }
    }

    fn idempotency(&self, a: Option<&Value>, b: Option<&Value>, out: &mut Vec<Change>) {
        let (Some(x), Some(y)) = (a.and_then(Value::as_object), b.and_then(Value::as_object))
        else {
            if !same_opt(a, b) {
                out.push(not_understood(
                    "/idempotency",
                    &format!("`idempotency` {}", presence(a, b)),
                ));
            }
            return;
        };
        for key in union_keys(x, y) {
            let (p, q) = (x.get(key), y.get(key));
            if same_opt(p, q) {
                continue;
            }
            let ptr = push_pointer("/idempotency", key);
            match (key, p.and_then(Value::as_bool), q.and_then(Value::as_bool)) {
                ("required", Some(true), Some(false)) if self.write => out.push(Change::new(
                    ptr,
                    ChangeKind::IdempotencyRemoved,
                    ChangeClass::Security,
                    "a write no longer requires an idempotency key: a repeated call may now run twice",
                )),
                ("required", Some(true), Some(false)) => out.push(Change::new(
                    ptr,
                    ChangeKind::IdempotencyRemoved,
                    ChangeClass::Minor,
                    "an idempotency key is no longer required",
                )),
                ("required", Some(false), Some(true)) => out.push(Change::new(
                    ptr,
                    ChangeKind::IdempotencyRequired,
                    ChangeClass::Major,
                    "an idempotency key is now required: calls without one are refused",
                )),
                ("source", _, _) => out.push(self.idempotency_source(&ptr, p, q)),
                _ => out.push(not_understood(&ptr, &format!("`idempotency.{key}` {}", presence(p, q)))),
            }
        }
    }

    fn idempotency_source(&self, ptr: &str, a: Option<&Value>, b: Option<&Value>) -> Change {
        let kind = |v: Option<&Value>| v?.get("kind")?.as_str().map(str::to_owned);
        let (Some(from), Some(to)) = (kind(a), kind(b)) else {
            return not_understood(ptr, &format!("`idempotency.source` {}", presence(a, b)));
        };
        let what = format!(
            "the idempotency key's source changed from {} to {}",
            show_opt(a),
            show_opt(b)
        );
        if !["none", "field", "derived", "host"].contains(&to.as_str())
            || !["none", "field", "derived", "host"].contains(&from.as_str())
        {
            return not_understood(ptr, &what);
        }
        match (self.write, to.as_str()) {
            (true, "none") => Change::new(
                ptr,
                ChangeKind::IdempotencyRemoved,
                ChangeClass::Security,
                format!("{what}: a write's repeated call can no longer be recognised"),
            ),
            (true, _) => Change::new(
                ptr,
                ChangeKind::IdempotencySourceChanged,
                ChangeClass::Major,
                format!(
                    "{what}: a call retried across the upgrade is not recognised as the same call"
                ),
            ),
            (false, _) => Change::new(
                ptr,
                ChangeKind::IdempotencySourceChanged,
                ChangeClass::Minor,
                format!("{what}: a read is harmless to repeat"),
            ),
        }
    }

    fn provenance(&self, a: Option<&Value>, b: Option<&Value>, out: &mut Vec<Change>) {
        let (a, b) = (a.filter(|v| !v.is_null()), b.filter(|v| !v.is_null()));
        if same_opt(a, b) {
            return;
        }
        let (class, what) = match (a, b) {
            (None, Some(y)) => (
                ChangeClass::Minor,
                format!("provenance {} declared: observations now name their source", show(y)),
            ),
            (Some(x), None) => (
                ChangeClass::Major,
                format!("provenance {} removed: observations no longer name their source", show(x)),
            ),
            _ => (
                ChangeClass::Major,
                format!(
                    "provenance changed from {} to {}: observations name their source from other fields",
                    show_opt(a),
                    show_opt(b)
                ),
            ),
        };
        out.push(Change::new(
            "/provenance",
            ChangeKind::ProvenanceChanged,
            class,
            what,
        ));
    }

    fn error_model(&self, a: Option<&Value>, b: Option<&Value>, out: &mut Vec<Change>) {
        let (Some(x), Some(y)) = (a.and_then(Value::as_object), b.and_then(Value::as_object))
        else {
            if !same_opt(a, b) {
                out.push(not_understood(
                    "/error_model",
                    &format!("`error_model` {}", presence(a, b)),
                ));
            }
            return;
        };
        for key in union_keys(x, y) {
            let (p, q) = (x.get(key), y.get(key));
            if same_opt(p, q) {
                continue;
            }
            let ptr = push_pointer("/error_model", key);
            match key {
                "categories" => self.categories(&ptr, p, q, out),
                "auto_retried" => self.auto_retried(&ptr, p, q, out),
                _ => out.push(not_understood(
                    &ptr,
                    &format!("`error_model.{key}` {}", presence(p, q)),
                )),
            }
        }
    }

    fn categories(&self, ptr: &str, a: Option<&Value>, b: Option<&Value>, out: &mut Vec<Change>) {
        let (Some(old), Some(new)) = (category_list(a), category_list(b)) else {
            return out.push(not_understood(
                ptr,
                &format!("`error_model.categories` {}", presence(a, b)),
            ));
        };
        for (i, (name, info)) in new.iter().enumerate() {
            let here = push_pointer(ptr, &i.to_string());
            let Some((_, was)) = old.iter().find(|(n, _)| n == name) else {
                out.push(Change::new(
                    here,
                    ChangeKind::ErrorCategoryAdded,
                    ChangeClass::Major,
                    format!("error category `{name}` added: agents may receive a category they do not handle"),
                ));
                continue;
            };
            for key in union_keys(was, info) {
                let (p, q) = (was.get(key), info.get(key));
                if same_opt(p, q) {
                    continue;
                }
                let at = push_pointer(&here, key);
                match key {
                    "retryable" => out.push(Change::new(
                        at,
                        ChangeKind::ErrorRetryabilityChanged,
                        ChangeClass::Minor,
                        format!("`{name}` retryable changed from {} to {}: agents react to it differently", show_opt(p), show_opt(q)),
                    )),
                    "agent_action" => out.push(Change::new(
                        at,
                        ChangeKind::AnnotationChanged,
                        ChangeClass::Patch,
                        format!("the advice for `{name}` changed: documentation only"),
                    )),
                    "category" => {}
                    _ => out.push(not_understood(&at, &format!("`{key}` of error category `{name}` {}", presence(p, q)))),
                }
            }
        }
        for (i, (name, _)) in old.iter().enumerate() {
            if !new.iter().any(|(n, _)| n == name) {
                out.push(Change::new(
                    push_pointer(ptr, &i.to_string()),
                    ChangeKind::ErrorCategoryRemoved,
                    ChangeClass::Minor,
                    format!("error category `{name}` removed: agents no longer receive it"),
                ));
            }
        }
    }

    fn auto_retried(&self, ptr: &str, a: Option<&Value>, b: Option<&Value>, out: &mut Vec<Change>) {
        let (Some(Some(old)), Some(Some(new))) = (a.map(strings), b.map(strings)) else {
            return out.push(not_understood(
                ptr,
                &format!("`error_model.auto_retried` {}", presence(a, b)),
            ));
        };
        // The list follows `retry`: when that changed too, it was classified there.
        if !same_opt(self.old.get("retry"), self.new.get("retry")) {
            out.push(Change::new(
                ptr,
                ChangeKind::Rewritten,
                ChangeClass::Patch,
                "the automatically retried categories follow the retry change",
            ));
            return;
        }
        let added: Vec<&String> = new.iter().filter(|c| !old.contains(c)).collect();
        let removed: Vec<&String> = old.iter().filter(|c| !new.contains(c)).collect();
        if !added.is_empty() {
            out.push(self.retries_added(
                ptr,
                format!("{} now retried automatically", list_text(&added)),
            ));
        }
        if !removed.is_empty() {
            out.push(Change::new(
                ptr,
                ChangeKind::RetriesReduced,
                ChangeClass::Minor,
                format!(
                    "{} no longer retried automatically: the caller sees them sooner",
                    list_text(&removed)
                ),
            ));
        }
    }
}

/// The error model's categories as `(name, entry)`; `None` when not in that shape.
fn category_list(v: Option<&Value>) -> Option<Vec<(String, &Map<String, Value>)>> {
    v?.as_array()?
        .iter()
        .map(|c| {
            let map = c.as_object()?;
            Some((map.get("category")?.as_str()?.to_owned(), map))
        })
        .collect()
}

fn effect(v: Option<&Value>) -> Option<Effect> {
    serde_json::from_value(v?.clone()).ok()
}

pub(super) fn not_understood(ptr: &str, what: &str) -> Change {
    Change::new(
        ptr,
        ChangeKind::NotUnderstood,
        ChangeClass::Major,
        format!("not understood: {what}; treated as major"),
    )
}

pub(super) fn strings(v: &Value) -> Option<Vec<String>> {
    v.as_array()?
        .iter()
        .map(|s| s.as_str().map(str::to_owned))
        .collect()
}

pub(super) fn union_keys<'m>(a: &'m Map<String, Value>, b: &'m Map<String, Value>) -> Vec<&'m str> {
    let mut keys: Vec<&str> = a.keys().map(String::as_str).collect();
    keys.extend(b.keys().map(String::as_str).filter(|k| !a.contains_key(*k)));
    keys
}

pub(super) fn same(a: &Value, b: &Value) -> bool {
    a == b || crate::canonical::to_vec(a) == crate::canonical::to_vec(b)
}

pub(super) fn same_opt(a: Option<&Value>, b: Option<&Value>) -> bool {
    match (a, b) {
        (Some(x), Some(y)) => same(x, y),
        (None, None) => true,
        _ => false,
    }
}

/// Equal apart from what is not compared (a schema's `$id`, which carries the version).
pub(super) fn same_field(key: &str, a: Option<&Value>, b: Option<&Value>) -> bool {
    if key == "max_output_bytes" {
        // Contracts written before the cap existed had the default cap.
        let default = Value::from(crate::contract::DEFAULT_MAX_OUTPUT_BYTES);
        return same_opt(a.or(Some(&default)), b.or(Some(&default)));
    }
    if !matches!(key, "input_schema" | "output_schema" | "model_view_schema") {
        return same_opt(a, b);
    }
    let strip = |v: Option<&Value>| {
        v.map(|v| match v {
            Value::Object(map) => {
                let mut map = map.clone();
                map.remove("$id");
                Value::Object(map)
            }
            other => other.clone(),
        })
    };
    same_opt(strip(a).as_ref(), strip(b).as_ref())
}

pub(super) fn show_opt(v: Option<&Value>) -> String {
    v.map_or_else(|| "nothing".to_owned(), show)
}

pub(super) fn presence(a: Option<&Value>, b: Option<&Value>) -> String {
    match (a, b) {
        (None, Some(y)) => format!("added ({})", show(y)),
        (Some(x), None) => format!("removed (was {})", show(x)),
        _ => format!("changed from {} to {}", show_opt(a), show_opt(b)),
    }
}

pub(super) fn list_text(items: &[&String]) -> String {
    items
        .iter()
        .map(|s| format!("`{s}`"))
        .collect::<Vec<_>>()
        .join(", ")
}
