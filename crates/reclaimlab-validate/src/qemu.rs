//! Booting the guest: qemu-system-x86_64 with TCG (KVM here cannot run stock kernels), one
//! vCPU, the serial console to a file, the data disk as a virtio disk with `snapshot=on` (every
//! boot starts from the pristine image), no reboot.
//!
//! With more than one vCPU ([`Boot::cpus`], the `smp2` suite) the guest runs on multi-threaded
//! TCG (`-accel tcg,thread=multi`, one host thread per vCPU) so that its CPUs really run in
//! parallel. `-icount` forces single-threaded TCG (qemu refuses `thread=multi` with it), so such
//! a guest's clock follows host time: time-based kernel decisions then vary from boot to boot,
//! which is why concurrent cells are judged against the kernel's boot-to-boot spread.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// One boot's inputs.
pub struct Boot<'a> {
    pub vmlinuz: &'a Path,
    pub initrd: &'a Path,
    pub disk: &'a Path,
    pub memory_mib: u64,
    pub cmdline: &'a str,
    /// Where the serial console goes.
    pub console: &'a Path,
    pub timeout: Duration,
    /// Drive the guest clock by the instruction count (`-icount shift=4,sleep=off`): guest time
    /// no longer depends on how fast the host emulates, so time-based kernel decisions (stats
    /// flush ratelimits, writeback timers) repeat exactly from boot to boot.
    /// Incompatible with more than one CPU (see the module doc): [`qemu_args`] leaves it out.
    pub icount: bool,
    /// vCPUs: 1 is the single-threaded TCG guest of the main suite; more boot with `-smp N` on
    /// multi-threaded TCG.
    pub cpus: u32,
}

/// The `-icount` setting used when [`Boot::icount`] is set.
pub const ICOUNT: &str = "shift=4,sleep=off";

/// The qemu command line of a boot; `RECLAIMLAB_QEMU_ARGS` (whitespace-separated) is appended,
/// e.g. `-icount shift=4` for a guest clock driven by the instruction count (deterministic).
pub fn qemu_args(b: &Boot) -> Vec<String> {
    let mut a = base_args(b);
    if let Ok(extra) = std::env::var("RECLAIMLAB_QEMU_ARGS") {
        a.extend(extra.split_whitespace().map(|s| s.to_string()));
    }
    a
}

fn base_args(b: &Boot) -> Vec<String> {
    let smp = b.cpus > 1;
    let mut a: Vec<String> = if b.icount && !smp {
        vec!["-icount".into(), ICOUNT.into()]
    } else {
        Vec::new()
    };
    a.extend([
        "-accel".into(),
        if smp { "tcg,thread=multi" } else { "tcg" }.into(),
        "-machine".into(),
        "pc".into(),
        "-m".into(),
        format!("{}", b.memory_mib),
        "-smp".into(),
        format!("{}", b.cpus.max(1)),
        "-nodefaults".into(),
        "-no-user-config".into(),
        "-display".into(),
        "none".into(),
        "-monitor".into(),
        "none".into(),
        "-no-reboot".into(),
        "-serial".into(),
        format!("file:{}", b.console.display()),
        "-kernel".into(),
        b.vmlinuz.display().to_string(),
        "-initrd".into(),
        b.initrd.display().to_string(),
        "-append".into(),
        b.cmdline.to_string(),
        "-drive".into(),
        format!(
            "file={},if=virtio,format=raw,snapshot=on,cache=unsafe",
            b.disk.display()
        ),
    ]);
    a
}

/// Boots and waits for the guest to power off (or the timeout); returns the console text and
/// the wall time.
pub fn boot(b: &Boot) -> Result<(String, Duration), String> {
    let _ = std::fs::remove_file(b.console);
    let start = Instant::now();
    let mut child = Command::new("qemu-system-x86_64")
        .args(qemu_args(b))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start qemu-system-x86_64: {e}"))?;
    let status = loop {
        if let Some(s) = child.try_wait().map_err(|e| e.to_string())? {
            break s;
        }
        if start.elapsed() > b.timeout {
            let _ = child.kill();
            let _ = child.wait();
            let text = std::fs::read_to_string(b.console).unwrap_or_default();
            return Err(format!(
                "guest did not power off within {} s (console: {}; last line: {})",
                b.timeout.as_secs(),
                b.console.display(),
                text.lines().last().unwrap_or("").trim()
            ));
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let elapsed = start.elapsed();
    if !status.success() {
        let mut err = String::new();
        if let Some(mut e) = child.stderr.take() {
            use std::io::Read;
            let _ = e.read_to_string(&mut err);
        }
        return Err(format!(
            "qemu failed ({status}): {}",
            err.lines().last().unwrap_or("").trim()
        ));
    }
    let bytes = std::fs::read(b.console).map_err(|e| format!("{}: {e}", b.console.display()))?;
    Ok((String::from_utf8_lossy(&bytes).into_owned(), elapsed))
}

/// A scratch directory under the cache for one boot's files.
pub fn scratch(cache: &Path, name: &str) -> Result<PathBuf, String> {
    let d = cache.join("runs").join(name);
    std::fs::create_dir_all(&d).map_err(|e| format!("{}: {e}", d.display()))?;
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uses_tcg_and_a_snapshot_disk() {
        let b = Boot {
            vmlinuz: Path::new("/k"),
            initrd: Path::new("/i"),
            disk: Path::new("/d.ext4"),
            memory_mib: 512,
            cmdline: "console=ttyS0",
            console: Path::new("/c.log"),
            timeout: Duration::from_secs(1),
            icount: true,
            cpus: 1,
        };
        let a = base_args(&b).join(" ");
        assert!(a.contains("-icount shift=4,sleep=off"));
        assert!(a.contains("-accel tcg "));
        assert!(!a.contains("thread=multi"));
        assert!(a.contains("-smp 1"));
        assert!(a.contains("file=/d.ext4,if=virtio,format=raw,snapshot=on"));
        assert!(a.contains("-serial file:/c.log"));
        assert!(!a.contains("kvm"));
    }

    #[test]
    fn two_cpus_use_mttcg_without_icount() {
        let b = Boot {
            vmlinuz: Path::new("/k"),
            initrd: Path::new("/i"),
            disk: Path::new("/d.ext4"),
            memory_mib: 512,
            cmdline: "console=ttyS0",
            console: Path::new("/c.log"),
            timeout: Duration::from_secs(1),
            icount: true,
            cpus: 2,
        };
        let a = base_args(&b);
        let s = a.join(" ");
        assert!(s.contains("-smp 2"));
        assert!(s.contains("-accel tcg,thread=multi"));
        assert!(!a.iter().any(|x| x == "-icount"), "icount forbids MTTCG");
        assert!(!s.contains("kvm"));
    }
}
