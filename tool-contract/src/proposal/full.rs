//! The full parser: serde_json's deserializer driven by `DeserializeSeed`s that apply the proposal rules
//! (`super::rules`) as the text is read, and turn every refusal into a stable error code.
//! It reads every shape a proposal may take and words every error the model sees.

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::rules::{self, Caps, Exceeded};
use super::ProposalLimits;
use crate::error::ToolError;
use crate::json::Text;

/// The top-level members a proposal may carry, read without building a map for them.
#[derive(Default)]
pub(super) struct Parts {
    pub(super) id: Option<Value>,
    pub(super) call_id: Option<Value>,
    pub(super) name: Option<Value>,
    pub(super) arguments: Option<Value>,
    pub(super) input: Option<Value>,
    pub(super) function: Option<Value>,
}

/// Parses a whole proposal's text into its parts.
pub(super) fn parse_parts(raw: &str, limits: &ProposalLimits) -> Result<Parts, ToolError> {
    rules::check_size(raw, limits)?;
    let caps = Caps::new(limits);
    let mut de = serde_json::Deserializer::from_str(raw);
    ProposalSeed { caps: &caps }
        .deserialize(&mut de)
        .and_then(|p| de.end().map(|()| p))
        .map_err(|err| classify(&err.to_string(), limits))
}

/// Parses one JSON value's text under the rules.
pub(super) fn parse_value(raw: &str, limits: &ProposalLimits) -> Result<Value, ToolError> {
    rules::check_size(raw, limits)?;
    let caps = Caps::new(limits);
    let mut de = serde_json::Deserializer::from_str(raw);
    ValueSeed {
        caps: &caps,
        depth: 0,
    }
    .deserialize(&mut de)
    .and_then(|v| de.end().map(|()| v))
    .map_err(|err| classify(&err.to_string(), limits))
}

/// Applies the depth and value caps and the number policy to an already-built value (its keys
/// are already unique: a `Value` cannot hold a duplicate).
pub(super) fn check_value(value: Value, limits: &ProposalLimits) -> Result<Value, ToolError> {
    fn walk(
        v: Value,
        depth: usize,
        caps: &Caps<'_>,
        limits: &ProposalLimits,
    ) -> Result<Value, ToolError> {
        let exceeded = |e: Exceeded| classify(marker(e), limits);
        caps.value().map_err(exceeded)?;
        Ok(match v {
            Value::Array(items) => {
                caps.enter(depth + 1).map_err(exceeded)?;
                Value::Array(
                    items
                        .into_iter()
                        .map(|i| walk(i, depth + 1, caps, limits))
                        .collect::<Result<_, _>>()?,
                )
            }
            Value::Object(map) => {
                caps.enter(depth + 1).map_err(exceeded)?;
                let mut out = Map::new();
                for (k, v) in map {
                    out.insert(k, walk(v, depth + 1, caps, limits)?);
                }
                Value::Object(out)
            }
            Value::Number(n) if n.is_f64() => {
                let f = n.as_f64().unwrap_or(f64::NAN);
                rules::from_double(f)
                    .map(Value::Number)
                    .map_err(|_| classify(&format!("{RANGE} {f}"), limits))?
            }
            other => other,
        })
    }
    walk(value, 0, &Caps::new(limits), limits)
}

const SHAPE: &str = "PROPOSAL_SHAPE:";
// Custom errors carry a code prefix so the serde_json error (which adds the position) maps
// back to a stable code.
const DUP: &str = "DUPLICATE_KEY:";
const DEEP: &str = "PROPOSAL_TOO_DEEP:";
const MANY: &str = "PROPOSAL_TOO_MANY_VALUES:";
const RANGE: &str = "NUMBER_OUT_OF_RANGE:";

fn marker(e: Exceeded) -> &'static str {
    match e {
        Exceeded::Depth => DEEP,
        Exceeded::Values => MANY,
    }
}

fn duplicate<E: de::Error>(key: &str) -> E {
    let shown: String = key.chars().take(64).collect();
    E::custom(format!("{DUP} `{shown}`"))
}

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

/// The proposal's outer object: known members go straight to their slot, others are parsed
/// (for the caps and duplicates) and dropped.
struct ProposalSeed<'a> {
    caps: &'a Caps<'a>,
}

impl<'de> DeserializeSeed<'de> for ProposalSeed<'_> {
    type Value = Parts;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Parts, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ProposalSeed<'_> {
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
        let outer = ValueSeed {
            caps: self.caps,
            depth: 0,
        };
        outer.count::<A::Error>()?;
        let inner = outer.nested::<A::Error>()?;
        let mut members: Vec<(Text<'de>, Value)> = Vec::new();
        while let Some(key) = map.next_key::<Text<'de>>()? {
            let value = map.next_value_seed(inner.copy())?;
            members.push((key, value));
        }
        let names: Vec<&str> = members.iter().map(|(k, _)| k.0.as_ref()).collect();
        if let Some(dup) = rules::first_duplicate(&names) {
            return Err(duplicate(dup));
        }
        let mut parts = Parts::default();
        for (key, value) in members {
            let slot = match key.0.as_ref() {
                "id" => &mut parts.id,
                "call_id" => &mut parts.call_id,
                "name" => &mut parts.name,
                "arguments" => &mut parts.arguments,
                "input" => &mut parts.input,
                "function" => &mut parts.function,
                _ => continue,
            };
            *slot = Some(value);
        }
        Ok(parts)
    }
}

/// One value under the rules, at `depth` (the outermost container is entered at level 1).
struct ValueSeed<'a> {
    caps: &'a Caps<'a>,
    depth: usize,
}

impl<'a> ValueSeed<'a> {
    fn count<E: de::Error>(&self) -> Result<(), E> {
        self.caps.value().map_err(|e| E::custom(marker(e)))
    }

    fn nested<E: de::Error>(&self) -> Result<ValueSeed<'a>, E> {
        self.caps
            .enter(self.depth + 1)
            .map_err(|e| E::custom(marker(e)))?;
        Ok(ValueSeed {
            caps: self.caps,
            depth: self.depth + 1,
        })
    }

    fn copy(&self) -> ValueSeed<'a> {
        ValueSeed {
            caps: self.caps,
            depth: self.depth,
        }
    }
}

impl<'de> DeserializeSeed<'de> for ValueSeed<'_> {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ValueSeed<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        self.count()?;
        Ok(Value::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        self.count()?;
        Ok(Value::Number(v.into()))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        self.count()?;
        Ok(Value::Number(v.into()))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        self.count()?;
        rules::from_double(v)
            .map(Value::Number)
            .map_err(|_| E::custom(format!("{RANGE} {v}")))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        self.count()?;
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        self.count()?;
        Ok(Value::String(v))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        self.count()?;
        Ok(Value::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        self.visit_unit()
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        self.count()?;
        let inner = self.nested()?;
        let mut out = Vec::new();
        while let Some(v) = seq.next_element_seed(inner.copy())? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        self.count()?;
        let inner = self.nested()?;
        let mut members: Vec<(String, Value)> = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value_seed(inner.copy())?;
            members.push((key, value));
        }
        let names: Vec<&str> = members.iter().map(|(k, _)| k.as_str()).collect();
        if let Some(dup) = rules::first_duplicate(&names) {
            return Err(duplicate(dup));
        }
        Ok(Value::Object(members.into_iter().collect()))
    }
}
