//! The contract lock: the checked-in lock of the examples, and what a change does to it.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use tool_contract::evolve::{Bump, ChangeClass, ChangeKind};
use tool_contract::lock::{check_contracts, Finding, Lock, LockError, LockReport, Mode, FORMAT};
use tool_contract::{Registry, ToolContract};

use crate::contract;

/// The examples crate's six tools, as the `export` and `demo` binaries register them.
fn examples_registry() -> Registry {
    Registry::builder()
        .toolset(tool_contract_examples::toolset())
        .build()
        .unwrap()
}

fn examples_lock_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/tools.lock.json")
}

/// The checked-in `examples/tools.lock.json` matches the examples' tools: a contract change
/// without a big enough version bump fails here. `TOOL_CONTRACT_LOCK=overwrite` rewrites it.
#[test]
fn the_examples_lock_matches_their_tools() {
    tool_contract::assert_locked!(&examples_registry(), "../examples/tools.lock.json");
    let lock = Lock::read(&examples_lock_path()).unwrap();
    assert_eq!(
        lock.format, FORMAT,
        "the examples' lock keeps whole contracts"
    );
    assert_eq!(lock.tools.len(), 6);
    let names: Vec<&str> = lock.tools.iter().map(|t| t.name.as_str()).collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted, "entries are sorted by name");
    for entry in &lock.tools {
        let kept = entry
            .contract
            .as_ref()
            .expect("a format-2 entry keeps its contract");
        let now = examples_registry()
            .contracts()
            .into_iter()
            .find(|c| c.name == entry.name)
            .map(|c| serde_json::to_value(c).unwrap())
            .unwrap();
        assert_eq!(kept["input_schema"], now["input_schema"], "{}", entry.name);
        assert!(
            kept.get("fingerprint").is_none(),
            "the implementation id is not kept"
        );
    }
}

/// A lock file in the temp dir, removed on drop.
struct TempLock(PathBuf);

impl TempLock {
    fn new(test: &str, contracts: &[&ToolContract]) -> TempLock {
        let path = std::env::temp_dir().join(format!("tc-lock-{}-{test}.json", std::process::id()));
        check_contracts(contracts.iter().copied(), &path, Mode::Overwrite).unwrap();
        TempLock(path)
    }

    fn json(&self) -> Value {
        serde_json::from_str(&std::fs::read_to_string(&self.0).unwrap()).unwrap()
    }

    fn set_json(&self, value: &Value) {
        std::fs::write(&self.0, serde_json::to_string_pretty(value).unwrap()).unwrap();
    }
}

impl Drop for TempLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn mismatch(result: Result<LockReport, LockError>) -> (Vec<Finding>, String) {
    match result {
        Err(LockError::Mismatch(report)) => (report.findings.clone(), report.to_string()),
        other => panic!("expected a mismatch, got {other:?}"),
    }
}

fn check(contracts: &[&ToolContract], path: &Path) -> Result<LockReport, LockError> {
    check_contracts(contracts.iter().copied(), path, Mode::Check)
}

fn with_version(c: &ToolContract, version: &str) -> ToolContract {
    let mut c = c.clone();
    c.version = version.into();
    c
}

/// `(kind, class)` of each change a finding carries.
fn kinds(finding: &Finding) -> Vec<(ChangeKind, ChangeClass)> {
    finding
        .changes()
        .iter()
        .map(|c| (c.kind, c.class))
        .collect()
}

#[test]
fn an_unchanged_registry_passes() {
    let c = contract("search_documents");
    let lock = TempLock::new("unchanged", &[c]);
    let report = check(&[c], &lock.0).unwrap();
    assert!(report.findings.is_empty() && !report.rewritten);
}

#[test]
fn a_changed_timeout_with_the_same_version_fails_with_its_class_and_the_smallest_passing_version() {
    let lock = TempLock::new("timeout", &[contract("search_documents")]);
    let mut changed = contract("search_documents").clone();
    changed.timeout_ms = 800;
    let (findings, text) = mismatch(check(&[&changed], &lock.0));
    let [Finding::Changed {
        tool,
        version,
        required,
        smallest,
        ..
    }] = &findings[..]
    else {
        panic!("{findings:?}")
    };
    assert_eq!(
        (tool.as_str(), version.as_str()),
        ("search_documents", "2.1.0")
    );
    assert_eq!(
        (*required, smallest.as_deref()),
        (Bump::Minor, Some("2.2.0"))
    );
    assert_eq!(
        kinds(&findings[0]),
        [(ChangeKind::TimeoutRaised, ChangeClass::Minor)]
    );
    assert!(
        text.contains("`search_documents` 2.1.0: the contract changed but the version did not: the changes need a minor bump (smallest passing version: 2.2.0); bump the version, then rerun with TOOL_CONTRACT_LOCK=overwrite"),
        "{text}"
    );
    assert!(
        text.contains("- minor /timeout_ms [timeout_raised]: timeout raised from 500 ms to 800 ms"),
        "{text}"
    );
}

#[test]
fn each_change_is_named_with_its_class() {
    let lock = TempLock::new("parts", &[contract("search_documents")]);
    let mut changed = contract("search_documents").clone();
    changed.input_schema["properties"]["top_k"]["maximum"] = 50.into();
    changed.approval = tool_contract::contract::ApprovalPolicy::Always;
    changed.policy_version = Some("tool-policy-13".into());
    let (findings, _) = mismatch(check(&[&changed], &lock.0));
    assert_eq!(
        kinds(&findings[0]),
        [
            (ChangeKind::BoundWidened, ChangeClass::Minor),
            (ChangeKind::ApprovalStrengthened, ChangeClass::Major),
            (ChangeKind::PolicyVersionChanged, ChangeClass::Major),
        ]
    );
    let pointers: Vec<&str> = findings[0]
        .changes()
        .iter()
        .map(|c| c.pointer.as_str())
        .collect();
    assert_eq!(
        pointers,
        [
            "/input_schema/properties/top_k/maximum",
            "/approval",
            "/policy_version"
        ]
    );
}

#[test]
fn a_big_enough_bump_passes_and_says_to_record_it() {
    let lock = TempLock::new("bump", &[contract("search_documents")]);
    let mut bumped = with_version(contract("search_documents"), "2.2.0");
    bumped.timeout_ms = 800;
    let report = check(&[&bumped], &lock.0).unwrap();
    let [Finding::Bumped { from, to, .. }] = &report.findings[..] else {
        panic!("{:?}", report.findings)
    };
    assert_eq!((from.as_str(), to.as_str()), ("2.1.0", "2.2.0"));
    assert!(report
        .to_string()
        .contains("`search_documents` 2.1.0 -> 2.2.0: the bump covers 1 change; run with TOOL_CONTRACT_LOCK=overwrite to record it"));
    // A bigger bump than needed passes too.
    bumped.version = "3.0.0".into();
    check(&[&bumped], &lock.0).unwrap();
    // A lower version is no bump.
    bumped.version = "2.0.9".into();
    let (_, text) = mismatch(check(&[&bumped], &lock.0));
    assert!(text.contains("not newer than the locked 2.1.0"), "{text}");
}

#[test]
fn a_bump_smaller_than_the_changes_fails_naming_each_change_and_the_smallest_passing_version() {
    let lock = TempLock::new("too-small", &[contract("search_documents")]);
    let mut bumped = with_version(contract("search_documents"), "2.1.1");
    bumped.input_schema["properties"]["lang"] = json!({"type": "string"});
    bumped.input_schema["required"] = json!(["query", "lang"]);
    bumped.description.push_str(" Mind the language.");
    let (findings, text) = mismatch(check(&[&bumped], &lock.0));
    let [Finding::BumpTooSmall {
        required,
        made,
        smallest,
        ..
    }] = &findings[..]
    else {
        panic!("{findings:?}")
    };
    assert_eq!(
        (*required, *made, smallest.as_deref()),
        (Bump::Major, Some(Bump::Patch), Some("3.0.0"))
    );
    assert_eq!(
        kinds(&findings[0]),
        [
            (ChangeKind::DescriptionChanged, ChangeClass::Patch),
            (ChangeKind::PropertyAdded, ChangeClass::Major),
        ]
    );
    assert!(text.contains("`search_documents` 2.1.0 -> 2.1.1: a patch bump is too small: the changes need a major bump (smallest passing version: 3.0.0)"), "{text}");
    assert!(text.contains("- major /input_schema/properties/lang [property_added]: required property `lang` added: old calls may now be refused"), "{text}");
    assert!(
        text.contains("- patch /description [description_changed]"),
        "{text}"
    );

    // The same change as an optional property needs only a minor bump.
    bumped.input_schema["required"] = json!(["query"]);
    let (findings, _) = mismatch(check(&[&bumped], &lock.0));
    assert!(
        matches!(&findings[..], [Finding::BumpTooSmall { required: Bump::Minor, smallest: Some(v), .. }] if v == "2.2.0"),
        "{findings:?}"
    );
    bumped.version = "2.2.0".into();
    check(&[&bumped], &lock.0).unwrap();
}

/// Security changes pass only with a major bump and a reviewer's note: the rewrite opens an
/// empty note, the check fails until it is written, and later rewrites keep it.
#[test]
fn security_changes_need_a_major_bump_and_a_reviewers_note() {
    let lock = TempLock::new("security", &[contract("send_email")]);
    let mut risky = with_version(contract("send_email"), "1.3.0");
    risky.approval = tool_contract::contract::ApprovalPolicy::Conditional;
    risky.authorization.capabilities.clear();

    let (findings, text) = mismatch(check(&[&risky], &lock.0));
    assert!(
        matches!(
            &findings[0],
            Finding::BumpTooSmall {
                required: Bump::Major,
                ..
            }
        ),
        "{findings:?}"
    );
    let Finding::ReviewMissing { changes, .. } = &findings[1] else {
        panic!("{findings:?}")
    };
    assert_eq!(changes.len(), 2, "{changes:?}");
    assert!(changes.iter().all(|c| c.class == ChangeClass::Security));
    assert!(
        text.contains("major (security) /approval [approval_weakened]"),
        "{text}"
    );
    assert!(text.contains("major (security) /authorization/capabilities/0 [capability_removed]: capability `mail:send` is no longer required"), "{text}");

    // A major bump alone is not enough.
    risky.version = "2.0.0".into();
    let (findings, text) = mismatch(check(&[&risky], &lock.0));
    assert!(
        matches!(
            &findings[..],
            [Finding::Bumped { .. }, Finding::ReviewMissing { .. }]
        ),
        "{findings:?}"
    );
    assert!(text.contains("`send_email` 1.2.0 -> 2.0.0: security changes need a reviewer's note in the new version's lock entry (`review.note`); record the version with TOOL_CONTRACT_LOCK=overwrite, then write the note"), "{text}");

    // The rewrite records the version with an empty note, and still fails.
    let (findings, text) = mismatch(check_contracts([&risky], &lock.0, Mode::Overwrite));
    assert!(
        matches!(
            &findings[..],
            [Finding::Bumped { .. }, Finding::ReviewPending { .. }]
        ),
        "{findings:?}"
    );
    assert!(
        text.contains("reviewers' notes are still to be written"),
        "{text}"
    );
    let mut file = lock.json();
    assert_eq!(file["tools"][0]["version"], "2.0.0");
    assert_eq!(file["tools"][0]["review"]["note"], "");
    assert_eq!(
        file["tools"][0]["review"]["changes"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    let (findings, _) = mismatch(check(&[&risky], &lock.0));
    assert!(
        matches!(&findings[..], [Finding::ReviewPending { .. }]),
        "{findings:?}"
    );

    // A reviewer writes the note: the check passes, and a rewrite keeps it.
    file["tools"][0]["review"]["note"] =
        json!("Approved by security (SEC-41): drafts are now checked by the mail gateway.");
    lock.set_json(&file);
    assert!(check(&[&risky], &lock.0).unwrap().findings.is_empty());
    check_contracts([&risky], &lock.0, Mode::Overwrite).unwrap();
    assert!(lock.json()["tools"][0]["review"]["note"]
        .as_str()
        .unwrap()
        .starts_with("Approved by security"));
}

/// A new version is judged against the newest locked version below it; a locked version gone
/// while others of the same tool remain is reported.
#[test]
fn versions_are_judged_against_their_predecessor_and_a_removed_one_is_reported() {
    let v2 = contract("search_documents");
    let mut v3 = with_version(v2, "3.0.0");
    v3.input_schema["required"] = json!(["query", "top_k"]);
    let lock = TempLock::new("versions", &[v2, &v3]);

    // A backport 2.2.0 with a minor change is compared with 2.1.0, not 3.0.0.
    let mut backport = with_version(v2, "2.2.0");
    backport.timeout_ms = 900;
    let report = check(&[v2, &backport, &v3], &lock.0).unwrap();
    assert!(
        matches!(&report.findings[..], [Finding::Bumped { from, to, .. }] if from == "2.1.0" && to == "2.2.0"),
        "{:?}",
        report.findings
    );

    // Dropping 2.1.0 while 3.0.0 stays: sessions pinned to 2.1.0 lose it.
    let (findings, text) = mismatch(check(&[&v3], &lock.0));
    assert_eq!(
        findings,
        [Finding::VersionRemoved {
            tool: "search_documents".into(),
            version: "2.1.0".into(),
            remaining: vec!["3.0.0".into()],
        }]
    );
    assert!(text.contains("`search_documents` 2.1.0: in the lock but gone while 3.0.0 remains: sessions pinned to 2.1.0 will get TOOL_VERSION_NOT_FOUND"), "{text}");

    // Replacing the newest version by a bump is the normal flow, not a removal.
    let mut v31 = with_version(&v3, "3.1.0");
    v31.timeout_ms = 900;
    let report = check(&[v2, &v31], &lock.0).unwrap();
    assert!(
        matches!(&report.findings[..], [Finding::Bumped { .. }]),
        "{:?}",
        report.findings
    );
}

#[test]
fn new_and_removed_tools_fail_until_the_lock_is_rewritten() {
    let lock = TempLock::new("new", &[contract("search_documents")]);
    let (findings, text) = mismatch(check(&[contract("send_email")], &lock.0));
    assert_eq!(findings.len(), 2, "{findings:?}");
    assert!(
        text.contains("`send_email` 1.2.0: not in the lock; run with TOOL_CONTRACT_LOCK=overwrite"),
        "{text}"
    );
    assert!(
        text.contains("`search_documents` 2.1.0: in the lock but gone, every version of it"),
        "{text}"
    );

    // Overwrite records the registry as it is, and the check then passes.
    let report = check_contracts([contract("send_email")], &lock.0, Mode::Overwrite).unwrap();
    assert!(report.rewritten);
    assert_eq!(
        Lock::read(&lock.0).unwrap(),
        Lock::from_contracts([contract("send_email")])
    );
    check(&[contract("send_email")], &lock.0).unwrap();
}

#[test]
fn a_missing_broken_or_hand_edited_lock_is_refused_with_what_to_do() {
    let path = std::env::temp_dir().join(format!("tc-lock-{}-missing.json", std::process::id()));
    let err = check(&[contract("send_email")], &path).unwrap_err();
    assert!(
        err.to_string()
            .contains("run with TOOL_CONTRACT_LOCK=overwrite to create it"),
        "{err}"
    );
    std::fs::write(&path, "{\"tools\": 3}").unwrap();
    let err = check(&[contract("send_email")], &path).unwrap_err();
    assert!(matches!(err, LockError::Parse { .. }), "{err}");
    std::fs::write(&path, "{\"format\": 3, \"tools\": []}").unwrap();
    let err = check(&[contract("send_email")], &path).unwrap_err();
    assert!(
        err.to_string()
            .contains("format 3 is not one this version of tool-contract reads"),
        "{err}"
    );
    std::fs::remove_file(&path).unwrap();

    // A kept contract edited by hand no longer matches its hashes: it is not trusted.
    let lock = TempLock::new("edited", &[contract("send_email")]);
    let mut file = lock.json();
    file["tools"][0]["contract"]["approval"] = json!("never");
    lock.set_json(&file);
    let err = check(&[contract("send_email")], &lock.0).unwrap_err();
    assert!(
        err.to_string().contains("`send_email` 1.2.0: the kept contract does not match the entry's name, version or hashes (was the lock edited by hand?)"),
        "{err}"
    );
}

/// The git revision changes with every commit: it is not locked.
#[test]
fn the_implementation_id_is_not_locked() {
    let lock = TempLock::new("implementation", &[contract("send_email")]);
    let mut c = contract("send_email").clone();
    c.fingerprint.implementation = "tool-contract-examples@0.1.0+git.0123abc".into();
    check(&[&c], &lock.0).unwrap();
}

/// A hash-only lock (format 1, as version 0.1 wrote it) is read and compared by hash; the
/// check asks for a rewrite, which upgrades it to whole contracts.
#[test]
fn a_format_1_lock_is_read_compared_by_hash_and_upgraded_by_a_rewrite() {
    let c = contract("search_documents");
    let lock = TempLock::new("format1", &[c]);
    let mut file = lock.json();
    file["format"] = json!(1);
    file["tools"][0].as_object_mut().unwrap().remove("contract");
    lock.set_json(&file);
    assert_eq!(Lock::read(&lock.0).unwrap().format, 1);

    let (findings, text) = mismatch(check(&[c], &lock.0));
    assert_eq!(findings, [Finding::OldFormat { format: 1 }]);
    assert!(text.contains("the lock is format 1 (hashes only), so changes cannot be classified; rewriting it upgrades it to format 2"), "{text}");

    // A change is still caught by its hash, but cannot be classified: major.
    let mut changed = c.clone();
    changed.timeout_ms = 800;
    let (findings, _) = mismatch(check(&[&changed], &lock.0));
    let Finding::Changed {
        changes, required, ..
    } = &findings[1]
    else {
        panic!("{findings:?}")
    };
    assert_eq!(*required, Bump::Major);
    assert_eq!(changes[0].pointer, "/timeout_ms");
    assert!(changes[0].reason.starts_with(
        "not understood: `timeout_ms` changed, and a format-1 lock keeps only its hash"
    ));

    let report = check_contracts([c], &lock.0, Mode::Overwrite).unwrap();
    assert!(report.to_string().contains("rewritten"), "{report}");
    let upgraded = Lock::read(&lock.0).unwrap();
    assert_eq!(upgraded.format, FORMAT);
    assert!(upgraded.tools[0].contract.is_some());
    check(&[c], &lock.0).unwrap();
}
