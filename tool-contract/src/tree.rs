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

use std::cell::{RefCell, RefMut};
use std::fmt;

use bumpalo::collections::Vec as BumpVec;
use bumpalo::Bump;
use serde::ser::{self, Impossible, Serialize};
use serde_json::Number;

use crate::lite::{Lite, MembersIn};

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

/// The tree of `value`, in `bump`, or `None` when only its text tells (see the
/// module docs).
pub(crate) fn tree_of<'b, T: Serialize + ?Sized>(value: &T, bump: &'b Bump) -> Option<Lite<'b>> {
    value.serialize(TreeSer(bump)).ok()
}

/// Runs `f` with this thread's tree arena, reset afterwards: a tree's strings and containers
/// cost one bump each instead of an allocation and a free. A tree lives only while it is
/// checked (and, for an output, written), with no `.await` in between: the proposal's until
/// its arguments are decoded, the output's until its text is written. A nested use on the
/// same thread (a `Serialize` or `Deserialize` impl that runs a tool) gets an arena of its
/// own.
pub(crate) fn with_bump<R>(f: impl FnOnce(&Bump) -> R) -> R {
    // An arena grown past this by one large tree is dropped rather than kept for the thread.
    const KEEP: usize = 1 << 20;
    /// Empties the arena when the use ends, also when a host impl panicked: an idle thread
    /// must not keep a large tree.
    struct Reset<'a>(RefMut<'a, Bump>);
    impl Drop for Reset<'_> {
        fn drop(&mut self) {
            if self.0.allocated_bytes() > KEEP {
                *self.0 = Bump::new();
            } else {
                self.0.reset();
            }
        }
    }
    thread_local!(static BUMP: RefCell<Bump> = RefCell::new(Bump::new()));
    BUMP.with(|cell| match cell.try_borrow_mut() {
        Ok(bump) => {
            let guard = Reset(bump);
            f(&guard.0)
        }
        Err(_) => f(&Bump::new()),
    })
}

type Tree<'b> = Lite<'b>;

#[derive(Clone, Copy)]
struct TreeSer<'b>(&'b Bump);

fn variant<'b>(name: &'static str, value: Tree<'b>, bump: &'b Bump) -> Tree<'b> {
    Lite::Object(bump.alloc_slice_fill_iter([(name, value)]))
}

impl<'b> ser::Serializer for TreeSer<'b> {
    type Ok = Tree<'b>;
    type Error = GiveUp;
    type SerializeSeq = Seq<'b>;
    type SerializeTuple = Seq<'b>;
    type SerializeTupleStruct = Seq<'b>;
    type SerializeTupleVariant = Seq<'b>;
    type SerializeMap = Map<'b>;
    type SerializeStruct = Map<'b>;
    type SerializeStructVariant = Map<'b>;

    fn serialize_bool(self, v: bool) -> Result<Tree<'b>, GiveUp> {
        Ok(Lite::Bool(v))
    }
    fn serialize_i8(self, v: i8) -> Result<Tree<'b>, GiveUp> {
        self.serialize_i64(v.into())
    }
    fn serialize_i16(self, v: i16) -> Result<Tree<'b>, GiveUp> {
        self.serialize_i64(v.into())
    }
    fn serialize_i32(self, v: i32) -> Result<Tree<'b>, GiveUp> {
        self.serialize_i64(v.into())
    }
    fn serialize_i64(self, v: i64) -> Result<Tree<'b>, GiveUp> {
        Ok(Lite::Number(v.into()))
    }
    fn serialize_u8(self, v: u8) -> Result<Tree<'b>, GiveUp> {
        self.serialize_u64(v.into())
    }
    fn serialize_u16(self, v: u16) -> Result<Tree<'b>, GiveUp> {
        self.serialize_u64(v.into())
    }
    fn serialize_u32(self, v: u32) -> Result<Tree<'b>, GiveUp> {
        self.serialize_u64(v.into())
    }
    fn serialize_u64(self, v: u64) -> Result<Tree<'b>, GiveUp> {
        Ok(Lite::Number(v.into()))
    }
    fn serialize_i128(self, _v: i128) -> Result<Tree<'b>, GiveUp> {
        Err(GiveUp)
    }
    fn serialize_u128(self, _v: u128) -> Result<Tree<'b>, GiveUp> {
        Err(GiveUp)
    }
    fn serialize_f32(self, _v: f32) -> Result<Tree<'b>, GiveUp> {
        Err(GiveUp)
    }
    fn serialize_f64(self, v: f64) -> Result<Tree<'b>, GiveUp> {
        Number::from_f64(v).map(Lite::Number).ok_or(GiveUp)
    }
    fn serialize_char(self, v: char) -> Result<Tree<'b>, GiveUp> {
        Ok(Lite::Str(self.0.alloc_str(v.encode_utf8(&mut [0; 4]))))
    }
    fn serialize_str(self, v: &str) -> Result<Tree<'b>, GiveUp> {
        Ok(Lite::Str(self.0.alloc_str(v)))
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<Tree<'b>, GiveUp> {
        Ok(Lite::Array(self.0.alloc_slice_fill_iter(
            v.iter().map(|b| Lite::Number((*b).into())),
        )))
    }
    fn serialize_none(self) -> Result<Tree<'b>, GiveUp> {
        Ok(Lite::Null)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<Tree<'b>, GiveUp> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<Tree<'b>, GiveUp> {
        Ok(Lite::Null)
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<Tree<'b>, GiveUp> {
        Ok(Lite::Null)
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<Tree<'b>, GiveUp> {
        Ok(Lite::Str(variant))
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<Tree<'b>, GiveUp> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        name: &'static str,
        value: &T,
    ) -> Result<Tree<'b>, GiveUp> {
        Ok(variant(name, value.serialize(self)?, self.0))
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<Seq<'b>, GiveUp> {
        Ok(Seq {
            items: BumpVec::with_capacity_in(len.unwrap_or(4), self.0),
            variant: None,
        })
    }
    fn serialize_tuple(self, len: usize) -> Result<Seq<'b>, GiveUp> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _name: &'static str, len: usize) -> Result<Seq<'b>, GiveUp> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        name: &'static str,
        len: usize,
    ) -> Result<Seq<'b>, GiveUp> {
        Ok(Seq {
            items: BumpVec::with_capacity_in(len, self.0),
            variant: Some(name),
        })
    }
    fn serialize_map(self, len: Option<usize>) -> Result<Map<'b>, GiveUp> {
        Ok(Map {
            members: MembersIn::with_capacity_in(len.unwrap_or(8), self.0),
            key: None,
            variant: None,
        })
    }
    fn serialize_struct(self, name: &'static str, len: usize) -> Result<Map<'b>, GiveUp> {
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
    ) -> Result<Map<'b>, GiveUp> {
        Ok(Map {
            members: MembersIn::with_capacity_in(len, self.0),
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
    fn push<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), GiveUp> {
        let bump = self.items.bump();
        self.items.push(value.serialize(TreeSer(bump))?);
        Ok(())
    }
    fn done(self) -> Result<Tree<'b>, GiveUp> {
        let bump = self.items.bump();
        let array = Lite::Array(self.items.into_bump_slice());
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
            type Error = GiveUp;
            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), GiveUp> {
                self.push(value)
            }
            fn end(self) -> Result<Tree<'b>, GiveUp> {
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
    members: MembersIn<'b>,
    key: Option<&'b str>,
    variant: Option<&'static str>,
}

impl<'b> Map<'b> {
    fn done(self) -> Result<Tree<'b>, GiveUp> {
        let bump = self.members.bump();
        let object = Lite::Object(self.members.into_bump_slice());
        Ok(match self.variant {
            Some(name) => variant(name, object, bump),
            None => object,
        })
    }
}

impl<'b> ser::SerializeMap for Map<'b> {
    type Ok = Tree<'b>;
    type Error = GiveUp;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), GiveUp> {
        self.key = Some(key.serialize(KeySer(self.members.bump()))?);
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), GiveUp> {
        let key = self.key.take().ok_or(GiveUp)?;
        let bump = self.members.bump();
        self.members.push((key, value.serialize(TreeSer(bump))?));
        Ok(())
    }
    fn end(self) -> Result<Tree<'b>, GiveUp> {
        self.done()
    }
}

/// A struct and a struct variant's fields alike.
macro_rules! struct_impl {
    ($($trait:ident),*) => {$(
        impl<'b> ser::$trait for Map<'b> {
            type Ok = Tree<'b>;
            type Error = GiveUp;
            fn serialize_field<T: Serialize + ?Sized>(
                &mut self,
                key: &'static str,
                value: &T,
            ) -> Result<(), GiveUp> {
                let bump = self.members.bump();
                self.members.push((key, value.serialize(TreeSer(bump))?));
                Ok(())
            }
            fn end(self) -> Result<Tree<'b>, GiveUp> {
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
    type Error = GiveUp;
    type SerializeSeq = Impossible<&'b str, GiveUp>;
    type SerializeTuple = Impossible<&'b str, GiveUp>;
    type SerializeTupleStruct = Impossible<&'b str, GiveUp>;
    type SerializeTupleVariant = Impossible<&'b str, GiveUp>;
    type SerializeMap = Impossible<&'b str, GiveUp>;
    type SerializeStruct = Impossible<&'b str, GiveUp>;
    type SerializeStructVariant = Impossible<&'b str, GiveUp>;

    fn serialize_str(self, v: &str) -> Result<Self::Ok, GiveUp> {
        Ok(self.0.alloc_str(v))
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<Self::Ok, GiveUp> {
        Ok(variant)
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
        let bump = Bump::new();
        let tree = tree_of(&out, &bump).expect("a plain value");
        let mut written = String::new();
        crate::json_text::write_tree(&mut written, &tree);
        let direct = serde_json::to_string(&out).unwrap();
        assert_eq!(written, direct);
        assert_eq!(Lite::parse(&direct, &bump).unwrap(), tree);
    }

    /// Each use of the thread's arena starts empty, and a nested use gets its own.
    #[test]
    fn the_arena_is_reset_and_nests() {
        let nested_ok = with_bump(|bump| {
            let _ = bump.alloc_str("first use");
            with_bump(|nested| {
                assert!(!std::ptr::eq(bump, nested));
                tree_of(&"nested", nested).is_some()
            })
        });
        assert!(nested_ok);
        let fresh = with_bump(|bump| {
            let room = bump.chunk_capacity();
            let _ = bump.alloc_str(&"x".repeat(100));
            room
        });
        assert!(fresh > 100);
        assert_eq!(with_bump(|bump| bump.chunk_capacity()), fresh);

        // A panic inside (a host `Serialize` impl) still empties the arena.
        let panicked = std::panic::catch_unwind(|| {
            with_bump(|bump| {
                let _ = bump.alloc_str(&"y".repeat(100));
                panic!("a Serialize impl failed");
            })
        });
        assert!(panicked.is_err());
        assert_eq!(with_bump(|bump| bump.chunk_capacity()), fresh);
    }

    /// Where the text is not a plain image of a value, the caller parses the text.
    #[test]
    fn gives_up_where_only_the_text_tells() {
        let bump = Bump::new();
        assert!(tree_of(&0.1f32, &bump).is_none());
        assert!(tree_of(&(u128::from(u64::MAX) + 1), &bump).is_none());
        assert!(tree_of(&1i128, &bump).is_none());
        assert!(tree_of(&f64::NAN, &bump).is_none());
        assert!(tree_of(&f64::INFINITY, &bump).is_none());
        assert!(tree_of(&BTreeMap::from([(1u8, 2u8)]), &bump).is_none());
        assert!(tree_of(&BTreeMap::from([(true, 2u8)]), &bump).is_none());
        assert!(tree_of(&BTreeMap::from([('c', 2u8)]), &bump).is_none());
        let raw = serde_json::value::RawValue::from_string("{ \"a\" : 1 }".into()).unwrap();
        assert!(tree_of(&vec![raw], &bump).is_none());
        assert!(tree_of(&json!({"a": [1, "b", null]}), &bump).is_some());
    }
}
