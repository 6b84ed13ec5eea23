//! The partitioned search against the dense search (a search of its own,
//! over the public hash on one core) and against itself by one worker, what
//! a one-process solve runs: the same table byte for byte and the same
//! layers, for every worker count, and a wire form that round-trips.

mod common;

use std::path::Path;

use bishops::Variant;
use bishops::pipeline::{SolveOptions, SolvePlan};
use bishops::solver::search::{self, ChannelTransport, Message, Partition};
use bishops::solver::{Method, dense};
use proptest::prelude::*;
use rusqlite::Connection;

/// Searches every class of `name` by the dense search, by `search::bytes`
/// (one worker) and by the partitioned search with each of `workers`, and
/// checks that they agree.
fn agree(name: &str, workers: &[usize]) {
    let variant = Variant::named(name).unwrap_or_else(|e| panic!("variant {name}: {e}"));
    for (k, spec) in variant.classes().iter().enumerate() {
        let index = spec.tight_index();
        let mut parallel_layers = 0;
        let expected = dense::search(name, spec, &index, &mut |_| {}).unwrap();
        let one = search::bytes(name, spec, &index, &mut |_| parallel_layers += 1).unwrap();
        assert!(
            one == expected,
            "{name} class {k}: the search by one worker differs from the dense search"
        );
        for &n in workers {
            let what = format!("{name} class {k} by {n} workers");
            let run = search::threads(name, spec, &index, n, &mut |_| {}).unwrap();
            assert_eq!(run.shares.len(), n, "{what}");
            let cells = run.assemble();
            assert_eq!(cells.len(), expected.len(), "{what}");
            if let Some(i) = cells.iter().zip(&expected).position(|(a, b)| a != b) {
                panic!("{what}: cell {i} is {}, not {}", cells[i], expected[i]);
            }
            // One count per layer the parallel search reports, the goal's too.
            assert_eq!(run.found().len(), parallel_layers, "{what}: layers");
            let crossing: u64 = run.layers.iter().map(|l| l.crossing).sum();
            let messages: u64 = run.layers.iter().map(|l| l.messages).sum();
            let bytes: u64 = run.layers.iter().map(|l| l.bytes).sum();
            let halo: u64 = run.layers.iter().map(|l| l.halo_bytes).sum();
            // Images go as messages or as a bitmap, whichever is smaller.
            assert!(bytes >= halo, "{what}");
            assert_eq!(bytes > halo, messages > 0, "{what}: bytes for images");
            // Both kinds of layer ran, and a pull with several workers
            // needed other workers' frontier bits.
            assert!(run.layers.iter().any(|l| l.pull), "{what}: no layer pulled");
            assert!(run.layers.iter().any(|l| !l.pull), "{what}: no layer pushed");
            assert_eq!(halo > 0, n > 1 && index.white_sets() > 1, "{what}: halo bytes");
            assert!(messages <= crossing, "{what}");
            // A layer's busiest worker worked at least the mean.
            assert!(run.layers.iter().all(|l| l.busiest >= l.mean_busy), "{what}");
            assert!(
                run.layers.iter().any(|l| l.mean_busy > std::time::Duration::ZERO),
                "{what}"
            );
            if n == 1 {
                assert_eq!(crossing, 0, "{what}: one worker sends nothing");
            } else if index.white_sets() > 1 {
                assert!(messages > 0, "{what}: workers exchange positions");
            }
        }
    }
}

#[test]
fn five_by_four() {
    // 45 white sets: 64 workers leave some with nothing.
    agree("5x4", &[1, 2, 3, 5, 64]);
}

#[test]
fn five_by_four_full() {
    agree("5x4-full", &[1, 2, 3, 5]);
}

#[test]
fn seven_by_four() {
    agree("7x4", &[1, 2, 3, 5, 200]);
}

#[test]
fn seven_by_six() {
    agree("7x6", &[1, 2, 3, 5, 16]);
}

#[test]
fn nine_by_six() {
    agree("9x6", &[1, 2, 3, 5]);
}

#[test]
fn no_workers_is_refused() {
    let variant = Variant::named("5x4").unwrap();
    let spec = &variant.classes()[0];
    let index = spec.tight_index();
    let e = search::threads("5x4", spec, &index, 0, &mut |_| {}).unwrap_err();
    assert_eq!(e.exit_code(), 2, "{e}");
    assert!(Partition::balanced(&index, 0).is_err());
}

/// Workers of a split two-bit search write residues as the shares come:
/// frames, which need the whole table to resolve, are refused before any
/// searching, on every worker.
#[test]
fn split_two_bit_workers_refuse_frames_before_searching() {
    let variant = Variant::named("5x4").unwrap();
    let options = SolveOptions {
        method: Some(Method::TwoBit),
        layout: Some(bishops::storage::Layout::Frames),
        ..SolveOptions::default()
    };
    let dir = common::scratch("two-bit-frames", "5x4");
    for mut transport in ChannelTransport::connected(1) {
        let e = SolvePlan::new(&variant, options)
            .unwrap()
            .run_on(&dir, &mut transport, &mut |_| {}, &mut |_| {})
            .unwrap_err();
        assert_eq!(e.exit_code(), 2, "{e}");
        assert!(e.to_string().contains("not frames"), "{e}");
    }
    assert!(!bishops::storage::path(&dir, "5x4").exists());
}

proptest! {
    #[test]
    fn messages_round_trip(indices in proptest::collection::vec(any::<u64>(), 0..50)) {
        let messages: Vec<Message> = indices.iter().map(|&index| Message { index }).collect();
        let mut stream = Vec::new();
        Message::encode_all(&messages, &mut stream);
        prop_assert_eq!(stream.len(), messages.len() * Message::BYTES);
        prop_assert_eq!(Message::decode_all(&stream).unwrap(), messages.clone());
        for m in &messages {
            prop_assert_eq!(Message::decode(m.encode()), *m);
        }
        if !stream.is_empty() {
            prop_assert!(Message::decode_all(&stream[..stream.len() - 1]).is_err());
        }
    }
}

/// Every row of `table` in the database at `path`, in order, as text.
fn rows(path: &Path, table: &str, order: &str) -> Vec<String> {
    let conn = Connection::open(path).unwrap();
    let mut statement = conn
        .prepare(&format!("SELECT * FROM {table} ORDER BY {order}"))
        .unwrap();
    let columns = statement.column_count();
    statement
        .query_map([], |row| {
            Ok((0..columns)
                .map(|k| format!("{:?}", row.get_ref(k).unwrap()))
                .collect::<Vec<_>>()
                .join(","))
        })
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// The two-bit search split between workers (threads of this process
/// here, MPI ranks in a job) writes the database one process writes: the
/// same blocks, class rows and answers, for any number of workers, on
/// boards with and without a mirrored class.
#[test]
fn two_bit_workers_write_the_database_one_process_writes() {
    // Residues in both: one process resolves them into frames by default.
    let options = SolveOptions {
        method: Some(Method::TwoBit),
        layout: Some(bishops::storage::Layout::Residues),
        ..SolveOptions::default()
    };
    for name in ["7x6", "9x6"] {
        let variant = Variant::named(name).unwrap();
        let one = common::scratch("two-bit-one", name);
        SolvePlan::new(&variant, options)
            .unwrap()
            .run(&one, &mut |_| {})
            .unwrap();
        let db = bishops::storage::path(&one, name);
        for workers in [1, 2, 3] {
            let dir = common::scratch(&format!("two-bit-{workers}"), name);
            let solved: Vec<_> = std::thread::scope(|scope| {
                let handles: Vec<_> = ChannelTransport::connected(workers)
                    .into_iter()
                    .map(|mut transport| {
                        let (variant, dir) = (&variant, &dir);
                        scope.spawn(move || {
                            SolvePlan::new(variant, options)
                                .unwrap()
                                .run_on(dir, &mut transport, &mut |_| {}, &mut |_| {})
                                .unwrap()
                        })
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap()).collect()
            });
            assert!(solved[0].is_some(), "worker 0 writes");
            assert!(solved[1..].iter().all(Option::is_none), "only worker 0 writes");
            let split = bishops::storage::path(&dir, name);
            for (table, order) in [("blocks", "class, white"), ("classes", "class")] {
                assert_eq!(
                    rows(&split, table, order),
                    rows(&db, table, order),
                    "{name} by {workers}: {table}"
                );
            }
            // The whole header but the times of the solve.
            let meta = |path: &Path| -> Vec<(String, String)> {
                let conn = Connection::open(path).unwrap();
                let mut statement = conn
                    .prepare(
                        "SELECT key, value FROM meta WHERE key NOT IN \
                         ('created_unix', 'solve_seconds', 'header_checksum') ORDER BY key",
                    )
                    .unwrap();
                statement
                    .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
                    .unwrap()
                    .map(Result::unwrap)
                    .collect()
            };
            assert_eq!(meta(&split), meta(&db), "{name} by {workers}: meta");
            std::fs::remove_dir_all(&dir).unwrap();
        }
        std::fs::remove_dir_all(&one).unwrap();
    }
}

/// Two-bit workers (threads here, MPI ranks in a job) that stop after a
/// layer leave a share each and write nothing; run again, every worker
/// resumes from its share, the database is the one of a search that did
/// not stop, and the shares are gone.
#[test]
fn stopped_two_bit_workers_resume_to_the_database_one_process_writes() {
    use bishops::Error;
    use bishops::checkpoint::CheckpointOptions;
    let name = "9x6";
    let variant = Variant::named(name).unwrap();
    let plain = SolveOptions {
        method: Some(Method::TwoBit),
        layout: Some(bishops::storage::Layout::Residues),
        ..SolveOptions::default()
    };
    let one = common::scratch("two-bit-resume-one", name);
    SolvePlan::new(&variant, plain).unwrap().run(&one, &mut |_| {}).unwrap();
    let db = bishops::storage::path(&one, name);
    let dir = common::scratch("two-bit-resume", name);
    let workers = 2;
    // Each worker's result and notes.
    let solve = |stop: Option<u16>| -> Vec<(Result<bool, Error>, Vec<String>)> {
        let options = SolveOptions {
            checkpoints: Some(CheckpointOptions {
                interval: std::time::Duration::from_secs(3600),
                stop_after: stop.map(|layer| (None, layer)),
                stop_fold_after: None,
                fold_step_words: None,
                write: bishops::storage::Resumable::DEFAULT,
                restart: false,
            }),
            ..plain
        };
        std::thread::scope(|scope| {
            let handles: Vec<_> = ChannelTransport::connected(workers)
                .into_iter()
                .map(|mut transport| {
                    let (variant, dir) = (&variant, &dir);
                    scope.spawn(move || {
                        let mut notes = Vec::new();
                        let solved = SolvePlan::new(variant, options).unwrap().run_on(
                            dir,
                            &mut transport,
                            &mut |_| {},
                            &mut |n| notes.push(n.to_owned()),
                        );
                        (solved.map(|s| s.is_some()), notes)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        })
    };
    let shares = || {
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains(".checkpoint"))
            .collect();
        names.sort();
        names
    };
    for (result, _) in solve(Some(7)) {
        assert!(matches!(result, Err(Error::Stopped(_))), "{result:?}");
    }
    assert!(!bishops::storage::path(&dir, name).exists(), "a database after a stop");
    assert_eq!(
        shares(),
        [".9x6.a1.rank-0-of-2.checkpoint", ".9x6.a1.rank-1-of-2.checkpoint"]
    );
    let resumed = solve(None);
    for (w, (result, notes)) in resumed.iter().enumerate() {
        assert_eq!(result.as_ref().ok(), Some(&(w == 0)), "{result:?}");
        let from = notes
            .iter()
            .filter(|n| n.starts_with("resuming 9x6 class a1") && n.contains("at layer 7,"));
        assert_eq!(from.count(), 1, "worker {w}: {notes:?}");
    }
    let split = bishops::storage::path(&dir, name);
    for (table, order) in [("blocks", "class, white"), ("classes", "class")] {
        assert_eq!(rows(&split, table, order), rows(&db, table, order), "{table}");
    }
    assert!(shares().is_empty(), "{:?}", shares());
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::remove_dir_all(&one).unwrap();
}
