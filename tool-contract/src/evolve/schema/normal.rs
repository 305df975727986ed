//! Bringing a schema to one form before it is compared: `$ref` followed, `null` taken out as
//! "nullable", one-branch unions unwrapped, value sets gathered, branches keyed by their tag.

use super::*;

impl<'a> Cx<'a, '_> {
    /// The keywords of `node`, following `$ref` (the node's own keywords win).
    pub(super) fn view(&self, node: Node<'a>, side: Side, depth: usize) -> View<'a> {
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

    pub(super) fn normalize(
        &self,
        site: Node<'a>,
        mut view: View<'a>,
        side: Side,
        depth: usize,
    ) -> Norm<'a> {
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

    /// A plain schema as a union of one branch.
    pub(super) fn single(&self, site: &Node<'a>, side: Side, keyword: &'a str) -> Union<'a> {
        let view = self.view(site.clone(), side, 0);
        Union {
            keyword,
            ptr: site.ptr.clone(),
            branches: keyed_branches(vec![(site.clone(), view)]),
        }
    }
}

/// The schema at `reference` in `root`, with its pointer in the contract.
pub(super) fn resolve<'a>(root: &'a Value, base: &str, reference: &str) -> Option<Node<'a>> {
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
pub(super) fn is_null_branch(view: &View<'_>) -> bool {
    let mut constraining = view.kws.iter().filter(|(k, _)| !ANNOTATIONS.contains(k));
    matches!(constraining.next(), Some(("type", n)) if n.value == "null")
        && constraining.next().is_none()
}

/// The values of a branch that is `const` or `enum` (with `type` and annotations only).
pub(super) fn value_branch<'a>(view: &View<'a>) -> Option<Vec<&'a Value>> {
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
pub(super) fn keyed_branches<'a>(branches: Vec<(Node<'a>, View<'a>)>) -> Vec<Branch<'a>> {
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

pub(super) fn branch_tag(view: &View<'_>) -> Option<(String, String)> {
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

pub(super) fn empty_union<'a>(like: &Union<'a>) -> Union<'a> {
    Union {
        keyword: like.keyword,
        ptr: like.ptr.clone(),
        branches: Vec::new(),
    }
}

/// The types a schema accepts: its `type`, or else the types of its values.
pub(super) fn implied_types(n: &Norm<'_>) -> Option<(Vec<String>, String)> {
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
pub(super) fn covers(types: &[String], t: &str) -> bool {
    types
        .iter()
        .any(|x| x == t || (x == "number" && t == "integer"))
}
