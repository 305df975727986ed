//! The JSON layer's tests: the parser against serde_json, the jsonschema adapter against
//! serde_json's own representation, pointers.

use bumpalo::Bump;
use jsonschema::json::{Array, Node};
use serde_json::{json, Number, Value};

use super::parse::parse;
use super::repr::TreeJson;
use super::tree::Tree;

fn validator(schema: &Value) -> jsonschema::Validator<TreeJson> {
    jsonschema::options_for::<TreeJson>()
        .with_draft(jsonschema::Draft::Draft202012)
        .should_validate_formats(true)
        .build(schema)
        .unwrap()
}

/// The same verdicts as serde_json's own representation, over a spread of keywords.
#[test]
fn agrees_with_serde_json_values() {
    let bump = Bump::new();
    let schema = json!({
        "type": "object",
        "properties": {
            "score": {"type": "number", "minimum": 0, "maximum": 1},
            "tags": {"type": "array", "items": {"type": "string", "maxLength": 3}, "uniqueItems": true},
            "when": {"type": "string", "format": "date"},
            "kind": {"enum": ["a", "b"]},
            "n": {"type": "integer"},
            "nested": {"type": "object", "required": ["x"], "additionalProperties": false, "properties": {"x": {"const": null}}}
        },
        "required": ["score"],
        "additionalProperties": false
    });
    let lite = validator(&schema);
    let plain = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .should_validate_formats(true)
        .build(&schema)
        .unwrap();
    for instance in [
        json!({"score": 0.5}),
        json!({"score": 1.5}),
        json!({"score": 0.5, "tags": ["ab", "cd"]}),
        json!({"score": 0.5, "tags": ["ab", "ab"]}),
        json!({"score": 0.5, "tags": ["abcd"]}),
        json!({"score": 0.5, "when": "2026-02-30"}),
        json!({"score": 0.5, "when": "2026-02-03"}),
        json!({"score": 0.5, "kind": "c"}),
        json!({"score": 0.5, "n": 2.0}),
        json!({"score": 0.5, "n": 2.5}),
        json!({"score": 0.5, "nested": {"x": null}}),
        json!({"score": 0.5, "nested": {"x": 1}}),
        json!({"score": 0.5, "nested": {}}),
        json!({"score": 0.5, "extra": "\u{e9}\"\\n"}),
        json!({}),
    ] {
        let text = instance.to_string();
        let tree = parse(&text, &bump).unwrap();
        assert_eq!(
            lite.is_valid(&tree),
            plain.is_valid(&instance),
            "{instance}"
        );
    }
}

/// The hand-written parser accepts and refuses what serde_json does, and builds the same
/// tree, including escapes, surrogates, number edge cases and the nesting limit.
#[test]
fn parses_like_serde_json() {
    let bump = Bump::new();
    let deep_ok = format!("{}{}", "[".repeat(127), "]".repeat(127));
    let deep_bad = format!("{}{}", "[".repeat(128), "]".repeat(128));
    let long = format!("\"{}\\n{}\"", "a".repeat(37), "é".repeat(9));
    let cases: Vec<&str> = vec![
        "null",
        "true",
        "false",
        "0",
        "-0",
        "7",
        "-7",
        "01",
        "1.",
        ".5",
        "1.5",
        "-1.5e3",
        "1e400",
        "-1e400",
        "1E+2",
        "18446744073709551615",
        "18446744073709551616",
        "9223372036854775807",
        "-9223372036854775808",
        "-9223372036854775809",
        "1234567890123456789",
        "00",
        "+1",
        "-",
        "1-2",
        "\"\"",
        "\"abc\"",
        "\"a\\\"b\"",
        "\"\\u00e9\\ud83d\\ude00\"",
        "\"\\ud83d\"",
        "\"\\x\"",
        "\"a\u{1}b\"",
        "\"unterminated",
        "\"ends in backslash\\",
        " [1, 2 ,3 ] ",
        "[1,]",
        "[,1]",
        "[",
        "]",
        "{}",
        "{\"a\":1,\"a\":2}",
        "{\"a\" : [true, null, {}]}",
        "{\"a\":1,}",
        "{1:2}",
        "{\"a\"}",
        "{\"a\":}",
        "nul",
        "nulls",
        "truex",
        "[] []",
        "",
        "  ",
        "\"0123456789abcdef\\\"0123456789abcdef\"",
        &deep_ok,
        &deep_bad,
        &long,
    ];
    for text in cases {
        let ours = parse(text, &bump).map(|t| t.to_value()).ok();
        let theirs = serde_json::from_str::<Value>(text).ok();
        assert_eq!(ours, theirs, "{text:?}");
    }
}

/// Any JSON value, with strings full of quotes, backslashes, control characters and
/// astral characters (all of which serde_json escapes or not in its own way).
pub(crate) fn any_json() -> impl proptest::strategy::Strategy<Value = Value> {
    use proptest::prelude::*;
    let text = proptest::collection::vec(
        prop_oneof![
            Just('"'),
            Just('\\'),
            Just('\u{1}'),
            Just('\n'),
            Just('é'),
            Just('😀'),
            any::<char>()
        ],
        0..24,
    )
    .prop_map(|cs| cs.into_iter().collect::<String>());
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<u64>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(|f| Number::from_f64(f).map_or(Value::Null, Value::Number)),
        text.clone().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, move |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            proptest::collection::vec((text.clone(), inner), 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest::proptest! {
    /// Whatever serde_json writes, the hand-written parser reads back as serde_json does.
    #[test]
    fn reads_whatever_serde_json_writes(v in any_json()) {
        for text in [v.to_string(), serde_json::to_string_pretty(&v).unwrap()] {
            let ours = parse(&text, &Bump::new()).map(|t| t.to_value()).ok();
            proptest::prop_assert_eq!(ours, serde_json::from_str::<Value>(&text).ok());
        }
    }

    /// On any text at all, it accepts and refuses exactly what serde_json does.
    #[test]
    fn same_verdict_on_any_text(text in "[\\[\\]{}\",:0-9a-z.eE+\\\\ -]{0,24}") {
        let ours = parse(&text, &Bump::new()).map(|t| t.to_value()).ok();
        proptest::prop_assert_eq!(ours, serde_json::from_str::<Value>(&text).ok());
    }

    /// A tree parsed from any value's text, or built from the value itself, writes the text
    /// serde_json writes for that value, and decodes to the value again.
    #[test]
    fn trees_write_what_serde_json_writes(v in any_json()) {
        let bump = Bump::new();
        let text = serde_json::to_string(&v).unwrap();
        let parsed = parse(&text, &bump).unwrap();
        let built = Tree::from_value(&v, &bump);
        let serialized = super::to_tree(&v, &bump).unwrap();
        for tree in [&parsed, &built, &serialized] {
            let mut written = String::new();
            super::write_tree(&mut written, tree);
            proptest::prop_assert_eq!(&written, &text);
            let decoded: Value = serde::Deserialize::deserialize(super::FromTree(tree)).unwrap();
            proptest::prop_assert_eq!(&decoded, &v);
        }
    }
}

#[test]
fn unique_items_agree_with_jsonschema() {
    let bump = Bump::new();
    for items in [
        json!([]),
        json!(["a"]),
        json!(["a", "b"]),
        json!(["a", "a"]),
        json!(["b", "a", "b"]),
        json!([1, 1.0]),
        json!(["1", 1]),
        json!([{"a": 1}, {"a": 1.0}]),
        json!([[1], [2]]),
        json!([
            "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o", "p", "a"
        ]),
    ] {
        let text = items.to_string();
        let tree = parse(&text, &bump).unwrap();
        let Tree::Array(elements) = &tree else {
            panic!()
        };
        let Value::Array(values) = &items else {
            panic!()
        };
        assert_eq!(
            Array::<TreeJson>::is_unique(elements),
            jsonschema::json::unique::is_unique(values),
            "{items}"
        );
    }
}

/// In-place equality agrees with the general rule on every pair of kinds.
#[test]
fn equality_agrees_with_jsonschema() {
    let bump = Bump::new();
    let values = [
        json!(null),
        json!(true),
        json!(false),
        json!(1),
        json!(1.0),
        json!(-1),
        json!("a"),
        json!("1"),
        json!([1, "a"]),
        json!([1.0, "a"]),
        json!({"a": 1, "b": [null]}),
        json!({"b": [null], "a": 1.0}),
    ];
    for left in &values {
        let text = left.to_string();
        let tree = parse(&text, &bump).unwrap();
        for right in &values {
            assert_eq!(
                Node::<TreeJson>::equals_value(&&tree, right),
                jsonschema::json::cmp::equal(left, right),
                "{left} vs {right}"
            );
        }
    }
}

#[test]
fn borrows_plain_strings_and_looks_up_pointers() {
    let bump = Bump::new();
    let text = r#"{"a": {"b/c": ["x", "y\n"]}}"#;
    let tree = parse(text, &bump).unwrap();
    // Plain strings point into the text itself; escaped ones are decoded into the arena.
    let Some(Tree::Str(x)) = tree.pointer("/a/b~1c/0") else {
        panic!("{tree:?}")
    };
    assert_eq!(*x, "x");
    assert!(text.as_bytes().as_ptr_range().contains(&x.as_ptr()));
    assert!(matches!(tree.pointer("/a/b~1c/1"), Some(Tree::Str(s)) if *s == "y\n"));
    assert!(tree.pointer("/a/missing").is_none());
    for bad in ["/a/b~1c/+1", "/a/b~1c/01", "/a/b~1c/"] {
        assert!(tree.pointer(bad).is_none(), "{bad}");
    }
    assert_eq!(
        tree.to_value(),
        serde_json::from_str::<Value>(text).unwrap()
    );
}
