//! CPU time of a process, from Linux's `/proc/<pid>/stat`: the benchmarks set what a process
//! costs next to what its anchor costs, which wall time alone does not show on a shared machine.

/// Clock ticks per second in `/proc/<pid>/stat` (`USER_HZ`): 100 on every architecture Linux
/// exports it to user space.
pub const TICKS_PER_SEC: u64 = 100;

/// A process's CPU time so far, in clock ticks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTicks {
    /// User + system time of the process itself (`utime` + `stime`).
    pub own: u64,
    /// User + system time of the children it has waited for (`cutime` + `cstime`).
    pub children: u64,
}

impl CpuTicks {
    /// Reads `stat_path` (`/proc/self/stat`, `/proc/<pid>/stat`); `None` where the file does
    /// not exist (not Linux, or the process is gone) or does not parse.
    pub fn read(stat_path: &str) -> Option<CpuTicks> {
        CpuTicks::parse(&std::fs::read_to_string(stat_path).ok()?)
    }

    /// Parses the text of a `stat` file.
    pub fn parse(stat: &str) -> Option<CpuTicks> {
        // The command name may hold spaces and parentheses: fields are counted after its
        // last `)`. `utime`, `stime`, `cutime`, `cstime` are fields 14 to 17 of the line, 11 to
        // 14 after the name.
        let rest = &stat[stat.rfind(')')? + 1..];
        let mut fields = rest.split_whitespace().skip(11);
        let mut next = || fields.next()?.parse::<u64>().ok();
        let (utime, stime, cutime, cstime) = (next()?, next()?, next()?, next()?);
        Some(CpuTicks {
            own: utime + stime,
            children: cutime + cstime,
        })
    }
}

/// [`CpuTicks`] summed over every live process whose command name is `name`, for example a
/// local PostgreSQL server's postmaster and backends. A backend that exits between two
/// readings still counts: the postmaster has waited for it, so its time is in the
/// postmaster's `children`. Zero where no such process runs on this machine.
pub fn total_named(name: &str) -> CpuTicks {
    let mut total = CpuTicks::default();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return total;
    };
    for entry in dir.flatten() {
        let is_pid = entry
            .file_name()
            .to_str()
            .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()));
        if !is_pid {
            continue;
        }
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        if open < close && &stat[open + 1..close] == name {
            if let Some(t) = CpuTicks::parse(&stat) {
                total.own += t.own;
                total.children += t.children;
            }
        }
    }
    total
}

/// Clock ticks as seconds.
pub fn ticks_to_secs(ticks: u64) -> f64 {
    ticks as f64 / TICKS_PER_SEC as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_counted_after_the_last_parenthesis_of_the_name() {
        let stat = "4242 (a (b) c) S 1 4242 4242 0 -1 4194560 1200 0 0 0 \
                    150 25 7 3 20 0 1 0 100 1000 200 18446744073709551615";
        assert_eq!(
            CpuTicks::parse(stat),
            Some(CpuTicks {
                own: 175,
                children: 10
            })
        );
        assert_eq!(CpuTicks::parse("4242 (name) S 1 2"), None);
        assert_eq!(CpuTicks::parse("no name here"), None);
        assert_eq!(ticks_to_secs(250), 2.5);
    }

    #[test]
    fn this_process_has_a_stat_file_on_linux() {
        if cfg!(target_os = "linux") {
            assert!(CpuTicks::read("/proc/self/stat").is_some());
        }
    }
}
