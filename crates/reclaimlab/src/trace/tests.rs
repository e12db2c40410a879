use super::*;
use crate::access::{Op, Via};
use std::path::PathBuf;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/trace")
        .join(name)
}

/// A file in the temp directory, removed when dropped.
struct TempFile(PathBuf);

impl TempFile {
    fn new(name: &str, bytes: &[u8]) -> Self {
        let path = std::env::temp_dir().join(format!(
            "reclaimlab-trace-test-{}-{name}",
            std::process::id()
        ));
        std::fs::write(&path, bytes).unwrap();
        TempFile(path)
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn file_record(time_ns: u64, file: u32, page: u64) -> TraceRecord {
    TraceRecord {
        time_ns,
        pid: 1,
        memcg: 0,
        page: PageRef::File { file, page },
        op: Op::Read,
        via: Via::Fd,
        req: 1,
    }
}

#[test]
fn format_names_parse() {
    let cases = [
        ("native", TraceFormat::Native),
        ("Native", TraceFormat::Native),
        ("oracleGeneral", TraceFormat::OracleGeneral),
        ("oraclegeneral", TraceFormat::OracleGeneral),
        ("vscsi", TraceFormat::Vscsi),
        ("VSCSI", TraceFormat::Vscsi),
        ("csv", TraceFormat::Csv(CsvSpec::default())),
    ];
    for (name, want) in cases {
        assert_eq!(name.parse::<TraceFormat>().unwrap(), want, "{name}");
    }
    let with_params: TraceFormat = "csv:obj-id-col=3,has-header=true".parse().unwrap();
    let want = CsvSpec {
        offset_col: 3,
        has_header: true,
        ..CsvSpec::default()
    };
    assert_eq!(with_params, TraceFormat::Csv(want));
}

#[test]
fn unknown_format_names_are_errors() {
    for name in ["", "oracle", "native:x", "vscsi2", "csv:bogus=1"] {
        assert!(name.parse::<TraceFormat>().is_err(), "{name}");
    }
    assert_eq!(
        "twr".parse::<TraceFormat>().unwrap_err().to_string(),
        "unknown trace format 'twr' (expected native, oracleGeneral, vscsi, csv or csv:<params>)"
    );
}

#[test]
fn format_display_parses_back() {
    let csv = CsvSpec {
        op_col: Some(4),
        delimiter: '\t',
        ..CsvSpec::default()
    };
    for format in [
        TraceFormat::Native,
        TraceFormat::OracleGeneral,
        TraceFormat::Vscsi,
        TraceFormat::Csv(csv),
    ] {
        assert_eq!(format.to_string().parse::<TraceFormat>().unwrap(), format);
    }
    assert_eq!(TraceFormat::OracleGeneral.to_string(), "oracleGeneral");
}

#[test]
fn completed_header_names_root_and_sizes_every_file() {
    let header = TraceHeader {
        memcgs: vec![(3, "/a".into())],
        files: vec![(5, 100, Some("five".into()))],
        tmpfs: Vec::new(),
    };
    let records = [
        file_record(0, 9, 4),
        file_record(0, 5, 700), // declared: size stays as declared
        file_record(0, 2, 0),
        file_record(0, 9, 1),
    ];
    let done = header.completed(&records);
    assert_eq!(done.memcgs, vec![(0, "/".to_owned()), (3, "/a".to_owned())]);
    assert_eq!(
        done.files,
        vec![(5, 100, Some("five".into())), (2, 1, None), (9, 5, None)]
    );
    // Completing again changes nothing.
    assert_eq!(done.clone().completed(&records), done);
}

#[test]
fn header_lookups() {
    let header = TraceHeader {
        memcgs: vec![(3, "/a".into())],
        files: vec![(5, 100, None)],
        tmpfs: Vec::new(),
    };
    assert_eq!(header.memcg_path(0), Some("/"));
    assert_eq!(header.memcg_path(3), Some("/a"));
    assert_eq!(header.memcg_path(4), None);
    assert_eq!(header.file_size(5), Some(100));
    assert_eq!(header.file_size(6), None);
}

#[test]
fn open_native_fixture_completes_header() {
    let (header, records) = open_trace(fixture("commented.rtrace"), &TraceFormat::Native).unwrap();
    assert_eq!(records.len(), 2);
    assert_eq!(
        header.memcgs,
        vec![(0, "/".to_owned()), (2, "/late".to_owned())]
    );
    assert_eq!(header.files, vec![(4, 2, None)]);
}

#[test]
fn open_csv_fixture() {
    let format: TraceFormat = "csv:time-col=1,op-col=2,obj-id-col=3,obj-size-col=4,has-header=1"
        .parse()
        .unwrap();
    let (header, records) = open_trace(fixture("requests.csv"), &format).unwrap();
    assert_eq!(records.len(), 7);
    assert_eq!(header.memcgs, vec![(0, "/".to_owned())]);
    assert_eq!(header.files, vec![(0, 5, None)]);
}

#[test]
fn open_oracle_general_file() {
    let mut bytes = Vec::new();
    for (time, id, size) in [(10u32, 1u64, 5000u32), (12, 0, 1)] {
        bytes.extend_from_slice(&time.to_le_bytes());
        bytes.extend_from_slice(&id.to_le_bytes());
        bytes.extend_from_slice(&size.to_le_bytes());
        bytes.extend_from_slice(&(-1i64).to_le_bytes());
    }
    let file = TempFile::new("oracle.bin", &bytes);
    let (header, records) = open_trace(&file.0, &TraceFormat::OracleGeneral).unwrap();
    assert_eq!(
        records,
        vec![
            file_record(0, 0, 1 << 20),
            file_record(0, 0, (1 << 20) + 1),
            file_record(2_000_000_000, 0, 0),
        ]
    );
    assert_eq!(header.files, vec![(0, (1 << 20) + 2, None)]);
}

#[test]
fn errors_name_the_file() {
    let format = "csv:op-col=2,obj-id-col=3,obj-size-col=4,has-header=true";
    let err = open_trace(fixture("bad_op.csv"), &format.parse().unwrap()).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{}: line 3: unknown op 'x' (expected r, read, w or write)",
            fixture("bad_op.csv").display()
        )
    );

    let truncated = TempFile::new("truncated.oracle", &[0u8; 30]);
    let err = open_trace(&truncated.0, &TraceFormat::OracleGeneral).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{}: byte offset 24: truncated record: 6 of 24 bytes",
            truncated.0.display()
        )
    );
    assert!(matches!(err, TraceError::InFile { .. }));
}

#[test]
fn missing_file_is_an_open_error() {
    let path = fixture("does-not-exist.rtrace");
    let err = open_trace(&path, &TraceFormat::Native).unwrap_err();
    assert!(matches!(err, TraceError::Open { .. }), "{err:?}");
    let message = err.to_string();
    assert!(
        message.starts_with(&format!("{}: ", path.display())),
        "{message}"
    );
    assert!(!message.contains('\n'));
}

#[test]
fn open_vscsi_sample() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/traces/cloudPhysicsIO.vscsi"
    );
    if !Path::new(path).exists() {
        eprintln!("note: skipping, sample vscsi trace {path} is absent");
        return;
    }
    let (header, records) = open_trace(path, &TraceFormat::Vscsi).unwrap();
    assert_eq!(records.len(), 1_141_869);
    assert_eq!(header.memcgs, vec![(0, "/".to_owned())]);
    assert_eq!(header.files, vec![(0, 8_199_448, None)]);
}

// ---------------------------------------------------------------------------------------------
// Streaming readers.
// ---------------------------------------------------------------------------------------------

/// Every record of a streaming reader.
fn stream_all(path: &Path, format: &TraceFormat) -> Result<Vec<TraceRecord>, TraceError> {
    let mut reader = open_records(path, format)?;
    let mut out = Vec::new();
    while let Some(r) = reader.next_record()? {
        out.push(r);
    }
    Ok(out)
}

/// The whole-file reader's records with the rebasing undone (streams keep raw times).
fn rebased(records: &[TraceRecord]) -> Vec<TraceRecord> {
    let base = records.iter().map(|r| r.time_ns).min().unwrap_or(0);
    records
        .iter()
        .map(|r| TraceRecord {
            time_ns: r.time_ns - base,
            ..*r
        })
        .collect()
}

fn oracle_bytes(records: &[(u32, u64, u32)]) -> Vec<u8> {
    let mut bytes = Vec::new();
    for &(t, id, size) in records {
        bytes.extend_from_slice(&t.to_le_bytes());
        bytes.extend_from_slice(&id.to_le_bytes());
        bytes.extend_from_slice(&size.to_le_bytes());
        bytes.extend_from_slice(&(-1i64).to_le_bytes());
    }
    bytes
}

#[test]
fn streams_yield_the_whole_file_readers_records() {
    let oracle = TempFile::new(
        "stream.oracle",
        &oracle_bytes(&[(7, 3, 9000), (5, 1 << 40, 1), (9, 3, 0)]),
    );
    let vscsi =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces/cloudPhysicsIO.vscsi");
    let mut cases = vec![
        (fixture("small.rtrace"), TraceFormat::Native),
        (
            fixture("requests.csv"),
            "csv:time-col=1,op-col=2,obj-id-col=3,obj-size-col=4,has-header=1"
                .parse()
                .unwrap(),
        ),
        (oracle.0.clone(), TraceFormat::OracleGeneral),
    ];
    if vscsi.exists() {
        cases.push((vscsi, TraceFormat::Vscsi));
    }
    for (path, format) in cases {
        let (_, whole) = read_trace_file(&path, &format).unwrap();
        let streamed = stream_all(&path, &format).unwrap();
        let streamed = if format.rebases_time() {
            rebased(&streamed)
        } else {
            streamed
        };
        assert_eq!(streamed.len(), whole.len(), "{}", path.display());
        assert!(streamed == whole, "{}: records differ", path.display());
    }
}

#[test]
fn compressed_traces_stream_like_plain_ones() {
    use std::io::Write;
    let plain = oracle_bytes(&[(1, 5, 4096), (2, 6, 8192), (3, 5, 1)]);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&plain).unwrap();
    let gz = TempFile::new("stream.oracle.gz", &gz.finish().unwrap());
    let zst = TempFile::new(
        "stream.oracle.zst",
        &zstd::encode_all(&plain[..], 3).unwrap(),
    );
    let plain = TempFile::new("stream.oracle.plain", &plain);
    let want = stream_all(&plain.0, &TraceFormat::OracleGeneral).unwrap();
    assert_eq!(want.len(), 4);
    for f in [&gz, &zst] {
        assert_eq!(stream_all(&f.0, &TraceFormat::OracleGeneral).unwrap(), want);
    }
}

#[test]
fn a_truncated_streamed_record_is_an_error_at_its_offset() {
    let mut bytes = oracle_bytes(&[(1, 5, 4096), (2, 6, 4096)]);
    bytes.extend_from_slice(&[0; 7]);
    let f = TempFile::new("stream.truncated", &bytes);
    let err = stream_all(&f.0, &TraceFormat::OracleGeneral).unwrap_err();
    assert_eq!(
        err.to_string(),
        "byte offset 48: truncated record: 7 of 24 bytes"
    );
}

#[test]
fn a_short_vscsi_stream_cannot_be_detected() {
    let f = TempFile::new("stream.short.vscsi", &[0u8; 40]);
    let err = stream_all(&f.0, &TraceFormat::Vscsi).unwrap_err();
    assert!(err.to_string().contains("too small to detect"), "{err}");
}
