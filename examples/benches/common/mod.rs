//! What the benches share: where criterion writes, how long it measures, and reading back a
//! mean from this run's estimates for the ratio tables BENCHMARKS.md records.

use std::path::PathBuf;
use std::time::Duration;

use criterion::Criterion;

pub fn out_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target"))
        .join("criterion")
}

pub fn criterion() -> Criterion {
    Criterion::default()
        .output_directory(&out_dir())
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args()
}

/// The mean of `group/id` in this run, in nanoseconds.
pub fn mean_ns(group: &str, id: &str) -> Option<f64> {
    let path = out_dir().join(group).join(id).join("new/estimates.json");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
    v["mean"]["point_estimate"].as_f64()
}
