//! Stage 1: a model's proposal, parsed once, with limits, into a [`Proposal`].
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

use std::cell::Cell;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

use crate::error::ToolError;

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
/// Nothing has run yet; this is only an intent (seed: "여기까지는 tool proposal입니다").
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
        check_size(raw, limits)?;
        let count = Cell::new(0usize);
        let mut de = serde_json::Deserializer::from_str(raw);
        let parts = Top {
            limits,
            count: &count,
        }
        .deserialize(&mut de)
        .and_then(|p| de.end().map(|()| p))
        .map_err(|err| classify(&err.to_string(), limits))?;
        Self::from_parts(parts, limits)
    }

    /// Builds a proposal from a JSON value of one of the shapes [`Proposal::parse`] accepts,
    /// applying the depth, size and number policy (not duplicate detection: see [`Proposal::new`]).
    pub fn from_value(value: Value, limits: &ProposalLimits) -> Result<Proposal, ToolError> {
        let value = normalize_value(value, limits)?;
        Self::from_parsed(value, limits)
    }

    fn from_parsed(value: Value, limits: &ProposalLimits) -> Result<Proposal, ToolError> {
        let Value::Object(mut top) = value else {
            return Err(shape(
                "a proposal is a JSON object with `name` and `arguments`",
            ));
        };
        let parts = Parts {
            id: top.remove("id"),
            call_id: top.remove("call_id"),
            name: top.remove("name"),
            arguments: top.remove("arguments"),
            input: top.remove("input"),
            function: top.remove("function"),
        };
        Self::from_parts(parts, limits)
    }

    fn from_parts(parts: Parts, limits: &ProposalLimits) -> Result<Proposal, ToolError> {
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
        if name.is_empty() || name.len() > 128 {
            return Err(shape("a tool name is 1 to 128 characters"));
        }
        let arguments = match arguments {
            None | Some(Value::Null) => Value::Object(Map::new()),
            // OpenAI sends arguments as a string of JSON: parse it with the same limits.
            Some(Value::String(text)) => parse_json(&text, limits)?,
            Some(other) => other,
        };
        if let Some(id) = &call_id {
            if id.is_empty() || id.len() > 128 || !id.bytes().all(|b| b.is_ascii_graphic()) {
                call_id = None;
            }
        }
        Ok(Proposal {
            name,
            arguments,
            call_id,
        })
    }
}

/// The top-level members a proposal may carry, read without building a map for them.
#[derive(Default)]
struct Parts {
    id: Option<Value>,
    call_id: Option<Value>,
    name: Option<Value>,
    arguments: Option<Value>,
    input: Option<Value>,
    function: Option<Value>,
}

const SHAPE: &str = "PROPOSAL_SHAPE:";

/// The proposal's outer object: known members go straight to their slot, others are parsed
/// (for limits and duplicates) and dropped.
struct Top<'a> {
    limits: &'a ProposalLimits,
    count: &'a Cell<usize>,
}

impl<'de> DeserializeSeed<'de> for Top<'_> {
    type Value = Parts;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Parts, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Top<'_> {
    type Value = Parts;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a proposal object")
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Parts, E> {
        Err(E::custom(SHAPE))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Parts, E> {
        Err(E::custom(SHAPE))
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Parts, E> {
        Err(E::custom(SHAPE))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Parts, E> {
        Err(E::custom(SHAPE))
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Parts, E> {
        Err(E::custom(SHAPE))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Parts, E> {
        Err(E::custom(SHAPE))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<Parts, A::Error> {
        Err(de::Error::custom(SHAPE))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Parts, A::Error> {
        let value = Checked {
            limits: self.limits,
            depth: 0,
            count: self.count,
        };
        value.tick::<A::Error>()?;
        let inner = value.nested::<A::Error>()?;
        let mut parts = Parts::default();
        let mut others: std::collections::HashSet<String> = std::collections::HashSet::new();
        while let Some(crate::lite::Text(key)) = map.next_key()? {
            let v = map.next_value_seed(inner_copy(&inner))?;
            let slot = match key.as_ref() {
                "id" => &mut parts.id,
                "call_id" => &mut parts.call_id,
                "name" => &mut parts.name,
                "arguments" => &mut parts.arguments,
                "input" => &mut parts.input,
                "function" => &mut parts.function,
                other => {
                    if !others.insert(other.to_owned()) {
                        let shown: String = other.chars().take(64).collect();
                        return Err(de::Error::custom(format!("{DUP} `{shown}`")));
                    }
                    continue;
                }
            };
            if slot.is_some() {
                return Err(de::Error::custom(format!("{DUP} `{key}`")));
            }
            *slot = Some(v);
        }
        Ok(parts)
    }
}

fn shape(message: &'static str) -> ToolError {
    ToolError::invalid_input("PROPOSAL_SHAPE", message)
}

/// Parses JSON text under `limits` and the number policy, rejecting duplicate keys.
pub fn parse_json(raw: &str, limits: &ProposalLimits) -> Result<Value, ToolError> {
    check_size(raw, limits)?;
    let count = Cell::new(0usize);
    let mut de = serde_json::Deserializer::from_str(raw);
    let seed = Checked {
        limits,
        depth: 0,
        count: &count,
    };
    let value = seed.deserialize(&mut de).and_then(|v| de.end().map(|()| v));
    value.map_err(|err| classify(&err.to_string(), limits))
}

fn check_size(raw: &str, limits: &ProposalLimits) -> Result<(), ToolError> {
    if raw.len() > limits.max_bytes {
        return Err(ToolError::invalid_input(
            "PROPOSAL_TOO_LARGE",
            "the proposal is larger than the accepted size",
        )
        .with_detail("max_bytes", limits.max_bytes)
        .with_detail("bytes", raw.len()));
    }
    Ok(())
}

// Custom errors carry a code prefix so the serde_json error (which adds the position) maps
// back to a stable code.
const DUP: &str = "DUPLICATE_KEY:";
const DEEP: &str = "PROPOSAL_TOO_DEEP:";
const MANY: &str = "PROPOSAL_TOO_MANY_VALUES:";
const RANGE: &str = "NUMBER_OUT_OF_RANGE:";

fn classify(msg: &str, limits: &ProposalLimits) -> ToolError {
    let (code, message): (&'static str, String) = if let Some(rest) = msg.strip_prefix(DUP) {
        (
            "DUPLICATE_KEY",
            format!("an object has the same key twice:{rest}"),
        )
    } else if msg.starts_with(DEEP) || msg.starts_with("recursion limit exceeded") {
        (
            "PROPOSAL_TOO_DEEP",
            format!("the arguments nest deeper than {} levels", limits.max_depth),
        )
    } else if msg.starts_with(SHAPE) {
        (
            "PROPOSAL_SHAPE",
            "a proposal is a JSON object with `name` and `arguments`".to_owned(),
        )
    } else if msg.starts_with(MANY) {
        (
            "PROPOSAL_TOO_MANY_VALUES",
            format!("the arguments hold more than {} values", limits.max_values),
        )
    } else if let Some(rest) = msg.strip_prefix(RANGE) {
        (
            "NUMBER_OUT_OF_RANGE",
            format!("an integer does not fit in 64 bits:{rest}"),
        )
    } else if msg.starts_with("number out of range") {
        (
            "NUMBER_OUT_OF_RANGE",
            format!("a number is out of range: {msg}"),
        )
    } else {
        // serde_json's messages name a position and a reason, never input content.
        (
            "PROPOSAL_MALFORMED",
            format!("the proposal is not valid JSON: {msg}"),
        )
    };
    ToolError::invalid_input(code, message)
}

struct Checked<'a> {
    limits: &'a ProposalLimits,
    depth: usize,
    count: &'a Cell<usize>,
}

impl Checked<'_> {
    fn tick<E: de::Error>(&self) -> Result<(), E> {
        let n = self.count.get() + 1;
        self.count.set(n);
        if n > self.limits.max_values {
            return Err(E::custom(MANY));
        }
        Ok(())
    }

    fn nested<E: de::Error>(&self) -> Result<Checked<'_>, E> {
        if self.depth + 1 > self.limits.max_depth {
            return Err(E::custom(DEEP));
        }
        Ok(Checked {
            limits: self.limits,
            depth: self.depth + 1,
            count: self.count,
        })
    }
}

impl<'de> DeserializeSeed<'de> for Checked<'_> {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

/// The number policy for one float (see the module docs).
fn float_value(v: f64) -> Result<Value, &'static str> {
    // From 2^53 on an f64 no longer holds every integer: the number the model wrote may not be
    // the one we would pass on, so it is refused rather than silently rounded.
    const EXACT: f64 = 9_007_199_254_740_992.0;
    if v.fract() == 0.0 && v.is_finite() && v.abs() >= EXACT {
        return Err(RANGE);
    }
    if v.fract() == 0.0 && v.is_finite() {
        // 2^63 and 2^64 are exactly representable, so these bounds are exact.
        if (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&v) {
            return Ok(Value::Number((v as i64).into()));
        }
        if (0.0..18_446_744_073_709_551_616.0).contains(&v) {
            return Ok(Value::Number((v as u64).into()));
        }
        return Err(RANGE);
    }
    Number::from_f64(v).map(Value::Number).ok_or(RANGE)
}

impl<'de> Visitor<'de> for Checked<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        self.tick()?;
        Ok(Value::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        self.tick()?;
        Ok(Value::Number(v.into()))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        self.tick()?;
        Ok(Value::Number(v.into()))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        self.tick()?;
        float_value(v).map_err(|_| E::custom(format!("{RANGE} {v}")))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        self.tick()?;
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        self.tick()?;
        Ok(Value::String(v))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        self.tick()?;
        Ok(Value::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        self.visit_unit()
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        self.tick()?;
        let inner = self.nested()?;
        let mut out = Vec::new();
        while let Some(v) = seq.next_element_seed(inner_copy(&inner))? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        self.tick()?;
        let inner = self.nested()?;
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value_seed(inner_copy(&inner))?;
            match out.entry(key) {
                serde_json::map::Entry::Vacant(slot) => {
                    slot.insert(value);
                }
                serde_json::map::Entry::Occupied(slot) => {
                    let shown: String = slot.key().chars().take(64).collect();
                    return Err(de::Error::custom(format!("{DUP} `{shown}`")));
                }
            }
        }
        Ok(Value::Object(out))
    }
}

fn inner_copy<'a>(c: &Checked<'a>) -> Checked<'a> {
    Checked {
        limits: c.limits,
        depth: c.depth,
        count: c.count,
    }
}

/// Applies depth, size and the number policy to an already-built value.
fn normalize_value(value: Value, limits: &ProposalLimits) -> Result<Value, ToolError> {
    fn walk(
        v: Value,
        depth: usize,
        count: &mut usize,
        limits: &ProposalLimits,
    ) -> Result<Value, ToolError> {
        *count += 1;
        if *count > limits.max_values {
            return Err(classify(MANY, limits));
        }
        Ok(match v {
            Value::Array(items) => {
                if depth + 1 > limits.max_depth {
                    return Err(classify(DEEP, limits));
                }
                Value::Array(
                    items
                        .into_iter()
                        .map(|i| walk(i, depth + 1, count, limits))
                        .collect::<Result<_, _>>()?,
                )
            }
            Value::Object(map) => {
                if depth + 1 > limits.max_depth {
                    return Err(classify(DEEP, limits));
                }
                let mut out = Map::new();
                for (k, v) in map {
                    out.insert(k, walk(v, depth + 1, count, limits)?);
                }
                Value::Object(out)
            }
            Value::Number(n) if n.is_f64() => {
                let f = n.as_f64().unwrap_or(f64::NAN);
                float_value(f).map_err(|_| classify(&format!("{RANGE} {f}"), limits))?
            }
            other => other,
        })
    }
    let mut count = 0;
    walk(value, 0, &mut count, limits)
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
