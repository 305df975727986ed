//! The SQL store tests, until `stores/main.rs` declares `mod postgres; mod sqlite;` (then
//! this file goes): the same modules, with the conformance suite at the same path.

#[macro_use]
#[path = "stores/conformance.rs"]
mod conformance;
#[path = "stores/postgres.rs"]
mod postgres;
#[path = "stores/sqlite.rs"]
mod sqlite;
