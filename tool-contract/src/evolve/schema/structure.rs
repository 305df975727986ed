//! Comparing the parts of a schema that hold other schemas: union branches, array items,
//! object properties, `additionalProperties` and `unevaluatedProperties`.

use super::*;

impl<'a> Cx<'a, '_> {
    pub(super) fn compare_unions(
        &mut self,
        a: &Union<'a>,
        b: &Union<'a>,
        depth: usize,
        skip_null: bool,
    ) {
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

    pub(super) fn compare_branch(
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

    pub(super) fn compare_items(
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
    pub(super) fn compare_lists(
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

    pub(super) fn compare_objects(&mut self, o: &Norm<'a>, n: &Norm<'a>, depth: usize) {
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

    pub(super) fn compare_additional(&mut self, o: &Norm<'a>, n: &Norm<'a>, depth: usize) {
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
    pub(super) fn compare_unevaluated(
        &mut self,
        a: Option<&Node<'a>>,
        b: Option<&Node<'a>>,
        here: &str,
    ) {
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
    pub(super) fn shape_of(&self, value: &'a Value, ptr: &str, side: Side) -> Value {
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
pub(super) enum Extra<'a> {
    Open,
    Closed,
    Schema(Node<'a>),
    Unknown,
}

pub(super) fn extra<'a>(node: Option<&Node<'a>>) -> Extra<'a> {
    match node.map(|n| n.value) {
        None | Some(Value::Bool(true)) => Extra::Open,
        Some(Value::Object(map)) if map.is_empty() => Extra::Open,
        Some(Value::Bool(false)) => Extra::Closed,
        Some(Value::Object(_)) => Extra::Schema(node.cloned().unwrap_or_else(|| unreachable!())),
        Some(_) => Extra::Unknown,
    }
}

pub(super) fn closed(node: Option<&Node<'_>>) -> bool {
    matches!(extra(node), Extra::Closed)
}

/// `properties` as `(name, schema)` pairs in written order; `None` when it is not an object.
pub(super) fn properties<'a>(view: &View<'a>) -> Option<Vec<(&'a str, &'a Value)>> {
    match view.get("properties").map(|n| n.value) {
        None => Some(Vec::new()),
        Some(Value::Object(map)) => Some(map.iter().map(|(k, v)| (k.as_str(), v)).collect()),
        Some(_) => None,
    }
}

/// `required` as names; `None` when it is not an array of strings.
pub(super) fn required<'a>(view: &View<'a>) -> Option<Vec<&'a str>> {
    match view.get("required").map(|n| n.value) {
        None => Some(Vec::new()),
        Some(Value::Array(items)) => items.iter().map(Value::as_str).collect(),
        Some(_) => None,
    }
}
