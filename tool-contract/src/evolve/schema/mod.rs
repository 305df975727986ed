//! Comparing two JSON Schemas (Draft 2020-12) in the shapes schemars writes.
//!
//! Each keyword change is first described as a [`Delta`] on the set of values the schema
//! accepts (more, fewer, different, the same, or unknown); the direction then decides the
//! class: an input schema that accepts more is compatible, an output schema that produces more
//! is not.
//!
//! Before keywords are compared, both schemas are brought to one form:
//! - `$ref` is followed (within the schema: `#`, `#/$defs/..`, `#/definitions/..`), the
//!   referencing schema's own keywords overriding the target's;
//! - `null` is taken out wherever it is written (`"type": [T, "null"]`, an `anyOf`/`oneOf`
//!   branch `{"type": "null"}`, a `null` in `enum`) and compared once, as "nullable";
//! - a union left with one branch is that branch (`Option<T>` of a complex `T`);
//! - `const` and `enum` values, and `oneOf`/`anyOf` branches that are one value each (a
//!   documented enum), form one set of values;
//! - the other branches are matched by their tag: the one property of an externally tagged
//!   variant, the `const` property of an internally tagged one, else by equal schema or
//!   position.

use std::cmp::Ordering;
use std::collections::HashSet;
use std::sync::LazyLock;

use serde_json::{Map, Number, Value};

use super::{push_pointer, show, Change, ChangeClass, ChangeKind};
use crate::canonical;
use crate::schema::Direction;

mod keywords;
mod normal;
mod structure;

use keywords::*;
use normal::*;

/// How far `$ref` chains, unwrapped unions and nested schemas are followed before the rest is
/// reported as not understood: far beyond any schema a type generates, short of a stack overflow
/// on a crafted lock file.
const MAX_DEPTH: usize = 64;

/// Keywords that describe without constraining.
const ANNOTATIONS: &[&str] = &[
    "description",
    "title",
    "examples",
    "$comment",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$schema",
    "$anchor",
    "$id",
];

/// Lower bounds: raising one accepts less.
const LOWER: &[&str] = &[
    "minimum",
    "exclusiveMinimum",
    "minLength",
    "minItems",
    "minProperties",
    "minContains",
];

/// Upper bounds: lowering one accepts less.
const UPPER: &[&str] = &[
    "maximum",
    "exclusiveMaximum",
    "maxLength",
    "maxItems",
    "maxProperties",
    "maxContains",
];

/// `false` as a schema: accepts nothing, like `{"not": {}}`.
static EMPTY_SCHEMA: LazyLock<Value> = LazyLock::new(|| Value::Object(Map::new()));

/// How a change moves the set of values a schema accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Delta {
    /// Accepts more.
    Widen,
    /// Accepts less.
    Narrow,
    /// Accepts different values: some old ones may be refused, new ones appear.
    Other,
    /// Accepts the same values: documentation only.
    Annotation,
    /// The classifier cannot tell.
    Unknown,
}

fn class_of(dir: Direction, delta: Delta) -> ChangeClass {
    match (dir, delta) {
        (_, Delta::Annotation) => ChangeClass::Patch,
        (_, Delta::Other | Delta::Unknown) => ChangeClass::Major,
        (Direction::Input, Delta::Widen) | (Direction::Output, Delta::Narrow) => ChangeClass::Minor,
        (Direction::Input, Delta::Narrow) | (Direction::Output, Delta::Widen) => ChangeClass::Major,
    }
}

fn consequence(dir: Direction, delta: Delta) -> &'static str {
    match (dir, delta) {
        (_, Delta::Annotation) => "documentation only",
        (Direction::Input, Delta::Widen) => "every old call is still accepted",
        (Direction::Input, Delta::Narrow) => "old calls may now be refused",
        (Direction::Input, _) => "old calls may be refused or mean something else",
        (Direction::Output, Delta::Narrow) => "every new output is one consumers already expected",
        (Direction::Output, _) => "consumers may now receive values they do not expect",
    }
}

/// Which of the two schemas a node belongs to.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Old,
    New,
}

/// A value in one of the schemas, with its JSON pointer in the contract.
#[derive(Clone, Debug)]
struct Node<'a> {
    value: &'a Value,
    ptr: String,
}

/// A schema's keywords after `$ref`s are followed, each with where it is written.
#[derive(Clone, Debug)]
struct View<'a> {
    ptr: String,
    kws: Vec<(&'a str, Node<'a>)>,
}

impl<'a> View<'a> {
    fn get(&self, key: &str) -> Option<&Node<'a>> {
        self.kws.iter().find(|(k, _)| *k == key).map(|(_, n)| n)
    }

    fn take(&mut self, key: &str) -> Option<Node<'a>> {
        let i = self.kws.iter().position(|(k, _)| *k == key)?;
        Some(self.kws.remove(i).1)
    }

    /// Sets `key`, keeping the existing entry when `keep_existing`.
    fn put(&mut self, key: &'a str, node: Node<'a>, keep_existing: bool) {
        match self.kws.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) if !keep_existing => slot.1 = node,
            Some(_) => {}
            None => self.kws.push((key, node)),
        }
    }

    /// The constraining keywords as one JSON object, for "is this the same schema" checks.
    fn stripped(&self) -> Value {
        let map = self
            .kws
            .iter()
            .filter(|(k, _)| !ANNOTATIONS.contains(k) && *k != "default")
            .map(|(k, n)| {
                let value = match (*k, n.value) {
                    ("type", Value::Array(types)) => {
                        let mut types: Vec<Value> =
                            types.iter().filter(|t| *t != "null").cloned().collect();
                        if types.len() == 1 {
                            types.remove(0)
                        } else {
                            Value::Array(types)
                        }
                    }
                    (_, value) => value.clone(),
                };
                ((*k).to_owned(), value)
            })
            .collect();
        Value::Object(map)
    }
}

/// One value of a value set, with the branch that documents it (a documented enum's variant).
#[derive(Clone, Debug)]
struct Item<'a> {
    value: &'a Value,
    key: Vec<u8>,
    ptr: String,
    branch: Option<View<'a>>,
}

/// A union branch that is not a single value, with the key it is matched by.
#[derive(Clone, Debug)]
struct Branch<'a> {
    key: String,
    label: String,
    node: Node<'a>,
}

#[derive(Clone, Debug)]
struct Union<'a> {
    keyword: &'a str,
    ptr: String,
    branches: Vec<Branch<'a>>,
}

/// A schema in the one form both sides are compared in (see the module docs).
#[derive(Clone, Debug)]
struct Norm<'a> {
    /// The schema as written, before `$ref`s and unions were followed.
    site: Node<'a>,
    view: View<'a>,
    types: Option<(Vec<String>, String)>,
    nullable: Option<String>,
    values: Option<(Vec<Item<'a>>, String)>,
    union: Option<Union<'a>>,
}

/// Compares two schemas of one direction, appending the changes to `out`.
///
/// `old_base` and `new_base` are the schemas' pointers in their contracts (`/input_schema`).
pub(super) fn compare(
    dir: Direction,
    old: &Value,
    new: &Value,
    old_base: &str,
    new_base: &str,
    out: &mut Vec<Change>,
) {
    let mut cx = Cx {
        dir,
        old_root: old,
        new_root: new,
        old_base,
        new_base,
        seen: HashSet::new(),
        out: Vec::new(),
    };
    cx.compare(
        Node {
            value: old,
            ptr: old_base.to_owned(),
        },
        Node {
            value: new,
            ptr: new_base.to_owned(),
        },
        0,
    );
    // A `$defs` entry used in two places is compared twice: report its changes once.
    let mut unique: Vec<Change> = Vec::with_capacity(cx.out.len());
    for change in cx.out {
        if !unique.contains(&change) {
            unique.push(change);
        }
    }
    out.extend(unique);
}

struct Cx<'a, 'b> {
    dir: Direction,
    old_root: &'a Value,
    new_root: &'a Value,
    old_base: &'b str,
    new_base: &'b str,
    /// Pairs of locations already compared: ends recursion through `$ref` cycles.
    seen: HashSet<(String, String)>,
    out: Vec<Change>,
}

impl<'a> Cx<'a, '_> {
    fn emit(&mut self, ptr: &str, kind: ChangeKind, delta: Delta, what: impl Into<String>) {
        let what = what.into();
        let reason = if delta == Delta::Unknown {
            format!("not understood: {what}; treated as major")
        } else {
            format!("{what}: {}", consequence(self.dir, delta))
        };
        self.emit_reason(ptr, kind, delta, reason);
    }

    fn emit_reason(&mut self, ptr: &str, kind: ChangeKind, delta: Delta, reason: String) {
        self.out
            .push(Change::new(ptr, kind, class_of(self.dir, delta), reason));
    }

    fn compare(&mut self, old: Node<'a>, new: Node<'a>, depth: usize) {
        if !self.seen.insert((old.ptr.clone(), new.ptr.clone())) {
            return;
        }
        if depth > MAX_DEPTH {
            let ptr = new.ptr.clone();
            self.emit(
                &ptr,
                ChangeKind::NotUnderstood,
                Delta::Unknown,
                "the schema nests too deeply to compare",
            );
            return;
        }
        let schema = |v: &Value| v.is_object() || v.is_boolean();
        if !schema(old.value) || !schema(new.value) {
            if !same(old.value, new.value) {
                let what = format!("{} is not a schema", show(new.value));
                self.emit(&new.ptr, ChangeKind::NotUnderstood, Delta::Unknown, what);
            }
            return;
        }
        let old_view = self.view(old.clone(), Side::Old, 0);
        let new_view = self.view(new.clone(), Side::New, 0);
        let o = self.normalize(old, old_view, Side::Old, 0);
        let n = self.normalize(new, new_view, Side::New, 0);
        self.compare_norm(&o, &n, depth, false);
    }

    // ---- bringing a schema to one form ----

    fn root(&self, side: Side) -> (&'a Value, &str) {
        match side {
            Side::Old => (self.old_root, self.old_base),
            Side::New => (self.new_root, self.new_base),
        }
    }

    /// `skip_null`: nullability was compared by the caller (a plain schema matched against
    /// the branches of a union, which never hold the union's `null`).
    fn compare_norm(&mut self, o: &Norm<'a>, n: &Norm<'a>, depth: usize, skip_null: bool) {
        let here = n.view.ptr.clone();
        match (&o.nullable, &n.nullable) {
            _ if skip_null => {}
            (None, Some(ptr)) => self.emit(
                ptr,
                ChangeKind::NullAllowed,
                Delta::Widen,
                "`null` is now accepted",
            ),
            (Some(_), None) => self.emit(
                &here,
                ChangeKind::NullRefused,
                Delta::Narrow,
                "`null` is no longer accepted",
            ),
            _ => {}
        }

        // A plain schema against a union: the plain one is a union of one branch, matched by
        // its tag or shape.
        // A side with a value set and no other branch is a union of none (its values are
        // compared below).
        match (&o.union, &n.union) {
            (Some(a), Some(b)) => self.compare_unions(a, b, depth, false),
            (None, Some(b)) if o.values.is_some() => {
                self.compare_unions(&empty_union(b), b, depth, false)
            }
            (Some(a), None) if n.values.is_some() => {
                self.compare_unions(a, &empty_union(a), depth, false)
            }
            (None, Some(b)) => {
                let a = self.single(&o.site, Side::Old, b.keyword);
                return self.compare_unions(&a, b, depth, true);
            }
            (Some(a), None) => {
                let b = self.single(&n.site, Side::New, a.keyword);
                return self.compare_unions(a, &b, depth, true);
            }
            (None, None) => {}
        }

        // With a value set on both sides, the values say everything `type` says.
        if !(o.values.is_some() && n.values.is_some()) && self.compare_types(o, n) {
            return;
        }
        self.compare_values(o, n);
        self.compare_keywords(o, n, depth);
    }

    fn compare_keywords(&mut self, o: &Norm<'a>, n: &Norm<'a>, depth: usize) {
        let mut keys: Vec<&'a str> = n.view.kws.iter().map(|(k, _)| *k).collect();
        for (k, _) in &o.view.kws {
            if !keys.contains(k) {
                keys.push(k);
            }
        }
        let mut objects_done = false;
        for key in keys {
            let (a, b) = (o.view.get(key), n.view.get(key));
            match key {
                "properties" | "required" | "additionalProperties" => {
                    if !objects_done {
                        objects_done = true;
                        self.compare_objects(o, n, depth);
                    }
                }
                "unevaluatedProperties" => self.compare_unevaluated(a, b, &n.view.ptr),
                "items" => self.compare_items(a, b, &n.view.ptr, depth),
                "prefixItems" | "allOf" => self.compare_lists(key, a, b, &n.view.ptr, depth),
                "$defs" | "definitions" => {}
                "$id" if n.view.ptr == self.new_base || o.view.ptr == self.old_base => {}
                _ => self.compare_leaf(key, a, b, &n.view.ptr),
            }
        }
    }
}

fn same(a: &Value, b: &Value) -> bool {
    a == b || canonical::to_vec(a) == canonical::to_vec(b)
}

fn same_opt(a: Option<&Value>, b: Option<&Value>) -> bool {
    match (a, b) {
        (Some(x), Some(y)) => same(x, y),
        (None, None) => true,
        _ => false,
    }
}

fn verb(a: Option<&Node<'_>>, b: Option<&Node<'_>>) -> String {
    match (a, b) {
        (None, Some(y)) => format!("added ({})", show(y.value)),
        (Some(x), None) => format!("removed (was {})", show(x.value)),
        (Some(x), Some(y)) => format!("changed from {} to {}", show(x.value), show(y.value)),
        (None, None) => "unchanged".to_owned(),
    }
}

fn truthy(v: Option<&Value>) -> bool {
    matches!(v, Some(Value::Bool(true)))
}
