//! Two-bit databases, as residues (`--layout residues`), resolved into
//! frames (what a two-bit solve writes unless told otherwise) and rewritten
//! as frames afterwards (`compact`), against byte
//! databases of the same variant: the same metadata and counts, the same exact remoteness of
//! every stored position (recovered by descent), the same probes, lines and
//! verdicts, the same export, and `check` passing on them. The byte tables
//! are themselves checked against the independent reference solver in
//! `tests/api.rs` and `tests/reference.rs`.

mod common;

use bishops::check::{self, CheckOptions};
use bishops::pipeline::{SolveOptions, SolvePlan};
use bishops::solver::Method;
use bishops::storage::{Database, Layout};
use bishops::tight::TightIndex;
use bishops::{Cell, Position, Table, Tablebase, Variant};
use common::{Scratch, scratch};

/// `name` solved by `method` into a scratch directory of its own, written
/// in `layout` (or the one that suits it).
fn solved_into(name: &str, method: Method, layout: Option<Layout>) -> (Variant, Scratch) {
    let variant = Variant::named(name).unwrap();
    let dir = scratch("twobit-db", &format!("{name}-{}-{layout:?}", method.name()));
    let options = SolveOptions {
        method: Some(method),
        layout,
        ..SolveOptions::default()
    };
    SolvePlan::new(&variant, options)
        .unwrap()
        .run(&dir, &mut |_| {})
        .unwrap_or_else(|e| panic!("{name} by {}: {e}", method.name()));
    (variant, dir)
}

struct Pair {
    variant: Variant,
    bytes: (Database, Table, Scratch),
    two: (Database, Table, Scratch),
    /// The two-bit search's table resolved to exact values as it was
    /// written, in the frames layout.
    resolved: (Database, Table, Scratch),
}

fn pair(name: &str) -> Pair {
    let open = |method, layout| {
        let (variant, dir) = solved_into(name, method, layout);
        let database = Database::open(&dir, &variant).unwrap();
        let table = Tablebase::new(&dir).variant_table(variant.clone()).unwrap();
        (variant, (database, table, dir))
    };
    let (variant, bytes) = open(Method::Tight, None);
    let (_, two) = open(Method::TwoBit, Some(Layout::Residues));
    // Frames are what a two-bit solve writes unless told otherwise.
    let (_, resolved) = open(Method::TwoBit, None);
    Pair {
        variant,
        bytes,
        two,
        resolved,
    }
}

/// Every row of every class, as `export` reads them.
fn rows(database: &Database, classes: usize) -> Vec<Vec<(u64, Cell)>> {
    (0..classes)
        .map(|k| {
            let mut rows = Vec::new();
            database
                .for_each_row(k, |hash, _, cell| {
                    rows.push((hash, cell));
                    Ok(())
                })
                .unwrap();
            rows
        })
        .collect()
}

/// The positions to probe: every legal position of a one-class variant, or
/// `count` drawn from the product of two classes' legal parts.
fn positions(variant: &Variant, count: usize) -> Vec<Position> {
    let specs = variant.classes();
    let indices: Vec<TightIndex> = specs.iter().map(|s| s.tight_index()).collect();
    let board = variant.board();
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move |n: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % n
    };
    let every = indices.len() == 1 && indices[0].len() as usize <= count;
    let total = if every { indices[0].len() as usize } else { count };
    (0..total)
        .map(|i| {
            let parts: Vec<_> = specs
                .iter()
                .zip(&indices)
                .map(|(s, index)| {
                    let rank = if every { i as u64 } else { next(index.len()) };
                    (&s.geometry, index.unrank(rank))
                })
                .collect();
            Position::from_parts(board, &parts)
        })
        .collect()
}

fn same_answers(name: &str, probes: usize) {
    let p = pair(name);
    let (bdb, btable, bdir) = &p.bytes;
    let (tdb, ttable, tdir) = &p.two;
    let (rdb, rtable, rdir) = &p.resolved;
    assert_eq!(tdb.layout(), Layout::Residues, "{name}");
    assert_eq!(rdb.layout(), Layout::Frames, "{name}");
    assert_ne!(bdb.layout(), Layout::Residues, "{name}");

    // The same counts and answers in the metadata and class records.
    let (bm, tm) = (bdb.metadata(), tdb.metadata());
    assert_eq!(
        (
            bm.legal_positions,
            bm.reachable_positions,
            bm.max_remoteness,
            bm.start_remoteness
        ),
        (
            tm.legal_positions,
            tm.reachable_positions,
            tm.max_remoteness,
            tm.start_remoteness
        ),
        "{name}: metadata"
    );
    let stats = |db: &Database| db.classes().iter().map(|c| c.stats.clone()).collect::<Vec<_>>();
    assert_eq!(stats(bdb), stats(tdb), "{name}: class records");
    assert_eq!(stats(bdb), stats(rdb), "{name}: class records, resolved");
    tdb.verify().unwrap_or_else(|e| panic!("{name}: {e}"));
    rdb.verify().unwrap_or_else(|e| panic!("{name}: {e}"));

    // The exact remoteness of every stored position.
    let classes = p.variant.classes().len();
    let exact = rows(bdb, classes);
    assert_eq!(exact, rows(tdb, classes), "{name}: rows");
    assert_eq!(exact, rows(rdb, classes), "{name}: rows, resolved");

    // The residues rewritten as frames (`compact`) are the frames the
    // two-bit solve writes: the same class checksums and rows. Asked again,
    // it leaves the file as it is.
    let cdir = scratch("twobit-db", &format!("{name}-compacted"));
    std::fs::create_dir_all(&cdir).unwrap();
    let file = format!("{name}.sqlite");
    std::fs::copy(tdir.join(&file), cdir.join(&file)).unwrap();
    let done = bishops::pipeline::compact(&cdir, &p.variant).unwrap();
    assert_eq!(
        (done.was, done.bytes.0),
        (Layout::Residues, std::fs::metadata(tdir.join(&file)).unwrap().len())
    );
    let cdb = Database::open(&cdir, &p.variant).unwrap();
    assert_eq!(cdb.layout(), Layout::Frames, "{name}");
    let checksums = |db: &Database| db.classes().iter().map(|c| c.checksum.clone()).collect::<Vec<_>>();
    assert_eq!(checksums(&cdb), checksums(rdb), "{name}: compacted");
    assert_eq!(exact, rows(&cdb, classes), "{name}: rows, compacted");
    drop(cdb);
    let written = std::fs::read(cdir.join(&file)).unwrap();
    let again = bishops::pipeline::compact(&cdir, &p.variant).unwrap();
    assert_eq!((again.was, again.bytes), (Layout::Frames, (done.bytes.1, done.bytes.1)));
    assert_eq!(
        std::fs::read(cdir.join(&file)).unwrap(),
        written,
        "{name}: compacted again"
    );
    std::fs::remove_dir_all(&cdir).unwrap();

    // Probes, lines and verdicts.
    for position in positions(&p.variant, probes) {
        let (b, t) = (btable.probe(&position).unwrap(), ttable.probe(&position).unwrap());
        let b = serde_json::to_value(&b).unwrap();
        assert_eq!(b, serde_json::to_value(&t).unwrap(), "{name} {position}");
        let r = rtable.probe(&position).unwrap();
        assert_eq!(b, serde_json::to_value(&r).unwrap(), "{name} {position}, resolved");
    }
    let start = p.variant.start();
    let (bl, tl) = (btable.line(start).unwrap(), ttable.line(start).unwrap());
    assert_eq!(
        serde_json::to_value(&bl).unwrap(),
        serde_json::to_value(&tl).unwrap(),
        "{name}: line"
    );
    let verdict = ttable.verify(start, &tl.moves).unwrap();
    assert!(verdict.optimal && verdict.reached_goal, "{name}");

    // `check` proves the two-bit table as it proves the byte one.
    for dir in [bdir, tdir, rdir] {
        let report = check::check(dir, &p.variant, CheckOptions::default(), &mut |_, _| {}).unwrap();
        assert!(report.proof, "{name}");
        let sample = CheckOptions {
            sample: Some(200),
            seed: 7,
        };
        check::check(dir, &p.variant, sample, &mut |_, _| {}).unwrap();
    }
}

#[test]
fn two_bit_5x4_answers_as_the_byte_table() {
    same_answers("5x4", 1000);
}

#[test]
fn two_bit_5x4_full_answers_as_the_byte_table() {
    same_answers("5x4-full", 2000);
}

#[test]
fn two_bit_7x6_answers_as_the_byte_table() {
    same_answers("7x6", 30_000);
}

#[test]
fn two_bit_9x6_answers_as_the_byte_table() {
    same_answers("9x6", 3000);
}

/// 9x8: 33 million positions; run with `cargo test --release --test
/// twobit_db -- --ignored`.
#[test]
#[ignore = "release only: solves 9x8 both ways"]
fn two_bit_9x8_answers_as_the_byte_table() {
    same_answers("9x8", 3000);
}

/// A two-bit database with a damaged block is refused, never answered from.
#[test]
fn a_damaged_two_bit_block_is_refused() {
    let (variant, dir) = solved_into("7x6", Method::TwoBit, Some(Layout::Residues));
    let path = dir.join("7x6.sqlite");
    let conn = rusqlite::Connection::open(&path).unwrap();
    // Flip the low bits of the first byte of the goal's block: the checksum
    // no longer holds.
    let goal = variant.class_hashes(&variant.goal())[0];
    let spec = &variant.classes()[0];
    let part = spec.index.unrank(goal);
    let white = bishops::index::colex_rank(part.white);
    let mut data: Vec<u8> = conn
        .query_row("SELECT data FROM blocks WHERE white = ?1", [white as i64], |r| r.get(0))
        .unwrap();
    data[0] ^= 1;
    conn.execute(
        "UPDATE blocks SET data = ?1 WHERE white = ?2",
        rusqlite::params![data, white as i64],
    )
    .unwrap();
    drop(conn);
    let err = Database::open(&dir, &variant).unwrap_err();
    assert!(err.to_string().contains("checksum"), "{err}");
}

/// `--method auto` runs the byte search while it takes at most half the
/// memory it may use, and the two-bit search beyond; a solve that fits
/// neither is refused naming the smaller need.
#[test]
fn auto_picks_two_bits_when_bytes_take_over_half_the_memory() {
    let variant = Variant::named("9x6").unwrap();
    let plan = |max_memory: u64| {
        SolvePlan::new(
            &variant,
            SolveOptions {
                max_memory: Some(max_memory),
                ..SolveOptions::default()
            },
        )
    };
    let roomy = plan(1 << 30).unwrap();
    assert_eq!(roomy.method(), Method::Tight);
    let bytes = roomy.memory_bytes();
    let tight = plan(2 * bytes).unwrap();
    assert_eq!(tight.method(), Method::Tight);
    let two = plan(2 * bytes - 1).unwrap();
    assert_eq!(two.method(), Method::TwoBit);
    assert!(two.memory_bytes() < bytes);
    let err = plan(two.memory_bytes() - 1).unwrap_err().to_string();
    assert!(err.contains("needs about"), "{err}");
}
