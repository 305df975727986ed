//! Plain Draft 2020-12: the canonical schemas, untouched, as the pipeline validates them.
//!
//! Each tool is `{name, version, description, input_schema, output_schema}` (plus
//! `model_view_schema` for a tool with a model view); nothing is
//! dropped or renamed, so this is the export to diff, audit, or feed to a JSON Schema tool.

use serde_json::{json, Value};

use crate::ToolContract;

pub(super) fn tool(contract: &ToolContract) -> Value {
    let mut tool = json!({
        "name": contract.name,
        "version": contract.version,
        "description": contract.description,
        "input_schema": contract.input_schema,
        "output_schema": contract.output_schema,
    });
    // Only for a tool that declares one: what the model sees instead of the whole output.
    if let Some(view) = &contract.model_view_schema {
        tool["model_view_schema"] = view.clone();
    }
    tool
}
