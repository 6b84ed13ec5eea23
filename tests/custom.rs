//! Variants of the user's own, read from files: boards with holes and starts
//! other than a full back row. Every one is solved by the crate, by both
//! methods that keep a whole table, and by the independent reference solver
//! of `tests/common/reference.rs` (given the holes as plain squares), and
//! the two must agree on every legal position of every class, and on which
//! positions are legal.

mod common;

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use bishops::solver::{Method, Plan};
use bishops::{Bitboard, Board, Class, Error, Part, Square, Symmetries, Variant, Width};
use common::reference::{Placement, Reference};

/// A scratch directory of this test process, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        static MADE: AtomicUsize = AtomicUsize::new(0);
        let n = MADE.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("bishops-custom-{name}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    /// Writes `text` to the file `name` and returns its path.
    fn file(&self, name: &str, text: &str) -> PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The variant of a file holding `json`.
fn variant(json: &str) -> Variant {
    let scratch = Scratch::new("one");
    Variant::from_file(&scratch.file("v.json", json)).unwrap_or_else(|e| panic!("{json}: {e}"))
}

fn pair(sq: Square) -> (u8, u8) {
    (sq.row(), sq.col())
}

/// Solves `variant` by the crate (the byte table and the two-bit table) and
/// by the reference, and compares every legal position of every class: in
/// 128-bit words when a class has more than 64 squares.
fn agrees_with_reference(variant: &Variant) {
    if variant.is_wide() {
        agrees_in::<u128>(variant);
    } else {
        agrees_in::<u64>(variant);
    }
}

/// [`agrees_with_reference`] in words `W`.
fn agrees_in<W: Width>(variant: &Variant) {
    let name = variant.name();
    let board = variant.board();
    let holes: Vec<(u8, u8)> = board.holes().map(pair).collect();
    let reference = Reference::with_holes(board.rows(), board.cols(), &holes);
    let bytes = Plan::<W>::in_words(variant, Method::Tight).solve(&mut |_| {}).unwrap();
    let two = Plan::<W>::in_words(variant, Method::Tight)
        .solve_two_bit(&mut |_| {})
        .unwrap();
    for (k, spec) in variant.specs::<W>().iter().enumerate() {
        let parity = spec.class.index() as u8;
        let in_class = |squares: &[Square]| -> Vec<(u8, u8)> {
            squares
                .iter()
                .copied()
                .map(pair)
                .filter(|&(r, c)| (r + c) % 2 == parity)
                .collect()
        };
        let start = variant.start();
        let goal = Placement::new(in_class(start.black()), in_class(start.white()));
        let distances = reference.solve(&goal);
        let legal = reference.legal_placements(&reference.class_squares(parity), goal.white.len(), goal.black.len());
        let cells = |squares: &[(u8, u8)]| -> Bitboard<W> {
            squares
                .iter()
                .map(|&(r, c)| spec.geometry.cell(Square::new(r, c)).expect("a square of the class"))
                .collect()
        };
        let mut reachable = 0;
        for placement in &legal {
            let part = Part {
                white: cells(&placement.white),
                black: cells(&placement.black),
            };
            let want = distances.get(placement).copied();
            reachable += u64::from(want.is_some());
            let cell = bytes.cell(k, spec.index.rank(part));
            assert!(cell.is_legal(), "{name} class {k}: {placement:?} is legal");
            assert_eq!(
                cell.remoteness().map(|r| u32::from(r.0)),
                want,
                "{name} class {k}: {placement:?}"
            );
            assert_eq!(
                two.residue(k, part),
                want.map(|d| (d % 3) as u8),
                "{name} class {k}: the two-bit table at {placement:?}"
            );
        }
        let stats = &bytes.classes[k].stats;
        assert_eq!(stats.legal, legal.len() as u64, "{name} class {k}: legal positions");
        assert_eq!(stats.reachable, reachable, "{name} class {k}: reachable positions");
        assert_eq!(two.classes[k].stats, *stats, "{name} class {k}: two-bit stats");
    }
}

#[test]
fn a_hole_in_the_class_of_the_5x4_puzzle() {
    let v = variant(r#"{"name": "5x4-c3", "description": "5x4 less c3", "start": "5_4_a1-a3_e1-e3", "holes": ["c3"]}"#);
    assert_eq!(v.board().to_string(), "5x4 (holes c3)");
    assert_eq!(v.classes()[0].geometry.len(), 9);
    agrees_with_reference(&v);
}

#[test]
fn holes_in_both_classes_of_the_full_5x4_puzzle() {
    let v = variant(
        r#"{"name": "5x4-full-holed", "description": "both classes, a hole in each",
            "start": "5_4_a1-a2-a3-a4_e1-e2-e3-e4", "holes": ["b2", "d2"]}"#,
    );
    assert_eq!(v.classes().len(), 2);
    agrees_with_reference(&v);
}

#[test]
fn a_7x6_with_two_holes() {
    let v = variant(
        r#"{"name": "7x6-holed", "description": "7x6 less d3 and c4",
            "start": "7_6_a1-a3-a5_g1-g3-g5", "holes": ["d3", "c4"]}"#,
    );
    agrees_with_reference(&v);
    // The board the browser test plays on.
    let v = variant(
        r#"{"name": "7x6-d4", "description": "7x6 less d4", "start": "7_6_a1-a3-a5_g1-g3-g5", "holes": ["d4"]}"#,
    );
    agrees_with_reference(&v);
}

#[test]
fn a_centre_hole_keeps_the_symmetries_and_an_off_centre_one_breaks_them() {
    // 7x5 is odd by odd: the standard a2 class has the group of 4, and the
    // board's centre d3 is one of its squares. The group is found from the
    // rules, holes and all: cutting out the centre keeps all of it, a pair
    // of holes that mirror left to right keeps the left-right mirror alone,
    // one hole off the centre line leaves the identity.
    let group = |holes: &str| {
        let v = variant(&format!(
            r#"{{"name": "7x5-a2-holed", "description": "holed", "start": "7_5_a2-a4_g2-g4", "holes": [{holes}]}}"#
        ));
        let spec = &v.classes()[0];
        (Symmetries::of(&spec.geometry, spec.goal).order(), v)
    };
    let (whole, _) = group("");
    let (centred, centred_variant) = group(r#""d3""#);
    let (paired, paired_variant) = group(r#""c2", "c4""#);
    let (off, off_variant) = group(r#""c2""#);
    assert_eq!((whole, centred, paired, off), (4, 4, 2, 1));
    agrees_with_reference(&centred_variant);
    agrees_with_reference(&paired_variant);
    agrees_with_reference(&off_variant);
}

#[test]
fn a_start_that_is_not_a_back_row_on_a_tall_board() {
    // Three bishops a side in the a1 class of a 9x5 board, not on the
    // first and last rows.
    let v = variant(
        r#"{"name": "9x5-middle", "description": "three a side, off the back rows",
            "start": "9_5_b2-b4-c3_g3-h2-h4"}"#,
    );
    assert_eq!(v.goal().to_string(), "9_5_g3-h2-h4_b2-b4-c3");
    agrees_with_reference(&v);
}

#[test]
fn positions_on_holes_and_moves_through_them_are_refused() {
    let v = variant(r#"{"name": "5x4-c3", "description": "5x4 less c3", "start": "5_4_a1-a3_e1-e3", "holes": ["c3"]}"#);
    let on_hole = "5_4_a1-c3_e1-e3".parse().unwrap();
    let err = v.check(&on_hole).unwrap_err();
    assert!(
        err.to_string().contains("c3 is a hole of the 5x4 (holes c3) board"),
        "{err}"
    );
    // b2-d4 crosses c3.
    let position = v.adopt(&"5_4_a1-b2_e1-e3".parse().unwrap()).unwrap();
    let err = position.try_play("b2-d4".parse().unwrap()).unwrap_err();
    assert_eq!(err.to_string(), "the hole at c3 blocks the way from b2 to d4");
    assert!(position.moves().iter().all(|(mv, _)| mv.to_string() != "b2-d4"));
    assert!(position.diagram().contains('#'));
}

#[test]
fn bad_variant_files_get_one_line_naming_the_field() {
    let scratch = Scratch::new("bad");
    let cases = [
        (
            r#"{"name": "x", "description": "d", "start": "5_4_a1-a3_e1-e3", "holes": ["z9"]}"#,
            "`holes`",
        ),
        (
            r#"{"name": "x", "description": "d", "start": "5_4_a1-a3_e1-e3", "holes": ["c3", "c3"]}"#,
            "named twice",
        ),
        (
            r#"{"name": "x", "description": "d", "start": "5_4_a1-a3_e1-e3", "holes": ["a1"]}"#,
            "a1 is a hole",
        ),
        (
            r#"{"name": "x", "description": "d", "start": "5_4_a1-a3_e1"}"#,
            "`start`",
        ),
        (
            r#"{"name": "../x", "description": "d", "start": "5_4_a1-a3_e1-e3"}"#,
            "`name`",
        ),
        (
            r#"{"name": "x", "description": "d", "start": "5_4_a1-a3_e1-e3", "colour": 1}"#,
            "unknown field `colour`",
        ),
        (
            r#"{"name": "x", "start": "5_4_a1-a3_e1-e3"}"#,
            "missing field `description`",
        ),
        (
            r#"{"name": "x", "description": "d", "start": "5_4_a1-c3_e1-e3"}"#,
            "attacks",
        ),
        (r#"[1, 2"#, "expected"),
        // 12 + 12 bishops on the 64 squares of each class of 16x8: about
        // 7 × 10^23 placements a class, 5 × 10^47 together, more than a
        // 128-bit hash numbers.
        (
            r#"{"name": "x", "description": "d", "start":
                "16_8_a1-a2-a3-a4-a5-a6-a7-a8-b1-b2-b3-b4-b5-b6-b7-b8-c1-c2-c3-c4-c5-c6-c7-c8_n1-n2-n3-n4-n5-n6-n7-n8-o1-o2-o3-o4-o5-o6-o7-o8-p1-p2-p3-p4-p5-p6-p7-p8"}"#,
            "more placements than a 128-bit hash numbers",
        ),
    ];
    for (text, want) in cases {
        let err = Variant::from_file(&scratch.file("bad.json", text)).unwrap_err();
        let line = err.to_string();
        assert!(matches!(err, Error::Variant(_)), "{text}: {line}");
        assert!(line.contains(want) && !line.contains('\n'), "{text}: {line}");
        assert!(line.contains("bad.json"), "{text}: {line}");
    }
    let big = "x".repeat(70_000);
    let line = Variant::from_file(&scratch.file("big.json", &big))
        .unwrap_err()
        .to_string();
    assert!(line.contains("over 65536 bytes"), "{line}");
    let missing = Variant::from_file(&scratch.0.join("missing.json"))
        .unwrap_err()
        .to_string();
    assert!(missing.contains("missing.json"), "{missing}");
    let dir = Variant::from_file(&scratch.0).unwrap_err().to_string();
    assert!(dir.contains("a directory"), "{dir}");
}

#[test]
fn a_hole_in_each_class_brings_13x10_within_the_boards_that_are_solved() {
    // 13x10 has 65 squares in each class, one more than a search keeps in a
    // 64-bit word; a hole in each class leaves 64.
    let (a1, a2) = (Square::new(0, 0), Square::new(0, 1));
    let board = Board::holed(13, 10, &[a1, a2]).unwrap();
    assert_eq!(board.class_squares(Class::Even), 64);
    assert_eq!(board.class_squares(Class::Odd), 64);
    let whole = Variant::named("13x10-full").unwrap();
    assert!(whole.is_wide());
    let holed = variant(
        r#"{"name": "13x10-holed", "description": "13x10 less a1 and a2, a bishop a side in each class",
            "start": "13_10_a3-a4_m3-m4", "holes": ["a1", "a2"]}"#,
    );
    assert_eq!(
        holed.classes().iter().map(|c| c.geometry.len()).collect::<Vec<_>>(),
        [64, 64]
    );
    agrees_with_reference(&holed);
}

/// Runs the binary in `dir` with `args`: (exit code, stdout, stderr).
fn bishops(dir: &std::path::Path, args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_bishops"))
        .current_dir(dir)
        .args(args)
        .env_remove("BISHOPS_DB")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn the_command_line_reads_variant_files_and_never_uses_a_table_for_another_file_of_the_name() {
    let scratch = Scratch::new("cli");
    let dir = scratch.0.as_path();
    let file = |holes: &str| {
        scratch.file(
            "mine.json",
            &format!(r#"{{"name": "mine", "description": "5x4 less {holes}", "start": "5_4_a1-a3_e1-e3", "holes": ["{holes}"]}}"#),
        );
    };
    file("c3");
    let library = variant(&std::fs::read_to_string(dir.join("mine.json")).unwrap());
    let solution = Plan::new(&library, Method::Tight).solve(&mut |_| {}).unwrap();
    let start = solution.cell(0, library.class_hashes(library.start())[0]);
    let query_mine = |position: &str| {
        bishops(
            dir,
            &["--variant-file", "mine.json", "query", "--variant", "mine", position],
        )
    };
    let (code, out, err) = query_mine("5_4_a1-b2_e1-e3");
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("variant     mine") && out.contains("c . . # ."), "{out}");
    let shown = |out: &str| {
        out.lines()
            .find_map(|l| l.strip_prefix("remoteness"))
            .map(|r| r.trim().to_owned())
    };
    let (code, out, err) = query_mine("5_4_a1-a3_e1-e3");
    assert_eq!(code, 0, "{err}");
    let want = start.remoteness().map_or("-".to_owned(), |r| r.0.to_string());
    assert_eq!(shown(&out).as_deref(), Some(want.as_str()), "{out}");
    // `play --variant` alone starts from the variant's start, holes drawn.
    let mut play = std::process::Command::new(env!("CARGO_BIN_EXE_bishops"))
        .current_dir(dir)
        .args(["--variant-file", "mine.json", "play", "--variant", "mine"])
        .env_remove("BISHOPS_DB")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    play.stdin.take().unwrap().write_all(b"quit\n").unwrap();
    let played = play.wait_with_output().unwrap();
    let out = String::from_utf8_lossy(&played.stdout);
    assert!(played.status.success(), "{}", String::from_utf8_lossy(&played.stderr));
    assert!(
        out.contains("variant mine, from 5_4_a1-a3_e1-e3") && out.contains("c . . # ."),
        "{out}"
    );
    // The same name, another board: the table on disk is not this variant's.
    file("b2");
    let (code, _, err) = query_mine("5_4_a1-a3_e1-e3");
    assert_ne!(code, 0);
    assert!(
        err.contains("is not of variant mine with start 5_4_a1-a3_e1-e3 on 5x4 (holes b2)"),
        "{err}"
    );
    // A directory of files; the same name twice is refused.
    let (code, out, err) = bishops(dir, &["--variants", ".", "variants"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.lines().any(|l| l.starts_with("mine ")), "{out}");
    let (code, _, err) = bishops(dir, &["--variants", ".", "--variant-file", "mine.json", "variants"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("taken by another variant file") && err.lines().count() == 1,
        "{err}"
    );
    // `bench` solves in fresh processes, which are told of the same files.
    scratch.file(
        "known.json",
        r#"{"name": "7x6-d4", "description": "7x6 less d4", "start": "7_6_a1-a3-a5_g1-g3-g5", "holes": ["d4"],
            "known": {"source": "this program's solve", "legal": [52614], "start_remoteness": 19, "max_remoteness": 20}}"#,
    );
    let (code, out, err) = bishops(dir, &["--variant-file", "known.json", "bench", "7x6-d4"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("7x6-d4"), "{out}");
    // A position on a hole, through the command line.
    let (code, _, err) = query_mine("5_4_a1-b2_e1-e3");
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("b2 is a hole"), "{err}");
}

#[test]
fn two_a_side_in_classes_past_64_squares_are_solved_as_the_reference_solves_them() {
    // The sets, the search and the tables in 128-bit words, every legal
    // position compared: 78 squares a class (13x12: 3,673,670 positions),
    // and 65 (13x10), one past 64, whose safe sets of 63 cells at most are
    // ranked in 64-bit words, with and without the 65th cell among them.
    let boards = [
        r#"{"name": "13x12-two", "description": "two a side on the a1 squares of 13x12",
            "start": "13_12_a1-a3_m1-m3"}"#,
        r#"{"name": "13x10-two", "description": "two a side on the a1 squares of 13x10",
            "start": "13_10_a1-a3_m1-m3"}"#,
    ];
    for json in boards {
        let v = variant(json);
        assert!(v.is_wide(), "{}", v.name());
        agrees_with_reference(&v);
    }
}

#[test]
fn boards_that_fit_64_bits_are_solved_alike_in_128_bit_words() {
    // The wide code on boards the narrow code also solves: the same tables,
    // position by position, as the reference's, holes included.
    for v in [Variant::named("7x6").unwrap(), Variant::named("5x4-full").unwrap()] {
        agrees_in::<u128>(&v.widened());
    }
    agrees_in::<u128>(
        &variant(
            r#"{"name": "7x6-holed", "description": "7x6 less d3 and c4",
                "start": "7_6_a1-a3-a5_g1-g3-g5", "holes": ["d3", "c4"]}"#,
        )
        .widened(),
    );
}

#[test]
fn wide_boards_with_holes_and_other_starts_are_solved_as_the_reference_solves_them() {
    // 17x8 has 68 squares a class, 9x16 has 72.
    let boards = [
        r#"{"name": "17x8-holed", "description": "17x8 less d4 and e5, a bishop a side in each class, off the back rows",
            "start": "17_8_b2-c2_p3-p4", "holes": ["d4", "e5"]}"#,
        r#"{"name": "9x16-odd", "description": "a wide board on its side: 72 squares a class, a bishop a side",
            "start": "9_16_a2_i4"}"#,
    ];
    for json in boards {
        let v = variant(json);
        assert!(v.is_wide(), "{}", v.name());
        agrees_with_reference(&v);
    }
}

#[test]
fn classes_past_64_squares_are_counted_as_the_reference_counts_them() {
    // The tight index's count in 128-bit words against the reference's
    // enumeration of legal placements, on classes of 68 and 78 squares.
    for (rows, cols, class, white, black) in [
        (17, 8, Class::Even, 2, 1),
        (13, 12, Class::Odd, 1, 2),
        (17, 8, Class::Odd, 2, 2),
    ] {
        let board = Board::new(rows, cols).unwrap();
        let geo: bishops::Geometry<u128> = bishops::Geometry::in_words(board, class);
        assert!(geo.len() > 64);
        let reference = Reference::new(rows as u8, cols as u8);
        let placements = reference.legal_placements(&reference.class_squares(class.index() as u8), white, black);
        let (_, legal) = bishops::tight::legal_count(&geo, white as u32, black as u32);
        assert_eq!(
            legal,
            placements.len() as u64,
            "{rows}x{cols} class {class:?}, {white} + {black}"
        );
    }
}

#[test]
fn damaged_variant_files_are_refused_or_read_never_a_panic() {
    // A valid file with bytes changed, cut or repeated at random: every
    // one is read or refused with one line, and a variant read is sound.
    let scratch = Scratch::new("fuzz");
    let valid = br#"{"name": "7x6-holed", "description": "7x6 less d3 and c4", "start": "7_6_a1-a3-a5_g1-g3-g5", "holes": ["d3", "c4"]}"#;
    let alphabet = b"0123456789_-x,:[]{}\" abcdefghz";
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let (mut read, mut refused) = (0, 0);
    for _ in 0..3000 {
        let mut text = valid.to_vec();
        for _ in 0..1 + next() % 4 {
            let at = (next() % text.len() as u64) as usize;
            match next() % 3 {
                0 => text[at] = alphabet[(next() % alphabet.len() as u64) as usize],
                1 => {
                    text.remove(at);
                }
                _ => text.insert(at, alphabet[(next() % alphabet.len() as u64) as usize]),
            }
        }
        let path = scratch.0.join("v.json");
        std::fs::write(&path, &text).unwrap();
        match Variant::from_file(&path) {
            Ok(v) => {
                read += 1;
                assert!(v.start().attack().is_none() && v.goal().attack().is_none());
                assert!(v.classes().iter().all(|c| c.counts().0 == c.counts().1));
            }
            Err(e) => {
                refused += 1;
                assert!(!e.to_string().contains('\n'), "{e}");
            }
        }
    }
    assert!(read > 0 && refused > 0, "{read} read, {refused} refused");
}

/// 7 + 7 bishops on the 105 squares of the a1 class of 15x14.
const PAST_64_BITS: &str = r#"{"name": "big15", "description": "15x14, the a1 class: 7 + 7 bishops", "start": "15_14_a1-a3-a5-a7-a9-a11-a13_o1-o3-o5-o7-o9-o11-o13"}"#;

#[test]
fn a_class_past_64_bits_is_named_by_its_128_bit_hash() {
    let v = variant(PAST_64_BITS);
    // R(105, 7, 7) = C(105, 7) · C(98, 7), worked out apart.
    assert_eq!(v.hash_sizes(), [314_881_255_304_318_102_400]);
    // The start's white bishops are the class's first 7 cells (rank 0)
    // and its black ones the last 7 of the 98 beside them: C(98, 7) − 1.
    assert_eq!(v.hash(v.start()), 13_834_413_151);
    // The goal's white bishops are the last 7 of all 105 cells and its
    // black ones the first: (C(105, 7) − 1) · C(98, 7).
    assert_eq!(v.hash(&v.goal()), 314_881_255_290_483_689_248);
    assert_eq!(v.position_of_hash(v.hash(&v.goal())), Some(v.goal()));
    assert_eq!(v.position_of_hash(314_881_255_304_318_102_400), None);
    let mut state = 15u64;
    for _ in 0..2_000 {
        let hash = (u128::from(bishops::index::splitmix(&mut state)) << 64) % 314_881_255_304_318_102_400;
        let position = v.position_of_hash(hash).unwrap();
        assert_eq!(v.hash(&position), hash);
        assert_eq!(v.class_hashes128(&position), [hash]);
    }
    let refusal = v.tables_fit().unwrap_err().to_string();
    assert!(
        refusal.contains("R(105, 7, 7) = 314881255304318102400") && refusal.contains("63 bits"),
        "{refusal}"
    );
    // Both classes of 15x14 together are past 128 bits: refused whole.
    let scratch = Scratch::new("past128");
    let full = r#"{"name": "big15f", "description": "15x14", "start": "15_14_a1-a2-a3-a4-a5-a6-a7-a8-a9-a10-a11-a12-a13-a14_o1-o2-o3-o4-o5-o6-o7-o8-o9-o10-o11-o12-o13-o14"}"#;
    let error = Variant::from_file(&scratch.file("f.json", full))
        .unwrap_err()
        .to_string();
    assert!(error.contains("128-bit hash"), "{error}");
}

#[test]
fn every_command_refuses_a_table_for_a_class_past_64_bits_in_one_line() {
    let scratch = Scratch::new("past64");
    let dir = scratch.0.as_path();
    scratch.file("big.json", PAST_64_BITS);
    let start = "15_14_a1-a3-a5-a7-a9-a11-a13_o1-o3-o5-o7-o9-o11-o13";
    let (code, out, err) = bishops(dir, &["--variant-file", "big.json", "variants", "--json"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("\"hash_size\": 314881255304318102400"), "{out}");
    let (code, out, err) = bishops(dir, &["--variant-file", "big.json", "variants"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.lines()
            .any(|l| l.starts_with("big15") && l.contains(" 314881255304318102400 ")),
        "{out}"
    );
    for args in [
        &["solve", "big15"][..],
        &["query", start],
        &["query", start, "--json"],
        &["line", start],
        &["stats", "big15"],
        &["export", "big15"],
        &["check", "big15"],
        &["compact", "big15"],
    ] {
        let mut all = vec!["--variant-file", "big.json"];
        all.extend_from_slice(args);
        let (code, _, err) = bishops(dir, &all);
        assert_eq!(code, 1, "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains("63 bits") && !err.contains("panicked"), "{args:?}: {err}");
    }
    // Nothing was written: no database, no checkpoint, no temporary file.
    let db = dir.join("db");
    assert!(!db.exists() || std::fs::read_dir(&db).unwrap().next().is_none());
}
