//! The contract lock: a checked-in `tools.lock.json` that keeps every tool version's whole
//! contract, so a change is caught, classified and held to a big enough version bump.
//!
//! Each entry records a tool name and version, its contract as JSON (description, input and
//! output schemas, error model, effect, authorization, approval, timeout, retry, idempotency,
//! policy version, provenance), and the [`canonical`](crate::canonical) digests of the
//! contract, of each schema and of each policy part ([`PARTS`]). The implementation id (crate
//! version and git revision) is not locked: it changes with every commit. Two locks compare
//! without the code that produced them (the `tool-contract diff OLD NEW` command of the `cli`
//! feature).
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
//! Every change is classified by [`evolve`](crate::evolve) as major, major (security), minor or
//! patch, and:
//! - a tool whose contract changed with the same version fails, naming each change, its
//!   class, the bump it needs and the smallest version that passes;
//! - a newer version passes when its bump covers the changes (with a note to record it), and
//!   fails when it is too small (a patch bump for a new required property);
//! - a security change (effect escalated, approval weakened, a capability dropped, ...) needs
//!   a major bump **and** a reviewer's note in the new version's lock entry (`review.note`);
//! - a tool missing from the lock, a locked tool gone from the registry, or one version of a
//!   tool gone while others remain, fails until the lock is rewritten;
//! - `TOOL_CONTRACT_LOCK=overwrite cargo test` rewrites the lock from the registry (like
//!   `TRYBUILD=overwrite`), keeping reviewers' notes and adding an empty one where a security
//!   change needs it; review the diff and commit it with the version bumps.
//!
//! A lock written before whole contracts were kept (format 1, hashes only) is still read: a
//! change is then found by its hash but cannot be classified, and the check asks for the
//! lock to be rewritten, which upgrades it.

mod compare;
mod finding;
mod report;

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::evolve::{ChangeClass, Rules};
use crate::schema::schema_hash;
use crate::{Registry, ToolContract};

pub use finding::{Finding, LockError, LockReport};
pub use report::{ChangeRow, DiffReport, ToolRow};

/// The environment variable that switches [`check`] to rewriting the lock.
///
/// ```
/// assert_eq!(tool_contract::lock::ENV_VAR, "TOOL_CONTRACT_LOCK");
/// ```
pub const ENV_VAR: &str = "TOOL_CONTRACT_LOCK";

/// The lock format this version writes: 2 keeps whole contracts; 1 kept hashes only.
pub const FORMAT: u32 = 2;

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
    "max_output_bytes",
    "open_output",
    "depends_on",
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
/// assert_eq!(lock.tools[0].contract.as_ref().unwrap()["timeout_ms"], 100);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Lock {
    /// The lock format: [`FORMAT`] for locks this version writes, 1 for hash-only locks.
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
/// assert!(entry.review.is_none());
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
    /// A reviewer's note on this version's security changes, when it has any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review: Option<Review>,
    /// The whole contract as JSON, without its fingerprint (absent in format-1 locks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contract: Option<Value>,
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
/// assert_eq!(fp.contract_sha256, PingService::contract().fingerprint.contract_sha256);
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

/// A reviewer's note on a version's security changes (`review` in a lock entry).
///
/// A version whose contract became more dangerous than the one before it (see
/// [`ChangeClass::Security`]) passes only with a note that says why that is acceptable.
/// `TOOL_CONTRACT_LOCK=overwrite` writes the entry with an empty note and the changes to
/// review; the check fails until someone fills the note in.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Review {
    /// Why the security changes are acceptable, and who says so. Empty: not reviewed yet.
    pub note: String,
    /// The security changes under review, as readable lines (written by the rewrite).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<String>,
}

impl Review {
    /// Whether the note is still to be written (empty or blank).
    pub fn is_pending(&self) -> bool {
        self.note.trim().is_empty()
    }
}

impl LockEntry {
    /// The entry of `contract` as it is now (see [`LockEntry`] for an example).
    pub fn of(contract: &ToolContract) -> Self {
        let value = serde_json::to_value(contract).unwrap_or_default();
        let mut entry = LockEntry::from_value(value);
        // The typed contract knows its name and version even if its JSON were odd.
        entry.name.clone_from(&contract.name);
        entry.version.clone_from(&contract.version);
        entry
    }

    /// The entry of a contract given as JSON, as `--contracts` prints it or a lock keeps it;
    /// `None` when it has no string `name` and `version`.
    ///
    /// Fields this version of the crate does not know are kept, hashed and compared (as
    /// changes the classifier does not understand).
    ///
    /// ```
    /// let contract = serde_json::json!({
    ///     "name": "ping_service", "version": "1.0.0", "effect": "pure_read",
    ///     "fingerprint": {"implementation": "my-crate@0.3.0"},
    /// });
    /// let entry = tool_contract::lock::LockEntry::from_contract(contract).unwrap();
    /// assert_eq!(entry.version, "1.0.0");
    /// assert!(entry.contract.unwrap().get("fingerprint").is_none(), "the fingerprint is not kept");
    /// assert!(tool_contract::lock::LockEntry::from_contract(serde_json::json!([1])).is_none());
    /// ```
    pub fn from_contract(contract: Value) -> Option<Self> {
        let name = contract.get("name")?.as_str()?;
        let version = contract.get("version")?.as_str()?;
        if !contract.is_object() {
            return None;
        }
        let (name, version) = (name.to_owned(), version.to_owned());
        let mut entry = LockEntry::from_value(contract);
        entry.name = name;
        entry.version = version;
        Some(entry)
    }

    fn from_value(mut contract: Value) -> Self {
        if let Some(map) = contract.as_object_mut() {
            map.remove("fingerprint");
        }
        let text = |key: &str| {
            contract
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        LockEntry {
            name: text("name"),
            version: text("version"),
            fingerprint: fingerprint_of(&contract),
            review: None,
            contract: Some(contract),
        }
    }
}

/// The hashes of a contract kept in a lock (without its fingerprint).
fn fingerprint_of(contract: &Value) -> LockedFingerprint {
    let field = |key: &str| contract.get(key).unwrap_or(&Value::Null);
    LockedFingerprint {
        input_schema_sha256: schema_hash(field("input_schema")),
        output_schema_sha256: schema_hash(field("output_schema")),
        contract_sha256: crate::canonical::sha256(contract),
        parts: PARTS
            .iter()
            .map(|p| ((*p).to_owned(), crate::canonical::sha256(field(p))))
            .collect(),
    }
}

impl Lock {
    /// The lock of `contracts`, sorted by name then version (see [`Lock`] for an example).
    pub fn from_contracts<'a>(contracts: impl IntoIterator<Item = &'a ToolContract>) -> Self {
        Self::from_entries(contracts.into_iter().map(LockEntry::of).collect())
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
    /// assert_eq!(lock.format, tool_contract::lock::FORMAT);
    /// assert_eq!(lock.tools.len(), 1);
    /// ```
    pub fn from_registry(registry: &Registry) -> Self {
        Self::from_contracts(registry.contracts())
    }

    fn from_entries(mut tools: Vec<LockEntry>) -> Self {
        tools.sort_by(|a, b| {
            (&a.name, version_key(&a.version)).cmp(&(&b.name, version_key(&b.version)))
        });
        Lock {
            format: FORMAT,
            tools,
        }
    }

    /// Reads a lock from JSON text: a lock file (format 1 or 2), or a JSON array of contracts
    /// as a registry's contracts serialize (the examples' `demo --contracts`).
    ///
    /// A format-2 entry whose contract does not match its recorded hashes is refused: the
    /// lock was edited by hand, and what it says cannot be trusted.
    ///
    /// ```
    /// use tool_contract::lock::Lock;
    /// let contracts = r#"[{"name": "ping_service", "version": "1.0.0", "effect": "pure_read"}]"#;
    /// let lock = Lock::from_json(contracts).unwrap();
    /// assert_eq!(lock.tools[0].name, "ping_service");
    ///
    /// let err = Lock::from_json(r#"{"format": 9, "tools": []}"#).unwrap_err();
    /// assert!(err.contains("format 9"), "{err}");
    /// ```
    pub fn from_json(text: &str) -> Result<Lock, String> {
        let value: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
        if let Value::Array(contracts) = value {
            let mut entries = Vec::with_capacity(contracts.len());
            for (i, contract) in contracts.into_iter().enumerate() {
                let entry = LockEntry::from_contract(contract).ok_or_else(|| {
                    format!("contract #{i} is not a tool contract (it needs a string `name` and `version`)")
                })?;
                entries.push(entry);
            }
            return Ok(Self::from_entries(entries));
        }
        let format = value
            .get("format")
            .and_then(Value::as_u64)
            .ok_or("no `format` number: this is neither a contract lock nor a list of contracts")?;
        if format == 0 || format > u64::from(FORMAT) {
            return Err(format!(
                "format {format} is not one this version of tool-contract reads (1 to {FORMAT}); upgrade tool-contract"
            ));
        }
        let lock: Lock = serde_json::from_value(value).map_err(|e| e.to_string())?;
        if lock.format >= 2 {
            for entry in &lock.tools {
                verify(entry)?;
            }
        }
        Ok(lock)
    }

    /// Reads a lock file (see [`Lock::from_json`]).
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
        Lock::from_json(&text).map_err(|message| LockError::Parse {
            path: path.to_owned(),
            message,
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

    /// What differs between this lock (the old state) and `current`, with the default
    /// [`Rules`]; see [`Finding`] for what each difference means.
    ///
    /// ```
    /// # use tool_contract::lock::{Finding, Lock};
    /// # use tool_contract::evolve::{Bump, ChangeKind};
    /// # use tool_contract::{tool, Tool, ToolArgs, ToolError, Registry};
    /// # #[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
    /// # #[serde(deny_unknown_fields)]
    /// # struct PingArgs {}
    /// #     /// Checks that the service answers. Use it before other calls; it returns nothing else.
    /// # #[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 100)]
    /// # async fn ping_service(args: PingArgs) -> Result<bool, ToolError> { Ok(true) }
    /// let locked = Lock::from_contracts([PingService::contract()]);
    /// let mut changed = PingService::contract().clone();
    /// changed.timeout_ms = 50;
    /// let findings = locked.compare(&Lock::from_contracts([&changed]));
    /// let [Finding::Changed { changes, required, smallest, .. }] = &findings[..] else { panic!() };
    /// assert_eq!(changes[0].kind, ChangeKind::TimeoutLowered);
    /// assert_eq!((*required, smallest.as_deref()), (Bump::Major, Some("2.0.0")));
    /// ```
    pub fn compare(&self, current: &Lock) -> Vec<Finding> {
        compare::compare(self, current, &Rules::default())
    }

    /// [`Lock::compare`] with explicit [`Rules`].
    pub fn compare_with(&self, current: &Lock, rules: &Rules) -> Vec<Finding> {
        compare::compare(self, current, rules)
    }

    /// Entries whose reviewer's note is still to be written.
    fn pending_reviews(&self) -> Vec<Finding> {
        self.tools
            .iter()
            .filter_map(|e| {
                let review = e.review.as_ref().filter(|r| r.is_pending())?;
                Some(Finding::ReviewPending {
                    tool: e.name.clone(),
                    version: e.version.clone(),
                    changes: review.changes.clone(),
                })
            })
            .collect()
    }
}

/// A format-2 entry's contract must match its hashes, name and version.
fn verify(entry: &LockEntry) -> Result<(), String> {
    let who = format!("`{}` {}", entry.name, entry.version);
    let Some(contract) = &entry.contract else {
        return Err(format!("{who}: the entry has no `contract`"));
    };
    let named = contract.get("name").and_then(Value::as_str) == Some(entry.name.as_str())
        && contract.get("version").and_then(Value::as_str) == Some(entry.version.as_str());
    if !named || fingerprint_of(contract) != entry.fingerprint {
        return Err(format!(
            "{who}: the kept contract does not match the entry's name, version or hashes (was the lock edited by hand?)"
        ));
    }
    Ok(())
}

/// Semver order where the version parses, string order otherwise.
fn version_key(v: &str) -> (Option<semver::Version>, &str) {
    (semver::Version::parse(v).ok(), v)
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
/// let text = report.to_string();
/// assert!(text.contains("`ping_service` 1.0.0: the contract changed but the version did not"), "{text}");
/// assert!(text.contains("smallest passing version: 1.1.0"), "{text}");
///
/// contract.version = "1.1.0".into();
/// assert!(check_contracts([&contract], &path, Mode::Check).unwrap().is_ok());
/// # std::fs::remove_file(&path).unwrap();
/// ```
pub fn check_contracts<'a>(
    contracts: impl IntoIterator<Item = &'a ToolContract>,
    path: &Path,
    mode: Mode,
) -> Result<LockReport, LockError> {
    let mut current = Lock::from_contracts(contracts);
    let old = match (Lock::read(path), mode) {
        (Ok(old), _) => Some(old),
        (Err(_), Mode::Overwrite) => None,
        (Err(err), Mode::Check) => return Err(err),
    };
    let mut findings = Vec::new();
    if let Some(old) = &old {
        if old.format < FORMAT {
            findings.push(Finding::OldFormat { format: old.format });
        }
        findings.extend(old.compare(&current));
    }
    let rewritten = mode == Mode::Overwrite;
    if rewritten {
        carry_reviews(old.as_ref(), &mut current, &findings);
        current.write(path)?;
        // The notes a reviewer still has to write are what stands between the rewrite and a
        // passing check.
        findings.retain(|f| !matches!(f, Finding::ReviewMissing { .. }));
        findings.extend(current.pending_reviews());
    } else if let Some(old) = &old {
        findings.extend(old.pending_reviews());
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

/// Keeps the reviewers' notes of versions still in the registry, and opens an empty one on
/// each new version with security changes.
fn carry_reviews(old: Option<&Lock>, current: &mut Lock, findings: &[Finding]) {
    for entry in &mut current.tools {
        entry.review = old.and_then(|old| {
            old.tools
                .iter()
                .find(|e| e.name == entry.name && e.version == entry.version)
                .and_then(|e| e.review.clone())
        });
        if entry.review.is_some() {
            continue;
        }
        for finding in findings {
            if let Finding::ReviewMissing {
                tool, to, changes, ..
            } = finding
            {
                if *tool == entry.name && *to == entry.version {
                    entry.review = Some(Review {
                        note: String::new(),
                        changes: changes
                            .iter()
                            .filter(|c| c.class == ChangeClass::Security)
                            .map(ToString::to_string)
                            .collect(),
                    });
                }
            }
        }
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
