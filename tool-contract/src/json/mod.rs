//! The JSON layer: one borrowed tree and everything that reads, writes, checks and decodes it.
//!
//! The pipeline handles JSON on every call twice (the proposal's arguments, the handler's
//! output), and a `serde_json::Value` costs an allocation per string and container plus a
//! drop. This layer holds the representation the hot path uses instead, in one place:
//!
//! | module | what it is for |
//! |---|---|
//! | `tree` | [`Tree`]: one JSON value borrowing from its text, containers in an arena |
//! | `arena` | the thread's arena a tree lives in, emptied when its use ends |
//! | `parse` | text → tree, with a caller's [`Checks`] (a proposal's limits and number policy) |
//! | `scan` | the one scanner for the bytes JSON strings escape, shared by parser and writer |
//! | `write` | tree → text, byte for byte what serde_json writes |
//! | `to_tree` | a `Serialize` value (a handler's output) → tree, without text |
//! | `from_tree` | tree → a `Deserialize` type (the tool's arguments on both engines), without a `Value` |
//! | `repr` | the tree as jsonschema's `Json` representation, so compiled schemas check it |
//!
//! What the rest of the crate may rely on: a tree parsed from a text is the tree of the value
//! `serde_json::from_str` gives for that text (and refuses what it refuses); the text written
//! from a tree is the text `serde_json::to_string` writes for that value; decoding from a tree
//! gives what decoding from the `Value` gives, the same value or an error with the same
//! message; a schema gives a tree the verdict it gives the `Value`. Each of these is checked
//! against serde_json or jsonschema's own representation by property tests here, and the
//! pipeline's fast and full paths are compared end to end by `tests/tests/integration`.
//! A tree is only ever used within one synchronous step (no `.await` while it lives).

mod arena;
mod from_tree;
mod parse;
mod repr;
mod scan;
mod to_tree;
mod tree;
mod write;

#[cfg(test)]
pub(crate) mod tests;

pub(crate) use arena::with_arena;
pub(crate) use from_tree::FromTree;
pub(crate) use parse::{parse, parse_with, Checks};
pub(crate) use repr::TreeJson;
pub(crate) use scan::first_prompt_special;
pub(crate) use to_tree::to_tree;
pub(crate) use tree::{MemberVec, Tree};
pub(crate) use write::{raw_value, write_str, write_tree};

/// The name serde_json's `RawValue` (de)serializes itself under, as a one-member struct or map
/// holding its text: what the writer, the serializer and the deserializer all look for.
const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, Visitor};

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
