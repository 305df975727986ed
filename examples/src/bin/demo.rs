//! Prints the contracts of the seed's five tools as JSON, then their fingerprints.

use tool_contract::Toolset;
use tool_contract_examples::{
    CreateDraftTicket, DeleteDocument, ReadDocumentSpan, SearchDocuments, SendEmail,
};

fn main() {
    let tools = Toolset::new()
        .with(SearchDocuments)
        .with(ReadDocumentSpan)
        .with(CreateDraftTicket)
        .with(SendEmail)
        .with(DeleteDocument);
    let contracts: Vec<_> = tools.contracts().collect();
    match serde_json::to_string_pretty(&contracts) {
        Ok(json) => println!("{json}"),
        Err(err) => {
            eprintln!("error: cannot serialize the contracts: {err}");
            std::process::exit(1);
        }
    }
    println!();
    println!(
        "{:<22} {:<8} {:<19} {:<8} {:<10}  input / output / contract sha256",
        "tool", "version", "effect", "approval", "retry"
    );
    for c in &contracts {
        let fp = &c.fingerprint;
        println!(
            "{:<22} {:<8} {:<19} {:<8} {:<10}  {} / {} / {}",
            c.name,
            c.version,
            c.effect.as_str(),
            serde_json::to_value(c.approval)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default(),
            format!("x{}", c.retry.max_attempts),
            &fp.input_schema_sha256[7..19],
            &fp.output_schema_sha256[7..19],
            &fp.contract_sha256[7..19],
        );
    }
    if let Some(c) = contracts.first() {
        println!("\nimplementation: {}", c.fingerprint.implementation);
    }
}
