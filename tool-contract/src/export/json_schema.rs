//! Plain Draft 2020-12: the canonical schemas, untouched, as the pipeline validates them.
//!
//! Each tool is `{name, version, description, input_schema, output_schema}`; nothing is
//! dropped or renamed, so this is the export to diff, audit, or feed to a JSON Schema tool.

use serde_json::{json, Value};

use crate::ToolContract;

pub(super) fn tool(contract: &ToolContract) -> Value {
    json!({
        "name": contract.name,
        "version": contract.version,
        "description": contract.description,
        "input_schema": contract.input_schema,
        "output_schema": contract.output_schema,
    })
}
