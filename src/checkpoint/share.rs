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
//! A worker of the two-bit search saves its share the same way, in a
//! two-bit checkpoint of its own positions: its codes and the summary of
//! its blocks, the lowest positions it wrote into the newest layer and the
//! remoteness of the watched positions it owns (the start's), and in the
//! share's header its own count of each layer. Read back, the codes must
//! hold the own counts residue by residue, the summary and the hardest
//! candidates must fit the newest layer as in one process's checkpoint,
//! and each watched position's remoteness its code
//! (`check_two_bit_share`).
//!
//! Worker 0 decides when every worker saves (the same interval and test
//! hook as one process). A job of another size cannot take these shares:
//! a solve by `N` workers refuses to start while the directory holds
//! shares saved by a job of another size, and says how to resume them or
//! discard them (`--restart`).

use std::ops::Range;
use std::path::{Path, PathBuf};

use super::rank_files::{ShareHeader, rank_files, rank_path};
use super::refusal::Refusal;
use super::{
    CheckpointOptions, Checkpointer, Header, TwoBitHeader, UNSEEN_CODE, check_codes, check_file, read_two_bit_payload,
    two_bit_header,
};
use crate::board::Class;
use crate::error::{Error, Result};
use crate::solver::mod3::code_words;
use crate::solver::{
    Resume, Save, ShareBoundary, ShareCheckpoints, TwoBitShareBoundary, TwoBitShareResume, layer_counts,
};
use crate::tight::TightIndex;
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
                crate::text::path(&file),
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
    pub(super) fn check_share(&self, header: &super::Header) -> std::result::Result<(), Refusal> {
        match (self.share, &header.share) {
            (None, None) => Ok(()),
            (None, Some(_)) => Err(Refusal::WorkerShare),
            (Some(_), None) => Err(Refusal::NotAShare),
            (Some(want), Some(share)) if (share.rank, share.ranks) != want => Err(Refusal::OtherRank {
                found: (share.rank, share.ranks),
                want,
            }),
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
                Err(Refusal::OtherRange {
                    found: first,
                    want: share.1,
                })
            }
        });
        self.resumed(&file, class, read)
    }

    fn due(&mut self, class: Class, found: &[u64], done: bool) -> Save {
        self.decide(class, found, done)
    }

    fn save_share(&mut self, boundary: ShareBoundary<'_>) -> Result<()> {
        // One process's search is the share of one worker, and saves the
        // whole class's checkpoint.
        let share = self.share.map(|(rank, ranks)| ShareHeader {
            rank,
            ranks,
            first: boundary.range.start,
            found: layer_counts(boundary.cells, boundary.found.len()),
        });
        self.write_cells(boundary.class, boundary.cells, boundary.found, boundary.done, share)?;
        Ok(())
    }

    fn stopped(&mut self, class: Class, found: &[u64]) -> Error {
        match self.share {
            // Every rank says so, and the job's errors name no variant.
            Some(_) => Error::Stopped(format!(
                "stopped after layer {} of class {}, as BISHOPS_STOP_AFTER_LAYER asks; every rank's checkpoint holds its share",
                found.len().saturating_sub(1),
                class.name()
            )),
            None => self.stop_error(
                class,
                found,
                &format!("the checkpoint {}", crate::text::path(&self.file(class))),
            ),
        }
    }

    fn note(&mut self, text: &str) {
        (self.note)(text);
    }

    fn resume_two_bit_share(
        &mut self,
        class: Class,
        index: &TightIndex,
        blocks: Range<u64>,
        range: Range<u64>,
        mirrored: bool,
        watch: &[u64],
    ) -> Option<TwoBitShareResume> {
        let file = self.existing(class)?;
        let of = TwoBitShareOf {
            index,
            blocks,
            range,
            mirrored,
            watch,
        };
        match self.read_two_bit_share(&file, class, &of) {
            Ok((header, resume)) => {
                self.note_resume(&file, class, &header);
                Some(resume)
            }
            Err(problem) => {
                self.note_ignored(&file, class, &problem);
                None
            }
        }
    }

    fn save_two_bit_share(&mut self, boundary: TwoBitShareBoundary<'_>) -> Result<()> {
        self.write_two_bit_share(&boundary)?;
        Ok(())
    }
}

/// The share of a two-bit search that a worker can resume.
struct TwoBitShareOf<'a> {
    /// The class's tight index.
    index: &'a TightIndex,
    /// The worker's blocks (white-set ranks).
    blocks: Range<u64>,
    /// Their positions' tight indices.
    range: Range<u64>,
    /// Whether a class mirrors the searched one, so that the share keeps
    /// the hardest candidates of that class too.
    mirrored: bool,
    /// The tight indices of the positions whose remoteness the worker
    /// knows where it owns them.
    watch: &'a [u64],
}

impl Checkpointer<'_> {
    /// Reads and checks this worker's two-bit share `file` of `class`:
    /// what a resume takes from it, or what is wrong with it.
    fn read_two_bit_share(
        &self,
        file: &Path,
        class: Class,
        of: &TwoBitShareOf<'_>,
    ) -> std::result::Result<(Header, TwoBitShareResume), Refusal> {
        let len = of.range.end - of.range.start;
        let (header, head, size, mut reader) = self.open(file, class, len, "two-bit")?;
        // A whole class's checkpoint (which `open` gives only a whole
        // class's search) is the share of the one worker.
        let share = header.share.clone().unwrap_or_else(|| ShareHeader {
            rank: 0,
            ranks: 1,
            first: 0,
            found: header.found.clone(),
        });
        if share.first != of.range.start {
            return Err(Refusal::OtherRange {
                found: share.first,
                want: of.range.start,
            });
        }
        let (codes, blocks) = (code_words(len), of.blocks.end - of.blocks.start);
        let (hardest, watched) = two_bit_header(&header, size.saturating_sub(head), codes, blocks, of.mirrored)?;
        let (codes, summary) = read_two_bit_payload(&mut reader, codes, blocks, &hardest, &header.checksum)?;
        let state = TwoBitShareResume {
            found: header.found.clone(),
            own: share.found,
            done: header.done,
            codes,
            summary,
            hardest,
            watched,
        };
        check_two_bit_share(&state, of)?;
        Ok((header, state))
    }

    /// Writes this worker's two-bit share at `boundary` atomically: a whole
    /// class's checkpoint when this is not a worker's checkpointer.
    fn write_two_bit_share(&mut self, boundary: &TwoBitShareBoundary<'_>) -> Result<PathBuf> {
        let range = &boundary.range;
        let mut header = self.header(
            boundary.class,
            "two-bit",
            range.end - range.start,
            boundary.found,
            boundary.done,
            0,
        );
        header.two_bit = Some(TwoBitHeader::of(boundary.hardest, boundary.watched));
        header.share = self.share.map(|(rank, ranks)| ShareHeader {
            rank,
            ranks,
            first: range.start,
            found: boundary.own.to_vec(),
        });
        self.write_two_bit_words(
            boundary.class,
            header,
            boundary.codes,
            boundary.summary,
            boundary.hardest,
        )
    }
}

/// Checks that a worker's share of a two-bit search, `state`, is
/// consistent on its own as the share `of` asks: the words of its
/// positions and the bytes of its blocks; a count of its own for each of
/// the class's layers, none above the class's; the padding codes unseen;
/// per residue mod 3, as many positions as its own layers of that residue
/// count; its summary as [`check_two_bit`](super::check_two_bit) checks a
/// whole one, against its own count of the newest layer; as many hardest
/// candidates as that count allows, in order, its own ones of the newest
/// residue in [`CURRENT`] blocks; and for each watched position it owns,
/// a remoteness of its code's residue within the layers, none when unseen
/// (and none for another's). That the shares' counts add up to the
/// class's is for the workers to check together.
///
/// # Errors
///
/// What is wrong, to follow the name of the file.
fn check_two_bit_share(state: &TwoBitShareResume, of: &TwoBitShareOf<'_>) -> std::result::Result<(), Refusal> {
    let TwoBitShareResume {
        found,
        own,
        codes,
        summary,
        hardest,
        watched,
        ..
    } = state;
    let (index, range) = (of.index, &of.range);
    let len = range.end - range.start;
    let blocks = of.blocks.end - of.blocks.start;
    if codes.len() as u64 != code_words(len) || summary.len() as u64 != blocks {
        return Err(Refusal::Inconsistent(format!(
            "has {} code words and {} summary bytes, not {} and {blocks}",
            codes.len(),
            summary.len(),
            code_words(len),
        )));
    }
    if found.first() != Some(&1) || found.contains(&0) {
        return Err(Refusal::inconsistent("counts an empty layer or more than one goal"));
    }
    if own.len() != found.len() || own.iter().zip(found).any(|(o, f)| o > f) {
        return Err(Refusal::inconsistent("counts other layers of its own than the class's"));
    }
    check_codes(index, of.blocks.clone(), range.clone(), codes, summary, own, hardest)?;
    let code = |i: u64| (codes[((i - range.start) / 32) as usize] >> (2 * ((i - range.start) % 32))) as u8 & 3;
    if watched.len() != of.watch.len() {
        return Err(Refusal::Inconsistent(format!(
            "knows {} watched positions, not {}",
            watched.len(),
            of.watch.len()
        )));
    }
    for (w, &i) in watched.iter().zip(of.watch) {
        let fits = match (range.contains(&i), w) {
            (true, Some(d)) => *d < found.len() as u64 && code(i) == (d % 3) as u8,
            (true, None) => code(i) == UNSEEN_CODE,
            (false, w) => w.is_none(),
        };
        if !fits {
            return Err(Refusal::Inconsistent(format!(
                "says watched position {i} is at remoteness {w:?}, not what its codes say"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::path::PathBuf;

    use super::*;
    use crate::checkpoint::{MAGIC, path};

    const MAGIC_LEN: usize = MAGIC.len();

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
        assert!(notes[1].contains("starts at position 10, not 11"), "{notes:?}");

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
        assert!(c.resume_share(class(), 0..6).is_none());
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

    /// A worker's checkpoints that read every two-bit share back as soon
    /// as they save it: it must pass every check and be what was saved.
    struct ReadBack<'a, 'b> {
        inner: Checkpointer<'a>,
        index: &'b TightIndex,
        blocks: Range<u64>,
        range: Range<u64>,
        mirrored: bool,
        watch: &'b [u64],
        read: usize,
    }

    impl ShareCheckpoints for ReadBack<'_, '_> {
        fn resume_share(&mut self, class: Class, range: Range<u64>) -> Option<Resume> {
            self.inner.resume_share(class, range)
        }

        fn due(&mut self, class: Class, found: &[u64], done: bool) -> Save {
            self.inner.due(class, found, done)
        }

        fn save_share(&mut self, boundary: ShareBoundary<'_>) -> Result<()> {
            self.inner.save_share(boundary)
        }

        fn note(&mut self, text: &str) {
            self.inner.note(text);
        }

        fn resume_two_bit_share(
            &mut self,
            class: Class,
            index: &TightIndex,
            blocks: Range<u64>,
            range: Range<u64>,
            mirrored: bool,
            watch: &[u64],
        ) -> Option<TwoBitShareResume> {
            self.inner
                .resume_two_bit_share(class, index, blocks, range, mirrored, watch)
        }

        fn save_two_bit_share(&mut self, b: TwoBitShareBoundary<'_>) -> Result<()> {
            let saved = b.to_resume();
            let class = b.class;
            self.inner.save_two_bit_share(b)?;
            let of = TwoBitShareOf {
                index: self.index,
                blocks: self.blocks.clone(),
                range: self.range.clone(),
                mirrored: self.mirrored,
                watch: self.watch,
            };
            let file = self.inner.file(class);
            let (_, read) = self
                .inner
                .read_two_bit_share(&file, class, &of)
                .unwrap_or_else(|e| panic!("{} {e}", file.display()));
            assert!(read == saved, "{}: not what was saved", file.display());
            self.read += 1;
            Ok(())
        }
    }

    /// Class 0 of `name` searched by two bits with `workers` threads, each
    /// saving its share into `dir` as `options` asks (reading each back at
    /// once) and resuming from there: each worker's result, notes and the
    /// shares it read back.
    fn two_bit_workers(
        dir: &Path,
        name: &str,
        workers: usize,
        options: CheckpointOptions,
    ) -> Vec<(Result<()>, Vec<String>, usize)> {
        use crate::solver::search::{Asked, ChannelTransport, Partition, Transport, search_two_bit};
        use crate::symmetry::Mirror;
        let variant = Variant::named(name).unwrap();
        let specs = variant.classes();
        let spec = &specs[0];
        let index = spec.tight_index();
        let back = specs
            .get(1)
            .and_then(|other| Mirror::left_right(&spec.geometry, &other.geometry));
        let start = index.rank(spec.index.unrank(variant.class_hashes(variant.start())[0]));
        let watch: Vec<u64> = start.into_iter().chain([0, index.len() - 1]).collect();
        let asked = Asked {
            mirrored: back.as_ref().map(|m| (m, &specs[1].index)),
            watch: &watch,
        };
        let partition = Partition::by_work(spec, &index, workers).unwrap();
        std::thread::scope(|scope| {
            let handles: Vec<_> = ChannelTransport::connected(workers)
                .into_iter()
                .map(|mut transport| {
                    let (variant, index, partition, watch) = (&variant, &index, &partition, &watch);
                    scope.spawn(move || {
                        let me = transport.worker();
                        let mut notes = Vec::new();
                        let mut note = |n: &str| notes.push(n.to_owned());
                        let inner = Checkpointer::for_rank(dir, variant, options, &mut note, me, workers).unwrap();
                        let mut checkpoints = ReadBack {
                            inner,
                            index,
                            blocks: partition.blocks(me),
                            range: partition.cells(me),
                            mirrored: asked.mirrored.is_some(),
                            watch,
                            read: 0,
                        };
                        let mut run = || -> Result<()> {
                            search_two_bit(name, spec, index, partition, &mut transport, asked, &mut checkpoints)?;
                            Ok(())
                        };
                        let result = run();
                        let read = checkpoints.read;
                        drop(checkpoints);
                        (result, notes, read)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        })
    }

    fn every_layer() -> CheckpointOptions {
        CheckpointOptions {
            interval: std::time::Duration::ZERO,
            ..CheckpointOptions::default()
        }
    }

    /// Every two-bit share saved at every boundary, with a mirrored class
    /// (9x6) or not (7x6), reads back as it was saved and passes its checks.
    #[test]
    fn every_two_bit_share_reads_back_as_saved() {
        for name in ["7x6", "9x6"] {
            let dir = fresh(&format!("two-bit-every-{name}"));
            for (result, notes, read) in two_bit_workers(&dir, name, 3, every_layer()) {
                result.unwrap();
                assert!(notes.is_empty(), "{notes:?}");
                assert!(read > 10, "{name}: {read} shares read back");
            }
            fs::remove_dir_all(&dir).unwrap();
        }
    }

    /// Shares of a stopped two-bit search resume together; one that fails
    /// its checks, or is another worker's, is ignored with the reason, and
    /// then every worker starts over.
    #[test]
    fn a_two_bit_share_that_fails_its_checks_is_ignored() {
        let dir = fresh("two-bit-spoiled");
        let stop = CheckpointOptions {
            stop_after: Some((None, 6)),
            ..every_layer()
        };
        let file = rank_path(&dir, "7x6", class(), 1, 2);
        let resumed = |notes: &[String]| notes.iter().filter(|n| n.starts_with("resuming 7x6 class a1")).count();
        for result in two_bit_workers(&dir, "7x6", 2, stop) {
            assert!(matches!(result.0, Err(Error::Stopped(_))), "{:?}", result.0);
        }
        let saved = fs::read(&file).unwrap();
        let header_end = saved.iter().skip(MAGIC_LEN).position(|&b| b == b'\n').unwrap() + MAGIC_LEN;
        let header = String::from_utf8(saved[MAGIC_LEN..header_end].to_vec()).unwrap();
        let (whole, share) = header.split_once("\"share\":").unwrap();
        let own = share.split_once("\"found\":[").unwrap().1.split_once(']').unwrap().0;
        let newest: u64 = own.rsplit(',').next().unwrap().parse().unwrap();
        // The share's part, or the whole header when `from` is there.
        let edit = |from: &str, to: &str| {
            let edited = if share.contains(from) {
                format!("{whole}\"share\":{}", share.replacen(from, to, 1))
            } else {
                header.replacen(from, to, 1)
            };
            assert_ne!(edited, header, "{from}");
            let mut bytes = edited.into_bytes();
            bytes.splice(0..0, saved[..MAGIC_LEN].iter().copied());
            bytes.extend_from_slice(&saved[header_end..]);
            // Sealed again: these spoils are for the checks past the seal.
            crate::checkpoint::reseal(&mut bytes);
            bytes
        };
        let last_code = saved.len() - 9;
        let mut flipped = saved.clone();
        flipped[last_code] ^= 0x01;
        let spoils: Vec<(Vec<u8>, &str)> = vec![
            (flipped, "fails its checksum"),
            (saved[..saved.len() - 8].to_vec(), "bytes long"),
            // One more position of its own at remoteness 6 than it holds.
            (
                edit(&format!(",{newest}]"), &format!(",{}]", newest + 1)),
                "holds other layers than its header counts",
            ),
            (
                edit("\"watched\":[", "\"watched\":[5,"),
                "knows 4 watched positions, not 3",
            ),
            (
                edit("\"rank\":1", "\"rank\":0"),
                "is the share of rank 0 of 2, not of rank 1 of 2",
            ),
            (
                edit("\"method\":\"two-bit\"", "\"method\":\"tight\""),
                "is for method tight, not two-bit",
            ),
        ];
        for (bytes, said) in spoils {
            fs::write(&file, &bytes).unwrap();
            let results = two_bit_workers(&dir, "7x6", 2, every_layer());
            for (result, _, _) in &results {
                assert!(result.is_ok(), "{said}: {result:?}");
            }
            let (rank0, rank1) = (&results[0].1, &results[1].1);
            assert!(
                rank1.iter().any(|n| n.contains(said) && n.contains("ignoring it")),
                "{said}: {rank1:?}"
            );
            assert!(
                rank0
                    .iter()
                    .any(|n| n.contains("not resuming class a1: rank 1 has no share")),
                "{said}: {rank0:?}"
            );
            // The search went on to the end, and saved its shares again:
            // put back the stopped ones for the next spoil.
            assert!(rank_path(&dir, "7x6", class(), 0, 2).exists());
            two_bit_workers(&dir, "7x6", 2, CheckpointOptions { restart: true, ..stop });
        }
        // Unspoiled, both resume.
        fs::write(&file, &saved).unwrap();
        let results = two_bit_workers(&dir, "7x6", 2, every_layer());
        for (result, notes, _) in &results {
            assert!(result.is_ok(), "{result:?}");
            assert_eq!(resumed(notes), 1, "{notes:?}");
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
