//! Replays the fuzz targets' checked-in corpus (`tool-contract/fuzz/corpus/<target>/`) through
//! the same checks the targets run, so every input the fuzzer kept, and every crash it found
//! (added to the corpus once fixed), is a test on stable.

use std::path::PathBuf;

use tool_contract_tests::fuzz;

fn replay(target: &str, check: fn(&[u8])) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tool-contract/fuzz/corpus")
        .join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("a corpus entry").path())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no corpus for {target}");
    for file in &files {
        let data = std::fs::read(file).expect("a corpus file");
        let outcome = std::panic::catch_unwind(|| check(&data));
        assert!(outcome.is_ok(), "{target}: {} failed", file.display());
    }
    println!("fuzz corpus {target}: {} inputs replayed", files.len());
}

#[test]
fn proposal_corpus() {
    replay("proposal", fuzz::proposal);
}

#[test]
fn envelope_corpus() {
    replay("envelope", fuzz::envelope);
}

#[test]
fn digest_corpus() {
    replay("digest", fuzz::digest);
}

#[test]
fn mcp_request_corpus() {
    replay("mcp_request", fuzz::mcp_request);
}
