use super::*;
use proptest::prelude::*;

const SMALL: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/trace/small.rtrace"
));
const COMMENTED: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/trace/commented.rtrace"
));

fn record(time_ns: u64, pid: u32, memcg: u16, page: PageRef, op: Op, via: Via) -> TraceRecord {
    TraceRecord::new(time_ns, pid, memcg, page, op, via)
}

fn file(file: u32, page: u64) -> PageRef {
    PageRef::File { file, page }
}

fn anon(page: u64) -> PageRef {
    PageRef::Anon { page }
}

/// The header and records of `small.rtrace`.
fn small() -> (TraceHeader, Vec<TraceRecord>) {
    let header = TraceHeader {
        memcgs: vec![
            (0, "/".into()),
            (1, "/workload/db".into()),
            (7, "/batch job".into()),
        ],
        files: vec![
            (7, 256, Some("data.db".into())),
            (9, 4, None),
            (3, 10, Some("name with spaces".into())),
        ],
        tmpfs: Vec::new(),
    };
    let records = vec![
        record(0, 100, 1, file(7, 0), Op::Read, Via::Fd),
        record(1000, 100, 1, anon(12), Op::Write, Via::Mmap),
        record(1000, 101, 7, file(9, 3), Op::Write, Via::Mmap),
        record(
            2500,
            u32::MAX,
            0,
            file(u32::MAX, (1 << 51) - 1),
            Op::Read,
            Via::Fd,
        ),
        record(u64::MAX, 0, 0, anon(0), Op::Read, Via::Mmap),
    ];
    (header, records)
}

fn write_to_string(header: &TraceHeader, records: &[TraceRecord]) -> String {
    String::from_utf8(write_native(Vec::new(), header, records).unwrap()).unwrap()
}

fn read_str(text: &str) -> Result<(TraceHeader, Vec<TraceRecord>), String> {
    read_native(text.as_bytes()).map_err(|e| e.to_string())
}

// --- writing and reading back ---------------------------------------------------------------

#[test]
fn writer_produces_the_documented_text() {
    let (header, records) = small();
    assert_eq!(write_to_string(&header, &records), SMALL);
}

#[test]
fn reader_reads_the_fixture() {
    assert_eq!(read_str(SMALL).unwrap(), small());
}

#[test]
fn round_trip_is_identity() {
    let (header, records) = small();
    let text = write_to_string(&header, &records);
    assert_eq!(read_str(&text).unwrap(), (header, records));
}

#[test]
fn comments_blank_lines_and_late_declarations() {
    let (header, records) = read_str(COMMENTED).unwrap();
    assert_eq!(header.memcgs, vec![(2, "/late".to_owned())]);
    assert_eq!(header.files, vec![(4, 2, None)]);
    assert_eq!(
        records,
        vec![
            record(0, 1, 0, anon(5), Op::Read, Via::Mmap),
            record(10, 1, 2, file(4, 1), Op::Write, Via::Fd),
        ]
    );
}

#[test]
fn crlf_line_endings_are_accepted() {
    let text = SMALL.replace('\n', "\r\n");
    assert_eq!(read_str(&text).unwrap(), small());
}

#[test]
fn writer_without_header_writes_just_the_magic_line() {
    let out = NativeWriter::new(Vec::new()).finish().unwrap();
    assert_eq!(String::from_utf8(out).unwrap(), "# reclaimlab-trace v1\n");
    let r = record(5, 1, 0, file(2, 3), Op::Write, Via::Fd);
    let text = write_to_string(&TraceHeader::default(), &[r]);
    assert_eq!(text, "# reclaimlab-trace v1\n5 1 0 f 2 3 w f\n");
}

// --- the streaming reader ----------------------------------------------------------------------

#[test]
fn streaming_reader_yields_records_and_collects_declarations() {
    let mut reader = NativeReader::new(COMMENTED.as_bytes()).unwrap();
    assert_eq!(reader.line_number(), 1);
    let first = reader.next().unwrap().unwrap();
    assert_eq!(first.page, anon(5));
    assert_eq!(reader.line_number(), 6);
    assert!(reader.header().memcgs.is_empty());
    let second = reader.next().unwrap().unwrap();
    assert_eq!(second.memcg, 2);
    assert_eq!(reader.header().memcgs, vec![(2, "/late".to_owned())]);
    assert!(reader.next().is_none());
    assert_eq!(reader.into_header().files, vec![(4, 2, None)]);
}

#[test]
fn streaming_reader_stops_after_an_error() {
    let text = "# reclaimlab-trace v1\n0 1 0 a 0 1 r m\n0 1 0 q 0 1 r m\n0 1 0 a 0 2 r m\n";
    let mut reader = NativeReader::new(text.as_bytes()).unwrap();
    assert!(reader.next().unwrap().is_ok());
    let err = reader.next().unwrap().unwrap_err();
    assert_eq!(
        err.to_string(),
        "line 3: unknown kind 'q' (expected a or f)"
    );
    assert!(reader.next().is_none());
}

// --- malformed input -------------------------------------------------------------------------

/// Reads `# reclaimlab-trace v1\n` + `body` and returns the error message.
fn error_for(body: &str) -> String {
    let text = format!("{NATIVE_MAGIC}\n{body}");
    read_str(&text).expect_err(body)
}

#[test]
fn first_line_problems() {
    assert_eq!(
        read_str("").unwrap_err(),
        "line 1: empty input (expected '# reclaimlab-trace v1')"
    );
    assert_eq!(
        read_str("0 1 0 f 0 0 r f\n").unwrap_err(),
        "line 1: not a reclaimlab trace: the first line must be '# reclaimlab-trace v1'"
    );
    assert_eq!(
        read_str("# reclaimlab-trace v2\n").unwrap_err(),
        "line 1: unsupported trace version 'v2' (this reader understands v1)"
    );
    assert_eq!(
        read_str("# reclaimlab-trace v1").unwrap_err(),
        "line 1: missing newline at end of file (truncated?)"
    );
}

#[test]
fn record_line_problems() {
    let cases: &[(&str, &str)] = &[
        (
            "0 1 0 f 0 0 r\n",
            "line 2: expected 8 fields (time_ns pid memcg kind object page op via) or 9 (and req), found 7",
        ),
        (
            "0 1 0 f 0 0 r f f\n",
            "line 2: bad request length 'f' (expected an unsigned integer)",
        ),
        (
            "0 1 0 f 0 0 r f 2 2\n",
            "line 2: expected 8 fields (time_ns pid memcg kind object page op via) or 9 (and req), found 10",
        ),
        (
            "0 1 0 f 0 0 r f 0\n",
            "line 2: request length 0 (a read covers 1 or more pages)",
        ),
        (
            "0 1 0 f 0 0 r f 4294967296\n",
            "line 2: request length 4294967296 out of range (at most 4294967295)",
        ),
        (
            "0 1 0 f 0 0 w f 2\n",
            "line 2: request length 2 on a record that is not a read through a file descriptor (only 'f <file> <page> r f' records take one)",
        ),
        (
            "0 1 0 f 0 0 r m 2\n",
            "line 2: request length 2 on a record that is not a read through a file descriptor (only 'f <file> <page> r f' records take one)",
        ),
        (
            "0 1 0 a 0 0 r m 2\n",
            "line 2: request length 2 on a record that is not a read through a file descriptor (only 'f <file> <page> r f' records take one)",
        ),
        (
            "0 1 0 f  0 0 r f\n",
            "line 2: fields must be separated by exactly one space",
        ),
        (
            " 0 1 0 f 0 0 r f\n",
            "line 2: fields must be separated by exactly one space",
        ),
        (
            "0 1 0 f 0 0 r f \n",
            "line 2: fields must be separated by exactly one space",
        ),
        (
            "0\t1 0 f 0 0 r f\n",
            "line 2: expected 8 fields (time_ns pid memcg kind object page op via) or 9 (and req), found 7",
        ),
        (
            "x 1 0 f 0 0 r f\n",
            "line 2: bad time_ns 'x' (expected an unsigned integer)",
        ),
        (
            "-1 1 0 f 0 0 r f\n",
            "line 2: bad time_ns '-1' (expected an unsigned integer)",
        ),
        (
            "+1 1 0 f 0 0 r f\n",
            "line 2: bad time_ns '+1' (expected an unsigned integer)",
        ),
        (
            "18446744073709551616 1 0 f 0 0 r f\n",
            "line 2: time_ns 18446744073709551616 out of range (at most 18446744073709551615)",
        ),
        (
            "0 4294967296 0 f 0 0 r f\n",
            "line 2: pid 4294967296 out of range (at most 4294967295)",
        ),
        (
            "0 1 65536 f 0 0 r f\n",
            "line 2: memcg 65536 out of range (at most 65535)",
        ),
        (
            "0 1 0 F 0 0 r f\n",
            "line 2: unknown kind 'F' (expected a or f)",
        ),
        (
            "0 1 0 f 4294967296 0 r f\n",
            "line 2: object 4294967296 out of range (at most 4294967295)",
        ),
        (
            "0 1 0 f 0 1.5 r f\n",
            "line 2: bad page '1.5' (expected an unsigned integer)",
        ),
        (
            "0 1 0 f 0 0 x f\n",
            "line 2: unknown op 'x' (expected r or w)",
        ),
        (
            "0 1 0 f 0 0 R f\n",
            "line 2: unknown op 'R' (expected r or w)",
        ),
        (
            "0 1 0 f 0 0 r x\n",
            "line 2: unknown via 'x' (expected f or m)",
        ),
        (
            "0 1 0 a 3 0 r m\n",
            "line 2: anon record has object 3 (must be 0)",
        ),
        (
            "0 1 0 a 0 0 r f\n",
            "line 2: anon record has via 'f' (anonymous memory is reached through mmap: use m)",
        ),
        (
            "0 1 3 f 0 0 r f\n",
            "line 2: memcg 3 used but not declared (add '# memcg 3 <path>' before it)",
        ),
        (
            "0 1 2 f 0 0 r f\n# memcg 2 /late\n",
            "line 2: memcg 2 used but not declared (add '# memcg 2 <path>' before it)",
        ),
        (
            "# file 5 3\n0 1 0 f 5 2 r f\n0 1 0 f 5 3 r f\n",
            "line 4: page 3 of file 5 is beyond its declared size of 3 pages",
        ),
        (
            "0 1 0 a 0 1 r m",
            "line 2: missing newline at end of file (truncated?)",
        ),
    ];
    for (body, want) in cases {
        assert_eq!(&error_for(body), want, "input {body:?}");
    }
}

#[test]
fn declaration_problems() {
    let cases: &[(&str, &str)] = &[
        (
            "# memcg\n",
            "line 2: bad memcg declaration (expected '# memcg <index> <path>')",
        ),
        (
            "# memcg 1\n",
            "line 2: bad memcg declaration (expected '# memcg <index> <path>')",
        ),
        (
            "# memcg x /a\n",
            "line 2: bad memcg index 'x' (expected an unsigned integer)",
        ),
        (
            "# memcg 70000 /a\n",
            "line 2: memcg index 70000 out of range (at most 65535)",
        ),
        (
            "# memcg 1 a\n",
            "line 2: memcg path 'a' must start with '/'",
        ),
        ("# memcg 1 \n", "line 2: empty memcg path"),
        (
            "# memcg 0 /a\n",
            "line 2: memcg 0 is the root and must be '/', not '/a'",
        ),
        (
            "# memcg 2 /\n",
            "line 2: memcg 2 cannot be '/' (that is memcg 0)",
        ),
        (
            "# memcg 1 /\n",
            "line 2: memcg 1 cannot be '/' (that is memcg 0)",
        ),
        (
            "# memcg 0 /\n# memcg 1 /\n",
            "line 3: memcg 1 cannot be '/' (that is memcg 0)",
        ),
        (
            "# memcg 2 /a\n# memcg 1 /a\n",
            "line 3: memcg path '/a' already declared as memcg 2",
        ),
        (
            "# memcg 1 /a\n# memcg 1 /b\n",
            "line 3: memcg 1 declared twice (first on line 2)",
        ),
        (
            "# memcg 1 /a\n# memcg 2 /a\n",
            "line 3: memcg path '/a' already declared as memcg 1",
        ),
        (
            "# file 1\n",
            "line 2: bad file declaration (expected '# file <id> <size_pages> [name]')",
        ),
        (
            "# file x 1\n",
            "line 2: bad file id 'x' (expected an unsigned integer)",
        ),
        (
            "# file 1 big\n",
            "line 2: bad file size 'big' (expected an unsigned integer)",
        ),
        (
            "# file 1 2 \n",
            "line 2: empty file name (drop the trailing space)",
        ),
        (
            "# file 1 2 a\n# file 1 3 b\n",
            "line 3: file 1 declared twice (first on line 2)",
        ),
        (
            "0 1 0 f 1 0 r f\n# file 1 3\n",
            "line 3: file 1 declared after its first use on line 2",
        ),
    ];
    for (body, want) in cases {
        assert_eq!(&error_for(body), want, "input {body:?}");
    }
}

#[test]
fn invalid_utf8_is_reported_with_its_line() {
    let mut bytes = format!("{NATIVE_MAGIC}\n# ok\n").into_bytes();
    bytes.extend_from_slice(b"0 1 0 f 0 \xff r f\n");
    let err = read_native(&bytes[..]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "line 3: not valid UTF-8 (byte 11 of the line)"
    );
}

#[test]
fn declarations_look_alikes_are_comments() {
    let body = "#memcg 3 /x\n# memcgs 3 /x\n# filed 1 2\n# files\n";
    let (header, records) = read_str(&format!("{NATIVE_MAGIC}\n{body}")).unwrap();
    assert_eq!(header, TraceHeader::default());
    assert!(records.is_empty());
}

// --- the writer refuses what the reader would reject ----------------------------------------

fn write_error(header: &TraceHeader, records: &[TraceRecord]) -> String {
    write_native(Vec::new(), header, records)
        .unwrap_err()
        .to_string()
}

#[test]
fn writer_rejects_unreadable_records() {
    let h = TraceHeader {
        memcgs: vec![(1, "/a".into())],
        files: vec![(2, 4, None)],
        tmpfs: Vec::new(),
    };
    let cases = [
        (
            record(0, 1, 0, anon(0), Op::Read, Via::Fd),
            "cannot write trace: anon record has via 'f' (anonymous memory is reached through mmap: use m)",
        ),
        (
            record(0, 1, 5, anon(0), Op::Read, Via::Mmap),
            "cannot write trace: memcg 5 used but not declared (add '# memcg 5 <path>' before it)",
        ),
        (
            record(0, 1, 1, file(2, 4), Op::Read, Via::Fd),
            "cannot write trace: page 4 of file 2 is beyond its declared size of 4 pages",
        ),
    ];
    for (r, want) in cases {
        assert_eq!(write_error(&h, &[r]), want);
    }
}

#[test]
fn request_lengths_round_trip_and_are_written_only_when_not_1() {
    let h = TraceHeader {
        memcgs: vec![],
        files: vec![(7, 16, None)],
        tmpfs: Vec::new(),
    };
    let mut records: Vec<TraceRecord> = (0..8)
        .map(|k| {
            let mut r = record(5, 1, 0, file(7, 8 + k), Op::Read, Via::Fd);
            r.req = 8 - k as u32;
            r
        })
        .collect();
    records.push(record(6, 1, 0, file(7, 0), Op::Read, Via::Fd));
    let text = write_to_string(&h, &records);
    assert!(
        text.contains("\n5 1 0 f 7 8 r f 8\n5 1 0 f 7 9 r f 7\n"),
        "{text}"
    );
    assert!(
        text.contains("\n5 1 0 f 7 15 r f\n6 1 0 f 7 0 r f\n"),
        "{text}"
    );
    let (back_h, back) = read_str(&text).expect("reads back");
    assert_eq!(back_h, h);
    assert_eq!(back, records);
    // A request may not run past a declared size.
    assert_eq!(
        error_for("# file 7 16\n0 1 0 f 7 12 r f 5\n"),
        "line 3: a request of 5 pages from page 12 runs past the declared size of file 7"
    );
    assert!(read_str(&format!(
        "{NATIVE_MAGIC}\n# file 7 16\n0 1 0 f 7 12 r f 4\n"
    ))
    .is_ok());
}

#[test]
fn writer_rejects_unreadable_headers() {
    let memcgs = |m: Vec<(u16, &str)>| TraceHeader {
        memcgs: m.into_iter().map(|(i, p)| (i, p.to_owned())).collect(),
        files: vec![],
        tmpfs: Vec::new(),
    };
    let named = |name: &str| TraceHeader {
        memcgs: vec![],
        files: vec![(1, 1, Some(name.to_owned()))],
        tmpfs: Vec::new(),
    };
    let cases = [
        (
            memcgs(vec![(1, "/a"), (1, "/b")]),
            "memcg 1 declared twice (first on line 2)",
        ),
        (
            memcgs(vec![(0, "/root")]),
            "memcg 0 is the root and must be '/', not '/root'",
        ),
        (
            memcgs(vec![(1, "/a\nb")]),
            "memcg path \"/a\\nb\" contains a line break",
        ),
        (
            memcgs(vec![(1, "rel")]),
            "memcg path 'rel' must start with '/'",
        ),
        (named(""), "empty file name"),
        (named("x\r"), "file name \"x\\r\" contains a line break"),
    ];
    for (header, want) in cases {
        assert_eq!(
            write_error(&header, &[]),
            format!("cannot write trace: {want}")
        );
    }
}

#[test]
fn refused_record_writes_nothing() {
    let mut writer = NativeWriter::new(Vec::new());
    writer.write_header(&TraceHeader::default()).unwrap();
    let bad = record(0, 1, 9, anon(0), Op::Read, Via::Mmap);
    assert!(writer.write_record(&bad).is_err());
    let out = writer.finish().unwrap();
    assert_eq!(String::from_utf8(out).unwrap(), "# reclaimlab-trace v1\n");
}

#[test]
fn header_goes_first_and_once() {
    let mut writer = NativeWriter::new(Vec::new());
    writer.write_header(&TraceHeader::default()).unwrap();
    let again = writer.write_header(&TraceHeader::default()).unwrap_err();
    assert_eq!(
        again.to_string(),
        "cannot write trace: the header must be written once, before any record"
    );

    let mut writer = NativeWriter::new(Vec::new());
    let r = record(0, 1, 0, anon(0), Op::Read, Via::Mmap);
    writer.write_record(&r).unwrap();
    assert!(writer.write_header(&TraceHeader::default()).is_err());
}

#[test]
fn push_uint_formats_like_display() {
    for value in [0, 1, 9, 10, 99, 100, 12345, u64::MAX / 7, u64::MAX] {
        let mut buf = Vec::new();
        push_uint(&mut buf, value);
        assert_eq!(String::from_utf8(buf).unwrap(), value.to_string());
    }
}

// --- property: anything the writer accepts reads back identically -----------------------------

fn arb_header() -> impl Strategy<Value = TraceHeader> {
    let memcgs = prop::collection::btree_map(1u16.., "\\PC{0,12}", 0..5);
    let files = prop::collection::btree_map(
        any::<u32>(),
        (1u64..1000, prop::option::of("\\PC{1,12}")),
        0..5,
    );
    (any::<bool>(), memcgs, files).prop_map(|(root, memcgs, files)| {
        let root = root.then(|| (0, "/".to_owned()));
        // The index in the path keeps paths distinct.
        let others = memcgs
            .into_iter()
            .map(|(i, text)| (i, format!("/{i}/{text}")));
        TraceHeader {
            memcgs: root.into_iter().chain(others).collect(),
            files: files
                .into_iter()
                .map(|(id, (size, name))| (id, size, name))
                .collect(),
            tmpfs: Vec::new(),
        }
    })
}

type RawRecord = (u64, u32, usize, bool, (bool, u32), u64, bool, bool);

fn arb_raw_record() -> impl Strategy<Value = RawRecord> {
    (
        any::<u64>(),
        any::<u32>(),
        any::<usize>(),
        any::<bool>(),
        (any::<bool>(), any::<u32>()),
        0..crate::consts::MAX_LFS_PAGES,
        any::<bool>(),
        any::<bool>(),
    )
}

/// Turns random numbers into a record the header allows.
fn fit_record(header: &TraceHeader, raw: RawRecord) -> TraceRecord {
    let (time_ns, pid, memcg_pick, is_anon, (pick_declared, file_id), page, write, mmap) = raw;
    let memcgs: Vec<u16> = std::iter::once(0)
        .chain(header.memcgs.iter().map(|(i, _)| *i))
        .collect();
    let memcg = memcgs[memcg_pick % memcgs.len()];
    let op = if write { Op::Write } else { Op::Read };
    if is_anon {
        return record(time_ns, pid, memcg, anon(page), op, Via::Mmap);
    }
    let id = match header.files.len() {
        n if pick_declared && n > 0 => header.files[file_id as usize % n].0,
        _ => file_id,
    };
    let size = header.file_size(id);
    let page = size.map_or(page, |size| page % size);
    let via = if mmap { Via::Mmap } else { Via::Fd };
    let mut r = record(time_ns, pid, memcg, file(id, page), op, via);
    if op == Op::Read && via == Via::Fd {
        // A request of up to 4 pages that stays within the file.
        let room = size.unwrap_or(crate::consts::MAX_LFS_PAGES) - page;
        r.req = (1 + time_ns % 4).min(room) as u32;
    }
    r
}

fn arb_trace() -> impl Strategy<Value = (TraceHeader, Vec<TraceRecord>)> {
    (arb_header(), prop::collection::vec(arb_raw_record(), 0..60)).prop_map(|(header, raws)| {
        let records = raws
            .into_iter()
            .map(|raw| fit_record(&header, raw))
            .collect();
        (header, records)
    })
}

proptest! {
    #[test]
    fn round_trip_random_traces((header, records) in arb_trace()) {
        let text = write_to_string(&header, &records);
        let (read_header, read_records) = read_native(text.as_bytes()).unwrap();
        prop_assert_eq!(read_header, header);
        prop_assert_eq!(read_records, records);
    }
}

#[test]
fn file_pages_end_at_max_lfs_filesize() {
    let last = "# reclaimlab-trace v1\n0 1 0 f 3 2251799813685247 r f\n";
    assert_eq!(read_str(last).unwrap().1[0].page, file(3, (1 << 51) - 1));
    let beyond = "# reclaimlab-trace v1\n0 1 0 f 3 2251799813685248 r f\n";
    assert_eq!(
        read_str(beyond).unwrap_err(),
        "line 2: page 2251799813685248 of file 3 lies beyond MAX_LFS_FILESIZE (page 2251799813685247)"
    );
    let big = "# reclaimlab-trace v1\n# file 3 2251799813685249\n";
    assert!(read_str(big)
        .unwrap_err()
        .contains("larger than MAX_LFS_FILESIZE"));
    let r = record(0, 1, 0, file(3, 1 << 51), Op::Read, Via::Fd);
    assert!(write_native(Vec::new(), &TraceHeader::default(), &[r]).is_err());
}

// --- tmpfs declarations -----------------------------------------------------------------------

#[test]
fn a_tmpfs_declaration_marks_a_declared_file_and_round_trips() {
    let text = "# reclaimlab-trace v1\n# file 3 8 tree\n# file 4 2\n# tmpfs 3\n0 1 0 f 3 0 w f\n";
    let (header, records) = read_str(text).unwrap();
    assert_eq!(header.tmpfs, vec![3]);
    assert_eq!(write_to_string(&header, &records), text);
}

#[test]
fn a_trace_without_tmpfs_declarations_has_no_tmpfs_file() {
    let (header, _) = read_str(SMALL).unwrap();
    assert!(header.tmpfs.is_empty());
}

#[test]
fn bad_tmpfs_declarations_are_clear_errors() {
    for (text, want) in [
        (
            "# reclaimlab-trace v1\n# tmpfs 3\n# file 3 8\n",
            "no earlier '# file' line declares",
        ),
        (
            "# reclaimlab-trace v1\n# file 3 8\n# tmpfs 3\n# tmpfs 3\n",
            "declared tmpfs twice",
        ),
        (
            "# reclaimlab-trace v1\n# file 3 8\n# tmpfs x\n",
            "bad tmpfs declaration",
        ),
        (
            "# reclaimlab-trace v1\n# file 3 8\n# tmpfs\n",
            "bad tmpfs declaration",
        ),
    ] {
        let err = read_str(text).unwrap_err();
        assert!(err.contains(want), "{text:?}: {err}");
    }
}
