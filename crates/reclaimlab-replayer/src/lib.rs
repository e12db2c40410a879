//! The replay plan: what the static guest replayer executes, in a small binary format the host
//! writes (`reclaimlab-validate`) and the guest reads (`reclaimlab-replayer`).
//!
//! A plan is a reclaimlab trace made concrete for one guest: memcg paths, the files on the data
//! disk, one process per trace pid with the size of its anonymous area, and the records in the
//! order the guest executes them (the trace's file order, across pids).
//!
//! # Format (all integers little-endian)
//!
//! ```text
//! magic      8 bytes  "RLPLAN01" (serial) or "RLPLAN02" (flags follow)
//! flags      u32      only after "RLPLAN02": bit 0 = concurrent (see below)
//! n_memcgs   u32      then per memcg: u16 index, u16 length, path bytes (UTF-8, starts with '/')
//! n_files    u32      then per file: u32 id, u64 size in pages, u16 length, name bytes
//! n_procs    u32      then per process: u32 trace pid, u16 memcg index, u64 anon pages
//! n_records  u64      then per record 16 bytes:
//!                       u32 process index (bit 31: write, bit 30: through a mapping)
//!                       u32 file slot (index into the file list) or u32::MAX for anon
//!                       u64 page
//! ```
//!
//! The memcg list holds every memcg a process uses (index 0, the root, is never listed).
//!
//! A serial plan (`RLPLAN01`, or `RLPLAN02` without the concurrent flag) is replayed strictly in
//! record order, one process at a time. A concurrent plan (`RLPLAN02`, flag bit 0) gives every
//! process all its records at once: the processes wait at a start barrier and then run their
//! records (in record order within each process) in parallel, as the scheduler runs them. A
//! plan without flags is always written as `RLPLAN01`, byte for byte as before the flag existed.

use std::fmt;

/// First bytes of every plan.
pub const PLAN_MAGIC: &[u8; 8] = b"RLPLAN01";
/// First bytes of a plan with a flags word.
pub const PLAN_MAGIC_FLAGS: &[u8; 8] = b"RLPLAN02";
/// Plan flag: processes replay in parallel after a start barrier.
pub const FLAG_CONCURRENT: u32 = 1;
/// File slot of an anonymous record.
pub const ANON: u32 = u32::MAX;
const WRITE_BIT: u32 = 1 << 31;
const MMAP_BIT: u32 = 1 << 30;
const PROC_MASK: u32 = MMAP_BIT - 1;

/// One memcg of the plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlanMemcg {
    pub index: u16,
    pub path: String,
}

/// One file on the guest's data disk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlanFile {
    pub id: u32,
    pub pages: u64,
    /// The file's name in the data directory.
    pub name: String,
}

/// One replaying process (a trace pid).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlanProc {
    pub pid: u32,
    pub memcg: u16,
    pub anon_pages: u64,
}

/// One access, packed as it is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlanRecord {
    pub proc_and_flags: u32,
    pub file_slot: u32,
    pub page: u64,
}

impl PlanRecord {
    pub fn new(proc_index: u32, file_slot: u32, page: u64, write: bool, mmap: bool) -> Self {
        assert!(proc_index <= PROC_MASK, "too many processes");
        let mut p = proc_index;
        if write {
            p |= WRITE_BIT;
        }
        if mmap {
            p |= MMAP_BIT;
        }
        PlanRecord {
            proc_and_flags: p,
            file_slot,
            page,
        }
    }
    pub fn proc_index(&self) -> usize {
        (self.proc_and_flags & PROC_MASK) as usize
    }
    pub fn is_write(&self) -> bool {
        self.proc_and_flags & WRITE_BIT != 0
    }
    pub fn is_mmap(&self) -> bool {
        self.proc_and_flags & MMAP_BIT != 0
    }
    pub fn is_anon(&self) -> bool {
        self.file_slot == ANON
    }
    pub fn to_bytes(self) -> [u8; 16] {
        let mut b = [0u8; 16];
        b[0..4].copy_from_slice(&self.proc_and_flags.to_le_bytes());
        b[4..8].copy_from_slice(&self.file_slot.to_le_bytes());
        b[8..16].copy_from_slice(&self.page.to_le_bytes());
        b
    }
    pub fn from_bytes(b: &[u8]) -> Self {
        PlanRecord {
            proc_and_flags: u32::from_le_bytes(b[0..4].try_into().unwrap()),
            file_slot: u32::from_le_bytes(b[4..8].try_into().unwrap()),
            page: u64::from_le_bytes(b[8..16].try_into().unwrap()),
        }
    }
}

/// The plan without its records (the records stay in the byte buffer they came in, so the guest
/// can keep them in memory it allocated before joining a memcg).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PlanHeader {
    pub memcgs: Vec<PlanMemcg>,
    pub files: Vec<PlanFile>,
    pub procs: Vec<PlanProc>,
    pub n_records: u64,
    /// Processes replay concurrently (`RLPLAN02` with [`FLAG_CONCURRENT`]).
    pub concurrent: bool,
}

impl PlanHeader {
    /// The path of memcg `index` ("/" for 0).
    pub fn memcg_path(&self, index: u16) -> Option<&str> {
        if index == 0 {
            return Some("/");
        }
        self.memcgs
            .iter()
            .find(|m| m.index == index)
            .map(|m| m.path.as_str())
    }
}

/// A malformed plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanError(pub String);

impl fmt::Display for PlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "bad replay plan: {}", self.0)
    }
}

impl std::error::Error for PlanError {}

/// Writes a whole plan.
pub fn encode_plan(h: &PlanHeader, records: &[PlanRecord]) -> Vec<u8> {
    let mut out = Vec::with_capacity(64 + records.len() * 16);
    if h.concurrent {
        out.extend_from_slice(PLAN_MAGIC_FLAGS);
        out.extend_from_slice(&FLAG_CONCURRENT.to_le_bytes());
    } else {
        out.extend_from_slice(PLAN_MAGIC);
    }
    out.extend_from_slice(&(h.memcgs.len() as u32).to_le_bytes());
    for m in &h.memcgs {
        out.extend_from_slice(&m.index.to_le_bytes());
        put_str(&mut out, &m.path);
    }
    out.extend_from_slice(&(h.files.len() as u32).to_le_bytes());
    for f in &h.files {
        out.extend_from_slice(&f.id.to_le_bytes());
        out.extend_from_slice(&f.pages.to_le_bytes());
        put_str(&mut out, &f.name);
    }
    out.extend_from_slice(&(h.procs.len() as u32).to_le_bytes());
    for p in &h.procs {
        out.extend_from_slice(&p.pid.to_le_bytes());
        out.extend_from_slice(&p.memcg.to_le_bytes());
        out.extend_from_slice(&p.anon_pages.to_le_bytes());
    }
    out.extend_from_slice(&(records.len() as u64).to_le_bytes());
    for r in records {
        out.extend_from_slice(&r.to_bytes());
    }
    out
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    assert!(s.len() <= u16::MAX as usize, "name too long");
    out.extend_from_slice(&(s.len() as u16).to_le_bytes());
    out.extend_from_slice(s.as_bytes());
}

struct Cursor<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], PlanError> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.b.len())
            .ok_or_else(|| PlanError(format!("truncated at byte {}", self.at)))?;
        let s = &self.b[self.at..end];
        self.at = end;
        Ok(s)
    }
    fn u16(&mut self) -> Result<u16, PlanError> {
        Ok(u16::from_le_bytes(self.take(2)?.try_into().unwrap()))
    }
    fn u32(&mut self) -> Result<u32, PlanError> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().unwrap()))
    }
    fn u64(&mut self) -> Result<u64, PlanError> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().unwrap()))
    }
    fn string(&mut self) -> Result<String, PlanError> {
        let n = self.u16()? as usize;
        String::from_utf8(self.take(n)?.to_vec()).map_err(|_| PlanError("name is not UTF-8".into()))
    }
}

/// Reads a plan's header and checks every record; returns the header and the byte offset at
/// which the records start.
pub fn decode_plan(b: &[u8]) -> Result<(PlanHeader, usize), PlanError> {
    let mut c = Cursor { b, at: 0 };
    let mut h = PlanHeader::default();
    let magic = c.take(8)?;
    if magic == PLAN_MAGIC_FLAGS {
        let flags = c.u32()?;
        if flags & !FLAG_CONCURRENT != 0 {
            return Err(PlanError(format!("unknown plan flags {flags:#x}")));
        }
        h.concurrent = flags & FLAG_CONCURRENT != 0;
    } else if magic != PLAN_MAGIC {
        return Err(PlanError(
            "wrong magic (expected RLPLAN01 or RLPLAN02)".into(),
        ));
    }
    for _ in 0..c.u32()? {
        let index = c.u16()?;
        let path = c.string()?;
        if index == 0 || !path.starts_with('/') {
            return Err(PlanError(format!("bad memcg {index} '{path}'")));
        }
        h.memcgs.push(PlanMemcg { index, path });
    }
    for _ in 0..c.u32()? {
        let id = c.u32()?;
        let pages = c.u64()?;
        let name = c.string()?;
        if name.is_empty() || name.contains('/') {
            return Err(PlanError(format!("bad file name '{name}'")));
        }
        h.files.push(PlanFile { id, pages, name });
    }
    for _ in 0..c.u32()? {
        let pid = c.u32()?;
        let memcg = c.u16()?;
        let anon_pages = c.u64()?;
        if h.memcg_path(memcg).is_none() {
            return Err(PlanError(format!(
                "process {pid} uses undeclared memcg {memcg}"
            )));
        }
        h.procs.push(PlanProc {
            pid,
            memcg,
            anon_pages,
        });
    }
    h.n_records = c.u64()?;
    let start = c.at;
    let len = (h.n_records as usize)
        .checked_mul(16)
        .ok_or_else(|| PlanError("too many records".into()))?;
    if b.len() - start != len {
        return Err(PlanError(format!(
            "{} record bytes for {} records",
            b.len() - start,
            h.n_records
        )));
    }
    for (i, chunk) in b[start..].chunks_exact(16).enumerate() {
        let r = PlanRecord::from_bytes(chunk);
        let p = h
            .procs
            .get(r.proc_index())
            .ok_or_else(|| PlanError(format!("record {i}: no process {}", r.proc_index())))?;
        if r.is_anon() {
            if !r.is_mmap() || r.page >= p.anon_pages {
                return Err(PlanError(format!("record {i}: bad anon access")));
            }
        } else {
            let f = h
                .files
                .get(r.file_slot as usize)
                .ok_or_else(|| PlanError(format!("record {i}: no file slot {}", r.file_slot)))?;
            if r.page >= f.pages {
                return Err(PlanError(format!(
                    "record {i}: page {} beyond file {}",
                    r.page, f.name
                )));
            }
        }
    }
    Ok((h, start))
}

/// Hex digits of a miss map: one bit per record (1 = miss), records in order, bit 7 of each byte
/// first. Used by the guest to print and by the host to read.
pub fn missmap_hex(bits: impl Iterator<Item = bool>) -> String {
    let mut out = String::new();
    let mut byte = 0u8;
    let mut n = 0;
    for b in bits {
        byte = (byte << 1) | b as u8;
        n += 1;
        if n == 8 {
            out.push_str(&format!("{byte:02x}"));
            byte = 0;
            n = 0;
        }
    }
    if n > 0 {
        byte <<= 8 - n;
        out.push_str(&format!("{byte:02x}"));
    }
    out
}

/// Every memcg path with its ancestors (root excluded), parents before children.
pub fn memcg_tree(paths: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for p in paths {
        let mut prefix = String::new();
        for part in p.split('/').filter(|s| !s.is_empty()) {
            prefix.push('/');
            prefix.push_str(part);
            if !out.contains(&prefix) {
                out.push(prefix.clone());
            }
        }
    }
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> (PlanHeader, Vec<PlanRecord>) {
        let h = PlanHeader {
            memcgs: vec![PlanMemcg {
                index: 1,
                path: "/w".into(),
            }],
            files: vec![PlanFile {
                id: 7,
                pages: 10,
                name: "file7".into(),
            }],
            procs: vec![PlanProc {
                pid: 100,
                memcg: 1,
                anon_pages: 4,
            }],
            n_records: 3,
            concurrent: false,
        };
        let r = vec![
            PlanRecord::new(0, 0, 9, false, false),
            PlanRecord::new(0, ANON, 3, true, true),
            PlanRecord::new(0, 0, 0, true, true),
        ];
        (h, r)
    }

    #[test]
    fn round_trip() {
        let (h, r) = sample();
        let b = encode_plan(&h, &r);
        let (h2, start) = decode_plan(&b).unwrap();
        assert_eq!(h, h2);
        let back: Vec<PlanRecord> = b[start..]
            .chunks_exact(16)
            .map(PlanRecord::from_bytes)
            .collect();
        assert_eq!(back, r);
        assert!(back[1].is_anon() && back[1].is_write() && back[1].is_mmap());
        assert!(!back[0].is_write() && !back[0].is_mmap() && back[0].proc_index() == 0);
    }

    #[test]
    fn rejects_bad_plans() {
        let (h, mut r) = sample();
        let b = encode_plan(&h, &r);
        assert!(decode_plan(&b[..b.len() - 1]).is_err());
        assert!(decode_plan(b"RLPLAN02").is_err());
        assert!(decode_plan(b"RLPLAN03\0\0\0\0")
            .unwrap_err()
            .0
            .contains("magic"));
        let mut flags = b"RLPLAN02".to_vec();
        flags.extend_from_slice(&2u32.to_le_bytes());
        assert!(decode_plan(&flags).unwrap_err().0.contains("flags"));
        r.push(PlanRecord::new(0, 0, 10, false, false));
        assert!(decode_plan(&encode_plan(&h, &r))
            .unwrap_err()
            .0
            .contains("beyond"));
    }

    #[test]
    fn concurrent_flag_round_trips_and_serial_plans_stay_v1() {
        let (mut h, r) = sample();
        let serial = encode_plan(&h, &r);
        assert_eq!(&serial[..8], PLAN_MAGIC);
        assert!(!decode_plan(&serial).unwrap().0.concurrent);
        h.concurrent = true;
        let b = encode_plan(&h, &r);
        assert_eq!(&b[..8], PLAN_MAGIC_FLAGS);
        assert_eq!(b.len(), serial.len() + 4);
        let (h2, start) = decode_plan(&b).unwrap();
        assert!(h2.concurrent);
        assert_eq!(h2, h);
        assert_eq!(&b[start..], &serial[serial.len() - 3 * 16..]);
    }

    #[test]
    fn missmap_bits() {
        let bits = [true, false, false, false, false, false, false, true, true];
        assert_eq!(missmap_hex(bits.into_iter()), "8180");
    }
}
