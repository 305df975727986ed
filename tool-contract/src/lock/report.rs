//! The machine-readable form of a comparison between two locks (`tool-contract diff --format
//! json`): one row per change, then one row per tool finding with the bump it needs.

use serde::Serialize;

use crate::evolve::{required_bump, Bump, ChangeClass, ChangeKind};

use super::Finding;

/// Two locks compared, as rows.
///
/// ```
/// use tool_contract::lock::{DiffReport, Lock};
/// let old = Lock::from_json(r#"[{"name": "ping_service", "version": "1.0.0", "timeout_ms": 100}]"#).unwrap();
/// let new = Lock::from_json(r#"[{"name": "ping_service", "version": "1.0.1", "timeout_ms": 50}]"#).unwrap();
/// let report = DiffReport::new(&old.compare(&new));
/// assert!(!report.ok);
/// assert_eq!(report.changes[0].change.as_str(), "timeout_lowered");
/// assert_eq!(report.tools[0].status, "bump_too_small");
/// assert_eq!(report.tools[0].smallest_passing_version.as_deref(), Some("2.0.0"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct DiffReport {
    /// Whether no finding needs a version fix ([`Finding::needs_version_fix`]).
    pub ok: bool,
    /// Every classified change, tool by tool.
    pub changes: Vec<ChangeRow>,
    /// One row per finding: what each tool needs.
    pub tools: Vec<ToolRow>,
}

/// One change of one tool.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ChangeRow {
    /// Tool name.
    pub tool: String,
    /// The version changed from.
    pub old_version: Option<String>,
    /// The version changed to.
    pub new_version: Option<String>,
    /// JSON pointer into the contract.
    pub pointer: String,
    /// What changed.
    pub change: ChangeKind,
    /// How big the change is.
    pub class: ChangeClass,
    /// Why, for a person.
    pub reason: String,
}

/// What one finding says about a tool.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ToolRow {
    /// Tool name (`None` for a finding about the lock itself).
    pub tool: Option<String>,
    /// The locked version.
    pub old_version: Option<String>,
    /// The new version.
    pub new_version: Option<String>,
    /// `changed_without_bump`, `bumped`, `bump_too_small`, `review_missing`,
    /// `review_pending`, `new`, `not_newer`, `removed`, `version_removed` or `old_format`.
    pub status: &'static str,
    /// The bump the changes need (`None` without changes).
    pub required_bump: Option<Bump>,
    /// The bump made (`None` when the version did not go up).
    pub made_bump: Option<Bump>,
    /// The smallest version that passes, where a bump is missing.
    pub smallest_passing_version: Option<String>,
    /// Whether this needs a version fix (the command then exits non-zero).
    pub fails: bool,
    /// What is wrong and what passes.
    pub message: String,
}

impl DiffReport {
    /// The rows of `findings`, in order.
    pub fn new(findings: &[Finding]) -> Self {
        let mut changes = Vec::new();
        let mut tools = Vec::new();
        for finding in findings {
            let (old_version, new_version) = versions(finding);
            // A missing review lists the security changes already listed by its bump.
            if !matches!(finding, Finding::ReviewMissing { .. }) {
                for change in finding.changes() {
                    changes.push(ChangeRow {
                        tool: finding.tool().unwrap_or_default().to_owned(),
                        old_version: old_version.clone(),
                        new_version: new_version.clone(),
                        pointer: change.pointer.clone(),
                        change: change.kind,
                        class: change.class,
                        reason: change.reason.clone(),
                    });
                }
            }
            let (made_bump, smallest) = match finding {
                Finding::BumpTooSmall { made, smallest, .. } => (*made, smallest.clone()),
                Finding::Changed { smallest, .. } => (None, smallest.clone()),
                Finding::Bumped { from, to, .. } => (Bump::between(from, to), None),
                _ => (None, None),
            };
            tools.push(ToolRow {
                tool: finding.tool().map(str::to_owned),
                old_version,
                new_version,
                status: status(finding),
                required_bump: match finding {
                    Finding::ReviewMissing { .. } => Some(Bump::Major),
                    other => required_bump(other.changes()),
                },
                made_bump,
                smallest_passing_version: smallest,
                fails: finding.needs_version_fix(),
                message: finding.summary(),
            });
        }
        DiffReport {
            ok: !findings.iter().any(Finding::needs_version_fix),
            changes,
            tools,
        }
    }
}

fn versions(finding: &Finding) -> (Option<String>, Option<String>) {
    let some = |v: &String| Some(v.clone());
    match finding {
        Finding::Changed { version, .. } | Finding::ReviewPending { version, .. } => {
            (some(version), some(version))
        }
        Finding::Bumped { from, to, .. }
        | Finding::BumpTooSmall { from, to, .. }
        | Finding::ReviewMissing { from, to, .. } => (some(from), some(to)),
        Finding::New { version, .. } => (None, some(version)),
        Finding::NotNewer {
            version, locked, ..
        } => (some(locked), some(version)),
        Finding::Removed { version, .. } | Finding::VersionRemoved { version, .. } => {
            (some(version), None)
        }
        Finding::OldFormat { .. } => (None, None),
    }
}

fn status(finding: &Finding) -> &'static str {
    match finding {
        Finding::Changed { .. } => "changed_without_bump",
        Finding::Bumped { .. } => "bumped",
        Finding::BumpTooSmall { .. } => "bump_too_small",
        Finding::ReviewMissing { .. } => "review_missing",
        Finding::ReviewPending { .. } => "review_pending",
        Finding::New { .. } => "new",
        Finding::NotNewer { .. } => "not_newer",
        Finding::Removed { .. } => "removed",
        Finding::VersionRemoved { .. } => "version_removed",
        Finding::OldFormat { .. } => "old_format",
    }
}
