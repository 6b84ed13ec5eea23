//! Times one checkpoint of the two-bit search: stops a solve after a layer
//! (writing one checkpoint), reads it back as a resume would, then resumes
//! and stops after the next layer (writing a second one).
//!
//! `cargo run --release --example twobit_checkpoint -- [VARIANT [LAYER [DIR]]]`
//! (default `11x8`, layer 3, a scratch directory under the system's
//! temporary directory, removed at the end).

use std::time::{Duration, Instant};

use bishops::checkpoint::{self, CheckpointOptions, Checkpointer};
use bishops::solver::{Coding, ShareCheckpoints, Wanted};
use bishops::solver::{Method, Plan};
use bishops::{Error, Variant};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let name = args.next().unwrap_or_else(|| "11x8".to_owned());
    let layer: u16 = args.next().map_or(Ok(3), |l| l.parse())?;
    let dir = args.next().map_or_else(
        || std::env::temp_dir().join(format!("bishops-twobit-checkpoint-{}", std::process::id())),
        Into::into,
    );
    let variant = Variant::named(&name)?;
    let plan = Plan::new(&variant, Method::Tight);
    let legal = plan.legal()[0];
    // Whether the other class is this one's mirror image, whose hardest
    // positions the checkpoint then carries.
    let mirrored = (1..plan.legal().len()).any(|k| plan.is_mirrored(k));
    let spec = &variant.classes()[0];
    let index = spec.tight_index();
    let class = spec.class;
    let options = |stop: u16| CheckpointOptions {
        interval: Duration::from_secs(1 << 30),
        stop_after: Some((None, stop)),
        stop_fold_after: None,
        fold_step_words: None,
        write: bishops::storage::Resumable::DEFAULT,
        restart: false,
    };
    let mut note = |s: &str| eprintln!("note: {s}");

    for stop in [layer, layer + 1] {
        let mut checkpoints = Checkpointer::new(&dir, &variant, options(stop), &mut note);
        let began = Instant::now();
        match Plan::new(&variant, Method::Tight).solve_two_bit_with(&mut checkpoints, &mut |_| {}) {
            Err(Error::Stopped(_)) => {}
            other => return Err(format!("the solve did not stop after layer {stop}: {:?}", other.err()).into()),
        }
        let (count, seconds, bytes) = checkpoints.written;
        println!(
            "{name} class {} ({legal} legal): stopped after layer {stop} in {:.2} s; wrote {count} checkpoint of {bytes} bytes in {seconds:.3} s ({:.0} MB/s)",
            class.name(),
            began.elapsed().as_secs_f64(),
            bytes as f64 / seconds / 1e6
        );
    }

    let file = checkpoint::path(&dir, &name, class);
    let size = std::fs::metadata(&file)?.len();
    let mut checkpoints = Checkpointer::new(&dir, &variant, options(u16::MAX), &mut note);
    let began = Instant::now();
    let watch = plan.watched(0);
    let wanted = Wanted {
        class,
        index: index.blocks(),
        coding: Coding::TwoBit,
        blocks: 0..index.white_sets(),
        range: 0..index.len(),
        mirrored,
        watch: &watch,
        on_disk: None,
    };
    let resumed = checkpoints.resume(&wanted).ok_or("the checkpoint was not taken")?;
    let seconds = began.elapsed().as_secs_f64();
    println!(
        "read and checked {size} bytes at layer {} in {seconds:.3} s ({:.0} MB/s)",
        resumed.found.len() - 1,
        size as f64 / seconds / 1e6
    );
    // The part of that which is computing, not the disk: the consistency
    // check, again on what was read.
    let began = Instant::now();
    checkpoint::check(&resumed, &wanted)?;
    println!(
        "of which the consistency check takes {:.3} s",
        began.elapsed().as_secs_f64()
    );
    drop(checkpoints);
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}
