//! Stage 1, parse: a model's proposal, parsed once, with limits, into a [`Proposal`].
//!
//! The one parse made here is what later stages validate, approve, hash and execute, so it is
//! strict where `serde_json::from_str::<Value>` is lenient:
//!
//! * the byte cap is checked **before** parsing (default 1 MiB);
//! * nesting depth and the total number of JSON values are capped (defaults 32 and 100 000);
//! * a duplicate object key is an error, at any depth (serde_json would keep the last one, so
//!   a validator and a handler could see different values);
//! * **number policy**: a number with no fractional part is an integer, whether written `8` or
//!   `8.0` (JSON Schema's own definition, so `8.0` is accepted for an integer field and reaches
//!   the handler as `8`). Integers written without a fraction or exponent are exact within
//!   `i64`/`u64`; any other integral value beyond ±2^53 (where `f64` stops holding every
//!   integer: `2^64`, `-9223372036854775809`, `1e20`, `9007199254740993.0`) is rejected instead
//!   of being rounded, and so is `1e400`. Other fractional numbers stay `f64` (so `1e-400`
//!   underflows to `0`, as in every IEEE-754 parser).
//!
//! Errors are `INVALID_INPUT` observations with a stable code (`PROPOSAL_TOO_LARGE`,
//! `PROPOSAL_TOO_DEEP`, `PROPOSAL_TOO_MANY_VALUES`, `DUPLICATE_KEY`, `NUMBER_OUT_OF_RANGE`,
//! `PROPOSAL_MALFORMED`, `PROPOSAL_SHAPE`): the model can repair them.
//!
//! Two parsers apply these rules, both through `rules` (each rule is written there once): the
//! full parser (`full`, serde_json driven by checking `DeserializeSeed`s) reads every shape and words every
//! error; the fast path's reader (`fast`) reads the common shape into a borrowed tree and
//! refuses everything else, which the full parser then decides. The registry tries the fast
//! reader first (see [`RegistryBuilder::fast_path`](crate::RegistryBuilder::fast_path)).

use serde_json::{Map, Value};

use crate::error::ToolError;

pub(crate) mod fast;
mod full;
pub(crate) mod rules;

/// Caps applied while parsing a proposal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ProposalLimits {
    /// Largest accepted proposal, in bytes of JSON text.
    pub max_bytes: usize,
    /// Deepest accepted nesting of arrays and objects (at most 128, serde_json's own limit).
    pub max_depth: usize,
    /// Most JSON values (scalars, arrays, objects) in one proposal.
    pub max_values: usize,
}

impl Default for ProposalLimits {
    fn default() -> Self {
        ProposalLimits {
            max_bytes: 1 << 20,
            max_depth: 32,
            max_values: 100_000,
        }
    }
}

impl ProposalLimits {
    /// Sets the byte cap.
    #[must_use]
    pub fn max_bytes(mut self, n: usize) -> Self {
        self.max_bytes = n;
        self
    }
    /// Sets the depth cap.
    #[must_use]
    pub fn max_depth(mut self, n: usize) -> Self {
        self.max_depth = n;
        self
    }
    /// Sets the value-count cap.
    #[must_use]
    pub fn max_values(mut self, n: usize) -> Self {
        self.max_values = n;
        self
    }
}

/// What the model proposed: a tool name, its arguments and, if the provider gave one, a call id.
///
/// Nothing has run yet: a proposal is only an intent, and everything in it is checked
/// before anything acts on it.
#[derive(Clone, Debug, PartialEq)]
pub struct Proposal {
    /// The proposed tool name.
    pub name: String,
    /// The proposed arguments (an object, once validated).
    pub arguments: Value,
    /// The provider's call id (`call_...`, `toolu_...`), echoed in the observation.
    pub call_id: Option<String>,
}

impl Proposal {
    /// A proposal from already-structured parts (e.g. an SDK's typed tool call), taken as is:
    /// no limits or number policy are applied (use [`Proposal::from_value`] for those), and
    /// duplicate keys can no longer be seen in a `Value`: prefer [`Proposal::parse`] on the raw
    /// text.
    pub fn new(name: impl Into<String>, arguments: Value) -> Self {
        Proposal {
            name: name.into(),
            arguments,
            call_id: None,
        }
    }

    /// Sets the provider's call id.
    #[must_use]
    pub fn with_call_id(mut self, id: impl Into<String>) -> Self {
        self.call_id = Some(id.into());
        self
    }

    /// Parses a proposal from raw JSON text, in any of the common shapes:
    ///
    /// * `{"name": "...", "arguments": {...}}` (arguments may also be a JSON string, as OpenAI
    ///   sends them, and is then parsed with the same limits);
    /// * OpenAI's `{"id": "call_..", "type": "function", "function": {"name", "arguments"}}`;
    /// * Anthropic's `{"type": "tool_use", "id": "toolu_..", "name": "..", "input": {...}}`.
    ///
    /// ```
    /// use tool_contract::proposal::{Proposal, ProposalLimits};
    ///
    /// let p = Proposal::parse(
    ///     r#"{"id": "call_017", "type": "function",
    ///         "function": {"name": "search_documents", "arguments": "{\"query\": \"refund\", \"top_k\": 8.0}"}}"#,
    ///     &ProposalLimits::default(),
    /// ).unwrap();
    /// assert_eq!(p.name, "search_documents");
    /// assert_eq!(p.arguments["top_k"], 8); // `8.0` is the integer 8
    /// assert_eq!(p.call_id.as_deref(), Some("call_017"));
    ///
    /// let dup = Proposal::parse(r#"{"name": "a_b", "arguments": {"q": 1, "q": 2}}"#, &ProposalLimits::default());
    /// assert_eq!(dup.unwrap_err().code(), "DUPLICATE_KEY");
    /// ```
    pub fn parse(raw: &str, limits: &ProposalLimits) -> Result<Proposal, ToolError> {
        Self::from_parts(full::parse_parts(raw, limits)?, limits)
    }

    /// Builds a proposal from a JSON value of one of the shapes [`Proposal::parse`] accepts,
    /// applying the depth, size and number policy (not duplicate detection: see [`Proposal::new`]).
    pub fn from_value(value: Value, limits: &ProposalLimits) -> Result<Proposal, ToolError> {
        let value = full::check_value(value, limits)?;
        Self::from_parsed(value, limits)
    }

    fn from_parsed(value: Value, limits: &ProposalLimits) -> Result<Proposal, ToolError> {
        let Value::Object(mut top) = value else {
            return Err(shape(
                "a proposal is a JSON object with `name` and `arguments`",
            ));
        };
        let parts = full::Parts {
            id: top.remove("id"),
            call_id: top.remove("call_id"),
            name: top.remove("name"),
            arguments: top.remove("arguments"),
            input: top.remove("input"),
            function: top.remove("function"),
        };
        Self::from_parts(parts, limits)
    }

    fn from_parts(parts: full::Parts, limits: &ProposalLimits) -> Result<Proposal, ToolError> {
        let str_of = |v: Option<Value>, what: &'static str| match v {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(shape(what)),
        };
        let mut call_id = str_of(parts.id, "the call id must be a string")?
            .or(str_of(parts.call_id, "the call id must be a string")?);
        // One proposal names one call: a shape that could be read two ways is refused, so no
        // logger, proxy or approver can see a different call from the one that runs.
        if parts.function.is_some()
            && (parts.name.is_some() || parts.arguments.is_some() || parts.input.is_some())
        {
            return Err(shape(
                "a proposal names its tool once: either `name` with `arguments`, or `function`",
            ));
        }
        if parts.arguments.is_some() && parts.input.is_some() {
            return Err(shape("a proposal carries `arguments` or `input`, not both"));
        }
        if parts.function.as_ref().is_some_and(|f| !f.is_object()) {
            return Err(shape(
                "`function` must be an object with `name` and `arguments`",
            ));
        }
        let (name, arguments) = if let Some(Value::Object(mut function)) = parts.function {
            (
                str_of(function.remove("name"), "the tool `name` must be a string")?,
                function.remove("arguments"),
            )
        } else {
            (
                str_of(parts.name, "the tool `name` must be a string")?,
                parts.arguments.or(parts.input),
            )
        };
        let Some(name) = name else {
            return Err(shape("the proposal has no tool `name`"));
        };
        if !rules::tool_name_ok(&name) {
            return Err(shape("a tool name is 1 to 128 characters"));
        }
        let arguments = match arguments {
            None | Some(Value::Null) => Value::Object(Map::new()),
            // OpenAI sends arguments as a string of JSON: parse it with the same limits.
            Some(Value::String(text)) => full::parse_value(&text, limits)?,
            Some(other) => other,
        };
        if call_id.as_deref().is_some_and(|id| !rules::call_id_ok(id)) {
            call_id = None;
        }
        Ok(Proposal {
            name,
            arguments,
            call_id,
        })
    }
}

fn shape(message: &'static str) -> ToolError {
    ToolError::invalid_input("PROPOSAL_SHAPE", message)
}

/// Parses JSON text under `limits` and the number policy, rejecting duplicate keys.
pub fn parse_json(raw: &str, limits: &ProposalLimits) -> Result<Value, ToolError> {
    full::parse_value(raw, limits)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn code(raw: &str) -> String {
        Proposal::parse(raw, &ProposalLimits::default())
            .unwrap_err()
            .code()
            .to_owned()
    }

    #[test]
    fn shapes() {
        let l = ProposalLimits::default();
        let a = Proposal::parse(
            r#"{"name":"search_documents","arguments":{"query":"x"}}"#,
            &l,
        )
        .unwrap();
        let b = Proposal::parse(
            r#"{"type":"tool_use","id":"toolu_1","name":"search_documents","input":{"query":"x"}}"#,
            &l,
        )
        .unwrap();
        assert_eq!(a.arguments, b.arguments);
        assert_eq!(b.call_id.as_deref(), Some("toolu_1"));
        let c = Proposal::parse(r#"{"name":"ping_service"}"#, &l).unwrap();
        assert_eq!(c.arguments, json!({}));
    }

    #[test]
    fn limits_and_number_policy() {
        assert_eq!(
            code(r#"{"name":"a_b","arguments":{"n":18446744073709551616}}"#),
            "NUMBER_OUT_OF_RANGE"
        );
        assert_eq!(
            code(r#"{"name":"a_b","arguments":{"n":1e20}}"#),
            "NUMBER_OUT_OF_RANGE"
        );
        assert_eq!(
            code(r#"{"name":"a_b","arguments":{"n":1e400}}"#),
            "NUMBER_OUT_OF_RANGE"
        );
        let p = Proposal::parse(r#"{"name":"a_b","arguments":{"n":18446744073709551615,"m":-9223372036854775808,"f":0.5}}"#, &ProposalLimits::default()).unwrap();
        assert_eq!(p.arguments["n"], json!(u64::MAX));
        assert_eq!(p.arguments["m"], json!(i64::MIN));
        assert_eq!(p.arguments["f"], json!(0.5));
        assert_eq!(
            code(r#"{"name":"a_b","arguments":{"a":{"b":1,"b":2}}}"#),
            "DUPLICATE_KEY"
        );
        assert_eq!(code(r#"{"name":"a_b","name":"c_d"}"#), "DUPLICATE_KEY");
        let deep = format!(
            r#"{{"name":"a_b","arguments":{}{}}}"#,
            "[".repeat(40),
            "]".repeat(40)
        );
        assert_eq!(code(&deep), "PROPOSAL_TOO_DEEP");
        assert_eq!(
            code(r#"{"name":"a_b","arguments":"\ud800"}"#),
            "PROPOSAL_MALFORMED"
        );
        assert_eq!(code(r#"[1,2]"#), "PROPOSAL_SHAPE");
        assert_eq!(code(r#"{"name": 5}"#), "PROPOSAL_SHAPE");
        let small = ProposalLimits::default().max_bytes(10);
        assert_eq!(
            Proposal::parse(r#"{"name":"a_b","arguments":{}}"#, &small)
                .unwrap_err()
                .code(),
            "PROPOSAL_TOO_LARGE"
        );
        let few = ProposalLimits::default().max_values(3);
        assert_eq!(
            Proposal::parse(r#"{"name":"a_b","arguments":[1,2,3]}"#, &few)
                .unwrap_err()
                .code(),
            "PROPOSAL_TOO_MANY_VALUES"
        );
    }

    #[test]
    fn ambiguous_shapes_are_refused() {
        for raw in [
            r#"{"name":"safe_one","arguments":{"x":1},"function":{"name":"danger"}}"#,
            r#"{"name":"a_b","arguments":{},"input":{}}"#,
            r#"{"function":"danger"}"#,
            r#"{"function":{"name":"a_b"},"input":{}}"#,
        ] {
            assert_eq!(code(raw), "PROPOSAL_SHAPE", "{raw}");
        }
    }

    #[test]
    fn inexact_integers_are_refused_not_rounded() {
        for n in [
            "-9223372036854775809",
            "9007199254740993.0",
            "12345678901234567891e0",
            "1e20",
        ] {
            let raw = format!(r#"{{"name":"a_b","arguments":{{"n":{n}}}}}"#);
            assert_eq!(code(&raw), "NUMBER_OUT_OF_RANGE", "{n}");
        }
        let p = Proposal::parse(
            r#"{"name":"a_b","arguments":{"n":9007199254740991.0,"m":9007199254740993}}"#,
            &ProposalLimits::default(),
        )
        .unwrap();
        assert_eq!(p.arguments["n"], json!(9_007_199_254_740_991u64));
        assert_eq!(
            p.arguments["m"],
            json!(9_007_199_254_740_993u64),
            "integer literals stay exact"
        );
    }

    #[test]
    fn from_value_applies_the_same_policy() {
        let l = ProposalLimits::default();
        let p = Proposal::from_value(json!({"name": "a_b", "arguments": {"k": 8.0}}), &l).unwrap();
        assert_eq!(p.arguments["k"], json!(8));
        assert!(p.arguments["k"].is_u64() || p.arguments["k"].is_i64());
    }
}
