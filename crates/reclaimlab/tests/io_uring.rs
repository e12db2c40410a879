//! io_uring's issue of a read (`Action::IoUringIssue`, sim.rs `io_uring_punt_ns`) against the
//! kernels' code: 6.1's `__io_file_supports_nowait` (io_uring/io_uring.c) lets `io_read` issue
//! a regular file's read inline only if `io_bdev_nowait(file->f_inode->i_sb->s_bdev)`, i.e.
//! the file system's block device has QUEUE_FLAG_NOWAIT, and punts it to an io-wq worker
//! otherwise; 6.12's `io_file_get_flags` asks FMODE_NOWAIT alone. QUEUE_FLAG_NOWAIT: blk-mq
//! queues (QUEUE_FLAG_MQ_DEFAULT) and brd (`brd_alloc`) have it, pmem does not.

use reclaimlab::machine::{DeviceProfile, MachineConfig};
use reclaimlab::metrics::RunResult;
use reclaimlab::sim::{run, PolicySpec, RunOptions};
use reclaimlab::workload::{Action, ProcSpec, Scenario, Stream, ThreadSpec};

const READS: usize = 100;

/// One thread issuing `READS` io_uring reads of a file on `dev` (and doing nothing else).
fn issues(dev: DeviceProfile) -> Scenario {
    let mut m = MachineConfig::simple(4096);
    m.file_device = dev;
    Scenario {
        name: "io-uring-issue".into(),
        description: String::new(),
        machine: m,
        files: vec![],
        procs: vec![ProcSpec::new("fio", "/", 0)],
        threads: vec![ThreadSpec {
            proc: 0,
            cpu: 0,
            stream: Stream::Actions(vec![Action::IoUringIssue; READS]),
        }],
    }
}

fn go(scn: &Scenario, policy: &str) -> RunResult {
    let spec: PolicySpec = policy.parse().expect("policy");
    run(scn, spec, &RunOptions::default()).expect("run")
}

#[test]
fn only_6_1_punts_and_only_the_reads_of_a_device_without_queue_nowait() {
    let punt = MachineConfig::simple(4096).cost.io_wq_punt_ns;
    assert!(punt > 0);
    for (dev, nowait) in [
        (DeviceProfile::pmem(), false),
        (DeviceProfile::ramdisk(), true),
        (DeviceProfile::nvme(), true),
        (DeviceProfile::hdd(), true),
    ] {
        assert_eq!(dev.queue_nowait, nowait, "{}", dev.name);
        let scn = issues(dev.clone());
        for policy in [
            "classic:6.1",
            "mglru:6.1",
            "classic:6.12",
            "mglru:6.12",
            "mglru:7.2",
        ] {
            let r = go(&scn, policy);
            let six_one = policy.ends_with("6.1");
            let expect = if six_one && !nowait {
                READS as u64 * punt
            } else {
                0
            };
            assert_eq!(r.cpu.sys_ns, expect, "{policy} on {}", dev.name);
            assert_eq!(r.cpu.user_ns, 0, "{policy} on {}", dev.name);
            assert_eq!(
                r.threads[0].cpu.sys_ns, expect,
                "{policy}: the thread's own"
            );
            // Its life: a start jitter, then the punts back to back.
            assert!(r.threads[0].finish_ns >= expect, "{policy}");
        }
    }
}

/// The switch is the kernel's: 6.12 without it punts as 6.1 does, 6.1 with it reads inline.
#[test]
fn the_switch_moves_the_punt_between_kernels() {
    let punt = MachineConfig::simple(4096).cost.io_wq_punt_ns;
    let scn = issues(DeviceProfile::pmem());
    let sys = |p: &str| go(&scn, p).cpu.sys_ns;
    assert_eq!(
        sys("classic:6.12-io-uring-nowait-by-fmode"),
        READS as u64 * punt
    );
    assert_eq!(
        sys("mglru:6.12-io-uring-nowait-by-fmode"),
        READS as u64 * punt
    );
    assert_eq!(sys("classic:6.1+io-uring-nowait-by-fmode"), 0);
}
