//! Type-level toolsets: what an agent may be handed is checked by the compiler.

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use crate::contract::ToolContract;
use crate::effect::{Access, PermittedIn, ReadOnly, ReadWrite};
use crate::entry::Runner;
use crate::tool::{DynTool, Tool};

/// A set of tools for one agent, whose access level `A` bounds the effects it may contain.
///
/// ```
/// use tool_contract::{ReadOnlyToolset, Toolset};
/// # use tool_contract::{tool, ToolArgs, ToolError};
/// # #[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
/// # #[serde(deny_unknown_fields)]
/// # struct PingArgs {}
/// # /// Checks that the service answers. Use it before other calls; it returns nothing useful.
/// # #[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 100)]
/// # async fn ping_service(args: PingArgs) -> Result<bool, ToolError> { Ok(true) }
///
/// let reader = ReadOnlyToolset::new().with(PingService);
/// assert_eq!(reader.len(), 1);
/// // A read-only set widens into a read-write one, never the other way round.
/// let writer: Toolset = reader.into();
/// assert_eq!(writer.contracts().next().unwrap().name, "ping_service");
/// ```
///
/// Adding a write tool to a [`ReadOnlyToolset`] does not compile:
///
/// ```compile_fail
/// # use tool_contract::{tool, ReadOnlyToolset, ToolArgs, ToolError};
/// # #[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
/// # #[serde(deny_unknown_fields)]
/// # struct WipeArgs {
/// #     /// Key that makes a repeated wipe harmless.
/// #     #[tool(idempotency_key)]
/// #     #[schemars(length(min = 1, max = 64))]
/// #     key: String,
/// # }
/// # /// Wipes the cache. Use it only when asked to; it cannot be undone.
/// # #[tool(version = "1.0.0", effect = "irreversible_write", approval, timeout_ms = 100)]
/// # async fn wipe_cache(args: WipeArgs) -> Result<bool, ToolError> { Ok(true) }
/// let reader = ReadOnlyToolset::new().with(WipeCache);
/// ```
pub struct Toolset<A: Access = ReadWrite> {
    tools: Vec<Arc<dyn Runner>>,
    _access: PhantomData<fn() -> A>,
}

/// A toolset that holds only `pure_read` and `external_read` tools.
pub type ReadOnlyToolset = Toolset<ReadOnly>;

impl<A: Access> Toolset<A> {
    /// An empty toolset.
    pub fn new() -> Self {
        Toolset {
            tools: Vec::new(),
            _access: PhantomData,
        }
    }

    /// Adds a tool whose effect class this toolset's access level permits.
    #[must_use]
    pub fn with<T: Tool>(mut self, tool: T) -> Self
    where
        T::Effect: PermittedIn<A>,
    {
        self.tools.push(Arc::new(tool));
        self
    }

    /// The tools, in insertion order.
    pub fn tools(&self) -> impl Iterator<Item = &dyn DynTool> {
        self.tools.iter().map(|t| &**t as &dyn DynTool)
    }

    pub(crate) fn runners(self) -> Vec<Arc<dyn Runner>> {
        self.tools
    }

    /// The contracts, in insertion order.
    pub fn contracts(&self) -> impl Iterator<Item = &'static ToolContract> + '_ {
        self.tools.iter().map(|t| t.contract())
    }

    /// The number of tools.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }
}

impl<A: Access> Default for Toolset<A> {
    fn default() -> Self {
        Self::new()
    }
}

impl<A: Access> Clone for Toolset<A> {
    fn clone(&self) -> Self {
        Toolset {
            tools: self.tools.clone(),
            _access: PhantomData,
        }
    }
}

impl<A: Access> fmt::Debug for Toolset<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(
                self.contracts()
                    .map(|c| format!("{}@{}", c.name, c.version)),
            )
            .finish()
    }
}

impl From<Toolset<ReadOnly>> for Toolset<ReadWrite> {
    fn from(set: Toolset<ReadOnly>) -> Self {
        Toolset {
            tools: set.tools,
            _access: PhantomData,
        }
    }
}
