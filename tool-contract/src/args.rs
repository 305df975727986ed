//! A call's arguments between parsing and the handler: the null/default plan applied to them,
//! and the validated arguments as a `Value` (built only when something asks, on the fast
//! path).

use std::collections::HashMap;
use std::fmt;
use std::sync::OnceLock;

use bumpalo::collections::Vec as BumpVec;
use bumpalo::Bump;
use serde_json::{Map, Value};

use crate::json::{MemberVec, Tree};
use crate::proposal::{Proposal, ProposalLimits};

/// What the plan does with the arguments, derived from the input schema once, when the registry
/// is built:
///
/// * a `null` sent for a property whose schema does not allow `null` is dropped, at any depth
///   the plan reaches (nested objects, arrays of objects): strict-mode models send `null` for
///   every optional they leave out, and the property is then simply absent;
/// * a top-level property that is absent (or whose `null` was dropped) gets the schema's
///   `default`, so what the schema promises the model is what the handler receives.
///
/// The rule is stated once ([`ArgsPlan::step`], [`ArgsPlan::defaults`]) and carried out on
/// both representations of the arguments: the full path's `Value` and the fast path's tree.
/// Dropped members are removed as `serde_json::Map::remove` removes them (the last member takes
/// the removed one's place) and defaults are appended in the plan's order, so both give the
/// same members in the same order.
#[derive(Clone, Debug, Default)]
pub(crate) struct ArgsPlan {
    props: Vec<PropPlan>,
    /// Name to index, for plans too large to scan per member.
    index: Option<HashMap<String, usize>>,
}

#[derive(Clone, Debug)]
struct PropPlan {
    name: String,
    drop_null: bool,
    default: Option<Value>,
    nested: Option<Box<ArgsPlan>>,
    items: Option<Box<ArgsPlan>>,
}

/// What the plan does with one member.
enum Step<'p> {
    Keep,
    Drop,
    /// Apply this plan inside the member (an object).
    Object(&'p ArgsPlan),
    /// Apply this plan to each object item of the member (an array).
    Items(&'p ArgsPlan),
}

/// One edit that finishes an object.
enum Edit<'p> {
    /// Remove this member (its `null` is not allowed).
    Drop(&'p str),
    /// Add this member with this default.
    Add(&'p str, &'p Value),
}

/// The kind of a member's value, as far as the plan cares.
#[derive(Clone, Copy)]
enum Kind {
    Null,
    Object,
    Array,
    Other,
}

/// Which of a plan's properties an object has, or had dropped: a bit set that allocates only
/// past 64 properties.
#[derive(Default)]
struct Marks {
    low: u64,
    high: Vec<bool>,
}

impl Marks {
    fn set(&mut self, i: usize) {
        if i < 64 {
            self.low |= 1 << i;
        } else {
            let j = i - 64;
            if self.high.len() <= j {
                self.high.resize(j + 1, false);
            }
            self.high[j] = true;
        }
    }

    fn get(&self, i: usize) -> bool {
        if i < 64 {
            self.low >> i & 1 == 1
        } else {
            self.high.get(i - 64).copied().unwrap_or(false)
        }
    }
}

fn allows_null(schema: &Value) -> bool {
    match schema {
        Value::Bool(b) => *b,
        Value::Object(m) => {
            let by_type = match m.get("type") {
                None => {
                    !m.contains_key("enum")
                        && !m.contains_key("const")
                        && !m.contains_key("anyOf")
                        && !m.contains_key("oneOf")
                }
                Some(Value::String(t)) => t == "null",
                Some(Value::Array(ts)) => ts.iter().any(|t| t == "null"),
                Some(_) => false,
            };
            let in_enum = m
                .get("enum")
                .and_then(Value::as_array)
                .is_some_and(|e| e.contains(&Value::Null));
            let in_const = m.get("const") == Some(&Value::Null);
            let in_union = ["anyOf", "oneOf"].iter().any(|k| {
                m.get(*k)
                    .and_then(Value::as_array)
                    .is_some_and(|alts| alts.iter().any(allows_null))
            });
            by_type || in_enum || in_const || in_union
        }
        _ => false,
    }
}

impl ArgsPlan {
    /// Scanned member by member up to this many properties; indexed beyond.
    const SCAN: usize = 16;

    pub(crate) fn from_schema(schema: &Value) -> ArgsPlan {
        Self::build(schema, 0)
    }

    fn build(schema: &Value, depth: usize) -> ArgsPlan {
        let Some(props) = schema.get("properties").and_then(Value::as_object) else {
            return ArgsPlan::default();
        };
        // Recursive types keep `$ref`s; a plan is only a convenience, so stop at a sane depth.
        if depth > 16 {
            return ArgsPlan::default();
        }
        let props: Vec<PropPlan> = props
            .iter()
            .map(|(name, s)| {
                let nested = s
                    .get("properties")
                    .map(|_| Box::new(Self::build(s, depth + 1)));
                let items = s
                    .get("items")
                    .filter(|i| i.get("properties").is_some())
                    .map(|i| Box::new(Self::build(i, depth + 1)));
                PropPlan {
                    name: name.clone(),
                    drop_null: !allows_null(s),
                    default: if depth == 0 {
                        s.get("default").cloned()
                    } else {
                        None
                    },
                    nested: nested.filter(|p| !p.props.is_empty()),
                    items: items.filter(|p| !p.props.is_empty()),
                }
            })
            .collect();
        let index = (props.len() > Self::SCAN).then(|| {
            props
                .iter()
                .enumerate()
                .map(|(i, p)| (p.name.clone(), i))
                .collect()
        });
        ArgsPlan { props, index }
    }

    fn position(&self, key: &str) -> Option<usize> {
        match &self.index {
            Some(index) => index.get(key).copied(),
            None => self.props.iter().position(|p| p.name == key),
        }
    }

    /// The rule for one member: its property's index and what to do with it.
    fn step(&self, key: &str, kind: Kind) -> Option<(usize, Step<'_>)> {
        let i = self.position(key)?;
        let p = &self.props[i];
        let step = match kind {
            Kind::Null if p.drop_null => Step::Drop,
            Kind::Object => p.nested.as_deref().map_or(Step::Keep, Step::Object),
            Kind::Array => p.items.as_deref().map_or(Step::Keep, Step::Items),
            _ => Step::Keep,
        };
        Some((i, step))
    }

    /// The edits that finish an object, in order: every member to drop (in the plan's order),
    /// then every default to add (in the plan's order). A default goes to a property that is
    /// absent, or whose `null` was dropped.
    fn edits<'p>(&'p self, present: &Marks, dropped: &Marks, mut edit: impl FnMut(Edit<'p>)) {
        for (i, p) in self.props.iter().enumerate() {
            if dropped.get(i) {
                edit(Edit::Drop(&p.name));
            }
        }
        for (i, p) in self.props.iter().enumerate() {
            if let Some(default) = &p.default {
                if !present.get(i) || dropped.get(i) {
                    edit(Edit::Add(&p.name, default));
                }
            }
        }
    }

    /// The plan on the full path's `Value`.
    pub(crate) fn apply(&self, args: &mut Value) {
        if let Value::Object(map) = args {
            self.apply_map(map);
        }
    }

    fn apply_map(&self, map: &mut Map<String, Value>) {
        if self.props.is_empty() {
            return;
        }
        let mut present = Marks::default();
        let mut dropped = Marks::default();
        for (key, value) in map.iter_mut() {
            let kind = match value {
                Value::Null => Kind::Null,
                Value::Object(_) => Kind::Object,
                Value::Array(_) => Kind::Array,
                _ => Kind::Other,
            };
            let Some((i, step)) = self.step(key, kind) else {
                continue;
            };
            present.set(i);
            match (step, value) {
                (Step::Drop, _) => dropped.set(i),
                (Step::Object(plan), Value::Object(inner)) => plan.apply_map(inner),
                (Step::Items(plan), Value::Array(items)) => {
                    for item in items {
                        if let Value::Object(inner) = item {
                            plan.apply_map(inner);
                        }
                    }
                }
                _ => {}
            }
        }
        self.edits(&present, &dropped, |edit| match edit {
            Edit::Drop(name) => {
                map.remove(name);
            }
            Edit::Add(name, default) => {
                map.insert(name.to_owned(), default.clone());
            }
        });
    }

    /// The plan on the fast path's tree: a copy in `bump` only where something changed (the
    /// tree's slices are shared, never written in place).
    pub(crate) fn apply_tree<'a>(&'a self, args: &mut Tree<'a>, bump: &'a Bump) {
        if let Tree::Object(members) = args {
            if let Some(applied) = self.apply_members(members, bump) {
                *members = applied;
            }
        }
    }

    /// `members` with the plan applied, or `None` when nothing changed.
    fn apply_members<'a>(
        &'a self,
        members: &'a [(&'a str, Tree<'a>)],
        bump: &'a Bump,
    ) -> Option<&'a [(&'a str, Tree<'a>)]> {
        if self.props.is_empty() {
            return None;
        }
        let copy_of = |members: &[(&'a str, Tree<'a>)]| {
            let mut copy = MemberVec::with_capacity_in(members.len() + 2, bump);
            copy.extend(members.iter().cloned());
            copy
        };
        let mut present = Marks::default();
        let mut dropped = Marks::default();
        let mut copy: Option<MemberVec<'a>> = None;
        for (at, (key, value)) in members.iter().enumerate() {
            let kind = match value {
                Tree::Null => Kind::Null,
                Tree::Object(_) => Kind::Object,
                Tree::Array(_) => Kind::Array,
                _ => Kind::Other,
            };
            let Some((i, step)) = self.step(key, kind) else {
                continue;
            };
            present.set(i);
            let changed = match (step, value) {
                (Step::Drop, _) => {
                    dropped.set(i);
                    None
                }
                (Step::Object(plan), Tree::Object(inner)) => {
                    plan.apply_members(inner, bump).map(Tree::Object)
                }
                (Step::Items(plan), Tree::Array(items)) => {
                    plan.apply_items(items, bump).map(Tree::Array)
                }
                _ => None,
            };
            if let Some(changed) = changed {
                copy.get_or_insert_with(|| copy_of(members))[at].1 = changed;
            }
        }
        self.edits(&present, &dropped, |edit| {
            let copy = copy.get_or_insert_with(|| copy_of(members));
            match edit {
                Edit::Drop(name) => {
                    if let Some(at) = copy.iter().position(|(k, _)| *k == name) {
                        copy.swap_remove(at);
                    }
                }
                Edit::Add(name, default) => copy.push((name, Tree::from_value(default, bump))),
            }
        });
        copy.map(MemberVec::into_bump_slice)
    }

    /// An array's object items with the plan applied, or `None` when none changed.
    fn apply_items<'a>(&'a self, items: &'a [Tree<'a>], bump: &'a Bump) -> Option<&'a [Tree<'a>]> {
        let mut copy: Option<BumpVec<'a, Tree<'a>>> = None;
        for (at, item) in items.iter().enumerate() {
            if let Tree::Object(inner) = item {
                if let Some(applied) = self.apply_members(inner, bump) {
                    copy.get_or_insert_with(|| {
                        BumpVec::from_iter_in(items.iter().cloned(), bump)
                    })[at] = Tree::Object(applied);
                }
            }
        }
        copy.map(BumpVec::into_bump_slice)
    }
}

/// A call's validated arguments as a `Value` (nulls dropped, defaults applied).
///
/// The full path has the `Value` from the start. The fast path keeps the proposal text and
/// builds the `Value` on first use (receipts, approval subjects, idempotency keys and hashes,
/// `arguments()`), by the full path's own steps: parse, then the plan.
pub(crate) struct Arguments {
    value: OnceLock<Value>,
    source: Option<(Box<str>, ProposalLimits)>,
}

impl Arguments {
    pub(crate) fn ready(value: Value) -> Self {
        Arguments {
            value: OnceLock::from(value),
            source: None,
        }
    }

    pub(crate) fn deferred(raw: &str, limits: ProposalLimits) -> Self {
        Arguments {
            value: OnceLock::new(),
            source: Some((raw.into(), limits)),
        }
    }

    /// The arguments, built now if need be with `plan` (the entry's).
    pub(crate) fn get(&self, plan: &ArgsPlan) -> &Value {
        self.value.get_or_init(|| {
            let Some((raw, limits)) = &self.source else {
                return Value::Null;
            };
            // The fast path accepted this text, so the full parser does too. Were that ever
            // not so, the raw text stands in: unlike `null`, two different proposals can
            // never share it, so no hash, digest or derived key could confuse them.
            let mut args = Proposal::parse(raw, limits)
                .map_or_else(|_| Value::String(raw.to_string()), |p| p.arguments);
            plan.apply(&mut args);
            args
        })
    }

    /// Takes the arguments out (for the receipt), building them if need be.
    pub(crate) fn take(&mut self, plan: &ArgsPlan) -> Value {
        self.get(plan);
        self.value.take().unwrap_or(Value::Null)
    }
}

impl fmt::Debug for Arguments {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.value.get() {
            Some(v) => v.fmt(f),
            None => f.write_str("(not yet built)"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn plan_drops_disallowed_nulls_and_fills_defaults() {
        let schema = json!({
            "type": "object",
            "properties": {
                "a": {"type": "integer", "default": 8},
                "b": {"type": ["string", "null"]},
                "c": {"type": "object", "properties": {"d": {"type": "string"}}},
                "e": {"type": "array", "items": {"type": "object", "properties": {"f": {"type": "boolean"}}}}
            }
        });
        let plan = ArgsPlan::from_schema(&schema);
        let mut args = json!({"a": null, "b": null, "c": {"d": null}, "e": [{"f": null}, 3]});
        plan.apply(&mut args);
        assert_eq!(args, json!({"a": 8, "b": null, "c": {}, "e": [{}, 3]}));
    }
}
