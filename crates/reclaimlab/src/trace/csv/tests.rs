use super::*;
use crate::access::{PageRef, Via};

const WITH_HEADER: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/trace/requests.csv"
));
const WITHOUT_HEADER: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/trace/requests_noheader.tsv"
));
const BAD_OP: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/trace/bad_op.csv"
));

/// `time,op,offset,size,comment` in seconds, with a header line.
fn header_spec() -> CsvSpec {
    CsvSpec {
        time_col: 1,
        offset_col: 3,
        size_col: 4,
        op_col: Some(2),
        has_header: true,
        delimiter: ',',
        time_unit_ns: 1_000_000_000,
    }
}

/// `time<TAB>offset<TAB>size` in microseconds, no header, no op column.
fn tsv_spec() -> CsvSpec {
    CsvSpec {
        time_col: 1,
        offset_col: 2,
        size_col: 3,
        op_col: None,
        has_header: false,
        delimiter: '\t',
        time_unit_ns: 1000,
    }
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

fn read_str(text: &str, spec: &CsvSpec) -> Result<(TraceHeader, Vec<TraceRecord>), String> {
    read_csv(text.as_bytes(), spec).map_err(|e| e.to_string())
}

#[test]
fn reads_csv_with_header_and_op_column() {
    let (header, records) = read_str(WITH_HEADER, &header_spec()).unwrap();
    assert_eq!(
        summary(&records),
        vec![
            (0, 0, Op::Read),
            (0, 0, Op::Write),
            (0, 1, Op::Write),
            (1_500_000_000, 3, Op::Read),
            (2_750_000_000, 2, Op::Write),
            (2_750_000_000, 3, Op::Write),
            (2_750_000_000, 4, Op::Write),
        ]
    );
    assert!(records
        .iter()
        .all(|r| r.pid == 1 && r.memcg == 0 && r.via == Via::Fd));
    assert_eq!(header.files, vec![(0, 5, None)]);
}

#[test]
fn reads_tsv_without_header_or_final_newline() {
    let (header, records) = read_str(WITHOUT_HEADER, &tsv_spec()).unwrap();
    let mut want = vec![(0, 0, Op::Read)];
    want.extend((256..272).map(|page| (500_000, page, Op::Read)));
    assert_eq!(summary(&records), want);
    assert_eq!(header.files, vec![(0, 272, None)]);
}

#[test]
fn header_line_is_data_without_has_header() {
    let spec = CsvSpec {
        has_header: false,
        ..header_spec()
    };
    assert_eq!(
        read_str(WITH_HEADER, &spec).unwrap_err(),
        "line 1: bad time 'time' (expected a non-negative decimal number)"
    );
}

#[test]
fn bad_op_names_line_and_value() {
    assert_eq!(
        read_str(BAD_OP, &header_spec()).unwrap_err(),
        "line 3: unknown op 'x' (expected r, read, w or write)"
    );
}

#[test]
fn op_values_in_any_case() {
    for (text, op) in [
        ("r", Op::Read),
        ("R", Op::Read),
        ("read", Op::Read),
        ("READ", Op::Read),
        ("w", Op::Write),
        ("W", Op::Write),
        ("write", Op::Write),
        ("Write", Op::Write),
    ] {
        assert_eq!(parse_op(text), Ok(op), "{text}");
    }
    for text in ["", "rw", "reads", "1", "get"] {
        assert!(parse_op(text).is_err(), "{text}");
    }
}

#[test]
fn malformed_lines_name_line_and_problem() {
    let spec = CsvSpec {
        has_header: false,
        ..header_spec()
    };
    let cases = [
        ("1,r,0\n", "line 1: 3 fields, but the size column is 4"),
        (
            "1,r,0,4096\n1,r\n",
            "line 2: 2 fields, but the offset column is 3",
        ),
        (
            "1,r,-5,4096\n",
            "line 1: bad offset '-5' (expected an unsigned integer)",
        ),
        (
            "1,r,0,4k\n",
            "line 1: bad size '4k' (expected an unsigned integer)",
        ),
        (
            "1,r,0,4294967297\n",
            "line 1: size 4294967297 out of range (at most 4294967296)",
        ),
        (
            "1e3,r,0,1\n",
            "line 1: bad time '1e3' (expected a non-negative decimal number)",
        ),
        (
            "-1,r,0,1\n",
            "line 1: bad time '-1' (expected a non-negative decimal number)",
        ),
        (
            ".,r,0,1\n",
            "line 1: bad time '.' (expected a non-negative decimal number)",
        ),
        (
            "18446744074,r,0,1\n",
            "line 1: time '18446744074' overflows u64 nanoseconds",
        ),
        (
            &format!("1,r,{},2\n", u64::MAX),
            &format!(
                "line 1: request at offset {} of 2 bytes runs past 2^64",
                u64::MAX
            ),
        ),
        (
            "1,x,0,1\n",
            "line 1: unknown op 'x' (expected r, read, w or write)",
        ),
    ];
    for (text, want) in cases {
        assert_eq!(read_str(text, &spec).unwrap_err(), want, "input {text:?}");
    }
}

#[test]
fn blank_lines_are_skipped() {
    let spec = CsvSpec::default();
    let (_, records) = read_str("\n1,0,1\n   \n2,4096,1\n\n", &spec).unwrap();
    assert_eq!(
        summary(&records),
        vec![(0, 0, Op::Read), (1_000_000_000, 1, Op::Read)]
    );
}

#[test]
fn invalid_utf8_is_an_error_with_line() {
    let err = read_csv(&b"1,0,1\n2,\xfe,1\n"[..], &CsvSpec::default()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "line 2: not valid UTF-8 (byte 3 of the line)"
    );
}

#[test]
fn times_scale_with_unit_and_fraction() {
    assert_eq!(parse_time_ns("0", 1), Ok(0));
    assert_eq!(parse_time_ns("12", 1000), Ok(12_000));
    assert_eq!(parse_time_ns("1.5", 1_000_000_000), Ok(1_500_000_000));
    assert_eq!(parse_time_ns(".25", 1_000_000_000), Ok(250_000_000));
    assert_eq!(parse_time_ns("2.", 1000), Ok(2000));
    assert_eq!(parse_time_ns("0.0015", 1000), Ok(1)); // 1.5 ns, truncated
    assert_eq!(
        parse_time_ns("1.123456789123456789999", 1_000_000_000),
        Ok(1_123_456_789)
    );
    assert_eq!(parse_time_ns(&u64::MAX.to_string(), 1), Ok(u64::MAX));
    assert!(parse_time_ns("18446744073709551615.5", 2).is_err());
    for bad in ["", "1.2.3", "1,5", " 1", "0x10", "inf"] {
        assert!(parse_time_ns(bad, 1).is_err(), "{bad:?}");
    }
}

#[test]
fn fields_are_trimmed_and_unquoted() {
    assert_eq!(clean_field(" 12 "), "12");
    assert_eq!(clean_field("\"12\""), "12");
    assert_eq!(clean_field(" \"r\" "), "r");
    assert_eq!(clean_field("\"12"), "\"12");
}

// --- the spec ---------------------------------------------------------------------------------

#[test]
fn params_like_libcachesim() {
    let spec = CsvSpec::from_params(
        "time-col=1, op-col=2, obj-id-col=3, obj-size-col=4, delimiter=,, has-header=true",
    )
    .unwrap();
    assert_eq!(spec, header_spec());

    let spec =
        CsvSpec::from_params("TIME_COL=1,obj_id_col=2,size-col=3,delimiter=\\t,time-unit-ns=1000")
            .unwrap();
    assert_eq!(spec, tsv_spec());

    let spec = CsvSpec::from_params("delimiter=;,op-type-col=5,has-header=yes").unwrap();
    assert_eq!(spec.delimiter, ';');
    assert_eq!(spec.op_col, Some(5));
    assert!(spec.has_header);

    let spec = CsvSpec::from_params("delimiter= ,op-col=0").unwrap();
    assert_eq!(spec.delimiter, ' ');
    assert_eq!(spec.op_col, None);

    assert_eq!(CsvSpec::from_params("").unwrap(), CsvSpec::default());
}

#[test]
fn bad_params_are_reported() {
    let cases = [
        (
            "time-col",
            "csv params: expected key=value, found 'time-col'",
        ),
        (
            "time-col=x",
            "csv params: bad time-col 'x' (expected an unsigned integer)",
        ),
        (
            "time-col=0",
            "csv params: time-col must be at least 1 (columns are 1-based)",
        ),
        ("obj-id-is-num=0", "csv params: unknown key 'obj-id-is-num'"),
        (
            "has-header=maybe",
            "csv params: has-header 'maybe' is not true or false",
        ),
        ("delimiter=", "csv params: delimiter needs a value"),
        ("delimiter=\"", "csv params: delimiter '\"' cannot be used"),
        (
            "time-unit-ns=0",
            "csv params: time-unit-ns must be at least 1",
        ),
    ];
    for (params, want) in cases {
        assert_eq!(
            CsvSpec::from_params(params).unwrap_err().to_string(),
            want,
            "{params}"
        );
    }
}

#[test]
fn params_round_trip() {
    for spec in [CsvSpec::default(), header_spec(), tsv_spec()] {
        assert_eq!(CsvSpec::from_params(&spec.to_params()).unwrap(), spec);
    }
}

#[test]
fn reader_checks_the_spec() {
    let spec = CsvSpec {
        size_col: 0,
        ..CsvSpec::default()
    };
    assert_eq!(
        read_str("1,0,1\n", &spec).unwrap_err(),
        "csv params: obj-size-col must be at least 1 (columns are 1-based)"
    );
}
