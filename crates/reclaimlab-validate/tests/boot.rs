//! The opt-in real boot: the `tiny` workload on Debian's 6.1 with the classical LRU, one fresh
//! boot under QEMU (TCG), against the model. Needs the network to Debian's mirror on first use
//! (kernel packages are cached), and installs qemu-system-x86 / busybox-static if missing.
//!
//! ```sh
//! cargo test --release -p reclaimlab-validate --test boot -- --ignored --nocapture
//! ```

use reclaimlab_validate::fidelity::{markdown, metric};
use reclaimlab_validate::guest::Mode;
use reclaimlab_validate::packages::{default_cache_dir, KernelKey};
use reclaimlab_validate::{run_cells, suite, Options};

#[test]
#[ignore = "boots a real kernel under QEMU (about 10 s, more on first use): run with --ignored"]
fn tiny_workload_on_debian_6_1() {
    let log = |m: &str| eprintln!("boot test: {m}");
    let opts = Options {
        cache: std::env::var_os("RECLAIMLAB_CACHE")
            .map(Into::into)
            .unwrap_or_else(default_cache_dir),
        boots: 1,
        timeout: std::time::Duration::from_secs(600),
        replayer: None,
        console_dir: None,
        icount: true,
        log: &log,
    };
    let out = std::env::temp_dir().join(format!("reclaimlab-boot-test-{}", std::process::id()));
    let cells = run_cells(
        &[suite::tiny()],
        &[KernelKey::V6_1],
        &[Mode::Classic],
        &out,
        false,
        &opts,
    )
    .expect("boot");
    let _ = std::fs::remove_dir_all(&out);
    println!("{}", markdown(&cells, "tiny on Debian 6.1, classical LRU"));
    let c = &cells[0];
    assert!(c.release.starts_with("6.1."), "{}", c.release);
    let k = &c.kernel_runs[0];
    assert_eq!(k.accesses, 6000);
    let kernel = metric(k, &c.memcg, "misses");
    let model = metric(&c.model, &c.memcg, "misses");
    assert!(kernel > 500.0, "the 4 MiB memcg must miss: {kernel}");
    assert!(
        ((model - kernel) / kernel).abs() < 0.05,
        "model {model} vs kernel {kernel} misses"
    );
}
