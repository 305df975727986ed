//! A borrowed JSON tree for validating tool output without building a `serde_json::Value`.
//!
//! The output is serialized once, to the text that becomes the envelope's `data`; this tree
//! borrows that text (strings without escapes are not copied) so the output schema can check
//! it. jsonschema validates custom representations through its `Json` traits.

use std::borrow::Cow;
use std::fmt;

use jsonschema::json::{Array, Json, JsonNumber, Node, NodeIdentity, Object};
use jsonschema::types::JsonType;
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Number, Value};

/// One JSON value, borrowing from the text it was parsed from.
#[derive(Debug, PartialEq)]
pub(crate) enum Lite<'a> {
    Null,
    Bool(bool),
    Number(Number),
    Str(Cow<'a, str>),
    Array(Vec<Lite<'a>>),
    Object(Vec<(Cow<'a, str>, Lite<'a>)>),
}

impl<'a> Lite<'a> {
    /// Parses `text`, borrowing from it.
    pub(crate) fn parse(text: &'a str) -> serde_json::Result<Lite<'a>> {
        serde_json::from_str(text)
    }

    /// RFC 6901 lookup, like `Value::pointer`.
    pub(crate) fn pointer(&self, pointer: &str) -> Option<&Lite<'a>> {
        if pointer.is_empty() {
            return Some(self);
        }
        let mut node = self;
        for token in pointer.strip_prefix('/')?.split('/') {
            let token = token.replace("~1", "/").replace("~0", "~");
            node = match node {
                Lite::Object(members) => &members.iter().find(|(k, _)| *k == token)?.1,
                // RFC 6901 indices are plain digits: no sign, no leading zero.
                Lite::Array(items) => {
                    let plain = !token.is_empty()
                        && token.bytes().all(|b| b.is_ascii_digit())
                        && (token == "0" || !token.starts_with('0'));
                    if !plain {
                        return None;
                    }
                    items.get(token.parse::<usize>().ok()?)?
                }
                _ => return None,
            };
        }
        Some(node)
    }

    fn value(&self) -> Value {
        match self {
            Lite::Null => Value::Null,
            Lite::Bool(b) => Value::Bool(*b),
            Lite::Number(n) => Value::Number(n.clone()),
            Lite::Str(s) => Value::String(s.to_string()),
            Lite::Array(items) => Value::Array(items.iter().map(Lite::value).collect()),
            Lite::Object(members) => Value::Object(
                members
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.value()))
                    .collect(),
            ),
        }
    }
}

/// A string that borrows when serde_json can hand out a borrowed `&str`.
pub(crate) struct Text<'a>(pub(crate) Cow<'a, str>);

impl<'de> Deserialize<'de> for Text<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Text<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Owned(v)))
            }
        }
        d.deserialize_str(V)
    }
}

impl<'de> Deserialize<'de> for Lite<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Lite<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_unit<E: de::Error>(self) -> Result<Lite<'de>, E> {
                Ok(Lite::Null)
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Lite<'de>, E> {
                Ok(Lite::Bool(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Lite<'de>, E> {
                Ok(Lite::Number(v.into()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Lite<'de>, E> {
                Ok(Lite::Number(v.into()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Lite<'de>, E> {
                Number::from_f64(v)
                    .map(Lite::Number)
                    .ok_or_else(|| E::custom("a non-finite number"))
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Lite<'de>, E> {
                Ok(Lite::Str(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Lite<'de>, E> {
                Ok(Lite::Str(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Lite<'de>, E> {
                Ok(Lite::Str(Cow::Owned(v)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Lite<'de>, A::Error> {
                let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(4));
                while let Some(item) = seq.next_element()? {
                    items.push(item);
                }
                Ok(Lite::Array(items))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Lite<'de>, A::Error> {
                let mut members = Vec::with_capacity(map.size_hint().unwrap_or(8));
                while let Some(Text(key)) = map.next_key()? {
                    members.push((key, map.next_value()?));
                }
                Ok(Lite::Object(members))
            }
        }
        d.deserialize_any(V)
    }
}

/// The [`Lite`] representation, for `jsonschema::options_for::<LiteJson>()`.
pub(crate) struct LiteJson;

impl Json for LiteJson {
    type Node<'a> = &'a Lite<'a>;
    type PreparedKey = String;
    type StringBuffer = ();

    fn prepare_key(key: &str) -> String {
        key.to_owned()
    }

    fn with_string_node<T>(
        _buffer: &mut (),
        string: &str,
        f: impl FnOnce(Self::Node<'_>) -> T,
    ) -> T {
        f(&Lite::Str(Cow::Borrowed(string)))
    }
}

pub(crate) struct LiteNumber<'a>(&'a Number);

impl JsonNumber for LiteNumber<'_> {
    fn as_u64(&self) -> Option<u64> {
        self.0.as_u64()
    }
    fn as_i64(&self) -> Option<i64> {
        self.0.as_i64()
    }
    fn as_f64(&self) -> Option<f64> {
        self.0.as_f64()
    }
    fn as_str(&self) -> Cow<'_, str> {
        Cow::Owned(self.0.to_string())
    }
    fn to_number(&self) -> Cow<'_, Number> {
        Cow::Borrowed(self.0)
    }
}

impl<'a> Node<'a, LiteJson> for &'a Lite<'a> {
    type Object = &'a [(Cow<'a, str>, Lite<'a>)];
    type Array = &'a [Lite<'a>];
    type Number = LiteNumber<'a>;

    fn as_object(&self) -> Option<Self::Object> {
        match self {
            Lite::Object(m) => Some(m),
            _ => None,
        }
    }
    fn as_array(&self) -> Option<Self::Array> {
        match self {
            Lite::Array(a) => Some(a),
            _ => None,
        }
    }
    fn as_string(&self) -> Option<Cow<'a, str>> {
        match self {
            Lite::Str(Cow::Borrowed(s)) => Some(Cow::Borrowed(s)),
            Lite::Str(Cow::Owned(s)) => Some(Cow::Borrowed(s.as_str())),
            _ => None,
        }
    }
    fn as_number(&self) -> Option<LiteNumber<'a>> {
        match self {
            Lite::Number(n) => Some(LiteNumber(n)),
            _ => None,
        }
    }
    fn as_boolean(&self) -> Option<bool> {
        match self {
            Lite::Bool(b) => Some(*b),
            _ => None,
        }
    }
    fn is_null(&self) -> bool {
        matches!(self, Lite::Null)
    }
    fn json_type(&self) -> JsonType {
        match self {
            Lite::Null => JsonType::Null,
            Lite::Bool(_) => JsonType::Boolean,
            Lite::Number(_) => JsonType::Number,
            Lite::Str(_) => JsonType::String,
            Lite::Array(_) => JsonType::Array,
            Lite::Object(_) => JsonType::Object,
        }
    }
    // Cold paths only: error messages, `const`/`enum` comparisons, `uniqueItems`.
    fn to_value(&self) -> Cow<'a, Value> {
        Cow::Owned(self.value())
    }
    fn identity(&self) -> Option<NodeIdentity> {
        Some(NodeIdentity::new(
            std::ptr::from_ref::<Lite<'a>>(*self) as usize
        ))
    }
}

impl<'a> Object<'a, LiteJson> for &'a [(Cow<'a, str>, Lite<'a>)] {
    type Node = &'a Lite<'a>;
    type MemberName = &'a str;
    type MembersIter = Members<'a>;

    fn len(&self) -> usize {
        <[_]>::len(self)
    }
    fn get(&self, key: &String) -> Option<&'a Lite<'a>> {
        self.iter().find(|(name, _)| name == key).map(|(_, v)| v)
    }
    fn members(&self) -> Members<'a> {
        Members(self.iter())
    }
}

pub(crate) struct Members<'a>(std::slice::Iter<'a, (Cow<'a, str>, Lite<'a>)>);

impl<'a> Iterator for Members<'a> {
    type Item = (&'a str, &'a Lite<'a>);
    fn next(&mut self) -> Option<Self::Item> {
        self.0.next().map(|(k, v)| (k.as_ref(), v))
    }
}

impl<'a> Array<'a, LiteJson> for &'a [Lite<'a>] {
    type Node = &'a Lite<'a>;
    type ElementsIter = std::slice::Iter<'a, Lite<'a>>;

    fn len(&self) -> usize {
        <[_]>::len(self)
    }
    fn elements(&self) -> Self::ElementsIter {
        self.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn validator(schema: &Value) -> jsonschema::Validator<LiteJson> {
        jsonschema::options_for::<LiteJson>()
            .with_draft(jsonschema::Draft::Draft202012)
            .should_validate_formats(true)
            .build(schema)
            .unwrap()
    }

    /// The same verdicts as serde_json's own representation, over a spread of keywords.
    #[test]
    fn agrees_with_serde_json_values() {
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
            let tree = Lite::parse(&text).unwrap();
            assert_eq!(
                lite.is_valid(&tree),
                plain.is_valid(&instance),
                "{instance}"
            );
        }
    }

    #[test]
    fn borrows_plain_strings_and_looks_up_pointers() {
        let text = r#"{"a": {"b/c": ["x", "y\n"]}}"#;
        let tree = Lite::parse(text).unwrap();
        let Some(Lite::Str(Cow::Borrowed("x"))) = tree.pointer("/a/b~1c/0") else {
            panic!("{tree:?}")
        };
        assert!(matches!(tree.pointer("/a/b~1c/1"), Some(Lite::Str(Cow::Owned(s))) if s == "y\n"));
        assert!(tree.pointer("/a/missing").is_none());
        for bad in ["/a/b~1c/+1", "/a/b~1c/01", "/a/b~1c/"] {
            assert!(tree.pointer(bad).is_none(), "{bad}");
        }
        assert_eq!(tree.value(), serde_json::from_str::<Value>(text).unwrap());
    }
}
