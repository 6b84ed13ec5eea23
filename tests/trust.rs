//! Trust boundaries, end to end through the binary: what a careful attacker
//! edits in a checkpoint or a database never makes `bishops` write or show
//! a wrong answer. Checksums find damage; a forger recomputes them, and
//! then the rules catch what is written or shown.

mod common;
#[path = "common/damage.rs"]
mod damage;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// `bishops --db DIR ARGS` with the environment variables `env`.
fn run(dir: &Path, env: &[(&str, &str)], args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bishops"))
        .env_remove("BISHOPS_CHECKPOINT_SECONDS")
        .env_remove("BISHOPS_STOP_AFTER_LAYER")
        .env_remove("BISHOPS_DB")
        .env_remove("BISHOPS_THREADS")
        .arg("--db")
        .arg(dir)
        .args(args)
        .envs(env.iter().copied())
        .output()
        .unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A scratch database directory of this test process, made.
fn fresh(name: &str) -> common::Scratch {
    let dir = common::scratch("bishops-trust", name);
    fs::create_dir_all(&dir).unwrap();
    dir
}

/// The start's remoteness as `query --json` gives it, which must succeed.
fn start_remoteness(dir: &Path, position: &str) -> serde_json::Value {
    let output = common::succeeded(run(dir, &[], &["query", position, "--json"]), "query");
    serde_json::from_slice::<serde_json::Value>(&output.stdout).unwrap()["remoteness"].clone()
}

/// Stops a solve of `variant` by `method` after `layer`, with a checkpoint
/// after every layer, and returns the checkpoint of class a1.
fn stopped(dir: &Path, variant: &str, method: &str, layer: &str) -> PathBuf {
    let output = run(
        dir,
        &[("BISHOPS_CHECKPOINT_SECONDS", "0"), ("BISHOPS_STOP_AFTER_LAYER", layer)],
        &["solve", variant, "--method", method],
    );
    assert!(stderr(&output).contains("stopped after layer"), "{}", stderr(&output));
    let file = dir.join(format!(".{variant}.a1.checkpoint"));
    assert!(file.is_file(), "{}", file.display());
    file
}

/// Replaces `from` by `to` in the header line of the checkpoint `file`.
fn edit_header(file: &Path, from: &str, to: &str) -> Vec<u8> {
    let mut bytes = fs::read(file).unwrap();
    let magic = b"bishops checkpoint\n".len();
    let end = magic + bytes[magic..].iter().position(|&b| b == b'\n').unwrap();
    let header = std::str::from_utf8(&bytes[magic..end]).unwrap();
    assert!(header.contains(from), "{header}");
    let edited = header.replacen(from, to, 1);
    assert_eq!(edited.len(), header.len(), "an edit in place");
    bytes.splice(magic..end, edited.into_bytes());
    bytes
}

/// A checkpoint whose header says the search was over when it was not: as
/// damage (its seal no longer holds) it is ignored and the search starts
/// over; as forgery (sealed again) the solve's check of its own table
/// refuses to write it, and the next solve starts over and is right.
#[test]
fn a_checkpoint_that_says_done_too_early_never_becomes_a_database() {
    for method in ["tight", "two-bit"] {
        let dir = fresh(&format!("done-{method}"));
        let file = stopped(&dir, "9x6-a1", method, "10");
        let forged = edit_header(&file, "\"done\":false", "\"done\":true ");

        // Damage: the header's seal fails.
        fs::write(&file, &forged).unwrap();
        let output = run(&dir, &[], &["solve", "9x6-a1", "--method", method]);
        assert!(output.status.success(), "{method}: {}", stderr(&output));
        assert!(
            stderr(&output).contains("fails its header checksum") && stderr(&output).contains("ignoring it"),
            "{method}: {}",
            stderr(&output)
        );
        assert_eq!(start_remoteness(&dir, "9_6_a1-a3-a5_i1-i3-i5"), 14, "{method}");

        // Forgery: sealed again, so only the rules stand in the way.
        fs::remove_file(dir.join("9x6-a1.sqlite")).unwrap();
        let file = stopped(&dir, "9x6-a1", method, "10");
        let mut forged = edit_header(&file, "\"done\":false", "\"done\":true ");
        bishops::checkpoint::reseal(&mut forged);
        fs::write(&file, &forged).unwrap();
        let output = run(&dir, &[], &["solve", "9x6-a1", "--method", method]);
        assert_eq!(output.status.code(), Some(1), "{method}: {}", stderr(&output));
        let msg = stderr(&output);
        assert!(msg.contains("resuming 9x6-a1 class a1"), "{method}: {msg}");
        // The byte table is caught by the check of the written file; the
        // two-bit table already as its residues are resolved into frames,
        // where a position has no neighbour one closer.
        let caught = match method {
            "tight" => msg.contains("breaks the rules at") && msg.contains("unreachable"),
            _ => msg.contains("cannot be resolved to exact values") && msg.contains("no neighbour at"),
        };
        assert!(caught && msg.contains("nothing written"), "{method}: {msg}");
        assert!(!dir.join("9x6-a1.sqlite").exists(), "{method}: no database");
        assert!(!file.exists(), "{method}: the forged checkpoint is spent");
        let output = run(&dir, &[], &["solve", "9x6-a1", "--method", method]);
        assert!(output.status.success(), "{method}: {}", stderr(&output));
        assert_eq!(start_remoteness(&dir, "9_6_a1-a3-a5_i1-i3-i5"), 14, "{method}");
        fs::remove_dir_all(&dir).unwrap();
    }
}

/// A checkpoint of an older format is refused with one line, and the
/// search starts over.
#[test]
fn a_checkpoint_of_an_older_format_starts_the_search_over() {
    let dir = fresh("old-format");
    let file = stopped(&dir, "7x6", "tight", "6");
    let old = edit_header(&file, "\"format\":5", "\"format\":1");
    fs::write(&file, old).unwrap();
    let output = run(&dir, &[], &["solve", "7x6"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("is of format 1, not 5: an older bishops wrote it"),
        "{}",
        stderr(&output)
    );
    assert!(!stderr(&output).contains("resuming"), "{}", stderr(&output));
    // One from a newer bishops says so.
    fs::remove_dir_all(&dir).unwrap();
    let file = stopped(&dir, "7x6", "tight", "6");
    let newer = edit_header(&file, "\"format\":5", "\"format\":6");
    fs::write(&file, newer).unwrap();
    let output = run(&dir, &[], &["solve", "7x6"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("is of format 6, not 5: a newer bishops wrote it"),
        "{}",
        stderr(&output)
    );
    fs::remove_dir_all(&dir).unwrap();
}

/// Where the class-0 part of `position` of `variant` is stored: its white
/// set's rank (the block) and its place among the block's legal black sets.
fn stored_at(variant: &bishops::Variant, position: &bishops::Position) -> (u64, u64) {
    let spec = &variant.classes()[0];
    let part = position.part(&spec.geometry);
    let safe = bishops::rules::safe_cells(&spec.geometry, part.white);
    (
        bishops::index::colex_rank(part.white),
        bishops::index::rank_within(part.black, safe),
    )
}

/// Rewrites the block `white` of class 0 in the database `file` with
/// `edit`, and its block checksum as docs/database.md defines it: what a
/// forger does, which no checksum of the block can catch.
fn forge_block(file: &Path, white: u64, edit: impl FnOnce(&mut Vec<u8>)) {
    let conn = damage::edit(file);
    let mut data: Vec<u8> = conn
        .query_row(
            "SELECT data FROM blocks WHERE class = 0 AND white = ?1",
            [white as i64],
            |r| r.get(0),
        )
        .unwrap();
    edit(&mut data);
    let sum = block_sum(white, data.iter().copied());
    let changed = conn
        .execute(
            "UPDATE blocks SET data = ?1, checksum = ?2 WHERE class = 0 AND white = ?3",
            rusqlite::params![data, sum, white as i64],
        )
        .unwrap();
    assert_eq!(changed, 1);
}

/// 9x6-a1 solved by two bits into `dir`, written as residues.
fn solve_as_residues(dir: &Path) {
    common::succeeded(
        run(
            dir,
            &[],
            &["solve", "9x6-a1", "--method", "two-bit", "--layout", "residues"],
        ),
        "solve",
    );
}

/// Rewrites the residue of the `at`-th position of block `white` (class
/// a1 of 9x6-a1 in `dir`, remoteness `truth`) to that of `truth + 2`, and
/// the block's checksum with it.
fn forge_residue(dir: &Path, white: u64, at: u64, truth: u16) {
    forge_block(&dir.join("9x6-a1.sqlite"), white, |data| {
        let (byte, shift) = ((at / 4) as usize, 2 * (at % 4));
        assert_eq!(u16::from(data[byte] >> shift & 3), truth % 3);
        let forged = ((truth + 2) % 3) as u8;
        data[byte] = data[byte] & !(3 << shift) | forged << shift;
    });
}

/// [`all_refuse`] of `position`, naming a forged value `shown` that has a
/// neighbour closer than it allows; then the scratch `dir` is removed.
fn refused_as_too_far(dir: &Path, position: &str, shown: impl std::fmt::Display) {
    let msg = all_refuse(dir, position);
    assert!(
        msg.contains(&format!("which has remoteness {shown} but a neighbour has")),
        "{msg}"
    );
    fs::remove_dir_all(dir).unwrap();
}

/// The block checksum of `cells` at white set `white` of class 0, as
/// docs/database.md defines it (for a frame, `white` is its first).
fn block_sum(white: u64, cells: impl IntoIterator<Item = u8>) -> i64 {
    let bytes = [0u8].into_iter().chain(white.to_le_bytes()).chain(cells);
    damage::checksum(bytes).signed()
}

/// `query`, `line` and `verify` of `position` refuse with the damaged-
/// database line that names `check`, and so does the library's probe;
/// returns the query's message.
fn all_refuse(dir: &Path, position: &str) -> String {
    let mut said = String::new();
    for args in [
        vec!["query", position],
        vec!["line", position],
        vec!["verify", position, ""],
    ] {
        let output = run(dir, &[], &args);
        let msg = stderr(&output);
        assert_eq!(output.status.code(), Some(1), "{args:?}: {msg}");
        assert!(output.stdout.is_empty(), "{args:?}: nothing shown");
        assert!(
            msg.contains("breaks the rules at") && msg.contains("bishops check 9x6-a1") && msg.lines().count() == 1,
            "{args:?}: {msg}"
        );
        if said.is_empty() {
            said = msg;
        }
    }
    let position: bishops::Position = position.parse().unwrap();
    let table = bishops::Tablebase::new(dir).table(&position, None).unwrap();
    let e = table.probe(&position).unwrap_err();
    assert!(matches!(e, bishops::Error::Corrupt { .. }), "{e}");
    said
}

/// A position of 9x6-a1 along the optimal line from the start with at
/// least two moves one closer, and one of those moves: forging that one
/// leaves the position's own value standing.
fn two_ways_closer(dir: &Path) -> (bishops::Position, bishops::MoveValue) {
    let start: bishops::Position = "9_6_a1-a3-a5_i1-i3-i5".parse().unwrap();
    let table = bishops::Tablebase::new(dir).table(&start, None).unwrap();
    let mut here = start;
    loop {
        let probe = table.probe(&here).unwrap();
        let r = probe.remoteness.unwrap().0;
        let closer: Vec<_> = probe
            .moves
            .iter()
            .filter(|m| m.remoteness.map(|x| x.0) == Some(r - 1))
            .collect();
        if r >= 3 && closer.len() >= 2 {
            return (here, closer[0].clone());
        }
        here = probe.best_move().unwrap().position.clone();
    }
}

/// A move's value forged in a byte block, its block checksum recomputed:
/// the position still looks right, but the move's value breaks the rules
/// around it, and nothing shows it.
#[test]
fn a_forged_move_value_in_a_byte_block_is_refused() {
    let dir = fresh("forged-bytes");
    common::succeeded(run(&dir, &[], &["solve", "9x6-a1", "--layout", "blocks"]), "solve");
    let (position, forged) = two_ways_closer(&dir);
    let variant = bishops::Variant::named("9x6-a1").unwrap();
    let (white, at) = stored_at(&variant, &forged.position);
    let truth = forged.remoteness.unwrap().0 as u8;
    forge_block(&dir.join("9x6-a1.sqlite"), white, |data| {
        assert_eq!(data[at as usize], truth);
        data[at as usize] = truth + 2;
    });
    refused_as_too_far(&dir, &position.to_string(), truth + 2);
}

/// A position's own residue forged in a two-bit block, its block checksum
/// recomputed: its descent then says 2 more than the truth, and a neighbour
/// is closer than that allows.
#[test]
fn a_forged_residue_in_a_two_bit_block_is_refused() {
    let dir = fresh("forged-residues");
    solve_as_residues(&dir);
    // A move's position: not the start, whose value the metadata repeats.
    let position = two_ways_closer(&dir).1.position;
    let variant = bishops::Variant::named("9x6-a1").unwrap();
    let (white, at) = stored_at(&variant, &position);
    let truth = bishops::Tablebase::new(&dir)
        .table(&position, None)
        .unwrap()
        .remoteness(&position)
        .unwrap()
        .unwrap()
        .0;
    forge_residue(&dir, white, at, truth);
    all_refuse(&dir, &position.to_string());
    // Nor are the forged residues rewritten as frames: reading them whole
    // finds the class checksum broken, and the file is left as it was,
    // with nothing beside it.
    let file = dir.join("9x6-a1.sqlite");
    let forged = fs::read(&file).unwrap();
    let output = run(&dir, &[], &["compact", "9x6-a1"]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let message = stderr(&output);
    assert!(
        message.contains("fails its checksum for class a1; it is not trusted"),
        "{message}"
    );
    assert_eq!(fs::read(&file).unwrap(), forged);
    let mut files: Vec<_> = (fs::read_dir(&dir).unwrap())
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    files.sort();
    assert_eq!(files, ["9x6-a1.sqlite"]);
    fs::remove_dir_all(&dir).unwrap();
}

/// A move's value forged in the rows layout, its white set's row checksum
/// recomputed: the move's value breaks the rules around it, and nothing
/// shows it.
#[test]
fn a_forged_move_value_in_a_row_is_refused() {
    let dir = fresh("forged-rows");
    common::succeeded(run(&dir, &[], &["solve", "9x6-a1", "--layout", "rows"]), "solve");
    let (position, forged) = two_ways_closer(&dir);
    let variant = bishops::Variant::named("9x6-a1").unwrap();
    let (white, _) = stored_at(&variant, &forged.position);
    let hash = variant.class_hashes(&forged.position)[0];
    let truth = forged.remoteness.unwrap().0 as i64;
    let conn = damage::edit(&dir.join("9x6-a1.sqlite"));
    let changed = conn
        .execute(
            "UPDATE positions SET remoteness = ?1 WHERE class = 0 AND hash = ?2 AND remoteness = ?3",
            rusqlite::params![truth + 2, hash as i64, truth],
        )
        .unwrap();
    assert_eq!(changed, 1);
    // The white set's rows are the hashes of its block, in order.
    let spec = &variant.classes()[0];
    let per_white = spec.index.len() / bishops::index::binomial(spec.geometry.len() as u32, 3);
    let low = white * per_white;
    let cells: Vec<u8> = conn
        .prepare("SELECT remoteness FROM positions WHERE class = 0 AND hash >= ?1 AND hash < ?2 ORDER BY hash")
        .unwrap()
        .query_map([low as i64, (low + per_white) as i64], |r| r.get::<_, Option<i64>>(0))
        .unwrap()
        .map(|r| r.unwrap().map_or(254, |v| v as u8))
        .collect();
    let sum = block_sum(white, cells);
    let changed = conn
        .execute(
            "UPDATE row_checksums SET checksum = ?1 WHERE class = 0 AND white = ?2",
            rusqlite::params![sum, white as i64],
        )
        .unwrap();
    assert_eq!(changed, 1);
    drop(conn);
    refused_as_too_far(&dir, &position.to_string(), truth + 2);
}

/// A move's value forged in a frame (the frames layout), the frame
/// compressed again and its checksum recomputed: the move's value breaks
/// the rules around it, and nothing shows it.
#[test]
fn a_forged_move_value_in_a_frame_is_refused() {
    let dir = fresh("forged-frames");
    common::succeeded(run(&dir, &[], &["solve", "9x6-a1", "--layout", "frames"]), "solve");
    let (position, forged) = two_ways_closer(&dir);
    let variant = bishops::Variant::named("9x6-a1").unwrap();
    let spec = &variant.classes()[0];
    let index = spec.tight_index();
    let (white, _) = stored_at(&variant, &forged.position);
    let place = index.rank(forged.position.part(&spec.geometry)).unwrap();
    let truth = forged.remoteness.unwrap().0 as u8;
    let conn = damage::edit(&dir.join("9x6-a1.sqlite"));
    let (first, last, data): (i64, i64, Vec<u8>) = conn
        .query_row(
            "SELECT first_white, last_white, data FROM frames
             WHERE class = 0 AND first_white <= ?1 ORDER BY first_white DESC LIMIT 1",
            [white as i64],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    let (first, last) = (first as u64, last as u64);
    let mut cells = zstd::decode_all(&data[..]).unwrap();
    assert_eq!(cells.len() as u64, index.block(last).end - index.block(first).start);
    let at = (place - index.block(first).start) as usize;
    assert_eq!(cells[at], truth);
    cells[at] = truth + 2;
    let data = zstd::encode_all(&cells[..], 3).unwrap();
    let sum = block_sum(first, cells.iter().copied());
    let changed = conn
        .execute(
            "UPDATE frames SET data = ?1, checksum = ?2 WHERE class = 0 AND first_white = ?3",
            rusqlite::params![data, sum, first as i64],
        )
        .unwrap();
    assert_eq!(changed, 1);
    drop(conn);
    refused_as_too_far(&dir, &position.to_string(), truth + 2);
}

/// A move's residue forged in a two-bit block so that the move, truly one
/// closer, reads one further than the position: its own descent through
/// the position bears that out, and only its other neighbours, one of them
/// three closer than shown, give it away.
#[test]
fn a_forged_move_residue_in_a_two_bit_block_is_refused() {
    let dir = fresh("forged-move-residue");
    solve_as_residues(&dir);
    let (position, forged) = two_ways_closer(&dir);
    let variant = bishops::Variant::named("9x6-a1").unwrap();
    let (white, at) = stored_at(&variant, &forged.position);
    let truth = forged.remoteness.unwrap().0;
    forge_residue(&dir, white, at, truth);
    refused_as_too_far(&dir, &position.to_string(), truth + 2);
}

/// The disk a solve says it needs is never less than the database file
/// it writes, in every layout, and not far above it.
#[test]
fn the_disk_estimate_is_never_below_the_file() {
    use bishops::pipeline::{SolveOptions, SolvePlan};
    use bishops::solver::Method;
    use bishops::storage::Layout;
    let cases = [
        (Method::Tight, None),
        (Method::Tight, Some(Layout::Blocks)),
        (Method::Tight, Some(Layout::Frames)),
        (Method::TwoBit, None),
        (Method::TwoBit, Some(Layout::Residues)),
    ];
    for name in ["5x4", "7x4", "7x6", "5x4-full", "9x6", "9x8"] {
        let variant = bishops::Variant::named(name).unwrap();
        for (method, layout) in cases {
            let dir = fresh(&format!("estimate-{name}"));
            let options = SolveOptions {
                method: Some(method),
                layout,
                ..SolveOptions::default()
            };
            let plan = SolvePlan::new(&variant, options).unwrap();
            let estimate = plan.database_bytes();
            assert_eq!(plan.disk_bytes(), estimate, "no checkpoints asked for");
            let path = plan.run(&dir, &mut |_| {}).unwrap().path;
            let real = fs::metadata(&path).unwrap().len();
            assert!(
                estimate >= real && estimate <= real + real / 2 + (512 << 10),
                "{name} {method:?} {layout:?}: estimated {estimate} bytes, wrote {real}"
            );
            fs::remove_dir_all(&dir).unwrap();
        }
    }
}

/// On a filesystem too small for the database, `solve` refuses before it
/// searches, in one line, and leaves nothing behind. Needs root, to mount
/// a tmpfs: `.ci/run` runs it so.
#[test]
#[ignore = "mounts a tmpfs: needs root (.ci/run runs it as root)"]
fn a_small_filesystem_is_refused_before_the_search() {
    let dir = fresh("small-filesystem");
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=700k", "tmpfs"])
        .arg(&dir)
        .status()
        .unwrap();
    assert!(mounted.success(), "mount a tmpfs on {}", dir.display());
    let output = run(&dir, &[], &["solve", "7x6"]);
    let listed: Vec<_> = fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
    Command::new("umount").arg(&dir).status().unwrap();
    let msg = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{msg}");
    assert!(
        msg.contains("variant 7x6 needs about") && msg.contains("of disk"),
        "{msg}"
    );
    assert!(
        !msg.contains("layer") && !msg.contains("disk is full"),
        "refused before the search: {msg}"
    );
    assert_eq!(msg.lines().filter(|l| l.contains("error")).count(), 1, "{msg}");
    assert!(
        listed.iter().all(|n| n.to_string_lossy().ends_with(".lock")),
        "{listed:?}"
    );
    fs::remove_dir_all(&dir).unwrap();
}

/// A histogram edited with the header checksum recomputed: `stats` shows
/// counts as stored (the docs say so, and what proves them), but `check`
/// refuses them and `solve` reads the table whole, finds they do not
/// agree, and rebuilds the file instead of calling it solved.
#[test]
fn a_forged_histogram_is_refused_by_check_and_rebuilt_by_solve() {
    let dir = fresh("forged-histogram");
    common::succeeded(run(&dir, &[], &["solve", "9x6-a1", "--layout", "blocks"]), "solve");
    let file = dir.join("9x6-a1.sqlite");
    let conn = damage::edit(&file);
    let histogram: String = conn
        .query_row("SELECT histogram FROM classes WHERE class = 0", [], |r| r.get(0))
        .unwrap();
    let mut counts: Vec<u64> = serde_json::from_str(&histogram).unwrap();
    counts[5] -= 1;
    counts[6] += 1;
    let forged = serde_json::to_string(&counts).unwrap();
    conn.execute("UPDATE classes SET histogram = ?1 WHERE class = 0", [&forged])
        .unwrap();
    damage::reseal(&conn);
    drop(conn);
    let shown = common::succeeded(run(&dir, &[], &["stats", "9x6-a1", "--json"]), "stats");
    let shown: serde_json::Value = serde_json::from_slice(&shown.stdout).unwrap();
    assert_eq!(shown["classes"][0]["histogram"][6], counts[6], "as stored");
    let output = run(&dir, &[], &["check", "9x6-a1"]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(stderr(&output).contains("counts"), "{}", stderr(&output));
    let output = common::succeeded(run(&dir, &[], &["solve", "9x6-a1"]), "solve");
    assert!(
        stderr(&output).contains("does not bear out") && stderr(&output).contains("rebuilding it"),
        "{}",
        stderr(&output)
    );
    let shown = common::succeeded(run(&dir, &[], &["stats", "9x6-a1", "--json"]), "stats");
    let shown: serde_json::Value = serde_json::from_slice(&shown.stdout).unwrap();
    assert_eq!(shown["classes"][0]["histogram"][6], counts[6] - 1, "rebuilt");
    fs::remove_dir_all(&dir).unwrap();
}
