//! The tree as jsonschema sees it: jsonschema validates any representation through its `Json`
//! traits, so the compiled schemas check a [`Tree`] without building a `serde_json::Value`.

use std::borrow::Cow;

use jsonschema::json::{Array, Json, JsonNumber, Node, NodeIdentity, Object};
use jsonschema::types::JsonType;
use serde_json::{Number, Value};

use super::tree::Tree;

/// The [`Tree`] representation for jsonschema: `jsonschema::options_for::<TreeJson>()`
/// compiles a validator that checks trees in place.
pub(crate) struct TreeJson;

impl Json for TreeJson {
    type Node<'a> = &'a Tree<'a>;
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
        f(&Tree::Str(string))
    }
}

pub(crate) struct TreeNumber<'a>(&'a Number);

impl JsonNumber for TreeNumber<'_> {
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

impl<'a> Node<'a, TreeJson> for &'a Tree<'a> {
    type Object = &'a [(&'a str, Tree<'a>)];
    type Array = &'a [Tree<'a>];
    type Number = TreeNumber<'a>;

    fn as_object(&self) -> Option<Self::Object> {
        match self {
            Tree::Object(m) => Some(m),
            _ => None,
        }
    }
    fn as_array(&self) -> Option<Self::Array> {
        match self {
            Tree::Array(a) => Some(a),
            _ => None,
        }
    }
    fn as_string(&self) -> Option<Cow<'a, str>> {
        match self {
            Tree::Str(s) => Some(Cow::Borrowed(s)),
            _ => None,
        }
    }
    fn as_number(&self) -> Option<TreeNumber<'a>> {
        match self {
            Tree::Number(n) => Some(TreeNumber(n)),
            _ => None,
        }
    }
    fn as_boolean(&self) -> Option<bool> {
        match self {
            Tree::Bool(b) => Some(*b),
            _ => None,
        }
    }
    fn is_null(&self) -> bool {
        matches!(self, Tree::Null)
    }
    fn json_type(&self) -> JsonType {
        match self {
            Tree::Null => JsonType::Null,
            Tree::Bool(_) => JsonType::Boolean,
            Tree::Number(_) => JsonType::Number,
            Tree::Str(_) => JsonType::String,
            Tree::Array(_) => JsonType::Array,
            Tree::Object(_) => JsonType::Object,
        }
    }
    // `enum` and `const` compare every candidate on the hot path (e.g. each item of an array
    // of enum strings): scalars compare in place; numbers and containers take the general
    // rule through a `Value` (numbers compare mathematically, objects ignore member order).
    fn equals_value(&self, expected: &Value) -> bool {
        match (*self, expected) {
            (Tree::Str(a), Value::String(b)) => a == b,
            (Tree::Bool(a), Value::Bool(b)) => a == b,
            (Tree::Null, Value::Null) => true,
            (Tree::Str(_) | Tree::Bool(_) | Tree::Null, _) => false,
            _ => jsonschema::json::cmp::equal(&Tree::to_value(self), expected),
        }
    }
    // Cold paths only: error messages, `uniqueItems`.
    fn to_value(&self) -> Cow<'a, Value> {
        Cow::Owned(Tree::to_value(self))
    }
    fn identity(&self) -> Option<NodeIdentity> {
        Some(NodeIdentity::new(
            std::ptr::from_ref::<Tree<'a>>(*self) as usize
        ))
    }
}

impl<'a> Object<'a, TreeJson> for &'a [(&'a str, Tree<'a>)] {
    type Node = &'a Tree<'a>;
    type MemberName = &'a str;
    type MembersIter = Members<'a>;

    fn len(&self) -> usize {
        <[_]>::len(self)
    }
    fn get(&self, key: &String) -> Option<&'a Tree<'a>> {
        self.iter().find(|(name, _)| name == key).map(|(_, v)| v)
    }
    fn members(&self) -> Members<'a> {
        Members(self.iter())
    }
}

pub(crate) struct Members<'a>(std::slice::Iter<'a, (&'a str, Tree<'a>)>);

impl<'a> Iterator for Members<'a> {
    type Item = (&'a str, &'a Tree<'a>);
    fn next(&mut self) -> Option<Self::Item> {
        self.0.next().map(|(k, v)| (*k, v))
    }
}

impl<'a> Array<'a, TreeJson> for &'a [Tree<'a>] {
    type Node = &'a Tree<'a>;
    type ElementsIter = std::slice::Iter<'a, Tree<'a>>;

    fn len(&self) -> usize {
        <[_]>::len(self)
    }
    fn elements(&self) -> Self::ElementsIter {
        self.iter()
    }
    // `uniqueItems` on a short array of strings (a set of enum values, the common case) compares
    // in place; anything else takes the general rule through `Value`s.
    fn is_unique(&self) -> bool {
        if self.len() <= 16 && self.iter().all(|item| matches!(item, Tree::Str(_))) {
            return !self.iter().enumerate().any(|(i, a)| self[..i].contains(a));
        }
        let values: Vec<Value> = self.iter().map(Tree::to_value).collect();
        jsonschema::json::unique::is_unique(&values)
    }
}
