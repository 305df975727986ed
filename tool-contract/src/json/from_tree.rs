//! Decoding a Rust type straight from a [`Tree`], exactly as serde_json decodes it from a
//! `&Value`: the same visitor calls in the same order, the same error type and the same
//! errors, word for word.
//!
//! Why a second deserializer rather than serde_json's own: every tool's argument type would
//! otherwise be decoded through two deserializers (the tree on the fast path, the `Value` on
//! the full path), and each one is a full instance of the type's derived `Deserialize` in the
//! crate that registers the tool. With one deserializer that words its errors as serde_json
//! does, the full path builds a tree over its `Value` (borrowing its strings) and decodes
//! from that, so each argument type is compiled once. The property tests at the end hold it to
//! serde_json's `&Value` deserializer, outcome and message, over many types and arbitrary
//! values.

use std::borrow::Cow;

use serde::de::value::{CowStrDeserializer, MapDeserializer, StrDeserializer};
use serde::de::{
    self, DeserializeSeed, Deserializer, Expected, MapAccess, SeqAccess, Unexpected, Visitor,
};
use serde::forward_to_deserialize_any;
use serde_json::Error;

use super::tree::Tree;

/// A `Deserializer` over a [`Tree`], the twin of serde_json's `impl Deserializer for &Value`.
pub(crate) struct FromTree<'a, 'de>(pub(crate) &'a Tree<'de>);

/// What serde_json reports for a value of the wrong kind (its `Value::unexpected`).
fn unexpected<'a>(tree: &'a Tree<'_>) -> Unexpected<'a> {
    match tree {
        Tree::Null => Unexpected::Unit,
        Tree::Bool(b) => Unexpected::Bool(*b),
        // serde_json's `Number::unexpected`: a non-negative integer is unsigned, a negative
        // one signed, anything else a float.
        Tree::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => Unexpected::Unsigned(u),
            (None, Some(i)) => Unexpected::Signed(i),
            (None, None) => Unexpected::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Tree::Str(s) => Unexpected::Str(s),
        Tree::Array(_) => Unexpected::Seq,
        Tree::Object(_) => Unexpected::Map,
    }
}

#[cold]
fn invalid_type(tree: &Tree<'_>, expected: &dyn Expected) -> Error {
    de::Error::invalid_type(unexpected(tree), expected)
}

fn visit_array<'de, V: Visitor<'de>>(items: &[Tree<'de>], visitor: V) -> Result<V::Value, Error> {
    let mut seq = Items(items.iter());
    let value = visitor.visit_seq(&mut seq)?;
    match seq.0.len() {
        0 => Ok(value),
        _ => Err(de::Error::invalid_length(
            items.len(),
            &"fewer elements in array",
        )),
    }
}

fn visit_object<'de, V: Visitor<'de>>(
    members: &[(&'de str, Tree<'de>)],
    visitor: V,
) -> Result<V::Value, Error> {
    let mut map = Members {
        iter: members.iter(),
        value: None,
    };
    let value = visitor.visit_map(&mut map)?;
    match map.iter.len() {
        0 => Ok(value),
        _ => Err(de::Error::invalid_length(
            members.len(),
            &"fewer elements in map",
        )),
    }
}

macro_rules! deserialize_number {
    ($($method:ident)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
            match self.0 {
                Tree::Number(n) => n.deserialize_any(visitor),
                other => Err(invalid_type(other, &visitor)),
            }
        }
    )*};
}

impl<'de> Deserializer<'de> for FromTree<'_, 'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Tree::Null => visitor.visit_unit(),
            Tree::Bool(b) => visitor.visit_bool(*b),
            Tree::Number(n) => n.deserialize_any(visitor),
            Tree::Str(s) => visitor.visit_borrowed_str(s),
            Tree::Array(items) => visit_array(items, visitor),
            Tree::Object(members) => visit_object(members, visitor),
        }
    }

    deserialize_number!(
        deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64 deserialize_i128
        deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 deserialize_u128
        deserialize_f32 deserialize_f64
    );

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Tree::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self.0 {
            // An enum with content is a map with a single key.
            Tree::Object([(variant, value)]) => visitor.visit_enum(Variant {
                name: variant,
                value: Some(value),
            }),
            Tree::Object(_) => Err(de::Error::invalid_value(
                Unexpected::Map,
                &"map with a single key",
            )),
            Tree::Str(variant) => visitor.visit_enum(Variant {
                name: variant,
                value: None,
            }),
            other => Err(invalid_type(other, &"string or map")),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        // serde_json's `RawValue` asks for its text by this name: it gets the value written
        // out, as serde_json writes it.
        if name == super::RAW_VALUE_TOKEN {
            let mut text = String::new();
            super::write_tree(&mut text, self.0);
            // The one-member map serde_json hands it, as `write::raw_value` builds one.
            let raw = std::iter::once((super::RAW_VALUE_TOKEN, text));
            return visitor.visit_map(MapDeserializer::<_, Error>::new(raw));
        }
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Tree::Bool(b) => visitor.visit_bool(*b),
            other => Err(invalid_type(other, &visitor)),
        }
    }

    fn deserialize_char<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_str(visitor)
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Tree::Str(s) => visitor.visit_borrowed_str(s),
            other => Err(invalid_type(other, &visitor)),
        }
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_str(visitor)
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Tree::Str(s) => visitor.visit_borrowed_str(s),
            Tree::Array(items) => visit_array(items, visitor),
            other => Err(invalid_type(other, &visitor)),
        }
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_bytes(visitor)
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Tree::Null => visitor.visit_unit(),
            other => Err(invalid_type(other, &visitor)),
        }
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_unit(visitor)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Tree::Array(items) => visit_array(items, visitor),
            other => Err(invalid_type(other, &visitor)),
        }
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Tree::Object(members) => visit_object(members, visitor),
            other => Err(invalid_type(other, &visitor)),
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self.0 {
            Tree::Array(items) => visit_array(items, visitor),
            Tree::Object(members) => visit_object(members, visitor),
            other => Err(invalid_type(other, &visitor)),
        }
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_str(visitor)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_unit()
    }
}

struct Items<'a, 'de>(std::slice::Iter<'a, Tree<'de>>);

impl<'de> SeqAccess<'de> for Items<'_, 'de> {
    type Error = Error;
    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        self.0
            .next()
            .map(|v| seed.deserialize(FromTree(v)))
            .transpose()
    }
    fn size_hint(&self) -> Option<usize> {
        Some(self.0.len())
    }
}

struct Members<'a, 'de> {
    iter: std::slice::Iter<'a, (&'de str, Tree<'de>)>,
    value: Option<&'a Tree<'de>>,
}

impl<'de> MapAccess<'de> for Members<'_, 'de> {
    type Error = Error;
    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        let Some((key, value)) = self.iter.next() else {
            return Ok(None);
        };
        self.value = Some(value);
        seed.deserialize(Key(key)).map(Some)
    }
    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        match self.value.take() {
            Some(v) => seed.deserialize(FromTree(v)),
            None => Err(de::Error::custom("value is missing")),
        }
    }
    fn size_hint(&self) -> Option<usize> {
        Some(self.iter.len())
    }
}

/// An object's key: a string, or, for a type that asks for a number or a bool, the string
/// read as one (`{"1": …}` for a `HashMap<u32, _>`), as serde_json's key deserializer reads it.
struct Key<'de>(&'de str);

/// serde_json's wording for a key that does not read as the number asked for.
#[cold]
fn not_a_numeric_key() -> Error {
    de::Error::custom("invalid value: expected key to be a number in quotes")
}

/// The length of the number at the start of `text`, which serde_json has just read as one
/// (so it is well formed): what tells whether anything follows it in the key. serde_json
/// reads a 128-bit integer as digits only, stopping at a `.` or an exponent.
fn number_len(text: &[u8], integer_only: bool) -> usize {
    let digits = |from: usize| {
        from + text[from.min(text.len())..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count()
    };
    let mut end = digits(usize::from(text.first() == Some(&b'-')));
    if integer_only {
        return end;
    }
    if text.get(end) == Some(&b'.') {
        end = digits(end + 1);
    }
    if matches!(text.get(end), Some(b'e' | b'E')) {
        end += 1;
        if matches!(text.get(end), Some(b'+' | b'-')) {
            end += 1;
        }
        end = digits(end);
    }
    end
}

macro_rules! deserialize_numeric_key {
    ($($method:ident $integer_only:literal)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
            if !matches!(self.0.as_bytes().first(), Some(b'0'..=b'9' | b'-')) {
                return Err(not_a_numeric_key());
            }
            // serde_json's own number reader, so the number and its errors are its own.
            let number = (&mut serde_json::Deserializer::from_str(self.0)).$method(visitor)?;
            if number_len(self.0.as_bytes(), $integer_only) < self.0.len() {
                return Err(not_a_numeric_key());
            }
            Ok(number)
        }
    )*};
}

impl<'de> Deserializer<'de> for Key<'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_borrowed_str(self.0)
    }

    deserialize_numeric_key!(
        deserialize_i8 false deserialize_i16 false deserialize_i32 false deserialize_i64 false
        deserialize_u8 false deserialize_u16 false deserialize_u32 false deserialize_u64 false
        deserialize_f32 false deserialize_f64 false deserialize_i128 true deserialize_u128 true
    );

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            "true" => visitor.visit_bool(true),
            "false" => visitor.visit_bool(false),
            other => Err(de::Error::invalid_type(Unexpected::Str(other), &visitor)),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        // A key is never null.
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        CowStrDeserializer::<Error>::new(Cow::Borrowed(self.0))
            .deserialize_enum(name, variants, visitor)
    }

    forward_to_deserialize_any! {
        char str string bytes byte_buf unit unit_struct seq tuple tuple_struct
        map struct identifier ignored_any
    }
}

/// An enum's variant: its name, and its content unless it was written as a bare string.
struct Variant<'a, 'de> {
    name: &'de str,
    value: Option<&'a Tree<'de>>,
}

impl<'a, 'de> de::EnumAccess<'de> for Variant<'a, 'de> {
    type Error = Error;
    type Variant = Content<'a, 'de>;
    fn variant_seed<V: DeserializeSeed<'de>>(
        self,
        seed: V,
    ) -> Result<(V::Value, Self::Variant), Error> {
        let name = seed.deserialize(StrDeserializer::<Error>::new(self.name))?;
        Ok((name, Content(self.value)))
    }
}

/// A variant's content, if it had any.
struct Content<'a, 'de>(Option<&'a Tree<'de>>);

impl<'de> de::VariantAccess<'de> for Content<'_, 'de> {
    type Error = Error;

    fn unit_variant(self) -> Result<(), Error> {
        match self.0 {
            Some(value) => de::Deserialize::deserialize(FromTree(value)),
            None => Ok(()),
        }
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, Error> {
        match self.0 {
            Some(value) => seed.deserialize(FromTree(value)),
            None => Err(de::Error::invalid_type(
                Unexpected::UnitVariant,
                &"newtype variant",
            )),
        }
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Some(Tree::Array([])) => visitor.visit_unit(),
            Some(Tree::Array(items)) => visit_array(items, visitor),
            Some(other) => Err(invalid_type(other, &"tuple variant")),
            None => Err(de::Error::invalid_type(
                Unexpected::UnitVariant,
                &"tuple variant",
            )),
        }
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self.0 {
            Some(Tree::Object(members)) => visit_object(members, visitor),
            Some(other) => Err(invalid_type(other, &"struct variant")),
            None => Err(de::Error::invalid_type(
                Unexpected::UnitVariant,
                &"struct variant",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    //! The differential test: for many argument shapes and arbitrary values, decoding from a
    //! tree (built over the value, or parsed from its text) gives what serde_json's `&Value`
    //! deserializer gives: the same value, or an error with the same message.

    // The test types' fields are read only through their `Debug` output, which is what the
    // two decodings are compared by.
    #![allow(dead_code)]

    use std::borrow::Cow;
    use std::collections::BTreeMap;
    use std::fmt::Debug;

    use bumpalo::Bump;
    use proptest::prelude::*;
    use serde::de::DeserializeOwned;
    use serde::Deserialize;
    use serde_json::value::RawValue;
    use serde_json::{json, Value};

    use super::super::{parse, Tree};
    use super::FromTree;

    #[derive(Deserialize, Debug)]
    struct Plain {
        a: u8,
        b: Option<String>,
        #[serde(default)]
        c: Vec<i16>,
    }

    #[derive(Deserialize, Debug)]
    #[serde(deny_unknown_fields, rename_all = "UPPERCASE")]
    struct Strict {
        a: bool,
        #[serde(rename = "x", alias = "y")]
        b: f64,
    }

    #[derive(Deserialize, Debug)]
    enum External {
        Unit,
        New(u32),
        Tup(u8, String),
        Rec { a: i64 },
    }

    #[derive(Deserialize, Debug)]
    #[serde(tag = "t")]
    enum Internal {
        Unit,
        Rec { a: u8 },
        New(Plain),
    }

    #[derive(Deserialize, Debug)]
    #[serde(tag = "t", content = "c")]
    enum Adjacent {
        Unit,
        New(u8),
        Tup(u8, u8),
    }

    #[derive(Deserialize, Debug)]
    #[serde(untagged)]
    enum Untagged {
        N(u64),
        S(String),
        P(Plain),
        L(Vec<bool>),
    }

    #[derive(Deserialize, Debug)]
    struct Flat {
        a: u8,
        #[serde(flatten)]
        rest: BTreeMap<String, Value>,
    }

    #[derive(Deserialize, Debug)]
    struct Nested {
        #[serde(default)]
        external: Option<External>,
        #[serde(default)]
        list: Vec<Adjacent>,
        #[serde(default)]
        keys: BTreeMap<i16, Option<bool>>,
        #[serde(default)]
        id: Option<Id>,
    }

    #[derive(Deserialize, Debug, PartialEq, Eq, PartialOrd, Ord)]
    struct Id(u32);

    #[derive(Deserialize, Debug)]
    struct Pair(u8, String);

    #[derive(Deserialize, Debug)]
    struct Nothing;

    #[derive(Deserialize, Debug, PartialEq, Eq, PartialOrd, Ord)]
    enum Color {
        Red,
        #[serde(rename = "1")]
        One,
    }

    /// Float map keys (no std map takes float keys), ordered by `total_cmp`.
    macro_rules! float_key {
        ($($name:ident($float:ty)),*) => {$(
            #[derive(Deserialize, Debug)]
            struct $name($float);
            impl PartialEq for $name {
                fn eq(&self, other: &Self) -> bool {
                    self.0.total_cmp(&other.0).is_eq()
                }
            }
            impl Eq for $name {}
            impl PartialOrd for $name {
                fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
                    Some(self.cmp(other))
                }
            }
            impl Ord for $name {
                fn cmp(&self, other: &Self) -> std::cmp::Ordering {
                    self.0.total_cmp(&other.0)
                }
            }
        )*};
    }
    float_key!(FloatKey(f64), FloatKey32(f32));

    /// serde_json's outcome and ours, through a tree built over `value` and one parsed from
    /// its text.
    fn outcomes<T: DeserializeOwned + Debug>(value: &Value) -> (String, [String; 2]) {
        let show = |r: Result<T, serde_json::Error>| format!("{:?}", r.map_err(|e| e.to_string()));
        let expected = show(T::deserialize(value));
        let bump = Bump::new();
        let text = value.to_string();
        let built = Tree::from_value(value, &bump);
        let parsed = parse(&text, &bump).expect("serde_json's own text parses");
        let ours = [built, parsed].map(|tree| show(T::deserialize(FromTree(&tree))));
        (expected, ours)
    }

    macro_rules! agree {
        ($value:expr; $($t:ty),* $(,)?) => {$(
            let (expected, ours) = outcomes::<$t>($value);
            for ours in ours {
                prop_assert_eq!(
                    &ours, &expected, "type {} on {}", stringify!($t), $value
                );
            }
        )*};
    }

    fn check(value: &Value) -> Result<(), TestCaseError> {
        agree!(value;
            Plain, Strict, External, Internal, Adjacent, Untagged, Flat, Nested, Id, Pair,
            Nothing, Color, (), bool, char, String, Cow<'static, str>, u8, i8, u16, i16, u32,
            i32, u64, i64, u128, i128, f32, f64, Option<Option<u8>>, (bool, Option<u8>),
            [u8; 2], Vec<u8>, Value, Box<RawValue>,
            BTreeMap<u8, Value>, BTreeMap<i32, u8>, BTreeMap<u64, u8>, BTreeMap<i128, u8>,
            BTreeMap<u128, u8>, BTreeMap<bool, u8>, BTreeMap<FloatKey, u8>, BTreeMap<FloatKey32, u8>, BTreeMap<char, u8>,
            BTreeMap<Color, u8>, BTreeMap<Option<u8>, u8>, BTreeMap<Id, u8>, BTreeMap<(), u8>,
            BTreeMap<String, u8>,
        );
        Ok(())
    }

    /// Keys that are field and variant names, and strings that are nearly numbers.
    const WORDS: &[&str] = &[
        "a",
        "b",
        "c",
        "t",
        "A",
        "B",
        "x",
        "y",
        "Unit",
        "New",
        "Tup",
        "Rec",
        "Red",
        "external",
        "list",
        "keys",
        "id",
        "1",
        "-1",
        "0",
        "-0",
        "01",
        "1.5",
        "1e3",
        "1E+2",
        "2e-1",
        "255",
        "256",
        "-129",
        "1 ",
        " 1",
        "1x",
        "1.",
        "-",
        "+1",
        "true",
        "false",
        "True",
        "18446744073709551616",
        "170141183460469231731687303715884105728",
        "1e400",
        "",
        "$serde_json::private::RawValue",
        "é",
        "ab",
        "1e39",
        "-1.5E-3",
        "3.4028235e38",
    ];

    fn word() -> impl Strategy<Value = String> {
        prop_oneof![
            4 => proptest::sample::select(WORDS).prop_map(str::to_owned),
            1 => "[a-zA-Z0-9.eE+ -]{0,5}",
        ]
    }

    fn value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            (-3i64..300).prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            prop_oneof![Just(1.5), Just(-0.5), Just(1e300), Just(2.0), any::<f64>()]
                .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
            word().prop_map(Value::String),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                proptest::collection::vec((word(), inner), 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    /// Values each type decodes, to mutate from: random values alone rarely decode into a
    /// struct, and the success paths need checking too.
    fn examples() -> Vec<Value> {
        vec![
            json!({"a": 7, "b": "x", "c": [1, -2]}),
            json!({"A": true, "x": 2.5}),
            json!({"Rec": {"a": -4}}),
            json!({"Tup": [1, "s"]}),
            json!({"t": "New", "a": 1, "b": null}),
            json!({"t": "Tup", "c": [1, 2]}),
            json!({"a": 1, "z": [true], "y": {"k": null}}),
            json!({"external": "Unit", "list": [{"t": "New", "c": 3}], "keys": {"-3": true, "4": null}, "id": 9}),
            json!({"1": 1, "255": 2, "-129": 3, "1.5": 4, "true": 5, "Red": 6, "x": 7}),
            json!([1, "pair"]),
            json!([true, null]),
            json!({"a": 1, "b": 2}),
        ]
    }

    /// `value` with the node at preorder position `at` (modulo the node count) replaced.
    fn replace(value: &mut Value, at: usize, with: Value) {
        fn count(v: &Value) -> usize {
            1 + match v {
                Value::Array(items) => items.iter().map(count).sum(),
                Value::Object(m) => m.values().map(count).sum(),
                _ => 0,
            }
        }
        fn walk(v: &mut Value, at: &mut usize, with: &mut Option<Value>) {
            if *at == 0 {
                if let Some(w) = with.take() {
                    *v = w;
                }
                return;
            }
            *at -= 1;
            match v {
                Value::Array(items) => items.iter_mut().for_each(|i| walk(i, at, with)),
                Value::Object(m) => m.values_mut().for_each(|i| walk(i, at, with)),
                _ => {}
            }
        }
        let mut at = at % count(value);
        walk(value, &mut at, &mut Some(with));
    }

    #[test]
    fn every_example_agrees() {
        for example in examples() {
            check(&example).unwrap();
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn decodes_any_value_as_serde_json_does(v in value()) {
            check(&v)?;
        }

        #[test]
        fn decodes_near_misses_as_serde_json_does(
            pick in any::<usize>(),
            edits in proptest::collection::vec((any::<usize>(), value()), 0..3),
        ) {
            let examples = examples();
            let mut v = examples[pick % examples.len()].clone();
            for (at, with) in edits {
                replace(&mut v, at, with);
            }
            check(&v)?;
        }
    }
}
