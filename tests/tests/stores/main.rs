//! Every store backend passes the same conformance suite, through the real pipeline.
//!
//! `conformance.rs` holds the cases; each backend module implements [`conformance::Backend`]
//! and expands `conformance_tests!` to get one test per case.

#[macro_use]
mod conformance;
mod crash;
mod memory;
mod postgres;
mod sqlite;
