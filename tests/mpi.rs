//! `mpirun -np N bishops solve` over the system's MPI: the tables a job of
//! N ranks writes are, exported, byte for byte those of one process; a
//! rank that dies ends the job with nothing written; a job that stopped
//! (asked by SIGUSR1, or by the test hook) resumes from every rank's
//! checkpoint with as many ranks, and no other.
//!
//! Built only with `--features mpi`; the tests need `mpirun` and are
//! ignored otherwise: `.ci/run` installs Open MPI and runs them with
//! `cargo test --features mpi --test mpi -- --ignored`.

#![cfg(feature = "mpi")]

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_bishops");

mod common;
use common::succeeded;

/// A fresh directory of this test's own under the target directory.
fn fresh(name: &str) -> common::Scratch {
    common::scratch("mpi", name)
}

/// `mpirun` running `bishops ARGS` as `ranks` ranks; as root too.
fn mpirun(ranks: usize, args: &[&str]) -> Command {
    let mut command = Command::new("mpirun");
    command
        .args(["--oversubscribe", "-np", &ranks.to_string(), BIN])
        .args(args)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    command
}

fn bishops(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().expect("bishops runs")
}

/// The export of `variant` from the databases in `db`.
fn export(db: &Path, variant: &str) -> Vec<u8> {
    succeeded(bishops(&["--db", db.to_str().unwrap(), "export", variant]), "export").stdout
}

#[test]
#[ignore = "needs mpirun: cargo test --features mpi --test mpi -- --ignored"]
fn ranks_write_the_table_one_process_writes() {
    for (variant, method) in [
        ("7x6", "tight"),
        ("9x6", "tight"),
        ("9x8", "tight"),
        ("7x6", "two-bit"),
        ("9x6", "two-bit"),
        ("9x8", "two-bit"),
    ] {
        let single = fresh(&format!("single-{variant}-{method}"));
        let path = single.to_str().unwrap();
        succeeded(bishops(&["--db", path, "solve", variant, "--method", method]), variant);
        let expected = export(&single, variant);
        assert!(expected.len() > 1000, "{variant}: an export");
        for ranks in 1..=4 {
            let dir = fresh(&format!("{variant}-{method}-{ranks}"));
            let db = dir.to_str().unwrap();
            let out = succeeded(
                mpirun(ranks, &["--db", db, "solve", variant, "--method", method])
                    .output()
                    .unwrap(),
                &format!("{variant} by {method} on {ranks} ranks"),
            );
            let stdout = String::from_utf8_lossy(&out.stdout);
            // Rank 0 alone reports.
            assert_eq!(stdout.lines().count(), 1, "{variant} on {ranks} ranks: {stdout}");
            assert!(stdout.starts_with(&format!("{variant}: solved")), "{stdout}");
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(stderr.contains(&format!("{ranks} MPI ranks search it")), "{stderr}");
            assert!(
                export(&dir, variant) == expected,
                "{variant} by {method} on {ranks} ranks: the export differs from one process's"
            );
            let _ = std::fs::remove_dir_all(&dir);
        }
        // `--json` tells what the ranks sent each other for each layer:
        // nothing with one rank, something with two.
        for ranks in [1, 2] {
            let dir = fresh(&format!("{variant}-{method}-json-{ranks}"));
            let db = dir.to_str().unwrap();
            let out = succeeded(
                mpirun(ranks, &["--db", db, "solve", variant, "--method", method, "--json"])
                    .output()
                    .unwrap(),
                "json",
            );
            let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            let layers = report["variants"][0]["layers"].as_array().unwrap();
            let sent: Vec<u64> = layers.iter().filter_map(|l| l["exchanged_bytes"].as_u64()).collect();
            assert_eq!(sent.len(), layers.len() - 1, "every layer but the goal's: {layers:?}");
            assert_eq!(sent.iter().sum::<u64>() > 0, ranks > 1, "{layers:?}");
            let _ = std::fs::remove_dir_all(&dir);
        }
        let _ = std::fs::remove_dir_all(&single);
    }
}

#[test]
#[ignore = "needs mpirun: cargo test --features mpi --test mpi -- --ignored"]
fn ranks_read_a_variant_file_and_write_the_table_one_process_writes() {
    // A board with holes in both classes, not mirror images of each other:
    // every rank reads the file, and the tables are one process's. Then a
    // board of 78 squares a class, whose sets take 128-bit words.
    let files = fresh("variant-file");
    std::fs::create_dir_all(&files).unwrap();
    let variants = [
        (
            "9x6-holed",
            r#"{"name": "9x6-holed", "description": "9x6 less d3 and e5",
                "start": "9_6_a1-a2-a3-a4-a5-a6_i1-i2-i3-i4-i5-i6", "holes": ["d3", "e5"]}"#,
        ),
        (
            "13x12-two",
            r#"{"name": "13x12-two", "description": "two a side on the a1 squares of 13x12",
                "start": "13_12_a1-a3_m1-m3"}"#,
        ),
    ];
    for (name, json) in variants {
        let file = files.join(format!("{name}.json"));
        std::fs::write(&file, json).unwrap();
        let file = file.to_str().unwrap();
        for method in ["tight", "two-bit"] {
            let single = fresh(&format!("single-{name}-{method}"));
            let path = single.to_str().unwrap();
            let args = ["--variant-file", file, "solve", name, "--method", method];
            succeeded(bishops(&[&["--db", path][..], &args].concat()), "one process");
            let expected = succeeded(
                bishops(&["--db", path, "--variant-file", file, "export", name]),
                "export",
            )
            .stdout;
            assert!(expected.len() > 1000, "an export");
            let dir = fresh(&format!("{name}-{method}-2"));
            let db = dir.to_str().unwrap();
            succeeded(
                mpirun(2, &[&["--db", db][..], &args].concat()).output().unwrap(),
                &format!("{name} by {method} on 2 ranks"),
            );
            let got = succeeded(bishops(&["--db", db, "--variant-file", file, "export", name]), "export").stdout;
            assert!(
                got == expected,
                "{name} by {method} on 2 ranks: the export differs from one process's"
            );
            let _ = std::fs::remove_dir_all(&dir);
            let _ = std::fs::remove_dir_all(&single);
        }
    }
}

#[test]
#[ignore = "needs mpirun: cargo test --features mpi --test mpi -- --ignored"]
fn ranks_agree_that_a_solved_variant_is_solved() {
    let dir = fresh("again");
    let db = dir.to_str().unwrap();
    succeeded(mpirun(2, &["--db", db, "solve", "7x4"]).output().unwrap(), "first");
    let again = succeeded(mpirun(3, &["--db", db, "solve", "7x4"]).output().unwrap(), "again");
    let stdout = String::from_utf8_lossy(&again.stdout);
    assert_eq!(
        stdout.trim(),
        format!(
            "7x4: already solved, 972 legal positions of the whole board, start remoteness 12, largest 12 -> {db}/7x4.sqlite"
        )
    );
}

#[test]
#[ignore = "needs mpirun: cargo test --features mpi --test mpi -- --ignored"]
fn an_error_on_one_rank_ends_the_job_with_it() {
    let dir = fresh("error");
    let db = dir.to_str().unwrap();
    // The dense search does not run across ranks: every rank refuses, and
    // the job ends with the refusal and exit status 2, not a hang.
    let began = Instant::now();
    let out = mpirun(2, &["--db", db, "solve", "7x6", "--method", "dense"])
        .output()
        .unwrap();
    assert!(began.elapsed() < Duration::from_secs(60));
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("does not run across MPI ranks"), "{stderr}");
    assert!(!dir.join("7x6.sqlite").exists());
    // So does a silence bound out of range, before any rank starts MPI.
    for bound in ["1", "3601", "20s", ""] {
        let out = mpirun(2, &["--db", db, "solve", "7x6"])
            .env("BISHOPS_MPI_SILENCE_SECONDS", bound)
            .output()
            .unwrap();
        assert!(!out.status.success(), "{bound:?}: {out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("BISHOPS_MPI_SILENCE_SECONDS is whole seconds from 2 to 3600"),
            "{stderr}"
        );
        assert!(!dir.join("7x6.sqlite").exists());
    }
}

/// The processes whose parent is `parent`.
fn children(parent: u32) -> Vec<u32> {
    let out = Command::new("pgrep")
        .args(["-P", &parent.to_string()])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

#[test]
#[ignore = "needs mpirun: cargo test --features mpi --test mpi -- --ignored"]
fn a_rank_killed_mid_search_ends_the_job_and_nothing_is_written() {
    killed_mid_search("tight");
}

#[test]
#[ignore = "needs mpirun: cargo test --features mpi --test mpi -- --ignored"]
fn a_rank_killed_mid_two_bit_search_ends_the_job_and_nothing_is_written() {
    killed_mid_search("two-bit");
}

/// A rank of a 9x8 job by `method` killed once every rank has saved a
/// layer: the job ends, nothing is written, and a rerun resumes and
/// writes the single process's table.
fn killed_mid_search(method: &str) {
    let dir = fresh(&format!("killed-{method}"));
    let db = dir.to_str().unwrap();
    // A checkpoint after every layer, so that the rerun has one to resume.
    let mut job = mpirun(3, &["--db", db, "solve", "9x8", "--method", method])
        .env("BISHOPS_CHECKPOINT_SECONDS", "0")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The ranks are mpirun's children (through its daemon or directly):
    // wait for them to have saved a layer, then kill one.
    let began = Instant::now();
    let rank = loop {
        let ranks: Vec<u32> = children(job.id())
            .into_iter()
            .flat_map(|c| std::iter::once(c).chain(children(c)))
            .filter(|&p| std::fs::read_to_string(format!("/proc/{p}/comm")).is_ok_and(|c| c.trim() == "bishops"))
            .collect();
        let saved = (0..3).all(|r| dir.join(format!(".9x8.a1.rank-{r}-of-3.checkpoint")).exists());
        if ranks.len() == 3 && saved {
            break ranks[1];
        }
        assert!(began.elapsed() < Duration::from_secs(30), "three ranks did not start");
        std::thread::sleep(Duration::from_millis(100));
    };
    // SAFETY: a plain kill(2) of a process this test started.
    assert_eq!(unsafe { libc::kill(rank as i32, libc::SIGKILL) }, 0);
    let waited = Instant::now();
    let status = loop {
        if let Some(status) = job.try_wait().unwrap() {
            break status;
        }
        assert!(
            waited.elapsed() < Duration::from_secs(60),
            "the job did not end after a rank died"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(!status.success(), "{status}");
    assert!(!dir.join("9x8.sqlite").exists(), "a database after a failed job");
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .map(|d| d.filter_map(|e| e.ok()).map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(
        leftovers.iter().all(|n| {
            let n = n.to_string_lossy();
            n.ends_with(".lock") || n.contains(".checkpoint")
        }),
        "{leftovers:?}"
    );
    // Run again: it resumes (or, killed while saving, says why it cannot)
    // and writes the right table.
    let rerun = succeeded(
        mpirun(3, &["--db", db, "solve", "9x8", "--method", method])
            .output()
            .unwrap(),
        "rerun",
    );
    let stderr = String::from_utf8_lossy(&rerun.stderr);
    assert!(stderr.contains("resuming"), "{stderr}");
    let single = fresh(&format!("killed-single-{method}"));
    succeeded(
        bishops(&["--db", single.to_str().unwrap(), "solve", "9x8", "--method", method]),
        "single",
    );
    assert!(export(&dir, "9x8") == export(&single, "9x8"));
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&single);
}

/// The files in `dir` whose names contain `part`.
fn files_with(dir: &Path, part: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.contains(part))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// `kill -USR1` to `mpirun`, which passes it to every rank, stops a job
/// where it loses nothing: at the end of a layer, once every rank's share
/// of it is saved, with the exit status of a stop (3, not a failure) and
/// no rank's line an error; three ranks then go on from the shares and
/// write the table one process writes.
#[test]
#[ignore = "needs mpirun: cargo test --features mpi --test mpi -- --ignored"]
fn a_job_asked_to_stop_saves_every_rank_s_share_and_goes_on() {
    let single = fresh("asked-single");
    succeeded(
        bishops(&["--db", single.to_str().unwrap(), "solve", "9x8", "--method", "two-bit"]),
        "single",
    );
    let expected = export(&single, "9x8");
    let dir = fresh("asked");
    let db = dir.to_str().unwrap();
    let solve = ["--db", db, "solve", "9x8", "--method", "two-bit"];
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("job.log");
    // A checkpoint after every layer: asked once the first is saved.
    let mut job = mpirun(3, &solve)
        .env("BISHOPS_CHECKPOINT_SECONDS", "0")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let shares: Vec<String> = (0..3).map(|r| format!(".9x8.a1.rank-{r}-of-3.checkpoint")).collect();
    let waited = Instant::now();
    while files_with(&dir, ".checkpoint") != shares {
        assert!(waited.elapsed() < Duration::from_secs(120), "no shares saved");
        assert!(job.try_wait().unwrap().is_none(), "the job ended before it was asked");
        std::thread::sleep(Duration::from_millis(5));
    }
    // SAFETY: a signal to the child this test started and has not reaped.
    assert_eq!(unsafe { libc::kill(job.id() as libc::pid_t, libc::SIGUSR1) }, 0);
    let status = job.wait().unwrap();
    let said = std::fs::read_to_string(&log).unwrap();
    assert_eq!(status.code(), Some(3), "{said}");
    // Each rank says so as it ends; mpirun may end the others before
    // they have, once the first has ended with its status.
    assert!(
        said.contains("as asked (SIGUSR1); every rank's checkpoint holds its share"),
        "{said}"
    );
    assert!(
        !said.contains("MPI_ABORT"),
        "the job ends as a finished one does: {said}"
    );
    assert!(!said.contains("bishops: error"), "{said}");
    assert!(!dir.join("9x8.sqlite").exists(), "nothing written");
    assert_eq!(files_with(&dir, ".checkpoint"), shares);

    let resumed = succeeded(mpirun(3, &solve).output().unwrap(), "resume");
    let stderr = String::from_utf8_lossy(&resumed.stderr);
    assert!(stderr.contains("resuming"), "{stderr}");
    assert!(export(&dir, "9x8") == expected);
    assert!(files_with(&dir, ".checkpoint").is_empty());
}

#[test]
#[ignore = "needs mpirun: cargo test --features mpi --test mpi -- --ignored"]
fn a_stopped_job_resumes_with_as_many_ranks_and_no_other() {
    stopped_job_resumes("tight");
}

#[test]
#[ignore = "needs mpirun: cargo test --features mpi --test mpi -- --ignored"]
fn a_stopped_two_bit_job_resumes_with_as_many_ranks_and_no_other() {
    stopped_job_resumes("two-bit");
}

/// A 9x8 job by `method` stopped after layer 8 by the test hook writes
/// nothing; a job of another size is refused, one of the same size
/// resumes and writes the single process's table, and `--restart` lets
/// another size start over.
fn stopped_job_resumes(method: &str) {
    let dir = fresh(&format!("resume-{method}"));
    let db = dir.to_str().unwrap();
    let solve = ["--db", db, "solve", "9x8", "--method", method];
    let stop = |ranks: usize| {
        let out = mpirun(ranks, &solve)
            .env("BISHOPS_STOP_AFTER_LAYER", "8")
            .output()
            .unwrap();
        assert!(!out.status.success(), "{out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("stopped after layer 8 of class a1"), "{stderr}");
        assert!(!dir.join("9x8.sqlite").exists());
    };
    let single = fresh(&format!("resume-single-{method}"));
    succeeded(
        bishops(&["--db", single.to_str().unwrap(), "solve", "9x8", "--method", method]),
        "single",
    );
    let expected = export(&single, "9x8");

    // Stopped after layer 8: every rank's share is saved.
    stop(3);
    let shares: Vec<String> = (0..3).map(|r| format!(".9x8.a1.rank-{r}-of-3.checkpoint")).collect();
    assert_eq!(files_with(&dir, ".checkpoint"), shares);

    // Two ranks cannot take three ranks' shares: refused, with the way out.
    let other = mpirun(2, &solve).output().unwrap();
    assert_eq!(other.status.code(), Some(2), "{other:?}");
    let stderr = String::from_utf8_lossy(&other.stderr);
    assert!(
        stderr.contains("by 3 MPI ranks") && stderr.contains("mpirun -np 3"),
        "{stderr}"
    );
    assert!(stderr.contains("--restart"), "{stderr}");
    assert_eq!(files_with(&dir, ".checkpoint"), shares, "a refusal keeps the shares");

    // Three ranks resume at layer 8 and write the right table, and the
    // shares are gone. The report counts layers 0 to 8 as saved ones.
    let mut json = solve.to_vec();
    json.push("--json");
    let resumed = succeeded(mpirun(3, &json).output().unwrap(), "resume");
    let stderr = String::from_utf8_lossy(&resumed.stderr);
    assert_eq!(stderr.matches("at layer 8, written").count(), 3, "{stderr}");
    assert!(!stderr.contains("not resuming"), "{stderr}");
    let report: serde_json::Value = serde_json::from_slice(&resumed.stdout).unwrap();
    let layers = report["variants"][0]["layers"].as_array().unwrap();
    let saved = layers
        .iter()
        .filter(|l| l["class"] == 0 && l["direction"].is_null())
        .count();
    assert_eq!(saved, 9, "{layers:?}");
    assert!(export(&dir, "9x8") == expected);
    assert!(files_with(&dir, ".checkpoint").is_empty());

    // --restart lets another number of ranks start over.
    std::fs::remove_file(dir.join("9x8.sqlite")).unwrap();
    stop(3);
    let mut restart = solve.to_vec();
    restart.push("--restart");
    let restarted = succeeded(mpirun(2, &restart).output().unwrap(), "restart");
    let stderr = String::from_utf8_lossy(&restarted.stderr);
    assert!(stderr.contains("--restart: removed"), "{stderr}");
    assert!(!stderr.contains("resuming"), "{stderr}");
    assert!(export(&dir, "9x8") == expected);
    assert!(files_with(&dir, ".checkpoint").is_empty());
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&single);
}
