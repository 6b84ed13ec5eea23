//! `check`: a solved database proven (or sampled) against the rules.

use std::io::Write;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::args::CheckArgs;
use super::output::{progress_bar, write_json, write_text};
use crate::check::{self, CheckOptions};
use crate::error::Result;
use crate::variant::Variant;

/// `bishops check`: every position (or a seeded sample) against the rules;
/// exits 1 naming the first bad position.
pub fn check(db: &Path, args: CheckArgs, out: &mut dyn Write) -> Result<()> {
    let variant = Variant::named(&args.variant)?;
    let seed = args.seed.unwrap_or_else(|| {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64)
    });
    let options = CheckOptions {
        sample: args.sample,
        seed,
    };
    let bar = progress_bar(Some(1));
    bar.set_message(format!("check {}", variant.name()));
    bar.enable_steady_tick(Duration::from_millis(200));
    let report = check::check(db, &variant, options, &mut |done, total| {
        bar.set_length(total);
        bar.set_position(done);
    });
    bar.finish_and_clear();
    let report = report?;
    if args.json {
        return write_json(out, &report);
    }
    let mut text = format!(
        "{}: {} of {} positions checked against the rules in {:.2} s{}: ",
        report.variant,
        report.checked,
        report.legal,
        report.seconds,
        report.seed.map_or(String::new(), |s| format!(" (sample, seed {s})")),
    );
    text += if report.proof {
        "every rule holds, so the table is the true remoteness of every position\n"
    } else {
        "every rule holds on the sample\n"
    };
    for c in &report.classes {
        text += &format!("  class {}: {} of {} positions", c.class, c.checked, c.legal);
        if !c.histogram.is_empty() {
            text += &format!(
                ", remoteness 0..{}, counts equal the stored histogram",
                c.histogram.len() - 1
            );
        }
        text += "\n";
    }
    write_text(out, &text)
}
