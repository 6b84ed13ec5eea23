//! Searches class a1 of a variant by two bits a position twice, in memory
//! and with its table on disk under a memory cap, and compares the two:
//! what the cap costs in time, and what the disk read and wrote.
//!
//! ```sh
//! cargo run --release --example on_disk -- 11x8 32          # 32 MiB of table in memory
//! cargo run --release --example on_disk -- 11x8 32 --disk-only
//! ```
//!
//! The table's file goes to the current directory (`--dir DIR` to choose)
//! and is removed when the search ends.

use std::path::PathBuf;
use std::time::Instant;

use bishops::Variant;
use bishops::solver::NoCheckpoints;
use bishops::solver::OnDisk;
use bishops::solver::search::{two_bit_on_disk, two_bit_with};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(name), Some(mib)) = (args.first(), args.get(1).and_then(|m| m.parse::<u64>().ok())) else {
        eprintln!("usage: on_disk VARIANT MIB [--disk-only] [--dir DIR]");
        std::process::exit(2);
    };
    let disk_only = args.iter().any(|a| a == "--disk-only");
    let dir = args
        .iter()
        .position(|a| a == "--dir")
        .and_then(|i| args.get(i + 1))
        .map_or_else(|| PathBuf::from("."), PathBuf::from);
    let variant = Variant::named(name).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2)
    });
    let spec = &variant.classes()[0];
    let index = spec.tight_index();
    let codes_mib = index.len().div_ceil(4) as f64 / f64::from(1 << 20);
    println!(
        "{name} class a1: {} positions, {codes_mib:.1} MiB of codes",
        index.len()
    );
    let memory = (!disk_only).then(|| {
        let started = Instant::now();
        let share = two_bit_with(name, spec, &index, None, &mut NoCheckpoints, &mut |_| {}).expect("a search");
        println!("in memory: {:.2} s", started.elapsed().as_secs_f64());
        share.table
    });
    let disk = OnDisk {
        dir,
        max_bytes: mib << 20,
        kept: false,
    };
    let started = Instant::now();
    let (table, stats) = two_bit_on_disk(name, spec, &index, &disk, &mut |_| {}).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(1)
    });
    let took = started.elapsed().as_secs_f64();
    println!(
        "on disk, {mib} MiB, segments of {} KiB: {took:.2} s; read {} and wrote {} segments, {:.1} MiB ({:.1} tables), \
         {} images spooled ({:.1} MiB), {:.2} s reading and writing, {} loaded on demand",
        disk.segment_bytes() >> 10,
        stats.reads,
        stats.writes,
        stats.bytes as f64 / f64::from(1 << 20),
        stats.bytes as f64 / f64::from(1 << 20) / codes_mib,
        stats.spooled,
        (8 * stats.spooled) as f64 / f64::from(1 << 20),
        stats.waited_ns as f64 / 1e9,
        stats.demand
    );
    if let Some(memory) = memory {
        // Read back whole to compare: the example's tables fit.
        println!("the same codes: {}", table.load().is_ok_and(|table| memory == table));
    }
}
