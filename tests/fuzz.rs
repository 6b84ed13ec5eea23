//! Fuzzing on stable Rust with proptest: arbitrary strings and bytes fed to
//! the position and move parsers, and arbitrary damage (truncation, byte
//! flips, edited rows and blocks, edited metadata and class records) done to
//! databases of both layouts, and arbitrary requests (malformed heads,
//! bytes that are not ASCII, wrong lengths, bodies of nonsense) sent to a
//! real server over a loopback socket. The property each time: no panic,
//! and either the right answer or a refusal (for the server: an answer in
//! JSON with a status that says which, and the connection ended in bounded
//! time).
//!
//! Each property runs `BISHOPS_FUZZ_CASES` cases (default: a CI-sized 512 for the parsers, 128 per database layout). The ignored test
//! `fuzz_long` runs 100,000 of each:
//!
//! ```sh
//! cargo test --release --test fuzz -- --ignored
//! ```

#[path = "common/damage.rs"]
mod damage;
#[path = "support/mod.rs"]
mod support;

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use bishops::storage::{self, Database, Layout};
use bishops::{Error, Move, Position, Remoteness, Tablebase, Variant};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};

/// Cases per property: `BISHOPS_FUZZ_CASES`, else `default`.
fn cases(default: u32) -> u32 {
    std::env::var("BISHOPS_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Runs `test` on `cases` values of `strategy`; a failure (or panic) is
/// shrunk and reported with the smallest input found.
fn check<S: Strategy>(cases: u32, strategy: S, test: impl Fn(S::Value) -> Result<(), TestCaseError>)
where
    S::Value: std::fmt::Debug,
{
    let config = Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    };
    if let Err(e) = TestRunner::new(config).run(&strategy, test) {
        panic!("{e}");
    }
}

// ---------------------------------------------------------------------------
// Parsers
// ---------------------------------------------------------------------------

/// Strings that look somewhat like positions and moves, and strings that
/// do not at all.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "[0-9]{1,3}_[0-9]{1,3}_[a-z0-9-]{0,20}_[a-z0-9-]{0,20}",
        "([0-9]{1,2}_){0,5}[a-p]?[0-9]{0,3}(-[a-p][0-9]{1,2}){0,8}",
        "[a-z][0-9]{1,3}-?[a-z][0-9]{1,3}",
        proptest::collection::vec(any::<u8>(), 0..64).prop_map(|b| String::from_utf8_lossy(&b).into_owned()),
    ]
}

/// A refusal is one bounded line.
fn one_bounded_line(message: &str) -> Result<(), TestCaseError> {
    prop_assert!(!message.contains('\n'), "{message}");
    prop_assert!(message.chars().count() < 600, "{} characters", message.chars().count());
    Ok(())
}

fn position_parser(input: String) -> Result<(), TestCaseError> {
    match input.parse::<Position>() {
        Ok(position) => {
            // Printed and read back, it is the same position.
            let again: Position = position.to_string().parse().expect("a printed position parses");
            prop_assert_eq!(&again, &position);
            // Whatever it is, asking which variant it is never panics.
            if let Err(e) = Variant::for_position(&position, None) {
                one_bounded_line(&e.to_string())?;
            }
            if position.attack().is_none() {
                for (mv, after) in position.moves() {
                    prop_assert_eq!(position.try_play(mv).ok(), Some(after));
                }
            }
        }
        Err(e) => one_bounded_line(&e.to_string())?,
    }
    Ok(())
}

fn move_parser(input: String) -> Result<(), TestCaseError> {
    if let Ok(mv) = input.parse::<Move>() {
        prop_assert_eq!(mv.to_string().parse::<Move>().ok(), Some(mv));
        let start: Position = "5_4_a1-a3_e1-e3".parse().unwrap();
        if let Err(e) = start.try_play(mv) {
            one_bounded_line(&e.to_string())?;
        }
    }
    if let Err(e) = Variant::named(&input) {
        one_bounded_line(&e.to_string())?;
    }
    Ok(())
}

#[test]
fn position_strings_never_panic() {
    check(cases(512), text(), position_parser);
}

#[test]
fn move_strings_and_variant_names_never_panic() {
    check(cases(512), text(), move_parser);
}

// ---------------------------------------------------------------------------
// Damaged databases
// ---------------------------------------------------------------------------

/// What is done to a copy of a good database.
#[derive(Clone, Debug)]
enum Damage {
    /// Cut the file to this fraction (in 1/1000) of its length.
    Truncate(u16),
    /// XOR bytes at these fractions (in 1/100000) of the file's length.
    Flip(Vec<(u32, u8)>),
    /// Set the remoteness of the n-th row (rows layout) or a byte of the
    /// n-th block (blocks layout) to this value (NULL when `None`).
    Row(u16, Option<i16>),
    /// Set a meta value, by key number, to this text.
    Meta(u8, String),
    /// Set a column of a class row, by column number, to this text or number.
    Class(u8, String),
    /// Any of the above, with the header checksum rewritten to match, so
    /// that the other checks are tested too.
    Resealed(Box<Damage>),
}

fn damage() -> impl Strategy<Value = Damage> {
    let value = prop_oneof![
        Just(String::new()),
        "-?[0-9]{1,20}",
        "\\[[0-9,]{0,40}\\]",
        any::<String>(),
    ];
    let leaf = prop_oneof![
        (0u16..1000).prop_map(Damage::Truncate),
        proptest::collection::vec((0u32..100_000, 1u8..=255), 1..6).prop_map(Damage::Flip),
        (any::<u16>(), proptest::option::of(-2i16..300)).prop_map(|(n, v)| Damage::Row(n, v)),
        (any::<u8>(), value.clone()).prop_map(|(k, v)| Damage::Meta(k, v)),
        (any::<u8>(), value).prop_map(|(c, v)| Damage::Class(c, v)),
    ];
    prop_oneof![
        3 => leaf.clone(),
        1 => leaf.prop_map(|d| Damage::Resealed(Box::new(d))),
    ]
}

/// Does `damage` to the database at `path`. Edits that SQLite itself
/// refuses (a file already too damaged to edit) are skipped: the file is
/// still checked as it is.
fn apply(path: &Path, damage: &Damage) {
    match damage {
        Damage::Truncate(per_mille) => {
            let len = fs::metadata(path).unwrap().len();
            let file = fs::OpenOptions::new().write(true).open(path).unwrap();
            file.set_len(len * u64::from(*per_mille) / 1000).unwrap();
        }
        Damage::Flip(flips) => {
            let mut bytes = fs::read(path).unwrap();
            let len = bytes.len() as u64;
            for &(at, mask) in flips {
                bytes[(len * u64::from(at) / 100_000) as usize] ^= mask;
            }
            fs::write(path, bytes).unwrap();
        }
        Damage::Row(n, value) => {
            let conn = damage::edit(path);
            let rows: i64 = conn
                .query_row("SELECT count(*) FROM positions", [], |r| r.get(0))
                .unwrap_or(0);
            if rows > 0 {
                // A WITHOUT ROWID table: the row is addressed by its key.
                let _ = conn.execute(
                    "UPDATE positions SET remoteness = ?1 WHERE (class, hash) =
                        (SELECT class, hash FROM positions ORDER BY class, hash LIMIT 1 OFFSET ?2)",
                    rusqlite::params![value, i64::from(*n) % rows],
                );
            } else {
                let blocks: i64 = conn
                    .query_row("SELECT count(*) FROM blocks", [], |r| r.get(0))
                    .unwrap_or(0);
                if blocks > 0 {
                    let key = i64::from(*n) % blocks;
                    let found: Option<(i64, i64, Vec<u8>)> = conn
                        .query_row(
                            "SELECT class, white, data FROM blocks ORDER BY class, white LIMIT 1 OFFSET ?1",
                            [key],
                            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
                        )
                        .ok();
                    if let Some((class, white, mut data)) = found {
                        let at = usize::from(*n) % data.len();
                        data[at] = value.map_or(254, |v| v as u8);
                        let _ = conn.execute(
                            "UPDATE blocks SET data = ?1 WHERE class = ?2 AND white = ?3",
                            rusqlite::params![data, class, white],
                        );
                    }
                } else {
                    // The frames layout: a byte of a frame's compressed cells.
                    let found: Option<(i64, i64, Vec<u8>)> = conn
                        .query_row(
                            "SELECT class, first_white, data FROM frames ORDER BY class, first_white
                             LIMIT 1 OFFSET ?1 % (SELECT count(*) FROM frames)",
                            [i64::from(*n)],
                            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
                        )
                        .ok();
                    if let Some((class, first, mut data)) = found.filter(|f| !f.2.is_empty()) {
                        let at = usize::from(*n) % data.len();
                        data[at] = value.map_or(254, |v| v as u8);
                        let _ = conn.execute(
                            "UPDATE frames SET data = ?1 WHERE class = ?2 AND first_white = ?3",
                            rusqlite::params![data, class, first],
                        );
                    }
                }
            }
        }
        Damage::Meta(key, value) => {
            let conn = damage::edit(path);
            let keys: Vec<String> = conn
                .prepare("SELECT key FROM meta ORDER BY key")
                .and_then(|mut st| st.query_map([], |r| r.get(0))?.collect())
                .unwrap_or_default();
            if !keys.is_empty() {
                let key = &keys[usize::from(*key) % keys.len()];
                let _ = conn.execute("UPDATE meta SET value = ?1 WHERE key = ?2", [value, key]);
            }
        }
        Damage::Class(column, value) => {
            const COLUMNS: [&str; 13] = [
                "squares",
                "white",
                "black",
                "hash_size",
                "start_hash",
                "goal_hash",
                "legal",
                "reachable",
                "max_remoteness",
                "histogram",
                "hardest",
                "mirrored",
                "checksum",
            ];
            let conn = damage::edit(path);
            let name = COLUMNS[usize::from(*column) % COLUMNS.len()];
            let sql = format!("UPDATE classes SET {name} = ?1 WHERE class = (SELECT min(class) FROM classes)");
            let _ = match value.parse::<i64>() {
                Ok(number) => conn.execute(&sql, [number]),
                Err(_) => conn.execute(&sql, [value]),
            };
        }
        Damage::Resealed(inner) => {
            apply(path, inner);
            // A file SQLite cannot read any more cannot be resealed.
            if let Ok(conn) = rusqlite::Connection::open(path) {
                let _ = damage::try_reseal(&conn);
            }
        }
    }
}

/// A good database and what it says, made once per test process.
struct Pristine {
    dir: PathBuf,
    variant: Variant,
    /// (position, remoteness, remoteness after each move) for every probe.
    answers: Vec<(Position, Option<Remoteness>, Vec<Option<Remoteness>>)>,
    metadata: storage::Metadata,
    classes: Vec<storage::ClassRecord>,
}

fn pristine(name: &str, layout: Layout) -> Pristine {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("fuzz-{name}-{layout:?}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    let variant = Variant::named(name).unwrap();
    if layout == Layout::Residues {
        let plan = bishops::solver::Plan::new(&variant, bishops::solver::Method::TwoBit);
        storage::write_two_bit(&dir, &variant, &plan.solve_two_bit(&mut |_| {}).unwrap()).unwrap();
    } else {
        let solution = bishops::solver::solve(&variant, &mut |_| {}).unwrap();
        storage::write_with(&dir, &variant, &solution, layout).unwrap();
    }
    let table = Tablebase::new(&dir)
        .with_quick_solve(0)
        .variant_table(variant.clone())
        .unwrap();
    // The start, the goal and every position on an optimal line between.
    let mut positions = vec![variant.start().clone()];
    positions.extend(table.line(variant.start()).unwrap().positions);
    let answers = positions
        .into_iter()
        .map(|p| {
            let probe = table.probe(&p).unwrap();
            let after = probe.moves.iter().map(|m| m.remoteness).collect();
            (p, probe.remoteness, after)
        })
        .collect();
    let database = Database::open(&dir, &variant).unwrap();
    Pristine {
        metadata: database.metadata().clone(),
        classes: database.classes().to_vec(),
        dir,
        variant,
        answers,
    }
}

fn rows_5x4() -> &'static Pristine {
    static P: OnceLock<Pristine> = OnceLock::new();
    P.get_or_init(|| pristine("5x4", Layout::Rows))
}

fn blocks_full() -> &'static Pristine {
    static P: OnceLock<Pristine> = OnceLock::new();
    P.get_or_init(|| pristine("5x4-full", Layout::Blocks))
}

fn frames_full() -> &'static Pristine {
    static P: OnceLock<Pristine> = OnceLock::new();
    P.get_or_init(|| pristine("5x4-full", Layout::Frames))
}

fn residues_full() -> &'static Pristine {
    static P: OnceLock<Pristine> = OnceLock::new();
    P.get_or_init(|| pristine("5x4-full", Layout::Residues))
}

/// A refusal of a damaged database: an error of the file, never bad input.
fn refusal(e: &Error) -> Result<(), TestCaseError> {
    prop_assert!(
        matches!(e, Error::Corrupt { .. } | Error::Sqlite(..) | Error::Io(..)),
        "not a refusal of the file: {e:?}"
    );
    one_bounded_line(&e.to_string())
}

static CASE: AtomicU64 = AtomicU64::new(0);

/// Damages a copy of `pristine`'s database and asks it everything: each
/// answer must be the right one or a refusal.
fn damaged_database(pristine: &Pristine, damage: Damage) -> Result<(), TestCaseError> {
    let case = CASE.fetch_add(1, Ordering::Relaxed);
    let dir = pristine.dir.with_extension(format!("case-{case}"));
    fs::create_dir_all(&dir).unwrap();
    let name = format!("{}.sqlite", pristine.variant.name());
    fs::copy(pristine.dir.join(&name), dir.join(&name)).unwrap();
    apply(&dir.join(&name), &damage);
    let result = ask_everything(pristine, &dir);
    fs::remove_dir_all(&dir).unwrap();
    result
}

fn ask_everything(pristine: &Pristine, dir: &Path) -> Result<(), TestCaseError> {
    match Database::open(dir, &pristine.variant) {
        Ok(database) => {
            // What the file says of its own making (program version, solve
            // time, date) can only be checked for form: a resealed edit of
            // it may stand. Everything else must be exactly as written.
            let mut metadata = database.metadata().clone();
            metadata.program_version.clone_from(&pristine.metadata.program_version);
            metadata.solve_seconds = pristine.metadata.solve_seconds;
            metadata.created_unix = pristine.metadata.created_unix;
            prop_assert_eq!(&metadata, &pristine.metadata);
            // A class's whole-table checksum is only ever compared with
            // its table, by a full read: an edited one must fail that.
            let mut classes = database.classes().to_vec();
            let edited = classes
                .iter()
                .zip(&pristine.classes)
                .any(|(c, p)| c.checksum != p.checksum);
            for (class, pristine) in classes.iter_mut().zip(&pristine.classes) {
                class.checksum.clone_from(&pristine.checksum);
            }
            prop_assert_eq!(&classes, &pristine.classes);
            match database.verify() {
                Ok(()) => prop_assert!(!edited, "an edited table checksum passed verify"),
                Err(e) => refusal(&e)?,
            }
        }
        Err(e) => refusal(&e)?,
    }
    let tablebase = Tablebase::new(dir).with_quick_solve(0);
    let table = match tablebase.variant_table(pristine.variant.clone()) {
        Ok(table) => table,
        Err(e) => return refusal(&e),
    };
    for (position, remoteness, after) in &pristine.answers {
        match table.probe(position) {
            Ok(probe) => {
                prop_assert_eq!(probe.remoteness, *remoteness, "{}", position);
                let moves: Vec<_> = probe.moves.iter().map(|m| m.remoteness).collect();
                prop_assert_eq!(&moves, after, "{}", position);
            }
            Err(e) => refusal(&e)?,
        }
    }
    match table.line(pristine.variant.start()) {
        Ok(line) => prop_assert_eq!(line.moves.len(), pristine.answers.len() - 1),
        Err(e) => refusal(&e)?,
    }
    // The report commands: never a panic, and an answer only when the
    // database opened (and was then checked above to say what it should).
    for args in [
        &["stats", pristine.variant.name()][..],
        &["variants"],
        &["export", pristine.variant.name()],
    ] {
        let cli = <bishops::cli::Cli as clap::Parser>::try_parse_from(
            ["bishops", "--db", dir.to_str().unwrap()].iter().chain(args),
        )
        .unwrap();
        let mut out = Vec::new();
        if let Err(e) = bishops::cli::run(cli, &mut std::io::empty(), &mut out) {
            refusal(&e)?;
        }
    }
    Ok(())
}

#[test]
fn damaged_rows_databases_answer_right_or_refuse() {
    check(cases(128), damage(), |d| damaged_database(rows_5x4(), d));
}

#[test]
fn damaged_blocks_databases_answer_right_or_refuse() {
    check(cases(128), damage(), |d| damaged_database(blocks_full(), d));
}

#[test]
fn damaged_compressed_databases_answer_right_or_refuse() {
    check(cases(128), damage(), |d| damaged_database(frames_full(), d));
}

#[test]
fn damaged_residues_databases_answer_right_or_refuse() {
    check(cases(128), damage(), |d| damaged_database(residues_full(), d));
}

// ---------------------------------------------------------------------------
// Hostile requests to a real server
// ---------------------------------------------------------------------------

/// One request as bytes on the wire: a method, a target, headers and a
/// body, each sometimes well formed and sometimes not.
fn wire_request() -> impl Strategy<Value = Vec<u8>> {
    let method = prop_oneof![
        Just(b"GET".to_vec()),
        Just(b"POST".to_vec()),
        Just(b"DELETE".to_vec()),
        "[A-Z]{1,8}".prop_map(String::into_bytes),
        proptest::collection::vec(any::<u8>(), 0..6),
    ];
    let target = prop_oneof![
        Just(b"/".to_vec()),
        text().prop_map(|p| format!("/api/query?position={p}").into_bytes()),
        text().prop_map(|p| format!("/api/line?position={p}&variant={p}").into_bytes()),
        text().prop_map(|v| format!("/api/stats/{v}").into_bytes()),
        Just(b"/api/verify".to_vec()),
        Just(b"/api/variants".to_vec()),
        "/[ -~]{0,40}".prop_map(String::into_bytes),
        proptest::collection::vec(any::<u8>(), 0..40),
    ];
    let header = prop_oneof![
        Just(b"Content-Type: application/json".to_vec()),
        Just(b"Transfer-Encoding: chunked".to_vec()),
        "Content-Length: [0-9]{1,14}".prop_map(String::into_bytes),
        "[A-Za-z-]{1,12}: [ -~]{0,30}".prop_map(String::into_bytes),
        proptest::collection::vec(any::<u8>(), 0..30),
    ];
    let body = prop_oneof![
        Just(Vec::new()),
        (text(), proptest::collection::vec(text(), 0..4))
            .prop_map(|(p, m)| serde_json::json!({"position": p, "moves": m}).to_string().into_bytes()),
        text().prop_map(|m| serde_json::json!({"position": "5_4_a1-a3_e1-e3", "moves": m})
            .to_string()
            .into_bytes()),
        proptest::collection::vec(any::<u8>(), 0..200),
    ];
    (
        method,
        target,
        proptest::collection::vec(header, 0..4),
        // Sometimes about as many header lines as hyper parses, or more.
        prop_oneof![3 => Just(0usize), 1 => 95..110usize],
        body,
        any::<bool>(),
    )
        .prop_map(|(method, target, headers, filler, body, length)| {
            // Never CR or LF inside a line: the head always ends, so the
            // server answers it rather than waiting for more.
            let line =
                |bytes: Vec<u8>| -> Vec<u8> { bytes.into_iter().filter(|&b| b != b'\r' && b != b'\n').collect() };
            let mut wire = [
                line(method),
                b" ".to_vec(),
                line(target),
                b" HTTP/1.1\r\nHost: localhost\r\n".to_vec(),
            ]
            .concat();
            for h in headers {
                wire.extend(line(h));
                wire.extend_from_slice(b"\r\n");
            }
            for i in 0..filler {
                wire.extend(format!("X-Filler-{i}: a\r\n").into_bytes());
            }
            if length {
                wire.extend(format!("Content-Length: {}\r\n", body.len()).into_bytes());
            }
            wire.extend_from_slice(b"\r\n");
            wire.extend(body);
            wire
        })
}

/// The server every hostile request goes to, with short clocks.
fn fuzzed_server() -> &'static support::Server {
    static SERVER: OnceLock<support::Server> = OnceLock::new();
    SERVER.get_or_init(|| {
        let options = bishops::server::ServeOptions {
            limits: bishops::server::Limits {
                head_timeout: std::time::Duration::from_secs(1),
                body_timeout: std::time::Duration::from_secs(1),
                idle_timeout: std::time::Duration::from_secs(1),
                ..Default::default()
            },
            ..Default::default()
        };
        // The server lives as long as the process: its directory stays.
        let dir = support::fresh_dir("fuzz-serve");
        let server = support::Server::start_with(&dir, options);
        std::mem::forget(dir);
        server
    })
}

fn hostile_request(wire: Vec<u8>) -> Result<(), TestCaseError> {
    use std::io::{Read, Write};
    let server = fuzzed_server();
    let began = std::time::Instant::now();
    let mut stream = std::net::TcpStream::connect(server.addr).unwrap();
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(20)))
        .unwrap();
    let _ = stream.write_all(&wire);
    // Said all it will say: the server answers, then ends the connection.
    let _ = stream.shutdown(std::net::Shutdown::Write);
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    prop_assert!(
        began.elapsed() < std::time::Duration::from_secs(10),
        "the connection lasted {:?}",
        began.elapsed()
    );
    let text = String::from_utf8_lossy(&raw);
    let Some((head, body)) = text.split_once("\r\n\r\n") else {
        // The server may cut a connection whose request it could not use,
        // but only by answering it first.
        prop_assert!(raw.is_empty(), "a partial reply: {text:?}");
        return Err(TestCaseError::fail(format!(
            "no reply to {:?}",
            String::from_utf8_lossy(&wire)
        )));
    };
    let status: u16 = head.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    prop_assert!(
        [200, 400, 403, 404, 405, 408, 409, 411, 413, 414, 415, 421, 431, 503].contains(&status),
        "status {status} for {:?}: {text}",
        String::from_utf8_lossy(&wire)
    );
    let html = head.to_ascii_lowercase().contains("content-type: text/");
    if !html {
        let json: serde_json::Value =
            serde_json::from_str(body).map_err(|e| TestCaseError::fail(format!("not JSON ({e}): {text}")))?;
        if status != 200 {
            let message = json["error"].as_str().unwrap_or_default();
            one_bounded_line(message)?;
            prop_assert!(!message.is_empty(), "{text}");
        }
    }
    Ok(())
}

#[test]
fn hostile_requests_get_json_answers_and_the_server_holds() {
    check(cases(256), wire_request(), hostile_request);
    let server = fuzzed_server();
    let reply = support::http::get(server.addr, "/api/query?position=5_4_a1-a3_e1-e3");
    assert_eq!(reply.json()["remoteness"], 18);
}

/// The long run: 100,000 cases of every property. Minutes to hours; run it
/// with `cargo test --release --test fuzz -- --ignored`.
#[test]
#[ignore]
fn fuzz_long() {
    let n = cases(100_000);
    check(n, text(), position_parser);
    check(n, text(), move_parser);
    check(n, damage(), |d| damaged_database(rows_5x4(), d));
    check(n, damage(), |d| damaged_database(blocks_full(), d));
    check(n, damage(), |d| damaged_database(frames_full(), d));
    check(n, damage(), |d| damaged_database(residues_full(), d));
    check(n, wire_request(), hostile_request);
}
