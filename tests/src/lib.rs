//! Integration, UI and property tests for tool-contract live under `tests/`; this library
//! holds what is shared with the fuzz targets under `tool-contract/fuzz/`.

pub mod fuzz;
