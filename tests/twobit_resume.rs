//! Checkpoints of the two-bit search, at the library level: a search stopped
//! after any layer, the last one included, leaves a checkpoint; the next
//! solve resumes from it, reports the same layers and gives the answer of a
//! fresh solve, the hardest positions of a mirrored class included (the
//! checkpoint carries the newest layer's, as the table no longer tells the
//! last layer from older ones); `restart` discards it; a damaged checkpoint
//! (its table, its summary, its hardest positions, its length), one of the
//! former format, or one of the byte search, is reported and ignored, and a
//! two-bit checkpoint is not taken by the byte search either.

use std::path::{Path, PathBuf};
use std::time::Duration;

use bishops::checkpoint::{self, CheckpointOptions, Checkpointer};
use bishops::solver::TwoBitSolution;
use bishops::solver::{Event, Method, Plan, Solution};
use bishops::{Class, Error, Variant};

/// A scratch directory of this test process, empty; removed by [`Scratch`]'s drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("bishops-twobit-resume-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Options that save only when the hook asks, unless `interval` says otherwise.
fn options(stop_after: Option<u16>, restart: bool) -> CheckpointOptions {
    CheckpointOptions {
        interval: Duration::from_secs(100_000),
        stop_after: stop_after.map(|l| (None, l)),
        stop_fold_after: None,
        fold_step_words: None,
        write: bishops::storage::Resumable::DEFAULT,
        restart,
    }
}

/// The layers a solve reports: (class, depth, found, total).
type Layers = Vec<(Class, u16, u64, u64)>;

/// A two-bit solve of `variant` checkpointing into `dir`: its result, its
/// notes and the layers it reported.
fn two_bit(
    dir: &Path,
    variant: &Variant,
    options: CheckpointOptions,
) -> (bishops::Result<TwoBitSolution>, Vec<String>, Layers) {
    let mut notes = Vec::new();
    let mut layers = Vec::new();
    let result = {
        let mut note = |s: &str| notes.push(s.to_owned());
        let mut checkpoints = Checkpointer::new(dir, variant, options, &mut note);
        Plan::new(variant, Method::Tight).solve_two_bit_with(&mut checkpoints, &mut |e| {
            if let Event::Layer {
                class,
                depth,
                found,
                total,
                ..
            } = e
            {
                layers.push((class, depth, found, total));
            }
        })
    };
    (result, notes, layers)
}

/// A byte (tight) solve of `variant` checkpointing into `dir`, and its notes.
fn byte(dir: &Path, variant: &Variant, options: CheckpointOptions) -> (bishops::Result<Solution>, Vec<String>) {
    let mut notes = Vec::new();
    let result = {
        let mut note = |s: &str| notes.push(s.to_owned());
        let mut checkpoints = Checkpointer::new(dir, variant, options, &mut note);
        Plan::new(variant, Method::Tight).solve_with(&mut checkpoints, &mut |_| {})
    };
    (result, notes)
}

/// Insists that `got` is the answer of `want`: every class's statistics
/// and the residue of every legal position.
fn same(name: &str, got: &TwoBitSolution, want: &TwoBitSolution) {
    assert_eq!(got.classes.len(), want.classes.len());
    for (k, (g, w)) in got.classes.iter().zip(&want.classes).enumerate() {
        assert_eq!(g.stats, w.stats, "{name} class {k}");
        for i in 0..w.index.len() {
            let part = w.index.unrank(i);
            assert_eq!(
                got.residue(k, part),
                want.residue(k, part),
                "{name} class {k} index {i}"
            );
        }
    }
}

/// A fresh two-bit solve of `variant`, and the layers it reports.
fn fresh(variant: &Variant) -> (TwoBitSolution, Layers) {
    let mut layers = Vec::new();
    let solution = Plan::new(variant, Method::Tight)
        .solve_two_bit(&mut |e| {
            if let Event::Layer {
                class,
                depth,
                found,
                total,
                ..
            } = e
            {
                layers.push((class, depth, found, total));
            }
        })
        .unwrap();
    (solution, layers)
}

/// Stops a two-bit solve of `variant` after `layer`, insisting that it
/// stops and leaves the checkpoint of class 0; returns that file.
fn stop(dir: &Path, variant: &Variant, layer: u16) -> PathBuf {
    let (result, _, _) = two_bit(dir, variant, options(Some(layer), false));
    match result {
        Err(Error::Stopped(message)) => assert!(message.contains(&format!("stopped after layer {layer}")), "{message}"),
        other => panic!("{} did not stop after layer {layer}: {other:?}", variant.name()),
    }
    let file = checkpoint::path(dir, variant.name(), variant.classes()[0].class);
    assert!(file.exists(), "{} left no checkpoint", variant.name());
    file
}

#[test]
fn stopped_two_bit_solves_resume_to_the_fresh_answer() {
    for name in ["7x6", "9x6", "5x4-full", "7x5-full", "8x4-full"] {
        let variant = Variant::named(name).unwrap();
        let plan = Plan::new(&variant, Method::Tight);
        let mirrored: Vec<bool> = (0..variant.classes().len()).map(|k| plan.is_mirrored(k)).collect();
        if name == "5x4-full" {
            assert_eq!(
                mirrored,
                [false, true],
                "5x4-full searches one class and mirrors the other"
            );
        }
        let (want, want_layers) = fresh(&variant);
        let deepest = want.classes[0].stats.histogram.len() as u16 - 1;
        // After the last layer the search does not know yet that it is the
        // last: the resume finds nothing more and takes the hardest
        // positions from the checkpoint.
        for layer in [1, deepest / 2, deepest - 1, deepest] {
            let dir = Scratch::new(&format!("{name}-{layer}"));
            stop(&dir.0, &variant, layer);
            // A mirrored class is never searched, so never saved.
            for (k, spec) in variant.classes().iter().enumerate().skip(1) {
                if mirrored[k] {
                    assert!(!checkpoint::path(&dir.0, name, spec.class).exists());
                }
            }
            let (got, notes, layers) = two_bit(&dir.0, &variant, options(None, false));
            let got = got.unwrap();
            assert!(
                notes
                    .iter()
                    .any(|n| n.starts_with("resuming") && n.contains(&format!("at layer {layer},"))),
                "{name} after {layer}: {notes:?}"
            );
            assert_eq!(
                layers, want_layers,
                "{name} after {layer}: the saved layers are reported again"
            );
            same(name, &got, &want);
        }
    }
}

/// Replaces `from` by `to` in the header line of the checkpoint `bytes`.
fn edit_header(bytes: &mut Vec<u8>, from: &str, to: &str) {
    let magic = b"bishops checkpoint\n".len();
    let end = magic + bytes[magic..].iter().position(|&b| b == b'\n').unwrap();
    let header = std::str::from_utf8(&bytes[magic..end]).unwrap();
    assert!(header.contains(from), "{header}");
    let edited = header.replacen(from, to, 1);
    bytes.splice(magic..end, edited.into_bytes());
}

#[test]
fn a_finished_two_bit_search_resumes_without_searching() {
    let variant = Variant::named("7x6").unwrap();
    let (want, want_layers) = fresh(&variant);
    let dir = Scratch::new("finished");
    let every_layer = CheckpointOptions {
        interval: Duration::ZERO,
        ..options(None, false)
    };
    let (first, _, _) = two_bit(&dir.0, &variant, every_layer);
    same("7x6", &first.unwrap(), &want);
    let (got, notes, layers) = two_bit(&dir.0, &variant, options(None, false));
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("resuming") && n.contains("the class's search is over")),
        "{notes:?}"
    );
    assert_eq!(layers, want_layers);
    same("7x6", &got.unwrap(), &want);
}

#[test]
fn restart_discards_a_two_bit_checkpoint() {
    let variant = Variant::named("7x6").unwrap();
    let (want, _) = fresh(&variant);
    let dir = Scratch::new("restart");
    let file = stop(&dir.0, &variant, 4);
    let (got, notes, _) = two_bit(&dir.0, &variant, options(None, true));
    assert!(notes.iter().any(|n| n.starts_with("--restart: removed")), "{notes:?}");
    assert!(!notes.iter().any(|n| n.starts_with("resuming")), "{notes:?}");
    assert!(!file.exists());
    same("7x6", &got.unwrap(), &want);
}

#[test]
fn a_damaged_two_bit_checkpoint_is_reported_and_ignored() {
    let variant = Variant::named("9x6").unwrap();
    let (want, _) = fresh(&variant);
    type Damage = fn(&mut Vec<u8>);
    let damages: [(&str, Damage); 9] = [
        ("fails its checksum", |b| {
            let at = b.len() - b.len() / 3;
            b[at] ^= 0x10;
        }),
        ("fails its checksum", |b| {
            let at = b.len() - 1;
            b[at] ^= 0x01;
        }),
        ("bytes long", |b| b.truncate(b.len() - 8)),
        ("bytes long", |b| b.truncate(b.len() / 2)),
        ("is not a checkpoint", |b| b[0] = b'B'),
        // The summary, the last words of the payload.
        ("fails its checksum", |b| {
            let at = b.len() - 3;
            b[at] ^= 0x01;
        }),
        // A hardest position in the header changed: the header's seal fails.
        ("fails its header checksum", |b| {
            edit_header(b, "\"hardest\":[", "\"hardest\":[1,")
        }),
        // And with the header sealed again, the payload's checksum, which
        // covers the hardest positions too.
        ("fails its checksum", |b| {
            edit_header(b, "\"hardest\":[", "\"hardest\":[1,");
            bishops::checkpoint::reseal(b);
        }),
        // An older format (4: a byte table kept its cells alone).
        ("is of format 4, not 5", |b| {
            edit_header(b, "\"format\":5", "\"format\":4")
        }),
    ];
    for (said, damage) in damages {
        let dir = Scratch::new("damaged");
        let file = stop(&dir.0, &variant, 6);
        let mut bytes = std::fs::read(&file).unwrap();
        damage(&mut bytes);
        std::fs::write(&file, &bytes).unwrap();
        let (got, notes, _) = two_bit(&dir.0, &variant, options(None, false));
        assert!(
            notes.iter().any(|n| n.contains(said) && n.contains("ignoring it")),
            "{said}: {notes:?}"
        );
        assert!(!notes.iter().any(|n| n.starts_with("resuming")), "{notes:?}");
        same("9x6", &got.unwrap(), &want);
    }
}

#[test]
fn byte_and_two_bit_checkpoints_are_not_taken_for_each_other() {
    let variant = Variant::named("7x6").unwrap();
    let (want, _) = fresh(&variant);
    let bytes_want = Plan::new(&variant, Method::Tight).solve(&mut |_| {}).unwrap();

    // A byte checkpoint, then a two-bit solve.
    let dir = Scratch::new("byte-then-two-bit");
    let (stopped, _) = byte(&dir.0, &variant, options(Some(5), false));
    assert!(matches!(stopped, Err(Error::Stopped(_))), "{stopped:?}");
    let (got, notes, _) = two_bit(&dir.0, &variant, options(None, false));
    assert!(
        notes
            .iter()
            .any(|n| n.contains("is for method tight, not two-bit") && n.contains("ignoring it")),
        "{notes:?}"
    );
    same("7x6", &got.unwrap(), &want);

    // A two-bit checkpoint, then a byte solve.
    let dir = Scratch::new("two-bit-then-byte");
    stop(&dir.0, &variant, 5);
    let (got, notes) = byte(&dir.0, &variant, options(None, false));
    assert!(
        notes
            .iter()
            .any(|n| n.contains("is for method two-bit, not tight") && n.contains("ignoring it")),
        "{notes:?}"
    );
    let got = got.unwrap();
    for (g, w) in got.classes.iter().zip(&bytes_want.classes) {
        assert_eq!(g.stats, w.stats);
    }
    assert_eq!(got.class_cells(0), bytes_want.class_cells(0));
}

#[test]
fn a_two_bit_checkpoint_of_another_variant_is_not_trusted() {
    let seven = Variant::named("7x6").unwrap();
    let nine = Variant::named("9x6").unwrap();
    let (want, _) = fresh(&nine);
    let dir = Scratch::new("foreign");
    let file = stop(&dir.0, &seven, 3);
    std::fs::rename(&file, checkpoint::path(&dir.0, "9x6", nine.classes()[0].class)).unwrap();
    let (got, notes, _) = two_bit(&dir.0, &nine, options(None, false));
    assert!(
        notes.iter().any(|n| n.contains("is for variant 7x6, not 9x6")),
        "{notes:?}"
    );
    same("9x6", &got.unwrap(), &want);
}
