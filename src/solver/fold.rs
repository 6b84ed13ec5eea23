//! A search on disk whose tables are folded onto their orbits before the
//! database is written ([`Plan::solve_on_disk_folded_with`]), so that a
//! table and the database never need the disk of both whole: on 13x10 the
//! table is 50.2 GB, its fold 25.1 GB.
//!
//! The fold starts once every class is searched. A record of each class's
//! fold is written first ([`FoldProgress`]), with what the search found
//! (each class's statistics and the time it took, the note below), and
//! from then on the fold, not the search's checkpoint, is what a solve
//! resumes from: the table's file is given back as it is folded, so the
//! search could not be resumed from it any more. A solve that finds the
//! records goes on with the folds and searches nothing.

use std::fs::OpenOptions;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::table::disk::kept_path;
use super::{ClassSolution, ClassStats, ClassTable, DiskStats, Event, HARDEST, Plan, ShareCheckpoints, Solution};
use crate::board::Class;
use crate::error::{Error, Result};
use crate::mod3::file::Mod3File;
use crate::mod3::fold::{FileTable, FoldProgress, Folded, fold_file};
use crate::orbits::OrbitIndex;
use crate::symmetry::Symmetries;
use crate::tight::TightIndex;
use crate::variant::{Variant, Width};

/// The orbits' file and the fold's record of the class `class` of the
/// variant `variant`, in `dir` (as `checkpoint::table_files` names them).
pub fn fold_files(dir: &Path, variant: &str, class: Class) -> (PathBuf, PathBuf) {
    let orbits = format!(".{variant}.{}.orbits", class.name());
    (dir.join(&orbits), dir.join(format!("{orbits}.fold")))
}

/// What a fold's record notes of the search: the time it took and every
/// class's statistics, as little-endian words.
fn note(elapsed: Duration, stats: &[ClassStats]) -> Vec<u8> {
    let mut words = vec![elapsed.as_nanos() as u64, stats.len() as u64];
    for s in stats {
        words.extend([s.legal, s.reachable, s.histogram.len() as u64]);
        words.extend(&s.histogram);
        words.push(s.hardest.len() as u64);
        words.extend(&s.hardest);
    }
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// The search's time and statistics a note holds, checked against what
/// the plan knows: a class for each of the variant's, of its legal
/// positions, counts that add up, hashes of the class. `None` when it is
/// not such a note.
fn read_note<W: Width>(bytes: &[u8], plan: &Plan<'_, W>) -> Option<(Duration, Vec<ClassStats>)> {
    if !bytes.len().is_multiple_of(8) {
        return None;
    }
    let mut words = bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")));
    let elapsed = Duration::from_nanos(words.next()?);
    let classes = words.next()?;
    let specs = plan.variant.specs::<W>();
    if classes != specs.len() as u64 {
        return None;
    }
    let mut stats = Vec::new();
    for (spec, index) in specs.iter().zip(&plan.indices) {
        let (legal, reachable, len) = (words.next()?, words.next()?, words.next()?);
        if legal != index.len() || len > 256 {
            return None;
        }
        let histogram: Vec<u64> = (0..len).map(|_| words.next()).collect::<Option<_>>()?;
        let hardest = words.next()?;
        if hardest > HARDEST as u64 {
            return None;
        }
        let hardest: Vec<u64> = (0..hardest).map(|_| words.next()).collect::<Option<_>>()?;
        let counted = histogram.iter().try_fold(0u64, |a, &n| a.checked_add(n))?;
        if counted != reachable || reachable > legal || hardest.iter().any(|&h| h >= spec.index.len()) {
            return None;
        }
        stats.push(ClassStats {
            legal,
            reachable,
            histogram,
            hardest,
        });
    }
    words.next().is_none().then_some((elapsed, stats))
}

/// The cache of the table's file while it is folded: its pages are read
/// once each, in order, by the blocks of a batch at a time.
const FOLD_READ_CACHE: u64 = 64 << 20;

/// What [`Plan::solve_on_disk_folded_with`] gives: the solution answered
/// from the folds, what the disk did for each class searched (nothing
/// when the folds resumed), and the time the folds took.
pub type Folds<W> = (Solution<FileTable<W>, W>, Vec<DiskStats>, Duration);

/// The orbit index of each class of `variant` whose tight index `indices`
/// gives (`None` for a class mirrored, which is not folded), or the class
/// that cannot be folded: its only symmetry besides the identity must
/// exchange the colours.
fn orbit_indices<'i, W: Width>(
    variant: &Variant,
    indices: impl Iterator<Item = Option<&'i TightIndex<W>>>,
) -> std::result::Result<Vec<Option<OrbitIndex<W>>>, Class> {
    variant
        .specs::<W>()
        .iter()
        .zip(indices)
        .map(|(spec, index)| match index {
            None => Ok(None),
            Some(index) => {
                let group = Symmetries::of(&spec.geometry, spec.goal);
                OrbitIndex::new(index.clone(), &group).map(Some).ok_or(spec.class)
            }
        })
        .collect()
}

impl<W: Width> Plan<'_, W> {
    /// The orbit index of each class this plan searches (`None` for a
    /// class it mirrors), or the name of a searched class that cannot be
    /// folded ([`orbit_indices`]).
    #[cfg(test)]
    fn orbit_indices(&self) -> std::result::Result<Vec<Option<OrbitIndex<W>>>, Class> {
        let searched = self.indices.iter().enumerate();
        orbit_indices(
            self.variant,
            searched.map(|(k, index)| (!self.is_mirrored(k)).then_some(index)),
        )
    }

    /// The first class this plan searches that cannot be folded onto its
    /// orbits, if one cannot: its one symmetry besides the identity must
    /// exchange the colours. Asked of the symmetries alone, without the
    /// orbit indices.
    fn unfoldable(&self) -> Option<Class> {
        let specs = self.variant.specs::<W>();
        let mut searched = specs.iter().enumerate().filter(|&(k, _)| !self.is_mirrored(k));
        searched
            .find(|(_, spec)| {
                let (white, black) = spec.counts();
                !OrbitIndex::<W>::applies(&Symmetries::of(&spec.geometry, spec.goal), white, black)
            })
            .map(|(_, spec)| spec.class)
    }

    /// Whether every class this plan searches can be folded onto its
    /// orbits: its one symmetry besides the identity exchanges the colours
    /// (12x10, 13x10 and 11x10 among the standard boards). Asked of the
    /// symmetries alone: a plan asks it before it knows that the memory
    /// for the orbit indices is there.
    pub fn can_fold(&self) -> bool {
        self.unfoldable().is_none()
    }

    /// As [`solve_on_disk_with`](Self::solve_on_disk_with), each searched
    /// class's table then folded onto its orbits ([`fold_file`]), and the
    /// solution answered from the folds, with the time the folds took. When the records of an earlier
    /// fold are there, nothing is searched: the folds go on from them.
    /// A fold records where it stands every `step_words` words of its
    /// output ([`FOLD_STEP_WORDS`](crate::mod3::fold::FOLD_STEP_WORDS) but
    /// in tests), and `stop` is asked after each step whether to stop there
    /// (a test's interruption).
    ///
    /// # Errors
    ///
    /// [`Error::Usage`] when the plan is not on disk with checkpoints, or
    /// a class cannot be folded; as
    /// [`solve_on_disk_with`](Self::solve_on_disk_with); [`Error::Io`]
    /// when a fold's record or file is not what was written, or the disk
    /// fails; [`Error::Stopped`].
    pub fn solve_on_disk_folded_with(
        self,
        checkpoints: &mut dyn ShareCheckpoints,
        observe: &mut dyn FnMut(Event),
        (step_words, stop): (u64, &mut dyn FnMut(u64) -> bool),
    ) -> Result<Folds<W>> {
        let disk = match &self.disk {
            Some(disk) if disk.kept => disk.clone(),
            _ => {
                return Err(Error::Usage(
                    "a table is folded onto its orbits only when it is on disk with checkpoints".into(),
                ));
            }
        };
        let (variant, segment_words) = (self.variant, (disk.segment_bytes() / 8) as usize);
        let unfoldable = |class: Class| {
            Error::Usage(format!(
                "class {} of {} has no one symmetry that exchanges the colours: its table cannot be folded onto its orbits",
                class.name(),
                variant.name()
            ))
        };
        if let Some(class) = self.unfoldable() {
            return Err(unfoldable(class));
        }
        let name = variant.name();
        let classes: Vec<Class> = variant.specs::<W>().iter().map(|s| s.class).collect();
        let codes = |class: Class| kept_path(&disk, &format!(".{name}.{}", class.name()));
        let searched: Vec<bool> = (0..classes.len()).map(|k| !self.is_mirrored(k)).collect();
        let begun = classes
            .iter()
            .zip(&searched)
            .any(|(&class, &searched)| searched && fold_files(&disk.dir, name, class).1.exists());
        // The orbit indices (48 bytes a white set in 128-bit words, 378 MiB
        // on 13x10) are built when the folds need them: before a search
        // they would hold memory its table is given.
        let (solution, stats, mut orbits) = if begun {
            let indices = self.indices.iter().zip(&searched).map(|(i, &s)| s.then_some(i));
            let orbits = orbit_indices(variant, indices).map_err(unfoldable)?;
            let records = orbits
                .iter()
                .zip(&classes)
                .map(|(o, &class)| match o {
                    Some(o) => FoldProgress::read(&fold_files(&disk.dir, name, class).1, o, segment_words),
                    None => Ok(None),
                })
                .collect::<Result<Vec<_>>>()?;
            let searched = orbits.iter().filter(|o| o.is_some()).count();
            let found = records.iter().filter(|r| r.is_some()).count();
            if found != searched {
                return Err(Error::Io(
                    disk.dir.clone(),
                    std::io::Error::other(format!(
                        "{found} of the {searched} folds of {name}'s tables left a record: they cannot be resumed, solve again with --restart"
                    )),
                ));
            }
            let first = records.iter().flatten().next().expect("a record");
            let (elapsed, stats) = read_note(first.note(), &self).ok_or_else(|| {
                Error::Io(
                    fold_files(&disk.dir, name, classes[0]).1,
                    std::io::Error::other("its note of what the search found is not one of this variant's"),
                )
            })?;
            let mut tables = Vec::new();
            for ((record, &class), index) in records.into_iter().zip(&classes).zip(&self.indices) {
                tables.push(match record {
                    None => None,
                    Some(progress) => {
                        let path = codes(class);
                        let file = OpenOptions::new()
                            .read(true)
                            .write(true)
                            .open(&path)
                            .map_err(|e| Error::Io(path.clone(), e))?;
                        let source = Mod3File::open_released(
                            (file, path),
                            index.len(),
                            segment_words,
                            (progress.source_seals(), progress.released() as usize),
                            disk.max_bytes,
                            None,
                        )?;
                        Some((source, progress))
                    }
                });
            }
            (
                self.assemble(tables, stats, elapsed),
                vec![DiskStats::default(); searched],
                orbits,
            )
        } else {
            let (solution, stats) = self.solve_on_disk_with(checkpoints, observe)?;
            let all: Vec<ClassStats> = solution.classes.iter().map(|c| c.stats.clone()).collect();
            let note = note(solution.elapsed, &all);
            // Every record before any table is given back.
            let solution = solution.try_map(|file| {
                let progress = FoldProgress::start(&file, note.clone());
                Ok::<_, Error>((file, progress))
            })?;
            for (class, c) in classes.iter().zip(&solution.classes) {
                if let Some((_, progress)) = c.own() {
                    progress.write(&fold_files(&disk.dir, name, *class).1)?;
                }
            }
            let indices = solution.classes.iter().map(|c| c.own().map(|_| &c.index));
            let orbits = orbit_indices(variant, indices).map_err(unfoldable)?;
            (solution, stats, orbits)
        };
        let started = std::time::Instant::now();
        let mut k = 0;
        let solution = solution.try_map(|(source, progress)| {
            // The classes with a table, in order.
            while orbits[k].is_none() {
                k += 1;
            }
            let o = orbits[k].take().expect("a searched class");
            let (out, record) = fold_files(&disk.dir, name, classes[k]);
            k += 1;
            // The orbit index's tables come out of the memory the table
            // had; the table's file, read once in order, needs little.
            let max_bytes = disk.max_bytes.saturating_sub(o.table_bytes()).max(1 << 20);
            let source = source.with_cache(FOLD_READ_CACHE.min(max_bytes));
            // Written from, the fold keeps half its memory for its pages
            // and half for the band it unfolds ([`Folded::with_bands`]).
            let folded = fold_file(
                &source,
                &o,
                (&out, &record),
                segment_words,
                step_words,
                progress,
                max_bytes / 2,
                stop,
            )?;
            Ok::<_, Error>(FileTable::Folded(Folded::new(o, folded).with_bands(max_bytes / 2)))
        })?;
        Ok((solution, stats, started.elapsed()))
    }

    /// The solution of this plan's classes from `tables` (`None` for a
    /// class mirrored), their statistics and the search's time.
    fn assemble<D>(self, tables: Vec<Option<D>>, stats: Vec<ClassStats>, elapsed: Duration) -> Solution<D, W> {
        let specs = self.variant.specs::<W>();
        let classes = specs
            .iter()
            .zip(self.indices)
            .zip(self.mirrors)
            .zip(stats)
            .zip(tables)
            .map(|((((spec, index), mirror), stats), table)| {
                let table = match (mirror, table) {
                    (Some((from, mirror)), _) => ClassTable::Mirrored { from, mirror },
                    (None, Some(table)) => ClassTable::Own(table),
                    (None, None) => unreachable!("every class searched or mirrored"),
                };
                ClassSolution {
                    class: spec.class,
                    dense: spec.index,
                    index,
                    table,
                    stats,
                }
            })
            .collect();
        Solution { classes, elapsed }
    }
}

#[cfg(test)]
mod tests {
    use crate::solver::{Method, Plan};
    use crate::variant::Variant;

    #[test]
    fn whether_a_plan_folds_is_known_without_building_the_orbit_indices() {
        // An odd number of columns gives a class a left-right mirror
        // besides the colour-exchanging flip: those do not fold.
        for (name, folds) in [
            ("5x4", true),
            ("9x8", true),
            ("5x4-full", true),
            ("7x5-a1", false),
            ("9x7-a1", false),
        ] {
            let variant = Variant::named(name).unwrap();
            let plan = Plan::<u64>::in_words(&variant, Method::TwoBit);
            assert_eq!(plan.can_fold(), folds, "{name}");
            assert_eq!(plan.orbit_indices().is_ok(), folds, "{name}");
        }
    }
}
