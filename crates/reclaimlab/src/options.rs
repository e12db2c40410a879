//! Parsers of the option values users give (the CLI's flags, the Python front end's keyword
//! arguments, schedule files): each returns a one-line error naming the value and the
//! problem, and none of them panics on any input (they are fuzzed: fuzz/).

use crate::behaviour::Behaviours;
use crate::consts::MAX_SIM_NS;
use crate::machine::CostProfile;

/// `enabled_store` (/sys/kernel/mm/lru_gen/enabled): 'n'/'N' → 0, 'y'/'Y' → every
/// capability, else an unsigned integer in any base (`kstrtouint(.., 0, ..)`); anything else
/// is -EINVAL.
pub fn parse_enabled(s: &str) -> Result<u32, String> {
    let t = s.trim();
    let err = || format!("--enabled '{s}': EINVAL (expected y, n or a number such as 0x0007)");
    match t.chars().next() {
        Some('n' | 'N') => return Ok(0),
        Some('y' | 'Y') => return Ok(0x7),
        _ => {}
    }
    let v = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        u32::from_str_radix(h, 16)
    } else if t.len() > 1 && t.starts_with('0') {
        u32::from_str_radix(&t[1..], 8)
    } else {
        t.parse()
    };
    v.map(|v| v & 0x7).map_err(|_| err())
}

/// Sets one field of the cost profile from "name=nanoseconds".
pub fn apply_cost(cost: &mut CostProfile, spec: &str) -> Result<(), String> {
    let (name, value) = spec
        .split_once('=')
        .ok_or_else(|| format!("--cost '{spec}' is not NAME=NS"))?;
    let ns: u64 = value
        .trim()
        .parse()
        .map_err(|_| format!("--cost {name}: '{value}' is not a number of nanoseconds"))?;
    let mut v = serde_json::to_value(&*cost).map_err(|e| e.to_string())?;
    let obj = v.as_object_mut().expect("CostProfile is a struct");
    if !obj.contains_key(name.trim()) {
        let names: Vec<&str> = obj.keys().map(|k| k.as_str()).collect();
        return Err(format!(
            "unknown cost '{name}' (expected one of {})",
            names.join(", ")
        ));
    }
    obj.insert(name.trim().to_string(), ns.into());
    *cost = serde_json::from_value(v).map_err(|e| format!("--cost {name}: {e}"))?;
    Ok(())
}

/// A time in ms as simulated ns, refused beyond the model's clock ([`MAX_SIM_NS`]).
pub fn ms_to_sim_ns(ms: u64, what: &str) -> Result<u64, String> {
    ms.checked_mul(1_000_000)
        .filter(|&ns| ns <= MAX_SIM_NS)
        .ok_or_else(|| {
            format!(
                "{what}: {ms} ms lies beyond the model's clock ({} ms)",
                MAX_SIM_NS / 1_000_000
            )
        })
}

/// Seconds (a float) as simulated ns: positive, finite and within the model's clock.
pub fn seconds_to_sim_ns(s: f64, what: &str) -> Result<u64, String> {
    if !(s.is_finite() && s > 0.0) {
        return Err(format!("{what} {s}: expected a positive number of seconds"));
    }
    let ns = s * 1e9;
    if ns > MAX_SIM_NS as f64 {
        return Err(format!(
            "{what} {s}: beyond the model's clock ({} s)",
            MAX_SIM_NS / 1_000_000_000
        ));
    }
    Ok((ns as u64).max(1))
}

/// One `--lru-gen-cmd` value, "MS:COMMAND": the time in simulated ns and the command.
pub fn parse_lru_gen_cmd(arg: &str) -> Result<(u64, String), String> {
    let (ms, cmd) = arg
        .split_once(':')
        .ok_or_else(|| format!("--lru-gen-cmd '{arg}' is not MS:COMMAND"))?;
    let ms: u64 = ms
        .trim()
        .parse()
        .map_err(|_| format!("--lru-gen-cmd '{arg}': bad time '{}'", ms.trim()))?;
    let at = ms_to_sim_ns(ms, &format!("--lru-gen-cmd '{arg}'"))?;
    Ok((at, cmd.trim().to_string()))
}

/// An lru_gen schedule file: one "MS COMMAND" per line; blank lines and `#` comments are
/// skipped. `origin` names the file in errors ("FILE:LINE: problem").
pub fn parse_lru_gen_schedule(text: &str, origin: &str) -> Result<Vec<(u64, String)>, String> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let at = |problem: String| format!("{origin}:{}: {problem}", i + 1);
        let (ms, cmd) = line
            .split_once(char::is_whitespace)
            .ok_or_else(|| at("expected 'MS COMMAND'".into()))?;
        let ms: u64 = ms.parse().map_err(|_| at(format!("bad time '{ms}'")))?;
        out.push((
            ms_to_sim_ns(ms, "time").map_err(at)?,
            cmd.trim().to_string(),
        ));
    }
    Ok(out)
}

/// Checks an lru_gen command's syntax as a kernel with behaviours `b` parses it (semantic checks, such
/// as whether the memcg exists, happen when it runs).
pub fn check_lru_gen_command(b: Behaviours, cmd: &str) -> Result<(), String> {
    crate::policy::mglru::debugfs::check_syntax(b, cmd)
        .map_err(|e| format!("lru_gen command '{cmd}': {e} (the kernel's parser refuses it)"))
}

/// One `--memory-max PATH=SIZE` value: the memcg's path and its memory.max in pages
/// (`None` for "max"). SIZE is parsed as the kernel's `page_counter_memparse` does: "max", or
/// bytes with an optional K, M, G or T suffix (`memparse`), rounded down to whole pages.
pub fn parse_memory_max(spec: &str) -> Result<(String, Option<u64>), String> {
    let (path, size) = spec
        .split_once('=')
        .ok_or_else(|| format!("--memory-max '{spec}' is not PATH=SIZE (e.g. /app=64M)"))?;
    let path = path.trim();
    if !path.starts_with('/') || path == "/" {
        return Err(format!(
            "--memory-max '{spec}': the path must name a memcg below the root, e.g. /app \
             (the root has no memory.max)"
        ));
    }
    let size = size.trim();
    if size == "max" {
        return Ok((path.to_string(), None));
    }
    let bad =
        || format!("--memory-max '{spec}': '{size}' is not a size (bytes, K, M, G, T or max)");
    let (digits, shift) = match size.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let shift = match c.to_ascii_uppercase() {
                'K' => 10,
                'M' => 20,
                'G' => 30,
                'T' => 40,
                _ => return Err(bad()),
            };
            (&size[..i], shift)
        }
        _ => (size, 0),
    };
    let n: u64 = digits.parse().map_err(|_| bad())?;
    let bytes = n
        .checked_shl(shift)
        .filter(|b| b >> shift == n)
        .ok_or_else(bad)?;
    Ok((path.to_string(), Some(bytes >> crate::consts::PAGE_SHIFT)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lru_gen_times_never_wrap() {
        let big = u64::MAX / 1000;
        let err = parse_lru_gen_cmd(&format!("{big}:+ 0 0 1")).unwrap_err();
        assert!(err.contains("beyond the model's clock"), "{err}");
        let err =
            parse_lru_gen_schedule("# x\n\n18446744073709551615 - 0 0 1\n", "s.txt").unwrap_err();
        assert!(err.starts_with("s.txt:3: time: "), "{err}");
        assert_eq!(
            parse_lru_gen_cmd("500:- 2 0 5 60 1000").unwrap(),
            (500_000_000, "- 2 0 5 60 1000".to_string())
        );
    }

    #[test]
    fn seconds_must_be_positive_finite_and_bounded() {
        for bad in [f64::NAN, f64::INFINITY, -1.0, 0.0, 1e300] {
            assert!(seconds_to_sim_ns(bad, "--max-time").is_err(), "{bad}");
        }
        assert_eq!(seconds_to_sim_ns(2.5, "--max-time"), Ok(2_500_000_000));
    }

    #[test]
    fn enabled_parses_as_the_kernel_does() {
        assert_eq!(parse_enabled("y"), Ok(7));
        assert_eq!(parse_enabled("0x0003"), Ok(3));
        assert_eq!(parse_enabled("010"), Ok(0));
        assert!(parse_enabled("0x").is_err());
        assert!(parse_enabled("").is_err());
    }

    #[test]
    fn costs_are_named_and_numeric() {
        let mut c = CostProfile::default();
        assert!(apply_cost(&mut c, "nope=1")
            .unwrap_err()
            .starts_with("unknown cost"));
        assert!(apply_cost(&mut c, "x").is_err());
        assert!(apply_cost(&mut c, "x=-1").is_err());
    }
}
