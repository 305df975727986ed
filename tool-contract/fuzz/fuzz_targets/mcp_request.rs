//! `cargo +nightly fuzz run mcp_request`: see `tool_contract_tests::fuzz::mcp_request` for the property.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tool_contract_tests::fuzz::mcp_request(data));
