//! Times what a search on disk costs each time it is resumed inside a
//! layer, as a search longer than a session is: its table's file read
//! back and checked, the orbits of what the stopped layer wrote completed
//! (every position of its code in the segments it changed), and the layer
//! found again.
//!
//! Class a1 of a variant is searched on disk with a checkpoint after every
//! layer and a mark after every window, and stopped as the checkpoint
//! after layer `LAYER` fails to save: its file then holds that layer, its
//! checkpoint the layer before, and its last mark all but the last window,
//! as a search killed late in a layer leaves them. A copy of that
//! directory is then resumed, and stopped again at the same save, `RUNS`
//! times; each resume is timed. The stopped search is kept in
//! `DIR/stopped` and used again by the next call with the same `DIR`, so
//! that two builds time the same resume.
//!
//! ```sh
//! cargo run --release --example resume -- 11x8 8 12           # 8 MiB of table in memory, layer 12
//! cargo run --release --example resume -- 11x8 8 12 --runs 5 --dir /tmp/resume
//! ```

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use bishops::Variant;
use bishops::checkpoint::{CheckpointOptions, Checkpointer};
use bishops::solver::{Method, OnDisk, Plan};

// The tests' way of stopping a search, of which this uses one stop.
#[path = "../tests/common/stops.rs"]
#[allow(dead_code)]
mod stops;
use stops::{Stop, Stopping};

/// Searches `variant` on disk in `dir` until the save after layer `layer`
/// fails; the notes it made.
fn stop_at(variant: &Variant, disk: &OnDisk, layer: usize) -> Vec<String> {
    let options = CheckpointOptions {
        interval: Duration::ZERO,
        ..CheckpointOptions::default()
    };
    let mut notes = Vec::new();
    let mut note = |text: &str| notes.push(text.to_owned());
    let checkpoints = Checkpointer::new(&disk.dir, variant, options, &mut note);
    let mut failing = Stopping::new(checkpoints, Stop::SaveAfter(layer));
    let plan = Plan::new(variant, Method::TwoBit).on_disk(disk.clone());
    if plan.solve_on_disk_with(&mut failing, &mut |_| {}).is_ok() {
        eprintln!("the search ended before layer {layer}: choose a lower one");
        std::process::exit(2);
    }
    drop(failing);
    notes
}

/// Copies every file of `from` into `to`, made empty first.
fn copy_dir(from: &Path, to: &Path) {
    let _ = std::fs::remove_dir_all(to);
    std::fs::create_dir_all(to).expect("a directory to resume in");
    for entry in std::fs::read_dir(from).expect("the stopped search's directory") {
        let entry = entry.expect("a file of it");
        std::fs::copy(entry.path(), to.join(entry.file_name())).expect("a copy");
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let number = |k: usize| args.get(k).and_then(|a| a.parse::<u64>().ok());
    let (Some(name), Some(mib), Some(layer)) = (args.first(), number(1), number(2)) else {
        eprintln!("usage: resume VARIANT MIB LAYER [--runs N] [--dir DIR]");
        std::process::exit(2);
    };
    let flag = |f: &str| args.iter().position(|a| a == f).and_then(|i| args.get(i + 1));
    let runs = flag("--runs").and_then(|r| r.parse().ok()).unwrap_or(3);
    let dir = flag("--dir").map_or_else(|| std::env::temp_dir().join("bishops-resume"), PathBuf::from);
    let variant = Variant::named(name).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2)
    });
    let disk = |dir: PathBuf| OnDisk {
        dir,
        max_bytes: mib << 20,
        kept: true,
    };
    let stopped = dir.join("stopped");
    let checkpoint = stopped.join(format!(".{name}.a1.checkpoint"));
    if checkpoint.exists() {
        println!(
            "{name}: the search stopped at layer {layer} in {} again",
            stopped.display()
        );
    } else {
        let _ = std::fs::remove_dir_all(&stopped);
        std::fs::create_dir_all(&stopped).expect("a directory to search in");
        let started = Instant::now();
        stop_at(&variant, &disk(stopped.clone()), layer as usize);
        println!(
            "{name}: searched on disk to layer {layer} with {mib} MiB in memory, stopped there: {:.2} s",
            started.elapsed().as_secs_f64()
        );
    }
    let mut times = Vec::new();
    for run in 0..runs {
        let resumed = dir.join("resumed");
        copy_dir(&stopped, &resumed);
        let started = Instant::now();
        let notes = stop_at(&variant, &disk(resumed.clone()), layer as usize);
        let took = started.elapsed().as_secs_f64();
        if run == 0 {
            let told = |n: &&String| n.contains("resum") || n.contains("kept") || n.contains("completed");
            notes.iter().filter(told).for_each(|n| println!("  {n}"));
        }
        println!("resume {}: {took:.2} s", run + 1);
        times.push(took);
        let _ = std::fs::remove_dir_all(&resumed);
    }
    times.sort_by(f64::total_cmp);
    println!("median of {runs}: {:.2} s", times[times.len() / 2]);
}
