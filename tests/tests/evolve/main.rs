//! The contract classifier (`tool_contract::evolve`): a table of labelled before/after pairs
//! (Rust types through schemars, and contract JSON), and properties over generated contracts.

mod flow;
mod props;
mod table;

use schemars::generate::SchemaSettings;
use schemars::JsonSchema;
use serde_json::{json, Value};
use tool_contract::schema::{tool_schema, Direction};

/// A contract of the examples as JSON (the base every case edits).
pub fn example(name: &str) -> Value {
    let toolset = tool_contract_examples::toolset();
    let contract = toolset
        .contracts()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no example tool {name}"));
    serde_json::to_value(contract).unwrap()
}

/// How a Rust type's schema is generated for a case.
#[derive(Clone, Copy, Debug)]
pub enum Gen {
    /// As `#[tool]` does: subschemas inlined (recursive types keep a `$ref`).
    Input,
    /// The output side, as `#[tool]` does.
    Output,
    /// schemars' own default: every named type under `$defs`, used through `$ref`.
    InputDefs,
    /// The output side with `$defs`.
    OutputDefs,
}

impl Gen {
    pub fn is_input(self) -> bool {
        matches!(self, Gen::Input | Gen::InputDefs)
    }
}

/// The schema of `T` generated as `gen` says, for a tool `t` at `version`.
pub fn schema_of<T: JsonSchema>(gen: Gen, version: &str) -> Value {
    match gen {
        Gen::Input => tool_schema::<T>("t", version, Direction::Input),
        Gen::Output => tool_schema::<T>("t", version, Direction::Output),
        Gen::InputDefs | Gen::OutputDefs => {
            let settings = SchemaSettings::draft2020_12();
            let settings = if gen.is_input() {
                settings.for_deserialize()
            } else {
                settings.for_serialize()
            };
            settings
                .into_generator()
                .into_root_schema_for::<T>()
                .to_value()
        }
    }
}

/// The `search_documents` example with one of its schemas replaced.
pub fn with_schema(input: bool, schema: Value, version: &str) -> Value {
    let mut c = example("search_documents");
    c["version"] = json!(version);
    c[if input {
        "input_schema"
    } else {
        "output_schema"
    }] = schema;
    c
}

/// A contract whose input schema is an object with one required property `x` of `schema`.
pub fn prop_in(schema: Value) -> Value {
    with_schema(true, object_with(schema), "1.0.0")
}

/// A contract whose output schema is an object with one required property `x` of `schema`.
pub fn prop_out(schema: Value) -> Value {
    with_schema(false, object_with(schema), "1.0.0")
}

fn object_with(schema: Value) -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "additionalProperties": false,
        "properties": {"x": schema},
        "required": ["x"],
    })
}

/// A contract whose input schema is `schema`.
pub fn input(schema: Value) -> Value {
    with_schema(true, schema, "1.0.0")
}

/// A contract whose output schema is `schema`.
pub fn output(schema: Value) -> Value {
    with_schema(false, schema, "1.0.0")
}

/// Old and new contracts from two Rust types named `T`, each given as items (structs and enums
/// with brace bodies; `JsonSchema` is derived on each).
#[macro_export]
macro_rules! rust {
    ($gen:ident { $($old:tt)* } => { $($new:tt)* }) => {{
        #[allow(dead_code)]
        mod old_types {
            #[allow(unused_imports)]
            use super::*;
            $crate::items!($($old)*);
        }
        #[allow(dead_code)]
        mod new_types {
            #[allow(unused_imports)]
            use super::*;
            $crate::items!($($new)*);
        }
        let gen = $crate::Gen::$gen;
        (
            $crate::with_schema(gen.is_input(), $crate::schema_of::<old_types::T>(gen, "1.0.0"), "1.0.0"),
            $crate::with_schema(gen.is_input(), $crate::schema_of::<new_types::T>(gen, "2.0.0"), "2.0.0"),
        )
    }};
}

/// Items with `#[derive(JsonSchema)]` added.
#[macro_export]
macro_rules! items {
    ($( $(#[$meta:meta])* $kind:ident $name:ident $body:tt )*) => {
        $(
            #[derive(::schemars::JsonSchema)]
            $(#[$meta])*
            pub $kind $name $body
        )*
    };
}
