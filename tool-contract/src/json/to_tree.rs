//! A `Serialize` value (a handler's output) serialized once, into a [`Tree`]: the output
//! schema checks that tree, and the envelope's text is written from it, so what is checked is
//! what is sent without parsing the text back.
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

use std::fmt;

use bumpalo::collections::Vec as BumpVec;
use bumpalo::Bump;
use serde::ser::{self, Impossible, Serialize};
use serde_json::Number;

use super::tree::{MemberVec, Tree};

/// "Parse the text instead": the value has no plain tree (see the module docs); not an error
/// of the value itself.
#[derive(Debug)]
pub(crate) struct NotATree;

impl fmt::Display for NotATree {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("this value needs its text parsed to be a tree")
    }
}

impl std::error::Error for NotATree {}

impl ser::Error for NotATree {
    fn custom<T: fmt::Display>(_msg: T) -> Self {
        NotATree
    }
}

/// The tree of `value`, in `bump`, or `None` when only its text tells (see the
/// module docs).
pub(crate) fn to_tree<'b, T: Serialize + ?Sized>(value: &T, bump: &'b Bump) -> Option<Tree<'b>> {
    value.serialize(ToTree(bump)).ok()
}

#[derive(Clone, Copy)]
struct ToTree<'b>(&'b Bump);

fn variant<'b>(name: &'static str, value: Tree<'b>, bump: &'b Bump) -> Tree<'b> {
    Tree::Object(bump.alloc_slice_fill_iter([(name, value)]))
}

impl<'b> ser::Serializer for ToTree<'b> {
    type Ok = Tree<'b>;
    type Error = NotATree;
    type SerializeSeq = Seq<'b>;
    type SerializeTuple = Seq<'b>;
    type SerializeTupleStruct = Seq<'b>;
    type SerializeTupleVariant = Seq<'b>;
    type SerializeMap = Map<'b>;
    type SerializeStruct = Map<'b>;
    type SerializeStructVariant = Map<'b>;

    fn serialize_bool(self, v: bool) -> Result<Tree<'b>, NotATree> {
        Ok(Tree::Bool(v))
    }
    fn serialize_i8(self, v: i8) -> Result<Tree<'b>, NotATree> {
        self.serialize_i64(v.into())
    }
    fn serialize_i16(self, v: i16) -> Result<Tree<'b>, NotATree> {
        self.serialize_i64(v.into())
    }
    fn serialize_i32(self, v: i32) -> Result<Tree<'b>, NotATree> {
        self.serialize_i64(v.into())
    }
    fn serialize_i64(self, v: i64) -> Result<Tree<'b>, NotATree> {
        Ok(Tree::Number(v.into()))
    }
    fn serialize_u8(self, v: u8) -> Result<Tree<'b>, NotATree> {
        self.serialize_u64(v.into())
    }
    fn serialize_u16(self, v: u16) -> Result<Tree<'b>, NotATree> {
        self.serialize_u64(v.into())
    }
    fn serialize_u32(self, v: u32) -> Result<Tree<'b>, NotATree> {
        self.serialize_u64(v.into())
    }
    fn serialize_u64(self, v: u64) -> Result<Tree<'b>, NotATree> {
        Ok(Tree::Number(v.into()))
    }
    fn serialize_i128(self, _v: i128) -> Result<Tree<'b>, NotATree> {
        Err(NotATree)
    }
    fn serialize_u128(self, _v: u128) -> Result<Tree<'b>, NotATree> {
        Err(NotATree)
    }
    fn serialize_f32(self, _v: f32) -> Result<Tree<'b>, NotATree> {
        Err(NotATree)
    }
    fn serialize_f64(self, v: f64) -> Result<Tree<'b>, NotATree> {
        Number::from_f64(v).map(Tree::Number).ok_or(NotATree)
    }
    fn serialize_char(self, v: char) -> Result<Tree<'b>, NotATree> {
        Ok(Tree::Str(self.0.alloc_str(v.encode_utf8(&mut [0; 4]))))
    }
    fn serialize_str(self, v: &str) -> Result<Tree<'b>, NotATree> {
        Ok(Tree::Str(self.0.alloc_str(v)))
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<Tree<'b>, NotATree> {
        Ok(Tree::Array(self.0.alloc_slice_fill_iter(
            v.iter().map(|b| Tree::Number((*b).into())),
        )))
    }
    fn serialize_none(self) -> Result<Tree<'b>, NotATree> {
        Ok(Tree::Null)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<Tree<'b>, NotATree> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<Tree<'b>, NotATree> {
        Ok(Tree::Null)
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<Tree<'b>, NotATree> {
        Ok(Tree::Null)
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<Tree<'b>, NotATree> {
        Ok(Tree::Str(variant))
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<Tree<'b>, NotATree> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        name: &'static str,
        value: &T,
    ) -> Result<Tree<'b>, NotATree> {
        Ok(variant(name, value.serialize(self)?, self.0))
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<Seq<'b>, NotATree> {
        Ok(Seq {
            items: BumpVec::with_capacity_in(len.unwrap_or(4), self.0),
            variant: None,
        })
    }
    fn serialize_tuple(self, len: usize) -> Result<Seq<'b>, NotATree> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _name: &'static str, len: usize) -> Result<Seq<'b>, NotATree> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        name: &'static str,
        len: usize,
    ) -> Result<Seq<'b>, NotATree> {
        Ok(Seq {
            items: BumpVec::with_capacity_in(len, self.0),
            variant: Some(name),
        })
    }
    fn serialize_map(self, len: Option<usize>) -> Result<Map<'b>, NotATree> {
        Ok(Map {
            members: MemberVec::with_capacity_in(len.unwrap_or(8), self.0),
            key: None,
            variant: None,
        })
    }
    fn serialize_struct(self, name: &'static str, len: usize) -> Result<Map<'b>, NotATree> {
        // serde_json's RawValue serializes as this magic struct; its text is copied verbatim.
        if name == super::RAW_VALUE_TOKEN {
            return Err(NotATree);
        }
        self.serialize_map(Some(len))
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        name: &'static str,
        len: usize,
    ) -> Result<Map<'b>, NotATree> {
        Ok(Map {
            members: MemberVec::with_capacity_in(len, self.0),
            key: None,
            variant: Some(name),
        })
    }
}

struct Seq<'b> {
    items: BumpVec<'b, Tree<'b>>,
    variant: Option<&'static str>,
}

impl<'b> Seq<'b> {
    fn push<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), NotATree> {
        let bump = self.items.bump();
        self.items.push(value.serialize(ToTree(bump))?);
        Ok(())
    }
    fn done(self) -> Result<Tree<'b>, NotATree> {
        let bump = self.items.bump();
        let array = Tree::Array(self.items.into_bump_slice());
        Ok(match self.variant {
            Some(name) => variant(name, array, bump),
            None => array,
        })
    }
}

/// The four sequence-like compound traits do the same thing.
macro_rules! seq_impl {
    ($($trait:ident :: $method:ident),*) => {$(
        impl<'b> ser::$trait for Seq<'b> {
            type Ok = Tree<'b>;
            type Error = NotATree;
            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), NotATree> {
                self.push(value)
            }
            fn end(self) -> Result<Tree<'b>, NotATree> {
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

struct Map<'b> {
    members: MemberVec<'b>,
    key: Option<&'b str>,
    variant: Option<&'static str>,
}

impl<'b> Map<'b> {
    fn done(self) -> Result<Tree<'b>, NotATree> {
        let bump = self.members.bump();
        let object = Tree::Object(self.members.into_bump_slice());
        Ok(match self.variant {
            Some(name) => variant(name, object, bump),
            None => object,
        })
    }
}

impl<'b> ser::SerializeMap for Map<'b> {
    type Ok = Tree<'b>;
    type Error = NotATree;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), NotATree> {
        self.key = Some(key.serialize(KeySer(self.members.bump()))?);
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), NotATree> {
        let key = self.key.take().ok_or(NotATree)?;
        let bump = self.members.bump();
        self.members.push((key, value.serialize(ToTree(bump))?));
        Ok(())
    }
    fn end(self) -> Result<Tree<'b>, NotATree> {
        self.done()
    }
}

/// A struct and a struct variant's fields alike.
macro_rules! struct_impl {
    ($($trait:ident),*) => {$(
        impl<'b> ser::$trait for Map<'b> {
            type Ok = Tree<'b>;
            type Error = NotATree;
            fn serialize_field<T: Serialize + ?Sized>(
                &mut self,
                key: &'static str,
                value: &T,
            ) -> Result<(), NotATree> {
                let bump = self.members.bump();
                self.members.push((key, value.serialize(ToTree(bump))?));
                Ok(())
            }
            fn end(self) -> Result<Tree<'b>, NotATree> {
                self.done()
            }
        }
    )*};
}

struct_impl!(SerializeStruct, SerializeStructVariant);

/// Map keys: strings (and unit variants, written as their name) only.
struct KeySer<'b>(&'b Bump);

impl<'b> ser::Serializer for KeySer<'b> {
    type Ok = &'b str;
    type Error = NotATree;
    type SerializeSeq = Impossible<&'b str, NotATree>;
    type SerializeTuple = Impossible<&'b str, NotATree>;
    type SerializeTupleStruct = Impossible<&'b str, NotATree>;
    type SerializeTupleVariant = Impossible<&'b str, NotATree>;
    type SerializeMap = Impossible<&'b str, NotATree>;
    type SerializeStruct = Impossible<&'b str, NotATree>;
    type SerializeStructVariant = Impossible<&'b str, NotATree>;

    fn serialize_str(self, v: &str) -> Result<Self::Ok, NotATree> {
        Ok(self.0.alloc_str(v))
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<Self::Ok, NotATree> {
        Ok(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<Self::Ok, NotATree> {
        value.serialize(self)
    }
    fn serialize_bool(self, _v: bool) -> Result<Self::Ok, NotATree> {
        Err(NotATree)
    }
    fn serialize_i8(self, _v: i8) -> Result<Self::Ok, NotATree> {
        Err(NotATree)
    }
    fn serialize_i16(self, _v: i16) -> Result<Self::Ok, NotATree> {
        Err(NotATree)
    }
    fn serialize_i32(self, _v: i32) -> Result<Self::Ok, NotATree> {
        Err(NotATree)
    }
    fn serialize_i64(self, _v: i64) -> Result<Self::Ok, NotATree> {
        Err(NotATree)
    }
    fn serialize_u8(self, _v: u8) -> Result<Self::Ok, NotATree> {
        Err(NotATree)
    }
    fn serialize_u16(self, _v: u16) -> Result<Self::Ok, NotATree> {
        Err(NotATree)
    }
    fn serialize_u32(self, _v: u32) -> Result<Self::Ok, NotATree> {
        Err(NotATree)
    }
    fn serialize_u64(self, _v: u64) -> Result<Self::Ok, NotATree> {
        Err(NotATree)
    }
    fn serialize_f32(self, _v: f32) -> Result<Self::Ok, NotATree> {
        Err(NotATree)
    }
    fn serialize_f64(self, _v: f64) -> Result<Self::Ok, NotATree> {
        Err(NotATree)
    }
    fn serialize_char(self, _v: char) -> Result<Self::Ok, NotATree> {
        Err(NotATree)
    }
    fn serialize_bytes(self, _v: &[u8]) -> Result<Self::Ok, NotATree> {
        Err(NotATree)
    }
    fn serialize_none(self) -> Result<Self::Ok, NotATree> {
        Err(NotATree)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, _value: &T) -> Result<Self::Ok, NotATree> {
        Err(NotATree)
    }
    fn serialize_unit(self) -> Result<Self::Ok, NotATree> {
        Err(NotATree)
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<Self::Ok, NotATree> {
        Err(NotATree)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<Self::Ok, NotATree> {
        Err(NotATree)
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<Self::SerializeSeq, NotATree> {
        Err(NotATree)
    }
    fn serialize_tuple(self, _len: usize) -> Result<Self::SerializeTuple, NotATree> {
        Err(NotATree)
    }
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleStruct, NotATree> {
        Err(NotATree)
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleVariant, NotATree> {
        Err(NotATree)
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Self::SerializeMap, NotATree> {
        Err(NotATree)
    }
    fn serialize_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStruct, NotATree> {
        Err(NotATree)
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStructVariant, NotATree> {
        Err(NotATree)
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
        let bump = Bump::new();
        let tree = to_tree(&out, &bump).expect("a plain value");
        let mut written = String::new();
        super::super::write::write_tree(&mut written, &tree);
        let direct = serde_json::to_string(&out).unwrap();
        assert_eq!(written, direct);
        assert_eq!(super::super::parse::parse(&direct, &bump).unwrap(), tree);
    }

    /// Where the text is not a plain image of a value, the caller parses the text.
    #[test]
    fn gives_up_where_only_the_text_tells() {
        let bump = Bump::new();
        assert!(to_tree(&0.1f32, &bump).is_none());
        assert!(to_tree(&(u128::from(u64::MAX) + 1), &bump).is_none());
        assert!(to_tree(&1i128, &bump).is_none());
        assert!(to_tree(&f64::NAN, &bump).is_none());
        assert!(to_tree(&f64::INFINITY, &bump).is_none());
        assert!(to_tree(&BTreeMap::from([(1u8, 2u8)]), &bump).is_none());
        assert!(to_tree(&BTreeMap::from([(true, 2u8)]), &bump).is_none());
        assert!(to_tree(&BTreeMap::from([('c', 2u8)]), &bump).is_none());
        let raw = serde_json::value::RawValue::from_string("{ \"a\" : 1 }".into()).unwrap();
        assert!(to_tree(&vec![raw], &bump).is_none());
        assert!(to_tree(&json!({"a": [1, "b", null]}), &bump).is_some());
    }
}
