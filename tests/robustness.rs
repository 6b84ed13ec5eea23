//! End-to-end tests of what happens when things go wrong: damaged and edited
//! databases, interrupted and concurrent solves, hostile arguments. Every
//! test runs the built binary as a user would, in a fresh directory of its
//! own, and checks that the answer is either right or a one-line refusal.

#[path = "common/damage.rs"]
mod damage;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The binary, with the caller's `BISHOPS_*` variables removed.
fn bishops() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_bishops"));
    cmd.env_remove("BISHOPS_DB").env_remove("BISHOPS_THREADS");
    cmd
}

/// A fresh directory path of this test's own; it does not exist yet.
fn fresh(name: &str) -> PathBuf {
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("robust-{name}-{}", std::process::id()));
    if path.exists() {
        fs::remove_dir_all(&path).unwrap();
    }
    path
}

/// What one run did.
#[derive(Debug)]
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn run_in(db: &Path, args: &[&str]) -> Run {
    let mut cmd = bishops();
    cmd.arg("--db").arg(db).args(args);
    output(cmd.output().unwrap())
}

fn output(out: Output) -> Run {
    Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

impl Run {
    fn ok(self) -> Run {
        assert_eq!(self.code, Some(0), "{self:#?}");
        assert!(!self.stderr.contains("panicked"), "{self:#?}");
        self
    }

    /// A clean refusal: the exit status, nothing on stdout, one line on
    /// stderr (besides notes), no panic. Returns the error line.
    fn refused(self, code: i32) -> String {
        assert_eq!(self.code, Some(code), "{self:#?}");
        assert!(!self.stderr.contains("panicked"), "{self:#?}");
        assert!(self.stdout.is_empty(), "{self:#?}");
        let errors: Vec<&str> = self
            .stderr
            .lines()
            .filter(|l| l.starts_with("bishops: error:"))
            .collect();
        assert_eq!(errors.len(), 1, "{self:#?}");
        assert!(
            errors[0].len() < 400,
            "an error line of {} bytes: {self:#?}",
            errors[0].len()
        );
        errors[0].to_owned()
    }
}

/// Asserts that `line` refuses the database of `variant` in `db` and names
/// the command that rebuilds it.
fn untrusted(line: &str, db: &Path, variant: &str) {
    let file = db.join(format!("{variant}.sqlite"));
    assert!(line.contains(&file.display().to_string()), "{line}");
    assert!(
        line.contains(&format!(
            "`bishops check {variant}` proves or refutes it, `bishops solve {variant} --force` rebuilds it"
        )),
        "{line}"
    );
}

/// Solves `variant` into `db` with `layout`.
fn solve(db: &Path, variant: &str, layout: &str) -> PathBuf {
    run_in(db, &["solve", variant, "--layout", layout]).ok();
    db.join(format!("{variant}.sqlite"))
}

const START_5X4: &str = "5_4_a1-a3_e1-e3";
const START_7X6: &str = "7_6_a1-a3-a5_g1-g3-g5";

/// Asserts that `query` and `line` of `position` both refuse the database.
fn query_and_line_refuse(db: &Path, variant: &str, position: &str) -> String {
    let line = run_in(db, &["line", position]).refused(1);
    untrusted(&line, db, variant);
    let query = run_in(db, &["query", position, "--json"]).refused(1);
    untrusted(&query, db, variant);
    query
}

// ---------------------------------------------------------------------------
// Damaged tables: query and line never answer from them
// ---------------------------------------------------------------------------

#[test]
fn an_edited_row_is_refused_not_answered() {
    let db = fresh("edited-row");
    let file = solve(&db, "5x4", "rows");
    // The start's 18 made 5, as in the issue.
    let sql = "UPDATE positions SET remoteness = 5 WHERE hash = (SELECT start_hash FROM classes)";
    assert_eq!(damage::sql(&file, sql, false), 1);
    let msg = query_and_line_refuse(&db, "5x4", START_5X4);
    assert!(msg.contains("checksum"), "{msg}");
    // A row of a position next to the start: its query reads the start's block too.
    run_in(&db, &["query", "5_4_a1-b2_e1-e3"]).refused(1);
    fs::remove_dir_all(&db).unwrap();
}

#[test]
fn a_null_remoteness_is_refused_not_called_unreachable() {
    let db = fresh("null-row");
    let file = solve(&db, "5x4", "rows");
    let sql = "UPDATE positions SET remoteness = NULL WHERE hash = (SELECT start_hash FROM classes)";
    assert_eq!(damage::sql(&file, sql, false), 1);
    query_and_line_refuse(&db, "5x4", START_5X4);
    fs::remove_dir_all(&db).unwrap();
}

#[test]
fn a_deleted_row_is_refused() {
    let db = fresh("deleted-row");
    let file = solve(&db, "5x4", "rows");
    // A position one move from the start (a3-b2), not the start itself.
    let before = run_in(&db, &["query", "5_4_a1-b2_e1-e3", "--json"]).ok();
    let hash: serde_json::Value = serde_json::from_str(&before.stdout).unwrap();
    let sql = format!("DELETE FROM positions WHERE hash = {}", hash["class_hashes"][0]);
    assert_eq!(damage::sql(&file, &sql, false), 1);
    let msg = run_in(&db, &["query", "5_4_a1-b2_e1-e3"]).refused(1);
    assert!(
        msg.contains(&format!("no row for the legal hash {}", hash["class_hashes"][0])),
        "{msg}"
    );
    fs::remove_dir_all(&db).unwrap();
}

#[test]
fn a_row_where_no_legal_position_is_is_refused() {
    let db = fresh("extra-row");
    let file = solve(&db, "5x4", "rows");
    // Hash 0 is white a1 a3, black b2 b4: b2 attacked, so no row belongs
    // there (the insert would fail if one did). It is in the start's white
    // set (hash 27 of 28 per set).
    assert_eq!(damage::sql(&file, "INSERT INTO positions VALUES (0, 0, 7)", false), 1);
    let msg = query_and_line_refuse(&db, "5x4", START_5X4);
    assert!(msg.contains("a row at hash 0, where no legal position is"), "{msg}");
    fs::remove_dir_all(&db).unwrap();
}

/// The colex rank of the white set of the 7x6 start: its block.
const START_BLOCK_7X6: &str = "(SELECT start_hash / 816 FROM classes)";

#[test]
fn a_zeroed_block_is_refused_not_called_solved() {
    let db = fresh("zeroed-block");
    let file = solve(&db, "7x6", "blocks");
    let sql = format!("UPDATE blocks SET data = zeroblob(length(data)) WHERE white = {START_BLOCK_7X6}");
    assert_eq!(damage::sql(&file, &sql, false), 1);
    query_and_line_refuse(&db, "7x6", START_7X6);
    fs::remove_dir_all(&db).unwrap();
}

#[test]
fn flipped_bytes_in_a_block_are_refused() {
    let db = fresh("flipped-block");
    let file = solve(&db, "7x6", "blocks");
    let conn = damage::edit(&file);
    let sql = format!("SELECT white, data FROM blocks WHERE white = {START_BLOCK_7X6}");
    let (white, mut data): (i64, Vec<u8>) = conn.query_row(&sql, [], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
    for i in [0, data.len() / 2, data.len() - 1] {
        data[i] ^= 0x72;
    }
    conn.execute(
        "UPDATE blocks SET data = ?1 WHERE white = ?2",
        rusqlite::params![data, white],
    )
    .unwrap();
    drop(conn);
    query_and_line_refuse(&db, "7x6", START_7X6);
    fs::remove_dir_all(&db).unwrap();
}

#[test]
fn a_short_blob_is_refused_not_read_as_unreachable() {
    let db = fresh("short-blob");
    let file = solve(&db, "7x6", "blocks");
    let sql = format!("UPDATE blocks SET data = substr(data, 1, 3) WHERE white = {START_BLOCK_7X6}");
    assert_eq!(damage::sql(&file, &sql, false), 1);
    let msg = query_and_line_refuse(&db, "7x6", START_7X6);
    assert!(msg.contains("a block of 3 bytes"), "{msg}");
    fs::remove_dir_all(&db).unwrap();
}

#[test]
fn a_truncated_file_is_refused_and_rebuilt_by_solve() {
    let db = fresh("truncated");
    let file = solve(&db, "5x4", "rows");
    let len = fs::metadata(&file).unwrap().len();
    fs::OpenOptions::new()
        .write(true)
        .open(&file)
        .unwrap()
        .set_len(len / 2)
        .unwrap();
    let msg = run_in(&db, &["query", START_5X4]).refused(1);
    assert!(msg.contains("truncated"), "{msg}");
    let rebuilt = run_in(&db, &["solve", "5x4"]).ok();
    assert!(rebuilt.stderr.contains("rebuilding it"), "{rebuilt:#?}");
    assert!(rebuilt.stdout.contains("solved in"), "{rebuilt:#?}");
    fs::remove_dir_all(&db).unwrap();
}

// ---------------------------------------------------------------------------
// Fields outside the tables: checked before any command uses them
// ---------------------------------------------------------------------------

/// Each edit is refused whether or not the header checksum is rewritten to
/// match it: by the header checksum, and then by the consistency checks.
fn header_edit_is_refused_everywhere(name: &str, sql: &str, expected: &str) {
    for reseal in [false, true] {
        let db = fresh(&format!("{name}-{reseal}"));
        let file = solve(&db, "5x4", "rows");
        assert_eq!(damage::sql(&file, sql, reseal), 1, "{sql}");
        let stats = run_in(&db, &["stats", "5x4"]).refused(1);
        untrusted(&stats, &db, "5x4");
        let wanted = if reseal { expected } else { "header checksum" };
        assert!(stats.contains(wanted), "{sql}: {stats}");
        run_in(&db, &["query", START_5X4]).refused(1);
        let variants = run_in(&db, &["variants"]).ok();
        let row = variants.stdout.lines().find(|l| l.starts_with("5x4 ")).unwrap();
        assert!(row.contains("damaged") && !row.contains("18446744"), "{row}");
        // solve without --force rebuilds it, and the rebuilt file is right.
        let rebuilt = run_in(&db, &["solve", "5x4"]).ok();
        assert!(rebuilt.stderr.contains("rebuilding it"), "{rebuilt:#?}");
        assert!(
            rebuilt.stdout.contains("start remoteness 18, largest 19"),
            "{rebuilt:#?}"
        );
        run_in(&db, &["stats", "5x4"]).ok();
        fs::remove_dir_all(&db).unwrap();
    }
}

#[test]
fn an_out_of_range_hardest_position_is_refused_not_a_panic() {
    header_edit_is_refused_everywhere("hardest", "UPDATE classes SET hardest = '[999999]'", "hardest");
}

#[test]
fn a_hardest_position_that_is_not_hardest_is_refused() {
    // The start (remoteness 18) listed as a hardest position (19).
    header_edit_is_refused_everywhere(
        "hardest-wrong",
        "UPDATE classes SET hardest = '[' || start_hash || ']'",
        "among the hardest",
    );
}

#[test]
fn zero_legal_positions_is_refused_not_an_underflow() {
    header_edit_is_refused_everywhere("legal-zero", "UPDATE classes SET legal = 0", "legal is 0");
}

#[test]
fn an_edited_histogram_is_refused() {
    header_edit_is_refused_everywhere(
        "histogram",
        "UPDATE classes SET histogram = '[1,2,2,3,4,5,7,9,8,6,7,9,7,5,4,4,3,2,2,2]'",
        "histogram",
    );
}

#[test]
fn an_edited_start_remoteness_is_refused_everywhere() {
    header_edit_is_refused_everywhere(
        "start-remoteness",
        "UPDATE meta SET value = '3' WHERE key = 'start_remoteness'",
        "start_remoteness is 3",
    );
}

#[test]
fn an_edited_position_count_is_refused() {
    header_edit_is_refused_everywhere(
        "legal-positions",
        "UPDATE meta SET value = '99' WHERE key = 'legal_positions'",
        "legal_positions is 99",
    );
}

#[test]
fn a_database_of_the_old_format_is_rebuilt_by_solve() {
    let db = fresh("old-format");
    let file = solve(&db, "5x4", "rows");
    damage::sql(&file, "UPDATE meta SET value = '1' WHERE key = 'format_version'", true);
    let msg = run_in(&db, &["query", START_5X4]).refused(1);
    assert!(msg.contains("format version 1"), "{msg}");
    // Format 2 held a mirrored class's table in full: refused as well.
    damage::sql(&file, "UPDATE meta SET value = '2' WHERE key = 'format_version'", true);
    let msg = run_in(&db, &["query", START_5X4]).refused(1);
    assert!(
        msg.contains("format version 2, this program reads versions 5 to 6"),
        "{msg}"
    );
    // Format 3 checksummed a mirrored class's derived cells: refused too.
    damage::sql(&file, "UPDATE meta SET value = '3' WHERE key = 'format_version'", true);
    let msg = run_in(&db, &["query", START_5X4]).refused(1);
    assert!(
        msg.contains("format version 3, this program reads versions 5 to 6"),
        "{msg}"
    );
    // Format 4 used FNV-1a 64 for its checksums: refused in one line that
    // names it older and says what rebuilds it.
    damage::sql(&file, "UPDATE meta SET value = '4' WHERE key = 'format_version'", true);
    let msg = run_in(&db, &["query", START_5X4]).refused(1);
    assert!(
        msg.contains("is of the older format version 4, this program reads versions 5 to 6"),
        "{msg}"
    );
    // Format 5 differs from 6 only by the frames layout: read as written.
    damage::sql(&file, "UPDATE meta SET value = '5' WHERE key = 'format_version'", true);
    let answer = run_in(&db, &["query", START_5X4]).ok();
    assert!(answer.stdout.contains("remoteness  18"), "{answer:#?}");
    damage::sql(&file, "UPDATE meta SET value = '4' WHERE key = 'format_version'", true);
    untrusted(&msg, &db, "5x4");
    let rebuilt = run_in(&db, &["solve", "5x4"]).ok();
    assert!(rebuilt.stderr.contains("rebuilding it"), "{rebuilt:#?}");
    assert!(rebuilt.stdout.contains("solved in"), "{rebuilt:#?}");
    run_in(&db, &["query", START_5X4]).ok();
    fs::remove_dir_all(&db).unwrap();
}

#[test]
fn a_compressed_database_that_claims_format_5_is_refused() {
    let db = fresh("frames-format-5");
    let file = solve(&db, "5x4", "frames");
    run_in(&db, &["query", START_5X4]).ok();
    damage::sql(&file, "UPDATE meta SET value = '5' WHERE key = 'format_version'", true);
    let msg = run_in(&db, &["query", START_5X4]).refused(1);
    assert!(msg.contains("has the frames layout in format version 5"), "{msg}");
    fs::remove_dir_all(&db).unwrap();
}

// ---------------------------------------------------------------------------
// Interrupted and concurrent solves
// ---------------------------------------------------------------------------

/// The variant the kill tests solve: long enough to be caught mid-search
/// and mid-write (a few seconds with the test build), and in blocks.
const LONG: &str = "9x8";

fn spawn_solve(db: &Path, variant: &str) -> Child {
    let mut cmd = bishops();
    cmd.arg("--db")
        .arg(db)
        .args(["solve", variant])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd.spawn().unwrap()
}

/// Waits (at most two minutes) until `found` holds of the file names in `dir`.
fn wait_for(dir: &Path, what: &str, found: impl Fn(&[String]) -> bool) {
    let started = Instant::now();
    while !found(&names(dir)) {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "no {what} in {}",
            dir.display()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn names(dir: &Path) -> Vec<String> {
    fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

fn is_temp(name: &str) -> bool {
    name.contains(".sqlite.tmp-")
}

fn signal(child: &Child, signal: i32) {
    // SAFETY: kill(2) with a child's pid and a signal number.
    assert_eq!(unsafe { libc::kill(child.id() as i32, signal) }, 0);
}

/// Waits for `child` and asserts that it died of `sig`, without a panic.
fn died_of(child: Child, sig: i32) -> Run {
    use std::os::unix::process::ExitStatusExt;
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.signal(), Some(sig), "{out:#?}");
    let run = output(out);
    assert!(!run.stderr.contains("panicked"), "{run:#?}");
    run
}

#[test]
fn sigterm_while_writing_removes_the_temporary_file() {
    let db = fresh("sigterm-write");
    let child = spawn_solve(&db, LONG);
    wait_for(&db, "temporary file", |n| n.iter().any(|n| is_temp(n)));
    signal(&child, libc::SIGTERM);
    died_of(child, libc::SIGTERM);
    assert_eq!(names(&db), Vec::<String>::new(), "left behind");
    fs::remove_dir_all(&db).unwrap();
}

#[test]
fn ctrl_c_while_searching_leaves_nothing_behind() {
    let db = fresh("sigint-search");
    let child = spawn_solve(&db, LONG);
    // The lock is taken before the search starts.
    wait_for(&db, "lock file", |n| n.iter().any(|n| n.ends_with(".lock")));
    std::thread::sleep(Duration::from_millis(300));
    signal(&child, libc::SIGINT);
    died_of(child, libc::SIGINT);
    assert_eq!(names(&db), Vec::<String>::new(), "left behind");
    fs::remove_dir_all(&db).unwrap();
}

#[test]
fn what_a_killed_solve_leaves_is_removed_by_the_next_writer() {
    let db = fresh("sigkill-write");
    let child = spawn_solve(&db, LONG);
    wait_for(&db, "temporary file", |n| n.iter().any(|n| is_temp(n)));
    signal(&child, libc::SIGKILL);
    died_of(child, libc::SIGKILL);
    assert!(names(&db).iter().any(|n| is_temp(n)), "kill -9 cleans nothing up");
    // A query only reads: it leaves the directory alone.
    run_in(&db, &["query", START_5X4]).ok();
    run_in(&db, &["solve", "5x4"]).ok();
    assert_eq!(names(&db), vec!["5x4.sqlite".to_owned()]);
    fs::remove_dir_all(&db).unwrap();
}

#[test]
fn a_solve_killed_while_searching_leaves_a_lock_the_next_writer_removes() {
    let db = fresh("sigkill-search");
    let child = spawn_solve(&db, LONG);
    wait_for(&db, "lock file", |n| n.iter().any(|n| n.ends_with(".lock")));
    signal(&child, libc::SIGKILL);
    died_of(child, libc::SIGKILL);
    assert_eq!(names(&db), vec![format!(".{LONG}.sqlite.lock")]);
    run_in(&db, &["solve", "5x4"]).ok();
    assert_eq!(names(&db), vec!["5x4.sqlite".to_owned()]);
    fs::remove_dir_all(&db).unwrap();
}

#[test]
fn a_live_writers_temporary_file_is_left_alone() {
    let db = fresh("live-writer");
    let child = spawn_solve(&db, LONG);
    wait_for(&db, "temporary file", |n| n.iter().any(|n| is_temp(n)));
    // Another writer of the same directory, while the first writes.
    run_in(&db, &["solve", "5x4"]).ok();
    let first = output(child.wait_with_output().unwrap());
    assert_eq!(first.code, Some(0), "the first solve lost its file: {first:#?}");
    run_in(&db, &["stats", LONG]).ok();
    fs::remove_dir_all(&db).unwrap();
}

#[test]
fn a_second_solve_of_a_variant_waits_then_finds_it_solved() {
    let db = fresh("two-solves");
    let first = spawn_solve(&db, LONG);
    wait_for(&db, "lock file", |n| n.iter().any(|n| n.ends_with(".lock")));
    let second = output(spawn_solve(&db, LONG).wait_with_output().unwrap());
    let first = output(first.wait_with_output().unwrap()).ok();
    assert!(first.stdout.contains("solved in"), "{first:#?}");
    let second = second.ok();
    assert!(second.stderr.contains("waiting for it to finish"), "{second:#?}");
    assert!(second.stdout.contains("already solved"), "{second:#?}");
    assert_eq!(names(&db), vec![format!("{LONG}.sqlite")]);
    fs::remove_dir_all(&db).unwrap();
}

/// The children of process `pid`, from `/proc`.
fn children(pid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in fs::read_dir("/proc").unwrap().flatten() {
        let Ok(child) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = fs::read_to_string(format!("/proc/{child}/stat")) else {
            continue;
        };
        // pid (comm) state ppid ...: comm may hold spaces, so from the last ')'.
        let after = &stat[stat.rfind(')').unwrap() + 2..];
        if after.split(' ').nth(1).and_then(|p| p.parse::<u32>().ok()) == Some(pid) {
            found.push(child);
        }
    }
    found
}

/// Whether process `pid` is gone (or a zombie: dead, not yet reaped).
fn gone(pid: u32) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat[stat.rfind(')').unwrap() + 2..].starts_with('Z'),
        Err(_) => true,
    }
}

fn killed_bench_kills_its_solve(sig: i32) {
    let tmp = fresh(&format!("bench-{sig}"));
    fs::create_dir_all(&tmp).unwrap();
    let mut cmd = bishops();
    cmd.env("TMPDIR", &tmp)
        .args(["bench", LONG])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let bench = cmd.spawn().unwrap();
    let started = Instant::now();
    let solve = loop {
        if let Some(&child) = children(bench.id()).first() {
            break child;
        }
        assert!(started.elapsed() < Duration::from_secs(60), "bench started no solve");
        std::thread::sleep(Duration::from_millis(5));
    };
    wait_for(&tmp, "bench directory", |n| {
        n.iter().any(|n| n.starts_with("bishops-bench-"))
    });
    signal(&bench, sig);
    died_of(bench, sig);
    let started = Instant::now();
    while !gone(solve) {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the solve of a killed bench runs on"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    if sig != libc::SIGKILL {
        // Interrupted, bench removes its scratch directory itself.
        wait_for(&tmp, "empty directory", |n| n.is_empty());
    }
    fs::remove_dir_all(&tmp).unwrap();
}

#[test]
fn killing_bench_kills_its_solve() {
    killed_bench_kills_its_solve(libc::SIGKILL);
}

#[test]
fn terminating_bench_kills_its_solve_and_cleans_up() {
    killed_bench_kills_its_solve(libc::SIGTERM);
}

// ---------------------------------------------------------------------------
// Hostile arguments
// ---------------------------------------------------------------------------

#[test]
fn too_many_threads_are_refused_at_once() {
    let db = fresh("threads");
    for args in [
        &["--threads", "100000", "query", START_5X4][..],
        &["solve", "5x4", "--threads", "100000"],
        &["--threads", "0", "variants"],
    ] {
        let started = Instant::now();
        let msg = run_in(&db, args).refused(2);
        assert!(msg.contains("--threads"), "{msg}");
        assert!(started.elapsed() < Duration::from_secs(10));
    }
    assert!(!db.exists(), "nothing written");
}

#[test]
fn a_memory_limit_that_does_not_fit_is_refused() {
    let db = fresh("max-memory");
    let msg = run_in(&db, &["solve", "5x4", "--max-memory", "17592186044416"]).refused(2);
    assert!(msg.contains("--max-memory"), "{msg}");
    assert!(!db.exists(), "nothing written");
}

#[test]
fn an_unwritable_database_directory_is_refused_before_the_search() {
    // Not even root can make a directory in /proc.
    let db = Path::new("/proc/bishops-robustness-test/db");
    let started = Instant::now();
    let msg = run_in(db, &["solve", LONG]).refused(2);
    assert!(started.elapsed() < Duration::from_secs(5), "searched first: {msg}");
    assert!(
        msg.contains("`/proc/bishops-robustness-test/db` cannot be written"),
        "{msg}"
    );
    assert!(!msg.contains("tmp"), "{msg}");
}

#[test]
fn a_file_given_as_the_database_directory_is_refused() {
    let dir = fresh("db-is-file");
    fs::create_dir_all(&dir).unwrap();
    let file = dir.join("db");
    fs::write(&file, "not a directory").unwrap();
    for args in [
        &["query", START_5X4][..],
        &["solve", "5x4"],
        &["variants"],
        &["stats", "5x4"],
    ] {
        let msg = run_in(&file, args).refused(2);
        assert!(msg.contains("is a file, not a directory"), "{args:?}: {msg}");
        assert!(!msg.contains("--force"), "{msg}");
    }
    assert_eq!(fs::read_to_string(&file).unwrap(), "not a directory");
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_directory_where_the_database_belongs_is_refused() {
    let db = fresh("dir-as-file");
    fs::create_dir_all(db.join("5x4.sqlite")).unwrap();
    for args in [
        &["query", START_5X4][..],
        &["solve", "5x4"],
        &["solve", "5x4", "--force"],
        &["stats", "5x4"],
    ] {
        let msg = run_in(&db, args).refused(2);
        assert!(msg.contains("5x4.sqlite` is a directory"), "{args:?}: {msg}");
        assert!(msg.contains("move it away"), "{msg}");
    }
    // The list of variants still lists them all, this one with its problem.
    let list = run_in(&db, &["variants"]).ok();
    assert!(list.stdout.contains("5x4.sqlite` is a directory"), "{list:#?}");
    assert!(list.stdout.lines().any(|l| l.starts_with("7x6 ")), "{list:#?}");
    assert!(db.join("5x4.sqlite").is_dir());
    fs::remove_dir_all(&db).unwrap();
}

#[test]
fn empty_environment_variables_count_as_unset_and_bad_ones_are_refused_naming_them() {
    // Set but empty is unset, for both variables: `query` answers from the
    // default `db/` of its working directory (solving 5x4 there on demand).
    let db = fresh("env-empty");
    fs::create_dir_all(&db).unwrap();
    for name in ["BISHOPS_DB", "BISHOPS_THREADS"] {
        let out = bishops()
            .env(name, "")
            .current_dir(&db)
            .args(["query", START_5X4])
            .output()
            .unwrap();
        let run = output(out).ok();
        assert!(run.stdout.contains("remoteness"), "{name}: {run:#?}");
        assert!(db.join("db").join("5x4.sqlite").is_file(), "{name}");
    }
    fs::remove_dir_all(&db).unwrap();
    let out = bishops()
        .env("BISHOPS_THREADS", "many")
        .args(["query", START_5X4])
        .output()
        .unwrap();
    let msg = output(out).refused(2);
    assert!(msg.contains("environment variable BISHOPS_THREADS is `many`"), "{msg}");
    assert!(!msg.contains("--db") && !msg.contains("--threads"), "{msg}");
}

#[test]
fn error_lines_are_bounded_however_long_the_input() {
    let db = fresh("long-input");
    let squares = vec!["a1"; 43_000].join("-");
    let long = format!("5_4_{squares}_e1-e3");
    assert!(long.len() > 129_000);
    let msg = run_in(&db, &["query", &long]).refused(2);
    assert!(msg.len() < 400, "{} bytes", msg.len());
    assert!(msg.contains(&format!("({} characters)", long.len())), "{msg}");
    let name = "x".repeat(5000);
    let msg = run_in(&db, &["stats", &name]).refused(2);
    assert!(
        msg.contains("unknown variant") && msg.contains("5000 characters"),
        "{msg}"
    );
    assert!(!msg.contains("or or"), "{msg}");
    let msg = run_in(&db, &["query", START_5X4, "--variant", &name]).refused(2);
    assert!(msg.len() < 400, "{msg}");
    assert!(!db.exists(), "nothing written");
}

// ---------------------------------------------------------------------------
// The last line of defence: answers checked against the rules
// ---------------------------------------------------------------------------

/// Rewrites every checksum of a rows-layout database for its rows as they
/// now are, following docs/database.md's definitions: what a careful forger (or a
/// bug in a writer) would produce. Only the rules can catch what is left.
fn rechecksum_rows(path: &Path, block_size: i64) {
    let conn = damage::edit(path);
    let rows: Vec<(i64, i64, Option<i64>)> = conn
        .prepare("SELECT class, hash, remoteness FROM positions ORDER BY class, hash")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let byte = |r: Option<i64>| r.map_or(254u8, |r| r as u8);
    let whole = damage::checksum(rows.iter().map(|&(_, _, r)| byte(r)));
    conn.execute("UPDATE classes SET checksum = ?1", [whole.hex()]).unwrap();
    let mut white_sets: Vec<(i64, i64)> = rows.iter().map(|&(c, h, _)| (c, h / block_size)).collect();
    white_sets.dedup();
    for (class, white) in white_sets {
        let cells = rows
            .iter()
            .filter(|&&(c, h, _)| c == class && h / block_size == white)
            .map(|&(_, _, r)| byte(r));
        let bytes = [class as u8].into_iter().chain(white.to_le_bytes()).chain(cells);
        let sum = damage::checksum(bytes).signed();
        let changed = conn
            .execute(
                "UPDATE row_checksums SET checksum = ?1 WHERE class = ?2 AND white = ?3",
                [sum, class, white],
            )
            .unwrap();
        assert_eq!(changed, 1);
    }
    damage::reseal(&conn);
}

#[test]
fn a_consistent_forgery_is_caught_by_the_rules() {
    let db = fresh("forgery");
    let file = solve(&db, "5x4", "rows");
    // Checksums rewritten without an edit change nothing: docs/database.md's
    // definitions are the program's. (C(10 - 2, 2) = 28 hashes per white
    // set of 5x4.)
    rechecksum_rows(&file, 28);
    run_in(&db, &["query", START_5X4]).ok();
    // A neighbour of the start (17) made 3, every checksum made to match.
    let neighbour = "5_4_a1-b2_e1-e3";
    let probe: serde_json::Value =
        serde_json::from_str(&run_in(&db, &["query", neighbour, "--json"]).ok().stdout).unwrap();
    assert_eq!(probe["remoteness"], 17);
    let sql = format!(
        "UPDATE positions SET remoteness = 3 WHERE hash = {}",
        probe["class_hashes"][0]
    );
    assert_eq!(damage::sql(&file, &sql, false), 1);
    rechecksum_rows(&file, 28);
    run_in(&db, &["stats", "5x4"]).ok();
    let msg = query_and_line_refuse(&db, "5x4", neighbour);
    assert!(
        msg.contains("breaks the rules at 5_4_a1-b2_e1-e3 (class a1), which has remoteness 3 but no neighbour has 2"),
        "{msg}"
    );
    let msg = run_in(&db, &["query", START_5X4]).refused(1);
    assert!(
        msg.contains("breaks the rules at 5_4_a1-a3_e1-e3 (class a1), which has remoteness 18 but a neighbour has 3"),
        "{msg}"
    );
    // A full read recomputes the histogram, so solve rebuilds it.
    let rebuilt = run_in(&db, &["solve", "5x4"]).ok();
    assert!(rebuilt.stderr.contains("does not bear out"), "{rebuilt:#?}");
    run_in(&db, &["query", neighbour]).ok();
    fs::remove_dir_all(&db).unwrap();
}

// ---------------------------------------------------------------------------
// Odd files: nothing the program did not make is opened, waited on or replaced
// ---------------------------------------------------------------------------

/// Makes a FIFO at `path`.
fn mkfifo(path: &Path) {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(
        unsafe { libc::mkfifo(c.as_ptr(), 0o644) },
        0,
        "mkfifo {}",
        path.display()
    );
}

fn is_fifo(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_fifo())
}

/// Runs `cmd` with `input` on stdin, killing it (and failing) when it takes
/// more than `seconds`: a command that hangs on an odd file fails the test
/// instead of hanging it.
fn run_within(mut cmd: Command, input: &[u8], seconds: u64) -> Run {
    use std::io::Write as _;
    cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    // The child may stop reading early: a write it refuses is no failure.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(seconds) {
            let _ = child.kill();
            let out = output(child.wait_with_output().unwrap());
            panic!("still running after {seconds} s, killed: {out:#?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    writer.join().unwrap();
    output(child.wait_with_output().unwrap())
}

/// `bishops --db DB ARGS…`, within 10 seconds.
fn run_quickly(db: &Path, args: &[&str]) -> Run {
    let mut cmd = bishops();
    cmd.arg("--db").arg(db).args(args);
    run_within(cmd, b"", 10)
}

#[test]
fn a_fifo_at_the_database_path_is_refused_at_once_not_waited_on() {
    let db = fresh("fifo-db");
    fs::create_dir_all(&db).unwrap();
    let fifo = db.join("5x4.sqlite");
    mkfifo(&fifo);
    for args in [
        &["query", START_5X4][..],
        &["line", START_5X4],
        &["stats", "5x4"],
        &["check", "5x4"],
        &["export", "5x4"],
        &["solve", "5x4"],
        &["solve", "5x4", "--force"],
    ] {
        let msg = run_quickly(&db, args).refused(2);
        assert!(
            msg.contains("5x4.sqlite` is a FIFO (named pipe), not a database file: move it away"),
            "{args:?}: {msg}"
        );
    }
    // The list of variants answers at once, this one with its problem.
    let list = run_quickly(&db, &["variants"]).ok();
    assert!(list.stdout.contains("5x4.sqlite` is a FIFO (named pipe)"), "{list:#?}");
    assert!(is_fifo(&fifo), "the FIFO is left as it was");
    assert_eq!(names(&db), vec!["5x4.sqlite".to_owned()], "nothing else made");
    fs::remove_dir_all(&db).unwrap();
}

#[test]
fn a_fifo_at_a_lock_or_checkpoint_path_is_refused_at_once() {
    for name in [".5x4.sqlite.lock", ".5x4.a1.checkpoint"] {
        let db = fresh("fifo-lock");
        fs::create_dir_all(&db).unwrap();
        let fifo = db.join(name);
        mkfifo(&fifo);
        let msg = run_quickly(&db, &["solve", "5x4"]).refused(2);
        assert!(
            msg.contains(&format!("{name}` is a FIFO (named pipe), not a")),
            "{name}: {msg}"
        );
        assert!(msg.contains("move it away"), "{msg}");
        assert!(is_fifo(&fifo), "{name} is left as it was");
        assert_eq!(names(&db), vec![name.to_owned()], "nothing written");
        fs::remove_dir_all(&db).unwrap();
    }
}

#[test]
fn a_fifo_beside_a_database_is_never_opened() {
    // SQLite looks beside a database for a journal to roll back (and, for
    // a file in WAL mode, for its log): a FIFO there must not make it wait.
    // Characters a URI would read otherwise, in the directory's name.
    let db = fresh("fifo journal?#%41");
    let file = solve(&db, "5x4", "rows");
    let fifos: Vec<PathBuf> = ["-journal", "-wal", "-shm"]
        .iter()
        .map(|suffix| db.join(format!("5x4.sqlite{suffix}")))
        .collect();
    fifos.iter().for_each(|f| mkfifo(f));
    for args in [
        &["query", START_5X4][..],
        &["line", START_5X4],
        &["stats", "5x4"],
        &["check", "5x4"],
        &["export", "5x4"],
        &["variants"],
        &["solve", "5x4"],
    ] {
        run_quickly(&db, args).ok();
    }
    // Telling a database from another file looks inside it the same way.
    let msg = run_quickly(&db, &["export", "5x4", "-o", file.to_str().unwrap(), "--force"]).refused(2);
    assert!(msg.contains("is a bishops database"), "{msg}");
    assert!(fifos.iter().all(|f| is_fifo(f)), "the FIFOs are left as they were");
    fs::remove_dir_all(&db).unwrap();
}

#[test]
fn a_link_to_a_database_is_read_but_never_replaced() {
    let dir = fresh("db-link");
    let (db, elsewhere) = (dir.join("db"), dir.join("elsewhere"));
    let real = solve(&elsewhere, "5x4", "rows");
    fs::create_dir_all(&db).unwrap();
    std::os::unix::fs::symlink(&real, db.join("5x4.sqlite")).unwrap();
    let before = fs::read(&real).unwrap();
    run_quickly(&db, &["query", START_5X4]).ok();
    run_quickly(&db, &["solve", "5x4"]).ok();
    // A write would put a new file in place of the link: refused before
    // the search.
    let run = run_quickly(&db, &["solve", "5x4", "--force"]);
    assert_eq!(
        run.stderr.lines().count(),
        1,
        "only the error, no plan line first: {run:#?}"
    );
    let msg = run.refused(2);
    assert!(msg.contains("5x4.sqlite` is a symbolic link"), "{msg}");
    assert!(fs::symlink_metadata(db.join("5x4.sqlite")).unwrap().is_symlink());
    assert_eq!(fs::read(&real).unwrap(), before);
    assert_eq!(names(&db), vec!["5x4.sqlite".to_owned()], "no temporary file");
    fs::remove_dir_all(&dir).unwrap();
}

/// A directory for files that `export -o` writes, beside a database
/// directory holding a solved 5x4; returns (database directory, output
/// directory, the CSV export on stdout).
fn export_dirs(name: &str) -> (PathBuf, PathBuf, String) {
    let dir = fresh(name);
    let (db, out) = (dir.join("db"), dir.join("out"));
    solve(&db, "5x4", "rows");
    fs::create_dir_all(&out).unwrap();
    let csv = run_in(&db, &["export", "5x4"]).ok().stdout;
    assert_eq!(csv.lines().count(), 101);
    (db, out, csv)
}

/// `export 5x4 -o PATH` with `extra` arguments.
fn export_to(db: &Path, path: &Path, extra: &[&str]) -> Run {
    let mut args = vec!["export", "5x4", "-o", path.to_str().unwrap()];
    args.extend(extra);
    run_quickly(db, &args)
}

#[test]
fn export_writes_through_a_fifo_and_leaves_it_a_fifo() {
    let (db, out, csv) = export_dirs("export-fifo");
    let fifo = out.join("rows.fifo");
    mkfifo(&fifo);
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || fs::read_to_string(fifo).unwrap())
    };
    let run = export_to(&db, &fifo, &[]).ok();
    assert!(run.stdout.is_empty(), "{run:#?}");
    assert_eq!(reader.join().unwrap(), csv, "the reader got the export");
    assert!(is_fifo(&fifo), "the FIFO is still a FIFO");
    assert_eq!(names(&out), vec!["rows.fifo".to_owned()], "no temporary file");
    fs::remove_dir_all(db.parent().unwrap()).unwrap();
}

#[test]
fn export_replaces_an_existing_file_only_with_force() {
    let (db, out, csv) = export_dirs("export-force");
    let file = out.join("rows.csv");
    fs::write(&file, "keep").unwrap();
    let msg = export_to(&db, &file, &[]).refused(2);
    assert!(msg.contains("rows.csv` exists: pass --force to replace it"), "{msg}");
    assert_eq!(fs::read_to_string(&file).unwrap(), "keep");
    export_to(&db, &file, &["--force"]).ok();
    assert_eq!(fs::read_to_string(&file).unwrap(), csv);
    // A link to a file: --force replaces the file, and the link stays a link.
    let (link, target) = (out.join("link.csv"), out.join("target.csv"));
    fs::write(&target, "keep").unwrap();
    std::os::unix::fs::symlink("target.csv", &link).unwrap();
    let msg = export_to(&db, &link, &[]).refused(2);
    assert!(msg.contains("pass --force"), "{msg}");
    assert_eq!(fs::read_to_string(&target).unwrap(), "keep");
    export_to(&db, &link, &["--force"]).ok();
    assert!(fs::symlink_metadata(&link).unwrap().is_symlink(), "the link is kept");
    assert_eq!(fs::read_link(&link).unwrap(), Path::new("target.csv"));
    assert_eq!(fs::read_to_string(&target).unwrap(), csv);
    // A new file, as before.
    export_to(&db, &out.join("new.csv"), &[]).ok();
    assert_eq!(fs::read_to_string(out.join("new.csv")).unwrap(), csv);
    assert_eq!(
        names_sorted(&out),
        ["link.csv", "new.csv", "rows.csv", "target.csv"],
        "no temporary file"
    );
    fs::remove_dir_all(db.parent().unwrap()).unwrap();
}

fn names_sorted(dir: &Path) -> Vec<String> {
    let mut names = names(dir);
    names.sort();
    names
}

#[test]
fn export_never_replaces_the_programs_own_files_even_with_force() {
    let (db, out, _) = export_dirs("export-own");
    let database = db.join("5x4.sqlite");
    let before = fs::read(&database).unwrap();
    // A copy of a database elsewhere, a checkpoint, a file of the database
    // directory under another name (a hard link), and a name the database
    // directory keeps for its own files.
    let copy = out.join("copy.sqlite");
    fs::copy(&database, &copy).unwrap();
    let checkpoint = out.join("saved");
    fs::write(&checkpoint, "bishops checkpoint\n{}\n").unwrap();
    fs::write(db.join("notes.txt"), "mine").unwrap();
    let hard = out.join("hard");
    fs::hard_link(db.join("notes.txt"), &hard).unwrap();
    for (path, what) in [
        (&database, "is a bishops database"),
        (&copy, "is a bishops database"),
        (&checkpoint, "is a bishops checkpoint"),
        (&db.join("notes.txt"), "is a file of the database directory"),
        (&hard, "is a file of the database directory"),
        (
            &db.join("7x6.sqlite"),
            "is the name of a file of the database directory",
        ),
        (
            &db.join(".7x6.sqlite.lock"),
            "is the name of a file of the database directory",
        ),
    ] {
        for extra in [&[][..], &["--force"]] {
            let msg = export_to(&db, path, extra).refused(2);
            assert!(msg.contains(what), "{} {extra:?}: {msg}", path.display());
        }
    }
    assert_eq!(fs::read(&database).unwrap(), before);
    run_in(&db, &["query", START_5X4]).ok();
    assert_eq!(fs::read(&copy).unwrap(), before);
    assert_eq!(fs::read_to_string(&checkpoint).unwrap(), "bishops checkpoint\n{}\n");
    assert_eq!(fs::read_to_string(&hard).unwrap(), "mine");
    assert_eq!(names_sorted(&db), ["5x4.sqlite", "notes.txt"], "no temporary file");
    assert_eq!(
        names_sorted(&out),
        ["copy.sqlite", "hard", "saved"],
        "no temporary file"
    );
    fs::remove_dir_all(db.parent().unwrap()).unwrap();
}

#[test]
fn export_with_force_replaces_an_export_it_wrote_into_the_database_directory() {
    let (db, _out, csv) = export_dirs("export-own-export");
    for (name, format) in [("x.csv", "csv"), ("x.jsonl", "jsonl"), ("x.parquet", "parquet")] {
        let path = db.join(name);
        let args = |force: bool| {
            let mut a = vec!["export", "5x4", "--format", format, "-o", path.to_str().unwrap()];
            if force {
                a.push("--force");
            }
            a
        };
        run_quickly(&db, &args(false)).ok();
        let first = fs::read(&path).unwrap();
        let msg = run_quickly(&db, &args(false)).refused(2);
        assert!(msg.contains("exists: pass --force"), "{name}: {msg}");
        run_quickly(&db, &args(true)).ok();
        assert_eq!(fs::read(&path).unwrap(), first, "{name}");
        if format == "csv" {
            assert_eq!(String::from_utf8(first).unwrap(), csv);
        }
        // Damaged out of recognition, it is no longer an export: kept.
        let mut other = b"not an export\n".to_vec();
        other.extend_from_slice(&fs::read(&path).unwrap());
        fs::write(&path, &other).unwrap();
        let msg = run_quickly(&db, &args(true)).refused(2);
        assert!(msg.contains("is a file of the database directory"), "{name}: {msg}");
        assert_eq!(fs::read(&path).unwrap(), other, "{name}");
    }
    fs::remove_dir_all(db.parent().unwrap()).unwrap();
}

#[test]
fn export_refuses_a_directory_and_a_link_to_nothing() {
    let (db, out, _) = export_dirs("export-odd");
    let msg = export_to(&db, &out, &["--force"]).refused(2);
    assert!(msg.contains("is a directory"), "{msg}");
    let dangling = out.join("dangling");
    std::os::unix::fs::symlink("nowhere", &dangling).unwrap();
    let msg = export_to(&db, &dangling, &["--force"]).refused(2);
    assert!(msg.contains("is a symbolic link to nothing"), "{msg}");
    // A name ending `/` is a directory's, whatever is there.
    let slash = PathBuf::from(format!("{}/", out.join("new.csv").display()));
    let msg = export_to(&db, &slash, &[]).refused(2);
    assert!(msg.contains("is not a file name"), "{msg}");
    assert!(!out.join("nowhere").exists());
    assert_eq!(names(&out), ["dangling"], "no temporary file");
    fs::remove_dir_all(db.parent().unwrap()).unwrap();
}

#[test]
#[ignore = "needs root to make a device node (run by .ci/run as root)"]
fn export_through_a_character_device_leaves_it_a_device_and_refuses_a_block_device() {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let (db, out, _) = export_dirs("export-device");
    let null = out.join("null");
    let c = std::ffi::CString::new(null.as_os_str().as_bytes()).unwrap();
    // SAFETY: a NUL-terminated path; 1, 3 is the null device.
    let made = unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, 3)) };
    assert_eq!(made, 0, "mknod: {}", std::io::Error::last_os_error());
    for extra in [&[][..], &["--force"]] {
        export_to(&db, &null, extra).ok();
        let meta = fs::symlink_metadata(&null).unwrap();
        assert!(meta.file_type().is_char_device(), "still a device");
        assert_eq!(meta.rdev(), libc::makedev(1, 3));
    }
    assert_eq!(names(&out), ["null"], "no temporary file");
    // A block device (a disk, here the first loop device's node) is refused:
    // a stream would overwrite what is on it.
    let disk = out.join("disk");
    let c = std::ffi::CString::new(disk.as_os_str().as_bytes()).unwrap();
    // SAFETY: a NUL-terminated path in this test's directory.
    let made = unsafe { libc::mknod(c.as_ptr(), libc::S_IFBLK | 0o600, libc::makedev(7, 0)) };
    assert_eq!(made, 0, "mknod: {}", std::io::Error::last_os_error());
    for extra in [&[][..], &["--force"]] {
        let message = export_to(&db, &disk, extra).refused(2);
        assert!(message.contains("block device"), "{message}");
        assert!(fs::symlink_metadata(&disk).unwrap().file_type().is_block_device());
    }
    assert_eq!(names(&out), ["disk", "null"], "no temporary file");
    fs::remove_dir_all(db.parent().unwrap()).unwrap();
}

#[test]
fn verify_reads_at_most_a_mebibyte_of_utf8_from_stdin() {
    let db = fresh("verify-stdin");
    solve(&db, "5x4", "rows");
    let verify = || {
        let mut cmd = bishops();
        cmd.arg("--db").arg(&db).args(["verify", START_5X4, "-"]);
        cmd
    };
    let msg = run_within(verify(), b"a3-b2\n\xff\xfe\n", 10).refused(2);
    assert!(msg.contains("not UTF-8"), "{msg}");
    let huge = "# a comment\n".repeat(100_000);
    assert!(huge.len() > 1 << 20);
    let msg = run_within(verify(), huge.as_bytes(), 10).refused(2);
    assert!(msg.contains("more than 1 MiB"), "{msg}");
    // Just under the bound is read.
    let mut fits = "#".repeat((1 << 20) - 7);
    fits.push_str("\na3-b2");
    let run = run_within(verify(), fits.as_bytes(), 10).ok();
    assert!(run.stdout.contains("a3-b2"), "{run:#?}");
    fs::remove_dir_all(&db).unwrap();
}

#[test]
fn play_explains_a_line_that_is_not_utf8_or_too_long_and_goes_on() {
    let db = fresh("play-lines");
    solve(&db, "5x4", "rows");
    let mut input = b"\xff\xfe\n".to_vec();
    input.extend("x".repeat(100_000).bytes());
    input.extend(b"\nhint\nquit\n");
    let mut cmd = bishops();
    cmd.arg("--db").arg(&db).args(["play", "5x4"]);
    let run = run_within(cmd, &input, 10).ok();
    assert!(run.stdout.contains("that line is not UTF-8 text"), "{run:#?}");
    assert!(run.stdout.contains("that line is longer than 1024 bytes"), "{run:#?}");
    assert!(run.stdout.contains("hint: a3-b2"), "the game went on: {run:#?}");
    fs::remove_dir_all(&db).unwrap();
}

#[test]
fn an_option_overrides_a_bad_environment_variable() {
    let db = fresh("env-override");
    for args in [
        &["--threads", "1", "solve", "5x4"][..],
        &["solve", "5x4", "--threads", "1"],
    ] {
        let mut cmd = bishops();
        cmd.env("BISHOPS_THREADS", "abc").arg("--db").arg(&db).args(args);
        let run = output(cmd.output().unwrap()).ok();
        assert!(run.stdout.contains("5x4:"), "{run:#?}");
    }
    let mut cmd = bishops();
    cmd.env("BISHOPS_DB", "").args(["query", START_5X4, "--db"]).arg(&db);
    output(cmd.output().unwrap()).ok();
    // Without the option the variable is used, and refused.
    let mut cmd = bishops();
    cmd.env("BISHOPS_THREADS", "abc")
        .arg("--db")
        .arg(&db)
        .args(["solve", "5x4"]);
    let msg = output(cmd.output().unwrap()).refused(2);
    assert!(msg.contains("environment variable BISHOPS_THREADS is `abc`"), "{msg}");
    fs::remove_dir_all(&db).unwrap();
}

#[test]
fn a_sample_of_nothing_is_refused() {
    let db = fresh("sample-0");
    solve(&db, "5x4", "rows");
    let msg = run_in(&db, &["check", "5x4", "--sample", "0"]).refused(2);
    assert!(msg.contains("--sample 0 checks nothing"), "{msg}");
    run_in(&db, &["check", "5x4", "--sample", "1"]).ok();
    fs::remove_dir_all(&db).unwrap();
}

// ---------------------------------------------------------------------------
// Paths that are not plain text, output that cannot be written, and
// temporary files that are someone else's
// ---------------------------------------------------------------------------

/// Asserts that `text` holds no character that a terminal acts on (a
/// newline only at the end of a line of its own), and that every line of
/// it starts `bishops: ` and is no forgery.
fn no_raw_control(text: &str) {
    assert!(
        !text.chars().any(|c| c.is_control() && c != '\n'),
        "a raw control character: {text:?}"
    );
    for line in text.lines() {
        assert!(line.starts_with("bishops: "), "{text:?}");
        assert!(!line.starts_with("bishops: forged"), "a forged line: {text:?}");
    }
}

#[test]
fn a_path_with_a_newline_or_an_escape_stays_on_its_line() {
    let dir = fresh("forged-path");
    fs::create_dir_all(&dir).unwrap();
    let db = dir.join("x\nbishops: forged line \x1b[31m red");
    // Not solved there: one line, the path quoted with its newline and
    // escape spelled out.
    let run = run_in(&db, &["stats", "5x4"]);
    assert_eq!(run.stderr.lines().count(), 1, "{run:#?}");
    no_raw_control(&run.stderr);
    let msg = run.refused(1);
    assert!(msg.contains("x\\nbishops: forged line \\u{1b}[31m red"), "{msg}");
    // Solved on demand: the notes name the path the same way, and so does
    // the answer.
    let run = run_in(&db, &["query", START_5X4]).ok();
    no_raw_control(&run.stderr);
    let stats = run_in(&db, &["stats", "5x4"]).ok();
    assert!(
        stats.stdout.lines().next().unwrap().contains("x\\nbishops: forged"),
        "{stats:#?}"
    );
    assert!(!stats.stdout.contains('\x1b'), "{stats:#?}");
    // A file where the directory belongs.
    fs::remove_dir_all(&db).unwrap();
    fs::write(&db, "a file").unwrap();
    let run = run_in(&db, &["variants"]);
    no_raw_control(&run.stderr);
    run.refused(2);
    // Bytes that are not UTF-8 are shown, and shown escaped.
    use std::os::unix::ffi::OsStrExt;
    let db = dir.join(std::ffi::OsStr::from_bytes(b"not \xff utf-8\r"));
    let run = run_in(&db, &["stats", "5x4"]);
    no_raw_control(&run.stderr);
    let msg = run.refused(1);
    assert!(msg.contains("not \\xff utf-8\\r"), "{msg}");
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn export_into_a_directory_that_is_not_there_is_bad_input_naming_the_given_path() {
    let (db, out, _) = export_dirs("export-missing-dir");
    let file = out.join("file.txt");
    fs::write(&file, "keep").unwrap();
    for path in [out.join("missing-dir").join("rows.csv"), file.join("rows.csv")] {
        for extra in [&[][..], &["--force"], &["--format", "parquet"]] {
            let msg = export_to(&db, &path, extra).refused(2);
            assert!(
                msg.contains(&format!("`{}`", path.display())),
                "{extra:?}: the given path is named: {msg}"
            );
            assert!(!msg.contains(".tmp-"), "{msg}");
        }
    }
    assert_eq!(fs::read_to_string(&file).unwrap(), "keep");
    assert_eq!(names(&out), ["file.txt"], "nothing made, no temporary file");
    // A directory that cannot be written: one of this test's own when not
    // root, else /sys, which not even root can write.
    let locked = out.join("locked");
    fs::create_dir(&locked).unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&locked, fs::Permissions::from_mode(0o555)).unwrap();
    let writable = |dir: &Path| {
        let probe = dir.join("probe");
        let written = fs::write(&probe, "").is_ok();
        let _ = fs::remove_file(&probe);
        written
    };
    let unwritable = [locked.clone(), PathBuf::from("/sys")]
        .into_iter()
        .find(|dir| dir.is_dir() && !writable(dir));
    if let Some(dir) = unwritable {
        let path = dir.join("bishops-robustness-test.csv");
        let msg = export_to(&db, &path, &[]).refused(2);
        assert!(msg.contains(&format!("`{}`", path.display())), "{msg}");
        assert!(!msg.contains(".tmp-"), "{msg}");
        assert!(!path.exists());
    }
    assert_eq!(names(&locked), Vec::<String>::new(), "no temporary file");
    fs::set_permissions(&locked, fs::Permissions::from_mode(0o755)).unwrap();
    fs::remove_dir_all(db.parent().unwrap()).unwrap();
}

/// `bishops --db DB ARGS…` run through `sh` with `redirect` applied to it
/// alone: `>&-` closes its stdout, which [`Stdio`] cannot do.
fn run_redirected(db: &Path, args: &[&str], redirect: &str) -> Run {
    let mut cmd = Command::new("sh");
    cmd.env_remove("BISHOPS_DB")
        .env_remove("BISHOPS_THREADS")
        .arg("-c")
        .arg(format!("exec \"$0\" \"$@\" {redirect}"))
        .arg(env!("CARGO_BIN_EXE_bishops"))
        .arg("--db")
        .arg(db)
        .args(args);
    output(cmd.output().unwrap())
}

/// Every command that answers on stdout, each over a database directory
/// holding a solved 5x4.
const ANSWERING: [&[&str]; 17] = [
    &["export", "5x4"],
    &["export", "5x4", "--format", "jsonl"],
    &["query", START_5X4],
    &["query", START_5X4, "--json"],
    &["line", START_5X4],
    &["line", START_5X4, "--json"],
    &["verify", START_5X4, "a3-b2"],
    &["stats", "5x4"],
    &["stats", "5x4", "--json"],
    &["variants"],
    &["variants", "--json"],
    &["check", "5x4"],
    &["solve", "5x4"],
    &["solve", "5x4", "--json"],
    // Help and version are answers too.
    &["--help"],
    &["--version"],
    &["solve", "--help"],
];

#[test]
fn an_answer_that_cannot_be_written_to_a_closed_stdout_is_an_error() {
    let db = fresh("closed-stdout");
    solve(&db, "5x4", "rows");
    for args in ANSWERING {
        let run = run_redirected(&db, args, ">&-");
        let msg = run.refused(1);
        assert!(msg.contains("stdout"), "{args:?}: {msg}");
    }
    // Only a closed stdout is refused, not one that discards what it gets.
    run_redirected(&db, &["export", "5x4"], ">/dev/null").ok();
    fs::remove_dir_all(&db).unwrap();
}

#[test]
fn an_answer_that_cannot_be_written_to_a_full_disk_is_an_error() {
    let db = fresh("full-stdout");
    solve(&db, "5x4", "rows");
    for args in ANSWERING {
        let mut cmd = bishops();
        let full = fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
        cmd.arg("--db").arg(&db).args(args).stdout(full);
        let msg = output(cmd.output().unwrap()).refused(1);
        assert!(msg.contains("stdout"), "{args:?}: {msg}");
        assert!(msg.contains("No space left on device"), "{args:?}: {msg}");
    }
    fs::remove_dir_all(&db).unwrap();
}

#[test]
fn a_reader_that_stopped_reading_is_not_an_error() {
    let db = fresh("broken-pipe");
    solve(&db, "5x4", "rows");
    for args in [&["export", "5x4"][..], &["query", START_5X4], &["--help"]] {
        // A pipe nobody reads: the first write fails with EPIPE, as after
        // `| head -1` has read its line and gone.
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let mut cmd = bishops();
        cmd.arg("--db").arg(&db).args(args).stdout(writer);
        let run = output(cmd.output().unwrap());
        assert_eq!(run.code, Some(0), "{args:?}: {run:#?}");
        assert_eq!(run.stderr, "", "{args:?}: {run:#?}");
    }
    fs::remove_dir_all(&db).unwrap();
}

/// A process id that no process has: a child's, once it has been waited for.
fn dead_pid() -> u32 {
    let mut child = Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

#[test]
fn only_temporary_files_of_dead_processes_are_swept() {
    let db = fresh("sweep-live");
    solve(&db, "5x4", "rows");
    let mut sleeper = Command::new("sleep").arg("60").spawn().unwrap();
    let (live, dead) = (sleeper.id(), dead_pid());
    // PID 1 is alive in any process namespace; so is the sleeper.
    let kept: Vec<String> = [1, live]
        .iter()
        .flat_map(|pid| {
            [
                format!(".5x4.sqlite.tmp-{pid}"),
                format!(".7x6.sqlite.tmp-{pid}"),
                format!(".5x4.a1.checkpoint.tmp-{pid}"),
            ]
        })
        .chain([".5x4.sqlite.tmp-x1".to_owned(), ".5x4.a1.checkpoint.tmp-".to_owned()])
        .collect();
    let swept = [
        format!(".5x4.sqlite.tmp-{dead}"),
        format!(".7x6.sqlite.tmp-{dead}"),
        format!(".5x4.a1.checkpoint.tmp-{dead}"),
    ];
    for name in kept.iter().chain(&swept) {
        fs::write(db.join(name), "someone's").unwrap();
    }
    run_in(&db, &["solve", "5x4", "--force"]).ok();
    sleeper.kill().unwrap();
    sleeper.wait().unwrap();
    for name in &kept {
        assert_eq!(
            fs::read_to_string(db.join(name)).ok().as_deref(),
            Some("someone's"),
            "{name} is left alone"
        );
    }
    for name in &swept {
        assert!(!db.join(name).exists(), "{name} is swept");
    }
    fs::remove_dir_all(&db).unwrap();
}
