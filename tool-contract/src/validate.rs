//! Stage 3: structural validation (the compiled schema, every error), semantic checks (the
//! args' hook), and the repair loop's feedback.

use std::collections::HashMap;

use bumpalo::collections::Vec as BumpVec;
use bumpalo::Bump;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::envelope::Observation;
use crate::error::{ErrorCategory, ToolError, ValidationIssue};
use crate::lite::{Lite, MembersIn};

/// Most issues one feedback carries; the rest are left for the next repair round.
pub const MAX_ISSUES: usize = 32;

/// One problem with the arguments, in the seed's feedback shape.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RepairIssue {
    /// JSON pointer into the arguments, e.g. `/top_k` (`""` for the whole object).
    pub path: String,
    /// The failed JSON Schema keyword (`maximum`, `required`, ...) or, for semantic rules, the
    /// rule's code (`INCIDENT_TOP_K_LIMIT`).
    pub keyword: String,
    /// What was expected: the limit, the type, the allowed values, or the rule's message.
    pub expected: Value,
    /// What was sent, summarized: lengths and counts for long values, never more than 64 chars.
    pub actual: Value,
}

/// The seed's repair feedback, sent back to the model after invalid input.
///
/// ```json
/// {"tool": "search_documents", "error": "INPUT_VALIDATION_FAILED",
///  "issues": [{"path": "/top_k", "keyword": "maximum", "expected": 20, "actual": 50}],
///  "repair_attempt": 1, "max_repair_attempts": 2}
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RepairFeedback {
    /// The tool whose arguments were invalid.
    pub tool: String,
    /// Always `INPUT_VALIDATION_FAILED`.
    pub error: String,
    /// One issue per failed check.
    pub issues: Vec<RepairIssue>,
    /// Which repair this feedback asks for (1-based).
    pub repair_attempt: u32,
    /// How many repairs the loop allows.
    pub max_repair_attempts: u32,
}

impl RepairFeedback {
    pub(crate) fn new(tool: &str, issues: Vec<RepairIssue>) -> Self {
        RepairFeedback {
            tool: tool.to_owned(),
            error: "INPUT_VALIDATION_FAILED".into(),
            issues,
            repair_attempt: 1,
            max_repair_attempts: RepairLoop::DEFAULT_MAX_REPAIRS,
        }
    }
}

/// Summarizes a model-sent value for feedback: short scalars as they are, long strings and
/// containers by size, so feedback stays small and never echoes a payload back at length.
fn summarize(v: &Value) -> Value {
    match v {
        Value::String(s) if s.chars().count() > 64 => {
            let head: String = s.chars().take(32).collect();
            Value::String(format!("{head}… ({} chars)", s.chars().count()))
        }
        Value::Array(a) => Value::String(format!("array of {} items", a.len())),
        Value::Object(o) => Value::String(format!("object with {} properties", o.len())),
        other => other.clone(),
    }
}

/// Turns one `jsonschema` error into the seed's issue shape.
pub(crate) fn issue_from_error(err: &jsonschema::ValidationError<'_>) -> RepairIssue {
    use jsonschema::error::ValidationErrorKind as K;
    let instance = err.instance();
    let len = |v: &Value| match v {
        Value::String(s) => Value::from(s.chars().count()),
        Value::Array(a) => Value::from(a.len()),
        Value::Object(o) => Value::from(o.len()),
        other => summarize(other),
    };
    let (expected, actual) = match err.kind() {
        K::Maximum { limit }
        | K::Minimum { limit }
        | K::ExclusiveMaximum { limit }
        | K::ExclusiveMinimum { limit } => (limit.clone(), summarize(instance)),
        K::MaxLength { limit }
        | K::MinLength { limit }
        | K::MaxItems { limit }
        | K::MinItems { limit } => (Value::from(*limit), len(instance)),
        K::MaxProperties { limit } | K::MinProperties { limit } => {
            (Value::from(*limit), len(instance))
        }
        K::Required { property } => (property.clone(), Value::Null),
        K::AdditionalProperties { unexpected } | K::UnevaluatedProperties { unexpected } => (
            Value::String("no other properties".into()),
            Value::Array(
                unexpected
                    .iter()
                    .take(16)
                    .map(|u| summarize(&Value::String(u.clone())))
                    .collect(),
            ),
        ),
        K::Type { kind } => {
            let expected = match kind {
                jsonschema::error::TypeKind::Single(t) => Value::String(t.to_string()),
                jsonschema::error::TypeKind::Multiple(set) => Value::Array(
                    set.into_iter()
                        .map(|t| Value::String(t.to_string()))
                        .collect(),
                ),
            };
            (expected, summarize(instance))
        }
        K::Enum { options } => ((**options).clone(), summarize(instance)),
        K::Constant { expected_value } => ((**expected_value).clone(), summarize(instance)),
        K::Format { format } => (Value::String(format.clone()), summarize(instance)),
        K::Pattern { pattern } => (Value::String(pattern.clone()), summarize(instance)),
        K::UniqueItems => (Value::Bool(true), Value::String("duplicate items".into())),
        K::MultipleOf { .. } => (Value::String(err.to_string()), summarize(instance)),
        _ => (Value::String(short(&err.to_string())), summarize(instance)),
    };
    RepairIssue {
        path: err.instance_path().as_str().to_owned(),
        keyword: err.kind().keyword().to_owned(),
        expected,
        actual,
    }
}

fn short(s: &str) -> String {
    if s.chars().count() > 200 {
        let head: String = s.chars().take(200).collect();
        format!("{head}…")
    } else {
        s.to_owned()
    }
}

/// A semantic issue in the seed's issue shape: the keyword is the rule's code.
pub(crate) fn issue_from_semantic(issue: &ValidationIssue, args: &Value) -> RepairIssue {
    let path = if issue.field == "tool" || issue.field.is_empty() {
        String::new()
    } else {
        // RFC 6901: `~` and `/` inside a member name are escaped.
        format!("/{}", issue.field.replace('~', "~0").replace('/', "~1"))
    };
    let actual = args.pointer(&path).map(summarize).unwrap_or(Value::Null);
    RepairIssue {
        path,
        keyword: issue.code.to_string(),
        expected: Value::String(issue.message.to_string()),
        actual,
    }
}

/// An `INVALID_INPUT` error carrying the issues in `safe_details`.
pub(crate) fn invalid_input_error(issues: &[RepairIssue]) -> ToolError {
    ToolError::invalid_input(
        "INPUT_VALIDATION_FAILED",
        "the arguments do not satisfy the tool's input contract",
    )
    .with_detail(
        "issues",
        serde_json::to_value(issues).unwrap_or(Value::Null),
    )
}

/// Per-property preparation derived from a schema once, at registry build time: which `null`s
/// to drop (strict-mode models send `null` for omitted optionals) and which defaults to fill.
#[derive(Clone, Debug, Default)]
pub(crate) struct ArgsPlan {
    props: Vec<PropPlan>,
}

#[derive(Clone, Debug)]
struct PropPlan {
    name: String,
    drop_null: bool,
    default: Option<Value>,
    nested: Option<Box<ArgsPlan>>,
    items: Option<Box<ArgsPlan>>,
}

fn allows_null(schema: &Value) -> bool {
    match schema {
        Value::Bool(b) => *b,
        Value::Object(m) => {
            let by_type = match m.get("type") {
                None => {
                    !m.contains_key("enum")
                        && !m.contains_key("const")
                        && !m.contains_key("anyOf")
                        && !m.contains_key("oneOf")
                }
                Some(Value::String(t)) => t == "null",
                Some(Value::Array(ts)) => ts.iter().any(|t| t == "null"),
                Some(_) => false,
            };
            let in_enum = m
                .get("enum")
                .and_then(Value::as_array)
                .is_some_and(|e| e.contains(&Value::Null));
            let in_const = m.get("const") == Some(&Value::Null);
            let in_union = ["anyOf", "oneOf"].iter().any(|k| {
                m.get(*k)
                    .and_then(Value::as_array)
                    .is_some_and(|alts| alts.iter().any(allows_null))
            });
            by_type || in_enum || in_const || in_union
        }
        _ => false,
    }
}

impl ArgsPlan {
    pub(crate) fn from_schema(schema: &Value) -> ArgsPlan {
        Self::build(schema, 0)
    }

    fn build(schema: &Value, depth: usize) -> ArgsPlan {
        let Some(props) = schema.get("properties").and_then(Value::as_object) else {
            return ArgsPlan::default();
        };
        // Recursive types keep `$ref`s; a plan is only a convenience, so stop at a sane depth.
        if depth > 16 {
            return ArgsPlan::default();
        }
        let props = props
            .iter()
            .map(|(name, s)| {
                let nested = s
                    .get("properties")
                    .map(|_| Box::new(Self::build(s, depth + 1)));
                let items = s
                    .get("items")
                    .filter(|i| i.get("properties").is_some())
                    .map(|i| Box::new(Self::build(i, depth + 1)));
                PropPlan {
                    name: name.clone(),
                    drop_null: !allows_null(s),
                    default: if depth == 0 {
                        s.get("default").cloned()
                    } else {
                        None
                    },
                    nested: nested.filter(|p| !p.props.is_empty()),
                    items: items.filter(|p| !p.props.is_empty()),
                }
            })
            .collect();
        ArgsPlan { props }
    }

    /// Drops disallowed `null`s (everywhere the plan reaches) and fills top-level defaults.
    pub(crate) fn apply(&self, args: &mut Value) {
        let Value::Object(map) = args else { return };
        self.apply_map(map);
    }

    fn apply_map(&self, map: &mut Map<String, Value>) {
        // Small plans (the common case) match members by a linear scan: no hashing per call.
        if self.props.len() > 16 {
            return self.apply_map_hashed(map);
        }
        let mut present = 0u32;
        let mut dropped = 0u32;
        for (key, value) in map.iter_mut() {
            let Some(i) = self.props.iter().position(|p| p.name == *key) else {
                continue;
            };
            present |= 1 << i;
            let p = &self.props[i];
            match value {
                Value::Null if p.drop_null => dropped |= 1 << i,
                Value::Object(inner) => {
                    if let Some(n) = &p.nested {
                        n.apply_map(inner);
                    }
                }
                Value::Array(items) => {
                    if let Some(n) = &p.items {
                        for item in items {
                            if let Value::Object(inner) = item {
                                n.apply_map(inner);
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        for (i, p) in self.props.iter().enumerate() {
            let bit = 1 << i;
            if dropped & bit != 0 {
                map.remove(&p.name);
            }
            if let Some(d) = &p.default {
                if present & bit == 0 || dropped & bit != 0 {
                    map.insert(p.name.clone(), d.clone());
                }
            }
        }
    }

    /// The plan on the fast path's borrowed tree (see `crate::fast`). `false` sends the call
    /// to the full path instead: a null to drop (where the `Value` path's removal decides the
    /// members' order) or a plan too large for the bit sets. Defaults are appended, as
    /// `Map::insert` appends them.
    pub(crate) fn apply_lite<'a>(&'a self, args: &mut Lite<'a>, bump: &'a Bump) -> bool {
        match args {
            Lite::Object(members) => match self.apply_members(members, bump) {
                Some(Some(applied)) => {
                    *members = applied;
                    true
                }
                Some(None) => true,
                None => false,
            },
            _ => true,
        }
    }

    /// `members` with the plan applied: a copy in `bump` only where something changed (the
    /// tree's slices are shared, never written in place), `Some(None)` when nothing did, and
    /// `None` to take the full path.
    fn apply_members<'a>(
        &'a self,
        members: &'a [(&'a str, Lite<'a>)],
        bump: &'a Bump,
    ) -> Option<Option<&'a [(&'a str, Lite<'a>)]>> {
        if self.props.len() > 16 {
            return None;
        }
        let copy_of = |members: &[(&'a str, Lite<'a>)]| {
            let mut copy = MembersIn::with_capacity_in(members.len() + 2, bump);
            copy.extend(members.iter().cloned());
            copy
        };
        let mut present = 0u32;
        let mut copy: Option<MembersIn<'a>> = None;
        for (at, (key, value)) in members.iter().enumerate() {
            let Some(i) = self.props.iter().position(|p| p.name == *key) else {
                continue;
            };
            present |= 1 << i;
            let p = &self.props[i];
            let changed = match value {
                Lite::Null if p.drop_null => return None,
                Lite::Object(inner) => match &p.nested {
                    Some(n) => n.apply_members(inner, bump)?.map(Lite::Object),
                    None => None,
                },
                Lite::Array(items) => match &p.items {
                    Some(n) => n.apply_items(items, bump)?.map(Lite::Array),
                    None => None,
                },
                _ => None,
            };
            if let Some(changed) = changed {
                copy.get_or_insert_with(|| copy_of(members))[at].1 = changed;
            }
        }
        for (i, p) in self.props.iter().enumerate() {
            if let Some(d) = &p.default {
                if present & (1 << i) == 0 {
                    copy.get_or_insert_with(|| copy_of(members))
                        .push((p.name.as_str(), Lite::from_value(d, bump)));
                }
            }
        }
        Some(copy.map(MembersIn::into_bump_slice))
    }

    /// An array's object items with the plan applied: `Some(None)` when none changed.
    fn apply_items<'a>(
        &'a self,
        items: &'a [Lite<'a>],
        bump: &'a Bump,
    ) -> Option<Option<&'a [Lite<'a>]>> {
        let mut copy: Option<BumpVec<'a, Lite<'a>>> = None;
        for (at, item) in items.iter().enumerate() {
            if let Lite::Object(inner) = item {
                if let Some(applied) = self.apply_members(inner, bump)? {
                    copy.get_or_insert_with(|| {
                        BumpVec::from_iter_in(items.iter().cloned(), bump)
                    })[at] = Lite::Object(applied);
                }
            }
        }
        Some(copy.map(|c| c.into_bump_slice()))
    }

    fn apply_map_hashed(&self, map: &mut Map<String, Value>) {
        for p in &self.props {
            match map.get_mut(&p.name) {
                Some(Value::Null) if p.drop_null => {
                    map.remove(&p.name);
                }
                Some(Value::Object(inner)) => {
                    if let Some(n) = &p.nested {
                        n.apply_map(inner);
                    }
                }
                Some(Value::Array(items)) => {
                    if let Some(n) = &p.items {
                        for item in items {
                            if let Value::Object(inner) = item {
                                n.apply_map(inner);
                            }
                        }
                    }
                }
                _ => {}
            }
            if let Some(d) = &p.default {
                if !map.contains_key(&p.name) {
                    map.insert(p.name.clone(), d.clone());
                }
            }
        }
    }
}

/// What the repair loop tells the agent to do after a rejected proposal.
#[derive(Clone, Debug, PartialEq)]
pub enum RepairStep {
    /// Send this feedback to the model and let it try again.
    Repair(RepairFeedback),
    /// Stop: the observation is terminal (`TOOL_ARGUMENT_INVALID` after too many repairs, or
    /// the original non-repairable error).
    Stop(Box<Observation>),
}

/// Bounds the repair loop (seed: "Repair loop도 무한하면 안 된다").
///
/// Tracks repairs per call chain (any string the host uses to identify "this attempt at this
/// tool call", e.g. `"turn-7/search_documents"`). A repairable rejection yields feedback up to
/// `max_repair_attempts` times; the next one is a terminal `TOOL_ARGUMENT_INVALID`. A
/// non-repairable rejection (capability denied, unknown version) never loops.
#[derive(Debug, Default)]
pub struct RepairLoop {
    max_repair_attempts: u32,
    used: HashMap<String, u32>,
}

impl RepairLoop {
    /// The seed's bound: two repairs, so the third invalid try ends the chain.
    pub const DEFAULT_MAX_REPAIRS: u32 = 2;

    /// A loop allowing `max_repair_attempts` repairs per chain.
    pub fn new(max_repair_attempts: u32) -> Self {
        RepairLoop {
            max_repair_attempts,
            used: HashMap::new(),
        }
    }

    /// Decides what follows `rejection` in `chain`.
    pub fn on_rejection(&mut self, chain: &str, rejection: &crate::Rejection) -> RepairStep {
        let Some(feedback) = rejection.feedback() else {
            self.used.remove(chain);
            return RepairStep::Stop(Box::new(rejection.observation().clone()));
        };
        let used = self.used.entry(chain.to_owned()).or_insert(0);
        if *used >= self.max_repair_attempts {
            self.used.remove(chain);
            let mut obs = Box::new(rejection.observation().clone());
            obs.error = Some(
                ToolError::new(
                    ErrorCategory::InvalidInput,
                    "TOOL_ARGUMENT_INVALID",
                    "the arguments stayed invalid after the allowed repairs",
                )
                .with_detail("repair_attempts", self.max_repair_attempts)
                .with_detail(
                    "issues",
                    serde_json::to_value(&feedback.issues).unwrap_or(Value::Null),
                ),
            );
            return RepairStep::Stop(obs);
        }
        *used += 1;
        let mut fb = feedback.clone();
        fb.repair_attempt = *used;
        fb.max_repair_attempts = self.max_repair_attempts;
        RepairStep::Repair(fb)
    }

    /// Forgets a chain once its call was accepted.
    pub fn on_accepted(&mut self, chain: &str) {
        self.used.remove(chain);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn plan_drops_disallowed_nulls_and_fills_defaults() {
        let schema = json!({
            "type": "object",
            "properties": {
                "a": {"type": "integer", "default": 8},
                "b": {"type": ["string", "null"]},
                "c": {"type": "object", "properties": {"d": {"type": "string"}}},
                "e": {"type": "array", "items": {"type": "object", "properties": {"f": {"type": "boolean"}}}}
            }
        });
        let plan = ArgsPlan::from_schema(&schema);
        let mut args = json!({"a": null, "b": null, "c": {"d": null}, "e": [{"f": null}, 3]});
        plan.apply(&mut args);
        assert_eq!(args, json!({"a": 8, "b": null, "c": {}, "e": [{}, 3]}));
    }

    #[test]
    fn long_values_are_summarized() {
        assert_eq!(
            summarize(&json!("a".repeat(100))),
            json!(format!("{}… (100 chars)", "a".repeat(32)))
        );
        assert_eq!(summarize(&json!([1, 2])), json!("array of 2 items"));
        assert_eq!(summarize(&json!(50)), json!(50));
    }
}
