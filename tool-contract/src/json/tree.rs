//! The borrowed tree: one JSON value that borrows from its text and lives in an arena.

use bumpalo::Bump;
use serde_json::{Number, Value};

/// One JSON value, borrowing from the text it was parsed from and from its arena.
///
/// Its containers are slices in the arena (a `bumpalo::Bump`), so building one costs a bump
/// per container instead of an allocation, and nothing in it owns memory: it needs no drop,
/// and strings with escapes are decoded into the arena too. Object members keep the order of
/// the text.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Tree<'a> {
    Null,
    Bool(bool),
    Number(Number),
    Str(&'a str),
    Array(&'a [Tree<'a>]),
    Object(&'a [(&'a str, Tree<'a>)]),
}

/// An object's members while it is built or rewritten: in the arena, like the tree.
pub(crate) type MemberVec<'a> = bumpalo::collections::Vec<'a, (&'a str, Tree<'a>)>;

impl<'a> Tree<'a> {
    /// The tree of a value (a schema default added to the arguments, the full path's
    /// arguments), its containers in `bump` and its strings borrowed from the value.
    pub(crate) fn from_value(value: &'a Value, bump: &'a Bump) -> Tree<'a> {
        match value {
            Value::Null => Tree::Null,
            Value::Bool(b) => Tree::Bool(*b),
            Value::Number(n) => Tree::Number(n.clone()),
            Value::String(s) => Tree::Str(s),
            Value::Array(items) => Tree::Array(
                bump.alloc_slice_fill_iter(items.iter().map(|v| Tree::from_value(v, bump))),
            ),
            Value::Object(m) => Tree::Object(
                bump.alloc_slice_fill_iter(
                    m.iter()
                        .map(|(k, v)| (k.as_str(), Tree::from_value(v, bump))),
                ),
            ),
        }
    }

    /// RFC 6901 lookup, like `Value::pointer`.
    pub(crate) fn pointer(&self, pointer: &str) -> Option<&Tree<'a>> {
        if pointer.is_empty() {
            return Some(self);
        }
        let mut node = self;
        for token in pointer.strip_prefix('/')?.split('/') {
            let token = token.replace("~1", "/").replace("~0", "~");
            node = match node {
                Tree::Object(members) => &members.iter().find(|(k, _)| *k == token)?.1,
                // RFC 6901 indices are plain digits: no sign, no leading zero.
                Tree::Array(items) => {
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

    /// The value this tree stands for, built in full.
    pub(crate) fn to_value(&self) -> Value {
        match self {
            Tree::Null => Value::Null,
            Tree::Bool(b) => Value::Bool(*b),
            Tree::Number(n) => Value::Number(n.clone()),
            Tree::Str(s) => Value::String(s.to_string()),
            Tree::Array(items) => Value::Array(items.iter().map(Tree::to_value).collect()),
            Tree::Object(members) => Value::Object(
                members
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_value()))
                    .collect(),
            ),
        }
    }
}
