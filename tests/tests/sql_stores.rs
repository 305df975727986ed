//! Temporary home of the SQL store tests until `stores/main.rs` includes them.

#[path = "stores/postgres.rs"]
mod postgres;
#[path = "stores/sqlite.rs"]
mod sqlite;
