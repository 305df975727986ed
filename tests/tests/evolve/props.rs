//! Properties of the classifier over generated contracts: a contract compared with itself has
//! no change; any other difference is reported (never silently nothing); classes are monotone
//! (adding a major change to any change set makes it major).

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use serde_json::{json, Value};
use tool_contract::evolve::{classify, largest_class, required_bump, Bump, ChangeClass};

use crate::example;

/// A schema in the shapes schemars writes: scalars with bounds and formats, nullable types,
/// enums (plain and documented), objects, arrays, maps, unions and `$ref`s into `$defs`.
fn schema() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        (0u64..50, 50u64..500).prop_map(|(lo, hi)| json!({"type": "string", "minLength": lo, "maxLength": hi})),
        Just(json!({"type": "string", "format": "date"})),
        Just(json!({"type": "string", "pattern": "^[a-z]+$"})),
        (0i64..10, 10i64..100).prop_map(|(lo, hi)| json!({"type": "integer", "format": "uint8", "minimum": lo, "maximum": hi})),
        Just(json!({"type": "number", "format": "double"})),
        Just(json!({"type": ["string", "null"]})),
        Just(json!({"type": "boolean", "default": false})),
        prop::collection::btree_set("[a-d]", 1..4).prop_map(|v| json!({"type": "string", "enum": v})),
        prop::collection::btree_set("[a-d]", 1..4).prop_map(|v| {
            let branches: Vec<Value> = v.iter().map(|s| json!({"type": "string", "const": s, "description": format!("The {s} case.")})).collect();
            json!({"oneOf": branches})
        }),
        Just(json!({"$ref": "#/$defs/Leaf"})),
        Just(json!({"anyOf": [{"$ref": "#/$defs/Leaf"}, {"type": "null"}]})),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::btree_map("[a-e]", inner.clone(), 0..4)
                .prop_flat_map(|props| {
                    let names: Vec<String> = props.keys().cloned().collect();
                    (
                        Just(props),
                        prop::sample::subsequence(names.clone(), 0..=names.len()),
                        any::<bool>(),
                    )
                })
                .prop_map(|(props, required, closed)| {
                    let mut o =
                        json!({"type": "object", "properties": props, "required": required});
                    if closed {
                        o["additionalProperties"] = json!(false);
                    }
                    o
                }),
            (inner.clone(), 0u64..5).prop_map(
                |(items, max)| json!({"type": "array", "items": items, "maxItems": max + 1})
            ),
            inner
                .clone()
                .prop_map(|v| json!({"type": "object", "additionalProperties": v})),
            prop::collection::vec(inner.clone(), 2..4).prop_map(|v| json!({"anyOf": v})),
            inner.prop_map(|v| json!({"description": "A field.", "allOf": [v]})),
        ]
    })
}

/// A whole contract: the `search_documents` example with generated schemas and policy.
fn contract() -> impl Strategy<Value = Value> {
    (
        schema(),
        schema(),
        prop::sample::select(vec![
            "pure_read",
            "external_read",
            "reversible_write",
            "irreversible_write",
        ]),
        prop::sample::select(vec!["never", "conditional", "always"]),
        1u64..600_000,
        1u32..5,
        prop::collection::vec("[a-c]:[a-c]", 0..3),
    )
        .prop_map(
            |(input, output, effect, approval, timeout, attempts, caps)| {
                let mut c = example("search_documents");
                c["input_schema"] = with_defs(input);
                c["output_schema"] = with_defs(output);
                c["effect"] = json!(effect);
                c["approval"] = json!(approval);
                c["timeout_ms"] = json!(timeout);
                c["retry"]["max_attempts"] = json!(attempts);
                c["authorization"]["capabilities"] = json!(caps);
                c
            },
        )
}

fn with_defs(mut schema: Value) -> Value {
    if let Value::Object(map) = &mut schema {
        map.insert(
            "$defs".into(),
            json!({"Leaf": {"type": "string", "maxLength": 40}}),
        );
    }
    schema
}

/// Every location in `value`, as JSON pointers.
fn pointers(value: &Value, at: String, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                let p = format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"));
                out.push(p.clone());
                pointers(v, p, out);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                let p = format!("{at}/{i}");
                out.push(p.clone());
                pointers(v, p, out);
            }
        }
        _ => {}
    }
}

/// What the classifier ignores: the version, the fingerprint and the schemas' `$id`.
fn compared_part(c: &Value) -> Value {
    let mut c = c.clone();
    if let Some(map) = c.as_object_mut() {
        map.remove("version");
        map.remove("fingerprint");
        // A contract without a cap (written before caps existed) has the default one.
        if map.get("max_output_bytes")
            == Some(&Value::from(
                tool_contract::contract::DEFAULT_MAX_OUTPUT_BYTES,
            ))
        {
            map.remove("max_output_bytes");
        }
        for key in ["input_schema", "output_schema"] {
            if let Some(Value::Object(s)) = map.get_mut(key) {
                s.remove("$id");
            }
        }
    }
    c
}

/// Changes that are major whatever else changed: each touches a place the random edit does
/// not (a fresh required input property, a fresh error category, a lowered timeout below any
/// generated one, ...).
fn major_edits() -> Vec<fn(&mut Value)> {
    vec![
        |c| {
            let s = &mut c["input_schema"];
            if !s.is_object() {
                *s = json!({});
            }
            if !s["properties"].is_object() {
                s["properties"] = json!({});
            }
            s["properties"]["zz_new"] = json!({"type": "string"});
            let mut req = s["required"].as_array().cloned().unwrap_or_default();
            req.push(json!("zz_new"));
            s["required"] = json!(req);
        },
        |c| c["timeout_ms"] = json!(0),
        |c| c["name"] = json!("renamed_tool"),
        |c| c["zz_unknown_field"] = json!(true),
        |c| c["effect"] = json!("zz_unknown_effect"),
    ]
}

/// A random edit somewhere in a contract: a value replaced, a key removed or added.
fn edit(c: &mut Value, target: usize, kind: u8, replacement: &Value) {
    let mut all = Vec::new();
    pointers(c, String::new(), &mut all);
    // Leave the places the major edits use alone, so an edit cannot undo them.
    all.retain(|p| !p.starts_with("/fingerprint") && p != "/version");
    if all.is_empty() {
        return;
    }
    let p = &all[target % all.len()];
    let (parent, key) = p.rsplit_once('/').unwrap();
    let Some(slot) = c.pointer_mut(parent) else {
        return;
    };
    match (slot, kind % 3) {
        (Value::Object(map), 0) => {
            map.remove(&key.replace("~1", "/").replace("~0", "~"));
        }
        (Value::Object(map), 1) => {
            map.insert(format!("{key}_x"), replacement.clone());
        }
        (Value::Array(items), 0) if !items.is_empty() => {
            let i: usize = key.parse().unwrap_or(0);
            items.remove(i.min(items.len() - 1));
        }
        (slot, _) => {
            if let Some(v) = slot.pointer_mut(&format!("/{key}")) {
                *v = replacement.clone();
            }
        }
    }
}

fn replacement() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<i64>().prop_map(Value::from),
        "[a-z]{0,6}".prop_map(Value::from),
        any::<bool>().prop_map(Value::from),
        Just(Value::Null),
        Just(json!({})),
        Just(json!({"type": "string"})),
        Just(json!([])),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn a_contract_compared_with_itself_has_no_change(c in contract()) {
        prop_assert_eq!(classify(&c, &c), vec![]);
        // Nor does a copy at another version.
        let mut bumped = c.clone();
        bumped["version"] = json!("99.0.0");
        bumped["fingerprint"]["implementation"] = json!("elsewhere@1.0.0");
        prop_assert_eq!(classify(&c, &bumped), vec![]);
    }

    #[test]
    fn any_difference_is_reported_with_a_real_pointer(
        c in contract(),
        target in any::<usize>(),
        kind in any::<u8>(),
        value in replacement(),
    ) {
        let mut new = c.clone();
        edit(&mut new, target, kind, &value);
        let changes = classify(&c, &new);
        let differs = tool_contract::canonical::to_vec(&compared_part(&c))
            != tool_contract::canonical::to_vec(&compared_part(&new));
        prop_assert_eq!(!changes.is_empty(), differs, "{:#?}", changes);
        for change in &changes {
            prop_assert!(
                c.pointer(&change.pointer).is_some() || new.pointer(&change.pointer).is_some(),
                "{} points nowhere", change
            );
            prop_assert!(!change.reason.is_empty());
        }
    }

    #[test]
    fn a_change_plus_a_major_change_is_major(
        c in contract(),
        target in any::<usize>(),
        kind in any::<u8>(),
        value in replacement(),
        major in 0usize..5,
    ) {
        let mut some = c.clone();
        edit(&mut some, target, kind, &value);
        let before = largest_class(&classify(&c, &some));
        major_edits()[major](&mut some);
        let changes = classify(&c, &some);
        prop_assert_eq!(required_bump(&changes), Some(Bump::Major), "{:#?}", changes);
        // Monotone: adding changes never lowers the largest class.
        prop_assert!(largest_class(&changes) >= before);
        prop_assert!(largest_class(&changes) >= Some(ChangeClass::Major));
    }

    /// Classes are monotone in the other sense too: an edit that is minor for a contract stays
    /// at most what it is when a second, independent minor edit joins it.
    #[test]
    fn the_largest_class_of_two_edits_is_the_larger_of_each(
        c in contract(),
        timeout in 600_001u64..700_000,
        doc in "[a-z ]{1,20}",
    ) {
        let mut a = c.clone();
        a["timeout_ms"] = json!(timeout);
        let mut b = c.clone();
        b["description"] = json!(doc);
        let mut both = a.clone();
        both["description"] = b["description"].clone();
        let (ca, cb, cboth) = (classify(&c, &a), classify(&c, &b), classify(&c, &both));
        prop_assert_eq!(largest_class(&cboth), largest_class(&ca).max(largest_class(&cb)));
        prop_assert_eq!(cboth.len(), ca.len() + cb.len());
    }
}

/// The generator writes schemas a validator accepts.
#[test]
fn generated_contracts_are_valid_json_schemas() {
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    for _ in 0..16 {
        let c = contract().new_tree(&mut runner).unwrap().current();
        for key in ["input_schema", "output_schema"] {
            jsonschema::draft202012::new(&c[key])
                .unwrap_or_else(|e| panic!("{key} is not a schema: {e}\n{:#}", c[key]));
        }
    }
}

/// A schema nested far deeper than any type generates is compared up to a bound, and what lies
/// beyond is reported as not understood: no stack overflow on a crafted lock.
#[test]
fn deeply_nested_schemas_end_in_not_understood() {
    let nested = |leaf: Value| {
        let mut schema = leaf;
        for _ in 0..400 {
            schema = json!({"type": "array", "items": schema});
        }
        schema
    };
    let old = crate::input(nested(json!({"type": "string"})));
    let new = crate::input(nested(json!({"type": "integer"})));
    let changes = classify(&old, &new);
    assert_eq!(changes.len(), 1, "{changes:#?}");
    assert!(changes[0]
        .reason
        .starts_with("not understood: the schema nests too deeply"));
    assert_eq!(changes[0].class, ChangeClass::Major);
}

/// `$ref` cycles (a schema referring to itself or to its parent) end.
#[test]
fn ref_cycles_end() {
    let old = crate::input(json!({
        "type": "object",
        "properties": {"next": {"$ref": "#"}, "a": {"$ref": "#/$defs/A"}},
        "$defs": {"A": {"anyOf": [{"$ref": "#/$defs/B"}, {"type": "null"}]}, "B": {"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}}},
    }));
    let mut new = old.clone();
    new["input_schema"]["$defs"]["B"]["properties"]["b"] = json!({"type": "string"});
    let changes = classify(&old, &new);
    assert_eq!(changes.len(), 1, "{changes:#?}");
    assert_eq!(changes[0].pointer, "/input_schema/$defs/B/properties/b");
    assert_eq!(changes[0].class, ChangeClass::Minor);
    assert!(classify(&old, &old).is_empty());
}
