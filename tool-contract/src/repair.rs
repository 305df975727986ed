//! Repair feedback: what the model is told when its arguments fail the input contract, and
//! the loop that bounds how often it may try again.
//!
//! Every failed check becomes one [`RepairIssue`] (a JSON pointer, the failed keyword or rule,
//! what was expected, what was sent, summarized), so a model can fix exactly what is wrong.
//! Feedback never carries a stack trace, a secret or a long echo of the model's own payload.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::envelope::Observation;
use crate::error::{ErrorCategory, ToolError, ValidationIssue};

/// Most issues one feedback carries; the rest are left for the next repair round.
pub const MAX_ISSUES: usize = 32;

/// One problem with the arguments.
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

/// Repair feedback, sent back to the model after invalid input.
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

/// Turns one `jsonschema` error about `args` into an issue.
pub(crate) fn issue_from_error(err: &jsonschema::ValidationError<'_>, args: &Value) -> RepairIssue {
    use jsonschema::error::ValidationErrorKind as K;
    // An object schema with no properties and `additionalProperties: false` (a tool whose
    // arguments have no fields) is checked as "every property against `false`": name the
    // properties, as for any other closed object.
    if let (K::FalseSchema, Some(object)) = (err.kind(), closed_object(err, args)) {
        return RepairIssue {
            path: err.instance_path().as_str().to_owned(),
            keyword: "additionalProperties".to_owned(),
            expected: Value::String("no other properties".into()),
            actual: unexpected_names(object.keys()),
        };
    }
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
            unexpected_names(unexpected.iter()),
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

/// The first few unexpected property names, each summarized: what a closed object reports.
fn unexpected_names<'a>(names: impl Iterator<Item = &'a String>) -> Value {
    Value::Array(
        names
            .take(16)
            .map(|n| summarize(&Value::String(n.clone())))
            .collect(),
    )
}

/// The object whose `additionalProperties: false` failed as a `false` schema (the error names
/// the object's place but carries one member's value).
fn closed_object<'v>(
    err: &jsonschema::ValidationError<'_>,
    args: &'v Value,
) -> Option<&'v serde_json::Map<String, Value>> {
    if !err
        .schema_path()
        .as_str()
        .ends_with("/additionalProperties")
    {
        return None;
    }
    args.pointer(err.instance_path().as_str())?.as_object()
}

fn short(s: &str) -> String {
    if s.chars().count() > 200 {
        let head: String = s.chars().take(200).collect();
        format!("{head}…")
    } else {
        s.to_owned()
    }
}

/// A semantic issue as a repair issue: the keyword is the rule's code.
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

/// Fills in what was sent at each issue's pointer, summarized, for issues a handler reported
/// with [`ToolError::invalid_argument`] (it knows the rule, the pipeline holds the arguments).
pub(crate) fn fill_actuals(err: ToolError, args: &Value) -> ToolError {
    let Some(issues) = issues_of(&err) else {
        return err;
    };
    let issues: Vec<RepairIssue> = issues
        .into_iter()
        .map(|mut issue| {
            if issue.actual.is_null() {
                issue.actual = args
                    .pointer(&issue.path)
                    .map(summarize)
                    .unwrap_or(Value::Null);
            }
            issue
        })
        .collect();
    err.with_detail(
        "issues",
        serde_json::to_value(&issues).unwrap_or(Value::Null),
    )
}

/// The issues of a repairable input error, wherever it was found; `None` for any other error.
fn issues_of(err: &ToolError) -> Option<Vec<RepairIssue>> {
    if err.category() != ErrorCategory::InvalidInput
        || err.code() != crate::error::INPUT_VALIDATION_FAILED
    {
        return None;
    }
    let issues: Vec<RepairIssue> =
        serde_json::from_value(err.safe_details().get("issues")?.clone()).ok()?;
    (!issues.is_empty()).then_some(issues)
}

impl RepairFeedback {
    /// The feedback for an observation whose arguments the model can repair: the input
    /// schema, a semantic rule or the handler itself
    /// ([`ToolError::invalid_argument`]) found them wrong. `None` for any other observation.
    pub fn from_observation(observation: &Observation) -> Option<Self> {
        let issues = issues_of(observation.error.as_ref()?)?;
        Some(RepairFeedback::new(&observation.meta.tool, issues))
    }
}

/// An `INVALID_INPUT` error carrying the issues in `safe_details`.
pub(crate) fn invalid_input_error(issues: &[RepairIssue]) -> ToolError {
    ToolError::invalid_input(
        crate::error::INPUT_VALIDATION_FAILED,
        "the arguments do not satisfy the tool's input contract",
    )
    .with_detail(
        "issues",
        serde_json::to_value(issues).unwrap_or(Value::Null),
    )
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

/// Bounds the repair loop: a model that cannot produce valid arguments must not be asked
/// forever.
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
    /// The default bound: two repairs, so the third invalid try ends the chain.
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
        match rejection.feedback() {
            Some(feedback) => self.step(chain, feedback, rejection.observation()),
            None => {
                self.used.remove(chain);
                RepairStep::Stop(Box::new(rejection.observation().clone()))
            }
        }
    }

    /// Decides what follows an executed call's observation in `chain`: `None` when there is
    /// nothing to repair (the call succeeded, which also forgets the chain, or failed for
    /// another reason), else the same step as [`on_rejection`](Self::on_rejection), so
    /// issues the handler reported ([`ToolError::invalid_argument`]) count against the same
    /// bound as the schema's.
    pub fn on_observation(&mut self, chain: &str, observation: &Observation) -> Option<RepairStep> {
        if observation.ok {
            self.used.remove(chain);
            return None;
        }
        let feedback = RepairFeedback::from_observation(observation)?;
        Some(self.step(chain, &feedback, observation))
    }

    fn step(
        &mut self,
        chain: &str,
        feedback: &RepairFeedback,
        observation: &Observation,
    ) -> RepairStep {
        let used = self.used.entry(chain.to_owned()).or_insert(0);
        if *used >= self.max_repair_attempts {
            self.used.remove(chain);
            return RepairStep::Stop(Box::new(self.exhausted(observation, feedback)));
        }
        *used += 1;
        let mut fb = feedback.clone();
        fb.repair_attempt = *used;
        fb.max_repair_attempts = self.max_repair_attempts;
        RepairStep::Repair(fb)
    }

    /// The terminal observation once the repairs are spent: `TOOL_ARGUMENT_INVALID`, with
    /// the last issues.
    fn exhausted(&self, observation: &Observation, feedback: &RepairFeedback) -> Observation {
        let mut obs = observation.clone();
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
        obs
    }

    /// The bound: how many repairs a chain may use.
    pub fn max_repair_attempts(&self) -> u32 {
        self.max_repair_attempts
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
    fn long_values_are_summarized() {
        assert_eq!(
            summarize(&json!("a".repeat(100))),
            json!(format!("{}… (100 chars)", "a".repeat(32)))
        );
        assert_eq!(summarize(&json!([1, 2])), json!("array of 2 items"));
        assert_eq!(summarize(&json!(50)), json!(50));
    }
}

#[cfg(test)]
mod closed_objects {
    use super::*;
    use serde_json::json;

    fn issues(schema: Value, instance: Value) -> Vec<RepairIssue> {
        let validator = jsonschema::validator_for(&schema).unwrap();
        validator
            .iter_errors(&instance)
            .map(|e| issue_from_error(&e, &instance))
            .collect()
    }

    /// With fields or without, an unexpected property is named the same way.
    #[test]
    fn an_unknown_property_is_named_whether_or_not_the_object_has_fields() {
        let args = json!({"account_id": "acc_1"});
        let without = issues(
            json!({"type": "object", "additionalProperties": false}),
            args.clone(),
        );
        let with = issues(
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": false}),
            args,
        );
        for found in [&without, &with] {
            assert_eq!(found.len(), 1, "{found:?}");
            assert_eq!(found[0].keyword, "additionalProperties");
            assert_eq!(found[0].actual, json!(["account_id"]));
            assert_eq!(found[0].path, "");
        }
        let nested = issues(
            json!({"type": "object", "properties": {"n": {"type": "object", "additionalProperties": false}}}),
            json!({"n": {"x": 1}}),
        );
        assert_eq!(nested[0].keyword, "additionalProperties");
        assert_eq!(nested[0].path, "/n");
        assert_eq!(nested[0].actual, json!(["x"]));
    }
}
