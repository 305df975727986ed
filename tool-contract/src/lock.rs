//! The contract lock: a checked-in `tools.lock.json` that catches a tool whose contract
//! changed while its version did not: a new behaviour must come with a new version, so
//! traces and replays can tell versions apart.
//!
//! The lock records, per tool name and version, the hashes of the input and output schemas,
//! of the whole contract, and of each policy part (description, effect, authorization,
//! approval, timeout, retry, idempotency, policy version), so a failure says *what* changed.
//! The implementation id (crate version and git revision) is not locked: it changes with
//! every commit.
//!
//! Call [`assert_locked!`](crate::assert_locked) (or [`check`]) from a test:
//!
//! ```no_run
//! # fn registry() -> tool_contract::Registry { unimplemented!() }
//! #[test]
//! fn tool_contracts_are_versioned() {
//!     // Reads `tools.lock.json` next to your Cargo.toml.
//!     tool_contract::assert_locked!(&registry());
//! }
//! ```
//!
//! - A tool whose schema or policy changed with the same version fails, naming the tool and
//!   the changed parts: bump its version.
//! - A tool with a newer version than the lock passes, with a note to record it.
//! - A tool missing from the lock, or a locked tool gone from the registry, fails.
//! - `TOOL_CONTRACT_LOCK=overwrite cargo test` rewrites the lock from the registry (like
//!   `TRYBUILD=overwrite`); review the diff and commit it with the version bumps.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::schema::schema_hash;
use crate::{Registry, ToolContract};

/// The environment variable that switches [`check`] to rewriting the lock.
///
/// ```
/// assert_eq!(tool_contract::lock::ENV_VAR, "TOOL_CONTRACT_LOCK");
/// ```
pub const ENV_VAR: &str = "TOOL_CONTRACT_LOCK";

/// The contract fields hashed one by one, as named in the contract's JSON. The implementation
/// id is not among them, nor anywhere in the lock.
///
/// ```
/// assert!(tool_contract::lock::PARTS.contains(&"timeout_ms"));
/// ```
pub const PARTS: &[&str] = &[
    "description",
    "effect",
    "authorization",
    "approval",
    "timeout_ms",
    "retry",
    "idempotency",
    "policy_version",
];

/// The lock file's content.
///
/// ```
/// # use tool_contract::{tool, Tool, ToolArgs, ToolError};
/// # #[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
/// # #[serde(deny_unknown_fields)]
/// # struct PingArgs {}
/// /// Checks that the service answers. Use it before other calls; it returns nothing else.
/// #[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 100)]
/// async fn ping_service(args: PingArgs) -> Result<bool, ToolError> { Ok(true) }
///
/// let lock = tool_contract::lock::Lock::from_contracts([PingService::contract()]);
/// assert_eq!(lock.tools[0].name, "ping_service");
/// assert!(lock.tools[0].fingerprint.parts["timeout_ms"].starts_with("sha256:"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Lock {
    /// The lock format, 1.
    pub format: u32,
    /// One entry per tool name and version, sorted.
    pub tools: Vec<LockEntry>,
}

/// One locked tool version.
///
/// ```
/// # use tool_contract::{tool, Tool, ToolArgs, ToolError, Registry};
/// # #[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
/// # #[serde(deny_unknown_fields)]
/// # struct PingArgs {}
/// # /// Checks that the service answers. Use it before other calls; it returns nothing else.
/// # #[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 100)]
/// # async fn ping_service(args: PingArgs) -> Result<bool, ToolError> { Ok(true) }
/// let entry = tool_contract::lock::LockEntry::of(PingService::contract());
/// assert_eq!((entry.name.as_str(), entry.version.as_str()), ("ping_service", "1.0.0"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct LockEntry {
    /// Tool name.
    pub name: String,
    /// Tool version.
    pub version: String,
    /// What must not change without a version bump.
    pub fingerprint: LockedFingerprint,
}

/// The hashes of a locked tool version (all [`canonical`](crate::canonical) digests).
///
/// ```
/// # use tool_contract::{tool, Tool, ToolArgs, ToolError, Registry};
/// # #[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
/// # #[serde(deny_unknown_fields)]
/// # struct PingArgs {}
/// # /// Checks that the service answers. Use it before other calls; it returns nothing else.
/// # #[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 100)]
/// # async fn ping_service(args: PingArgs) -> Result<bool, ToolError> { Ok(true) }
/// let fp = tool_contract::lock::LockEntry::of(PingService::contract()).fingerprint;
/// assert_eq!(fp.input_schema_sha256, PingService::contract().fingerprint.input_schema_sha256);
/// assert_eq!(fp.parts.len(), tool_contract::lock::PARTS.len());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct LockedFingerprint {
    /// The input schema, without `$id`.
    pub input_schema_sha256: String,
    /// The output schema, without `$id`.
    pub output_schema_sha256: String,
    /// The whole contract without its fingerprint.
    pub contract_sha256: String,
    /// One hash per entry of [`PARTS`].
    pub parts: BTreeMap<String, String>,
}

impl LockEntry {
    /// The entry of `contract` as it is now (see [`LockEntry`] for an example).
    pub fn of(contract: &ToolContract) -> Self {
        let json = serde_json::to_value(contract).unwrap_or_default();
        let parts = PARTS
            .iter()
            .map(|p| {
                (
                    (*p).to_owned(),
                    crate::canonical::sha256(json.get(*p).unwrap_or(&Value::Null)),
                )
            })
            .collect();
        LockEntry {
            name: contract.name.clone(),
            version: contract.version.clone(),
            fingerprint: LockedFingerprint {
                input_schema_sha256: schema_hash(&contract.input_schema),
                output_schema_sha256: schema_hash(&contract.output_schema),
                contract_sha256: crate::__private::contract_hash(contract),
                parts,
            },
        }
    }

    /// The parts that differ from `old`: `input_schema`, `output_schema`, entries of
    /// [`PARTS`], or `other contract fields` when only the whole-contract hash moved.
    fn changes(&self, old: &LockEntry) -> Vec<String> {
        let same_version = self.version == old.version;
        let (new, old) = (&self.fingerprint, &old.fingerprint);
        let mut out = Vec::new();
        if new.input_schema_sha256 != old.input_schema_sha256 {
            out.push("input_schema".to_owned());
        }
        if new.output_schema_sha256 != old.output_schema_sha256 {
            out.push("output_schema".to_owned());
        }
        for part in PARTS {
            if new.parts.get(*part) != old.parts.get(*part) {
                out.push((*part).to_owned());
            }
        }
        // The contract hash covers the version (through the schemas' `$id`), so it only
        // speaks when the versions are equal.
        if out.is_empty() && new.contract_sha256 != old.contract_sha256 && same_version {
            out.push("other contract fields (error model, provenance)".to_owned());
        }
        out
    }
}

impl Lock {
    /// The lock of `contracts`, sorted by name then version (see [`Lock`] for an example).
    pub fn from_contracts<'a>(contracts: impl IntoIterator<Item = &'a ToolContract>) -> Self {
        let mut tools: Vec<LockEntry> = contracts.into_iter().map(LockEntry::of).collect();
        tools.sort_by(|a, b| {
            (&a.name, version_key(&a.version)).cmp(&(&b.name, version_key(&b.version)))
        });
        Lock { format: 1, tools }
    }

    /// The lock of every tool version in `registry`.
    ///
    /// ```
    /// # use tool_contract::{tool, Tool, ToolArgs, ToolError, Registry};
    /// # #[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
    /// # #[serde(deny_unknown_fields)]
    /// # struct PingArgs {}
    /// #     /// Checks that the service answers. Use it before other calls; it returns nothing else.
    /// # #[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 100)]
    /// # async fn ping_service(args: PingArgs) -> Result<bool, ToolError> { Ok(true) }
    /// let registry = Registry::builder().tool(PingService).build().unwrap();
    /// let lock = tool_contract::lock::Lock::from_registry(&registry);
    /// assert_eq!(lock.format, 1);
    /// assert_eq!(lock.tools.len(), 1);
    /// ```
    pub fn from_registry(registry: &Registry) -> Self {
        Self::from_contracts(registry.contracts())
    }

    /// Reads a lock file.
    ///
    /// ```
    /// # use tool_contract::lock::{Lock, LockError};
    /// let err = Lock::read(std::path::Path::new("/nonexistent/tools.lock.json")).unwrap_err();
    /// assert!(matches!(err, LockError::Io { .. }));
    /// ```
    pub fn read(path: &Path) -> Result<Self, LockError> {
        let text = std::fs::read_to_string(path).map_err(|e| LockError::Io {
            path: path.to_owned(),
            message: e.to_string(),
        })?;
        serde_json::from_str(&text).map_err(|e| LockError::Parse {
            path: path.to_owned(),
            message: e.to_string(),
        })
    }

    /// Writes the lock as pretty JSON with a final newline.
    ///
    /// ```
    /// # use tool_contract::lock::Lock;
    /// # use tool_contract::{tool, Tool, ToolArgs, ToolError, Registry};
    /// # #[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
    /// # #[serde(deny_unknown_fields)]
    /// # struct PingArgs {}
    /// #     /// Checks that the service answers. Use it before other calls; it returns nothing else.
    /// # #[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 100)]
    /// # async fn ping_service(args: PingArgs) -> Result<bool, ToolError> { Ok(true) }
    /// let path = std::env::temp_dir().join(format!("doc-write-{}.json", std::process::id()));
    /// let lock = Lock::from_contracts([PingService::contract()]);
    /// lock.write(&path).unwrap();
    /// assert_eq!(Lock::read(&path).unwrap(), lock);
    /// # std::fs::remove_file(&path).unwrap();
    /// ```
    pub fn write(&self, path: &Path) -> Result<(), LockError> {
        let text = serde_json::to_string_pretty(self).unwrap_or_default() + "\n";
        std::fs::write(path, text).map_err(|e| LockError::Io {
            path: path.to_owned(),
            message: e.to_string(),
        })
    }

    /// What differs between this (the locked state) and `current`.
    ///
    /// ```
    /// # use tool_contract::lock::{Finding, Lock};
    /// # use tool_contract::{tool, Tool, ToolArgs, ToolError, Registry};
    /// # #[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
    /// # #[serde(deny_unknown_fields)]
    /// # struct PingArgs {}
    /// #     /// Checks that the service answers. Use it before other calls; it returns nothing else.
    /// # #[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 100)]
    /// # async fn ping_service(args: PingArgs) -> Result<bool, ToolError> { Ok(true) }
    /// let locked = Lock::from_contracts([PingService::contract()]);
    /// let mut changed = PingService::contract().clone();
    /// changed.effect = tool_contract::Effect::ExternalRead;
    /// let findings = locked.compare(&Lock::from_contracts([&changed]));
    /// assert!(matches!(&findings[..], [Finding::Changed { parts, .. }] if parts == &["effect"]));
    /// ```
    pub fn compare(&self, current: &Lock) -> Vec<Finding> {
        let mut findings = Vec::new();
        for now in &current.tools {
            let same_name: Vec<&LockEntry> =
                self.tools.iter().filter(|e| e.name == now.name).collect();
            if let Some(old) = same_name.iter().find(|e| e.version == now.version) {
                let parts = now.changes(old);
                if !parts.is_empty() {
                    findings.push(Finding::Changed {
                        tool: now.name.clone(),
                        version: now.version.clone(),
                        parts,
                    });
                }
                continue;
            }
            let newest = same_name.iter().max_by_key(|e| version_key(&e.version));
            match newest {
                Some(old) if version_key(&now.version) > version_key(&old.version) => {
                    findings.push(Finding::Bumped {
                        tool: now.name.clone(),
                        from: old.version.clone(),
                        to: now.version.clone(),
                        parts: now.changes(old),
                    });
                }
                Some(old) => findings.push(Finding::NotNewer {
                    tool: now.name.clone(),
                    version: now.version.clone(),
                    locked: old.version.clone(),
                }),
                None => findings.push(Finding::New {
                    tool: now.name.clone(),
                    version: now.version.clone(),
                }),
            }
        }
        for old in &self.tools {
            if !current.tools.iter().any(|e| e.name == old.name) {
                findings.push(Finding::Removed {
                    tool: old.name.clone(),
                    version: old.version.clone(),
                });
            }
        }
        findings
    }
}

/// Semver order where the version parses, string order otherwise.
fn version_key(v: &str) -> (Option<semver::Version>, &str) {
    (semver::Version::parse(v).ok(), v)
}

/// One difference between the lock and the registry.
///
/// ```
/// use tool_contract::lock::Finding;
/// let f = Finding::New { tool: "ping_service".into(), version: "1.0.0".into() };
/// assert!(f.is_failure());
/// assert_eq!(f.to_string(), "`ping_service` 1.0.0: not in the lock; run with TOOL_CONTRACT_LOCK=overwrite to record it");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Finding {
    /// The contract changed but the version did not: a failure.
    Changed {
        /// Tool name.
        tool: String,
        /// The unchanged version.
        version: String,
        /// What changed, e.g. `["timeout_ms"]`.
        parts: Vec<String>,
    },
    /// The tool is not in the lock: a failure until the lock is rewritten.
    New {
        /// Tool name.
        tool: String,
        /// Its version.
        version: String,
    },
    /// The tool's version is not in the lock and not newer than the locked one: a failure.
    NotNewer {
        /// Tool name.
        tool: String,
        /// Its version.
        version: String,
        /// The newest locked version.
        locked: String,
    },
    /// A locked tool is gone from the registry: a failure until the lock is rewritten.
    Removed {
        /// Tool name.
        tool: String,
        /// The locked version.
        version: String,
    },
    /// The version was bumped: passes; the lock should be rewritten to record it.
    Bumped {
        /// Tool name.
        tool: String,
        /// The locked version.
        from: String,
        /// The registry's version.
        to: String,
        /// What changed since the locked version.
        parts: Vec<String>,
    },
}

impl Finding {
    /// Whether this finding fails the check: all but [`Finding::Bumped`].
    ///
    /// ```
    /// use tool_contract::lock::Finding;
    /// let bumped = Finding::Bumped { tool: "t".into(), from: "1.0.0".into(), to: "1.1.0".into(), parts: vec![] };
    /// assert!(!bumped.is_failure());
    /// ```
    pub fn is_failure(&self) -> bool {
        !matches!(self, Finding::Bumped { .. })
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Finding::Changed { tool, version, parts } => write!(
                f,
                "`{tool}` {version}: {} changed but the version did not; bump the version, then rerun with {ENV_VAR}=overwrite",
                parts.join(", ")
            ),
            Finding::New { tool, version } => write!(
                f,
                "`{tool}` {version}: not in the lock; run with {ENV_VAR}=overwrite to record it"
            ),
            Finding::NotNewer { tool, version, locked } => write!(
                f,
                "`{tool}` {version}: not in the lock, and not newer than the locked {locked}; use a higher version"
            ),
            Finding::Removed { tool, version } => write!(
                f,
                "`{tool}` {version}: in the lock but no longer in the registry; run with {ENV_VAR}=overwrite if removing it is intended"
            ),
            Finding::Bumped { tool, from, to, parts } => {
                write!(f, "`{tool}` {from} -> {to}")?;
                if !parts.is_empty() {
                    write!(f, " ({} changed)", parts.join(", "))?;
                }
                write!(f, ": version bumped; run with {ENV_VAR}=overwrite to record it")
            }
        }
    }
}

/// What [`check`] found; its `Display` is the readable report.
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
    /// Whether no finding fails the check (always true once the lock was rewritten); see
    /// [`check_contracts`] for an example.
    pub fn is_ok(&self) -> bool {
        self.rewritten || !self.findings.iter().any(Finding::is_failure)
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

/// Whether [`check`] compares or rewrites.
///
/// ```
/// # use tool_contract::lock::Mode;
/// assert_ne!(Mode::Check, Mode::Overwrite);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Compare the registry with the lock.
    Check,
    /// Rewrite the lock from the registry.
    Overwrite,
}

impl Mode {
    /// `Overwrite` when `TOOL_CONTRACT_LOCK=overwrite`, `Check` when it is unset or empty.
    ///
    /// ```
    /// # use tool_contract::lock::Mode;
    /// if std::env::var_os("TOOL_CONTRACT_LOCK").is_none() {
    ///     assert_eq!(Mode::from_env().unwrap(), Mode::Check);
    /// }
    /// ```
    pub fn from_env() -> Result<Mode, LockError> {
        match std::env::var(ENV_VAR) {
            Err(std::env::VarError::NotPresent) => Ok(Mode::Check),
            Ok(v) if v.is_empty() => Ok(Mode::Check),
            Ok(v) if v == "overwrite" => Ok(Mode::Overwrite),
            Ok(v) => Err(LockError::BadEnv { value: v }),
            Err(std::env::VarError::NotUnicode(v)) => Err(LockError::BadEnv {
                value: v.to_string_lossy().into_owned(),
            }),
        }
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

/// Checks every tool version of `registry` against the lock at `path`, or rewrites the lock
/// when `TOOL_CONTRACT_LOCK=overwrite`.
///
/// Returns the report when the check passes (it may hold [`Finding::Bumped`] notes) and
/// [`LockError::Mismatch`] with the report when it fails.
///
/// ```
/// # use tool_contract::{tool, Tool, ToolArgs, ToolError, Registry};
/// # #[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
/// # #[serde(deny_unknown_fields)]
/// # struct PingArgs {}
/// # /// Checks that the service answers. Use it before other calls; it returns nothing else.
/// # #[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 100)]
/// # async fn ping_service(args: PingArgs) -> Result<bool, ToolError> { Ok(true) }
/// let registry = Registry::builder().tool(PingService).build().unwrap();
/// let path = std::env::temp_dir().join(format!("doc-check-{}.json", std::process::id()));
/// // No lock yet: the error says how to create one.
/// let err = tool_contract::lock::check(&registry, &path).unwrap_err();
/// assert!(err.to_string().contains("TOOL_CONTRACT_LOCK=overwrite"));
/// ```
pub fn check(registry: &Registry, path: impl AsRef<Path>) -> Result<LockReport, LockError> {
    check_contracts(registry.contracts(), path.as_ref(), Mode::from_env()?)
}

/// [`check`] for any set of contracts, with an explicit mode (no environment read).
///
/// ```
/// # use tool_contract::{tool, Tool, ToolArgs, ToolError};
/// # #[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
/// # #[serde(deny_unknown_fields)]
/// # struct PingArgs {}
/// /// Checks that the service answers. Use it before other calls; it returns nothing else.
/// #[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 100)]
/// async fn ping_service(args: PingArgs) -> Result<bool, ToolError> { Ok(true) }
///
/// use tool_contract::lock::{check_contracts, LockError, Mode};
/// let path = std::env::temp_dir().join(format!("doc-lock-{}.json", std::process::id()));
/// let mut contract = PingService::contract().clone();
/// check_contracts([&contract], &path, Mode::Overwrite).unwrap();
///
/// contract.timeout_ms = 900;
/// let Err(LockError::Mismatch(report)) = check_contracts([&contract], &path, Mode::Check) else {
///     panic!("a changed timeout must fail");
/// };
/// assert!(report.to_string().contains("`ping_service` 1.0.0: timeout_ms changed"));
/// # std::fs::remove_file(&path).unwrap();
/// ```
pub fn check_contracts<'a>(
    contracts: impl IntoIterator<Item = &'a ToolContract>,
    path: &Path,
    mode: Mode,
) -> Result<LockReport, LockError> {
    let current = Lock::from_contracts(contracts);
    let old = match (Lock::read(path), mode) {
        (Ok(old), _) => Some(old),
        (Err(_), Mode::Overwrite) => None,
        (Err(err), Mode::Check) => return Err(err),
    };
    let findings = old.map(|o| o.compare(&current)).unwrap_or_default();
    let rewritten = mode == Mode::Overwrite;
    if rewritten {
        current.write(path)?;
    }
    let report = LockReport {
        path: path.to_owned(),
        findings,
        rewritten,
    };
    if report.is_ok() {
        Ok(report)
    } else {
        Err(LockError::Mismatch(report))
    }
}

/// [`check`] that panics with the readable report on failure, and prints notes (bumped
/// versions to record) to stderr: for tests. [`assert_locked!`](crate::assert_locked) fills in
/// the path next to the crate's `Cargo.toml`.
///
/// ```should_panic
/// # use tool_contract::{tool, Tool, ToolArgs, ToolError, Registry};
/// # #[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
/// # #[serde(deny_unknown_fields)]
/// # struct PingArgs {}
/// # /// Checks that the service answers. Use it before other calls; it returns nothing else.
/// # #[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 100)]
/// # async fn ping_service(args: PingArgs) -> Result<bool, ToolError> { Ok(true) }
/// let registry = Registry::builder().tool(PingService).build().unwrap();
/// // Panics: there is no lock at this path.
/// tool_contract::lock::assert_locked(&registry, "/nonexistent/tools.lock.json");
/// ```
#[track_caller]
pub fn assert_locked(registry: &Registry, path: impl AsRef<Path>) {
    match check(registry, path) {
        Ok(report) => {
            if !report.findings.is_empty() {
                eprintln!("{report}");
            }
        }
        Err(err) => panic!("{err}"),
    }
}

/// Asserts that a registry matches its contract lock, by default `tools.lock.json` next to
/// the calling crate's `Cargo.toml`; see the [`lock`](crate::lock) module.
///
/// ```no_run
/// # let registry: tool_contract::Registry = unimplemented!();
/// tool_contract::assert_locked!(&registry);
/// tool_contract::assert_locked!(&registry, "tests/tools.lock.json");
/// ```
#[macro_export]
macro_rules! assert_locked {
    ($registry:expr $(,)?) => {
        $crate::lock::assert_locked(
            $registry,
            ::core::concat!(::core::env!("CARGO_MANIFEST_DIR"), "/tools.lock.json"),
        )
    };
    ($registry:expr, $path:expr $(,)?) => {
        $crate::lock::assert_locked(
            $registry,
            ::std::path::Path::new(::core::env!("CARGO_MANIFEST_DIR")).join($path),
        )
    };
}
