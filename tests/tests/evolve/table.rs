//! Labelled change pairs: each a before/after pair of Rust types (through schemars, inlined as
//! `#[tool]` does or under `$defs`) or of contract JSON, with every change it must give.

use std::collections::{BTreeSet, HashMap};

use serde_json::{json, Value};
use tool_contract::evolve::{classify, classify_with, ChangeClass, ChangeKind, Rules};

use crate::{example, input, output, prop_in, prop_out, rust};

use ChangeClass::{Major, Minor, Patch, Security};
use ChangeKind::*;

struct Case {
    label: &'static str,
    old: Value,
    new: Value,
    expect: Vec<(ChangeKind, ChangeClass)>,
    rules: Rules,
}

fn case(label: &'static str, pair: (Value, Value), expect: &[(ChangeKind, ChangeClass)]) -> Case {
    Case {
        label,
        old: pair.0,
        new: pair.1,
        expect: expect.to_vec(),
        rules: Rules::default(),
    }
}

/// `base`, and `base` edited by `f`, with the version bumped (the bump itself is no change).
fn edit(base: Value, f: impl FnOnce(&mut Value)) -> (Value, Value) {
    let mut new = base.clone();
    new["version"] = json!("9.0.0");
    f(&mut new);
    (base, new)
}

/// Two JSON property schemas of an input object (`x`, required).
fn pin(old: Value, new: Value) -> (Value, Value) {
    (prop_in(old), prop_in(new))
}

/// Two JSON property schemas of an output object (`x`, required).
fn pout(old: Value, new: Value) -> (Value, Value) {
    (prop_out(old), prop_out(new))
}

/// An output object composed with `allOf`, as a closed output writes it when `closed` is
/// `Some(false)`.
fn composed(closed: Option<bool>) -> Value {
    let mut schema = json!({
        "type": "object",
        "properties": {"id": {"type": "string"}},
        "allOf": [{"properties": {"score": {"type": "number"}}, "required": ["score"]}],
        "required": ["id"],
    });
    if let Some(closed) = closed {
        schema["unevaluatedProperties"] = json!(closed);
    }
    schema
}

fn fn_8() -> u8 {
    8
}
fn fn_5() -> u8 {
    5
}

#[rustfmt::skip]
fn schema_cases() -> Vec<Case> {
    vec![
        // ---- input, major: old calls may now fail or mean something else ----
        case("input: required property added (JSON)",
            (input(json!({"type": "object", "additionalProperties": false, "properties": {"q": {"type": "string"}}, "required": ["q"]})),
             input(json!({"type": "object", "additionalProperties": false, "properties": {"q": {"type": "string"}, "lang": {"type": "string"}}, "required": ["q", "lang"]}))),
            &[(PropertyAdded, Major)]),
        case("input: required property added (Rust)",
            rust!(Input { #[serde(deny_unknown_fields)] struct T { q: String } }
                     => { #[serde(deny_unknown_fields)] struct T { q: String, lang: String } }),
            &[(PropertyAdded, Major)]),
        case("input: required property added to a nested struct (Rust)",
            rust!(Input { struct T { addr: Addr } struct Addr { street: String } }
                     => { struct T { addr: Addr } struct Addr { street: String, zip: String } }),
            &[(PropertyAdded, Major)]),
        case("input: required property added to array items (Rust)",
            rust!(Input { struct T { items: Vec<Line> } struct Line { sku: String } }
                     => { struct T { items: Vec<Line> } struct Line { sku: String, qty: u32 } }),
            &[(PropertyAdded, Major)]),
        case("input: required property added inside Option<struct> (Rust)",
            rust!(Input { struct T { addr: Option<Addr> } struct Addr { street: String } }
                     => { struct T { addr: Option<Addr> } struct Addr { street: String, zip: String } }),
            &[(PropertyAdded, Major)]),
        case("input: required property added to a $defs struct (Rust, $defs)",
            rust!(InputDefs { struct T { addr: Addr } struct Addr { street: String } }
                         => { struct T { addr: Addr } struct Addr { street: String, zip: String } }),
            &[(PropertyAdded, Major)]),
        case("input: required property added to a recursive type (Rust, $ref kept)",
            rust!(Input { struct T { tree: Tree } struct Tree { name: String, children: Vec<Tree> } }
                     => { struct T { tree: Tree } struct Tree { name: String, id: u32, children: Vec<Tree> } }),
            // Once where the first level is inlined, once in `$defs`.
            &[(PropertyAdded, Major), (PropertyAdded, Major)]),
        case("input: property removed (JSON, closed object)",
            (input(json!({"type": "object", "additionalProperties": false, "properties": {"q": {"type": "string"}, "lang": {"type": "string"}}})),
             input(json!({"type": "object", "additionalProperties": false, "properties": {"q": {"type": "string"}}}))),
            &[(PropertyRemoved, Major)]),
        case("input: property removed (JSON, open object: now ignored)",
            (input(json!({"type": "object", "properties": {"q": {"type": "string"}, "lang": {"type": "string"}}})),
             input(json!({"type": "object", "properties": {"q": {"type": "string"}}}))),
            &[(PropertyRemoved, Major)]),
        case("input: optional property removed (Rust)",
            rust!(Input { #[serde(deny_unknown_fields)] struct T { q: String, lang: Option<String> } }
                     => { #[serde(deny_unknown_fields)] struct T { q: String } }),
            &[(PropertyRemoved, Major)]),
        case("input: property renamed (Rust, serde rename)",
            rust!(Input { #[serde(deny_unknown_fields)] struct T { query: String } }
                     => { #[serde(deny_unknown_fields)] struct T { #[serde(rename = "q")] query: String } }),
            &[(PropertyRenamed, Major)]),
        case("input: optional property became required (Rust, Option<T> to T)",
            rust!(Input { struct T { lang: Option<String> } } => { struct T { lang: String } }),
            &[(NullRefused, Major), (PropertyRequired, Major)]),
        case("input: a name required that no property declares (JSON)",
            (input(json!({"type": "object", "required": ["a"]})), input(json!({"type": "object", "required": ["a", "b"]}))),
            &[(PropertyRequired, Major)]),
        case("input: enum value removed (Rust, plain enum)",
            rust!(Input { struct T { kind: Kind } #[serde(rename_all = "snake_case")] enum Kind { Policy, Manual, Faq } }
                     => { struct T { kind: Kind } #[serde(rename_all = "snake_case")] enum Kind { Policy, Manual } }),
            &[(EnumValueRemoved, Major)]),
        case("input: documented enum value removed (Rust, oneOf of const)",
            rust!(Input { struct T { kind: Kind } enum Kind { /// A policy.
                                                             Policy, /// A manual.
                                                             Manual } }
                     => { struct T { kind: Kind } enum Kind { /// A policy.
                                                             Policy } }),
            &[(EnumValueRemoved, Major)]),
        case("input: enum value removed (JSON)",
            pin(json!({"type": "string", "enum": ["a", "b", "c"]}), json!({"type": "string", "enum": ["a", "c"]})),
            &[(EnumValueRemoved, Major)]),
        case("input: enum value removed from an Option<enum> (Rust, enum with null)",
            rust!(Input { struct T { kind: Option<Kind> } enum Kind { A, B } } => { struct T { kind: Option<Kind> } enum Kind { A } }),
            &[(EnumValueRemoved, Major)]),
        case("input: const changed (JSON)",
            pin(json!({"const": "v1"}), json!({"const": "v2"})),
            &[(EnumValueAdded, Minor), (EnumValueRemoved, Major)]),
        case("input: string restricted to a documented enum (Rust)",
            rust!(Input { struct T { kind: String } } => { struct T { kind: Kind } enum Kind { /// A.
                                                                                              A, /// B.
                                                                                              B } }),
            &[(ValuesRestricted, Major)]),
        case("input: type narrowed from number to integer (JSON)",
            pin(json!({"type": "number"}), json!({"type": "integer"})),
            &[(TypeNarrowed, Major)]),
        case("input: f64 became i64 (Rust)",
            rust!(Input { struct T { n: f64 } } => { struct T { n: i64 } }),
            &[(TypeNarrowed, Major)]),
        case("input: type changed from string to integer (JSON)",
            pin(json!({"type": "string", "maxLength": 9}), json!({"type": "integer", "maximum": 9})),
            &[(TypeChanged, Major)]),
        case("input: String became u32 (Rust)",
            rust!(Input { struct T { id: String } } => { struct T { id: u32 } }),
            &[(TypeChanged, Major)]),
        case("input: one of two types removed (JSON)",
            pin(json!({"type": ["string", "integer"]}), json!({"type": "string"})),
            &[(TypeNarrowed, Major)]),
        case("input: Option<String> became a String with a default (Rust)",
            rust!(Input { struct T { lang: Option<String> } } => { struct T { #[serde(default)] lang: String } }),
            &[(NullRefused, Major), (DefaultChanged, Major)]),
        case("input: null refused (JSON, type array)",
            pin(json!({"type": ["string", "null"]}), json!({"type": "string"})),
            &[(NullRefused, Major)]),
        case("input: maxLength lowered (JSON)",
            pin(json!({"type": "string", "maxLength": 500}), json!({"type": "string", "maxLength": 200})),
            &[(BoundTightened, Major)]),
        case("input: maxLength added (Rust)",
            rust!(Input { struct T { q: String } } => { struct T { #[schemars(length(max = 100))] q: String } }),
            &[(BoundTightened, Major)]),
        case("input: minLength raised (Rust)",
            rust!(Input { struct T { #[schemars(length(min = 1))] q: String } } => { struct T { #[schemars(length(min = 3))] q: String } }),
            &[(BoundTightened, Major)]),
        case("input: maximum lowered (Rust)",
            rust!(Input { struct T { #[schemars(range(max = 50))] n: i32 } } => { struct T { #[schemars(range(max = 20))] n: i32 } }),
            &[(BoundTightened, Major)]),
        case("input: maximum added (JSON)",
            pin(json!({"type": "integer"}), json!({"type": "integer", "maximum": 10})),
            &[(BoundTightened, Major)]),
        case("input: minimum raised (JSON)",
            pin(json!({"type": "integer", "minimum": 0}), json!({"type": "integer", "minimum": 1})),
            &[(BoundTightened, Major)]),
        case("input: exclusiveMinimum added (JSON)",
            pin(json!({"type": "number"}), json!({"type": "number", "exclusiveMinimum": 0})),
            &[(BoundTightened, Major)]),
        case("input: maxItems lowered (Rust)",
            rust!(Input { struct T { #[schemars(length(max = 10))] ids: Vec<u32> } } => { struct T { #[schemars(length(max = 4))] ids: Vec<u32> } }),
            &[(BoundTightened, Major)]),
        case("input: minItems added (JSON)",
            pin(json!({"type": "array", "items": {"type": "string"}}), json!({"type": "array", "items": {"type": "string"}, "minItems": 1})),
            &[(BoundTightened, Major)]),
        case("input: maxProperties added (JSON)",
            pin(json!({"type": "object"}), json!({"type": "object", "maxProperties": 3})),
            &[(BoundTightened, Major)]),
        case("input: uniqueItems added (Rust, Vec to BTreeSet)",
            rust!(Input { struct T { tags: Vec<String> } } => { struct T { tags: std::collections::BTreeSet<String> } }),
            &[(BoundTightened, Major)]),
        case("input: pattern added (Rust)",
            rust!(Input { struct T { code: String } } => { struct T { #[schemars(pattern(r"^[A-Z]{3}$"))] code: String } }),
            &[(PatternAdded, Major)]),
        case("input: pattern changed (JSON)",
            pin(json!({"type": "string", "pattern": "^[a-z]+$"}), json!({"type": "string", "pattern": "^[a-z0-9]+$"})),
            &[(PatternChanged, Major)]),
        case("input: format added (Rust, String to NaiveDate)",
            rust!(Input { struct T { day: String } } => { struct T { day: chrono::NaiveDate } }),
            &[(FormatAdded, Major)]),
        case("input: format added (JSON)",
            pin(json!({"type": "string"}), json!({"type": "string", "format": "email"})),
            &[(FormatAdded, Major)]),
        case("input: u16 became u8 (Rust, maximum narrowed)",
            rust!(Input { struct T { n: u16 } } => { struct T { n: u8 } }),
            &[(BoundTightened, Major)]),
        case("input: format changed from date to date-time (JSON)",
            pin(json!({"type": "string", "format": "date"}), json!({"type": "string", "format": "date-time"})),
            &[(FormatChanged, Major)]),
        case("input: additionalProperties closed (Rust, deny_unknown_fields)",
            rust!(Input { struct T { q: String } } => { #[serde(deny_unknown_fields)] struct T { q: String } }),
            &[(AdditionalPropertiesClosed, Major)]),
        case("input: additionalProperties closed on a nested object (JSON)",
            pin(json!({"type": "object", "properties": {"a": {"type": "string"}}}),
                json!({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": false})),
            &[(AdditionalPropertiesClosed, Major)]),
        case("input: open object given a schema for other properties (JSON)",
            pin(json!({"type": "object"}), json!({"type": "object", "additionalProperties": {"type": "string"}})),
            &[(AdditionalPropertiesClosed, Major)]),
        case("input: map values narrowed (Rust, HashMap<String, u32> to HashMap<String, u8>)",
            rust!(Input { struct T { counts: HashMap<String, u32> } } => { struct T { counts: HashMap<String, u8> } }),
            &[(BoundTightened, Major)]),
        case("input: default changed (Rust, serde default fn)",
            rust!(Input { struct T { #[serde(default = "fn_8")] top_k: u8 } } => { struct T { #[serde(default = "fn_5")] top_k: u8 } }),
            &[(DefaultChanged, Major)]),
        case("input: default added (JSON)",
            pin(json!({"type": "integer"}), json!({"type": "integer", "default": 3})),
            &[(DefaultChanged, Major)]),
        case("input: default removed (JSON)",
            pin(json!({"type": "integer", "default": 3}), json!({"type": "integer"})),
            &[(DefaultChanged, Major)]),
        case("input: multipleOf added (JSON)",
            pin(json!({"type": "integer"}), json!({"type": "integer", "multipleOf": 5})),
            &[(BoundTightened, Major)]),
        case("input: multipleOf made coarser, 5 to 10 (JSON)",
            pin(json!({"type": "integer", "multipleOf": 5}), json!({"type": "integer", "multipleOf": 10})),
            &[(BoundTightened, Major)]),
        case("input: multipleOf changed across, 4 to 6 (JSON)",
            pin(json!({"type": "integer", "multipleOf": 4}), json!({"type": "integer", "multipleOf": 6})),
            &[(BoundTightened, Major)]),
        case("input: externally tagged variant removed (Rust)",
            rust!(Input { struct T { op: Op } #[serde(rename_all = "snake_case")] enum Op { Keep, Move { to: String }, Copy { to: String } } }
                     => { struct T { op: Op } #[serde(rename_all = "snake_case")] enum Op { Keep, Move { to: String } } }),
            &[(VariantRemoved, Major)]),
        case("input: unit variant of a mixed enum removed (Rust)",
            rust!(Input { struct T { op: Op } #[serde(rename_all = "snake_case")] enum Op { Keep, Drop, Move { to: String } } }
                     => { struct T { op: Op } #[serde(rename_all = "snake_case")] enum Op { Keep, Move { to: String } } }),
            &[(EnumValueRemoved, Major)]),
        case("input: internally tagged variant removed (Rust)",
            rust!(Input { struct T { shape: Shape } #[serde(tag = "type", rename_all = "snake_case")] enum Shape { Circle { r: f64 }, Square { side: f64 } } }
                     => { struct T { shape: Shape } #[serde(tag = "type", rename_all = "snake_case")] enum Shape { Circle { r: f64 } } }),
            &[(VariantRemoved, Major)]),
        case("input: internally tagged variant gains a required field (Rust, matched by tag)",
            rust!(Input { struct T { shape: Shape } #[serde(tag = "type")] enum Shape { Circle { r: f64 }, Square { side: f64 } } }
                     => { struct T { shape: Shape } #[serde(tag = "type")] enum Shape { Square { side: f64 }, Circle { r: f64, unit: String } } }),
            &[(PropertyAdded, Major)]),
        case("input: externally tagged variant's field narrowed (Rust, matched by name)",
            rust!(Input { struct T { op: Op } enum Op { Resize { w: u32 }, Rotate { deg: f64 } } }
                     => { struct T { op: Op } enum Op { Rotate { deg: f64 }, Resize { w: u16 } } }),
            &[(BoundTightened, Major)]),
        case("input: untagged alternative removed (Rust)",
            rust!(Input { struct T { id: Id } #[serde(untagged)] enum Id { Name(String), Num(i64), Flag(bool) } }
                     => { struct T { id: Id } #[serde(untagged)] enum Id { Name(String), Num(i64) } }),
            &[(VariantRemoved, Major)]),
        case("input: untagged union became one of its alternatives (JSON)",
            pin(json!({"anyOf": [{"type": "string"}, {"type": "integer"}]}), json!({"type": "string"})),
            &[(VariantRemoved, Major)]),
        case("input: items narrowed (Rust, Vec<f64> to Vec<i64>)",
            rust!(Input { struct T { xs: Vec<f64> } } => { struct T { xs: Vec<i64> } }),
            &[(TypeNarrowed, Major)]),
        case("input: array items given a schema (JSON)",
            pin(json!({"type": "array"}), json!({"type": "array", "items": {"type": "string"}})),
            &[(ItemsChanged, Major)]),
        case("input: tuple grew (Rust, (u8, String) to (u8, String, bool))",
            rust!(Input { struct T { t: (u8, String) } } => { struct T { t: (u8, String, bool) } }),
            &[(TupleChanged, Major), (BoundTightened, Major), (BoundWidened, Minor)]),
        case("input: meaning flagged by hand (Rust, x-meaning)",
            rust!(Input { struct T { amount: i64 } } => { struct T { #[schemars(extend("x-meaning" = "cents"))] amount: i64 } }),
            &[(MeaningChanged, Major)]),
        case("input: flagged meaning changed (JSON)",
            pin(json!({"type": "integer", "x-meaning": "cents"}), json!({"type": "integer", "x-meaning": "micro-units"})),
            &[(MeaningChanged, Major)]),
        case("input: Option<struct> became the struct (Rust, $defs: anyOf with null)",
            rust!(InputDefs { struct T { addr: Option<Addr> } struct Addr { street: String } }
                         => { struct T { addr: Addr } struct Addr { street: String } }),
            &[(NullRefused, Major), (PropertyRequired, Major)]),
        case("input: documented enum value removed (Rust, $defs)",
            rust!(InputDefs { struct T { k: Option<Kind> } enum Kind { /// A.
                                                                      A, /// B.
                                                                      B } }
                         => { struct T { k: Option<Kind> } enum Kind { /// A.
                                                                      A } }),
            &[(EnumValueRemoved, Major)]),

        // ---- input and output: not understood is major, never silently minor ----
        case("not understood: anyOf became oneOf (JSON)",
            pin(json!({"anyOf": [{"type": "string"}, {"type": "integer"}]}), json!({"oneOf": [{"type": "string"}, {"type": "integer"}]})),
            &[(NotUnderstood, Major)]),
        case("not understood: unknown keyword added (JSON, contains)",
            pin(json!({"type": "array"}), json!({"type": "array", "contains": {"const": 1}})),
            &[(NotUnderstood, Major)]),
        case("not understood: not added (JSON)",
            pin(json!({"type": "string"}), json!({"type": "string", "not": {"const": ""}})),
            &[(NotUnderstood, Major)]),
        case("not understood: if/then added (JSON)",
            pin(json!({"type": "object"}), json!({"type": "object", "if": {"required": ["a"]}, "then": {"required": ["b"]}})),
            &[(NotUnderstood, Major), (NotUnderstood, Major)]),
        case("not understood: an external $ref changed (JSON)",
            pin(json!({"$ref": "https://example.com/a.json"}), json!({"$ref": "https://example.com/b.json"})),
            &[(NotUnderstood, Major)]),
        case("input: a union became an unrelated schema (JSON)",
            pin(json!({"anyOf": [{"type": "string"}, {"type": "integer"}]}), json!({"type": "boolean"})),
            &[(VariantAdded, Minor), (VariantRemoved, Major), (VariantRemoved, Major)]),
        case("output: a schema became a union without it (JSON)",
            pout(json!({"type": "boolean"}), json!({"anyOf": [{"type": "string"}, {"type": "integer"}]})),
            &[(VariantAdded, Major), (VariantAdded, Major), (VariantRemoved, Minor)]),
        case("not understood: allOf changed length (JSON)",
            pin(json!({"allOf": [{"type": "string"}]}), json!({"allOf": [{"type": "string"}, {"minLength": 1}]})),
            &[(NotUnderstood, Major)]),
        case("not understood: patternProperties added (JSON)",
            pin(json!({"type": "object"}), json!({"type": "object", "patternProperties": {"^x-": {"type": "string"}}})),
            &[(NotUnderstood, Major)]),
        case("not understood: a bound that is not a number (JSON)",
            pin(json!({"type": "string", "maxLength": 5}), json!({"type": "string", "maxLength": "five"})),
            &[(NotUnderstood, Major)]),
        case("not understood: a property schema that is not a schema (JSON)",
            pin(json!({"type": "string"}), json!(42)),
            &[(NotUnderstood, Major)]),
        case("not understood: an unknown keyword in an output (JSON)",
            pout(json!({"type": "string"}), json!({"type": "string", "x-vendor": true})),
            &[(NotUnderstood, Major)]),

        case("output: a composed object's unevaluatedProperties closed (JSON)",
            (output(composed(None)), output(composed(Some(false)))),
            &[(AdditionalPropertiesClosed, Minor)]),
        case("output: a composed object's unevaluatedProperties opened (JSON)",
            (output(composed(Some(false))), output(composed(None))),
            &[(AdditionalPropertiesOpened, Major)]),
        case("output: unevaluatedProperties true to absent (JSON, no change in meaning)",
            (output(composed(Some(true))), output(composed(None))),
            &[(Rewritten, Patch)]),
        case("not understood: unevaluatedProperties given a schema (JSON)",
            (output(composed(Some(false))), output({ let mut c = composed(None); c["unevaluatedProperties"] = json!({"type": "string"}); c })),
            &[(NotUnderstood, Major)]),

        // ---- output, major: consumers may break ----
        case("output: property removed (Rust)",
            rust!(Output { struct T { id: String, score: f64 } } => { struct T { id: String } }),
            &[(PropertyRemoved, Major)]),
        case("output: property renamed (Rust, serde rename)",
            rust!(Output { struct T { source_id: String } } => { struct T { #[serde(rename = "sourceId")] source_id: String } }),
            &[(PropertyRenamed, Major)]),
        case("output: property no longer required (Rust, skip_serializing_if)",
            rust!(Output { struct T { cursor: Option<String> } }
                      => { struct T { #[serde(skip_serializing_if = "Option::is_none")] cursor: Option<String> } }),
            &[(PropertyOptional, Major)]),
        case("output: null now possible (Rust, u8 to Option<u8>)",
            rust!(Output { struct T { n: u8 } } => { struct T { n: Option<u8> } }),
            &[(NullAllowed, Major)]),
        case("output: type widened from integer to number (JSON)",
            pout(json!({"type": "integer"}), json!({"type": "number"})),
            &[(TypeWidened, Major)]),
        case("output: u8 became u16 (Rust, maximum widened)",
            rust!(Output { struct T { n: u8 } } => { struct T { n: u16 } }),
            &[(BoundWidened, Major)]),
        case("output: enum value added (Rust, plain enum)",
            rust!(Output { struct T { status: Status } enum Status { Open, Closed } } => { struct T { status: Status } enum Status { Open, Closed, Merged } }),
            &[(EnumValueAdded, Major)]),
        case("output: documented enum value added (Rust, oneOf of const)",
            rust!(Output { struct T { status: Status } enum Status { /// Open.
                                                                     Open } }
                      => { struct T { status: Status } enum Status { /// Open.
                                                                     Open, /// Gone.
                                                                     Gone } }),
            &[(EnumValueAdded, Major)]),
        case("output: externally tagged variant added (Rust)",
            rust!(Output { struct T { ev: Ev } enum Ev { Created { id: u32 } } } => { struct T { ev: Ev } enum Ev { Created { id: u32 }, Deleted { id: u32 } } }),
            &[(VariantAdded, Major)]),
        case("output: enum value added inside a list (Rust, Vec<enum>)",
            rust!(Output { struct T { flags: Vec<Flag> } enum Flag { A } } => { struct T { flags: Vec<Flag> } enum Flag { A, B } }),
            &[(EnumValueAdded, Major)]),
        case("output: meaning flagged by hand (Rust, x-meaning)",
            rust!(Output { struct T { total: i64 } } => { struct T { #[schemars(extend("x-meaning" = "cents since 2.0"))] total: i64 } }),
            &[(MeaningChanged, Major)]),
        case("output: maximum raised (JSON)",
            pout(json!({"type": "integer", "maximum": 10}), json!({"type": "integer", "maximum": 20})),
            &[(BoundWidened, Major)]),
        case("output: maxLength removed (JSON)",
            pout(json!({"type": "string", "maxLength": 10}), json!({"type": "string"})),
            &[(BoundWidened, Major)]),
        case("output: format removed (Rust, NaiveDate to String)",
            rust!(Output { struct T { day: chrono::NaiveDate } } => { struct T { day: String } }),
            &[(FormatRemoved, Major)]),
        case("output: additionalProperties opened (JSON)",
            (output(json!({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": false})),
             output(json!({"type": "object", "properties": {"a": {"type": "string"}}}))),
            &[(AdditionalPropertiesOpened, Major)]),
        case("output: nested property removed (Rust, $defs)",
            rust!(OutputDefs { struct T { hit: Hit } struct Hit { id: String, text: String } } => { struct T { hit: Hit } struct Hit { id: String } }),
            &[(PropertyRemoved, Major)]),

        // ---- input, minor: compatible additions ----
        case("input: optional property added (JSON)",
            (input(json!({"type": "object", "additionalProperties": false, "properties": {"q": {"type": "string"}}, "required": ["q"]})),
             input(json!({"type": "object", "additionalProperties": false, "properties": {"q": {"type": "string"}, "lang": {"type": "string"}}, "required": ["q"]}))),
            &[(PropertyAdded, Minor)]),
        case("input: optional property added (Rust, Option<T>)",
            rust!(Input { #[serde(deny_unknown_fields)] struct T { q: String } } => { #[serde(deny_unknown_fields)] struct T { q: String, lang: Option<String> } }),
            &[(PropertyAdded, Minor)]),
        case("input: property with a default added (Rust, serde default)",
            rust!(Input { struct T { q: String } } => { struct T { q: String, #[serde(default = "fn_8")] top_k: u8 } }),
            &[(PropertyAdded, Minor)]),
        case("input: optional property added to a nested struct (Rust)",
            rust!(Input { struct T { a: Addr } struct Addr { street: String } } => { struct T { a: Addr } struct Addr { street: String, zip: Option<String> } }),
            &[(PropertyAdded, Minor)]),
        case("input: required property became optional (Rust, T to Option<T>)",
            rust!(Input { struct T { lang: String } } => { struct T { lang: Option<String> } }),
            &[(NullAllowed, Minor), (PropertyOptional, Minor)]),
        case("input: a required name no property declares dropped (JSON)",
            (input(json!({"type": "object", "required": ["a", "b"]})), input(json!({"type": "object", "required": ["a"]}))),
            &[(PropertyOptional, Minor)]),
        case("input: maxLength raised (Rust)",
            rust!(Input { struct T { #[schemars(length(max = 100))] q: String } } => { struct T { #[schemars(length(max = 500))] q: String } }),
            &[(BoundWidened, Minor)]),
        case("input: maxLength removed (JSON)",
            pin(json!({"type": "string", "maxLength": 10}), json!({"type": "string"})),
            &[(BoundWidened, Minor)]),
        case("input: minimum lowered (JSON)",
            pin(json!({"type": "integer", "minimum": 5}), json!({"type": "integer", "minimum": 1})),
            &[(BoundWidened, Minor)]),
        case("input: maximum raised (Rust)",
            rust!(Input { struct T { #[schemars(range(min = 1, max = 20))] k: u8 } } => { struct T { #[schemars(range(min = 1, max = 50))] k: u8 } }),
            &[(BoundWidened, Minor)]),
        case("input: maxItems raised (JSON)",
            pin(json!({"type": "array", "maxItems": 4}), json!({"type": "array", "maxItems": 8})),
            &[(BoundWidened, Minor)]),
        case("input: exclusiveMaximum removed (JSON)",
            pin(json!({"type": "number", "exclusiveMaximum": 1}), json!({"type": "number"})),
            &[(BoundWidened, Minor)]),
        case("input: multipleOf made finer, 10 to 5 (JSON)",
            pin(json!({"type": "integer", "multipleOf": 10}), json!({"type": "integer", "multipleOf": 5})),
            &[(BoundWidened, Minor)]),
        case("input: uniqueItems removed (JSON)",
            pin(json!({"type": "array", "uniqueItems": true}), json!({"type": "array"})),
            &[(BoundWidened, Minor)]),
        case("input: pattern removed (JSON)",
            pin(json!({"type": "string", "pattern": "^a"}), json!({"type": "string"})),
            &[(PatternRemoved, Minor)]),
        case("input: format removed (JSON)",
            pin(json!({"type": "string", "format": "uuid"}), json!({"type": "string"})),
            &[(FormatRemoved, Minor)]),
        case("input: u8 became u16 (Rust, maximum widened)",
            rust!(Input { struct T { n: u8 } } => { struct T { n: u16 } }),
            &[(BoundWidened, Minor)]),
        case("input: f32 became f64 (Rust): the same schema, since Rust's number formats are left out",
            rust!(Input { struct T { x: f32 } } => { struct T { x: f64 } }),
            &[]),
        case("input: enum value added (Rust, plain enum)",
            rust!(Input { struct T { k: Kind } enum Kind { A, B } } => { struct T { k: Kind } enum Kind { A, B, C } }),
            &[(EnumValueAdded, Minor)]),
        case("input: documented enum value added (Rust, oneOf of const)",
            rust!(Input { struct T { k: Kind } enum Kind { /// A.
                                                          A } }
                     => { struct T { k: Kind } enum Kind { /// A.
                                                          A, /// B.
                                                          B } }),
            &[(EnumValueAdded, Minor)]),
        case("input: enum value added to Option<documented enum> (Rust, anyOf with null)",
            rust!(Input { struct T { k: Option<Kind> } enum Kind { /// A.
                                                                  A } }
                     => { struct T { k: Option<Kind> } enum Kind { /// A.
                                                                  A, /// B.
                                                                  B } }),
            &[(EnumValueAdded, Minor)]),
        case("input: enum value added (JSON)",
            pin(json!({"enum": [1, 2]}), json!({"enum": [1, 2, 3]})),
            &[(EnumValueAdded, Minor)]),
        case("input: internally tagged variant added (Rust)",
            rust!(Input { struct T { s: Shape } #[serde(tag = "type")] enum Shape { Circle { r: f64 } } }
                     => { struct T { s: Shape } #[serde(tag = "type")] enum Shape { Circle { r: f64 }, Square { side: f64 } } }),
            &[(VariantAdded, Minor)]),
        case("input: untagged alternative added (Rust)",
            rust!(Input { struct T { id: Id } #[serde(untagged)] enum Id { Name(String), Num(i64) } }
                     => { struct T { id: Id } #[serde(untagged)] enum Id { Name(String), Num(i64), Flag(bool) } }),
            &[(VariantAdded, Minor)]),
        case("input: one schema became a union holding it (JSON)",
            pin(json!({"type": "string"}), json!({"anyOf": [{"type": "string"}, {"type": "integer"}]})),
            &[(VariantAdded, Minor)]),
        case("input: type widened from integer to number (JSON)",
            pin(json!({"type": "integer"}), json!({"type": "number"})),
            &[(TypeWidened, Minor)]),
        case("input: null accepted (Rust, u8 to Option<u8>)",
            rust!(Input { struct T { n: u8 } } => { struct T { n: Option<u8> } }),
            &[(NullAllowed, Minor), (PropertyOptional, Minor)]),
        case("input: type restriction dropped (JSON)",
            pin(json!({"type": "string"}), json!({})),
            &[(TypeWidened, Minor)]),
        case("input: additionalProperties opened (JSON)",
            (input(json!({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": false})),
             input(json!({"type": "object", "properties": {"a": {"type": "string"}}}))),
            &[(AdditionalPropertiesOpened, Minor)]),
        case("input: values unrestricted (Rust, enum to String)",
            rust!(Input { struct T { k: Kind } enum Kind { A, B } } => { struct T { k: String } }),
            &[(ValuesUnrestricted, Minor)]),
        case("input: array item schema dropped (JSON)",
            pin(json!({"type": "array", "items": {"type": "string"}}), json!({"type": "array"})),
            &[(ItemsChanged, Minor)]),
        case("input: map values widened (Rust, HashMap<String, u8> to HashMap<String, u32>)",
            rust!(Input { struct T { m: HashMap<String, u8> } } => { struct T { m: HashMap<String, u32> } }),
            &[(BoundWidened, Minor)]),
        case("input: optional property added to a recursive type (Rust, $defs)",
            rust!(InputDefs { struct T { tree: Tree } struct Tree { name: String, kids: Vec<Tree> } }
                         => { struct T { tree: Tree } struct Tree { name: String, kids: Vec<Tree>, note: Option<String> } }),
            &[(PropertyAdded, Minor)]),

        // ---- output, minor: consumers still get what they expected ----
        case("output: property added (Rust)",
            rust!(Output { struct T { id: String } } => { struct T { id: String, score: f64 } }),
            &[(PropertyAdded, Minor)]),
        case("output: nested property added (JSON)",
            pout(json!({"type": "object", "properties": {"a": {"type": "string"}}}), json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}})),
            &[(PropertyAdded, Minor)]),
        case("output: property now always present (Rust, skip_serializing_if removed)",
            rust!(Output { struct T { #[serde(skip_serializing_if = "Option::is_none")] cursor: Option<String> } } => { struct T { cursor: String } }),
            &[(NullRefused, Minor), (PropertyRequired, Minor)]),
        case("output: null no longer produced (Rust, Option<u8> to u8)",
            rust!(Output { struct T { n: Option<u8> } } => { struct T { n: u8 } }),
            &[(NullRefused, Minor)]),
        case("output: enum value removed (Rust)",
            rust!(Output { struct T { s: Status } enum Status { Open, Closed, Merged } } => { struct T { s: Status } enum Status { Open, Closed } }),
            &[(EnumValueRemoved, Minor)]),
        case("output: maxLength added (JSON)",
            pout(json!({"type": "string"}), json!({"type": "string", "maxLength": 80})),
            &[(BoundTightened, Minor)]),
        case("output: type narrowed from number to integer (JSON)",
            pout(json!({"type": "number"}), json!({"type": "integer"})),
            &[(TypeNarrowed, Minor)]),
        case("output: additionalProperties closed (JSON)",
            (output(json!({"type": "object", "properties": {"a": {"type": "string"}}})),
             output(json!({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": false}))),
            &[(AdditionalPropertiesClosed, Minor)]),
        case("output: format added (JSON)",
            pout(json!({"type": "string"}), json!({"type": "string", "format": "date"})),
            &[(FormatAdded, Minor)]),

        // ---- patch: documentation only ----
        case("input: property description changed (Rust, doc comment)",
            rust!(Input { struct T { /// Words to find.
                                     q: String } }
                     => { struct T { /// Words to find: a search expression, not an instruction.
                                     q: String } }),
            &[(AnnotationChanged, Patch)]),
        case("input: title added (JSON)",
            pin(json!({"type": "string"}), json!({"type": "string", "title": "Query"})),
            &[(AnnotationChanged, Patch)]),
        case("input: examples added (JSON)",
            pin(json!({"type": "string"}), json!({"type": "string", "examples": ["refund policy"]})),
            &[(AnnotationChanged, Patch)]),
        case("input: deprecated added (JSON)",
            pin(json!({"type": "string"}), json!({"type": "string", "deprecated": true})),
            &[(AnnotationChanged, Patch)]),
        case("input: documented enum variant's doc changed (Rust)",
            rust!(Input { struct T { k: Kind } enum Kind { /// First.
                                                          A, /// Second.
                                                          B } }
                     => { struct T { k: Kind } enum Kind { /// First.
                                                          A, /// The second one.
                                                          B } }),
            &[(AnnotationChanged, Patch)]),
        case("input: plain enum documented (Rust, enum to oneOf of const)",
            rust!(Input { struct T { k: Kind } enum Kind { A, B } }
                     => { struct T { k: Kind } enum Kind { /// First.
                                                          A, /// Second.
                                                          B } }),
            &[(AnnotationChanged, Patch), (AnnotationChanged, Patch)]),
        case("output: default changed (JSON: an annotation on output)",
            pout(json!({"type": "integer", "default": 1}), json!({"type": "integer", "default": 2})),
            &[(DefaultChanged, Patch)]),
        case("input: a $defs type renamed, same shape (Rust, $defs)",
            rust!(InputDefs { struct T { a: Addr } struct Addr { street: String } }
                         => { struct T { a: PostalAddress } struct PostalAddress { street: String } }),
            &[(Rewritten, Patch)]),
        case("input: enum values reordered (JSON)",
            pin(json!({"enum": ["a", "b"]}), json!({"enum": ["b", "a"]})),
            &[(Rewritten, Patch)]),
        case("input: required names reordered (JSON)",
            (input(json!({"type": "object", "properties": {"a": {}, "b": {}}, "required": ["a", "b"]})),
             input(json!({"type": "object", "properties": {"a": {}, "b": {}}, "required": ["b", "a"]}))),
            &[(Rewritten, Patch)]),
        case("input: nullable written as anyOf instead of a type array (JSON)",
            pin(json!({"type": ["string", "null"]}), json!({"anyOf": [{"type": "string"}, {"type": "null"}]})),
            &[(Rewritten, Patch)]),
        case("input: an unused $defs entry added (JSON)",
            (input(json!({"type": "object"})), input(json!({"type": "object", "$defs": {"Unused": {"type": "string"}}}))),
            &[(Rewritten, Patch)]),
        case("input: a bound written 8.0 instead of 8 (JSON: the same number, no change)",
            pin(json!({"type": "integer", "maximum": 8}), json!({"type": "integer", "maximum": 8.0})),
            &[]),
        case("input: only the version in $id changed (no change)",
            rust!(Input { struct T { q: String } } => { struct T { q: String } }),
            &[]),
    ]
}

#[rustfmt::skip]
fn contract_cases() -> Vec<Case> {
    let read = || example("search_documents");
    let write = || example("send_email");
    let draft = || example("create_draft_ticket");
    vec![
        // ---- major, security: a more dangerous contract ----
        case("security: effect escalated from pure_read to reversible_write",
            edit(read(), |c| c["effect"] = json!("reversible_write")), &[(EffectEscalated, Security)]),
        case("security: effect escalated from pure_read to external_read",
            edit(read(), |c| c["effect"] = json!("external_read")), &[(EffectEscalated, Security)]),
        case("security: effect escalated from reversible to irreversible write",
            edit(draft(), |c| c["effect"] = json!("irreversible_write")), &[(EffectEscalated, Security)]),
        case("security: approval removed (always to never)",
            edit(write(), |c| c["approval"] = json!("never")), &[(ApprovalWeakened, Security)]),
        case("security: approval weakened (always to conditional)",
            edit(write(), |c| c["approval"] = json!("conditional")), &[(ApprovalWeakened, Security)]),
        case("security: approval weakened (conditional to never)",
            edit(draft(), |c| c["approval"] = json!("never")), &[(ApprovalWeakened, Security)]),
        case("security: capability requirement removed",
            edit(write(), |c| c["authorization"]["capabilities"] = json!([])), &[(CapabilityRemoved, Security)]),
        case("security: one of two capabilities removed",
            (edit(write(), |c| c["authorization"]["capabilities"] = json!(["mail:send", "mail:external"])).1,
             edit(write(), |c| c["authorization"]["capabilities"] = json!(["mail:send"])).1),
            &[(CapabilityRemoved, Security)]),
        case("security: the Tenant extractor dropped",
            edit(read(), |c| c["authorization"]["extractors"] = json!(["State<DocumentStore>"])), &[(ExtractorRemoved, Security)]),
        case("security: the Principal extractor dropped",
            edit(write(), |c| c["authorization"]["extractors"] = json!(["IdempotencyKey", "State<DocumentStore>"])), &[(ExtractorRemoved, Security)]),
        case("security: idempotency no longer required on a write",
            edit(write(), |c| c["idempotency"]["required"] = json!(false)), &[(IdempotencyRemoved, Security)]),
        case("security: idempotency removed from a write (no source, not required)",
            edit(draft(), |c| c["idempotency"] = json!({"source": {"kind": "none"}, "required": false})),
            &[(IdempotencyRemoved, Security), (IdempotencyRemoved, Security)]),
        case("security: effect escalated and a capability dropped at once",
            edit(read(), |c| { c["effect"] = json!("irreversible_write"); c["authorization"]["capabilities"] = json!([]); }),
            &[(EffectEscalated, Security), (CapabilityRemoved, Security)]),

        // ---- major: contract fields ----
        case("major: timeout lowered",
            edit(read(), |c| c["timeout_ms"] = json!(200)), &[(TimeoutLowered, Major)]),
        case("major: approval strengthened (never to conditional)",
            edit(read(), |c| c["approval"] = json!("conditional")), &[(ApprovalStrengthened, Major)]),
        case("major: approval strengthened (conditional to always)",
            edit(draft(), |c| c["approval"] = json!("always")), &[(ApprovalStrengthened, Major)]),
        case("major: capability added",
            edit(read(), |c| c["authorization"]["capabilities"] = json!(["documents:search", "documents:audit"])), &[(CapabilityAdded, Major)]),
        case("major: trusted extractor added",
            edit(draft(), |c| c["authorization"]["extractors"] = json!(["Tenant", "Principal"])), &[(ExtractorAdded, Major)]),
        case("major: effect lowered from a write to a read",
            edit(draft(), |c| c["effect"] = json!("pure_read")), &[(EffectLowered, Major)]),
        case("major: retries added to a write",
            edit(write(), |c| {
                c["retry"] = json!({"max_attempts": 3, "backoff_ms": 100, "max_backoff_ms": 1000});
                c["error_model"]["auto_retried"] = json!(["TRANSIENT"]);
            }),
            &[(RetriesAdded, Major), (RetryBackoffChanged, Minor), (RetryBackoffChanged, Minor), (Rewritten, Patch)]),
        case("major: an idempotency key now required",
            edit(read(), |c| c["idempotency"]["required"] = json!(true)), &[(IdempotencyRequired, Major)]),
        case("major: a write's idempotency key comes from elsewhere",
            edit(draft(), |c| c["idempotency"]["source"] = json!({"kind": "host"})), &[(IdempotencySourceChanged, Major)]),
        case("major: a write's derived key covers other fields",
            edit(write(), |c| c["idempotency"]["source"]["fields"] = json!(["to", "subject"])), &[(IdempotencySourceChanged, Major)]),
        case("major: policy version changed",
            edit(read(), |c| c["policy_version"] = json!("tool-policy-13")), &[(PolicyVersionChanged, Major)]),
        case("major: provenance removed",
            (edit(read(), |c| c["provenance"] = json!({"source": "/source_id", "revision": null})).1, read()),
            &[(ProvenanceChanged, Major)]),
        case("major: provenance points elsewhere",
            (edit(read(), |c| c["provenance"] = json!({"source": "/source_id", "revision": null})).1,
             edit(read(), |c| c["provenance"] = json!({"source": "/id", "revision": null})).1),
            &[(ProvenanceChanged, Major)]),
        case("major: error category added",
            edit(read(), |c| c["error_model"]["categories"].as_array_mut().unwrap().push(json!({"category": "RATE_LIMITED", "retryable": true, "agent_action": "wait"}))),
            &[(ErrorCategoryAdded, Major)]),
        case("major: tool renamed",
            edit(read(), |c| c["name"] = json!("find_documents")), &[(ToolRenamed, Major)]),
        case("not understood: an unknown contract field added",
            edit(read(), |c| c["sandbox"] = json!("strict")), &[(NotUnderstood, Major)]),
        case("not understood: a dependency that is not a version object",
            (edit(read(), |c| c["depends_on"] = json!({"index": "retrieval-v5"})).1,
             edit(read(), |c| c["depends_on"] = json!({"index": "retrieval-v6"})).1),
            &[(NotUnderstood, Major)]),
        case("not understood: a dependency's unknown on_change",
            (edit(read(), |c| c["depends_on"] = json!({"index": {"version": "v5"}})).1,
             edit(read(), |c| c["depends_on"] = json!({"index": {"version": "v6", "on_change": "never"}})).1),
            &[(NotUnderstood, Major)]),
        case("not understood: an output size cap that is not a byte count",
            edit(read(), |c| c["max_output_bytes"] = json!("1 MiB")), &[(NotUnderstood, Major)]),

        // ---- output contracts: size cap and closed schema ----
        case("major: output size cap lowered",
            edit(read(), |c| c["max_output_bytes"] = json!(4096)), &[(OutputCapLowered, Major)]),
        case("minor: output size cap raised",
            edit(read(), |c| c["max_output_bytes"] = json!(4 * 1_048_576)), &[(OutputCapRaised, Minor)]),
        case("none: a lock without a cap means the default cap",
            (edit(read(), |c| { c.as_object_mut().unwrap().remove("max_output_bytes"); }).1, read()), &[]),
        case("major: a lock without a cap (the default) to a lower one",
            (edit(read(), |c| { c.as_object_mut().unwrap().remove("max_output_bytes"); }).1,
             edit(read(), |c| c["max_output_bytes"] = json!(1000)).1),
            &[(OutputCapLowered, Major)]),
        case("major: output opened with open_output (drift no longer caught)",
            edit(read(), |c| {
                c["open_output"] = json!("passes upstream JSON through");
                c["output_schema"].as_object_mut().unwrap().remove("additionalProperties");
            }),
            &[(OutputOpened, Major), (AdditionalPropertiesOpened, Major)]),
        case("minor: output closed (open_output removed)",
            (edit(read(), |c| {
                c["open_output"] = json!("passes upstream JSON through");
                c["output_schema"].as_object_mut().unwrap().remove("additionalProperties");
            }).1, read()),
            &[(OutputClosed, Minor), (AdditionalPropertiesClosed, Minor)]),
        case("patch: the reason an output is open reworded",
            (edit(read(), |c| c["open_output"] = json!("upstream JSON")).1,
             edit(read(), |c| c["open_output"] = json!("passes upstream JSON through")).1),
            &[(AnnotationChanged, Patch)]),

        // ---- dependency versions (depends_on) ----
        case("major: dependency added",
            edit(read(), |c| c["depends_on"] = json!({"index": {"version": "retrieval-v5"}})),
            &[(DependencyAdded, Major)]),
        case("minor: dependency added, declared on_change minor",
            edit(read(), |c| c["depends_on"] = json!({"corpus": {"version": "2026-11", "on_change": "minor"}})),
            &[(DependencyAdded, Minor)]),
        case("major: dependency removed",
            (edit(read(), |c| c["depends_on"] = json!({"index": {"version": "retrieval-v5"}})).1, read()),
            &[(DependencyRemoved, Major)]),
        case("major: dependency version changed",
            (edit(read(), |c| c["depends_on"] = json!({"index": {"version": "retrieval-v5"}})).1,
             edit(read(), |c| c["depends_on"] = json!({"index": {"version": "retrieval-v6"}})).1),
            &[(DependencyChanged, Major)]),
        case("minor: dependency version changed, declared on_change minor",
            (edit(read(), |c| c["depends_on"] = json!({"corpus": {"version": "2026-11", "on_change": "minor"}})).1,
             edit(read(), |c| c["depends_on"] = json!({"corpus": {"version": "2026-12", "on_change": "minor"}})).1),
            &[(DependencyChanged, Minor)]),
        case("patch: dependency version changed, declared on_change patch",
            (edit(read(), |c| c["depends_on"] = json!({"model": {"version": "r1", "on_change": "patch"}})).1,
             edit(read(), |c| c["depends_on"] = json!({"model": {"version": "r2", "on_change": "patch"}})).1),
            &[(DependencyChanged, Patch)]),
        case("patch: dependency's on_change redeclared, same version",
            (edit(read(), |c| c["depends_on"] = json!({"index": {"version": "v5"}})).1,
             edit(read(), |c| c["depends_on"] = json!({"index": {"version": "v5", "on_change": "minor"}})).1),
            &[(DependencyChanged, Patch)]),
        case("major: one of two dependencies changed, the other declared minor",
            (edit(read(), |c| c["depends_on"] = json!({"corpus": {"version": "a", "on_change": "minor"}, "index": {"version": "v5"}})).1,
             edit(read(), |c| c["depends_on"] = json!({"corpus": {"version": "a", "on_change": "minor"}, "index": {"version": "v6"}})).1),
            &[(DependencyChanged, Major)]),
        case("not understood: an effect this version does not know",
            edit(read(), |c| c["effect"] = json!("teleport")), &[(NotUnderstood, Major)]),
        case("not understood: an unknown authorization field",
            edit(read(), |c| c["authorization"]["scopes"] = json!(["a"])), &[(NotUnderstood, Major)]),
        case("not understood: an unknown idempotency source",
            edit(draft(), |c| c["idempotency"]["source"] = json!({"kind": "oracle"})), &[(NotUnderstood, Major)]),
        case("not understood: a timeout that is not a number",
            edit(read(), |c| c["timeout_ms"] = json!("fast")), &[(NotUnderstood, Major)]),

        // ---- minor: contract fields ----
        case("minor: timeout raised (no caller deadline known)",
            edit(read(), |c| c["timeout_ms"] = json!(2000)), &[(TimeoutRaised, Minor)]),
        case("minor: retries raised on a read",
            edit(read(), |c| c["retry"]["max_attempts"] = json!(3)), &[(RetriesAdded, Minor)]),
        case("minor: retries added to a read that had none",
            (edit(read(), |c| { c["retry"] = json!({"max_attempts": 1, "backoff_ms": 50, "max_backoff_ms": 400}); c["error_model"]["auto_retried"] = json!([]); }).1,
             read()),
            &[(RetriesAdded, Minor), (Rewritten, Patch)]),
        case("minor: retries reduced on a read",
            edit(read(), |c| c["retry"]["max_attempts"] = json!(1)), &[(RetriesReduced, Minor)]),
        case("minor: retry backoff changed",
            edit(read(), |c| c["retry"]["backoff_ms"] = json!(75)), &[(RetryBackoffChanged, Minor)]),
        case("minor: a non-identity extractor dropped",
            edit(read(), |c| c["authorization"]["extractors"] = json!(["Tenant"])), &[(ExtractorRemoved, Minor)]),
        case("minor: provenance declared",
            edit(read(), |c| c["provenance"] = json!({"source": "/source_id", "revision": "/revision"})), &[(ProvenanceChanged, Minor)]),
        case("minor: error category removed",
            edit(read(), |c| { c["error_model"]["categories"].as_array_mut().unwrap().pop(); }), &[(ErrorCategoryRemoved, Minor)]),
        case("minor: an error category's retryability changed",
            edit(read(), |c| c["error_model"]["categories"][4]["retryable"] = json!(true)), &[(ErrorRetryabilityChanged, Minor)]),
        case("minor: a category no longer retried automatically (retry unchanged)",
            edit(read(), |c| c["error_model"]["auto_retried"] = json!([])), &[(RetriesReduced, Minor)]),
        case("minor: an idempotency key no longer required on a read",
            (edit(read(), |c| c["idempotency"]["required"] = json!(true)).1, read()), &[(IdempotencyRemoved, Minor)]),
        case("minor: a read's idempotency source changed",
            edit(read(), |c| c["idempotency"]["source"] = json!({"kind": "none"})), &[(IdempotencySourceChanged, Minor)]),

        // ---- patch ----
        case("patch: the tool's description changed",
            edit(read(), |c| c["description"] = json!("Finds documents.")), &[(DescriptionChanged, Patch)]),
        case("patch: an error category's advice changed",
            edit(read(), |c| c["error_model"]["categories"][0]["agent_action"] = json!("fix the arguments")), &[(AnnotationChanged, Patch)]),
        case("patch: capabilities reordered",
            (edit(read(), |c| c["authorization"]["capabilities"] = json!(["a", "b"])).1,
             edit(read(), |c| c["authorization"]["capabilities"] = json!(["b", "a"])).1),
            &[(Rewritten, Patch)]),

        // ---- no change: what the version is judged against ----
        case("none: only the version and the fingerprint changed",
            edit(read(), |c| { c["fingerprint"]["implementation"] = json!("x@9.9.9"); c["input_schema"]["$id"] = json!("tool://search_documents/input/9.0.0"); }),
            &[]),
    ]
}

fn all_cases() -> Vec<Case> {
    let mut cases = schema_cases();
    cases.extend(contract_cases());
    let mut deadline = case(
        "major: timeout raised past the callers' deadline (Rules)",
        edit(example("search_documents"), |c| {
            c["timeout_ms"] = json!(5000)
        }),
        &[(TimeoutRaised, Major)],
    );
    deadline.rules = Rules::default().caller_deadline_ms(2000);
    cases.push(deadline);
    let mut within = case(
        "minor: timeout raised within the callers' deadline (Rules)",
        edit(example("search_documents"), |c| {
            c["timeout_ms"] = json!(1500)
        }),
        &[(TimeoutRaised, Minor)],
    );
    within.rules = Rules::default().caller_deadline_ms(2000);
    cases.push(within);
    cases
}

#[test]
fn every_labelled_pair_is_classified_as_labelled() {
    let cases = all_cases();
    assert!(cases.len() >= 120, "only {} labelled pairs", cases.len());
    let labels: BTreeSet<&str> = cases.iter().map(|c| c.label).collect();
    assert_eq!(labels.len(), cases.len(), "labels are unique");

    let mut failures = Vec::new();
    for case in &cases {
        let changes = classify_with(&case.old, &case.new, &case.rules);
        let mut got: Vec<(ChangeKind, ChangeClass)> =
            changes.iter().map(|c| (c.kind, c.class)).collect();
        let mut want = case.expect.clone();
        got.sort();
        want.sort();
        let listing = || {
            changes
                .iter()
                .map(|c| format!("\n      {c}"))
                .collect::<String>()
        };
        if got != want {
            failures.push(format!(
                "{}: expected {want:?}, got:{}",
                case.label,
                listing()
            ));
        }
        for change in &changes {
            let p = change.pointer.as_str();
            if case.old.pointer(p).is_none() && case.new.pointer(p).is_none() {
                failures.push(format!(
                    "{}: pointer {p} is in neither contract",
                    case.label
                ));
            }
            if change.reason.is_empty()
                || (change.kind == NotUnderstood) != change.reason.starts_with("not understood")
            {
                failures.push(format!("{}: reason {:?}", case.label, change.reason));
            }
        }
        for side in [&case.old, &case.new] {
            if !classify(side, side).is_empty() {
                failures.push(format!("{}: a contract differs from itself", case.label));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} labelled pairs disagree:\n  {}",
        failures.len(),
        cases.len(),
        failures.join("\n  ")
    );
}

/// Every kind of change and every class is labelled somewhere in the table.
#[test]
fn the_table_covers_every_rule() {
    let cases = all_cases();
    let seen: BTreeSet<(ChangeKind, ChangeClass)> = cases
        .iter()
        .flat_map(|c| c.expect.iter().copied())
        .collect();
    let kinds: BTreeSet<ChangeKind> = seen.iter().map(|(k, _)| *k).collect();
    let all = [
        DescriptionChanged,
        AnnotationChanged,
        Rewritten,
        PropertyAdded,
        PropertyRemoved,
        PropertyRenamed,
        PropertyRequired,
        PropertyOptional,
        AdditionalPropertiesClosed,
        AdditionalPropertiesOpened,
        TypeWidened,
        TypeNarrowed,
        TypeChanged,
        NullAllowed,
        NullRefused,
        EnumValueAdded,
        EnumValueRemoved,
        ValuesRestricted,
        ValuesUnrestricted,
        VariantAdded,
        VariantRemoved,
        BoundTightened,
        BoundWidened,
        PatternAdded,
        PatternRemoved,
        PatternChanged,
        FormatAdded,
        FormatRemoved,
        FormatChanged,
        ItemsChanged,
        TupleChanged,
        DefaultChanged,
        MeaningChanged,
        NotUnderstood,
        ToolRenamed,
        EffectEscalated,
        EffectLowered,
        ApprovalWeakened,
        ApprovalStrengthened,
        CapabilityRemoved,
        CapabilityAdded,
        ExtractorAdded,
        ExtractorRemoved,
        TimeoutRaised,
        TimeoutLowered,
        RetriesAdded,
        RetriesReduced,
        RetryBackoffChanged,
        IdempotencyRemoved,
        IdempotencyRequired,
        IdempotencySourceChanged,
        PolicyVersionChanged,
        ProvenanceChanged,
        ErrorCategoryAdded,
        ErrorCategoryRemoved,
        ErrorRetryabilityChanged,
        OutputCapLowered,
        OutputCapRaised,
        OutputOpened,
        OutputClosed,
        DependencyAdded,
        DependencyRemoved,
        DependencyChanged,
    ];
    let missing: Vec<_> = all.iter().filter(|k| !kinds.contains(k)).collect();
    assert!(missing.is_empty(), "no labelled pair for {missing:?}");
    for class in [Patch, Minor, Major, Security] {
        assert!(
            seen.iter().any(|(_, c)| *c == class),
            "no pair of class {class}"
        );
    }
    // Both directions of a schema, both ways round.
    let labelled = |prefix: &str, class: ChangeClass| {
        cases
            .iter()
            .filter(|c| c.label.starts_with(prefix))
            .any(|c| c.expect.iter().any(|(_, k)| *k == class))
    };
    for prefix in ["input:", "output:"] {
        for class in [Patch, Minor, Major] {
            assert!(labelled(prefix, class), "no {prefix} pair of class {class}");
        }
    }
}
