//! A class that is the mirror image of class 0 is stored once: its database
//! holds no table of its own, and answers every position through the mirror
//! exactly as the solution in memory does.

mod common;
#[path = "common/damage.rs"]
mod damage;

use bishops::Error;
use bishops::index::colex_rank;
use bishops::solver;
use bishops::storage::{self, Database, Layout};
use common::{scratch, solved};
use rusqlite::Connection;

/// Rows of `table` that belong to class `class`.
fn rows(conn: &Connection, table: &str, class: i64) -> i64 {
    conn.query_row(
        &format!("SELECT count(*) FROM {table} WHERE class = ?1"),
        [class],
        |r| r.get(0),
    )
    .unwrap()
}

#[test]
fn a_mirrored_class_is_stored_once_and_answers_every_position() {
    for name in ["5x4-full", "9x6"] {
        let (variant, solution) = solved(name);
        assert!(solution.classes[1].is_mirrored(), "{name}: class 1 is mirrored");
        for layout in [Layout::Rows, Layout::Blocks, Layout::Residues, Layout::Frames] {
            let what = format!("{name} {layout:?}");
            let dir = scratch("mirror", &format!("{name}-{layout:?}"));
            let path = if layout == Layout::Residues {
                let plan = solver::Plan::new(&variant, solver::Method::TwoBit);
                storage::write_two_bit(&dir, &variant, &plan.solve_two_bit(&mut |_| {}).unwrap()).unwrap()
            } else {
                storage::write_with(&dir, &variant, &solution, layout).unwrap()
            };

            let conn = Connection::open(&path).unwrap();
            for table in ["positions", "row_checksums", "blocks", "frames"] {
                assert_eq!(rows(&conn, table, 1), 0, "{what}: class 1 has rows in {table}");
            }
            let own = match layout {
                Layout::Rows => rows(&conn, "positions", 0),
                Layout::Blocks | Layout::Residues => rows(&conn, "blocks", 0),
                Layout::Frames => rows(&conn, "frames", 0),
            };
            assert!(own > 0, "{what}: class 0 is stored");
            let mirrored: Vec<i64> = conn
                .prepare("SELECT mirrored FROM classes ORDER BY class")
                .unwrap()
                .query_map([], |r| r.get(0))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            assert_eq!(mirrored, [0, 1], "{what}: the mirrored column");
            // Every read of class 1 is a checked read of class 0, so it
            // carries class 0's checksum.
            let checksums: Vec<String> = conn
                .prepare("SELECT checksum FROM classes ORDER BY class")
                .unwrap()
                .query_map([], |r| r.get(0))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            assert_eq!(checksums[0], checksums[1], "{what}: the mirrored class's checksum");
            drop(conn);

            let db = Database::open(&dir, &variant).unwrap();
            db.verify().unwrap();
            for (k, class) in solution.classes.iter().enumerate() {
                assert_eq!(db.classes()[k].stats, class.stats, "{what} class {k}: stats");
                // Every legal position, in the class's own hash order.
                let mut seen = 0u64;
                db.for_each_row(k, |hash, part, cell| {
                    assert_eq!(class.dense.rank(part), hash, "{what} class {k}: hash of {part:?}");
                    assert_eq!(cell, solution.cell(k, hash), "{what} class {k} hash {hash}");
                    seen += 1;
                    Ok(())
                })
                .unwrap();
                assert_eq!(seen, class.stats.legal, "{what} class {k}: positions");
                // Every legal hash by lookup (a two-bit lookup descends to
                // the goal: every 7th), and every hash of small boards.
                let step = if layout == Layout::Residues { 7 } else { 1 };
                for i in (0..class.index.len()).step_by(step) {
                    let hash = class.index.to_hash(i);
                    assert_eq!(
                        db.cell(k, hash).unwrap(),
                        solution.cell(k, hash),
                        "{what} class {k} hash {hash}"
                    );
                }
                let stride = (class.dense.len() / 20_000).max(1);
                for hash in (0..class.dense.len()).step_by(stride as usize) {
                    assert_eq!(
                        db.cell(k, hash).unwrap(),
                        solution.cell(k, hash),
                        "{what} class {k} hash {hash}"
                    );
                }
            }
            drop(db);
            std::fs::remove_dir_all(&dir).unwrap();
        }
    }
}

#[test]
fn a_mirrored_class_with_another_checksum_is_refused() {
    let (variant, solution) = solved("5x4-full");
    for layout in [Layout::Rows, Layout::Blocks, Layout::Frames] {
        let dir = scratch("mirror", &format!("checksum-{layout:?}"));
        let path = storage::write_with(&dir, &variant, &solution, layout).unwrap();
        let conn = Connection::open(&path).unwrap();
        conn.execute("UPDATE classes SET checksum = '0123456789abcdef' WHERE class = 1", [])
            .unwrap();
        // The header checksum covers the class records; resealed, the edit
        // must still be refused, at open or by `verify`.
        damage::reseal(&conn);
        drop(conn);
        let err = Database::open(&dir, &variant).err();
        match err {
            Some(err) => assert!(matches!(err, Error::Corrupt { .. }), "{layout:?}: {err}"),
            None => {
                let err = Database::open(&dir, &variant).unwrap().verify().unwrap_err();
                assert!(err.to_string().contains("class a2"), "{layout:?}: {err}");
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
fn a_damaged_source_block_fails_a_lookup_in_the_mirrored_class() {
    let (variant, solution) = solved("5x4-full");
    let dir = scratch("mirror", "damaged");
    let path = storage::write_with(&dir, &variant, &solution, Layout::Blocks).unwrap();
    // A position of class 1 and the block of class 0 that answers for it.
    let class = &solution.classes[1];
    let hash = class.index.to_hash(class.index.len() / 2);
    let mirror = solver::mirrors(variant.classes())[1].clone().unwrap().1;
    let white = colex_rank(mirror.cells(class.dense.unrank(hash).white));
    let conn = Connection::open(&path).unwrap();
    let changed = conn
        .execute(
            "UPDATE blocks SET data = CAST(zeroblob(length(data)) AS BLOB) WHERE class = 0 AND white = ?1",
            [white as i64],
        )
        .unwrap();
    assert_eq!(changed, 1);
    drop(conn);
    let db = Database::open(&dir, &variant);
    // The damaged block may be the start's or the goal's, refused at open.
    let err = match db {
        Ok(db) => db.cell(1, hash).unwrap_err(),
        Err(e) => e,
    };
    assert!(matches!(err, Error::Corrupt { .. }), "{err}");
    assert!(err.to_string().contains("class a1"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}
