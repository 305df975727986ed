//! Records the git revision for the tools' fingerprints (`implementation: crate@ver+git.<rev>`).
//! Without git (a source tarball) the fingerprint simply carries no revision.

use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=TOOL_CONTRACT_GIT_REVISION");
    if std::env::var_os("TOOL_CONTRACT_GIT_REVISION").is_some() {
        return;
    }
    let rev = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty());
    if let Some(rev) = rev {
        println!("cargo:rustc-env=TOOL_CONTRACT_GIT_REVISION={rev}");
    }
}
