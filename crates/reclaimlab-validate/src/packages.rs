//! Debian packages: the host tools the harness needs, and the kernels it boots.
//!
//! Kernels come from Debian's archive, from the mirror the machine's own apt configuration
//! names (never a hard-coded host), in a separate sources file and lists directory per suite
//! under the cache directory, so the machine's own apt state is untouched:
//! `apt-get -o Dir::Etc::SourceList=FILE -o Dir::Etc::SourceParts=/dev/null
//! -o Dir::State::Lists=DIR ...`. Package names are resolved with `apt-cache` from the suite's
//! `linux-image-cloud-amd64` metapackage, preferring the `-unsigned` packages; `apt-get download`
//! and `dpkg-deb -x` unpack them into the cache, once. The exact names and versions are kept
//! in `info.json` next to them and go into every result.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The kernels validated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum KernelKey {
    #[serde(rename = "6.1")]
    V6_1,
    #[serde(rename = "6.12")]
    V6_12,
    #[serde(rename = "7.2")]
    V7_2,
}

impl KernelKey {
    pub const ALL: [KernelKey; 3] = [KernelKey::V6_1, KernelKey::V6_12, KernelKey::V7_2];

    pub fn name(self) -> &'static str {
        match self {
            KernelKey::V6_1 => "6.1",
            KernelKey::V6_12 => "6.12",
            KernelKey::V7_2 => "7.2",
        }
    }

    /// The Debian suite that ships this kernel.
    pub fn suite(self) -> &'static str {
        match self {
            KernelKey::V6_1 => "bookworm",
            KernelKey::V6_12 => "trixie",
            KernelKey::V7_2 => "sid",
        }
    }

    /// The kernel-release prefix the package must have (`uname -r` starts with it).
    pub fn release_prefix(self) -> &'static str {
        match self {
            KernelKey::V6_1 => "6.1.",
            KernelKey::V6_12 => "6.12.",
            KernelKey::V7_2 => "7.2.",
        }
    }

    pub fn parse(s: &str) -> Result<KernelKey, String> {
        match s {
            "6.1" => Ok(KernelKey::V6_1),
            "6.12" => Ok(KernelKey::V6_12),
            "7.2" => Ok(KernelKey::V7_2),
            _ => Err(format!("unknown kernel '{s}' (expected 6.1, 6.12 or 7.2)")),
        }
    }
}

impl std::fmt::Display for KernelKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One unpacked kernel in the cache.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelImage {
    pub key: KernelKey,
    pub suite: String,
    /// `(package, version)` of every package unpacked.
    pub packages: Vec<(String, String)>,
    /// `uname -r`.
    pub release: String,
    pub vmlinuz: PathBuf,
    /// `lib/modules/RELEASE` of the unpacked packages.
    pub modules_dir: PathBuf,
    /// `boot/config-RELEASE`, if a package has it.
    pub config: Option<PathBuf>,
}

impl KernelImage {
    /// "linux-image-...-unsigned 6.1.176-1" lines.
    pub fn package_versions(&self) -> String {
        self.packages
            .iter()
            .map(|(p, v)| format!("{p} {v}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The default cache directory: `$XDG_CACHE_HOME/reclaimlab`, else `~/.cache/reclaimlab`.
pub fn default_cache_dir() -> PathBuf {
    if let Some(x) = std::env::var_os("XDG_CACHE_HOME").filter(|x| !x.is_empty()) {
        return PathBuf::from(x).join("reclaimlab");
    }
    let home = std::env::var_os("HOME").unwrap_or_else(|| "/root".into());
    PathBuf::from(home).join(".cache").join("reclaimlab")
}

/// The Debian mirror of the machine's own apt configuration: the first `deb` source of the
/// archive proper (not `-security`) in deb822 `.sources` files or one-line `sources.list`
/// files. `files` are `(name, contents)`.
pub fn mirror_from_apt_config(files: &[(String, String)]) -> Option<String> {
    let good = |uri: &str, suites: &[&str]| {
        !uri.contains("security") && suites.iter().any(|s| !s.contains('-') && !s.contains('/'))
    };
    for (name, text) in files {
        if name.ends_with(".sources") {
            for stanza in text.split("\n\n") {
                let mut types = "";
                let mut uris = "";
                let mut suites = "";
                let mut enabled = true;
                for line in stanza.lines() {
                    let line = line.trim_end();
                    if line.starts_with('#') {
                        continue;
                    }
                    if let Some((k, v)) = line.split_once(':') {
                        match k.trim() {
                            "Types" => types = v.trim(),
                            "URIs" => uris = v.trim(),
                            "Suites" => suites = v.trim(),
                            "Enabled" => enabled = v.trim() != "no",
                            _ => {}
                        }
                    }
                }
                let suites: Vec<&str> = suites.split_whitespace().collect();
                if enabled && types.split_whitespace().any(|t| t == "deb") {
                    if let Some(uri) = uris.split_whitespace().find(|u| good(u, &suites)) {
                        return Some(uri.trim_end_matches('/').to_string());
                    }
                }
            }
        } else {
            for line in text.lines() {
                let line = line.trim();
                let Some(rest) = line.strip_prefix("deb ") else {
                    continue;
                };
                let rest = rest.trim();
                let rest = if rest.starts_with('[') {
                    rest.split_once(']').map_or("", |(_, r)| r.trim())
                } else {
                    rest
                };
                let mut it = rest.split_whitespace();
                let (Some(uri), Some(suite)) = (it.next(), it.next()) else {
                    continue;
                };
                if good(uri, &[suite]) {
                    return Some(uri.trim_end_matches('/').to_string());
                }
            }
        }
    }
    None
}

/// Reads the machine's apt sources and returns its mirror.
pub fn machine_mirror() -> Result<String, String> {
    let mut files = Vec::new();
    if let Ok(t) = std::fs::read_to_string("/etc/apt/sources.list") {
        files.push(("sources.list".to_string(), t));
    }
    if let Ok(rd) = std::fs::read_dir("/etc/apt/sources.list.d") {
        let mut paths: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
        paths.sort();
        for p in paths {
            let name = p
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .to_string();
            if name.ends_with(".sources") || name.ends_with(".list") {
                if let Ok(t) = std::fs::read_to_string(&p) {
                    files.push((name, t));
                }
            }
        }
    }
    mirror_from_apt_config(&files)
        .ok_or_else(|| "no Debian mirror found in /etc/apt/sources.list(.d)".to_string())
}

fn run(cmd: &mut Command) -> Result<String, String> {
    let shown = format!("{cmd:?}");
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run {shown}: {e}"))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(format!(
            "{shown} failed: {}",
            err.lines().last().unwrap_or("").trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The host tools and the Debian packages that provide them.
pub const HOST_TOOLS: &[(&str, &str)] = &[
    ("qemu-system-x86_64", "qemu-system-x86"),
    ("busybox", "busybox-static"),
    ("mkfs.ext4", "e2fsprogs"),
    ("cpio", "cpio"),
    ("xz", "xz-utils"),
    ("zstd", "zstd"),
];

fn have(tool: &str) -> bool {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/sbin"), PathBuf::from("/usr/sbin")])
        .any(|d| d.join(tool).is_file())
}

/// Installs (with apt-get) the packages of any missing host tool. busybox must be the static
/// build: the guest has no C library.
pub fn ensure_host_tools(log: &mut dyn FnMut(&str)) -> Result<(), String> {
    let mut missing: Vec<&str> = HOST_TOOLS
        .iter()
        .filter(|(tool, _)| !have(tool))
        .map(|(_, pkg)| *pkg)
        .collect();
    if have("busybox") && !busybox_is_static(&busybox_path()) {
        missing.push("busybox-static");
    }
    if missing.is_empty() {
        return Ok(());
    }
    log(&format!("installing {}", missing.join(" ")));
    run(Command::new("apt-get").args(["update", "-qq"]))?;
    run(Command::new("apt-get")
        .env("DEBIAN_FRONTEND", "noninteractive")
        .args(["install", "-y", "-qq", "--no-install-recommends"])
        .args(&missing))?;
    Ok(())
}

/// Where busybox is.
pub fn busybox_path() -> PathBuf {
    for p in ["/bin/busybox", "/usr/bin/busybox"] {
        if Path::new(p).is_file() {
            return PathBuf::from(p);
        }
    }
    PathBuf::from("/bin/busybox")
}

/// An ELF executable without a program interpreter (PT_INTERP) is statically linked.
pub fn busybox_is_static(path: &Path) -> bool {
    std::fs::read(path)
        .map(|b| elf_is_static(&b))
        .unwrap_or(false)
}

/// True for a 64-bit little-endian ELF with no PT_INTERP program header.
pub fn elf_is_static(b: &[u8]) -> bool {
    if b.len() < 64 || &b[0..4] != b"\x7fELF" || b[4] != 2 || b[5] != 1 {
        return false;
    }
    let u16_at = |o: usize| u16::from_le_bytes([b[o], b[o + 1]]) as usize;
    let phoff = u64::from_le_bytes(b[32..40].try_into().unwrap()) as usize;
    let phentsize = u16_at(54);
    let phnum = u16_at(56);
    for i in 0..phnum {
        let o = phoff + i * phentsize;
        if o + 4 > b.len() {
            return false;
        }
        if u32::from_le_bytes(b[o..o + 4].try_into().unwrap()) == 3 {
            return false;
        }
    }
    true
}

/// apt-get/apt-cache options that point at the suite's own sources and lists.
fn apt_opts(dir: &Path) -> Vec<String> {
    vec![
        format!(
            "-o=Dir::Etc::SourceList={}",
            dir.join("sources.list").display()
        ),
        "-o=Dir::Etc::SourceParts=/dev/null".into(),
        format!("-o=Dir::State::Lists={}", dir.join("lists").display()),
        format!(
            "-o=Dir::Cache::pkgcache={}",
            dir.join("pkgcache.bin").display()
        ),
        format!(
            "-o=Dir::Cache::srcpkgcache={}",
            dir.join("srcpkgcache.bin").display()
        ),
    ]
}

/// The versioned image package the metapackage points at, from `apt-cache depends` output.
pub fn image_from_depends(depends: &str) -> Option<String> {
    depends
        .lines()
        .filter_map(|l| l.trim().strip_prefix("Depends:"))
        .map(|p| p.trim().trim_start_matches('<').trim_end_matches('>'))
        .find(|p| p.starts_with("linux-image-") && p.ends_with("-cloud-amd64"))
        .map(|s| s.to_string())
}

/// Package names in a `Depends:` field of `apt-cache show` output (alternatives included).
pub fn depends_field(show: &str) -> Vec<String> {
    let Some(line) = show.lines().find(|l| l.starts_with("Depends:")) else {
        return Vec::new();
    };
    line["Depends:".len()..]
        .split([',', '|'])
        .filter_map(|d| d.split_whitespace().next())
        .map(|s| s.to_string())
        .collect()
}

fn field(show: &str, name: &str) -> Option<String> {
    show.lines()
        .find_map(|l| l.strip_prefix(&format!("{name}: ")))
        .map(|v| v.trim().to_string())
}

/// Fetches (once) and unpacks the cloud kernel of `key` into `cache/kernels/KEY`.
pub fn fetch_kernel(
    cache: &Path,
    key: KernelKey,
    log: &mut dyn FnMut(&str),
) -> Result<KernelImage, String> {
    let kdir = cache.join("kernels").join(key.name());
    let info = kdir.join("info.json");
    if let Ok(text) = std::fs::read_to_string(&info) {
        if let Ok(k) = serde_json::from_str::<KernelImage>(&text) {
            if k.vmlinuz.is_file() {
                return Ok(k);
            }
        }
    }
    let mirror = machine_mirror()?;
    let adir = cache.join("apt").join(key.suite());
    std::fs::create_dir_all(adir.join("lists").join("partial"))
        .map_err(|e| format!("{}: {e}", adir.display()))?;
    std::fs::write(
        adir.join("sources.list"),
        format!(
            "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] {mirror} {} main\n",
            key.suite()
        ),
    )
    .map_err(|e| e.to_string())?;
    let opts = apt_opts(&adir);
    log(&format!("apt-get update for {} ({mirror})", key.suite()));
    run(Command::new("apt-get").args(&opts).args(["update", "-qq"]))?;
    let cache_cmd = |args: &[&str]| run(Command::new("apt-cache").args(&opts).args(args));
    let image = image_from_depends(&cache_cmd(&["depends", "linux-image-cloud-amd64"])?)
        .ok_or_else(|| format!("{}: no linux-image-*-cloud-amd64", key.suite()))?;
    let abi = image.trim_start_matches("linux-image-").to_string();
    if !abi.starts_with(key.release_prefix()) {
        return Err(format!(
            "{} ships {image}, not a {} kernel",
            key.suite(),
            key.name()
        ));
    }
    let exists = |p: &str| cache_cmd(&["show", "--no-all-versions", p]).ok();
    let mut wanted: Vec<String> = Vec::new();
    if exists(&format!("{image}-unsigned")).is_some() {
        wanted.push(format!("{image}-unsigned"));
    } else {
        let show = exists(&image).ok_or_else(|| format!("apt-cache show {image} failed"))?;
        for dep in depends_field(&show) {
            if !dep.starts_with("linux-") || !dep.ends_with(&abi) {
                continue;
            }
            let part = dep
                .trim_start_matches("linux-")
                .trim_end_matches(&abi)
                .trim_end_matches('-');
            let unsigned = format!("linux-{part}-unsigned-{abi}");
            let pick = if exists(&unsigned).is_some() {
                unsigned
            } else {
                dep
            };
            if !wanted.contains(&pick) {
                wanted.push(pick);
            }
        }
    }
    let mut packages = Vec::new();
    for p in &wanted {
        let show = exists(p).ok_or_else(|| format!("apt-cache show {p} failed"))?;
        let v = field(&show, "Version").ok_or_else(|| format!("{p}: no Version"))?;
        packages.push((p.clone(), v));
    }
    let debs = kdir.join("debs");
    let root = kdir.join("root");
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&debs).map_err(|e| e.to_string())?;
    std::fs::create_dir_all(&root).map_err(|e| e.to_string())?;
    for (p, v) in &packages {
        log(&format!("apt-get download {p}={v}"));
        run(Command::new("apt-get")
            .current_dir(&debs)
            .args(&opts)
            .args(["download", "-qq", &format!("{p}={v}")]))?;
    }
    for entry in std::fs::read_dir(&debs).map_err(|e| e.to_string())? {
        let path = entry.map_err(|e| e.to_string())?.path();
        if path.extension().is_some_and(|e| e == "deb") {
            run(Command::new("dpkg-deb").arg("-x").arg(&path).arg(&root))?;
        }
    }
    // bookworm and trixie put the image in boot/vmlinuz-RELEASE and the modules in
    // (usr/)lib/modules/RELEASE; sid's split packages keep vmlinuz and config inside the
    // modules directory.
    let mut modules_dir = None;
    for d in ["lib/modules", "usr/lib/modules"] {
        if let Ok(rd) = std::fs::read_dir(root.join(d)) {
            for e in rd.flatten() {
                if e.path().is_dir() {
                    modules_dir = Some(e.path());
                }
            }
        }
    }
    let modules_dir = modules_dir.ok_or("no lib/modules/RELEASE in the kernel packages")?;
    let release = modules_dir
        .file_name()
        .unwrap()
        .to_string_lossy()
        .to_string();
    let boot = root.join("boot");
    let vmlinuz = [
        boot.join(format!("vmlinuz-{release}")),
        modules_dir.join("vmlinuz"),
        modules_dir.join("vmlinuz.unsigned"),
    ]
    .into_iter()
    .find(|p| p.is_file())
    .ok_or_else(|| format!("no vmlinuz for {release} in the kernel packages"))?;
    let config = [
        boot.join(format!("config-{release}")),
        modules_dir.join("config"),
    ]
    .into_iter()
    .find(|p| p.is_file());
    let k = KernelImage {
        key,
        suite: key.suite().to_string(),
        packages,
        release,
        vmlinuz,
        modules_dir,
        config,
    };
    crate::write_atomic(&info, serde_json::to_string_pretty(&k).unwrap().as_bytes())?;
    Ok(k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mirror_from_deb822_skips_security() {
        let text = "Types: deb\nURIs: http://example.invalid/debian-security\nSuites: bookworm-security\nComponents: main\n\nTypes: deb\n# comment\nURIs: http://mirror.example/debian/\nSuites: bookworm bookworm-updates\nComponents: main\n";
        let files = vec![("debian.sources".to_string(), text.to_string())];
        assert_eq!(
            mirror_from_apt_config(&files).as_deref(),
            Some("http://mirror.example/debian")
        );
    }

    #[test]
    fn mirror_from_one_line_sources() {
        let text = "# x\ndeb http://sec.example/debian-security bookworm-security main\ndeb [arch=amd64 signed-by=/k.gpg] http://m.example/debian bookworm main\n";
        let files = vec![("sources.list".to_string(), text.to_string())];
        assert_eq!(
            mirror_from_apt_config(&files).as_deref(),
            Some("http://m.example/debian")
        );
        assert_eq!(mirror_from_apt_config(&[]), None);
    }

    #[test]
    fn resolves_image_and_depends() {
        let dep = "linux-image-cloud-amd64\n  Depends: linux-base-cloud-amd64\n  Depends: linux-image-7.2.13+deb14-cloud-amd64\n";
        assert_eq!(
            image_from_depends(dep).as_deref(),
            Some("linux-image-7.2.13+deb14-cloud-amd64")
        );
        let show = "Package: x\nDepends: dracut | initramfs-tools (>= 0.120+deb8u2), linux-binary-7.2.13+deb14-cloud-amd64 (= 7.2.13-1), linux-modules-7.2.13+deb14-cloud-amd64 (= 7.2.13-1)\n";
        let d = depends_field(show);
        assert!(d.contains(&"linux-binary-7.2.13+deb14-cloud-amd64".to_string()));
        assert!(d.contains(&"initramfs-tools".to_string()));
        assert_eq!(KernelKey::parse("6.12").unwrap().suite(), "trixie");
        assert!(KernelKey::parse("5.10").is_err());
    }

    #[test]
    fn static_elf_detection() {
        let mut elf = vec![0u8; 64 + 56];
        elf[0..4].copy_from_slice(b"\x7fELF");
        elf[4] = 2;
        elf[5] = 1;
        elf[32..40].copy_from_slice(&64u64.to_le_bytes());
        elf[54..56].copy_from_slice(&56u16.to_le_bytes());
        elf[56..58].copy_from_slice(&1u16.to_le_bytes());
        elf[64..68].copy_from_slice(&1u32.to_le_bytes()); // PT_LOAD
        assert!(elf_is_static(&elf));
        elf[64..68].copy_from_slice(&3u32.to_le_bytes()); // PT_INTERP
        assert!(!elf_is_static(&elf));
        assert!(!elf_is_static(b"#!/bin/sh"));
    }
}
