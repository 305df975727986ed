//! `cargo +nightly fuzz run proposal`: see `tool_contract_tests::fuzz::proposal` for the property.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tool_contract_tests::fuzz::proposal(data));
