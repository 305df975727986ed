//! Flow declarations compared (the contract's `flow` field): whether untrusted or
//! confidential output may now steer a field it could not steer before (**major, security**),
//! or may no longer steer one it could (**major**: calls that passed may now be refused or
//! held for approval).
//!
//! Each field's effective rule is worked out on each side exactly as the registry does when it
//! builds the tool's flow plan: the declared policy, a URL or command marking (or a
//! `format: uri` string) outside pure reads, and otherwise the default for the tool's effect.
//! An allowlist (`flows_from`) decides nothing for a field that accepts any value, so its
//! changes there are patches.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::{Change, ChangeClass, ChangeKind};
use crate::Effect;

/// What a field accepts, loosest first: the order is what the comparison relies on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Mode {
    Anything,
    AcceptsUntrusted,
    RefuseUntrusted,
    TrustedOnly,
}

impl Mode {
    fn describe(self) -> &'static str {
        match self {
            Mode::Anything => "accepts any value",
            Mode::AcceptsUntrusted => "accepts untrusted but not confidential values",
            Mode::RefuseUntrusted => "refuses values traced only to untrusted output",
            Mode::TrustedOnly => "takes only trusted values",
        }
    }
}

/// One side of the comparison: a whole contract.
struct Side<'a> {
    effect: Option<Effect>,
    props: Option<&'a Map<String, Value>>,
    fields: Option<&'a Map<String, Value>>,
    confidential: BTreeSet<String>,
}

impl<'a> Side<'a> {
    fn of(contract: &'a Map<String, Value>) -> Self {
        let flow = contract.get("flow");
        Side {
            effect: contract
                .get("effect")
                .and_then(|e| serde_json::from_value(e.clone()).ok()),
            props: contract
                .get("input_schema")
                .and_then(|s| s.get("properties"))
                .and_then(Value::as_object),
            fields: flow
                .and_then(|f| f.get("fields"))
                .and_then(Value::as_object),
            confidential: flow
                .and_then(|f| f.get("confidential"))
                .map(string_set)
                .unwrap_or_default(),
        }
    }

    fn field(&self, name: &str) -> Option<&'a Value> {
        self.fields.and_then(|f| f.get(name))
    }

    /// The field's mode, as the registry's flow plan computes it for a tool of `effect`.
    fn mode(&self, name: &str, effect: Option<Effect>) -> Mode {
        let declared = self.field(name);
        let policy = declared
            .and_then(|d| d.get("policy"))
            .and_then(|p| p.get("kind"))
            .and_then(Value::as_str);
        let marked = declared
            .and_then(|d| d.get("url_or_command"))
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let uri = self.props.and_then(|p| p.get(name)).is_some_and(is_uri);
        match policy {
            Some("trusted_only") => Mode::TrustedOnly,
            Some("accepts_untrusted") => Mode::AcceptsUntrusted,
            _ if (marked || uri) && effect != Some(Effect::PureRead) => Mode::TrustedOnly,
            _ => default_mode(effect),
        }
    }

    /// Whether the input schema has this property (a contract without properties has them
    /// all, so its declarations are still compared).
    fn has(&self, name: &str) -> bool {
        self.props.is_none_or(|p| p.contains_key(name))
    }

    fn allowlist(&self, name: &str) -> BTreeSet<String> {
        self.field(name)
            .and_then(|d| d.get("flows_from"))
            .map(string_set)
            .unwrap_or_default()
    }

    /// Every field this side's rules can depend on.
    fn names(&self) -> BTreeSet<&'a str> {
        let mut names: BTreeSet<&str> = BTreeSet::new();
        names.extend(self.props.into_iter().flatten().map(|(k, _)| k.as_str()));
        names.extend(self.fields.into_iter().flatten().map(|(k, _)| k.as_str()));
        names
    }
}

/// What a field that declares nothing accepts in a tool of `effect`.
fn default_mode(effect: Option<Effect>) -> Mode {
    if effect.is_some_and(|e| e.is_write() || e == Effect::ExternalRead) {
        Mode::RefuseUntrusted
    } else {
        Mode::Anything
    }
}

fn string_set(v: &Value) -> BTreeSet<String> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect()
}

/// The same test the registry applies to a field's schema (or its items').
fn is_uri(schema: &Value) -> bool {
    let uri = |s: &Value| {
        matches!(
            s.get("format").and_then(Value::as_str),
            Some("uri" | "uri-reference" | "iri" | "iri-reference" | "uri-template")
        )
    };
    uri(schema) || schema.get("items").is_some_and(uri)
}

fn quoted(items: &BTreeSet<&String>) -> String {
    items
        .iter()
        .map(|s| format!("`{s}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Compares the flow rules of two whole contracts of one tool.
///
/// Both sides are judged under the new contract's effect: a change of effect (which moves
/// every field's default) is the effect rule's to report, not once more per field here. A
/// field the new input no longer has is the schema's to report; a field it newly has is
/// compared with what the effect's default would give it.
pub(super) fn compare(old: &Map<String, Value>, new: &Map<String, Value>, out: &mut Vec<Change>) {
    let (a, b) = (Side::of(old), Side::of(new));
    let effect = b.effect.or(a.effect);
    let mut names = a.names();
    names.extend(b.names());
    for name in names {
        if !b.has(name) {
            continue;
        }
        let ptr = super::push_pointer("/flow/fields", name);
        let (ma, la) = if a.has(name) {
            (a.mode(name, effect), a.allowlist(name))
        } else {
            (default_mode(effect), BTreeSet::new())
        };
        let mb = b.mode(name, effect);
        if mb < ma {
            out.push(Change::new(
                ptr.clone(),
                ChangeKind::FlowLoosened,
                ChangeClass::Security,
                format!(
                    "field `{name}` {} where it {}: output the model read can now steer it",
                    mb.describe(),
                    ma.describe()
                ),
            ));
        } else if mb > ma {
            out.push(Change::new(
                ptr.clone(),
                ChangeKind::FlowTightened,
                ChangeClass::Major,
                format!(
                    "field `{name}` {} where it {}: calls that passed may now be refused or held",
                    mb.describe(),
                    ma.describe()
                ),
            ));
        }
        let lb = b.allowlist(name);
        let added: BTreeSet<&String> = lb.difference(&la).collect();
        let removed: BTreeSet<&String> = la.difference(&lb).collect();
        let ptr = format!("{ptr}/flows_from");
        if !added.is_empty() {
            let (kind, class, why) = if ma == Mode::Anything || mb == Mode::Anything {
                (
                    ChangeKind::FlowDocumented,
                    ChangeClass::Patch,
                    "the field accepts any value, so the allowlist decides nothing",
                )
            } else {
                (
                    ChangeKind::FlowLoosened,
                    ChangeClass::Security,
                    "values from these outputs can now steer it",
                )
            };
            out.push(Change::new(
                ptr.clone(),
                kind,
                class,
                format!("field `{name}` allowlists {}: {why}", quoted(&added)),
            ));
        }
        if !removed.is_empty() {
            let (kind, class, why) = if ma == Mode::Anything || mb == Mode::Anything {
                (
                    ChangeKind::FlowDocumented,
                    ChangeClass::Patch,
                    "the field accepts any value, so the allowlist decided nothing",
                )
            } else {
                (
                    ChangeKind::FlowTightened,
                    ChangeClass::Major,
                    "calls that copy values from these outputs may now be refused or held",
                )
            };
            out.push(Change::new(
                ptr,
                kind,
                class,
                format!(
                    "field `{name}` no longer allowlists {}: {why}",
                    quoted(&removed)
                ),
            ));
        }
    }
    let added: BTreeSet<&String> = b.confidential.difference(&a.confidential).collect();
    let removed: BTreeSet<&String> = a.confidential.difference(&b.confidential).collect();
    if !added.is_empty() {
        out.push(Change::new(
            "/flow/confidential",
            ChangeKind::FlowTightened,
            ChangeClass::Major,
            format!(
                "output {} now confidential: calls that copy these values into writes or external reads may now be refused",
                quoted(&added)
            ),
        ));
    }
    if !removed.is_empty() {
        out.push(Change::new(
            "/flow/confidential",
            ChangeKind::FlowLoosened,
            ChangeClass::Security,
            format!(
                "output {} no longer confidential: these values may now leave the host",
                quoted(&removed)
            ),
        ));
    }
}
