//! Comparing two locks: the locked state and the registry's, or a base branch's lock and a pull
//! request's.

use crate::evolve::{
    classify_with, required_bump, smallest_passing, Bump, Change, ChangeClass, ChangeKind, Rules,
};

use super::{version_key, Finding, Lock, LockEntry, PARTS};

pub(super) fn compare(old: &Lock, new: &Lock, rules: &Rules) -> Vec<Finding> {
    let mut findings = Vec::new();
    // Locked versions that a newer version of the same tool replaces.
    let mut replaced: Vec<&LockEntry> = Vec::new();
    for now in &new.tools {
        let same_name: Vec<&LockEntry> = old.tools.iter().filter(|e| e.name == now.name).collect();
        if let Some(locked) = same_name.iter().find(|e| e.version == now.version) {
            let changes = changes(locked, now, rules);
            if let Some(required) = required_bump(&changes) {
                findings.push(Finding::Changed {
                    tool: now.name.clone(),
                    version: now.version.clone(),
                    smallest: smallest_passing(&now.version, required),
                    changes,
                    required,
                });
            }
            continue;
        }
        // A new version is judged against the newest locked version below it.
        let key = version_key(&now.version);
        let previous = same_name
            .iter()
            .filter(|e| version_key(&e.version) < key)
            .max_by(|a, b| version_key(&a.version).cmp(&version_key(&b.version)));
        let Some(previous) = previous else {
            findings.push(
                match same_name
                    .iter()
                    .max_by(|a, b| version_key(&a.version).cmp(&version_key(&b.version)))
                {
                    Some(newest) => Finding::NotNewer {
                        tool: now.name.clone(),
                        version: now.version.clone(),
                        locked: newest.version.clone(),
                    },
                    None => Finding::New {
                        tool: now.name.clone(),
                        version: now.version.clone(),
                    },
                },
            );
            continue;
        };
        replaced.push(previous);
        let changes = changes(previous, now, rules);
        let (tool, from, to) = (
            now.name.clone(),
            previous.version.clone(),
            now.version.clone(),
        );
        let required = required_bump(&changes);
        match (required, Bump::between(&from, &to)) {
            (Some(required), made) if made.is_none_or(|m| m < required) => {
                findings.push(Finding::BumpTooSmall {
                    smallest: smallest_passing(&from, required),
                    tool: tool.clone(),
                    from: from.clone(),
                    to: to.clone(),
                    changes: changes.clone(),
                    required,
                    made,
                });
            }
            _ => findings.push(Finding::Bumped {
                tool: tool.clone(),
                from: from.clone(),
                to: to.clone(),
                changes: changes.clone(),
            }),
        }
        let reviewed = now.review.as_ref().is_some_and(|r| !r.is_pending());
        let security: Vec<Change> = changes
            .into_iter()
            .filter(|c| c.class == ChangeClass::Security)
            .collect();
        if !security.is_empty() && !reviewed {
            findings.push(Finding::ReviewMissing {
                tool,
                from,
                to,
                changes: security,
            });
        }
    }
    for locked in &old.tools {
        let still = |e: &&LockEntry| e.name == locked.name;
        if new
            .tools
            .iter()
            .any(|e| e.name == locked.name && e.version == locked.version)
            || replaced
                .iter()
                .any(|r| r.name == locked.name && r.version == locked.version)
        {
            continue;
        }
        let remaining: Vec<String> = new
            .tools
            .iter()
            .filter(still)
            .map(|e| e.version.clone())
            .collect();
        findings.push(if remaining.is_empty() {
            Finding::Removed {
                tool: locked.name.clone(),
                version: locked.version.clone(),
            }
        } else {
            Finding::VersionRemoved {
                tool: locked.name.clone(),
                version: locked.version.clone(),
                remaining,
            }
        });
    }
    findings
}

/// The classified changes from `old` to `new`; by hash only when either lacks its contract
/// (a format-1 lock), each changed part then "not understood".
fn changes(old: &LockEntry, new: &LockEntry, rules: &Rules) -> Vec<Change> {
    if let (Some(a), Some(b)) = (&old.contract, &new.contract) {
        return classify_with(a, b, rules);
    }
    let (a, b) = (&old.fingerprint, &new.fingerprint);
    let mut parts: Vec<&str> = Vec::new();
    if a.input_schema_sha256 != b.input_schema_sha256 {
        parts.push("input_schema");
    }
    if a.output_schema_sha256 != b.output_schema_sha256 {
        parts.push("output_schema");
    }
    for part in PARTS {
        // A part a lock was written without (it predates the part) is not compared: the
        // contract hash below still speaks for it.
        let (x, y) = (a.parts.get(*part), b.parts.get(*part));
        if x.is_some() && y.is_some() && x != y {
            parts.push(part);
        }
    }
    let mut out: Vec<Change> = parts
        .into_iter()
        .map(|part| {
            Change::new(
                format!("/{part}"),
                ChangeKind::NotUnderstood,
                ChangeClass::Major,
                format!("not understood: `{part}` changed, and a format-1 lock keeps only its hash; treated as major"),
            )
        })
        .collect();
    // The contract hash covers the version (through the schemas' `$id`), so it only speaks
    // when the versions are equal.
    if out.is_empty() && a.contract_sha256 != b.contract_sha256 && old.version == new.version {
        out.push(Change::new(
            "",
            ChangeKind::NotUnderstood,
            ChangeClass::Major,
            "not understood: other contract fields (error model, provenance) changed, and a format-1 lock keeps only their hash; treated as major",
        ));
    }
    out
}
