//! The two-bit search with its table on disk: chosen by `solve` when the
//! table does not fit `--max-memory`, it writes the database the search in
//! memory writes (the same export, byte for byte), leaves no file of its
//! own behind, and gives the library the same codes, class by class.

mod common;

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};

use bishops::Variant;
use bishops::solver::{Event, Method, OnDisk, Plan, Tables};
use common::stops::{Stop, Stopping};
use common::{scratch, succeeded};
use xxhash_rust::xxh3::Xxh3Default;

const BIN: &str = env!("CARGO_BIN_EXE_bishops");

/// `bishops --db DIR solve NAME --method two-bit` with `extra` arguments:
/// its standard error.
fn solve(dir: &Path, name: &str, extra: &[&str]) -> String {
    let out = Command::new(BIN)
        .arg("--db")
        .arg(dir)
        .args(["solve", name, "--method", "two-bit"])
        .args(extra)
        .output()
        .unwrap();
    String::from_utf8(succeeded(out, &format!("solve {name} {extra:?}")).stderr).unwrap()
}

/// The export of `name` from `dir`, hashed as it streams (9x8's is about a
/// gigabyte), and its length.
fn export_digest(dir: &Path, name: &str) -> (u64, u64) {
    let mut child = Command::new(BIN)
        .arg("--db")
        .arg(dir)
        .args(["export", name])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let (mut hasher, mut len, mut buf) = (Xxh3Default::new(), 0u64, vec![0u8; 1 << 20]);
    loop {
        let n = stdout.read(&mut buf).unwrap();
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        len += n as u64;
    }
    assert!(child.wait().unwrap().success(), "export {name}");
    (hasher.digest(), len)
}

#[test]
fn a_solve_over_the_cap_keeps_its_table_on_disk_and_writes_the_same_database() {
    let name = "9x8";
    let memory = scratch("on-disk", "memory");
    let disk = scratch("on-disk", "disk");
    let said = solve(&memory, name, &[]);
    assert!(!said.contains("on disk"), "{said}");
    // 9x8's two-bit solve needs about 6 MiB, 4 of them its table's codes.
    let out = Command::new(BIN)
        .arg("--db")
        .arg(&disk)
        .args(["solve", name, "--method", "two-bit", "--max-memory", "3", "--json"])
        .output()
        .unwrap();
    let out = succeeded(out, "solve on disk");
    let said = String::from_utf8(out.stderr).unwrap();
    assert!(
        said.contains("its table on disk with at most 1 MiB of it in memory"),
        "{said}"
    );
    assert!(said.contains("the table on disk:"), "{said}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let on_disk = &report["variants"][0]["table_on_disk"];
    // What the cap of 3 MiB leaves beside the rest of the search.
    let memory_bytes = on_disk["memory_bytes"].as_u64().unwrap();
    assert!((1 << 20..3 << 20).contains(&memory_bytes), "{report}");
    for field in [
        "segments_read",
        "segments_written",
        "bytes",
        "images_spooled",
        "spool_bytes",
        "spool_peak_bytes",
        // The database is written from the file, read back.
        "pages_read_writing",
    ] {
        assert!(on_disk[field].as_u64().is_some_and(|n| n > 0), "{field}: {on_disk}");
    }
    // Sorted and delta-coded, an image takes far less than its 8 bytes.
    let (images, bytes) = (
        on_disk["images_spooled"].as_u64().unwrap(),
        on_disk["spool_bytes"].as_u64().unwrap(),
    );
    assert!(bytes < 4 * images, "{bytes} bytes for {images} images");
    let peak = on_disk["spool_peak_bytes"].as_u64().unwrap();
    assert!(
        peak <= bytes,
        "a layer's spool, {peak} bytes, is part of the {bytes} in all"
    );
    // Each layer's report says what it read and wrote: together no more than the whole search (whose last layer,
    // which found nothing, and the table's last write have no report).
    let layers = report["variants"][0]["layers"].as_array().unwrap();
    let searched: Vec<_> = layers.iter().filter(|l| l["direction"].is_string()).collect();
    assert!(searched.len() > 10, "{report}");
    for field in ["segments_read", "segments_written", "bytes", "images_spooled"] {
        let sum: u64 = searched
            .iter()
            .map(|l| l["on_disk"][field].as_u64().unwrap_or_else(|| panic!("{field}: {l}")))
            .sum();
        assert!(
            sum > 0 && sum <= on_disk[field].as_u64().unwrap(),
            "{field}: {sum}, {on_disk}"
        );
    }
    assert!(
        layers
            .iter()
            .all(|l| l["direction"].is_null() == l["on_disk"].is_null()),
        "{report}"
    );
    let (digest, len) = export_digest(&memory, name);
    assert!(len > 1 << 20, "an export of {len} bytes");
    assert_eq!(
        export_digest(&disk, name),
        (digest, len),
        "the same export, byte for byte"
    );
    let left: Vec<String> = std::fs::read_dir(&disk)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|f| !f.starts_with(name))
        .collect();
    assert!(left.is_empty(), "files left beside the database: {left:?}");
}

/// Segments read and written past the page cache (chosen here by the
/// variable, as 9x8's table fits the memory) make the same database; the
/// variable set to anything but 0 or 1 is refused before any file is made.
#[test]
fn a_table_on_disk_read_and_written_directly_writes_the_same_database() {
    let name = "9x8";
    let memory = scratch("on-disk", "direct-memory");
    let disk = scratch("on-disk", "direct");
    solve(&memory, name, &[]);
    let run = |value: &str| {
        Command::new(BIN)
            .arg("--db")
            .arg(&disk)
            .args(["solve", name, "--method", "two-bit", "--max-memory", "3"])
            .env("BISHOPS_DIRECT_IO", value)
            .output()
            .unwrap()
    };
    let out = run("yes");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.ends_with("bishops: error: BISHOPS_DIRECT_IO=yes is not 0 or 1\n"),
        "{err}"
    );
    let made: Vec<_> = std::fs::read_dir(&disk)
        .map(|entries| entries.map(|e| e.unwrap().file_name()).collect())
        .unwrap_or_default();
    assert!(made.is_empty(), "no file made: {made:?}");
    let said = String::from_utf8(succeeded(run("1"), "solve on disk, direct").stderr).unwrap();
    assert!(said.contains("the table on disk:"), "{said}");
    assert_eq!(
        export_digest(&disk, name),
        export_digest(&memory, name),
        "the same export, byte for byte"
    );
}

#[test]
fn a_cap_that_leaves_no_room_for_the_table_is_refused() {
    let dir = scratch("on-disk", "refused");
    let out = Command::new(BIN)
        .arg("--db")
        .arg(&dir)
        .args(["solve", "9x8", "--max-memory", "1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("more than the cap of 1 MiB (--max-memory)"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(!dir.join("9x8.sqlite").exists());
}

#[test]
fn every_class_on_disk_has_the_codes_and_statistics_of_the_search_in_memory() {
    for name in ["5x4-full", "7x6", "9x6"] {
        let variant = Variant::named(name).unwrap();
        let memory = Plan::new(&variant, Method::TwoBit).solve_two_bit(&mut |_| {}).unwrap();
        let dir = scratch("on-disk", name);
        std::fs::create_dir_all(&dir).unwrap();
        // Small enough that 9x6's class is worked in windows.
        let on_disk = OnDisk {
            dir: dir.clone(),
            max_bytes: 48 << 10,
            kept: false,
        };
        let (disk, stats) = Plan::new(&variant, Method::TwoBit)
            .on_disk(on_disk)
            .solve_on_disk(&mut |_| {})
            .unwrap();
        assert_eq!(disk.classes.len(), memory.classes.len());
        for (d, m) in disk.classes.iter().zip(&memory.classes) {
            let codes = d.own().map(|file| file.load().unwrap());
            assert_eq!(codes.as_ref(), m.own(), "{name} class {:?}", m.class);
            assert_eq!(d.stats, m.stats, "{name} class {:?}", m.class);
            assert_eq!(d.is_mirrored(), m.is_mirrored());
        }
        assert_eq!(stats.len(), memory.classes.iter().filter(|c| !c.is_mirrored()).count());
        if name == "9x6" {
            assert!(stats[0].reads > 0 && stats[0].writes > 0, "{stats:?}");
        }
        // The tables are in their files until they are dropped.
        assert_eq!(tables_in(&dir).len(), stats.len(), "{name}: {:?}", tables_in(&dir));
        drop(disk);
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            0,
            "{name}: the tables' files are gone"
        );
    }
}

#[test]
fn a_table_changed_on_disk_after_its_search_writes_no_database() {
    let variant = Variant::named("9x6").unwrap();
    let dir = scratch("on-disk", "changed-after");
    std::fs::create_dir_all(&dir).unwrap();
    let on_disk = OnDisk {
        dir: dir.clone(),
        max_bytes: 48 << 10,
        kept: false,
    };
    let (solution, _) = Plan::new(&variant, Method::TwoBit)
        .on_disk(on_disk)
        .solve_on_disk(&mut |_| {})
        .unwrap();
    // The table the search left, checked as it was opened, then changed:
    // one code in the middle of its file.
    let codes = tables_in(&dir);
    assert_eq!(codes.len(), 1, "{codes:?}");
    let path = dir.join(&codes[0]);
    let mut bytes = std::fs::read(&path).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0b0100;
    std::fs::write(&path, &bytes).unwrap();
    let written = bishops::storage::write_vetted(
        &dir,
        &variant,
        &Tables::TwoBit(&solution),
        bishops::storage::WriteOptions::whole(None),
        &|_| Ok(()),
        &mut |_| {},
    );
    let e = written.unwrap_err().to_string();
    assert!(e.contains("read back other than the search wrote it"), "{e}");
    assert!(!dir.join("9x6.sqlite").exists(), "no database is written from it");
    drop(solution);
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "no file is left");
}

/// The names in `dir` of two-bit tables on disk, and of the files their
/// images are spooled in.
fn tables_in(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|n| n.contains(".codes.tmp-") || (n.contains(".images-") && n.contains(".tmp-")))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_solve_on_disk_stopped_by_a_signal_resumes_from_its_sealed_table() {
    let memory = scratch("on-disk", "signal-memory");
    solve(&memory, "9x8", &[]);
    let want = export_digest(&memory, "9x8");
    let kept = [".9x8.a1.codes", ".9x8.a1.codes.lowest", ".9x8.a1.checkpoint"];
    for (signal, name) in [(libc::SIGTERM, "term"), (libc::SIGKILL, "kill")] {
        let dir = scratch("on-disk", name);
        let mut child = Command::new(BIN)
            .arg("--db")
            .arg(&dir)
            .args(["solve", "9x8", "--method", "two-bit", "--max-memory", "3"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let waited = std::time::Instant::now();
        // Its checkpoints seal the table's file at every layer: wait for
        // the first, and for the spool of a layer after it.
        let checkpoint = dir.join(".9x8.a1.checkpoint");
        while !(checkpoint.exists() && tables_in(&dir).iter().any(|n| n.contains(".images-"))) {
            assert!(waited.elapsed().as_secs() < 60, "no checkpoint appeared");
            assert!(
                child.try_wait().unwrap().is_none(),
                "the solve ended before its checkpoint was seen"
            );
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        // Into a layer, most likely: its writes are on disk.
        std::thread::sleep(std::time::Duration::from_millis(150));
        // SAFETY: a signal to the child this test started and has not reaped.
        assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, signal) }, 0);
        child.wait().unwrap();
        if signal == libc::SIGTERM {
            assert_eq!(tables_in(&dir), Vec::<String>::new(), "the spool removed on SIGTERM");
        }
        // The table's file, its side file and the checkpoint outlive it:
        // the next solve resumes from them, removes a spool a killed solve
        // left, and writes the database the search in memory writes.
        for file in kept {
            assert!(dir.join(file).is_file(), "{name}: {file} kept");
        }
        let said = solve(&dir, "9x8", &["--max-memory", "3"]);
        assert!(said.contains("resuming 9x8 class a1 from the checkpoint"), "{said}");
        assert!(!said.contains("starts over"), "{said}");
        // What it announces counts the disk its checkpoints hold.
        assert!(
            said.contains(" free and ") && said.contains(" its checkpoints hold"),
            "{said}"
        );
        assert_eq!(tables_in(&dir), Vec::<String>::new(), "removed by the next solve");
        for file in kept {
            assert!(!dir.join(file).exists(), "{name}: {file} removed once written");
        }
        assert_eq!(
            export_digest(&dir, "9x8"),
            want,
            "{name}: the same export, byte for byte"
        );
    }
}

/// `bishops --db DIR solve 9x8 --method two-bit` with `extra` arguments
/// and `env`, asked to stop (SIGUSR1) once `ready` holds of its directory
/// (its log says nothing of layers: the board is small): its exit status
/// and its log.
fn asked_to_stop(
    dir: &Path,
    extra: &[&str],
    env: &[(&str, &str)],
    ready: impl Fn(&Path) -> bool,
) -> (std::process::ExitStatus, String) {
    std::fs::create_dir_all(dir).unwrap();
    let log = dir.with_extension("log");
    let mut child = Command::new(BIN)
        .arg("--db")
        .arg(dir)
        .args(["solve", "9x8", "--method", "two-bit"])
        .args(extra)
        .envs(env.iter().copied())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let waited = std::time::Instant::now();
    while !ready(dir) {
        assert!(waited.elapsed().as_secs() < 60, "never ready to be asked");
        assert!(
            child.try_wait().unwrap().is_none(),
            "the solve ended before it was asked"
        );
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    // SAFETY: a signal to the child this test started and has not reaped.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGUSR1) }, 0);
    let status = child.wait().unwrap();
    (status, std::fs::read_to_string(&log).unwrap())
}

/// A solve asked to stop (SIGUSR1) saves its work and stops with one line
/// that says where: a search in memory at the end of its layer, once its
/// checkpoint is saved; a search on disk sooner, at a mark inside its
/// layer. The same command goes on from there (from the mark, working only
/// the white sets after it) and writes the database a solve never stopped
/// writes. With no search to stop, SIGUSR1 ends the process.
#[test]
fn a_solve_asked_to_stop_saves_its_work_and_the_same_command_goes_on() {
    let memory = scratch("on-disk", "asked-memory");
    solve(&memory, "9x8", &[]);
    let want = export_digest(&memory, "9x8");

    let dir = scratch("on-disk", "asked-in-memory");
    // A checkpoint after every layer: asked once the first is saved.
    let (status, said) = asked_to_stop(&dir, &[], &[("BISHOPS_CHECKPOINT_SECONDS", "0")], |dir| {
        dir.join(".9x8.a1.checkpoint").exists()
    });
    // Not a failure: its own status, and its line is no error.
    assert_eq!(status.code(), Some(3), "{said}");
    assert!(said.contains("bishops: asked to stop (SIGUSR1)"), "{said}");
    assert!(!said.contains("error"), "{said}");
    let errors: Vec<_> = said.lines().filter(|l| l.starts_with("bishops: stopped ")).collect();
    assert_eq!(errors.len(), 1, "{said}");
    assert!(
        errors[0].contains("of 9x8 class a1, as asked (SIGUSR1); the checkpoint")
            && errors[0].contains("the same command goes on from it"),
        "{said}"
    );
    assert!(!dir.join("9x8.sqlite").exists(), "nothing written");
    let resumed = solve(&dir, "9x8", &[]);
    assert!(
        resumed.contains("resuming 9x8 class a1 from the checkpoint"),
        "{resumed}"
    );
    assert_eq!(
        export_digest(&dir, "9x8"),
        want,
        "in memory: the same export, byte for byte"
    );

    // On disk, a stop inside a layer, unless the signal came as one ended
    // or before the layer wrote anything: tried up to three times for one
    // the resume goes on from.
    let mut inside = 0;
    for attempt in 0..3 {
        let dir = scratch("on-disk", &format!("asked-on-disk-{attempt}"));
        // Asked 400 ms after its first checkpoint: inside a layer, most
        // likely, and long before the search ends.
        let (status, said) = asked_to_stop(&dir, &["--max-memory", "3"], &[], |dir| {
            let checkpoint = dir.join(".9x8.a1.checkpoint");
            let since = std::fs::metadata(&checkpoint).and_then(|m| m.modified()).ok();
            since.is_some_and(|t| t.elapsed().is_ok_and(|e| e.as_millis() >= 400))
        });
        assert_eq!(status.code(), Some(3), "{said}");
        let errors: Vec<_> = said.lines().filter(|l| l.starts_with("bishops: stopped ")).collect();
        assert_eq!(errors.len(), 1, "{said}");
        assert_eq!(tables_in(&dir), Vec::<String>::new(), "no spool left behind");
        let resumed = solve(&dir, "9x8", &["--max-memory", "3"]);
        assert!(
            resumed.contains("resuming 9x8 class a1 from the checkpoint"),
            "{resumed}"
        );
        assert!(!resumed.contains("starts over"), "{resumed}");
        if let Some(rest) = errors[0].split("as asked (SIGUSR1): its white sets below ").nth(1) {
            assert!(errors[0].contains("stopped inside layer"), "{said}");
            // A layer that had written nothing yet is found again whole.
            if resumed.contains("had written") {
                let below = rest.split(" are worked whole").next().unwrap();
                assert!(
                    resumed.contains(&format!("its white sets below {below} were worked whole")),
                    "the resume goes on from the stop's mark ({below}): {resumed}"
                );
                inside += 1;
            }
        } else {
            assert!(errors[0].contains("as asked (SIGUSR1); the checkpoint"), "{said}");
        }
        assert_eq!(
            export_digest(&dir, "9x8"),
            want,
            "on disk: the same export, byte for byte"
        );
        if inside > 0 {
            break;
        }
    }
    assert_eq!(
        inside, 1,
        "a stop on disk inside a layer the resume goes on from, in three tries"
    );

    // No search: an export streaming into a pipe nobody reads.
    let mut child = Command::new(BIN)
        .arg("--db")
        .arg(&memory)
        .args(["export", "9x8"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut first = [0u8; 64];
    child.stdout.as_mut().unwrap().read_exact(&mut first).unwrap();
    // SAFETY: a signal to the child this test started and has not reaped.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGUSR1) }, 0);
    use std::os::unix::process::ExitStatusExt as _;
    assert_eq!(child.wait().unwrap().signal(), Some(libc::SIGUSR1), "ended by it");
}

/// A search on disk whose checkpoint a solve cannot resume (here a solve
/// whose table would fit in memory) is not started over: the solve stops
/// with one line that says why and what to do, every file of the search as
/// it was, and the same solve with the cap it was saved with resumes it;
/// `--restart` alone discards it.
#[test]
fn a_search_on_disk_whose_checkpoint_is_refused_is_kept_until_restart() {
    let held = [".9x8.a1.codes", ".9x8.a1.codes.lowest", ".9x8.a1.checkpoint"];
    for (name, then) in [
        ("refused-resumed", &["--max-memory", "3"][..]),
        ("refused-restarted", &["--restart"]),
    ] {
        let dir = scratch("on-disk", name);
        let stopped = Command::new(BIN)
            .arg("--db")
            .arg(&dir)
            .args(["solve", "9x8", "--method", "two-bit", "--max-memory", "3"])
            .env("BISHOPS_STOP_AFTER_LAYER", "6")
            .output()
            .unwrap();
        assert!(!stopped.status.success(), "stopped after layer 6");
        let read = || held.map(|file| std::fs::read(dir.join(file)).unwrap());
        let before = read();
        let refused = Command::new(BIN)
            .arg("--db")
            .arg(&dir)
            .args(["solve", "9x8", "--method", "two-bit"])
            .output()
            .unwrap();
        assert_eq!(refused.status.code(), Some(2), "refused as a usage error");
        let err = String::from_utf8(refused.stderr).unwrap();
        let errors: Vec<_> = err.lines().filter(|l| l.starts_with("bishops: error:")).collect();
        assert_eq!(errors.len(), 1, "{err}");
        for said in [
            "is of a table kept on disk, not in memory",
            "is not thrown away",
            "or add --restart to search from the start",
        ] {
            assert!(errors[0].contains(said), "{said}: {err}");
        }
        assert!(
            !err.contains("starts over") && !err.contains("from the start;"),
            "{err}"
        );
        assert!(read() == before, "{name}: the search's files as they were");
        assert!(!dir.join("9x8.sqlite").exists(), "{name}: nothing written");
        let said = solve(&dir, "9x8", then);
        let told = match then[0] {
            "--restart" => "--restart: removed the checkpoint",
            _ => "resuming 9x8 class a1 from the checkpoint",
        };
        assert!(said.contains(told), "{name}: {said}");
        assert!(dir.join("9x8.sqlite").is_file(), "{name}: written");
        for file in held {
            assert!(!dir.join(file).exists(), "{name}: {file} removed once written");
        }
    }
}

/// A search on disk that marks how far each layer has gone after every
/// window (`BISHOPS_CHECKPOINT_SECONDS=0`), killed outright again and
/// again at moments that fall anywhere in a layer, resumes each time from
/// its last mark, working only the white sets after it, and writes the
/// database the search in memory writes.
#[test]
fn a_search_on_disk_killed_inside_its_layers_goes_on_from_its_last_marks() {
    let memory = scratch("on-disk", "marks-memory");
    solve(&memory, "9x8", &[]);
    let want = export_digest(&memory, "9x8");
    let dir = scratch("on-disk", "marks");
    let checkpoint = dir.join(".9x8.a1.checkpoint");
    let mut said = String::new();
    for delay in [400, 900, 1400, 1900] {
        let mut child = Command::new(BIN)
            .arg("--db")
            .arg(&dir)
            .args(["solve", "9x8", "--method", "two-bit", "--max-memory", "3"])
            .env("BISHOPS_CHECKPOINT_SECONDS", "0")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let waited = std::time::Instant::now();
        while !checkpoint.exists() && child.try_wait().unwrap().is_none() {
            assert!(waited.elapsed().as_secs() < 60, "no checkpoint appeared");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        std::thread::sleep(std::time::Duration::from_millis(delay));
        // SAFETY: a signal to the child this test started and has not reaped.
        assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGKILL) }, 0);
        let out = child.wait_with_output().unwrap();
        said += &String::from_utf8_lossy(&out.stderr);
    }
    said += &solve(&dir, "9x8", &["--max-memory", "3"]);
    assert!(!said.contains("starts over"), "{said}");
    assert!(said.contains("were worked whole: they are not worked again"), "{said}");
    assert!(said.contains("are worked whole, marked on disk in"), "{said}");
    assert_eq!(tables_in(&dir), Vec::<String>::new(), "removed by the last solve");
    assert_eq!(export_digest(&dir, "9x8"), want, "the same export, byte for byte");
}

#[test]
fn a_search_on_disk_stopped_inside_a_layer_resumes_it_from_the_checkpoint_before() {
    use bishops::checkpoint::{CheckpointOptions, Checkpointer};
    for (name, fail_after, max_bytes) in [
        ("9x6", 5, 48 << 10),
        ("9x6", 9, 48 << 10),
        ("7x6", 4, 48 << 10),
        ("9x8", 12, 1 << 20),
    ] {
        let variant = Variant::named(name).unwrap();
        let memory = Plan::new(&variant, Method::TwoBit).solve_two_bit(&mut |_| {}).unwrap();
        let dir = scratch("on-disk", &format!("inside-{name}-{fail_after}"));
        std::fs::create_dir_all(&dir).unwrap();
        let on_disk = OnDisk {
            dir: dir.clone(),
            max_bytes,
            kept: true,
        };
        let plan = || Plan::new(&variant, Method::TwoBit).on_disk(on_disk.clone());
        let options = CheckpointOptions {
            interval: std::time::Duration::ZERO,
            ..CheckpointOptions::default()
        };
        let mut notes = Vec::new();
        let mut note = |text: &str| notes.push(text.to_owned());
        let checkpoints = Checkpointer::new(&dir, &variant, options, &mut note);
        let mut failing = Stopping::new(checkpoints, Stop::SaveAfter(fail_after)).without_marks();
        let stopped = plan().solve_on_disk_with(&mut failing, &mut |_| {});
        assert!(stopped.is_err(), "{name}: the save failed");
        drop(failing);
        // 9x6 after layer 9 with a position of its file coded 1 or 2 made
        // unseen: neither as sealed nor as the layer after it leaves it,
        // which writes code 0 (the one change it cannot see is of that
        // code, in a segment the layer wrote).
        let damaged = (name, fail_after) == ("9x6", 9);
        let codes = dir.join(format!(".{name}.a1.codes"));
        if damaged {
            let mut bytes = std::fs::read(&codes).unwrap();
            let coded = |b: u8| (0..4).any(|k| matches!(b >> (2 * k) & 3, 1 | 2));
            let seen = bytes.iter().position(|&b| coded(b)).unwrap();
            bytes[seen] = 0xff;
            std::fs::write(&codes, &bytes).unwrap();
        }
        let before = std::fs::read(&codes).unwrap();
        let mut checkpoints = Checkpointer::new(&dir, &variant, options, &mut note);
        let solved = plan().solve_on_disk_with(&mut checkpoints, &mut |_| {});
        drop(checkpoints);
        let resumed = format!("resuming {name} class a1 from the checkpoint");
        assert!(notes.iter().any(|n| n.starts_with(&resumed)), "{name}: {notes:?}");
        let over = notes.iter().find(|n| n.contains("starts over"));
        assert!(over.is_none(), "{name}: {over:?}");
        let kept = "the layer after the checkpoint of class a1 had written ";
        let (disk, _) = if damaged {
            // Refused, and the search it sealed is not thrown away: the
            // solve stops, its file as it was, until --restart says so.
            let Err(refused) = solved else {
                panic!("a refused search on disk is not started over");
            };
            let refused = refused.to_string();
            for said in [
                "cannot be resumed: ",
                "the disk or another program changed it",
                "add --restart",
            ] {
                assert!(refused.contains(said), "{said}: {refused}");
            }
            assert!(
                std::fs::read(&codes).unwrap() == before,
                "{name}: its table's file kept"
            );
            let restart = CheckpointOptions {
                restart: true,
                ..options
            };
            let mut notes = Vec::new();
            let mut note = |text: &str| notes.push(text.to_owned());
            let mut checkpoints = Checkpointer::new(&dir, &variant, restart, &mut note);
            plan().solve_on_disk_with(&mut checkpoints, &mut |_| {}).unwrap()
        } else {
            assert!(notes.iter().any(|n| n.starts_with(kept)), "{name}: {notes:?}");
            solved.unwrap()
        };
        for (d, m) in disk.classes.iter().zip(&memory.classes) {
            assert_eq!(d.stats, m.stats, "{name} after layer {fail_after}, class {:?}", m.class);
            let d = d.own().map(|file| file.load().unwrap());
            assert_eq!(
                d.as_ref(),
                m.own(),
                "{name} after layer {fail_after}, class {:?}",
                m.class
            );
        }
        bishops::checkpoint::remove(&dir, &variant);
        let left: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert!(left.is_empty(), "{name}: {left:?}");
    }
}

/// A mark claims the spool before it writes back, and records the
/// segments as it left them: a resume completes orbits only in the
/// segments changed since. A mark made while a resume's completion has
/// not reached every segment owes the rest, and the next resume completes
/// them though the file shows no change since that mark. 9x8 on disk is
/// stopped at its third mark of layer 12; its record of segments is then
/// torn, so the resume completes every segment the layer changed, and is
/// stopped at its first mark, with most of that completion still to come;
/// the second resume must complete those it owed, some but not all of
/// the changed segments, and the table is the search's in memory. (Here
/// no image is missing, the first stop being just after a mark: what
/// finds lost images is the kill test above, which fails when a mark does
/// not claim the spool.)
#[test]
fn a_mark_owes_the_orbits_a_resume_has_not_completed() {
    use bishops::checkpoint::{CheckpointOptions, Checkpointer};
    let name = "9x8";
    let variant = Variant::named(name).unwrap();
    let memory = Plan::new(&variant, Method::TwoBit).solve_two_bit(&mut |_| {}).unwrap();
    let dir = scratch("on-disk", "owed");
    std::fs::create_dir_all(&dir).unwrap();
    let on_disk = OnDisk {
        dir: dir.clone(),
        max_bytes: 1 << 20,
        kept: true,
    };
    let plan = || Plan::new(&variant, Method::TwoBit).on_disk(on_disk.clone());
    let options = CheckpointOptions {
        interval: std::time::Duration::ZERO,
        ..CheckpointOptions::default()
    };
    let mut notes = Vec::new();
    // Solved until the search stops at a mark; what it told.
    let stopped_at = |nth: usize| -> Vec<String> {
        let mut told = Vec::new();
        let mut note = |text: &str| told.push(text.to_owned());
        let checkpoints = Checkpointer::new(&dir, &variant, options, &mut note);
        let mut stopping = Stopping::new(checkpoints, Stop::Mark { layer: 12, nth });
        let stopped = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            plan().solve_on_disk_with(&mut stopping, &mut |_| {})
        }));
        assert!(stopped.is_err(), "the search was stopped at a mark");
        drop(stopping);
        told
    };
    stopped_at(3);
    let side = dir.join(format!(".{name}.a1.codes.lowest"));
    let mut bytes = std::fs::read(&side).unwrap();
    *bytes.last_mut().unwrap() ^= 1;
    std::fs::write(&side, &bytes).unwrap();
    let resumed = stopped_at(1);
    // "… are completed again" with N of M: every one changed, the record torn.
    let completed = |told: &[String]| -> (u64, u64) {
        let line = told.iter().find(|n| n.contains("are completed again"));
        let line = line.unwrap_or_else(|| panic!("a resume inside the layer: {told:?}"));
        let words: Vec<&str> = line.split(' ').collect();
        let at = words.iter().position(|&w| w == "segments").unwrap();
        (words[at - 4].parse().unwrap(), words[at - 1].parse().unwrap())
    };
    let (all, changed) = completed(&resumed);
    assert_eq!(all, changed, "{resumed:?}");
    let mut note = |text: &str| notes.push(text.to_owned());
    let mut checkpoints = Checkpointer::new(&dir, &variant, options, &mut note);
    let mut layers = Vec::new();
    let mut observe = |e| {
        if let Event::Layer {
            depth,
            direction: Some(_),
            resumed,
            ..
        } = e
        {
            layers.push((depth, resumed));
        }
    };
    let (disk, _) = plan().solve_on_disk_with(&mut checkpoints, &mut observe).unwrap();
    drop(checkpoints);
    let (owed, changed) = completed(&notes);
    assert!(0 < owed && owed < changed, "{notes:?}");
    // The layer it went on with past its mark says how far the runs
    // before had worked it (what the estimate of the time left scales
    // its time by); every later layer was worked whole in this run.
    let (first, resumed) = layers[0];
    assert_eq!(first, 12, "{layers:?}");
    let resumed = resumed.unwrap_or_else(|| panic!("layer 12 went on from a mark: {layers:?}"));
    assert!(0 < resumed.through && resumed.through < resumed.blocks, "{resumed:?}");
    assert!(layers[1..].iter().all(|(_, r)| r.is_none()), "{layers:?}");
    for (d, m) in disk.classes.iter().zip(&memory.classes) {
        assert_eq!(d.stats, m.stats, "class {:?}", m.class);
        let d = d.own().map(|file| file.load().unwrap());
        assert_eq!(d.as_ref(), m.own(), "class {:?}", m.class);
    }
    bishops::checkpoint::remove(&dir, &variant);
}

/// Disk blocks a file takes, in bytes.
fn allocated(path: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).unwrap().blocks() * 512
}

/// A table on disk folded onto its orbits (`--fold always`; 9x8's one
/// symmetry exchanges the colours) writes the database the search in
/// memory writes. A fold stopped after a few of its steps has its record
/// and has given part of the table's file back; the next solve searches
/// nothing, goes on from the record, and writes the same database; no file
/// is left beside it.
#[test]
fn a_table_folded_onto_its_orbits_writes_the_same_database_and_a_stopped_fold_resumes() {
    let name = "9x8";
    let memory = scratch("on-disk", "fold-memory");
    solve(&memory, name, &[]);
    let want = export_digest(&memory, name);

    let whole = scratch("on-disk", "fold-whole");
    let said = solve(&whole, name, &["--max-memory", "3", "--fold", "always"]);
    assert!(said.contains("folded onto its orbits"), "{said}");
    assert_eq!(export_digest(&whole, name), want, "folded in one run");

    let dir = scratch("on-disk", "fold-stopped");
    let out = Command::new(BIN)
        .arg("--db")
        .arg(&dir)
        .args([
            "solve",
            name,
            "--method",
            "two-bit",
            "--max-memory",
            "3",
            "--fold",
            "always",
        ])
        .env("BISHOPS_FOLD_STEP_WORDS", "4000")
        .env("BISHOPS_STOP_AFTER_FOLD_STEP", "30")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && said.contains("the fold stopped after"),
        "{said}"
    );
    let codes = dir.join(format!(".{name}.a1.codes"));
    let len = std::fs::metadata(&codes).unwrap().len();
    assert!(
        allocated(&codes) < len * 3 / 4,
        "{} of {len} bytes still taken",
        allocated(&codes)
    );
    for file in [".orbits", ".orbits.fold"] {
        assert!(dir.join(format!(".{name}.a1{file}")).exists(), "{file}");
    }
    // The table's file is given back below the fold: a solve that may not
    // fold is refused, and nothing is touched.
    let out = Command::new(BIN)
        .arg("--db")
        .arg(&dir)
        .args([
            "solve",
            name,
            "--method",
            "two-bit",
            "--max-memory",
            "3",
            "--fold",
            "never",
        ])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{said}");
    let errors: Vec<&str> = said.lines().filter(|l| l.starts_with("bishops: error:")).collect();
    assert!(errors.len() == 1 && errors[0].contains("was being folded"), "{said}");
    assert_eq!(std::fs::metadata(&codes).unwrap().len(), len);
    let out = Command::new(BIN)
        .arg("--db")
        .arg(&dir)
        .args(["solve", name, "--method", "two-bit", "--max-memory", "3", "--json"])
        .output()
        .unwrap();
    let out = succeeded(out, "the fold resumed");
    let said = String::from_utf8(out.stderr).unwrap();
    assert!(!said.contains("a1 layer"), "nothing is searched again: {said}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["variants"][0]["table_on_disk"]["folded"], true, "{report}");
    assert_eq!(export_digest(&dir, name), want, "the same export, byte for byte");
    let left: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|f| !f.starts_with(name))
        .collect();
    assert!(left.is_empty(), "files left beside the database: {left:?}");
}

/// `--max-disk` folds a table on disk when only the fold fits under it,
/// writing the same database, and refuses with one line, before it
/// searches, a solve that does not fit under it even folded.
#[test]
fn a_disk_cap_folds_the_table_or_refuses_the_solve() {
    use bishops::pipeline::{SolveOptions, SolvePlan};
    let (name, memory) = ("9x8", scratch("on-disk", "disk-cap-memory"));
    solve(&memory, name, &[]);
    let want = export_digest(&memory, name);
    let dir = scratch("on-disk", "disk-cap");
    std::fs::create_dir_all(&dir).unwrap();
    // What the solve needs unfolded, in whole MiB below it: only the fold fits.
    let options = SolveOptions {
        method: Some(Method::TwoBit),
        max_memory: Some(3 << 20),
        fold: Some(false),
        checkpoints: Some(Default::default()),
        ..SolveOptions::default()
    };
    let whole = SolvePlan::new(&Variant::named(name).unwrap(), options)
        .unwrap()
        .disk_bytes_in(&dir);
    let cap = ((whole - 1) >> 20).to_string();
    let said = solve(&dir, name, &["--max-memory", "3", "--max-disk", &cap]);
    assert!(
        said.contains("folded onto its orbits before the database is written"),
        "{said}"
    );
    assert!(said.contains(" cap, --max-disk)"), "{said}");
    assert_eq!(export_digest(&dir, name), want, "folded under the cap: the same export");

    let refused = scratch("on-disk", "disk-cap-refused");
    let out = Command::new(BIN)
        .arg("--db")
        .arg(&refused)
        .args(["solve", name, "--max-memory", "3", "--max-disk", "1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("more than the cap of 1 MiB (--max-disk), even with its table folded"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(!refused.join("9x8.sqlite").exists());
    assert_eq!(tables_in(&refused), Vec::<String>::new(), "nothing left behind");
}

/// A two-bit solve's write tells how far it is, class by class, from its
/// first white set to its last, as its table on disk is resolved into
/// frames: on 13x10 that takes hours.
#[test]
fn a_write_tells_how_far_it_is() {
    use bishops::pipeline::{SolveOptions, SolvePlan};
    use bishops::solver::Event;
    let (name, dir) = ("9x8", scratch("on-disk", "writing"));
    let variant = Variant::named(name).unwrap();
    let options = SolveOptions {
        method: Some(Method::TwoBit),
        max_memory: Some(3 << 20),
        ..SolveOptions::default()
    };
    std::fs::create_dir_all(&dir).unwrap();
    let plan = SolvePlan::new(&variant, options).unwrap();
    assert!(plan.table_cap().is_some(), "on disk");
    let mut told: Vec<(bishops::Class, u64, u64)> = Vec::new();
    plan.run(&dir, &mut |event| {
        if let Event::Writing { class, done, total } = event {
            told.push((class, done, total));
        }
    })
    .unwrap();
    // The a1 class only: a2 is its mirror image, written as nothing.
    let total = told[0].2;
    assert_eq!(told.first(), Some(&(bishops::Class::Even, 0, total)), "{told:?}");
    assert_eq!(told.last(), Some(&(bishops::Class::Even, total, total)), "{told:?}");
    assert!(told.len() > 2, "told along the way: {told:?}");
    assert!(told.windows(2).all(|w| w[0].1 < w[1].1 && w[0].2 == total), "{told:?}");
}

/// `bishops --db DIR solve 9x8` on disk (`--max-memory 3`), its write
/// committing at every step it may (`BISHOPS_WRITE_COMMIT_SECONDS=0`) and
/// `env` besides: the child, its standard error piped.
fn committing_solve(dir: &Path, env: &[(&str, &str)]) -> std::process::Child {
    Command::new(BIN)
        .arg("--db")
        .arg(dir)
        .args(["solve", "9x8", "--method", "two-bit", "--max-memory", "3"])
        .env("BISHOPS_WRITE_COMMIT_SECONDS", "0")
        .envs(env.iter().copied())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The names of `dir`'s files but the database's.
fn left_beside(dir: &Path, name: &str) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|f| f != &format!("{name}.sqlite"))
        .collect()
}

/// A write stopped after a few of its commits keeps them in its partial
/// file beside the search's checkpoint and writes no database; the next
/// solve searches nothing, reads back what was committed and checks it
/// against the table: a frame forged there (a value one off, its checksum
/// made anew) is deleted with every frame after it, the write goes on from
/// before it, and the database is the one a write in one go makes.
#[test]
fn a_write_stopped_goes_on_from_its_last_commit_and_a_forged_frame_is_written_again() {
    let name = "9x8";
    let memory = scratch("on-disk", "write-memory");
    solve(&memory, name, &[]);
    let want = export_digest(&memory, name);

    let dir = scratch("on-disk", "write-stopped");
    let out = committing_solve(&dir, &[("BISHOPS_STOP_AFTER_WRITE_COMMIT", "6")])
        .wait_with_output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && said.contains("the write stopped after 6 commits"),
        "{said}"
    );
    let partial = dir.join(format!(".{name}.sqlite.partial"));
    assert!(partial.is_file() && !dir.join(format!("{name}.sqlite")).exists());
    assert!(
        dir.join(format!(".{name}.a1.checkpoint")).is_file(),
        "the search is kept"
    );
    // Forge the third frame committed: one reachable value one higher,
    // with the frame's checksum made anew.
    let forged_at: u64 = {
        let conn = rusqlite::Connection::open(&partial).unwrap();
        let (first, data): (i64, Vec<u8>) = conn
            .query_row(
                "SELECT first_white, data FROM frames WHERE class = 0 ORDER BY first_white LIMIT 1 OFFSET 2",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        let mut cells = zstd::bulk::decompress(&data, 1 << 24).unwrap();
        let at = cells.iter().position(|&c| c < 200).unwrap();
        cells[at] += 1;
        let sum = bishops::storage::block_checksum(0, first as u64, &cells).signed();
        let data = zstd::bulk::compress(&cells, bishops::storage::LEVEL).unwrap();
        conn.execute(
            "UPDATE frames SET data = ?1, checksum = ?2 WHERE class = 0 AND first_white = ?3",
            rusqlite::params![data, sum, first],
        )
        .unwrap();
        first as u64
    };
    let out = committing_solve(&dir, &[]).wait_with_output().unwrap();
    let said = String::from_utf8(succeeded(out, "the write resumed").stderr).unwrap();
    assert!(!said.contains("a1 layer"), "nothing is searched again: {said}");
    assert!(
        said.contains(&format!("fails its checks from white set {forged_at} on")),
        "{said}"
    );
    assert!(
        said.contains(&format!("goes on from white set {forged_at} of ")),
        "{said}"
    );
    assert_eq!(export_digest(&dir, name), want, "the same export, byte for byte");
    assert_eq!(left_beside(&dir, name), Vec::<String>::new());
}

/// A write killed inside a transaction (its rollback journal left beside
/// it), killed outright at any moment (SIGKILL) or interrupted (SIGTERM)
/// goes on, in the next solve, from its last commit, and writes the
/// database a write in one go makes.
#[test]
fn a_write_killed_goes_on_from_its_last_commit() {
    let name = "9x8";
    let memory = scratch("on-disk", "killed-write-memory");
    solve(&memory, name, &[]);
    let want = export_digest(&memory, name);
    let whole = std::fs::metadata(memory.join(format!("{name}.sqlite"))).unwrap().len();
    for (signal, what) in [
        (None, "inside"),
        (Some(libc::SIGKILL), "kill"),
        (Some(libc::SIGTERM), "term"),
    ] {
        let dir = scratch("on-disk", &format!("killed-write-{what}"));
        let partial = dir.join(format!(".{name}.sqlite.partial"));
        let journal = dir.join(format!(".{name}.sqlite.partial-journal"));
        if let Some(signal) = signal {
            let mut child = committing_solve(&dir, &[]);
            let waited = std::time::Instant::now();
            // Half the database's size: many commits in.
            while std::fs::metadata(&partial).map_or(0, |m| m.len()) < whole / 2 {
                assert!(waited.elapsed().as_secs() < 120, "{what}: the write did not get far");
                assert!(child.try_wait().unwrap().is_none(), "{what}: the solve ended first");
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
            // SAFETY: a signal to the child this test started and has not reaped.
            assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, signal) }, 0);
            assert!(!child.wait().unwrap().success(), "{what}");
        } else {
            // Frames written since the fourth commit, not committed.
            let status = committing_solve(&dir, &[("BISHOPS_KILL_AT_WRITE_COMMIT", "5")])
                .wait()
                .unwrap();
            use std::os::unix::process::ExitStatusExt;
            assert_eq!(status.signal(), Some(libc::SIGKILL), "{what}");
            assert!(journal.is_file(), "{what}: killed inside a transaction");
        }
        assert!(partial.is_file(), "{what}: the partial file is kept");
        let out = committing_solve(&dir, &[]).wait_with_output().unwrap();
        let said = String::from_utf8(succeeded(out, "the write resumed").stderr).unwrap();
        assert!(
            said.contains("the write stopped before goes on from white set "),
            "{what}: {said}"
        );
        assert!(!said.contains("fails its checks"), "{what}: {said}");
        assert_eq!(
            export_digest(&dir, name),
            want,
            "{what}: the same export, byte for byte"
        );
        assert_eq!(left_beside(&dir, name), Vec::<String>::new(), "{what}");
    }
}
