//! Resumable solves, end to end through the binary: a search stopped after
//! a layer (the hidden hook `BISHOPS_STOP_AFTER_LAYER`) leaves a checkpoint
//! and no database; the next `solve` resumes from it and writes the table a
//! fresh solve writes; `--restart` discards it; a damaged or foreign
//! checkpoint is reported and ignored; a finished solve leaves none.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

fn fresh_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("bishops-resume-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `bishops --db DIR ARGS` with the environment variables `env`.
fn run(dir: &Path, env: &[(&str, &str)], args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_bishops"));
    cmd.env_remove("BISHOPS_CHECKPOINT_SECONDS")
        .env_remove("BISHOPS_STOP_AFTER_LAYER")
        .env_remove("BISHOPS_DB")
        .arg("--db")
        .arg(dir)
        .args(args)
        .envs(env.iter().copied());
    cmd.output().unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Runs and insists on success; returns stderr.
fn ok(dir: &Path, env: &[(&str, &str)], args: &[&str]) -> String {
    let output = run(dir, env, args);
    assert!(output.status.success(), "{args:?} failed: {}", stderr(&output));
    stderr(&output)
}

/// Runs `args` with the hook, which must stop the solve after `layer`
/// (exit status 3), and with checkpoints too far apart to be taken
/// before it.
fn stopped(dir: &Path, layer: &str, args: &[&str]) -> Output {
    let output = run(
        dir,
        &[
            ("BISHOPS_STOP_AFTER_LAYER", layer),
            ("BISHOPS_CHECKPOINT_SECONDS", "100000"),
        ],
        args,
    );
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    output
}

/// Solves `variant` with the hook, which must stop it after `layer`.
fn stop(dir: &Path, variant: &str, layer: &str) {
    let output = stopped(dir, layer, &["solve", variant]);
    assert!(stderr(&output).contains("stopped after layer"), "{}", stderr(&output));
    assert!(
        !dir.join(format!("{variant}.sqlite")).exists(),
        "no database after a stop"
    );
}

fn export(dir: &Path, variant: &str) -> Vec<u8> {
    let output = run(dir, &[], &["export", variant]);
    assert!(output.status.success(), "{}", stderr(&output));
    output.stdout
}

/// The export of a fresh solve, once per variant.
fn fresh_export(variant: &str) -> &'static [u8] {
    type Exports = Vec<(String, &'static [u8])>;
    static CACHE: OnceLock<std::sync::Mutex<Exports>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let mut cache = cache.lock().unwrap();
    if let Some((_, e)) = cache.iter().find(|(v, _)| v == variant) {
        return e;
    }
    let dir = fresh_dir(&format!("fresh-{variant}"));
    ok(&dir, &[], &["solve", variant]);
    let table: &'static [u8] = Vec::leak(export(&dir, variant));
    std::fs::remove_dir_all(&dir).unwrap();
    cache.push((variant.to_owned(), table));
    table
}

/// The dot files (checkpoints, temporary files) left in `dir`.
fn hidden(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with('.') && !n.ends_with(".lock"))
        .collect();
    names.sort();
    names
}

#[test]
fn a_stopped_solve_resumes_and_writes_the_fresh_table() {
    let dir = fresh_dir("resume");
    stop(&dir, "9x6", "10");
    assert_eq!(hidden(&dir), [".9x6.a1.checkpoint"]);
    let err = ok(&dir, &[], &["solve", "9x6"]);
    assert!(
        err.contains("resuming 9x6 class a1 from the checkpoint") && err.contains("at layer 10"),
        "{err}"
    );
    assert_eq!(
        hidden(&dir),
        Vec::<String>::new(),
        "a finished solve removes its checkpoint"
    );
    assert!(export(&dir, "9x6") == fresh_export("9x6"), "the resumed table differs");
    // Solved: a second run neither resumes nor searches.
    let err = ok(&dir, &[], &["solve", "9x6"]);
    assert!(!err.contains("resuming"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn restart_discards_the_checkpoint() {
    let dir = fresh_dir("restart");
    stop(&dir, "9x6", "4");
    let err = ok(&dir, &[], &["solve", "9x6", "--restart"]);
    assert!(err.contains("--restart: removed the checkpoint"), "{err}");
    assert!(!err.contains("resuming"), "{err}");
    assert_eq!(hidden(&dir), Vec::<String>::new());
    assert!(export(&dir, "9x6") == fresh_export("9x6"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_damaged_checkpoint_is_reported_and_ignored() {
    let dir = fresh_dir("damaged");
    let file = dir.join(".9x6.a1.checkpoint");
    // A flipped table byte fails the checksum; a cut file is too short;
    // a damaged header does not parse.
    type Damage = fn(&mut Vec<u8>);
    let damages: [(&str, Damage); 3] = [
        ("fails its checksum", |b| {
            let last = b.len() - 1;
            b[last] ^= 1;
        }),
        ("bytes long", |b| b.truncate(b.len() - 7)),
        ("unreadable header", |b| b[25] = b'#'),
    ];
    for (said, damage) in damages {
        stop(&dir, "9x6", "9");
        let mut bytes = std::fs::read(&file).unwrap();
        damage(&mut bytes);
        std::fs::write(&file, bytes).unwrap();
        let err = ok(&dir, &[], &["solve", "9x6"]);
        assert!(err.contains(said) && err.contains("ignoring it"), "{said}: {err}");
        assert!(!err.contains("resuming"), "{err}");
        assert_eq!(hidden(&dir), Vec::<String>::new());
        assert!(export(&dir, "9x6") == fresh_export("9x6"), "{said}");
        std::fs::remove_file(dir.join("9x6.sqlite")).unwrap();
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_checkpoint_of_another_variant_is_not_trusted() {
    let dir = fresh_dir("foreign");
    stop(&dir, "7x6", "3");
    std::fs::rename(dir.join(".7x6.a1.checkpoint"), dir.join(".9x6.a1.checkpoint")).unwrap();
    let err = ok(&dir, &[], &["solve", "9x6"]);
    assert!(err.contains("is for variant 7x6, not 9x6; ignoring it"), "{err}");
    assert!(export(&dir, "9x6") == fresh_export("9x6"));
    assert_eq!(hidden(&dir), Vec::<String>::new());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_killed_checkpoint_write_leaves_the_previous_one_usable() {
    // A write killed before its rename leaves its temporary file beside the
    // previous checkpoint: the previous one is used and the rest removed.
    let dir = fresh_dir("killed");
    stop(&dir, "9x6", "6");
    let tmp = dir.join(".9x6.a1.checkpoint.tmp-999999");
    std::fs::write(&tmp, b"bishops checkpoint\n{\"format\":1,\"vari").unwrap();
    let err = ok(&dir, &[], &["solve", "9x6"]);
    assert!(err.contains("at layer 6"), "{err}");
    assert_eq!(hidden(&dir), Vec::<String>::new());
    assert!(export(&dir, "9x6") == fresh_export("9x6"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A solve stopped as asked prints, with `--json`, the variants solved
/// before the stop and the stop's own words, which its stderr line gives.
#[test]
fn a_stopped_solve_s_json_reports_what_it_solved_and_where_it_stopped() {
    let dir = fresh_dir("json");
    ok(&dir, &[], &["solve", "5x4"]);
    let output = stopped(&dir, "6", &["solve", "5x4", "9x6", "--json"]);
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let variants = report["variants"].as_array().unwrap();
    assert_eq!(variants.len(), 1, "{report}");
    assert_eq!(variants[0]["variant"], "5x4", "{report}");
    let stopped = report["stopped"].as_str().unwrap();
    assert!(
        stopped.starts_with("stopped after layer 6 of 9x6 class a1"),
        "{stopped}"
    );
    assert!(
        stderr(&output).contains(&format!("bishops: {stopped}")),
        "{}",
        stderr(&output)
    );
    // A solve that ends says nothing of a stop.
    let output = run(&dir, &[], &["solve", "9x6", "--json"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(report.get("stopped").is_none(), "{report}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn every_layer_checkpointed_then_finished_leaves_no_checkpoint() {
    let dir = fresh_dir("every");
    let output = run(
        &dir,
        &[("BISHOPS_CHECKPOINT_SECONDS", "0")],
        &["solve", "9x6", "--json"],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let report = &report["variants"][0];
    // 16 layers after the goal's, and the end of the search.
    assert_eq!(report["checkpoints_written"], 17, "{report}");
    assert!(report["checkpoint_bytes"].as_u64().unwrap() > 17 * 276_674);
    assert_eq!(hidden(&dir), Vec::<String>::new());
    assert!(export(&dir, "9x6") == fresh_export("9x6"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn two_searched_classes_resume_the_second_without_searching_the_first() {
    // 7x5 has an odd number of columns: both classes are searched. With a
    // checkpoint after every layer, the end of a1's search is saved too.
    let dir = fresh_dir("two");
    let output = run(
        &dir,
        &[
            ("BISHOPS_STOP_AFTER_LAYER", "a2:5"),
            ("BISHOPS_CHECKPOINT_SECONDS", "0"),
        ],
        &["solve", "7x5-full"],
    );
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    assert_eq!(hidden(&dir), [".7x5-full.a1.checkpoint", ".7x5-full.a2.checkpoint"]);
    let err = ok(&dir, &[], &["solve", "7x5-full"]);
    assert!(
        err.contains("resuming 7x5-full class a1") && err.contains("(the class's search is over)"),
        "{err}"
    );
    assert!(
        err.contains("resuming 7x5-full class a2") && err.contains("at layer 5,"),
        "{err}"
    );
    assert_eq!(hidden(&dir), Vec::<String>::new());
    assert!(export(&dir, "7x5-full") == fresh_export("7x5-full"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_bad_hook_is_a_usage_error() {
    let dir = fresh_dir("hook");
    let output = run(&dir, &[("BISHOPS_STOP_AFTER_LAYER", "b7:x")], &["solve", "7x4"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The two-bit search resumes through the binary as the byte search does:
/// stopped after a layer, resumed by the next `solve --method two-bit`,
/// and its export is the byte search's, row for row.
#[test]
fn a_stopped_two_bit_solve_resumes_and_exports_the_fresh_table() {
    let dir = fresh_dir("two-bit");
    stopped(&dir, "7", &["solve", "9x6", "--method", "two-bit"]);
    assert_eq!(hidden(&dir), [".9x6.a1.checkpoint"]);
    let err = ok(&dir, &[], &["solve", "9x6", "--method", "two-bit"]);
    assert!(err.contains("two-bit search"), "{err}");
    assert!(
        err.contains("resuming 9x6 class a1 from the checkpoint") && err.contains("at layer 7"),
        "{err}"
    );
    assert_eq!(
        hidden(&dir),
        Vec::<String>::new(),
        "a finished solve removes its checkpoint"
    );
    assert!(
        export(&dir, "9x6") == fresh_export("9x6"),
        "the resumed two-bit table differs"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
