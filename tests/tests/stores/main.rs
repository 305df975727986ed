//! Every store backend passes the same conformance suite, through the real pipeline.
//!
//! `conformance.rs` holds the cases; each backend module implements [`conformance::Backend`]
//! and expands `conformance_tests!` to get one test per case; `pending.rs` holds the
//! deferred-approval cases, expanded by `pending_tests!` the same way.

#[macro_use]
mod conformance;
#[macro_use]
mod pending;
mod crash;
mod memory;
mod postgres;
mod sqlite;
