//! Times questions through the library on one thread, with no server in
//! between: every position of a file (one position string a line, as
//! `examples/positions.rs` writes them) probed in turn, as `query` and the
//! server's `/api/query` probe one.
//!
//! ```text
//! cargo run --release --example probes -- DB-DIR POSITIONS [PASSES] [MIB]
//! ```
//!
//! Prints, for each pass, the questions a second and the median and
//! slowest question's time. The first pass reads from the file; later ones
//! find what the first left in the cache. With `MIB`, the table is first
//! held in that many MiB of memory ([`bishops::tablebase::Table::hold`], as
//! `serve --hold` does), so that no pass reads the file.

use std::time::Instant;

use bishops::{Position, Tablebase};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(dir), Some(file)) = (args.first(), args.get(1)) else {
        eprintln!("usage: probes DB-DIR POSITIONS [PASSES] [MIB]");
        std::process::exit(2);
    };
    let passes: usize = args.get(2).and_then(|p| p.parse().ok()).unwrap_or(1);
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| {
        eprintln!("cannot read {file}: {e}");
        std::process::exit(1);
    });
    let positions: Vec<Position> = text.lines().map(|l| l.parse().expect("a position a line")).collect();
    let hold: Option<usize> = args.get(3).map(|m| m.parse::<usize>().expect("MIB, a number") << 20);
    let mut tablebase = Tablebase::new(dir).with_connections(1);
    if let Some(bytes) = hold {
        tablebase = tablebase.with_cache_bytes(bytes);
    }
    let table = tablebase.table(&positions[0], None).expect("a solved table");
    if hold.is_some() {
        let t = Instant::now();
        let held = table.hold(&|_| {}).expect("the table held");
        println!(
            "held {} positions in {} blocks, {:.1} MiB{}, {:.1} s",
            held.positions,
            held.blocks,
            held.bytes as f64 / f64::from(1 << 20),
            if held.full { " (memory full)" } else { "" },
            t.elapsed().as_secs_f64()
        );
    }
    for pass in 1..=passes {
        let mut times = Vec::with_capacity(positions.len());
        let all = Instant::now();
        for position in &positions {
            let t = Instant::now();
            table.probe(position).expect("a probe");
            times.push(t.elapsed().as_secs_f64());
        }
        let seconds = all.elapsed().as_secs_f64();
        times.sort_by(f64::total_cmp);
        println!(
            "pass {pass}: {} questions in {seconds:.2} s, {:.0} a second, median {:.2} ms, slowest {:.2} ms",
            positions.len(),
            positions.len() as f64 / seconds,
            times[times.len() / 2] * 1e3,
            times[times.len() - 1] * 1e3
        );
    }
}
