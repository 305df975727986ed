//! Effect classes, as runtime data and as marker types for type-level toolsets.

use std::fmt;

use serde::{Deserialize, Serialize};

/// What running a tool does to the world: the effect class that decides approval, retries
/// and idempotency.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Effect {
    /// Reads data the host owns; no side effects.
    PureRead,
    /// Reads from a system outside the host (web, third-party API); no side effects.
    ExternalRead,
    /// Changes state in a way that can be undone (a draft ticket).
    ReversibleWrite,
    /// Changes state for good (an e-mail sent, a document deleted).
    IrreversibleWrite,
}

impl Effect {
    /// The attribute spelling, e.g. `"irreversible_write"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Effect::PureRead => "pure_read",
            Effect::ExternalRead => "external_read",
            Effect::ReversibleWrite => "reversible_write",
            Effect::IrreversibleWrite => "irreversible_write",
        }
    }

    /// Whether the tool changes state.
    pub const fn is_write(self) -> bool {
        matches!(self, Effect::ReversibleWrite | Effect::IrreversibleWrite)
    }
}

impl fmt::Display for Effect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

mod sealed {
    pub trait Sealed {}
}

/// A type-level effect class; `#[tool]` sets [`Tool::Effect`](crate::Tool::Effect) to one of
/// [`PureRead`], [`ExternalRead`], [`ReversibleWrite`] or [`IrreversibleWrite`].
pub trait EffectClass: sealed::Sealed + Send + Sync + 'static {
    /// The runtime value of this class.
    const EFFECT: Effect;
}

/// A toolset's access level: [`ReadOnly`] or [`ReadWrite`].
pub trait Access: sealed::Sealed + Send + Sync + 'static {}

/// Access level of a toolset that may hold only `pure_read` and `external_read` tools.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReadOnly;
/// Access level of a toolset that may hold tools of every effect class.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReadWrite;
impl sealed::Sealed for ReadOnly {}
impl sealed::Sealed for ReadWrite {}
impl Access for ReadOnly {}
impl Access for ReadWrite {}

/// Proof that a tool of this effect class may join a toolset of access level `A`.
///
/// It is sealed: the only impls are "every class in [`ReadWrite`]" and "the two read classes in
/// [`ReadOnly`]", so handing a write tool to a read-only agent is a type error.
#[diagnostic::on_unimplemented(
    message = "a `{Self}` tool cannot join a `Toolset<{A}>`",
    label = "this tool has a write effect",
    note = "a read-only toolset accepts only `pure_read` and `external_read` tools",
    note = "give write tools to a `Toolset<ReadWrite>` (the default `Toolset`) instead"
)]
pub trait PermittedIn<A: Access>: sealed::Sealed {}

macro_rules! effect_markers {
    ($($(#[$doc:meta])* $ty:ident;)*) => {$(
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default)]
        pub struct $ty;
        impl sealed::Sealed for $ty {}
        impl EffectClass for $ty {
            const EFFECT: Effect = Effect::$ty;
        }
    )*};
}

effect_markers! {
    /// Type-level [`Effect::PureRead`].
    PureRead;
    /// Type-level [`Effect::ExternalRead`].
    ExternalRead;
    /// Type-level [`Effect::ReversibleWrite`].
    ReversibleWrite;
    /// Type-level [`Effect::IrreversibleWrite`].
    IrreversibleWrite;
}

// Written out, not generated, so a rejected write tool's error points at plain impls.
impl PermittedIn<ReadOnly> for PureRead {}
impl PermittedIn<ReadOnly> for ExternalRead {}
impl PermittedIn<ReadWrite> for PureRead {}
impl PermittedIn<ReadWrite> for ExternalRead {}
impl PermittedIn<ReadWrite> for ReversibleWrite {}
impl PermittedIn<ReadWrite> for IrreversibleWrite {}
