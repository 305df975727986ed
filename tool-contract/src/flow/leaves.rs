//! The string leaves of a tool result, read from its JSON text as a stream: what a session
//! indexes. Each leaf is a JSON pointer and the value normalized for tracing.

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use super::trace::normalize;

/// Every string leaf of the JSON `text` with its JSON pointer, normalized, in document order.
///
/// The text is read as a stream, never built into a tree. Numbers and booleans are not traced:
/// a number copied from a document cannot be told from one the user gave. Text that is not
/// JSON (it never is: the registry records what it serialized) yields the leaves read before
/// the error, so a fault can only make more values look observed.
pub(super) fn leaves_of(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut pointer = String::new();
    let mut de = serde_json::Deserializer::from_str(text);
    let _ = Leaves {
        pointer: &mut pointer,
        out: &mut out,
    }
    .deserialize(&mut de);
    out
}

/// A streaming reader of string leaves (see [`leaves_of`]).
struct Leaves<'a> {
    pointer: &'a mut String,
    out: &'a mut Vec<(String, String)>,
}

impl<'de> DeserializeSeed<'de> for Leaves<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<(), D::Error> {
        de.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Leaves<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<(), E> {
        let normalized = normalize(s);
        if !normalized.is_empty() {
            self.out
                .push((self.pointer.clone(), normalized.into_owned()));
        }
        Ok(())
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let len = self.pointer.len();
        let mut digits = itoa::Buffer::new();
        for i in 0usize.. {
            self.pointer.push('/');
            self.pointer.push_str(digits.format(i));
            let more = seq.next_element_seed(Leaves {
                pointer: &mut *self.pointer,
                out: &mut *self.out,
            })?;
            self.pointer.truncate(len);
            if more.is_none() {
                break;
            }
        }
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let len = self.pointer.len();
        while map.next_key_seed(Segment(&mut *self.pointer))?.is_some() {
            map.next_value_seed(Leaves {
                pointer: &mut *self.pointer,
                out: &mut *self.out,
            })?;
            self.pointer.truncate(len);
        }
        Ok(())
    }
}

/// Reads an object key and appends it to a JSON pointer as one escaped segment.
struct Segment<'a>(&'a mut String);

impl<'de> DeserializeSeed<'de> for Segment<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<(), D::Error> {
        de.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Segment<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<(), E> {
        self.0.push('/');
        if key.contains(['~', '/']) {
            for c in key.chars() {
                match c {
                    '~' => self.0.push_str("~0"),
                    '/' => self.0.push_str("~1"),
                    c => self.0.push(c),
                }
            }
        } else {
            self.0.push_str(key);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::Value;

    /// The pointer-and-value list the tree walk flow decisions use gives, normalized as a
    /// session keeps it: what the streaming reader must match.
    fn walk(value: &Value) -> Vec<(String, String)> {
        let mut raw = Vec::new();
        crate::flow::decide::string_leaves(value, &mut String::new(), &mut raw);
        raw.into_iter()
            .map(|(p, v)| (p, normalize(v).into_owned()))
            .filter(|(_, v)| !v.is_empty())
            .collect()
    }

    fn json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(Value::from),
            "[a-z~/@. \u{e9}\u{301}\"\\\\]{0,12}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::vec(("[a-z~/]{0,4}", inner), 0..6)
                    .prop_map(|members| Value::Object(members.into_iter().collect())),
            ]
        })
    }

    proptest! {
        /// The streaming reader over a value's text finds exactly the leaves, pointers and
        /// normalized values a walk over the parsed tree finds, in the same order.
        #[test]
        fn streamed_leaves_match_a_tree_walk(value in json()) {
            prop_assert_eq!(leaves_of(&value.to_string()), walk(&value));
        }
    }
}
