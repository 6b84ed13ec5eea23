//! End-to-end tests of the `bishops` binary: every test runs the built
//! executable with `--db` pointing at a fresh directory of its own, with
//! `BISHOPS_DB` removed from the environment, and checks exit statuses,
//! stdout, stderr and the files left in the directory.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use bishops::{Class, Move, Position, Variant};
use serde_json::Value;

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

/// The binary, with `BISHOPS_DB` removed so the caller's environment never leaks in.
fn bishops() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_bishops"));
    cmd.env_remove("BISHOPS_DB");
    cmd
}

/// A fresh, unique path under the cargo target's temporary directory:
/// `<test name>-<process id>`. It does not exist when returned.
fn fresh_path(name: &str) -> PathBuf {
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("cli-{name}-{}", std::process::id()));
    if path.exists() {
        fs::remove_dir_all(&path).unwrap();
    }
    path
}

/// What one run of the binary did.
#[derive(Debug)]
struct Run {
    args: String,
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Run {
    fn from_output(args: String, output: Output) -> Run {
        Run {
            args,
            code: output.status.code(),
            stdout: String::from_utf8(output.stdout).expect("stdout is UTF-8"),
            stderr: String::from_utf8(output.stderr).expect("stderr is UTF-8"),
        }
    }

    /// Asserts exit status 0 and no panic.
    fn ok(self) -> Run {
        assert_eq!(self.code, Some(0), "`bishops {}` failed: {self:#?}", self.args);
        self.no_panic()
    }

    fn no_panic(self) -> Run {
        assert!(
            !self.stderr.contains("panicked"),
            "`bishops {}` panicked: {self:#?}",
            self.args
        );
        self
    }

    /// Asserts a clean failure: the exit status, exactly one line on stderr,
    /// nothing on stdout, no panic. Returns the message.
    fn fails(self, code: i32) -> String {
        assert_eq!(
            self.code,
            Some(code),
            "`bishops {}`: wrong exit status: {self:#?}",
            self.args
        );
        assert!(
            !self.stderr.contains("panicked"),
            "`bishops {}` panicked: {self:#?}",
            self.args
        );
        assert!(
            self.stdout.is_empty(),
            "`bishops {}` failed but wrote to stdout: {self:#?}",
            self.args
        );
        assert_eq!(
            self.stderr.lines().count(),
            1,
            "`bishops {}`: the message should be one line: {self:#?}",
            self.args
        );
        assert!(self.stderr.ends_with('\n'), "{self:#?}");
        self.stderr.trim_end().to_owned()
    }

    /// The whole of stdout as exactly one JSON document.
    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "`bishops {}`: stdout is not one JSON document ({e}): {self:#?}",
                self.args
            )
        })
    }
}

/// Runs `cmd` with `args` appended.
fn run_cmd(mut cmd: Command, args: &[&str]) -> Run {
    cmd.args(args);
    let output = cmd.output().expect("the binary runs");
    Run::from_output(args.join(" "), output)
}

/// A database directory of one test: fresh, unique, and removed when the
/// test passes (kept for inspection when it fails).
struct Db {
    dir: PathBuf,
}

impl Db {
    /// A fresh directory path, not yet created: the binary must create it.
    fn new(name: &str) -> Db {
        Db { dir: fresh_path(name) }
    }

    /// Runs `bishops --db DIR ARGS…`.
    fn run(&self, args: &[&str]) -> Run {
        let mut cmd = bishops();
        cmd.arg("--db").arg(&self.dir);
        let mut run = run_cmd(cmd, args);
        run.args = format!("--db {} {}", self.dir.display(), run.args);
        run
    }

    /// Runs `bishops --db DIR ARGS…` and asserts it succeeded.
    fn ok(&self, args: &[&str]) -> Run {
        self.run(args).ok()
    }

    /// Runs `bishops --db DIR ARGS… --json`, asserts success, returns the document.
    fn json(&self, args: &[&str]) -> Value {
        let mut args = args.to_vec();
        args.push("--json");
        self.ok(&args).json()
    }

    fn file(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// The names of the files in the directory, sorted; empty when it does not exist.
    fn files(&self) -> Vec<String> {
        let Ok(entries) = fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut names: Vec<String> = entries.map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        names.sort();
        names
    }

    /// Asserts that the directory holds exactly `names`: no temporary files.
    fn assert_files(&self, names: &[&str]) {
        let mut want: Vec<String> = names.iter().map(|s| s.to_string()).collect();
        want.sort();
        assert_eq!(self.files(), want, "files in {}", self.dir.display());
    }

    /// Puts a copy of a solved 7x6 database in the directory.
    fn install_7x6(&self) {
        fs::create_dir_all(&self.dir).unwrap();
        fs::write(self.file("7x6.sqlite"), solved_7x6()).unwrap();
    }

    fn sqlite(&self, variant: &str) -> rusqlite::Connection {
        rusqlite::Connection::open(self.file(&format!("{variant}.sqlite"))).unwrap()
    }
}

impl Drop for Db {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = fs::remove_dir_all(&self.dir);
        }
    }
}

/// The bytes of a 7x6 database, solved once by the binary for the tests that
/// only read one (solving 7x6 is the slow part of this file).
fn solved_7x6() -> &'static [u8] {
    static BYTES: OnceLock<Vec<u8>> = OnceLock::new();
    BYTES.get_or_init(|| {
        let db = Db::new("fixture_7x6");
        db.ok(&["solve", "7x6"]);
        fs::read(db.file("7x6.sqlite")).unwrap()
    })
}

/// The value of a `name   value` line of `query`'s text output.
fn text_field<'a>(text: &'a str, name: &str) -> &'a str {
    text.lines()
        .find_map(|line| {
            let mut words = line.split_whitespace();
            (words.next() == Some(name)).then(|| words.next().unwrap_or(""))
        })
        .unwrap_or_else(|| panic!("no `{name}` line in:\n{text}"))
}

fn int(v: &Value) -> i64 {
    v.as_i64().unwrap_or_else(|| panic!("not an integer: {v}"))
}

fn string(v: &Value) -> &str {
    v.as_str().unwrap_or_else(|| panic!("not a string: {v}"))
}

fn array(v: &Value) -> &Vec<Value> {
    v.as_array().unwrap_or_else(|| panic!("not an array: {v}"))
}

fn parse(position: &str) -> Position {
    position
        .parse()
        .unwrap_or_else(|e| panic!("`{position}` does not parse: {e}"))
}

/// Checks one `query --json` document against its position, its expected
/// status and remoteness, and the library's own move generator.
fn check_query(doc: &Value, position: &str, variant: &str, status: &str, remoteness: i64) {
    let pos = parse(position);
    assert_eq!(doc["position"], pos.to_string(), "{doc:#}");
    assert_eq!(doc["variant"], variant, "{doc:#}");
    assert_eq!(doc["status"], status, "{doc:#}");
    assert_eq!(int(&doc["remoteness"]), remoteness, "{doc:#}");
    let v = Variant::named(variant).unwrap();
    let size: u128 = v.hash_sizes().iter().product();
    let hash = u128::from(doc["hash"].as_u64().expect("hash is a number"));
    assert!(hash < size, "hash {hash} out of range {size}");
    assert_eq!(hash, v.hash(&pos), "the public hash");

    let moves = array(&doc["moves"]);
    let expected: Vec<(String, String)> = pos
        .moves()
        .iter()
        .map(|(m, p)| (m.to_string(), p.to_string()))
        .collect();
    let got: Vec<(String, String)> = moves
        .iter()
        .map(|m| (string(&m["move"]).to_owned(), string(&m["position"]).to_owned()))
        .collect();
    assert_eq!(got, expected, "the legal moves of {position}");
    for m in moves {
        for key in ["move", "position", "remoteness", "delta", "value"] {
            assert!(m.get(key).is_some(), "move without `{key}`: {m}");
        }
        let after = int(&m["remoteness"]);
        let delta = int(&m["delta"]);
        assert_eq!(delta, after - remoteness, "{m}");
        assert!(delta.abs() <= 1, "one move changes remoteness by at most 1: {m}");
        let value = match delta {
            d if d < 0 => "better",
            0 => "same",
            _ => "worse",
        };
        assert_eq!(m["value"], value, "{m}");
    }
    if remoteness > 0 {
        assert!(
            moves.iter().any(|m| int(&m["remoteness"]) == remoteness - 1),
            "a solvable position has a better move: {doc:#}"
        );
    } else {
        assert!(
            moves.iter().all(|m| m["value"] == "worse" && int(&m["delta"]) == 1),
            "{doc:#}"
        );
    }
}

// ---------------------------------------------------------------------------
// query
// ---------------------------------------------------------------------------

#[test]
fn query_start_of_5x4_solves_first_then_answers() {
    let db = Db::new("query_start");
    let first = db.ok(&["query", "5_4_a1-a3_e1-e3"]);
    assert_eq!(text_field(&first.stdout, "remoteness"), "18", "{first:#?}");
    assert_eq!(text_field(&first.stdout, "status"), "solvable", "{first:#?}");
    assert_eq!(text_field(&first.stdout, "variant"), "5x4", "{first:#?}");
    assert!(
        first.stderr.contains("solving") && first.stderr.contains("5x4"),
        "the first query says it solves 5x4: {first:#?}"
    );
    db.assert_files(&["5x4.sqlite"]);
    // The text lists the four legal moves with their remoteness and value.
    for (mv, r, value) in [
        ("a1-b2", "18", "same"),
        ("a3-b2", "17", "better"),
        ("e1-d2", "18", "same"),
        ("e3-d2", "17", "better"),
    ] {
        assert!(
            first.stdout.lines().any(|l| {
                let w: Vec<&str> = l.split_whitespace().collect();
                w.len() == 4 && w[0] == mv && w[2] == r && w[3] == value
            }),
            "no line for {mv}: {first:#?}"
        );
    }

    let second = db.ok(&["query", "5_4_a1-a3_e1-e3"]);
    assert!(!second.stderr.contains("solving"), "solved only once: {second:#?}");
    assert!(second.stderr.is_empty(), "{second:#?}");
    assert_eq!(second.stdout, first.stdout);

    let doc = db.json(&["query", "5_4_a1-a3_e1-e3"]);
    check_query(&doc, "5_4_a1-a3_e1-e3", "5x4", "solvable", 18);
    assert_eq!(array(&doc["moves"]).len(), 4);
    // Each move's remoteness is what querying the position after it says.
    for m in array(&doc["moves"]) {
        let after = db.json(&["query", string(&m["position"])]);
        assert_eq!(after["remoteness"], m["remoteness"], "{m}");
    }
    db.assert_files(&["5x4.sqlite"]);
}

#[test]
fn query_goal_and_a_neighbour() {
    let db = Db::new("query_goal");
    // --json on a fresh database: the solve note goes to stderr, stdout stays one document.
    let goal = db.ok(&["query", "5_4_e1-e3_a1-a3", "--json"]);
    assert!(goal.stderr.contains("solving"), "{goal:#?}");
    check_query(&goal.json(), "5_4_e1-e3_a1-a3", "5x4", "solved", 0);

    let text = db.ok(&["query", "5_4_e1-e3_a1-a3"]);
    assert_eq!(text_field(&text.stdout, "status"), "solved");
    assert_eq!(text_field(&text.stdout, "remoteness"), "0");

    check_query(
        &db.json(&["query", "5_4_a1-b2_e1-e3"]),
        "5_4_a1-b2_e1-e3",
        "5x4",
        "solvable",
        17,
    );
    // Squares in any order on input, sorted on output.
    let unsorted = db.json(&["query", "5_4_b2-a1_e3-e1"]);
    assert_eq!(unsorted["position"], "5_4_a1-b2_e1-e3");
    assert_eq!(int(&unsorted["remoteness"]), 17);

    // The start of 5x4-full: 36, and its class parts add up.
    let full = db.json(&["query", "5_4_a1-a2-a3-a4_e1-e2-e3-e4"]);
    check_query(&full, "5_4_a1-a2-a3-a4_e1-e2-e3-e4", "5x4-full", "solvable", 36);
    db.assert_files(&["5x4-full.sqlite", "5x4.sqlite"]);
}

#[test]
fn db_option_before_or_after_the_subcommand_and_from_the_environment() {
    let before = Db::new("db_before");
    let r = before.ok(&["query", "5_4_a1-a3_e1-e3", "--json"]);
    assert_eq!(int(&r.json()["remoteness"]), 18);
    before.assert_files(&["5x4.sqlite"]);

    let after = Db::new("db_after");
    let mut c = bishops();
    c.args(["query", "5_4_a1-a3_e1-e3", "--json", "--db"]).arg(&after.dir);
    let r = Run::from_output("query … --db DIR".into(), c.output().unwrap()).ok();
    assert_eq!(int(&r.json()["remoteness"]), 18);
    after.assert_files(&["5x4.sqlite"]);

    // BISHOPS_DB alone, from a working directory where the default `db/` would show.
    let env = Db::new("db_env");
    let cwd = Db::new("db_env_cwd");
    fs::create_dir_all(&cwd.dir).unwrap();
    let mut c = bishops();
    c.env("BISHOPS_DB", &env.dir).current_dir(&cwd.dir);
    c.args(["query", "5_4_a1-a3_e1-e3", "--json"]);
    let r = Run::from_output("BISHOPS_DB=DIR query …".into(), c.output().unwrap()).ok();
    assert_eq!(int(&r.json()["remoteness"]), 18);
    env.assert_files(&["5x4.sqlite"]);
    cwd.assert_files(&[]);

    // --db wins over BISHOPS_DB.
    let flag = Db::new("db_env_flag");
    let mut c = bishops();
    c.env("BISHOPS_DB", &env.dir).current_dir(&cwd.dir);
    c.args(["query", "5_4_a1-a2-a3-a4_e1-e2-e3-e4", "--db"]).arg(&flag.dir);
    Run::from_output("BISHOPS_DB=A query … --db B".into(), c.output().unwrap()).ok();
    flag.assert_files(&["5x4-full.sqlite"]);
    env.assert_files(&["5x4.sqlite"]);
    cwd.assert_files(&[]);

    // With neither, the default is `db/` in the working directory.
    let mut c = bishops();
    c.current_dir(&cwd.dir).args(["query", "5_4_a1-a3_e1-e3"]);
    Run::from_output("query … (default db)".into(), c.output().unwrap()).ok();
    assert!(cwd.file("db").join("5x4.sqlite").is_file());
}

// ---------------------------------------------------------------------------
// line
// ---------------------------------------------------------------------------

/// Replays a `line --json` document from its start with the library and
/// checks every move is legal, the positions match, and it ends at the goal.
fn check_line(doc: &Value, start: &str, goal: &str, length: usize) {
    assert_eq!(doc["position"], start, "{doc:#}");
    assert_eq!(int(&doc["remoteness"]), length as i64, "{doc:#}");
    let moves = array(&doc["moves"]);
    let positions = array(&doc["positions"]);
    assert_eq!(moves.len(), length, "{doc:#}");
    assert_eq!(positions.len(), length, "{doc:#}");
    let mut here = parse(start);
    for (i, (mv, pos)) in moves.iter().zip(positions).enumerate() {
        let text = string(mv);
        let b = text.as_bytes();
        assert!(
            b.len() == 5 && b[2] == b'-' && b[0].is_ascii_lowercase() && b[3].is_ascii_lowercase(),
            "move {i} is not written like `a1-b2`: {text}"
        );
        let parsed: Move = text.parse().unwrap();
        here = here
            .play(parsed)
            .unwrap_or_else(|| panic!("move {} `{text}` is not legal in {here}", i + 1));
        assert_eq!(string(pos), here.to_string(), "position after move {}", i + 1);
    }
    assert_eq!(here.to_string(), goal);
}

#[test]
fn line_from_the_start_of_5x4_full_reaches_the_goal_in_36() {
    let db = Db::new("line_full");
    let start = "5_4_a1-a2-a3-a4_e1-e2-e3-e4";
    let goal = "5_4_e1-e2-e3-e4_a1-a2-a3-a4";
    let doc = db.json(&["line", start]);
    assert_eq!(doc["variant"], "5x4-full");
    assert_eq!(doc["status"], "solvable");
    check_line(&doc, start, goal, 36);

    let text = db.ok(&["line", start]).stdout;
    let numbered: Vec<&str> = text
        .lines()
        .filter(|l| {
            l.trim_start()
                .split_once(". ")
                .is_some_and(|(n, _)| n.parse::<u32>().is_ok())
        })
        .collect();
    assert_eq!(numbered.len(), 36, "{text}");
    for (i, (line, mv)) in numbered.iter().zip(array(&doc["moves"])).enumerate() {
        let words: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(words[0], format!("{}.", i + 1), "{line}");
        assert_eq!(words[1], string(mv), "{line}");
    }
    assert!(numbered[35].contains(goal), "{text}");

    // The 5x4 start: 18 moves; the goal: no moves.
    check_line(
        &db.json(&["line", "5_4_a1-a3_e1-e3"]),
        "5_4_a1-a3_e1-e3",
        "5_4_e1-e3_a1-a3",
        18,
    );
    let at_goal = db.json(&["line", "5_4_e1-e3_a1-a3"]);
    assert_eq!(at_goal["status"], "solved");
    check_line(&at_goal, "5_4_e1-e3_a1-a3", "5_4_e1-e3_a1-a3", 0);
}

// ---------------------------------------------------------------------------
// solve and variants
// ---------------------------------------------------------------------------

/// The named variants small enough to solve in a test; `9x6`, `9x8`,
/// `11x8`, `11x10`, `12x10` and `17x8` are listed after them and solved only by
/// `bishops bench` or by hand.
const ALL: [&str; 4] = ["5x4", "7x4", "7x6", "5x4-full"];
const LARGE: [&str; 6] = ["9x6", "9x8", "11x8", "11x10", "12x10", "17x8"];
const FILES: [&str; 4] = ["5x4-full.sqlite", "5x4.sqlite", "7x4.sqlite", "7x6.sqlite"];

fn solved_flags(db: &Db) -> Vec<(String, bool)> {
    let doc = db.json(&["variants"]);
    let names: Vec<String> = array(&doc["variants"])
        .iter()
        .map(|v| string(&v["name"]).to_owned())
        .collect();
    assert_eq!(names[ALL.len()..], LARGE, "the large variants follow the small ones");
    array(&doc["variants"])
        .iter()
        .take(ALL.len())
        .map(|v| (string(&v["name"]).to_owned(), v["solved"].as_bool().unwrap()))
        .collect()
}

#[test]
fn solve_writes_every_database_once() {
    let db = Db::new("solve");
    let flags = solved_flags(&db);
    assert_eq!(flags, ALL.map(|n| (n.to_owned(), false)));

    let out = db.ok(&["solve", "5x4", "7x4", "7x6", "5x4-full"]).stdout;
    assert_eq!(out.lines().count(), 4, "{out}");
    for (line, (name, start, max)) in
        out.lines()
            .zip([("5x4", 18, 19), ("7x4", 12, 12), ("7x6", 16, 16), ("5x4-full", 36, 38)])
    {
        assert!(line.starts_with(&format!("{name}: solved")), "{line}");
        assert!(line.contains(&format!("start remoteness {start}")), "{line}");
        assert!(line.contains(&format!("largest {max}")), "{line}");
        assert!(line.contains(&format!("{name}.sqlite")), "{line}");
    }
    db.assert_files(&FILES);
    assert_eq!(solved_flags(&db), ALL.map(|n| (n.to_owned(), true)));

    // Again: nothing to do.
    let again = db.ok(&["solve", "5x4", "7x4", "7x6", "5x4-full"]).stdout;
    assert_eq!(again.lines().count(), 4, "{again}");
    assert!(again.lines().all(|l| l.contains("already solved")), "{again}");
    let doc = db.json(&["solve", "5x4", "7x4", "7x6", "5x4-full"]);
    let reports = array(&doc["variants"]);
    assert_eq!(reports.len(), 4);
    for (r, (name, legal, start)) in reports.iter().zip([
        ("5x4", 100, 18),
        ("7x4", 972, 12),
        ("7x6", 26566, 16),
        ("5x4-full", 10000, 36),
    ]) {
        assert_eq!(r["variant"], name, "{r}");
        assert_eq!(r["solved"], false, "already solved: {r}");
        assert_eq!(r["legal_positions"], legal, "{r}");
        assert_eq!(r["start_remoteness"], start, "{r}");
    }
    db.assert_files(&FILES);

    // Solving again solves what is missing and leaves the rest.
    fs::remove_file(db.file("5x4.sqlite")).unwrap();
    fs::remove_file(db.file("7x4.sqlite")).unwrap();
    let out = db.ok(&["solve", "5x4", "7x4", "7x6", "5x4-full"]).stdout;
    let solved: Vec<&str> = out
        .lines()
        .filter(|l| l.contains(": solved"))
        .map(|l| l.split(':').next().unwrap())
        .collect();
    assert_eq!(solved, ["5x4", "7x4"], "{out}");
    db.assert_files(&FILES);

    // --force solves again.
    let forced = db.json(&["solve", "5x4", "--force"]);
    assert_eq!(forced["variants"][0]["solved"], true, "{forced:#}");
    db.assert_files(&FILES);

    // A fresh solve with --json reports the time it took.
    let other = Db::new("solve_json");
    let doc = other.json(&["solve", "5x4"]);
    assert_eq!(doc["variants"][0]["variant"], "5x4");
    assert_eq!(doc["variants"][0]["solved"], true);
    assert!(doc["variants"][0]["seconds"].is_f64(), "{doc:#}");
    other.assert_files(&["5x4.sqlite"]);
}

#[test]
fn solve_refuses_bad_requests() {
    let db = Db::new("solve_usage");
    let msg = db.run(&["solve"]).fails(2);
    assert!(msg.contains("--all"), "{msg}");
    let msg = db.run(&["solve", "nope"]).fails(2);
    assert!(msg.contains("nope"), "{msg}");
    let msg = db.run(&["solve", "5x4", "no-such-variant"]).fails(2);
    assert!(msg.contains("no-such-variant"), "{msg}");
    let msg = db.run(&["solve", "--all", "5x4"]).fails(2);
    assert!(msg.contains("--all"), "{msg}");
    assert!(!db.dir.exists(), "nothing written");
}

/// The `solved` column of a `bishops variants` line: the one before the start.
fn solved_column(line: &str) -> &str {
    let words: Vec<&str> = line.split_whitespace().collect();
    words[words.len() - 2]
}

#[test]
fn variants_lists_sizes_and_what_is_solved() {
    let db = Db::new("variants");
    let doc = db.json(&["variants"]);
    let list = array(&doc["variants"]);
    let expected: [(&str, &str, &[u64]); 4] = [
        ("5x4", "5_4_a1-a3_e1-e3", &[1260]),
        ("7x4", "7_4_a1-a3_g1-g3", &[6006]),
        ("7x6", "7_6_a1-a3-a5_g1-g3-g5", &[1_085_280]),
        ("5x4-full", "5_4_a1-a2-a3-a4_e1-e2-e3-e4", &[1260, 1260]),
    ];
    assert_eq!(list.len(), ALL.len() + LARGE.len(), "{doc:#}");
    for (v, (name, start, sizes)) in list.iter().zip(expected) {
        assert_eq!(v["name"], name, "{v}");
        assert_eq!(v["start"], start, "{v}");
        assert_eq!(v["goal"], parse(start).swapped().to_string(), "{v}");
        let got: Vec<u64> = array(&v["classes"])
            .iter()
            .map(|c| c["hash_size"].as_u64().unwrap())
            .collect();
        assert_eq!(got, sizes, "{v}");
        assert_eq!(v["solved"], false, "{v}");
    }
    let text = db.ok(&["variants"]).stdout;
    for (name, sizes) in [
        ("5x4", "1260"),
        ("7x4", "6006"),
        ("7x6", "1085280"),
        ("5x4-full", "1260 x 1260"),
    ] {
        let line = text
            .lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("no {name} in:\n{text}"));
        assert!(line.contains(sizes), "{line}");
        assert_eq!(solved_column(line), "no", "{line}");
    }
    assert!(!db.dir.exists(), "listing writes nothing");

    db.ok(&["solve", "5x4"]);
    assert_eq!(
        solved_flags(&db),
        [("5x4", true), ("7x4", false), ("7x6", false), ("5x4-full", false)].map(|(n, s)| (n.to_owned(), s))
    );
    let doc = db.json(&["variants"]);
    assert_eq!(doc["variants"][0]["legal_positions"], 100);
    assert_eq!(doc["variants"][0]["start_remoteness"], 18);
    assert!(doc["variants"][1]["legal_positions"].is_null(), "{doc:#}");
    let text = db.ok(&["variants"]).stdout;
    let line = text.lines().find(|l| l.starts_with("5x4 ")).unwrap();
    assert_eq!(solved_column(line), "yes", "{line}");
}

/// Every named board but 12x10 has an odd number of rows and an even
/// number of columns: each class's puzzle has the top-bottom mirror with
/// the colours exchanged, and no other symmetry. 12x10 has even rows and
/// columns: the half turn with the colours exchanged, and no other.
#[test]
fn variants_json_names_the_symmetries_of_each_class() {
    let db = Db::new("variants-symmetries");
    let doc = db.json(&["variants"]);
    for v in array(&doc["variants"]) {
        let expected = match string(&v["name"]) {
            "12x10" => "half turn, colours exchanged",
            _ => "top-bottom, colours exchanged",
        };
        for class in array(&v["classes"]) {
            assert_eq!(class["symmetries"], serde_json::json!([expected]), "{v}");
        }
    }
}

// ---------------------------------------------------------------------------
// stats
// ---------------------------------------------------------------------------

fn check_class(class: &Value, legal: u64, max: u64) {
    assert_eq!(class["legal"], legal, "{class}");
    assert_eq!(class["reachable"], legal, "{class}");
    assert_eq!(class["unreachable"], 0, "{class}");
    assert_eq!(class["max_remoteness"], max, "{class}");
    let histogram: Vec<u64> = array(&class["histogram"]).iter().map(|n| n.as_u64().unwrap()).collect();
    assert_eq!(histogram.iter().sum::<u64>(), legal, "{class}");
    assert_eq!(histogram[0], 1, "one goal: {class}");
    assert_eq!(histogram.len() as u64, max + 1, "{class}");
    assert!(
        histogram.iter().all(|&n| n > 0),
        "every remoteness up to the largest occurs: {class}"
    );
    assert!(!array(&class["hardest"]).is_empty(), "{class}");
}

#[test]
fn stats_of_7x6_and_5x4_full() {
    let db = Db::new("stats");
    db.install_7x6();
    let out = db.ok(&["solve", "7x6", "5x4-full"]).stdout;
    assert!(
        out.contains("7x6: already solved") && out.contains("5x4-full: solved"),
        "{out}"
    );
    let doc = db.json(&["stats", "7x6"]);
    assert_eq!(doc["variant"], "7x6");
    assert_eq!(doc["start_remoteness"], 16);
    assert_eq!(doc["max_remoteness"], 16);
    assert_eq!(doc["legal_positions"], 26566);
    let classes = array(&doc["classes"]);
    assert_eq!(classes.len(), 1, "{doc:#}");
    check_class(&classes[0], 26566, 16);
    assert_eq!(classes[0]["hash_size"], 1_085_280);
    // The hardest positions are 16 away: ask query.
    let hardest = string(&classes[0]["hardest"][0]["position"]);
    let q = db.json(&["query", hardest]);
    assert_eq!(int(&q["remoteness"]), 16, "{q:#}");
    assert_eq!(q["hash"], classes[0]["hardest"][0]["hash"], "{q:#}");

    let text = db.ok(&["stats", "7x6"]).stdout;
    assert!(text.contains("26566 legal"), "{text}");

    let doc = db.json(&["stats", "5x4-full"]);
    assert_eq!(doc["start_remoteness"], 36);
    assert_eq!(doc["max_remoteness"], 38);
    assert_eq!(doc["legal_positions"], 10000);
    let classes = array(&doc["classes"]);
    assert_eq!(classes.len(), 2, "{doc:#}");
    check_class(&classes[0], 100, 19);
    check_class(&classes[1], 100, 19);
    assert_eq!(classes[0]["class"], 0);
    assert_eq!(classes[1]["class"], 1);
    assert_eq!(classes[0]["class_name"], "a1");
    assert_eq!(classes[1]["class_name"], "a2");
    db.assert_files(&["5x4-full.sqlite", "7x6.sqlite"]);
}

#[test]
fn stats_and_export_of_an_unsolved_variant_say_to_solve_it() {
    let db = Db::new("unsolved");
    for args in [
        &["stats", "5x4"][..],
        &["stats", "7x4", "--json"],
        &["export", "5x4"],
        &["export", "5x4-full", "--format", "jsonl"],
    ] {
        let msg = db.run(args).fails(1);
        assert!(msg.contains(&format!("bishops solve {}", args[1])), "{msg}");
    }
    assert!(!db.dir.exists(), "nothing written");
    // An existing but empty directory is no different.
    fs::create_dir_all(&db.dir).unwrap();
    let msg = db.run(&["stats", "5x4"]).fails(1);
    assert!(msg.contains("bishops solve 5x4"), "{msg}");
    db.assert_files(&[]);
}

// ---------------------------------------------------------------------------
// export
// ---------------------------------------------------------------------------

/// `(position, hash, remoteness, class)` rows of a CSV export.
fn csv_rows(text: &str) -> Vec<(String, u64, u64, String)> {
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("position,hash,remoteness,class"), "{text}");
    lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            assert_eq!(f.len(), 4, "{l}");
            (
                f[0].to_owned(),
                f[1].parse().unwrap(),
                f[2].parse().unwrap(),
                f[3].to_owned(),
            )
        })
        .collect()
}

/// Parquet goes to a file with the usual care: refused on stdout, written
/// atomically beside the target, a well-formed file (its magic at both
/// ends); `--with-position` only where it means something.
#[test]
fn export_parquet_goes_to_a_file() {
    let db = Db::new("export-parquet");
    db.ok(&["solve", "5x4-full"]);
    let message = db.run(&["export", "5x4-full", "--format", "parquet"]).fails(2);
    assert!(message.contains("give -o FILE"), "{message}");
    let message = db.run(&["export", "5x4-full", "--with-position"]).fails(2);
    assert!(message.contains("--with-position is for --format parquet"), "{message}");
    let out = fresh_path("export-parquet-out");
    fs::create_dir_all(&out).unwrap();
    let file = out.join("t.parquet");
    let run = db.ok(&[
        "export",
        "5x4-full",
        "--format",
        "parquet",
        "-o",
        file.to_str().unwrap(),
    ]);
    assert!(run.stdout.is_empty());
    let bytes = fs::read(&file).unwrap();
    assert!(
        bytes.starts_with(b"PAR1") && bytes.ends_with(b"PAR1"),
        "{} bytes",
        bytes.len()
    );
    let names: Vec<_> = fs::read_dir(&out).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, ["t.parquet"]);
    // An existing file is refused as for the other formats.
    let message = db
        .run(&[
            "export",
            "5x4-full",
            "--format",
            "parquet",
            "-o",
            file.to_str().unwrap(),
        ])
        .fails(2);
    assert!(message.contains("--force"), "{message}");
    fs::remove_dir_all(&out).unwrap();
}

#[test]
fn export_5x4_as_csv_and_jsonl() {
    let db = Db::new("export");
    db.ok(&["solve", "5x4", "5x4-full"]);
    let csv = db.ok(&["export", "5x4", "--format", "csv"]).stdout;
    assert_eq!(db.ok(&["export", "5x4"]).stdout, csv, "csv is the default");
    let rows = csv_rows(&csv);
    assert_eq!(rows.len(), 100);
    let hashes: BTreeSet<u64> = rows.iter().map(|r| r.1).collect();
    assert_eq!(hashes.len(), 100, "hashes are distinct");
    assert!(hashes.iter().all(|&h| h < 1260));
    let v = Variant::named("5x4").unwrap();
    let mut histogram = vec![0u64; 20];
    for (position, hash, remoteness, class) in &rows {
        let pos = parse(position);
        assert!(pos.attack().is_none(), "{position} is legal");
        assert_eq!(u128::from(*hash), v.hash(&pos), "{position}");
        assert_eq!(class, "a1");
        histogram[*remoteness as usize] += 1;
    }
    let stats = db.json(&["stats", "5x4"]);
    let expected: Vec<u64> = array(&stats["classes"][0]["histogram"])
        .iter()
        .map(|n| n.as_u64().unwrap())
        .collect();
    assert_eq!(histogram, expected);
    let start = rows.iter().find(|r| r.0 == "5_4_a1-a3_e1-e3").expect("the start");
    assert_eq!(start.2, 18);
    let goal = rows.iter().find(|r| r.0 == "5_4_e1-e3_a1-a3").expect("the goal");
    assert_eq!(goal.2, 0);

    let jsonl = db.ok(&["export", "5x4", "--format", "jsonl"]).stdout;
    let lines: Vec<&str> = jsonl.lines().collect();
    assert_eq!(lines.len(), 100);
    for (line, row) in lines.iter().zip(&rows) {
        let v: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{line}: {e}"));
        assert_eq!(v["position"], row.0.as_str(), "{line}");
        assert_eq!(v["hash"], row.1, "{line}");
        assert_eq!(v["remoteness"], row.2, "{line}");
        assert_eq!(v["class"], 0, "{line}");
        assert_eq!(v["class_name"], row.3.as_str(), "{line}");
    }

    // -o FILE: the same bytes, nothing on stdout, no temporary file left.
    let out = fresh_path("export_out");
    fs::create_dir_all(&out).unwrap();
    for (format, expected) in [("csv", &csv), ("jsonl", &jsonl)] {
        let file = out.join(format!("5x4.{format}"));
        let r = db.ok(&["export", "5x4", "--format", format, "-o", file.to_str().unwrap()]);
        assert!(r.stdout.is_empty(), "{r:#?}");
        assert_eq!(&fs::read_to_string(&file).unwrap(), expected);
    }
    let file = out.join("long.csv");
    db.ok(&["export", "5x4", "--output", file.to_str().unwrap()]);
    assert_eq!(fs::read_to_string(&file).unwrap(), csv);
    let mut left: Vec<String> = fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    left.sort();
    assert_eq!(left, ["5x4.csv", "5x4.jsonl", "long.csv"]);
    // Into a directory that does not exist: bad input, naming the path as
    // given, that creates nothing.
    let missing = out.join("missing");
    let given = missing.join("x.csv");
    let msg = db.run(&["export", "5x4", "-o", given.to_str().unwrap()]).fails(2);
    assert!(
        msg.contains(&format!("`{}` cannot be written", given.display())),
        "{msg}"
    );
    assert!(!missing.exists());
    assert_eq!(
        fs::read_dir(&out).unwrap().count(),
        3,
        "nothing left beside the exports"
    );
    fs::remove_dir_all(&out).unwrap();

    // Both classes of 5x4-full: 100 rows each.
    let full = csv_rows(&db.ok(&["export", "5x4-full"]).stdout);
    assert_eq!(full.len(), 200);
    for (class, name) in [(0, "a1"), (1, "a2")] {
        let part: Vec<_> = full.iter().filter(|r| r.3 == name).collect();
        assert_eq!(part.len(), 100, "class {class}");
        assert_eq!(part.iter().filter(|r| r.2 == 0).count(), 1, "one goal in class {class}");
        assert_eq!(part.iter().map(|r| r.2).max(), Some(19));
        for r in part {
            let pos = parse(&r.0);
            for &sq in pos.white().iter().chain(pos.black()) {
                assert_eq!(Class::of(sq).index() as u64, class, "{} in class {class}", r.0);
            }
        }
    }
    let jsonl_full = db.ok(&["export", "5x4-full", "--format", "jsonl"]).stdout;
    assert_eq!(jsonl_full.lines().count(), 200);
    db.assert_files(&["5x4-full.sqlite", "5x4.sqlite"]);
}

// ---------------------------------------------------------------------------
// Refused positions
// ---------------------------------------------------------------------------

#[test]
fn bad_positions_are_refused_in_one_line() {
    let db = Db::new("refusals");
    // (arguments after the position, what the message must name beyond the echoed input)
    let cases: &[(&str, &[&str], &[&str])] = &[
        ("5_4_a1-a3", &[], &["4"]),
        ("27_4_a1_e1", &[], &["27"]),
        ("x_4_a1_e1", &[], &["`x`"]),
        ("0_4_a1_e1", &[], &["0"]),
        ("5_4_a0-a3_e1-e3", &[], &["a0"]),
        ("5_4_a1-a9_e1-e3", &[], &["a9"]),
        ("5_4_a1-a3_e1-e3-", &[], &["square"]),
        ("5_4_a1-a1_e1-e3", &[], &["a1"]),
        ("5_4_a1-a3_a1-e3", &[], &["a1"]),
        ("5_4_a1_e1-e3", &[], &["5x4"]),
        ("5_4_a2-a4_e2-e4", &["--variant", "5x4"], &["a2", "5x4"]),
        ("5_4_a1-c3_e1-e3", &[], &["c3", "e1"]),
        ("5_4_a1-a3_b2-e3", &[], &["a1", "b2"]),
        ("5_4_a1-a3_e1-e3", &["--variant", "7x4"], &["7x4"]),
    ];
    for &(position, extra, names) in cases {
        for command in ["query", "line"] {
            for json in [false, true] {
                let mut args = vec![command, position];
                args.extend_from_slice(extra);
                if json {
                    args.push("--json");
                }
                let msg = db.run(&args).fails(2);
                assert!(msg.contains(position), "the message quotes the input: {msg}");
                let rest = msg.replace(position, "");
                for name in names {
                    assert!(
                        rest.contains(name),
                        "`{}`: the message should name {name}: {msg}",
                        args.join(" ")
                    );
                }
            }
        }
    }
    assert!(!db.dir.exists(), "a refusal writes nothing");
    // The same with an existing database directory: nothing is added to it.
    fs::create_dir_all(&db.dir).unwrap();
    for &(position, extra, _) in cases {
        let mut args = vec!["query", position];
        args.extend_from_slice(extra);
        db.run(&args).fails(2);
    }
    db.assert_files(&[]);
    // An unknown --variant is bad input too.
    let msg = db.run(&["query", "5_4_a1-a3_e1-e3", "--variant", "nope"]).fails(2);
    assert!(msg.contains("nope"), "{msg}");
    db.assert_files(&[]);
}

// ---------------------------------------------------------------------------
// Databases that must not be trusted
// ---------------------------------------------------------------------------

fn assert_untrusted(msg: &str, file: &str) {
    assert!(msg.contains("database"), "{msg}");
    assert!(msg.contains(file), "the message names the file {file}: {msg}");
}

#[test]
fn a_truncated_database_is_refused() {
    let db = Db::new("truncated");
    db.install_7x6();
    assert_eq!(int(&db.json(&["query", "7_6_a1-a3-a5_g1-g3-g5"])["remoteness"]), 16);
    let path = db.file("7x6.sqlite");
    let len = fs::metadata(&path).unwrap().len();
    fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(len / 2)
        .unwrap();
    for args in [
        &["query", "7_6_a1-a3-a5_g1-g3-g5"][..],
        &["query", "7_6_a1-a3-a5_g1-g3-g5", "--json"],
        &["line", "7_6_a1-a3-a5_g1-g3-g5"],
        &["stats", "7x6"],
        &["stats", "7x6", "--json"],
        &["export", "7x6"],
    ] {
        let msg = db.run(args).fails(1);
        assert_untrusted(&msg, "7x6.sqlite");
        assert!(msg.contains("bishops solve 7x6"), "{msg}");
    }
    assert_eq!(fs::metadata(&path).unwrap().len(), len / 2, "left alone");
    let v = db.json(&["variants"]);
    assert_eq!(v["variants"][2]["name"], "7x6");
    assert_eq!(v["variants"][2]["solved"], false);
    assert!(v["variants"][2]["problem"].is_string(), "{v:#}");

    let text = db.ok(&["variants"]).stdout;
    assert!(
        text.lines().any(|l| l.starts_with("7x6 ") && l.contains("damaged")),
        "{text}"
    );
    db.assert_files(&["7x6.sqlite"]);
}

#[test]
fn a_truncated_or_padded_database_is_rebuilt_by_solve() {
    let db = Db::new("padded");
    db.ok(&["solve", "5x4"]);
    let path = db.file("5x4.sqlite");
    let len = fs::metadata(&path).unwrap().len();
    for bad_len in [len / 2, len + 1000, 0] {
        fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(bad_len)
            .unwrap();
        let msg = db.run(&["query", "5_4_a1-a3_e1-e3"]).fails(1);
        assert_untrusted(&msg, "5x4.sqlite");
        // The advice works: solve rebuilds it.
        let out = db.ok(&["solve", "5x4"]).stdout;
        assert!(out.contains("5x4: solved"), "{out}");
        assert_eq!(fs::metadata(&path).unwrap().len(), len);
        assert_eq!(int(&db.json(&["query", "5_4_a1-a3_e1-e3"])["remoteness"]), 18);
    }
    db.assert_files(&["5x4.sqlite"]);
}

#[test]
fn a_database_of_another_version_is_refused() {
    let db = Db::new("version");
    db.ok(&["solve", "5x4"]);
    let changed = db
        .sqlite("5x4")
        .execute("UPDATE meta SET value='999' WHERE key='format_version'", [])
        .unwrap();
    assert_eq!(changed, 1);
    for args in [
        &["query", "5_4_a1-a3_e1-e3"][..],
        &["line", "5_4_a1-a3_e1-e3", "--json"],
        &["stats", "5x4"],
        &["export", "5x4"],
    ] {
        let msg = db.run(args).fails(1);
        assert_untrusted(&msg, "5x4.sqlite");
        assert!(
            msg.contains("another format version 999, this program reads versions 5 to 6"),
            "{msg}"
        );
    }
    db.ok(&["solve", "5x4"]);
    assert_eq!(int(&db.json(&["query", "5_4_a1-a3_e1-e3"])["remoteness"]), 18);
}

#[test]
fn a_file_that_is_not_a_database_is_refused() {
    let db = Db::new("garbage");
    fs::create_dir_all(&db.dir).unwrap();
    fs::write(db.file("5x4.sqlite"), "not a database").unwrap();
    for args in [
        &["query", "5_4_a1-a3_e1-e3"][..],
        &["query", "5_4_a1-a3_e1-e3", "--json"],
        &["line", "5_4_a1-a3_e1-e3"],
        &["stats", "5x4"],
        &["export", "5x4"],
    ] {
        let msg = db.run(args).fails(1);
        assert_untrusted(&msg, "5x4.sqlite");
        assert!(msg.contains("bishops solve 5x4"), "{msg}");
    }
    assert_eq!(fs::read_to_string(db.file("5x4.sqlite")).unwrap(), "not a database");
    let v = db.json(&["variants"]);
    assert_eq!(v["variants"][0]["solved"], false);
    assert!(v["variants"][0]["problem"].is_string(), "{v:#}");
    // `solve` replaces it.
    db.ok(&["solve", "5x4"]);
    assert_eq!(int(&db.json(&["query", "5_4_a1-a3_e1-e3"])["remoteness"]), 18);
    db.assert_files(&["5x4.sqlite"]);
}

const TAMPER: &str = "UPDATE positions SET remoteness = remoteness + 1 WHERE hash = (SELECT min(hash) FROM positions)";

#[test]
fn a_tampered_row_fails_the_export_checksum() {
    let db = Db::new("tampered");
    db.ok(&["solve", "5x4"]);
    assert_eq!(db.sqlite("5x4").execute(TAMPER, []).unwrap(), 1);
    for format in ["csv", "jsonl"] {
        let r = db.run(&["export", "5x4", "--format", format]).no_panic();
        assert_eq!(r.code, Some(1), "{r:#?}");
        assert_eq!(r.stderr.lines().count(), 1, "{r:#?}");
        assert!(r.stderr.contains("checksum"), "{r:#?}");
        assert_untrusted(&r.stderr, "5x4.sqlite");
    }
    let out = fresh_path("tampered_out");
    fs::create_dir_all(&out).unwrap();
    let file = out.join("5x4.csv");
    let msg = db.run(&["export", "5x4", "-o", file.to_str().unwrap()]).fails(1);
    assert!(msg.contains("checksum"), "{msg}");
    assert!(!file.exists(), "no partial export");
    assert_eq!(fs::read_dir(&out).unwrap().count(), 0, "no temporary file left");
    // An existing file that --force would replace is left as it was.
    fs::write(&file, "keep").unwrap();
    db.run(&[
        "export",
        "5x4",
        "--format",
        "jsonl",
        "-o",
        file.to_str().unwrap(),
        "--force",
    ])
    .fails(1);
    assert_eq!(fs::read_to_string(&file).unwrap(), "keep");
    assert_eq!(fs::read_dir(&out).unwrap().count(), 1, "no temporary file left");
    fs::remove_dir_all(&out).unwrap();
    db.assert_files(&["5x4.sqlite"]);
}

#[test]
fn a_tampered_export_to_stdout_prints_nothing() {
    let db = Db::new("tampered_stdout");
    db.ok(&["solve", "5x4"]);
    db.sqlite("5x4").execute(TAMPER, []).unwrap();
    let msg = db.run(&["export", "5x4"]).fails(1);
    assert!(msg.contains("checksum"), "{msg}");
}

#[test]
fn solve_rebuilds_a_database_that_fails_its_checksum() {
    let db = Db::new("tampered_solve");
    db.ok(&["solve", "5x4"]);
    db.sqlite("5x4").execute(TAMPER, []).unwrap();
    let msg = db.run(&["export", "5x4"]).no_panic().stderr;
    assert!(
        msg.contains("`bishops check 5x4` proves or refutes it, `bishops solve 5x4 --force` rebuilds it"),
        "{msg}"
    );
    let out = db.ok(&["solve", "5x4", "--force"]).stdout;
    assert!(
        out.contains("5x4: solved"),
        "the advised command rebuilds the file: {out}"
    );
    assert_eq!(csv_rows(&db.ok(&["export", "5x4"]).stdout).len(), 100);
}

// ---------------------------------------------------------------------------
// Help
// ---------------------------------------------------------------------------

#[test]
fn help_works_for_every_subcommand() {
    let db = Db::new("help");
    let top = db.ok(&["--help"]).stdout;
    for command in ["solve", "query", "line", "export", "variants", "stats"] {
        assert!(top.contains(command), "--help lists {command}: {top}");
        let r = db.ok(&[command, "--help"]);
        assert!(r.stdout.contains("Usage"), "{r:#?}");
        assert!(r.stdout.contains(command), "{r:#?}");
        assert!(r.stdout.contains("--db"), "the global option shows: {r:#?}");
        let r = db.ok(&["help", command]);
        assert!(r.stdout.contains("Usage"), "{r:#?}");
    }
    let r = db.ok(&["export", "--help"]).stdout;
    assert!(
        r.contains("csv") && r.contains("jsonl") && r.contains("--output"),
        "{r}"
    );
    // The exit statuses, and how to stop a long solve, are in the help.
    assert!(
        top.contains("Exit status: 0 on success, 2 for bad input, 3 for a solve stopped on purpose"),
        "{top}"
    );
    let r = db.ok(&["solve", "--help"]).stdout;
    assert!(r.contains("kill -USR1 PID") && r.contains("exits 3"), "{r}");
    let r = db.ok(&["--version"]).stdout;
    assert!(r.contains(env!("CARGO_PKG_VERSION")), "{r}");
    // No subcommand and an unknown one are usage errors.
    assert_eq!(db.run(&[]).code, Some(2));
    assert_eq!(db.run(&["frobnicate"]).code, Some(2));
    assert!(!db.dir.exists());
}

// ---------------------------------------------------------------------------
// storage layouts, memory limits, threads
// ---------------------------------------------------------------------------

/// The outputs a user can see of a solved 7x6 database, with the database
/// path taken out.
fn answers(db: &Db) -> Vec<String> {
    let hard = "7_6_a1-a3-a5_f2-g3-g5";
    let mut outputs = vec![
        db.ok(&["query", "7_6_a1-a3-a5_g1-g3-g5", "--json"]).stdout,
        db.ok(&["query", hard]).stdout,
        db.ok(&["line", "7_6_a1-a3-a5_g1-g3-g5", "--json"]).stdout,
        db.ok(&["export", "7x6"]).stdout,
        db.ok(&["export", "7x6", "--format", "jsonl"]).stdout,
    ];
    let mut stats = db.json(&["stats", "7x6"]);
    stats["path"] = Value::Null;
    stats["solve_seconds"] = Value::Null;
    outputs.push(stats.to_string());
    outputs
}

#[test]
fn blocks_layout_answers_exactly_as_rows() {
    let rows = Db::new("layout_rows");
    rows.ok(&["solve", "7x6", "--layout", "rows"]);
    let blocks = Db::new("layout_blocks");
    blocks.ok(&["solve", "7x6", "--layout", "blocks"]);
    let layout = |db: &Db| -> String {
        db.sqlite("7x6")
            .query_row("select value from meta where key = 'layout'", [], |r| r.get(0))
            .unwrap()
    };
    assert_eq!(layout(&rows), "rows");
    assert_eq!(layout(&blocks), "blocks");
    let stored = |db: &Db, table: &str| -> i64 {
        db.sqlite("7x6")
            .query_row(&format!("select count(*) from {table}"), [], |r| r.get(0))
            .unwrap()
    };
    assert_eq!((stored(&rows, "positions"), stored(&rows, "blocks")), (26566, 0));
    assert_eq!(stored(&blocks, "positions"), 0);
    assert!(stored(&blocks, "blocks") > 0);
    assert_eq!(answers(&rows), answers(&blocks));

    // A damaged block is caught like a damaged row.
    blocks
        .sqlite("7x6")
        .execute(
            "update blocks set data = zeroblob(length(data)) where white = (select min(white) from blocks)",
            [],
        )
        .unwrap();
    let msg = blocks.run(&["export", "7x6"]).fails(1);
    assert!(msg.contains("checksum"), "{msg}");
}

#[test]
fn a_solve_that_needs_more_memory_than_allowed_is_refused() {
    let db = Db::new("max_memory");
    let msg = db.run(&["solve", "9x6", "--max-memory", "0"]).fails(1);
    assert!(msg.contains("needs about") && msg.contains("9x6"), "{msg}");
    // The cap is what limits, and the figure is the whole solve's need (the
    // two-bit search's, which auto picks when bytes do not fit), not the
    // index tables' part of it.
    assert!(msg.contains("more than the cap of 0 KiB (--max-memory)"), "{msg}");
    assert!(msg.contains("(two-bit search)") && !msg.contains("available"), "{msg}");
    assert!(db.files().is_empty(), "nothing written: {:?}", db.files());
    let doc = db.json(&["solve", "9x6", "--max-memory", "64"]);
    assert_eq!(doc["variants"][0]["class_legal"], serde_json::json!([276674, 276674]));
}

#[test]
fn one_thread_or_two_give_the_same_tables() {
    let one = Db::new("threads_one");
    one.ok(&["--threads", "1", "solve", "7x6"]);
    let two = Db::new("threads_two");
    two.ok(&["solve", "7x6", "--threads", "2"]);
    assert_eq!(answers(&one), answers(&two));
    let msg = one.run(&["--threads", "0", "solve", "7x6"]).fails(2);
    assert!(msg.contains("--threads"), "{msg}");
}

#[test]
fn solve_json_reports_layers_that_add_up() {
    let db = Db::new("solve_layers");
    let doc = db.json(&["solve", "7x6"]);
    let report = &doc["variants"][0];
    let layers = array(&report["layers"]);
    let found: u64 = layers.iter().map(|l| l["found"].as_u64().unwrap()).sum();
    assert_eq!(found, 26566, "{report:#}");
    assert_eq!(layers.len(), 17, "layers 0 to 16");
    assert!(report["peak_memory_bytes"].as_u64().unwrap() > 0);
}

// ---------------------------------------------------------------------------
// verify and play
// ---------------------------------------------------------------------------

impl Db {
    /// Runs `bishops --db DIR ARGS…` with `input` on standard input.
    fn run_with_input(&self, args: &[&str], input: &str) -> Run {
        use std::io::Write as _;
        use std::process::Stdio;
        let mut cmd = bishops();
        cmd.arg("--db").arg(&self.dir).args(args);
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("the binary runs");
        child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
        let output = child.wait_with_output().unwrap();
        Run::from_output(args.join(" "), output)
    }
}

/// The optimal line of `position`, as `line --json` gives it.
fn line_moves(db: &Db, position: &str) -> Vec<String> {
    array(&db.json(&["line", position])["moves"])
        .iter()
        .map(|m| string(m).to_owned())
        .collect()
}

#[test]
fn verify_judges_a_line_given_as_arguments_or_on_stdin() {
    let db = Db::new("verify");
    let start = "5_4_a1-a3_e1-e3";
    let moves = line_moves(&db, start);
    assert_eq!(moves.len(), 18);
    // As arguments.
    let mut args = vec!["verify", start];
    args.extend(moves.iter().map(String::as_str));
    args.push("--json");
    let doc = db.ok(&args).json();
    assert_eq!(string(&doc["position"]), start);
    assert_eq!(int(&doc["remoteness"]), 18);
    assert_eq!(doc["reached_goal"], Value::Bool(true));
    assert_eq!(doc["optimal"], Value::Bool(true));
    assert_eq!(doc["first_mistake"], Value::Null);
    assert_eq!(int(&doc["wasted"]), 0);
    let judged = array(&doc["moves"]);
    assert_eq!(judged.len(), 18);
    for (i, m) in judged.iter().enumerate() {
        assert_eq!(string(&m["move"]), moves[i]);
        assert_eq!(int(&m["remoteness"]), 17 - i as i64);
        assert_eq!(int(&m["delta"]), -1);
        assert_eq!(string(&m["value"]), "better");
        parse(string(&m["position"]));
    }
    // On stdin, with comments, blank lines and a detour of two moves after
    // the first: a worse move and back.
    let mut script = format!("# a detour\n{} b2-a3\n\n  a3-b2 # back\n", moves[0]);
    for mv in &moves[1..] {
        script += &format!("{mv}\n");
    }
    let run = db.run_with_input(&["verify", start, "-"], &script).ok();
    assert!(run.stdout.contains("reached goal   yes"), "{}", run.stdout);
    assert!(run.stdout.contains("optimal        no"), "{}", run.stdout);
    assert!(run.stdout.contains("first mistake  2 (b2-a3)"), "{}", run.stdout);
    assert!(run.stdout.contains("wasted         2"), "{}", run.stdout);
    let row = run
        .stdout
        .lines()
        .find(|l| l.trim_start().starts_with("2  b2-a3"))
        .expect("row 2");
    assert!(row.ends_with("+1  worse"), "{row}");
    // Stopping short of the goal.
    let doc = db.ok(&["verify", start, &moves[0], "--json"]).json();
    assert_eq!(doc["reached_goal"], Value::Bool(false));
    assert_eq!(doc["wasted"], Value::Null);
}

#[test]
fn verify_refuses_an_illegal_move_by_number_and_reason() {
    let db = Db::new("verify_illegal");
    db.ok(&["solve", "5x4"]);
    let start = "5_4_a1-a3_e1-e3";
    let msg = db.run(&["verify", start, "a3-b2", "a1-c3"]).fails(2);
    assert!(msg.contains("move 2 `a1-c3`"), "{msg}");
    assert!(msg.contains("the bishop on b2 blocks the way"), "{msg}");
    let msg = db.run_with_input(&["verify", start, "-"], "a3-b2\nxyz\n").fails(2);
    assert!(msg.contains("move 2 `xyz`") && msg.contains("not a move"), "{msg}");
    let msg = db.run(&["verify", start, "a1-c3"]).fails(2);
    assert!(msg.contains("attacked by the black bishop on e1"), "{msg}");
    let msg = db.run(&["verify", start, "a3-b2", "-"]).fails(2);
    assert!(msg.contains("must be the only move"), "{msg}");
    // A bad start is refused as `query` refuses it.
    let msg = db.run(&["verify", "5_4_a1-c3_e1-e3", "a1-b2"]).fails(2);
    assert!(msg.contains("white bishop c3 is attacked by black bishop e1"), "{msg}");
}

#[test]
fn verify_works_on_both_colour_classes() {
    let db = Db::new("verify_full");
    let start = "5_4_a1-a2-a3-a4_e1-e2-e3-e4";
    let moves = line_moves(&db, start);
    assert_eq!(moves.len(), 36);
    let doc = db
        .run_with_input(&["verify", start, "-", "--json"], &moves.join("\n"))
        .ok()
        .json();
    assert_eq!(doc["optimal"], Value::Bool(true));
    assert_eq!(int(&doc["remoteness"]), 36);
}

#[test]
fn play_a_scripted_game_with_hints_undo_and_the_goal() {
    let db = Db::new("play");
    let start = "5_4_a1-a3_e1-e3";
    let moves = line_moves(&db, start);
    // A wrong move, undone; an illegal move and a typo that change nothing;
    // a hint; then the optimal line to the goal.
    let mut script = String::from("hint\na1-b2\nundo\nmoves\na1-c3\nflip\n");
    for mv in &moves {
        script += &format!("{mv}\n");
    }
    script += "quit\nthis line is never read\n";
    let run = db.run_with_input(&["play", start], &script).ok();
    let out = &run.stdout;
    assert!(out.contains("remoteness 18 (solvable), moves played 0"), "{out}");
    assert!(out.contains("hint: a3-b2 lowers the remoteness from 18 to 17"), "{out}");
    assert!(out.contains("a1-b2: remoteness 18 -> 18 (same)"), "{out}");
    assert!(out.contains("undid a1-b2"), "{out}");
    assert!(
        out.contains("a1-c3 is refused: it leaves the white bishop on c3 attacked"),
        "{out}"
    );
    assert!(out.contains("unknown command `flip`"), "{out}");
    assert!(out.contains("remoteness 0 (solved), moves played 18"), "{out}");
    assert!(out.contains("goal reached in 18 moves: optimal"), "{out}");
    assert!(!out.contains("never read"));
    // The board is drawn as `query` draws it.
    assert!(
        out.contains("e B . B .\nd . . . .\nc . . . .\nb . . . .\na W . W .\n  1 2 3 4\n"),
        "{out}"
    );

    // A detour counts against the optimum; `new` starts again; a variant
    // name starts from its start.
    let mut script = format!("{}\nb2-a3\na3-b2\n", moves[0]);
    for mv in &moves[1..] {
        script += &format!("{mv}\n");
    }
    script += "new\nline\n";
    let out = db.run_with_input(&["play", "5x4"], &script).ok().stdout;
    assert!(
        out.contains("goal reached in 20 moves; the optimum from the start is 18 (2 wasted)"),
        "{out}"
    );
    assert!(out.contains("new game from 5_4_a1-a3_e1-e3"), "{out}");
    assert!(out.contains(&format!("line (18 moves): {}", moves.join(" "))), "{out}");
}

#[test]
fn play_refuses_a_bad_start_in_one_line() {
    let db = Db::new("play_bad");
    let msg = db.run_with_input(&["play", "5_4_a1-c3_e1-e3"], "").fails(2);
    assert!(msg.contains("attacked"), "{msg}");
    let msg = db.run_with_input(&["play", "nosuch"], "").fails(2);
    assert!(msg.contains("unknown variant"), "{msg}");
}

#[test]
fn check_proves_a_table_or_samples_it() {
    let db = Db::new("check");
    db.install_7x6();
    let doc = db.json(&["check", "7x6"]);
    assert_eq!(doc["proof"], Value::Bool(true));
    assert_eq!(int(&doc["checked"]), 26566);
    let doc = db.json(&["check", "7x6", "--sample", "200", "--seed", "9"]);
    assert_eq!(doc["proof"], Value::Bool(false));
    assert_eq!((int(&doc["checked"]), int(&doc["seed"])), (200, 9));
    let text = db.ok(&["check", "7x6"]).stdout;
    assert!(text.contains("26566 of 26566 class positions checked"), "{text}");
    assert!(text.contains("  class a1: 26566 of 26566 positions"), "{text}");
    assert_eq!(doc["classes"][0]["class_name"], "a1");
    let msg = db.run(&["check", "5x4"]).fails(1);
    assert!(msg.contains("bishops solve 5x4"), "{msg}");
}

#[test]
fn variants_lists_the_standard_variants_solved_in_the_directory() {
    let db = Db::new("variants_standard");
    db.ok(&["solve", "6x4-a1"]);
    let text = db.ok(&["variants"]).stdout;
    let line = text
        .lines()
        .find(|l| l.starts_with("6x4-a1 "))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(line.contains(" yes "), "{line}");
    // Named variants first, then the standard ones; a file that is not a
    // standard variant's own spelling is not listed.
    assert!(text.find("12x10 ").unwrap() < text.find("6x4-a1 ").unwrap(), "{text}");
    let doc = db.json(&["variants"]);
    let names: Vec<&str> = array(&doc["variants"])
        .iter()
        .map(|v| v["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.iter().filter(|n| **n == "6x4-a1").count(), 1, "{names:?}");
}
