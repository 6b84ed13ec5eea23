//! Checkpoints of the workers of a partitioned search (the ranks of an MPI
//! job), each of which holds only its share of a class.
//!
//! Each worker saves its own share into its own database directory (a
//! shared one on a cluster) as `.VARIANT.CLASS.rank-R-of-N.checkpoint`:
//! the file of a tight checkpoint whose table is the share's cells and
//! whose header also names the share ([`ShareHeader`]): the worker, how
//! many there are, its first cell, and its own count of each layer, which
//! its cells must hold exactly. The header's `found` counts the whole
//! class: whether the shares add up to it is for the workers to check
//! together before they resume
//! ([`partition`](crate::solver::partition)).
//!
//! Worker 0 decides when every worker saves (the same interval and test
//! hook as one process). A job of another size cannot take these shares:
//! a solve by `N` workers refuses to start while the directory holds
//! shares saved by a job of another size, and says how to resume them or
//! discard them (`--restart`).

use std::ops::Range;
use std::path::Path;

use super::rank_files::{ShareHeader, rank_files, rank_path};
use super::{CheckpointOptions, Checkpointer, check_file};
use crate::board::Class;
use crate::error::{Error, Result};
use crate::solver::{Resume, Save, ShareBoundary, ShareCheckpoints, layer_counts};
use crate::variant::Variant;

impl<'a> Checkpointer<'a> {
    /// Checkpoints for worker `rank` of `ranks` solving `variant` into
    /// `dir`: as [`new`](Self::new), each worker saving and reading only its
    /// own share.
    ///
    /// # Errors
    ///
    /// [`Error::Usage`] when `dir` holds shares of `variant` saved by a job
    /// of another size (without `options.restart`, which removes them);
    /// [`Error::DbPath`] when this worker's checkpoint path holds anything
    /// but a regular file.
    pub fn for_rank(
        dir: &Path,
        variant: &'a Variant,
        options: CheckpointOptions,
        note: &'a mut dyn FnMut(&str),
        rank: usize,
        ranks: usize,
    ) -> Result<Checkpointer<'a>> {
        if let Some((file, other)) = rank_files(dir, variant).into_iter().find(|&(_, n)| n != ranks)
            && !options.restart
        {
            return Err(Error::Usage(format!(
                "{} holds the checkpoint of a search of {} by {other} MPI ranks, and this job has {ranks}: \
                 run it with `mpirun -np {other}` to resume that search, or add --restart to discard it",
                file.display(),
                variant.name()
            )));
        }
        for spec in variant.classes() {
            check_file(&rank_path(dir, variant.name(), spec.class, rank, ranks))?;
        }
        let mut checkpointer = Checkpointer::new(dir, variant, options, note);
        checkpointer.share = Some((rank, ranks));
        Ok(checkpointer)
    }

    /// Checks that `header` is of this checkpointer's kind: a share of this
    /// worker's search, or no share at all.
    pub(super) fn check_share(&self, header: &super::Header) -> std::result::Result<(), String> {
        match (self.share, &header.share) {
            (None, None) => Ok(()),
            (None, Some(_)) => Err("is one worker's share of a partitioned search".into()),
            (Some(_), None) => Err("is not a worker's share".into()),
            (Some((rank, ranks)), Some(share)) if (share.rank, share.ranks) != (rank, ranks) => Err(format!(
                "is the share of rank {} of {}, not of rank {rank} of {ranks}",
                share.rank, share.ranks
            )),
            (Some(_), Some(_)) => Ok(()),
        }
    }
}

impl ShareCheckpoints for Checkpointer<'_> {
    fn resume_share(&mut self, class: Class, range: Range<u64>) -> Option<Resume> {
        let file = self.existing(class)?;
        let share = (range.end - range.start, range.start);
        let read = self.read(&file, class, share.0).and_then(|(header, cells)| {
            let first = header.share.as_ref().map_or(share.1, |s| s.first);
            if first == share.1 {
                Ok((header, cells))
            } else {
                Err(format!("starts at cell {first}, not {}", share.1))
            }
        });
        self.resumed(&file, class, read)
    }

    fn due(&mut self, class: Class, found: &[u64], done: bool) -> Save {
        self.decide(class, found, done)
    }

    fn save_share(&mut self, boundary: ShareBoundary<'_>) -> Result<()> {
        let (rank, ranks) = self.share.expect("a worker's checkpointer");
        let share = ShareHeader {
            rank,
            ranks,
            first: boundary.range.start,
            found: layer_counts(boundary.cells, boundary.found.len()),
        };
        self.write_cells(
            boundary.class,
            boundary.cells,
            boundary.found,
            boundary.done,
            Some(share),
        )?;
        Ok(())
    }

    fn note(&mut self, text: &str) {
        (self.note)(text);
    }
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::path::PathBuf;

    use super::*;
    use crate::checkpoint::path;

    /// An empty directory of its own for test `name`.
    fn fresh(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("bishops-share-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn class() -> Class {
        Class::from_index(0).unwrap()
    }

    /// Worker 1 of 3's share of class a1: 6 cells from cell 10 (two unreached), layers
    /// 0 to 2 of which the class has 1, 4 and 9.
    fn save(dir: &Path, variant: &Variant) {
        let mut quiet = |_: &str| {};
        let mut c = Checkpointer::for_rank(dir, variant, CheckpointOptions::default(), &mut quiet, 1, 3).unwrap();
        let cells = [1, 2, 2, 254, 254, 2];
        c.save_share(ShareBoundary {
            class: class(),
            range: 10..16,
            found: &[1, 4, 9],
            done: false,
            cells: &cells,
        })
        .unwrap();
    }

    #[test]
    fn a_share_comes_back_to_its_own_rank_only() {
        let dir = fresh("round-trip");
        let variant = Variant::named("5x4").unwrap();
        save(&dir, &variant);
        let file = rank_path(&dir, "5x4", class(), 1, 3);
        assert!(file.exists());
        let mut notes = Vec::new();
        let mut note = |n: &str| notes.push(n.to_owned());
        let mut c = Checkpointer::for_rank(&dir, &variant, CheckpointOptions::default(), &mut note, 1, 3).unwrap();
        let resumed = c.resume_share(class(), 10..16);
        let resumed = resumed.unwrap_or_else(|| panic!("not resumed"));
        assert_eq!(resumed.found, [1, 4, 9]);
        assert_eq!(resumed.cells, [1, 2, 2, 254, 254, 2]);
        // Another range is another share.
        assert!(c.resume_share(class(), 11..17).is_none());
        drop(c);
        assert!(notes[0].starts_with("resuming 5x4 class a1"), "{notes:?}");
        assert!(notes[1].contains("starts at cell 10, not 11"), "{notes:?}");

        // Rank 0 of the same job has no share saved.
        let mut quiet = |_: &str| {};
        let mut c = Checkpointer::for_rank(&dir, &variant, CheckpointOptions::default(), &mut quiet, 0, 3).unwrap();
        assert!(c.resume_share(class(), 0..10).is_none());
        drop(c);

        // A one-process solve does not take a share, nor a worker a whole table.
        fs::rename(&file, path(&dir, "5x4", class())).unwrap();
        let mut notes = Vec::new();
        let mut note = |n: &str| notes.push(n.to_owned());
        let mut c = Checkpointer::new(&dir, &variant, CheckpointOptions::default(), &mut note);
        assert!(crate::solver::Checkpoints::resume(&mut c, class(), 6).is_none());
        drop(c);
        assert!(notes[0].contains("is one worker's share"), "{notes:?}");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_share_that_fails_its_checks_is_ignored() {
        let dir = fresh("spoiled");
        let variant = Variant::named("5x4").unwrap();
        let file = rank_path(&dir, "5x4", class(), 1, 3);
        for (spoil, problem) in [
            (
                Box::new(|b: &mut Vec<u8>| *b.last_mut().unwrap() = 1) as Box<dyn Fn(&mut Vec<u8>)>,
                "checksum",
            ),
            (Box::new(|b: &mut Vec<u8>| b.truncate(b.len() - 1)), "bytes long"),
        ] {
            save(&dir, &variant);
            let mut bytes = fs::read(&file).unwrap();
            spoil(&mut bytes);
            fs::write(&file, bytes).unwrap();
            let mut notes = Vec::new();
            let mut note = |n: &str| notes.push(n.to_owned());
            let mut c = Checkpointer::for_rank(&dir, &variant, CheckpointOptions::default(), &mut note, 1, 3).unwrap();
            assert!(c.resume_share(class(), 10..16).is_none());
            drop(c);
            assert!(notes[0].contains(problem), "{notes:?}");
        }
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_job_of_another_size_is_refused_until_restart() {
        let dir = fresh("other-size");
        let variant = Variant::named("5x4").unwrap();
        save(&dir, &variant);
        let mut quiet = |_: &str| {};
        let e = Checkpointer::for_rank(&dir, &variant, CheckpointOptions::default(), &mut quiet, 0, 2)
            .err()
            .unwrap();
        assert!(matches!(e, Error::Usage(_)), "{e}");
        assert!(
            e.to_string().contains("mpirun -np 3") && e.to_string().contains("--restart"),
            "{e}"
        );
        let restart = CheckpointOptions {
            restart: true,
            ..CheckpointOptions::default()
        };
        let mut notes = Vec::new();
        let mut note = |n: &str| notes.push(n.to_owned());
        Checkpointer::for_rank(&dir, &variant, restart, &mut note, 0, 2).unwrap();
        assert!(notes[0].starts_with("--restart: removed"), "{notes:?}");
        assert!(rank_files(&dir, &variant).is_empty());

        // A finished solve removes every share, of any job.
        save(&dir, &variant);
        assert_eq!(rank_files(&dir, &variant).len(), 1);
        assert_eq!(crate::checkpoint::remove(&dir, &variant).len(), 1);
        assert!(rank_files(&dir, &variant).is_empty());
        fs::remove_dir_all(&dir).unwrap();
    }
}
