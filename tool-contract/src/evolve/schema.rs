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

    /// The keywords of `node`, following `$ref` (the node's own keywords win).
    fn view(&self, node: Node<'a>, side: Side, depth: usize) -> View<'a> {
        let mut view = View {
            ptr: node.ptr.clone(),
            kws: Vec::new(),
        };
        let map = match node.value {
            Value::Object(map) => map,
            Value::Bool(true) => return view,
            Value::Bool(false) => {
                view.kws.push((
                    "not",
                    Node {
                        value: &EMPTY_SCHEMA,
                        ptr: node.ptr,
                    },
                ));
                return view;
            }
            // Not a schema: compared as written.
            _ => {
                view.kws.push(("<not a schema>", node));
                return view;
            }
        };
        let mut resolved = false;
        if let (Some(Value::String(reference)), true) = (map.get("$ref"), depth < MAX_DEPTH) {
            let (root, base) = self.root(side);
            if let Some(target) = resolve(root, base, reference) {
                view.kws = self.view(target, side, depth + 1).kws;
                resolved = true;
            }
        }
        for (key, value) in map {
            if key == "$ref" && resolved {
                continue;
            }
            let node = Node {
                value,
                ptr: push_pointer(&node.ptr, key),
            };
            view.put(key, node, false);
        }
        view
    }

    fn normalize(&self, site: Node<'a>, mut view: View<'a>, side: Side, depth: usize) -> Norm<'a> {
        let mut nullable = None;
        let mut types = None;
        if let Some(node) = view.get("type").cloned() {
            let names: Option<Vec<String>> = match node.value {
                Value::String(s) => Some(vec![s.clone()]),
                Value::Array(items) => items
                    .iter()
                    .map(|t| t.as_str().map(str::to_owned))
                    .collect(),
                _ => None,
            };
            if let Some(mut names) = names {
                view.take("type");
                if let Some(i) = names.iter().position(|t| t == "null") {
                    names.remove(i);
                    nullable = Some(node.ptr.clone());
                }
                names.sort();
                names.dedup();
                types = Some((names, node.ptr));
            }
        }

        let mut items: Vec<Item<'a>> = Vec::new();
        let mut values_ptr: Option<String> = None;
        let mut union = None;

        // `anyOf`/`oneOf`, when only one of them is written.
        let combinator = match (view.get("anyOf"), view.get("oneOf")) {
            (Some(n), None) if n.value.is_array() => Some("anyOf"),
            (None, Some(n)) if n.value.is_array() => Some("oneOf"),
            _ => None,
        };
        if let Some(keyword) = combinator {
            let node = view
                .take(keyword)
                .unwrap_or_else(|| unreachable!("checked above"));
            let mut structural = Vec::new();
            let mut had_values = false;
            for (i, branch) in node.value.as_array().into_iter().flatten().enumerate() {
                let ptr = push_pointer(&node.ptr, &i.to_string());
                let bview = self.view(
                    Node {
                        value: branch,
                        ptr: ptr.clone(),
                    },
                    side,
                    depth + 1,
                );
                if is_null_branch(&bview) {
                    nullable = Some(ptr);
                } else if let Some(values) = value_branch(&bview) {
                    had_values = true;
                    for value in values {
                        if value.is_null() {
                            nullable = Some(ptr.clone());
                            continue;
                        }
                        items.push(Item {
                            value,
                            key: canonical::to_vec(value),
                            ptr: ptr.clone(),
                            branch: Some(bview.clone()),
                        });
                    }
                } else {
                    structural.push((Node { value: branch, ptr }, bview));
                }
            }
            if had_values {
                values_ptr = Some(node.ptr.clone());
            }
            if structural.len() == 1 && !had_values && depth < MAX_DEPTH {
                // One branch left (`Option<T>` of a complex `T`): that branch is the schema,
                // under the outer keywords (a field's description wins over its type's).
                let (branch, bview) = structural.remove(0);
                for (key, node) in bview.kws {
                    view.put(key, node, true);
                }
                // Matched against another side's union, the branch is what stands for it.
                let mut inner = self.normalize(branch, view, side, depth + 1);
                if inner.nullable.is_none() {
                    inner.nullable = nullable;
                }
                if inner.types.is_none() {
                    inner.types = types;
                }
                return inner;
            }
            if !structural.is_empty() {
                union = Some(Union {
                    keyword,
                    ptr: node.ptr.clone(),
                    branches: keyed_branches(structural),
                });
            }
        }

        for keyword in ["enum", "const"] {
            let Some(node) = view.get(keyword).cloned() else {
                continue;
            };
            let values: Vec<&'a Value> = match (keyword, node.value) {
                ("enum", Value::Array(values)) => values.iter().collect(),
                ("const", value) => vec![value],
                _ => continue,
            };
            view.take(keyword);
            values_ptr = Some(node.ptr.clone());
            for value in values {
                if value.is_null() {
                    nullable = Some(node.ptr.clone());
                } else {
                    items.push(Item {
                        value,
                        key: canonical::to_vec(value),
                        ptr: node.ptr.clone(),
                        branch: None,
                    });
                }
            }
        }

        Norm {
            site,
            view,
            types,
            nullable,
            values: values_ptr.map(|p| (items, p)),
            union,
        }
    }

    // ---- comparing ----

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

    /// A plain schema as a union of one branch.
    fn single(&self, site: &Node<'a>, side: Side, keyword: &'a str) -> Union<'a> {
        let view = self.view(site.clone(), side, 0);
        Union {
            keyword,
            ptr: site.ptr.clone(),
            branches: keyed_branches(vec![(site.clone(), view)]),
        }
    }

    /// Compares `type`; returns whether the types no longer overlap (nothing else is compared).
    fn compare_types(&mut self, o: &Norm<'a>, n: &Norm<'a>) -> bool {
        let here = n.view.ptr.clone();
        let (ot, nt) = (implied_types(o), implied_types(n));
        match (&ot, &nt) {
            (None, None) => false,
            (None, Some((t, ptr))) => {
                let what = format!("`type` restricted to {}", types_text(t));
                self.emit(ptr, ChangeKind::TypeNarrowed, Delta::Narrow, what);
                false
            }
            (Some((t, _)), None) => {
                let what = format!("`type` no longer restricted (was {})", types_text(t));
                self.emit(&here, ChangeKind::TypeWidened, Delta::Widen, what);
                false
            }
            (Some((a, _)), Some((b, ptr))) if a != b => {
                let what = format!("`type` changed from {} to {}", types_text(a), types_text(b));
                let old_in_new = a.iter().all(|t| covers(b, t));
                let new_in_old = b.iter().all(|t| covers(a, t));
                let overlap = a.iter().any(|t| covers(b, t)) || b.iter().any(|t| covers(a, t));
                if old_in_new {
                    self.emit(ptr, ChangeKind::TypeWidened, Delta::Widen, what);
                } else if new_in_old {
                    self.emit(ptr, ChangeKind::TypeNarrowed, Delta::Narrow, what);
                } else {
                    self.emit(ptr, ChangeKind::TypeChanged, Delta::Other, what);
                    return !overlap;
                }
                false
            }
            _ => false,
        }
    }

    fn compare_values(&mut self, o: &Norm<'a>, n: &Norm<'a>) {
        let here = n.view.ptr.clone();
        match (&o.values, &n.values) {
            (None, None) => {}
            (None, Some((items, ptr))) => {
                let what = format!("values restricted to {}", values_text(items));
                self.emit(ptr, ChangeKind::ValuesRestricted, Delta::Narrow, what);
            }
            (Some((items, _)), None) => {
                let what = format!("values no longer restricted to {}", values_text(items));
                self.emit(&here, ChangeKind::ValuesUnrestricted, Delta::Widen, what);
            }
            (Some((old_items, _)), Some((new_items, new_ptr))) => {
                for item in new_items {
                    match old_items.iter().find(|o| o.key == item.key) {
                        None => {
                            let what = format!("value {} added", show(item.value));
                            self.emit(&item.ptr, ChangeKind::EnumValueAdded, Delta::Widen, what);
                        }
                        Some(old) => self.compare_value_docs(old, item),
                    }
                }
                for item in old_items {
                    if !new_items.iter().any(|n| n.key == item.key) {
                        let what = format!("value {} removed", show(item.value));
                        self.emit(new_ptr, ChangeKind::EnumValueRemoved, Delta::Narrow, what);
                    }
                }
            }
        }
    }

    /// The annotations of one value of a documented enum.
    fn compare_value_docs(&mut self, old: &Item<'a>, new: &Item<'a>) {
        let empty = View {
            ptr: new.ptr.clone(),
            kws: Vec::new(),
        };
        let (ov, nv) = (
            old.branch.as_ref().unwrap_or(&empty),
            new.branch.as_ref().unwrap_or(&empty),
        );
        for key in ANNOTATIONS {
            let (a, b) = (ov.get(key), nv.get(key));
            if !same_opt(a.map(|n| n.value), b.map(|n| n.value)) {
                let ptr = b.map_or(new.ptr.as_str(), |n| n.ptr.as_str()).to_owned();
                let what = format!("`{key}` of value {} {}", show(new.value), verb(a, b));
                self.emit(&ptr, ChangeKind::AnnotationChanged, Delta::Annotation, what);
            }
        }
    }

    fn compare_unions(&mut self, a: &Union<'a>, b: &Union<'a>, depth: usize, skip_null: bool) {
        if a.keyword != b.keyword {
            let what = format!("`{}` became `{}`", a.keyword, b.keyword);
            self.emit(&b.ptr, ChangeKind::NotUnderstood, Delta::Unknown, what);
            return;
        }
        let mut added: Vec<&Branch<'a>> = Vec::new();
        for br in &b.branches {
            match a.branches.iter().find(|o| o.key == br.key) {
                Some(old) => self.compare_branch(old, br, depth, skip_null),
                None => added.push(br),
            }
        }
        let mut removed: Vec<&Branch<'a>> = a
            .branches
            .iter()
            .filter(|o| !b.branches.iter().any(|n| n.key == o.key))
            .collect();
        // Untagged alternatives that changed: as many left on both sides pair by position.
        let untagged =
            |br: &&Branch<'a>| !br.key.starts_with("variant:") && !br.key.starts_with("tag:");
        let (old_left, new_left): (Vec<_>, Vec<_>) = (
            removed.iter().copied().filter(untagged).collect(),
            added.iter().copied().filter(untagged).collect(),
        );
        if !old_left.is_empty() && old_left.len() == new_left.len() {
            for (x, y) in old_left.iter().zip(&new_left) {
                self.compare_branch(x, y, depth, skip_null);
            }
            added.retain(|br| !untagged(br));
            removed.retain(|br| !untagged(br));
        }
        for br in added {
            let what = format!("variant {} added", br.label);
            self.emit(&br.node.ptr, ChangeKind::VariantAdded, Delta::Widen, what);
        }
        for old in removed {
            let what = format!("variant {} removed", old.label);
            self.emit(&b.ptr, ChangeKind::VariantRemoved, Delta::Narrow, what);
        }
    }

    fn compare_branch(
        &mut self,
        old: &Branch<'a>,
        new: &Branch<'a>,
        depth: usize,
        skip_null: bool,
    ) {
        if !skip_null {
            return self.compare(old.node.clone(), new.node.clone(), depth + 1);
        }
        if !self
            .seen
            .insert((old.node.ptr.clone(), new.node.ptr.clone()))
        {
            return;
        }
        if depth > MAX_DEPTH {
            let what = "the schema nests too deeply to compare";
            return self.emit(
                &new.node.ptr,
                ChangeKind::NotUnderstood,
                Delta::Unknown,
                what,
            );
        }
        let (ov, nv) = (
            self.view(old.node.clone(), Side::Old, 0),
            self.view(new.node.clone(), Side::New, 0),
        );
        let o = self.normalize(old.node.clone(), ov, Side::Old, 0);
        let n = self.normalize(new.node.clone(), nv, Side::New, 0);
        self.compare_norm(&o, &n, depth + 1, true);
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

    /// A keyword without subschemas.
    fn compare_leaf(&mut self, key: &str, a: Option<&Node<'a>>, b: Option<&Node<'a>>, here: &str) {
        if same_opt(a.map(|n| n.value), b.map(|n| n.value)) {
            return;
        }
        let ptr = b.or(a).map_or(here, |n| n.ptr.as_str()).to_owned();
        let (av, bv) = (a.map(|n| n.value), b.map(|n| n.value));
        if ANNOTATIONS.contains(&key) {
            // Prose is long: name the keyword, not its text.
            let what = match (key, a, b) {
                ("description" | "title" | "$comment" | "examples", None, Some(_)) => {
                    format!("`{key}` added")
                }
                ("description" | "title" | "$comment" | "examples", Some(_), None) => {
                    format!("`{key}` removed")
                }
                ("description" | "title" | "$comment" | "examples", _, _) => {
                    format!("`{key}` changed")
                }
                _ => format!("`{key}` {}", verb(a, b)),
            };
            return self.emit(&ptr, ChangeKind::AnnotationChanged, Delta::Annotation, what);
        }
        if LOWER.contains(&key) || UPPER.contains(&key) {
            return self.compare_bound(key, av, bv, &ptr);
        }
        match key {
            "default" => {
                let what = match (av, bv) {
                    (Some(x), Some(y)) => {
                        format!("`default` changed from {} to {}", show(x), show(y))
                    }
                    (None, Some(y)) => format!("`default` {} added", show(y)),
                    (Some(x), _) => format!("`default` {} removed", show(x)),
                    (None, None) => unreachable!("the values differ"),
                };
                match self.dir {
                    Direction::Input => {
                        let reason =
                            format!("{what}: calls that leave it out now mean something else");
                        self.emit_reason(&ptr, ChangeKind::DefaultChanged, Delta::Other, reason);
                    }
                    Direction::Output => {
                        self.emit(&ptr, ChangeKind::DefaultChanged, Delta::Annotation, what)
                    }
                }
            }
            "multipleOf" => self.compare_multiple_of(av, bv, &ptr),
            "uniqueItems" => {
                let (x, y) = (truthy(av), truthy(bv));
                if x == y {
                    let what = format!(
                        "`uniqueItems` written as {}",
                        show(bv.unwrap_or(&Value::Null))
                    );
                    self.emit(&ptr, ChangeKind::Rewritten, Delta::Annotation, what);
                } else if y {
                    self.emit(
                        &ptr,
                        ChangeKind::BoundTightened,
                        Delta::Narrow,
                        "`uniqueItems` added",
                    );
                } else {
                    self.emit(
                        &ptr,
                        ChangeKind::BoundWidened,
                        Delta::Widen,
                        "`uniqueItems` removed",
                    );
                }
            }
            "pattern" => match (av, bv) {
                (None, Some(y)) => {
                    let what = format!("`pattern` {} added", show(y));
                    self.emit(&ptr, ChangeKind::PatternAdded, Delta::Narrow, what)
                }
                (Some(x), None) => {
                    let what = format!("`pattern` {} removed", show(x));
                    self.emit(&ptr, ChangeKind::PatternRemoved, Delta::Widen, what)
                }
                (Some(x), Some(y)) => {
                    let what = format!(
                        "`pattern` changed from {} to {} (which accepts more cannot be decided)",
                        show(x),
                        show(y)
                    );
                    self.emit(&ptr, ChangeKind::PatternChanged, Delta::Other, what)
                }
                (None, None) => {}
            },
            "format" | "contentEncoding" | "contentMediaType" => {
                self.compare_format(key, av, bv, &ptr)
            }
            "x-meaning" => {
                let what = match (av, bv) {
                    (Some(x), Some(y)) => {
                        format!("meaning changed from {} to {}", show(x), show(y))
                    }
                    (None, Some(y)) => format!("meaning {} flagged", show(y)),
                    (Some(x), _) => format!("meaning {} unflagged", show(x)),
                    (None, None) => unreachable!("the values differ"),
                };
                let reason = format!(
                    "{what} (`x-meaning`, set by hand): the same value now means something else"
                );
                self.emit_reason(&ptr, ChangeKind::MeaningChanged, Delta::Other, reason);
            }
            _ => {
                let what = format!("`{key}` {}", verb(a, b));
                self.emit(&ptr, ChangeKind::NotUnderstood, Delta::Unknown, what);
            }
        }
    }

    fn compare_bound(&mut self, key: &str, a: Option<&Value>, b: Option<&Value>, ptr: &str) {
        let lower = LOWER.contains(&key);
        let (kind, delta, what) = match (a, b) {
            (None, Some(y)) => (
                ChangeKind::BoundTightened,
                Delta::Narrow,
                format!("`{key}` {} added", show(y)),
            ),
            (Some(x), None) => (
                ChangeKind::BoundWidened,
                Delta::Widen,
                format!("`{key}` {} removed", show(x)),
            ),
            (Some(x), Some(y)) => match num_cmp(x, y) {
                Some(Ordering::Equal) => (
                    ChangeKind::Rewritten,
                    Delta::Annotation,
                    format!("`{key}` written as {} instead of {}", show(y), show(x)),
                ),
                Some(order) => {
                    let raised = order == Ordering::Less;
                    let tighter = raised == lower;
                    let verb = if raised { "raised" } else { "lowered" };
                    let what = format!("`{key}` {verb} from {} to {}", show(x), show(y));
                    if tighter {
                        (ChangeKind::BoundTightened, Delta::Narrow, what)
                    } else {
                        (ChangeKind::BoundWidened, Delta::Widen, what)
                    }
                }
                None => (
                    ChangeKind::NotUnderstood,
                    Delta::Unknown,
                    format!("`{key}` changed from {} to {}", show(x), show(y)),
                ),
            },
            (None, None) => return,
        };
        self.emit(ptr, kind, delta, what);
    }

    fn compare_multiple_of(&mut self, a: Option<&Value>, b: Option<&Value>, ptr: &str) {
        let (kind, delta, what) = match (a, b) {
            (None, Some(y)) => (
                ChangeKind::BoundTightened,
                Delta::Narrow,
                format!("`multipleOf` {} added", show(y)),
            ),
            (Some(x), None) => (
                ChangeKind::BoundWidened,
                Delta::Widen,
                format!("`multipleOf` {} removed", show(x)),
            ),
            (Some(x), Some(y)) => {
                let what = format!("`multipleOf` changed from {} to {}", show(x), show(y));
                match (x.as_f64(), y.as_f64()) {
                    (Some(fx), Some(fy)) if fx > 0.0 && fy > 0.0 => {
                        if is_multiple(fy, fx) {
                            (ChangeKind::BoundTightened, Delta::Narrow, what)
                        } else if is_multiple(fx, fy) {
                            (ChangeKind::BoundWidened, Delta::Widen, what)
                        } else {
                            (ChangeKind::BoundTightened, Delta::Other, what)
                        }
                    }
                    _ => (ChangeKind::NotUnderstood, Delta::Unknown, what),
                }
            }
            (None, None) => return,
        };
        self.emit(ptr, kind, delta, what);
    }

    fn compare_format(&mut self, key: &str, a: Option<&Value>, b: Option<&Value>, ptr: &str) {
        // A Rust number format (`uint8`, `double`) is not part of a contract: schemas leave it
        // out, and one in a lock written before that is read as absent.
        let rust = |v: &&Value| {
            key == "format" && v.as_str().is_some_and(crate::schema::is_rust_number_format)
        };
        let (a, b) = (a.filter(|v| !rust(v)), b.filter(|v| !rust(v)));
        let (kind, delta, what) = match (a, b) {
            (None, Some(y)) => (
                ChangeKind::FormatAdded,
                Delta::Narrow,
                format!("`{key}` {} added", show(y)),
            ),
            (Some(x), None) => (
                ChangeKind::FormatRemoved,
                Delta::Widen,
                format!("`{key}` {} removed", show(x)),
            ),
            (Some(x), Some(y)) => {
                let what = format!("`{key}` changed from {} to {}", show(x), show(y));
                (ChangeKind::FormatChanged, Delta::Other, what)
            }
            (None, None) => return,
        };
        self.emit(ptr, kind, delta, what);
    }

    fn compare_items(
        &mut self,
        a: Option<&Node<'a>>,
        b: Option<&Node<'a>>,
        here: &str,
        depth: usize,
    ) {
        match (a, b) {
            (Some(x), Some(y)) if !x.value.is_array() && !y.value.is_array() => {
                self.compare(x.clone(), y.clone(), depth + 1)
            }
            (None, Some(y)) if !y.value.is_array() => {
                let ptr = y.ptr.clone();
                self.emit(
                    &ptr,
                    ChangeKind::ItemsChanged,
                    Delta::Narrow,
                    "array items must now match a schema",
                )
            }
            (Some(x), None) if !x.value.is_array() => self.emit(
                here,
                ChangeKind::ItemsChanged,
                Delta::Widen,
                format!(
                    "the schema of array items (`{}`) was removed",
                    show(x.value)
                ),
            ),
            _ => self.compare_leaf("items (array form)", a, b, here),
        }
    }

    /// `prefixItems` and `allOf`: schemas compared position by position.
    fn compare_lists(
        &mut self,
        key: &str,
        a: Option<&Node<'a>>,
        b: Option<&Node<'a>>,
        here: &str,
        depth: usize,
    ) {
        let (Some(x), Some(y)) = (a, b) else {
            return self.compare_leaf(key, a, b, here);
        };
        let (Some(xs), Some(ys)) = (x.value.as_array(), y.value.as_array()) else {
            return self.compare_leaf(key, a, b, here);
        };
        if xs.len() != ys.len() {
            let what = format!("`{key}` had {} schemas and has {}", xs.len(), ys.len());
            let kind = if key == "prefixItems" {
                ChangeKind::TupleChanged
            } else {
                ChangeKind::NotUnderstood
            };
            let delta = if key == "prefixItems" {
                Delta::Other
            } else {
                Delta::Unknown
            };
            let ptr = y.ptr.clone();
            return self.emit(&ptr, kind, delta, what);
        }
        for (i, (xv, yv)) in xs.iter().zip(ys).enumerate() {
            let index = i.to_string();
            self.compare(
                Node {
                    value: xv,
                    ptr: push_pointer(&x.ptr, &index),
                },
                Node {
                    value: yv,
                    ptr: push_pointer(&y.ptr, &index),
                },
                depth + 1,
            );
        }
    }

    fn compare_objects(&mut self, o: &Norm<'a>, n: &Norm<'a>, depth: usize) {
        let here = n.view.ptr.clone();
        let (Some(old_props), Some(new_props)) = (properties(&o.view), properties(&n.view)) else {
            let (a, b) = (o.view.get("properties"), n.view.get("properties"));
            return self.compare_leaf("properties", a, b, &here);
        };
        let (Some(old_req), Some(new_req)) = (required(&o.view), required(&n.view)) else {
            let (a, b) = (o.view.get("required"), n.view.get("required"));
            return self.compare_leaf("required", a, b, &here);
        };
        let props_ptr = |view: &View<'a>| {
            view.get("properties")
                .map_or_else(|| push_pointer(&view.ptr, "properties"), |p| p.ptr.clone())
        };
        let (old_base, new_base) = (props_ptr(&o.view), props_ptr(&n.view));

        // A removed and an added property with the same schema: a rename.
        let mut renamed: Vec<(&str, &str)> = Vec::new();
        for (name, value) in &old_props {
            if new_props.iter().any(|(n, _)| n == name) {
                continue;
            }
            let shape = self.shape_of(value, &push_pointer(&old_base, name), Side::Old);
            let found = new_props.iter().find(|(n2, v2)| {
                !old_props.iter().any(|(o, _)| o == n2)
                    && !renamed.iter().any(|(_, r)| r == n2)
                    && old_req.contains(name) == new_req.contains(n2)
                    && same(
                        &shape,
                        &self.shape_of(v2, &push_pointer(&new_base, n2), Side::New),
                    )
            });
            if let Some((to, _)) = found {
                renamed.push((name, to));
            }
        }

        for (name, value) in &new_props {
            let ptr = push_pointer(&new_base, name);
            let now_required = new_req.contains(name);
            if let Some((_, old_value)) = old_props.iter().find(|(o, _)| o == name) {
                let old_ptr = push_pointer(&old_base, name);
                self.compare(
                    Node {
                        value: old_value,
                        ptr: old_ptr,
                    },
                    Node {
                        value,
                        ptr: ptr.clone(),
                    },
                    depth + 1,
                );
                let was_required = old_req.contains(name);
                if now_required && !was_required {
                    let what = format!("property `{name}` became required");
                    self.emit(&ptr, ChangeKind::PropertyRequired, Delta::Narrow, what);
                } else if was_required && !now_required {
                    let what = format!("property `{name}` is no longer required");
                    self.emit(&ptr, ChangeKind::PropertyOptional, Delta::Widen, what);
                }
            } else if let Some((from, _)) = renamed.iter().find(|(_, to)| to == name) {
                let what = format!("property `{from}` renamed to `{name}`");
                self.emit(&ptr, ChangeKind::PropertyRenamed, Delta::Other, what);
            } else {
                let (delta, what) = match (self.dir, now_required) {
                    (Direction::Input, true) => {
                        (Delta::Narrow, format!("required property `{name}` added"))
                    }
                    (Direction::Input, false) => {
                        (Delta::Widen, format!("optional property `{name}` added"))
                    }
                    (Direction::Output, _) => {
                        let reason = format!(
                            "property `{name}` added: consumers that do not read it are unaffected"
                        );
                        self.emit_reason(&ptr, ChangeKind::PropertyAdded, Delta::Narrow, reason);
                        continue;
                    }
                };
                self.emit(&ptr, ChangeKind::PropertyAdded, delta, what);
            }
        }
        for (name, _) in &old_props {
            if new_props.iter().any(|(n, _)| n == name) || renamed.iter().any(|(f, _)| f == name) {
                continue;
            }
            let ptr = push_pointer(&old_base, name);
            match self.dir {
                Direction::Input => {
                    let reason = if closed(n.view.get("additionalProperties")) {
                        format!("property `{name}` removed: old calls that send it are now refused")
                    } else {
                        format!("property `{name}` removed: old calls that send it are now ignored")
                    };
                    self.emit_reason(&ptr, ChangeKind::PropertyRemoved, Delta::Other, reason);
                }
                Direction::Output => {
                    let reason = format!("property `{name}` removed: consumers that read it break");
                    self.emit_reason(&ptr, ChangeKind::PropertyRemoved, Delta::Widen, reason);
                }
            }
        }

        // `required` names that no property declares.
        let declared = |name: &str| {
            old_props.iter().any(|(n, _)| *n == name) || new_props.iter().any(|(n, _)| *n == name)
        };
        for name in new_req
            .iter()
            .filter(|r| !old_req.contains(r) && !declared(r))
        {
            let what = format!("`{name}` became required");
            self.emit(&here, ChangeKind::PropertyRequired, Delta::Narrow, what);
        }
        for name in old_req
            .iter()
            .filter(|r| !new_req.contains(r) && !declared(r))
        {
            let what = format!("`{name}` is no longer required");
            self.emit(&here, ChangeKind::PropertyOptional, Delta::Widen, what);
        }

        self.compare_additional(o, n, depth);
    }

    fn compare_additional(&mut self, o: &Norm<'a>, n: &Norm<'a>, depth: usize) {
        let (a, b) = (
            o.view.get("additionalProperties"),
            n.view.get("additionalProperties"),
        );
        let ptr = b
            .or(a)
            .map_or_else(|| n.view.ptr.clone(), |node| node.ptr.clone());
        match (extra(a), extra(b)) {
            (Extra::Open, Extra::Open) | (Extra::Closed, Extra::Closed) => {
                if !same_opt(a.map(|x| x.value), b.map(|x| x.value)) {
                    let what = "`additionalProperties` written differently";
                    self.emit(&ptr, ChangeKind::Rewritten, Delta::Annotation, what);
                }
            }
            (Extra::Open, Extra::Closed) => self.emit(
                &ptr,
                ChangeKind::AdditionalPropertiesClosed,
                Delta::Narrow,
                "`additionalProperties` closed: undeclared properties are refused",
            ),
            (Extra::Open, Extra::Schema(_)) => self.emit(
                &ptr,
                ChangeKind::AdditionalPropertiesClosed,
                Delta::Narrow,
                "undeclared properties must now match a schema",
            ),
            (Extra::Closed, Extra::Open) => self.emit(
                &ptr,
                ChangeKind::AdditionalPropertiesOpened,
                Delta::Widen,
                "`additionalProperties` opened: undeclared properties are accepted",
            ),
            (Extra::Schema(_), Extra::Open) => self.emit(
                &ptr,
                ChangeKind::AdditionalPropertiesOpened,
                Delta::Widen,
                "undeclared properties no longer need to match a schema",
            ),
            (Extra::Closed, Extra::Schema(_)) => self.emit(
                &ptr,
                ChangeKind::AdditionalPropertiesOpened,
                Delta::Widen,
                "undeclared properties that match a schema are accepted",
            ),
            (Extra::Schema(_), Extra::Closed) => self.emit(
                &ptr,
                ChangeKind::AdditionalPropertiesClosed,
                Delta::Narrow,
                "`additionalProperties` closed: undeclared properties are refused",
            ),
            (Extra::Schema(x), Extra::Schema(y)) => self.compare(x, y, depth + 1),
            (Extra::Unknown, _) | (_, Extra::Unknown) => {
                self.compare_leaf("additionalProperties", a, b, &n.view.ptr.clone())
            }
        }
    }

    /// `unevaluatedProperties` as `true`/absent or `false` (what a closed output writes on a
    /// composed object); a schema in it is not understood.
    fn compare_unevaluated(&mut self, a: Option<&Node<'a>>, b: Option<&Node<'a>>, here: &str) {
        let ptr = b.or(a).map_or(here, |n| n.ptr.as_str()).to_owned();
        match (extra(a), extra(b)) {
            (Extra::Open, Extra::Closed) => self.emit(
                &ptr,
                ChangeKind::AdditionalPropertiesClosed,
                Delta::Narrow,
                "`unevaluatedProperties` closed: properties no part declares are refused",
            ),
            (Extra::Closed, Extra::Open) => self.emit(
                &ptr,
                ChangeKind::AdditionalPropertiesOpened,
                Delta::Widen,
                "`unevaluatedProperties` opened: properties no part declares are accepted",
            ),
            (Extra::Open, Extra::Open) | (Extra::Closed, Extra::Closed) => {
                if !same_opt(a.map(|x| x.value), b.map(|x| x.value)) {
                    let what = "`unevaluatedProperties` written differently";
                    self.emit(&ptr, ChangeKind::Rewritten, Delta::Annotation, what);
                }
            }
            _ => self.compare_leaf("unevaluatedProperties", a, b, here),
        }
    }

    /// A schema's constraining keywords after `$ref`s, for rename detection.
    fn shape_of(&self, value: &'a Value, ptr: &str, side: Side) -> Value {
        self.view(
            Node {
                value,
                ptr: ptr.to_owned(),
            },
            side,
            0,
        )
        .stripped()
    }
}

/// `additionalProperties` as the three things it can say.
enum Extra<'a> {
    Open,
    Closed,
    Schema(Node<'a>),
    Unknown,
}

fn extra<'a>(node: Option<&Node<'a>>) -> Extra<'a> {
    match node.map(|n| n.value) {
        None | Some(Value::Bool(true)) => Extra::Open,
        Some(Value::Object(map)) if map.is_empty() => Extra::Open,
        Some(Value::Bool(false)) => Extra::Closed,
        Some(Value::Object(_)) => Extra::Schema(node.cloned().unwrap_or_else(|| unreachable!())),
        Some(_) => Extra::Unknown,
    }
}

fn closed(node: Option<&Node<'_>>) -> bool {
    matches!(extra(node), Extra::Closed)
}

/// `properties` as `(name, schema)` pairs in written order; `None` when it is not an object.
fn properties<'a>(view: &View<'a>) -> Option<Vec<(&'a str, &'a Value)>> {
    match view.get("properties").map(|n| n.value) {
        None => Some(Vec::new()),
        Some(Value::Object(map)) => Some(map.iter().map(|(k, v)| (k.as_str(), v)).collect()),
        Some(_) => None,
    }
}

/// `required` as names; `None` when it is not an array of strings.
fn required<'a>(view: &View<'a>) -> Option<Vec<&'a str>> {
    match view.get("required").map(|n| n.value) {
        None => Some(Vec::new()),
        Some(Value::Array(items)) => items.iter().map(Value::as_str).collect(),
        Some(_) => None,
    }
}

/// The schema at `reference` in `root`, with its pointer in the contract.
fn resolve<'a>(root: &'a Value, base: &str, reference: &str) -> Option<Node<'a>> {
    let pointer = reference.strip_prefix('#')?;
    let value = if pointer.is_empty() {
        root
    } else {
        root.pointer(pointer)?
    };
    Some(Node {
        value,
        ptr: format!("{base}{pointer}"),
    })
}

/// `{"type": "null"}`, annotations aside.
fn is_null_branch(view: &View<'_>) -> bool {
    let mut constraining = view.kws.iter().filter(|(k, _)| !ANNOTATIONS.contains(k));
    matches!(constraining.next(), Some(("type", n)) if n.value == "null")
        && constraining.next().is_none()
}

/// The values of a branch that is `const` or `enum` (with `type` and annotations only).
fn value_branch<'a>(view: &View<'a>) -> Option<Vec<&'a Value>> {
    let mut values = None;
    for (key, node) in &view.kws {
        match *key {
            "const" => values = Some(vec![node.value]),
            "enum" => values = Some(node.value.as_array()?.iter().collect()),
            "type" => {}
            k if ANNOTATIONS.contains(&k) => {}
            _ => return None,
        }
    }
    values
}

/// Keys the branches of a union are matched by (see the module docs).
fn keyed_branches<'a>(branches: Vec<(Node<'a>, View<'a>)>) -> Vec<Branch<'a>> {
    let mut out: Vec<Branch<'a>> = Vec::new();
    let mut untagged = 0;
    for (node, view) in branches {
        let shape = view.stripped();
        let (key, label) = match branch_tag(&view) {
            Some(tag) => tag,
            None => {
                // Untagged: an equal schema on both sides matches; otherwise by position.
                untagged += 1;
                (
                    format!(
                        "shape:{}",
                        String::from_utf8_lossy(&canonical::to_vec(&shape))
                    ),
                    format!("alternative #{untagged}"),
                )
            }
        };
        if out.iter().any(|b| b.key == key) {
            // Two branches with one tag: fall back to positions for this one.
            let n = out.len();
            out.push(Branch {
                key: format!("position:{n}"),
                label: format!("alternative #{}", n + 1),
                node,
            });
        } else {
            out.push(Branch { key, label, node });
        }
    }
    out
}

fn branch_tag(view: &View<'_>) -> Option<(String, String)> {
    let props = view.get("properties")?.value.as_object()?;
    let required: Vec<&str> = view
        .get("required")
        .and_then(|n| n.value.as_array())
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    // Externally tagged: `{"variant": {...}}`.
    if props.len() == 1 && required.len() == 1 && props.contains_key(required[0]) {
        return Some((
            format!("variant:{}", required[0]),
            format!("`{}`", required[0]),
        ));
    }
    // Internally or adjacently tagged: a required property with a `const`.
    for (name, schema) in props {
        if let Some(value) = schema.get("const").or_else(|| {
            schema
                .get("enum")
                .and_then(Value::as_array)
                .filter(|e| e.len() == 1)
                .map(|e| &e[0])
        }) {
            if required.contains(&name.as_str()) {
                let text = String::from_utf8_lossy(&canonical::to_vec(value)).into_owned();
                return Some((format!("tag:{name}={text}"), format!("`{name}` = {text}")));
            }
        }
    }
    None
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

fn empty_union<'a>(like: &Union<'a>) -> Union<'a> {
    Union {
        keyword: like.keyword,
        ptr: like.ptr.clone(),
        branches: Vec::new(),
    }
}

/// The types a schema accepts: its `type`, or else the types of its values.
fn implied_types(n: &Norm<'_>) -> Option<(Vec<String>, String)> {
    if n.types.is_some() {
        return n.types.clone();
    }
    let (items, ptr) = n.values.as_ref()?;
    let mut types: Vec<String> = items
        .iter()
        .map(|i| {
            match i.value {
                Value::Bool(_) => "boolean",
                Value::Number(x) if int(x).is_some() => "integer",
                Value::Number(_) => "number",
                Value::String(_) => "string",
                Value::Array(_) => "array",
                Value::Object(_) => "object",
                Value::Null => "null",
            }
            .to_owned()
        })
        .collect();
    types.sort();
    types.dedup();
    Some((types, ptr.clone()))
}

/// Whether `t` is among `types` (`integer` is a `number`).
fn covers(types: &[String], t: &str) -> bool {
    types
        .iter()
        .any(|x| x == t || (x == "number" && t == "integer"))
}

fn types_text(types: &[String]) -> String {
    match types {
        [] => "`null`".to_owned(),
        [one] => format!("`{one}`"),
        many => format!(
            "[{}]",
            many.iter()
                .map(|t| format!("`{t}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn values_text(items: &[Item<'_>]) -> String {
    let shown: Vec<String> = items.iter().take(8).map(|i| show(i.value)).collect();
    let more = if items.len() > 8 { ", ..." } else { "" };
    format!("[{}{more}]", shown.join(", "))
}

/// An exact order of two JSON numbers (integers exactly, others as `f64`).
fn num_cmp(a: &Value, b: &Value) -> Option<Ordering> {
    let (Value::Number(x), Value::Number(y)) = (a, b) else {
        return None;
    };
    match (int(x), int(y)) {
        (Some(i), Some(j)) => Some(i.cmp(&j)),
        _ => x.as_f64()?.partial_cmp(&y.as_f64()?),
    }
}

fn int(n: &Number) -> Option<i128> {
    n.as_i64()
        .map(i128::from)
        .or_else(|| n.as_u64().map(i128::from))
}

/// Whether `x` is a whole multiple of `y`.
fn is_multiple(x: f64, y: f64) -> bool {
    let ratio = x / y;
    ratio.is_finite() && (ratio - ratio.round()).abs() < 1e-9
}
