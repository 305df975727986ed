//! The contract lock: the checked-in lock of the examples, and what a change does to it.

use std::path::PathBuf;

use tool_contract::lock::{check_contracts, Finding, Lock, LockError, Mode};
use tool_contract::{Registry, ToolContract};

use crate::contract;

/// The examples crate's six tools, as the `export` and `demo` binaries register them.
fn examples_registry() -> Registry {
    Registry::builder()
        .toolset(tool_contract_examples::toolset())
        .build()
        .unwrap()
}

/// The checked-in `examples/tools.lock.json` matches the examples' tools: a contract change
/// without a version bump fails here. `TOOL_CONTRACT_LOCK=overwrite` rewrites it.
#[test]
fn the_examples_lock_matches_their_tools() {
    tool_contract::assert_locked!(&examples_registry(), "../examples/tools.lock.json");
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/tools.lock.json");
    let lock = Lock::read(&path).unwrap();
    assert_eq!(lock.tools.len(), 6);
    let names: Vec<&str> = lock.tools.iter().map(|t| t.name.as_str()).collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted, "entries are sorted by name");
}

/// A fresh lock file of the example search tool in the temp dir.
struct TempLock(PathBuf);

impl TempLock {
    fn new(test: &str, contracts: &[&ToolContract]) -> TempLock {
        let path = std::env::temp_dir().join(format!("tc-lock-{}-{test}.json", std::process::id()));
        check_contracts(contracts.iter().copied(), &path, Mode::Overwrite).unwrap();
        TempLock(path)
    }
}

impl Drop for TempLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn mismatch(result: Result<tool_contract::lock::LockReport, LockError>) -> (Vec<Finding>, String) {
    match result {
        Err(LockError::Mismatch(report)) => (report.findings.clone(), report.to_string()),
        other => panic!("expected a mismatch, got {other:?}"),
    }
}

#[test]
fn an_unchanged_registry_passes() {
    let c = contract("search_documents");
    let lock = TempLock::new("unchanged", &[c]);
    let report = check_contracts([c], &lock.0, Mode::Check).unwrap();
    assert!(report.findings.is_empty() && !report.rewritten);
}

#[test]
fn a_changed_timeout_with_the_same_version_fails_naming_timeout_ms() {
    let lock = TempLock::new("timeout", &[contract("search_documents")]);
    let mut changed = contract("search_documents").clone();
    changed.timeout_ms = 800;
    let (findings, text) = mismatch(check_contracts([&changed], &lock.0, Mode::Check));
    assert_eq!(
        findings,
        [Finding::Changed {
            tool: "search_documents".into(),
            version: "2.1.0".into(),
            parts: vec!["timeout_ms".into()],
        }]
    );
    assert!(
        text.contains("`search_documents` 2.1.0: timeout_ms changed but the version did not; bump the version"),
        "{text}"
    );
}

#[test]
fn each_locked_part_is_named_when_it_changes() {
    let lock = TempLock::new("parts", &[contract("search_documents")]);
    let mut changed = contract("search_documents").clone();
    changed.input_schema["properties"]["top_k"]["maximum"] = 50.into();
    changed.approval = tool_contract::contract::ApprovalPolicy::Always;
    changed.policy_version = Some("tool-policy-13".into());
    let (findings, _) = mismatch(check_contracts([&changed], &lock.0, Mode::Check));
    let Finding::Changed { parts, .. } = &findings[0] else {
        panic!("{findings:?}")
    };
    assert_eq!(parts, &["input_schema", "approval", "policy_version"]);
}

#[test]
fn a_bumped_version_passes_and_says_to_record_it() {
    let lock = TempLock::new("bump", &[contract("search_documents")]);
    let mut bumped = contract("search_documents").clone();
    bumped.timeout_ms = 800;
    bumped.version = "2.2.0".into();
    let report = check_contracts([&bumped], &lock.0, Mode::Check).unwrap();
    assert_eq!(
        report.findings,
        [Finding::Bumped {
            tool: "search_documents".into(),
            from: "2.1.0".into(),
            to: "2.2.0".into(),
            parts: vec!["timeout_ms".into()],
        }]
    );
    assert!(report
        .to_string()
        .contains("run with TOOL_CONTRACT_LOCK=overwrite to record it"));
    // A lower version is no bump.
    bumped.version = "2.0.9".into();
    let (_, text) = mismatch(check_contracts([&bumped], &lock.0, Mode::Check));
    assert!(text.contains("not newer than the locked 2.1.0"), "{text}");
}

#[test]
fn new_and_removed_tools_fail_until_the_lock_is_rewritten() {
    let lock = TempLock::new("new", &[contract("search_documents")]);
    let (findings, text) = mismatch(check_contracts(
        [contract("send_email")],
        &lock.0,
        Mode::Check,
    ));
    assert_eq!(findings.len(), 2, "{findings:?}");
    assert!(
        text.contains("`send_email` 1.2.0: not in the lock; run with TOOL_CONTRACT_LOCK=overwrite"),
        "{text}"
    );
    assert!(
        text.contains("`search_documents` 2.1.0: in the lock but no longer in the registry"),
        "{text}"
    );

    // Overwrite records the registry as it is, and the check then passes.
    let report = check_contracts([contract("send_email")], &lock.0, Mode::Overwrite).unwrap();
    assert!(report.rewritten);
    assert_eq!(
        Lock::read(&lock.0).unwrap(),
        Lock::from_contracts([contract("send_email")])
    );
    check_contracts([contract("send_email")], &lock.0, Mode::Check).unwrap();
}

#[test]
fn a_missing_or_broken_lock_says_how_to_create_it() {
    let path = std::env::temp_dir().join(format!("tc-lock-{}-missing.json", std::process::id()));
    let err = check_contracts([contract("send_email")], &path, Mode::Check).unwrap_err();
    assert!(
        err.to_string()
            .contains("run with TOOL_CONTRACT_LOCK=overwrite to create it"),
        "{err}"
    );
    std::fs::write(&path, "{\"tools\": 3}").unwrap();
    let err = check_contracts([contract("send_email")], &path, Mode::Check).unwrap_err();
    assert!(matches!(err, LockError::Parse { .. }), "{err}");
    std::fs::remove_file(&path).unwrap();
}

/// The git revision changes with every commit: it is not locked.
#[test]
fn the_implementation_id_is_not_locked() {
    let lock = TempLock::new("implementation", &[contract("send_email")]);
    let mut c = contract("send_email").clone();
    c.fingerprint.implementation = "tool-contract-examples@0.1.0+git.0123abc".into();
    check_contracts([&c], &lock.0, Mode::Check).unwrap();
}
