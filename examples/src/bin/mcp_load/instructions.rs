//! `--instructions N`: servers A and B under callgrind, counting the instructions each spends
//! on N calls. Unlike CPU time, an instruction count does not depend on what else the machine
//! is doing, so a change of a few per cent shows in one run. It counts user-space work only:
//! the kernel's share (sockets, wake-ups) is not in it, and it is the same syscalls for both.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use super::{arguments, call_checked, Client, Expected, Server};

/// Calls per slot before counting starts: the sessions' first calls settle lazily built state.
const WARMUP_CALLS: usize = 20;

/// The callgrind dump prefix for a server: `DIR/mcp_load.LABEL.PID`, numbered per dump.
pub(super) fn out_prefix(dir: &Path, label: &str) -> PathBuf {
    dir.join(format!("mcp_load.{label}"))
}

/// The command that runs a server under callgrind with counting off until it is switched on.
pub(super) fn wrap(exe: &Path, prefix: &Path) -> Command {
    let mut command = Command::new("valgrind");
    command
        .arg("--tool=callgrind")
        .arg("--instr-atstart=no")
        .arg(format!("--callgrind-out-file={}.%p", prefix.display()))
        .arg(exe);
    command
}

/// `callgrind_control ARGS PID`, which waits until the server has done it.
fn control(pid: u32, args: &[&str]) -> Result<(), String> {
    let status = Command::new("callgrind_control")
        .args(args)
        .arg(pid.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .map_err(|e| format!("callgrind_control did not run (is valgrind installed?): {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("callgrind_control {args:?} {pid} failed: {status}"))
    }
}

/// The instructions of the newest dump of `pid`: its `totals:` line (the first event, `Ir`).
fn last_dump_instructions(prefix: &Path, pid: u32) -> Result<u64, String> {
    let dir = prefix.parent().unwrap_or(Path::new("."));
    let stem = format!(
        "{}.{pid}.",
        prefix
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
    );
    let newest = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot list {}: {e}", dir.display()))?
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name().into_string().ok()?;
            let n = name.strip_prefix(&stem)?.parse::<u32>().ok()?;
            Some((n, entry.path()))
        })
        .max_by_key(|(n, _)| *n)
        .ok_or_else(|| format!("no callgrind dump {}*", stem))?
        .1;
    let text = std::fs::read_to_string(&newest)
        .map_err(|e| format!("cannot read {}: {e}", newest.display()))?;
    text.lines()
        .find_map(|line| line.strip_prefix("totals:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| format!("{} has no totals line", newest.display()))
}

/// `per_slot` calls on each of `slots` at once, each answer checked; the first failure ends
/// the count.
async fn drive(
    slots: &[Arc<Client>],
    label: &'static str,
    expected: &Arc<Expected>,
    per_slot: usize,
) -> Result<(), String> {
    let tasks: Vec<_> = slots
        .iter()
        .map(|client| {
            let client = Arc::clone(client);
            let expected = Arc::clone(expected);
            tokio::spawn(async move {
                let args = arguments();
                for _ in 0..per_slot {
                    call_checked(&client, &args, label, &expected).await?;
                }
                Ok::<(), String>(())
            })
        })
        .collect();
    for task in tasks {
        task.await.map_err(|e| e.to_string())??;
    }
    Ok(())
}

/// Instructions per call of `server` at `slots.len()` in flight, over `calls` calls.
pub(super) async fn per_call(
    server: &Server,
    prefix: &Path,
    slots: &[Arc<Client>],
    expected: &Arc<Expected>,
    calls: usize,
) -> Result<f64, String> {
    drive(slots, server.label, expected, WARMUP_CALLS).await?;
    let pid = server.child.id();
    control(pid, &["-i", "on"])?;
    // Exactly the calls between switching counting on and dumping are counted.
    let per_slot = calls.div_ceil(slots.len());
    drive(slots, server.label, expected, per_slot).await?;
    // Let the server finish writing the last answers before the dump.
    tokio::time::sleep(Duration::from_millis(200)).await;
    control(pid, &["-d"])?;
    control(pid, &["-i", "off"])?;
    let instructions = last_dump_instructions(prefix, pid)?;
    Ok(instructions as f64 / (per_slot * slots.len()) as f64)
}
