//! `cargo +nightly fuzz run digest`: see `tool_contract_tests::fuzz::digest` for the property.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tool_contract_tests::fuzz::digest(data));
