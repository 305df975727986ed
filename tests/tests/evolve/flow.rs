//! Flow declarations (`flow` in a contract): loosening is a security change, tightening is
//! major, an allowlist on a field that accepts anything is a patch, and a change of effect is
//! reported once, by the effect rule.

use serde_json::{json, Value};
use tool_contract::evolve::{classify, ChangeClass, ChangeKind};

use crate::example;

use ChangeClass::{Major, Patch, Security};
use ChangeKind::*;

/// `base` and `base` edited by `f` (the version bump itself is no change).
fn pair(base: &str, f: impl FnOnce(&mut Value)) -> (Value, Value) {
    let old = example(base);
    let mut new = old.clone();
    new["version"] = json!("9.0.0");
    f(&mut new);
    (old, new)
}

fn field(c: &mut Value, name: &str, decl: Value) {
    if c.get("flow").is_none() {
        c["flow"] = json!({});
    }
    if c["flow"].get("fields").is_none() {
        c["flow"]["fields"] = json!({});
    }
    c["flow"]["fields"][name] = decl;
}

fn kinds(pair: &(Value, Value)) -> Vec<(ChangeKind, ChangeClass, String)> {
    let mut got: Vec<_> = classify(&pair.0, &pair.1)
        .into_iter()
        .map(|c| (c.kind, c.class, c.pointer))
        .collect();
    got.sort();
    got
}

fn only(pair: (Value, Value), kind: ChangeKind, class: ChangeClass, pointer: &str) {
    let got = kinds(&pair);
    assert_eq!(
        got,
        vec![(kind, class, pointer.to_owned())],
        "{}",
        serde_json::to_string(&pair.1["flow"]).unwrap()
    );
}

#[test]
fn accepting_untrusted_text_in_a_write_is_a_security_change() {
    let p = pair("send_email", |c| {
        field(
            c,
            "body",
            json!({"policy": {"kind": "accepts_untrusted", "reason": "quotes"}}),
        )
    });
    only(p, FlowLoosened, Security, "/flow/fields/body");
}

#[test]
fn trusted_only_on_a_write_field_is_major() {
    let p = pair("send_email", |c| {
        field(c, "to", json!({"policy": {"kind": "trusted_only"}}))
    });
    only(p, FlowTightened, Major, "/flow/fields/to");
}

#[test]
fn marking_a_write_field_as_a_url_is_major() {
    let p = pair("send_email", |c| {
        field(c, "body", json!({"url_or_command": true}))
    });
    only(p, FlowTightened, Major, "/flow/fields/body");
}

#[test]
fn an_allowlist_on_a_write_field_loosens_it_and_dropping_it_tightens_it() {
    let allow = json!({"flows_from": ["read_document_span:/source_id"]});
    let p = pair("send_email", |c| field(c, "to", allow.clone()));
    only(
        p.clone(),
        FlowLoosened,
        Security,
        "/flow/fields/to/flows_from",
    );
    // The same pair the other way round.
    let back = (
        {
            let mut c = p.1.clone();
            c["version"] = json!("1.2.0");
            c
        },
        {
            let mut c = p.0.clone();
            c["version"] = json!("9.0.0");
            c
        },
    );
    only(back, FlowTightened, Major, "/flow/fields/to/flows_from");
}

#[test]
fn an_allowlist_on_a_pure_read_field_is_documentation() {
    let p = pair("search_documents", |c| {
        field(
            c,
            "query",
            json!({"flows_from": ["read_document_span:/text"]}),
        )
    });
    only(p, FlowDocumented, Patch, "/flow/fields/query/flows_from");
}

#[test]
fn trusted_only_on_a_pure_read_field_is_major() {
    let p = pair("search_documents", |c| {
        field(c, "query", json!({"policy": {"kind": "trusted_only"}}))
    });
    only(p, FlowTightened, Major, "/flow/fields/query");
}

#[test]
fn confidential_outputs_added_are_major_and_removed_are_security() {
    let p = pair("search_documents", |c| {
        c["flow"] = json!({"confidential": ["/items/*/text"]});
    });
    only(p.clone(), FlowTightened, Major, "/flow/confidential");
    let back = (p.1.clone(), {
        let mut c = p.0.clone();
        c["version"] = json!("10.0.0");
        c
    });
    only(back, FlowLoosened, Security, "/flow/confidential");
}

#[test]
fn a_new_write_field_that_accepts_untrusted_text_is_a_security_change() {
    let p = pair("send_email", |c| {
        c["input_schema"]["properties"]["note"] = json!({"type": "string", "maxLength": 100});
        field(
            c,
            "note",
            json!({"policy": {"kind": "accepts_untrusted", "reason": "quotes"}}),
        )
    });
    let got = kinds(&p);
    assert!(
        got.contains(&(FlowLoosened, Security, "/flow/fields/note".to_owned())),
        "{got:?}"
    );
}

#[test]
fn a_removed_field_takes_its_declaration_with_it() {
    let mut old = example("send_email");
    field(
        &mut old,
        "body",
        json!({"policy": {"kind": "trusted_only"}}),
    );
    let mut new = old.clone();
    new["version"] = json!("9.0.0");
    new["input_schema"]["properties"]
        .as_object_mut()
        .unwrap()
        .remove("body");
    new["flow"]["fields"]
        .as_object_mut()
        .unwrap()
        .remove("body");
    let got = kinds(&(old, new));
    assert!(
        got.iter()
            .all(|(k, _, _)| !matches!(k, FlowLoosened | FlowTightened)),
        "the schema reports the removal, flow does not: {got:?}"
    );
}

#[test]
fn an_effect_change_is_reported_once_not_per_field() {
    let p = pair("search_documents", |c| {
        c["effect"] = json!("reversible_write");
    });
    let got = kinds(&p);
    assert!(got.iter().any(|(k, _, _)| *k == EffectEscalated), "{got:?}");
    assert!(
        got.iter()
            .all(|(k, _, _)| !matches!(k, FlowLoosened | FlowTightened)),
        "{got:?}"
    );
}

#[test]
fn the_examples_flow_declarations_compare_equal_to_themselves() {
    for name in ["read_document_span", "get_policy_revision", "send_email"] {
        let c = example(name);
        assert!(classify(&c, &c).is_empty(), "{name}");
    }
}
