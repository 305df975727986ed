//! Schema generation (schemars, Draft 2020-12) and schema hashes.

use schemars::generate::SchemaSettings;
use schemars::JsonSchema;
use serde_json::{Map, Value};

/// The meta-schema every generated schema declares.
pub const DRAFT_2020_12: &str = "https://json-schema.org/draft/2020-12/schema";

/// Which side of a tool a schema describes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// The model's arguments, as deserialized.
    Input,
    /// The handler's output, as serialized.
    Output,
}

impl Direction {
    fn as_str(self) -> &'static str {
        match self {
            Direction::Input => "input",
            Direction::Output => "output",
        }
    }
}

/// Generates the root schema of `T` for a tool, with `$schema` and `$id = tool://name/dir/version`.
///
/// Subschemas are inlined (recursive types keep a `$ref`) because LLM providers handle inline
/// schemas more reliably than `$defs`. The Rust type name (`title`) is dropped from the root: the
/// tool name already says what it is, and the type name is noise in a prompt.
pub fn tool_schema<T: ?Sized + JsonSchema>(
    tool: &str,
    version: &str,
    direction: Direction,
) -> Value {
    schema_from(SchemaFns::of::<T>(), tool, version, direction)
}

/// [`tool_schema`] for the type whose schema functions `fns` holds. Not generic: only
/// [`SchemaFns::of`] depends on the type, so the generator's root machinery and everything
/// after it are compiled once here, instead of once per type in every crate that defines tools.
pub(crate) fn schema_from(
    fns: SchemaFns,
    tool: &str,
    version: &str,
    direction: Direction,
) -> Value {
    let schema = ROOT.with(|cell| {
        let outer = cell.replace(Some(fns));
        let schema = generator(direction).into_root_schema_for::<Root>();
        cell.set(outer);
        schema
    });
    finish_tool_schema(schema.to_value(), tool, version, direction)
}

/// A type's three schema functions (name, id, schema), as plain function pointers.
#[derive(Clone, Copy)]
pub(crate) struct SchemaFns {
    name: fn() -> std::borrow::Cow<'static, str>,
    id: fn() -> std::borrow::Cow<'static, str>,
    schema: fn(&mut schemars::SchemaGenerator) -> schemars::Schema,
}

impl SchemaFns {
    /// `T`'s schema functions.
    pub(crate) const fn of<T: ?Sized + JsonSchema>() -> Self {
        SchemaFns {
            name: T::schema_name,
            id: T::schema_id,
            schema: T::json_schema,
        }
    }
}

thread_local! {
    /// The type [`Root`] stands for while [`schema_from`] generates its schema.
    static ROOT: std::cell::Cell<Option<SchemaFns>> = const { std::cell::Cell::new(None) };
}

/// Stands for the type whose root schema is being generated: the generator asks a root type
/// for its name, its id and its schema, and `Root` answers with that type's. The generator sees
/// the same id as for the type itself, so a recursive type still refers to the root the same
/// way, and the schema is the one the type would get.
struct Root;

impl Root {
    fn current() -> SchemaFns {
        // Set by `schema_from` around the only call that asks `Root` anything.
        ROOT.with(std::cell::Cell::get)
            .expect("Root is asked only inside schema_from")
    }
}

impl JsonSchema for Root {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        (Root::current().name)()
    }
    fn schema_id() -> std::borrow::Cow<'static, str> {
        (Root::current().id)()
    }
    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        (Root::current().schema)(generator)
    }
}

fn generator(direction: Direction) -> schemars::SchemaGenerator {
    let settings = SchemaSettings::draft2020_12().with(|s| s.inline_subschemas = true);
    let settings = match direction {
        Direction::Input => settings.for_deserialize(),
        Direction::Output => settings.for_serialize(),
    };
    settings.into_generator()
}

fn finish_tool_schema(mut schema: Value, tool: &str, version: &str, direction: Direction) -> Value {
    strip_rust_formats(&mut schema);
    let mut root = Map::new();
    root.insert("$schema".into(), Value::String(DRAFT_2020_12.into()));
    root.insert(
        "$id".into(),
        Value::String(format!("tool://{tool}/{}/{version}", direction.as_str())),
    );
    match schema {
        Value::Object(map) => {
            for (k, v) in map {
                if k != "$schema" && k != "title" {
                    root.insert(k, v);
                }
            }
        }
        // `true`/`false` schemas: keep their meaning with an equivalent object form.
        Value::Bool(false) => {
            root.insert("not".into(), Value::Object(Map::new()));
        }
        _ => {}
    }
    Value::Object(root)
}

/// Closes every object of an output schema, so an output carrying a property its type does not
/// declare breaks the contract instead of drifting to the model unnoticed.
///
/// A plain object gets `additionalProperties: false`. An object composed with `allOf`, `anyOf`,
/// `oneOf` or a `$ref` next to its own keywords gets `unevaluatedProperties: false` instead,
/// and its branches are left open: `additionalProperties` only sees the properties declared
/// beside it, so closing each branch would refuse the properties the other parts declare.
/// An object that already says what undeclared properties may be (a map's
/// `additionalProperties` schema, `patternProperties`, either keyword written by hand) is
/// left as written; so is anything under `not`, `if`, `then` or `else`, where closing would
/// change what the condition means.
///
/// ```
/// use serde_json::json;
/// let mut schema = json!({"type": "object", "properties": {"hits": {"type": "array",
///     "items": {"type": "object", "properties": {"id": {"type": "string"}}}}}});
/// tool_contract::schema::close_output(&mut schema);
/// assert_eq!(schema["additionalProperties"], json!(false));
/// assert_eq!(schema["properties"]["hits"]["items"]["additionalProperties"], json!(false));
/// ```
pub fn close_output(schema: &mut Value) {
    close(schema, false);
}

const COMPOSITION: &[&str] = &["allOf", "anyOf", "oneOf"];

/// `branch`: `schema` is a branch of a composed object, whose parent closes it.
fn close(schema: &mut Value, branch: bool) {
    let Value::Object(map) = schema else {
        return;
    };
    let composed = COMPOSITION.iter().any(|k| map.contains_key(*k))
        || (map.contains_key("$ref") && map.keys().any(|k| k != "$ref" && k != "$defs"));
    let object = map.contains_key("properties")
        || match map.get("type") {
            Some(Value::String(t)) => t == "object",
            Some(Value::Array(ts)) => ts.iter().any(|t| t == "object"),
            _ => false,
        };
    let says_extra = [
        "additionalProperties",
        "unevaluatedProperties",
        "patternProperties",
    ]
    .iter()
    .any(|k| map.contains_key(*k));
    if !branch && !says_extra {
        if composed && (object || branches_are_objects(map)) {
            map.insert("unevaluatedProperties".into(), Value::Bool(false));
        } else if object && !composed {
            map.insert("additionalProperties".into(), Value::Bool(false));
        }
    }
    for (key, value) in map.iter_mut() {
        match key.as_str() {
            "properties" | "$defs" | "definitions" => {
                if let Value::Object(children) = value {
                    children.values_mut().for_each(|c| close(c, false));
                }
            }
            "items" | "additionalProperties" | "contains" => close(value, false),
            "prefixItems" => {
                if let Value::Array(children) = value {
                    children.iter_mut().for_each(|c| close(c, false));
                }
            }
            k if COMPOSITION.contains(&k) => {
                if let Value::Array(children) = value {
                    // Branches of a composed object are closed by its `unevaluatedProperties`,
                    // which sees what every branch declares; under an object that says what
                    // undeclared properties may be, each branch stands on its own.
                    let parent_closes = composed && !branch && !says_extra;
                    children
                        .iter_mut()
                        .for_each(|c| close(c, parent_closes || branch));
                }
            }
            _ => {}
        }
    }
}

/// Whether some branch of a composition describes an object (a tagged enum's variants).
fn branches_are_objects(map: &Map<String, Value>) -> bool {
    COMPOSITION.iter().any(|k| {
        map.get(*k).and_then(Value::as_array).is_some_and(|bs| {
            bs.iter().any(|b| {
                b.get("properties").is_some()
                    || b.get("type") == Some(&Value::String("object".into()))
                    || b.get("$ref").is_some()
                    || branches_are_objects(b.as_object().unwrap_or(&Map::new()))
            })
        })
    })
}

/// The `format` values schemars writes for Rust's number types. They name a Rust type, not a
/// format a model or validator knows (`uint8` means nothing to a model; the bounds that come
/// with it, `minimum: 0, maximum: 255`, say it all), so they are left out of every schema.
const RUST_NUMBER_FORMATS: &[&str] = &[
    "int", "int8", "int16", "int32", "int64", "int128", "uint", "uint8", "uint16", "uint32",
    "uint64", "uint128", "float", "double",
];

/// Whether `format` is one schemars writes for a Rust number type ([`RUST_NUMBER_FORMATS`]).
pub(crate) fn is_rust_number_format(format: &str) -> bool {
    RUST_NUMBER_FORMATS.contains(&format)
}

/// Removes [`RUST_NUMBER_FORMATS`] from every integer or number schema in `schema`, keeping
/// their bounds.
fn strip_rust_formats(schema: &mut Value) {
    match schema {
        Value::Object(m) => {
            let numeric = match m.get("type") {
                Some(Value::String(t)) => t == "integer" || t == "number",
                Some(Value::Array(ts)) => ts
                    .iter()
                    .any(|t| t.as_str().is_some_and(|t| t == "integer" || t == "number")),
                _ => false,
            };
            let format = m.get("format").and_then(Value::as_str);
            if numeric && format.is_some_and(is_rust_number_format) {
                // The bound a narrow integer format implied is written out; a 64-bit one
                // bounds nothing a model would send (its overflow is refused when decoding).
                let range = match format {
                    Some("int8") => Some((i64::from(i8::MIN), i64::from(i8::MAX))),
                    Some("int16") => Some((i64::from(i16::MIN), i64::from(i16::MAX))),
                    Some("int32") => Some((i64::from(i32::MIN), i64::from(i32::MAX))),
                    Some("uint8") => Some((0, i64::from(u8::MAX))),
                    Some("uint16") => Some((0, i64::from(u16::MAX))),
                    Some("uint32") => Some((0, i64::from(u32::MAX))),
                    _ => None,
                };
                m.shift_remove("format");
                if let Some((lo, hi)) = range {
                    m.entry("minimum").or_insert(Value::from(lo));
                    m.entry("maximum").or_insert(Value::from(hi));
                }
            }
            for v in m.values_mut() {
                strip_rust_formats(v);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(strip_rust_formats),
        _ => {}
    }
}

/// `sha256:` of a tool schema without its `$id`, so equal shapes hash equal across versions.
pub fn schema_hash(schema: &Value) -> String {
    match schema {
        Value::Object(map) if map.contains_key("$id") => {
            let mut map = map.clone();
            map.remove("$id");
            crate::canonical::sha256(&Value::Object(map))
        }
        other => crate::canonical::sha256(other),
    }
}

/// Compares every `default` in `T`'s input schema with what deserialization really fills in.
///
/// A schema `default` is only an annotation: validators do not inject it.
/// A model reading `"default": 8` must get 8 when it omits the field, so the two must agree.
/// `minimal` is a valid instance that omits the defaulted fields; the result lists each
/// mismatch as `field: schema says X, serde applies Y`. Call it from your tests:
///
/// ```
/// # use tool_contract::ToolArgs;
/// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, ToolArgs)]
/// #[serde(deny_unknown_fields)]
/// struct Args {
///     /// How many results.
///     #[serde(default = "eight")]
///     #[schemars(range(min = 1, max = 20))]
///     top_k: u8,
/// }
/// fn eight() -> u8 { 8 }
///
/// let mismatches = tool_contract::schema::default_mismatches::<Args>(&serde_json::json!({}));
/// assert!(mismatches.is_empty(), "{mismatches:?}");
/// ```
pub fn default_mismatches<T>(minimal: &Value) -> Vec<String>
where
    T: JsonSchema + serde::Serialize + serde::de::DeserializeOwned,
{
    let schema = tool_schema::<T>("defaults_check", "0.0.0", Direction::Input);
    let instance: T = match serde_json::from_value(minimal.clone()) {
        Ok(v) => v,
        Err(err) => return vec![format!("the minimal instance does not deserialize: {err}")],
    };
    let applied = serde_json::to_value(&instance).unwrap_or(Value::Null);
    let mut out = Vec::new();
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return out;
    };
    for (name, prop) in props {
        let Some(default) = prop.get("default") else {
            continue;
        };
        if minimal.get(name).is_some() {
            out.push(format!(
                "{name}: the minimal instance sets it, so its default is not exercised"
            ));
            continue;
        }
        let got = applied.get(name).unwrap_or(&Value::Null);
        if got != default {
            out.push(format!(
                "{name}: schema says {default}, serde applies {got}"
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The schema `tool_schema` builds through `Root`, against the generator's own answer for
    /// the type itself: they must be the same document.
    fn direct<T: ?Sized + JsonSchema>(direction: Direction) -> Value {
        let schema = generator(direction).into_root_schema_for::<T>().to_value();
        finish_tool_schema(schema, "t", "1.0.0", direction)
    }

    #[derive(schemars::JsonSchema, serde::Serialize, serde::Deserialize)]
    #[allow(dead_code)]
    struct Tree {
        /// A label.
        label: String,
        /// Recursive: refers to the root.
        children: Vec<Tree>,
        /// An optional enum.
        kind: Option<Kind>,
    }

    #[derive(schemars::JsonSchema, serde::Serialize, serde::Deserialize)]
    #[allow(dead_code)]
    #[serde(tag = "type")]
    enum Kind {
        Leaf { weight: u32 },
        Branch { of: Box<Tree> },
    }

    #[test]
    fn the_root_stand_in_gives_the_types_own_schema() {
        for direction in [Direction::Input, Direction::Output] {
            assert_eq!(
                tool_schema::<Tree>("t", "1.0.0", direction),
                direct::<Tree>(direction)
            );
            assert_eq!(
                tool_schema::<Kind>("t", "1.0.0", direction),
                direct::<Kind>(direction)
            );
            assert_eq!(
                tool_schema::<Option<Vec<u8>>>("t", "1.0.0", direction),
                direct::<Option<Vec<u8>>>(direction)
            );
            assert_eq!(
                tool_schema::<str>("t", "1.0.0", direction),
                direct::<str>(direction)
            );
            assert_eq!(
                tool_schema::<bool>("t", "1.0.0", direction),
                direct::<bool>(direction)
            );
        }
        // Recursion still refers back to the root.
        let tree = tool_schema::<Tree>("t", "1.0.0", Direction::Input);
        assert!(tree.to_string().contains("\"$ref\""), "{tree}");
    }

    #[test]
    fn schema_hash_is_version_independent() {
        let a = json!({"$id": "tool://x/input/1.0.0", "type": "object"});
        let b = json!({"$id": "tool://x/input/2.0.0", "type": "object"});
        assert_eq!(schema_hash(&a), schema_hash(&b));
        assert!(schema_hash(&a).starts_with("sha256:"));
        assert_eq!(schema_hash(&a).len(), 7 + 64);
    }
}
