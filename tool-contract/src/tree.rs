//! The handler's output serialized once, into a [`Lite`] tree: the output schema checks that
//! tree, and the envelope's text is written from it, so what is checked is what is sent
//! without parsing the text back.
//!
//! The text must be the one serde_json would write for the output itself. For ordinary data
//! it is: strings, booleans, integers, finite floats, sequences, structs, string-keyed maps
//! and enums map one to one. Where serde_json's text is not a plain image of a JSON value
//! (`f32`s, written with `f32` digits; 128-bit integers; non-finite floats, written `null`;
//! map keys that are not strings; `RawValue`s, copied verbatim), this serializer gives up and
//! the caller serializes the output to text and parses that instead.
//!
//! A float is checked as the `f64` the handler returned, which the text denotes exactly
//! (shortest round-trip digits); reading the text back could, in rare cases, land one unit in
//! the last place away, since serde_json's float parsing is not correctly rounded.

use std::borrow::Cow;
use std::fmt;

use serde::ser::{self, Impossible, Serialize};
use serde_json::Number;

use crate::lite::Lite;

/// "Parse the text instead": not an error of the output itself.
#[derive(Debug)]
pub(crate) struct GiveUp;

impl fmt::Display for GiveUp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the output needs its text parsed")
    }
}

impl std::error::Error for GiveUp {}

impl ser::Error for GiveUp {
    fn custom<T: fmt::Display>(_msg: T) -> Self {
        GiveUp
    }
}

/// The tree of `value`, or `None` when only its text tells (see the module docs).
pub(crate) fn tree_of<T: Serialize + ?Sized>(value: &T) -> Option<Lite<'static>> {
    value.serialize(TreeSer).ok()
}

type Tree = Lite<'static>;
type Members = Vec<(Cow<'static, str>, Tree)>;

struct TreeSer;

fn variant(name: &'static str, value: Tree) -> Tree {
    Lite::Object(vec![(Cow::Borrowed(name), value)])
}

impl ser::Serializer for TreeSer {
    type Ok = Tree;
    type Error = GiveUp;
    type SerializeSeq = Seq;
    type SerializeTuple = Seq;
    type SerializeTupleStruct = Seq;
    type SerializeTupleVariant = Seq;
    type SerializeMap = Map;
    type SerializeStruct = Map;
    type SerializeStructVariant = Map;

    fn serialize_bool(self, v: bool) -> Result<Tree, GiveUp> {
        Ok(Lite::Bool(v))
    }
    fn serialize_i8(self, v: i8) -> Result<Tree, GiveUp> {
        self.serialize_i64(v.into())
    }
    fn serialize_i16(self, v: i16) -> Result<Tree, GiveUp> {
        self.serialize_i64(v.into())
    }
    fn serialize_i32(self, v: i32) -> Result<Tree, GiveUp> {
        self.serialize_i64(v.into())
    }
    fn serialize_i64(self, v: i64) -> Result<Tree, GiveUp> {
        Ok(Lite::Number(v.into()))
    }
    fn serialize_u8(self, v: u8) -> Result<Tree, GiveUp> {
        self.serialize_u64(v.into())
    }
    fn serialize_u16(self, v: u16) -> Result<Tree, GiveUp> {
        self.serialize_u64(v.into())
    }
    fn serialize_u32(self, v: u32) -> Result<Tree, GiveUp> {
        self.serialize_u64(v.into())
    }
    fn serialize_u64(self, v: u64) -> Result<Tree, GiveUp> {
        Ok(Lite::Number(v.into()))
    }
    fn serialize_i128(self, _v: i128) -> Result<Tree, GiveUp> {
        Err(GiveUp)
    }
    fn serialize_u128(self, _v: u128) -> Result<Tree, GiveUp> {
        Err(GiveUp)
    }
    fn serialize_f32(self, _v: f32) -> Result<Tree, GiveUp> {
        Err(GiveUp)
    }
    fn serialize_f64(self, v: f64) -> Result<Tree, GiveUp> {
        Number::from_f64(v).map(Lite::Number).ok_or(GiveUp)
    }
    fn serialize_char(self, v: char) -> Result<Tree, GiveUp> {
        Ok(Lite::Str(Cow::Owned(v.to_string())))
    }
    fn serialize_str(self, v: &str) -> Result<Tree, GiveUp> {
        Ok(Lite::Str(Cow::Owned(v.to_owned())))
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<Tree, GiveUp> {
        Ok(Lite::Array(
            v.iter().map(|b| Lite::Number((*b).into())).collect(),
        ))
    }
    fn serialize_none(self) -> Result<Tree, GiveUp> {
        Ok(Lite::Null)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<Tree, GiveUp> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<Tree, GiveUp> {
        Ok(Lite::Null)
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<Tree, GiveUp> {
        Ok(Lite::Null)
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<Tree, GiveUp> {
        Ok(Lite::Str(Cow::Borrowed(variant)))
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<Tree, GiveUp> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        name: &'static str,
        value: &T,
    ) -> Result<Tree, GiveUp> {
        Ok(variant(name, value.serialize(self)?))
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<Seq, GiveUp> {
        Ok(Seq {
            items: Vec::with_capacity(len.unwrap_or(4)),
            variant: None,
        })
    }
    fn serialize_tuple(self, len: usize) -> Result<Seq, GiveUp> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _name: &'static str, len: usize) -> Result<Seq, GiveUp> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        name: &'static str,
        len: usize,
    ) -> Result<Seq, GiveUp> {
        Ok(Seq {
            items: Vec::with_capacity(len),
            variant: Some(name),
        })
    }
    fn serialize_map(self, len: Option<usize>) -> Result<Map, GiveUp> {
        Ok(Map {
            members: Vec::with_capacity(len.unwrap_or(8)),
            key: None,
            variant: None,
        })
    }
    fn serialize_struct(self, name: &'static str, len: usize) -> Result<Map, GiveUp> {
        // serde_json's RawValue serializes as this magic struct; its text is copied verbatim.
        if name == "$serde_json::private::RawValue" {
            return Err(GiveUp);
        }
        self.serialize_map(Some(len))
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        name: &'static str,
        len: usize,
    ) -> Result<Map, GiveUp> {
        Ok(Map {
            members: Vec::with_capacity(len),
            key: None,
            variant: Some(name),
        })
    }
}

struct Seq {
    items: Vec<Tree>,
    variant: Option<&'static str>,
}

impl Seq {
    fn push<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), GiveUp> {
        self.items.push(value.serialize(TreeSer)?);
        Ok(())
    }
    fn done(self) -> Result<Tree, GiveUp> {
        let array = Lite::Array(self.items);
        Ok(match self.variant {
            Some(name) => variant(name, array),
            None => array,
        })
    }
}

/// The four sequence-like compound traits do the same thing.
macro_rules! seq_impl {
    ($($trait:ident :: $method:ident),*) => {$(
        impl ser::$trait for Seq {
            type Ok = Tree;
            type Error = GiveUp;
            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), GiveUp> {
                self.push(value)
            }
            fn end(self) -> Result<Tree, GiveUp> {
                self.done()
            }
        }
    )*};
}

seq_impl!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

struct Map {
    members: Members,
    key: Option<Cow<'static, str>>,
    variant: Option<&'static str>,
}

impl Map {
    fn done(self) -> Result<Tree, GiveUp> {
        let object = Lite::Object(self.members);
        Ok(match self.variant {
            Some(name) => variant(name, object),
            None => object,
        })
    }
}

impl ser::SerializeMap for Map {
    type Ok = Tree;
    type Error = GiveUp;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), GiveUp> {
        self.key = Some(key.serialize(KeySer)?);
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), GiveUp> {
        let key = self.key.take().ok_or(GiveUp)?;
        self.members.push((key, value.serialize(TreeSer)?));
        Ok(())
    }
    fn end(self) -> Result<Tree, GiveUp> {
        self.done()
    }
}

/// A struct and a struct variant's fields alike.
macro_rules! struct_impl {
    ($($trait:ident),*) => {$(
        impl ser::$trait for Map {
            type Ok = Tree;
            type Error = GiveUp;
            fn serialize_field<T: Serialize + ?Sized>(
                &mut self,
                key: &'static str,
                value: &T,
            ) -> Result<(), GiveUp> {
                self.members.push((Cow::Borrowed(key), value.serialize(TreeSer)?));
                Ok(())
            }
            fn end(self) -> Result<Tree, GiveUp> {
                self.done()
            }
        }
    )*};
}

struct_impl!(SerializeStruct, SerializeStructVariant);

/// Map keys: strings (and unit variants, written as their name) only.
struct KeySer;

impl ser::Serializer for KeySer {
    type Ok = Cow<'static, str>;
    type Error = GiveUp;
    type SerializeSeq = Impossible<Cow<'static, str>, GiveUp>;
    type SerializeTuple = Impossible<Cow<'static, str>, GiveUp>;
    type SerializeTupleStruct = Impossible<Cow<'static, str>, GiveUp>;
    type SerializeTupleVariant = Impossible<Cow<'static, str>, GiveUp>;
    type SerializeMap = Impossible<Cow<'static, str>, GiveUp>;
    type SerializeStruct = Impossible<Cow<'static, str>, GiveUp>;
    type SerializeStructVariant = Impossible<Cow<'static, str>, GiveUp>;

    fn serialize_str(self, v: &str) -> Result<Self::Ok, GiveUp> {
        Ok(Cow::Owned(v.to_owned()))
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<Self::Ok, GiveUp> {
        Ok(Cow::Borrowed(variant))
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<Self::Ok, GiveUp> {
        value.serialize(self)
    }
    fn serialize_bool(self, _v: bool) -> Result<Self::Ok, GiveUp> {
        Err(GiveUp)
    }
    fn serialize_i8(self, _v: i8) -> Result<Self::Ok, GiveUp> {
        Err(GiveUp)
    }
    fn serialize_i16(self, _v: i16) -> Result<Self::Ok, GiveUp> {
        Err(GiveUp)
    }
    fn serialize_i32(self, _v: i32) -> Result<Self::Ok, GiveUp> {
        Err(GiveUp)
    }
    fn serialize_i64(self, _v: i64) -> Result<Self::Ok, GiveUp> {
        Err(GiveUp)
    }
    fn serialize_u8(self, _v: u8) -> Result<Self::Ok, GiveUp> {
        Err(GiveUp)
    }
    fn serialize_u16(self, _v: u16) -> Result<Self::Ok, GiveUp> {
        Err(GiveUp)
    }
    fn serialize_u32(self, _v: u32) -> Result<Self::Ok, GiveUp> {
        Err(GiveUp)
    }
    fn serialize_u64(self, _v: u64) -> Result<Self::Ok, GiveUp> {
        Err(GiveUp)
    }
    fn serialize_f32(self, _v: f32) -> Result<Self::Ok, GiveUp> {
        Err(GiveUp)
    }
    fn serialize_f64(self, _v: f64) -> Result<Self::Ok, GiveUp> {
        Err(GiveUp)
    }
    fn serialize_char(self, _v: char) -> Result<Self::Ok, GiveUp> {
        Err(GiveUp)
    }
    fn serialize_bytes(self, _v: &[u8]) -> Result<Self::Ok, GiveUp> {
        Err(GiveUp)
    }
    fn serialize_none(self) -> Result<Self::Ok, GiveUp> {
        Err(GiveUp)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, _value: &T) -> Result<Self::Ok, GiveUp> {
        Err(GiveUp)
    }
    fn serialize_unit(self) -> Result<Self::Ok, GiveUp> {
        Err(GiveUp)
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<Self::Ok, GiveUp> {
        Err(GiveUp)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<Self::Ok, GiveUp> {
        Err(GiveUp)
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<Self::SerializeSeq, GiveUp> {
        Err(GiveUp)
    }
    fn serialize_tuple(self, _len: usize) -> Result<Self::SerializeTuple, GiveUp> {
        Err(GiveUp)
    }
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleStruct, GiveUp> {
        Err(GiveUp)
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleVariant, GiveUp> {
        Err(GiveUp)
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Self::SerializeMap, GiveUp> {
        Err(GiveUp)
    }
    fn serialize_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStruct, GiveUp> {
        Err(GiveUp)
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStructVariant, GiveUp> {
        Err(GiveUp)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde::Serialize;
    use serde_json::json;

    use super::*;

    #[derive(Serialize)]
    enum Kind {
        Unit,
        Newtype(u8),
        Tuple(i32, String),
        Struct { a: Option<bool>, b: char },
    }

    #[derive(Serialize)]
    struct Unit;

    #[derive(Serialize)]
    struct Wrapper(Vec<Kind>);

    #[derive(Serialize)]
    #[serde(tag = "type")]
    enum Tagged {
        One { x: u64 },
    }

    #[derive(Serialize)]
    struct Out<'a> {
        text: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        skipped: Option<u8>,
        none: Option<u8>,
        score: f64,
        neg: i64,
        kinds: Wrapper,
        map: BTreeMap<String, (u8, Unit)>,
        enum_keys: BTreeMap<Key, u8>,
        #[serde(with = "serde_bytes_like")]
        bytes: Vec<u8>,
        tagged: Tagged,
        #[serde(flatten)]
        extra: BTreeMap<String, serde_json::Value>,
    }

    #[derive(Serialize, PartialEq, Eq, PartialOrd, Ord)]
    enum Key {
        First,
    }

    mod serde_bytes_like {
        pub fn serialize<S: serde::Serializer>(v: &[u8], s: S) -> Result<S::Ok, S::Error> {
            s.serialize_bytes(v)
        }
    }

    /// What the tree writes is what serde_json writes, and the tree is what parsing gives.
    #[test]
    fn writes_what_serde_json_writes() {
        let out = Out {
            text: "quote \" backslash \\ newline \n control \u{1} astral 😀 </tag>",
            skipped: None,
            none: None,
            score: 0.1 + 0.2,
            neg: -42,
            kinds: Wrapper(vec![
                Kind::Unit,
                Kind::Newtype(7),
                Kind::Tuple(-1, "t".into()),
                Kind::Struct {
                    a: Some(true),
                    b: 'é',
                },
            ]),
            map: BTreeMap::from([("k".to_owned(), (1, Unit))]),
            enum_keys: BTreeMap::from([(Key::First, 1)]),
            bytes: vec![0, 255],
            tagged: Tagged::One { x: u64::MAX },
            extra: BTreeMap::from([("extra".to_owned(), json!({"n": 1.5, "a": [null]}))]),
        };
        let tree = tree_of(&out).expect("a plain value");
        let mut written = String::new();
        crate::json_text::write_tree(&mut written, &tree);
        let direct = serde_json::to_string(&out).unwrap();
        assert_eq!(written, direct);
        assert_eq!(Lite::parse(&direct).unwrap(), tree);
    }

    /// Where the text is not a plain image of a value, the caller parses the text.
    #[test]
    fn gives_up_where_only_the_text_tells() {
        assert!(tree_of(&0.1f32).is_none());
        assert!(tree_of(&(u128::from(u64::MAX) + 1)).is_none());
        assert!(tree_of(&1i128).is_none());
        assert!(tree_of(&f64::NAN).is_none());
        assert!(tree_of(&f64::INFINITY).is_none());
        assert!(tree_of(&BTreeMap::from([(1u8, 2u8)])).is_none());
        assert!(tree_of(&BTreeMap::from([(true, 2u8)])).is_none());
        assert!(tree_of(&BTreeMap::from([('c', 2u8)])).is_none());
        let raw = serde_json::value::RawValue::from_string("{ \"a\" : 1 }".into()).unwrap();
        assert!(tree_of(&vec![raw]).is_none());
        assert!(tree_of(&json!({"a": [1, "b", null]})).is_some());
    }
}
