//! Which tools one caller sees in `tools/list`, and at which version: exactly what its calls
//! would run.
//!
//! For each tool name the listed version is chosen the way the registry's lookup chooses the
//! version a call runs (the context's pin, by version or by digest, else the newest), so the
//! listed `inputSchema` is the schema the call is validated against. A tool is left out when
//! its pin names no registered version (a call would fail with `TOOL_VERSION_NOT_FOUND`) or,
//! unless [`McpServerBuilder::hide_unauthorized`](super::McpServerBuilder::hide_unauthorized)
//! turned it off, when the context lacks a capability the chosen version requires (a call
//! would fail with `UNAUTHORIZED`, as it always did).
//!
//! A view is identified by its [`ViewKey`], the chosen version of every name; every entry is
//! built once, when the server is, and the lists are cached per key, so listing costs one
//! pin lookup and one capability check per tool name.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::Tool;

use crate::context::{ToolContext, ToolPin};
use crate::contract::ToolContract;
use crate::registry::Registry;

/// Distinct views kept; past it the cache starts over (a view is cheap to rebuild, and a host
/// that gives every caller its own capability set must not make the cache grow without bound).
const MAX_CACHED_VIEWS: usize = 256;

/// Marks a tool left out of a view.
const HIDDEN: u16 = u16::MAX;

/// The chosen version of every tool name, in name order ([`HIDDEN`] when left out): two
/// contexts with the same key see the same list.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) struct ViewKey(Vec<u16>);

/// Every tool name's versions, newest first, each with its `tools/list` entry.
#[derive(Default)]
pub(super) struct Exposure {
    names: Vec<Named>,
    hide_unauthorized: bool,
    cache: Mutex<HashMap<ViewKey, Arc<[Tool]>>>,
}

struct Named {
    name: String,
    versions: Vec<Version>,
}

struct Version {
    contract: &'static ToolContract,
    tool: Tool,
}

impl Exposure {
    pub(super) fn new(registry: &Registry, hide_unauthorized: bool) -> Self {
        let mut names: Vec<Named> = Vec::new();
        // `contracts()` is sorted by name, newest version first: the catalog's own order.
        for contract in registry.contracts() {
            let Some(tool) = tool(contract) else { continue };
            let version = Version { contract, tool };
            match names.last_mut() {
                Some(named) if named.name == contract.name => named.versions.push(version),
                _ => names.push(Named {
                    name: contract.name.clone(),
                    versions: vec![version],
                }),
            }
        }
        Exposure {
            names,
            hide_unauthorized,
            cache: Mutex::new(HashMap::new()),
        }
    }

    /// The view `ctx` gets.
    pub(super) fn key(&self, ctx: &ToolContext) -> ViewKey {
        ViewKey(
            self.names
                .iter()
                .map(|named| self.choose(named, ctx).unwrap_or(HIDDEN))
                .collect(),
        )
    }

    /// The tools listed in view `key`.
    pub(super) fn tools(&self, key: &ViewKey) -> Arc<[Tool]> {
        let mut cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(tools) = cache.get(key) {
            return Arc::clone(tools);
        }
        let tools: Arc<[Tool]> = self
            .names
            .iter()
            .zip(&key.0)
            .filter_map(|(named, &i)| named.versions.get(usize::from(i)))
            .map(|v| v.tool.clone())
            .collect();
        if cache.len() >= MAX_CACHED_VIEWS {
            cache.clear();
        }
        cache.insert(key.clone(), Arc::clone(&tools));
        tools
    }

    /// The newest version's entry of `name`, for rmcp's context-free lookups.
    pub(super) fn newest(&self, name: &str) -> Option<Tool> {
        let named = self.names.iter().find(|n| n.name == name)?;
        named.versions.first().map(|v| v.tool.clone())
    }

    /// Whether `name` is a registered tool.
    pub(super) fn knows(&self, name: &str) -> bool {
        self.names.iter().any(|n| n.name == name)
    }

    /// The index of the version `ctx` would call, or `None` when the tool is not listed.
    fn choose(&self, named: &Named, ctx: &ToolContext) -> Option<u16> {
        // The same choice as the catalog's lookup: a pin, else the newest.
        let index = match ctx.pin(&named.name) {
            None => 0,
            Some(ToolPin::Version(pin)) => named
                .versions
                .iter()
                .position(|v| v.contract.version == *pin)?,
            Some(ToolPin::Digest(pin)) => named
                .versions
                .iter()
                .position(|v| v.contract.fingerprint.contract_sha256 == *pin)?,
        };
        let version = named.versions.get(index)?;
        if self.hide_unauthorized
            && !version
                .contract
                .authorization
                .capabilities
                .iter()
                .all(|c| ctx.has_capability(c))
        {
            return None;
        }
        // More versions of one name than a u16 holds cannot be listed distinctly; none is.
        u16::try_from(index).ok().filter(|&i| i != HIDDEN)
    }
}

/// One contract's entry as rmcp's type.
fn tool(contract: &ToolContract) -> Option<Tool> {
    match serde_json::from_value::<Tool>(crate::export::mcp::tool_entry(contract)) {
        Ok(tool) => Some(tool),
        Err(err) => {
            // Cannot happen for entries `tool_entry` builds; never hide it silently.
            tracing::error!(error = %err, tool = %contract.name, "tool entry does not fit MCP's Tool type; not listed");
            None
        }
    }
}
