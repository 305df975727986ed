//! Schema exports.

pub mod mcp;
