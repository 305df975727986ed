//! `cargo +nightly fuzz run envelope`: see `tool_contract_tests::fuzz::envelope` for the property.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tool_contract_tests::fuzz::envelope(data));
