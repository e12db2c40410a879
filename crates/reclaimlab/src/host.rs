//! The host's memory, as far as this process may still use it: checked before a run or a
//! trace's first pass allocates, so that an input that asks for more than the host has ends
//! in a one-line error instead of an allocation abort.
//!
//! The limit is the smallest of `MemAvailable` (/proc/meminfo) and the room left under this
//! process's `RLIMIT_AS` and `RLIMIT_DATA` soft limits (/proc/self/limits against VmSize and
//! VmData in /proc/self/status). On a host without /proc there is no limit.

use std::fs;

/// Bytes this process may still allocate, if the host says.
pub fn available_bytes() -> Option<u64> {
    let meminfo = fs::read_to_string("/proc/meminfo").ok();
    let limits = fs::read_to_string("/proc/self/limits").ok();
    let status = fs::read_to_string("/proc/self/status").ok();
    let avail = meminfo
        .as_deref()
        .and_then(|m| kib_field(m, "MemAvailable:"));
    let room = |limit: &str, used: &str| -> Option<u64> {
        let max = soft_limit(limits.as_deref()?, limit)?;
        let used = kib_field(status.as_deref()?, used).unwrap_or(0);
        Some(max.saturating_sub(used))
    };
    [
        avail,
        room("Max address space", "VmSize:"),
        room("Max data size", "VmData:"),
    ]
    .into_iter()
    .flatten()
    .min()
}

/// What one structure may take: three quarters of [`available_bytes`], leaving the rest for
/// the rest of the process.
pub fn usable_bytes() -> Option<u64> {
    available_bytes().map(usable)
}

fn usable(available: u64) -> u64 {
    available / 4 * 3
}

/// Checks that `need` bytes (described by `what`) fit [`usable_bytes`].
pub fn check_fits(need: u64, what: &str) -> Result<(), String> {
    match available_bytes() {
        Some(avail) if need > usable(avail) => Err(format!(
            "{what} needs about {} of host memory, more than the {} this process may still use \
             (MemAvailable, ulimit -v and ulimit -d); use a smaller machine, scale or trace",
            mib(need),
            mib(avail)
        )),
        _ => Ok(()),
    }
}

/// `n` bytes in MiB (or GiB), for messages.
pub fn mib(n: u64) -> String {
    const MIB: u64 = 1 << 20;
    if n >= 10 << 30 {
        format!("{} GiB", n >> 30)
    } else {
        format!("{} MiB", n.div_ceil(MIB))
    }
}

/// A `Name:   1234 kB` field of /proc/meminfo or /proc/self/status, in bytes.
fn kib_field(text: &str, name: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(name))?;
    let kib: u64 = line[name.len()..].split_whitespace().next()?.parse().ok()?;
    Some(kib.saturating_mul(1024))
}

/// The soft limit of a /proc/self/limits row, in bytes; `None` when unlimited.
fn soft_limit(limits: &str, name: &str) -> Option<u64> {
    let line = limits.lines().find(|l| l.starts_with(name))?;
    line[name.len()..].split_whitespace().next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_proc_fields() {
        let status = "Name:\tx\nVmSize:\t  2048 kB\nVmData:\t 16 kB\n";
        assert_eq!(kib_field(status, "VmSize:"), Some(2 << 20));
        assert_eq!(kib_field(status, "VmRSS:"), None);
        let limits = "Limit                     Soft Limit           Hard Limit           Units     \n\
                      Max data size             unlimited            unlimited            bytes     \n\
                      Max address space         4294967296           unlimited            bytes     \n";
        assert_eq!(soft_limit(limits, "Max address space"), Some(4 << 30));
        assert_eq!(soft_limit(limits, "Max data size"), None);
    }

    #[test]
    fn refuses_what_no_host_has() {
        let err = check_fits(u64::MAX / 2, "the test").unwrap_err();
        assert!(err.starts_with("the test needs about "), "{err}");
        check_fits(1 << 20, "a MiB").unwrap();
    }
}
