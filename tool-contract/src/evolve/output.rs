//! Comparing the output contract's own fields (the size cap, an opened or closed output) and the
//! dependency versions a tool declares.

use serde_json::{Map, Value};

use super::fields::*;
use super::{push_pointer, show, Change, ChangeClass, ChangeKind};

/// The output size cap: lowered is major (outputs that passed are now withheld), raised minor.
pub(super) fn output_cap(a: Option<&Value>, b: Option<&Value>, out: &mut Vec<Change>) {
    let cap = |v: Option<&Value>| match v {
        None => Some(crate::contract::DEFAULT_MAX_OUTPUT_BYTES),
        Some(v) => v.as_u64(),
    };
    let (Some(x), Some(y)) = (cap(a), cap(b)) else {
        if !same_opt(a, b) {
            out.push(not_understood(
                "/max_output_bytes",
                "the output size cap is not a byte count",
            ));
        }
        return;
    };
    if x == y {
        return;
    }
    let (kind, class, what) = if y < x {
        (
            ChangeKind::OutputCapLowered,
            ChangeClass::Major,
            "outputs that were delivered may now be withheld as too large",
        )
    } else {
        (
            ChangeKind::OutputCapRaised,
            ChangeClass::Minor,
            "every output that was delivered still is; consumers may receive larger ones",
        )
    };
    out.push(Change::new(
        "/max_output_bytes",
        kind,
        class,
        format!("output size cap changed from {x} to {y} bytes: {what}"),
    ));
}

/// A model view declared or removed (a changed view is compared as an output schema):
/// declaring one is major, since the model loses what the view leaves out; removing one is a
/// security change, since the model now reads what the view withheld (personal data, internal
/// ids).
pub(super) fn model_view(a: Option<&Value>, b: Option<&Value>, out: &mut Vec<Change>) {
    let (kind, class, what) = match (a, b) {
        (None, Some(_)) => (
            ChangeKind::ModelViewAdded,
            ChangeClass::Major,
            "a model view was declared: the model now sees a view of the output, and prompts that read the fields it leaves out lose them",
        ),
        (Some(_), None) => (
            ChangeKind::ModelViewRemoved,
            ChangeClass::Security,
            "the model view was removed: the model now reads the whole output, including what the view withheld",
        ),
        _ => return,
    };
    out.push(Change::new("/model_view_schema", kind, class, what));
}

/// `open_output`: opening is major, since drift in the output is no longer caught and consumers
/// may receive properties nobody declared; closing is minor, since every output it lets through
/// is one consumers already expected, while outputs that passed may now be withheld.
pub(super) fn open_output(a: Option<&Value>, b: Option<&Value>, out: &mut Vec<Change>) {
    let (a, b) = (a.filter(|v| !v.is_null()), b.filter(|v| !v.is_null()));
    let (kind, class, what) = match (a, b) {
        (None, None) => return,
        (None, Some(why)) => (
            ChangeKind::OutputOpened,
            ChangeClass::Major,
            format!("the output schema was opened ({}): undeclared output properties are no longer refused", show(why)),
        ),
        (Some(_), None) => (
            ChangeKind::OutputClosed,
            ChangeClass::Minor,
            "the output schema was closed: an output with undeclared properties is now withheld".to_owned(),
        ),
        (Some(x), Some(y)) if x != y => (
            ChangeKind::AnnotationChanged,
            ChangeClass::Patch,
            "the reason the output schema is open was reworded".to_owned(),
        ),
        _ => return,
    };
    out.push(Change::new("/open_output", kind, class, what));
}

/// `depends_on`: a dependency added, removed or changed is major unless it was declared with
/// `on_change = "minor"` or `"patch"` (on either side: a declaration made with the change
/// counts, so a tool can relax it and move in one version).
pub(super) fn dependencies(a: Option<&Value>, b: Option<&Value>, out: &mut Vec<Change>) {
    let empty = Map::new();
    let (Some(o), Some(n)) = (
        a.map_or(Some(&empty), Value::as_object),
        b.map_or(Some(&empty), Value::as_object),
    ) else {
        if !same_opt(a, b) {
            out.push(not_understood(
                "/depends_on",
                "`depends_on` is not an object",
            ));
        }
        return;
    };
    // A dependency is `{"version": "...", "on_change": "..."}`; anything else is not understood.
    let class_of = |d: &Value| {
        let map = d.as_object()?;
        if !map.get("version").is_some_and(Value::is_string)
            || map.keys().any(|k| k != "version" && k != "on_change")
        {
            return None;
        }
        match map.get("on_change").map(Value::as_str) {
            None | Some(Some("major")) => Some(ChangeClass::Major),
            Some(Some("minor")) => Some(ChangeClass::Minor),
            Some(Some("patch")) => Some(ChangeClass::Patch),
            Some(_) => None,
        }
    };
    let version = |d: &Value| d.get("version").map_or_else(|| show(d), show);
    let mut names: Vec<&String> = o.keys().collect();
    names.extend(n.keys().filter(|k| !o.contains_key(*k)));
    for name in names {
        let ptr = push_pointer("/depends_on", name);
        let (kind, declared, what) = match (o.get(name), n.get(name)) {
            (None, Some(d)) => (
                ChangeKind::DependencyAdded,
                class_of(d),
                format!("dependency `{name}` {} added", version(d)),
            ),
            (Some(d), None) => (
                ChangeKind::DependencyRemoved,
                class_of(d),
                format!("dependency `{name}` {} removed", version(d)),
            ),
            (Some(x), Some(y)) if x.get("version") != y.get("version") => (
                ChangeKind::DependencyChanged,
                // The smaller of the two declarations: relaxing and moving in one step counts.
                class_of(x).zip(class_of(y)).map(|(p, q)| p.min(q)),
                format!(
                    "dependency `{name}` changed from {} to {}",
                    version(x),
                    version(y)
                ),
            ),
            (Some(x), Some(y)) if x != y => (
                ChangeKind::DependencyChanged,
                class_of(x).and(class_of(y)).map(|_| ChangeClass::Patch),
                format!("how a change of dependency `{name}` is classed was redeclared"),
            ),
            _ => continue,
        };
        let Some(class) = declared else {
            out.push(not_understood(
                &ptr,
                &format!("dependency `{name}` is not a `version` with an optional `on_change` this classifier knows"),
            ));
            continue;
        };
        let why = match class {
            ChangeClass::Patch => "declared `on_change = \"patch\"`: invisible to callers",
            ChangeClass::Minor => "declared `on_change = \"minor\"`: compatible",
            _ => "results may mean something else (declare `on_change` to relax this)",
        };
        out.push(Change::new(ptr, kind, class, format!("{what}: {why}")));
    }
}
