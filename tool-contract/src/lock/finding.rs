//! What a lock comparison finds, and the readable report of a check.

use std::fmt;
use std::path::PathBuf;

use crate::evolve::{Bump, Change};

use super::{ENV_VAR, FORMAT};

/// One difference between the locked state and the current one.
///
/// ```
/// use tool_contract::lock::Finding;
/// let f = Finding::New { tool: "ping_service".into(), version: "1.0.0".into() };
/// assert!(f.is_failure());
/// assert!(!f.needs_version_fix());
/// assert_eq!(f.to_string(), "`ping_service` 1.0.0: not in the lock; run with TOOL_CONTRACT_LOCK=overwrite to record it");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Finding {
    /// The contract changed but the version did not.
    Changed {
        /// Tool name.
        tool: String,
        /// The unchanged version.
        version: String,
        /// Every change, classified.
        changes: Vec<Change>,
        /// The bump the changes need.
        required: Bump,
        /// The smallest version that passes (`None` when the version is not semver).
        smallest: Option<String>,
    },
    /// The version went up by enough for its changes: passes; the lock should record it.
    Bumped {
        /// Tool name.
        tool: String,
        /// The locked version it is compared with.
        from: String,
        /// The new version.
        to: String,
        /// Every change since `from`, classified.
        changes: Vec<Change>,
    },
    /// The version went up, but by less than the changes need.
    BumpTooSmall {
        /// Tool name.
        tool: String,
        /// The locked version it is compared with.
        from: String,
        /// The new version.
        to: String,
        /// Every change since `from`, classified.
        changes: Vec<Change>,
        /// The bump the changes need.
        required: Bump,
        /// The bump made (`None` when a version is not semver).
        made: Option<Bump>,
        /// The smallest version after `from` that passes.
        smallest: Option<String>,
    },
    /// Security changes without a reviewer's note in the new version's lock entry.
    ReviewMissing {
        /// Tool name.
        tool: String,
        /// The locked version it is compared with.
        from: String,
        /// The new version.
        to: String,
        /// The security changes.
        changes: Vec<Change>,
    },
    /// A lock entry's reviewer's note is empty.
    ReviewPending {
        /// Tool name.
        tool: String,
        /// The version whose entry waits for a note.
        version: String,
        /// The security changes to review, as the rewrite listed them.
        changes: Vec<String>,
    },
    /// The tool is not in the lock.
    New {
        /// Tool name.
        tool: String,
        /// Its version.
        version: String,
    },
    /// The tool's version is not in the lock and lower than every locked one.
    NotNewer {
        /// Tool name.
        tool: String,
        /// Its version.
        version: String,
        /// The newest locked version.
        locked: String,
    },
    /// A locked tool is gone, every version of it.
    Removed {
        /// Tool name.
        tool: String,
        /// The locked version.
        version: String,
    },
    /// One locked version of a tool is gone while others of the same name remain: sessions
    /// pinned to it will not find it.
    VersionRemoved {
        /// Tool name.
        tool: String,
        /// The locked version that is gone.
        version: String,
        /// The versions that remain.
        remaining: Vec<String>,
    },
    /// The lock is of an older format (1: hashes only), whose changes cannot be classified.
    OldFormat {
        /// The lock's format.
        format: u32,
    },
}

impl Finding {
    /// Whether this finding fails a lock check: all but [`Finding::Bumped`]. Once the lock is
    /// rewritten only [`Finding::ReviewPending`] does (see [`LockReport::is_ok`]).
    ///
    /// ```
    /// use tool_contract::lock::Finding;
    /// let bumped = Finding::Bumped { tool: "t".into(), from: "1.0.0".into(), to: "1.1.0".into(), changes: vec![] };
    /// assert!(!bumped.is_failure());
    /// ```
    pub fn is_failure(&self) -> bool {
        !matches!(self, Finding::Bumped { .. })
    }

    /// Whether this finding is a versioning error that rewriting the lock does not fix: a
    /// change without a (big enough) bump, a version that went down, or a security change
    /// without a reviewer's note. `tool-contract diff` exits non-zero on these; a new or
    /// removed tool is only a note there.
    pub fn needs_version_fix(&self) -> bool {
        matches!(
            self,
            Finding::Changed { .. }
                | Finding::BumpTooSmall { .. }
                | Finding::NotNewer { .. }
                | Finding::ReviewMissing { .. }
                | Finding::ReviewPending { .. }
        )
    }

    /// The tool the finding is about (`None` for [`Finding::OldFormat`]).
    pub fn tool(&self) -> Option<&str> {
        match self {
            Finding::Changed { tool, .. }
            | Finding::Bumped { tool, .. }
            | Finding::BumpTooSmall { tool, .. }
            | Finding::ReviewMissing { tool, .. }
            | Finding::ReviewPending { tool, .. }
            | Finding::New { tool, .. }
            | Finding::NotNewer { tool, .. }
            | Finding::Removed { tool, .. }
            | Finding::VersionRemoved { tool, .. } => Some(tool),
            Finding::OldFormat { .. } => None,
        }
    }

    /// The classified changes it carries (empty for findings without any).
    pub fn changes(&self) -> &[Change] {
        match self {
            Finding::Changed { changes, .. }
            | Finding::Bumped { changes, .. }
            | Finding::BumpTooSmall { changes, .. }
            | Finding::ReviewMissing { changes, .. } => changes,
            _ => &[],
        }
    }

    /// One line saying what is wrong and what passes, without the tool, the versions or the
    /// changes.
    ///
    /// ```
    /// use tool_contract::evolve::Bump;
    /// use tool_contract::lock::Finding;
    /// let f = Finding::BumpTooSmall {
    ///     tool: "t".into(), from: "2.1.0".into(), to: "2.1.1".into(), changes: vec![],
    ///     required: Bump::Major, made: Some(Bump::Patch), smallest: Some("3.0.0".into()),
    /// };
    /// assert_eq!(f.summary(), "a patch bump is too small: the changes need a major bump (smallest passing version: 3.0.0)");
    /// ```
    pub fn summary(&self) -> String {
        match self {
            Finding::Changed {
                required, smallest, ..
            } => format!(
                "the contract changed but the version did not: the changes need a {required} bump{}",
                smallest_text(smallest.as_deref())
            ),
            Finding::Bumped { changes, .. } if changes.is_empty() => {
                "version bumped, contract unchanged".to_owned()
            }
            Finding::Bumped { changes, .. } => format!(
                "the bump covers {} change{}",
                changes.len(),
                if changes.len() == 1 { "" } else { "s" }
            ),
            Finding::BumpTooSmall {
                required,
                made,
                smallest,
                ..
            } => {
                let made = match made {
                    Some(made) => format!("a {made} bump is too small"),
                    None => "the versions are not both semantic versions".to_owned(),
                };
                format!(
                    "{made}: the changes need a {required} bump{}",
                    smallest_text(smallest.as_deref())
                )
            }
            Finding::ReviewMissing { .. } => {
                "security changes need a reviewer's note in the new version's lock entry (`review.note`)".to_owned()
            }
            Finding::ReviewPending { .. } => {
                "the lock entry's `review.note` is empty: a reviewer must say why its security changes are acceptable".to_owned()
            }
            Finding::New { .. } => "not in the lock".to_owned(),
            Finding::NotNewer { locked, .. } => {
                format!("not in the lock, and not newer than the locked {locked}; use a higher version")
            }
            Finding::Removed { .. } => "in the lock but gone, every version of it".to_owned(),
            Finding::VersionRemoved { version, remaining, .. } => format!(
                "in the lock but gone while {} remain{}: sessions pinned to {version} will get TOOL_VERSION_NOT_FOUND",
                remaining.join(", "),
                if remaining.len() == 1 { "s" } else { "" }
            ),
            Finding::OldFormat { format } => format!(
                "the lock is format {format} (hashes only), so changes cannot be classified; rewriting it upgrades it to format {FORMAT}, which keeps each tool's whole contract"
            ),
        }
    }
}

fn smallest_text(smallest: Option<&str>) -> String {
    smallest.map_or_else(String::new, |v| format!(" (smallest passing version: {v})"))
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let summary = self.summary();
        match self {
            Finding::Changed { tool, version, .. } => write!(
                f,
                "`{tool}` {version}: {summary}; bump the version, then rerun with {ENV_VAR}=overwrite"
            )?,
            Finding::Bumped { tool, from, to, .. } => write!(
                f,
                "`{tool}` {from} -> {to}: {summary}; run with {ENV_VAR}=overwrite to record it"
            )?,
            Finding::BumpTooSmall { tool, from, to, .. } => {
                write!(f, "`{tool}` {from} -> {to}: {summary}")?
            }
            Finding::ReviewMissing { tool, from, to, .. } => write!(
                f,
                "`{tool}` {from} -> {to}: {summary}; record the version with {ENV_VAR}=overwrite, then write the note"
            )?,
            Finding::ReviewPending {
                tool,
                version,
                changes,
            } => {
                write!(f, "`{tool}` {version}: {summary}")?;
                for change in changes {
                    write!(f, "\n      - {change}")?;
                }
            }
            Finding::New { tool, version } => write!(
                f,
                "`{tool}` {version}: {summary}; run with {ENV_VAR}=overwrite to record it"
            )?,
            Finding::NotNewer { tool, version, .. } => {
                write!(f, "`{tool}` {version}: {summary}")?
            }
            Finding::Removed { tool, version } | Finding::VersionRemoved { tool, version, .. } => {
                write!(
                    f,
                    "`{tool}` {version}: {summary}; run with {ENV_VAR}=overwrite if removing it is intended"
                )?
            }
            Finding::OldFormat { .. } => write!(f, "{summary} (run with {ENV_VAR}=overwrite)")?,
        }
        for change in self.changes() {
            write!(f, "\n      - {change}")?;
        }
        Ok(())
    }
}

/// What [`check`](super::check) found; its `Display` is the readable report.
///
/// ```no_run
/// use tool_contract::lock::LockReport;
/// # let report: LockReport = unimplemented!();
/// if !report.is_ok() {
///     panic!("{report}");
/// }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct LockReport {
    /// The lock file.
    pub path: PathBuf,
    /// Every difference, failures and notes.
    pub findings: Vec<Finding>,
    /// Whether the lock file was rewritten.
    pub rewritten: bool,
}

impl LockReport {
    /// Whether the check passes: no failing finding, or, once the lock was rewritten, no
    /// reviewer's note left to write. See [`check_contracts`](super::check_contracts) for an
    /// example.
    pub fn is_ok(&self) -> bool {
        if self.rewritten {
            !self
                .findings
                .iter()
                .any(|f| matches!(f, Finding::ReviewPending { .. }))
        } else {
            !self.findings.iter().any(Finding::is_failure)
        }
    }
}

impl fmt::Display for LockReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = self.path.display();
        if self.rewritten {
            write!(
                f,
                "{path} rewritten ({} differences recorded)",
                self.findings.len()
            )?;
            if !self.is_ok() {
                write!(f, "; reviewers' notes are still to be written:")?;
            }
        } else if self.is_ok() {
            write!(f, "{path} matches the registry")?;
        } else {
            write!(f, "{path} does not match the registry:")?;
        }
        for finding in &self.findings {
            write!(f, "\n  - {finding}")?;
        }
        Ok(())
    }
}

/// Why the lock check failed.
///
/// ```
/// use tool_contract::lock::LockError;
/// let err = LockError::BadEnv { value: "1".into() };
/// assert_eq!(err.to_string(), "TOOL_CONTRACT_LOCK=\"1\" is not understood; use TOOL_CONTRACT_LOCK=overwrite or unset it");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LockError {
    /// The registry does not match the lock.
    Mismatch(LockReport),
    /// The lock file is missing or cannot be written.
    Io {
        /// The lock file.
        path: PathBuf,
        /// The OS error.
        message: String,
    },
    /// The lock file is not a lock.
    Parse {
        /// The lock file.
        path: PathBuf,
        /// The parser's message.
        message: String,
    },
    /// `TOOL_CONTRACT_LOCK` has a value other than `overwrite`.
    BadEnv {
        /// The value.
        value: String,
    },
}

impl fmt::Display for LockError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LockError::Mismatch(report) => report.fmt(f),
            LockError::Io { path, message } => write!(
                f,
                "cannot read or write the contract lock {}: {message}; run with {ENV_VAR}=overwrite to create it",
                path.display()
            ),
            LockError::Parse { path, message } => write!(
                f,
                "{} is not a contract lock ({message}); rerun with {ENV_VAR}=overwrite to regenerate it",
                path.display()
            ),
            LockError::BadEnv { value } => {
                write!(f, "{ENV_VAR}={value:?} is not understood; use {ENV_VAR}=overwrite or unset it")
            }
        }
    }
}

impl std::error::Error for LockError {}
