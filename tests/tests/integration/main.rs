//! Behaviour tests of the generated contracts, one module per topic (schemars layout).

mod adversarial;
mod approval;
mod approval_edit;
mod audit;
mod canonical;
mod contracts;
mod defaults;
mod deferred;
mod demo_flow;
mod executor;
mod export;
mod extractors;
mod fast_path;
mod flow;
mod lock;
mod model_view;
mod operator;
mod output_contract;
mod pipeline;
mod probe;
mod receipts;
mod schemas;
mod standing;

use tool_contract::{ToolContract, Toolset};
use tool_contract_examples::{
    CreateDraftTicket, DeleteDocument, ReadDocumentSpan, SearchDocuments, SendEmail,
};

/// The document service's five tools, in their reference order.
pub fn document_tools() -> Toolset {
    Toolset::new()
        .with(SearchDocuments)
        .with(ReadDocumentSpan)
        .with(CreateDraftTicket)
        .with(SendEmail)
        .with(DeleteDocument)
}

pub fn contract(name: &str) -> &'static ToolContract {
    document_tools()
        .contracts()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no tool {name}"))
}

/// Compares `value` with the snapshot file `tests/snapshots/{name}`, or rewrites the file under
/// `UPDATE_SNAPSHOTS=1`; returns what is stale, for one assertion listing every stale file.
pub fn stale_snapshot(name: &str, value: &serde_json::Value) -> Option<String> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/snapshots")
        .join(name);
    let text = serde_json::to_string_pretty(value).unwrap() + "\n";
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(&path, &text).unwrap();
        return None;
    }
    match std::fs::read_to_string(&path) {
        Ok(old) if old == text => None,
        Ok(_) => Some(format!("{} differs", path.display())),
        Err(_) => Some(format!("{} is missing", path.display())),
    }
}

/// The README's first program is the example that runs: they cannot drift apart.
#[test]
fn the_readme_quickstart_is_the_example_program() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let program = std::fs::read_to_string(root.join("examples/src/bin/quickstart.rs")).unwrap();
    let body: String = program
        .lines()
        .filter(|l| !l.starts_with("//!"))
        .skip_while(|l| l.is_empty())
        .map(|l| format!("{l}\n"))
        .collect();
    let block = format!("```rust\n{body}```\n");
    assert!(
        readme.contains(&block),
        "README.md's program must be examples/src/bin/quickstart.rs without its header comment"
    );
}
