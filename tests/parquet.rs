//! `export --format parquet` read by a real reader: DuckDB (the Python
//! package `duckdb`) reads the files of 7x6 and 5x4-full, and their row
//! counts, histograms and positions agree with `stats` and `query`.
//!
//! The test needs a Python with `duckdb`: `BISHOPS_DUCKDB_PYTHON`, or the
//! virtual environment `target/duckdb-venv` that `.ci/run` makes
//! (`python3 -m venv target/duckdb-venv && target/duckdb-venv/bin/pip
//! install duckdb`). A plain `cargo test` reports it ignored; `.ci/run`
//! runs it with `cargo test --test parquet -- --ignored`, where a missing
//! reader fails.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

mod common;
use common::succeeded;

const BIN: &str = env!("CARGO_BIN_EXE_bishops");

/// The Python that has DuckDB.
fn python() -> PathBuf {
    std::env::var_os("BISHOPS_DUCKDB_PYTHON").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("target/duckdb-venv/bin/python"),
        PathBuf::from,
    )
}

fn bishops(db: &Path, args: &[&str]) -> Output {
    let out = Command::new(BIN).arg("--db").arg(db).args(args).output().unwrap();
    succeeded(out, &args.join(" "))
}

fn json(db: &Path, args: &[&str]) -> Value {
    serde_json::from_slice(&bishops(db, args).stdout).unwrap()
}

/// The rows DuckDB gives for `sql`, as JSON.
fn duckdb(sql: &str) -> Value {
    let script = format!(
        "import duckdb, json\nrows = duckdb.sql({sql:?}).fetchall()\nprint(json.dumps([list(r) for r in rows]))"
    );
    let python = python();
    assert!(
        python.exists(),
        "{} is missing: make a virtual environment with duckdb (`.ci/run` does)",
        python.display()
    );
    let out = succeeded(Command::new(&python).arg("-c").arg(script).output().unwrap(), sql);
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
#[ignore = "needs Python's duckdb: cargo test --test parquet -- --ignored"]
fn duckdb_reads_what_stats_and_query_say() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("parquet-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    // Each variant as `solve` writes it (rows), and 7x6 compressed too.
    for (variant, layout) in [("7x6", "auto"), ("5x4-full", "auto"), ("7x6", "frames")] {
        let db = dir.join(format!("db-{layout}"));
        bishops(&db, &["solve", variant, "--layout", layout]);
        let file = dir.join(format!("{variant}-{layout}.parquet"));
        let path = file.to_str().unwrap();
        bishops(
            &db,
            &["export", variant, "--format", "parquet", "--with-position", "-o", path],
        );
        let stats = json(&db, &["stats", variant, "--json"]);
        for class in stats["classes"].as_array().unwrap() {
            let k = class["class_name"].as_str().unwrap();
            // Every position of the class, once.
            let count = duckdb(&format!(
                "select count(*), count(distinct hash) from '{path}' where class = '{k}'"
            ));
            assert_eq!(count[0][0], class["legal"], "{variant} class {k}");
            assert_eq!(count[0][1], class["legal"], "{variant} class {k}");
            // The histogram, remoteness by remoteness; no unreachable ones.
            let histogram = duckdb(&format!(
                "select count(*) from '{path}' where class = '{k}' group by remoteness order by remoteness"
            ));
            let counts: Vec<&Value> = histogram.as_array().unwrap().iter().map(|r| &r[0]).collect();
            let expected: Vec<&Value> = class["histogram"].as_array().unwrap().iter().collect();
            assert_eq!(counts, expected, "{variant} class {k}");
        }
        // A few positions, by their squares, against query.
        let rows = duckdb(&format!(
            "select position, remoteness, white, black from '{path}' \
             where list_contains(white, 'a1') order by hash desc limit 5"
        ));
        assert_eq!(rows.as_array().unwrap().len(), 5, "{variant}");
        for row in rows.as_array().unwrap() {
            let position = row[0].as_str().unwrap();
            let probe = json(&db, &["query", position, "--json"]);
            assert_eq!(row[1], probe["remoteness"], "{variant} {position}");
            let white = row[2].as_array().unwrap();
            assert!(white.iter().any(|s| s == "a1"), "{row}");
            let squares: Vec<&str> = white
                .iter()
                .chain(row[3].as_array().unwrap())
                .map(|s| s.as_str().unwrap())
                .collect();
            for square in squares {
                assert!(position.contains(square), "{square} in {position}");
            }
        }
    }
}
