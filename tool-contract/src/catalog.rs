//! Stage 2, lookup: the registered tools by name, each with its versions newest first, and the
//! choice of the version a call runs (the one the context pins, else the newest).

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::context::{ToolContext, ToolPin};
use crate::contract::ToolContract;
use crate::entry::Entry;
use crate::error::ToolError;

/// Every registered tool version, built once.
pub(crate) struct Catalog {
    // A tree, not a hash map: built once, read per call, and for a few dozen names a few
    // string comparisons cost less than hashing the proposed name with SipHash.
    by_name: BTreeMap<String, Vec<Arc<Entry>>>,
}

impl Catalog {
    pub(crate) fn new(by_name: BTreeMap<String, Vec<Arc<Entry>>>) -> Self {
        Catalog { by_name }
    }

    /// Every entry, by name then newest version first.
    pub(crate) fn entries(&self) -> impl Iterator<Item = &Arc<Entry>> {
        self.by_name.values().flatten()
    }

    /// Every contract, by name then newest version first.
    pub(crate) fn contracts(&self) -> Vec<&'static ToolContract> {
        self.entries().map(|e| e.contract).collect()
    }

    /// The entry for `name`: the version the context pins, else the newest.
    pub(crate) fn lookup(&self, name: &str, ctx: &ToolContext) -> Result<&Arc<Entry>, ToolError> {
        let Some(versions) = self.by_name.get(name) else {
            // Only tools this caller could use: the list must not map the host's whole surface.
            let mut known: Vec<&str> = self
                .by_name
                .iter()
                .filter(|(_, versions)| {
                    versions.first().is_some_and(|e| {
                        e.contract
                            .authorization
                            .capabilities
                            .iter()
                            .all(|c| ctx.has_capability(c))
                    })
                })
                .map(|(name, _)| name.as_str())
                .collect();
            known.sort_unstable();
            return Err(ToolError::invalid_input(
                "UNKNOWN_TOOL",
                "no tool of this name is available",
            )
            .with_detail("tool", name.chars().take(128).collect::<String>())
            .with_detail("available", known));
        };
        let (found, key, pin) = match ctx.pin(name) {
            None => {
                return versions
                    .first()
                    .ok_or_else(|| ToolError::internal("NO_VERSIONS", "the tool has no version"))
            }
            Some(ToolPin::Version(pin)) => (
                versions.iter().find(|e| e.contract.version == *pin),
                "pinned_version",
                pin,
            ),
            Some(ToolPin::Digest(pin)) => (
                versions
                    .iter()
                    .find(|e| e.contract.fingerprint.contract_sha256 == *pin),
                "pinned_digest",
                pin,
            ),
        };
        found.ok_or_else(|| {
            ToolError::not_found(
                "TOOL_VERSION_NOT_FOUND",
                "the pinned version of this tool is not registered",
            )
            .with_detail("tool", name.to_owned())
            .with_detail(key, pin.chars().take(128).collect::<String>())
        })
    }
}
