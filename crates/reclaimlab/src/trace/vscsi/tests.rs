use super::*;
use crate::access::{PageRef, Via};
use std::collections::HashSet;

const SAMPLE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/traces/cloudPhysicsIO.vscsi"
);

/// Fields a test sets; the rest (sn, nSG, rt) get junk so that misplaced reads show.
#[derive(Clone, Copy)]
struct Req {
    cmd: u16,
    len: u32,
    lbn: u64,
    ts_us: u64,
}

fn v1(r: Req) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(&0xDEAD_BEEFu32.to_le_bytes()); // sn
    b.extend_from_slice(&r.len.to_le_bytes());
    b.extend_from_slice(&7u32.to_le_bytes()); // nSG
    b.extend_from_slice(&r.cmd.to_le_bytes());
    b.extend_from_slice(&0x0100u16.to_le_bytes()); // ver
    b.extend_from_slice(&r.lbn.to_le_bytes());
    b.extend_from_slice(&r.ts_us.to_le_bytes());
    assert_eq!(b.len(), 32);
    b
}

fn v2(r: Req) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(&r.cmd.to_le_bytes());
    b.extend_from_slice(&0x0200u16.to_le_bytes()); // ver
    b.extend_from_slice(&0xDEAD_BEEFu32.to_le_bytes()); // sn
    b.extend_from_slice(&r.len.to_le_bytes());
    b.extend_from_slice(&7u32.to_le_bytes()); // nSG
    b.extend_from_slice(&r.lbn.to_le_bytes());
    b.extend_from_slice(&r.ts_us.to_le_bytes());
    b.extend_from_slice(&u64::MAX.to_le_bytes()); // rt
    assert_eq!(b.len(), 40);
    b
}

/// Three requests: a read straddling pages 0 and 1, a non-data command, a one-page write.
fn requests() -> [Req; 3] {
    [
        Req {
            cmd: 0x28,
            len: 1024,
            lbn: 7,
            ts_us: 1_000_005,
        },
        Req {
            cmd: 0x35, // SYNCHRONIZE CACHE(10)
            len: 0,
            lbn: 0,
            ts_us: 1_000_006,
        },
        Req {
            cmd: 0x2A,
            len: 4096,
            lbn: 16,
            ts_us: 1_000_010,
        },
    ]
}

fn encode(version: VscsiVersion, reqs: &[Req]) -> Vec<u8> {
    let one = match version {
        VscsiVersion::V1 => v1,
        VscsiVersion::V2 => v2,
    };
    reqs.iter().flat_map(|r| one(*r)).collect()
}

fn summary(records: &[TraceRecord]) -> Vec<(u64, u64, Op)> {
    records
        .iter()
        .map(|r| match r.page {
            PageRef::File { file: 0, page } => (r.time_ns, page, r.op),
            other => panic!("unexpected page {other:?}"),
        })
        .collect()
}

#[test]
fn both_versions_decode_to_the_same_pages() {
    for version in [VscsiVersion::V1, VscsiVersion::V2] {
        let trace = read_vscsi(&encode(version, &requests())).unwrap();
        assert_eq!(trace.version, version);
        assert_eq!(trace.requests, 3);
        assert_eq!(trace.skipped, 1);
        // lbn 7 * 512 = 3584, + 1024 bytes: pages 0 and 1; lbn 16 * 512 = 8192: page 2.
        assert_eq!(
            summary(&trace.records),
            vec![(0, 0, Op::Read), (0, 1, Op::Read), (5000, 2, Op::Write)],
            "{version:?}"
        );
        assert!(trace
            .records
            .iter()
            .all(|r| r.pid == 1 && r.memcg == 0 && r.via == Via::Fd));
        assert_eq!(trace.header.files, vec![(0, 3, None)]);
    }
}

#[test]
fn a_multi_page_read_is_one_request_of_its_length() {
    // A 20 KiB read from lbn 16 (page 2): pages 2..7 are one read() of 5 pages, req 5..1; a
    // multi-page write carries no request length (readahead is for reads).
    let reqs = [
        Req {
            cmd: 0x28,
            len: 5 * 4096,
            lbn: 16,
            ts_us: 1_000_000,
        },
        Req {
            cmd: 0x2A,
            len: 2 * 4096,
            lbn: 64,
            ts_us: 1_000_001,
        },
        Req {
            cmd: 0x35, // SYNCHRONIZE CACHE(10): skipped (detection needs three records)
            len: 0,
            lbn: 0,
            ts_us: 1_000_002,
        },
    ];
    for version in [VscsiVersion::V1, VscsiVersion::V2] {
        let trace = read_vscsi(&encode(version, &reqs)).unwrap();
        let got: Vec<(u64, u32)> = trace
            .records
            .iter()
            .map(|r| match r.page {
                PageRef::File { page, .. } => (page, r.req),
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(
            got,
            vec![(2, 5), (3, 4), (4, 3), (5, 2), (6, 1), (8, 1), (9, 1)],
            "{version:?}"
        );
        // The streaming reader agrees.
        let input: Box<dyn std::io::BufRead + Send> =
            Box::new(std::io::Cursor::new(encode(version, &reqs)));
        let mut stream =
            crate::trace::records_from(input, &crate::trace::TraceFormat::Vscsi).unwrap();
        let mut streamed = Vec::new();
        while let Some(r) = stream.next_record().unwrap() {
            // Streams keep raw times (the replay rebases them).
            streamed.push((r.page, r.req));
        }
        let whole: Vec<_> = trace.records.iter().map(|r| (r.page, r.req)).collect();
        assert_eq!(streamed, whole, "{version:?}");
    }
}

#[test]
fn zero_length_request_touches_one_page() {
    let mut reqs = requests();
    reqs[1] = Req {
        cmd: 0x08,
        len: 0,
        lbn: 9,
        ts_us: 1_000_006,
    };
    let trace = read_vscsi(&encode(VscsiVersion::V1, &reqs)).unwrap();
    assert_eq!(trace.skipped, 0);
    assert_eq!(summary(&trace.records)[2], (1000, 1, Op::Read));
}

#[test]
fn opcodes_map_to_read_and_write() {
    for cmd in [0x08, 0x28, 0x2D, 0x88, 0xA8] {
        assert_eq!(scsi_op(cmd), Some(Op::Read), "{cmd:#x}");
    }
    for cmd in [0x0A, 0x2A, 0x3F, 0x8A, 0x8E, 0x9A, 0x9C, 0xAA, 0xAE] {
        assert_eq!(scsi_op(cmd), Some(Op::Write), "{cmd:#x}");
    }
    for cmd in [0x00, 0x12, 0x25, 0x35, 0x91, 0x128, 0x12A] {
        assert_eq!(scsi_op(cmd), None, "{cmd:#x}");
    }
}

#[test]
fn version_detection_follows_libcachesim() {
    let v1_bytes = encode(VscsiVersion::V1, &requests());
    let v2_bytes = encode(VscsiVersion::V2, &requests());
    assert_eq!(detect_vscsi_version(&v1_bytes).unwrap(), VscsiVersion::V1);
    assert_eq!(detect_vscsi_version(&v2_bytes).unwrap(), VscsiVersion::V2);

    let mut unknown = v1_bytes.clone();
    unknown[32 + 15] = 3; // second record's version byte
    assert_eq!(
        read_vscsi(&unknown).unwrap_err().to_string(),
        "byte offset 0: not a vscsi trace: no version 1 or 2 tag in the first two records"
    );

    assert_eq!(
        read_vscsi(&v1_bytes[..64]).unwrap_err().to_string(),
        "byte offset 0: file of 64 bytes is too small to detect the vscsi version (needs at least 80)"
    );
}

#[test]
fn truncated_final_record_is_an_error() {
    let mut bytes = encode(VscsiVersion::V1, &requests());
    bytes.extend_from_slice(&[1, 2, 3, 4, 5]);
    assert_eq!(
        read_vscsi(&bytes).unwrap_err().to_string(),
        "byte offset 96: truncated record: 5 of 32 bytes"
    );
    let mut bytes = encode(VscsiVersion::V2, &requests());
    bytes.pop();
    assert_eq!(
        read_vscsi(&bytes).unwrap_err().to_string(),
        "byte offset 80: truncated record: 39 of 40 bytes"
    );
}

#[test]
fn out_of_range_fields_are_errors_not_panics() {
    let mut reqs = requests();
    reqs[2].lbn = u64::MAX / 256;
    assert_eq!(
        read_vscsi(&encode(VscsiVersion::V1, &reqs))
            .unwrap_err()
            .to_string(),
        format!(
            "byte offset 64: request at lbn {} of 4096 bytes runs past the 64-bit byte range",
            u64::MAX / 256
        )
    );
    let mut reqs = requests();
    reqs[0].ts_us = u64::MAX;
    assert_eq!(
        read_vscsi(&encode(VscsiVersion::V2, &reqs))
            .unwrap_err()
            .to_string(),
        format!(
            "byte offset 0: timestamp {} us does not fit in u64 ns",
            u64::MAX
        )
    );
}

fn sample_bytes() -> Option<Vec<u8>> {
    match std::fs::read(SAMPLE) {
        Ok(bytes) => Some(bytes),
        Err(e) => {
            eprintln!("note: skipping, sample vscsi trace {SAMPLE} not readable: {e}");
            None
        }
    }
}

/// The expected figures were computed independently with
/// `tests/fixtures/trace/vscsi_stats.py` (Python `struct.unpack('<IIIHHQQ')` over the 32-byte
/// records, lbn * 512 as the byte offset, 4 KiB pages), cross-checked for the record count
/// with the file size (3,643,904 bytes / 32) and for the first record with `xxd`.
#[test]
fn cloudphysics_sample_matches_independent_figures() {
    let Some(bytes) = sample_bytes() else {
        return;
    };
    let trace = read_vscsi(&bytes).unwrap();
    assert_eq!(trace.version, VscsiVersion::V1);
    assert_eq!(trace.requests, 113_872);
    assert_eq!(trace.skipped, 0);
    assert_eq!(trace.records.len(), 1_141_869);

    // First request: cmd 0x2A (write), len 512, lbn 42932745, ts 5633898368802 us, the earliest.
    let first = trace.records[0];
    assert_eq!(
        first,
        TraceRecord {
            time_ns: 0,
            pid: 1,
            memcg: 0,
            page: PageRef::File {
                file: 0,
                page: 42_932_745 * 512 / 4096
            },
            op: Op::Write,
            via: Via::Fd,
            req: 1,
        }
    );
    // Last request: ts 5641098458687 us.
    assert_eq!(trace.records.last().unwrap().time_ns, 7_200_089_885_000);

    let reads = trace.records.iter().filter(|r| r.op == Op::Read).count();
    assert_eq!(reads, 485_700);
    assert_eq!(trace.records.len() - reads, 656_169);
    let distinct: HashSet<PageRef> = trace.records.iter().map(|r| r.page).collect();
    assert_eq!(distinct.len(), 269_210);
    assert_eq!(trace.header.files, vec![(0, 8_199_448, None)]);
}

#[test]
fn truncated_sample_is_an_error() {
    let Some(bytes) = sample_bytes() else {
        return;
    };
    assert_eq!(
        read_vscsi(&bytes[..1000]).unwrap_err().to_string(),
        "byte offset 992: truncated record: 8 of 32 bytes"
    );
    let cut = bytes.len() - 1;
    assert_eq!(
        read_vscsi(&bytes[..cut]).unwrap_err().to_string(),
        format!("byte offset {}: truncated record: 31 of 32 bytes", cut - 31)
    );
}
