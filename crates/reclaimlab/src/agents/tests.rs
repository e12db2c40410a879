use super::*;
use crate::machine::psi::PsiLine;

/// A machine as a daemon sees it, scripted by the test.
#[derive(Default)]
struct Fake {
    paths: Vec<String>,
    current: u64,
    high: u64,
    some_total_us: u64,
    full_avg10: f64,
    pgscan: u64,
    reclaims: Vec<(String, u64)>,
    highs: Vec<u64>,
    kills: Vec<u32>,
    lru_gen: Option<String>,
    lru_gen_writes: Vec<String>,
    total_free: (u64, u64),
    cold: u64,
}

impl AgentSys for Fake {
    fn memcg_paths(&self) -> Vec<String> {
        self.paths.clone()
    }
    fn has_procs(&self, path: &str) -> bool {
        path != "/"
    }
    fn memory_current(&self, _: &str) -> Option<u64> {
        Some(self.current)
    }
    fn memory_high(&self, _: &str) -> Option<u64> {
        Some(self.high)
    }
    fn memory_stat(&self, _: &str, key: &str) -> Option<u64> {
        (key == "pgscan").then_some(self.pgscan)
    }
    fn memory_pressure(&mut self, _: &str) -> Option<PsiMemory> {
        Some(PsiMemory {
            some: PsiLine {
                total_us: self.some_total_us,
                ..Default::default()
            },
            full: PsiLine {
                avg10: self.full_avg10,
                ..Default::default()
            },
        })
    }
    fn memory_reclaim(&mut self, path: &str, bytes: u64) -> Result<(), String> {
        self.reclaims.push((path.to_string(), bytes));
        Ok(())
    }
    fn set_memory_high(&mut self, _: &str, bytes: u64) -> Result<(), String> {
        self.high = bytes;
        self.highs.push(bytes);
        Ok(())
    }
    fn lru_gen_read(&mut self) -> Option<String> {
        self.lru_gen.clone()
    }
    fn lru_gen_write(&mut self, cmd: &str) -> Result<(), String> {
        self.lru_gen_writes.push(cmd.to_string());
        Ok(())
    }
    fn procs(&self, _: &str) -> Vec<(u32, u64)> {
        vec![(7, 1 << 20), (8, 2 << 20)]
    }
    fn kill(&mut self, pid: u32) {
        self.kills.push(pid);
    }
    fn mem_total_free(&self) -> (u64, u64) {
        self.total_free
    }
    fn cold_bytes(&mut self, _: &str, _: u64) -> u64 {
        self.cold
    }
    fn agent_time_ns(&self) -> u64 {
        0
    }
}

fn fake() -> Fake {
    Fake {
        paths: vec!["/".into(), "/w".into()],
        current: 1 << 30,
        high: u64::MAX,
        total_free: (4 << 30, 1 << 30),
        ..Default::default()
    }
}

/// Wakes `agent` until `end` (ns), as the engine does; returns the wake-up times.
fn drive(
    agent: &mut dyn Agent,
    sys: &mut Fake,
    end: u64,
    mut each: impl FnMut(&mut Fake, u64),
) -> Vec<u64> {
    let mut log = AgentLog::default();
    let mut t = agent.first_wake();
    let mut times = Vec::new();
    while t <= end {
        each(sys, t);
        times.push(t);
        match agent.wake(sys, t, &mut log) {
            Some(n) => t = n,
            None => break,
        }
    }
    times
}

fn build(spec: &str) -> Box<dyn Agent> {
    spec.parse::<AgentSpec>()
        .expect("spec")
        .build()
        .expect("agent")
}

#[test]
fn specs_parse_print_and_refuse_bad_input() {
    let s: AgentSpec = "senpai:interval=3,pressure=5000".parse().expect("spec");
    assert_eq!(s.to_string(), "senpai:interval=3,pressure=5000");
    assert_eq!(
        "oomd".parse::<AgentSpec>().expect("spec").to_string(),
        "oomd"
    );
    for (bad, msg) in [
        ("nope", "unknown agent"),
        ("senpai:bogus=1", "unknown key 'bogus'"),
        ("senpai:interval=0", "interval=0"),
        ("senpai:interval", "not key=value"),
        ("senpai:pressure=0", "never probe"),
        ("oomd:limit=100", "never exceeds"),
        (
            "memory-high:min_size=2G,max_size=1G",
            "min_size above max_size",
        ),
        ("damon-reclaim:quota_sz=12Q", "a size in bytes"),
        ("lru-gen-age:interval=0", "interval=0"),
    ] {
        let e = bad.parse::<AgentSpec>().expect_err(bad);
        assert!(e.contains(msg), "{bad}: {e}");
        assert!(!e.contains('\n'));
    }
}

#[test]
fn senpai_probe_and_backoff_laws_match_senpai_py() {
    // err = pressure / integral; adj = min((err / coeff)^2 * max, max).
    assert_eq!(senpai::probe_adjustment(10_000.0, 0.0, 10.0, 0.01), 0.01);
    assert_eq!(
        senpai::probe_adjustment(10_000.0, 1_000.0, 10.0, 0.01),
        0.01
    );
    assert!((senpai::probe_adjustment(10_000.0, 5_000.0, 10.0, 0.01) - 0.0004).abs() < 1e-12);
    // err = integral / pressure = 4: (4 / 20)^2 * 1.0 = 0.04.
    assert!((senpai::backoff_adjustment(10_000.0, 40_000.0, 20.0, 1.0) - 0.04).abs() < 1e-12);
    assert_eq!(senpai::backoff_adjustment(10_000.0, 1e9, 20.0, 1.0), 1.0);
}

#[test]
fn senpai_reclaims_one_percent_every_interval_without_pressure() {
    let mut a = build("senpai");
    let mut sys = fake();
    drive(a.as_mut(), &mut sys, 20 * NS_PER_S, |_, _| {});
    // Ticks at 1..=20 s: six ticks of grace, a probe at 7 s, then every 6 ticks (13 s, 19 s).
    assert_eq!(sys.reclaims.len(), 3);
    assert!(sys
        .reclaims
        .iter()
        .all(|(p, b)| p == "/w" && *b == (1u64 << 30) / 100));
}

#[test]
fn senpai_stops_reclaiming_under_pressure_and_keeps_its_floor() {
    let mut a = build("senpai");
    let mut sys = fake();
    // 20 ms of new stall every second: over the 10 ms target.
    drive(a.as_mut(), &mut sys, 30 * NS_PER_S, |s, _| {
        s.some_total_us += 20_000
    });
    assert!(sys.reclaims.is_empty());
    // Usage at the floor: nothing to take.
    let mut a = build("senpai:min_size=1G");
    let mut sys = fake();
    drive(a.as_mut(), &mut sys, 30 * NS_PER_S, |_, _| {});
    assert!(sys.reclaims.is_empty());
}

#[test]
fn memory_high_starts_at_usage_then_probes_down_and_backs_off_up() {
    let mut a = build("memory-high");
    let mut sys = fake();
    drive(a.as_mut(), &mut sys, 8 * NS_PER_S, |_, _| {});
    // Set to memory.current at its first tick, lowered by 1% at the probe after 6 ticks.
    assert_eq!(sys.highs[0], 1 << 30);
    let probed = sys.highs[1];
    assert_eq!(probed, ((1u64 << 30) as f64 * 0.99) as u64 & !4095);
    // Then 400 ms of stall in a tick: integral / pressure = 40, (40 / 20)^2 = 4 -> capped at
    // max_backoff 1.0: memory.high doubles.
    let before = sys.high;
    let mut log = AgentLog::default();
    sys.some_total_us += 400_000;
    a.wake(&mut sys, 9 * NS_PER_S, &mut log);
    assert_eq!(sys.high, (before * 2) & !4095);
}

#[test]
fn oomd_kills_after_30s_of_full_pressure_over_60_percent() {
    let mut a = build("oomd:cgroup=/w");
    let mut sys = fake();
    sys.full_avg10 = 70.0;
    drive(a.as_mut(), &mut sys, 29 * NS_PER_S, |s, _| s.pgscan += 100);
    assert!(sys.kills.is_empty(), "killed before the duration");
    drive(a.as_mut(), &mut sys, 32 * NS_PER_S, |s, _| s.pgscan += 100);
    assert_eq!(sys.kills, vec![7, 8], "the whole cgroup");
    // Below the limit (or without reclaim activity) nobody dies.
    let mut a = build("oomd:cgroup=/w");
    let mut sys = fake();
    sys.full_avg10 = 59.0;
    drive(a.as_mut(), &mut sys, 60 * NS_PER_S, |s, _| s.pgscan += 100);
    let mut b = build("oomd:cgroup=/w");
    let mut quiet = fake();
    quiet.full_avg10 = 90.0;
    drive(b.as_mut(), &mut quiet, 60 * NS_PER_S, |_, _| {});
    assert!(sys.kills.is_empty() && quiet.kills.is_empty());
}

const LRU_GEN: &str = "memcg     1 /\n node     0\n          3       9000          0           0 \n          4       3000          0           0 \nmemcg     2 /w\n node     0\n          5      40000         10         300 \n          6      20000          0         200 \n          7       5000          0         100 \n          8        100          0          50 \n";

#[test]
fn lru_gen_is_parsed_and_generations_older_than_the_age_are_evicted() {
    let g = lru_gen_age::parse_lru_gen(LRU_GEN);
    assert_eq!(g.len(), 6);
    assert_eq!(g[2].0, "/w");
    assert_eq!(
        g[2].1,
        lru_gen_age::GenLine {
            memcg_id: 2,
            node: 0,
            seq: 5,
            age_ms: 40_000,
            pages: 310
        }
    );
    let mut a = build("lru-gen-age:age=15,cgroup=/w");
    let mut sys = fake();
    sys.lru_gen = Some(LRU_GEN.into());
    let mut log = AgentLog::default();
    a.wake(&mut sys, 10 * NS_PER_S, &mut log);
    // Age first (+ on the newest seq), then evict through seq 6 (20 s >= 15 s; 5 s is too young).
    assert_eq!(sys.lru_gen_writes, vec!["+ 2 0 8", "- 2 0 6"]);
    assert_eq!(log.reclaim_requested_bytes, (310 + 200) * 4096);
    // Never the two youngest generations, however old.
    let mut a = build("lru-gen-age:age=0,cgroup=/w");
    let mut sys = fake();
    sys.lru_gen = Some(LRU_GEN.into());
    a.wake(&mut sys, 10 * NS_PER_S, &mut log);
    assert_eq!(sys.lru_gen_writes[1], "- 2 0 6");
    // Not MGLRU: it stops.
    let mut a = build("lru-gen-age");
    let mut sys = fake();
    assert!(a.wake(&mut sys, 10 * NS_PER_S, &mut log).is_none());
}

#[test]
fn damon_reclaim_follows_its_watermarks_and_quota() {
    let mut a = build("damon-reclaim");
    let mut sys = fake();
    sys.cold = 1 << 30;
    // Free 25% of memory: between low (20%) and mid (40%): active; 128 MiB per 1 s window.
    drive(a.as_mut(), &mut sys, NS_PER_S - 1, |_, _| {});
    assert_eq!(sys.reclaims, vec![("/".to_string(), 128 << 20)]);
    // Free 10% (< low) or 60% (> high): inactive, rechecks every 5 s.
    for free in [400u64 << 20, 2400 << 20] {
        let mut a = build("damon-reclaim");
        let mut sys = fake();
        sys.total_free = (4 << 30, free);
        sys.cold = 1 << 30;
        let times = drive(a.as_mut(), &mut sys, 20 * NS_PER_S, |_, _| {});
        assert!(sys.reclaims.is_empty());
        assert_eq!(times[1] - times[0], 5 * NS_PER_S);
    }
    // Without watermarks and quotas it takes everything cold at once.
    let mut a = build("damon-reclaim:wmarks=no,quota_sz=0,quota_ms=0");
    let mut sys = fake();
    sys.total_free = (4 << 30, 0);
    sys.cold = 3 << 30;
    let mut log = AgentLog::default();
    a.wake(&mut sys, NS_PER_S, &mut log);
    assert_eq!(sys.reclaims, vec![("/".to_string(), 3 << 30)]);
}
